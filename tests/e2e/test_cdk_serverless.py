"""Issue 20's acceptance through the real AWS CDK CLI: tests/cdk-serve-app/serverless.js (a RestApi
with a LambdaIntegration and a greedy `{proxy+}` resource, an HttpApi with Lambda routes, a
StateMachine with LambdaInvoke, Choice, Map, a DynamoDB PutItem task and a Catch, a
StepFunctionsRestApi and an SQS AwsIntegration) bootstrapped and
deployed with `cdk deploy` against `cumulo serve` (AWS_ENDPOINT_URL=http://localhost:PORT), both
APIs called over HTTP at LocalStack's two URL forms, the state machine run to SUCCEEDED and through
its Catch, one redeploy that changes the functions, both APIs and the definition, and `cdk destroy`
leaving what AWS leaves (the CDK's retained CloudWatch role for API Gateway and account setting, the
functions' log groups) and nothing else.

The tests run in file order on one module-scoped deployment: each step builds on the last.
"""
import json
import time
import urllib.error
import urllib.request

import pytest

from cdk_cli import ACCOUNT_ENV, QUALIFIER, Cdk, check_bootstrap, ensure_app, gone, stack_outputs
from conftest import CumuloServer

STACK = "CdkServerless"
APP_COMMAND = "node serverless.js"


class Deployment:
    """The server, the CLI and the stack's outputs of the first deploy."""

    def __init__(self, server, cdk):
        self.server = server
        self.cdk = cdk
        self.out = {}

    def client(self, service):
        return self.server.client(service)

    def request(self, method, path, host=None, body=None, headers=None):
        """One HTTP request to the server (urllib); `host` sets the Host header."""
        req = urllib.request.Request(self.server.endpoint + path, method=method, data=body)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        if host:
            req.add_header("Host", host)
        try:
            with urllib.request.urlopen(req, timeout=60) as r:
                return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
        except urllib.error.HTTPError as e:
            return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()

    def both_forms(self, api_id, stage_path, method="GET", **kw):
        """The same request at `http://<api-id>.execute-api.localhost:<port>/<stage>/<path>` and at
        `http://localhost:<port>/_aws/execute-api/<api-id>/<stage>/<path>`: both must answer the
        same status and headers the function set, and the same body."""
        port = self.server.port
        a = self.request(method, f"/_aws/execute-api/{api_id}{stage_path}", **kw)
        b = self.request(method, stage_path, host=f"{api_id}.execute-api.localhost:{port}", **kw)
        assert a[0] == b[0] and a[2] == b[2], (a, b)
        assert a[1].get("x-greeting") == b[1].get("x-greeting")
        return a[0], a[1], json.loads(a[2]) if a[2] else None


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    ensure_app()
    tmp = tmp_path_factory.mktemp("cdk-serverless")
    sdk_dir = tmp_path_factory.mktemp("node-sdk")
    server = CumuloServer(data_dir=tmp / "data", env={"CUMULO_NODE_SDK_DIR": str(sdk_dir)}).start()
    try:
        cdk = Cdk(server, "localhost", tmp / "cdk.out", app=APP_COMMAND)
        cdk("bootstrap", ACCOUNT_ENV)
        check_bootstrap(server)
        cdk("deploy", "--require-approval", "never")
        d = Deployment(server, cdk)
        d.out = stack_outputs(server.client("cloudformation"), STACK)
        yield d
    finally:
        server.stop()


def test_deploy_creates_every_resource(deployed):
    cfn = deployed.client("cloudformation")
    stack = cfn.describe_stacks(StackName=STACK)["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    assert stack["RoleARN"].endswith(f":role/cdk-{QUALIFIER}-cfn-exec-role-000000000000-us-east-1")
    out = deployed.out
    # The REST API: GET /items and ANY /items/{proxy+}, deployed to stage prod.
    apigw = deployed.client("apigateway")
    resources = {r["path"]: r for r in apigw.get_resources(restApiId=out["RestApiId"])["items"]}
    assert set(resources) == {"/", "/items", "/items/{proxy+}"}
    assert set(resources["/items"]["resourceMethods"]) == {"GET"}
    assert set(resources["/items/{proxy+}"]["resourceMethods"]) == {"ANY"}
    integration = apigw.get_integration(restApiId=out["RestApiId"], resourceId=resources["/items"]["id"], httpMethod="GET")
    assert integration["type"] == "AWS_PROXY" and out["EchoName"] in integration["uri"]
    stage = apigw.get_stage(restApiId=out["RestApiId"], stageName="prod")
    assert out["RestUrl"] == f"https://{out['RestApiId']}.execute-api.us-east-1.amazonaws.com/prod/"
    # The CDK's CloudWatch role for API Gateway, set on the account.
    assert apigw.get_account()["cloudwatchRoleArn"].split("/")[-1].startswith(f"{STACK}-RestCloudWatchRole")
    deployed.out["RestDeploymentId"] = stage["deploymentId"]
    # The HTTP API: two routes on one Lambda integration (payload 2.0), auto-deployed $default stage.
    v2 = deployed.client("apigatewayv2")
    api = v2.get_api(ApiId=out["HttpApiId"])
    assert api["ProtocolType"] == "HTTP"
    assert out["HttpUrl"] == api["ApiEndpoint"] == f"http://{out['HttpApiId']}.execute-api.localhost:{deployed.server.port}"
    routes = sorted(r["RouteKey"] for r in v2.get_routes(ApiId=out["HttpApiId"])["Items"])
    assert routes == ["GET /hello/{name}", "POST /hello/{name}"]
    [integ] = v2.get_integrations(ApiId=out["HttpApiId"])["Items"]
    assert integ["IntegrationType"] == "AWS_PROXY" and integ["PayloadFormatVersion"] == "2.0"
    assert v2.get_stage(ApiId=out["HttpApiId"], StageName="$default")["AutoDeploy"] is True
    # The state machine, its role, and the table its DynamoDB task writes to.
    sfn = deployed.client("stepfunctions")
    machine = sfn.describe_state_machine(stateMachineArn=out["StateMachineArn"])
    assert machine["status"] == "ACTIVE" and machine["roleArn"] == out["StateMachineRoleArn"]
    states = json.loads(machine["definition"])["States"]
    assert {s["Type"] for s in states.values()} == {"Task", "Pass", "Choice", "Map", "Succeed"}
    assert states["Save"]["Resource"].endswith(":states:::dynamodb:putItem")
    assert deployed.client("dynamodb").describe_table(TableName=out["TableName"])["Table"]["TableStatus"] == "ACTIVE"


def test_rest_api_answers_at_both_url_forms(deployed):
    api = deployed.out["RestApiId"]
    status, headers, got = deployed.both_forms(api, "/prod/items?colour=red&size=9&size=10")
    assert status == 200 and headers["content-type"] == "application/json" and headers["x-greeting"] == "hello"
    assert got["version"] == "1.0" and got["method"] == "GET" and got["stage"] == "prod"
    assert (got["resource"], got["path"], got["pathParameters"]) == ("/items", "/items", None)
    # A REST API's proxy event: the last value of a repeated parameter, all of them in the multi map.
    assert got["query"] == {"colour": "red", "size": "10"}
    assert got["multiQuery"] == {"colour": ["red"], "size": ["9", "10"]}
    assert got["body"] is None

    # The greedy {proxy+} resource with ANY: any method, any depth, the body passed through.
    status, _, got = deployed.both_forms(
        api, "/prod/items/a/b/c?q=z", method="POST", body=b'{"n": 1}', headers={"content-type": "application/json"}
    )
    assert status == 200
    assert (got["method"], got["resource"], got["path"]) == ("POST", "/items/{proxy+}", "/items/a/b/c")
    assert got["pathParameters"] == {"proxy": "a/b/c"} and got["query"] == {"q": "z"}
    assert got["body"] == '{"n": 1}'
    status, _, got = deployed.both_forms(api, "/prod/items/one", method="DELETE")
    assert status == 200 and got["method"] == "DELETE" and got["pathParameters"] == {"proxy": "one"}

    # What the API does not route: API Gateway's own answer, not the function's.
    status, _, got = deployed.both_forms(api, "/prod/elsewhere")
    assert status == 403 and got == {"message": "Missing Authentication Token"}
    status, _, got = deployed.both_forms(api, "/prod/items", method="POST", body=b"x")
    assert status == 403 and got == {"message": "Missing Authentication Token"}


def test_http_api_answers_at_both_url_forms(deployed):
    api = deployed.out["HttpApiId"]
    status, headers, got = deployed.both_forms(api, "/hello/world?k=v&k=w&other=1")
    assert status == 200 and headers["x-greeting"] == "hello"
    assert got["version"] == "2.0" and got["method"] == "GET" and got["stage"] == "$default"
    assert (got["resource"], got["path"]) == ("GET /hello/{name}", "/hello/world")
    assert got["pathParameters"] == {"name": "world"}
    # Payload 2.0 joins a repeated parameter's values with commas and keeps the raw string.
    assert got["query"] == {"k": "v,w", "other": "1"} and got["rawQuery"] == "k=v&k=w&other=1"

    status, _, got = deployed.both_forms(
        api, "/hello/poster", method="POST", body=b'{"said": "hi"}', headers={"content-type": "application/json"}
    )
    assert status == 200 and got["resource"] == "POST /hello/{name}" and got["pathParameters"] == {"name": "poster"}
    assert got["body"] == '{"said": "hi"}'

    # The endpoint the stack reports answers too (its host, the server's address).
    host = deployed.out["HttpUrl"].removeprefix("http://")
    status, _, body = deployed.request("GET", "/hello/direct", host=host)
    assert status == 200 and json.loads(body)["pathParameters"] == {"name": "direct"}

    for path, method in (("/nowhere", "GET"), ("/hello/world", "DELETE"), ("/hello", "GET")):
        status, _, got = deployed.both_forms(api, path, method=method)
        assert (status, got) == (404, {"message": "Not Found"}), path


def test_service_integrations_answer(deployed):
    """The StepFunctionsRestApi runs its EXPRESS machine through StartSyncExecution with the CDK's
    own templates (body, query string and path as the input; a failed execution is a 500 through
    `$context.responseOverride.status`), and POST /queue sends the body to SQS."""
    out = deployed.out
    status, _, got = deployed.both_forms(out["SfnApiId"], "/prod/?lang=en", method="POST",
                                         body=b'{"name": "ann"}', headers={"Content-Type": "application/json"})
    assert (status, got) == (200, {"greeting": "hello", "name": "ann", "query": {"lang": "en"}})
    status, _, got = deployed.both_forms(out["SfnApiId"], "/prod/", method="POST",
                                         body=b'{"name": "nobody"}', headers={"Content-Type": "application/json"})
    assert (status, got) == (500, {"error": "NoName", "cause": "nobody to greet"})
    status, _, raw = deployed.request("POST", f"/_aws/execute-api/{out['SfnApiId']}/prod/queue",
                                      body=b'{"order": 7}', headers={"Content-Type": "application/json"})
    assert status == 200, raw
    [message] = deployed.client("sqs").receive_message(QueueUrl=out["InboxUrl"], WaitTimeSeconds=5)["Messages"]
    assert (message["MessageId"], json.loads(message["Body"])) == (json.loads(raw)["queued"], {"order": 7})


def run(sfn, arn, payload, timeout=120):
    started = sfn.start_execution(stateMachineArn=arn, input=json.dumps(payload))
    deadline = time.time() + timeout
    while time.time() < deadline:
        execution = sfn.describe_execution(executionArn=started["executionArn"])
        if execution["status"] != "RUNNING":
            break
        time.sleep(0.1)
    history = sfn.get_execution_history(executionArn=started["executionArn"], maxResults=1000)["events"]
    return execution, history


def test_state_machine_runs_to_succeeded(deployed):
    sfn, out = deployed.client("stepfunctions"), deployed.out
    # A big result: Choice takes Save (DynamoDB PutItem), then the Map invokes the worker per item.
    execution, history = run(sfn, out["StateMachineArn"], {"n": 7, "fail": "no", "items": [1, 2, 3]})
    assert execution["status"] == "SUCCEEDED", execution
    assert json.loads(execution["output"]) == {
        "n": 7,
        "fail": "no",
        "items": [1, 2, 3],
        "work": {"doubled": 14, "greeting": "hello"},
        "mapped": [{"doubled": d, "greeting": "hello"} for d in (2, 4, 6)],
    }
    entered = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
    assert entered[:4] == ["Work", "Big?", "Save", "EachItem"] and entered[-1] == "Done"
    assert entered.count("WorkEach") == 3
    types = [e["type"] for e in history]
    assert types[0] == "ExecutionStarted" and types[-1] == "ExecutionSucceeded"
    assert types.count("MapIterationSucceeded") == 3 and types.count("LambdaFunctionSucceeded") == 3
    # Save wrote the item under the execution's name.
    item = deployed.client("dynamodb").get_item(TableName=out["TableName"], Key={"id": {"S": execution["name"]}})["Item"]
    assert item["doubled"] == {"N": "14"}

    # A small result takes the Pass branch; an empty Map yields an empty list.
    execution, _ = run(sfn, out["StateMachineArn"], {"n": 2, "fail": "no", "items": []})
    assert execution["status"] == "SUCCEEDED"
    got = json.loads(execution["output"])
    assert got["small"] is True and got["mapped"] == [] and got["work"]["doubled"] == 4


def test_state_machine_catches_the_failure(deployed):
    sfn, out = deployed.client("stepfunctions"), deployed.out
    execution, history = run(sfn, out["StateMachineArn"], {"n": 5, "fail": "yes", "items": [1]})
    # The worker threw; the Catch on WorkerRefused routed to Caught, which ends the execution.
    assert execution["status"] == "SUCCEEDED", execution
    got = json.loads(execution["output"])
    assert got["recovered"] is True and got["error"] == "WorkerRefused"
    assert got["cause"]["errorType"] == "WorkerRefused" and got["cause"]["errorMessage"] == "asked to fail on 5"
    [failed] = [e for e in history if e["type"] == "TaskFailed"]
    assert failed["taskFailedEventDetails"]["error"] == "WorkerRefused"
    assert failed["taskFailedEventDetails"]["resource"] == "invoke" and failed["taskFailedEventDetails"]["resourceType"] == "lambda"
    entered = [e["stateEnteredEventDetails"]["name"] for e in history if "stateEnteredEventDetails" in e]
    assert entered == ["Work", "Caught"]
    assert history[-1]["type"] == "ExecutionSucceeded"
    # Nothing reached the table for it.
    got = deployed.client("dynamodb").get_item(TableName=out["TableName"], Key={"id": {"S": execution["name"]}})
    assert "Item" not in got


def test_redeploy_changes_functions_apis_and_definition(deployed):
    cfn, out = deployed.client("cloudformation"), deployed.out
    deployed.cdk("deploy", "--require-approval", "never", "-c", "greeting=bonjour", "-c", "extra=true")
    assert cfn.describe_stacks(StackName=STACK)["Stacks"][0]["StackStatus"] == "UPDATE_COMPLETE"
    after = stack_outputs(cfn, STACK)
    # Nothing replaced: the same APIs, functions, table, state machine.
    assert {k: after[k] for k in after} == {k: out[k] for k in after}

    # The functions' new variable, through both APIs.
    status, headers, got = deployed.both_forms(out["RestApiId"], "/prod/items/x")
    assert status == 200 and got["greeting"] == "bonjour" and headers["x-greeting"] == "bonjour"
    # The REST API's new resource, live on prod through a new deployment (the old one deleted).
    status, _, got = deployed.both_forms(out["RestApiId"], "/prod/extra")
    assert status == 200 and (got["resource"], got["greeting"]) == ("/extra", "bonjour")
    apigw = deployed.client("apigateway")
    stage = apigw.get_stage(restApiId=out["RestApiId"], stageName="prod")
    assert stage["deploymentId"] != out["RestDeploymentId"]
    assert [d["id"] for d in apigw.get_deployments(restApiId=out["RestApiId"])["items"]] == [stage["deploymentId"]]
    # The HTTP API's new route, auto-deployed.
    status, _, got = deployed.both_forms(out["HttpApiId"], "/extra")
    assert status == 200 and (got["resource"], got["greeting"]) == ("GET /extra", "bonjour")

    # The updated definition runs: the Small state's new result.
    sfn = deployed.client("stepfunctions")
    execution, _ = run(sfn, out["StateMachineArn"], {"n": 1, "fail": "no", "items": [4]})
    assert execution["status"] == "SUCCEEDED", execution
    got = json.loads(execution["output"])
    assert got["small"] == "small, changed" and got["mapped"] == [{"doubled": 8, "greeting": "bonjour"}]


def test_destroy_leaves_what_aws_leaves(deployed):
    out, server = deployed.out, deployed.server
    deployed.cdk("destroy", "--force")
    gone(lambda: server.client("cloudformation").describe_stacks(StackName=STACK), "ValidationError")
    gone(lambda: server.client("apigateway").get_rest_api(restApiId=out["RestApiId"]), "NotFoundException")
    gone(lambda: server.client("apigatewayv2").get_api(ApiId=out["HttpApiId"]), "NotFoundException")
    gone(lambda: server.client("apigateway").get_rest_api(restApiId=out["SfnApiId"]), "NotFoundException")
    gone(lambda: server.client("sqs").get_queue_attributes(QueueUrl=out["InboxUrl"]), "AWS.SimpleQueueService.NonExistentQueue")
    lam = server.client("lambda")
    for name in (out["EchoName"], out["WorkerName"]):
        gone(lambda n=name: lam.get_function(FunctionName=n), "ResourceNotFoundException")
    gone(lambda: server.client("stepfunctions").describe_state_machine(stateMachineArn=out["StateMachineArn"]), "StateMachineDoesNotExist")
    gone(lambda: server.client("dynamodb").describe_table(TableName=out["TableName"]), "ResourceNotFoundException")
    iam = server.client("iam")
    for role in (out["EchoRoleArn"], out["StateMachineRoleArn"]):
        gone(lambda r=role: iam.get_role(RoleName=r.rsplit("/", 1)[-1]), "NoSuchEntity")
    # What AWS leaves: the CloudWatch role API Gateway's account setting names (the CDK retains
    # both), and the log groups Lambda created when the functions ran (no stack owns them).
    roles = [r["RoleName"] for r in iam.list_roles()["Roles"] if r["RoleName"].startswith(STACK)]
    assert len(roles) == 1 and roles[0].startswith(f"{STACK}-RestCloudWatchRole"), roles
    assert server.client("apigateway").get_account()["cloudwatchRoleArn"].endswith(roles[0])
    groups = sorted(g["logGroupName"] for g in server.client("logs").describe_log_groups()["logGroups"])
    assert groups == sorted(f"/aws/lambda/{out[k]}" for k in ("EchoName", "WorkerName"))
    # The bootstrap stack stays.
    toolkit = server.client("cloudformation").describe_stacks(StackName="CDKToolkit")["Stacks"][0]
    assert toolkit["StackStatus"] == "CREATE_COMPLETE"
