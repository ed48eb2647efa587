"""Lambda end to end: functions created, configured and invoked through boto3 and the AWS CLI,
with handlers really running as local node / python3 processes behind cumulo's Runtime API."""
import base64
import io
import json
import pathlib
import time
import urllib.request
import uuid
import zipfile

import botocore.exceptions
import pytest
from conftest import CumuloServer

ROLE = "arn:aws:iam::000000000000:role/lambda-role"
WAIT = {"Delay": 0.2, "MaxAttempts": 100}


def uid():
    return uuid.uuid4().hex[:8]


def zip_of(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return buf.getvalue()


PY_ECHO = """
import os, time
def handler(event, context):
    print("event", event)
    if event.get("fail"):
        raise ValueError("bad input: %s" % event["fail"])
    slept = None
    if event.get("sleep"):
        slept = [time.time()]
        time.sleep(event["sleep"])
        slept.append(time.time())
    return {
        "event": event,
        "slept": slept,
        "pid": os.getpid(),
        "name": os.environ["AWS_LAMBDA_FUNCTION_NAME"],
        "region": os.environ["AWS_REGION"],
        "version": context.function_version,
        "arn": context.invoked_function_arn,
        "custom": os.environ.get("CUSTOM"),
        "remaining": context.get_remaining_time_in_millis(),
    }
"""

NODE_ECHO = """
exports.handler = async (event, context) => {
  console.log('got', JSON.stringify(event));
  if (event.fail) { throw new TypeError('node says ' + event.fail); }
  return { event, pid: process.pid, name: process.env.AWS_LAMBDA_FUNCTION_NAME, requestId: context.awsRequestId };
};
"""

NODE_CALLBACK = """
exports.handler = (event, context, callback) => {
  setTimeout(() => callback(null, { via: 'callback', n: event.n * 2 }), 10);
};
"""


@pytest.fixture(scope="module")
def lam(cumulo):
    return cumulo.client("lambda")


def make(lam, runtime="python3.11", files=None, handler=None, **kw):
    name = kw.pop("FunctionName", None) or f"fn-{uid()}"
    if files is None:
        files = {"app.py": PY_ECHO} if runtime.startswith("python") else {"index.js": NODE_ECHO}
    if handler is None:
        handler = "app.handler" if runtime.startswith("python") else "index.handler"
    resp = lam.create_function(
        FunctionName=name,
        Runtime=runtime,
        Role=ROLE,
        Handler=handler,
        Code={"ZipFile": zip_of(files)},
        **kw,
    )
    lam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig=WAIT)
    return name, resp


def invoke(lam, name, event, **kw):
    r = lam.invoke(FunctionName=name, Payload=json.dumps(event).encode(), **kw)
    return r, json.loads(r["Payload"].read())


def err_code(e):
    return e.value.response["Error"]["Code"]


def test_create_get_list_delete(lam):
    name, created = make(lam, Description="d", Timeout=7, MemorySize=256,
                         Environment={"Variables": {"CUSTOM": "x"}}, Tags={"team": "a"})
    assert created["State"] == "Pending" and created["StateReasonCode"] == "Creating"
    assert created["FunctionArn"] == f"arn:aws:lambda:us-east-1:000000000000:function:{name}"
    got = lam.get_function(FunctionName=name)
    cfg = got["Configuration"]
    assert cfg["State"] == "Active" and cfg["LastUpdateStatus"] == "Successful"
    assert (cfg["Timeout"], cfg["MemorySize"], cfg["Description"]) == (7, 256, "d")
    assert cfg["Environment"]["Variables"] == {"CUSTOM": "x"}
    assert cfg["PackageType"] == "Zip" and cfg["Version"] == "$LATEST"
    assert got["Tags"] == {"team": "a"}
    # Code.Location serves the package that was uploaded.
    with urllib.request.urlopen(got["Code"]["Location"]) as r:
        z = zipfile.ZipFile(io.BytesIO(r.read()))
        assert z.read("app.py").decode() == PY_ECHO
    names = [f["FunctionName"] for f in lam.list_functions()["Functions"]]
    assert name in names
    by_arn = lam.get_function_configuration(FunctionName=created["FunctionArn"])
    assert by_arn["FunctionName"] == name
    lam.delete_function(FunctionName=name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.get_function(FunctionName=name)
    assert err_code(e) == "ResourceNotFoundException"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_create_errors_change_nothing(lam):
    name, _ = make(lam)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        make(lam, FunctionName=name)
    assert err_code(e) == "ResourceConflictException"
    bad = f"bad-{uid()}"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.create_function(FunctionName=bad, Runtime="python3.11", Role=ROLE,
                            Handler="a.b", Code={"ZipFile": b"not a zip"})
    assert err_code(e) == "InvalidParameterValueException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.create_function(FunctionName=bad, Role=ROLE, PackageType="Image",
                            Code={"ImageUri": "x.dkr.ecr.us-east-1.amazonaws.com/r:l"})
    assert err_code(e) == "InvalidParameterValueException"
    assert "Image" in e.value.response["Error"]["Message"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.create_function(FunctionName=bad, Runtime="python3.11", Role=ROLE, Handler="a.b",
                            Code={"ZipFile": zip_of({"a.py": ""})},
                            Environment={"Variables": {"AWS_REGION": "x"}})
    assert err_code(e) == "InvalidParameterValueException"
    assert "AWS_REGION" in e.value.response["Error"]["Message"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.create_function(FunctionName=bad, Runtime="python3.11", Role=ROLE, Handler="a.b",
                            Code={"ZipFile": zip_of({"a.py": ""})}, Timeout=901)
    assert err_code(e) == "ValidationException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.get_function(FunctionName=bad)
    assert err_code(e) == "ResourceNotFoundException"


def test_invoke_python(lam):
    name, _ = make(lam, Environment={"Variables": {"CUSTOM": "hello"}}, Timeout=5)
    r, out = invoke(lam, name, {"a": 1}, LogType="Tail")
    assert r["StatusCode"] == 200 and "FunctionError" not in r
    assert r["ExecutedVersion"] == "$LATEST"
    assert out["event"] == {"a": 1} and out["name"] == name and out["custom"] == "hello"
    assert out["region"] == "us-east-1" and out["version"] == "$LATEST"
    assert 0 < out["remaining"] <= 5000
    log = base64.b64decode(r["LogResult"]).decode()
    assert "START RequestId:" in log and "END RequestId:" in log and "REPORT RequestId:" in log
    assert "event {'a': 1}" in log
    # Warm reuse: the second invocation runs in the same process.
    _, again = invoke(lam, name, {"b": 2})
    assert again["pid"] == out["pid"]


def test_invoke_python_error(lam):
    name, _ = make(lam)
    r, out = invoke(lam, name, {"fail": "x"}, LogType="Tail")
    assert r["StatusCode"] == 200 and r["FunctionError"] == "Unhandled"
    assert out["errorType"] == "ValueError" and out["errorMessage"] == "bad input: x"
    assert any("raise ValueError" in f for f in out["stackTrace"])
    assert "[ERROR] ValueError: bad input: x" in base64.b64decode(r["LogResult"]).decode()


def test_invoke_timeout_kills_the_environment(lam):
    name, _ = make(lam, Timeout=1)
    _, first = invoke(lam, name, {})
    start = time.time()
    r, out = invoke(lam, name, {"sleep": 30}, LogType="Tail")
    # Stopped at its 1 s timeout, not left to sleep its 30 s.
    assert time.time() - start < 15
    assert r["FunctionError"] == "Unhandled"
    assert out["errorType"] == "Sandbox.Timedout"
    assert "Task timed out after 1.00 seconds" in out["errorMessage"]
    assert "Task timed out after 1.00 seconds" in base64.b64decode(r["LogResult"]).decode()
    _, after = invoke(lam, name, {})
    assert after["pid"] != first["pid"]


def test_invoke_types_and_bad_payload(lam):
    name, _ = make(lam)
    r = lam.invoke(FunctionName=name, InvocationType="DryRun")
    assert r["StatusCode"] == 204
    r = lam.invoke(FunctionName=name, InvocationType="Event", Payload=b"{}")
    assert r["StatusCode"] == 202
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.invoke(FunctionName=name, Payload=b"{not json")
    assert err_code(e) == "InvalidRequestContentException"


def test_invoke_node(lam):
    name, _ = make(lam, runtime="nodejs20.x")
    r, out = invoke(lam, name, {"x": "y"}, LogType="Tail")
    assert "FunctionError" not in r
    assert out["event"] == {"x": "y"} and out["name"] == name
    log = base64.b64decode(r["LogResult"]).decode()
    assert f"\t{out['requestId']}\tINFO\tgot" in log
    r, out = invoke(lam, name, {"fail": "z"})
    assert r["FunctionError"] == "Unhandled"
    assert out["errorType"] == "TypeError" and out["errorMessage"] == "node says z"
    assert isinstance(out["trace"], list)


def test_node_callback_style_and_newer_declared_runtime(lam):
    name, _ = make(lam, runtime="nodejs24.x", files={"index.js": NODE_CALLBACK})
    r, out = invoke(lam, name, {"n": 21}, LogType="Tail")
    assert out == {"via": "callback", "n": 42}
    # The machine's Node.js is older than the declared runtime: said in the function's logs.
    log = base64.b64decode(r["LogResult"]).decode()
    assert "nodejs24.x is mapped to this machine's Node.js" in log


def test_handler_not_found_is_an_init_error(lam):
    name, _ = make(lam, handler="missing.handler")
    r, out = invoke(lam, name, {})
    assert r["FunctionError"] == "Unhandled"
    assert out["errorType"] == "Runtime.ImportModuleError"


def test_runtime_the_machine_cannot_run(lam):
    name = f"java-{uid()}"
    lam.create_function(FunctionName=name, Runtime="java21", Role=ROLE, Handler="a.B::h",
                        Code={"ZipFile": zip_of({"a": ""})})
    lam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig=WAIT)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.invoke(FunctionName=name, Payload=b"{}")
    assert err_code(e) == "InvalidRuntimeException"
    assert "java21" in e.value.response["Error"]["Message"]


def test_sdk_calls_come_back_to_cumulo(lam, cumulo):
    sqs = cumulo.client("sqs")
    q = f"q-{uid()}"
    sqs.create_queue(QueueName=q)
    src = "import boto3\ndef handler(e, c):\n    return boto3.client('sqs').list_queues()['QueueUrls']\n"
    name, _ = make(lam, files={"app.py": src}, Timeout=30)
    r, out = invoke(lam, name, {})
    assert "FunctionError" not in r, out
    assert any(u.endswith("/" + q) for u in out)


def test_node_sdk_v3_is_resolvable(tmp_path):
    """The SDK v3 AWS preinstalls is installed with npm into cumulo's SDK cache on first use
    (here a cache kept across runs, so only the first run downloads)."""
    cache = pathlib.Path.home() / ".cache" / "cumulo-e2e-node-sdk"
    server = CumuloServer(data_dir=tmp_path / "data", env={"CUMULO_NODE_SDK_DIR": str(cache)}).start()
    try:
        lam = server.client("lambda", read_timeout=600)
        q = f"nq-{uid()}"
        server.client("sqs").create_queue(QueueName=q)
        src = """
const { SQSClient, ListQueuesCommand } = require('@aws-sdk/client-sqs');
exports.handler = async () => (await new SQSClient({}).send(new ListQueuesCommand({}))).QueueUrls;
"""
        name, _ = make(lam, runtime="nodejs20.x", files={"index.js": src}, Timeout=600)
        r, out = invoke(lam, name, {})
        assert "FunctionError" not in r, out
        assert any(u.endswith("/" + q) for u in out)
    finally:
        server.stop()


def test_missing_node_sdk_is_a_clear_error(tmp_path):
    server = CumuloServer(data_dir=tmp_path / "data", env={
        "CUMULO_NODE_SDK_DIR": str(tmp_path / "empty-sdk"), "CUMULO_NODE_SDK_INSTALL": "0"}).start()
    try:
        lam = server.client("lambda")
        src = "const s = require('@aws-sdk/client-s3');\nexports.handler = async () => 1;\n"
        name, _ = make(lam, runtime="nodejs20.x", files={"index.js": src})
        r, out = invoke(lam, name, {})
        assert r["FunctionError"] == "Unhandled"
        assert "@aws-sdk/client-s3" in out["errorMessage"] and "npm install" in out["errorMessage"]
    finally:
        server.stop()


def test_update_code_and_configuration(lam):
    name, _ = make(lam)
    lam.update_function_code(FunctionName=name, ZipFile=zip_of(
        {"app.py": "def handler(e, c):\n    return 'v2'\n"}))
    lam.get_waiter("function_updated_v2").wait(FunctionName=name, WaiterConfig=WAIT)
    assert invoke(lam, name, {})[1] == "v2"
    cfg = lam.update_function_configuration(FunctionName=name, Timeout=9,
                                            Environment={"Variables": {"K": "V"}})
    assert cfg["Timeout"] == 9
    lam.get_waiter("function_updated_v2").wait(FunctionName=name, WaiterConfig=WAIT)
    got = lam.get_function_configuration(FunctionName=name)
    assert got["Environment"]["Variables"] == {"K": "V"} and got["LastUpdateStatus"] == "Successful"


def test_versions_and_aliases(lam):
    name, _ = make(lam)
    v1 = lam.publish_version(FunctionName=name, Description="first")
    assert v1["Version"] == "1" and v1["FunctionArn"].endswith(f":{name}:1")
    # Publishing unchanged code returns the same version.
    assert lam.publish_version(FunctionName=name)["Version"] == "1"
    lam.update_function_code(FunctionName=name, ZipFile=zip_of(
        {"app.py": "def handler(e, c):\n    return c.function_version\n"}))
    lam.get_waiter("function_updated_v2").wait(FunctionName=name, WaiterConfig=WAIT)
    v2 = lam.publish_version(FunctionName=name)
    assert v2["Version"] == "2"
    versions = [v["Version"] for v in lam.list_versions_by_function(FunctionName=name)["Versions"]]
    assert versions == ["$LATEST", "1", "2"]
    alias = lam.create_alias(FunctionName=name, Name="live", FunctionVersion="2")
    assert alias["AliasArn"].endswith(f":{name}:live")
    r, out = invoke(lam, name, {}, Qualifier="live")
    assert r["ExecutedVersion"] == "2" and out == "2"
    r, out = invoke(lam, name, {}, Qualifier="1")
    assert r["ExecutedVersion"] == "1" and out["version"] == "1"
    lam.update_alias(FunctionName=name, Name="live", FunctionVersion="1")
    assert lam.get_alias(FunctionName=name, Name="live")["FunctionVersion"] == "1"
    assert [a["Name"] for a in lam.list_aliases(FunctionName=name)["Aliases"]] == ["live"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.create_alias(FunctionName=name, Name="bad", FunctionVersion="9")
    assert err_code(e) == "ResourceNotFoundException"
    lam.delete_alias(FunctionName=name, Name="live")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.get_alias(FunctionName=name, Name="live")
    assert err_code(e) == "ResourceNotFoundException"
    lam.delete_function(FunctionName=name, Qualifier="1")
    versions = [v["Version"] for v in lam.list_versions_by_function(FunctionName=name)["Versions"]]
    assert versions == ["$LATEST", "2"]


def test_permissions(lam):
    name, _ = make(lam)
    st = lam.add_permission(FunctionName=name, StatementId="s3", Action="lambda:InvokeFunction",
                            Principal="s3.amazonaws.com", SourceArn="arn:aws:s3:::b")
    statement = json.loads(st["Statement"])
    assert statement["Principal"] == {"Service": "s3.amazonaws.com"}
    assert statement["Condition"]["ArnLike"]["AWS:SourceArn"] == "arn:aws:s3:::b"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.add_permission(FunctionName=name, StatementId="s3", Action="lambda:InvokeFunction",
                           Principal="s3.amazonaws.com")
    assert err_code(e) == "ResourceConflictException"
    policy = json.loads(lam.get_policy(FunctionName=name)["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == ["s3"]
    lam.remove_permission(FunctionName=name, StatementId="s3")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.get_policy(FunctionName=name)
    assert err_code(e) == "ResourceNotFoundException"


def test_function_url_config(lam):
    name, _ = make(lam)
    c = lam.create_function_url_config(FunctionName=name, AuthType="NONE")
    assert c["AuthType"] == "NONE" and c["FunctionUrl"].startswith("https://")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.create_function_url_config(FunctionName=name, AuthType="NONE")
    assert err_code(e) == "ResourceConflictException"
    lam.update_function_url_config(FunctionName=name, AuthType="AWS_IAM")
    assert lam.get_function_url_config(FunctionName=name)["AuthType"] == "AWS_IAM"
    lam.delete_function_url_config(FunctionName=name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.get_function_url_config(FunctionName=name)
    assert err_code(e) == "ResourceNotFoundException"


def test_tags_and_concurrency(lam):
    name, created = make(lam)
    arn = created["FunctionArn"]
    lam.tag_resource(Resource=arn, Tags={"a": "1", "b": "2"})
    lam.untag_resource(Resource=arn, TagKeys=["a"])
    assert lam.list_tags(Resource=arn)["Tags"] == {"b": "2"}
    lam.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=0)
    assert lam.get_function_concurrency(FunctionName=name)["ReservedConcurrentExecutions"] == 0
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.invoke(FunctionName=name, Payload=b"{}")
    assert err_code(e) == "TooManyRequestsException"
    lam.delete_function_concurrency(FunctionName=name)
    assert "ReservedConcurrentExecutions" not in lam.get_function_concurrency(FunctionName=name)
    assert invoke(lam, name, {})[0]["StatusCode"] == 200


def test_layers_are_on_the_module_path(lam):
    layer = f"lib-{uid()}"
    v = lam.publish_layer_version(LayerName=layer, Content={"ZipFile": zip_of(
        {"python/greet.py": "def hi():\n    return 'from layer'\n",
         "nodejs/node_modules/greet/index.js": "exports.hi = () => 'from node layer';"})},
        CompatibleRuntimes=["python3.11", "nodejs20.x"])
    assert v["Version"] == 1 and v["LayerVersionArn"].endswith(f":layer:{layer}:1")
    assert lam.get_layer_version(LayerName=layer, VersionNumber=1)["Content"]["CodeSize"] > 0
    assert [x["Version"] for x in lam.list_layer_versions(LayerName=layer)["LayerVersions"]] == [1]
    assert layer in [x["LayerName"] for x in lam.list_layers()["Layers"]]
    name, _ = make(lam, files={"app.py": "import greet\ndef handler(e, c):\n    return greet.hi()\n"},
                   Layers=[v["LayerVersionArn"]])
    assert invoke(lam, name, {})[1] == "from layer"
    jsname, _ = make(lam, runtime="nodejs20.x", Layers=[v["LayerVersionArn"]], files={
        "index.js": "exports.handler = async () => require('greet').hi();"})
    assert invoke(lam, jsname, {})[1] == "from node layer"
    lam.delete_layer_version(LayerName=layer, VersionNumber=1)
    assert lam.list_layer_versions(LayerName=layer)["LayerVersions"] == []


def test_sqs_event_source_mapping(lam, cumulo):
    sqs = cumulo.client("sqs")
    src = sqs.create_queue(QueueName=f"src-{uid()}", Attributes={"VisibilityTimeout": "2"})["QueueUrl"]
    out = sqs.create_queue(QueueName=f"out-{uid()}")["QueueUrl"]
    src_arn = sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    code = f"""
import boto3
def handler(event, context):
    sqs = boto3.client('sqs')
    failures = []
    for r in event['Records']:
        assert r['eventSource'] == 'aws:sqs' and r['eventSourceARN'] == '{src_arn}'
        if r['body'] == 'bad':
            failures.append({{'itemIdentifier': r['messageId']}})
        else:
            sqs.send_message(QueueUrl='{out}', MessageBody='seen ' + r['body'])
    return {{'batchItemFailures': failures}}
"""
    name, _ = make(lam, files={"app.py": code}, Timeout=30)
    m = lam.create_event_source_mapping(EventSourceArn=src_arn, FunctionName=name, BatchSize=5,
                                        FunctionResponseTypes=["ReportBatchItemFailures"])
    assert m["State"] == "Creating" and m["BatchSize"] == 5
    assert lam.get_event_source_mapping(UUID=m["UUID"])["State"] == "Enabled"
    assert [x["UUID"] for x in lam.list_event_source_mappings(FunctionName=name)["EventSourceMappings"]] == [m["UUID"]]
    for body in ["one", "two", "bad"]:
        sqs.send_message(QueueUrl=src, MessageBody=body)
    seen = set()
    deadline = time.time() + 30
    while len(seen) < 2 and time.time() < deadline:
        for msg in sqs.receive_message(QueueUrl=out, WaitTimeSeconds=1, MaxNumberOfMessages=10).get("Messages", []):
            seen.add(msg["Body"])
            sqs.delete_message(QueueUrl=out, ReceiptHandle=msg["ReceiptHandle"])
    assert seen == {"seen one", "seen two"}
    # The reported failure stays on the queue; the successes were deleted.
    lam.update_event_source_mapping(UUID=m["UUID"], Enabled=False)
    time.sleep(3)
    attrs = sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["All"])["Attributes"]
    assert int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"]) == 1
    got = sqs.receive_message(QueueUrl=src, WaitTimeSeconds=5)["Messages"]
    assert got[0]["Body"] == "bad"
    lam.delete_event_source_mapping(UUID=m["UUID"])
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.get_event_source_mapping(UUID=m["UUID"])
    assert err_code(e) == "ResourceNotFoundException"


def test_cli_invoke(cumulo, tmp_path):
    lam = cumulo.client("lambda")
    name, _ = make(lam)
    out = tmp_path / "out.json"
    res = cumulo.aws("lambda", "invoke", "--function-name", name,
                     "--payload", '{"cli": true}', str(out))
    assert res["StatusCode"] == 200
    assert json.loads(out.read_text())["event"] == {"cli": True}


def test_functions_survive_a_restart(fresh_server):
    fresh_server.start()
    lam = fresh_server.client("lambda")
    name, _ = make(lam)
    lam.publish_version(FunctionName=name)
    fresh_server.stop()
    fresh_server.start()
    lam = fresh_server.client("lambda")
    assert lam.get_function(FunctionName=name)["Configuration"]["State"] == "Active"
    assert invoke(lam, name, {"after": "restart"}, Qualifier="1")[1]["event"] == {"after": "restart"}


def test_logs_go_to_cloudwatch_logs(lam, cumulo):
    name, _ = make(lam, runtime="nodejs22.x")
    invoke(lam, name, {"hello": "logs"})
    logs = cumulo.client("logs")
    group = f"/aws/lambda/{name}"
    streams = logs.describe_log_streams(logGroupName=group)["logStreams"]
    assert len(streams) == 1 and "/[$LATEST]" in streams[0]["logStreamName"]
    messages = [e["message"] for e in logs.get_log_events(
        logGroupName=group, logStreamName=streams[0]["logStreamName"], startFromHead=True)["events"]]
    assert messages[0].startswith("cumulo: runtime nodejs22.x is mapped to this machine's Node.js")
    assert any(m.startswith("START RequestId:") for m in messages)
    assert any('INFO\tgot {"hello":"logs"}' in m for m in messages)
    assert messages[-1].startswith("REPORT RequestId:")


def test_concurrent_invocations_get_their_own_environments(lam):
    from concurrent.futures import ThreadPoolExecutor

    name, _ = make(lam, Timeout=10)
    invoke(lam, name, {})  # one warm environment to start with
    with ThreadPoolExecutor(3) as pool:
        results = list(pool.map(lambda i: invoke(lam, name, {"sleep": 1, "i": i})[1], range(3)))
    # The three sleeps overlapped: each began before any of them ended.
    assert max(r["slept"][0] for r in results) < min(r["slept"][1] for r in results)
    assert sorted(r["event"]["i"] for r in results) == [0, 1, 2]
    assert len({r["pid"] for r in results}) == 3


NODE_LEVELS = """
exports.handler = async () => {
  console.info('quiet info');
  console.warn('loud warning');
  console.error('an error');
  return 'logged';
};
"""


def test_logging_config_json_levels_and_custom_group(lam, cumulo):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        make(lam, runtime="nodejs20.x", LoggingConfig={"LogFormat": "Text", "ApplicationLogLevel": "WARN"})
    assert err_code(e) == "InvalidParameterValueException"
    assert "LogLevel is not supported when LogFormat is set to \"Text\"" in e.value.response["Error"]["Message"]
    group = f"/custom/{uid()}"
    name, resp = make(lam, runtime="nodejs20.x", files={"index.js": NODE_LEVELS},
                      LoggingConfig={"LogFormat": "JSON", "ApplicationLogLevel": "WARN", "LogGroup": group})
    assert resp["LoggingConfig"] == {"LogFormat": "JSON", "ApplicationLogLevel": "WARN",
                                     "SystemLogLevel": "INFO", "LogGroup": group}
    r, out = invoke(lam, name, {})
    assert out == "logged"
    logs = cumulo.client("logs")
    [stream] = logs.describe_log_streams(logGroupName=group)["logStreams"]
    messages = [ev["message"] for ev in logs.get_log_events(
        logGroupName=group, logStreamName=stream["logStreamName"], startFromHead=True)["events"]]
    records = [json.loads(m) for m in messages if m.startswith("{")]
    # JSON records as AWS's Node.js runtime writes them, below WARN dropped.
    assert [(rec["level"], rec["message"]) for rec in records] == [("WARN", "loud warning"), ("ERROR", "an error")]
    assert all(rec["requestId"] and rec["timestamp"] for rec in records)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.describe_log_streams(logGroupName=f"/aws/lambda/{name}")
    assert err_code(e) == "ResourceNotFoundException"
    # Back to Text: the levels go, the group stays (absent fields keep their values).
    cfg = lam.update_function_configuration(FunctionName=name, LoggingConfig={"LogFormat": "Text"})
    assert cfg["LoggingConfig"] == {"LogFormat": "Text", "LogGroup": group}
    lam.get_waiter("function_updated_v2").wait(FunctionName=name, WaiterConfig=WAIT)
    assert lam.get_function_configuration(FunctionName=name)["LoggingConfig"] == cfg["LoggingConfig"]


def test_localhost_subdomains_reach_cumulo(lam, cumulo):
    """With AWS_ENDPOINT_URL=http://localhost:PORT the SDK v3 addresses S3 as
    `<bucket>.localhost:PORT`; inside a function such names are loopback (RFC 6761) even where
    the machine's resolver does not say so."""
    src = """
const http = require('http');
exports.handler = (event) => new Promise((resolve, reject) => {
  http.get(`http://${event.bucket}.localhost:${event.port}/`, (res) => {
    let body = '';
    res.on('data', (c) => { body += c; });
    res.on('end', () => resolve({ status: res.statusCode, body }));
  }).on('error', (e) => reject(e));
});
"""
    bucket = f"vh-{uid()}"
    cumulo.client("s3").create_bucket(Bucket=bucket)
    name, _ = make(lam, runtime="nodejs20.x", files={"index.js": src}, Timeout=30)
    r, out = invoke(lam, name, {"bucket": bucket, "port": cumulo.port})
    assert "FunctionError" not in r, out
    # Unsigned, so S3 refuses it, but it is cumulo's S3 answering for this bucket.
    assert out["status"] in (200, 403), out
    assert "<ListBucketResult" in out["body"] or "AccessDenied" in out["body"], out


def test_sdk_installed_after_the_directory_held_others_resolves(tmp_path):
    """Node caches a package.json lookup that missed; once the SDK directory holds other
    clients, the first lookup of a new one misses before the install. It must still load."""
    sdk = tmp_path / "sdk"
    (sdk / "node_modules" / "@aws-sdk").mkdir(parents=True)
    server = CumuloServer(data_dir=tmp_path / "data", env={"CUMULO_NODE_SDK_DIR": str(sdk)}).start()
    try:
        lam = server.client("lambda", read_timeout=600)
        src = """
const { isArrayBuffer } = require('@smithy/is-array-buffer');
exports.handler = async () => isArrayBuffer(new ArrayBuffer(2));
"""
        name, _ = make(lam, runtime="nodejs20.x", files={"index.js": src}, Timeout=600)
        r, out = invoke(lam, name, {})
        assert "FunctionError" not in r, out
        assert out is True
        assert (sdk / "node_modules" / "@smithy" / "is-array-buffer" / "package.json").is_file()
    finally:
        server.stop()


def test_concurrent_first_use_installs_share_the_sdk_directory(tmp_path):
    """Two functions needing the same missing client at once: one installs while the other
    waits for the directory's lock, then finds it there; both run."""
    import concurrent.futures

    sdk = tmp_path / "sdk"
    server = CumuloServer(data_dir=tmp_path / "data", env={"CUMULO_NODE_SDK_DIR": str(sdk)}).start()
    try:
        lam = server.client("lambda", read_timeout=600)
        src = """
const { isArrayBuffer } = require('@smithy/is-array-buffer');
exports.handler = async () => isArrayBuffer(new ArrayBuffer(1));
"""
        names = [make(lam, runtime="nodejs20.x", files={"index.js": src}, Timeout=600)[0] for _ in range(2)]
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            results = list(pool.map(lambda n: invoke(lam, n, {}), names))
        for r, out in results:
            assert "FunctionError" not in r, out
            assert out is True
        assert not (sdk / ".cumulo-install.lock").exists()
        installs = 0
        logs = server.client("logs")
        for n in names:
            for s in logs.describe_log_streams(logGroupName=f"/aws/lambda/{n}")["logStreams"]:
                events = logs.get_log_events(logGroupName=f"/aws/lambda/{n}", logStreamName=s["logStreamName"])
                installs += sum("cumulo: installing @smithy/is-array-buffer" in e["message"] for e in events["events"])
        assert installs == 1
    finally:
        server.stop()


def test_tracing_config_is_stored_and_reported(lam):
    key = "arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555"
    name, resp = make(lam, TracingConfig={"Mode": "Active"}, KMSKeyArn=key)
    assert resp["TracingConfig"] == {"Mode": "Active"} and resp["KMSKeyArn"] == key
    assert lam.get_function_configuration(FunctionName=name)["TracingConfig"] == {"Mode": "Active"}
    lam.update_function_configuration(FunctionName=name, TracingConfig={"Mode": "PassThrough"})
    lam.get_waiter("function_updated_v2").wait(FunctionName=name, WaiterConfig=WAIT)
    assert lam.get_function(FunctionName=name)["Configuration"]["TracingConfig"] == {"Mode": "PassThrough"}
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.update_function_configuration(FunctionName=name, TracingConfig={"Mode": "Sometimes"})
    assert err_code(e) == "ValidationException"
    assert lam.get_function_configuration(FunctionName=name)["TracingConfig"] == {"Mode": "PassThrough"}
    # KMSKeyArn: stored and reported; an empty one goes back to the default key.
    assert lam.get_function_configuration(FunctionName=name)["KMSKeyArn"] == key
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.update_function_configuration(FunctionName=name, KMSKeyArn="not-an-arn")
    assert err_code(e) == "ValidationException"
    lam.update_function_configuration(FunctionName=name, KMSKeyArn="")
    lam.get_waiter("function_updated_v2").wait(FunctionName=name, WaiterConfig=WAIT)
    assert "KMSKeyArn" not in lam.get_function_configuration(FunctionName=name)
    lam.delete_function(FunctionName=name)
