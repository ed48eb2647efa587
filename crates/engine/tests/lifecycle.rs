//! Create, update, delete and their failure paths, with fake providers.

mod support;

use cumulo_engine::*;
use serde_json::json;
use support::*;

fn two_things() -> String {
    template(
        json!({
            "A": {"Type": FAKE, "Properties": {"Size": 1}},
            "B": {"Type": FAKE, "Properties": {"Peer": {"Ref": "A"}, "PeerArn": {"Fn::GetAtt": ["A", "Arn"]}}}
        }),
        json!({"APhys": {"Value": {"Ref": "A"}, "Description": "a"}}),
    )
}

#[tokio::test]
async fn create_reaches_complete_with_outputs_refs_and_tokens() {
    let h = Harness::new();
    let id = h.create("s1", &two_things()).await.unwrap();
    assert!(id.starts_with("arn:aws:cloudformation:us-east-1:000000000000:stack/s1/"));
    // The sync wait means the first describe already sees the terminal status.
    let s = h.stack("s1").await;
    assert_eq!(s.stack_status, StackStatus::CREATE_COMPLETE);
    assert_eq!(s.stack_status_reason, None);
    let a = h.physical("s1", "A").await;
    assert!(a.starts_with("s1-A-"), "{a}");
    assert_eq!(s.outputs[0].value, a);
    let b = h.physical("s1", "B").await;
    let bp = h.fake.props(&b).unwrap();
    assert_eq!(bp["Peer"], json!(a));
    assert_eq!(bp["PeerArn"], json!(format!("arn:fake:{a}")));
    // By ARN too.
    assert_eq!(h.stack(&id).await.stack_name, "s1");
    // Every event carries the request id as its token when the caller gave none.
    let events = h
        .engine
        .describe_stack_events(
            &h.caller,
            DescribeStackEventsInput {
                stack_name: "s1".into(),
                next_token: None,
            },
        )
        .await
        .unwrap();
    assert!(
        events
            .stack_events
            .iter()
            .all(|e| e.client_request_token == "req-1")
    );
    let statuses: Vec<_> = h
        .events("s1")
        .await
        .into_iter()
        .map(|e| (e.0, e.1))
        .collect();
    assert_eq!(
        statuses.first().unwrap(),
        &("s1".to_string(), "CREATE_IN_PROGRESS".to_string())
    );
    assert_eq!(
        statuses.last().unwrap(),
        &("s1".to_string(), "CREATE_COMPLETE".to_string())
    );
    // B started only after A completed.
    let pos = |l: &str, st: &str| statuses.iter().position(|e| e.0 == l && e.1 == st).unwrap();
    assert!(pos("A", "CREATE_COMPLETE") < pos("B", "CREATE_IN_PROGRESS"));
    let tpl = h
        .engine
        .get_template(
            &h.caller,
            GetTemplateInput {
                stack_name: Some("s1".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(tpl.template_body, two_things());
}

#[tokio::test]
async fn caller_token_is_on_every_event_and_retry_is_idempotent() {
    let h = Harness::new();
    let input = CreateStackInput {
        stack_name: "tok".into(),
        template_body: Some(two_things()),
        client_request_token: Some("my-token".into()),
        ..Default::default()
    };
    let first = h
        .engine
        .create_stack(&h.caller, input.clone())
        .await
        .unwrap();
    let again = h.engine.create_stack(&h.caller, input).await.unwrap();
    assert_eq!(first, again);
    let events = h
        .engine
        .describe_stack_events(
            &h.caller,
            DescribeStackEventsInput {
                stack_name: "tok".into(),
                next_token: None,
            },
        )
        .await
        .unwrap();
    assert!(
        events
            .stack_events
            .iter()
            .all(|e| e.client_request_token == "my-token")
    );
}

#[tokio::test]
async fn create_failure_rolls_back_and_deletes_what_was_created() {
    let h = Harness::new();
    let t = template(
        json!({
            "Good": {"Type": FAKE},
            "Bad": {"Type": FAKE, "DependsOn": "Good", "Properties": {"Fail": true}}
        }),
        json!(null),
    );
    h.create("rb", &t).await.unwrap();
    let s = h.stack("rb").await;
    assert_eq!(s.stack_status, StackStatus::ROLLBACK_COMPLETE);
    assert_eq!(
        s.stack_status_reason, None,
        "reason cleared at the terminal rollback state"
    );
    assert_eq!(
        h.fake.count(),
        0,
        "the rollback deleted Good through its provider"
    );
    let events = h.events("rb").await;
    let rollback = events
        .iter()
        .find(|e| e.1 == "ROLLBACK_IN_PROGRESS")
        .unwrap();
    assert_eq!(
        rollback.2.as_deref(),
        Some("The following resource(s) failed to create: [Bad]. Rollback requested by user.")
    );
    let bad = events
        .iter()
        .find(|e| e.0 == "Bad" && e.1 == "CREATE_FAILED")
        .unwrap();
    assert_eq!(bad.2.as_deref(), Some("Bad refused"));
    // ROLLBACK_COMPLETE is delete-only.
    let err = h.update("rb", &t).await.unwrap_err();
    assert_eq!(err.code, "ValidationError");
    assert!(
        err.message
            .ends_with("is in ROLLBACK_COMPLETE state and can not be updated."),
        "{}",
        err.message
    );
    let err = h.create("rb", &t).await.unwrap_err();
    assert_eq!(err.code, "AlreadyExistsException");
    assert_eq!(err.message, "Stack [rb] already exists");
}

#[tokio::test]
async fn a_create_that_fails_after_making_its_resource_records_it_for_the_rollback() {
    let h = Harness::new();
    let t = template(
        json!({"Bad": {"Type": FAKE, "Properties": {"Name": "made", "FailAfterCreate": true}}}),
        json!(null),
    );
    h.create("made", &t).await.unwrap();
    assert_eq!(h.settle("made").await, StackStatus::ROLLBACK_COMPLETE);
    assert!(!h.fake.exists("made"), "the rollback deleted what was made");
    let bad: Vec<_> = h
        .events("made")
        .await
        .into_iter()
        .filter(|e| e.0 == "Bad")
        .map(|e| (e.1, e.2))
        .collect();
    assert_eq!(
        bad,
        [
            ("CREATE_IN_PROGRESS".to_string(), None),
            (
                "CREATE_IN_PROGRESS".to_string(),
                Some("Resource creation Initiated".to_string())
            ),
            (
                "CREATE_FAILED".to_string(),
                Some("made did not stabilize".to_string())
            ),
            ("DELETE_IN_PROGRESS".to_string(), None),
            ("DELETE_COMPLETE".to_string(), None),
        ]
    );
}

#[tokio::test]
async fn a_replacement_that_fails_after_making_its_resource_is_deleted_by_the_rollback() {
    let h = Harness::new();
    let queue = |name: &str, fail: bool| {
        template(
            json!({"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": name, "FailAfterCreate": fail}}}),
            json!(null),
        )
    };
    h.create("repl", &queue("q-old", false)).await.unwrap();
    assert_eq!(h.settle("repl").await, StackStatus::CREATE_COMPLETE);
    h.update("repl", &queue("q-new", true)).await.unwrap();
    assert_eq!(
        h.settle("repl").await,
        StackStatus::UPDATE_ROLLBACK_COMPLETE
    );
    assert!(h.fake.exists("q-old"), "the original is kept");
    assert!(
        !h.fake.exists("q-new"),
        "the failed replacement was deleted"
    );
    assert_eq!(h.physical("repl", "Q").await, "q-old");
}

#[tokio::test]
async fn on_failure_do_nothing_stops_at_create_failed_and_disable_rollback_update_resumes() {
    let h = Harness::new();
    // Bad starts once Good is done: a Good still in flight when Bad fails would be cancelled
    // (and listed as failed too, as AWS does), which is another test's subject.
    let bad = template(
        json!({"Good": {"Type": FAKE}, "Bad": {"Type": FAKE, "DependsOn": "Good", "Properties": {"Fail": true}}}),
        json!(null),
    );
    h.engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "dn".into(),
                template_body: Some(bad),
                on_failure: Some("DO_NOTHING".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let s = h.stack("dn").await;
    assert_eq!(s.stack_status, StackStatus::CREATE_FAILED);
    assert_eq!(
        s.stack_status_reason.as_deref(),
        Some("The following resource(s) failed to create: [Bad].")
    );
    assert!(s.disable_rollback);
    let bad_res = h.resource("dn", "Bad").await;
    assert_eq!(bad_res.resource_status, "CREATE_FAILED");
    assert_eq!(
        bad_res.resource_status_reason.as_deref(),
        Some("Bad refused")
    );
    let fixed = template(
        json!({"Good": {"Type": FAKE}, "Bad": {"Type": FAKE}}),
        json!(null),
    );
    // Without DisableRollback an update from CREATE_FAILED is refused.
    let err = h.update("dn", &fixed).await.unwrap_err();
    assert!(
        err.message
            .contains("is in CREATE_FAILED state and can not be updated.")
    );
    h.engine
        .update_stack(
            &h.caller,
            UpdateStackInput {
                stack_name: "dn".into(),
                template_body: Some(fixed),
                disable_rollback: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("dn").await, StackStatus::UPDATE_COMPLETE);
    assert_eq!(h.fake.count(), 2);
}

#[tokio::test]
async fn on_failure_delete_deletes_the_stack() {
    let h = Harness::new();
    let bad = template(
        json!({"Good": {"Type": FAKE}, "Bad": {"Type": FAKE, "DependsOn": "Good", "Properties": {"Fail": true}}}),
        json!(null),
    );
    let id = h
        .engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "od".into(),
                template_body: Some(bad),
                on_failure: Some("DELETE".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .stack_id;
    assert_eq!(
        h.stack(&id).await.stack_status,
        StackStatus::DELETE_COMPLETE
    );
    assert_eq!(h.fake.count(), 0);
    assert!(h.events(&id).await.iter().any(|e| e.1 == "DELETE_IN_PROGRESS"
        && e.2.as_deref() == Some("The following resource(s) failed to create: [Bad]. Delete requested by user.")));
}

#[tokio::test]
async fn delete_frees_the_name_and_only_the_arn_resolves() {
    let h = Harness::new();
    let t = two_things();
    let id = h.create("d1", &t).await.unwrap();
    h.delete("d1").await;
    assert_eq!(h.fake.count(), 0);
    let gone = h
        .engine
        .describe_stacks(
            &h.caller,
            DescribeStacksInput {
                stack_name: Some("d1".into()),
                next_token: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(gone.message, "Stack with id d1 does not exist");
    let by_arn = h.stack(&id).await;
    assert_eq!(by_arn.stack_status, StackStatus::DELETE_COMPLETE);
    assert!(by_arn.deletion_time.is_some());
    // The resources of the deleted stack are still described by ARN.
    assert!(
        h.resources(&id)
            .await
            .iter()
            .all(|r| r.resource_status == "DELETE_COMPLETE")
    );
    // Unfiltered ListStacks includes DELETE_COMPLETE.
    let list = h
        .engine
        .list_stacks(&h.caller, ListStacksInput::default())
        .await
        .unwrap();
    assert!(
        list.stack_summaries
            .iter()
            .any(|s| s.stack_id == id && s.stack_status == StackStatus::DELETE_COMPLETE)
    );
    // The name is free at once; deleting again is a no-op.
    let id2 = h.create("d1", &t).await.unwrap();
    assert_ne!(id, id2);
    h.engine
        .delete_stack(
            &h.caller,
            DeleteStackInput {
                stack_name: id.clone(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("d1").await, StackStatus::CREATE_COMPLETE);
    // By ARN a deleted stack is found, and refused as AWS refuses it.
    let err = h.update(&id, &t).await.unwrap_err();
    assert_eq!(
        err.message,
        format!("Stack:{id} is in DELETE_COMPLETE state and can not be updated.")
    );
}

#[tokio::test]
async fn list_stacks_filters_and_validates() {
    let h = Harness::new();
    h.create("l1", &two_things()).await.unwrap();
    let only = h
        .engine
        .list_stacks(
            &h.caller,
            ListStacksInput {
                stack_status_filter: vec!["DELETE_COMPLETE".into()],
                next_token: None,
            },
        )
        .await
        .unwrap();
    assert!(only.stack_summaries.is_empty());
    let err = h
        .engine
        .list_stacks(
            &h.caller,
            ListStacksInput {
                stack_status_filter: vec!["NOPE".into()],
                next_token: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, "ValidationError");
    assert!(err.message.contains("stackStatusFilter"));
}

#[tokio::test]
async fn update_skips_unchanged_updates_in_place_and_replaces_on_create_only_change() {
    let h = Harness::new();
    let v1 = template(
        json!({
            "Same": {"Type": FAKE, "Properties": {"X": 1}},
            "Mut": {"Type": FAKE, "Properties": {"X": 1}},
            "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "q-one"}},
            "Gone": {"Type": FAKE}
        }),
        json!(null),
    );
    h.create("u", &v1).await.unwrap();
    let same = h.physical("u", "Same").await;
    let mutp = h.physical("u", "Mut").await;
    let gone = h.physical("u", "Gone").await;
    let v2 = template(
        json!({
            "Same": {"Type": FAKE, "Properties": {"X": 1}},
            "Mut": {"Type": FAKE, "Properties": {"X": 2}},
            "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "q-two"}},
            "New": {"Type": FAKE}
        }),
        json!(null),
    );
    let before = h.fake.calls().len();
    h.update("u", &v2).await.unwrap();
    assert_eq!(h.status("u").await, StackStatus::UPDATE_COMPLETE);
    let calls = h.fake.calls()[before..].to_vec();
    assert!(
        !calls.iter().any(|c| c.ends_with(" Same")),
        "unchanged resource untouched: {calls:?}"
    );
    assert!(calls.contains(&"update Mut".to_string()));
    assert_eq!(h.physical("u", "Mut").await, mutp);
    assert_eq!(h.fake.props(&mutp).unwrap()["X"], json!(2));
    // Replacement: new queue created, old one deleted in the cleanup phase.
    assert_eq!(h.physical("u", "Q").await, "q-two");
    assert!(h.fake.exists("q-two") && !h.fake.exists("q-one"));
    assert!(!h.fake.exists(&gone), "removed resource deleted");
    assert!(h.fake.exists(&same));
    let events = h.events("u").await;
    let statuses: Vec<&str> = events
        .iter()
        .filter(|e| e.0 == "u")
        .map(|e| e.1.as_str())
        .collect();
    assert!(statuses.ends_with(&[
        "UPDATE_IN_PROGRESS",
        "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS",
        "UPDATE_COMPLETE"
    ]));
    assert!(events.iter().any(|e| e.0 == "Q" && e.2.as_deref() == Some("Requested update requires the creation of a new physical resource; hence creating one.")));
    let names: Vec<String> = h
        .resources("u")
        .await
        .into_iter()
        .map(|r| r.logical_resource_id)
        .collect();
    assert!(!names.contains(&"Gone".to_string()) && names.contains(&"New".to_string()));
    // Nothing changed now.
    let err = h.update("u", &v2).await.unwrap_err();
    assert_eq!(err.message, "No updates are to be performed.");
}

#[tokio::test]
async fn update_failure_rolls_back_resources_template_and_parameters() {
    let h = Harness::new();
    let v1 = json!({
        "Parameters": {"P": {"Type": "String"}},
        "Resources": {
            "Mut": {"Type": FAKE, "Properties": {"X": {"Ref": "P"}}},
            "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "q-a"}}
        }
    })
    .to_string();
    h.engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "ur".into(),
                template_body: Some(v1.clone()),
                parameters: vec![Parameter {
                    key: "P".into(),
                    value: Some("one".into()),
                    use_previous_value: false,
                }],
                tags: vec![Tag {
                    key: "k".into(),
                    value: "v1".into(),
                }],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let mutp = h.physical("ur", "Mut").await;
    let v2 = json!({
        "Parameters": {"P": {"Type": "String"}},
        "Resources": {
            "Mut": {"Type": FAKE, "Properties": {"X": {"Ref": "P"}}},
            "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "q-b"}},
            "Added": {"Type": FAKE},
            "Bad": {"Type": FAKE, "DependsOn": ["Mut", "Q", "Added"], "Properties": {"Fail": true}}
        }
    })
    .to_string();
    h.engine
        .update_stack(
            &h.caller,
            UpdateStackInput {
                stack_name: "ur".into(),
                template_body: Some(v2),
                parameters: vec![Parameter {
                    key: "P".into(),
                    value: Some("two".into()),
                    use_previous_value: false,
                }],
                tags: Some(vec![Tag {
                    key: "k".into(),
                    value: "v2".into(),
                }]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let s = h.stack("ur").await;
    assert_eq!(s.stack_status, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    assert_eq!(s.stack_status_reason, None);
    assert_eq!(s.parameters[0].value, "one");
    assert_eq!(
        s.tags,
        vec![Tag {
            key: "k".into(),
            value: "v1".into()
        }]
    );
    let tpl = h
        .engine
        .get_template(
            &h.caller,
            GetTemplateInput {
                stack_name: Some("ur".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(tpl.template_body, v1);
    // Resources are back: the in-place change reverted, the replacement and the addition gone.
    assert_eq!(h.fake.props(&mutp).unwrap()["X"], json!("one"));
    assert!(h.fake.exists("q-a") && !h.fake.exists("q-b"));
    assert_eq!(h.fake.count(), 2);
    assert_eq!(h.physical("ur", "Q").await, "q-a");
    let names: Vec<String> = h
        .resources("ur")
        .await
        .into_iter()
        .map(|r| r.logical_resource_id)
        .collect();
    assert_eq!(names, vec!["Mut", "Q"]);
    let events = h.events("ur").await;
    assert!(events.iter().any(|e| e.1 == "UPDATE_ROLLBACK_IN_PROGRESS"
        && e.2.as_deref() == Some("The following resource(s) failed to create: [Bad].")));
    assert!(
        events
            .iter()
            .any(|e| e.1 == "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS")
    );
    // Updatable again.
    h.engine
        .update_stack(
            &h.caller,
            UpdateStackInput {
                stack_name: "ur".into(),
                use_previous_template: true,
                parameters: vec![Parameter {
                    key: "P".into(),
                    value: None,
                    use_previous_value: true,
                }],
                tags: Some(vec![Tag {
                    key: "k".into(),
                    value: "v3".into(),
                }]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("ur").await, StackStatus::UPDATE_COMPLETE);
}

#[tokio::test]
async fn deletion_policies_retain_and_delete_skipped() {
    let h = Harness::new();
    let t = template(
        json!({
            "Kept": {"Type": FAKE, "DeletionPolicy": "Retain"},
            "Snap": {"Type": FAKE, "DeletionPolicy": "Snapshot"},
            "Rxc": {"Type": FAKE, "DeletionPolicy": "RetainExceptOnCreate"},
            "Gone": {"Type": FAKE}
        }),
        json!(null),
    );
    let id = h.create("dp", &t).await.unwrap();
    h.delete("dp").await;
    let events = h.events(&id).await;
    for l in ["Kept", "Snap", "Rxc"] {
        assert!(
            events.iter().any(|e| e.0 == l && e.1 == "DELETE_SKIPPED"),
            "{l}"
        );
    }
    assert_eq!(h.fake.count(), 3);
}

#[tokio::test]
async fn retain_except_on_create_deletes_during_create_rollback() {
    let h = Harness::new();
    let t = template(
        json!({
            "Rxc": {"Type": FAKE, "DeletionPolicy": "RetainExceptOnCreate"},
            "Kept": {"Type": FAKE, "DeletionPolicy": "Retain"},
            "Bad": {"Type": FAKE, "DependsOn": ["Rxc", "Kept"], "Properties": {"Fail": true}}
        }),
        json!(null),
    );
    h.create("rx", &t).await.unwrap();
    assert_eq!(h.status("rx").await, StackStatus::ROLLBACK_COMPLETE);
    let kept = h.physical("rx", "Kept").await;
    let rxc = h.physical("rx", "Rxc").await;
    assert!(h.fake.exists(&kept), "Retain survives a create rollback");
    assert!(
        !h.fake.exists(&rxc),
        "RetainExceptOnCreate is deleted by a create rollback"
    );
    // The operation option applies the same to Retain.
    h.delete("rx").await;
    h.engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "rx2".into(),
                template_body: Some(template(
                    json!({
                        "Kept": {"Type": FAKE, "DeletionPolicy": "Retain"},
                        "Bad": {"Type": FAKE, "DependsOn": "Kept", "Properties": {"Fail": true}}
                    }),
                    json!(null),
                )),
                retain_except_on_create: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let kept2 = h.physical("rx2", "Kept").await;
    assert!(!h.fake.exists(&kept2));
}

#[tokio::test]
async fn update_replace_policy_retain_orphans_the_old_resource() {
    let h = Harness::new();
    let v = |name: &str| {
        template(
            json!({"Q": {"Type": "AWS::SQS::Queue", "UpdateReplacePolicy": "Retain", "Properties": {"QueueName": name}}}),
            json!(null),
        )
    };
    h.create("urp", &v("old-q")).await.unwrap();
    h.update("urp", &v("new-q")).await.unwrap();
    assert_eq!(h.status("urp").await, StackStatus::UPDATE_COMPLETE);
    assert!(h.fake.exists("old-q") && h.fake.exists("new-q"));
    assert!(
        h.events("urp")
            .await
            .iter()
            .any(|e| e.0 == "Q" && e.1 == "DELETE_SKIPPED")
    );
}

#[tokio::test]
async fn delete_failure_stops_at_delete_failed_and_retry_resumes() {
    let h = Harness::new();
    let t = template(
        json!({"A": {"Type": FAKE, "Properties": {"Name": "full-bucket"}}, "B": {"Type": FAKE}}),
        json!(null),
    );
    h.create("df", &t).await.unwrap();
    h.fake
        .block_delete
        .lock()
        .unwrap()
        .insert("full-bucket".into());
    h.delete("df").await;
    let s = h.stack("df").await;
    assert_eq!(s.stack_status, StackStatus::DELETE_FAILED);
    assert_eq!(
        s.stack_status_reason.as_deref(),
        Some("The following resource(s) failed to delete: [A].")
    );
    let a = h.resource("df", "A").await;
    assert_eq!(a.resource_status, "DELETE_FAILED");
    assert_eq!(
        a.resource_status_reason.as_deref(),
        Some("full-bucket is not empty")
    );
    assert!(h.fake.exists("full-bucket"));
    h.fake.block_delete.lock().unwrap().clear();
    h.delete("df").await;
    assert_eq!(h.fake.count(), 0);
    let err = h
        .engine
        .describe_stacks(
            &h.caller,
            DescribeStacksInput {
                stack_name: Some("df".into()),
                next_token: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, "ValidationError");
}

#[tokio::test]
async fn absent_resource_is_a_successful_delete() {
    let h = Harness::new();
    let t = template(json!({"A": {"Type": FAKE}}), json!(null));
    h.create("ab", &t).await.unwrap();
    let a = h.physical("ab", "A").await;
    h.fake.live.lock().unwrap().remove(&a);
    h.delete("ab").await;
    let list = h
        .engine
        .list_stacks(&h.caller, ListStacksInput::default())
        .await
        .unwrap();
    assert_eq!(
        list.stack_summaries[0].stack_status,
        StackStatus::DELETE_COMPLETE
    );
}

#[tokio::test]
async fn cleanup_failure_does_not_fail_a_good_update() {
    let h = Harness::new();
    h.create(
        "cf",
        &template(
            json!({"A": {"Type": FAKE, "Properties": {"Name": "stuck"}}, "B": {"Type": FAKE}}),
            json!(null),
        ),
    )
    .await
    .unwrap();
    h.fake.block_delete.lock().unwrap().insert("stuck".into());
    h.update("cf", &template(json!({"B": {"Type": FAKE}}), json!(null)))
        .await
        .unwrap();
    assert_eq!(h.status("cf").await, StackStatus::UPDATE_COMPLETE);
    assert!(
        h.events("cf")
            .await
            .iter()
            .any(|e| e.0 == "A" && e.1 == "DELETE_FAILED")
    );
    assert_eq!(h.resources("cf").await.len(), 1);
}

#[tokio::test]
async fn update_rollback_failed_then_continue_update_rollback() {
    let h = Harness::new();
    h.create("cr", &template(json!({"A": {"Type": FAKE}}), json!(null)))
        .await
        .unwrap();
    let v2 = template(
        json!({
            "A": {"Type": FAKE},
            "Stuck": {"Type": FAKE, "Properties": {"Name": "stuck-thing"}},
            "Bad": {"Type": FAKE, "DependsOn": "Stuck", "Properties": {"Fail": true}}
        }),
        json!(null),
    );
    h.fake
        .block_delete
        .lock()
        .unwrap()
        .insert("stuck-thing".into());
    h.update("cr", &v2).await.unwrap();
    assert_eq!(h.status("cr").await, StackStatus::UPDATE_ROLLBACK_FAILED);
    // Every update path is refused there.
    let err = h.update("cr", &v2).await.unwrap_err();
    assert!(
        err.message
            .contains("UPDATE_ROLLBACK_FAILED state and can not be updated.")
    );
    // A skip naming a resource that did not fail is refused.
    let err = h
        .engine
        .continue_update_rollback(
            &h.caller,
            ContinueUpdateRollbackInput {
                stack_name: "cr".into(),
                resources_to_skip: vec!["A".into()],
                client_request_token: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, "ValidationError");
    h.fake.block_delete.lock().unwrap().clear();
    h.engine
        .continue_update_rollback(
            &h.caller,
            ContinueUpdateRollbackInput {
                stack_name: "cr".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("cr").await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    assert!(!h.fake.exists("stuck-thing"));
    assert_eq!(h.resources("cr").await.len(), 1);
    // From a stable state ContinueUpdateRollback is refused.
    let err = h
        .engine
        .continue_update_rollback(
            &h.caller,
            ContinueUpdateRollbackInput {
                stack_name: "cr".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(
        err.message
            .contains("UPDATE_ROLLBACK_COMPLETE state and can not be updated.")
    );
}

#[tokio::test]
async fn continue_update_rollback_skips_a_resource() {
    let h = Harness::new();
    h.create("sk", &template(json!({"A": {"Type": FAKE}}), json!(null)))
        .await
        .unwrap();
    h.fake.block_delete.lock().unwrap().insert("stuck-2".into());
    h.update(
        "sk",
        &template(json!({"A": {"Type": FAKE}, "Stuck": {"Type": FAKE, "Properties": {"Name": "stuck-2"}}, "Bad": {"Type": FAKE, "DependsOn": "Stuck", "Properties": {"Fail": true}}}), json!(null)),
    )
    .await
    .unwrap();
    assert_eq!(h.status("sk").await, StackStatus::UPDATE_ROLLBACK_FAILED);
    h.engine
        .continue_update_rollback(
            &h.caller,
            ContinueUpdateRollbackInput {
                stack_name: "sk".into(),
                resources_to_skip: vec!["Stuck".into()],
                client_request_token: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("sk").await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    assert!(
        h.fake.exists("stuck-2"),
        "a skipped resource is left untouched"
    );
}

#[tokio::test]
async fn rollback_stack_from_failed_states() {
    let h = Harness::new();
    h.engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "rs".into(),
                template_body: Some(template(json!({"G": {"Type": FAKE}, "B": {"Type": FAKE, "DependsOn": "G", "Properties": {"Fail": true}}}), json!(null))),
                disable_rollback: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("rs").await, StackStatus::CREATE_FAILED);
    assert_eq!(h.fake.count(), 1);
    h.engine
        .rollback_stack(
            &h.caller,
            RollbackStackInput {
                stack_name: "rs".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("rs").await, StackStatus::ROLLBACK_COMPLETE);
    assert_eq!(h.fake.count(), 0);
    assert!(
        h.events("rs")
            .await
            .iter()
            .any(|e| e.1 == "ROLLBACK_IN_PROGRESS" && e.2.as_deref() == Some("User Initiated"))
    );
    let err = h
        .engine
        .rollback_stack(
            &h.caller,
            RollbackStackInput {
                stack_name: "rs".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, "ValidationError");
    // UPDATE_FAILED (DisableRollback update) → RollbackStack restores the previous generation.
    h.create(
        "rs2",
        &template(
            json!({"A": {"Type": FAKE, "Properties": {"X": 1}}}),
            json!(null),
        ),
    )
    .await
    .unwrap();
    let a = h.physical("rs2", "A").await;
    h.engine
        .update_stack(
            &h.caller,
            UpdateStackInput {
                stack_name: "rs2".into(),
                template_body: Some(template(json!({"A": {"Type": FAKE, "Properties": {"X": 2}}, "B": {"Type": FAKE, "DependsOn": "A", "Properties": {"Fail": true}}}), json!(null))),
                disable_rollback: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("rs2").await, StackStatus::UPDATE_FAILED);
    assert_eq!(h.fake.props(&a).unwrap()["X"], json!(2));
    h.engine
        .rollback_stack(
            &h.caller,
            RollbackStackInput {
                stack_name: "rs2".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("rs2").await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    assert_eq!(h.fake.props(&a).unwrap()["X"], json!(1));
}

#[tokio::test]
async fn stub_for_types_without_provider_and_strict_mode_fails() {
    let h = Harness::new();
    h.create(
        "st",
        &template(json!({"L": {"Type": "AWS::Lambda::Function"}}), json!(null)),
    )
    .await
    .unwrap();
    assert_eq!(h.status("st").await, StackStatus::CREATE_COMPLETE);
    assert_eq!(
        h.resource("st", "L")
            .await
            .resource_status_reason
            .as_deref(),
        Some("cumulo: AWS::Lambda::Function is not emulated; nothing was created")
    );
    let strict = Harness::with(
        std::sync::Arc::new(cumulo_store::Store::in_memory().unwrap()),
        EngineConfig {
            strict: true,
            ..config()
        },
    );
    strict
        .create(
            "st",
            &template(json!({"L": {"Type": "AWS::Lambda::Function"}}), json!(null)),
        )
        .await
        .unwrap();
    assert_eq!(strict.status("st").await, StackStatus::ROLLBACK_COMPLETE);
}

#[tokio::test]
async fn cdk_metadata_and_wait_condition_handle_are_built_in() {
    let h = Harness::new();
    h.create("bi", &template(json!({"M": {"Type": "AWS::CDK::Metadata", "Properties": {"Analytics": "v2"}}, "W": {"Type": "AWS::CloudFormation::WaitConditionHandle"}}), json!(null))).await.unwrap();
    assert_eq!(h.status("bi").await, StackStatus::CREATE_COMPLETE);
    assert!(
        h.resource("bi", "M")
            .await
            .resource_status_reason
            .unwrap()
            .starts_with("cumulo: AWS::CDK::Metadata")
    );
    // The handle's Ref is the URL its signals are PUT to, on the endpoint the caller used.
    assert!(
        h.physical("bi", "W")
            .await
            .starts_with("http://localhost:4566/_cumulo/cfn-signal/")
    );
}

#[tokio::test]
async fn template_limits_are_enforced_with_aws_messages() {
    let h = Harness::new();
    let big = format!(
        "{{\"Description\": \"{}\", \"Resources\": {{\"A\": {{\"Type\": \"{FAKE}\"}}}}}}",
        "x".repeat(51_200)
    );
    let err = h.create("big", &big).await.unwrap_err();
    assert_eq!(err.code, "ValidationError");
    assert!(
        err.message
            .contains("Member must have length less than or equal to 51200"),
        "{}",
        err.message
    );
    let t = fakes(501, json!(null));
    let err = h
        .engine
        .validate_template(
            &h.caller,
            TemplateInput {
                template_body: Some(t),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Template format error: Number of resources, 501, is greater than maximum allowed, 500"
    );
    let outputs: serde_json::Map<String, serde_json::Value> = (0..201)
        .map(|i| (format!("O{i}"), json!({"Value": "x"})))
        .collect();
    let params: serde_json::Map<String, serde_json::Value> = (0..201)
        .map(|i| (format!("P{i}"), json!({"Type": "String", "Default": "d"})))
        .collect();
    for (t, msg) in [
        (
            json!({"Resources": {"A": {"Type": FAKE}}, "Outputs": outputs}),
            "Template format error: Outputs count 201 is greater than max allowed 200.",
        ),
        (
            json!({"Resources": {"A": {"Type": FAKE}}, "Parameters": params}),
            "Template format error: Parameter count 201 is greater than max allowed 200.",
        ),
    ] {
        let err = h.create("lim", &t.to_string()).await.unwrap_err();
        assert_eq!(err.message, msg);
    }
    h.world.templates.lock().unwrap().insert(
        "https://b.s3.amazonaws.com/huge".into(),
        format!("{{\"Description\": \"{}\"}}", "y".repeat(1_000_000)),
    );
    let err = h
        .engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "huge".into(),
                template_url: Some("https://b.s3.amazonaws.com/huge".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Template may not exceed 1000000 bytes in size."
    );
    assert!(
        h.engine
            .list_stacks(&h.caller, ListStacksInput::default())
            .await
            .unwrap()
            .stack_summaries
            .is_empty()
    );
}

#[tokio::test]
async fn capabilities_are_required_for_iam() {
    let h = Harness::new();
    let t = template(
        json!({"R": {"Type": "AWS::IAM::Role", "Properties": {"RoleName": "x"}}}),
        json!(null),
    );
    let err = h.create("iam", &t).await.unwrap_err();
    assert_eq!(err.code, "InsufficientCapabilitiesException");
    assert_eq!(
        err.message,
        "Requires capabilities : [CAPABILITY_NAMED_IAM]"
    );
}

#[tokio::test]
async fn independent_resources_are_provisioned_in_parallel() {
    let h = Harness::new();
    *h.fake.delay_ms.lock().unwrap() = 100;
    h.create("par", &fakes(8, json!(null))).await.unwrap();
    assert_eq!(h.settle("par").await, StackStatus::CREATE_COMPLETE);
    // All eight creates were running at the same moment: none waited for another.
    assert_eq!(h.fake.in_flight.lock().unwrap().1, 8);
}

#[tokio::test]
async fn cancel_update_stack_rolls_back() {
    let h = Harness::with(
        std::sync::Arc::new(cumulo_store::Store::in_memory().unwrap()),
        EngineConfig {
            sync_wait: std::time::Duration::ZERO,
            ..config()
        },
    );
    h.create("cu", &template(json!({"A": {"Type": FAKE}}), json!(null)))
        .await
        .unwrap();
    h.settle("cu").await;
    *h.fake.delay_ms.lock().unwrap() = 1000;
    h.update("cu", &template(json!({"A": {"Type": FAKE}, "B": {"Type": FAKE}, "C": {"Type": FAKE, "DependsOn": "B"}}), json!(null))).await.unwrap();
    // Cancel only once B is in flight, so there is a creation to cancel.
    h.await_event("cu", "B", "CREATE_IN_PROGRESS").await;
    h.engine
        .cancel_update_stack(
            &h.caller,
            CancelUpdateStackInput {
                stack_name: "cu".into(),
                client_request_token: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(h.settle("cu").await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    assert!(
        h.events("cu")
            .await
            .iter()
            .any(|e| e.1 == "UPDATE_ROLLBACK_IN_PROGRESS"
                && e.2.as_deref() == Some("Stack update cancelled"))
    );
    // What was in flight was cancelled, as AWS reports it.
    assert!(h.events("cu").await.iter().any(|e| e.0 == "B"
        && e.1 == "CREATE_FAILED"
        && e.2.as_deref() == Some("Resource creation cancelled")));
    assert_eq!(h.resources("cu").await.len(), 1);
    let err = h
        .engine
        .cancel_update_stack(
            &h.caller,
            CancelUpdateStackInput {
                stack_name: "cu".into(),
                client_request_token: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "CancelUpdateStack cannot be called from current stack status"
    );
}

#[tokio::test]
async fn replacing_a_custom_named_resource_is_refused() {
    let h = Harness::new();
    let v = |fifo: bool| {
        template(
            json!({"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "named-q", "FifoQueue": fifo}}}),
            json!(null),
        )
    };
    h.create("cn", &v(false)).await.unwrap();
    h.update("cn", &v(true)).await.unwrap();
    assert_eq!(h.status("cn").await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    let events = h.events("cn").await;
    assert!(events.iter().any(|e| e.0 == "Q" && e.1 == "UPDATE_FAILED" && e.2.as_deref() == Some("CloudFormation cannot update a stack when a custom-named resource requires replacing. Rename named-q and update the stack again.")));
    assert_eq!(h.fake.props("named-q").unwrap()["FifoQueue"], json!(false));
}

#[tokio::test]
async fn a_token_reused_by_another_operation_is_refused() {
    let h = Harness::new();
    h.create("tk", &two_things()).await.unwrap();
    let update = |v: i64| UpdateStackInput {
        stack_name: "tk".into(),
        template_body: Some(template(
            json!({"A": {"Type": FAKE, "Properties": {"V": v}}}),
            json!(null),
        )),
        client_request_token: Some("t-1".into()),
        ..Default::default()
    };
    h.engine.update_stack(&h.caller, update(1)).await.unwrap();
    // The same request again is an idempotent retry.
    h.engine.update_stack(&h.caller, update(1)).await.unwrap();
    assert_eq!(
        h.fake.calls().iter().filter(|c| *c == "update A").count(),
        1
    );
    h.engine
        .create_change_set(
            &h.caller,
            CreateChangeSetInput {
                stack_name: "tk".into(),
                change_set_name: "c".into(),
                template_body: Some(template(
                    json!({"A": {"Type": FAKE, "Properties": {"V": 2}}}),
                    json!(null),
                )),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let err = h
        .engine
        .execute_change_set(
            &h.caller,
            ExecuteChangeSetInput {
                change_set: ChangeSetRef {
                    change_set_name: "c".into(),
                    stack_name: Some("tk".into()),
                },
                client_request_token: Some("t-1".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, "TokenAlreadyExistsException");
}

#[tokio::test]
async fn a_panicking_provider_fails_its_resource() {
    let h = Harness::new();
    h.create(
        "pp",
        &template(
            json!({"A": {"Type": FAKE}, "P": {"Type": PANICS, "DependsOn": "A"}}),
            json!(null),
        ),
    )
    .await
    .unwrap();
    assert_eq!(h.status("pp").await, StackStatus::ROLLBACK_COMPLETE);
    assert_eq!(h.fake.count(), 0);
    let events = h.events("pp").await;
    assert!(events.iter().any(|e| e.0 == "P"
        && e.1 == "CREATE_FAILED"
        && e.2.as_deref() == Some("cumulo: the Test::Fake::Panics provider failed unexpectedly")));
}

#[tokio::test]
async fn retain_resources_gets_a_delete_failed_stack_deleted() {
    let h = Harness::new();
    let id = h
        .create("rr", &template(json!({"A": {"Type": FAKE, "Properties": {"Name": "refuses"}}, "B": {"Type": FAKE}}), json!(null)))
        .await
        .unwrap();
    let retain = DeleteStackInput {
        stack_name: "rr".into(),
        retain_resources: vec!["A".into()],
        client_request_token: None,
    };
    let err = h
        .engine
        .delete_stack(&h.caller, retain.clone())
        .await
        .unwrap_err();
    assert_eq!(
        err.code, "ValidationError",
        "RetainResources only from DELETE_FAILED"
    );
    h.fake.block_delete.lock().unwrap().insert("refuses".into());
    h.delete("rr").await;
    assert_eq!(h.status("rr").await, StackStatus::DELETE_FAILED);
    h.engine.delete_stack(&h.caller, retain).await.unwrap();
    assert_eq!(
        h.stack(&id).await.stack_status,
        StackStatus::DELETE_COMPLETE
    );
    assert!(h.fake.exists("refuses"));
    assert!(
        h.events(&id)
            .await
            .iter()
            .any(|e| e.0 == "A" && e.1 == "DELETE_SKIPPED")
    );
}

#[tokio::test]
async fn termination_protection_and_a_running_operation_refuse_deletion() {
    let h = Harness::new();
    h.engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "tp".into(),
                template_body: Some(template(json!({"A": {"Type": FAKE}}), json!(null))),
                enable_termination_protection: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let err = h
        .engine
        .delete_stack(
            &h.caller,
            DeleteStackInput {
                stack_name: "tp".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Stack [tp] cannot be deleted while TerminationProtection is enabled"
    );
    assert_eq!(h.status("tp").await, StackStatus::CREATE_COMPLETE);
    // While an update runs, neither a delete nor another update may start (a create in
    // progress is cancelled by a delete: see signals.rs).
    let h = Harness::with(
        std::sync::Arc::new(cumulo_store::Store::in_memory().unwrap()),
        EngineConfig {
            sync_wait: std::time::Duration::from_millis(20),
            ..config()
        },
    );
    let t = template(json!({"A": {"Type": FAKE}}), json!(null));
    h.create("busy", &t).await.unwrap();
    assert_eq!(h.settle("busy").await, StackStatus::CREATE_COMPLETE);
    let hang = std::sync::Arc::new(tokio::sync::Notify::new());
    *h.fake.hang.lock().unwrap() = Some(hang.clone());
    let t2 = template(
        json!({"A": {"Type": FAKE}, "B": {"Type": FAKE}}),
        json!(null),
    );
    h.update("busy", &t2).await.unwrap();
    assert_eq!(h.status("busy").await, StackStatus::UPDATE_IN_PROGRESS);
    let err = h
        .engine
        .delete_stack(
            &h.caller,
            DeleteStackInput {
                stack_name: "busy".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Stack [busy] cannot be deleted while in status UPDATE_IN_PROGRESS"
    );
    let err = h.update("busy", &t).await.unwrap_err();
    assert!(
        err.message
            .ends_with("is in UPDATE_IN_PROGRESS state and can not be updated.")
    );
    *h.fake.hang.lock().unwrap() = None;
    hang.notify_waiters();
    assert_eq!(h.settle("busy").await, StackStatus::UPDATE_COMPLETE);
}

#[tokio::test]
async fn resumed_updates_leave_no_superseded_replacement_behind() {
    let h = Harness::new();
    let t = |name: &str, fail: bool| {
        template(
            json!({
                "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": name}},
                "Bad": {"Type": FAKE, "DependsOn": "Q", "Properties": {"FailUpdate": fail}}
            }),
            json!(null),
        )
    };
    let update = |name: &str, fail: bool| UpdateStackInput {
        stack_name: "re".into(),
        template_body: Some(t(name, fail)),
        disable_rollback: Some(true),
        ..Default::default()
    };
    h.create("re", &t("r0", false)).await.unwrap();
    h.engine
        .update_stack(&h.caller, update("r1", true))
        .await
        .unwrap();
    assert_eq!(h.status("re").await, StackStatus::UPDATE_FAILED);
    h.engine
        .update_stack(&h.caller, update("r2", true))
        .await
        .unwrap();
    assert_eq!(h.status("re").await, StackStatus::UPDATE_FAILED);
    assert!(h.fake.exists("r0") && h.fake.exists("r1") && h.fake.exists("r2"));
    // Rolling back returns to r0 and deletes both replacements.
    h.engine
        .rollback_stack(
            &h.caller,
            RollbackStackInput {
                stack_name: "re".into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("re").await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    assert_eq!(h.physical("re", "Q").await, "r0");
    assert!(h.fake.exists("r0") && !h.fake.exists("r1") && !h.fake.exists("r2"));
    // Resumed twice to success: only the final queue is left.
    h.engine
        .update_stack(&h.caller, update("r3", true))
        .await
        .unwrap();
    h.engine
        .update_stack(&h.caller, update("r4", false))
        .await
        .unwrap();
    assert_eq!(h.status("re").await, StackStatus::UPDATE_COMPLETE);
    assert_eq!(h.physical("re", "Q").await, "r4");
    let queues: Vec<String> = h
        .fake
        .live
        .lock()
        .unwrap()
        .keys()
        .filter(|k| k.len() == 2)
        .cloned()
        .collect();
    assert_eq!(queues, vec!["r4"]);
}

#[tokio::test(start_paused = true)]
async fn timeout_in_minutes_cancels_the_create_and_rolls_back() {
    let h = Harness::new();
    let hang = std::sync::Arc::new(tokio::sync::Notify::new());
    *h.fake.hang.lock().unwrap() = Some(hang);
    let id = h
        .engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "to".into(),
                template_body: Some(template(json!({"Slow": {"Type": FAKE}}), json!(null))),
                timeout_in_minutes: Some(1),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .stack_id;
    h.engine.wait_for_stack(&id).await;
    assert_eq!(h.status("to").await, StackStatus::ROLLBACK_COMPLETE);
    let events = h.events("to").await;
    assert!(events.iter().any(|e| e.0 == "Slow"
        && e.1 == "CREATE_FAILED"
        && e.2.as_deref() == Some("Resource creation cancelled")));
    assert!(events.iter().any(|e| e.1 == "ROLLBACK_IN_PROGRESS"
        && e.2.as_deref()
            == Some(
                "Stack creation time exceeded the specified timeout. Rollback requested by user."
            )));
    let err = h
        .engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "to0".into(),
                template_body: Some(template(json!({"A": {"Type": FAKE}}), json!(null))),
                timeout_in_minutes: Some(0),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(err.message.contains("timeoutInMinutes"));
}

#[tokio::test]
async fn a_failure_cancels_what_is_in_flight_and_the_rollback_deletes_it() {
    let h = Harness::new();
    let id = h
        .create(
            "cx",
            &template(
                json!({
                    "Slow": {"Type": FAKE, "Properties": {"Name": "slow", "DelayMs": 2000}},
                    "Bad": {"Type": FAKE, "Properties": {"Fail": true}},
                }),
                json!(null),
            ),
        )
        .await
        .unwrap();
    h.engine.wait_for_stack(&id).await;
    assert_eq!(h.status("cx").await, StackStatus::ROLLBACK_COMPLETE);
    let events = h.events("cx").await;
    assert!(
        events.iter().any(|e| e.0 == "Slow"
            && e.1 == "CREATE_FAILED"
            && e.2.as_deref() == Some("Resource creation cancelled")),
        "{events:?}"
    );
    // Slow never reported CREATE_COMPLETE; what its provider made was deleted by the rollback.
    assert!(
        !events
            .iter()
            .any(|e| e.0 == "Slow" && e.1 == "CREATE_COMPLETE")
    );
    assert!(
        events
            .iter()
            .any(|e| e.0 == "Slow" && e.1 == "DELETE_COMPLETE")
    );
    assert!(!h.fake.exists("slow"));
    assert!(events.iter().any(|e| e.1 == "ROLLBACK_IN_PROGRESS"
        && e.2.as_deref()
            == Some("The following resource(s) failed to create: [Bad, Slow]. Rollback requested by user.")));
}

#[tokio::test]
async fn an_update_failure_cancels_in_flight_updates_and_reverts_them() {
    let h = Harness::new();
    h.create(
        "ux",
        &template(
            json!({
                "Slow": {"Type": FAKE, "Properties": {"Name": "slow", "V": 1}},
                "Other": {"Type": FAKE, "Properties": {"Name": "other"}},
            }),
            json!(null),
        ),
    )
    .await
    .unwrap();
    assert_eq!(h.settle("ux").await, StackStatus::CREATE_COMPLETE);
    *h.fake.delay_ms.lock().unwrap() = 300;
    h.update(
        "ux",
        &template(
            json!({
                "Slow": {"Type": FAKE, "Properties": {"Name": "slow", "V": 2, "Slow": true}},
                "Other": {"Type": FAKE, "Properties": {"Name": "other", "FailUpdate": true}},
                "New": {"Type": FAKE, "Properties": {"Name": "new"}},
            }),
            json!(null),
        ),
    )
    .await
    .unwrap();
    assert_eq!(h.settle("ux").await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    let events = h.events("ux").await;
    assert!(
        events.iter().any(|e| e.0 == "New"
            && e.1 == "CREATE_FAILED"
            && e.2.as_deref() == Some("Resource creation cancelled")),
        "{events:?}"
    );
    // The create that was cut short left nothing behind.
    assert!(!h.fake.exists("new"));
    assert_eq!(h.fake.props("slow").unwrap()["V"], json!(1));
}

/// DescribeStackEvents pages newest first, 100 at a time; a NextToken keeps its place when
/// events are recorded between two calls (the next page neither repeats nor skips what the
/// first page left), and a token that is not one is refused.
#[tokio::test]
async fn event_pages_hold_their_place_while_events_are_added() {
    let h = Harness::new();
    let things = |size: i64| fakes(60, json!({ "Size": size }));
    h.create("pages", &things(1)).await.unwrap();
    assert_eq!(h.settle("pages").await, StackStatus::CREATE_COMPLETE);
    let page = |token: Option<String>| {
        h.engine.describe_stack_events(
            &h.caller,
            DescribeStackEventsInput {
                stack_name: "pages".into(),
                next_token: token,
            },
        )
    };
    // 2 stack events and 3 per resource (in progress, initiated, complete).
    let first = page(None).await.unwrap();
    assert_eq!(first.stack_events.len(), 100);
    assert_eq!(first.stack_events[0].resource_status, "CREATE_COMPLETE");
    assert_eq!(first.stack_events[0].logical_resource_id, "pages");
    let token = first.next_token.clone().expect("a second page");
    // An update records 123 more events (with its cleanup phase) before the second page.
    h.update("pages", &things(2)).await.unwrap();
    assert_eq!(h.settle("pages").await, StackStatus::UPDATE_COMPLETE);
    let second = page(Some(token)).await.unwrap();
    assert_eq!(second.next_token, None);
    // The two pages, as the harness lists events: (logical id, status, reason), each of the
    // create's unique (one resource's three events differ in status or reason).
    let mut seen: Vec<(String, String, Option<String>)> = first
        .stack_events
        .into_iter()
        .chain(second.stack_events)
        .map(|e| {
            (
                e.logical_resource_id,
                e.resource_status,
                e.resource_status_reason,
            )
        })
        .collect();
    seen.reverse();
    let all = h.events("pages").await;
    assert_eq!(all.len(), 182 + 123);
    assert_eq!(
        seen,
        all[..182],
        "the create's events, each once, newest first"
    );
    let err = page(Some("not-a-token".into())).await.unwrap_err();
    assert_eq!(err.code, "ValidationError");
}

/// UpdateStack with new stack tags only: every resource whose type takes tags (the registry
/// schemas' `taggable`) is handed the update, with the new tags; the others are not touched.
#[tokio::test]
async fn new_stack_tags_update_taggable_resources_only() {
    let h = Harness::new();
    let t = json!({
        "Resources": {
            "Mut": {"Type": FAKE},
            "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "tagged-q"}}
        }
    })
    .to_string();
    let tag = |v: &str| {
        vec![Tag {
            key: "k".into(),
            value: v.into(),
        }]
    };
    h.engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "tg".into(),
                template_body: Some(t),
                tags: tag("v1"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let before = h.fake.calls().len();
    h.engine
        .update_stack(
            &h.caller,
            UpdateStackInput {
                stack_name: "tg".into(),
                use_previous_template: true,
                tags: Some(tag("v2")),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("tg").await, StackStatus::UPDATE_COMPLETE);
    let calls = h.fake.calls()[before..].to_vec();
    assert!(calls.iter().any(|c| c.starts_with("update Q")), "{calls:?}");
    assert!(
        !calls.iter().any(|c| c.starts_with("update Mut")),
        "{calls:?}"
    );
}

#[tokio::test]
async fn stack_tags_in_the_aws_namespace_are_refused() {
    let h = Harness::new();
    let e = h
        .engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "awstag".into(),
                template_body: Some(json!({"Resources": {"M": {"Type": FAKE}}}).to_string()),
                tags: vec![Tag {
                    key: "AWS:cloudformation:stack-name".into(),
                    value: "x".into(),
                }],
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, "ValidationError");
    assert_eq!(
        e.message,
        "aws: prefixed tag key names are not allowed for external use."
    );
    assert_eq!(h.fake.count(), 0);
}
