console.log("asset")
