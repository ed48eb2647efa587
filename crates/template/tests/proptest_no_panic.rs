//! The evaluator never panics, whatever JSON it is given as a template.

use cumulo_template::{PlaceholderSsm, RenderOptions, render};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const KEYS: &[&str] = &[
    "Resources",
    "Parameters",
    "Conditions",
    "Outputs",
    "Mappings",
    "Transform",
    "Type",
    "Properties",
    "DependsOn",
    "Condition",
    "Value",
    "Export",
    "Name",
    "Default",
    "AllowedValues",
    "AllowedPattern",
    "MinLength",
    "MaxValue",
    "Ref",
    "Fn::Sub",
    "Fn::GetAtt",
    "Fn::If",
    "Fn::Join",
    "Fn::Select",
    "Fn::Split",
    "Fn::Cidr",
    "Fn::FindInMap",
    "Fn::Base64",
    "Fn::GetAZs",
    "Fn::ImportValue",
    "Fn::Equals",
    "Fn::And",
    "Fn::Or",
    "Fn::Not",
    "Fn::Length",
    "Fn::ToJsonString",
    "Fn::ForEach::Loop",
    "DefaultValue",
    "A",
    "B",
    "C",
    "P",
];

const STRINGS: &[&str] = &[
    "A",
    "B",
    "C",
    "P",
    "Cond",
    "M",
    "AWS::NoValue",
    "AWS::Region",
    "AWS::LanguageExtensions",
    "String",
    "Number",
    "CommaDelimitedList",
    "List<Number>",
    "AWS::S3::Bucket",
    "${A}",
    "${A.Arn}",
    "${!x}",
    "${",
    "A.Arn",
    "10.0.0.0/16",
    "::1/64",
    "a,b,c",
    "",
    "-1",
    "999999999999999999999",
    "{{resolve:ssm:x}}",
    "{{resolve:secretsmanager:s:SecretString:k}}",
    "{{resolve:",
    "[a-z]+",
    "(",
];

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..300).prop_map(|n| json!(n)),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        prop::sample::select(STRINGS).prop_map(|s| Value::String(s.to_string())),
        ".{0,12}".prop_map(Value::String),
    ]
}

fn value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(5, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS), inner), 0..5).prop_map(|kv| {
                Value::Object(
                    kv.into_iter()
                        .map(|(k, v)| (k.to_string(), v))
                        .collect::<Map<_, _>>(),
                )
            }),
        ]
    })
}

/// A template-shaped value: the usual sections with arbitrary contents, so evaluation gets past
/// the format checks and into intrinsics, conditions and the graph.
fn template() -> impl Strategy<Value = Value> {
    (
        any::<bool>(),
        value(),
        value(),
        value(),
        value(),
        value(),
        value(),
    )
        .prop_map(
            |(ext, params, conds, props_a, props_b, outputs, mappings)| {
                let mut t = json!({
                    "Parameters": params,
                    "Conditions": conds,
                    "Mappings": mappings,
                    "Resources": {
                        "A": {"Type": "AWS::S3::Bucket", "Properties": props_a},
                        "B": {"Type": "AWS::SQS::Queue", "Properties": props_b, "DependsOn": "A"},
                    },
                    "Outputs": outputs,
                });
                if ext {
                    t["Transform"] = json!("AWS::LanguageExtensions");
                }
                t
            },
        )
}

fn options() -> RenderOptions {
    RenderOptions {
        dummy_parameters: true,
        ..RenderOptions::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_json_never_panics(v in value()) {
        let _ = render(v.into(), &options(), &PlaceholderSsm);
    }

    #[test]
    fn arbitrary_template_contents_never_panic(t in template()) {
        let _ = render(t.into(), &options(), &PlaceholderSsm);
    }
}
