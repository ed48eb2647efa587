"""Regenerates vectors_v2.json: S3 SigV2 requests signed by botocore (header and presigned), the
oracle for cumulo's V2 verifier. Run: python3 gen_vectors_v2.py > vectors_v2.json"""
import json
from unittest import mock

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

NOW = 1704164645  # 2024-01-02T03:04:05Z
CREDS = Credentials("AKID", "secret")
CASES = [
    # name, presigned, method, url, resource (path style), headers
    ("header-put", False, "PUT", "http://localhost:4566/bucket/a%20b.txt", "/bucket/a%20b.txt",
     {"Content-Type": "text/plain", "Content-MD5": "XUFAKrxLKna5cZ2REBfFkg==", "x-amz-meta-Color": " blue "}),
    ("header-acl", False, "GET", "http://localhost:4566/bucket?acl", "/bucket", {}),
    ("header-virtual-host", False, "GET", "http://bucket.localhost:4566/key?versionId=v%2F1&prefix=x",
     "/bucket/key", {}),
    ("presigned-get", True, "GET", "http://localhost:4566/bucket/some%20key", "/bucket/some%20key", {}),
    ("presigned-response-type", True, "GET",
     "http://localhost:4566/bucket/k?response-content-type=text%2Fhtml", "/bucket/k", {}),
]

out = []
with mock.patch("time.time", return_value=NOW), \
        mock.patch("botocore.auth.formatdate", return_value="Tue, 02 Jan 2024 03:04:05 GMT"):
    for name, presigned, method, url, resource, headers in CASES:
        req = AWSRequest(method=method, url=url, headers=dict(headers))
        req.auth_path = resource
        signer = botocore.auth.HmacV1QueryAuth(CREDS, expires=3600) if presigned else botocore.auth.HmacV1Auth(CREDS)
        signer.add_auth(req)
        p = req.prepare()
        query = p.url.partition("?")[2]
        hdrs = [[k, v if isinstance(v, str) else v.decode()] for k, v in p.headers.items()]
        out.append({"name": name, "method": method, "resource": resource, "query": query, "headers": hdrs})
print(json.dumps({"now": NOW, "cases": out}, indent=1))
