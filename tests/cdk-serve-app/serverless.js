// The serverless CDK app test_cdk_serverless.py drives with the real `cdk` CLI against `cumulo
// serve` (`cdk --app "node serverless.js"`): a RestApi with a LambdaIntegration and a greedy
// `{proxy+}` resource, an HttpApi with a Lambda route (payload 2.0), and a StateMachine with
// LambdaInvoke, Choice, Map, a DynamoDB PutItem task and a Catch; and AWS (service) integrations:
// a StepFunctionsRestApi over an EXPRESS machine, and a REST resource sending to SQS.
//
// What changes between deploys: the functions' GREETING variable (`-c greeting=...`), and with
// `-c extra=true` a REST resource and an HTTP route more (a new REST deployment, which CDK names
// by a hash of the API) and the state machine's definition (the Small state's result).
const cdk = require('aws-cdk-lib');
const lambda = require('aws-cdk-lib/aws-lambda');
const apigw = require('aws-cdk-lib/aws-apigateway');
const apigwv2 = require('aws-cdk-lib/aws-apigatewayv2');
const { HttpLambdaIntegration } = require('aws-cdk-lib/aws-apigatewayv2-integrations');
const dynamodb = require('aws-cdk-lib/aws-dynamodb');
const sfn = require('aws-cdk-lib/aws-stepfunctions');
const tasks = require('aws-cdk-lib/aws-stepfunctions-tasks');
const sqs = require('aws-cdk-lib/aws-sqs');
const iam = require('aws-cdk-lib/aws-iam');

// Answers both APIs with what it was given: the proxy event's shape differs between a REST API
// (payload 1.0) and an HTTP API (2.0), so the handler reports the fields each carries.
const ECHO = `
exports.handler = async (event) => ({
  statusCode: 200,
  headers: { 'content-type': 'application/json', 'x-greeting': process.env.GREETING },
  body: JSON.stringify({
    greeting: process.env.GREETING,
    version: event.version || '1.0',
    method: event.httpMethod || (event.requestContext && event.requestContext.http && event.requestContext.http.method),
    resource: event.resource || event.routeKey,
    path: event.path || event.rawPath,
    pathParameters: event.pathParameters || null,
    query: event.queryStringParameters || null,
    multiQuery: event.multiValueQueryStringParameters,
    rawQuery: event.rawQueryString,
    body: event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString() : event.body,
    stage: event.requestContext && event.requestContext.stage,
  }),
});
`;

// The state machine's worker: doubles `n`, or fails with a named error the Catch handles.
const WORKER = `
exports.handler = async (event) => {
  if (event.fail === 'yes') {
    const e = new Error('asked to fail on ' + event.n);
    e.name = 'WorkerRefused';
    throw e;
  }
  return { doubled: event.n * 2, greeting: process.env.GREETING };
};
`;

class ServerlessStack extends cdk.Stack {
  constructor(scope, id, props) {
    super(scope, id, props);
    const greeting = this.node.tryGetContext('greeting') ?? 'hello';
    const extra = this.node.tryGetContext('extra') === 'true';

    const echo = new lambda.Function(this, 'Echo', {
      runtime: lambda.Runtime.NODEJS_20_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline(ECHO),
      environment: { GREETING: greeting },
    });

    // REST API: GET /items and ANY /items/{proxy+}, both through the Lambda proxy integration.
    const rest = new apigw.RestApi(this, 'Rest', { deployOptions: { stageName: 'prod' } });
    const items = rest.root.addResource('items');
    const integration = new apigw.LambdaIntegration(echo);
    items.addMethod('GET', integration);
    items.addProxy({ defaultIntegration: integration, anyMethod: true });
    if (extra) {
      rest.root.addResource('extra').addMethod('GET', integration);
    }

    // HTTP API: GET and POST /hello/{name} on the same function, payload format 2.0.
    const http = new apigwv2.HttpApi(this, 'Http');
    http.addRoutes({
      path: '/hello/{name}',
      methods: [apigwv2.HttpMethod.GET, apigwv2.HttpMethod.POST],
      integration: new HttpLambdaIntegration('EchoIntegration', echo),
    });
    if (extra) {
      http.addRoutes({ path: '/extra', methods: [apigwv2.HttpMethod.GET], integration: new HttpLambdaIntegration('ExtraIntegration', echo) });
    }

    // State machine: Work (LambdaInvoke, Catch) -> Big? (Choice) -> Save (DynamoDB PutItem) or
    // Small (Pass) -> EachItem (Map over $.items, each one a LambdaInvoke) -> Done.
    const table = new dynamodb.Table(this, 'Results', {
      partitionKey: { name: 'id', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      removalPolicy: cdk.RemovalPolicy.DESTROY,
    });
    const worker = new lambda.Function(this, 'Worker', {
      runtime: lambda.Runtime.NODEJS_20_X,
      handler: 'index.handler',
      code: lambda.Code.fromInline(WORKER),
      environment: { GREETING: greeting },
    });

    const work = new tasks.LambdaInvoke(this, 'Work', {
      lambdaFunction: worker,
      payload: sfn.TaskInput.fromObject({ n: sfn.JsonPath.numberAt('$.n'), fail: sfn.JsonPath.stringAt('$.fail') }),
      resultSelector: { 'doubled.$': '$.Payload.doubled', 'greeting.$': '$.Payload.greeting' },
      resultPath: '$.work',
      retryOnServiceExceptions: false,
    });
    const caught = new sfn.Pass(this, 'Caught', {
      parameters: { 'recovered': true, 'error.$': '$.failure.Error', 'cause.$': 'States.StringToJson($.failure.Cause)' },
    });
    work.addCatch(caught, { errors: ['WorkerRefused'], resultPath: '$.failure' });

    const save = new tasks.DynamoPutItem(this, 'Save', {
      table,
      item: {
        id: tasks.DynamoAttributeValue.fromString(sfn.JsonPath.stringAt('$$.Execution.Name')),
        doubled: tasks.DynamoAttributeValue.numberFromString(sfn.JsonPath.format('{}', sfn.JsonPath.stringAt('$.work.doubled'))),
      },
      resultPath: sfn.JsonPath.DISCARD,
    });
    const small = new sfn.Pass(this, 'Small', { result: extra ? sfn.Result.fromString('small, changed') : sfn.Result.fromBoolean(true), resultPath: '$.small' });

    const each = new sfn.Map(this, 'EachItem', {
      itemsPath: '$.items',
      maxConcurrency: 2,
      itemSelector: { 'n.$': '$$.Map.Item.Value', 'fail': 'no' },
      resultPath: '$.mapped',
    });
    each.itemProcessor(new tasks.LambdaInvoke(this, 'WorkEach', {
      lambdaFunction: worker,
      payloadResponseOnly: true,
      retryOnServiceExceptions: false,
    }));
    const done = new sfn.Succeed(this, 'Done');

    const definition = work
      .next(new sfn.Choice(this, 'Big?')
        .when(sfn.Condition.numberGreaterThan('$.work.doubled', 10), save)
        .otherwise(small)
        .afterwards())
      .next(each)
      .next(done);
    const machine = new sfn.StateMachine(this, 'Flow', {
      definitionBody: sfn.DefinitionBody.fromChainable(definition),
    });

    // API Gateway AWS integrations to services: a StepFunctionsRestApi over an EXPRESS machine
    // (StartSyncExecution, with the CDK's own request and response templates; a Fail state
    // answers 500 through its `$context.responseOverride.status`) and POST /queue sending the
    // body to SQS through the `path/<account>/<queue>` form and a form template.
    const greet = new sfn.Choice(this, 'Refuse?')
      .when(sfn.Condition.stringEquals('$.body.name', 'nobody'), new sfn.Fail(this, 'Refused', { error: 'NoName', cause: 'nobody to greet' }))
      .otherwise(new sfn.Pass(this, 'Greet', { parameters: { 'greeting': greeting, 'name.$': '$.body.name', 'query.$': '$.querystring' } }));
    const express = new sfn.StateMachine(this, 'Express', {
      stateMachineType: sfn.StateMachineType.EXPRESS,
      definitionBody: sfn.DefinitionBody.fromChainable(greet),
    });
    const sfnApi = new apigw.StepFunctionsRestApi(this, 'SfnApi', {
      stateMachine: express, cloudWatchRole: false, deployOptions: { stageName: 'prod' },
    });
    const inbox = new sqs.Queue(this, 'Inbox');
    const toQueue = new iam.Role(this, 'ApiToQueue', { assumedBy: new iam.ServicePrincipal('apigateway.amazonaws.com') });
    inbox.grantSendMessages(toQueue);
    sfnApi.root.addResource('queue').addMethod('POST', new apigw.AwsIntegration({
      service: 'sqs',
      path: `${cdk.Aws.ACCOUNT_ID}/${inbox.queueName}`,
      integrationHttpMethod: 'POST',
      options: {
        credentialsRole: toQueue,
        passthroughBehavior: apigw.PassthroughBehavior.NEVER,
        requestParameters: { 'integration.request.header.Content-Type': "'application/x-www-form-urlencoded'" },
        requestTemplates: { 'application/json': 'Action=SendMessage&MessageBody=$util.urlEncode($input.body)' },
        integrationResponses: [{
          statusCode: '200',
          responseTemplates: { 'application/json': `{"queued": "$input.path('$.SendMessageResponse.SendMessageResult.MessageId')"}` },
        }],
      },
    }), { methodResponses: [{ statusCode: '200' }] });

    new cdk.CfnOutput(this, 'SfnApiId', { value: sfnApi.restApiId });
    new cdk.CfnOutput(this, 'InboxUrl', { value: inbox.queueUrl });
    new cdk.CfnOutput(this, 'RestApiId', { value: rest.restApiId });
    new cdk.CfnOutput(this, 'RestUrl', { value: rest.url });
    new cdk.CfnOutput(this, 'HttpApiId', { value: http.apiId });
    new cdk.CfnOutput(this, 'HttpUrl', { value: http.apiEndpoint });
    new cdk.CfnOutput(this, 'EchoName', { value: echo.functionName });
    new cdk.CfnOutput(this, 'EchoRoleArn', { value: echo.role.roleArn });
    new cdk.CfnOutput(this, 'WorkerName', { value: worker.functionName });
    new cdk.CfnOutput(this, 'TableName', { value: table.tableName });
    new cdk.CfnOutput(this, 'StateMachineArn', { value: machine.stateMachineArn });
    new cdk.CfnOutput(this, 'StateMachineRoleArn', { value: machine.role.roleArn });
  }
}

const app = new cdk.App();
new ServerlessStack(app, 'CdkServerless', { env: { account: '000000000000', region: 'us-east-1' } });
app.synth();
