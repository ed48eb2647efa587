"""Step Functions with `QueryLanguage: JSONata` and variables, end to end: state machines created
through boto3 and `aws cloudformation deploy` whose Lambda, SQS and DynamoDB tasks take
JSONata `Arguments`, that assign and read variables, and that fail with AWS's error names
(`States.QueryEvaluationError` and its causes, the history's `EvaluationFailed` event)."""
import json
import time

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


def pass_output(sfn, output, payload=None):
    """Runs a one-state JSONata Pass machine whose Output is `output`."""
    definition = {"QueryLanguage": "JSONata", "StartAt": "P", "States": {
        "P": {"Type": "Pass", "Output": output, "End": True}}}
    return run(sfn, definition, payload or {})


def test_regular_expressions_in_match_contains_split_and_replace(sfn):
    d, _ = pass_output(sfn, {
        "has": "{% $contains($states.input.s, /order-\\d+/i) %}",
        "ids": "{% $match($states.input.s, /order-(\\d+)/i).groups[0] %}",
        "first": "{% $match($states.input.s, /(\\w+)-(\\d+)/, 1) %}",
        "parts": "{% $split('a1b22c', /\\d+/) %}",
        "swapped": "{% $replace('John Smith', /(\\w+)\\s(\\w+)/, '$2, $1') %}",
        "tagged": "{% $replace($states.input.s, /order-(\\d+)/i, '#$1') %}",
        "dollar": "{% $replace('265USD', /([0-9]+)USD/, '$$$1') %}",
    }, {"s": "Order-12 shipped, order-7 pending"})
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {
        "has": True, "ids": ["12", "7"],
        "first": {"match": "Order-12", "index": 0, "groups": ["Order", "12"]},
        "parts": ["a", "b", "c"], "swapped": "Smith, John",
        "tagged": "#12 shipped, #7 pending", "dollar": "$265"}
    d, events = pass_output(sfn, {"r": "{% $replace('aaa', /x*/, '-') %}"})
    assert (d["status"], d["error"]) == ("FAILED", "States.QueryEvaluationError")
    assert d["cause"].endswith("threw an error during evaluation. "
                               "D1004: Regular expression matches zero length string"), d["cause"]


def test_dates_format_and_parse_with_picture_strings(sfn):
    d, _ = pass_output(sfn, {
        "iso": "{% $fromMillis(1510067274972) %}",
        "picture": "{% $fromMillis(1510067274972, '[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001]Z') %}",
        "zoned": "{% $fromMillis(1510067274972, '[FNn], [D1o] [MNn] [Y] [h]:[m01] [P] [Z]', '-0500') %}",
        "millis": "{% $toMillis('2017-11-07T10:07:54.972-05:00') %}",
        "parsed": "{% $toMillis('07/11/2017 15:07', '[D01]/[M01]/[Y0001] [H01]:[m01]') %}",
        "today": "{% $now('[Y0001]-[M01]-[D01]') = $substring($now(), 0, 10) %}",
    })
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {
        "iso": "2017-11-07T15:07:54.972Z", "picture": "2017-11-07T15:07:54.972Z",
        "zoned": "Tuesday, 7th November 2017 10:07 am -05:00", "millis": 1510067274972,
        "parsed": 1510067220000, "today": True}
    d, _ = pass_output(sfn, {"x": "{% $fromMillis(0, '[Y]-[Q]') %}"})
    assert (d["status"], d["error"]) == ("FAILED", "States.QueryEvaluationError")
    assert d["cause"] == (
        "An error occurred while executing the state 'P' (entered at the event id #2). The JSONata "
        "expression '$fromMillis(0, '[Y]-[Q]')' specified for the field 'Output/x' threw an error "
        "during evaluation. D3132: Unknown component specifier \"Q\" in date/time picture string")


def test_transform_operator_updates_and_deletes_in_a_copy(sfn):
    d, _ = pass_output(sfn, {
        "order": "{% $states.input ~> | items | {'price': price * 2}, 'tmp' | %}",
        "untouched": "{% $states.input.items[0] %}",
    }, {"id": 1, "items": [{"sku": "a", "price": 10, "tmp": 1}, {"sku": "b", "price": 2}]})
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {
        "order": {"id": 1, "items": [{"sku": "a", "price": 20}, {"sku": "b", "price": 4}]},
        "untouched": {"sku": "a", "price": 10, "tmp": 1}}


def test_aws_functions_and_eval_refused(sfn):
    d, _ = pass_output(sfn, {
        "partition": "{% $partition([1, 2, 3, 4, 5], 2) %}",
        "range": "{% $range(0, 10, 5) %}",
        "hash": "{% $hash('abc', 'SHA-256') %}",
        "seeded": "{% $random(7) = $random(7) %}",
        "uuid": "{% $length($uuid()) %}",
        "parse": "{% $parse('{\"a\": [1]}') %}",
    })
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {
        "partition": [[1, 2], [3, 4], [5]], "range": [0, 5, 10],
        "hash": "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "seeded": True, "uuid": 36, "parse": {"a": [1]}}
    d, _ = pass_output(sfn, {"x": "{% $eval('1 + 1') %}"})
    assert (d["status"], d["error"]) == ("FAILED", "States.QueryEvaluationError")
    assert d["cause"].endswith("specified for the field 'Output/x' threw an error during "
                               "evaluation. T1006: Attempted to invoke a non-function"), d["cause"]


MALFORMED = {"QueryLanguage": "JSONata", "StartAt": "Main", "States": {
    "Main": {"Type": "Pass", "Output": {"v": "{% 1 + %}"}, "End": True}}}
MALFORMED_MESSAGE = ("Invalid State Machine Definition: 'INVALID_JSONATA_EXPRESSION: "
                     "Unexpected end of expression at /States/Main/Output/v'")


def test_malformed_jsonata_is_refused_at_create_update_and_validate(sfn):
    before = sfn.list_state_machines()["stateMachines"]
    with pytest.raises(sfn.exceptions.InvalidDefinition) as e:
        sfn.create_state_machine(name=f"bad-{uid()}", definition=json.dumps(MALFORMED),
                                 roleArn=ROLE)
    assert e.value.response["Error"]["Message"] == MALFORMED_MESSAGE
    assert sfn.list_state_machines()["stateMachines"] == before

    good = {"QueryLanguage": "JSONata", "StartAt": "Main", "States": {
        "Main": {"Type": "Pass", "Output": "{% $states.input %}", "End": True}}}
    arn = sfn.create_state_machine(name=f"ok-{uid()}", definition=json.dumps(good),
                                   roleArn=ROLE)["stateMachineArn"]
    unclosed = {"QueryLanguage": "JSONata", "StartAt": "Main", "States": {
        "Main": {"Type": "Pass", "Output": "{% $states.input.a[1,2) %}", "End": True}}}
    with pytest.raises(sfn.exceptions.InvalidDefinition) as e:
        sfn.update_state_machine(stateMachineArn=arn, definition=json.dumps(unclosed))
    assert e.value.response["Error"]["Message"] == (
        "Invalid State Machine Definition: 'INVALID_JSONATA_EXPRESSION: "
        "Expected \"]\", got \",\" at /States/Main/Output'")
    assert json.loads(sfn.describe_state_machine(stateMachineArn=arn)["definition"]) == good

    answer = sfn.validate_state_machine_definition(definition=json.dumps(MALFORMED))
    assert answer["result"] == "FAIL"
    assert answer["diagnostics"] == [{
        "severity": "ERROR", "code": "INVALID_JSONATA_EXPRESSION",
        "message": "Unexpected end of expression", "location": "/States/Main/Output/v"}]


def test_cloudformation_refuses_a_malformed_jsonata_machine(cumulo, sfn, tmp_path):
    stack = f"jsonata-bad-{uid()}"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"Resources": {"M": {
        "Type": "AWS::StepFunctions::StateMachine",
        "Properties": {"RoleArn": ROLE, "Definition": MALFORMED}}}}))
    before = sfn.list_state_machines()["stateMachines"]
    proc = cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file",
                      str(path), check=False)
    assert proc.returncode != 0
    cfn = cumulo.client("cloudformation")
    events = cfn.describe_stack_events(StackName=stack)["StackEvents"]
    reasons = [e.get("ResourceStatusReason", "") for e in events
               if e["ResourceStatus"] == "CREATE_FAILED"]
    assert any(MALFORMED_MESSAGE in r for r in reasons), reasons
    assert sfn.list_state_machines()["stateMachines"] == before
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)


def test_variables_survive_a_restart_mid_execution(fresh_server):
    """A Wait between the state that assigns and the one that reads; the server is killed
    during the Wait. Both query languages' variables are in the resumed execution's scope."""
    server = fresh_server.start()
    sfn = server.client("stepfunctions")
    jsonata = {"QueryLanguage": "JSONata", "StartAt": "Set", "States": {
        "Set": {"Type": "Pass", "Assign": {"who": "{% $states.input.who %}", "n": 41},
                "Next": "Nap"},
        "Nap": {"Type": "Wait", "Seconds": 3, "Next": "Use"},
        "Use": {"Type": "Pass", "Output": {"who": "{% $who %}", "n": "{% $n + 1 %}"},
                "End": True}}}
    jsonpath = {"StartAt": "Set", "States": {
        "Set": {"Type": "Pass", "Assign": {"who.$": "$.who", "n": 41}, "Next": "Nap"},
        "Nap": {"Type": "Wait", "Seconds": 3, "Next": "Use"},
        "Use": {"Type": "Pass", "Parameters": {"who.$": "$who", "n.$": "States.MathAdd($n, 1)"},
                "End": True}}}
    runs = []
    for definition in (jsonata, jsonpath):
        arn = sfn.create_state_machine(name=f"vars-{uid()}", definition=json.dumps(definition),
                                       roleArn=ROLE)["stateMachineArn"]
        runs.append(sfn.start_execution(stateMachineArn=arn, input='{"who": "ann"}')["executionArn"])
    for ex in runs:
        deadline = time.time() + 5
        while not any(e["type"] == "WaitStateEntered" for e in history(sfn, ex)):
            assert time.time() < deadline
            time.sleep(0.05)
    server.kill9()
    server.start()
    sfn = server.client("stepfunctions")
    for ex in runs:
        d = wait_done(sfn, ex)
        assert d["status"] == "SUCCEEDED", d
        assert json.loads(d["output"]) == {"who": "ann", "n": 42}


def test_order_by_and_grouping(sfn):
    d, _ = pass_output(sfn, {
        "cheapest_first": "{% $states.input.items^(price).sku %}",
        "by_cat": "{% $states.input.items{cat: $sum(price)} %}",
    }, {"items": [{"sku": "a", "cat": "x", "price": 5}, {"sku": "b", "cat": "y", "price": 1},
                  {"sku": "c", "cat": "x", "price": 3}]})
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {"cheapest_first": ["b", "c", "a"],
                                       "by_cat": {"x": 8, "y": 1}}


def test_redrive_keeps_the_variables_of_the_states_that_succeeded(sfn):
    definition = {"QueryLanguage": "JSONata", "StartAt": "Set", "States": {
        "Set": {"Type": "Pass", "Assign": {"who": "{% $states.input.who %}"}, "Next": "Use"},
        "Use": {"Type": "Pass", "End": True, "Output": (
            "{% $states.context.Execution.RedriveCount = 0 ? $error('first attempt') "
            ": {'who': $who} %}")}}}
    d, _ = run(sfn, definition, {"who": "ann"})
    assert (d["status"], d["error"]) == ("FAILED", "States.QueryEvaluationError")
    assert d["cause"].endswith("threw an error during evaluation. D3137: first attempt"), d["cause"]
    sfn.redrive_execution(executionArn=d["executionArn"])
    d = wait_done(sfn, d["executionArn"])
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {"who": "ann"}


def test_number_pictures_and_descendants(sfn):
    d, _ = pass_output(sfn, {
        "money": "{% $formatNumber($states.input.total, '#,##0.00') %}",
        "euro": "{% $formatNumber($states.input.total, '#.##0,00', "
                "{'decimal-separator': ',', 'grouping-separator': '.'}) %}",
        "padded": "{% $formatInteger(7, '000') %}",
        "back": "{% $parseInteger('1,234', '#,##0') %}",
        "ids": "{% $states.input.**.id %}",
    }, {"total": 1234.5, "a": {"id": 1, "b": [{"id": 2}]}})
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {"money": "1,234.50", "euro": "1.234,50",
                                       "padded": "007", "back": 1234, "ids": [1, 2]}


ACCOUNT = {"Account": {"Account Name": "Firefly", "Order": [
    {"OrderID": "order103", "Product": [{"Product Name": "Bowler Hat", "Quantity": 2},
                                        {"Product Name": "Trilby hat", "Quantity": 1}]},
    {"OrderID": "order104", "Product": [{"Product Name": "Cloak", "Quantity": 1}]}]}}
LIBRARY = {"library": {
    "books": [{"title": "SICP", "authors": ["Abelson", "Sussman"], "isbn": "1"},
              {"title": "K&R", "authors": ["Kernighan", "Richie"], "isbn": "2"},
              {"title": "AWK", "authors": ["Aho", "Kernighan", "Weinberger"], "isbn": "3"}],
    "loans": [{"customer": "c1", "isbn": "1"}, {"customer": "c2", "isbn": "3"},
              {"customer": "c2", "isbn": "1"}],
    "customers": [{"id": "c1", "name": "Joe"}, {"id": "c2", "name": "Jason"}]}}


def test_parent_operator_and_positional_and_context_bindings(sfn):
    d, _ = pass_output(sfn, {
        "products": "{% $states.input.Account.Order.Product.{'p': `Product Name`, "
                    "'order': %.OrderID, 'account': %.%.`Account Name`} %}",
        "of104": "{% $states.input.Account.Order.Product[%.OrderID = 'order104']"
                 ".`Product Name` %}",
        "via_block": "{% $states.input.Account.(Order.Product).%.OrderID %}",
    }, ACCOUNT)
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {
        "products": [{"p": "Bowler Hat", "order": "order103", "account": "Firefly"},
                     {"p": "Trilby hat", "order": "order103", "account": "Firefly"},
                     {"p": "Cloak", "order": "order104", "account": "Firefly"}],
        "of104": "Cloak", "via_block": ["order103", "order103", "order104"]}
    d, _ = pass_output(sfn, {
        "kernighan": "{% $states.input.library.books#$i['Kernighan' in authors]"
                     ".{'title': title, 'index': $i} %}",
        "loans": "{% $states.input.library.loans@$l.books@$b[$l.isbn = $b.isbn]"
                 ".customers[$l.customer = id].{'who': name, 'book': $b.title} %}",
        "by_customer": "{% $states.input.library.loans@$l.books@$b[$l.isbn = $b.isbn]"
                       ".customers[$l.customer = id]{name: $b.title} %}",
        "ranked": "{% $states.input.library.books^(>title)#$r.(title & ':' & $r) %}",
    }, LIBRARY)
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {
        "kernighan": [{"title": "K&R", "index": 1}, {"title": "AWK", "index": 2}],
        "loans": [{"who": "Joe", "book": "SICP"}, {"who": "Jason", "book": "AWK"},
                  {"who": "Jason", "book": "SICP"}],
        "by_customer": {"Joe": "SICP", "Jason": ["AWK", "SICP"]},
        "ranked": ["SICP:0", "K&R:1", "AWK:2"]}


def test_a_parent_with_nothing_above_it_is_refused_at_create(sfn):
    bad = {"QueryLanguage": "JSONata", "StartAt": "P", "States": {
        "P": {"Type": "Pass", "Output": {"o": "{% $states.input.{'x': %.%.y} %}"}, "End": True}}}
    before = sfn.list_state_machines()["stateMachines"]
    with pytest.raises(sfn.exceptions.InvalidDefinition) as e:
        sfn.create_state_machine(name=f"bad-{uid()}", definition=json.dumps(bad), roleArn=ROLE)
    assert e.value.response["Error"]["Message"] == (
        "Invalid State Machine Definition: 'INVALID_JSONATA_EXPRESSION: The object representing "
        "the 'parent' cannot be derived from this expression at /States/P/Output/o'")
    assert sfn.list_state_machines()["stateMachines"] == before


def test_top_level_context_references_are_refused_as_unsupported(sfn):
    bad = {"QueryLanguage": "JSONata", "StartAt": "E", "States": {
        "E": {"Type": "Pass", "End": True, "Output": {
            "v": "{% phone %}", "w": "{% $ %}",
            "fine": "{% $states.input.items[price > 1].name %}"}}}}
    before = sfn.list_state_machines()["stateMachines"]
    with pytest.raises(sfn.exceptions.InvalidDefinition) as e:
        sfn.create_state_machine(name=f"bad-{uid()}", definition=json.dumps(bad), roleArn=ROLE)
    assert e.value.response["Error"]["Message"].startswith(
        "Invalid State Machine Definition: 'UNSUPPORTED_JSONATA_EXPRESSION: Reference to 'phone' "
        "at the top level is not supported. at /States/E/Output/v'"), e.value.response
    assert sfn.list_state_machines()["stateMachines"] == before
    good = {"QueryLanguage": "JSONata", "StartAt": "E", "States": {
        "E": {"Type": "Pass", "Output": "{% $states.input.phone %}", "End": True}}}
    arn = sfn.create_state_machine(name=f"ok-{uid()}", definition=json.dumps(good),
                                   roleArn=ROLE)["stateMachineArn"]
    with pytest.raises(sfn.exceptions.InvalidDefinition):
        sfn.update_state_machine(stateMachineArn=arn, definition=json.dumps(bad))
    assert json.loads(sfn.describe_state_machine(stateMachineArn=arn)["definition"]) == good
    answer = sfn.validate_state_machine_definition(definition=json.dumps(bad))
    assert answer["result"] == "FAIL"
    assert answer["diagnostics"] == [
        {"severity": "ERROR", "code": "UNSUPPORTED_JSONATA_EXPRESSION",
         "message": "Reference to 'phone' at the top level is not supported.",
         "location": "/States/E/Output/v"},
        {"severity": "ERROR", "code": "UNSUPPORTED_JSONATA_EXPRESSION",
         "message": "Reference to '$' at the top level is not supported.",
         "location": "/States/E/Output/w"}]


def test_parent_through_nested_parentheses_and_dates_in_roman_numerals_and_words(sfn):
    """Answers as jsonata-js 2.x gives them (the Rust tests' table, asl/testdata/jsonata_js.json)."""
    d, _ = pass_output(sfn, {
        "double": "{% $states.input.Account.((Order.Product)).%.OrderID %}",
        "scoped": "{% $states.input.Account.(($a := 1; ($b := 2; Order.Product))).%.OrderID %}",
        "account": "{% $states.input.Account.((Order)).Product.%.%.`Account Name` %}",
        "roman": "{% $toMillis('MMXVII-XI-VII', '[YI]-[MI]-[DI]') %}",
        "words": "{% $toMillis('Seventh of November, Two Thousand and Seventeen', "
                 "'[DWwo] of [MNn], [YWw]') %}",
        "width": "{% $toMillis('1999-11-07', '[Y,*-4]-[M]-[D]') %}",
        "name": "{% $toMillis('2017 November 7', '[Y] [MNn] [D]') %}",
    }, ACCOUNT)
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {
        "double": ["order103", "order103", "order104"],
        "scoped": ["order103", "order103", "order104"],
        "account": ["Firefly", "Firefly", "Firefly"],
        "roman": 1510012800000, "words": 1510012800000, "width": 941932800000,
        "name": 1510012800000}
    # A lower-case numeral under [YI] is NaN to jsonata: an error naming the marker here.
    d, _ = pass_output(sfn, {"x": "{% $toMillis('mmxvii', '[YI]') %}"})
    assert (d["status"], d["error"]) == ("FAILED", "States.QueryEvaluationError")
    assert "[YI]" in d["cause"] and "NaN" in d["cause"], d["cause"]


def test_top_level_wildcards_are_refused_as_unsupported(sfn):
    bad = {"QueryLanguage": "JSONata", "StartAt": "E", "States": {
        "E": {"Type": "Pass", "End": True, "Output": {
            "a": "{% * %}", "b": "{% **.id %}", "fine": "{% $states.input.* %}"}}}}
    answer = sfn.validate_state_machine_definition(definition=json.dumps(bad))
    assert answer["result"] == "FAIL"
    assert answer["diagnostics"] == [
        {"severity": "ERROR", "code": "UNSUPPORTED_JSONATA_EXPRESSION",
         "message": f"Reference to '{w}' at the top level is not supported.",
         "location": f"/States/E/Output/{field}"} for w, field in (("*", "a"), ("**", "b"))]
    with pytest.raises(sfn.exceptions.InvalidDefinition):
        sfn.create_state_machine(name=f"bad-{uid()}", definition=json.dumps(bad), roleArn=ROLE)


def test_exponents_and_numbers_in_words(sfn):
    d, _ = pass_output(sfn, {
        "exp": "{% $formatNumber(1234.5678, '00.000e0') %}",
        "small": "{% $formatNumber(0.234, '0.0e0') %}",
        "words": "{% $formatInteger(123, 'w') %}",
        "upper": "{% $formatInteger(123, 'W') %}",
        "title": "{% $formatInteger(1234567, 'Ww') %}",
        "ordinal": "{% $formatInteger(21, 'w;o') %}",
        "parsed": "{% $parseInteger('one hundred and twenty-three', 'w') %}",
        "weeks": "{% $fromMillis(1510067274972, 'week [w] of [xNn], [X]-W[W01], [Dwo]') %}",
    })
    assert d["status"] == "SUCCEEDED", d
    assert json.loads(d["output"]) == {
        "exp": "12.346e2", "small": "2.3e-1", "words": "one hundred and twenty-three",
        "upper": "ONE HUNDRED AND TWENTY-THREE",
        "title": "One Million, Two Hundred and Thirty-Four Thousand, Five Hundred and Sixty-Seven",
        "ordinal": "twenty-first", "parsed": 123,
        "weeks": "week 2 of November, 2017-W45, seventh"}
