//! The interpreter held to histories AWS recorded (`../shared/aws-recordings/stepfunctions`):
//! definitions written to the recordings' observed behaviour, event types in order and the
//! execution's output or error/cause compared with what AWS answered.

use super::run::{Resource, run_states};
use super::{Exec, Failure, Integrations, Lane};
use serde_json::{Value, json};
use std::sync::Arc;

struct NoTasks;

#[async_trait::async_trait]
impl Integrations for NoTasks {
    async fn call(
        &self,
        _: &Exec,
        _: &Resource,
        _: Value,
        _: Option<&str>,
    ) -> Result<Value, Failure> {
        Err(Failure::new(
            "States.TaskFailed",
            "no integrations in this test",
        ))
    }
    async fn await_token(&self, _: &str, _: Option<u64>) -> Result<Value, Failure> {
        Err(Failure::new("States.TaskFailed", "no tokens in this test"))
    }
    fn new_token(&self, _: &Exec) -> String {
        "token".into()
    }
}

fn recording(file: &str, test: &str) -> Value {
    let path = format!(
        "{}/../../../shared/aws-recordings/stepfunctions/v2/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let all: Value = serde_json::from_str(&text).unwrap();
    let key = all
        .as_object()
        .unwrap()
        .keys()
        .find(|k| k.ends_with(test))
        .unwrap_or_else(|| panic!("{test} not in {file}"))
        .clone();
    all[key]["recorded-content"].clone()
}

/// Every Task answers a result over the payload quota (AWS's recordings call a Lambda that
/// returns a large string).
struct LargeResults;

#[async_trait::async_trait]
impl Integrations for LargeResults {
    async fn call(
        &self,
        _: &Exec,
        _: &Resource,
        _: Value,
        _: Option<&str>,
    ) -> Result<Value, Failure> {
        Ok(json!({"Payload": "𐍈".repeat(257 * 1024 / 4)}))
    }
    async fn await_token(&self, _: &str, _: Option<u64>) -> Result<Value, Failure> {
        Err(Failure::new("States.TaskFailed", "no tokens in this test"))
    }
    fn new_token(&self, _: &Exec) -> String {
        "token".into()
    }
}

/// Runs `def` on `input`; the event types and the execution's end as ExecutionSucceeded or
/// ExecutionFailed would record them.
async fn run(def: Value, input: Value) -> (Vec<String>, Result<Value, Failure>) {
    run_with(def, input, Arc::new(NoTasks)).await
}

pub(super) async fn run_with(
    def: Value,
    input: Value,
    integrations: Arc<dyn Integrations>,
) -> (Vec<String>, Result<Value, Failure>) {
    let exec = Arc::new(Exec::new(
        json!({"Execution": {"Name": "n"}}),
        "us-east-1".into(),
        Vec::new(),
        Box::new(|_, _| {}),
        integrations,
    ));
    let lane = Lane::default();
    exec.emit(&lane, "ExecutionStarted", None);
    let start = def["StartAt"].as_str().unwrap().to_string();
    let out = run_states(&exec, &def, start, input, &lane, true).await;
    let mut kinds: Vec<String> = exec.history().into_iter().map(|e| e.kind).collect();
    kinds.push(
        if out.is_ok() {
            "ExecutionSucceeded"
        } else {
            "ExecutionFailed"
        }
        .into(),
    );
    (kinds, out)
}

fn recorded_kinds(rec: &Value) -> Vec<String> {
    rec["get_execution_history"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["type"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn fail_state_as_recorded() {
    let rec = recording("base/test_base.snapshot.json", "::test_state_fail");
    let def = json!({"StartAt": "FailState", "States": {"FailState": {"Type": "Fail",
        "Error": "SomeFailure", "Cause": "This state machines raises a 'SomeFailure' failure."}}});
    let (kinds, out) = run(def, json!({})).await;
    assert_eq!(kinds, recorded_kinds(&rec));
    let d = &rec["describe_execution"];
    assert_eq!(
        out.unwrap_err(),
        Failure::new(d["error"].as_str().unwrap(), d["cause"].as_str().unwrap())
    );
}

#[tokio::test]
async fn fail_state_intrinsic_cause_as_recorded() {
    let rec = recording(
        "base/test_base.snapshot.json",
        "::test_state_fail_intrinsic",
    );
    let def = json!({"StartAt": "FailState", "States": {"FailState": {"Type": "Fail",
        "ErrorPath": "$.Error",
        "CausePath": "States.Format('This is a custom error message for {}, caused by {}.', $.Error, $.Cause)"}}});
    let input = json!({"Error": "error string", "Cause": "cause string"});
    let (kinds, out) = run(def, input).await;
    assert_eq!(kinds, recorded_kinds(&rec));
    let end = &rec["get_execution_history"]["events"][2]["executionFailedEventDetails"];
    assert_eq!(
        out.unwrap_err(),
        Failure::new(
            end["error"].as_str().unwrap(),
            end["cause"].as_str().unwrap()
        )
    );
}

#[tokio::test]
async fn legacy_map_as_recorded() {
    let rec = recording(
        "scenarios/test_base_scenarios.snapshot.json",
        "::test_map_state_legacy",
    );
    let def = json!({"StartAt": "StartState", "States": {
        "StartState": {"Type": "Pass", "Result": {"arr": [1, "Hello", {}, null, 3.3, 3, 4, 5]}, "Next": "MapState"},
        "MapState": {"Type": "Map", "ItemsPath": "$.arr", "ResultPath": null,
            "Iterator": {"StartAt": "HandleItem", "States": {"HandleItem": {"Type": "Pass", "End": true}}},
            "Next": "Final"},
        "Final": {"Type": "Pass", "End": true}}});
    let (kinds, out) = run(def, json!({})).await;
    assert_eq!(kinds, recorded_kinds(&rec));
    let events = rec["get_execution_history"]["events"].as_array().unwrap();
    let end = &events[events.len() - 1]["executionSucceededEventDetails"]["output"];
    assert_eq!(out.unwrap(), *end);
}

/// The recorder dropped `ParallelStateSucceeded` (its event-id gap shows it); AWS emits it
/// between the branches' last event and `ParallelStateExited`, and so does the interpreter.
#[tokio::test]
async fn parallel_as_recorded_with_its_succeeded_event() {
    let rec = recording(
        "scenarios/test_base_scenarios.snapshot.json",
        "::test_parallel_state",
    );
    let pass = |next: Option<&str>| match next {
        Some(n) => json!({"Type": "Pass", "Next": n}),
        None => json!({"Type": "Pass", "End": true}),
    };
    let def = json!({"StartAt": "LoadInput", "States": {
        "LoadInput": {"Type": "Pass", "Result": [1, 2, 3, 4], "Next": "ParallelState"},
        "ParallelState": {"Type": "Parallel", "End": true, "Branches": [
            {"StartAt": "Branch1", "States": {"Branch1": pass(None)}},
            {"StartAt": "Branch21", "States": {"Branch21": pass(Some("Branch22")), "Branch22": pass(None)}},
            {"StartAt": "Branch31", "States": {"Branch31": pass(Some("Branch32")),
                "Branch32": pass(Some("Branch33")), "Branch33": pass(None)}}]}}});
    let (mut kinds, out) = run(def, json!({})).await;
    let mut want = recorded_kinds(&rec);
    let exited = want
        .iter()
        .position(|k| k == "ParallelStateExited")
        .unwrap();
    want.insert(exited, "ParallelStateSucceeded".into());
    assert_eq!(kinds[..5], want[..5]);
    assert_eq!(kinds[kinds.len() - 3..], want[want.len() - 3..]);
    kinds.sort();
    want.sort();
    assert_eq!(kinds, want);
    let events = rec["get_execution_history"]["events"].as_array().unwrap();
    let end = &events[events.len() - 1]["executionSucceededEventDetails"]["output"];
    assert_eq!(out.unwrap().to_string(), end.as_str().unwrap());
}

/// ValidateStateMachineDefinition's diagnostics as AWS answered them
/// (`test_sfn_api_validation`): code, message and location of each.
#[test]
fn validation_diagnostics_as_recorded() {
    let all: Value = serde_json::from_str(
        &std::fs::read_to_string(format!(
            "{}/../../../shared/aws-recordings/stepfunctions/v2/test_sfn_api_validation.snapshot.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap(),
    )
    .unwrap();
    let pass = r#"{"StartAt": "S", "States": {"S": {"Type": "Pass", "End": true}}}"#;
    let cases = [
        ("standard[VALID_BASE_PASS]", pass, false),
        ("express[VALID_BASE_PASS]", pass, true),
        ("not_a_definition[EMPTY_STRING]", "", false),
        ("not_a_definition[EMPTY_DICT]", "{}", false),
        (
            "standard[INVALID_BASE_NO_STARTAT]",
            r#"{"States": {"S": {"Type": "Pass", "End": true}}}"#,
            false,
        ),
        (
            "express[ILLEGAL_WFTT]",
            r#"{"StartAt": "SendMessageWithWait", "States": {"SendMessageWithWait": {"Type": "Task",
                "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken", "End": true}}}"#,
            true,
        ),
        (
            "standard[INVALID_DOWNGRADE_QUERY_LANGUAGE]",
            r#"{"QueryLanguage": "JSONata", "StartAt": "Pass", "States": {"Pass": {"Type": "Pass",
                "QueryLanguage": "JSONPath", "End": true}}}"#,
            false,
        ),
    ];
    for (test, def, express) in cases {
        let key = all
            .as_object()
            .unwrap()
            .keys()
            .find(|k| k.ends_with(&format!("_{test}")))
            .unwrap_or_else(|| panic!("{test}"));
        let want = &all[key]["recorded-content"]["validation_response"]["diagnostics"];
        let got: Vec<Value> = super::validate::check(def, express)
            .into_iter()
            .map(|d| {
                let mut v = json!({"code": d.code, "message": d.message, "severity": "ERROR"});
                if let Some(l) = d.location {
                    v["location"] = json!(l);
                }
                v
            })
            .collect();
        assert_eq!(Value::Array(got), *want, "{test}");
    }
}

/// A failing iteration ends the Map: no later iteration starts, MapStateFailed carries no
/// details, and the execution fails with the iteration's error (`test_map_state_break_condition`).
#[tokio::test]
async fn map_break_as_recorded() {
    let rec = recording(
        "scenarios/test_base_scenarios.snapshot.json",
        "::test_map_state_break_condition",
    );
    let def = json!({"StartAt": "StartState", "States": {
        "StartState": {"Type": "Pass", "Result": {"arr": [1, "Hello", {}, 3.3, 3, 4, 5]}, "Next": "MapState"},
        "MapState": {"Type": "Map", "ItemsPath": "$.arr", "MaxConcurrency": 1, "End": true,
            "Iterator": {"StartAt": "Equals3", "States": {
                "Equals3": {"Type": "Choice", "Choices": [
                    {"Variable": "$", "NumericEquals": 3, "Next": "Break"}], "Default": "Pass"},
                "Break": {"Type": "Fail", "Error": "SomeFailure",
                    "Cause": "This state machines raises a 'SomeFailure' failure."},
                "Pass": {"Type": "Pass", "End": true}}}}}});
    let (kinds, out) = run(def, json!({})).await;
    assert_eq!(kinds, recorded_kinds(&rec));
    let events = rec["get_execution_history"]["events"].as_array().unwrap();
    let end = &events[events.len() - 1]["executionFailedEventDetails"];
    assert_eq!(
        out.unwrap_err(),
        Failure::new(
            end["error"].as_str().unwrap(),
            end["cause"].as_str().unwrap()
        )
    );
}

#[tokio::test]
async fn jsonata_catch_error_output_as_recorded() {
    let rec = recording(
        "states_variables/test_error_output.snapshot.json",
        "[TASK_CATCH_ERROR_OUTPUT]",
    );
    let def = json!({"QueryLanguage": "JSONata", "StartAt": "Task", "States": {
        "Task": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
            "Arguments": {"FunctionName": "f", "Payload": {"foo": "foobar"}},
            "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Fallback",
                "Output": {"stateInput": "{% $states.input %}",
                           "stateError": "{% $states.errorOutput %}"}}],
            "End": true},
        "Fallback": {"Type": "Pass", "Output": {"error": "{% $states.input %}"}, "End": true}}});
    let (kinds, out) = run(def, json!({"inputData": "dummy"})).await;
    assert_eq!(kinds, recorded_kinds(&rec));
    let out = out.unwrap();
    assert_eq!(out["error"]["stateInput"], json!({"inputData": "dummy"}));
    assert_eq!(out["error"]["stateError"]["Error"], "States.TaskFailed");
}

#[tokio::test]
async fn jsonata_undefined_output_fails_with_evaluation_failed_as_recorded() {
    let rec = recording(
        "states_variables/test_error_output.snapshot.json",
        "[MAP_CATCH_ERROR_OUTPUT_WITH_RETRY]",
    );
    let events = rec["get_execution_history"]["events"].as_array().unwrap();
    let failed = events
        .iter()
        .find(|e| e["type"] == "EvaluationFailed")
        .expect("recorded EvaluationFailed");
    let def = json!({"QueryLanguage": "JSONata", "StartAt": "Task", "States": {
        "Task": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
            "Arguments": {"FunctionName": "f", "Payload": {"foo": "foobar"}},
            "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Fallback",
                "Output": "{% $states.input %}"}],
            "End": true},
        "Fallback": {"Type": "Pass", "Output": {"error": "{% $stateError %}"}, "End": true}}});
    let (kinds, out) = run(def, json!({"inputData": "dummy"})).await;
    let f = out.unwrap_err();
    let d = &failed["evaluationFailedEventDetails"];
    assert_eq!(f.error, d["error"].as_str().unwrap());
    assert_eq!(
        f.cause,
        d["cause"]
            .as_str()
            .unwrap()
            .replace("event id #13", "event id #7")
    );
    assert_eq!(
        &kinds[kinds.len() - 2..],
        ["EvaluationFailed", "ExecutionFailed"]
    );
}

#[tokio::test]
async fn variables_assigned_in_jsonpath_are_read_and_scoped_as_aws_does() {
    let rec = recording(
        "assign/test_assign_base.snapshot.json",
        "[BASE_CONSTANT_LITERALS]",
    );
    let exited = &rec["get_execution_history"]["events"][2]["stateExitedEventDetails"];
    assert_eq!(exited["assignedVariables"]["constant_int"], "0");
    let exec = Arc::new(Exec::new(
        json!({"Execution": {"Name": "n"}}),
        "us-east-1".into(),
        Vec::new(),
        Box::new(|_, _| {}),
        Arc::new(NoTasks),
    ));
    let def = json!({"StartAt": "Set", "States": {
        "Set": {"Type": "Pass", "Assign": {"constant_int": 0, "greeting.$": "$.hello",
            "items": [1, 2]}, "Next": "Use"},
        "Use": {"Type": "Pass", "Parameters": {"g.$": "$greeting", "first.$": "$items[0]"},
            "Next": "Each"},
        "Each": {"Type": "Map", "ItemsPath": "$items", "ItemProcessor": {"StartAt": "Inner",
            "States": {"Inner": {"Type": "Pass", "Assign": {"greeting": "inner"},
                "Parameters": {"outer.$": "$greeting"}, "End": true}}}, "ItemsPath": "$$.Execution.Input.list",
            "ResultPath": "$.each", "Next": "After"},
        "After": {"Type": "Pass", "Parameters": {"g.$": "$greeting", "each.$": "$.each"},
            "End": true}}});
    let lane = Lane::default();
    let mut exec_ctx = exec.context.clone();
    exec_ctx["Execution"]["Input"] = json!({"list": [1, 2]});
    let exec = Arc::new(Exec::new(
        exec_ctx,
        "us-east-1".into(),
        Vec::new(),
        Box::new(|_, _| {}),
        Arc::new(NoTasks),
    ));
    let out = run_states(
        &exec,
        &def,
        "Set".into(),
        json!({"hello": "hi"}),
        &lane,
        true,
    )
    .await
    .unwrap();
    assert_eq!(
        out,
        json!({"g": "hi", "each": [{"outer": "hi"}, {"outer": "hi"}]})
    );
    let history = exec.history();
    let set = history
        .iter()
        .find(|e| e.kind == "PassStateExited")
        .and_then(|e| e.details.clone())
        .unwrap()
        .1;
    assert_eq!(
        set["assignedVariables"]["constant_int"],
        exited["assignedVariables"]["constant_int"]
    );
    assert_eq!(set["assignedVariables"]["greeting"], "\"hi\"");
    assert_eq!(set["assignedVariablesDetails"], json!({"truncated": false}));
}

#[tokio::test]
async fn map_inner_scope_reads_outer_variables_as_recorded() {
    let rec = recording("assign/test_assign_base.snapshot.json", "[BASE_SCOPE_MAP]");
    let def = json!({"StartAt": "State0", "States": {
        "State0": {"Type": "Pass", "Assign": {"x": 42, "items": [1, 2, 3]}, "Next": "State1"},
        "State1": {"Type": "Map", "ItemsPath": "$items", "Next": "State2",
            "ItemProcessor": {"StartAt": "Inner", "States": {"Inner": {"Type": "Pass",
                "Assign": {"innerX.$": "$x"}, "End": true}}}},
        "State2": {"Type": "Pass", "Assign": {"final.$": "$x"}, "End": true}}});
    let exec = Arc::new(Exec::new(
        json!({"Execution": {"Name": "n"}}),
        "us-east-1".into(),
        Vec::new(),
        Box::new(|_, _| {}),
        Arc::new(NoTasks),
    ));
    let lane = Lane::default();
    exec.emit(&lane, "ExecutionStarted", None);
    let input = json!({"input_value": "input_value_literal"});
    let out = run_states(&exec, &def, "State0".into(), input, &lane, true).await;
    assert_eq!(out, Ok(json!([1, 2, 3])));
    let ours: Vec<(String, Value)> = exec
        .history()
        .into_iter()
        .map(|e| {
            let assigned = e
                .details
                .map(|(_, d)| d["assignedVariables"].clone())
                .unwrap_or(Value::Null);
            (e.kind, assigned)
        })
        .collect();
    let recorded: Vec<(String, Value)> = rec["get_execution_history"]["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] != "ExecutionSucceeded")
        .map(|e| {
            let assigned = e["stateExitedEventDetails"]["assignedVariables"].clone();
            (e["type"].as_str().unwrap().to_string(), assigned)
        })
        .collect();
    assert_eq!(ours, recorded);
}

#[tokio::test]
async fn jsonata_map_fields_from_expressions_as_recorded() {
    for (case, field, value) in [
        ("[MAX_CONCURRENCY]", "MaxConcurrency", "{% 1 %}"),
        (
            "[TOLERATED_FAILURE_COUNT]",
            "ToleratedFailureCount",
            "{% $states.input.n %}",
        ),
        (
            "[TOLERATED_FAILURE_PERCENTAGE]",
            "ToleratedFailurePercentage",
            "{% 50 %}",
        ),
    ] {
        let rec = recording(
            "evaluate_jsonata/test_base_evaluate_expressions.snapshot.json",
            &format!("::test_base_map{case}"),
        );
        let mut map = json!({"Type": "Map", "Items": "{% [1] %}", "End": true,
            "ItemProcessor": {"StartAt": "Process",
                "States": {"Process": {"Type": "Pass", "End": true}}}});
        map[field] = json!(value);
        let def = json!({"QueryLanguage": "JSONata", "StartAt": "Start", "States": {"Start": map}});
        let (kinds, out) = run(def, json!({"n": 1})).await;
        assert_eq!(kinds, recorded_kinds(&rec), "{case}");
        assert_eq!(out, Ok(json!([1])), "{case}");
    }
}

#[tokio::test]
async fn intrinsic_functions_read_variables() {
    let def = json!({"StartAt": "Set", "States": {
        "Set": {"Type": "Pass", "Assign": {"name": "Ann", "xs": [1, 2]}, "Next": "Use"},
        "Use": {"Type": "Pass", "End": true, "Parameters": {
            "text.$": "States.Format('hi {} of {}', $name, States.ArrayLength($xs))"}}}});
    let (_, out) = run(def, json!({})).await;
    assert_eq!(out, Ok(json!({"text": "hi Ann of 2"})));
}

#[tokio::test]
async fn jsonata_items_of_the_wrong_type_fail_as_recorded() {
    for (case, items) in [
        ("function", "$fn := function($x){$x}"),
        ("number", "1"),
        ("string", "'string'"),
        ("boolean", "true"),
        ("null", "null"),
        ("object", "{'foo': 'bar'}"),
    ] {
        let rec = recording(
            "scenarios/test_base_scenarios.snapshot.json",
            &format!("::test_map_state_items_eval_jsonata_fail[{case}]"),
        );
        let def = json!({"QueryLanguage": "JSONata", "StartAt": "MapIterateState", "States": {
            "MapIterateState": {"Type": "Map", "Items": format!("{{% {items} %}}"), "End": true,
                "ItemProcessor": {"StartAt": "Pass",
                    "States": {"Pass": {"Type": "Pass", "End": true}}}}}});
        let (kinds, out) = run(def, json!({})).await;
        assert_eq!(kinds, recorded_kinds(&rec), "{case}");
        let failed = &rec["get_execution_history"]["events"][4]["executionFailedEventDetails"];
        let f = out.unwrap_err();
        assert_eq!(f.error, failed["error"].as_str().unwrap(), "{case}");
        assert_eq!(f.cause, failed["cause"].as_str().unwrap(), "{case}");
    }
}

/// A Task's result over the payload quota fails the Task (TaskFailed/LambdaFunctionFailed)
/// with States.DataLimitExceeded naming the resource, caught by its own name or by
/// `States.ALL`, as AWS recorded (its documentation says States.ALL does not catch it).
#[tokio::test]
async fn oversized_task_results_fail_the_task_as_recorded() {
    let arn = "arn:aws:lambda:us-east-1:111111111111:function:f";
    for (test, resource, by_name) in [
        (
            "::test_service_task_lambada_data_limit_exceeded_on_large_utf8_response",
            "arn:aws:states:::lambda:invoke",
            true,
        ),
        (
            "::test_service_task_lambada_catch_state_all_data_limit_exceeded_on_large_utf8_response",
            "arn:aws:states:::lambda:invoke",
            false,
        ),
        (
            "::test_task_lambda_data_limit_exceeded_on_large_utf8_response",
            arn,
            true,
        ),
        (
            "::test_task_lambda_catch_state_all_data_limit_exceeded_on_large_utf8_response",
            arn,
            false,
        ),
    ] {
        let rec = recording("error_handling/test_states_errors.snapshot.json", test);
        let mut catch = vec![json!({"ErrorEquals": ["States.ALL"], "Next": "HandleGeneralError"})];
        if by_name {
            catch.insert(
                0,
                json!({"ErrorEquals": ["States.DataLimitExceeded"], "Next": "HandleDataLimitExceeded"}),
            );
        }
        let def = json!({"StartAt": "InvokeLambda", "States": {
            "InvokeLambda": {"Type": "Task", "Resource": resource,
                "Parameters": {"FunctionName.$": "$.FunctionName", "Payload.$": "$.Payload"},
                "Catch": catch, "Next": "ProcessResult"},
            "ProcessResult": {"Type": "Pass", "End": true},
            "HandleDataLimitExceeded": {"Type": "Pass", "End": true},
            "HandleGeneralError": {"Type": "Pass", "End": true}}});
        let input = json!({"FunctionName": "f", "Payload": null});
        let (kinds, out) = run_with(def, input, Arc::new(LargeResults)).await;
        assert_eq!(kinds, recorded_kinds(&rec), "{test}");
        let events = rec["get_execution_history"]["events"].as_array().unwrap();
        let want = events[events.len() - 1]["executionSucceededEventDetails"]["output"].clone();
        let want = want.to_string().replace(
            "arn:<partition>:lambda:<region>:111111111111:function:<lambda_function_name>",
            arn,
        );
        assert_eq!(out.unwrap().to_string(), want, "{test}");
    }
}

/// A state's output over the quota ends the execution, the state named in the cause.
#[tokio::test]
async fn oversized_state_output_fails_the_execution_as_recorded() {
    let rec = recording(
        "error_handling/test_states_errors.snapshot.json",
        "::test_start_large_input",
    );
    let def = json!({"StartAt": "State_1", "States": {"State_1": {"Type": "Pass",
        "Result": {"Arg1": "𐍈".repeat(257 * 1024 / 4)}, "End": true}}});
    let (kinds, out) = run(def, json!({})).await;
    assert_eq!(kinds, recorded_kinds(&rec));
    let events = rec["get_execution_history"]["events"].as_array().unwrap();
    let d = &events[events.len() - 1]["executionFailedEventDetails"];
    assert_eq!(
        out.unwrap_err(),
        Failure::new(d["error"].as_str().unwrap(), d["cause"].as_str().unwrap())
    );
}
