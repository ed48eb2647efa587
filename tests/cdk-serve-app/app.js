// The CDK app test_cdk.py drives with the real `cdk` CLI against `cumulo serve`: bootstrap,
// deploy, redeploy with one changed property, destroy. It covers S3, SQS, SNS (subscribed to
// the queue), SSM, IAM (function roles and a grant), Lambda with inline and with asset code, a
// custom resource through the CDK's Provider framework, an AwsCustomResource, and a nested stack.
//
// The one changeable property is the inline function's GREETING variable: `-c greeting=...`.
const cdk = require('aws-cdk-lib');
const s3 = require('aws-cdk-lib/aws-s3');
const sqs = require('aws-cdk-lib/aws-sqs');
const sns = require('aws-cdk-lib/aws-sns');
const subs = require('aws-cdk-lib/aws-sns-subscriptions');
const ssm = require('aws-cdk-lib/aws-ssm');
const lambda = require('aws-cdk-lib/aws-lambda');
const cr = require('aws-cdk-lib/custom-resources');
const path = require('path');

class Inner extends cdk.NestedStack {
  constructor(scope, id, props) {
    super(scope, id, props);
    const param = new ssm.StringParameter(this, 'InnerParam', {
      parameterName: '/cdkserve/inner',
      stringValue: 'from the nested stack',
    });
    this.paramName = param.parameterName;
  }
}

// The Provider framework's onEvent handler: writes an SSM parameter with the SDK v3 client
// (which a local runtime must supply as AWS's does), removes it on Delete, and returns Data.
const ON_EVENT = `
const { SSMClient, PutParameterCommand, DeleteParameterCommand } = require('@aws-sdk/client-ssm');
exports.handler = async (event) => {
  const ssm = new SSMClient({});
  const name = event.ResourceProperties.ParameterName;
  if (event.RequestType === 'Delete') {
    await ssm.send(new DeleteParameterCommand({ Name: name })).catch((e) => {
      if (e.name !== 'ParameterNotFound') throw e;
    });
    return { PhysicalResourceId: event.PhysicalResourceId };
  }
  await ssm.send(new PutParameterCommand({
    Name: name, Value: event.ResourceProperties.Value, Type: 'String', Overwrite: true,
  }));
  return { PhysicalResourceId: 'writer-' + name, Data: { Written: name + '=' + event.ResourceProperties.Value } };
};
`;

class ServeStack extends cdk.Stack {
  constructor(scope, id, props) {
    super(scope, id, props);
    const greeting = this.node.tryGetContext('greeting') ?? 'hello';

    const bucket = new s3.Bucket(this, 'Data', { versioned: true, removalPolicy: cdk.RemovalPolicy.DESTROY });
    const queue = new sqs.Queue(this, 'Jobs', { visibilityTimeout: cdk.Duration.seconds(60) });
    const topic = new sns.Topic(this, 'Events');
    topic.addSubscription(new subs.SqsSubscription(queue, { rawMessageDelivery: true }));
    const param = new ssm.StringParameter(this, 'Setting', {
      parameterName: '/cdkserve/setting',
      stringValue: 'configured',
    });

    const inline = new lambda.Function(this, 'Inline', {
      runtime: lambda.Runtime.NODEJS_20_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline(
        'exports.handler = async (event) => ({ from: "inline", greeting: process.env.GREETING, bucket: process.env.BUCKET });'
      ),
      environment: { GREETING: greeting, BUCKET: bucket.bucketName },
    });
    bucket.grantRead(inline);
    queue.grantSendMessages(inline);

    const fromAsset = new lambda.Function(this, 'FromAsset', {
      runtime: lambda.Runtime.NODEJS_20_X,
      handler: 'index.handler',
      code: lambda.Code.fromAsset(path.join(__dirname, 'handler')),
    });

    const onEvent = new lambda.Function(this, 'WriterOnEvent', {
      runtime: lambda.Runtime.NODEJS_20_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline(ON_EVENT),
      timeout: cdk.Duration.seconds(60),
    });
    onEvent.addToRolePolicy(new cdk.aws_iam.PolicyStatement({
      actions: ['ssm:PutParameter', 'ssm:DeleteParameter'],
      resources: ['*'],
    }));
    const provider = new cr.Provider(this, 'WriterProvider', { onEventHandler: onEvent });
    const writer = new cdk.CustomResource(this, 'Writer', {
      serviceToken: provider.serviceToken,
      properties: { ParameterName: '/cdkserve/written', Value: 'by the custom resource' },
    });

    // The CDK's AwsCustomResource: an SDK call from the CDK's own function (S3, addressed
    // virtual-hosted when the endpoint is `localhost`), undone on delete. Its own bucket is
    // unversioned, so the delete leaves it empty and the bucket can go too.
    const markers = new s3.Bucket(this, 'Markers', { removalPolicy: cdk.RemovalPolicy.DESTROY });
    new cr.AwsCustomResource(this, 'Marker', {
      onCreate: {
        service: 'S3',
        action: 'putObject',
        parameters: { Bucket: markers.bucketName, Key: 'marker.txt', Body: 'written by AwsCustomResource' },
        physicalResourceId: cr.PhysicalResourceId.of('marker'),
      },
      onDelete: {
        service: 'S3',
        action: 'deleteObject',
        parameters: { Bucket: markers.bucketName, Key: 'marker.txt' },
      },
      policy: cr.AwsCustomResourcePolicy.fromSdkCalls({ resources: cr.AwsCustomResourcePolicy.ANY_RESOURCE }),
      installLatestAwsSdk: false,
    });

    const inner = new Inner(this, 'Inner');

    new cdk.CfnOutput(this, 'BucketName', { value: bucket.bucketName });
    new cdk.CfnOutput(this, 'MarkerBucket', { value: markers.bucketName });
    new cdk.CfnOutput(this, 'QueueUrl', { value: queue.queueUrl });
    new cdk.CfnOutput(this, 'TopicArn', { value: topic.topicArn });
    new cdk.CfnOutput(this, 'ParamName', { value: param.parameterName });
    new cdk.CfnOutput(this, 'InlineName', { value: inline.functionName });
    new cdk.CfnOutput(this, 'InlineRoleArn', { value: inline.role.roleArn });
    new cdk.CfnOutput(this, 'AssetName', { value: fromAsset.functionName });
    new cdk.CfnOutput(this, 'Written', { value: writer.getAttString('Written') });
    new cdk.CfnOutput(this, 'InnerParamName', { value: inner.paramName });
  }
}

const app = new cdk.App();
new ServeStack(app, 'CdkServe', { env: { account: '000000000000', region: 'us-east-1' } });
app.synth();
