//! Helpers shared by the template tests: render YAML snippets and read back values or errors.

#![allow(dead_code)]

use cumulo_template::{PlaceholderSsm, RenderOptions, SsmLookup, parse_template, render};
use indexmap::IndexMap;
use serde_json::Value;

pub fn params(pairs: &[(&str, &str)]) -> IndexMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Renders a template; errors as their messages.
pub fn render_with(
    text: &str,
    given: &[(&str, &str)],
    region: &str,
    ssm: &dyn SsmLookup,
) -> Result<Value, Vec<String>> {
    let doc =
        parse_template(text).map_err(|e| e.into_iter().map(|d| d.message).collect::<Vec<_>>())?;
    let options = RenderOptions {
        parameters: params(given),
        region: region.to_string(),
        account_id: "123456789012".to_string(),
        stack_name: "demo".to_string(),
        dummy_parameters: false,
        validate: false,
    };
    render(doc.value, &options, ssm)
        .map(|r| r.output.to_json())
        .map_err(|e| e.into_iter().map(|d| d.message).collect())
}

pub fn render_ok(text: &str, given: &[(&str, &str)]) -> Value {
    render_with(text, given, "us-east-1", &PlaceholderSsm)
        .unwrap_or_else(|e| panic!("{e:?}\n{text}"))
}

/// The single error a template gives.
pub fn render_err(text: &str, given: &[(&str, &str)]) -> String {
    match render_with(text, given, "us-east-1", &PlaceholderSsm) {
        Ok(v) => panic!("expected an error, rendered {v}"),
        Err(e) => {
            assert_eq!(e.len(), 1, "expected one error, got {e:?}");
            e.into_iter().next().unwrap_or_default()
        }
    }
}

/// A template with common parameters, mappings and conditions, and resource `R` whose property
/// `P` is `value` (YAML).
pub fn with_value(value: &str) -> String {
    format!(
        r#"Parameters:
  Env: {{Type: String, Default: dev}}
  Subnets: {{Type: CommaDelimitedList, Default: "subnet-1, subnet-2,subnet-3"}}
  Ports: {{Type: List<Number>, Default: "80,443"}}
  Count: {{Type: Number, Default: 3}}
Mappings:
  RegionMap:
    us-east-1: {{Ami: ami-east, Size: 2, Zones: [a, b]}}
    eu-west-1: {{Ami: ami-west, Size: 3}}
Conditions:
  IsProd: !Equals [!Ref Env, prod]
  IsDev: !Not [!Condition IsProd]
Resources:
  Other:
    Type: AWS::SQS::Queue
  R:
    Type: AWS::S3::Bucket
    Properties:
      P: {value}
"#
    )
}

/// Resource R's property P after rendering.
pub fn eval(value: &str) -> Value {
    render_ok(&with_value(value), &[])["Resources"]["R"]["Properties"]["P"].clone()
}

pub fn eval_err(value: &str) -> String {
    render_err(&with_value(value), &[])
}
