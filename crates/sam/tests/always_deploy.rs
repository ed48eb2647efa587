//! An Api with `AlwaysDeploy` names its Deployment after the caller's clock: another instant is
//! another Deployment (CloudFormation then deploys the API anew), while an Api without it keeps
//! its swagger-hash name.

use cumulo_sam::{Context, transform};

fn deployments(now: i64) -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/templates/rest_always_deploy.yaml"
    );
    let text = std::fs::read_to_string(path).expect("template");
    let template = cumulo_template::parse_template(&text)
        .expect("parses")
        .value
        .to_json();
    let mut ctx = Context::new("us-east-1");
    ctx.now = now;
    let out = transform(&template, &ctx).expect("translates");
    let mut ids: Vec<String> = out["Resources"]
        .as_object()
        .expect("resources")
        .iter()
        .filter(|(_, r)| r["Type"] == "AWS::ApiGateway::Deployment")
        .map(|(id, _)| id.clone())
        .collect();
    ids.sort();
    ids
}

#[test]
fn always_deploy_follows_the_clock() {
    let (first, again, later) = (
        deployments(1_700_000_000),
        deployments(1_700_000_000),
        deployments(1_700_000_001),
    );
    assert_eq!(first, again);
    assert_ne!(
        first[0], later[0],
        "AlwaysDeploy's Deployment follows the clock"
    );
    assert!(first[0].starts_with("AlwaysDeployment"));
    assert_eq!(
        first[1], later[1],
        "without AlwaysDeploy the swagger alone names it"
    );
}
