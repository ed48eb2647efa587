//! Change sets with IncludeNestedStacks over two levels of nesting: root -> Mid -> Leaf.

mod support;

use cumulo_engine::*;
use serde_json::json;
use support::*;

const MID_URL: &str = "https://bucket.s3.amazonaws.com/mid.json";
const LEAF_URL: &str = "https://bucket.s3.amazonaws.com/leaf.json";

fn with_parameter(t: String) -> String {
    t.replacen('{', "{\"Parameters\": {\"In\": {\"Type\": \"String\"}},", 1)
}

fn leaf() -> String {
    with_parameter(template(
        json!({"C": {"Type": FAKE, "Properties": {"Tag": {"Ref": "In"}}}}),
        json!({"LeafOut": {"Value": {"Ref": "C"}}}),
    ))
}

fn mid() -> String {
    with_parameter(template(
        json!({"Leaf": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": LEAF_URL, "Parameters": {"In": {"Ref": "In"}}}}}),
        json!({"MidOut": {"Value": {"Fn::GetAtt": ["Leaf", "Outputs.LeafOut"]}}}),
    ))
}

fn root(value: &str) -> String {
    template(
        json!({"Mid": {"Type": "AWS::CloudFormation::Stack", "Properties": {"TemplateURL": MID_URL, "Parameters": {"In": value}}}}),
        json!({"Out": {"Value": {"Fn::GetAtt": ["Mid", "Outputs.MidOut"]}}}),
    )
}

fn harness() -> Harness {
    let h = Harness::new();
    let mut templates = h.world.templates.lock().unwrap();
    templates.insert(MID_URL.into(), mid());
    templates.insert(LEAF_URL.into(), leaf());
    drop(templates);
    h
}

fn nested_input(kind: &str, body: &str) -> CreateChangeSetInput {
    CreateChangeSetInput {
        stack_name: "app".into(),
        change_set_name: "cs1".into(),
        template_body: Some(body.into()),
        change_set_type: Some(kind.into()),
        include_nested_stacks: true,
        ..Default::default()
    }
}

async fn describe(h: &Harness, id: &str) -> ChangeSetView {
    try_describe(h, id).await.unwrap()
}

async fn try_describe(h: &Harness, id: &str) -> Result<ChangeSetView, EngineError> {
    h.engine
        .describe_change_set(
            &h.caller,
            DescribeChangeSetInput {
                change_set: by_arn(id),
                next_token: None,
                include_property_values: false,
            },
        )
        .await
}

fn by_arn(id: &str) -> ChangeSetRef {
    ChangeSetRef {
        change_set_name: id.into(),
        stack_name: None,
    }
}

async fn execute(h: &Harness, id: &str) -> Result<(), EngineError> {
    h.engine
        .execute_change_set(
            &h.caller,
            ExecuteChangeSetInput {
                change_set: by_arn(id),
                ..Default::default()
            },
        )
        .await
}

/// The nested change set a resource change links to.
fn link(cs: &ChangeSetView, logical: &str) -> String {
    cs.changes
        .iter()
        .find(|c| c.logical_resource_id == logical)
        .and_then(|c| c.change_set_id.clone())
        .unwrap_or_else(|| panic!("{logical} has no nested change set in {cs:?}"))
}

/// Waits (polling) for a change set's execution to end.
async fn executed(h: &Harness, id: &str) -> String {
    for _ in 0..500 {
        let s = describe(h, id).await.execution_status;
        if s != "EXECUTE_IN_PROGRESS" {
            return s;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("change set {id} never finished executing");
}

fn assert_nested(cs: &ChangeSetView, parent: &str, root: &str) {
    assert_eq!(cs.parent_change_set_id.as_deref(), Some(parent));
    assert_eq!(cs.root_change_set_id.as_deref(), Some(root));
    assert_eq!(
        (
            cs.status.as_str(),
            cs.execution_status.as_str(),
            cs.status_reason.as_deref()
        ),
        (
            "CREATE_COMPLETE",
            "UNAVAILABLE",
            Some("Executable from root change set")
        )
    );
    assert!(cs.include_nested_stacks);
}

#[tokio::test]
async fn create_change_set_plans_every_level_and_executes_them_as_one() {
    let h = harness();
    let out = h
        .engine
        .create_change_set(&h.caller, nested_input("CREATE", &root("hello")))
        .await
        .unwrap();
    let top = describe(&h, &out.id).await;
    assert_eq!(top.execution_status, "AVAILABLE");
    assert_eq!(top.parent_change_set_id, None);
    let mid_cs = describe(&h, &link(&top, "Mid")).await;
    assert_nested(&mid_cs, &out.id, &out.id);
    assert_eq!(mid_cs.changes[0].action, "Add");
    let leaf_cs = describe(&h, &link(&mid_cs, "Leaf")).await;
    assert_nested(&leaf_cs, &mid_cs.change_set_id, &out.id);
    assert_eq!(leaf_cs.changes.len(), 1);
    assert_eq!(
        (
            leaf_cs.changes[0].action.as_str(),
            leaf_cs.changes[0].logical_resource_id.as_str()
        ),
        ("Add", "C")
    );
    // The nested stacks exist already, in REVIEW_IN_PROGRESS, under their parents.
    let mid_stack = h.stack(&mid_cs.stack_id).await;
    assert_eq!(mid_stack.stack_status, StackStatus::REVIEW_IN_PROGRESS);
    assert_eq!(mid_stack.parent_id.as_deref(), Some(out.stack_id.as_str()));
    let leaf_stack = h.stack(&leaf_cs.stack_id).await;
    assert_eq!(
        leaf_stack.parent_id.as_deref(),
        Some(mid_cs.stack_id.as_str())
    );
    assert_eq!(leaf_stack.root_id.as_deref(), Some(out.stack_id.as_str()));
    // Only the root executes, and only the root deletes.
    let err = execute(&h, &leaf_cs.change_set_id).await.unwrap_err();
    assert_eq!(err.code, "InvalidChangeSetStatus");
    let err = h
        .engine
        .delete_change_set(&h.caller, by_arn(&mid_cs.change_set_id))
        .await
        .unwrap_err();
    assert_eq!(err.code, "InvalidChangeSetStatus");
    execute(&h, &out.id).await.unwrap();
    assert_eq!(h.settle("app").await, StackStatus::CREATE_COMPLETE);
    assert_eq!(executed(&h, &out.id).await, "EXECUTE_COMPLETE");
    // The stacks the change sets showed are the ones created.
    assert_eq!(h.physical("app", "Mid").await, mid_cs.stack_id);
    assert_eq!(h.physical(&mid_cs.stack_id, "Leaf").await, leaf_cs.stack_id);
    let c = h.physical(&leaf_cs.stack_id, "C").await;
    assert_eq!(h.fake.props(&c).unwrap()["Tag"], json!("hello"));
    assert_eq!(h.stack("app").await.outputs[0].value, c);
    for id in [&mid_cs.change_set_id, &leaf_cs.change_set_id] {
        assert_eq!(executed(&h, id).await, "EXECUTE_COMPLETE");
    }
}

#[tokio::test]
async fn update_change_set_links_each_changed_nested_stack_and_applies_them() {
    let h = harness();
    h.create("app", &root("hello")).await.unwrap();
    let mid_id = h.physical("app", "Mid").await;
    let leaf_id = h.physical(&mid_id, "Leaf").await;
    let c = h.physical(&leaf_id, "C").await;
    let out = h
        .engine
        .create_change_set(&h.caller, nested_input("UPDATE", &root("bye")))
        .await
        .unwrap();
    let top = describe(&h, &out.id).await;
    let mid_change = &top.changes[0];
    assert_eq!(
        (
            mid_change.action.as_str(),
            mid_change.replacement.as_deref()
        ),
        ("Modify", Some("False"))
    );
    assert!(
        mid_change
            .details
            .iter()
            .any(|d| d.change_source == "Automatic" && d.evaluation == "Dynamic"),
        "{mid_change:?}"
    );
    let mid_cs = describe(&h, &link(&top, "Mid")).await;
    assert_nested(&mid_cs, &out.id, &out.id);
    assert_eq!(mid_cs.stack_id, mid_id);
    let leaf_cs = describe(&h, &link(&mid_cs, "Leaf")).await;
    assert_nested(&leaf_cs, &mid_cs.change_set_id, &out.id);
    assert_eq!(leaf_cs.stack_id, leaf_id);
    let tag = &leaf_cs.changes[0];
    assert_eq!(
        (tag.action.as_str(), tag.logical_resource_id.as_str()),
        ("Modify", "C")
    );
    assert_eq!(tag.details[0].target.name.as_deref(), Some("Tag"));
    // Listed on their own stacks.
    let listed = h
        .engine
        .list_change_sets(
            &h.caller,
            ListChangeSetsInput {
                stack_name: leaf_id.clone(),
                next_token: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        listed.summaries[0].root_change_set_id.as_deref(),
        Some(out.id.as_str())
    );
    execute(&h, &out.id).await.unwrap();
    assert_eq!(h.settle("app").await, StackStatus::UPDATE_COMPLETE);
    assert_eq!(h.fake.props(&c).unwrap()["Tag"], json!("bye"));
    for id in [&out.id, &mid_cs.change_set_id, &leaf_cs.change_set_id] {
        assert_eq!(executed(&h, id).await, "EXECUTE_COMPLETE");
    }
    // The statuses survive a restart.
    let again = h.restarted("req-2");
    assert_eq!(
        describe(&again, &leaf_cs.change_set_id)
            .await
            .root_change_set_id
            .as_deref(),
        Some(out.id.as_str())
    );
}

#[tokio::test]
async fn deleting_the_root_deletes_the_hierarchy_and_the_stacks_it_made() {
    let h = harness();
    let out = h
        .engine
        .create_change_set(&h.caller, nested_input("CREATE", &root("hello")))
        .await
        .unwrap();
    let top = describe(&h, &out.id).await;
    let mid_cs = describe(&h, &link(&top, "Mid")).await;
    let leaf_cs = describe(&h, &link(&mid_cs, "Leaf")).await;
    h.engine
        .delete_change_set(&h.caller, by_arn(&out.id))
        .await
        .unwrap();
    for id in [&mid_cs.change_set_id, &leaf_cs.change_set_id] {
        let err = try_describe(&h, id).await.unwrap_err();
        assert_eq!(err.code, "ChangeSetNotFound");
    }
    for stack in [&mid_cs.stack_id, &leaf_cs.stack_id] {
        assert_eq!(
            h.stack(stack).await.stack_status,
            StackStatus::DELETE_COMPLETE
        );
    }
    // The root's own REVIEW_IN_PROGRESS stack stays, as AWS keeps it.
    assert_eq!(h.status("app").await, StackStatus::REVIEW_IN_PROGRESS);
}

#[tokio::test]
async fn a_nested_template_changed_behind_the_same_url_is_planned_and_applied() {
    let h = harness();
    h.create("app", &root("hello")).await.unwrap();
    let mid_id = h.physical("app", "Mid").await;
    let leaf_id = h.physical(&mid_id, "Leaf").await;
    let c = h.physical(&leaf_id, "C").await;
    let changed = leaf().replace("{\"Ref\":\"In\"}", "\"fixed\"");
    assert_ne!(changed, leaf());
    h.world
        .templates
        .lock()
        .unwrap()
        .insert(LEAF_URL.into(), changed);
    let out = h
        .engine
        .create_change_set(&h.caller, nested_input("UPDATE", &root("hello")))
        .await
        .unwrap();
    let top = describe(&h, &out.id).await;
    assert_eq!(top.status, "CREATE_COMPLETE", "{top:?}");
    let mid_cs = describe(&h, &link(&top, "Mid")).await;
    let leaf_cs = describe(&h, &link(&mid_cs, "Leaf")).await;
    assert_eq!(leaf_cs.changes[0].logical_resource_id, "C");
    execute(&h, &out.id).await.unwrap();
    assert_eq!(h.settle("app").await, StackStatus::UPDATE_COMPLETE);
    assert_eq!(h.fake.props(&c).unwrap()["Tag"], json!("fixed"));
}

/// A nested stack the parent's template drops: the root lists its AWS::CloudFormation::Stack
/// resource as a Remove with no nested change set (ChangeSetType has no DELETE: AWS plans
/// nested change sets for the nested stacks it creates or updates), nothing is planned in the
/// nested stacks, and executing the root deletes the whole nested hierarchy.
#[tokio::test]
async fn a_removed_nested_stack_is_a_remove_without_a_nested_change_set() {
    let h = harness();
    h.create("app", &root("hello")).await.unwrap();
    let mid_id = h.physical("app", "Mid").await;
    let leaf_id = h.physical(&mid_id, "Leaf").await;
    let c = h.physical(&leaf_id, "C").await;
    let without = template(json!({"Keep": {"Type": FAKE}}), json!(null));
    let out = h
        .engine
        .create_change_set(&h.caller, nested_input("UPDATE", &without))
        .await
        .unwrap();
    let top = describe(&h, &out.id).await;
    assert_eq!(top.execution_status, "AVAILABLE");
    let mid = top
        .changes
        .iter()
        .find(|c| c.logical_resource_id == "Mid")
        .expect("Mid listed");
    assert_eq!(
        (
            mid.action.as_str(),
            mid.physical_resource_id.as_deref(),
            mid.change_set_id.as_deref()
        ),
        ("Remove", Some(mid_id.as_str()), None)
    );
    for stack in [&mid_id, &leaf_id] {
        let listed = h
            .engine
            .list_change_sets(
                &h.caller,
                ListChangeSetsInput {
                    stack_name: stack.clone(),
                    next_token: None,
                },
            )
            .await
            .unwrap();
        assert!(listed.summaries.is_empty(), "{listed:?}");
    }
    execute(&h, &out.id).await.unwrap();
    assert_eq!(h.settle("app").await, StackStatus::UPDATE_COMPLETE);
    assert_eq!(executed(&h, &out.id).await, "EXECUTE_COMPLETE");
    for stack in [&mid_id, &leaf_id] {
        assert_eq!(h.status(stack).await, StackStatus::DELETE_COMPLETE);
    }
    assert!(!h.fake.exists(&c), "the leaf's resource is gone");
}
