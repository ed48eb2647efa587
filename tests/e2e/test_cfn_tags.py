"""The tags CloudFormation puts on what it creates, end to end: stack-level tags (`aws
cloudformation deploy --tags`, `cumulo deploy --tag`) reach every resource whose type takes tags,
CloudFormation's own `aws:cloudformation:*` tags go only where AWS puts them (the registry
schemas' `cloudFormationSystemTags`), each seen through the service's own tag API; new stack
tags reach the resources on update; users cannot set or remove the system tags."""
import json
import uuid

import botocore.exceptions
import pytest

from conftest import CumuloServer
from test_direct import run

SYSTEM_KEYS = {"aws:cloudformation:stack-name", "aws:cloudformation:stack-id", "aws:cloudformation:logical-id"}
# Types AWS adds the system tags to, and types it gives stack tags only.
WITH_SYSTEM_TAGS = {"Bucket", "Topic", "Param", "Logs", "Secret", "Function", "Repo", "Rule", "Bus"}
STACK_TAGS_ONLY = {"Queue", "Table", "Key", "Role"}


def template():
    assume = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    return {
        "Resources": {
            # A resource's own tag wins over the stack tag of the same key.
            "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"Tags": [{"Key": "team", "Value": "bucket-team"}]}},
            "Queue": {"Type": "AWS::SQS::Queue"},
            "Topic": {"Type": "AWS::SNS::Topic"},
            "Param": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": "v"}},
            "Logs": {"Type": "AWS::Logs::LogGroup"},
            "Secret": {"Type": "AWS::SecretsManager::Secret", "Properties": {"SecretString": "s"}},
            "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": assume}},
            "Function": {"Type": "AWS::Lambda::Function", "Properties": {
                "Runtime": "python3.11", "Handler": "index.handler", "Role": {"Fn::GetAtt": ["Role", "Arn"]},
                "Code": {"ZipFile": "def handler(e, c):\n    return e\n"}}},
            "Table": {"Type": "AWS::DynamoDB::Table", "Properties": {
                "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}]}},
            "Key": {"Type": "AWS::KMS::Key"},
            "Repo": {"Type": "AWS::ECR::Repository"},
            "Bus": {"Type": "AWS::Events::EventBus", "Properties": {"Name": {"Fn::Sub": "${AWS::StackName}-bus"}}},
            "Rule": {"Type": "AWS::Events::Rule", "Properties": {"ScheduleExpression": "rate(1 day)", "State": "DISABLED"}},
        },
        "Outputs": {
            "Bucket": {"Value": {"Ref": "Bucket"}},
            "Queue": {"Value": {"Ref": "Queue"}},
            "Topic": {"Value": {"Ref": "Topic"}},
            "Param": {"Value": {"Ref": "Param"}},
            "Logs": {"Value": {"Ref": "Logs"}},
            "Secret": {"Value": {"Ref": "Secret"}},
            "Role": {"Value": {"Ref": "Role"}},
            "Function": {"Value": {"Fn::GetAtt": ["Function", "Arn"]}},
            "Table": {"Value": {"Fn::GetAtt": ["Table", "Arn"]}},
            "Key": {"Value": {"Ref": "Key"}},
            "Repo": {"Value": {"Fn::GetAtt": ["Repo", "Arn"]}},
            "Bus": {"Value": {"Fn::GetAtt": ["Bus", "Arn"]}},
            "Rule": {"Value": {"Fn::GetAtt": ["Rule", "Arn"]}},
        },
    }


def pairs(items, key="Key", value="Value"):
    return {t[key]: t[value] for t in items}


def live_tags(server, out):
    """Every resource's tags, read through its own service's tag API, by logical id."""
    c = server.client
    logs_arn = f"arn:aws:logs:us-east-1:000000000000:log-group:{out['Logs']}"
    return {
        "Bucket": pairs(c("s3").get_bucket_tagging(Bucket=out["Bucket"])["TagSet"]),
        "Queue": c("sqs").list_queue_tags(QueueUrl=out["Queue"]).get("Tags", {}),
        "Topic": pairs(c("sns").list_tags_for_resource(ResourceArn=out["Topic"])["Tags"]),
        "Param": pairs(c("ssm").list_tags_for_resource(ResourceType="Parameter", ResourceId=out["Param"])["TagList"]),
        "Logs": c("logs").list_tags_for_resource(resourceArn=logs_arn)["tags"],
        "Secret": pairs(c("secretsmanager").describe_secret(SecretId=out["Secret"]).get("Tags", [])),
        "Role": pairs(c("iam").list_role_tags(RoleName=out["Role"])["Tags"]),
        "Function": c("lambda").list_tags(Resource=out["Function"])["Tags"],
        "Table": pairs(c("dynamodb").list_tags_of_resource(ResourceArn=out["Table"])["Tags"]),
        "Key": pairs(c("kms").list_resource_tags(KeyId=out["Key"])["Tags"], "TagKey", "TagValue"),
        "Repo": pairs(c("ecr").list_tags_for_resource(resourceArn=out["Repo"])["tags"]),
        "Bus": pairs(c("events").list_tags_for_resource(ResourceARN=out["Bus"])["Tags"]),
        "Rule": pairs(c("events").list_tags_for_resource(ResourceARN=out["Rule"])["Tags"]),
    }


def check(tags, stack_name, stack_id, stack_tags):
    assert set(tags) == WITH_SYSTEM_TAGS | STACK_TAGS_ONLY
    for logical, t in tags.items():
        user = {k: v for k, v in t.items() if not k.startswith("aws:")}
        expected = dict(stack_tags, **({"team": "bucket-team"} if logical == "Bucket" else {}))
        assert user == expected, logical
        system = {k: v for k, v in t.items() if k.startswith("aws:")}
        if logical in WITH_SYSTEM_TAGS:
            assert system == {
                "aws:cloudformation:stack-name": stack_name,
                "aws:cloudformation:stack-id": stack_id,
                "aws:cloudformation:logical-id": logical,
            }, logical
        else:
            assert system == {}, logical


def stack_outputs(server, name):
    s = server.client("cloudformation").describe_stacks(StackName=name)["Stacks"][0]
    return s["StackId"], {o["OutputKey"]: o["OutputValue"] for o in s["Outputs"]}


def test_stack_tags_and_system_tags_through_each_service_and_on_update(cumulo, tmp_path):
    name = f"tags-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(template()))
    deploy = ["cloudformation", "deploy", "--stack-name", name, "--template-file", str(path),
              "--capabilities", "CAPABILITY_IAM"]
    cumulo.aws(*deploy, "--tags", "team=core", "env=dev")
    stack_id, out = stack_outputs(cumulo, name)
    check(live_tags(cumulo, out), name, stack_id, {"team": "core", "env": "dev"})

    # New stack tags, the template unchanged: every taggable resource follows, `env` goes.
    cumulo.aws(*deploy, "--tags", "team=platform", "cost=42")
    assert stack_outputs(cumulo, name)[1] == out
    check(live_tags(cumulo, out), name, stack_id, {"team": "platform", "cost": "42"})
    events = cumulo.client("cloudformation").describe_stack_events(StackName=name)["StackEvents"]
    updated = {e["LogicalResourceId"] for e in events if e["ResourceStatus"] == "UPDATE_COMPLETE"}
    assert WITH_SYSTEM_TAGS | STACK_TAGS_ONLY <= updated

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", name)
    cumulo.aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", name)


def test_users_cannot_set_or_remove_system_tags(cumulo, tmp_path):
    name = f"systags-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "t.json"
    path.write_text(json.dumps({
        "Resources": {"Bucket": {"Type": "AWS::S3::Bucket"}, "Topic": {"Type": "AWS::SNS::Topic"}},
        "Outputs": {"Bucket": {"Value": {"Ref": "Bucket"}}, "Topic": {"Value": {"Ref": "Topic"}}},
    }))
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path))
    _, out = stack_outputs(cumulo, name)
    s3 = cumulo.client("s3")
    bucket = out["Bucket"]
    system = s3.get_bucket_tagging(Bucket=bucket)["TagSet"]
    assert {t["Key"] for t in system} == SYSTEM_KEYS

    # PutBucketTagging replaces the set: leaving the system tags out is refused, as on AWS.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": "a", "Value": "1"}]})
    assert e.value.response["Error"]["Code"] == "InvalidTag"
    assert e.value.response["Error"]["Message"] == "System Tags cannot be removed by requester"
    changed = [dict(t, Value="other") if t["Key"] == "aws:cloudformation:logical-id" else t for t in system]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": changed})
    assert e.value.response["Error"]["Message"] == "System tags cannot be added/updated by requester"
    # Sent back unchanged, with a user tag: accepted; deleting the set keeps the system tags.
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": system + [{"Key": "a", "Value": "1"}]})
    assert pairs(s3.get_bucket_tagging(Bucket=bucket)["TagSet"]) == dict(pairs(system), a="1")
    s3.delete_bucket_tagging(Bucket=bucket)
    assert pairs(s3.get_bucket_tagging(Bucket=bucket)["TagSet"]) == pairs(system)

    sns = cumulo.client("sns")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sns.tag_resource(ResourceArn=out["Topic"], Tags=[{"Key": "aws:cloudformation:stack-name", "Value": "x"}])
    assert e.value.response["Error"]["Code"] == "InvalidParameter"
    # System tags do not count against the 50-tag limit.
    sns.tag_resource(ResourceArn=out["Topic"], Tags=[{"Key": f"k{i}", "Value": "v"} for i in range(50)])
    assert len(sns.list_tags_for_resource(ResourceArn=out["Topic"])["Tags"]) == 53

    # Nor through the stack's own tags, which CloudFormation would put on every resource.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cumulo.client("cloudformation").update_stack(
            StackName=name, UsePreviousTemplate=True, Tags=[{"Key": "aws:mine", "Value": "x"}])
    assert e.value.response["Error"]["Code"] == "ValidationError"
    assert e.value.response["Error"]["Message"] == "aws: prefixed tag key names are not allowed for external use."

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", name)
    cumulo.aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", name)


def test_direct_deploy_tags_resources_and_updates_them(tmp_path):
    state = tmp_path / "state"
    path = tmp_path / "app.json"
    path.write_text(json.dumps(template()))
    run("deploy", str(path), "--stack", "app", "--tag", "team=core", "--tag", "env=dev", state=state, check=0)
    server = CumuloServer(data_dir=state).start()
    try:
        stack_id, out = stack_outputs(server, "app")
        check(live_tags(server, out), "app", stack_id, {"team": "core", "env": "dev"})
    finally:
        server.stop()
    # Redeployed with other tags only: the resources follow.
    run("deploy", str(path), "--stack", "app", "--tag", "team=ops", state=state, check=0)
    server = CumuloServer(data_dir=state).start()
    try:
        stack_id, out = stack_outputs(server, "app")
        check(live_tags(server, out), "app", stack_id, {"team": "ops"})
    finally:
        server.stop()


RESERVED = "aws: prefixed tag key names are not allowed for external use."


def refused(call, code):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call()
    assert (e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]) == (code, RESERVED)


def test_lambda_events_ecr_refuse_aws_keys_and_mappings_keep_tags(cumulo, tmp_path):
    """Lambda, EventBridge and ECR refuse `aws:` keys from users (TagResource and the create
    calls), each in its own error code, while CloudFormation's own tags still reach what a stack
    makes; an event source mapping takes Tags (the template's, the stack's, CloudFormation's) and
    Lambda's tag API works on its ARN."""
    name = f"rsv-{uuid.uuid4().hex[:8]}"
    assume = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    body = {
        "Resources": {
            "Queue": {"Type": "AWS::SQS::Queue"},
            "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": assume}},
            "Function": {"Type": "AWS::Lambda::Function", "Properties": {
                "Runtime": "python3.11", "Handler": "index.handler", "Role": {"Fn::GetAtt": ["Role", "Arn"]},
                "Code": {"ZipFile": "def handler(e, c):\n    return {}\n"}}},
            "Mapping": {"Type": "AWS::Lambda::EventSourceMapping", "Properties": {
                "EventSourceArn": {"Fn::GetAtt": ["Queue", "Arn"]}, "FunctionName": {"Ref": "Function"},
                "Enabled": False, "Tags": [{"Key": "my", "Value": "tag"}]}},
            "Repo": {"Type": "AWS::ECR::Repository"},
            "Rule": {"Type": "AWS::Events::Rule", "Properties": {"ScheduleExpression": "rate(1 day)", "State": "DISABLED"}},
        },
        "Outputs": {
            "Function": {"Value": {"Fn::GetAtt": ["Function", "Arn"]}},
            "Mapping": {"Value": {"Fn::GetAtt": ["Mapping", "EventSourceMappingArn"]}},
            "Repo": {"Value": {"Fn::GetAtt": ["Repo", "Arn"]}},
            "Rule": {"Value": {"Fn::GetAtt": ["Rule", "Arn"]}},
        },
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(body))
    deploy = ["cloudformation", "deploy", "--stack-name", name, "--template-file", str(path),
              "--capabilities", "CAPABILITY_IAM"]
    cumulo.aws(*deploy, "--tags", "team=core")
    stack_id, out = stack_outputs(cumulo, name)
    lam, events, ecr = cumulo.client("lambda"), cumulo.client("events"), cumulo.client("ecr")
    system = {"aws:cloudformation:stack-name": name, "aws:cloudformation:stack-id": stack_id}
    assert lam.list_tags(Resource=out["Mapping"])["Tags"] == dict(
        system, **{"aws:cloudformation:logical-id": "Mapping", "my": "tag", "team": "core"})

    # TagResource, on each service's resource: refused, nothing changed.
    refused(lambda: lam.tag_resource(Resource=out["Function"], Tags={"aws:x": "1"}), "InvalidParameterValueException")
    refused(lambda: lam.tag_resource(Resource=out["Mapping"], Tags={"AWS:x": "1"}), "InvalidParameterValueException")
    refused(lambda: events.tag_resource(ResourceARN=out["Rule"], Tags=[{"Key": "aws:x", "Value": "1"}]),
            "ValidationException")
    refused(lambda: ecr.tag_resource(resourceArn=out["Repo"], tags=[{"Key": "aws:x", "Value": "1"}]),
            "InvalidTagParameterException")
    assert "aws:x" not in lam.list_tags(Resource=out["Function"])["Tags"]
    assert "aws:x" not in pairs(events.list_tags_for_resource(ResourceARN=out["Rule"])["Tags"])
    assert "aws:x" not in pairs(ecr.list_tags_for_resource(resourceArn=out["Repo"])["tags"])

    # The create calls with tags: refused, nothing created.
    other = f"{name}-other"
    refused(lambda: lam.create_function(
        FunctionName=other, Runtime="python3.11", Role="arn:aws:iam::000000000000:role/r", Handler="a.h",
        Code={"ZipFile": b"PK\x05\x06" + b"\x00" * 18}, Tags={"aws:x": "1"}), "InvalidParameterValueException")
    assert not [f for f in lam.list_functions()["Functions"] if f["FunctionName"] == other]
    queue_arn = f"arn:aws:sqs:us-east-1:000000000000:{other}"
    cumulo.client("sqs").create_queue(QueueName=other)
    before = len(lam.list_event_source_mappings()["EventSourceMappings"])
    refused(lambda: lam.create_event_source_mapping(
        EventSourceArn=queue_arn, FunctionName=out["Function"], Tags={"aws:x": "1"}), "InvalidParameterValueException")
    assert len(lam.list_event_source_mappings()["EventSourceMappings"]) == before
    refused(lambda: events.put_rule(Name=other, ScheduleExpression="rate(1 day)",
                                    Tags=[{"Key": "aws:x", "Value": "1"}]), "ValidationException")
    refused(lambda: events.create_event_bus(Name=other, Tags=[{"Key": "aws:x", "Value": "1"}]), "ValidationException")
    assert not [r for r in events.list_rules()["Rules"] if r["Name"] == other]
    refused(lambda: ecr.create_repository(repositoryName=other, tags=[{"Key": "aws:x", "Value": "1"}]),
            "InvalidTagParameterException")
    assert not [r for r in ecr.describe_repositories()["repositories"] if r["repositoryName"] == other]

    # The mapping's tags through Lambda's tag API, and AWS's answer for one that does not exist.
    lam.tag_resource(Resource=out["Mapping"], Tags={"A": "a"})
    lam.untag_resource(Resource=out["Mapping"], TagKeys=["my"])
    tags = lam.list_tags(Resource=out["Mapping"])["Tags"]
    assert (tags["A"], "my" in tags) == ("a", False)
    gone = out["Mapping"].rsplit(":", 1)[0] + ":00000000-0000-0000-0000-000000000000"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.list_tags(Resource=gone)
    assert e.value.response["Error"]["Message"] == f"Event source mapping not found: {gone}"

    # A template tag in the reserved namespace fails the resource with the service's refusal.
    body["Resources"]["Function"]["Properties"]["Tags"] = [{"Key": "aws:mine", "Value": "x"}]
    path.write_text(json.dumps(body))
    r = cumulo.aws(*deploy, check=False)
    assert r.returncode != 0
    events_out = cumulo.client("cloudformation").describe_stack_events(StackName=name)["StackEvents"]
    failed = [e for e in events_out if e["LogicalResourceId"] == "Function" and e["ResourceStatus"] == "UPDATE_FAILED"]
    assert RESERVED in failed[0]["ResourceStatusReason"]

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", name)
    cumulo.aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", name)
    cumulo.client("sqs").delete_queue(QueueUrl=cumulo.client("sqs").get_queue_url(QueueName=other)["QueueUrl"])
