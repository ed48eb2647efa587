#!/usr/bin/env python3
"""A 1,000-state Step Functions execution through `cumulo serve`, against moto with its interpreter
switched on. moto executes nothing by default; its `execute_state_machine` setting enables the ASL
interpreter it took from LocalStack. moto 5.2.1's interpreter deep-copies the state machine at
StartExecution and fails (a 500 from moto_server) once its backend holds any other execution, so
moto runs in-process under `mock_aws(config=...)` with a fresh backend per run: no HTTP, no
server, the most favourable setting for it. Every run (cumulo's too) gets a new state machine.

Two STANDARD state machines, each run `--runs` times, median and min wall time from StartExecution
to DescribeExecution first reporting SUCCEEDED (polled every 2 ms), and the length of the history:
- chain: 1,000 Pass states in a row, each adding to the input with Parameters and ResultPath;
- map:   one Map state over 1,000 items, each iteration a Pass (MaxConcurrency 0 = unbounded).

Usage: python3 bench/stepfunctions.py [--runs 5] [--bin target/release/cumulo] [--no-moto]
"""
import argparse
import json
import pathlib
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parents[1]
ROLE = "arn:aws:iam::000000000000:role/bench"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def chain(n):
    states = {}
    for i in range(n):
        state = {"Type": "Pass", "Parameters": {"i": i, "prev.$": "$.last.i"}, "ResultPath": "$.last"}
        if i + 1 < n:
            state["Next"] = f"S{i + 1}"
        else:
            state["End"] = True
        states[f"S{i}"] = state
    return {"StartAt": "S0", "States": states}, {"last": {"i": -1}}


def fan(n):
    definition = {
        "StartAt": "Each",
        "States": {
            "Each": {
                "Type": "Map",
                "ItemsPath": "$.items",
                "MaxConcurrency": 0,
                "ItemProcessor": {
                    "ProcessorConfig": {"Mode": "INLINE"},
                    "StartAt": "One",
                    "States": {"One": {"Type": "Pass", "Parameters": {"item.$": "$"}, "End": True}},
                },
                "End": True,
            }
        },
    }
    return definition, {"items": list(range(n))}


def wait_healthy(url):
    for _ in range(1000):
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"{url} did not answer")


def client(endpoint=None):
    import boto3

    return boto3.client("stepfunctions", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="test", aws_secret_access_key="test")


def run_once(sfn, name, definition, payload, run):
    """One execution on a new state machine: wall ms from StartExecution to SUCCEEDED, status,
    history length."""
    arn = sfn.create_state_machine(name=f"bench-{name}-{run}", definition=json.dumps(definition), roleArn=ROLE)[
        "stateMachineArn"]
    t = time.perf_counter()
    execution = sfn.start_execution(stateMachineArn=arn, name=f"run-{run}", input=json.dumps(payload))["executionArn"]
    while True:
        status = sfn.describe_execution(executionArn=execution)["status"]
        if status != "RUNNING":
            break
        time.sleep(0.002)
    elapsed = (time.perf_counter() - t) * 1000
    pages = sfn.get_paginator("get_execution_history").paginate(executionArn=execution)
    return elapsed, status, sum(len(p["events"]) for p in pages)


def measure(run_in, runs, states):
    """`run_in(fn)` calls fn with a client of the server measured."""
    results = {}
    for name, build in (("chain", chain), ("map", fan)):
        definition, payload = build(states)
        got = [run_in(lambda sfn, r=run: run_once(sfn, name, definition, payload, r)) for run in range(runs)]
        times = [g[0] for g in got]
        results[name] = {"status": got[-1][1], "median_ms": round(statistics.median(times), 1),
                         "min_ms": round(min(times), 1), "history_events": got[-1][2]}
    return results


def in_fresh_moto(fn):
    """moto's interpreter cannot start an execution while another one exists in its backend (it
    deep-copies the state machine, which reaches the first execution's lock): a fresh backend each
    run."""
    from moto import mock_aws

    with mock_aws(config={"stepfunctions": {"execute_state_machine": True}}):
        return fn(client())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--states", type=int, default=1000)
    ap.add_argument("--bin", default=str(ROOT / "target" / "release" / "cumulo"))
    ap.add_argument("--no-moto", action="store_true")
    args = ap.parse_args()
    out = {}

    port, data = free_port(), tempfile.mkdtemp()
    proc = subprocess.Popen([args.bin, "serve", "--port", str(port), "--data-dir", data],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_healthy(f"http://127.0.0.1:{port}/_cumulo/health")
        sfn = client(f"http://127.0.0.1:{port}")
        out["cumulo"] = measure(lambda fn: fn(sfn), args.runs, args.states)
        print("cumulo", json.dumps(out["cumulo"]), flush=True)
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(data, ignore_errors=True)

    if not args.no_moto:
        out["moto_in_process"] = measure(in_fresh_moto, args.runs, args.states)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
