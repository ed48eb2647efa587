"""CloudWatch Logs' account records: resource policies and saved Logs Insights query
definitions, through boto3 and the AWS CLI, held to AWS's recorded answers
(../shared/aws-recordings/logs/test_logs_resource_policies.snapshot.json)."""
import json
import uuid

import botocore.exceptions
import pytest

from conftest import CumuloServer

DOC = {
    "Version": "2012-10-17",
    "Statement": [{
        "Sid": "Route53LogsToCloudWatchLogs",
        "Effect": "Allow",
        "Principal": {"Service": ["route53.amazonaws.com"]},
        "Action": "logs:PutLogEvents",
        "Resource": "arn:aws:logs:us-east-1:000000000000:log-group:/r53/*",
    }],
}


def error(call, **kw):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call(**kw)
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def test_resource_policy_put_describe_update_delete(cumulo):
    logs = cumulo.client("logs", region="ap-south-1")
    name = f"pol-{uuid.uuid4().hex[:8]}"
    put = logs.put_resource_policy(policyName=name, policyDocument=json.dumps(DOC))["resourcePolicy"]
    assert put["policyName"] == name
    assert put["policyScope"] == "ACCOUNT"
    assert json.loads(put["policyDocument"]) == DOC
    assert isinstance(put["lastUpdatedTime"], int)

    updated = dict(DOC, Version="2008-10-17")
    logs.put_resource_policy(policyName=name, policyDocument=json.dumps(updated))
    found = [p for p in logs.describe_resource_policies()["resourcePolicies"] if p.get("policyName") == name]
    assert len(found) == 1
    assert json.loads(found[0]["policyDocument"])["Version"] == "2008-10-17"
    assert logs.describe_resource_policies(policyScope="RESOURCE")["resourcePolicies"] == []

    logs.delete_resource_policy(policyName=name)
    assert error(logs.delete_resource_policy, policyName=name) == (
        "ResourceNotFoundException", f"Policy with name [{name}] does not exist.")


def test_resource_policy_quota_and_bad_input(cumulo):
    logs = cumulo.client("logs", region="ap-southeast-3")
    names = [f"q{i}-{uuid.uuid4().hex[:6]}" for i in range(10)]
    for n in names:
        logs.put_resource_policy(policyName=n, policyDocument=json.dumps(DOC))
    # Creation order, paged.
    first = logs.describe_resource_policies(limit=4)
    assert [p["policyName"] for p in first["resourcePolicies"]] == names[:4]
    rest = logs.describe_resource_policies(nextToken=first["nextToken"])
    assert [p["policyName"] for p in rest["resourcePolicies"]] == names[4:]
    assert "nextToken" not in rest
    assert error(logs.put_resource_policy, policyName="eleventh", policyDocument=json.dumps(DOC)) == (
        "LimitExceededException", "Resource limit exceeded.")
    # Replacing one of the ten is not a new policy.
    logs.put_resource_policy(policyName=names[0], policyDocument=json.dumps(DOC))
    code, _ = error(logs.put_resource_policy, policyName="bad", policyDocument="{not json")
    assert code == "InvalidParameterException"
    code, _ = error(logs.describe_resource_policies, policyScope="GLOBAL")
    assert code == "InvalidParameterException"
    assert len(logs.describe_resource_policies()["resourcePolicies"]) == 10
    for n in names:
        logs.delete_resource_policy(policyName=n)


def test_resource_scoped_policy_on_a_log_group(cumulo):
    logs = cumulo.client("logs")
    group = f"/scoped/{uuid.uuid4().hex[:8]}"
    logs.create_log_group(logGroupName=group)
    arn = next(g["logGroupArn"] for g in logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"])
    out = logs.put_resource_policy(resourceArn=arn, policyDocument=json.dumps(DOC))
    assert out["resourcePolicy"]["policyScope"] == "RESOURCE"
    assert out["revisionId"] == out["resourcePolicy"]["revisionId"]
    listed = logs.describe_resource_policies(resourceArn=arn, policyScope="RESOURCE")["resourcePolicies"]
    assert [p["resourceArn"] for p in listed] == [arn]
    code, _ = error(logs.put_resource_policy, resourceArn=arn, policyDocument=json.dumps(DOC),
                    expectedRevisionId="stale")
    assert code == "OperationAbortedException"
    missing = arn.replace(group, group + "-gone")
    assert error(logs.put_resource_policy, resourceArn=missing, policyDocument=json.dumps(DOC))[0] == \
        "ResourceNotFoundException"
    logs.delete_resource_policy(resourceArn=arn)
    assert logs.describe_resource_policies(resourceArn=arn)["resourcePolicies"] == []


def test_query_definitions(cumulo):
    logs = cumulo.client("logs", region="ca-central-1")
    prefix = f"qd-{uuid.uuid4().hex[:6]}"
    a = logs.put_query_definition(name=f"{prefix}/b", queryString="fields @message | limit 5",
                                  logGroupNames=["/a"])["queryDefinitionId"]
    b = logs.put_query_definition(name=f"{prefix}/a", queryString="fields @timestamp")["queryDefinitionId"]
    assert a != b
    listed = logs.describe_query_definitions(queryDefinitionNamePrefix=prefix)["queryDefinitions"]
    assert [q["name"] for q in listed] == [f"{prefix}/a", f"{prefix}/b"]
    assert listed[1]["logGroupNames"] == ["/a"]
    assert listed[1]["queryLanguage"] == "CWLI"
    # Update in place by id.
    same = logs.put_query_definition(queryDefinitionId=a, name=f"{prefix}/b", queryString="stats count()")
    assert same["queryDefinitionId"] == a
    page = logs.describe_query_definitions(queryDefinitionNamePrefix=prefix, maxResults=1)
    assert len(page["queryDefinitions"]) == 1 and "nextToken" in page
    after = logs.describe_query_definitions(queryDefinitionNamePrefix=prefix, nextToken=page["nextToken"])
    assert after["queryDefinitions"][0]["queryString"] == "stats count()"
    gone = str(uuid.uuid4())
    assert error(logs.put_query_definition, queryDefinitionId=gone, name="x", queryString="y")[0] == \
        "ResourceNotFoundException"
    assert error(logs.put_query_definition, name="x", queryString="y", queryLanguage="KQL")[0] == \
        "InvalidParameterException"
    assert logs.delete_query_definition(queryDefinitionId=a)["success"] is True
    assert error(logs.delete_query_definition, queryDefinitionId=a)[0] == "ResourceNotFoundException"
    # The CLI sees the same records.
    out = cumulo.aws("logs", "describe-query-definitions", "--query-definition-name-prefix", prefix,
                     region="ca-central-1")
    assert [q["queryDefinitionId"] for q in out["queryDefinitions"]] == [b]
    logs.delete_query_definition(queryDefinitionId=b)


def test_records_survive_kill9(fresh_server):
    server = fresh_server.start()
    logs = server.client("logs")
    logs.put_resource_policy(policyName="kept", policyDocument=json.dumps(DOC))
    qid = logs.put_query_definition(name="kept", queryString="fields @message")["queryDefinitionId"]
    server.kill9()
    again = CumuloServer(data_dir=fresh_server.data_dir).start()
    try:
        logs = again.client("logs")
        assert [p["policyName"] for p in logs.describe_resource_policies()["resourcePolicies"]] == ["kept"]
        assert [q["queryDefinitionId"] for q in logs.describe_query_definitions()["queryDefinitions"]] == [qid]
    finally:
        again.stop()
