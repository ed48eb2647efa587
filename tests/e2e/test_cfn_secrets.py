"""CloudFormation with AWS::KMS::Key, AWS::KMS::Alias, AWS::SecretsManager::Secret,
ResourcePolicy and SecretTargetAttachment, and `{{resolve:secretsmanager:...}}` references:
each stack created, updated in place, replaced where a createOnly property changes and deleted,
checked through KMS's and Secrets Manager's own APIs after every phase."""
import json
import time
import uuid

import botocore.exceptions
import pytest

WAIT = {"Delay": 1, "MaxAttempts": 60}


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


@pytest.fixture(scope="module")
def kms(cumulo):
    return cumulo.client("kms")


@pytest.fixture(scope="module")
def sm(cumulo):
    return cumulo.client("secretsmanager")


@pytest.fixture(scope="module")
def ssm(cumulo):
    return cumulo.client("ssm")


def stack(cfn, name):
    return cfn.describe_stacks(StackName=name)["Stacks"][0]


def outputs(cfn, name):
    return {o["OutputKey"]: o["OutputValue"] for o in stack(cfn, name).get("Outputs", [])}


def create(cfn, name, body):
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(body))
    cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=WAIT)


def update(cfn, name, body):
    cfn.update_stack(StackName=name, TemplateBody=json.dumps(body))
    cfn.get_waiter("stack_update_complete").wait(StackName=name, WaiterConfig=WAIT)


def delete(cfn, name):
    stack_id = stack(cfn, name)["StackId"]
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)


def failure_reason(cfn, name, logical_id):
    events = cfn.describe_stack_events(StackName=name)["StackEvents"]
    return next(e["ResourceStatusReason"] for e in events if e["LogicalResourceId"] == logical_id and e["ResourceStatus"] == "CREATE_FAILED")


def alias_target(kms, name):
    return next((a.get("TargetKeyId") for a in kms.list_aliases()["Aliases"] if a["AliasName"] == name), None)


def secret_gone(sm, secret_id):
    try:
        sm.describe_secret(SecretId=secret_id)
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"] == "ResourceNotFoundException"
    return False


def template(p, *, description="first", rotation=True, alias=None, alias_target="KeyA", secret_name=None,
             value="v1", secret_description="db", tag="one", principal_action="secretsmanager:GetSecretValue"):
    return {
        "Resources": {
            "KeyA": {
                "Type": "AWS::KMS::Key",
                "Properties": {
                    "Description": description,
                    "EnableKeyRotation": rotation,
                    "PendingWindowInDays": 7,
                    "Tags": [{"Key": "stack", "Value": tag}],
                },
            },
            "KeyB": {"Type": "AWS::KMS::Key", "Properties": {"Description": "second", "PendingWindowInDays": 7}},
            "Alias": {
                "Type": "AWS::KMS::Alias",
                "Properties": {"AliasName": alias or f"alias/{p}", "TargetKeyId": {"Ref": alias_target}},
            },
            "Secret": {
                "Type": "AWS::SecretsManager::Secret",
                "Properties": {
                    "Name": secret_name or f"{p}/db",
                    "Description": secret_description,
                    "SecretString": value,
                    "KmsKeyId": {"Ref": "KeyA"},
                    "Tags": [{"Key": "stack", "Value": tag}],
                },
            },
            "Policy": {
                "Type": "AWS::SecretsManager::ResourcePolicy",
                "Properties": {
                    "SecretId": {"Ref": "Secret"},
                    "ResourcePolicy": {
                        "Version": "2012-10-17",
                        "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::000000000000:root"},
                                       "Action": principal_action, "Resource": "*"}],
                    },
                },
            },
        },
        "Outputs": {
            "KeyRef": {"Value": {"Ref": "KeyA"}},
            "KeyArn": {"Value": {"Fn::GetAtt": ["KeyA", "Arn"]}},
            "KeyId": {"Value": {"Fn::GetAtt": ["KeyA", "KeyId"]}},
            "AliasRef": {"Value": {"Ref": "Alias"}},
            "SecretRef": {"Value": {"Ref": "Secret"}},
            "SecretId": {"Value": {"Fn::GetAtt": ["Secret", "Id"]}},
            "PolicyRef": {"Value": {"Ref": "Policy"}},
        },
    }


def test_keys_aliases_secrets_create_update_replace_delete(cfn, kms, sm):
    p = f"ks-{uid()}"
    create(cfn, p, template(p))
    out = outputs(cfn, p)
    key = out["KeyRef"]
    meta = kms.describe_key(KeyId=key)["KeyMetadata"]
    assert out["KeyArn"] == meta["Arn"] and out["KeyId"] == key
    assert meta["Description"] == "first" and meta["KeyState"] == "Enabled"
    assert kms.get_key_rotation_status(KeyId=key)["KeyRotationEnabled"] is True
    assert {"TagKey": "stack", "TagValue": "one"} in kms.list_resource_tags(KeyId=key)["Tags"]
    assert out["AliasRef"] == f"alias/{p}" and alias_target(kms, f"alias/{p}") == key
    arn = out["SecretRef"]
    assert out["SecretId"] == arn and out["PolicyRef"] == arn
    assert arn.startswith(f"arn:aws:secretsmanager:us-east-1:000000000000:secret:{p}/db-")
    d = sm.describe_secret(SecretId=arn)
    assert d["Description"] == "db" and d["KmsKeyId"] == key
    assert sm.get_secret_value(SecretId=arn)["SecretString"] == "v1"
    assert sm.list_secret_version_ids(SecretId=arn)["Versions"][0]["KmsKeyIds"] == [meta["Arn"]]
    policy = json.loads(sm.get_resource_policy(SecretId=arn)["ResourcePolicy"])
    assert policy["Statement"][0]["Action"] == "secretsmanager:GetSecretValue"

    # In place: key description, rotation and tags; the alias moves to KeyB; a new secret value,
    # description and tags; a new policy.
    update(cfn, p, template(p, description="changed", rotation=False, alias_target="KeyB", value="v2",
                            secret_description="db2", tag="two", principal_action="secretsmanager:DescribeSecret"))
    out2 = outputs(cfn, p)
    assert out2["KeyRef"] == key and out2["SecretRef"] == arn
    meta = kms.describe_key(KeyId=key)["KeyMetadata"]
    assert meta["Description"] == "changed"
    assert kms.get_key_rotation_status(KeyId=key)["KeyRotationEnabled"] is False
    assert {"TagKey": "stack", "TagValue": "two"} in kms.list_resource_tags(KeyId=key)["Tags"]
    key_b = cfn.describe_stack_resource(StackName=p, LogicalResourceId="KeyB")["StackResourceDetail"]["PhysicalResourceId"]
    assert alias_target(kms, f"alias/{p}") == key_b
    assert sm.get_secret_value(SecretId=arn)["SecretString"] == "v2"
    assert sm.get_secret_value(SecretId=arn, VersionStage="AWSPREVIOUS")["SecretString"] == "v1"
    d = sm.describe_secret(SecretId=arn)
    assert d["Description"] == "db2" and {"Key": "stack", "Value": "two"} in d["Tags"]
    policy = json.loads(sm.get_resource_policy(SecretId=arn)["ResourcePolicy"])
    assert policy["Statement"][0]["Action"] == "secretsmanager:DescribeSecret"

    # Replacement: AliasName and the secret's Name are createOnly.
    update(cfn, p, template(p, description="changed", rotation=False, alias=f"alias/{p}-new", alias_target="KeyB",
                            secret_name=f"{p}/db-renamed", value="v2", secret_description="db2", tag="two",
                            principal_action="secretsmanager:DescribeSecret"))
    out3 = outputs(cfn, p)
    assert out3["AliasRef"] == f"alias/{p}-new" and alias_target(kms, f"alias/{p}-new") == key_b
    assert alias_target(kms, f"alias/{p}") is None
    new_arn = out3["SecretRef"]
    assert new_arn != arn and f":secret:{p}/db-renamed-" in new_arn
    assert sm.get_secret_value(SecretId=new_arn)["SecretString"] == "v2"
    assert secret_gone(sm, arn)
    assert "ResourcePolicy" in sm.get_resource_policy(SecretId=new_arn)

    delete(cfn, p)
    for k in (key, key_b):
        meta = kms.describe_key(KeyId=k)["KeyMetadata"]
        assert meta["KeyState"] == "PendingDeletion" and meta["PendingDeletionWindowInDays"] == 7
    assert alias_target(kms, f"alias/{p}-new") is None
    assert secret_gone(sm, new_arn)


def test_generated_secret_and_generated_name(cfn, sm):
    p = f"gen-{uid()}"
    body = {
        "Resources": {
            "DbSecret": {
                "Type": "AWS::SecretsManager::Secret",
                "Properties": {
                    "GenerateSecretString": {
                        "SecretStringTemplate": json.dumps({"username": "admin"}),
                        "GenerateStringKey": "password",
                        "PasswordLength": 24,
                        "ExcludeCharacters": "\"@/\\",
                    }
                },
            }
        },
        "Outputs": {"Arn": {"Value": {"Ref": "DbSecret"}}},
    }
    create(cfn, p, body)
    arn = outputs(cfn, p)["Arn"]
    name = sm.describe_secret(SecretId=arn)["Name"]
    assert name.startswith("DbSecret-")
    doc = json.loads(sm.get_secret_value(SecretId=arn)["SecretString"])
    assert doc["username"] == "admin" and len(doc["password"]) == 24
    assert not set(doc["password"]) & set("\"@/\\")
    # An update that leaves the generator alone keeps the value.
    body["Resources"]["DbSecret"]["Properties"]["Description"] = "described"
    update(cfn, p, body)
    assert json.loads(sm.get_secret_value(SecretId=arn)["SecretString"]) == doc
    assert sm.describe_secret(SecretId=arn)["Description"] == "described"
    delete(cfn, p)
    assert secret_gone(sm, arn)


def test_refusals_fail_the_resource(cfn, sm):
    p = f"bad-{uid()}"
    body = {"Resources": {"S": {"Type": "AWS::SecretsManager::Secret", "Properties": {
        "Name": f"{p}-s", "SecretString": "x", "GenerateSecretString": {"PasswordLength": 10}}}}}
    cfn.create_stack(StackName=p, TemplateBody=json.dumps(body))
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName=p, WaiterConfig=WAIT)
    assert "GenerateSecretString" in failure_reason(cfn, p, "S")
    assert secret_gone(sm, f"{p}-s")

    q = f"att-{uid()}"
    body = {"Resources": {
        "S": {"Type": "AWS::SecretsManager::Secret", "Properties": {"Name": f"{q}-s", "SecretString": "{}"}},
        "A": {"Type": "AWS::SecretsManager::SecretTargetAttachment", "Properties": {
            "SecretId": {"Ref": "S"}, "TargetId": "db-1", "TargetType": "AWS::RDS::DBInstance"}},
    }}
    cfn.create_stack(StackName=q, TemplateBody=json.dumps(body))
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName=q, WaiterConfig=WAIT)
    assert "AWS::RDS::DBInstance" in failure_reason(cfn, q, "A")
    # Rolled back: the secret the stack made is gone again.
    assert secret_gone(sm, f"{q}-s")


def test_secretsmanager_dynamic_references(cfn, sm, ssm):
    p = f"dyn-{uid()}"
    first = sm.create_secret(Name=f"{p}/creds", SecretString=json.dumps({"user": "admin", "password": "old-pw"}))
    sm.put_secret_value(SecretId=f"{p}/creds", SecretString=json.dumps({"user": "admin", "password": "new-pw"}))
    sm.create_secret(Name=f"{p}/plain", SecretString="whole-string")

    def param(name, value):
        return {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{p}/{name}", "Type": "String", "Value": value}}

    body = {"Resources": {
        "ByName": param("by-name", f"{{{{resolve:secretsmanager:{p}/creds:SecretString:password}}}}"),
        "ByArnStage": param("by-stage", f"{{{{resolve:secretsmanager:{first['ARN']}:SecretString:password:AWSPREVIOUS}}}}"),
        "ByVersion": param("by-version", f"{{{{resolve:secretsmanager:{p}/creds:SecretString:password::{first['VersionId']}}}}}"),
        "Whole": param("whole", f"{{{{resolve:secretsmanager:{p}/plain}}}}"),
    }}
    create(cfn, p, body)
    value = lambda n: ssm.get_parameter(Name=f"/{p}/{n}")["Parameter"]["Value"]
    assert value("by-name") == "new-pw"
    assert value("by-stage") == "old-pw"
    assert value("by-version") == "old-pw"
    assert value("whole") == "whole-string"
    # The stack keeps the references, never the values.
    tpl = json.dumps(cfn.get_template(StackName=p)["TemplateBody"])
    assert "new-pw" not in tpl and "resolve:secretsmanager" in tpl
    delete(cfn, p)

    for ref, words in ((f"{{{{resolve:secretsmanager:{p}/none}}}}", "can't find the specified secret"),
                       (f"{{{{resolve:secretsmanager:{p}/creds:SecretString:nokey}}}}", "nokey")):
        name = f"{p}-bad-{uid()}"
        cfn.create_stack(StackName=name, TemplateBody=json.dumps({"Resources": {"P": param(f"bad-{uid()}", ref)}}))
        with pytest.raises(botocore.exceptions.WaiterError):
            cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=WAIT)
        assert words in failure_reason(cfn, name, "P")


NO_ECHO_TEMPLATE = """
Parameters:
  DbPassword:
    Type: String
    NoEcho: true
  Env:
    Type: String
Resources:
  Creds:
    Type: AWS::SecretsManager::Secret
    Properties:
      Name: !Sub app-${Env}/db
      SecretString: !Sub '{"password":"${DbPassword}"}'
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub app-${Env}-queue
"""


def test_no_echo_parameter_never_reaches_disk_and_survives_kill_9(fresh_server, tmp_path):
    """A NoEcho parameter (a database password) deployed with `aws cloudformation deploy`:
    DescribeStacks masks it, nothing in the data directory holds it in clear (the stack, change
    set, resource and event rows that carry it are sealed), and after `kill -9` a redeploy that
    leaves it out (the CLI sends UsePreviousValue) still has the value."""
    fresh_server.start()
    password = f"pw-{uuid.uuid4().hex}"
    path = tmp_path / "db.yaml"
    path.write_text(NO_ECHO_TEMPLATE)
    fresh_server.aws("cloudformation", "deploy", "--stack-name", "noecho", "--template-file", str(path),
                     "--parameter-overrides", f"DbPassword={password}", "Env=dev")
    cfn = fresh_server.client("cloudformation")
    sm = fresh_server.client("secretsmanager")
    params = {p["ParameterKey"]: p["ParameterValue"] for p in stack(cfn, "noecho")["Parameters"]}
    assert params == {"DbPassword": "****", "Env": "dev"}
    assert json.loads(sm.get_secret_value(SecretId="app-dev/db")["SecretString"]) == {"password": password}

    def files_holding_it():
        return [f.name for f in fresh_server.data_dir.iterdir() if password.encode() in f.read_bytes()]

    assert files_holding_it() == []
    fresh_server.kill9()
    fresh_server.start()
    assert files_holding_it() == []
    # A redeploy that changes the secret's name replaces it with the password it had.
    time.sleep(1.0)  # the CLI names its change set after the second
    fresh_server.aws("cloudformation", "deploy", "--stack-name", "noecho", "--template-file", str(path),
                     "--parameter-overrides", "Env=prod")
    assert stack(cfn, "noecho")["StackStatus"] == "UPDATE_COMPLETE"
    assert json.loads(sm.get_secret_value(SecretId="app-prod/db")["SecretString"]) == {"password": password}
    fresh_server.kill9()
    assert files_holding_it() == []


def test_replica_regions_make_replicas_and_follow_updates(cfn, sm, cumulo):
    p = f"rep-{uid()}"
    west = cumulo.client("secretsmanager", region="us-west-2")
    eu = cumulo.client("secretsmanager", region="eu-west-1")

    def body(regions):
        return {"Resources": {"S": {"Type": "AWS::SecretsManager::Secret", "Properties": {
            "Name": f"{p}-s", "SecretString": "v", "ReplicaRegions": [{"Region": r} for r in regions]}}},
            "Outputs": {"Arn": {"Value": {"Ref": "S"}}}}

    create(cfn, p, body(["us-west-2"]))
    arn = outputs(cfn, p)["Arn"]
    status = sm.describe_secret(SecretId=arn)["ReplicationStatus"]
    assert [(r["Region"], r["Status"]) for r in status] == [("us-west-2", "InSync")]
    assert west.get_secret_value(SecretId=f"{p}-s")["SecretString"] == "v"
    # CloudFormation's own tags reach the replica with the primary's.
    tags = {t["Key"] for t in west.describe_secret(SecretId=f"{p}-s")["Tags"]}
    assert "aws:cloudformation:logical-id" in tags

    update(cfn, p, body(["eu-west-1"]))
    status = sm.describe_secret(SecretId=arn)["ReplicationStatus"]
    assert [r["Region"] for r in status] == ["eu-west-1"]
    assert secret_gone(west, f"{p}-s")
    assert eu.get_secret_value(SecretId=f"{p}-s")["SecretString"] == "v"

    delete(cfn, p)
    assert secret_gone(sm, arn)
    assert secret_gone(eu, f"{p}-s")
