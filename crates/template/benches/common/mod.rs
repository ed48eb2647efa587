//! The benchmark shared by `evaluate` (the system allocator) and `evaluate_mimalloc` (mimalloc
//! v2 without THP, as the `cumulo` binary uses since this round): parsing plus full evaluation (parameters, conditions, graph, every
//! resource and output resolved, the rendered result dropped) of a 5,000-resource template,
//! in JSON (6.4 MB pretty-printed) and in YAML (3.0 MB block style). `examples/profile_5000.rs`
//! runs the same work once, for callgrind or perf.
//!
//! Wall time, `cargo bench` (release profile, fat LTO), one run of both benches on the 2-core
//! development machine at load average ~1 (criterion's median of 10 samples, ±10%):
//!
//! | | glibc | mimalloc v2 |
//! | --- | ---: | ---: |
//! | parse + evaluate JSON | 248 ms | 129 ms |
//! | parse + evaluate YAML | 411 ms | 317 ms |
//! | evaluate only (and drop) | 223 ms | 125 ms |
//!
//! That is why the binary moved to mimalloc (v2 with `no_thp`: idle RSS 9.5 → 9.7 MiB, median of
//! 7 starts; the crate's default v3 had cost 6.7 MiB). What is left is mostly the work itself on
//! `serde_json::Value` trees (see "what is left" below); for YAML, saphyr.
//!
//! Instructions (`valgrind --tool=callgrind --toggle-collect='*common::run*'` on
//! `profile_5000`, `bench-fast` profile), which unlike wall time do not move with the shared
//! machine's load:
//!
//! | | JSON | YAML |
//! | --- | ---: | ---: |
//! | glibc, before | 737M (parse 311, render 293, drop 134) | 1,562M (parse 1,136, of it saphyr 865) |
//! | glibc, after | 689M (parse 291, render 264, drop 134) | 1,536M (parse 1,138, of it saphyr 865) |
//! | mimalloc, before | 518M (parse 232, render 251, drop 35) | 1,301M (parse 1,014, of it saphyr 789) |
//! | mimalloc, after | 471M (parse 224, render 212, drop 35) | 1,276M (parse 1,017, of it saphyr 789) |
//!
//! With the release profile the bench builds with (fat LTO, glibc): JSON 642M → 617M, YAML
//! about 1,335M → 1,336M (the previous round's JSON parse 265M, render 252M, drop 125M; YAML
//! parse 958M).
//!
//! Wall time is not a usable before/after measure on the development machine (2 cores, load
//! average 4-9 from other builds): criterion's medians for the same binary moved by 30% between
//! runs. CPU time per iteration there (`perf stat -e task-clock`, `profile_5000 json|yaml 10`
//! less the template generation): JSON 170 ms with mimalloc and ~300 ms with glibc, YAML
//! 385-460 ms. Target not met: tens of milliseconds needs the changes under "what is left".
//!
//! A quick YAML reading (`parse/yaml_quick.rs`: the block-style subset most templates use, read
//! straight into the value; it answers exactly what saphyr's reading does or leaves the text to
//! it) took YAML from 1,276M instructions to 550M (mimalloc, `bench-fast`; saphyr's 789M are
//! gone, the quick reading costs ~110 instructions per byte with the values it builds) and its
//! CPU time per iteration from 350-394 ms to 193-208 ms (`perf stat`, two alternating runs of
//! each build). JSON is unchanged (465M). Criterion on the same machine later that day, whose
//! wall times had drifted up (the unchanged JSON path measured 160-174 ms against 129 ms the day
//! before): JSON 174 / YAML 217 / evaluate only 185 ms, and JSON 160 / YAML 216 / 165 ms. YAML
//! now costs 1.25-1.35x JSON, where it cost 2.5x (317 against 129 ms).
//!
//! What changed, in order of effect. Byte scans instead of per-call searchers: `str::find("${")`
//! in Fn::Sub splitting and `contains("{{resolve:")` in the dynamic-reference walk built a
//! two-way substring searcher for every string. JSON's fast pass skips indentation eight bytes
//! at a time (whitespace tested inline first: most tokens follow none) and scans plain string
//! runs with one `position`. Fn::Sub copies pseudo parameters and string parameters into its
//! result instead of making a value of each; Fn::Select reads a literal index as is.
//!
//! The previous round measured mimalloc v3 (the crate's default) and kept glibc: it took
//! `cumulo serve`'s idle RSS from 8.8 to 15.5 MiB. This round tried the `v2` and `no_thp`
//! features, which cost ~0.2 MiB instead (table above), and adopted them.
//!
//! What was left then: SipHash (serde_json's maps use std's `RandomState`; ~14% of JSON with
//! mimalloc) and the allocations of the `serde_json::Value` tree itself (each object an
//! `IndexMap` with an entry vector and a hash table, each key and string its own `String`),
//! built once by the parser and again by the evaluation.
//!
//! The next round replaced `serde_json::Value` inside the crate with its own document type
//! (`value.rs`: `SmolStr` strings, inline up to 23 bytes; objects as entry vectors, hashed only
//! past 16 members) and the name maps' SipHash with foldhash; the engine still gets
//! `serde_json` values from `resolve_resource`. Against the build before it (commit 1846c09),
//! `bench-fast`, mimalloc:
//!
//! | | before | after |
//! | --- | ---: | ---: |
//! | instructions, JSON (callgrind, as above) | 468M | 350M |
//! | instructions, YAML | 550M | 439M |
//! | CPU per iteration, JSON (`perf stat`, median / min of 14 alternating rounds) | 203 / 104 ms | 131 / 84 ms |
//! | CPU per iteration, YAML | 239 / 110 ms | 154 / 97 ms |
//!
//! The machine was noisy that day (other tenants: the same binary's CPU time moved by 2x
//! between runs), so the medians are high for both; in a quiet moment the same measure gave
//! 158 ms before and 64 ms after for JSON. Instructions fell less than time did: the rest is
//! memory (nodes of 32 bytes instead of 72, short strings inline, long ones shared, no hash table
//! per object).
//! Copying the parsed tree, which the evaluation of literal parts does, costs 5-12 ms instead
//! of 42-70 ms; dropping a prepared template 2-3 ms instead of 14-16 ms.
//!
//! What is left is spread thin: the JSON reading itself (~25% of instructions: bytes, strings,
//! whitespace), three walks of the tree in `prepare` (Rain/ForEach keys, dependencies, dynamic
//! references; ~12%), allocation and freeing (~15%). For YAML, a template outside the quick
//! reading's subset still goes through saphyr-parser (~270 instructions per byte of input).
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
