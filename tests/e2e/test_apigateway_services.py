"""REST API AWS integrations of services other than Lambda, held to what AWS answered
(../shared/aws-recordings/apigateway: test_apigateway_sqs, _ssm, _eventbridge, _stepfunctions):
SQS through `path/<account>/<queue>` with a form template (and its JSON protocol through a mapped
X-Amz-Target), SSM's GetParameter through `action/` with a mapped query string (its members
left out written as null, as recorded), query services' JSON form typed by their models, EventBridge's
PutEvents with `$context.requestOverride` headers, DynamoDB PutItem/Query and an error selected
by status, Step Functions StartExecution and StartSyncExecution, SNS Publish delivered to an SQS
subscription, S3 objects through `<bucket>.s3:path/{key}`, a service cumulo does not emulate, and
a stack deployed with `aws cloudformation deploy` whose API reaches SQS and Step Functions."""
import json
import re

import pytest

from test_apigateway import http, uid

ACCOUNT = "000000000000"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/apigw-integration"
JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def apigw(cumulo):
    return cumulo.client("apigateway")


def api_with(apigw, path_part, method, integration, responses=None, method_params=None):
    """A REST API with one method on `/<path_part>` whose integration is `integration`
    (put_integration's arguments) and whose integration responses are `responses` (status →
    extra arguments); deployed to stage `test`. Answers the API id."""
    api = apigw.create_rest_api(name=f"svc-{uid()}")
    res = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart=path_part)
    apigw.put_method(restApiId=api["id"], resourceId=res["id"], httpMethod=method, authorizationType="NONE",
                     requestParameters=method_params or {})
    apigw.put_integration(restApiId=api["id"], resourceId=res["id"], httpMethod=method, type="AWS",
                          credentials=ROLE, **integration)
    for status, extra in (responses or {"200": {}}).items():
        apigw.put_method_response(restApiId=api["id"], resourceId=res["id"], httpMethod=method, statusCode=status)
        apigw.put_integration_response(restApiId=api["id"], resourceId=res["id"], httpMethod=method,
                                       statusCode=status, **extra)
    apigw.create_deployment(restApiId=api["id"], stageName="test")
    return api["id"]


def call(cumulo, api_id, path, method="POST", body=None, headers=None, host_form=False):
    """One request to stage `test` (at the execute-api host form when `host_form`)."""
    if host_form:
        status, _, _, raw = http(cumulo, method, f"/test{path}", host=f"{api_id}.execute-api.localhost:{cumulo.port}",
                                 body=body, headers=headers)
    else:
        status, _, _, raw = http(cumulo, method, f"/_aws/execute-api/{api_id}/test{path}", body=body, headers=headers)
    return status, raw


def test_sqs_form_template_static_and_mapped_answers(cumulo, apigw):
    sqs = cumulo.client("sqs")
    name = f"q-{uid()}"
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    integration = dict(
        integrationHttpMethod="POST",
        uri=f"arn:aws:apigateway:us-east-1:sqs:path/{ACCOUNT}/{name}",
        requestParameters={"integration.request.header.Content-Type": "'application/x-www-form-urlencoded'"},
        requestTemplates={"application/json": "Action=SendMessage&MessageBody=$input.body"},
        passthroughBehavior="NEVER")
    # AWS's test_sqs_aws_integration: a static answer, and an empty body sent as `{}`.
    api = api_with(apigw, "sqs", "POST", integration,
                   {"200": {"responseTemplates": {"application/json": '{"message": "great success!"}'}}})
    assert call(cumulo, api, "/sqs", body=b'{"foo": "bar"}', headers=JSON) == (200, b'{"message": "great success!"}')
    assert call(cumulo, api, "/sqs", host_form=True)[0] == 200
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2)["Messages"]
    while len(got) < 2:
        got += sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2)["Messages"]
    bodies = sorted(m["Body"] for m in got)
    assert bodies == ['{"foo": "bar"}', "{}"]
    assert {m["MD5OfBody"] for m in got} == {"94232c5b8fc9272f6f73a1e36eb68fcf", "99914b932bd37a50b983c5e7c90ae93b"}

    # AWS's test_sqs_request_and_response_xml_templates_integration: the answer is the JSON form
    # of SQS's; with the Accept header mapped to XML it is SQS's XML.
    template = """#set($responseBody = $input.path('$.SendMessageResponse'))
#set($requestId = $input.path('$.SendMessageResponse.ResponseMetadata.RequestId'))
#set($messageId = $responseBody.SendMessageResult.MessageId)
{"requestId": "$requestId", "messageId": "$messageId"}"""
    api = api_with(apigw, "sqs", "POST", integration, {"200": {"responseTemplates": {"application/json": template}}})
    status, raw = call(cumulo, api, "/sqs", body=b"<xml>Hello World</xml>", headers=JSON)
    answer = json.loads(raw)
    assert status == 200 and set(answer) == {"requestId", "messageId"}
    assert re.fullmatch(r"[0-9a-f-]{36}", answer["messageId"]) and re.fullmatch(r"[0-9a-f-]{36}", answer["requestId"])
    integration["requestParameters"]["integration.request.header.Accept"] = "'application/xml'"
    api = api_with(apigw, "sqs", "POST", integration)
    status, raw = call(cumulo, api, "/sqs", body=b"<xml>Hello World</xml>", headers=JSON)
    assert status == 200 and re.search(rb"<MessageId>.+</MessageId>", raw) and re.search(rb"<RequestId>.+</RequestId>", raw)
    assert re.search(rb"<MD5OfMessageBody>.+</MD5OfMessageBody>", raw)

    # A message attribute from a method request header (AWS's ..._with_message_attribute).
    integration["requestTemplates"] = {"application/json": (
        "Action=SendMessage&MessageBody=$input.body&MessageAttribute.1.Name=user-agent&"
        "MessageAttribute.1.Value.DataType=String&MessageAttribute.1.Value.StringValue=$input.params('HeaderFoo')")}
    del integration["requestParameters"]["integration.request.header.Accept"]
    api = api_with(apigw, "sqs", "POST", integration)
    sqs.purge_queue(QueueUrl=url)
    assert call(cumulo, api, "/sqs", body=b'{"foo": "bar"}', headers={**JSON, "HeaderFoo": "BAR-Header"})[0] == 200
    [m] = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2,
                              MessageAttributeNames=["All"])["Messages"]
    assert json.loads(m["Body"]) == {"foo": "bar"}
    assert m["MessageAttributes"] == {"user-agent": {"DataType": "String", "StringValue": "BAR-Header"}}


def test_sqs_json_protocol_and_errors_selected_by_status(cumulo, apigw):
    sqs = cumulo.client("sqs")
    name = f"q-{uid()}"
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    # AWS's test_sqs_amz_json_protocol: X-Amz-Target mapped, a JSON body; 400 selected by pattern.
    api = api_with(apigw, "sqs", "POST", dict(
        integrationHttpMethod="POST",
        uri=f"arn:aws:apigateway:us-east-1:sqs:path/{ACCOUNT}/{name}",
        requestParameters={"integration.request.header.Content-Type": "'application/x-amz-json-1.0'",
                           "integration.request.header.X-Amz-Target": "'AmazonSQS.SendMessage'"},
        requestTemplates={"application/json": '{"QueueUrl": "$input.path(\'$.queue\')", "MessageBody": "$context.resourcePath"}'},
        passthroughBehavior="NEVER"),
        {"200": {"responseTemplates": {"application/json": '{"message": "great success!"}'}},
         "400": {"selectionPattern": "400", "responseTemplates": {"application/json": '{"message": "failure :(", "type": "$input.path(\'$.__type\')"}'}}})
    body = json.dumps({"queue": url}).encode()
    assert call(cumulo, api, "/sqs", body=body, headers=JSON) == (200, b'{"message": "great success!"}')
    [m] = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=2)["Messages"]
    assert m["Body"] == "/sqs"
    status, raw = call(cumulo, api, "/sqs", body=json.dumps({"queue": url + "-nope"}).encode(), headers=JSON)
    assert status == 400
    answer = json.loads(raw)
    assert answer["message"] == "failure :(" and answer["type"].endswith("QueueDoesNotExist")


def test_ssm_get_parameter_through_query_parameters(cumulo, apigw):
    cumulo.client("ssm").put_parameter(Name="param-test-123", Value="123", Type="String", Overwrite=True)
    api = api_with(apigw, "ssm", "GET", dict(
        integrationHttpMethod="POST", uri="arn:aws:apigateway:us-east-1:ssm:action/GetParameter",
        passthroughBehavior="WHEN_NO_TEMPLATES",
        requestParameters={"integration.request.querystring.Name": "'param-test-123'"}))
    status, raw = call(cumulo, api, "/ssm", method="GET")
    body = json.loads(raw)
    assert "GetParameterResponse" in body, body
    body = body["GetParameterResponse"]
    assert status == 200 and body["ResponseMetadata"]["RequestId"]
    p = body["GetParameterResult"]["Parameter"]
    assert (p["Name"], p["Value"], p["Type"], p["Version"], p["DataType"]) == ("param-test-123", "123", "String", 1, "text")
    assert p["ARN"] == f"arn:aws:ssm:us-east-1:{ACCOUNT}:parameter/param-test-123"
    # As recorded: the members SSM's answer leaves out are written as null.
    assert set(p) == {"ARN", "DataType", "LastModifiedDate", "Name", "Selector", "SourceResult", "Type", "Value", "Version"}
    assert p["Selector"] is None and p["SourceResult"] is None


def query_action(cumulo, apigw, service, action, params):
    """The JSON form of `service`'s answer to `action` with `params` (a mapped query string)."""
    api = api_with(apigw, "q", "GET", dict(
        integrationHttpMethod="POST", uri=f"arn:aws:apigateway:us-east-1:{service}:action/{action}",
        requestParameters={f"integration.request.querystring.{k}": f"'{v}'" for k, v in params.items()}))
    status, raw = call(cumulo, api, "/q", method="GET")
    assert status == 200, raw
    return json.loads(raw)[f"{action}Response"]


def test_query_answers_json_form_carries_types_and_nulls(cumulo, apigw):
    """A query service's JSON form is read by its model: numbers, booleans and epoch-second
    timestamps as JSON's, the members the answer leaves out as null, lists as arrays."""
    iam = cumulo.client("iam")
    role = f"r-{uid()}"
    trust = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {
        "Service": "apigateway.amazonaws.com"}, "Action": "sts:AssumeRole"}]})
    iam.create_role(RoleName=role, AssumeRolePolicyDocument=trust, MaxSessionDuration=7200)
    want = iam.get_role(RoleName=role)["Role"]
    body = query_action(cumulo, apigw, "iam", "GetRole", {"RoleName": role})
    assert body["ResponseMetadata"]["RequestId"]
    got = body["GetRoleResult"]["Role"]
    assert got["MaxSessionDuration"] == 7200 and got["RoleName"] == role and got["Arn"] == want["Arn"]
    assert got["CreateDate"] == pytest.approx(want["CreateDate"].timestamp(), abs=0.001)
    assert got["Description"] is None and got["PermissionsBoundary"] is None

    limits = query_action(cumulo, apigw, "autoscaling", "DescribeAccountLimits", {})["DescribeAccountLimitsResult"]
    want = cumulo.client("autoscaling").describe_account_limits()
    assert limits == {k: want[k] for k in limits} and isinstance(limits["MaxNumberOfAutoScalingGroups"], int)

    sqs = cumulo.client("sqs")
    name = f"q-{uid()}"
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    sent = query_action(cumulo, apigw, "sqs", "SendMessage", {"QueueUrl": url, "MessageBody": "hi"})
    result = sent["SendMessageResult"]
    assert result["MD5OfMessageBody"] == "49f68a5c8493ec2c0bf489821c21fc3b"
    assert result["MD5OfMessageAttributes"] is None and result["SequenceNumber"] is None
    received = query_action(cumulo, apigw, "sqs", "ReceiveMessage",
                            {"QueueUrl": url, "AttributeName.1": "SentTimestamp", "WaitTimeSeconds": 2})
    [m] = received["ReceiveMessageResult"]["Messages"]
    assert m["Body"] == "hi" and m["MessageAttributes"] is None
    assert list(m["Attributes"]) == ["SentTimestamp"]

    vpcs = query_action(cumulo, apigw, "ec2", "DescribeVpcs", {"Filter.1.Name": "is-default", "Filter.1.Value.1": "true"})
    assert [v["IsDefault"] for v in vpcs["Vpcs"]] == [True]
    assert vpcs["NextToken"] is None


def test_eventbridge_put_events_with_request_overrides(cumulo, apigw):
    template = """#set($context.requestOverride.header.X-Amz-Target = "AWSEvents.PutEvents")
#set($context.requestOverride.header.Content-Type = "application/x-amz-json-1.1")
#set($inputRoot = $input.path('$'))
{"Entries": [#foreach($elem in $inputRoot.items){"Detail": "$util.escapeJavaScript($elem.Detail).replaceAll("\\\\'","'")", "DetailType": "$elem.DetailType", "Source": "$elem.Source"}#if($foreach.hasNext),#end#end]}"""
    api = api_with(apigw, "event", "POST", dict(
        integrationHttpMethod="POST", uri="arn:aws:apigateway:us-east-1:events:action/PutEvents",
        passthroughBehavior="WHEN_NO_TEMPLATES", requestTemplates={"application/json": template}),
        {"200": {"responseTemplates": {"application/json": "#set($inputRoot = $input.json('$'))\n$inputRoot"}}})
    body = json.dumps({"items": [{"Detail": '{"data":"Order is created"}', "DetailType": "Test", "Source": "order"}]})
    status, raw = call(cumulo, api, "/event", body=body.encode(), headers={**JSON, "Accept": "application/json"})
    answer = json.loads(raw)
    assert status == 200 and answer["FailedEntryCount"] == 0
    assert len(answer["Entries"]) == 1 and re.fullmatch(r"[0-9a-f-]{36}", answer["Entries"][0]["EventId"])


def test_dynamodb_put_query_and_a_missing_table(cumulo, apigw):
    ddb = cumulo.client("dynamodb")
    table = f"t-{uid()}"
    ddb.create_table(TableName=table, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], BillingMode="PAY_PER_REQUEST")
    put = api_with(apigw, "items", "POST", dict(
        integrationHttpMethod="POST", uri="arn:aws:apigateway:us-east-1:dynamodb:action/PutItem",
        requestTemplates={"application/json": '{"TableName": "$input.path(\'$.table\')", "Item": {"pk": {"S": "$input.path(\'$.id\')"}, "note": {"S": "$input.path(\'$.note\')"}}}'}),
        {"200": {"responseTemplates": {"application/json": '{"saved": true}'}},
         "400": {"selectionPattern": "4\\d{2}", "responseTemplates": {"application/json": '{"error": "$input.path(\'$.message\')"}'}}})
    status, raw = call(cumulo, put, "/items", body=json.dumps({"table": table, "id": "a1", "note": "hi"}).encode(), headers=JSON)
    assert (status, json.loads(raw)) == (200, {"saved": True})
    assert ddb.get_item(TableName=table, Key={"pk": {"S": "a1"}})["Item"]["note"] == {"S": "hi"}
    status, raw = call(cumulo, put, "/items", body=json.dumps({"table": "nope", "id": "a1", "note": "x"}).encode(), headers=JSON)
    assert (status, json.loads(raw)) == (400, {"error": "Requested resource not found"})

    query = api_with(apigw, "items", "GET", dict(
        integrationHttpMethod="POST", uri="arn:aws:apigateway:us-east-1:dynamodb:action/Query",
        requestTemplates={"application/json": '{"TableName": "' + table + '", "KeyConditionExpression": "pk = :v", "ExpressionAttributeValues": {":v": {"S": "$input.params(\'id\')"}}}'}),
        {"200": {"responseTemplates": {"application/json": '#set($r = $input.path(\'$\')){"count": $r.Count, "notes": [#foreach($i in $r.Items)"$i.note.S"#if($foreach.hasNext),#end#end]}'}}})
    status, raw = call(cumulo, query, "/items?id=a1", method="GET")
    assert (status, json.loads(raw)) == (200, {"count": 1, "notes": ["hi"]})


def test_step_functions_start_and_sync_executions(cumulo, apigw):
    sfn = cumulo.client("stepfunctions")
    definition = json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "Parameters": {"got.$": "$.x"}, "End": True}}})
    standard = sfn.create_state_machine(name=f"std-{uid()}", definition=definition, roleArn=ROLE)["stateMachineArn"]
    express = sfn.create_state_machine(name=f"exp-{uid()}", definition=definition, roleArn=ROLE,
                                       type="EXPRESS")["stateMachineArn"]
    start = api_with(apigw, "run", "POST", dict(
        integrationHttpMethod="POST", uri="arn:aws:apigateway:us-east-1:states:action/StartExecution",
        requestTemplates={"application/json": '{"stateMachineArn": "' + standard + '", "input": "$util.escapeJavaScript($input.body)"}'}))
    status, raw = call(cumulo, start, "/run", body=b'{"x": 5}', headers=JSON)
    answer = json.loads(raw)
    assert status == 200 and set(answer) == {"executionArn", "startDate"}
    assert answer["executionArn"].startswith(standard.replace(":stateMachine:", ":execution:"))
    execution = sfn.describe_execution(executionArn=answer["executionArn"])
    assert json.loads(execution["input"]) == {"x": 5}

    sync = api_with(apigw, "sync", "POST", dict(
        integrationHttpMethod="POST", uri="arn:aws:apigateway:us-east-1:states:action/StartSyncExecution",
        requestTemplates={"application/json": '{"stateMachineArn": "' + express + '", "input": "$util.escapeJavaScript($input.body)"}'}),
        {"200": {"responseTemplates": {"application/json": "$input.path('$.output')"}}})
    assert call(cumulo, sync, "/sync", body=b'{"x": [1, 2]}', headers=JSON) == (200, b'{"got":[1,2]}')


def test_sns_publish_reaches_a_subscribed_queue(cumulo, apigw):
    sns, sqs = cumulo.client("sns"), cumulo.client("sqs")
    topic = sns.create_topic(Name=f"t-{uid()}")["TopicArn"]
    url = sqs.create_queue(QueueName=f"q-{uid()}")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn, Attributes={"RawMessageDelivery": "true"})
    api = api_with(apigw, "publish", "POST", dict(
        integrationHttpMethod="POST", uri="arn:aws:apigateway:us-east-1:sns:action/Publish",
        requestParameters={"integration.request.querystring.TopicArn": f"'{topic}'",
                           "integration.request.querystring.Message": "method.request.body"}),
        {"200": {"responseTemplates": {"application/json": '{"id": "$input.path(\'$.PublishResponse.PublishResult.MessageId\')"}'}}})
    status, raw = call(cumulo, api, "/publish", body=b"hello & welcome", headers={"Content-Type": "text/plain"})
    assert status == 200 and re.fullmatch(r"[0-9a-f-]{36}", json.loads(raw)["id"])
    [m] = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=5)["Messages"]
    assert m["Body"] == "hello & welcome"
    # SNS's own error, through the default (200) integration response as AWS passes it.
    api = api_with(apigw, "publish", "POST", dict(
        integrationHttpMethod="POST", uri="arn:aws:apigateway:us-east-1:sns:action/Publish",
        requestParameters={"integration.request.querystring.TopicArn": f"'{topic}-nope'",
                           "integration.request.querystring.Message": "'x'"}))
    status, raw = call(cumulo, api, "/publish")
    assert status == 200 and json.loads(raw)["Error"]["Code"] == "NotFound"


def test_s3_objects_through_a_bucket_path(cumulo, apigw):
    s3 = cumulo.client("s3")
    bucket = f"b-{uid()}"
    s3.create_bucket(Bucket=bucket)
    params = {"integration.request.path.key": "method.request.path.key"}
    api = apigw.create_rest_api(name=f"s3-{uid()}")
    res = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="{key}")
    for verb in ("PUT", "GET"):
        apigw.put_method(restApiId=api["id"], resourceId=res["id"], httpMethod=verb, authorizationType="NONE",
                         requestParameters={"method.request.path.key": True})
        apigw.put_integration(restApiId=api["id"], resourceId=res["id"], httpMethod=verb, type="AWS",
                              integrationHttpMethod=verb, credentials=ROLE, requestParameters=params,
                              uri=f"arn:aws:apigateway:us-east-1:{bucket}.s3:path/{{key}}")
        apigw.put_method_response(restApiId=api["id"], resourceId=res["id"], httpMethod=verb, statusCode="200")
        apigw.put_integration_response(restApiId=api["id"], resourceId=res["id"], httpMethod=verb, statusCode="200")
        apigw.put_method_response(restApiId=api["id"], resourceId=res["id"], httpMethod=verb, statusCode="404")
        apigw.put_integration_response(restApiId=api["id"], resourceId=res["id"], httpMethod=verb,
                                       statusCode="404", selectionPattern="404")
    apigw.create_deployment(restApiId=api["id"], stageName="test")
    assert call(cumulo, api["id"], "/note.txt", method="PUT", body=b"stored through the API",
                headers={"Content-Type": "text/plain"})[0] == 200
    assert s3.get_object(Bucket=bucket, Key="note.txt")["Body"].read() == b"stored through the API"
    assert call(cumulo, api["id"], "/note.txt", method="GET") == (200, b"stored through the API")
    status, raw = call(cumulo, api["id"], "/missing.txt", method="GET")
    assert status == 404 and b"<Code>NoSuchKey</Code>" in raw


def test_a_service_cumulo_does_not_emulate_is_named(cumulo, apigw):
    api = api_with(apigw, "k", "POST", dict(
        integrationHttpMethod="POST", uri="arn:aws:apigateway:us-east-1:kinesis:action/PutRecord"))
    status, raw = call(cumulo, api, "/k", body=b"{}", headers=JSON)
    assert status == 500
    assert json.loads(raw)["message"] == ("cumulo: AWS integrations reach the services cumulo emulates; kinesis is "
                                          "not one of them (arn:aws:apigateway:us-east-1:kinesis:action/PutRecord)")


STACK = """
AWSTemplateFormatVersion: '2010-09-09'
Resources:
  Inbox:
    Type: AWS::SQS::Queue
  Role:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Version: '2012-10-17'
        Statement:
          - Effect: Allow
            Principal: {Service: apigateway.amazonaws.com}
            Action: sts:AssumeRole
      Policies:
        - PolicyName: reach
          PolicyDocument:
            Version: '2012-10-17'
            Statement:
              - Effect: Allow
                Action: [sqs:SendMessage, states:StartSyncExecution]
                Resource: '*'
  Machine:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      StateMachineType: EXPRESS
      RoleArn: !GetAtt Role.Arn
      Definition:
        StartAt: Shout
        States:
          Shout:
            Type: Pass
            Parameters:
              said.$: States.Format('{}!', $.word)
            End: true
  Api:
    Type: AWS::ApiGateway::RestApi
    Properties:
      Name: !Sub '${AWS::StackName}-api'
  Queue:
    Type: AWS::ApiGateway::Resource
    Properties:
      RestApiId: !Ref Api
      ParentId: !GetAtt Api.RootResourceId
      PathPart: queue
  QueuePost:
    Type: AWS::ApiGateway::Method
    Properties:
      RestApiId: !Ref Api
      ResourceId: !Ref Queue
      HttpMethod: POST
      AuthorizationType: NONE
      MethodResponses: [{StatusCode: '200'}]
      Integration:
        Type: AWS
        IntegrationHttpMethod: POST
        Credentials: !GetAtt Role.Arn
        Uri: !Sub 'arn:aws:apigateway:${AWS::Region}:sqs:path/${AWS::AccountId}/${Inbox.QueueName}'
        PassthroughBehavior: NEVER
        RequestParameters:
          integration.request.header.Content-Type: "'application/x-www-form-urlencoded'"
        RequestTemplates:
          application/json: Action=SendMessage&MessageBody=$util.urlEncode($input.body)
        IntegrationResponses:
          - StatusCode: '200'
            ResponseTemplates:
              application/json: '{"queued": "$input.path(''$.SendMessageResponse.SendMessageResult.MessageId'')"}'
  Shout:
    Type: AWS::ApiGateway::Resource
    Properties:
      RestApiId: !Ref Api
      ParentId: !GetAtt Api.RootResourceId
      PathPart: shout
  ShoutPost:
    Type: AWS::ApiGateway::Method
    Properties:
      RestApiId: !Ref Api
      ResourceId: !Ref Shout
      HttpMethod: POST
      AuthorizationType: NONE
      MethodResponses: [{StatusCode: '200'}]
      Integration:
        Type: AWS
        IntegrationHttpMethod: POST
        Credentials: !GetAtt Role.Arn
        Uri: !Sub 'arn:aws:apigateway:${AWS::Region}:states:action/StartSyncExecution'
        RequestTemplates:
          application/json: !Sub '{"stateMachineArn": "${Machine}", "input": "$util.escapeJavaScript($input.body)"}'
        IntegrationResponses:
          - StatusCode: '200'
            ResponseTemplates:
              application/json: "$input.path('$.output')"
  Deployment:
    Type: AWS::ApiGateway::Deployment
    DependsOn: [QueuePost, ShoutPost]
    Properties:
      RestApiId: !Ref Api
      StageName: live
Outputs:
  ApiId:
    Value: !Ref Api
  QueueUrl:
    Value: !Ref Inbox
"""


def test_cloudformation_stack_reaches_sqs_and_step_functions(cumulo, tmp_path):
    stack = f"apisvc-{uid()}"
    template = tmp_path / "api.yaml"
    template.write_text(STACK)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--capabilities", "CAPABILITY_IAM")
    cfn = cumulo.client("cloudformation")
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    status, _, _, raw = http(cumulo, "POST", f"/_aws/execute-api/{out['ApiId']}/live/queue",
                             headers=JSON, body=b'{"order": 1}')
    queued = json.loads(raw)["queued"]
    assert status == 200
    [m] = cumulo.client("sqs").receive_message(QueueUrl=out["QueueUrl"], WaitTimeSeconds=2)["Messages"]
    assert (m["MessageId"], json.loads(m["Body"])) == (queued, {"order": 1})
    status, _, _, raw = http(cumulo, "POST", "/live/shout", host=f"{out['ApiId']}.execute-api.localhost:{cumulo.port}",
                             headers=JSON, body=b'{"word": "hey"}')
    assert (status, json.loads(raw)) == (200, {"said": "hey!"})
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
    assert http(cumulo, "POST", f"/_aws/execute-api/{out['ApiId']}/live/queue", body=b"{}")[0] == 403
