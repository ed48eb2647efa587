//! In-process tests of the typed operations: the paths SNS and CloudFormation use, persistence
//! across a restart, and delivery rules that are slow to observe end to end (retention).

use super::SqsService;
use super::model::*;
use super::ops::{Caller, parse_queue_arn, queue_name_from_url};
use super::state::now_ms;
use crate::Config;
use cumulo_store::Store;
use std::collections::BTreeMap;
use std::sync::Arc;

fn caller() -> Caller {
    Caller {
        region: "us-east-1".into(),
        account_id: "000000000000".into(),
        host: "localhost:4566".into(),
        sender_id: "test".into(),
    }
}

fn service(store: &Arc<Store>) -> SqsService {
    SqsService::new(store.clone(), &Config::default()).unwrap()
}

fn receive_all() -> ReceiveMessageInput {
    ReceiveMessageInput {
        max_number_of_messages: Some(10),
        wait_time_seconds: Some(0),
        system_attribute_names: vec!["All".into()],
        message_attribute_names: vec!["All".into()],
        ..Default::default()
    }
}

fn body(text: &str) -> SendMessageInput {
    SendMessageInput {
        body: text.into(),
        ..Default::default()
    }
}

#[test]
fn queue_urls_and_arns_parse() {
    assert_eq!(queue_name_from_url("http://h:1/000000000000/q"), Some("q"));
    assert_eq!(
        queue_name_from_url("https://sqs.us-east-1.amazonaws.com/1/q.fifo"),
        Some("q.fifo")
    );
    assert_eq!(queue_name_from_url("/000000000000/q"), Some("q"));
    assert_eq!(queue_name_from_url("http://h/q"), None);
    assert_eq!(queue_name_from_url("http://h/a/b/c"), None);
    assert_eq!(queue_name_from_url("http://h"), None);
    assert_eq!(queue_name_from_url(""), None);
    assert_eq!(
        parse_queue_arn("arn:aws:sqs:eu-west-1:123:q"),
        Some(("eu-west-1", "123", "q"))
    );
    assert_eq!(parse_queue_arn("arn:aws:sns:eu-west-1:123:q"), None);
    assert_eq!(parse_queue_arn("nope"), None);
}

#[tokio::test]
async fn send_message_to_arn_delivers_json_shaped_attributes() {
    let store = Arc::new(Store::in_memory().unwrap());
    let svc = service(&store);
    let c = caller();
    let url = svc
        .create_queue(&c, "target", &BTreeMap::new(), &BTreeMap::new())
        .await
        .unwrap();
    let attrs = serde_json::json!({
        "s": {"DataType": "String", "StringValue": "v"},
        "b": {"DataType": "Binary", "BinaryValue": "AAEC"},
    });
    let id = svc
        .send_message_to_arn(
            "arn:aws:sqs:us-east-1:000000000000:target",
            "hi",
            &attrs,
            None,
            None,
        )
        .unwrap();
    let got = svc.receive_message(&c, &url, &receive_all()).await.unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].message_id, id);
    assert_eq!(got[0].body, "hi");
    assert_eq!(
        got[0].message_attributes["b"].binary_value,
        Some(vec![0, 1, 2])
    );
    assert_eq!(
        got[0].message_attributes["s"].string_value.as_deref(),
        Some("v")
    );

    let missing = svc.send_message_to_arn(
        "arn:aws:sqs:us-east-1:000000000000:nope",
        "hi",
        &serde_json::Value::Null,
        None,
        None,
    );
    assert_eq!(missing.unwrap_err().code, "QueueDoesNotExist");
    let bad = svc.send_message_to_arn(
        "arn:aws:sqs:us-east-1:000000000000:target",
        "hi",
        &serde_json::json!({"n": {"DataType": "Number", "StringValue": "x"}}),
        None,
        None,
    );
    assert_eq!(bad.unwrap_err().code, "InvalidParameterValue");
}

#[tokio::test]
async fn send_message_to_arn_honours_fifo_group_and_dedup() {
    let store = Arc::new(Store::in_memory().unwrap());
    let svc = service(&store);
    let c = caller();
    let attrs: BTreeMap<String, String> = [("FifoQueue".to_string(), "true".to_string())].into();
    svc.create_queue(&c, "t.fifo", &attrs, &BTreeMap::new())
        .await
        .unwrap();
    let arn = "arn:aws:sqs:us-east-1:000000000000:t.fifo";
    let none = serde_json::Value::Null;
    let a = svc
        .send_message_to_arn(arn, "x", &none, Some("g"), Some("d"))
        .unwrap();
    let b = svc
        .send_message_to_arn(arn, "x", &none, Some("g"), Some("d"))
        .unwrap();
    assert_eq!(a, b);
    let err = svc.send_message_to_arn(arn, "x", &none, None, Some("d2"));
    assert_eq!(err.unwrap_err().code, "MissingParameter");
}

#[tokio::test]
async fn state_reloads_from_the_store() {
    let store = Arc::new(Store::in_memory().unwrap());
    let c = caller();
    let (url, inflight_id) = {
        let svc = service(&store);
        let tags: BTreeMap<String, String> = [("k".to_string(), "v".to_string())].into();
        let url = svc
            .create_queue(&c, "keep", &BTreeMap::new(), &tags)
            .await
            .unwrap();
        svc.send_message(&c, &url, &body("one")).unwrap();
        svc.send_message(&c, &url, &body("two")).unwrap();
        let input = ReceiveMessageInput {
            visibility_timeout: Some(600),
            ..Default::default()
        };
        let got = svc.receive_message(&c, &url, &input).await.unwrap();
        (url, got[0].message_id.clone())
    };
    let svc = service(&store);
    assert_eq!(svc.list_queue_tags(&c, &url).unwrap()["k"], "v");
    let got = svc.receive_message(&c, &url, &receive_all()).await.unwrap();
    assert_eq!(
        got.len(),
        1,
        "the in-flight message stays invisible after restart"
    );
    assert_ne!(got[0].message_id, inflight_id);
    assert_eq!(got[0].body, "two");
}

#[tokio::test]
async fn expired_messages_are_dropped_from_memory_and_store() {
    let store = Arc::new(Store::in_memory().unwrap());
    let svc = service(&store);
    let c = caller();
    let attrs: BTreeMap<String, String> =
        [("MessageRetentionPeriod".to_string(), "60".to_string())].into();
    let url = svc
        .create_queue(&c, "short", &attrs, &BTreeMap::new())
        .await
        .unwrap();
    svc.send_message(&c, &url, &body("old")).unwrap();
    svc.send_message(&c, &url, &body("new")).unwrap();
    {
        let mut queues = svc.lock();
        let q = queues.values_mut().next().unwrap();
        let (seq, first) = q.messages.ready().next().unwrap();
        let mut aged = first.clone();
        aged.sent_ms = now_ms() - 61_000;
        q.messages.insert(seq, aged, now_ms());
    }
    let got = svc.receive_message(&c, &url, &receive_all()).await.unwrap();
    assert_eq!(
        got.iter().map(|m| m.body.as_str()).collect::<Vec<_>>(),
        ["new"]
    );
    let rows: i64 = store
        .read(|conn| conn.query_row("SELECT count(*) FROM sqs_messages", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(rows, 1);
}

#[tokio::test]
async fn receipt_handles_are_checked() {
    let store = Arc::new(Store::in_memory().unwrap());
    let svc = service(&store);
    let c = caller();
    let a = svc
        .create_queue(&c, "a", &BTreeMap::new(), &BTreeMap::new())
        .await
        .unwrap();
    let b = svc
        .create_queue(&c, "b", &BTreeMap::new(), &BTreeMap::new())
        .await
        .unwrap();
    svc.send_message(&c, &a, &body("x")).unwrap();
    let got = svc.receive_message(&c, &a, &receive_all()).await.unwrap();
    let handle = &got[0].receipt_handle;
    for bad in ["", "!!!", "aGVsbG8="] {
        assert_eq!(
            svc.delete_message(&c, &a, bad).unwrap_err().code,
            "ReceiptHandleIsInvalid"
        );
    }
    // A handle from another queue does not name a message of this one.
    assert_eq!(
        svc.delete_message(&c, &b, handle).unwrap_err().code,
        "ReceiptHandleIsInvalid"
    );
    svc.delete_message(&c, &a, handle).unwrap();
    assert!(
        svc.receive_message(&c, &a, &receive_all())
            .await
            .unwrap()
            .is_empty()
    );
}

#[tokio::test]
async fn failed_batch_entries_change_nothing() {
    let store = Arc::new(Store::in_memory().unwrap());
    let svc = service(&store);
    let c = caller();
    let url = svc
        .create_queue(&c, "batch", &BTreeMap::new(), &BTreeMap::new())
        .await
        .unwrap();
    let entries = vec![
        ("ok".to_string(), body("fine")),
        ("bad".to_string(), body("")),
    ];
    let out = svc.send_message_batch(&c, &url, &entries).unwrap();
    assert_eq!(out.successful.len(), 1);
    assert_eq!(out.failed[0].id, "bad");
    assert_eq!(out.failed[0].code, "MissingParameter");
    let got = svc.receive_message(&c, &url, &receive_all()).await.unwrap();
    assert_eq!(got.len(), 1);
}

#[tokio::test]
async fn peek_shows_messages_without_receiving_them() {
    let store = Arc::new(Store::in_memory().unwrap());
    let svc = service(&store);
    let c = caller();
    let url = svc
        .create_queue(&c, "peeked", &BTreeMap::new(), &BTreeMap::new())
        .await
        .unwrap();
    svc.send_message(&c, &url, &body("one")).unwrap();
    svc.send_message(&c, &url, &body("two")).unwrap();
    let peeked = svc.peek_messages(&c, &url, 10).unwrap();
    let bodies: Vec<_> = peeked.iter().map(|m| m.body.as_str()).collect();
    assert_eq!(bodies, ["one", "two"]);
    assert!(
        peeked
            .iter()
            .all(|m| m.state == "visible" && m.receive_count == 0)
    );
    assert_eq!(svc.peek_messages(&c, &url, 1).unwrap().len(), 1);
    // Still there to receive, first time.
    let got = svc.receive_message(&c, &url, &receive_all()).await.unwrap();
    assert_eq!(got.len(), 2);
    let peeked = svc.peek_messages(&c, &url, 10).unwrap();
    assert!(
        peeked
            .iter()
            .all(|m| m.state == "in_flight" && m.receive_count == 1)
    );
    assert!(svc.peek_messages(&c, "/000000000000/nope", 10).is_err());
}
