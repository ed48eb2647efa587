//! The operations clients call beside create/update/delete: termination protection, the drift
//! API, IMPORT change sets, signals and the registry reads.

mod support;

use cumulo_engine::*;
use serde_json::json;
use support::*;

async fn delete_err(h: &Harness, name: &str) -> EngineError {
    h.engine
        .delete_stack(
            &h.caller,
            DeleteStackInput {
                stack_name: name.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err()
}

#[tokio::test]
async fn termination_protection_refuses_delete_until_lifted() {
    let h = Harness::new();
    let id = h.create("tp", &fakes(1, json!(null))).await.unwrap();
    let out = h
        .engine
        .update_termination_protection(&h.caller, "tp", true)
        .await
        .unwrap();
    assert_eq!(out.stack_id, id);
    assert!(h.stack("tp").await.enable_termination_protection);
    let err = delete_err(&h, "tp").await;
    assert_eq!(err.code, "ValidationError");
    assert_eq!(
        err.message,
        "Stack [tp] cannot be deleted while TerminationProtection is enabled"
    );
    assert_eq!(h.status("tp").await, StackStatus::CREATE_COMPLETE);
    // Kept across a restart.
    let h2 = h.restarted("req-2");
    assert!(h2.stack("tp").await.enable_termination_protection);
    h2.engine
        .update_termination_protection(&h2.caller, &id, false)
        .await
        .unwrap();
    h2.delete("tp").await;
    assert_eq!(
        h2.stack(&id).await.stack_status,
        StackStatus::DELETE_COMPLETE
    );
    // A deleted stack by ARN is refused as AWS refuses it; by name it does not exist.
    let err = h2
        .engine
        .update_termination_protection(&h2.caller, &id, true)
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        format!("Stack:{id} is in DELETE_COMPLETE state and can not be updated.")
    );
    let err = h2
        .engine
        .update_termination_protection(&h2.caller, "tp", true)
        .await
        .unwrap_err();
    assert_eq!(err.message, "Stack with id tp does not exist");
}

#[tokio::test]
async fn nested_stacks_take_the_roots_protection() {
    let h = Harness::new();
    let url = "https://b.s3.amazonaws.com/child";
    h.world
        .templates
        .lock()
        .unwrap()
        .insert(url.into(), fakes(1, json!(null)));
    let parent = template(
        json!({"Child": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": url}}}),
        json!(null),
    );
    h.create("root", &parent).await.unwrap();
    let child = h.physical("root", "Child").await;
    assert!(!h.stack(&child).await.enable_termination_protection);
    h.engine
        .update_termination_protection(&h.caller, "root", true)
        .await
        .unwrap();
    assert!(h.stack(&child).await.enable_termination_protection);
    let err = h
        .engine
        .update_termination_protection(&h.caller, &child, false)
        .await
        .unwrap_err();
    assert_eq!(err.code, "ValidationError");
    let child_name = h.stack(&child).await.stack_name;
    let err = delete_err(&h, &child).await;
    assert_eq!(
        err.message,
        format!("Stack [{child_name}] cannot be deleted while TerminationProtection is enabled")
    );
    // An update of the root that drops the nested stack still deletes it.
    h.update("root", &fakes(1, json!(null))).await.unwrap();
    assert_eq!(h.status("root").await, StackStatus::UPDATE_COMPLETE);
    assert_eq!(
        h.stack(&child).await.stack_status,
        StackStatus::DELETE_COMPLETE
    );
}

/// (logical id, status, reason, physical id) of every event, oldest first.
async fn events_with_ids(
    h: &Harness,
    name: &str,
) -> Vec<(String, String, Option<String>, Option<String>)> {
    let mut out: Vec<_> = h
        .engine
        .describe_stack_events(
            &h.caller,
            DescribeStackEventsInput {
                stack_name: name.into(),
                next_token: None,
            },
        )
        .await
        .unwrap()
        .stack_events
        .into_iter()
        .map(|e| {
            (
                e.logical_resource_id,
                e.resource_status,
                e.resource_status_reason,
                e.physical_resource_id,
            )
        })
        .collect();
    out.reverse();
    out
}

#[tokio::test]
async fn creates_and_replacements_emit_awss_initiated_event() {
    let h = Harness::new();
    let v1 = template(
        json!({"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "one"}}}),
        json!(null),
    );
    h.create("ev", &v1).await.unwrap();
    let first = h.physical("ev", "Q").await;
    let q: Vec<_> = events_with_ids(&h, "ev")
        .await
        .into_iter()
        .filter(|e| e.0 == "Q")
        .collect();
    assert_eq!(
        q,
        vec![
            ("Q".into(), "CREATE_IN_PROGRESS".into(), None, None),
            (
                "Q".into(),
                "CREATE_IN_PROGRESS".into(),
                Some("Resource creation Initiated".into()),
                Some(first.clone())
            ),
            (
                "Q".into(),
                "CREATE_COMPLETE".into(),
                None,
                Some(first.clone())
            ),
        ]
    );
    // QueueName is createOnly: the update replaces the queue.
    let v2 = template(
        json!({"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "two"}}}),
        json!(null),
    );
    h.update("ev", &v2).await.unwrap();
    assert_eq!(h.status("ev").await, StackStatus::UPDATE_COMPLETE);
    let second = h.physical("ev", "Q").await;
    assert_ne!(first, second);
    let all = events_with_ids(&h, "ev").await;
    let start = all
        .iter()
        .position(|e| e.1 == "UPDATE_IN_PROGRESS" && e.0 == "ev")
        .unwrap();
    let q: Vec<_> = all[start..]
        .iter()
        .filter(|e| e.0 == "Q")
        .map(|e| (e.1.as_str(), e.2.as_deref(), e.3.clone()))
        .collect();
    assert_eq!(
        q,
        vec![
            (
                "UPDATE_IN_PROGRESS",
                Some(
                    "Requested update requires the creation of a new physical resource; hence creating one."
                ),
                Some(first.clone())
            ),
            (
                "UPDATE_IN_PROGRESS",
                Some("Resource creation Initiated"),
                Some(second.clone())
            ),
            ("UPDATE_COMPLETE", None, Some(second.clone())),
            ("DELETE_IN_PROGRESS", None, Some(first.clone())),
            ("DELETE_COMPLETE", None, Some(first)),
        ]
    );
}
