//! The payload quota where AWS documents it beyond the recorded outputs: a state's input
//! after Parameters (or JSONata Arguments, or a Map's ItemSelector) and a catcher's output.

use super::recorded_tests::run_with;
use super::run::Resource;
use super::{Exec, Failure, Integrations, PAYLOAD_QUOTA};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Answers every call with `{}` and counts the calls: an oversized input must fail before
/// the resource is called.
#[derive(Default)]
struct Counting(AtomicUsize);

#[async_trait::async_trait]
impl Integrations for Counting {
    async fn call(
        &self,
        _: &Exec,
        _: &Resource,
        _: Value,
        _: Option<&str>,
    ) -> Result<Value, Failure> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Ok(json!({}))
    }
    async fn await_token(&self, _: &str, _: Option<u64>) -> Result<Value, Failure> {
        Err(Failure::new("States.TaskFailed", "no tokens in this test"))
    }
    fn new_token(&self, _: &Exec) -> String {
        "token".into()
    }
}

/// An input just under the quota: doubled by a template it is over.
fn half() -> Value {
    json!({"s": "x".repeat(PAYLOAD_QUOTA / 2 + 16)})
}

fn over(state: &str) -> Failure {
    Failure::new(
        "States.DataLimitExceeded",
        format!(
            "The state/task '{state}' returned a result with a size exceeding the maximum number of bytes service limit."
        ),
    )
}

const LAMBDA: &str = "arn:aws:states:::lambda:invoke";

async fn run_counting(def: Value) -> (Vec<String>, Result<Value, Failure>, usize) {
    let calls = Arc::new(Counting::default());
    let (kinds, out) = run_with(def, half(), calls.clone()).await;
    (kinds, out, calls.0.load(Ordering::SeqCst))
}

#[tokio::test]
async fn task_parameters_over_the_quota_fail_before_the_call() {
    let def = json!({"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": LAMBDA,
        "Parameters": {"A.$": "$.s", "B.$": "$.s"}, "End": true}}});
    let (kinds, out, calls) = run_counting(def).await;
    assert_eq!(out.unwrap_err(), over("T"));
    assert_eq!(calls, 0);
    assert_eq!(
        kinds,
        ["ExecutionStarted", "TaskStateEntered", "ExecutionFailed"]
    );
}

#[tokio::test]
async fn task_parameters_over_the_quota_are_caught_by_name() {
    let def = json!({"StartAt": "T", "States": {
        "T": {"Type": "Task", "Resource": LAMBDA,
            "Parameters": {"A.$": "$.s", "B.$": "$.s"},
            "Catch": [{"ErrorEquals": ["States.DataLimitExceeded"], "ResultPath": null,
                "Next": "Handled"}], "End": true},
        "Handled": {"Type": "Pass", "Result": "handled", "End": true}}});
    let (_, out, calls) = run_counting(def).await;
    assert_eq!(out.unwrap(), json!("handled"));
    assert_eq!(calls, 0);
}

#[tokio::test]
async fn jsonata_arguments_over_the_quota_fail_the_task() {
    let def = json!({"QueryLanguage": "JSONata", "StartAt": "T", "States": {"T": {
        "Type": "Task", "Resource": LAMBDA,
        "Arguments": {"A": "{% $states.input.s %}", "B": "{% $states.input.s %}"},
        "End": true}}});
    let (_, out, calls) = run_counting(def).await;
    assert_eq!(out.unwrap_err(), over("T"));
    assert_eq!(calls, 0);
}

#[tokio::test]
async fn pass_and_parallel_parameters_over_the_quota_fail() {
    // A Pass whose OutputPath would shrink its output back under the quota still fails:
    // the quota holds the input after Parameters, not only the output.
    let pass = json!({"StartAt": "P", "States": {"P": {"Type": "Pass",
        "Parameters": {"A.$": "$.s", "B.$": "$.s"}, "OutputPath": "$.A", "End": true}}});
    let (_, out, _) = run_counting(pass).await;
    assert_eq!(out.unwrap_err(), over("P"));
    let parallel = json!({"StartAt": "Par", "States": {"Par": {"Type": "Parallel",
        "Parameters": {"A.$": "$.s", "B.$": "$.s"},
        "Branches": [{"StartAt": "B", "States": {"B": {"Type": "Pass", "Result": 1, "End": true}}}],
        "End": true}}});
    let (kinds, out, _) = run_counting(parallel).await;
    assert_eq!(out.unwrap_err(), over("Par"));
    assert!(
        !kinds.contains(&"ParallelStateStarted".to_string()),
        "{kinds:?}"
    );
}

#[tokio::test]
async fn map_item_selector_over_the_quota_fails() {
    let def = json!({"StartAt": "M", "States": {"M": {"Type": "Map",
        "ItemsPath": "$.items",
        "ItemSelector": {"A.$": "$.s", "B.$": "$.s"},
        "ItemProcessor": {"StartAt": "I", "States": {"I": {"Type": "Pass", "Result": 1, "End": true}}},
        "End": true}}});
    let mut input = half();
    input["items"] = json!([1]);
    let (_, out) = run_with(def, input, Arc::new(Counting::default())).await;
    assert_eq!(out.unwrap_err(), over("M"));
}

#[tokio::test]
async fn a_catchers_output_over_the_quota_fails_the_execution() {
    // The error output put beside a near-quota input makes an output over it.
    let def = json!({"StartAt": "F", "States": {
        "F": {"Type": "Task", "Resource": LAMBDA,
            "Parameters": {"FunctionName": "f"},
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error",
                "Next": "Handled"}], "Next": "Handled"},
        "Handled": {"Type": "Pass", "End": true}}});
    let input = json!({"s": "x".repeat(PAYLOAD_QUOTA - 10)});
    let (kinds, out) = run_with(def, input, Arc::new(Failing)).await;
    assert_eq!(out.unwrap_err(), over("F"));
    assert_eq!(kinds.last().unwrap(), "ExecutionFailed");
    assert!(!kinds.contains(&"TaskStateExited".to_string()), "{kinds:?}");
    // Under the quota, the same catcher hands on the error output.
    let small = json!({"s": "x"});
    let def = json!({"StartAt": "F", "States": {
        "F": {"Type": "Task", "Resource": LAMBDA, "Parameters": {"FunctionName": "f"},
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error",
                "Next": "Handled"}], "Next": "Handled"},
        "Handled": {"Type": "Pass", "End": true}}});
    let (_, out) = run_with(def, small, Arc::new(Failing)).await;
    assert_eq!(out.unwrap()["error"]["Error"], "Boom");
}

/// Every call fails with a long cause.
struct Failing;

#[async_trait::async_trait]
impl Integrations for Failing {
    async fn call(
        &self,
        _: &Exec,
        _: &Resource,
        _: Value,
        _: Option<&str>,
    ) -> Result<Value, Failure> {
        Err(Failure::new("Boom", "y".repeat(64)))
    }
    async fn await_token(&self, _: &str, _: Option<u64>) -> Result<Value, Failure> {
        Err(Failure::new("States.TaskFailed", "no tokens in this test"))
    }
    fn new_token(&self, _: &Exec) -> String {
        "token".into()
    }
}

#[test]
fn json_len_is_the_length_of_the_json_text() {
    for v in [
        json!(null),
        json!({"a": [1, 2.5, "é\"\n", {"b": true}], "": {}}),
        json!("x".repeat(1000)),
    ] {
        assert_eq!(super::json_len(&v), v.to_string().len(), "{v}");
    }
}
