"""Step Functions end to end: state machines, versions, aliases, activities and tags through boto3
and the AWS CLI, and executions that really run on the server: a workflow invoking a real cumulo
Lambda function, sending to SQS and writing DynamoDB through Parallel, Map, Retry and Catch, with
the history AWS gives; task tokens; StartSyncExecution through the `sync-` host; an execution
resumed after a restart; and a CloudFormation stack deployed with `aws cloudformation deploy`.

botocore has no Step Functions waiters, so executions are polled (`wait_done`)."""
import io
import json
import os
import subprocess
import time
import urllib.error
import urllib.request
import uuid
import zipfile

import botocore.awsrequest
import botocore.exceptions
import pytest
from conftest import CREDS

ROLE = "arn:aws:iam::000000000000:role/sfn-role"
LAMBDA_ROLE = "arn:aws:iam::000000000000:role/lambda-role"
PASS = {"Comment": "BASE_PASS_RESULT", "StartAt": "State_1",
        "States": {"State_1": {"Type": "Pass", "Result": {"Arg1": "argument1"}, "End": True}}}

FN = """
import json
def handler(event, context):
    if event.get("fail"):
        raise ValueError("asked to fail: %s" % event["fail"])
    return {"doubled": [x * 2 for x in event.get("items", [])], "seen": event}
"""


def uid():
    return uuid.uuid4().hex[:8]


def zip_of(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return buf.getvalue()


@pytest.fixture(scope="module")
def sfn(cumulo):
    return cumulo.client("stepfunctions")


def code(e):
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


def wait_done(sfn, arn, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        d = sfn.describe_execution(executionArn=arn)
        if d["status"] != "RUNNING":
            return d
        time.sleep(0.05)
    raise AssertionError(f"{arn} still running")


def history(sfn, arn):
    return sfn.get_execution_history(executionArn=arn)["events"]


def machine(sfn, definition, name=None, **kw):
    name = name or f"sm-{uid()}"
    return sfn.create_state_machine(name=name, definition=json.dumps(definition), roleArn=ROLE,
                                    **kw)["stateMachineArn"]


def test_state_machine_lifecycle_and_errors(sfn):
    name = f"sm-{uid()}"
    arn = machine(sfn, PASS, name=name)
    assert arn == f"arn:aws:states:us-east-1:000000000000:stateMachine:{name}"
    d = sfn.describe_state_machine(stateMachineArn=arn)
    assert json.loads(d["definition"]) == PASS
    assert (d["name"], d["roleArn"], d["status"], d["type"]) == (name, ROLE, "ACTIVE", "STANDARD")
    assert d["loggingConfiguration"] == {"level": "OFF", "includeExecutionData": False}
    assert d["tracingConfiguration"] == {"enabled": False}
    assert "revisionId" not in d
    # An exact repeat is idempotent; another definition under the name is a conflict.
    assert machine(sfn, PASS, name=name) == arn
    other = dict(PASS, Comment="other")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        machine(sfn, other, name=name)
    assert code(e) == ("StateMachineAlreadyExists", f"State Machine Already Exists: '{arn}'")

    before = sfn.list_state_machines()["stateMachines"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        machine(sfn, {"StartAt": "x"})
    assert code(e) == ("InvalidDefinition", "Invalid State Machine Definition: "
                       "'SCHEMA_VALIDATION_FAILED: These fields are required: [States] at /'")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.create_state_machine(name="bad name", definition=json.dumps(PASS), roleArn=ROLE)
    assert code(e) == ("InvalidName", "Invalid Name: 'bad name'")
    assert sfn.list_state_machines()["stateMachines"] == before

    new = dict(PASS, States={"State_1": {"Type": "Pass", "Result": {"Arg1": "AfterUpdate1"},
                                         "End": True}})
    u = sfn.update_state_machine(stateMachineArn=arn, definition=json.dumps(new),
                                 loggingConfiguration={"level": "OFF"},
                                 tracingConfiguration={"enabled": True})
    d = sfn.describe_state_machine(stateMachineArn=arn)
    assert d["revisionId"] == u["revisionId"] and json.loads(d["definition"]) == new
    assert d["tracingConfiguration"] == {"enabled": True}
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.update_state_machine(stateMachineArn=arn)
    assert code(e) == ("MissingRequiredParameter", "Either the definition, the role ARN, the "
                       "LoggingConfiguration, or the TracingConfiguration must be specified")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.update_state_machine(stateMachineArn=arn, definition="{not json")
    assert code(e)[0] == "InvalidDefinition"
    assert json.loads(sfn.describe_state_machine(stateMachineArn=arn)["definition"]) == new

    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.describe_state_machine(stateMachineArn="not_a_valid_arn")
    assert code(e) == ("InvalidArn", "Invalid Arn: 'Invalid ARN prefix: not_a_valid_arn'")
    sfn.delete_state_machine(stateMachineArn=arn)
    sfn.delete_state_machine(stateMachineArn=arn)  # deleting a deleted one succeeds, as on AWS
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.describe_state_machine(stateMachineArn=arn)
    assert code(e) == ("StateMachineDoesNotExist", f"State Machine Does Not Exist: '{arn}'")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.start_execution(stateMachineArn=arn)
    assert code(e)[0] == "StateMachineDoesNotExist"


def test_pass_execution_as_recorded(sfn):
    arn = machine(sfn, PASS)
    ex = sfn.start_execution(stateMachineArn=arn, name="run-1", input="{}")
    d = wait_done(sfn, ex["executionArn"])
    assert d["status"] == "SUCCEEDED" and json.loads(d["output"]) == {"Arg1": "argument1"}
    assert d["redriveStatus"] == "NOT_REDRIVABLE"
    events = history(sfn, ex["executionArn"])
    # The shape AWS recorded for this machine (test_sfn_api::test_start_execution).
    shape = [(e["id"], e["previousEventId"], e["type"]) for e in events]
    assert shape == [(1, 0, "ExecutionStarted"), (2, 0, "PassStateEntered"),
                     (3, 2, "PassStateExited"), (4, 3, "ExecutionSucceeded")]
    assert events[0]["executionStartedEventDetails"] == {
        "input": "{}", "inputDetails": {"truncated": False}, "roleArn": ROLE}
    assert events[2]["stateExitedEventDetails"] == {
        "name": "State_1", "output": '{"Arg1":"argument1"}', "outputDetails": {"truncated": False}}
    rev = sfn.get_execution_history(executionArn=ex["executionArn"], reverseOrder=True,
                                    maxResults=2)
    assert [e["id"] for e in rev["events"]] == [4, 3] and "nextToken" in rev
    rest = sfn.get_execution_history(executionArn=ex["executionArn"], reverseOrder=True,
                                     maxResults=2, nextToken=rev["nextToken"])
    assert [e["id"] for e in rest["events"]] == [2, 1] and "nextToken" not in rest
    listed = sfn.list_executions(stateMachineArn=arn)["executions"]
    assert [(x["name"], x["status"]) for x in listed] == [("run-1", "SUCCEEDED")]
    assert sfn.list_executions(stateMachineArn=arn, statusFilter="RUNNING")["executions"] == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.list_executions(stateMachineArn=arn, statusFilter="succeeded")
    assert code(e)[0] == "ValidationException"
    # A closed execution's name cannot be reused.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.start_execution(stateMachineArn=arn, name="run-1", input="{}")
    assert code(e) == ("ExecutionAlreadyExists",
                       f"Execution Already Exists: '{ex['executionArn']}'")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.start_execution(stateMachineArn=arn, input="not json")
    assert code(e)[0] == "InvalidExecutionInput"
    assert len(sfn.list_executions(stateMachineArn=arn)["executions"]) == 1
    smx = sfn.describe_state_machine_for_execution(executionArn=ex["executionArn"])
    assert smx["stateMachineArn"] == arn and json.loads(smx["definition"]) == PASS
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.describe_execution(executionArn="invalid_execution_arn")
    assert code(e) == ("InvalidArn", "Invalid Arn: 'Invalid ARN prefix: invalid_execution_arn'")


def test_stop_and_idempotent_start(sfn):
    arn = machine(sfn, {"StartAt": "State_1",
                        "States": {"State_1": {"Type": "Wait", "Seconds": 60, "End": True}}})
    a = sfn.start_execution(stateMachineArn=arn, name="long", input='{"a":1}')
    # Same name and input while running: the same execution.
    b = sfn.start_execution(stateMachineArn=arn, name="long", input='{"a":1}')
    assert a["executionArn"] == b["executionArn"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.start_execution(stateMachineArn=arn, name="long", input='{"a":2}')
    assert code(e)[0] == "ExecutionAlreadyExists"
    time.sleep(0.2)
    sfn.stop_execution(executionArn=a["executionArn"], error="Stopped", cause="by the test")
    d = sfn.describe_execution(executionArn=a["executionArn"])
    assert (d["status"], d["error"], d["cause"]) == ("ABORTED", "Stopped", "by the test")
    types = [e["type"] for e in history(sfn, a["executionArn"])]
    assert types == ["ExecutionStarted", "WaitStateEntered", "ExecutionAborted"]


@pytest.fixture(scope="module")
def workflow_deps(cumulo):
    lam = cumulo.client("lambda")
    fn = f"sfn-fn-{uid()}"
    lam.create_function(FunctionName=fn, Runtime="python3.11", Role=LAMBDA_ROLE,
                        Handler="app.handler", Code={"ZipFile": zip_of({"app.py": FN})})
    lam.get_waiter("function_active_v2").wait(FunctionName=fn,
                                              WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
    fn_arn = lam.get_function(FunctionName=fn)["Configuration"]["FunctionArn"]
    sqs = cumulo.client("sqs")
    queue = sqs.create_queue(QueueName=f"sfn-q-{uid()}")["QueueUrl"]
    ddb = cumulo.client("dynamodb")
    table = f"sfn-t-{uid()}"
    ddb.create_table(TableName=table, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                     BillingMode="PAY_PER_REQUEST")
    return {"fn": fn, "fn_arn": fn_arn, "sqs": sqs, "queue": queue, "ddb": ddb, "table": table}


def workflow(deps):
    return {
        "StartAt": "Double",
        "States": {
            "Double": {
                "Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {"FunctionName": deps["fn"], "Payload.$": "$"},
                "ResultSelector": {"doubled.$": "$.Payload.doubled"},
                "ResultPath": "$.lambda", "Next": "Fan"},
            "Fan": {
                "Type": "Parallel", "ResultPath": "$.fan", "Next": "Each",
                "Branches": [
                    {"StartAt": "Send", "States": {"Send": {
                        "Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage",
                        "Parameters": {"QueueUrl": deps["queue"],
                                       "MessageBody": {"order.$": "$.order"}},
                        "ResultSelector": {"id.$": "$.MessageId"}, "End": True}}},
                    {"StartAt": "Put", "States": {"Put": {
                        "Type": "Task", "Resource": "arn:aws:states:::dynamodb:putItem",
                        "Parameters": {"TableName": deps["table"],
                                       "Item": {"id": {"S.$": "$.order"},
                                                "n": {"N.$": "States.Format('{}', $.items[0])"}}},
                        "ResultPath": None, "OutputPath": "$.order", "End": True}}},
                ]},
            "Each": {
                "Type": "Map", "ItemsPath": "$.lambda.doubled", "MaxConcurrency": 2,
                "ItemSelector": {"value.$": "$$.Map.Item.Value", "index.$": "$$.Map.Item.Index"},
                "ItemProcessor": {"StartAt": "Id", "States": {"Id": {"Type": "Pass", "End": True}}},
                "ResultPath": "$.each", "Next": "Flaky"},
            "Flaky": {
                "Type": "Task", "Resource": deps["fn_arn"],
                "Parameters": {"fail": "always"},
                "Retry": [{"ErrorEquals": ["ValueError"], "IntervalSeconds": 1,
                           "MaxAttempts": 1, "BackoffRate": 1}],
                "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.caught",
                           "Next": "Done"}],
                "End": True},
            "Done": {"Type": "Succeed"},
        },
    }


def test_workflow_with_lambda_sqs_dynamodb(sfn, workflow_deps):
    deps = workflow_deps
    arn = machine(sfn, workflow(deps))
    ex = sfn.start_execution(stateMachineArn=arn, input=json.dumps({"order": "o-1",
                                                                   "items": [1, 2, 3]}))
    d = wait_done(sfn, ex["executionArn"], timeout=60)
    assert d["status"] == "SUCCEEDED", d
    out = json.loads(d["output"])
    assert out["lambda"] == {"doubled": [2, 4, 6]}
    assert out["fan"][1] == "o-1" and "id" in out["fan"][0]
    assert out["each"] == [{"value": 2, "index": 0}, {"value": 4, "index": 1},
                           {"value": 6, "index": 2}]
    assert out["caught"]["Error"] == "ValueError"
    assert json.loads(out["caught"]["Cause"])["errorMessage"] == "asked to fail: always"
    # Side effects in the other services.
    msgs = deps["sqs"].receive_message(QueueUrl=deps["queue"], WaitTimeSeconds=1)["Messages"]
    assert json.loads(msgs[0]["Body"]) == {"order": "o-1"}
    item = deps["ddb"].get_item(TableName=deps["table"], Key={"id": {"S": "o-1"}})["Item"]
    assert item == {"id": {"S": "o-1"}, "n": {"N": "1"}}
    events = history(sfn, ex["executionArn"])
    types = [e["type"] for e in events]
    assert types[:8] == ["ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted",
                         "TaskSucceeded", "TaskStateExited", "ParallelStateEntered",
                         "ParallelStateStarted"]
    assert types.count("ParallelStateSucceeded") == 1
    assert types.index("ParallelStateSucceeded") < types.index("ParallelStateExited")
    assert types.count("MapIterationStarted") == 3 and types.count("MapIterationSucceeded") == 3
    assert types.count("LambdaFunctionFailed") == 2  # the first try and one retry
    assert types[-3:] == ["SucceedStateEntered", "SucceedStateExited", "ExecutionSucceeded"]
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))
    sched = next(e for e in events if e["type"] == "TaskScheduled")["taskScheduledEventDetails"]
    assert (sched["resourceType"], sched["resource"], sched["region"]) == (
        "lambda", "invoke", "us-east-1")


def test_integration_errors_are_aws_named(sfn, workflow_deps):
    deps = workflow_deps
    arn = machine(sfn, {"StartAt": "Put", "States": {"Put": {
        "Type": "Task", "Resource": "arn:aws:states:::dynamodb:putItem",
        "Parameters": {"TableName": "no-such-table", "Item": {"id": {"S": "x"}}}, "End": True}}})
    d = wait_done(sfn, sfn.start_execution(stateMachineArn=arn)["executionArn"])
    assert (d["status"], d["error"]) == ("FAILED", "DynamoDB.ResourceNotFoundException")
    assert d["cause"].startswith("Requested resource not found (Service: AmazonDynamoDBv2; "
                                 "Status Code: 400; Error Code: ResourceNotFoundException;")
    arn = machine(sfn, {"StartAt": "Run", "States": {"Run": {
        "Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:noSuchOperation",
        "Parameters": {"Bucket": "b", "Key": "k", "Body": "x"}, "End": True}}})
    d = wait_done(sfn, sfn.start_execution(stateMachineArn=arn)["executionArn"])
    assert d["status"] == "FAILED" and d["error"] == "States.Runtime"
    assert "arn:aws:states:::aws-sdk:s3:noSuchOperation" in d["cause"]
    arn = machine(sfn, {"StartAt": "Get", "States": {"Get": {
        "Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:getObject",
        "Parameters": {"Bucket": f"no-such-{uid()}", "Key": "k"}, "End": True}}})
    d = wait_done(sfn, sfn.start_execution(stateMachineArn=arn)["executionArn"])
    assert (d["status"], d["error"]) == ("FAILED", "S3.NoSuchBucketException")
    assert d["cause"].startswith("The specified bucket does not exist (Service: S3, "
                                 "Status Code: 404, Request ID: ")


def test_payload_quota_holds_inputs_results_and_outputs(sfn):
    """Step Functions' 256 KiB (262,144 bytes of JSON) quota, as AWS recorded it."""
    echo = machine(sfn, {"StartAt": "Echo", "States": {"Echo": {"Type": "Pass", "End": True}}})
    at_quota = json.dumps({"a": "x" * (262_144 - len('{"a": ""}'))})
    assert len(at_quota) == 262_144
    d = wait_done(sfn, sfn.start_execution(stateMachineArn=echo, input=at_quota)["executionArn"])
    assert d["status"] == "SUCCEEDED" and len(d["output"]) <= 262_144
    # One byte over: refused by the model's length constraint on `input`.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.start_execution(stateMachineArn=echo, input=at_quota[:-2] + 'x"}')
    assert code(e) == ("ValidationException", "1 validation error detected: Value at 'input' "
                       "failed to satisfy constraint: Member must have length less than or "
                       "equal to 262144")

    # A state's output over the quota ends the execution, naming the state (JSONPath and
    # JSONata alike: the interpreter checks every state's output).
    for state in ({"Type": "Pass", "Result": {"Arg1": "x" * (257 * 1024)}, "End": True},
                  {"Type": "Pass", "QueryLanguage": "JSONata",
                   "Output": "{% $pad('', 263000, 'x') %}", "End": True}):
        arn = machine(sfn, {"StartAt": "State_1", "States": {"State_1": state}})
        ex = sfn.start_execution(stateMachineArn=arn)["executionArn"]
        d = wait_done(sfn, ex)
        assert (d["status"], d["error"]) == ("FAILED", "States.DataLimitExceeded")
        assert d["cause"] == ("The state/task 'State_1' returned a result with a size exceeding "
                              "the maximum number of bytes service limit.")
        assert [e["type"] for e in history(sfn, ex)] == [
            "ExecutionStarted", "PassStateEntered", "ExecutionFailed"]

    # A Task whose result is over it fails the Task; States.ALL catches it, as AWS recorded.
    arn = machine(sfn, {"StartAt": "Big", "States": {
        "Big": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:describeStateMachine",
                "Parameters": {"StateMachineArn": machine(sfn, {"StartAt": "P", "States": {
                    "P": {"Type": "Pass", "Result": "x" * 270_000, "End": True}}})},
                "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}], "End": True},
        "Caught": {"Type": "Pass", "End": True}}})
    ex = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    d = wait_done(sfn, ex)
    assert d["status"] == "SUCCEEDED"
    assert json.loads(d["output"]) == {
        "Error": "States.DataLimitExceeded",
        "Cause": "The state/task 'aws-sdk:sfn' returned a result with a size exceeding the "
                 "maximum number of bytes service limit."}
    failed = [e for e in history(sfn, ex) if e["type"] == "TaskFailed"]
    assert failed[0]["taskFailedEventDetails"]["error"] == "States.DataLimitExceeded"


def test_payload_quota_holds_effective_inputs_and_catcher_outputs(sfn):
    """AWS documents States.DataLimitExceeded also for a state's input after Parameters; a
    catcher's output is its state's output, held to the quota like any other."""
    over = ("The state/task 'Describe' returned a result with a size exceeding the maximum "
            "number of bytes service limit.")
    half = json.dumps({"s": "x" * 140_000})
    # Parameters doubling a half-quota input: the call is never made (no TaskScheduled), and
    # the error is caught by its name.
    arn = machine(sfn, {"StartAt": "Describe", "States": {
        "Describe": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:describeStateMachine",
                     "Parameters": {"StateMachineArn.$": "$.s", "Copy.$": "$.s"},
                     "Catch": [{"ErrorEquals": ["States.DataLimitExceeded"], "ResultPath": "$.e",
                                "Next": "Caught"}], "End": True},
        "Caught": {"Type": "Pass", "OutputPath": "$.e", "End": True}}})
    ex = sfn.start_execution(stateMachineArn=arn, input=half)["executionArn"]
    d = wait_done(sfn, ex)
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {"Error": "States.DataLimitExceeded", "Cause": over}
    assert "TaskScheduled" not in [e["type"] for e in history(sfn, ex)]

    # A caught error put beside a near-quota input by ResultPath: the catcher's output is over
    # the quota and the execution fails, naming the state that caught.
    arn = machine(sfn, {"StartAt": "Describe", "States": {
        "Describe": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:describeStateMachine",
                     "Parameters": {"StateMachineArn": "arn:aws:states:us-east-1:000000000000:"
                                                      "stateMachine:absent"},
                     "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error",
                                "Next": "Caught"}], "End": True},
        "Caught": {"Type": "Pass", "End": True}}})
    near = json.dumps({"s": "x" * (262_144 - 100)})
    ex = sfn.start_execution(stateMachineArn=arn, input=near)["executionArn"]
    d = wait_done(sfn, ex)
    assert (d["status"], d["error"], d["cause"]) == ("FAILED", "States.DataLimitExceeded", over)
    assert [e["type"] for e in history(sfn, ex)][-2:] == ["TaskFailed", "ExecutionFailed"]


def test_wait_for_task_token_and_nested_execution(sfn, workflow_deps):
    deps = workflow_deps
    child = machine(sfn, {"StartAt": "P", "States": {"P": {
        "Type": "Pass", "Parameters": {"got.$": "$.x"}, "End": True}}})
    arn = machine(sfn, {"StartAt": "Ask", "States": {
        "Ask": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
                "Parameters": {"QueueUrl": deps["queue"],
                               "MessageBody": {"token.$": "$$.Task.Token"}},
                "HeartbeatSeconds": 30, "Next": "Child"},
        "Child": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
                  "Parameters": {"StateMachineArn": child, "Input": {"x.$": "$.answer"}},
                  "OutputPath": "$.Output", "End": True}}})
    ex = sfn.start_execution(stateMachineArn=arn)
    msgs = deps["sqs"].receive_message(QueueUrl=deps["queue"], WaitTimeSeconds=5)["Messages"]
    token = json.loads(msgs[0]["Body"])["token"]
    sfn.send_task_heartbeat(taskToken=token)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.send_task_success(taskToken=token, output="not json")
    assert code(e)[0] == "InvalidOutput"
    sfn.send_task_success(taskToken=token, output='{"answer": 42}')
    d = wait_done(sfn, ex["executionArn"])
    assert d["status"] == "SUCCEEDED", (d.get("error"), d.get("cause"))
    assert json.loads(d["output"]) == {"got": 42}
    types = [e["type"] for e in history(sfn, ex["executionArn"])]
    assert types[:6] == ["ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted",
                         "TaskSubmitted", "TaskSucceeded"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.send_task_success(taskToken=token, output="{}")
    assert code(e)[0] == "TaskDoesNotExist"
    assert len(sfn.list_executions(stateMachineArn=child)["executions"]) == 1


def test_activity_worker(sfn):
    name = f"act-{uid()}"
    act = sfn.create_activity(name=name)["activityArn"]
    assert sfn.describe_activity(activityArn=act)["name"] == name
    arn = machine(sfn, {"StartAt": "Work", "States": {"Work": {
        "Type": "Task", "Resource": act, "End": True}}})
    ex = sfn.start_execution(stateMachineArn=arn, input='{"job": 7}')
    task = sfn.get_activity_task(activityArn=act, workerName="w")
    assert json.loads(task["input"]) == {"job": 7}
    sfn.send_task_failure(taskToken=task["taskToken"], error="Boom", cause="worker said no")
    d = wait_done(sfn, ex["executionArn"])
    assert (d["status"], d["error"], d["cause"]) == ("FAILED", "Boom", "worker said no")
    events = history(sfn, ex["executionArn"])
    # As AWS records an activity: started when a worker takes it, with the worker's name.
    assert [(e["type"], e.get("activityStartedEventDetails")) for e in events[2:5]] == [
        ("ActivityScheduled", None), ("ActivityStarted", {"workerName": "w"}),
        ("ActivityFailed", None)]
    assert events[4]["activityFailedEventDetails"] == {"error": "Boom", "cause": "worker said no"}
    sfn.delete_activity(activityArn=act)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.describe_activity(activityArn=act)
    assert code(e) == ("ActivityDoesNotExist", f"Activity Does Not Exist: '{act}'")


def test_versions_aliases_and_tags(sfn):
    arn = machine(sfn, PASS, publish=True, tags=[{"key": "team", "value": "a"}])
    v1 = f"{arn}:1"
    assert [v["stateMachineVersionArn"] for v in
            sfn.list_state_machine_versions(stateMachineArn=arn)["stateMachineVersions"]] == [v1]
    # Publishing an unchanged revision answers the same version.
    assert sfn.publish_state_machine_version(stateMachineArn=arn)["stateMachineVersionArn"] == v1
    alias = sfn.create_state_machine_alias(
        name="live", routingConfiguration=[{"stateMachineVersionArn": v1, "weight": 100}])
    assert alias["stateMachineAliasArn"] == f"{arn}:live"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.create_state_machine_alias(
            name="bad", routingConfiguration=[{"stateMachineVersionArn": v1, "weight": 70}])
    assert code(e) == ("ValidationException",
                       "Sum of routing configuration weights must equal 100. Received: [70]")
    ex = sfn.start_execution(stateMachineArn=alias["stateMachineAliasArn"])
    d = wait_done(sfn, ex["executionArn"])
    assert d["stateMachineVersionArn"] == v1
    assert d["stateMachineAliasArn"] == alias["stateMachineAliasArn"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.delete_state_machine_version(stateMachineVersionArn=v1)
    assert code(e) == ("ConflictException", "Version to be deleted must not be referenced by an "
                       "alias. Current list of aliases referencing this version: [live]")
    sfn.tag_resource(resourceArn=arn, tags=[{"key": "env", "value": "dev"}])
    sfn.untag_resource(resourceArn=arn, tagKeys=["team"])
    assert sfn.list_tags_for_resource(resourceArn=arn)["tags"] == [{"key": "env", "value": "dev"}]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.tag_resource(resourceArn=v1, tags=[{"key": "k", "value": "v"}])
    assert code(e) == ("ResourceNotFound", f"Resource not found: '{v1}'")
    sfn.delete_state_machine_alias(stateMachineAliasArn=alias["stateMachineAliasArn"])
    sfn.delete_state_machine_version(stateMachineVersionArn=v1)
    assert sfn.list_state_machine_versions(stateMachineArn=arn)["stateMachineVersions"] == []


def host_redirect(port):
    """A before-send hook that sends the request to 127.0.0.1 keeping its Host (what a resolver
    mapping `sync-localhost` to this machine does) and records the URL botocore built."""
    seen = []

    def send(request, **_):
        seen.append(request.url)
        url = request.url.replace(f"sync-localhost:{port}", f"127.0.0.1:{port}")
        req = urllib.request.Request(url, data=request.body, method=request.method,
                                     headers=dict(request.headers.items()))
        req.add_header("Host", f"sync-localhost:{port}")
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                status, headers, body = r.status, dict(r.headers.items()), r.read()
        except urllib.error.HTTPError as err:
            status, headers, body = err.code, dict(err.headers.items()), err.read()
        raw = botocore.awsrequest.AWSResponse(url, status, headers, None)
        raw._content = body
        return raw

    return seen, send


def test_start_sync_execution_through_the_sync_host(cumulo, sfn):
    import boto3
    arn = machine(sfn, PASS, type="EXPRESS")
    client = boto3.client("stepfunctions", endpoint_url=f"http://localhost:{cumulo.port}",
                          region_name="us-east-1", aws_access_key_id="test",
                          aws_secret_access_key="test")
    seen, send = host_redirect(cumulo.port)
    client.meta.events.register("before-send.sfn.StartSyncExecution", send)
    r = client.start_sync_execution(stateMachineArn=arn, input='{"a": 1}')
    assert seen[0].startswith(f"http://sync-localhost:{cumulo.port}/")
    assert r["status"] == "SUCCEEDED" and json.loads(r["output"]) == {"Arg1": "argument1"}
    assert r["executionArn"].startswith(
        f"arn:aws:states:us-east-1:000000000000:express:{arn.rsplit(':', 1)[1]}:")
    # The documented way out for clients that cannot resolve the prefixed name.
    plain = cumulo.client("stepfunctions", inject_host_prefix=False)
    fail = machine(sfn, {"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "SomeFailure",
                                                           "Cause": "because"}}}, type="EXPRESS")
    r = plain.start_sync_execution(stateMachineArn=fail)
    assert (r["status"], r["error"], r["cause"]) == ("FAILED", "SomeFailure", "because")
    env = {**os.environ, **CREDS, "AWS_DISABLE_HOST_PREFIX_INJECTION": "true"}
    proc = subprocess.run(["aws", "--endpoint-url", f"http://localhost:{cumulo.port}", "--output",
                           "json", "stepfunctions", "start-sync-execution", "--state-machine-arn",
                           arn, "--input", "{}"], capture_output=True, text=True, env=env,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["status"] == "SUCCEEDED"
    standard = machine(sfn, PASS)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        plain.start_sync_execution(stateMachineArn=standard)
    assert code(e) == ("StateMachineTypeNotSupported",
                       "This operation is not supported by this type of state machine")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        plain.list_executions(stateMachineArn=arn)
    assert code(e)[0] == "StateMachineTypeNotSupported"


def test_execution_resumes_after_restart(fresh_server):
    server = fresh_server.start()
    sfn = server.client("stepfunctions")
    done = machine(sfn, PASS)
    finished = sfn.start_execution(stateMachineArn=done, name="before")["executionArn"]
    wait_done(sfn, finished)
    arn = machine(sfn, {"StartAt": "First", "States": {
        "First": {"Type": "Pass", "Result": {"n": 1}, "Next": "Nap"},
        "Nap": {"Type": "Wait", "Seconds": 2, "Next": "Last"},
        "Last": {"Type": "Pass", "End": True}}})
    ex = sfn.start_execution(stateMachineArn=arn, name="across")["executionArn"]
    time.sleep(0.5)
    server.kill9()
    server.start()
    sfn = server.client("stepfunctions")
    d = wait_done(sfn, ex, timeout=20)
    assert d["status"] == "SUCCEEDED" and json.loads(d["output"]) == {"n": 1}
    events = history(sfn, ex)
    types = [e["type"] for e in events]
    assert types == ["ExecutionStarted", "PassStateEntered", "PassStateExited",
                     "WaitStateEntered", "WaitStateExited", "PassStateEntered",
                     "PassStateExited", "ExecutionSucceeded"]
    assert [e["id"] for e in events] == list(range(1, 9))
    assert d["stopDate"].timestamp() - d["startDate"].timestamp() >= 2
    assert sfn.describe_execution(executionArn=finished)["status"] == "SUCCEEDED"
    assert len(history(sfn, finished)) == 4


STACK_TEMPLATE = """
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Greeting:
    Type: String
    Default: hello
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Version: '2012-10-17'
        Statement:
          - Effect: Allow
            Principal: {Service: states.amazonaws.com}
            Action: sts:AssumeRole
  FnRole:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Version: '2012-10-17'
        Statement:
          - Effect: Allow
            Principal: {Service: lambda.amazonaws.com}
            Action: sts:AssumeRole
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.11
      Handler: index.handler
      Role: !GetAtt FnRole.Arn
      Code:
        ZipFile: |
          def handler(event, context):
              return {"greeting": event["greeting"] + ", " + event["who"]}
  Machine:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      RoleArn: !GetAtt Role.Arn
      TracingConfiguration: {Enabled: true}
      Tags: [{Key: team, Value: blue}]
      DefinitionSubstitutions:
        FnArn: !GetAtt Fn.Arn
        Greeting: !Ref Greeting
      Definition:
        StartAt: Greet
        States:
          Greet:
            Type: Task
            Resource: ${FnArn}
            Parameters:
              greeting: ${Greeting}
              who.$: $.who
            End: true
  Worker:
    Type: AWS::StepFunctions::Activity
    Properties:
      Name: !Sub '${AWS::StackName}-worker'
  Version:
    Type: AWS::StepFunctions::StateMachineVersion
    Properties:
      StateMachineArn: !Ref Machine
      StateMachineRevisionId: !GetAtt Machine.StateMachineRevisionId
  Live:
    Type: AWS::StepFunctions::StateMachineAlias
    Properties:
      Name: live
      RoutingConfiguration:
        - StateMachineVersionArn: !Ref Version
          Weight: 100
Outputs:
  MachineArn: {Value: !Ref Machine}
  MachineName: {Value: !GetAtt Machine.Name}
  Revision: {Value: !GetAtt Machine.StateMachineRevisionId}
  ActivityArn: {Value: !Ref Worker}
  AliasArn: {Value: !Ref Live}
  VersionArn: {Value: !GetAtt Version.Arn}
"""


def test_cloudformation_stack_with_cli_deploy(cumulo, sfn, tmp_path):
    stack = f"sfn-stack-{uid()}"
    path = tmp_path / "template.yaml"
    path.write_text(STACK_TEMPLATE)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path),
               "--capabilities", "CAPABILITY_IAM")
    cfn = cumulo.client("cloudformation")
    out = {o["OutputKey"]: o["OutputValue"]
           for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    d = sfn.describe_state_machine(stateMachineArn=out["MachineArn"])
    assert d["name"] == out["MachineName"] and d["tracingConfiguration"] == {"enabled": True}
    assert "${" not in d["definition"]
    assert out["Revision"] == "INITIAL" and out["VersionArn"] == out["MachineArn"] + ":1"
    assert out["AliasArn"] == out["MachineArn"] + ":live"
    tags = {t["key"]: t["value"] for t in
            sfn.list_tags_for_resource(resourceArn=out["MachineArn"])["tags"]}
    assert tags["team"] == "blue" and tags["aws:cloudformation:stack-name"] == stack
    assert sfn.describe_activity(activityArn=out["ActivityArn"])["name"] == f"{stack}-worker"
    ex = sfn.start_execution(stateMachineArn=out["AliasArn"], input='{"who": "world"}')
    d = wait_done(sfn, ex["executionArn"], timeout=60)
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {"greeting": "hello, world"}

    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path),
               "--capabilities", "CAPABILITY_IAM", "--parameter-overrides", "Greeting=howdy")
    out2 = {o["OutputKey"]: o["OutputValue"]
            for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    assert out2["MachineArn"] == out["MachineArn"] and out2["Revision"] != "INITIAL"
    assert out2["VersionArn"] == out["MachineArn"] + ":2"
    ex = sfn.start_execution(stateMachineArn=out2["AliasArn"], input='{"who": "there"}')
    assert json.loads(wait_done(sfn, ex["executionArn"], timeout=60)["output"]) == {
        "greeting": "howdy, there"}

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack,
                                                 WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    arns = [m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"]]
    assert out["MachineArn"] not in arns
    assert out["ActivityArn"] not in [a["activityArn"] for a in
                                      sfn.list_activities()["activities"]]


def test_bad_stack_definition_is_refused_and_rolled_back(cumulo, sfn, tmp_path):
    stack = f"sfn-bad-{uid()}"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"Resources": {"M": {
        "Type": "AWS::StepFunctions::StateMachine",
        "Properties": {"RoleArn": ROLE, "StateMachineName": f"bad-{uid()}",
                       "DefinitionString": json.dumps({"StartAt": "x"})}}}}))
    before = sfn.list_state_machines()["stateMachines"]
    proc = cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file",
                      str(path), check=False)
    assert proc.returncode != 0
    events = cumulo.client("cloudformation").describe_stack_events(StackName=stack)["StackEvents"]
    reasons = [e.get("ResourceStatusReason", "") for e in events
               if e["ResourceStatus"] == "CREATE_FAILED"]
    assert any("These fields are required: [States]" in r for r in reasons), reasons
    assert sfn.list_state_machines()["stateMachines"] == before


def test_ecs_run_task_sync_reaches_stopped(cumulo, sfn):
    ecs = cumulo.client("ecs")
    cluster = f"sfn-c-{uid()}"
    ecs.create_cluster(clusterName=cluster)
    family = f"sfn-fam-{uid()}"
    ecs.register_task_definition(
        family=family, containerDefinitions=[{"name": "app", "image": "busybox", "essential": True}],
        requiresCompatibilities=["FARGATE"], networkMode="awsvpc", cpu="256", memory="512")
    ec2 = cumulo.client("ec2")
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]
    subnet = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc["VpcId"]]}])[
        "Subnets"][0]["SubnetId"]
    arn = machine(sfn, {"StartAt": "Run", "States": {"Run": {
        "Type": "Task", "Resource": "arn:aws:states:::ecs:runTask.sync",
        "Parameters": {"Cluster": cluster, "TaskDefinition": family, "LaunchType": "FARGATE",
                       "NetworkConfiguration": {"AwsvpcConfiguration": {"Subnets": [subnet]}}},
        "End": True}}})
    ex = sfn.start_execution(stateMachineArn=arn)
    d = wait_done(sfn, ex["executionArn"], timeout=30)
    assert d["status"] == "SUCCEEDED", (d.get("error"), d.get("cause"))
    out = json.loads(d["output"])
    assert out["LastStatus"] == "STOPPED" and out["DesiredStatus"] == "STOPPED"
    task = ecs.describe_tasks(cluster=cluster, tasks=[out["TaskArn"]])["tasks"][0]
    assert task["lastStatus"] == "STOPPED"
    types = [e["type"] for e in history(sfn, ex["executionArn"])]
    assert types == ["ExecutionStarted", "TaskStateEntered", "TaskScheduled", "TaskStarted",
                     "TaskSubmitted", "TaskSucceeded", "TaskStateExited", "ExecutionSucceeded"]


def test_map_item_reader_from_s3(cumulo, sfn):
    s3 = cumulo.client("s3")
    bucket = f"sfn-items-{uid()}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="items.json", Body=json.dumps([{"n": 1}, {"n": 2}, {"n": 3}]))
    s3.put_object(Bucket=bucket, Key="rows.csv", Body="id,name\n1,\"a, b\"\n2,c\n")

    def run(reader):
        arn = machine(sfn, {"StartAt": "Each", "States": {"Each": {
            "Type": "Map", "ItemReader": reader,
            "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
                              "StartAt": "Id", "States": {"Id": {"Type": "Pass", "End": True}}},
            "End": True}}})
        d = wait_done(sfn, sfn.start_execution(stateMachineArn=arn,
                                               input=json.dumps({"b": bucket}))["executionArn"])
        assert d["status"] == "SUCCEEDED", (d.get("error"), d.get("cause"))
        return json.loads(d["output"])

    assert run({"Resource": "arn:aws:states:::s3:getObject",
                "ReaderConfig": {"InputType": "JSON", "MaxItems": 2},
                "Parameters": {"Bucket.$": "$.b", "Key": "items.json"}}) == [{"n": 1}, {"n": 2}]
    assert run({"Resource": "arn:aws:states:::s3:getObject",
                "ReaderConfig": {"InputType": "CSV", "CSVHeaderLocation": "FIRST_ROW"},
                "Parameters": {"Bucket.$": "$.b", "Key": "rows.csv"}}) == [
        {"id": "1", "name": "a, b"}, {"id": "2", "name": "c"}]
    keys = run({"Resource": "arn:aws:states:::s3:listObjectsV2",
                "Parameters": {"Bucket.$": "$.b"}})
    assert [k["Key"] for k in keys] == ["items.json", "rows.csv"]


def test_redrive_runs_the_failed_state_again(cumulo, sfn):
    ddb = cumulo.client("dynamodb")
    table = f"sfn-redrive-{uid()}"
    arn = machine(sfn, {"StartAt": "First", "States": {
        "First": {"Type": "Pass", "Result": {"k": "a"}, "Next": "Get"},
        "Get": {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:getItem",
                "Parameters": {"TableName": table, "Key": {"id": {"S.$": "$.k"}}},
                "ResultSelector": {"item.$": "$.Item"}, "End": True}}})
    ex = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    d = wait_done(sfn, ex)
    assert (d["status"], d["redriveStatus"]) == ("FAILED", "REDRIVABLE")
    ddb.create_table(TableName=table, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                     BillingMode="PAY_PER_REQUEST")
    ddb.put_item(TableName=table, Item={"id": {"S": "a"}, "v": {"N": "7"}})
    sfn.redrive_execution(executionArn=ex)
    d = wait_done(sfn, ex)
    assert d["status"] == "SUCCEEDED" and d["redriveCount"] == 1
    assert json.loads(d["output"]) == {"item": {"id": {"S": "a"}, "v": {"N": "7"}}}
    types = [e["type"] for e in history(sfn, ex)]
    assert types == ["ExecutionStarted", "PassStateEntered", "PassStateExited",
                     "TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskFailed",
                     "ExecutionFailed", "ExecutionRedriven", "TaskStateEntered",
                     "TaskScheduled", "TaskStarted", "TaskSucceeded", "TaskStateExited",
                     "ExecutionSucceeded"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.redrive_execution(executionArn=ex)
    assert code(e) == ("ExecutionNotRedrivable", "Execution is SUCCEEDED and cannot be redriven")


def test_copilot_static_site_copy_through_start_sync_execution(cumulo, sfn):
    """The shape of Copilot's static-site asset copy: an EXPRESS machine run with
    StartSyncExecution reads a mapping file (aws-sdk:s3:getObject), copies each file
    (aws-sdk:s3:copyObject in a Map) and invalidates the distribution
    (aws-sdk:cloudfront:createInvalidation)."""
    s3 = cumulo.client("s3")
    src, dst = f"sfn-src-{uid()}", f"sfn-dst-{uid()}"
    s3.create_bucket(Bucket=src)
    s3.create_bucket(Bucket=dst)
    s3.put_object(Bucket=src, Key="a.html", Body=b"<p>a</p>")
    s3.put_object(Bucket=src, Key="mapping", Body=json.dumps([
        {"path": "a.html", "destPath": "index.html", "contentType": "text/html"}]))
    copy = {"Type": "Task", "End": True, "Resource": "arn:aws:states:::aws-sdk:s3:copyObject",
            "Parameters": {"CopySource.$": f"States.Format('{src}/{{}}', $.path)", "Bucket": dst,
                           "Key.$": "$.destPath", "ContentType.$": "$.contentType",
                           "MetadataDirective": "REPLACE"}}
    arn = machine(sfn, {"StartAt": "GetMappingFile", "States": {
        "GetMappingFile": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:getObject",
                           "Parameters": {"Bucket": src, "Key": "mapping"},
                           "ResultSelector": {"files.$": "States.StringToJson($.Body)"},
                           "ResultPath": "$.GetMappingFile", "Next": "CopyFiles"},
        "CopyFiles": {"Type": "Map", "ItemsPath": "$.GetMappingFile.files", "Next": "Invalidate",
                      "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"},
                                        "StartAt": "CopyFile", "States": {"CopyFile": copy}}},
        "Invalidate": {"Type": "Task", "End": True,
                       "Resource": "arn:aws:states:::aws-sdk:cloudfront:createInvalidation",
                       "Parameters": {"DistributionId": "ENOSUCHDIST", "InvalidationBatch": {
                           "CallerReference.$": "States.UUID()",
                           "Paths": {"Quantity": 1, "Items": ["/*"]}}}}}}, type="EXPRESS")
    plain = cumulo.client("stepfunctions", inject_host_prefix=False)
    r = plain.start_sync_execution(stateMachineArn=arn)
    assert (r["status"], r["error"]) == ("FAILED", "CloudFront.NoSuchDistributionException")
    got = s3.get_object(Bucket=dst, Key="index.html")
    assert got["Body"].read() == b"<p>a</p>" and got["ContentType"] == "text/html"


def test_a_function_calls_start_sync_execution(cumulo, sfn):
    """A Lambda function's SDK reaches StartSyncExecution (as Copilot's trigger function does):
    cumulo's function environment turns botocore's `sync-` host prefix off."""
    arn = machine(sfn, PASS, type="EXPRESS")
    lam = cumulo.client("lambda")
    fn = f"sfn-caller-{uid()}"
    src = ("import boto3, json\n"
           "def handler(event, context):\n"
           "    r = boto3.client('stepfunctions').start_sync_execution(\n"
           "        stateMachineArn=event['arn'], input='{}')\n"
           "    return {'status': r['status'], 'output': r['output']}\n")
    lam.create_function(FunctionName=fn, Runtime="python3.11", Role=LAMBDA_ROLE,
                        Handler="app.handler", Code={"ZipFile": zip_of({"app.py": src})})
    lam.get_waiter("function_active_v2").wait(FunctionName=fn,
                                              WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
    r = lam.invoke(FunctionName=fn, Payload=json.dumps({"arn": arn}).encode())
    out = json.loads(r["Payload"].read())
    assert "FunctionError" not in r, out
    assert out == {"status": "SUCCEEDED", "output": '{"Arg1":"argument1"}'}


def test_list_executions_pages_and_heartbeat_timeout(sfn, workflow_deps):
    arn = machine(sfn, {"StartAt": "Ask", "States": {"Ask": {
        "Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
        "Parameters": {"QueueUrl": workflow_deps["queue"],
                       "MessageBody": {"token.$": "$$.Task.Token"}},
        "HeartbeatSeconds": 1, "End": True}}})
    arns = [sfn.start_execution(stateMachineArn=arn, name=f"e{i}")["executionArn"]
            for i in range(3)]
    page = sfn.list_executions(stateMachineArn=arn, maxResults=2)
    rest = sfn.list_executions(stateMachineArn=arn, maxResults=2, nextToken=page["nextToken"])
    names = [x["name"] for x in page["executions"] + rest["executions"]]
    assert sorted(names) == ["e0", "e1", "e2"] and "nextToken" not in rest
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.list_executions(stateMachineArn=arn, nextToken="bogus")
    assert code(e) == ("InvalidToken", "Invalid Token: 'Invalid token'")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.list_executions(stateMachineArn=arn, maxResults=1001)
    assert code(e) == ("ValidationException", "1 validation error detected: Value '1001' at "
                       "'maxResults' failed to satisfy constraint: Member must have value less "
                       "than or equal to 1000")
    # No heartbeat arrives: each fails as AWS records it (TaskTimedOut, States.Timeout, no cause).
    for a in arns:
        d = wait_done(sfn, a, timeout=10)
        assert (d["status"], d["error"]) == ("FAILED", "States.Timeout") and "cause" not in d
    events = history(sfn, arns[0])
    assert [e["type"] for e in events][-2:] == ["TaskTimedOut", "ExecutionFailed"]
    assert events[-2]["taskTimedOutEventDetails"] == {
        "error": "States.Timeout", "resource": "sendMessage.waitForTaskToken",
        "resourceType": "sqs"}
    workflow_deps["sqs"].purge_queue(QueueUrl=workflow_deps["queue"])


def test_definition_from_s3_with_substitutions(cumulo, sfn):
    s3 = cumulo.client("s3")
    bucket = f"sfn-defs-{uid()}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="def.json", Body=json.dumps({
        "StartAt": "P", "States": {"P": {"Type": "Pass", "Result": "${Word}", "End": True}}}))
    cfn = cumulo.client("cloudformation")
    stack = f"sfn-s3def-{uid()}"
    cfn.create_stack(StackName=stack, TemplateBody=json.dumps({"Resources": {"M": {
        "Type": "AWS::StepFunctions::StateMachine",
        "Properties": {"RoleArn": ROLE, "StateMachineType": "EXPRESS",
                       "DefinitionS3Location": {"Bucket": bucket, "Key": "def.json"},
                       "DefinitionSubstitutions": {"Word": "from-s3"}}}}}))
    cfn.get_waiter("stack_create_complete").wait(StackName=stack,
                                                 WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    arn = cfn.describe_stack_resource(StackName=stack, LogicalResourceId="M")[
        "StackResourceDetail"]["PhysicalResourceId"]
    d = sfn.describe_state_machine(stateMachineArn=arn)
    assert d["type"] == "EXPRESS" and json.loads(d["definition"])["States"]["P"]["Result"] == "from-s3"
    plain = cumulo.client("stepfunctions", inject_host_prefix=False)
    assert plain.start_sync_execution(stateMachineArn=arn)["output"] == '"from-s3"'
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack,
                                                 WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sfn.describe_state_machine(stateMachineArn=arn)
    assert code(e)[0] == "StateMachineDoesNotExist"
