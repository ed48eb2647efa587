//! Change set Details as AWS lists their causes, and policy-only changes.

mod support;

use cumulo_engine::*;
use serde_json::json;
use support::*;

fn with_parameter(t: String) -> String {
    t.replacen(
        '{',
        "{\"Parameters\": {\"P\": {\"Type\": \"String\", \"Default\": \"one\"}},",
        1,
    )
}

async fn change_set(h: &Harness, body: &str, params: &[(&str, &str)]) -> ChangeSetView {
    let out = h
        .engine
        .create_change_set(
            &h.caller,
            CreateChangeSetInput {
                stack_name: "d".into(),
                change_set_name: "c1".into(),
                template_body: Some(body.into()),
                parameters: params
                    .iter()
                    .map(|(k, v)| Parameter {
                        key: (*k).into(),
                        value: Some((*v).into()),
                        use_previous_value: false,
                    })
                    .collect(),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    h.engine
        .describe_change_set(
            &h.caller,
            DescribeChangeSetInput {
                change_set: ChangeSetRef {
                    change_set_name: out.id,
                    stack_name: None,
                },
                next_token: None,
                include_property_values: true,
            },
        )
        .await
        .unwrap()
}

/// (ChangeSource, Evaluation, CausingEntity) of a resource's details.
fn causes(cs: &ChangeSetView, logical: &str) -> Vec<(String, String, Option<String>)> {
    let c = cs
        .changes
        .iter()
        .find(|c| c.logical_resource_id == logical)
        .unwrap_or_else(|| panic!("no change for {logical}: {cs:?}"));
    c.details
        .iter()
        .map(|d| {
            (
                d.change_source.clone(),
                d.evaluation.clone(),
                d.causing_entity.clone(),
            )
        })
        .collect()
}

fn cause(source: &str, evaluation: &str, entity: Option<&str>) -> (String, String, Option<String>) {
    (source.into(), evaluation.into(), entity.map(str::to_string))
}

#[tokio::test]
async fn details_name_parameter_attribute_and_reference_causes() {
    let h = Harness::new();
    let v1 = with_parameter(template(
        json!({
            "A": {"Type": FAKE, "Properties": {"Tag": {"Ref": "P"}}},
            "B": {"Type": FAKE, "Properties": {"FromA": {"Fn::GetAtt": ["A", "Arn"]}}},
            "C": {"Type": FAKE, "Properties": {"Plain": "x"}}
        }),
        json!(null),
    ));
    h.create("d", &v1).await.unwrap();
    // P changes (A's Tag follows it, so B's GetAtt of A is unknown); C's text changes to a Ref
    // of a resource the change set adds.
    let v2 = with_parameter(template(
        json!({
            "A": {"Type": FAKE, "Properties": {"Tag": {"Ref": "P"}}},
            "B": {"Type": FAKE, "Properties": {"FromA": {"Fn::GetAtt": ["A", "Arn"]}}},
            "N": {"Type": FAKE},
            "C": {"Type": FAKE, "Properties": {"Plain": {"Ref": "N"}}}
        }),
        json!(null),
    ));
    let cs = change_set(&h, &v2, &[("P", "two")]).await;
    assert_eq!(
        causes(&cs, "A"),
        vec![
            cause("ParameterReference", "Static", Some("P")),
            cause("DirectModification", "Dynamic", None)
        ]
    );
    let a = &cs
        .changes
        .iter()
        .find(|c| c.logical_resource_id == "A")
        .unwrap()
        .details[0]
        .target;
    assert_eq!(
        (
            a.path.as_deref(),
            a.before_value.as_deref(),
            a.after_value.as_deref()
        ),
        (Some("/Properties/Tag"), Some("one"), Some("two"))
    );
    assert_eq!(
        causes(&cs, "B"),
        vec![cause("ResourceAttribute", "Dynamic", Some("A.Arn"))]
    );
    assert_eq!(
        causes(&cs, "C"),
        vec![
            cause("DirectModification", "Static", None),
            cause("ResourceReference", "Dynamic", Some("N"))
        ]
    );
}

#[tokio::test]
async fn policy_only_changes_are_modifies_that_execution_applies() {
    let h = Harness::new();
    let v1 = template(
        json!({
            "A": {"Type": FAKE, "Properties": {"Tag": "t"}},
            "B": {"Type": FAKE, "Properties": {"FromA": {"Fn::GetAtt": ["A", "Arn"]}}}
        }),
        json!(null),
    );
    h.create("d", &v1).await.unwrap();
    let v2 = template(
        json!({
            "A": {"Type": FAKE, "DeletionPolicy": "Retain", "Metadata": {"Note": "kept"}, "Properties": {"Tag": "t"}},
            "B": {"Type": FAKE, "Properties": {"FromA": {"Fn::GetAtt": ["A", "Arn"]}}}
        }),
        json!(null),
    );
    let cs = change_set(&h, &v2, &[]).await;
    let a = cs
        .changes
        .iter()
        .find(|c| c.logical_resource_id == "A")
        .unwrap();
    assert_eq!(
        (a.action.as_str(), a.replacement.as_deref()),
        ("Modify", Some("False"))
    );
    assert_eq!(a.scope, vec!["DeletionPolicy", "Metadata"]);
    assert_eq!(a.details[0].target.after_value.as_deref(), Some("Retain"));
    // B's GetAtt of A shows as AWS shows it, no more.
    let b = cs
        .changes
        .iter()
        .find(|c| c.logical_resource_id == "B")
        .unwrap();
    assert_eq!(b.scope, vec!["Properties"]);
    assert_eq!(
        causes(&cs, "B"),
        vec![cause("ResourceAttribute", "Dynamic", Some("A.Arn"))]
    );
    h.engine
        .execute_change_set(
            &h.caller,
            ExecuteChangeSetInput {
                change_set: ChangeSetRef {
                    change_set_name: cs.change_set_id.clone(),
                    stack_name: None,
                },
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.settle("d").await, StackStatus::UPDATE_COMPLETE);
    // The policy took effect: deleting the stack keeps A.
    let a = h.physical("d", "A").await;
    h.delete("d").await;
    assert!(h.fake.exists(&a), "A was retained");
}

/// A change set that changes only the stack's tags lists a Modify for each resource whose type
/// takes tags (Scope `Tags`, a `Tags` detail, no replacement) and none for the others; the same
/// tags again are no change.
#[tokio::test]
async fn stack_tag_changes_are_modifies_of_taggable_resources() {
    let h = Harness::new();
    let body = json!({"Resources": {
        "Mut": {"Type": FAKE},
        "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "tagged-q"}}
    }})
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
                stack_name: "d".into(),
                template_body: Some(body.clone()),
                tags: tag("v1"),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let make = |name: &str, value: &str| CreateChangeSetInput {
        stack_name: "d".into(),
        change_set_name: name.into(),
        template_body: Some(body.clone()),
        tags: Some(tag(value)),
        ..Default::default()
    };
    let describe = |id: String| DescribeChangeSetInput {
        change_set: ChangeSetRef {
            change_set_name: id,
            stack_name: None,
        },
        next_token: None,
        include_property_values: false,
    };
    let out = h
        .engine
        .create_change_set(&h.caller, make("retag", "v2"))
        .await
        .unwrap();
    let cs = h
        .engine
        .describe_change_set(&h.caller, describe(out.id.clone()))
        .await
        .unwrap();
    assert_eq!(cs.changes.len(), 1, "{:?}", cs.changes);
    let q = &cs.changes[0];
    assert_eq!(
        (
            q.logical_resource_id.as_str(),
            q.action.as_str(),
            q.replacement.as_deref()
        ),
        ("Q", "Modify", Some("False"))
    );
    assert_eq!(q.scope, vec!["Tags"]);
    assert_eq!(q.details.len(), 1);
    let d = &q.details[0];
    assert_eq!(
        (
            d.target.attribute.as_str(),
            d.target.requires_recreation.as_deref(),
            d.evaluation.as_str(),
            d.change_source.as_str()
        ),
        ("Tags", Some("Never"), "Static", "DirectModification")
    );
    // The same tags: nothing to change.
    let same = h
        .engine
        .create_change_set(&h.caller, make("same", "v1"))
        .await
        .unwrap();
    let cs = h
        .engine
        .describe_change_set(&h.caller, describe(same.id))
        .await
        .unwrap();
    assert_eq!((cs.status.as_str(), cs.changes.len()), ("FAILED", 0));
    // Executing the first hands Q its new tags.
    let before = h.fake.calls().len();
    h.engine
        .execute_change_set(
            &h.caller,
            ExecuteChangeSetInput {
                change_set: ChangeSetRef {
                    change_set_name: out.id,
                    stack_name: None,
                },
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(h.settle("d").await, StackStatus::UPDATE_COMPLETE);
    let calls = h.fake.calls()[before..].to_vec();
    assert!(calls.iter().any(|c| c.starts_with("update Q")), "{calls:?}");
    assert_eq!(h.stack("d").await.tags, tag("v2"));
}
