//! Change sets, exports, nested stacks, dynamic references and restart recovery.

mod support;

use cumulo_engine::*;
use serde_json::json;
use std::sync::Arc;
use support::*;

fn cs_input(stack: &str, name: &str, kind: &str, body: &str) -> CreateChangeSetInput {
    CreateChangeSetInput {
        stack_name: stack.into(),
        change_set_name: name.into(),
        template_body: Some(body.into()),
        change_set_type: Some(kind.into()),
        ..Default::default()
    }
}

fn cs_ref(stack: &str, name: &str) -> ChangeSetRef {
    ChangeSetRef {
        change_set_name: name.into(),
        stack_name: Some(stack.into()),
    }
}

#[tokio::test]
async fn create_change_set_makes_review_placeholder_and_executes_to_outputs() {
    let h = Harness::new();
    let t = template(
        json!({"A": {"Type": FAKE}}),
        json!({"Out": {"Value": {"Ref": "A"}}}),
    );
    let out = h
        .engine
        .create_change_set(&h.caller, cs_input("cs", "c1", "CREATE", &t))
        .await
        .unwrap();
    assert!(out.id.contains(":changeSet/c1/"));
    assert_eq!(h.status("cs").await, StackStatus::REVIEW_IN_PROGRESS);
    // CreateStack against the placeholder still fails.
    let err = h.create("cs", &t).await.unwrap_err();
    assert_eq!(err.code, "AlreadyExistsException");
    let d = h
        .engine
        .describe_change_set(
            &h.caller,
            DescribeChangeSetInput {
                change_set: cs_ref("cs", "c1"),
                next_token: None,
                include_property_values: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        (d.status.as_str(), d.execution_status.as_str()),
        ("CREATE_COMPLETE", "AVAILABLE")
    );
    assert_eq!(d.changes.len(), 1);
    assert_eq!(d.changes[0].action, "Add");
    assert_eq!(d.changes[0].logical_resource_id, "A");
    // By ARN alone too.
    let by_arn = h
        .engine
        .describe_change_set(
            &h.caller,
            DescribeChangeSetInput {
                change_set: ChangeSetRef {
                    change_set_name: out.id.clone(),
                    stack_name: None,
                },
                next_token: None,
                include_property_values: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(by_arn.change_set_name, "c1");
    h.engine
        .execute_change_set(
            &h.caller,
            ExecuteChangeSetInput {
                change_set: cs_ref("cs", "c1"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let s = h.stack("cs").await;
    assert_eq!(s.stack_status, StackStatus::CREATE_COMPLETE);
    assert_eq!(s.outputs[0].value, h.physical("cs", "A").await);
    assert_eq!(s.change_set_id.as_deref(), Some(out.id.as_str()));
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let d = h
        .engine
        .describe_change_set(
            &h.caller,
            DescribeChangeSetInput {
                change_set: cs_ref("cs", "c1"),
                next_token: None,
                include_property_values: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(d.execution_status, "EXECUTE_COMPLETE");
    // Executed again: refused.
    let err = h
        .engine
        .execute_change_set(
            &h.caller,
            ExecuteChangeSetInput {
                change_set: cs_ref("cs", "c1"),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, "InvalidChangeSetStatus");
    // A second CREATE change set on a live stack is refused, in AWS's words.
    let err = h
        .engine
        .create_change_set(&h.caller, cs_input("cs", "c2", "CREATE", &t))
        .await
        .unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            "ValidationError",
            "Stack [cs] already exists and cannot be created again with the changeSet [c2]."
        )
    );
}

#[tokio::test]
async fn update_change_set_reports_modify_replacement_and_remove() {
    let h = Harness::new();
    let v1 = template(
        json!({
            "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "cq-1", "Delay": 1}},
            "User": {"Type": FAKE, "Properties": {"Queue": {"Ref": "Q"}}},
            "Mut": {"Type": FAKE, "Properties": {"X": 1}},
            "Old": {"Type": FAKE}
        }),
        json!(null),
    );
    h.create("uc", &v1).await.unwrap();
    let v2 = template(
        json!({
            "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "cq-2", "Delay": 1}},
            "User": {"Type": FAKE, "Properties": {"Queue": {"Ref": "Q"}}},
            "Mut": {"Type": FAKE, "Properties": {"X": 2}},
            "Fresh": {"Type": FAKE}
        }),
        json!(null),
    );
    h.engine
        .create_change_set(&h.caller, cs_input("uc", "up", "UPDATE", &v2))
        .await
        .unwrap();
    let d = h
        .engine
        .describe_change_set(
            &h.caller,
            DescribeChangeSetInput {
                change_set: cs_ref("uc", "up"),
                next_token: None,
                include_property_values: false,
            },
        )
        .await
        .unwrap();
    let get = |l: &str| {
        d.changes
            .iter()
            .find(|c| c.logical_resource_id == l)
            .unwrap()
    };
    assert_eq!(get("Q").action, "Modify");
    assert_eq!(get("Q").replacement.as_deref(), Some("True"));
    assert_eq!(get("Q").scope, vec!["Properties"]);
    let qd = &get("Q").details[0];
    assert_eq!(qd.target.name.as_deref(), Some("QueueName"));
    assert_eq!(qd.target.requires_recreation.as_deref(), Some("Always"));
    assert_eq!(
        (qd.evaluation.as_str(), qd.change_source.as_str()),
        ("Static", "DirectModification")
    );
    assert_eq!(get("Mut").replacement.as_deref(), Some("False"));
    // User's Ref to the replaced queue changes dynamically.
    let ud = &get("User").details[0];
    assert_eq!(
        (ud.evaluation.as_str(), ud.change_source.as_str()),
        ("Dynamic", "ResourceReference")
    );
    assert_eq!(ud.causing_entity.as_deref(), Some("Q"));
    assert_eq!(get("Old").action, "Remove");
    assert_eq!(get("Fresh").action, "Add");
    // Nothing applied before execution.
    assert!(h.fake.exists("cq-1") && !h.fake.exists("cq-2"));
    let list = h
        .engine
        .list_change_sets(
            &h.caller,
            ListChangeSetsInput {
                stack_name: "uc".into(),
                next_token: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(list.summaries.len(), 1);
    h.engine
        .execute_change_set(
            &h.caller,
            ExecuteChangeSetInput {
                change_set: cs_ref("uc", "up"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("uc").await, StackStatus::UPDATE_COMPLETE);
    assert!(h.fake.exists("cq-2") && !h.fake.exists("cq-1"));
    assert_eq!(
        h.fake.props(&h.physical("uc", "User").await).unwrap()["Queue"],
        json!("cq-2")
    );
}

#[tokio::test]
async fn empty_change_set_fails_and_names_can_be_reused_after_delete() {
    let h = Harness::new();
    let t = template(json!({"A": {"Type": FAKE}}), json!(null));
    h.create("ec", &t).await.unwrap();
    h.engine
        .create_change_set(&h.caller, cs_input("ec", "same", "UPDATE", &t))
        .await
        .unwrap();
    let d = h
        .engine
        .describe_change_set(
            &h.caller,
            DescribeChangeSetInput {
                change_set: cs_ref("ec", "same"),
                next_token: None,
                include_property_values: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(d.status, "FAILED");
    assert_eq!(
        d.status_reason.as_deref(),
        Some(
            "The submitted information didn't contain changes. Submit different information to create a change set."
        )
    );
    // Names are unique per stack.
    let err = h
        .engine
        .create_change_set(&h.caller, cs_input("ec", "same", "UPDATE", &t))
        .await
        .unwrap_err();
    assert_eq!(err.code, "AlreadyExistsException");
    // The CDK's redeploy: delete and recreate a change set of the same name.
    h.engine
        .delete_change_set(&h.caller, cs_ref("ec", "same"))
        .await
        .unwrap();
    let err = h
        .engine
        .describe_change_set(
            &h.caller,
            DescribeChangeSetInput {
                change_set: cs_ref("ec", "same"),
                next_token: None,
                include_property_values: false,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        ("ChangeSetNotFound", "ChangeSet [same] does not exist")
    );
    // Deleting it again succeeds, as AWS's does for a name the stack has no change set of
    // (the CDK deletes its change-set name before every create); an unknown stack is an error.
    h.engine
        .delete_change_set(&h.caller, cs_ref("ec", "same"))
        .await
        .unwrap();
    let err = h
        .engine
        .delete_change_set(&h.caller, cs_ref("nosuchstack", "same"))
        .await
        .unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        ("ValidationError", "Stack [nosuchstack] does not exist")
    );
    let t2 = template(
        json!({"A": {"Type": FAKE, "Properties": {"X": 1}}}),
        json!(null),
    );
    h.engine
        .create_change_set(&h.caller, cs_input("ec", "same", "UPDATE", &t2))
        .await
        .unwrap();
    h.engine
        .execute_change_set(
            &h.caller,
            ExecuteChangeSetInput {
                change_set: cs_ref("ec", "same"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("ec").await, StackStatus::UPDATE_COMPLETE);
    // IMPORT names the resources it imports.
    let err = h
        .engine
        .create_change_set(&h.caller, cs_input("ec", "imp", "IMPORT", &t2))
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "ResourcesToImport must be specified for a change set of type IMPORT"
    );
    // An UPDATE change set for a missing stack.
    let err = h
        .engine
        .create_change_set(&h.caller, cs_input("nope", "x", "UPDATE", &t2))
        .await
        .unwrap_err();
    assert_eq!(err.message, "Stack [nope] does not exist");
    // DescribeStackEvents words a missing stack the same way (DescribeStacks does not).
    let err = h
        .engine
        .describe_stack_events(
            &h.caller,
            DescribeStackEventsInput {
                stack_name: "nope".into(),
                next_token: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, "ValidationError");
    assert_eq!(err.message, "Stack [nope] does not exist");
}

#[tokio::test]
async fn exports_imports_and_their_guards() {
    let h = Harness::new();
    let exporter = template(
        json!({"A": {"Type": FAKE}}),
        json!({"O": {"Value": {"Ref": "A"}, "Export": {"Name": "shared-a"}}}),
    );
    let eid = h.create("exp", &exporter).await.unwrap();
    let a = h.physical("exp", "A").await;
    let exports = h.engine.list_exports(&h.caller, None).await.unwrap();
    assert_eq!(
        exports.exports,
        vec![Export {
            exporting_stack_id: eid.clone(),
            name: "shared-a".into(),
            value: a.clone()
        }]
    );
    // A second stack exporting the same name fails.
    h.create("dup", &exporter).await.unwrap();
    assert_eq!(h.status("dup").await, StackStatus::ROLLBACK_COMPLETE);
    assert!(
        h.events("dup")
            .await
            .iter()
            .any(|e| e.2.as_deref().is_some_and(
                |r| r.contains("Export with name shared-a is already exported by stack exp")
            ))
    );
    let importer = template(
        json!({"B": {"Type": FAKE, "Properties": {"Peer": {"Fn::ImportValue": "shared-a"}}}}),
        json!(null),
    );
    h.create("imp", &importer).await.unwrap();
    assert_eq!(
        h.fake.props(&h.physical("imp", "B").await).unwrap()["Peer"],
        json!(a)
    );
    let imports = h
        .engine
        .list_imports(
            &h.caller,
            ListImportsInput {
                export_name: "shared-a".into(),
                next_token: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(imports.imports, vec!["imp"]);
    // Removing an export in use fails the update; deleting its stack fails.
    h.update("exp", &template(json!({"A": {"Type": FAKE}}), json!(null)))
        .await
        .unwrap();
    assert_eq!(h.status("exp").await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    assert!(h.events("exp").await.iter().any(
        |e| e.2.as_deref() == Some("Export shared-a cannot be deleted as it is in use by imp")
    ));
    h.delete("exp").await;
    // As AWS: the deletion is refused in the background and the stack returns to its status.
    let s = h.stack("exp").await;
    assert_eq!(s.stack_status, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    assert_eq!(
        s.stack_status_reason.as_deref(),
        Some("Export shared-a cannot be deleted as it is in use by imp")
    );
    assert!(h.fake.exists(&a));
    h.delete("imp").await;
    let err = h
        .engine
        .list_imports(
            &h.caller,
            ListImportsInput {
                export_name: "shared-a".into(),
                next_token: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "Export 'shared-a' is not imported by any stack."
    );
    h.delete("exp").await;
    assert!(
        h.engine
            .list_exports(&h.caller, None)
            .await
            .unwrap()
            .exports
            .is_empty()
    );
}

const CHILD_URL: &str = "https://bucket.s3.amazonaws.com/child.json";

fn child_template(fail: bool) -> String {
    template(
        json!({"C": {"Type": FAKE, "Properties": {"Tag": {"Ref": "In"}, "Fail": fail}}}),
        json!({"ChildOut": {"Value": {"Fn::Join": ["-", ["out", {"Ref": "C"}]]}}}),
    )
    .replacen('{', "{\"Parameters\": {\"In\": {\"Type\": \"String\"}},", 1)
}

fn parent_template() -> String {
    template(
        json!({
            "Child": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": CHILD_URL, "Parameters": {"In": "hello"}}},
            "User": {"Type": FAKE, "Properties": {"FromChild": {"Fn::GetAtt": ["Child", "Outputs.ChildOut"]}}}
        }),
        json!(null),
    )
}

#[tokio::test]
async fn nested_stacks_create_expose_outputs_and_cascade_delete() {
    let h = Harness::new();
    h.world
        .templates
        .lock()
        .unwrap()
        .insert(CHILD_URL.into(), child_template(false));
    let pid = h.create("parent", &parent_template()).await.unwrap();
    assert_eq!(h.status("parent").await, StackStatus::CREATE_COMPLETE);
    let child_id = h.physical("parent", "Child").await;
    let child = h.stack(&child_id).await;
    assert!(
        child.stack_name.starts_with("parent-Child-"),
        "{}",
        child.stack_name
    );
    assert_eq!(child.parent_id.as_deref(), Some(pid.as_str()));
    assert_eq!(child.root_id.as_deref(), Some(pid.as_str()));
    let c = h.physical(&child_id, "C").await;
    assert_eq!(h.fake.props(&c).unwrap()["Tag"], json!("hello"));
    let user = h.physical("parent", "User").await;
    assert_eq!(
        h.fake.props(&user).unwrap()["FromChild"],
        json!(format!("out-{c}"))
    );
    // Child events carry the parent operation's token.
    let ev = h
        .engine
        .describe_stack_events(
            &h.caller,
            DescribeStackEventsInput {
                stack_name: child_id.clone(),
                next_token: None,
            },
        )
        .await
        .unwrap();
    assert!(
        ev.stack_events
            .iter()
            .all(|e| e.client_request_token == "req-1")
    );
    h.delete("parent").await;
    assert_eq!(
        h.stack(&child_id).await.stack_status,
        StackStatus::DELETE_COMPLETE
    );
    assert_eq!(h.fake.count(), 0);
}

#[tokio::test]
async fn nested_child_failure_rolls_the_parent_back() {
    let h = Harness::new();
    h.world
        .templates
        .lock()
        .unwrap()
        .insert(CHILD_URL.into(), child_template(true));
    h.create("p2", &parent_template()).await.unwrap();
    assert_eq!(h.status("p2").await, StackStatus::ROLLBACK_COMPLETE);
    let events = h.events("p2").await;
    let failed = events
        .iter()
        .find(|e| e.0 == "Child" && e.1 == "CREATE_FAILED")
        .unwrap();
    assert!(
        failed
            .2
            .as_ref()
            .unwrap()
            .contains("was not successfully created"),
        "{failed:?}"
    );
    assert_eq!(h.fake.count(), 0);
    // The failed child stack was deleted.
    let list = h
        .engine
        .list_stacks(&h.caller, ListStacksInput::default())
        .await
        .unwrap();
    let kid = list
        .stack_summaries
        .iter()
        .find(|s| s.stack_name.starts_with("p2-Child-"))
        .unwrap();
    assert_eq!(kid.stack_status, StackStatus::DELETE_COMPLETE);
}

#[tokio::test]
async fn nested_update_and_rollback_follow_the_parent() {
    let h = Harness::new();
    h.world
        .templates
        .lock()
        .unwrap()
        .insert(CHILD_URL.into(), child_template(false));
    h.create("p3", &parent_template()).await.unwrap();
    let child_id = h.physical("p3", "Child").await;
    let c = h.physical(&child_id, "C").await;
    // Parent update: the child's parameter changes, and a later resource fails.
    let t = parent_template().replace("\"hello\"", "\"bye\"").replacen(
        "\"User\"",
        &format!("\"Bad\": {{\"Type\": \"{FAKE}\", \"DependsOn\": \"Child\", \"Properties\": {{\"Fail\": true}}}}, \"User\""),
        1,
    );
    h.update("p3", &t).await.unwrap();
    assert_eq!(h.status("p3").await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    assert_eq!(
        h.fake.props(&c).unwrap()["Tag"],
        json!("hello"),
        "the child was updated back"
    );
    assert_eq!(h.stack(&child_id).await.parameters[0].value, "hello");
}

#[tokio::test]
async fn dynamic_references_are_resolved_once_and_never_stored() {
    let dir = std::env::temp_dir().join(format!("cumulo-engine-dynref-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Arc::new(cumulo_store::Store::open(&dir, Default::default()).unwrap());
    let h = Harness::with(store, config());
    h.world
        .ssm
        .lock()
        .unwrap()
        .insert("/app/secret".into(), "s3cr3t-{{resolve:ssm:/other}}".into());
    let t = template(
        json!({"A": {"Type": FAKE, "Properties": {"Password": {"Fn::Sub": "pw-{{resolve:ssm:/app/secret}}"}}}}),
        json!({"Shown": {"Value": "{{resolve:ssm:/app/secret}}"}}),
    );
    h.create("dr", &t).await.unwrap();
    assert_eq!(h.status("dr").await, StackStatus::CREATE_COMPLETE);
    let a = h.physical("dr", "A").await;
    // The provider got the value (never rescanned: the inner reference stays text).
    assert_eq!(
        h.fake.props(&a).unwrap()["Password"],
        json!("pw-s3cr3t-{{resolve:ssm:/other}}")
    );
    // Outputs and events keep the literal.
    assert_eq!(
        h.stack("dr").await.outputs[0].value,
        "{{resolve:ssm:/app/secret}}"
    );
    let ev = h
        .engine
        .describe_stack_events(
            &h.caller,
            DescribeStackEventsInput {
                stack_name: "dr".into(),
                next_token: None,
            },
        )
        .await
        .unwrap();
    assert!(
        ev.stack_events
            .iter()
            .filter_map(|e| e.resource_properties.as_ref())
            .any(|p| p.contains("pw-{{resolve:ssm:/app/secret}}"))
    );
    // Rotating the value behind an unchanged template is not a change.
    h.world
        .ssm
        .lock()
        .unwrap()
        .insert("/app/secret".into(), "rotated".into());
    let err = h.update("dr", &t).await.unwrap_err();
    assert_eq!(err.message, "No updates are to be performed.");
    // The store never saw the resolved value.
    drop(h);
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    let hay = String::from_utf8_lossy(&bytes);
    assert!(hay.contains("resolve:ssm:/app/secret"));
    assert!(
        !hay.contains("s3cr3t"),
        "resolved value written to the store"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn unresolvable_dynamic_reference_fails_the_resource_naming_it() {
    let h = Harness::new();
    h.create(
        "du",
        &template(
            json!({"A": {"Type": FAKE, "Properties": {"P": "{{resolve:ssm:/missing}}"}}}),
            json!(null),
        ),
    )
    .await
    .unwrap();
    assert_eq!(h.status("du").await, StackStatus::ROLLBACK_COMPLETE);
    let events = h.events("du").await;
    let failed = events
        .iter()
        .find(|e| e.0 == "A" && e.1 == "CREATE_FAILED")
        .unwrap();
    assert!(
        failed.2.as_ref().unwrap().contains("/missing"),
        "{failed:?}"
    );
}

#[tokio::test]
async fn restart_finishes_interrupted_operations_as_failed() {
    let store = Arc::new(cumulo_store::Store::in_memory().unwrap());
    let h = Harness::with(
        store.clone(),
        EngineConfig {
            sync_wait: std::time::Duration::from_millis(50),
            ..config()
        },
    );
    let hang = Arc::new(tokio::sync::Notify::new());
    *h.fake.hang.lock().unwrap() = Some(hang.clone());
    let id = h
        .create("rs", &template(json!({"A": {"Type": FAKE}}), json!(null)))
        .await
        .unwrap();
    assert_eq!(h.status("rs").await, StackStatus::CREATE_IN_PROGRESS);
    // A second engine over the same store is what a restarted process sees.
    let again = Harness::with(store, config());
    let s = again.stack("rs").await;
    assert_eq!(s.stack_status, StackStatus::CREATE_FAILED);
    assert_eq!(
        s.stack_status_reason.as_deref(),
        Some("cumulo: the server restarted while this operation was in progress")
    );
    assert_eq!(
        again.resource("rs", "A").await.resource_status,
        "CREATE_FAILED"
    );
    assert_eq!(s.stack_id, id);
    // Recoverable: CREATE_FAILED can be deleted.
    again.delete("rs").await;
    assert_eq!(
        again.stack(&id).await.stack_status,
        StackStatus::DELETE_COMPLETE
    );
    hang.notify_waiters();
}

#[tokio::test]
async fn state_survives_reload() {
    let store = Arc::new(cumulo_store::Store::in_memory().unwrap());
    let h = Harness::with(store.clone(), config());
    let t = template(
        json!({"A": {"Type": FAKE}}),
        json!({"O": {"Value": {"Ref": "A"}, "Export": {"Name": "e1"}}}),
    );
    let id = h.create("keep", &t).await.unwrap();
    h.engine
        .create_change_set(
            &h.caller,
            cs_input(
                "keep",
                "pending",
                "UPDATE",
                &template(
                    json!({"A": {"Type": FAKE, "Properties": {"X": 1}}}),
                    json!({"O": {"Value": {"Ref": "A"}, "Export": {"Name": "e1"}}}),
                ),
            ),
        )
        .await
        .unwrap();
    let before = h.events("keep").await;
    let again = Harness::with(store, config());
    let s = again.stack("keep").await;
    assert_eq!(
        (s.stack_id.as_str(), s.stack_status),
        (id.as_str(), StackStatus::CREATE_COMPLETE)
    );
    assert_eq!(again.events("keep").await, before);
    assert_eq!(
        again
            .engine
            .list_exports(&again.caller, None)
            .await
            .unwrap()
            .exports
            .len(),
        1
    );
    let d = again
        .engine
        .describe_change_set(
            &again.caller,
            DescribeChangeSetInput {
                change_set: cs_ref("keep", "pending"),
                next_token: None,
                include_property_values: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(d.changes[0].action, "Modify");
}

#[tokio::test]
async fn validate_template_and_summary() {
    let h = Harness::new();
    let t = json!({
        "Description": "d",
        "Parameters": {"P": {"Type": "String", "NoEcho": true, "Description": "pd"}, "Q": {"Type": "Number", "Default": "3"}},
        "Resources": {"R": {"Type": "AWS::IAM::Role"}, "Q": {"Type": "AWS::SQS::Queue"}}
    })
    .to_string();
    let v = h
        .engine
        .validate_template(
            &h.caller,
            TemplateInput {
                template_body: Some(t.clone()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(v.description.as_deref(), Some("d"));
    assert_eq!(v.capabilities, vec!["CAPABILITY_IAM"]);
    assert_eq!(v.parameters.len(), 2);
    assert!(v.parameters[0].no_echo);
    let s = h
        .engine
        .get_template_summary(
            &h.caller,
            TemplateInput {
                template_body: Some(t),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(s.resource_types, vec!["AWS::IAM::Role", "AWS::SQS::Queue"]);
    assert!(s.resource_identifier_summaries.iter().any(
        |r| r.resource_type == "AWS::SQS::Queue" && r.resource_identifiers == vec!["QueueUrl"]
    ));
    let err = h.engine.validate_template(&h.caller, TemplateInput { template_body: Some("{\"Resources\": {\"A\": {\"Type\": \"X\", \"Properties\": {\"P\": {\"Ref\": \"Nope\"}}}}}".into()), ..Default::default() }).await.unwrap_err();
    assert_eq!(err.code, "ValidationError");
    assert!(
        err.message
            .contains("Unresolved resource dependencies [Nope]"),
        "{}",
        err.message
    );
}

#[tokio::test]
async fn five_hundred_resources_create_update_delete_on_a_file_store() {
    let dir = std::env::temp_dir().join(format!("cumulo-engine-500-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = Arc::new(cumulo_store::Store::open(&dir, Default::default()).unwrap());
    let h = Harness::with(store, config());
    let body = |v: i64| fakes(500, json!({ "V": v }));
    let start = std::time::Instant::now();
    h.create("big", &body(1)).await.unwrap();
    assert_eq!(h.settle("big").await, StackStatus::CREATE_COMPLETE);
    let created = start.elapsed();
    h.update("big", &body(2)).await.unwrap();
    assert_eq!(h.settle("big").await, StackStatus::UPDATE_COMPLETE);
    let updated = start.elapsed() - created;
    // ListStackResources pages by 100.
    let mut seen = 0;
    let mut token = None;
    loop {
        let page = h
            .engine
            .list_stack_resources(
                &h.caller,
                ListStackResourcesInput {
                    stack_name: "big".into(),
                    next_token: token,
                },
            )
            .await
            .unwrap();
        assert!(page.stack_resource_summaries.len() <= 100);
        seen += page.stack_resource_summaries.len();
        token = page.next_token;
        if token.is_none() {
            break;
        }
    }
    assert_eq!(seen, 500);
    assert!(
        h.fake
            .live
            .lock()
            .unwrap()
            .values()
            .all(|p| p["V"] == json!(2))
    );
    h.delete("big").await;
    let list = h
        .engine
        .list_stacks(&h.caller, ListStacksInput::default())
        .await
        .unwrap();
    assert_eq!(
        list.stack_summaries[0].stack_status,
        StackStatus::DELETE_COMPLETE
    );
    assert_eq!(h.fake.count(), 0);
    eprintln!(
        "500 resources: create {created:?}, update {updated:?}, total {:?}",
        start.elapsed()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn continue_update_rollback_skips_inside_a_nested_stack() {
    let h = Harness::new();
    let v1 = template(json!({"C": {"Type": FAKE}}), json!(null));
    let v2 = template(
        json!({
            "C": {"Type": FAKE},
            "Stuck": {"Type": FAKE, "Properties": {"Name": "nested-stuck"}},
            "Bad": {"Type": FAKE, "DependsOn": "Stuck", "Properties": {"Fail": true}}
        }),
        json!(null),
    );
    h.world
        .templates
        .lock()
        .unwrap()
        .insert("https://b.s3.amazonaws.com/v1".into(), v1);
    h.world
        .templates
        .lock()
        .unwrap()
        .insert("https://b.s3.amazonaws.com/v2".into(), v2);
    let parent = |url: &str| {
        template(
            json!({"Child": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": url}}}),
            json!(null),
        )
    };
    h.create("np", &parent("https://b.s3.amazonaws.com/v1"))
        .await
        .unwrap();
    let child_id = h.physical("np", "Child").await;
    h.fake
        .block_delete
        .lock()
        .unwrap()
        .insert("nested-stuck".into());
    h.update("np", &parent("https://b.s3.amazonaws.com/v2"))
        .await
        .unwrap();
    assert_eq!(h.status("np").await, StackStatus::UPDATE_ROLLBACK_FAILED);
    assert_eq!(
        h.stack(&child_id).await.stack_status,
        StackStatus::UPDATE_ROLLBACK_FAILED
    );
    let err = h
        .engine
        .continue_update_rollback(
            &h.caller,
            ContinueUpdateRollbackInput {
                stack_name: "np".into(),
                resources_to_skip: vec!["Child.Nope".into()],
                client_request_token: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(err.code, "ValidationError");
    h.engine
        .continue_update_rollback(
            &h.caller,
            ContinueUpdateRollbackInput {
                stack_name: "np".into(),
                resources_to_skip: vec!["Child.Stuck".into()],
                client_request_token: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        h.stack(&child_id).await.stack_status,
        StackStatus::UPDATE_ROLLBACK_COMPLETE
    );
    assert_eq!(h.status("np").await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    assert!(
        h.fake.exists("nested-stuck"),
        "skipped resource left standing"
    );
    assert_eq!(h.resources(&child_id).await.len(), 1);
}

#[tokio::test]
async fn a_nested_stack_is_updated_when_its_template_changes_behind_the_same_url() {
    let h = Harness::new();
    h.world
        .templates
        .lock()
        .unwrap()
        .insert(CHILD_URL.into(), child_template(false));
    h.create("p4", &parent_template()).await.unwrap();
    let child_id = h.physical("p4", "Child").await;
    // Same URL, new child template; the parent changes elsewhere.
    let changed = child_template(false).replace("\"Tag\"", "\"Label\"");
    h.world
        .templates
        .lock()
        .unwrap()
        .insert(CHILD_URL.into(), changed);
    let t = parent_template().replace(
        "\"User\":{",
        "\"Extra\": {\"Type\": \"Test::Fake::Thing\"}, \"User\": {",
    );
    h.update("p4", &t).await.unwrap();
    assert_eq!(h.status("p4").await, StackStatus::UPDATE_COMPLETE);
    let c = h.physical(&child_id, "C").await;
    assert_eq!(h.fake.props(&c).unwrap()["Label"], json!("hello"));
    assert_eq!(
        h.stack(&child_id).await.stack_status,
        StackStatus::UPDATE_COMPLETE
    );
}

#[tokio::test]
async fn parameters_noecho_masked_and_ssm_types_resolved() {
    let h = Harness::new();
    h.world
        .ssm
        .lock()
        .unwrap()
        .insert("/cfg/size".into(), "42".into());
    let t = json!({
        "Parameters": {
            "Secret": {"Type": "String", "NoEcho": true},
            "Size": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/cfg/size"}
        },
        "Resources": {"A": {"Type": FAKE, "Properties": {"S": {"Ref": "Secret"}, "N": {"Ref": "Size"}}}}
    })
    .to_string();
    h.engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "pm".into(),
                template_body: Some(t),
                parameters: vec![Parameter {
                    key: "Secret".into(),
                    value: Some("hunter2".into()),
                    use_previous_value: false,
                }],
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let s = h.stack("pm").await;
    let get = |k: &str| s.parameters.iter().find(|p| p.key == k).unwrap().clone();
    assert_eq!(get("Secret").value, "****");
    assert_eq!(get("Size").value, "/cfg/size");
    assert_eq!(get("Size").resolved_value.as_deref(), Some("42"));
    let a = h.physical("pm", "A").await;
    assert_eq!(h.fake.props(&a).unwrap()["S"], json!("hunter2"));
    assert_eq!(h.fake.props(&a).unwrap()["N"], json!("42"));
    // A missing parameter value is AWS's ValidationError and creates nothing.
    let err = h
        .engine
        .create_stack(&h.caller, CreateStackInput { stack_name: "pm2".into(), template_body: Some(json!({"Parameters": {"P": {"Type": "String"}}, "Resources": {"A": {"Type": FAKE}}}).to_string()), ..Default::default() })
        .await
        .unwrap_err();
    assert_eq!(err.message, "Parameters: [P] must have values");
    assert!(
        h.engine
            .describe_stacks(
                &h.caller,
                DescribeStacksInput {
                    stack_name: Some("pm2".into()),
                    next_token: None
                }
            )
            .await
            .is_err()
    );
}

/// AWS lists a stack's resources by logical id in byte order, not in the template's order nor
/// in the order they were provisioned: the same after a create, an update that adds one, and a
/// restart.
#[tokio::test]
async fn resources_are_listed_by_logical_id() {
    let store = Arc::new(cumulo_store::Store::in_memory().unwrap());
    let h = Harness::with(store.clone(), config());
    let t = |v: i64, extra: bool| {
        let mut resources = json!({
            "Zeta": {"Type": FAKE},
            "Mid": {"Type": FAKE, "Properties": {"V": v}},
            "alpha": {"Type": FAKE},
            "Alpha": {"Type": FAKE},
        });
        if extra {
            resources["Beta"] = json!({"Type": FAKE});
        }
        template(resources, json!(null))
    };
    let names = |rs: Vec<StackResourceView>| {
        rs.into_iter()
            .map(|r| r.logical_resource_id)
            .collect::<Vec<_>>()
    };
    h.create("ord", &t(1, false)).await.unwrap();
    assert_eq!(
        names(h.resources("ord").await),
        ["Alpha", "Mid", "Zeta", "alpha"]
    );
    h.update("ord", &t(2, true)).await.unwrap();
    let listed = ["Alpha", "Beta", "Mid", "Zeta", "alpha"];
    assert_eq!(names(h.resources("ord").await), listed);
    let summaries = h
        .engine
        .list_stack_resources(
            &h.caller,
            ListStackResourcesInput {
                stack_name: "ord".into(),
                next_token: None,
            },
        )
        .await
        .unwrap()
        .stack_resource_summaries;
    assert_eq!(names(summaries), listed);
    let again = Harness::with(store, config());
    assert_eq!(names(again.resources("ord").await), listed);
}

#[tokio::test]
async fn conditional_replacement_and_execute_failed() {
    let h = Harness::new();
    let t = |name: &str, fail: bool| {
        template(
            json!({
                "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": name}},
                "Q2": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": {"Fn::Join": ["-", [{"Ref": "Q"}, "two"]]}}},
                "Later": {"Type": FAKE, "DependsOn": "Q2", "Properties": {"FailUpdate": fail}}
            }),
            json!(null),
        )
    };
    h.create("cr2", &t("first", false)).await.unwrap();
    h.engine
        .create_change_set(
            &h.caller,
            cs_input("cr2", "c", "UPDATE", &t("second", true)),
        )
        .await
        .unwrap();
    let d = h
        .engine
        .describe_change_set(
            &h.caller,
            DescribeChangeSetInput {
                change_set: cs_ref("cr2", "c"),
                next_token: None,
                include_property_values: false,
            },
        )
        .await
        .unwrap();
    let q2 = d
        .changes
        .iter()
        .find(|c| c.logical_resource_id == "Q2")
        .unwrap();
    assert_eq!(q2.replacement.as_deref(), Some("Conditional"));
    assert_eq!(
        q2.details[0].target.requires_recreation.as_deref(),
        Some("Conditionally")
    );
    assert_eq!(q2.details[0].evaluation, "Dynamic");
    h.engine
        .execute_change_set(
            &h.caller,
            ExecuteChangeSetInput {
                change_set: cs_ref("cr2", "c"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.status("cr2").await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let d = h
        .engine
        .describe_change_set(
            &h.caller,
            DescribeChangeSetInput {
                change_set: cs_ref("cr2", "c"),
                next_token: None,
                include_property_values: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(d.execution_status, "EXECUTE_FAILED");
    assert!(h.fake.exists("first") && h.fake.exists("first-two"));
    assert!(!h.fake.exists("second") && !h.fake.exists("second-two"));
}

#[tokio::test(start_paused = true)]
async fn an_aborted_parent_takes_its_half_created_nested_stack_down() {
    let h = Harness::new();
    h.world
        .templates
        .lock()
        .unwrap()
        .insert(CHILD_URL.into(), child_template(false));
    let hang = Arc::new(tokio::sync::Notify::new());
    *h.fake.hang.lock().unwrap() = Some(hang);
    let id = h
        .engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: "pt".into(),
                template_body: Some(parent_template()),
                timeout_in_minutes: Some(1),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .stack_id;
    h.engine.wait_for_stack(&id).await;
    assert_eq!(h.status("pt").await, StackStatus::ROLLBACK_COMPLETE);
    let list = h
        .engine
        .list_stacks(&h.caller, ListStacksInput::default())
        .await
        .unwrap();
    let child = list
        .stack_summaries
        .iter()
        .find(|s| s.parent_id.as_deref() == Some(id.as_str()))
        .unwrap();
    assert_eq!(child.stack_status, StackStatus::DELETE_COMPLETE);
}

/// Providers see the host of the call that started each operation, in nested stacks too, and
/// a later operation from another host (the delete) carries its own.
#[tokio::test]
async fn providers_see_the_callers_host_through_nested_stacks_and_deletes() {
    let mut h = Harness::new();
    h.world
        .templates
        .lock()
        .unwrap()
        .insert(CHILD_URL.into(), child_template(false));
    h.caller.host = "first.example:4566".into();
    h.create("parent", &parent_template()).await.unwrap();
    assert_eq!(h.status("parent").await, StackStatus::CREATE_COMPLETE);
    h.caller.host = "second.example:1234".into();
    h.delete("parent").await;
    assert_eq!(h.fake.count(), 0, "everything was deleted");
    let mut hosts = h.fake.hosts.lock().unwrap().clone();
    hosts.sort();
    assert_eq!(
        hosts,
        vec![
            "create C first.example:4566",
            "create User first.example:4566",
            "delete C second.example:1234",
            "delete User second.example:1234",
        ]
    );
}

/// Creates `name` from `v1`, then updates it to `failing` with DisableRollback: the stack
/// stops at UPDATE_FAILED holding its previous generation. Returns the stack id.
async fn failed_update_kept(h: &Harness, name: &str, v1: &str, failing: String) -> String {
    h.create(name, v1).await.unwrap();
    assert_eq!(h.settle(name).await, StackStatus::CREATE_COMPLETE);
    let id = h
        .engine
        .update_stack(
            &h.caller,
            UpdateStackInput {
                stack_name: name.into(),
                template_body: Some(failing),
                disable_rollback: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .stack_id;
    h.engine.wait_for_stack(&id).await;
    assert_eq!(h.status(name).await, StackStatus::UPDATE_FAILED);
    id
}

/// RollbackStack on `name` (stack `id`), to UPDATE_ROLLBACK_COMPLETE.
async fn rolled_back(h: &Harness, name: &str, id: &str) {
    h.engine
        .rollback_stack(
            &h.caller,
            RollbackStackInput {
                stack_name: name.into(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    h.engine.wait_for_stack(id).await;
    assert_eq!(h.status(name).await, StackStatus::UPDATE_ROLLBACK_COMPLETE);
}

/// A stack written before the previous generation had its own table (inline in the stack row)
/// still rolls back after the upgrade: the migration moves it to `cfn_previous`.
#[tokio::test]
async fn a_previous_generation_stored_inline_migrates_and_still_rolls_back() {
    let store = Arc::new(cumulo_store::Store::in_memory().unwrap());
    let h = Harness::with(store.clone(), config());
    let v1 = template(
        json!({"A": {"Type": FAKE, "Properties": {"Size": 1}}}),
        json!(null),
    );
    let failing = template(
        json!({"A": {"Type": FAKE, "Properties": {"Size": 2}},
               "Bad": {"Type": FAKE, "DependsOn": "A", "Properties": {"Fail": true}}}),
        json!(null),
    );
    let id = failed_update_kept(&h, "mig", &v1, failing).await;
    let a = h.physical("mig", "A").await;
    assert_eq!(h.fake.props(&a).unwrap()["Size"], json!(2));
    // Put the database back in the earlier shape: the generation inline with its records, no
    // cfn_previous and no cfn_previous_resources.
    store
        .write(|tx| {
            tx.execute_batch(
                "UPDATE cfn_stacks SET body = json_set(body, '$.previous',
                     json_set(json((SELECT body FROM cfn_previous WHERE cfn_previous.stack_id = cfn_stacks.stack_id)),
                         '$.resources',
                         json((SELECT json_group_object(logical_id, json(body)) FROM cfn_previous_resources r
                               WHERE r.stack_id = cfn_stacks.stack_id))))
                 WHERE stack_id IN (SELECT stack_id FROM cfn_previous);
                 DROP TABLE cfn_previous;
                 DROP TABLE cfn_previous_resources;
                 UPDATE schema_versions SET version = 1 WHERE owner = 'cfn';",
            )
        })
        .unwrap();
    let again = h.restarted("req-2");
    let moved: i64 = store
        .read(|c| c.query_row("SELECT count(*) FROM cfn_previous", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(
        moved, 1,
        "the migration moved the inline generation to its table"
    );
    rolled_back(&again, "mig", &id).await;
    assert_eq!(again.fake.props(&a).unwrap()["Size"], json!(1));
    let inline: i64 = store
        .read(|c| {
            c.query_row(
                "SELECT count(*) FROM cfn_stacks WHERE body LIKE '%\"previous\":%'",
                [],
                |r| r.get(0),
            )
        })
        .unwrap();
    assert_eq!(
        inline, 0,
        "new stack rows never carry the generation inline"
    );
}

/// An update's previous generation is stored as a copy of the stack's records taken when the
/// update starts; after a restart a rollback restores it from that copy, which then goes.
#[tokio::test]
async fn a_previous_generation_survives_a_restart_and_rolls_back() {
    let store = Arc::new(cumulo_store::Store::in_memory().unwrap());
    let h = Harness::with(store.clone(), config());
    let v1 = template(
        json!({"A": {"Type": FAKE, "Properties": {"Size": 1}},
               "B": {"Type": FAKE, "Properties": {"Size": 10}}}),
        json!(null),
    );
    let failing = template(
        json!({"A": {"Type": FAKE, "Properties": {"Size": 2}},
               "B": {"Type": FAKE, "Properties": {"Size": 20}},
               "Bad": {"Type": FAKE, "DependsOn": ["A", "B"], "Properties": {"Fail": true}}}),
        json!(null),
    );
    let id = failed_update_kept(&h, "gen", &v1, failing).await;
    let (a, b) = (h.physical("gen", "A").await, h.physical("gen", "B").await);
    assert_eq!(h.fake.props(&a).unwrap()["Size"], json!(2));
    let kept = |store: &cumulo_store::Store| -> Vec<(String, i64)> {
        store
            .read(|c| {
                c.prepare(
                    "SELECT logical_id, json_extract(body, '$.properties.Size')
                     FROM cfn_previous_resources ORDER BY rowid",
                )?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
            })
            .unwrap()
    };
    assert_eq!(
        kept(&store),
        [("A".to_string(), 1), ("B".to_string(), 10)],
        "the generation holds the records as they were when the update started"
    );
    let again = h.restarted("req-2");
    rolled_back(&again, "gen", &id).await;
    assert_eq!(again.fake.props(&a).unwrap()["Size"], json!(1));
    assert_eq!(again.fake.props(&b).unwrap()["Size"], json!(10));
    assert!(
        kept(&store).is_empty(),
        "the generation went with the rollback"
    );
}
