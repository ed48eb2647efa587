//! The benchmark shared by `evaluate` (the system allocator) and `evaluate_mimalloc`: parsing
//! plus full evaluation (parameters, conditions, graph, every resource and output resolved) of
//! a 5,000-resource template, in JSON and in YAML.
//!
//! Instructions per stage (callgrind, default bench profile = release, glibc malloc), before →
//! after the fast JSON pass, lazy paths and fewer lookups: JSON parse 302M → 265M, render
//! (prepare + resolve every resource and output) 330M → 252M, dropping the result 124M → 125M;
//! YAML parse 965M → 958M (saphyr's scanner is most of it). With mimalloc: JSON parse 216M,
//! render 214M, drop 29M, YAML 871M. What remains is mostly allocating, hashing (serde_json's
//! maps use SipHash) and freeing serde_json values, ~1 allocation per node: reaching tens of
//! milliseconds needs a document type that allocates less (shared keys, inline small maps).

use criterion::{BatchSize, Criterion};
use cumulo_template::{PlaceholderSsm, RenderOptions, parse_template, render};
use serde_json::{Map, Value, json};
use std::hint::black_box;

const RESOURCES: usize = 5_000;

/// A template whose resources use the common intrinsics and depend on one another.
fn big_template() -> Value {
    let mut resources = Map::new();
    for i in 0..RESOURCES {
        let mut props = json!({
            "QueueName": {"Fn::Sub": format!("${{AWS::StackName}}-${{Env}}-{i}")},
            "Tags": [
                {"Key": "size", "Value": {"Fn::FindInMap": ["Sizes", {"Ref": "Env"}, "Instance"]}},
                {"Key": "az", "Value": {"Fn::Select": [i % 3, {"Fn::GetAZs": ""}]}},
                {"Fn::If": ["IsProd", {"Key": "tier", "Value": "gold"}, {"Ref": "AWS::NoValue"}]},
            ],
            "Subnets": {"Fn::Join": [",", {"Ref": "Subnets"}]},
        });
        if i > 0 {
            props["Previous"] = json!({"Fn::GetAtt": [format!("Queue{}", i - 1), "Arn"]});
            props["Link"] = json!({"Fn::Sub": format!("${{Queue{}.QueueName}}/x", (i * 7) % i)});
        }
        let mut r = json!({"Type": "AWS::SQS::Queue", "Properties": props});
        if i % 10 == 0 {
            r["Condition"] = json!("IsDev");
        }
        resources.insert(format!("Queue{i}"), r);
    }
    let outputs: Map<String, Value> = (0..200)
        .map(|i| {
            (
                format!("Out{i}"),
                json!({"Value": {"Fn::GetAtt": [format!("Queue{}", i * 10 + 1), "Arn"]},
                       "Export": {"Name": {"Fn::Sub": format!("${{AWS::StackName}}-{i}")}}}),
            )
        })
        .collect();
    json!({
        "AWSTemplateFormatVersion": "2010-09-09",
        "Parameters": {
            "Env": {"Type": "String", "AllowedValues": ["dev", "prod"], "Default": "dev"},
            "Subnets": {"Type": "CommaDelimitedList", "Default": "subnet-1,subnet-2"},
        },
        "Mappings": {"Sizes": {"dev": {"Instance": "t3.micro"}, "prod": {"Instance": "m5.large"}}},
        "Conditions": {
            "IsProd": {"Fn::Equals": [{"Ref": "Env"}, "prod"]},
            "IsDev": {"Fn::Not": [{"Condition": "IsProd"}]},
        },
        "Resources": resources,
        "Outputs": outputs,
    })
}

/// The same template as block YAML (JSON is valid YAML flow, but block style is what people
/// write and exercises the YAML path properly).
fn to_yaml(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(o) => {
            for (k, item) in o {
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        to_yaml(item, indent + 2, out);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        out.push_str(&format!("{pad}{k}:\n"));
                        to_yaml(item, indent + 2, out);
                    }
                    _ => out.push_str(&format!("{pad}{k}: {item}\n")),
                }
            }
        }
        Value::Array(a) => {
            for item in a {
                out.push_str(&format!("{pad}- {item}\n"));
            }
        }
        other => out.push_str(&format!("{pad}{other}\n")),
    }
}

pub fn run(text: &str) -> usize {
    let doc = parse_template(text).expect("parses");
    let out = render(doc.value, &RenderOptions::default(), &PlaceholderSsm).expect("renders");
    out.prepared.order.len()
}

/// The benchmark template as pretty-printed JSON and as block YAML.
pub fn texts() -> (String, String) {
    let template = big_template();
    let json_text = serde_json::to_string_pretty(&template).expect("json");
    let mut yaml_text = String::new();
    to_yaml(&template, 0, &mut yaml_text);
    (json_text, yaml_text)
}

pub fn bench(c: &mut Criterion) {
    let (json_text, yaml_text) = texts();
    // Every resource is live (IsDev holds for the default Env).
    assert_eq!(run(&json_text), RESOURCES);
    assert_eq!(run(&yaml_text), run(&json_text));
    let mut group = c.benchmark_group("5000 resources");
    group.sample_size(10);
    group.bench_function("parse + evaluate JSON", |b| {
        b.iter(|| run(black_box(&json_text)))
    });
    group.bench_function("parse + evaluate YAML", |b| {
        b.iter(|| run(black_box(&yaml_text)))
    });
    let doc = parse_template(&json_text).expect("parses");
    // render takes the parsed value by ownership: each iteration gets its own copy, made (and
    // the result dropped) outside the timed part, so this measures evaluation alone.
    group.bench_function("evaluate only", |b| {
        b.iter_batched(
            || doc.value.clone(),
            |value| {
                render(value, &RenderOptions::default(), &PlaceholderSsm)
                    .map(|r| r.prepared.order.len())
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}
