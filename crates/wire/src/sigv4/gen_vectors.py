"""Regenerates vectors.json: requests signed by botocore (the AWS CLI's and boto3's signer), the
oracle cumulo's SigV4 verifier is tested against. Run: python3 gen_vectors.py > vectors.json"""
import datetime
import json
from unittest import mock

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

NOW = datetime.datetime(2024, 1, 2, 3, 4, 5)
CREDS = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")

CASES = [
    # name, signer, service, region, method, url, headers, body
    ("sqs-json", "v4", "sqs", "us-east-1", "POST", "http://localhost:4566/",
     {"X-Amz-Target": "AmazonSQS.ListQueues", "Content-Type": "application/x-amz-json-1.0"}, b"{}"),
    ("sts-query", "v4", "sts", "eu-west-1", "POST", "http://localhost:4566/",
     {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
     b"Action=GetCallerIdentity&Version=2011-06-15"),
    ("lambda-path-double-encoded", "v4", "lambda", "us-east-1", "GET",
     "http://localhost:4566/2015-03-31/functions/my%20func/configuration?Qualifier=%24LATEST&a=b%2Fc",
     {}, b""),
    ("non-s3-dot-segments", "v4", "execute-api", "us-east-1", "GET",
     "http://localhost:4566/a/./b/../c//d/", {"X-Custom": "  spaced   value  "}, b""),
    ("s3-put-unnormalized-key", "s3v4", "s3", "us-east-1", "PUT",
     "http://localhost:4566/bucket/a/../b//c%20d%2Be.txt", {"Content-Type": "text/plain"}, b"hello"),
    ("s3-unsigned-payload", "s3v4-unsigned", "s3", "us-west-2", "PUT",
     "http://bucket.localhost:4566/key", {}, b"data"),
    ("s3-list-query", "s3v4", "s3", "us-east-1", "GET",
     "http://localhost:4566/bucket?list-type=2&prefix=a%2Fb%20c&delimiter=%2F", {}, b""),
    ("s3-presigned-get", "s3-query", "s3", "us-east-1", "GET",
     "http://localhost:4566/bucket/some%20key.txt", {}, b""),
    ("sts-presigned", "query", "sts", "us-east-1", "GET",
     "http://localhost:4566/?Action=GetCallerIdentity&Version=2011-06-15", {}, b""),
]


def sign(kind, service, region, method, url, headers, body):
    req = AWSRequest(method=method, url=url, headers=dict(headers), data=body)
    if kind == "v4":
        auth = botocore.auth.SigV4Auth(CREDS, service, region)
    elif kind == "s3v4":
        auth = botocore.auth.S3SigV4Auth(CREDS, service, region)
    elif kind == "s3v4-unsigned":
        auth = botocore.auth.S3SigV4Auth(CREDS, service, region)
        req.headers["X-Amz-Content-SHA256"] = "UNSIGNED-PAYLOAD"
    elif kind == "s3-query":
        auth = botocore.auth.S3SigV4QueryAuth(CREDS, service, region, expires=300)
    else:
        auth = botocore.auth.SigV4QueryAuth(CREDS, service, region, expires=300)
    with mock.patch("botocore.auth.get_current_datetime", return_value=NOW):
        auth.add_auth(req)
    prepared = req.prepare()
    path, _, query = prepared.url.split("://", 1)[1].partition("/")[2].partition("?")
    host = prepared.url.split("://", 1)[1].split("/", 1)[0]
    hdrs = [[k, v if isinstance(v, str) else v.decode()] for k, v in prepared.headers.items()]
    if not any(k.lower() == "host" for k, _ in hdrs):
        hdrs.append(["Host", host])
    return {"method": method, "path": "/" + path, "query": query, "headers": hdrs,
            "body": (prepared.body or b"").decode()}


out = []
for name, kind, service, region, method, url, headers, body in CASES:
    case = sign(kind, service, region, method, url, headers, body)
    case["name"] = name
    out.append(case)
print(json.dumps({"secret": CREDS.secret_key, "now": NOW.strftime("%Y%m%dT%H%M%SZ"), "cases": out}, indent=1))
