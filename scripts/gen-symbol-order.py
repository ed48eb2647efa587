#!/usr/bin/env python3
"""Regenerates crates/cli/symbol-order.txt, the order release builds lay the binary's code out in
(crates/cli/build.rs says why).

Runs the release binary's `cumulo serve` under valgrind's callgrind and records which of the
binary's functions run in each phase, in this order: start-up, the first health answer, then
common requests (SQS, S3, SSM, SNS, DynamoDB and a CloudFormation stack created and deleted).
The file lists each function once, by its symbol name, in the phase it first ran in. Needs
valgrind (Debian's `valgrind`) and boto3; takes about a minute.

    cargo build --release --bin cumulo && python3 scripts/gen-symbol-order.py
"""
import json
import pathlib
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import boto3

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target" / "release" / "cumulo"
OUT = ROOT / "crates" / "cli" / "symbol-order.txt"
PORT = 4597


def wait_listening(port, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    sys.exit(f"nothing listened on {port}")


def dump(pid):
    """Ends the current phase: callgrind writes its counts so far and starts the next at zero."""
    subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True)


def requests():
    kw = dict(endpoint_url=f"http://localhost:{PORT}", region_name="us-east-1",
              aws_access_key_id="test", aws_secret_access_key="test")
    sqs, s3, ssm = boto3.client("sqs", **kw), boto3.client("s3", **kw), boto3.client("ssm", **kw)
    sns, ddb, cfn = boto3.client("sns", **kw), boto3.client("dynamodb", **kw), boto3.client("cloudformation", **kw)
    for i in range(2):
        q = sqs.create_queue(QueueName=f"queue{i}")["QueueUrl"]
        sqs.send_message(QueueUrl=q, MessageBody="hi")
        sqs.receive_message(QueueUrl=q)
        s3.create_bucket(Bucket=f"bucket{i}")
        s3.put_object(Bucket=f"bucket{i}", Key="k", Body=b"x" * 100)
        s3.get_object(Bucket=f"bucket{i}", Key="k")["Body"].read()
        s3.list_objects_v2(Bucket=f"bucket{i}")
        ssm.put_parameter(Name=f"/param{i}", Value="v", Type="String")
        ssm.get_parameter(Name=f"/param{i}")
        sns.publish(TopicArn=sns.create_topic(Name=f"topic{i}")["TopicArn"], Message="m")
    ddb.create_table(TableName="table1", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                     BillingMode="PAY_PER_REQUEST")
    ddb.put_item(TableName="table1", Item={"k": {"S": "a"}})
    ddb.get_item(TableName="table1", Key={"k": {"S": "a"}})
    template = {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}, "P": {"Type": "AWS::SSM::Parameter", "Properties": {
        "Type": "String", "Value": {"Fn::GetAtt": ["Q", "Arn"]}}}}}
    cfn.create_stack(StackName="stack", TemplateBody=json.dumps(template))
    cfn.get_waiter("stack_create_complete").wait(StackName="stack", WaiterConfig={"Delay": 1})
    cfn.delete_stack(StackName="stack")
    cfn.get_waiter("stack_delete_complete").wait(StackName="stack", WaiterConfig={"Delay": 1})


def functions_in_order(files, binary):
    """The binary's functions with a cost in each dump, phase by phase, each once. Callgrind
    compresses names: an id's name is given once, in whichever dump first needed it."""
    fn_names, ob_names, seen, order = {}, {}, set(), []
    for f in files:
        current = None
        for line in f.read_text(errors="replace").splitlines():
            m = re.match(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?$", line)
            if not m:
                continue
            call, kind, ident, name = m.groups()
            names = ob_names if kind == "ob" else fn_names
            if name:
                names[ident] = name
            if call:
                continue
            if kind == "ob":
                current = ob_names.get(ident)
            elif current == binary and (n := fn_names.get(ident)) and n not in seen:
                seen.add(n)
                order.append(n)
    return order


def main():
    if not shutil.which("valgrind"):
        sys.exit("needs valgrind (apt-get install valgrind)")
    binary = str(BIN.resolve())
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        proc = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={tmp}/out.%p",
             binary, "serve", "--port", str(PORT), "--data-dir", str(tmp / "data")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_listening(PORT)
            time.sleep(1)
            dump(proc.pid)
            subprocess.run(["curl", "-s", "-o", "/dev/null", f"http://localhost:{PORT}/_cumulo/health"], check=True)
            time.sleep(1)
            dump(proc.pid)
            requests()
            dump(proc.pid)
        finally:
            proc.terminate()
            proc.wait()
        dumps = sorted(tmp.glob(f"out.{proc.pid}.*"), key=lambda p: int(p.suffix[1:]))
        order = functions_in_order(dumps, binary)
    OUT.write_text("".join(n + "\n" for n in order))
    print(f"{OUT.relative_to(ROOT)}: {len(order)} functions from {len(dumps)} phases")


if __name__ == "__main__":
    main()
