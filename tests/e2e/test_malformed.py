"""Malformed requests, sent raw, to every service: each gets a 4xx AWS-shaped error with a request
id, never a 5xx, a hang or a crash. Only the shape is asserted (XML with <Code> or JSON with
__type), since each service words its own errors.

A case a service handles itself is skipped while that service answers 501 (not implemented in this
build); the cases the gateway handles (signatures, URIs, sizes) never skip."""
import pytest

from conftest import CumuloServer, raw_http

DATE = "20240101T000000Z"


def scoped(service):
    """A well-formed but unverified SigV4 header naming the service, as real clients send."""
    return ("Authorization", f"AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/{service}/aws4_request, "
                             "SignedHeaders=host;x-amz-date, Signature=00")


# How a minimal valid-looking request to each service looks: (method, path, headers, body).
JSON10 = "application/x-amz-json-1.0"
JSON11 = "application/x-amz-json-1.1"
FORM = "application/x-www-form-urlencoded; charset=utf-8"
BASE = {
    "s3": ("GET", "/malformed-bucket", [], b""),
    "sqs-json": ("POST", "/", [("X-Amz-Target", "AmazonSQS.ListQueues"), ("Content-Type", JSON10)], b"{}"),
    "sqs-query": ("POST", "/", [("Content-Type", FORM)], b"Action=ListQueues&Version=2012-11-05"),
    "sns": ("POST", "/", [("Content-Type", FORM)], b"Action=ListTopics&Version=2010-03-31"),
    "ssm": ("POST", "/", [("X-Amz-Target", "AmazonSSM.DescribeParameters"), ("Content-Type", JSON11)], b"{}"),
    "sts": ("POST", "/", [("Content-Type", FORM)], b"Action=GetCallerIdentity&Version=2011-06-15"),
}
SIGNING_NAME = {"sqs-json": "sqs", "sqs-query": "sqs"}


def request(target, method=None, path=None, headers=None, body=None, auth=True, extra=()):
    m, p, h, b = BASE[target]
    h = list(h if headers is None else headers)
    if auth:
        h += [scoped(SIGNING_NAME.get(target, target)), ("X-Amz-Date", DATE)]
    return (method or m, p if path is None else path, h + list(extra), b if body is None else body)


def assert_aws_4xx(resp, case, allow_501=True):
    if allow_501 and resp.status == 501 and resp.error_code() == "NotImplemented":
        pytest.skip(f"{case}: service not implemented in this build")
    assert 400 <= resp.status < 500, f"{case}: {resp.status} {resp.body[:300]!r}"
    assert resp.error_code(), f"{case}: not AWS-shaped: {resp.body[:300]!r}"
    assert resp.request_id(), f"{case}: no request id"


def send(server, req, version="HTTP/1.1"):
    method, path, headers, body = req
    return server.raw(method, path, headers, body, version)


TARGETS = list(BASE)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("garbage", ["garbage", "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA256 Credential=%%%, Signature=zz",
                                     "Bearer abc.def", "AWS4-HMAC-SHA256 Credential=a/b/c,,,, Signature="])
def test_garbage_authorization(cumulo, target, garbage):
    method, path, headers, body = request(target, auth=False, extra=[("Authorization", garbage)])
    assert_aws_4xx(send(cumulo, (method, path, headers, body)), f"{target} {garbage}", allow_501=False)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("where", ["path", "query"])
def test_bad_percent_encoding(cumulo, target, where):
    method, path, headers, body = request(target)
    path = path.rstrip("/") + "/%zz%4" if where == "path" else path + "?x=%G1&y=%"
    assert_aws_4xx(send(cumulo, (method, path, headers, body)), f"{target} {where}", allow_501=False)


@pytest.mark.parametrize("target", TARGETS)
def test_huge_header(cumulo, target):
    method, path, headers, body = request(target, extra=[("X-Huge", "a" * 200_000)])
    assert_aws_4xx(send(cumulo, (method, path, headers, body)), target, allow_501=False)


@pytest.mark.parametrize("target", TARGETS)
def test_many_headers(cumulo, target):
    extra = [(f"X-Many-{i}", "v" * 100) for i in range(900)]
    assert_aws_4xx(send(cumulo, request(target, extra=extra)), target, allow_501=False)


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "s3"])
def test_non_utf8_body(cumulo, target):
    req = request(target, body=b"\xff\xfe\x00garbage\xc3\x28")
    assert_aws_4xx(send(cumulo, req), target)


def test_non_utf8_key_in_s3_path(cumulo):
    assert_aws_4xx(send(cumulo, request("s3", method="PUT", path="/malformed-bucket/%ff%fe", body=b"x")), "s3")


@pytest.mark.parametrize("target", ["sqs-query", "sns", "sts"])
def test_unknown_action(cumulo, target):
    version = BASE[target][3].split(b"&")[1]
    assert_aws_4xx(send(cumulo, request(target, body=b"Action=NoSuchThing&" + version)), target)


@pytest.mark.parametrize("target", ["sqs-query", "sns", "sts"])
def test_missing_action(cumulo, target):
    version = BASE[target][3].split(b"&")[1]
    assert_aws_4xx(send(cumulo, request(target, body=version)), target)


@pytest.mark.parametrize("target,header", [("sqs-json", "AmazonSQS.NoSuchThing"),
                                           ("ssm", "AmazonSSM.NoSuchThing")])
def test_unknown_json_operation(cumulo, target, header):
    headers = [(k, header if k == "X-Amz-Target" else v) for k, v in BASE[target][2]]
    assert_aws_4xx(send(cumulo, request(target, headers=headers)), target)


@pytest.mark.parametrize("target", ["sqs-json", "ssm"])
@pytest.mark.parametrize("body", [b"{not json", b"[1,2,3]", b"\"string\"", b"{\"QueueNamePrefix\": 5, \"MaxResults\": \"x\"}"])
def test_bad_json(cumulo, target, body):
    assert_aws_4xx(send(cumulo, request(target, body=body)), f"{target} {body!r}")


@pytest.mark.parametrize("target,content_type", [("sqs-json", "text/plain"), ("ssm", "application/xml"),
                                                 ("sns", "application/json"), ("sts", "text/plain")])
def test_wrong_content_type(cumulo, target, content_type):
    headers = [(k, content_type if k == "Content-Type" else v) for k, v in BASE[target][2]]
    # A query body under a non-form content type: the service sees no Action.
    assert_aws_4xx(send(cumulo, request(target, headers=headers)), f"{target} {content_type}")


@pytest.mark.parametrize("target", [t for t in TARGETS if t != "s3"])
def test_http_1_0_malformed(cumulo, target):
    req = request(target, body=b"\x00\x01 definitely not a request")
    assert_aws_4xx(send(cumulo, req, version="HTTP/1.0"), target)


def test_http_1_0_is_served(cumulo):
    resp = cumulo.raw("GET", "/_cumulo/health", version="HTTP/1.0")
    assert resp.status == 200 and resp.request_id()


def test_unparseable_scope_in_presigned_url(cumulo):
    path = "/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=nonsense&X-Amz-Signature=00"
    assert_aws_4xx(cumulo.raw("GET", path), "presigned", allow_501=False)


@pytest.fixture(scope="module")
def small_bodies():
    server = CumuloServer(extra_args=["--max-body-size", "1024"]).start()
    yield server
    server.stop()


@pytest.mark.parametrize("target", TARGETS)
def test_body_over_the_limit(small_bodies, target):
    method, path, headers, _ = request(target)
    method = "PUT" if target == "s3" else method
    path = "/malformed-bucket/key" if target == "s3" else path
    assert_aws_4xx(send(small_bodies, (method, path, headers, b"x" * 4096)), target, allow_501=False)


@pytest.mark.parametrize("target", TARGETS)
def test_body_over_the_limit_chunked(small_bodies, target):
    # No Content-Length to refuse early on: the limit must hold while reading.
    method, path, headers, _ = request(target)
    chunk = b"x" * 3000
    body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(chunk), chunk)
    lines = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{small_bodies.port}"]
    lines += [f"{k}: {v}" for k, v in headers] + ["Transfer-Encoding: chunked", "Connection: close"]
    resp = raw_http(small_bodies.port, ("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    assert_aws_4xx(resp, target, allow_501=False)


def test_body_at_the_limit_is_accepted(small_bodies):
    method, path, headers, _ = request("sqs-json")
    resp = send(small_bodies, (method, path, headers, b" " * 1024))
    assert resp.status != 413 and resp.error_code() != "RequestEntityTooLarge"


def test_server_survives_all_of_it(cumulo):
    assert cumulo.proc.poll() is None
    assert cumulo.raw("GET", "/_cumulo/health").status == 200
