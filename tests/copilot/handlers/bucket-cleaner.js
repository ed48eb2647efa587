// bucket-cleaner.js (Custom::BucketCleanerFunction): on Delete, removes every object version and
// delete marker of BucketName so CloudFormation can delete the bucket. Create/Update: no-op.
const s3 = require("@aws-sdk/client-s3");

exports.handler = (event, context) =>
  run(event, context, async () => {
    const physicalId = `bucket-cleaner-${event.LogicalResourceId}`;
    if (event.RequestType !== "Delete") return { physicalId };
    const bucket = event.ResourceProperties.BucketName;
    const client = new s3.S3Client({ forcePathStyle: true });
    try {
      await client.send(new s3.HeadBucketCommand({ Bucket: bucket }));
    } catch (e) {
      if (e.name === "ResourceNotFoundException") return { physicalId };
      throw e;
    }
    let keyMarker, versionMarker, truncated;
    do {
      const out = await client.send(
        new s3.ListObjectVersionsCommand({ Bucket: bucket, KeyMarker: keyMarker, VersionIdMarker: versionMarker })
      );
      const objects = [...(out.Versions || []), ...(out.DeleteMarkers || [])].map((v) => ({
        Key: v.Key,
        VersionId: v.VersionId,
      }));
      if (objects.length) {
        const del = await client.send(
          new s3.DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects, Quiet: true } })
        );
        if (del.Errors && del.Errors.length) throw new Error(`${del.Errors.length} objects were not deleted`);
      }
      truncated = out.IsTruncated;
      keyMarker = out.NextKeyMarker;
      versionMarker = out.NextVersionIdMarker;
    } while (truncated);
    return { physicalId };
  });
