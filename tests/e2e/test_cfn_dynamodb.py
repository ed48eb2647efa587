"""AWS::DynamoDB::Table through CloudFormation: created, updated in place (GSI added, billing
mode switched, stream and TTL enabled, tags), replaced when KeySchema changes, deleted — each
phase checked through the DynamoDB API."""
import json
import uuid

import pytest
from botocore.exceptions import ClientError

WAIT = {"Delay": 1, "MaxAttempts": 60}


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


@pytest.fixture(scope="module")
def ddb(cumulo):
    return cumulo.client("dynamodb")


def stack(cfn, name):
    return cfn.describe_stacks(StackName=name)["Stacks"][0]


def outputs(cfn, name):
    return {o["OutputKey"]: o["OutputValue"] for o in stack(cfn, name).get("Outputs", [])}


def template(key="id", gsi=False, on_demand=False, stream=False, ttl=False, tags=None, name=None, pitr=False):
    props = {
        "AttributeDefinitions": [{"AttributeName": key, "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": key, "KeyType": "HASH"}],
        "Tags": [{"Key": k, "Value": v} for k, v in (tags or {"team": "a"}).items()],
    }
    if name:
        props["TableName"] = name
    if on_demand:
        props["BillingMode"] = "PAY_PER_REQUEST"
    else:
        props["ProvisionedThroughput"] = {"ReadCapacityUnits": 2, "WriteCapacityUnits": "2"}
    if gsi:
        props["AttributeDefinitions"].append({"AttributeName": "email", "AttributeType": "S"})
        index = {"IndexName": "byEmail", "KeySchema": [{"AttributeName": "email", "KeyType": "HASH"}],
                 "Projection": {"ProjectionType": "ALL"}}
        if not on_demand:
            index["ProvisionedThroughput"] = {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}
        props["GlobalSecondaryIndexes"] = [index]
    if stream:
        props["StreamSpecification"] = {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    if ttl:
        props["TimeToLiveSpecification"] = {"AttributeName": "expires", "Enabled": True}
    if pitr:
        props["PointInTimeRecoverySpecification"] = {"PointInTimeRecoveryEnabled": True}
    outs = {
        "Name": {"Value": {"Ref": "Table"}},
        "Arn": {"Value": {"Fn::GetAtt": ["Table", "Arn"]}},
    }
    if stream:
        outs["StreamArn"] = {"Value": {"Fn::GetAtt": ["Table", "StreamArn"]}}
    return json.dumps({"Resources": {"Table": {"Type": "AWS::DynamoDB::Table", "Properties": props}}, "Outputs": outs})


def deploy(cfn, name, body, create=False):
    if create:
        cfn.create_stack(StackName=name, TemplateBody=body)
        cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=WAIT)
    else:
        cfn.update_stack(StackName=name, TemplateBody=body)
        cfn.get_waiter("stack_update_complete").wait(StackName=name, WaiterConfig=WAIT)
    return outputs(cfn, name)


def test_table_create_update_in_place_replace_and_delete(cfn, ddb):
    name = f"ddb-{uuid.uuid4().hex[:8]}"
    out = deploy(cfn, name, template(), create=True)
    table = out["Name"]
    assert table.startswith(f"{name}-Table-")
    t = ddb.describe_table(TableName=table)["Table"]
    assert out["Arn"] == t["TableArn"]
    assert t["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert t["ProvisionedThroughput"]["WriteCapacityUnits"] == 2
    ddb.put_item(TableName=table, Item={"id": {"S": "1"}, "email": {"S": "a@x"}})

    # In place: GSI added, switched to on-demand, stream and TTL enabled, tags changed.
    out = deploy(cfn, name, template(gsi=True, on_demand=True, stream=True, ttl=True, pitr=True, tags={"team": "b", "env": "dev"}))
    assert out["Name"] == table, "updated in place"
    t = ddb.describe_table(TableName=table)["Table"]
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert [g["IndexName"] for g in t["GlobalSecondaryIndexes"]] == ["byEmail"]
    assert t["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert out["StreamArn"] == t["LatestStreamArn"]
    assert ddb.describe_time_to_live(TableName=table)["TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
    assert ddb.describe_continuous_backups(TableName=table)["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"
    tags = {x["Key"]: x["Value"] for x in ddb.list_tags_of_resource(ResourceArn=t["TableArn"])["Tags"]}
    assert tags == {"team": "b", "env": "dev"}
    got = ddb.query(TableName=table, IndexName="byEmail", KeyConditionExpression="email = :e", ExpressionAttributeValues={":e": {"S": "a@x"}})
    assert got["Count"] == 1, "the item written before the update is in the new index"

    # Back to provisioned, index removed, stream and TTL off: still the same table and its items.
    out = deploy(cfn, name, template())
    assert out["Name"] == table
    t = ddb.describe_table(TableName=table)["Table"]
    assert t["BillingModeSummary"]["BillingMode"] == "PROVISIONED" and "GlobalSecondaryIndexes" not in t
    assert "StreamSpecification" not in t
    assert ddb.describe_time_to_live(TableName=table)["TimeToLiveDescription"]["TimeToLiveStatus"] == "DISABLED"
    assert ddb.get_item(TableName=table, Key={"id": {"S": "1"}})["Item"]["email"] == {"S": "a@x"}

    # Replacement: a KeySchema change makes a new table and deletes the old one.
    out = deploy(cfn, name, template(key="pk"))
    assert out["Name"] != table
    new = ddb.describe_table(TableName=out["Name"])["Table"]
    assert new["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    with pytest.raises(ClientError) as e:
        ddb.describe_table(TableName=table)
    assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"

    stack_id = stack(cfn, name)["StackId"]
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)
    assert out["Name"] not in ddb.list_tables()["TableNames"]


def test_named_table_that_exists_fails_and_unsupported_property_is_named(cfn, ddb):
    existing = f"taken-{uuid.uuid4().hex[:8]}"
    ddb.create_table(TableName=existing, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
    name = f"ddb-{uuid.uuid4().hex[:8]}"
    cfn.create_stack(StackName=name, TemplateBody=template(name=existing))
    with pytest.raises(Exception):
        cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=WAIT)
    events = cfn.describe_stack_events(StackName=name)["StackEvents"]
    reasons = [e.get("ResourceStatusReason", "") for e in events if e["LogicalResourceId"] == "Table"]
    assert any("already exists" in r for r in reasons), reasons

    body = json.loads(template(on_demand=True))
    body["Resources"]["Table"]["Properties"]["KinesisStreamSpecification"] = {"StreamArn": "arn:aws:kinesis:us-east-1:000000000000:stream/x"}
    name2 = f"ddb-{uuid.uuid4().hex[:8]}"
    cfn.create_stack(StackName=name2, TemplateBody=json.dumps(body))
    with pytest.raises(Exception):
        cfn.get_waiter("stack_create_complete").wait(StackName=name2, WaiterConfig=WAIT)
    events = cfn.describe_stack_events(StackName=name2)["StackEvents"]
    reasons = [e.get("ResourceStatusReason", "") for e in events if e["LogicalResourceId"] == "Table"]
    assert any("KinesisStreamSpecification" in r for r in reasons), reasons
    before = set(ddb.list_tables()["TableNames"])
    assert not any(n.startswith(f"{name2}-Table-") for n in before), "nothing left behind"


def with_mode_parameter(body):
    """The template with BillingMode from a parameter (deploy's --parameter-overrides)."""
    t = json.loads(body)
    t["Parameters"] = {"Mode": {"Type": "String", "Default": "PAY_PER_REQUEST"}}
    t["Resources"]["Table"]["Properties"]["BillingMode"] = {"Ref": "Mode"}
    return json.dumps(t)


def test_aws_cli_deploy_table(cumulo, ddb, tmp_path):
    name = f"ddbcli-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "t.json"
    path.write_text(with_mode_parameter(template(on_demand=True)))
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path))
    out = {o["OutputKey"]: o["OutputValue"] for o in cumulo.aws("cloudformation", "describe-stacks", "--stack-name", name)["Stacks"][0]["Outputs"]}
    assert ddb.describe_table(TableName=out["Name"])["Table"]["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    path.write_text(with_mode_parameter(template(on_demand=True, gsi=True)))
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path),
               "--parameter-overrides", "Mode=PAY_PER_REQUEST")
    assert ddb.describe_table(TableName=out["Name"])["Table"]["GlobalSecondaryIndexes"][0]["IndexName"] == "byEmail"
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", name)
    cumulo.aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", name)
    assert out["Name"] not in ddb.list_tables()["TableNames"]
