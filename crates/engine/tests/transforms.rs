//! Transforms run before a template is prepared: AWS::Include from the world's S3, macros
//! registered by AWS::CloudFormation::Macro records, in both positions, and what GetTemplate
//! shows of them.

mod support;

use cumulo_engine::*;
use serde_json::{Value, json};
use support::*;

const AUTO_EXPAND: &str = "CAPABILITY_AUTO_EXPAND";

async fn create_with(
    h: &Harness,
    name: &str,
    template: &Value,
    capabilities: &[&str],
) -> Result<String, EngineError> {
    h.engine
        .create_stack(
            &h.caller,
            CreateStackInput {
                stack_name: name.into(),
                template_body: Some(template.to_string()),
                capabilities: capabilities.iter().map(|c| c.to_string()).collect(),
                ..Default::default()
            },
        )
        .await
        .map(|o| o.stack_id)
}

async fn template_of(h: &Harness, name: &str, stage: &str) -> Value {
    let body = h
        .engine
        .get_template(
            &h.caller,
            GetTemplateInput {
                stack_name: Some(name.into()),
                change_set_name: None,
                template_stage: Some(stage.into()),
            },
        )
        .await
        .expect("template")
        .template_body;
    serde_json::from_str(&body).expect("JSON")
}

async fn register_macro(h: &Harness, name: &str) {
    let t = json!({"Resources": {"M": {
        "Type": "AWS::CloudFormation::Macro",
        "Properties": {"Name": name, "FunctionName": "macro-fn"}
    }}});
    h.create("macros", &t.to_string()).await.expect("created");
    assert_eq!(h.settle("macros").await, StackStatus::CREATE_COMPLETE);
}

fn user_template() -> Value {
    json!({
        "Transform": ["Adder"],
        "Parameters": {"Snippet": {"Type": "String", "Default": "s3://b/thing.yaml"}},
        "Resources": {
            "A": {"Fn::Transform": {"Name": "AWS::Include", "Parameters": {"Location": {"Ref": "Snippet"}}}},
            "B": {"Type": FAKE, "Properties": {
                "Fn::Transform": {"Name": "Adder", "Parameters": {"Size": "2"}}
            }}
        }
    })
}

#[tokio::test]
async fn include_and_macros_run_in_both_positions_in_aws_order() {
    let h = Harness::new();
    register_macro(&h, "Adder").await;
    h.world.templates.lock().unwrap().insert(
        "s3://b/thing.yaml".into(),
        format!("Type: {FAKE}\nProperties: {{Size: '1'}}\n"),
    );
    create_with(&h, "user", &user_template(), &[AUTO_EXPAND])
        .await
        .expect("created");
    assert_eq!(h.settle("user").await, StackStatus::CREATE_COMPLETE);
    let a = h.physical("user", "A").await;
    assert_eq!(h.fake.props(&a).expect("A")["Size"], json!("1"));
    let b = h.physical("user", "B").await;
    assert_eq!(h.fake.props(&b).expect("B")["Size"], json!("2"));

    // The Fn::Transform site first (its fragment the siblings: none), then the section.
    let calls = h.world.invocations.lock().unwrap().clone();
    assert_eq!(calls.len(), 2, "{calls:?}");
    let (function, site) = &calls[0];
    assert_eq!(function, "macro-fn");
    assert_eq!(site["params"], json!({"Size": "2"}));
    assert_eq!(site["fragment"], json!({}));
    assert_eq!(site["transformId"], json!("000000000000::Adder"));
    assert_eq!(
        site["templateParameterValues"],
        json!({"Snippet": "s3://b/thing.yaml"})
    );
    let whole = &calls[1].1;
    assert!(whole["fragment"].get("Transform").is_none());
    assert_eq!(
        whole["fragment"]["Resources"]["A"]["Properties"],
        json!({"Size": "1"})
    );

    let processed = template_of(&h, "user", "Processed").await;
    assert!(processed.get("Transform").is_none());
    assert_eq!(
        processed["Resources"]["B"]["Properties"],
        json!({"Size": "2"})
    );
    assert_eq!(template_of(&h, "user", "Original").await, user_template());
}

#[tokio::test]
async fn create_stack_needs_auto_expand_and_a_registered_macro() {
    let h = Harness::new();
    let t = user_template();
    let e = create_with(&h, "user", &t, &[]).await.expect_err("refused");
    assert_eq!(e.code, "InsufficientCapabilitiesException");
    assert_eq!(
        e.message,
        "Requires capabilities : [CAPABILITY_AUTO_EXPAND]"
    );
    h.world
        .templates
        .lock()
        .unwrap()
        .insert("s3://b/thing.yaml".into(), format!("Type: {FAKE}\n"));
    let e = create_with(&h, "user", &t, &[AUTO_EXPAND])
        .await
        .expect_err("no macro");
    assert_eq!(e.message, "No transform named 000000000000::Adder found.");
    assert!(h.world.invocations.lock().unwrap().is_empty());
}

#[tokio::test]
async fn include_failures_name_the_transform() {
    let h = Harness::new();
    let t = json!({"Resources": {"A": {"Fn::Transform": {
        "Name": "AWS::Include", "Parameters": {"Location": "https://b/k"}
    }}}});
    let e = create_with(&h, "s", &t, &[AUTO_EXPAND])
        .await
        .expect_err("refused");
    assert_eq!(
        e.message,
        "Transform AWS::Include failed with: Location https://b/k must be an Amazon S3 URI (s3://bucket/key)"
    );
    let t = json!({"Resources": {"A": {"Fn::Transform": {
        "Name": "AWS::Include", "Parameters": {"Location": "s3://b/none"}
    }}}});
    let e = create_with(&h, "s", &t, &[AUTO_EXPAND])
        .await
        .expect_err("refused");
    assert_eq!(
        e.message,
        "Transform AWS::Include failed with: S3 error: no object at s3://b/none"
    );
}

#[tokio::test]
async fn a_second_macro_of_the_same_name_fails_its_resource() {
    let h = Harness::new();
    register_macro(&h, "Adder").await;
    let t = json!({"Resources": {"M": {
        "Type": "AWS::CloudFormation::Macro",
        "Properties": {"Name": "Adder", "FunctionName": "other"}
    }}});
    h.create("again", &t.to_string()).await.expect("started");
    assert_eq!(h.settle("again").await, StackStatus::ROLLBACK_COMPLETE);
}
