"""KMS end to end with boto3 and the AWS CLI: keys that really encrypt, aliases (including the
AWS-managed ones made on first use), policies, key states, rotation, tags, and key material that
survives a restart without ever sitting in the store in clear."""
import base64
import json
import os
import uuid

import botocore.exceptions
import pytest


@pytest.fixture(scope="module")
def kms(cumulo):
    return cumulo.client("kms")


@pytest.fixture(scope="module")
def unchecked(cumulo):
    """A client that sends out-of-range values instead of refusing them itself."""
    return cumulo.client("kms", parameter_validation=False)


def code(exc_info):
    return exc_info.value.response["Error"]["Code"]


def new_key(kms, **kw):
    return kms.create_key(**kw)["KeyMetadata"]


def test_create_describe_and_list(kms, cumulo):
    meta = new_key(kms, Description="app key", Tags=[{"TagKey": "team", "TagValue": "core"}])
    assert meta["KeyState"] == "Enabled" and meta["Enabled"] is True
    assert meta["Arn"] == f"arn:aws:kms:us-east-1:000000000000:key/{meta['KeyId']}"
    assert meta["KeySpec"] == meta["CustomerMasterKeySpec"] == "SYMMETRIC_DEFAULT"
    assert meta["KeyUsage"] == "ENCRYPT_DECRYPT" and meta["KeyManager"] == "CUSTOMER"
    assert meta["Origin"] == "AWS_KMS" and meta["MultiRegion"] is False
    assert meta["EncryptionAlgorithms"] == ["SYMMETRIC_DEFAULT"]
    by_arn = kms.describe_key(KeyId=meta["Arn"])["KeyMetadata"]
    assert by_arn["KeyId"] == meta["KeyId"] and by_arn["Description"] == "app key"
    ids = {k["KeyId"]: k["KeyArn"] for k in kms.get_paginator("list_keys").paginate().build_full_result()["Keys"]}
    assert ids[meta["KeyId"]] == meta["Arn"]
    # The CLI sees the same key.
    out = cumulo.aws("kms", "describe-key", "--key-id", meta["KeyId"])
    assert out["KeyMetadata"]["Arn"] == meta["Arn"]
    # Keys are regional.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cumulo.client("kms", region="eu-west-1").describe_key(KeyId=meta["KeyId"])
    assert code(e) == "NotFoundException"


def test_list_keys_pages(kms):
    for _ in range(3):
        new_key(kms)
    first = kms.list_keys(Limit=2)
    assert len(first["Keys"]) == 2 and first["Truncated"] is True
    second = kms.list_keys(Limit=2, Marker=first["NextMarker"])
    assert not {k["KeyId"] for k in first["Keys"]} & {k["KeyId"] for k in second["Keys"]}


def test_create_key_refusals(kms):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.create_key(KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.create_key(Policy="not json")
    assert code(e) == "MalformedPolicyDocumentException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.describe_key(KeyId=str(uuid.uuid4()))
    assert code(e) == "NotFoundException"
    assert "does not exist" in e.value.response["Error"]["Message"]


def test_encrypt_decrypt_with_context(kms, unchecked):
    key = new_key(kms)["KeyId"]
    ct = kms.encrypt(KeyId=key, Plaintext=b"attack at dawn", EncryptionContext={"app": "x"})
    assert ct["KeyId"].endswith(key) and ct["EncryptionAlgorithm"] == "SYMMETRIC_DEFAULT"
    assert b"attack at dawn" not in ct["CiphertextBlob"]
    # No KeyId needed: the blob names its key.
    out = kms.decrypt(CiphertextBlob=ct["CiphertextBlob"], EncryptionContext={"app": "x"})
    assert out["Plaintext"] == b"attack at dawn" and out["KeyId"].endswith(key)
    for wrong in ({}, {"app": "y"}, {"app": "x", "extra": "1"}):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            kms.decrypt(CiphertextBlob=ct["CiphertextBlob"], EncryptionContext=wrong)
        assert code(e) == "InvalidCiphertextException"
    other = new_key(kms)["KeyId"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.decrypt(CiphertextBlob=ct["CiphertextBlob"], EncryptionContext={"app": "x"}, KeyId=other)
    assert code(e) == "IncorrectKeyException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.decrypt(CiphertextBlob=b"garbage-bytes")
    assert code(e) == "InvalidCiphertextException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        unchecked.encrypt(KeyId=key, Plaintext=b"x" * 4097)
    assert code(e) == "ValidationException"


def test_cli_encrypt_decrypt_round_trip(cumulo, kms, tmp_path):
    key = new_key(kms)["KeyId"]
    (tmp_path / "plain").write_bytes(b"cli secret")
    blob = cumulo.aws("kms", "encrypt", "--key-id", key, "--plaintext", f"fileb://{tmp_path / 'plain'}")
    # The CLI prints blobs base64; fileb:// hands it raw bytes back.
    (tmp_path / "ct").write_bytes(base64.b64decode(blob["CiphertextBlob"]))
    out = cumulo.aws("kms", "decrypt", "--ciphertext-blob", f"fileb://{tmp_path / 'ct'}")
    assert base64.b64decode(out["Plaintext"]) == b"cli secret"


def test_data_keys_reencrypt_and_random(kms, unchecked):
    key = new_key(kms)["KeyId"]
    dk = kms.generate_data_key(KeyId=key, KeySpec="AES_256")
    assert len(dk["Plaintext"]) == 32
    assert kms.decrypt(CiphertextBlob=dk["CiphertextBlob"])["Plaintext"] == dk["Plaintext"]
    assert len(kms.generate_data_key(KeyId=key, NumberOfBytes=7)["Plaintext"]) == 7
    assert len(kms.generate_data_key(KeyId=key, KeySpec="AES_128")["Plaintext"]) == 16
    wp = kms.generate_data_key_without_plaintext(KeyId=key, KeySpec="AES_256")
    assert "Plaintext" not in wp
    assert len(kms.decrypt(CiphertextBlob=wp["CiphertextBlob"])["Plaintext"]) == 32
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.generate_data_key(KeyId=key)
    assert code(e) == "ValidationException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        unchecked.generate_data_key(KeyId=key, NumberOfBytes=2000)
    assert code(e) == "ValidationException"

    dest = new_key(kms)["KeyId"]
    ct = kms.encrypt(KeyId=key, Plaintext=b"move me", EncryptionContext={"a": "1"})["CiphertextBlob"]
    re = kms.re_encrypt(
        CiphertextBlob=ct, SourceEncryptionContext={"a": "1"}, DestinationKeyId=dest, DestinationEncryptionContext={"b": "2"}
    )
    assert re["SourceKeyId"].endswith(key) and re["KeyId"].endswith(dest)
    assert kms.decrypt(CiphertextBlob=re["CiphertextBlob"], EncryptionContext={"b": "2"})["Plaintext"] == b"move me"

    r1, r2 = kms.generate_random(NumberOfBytes=64)["Plaintext"], kms.generate_random(NumberOfBytes=64)["Plaintext"]
    assert len(r1) == 64 and r1 != r2
    with pytest.raises(botocore.exceptions.ClientError) as e:
        unchecked.generate_random(NumberOfBytes=0)
    assert code(e) == "ValidationException"


def test_aliases(kms):
    a, b = new_key(kms)["KeyId"], new_key(kms)["KeyId"]
    name = f"alias/app-{uuid.uuid4().hex[:8]}"
    kms.create_alias(AliasName=name, TargetKeyId=a)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.create_alias(AliasName=name, TargetKeyId=b)
    assert code(e) == "AlreadyExistsException"
    # Every KeyId-taking crypto call accepts the alias name and the alias ARN.
    alias_arn = f"arn:aws:kms:us-east-1:000000000000:{name}"
    for ref in (name, alias_arn):
        ct = kms.encrypt(KeyId=ref, Plaintext=b"via alias")
        assert ct["KeyId"].endswith(a)
    assert kms.describe_key(KeyId=name)["KeyMetadata"]["KeyId"] == a
    entry = next(x for x in kms.list_aliases(KeyId=a)["Aliases"] if x["AliasName"] == name)
    assert entry["AliasArn"] == alias_arn and entry["TargetKeyId"] == a
    kms.update_alias(AliasName=name, TargetKeyId=b)
    assert kms.describe_key(KeyId=name)["KeyMetadata"]["KeyId"] == b
    assert all(x["AliasName"] != name for x in kms.list_aliases(KeyId=a)["Aliases"])
    # Operations that do not take aliases refuse them, as AWS.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.disable_key(KeyId=name)
    assert code(e) == "NotFoundException"
    for bad in ("noprefix", "alias/aws/mine"):
        with pytest.raises(botocore.exceptions.ClientError):
            kms.create_alias(AliasName=bad, TargetKeyId=a)
    kms.delete_alias(AliasName=name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.describe_key(KeyId=name)
    assert code(e) == "NotFoundException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.delete_alias(AliasName=name)
    assert code(e) == "NotFoundException"


def test_aws_managed_key_made_on_first_use(kms):
    meta = kms.describe_key(KeyId="alias/aws/s3")["KeyMetadata"]
    assert meta["KeyManager"] == "AWS"
    assert kms.describe_key(KeyId="alias/aws/s3")["KeyMetadata"]["KeyId"] == meta["KeyId"]
    names = [a["AliasName"] for a in kms.get_paginator("list_aliases").paginate().build_full_result()["Aliases"]]
    assert "alias/aws/s3" in names
    assert kms.get_key_rotation_status(KeyId=meta["KeyId"])["KeyRotationEnabled"] is True
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.disable_key(KeyId=meta["KeyId"])
    assert code(e) == "AccessDeniedException"


def test_policies_description_and_tags(kms):
    key = new_key(kms)["KeyId"]
    policy = json.loads(kms.get_key_policy(KeyId=key, PolicyName="default")["Policy"])
    assert policy["Statement"][0]["Principal"] == {"AWS": "arn:aws:iam::000000000000:root"}
    assert kms.list_key_policies(KeyId=key)["PolicyNames"] == ["default"]
    mine = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "kms:*", "Resource": "*"}]}
    kms.put_key_policy(KeyId=key, PolicyName="default", Policy=json.dumps(mine))
    assert json.loads(kms.get_key_policy(KeyId=key, PolicyName="default")["Policy"]) == mine
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.put_key_policy(KeyId=key, PolicyName="default", Policy="{broken")
    assert code(e) == "MalformedPolicyDocumentException"

    kms.update_key_description(KeyId=key, Description="renamed")
    assert kms.describe_key(KeyId=key)["KeyMetadata"]["Description"] == "renamed"

    kms.tag_resource(KeyId=key, Tags=[{"TagKey": "a", "TagValue": "1"}, {"TagKey": "b", "TagValue": "2"}])
    kms.tag_resource(KeyId=key, Tags=[{"TagKey": "a", "TagValue": "9"}])
    kms.untag_resource(KeyId=key, TagKeys=["b"])
    assert kms.list_resource_tags(KeyId=key)["Tags"] == [{"TagKey": "a", "TagValue": "9"}]


def test_enable_disable_and_rotation(kms, unchecked):
    key = new_key(kms)["KeyId"]
    ct = kms.encrypt(KeyId=key, Plaintext=b"x")["CiphertextBlob"]
    assert kms.get_key_rotation_status(KeyId=key)["KeyRotationEnabled"] is False
    kms.enable_key_rotation(KeyId=key, RotationPeriodInDays=180)
    status = kms.get_key_rotation_status(KeyId=key)
    assert status["KeyRotationEnabled"] is True and status["RotationPeriodInDays"] == 180
    with pytest.raises(botocore.exceptions.ClientError) as e:
        unchecked.enable_key_rotation(KeyId=key, RotationPeriodInDays=30)
    assert code(e) == "ValidationException"
    kms.disable_key_rotation(KeyId=key)
    assert kms.get_key_rotation_status(KeyId=key)["KeyRotationEnabled"] is False

    kms.disable_key(KeyId=key)
    meta = kms.describe_key(KeyId=key)["KeyMetadata"]
    assert meta["KeyState"] == "Disabled" and meta["Enabled"] is False
    for call in (lambda: kms.encrypt(KeyId=key, Plaintext=b"x"), lambda: kms.decrypt(CiphertextBlob=ct),
                 lambda: kms.generate_data_key(KeyId=key, KeySpec="AES_256")):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            call()
        assert code(e) == "DisabledException"
    kms.enable_key(KeyId=key)
    assert kms.decrypt(CiphertextBlob=ct)["Plaintext"] == b"x"


def test_schedule_and_cancel_deletion(kms, unchecked):
    key = new_key(kms)["KeyId"]
    ct = kms.encrypt(KeyId=key, Plaintext=b"x")["CiphertextBlob"]
    for bad in (6, 31):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            unchecked.schedule_key_deletion(KeyId=key, PendingWindowInDays=bad)
        assert code(e) == "ValidationException"
    out = kms.schedule_key_deletion(KeyId=key, PendingWindowInDays=7)
    assert out["KeyState"] == "PendingDeletion" and out["PendingWindowInDays"] == 7
    meta = kms.describe_key(KeyId=key)["KeyMetadata"]
    assert meta["KeyState"] == "PendingDeletion" and "DeletionDate" in meta
    for call in (lambda: kms.encrypt(KeyId=key, Plaintext=b"x"), lambda: kms.decrypt(CiphertextBlob=ct),
                 lambda: kms.enable_key(KeyId=key), lambda: kms.schedule_key_deletion(KeyId=key)):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            call()
        assert code(e) == "KMSInvalidStateException"
    assert kms.cancel_key_deletion(KeyId=key)["KeyId"].endswith(key)
    assert kms.describe_key(KeyId=key)["KeyMetadata"]["KeyState"] == "Disabled"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.cancel_key_deletion(KeyId=key)
    assert code(e) == "KMSInvalidStateException"
    kms.enable_key(KeyId=key)
    assert kms.decrypt(CiphertextBlob=ct)["Plaintext"] == b"x"


def test_unimplemented_operation_answers_501(kms):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.list_grants(KeyId=new_key(kms)["KeyId"])
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501
    assert "ListGrants" in e.value.response["Error"]["Message"]


def test_round_trip_after_restart_and_master_key_private(fresh_server):
    fresh_server.start()
    kms = fresh_server.client("kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    kms.create_alias(AliasName="alias/kept", TargetKeyId=key)
    ct = kms.encrypt(KeyId="alias/kept", Plaintext=b"survives", EncryptionContext={"k": "v"})["CiphertextBlob"]
    fresh_server.stop()
    fresh_server.start()
    kms = fresh_server.client("kms")
    assert kms.decrypt(CiphertextBlob=ct, EncryptionContext={"k": "v"})["Plaintext"] == b"survives"
    assert kms.describe_key(KeyId="alias/kept")["KeyMetadata"]["KeyId"] == key
    master = fresh_server.data_dir / "master.key"
    assert master.stat().st_size == 32 and (master.stat().st_mode & 0o777) == 0o600
    # A crash keeps committed keys too.
    k2 = kms.create_key()["KeyMetadata"]["KeyId"]
    ct2 = kms.encrypt(KeyId=k2, Plaintext=b"after crash")["CiphertextBlob"]
    fresh_server.kill9()
    fresh_server.start()
    assert fresh_server.client("kms").decrypt(CiphertextBlob=ct2)["Plaintext"] == b"after crash"


def test_master_key_is_what_unlocks_the_store(fresh_server):
    """Without the data directory's master.key the stored keys are useless: the store alone
    holds no usable key material."""
    fresh_server.start()
    kms = fresh_server.client("kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    ct = kms.encrypt(KeyId=key, Plaintext=b"x")["CiphertextBlob"]
    fresh_server.stop()
    os.remove(fresh_server.data_dir / "master.key")
    fresh_server.start()
    kms = fresh_server.client("kms")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        kms.decrypt(CiphertextBlob=ct)
    assert code(e) == "NotFoundException"


def test_malformed_bodies_are_refused_cleanly(cumulo):
    target = {"X-Amz-Target": "TrentService.CreateKey", "Content-Type": "application/x-amz-json-1.1"}
    auth = {"Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/kms/aws4_request, SignedHeaders=host, Signature=00"}
    for body in (b"[1,2]", b"{not json", b'{"Description": 5}', b'{"Tags": "x"}'):
        r = cumulo.raw("POST", "/", headers=[*target.items(), *auth.items()], body=body)
        assert r.status == 400 and r.error_code() == "SerializationException", (body, r.body)
    r = cumulo.raw("POST", "/", headers=[("X-Amz-Target", "TrentService.Decrypt"), ("Content-Type", "application/x-amz-json-1.1"), *auth.items()],
                   body=b'{"CiphertextBlob": "%%%notbase64"}')
    assert r.status == 400
    r = cumulo.raw("POST", "/", headers=[("X-Amz-Target", "secretsmanager.GetSecretValue"), ("Content-Type", "text/plain"),
                                         ("Authorization", auth["Authorization"].replace("/kms/", "/secretsmanager/"))], body=b"{}")
    assert r.status == 400 and r.error_code() == "SerializationException"


def test_ssm_securestrings_are_encrypted_under_their_kms_key(cumulo, kms):
    ssm = cumulo.client("ssm")
    key = new_key(kms)["KeyId"]
    alias = f"alias/ssm-{uuid.uuid4().hex[:8]}"
    kms.create_alias(AliasName=alias, TargetKeyId=key)
    name = f"/kms/{uuid.uuid4().hex[:8]}"
    ssm.put_parameter(Name=name, Value="under-customer-key", Type="SecureString", KeyId=alias)
    p = ssm.get_parameter(Name=name)["Parameter"]
    # Without decryption: the KMS ciphertext, which KMS itself decrypts given the parameter's
    # encryption context, as on AWS.
    blob = base64.b64decode(p["Value"])
    arn = f"arn:aws:ssm:us-east-1:000000000000:parameter{name}"
    out = kms.decrypt(CiphertextBlob=blob, EncryptionContext={"PARAMETER_ARN": arn})
    assert out["Plaintext"] == b"under-customer-key" and out["KeyId"].endswith(key)
    assert ssm.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"] == "under-customer-key"
    kms.disable_key(KeyId=key)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ssm.get_parameter(Name=name, WithDecryption=True)
    assert code(e) == "DisabledException"
    kms.enable_key(KeyId=key)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ssm.put_parameter(Name=f"{name}-x", Value="v", Type="SecureString", KeyId="alias/none-such")
    assert code(e) == "InvalidKeyId"
