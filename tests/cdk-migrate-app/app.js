// The CDK app test_migrate_generic.py hands to Terraform with `cumulo migrate` (run as
// `cdk --app "node <this file>"`; its node_modules is a symlink to tests/cdk-serve-app's).
// What matters is CDK's own destructive custom resource: `autoDeleteObjects` adds
// Custom::S3AutoDeleteObjects, whose handler (an asset in the bootstrap bucket) empties the
// bucket when the resource is deleted. `-c name=...` names the bucket and queue.
const cdk = require('aws-cdk-lib');
const s3 = require('aws-cdk-lib/aws-s3');
const sqs = require('aws-cdk-lib/aws-sqs');
const lambda = require('aws-cdk-lib/aws-lambda');

const app = new cdk.App();
const name = app.node.tryGetContext('name') || 'cdkmig';
const stack = new cdk.Stack(app, 'CdkMigrate', {
  env: { account: '000000000000', region: 'us-east-1' },
});
const bucket = new s3.Bucket(stack, 'Data', {
  bucketName: `${name}-data`,
  removalPolicy: cdk.RemovalPolicy.DESTROY,
  autoDeleteObjects: true,
});
const queue = new sqs.Queue(stack, 'Jobs', { queueName: `${name}-jobs` });
const fn = new lambda.Function(stack, 'Worker', {
  runtime: lambda.Runtime.NODEJS_20_X,
  handler: 'index.handler',
  code: lambda.Code.fromInline('exports.handler = async () => ({ ok: true });'),
  environment: { QUEUE_URL: queue.queueUrl, BUCKET: bucket.bucketName },
});
queue.grantSendMessages(fn);
bucket.grantRead(fn);
new cdk.CfnOutput(stack, 'BucketName', { value: bucket.bucketName });
new cdk.CfnOutput(stack, 'QueueUrl', { value: queue.queueUrl });
