"""The real AWS CDK CLI (the newest release, pinned in the app's package.json) against `cumulo
serve`: `cdk bootstrap`, `cdk deploy`, `cdk diff` of one changed property, a redeploy with it (the
CLI's default change-set method, nested change sets included), `cdk destroy` — of tests/cdk-serve-app
(S3, SQS, SNS, SSM, IAM, Lambda with inline and asset code, custom resources through the CDK's
Provider framework and AwsCustomResource, a nested stack) — once with
AWS_ENDPOINT_URL=http://127.0.0.1:PORT and once with http://localhost:PORT. Every step is checked through the services' own APIs with boto3.

With `localhost` the AWS SDK for JavaScript v3 addresses S3 virtual-hosted
(`<bucket>.localhost:PORT`); cdk_cli.py says how machines that do not resolve `*.localhost` are
served.
"""
import json

import pytest

from cdk_cli import ACCOUNT_ENV, QUALIFIER, Cdk, check_bootstrap, ensure_app, gone, stack_outputs
from conftest import CumuloServer

STACK = "CdkServe"


@pytest.fixture(scope="module")
def app():
    return ensure_app()


@pytest.fixture(scope="module")
def sdk_dir(tmp_path_factory):
    """One SDK directory for both lifecycles: the first installs the @aws-sdk clients the
    functions require on first use, the second finds them there."""
    return tmp_path_factory.mktemp("node-sdk")


def outputs(cfn):
    return stack_outputs(cfn, STACK)


def invoke(lam, name, payload=None):
    r = lam.invoke(FunctionName=name, Payload=json.dumps(payload or {}).encode())
    assert "FunctionError" not in r, r["Payload"].read()
    return json.loads(r["Payload"].read())


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
