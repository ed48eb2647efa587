"""The real AWS CDK CLI (the newest release, pinned in the app's package.json) against `cumulo
serve`: `cdk bootstrap`, `cdk deploy`, `cdk diff` of one changed property, a redeploy with it (the
CLI's default change-set method, nested change sets included), `cdk destroy` — of tests/cdk-serve-app
(S3, SQS, SNS, SSM, IAM, Lambda with inline and asset code, custom resources through the CDK's
Provider framework and AwsCustomResource, a nested stack) — once with
AWS_ENDPOINT_URL=http://127.0.0.1:PORT and once with http://localhost:PORT. Every step is checked through the services' own APIs with boto3.

With `localhost` the AWS SDK for JavaScript v3 addresses S3 virtual-hosted
(`<bucket>.localhost:PORT`). Machines whose resolver answers `*.localhost` (RFC 6761; systemd-
resolved does) need nothing else; where Node cannot resolve it the lifecycle also sets AWS's
standard per-service variable AWS_ENDPOINT_URL_S3 to the loopback address (see README), and
says so in the test output: cumulo cannot answer a DNS lookup the CLI's machine makes.
"""
import json
import os
import shutil
import subprocess

import pytest
from botocore.exceptions import ClientError

from conftest import ROOT, CumuloServer

APP = ROOT / "tests" / "cdk-serve-app"
STACK = "CdkServe"
ACCOUNT_ENV = "aws://000000000000/us-east-1"
QUALIFIER = "hnb659fds"


@pytest.fixture(scope="module")
def app():
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    if not (APP / "node_modules" / "aws-cdk-lib").exists():
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund"], cwd=APP, check=True, capture_output=True, timeout=900
        )
    return APP


@pytest.fixture(scope="module")
def sdk_dir(tmp_path_factory):
    """One SDK directory for both lifecycles: the first installs the @aws-sdk clients the
    functions require on first use, the second finds them there."""
    return tmp_path_factory.mktemp("node-sdk")


def localhost_subdomains_resolve():
    probe = "require('dns').lookup('cumulo-probe.localhost', (e) => process.exit(e ? 1 : 0))"
    return subprocess.run(["node", "-e", probe], capture_output=True, timeout=30).returncode == 0


class Cdk:
    """Runs the app's pinned `cdk` CLI against one server with one endpoint form."""

    def __init__(self, server, host, out_dir):
        self.server = server
        self.out_dir = out_dir
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        env.update(
            AWS_ENDPOINT_URL=f"http://{host}:{server.port}",
            AWS_ACCESS_KEY_ID="test",
            AWS_SECRET_ACCESS_KEY="test",
            AWS_REGION="us-east-1",
            AWS_DEFAULT_REGION="us-east-1",
            CDK_DISABLE_VERSION_CHECK="1",
        )
        if host == "localhost" and not localhost_subdomains_resolve():
            print("this machine does not resolve *.localhost: S3 through AWS_ENDPOINT_URL_S3=127.0.0.1")
            env["AWS_ENDPOINT_URL_S3"] = f"http://127.0.0.1:{server.port}"
        self.env = env

    def __call__(self, *args):
        proc = subprocess.run(
            ["npx", "cdk", *args, "--no-notices", "--output", str(self.out_dir)],
            cwd=APP,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert proc.returncode == 0, f"cdk {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout + proc.stderr


def outputs(cfn):
    stack = cfn.describe_stacks(StackName=STACK)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def invoke(lam, name, payload=None):
    r = lam.invoke(FunctionName=name, Payload=json.dumps(payload or {}).encode())
    assert "FunctionError" not in r, r["Payload"].read()
    return json.loads(r["Payload"].read())


def gone(call, code):
    with pytest.raises(ClientError) as e:
        call()
    assert e.value.response["Error"]["Code"] == code
    return e.value


def check_bootstrap(server):
    cfn = server.client("cloudformation")
    toolkit = cfn.describe_stacks(StackName="CDKToolkit")["Stacks"][0]
    assert toolkit["StackStatus"] == "CREATE_COMPLETE"
    boot = {o["OutputKey"]: o["OutputValue"] for o in toolkit["Outputs"]}
    bucket = f"cdk-{QUALIFIER}-assets-000000000000-us-east-1"
    assert boot["BucketName"] == bucket
    server.client("s3").head_bucket(Bucket=bucket)
    repo = f"cdk-{QUALIFIER}-container-assets-000000000000-us-east-1"
    assert server.client("ecr").describe_repositories(repositoryNames=[repo])["repositories"]
    version = server.client("ssm").get_parameter(Name=f"/cdk-bootstrap/{QUALIFIER}/version")["Parameter"]
    assert int(version["Value"]) == int(boot["BootstrapVersion"])
    iam = server.client("iam")
    for role in ("deploy-role", "file-publishing-role", "cfn-exec-role", "lookup-role"):
        iam.get_role(RoleName=f"cdk-{QUALIFIER}-{role}-000000000000-us-east-1")
    return bucket


def check_deployed(server, assets_bucket, greeting):
    cfn, lam = server.client("cloudformation"), server.client("lambda")
    out = outputs(cfn)
    # S3: the app's bucket, versioned; the assets (two zips, the templates) in the bootstrap bucket.
    s3 = server.client("s3")
    assert s3.get_bucket_versioning(Bucket=out["BucketName"])["Status"] == "Enabled"
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=assets_bucket)["Contents"]]
    assert sum(k.endswith(".zip") for k in keys) >= 2, keys
    # AwsCustomResource: the CDK's own function called S3 through the SDK v3.
    marker = s3.get_object(Bucket=out["MarkerBucket"], Key="marker.txt")["Body"].read()
    assert marker == b"written by AwsCustomResource"
    # SQS and SNS: the topic delivers raw messages to the queue.
    sqs, sns = server.client("sqs"), server.client("sns")
    attrs = sqs.get_queue_attributes(QueueUrl=out["QueueUrl"], AttributeNames=["All"])["Attributes"]
    assert attrs["VisibilityTimeout"] == "60"
    subs = sns.list_subscriptions_by_topic(TopicArn=out["TopicArn"])["Subscriptions"]
    assert [s["Endpoint"] for s in subs] == [attrs["QueueArn"]]
    sns.publish(TopicArn=out["TopicArn"], Message="through the topic")
    got = sqs.receive_message(QueueUrl=out["QueueUrl"], WaitTimeSeconds=10)["Messages"]
    assert got[0]["Body"] == "through the topic"
    # SSM, including the nested stack's parameter and the one the custom resource wrote.
    ssm = server.client("ssm")
    assert ssm.get_parameter(Name=out["ParamName"])["Parameter"]["Value"] == "configured"
    assert ssm.get_parameter(Name=out["InnerParamName"])["Parameter"]["Value"] == "from the nested stack"
    written = ssm.get_parameter(Name="/cdkserve/written")["Parameter"]
    assert written["Value"] == "by the custom resource"
    assert out["Written"] == "/cdkserve/written=by the custom resource"
    # The nested stack is a stack of its own.
    nested = [
        r
        for r in cfn.list_stack_resources(StackName=STACK)["StackResourceSummaries"]
        if r["ResourceType"] == "AWS::CloudFormation::Stack"
    ]
    assert len(nested) == 1
    inner = cfn.describe_stacks(StackName=nested[0]["PhysicalResourceId"])["Stacks"][0]
    assert inner["StackStatus"] in ("CREATE_COMPLETE", "UPDATE_COMPLETE")
    # IAM: the inline function's role and the grant (an inline policy on it).
    iam = server.client("iam")
    role_name = out["InlineRoleArn"].rsplit("/", 1)[-1]
    role = iam.get_role(RoleName=role_name)["Role"]
    assert "lambda.amazonaws.com" in json.dumps(role["AssumeRolePolicyDocument"])
    [policy_name] = iam.list_role_policies(RoleName=role_name)["PolicyNames"]
    doc = json.dumps(iam.get_role_policy(RoleName=role_name, PolicyName=policy_name)["PolicyDocument"])
    assert "s3:GetObject*" in doc and "sqs:SendMessage" in doc
    # Lambda: both functions run and answer.
    inline = lam.get_function_configuration(FunctionName=out["InlineName"])
    assert inline["Role"] == out["InlineRoleArn"] and inline["State"] == "Active"
    assert invoke(lam, out["InlineName"]) == {"from": "inline", "greeting": greeting, "bucket": out["BucketName"]}
    assert invoke(lam, out["AssetName"], {"echo": 7}) == {"from": "asset", "motto": "packaged with the asset", "echo": 7}
    return out


def run_lifecycle(host, tmp_path, sdk_dir):
    server = CumuloServer(data_dir=tmp_path / "data", env={"CUMULO_NODE_SDK_DIR": str(sdk_dir)}).start()
    try:
        cdk = Cdk(server, host, tmp_path / "cdk.out")
        cfn = server.client("cloudformation")

        cdk("bootstrap", ACCOUNT_ENV)
        assets_bucket = check_bootstrap(server)

        printed = cdk("deploy", "--require-approval", "never")
        stack = cfn.describe_stacks(StackName=STACK)["Stacks"][0]
        assert stack["StackStatus"] == "CREATE_COMPLETE"
        # The CLI assumed the bootstrap deploy role: STS refuses roles IAM does not have, and the
        # CLI says when it proceeds without one.
        assert "could not be used to assume" not in printed
        # ... and handed CloudFormation the bootstrap execution role, which the stack keeps.
        assert stack["RoleARN"].endswith(f":role/cdk-{QUALIFIER}-cfn-exec-role-000000000000-us-east-1")
        first = check_deployed(server, assets_bucket, "hello")
        events_before = {e["EventId"] for e in cfn.describe_stack_events(StackName=STACK)["StackEvents"]}

        # `cdk diff` creates a read-only change set (with IncludeNestedStacks, as every current
        # CLI change set), reads its changes and deletes it; it falls back to a template-only
        # diff, saying so, when any of that fails.
        printed = cdk("diff", "-c", "greeting=bonjour")
        assert "Could not create a change set" not in printed, printed
        assert "GREETING" in printed and "bonjour" in printed, printed
        assert not [
            s for s in cfn.list_change_sets(StackName=STACK)["Summaries"] if s["ChangeSetName"].startswith("cdk-diff")
        ]

        cdk("deploy", "--require-approval", "never", "-c", "greeting=bonjour")
        stack = cfn.describe_stacks(StackName=STACK)["Stacks"][0]
        assert stack["StackStatus"] == "UPDATE_COMPLETE"
        second = check_deployed(server, assets_bucket, "bonjour")
        assert second == first  # nothing replaced: same names, same ARNs
        # The change set the CLI made and executed, and what it changed: the function, in
        # place (plus the nested stack, which CloudFormation updates with its parent).
        sets = cfn.list_change_sets(StackName=STACK)["Summaries"]
        assert any(s["ExecutionStatus"] == "EXECUTE_COMPLETE" and s["IncludeNestedStacks"] for s in sets), sets
        new_events = [
            e for e in cfn.describe_stack_events(StackName=STACK)["StackEvents"] if e["EventId"] not in events_before
        ]
        changed = {e["LogicalResourceId"] for e in new_events if e["LogicalResourceId"] != STACK}
        statuses = {e["ResourceStatus"] for e in new_events if e["LogicalResourceId"] != STACK}
        assert {c.split("Nested")[0] for c in changed} == {"Inline6CF80F9D", "Inner"}, changed
        assert statuses == {"UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"}, statuses
        # The custom resource was not sent an Update: its parameter is the one Create wrote.
        assert server.client("ssm").get_parameter(Name="/cdkserve/written")["Parameter"]["Version"] == 1

        cdk("destroy", "--force")
        gone(lambda: cfn.describe_stacks(StackName=STACK), "ValidationError")
        lam, ssm, iam = server.client("lambda"), server.client("ssm"), server.client("iam")
        for name in (first["InlineName"], first["AssetName"]):
            gone(lambda n=name: lam.get_function(FunctionName=n), "ResourceNotFoundException")
        # The custom resource was sent Delete: its handler removed what it wrote.
        for param in ("/cdkserve/setting", "/cdkserve/inner", "/cdkserve/written"):
            gone(lambda p=param: ssm.get_parameter(Name=p), "ParameterNotFound")
        gone(lambda: server.client("sqs").get_queue_attributes(QueueUrl=first["QueueUrl"]), "AWS.SimpleQueueService.NonExistentQueue")
        gone(lambda: server.client("sns").get_topic_attributes(TopicArn=first["TopicArn"]), "NotFound")
        # Both buckets went; the marker bucket could only because AwsCustomResource's Delete
        # removed the object it had written.
        for bucket in (first["BucketName"], first["MarkerBucket"]):
            gone(lambda b=bucket: server.client("s3").head_bucket(Bucket=b), "404")
        gone(lambda: iam.get_role(RoleName=first["InlineRoleArn"].rsplit("/", 1)[-1]), "NoSuchEntity")
        # The bootstrap stack stays.
        assert cfn.describe_stacks(StackName="CDKToolkit")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
    finally:
        server.stop()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_cdk_bootstrap_deploy_redeploy_destroy(host, app, tmp_path, sdk_dir):
    run_lifecycle(host, tmp_path, sdk_dir)
