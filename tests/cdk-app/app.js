// The CDK app the direct-deploy e2e test synthesizes (`npx cdk synth`) and deploys with
// `cumulo deploy cdk.out`: a queue, a topic subscribed to it, a parameter, a bucket, a file
// asset (zipped and uploaded by cumulo where the template expects it) and a nested stack.
const cdk = require('aws-cdk-lib');
const s3 = require('aws-cdk-lib/aws-s3');
const sqs = require('aws-cdk-lib/aws-sqs');
const sns = require('aws-cdk-lib/aws-sns');
const subs = require('aws-cdk-lib/aws-sns-subscriptions');
const ssm = require('aws-cdk-lib/aws-ssm');
const assets = require('aws-cdk-lib/aws-s3-assets');
const path = require('path');

class Inner extends cdk.NestedStack {
  constructor(scope, id, props) {
    super(scope, id, props);
    const q = new sqs.Queue(this, 'InnerQueue', { visibilityTimeout: cdk.Duration.seconds(45) });
    this.queueName = q.queueName;
  }
}

class AppStack extends cdk.Stack {
  constructor(scope, id, props) {
    super(scope, id, props);
    const queue = new sqs.Queue(this, 'Jobs', { visibilityTimeout: cdk.Duration.seconds(60) });
    const topic = new sns.Topic(this, 'Events');
    topic.addSubscription(new subs.SqsSubscription(queue, { rawMessageDelivery: true }));
    const bucket = new s3.Bucket(this, 'Data', { versioned: true });
    const asset = new assets.Asset(this, 'Site', { path: path.join(__dirname, 'site') });
    new ssm.StringParameter(this, 'AssetKeyParam', {
      parameterName: '/cdkapp/asset-key',
      stringValue: asset.s3ObjectKey,
    });
    const inner = new Inner(this, 'Inner');
    new cdk.CfnOutput(this, 'QueueUrl', { value: queue.queueUrl });
    new cdk.CfnOutput(this, 'BucketName', { value: bucket.bucketName });
    new cdk.CfnOutput(this, 'AssetBucket', { value: asset.s3BucketName });
    new cdk.CfnOutput(this, 'AssetKey', { value: asset.s3ObjectKey });
    new cdk.CfnOutput(this, 'InnerQueueName', { value: inner.queueName });
  }
}

const app = new cdk.App();
new AppStack(app, 'CdkApp', { env: { account: '000000000000', region: 'us-east-1' } });
app.synth();
