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
