"""cumulo's `cfnresponse`: the module AWS makes available to inline (ZipFile) Python code of
custom resources. Same interface: send(event, context, responseStatus, responseData,
physicalResourceId=None, noEcho=False, reason=None), SUCCESS / FAILED; it PUTs the response to
event["ResponseURL"]."""

import json
import urllib.request

SUCCESS = "SUCCESS"
FAILED = "FAILED"


def send(event, context, responseStatus, responseData, physicalResourceId=None, noEcho=False, reason=None):
    body = json.dumps(
        {
            "Status": responseStatus,
            "Reason": reason or "See the details in CloudWatch Log Stream: " + context.log_stream_name,
            "PhysicalResourceId": physicalResourceId or context.log_stream_name,
            "StackId": event["StackId"],
            "RequestId": event["RequestId"],
            "LogicalResourceId": event["LogicalResourceId"],
            "NoEcho": noEcho,
            "Data": responseData,
        }
    ).encode()
    print("Response body:")
    print(body.decode())
    req = urllib.request.Request(
        event["ResponseURL"],
        data=body,
        method="PUT",
        headers={"content-type": "", "content-length": str(len(body))},
    )
    try:
        with urllib.request.urlopen(req) as resp:
            print("Status code:", resp.reason)
    except Exception as e:  # noqa: BLE001 - as AWS's module: logged, not raised
        print("send(..) failed executing http.request(..):", e)
