#!/usr/bin/env python3
"""The CDK Fargate app's `cdk deploy` against `cumulo serve`: wall time, and cumulo's part of it.

The app is tests/cdk-serve-app/net.js (test_cdk_network.py's: a VPC with two AZs and one NAT
gateway, an HTTPS ApplicationLoadBalancedFargateService, a private hosted zone with a record, an
ACM certificate validated through a public zone in a stack of its own; 42 + 2 resources), run with
the folder's pinned `cdk` CLI. Each run starts a fresh server (persistent store on), bootstraps
(untimed), then times three phases of the CLI as a whole:

  deploy    `cdk deploy --all` (both stacks created);
  redeploy  `cdk deploy --all -c desired=2 -c rulePath=/ping` (the service and a listener rule);
  destroy   `cdk destroy CdkNet` (the zone stack is left: its validation record outlives the
            certificate, see test_cdk_network.py).

Cumulo's part of a phase is each stack operation's time from its own events, first to last
(the stack's `*_IN_PROGRESS` "User Initiated" event to its terminal event), summed over the
stacks the phase changed; the rest is the CLI's (node start, synthesis, asset publishing, change
set creation and its polling).

Usage: cargo build --bin cumulo && python3 bench/cdk_network.py [--runs 3] [--json out.json]
(CUMULO_BIN=target/release/cumulo for a release build). tests/cdk-serve-app/node_modules must be
installed (test_cdk.py installs it on first run).
"""
import argparse
import json
import pathlib
import statistics
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from cdk_cli import ACCOUNT_ENV, APP, Cdk  # noqa: E402
from cloudformation import BIN, Server  # noqa: E402

STACKS = ("CdkNetZone", "CdkNet")


def operation_seconds(cfn, stack):
    """Seconds between the stack's last operation's first and last events; None if it has none."""
    pages = cfn.get_paginator("describe_stack_events").paginate(StackName=stack)
    events = [e for page in pages for e in page["StackEvents"]]  # newest first, 100 a page
    own = [e for e in events if e["LogicalResourceId"] == e["StackName"]]
    if not own:
        return None
    end = own[0]["Timestamp"]
    start = next(
        (e["Timestamp"] for e in own if e["ResourceStatus"].endswith("_IN_PROGRESS") and e.get("ResourceStatusReason") == "User Initiated"),
        None,
    )
    return (end - start).total_seconds() if start else None


def run_once():
    server = Server("cumulo")
    out = pathlib.Path(tempfile.mkdtemp(prefix="bench-cdknet-"))
    try:
        (APP / "cdk.context.json").unlink(missing_ok=True)
        cdk = Cdk(server, "127.0.0.1", out / "cdk.out", app="node net.js")
        cfn = server.client("cloudformation")
        cdk("bootstrap", ACCOUNT_ENV)
        rows = {}
        phases = [
            ("deploy", ["deploy", "--all", "--require-approval", "never"], STACKS),
            ("redeploy", ["deploy", "--all", "--require-approval", "never", "-c", "desired=2", "-c", "rulePath=/ping"], ("CdkNet",)),
            ("destroy", ["destroy", "CdkNet", "--force"], ("CdkNet",)),
        ]
        ids = {}
        for name, args, changed in phases:
            if name == "destroy":
                ids = {s: cfn.describe_stacks(StackName=s)["Stacks"][0]["StackId"] for s in changed}
            t0 = time.perf_counter()
            cdk(*args)
            wall = time.perf_counter() - t0
            ours = sum(operation_seconds(cfn, ids.get(s, s)) or 0.0 for s in changed)
            rows[name] = {"wall": wall, "cumulo": ours}
        return rows
    finally:
        server.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", help="also write the raw numbers here")
    args = ap.parse_args()
    if not (APP / "node_modules" / "aws-cdk-lib").exists():
        sys.exit(f"{APP}/node_modules is not installed (npm install there, or run test_cdk.py once)")
    print(f"binary: {BIN}")
    runs = []
    for i in range(args.runs):
        rows = run_once()
        runs.append(rows)
        print(f"run {i + 1}: " + ", ".join(f"{k} {v['wall']:.2f} s (cumulo {v['cumulo']:.2f} s)" for k, v in rows.items()), flush=True)
    print("\nphase      cdk wall (median, min)   cumulo's part (median)   share")
    for phase in runs[0]:
        walls = [r[phase]["wall"] for r in runs]
        ours = [r[phase]["cumulo"] for r in runs]
        share = statistics.median(ours) / statistics.median(walls)
        print(f"{phase:9} {statistics.median(walls):8.2f} s ({min(walls):6.2f})      {statistics.median(ours):8.2f} s             {share:5.1%}")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(runs, indent=2))


if __name__ == "__main__":
    main()
