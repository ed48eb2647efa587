"""STS: caller identity, AssumeRole and GetSessionToken through boto3 and the AWS CLI."""
import datetime

import boto3
import botocore.config
import pytest
from botocore.exceptions import ClientError

ROLE = "arn:aws:iam::000000000000:role/deploy/MyRole"
TRUST = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"000000000000"},"Action":"sts:AssumeRole"}]}'


@pytest.fixture(scope="module", autouse=True)
def role(cumulo):
    """The role the tests assume: AssumeRole refuses a role IAM does not have."""
    iam = cumulo.client("iam")
    try:
        iam.get_role(RoleName="MyRole")
    except ClientError:
        iam.create_role(RoleName="MyRole", Path="/deploy/", AssumeRolePolicyDocument=TRUST, MaxSessionDuration=43200)
    return ROLE


def client_with(server, creds):
    return boto3.client(
        "sts",
        endpoint_url=server.endpoint,
        region_name="us-east-1",
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
        config=botocore.config.Config(retries={"max_attempts": 1}),
    )


def test_default_caller_is_account_root(cumulo):
    ident = cumulo.client("sts").get_caller_identity()
    assert ident["Account"] == "000000000000"
    assert ident["Arn"] == "arn:aws:iam::000000000000:root"
    cli = cumulo.aws("sts", "get-caller-identity")
    assert cli["Arn"] == "arn:aws:iam::000000000000:root"
    assert cli["Account"] == "000000000000"


def test_assume_role_issues_asia_credentials_and_identity(cumulo):
    sts = cumulo.client("sts")
    before = datetime.datetime.now(datetime.timezone.utc)
    out = sts.assume_role(RoleArn=ROLE, RoleSessionName="sess-1", DurationSeconds=1800)
    creds = out["Credentials"]
    assert creds["AccessKeyId"].startswith("ASIA") and len(creds["AccessKeyId"]) == 20
    assert len(creds["SecretAccessKey"]) == 40 and creds["SessionToken"]
    lifetime = (creds["Expiration"] - before).total_seconds()
    assert 1790 <= lifetime <= 1810
    user = out["AssumedRoleUser"]
    assert user["Arn"] == "arn:aws:sts::000000000000:assumed-role/MyRole/sess-1"
    assert user["AssumedRoleId"].startswith("AROA") and user["AssumedRoleId"].endswith(":sess-1")
    ident = client_with(cumulo, creds).get_caller_identity()
    assert ident["Arn"] == user["Arn"]
    assert ident["UserId"] == user["AssumedRoleId"]
    # The same role keeps its role id across sessions.
    again = sts.assume_role(RoleArn=ROLE, RoleSessionName="sess-2")
    assert again["AssumedRoleUser"]["AssumedRoleId"].split(":")[0] == user["AssumedRoleId"].split(":")[0]
    assert again["Credentials"]["AccessKeyId"] != creds["AccessKeyId"]


def test_assume_role_default_duration_is_one_hour(cumulo):
    before = datetime.datetime.now(datetime.timezone.utc)
    creds = cumulo.client("sts").assume_role(RoleArn=ROLE, RoleSessionName="dd")["Credentials"]
    assert 3590 <= (creds["Expiration"] - before).total_seconds() <= 3610


@pytest.mark.parametrize(
    "kwargs,fragment",
    [
        ({"DurationSeconds": 899}, "greater than or equal to 900"),
        ({"DurationSeconds": 43201}, "less than or equal to 43200"),
        ({"RoleSessionName": "bad name!"}, "regular expression pattern"),
        ({"RoleArn": "arn:aws:iam::000000000000:user/bob"}, "is invalid"),
    ],
)
def test_assume_role_validation(cumulo, kwargs, fragment):
    args = {"RoleArn": ROLE, "RoleSessionName": "ok", **kwargs}
    with pytest.raises(ClientError) as e:
        cumulo.client("sts", parameter_validation=False).assume_role(**args)
    assert e.value.response["Error"]["Code"] == "ValidationError"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert fragment in e.value.response["Error"]["Message"]


def test_assume_role_refuses_a_role_iam_does_not_have(cumulo):
    sts = cumulo.client("sts")
    for arn in ("arn:aws:iam::000000000000:role/NoSuchRole",
                "arn:aws:iam::000000000000:role/MyRole",  # exists, but under /deploy/
                "arn:aws:iam::111111111111:role/deploy/MyRole"):
        with pytest.raises(ClientError) as e:
            sts.assume_role(RoleArn=arn, RoleSessionName="nope")
        assert e.value.response["Error"]["Code"] == "AccessDenied"
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403
        assert e.value.response["Error"]["Message"] == (
            f"User: arn:aws:iam::000000000000:root is not authorized to perform: sts:AssumeRole on resource: {arn}")
    # A role's MaxSessionDuration caps the session.
    name = "ShortRole"
    cumulo.client("iam").create_role(RoleName=name, AssumeRolePolicyDocument=TRUST)
    arn = f"arn:aws:iam::000000000000:role/{name}"
    with pytest.raises(ClientError) as e:
        sts.assume_role(RoleArn=arn, RoleSessionName="long", DurationSeconds=7200)
    assert "MaxSessionDuration" in e.value.response["Error"]["Message"]
    assert sts.assume_role(RoleArn=arn, RoleSessionName="ok", DurationSeconds=3600)["Credentials"]


def test_role_chaining_is_limited_to_one_hour(cumulo):
    creds = cumulo.client("sts").assume_role(RoleArn=ROLE, RoleSessionName="first")["Credentials"]
    chained = client_with(cumulo, creds)
    with pytest.raises(ClientError) as e:
        chained.assume_role(RoleArn=ROLE, RoleSessionName="second", DurationSeconds=7200)
    assert "role chaining" in e.value.response["Error"]["Message"]
    out = chained.assume_role(RoleArn=ROLE, RoleSessionName="second", DurationSeconds=3600)
    assert out["AssumedRoleUser"]["Arn"].endswith("/second")


def test_assume_role_policy_and_source_identity(cumulo):
    policy = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}'
    out = cumulo.client("sts").assume_role(RoleArn=ROLE, RoleSessionName="si", Policy=policy,
                                           SourceIdentity="alice")
    assert out["SourceIdentity"] == "alice"
    assert out["PackedPolicySize"] == len(policy) * 100 // 2048
    with pytest.raises(ClientError) as e:
        cumulo.client("sts").assume_role(RoleArn=ROLE, RoleSessionName="si", SourceIdentity="aws:me")
    assert e.value.response["Error"]["Code"] == "ValidationError"


def test_assume_role_via_cli(cumulo):
    out = cumulo.aws("sts", "assume-role", "--role-arn", ROLE, "--role-session-name", "cli")
    assert out["AssumedRoleUser"]["Arn"].endswith("assumed-role/MyRole/cli")
    assert out["Credentials"]["AccessKeyId"].startswith("ASIA")


def test_get_session_token(cumulo):
    sts = cumulo.client("sts")
    before = datetime.datetime.now(datetime.timezone.utc)
    creds = sts.get_session_token(DurationSeconds=7200)["Credentials"]
    assert creds["AccessKeyId"].startswith("ASIA")
    # The root user's sessions are capped at one hour, as AWS documents.
    assert (creds["Expiration"] - before).total_seconds() <= 3610
    ident = client_with(cumulo, creds).get_caller_identity()
    assert ident["Arn"] == "arn:aws:iam::000000000000:root"
    with pytest.raises(ClientError) as e:
        client_with(cumulo, creds).get_session_token()
    assert e.value.response["Error"]["Code"] == "AccessDenied"
    with pytest.raises(ClientError) as e:
        cumulo.client("sts", parameter_validation=False).get_session_token(DurationSeconds=100)
    assert e.value.response["Error"]["Code"] == "ValidationError"
    cli = cumulo.aws("sts", "get-session-token")
    assert cli["Credentials"]["AccessKeyId"].startswith("ASIA")


def test_get_federation_token(cumulo):
    sts = cumulo.client("sts")
    out = sts.get_federation_token(Name="bob", DurationSeconds=900)
    assert out["FederatedUser"] == {"FederatedUserId": "000000000000:bob",
                                    "Arn": "arn:aws:sts::000000000000:federated-user/bob"}
    ident = client_with(cumulo, out["Credentials"]).get_caller_identity()
    assert ident["Arn"] == "arn:aws:sts::000000000000:federated-user/bob"
    assert ident["UserId"] == "000000000000:bob"
    with pytest.raises(ClientError) as e:
        cumulo.client("sts", parameter_validation=False).get_federation_token(Name="b")
    assert code_of(e) == "ValidationError"
    with pytest.raises(ClientError) as e:
        client_with(cumulo, out["Credentials"]).get_federation_token(Name="again")
    assert code_of(e) == "AccessDenied"
    cli = cumulo.aws("sts", "get-federation-token", "--name", "carol")
    assert cli["FederatedUser"]["Arn"].endswith("federated-user/carol")


def test_get_access_key_info(cumulo):
    sts = cumulo.client("sts")
    assert sts.get_access_key_info(AccessKeyId="AKIAIOSFODNN7EXAMPLE")["Account"] == "000000000000"
    # Keys STS issued belong to the account of the role they act as (cumulo has one account:
    # a role in another would not exist, and AssumeRole refuses it).
    creds = sts.assume_role(RoleArn=ROLE, RoleSessionName="xa")["Credentials"]
    assert sts.get_access_key_info(AccessKeyId=creds["AccessKeyId"])["Account"] == "000000000000"
    cli = cumulo.aws("sts", "get-access-key-info", "--access-key-id", creds["AccessKeyId"])
    assert cli["Account"] == "000000000000"


def code_of(exc):
    return exc.value.response["Error"]["Code"]


def test_unimplemented_operation_answers_501(cumulo):
    with pytest.raises(ClientError) as e:
        cumulo.client("sts").decode_authorization_message(EncodedMessage="opaque")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501
    assert "DecodeAuthorizationMessage" in e.value.response["Error"]["Message"]


def test_assumed_role_credentials_survive_restart(fresh_server):
    fresh_server.start()
    fresh_server.client("iam").create_role(RoleName="MyRole", Path="/deploy/", AssumeRolePolicyDocument=TRUST)
    creds = fresh_server.client("sts").assume_role(RoleArn=ROLE, RoleSessionName="persist")["Credentials"]
    fresh_server.kill9()
    fresh_server.start()
    ident = client_with(fresh_server, creds).get_caller_identity()
    assert ident["Arn"] == "arn:aws:sts::000000000000:assumed-role/MyRole/persist"
