//! Snapshot tests: representative templates rendered in full (resolved resources, outputs,
//! provisioning order). Inputs live in `tests/snapshots/inputs/`.

mod support;

use cumulo_template::PlaceholderSsm;
use std::path::Path;
use support::render_with;

fn rendered(name: &str, given: &[(&str, &str)]) -> serde_json::Value {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/inputs");
    let text = std::fs::read_to_string(dir.join(name)).expect("input");
    render_with(&text, given, "eu-west-1", &PlaceholderSsm)
        .unwrap_or_else(|e| panic!("{name}: {e:?}"))
}

#[test]
fn vpc() {
    insta::assert_json_snapshot!(rendered("vpc.yaml", &[]));
}

#[test]
fn conditions_dev() {
    insta::assert_json_snapshot!(rendered("conditions.yaml", &[("Env", "dev")]));
}

#[test]
fn conditions_prod_with_email() {
    insta::assert_json_snapshot!(rendered(
        "conditions.yaml",
        &[
            ("Env", "prod"),
            ("AlarmEmail", "ops@example.com"),
            ("Replicas", "3")
        ]
    ));
}

#[test]
fn foreach() {
    insta::assert_json_snapshot!(rendered("foreach.yaml", &[]));
}

#[test]
fn sub_and_exports() {
    insta::assert_json_snapshot!(rendered("sub_and_exports.json", &[]));
}

#[test]
fn copilot_backend_service() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/copilot");
    let text = std::fs::read_to_string(dir.join("workloads__backend__simple-template.yml"))
        .expect("template");
    let params: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("workloads__backend__simple-params.json"))
            .expect("params"),
    )
    .expect("json");
    let given: Vec<(String, String)> = params["Parameters"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect();
    let given: Vec<(&str, &str)> = given
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let out = render_with(&text, &given, "us-west-2", &PlaceholderSsm).expect("renders");
    insta::assert_json_snapshot!(out);
}
