"""SSM Parameter Store through boto3 and the AWS CLI: versions, selectors, labels, paths, filters,
tags, SecureString encryption at rest, and persistence."""
import pathlib
import uuid

import pytest
from botocore.exceptions import ClientError


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture
def ssm(cumulo):
    return cumulo.client("ssm")


def error_code(exc):
    return exc.value.response["Error"]["Code"]


def test_put_get_versions_and_overwrite(ssm):
    name = f"/app-{uid()}/db/host"
    first = ssm.put_parameter(Name=name, Value="h1", Type="String")
    assert (first["Version"], first["Tier"]) == (1, "Standard")
    assert ssm.put_parameter(Name=name, Value="h2", Overwrite=True)["Version"] == 2
    p = ssm.get_parameter(Name=name)["Parameter"]
    assert p["Value"] == "h2" and p["Version"] == 2 and p["Type"] == "String"
    assert p["ARN"] == f"arn:aws:ssm:us-east-1:000000000000:parameter{name}"
    assert p["DataType"] == "text"
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name=name, Value="h3", Type="String")
    assert error_code(e) == "ParameterAlreadyExists"
    assert ssm.get_parameter(Name=name)["Parameter"]["Version"] == 2


def test_selectors_version_and_label(ssm):
    name = f"/sel-{uid()}"
    for v in ("a", "b", "c"):
        ssm.put_parameter(Name=name, Value=v, Type="String", Overwrite=True)
    p = ssm.get_parameter(Name=f"{name}:1")["Parameter"]
    assert p["Value"] == "a" and p["Selector"] == ":1" and p["Name"] == name
    out = ssm.label_parameter_version(Name=name, ParameterVersion=2, Labels=["prod", "1bad"])
    assert out["ParameterVersion"] == 2 and out["InvalidLabels"] == ["1bad"]
    assert ssm.get_parameter(Name=f"{name}:prod")["Parameter"]["Value"] == "b"
    # Moving the label to another version takes it off the old one.
    ssm.label_parameter_version(Name=name, ParameterVersion=3, Labels=["prod"])
    assert ssm.get_parameter(Name=f"{name}:prod")["Parameter"]["Value"] == "c"
    hist = ssm.get_parameter_history(Name=name)["Parameters"]
    assert [h["Version"] for h in hist] == [1, 2, 3]
    assert hist[1]["Labels"] == [] and hist[2]["Labels"] == ["prod"]
    with pytest.raises(ClientError) as e:
        ssm.get_parameter(Name=f"{name}:9")
    assert error_code(e) == "ParameterVersionNotFound"
    un = ssm.unlabel_parameter_version(Name=name, ParameterVersion=3, Labels=["prod", "nope"])
    assert un["RemovedLabels"] == ["prod"] and un["InvalidLabels"] == ["nope"]
    with pytest.raises(ClientError) as e:
        ssm.get_parameter(Name=f"{name}:prod")
    assert error_code(e) == "ParameterNotFound"


def test_label_limit(ssm):
    name = f"/lim-{uid()}"
    ssm.put_parameter(Name=name, Value="v", Type="String")
    ssm.label_parameter_version(Name=name, Labels=[f"l{i}" for i in range(10)])
    with pytest.raises(ClientError) as e:
        ssm.label_parameter_version(Name=name, Labels=["eleventh"])
    assert error_code(e) == "ParameterVersionLabelLimitExceeded"


def test_get_parameters_reports_invalid(ssm):
    a, b = f"/gp-{uid()}", f"/gp-{uid()}"
    ssm.put_parameter(Name=a, Value="1", Type="String")
    ssm.put_parameter(Name=b, Value="x,y", Type="StringList")
    out = ssm.get_parameters(Names=[a, b, "/missing-" + uid(), f"{a}:7"])
    assert sorted(p["Name"] for p in out["Parameters"]) == sorted([a, b])
    assert len(out["InvalidParameters"]) == 2
    assert {p["Type"] for p in out["Parameters"]} == {"String", "StringList"}


def test_get_parameters_by_path_recursive_filters_and_pages(ssm):
    root = f"/tree-{uid()}"
    for n in ("a", "b", "c/d", "c/e/f"):
        ssm.put_parameter(Name=f"{root}/{n}", Value=n, Type="String")
    ssm.put_parameter(Name=f"{root}/s", Value="sec", Type="SecureString")
    one = ssm.get_parameters_by_path(Path=root)["Parameters"]
    assert sorted(p["Name"] for p in one) == [f"{root}/a", f"{root}/b", f"{root}/s"]
    deep = ssm.get_parameters_by_path(Path=root + "/", Recursive=True)["Parameters"]
    assert len(deep) == 5
    only_secure = ssm.get_parameters_by_path(
        Path=root, Recursive=True, WithDecryption=True,
        ParameterFilters=[{"Key": "Type", "Values": ["SecureString"]}])["Parameters"]
    assert [p["Value"] for p in only_secure] == ["sec"]
    names, token = [], None
    while True:
        kw = {"NextToken": token} if token else {}
        page = ssm.get_parameters_by_path(Path=root, Recursive=True, MaxResults=2, **kw)
        assert len(page["Parameters"]) <= 2
        names += [p["Name"] for p in page["Parameters"]]
        token = page.get("NextToken")
        if not token:
            break
    assert len(names) == 5 and len(set(names)) == 5
    with pytest.raises(ClientError) as e:
        ssm.get_parameters_by_path(Path=root, ParameterFilters=[{"Key": "Name", "Values": ["x"]}])
    assert error_code(e) == "InvalidFilterKey"
    with pytest.raises(ClientError) as e:
        ssm.get_parameters_by_path(Path="no-slash")
    assert error_code(e) == "ValidationException"


def test_describe_parameters_filters(ssm):
    root = f"/desc-{uid()}"
    ssm.put_parameter(Name=f"{root}/one", Value="1", Type="String", Description="first",
                      Tags=[{"Key": "team", "Value": "red"}])
    ssm.put_parameter(Name=f"{root}/two", Value="2", Type="SecureString")
    ssm.put_parameter(Name=f"{root}/sub/three", Value="3", Type="String", Tier="Advanced")
    got = ssm.describe_parameters(ParameterFilters=[{"Key": "Path", "Values": [root]}])["Parameters"]
    assert sorted(p["Name"] for p in got) == [f"{root}/one", f"{root}/two"]
    got = ssm.describe_parameters(ParameterFilters=[
        {"Key": "Path", "Option": "Recursive", "Values": [root]},
        {"Key": "Tier", "Values": ["Advanced"]}])["Parameters"]
    assert [p["Name"] for p in got] == [f"{root}/sub/three"]
    got = ssm.describe_parameters(ParameterFilters=[{"Key": "tag:team", "Values": ["red"]}])["Parameters"]
    assert [p["Name"] for p in got] == [f"{root}/one"]
    assert got[0]["Description"] == "first" and got[0]["Version"] == 1
    got = ssm.describe_parameters(ParameterFilters=[
        {"Key": "Name", "Option": "BeginsWith", "Values": [root]},
        {"Key": "Type", "Values": ["SecureString"]}])["Parameters"]
    assert [p["Name"] for p in got] == [f"{root}/two"] and got[0]["KeyId"] == "alias/aws/ssm"
    got = ssm.describe_parameters(Filters=[{"Key": "Name", "Values": [f"{root}/o"]}])["Parameters"]
    assert [p["Name"] for p in got] == [f"{root}/one"]
    with pytest.raises(ClientError) as e:
        ssm.describe_parameters(ParameterFilters=[{"Key": "Name", "Option": "Nope", "Values": ["x"]}])
    assert error_code(e) == "InvalidFilterOption"


def test_validation_errors(cumulo, ssm):
    raw = cumulo.client("ssm", parameter_validation=False)
    cases = [
        (dict(Name="awsreserved", Value="v", Type="String"), "ValidationException"),
        (dict(Name=f"/{uid()}", Value="v"), "ValidationException"),
        (dict(Name=f"rel/{uid()}", Value="v", Type="String"), "ValidationException"),
        (dict(Name=f"/{uid()}", Value="", Type="String"), "ValidationException"),
        (dict(Name=f"/{uid()}", Value="v", Type="Bogus"), "ValidationException"),
        (dict(Name=f"/{uid()}", Value="abc", Type="String", AllowedPattern="^\\d+$"),
         "ParameterPatternMismatchException"),
        (dict(Name=f"/{uid()}", Value="x" * 4097, Type="String"), "ValidationException"),
        (dict(Name=f"/{uid()}", Value="v", Type="String", DataType="Text"), "ValidationException"),
        (dict(Name="/" + "/".join(["l"] * 16), Value="v", Type="String"),
         "HierarchyLevelLimitExceededException"),
    ]
    for kwargs, code in cases:
        with pytest.raises(ClientError) as e:
            raw.put_parameter(**kwargs)
        assert error_code(e) == code, kwargs
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    name = f"/tagover-{uid()}"
    ssm.put_parameter(Name=name, Value="v", Type="String")
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name=name, Value="v", Type="String", Overwrite=True,
                          Tags=[{"Key": "a", "Value": "b"}])
    assert "tags and overwrite can't be used together" in e.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as e:
        ssm.get_parameter(Name="/does/not/exist")
    assert error_code(e) == "ParameterNotFound"


def test_tiers_and_allowed_pattern(ssm):
    name = f"/tier-{uid()}"
    out = ssm.put_parameter(Name=name, Value="x" * 5000, Type="String", Tier="Intelligent-Tiering")
    assert out["Tier"] == "Advanced"
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name=name, Value="small", Type="String", Tier="Standard", Overwrite=True)
    assert "can't downgrade" in e.value.response["Error"]["Message"]
    pat = f"/pat-{uid()}"
    ssm.put_parameter(Name=pat, Value="123", Type="String", AllowedPattern="\\d+")
    with pytest.raises(ClientError) as e:
        ssm.put_parameter(Name=pat, Value="abc", Type="String", Overwrite=True)
    assert error_code(e) == "ParameterPatternMismatchException"


def test_delete_and_delete_many(ssm):
    a, b = f"/del-{uid()}", f"/del-{uid()}"
    ssm.put_parameter(Name=a, Value="1", Type="String")
    ssm.put_parameter(Name=b, Value="1", Type="String")
    ssm.delete_parameter(Name=a)
    with pytest.raises(ClientError) as e:
        ssm.delete_parameter(Name=a)
    assert error_code(e) == "ParameterNotFound"
    out = ssm.delete_parameters(Names=[b, a])
    assert out["DeletedParameters"] == [b] and out["InvalidParameters"] == [a]
    with pytest.raises(ClientError):
        ssm.get_parameter(Name=b)


def test_tags(ssm):
    name = f"/tags-{uid()}"
    ssm.put_parameter(Name=name, Value="v", Type="String", Tags=[{"Key": "a", "Value": "1"}])
    ssm.add_tags_to_resource(ResourceType="Parameter", ResourceId=name,
                             Tags=[{"Key": "b", "Value": "2"}, {"Key": "a", "Value": "3"}])
    tags = ssm.list_tags_for_resource(ResourceType="Parameter", ResourceId=name)["TagList"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("a", "3"), ("b", "2")]
    ssm.remove_tags_from_resource(ResourceType="Parameter", ResourceId=name, TagKeys=["a"])
    tags = ssm.list_tags_for_resource(ResourceType="Parameter", ResourceId=name)["TagList"]
    assert tags == [{"Key": "b", "Value": "2"}]
    with pytest.raises(ClientError) as e:
        ssm.list_tags_for_resource(ResourceType="Parameter", ResourceId="/nope-" + uid())
    assert error_code(e) == "InvalidResourceId"


def test_regions_are_separate(cumulo):
    name = f"/region-{uid()}"
    cumulo.client("ssm", region="eu-west-1").put_parameter(Name=name, Value="eu", Type="String")
    with pytest.raises(ClientError):
        cumulo.client("ssm").get_parameter(Name=name)


def test_cli_round_trip(cumulo):
    name = f"/cli-{uid()}/key"
    out = cumulo.aws("ssm", "put-parameter", "--name", name, "--value", "v1", "--type", "String")
    assert out["Version"] == 1
    assert cumulo.aws("ssm", "get-parameter", "--name", name)["Parameter"]["Value"] == "v1"
    cumulo.aws("ssm", "put-parameter", "--name", name, "--value", "v2", "--overwrite")
    assert len(cumulo.aws("ssm", "get-parameter-history", "--name", name)["Parameters"]) == 2
    by_path = cumulo.aws("ssm", "get-parameters-by-path", "--path", name.rsplit("/", 1)[0])
    assert [p["Value"] for p in by_path["Parameters"]] == ["v2"]
    got = cumulo.aws("ssm", "get-parameters", "--names", name, "/nope-x")
    assert got["InvalidParameters"] == ["/nope-x"]
    cumulo.aws("ssm", "label-parameter-version", "--name", name, "--labels", "live")
    cumulo.aws("ssm", "unlabel-parameter-version", "--name", name, "--parameter-version", "2",
               "--labels", "live")
    cumulo.aws("ssm", "add-tags-to-resource", "--resource-type", "Parameter", "--resource-id", name,
               "--tags", "Key=k,Value=v")
    tags = cumulo.aws("ssm", "list-tags-for-resource", "--resource-type", "Parameter",
                      "--resource-id", name)
    assert tags["TagList"] == [{"Key": "k", "Value": "v"}]
    cumulo.aws("ssm", "remove-tags-from-resource", "--resource-type", "Parameter",
               "--resource-id", name, "--tag-keys", "k")
    desc = cumulo.aws("ssm", "describe-parameters", "--parameter-filters",
                      f"Key=Name,Values={name}")
    assert [p["Name"] for p in desc["Parameters"]] == [name]
    cumulo.aws("ssm", "delete-parameter", "--name", name)
    proc = cumulo.aws("ssm", "get-parameter", "--name", name, check=False)
    assert proc.returncode != 0 and "ParameterNotFound" in proc.stderr
    cumulo.aws("ssm", "put-parameter", "--name", name, "--value", "x", "--type", "String")
    assert cumulo.aws("ssm", "delete-parameters", "--names", name)["DeletedParameters"] == [name]


def test_unimplemented_operation_answers_501(ssm):
    with pytest.raises(ClientError) as e:
        ssm.list_documents()
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501
    assert "ListDocuments" in e.value.response["Error"]["Message"]


def test_secure_string_encrypted_at_rest_and_persisted(fresh_server):
    fresh_server.start()
    ssm = fresh_server.client("ssm")
    secret = "pl41ntext-" + uuid.uuid4().hex
    name = "/secret/" + uid()
    ssm.put_parameter(Name=name, Value=secret, Type="SecureString")
    ssm.put_parameter(Name="/plain/p", Value="visible", Type="String")
    hidden = ssm.get_parameter(Name=name)["Parameter"]
    assert hidden["Value"] != secret and secret not in hidden["Value"]
    assert ssm.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"] == secret
    fresh_server.kill9()
    # Nothing under the data directory (database, WAL, anything) holds the plaintext.
    needle = secret.encode()
    files = [p for p in pathlib.Path(fresh_server.data_dir).rglob("*") if p.is_file()]
    assert files
    assert any(b"visible" in f.read_bytes() for f in files)  # the grep itself can find things
    for f in files:
        assert needle not in f.read_bytes(), f
    fresh_server.start()
    ssm = fresh_server.client("ssm")
    assert ssm.get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"] == secret
    assert ssm.get_parameter(Name="/plain/p")["Parameter"]["Value"] == "visible"


def _scoped(service):
    return [("Authorization", f"AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/{service}/aws4_request, "
                              "SignedHeaders=host, Signature=00"), ("X-Amz-Date", "20240101T000000Z")]


def test_unknown_operation_and_wrong_content_type(cumulo):
    resp = cumulo.raw("POST", "/", [("X-Amz-Target", "AmazonSSM.NoSuchThing"),
                                    ("Content-Type", "application/x-amz-json-1.1")] + _scoped("ssm"), b"{}")
    assert resp.status == 400 and resp.error_code() == "UnknownOperationException"
    resp = cumulo.raw("POST", "/", [("X-Amz-Target", "AmazonSSM.DescribeParameters"),
                                    ("Content-Type", "application/xml")] + _scoped("ssm"), b"{}")
    assert resp.status == 400 and resp.error_code() == "SerializationException"
    resp = cumulo.raw("POST", "/", [("X-Amz-Target", "AmazonSSM.PutParameter"),
                                    ("Content-Type", "application/x-amz-json-1.1")] + _scoped("ssm"),
                      b'{"Name": ["not", "a", "string"], "Value": "v"}')
    assert resp.status == 400 and resp.error_code() == "SerializationException"
