"""AWS::Logs::LogGroup and AWS::Logs::LogStream in stacks: created, updated in place, replaced,
deleted, and checked through CloudWatch Logs' own API after each phase."""
import json
import time
import uuid

import botocore.exceptions
import pytest

WAIT = {"Delay": 1, "MaxAttempts": 60}


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


@pytest.fixture(scope="module")
def logs(cumulo):
    return cumulo.client("logs")


def template(group_name, retention=7, tags=None, kms=None):
    group = {"LogGroupName": group_name, "RetentionInDays": retention}
    if tags:
        group["Tags"] = [{"Key": k, "Value": v} for k, v in tags.items()]
    if kms:
        group["KmsKeyId"] = kms
    return json.dumps({
        "Resources": {
            "Group": {"Type": "AWS::Logs::LogGroup", "Properties": group},
            "Unnamed": {"Type": "AWS::Logs::LogGroup"},
            "Stream": {"Type": "AWS::Logs::LogStream",
                       "Properties": {"LogGroupName": {"Ref": "Group"}}},
        },
        "Outputs": {
            "GroupRef": {"Value": {"Ref": "Group"}},
            "GroupArn": {"Value": {"Fn::GetAtt": ["Group", "Arn"]}},
            "UnnamedRef": {"Value": {"Ref": "Unnamed"}},
            "StreamRef": {"Value": {"Ref": "Stream"}},
        },
    })


def outputs(cfn, name):
    s = cfn.describe_stacks(StackName=name)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in s.get("Outputs", [])}


def group(logs, name):
    found = [g for g in logs.describe_log_groups(logGroupNamePrefix=name)["logGroups"] if g["logGroupName"] == name]
    return found[0] if found else None


def streams(logs, name):
    return [s["logStreamName"] for s in logs.describe_log_streams(logGroupName=name)["logStreams"]]


def test_log_group_and_stream_lifecycle(cfn, logs):
    stack = f"logs-{uuid.uuid4().hex[:8]}"
    g1 = f"/cfn/{stack}/one"
    cfn.create_stack(StackName=stack, TemplateBody=template(g1, tags={"team": "a"}))
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    out = outputs(cfn, stack)
    assert out["GroupRef"] == g1
    assert out["GroupArn"] == f"arn:aws:logs:us-east-1:000000000000:log-group:{g1}:*"
    s1 = out["StreamRef"]
    assert s1.startswith(f"{stack}-Stream-")
    assert out["UnnamedRef"].startswith(f"{stack}-Unnamed-")
    g = group(logs, g1)
    assert g["retentionInDays"] == 7
    tags = logs.list_tags_log_group(logGroupName=g1)["tags"]
    assert {k: v for k, v in tags.items() if not k.startswith("aws:")} == {"team": "a"}
    assert tags["aws:cloudformation:logical-id"] == "Group"
    assert streams(logs, g1) == [s1]
    assert group(logs, out["UnnamedRef"]) is not None
    # the stream really takes events
    logs.put_log_events(logGroupName=g1, logStreamName=s1,
                        logEvents=[{"timestamp": int(time.time() * 1000), "message": "hi"}])

    # in place: retention, KMS key id and tags change on the same group (its events stay)
    cfn.update_stack(StackName=stack, TemplateBody=template(g1, retention=30, tags={"team": "b"}, kms="alias/k"))
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=WAIT)
    g = group(logs, g1)
    assert g["retentionInDays"] == 30 and g["kmsKeyId"] == "alias/k"
    tags = logs.list_tags_log_group(logGroupName=g1)["tags"]
    assert {k: v for k, v in tags.items() if not k.startswith("aws:")} == {"team": "b"}
    assert [e["message"] for e in logs.get_log_events(logGroupName=g1, logStreamName=s1)["events"]] == ["hi"]

    # group name is createOnly: a new group, and the stream (its LogGroupName is createOnly too)
    # replaced into it; the old group is gone
    g2 = f"/cfn/{stack}/two"
    cfn.update_stack(StackName=stack, TemplateBody=template(g2, retention=30))
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=WAIT)
    assert group(logs, g1) is None
    assert group(logs, g2)["retentionInDays"] == 30
    s2 = outputs(cfn, stack)["StreamRef"]
    assert s2 != s1 and streams(logs, g2) == [s2]
    assert outputs(cfn, stack)["GroupArn"].endswith(f":log-group:{g2}:*")

    unnamed = outputs(cfn, stack)["UnnamedRef"]
    stack_id = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)
    assert group(logs, g2) is None
    assert group(logs, unnamed) is None


def test_unsupported_property_fails_naming_it(cfn, logs):
    stack = f"logs-bad-{uuid.uuid4().hex[:8]}"
    body = json.dumps({"Resources": {"G": {"Type": "AWS::Logs::LogGroup", "Properties": {
        "LogGroupName": f"/cfn/{stack}", "DataProtectionPolicy": {"Name": "x"}}}}})
    cfn.create_stack(StackName=stack, TemplateBody=body)
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    events = cfn.describe_stack_events(StackName=stack)["StackEvents"]
    reasons = [e.get("ResourceStatusReason", "") for e in events if e["LogicalResourceId"] == "G"]
    assert any("DataProtectionPolicy" in r for r in reasons), reasons
    assert group(logs, f"/cfn/{stack}") is None


def test_deletion_protection_is_applied_and_blocks_the_stack_delete(cfn, logs):
    stack = f"logs-dp-{uuid.uuid4().hex[:8]}"
    name = f"/cfn/{stack}"

    def body(protected):
        return json.dumps({"Resources": {"G": {"Type": "AWS::Logs::LogGroup", "Properties": {
            "LogGroupName": name, "DeletionProtectionEnabled": protected}}}})

    cfn.create_stack(StackName=stack, TemplateBody=body(True))
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    assert group(logs, name)["deletionProtectionEnabled"] is True
    for protected in (False, True):
        cfn.update_stack(StackName=stack, TemplateBody=body(protected))
        cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=WAIT)
        assert group(logs, name)["deletionProtectionEnabled"] is protected
    # Deleting the stack fails on the protected group, as on AWS, and leaves it.
    cfn.delete_stack(StackName=stack)
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=WAIT)
    assert cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"] == "DELETE_FAILED"
    assert group(logs, name) is not None
    # Protection turned off through Logs' API, the delete goes through.
    logs.put_log_group_deletion_protection(logGroupIdentifier=name, deletionProtectionEnabled=False)
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=WAIT)
    assert group(logs, name) is None


def account_template(doc_version, query):
    return {
        "Parameters": {"Env": {"Type": "String", "Default": "test"}},
        "Resources": {
            # As AWS Copilot's environment writes it: the document is Fn::Sub'd JSON text.
            "Policy": {"Type": "AWS::Logs::ResourcePolicy", "Properties": {
                "PolicyName": {"Fn::Sub": "${AWS::StackName}-LogResourcePolicy"},
                "PolicyDocument": {"Fn::Sub": json.dumps({
                    "Version": doc_version,
                    "Statement": [{
                        "Effect": "Allow",
                        "Principal": {"Service": ["delivery.logs.amazonaws.com"]},
                        "Action": ["logs:CreateLogStream", "logs:PutLogEvents"],
                        "Resource": ["arn:${AWS::Partition}:logs:${AWS::Region}:${AWS::AccountId}:log-group:/copilot/${Env}-*"],
                    }],
                })},
            }},
            # A policy on one group, given as an object.
            "Group": {"Type": "AWS::Logs::LogGroup", "Properties": {
                "ResourcePolicyDocument": {
                    "Version": doc_version,
                    "Statement": [{"Effect": "Allow", "Principal": {"Service": "es.amazonaws.com"},
                                   "Action": "logs:PutLogEvents", "Resource": "*"}],
                },
            }},
            "Query": {"Type": "AWS::Logs::QueryDefinition", "Properties": {
                "Name": {"Fn::Sub": "${AWS::StackName}/errors"},
                "QueryString": query,
                "LogGroupNames": ["/copilot/test-api"],
            }},
        },
        "Outputs": {
            "PolicyRef": {"Value": {"Ref": "Policy"}},
            "QueryRef": {"Value": {"Ref": "Query"}},
            "QueryId": {"Value": {"Fn::GetAtt": ["Query", "QueryDefinitionId"]}},
            "GroupArn": {"Value": {"Fn::GetAtt": ["Group", "Arn"]}},
        },
    }


def test_resource_policy_and_query_definition_through_the_cli(cumulo, cfn, logs, tmp_path):
    stack = f"logsacct-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "t.json"

    def deploy(doc_version, query):
        path.write_text(json.dumps(account_template(doc_version, query)))
        cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path))

    deploy("2012-10-17", "fields @message | filter @message like /ERROR/")
    out = outputs(cfn, stack)
    assert out["PolicyRef"] == f"{stack}-LogResourcePolicy"
    assert out["QueryRef"] == out["QueryId"]
    policies = {p.get("policyName"): p for p in logs.describe_resource_policies()["resourcePolicies"]}
    doc = json.loads(policies[out["PolicyRef"]]["policyDocument"])
    assert doc["Statement"][0]["Resource"] == ["arn:aws:logs:us-east-1:000000000000:log-group:/copilot/test-*"]
    queries = {q["queryDefinitionId"]: q for q in logs.describe_query_definitions()["queryDefinitions"]}
    assert queries[out["QueryId"]]["name"] == f"{stack}/errors"
    assert queries[out["QueryId"]]["logGroupNames"] == ["/copilot/test-api"]

    def group_policy_version():
        found = logs.describe_resource_policies(resourceArn=out["GroupArn"])["resourcePolicies"]
        assert [p["policyScope"] for p in found] == ["RESOURCE"]
        return json.loads(found[0]["policyDocument"])["Version"]

    assert group_policy_version() == "2012-10-17"

    # In place: the same policy name and the same query id, with the new contents.
    deploy("2008-10-17", "stats count() by bin(5m)")
    again = outputs(cfn, stack)
    assert again == out
    policies = {p.get("policyName"): p for p in logs.describe_resource_policies()["resourcePolicies"]}
    assert json.loads(policies[out["PolicyRef"]]["policyDocument"])["Version"] == "2008-10-17"
    queries = {q["queryDefinitionId"]: q for q in logs.describe_query_definitions()["queryDefinitions"]}
    assert queries[out["QueryId"]]["queryString"] == "stats count() by bin(5m)"
    assert group_policy_version() == "2008-10-17"

    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=WAIT)
    assert out["PolicyRef"] not in {p.get("policyName") for p in logs.describe_resource_policies()["resourcePolicies"]}
    assert out["QueryId"] not in {q["queryDefinitionId"] for q in logs.describe_query_definitions()["queryDefinitions"]}
    # The group's policy went with the group.
    assert all(p.get("resourceArn") != out["GroupArn"].removesuffix(":*")
               for p in logs.describe_resource_policies()["resourcePolicies"])
