"""The SAM transform (`Transform: AWS::Serverless-2016-10-31`) end to end: a SAM template
deployed with `aws cloudformation deploy` (a change set, as the CLI makes it) whose function runs
(invoked through Lambda, and fed by its SQS event through the generated event source mapping),
whose SNS, Schedule and EventBridgeRule events are wired as a subscription and rules,
with Globals, a policy template, AutoPublishAlias and a SimpleTable; GetTemplate's Original and
Processed stages and GetTemplateSummary; updated (new code, a new version behind the alias) and
deleted leaving nothing; and a SAM feature cumulo does not implement failing the change set by
name, as a failing transform does."""
import json
import subprocess
import time
import uuid

import pytest

WAIT = {"Delay": 1, "MaxAttempts": 120}

CODE = """
import json, os, boto3
def handler(event, context):
    records = event.get("Records") or []
    if records and records[0].get("eventSource") == "aws:sqs":
        table = boto3.client("dynamodb", endpoint_url=os.environ.get("AWS_ENDPOINT_URL"))
        for r in records:
            table.put_item(TableName=os.environ["TABLE"], Item={"id": {"S": r["body"]}})
        return {}
    return {"greeting": os.environ["GREETING"], "version": "VERSION"}
"""


def template(greeting, version):
    code = CODE.replace("VERSION", version)
    return f"""
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    Handler: index.handler
    Timeout: 20
    Environment:
      Variables:
        GREETING: {greeting}
Resources:
  Queue:
    Type: AWS::SQS::Queue
  Topic:
    Type: AWS::SNS::Topic
  Items:
    Type: AWS::Serverless::SimpleTable
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: |
{chr(10).join('        ' + line for line in code.strip().splitlines())}
      AutoPublishAlias: live
      Environment:
        Variables:
          TABLE: !Ref Items
      Policies:
        - DynamoDBCrudPolicy: {{TableName: !Ref Items}}
      Events:
        Work:
          Type: SQS
          Properties: {{Queue: !GetAtt Queue.Arn, BatchSize: 1}}
        Notify:
          Type: SNS
          Properties: {{Topic: !Ref Topic}}
        Tick:
          Type: Schedule
          Properties: {{Schedule: rate(1 hour), Enabled: false}}
        Bridge:
          Type: EventBridgeRule
          Properties: {{Pattern: {{source: [my.app]}}}}
Outputs:
  Function:
    Value: !Ref Worker
  Alias:
    Value: !Ref Worker.Alias
"""


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


def deploy(cumulo, tmp_path, name, body, check=True):
    path = tmp_path / f"{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(body)
    return cumulo.aws(
        "cloudformation", "deploy", "--template-file", str(path), "--stack-name", name,
        "--capabilities", "CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND", check=check,
    )


def outputs(cfn, name):
    stack = cfn.describe_stacks(StackName=name)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def invoke(lam, name):
    answer = lam.invoke(FunctionName=name, Payload=b"{}")
    return json.loads(answer["Payload"].read())


def test_sam_app_deploys_runs_updates_and_deletes(cumulo, cfn, tmp_path):
    lam, sqs, sns = cumulo.client("lambda"), cumulo.client("sqs"), cumulo.client("sns")
    events, ddb, iam = cumulo.client("events"), cumulo.client("dynamodb"), cumulo.client("iam")
    name = f"sam-{uuid.uuid4().hex[:6]}"
    deploy(cumulo, tmp_path, name, template("hello", "1"))
    out = outputs(cfn, name)
    function = out["Function"]
    resources = {
        r["LogicalResourceId"]: r
        for r in cfn.describe_stack_resources(StackName=name)["StackResources"]
    }
    # The translator's logical ids: the role, the hash-suffixed version, the alias, one
    # resource per event.
    assert {"WorkerRole", "WorkerAliaslive", "WorkerWork", "WorkerNotify", "WorkerNotifyPermission",
            "WorkerTick", "WorkerTickPermission", "WorkerBridge", "WorkerBridgePermission", "Items"} <= set(resources)
    versions = [k for k in resources if k.startswith("WorkerVersion")]
    assert len(versions) == 1 and len(versions[0]) == len("WorkerVersion") + 10
    assert resources["Items"]["ResourceType"] == "AWS::DynamoDB::Table"

    # The function runs, with the Globals' environment, directly and through its alias.
    assert invoke(lam, function) == {"greeting": "hello", "version": "1"}
    assert invoke(lam, f"{function}:live")["greeting"] == "hello"
    alias = lam.get_alias(FunctionName=function, Name="live")
    assert alias["FunctionVersion"] == "1"
    role_name = resources["WorkerRole"]["PhysicalResourceId"]
    attached = [p["PolicyArn"] for p in iam.list_attached_role_policies(RoleName=role_name)["AttachedPolicies"]]
    assert "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole" in attached
    assert "arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole" in attached
    inline = iam.list_role_policies(RoleName=role_name)["PolicyNames"]
    assert inline == ["WorkerRolePolicy0"]

    # Events wired: SQS as a mapping on the alias, SNS as a subscription, the schedule as a
    # disabled rule and the EventBridge pattern as a rule, both targeting the alias.
    mappings = lam.list_event_source_mappings(FunctionName=alias["AliasArn"])["EventSourceMappings"]
    assert [m["EventSourceArn"].split(":")[2] for m in mappings] == ["sqs"]
    bridge = resources["WorkerBridge"]["PhysicalResourceId"]
    assert json.loads(events.describe_rule(Name=bridge)["EventPattern"]) == {"source": ["my.app"]}
    topic = [t["TopicArn"] for t in sns.list_topics()["Topics"] if name in t["TopicArn"]][0]
    subs = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    assert [(s["Protocol"], s["Endpoint"]) for s in subs] == [("lambda", alias["AliasArn"])]
    rule = resources["WorkerTick"]["PhysicalResourceId"]
    assert events.describe_rule(Name=rule)["State"] == "DISABLED"
    assert events.list_targets_by_rule(Rule=rule)["Targets"][0]["Arn"] == alias["AliasArn"]

    # The SQS event runs the function: a message ends up in the SimpleTable.
    queue_url = sqs.get_queue_url(QueueName=resources["Queue"]["PhysicalResourceId"].rsplit("/", 1)[-1])["QueueUrl"]
    sqs.send_message(QueueUrl=queue_url, MessageBody="from-sqs")
    table = resources["Items"]["PhysicalResourceId"]
    deadline = time.time() + 30
    while time.time() < deadline:
        if ddb.get_item(TableName=table, Key={"id": {"S": "from-sqs"}}).get("Item"):
            break
        time.sleep(0.5)
    else:
        pytest.fail("the SQS event did not run the function")

    # GetTemplate: the submitted SAM, and the processed CloudFormation without the transform.
    original = cfn.get_template(StackName=name, TemplateStage="Original")["TemplateBody"]
    assert "AWS::Serverless-2016-10-31" in str(original)
    processed = cfn.get_template(StackName=name, TemplateStage="Processed")["TemplateBody"]
    processed = processed if isinstance(processed, dict) else json.loads(processed)
    assert "Transform" not in processed and "Globals" not in processed
    assert processed["Resources"]["Worker"]["Type"] == "AWS::Lambda::Function"
    assert processed["Resources"]["WorkerRole"]["Type"] == "AWS::IAM::Role"
    summary = cfn.get_template_summary(StackName=name)
    assert summary["DeclaredTransforms"] == ["AWS::Serverless-2016-10-31"]
    assert "AWS::Lambda::Alias" in summary["ResourceTypes"]

    # An update: new code publishes a new version (a new hash-suffixed logical id), the alias
    # follows it.
    deploy(cumulo, tmp_path, name, template("howdy", "2"))
    assert invoke(lam, f"{function}:live") == {"greeting": "howdy", "version": "2"}
    assert lam.get_alias(FunctionName=function, Name="live")["FunctionVersion"] == "2"
    now = {r["LogicalResourceId"] for r in cfn.describe_stack_resources(StackName=name)["StackResources"]}
    assert not now & set(versions), "the old version's logical id is replaced"

    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig=WAIT)
    assert not [f for f in lam.list_functions()["Functions"] if f["FunctionName"] == function]
    assert not lam.list_event_source_mappings(FunctionName=function)["EventSourceMappings"]
    assert not [t for t in sns.list_topics()["Topics"] if name in t["TopicArn"]]


def test_unsupported_sam_feature_fails_the_change_set_by_name(cumulo, cfn):
    body = """
Transform: AWS::Serverless-2016-10-31
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: "def handler(e, c): return 1"
      Handler: index.handler
      Runtime: python3.12
      AutoPublishAlias: live
      DeploymentPreference: {Type: Linear10PercentEvery10Minutes}
"""
    name = f"sam-refused-{uuid.uuid4().hex[:6]}"
    cfn.create_change_set(
        StackName=name, ChangeSetName="cs", ChangeSetType="CREATE", TemplateBody=body,
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        cs = cfn.describe_change_set(StackName=name, ChangeSetName="cs")
        if cs["Status"] in ("FAILED", "CREATE_COMPLETE"):
            break
        time.sleep(0.3)
    assert cs["Status"] == "FAILED"
    assert cs["StatusReason"] == (
        "Transform AWS::Serverless-2016-10-31 failed with: Invalid Serverless Application "
        "Specification document. Number of errors found: 1. Resource with id [Fn] is invalid. "
        "'DeploymentPreference' is not supported by cumulo's SAM transform."
    )
    # The translator's own refusals read as AWS's do.
    bad = body.replace("InlineCode", "CodeUri").replace('"def handler(e, c): return 1"', "./src")
    bad = bad.replace("      AutoPublishAlias: live\n      DeploymentPreference: {Type: Linear10PercentEvery10Minutes}\n", "")
    cfn.create_change_set(
        StackName=name, ChangeSetName="cs2", ChangeSetType="CREATE", TemplateBody=bad,
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"],
    )
    deadline = time.time() + 30
    while time.time() < deadline:
        cs = cfn.describe_change_set(StackName=name, ChangeSetName="cs2")
        if cs["Status"] in ("FAILED", "CREATE_COMPLETE"):
            break
        time.sleep(0.3)
    assert cs["Status"] == "FAILED"
    assert cs["StatusReason"].endswith(
        "Resource with id [Fn] is invalid. 'CodeUri' is not a valid S3 Uri of the form "
        "'s3://bucket/key' with optional versionId query parameter."
    )


def test_render_runs_the_transform(tmp_path):
    """`cumulo render` translates SAM itself (the transform is pure); a refused feature fails it
    with the transform's message."""
    from conftest import BIN

    path = tmp_path / "sam.yaml"
    path.write_text(template("hi", "1"))
    out = subprocess.run([BIN, "render", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    resources = json.loads(out.stdout)["Resources"]
    assert resources["Worker"]["Type"] == "AWS::Lambda::Function"
    assert resources["WorkerAliaslive"]["Type"] == "AWS::Lambda::Alias"
    assert resources["Items"]["Type"] == "AWS::DynamoDB::Table"
    path.write_text(template("hi", "1").replace("AutoPublishAlias: live", "AutoPublishAlias: live\n      DeploymentPreference: {Type: AllAtOnce}"))
    out = subprocess.run([BIN, "render", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 1
    assert "Resource with id [Worker] is invalid. 'DeploymentPreference' is not supported by cumulo's SAM transform." in out.stderr


def test_create_stack_needs_auto_expand(cumulo, cfn):
    """CreateStack with SAM needs CAPABILITY_AUTO_EXPAND, as on AWS; nothing is made without it."""
    import botocore.exceptions

    body = template("hi", "1")
    name = f"sam-caps-{uuid.uuid4().hex[:6]}"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_stack(StackName=name, TemplateBody=body, Capabilities=["CAPABILITY_IAM"])
    assert e.value.response["Error"]["Code"] == "InsufficientCapabilitiesException"
    assert e.value.response["Error"]["Message"] == "Requires capabilities : [CAPABILITY_AUTO_EXPAND]"
    assert not [s for s in cfn.list_stacks()["StackSummaries"] if s["StackName"] == name]


def test_parameter_values_reach_the_transform(cumulo, cfn, tmp_path):
    """The operation's parameter values are the translator's: AutoPublishAlias from a parameter
    names the alias by the value given to `deploy --parameter-overrides`, not the default."""
    lam = cumulo.client("lambda")
    body = """
Transform: AWS::Serverless-2016-10-31
Parameters:
  AliasName: {Type: String, Default: live}
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: "def handler(e, c): return 'ok'"
      Handler: index.handler
      Runtime: python3.12
      AutoPublishAlias: !Ref AliasName
Outputs:
  Function: {Value: !Ref Fn}
"""
    path = tmp_path / "params.yaml"
    path.write_text(body)
    name = f"sam-params-{uuid.uuid4().hex[:6]}"
    cumulo.aws(
        "cloudformation", "deploy", "--template-file", str(path), "--stack-name", name,
        "--capabilities", "CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND",
        "--parameter-overrides", "AliasName=blue",
    )
    function = outputs(cfn, name)["Function"]
    assert [a["Name"] for a in lam.list_aliases(FunctionName=function)["Aliases"]] == ["blue"]
    ids = {r["LogicalResourceId"] for r in cfn.describe_stack_resources(StackName=name)["StackResources"]}
    assert "FnAliasblue" in ids
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig=WAIT)


HTTP_API = """\
Transform: AWS::Serverless-2016-10-31
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      InlineCode: |
        def handler(event, context):
            return {"statusCode": 200, "body": event["routeKey"] + " " + event["rawPath"]}
      Events:
        Get:
          Type: HttpApi
          Properties: {Path: "/hello/{name}", Method: GET}
Outputs:
  Id: {Value: !Ref ServerlessHttpApi}
"""


def test_http_api_event_serves_requests_through_api_gateway(cumulo, cfn, tmp_path):
    """The implicit ServerlessHttpApi SAM makes is a real HTTP API whose route invokes the
    function, at LocalStack's URL form."""
    import urllib.request
    name = f"samhttp-{uuid.uuid4().hex[:6]}"
    proc = deploy(cumulo, tmp_path, name, HTTP_API, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    api = outputs(cfn, name)["Id"]
    routes = cumulo.client("apigatewayv2").get_routes(ApiId=api)["Items"]
    assert [r["RouteKey"] for r in routes] == ["GET /hello/{name}"]
    with urllib.request.urlopen(f"{cumulo.endpoint}/_aws/execute-api/{api}/hello/sam") as r:
        assert r.read() == b"GET /hello/{name} /hello/sam"
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 1})
    assert api not in [a["ApiId"] for a in cumulo.client("apigatewayv2").get_apis()["Items"]]


HTTP_API_CONDITIONS = """\
Transform: AWS::Serverless-2016-10-31
Parameters:
  Env: {Type: String, Default: prod}
Conditions:
  IsProd: !Equals [!Ref Env, prod]
  IsDev: !Equals [!Ref Env, dev]
Globals:
  Function:
    Runtime: python3.12
    Handler: index.handler
Resources:
  Prod:
    Type: AWS::Serverless::Function
    Condition: IsProd
    Properties:
      Environment: {Variables: {WHO: prod}}
      InlineCode: "import os\\ndef handler(event, context):\\n    return {'statusCode': 200, 'body': os.environ['WHO'] + ' ' + event['routeKey']}"
      Events:
        Which: {Type: HttpApi, Properties: {Path: /which, Method: GET}}
  Dev:
    Type: AWS::Serverless::Function
    Condition: IsDev
    Properties:
      Environment: {Variables: {WHO: dev}}
      InlineCode: "import os\\ndef handler(event, context):\\n    return {'statusCode': 200, 'body': os.environ['WHO'] + ' ' + event['routeKey']}"
      Events:
        Which: {Type: HttpApi, Properties: {Path: /which, Method: POST}}
        Only: {Type: HttpApi, Properties: {Path: /dev, Method: GET}}
  Always:
    Type: AWS::Serverless::Function
    Properties:
      Environment: {Variables: {WHO: always}}
      InlineCode: "import os\\ndef handler(event, context):\\n    return {'statusCode': 200, 'body': os.environ['WHO'] + ' ' + event['routeKey']}"
      Events:
        Any: {Type: HttpApi, Properties: {Path: /always, Method: ANY}}
Outputs:
  Id: {Value: !Ref ServerlessHttpApi}
"""


def test_http_api_events_of_conditional_functions(cumulo, cfn, tmp_path):
    """A function's Condition holds over its HttpApi routes: with the condition false the
    function, its permission and its routes are absent, the path shared by two conditional
    functions carries only the live one's method, and an update flips them."""
    import urllib.error
    import urllib.request
    name = f"samhttpcond-{uuid.uuid4().hex[:6]}"
    gw = cumulo.client("apigatewayv2")

    def call(api, method, path):
        req = urllib.request.Request(f"{cumulo.endpoint}/_aws/execute-api/{api}{path}", method=method)
        try:
            with urllib.request.urlopen(req) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def resources():
        return {r["LogicalResourceId"] for r in cfn.describe_stack_resources(StackName=name)["StackResources"]}

    proc = deploy(cumulo, tmp_path, name, HTTP_API_CONDITIONS, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    api = outputs(cfn, name)["Id"]
    assert sorted(r["RouteKey"] for r in gw.get_routes(ApiId=api)["Items"]) == ["ANY /always", "GET /which"]
    assert {"Prod", "ProdWhichPermission"} <= resources() and not {"Dev", "DevOnlyPermission"} & resources()
    assert call(api, "GET", "/which") == (200, "prod GET /which")
    assert call(api, "GET", "/always") == (200, "always ANY /always")
    assert call(api, "GET", "/dev") == (404, '{"message":"Not Found"}')

    path = tmp_path / "dev.yaml"
    path.write_text(HTTP_API_CONDITIONS)
    proc = cumulo.aws("cloudformation", "deploy", "--template-file", str(path), "--stack-name", name,
                      "--capabilities", "CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND",
                      "--parameter-overrides", "Env=dev", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outputs(cfn, name)["Id"] == api
    assert sorted(r["RouteKey"] for r in gw.get_routes(ApiId=api)["Items"]) == ["ANY /always", "GET /dev", "POST /which"]
    assert {"Dev", "DevOnlyPermission", "DevWhichPermission"} <= resources() and "Prod" not in resources()
    assert call(api, "POST", "/which") == (200, "dev POST /which")
    assert call(api, "GET", "/which") == (404, '{"message":"Not Found"}')
    assert call(api, "GET", "/dev") == (200, "dev GET /dev")
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 1})
    assert api not in [a["ApiId"] for a in gw.get_apis()["Items"]]


S3_CONDITION = """\
Transform: AWS::Serverless-2016-10-31
Parameters:
  Enabled: {Type: String, Default: "yes"}
Conditions:
  Active: !Equals [!Ref Enabled, "yes"]
Resources:
  Bucket:
    Type: AWS::S3::Bucket
  Fn:
    Type: AWS::Serverless::Function
    Condition: Active
    Properties:
      Runtime: python3.12
      Handler: index.handler
      InlineCode: "def handler(e, c): return e"
      Events:
        Put:
          Type: S3
          Properties: {Bucket: !Ref Bucket, Events: "s3:ObjectCreated:*"}
Outputs:
  Bucket: {Value: !Ref Bucket}
"""


def test_s3_event_of_a_conditional_function(cumulo, cfn, tmp_path):
    """An S3 event of a conditional function: the bucket's notification and the tag that orders
    it after the permission hold only under the condition, as samtranslator writes them."""
    name = f"sams3cond-{uuid.uuid4().hex[:6]}"
    s3 = cumulo.client("s3")
    proc = deploy(cumulo, tmp_path, name, S3_CONDITION, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bucket = outputs(cfn, name)["Bucket"]
    fn = cfn.describe_stack_resource(StackName=name, LogicalResourceId="Fn")["StackResourceDetail"]["PhysicalResourceId"]
    perm = cfn.describe_stack_resource(StackName=name, LogicalResourceId="FnPutPermission")["StackResourceDetail"]["PhysicalResourceId"]
    [config] = s3.get_bucket_notification_configuration(Bucket=bucket)["LambdaFunctionConfigurations"]
    assert config["LambdaFunctionArn"].endswith(f":function:{fn}") and config["Events"] == ["s3:ObjectCreated:*"]
    tags = {t["Key"]: t["Value"] for t in s3.get_bucket_tagging(Bucket=bucket)["TagSet"]}
    assert tags["sam:ConditionalDependsOn:FnPutPermission"] == perm

    path = tmp_path / "off.yaml"
    path.write_text(S3_CONDITION)
    proc = cumulo.aws("cloudformation", "deploy", "--template-file", str(path), "--stack-name", name,
                      "--capabilities", "CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND",
                      "--parameter-overrides", "Enabled=no", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "LambdaFunctionConfigurations" not in s3.get_bucket_notification_configuration(Bucket=bucket)
    tags = {t["Key"]: t["Value"] for t in s3.get_bucket_tagging(Bucket=bucket)["TagSet"]}
    assert tags["sam:ConditionalDependsOn:FnPutPermission"] == "no dependency"
    ids = {r["LogicalResourceId"] for r in cfn.describe_stack_resources(StackName=name)["StackResources"]}
    assert "Fn" not in ids and "FnPutPermission" not in ids
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 1})


REST_API = """\
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    Handler: index.handler
    Timeout: 20
Resources:
  Queue:
    Type: AWS::SQS::Queue
  Seen:
    Type: AWS::Serverless::SimpleTable
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Environment:
        Variables:
          TABLE: !Ref Seen
      Policies:
        - DynamoDBCrudPolicy: {TableName: !Ref Seen}
      InlineCode: |
        import json, os, boto3
        def handler(event, context):
            records = event.get("Records") or []
            if records:
                db = boto3.client("dynamodb", endpoint_url=os.environ.get("AWS_ENDPOINT_URL"))
                for r in records:
                    db.put_item(TableName=os.environ["TABLE"], Item={"id": {"S": r["body"]}})
                return {}
            body = {"method": event["httpMethod"], "resource": event["resource"],
                    "path": event["path"], "stage": event["requestContext"]["stage"],
                    "params": event["pathParameters"]}
            return {"statusCode": 200, "headers": {"content-type": "application/json"},
                    "body": json.dumps(body)}
      Events:
        Hello:
          Type: Api
          Properties: {Path: "/hello/{name}", Method: GET}
        Work:
          Type: SQS
          Properties: {Queue: !GetAtt Queue.Arn, BatchSize: 1}
Outputs:
  Api: {Value: !Ref ServerlessRestApi}
  Stage: {Value: !Ref ServerlessRestApi.Stage}
  Queue: {Value: !Ref Queue}
  Table: {Value: !Ref Seen}
"""


def test_rest_api_event_serves_http_and_sqs_event_delivers(cumulo, cfn, tmp_path):
    """A SAM template with an Api event (the implicit ServerlessRestApi, its swagger imported
    into a REST API, deployed to the Prod stage by the hash-named Deployment) and an SQS event:
    the API answers HTTP at both URL forms with the function's answer, a sent message reaches
    the function, the processed template is samtranslator's, and delete leaves nothing."""
    import urllib.error
    import urllib.request
    apigw, sqs, ddb = cumulo.client("apigateway"), cumulo.client("sqs"), cumulo.client("dynamodb")
    name = f"samrest-{uuid.uuid4().hex[:6]}"
    proc = deploy(cumulo, tmp_path, name, REST_API, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = outputs(cfn, name)
    api = out["Api"]
    assert out["Stage"] == "Prod"
    resources = {r["LogicalResourceId"]: r for r in cfn.describe_stack_resources(StackName=name)["StackResources"]}
    deployments = [k for k in resources if k.startswith("ServerlessRestApiDeployment")]
    assert len(deployments) == 1 and len(deployments[0]) == len("ServerlessRestApiDeployment") + 10
    assert {"ServerlessRestApiProdStage", "FnHelloPermissionProd", "FnWork"} <= set(resources)
    paths = sorted(r["path"] for r in apigw.get_resources(restApiId=api)["items"])
    assert paths == ["/", "/hello", "/hello/{name}"]

    expected = {"method": "GET", "resource": "/hello/{name}", "path": "/hello/sam",
                "stage": "Prod", "params": {"name": "sam"}}
    for url, host in [
        (f"{cumulo.endpoint}/_aws/execute-api/{api}/Prod/hello/sam", None),
        (f"{cumulo.endpoint}/Prod/hello/sam", f"{api}.execute-api.localhost:{cumulo.port}"),
    ]:
        req = urllib.request.Request(url, headers={"Host": host} if host else {})
        with urllib.request.urlopen(req) as r:
            assert r.status == 200
            assert json.loads(r.read()) == expected
    # A route the swagger does not have: API Gateway's answer.
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"{cumulo.endpoint}/_aws/execute-api/{api}/Prod/nothing")
    assert e.value.code == 403
    assert json.loads(e.value.read()) == {"message": "Missing Authentication Token"}

    # The SQS event: a sent message reaches the function, which records it.
    sqs.send_message(QueueUrl=out["Queue"], MessageBody="from-sqs")
    deadline = time.time() + 30
    while time.time() < deadline:
        if ddb.get_item(TableName=out["Table"], Key={"id": {"S": "from-sqs"}}).get("Item"):
            break
        time.sleep(0.5)
    else:
        pytest.fail("the SQS event did not run the function")

    processed = cfn.get_template(StackName=name, TemplateStage="Processed")["TemplateBody"]
    processed = processed if isinstance(processed, dict) else json.loads(processed)
    assert processed["Resources"]["ServerlessRestApi"]["Type"] == "AWS::ApiGateway::RestApi"
    body = processed["Resources"]["ServerlessRestApi"]["Properties"]["Body"]
    assert body["paths"]["/hello/{name}"]["get"]["x-amazon-apigateway-integration"]["type"] == "aws_proxy"
    assert processed["Resources"][deployments[0]]["Type"] == "AWS::ApiGateway::Deployment"
    assert "Transform" not in processed

    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig=WAIT)
    assert api not in [a["id"] for a in apigw.get_rest_apis()["items"]]
    assert not [f for f in cumulo.client("lambda").list_functions()["Functions"]
                if f["FunctionName"].startswith(name)]
    assert out["Table"] not in ddb.list_tables()["TableNames"]


AUTH_API = """\
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    Handler: index.handler
Resources:
  Authorizer:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: |
        def handler(event, context):
            allow = event["authorizationToken"] == "Bearer good"
            return {"principalId": "me", "policyDocument": {"Version": "2012-10-17", "Statement": [
                {"Action": "execute-api:Invoke", "Effect": "Allow" if allow else "Deny",
                 "Resource": event["methodArn"]}]}}
  Api:
    Type: AWS::Serverless::Api
    Properties:
      StageName: live
      Auth:
        DefaultAuthorizer: Token
        ApiKeyRequired: true
        UsagePlan: {CreateUsagePlan: PER_API}
        Authorizers:
          Token:
            FunctionArn: !GetAtt Authorizer.Arn
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: |
        def handler(event, context):
            return {"statusCode": 200, "body": "secret " + event["requestContext"]["authorizer"]["principalId"]}
      Events:
        Get:
          Type: Api
          Properties: {Path: /secret, Method: GET, RestApiId: !Ref Api}
  FromS3:
    Type: AWS::Serverless::Api
    Properties:
      StageName: s3
      DefinitionUri: s3://BUCKET/swagger.json
Outputs:
  Api: {Value: !Ref Api}
  Key: {Value: !Ref Api.ApiKey}
  FromS3: {Value: !Ref FromS3}
"""

S3_SWAGGER = {
    "swagger": "2.0", "info": {"title": "from-s3", "version": "1"},
    "paths": {"/mock": {"get": {
        "responses": {"200": {"description": "ok"}},
        "x-amazon-apigateway-integration": {
            "type": "mock", "requestTemplates": {"application/json": '{"statusCode": 200}'},
            "responses": {"default": {"statusCode": "200",
                                      "responseTemplates": {"application/json": '{"from": "s3"}'}}}}}}},
}


def test_rest_api_auth_usage_plan_and_definition_uri(cumulo, cfn, tmp_path):
    """SAM's Auth on a REST API: a Lambda TOKEN authorizer as the default, a required API key
    from the PER_API usage plan SAM makes; and an Api whose DefinitionUri is in cumulo's S3."""
    import urllib.error
    import urllib.request
    s3, apigw = cumulo.client("s3"), cumulo.client("apigateway")
    bucket = f"samrest-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="swagger.json", Body=json.dumps(S3_SWAGGER).encode())
    name = f"samauth-{uuid.uuid4().hex[:6]}"
    proc = deploy(cumulo, tmp_path, name, AUTH_API.replace("BUCKET", bucket), check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = outputs(cfn, name)
    api = out["Api"]
    key = apigw.get_api_key(apiKey=out["Key"], includeValue=True)["value"]
    plans = apigw.get_usage_plans(keyId=out["Key"])["items"]
    assert [s["apiId"] for p in plans for s in p["apiStages"]] == [api]

    def call(headers):
        req = urllib.request.Request(f"{cumulo.endpoint}/_aws/execute-api/{api}/live/secret", headers=headers)
        try:
            with urllib.request.urlopen(req) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    assert call({"Authorization": "Bearer good"})[0] == 403  # no API key
    assert call({"x-api-key": key, "Authorization": "Bearer bad"})[0] == 403
    assert call({"x-api-key": key}) [0] == 401
    assert call({"x-api-key": key, "Authorization": "Bearer good"}) == (200, b"secret me")

    with urllib.request.urlopen(f"{cumulo.endpoint}/_aws/execute-api/{out['FromS3']}/s3/mock") as r:
        assert json.loads(r.read()) == {"from": "s3"}

    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig=WAIT)
    ids = [a["id"] for a in apigw.get_rest_apis()["items"]]
    assert api not in ids and out["FromS3"] not in ids
    assert out["Key"] not in [k["id"] for k in apigw.get_api_keys()["items"]]


STATE_MACHINE_API = """\
Transform: AWS::Serverless-2016-10-31
Resources:
  Machine:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition:
        StartAt: Echo
        States:
          Echo:
            Type: Pass
            Parameters:
              got.$: $.order
            End: true
      Events:
        Start:
          Type: Api
          Properties: {Path: /orders, Method: post}
Outputs:
  Api: {Value: !Ref ServerlessRestApi}
  Machine: {Value: !Ref Machine}
"""


def test_state_machine_api_event_starts_executions(cumulo, cfn, tmp_path):
    """SAM's Api event of a state machine: a REST API whose AWS integration calls Step Functions'
    StartExecution with SAM's own request template and role; the execution runs."""
    import time
    import urllib.request
    name = f"samsfn-{uuid.uuid4().hex[:6]}"
    proc = deploy(cumulo, tmp_path, name, STATE_MACHINE_API, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = outputs(cfn, name)
    req = urllib.request.Request(f"{cumulo.endpoint}/_aws/execute-api/{out['Api']}/Prod/orders", method="POST",
                                 data=b'{"order": {"id": 7}}', headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req) as r:
        started = json.loads(r.read())
    assert set(started) == {"executionArn", "startDate"}
    sfn = cumulo.client("stepfunctions")
    for _ in range(100):
        execution = sfn.describe_execution(executionArn=started["executionArn"])
        if execution["status"] != "RUNNING":
            break
        time.sleep(0.05)
    assert execution["stateMachineArn"] == out["Machine"] and execution["status"] == "SUCCEEDED"
    assert json.loads(execution["output"]) == {"got": {"id": 7}}
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 1})


HTTP_AUTH = """\
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    Handler: index.handler
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: |
        def handler(event, context):
            return {"statusCode": 200, "body": event.get("routeKey") or event["resource"]}
      Events:
        Jwt:
          Type: HttpApi
          Properties: {ApiId: !Ref Api, Path: /jwt, Method: GET}
        Lambda:
          Type: HttpApi
          Properties: {ApiId: !Ref Api, Path: /lambda, Method: GET, Auth: {Authorizer: Simple}}
        Open:
          Type: HttpApi
          Properties: {ApiId: !Ref Api, Path: /open, Method: GET, Auth: {Authorizer: NONE}}
        Rest:
          Type: Api
          Properties: {RestApiId: !Ref Rest, Path: /r, Method: GET}
  AuthFn:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: |
        def handler(event, context):
            return {"isAuthorized": event["headers"].get("x-token") == "let-me-in"}
  Api:
    Type: AWS::Serverless::HttpApi
    Properties:
      Auth:
        DefaultAuthorizer: OAuth
        Authorizers:
          OAuth:
            IdentitySource: $request.header.Authorization
            AuthorizationScopes: [read]
            JwtConfiguration: {issuer: "https://issuer.example.com", audience: [my-client]}
          Simple:
            FunctionArn: !GetAtt AuthFn.Arn
            AuthorizerPayloadFormatVersion: "2.0"
            EnableSimpleResponses: true
            EnableFunctionDefaultPermissions: true
            Identity: {Headers: [x-token]}
      Domain:
        DomainName: !Sub "${AWS::StackName}.example.com"
        CertificateArn: arn:aws:acm:us-east-1:123456789012:certificate/abcd
        BasePath: [v1]
        Route53: {HostedZoneId: !Ref Zone}
  Zone:
    Type: AWS::Route53::HostedZone
    Properties: {Name: example.com}
  Rest:
    Type: AWS::Serverless::Api
    Properties:
      StageName: prod
      Auth:
        ResourcePolicy:
          IpRangeWhitelist: [10.0.0.0/8]
Outputs:
  Id: {Value: !Ref Api}
  Domain: {Value: !Ref Api.DomainName}
  RestId: {Value: !Ref Rest}
  Zone: {Value: !Ref Zone}
"""


def unsigned_jwt(claims):
    import base64
    part = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    return f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.sig"


def test_http_api_auth_domain_and_rest_resource_policy(cumulo, cfn, tmp_path):
    """An HttpApi's Auth deploys as the authorizers SAM writes into its OpenAPI body: the JWT
    default authorizer answers 401 without a token and serves one with the configured issuer
    and audience (cumulo checks the claims, not the signature), the Lambda authorizer with
    simple responses answers 401 without its header, 403 when the function refuses and 200 when
    it allows, and NONE opens a route. The HttpApi Domain is a v2 domain name with its API
    mapping and its Route 53 alias record; a REST API's Auth.ResourcePolicy is the policy
    GetRestApi reports."""
    import urllib.error
    import urllib.request
    name = f"samauth-{uuid.uuid4().hex[:6]}"
    proc = deploy(cumulo, tmp_path, name, HTTP_AUTH, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = outputs(cfn, name)
    api = out["Id"]
    v2 = cumulo.client("apigatewayv2")
    routes = {r["RouteKey"]: r for r in v2.get_routes(ApiId=api)["Items"]}
    authorizers = {a["Name"]: a for a in v2.get_authorizers(ApiId=api)["Items"]}
    assert authorizers["OAuth"]["AuthorizerType"] == "JWT"
    assert authorizers["OAuth"]["JwtConfiguration"] == {
        "Issuer": "https://issuer.example.com", "Audience": ["my-client"]}
    assert authorizers["Simple"]["AuthorizerType"] == "REQUEST"
    assert authorizers["Simple"]["EnableSimpleResponses"] is True
    assert authorizers["Simple"]["IdentitySource"] == ["$request.header.x-token"]
    assert routes["GET /jwt"]["AuthorizationType"] == "JWT"
    assert routes["GET /jwt"]["AuthorizerId"] == authorizers["OAuth"]["AuthorizerId"]
    assert routes["GET /jwt"]["AuthorizationScopes"] == ["read"]
    assert routes["GET /lambda"]["AuthorizationType"] == "CUSTOM"
    assert routes["GET /open"]["AuthorizationType"] == "NONE"

    def get(path, headers=None):
        req = urllib.request.Request(f"{cumulo.endpoint}/_aws/execute-api/{api}{path}", headers=headers or {})
        try:
            with urllib.request.urlopen(req) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    assert get("/open") == (200, "GET /open")
    assert get("/jwt")[0] == 401
    token = unsigned_jwt({"iss": "https://issuer.example.com", "aud": "my-client",
                          "exp": int(time.time()) + 600, "scope": "read"})
    assert get("/jwt", {"Authorization": f"Bearer {token}"}) == (200, "GET /jwt")
    other = unsigned_jwt({"iss": "https://issuer.example.com", "aud": "someone-else",
                          "exp": int(time.time()) + 600, "scope": "read"})
    assert get("/jwt", {"Authorization": f"Bearer {other}"})[0] == 401
    unscoped = unsigned_jwt({"iss": "https://issuer.example.com", "aud": "my-client",
                             "exp": int(time.time()) + 600, "scope": "write"})
    assert get("/jwt", {"Authorization": f"Bearer {unscoped}"})[0] == 403
    assert get("/lambda")[0] == 401
    assert get("/lambda", {"x-token": "wrong"})[0] == 403
    assert get("/lambda", {"x-token": "let-me-in"}) == (200, "GET /lambda")

    domain = out["Domain"]
    assert domain == f"{name}.example.com"
    got = v2.get_domain_name(DomainName=domain)
    assert got["DomainNameConfigurations"][0]["CertificateArn"].endswith("certificate/abcd")
    assert got["DomainNameConfigurations"][0]["EndpointType"] == "REGIONAL"
    mappings = v2.get_api_mappings(DomainName=domain)["Items"]
    assert [(m["ApiId"], m["ApiMappingKey"], m["Stage"]) for m in mappings] == [(api, "v1", "$default")]
    records = cumulo.client("route53").list_resource_record_sets(HostedZoneId=out["Zone"])
    alias = [r for r in records["ResourceRecordSets"] if r["Type"] == "A"]
    assert [r["Name"] for r in alias] == [f"{domain}."]
    assert alias[0]["AliasTarget"]["DNSName"].rstrip(".") == got["DomainNameConfigurations"][0]["ApiGatewayDomainName"]

    rest = cumulo.client("apigateway").get_rest_api(restApiId=out["RestId"])
    policy = json.loads(rest["policy"].replace('\\"', '"'))
    assert policy["Version"] == "2012-10-17"
    allow, deny = policy["Statement"]
    assert allow["Effect"] == "Allow" and allow["Resource"] == ["execute-api:/prod/GET/r"]
    assert deny["Condition"] == {"NotIpAddress": {"aws:SourceIp": ["10.0.0.0/8"]}}

    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig=WAIT)
    assert api not in [a["ApiId"] for a in v2.get_apis()["Items"]]
    assert domain not in [d["DomainName"] for d in v2.get_domain_names()["Items"]]


ALWAYS_DEPLOY = """\
Transform: AWS::Serverless-2016-10-31
Resources:
  Api:
    Type: AWS::Serverless::Api
    Properties:
      StageName: prod
      AlwaysDeploy: true
      DefinitionBody:
        swagger: "2.0"
        info: {title: always, version: "1"}
        paths:
          /ping:
            get:
              x-amazon-apigateway-integration:
                type: mock
                requestTemplates: {application/json: '{"statusCode": 200}'}
                responses: {default: {statusCode: "200", responseTemplates: {application/json: pong}}}
              responses: {"200": {description: ok}}
Outputs:
  Api: {Value: !Ref Api}
  Deployment: {Value: !Ref Api.Deployment}
"""


def test_always_deploy_makes_a_new_deployment_at_every_deploy(cumulo, cfn, tmp_path):
    """AlwaysDeploy names the Deployment after the operation's time: deploying the same template
    again (a second later) makes a new Deployment the stage serves, and the old one goes."""
    name = f"samalways-{uuid.uuid4().hex[:6]}"
    proc = deploy(cumulo, tmp_path, name, ALWAYS_DEPLOY, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = outputs(cfn, name)
    apigw = cumulo.client("apigateway")
    stage = apigw.get_stage(restApiId=first["Api"], stageName="prod")
    time.sleep(1.1)
    proc = deploy(cumulo, tmp_path, name, ALWAYS_DEPLOY, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    second = outputs(cfn, name)
    assert second["Api"] == first["Api"]
    assert second["Deployment"] != first["Deployment"]
    assert apigw.get_stage(restApiId=first["Api"], stageName="prod")["deploymentId"] == second["Deployment"]
    assert second["Deployment"] != stage["deploymentId"]
    ids = [d["id"] for d in apigw.get_deployments(restApiId=first["Api"])["items"]]
    assert ids == [second["Deployment"]]
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig=WAIT)
