"""The gateway: health, routing, request ids, signature verification, and honest 501s."""
import json
import os
import subprocess
import time
import urllib.error
import urllib.request

import botocore.exceptions
import pytest
import requests

from conftest import BIN, CumuloServer, free_port

SERVICES = ("s3", "sqs", "sns", "ssm", "sts")


def test_health_reports_services_and_store(cumulo):
    for path in ("/_cumulo/health", "/_localstack/health"):
        with urllib.request.urlopen(cumulo.endpoint + path) as r:
            body = json.load(r)
            assert r.headers["x-amzn-requestid"]
        assert r.status == 200
        assert body["store"]["status"] == "ok"
        assert {"s3", "sqs", "sns", "ssm", "sts"} <= set(body["services"])


def test_unemulated_service_answers_501_naming_it(cumulo):
    req = urllib.request.Request(
        cumulo.endpoint + "/",
        data=b"{}",
        headers={
            "X-Amz-Target": "AWSGlue.GetDatabases",
            "Content-Type": "application/x-amz-json-1.1",
            "Authorization": "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/glue/aws4_request, SignedHeaders=host, Signature=0",
        },
    )
    try:
        urllib.request.urlopen(req)
        raise AssertionError("expected 501")
    except urllib.error.HTTPError as e:
        assert e.code == 501
        assert "glue" in e.read().decode()
        assert e.headers["x-amzn-requestid"]


def call_each_service(server, **creds):
    """One cheap read call per service: (service, exception or None)."""
    calls = {
        "s3": lambda c: c.list_buckets(),
        "sqs": lambda c: c.list_queues(),
        "sns": lambda c: c.list_topics(),
        "ssm": lambda c: c.describe_parameters(),
        "sts": lambda c: c.get_caller_identity(),
    }
    out = {}
    for name, call in calls.items():
        try:
            call(server.client(name, **creds))
            out[name] = None
        except botocore.exceptions.ClientError as e:
            out[name] = e
    return out


def code(err):
    return err.response["Error"]["Code"] if err is not None else None


def test_every_response_carries_a_request_id(cumulo):
    for name, err in call_each_service(cumulo).items():
        meta = err.response["ResponseMetadata"] if err else None
        if meta is None:
            continue  # success: botocore already parsed the id into the result
        headers = meta["HTTPHeaders"]
        assert headers.get("x-amzn-requestid") or headers.get("x-amz-request-id"), name


@pytest.fixture(scope="module")
def verifying():
    server = CumuloServer(
        extra_args=["--verify-signatures", "--credentials", "AKIDGOOD:good-secret",
                    "--credentials", "test:test"]
    ).start()
    yield server
    server.stop()


def test_verification_accepts_the_right_keys(verifying):
    for creds in ({"key": "AKIDGOOD", "secret": "good-secret"}, {"key": "test", "secret": "test"}):
        for name, err in call_each_service(verifying, **creds).items():
            # Until a service implements the call it answers 501; never an auth error.
            assert err is None or code(err) == "NotImplemented", (name, code(err))


def test_verification_rejects_a_wrong_secret(verifying):
    expected = {
        "s3": "SignatureDoesNotMatch",
        "sqs": "SignatureDoesNotMatch",  # awsQueryCompatible: botocore maps the query code
        "sns": "SignatureDoesNotMatch",
        "ssm": "InvalidSignatureException",
        "sts": "SignatureDoesNotMatch",
    }
    errors = call_each_service(verifying, key="AKIDGOOD", secret="wrong")
    for name, err in errors.items():
        assert code(err) == expected[name], (name, err)
        status = err.response["ResponseMetadata"]["HTTPStatusCode"]
        assert status == (400 if name == "ssm" else 403), name


def test_verification_rejects_an_unknown_key(verifying):
    expected = {
        "s3": "InvalidAccessKeyId",
        "sqs": "InvalidClientTokenId",
        "sns": "InvalidClientTokenId",
        "ssm": "UnrecognizedClientException",
        "sts": "InvalidClientTokenId",
    }
    errors = call_each_service(verifying, key="AKIDNOBODY", secret="whatever")
    assert {n: code(e) for n, e in errors.items()} == expected


def test_verification_rejects_unsigned_requests_but_not_health(verifying):
    r = requests.get(verifying.endpoint + "/some-bucket")
    assert r.status_code == 403 and "<Code>AccessDenied</Code>" in r.text
    r = requests.post(verifying.endpoint + "/", data={"Action": "GetCallerIdentity", "Version": "2011-06-15"})
    assert r.status_code == 403 and "<Code>MissingAuthenticationToken</Code>" in r.text
    assert requests.get(verifying.endpoint + "/_localstack/health").status_code == 200


def test_presigned_urls_are_verified(verifying):
    s3 = verifying.client("s3", key="AKIDGOOD", secret="good-secret", signature_version="s3v4")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "b", "Key": "a key"}, ExpiresIn=60)
    ok = requests.get(url)
    assert ok.status_code not in (400, 403), ok.text  # 404/501: past authentication
    tampered = requests.get(url.replace("a%20key", "other"))
    assert tampered.status_code == 403 and "SignatureDoesNotMatch" in tampered.text
    short = s3.generate_presigned_url("get_object", Params={"Bucket": "b", "Key": "k"}, ExpiresIn=1)
    time.sleep(2.1)
    expired = requests.get(short)
    assert expired.status_code == 403 and "Request has expired" in expired.text


def test_default_sigv2_presigned_urls_are_verified(verifying):
    # boto3 presigns S3 URLs with signature version 2 unless told otherwise.
    s3 = verifying.client("s3", key="AKIDGOOD", secret="good-secret")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": "b", "Key": "a key"}, ExpiresIn=60)
    assert "AWSAccessKeyId=" in url
    ok = requests.get(url)
    assert ok.status_code not in (400, 403), ok.text
    tampered = requests.get(url.replace("a%20key", "other"))
    assert tampered.status_code == 403 and "SignatureDoesNotMatch" in tampered.text
    wrong = verifying.client("s3", key="AKIDGOOD", secret="bad").generate_presigned_url(
        "get_object", Params={"Bucket": "b", "Key": "k"})
    assert requests.get(wrong).status_code == 403


def test_aws_cli_with_wrong_secret_fails(verifying):
    env = dict(os.environ, AWS_ACCESS_KEY_ID="AKIDGOOD", AWS_SECRET_ACCESS_KEY="nope",
               AWS_DEFAULT_REGION="us-east-1")
    proc = subprocess.run(
        ["aws", "--endpoint-url", verifying.endpoint, "sts", "get-caller-identity"],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert proc.returncode != 0
    assert "SignatureDoesNotMatch" in proc.stderr


def test_region_comes_from_the_credential_scope(cumulo):
    # State is per region: a queue made with a eu-west-3 scope is in eu-west-3 only.
    paris = cumulo.client("sqs", region="eu-west-3")
    try:
        url = paris.create_queue(QueueName="gw-region")["QueueUrl"]
    except botocore.exceptions.ClientError as e:
        if code(e) == "NotImplemented":
            pytest.skip("sqs not implemented in this build")
        raise
    arn = paris.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    assert arn == "arn:aws:sqs:eu-west-3:000000000000:gw-region"
    virginia = cumulo.client("sqs", region="us-east-1")
    assert "gw-region" not in " ".join(virginia.list_queues().get("QueueUrls", []))


def test_virtual_hosted_bucket_is_path_style_to_s3(cumulo):
    s3 = cumulo.client("s3")
    try:
        s3.create_bucket(Bucket="gw-vhost")
        s3.put_object(Bucket="gw-vhost", Key="dir/a b.txt", Body=b"hello")
    except botocore.exceptions.ClientError as e:
        if code(e) == "NotImplemented":
            pytest.skip("s3 not implemented in this build")
        raise
    for host in (f"gw-vhost.localhost:{cumulo.port}", "gw-vhost.s3.localhost.localstack.cloud",
                 "gw-vhost.s3.amazonaws.com", "gw-vhost.s3.eu-west-1.amazonaws.com"):
        r = cumulo.raw("GET", "/dir/a%20b.txt", [("Host", host)])
        assert r.status == 200 and r.body == b"hello", host


def test_gateway_listen_is_honoured(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUMULO_")}
    env["GATEWAY_LISTEN"] = f"127.0.0.1:{port}"
    proc = subprocess.Popen([str(BIN), "serve", "--in-memory"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 10
        while True:
            try:
                assert requests.get(f"http://127.0.0.1:{port}/_cumulo/health", timeout=1).status_code == 200
                break
            except requests.ConnectionError:
                assert time.time() < deadline, proc.stderr.read1().decode()
                time.sleep(0.02)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert proc.returncode == 0  # SIGTERM is a clean shutdown


def test_binds_loopback_by_default(cumulo):
    # The session server was started without --host: it must not listen on other interfaces.
    listeners = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            local, state = row.split()[1], row.split()[3]
            addr, port = local.rsplit(":", 1)
            if state == "0A" and int(port, 16) == cumulo.port:  # 0A: LISTEN
                listeners.append(addr)
    assert listeners == ["0100007F"], listeners  # 127.0.0.1, little-endian hex
