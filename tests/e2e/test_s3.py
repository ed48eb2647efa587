"""S3 end to end: boto3 and the AWS CLI against the real binary."""
import base64
import datetime
import hashlib
import json
import os
import subprocess
import urllib.error
import urllib.request
import uuid
import zlib

import boto3.s3.transfer
import botocore.exceptions
import pytest

from conftest import CREDS

MiB = 1024 * 1024


def name(prefix="b"):
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def s3(cumulo):
    return cumulo.client("s3")


@pytest.fixture
def bucket(s3):
    b = name()
    s3.create_bucket(Bucket=b)
    return b


def err(excinfo):
    e = excinfo.value.response
    return e["Error"]["Code"], e["ResponseMetadata"]["HTTPStatusCode"]


def aws(cumulo, *args, check=True):
    """The AWS CLI against the server (like `CumuloServer.aws`, with the environment built here)."""
    env = dict(os.environ)
    env.update(CREDS)
    proc = subprocess.run(["aws", "--endpoint-url", cumulo.endpoint, "--output", "json", *args],
                          capture_output=True, text=True, env=env, timeout=300)
    if not check:
        return proc
    assert proc.returncode == 0, f"aws {' '.join(args)} failed: {proc.stderr}"
    out = proc.stdout.strip()
    return json.loads(out) if out.startswith(("{", "[")) else out


def raw(cumulo, method, path, body=None, headers=None):
    """An unsigned HTTP request; returns (status, headers, body) also for error statuses."""
    req = urllib.request.Request(cumulo.endpoint + path, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


# ---------------------------------------------------------------- buckets


def test_bucket_lifecycle(s3):
    b = name()
    assert s3.create_bucket(Bucket=b)["Location"] == f"/{b}"
    assert b in [x["Name"] for x in s3.list_buckets()["Buckets"]]
    head = s3.head_bucket(Bucket=b)
    assert head["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"] == "us-east-1"
    assert s3.get_bucket_location(Bucket=b)["LocationConstraint"] is None
    # us-east-1 keeps its legacy answer: re-creating your own bucket succeeds.
    s3.create_bucket(Bucket=b)
    s3.delete_bucket(Bucket=b)
    assert b not in [x["Name"] for x in s3.list_buckets()["Buckets"]]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.head_bucket(Bucket=b)
    assert err(e) == ("404", 404)
    with pytest.raises(s3.exceptions.NoSuchBucket):
        s3.delete_bucket(Bucket=b)


def test_bucket_regions_and_constraints(cumulo, s3):
    eu = cumulo.client("s3", region="eu-west-1")
    b = name()
    eu.create_bucket(Bucket=b, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    assert eu.get_bucket_location(Bucket=b)["LocationConstraint"] == "eu-west-1"
    assert s3.head_bucket(Bucket=b)["BucketRegion"] == "eu-west-1"
    with pytest.raises(eu.exceptions.BucketAlreadyOwnedByYou) as e:
        eu.create_bucket(Bucket=b, CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    assert err(e) == ("BucketAlreadyOwnedByYou", 409)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        eu.create_bucket(Bucket=name(), CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    assert err(e) == ("IllegalLocationConstraintException", 400)
    assert "us-west-2 location constraint is incompatible" in e.value.response["Error"]["Message"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        eu.create_bucket(Bucket=name())
    assert err(e) == ("IllegalLocationConstraintException", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.create_bucket(Bucket=name(), CreateBucketConfiguration={"LocationConstraint": "us-east-1"})
    assert err(e) == ("InvalidLocationConstraint", 400)
    eu.delete_bucket(Bucket=b)


def test_invalid_bucket_names(s3):
    for bad in ["ab", "Upper", "under_score", "-dash", "a..b", "192.168.0.1"]:
        with pytest.raises(botocore.exceptions.ClientError) as e:
            s3.create_bucket(Bucket=bad)
        # botocore validates some names itself; what reaches the server must be refused by it.
        code = e.value.response["Error"]["Code"]
        assert code in ("InvalidBucketName",), (bad, code)


def test_bucket_not_empty(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.delete_bucket(Bucket=bucket)
    assert err(e) == ("BucketNotEmpty", 409)
    assert e.value.response["Error"]["BucketName"] == bucket
    s3.delete_object(Bucket=bucket, Key="k")
    s3.delete_bucket(Bucket=bucket)


def test_request_id_headers_and_error_shape(cumulo, bucket):
    status, headers, body = raw(cumulo, "GET", f"/{bucket}/missing%20key")
    assert status == 404
    assert headers["x-amz-request-id"] and headers["x-amz-id-2"]
    text = body.decode()
    assert "<Code>NoSuchKey</Code>" in text
    assert "<Message>The specified key does not exist.</Message>" in text
    assert "<Key>missing key</Key>" in text
    assert f"<RequestId>{headers['x-amz-request-id']}</RequestId>" in text
    status, headers, body = raw(cumulo, "HEAD", f"/{bucket}/missing")
    assert status == 404 and body == b"" and headers["x-amz-request-id"]
    status, headers, body = raw(cumulo, "GET", "/no-such-bucket-xyz/k")
    assert status == 404 and b"<Code>NoSuchBucket</Code>" in body
    assert b"<BucketName>no-such-bucket-xyz</BucketName>" in body


# ---------------------------------------------------------------- objects


def test_put_get_head_with_headers_and_metadata(s3, bucket):
    body = os.urandom(3000)
    expires = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    put = s3.put_object(
        Bucket=bucket, Key="dir/file.bin", Body=body, Metadata={"color": "blue", "Mixed-Case": "v"},
        ContentType="application/x-test", ContentEncoding="identity", ContentDisposition="attachment",
        CacheControl="max-age=60", ContentLanguage="en", Expires=expires,
    )
    md5 = hashlib.md5(body).hexdigest()
    assert put["ETag"] == f'"{md5}"'
    g = s3.get_object(Bucket=bucket, Key="dir/file.bin")
    assert g["Body"].read() == body
    assert g["ETag"] == f'"{md5}"'
    assert g["ContentLength"] == 3000
    assert g["Metadata"] == {"color": "blue", "mixed-case": "v"}
    assert g["ContentType"] == "application/x-test"
    assert g["ContentEncoding"] == "identity"
    assert g["ContentDisposition"] == "attachment"
    assert g["CacheControl"] == "max-age=60"
    assert g["ContentLanguage"] == "en"
    assert g["Expires"] == expires
    assert g["AcceptRanges"] == "bytes"
    assert abs((g["LastModified"] - datetime.datetime.now(datetime.timezone.utc)).total_seconds()) < 60
    h = s3.head_object(Bucket=bucket, Key="dir/file.bin")
    assert h["ContentLength"] == 3000 and h["ETag"] == f'"{md5}"' and h["Metadata"]["color"] == "blue"
    # Overwrite replaces everything.
    s3.put_object(Bucket=bucket, Key="dir/file.bin", Body=b"new")
    g = s3.get_object(Bucket=bucket, Key="dir/file.bin")
    assert g["Body"].read() == b"new" and g["Metadata"] == {}
    assert g["ContentType"] == "binary/octet-stream"


def test_empty_object_and_response_overrides(s3, bucket):
    s3.put_object(Bucket=bucket, Key="empty", Body=b"")
    g = s3.get_object(Bucket=bucket, Key="empty", ResponseContentType="text/csv",
                      ResponseContentDisposition="inline")
    assert g["Body"].read() == b""
    assert g["ETag"] == '"d41d8cd98f00b204e9800998ecf8427e"'
    assert g["ContentType"] == "text/csv" and g["ContentDisposition"] == "inline"


def test_special_keys_round_trip(s3, bucket):
    keys = ["a b", "plus+sign", "uni/çé漢字", "deep/a/b/c.txt", "q?x=1&y", "pct%2Fx", "tilde~", "#hash", "sp ace/+/"]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=k.encode())
    for k in keys:
        assert s3.get_object(Bucket=bucket, Key=k)["Body"].read() == k.encode()
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert listed == sorted(keys, key=lambda k: k.encode())
    listed_v1 = [o["Key"] for o in s3.list_objects(Bucket=bucket)["Contents"]]
    assert listed_v1 == listed


def test_key_too_long(s3, bucket):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object(Bucket=bucket, Key="k" * 1025, Body=b"x")
    assert err(e) == ("KeyTooLongError", 400)


def test_range_requests(s3, bucket):
    data = bytes(range(256)) * 4
    s3.put_object(Bucket=bucket, Key="r", Body=data)
    g = s3.get_object(Bucket=bucket, Key="r", Range="bytes=10-19")
    assert g["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert g["ContentRange"] == "bytes 10-19/1024"
    assert g["ContentLength"] == 10
    assert g["Body"].read() == data[10:20]
    assert s3.get_object(Bucket=bucket, Key="r", Range="bytes=-5")["Body"].read() == data[-5:]
    assert s3.get_object(Bucket=bucket, Key="r", Range="bytes=1000-")["Body"].read() == data[1000:]
    assert s3.get_object(Bucket=bucket, Key="r", Range="bytes=1000-5000")["ContentRange"] == "bytes 1000-1023/1024"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket=bucket, Key="r", Range="bytes=1024-")
    assert err(e) == ("InvalidRange", 416)
    assert e.value.response["Error"]["ActualObjectSize"] == "1024"
    # A range S3 cannot parse is ignored: the whole object, 200.
    g = s3.get_object(Bucket=bucket, Key="r", Range="bytes=5-2")
    assert g["ResponseMetadata"]["HTTPStatusCode"] == 200 and g["ContentLength"] == 1024


def test_conditional_get_and_head(s3, bucket):
    etag = s3.put_object(Bucket=bucket, Key="c", Body=b"cond")["ETag"]
    past = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
    future = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
    assert s3.get_object(Bucket=bucket, Key="c", IfMatch=etag)["Body"].read() == b"cond"
    for call in (s3.get_object, s3.head_object):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            call(Bucket=bucket, Key="c", IfNoneMatch=etag)
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 304
        with pytest.raises(botocore.exceptions.ClientError) as e:
            call(Bucket=bucket, Key="c", IfMatch='"0000"')
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
        with pytest.raises(botocore.exceptions.ClientError) as e:
            call(Bucket=bucket, Key="c", IfModifiedSince=future)
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 304
        with pytest.raises(botocore.exceptions.ClientError) as e:
            call(Bucket=bucket, Key="c", IfUnmodifiedSince=past)
        assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket=bucket, Key="c", IfMatch='"0000"')
    assert err(e) == ("PreconditionFailed", 412)
    assert s3.get_object(Bucket=bucket, Key="c", IfModifiedSince=past)["Body"].read() == b"cond"
    # Conditional writes.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object(Bucket=bucket, Key="c", Body=b"again", IfNoneMatch="*")
    assert err(e) == ("PreconditionFailed", 412)
    s3.put_object(Bucket=bucket, Key="fresh", Body=b"1", IfNoneMatch="*")


def test_delete_object(s3, bucket):
    s3.put_object(Bucket=bucket, Key="d", Body=b"x")
    r = s3.delete_object(Bucket=bucket, Key="d")
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(s3.exceptions.NoSuchKey):
        s3.get_object(Bucket=bucket, Key="d")
    # Deleting what does not exist succeeds, as in S3.
    assert s3.delete_object(Bucket=bucket, Key="never")["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(s3.exceptions.NoSuchBucket):
        s3.delete_object(Bucket="no-such-bucket-abc", Key="d")


def test_copy_object(s3, bucket):
    other = name()
    s3.create_bucket(Bucket=other)
    s3.put_object(Bucket=bucket, Key="src key+", Body=b"payload", Metadata={"a": "1"}, ContentType="text/plain",
                  Tagging="t=1")
    r = s3.copy_object(Bucket=other, Key="dst", CopySource={"Bucket": bucket, "Key": "src key+"})
    assert r["CopyObjectResult"]["ETag"] == f'"{hashlib.md5(b"payload").hexdigest()}"'
    g = s3.get_object(Bucket=other, Key="dst")
    assert g["Body"].read() == b"payload" and g["Metadata"] == {"a": "1"} and g["ContentType"] == "text/plain"
    assert s3.get_object_tagging(Bucket=other, Key="dst")["TagSet"] == [{"Key": "t", "Value": "1"}]
    s3.copy_object(Bucket=other, Key="dst2", CopySource=f"{bucket}/src key+", MetadataDirective="REPLACE",
                   Metadata={"b": "2"}, ContentType="text/x", TaggingDirective="REPLACE", Tagging="u=2")
    g = s3.get_object(Bucket=other, Key="dst2")
    assert g["Metadata"] == {"b": "2"} and g["ContentType"] == "text/x"
    assert s3.get_object_tagging(Bucket=other, Key="dst2")["TagSet"] == [{"Key": "u", "Value": "2"}]
    # Copy onto itself needs a change.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="src key+", CopySource={"Bucket": bucket, "Key": "src key+"})
    assert err(e) == ("InvalidRequest", 400)
    s3.copy_object(Bucket=bucket, Key="src key+", CopySource={"Bucket": bucket, "Key": "src key+"},
                   MetadataDirective="REPLACE", Metadata={"c": "3"})
    assert s3.head_object(Bucket=bucket, Key="src key+")["Metadata"] == {"c": "3"}
    with pytest.raises(s3.exceptions.NoSuchKey):
        s3.copy_object(Bucket=other, Key="x", CopySource={"Bucket": bucket, "Key": "missing"})
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.copy_object(Bucket=other, Key="x", CopySource={"Bucket": bucket, "Key": "src key+"},
                       CopySourceIfMatch='"nope"')
    assert err(e) == ("PreconditionFailed", 412)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.copy_object(Bucket=other, Key="x", CopySource={"Bucket": bucket, "Key": "src key+"},
                       MetadataDirective="MERGE")
    assert err(e)[1] == 400


# ---------------------------------------------------------------- listing


def test_list_v2_prefix_delimiter_pagination(s3, bucket):
    keys = ["a.txt", "dir/a", "dir/b", "dir/sub/c", "dir2/x", "z"]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=b"1")
    r = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    assert [o["Key"] for o in r["Contents"]] == ["a.txt", "z"]
    assert [p["Prefix"] for p in r["CommonPrefixes"]] == ["dir/", "dir2/"]
    assert r["KeyCount"] == 4 and r["IsTruncated"] is False
    r = s3.list_objects_v2(Bucket=bucket, Prefix="dir/", Delimiter="/")
    assert [o["Key"] for o in r["Contents"]] == ["dir/a", "dir/b"]
    assert [p["Prefix"] for p in r["CommonPrefixes"]] == ["dir/sub/"]
    r = s3.list_objects_v2(Bucket=bucket, MaxKeys=2)
    assert [o["Key"] for o in r["Contents"]] == ["a.txt", "dir/a"] and r["IsTruncated"]
    r2 = s3.list_objects_v2(Bucket=bucket, MaxKeys=2, ContinuationToken=r["NextContinuationToken"])
    assert [o["Key"] for o in r2["Contents"]] == ["dir/b", "dir/sub/c"]
    assert r2["ContinuationToken"] == r["NextContinuationToken"]
    r = s3.list_objects_v2(Bucket=bucket, StartAfter="dir/sub/c")
    assert [o["Key"] for o in r["Contents"]] == ["dir2/x", "z"] and r["StartAfter"] == "dir/sub/c"
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, PaginationConfig={"PageSize": 1})
    assert [o["Key"] for p in pages for o in p.get("Contents", [])] == keys
    pages = s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Delimiter="/", PaginationConfig={"PageSize": 1})
    seen = [(o["Key"] if "Key" in o else o["Prefix"]) for p in pages for o in p.get("Contents", []) + p.get("CommonPrefixes", [])]
    assert sorted(seen) == ["a.txt", "dir/", "dir2/", "z"]
    r = s3.list_objects_v2(Bucket=bucket, MaxKeys=0)
    assert "Contents" not in r
    r = s3.list_objects_v2(Bucket=bucket, FetchOwner=True, MaxKeys=1)
    assert r["Contents"][0]["Owner"]["ID"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.list_objects_v2(Bucket=bucket, ContinuationToken="!!!not-a-token")
    assert err(e) == ("InvalidArgument", 400)
    with pytest.raises(s3.exceptions.NoSuchBucket):
        s3.list_objects_v2(Bucket="no-such-bucket-abc")


def test_list_v1_markers_and_url_encoding(cumulo, s3, bucket):
    keys = ["k1", "k2", "k3", "p/q r", "p/x+y", "q"]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=b"1")
    r = s3.list_objects(Bucket=bucket, MaxKeys=2)
    assert [o["Key"] for o in r["Contents"]] == ["k1", "k2"] and r["IsTruncated"]
    r = s3.list_objects(Bucket=bucket, Marker="k2")
    assert [o["Key"] for o in r["Contents"]] == ["k3", "p/q r", "p/x+y", "q"]
    r = s3.list_objects(Bucket=bucket, Delimiter="/", Marker="k2", MaxKeys=2)
    assert r["NextMarker"] == "p/" and [p["Prefix"] for p in r["CommonPrefixes"]] == ["p/"]
    assert [o["Key"] for o in r["Contents"]] == ["k3"] and r["IsTruncated"]
    r = s3.list_objects(Bucket=bucket, Delimiter="/", Marker="p/")
    assert [o["Key"] for o in r["Contents"]] == ["q"] and "CommonPrefixes" not in r
    assert [o["Owner"]["ID"] for o in r["Contents"]][0]
    pages = s3.get_paginator("list_objects").paginate(Bucket=bucket, PaginationConfig={"PageSize": 2})
    assert [o["Key"] for p in pages for o in p["Contents"]] == keys
    # The raw wire form under encoding-type=url.
    status, _, body = raw(cumulo, "GET", f"/{bucket}?list-type=2&prefix=p/&encoding-type=url")
    assert status == 200
    assert b"<Key>p/q%20r</Key>" in body and b"<Key>p/x%2By</Key>" in body
    assert b"<EncodingType>url</EncodingType>" in body


def test_list_object_versions_and_multipart_uploads_pagination(s3, bucket):
    for k in ["a", "b", "c"]:
        s3.put_object(Bucket=bucket, Key=k, Body=b"1")
    r = s3.list_object_versions(Bucket=bucket, MaxKeys=2)
    assert [v["Key"] for v in r["Versions"]] == ["a", "b"] and r["IsTruncated"]
    assert r["Versions"][0]["VersionId"] == "null" and r["Versions"][0]["IsLatest"]
    r = s3.list_object_versions(Bucket=bucket, KeyMarker=r["NextKeyMarker"], VersionIdMarker=r["NextVersionIdMarker"])
    assert [v["Key"] for v in r["Versions"]] == ["c"]
    ids = [s3.create_multipart_upload(Bucket=bucket, Key=k)["UploadId"] for k in ["u1", "u2", "x/u3"]]
    r = s3.list_multipart_uploads(Bucket=bucket)
    assert sorted(u["UploadId"] for u in r["Uploads"]) == sorted(ids)
    r = s3.list_multipart_uploads(Bucket=bucket, Prefix="x/")
    assert [u["Key"] for u in r["Uploads"]] == ["x/u3"]
    r = s3.list_multipart_uploads(Bucket=bucket, MaxUploads=1)
    assert r["IsTruncated"] and r["NextKeyMarker"] == "u1"


# ---------------------------------------------------------------- multipart


def test_multipart_upload(s3, bucket):
    key = "big/obj"
    up = s3.create_multipart_upload(Bucket=bucket, Key=key, ContentType="application/zip", Metadata={"m": "1"})
    uid = up["UploadId"]
    p1 = os.urandom(5 * MiB)
    p2 = os.urandom(1234)
    e1 = s3.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=1, Body=p1)["ETag"]
    e2 = s3.upload_part(Bucket=bucket, Key=key, UploadId=uid, PartNumber=2, Body=p2)["ETag"]
    parts = s3.list_parts(Bucket=bucket, Key=key, UploadId=uid)
    assert [(p["PartNumber"], p["Size"], p["ETag"]) for p in parts["Parts"]] == [(1, 5 * MiB, e1), (2, 1234, e2)]
    assert uid in [u["UploadId"] for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]
    page = s3.list_parts(Bucket=bucket, Key=key, UploadId=uid, MaxParts=1)
    assert page["IsTruncated"] and page["NextPartNumberMarker"] == 1
    r = s3.complete_multipart_upload(
        Bucket=bucket, Key=key, UploadId=uid,
        MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]},
    )
    md5s = hashlib.md5(p1).digest() + hashlib.md5(p2).digest()
    expected = f'"{hashlib.md5(md5s).hexdigest()}-2"'
    assert r["ETag"] == expected and r["Key"] == key and r["Bucket"] == bucket
    g = s3.get_object(Bucket=bucket, Key=key)
    assert g["Body"].read() == p1 + p2 and g["ETag"] == expected
    assert g["ContentType"] == "application/zip" and g["Metadata"] == {"m": "1"}
    part2 = s3.get_object(Bucket=bucket, Key=key, PartNumber=2)
    assert part2["Body"].read() == p2 and part2["PartsCount"] == 2
    assert s3.head_object(Bucket=bucket, Key=key, PartNumber=1)["ContentLength"] == 5 * MiB
    assert "Uploads" not in s3.list_multipart_uploads(Bucket=bucket)
    with pytest.raises(s3.exceptions.NoSuchUpload):
        s3.list_parts(Bucket=bucket, Key=key, UploadId=uid)


def test_multipart_errors(s3, bucket):
    uid = s3.create_multipart_upload(Bucket=bucket, Key="m")["UploadId"]
    e1 = s3.upload_part(Bucket=bucket, Key="m", UploadId=uid, PartNumber=1, Body=b"small")["ETag"]
    e2 = s3.upload_part(Bucket=bucket, Key="m", UploadId=uid, PartNumber=2, Body=b"last")["ETag"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="m", UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
    assert err(e) == ("EntityTooSmall", 400)
    assert e.value.response["Error"]["MinSizeAllowed"] == str(5 * MiB)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="m", UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": '"0123"'}]})
    assert err(e) == ("InvalidPart", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="m", UploadId=uid, MultipartUpload={
            "Parts": [{"PartNumber": 2, "ETag": e2}, {"PartNumber": 1, "ETag": e1}]})
    assert err(e) == ("InvalidPartOrder", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.upload_part(Bucket=bucket, Key="m", UploadId=uid, PartNumber=10001, Body=b"x")
    assert err(e) == ("InvalidArgument", 400)
    # A single small part is fine: the last part has no minimum.
    r = s3.complete_multipart_upload(Bucket=bucket, Key="m", UploadId=uid, MultipartUpload={
        "Parts": [{"PartNumber": 2, "ETag": e2}]})
    assert r["ETag"].endswith('-1"')
    assert s3.get_object(Bucket=bucket, Key="m")["Body"].read() == b"last"
    uid = s3.create_multipart_upload(Bucket=bucket, Key="n")["UploadId"]
    s3.abort_multipart_upload(Bucket=bucket, Key="n", UploadId=uid)
    with pytest.raises(s3.exceptions.NoSuchUpload) as e:
        s3.upload_part(Bucket=bucket, Key="n", UploadId=uid, PartNumber=1, Body=b"x")
    assert err(e) == ("NoSuchUpload", 404)
    with pytest.raises(s3.exceptions.NoSuchUpload):
        s3.abort_multipart_upload(Bucket=bucket, Key="n", UploadId="bogus")


def test_upload_part_copy(s3, bucket):
    src = os.urandom(6 * MiB)
    s3.put_object(Bucket=bucket, Key="src", Body=src)
    uid = s3.create_multipart_upload(Bucket=bucket, Key="dst")["UploadId"]
    c1 = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=uid, PartNumber=1,
                             CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange=f"bytes=0-{5 * MiB - 1}")
    c2 = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=uid, PartNumber=2,
                             CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange=f"bytes={5 * MiB}-{6 * MiB - 1}")
    s3.complete_multipart_upload(Bucket=bucket, Key="dst", UploadId=uid, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": c1["CopyPartResult"]["ETag"]},
        {"PartNumber": 2, "ETag": c2["CopyPartResult"]["ETag"]}]})
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == src


def test_delete_objects(s3, bucket):
    for k in ["a", "b", "c"]:
        s3.put_object(Bucket=bucket, Key=k, Body=b"1")
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a"}, {"Key": "missing"}]})
    assert sorted(d["Key"] for d in r["Deleted"]) == ["a", "missing"]
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "b"}, {"Key": "c"}], "Quiet": True})
    assert "Deleted" not in r and "Errors" not in r
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a", "VersionId": "bad version!"}]})
    assert r["Errors"][0]["Code"] == "InvalidArgument"


# ---------------------------------------------------------------- versioning


def test_versioning(s3, bucket):
    assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="k", Body=b"pre")
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"two")["VersionId"]
    assert v1 != v2 and v1 != "null"
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"two"
    g = s3.get_object(Bucket=bucket, Key="k", VersionId=v1)
    assert g["Body"].read() == b"one" and g["VersionId"] == v1
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"pre"
    assert s3.head_object(Bucket=bucket, Key="k", VersionId=v2)["VersionId"] == v2
    d = s3.delete_object(Bucket=bucket, Key="k")
    assert d["DeleteMarker"] is True
    marker = d["VersionId"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k")
    assert err(e) == ("NoSuchKey", 404)
    assert e.value.response["ResponseMetadata"]["HTTPHeaders"]["x-amz-delete-marker"] == "true"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k", VersionId=marker)
    assert err(e) == ("MethodNotAllowed", 405)
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    r = s3.list_object_versions(Bucket=bucket)
    assert [(v["VersionId"], v["IsLatest"]) for v in r["Versions"]] == [(v2, False), (v1, False), ("null", False)]
    assert [(m["VersionId"], m["IsLatest"]) for m in r["DeleteMarkers"]] == [(marker, True)]
    # Removing the marker brings the object back.
    r = s3.delete_object(Bucket=bucket, Key="k", VersionId=marker)
    assert r["DeleteMarker"] is True and r["VersionId"] == marker
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"two"
    s3.delete_object(Bucket=bucket, Key="k", VersionId=v2)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"one"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k", VersionId=v2)
    assert err(e) == ("NoSuchVersion", 404)
    # Suspended: new writes are the "null" version, older versions stay.
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"})
    assert s3.put_object(Bucket=bucket, Key="k", Body=b"susp").get("VersionId") == "null"
    ids = [v["VersionId"] for v in s3.list_object_versions(Bucket=bucket)["Versions"]]
    assert ids == ["null", v1]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.delete_bucket(Bucket=bucket)
    assert err(e) == ("BucketNotEmpty", 409)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Sometimes"})
    assert err(e) == ("MalformedXML", 400)


def test_versioned_delete_objects(s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    v = s3.put_object(Bucket=bucket, Key="a", Body=b"1")["VersionId"]
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a"}]})
    assert r["Deleted"][0]["DeleteMarker"] is True and r["Deleted"][0]["DeleteMarkerVersionId"]
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a", "VersionId": v}]})
    assert r["Deleted"][0]["VersionId"] == v
    assert [x["VersionId"] for x in s3.list_object_versions(Bucket=bucket).get("Versions", [])] == []


# ---------------------------------------------------------------- tagging, policy, configurations


def test_object_and_bucket_tagging(s3, bucket):
    s3.put_object(Bucket=bucket, Key="t", Body=b"1", Tagging="a=1&b=two%20words")
    assert s3.head_object(Bucket=bucket, Key="t")["ResponseMetadata"]["HTTPHeaders"]["x-amz-tagging-count"] == "2"
    assert s3.get_object_tagging(Bucket=bucket, Key="t")["TagSet"] == [
        {"Key": "a", "Value": "1"}, {"Key": "b", "Value": "two words"}]
    s3.put_object_tagging(Bucket=bucket, Key="t", Tagging={"TagSet": [{"Key": "x", "Value": "y"}]})
    assert s3.get_object_tagging(Bucket=bucket, Key="t")["TagSet"] == [{"Key": "x", "Value": "y"}]
    s3.delete_object_tagging(Bucket=bucket, Key="t")
    assert s3.get_object_tagging(Bucket=bucket, Key="t")["TagSet"] == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object_tagging(Bucket=bucket, Key="t", Tagging={"TagSet": [{"Key": f"k{i}", "Value": "v"} for i in range(11)]})
    assert err(e) == ("InvalidTag", 400)
    with pytest.raises(s3.exceptions.NoSuchKey):
        s3.get_object_tagging(Bucket=bucket, Key="missing")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_bucket_tagging(Bucket=bucket)
    assert err(e) == ("NoSuchTagSet", 404)
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": "env", "Value": "dev"}]})
    assert s3.get_bucket_tagging(Bucket=bucket)["TagSet"] == [{"Key": "env", "Value": "dev"}]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": "a", "Value": "1"}, {"Key": "a", "Value": "2"}]})
    assert err(e) == ("InvalidTag", 400)
    s3.delete_bucket_tagging(Bucket=bucket)
    with pytest.raises(botocore.exceptions.ClientError):
        s3.get_bucket_tagging(Bucket=bucket)


def test_bucket_policy(s3, bucket):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_bucket_policy(Bucket=bucket)
    assert err(e) == ("NoSuchBucketPolicy", 404)
    policy = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}]})
    s3.put_bucket_policy(Bucket=bucket, Policy=policy)
    assert json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"]) == json.loads(policy)
    for bad in ["not json", "[]", json.dumps({"Version": "2012-10-17"})]:
        with pytest.raises(botocore.exceptions.ClientError) as e:
            s3.put_bucket_policy(Bucket=bucket, Policy=bad)
        assert err(e) == ("MalformedPolicy", 400)
    assert json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"]) == json.loads(policy)
    s3.delete_bucket_policy(Bucket=bucket)
    with pytest.raises(botocore.exceptions.ClientError):
        s3.get_bucket_policy(Bucket=bucket)


def test_cors_lifecycle_website_encryption_notification(s3, bucket):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_bucket_cors(Bucket=bucket)
    assert err(e) == ("NoSuchCORSConfiguration", 404)
    cors = {"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["GET", "PUT"], "AllowedHeaders": ["*"],
                           "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 300}]}
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=cors)
    got = s3.get_bucket_cors(Bucket=bucket)["CORSRules"]
    assert got == cors["CORSRules"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [{"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}]})
    assert err(e) == ("InvalidRequest", 400)
    s3.delete_bucket_cors(Bucket=bucket)
    with pytest.raises(botocore.exceptions.ClientError):
        s3.get_bucket_cors(Bucket=bucket)

    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_bucket_lifecycle_configuration(Bucket=bucket)
    assert err(e) == ("NoSuchLifecycleConfiguration", 404)
    rules = [{"ID": "expire", "Filter": {"Prefix": "logs/"}, "Status": "Enabled", "Expiration": {"Days": 30}}]
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": rules})
    assert s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"] == rules
    s3.delete_bucket_lifecycle(Bucket=bucket)
    with pytest.raises(botocore.exceptions.ClientError):
        s3.get_bucket_lifecycle_configuration(Bucket=bucket)

    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_bucket_website(Bucket=bucket)
    assert err(e) == ("NoSuchWebsiteConfiguration", 404)
    s3.put_bucket_website(Bucket=bucket, WebsiteConfiguration={
        "IndexDocument": {"Suffix": "index.html"}, "ErrorDocument": {"Key": "err.html"}})
    w = s3.get_bucket_website(Bucket=bucket)
    assert w["IndexDocument"] == {"Suffix": "index.html"} and w["ErrorDocument"] == {"Key": "err.html"}
    s3.delete_bucket_website(Bucket=bucket)
    with pytest.raises(botocore.exceptions.ClientError):
        s3.get_bucket_website(Bucket=bucket)

    default = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]
    assert default["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration={"Rules": [{
        "ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alias/k"},
        "BucketKeyEnabled": True}]})
    rule = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]
    assert rule["ApplyServerSideEncryptionByDefault"] == {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alias/k"}
    assert rule["BucketKeyEnabled"] is True
    s3.delete_bucket_encryption(Bucket=bucket)
    rule = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"][0]
    assert rule["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"

    n = s3.get_bucket_notification_configuration(Bucket=bucket)
    assert not any(k in n for k in ("QueueConfigurations", "TopicConfigurations", "LambdaFunctionConfigurations"))
    q = {"QueueConfigurations": [{"Id": "q", "QueueArn": "arn:aws:sqs:us-east-1:000000000000:q",
                                  "Events": ["s3:ObjectCreated:*"]}]}
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration=q)
    assert s3.get_bucket_notification_configuration(Bucket=bucket)["QueueConfigurations"] == q["QueueConfigurations"]

    pab = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
    assert pab["BlockPublicAcls"] is True
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={
        "BlockPublicAcls": False, "IgnorePublicAcls": False, "BlockPublicPolicy": False, "RestrictPublicBuckets": False})
    assert s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]["BlockPublicPolicy"] is False
    with pytest.raises(s3.exceptions.NoSuchBucket):
        s3.get_bucket_cors(Bucket="no-such-bucket-abc")


def test_malformed_xml(cumulo, bucket):
    status, _, body = raw(cumulo, "PUT", f"/{bucket}?cors", body=b"<CORSConfiguration><oops>")
    assert status == 400 and b"<Code>MalformedXML</Code>" in body
    status, _, body = raw(cumulo, "POST", f"/{bucket}?delete", body=b"not xml")
    assert status == 400 and b"<Code>MalformedXML</Code>" in body


def test_acls(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"1")
    for acl in (s3.get_bucket_acl(Bucket=bucket), s3.get_object_acl(Bucket=bucket, Key="k")):
        assert acl["Grants"][0]["Permission"] == "FULL_CONTROL"
        assert acl["Grants"][0]["Grantee"]["ID"] == acl["Owner"]["ID"]
    s3.put_object(Bucket=bucket, Key="p", Body=b"1", ACL="private")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object(Bucket=bucket, Key="p", Body=b"1", ACL="public-read")
    assert err(e) == ("AccessControlListNotSupported", 400)
    s3.put_bucket_acl(Bucket=bucket, ACL="private")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_bucket_acl(Bucket=bucket, ACL="public-read")
    assert err(e) == ("AccessControlListNotSupported", 400)
    owner = s3.get_object_acl(Bucket=bucket, Key="k")["Owner"]
    s3.put_object_acl(Bucket=bucket, Key="k", AccessControlPolicy={"Owner": owner, "Grants": [
        {"Grantee": {"Type": "CanonicalUser", "ID": owner["ID"]}, "Permission": "FULL_CONTROL"}]})
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object_acl(Bucket=bucket, Key="k", AccessControlPolicy={"Owner": owner, "Grants": [
            {"Grantee": {"Type": "Group", "URI": "http://acs.amazonaws.com/groups/global/AllUsers"}, "Permission": "READ"}]})
    assert err(e) == ("AccessControlListNotSupported", 400)


def test_unimplemented_operations_answer_501(cumulo, s3, bucket):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_bucket_logging(Bucket=bucket)
    assert err(e) == ("NotImplemented", 501)
    assert "GetBucketLogging" in e.value.response["Error"]["Message"]
    s3.put_object(Bucket=bucket, Key="k", Body=b"1")
    for call, op in [
        (lambda: s3.get_object_retention(Bucket=bucket, Key="k"), "GetObjectRetention"),
        (lambda: s3.restore_object(Bucket=bucket, Key="k", RestoreRequest={"Days": 1}), "RestoreObject"),
        (lambda: s3.get_bucket_accelerate_configuration(Bucket=bucket), "GetBucketAccelerateConfiguration"),
        (lambda: s3.list_bucket_metrics_configurations(Bucket=bucket), "GetBucketMetricsConfiguration"),
    ]:
        with pytest.raises(botocore.exceptions.ClientError) as e:
            call()
        assert err(e) == ("NotImplemented", 501) and op in e.value.response["Error"]["Message"]
    # A subresource PUT must never be mistaken for PutObject.
    status, _, _ = raw(cumulo, "PUT", f"/{bucket}/k?renameObject", body=b"x")
    assert status == 501
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"1"


# ---------------------------------------------------------------- checksums, chunked bodies, presigned URLs


def test_checksums(cumulo, s3, bucket):
    body = b"checksum me" * 100
    for alg in ["CRC32", "CRC32C", "SHA1", "SHA256", "CRC64NVME"]:
        try:
            r = s3.put_object(Bucket=bucket, Key=f"c-{alg}", Body=body, ChecksumAlgorithm=alg)
        except botocore.exceptions.MissingDependencyException:
            continue  # botocore needs awscrt for CRC32C/CRC64NVME
        value = r[f"Checksum{alg}"]
        g = s3.get_object(Bucket=bucket, Key=f"c-{alg}", ChecksumMode="ENABLED")
        assert g[f"Checksum{alg}"] == value and g["Body"].read() == body
        h = s3.head_object(Bucket=bucket, Key=f"c-{alg}", ChecksumMode="ENABLED")
        assert h[f"Checksum{alg}"] == value
    crc = base64.b64encode(zlib.crc32(body).to_bytes(4, "big")).decode()
    assert s3.head_object(Bucket=bucket, Key="c-CRC32", ChecksumMode="ENABLED")["ChecksumCRC32"] == crc
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object(Bucket=bucket, Key="bad", Body=body, ChecksumCRC32="AAAAAA==")
    assert err(e) == ("BadDigest", 400)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.head_object(Bucket=bucket, Key="bad")
    assert err(e) == ("404", 404)
    status, _, resp = raw(cumulo, "PUT", f"/{bucket}/md5", body=b"abc",
                          headers={"Content-MD5": base64.b64encode(hashlib.md5(b"xyz").digest()).decode()})
    assert status == 400 and b"<Code>BadDigest</Code>" in resp
    # Multipart with checksums: composite value, validated per part.
    uid = s3.create_multipart_upload(Bucket=bucket, Key="mp", ChecksumAlgorithm="SHA256")["UploadId"]
    p = s3.upload_part(Bucket=bucket, Key="mp", UploadId=uid, PartNumber=1, Body=b"part", ChecksumAlgorithm="SHA256")
    r = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=uid, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": p["ETag"], "ChecksumSHA256": p["ChecksumSHA256"]}]})
    assert r["ChecksumSHA256"].endswith("-1")
    g = s3.get_object(Bucket=bucket, Key="mp", ChecksumMode="ENABLED")
    assert g["Body"].read() == b"part" and g["ChecksumSHA256"].endswith("-1")


def test_aws_chunked_bodies(cumulo, s3, bucket):
    payload = os.urandom(70000)
    crc = base64.b64encode(zlib.crc32(payload).to_bytes(4, "big")).decode()
    chunks = [payload[:65536], payload[65536:]]
    unsigned = b"".join(b"%x\r\n" % len(c) + c + b"\r\n" for c in chunks)
    unsigned += b"0\r\nx-amz-checksum-crc32:" + crc.encode() + b"\r\n\r\n"
    status, headers, _ = raw(cumulo, "PUT", f"/{bucket}/unsigned", body=unsigned, headers={
        "Content-Encoding": "aws-chunked", "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "x-amz-decoded-content-length": str(len(payload)), "x-amz-trailer": "x-amz-checksum-crc32"})
    assert status == 200 and headers["x-amz-checksum-crc32"] == crc
    g = s3.get_object(Bucket=bucket, Key="unsigned", ChecksumMode="ENABLED")
    assert g["Body"].read() == payload and g["ChecksumCRC32"] == crc
    assert "ContentEncoding" not in g  # aws-chunked is transport framing, not stored
    sig = b";chunk-signature=" + b"0" * 64
    signed = b"".join(b"%x" % len(c) + sig + b"\r\n" + c + b"\r\n" for c in chunks) + b"0" + sig + b"\r\n\r\n"
    status, _, _ = raw(cumulo, "PUT", f"/{bucket}/signed", body=signed, headers={
        "Content-Encoding": "aws-chunked,gzip", "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
        "x-amz-decoded-content-length": str(len(payload))})
    assert status == 200
    g = s3.get_object(Bucket=bucket, Key="signed")
    assert g["Body"].read() == payload and g["ContentEncoding"] == "gzip"
    bad = unsigned.replace(crc.encode(), b"AAAAAA==")
    status, _, body = raw(cumulo, "PUT", f"/{bucket}/bad", body=bad, headers={
        "Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(payload))})
    assert status == 400 and b"BadDigest" in body
    status, _, body = raw(cumulo, "PUT", f"/{bucket}/trunc", body=unsigned[:1000], headers={
        "Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(payload))})
    assert status == 400 and b"IncompleteBody" in body
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.head_object(Bucket=bucket, Key="trunc")
    assert err(e) == ("404", 404)


def test_presigned_urls(s3, bucket):
    put_url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "pre/signed"}, ExpiresIn=300)
    req = urllib.request.Request(put_url, data=b"via presigned", method="PUT")
    with urllib.request.urlopen(req) as r:
        assert r.status == 200
    get_url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "pre/signed"}, ExpiresIn=300)
    with urllib.request.urlopen(get_url) as r:
        assert r.read() == b"via presigned"


# ---------------------------------------------------------------- persistence


def test_state_survives_restart_and_kill9(fresh_server):
    fresh_server.start()
    s3 = fresh_server.client("s3")
    s3.create_bucket(Bucket="persist")
    s3.put_bucket_versioning(Bucket="persist", VersioningConfiguration={"Status": "Enabled"})
    v1 = s3.put_object(Bucket="persist", Key="k", Body=b"one", Metadata={"a": "b"})["VersionId"]
    s3.put_object(Bucket="persist", Key="k", Body=b"two")
    s3.put_bucket_tagging(Bucket="persist", Tagging={"TagSet": [{"Key": "t", "Value": "v"}]})
    uid = s3.create_multipart_upload(Bucket="persist", Key="mp")["UploadId"]
    e1 = s3.upload_part(Bucket="persist", Key="mp", UploadId=uid, PartNumber=1, Body=b"part-one")["ETag"]
    fresh_server.kill9()
    fresh_server.start()
    s3 = fresh_server.client("s3")
    assert s3.get_object(Bucket="persist", Key="k")["Body"].read() == b"two"
    g = s3.get_object(Bucket="persist", Key="k", VersionId=v1)
    assert g["Body"].read() == b"one" and g["Metadata"] == {"a": "b"}
    assert s3.get_bucket_tagging(Bucket="persist")["TagSet"] == [{"Key": "t", "Value": "v"}]
    assert s3.get_bucket_versioning(Bucket="persist")["Status"] == "Enabled"
    assert [p["ETag"] for p in s3.list_parts(Bucket="persist", Key="mp", UploadId=uid)["Parts"]] == [e1]
    s3.complete_multipart_upload(Bucket="persist", Key="mp", UploadId=uid,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": e1}]})
    fresh_server.stop()
    fresh_server.start()
    s3 = fresh_server.client("s3")
    assert s3.get_object(Bucket="persist", Key="mp")["Body"].read() == b"part-one"
    assert "Uploads" not in s3.list_multipart_uploads(Bucket="persist")


# ---------------------------------------------------------------- AWS CLI


def test_cli_high_level_commands(cumulo, tmp_path):
    b = name("cli")
    aws(cumulo, "s3", "mb", f"s3://{b}")
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_text("alpha")
    (src / "sub" / "b file.txt").write_text("beta")
    big = tmp_path / "big.bin"
    big_data = os.urandom(10 * MiB + 123)
    big.write_bytes(big_data)
    aws(cumulo, "s3", "cp", str(big), f"s3://{b}/big.bin")
    head = aws(cumulo, "s3api", "head-object", "--bucket", b, "--key", "big.bin")
    assert head["ContentLength"] == len(big_data)
    assert head["ETag"].endswith('-2"')  # multipart through the CLI: 8 MiB parts
    out = tmp_path / "big.out"
    aws(cumulo, "s3", "cp", f"s3://{b}/big.bin", str(out))
    assert out.read_bytes() == big_data
    aws(cumulo, "s3", "sync", str(src), f"s3://{b}/synced")
    listing = aws(cumulo, "s3", "ls", f"s3://{b}/synced/", "--recursive")
    assert "synced/a.txt" in listing and "synced/sub/b file.txt" in listing
    top = aws(cumulo, "s3", "ls", f"s3://{b}/")
    assert "PRE synced/" in top and "big.bin" in top
    assert b in aws(cumulo, "s3", "ls")
    down = tmp_path / "down"
    aws(cumulo, "s3", "sync", f"s3://{b}/synced", str(down))
    assert (down / "sub" / "b file.txt").read_text() == "beta"
    # A second sync has nothing to do.
    assert aws(cumulo, "s3", "sync", str(src), f"s3://{b}/synced") == ""
    aws(cumulo, "s3", "rm", f"s3://{b}", "--recursive")
    aws(cumulo, "s3", "rb", f"s3://{b}")
    proc = aws(cumulo, "s3", "ls", f"s3://{b}", check=False)
    assert proc.returncode != 0 and "NoSuchBucket" in proc.stderr


def test_cli_s3api(cumulo, tmp_path):
    b = name("api")
    aws(cumulo, "s3api", "create-bucket", "--bucket", b)
    f = tmp_path / "f.txt"
    f.write_text("hello cli")
    put = aws(cumulo, "s3api", "put-object", "--bucket", b, "--key", "dir/f.txt", "--body", str(f),
                     "--content-type", "text/plain", "--metadata", "k=v")
    assert put["ETag"] == f'"{hashlib.md5(b"hello cli").hexdigest()}"'
    out = tmp_path / "out.txt"
    got = aws(cumulo, "s3api", "get-object", "--bucket", b, "--key", "dir/f.txt", str(out))
    assert out.read_text() == "hello cli" and got["Metadata"] == {"k": "v"} and got["ContentType"] == "text/plain"
    listed = aws(cumulo, "s3api", "list-objects-v2", "--bucket", b, "--prefix", "dir/")
    assert [o["Key"] for o in listed["Contents"]] == ["dir/f.txt"]
    aws(cumulo, "s3api", "put-bucket-versioning", "--bucket", b, "--versioning-configuration", "Status=Enabled")
    assert aws(cumulo, "s3api", "get-bucket-versioning", "--bucket", b)["Status"] == "Enabled"
    assert aws(cumulo, "s3api", "get-bucket-location", "--bucket", b)["LocationConstraint"] is None
    proc = aws(cumulo, "s3api", "get-object", "--bucket", b, "--key", "missing", str(out), check=False)
    assert proc.returncode != 0 and "NoSuchKey" in proc.stderr
    aws(cumulo, "s3api", "delete-object", "--bucket", b, "--key", "dir/f.txt")
    versions = aws(cumulo, "s3api", "list-object-versions", "--bucket", b)
    assert len(versions["Versions"]) == 1 and len(versions["DeleteMarkers"]) == 1


def test_server_side_encryption_and_expected_owner(s3, bucket):
    assert s3.put_object(Bucket=bucket, Key="plain", Body=b"1")["ServerSideEncryption"] == "AES256"
    r = s3.put_object(Bucket=bucket, Key="kms", Body=b"1", ServerSideEncryption="aws:kms", SSEKMSKeyId="alias/mine")
    assert r["ServerSideEncryption"] == "aws:kms" and r["SSEKMSKeyId"] == "alias/mine"
    h = s3.head_object(Bucket=bucket, Key="kms")
    assert h["ServerSideEncryption"] == "aws:kms" and h["SSEKMSKeyId"] == "alias/mine"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_object(Bucket=bucket, Key="x", Body=b"1", ServerSideEncryption="rot13")
    assert err(e) == ("InvalidArgument", 400)
    assert s3.head_bucket(Bucket=bucket, ExpectedBucketOwner="000000000000")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object(Bucket=bucket, Key="plain", ExpectedBucketOwner="111111111111")
    assert err(e) == ("AccessDenied", 403)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.create_bucket(Bucket=name(), ObjectLockEnabledForBucket=True)
    assert err(e) == ("NotImplemented", 501)


def test_full_object_multipart_checksum(s3, bucket, tmp_path):
    p1, p2 = os.urandom(5 * MiB), os.urandom(100)
    crc = lambda b: base64.b64encode(zlib.crc32(b).to_bytes(4, "big")).decode()
    up = s3.create_multipart_upload(Bucket=bucket, Key="full", ChecksumAlgorithm="CRC32", ChecksumType="FULL_OBJECT")
    assert up["ChecksumType"] == "FULL_OBJECT"
    uid = up["UploadId"]
    parts = []
    for n, data in [(1, p1), (2, p2)]:
        r = s3.upload_part(Bucket=bucket, Key="full", UploadId=uid, PartNumber=n, Body=data, ChecksumAlgorithm="CRC32")
        assert r["ChecksumCRC32"] == crc(data)
        parts.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumCRC32": r["ChecksumCRC32"]})
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="full", UploadId=uid, MultipartUpload={"Parts": parts},
                                     ChecksumCRC32="AAAAAA==", ChecksumType="FULL_OBJECT")
    assert err(e) == ("BadDigest", 400)
    r = s3.complete_multipart_upload(Bucket=bucket, Key="full", UploadId=uid, MultipartUpload={"Parts": parts},
                                     ChecksumCRC32=crc(p1 + p2), ChecksumType="FULL_OBJECT")
    assert r["ChecksumCRC32"] == crc(p1 + p2) and r["ChecksumType"] == "FULL_OBJECT"
    # boto3 validates the full-object checksum against the body it downloads.
    g = s3.get_object(Bucket=bucket, Key="full", ChecksumMode="ENABLED")
    assert g["ChecksumCRC32"] == crc(p1 + p2) and g["Body"].read() == p1 + p2
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.create_multipart_upload(Bucket=bucket, Key="x", ChecksumAlgorithm="SHA256", ChecksumType="FULL_OBJECT")
    assert err(e) == ("InvalidRequest", 400)
    # s3transfer's multipart upload with a whole-file checksum.

    f = tmp_path / "f.bin"
    f.write_bytes(p1 + p2)
    cfg = boto3.s3.transfer.TransferConfig(multipart_threshold=5 * MiB, multipart_chunksize=5 * MiB)
    s3.upload_file(str(f), bucket, "via-transfer", ExtraArgs={"ChecksumCRC32": crc(p1 + p2)}, Config=cfg)
    h = s3.head_object(Bucket=bucket, Key="via-transfer", ChecksumMode="ENABLED")
    assert h["ChecksumCRC32"] == crc(p1 + p2) and h["ETag"].endswith('-2"')


def test_list_buckets_pages_and_filters(cumulo, s3):
    prefix = name("lb")
    names = [f"{prefix}-{i}" for i in range(3)]
    for n in names:
        s3.create_bucket(Bucket=n)
    r = s3.list_buckets(Prefix=prefix, MaxBuckets=2)
    assert [b["Name"] for b in r["Buckets"]] == names[:2] and r["Prefix"] == prefix
    r2 = s3.list_buckets(Prefix=prefix, MaxBuckets=2, ContinuationToken=r["ContinuationToken"])
    assert [b["Name"] for b in r2["Buckets"]] == names[2:] and "ContinuationToken" not in r2
    pages = s3.get_paginator("list_buckets").paginate(Prefix=prefix, PaginationConfig={"PageSize": 1})
    assert [b["Name"] for p in pages for b in p["Buckets"]] == names
    assert s3.list_buckets(Prefix=prefix, BucketRegion="eu-west-1")["Buckets"] == []
    for n in names:
        s3.delete_bucket(Bucket=n)


def test_cors_preflight_and_response_headers(cumulo, s3, bucket):
    pre = {"Origin": "https://app.example.com", "Access-Control-Request-Method": "PUT"}
    status, _, body = raw(cumulo, "OPTIONS", f"/{bucket}/k", headers=pre)
    assert status == 403 and b"CORS is not enabled for this bucket" in body
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [
        {"AllowedOrigins": ["https://*.example.com"], "AllowedMethods": ["PUT", "GET"],
         "AllowedHeaders": ["content-type", "x-amz-*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 600}]})
    status, headers, _ = raw(cumulo, "OPTIONS", f"/{bucket}/k",
                             headers={**pre, "Access-Control-Request-Headers": "Content-Type, X-Amz-Date"})
    assert status == 200
    assert headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert headers["Access-Control-Allow-Methods"] == "PUT, GET"
    assert headers["Access-Control-Allow-Headers"] == "Content-Type, X-Amz-Date"
    assert headers["Access-Control-Max-Age"] == "600"
    status, _, body = raw(cumulo, "OPTIONS", f"/{bucket}/k",
                          headers={"Origin": "https://evil.com", "Access-Control-Request-Method": "PUT"})
    assert status == 403 and b"<Code>AccessForbidden</Code>" in body
    status, _, _ = raw(cumulo, "OPTIONS", f"/{bucket}/k", headers={"Origin": "https://app.example.com"})
    assert status == 400
    s3.put_object(Bucket=bucket, Key="k", Body=b"1")
    status, headers, _ = raw(cumulo, "GET", f"/{bucket}/k", headers={"Origin": "https://app.example.com"})
    assert status == 200 and headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert headers["Access-Control-Expose-Headers"] == "ETag"
    status, headers, _ = raw(cumulo, "GET", f"/{bucket}/k", headers={"Origin": "https://evil.com"})
    assert status == 200 and "Access-Control-Allow-Origin" not in headers


def test_get_object_attributes(s3, bucket):
    body = b"attrs" * 10
    s3.put_object(Bucket=bucket, Key="a", Body=body, ChecksumAlgorithm="SHA256")
    r = s3.get_object_attributes(Bucket=bucket, Key="a", ObjectAttributes=["ETag", "Checksum", "ObjectSize", "StorageClass"])
    assert r["ETag"] == hashlib.md5(body).hexdigest()
    assert r["ObjectSize"] == len(body) and r["StorageClass"] == "STANDARD"
    assert r["Checksum"]["ChecksumSHA256"] == base64.b64encode(hashlib.sha256(body).digest()).decode()
    assert "ObjectParts" not in r
    uid = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    e1 = s3.upload_part(Bucket=bucket, Key="mp", UploadId=uid, PartNumber=1, Body=b"x" * (5 * MiB))["ETag"]
    e2 = s3.upload_part(Bucket=bucket, Key="mp", UploadId=uid, PartNumber=2, Body=b"y")["ETag"]
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=uid, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
    r = s3.get_object_attributes(Bucket=bucket, Key="mp", ObjectAttributes=["ObjectParts"], MaxParts=1)
    parts = r["ObjectParts"]
    assert parts["TotalPartsCount"] == 2 and parts["IsTruncated"] is True
    assert parts["Parts"] == [{"PartNumber": 1, "Size": 5 * MiB}]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_object_attributes(Bucket=bucket, Key="a", ObjectAttributes=["Color"])
    assert err(e) == ("InvalidArgument", 400)
    with pytest.raises(s3.exceptions.NoSuchKey):
        s3.get_object_attributes(Bucket=bucket, Key="missing", ObjectAttributes=["ETag"])


# ---------------------------------------------------------------- replication


def replication_config(dest, **rule):
    return {"Role": "arn:aws:iam::000000000000:role/replication", "Rules": [dict({
        "ID": "logs", "Priority": 1, "Status": "Enabled", "Filter": {"Prefix": "logs/"},
        "Destination": {"Bucket": f"arn:aws:s3:::{dest}", "StorageClass": "STANDARD_IA"},
        "DeleteMarkerReplication": {"Status": "Disabled"}}, **rule)]}


def test_replication_between_buckets_as_s3_reports_it(s3):
    src, dst = name("src"), name("dst")
    for b in (src, dst):
        s3.create_bucket(Bucket=b)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.get_bucket_replication(Bucket=src)
    assert err(e) == ("ReplicationConfigurationNotFoundError", 404)
    # S3's preconditions: versioning on the source, then on the destination.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_bucket_replication(Bucket=src, ReplicationConfiguration=replication_config(dst))
    assert err(e) == ("InvalidRequest", 400)
    assert e.value.response["Error"]["Message"] == "Versioning must be 'Enabled' on the bucket to apply a replication configuration"
    s3.put_bucket_versioning(Bucket=src, VersioningConfiguration={"Status": "Enabled"})
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_bucket_replication(Bucket=src, ReplicationConfiguration=replication_config(dst))
    assert e.value.response["Error"]["Message"] == "Destination bucket must have versioning enabled."
    with pytest.raises(botocore.exceptions.ClientError) as e:
        s3.put_bucket_replication(Bucket=src, ReplicationConfiguration={"Role": "r", "Rules": []})
    assert err(e) == ("MalformedXML", 400)
    s3.put_bucket_versioning(Bucket=dst, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object(Bucket=src, Key="logs/before", Body=b"old")  # written before the rule exists
    s3.put_bucket_replication(Bucket=src, ReplicationConfiguration=replication_config(dst))
    got = s3.get_bucket_replication(Bucket=src)["ReplicationConfiguration"]
    assert got["Rules"][0]["Destination"] == {"Bucket": f"arn:aws:s3:::{dst}", "StorageClass": "STANDARD_IA"}
    assert got["Rules"][0]["Filter"] == {"Prefix": "logs/"}

    put = s3.put_object(Bucket=src, Key="logs/a", Body=b"payload")
    s3.put_object(Bucket=src, Key="other/b", Body=b"not replicated")
    head = s3.head_object(Bucket=src, Key="logs/a")
    assert head["ReplicationStatus"] == "COMPLETED"
    replica = s3.get_object(Bucket=dst, Key="logs/a")
    assert replica["Body"].read() == b"payload"
    assert replica["ReplicationStatus"] == "REPLICA"
    assert replica["StorageClass"] == "STANDARD_IA"
    assert replica["VersionId"] == put["VersionId"]
    assert "ReplicationStatus" not in s3.head_object(Bucket=src, Key="other/b")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=dst).get("Contents", [])]
    assert keys == ["logs/a"]

    s3.delete_bucket_replication(Bucket=src)
    s3.delete_bucket_replication(Bucket=src)  # idempotent, as on S3
    s3.put_object(Bucket=src, Key="logs/c", Body=b"after")
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=dst)["Contents"]] == ["logs/a"]
