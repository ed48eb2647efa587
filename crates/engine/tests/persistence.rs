//! A write the store refuses during a background flow is never ignored: the resource and the
//! stack land in their failed states with the write failure as the reason.

mod support;

use cumulo_engine::*;
use serde_json::json;
use support::*;

const PREFIX: &str = "cumulo: could not persist stack state: ";

fn one_thing() -> String {
    template(
        json!({"A": {"Type": FAKE, "Properties": {"Size": 1}}}),
        json!(null),
    )
}

/// Installs SQLite triggers that refuse the writes `sql` describes (`BEFORE INSERT ON ...`).
fn refuse(h: &Harness, name: &str, when: &str) {
    let sql = format!(
        "CREATE TRIGGER {name} {when} BEGIN SELECT RAISE(ABORT, 'store refused the write'); END;"
    );
    h.store.write(|tx| tx.execute_batch(&sql)).unwrap();
}

#[tokio::test]
async fn a_refused_resource_write_fails_the_create_and_creates_nothing_unrecorded() {
    let h = Harness::new();
    refuse(&h, "no_res_insert", "BEFORE INSERT ON cfn_resources");
    refuse(&h, "no_res_update", "BEFORE UPDATE ON cfn_resources");
    h.create("s", &one_thing()).await.unwrap();
    let stack = h.stack("s").await;
    assert!(
        stack.stack_status.as_str().ends_with("_FAILED"),
        "{:?}",
        stack.stack_status
    );
    let reason = stack.stack_status_reason.unwrap_or_default();
    assert!(
        reason.contains(PREFIX) && reason.contains("store refused the write"),
        "{reason}"
    );
    let a = h.resource("s", "A").await;
    assert!(
        a.resource_status.ends_with("_FAILED"),
        "{}",
        a.resource_status
    );
    assert!(
        a.resource_status_reason
            .as_deref()
            .is_some_and(|r| r.starts_with(PREFIX)),
        "{:?}",
        a.resource_status_reason
    );
    // The CREATE_IN_PROGRESS record could not be written, so the provider was never called:
    // nothing exists that the stack could not delete.
    assert_eq!(h.fake.count(), 0);
    assert!(
        !h.fake.calls().iter().any(|c| c == "create A"),
        "{:?}",
        h.fake.calls()
    );
    let events = h.events("s").await;
    assert!(
        events.iter().any(|(l, s, r)| l == "A"
            && s == "CREATE_FAILED"
            && r.as_deref().is_some_and(|r| r.starts_with(PREFIX))),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_refused_final_write_fails_the_delete_and_a_retry_completes_it() {
    let h = Harness::new();
    h.create("s", &one_thing()).await.unwrap();
    assert_eq!(h.status("s").await, StackStatus::CREATE_COMPLETE);
    refuse(
        &h,
        "no_delete_complete",
        "BEFORE INSERT ON cfn_events WHEN NEW.body LIKE '%\"status\":\"DELETE_COMPLETE\"%'",
    );
    h.delete("s").await;
    let stack = h.stack("s").await;
    assert_eq!(stack.stack_status, StackStatus::DELETE_FAILED);
    let reason = stack.stack_status_reason.unwrap_or_default();
    assert!(reason.contains(PREFIX), "{reason}");
    let a = h.resource("s", "A").await;
    assert_eq!(a.resource_status, "DELETE_FAILED");
    assert!(
        a.resource_status_reason
            .as_deref()
            .is_some_and(|r| r.starts_with(PREFIX)),
        "{:?}",
        a.resource_status_reason
    );
    // What was written is what a restart sees: the failed deletion, not a lost success.
    let reopened = Harness::with(h.store.clone(), config());
    assert_eq!(reopened.status("s").await, StackStatus::DELETE_FAILED);
    drop(reopened);

    h.store
        .write(|tx| tx.execute_batch("DROP TRIGGER no_delete_complete;"))
        .unwrap();
    h.delete("s").await;
    let gone = h
        .engine
        .describe_stacks(
            &h.caller,
            DescribeStacksInput {
                stack_name: Some("s".into()),
                next_token: None,
            },
        )
        .await;
    assert!(gone.is_err(), "the retried delete completes");
    assert_eq!(h.fake.count(), 0);
}
