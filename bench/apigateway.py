#!/usr/bin/env python3
"""API Gateway → Lambda through `cumulo serve`: requests per second and p50/p99 latency of a warm
node function behind a REST API (AWS_PROXY) and an HTTP API (payload 2.0), against invoking the
same function directly (Lambda Invoke over HTTP); and a REST API's AWS integration sending to SQS
(`sqs:path/<account>/<queue>`, a form template, a static response template) against SQS's own
SendMessage over HTTP: first one keep-alive connection each, sequential
(the added latency per request), then `--connections` concurrent connections for `--duration`
seconds with wrk (throughput; skipped when wrk is not installed).

Usage: python3 bench/apigateway.py [--requests 300] [--connections 8] [--duration 5] [--bin target/release/cumulo]
No peer is measured: moto's API Gateway does not run Lambda functions without Docker.
"""
import argparse
import http.client
import io
import json
import os
import pathlib
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from run import run_wrk  # noqa: E402  (bench/run.py: the wrk driver every bench shares)

NODE = "exports.handler = async (e) => ({statusCode: 200, body: JSON.stringify({ok: true})});\n"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure(port, method, path, body=b"", headers=None, n=300):
    conn = http.client.HTTPConnection("127.0.0.1", port)
    headers = headers or {}
    lat = []
    for i in range(n + 20):
        t = time.perf_counter()
        conn.request(method, path, body=body, headers=headers)
        r = conn.getresponse()
        r.read()
        assert r.status == 200, (r.status, path)
        if i >= 20:  # warm-up excluded
            lat.append((time.perf_counter() - t) * 1000)
    total = sum(lat) / 1000
    lat.sort()
    return {"rps": round(n / total, 1), "p50_ms": round(statistics.median(lat), 2),
            "p99_ms": round(lat[int(len(lat) * 0.99) - 1], 2)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--connections", type=int, default=8)
    ap.add_argument("--duration", type=int, default=5)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "cumulo"))
    args = ap.parse_args()
    import boto3
    port = free_port()
    data = tempfile.mkdtemp()
    proc = subprocess.Popen([args.bin, "serve", "--port", str(port), "--data-dir", data],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                http.client.HTTPConnection("127.0.0.1", port).request("GET", "/_cumulo/health")
                break
            except OSError:
                time.sleep(0.05)
        kw = dict(endpoint_url=f"http://127.0.0.1:{port}", region_name="us-east-1",
                  aws_access_key_id="test", aws_secret_access_key="test")
        lam, apigw, v2, sqs = (boto3.client(s, **kw) for s in ("lambda", "apigateway", "apigatewayv2", "sqs"))
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            z.writestr("index.js", NODE)
        fn = lam.create_function(FunctionName="bench", Runtime="nodejs20.x", Handler="index.handler",
                                 Role="arn:aws:iam::000000000000:role/r", Code={"ZipFile": buf.getvalue()})
        lam.get_waiter("function_active_v2").wait(FunctionName="bench")
        arn = fn["FunctionArn"]
        api = apigw.create_rest_api(name="bench")
        root = api["rootResourceId"]
        apigw.put_method(restApiId=api["id"], resourceId=root, httpMethod="GET", authorizationType="NONE")
        apigw.put_integration(restApiId=api["id"], resourceId=root, httpMethod="GET", type="AWS_PROXY",
                              integrationHttpMethod="POST",
                              uri=f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{arn}/invocations")
        apigw.create_deployment(restApiId=api["id"], stageName="b")
        http_api = v2.create_api(Name="bench", ProtocolType="HTTP", Target=arn)
        sqs.create_queue(QueueName="bench")
        to_sqs = apigw.create_rest_api(name="bench-sqs")
        apigw.put_method(restApiId=to_sqs["id"], resourceId=to_sqs["rootResourceId"], httpMethod="POST",
                         authorizationType="NONE")
        apigw.put_integration(
            restApiId=to_sqs["id"], resourceId=to_sqs["rootResourceId"], httpMethod="POST", type="AWS",
            integrationHttpMethod="POST", uri="arn:aws:apigateway:us-east-1:sqs:path/000000000000/bench",
            requestParameters={"integration.request.header.Content-Type": "'application/x-www-form-urlencoded'"},
            requestTemplates={"application/json": "Action=SendMessage&MessageBody=$util.urlEncode($input.body)"})
        apigw.put_integration_response(restApiId=to_sqs["id"], resourceId=to_sqs["rootResourceId"],
                                       httpMethod="POST", statusCode="200",
                                       responseTemplates={"application/json": '{"queued": true}'})
        apigw.create_deployment(restApiId=to_sqs["id"], stageName="b")
        targets = {
            "lambda_invoke_direct": ("POST", "/2015-03-31/functions/bench/invocations", b"{}", {}),
            "rest_api_aws_proxy": ("GET", "/b/", b"", {"Host": f"{api['id']}.execute-api.localhost:{port}"}),
            "http_api_payload_2": ("GET", "/", b"", {"Host": f"{http_api['ApiId']}.execute-api.localhost:{port}"}),
            "sqs_send_direct": ("POST", "/000000000000/bench",
                                b"Action=SendMessage&Version=2012-11-05&MessageBody=%7B%22n%22%3A1%7D",
                                {"Content-Type": "application/x-www-form-urlencoded"}),
            "rest_api_aws_sqs": ("POST", "/b/", b'{"n":1}', {"Host": f"{to_sqs['id']}.execute-api.localhost:{port}",
                                                          "Content-Type": "application/json"}),
        }
        results = {}
        for name, (method, path, body, headers) in targets.items():
            results[name] = {"sequential": measure(port, method, path, body, headers=headers, n=args.requests)}
            print(name, json.dumps(results[name]), flush=True)
        if shutil.which("wrk"):
            # Unmeasured: start the function's concurrent instances (one per connection), so the
            # first measured target does not pay their cold starts.
            method, path, body, _ = targets["lambda_invoke_direct"]
            run_wrk(port, [(method, path, {}, body)], 3, args.connections, 2)
            for name, (method, path, body, headers) in targets.items():
                results[name][f"wrk_{args.connections}_connections"] = run_wrk(
                    port, [(method, path, headers, body)], args.duration, args.connections, 2)
        print(json.dumps(results, indent=2))
    finally:
        proc.terminate()
        proc.wait()


if __name__ == "__main__":
    main()
