"""Direct deploy end to end: `cumulo deploy / diff / destroy / drift / import / force-unlock`
with the real binary on a state directory, then `cumulo serve --data-dir` on that directory
and the AWS CLI / boto3 seeing what was deployed."""
import json
import os
import pathlib
import shutil
import sqlite3
import subprocess
import zipfile
import io

import pytest

from conftest import BIN, ROOT, CumuloServer

CORPUS = ROOT.parent / "shared" / "corpus" / "templates-good" / "aws-cloudformation-templates"
CDK_APP = ROOT / "tests" / "cdk-app"


def run(*args, state, check=None, timeout=120):
    """Runs `cumulo ARGS --state-dir STATE`; returns the CompletedProcess."""
    proc = subprocess.run(
        [str(BIN), *args, "--state-dir", str(state)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "AWS_REGION": "us-east-1"},
    )
    if check is not None:
        assert proc.returncode == check, f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    return proc


def deploy_json(source, state, *extra, check=0):
    proc = run("deploy", str(source), "--output", "json", *extra, state=state, check=check)
    return json.loads(proc.stdout)


def served(state):
    return CumuloServer(data_dir=state).start()


def write(tmp_path, name, doc):
    p = tmp_path / name
    p.write_text(json.dumps(doc) if isinstance(doc, dict) else doc)
    return p


APP = {
    "Parameters": {"Delay": {"Type": "Number", "Default": "0"}, "Name": {"Type": "String", "Default": "v1"}},
    "Resources": {
        "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 30, "DelaySeconds": {"Ref": "Delay"}}},
        "Topic": {"Type": "AWS::SNS::Topic", "Properties": {"DisplayName": "events"}},
        "Sub": {
            "Type": "AWS::SNS::Subscription",
            "Properties": {"TopicArn": {"Ref": "Topic"}, "Protocol": "sqs", "Endpoint": {"Fn::GetAtt": ["Queue", "Arn"]}, "RawMessageDelivery": True},
        },
        "Param": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": "/direct/app", "Type": "String", "Value": {"Ref": "Name"}}},
        "Bucket": {
            "Type": "AWS::S3::Bucket",
            "Properties": {
                "VersioningConfiguration": {"Status": "Enabled"},
                "PublicAccessBlockConfiguration": {"BlockPublicAcls": True},
                "Tags": [{"Key": "b", "Value": "2"}, {"Key": "a", "Value": 1}],
            },
        },
        "QPolicy": {
            "Type": "AWS::SQS::QueuePolicy",
            "Properties": {
                "Queues": [{"Ref": "Queue"}],
                "PolicyDocument": {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "sns.amazonaws.com"}, "Action": "sqs:SendMessage", "Resource": {"Fn::GetAtt": ["Queue", "Arn"]}}]},
            },
        },
        "TPolicy": {
            "Type": "AWS::SNS::TopicPolicy",
            "Properties": {
                "Topics": [{"Ref": "Topic"}],
                "PolicyDocument": {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sns:Publish", "Resource": {"Ref": "Topic"}}]},
            },
        },
        "BPolicy": {
            "Type": "AWS::S3::BucketPolicy",
            "Properties": {
                "Bucket": {"Ref": "Bucket"},
                "PolicyDocument": {"Version": "2012-10-17", "Statement": [{"Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObject", "Resource": {"Fn::Sub": "arn:aws:s3:::${Bucket}/*"}}]},
            },
        },
    },
    "Outputs": {
        "QueueUrl": {"Value": {"Ref": "Queue"}},
        "BucketName": {"Value": {"Ref": "Bucket"}},
        "TopicArn": {"Value": {"Ref": "Topic"}},
    },
}


def test_corpus_queue_deploy_update_diff_destroy_and_serve(tmp_path):
    state = tmp_path / "state"
    template = CORPUS / "SQS__SQSStandardQueue.json"
    out = deploy_json(template, state, "--stack", "queue")
    stack = out["stacks"][0]
    assert stack["status"] == "CREATE_COMPLETE" and out["exitCode"] == 0
    url = stack["outputs"]["QueueURL"]
    # Nothing changed: diff is empty and a second deploy changes nothing.
    run("diff", str(template), "--stack", "queue", "--fail", state=state, check=0)
    assert deploy_json(template, state, "--stack", "queue")["stacks"][0]["unchanged"] is True
    # A parameter change: diff names the property, --fail exits 1, deploy updates in place.
    d = run("diff", str(template), "--stack", "queue", "--param", "DelaySeconds=9", "--fail", "--output", "json", state=state, check=1)
    changes = json.loads(d.stdout)["stacks"][0]["changes"]
    assert [(c["action"], c["logical_id"]) for c in changes] == [("update", "SQSQueue")]
    assert [(p["name"], p["old"], p["new"]) for p in changes[0]["properties"]] == [("DelaySeconds", "5", "9")]
    out = deploy_json(template, state, "--stack", "queue", "--param", "DelaySeconds=9")
    assert out["stacks"][0]["status"] == "UPDATE_COMPLETE"
    assert out["stacks"][0]["outputs"]["QueueURL"] == url
    server = served(state)
    try:
        attrs = server.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["DelaySeconds"])
        assert attrs["Attributes"]["DelaySeconds"] == "9"
        stacks = server.aws("cloudformation", "describe-stacks", "--stack-name", "queue")["Stacks"]
        assert stacks[0]["StackStatus"] == "UPDATE_COMPLETE"
        resources = server.aws("cloudformation", "list-stack-resources", "--stack-name", "queue")
        assert resources["StackResourceSummaries"][0]["PhysicalResourceId"] == url
        # The state directory is owned by the server meanwhile: a deploy says so.
        busy = run("deploy", str(template), "--stack", "queue", state=state, check=1)
        assert "in use by another cumulo process" in busy.stderr
    finally:
        server.stop()
    text = run("destroy", "--stack", "queue", state=state, check=0).stdout
    assert "DELETE_COMPLETE" in text
    server = served(state)
    try:
        assert server.client("sqs").list_queues().get("QueueUrls", []) == []
    finally:
        server.stop()


def test_progress_lines_as_the_cdk_shows_them(tmp_path):
    state = tmp_path / "state"
    proc = run("deploy", str(CORPUS / "SNS__SNSTopic.json"), "--stack", "topic", "--param", "SubscriptionEndPoint=a@example.com", "--param", "SubscriptionProtocol=email", state=state, check=0)
    lines = [l for l in proc.stdout.splitlines() if l.startswith("topic |")]
    assert any("CREATE_COMPLETE" in l and "AWS::SNS::Topic" in l for l in lines), proc.stdout
    first = lines[0].split(" | ")
    assert first[3].strip() == "CREATE_IN_PROGRESS" and first[4].strip() == "AWS::CloudFormation::Stack"
    assert "/" in first[1]


def test_replacement_from_create_only_and_no_phantom_changes(tmp_path):
    state = tmp_path / "state"
    tpl = write(tmp_path, "app.json", APP)
    first = deploy_json(tpl, state, "--stack", "app")["stacks"][0]
    assert first["status"] == "CREATE_COMPLETE"
    # Numbers vs strings, defaulted members and tag order are one shape: nothing to do.
    same = json.loads(json.dumps(APP))
    same["Resources"]["Queue"]["Properties"]["VisibilityTimeout"] = "30"
    same["Resources"]["Param"]["Properties"]["Tier"] = "Standard"
    same["Resources"]["Bucket"]["Properties"]["PublicAccessBlockConfiguration"]["IgnorePublicAcls"] = False
    same["Resources"]["Bucket"]["Properties"]["Tags"].reverse()
    same_tpl = write(tmp_path, "same.json", same)
    d = json.loads(run("diff", str(same_tpl), "--stack", "app", "--output", "json", state=state, check=0).stdout)
    assert d["stacks"][0]["changes"] == []
    # The template text changed, so the stack is updated (as AWS), but no resource is touched.
    again = deploy_json(same_tpl, state, "--stack", "app")["stacks"][0]
    assert again["status"] == "UPDATE_COMPLETE" and again["resourceEvents"] == 0
    run("drift", "--stack", "app", state=state, check=0)
    # A createOnly property (the parameter's Name) replaces.
    renamed = json.loads(json.dumps(APP))
    renamed["Resources"]["Param"]["Properties"]["Name"] = "/direct/renamed"
    renamed_tpl = write(tmp_path, "renamed.json", renamed)
    d = json.loads(run("diff", str(renamed_tpl), "--stack", "app", "--output", "json", state=state, check=0).stdout)
    change = d["stacks"][0]["changes"][0]
    assert (change["action"], change["logical_id"]) == ("replace", "Param")
    assert change["properties"][0]["requires_recreation"] == "Always"
    out = deploy_json(renamed_tpl, state, "--stack", "app")
    assert out["stacks"][0]["status"] == "UPDATE_COMPLETE"
    server = served(state)
    try:
        ssm = server.client("ssm")
        assert ssm.get_parameter(Name="/direct/renamed")["Parameter"]["Value"] == "v1"
        with pytest.raises(ssm.exceptions.ParameterNotFound):
            ssm.get_parameter(Name="/direct/app")
        bucket = first["outputs"]["BucketName"]
        tags = server.client("s3").get_bucket_tagging(Bucket=bucket)["TagSet"]
        assert sorted((t["Key"], t["Value"]) for t in tags if not t["Key"].startswith("aws:")) == [("a", "1"), ("b", "2")]
    finally:
        server.stop()


def test_drift_detect_revert_and_accept(tmp_path):
    state = tmp_path / "state"
    tpl = write(tmp_path, "app.json", APP)
    out = deploy_json(tpl, state, "--stack", "app")["stacks"][0]
    url, bucket = out["outputs"]["QueueUrl"], out["outputs"]["BucketName"]
    server = served(state)
    try:
        server.client("sqs").set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "99"})
        server.client("ssm").put_parameter(Name="/direct/app", Value="changed", Type="String", Overwrite=True)
        server.client("s3").put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    finally:
        server.stop()
    proc = run("drift", "--stack", "app", "--output", "json", state=state, check=1)
    report = {r["logical_id"]: r for r in json.loads(proc.stdout)["resources"]}
    assert report["Queue"]["status"] == "MODIFIED"
    assert [(d["path"], d["expected"], d["actual"]) for d in report["Queue"]["differences"]] == [("VisibilityTimeout", "30", "99")]
    assert report["Param"]["status"] == "MODIFIED"
    assert report["Bucket"]["status"] == "MODIFIED"
    for logical in ["Topic", "Sub", "QPolicy", "TPolicy", "BPolicy"]:
        assert report[logical]["status"] == "IN_SYNC", report[logical]
    run("drift", "--stack", "app", "--revert", state=state, check=0)
    run("drift", "--stack", "app", state=state, check=0)
    server = served(state)
    try:
        attrs = server.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
        assert attrs["Attributes"]["VisibilityTimeout"] == "30"
        assert server.client("ssm").get_parameter(Name="/direct/app")["Parameter"]["Value"] == "v1"
        assert server.client("s3").get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
        # Drift again, then accept it: the record takes the live value.
        server.client("sqs").set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "45"})
    finally:
        server.stop()
    run("drift", "--stack", "app", "--accept", "--resource", "Queue", state=state, check=0)
    run("drift", "--stack", "app", state=state, check=0)
    # The template still says 30: the next diff shows the way back.
    d = json.loads(run("diff", str(tpl), "--stack", "app", "--output", "json", state=state, check=0).stdout)
    props = d["stacks"][0]["changes"][0]["properties"]
    assert [(p["name"], p["old"], p["new"]) for p in props] == [("VisibilityTimeout", "45", "30")]
    # A resource deleted behind the stack's back is DELETED.
    server = served(state)
    try:
        server.client("sns").delete_topic(TopicArn=out["outputs"]["TopicArn"])
    finally:
        server.stop()
    report = {r["logical_id"]: r for r in json.loads(run("drift", "--stack", "app", "--output", "json", state=state, check=1).stdout)["resources"]}
    assert report["Topic"]["status"] == "DELETED"


def test_import_adopts_existing_resources(tmp_path):
    state = tmp_path / "state"
    server = served(state)
    try:
        url = server.client("sqs").create_queue(QueueName="adopted", Attributes={"DelaySeconds": "3"})["QueueUrl"]
        server.client("ssm").put_parameter(Name="/adopted", Value="x", Type="String")
    finally:
        server.stop()
    tpl = write(tmp_path, "adopt.json", {
        "Resources": {
            "Q": {"Type": "AWS::SQS::Queue", "DeletionPolicy": "Retain", "Properties": {"QueueName": "adopted", "DelaySeconds": 3}},
            "P": {"Type": "AWS::SSM::Parameter", "DeletionPolicy": "Retain", "Properties": {"Name": "/adopted", "Type": "String", "Value": "x"}},
        },
        "Outputs": {"Arn": {"Value": {"Fn::GetAtt": ["Q", "Arn"]}}, "Url": {"Value": {"Ref": "Q"}}, "Type": {"Value": {"Fn::GetAtt": ["P", "Type"]}}},
    })
    missing = run("import", str(tpl), "--stack", "adopt", "--resource", "Q=http://localhost:4566/000000000000/nope", "--resource", "P=/adopted", state=state, check=1)
    assert "do not exist" in missing.stderr
    run("import", str(tpl), "--stack", "adopt", "--resource", f"Q={url}", "--resource", "P=/adopted", state=state, check=0)
    server = served(state)
    try:
        stack = server.aws("cloudformation", "describe-stacks", "--stack-name", "adopt")["Stacks"][0]
        assert stack["StackStatus"] == "IMPORT_COMPLETE"
        outputs = {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}
        assert outputs == {"Arn": "arn:aws:sqs:us-east-1:000000000000:adopted", "Url": url, "Type": "String"}
    finally:
        server.stop()
    run("drift", "--stack", "adopt", state=state, check=0)
    assert deploy_json(tpl, state, "--stack", "adopt")["stacks"][0]["unchanged"] is True
    # Destroy honours the Retain policies: the adopted resources stay.
    run("destroy", "--stack", "adopt", state=state, check=0)
    server = served(state)
    try:
        assert server.client("sqs").get_queue_url(QueueName="adopted")["QueueUrl"].endswith("/000000000000/adopted")
    finally:
        server.stop()


BAD = {
    "Resources": {
        "Good": {"Type": "AWS::SQS::Queue"},
        "Bad": {"Type": "AWS::SQS::Queue", "DependsOn": "Good", "Properties": {"DelaySeconds": 99999}},
    }
}


def queue_count(state):
    server = served(state)
    try:
        return len(server.client("sqs").list_queues().get("QueueUrls", []))
    finally:
        server.stop()


def test_failed_deploys_leave_no_orphans(tmp_path):
    state = tmp_path / "state"
    bad = write(tmp_path, "bad.json", BAD)
    out = deploy_json(bad, state, "--stack", "app", check=1)
    assert out["stacks"][0]["status"] == "ROLLBACK_COMPLETE" and out["exitCode"] == 1
    assert queue_count(state) == 0
    # Without rollback the failure is partial (exit 2) and what was made stays recorded...
    out = deploy_json(bad, state, "--stack", "app", "--no-rollback", check=2)
    assert out["stacks"][0]["status"] == "CREATE_FAILED"
    assert queue_count(state) == 1
    # ...until the next deploy, which removes it with the failed stack and starts again.
    good = json.loads(json.dumps(BAD))
    good["Resources"]["Bad"]["Properties"]["DelaySeconds"] = 1
    out = deploy_json(write(tmp_path, "good.json", good), state, "--stack", "app")
    assert out["stacks"][0]["status"] == "CREATE_COMPLETE"
    assert queue_count(state) == 2


def test_lock_refuses_a_second_deploy_until_released(tmp_path):
    state = tmp_path / "state"
    tpl = write(tmp_path, "q.json", {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}})
    deploy_json(tpl, state, "--stack", "app")
    # A deploy that died holding the lock (written as it would have left it).
    db = sqlite3.connect(state / "cumulo.db")
    db.execute("INSERT INTO direct_locks VALUES ('us-east-1', 'app', 'dead-deploy (pid 1 on ci)', 0, 99999999999999)")
    db.commit()
    db.close()
    refused = run("deploy", str(tpl), "--stack", "app", state=state, check=1)
    assert "locked by another deploy: dead-deploy" in refused.stderr
    assert "cumulo force-unlock app" in refused.stderr
    # Other stacks are not affected.
    deploy_json(tpl, state, "--stack", "other")
    assert "lock dropped" in run("force-unlock", "app", state=state, check=0).stdout
    assert deploy_json(tpl, state, "--stack", "app")["stacks"][0]["unchanged"] is True


def test_newer_state_is_refused(tmp_path):
    state = tmp_path / "state"
    tpl = write(tmp_path, "q.json", {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}})
    deploy_json(tpl, state, "--stack", "app")
    db = sqlite3.connect(state / "cumulo.db")
    db.execute("UPDATE schema_versions SET version = 99 WHERE owner = 'direct'")
    db.commit()
    db.close()
    proc = run("deploy", str(tpl), "--stack", "app", state=state, check=1)
    assert "newer than this cumulo knows" in proc.stderr


def synth_cdk_app():
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    if not (CDK_APP / "node_modules" / "aws-cdk-lib").exists():
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=CDK_APP, check=True, capture_output=True, timeout=600)
    subprocess.run(["npx", "cdk", "synth", "--quiet"], cwd=CDK_APP, check=True, capture_output=True, timeout=300)
    return CDK_APP / "cdk.out"


def test_cdk_app_with_assets_and_nested_stack(tmp_path):
    out_dir = synth_cdk_app()
    state = tmp_path / "state"
    out = deploy_json(out_dir, state)
    stack = out["stacks"][0]
    assert stack["stack"] == "CdkApp" and stack["status"] == "CREATE_COMPLETE", out
    outputs = stack["outputs"]
    run("diff", str(out_dir), "--fail", state=state, check=0)
    server = served(state)
    try:
        s3 = server.client("s3")
        body = s3.get_object(Bucket=outputs["AssetBucket"], Key=outputs["AssetKey"])["Body"].read()
        names = zipfile.ZipFile(io.BytesIO(body)).namelist()
        assert sorted(names) == ["app.js", "index.html"]
        assert server.client("ssm").get_parameter(Name="/cdkapp/asset-key")["Parameter"]["Value"] == outputs["AssetKey"]
        sqs = server.client("sqs")
        inner = sqs.get_queue_url(QueueName=outputs["InnerQueueName"])["QueueUrl"]
        assert sqs.get_queue_attributes(QueueUrl=inner, AttributeNames=["VisibilityTimeout"])["Attributes"]["VisibilityTimeout"] == "45"
        assert server.client("s3").get_bucket_versioning(Bucket=outputs["BucketName"])["Status"] == "Enabled"
        stacks = server.aws("cloudformation", "list-stacks", "--stack-status-filter", "CREATE_COMPLETE")["StackSummaries"]
        assert len(stacks) == 2  # the app and its nested stack
    finally:
        server.stop()
    run("drift", "--stack", "CdkApp", state=state, check=0)
    run("destroy", str(out_dir), state=state, check=0)


# Answers through its ResponseURL (cfnresponse's PUT) and makes an SDK call of its own on every
# request, so both reach the deploy's in-process gateway: it writes the request type to SSM
# and removes the parameter on Delete.
PY_CFNRESPONSE = """
import boto3, cfnresponse
def handler(event, context):
    ssm = boto3.client('ssm')
    name = event['ResourceProperties']['Param']
    if event['RequestType'] == 'Delete':
        ssm.delete_parameter(Name=name)
    else:
        ssm.put_parameter(Name=name, Value=event['RequestType'], Type='String', Overwrite=True)
    greeting = event['ResourceProperties']['Greeting']
    cfnresponse.send(event, context, cfnresponse.SUCCESS, {'Echo': greeting + '!'}, 'py-' + name)
"""

# The inline Node.js module AWS provides.
NODE_CFN_RESPONSE = """
const response = require('cfn-response');
exports.handler = (event, context) => {
  response.send(event, context, response.SUCCESS, { Kind: 'node-' + event.RequestType }, 'node-thing');
};
"""


def custom_stack(greeting):
    def function(runtime, code):
        return {
            "Type": "AWS::Lambda::Function",
            "Properties": {"Runtime": runtime, "Handler": "index.handler", "Timeout": 30,
                           "Role": "arn:aws:iam::000000000000:role/lambda-role", "Code": {"ZipFile": code}},
        }
    return {
        "Resources": {
            "PyFn": function("python3.11", PY_CFNRESPONSE),
            "NodeFn": function("nodejs20.x", NODE_CFN_RESPONSE),
            "Py": {"Type": "Custom::Py", "Properties": {"ServiceToken": {"Fn::GetAtt": ["PyFn", "Arn"]}, "Param": "/direct/custom", "Greeting": greeting}},
            "Node": {"Type": "AWS::CloudFormation::CustomResource", "Properties": {"ServiceToken": {"Fn::GetAtt": ["NodeFn", "Arn"]}, "Greeting": greeting}},
        },
        "Outputs": {
            "PyRef": {"Value": {"Ref": "Py"}},
            "Echo": {"Value": {"Fn::GetAtt": ["Py", "Echo"]}},
            "NodeRef": {"Value": {"Ref": "Node"}},
            "Kind": {"Value": {"Fn::GetAtt": ["Node", "Kind"]}},
        },
    }


def ssm_value(state, name):
    server = served(state)
    try:
        ssm = server.client("ssm")
        try:
            return ssm.get_parameter(Name=name)["Parameter"]["Value"]
        except ssm.exceptions.ParameterNotFound:
            return None
    finally:
        server.stop()


def test_custom_resources_answering_through_the_response_url(tmp_path):
    state = tmp_path / "state"
    tpl = write(tmp_path, "custom.json", custom_stack("hi"))
    out = deploy_json(tpl, state, "--stack", "custom")["stacks"][0]
    assert out["status"] == "CREATE_COMPLETE", out
    assert out["outputs"] == {"PyRef": "py-/direct/custom", "Echo": "hi!", "NodeRef": "node-thing", "Kind": "node-Create"}
    # The function's own SDK call reached the deploy's services.
    assert ssm_value(state, "/direct/custom") == "Create"
    out = deploy_json(write(tmp_path, "custom2.json", custom_stack("hello")), state, "--stack", "custom")["stacks"][0]
    assert out["status"] == "UPDATE_COMPLETE", out
    assert out["outputs"]["Echo"] == "hello!" and out["outputs"]["Kind"] == "node-Update"
    assert ssm_value(state, "/direct/custom") == "Update"
    run("destroy", "--stack", "custom", state=state, check=0)
    # Delete reached the handler too: it removed its parameter.
    assert ssm_value(state, "/direct/custom") is None


# PUTs a SUCCESS signal to the handle URL it is given (as cfn-signal would), then answers.
PY_SIGNALLER = """
import json, urllib.request, cfnresponse
def handler(event, context):
    if event['RequestType'] == 'Create':
        url = event['ResourceProperties']['Url']
        body = json.dumps({'Status': 'SUCCESS', 'Reason': 'r', 'UniqueId': 'fn', 'Data': 'signalled'})
        req = urllib.request.Request(url, data=body.encode(), method='PUT', headers={'Content-Type': ''})
        urllib.request.urlopen(req, timeout=10).read()
    cfnresponse.send(event, context, cfnresponse.SUCCESS, {}, 'signaller')
"""


def test_a_wait_condition_handle_url_reaches_the_deploy(tmp_path):
    state = tmp_path / "state"
    tpl = write(tmp_path, "wait.json", {
        "Resources": {
            "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
            "Fn": {"Type": "AWS::Lambda::Function", "Properties": {
                "Runtime": "python3.11", "Handler": "index.handler", "Timeout": 30,
                "Role": "arn:aws:iam::000000000000:role/lambda-role", "Code": {"ZipFile": PY_SIGNALLER}}},
            "Signaller": {"Type": "Custom::Signaller", "Properties": {
                "ServiceToken": {"Fn::GetAtt": ["Fn", "Arn"]}, "Url": {"Ref": "Handle"}}},
            "Condition": {"Type": "AWS::CloudFormation::WaitCondition", "Properties": {
                "Handle": {"Ref": "Handle"}, "Timeout": "60"}},
        },
        "Outputs": {"Url": {"Value": {"Ref": "Handle"}},
                    "Data": {"Value": {"Fn::GetAtt": ["Condition", "Data"]}}},
    })
    out = deploy_json(tpl, state, "--stack", "waits")["stacks"][0]
    assert out["status"] == "CREATE_COMPLETE", out
    # The URL names the deploy's own loopback listener, not a server that is not running.
    assert out["outputs"]["Url"].startswith("http://127.0.0.1:"), out["outputs"]["Url"]
    assert ":4566/" not in out["outputs"]["Url"]
    assert json.loads(out["outputs"]["Data"]) == {"fn": "signalled"}
    run("destroy", "--stack", "waits", state=state, check=0)


def deploy_killed_after_creating(template, state, logical, *extra):
    """Runs `cumulo deploy` with the test-only hook that hangs it right after `logical`'s
    provider create returned (before its state is written), then kill -9s it there."""
    proc = subprocess.Popen(
        [str(BIN), "deploy", str(template), "--state-dir", str(state), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "AWS_REGION": "us-east-1", "CUMULO_TEST_HANG_AFTER_CREATE": logical},
    )
    try:
        for line in proc.stderr:
            if f"test hook: {logical} created" in line:
                break
        else:
            raise AssertionError(f"deploy ended (exit {proc.wait()}) without reaching the hook")
        proc.kill()
    finally:
        proc.wait()
        proc.stderr.close()
    assert proc.returncode == -9
    # The dead deploy's lock stays (as after any crash) until dropped.
    stack = extra[extra.index("--stack") + 1]
    run("force-unlock", stack, state=state, check=0)


def queue_names(state):
    server = served(state)
    try:
        return sorted(u.rsplit("/", 1)[1] for u in server.client("sqs").list_queues().get("QueueUrls", []))
    finally:
        server.stop()


def name_of(url):
    return url.rsplit("/", 1)[1]


def journal_left(state):
    db = sqlite3.connect(state / "cumulo.db")
    try:
        return [b for (b,) in db.execute("SELECT body FROM cfn_resources") if '"pending"' in b]
    finally:
        db.close()


TWO_QUEUES = {
    "Resources": {
        "A": {"Type": "AWS::SQS::Queue"},
        "B": {"Type": "AWS::SQS::Queue", "DependsOn": "A"},
    },
    "Outputs": {"A": {"Value": {"Ref": "A"}}, "B": {"Value": {"Ref": "B"}}},
}


def test_a_create_killed_after_the_service_call_is_found_and_removed(tmp_path):
    state = tmp_path / "state"
    tpl = write(tmp_path, "two.json", TWO_QUEUES)
    deploy_killed_after_creating(tpl, state, "B", "--stack", "app")
    # The service holds B, which the stack never recorded; the journal names it.
    orphaned = queue_names(state)
    assert len(orphaned) == 2
    assert len(journal_left(state)) == 1
    out = deploy_json(tpl, state, "--stack", "app")["stacks"][0]
    assert out["status"] == "CREATE_COMPLETE", out
    # Exactly one queue per resource: the orphan was deleted, and the state is clean.
    a, b = name_of(out["outputs"]["A"]), name_of(out["outputs"]["B"])
    assert queue_names(state) == sorted([a, b])
    assert b not in orphaned
    assert journal_left(state) == []


def test_an_update_killed_after_creating_a_named_resource_is_cleaned_by_destroy(tmp_path):
    state = tmp_path / "state"
    one = {"Resources": {"A": {"Type": "AWS::SQS::Queue"}}, "Outputs": {"A": {"Value": {"Ref": "A"}}}}
    first = deploy_json(write(tmp_path, "one.json", one), state, "--stack", "app")["stacks"][0]
    assert first["status"] == "CREATE_COMPLETE"
    grown = json.loads(json.dumps(one))
    grown["Resources"]["Named"] = {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "direct-named"}}
    grown_tpl = write(tmp_path, "grown.json", grown)
    deploy_killed_after_creating(grown_tpl, state, "Named", "--stack", "app")
    assert "direct-named" in queue_names(state)
    # The next deploy creates the named queue again (the orphan is deleted first, so the
    # name is free) and leaves one of it.
    out = deploy_json(grown_tpl, state, "--stack", "app")["stacks"][0]
    assert out["status"] == "UPDATE_COMPLETE", out
    assert queue_names(state) == sorted([name_of(first["outputs"]["A"]), "direct-named"])
    assert journal_left(state) == []
    # Killed again, this time destroy finds the orphan.
    three = json.loads(json.dumps(grown))
    three["Resources"]["Other"] = {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "direct-other"}}
    deploy_killed_after_creating(write(tmp_path, "three.json", three), state, "Other", "--stack", "app")
    assert len(queue_names(state)) == 3
    run("destroy", "--stack", "app", state=state, check=0)
    assert queue_names(state) == []
