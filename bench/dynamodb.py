#!/usr/bin/env python3
"""DynamoDB request rates: cumulo (persistent store on) vs moto_server, on this machine.

Three workloads, each for --duration seconds over --connections keep-alive connections (wrk when
installed, else Python processes; the loaders and the fixed SigV4-shaped Authorization header are
bench/run.py's):
  * put+get: PutItem then GetItem of ~1 KiB items over 1000 keys (every put is a committed write);
  * query: Query of one partition of 100 items, Limit 25, a filter and a projection;
  * update: UpdateItem `SET n = n + :one` with a condition, on 100 counters.

Usage: python3 bench/dynamodb.py [--duration 10] [--connections 16] [--no-moto] [--json out.json]
Build cumulo first: cargo build --release --bin cumulo
"""
import argparse
import http.client
import json
import pathlib
import shutil
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import run  # noqa: E402  (bench/run.py: servers, loaders, auth header)

TABLE = "bench"
KEYS = 1000


def headers(op):
    return {"X-Amz-Target": f"DynamoDB_20120810.{op}", "Content-Type": "application/x-amz-json-1.0",
            "Authorization": run.auth("dynamodb"), "X-Amz-Date": run.DATE}


def call(port, op, body):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    status, data = run.request_on(conn, "POST", "/", headers(op), json.dumps(body).encode())
    conn.close()
    if status >= 300:
        raise RuntimeError(f"{op}: {status} {data[:200]!r}")
    return json.loads(data or b"{}")


def prepare(port):
    call(port, "CreateTable", {
        "TableName": TABLE, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "sk", "AttributeType": "N"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
    })
    for i in range(100):
        call(port, "PutItem", {"TableName": TABLE, "Item": {
            "pk": {"S": "partition"}, "sk": {"N": str(i)}, "kind": {"S": "even" if i % 2 == 0 else "odd"},
            "body": {"S": "x" * 200}}})
        call(port, "PutItem", {"TableName": TABLE, "Item": {"pk": {"S": f"counter-{i}"}, "sk": {"N": "0"}, "n": {"N": "0"}}})


def requests(kind):
    body = "x" * 1000
    if kind == "put+get":
        out = []
        for k in range(KEYS):
            key = {"pk": {"S": f"key-{k}"}, "sk": {"N": "1"}}
            out.append(("POST", "/", headers("PutItem"),
                        json.dumps({"TableName": TABLE, "Item": {**key, "body": {"S": body}}}).encode()))
            out.append(("POST", "/", headers("GetItem"), json.dumps({"TableName": TABLE, "Key": key}).encode()))
        return out
    if kind == "query":
        return [("POST", "/", headers("Query"), json.dumps({
            "TableName": TABLE, "KeyConditionExpression": "pk = :p AND sk >= :s",
            "FilterExpression": "kind = :k", "ProjectionExpression": "sk, kind", "Limit": 25,
            "ExpressionAttributeValues": {":p": {"S": "partition"}, ":s": {"N": str(s)}, ":k": {"S": "even"}},
        }).encode()) for s in range(0, 75, 5)]
    return [("POST", "/", headers("UpdateItem"), json.dumps({
        "TableName": TABLE, "Key": {"pk": {"S": f"counter-{i}"}, "sk": {"N": "0"}},
        "UpdateExpression": "SET n = n + :one", "ConditionExpression": "attribute_exists(pk)",
        "ExpressionAttributeValues": {":one": {"N": "1"}},
    }).encode()) for i in range(100)]


def measure(server, args):
    server.spawn()
    try:
        prepare(server.port)
        out = {}
        for kind in ("put+get", "query", "update"):
            reqs = requests(kind)
            if shutil.which("wrk") and not args.python_client:
                out[kind] = run.run_wrk(server.port, reqs, args.duration, args.connections, args.threads)
            else:
                out[kind] = run.run_python(server.port, reqs, args.duration, args.connections)
        out["rss_after_load_kib"] = server.rss_kib()
        return out
    finally:
        server.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cumulo", default=str(run.ROOT / "target" / "release" / "cumulo"))
    p.add_argument("--duration", type=int, default=10)
    p.add_argument("--connections", type=int, default=16)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--no-moto", action="store_true")
    p.add_argument("--python-client", action="store_true")
    p.add_argument("--json")
    args = p.parse_args()
    if not pathlib.Path(args.cumulo).exists():
        sys.exit(f"{args.cumulo} not found: cargo build --release --bin cumulo")
    results = {}
    data_dir = tempfile.mkdtemp(prefix="cumulo-ddb-bench-")
    try:
        results["cumulo"] = measure(run.Server(
            "cumulo", lambda port: [args.cumulo, "serve", "--port", str(port), "--data-dir", data_dir],
            "/_cumulo/health"), args)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    moto = shutil.which("moto_server")
    if not args.no_moto and moto:
        results["moto"] = measure(run.Server("moto", lambda port: [moto, "-p", str(port)], "/moto-api/"), args)
    print(f"{'workload':<10} " + " ".join(f"{name:>24}" for name in results))
    for kind in ("put+get", "query", "update"):
        cells = []
        for name in results:
            r = results[name][kind]
            p50 = r.get("p50")
            cells.append(f"{r.get('rps', 0):>8.0f} req/s" + (f" p50 {p50}" if p50 else "")
                         + (f" ({r['errors']} err)" if r.get("errors") else ""))
        print(f"{kind:<10} " + " ".join(f"{c:>24}" for c in cells))
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
