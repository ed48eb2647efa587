"""Secrets Manager end to end with boto3 and the AWS CLI: values and versions with their stages,
listing, random passwords, tags, resource policies, deletion and restore, and values (and SSM
SecureStrings) that never reach the data directory in clear."""
import json
import uuid

import botocore.exceptions
import pytest


@pytest.fixture(scope="module")
def sm(cumulo):
    return cumulo.client("secretsmanager")


@pytest.fixture(scope="module")
def unchecked(cumulo):
    return cumulo.client("secretsmanager", parameter_validation=False)


def code(exc_info):
    return exc_info.value.response["Error"]["Code"]


def name():
    return f"app/{uuid.uuid4().hex[:10]}"


def stages(sm, secret):
    return sm.describe_secret(SecretId=secret)["VersionIdsToStages"]


def test_create_get_and_arn_forms(sm):
    n = name()
    out = sm.create_secret(Name=n, SecretString="s3cret", Description="db password")
    arn = out["ARN"]
    assert arn.startswith(f"arn:aws:secretsmanager:us-east-1:000000000000:secret:{n}-")
    assert len(arn) == len(f"arn:aws:secretsmanager:us-east-1:000000000000:secret:{n}-") + 6
    for ref in (n, arn, arn[:-7]):
        v = sm.get_secret_value(SecretId=ref)
        assert v["SecretString"] == "s3cret" and v["ARN"] == arn and v["Name"] == n
        assert v["VersionStages"] == ["AWSCURRENT"] and v["VersionId"] == out["VersionId"]
    d = sm.describe_secret(SecretId=n)
    assert d["Description"] == "db password" and "KmsKeyId" not in d
    assert d["VersionIdsToStages"] == {out["VersionId"]: ["AWSCURRENT"]}
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.create_secret(Name=n, SecretString="again")
    assert code(e) == "ResourceExistsException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.get_secret_value(SecretId="does-not-exist")
    assert code(e) == "ResourceNotFoundException"
    assert e.value.response["Error"]["Message"] == "Secrets Manager can't find the specified secret."


def test_binary_secret_and_refusals(sm):
    n = name()
    sm.create_secret(Name=n, SecretBinary=b"\x00\x01binary\xff")
    assert sm.get_secret_value(SecretId=n)["SecretBinary"] == b"\x00\x01binary\xff"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.create_secret(Name=name(), SecretString="a", SecretBinary=b"b")
    assert code(e) == "InvalidParameterException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.create_secret(Name="bad name!", SecretString="x")
    assert code(e) == "InvalidParameterException"
    empty = name()
    sm.create_secret(Name=empty)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.get_secret_value(SecretId=empty)
    assert code(e) == "ResourceNotFoundException"


def test_client_request_token_idempotency(sm):
    n, token = name(), str(uuid.uuid4())
    first = sm.create_secret(Name=n, SecretString="v", ClientRequestToken=token)
    again = sm.create_secret(Name=n, SecretString="v", ClientRequestToken=token)
    assert first["ARN"] == again["ARN"] and again["VersionId"] == token
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.create_secret(Name=n, SecretString="different", ClientRequestToken=token)
    assert code(e) == "ResourceExistsException"
    t2 = str(uuid.uuid4())
    sm.put_secret_value(SecretId=n, SecretString="v2", ClientRequestToken=t2)
    sm.put_secret_value(SecretId=n, SecretString="v2", ClientRequestToken=t2)
    assert len(stages(sm, n)) == 2
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.put_secret_value(SecretId=n, SecretString="v3", ClientRequestToken=t2)
    assert code(e) == "ResourceExistsException"


def test_versions_and_stages(sm):
    n = name()
    v1 = sm.create_secret(Name=n, SecretString="one")["VersionId"]
    v2 = sm.put_secret_value(SecretId=n, SecretString="two")["VersionId"]
    assert stages(sm, n) == {v1: ["AWSPREVIOUS"], v2: ["AWSCURRENT"]}
    v3 = sm.update_secret(SecretId=n, SecretString="three")["VersionId"]
    assert stages(sm, n) == {v2: ["AWSPREVIOUS"], v3: ["AWSCURRENT"]}
    assert sm.get_secret_value(SecretId=n, VersionStage="AWSPREVIOUS")["SecretString"] == "two"
    assert sm.get_secret_value(SecretId=n, VersionId=v1)["SecretString"] == "one"
    pending = sm.put_secret_value(SecretId=n, SecretString="four", VersionStages=["AWSPENDING"])
    assert pending["VersionStages"] == ["AWSPENDING"]
    v4 = pending["VersionId"]
    assert sm.get_secret_value(SecretId=n)["SecretString"] == "three"
    assert sm.get_secret_value(SecretId=n, VersionStage="AWSPENDING")["SecretString"] == "four"
    # Promote the pending version the way rotation does.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.update_secret_version_stage(SecretId=n, VersionStage="AWSCURRENT", MoveToVersionId=v4)
    assert code(e) == "InvalidParameterException"
    sm.update_secret_version_stage(SecretId=n, VersionStage="AWSCURRENT", MoveToVersionId=v4, RemoveFromVersionId=v3)
    sm.update_secret_version_stage(SecretId=n, VersionStage="AWSPENDING", RemoveFromVersionId=v4)
    assert stages(sm, n) == {v3: ["AWSPREVIOUS"], v4: ["AWSCURRENT"]}
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.get_secret_value(SecretId=n, VersionId=v4, VersionStage="AWSPREVIOUS")
    assert code(e) == "InvalidParameterException"

    listed = sm.list_secret_version_ids(SecretId=n)
    assert {v["VersionId"] for v in listed["Versions"]} == {v3, v4}
    all_versions = sm.list_secret_version_ids(SecretId=n, IncludeDeprecated=True)["Versions"]
    assert {v["VersionId"] for v in all_versions} == {v1, v2, v3, v4}
    assert all(v["KmsKeyIds"][0].startswith("arn:aws:kms:") for v in all_versions)
    page = sm.list_secret_version_ids(SecretId=n, IncludeDeprecated=True, MaxResults=3)
    assert len(page["Versions"]) == 3 and "NextToken" in page


def test_update_description_and_customer_kms_key(sm, cumulo):
    kms = cumulo.client("kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    n = name()
    sm.create_secret(Name=n, SecretString="under my key", KmsKeyId=key)
    d = sm.describe_secret(SecretId=n)
    assert d["KmsKeyId"] == key
    v = sm.list_secret_version_ids(SecretId=n)["Versions"][0]
    assert v["KmsKeyIds"][0].endswith(key)
    sm.update_secret(SecretId=n, Description="new words")
    assert sm.describe_secret(SecretId=n)["Description"] == "new words"
    # The value is really bound to the key: disable it and the secret cannot be read.
    kms.disable_key(KeyId=key)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.get_secret_value(SecretId=n)
    assert code(e) == "DecryptionFailure"
    kms.enable_key(KeyId=key)
    assert sm.get_secret_value(SecretId=n)["SecretString"] == "under my key"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.create_secret(Name=name(), SecretString="x", KmsKeyId="alias/none-such")
    assert code(e) == "InvalidParameterException"
    # The default key is the account's AWS-managed aws/secretsmanager key.
    assert kms.describe_key(KeyId="alias/aws/secretsmanager")["KeyMetadata"]["KeyManager"] == "AWS"


def test_list_filters_sorting_and_pages(sm):
    tag = uuid.uuid4().hex[:8]
    names = [f"list-{tag}/{i}" for i in range(3)]
    for i, n in enumerate(names):
        sm.create_secret(Name=n, SecretString="x", Description=f"desc {i}", Tags=[{"Key": "grp", "Value": tag}])
    def listed(**kw):
        return [s["Name"] for s in sm.get_paginator("list_secrets").paginate(**kw).build_full_result()["SecretList"]]
    assert listed(Filters=[{"Key": "name", "Values": [f"list-{tag}"]}]) == names
    assert listed(Filters=[{"Key": "name", "Values": [f"list-{tag}"]}], SortOrder="desc") == names[::-1]
    assert listed(Filters=[{"Key": "tag-value", "Values": [tag]}, {"Key": "description", "Values": ["desc 1"]}]) == [names[1]]
    assert listed(Filters=[{"Key": "tag-value", "Values": [tag]}, {"Key": "name", "Values": [f"!{names[0]}"]}]) == names[1:]
    page = sm.list_secrets(Filters=[{"Key": "tag-key", "Values": ["grp"]}, {"Key": "tag-value", "Values": [tag]}], MaxResults=2)
    assert len(page["SecretList"]) == 2 and "NextToken" in page
    entry = page["SecretList"][0]
    assert "SecretVersionsToStages" in entry and entry["Tags"] == [{"Key": "grp", "Value": tag}]


def test_cli_create_and_get(cumulo):
    n = name()
    created = cumulo.aws("secretsmanager", "create-secret", "--name", n, "--secret-string", '{"user":"cli"}')
    got = cumulo.aws("secretsmanager", "get-secret-value", "--secret-id", created["ARN"])
    assert json.loads(got["SecretString"]) == {"user": "cli"}
    listed = cumulo.aws("secretsmanager", "list-secrets", "--filters", f"Key=name,Values={n}")
    assert [s["Name"] for s in listed["SecretList"]] == [n]


def test_random_password_options(sm, unchecked):
    assert len(sm.get_random_password()["RandomPassword"]) == 32
    pw = sm.get_random_password(PasswordLength=50, ExcludePunctuation=True, ExcludeUppercase=True, ExcludeCharacters="aeiou")["RandomPassword"]
    assert len(pw) == 50 and all(c.islower() or c.isdigit() for c in pw) and not set(pw) & set("aeiou")
    pw = sm.get_random_password(PasswordLength=4, RequireEachIncludedType=True)["RandomPassword"]
    assert any(c.islower() for c in pw) and any(c.isupper() for c in pw) and any(c.isdigit() for c in pw)
    assert any(not c.isalnum() for c in pw)
    pw = sm.get_random_password(PasswordLength=40, ExcludeLowercase=True, ExcludeUppercase=True, ExcludeNumbers=True,
                                ExcludePunctuation=True, IncludeSpace=True)["RandomPassword"]
    assert pw == " " * 40
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.get_random_password(ExcludeLowercase=True, ExcludeUppercase=True, ExcludeNumbers=True, ExcludePunctuation=True)
    assert code(e) == "InvalidParameterException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        unchecked.get_random_password(PasswordLength=0)
    assert code(e) == "ValidationException"


def test_tags_and_resource_policy(sm):
    n = name()
    sm.create_secret(Name=n, SecretString="x", Tags=[{"Key": "a", "Value": "1"}])
    sm.tag_resource(SecretId=n, Tags=[{"Key": "b", "Value": "2"}, {"Key": "a", "Value": "3"}])
    sm.untag_resource(SecretId=n, TagKeys=["b"])
    assert sm.describe_secret(SecretId=n)["Tags"] == [{"Key": "a", "Value": "3"}]
    assert "ResourcePolicy" not in sm.get_resource_policy(SecretId=n)
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::000000000000:root"}, "Action": "secretsmanager:GetSecretValue", "Resource": "*"}]}
    sm.put_resource_policy(SecretId=n, ResourcePolicy=json.dumps(policy))
    assert json.loads(sm.get_resource_policy(SecretId=n)["ResourcePolicy"]) == policy
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.put_resource_policy(SecretId=n, ResourcePolicy="{nope")
    assert code(e) == "MalformedPolicyDocumentException"
    sm.delete_resource_policy(SecretId=n)
    assert "ResourcePolicy" not in sm.get_resource_policy(SecretId=n)


def test_delete_restore_and_force(sm, unchecked):
    n = name()
    sm.create_secret(Name=n, SecretString="x")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        unchecked.delete_secret(SecretId=n, RecoveryWindowInDays=3)
    assert code(e) == "InvalidParameterException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.delete_secret(SecretId=n, RecoveryWindowInDays=7, ForceDeleteWithoutRecovery=True)
    assert code(e) == "InvalidParameterException"
    out = sm.delete_secret(SecretId=n, RecoveryWindowInDays=7)
    assert "DeletionDate" in out
    assert "DeletedDate" in sm.describe_secret(SecretId=n)
    for call in (lambda: sm.get_secret_value(SecretId=n), lambda: sm.put_secret_value(SecretId=n, SecretString="y"),
                 lambda: sm.delete_secret(SecretId=n), lambda: sm.create_secret(Name=n, SecretString="z")):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            call()
        assert code(e) == "InvalidRequestException"
    names = [s["Name"] for s in sm.list_secrets(Filters=[{"Key": "name", "Values": [n]}])["SecretList"]]
    assert names == []
    names = [s["Name"] for s in sm.list_secrets(Filters=[{"Key": "name", "Values": [n]}], IncludePlannedDeletion=True)["SecretList"]]
    assert names == [n]
    sm.restore_secret(SecretId=n)
    assert sm.get_secret_value(SecretId=n)["SecretString"] == "x"
    sm.delete_secret(SecretId=n, ForceDeleteWithoutRecovery=True)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.describe_secret(SecretId=n)
    assert code(e) == "ResourceNotFoundException"
    sm.create_secret(Name=n, SecretString="reborn")
    assert sm.get_secret_value(SecretId=n)["SecretString"] == "reborn"


def test_batch_get_secret_value(sm):
    a, b = name(), name()
    sm.create_secret(Name=a, SecretString="A")
    sm.create_secret(Name=b, SecretString="B", Tags=[{"Key": "batch", "Value": a}])
    out = sm.batch_get_secret_value(SecretIdList=[a, b, "missing-one"])
    assert {v["Name"]: v["SecretString"] for v in out["SecretValues"]} == {a: "A", b: "B"}
    assert out["Errors"] == [{"SecretId": "missing-one", "ErrorCode": "ResourceNotFoundException",
                              "Message": "Secrets Manager can't find the specified secret."}]
    out = sm.batch_get_secret_value(Filters=[{"Key": "tag-value", "Values": [a]}])
    assert [v["SecretString"] for v in out["SecretValues"]] == ["B"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.batch_get_secret_value(SecretIdList=[a], Filters=[{"Key": "name", "Values": [a]}])
    assert code(e) == "InvalidParameterException"


def test_rotation_answers_501(sm):
    n = name()
    sm.create_secret(Name=n, SecretString="x")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.rotate_secret(SecretId=n)
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501


def test_replicas_are_secrets_in_other_regions(sm, cumulo):
    n = name()
    west, eu = cumulo.client("secretsmanager", region="us-west-2"), cumulo.client("secretsmanager", region="eu-west-1")
    out = sm.create_secret(Name=n, SecretString="v1", AddReplicaRegions=[{"Region": "us-west-2"}])
    assert out["ReplicationStatus"] == [{"Region": "us-west-2", "KmsKeyId": "alias/aws/secretsmanager",
                                         "Status": "InSync", "StatusMessage": "Replication succeeded"}]
    primary = sm.describe_secret(SecretId=n)
    assert primary["PrimaryRegion"] == "us-east-1"
    assert [r["Region"] for r in primary["ReplicationStatus"]] == ["us-west-2"]
    # The replica: same name and suffix, its region's ARN, the value, kept in step.
    replica = west.describe_secret(SecretId=n)
    assert replica["ARN"] == out["ARN"].replace(":us-east-1:", ":us-west-2:")
    assert replica["PrimaryRegion"] == "us-east-1" and "ReplicationStatus" not in replica
    assert west.get_secret_value(SecretId=n)["SecretString"] == "v1"
    sm.put_secret_value(SecretId=n, SecretString="v2")
    sm.tag_resource(SecretId=n, Tags=[{"Key": "team", "Value": "a"}])
    assert west.get_secret_value(SecretId=n)["SecretString"] == "v2"
    assert west.describe_secret(SecretId=n)["Tags"] == [{"Key": "team", "Value": "a"}]

    # A replica takes no changes; a primary with replicas cannot be deleted.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        west.put_secret_value(SecretId=n, SecretString="x")
    assert e.value.response["Error"] == {
        "Code": "InvalidParameterException",
        "Message": "Operation not permitted on a replica secret. Call must be made in primary secret's region."}
    assert west.get_secret_value(SecretId=n)["SecretString"] == "v2"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.delete_secret(SecretId=n, ForceDeleteWithoutRecovery=True)
    assert e.value.response["Error"]["Message"] == (
        f"You can't delete secret {out['ARN']} that still has replica regions [us-west-2].")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sm.replicate_secret_to_regions(SecretId=n, AddReplicaRegions=[{"Region": "us-east-1"}])
    assert code(e) == "InvalidParameterException"

    # A region already holding the name: Failed, that secret untouched, unless forced.
    eu.create_secret(Name=n, SecretString="theirs")
    got = sm.replicate_secret_to_regions(SecretId=n, AddReplicaRegions=[{"Region": "eu-west-1"}])
    failed = [r for r in got["ReplicationStatus"] if r["Region"] == "eu-west-1"][0]
    assert failed["Status"] == "Failed"
    assert failed["StatusMessage"] == f"Replication failed: Secret name {n} already exists in region eu-west-1."
    assert eu.get_secret_value(SecretId=n)["SecretString"] == "theirs"
    got = sm.replicate_secret_to_regions(SecretId=n, AddReplicaRegions=[{"Region": "eu-west-1"}],
                                         ForceOverwriteReplicaSecret=True)
    assert {r["Region"]: r["Status"] for r in got["ReplicationStatus"]} == {"us-west-2": "InSync", "eu-west-1": "InSync"}
    assert eu.get_secret_value(SecretId=n)["SecretString"] == "v2"

    # Removing a region deletes its replica; stopping one makes it a secret of its own.
    got = sm.remove_regions_from_replication(SecretId=n, RemoveReplicaRegions=["us-west-2"])
    assert [r["Region"] for r in got["ReplicationStatus"]] == ["eu-west-1"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        west.describe_secret(SecretId=n)
    assert code(e) == "ResourceNotFoundException"
    eu.stop_replication_to_replica(SecretId=n)
    assert "PrimaryRegion" not in eu.describe_secret(SecretId=n)
    assert "ReplicationStatus" not in sm.describe_secret(SecretId=n)
    eu.put_secret_value(SecretId=n, SecretString="own")
    assert sm.get_secret_value(SecretId=n)["SecretString"] == "v2"
    sm.delete_secret(SecretId=n, ForceDeleteWithoutRecovery=True)
    eu.delete_secret(SecretId=n, ForceDeleteWithoutRecovery=True)


def test_values_survive_restart_and_never_reach_disk_in_clear(fresh_server):
    fresh_server.start()
    sm = fresh_server.client("secretsmanager")
    ssm = fresh_server.client("ssm")
    secret_value = f"secret-{uuid.uuid4().hex}"
    binary_value = f"binary-{uuid.uuid4().hex}".encode()
    secure_value = f"securestring-{uuid.uuid4().hex}"
    sm.create_secret(Name="plain/one", SecretString=secret_value, AddReplicaRegions=[{"Region": "us-west-2"}])
    sm.create_secret(Name="plain/bin", SecretBinary=binary_value)
    sm.put_secret_value(SecretId="plain/one", SecretString=secret_value + "-v2")
    ssm.put_parameter(Name="/app/secure", Value=secure_value, Type="SecureString")
    # Without decryption SSM returns KMS ciphertext, as AWS does.
    raw = ssm.get_parameter(Name="/app/secure")["Parameter"]["Value"]
    assert raw != secure_value and secure_value not in raw
    assert fresh_server.client("kms").describe_key(KeyId="alias/aws/ssm")["KeyMetadata"]["KeyManager"] == "AWS"

    def grep_data_dir():
        found = []
        for f in fresh_server.data_dir.iterdir():
            data = f.read_bytes()
            for needle in (secret_value.encode(), binary_value, secure_value.encode()):
                if needle in data:
                    found.append((f.name, needle))
        return found

    files = {f.name for f in fresh_server.data_dir.iterdir()}
    assert {"cumulo.db", "cumulo.db-wal"} <= files, files
    assert grep_data_dir() == []
    fresh_server.stop()
    assert grep_data_dir() == []
    fresh_server.start()
    sm = fresh_server.client("secretsmanager")
    assert sm.get_secret_value(SecretId="plain/one")["SecretString"] == secret_value + "-v2"
    assert sm.get_secret_value(SecretId="plain/one", VersionStage="AWSPREVIOUS")["SecretString"] == secret_value
    assert sm.get_secret_value(SecretId="plain/bin")["SecretBinary"] == binary_value
    west = fresh_server.client("secretsmanager", region="us-west-2")
    assert west.get_secret_value(SecretId="plain/one")["SecretString"] == secret_value + "-v2"
    assert sm.describe_secret(SecretId="plain/one")["ReplicationStatus"][0]["Status"] == "InSync"
    ssm = fresh_server.client("ssm")
    assert ssm.get_parameter(Name="/app/secure", WithDecryption=True)["Parameter"]["Value"] == secure_value
