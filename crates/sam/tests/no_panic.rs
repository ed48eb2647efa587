//! No input panics the transform: every node of every template in `tests/templates/` replaced,
//! one at a time, by values of every JSON type (and non-ASCII text); each run answers a
//! template or a failure.

use cumulo_sam::{Context, transform};
use serde_json::{Value, json};
use std::path::Path;

fn paths(v: &Value, at: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(at.clone());
    match v {
        Value::Object(o) => {
            for (k, c) in o {
                at.push(k.clone());
                paths(c, at, out);
                at.pop();
            }
        }
        Value::Array(items) => {
            for (i, c) in items.iter().enumerate() {
                at.push(i.to_string());
                paths(c, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn replaced(v: &Value, path: &[String], with: &Value) -> Value {
    let mut out = v.clone();
    let pointer: String = path
        .iter()
        .map(|p| format!("/{}", p.replace('~', "~0").replace('/', "~1")))
        .collect();
    if let Some(slot) = out.pointer_mut(&pointer) {
        *slot = with.clone();
    }
    out
}

#[test]
fn no_input_panics() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/templates");
    let alternatives = [
        Value::Null,
        json!(1),
        json!("é{x}/${y}.Arn"),
        json!([]),
        json!({"Ref": "AWS::NoValue"}),
    ];
    let mut runs = 0;
    for entry in std::fs::read_dir(dir).expect("templates") {
        let text = std::fs::read_to_string(entry.expect("entry").path()).expect("read");
        let template = cumulo_template::parse_template(&text)
            .expect("parses")
            .value
            .to_json();
        let mut all = Vec::new();
        paths(&template, &mut Vec::new(), &mut all);
        for path in &all {
            for with in &alternatives {
                let _ = transform(&replaced(&template, path, with), &Context::new("us-east-1"));
                runs += 1;
            }
        }
    }
    assert!(runs > 1000, "{runs} runs");
}
