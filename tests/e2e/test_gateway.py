"""The gateway: health, routing, request ids, and honest 501s."""
import json
import urllib.error
import urllib.request


def test_health_reports_services_and_store(cumulo):
    for path in ("/_cumulo/health", "/_localstack/health"):
        with urllib.request.urlopen(cumulo.endpoint + path) as r:
            body = json.load(r)
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
