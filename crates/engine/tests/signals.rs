//! SignalResource, CreationPolicy and WaitCondition with fake providers: the wait, its
//! outcomes in AWS's words, and the signals a handle keeps across a restart.

mod support;

use cumulo_engine::*;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use support::*;

/// An engine whose create call returns at once, so the test can act while a resource waits.
fn harness() -> Harness {
    Harness::with(
        Arc::new(cumulo_store::Store::in_memory().unwrap()),
        EngineConfig {
            sync_wait: Duration::ZERO,
            ..config()
        },
    )
}

fn signal(stack: &str, logical: &str, id: &str, status: &str) -> SignalResourceInput {
    SignalResourceInput {
        stack_name: stack.into(),
        logical_resource_id: logical.into(),
        unique_id: id.into(),
        status: status.into(),
    }
}

/// Sends a signal once the resource waits for it (until then SignalResource refuses it).
async fn signal_when_waiting(h: &Harness, input: SignalResourceInput) {
    for _ in 0..500 {
        if h.engine
            .signal_resource(&h.caller, input.clone())
            .await
            .is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{} never waited for a signal", input.logical_resource_id);
}

fn waiting(count: u32, timeout: &str) -> String {
    template(
        json!({
            "W": {"Type": FAKE, "CreationPolicy": {"ResourceSignal": {"Count": count, "Timeout": timeout}}},
            "After": {"Type": FAKE, "DependsOn": "W"},
            "Other": {"Type": FAKE}
        }),
        serde_json::Value::Null,
    )
}

#[tokio::test]
async fn creation_policy_waits_for_count_success_signals_and_blocks_only_dependents() {
    let h = harness();
    h.create("s", &waiting(2, "PT1M")).await.unwrap();
    signal_when_waiting(&h, signal("s", "W", "u1", "SUCCESS")).await;
    // The same UniqueId again counts once: W still waits.
    h.engine
        .signal_resource(&h.caller, signal("s", "W", "u1", "SUCCESS"))
        .await
        .unwrap();
    h.await_event("s", "Other", "CREATE_COMPLETE").await;
    assert_eq!(
        h.resource("s", "W").await.resource_status,
        "CREATE_IN_PROGRESS"
    );
    assert!(h.events("s").await.iter().all(|e| e.0 != "After"));
    h.engine
        .signal_resource(&h.caller, signal("s", "W", "u2", "SUCCESS"))
        .await
        .unwrap();
    assert_eq!(h.settle("s").await, StackStatus::CREATE_COMPLETE);
    let reasons: Vec<_> = h
        .events("s")
        .await
        .into_iter()
        .filter(|e| e.0 == "W")
        .map(|e| (e.1, e.2))
        .collect();
    let received = |id: &str| {
        (
            "CREATE_IN_PROGRESS".to_string(),
            Some(format!("Received SUCCESS signal with UniqueId {id}")),
        )
    };
    assert!(reasons.contains(&received("u1")), "{reasons:?}");
    assert!(reasons.contains(&received("u2")), "{reasons:?}");
    assert_eq!(reasons.last().unwrap().0, "CREATE_COMPLETE");
}

#[tokio::test]
async fn a_failure_signal_fails_the_resource_and_rolls_the_stack_back() {
    let h = harness();
    h.create("s", &waiting(1, "PT1M")).await.unwrap();
    signal_when_waiting(&h, signal("s", "W", "i-1", "FAILURE")).await;
    assert_eq!(h.settle("s").await, StackStatus::ROLLBACK_COMPLETE);
    let events = h.events("s").await;
    assert!(
        events.iter().any(|e| e.0 == "W"
            && e.1 == "CREATE_FAILED"
            && e.2.as_deref() == Some("Received FAILURE signal with UniqueId i-1")),
        "{events:?}"
    );
}

#[tokio::test]
async fn no_signal_within_the_timeout_fails_the_resource() {
    let h = harness();
    h.create("s", &waiting(1, "PT1S")).await.unwrap();
    assert_eq!(h.settle("s").await, StackStatus::ROLLBACK_COMPLETE);
    let events = h.events("s").await;
    assert!(
        events.iter().any(|e| e.0 == "W"
            && e.1 == "CREATE_FAILED"
            && e.2.as_deref()
                == Some("Failed to receive 1 resource signal(s) within the specified duration")),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_resource_not_waiting_cannot_be_signaled() {
    let h = Harness::new();
    h.create("s", &fakes(1, serde_json::Value::Null))
        .await
        .unwrap();
    let err = h
        .engine
        .signal_resource(&h.caller, signal("s", "R0", "u", "SUCCESS"))
        .await
        .unwrap_err();
    assert_eq!(err.code, "ValidationError");
    assert_eq!(
        err.message,
        "Resource R0 is in CREATE_COMPLETE state and cannot be signaled"
    );
    let err = h
        .engine
        .signal_resource(&h.caller, signal("s", "R0", "u", "MAYBE"))
        .await
        .unwrap_err();
    assert_eq!(err.code, "ValidationError");
}

fn handle_only() -> serde_json::Value {
    json!({"H": {"Type": "AWS::CloudFormation::WaitConditionHandle"}})
}

fn with_condition() -> String {
    let mut r = handle_only();
    r["C"] = json!({"Type": "AWS::CloudFormation::WaitCondition",
        "Properties": {"Handle": {"Ref": "H"}, "Timeout": "60", "Count": 2}});
    template(r, json!({"Data": {"Value": {"Fn::GetAtt": ["C", "Data"]}}}))
}

fn handle_signal(id: &str, data: &str) -> Signal {
    parse_handle_body(
        json!({"Status": "SUCCESS", "Reason": "r", "UniqueId": id, "Data": data})
            .to_string()
            .as_bytes(),
    )
    .unwrap()
}

#[tokio::test]
async fn a_handle_keeps_early_signals_across_a_restart_and_the_condition_counts_them() {
    let h = Harness::new();
    h.create("s", &template(handle_only(), serde_json::Value::Null))
        .await
        .unwrap();
    let url = h.physical("s", "H").await;
    assert!(
        url.starts_with("http://localhost:4566/_cumulo/cfn-signal/"),
        "{url}"
    );
    let token = url.rsplit('/').next().unwrap().to_string();
    h.engine
        .signal_handle(&token, handle_signal("early", "e"))
        .await
        .unwrap();
    let h = h.restarted("req-2");
    h.update("s", &with_condition()).await.unwrap();
    h.engine
        .signal_handle(&token, handle_signal("late", "l"))
        .await
        .unwrap();
    assert_eq!(h.settle("s").await, StackStatus::UPDATE_COMPLETE);
    let data: serde_json::Value =
        serde_json::from_str(&h.stack("s").await.outputs[0].value).unwrap();
    assert_eq!(data, json!({"early": "e", "late": "l"}));
    assert!(matches!(
        h.engine.signal_handle("nope", handle_signal("x", "")).await,
        Err(HandleRefusal::Unknown)
    ));
}

/// DeleteStack while a resource waits for its signals: the delete cancels the wait (the
/// resource ends CREATE_FAILED "Resource creation cancelled", its dependents never start) and
/// takes the whole stack down, with no rollback in between.
// Multi-threaded as `cumulo serve` runs: the wait and the DAG race to answer the abort.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn delete_stack_cancels_a_wait_and_deletes_the_stack() {
    let h = harness();
    let id = h.create("s", &waiting(1, "PT1H")).await.unwrap();
    h.await_event("s", "Other", "CREATE_COMPLETE").await;
    h.await_event("s", "W", "CREATE_IN_PROGRESS").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(h.status("s").await, StackStatus::CREATE_IN_PROGRESS);
    h.delete("s").await;
    assert_eq!(h.settle(&id).await, StackStatus::DELETE_COMPLETE);
    let events = h.events(&id).await;
    let stack: Vec<_> = events
        .iter()
        .filter(|e| e.0 == "s")
        .map(|e| (e.1.as_str(), e.2.as_deref()))
        .collect();
    assert_eq!(
        stack,
        [
            ("CREATE_IN_PROGRESS", Some("User Initiated")),
            ("DELETE_IN_PROGRESS", Some("User Initiated")),
            ("DELETE_COMPLETE", None)
        ]
    );
    let at = |logical: &str, status: &str| {
        events
            .iter()
            .position(|e| e.0 == logical && e.1 == status)
            .unwrap_or_else(|| panic!("no {status} for {logical}: {events:?}"))
    };
    let cancelled = at("W", "CREATE_FAILED");
    assert_eq!(
        events[cancelled].2.as_deref(),
        Some("Resource creation cancelled")
    );
    // The wait and the DAG both see the abort: the cancellation is reported once.
    let failures = events
        .iter()
        .filter(|e| e.0 == "W" && e.1 == "CREATE_FAILED")
        .count();
    assert_eq!(failures, 1, "{events:?}");
    assert!(at("s", "DELETE_IN_PROGRESS") < cancelled);
    assert!(cancelled < at("W", "DELETE_COMPLETE"));
    assert!(events.iter().all(|e| e.0 != "After"), "{events:?}");
    assert_eq!(h.fake.count(), 0, "everything the stack made is gone");
}
