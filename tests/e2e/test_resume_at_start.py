"""Background work held in the store resumes when `cumulo serve` starts, not when its service is
next called: an SQS event source mapping polls and a running Step Functions execution goes on
after a `kill -9`, while the test talks to SQS alone. A fresh server builds neither service."""

import io
import json
import time
import urllib.request
import uuid
import zipfile

ROLE = "arn:aws:iam::000000000000:role/r"


def health(server):
    with urllib.request.urlopen(server.endpoint + "/_cumulo/health") as r:
        return json.load(r)["services"]


def receive_bodies(sqs, url, want, seconds=30):
    seen = []
    deadline = time.time() + seconds
    while len(seen) < want and time.time() < deadline:
        for m in sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1, MaxNumberOfMessages=10).get("Messages", []):
            seen.append(m["Body"])
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return seen


def zipped(name, text):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(name, text)
    return buf.getvalue()


def test_pollers_and_executions_resume_after_kill9_without_a_call(fresh_server):
    server = fresh_server.start()
    assert health(server)["lambda"] == "available" and health(server)["states"] == "available"
    sqs = server.client("sqs")
    tag = uuid.uuid4().hex[:8]
    src = sqs.create_queue(QueueName=f"src-{tag}")["QueueUrl"]
    out = sqs.create_queue(QueueName=f"out-{tag}")["QueueUrl"]
    src_arn = sqs.get_queue_attributes(QueueUrl=src, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]

    lam = server.client("lambda")
    code = (
        "import boto3\n"
        "def handler(event, context):\n"
        "    for r in event['Records']:\n"
        f"        boto3.client('sqs').send_message(QueueUrl='{out}', MessageBody='seen ' + r['body'])\n"
    )
    lam.create_function(FunctionName=f"fwd-{tag}", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                        Code={"ZipFile": zipped("app.py", code)}, Timeout=30)
    lam.get_waiter("function_active_v2").wait(FunctionName=f"fwd-{tag}", WaiterConfig={"Delay": 0.2})
    lam.create_event_source_mapping(EventSourceArn=src_arn, FunctionName=f"fwd-{tag}", BatchSize=1)

    sfn = server.client("stepfunctions")
    definition = {
        "StartAt": "Nap",
        "States": {
            "Nap": {"Type": "Wait", "Seconds": 3, "Next": "Tell"},
            "Tell": {
                "Type": "Task",
                "Resource": "arn:aws:states:::sqs:sendMessage",
                "Parameters": {"QueueUrl": out, "MessageBody": "execution finished"},
                "End": True,
            },
        },
    }
    machine = sfn.create_state_machine(name=f"nap-{tag}", definition=json.dumps(definition),
                                       roleArn=ROLE)["stateMachineArn"]
    execution = sfn.start_execution(stateMachineArn=machine)["executionArn"]
    assert sfn.describe_execution(executionArn=execution)["status"] == "RUNNING"

    # Killed mid-wait, restarted, and from now on only SQS is called.
    server.kill9()
    server.start()
    sqs = server.client("sqs")
    sqs.send_message(QueueUrl=src, MessageBody="after restart")
    seen = receive_bodies(sqs, out, 2)
    assert sorted(seen) == ["execution finished", "seen after restart"]
    services = health(server)
    assert services["lambda"] == "running" and services["states"] == "running"

    # The finished execution stays finished: another restart starts no Step Functions.
    server.kill9()
    server.start()
    time.sleep(1)
    assert health(server)["states"] == "available"
    assert health(server)["lambda"] == "running"
