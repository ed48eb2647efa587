#!/usr/bin/env python3
"""cumulo vs moto_server, side by side, on this machine, in one run.

Measures, for each server:
  * spawn-to-first-answer: from just before the process is spawned until its health endpoint
    (`/_cumulo/health`, moto's `/moto-api/`) first answers 200; median of several spawns;
  * idle RSS (VmRSS from /proc) once it answers and has been idle a moment;
  * requests per second for SQS SendMessage+ReceiveMessage (JSON protocol) and S3 PutObject+GetObject
    of 1 KiB objects, with cumulo's persistent store on (a fresh data dir, default durability).

Both servers get the same load from the same client: `wrk` with a Lua script when it is installed
(`apt-get install wrk`), else a pool of Python processes with keep-alive `http.client`
connections. Requests carry a fixed SigV4-shaped Authorization header (neither server verifies
signatures by default), so the client spends nothing on signing.

Usage: python3 bench/run.py [--duration 10] [--connections 16] [--json results.json] [--no-moto]
Build cumulo first: cargo build --release --bin cumulo
"""
import argparse
import http.client
import json
import multiprocessing
import os
import pathlib
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAYLOAD = b"x" * 1024
DATE = "20240101T000000Z"


def auth(service):
    return (f"AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/{service}/aws4_request, "
            "SignedHeaders=host;x-amz-date, Signature=" + "0" * 64)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get_status(port, path, timeout=1.0):
    """One GET on a fresh connection; the status, or None if nothing answered."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request("GET", path)
        status = conn.getresponse().status
        conn.close()
        return status
    except OSError:
        return None


class Server:
    """A server under test: how to spawn it and where its health answer is."""

    def __init__(self, name, argv_for_port, health_path, env=None):
        self.name = name
        self.argv_for_port = argv_for_port
        self.health_path = health_path
        self.env = env
        self.proc = None
        self.port = None

    def spawn(self, timeout=60):
        """Starts it; returns seconds from spawn to the first 200 from the health endpoint."""
        self.port = free_port()
        argv = self.argv_for_port(self.port)
        start = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     env=self.env)
        deadline = start + timeout
        while time.perf_counter() < deadline:
            if http_get_status(self.port, self.health_path) == 200:
                return time.perf_counter() - start
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited with {self.proc.returncode}")
            time.sleep(0.0002)
        raise RuntimeError(f"{self.name} did not answer within {timeout}s")

    def rss_kib(self):
        """Resident set of the server and its children (moto_server may fork a reloader)."""
        total = 0
        for pid in [self.proc.pid] + children(self.proc.pid):
            try:
                status = pathlib.Path(f"/proc/{pid}/status").read_text()
            except OSError:
                continue
            m = re.search(r"VmRSS:\s+(\d+) kB", status)
            total += int(m.group(1)) if m else 0
        return total

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def children(pid):
    try:
        out = pathlib.Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    kids = [int(p) for p in out]
    return kids + [g for k in kids for g in children(k)]


# ---------------------------------------------------------------- the workloads

def request_on(conn, method, path, headers, body=b""):
    conn.request(method, path, body=body, headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    return resp.status, data


def sqs_headers(op):
    return {"X-Amz-Target": f"AmazonSQS.{op}", "Content-Type": "application/x-amz-json-1.0",
            "Authorization": auth("sqs"), "X-Amz-Date": DATE}


def s3_headers():
    return {"Authorization": auth("s3"), "X-Amz-Date": DATE,
            "X-Amz-Content-SHA256": "UNSIGNED-PAYLOAD"}


def prepare_sqs(port):
    """Creates the queue; returns its URL (as the server spells it)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    status, data = request_on(conn, "POST", "/", sqs_headers("CreateQueue"),
                              json.dumps({"QueueName": "bench"}).encode())
    if status != 200:
        raise RuntimeError(f"CreateQueue: {status} {data[:200]!r}")
    return json.loads(data)["QueueUrl"]


def prepare_s3(port, keys):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    status, data = request_on(conn, "PUT", "/bench-bucket", s3_headers())
    if status != 200:
        raise RuntimeError(f"CreateBucket: {status} {data[:200]!r}")
    for k in range(keys):
        status, data = request_on(conn, "PUT", f"/bench-bucket/key-{k}", s3_headers(), PAYLOAD)
        if status != 200:
            raise RuntimeError(f"PutObject: {status} {data[:200]!r}")


def workload_requests(kind, queue_url, keys):
    """The alternating pair of requests one connection sends: [(method, path, headers, body)]."""
    if kind == "sqs":
        send = json.dumps({"QueueUrl": queue_url, "MessageBody": PAYLOAD.decode()}).encode()
        recv = json.dumps({"QueueUrl": queue_url, "MaxNumberOfMessages": 1}).encode()
        return [("POST", "/", sqs_headers("SendMessage"), send),
                ("POST", "/", sqs_headers("ReceiveMessage"), recv)]
    pairs = []
    for k in range(keys):
        pairs.append(("PUT", f"/bench-bucket/key-{k}", s3_headers(), PAYLOAD))
        pairs.append(("GET", f"/bench-bucket/key-{k}", s3_headers(), b""))
    return pairs


WRK_SCRIPT = """
local reqs = {}
local n = 0
local errors = 0
init = function(args)
%(build)s
end
request = function()
  n = n + 1
  return reqs[(n - 1) %% #reqs + 1]
end
response = function(status, headers, body)
  if status >= 300 then errors = errors + 1 end
end
"""


def lua_string(b):
    if isinstance(b, bytes):
        b = b.decode()
    return '"' + b.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def run_wrk(port, reqs, duration, connections, threads):
    lines = []
    for method, path, headers, body in reqs:
        hdrs = ", ".join(f"[{lua_string(k)}] = {lua_string(v)}" for k, v in headers.items())
        lines.append(f"  table.insert(reqs, wrk.format({lua_string(method)}, {lua_string(path)}, "
                     f"{{{hdrs}}}, {lua_string(body) if body else 'nil'}))")
    script = WRK_SCRIPT % {"build": "\n".join(lines)}
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
        path = f.name
    try:
        out = subprocess.run(
            ["wrk", "-t", str(threads), "-c", str(connections), "-d", f"{duration}s", "--latency",
             "-s", path, f"http://127.0.0.1:{port}"],
            capture_output=True, text=True, timeout=duration + 60,
        ).stdout
    finally:
        os.unlink(path)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    total = int(re.search(r"(\d+) requests in", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = int(bad.group(1)) if bad else 0
    socket_errors = re.search(r"Socket errors: (.*)", out)
    p50 = re.search(r"50%\s+([\d.]+\w+)", out)
    p99 = re.search(r"99%\s+([\d.]+\w+)", out)
    return {"rps": rps, "requests": total, "errors": errors,
            "socket_errors": socket_errors.group(1) if socket_errors else None,
            "p50": p50.group(1) if p50 else None, "p99": p99.group(1) if p99 else None,
            "client": "wrk"}


def _python_worker(args):
    port, reqs, deadline = args
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    done = errors = 0
    i = 0
    while time.time() < deadline:
        method, path, headers, body = reqs[i % len(reqs)]
        i += 1
        status, _ = request_on(conn, method, path, headers, body)
        done += 1
        errors += status >= 300
    return done, errors


def run_python(port, reqs, duration, connections):
    deadline = time.time() + duration
    with multiprocessing.Pool(connections) as pool:
        start = time.time()
        results = pool.map(_python_worker, [(port, reqs, deadline)] * connections)
        elapsed = time.time() - start
    total = sum(r[0] for r in results)
    return {"rps": total / elapsed, "requests": total, "errors": sum(r[1] for r in results),
            "client": f"python x{connections}"}


def load(server, kind, args):
    keys = 100
    try:
        queue_url = prepare_sqs(server.port) if kind == "sqs" else None
        if kind == "s3":
            prepare_s3(server.port, keys)
    except (RuntimeError, OSError, ValueError, KeyError) as e:
        return {"error": f"setup failed: {e}"}
    reqs = workload_requests(kind, queue_url, keys)
    if shutil.which("wrk") and not args.python_client:
        return run_wrk(server.port, reqs, args.duration, args.connections, args.threads)
    return run_python(server.port, reqs, args.duration, args.connections)


# ---------------------------------------------------------------- the run

def measure(make_server, args, spawns):
    times = []
    for _ in range(spawns):
        server = make_server()
        try:
            times.append(server.spawn())
        finally:
            server.stop()
    server = make_server()
    result = {"startup_ms": {"median": statistics.median(times) * 1000, "min": min(times) * 1000,
                             "max": max(times) * 1000, "spawns": spawns}}
    try:
        server.spawn()
        time.sleep(args.idle)
        result["idle_rss_kib"] = server.rss_kib()
        for kind in ("sqs", "s3"):
            result[kind] = load(server, kind, args)
        result["rss_after_load_kib"] = server.rss_kib()
    finally:
        server.stop()
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cumulo", default=str(ROOT / "target" / "release" / "cumulo"))
    p.add_argument("--duration", type=int, default=10, help="seconds per load run")
    p.add_argument("--connections", type=int, default=16)
    p.add_argument("--threads", type=int, default=2, help="wrk threads")
    p.add_argument("--spawns", type=int, default=20, help="cumulo spawns for the startup median")
    p.add_argument("--idle", type=float, default=1.0, help="seconds idle before reading RSS")
    p.add_argument("--no-moto", action="store_true")
    p.add_argument("--python-client", action="store_true", help="use the Python client even if wrk exists")
    p.add_argument("--json", help="also write the results here")
    args = p.parse_args()

    if not pathlib.Path(args.cumulo).exists():
        sys.exit(f"{args.cumulo} not found: cargo build --release --bin cumulo")
    results = {"machine": {"cpus": os.cpu_count(), "client": "wrk" if shutil.which("wrk") and not args.python_client else "python"}}
    data_dirs = []

    def make_cumulo():
        d = tempfile.mkdtemp(prefix="cumulo-bench-")
        data_dirs.append(d)
        return Server("cumulo", lambda port: [args.cumulo, "serve", "--port", str(port), "--data-dir", d],
                      "/_cumulo/health")

    try:
        results["cumulo"] = measure(make_cumulo, args, args.spawns)
        if not args.no_moto:
            moto = shutil.which("moto_server")
            if moto is None:
                results["moto"] = {"error": "moto_server not installed (pip install 'moto[server]')"}
            else:
                results["moto"] = measure(
                    lambda: Server("moto", lambda port: [moto, "-p", str(port)], "/moto-api/"),
                    args, max(3, args.spawns // 5))
    finally:
        for d in data_dirs:
            shutil.rmtree(d, ignore_errors=True)

    report(results)
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


def report(results):
    names = [n for n in ("cumulo", "moto") if n in results]
    rows = [("spawn to first answer (median ms)", lambda r: f"{r['startup_ms']['median']:.1f}"),
            ("idle RSS (MiB)", lambda r: f"{r['idle_rss_kib'] / 1024:.1f}"),
            ("SQS send+receive (req/s)", lambda r: rate(r["sqs"])),
            ("S3 put+get 1 KiB (req/s)", lambda r: rate(r["s3"])),
            ("RSS after load (MiB)", lambda r: f"{r['rss_after_load_kib'] / 1024:.1f}")]
    print(f"{'':36}" + "".join(f"{n:>16}" for n in names) + ("           ratio" if len(names) == 2 else ""))
    for label, fmt in rows:
        cells = []
        for n in names:
            try:
                cells.append(fmt(results[n]))
            except (KeyError, TypeError):
                cells.append(results[n].get("error", "n/a") if isinstance(results[n], dict) else "n/a")
        line = f"{label:36}" + "".join(f"{c:>16}" for c in cells)
        if len(names) == 2:
            line += f"{ratio(label, results):>16}"
        print(line)
    for n in names:
        for kind in ("sqs", "s3"):
            r = results[n].get(kind, {})
            if r.get("error") or r.get("errors"):
                print(f"note: {n} {kind}: {r.get('error') or str(r['errors']) + ' non-2xx responses'}")


def rate(r):
    if "error" in r:
        return "failed"
    return f"{r['rps']:.0f}"


def ratio(label, results):
    key = {"SQS send+receive (req/s)": "sqs", "S3 put+get 1 KiB (req/s)": "s3"}.get(label)
    try:
        if key:
            return f"{results['cumulo'][key]['rps'] / results['moto'][key]['rps']:.1f}x"
        if label.startswith("spawn"):
            return f"{results['moto']['startup_ms']['median'] / results['cumulo']['startup_ms']['median']:.0f}x faster"
        if label.startswith("idle"):
            return f"{results['moto']['idle_rss_kib'] / results['cumulo']['idle_rss_kib']:.0f}x smaller"
    except (KeyError, TypeError, ZeroDivisionError):
        pass
    return ""


if __name__ == "__main__":
    main()
