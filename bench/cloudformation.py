#!/usr/bin/env python3
"""CloudFormation benchmark: cumulo (persistent store on) side by side with moto_server.

Phases, per N in --sizes: create, update and delete of one stack with N independent resources
(AWS::SQS::Queue, AWS::SNS::Topic, AWS::SSM::Parameter, AWS::S3::Bucket round robin). After
each phase every resource is checked through its own service's API, so a phase that reports
success without doing the work is reported as such ("applied" column) rather than timed as if
it had. Then, for cumulo (and moto with --moto-concurrent): 10 stacks of --concurrent-size
resources deployed at once; and a GetAtt chain of depth 100 written dependents-first.

Usage: cargo build --bin cumulo && python3 bench/cloudformation.py [--sizes 10,100,500]
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid

import boto3
import botocore.config

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(os.environ.get("CUMULO_BIN", ROOT / "target" / "debug" / "cumulo"))
TYPES = ["queue", "topic", "param", "bucket"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url, proc, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{url}: server exited")
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{url}: not healthy")


class Server:
    def __init__(self, kind, in_memory=False):
        self.kind = kind
        self.port = free_port()
        self.dir = tempfile.mkdtemp(prefix=f"bench-{kind}-")
        if kind == "cumulo":
            args = [str(BIN), "serve", "--port", str(self.port)]
            args += ["--in-memory"] if in_memory else ["--data-dir", self.dir]
            health = "/_cumulo/health"
        else:
            args = ["moto_server", "-p", str(self.port)]
            health = "/moto-api/"
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_healthy(f"http://127.0.0.1:{self.port}{health}", self.proc)
        self.clients = {}

    def client(self, service):
        """One boto3 client per service, made before any phase is timed: making one loads its
        service model (~0.1 s for S3), client work that neither server does."""
        if service not in self.clients:
            self.clients[service] = self._new_client(service)
        return self.clients[service]

    def _new_client(self, service):
        return boto3.client(
            service,
            endpoint_url=f"http://127.0.0.1:{self.port}",
            region_name="us-east-1",
            aws_access_key_id="test",
            aws_secret_access_key="test",
            config=botocore.config.Config(retries={"max_attempts": 2}, max_pool_connections=50),
        )

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        shutil.rmtree(self.dir, ignore_errors=True)


def names(prefix, i):
    kind = TYPES[i % 4]
    return kind, {
        "queue": f"{prefix}-q{i}",
        "topic": f"{prefix}-t{i}",
        "param": f"/{prefix}/p{i}",
        "bucket": f"{prefix}-b{i}",
    }[kind]


def template(prefix, n, version):
    """N independent resources; `version` 1 or 2 changes one mutable property of each."""
    res = {}
    for i in range(n):
        kind, name = names(prefix, i)
        if kind == "queue":
            res[f"Q{i}"] = {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": name, "VisibilityTimeout": 30 * version}}
        elif kind == "topic":
            res[f"T{i}"] = {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": name, "DisplayName": f"v{version}"}}
        elif kind == "param":
            res[f"P{i}"] = {"Type": "AWS::SSM::Parameter", "Properties": {"Name": name, "Type": "String", "Value": f"v{version}"}}
        else:
            res[f"B{i}"] = {
                "Type": "AWS::S3::Bucket",
                "Properties": {"BucketName": name, "Tags": [{"Key": "v", "Value": f"v{version}"}]},
            }
    return json.dumps({"Resources": res})


# Both servers are timed the same way: from the API call until DescribeStacks shows a terminal
# status, polled every POLL seconds. moto applies a stack inside the API call; cumulo's
# Create/Update/DeleteStack wait up to --cfn-sync-wait-ms (1 s) for the terminal status. Either
# way the first poll usually sees it, and when not, 5 ms polling keeps the error to ~5 ms plus
# one DescribeStacks round trip: small enough to compare phases of tens of milliseconds.
POLL = 0.005


def wait_terminal(cfn, stack_id, timeout=900):
    deadline = time.time() + timeout
    while time.time() < deadline:
        s = cfn.describe_stacks(StackName=stack_id)["Stacks"][0]
        if not s["StackStatus"].endswith("_IN_PROGRESS"):
            return s["StackStatus"]
        time.sleep(POLL)
    return "TIMEOUT"


def upload(server, prefix, body):
    """Templates over 51,200 bytes go through S3, as `aws cloudformation deploy` does."""
    if len(body) <= 51200:
        return {"TemplateBody": body}
    s3 = server.client("s3")
    bucket = f"{prefix}-tpl"
    try:
        s3.create_bucket(Bucket=bucket)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass
    key = f"t-{uuid.uuid4().hex}.json"
    s3.put_object(Bucket=bucket, Key=key, Body=body.encode())
    # The virtual-hosted AWS form: the one both emulators map to their own S3.
    return {"TemplateURL": f"https://{bucket}.s3.amazonaws.com/{key}"}


def check(server, prefix, n, version, present=True):
    """How many of the N resources are in the state the phase should have left them in."""
    sqs, sns, ssm, s3 = (server.client(s) for s in ("sqs", "sns", "ssm", "s3"))

    def one(i):
        kind, name = names(prefix, i)
        try:
            if kind == "queue":
                url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
                v = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]["VisibilityTimeout"]
                ok = v == str(30 * version)
            elif kind == "topic":
                arn = f"arn:aws:sns:us-east-1:{ACCOUNT[server.kind]}:{name}"
                ok = sns.get_topic_attributes(TopicArn=arn)["Attributes"].get("DisplayName") == f"v{version}"
            elif kind == "param":
                ok = ssm.get_parameter(Name=name)["Parameter"]["Value"] == f"v{version}"
            else:
                tags = s3.get_bucket_tagging(Bucket=name)["TagSet"]
                ok = {"Key": "v", "Value": f"v{version}"} in tags
            return ok if present else False
        except Exception:  # noqa: BLE001 - absent is the expected answer after delete
            return not present

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        return sum(pool.map(one, range(n)))


ACCOUNT = {"cumulo": "000000000000", "moto": "123456789012"}


def guarded(fn):
    """A phase's status, or the error a server answered with instead (moto fails some)."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - reported, not hidden
        return f"error: {str(e).splitlines()[0][:60]}"


def phase(server, cfn, prefix, n, name, fn, version, present):
    t0 = time.perf_counter()
    status = guarded(fn)
    elapsed = time.perf_counter() - t0
    applied = check(server, prefix, n, version, present)
    return {"phase": name, "seconds": elapsed, "status": status, "applied": f"{applied}/{n}"}


def run_size(server, n):
    cfn = server.client("cloudformation")
    prefix = f"b{uuid.uuid4().hex[:6]}"
    stack = f"{prefix}-stack"
    rows = []

    def create():
        sid = cfn.create_stack(StackName=stack, **upload(server, prefix, template(prefix, n, 1)))["StackId"]
        return wait_terminal(cfn, sid)

    def update():
        cfn.update_stack(StackName=stack, **upload(server, prefix, template(prefix, n, 2)))
        return wait_terminal(cfn, stack)

    def delete():
        sid = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
        cfn.delete_stack(StackName=stack)
        return wait_terminal(cfn, sid)

    rows.append(phase(server, cfn, prefix, n, "create", create, 1, True))
    rows.append(phase(server, cfn, prefix, n, "update", update, 2, True))
    rows.append(phase(server, cfn, prefix, n, "delete", delete, 2, False))
    return rows


def run_concurrent(server, stacks, n):
    cfn = server.client("cloudformation")
    prefixes = [f"c{uuid.uuid4().hex[:6]}" for _ in range(stacks)]

    def deploy(prefix):
        sid = cfn.create_stack(StackName=f"{prefix}-stack", **upload(server, prefix, template(prefix, n, 1)))["StackId"]
        return wait_terminal(cfn, sid)

    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(stacks) as pool:
        statuses = list(pool.map(lambda p: guarded(lambda: deploy(p)), prefixes))
    elapsed = time.perf_counter() - t0
    applied = sum(check(server, p, n, 1) for p in prefixes)
    return {"phase": f"{stacks} stacks x {n} concurrently", "seconds": elapsed,
            "status": ",".join(sorted(set(statuses))), "applied": f"{applied}/{stacks * n}"}


def run_chain(server, depth=100):
    """Parameters P0..P{depth-1}, each P{i} taking P{i-1}'s value through GetAtt, written
    dependents-first so the engine must order them itself."""
    cfn = server.client("cloudformation")
    prefix = f"g{uuid.uuid4().hex[:6]}"
    res = {}
    for i in reversed(range(depth)):
        value = "root" if i == 0 else {"Fn::GetAtt": [f"P{i - 1}", "Value"]}
        res[f"P{i}"] = {"Type": "AWS::SSM::Parameter", "Properties": {"Name": f"/{prefix}/p{i}", "Type": "String", "Value": value}}
    t0 = time.perf_counter()
    body = json.dumps({"Resources": res})
    status = guarded(lambda: wait_terminal(cfn, cfn.create_stack(StackName=f"{prefix}-chain", TemplateBody=body)["StackId"]))
    elapsed = time.perf_counter() - t0
    ssm = server.client("ssm")
    try:
        last = ssm.get_parameter(Name=f"/{prefix}/p{depth - 1}")["Parameter"]["Value"]
    except Exception:  # noqa: BLE001
        last = None
    return {"phase": f"GetAtt chain depth {depth}", "seconds": elapsed, "status": status,
            "applied": "yes" if last == "root" else f"no (last value {last!r})"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10,100,500")
    ap.add_argument("--concurrent-stacks", type=int, default=10)
    ap.add_argument("--concurrent-size", type=int, default=500)
    ap.add_argument("--moto-concurrent", action="store_true", help="also run the concurrent phase on moto")
    ap.add_argument("--skip-moto", action="store_true")
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--cumulo-in-memory", action="store_true", help="run cumulo without its persistent store, to see what durability costs")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    results = {}
    for kind in ["cumulo"] + ([] if args.skip_moto else ["moto"]):
        server = Server(kind, in_memory=args.cumulo_in_memory)
        try:
            # Untimed warm-up: the clients, and moto imports each service's backend on first use.
            for service in ("cloudformation", "s3", "sqs", "sns", "ssm"):
                server.client(service)
            run_size(server, 4)
            rows = []
            for n in sizes:
                for r in run_size(server, n):
                    r["n"] = n
                    rows.append(r)
                    print(f"{kind:6} N={n:<4} {r['phase']:7} {r['seconds']:8.3f}s  {r['status']:28} applied {r['applied']}", flush=True)
            if kind == "cumulo" or args.moto_concurrent:
                r = run_concurrent(server, args.concurrent_stacks, args.concurrent_size)
                rows.append(r)
                print(f"{kind:6} {r['phase']}: {r['seconds']:.2f}s {r['status']} applied {r['applied']}", flush=True)
            r = run_chain(server)
            rows.append(r)
            print(f"{kind:6} {r['phase']}: {r['seconds']:.2f}s {r['status']} applied {r['applied']}", flush=True)
            results[kind] = rows
        finally:
            server.stop()
    if "moto" in results:
        print("\nspeed-up (moto seconds / cumulo seconds), same phase:")
        for c, m in zip(results["cumulo"], results["moto"]):
            if c["phase"] == m["phase"] and c.get("n") == m.get("n"):
                print(f"  N={c.get('n', '-')!s:<4} {c['phase']:28} {m['seconds'] / max(c['seconds'], 1e-9):7.1f}x  (moto applied {m['applied']})")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
