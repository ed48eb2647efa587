"""Step Functions with `QueryLanguage: JSONata` and variables, end to end: state machines created
through boto3 and `aws cloudformation deploy` whose Lambda, SQS and DynamoDB tasks take
JSONata `Arguments`, that assign and read variables, and that fail with AWS's error names
(`States.QueryEvaluationError` and its causes, the history's `EvaluationFailed` event)."""
import json

import pytest
from test_stepfunctions import FN, LAMBDA_ROLE, ROLE, history, uid, wait_done, zip_of


@pytest.fixture(scope="module")
def sfn(cumulo):
    return cumulo.client("stepfunctions")


@pytest.fixture(scope="module")
def deps(cumulo):
    lam = cumulo.client("lambda")
    fn = f"jsonata-fn-{uid()}"
    lam.create_function(FunctionName=fn, Runtime="python3.11", Role=LAMBDA_ROLE,
                        Handler="app.handler", Code={"ZipFile": zip_of({"app.py": FN})})
    lam.get_waiter("function_active_v2").wait(FunctionName=fn,
                                              WaiterConfig={"Delay": 0.2, "MaxAttempts": 100})
    sqs = cumulo.client("sqs")
    queue = sqs.create_queue(QueueName=f"jsonata-q-{uid()}")["QueueUrl"]
    ddb = cumulo.client("dynamodb")
    table = f"jsonata-t-{uid()}"
    ddb.create_table(TableName=table, KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                     BillingMode="PAY_PER_REQUEST")
    return {"fn": fn, "sqs": sqs, "queue": queue, "ddb": ddb, "table": table}


def run(sfn, definition, payload):
    arn = sfn.create_state_machine(name=f"jsonata-{uid()}", definition=json.dumps(definition),
                                   roleArn=ROLE)["stateMachineArn"]
    ex = sfn.start_execution(stateMachineArn=arn, input=json.dumps(payload))
    return wait_done(sfn, ex["executionArn"]), history(sfn, ex["executionArn"])


def orders_machine(d):
    return {
        "QueryLanguage": "JSONata", "StartAt": "Double",
        "States": {
            "Double": {
                "Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                "Arguments": {"FunctionName": d["fn"],
                              "Payload": {"items": "{% $states.input.orders.qty %}"}},
                "Assign": {"doubled": "{% $states.result.Payload.doubled %}",
                           "total": "{% $sum($states.result.Payload.doubled) %}"},
                "Output": "{% $states.input %}", "Next": "Each"},
            "Each": {
                "Type": "Map", "Items": "{% $states.input.orders %}",
                "ItemSelector": {"sku": "{% $uppercase($states.context.Map.Item.Value.sku) %}",
                                 "at": "{% $states.context.Map.Item.Index %}"},
                "ItemProcessor": {"StartAt": "Put", "States": {"Put": {
                    "Type": "Task", "Resource": "arn:aws:states:::dynamodb:putItem",
                    "Arguments": {"TableName": d["table"],
                                  "Item": {"id": {"S": "{% $states.input.sku %}"},
                                           "total": {"N": "{% $string($total) %}"}}},
                    "Output": "{% $states.input.sku %}", "End": True}}},
                "Next": "Big?"},
            "Big?": {
                "Type": "Choice",
                "Choices": [{"Condition": "{% $total > 5 %}", "Next": "Send",
                             "Assign": {"size": "big"}}],
                "Default": "Send", "Assign": {"size": "small"}},
            "Send": {
                "Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage",
                "Arguments": {"QueueUrl": d["queue"],
                              "MessageBody": "{% $string({'skus': $states.input, 'size': $size}) %}"},
                "Output": {"skus": "{% $states.input %}", "size": "{% $size %}",
                           "total": "{% $total %}", "sent": "{% $exists($states.result.MessageId) %}"},
                "End": True},
        },
    }


def test_jsonata_workflow_with_lambda_dynamodb_sqs_and_variables(sfn, deps):
    d, events = run(sfn, orders_machine(deps),
                    {"orders": [{"sku": "a", "qty": 1}, {"sku": "b", "qty": 3}]})
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {"skus": ["A", "B"], "size": "big", "total": 8,
                                       "sent": True}
    exited = [e["stateExitedEventDetails"] for e in events if e["type"] == "TaskStateExited"]
    assert json.loads(exited[0]["assignedVariables"]["total"]) == 8
    assert exited[0]["assignedVariablesDetails"] == {"truncated": False}
    item = deps["ddb"].get_item(TableName=deps["table"], Key={"id": {"S": "B"}})["Item"]
    assert item["total"] == {"N": "8"}
    msgs = deps["sqs"].receive_message(QueueUrl=deps["queue"], WaitTimeSeconds=1)["Messages"]
    assert json.loads(msgs[0]["Body"]) == {"skus": ["A", "B"], "size": "big"}


def test_undefined_expression_fails_with_query_evaluation_error(sfn):
    definition = {"QueryLanguage": "JSONata", "StartAt": "P", "States": {
        "P": {"Type": "Pass", "Output": {"result": "{% $doesNotExist %}"}, "End": True}}}
    d, events = run(sfn, definition, {})
    assert d["status"] == "FAILED"
    assert d["error"] == "States.QueryEvaluationError"
    assert d["cause"] == ("An error occurred while executing the state 'P' (entered at the event "
                          "id #2). The JSONata expression '$doesNotExist' specified for the field "
                          "'Output/result' returned nothing (undefined).")
    failed = [e for e in events if e["type"] == "EvaluationFailed"][0]
    assert failed["evaluationFailedEventDetails"]["location"] == "Output/result"
    assert failed["evaluationFailedEventDetails"]["state"] == "P"


def test_catch_output_and_fail_expressions(sfn, deps):
    definition = {"QueryLanguage": "JSONata", "StartAt": "Call", "States": {
        "Call": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                 "Arguments": {"FunctionName": deps["fn"], "Payload": {"fail": "boom"}},
                 "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Failed",
                            "Assign": {"err": "{% $states.errorOutput.Error %}"},
                            "Output": "{% $states.errorOutput %}"}],
                 "End": True},
        "Failed": {"Type": "Fail", "Error": "{% 'Custom.' & $err %}",
                   "Cause": "{% $parse($states.input.Cause).errorMessage %}"}}}
    d, _ = run(sfn, definition, {})
    assert d["status"] == "FAILED"
    assert d["error"] == "Custom.ValueError"
    assert d["cause"] == "asked to fail: boom"


def test_jsonpath_states_assign_and_read_variables_with_inner_scopes(sfn):
    definition = {"StartAt": "Set", "States": {
        "Set": {"Type": "Pass", "Assign": {"greeting.$": "$.hello", "n": 2}, "Next": "Each"},
        "Each": {"Type": "Map", "ItemsPath": "$.list", "ResultPath": "$.each", "Next": "Use",
                 "ItemProcessor": {"StartAt": "Inner", "States": {"Inner": {
                     "Type": "Pass", "Assign": {"greeting": "inner"},
                     "Parameters": {"outer.$": "$greeting", "item.$": "$"}, "End": True}}}},
        "Use": {"Type": "Pass", "Parameters": {"g.$": "$greeting", "n.$": "$n",
                                               "each.$": "$.each"}, "End": True}}}
    d, _ = run(sfn, definition, {"hello": "hi", "list": [1, 2]})
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {"g": "hi", "n": 2, "each": [
        {"outer": "hi", "item": 1}, {"outer": "hi", "item": 2}]}


def test_jsonpath_fields_refused_in_jsonata_states(sfn):
    bad = {"QueryLanguage": "JSONata", "StartAt": "P", "States": {
        "P": {"Type": "Pass", "Parameters": {"a": 1}, "End": True}}}
    with pytest.raises(sfn.exceptions.InvalidDefinition) as e:
        sfn.create_state_machine(name=f"bad-{uid()}", definition=json.dumps(bad), roleArn=ROLE)
    assert "The field 'Parameters' is not supported" in e.value.response["Error"]["Message"]
    mixed = {"QueryLanguage": "JSONata", "StartAt": "P", "States": {
        "P": {"Type": "Pass", "QueryLanguage": "JSONPath", "End": True}}}
    with pytest.raises(sfn.exceptions.InvalidDefinition) as e:
        sfn.create_state_machine(name=f"bad-{uid()}", definition=json.dumps(mixed), roleArn=ROLE)
    assert ("'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine"
            in e.value.response["Error"]["Message"])


TEMPLATE = """
Resources:
  Machine:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      RoleArn: arn:aws:iam::000000000000:role/sfn-role
      Definition:
        QueryLanguage: JSONata
        StartAt: Greet
        States:
          Greet:
            Type: Pass
            Assign:
              who: "{% $states.input.who %}"
            Output:
              greeting: "{% 'hello, ' & $states.input.who %}"
            Next: Check
          Check:
            Type: Choice
            Choices:
              - Condition: "{% $who = 'world' %}"
                Next: Done
            Default: Nope
          Nope:
            Type: Fail
            Error: NotTheWorld
            Cause: "{% 'got ' & $who %}"
          Done:
            Type: Succeed
Outputs:
  MachineArn:
    Value: !Ref Machine
"""


def test_cloudformation_deploys_a_jsonata_machine(cumulo, sfn, tmp_path):
    stack = f"jsonata-stack-{uid()}"
    path = tmp_path / "template.yaml"
    path.write_text(TEMPLATE)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path))
    cfn = cumulo.client("cloudformation")
    arn = cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"][0]["OutputValue"]
    ex = sfn.start_execution(stateMachineArn=arn, input='{"who": "world"}')
    d = wait_done(sfn, ex["executionArn"])
    assert d["status"] == "SUCCEEDED" and json.loads(d["output"]) == {"greeting": "hello, world"}
    ex = sfn.start_execution(stateMachineArn=arn, input='{"who": "moon"}')
    d = wait_done(sfn, ex["executionArn"])
    assert (d["status"], d["error"], d["cause"]) == ("FAILED", "NotTheWorld", "got moon")
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack,
                                                 WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    assert arn not in [m["stateMachineArn"] for m in sfn.list_state_machines()["stateMachines"]]
