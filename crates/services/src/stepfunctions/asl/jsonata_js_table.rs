//! cumulo's JSONata held to jsonata-js: `testdata/jsonata_js.json` holds expressions with what
//! jsonata-js answered for them (`scripts/jsonata-js-table.js` writes the answers), and each
//! must evaluate here to the same value, to nothing, or fail with the same JSONata code.

use super::jsonata::evaluate_opt;
use serde_json::{Map, Value};

/// JSON values equal as JavaScript sees them: numbers by value (`1.0` is `1`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

#[test]
fn expressions_evaluate_as_jsonata_js_does() {
    let table: Value = serde_json::from_str(include_str!("testdata/jsonata_js.json")).unwrap();
    let cases = table["cases"].as_array().unwrap();
    assert!(!cases.is_empty());
    for case in cases {
        let expr = case["expr"].as_str().unwrap();
        let input = case["input"]
            .as_str()
            .map_or(Value::Null, |name| table["inputs"][name].clone());
        let got = evaluate_opt(expr, &input, &Map::new());
        match (&got, case.get("error").and_then(Value::as_str)) {
            (Err(e), Some(code)) => {
                assert!(e.0.starts_with(&format!("{code}: ")), "{expr}: {}", e.0)
            }
            (_, Some(code)) => panic!("{expr}: jsonata-js fails with {code}, cumulo gives {got:?}"),
            (Ok(None), None) => assert!(
                case["undefined"] == true,
                "{expr}: undefined, want {}",
                case["result"]
            ),
            (Ok(Some(v)), None) => assert!(
                same(v, &case["result"]),
                "{expr}: {v}, want {}",
                case["result"]
            ),
            (Err(e), None) => panic!("{expr}: {}", e.0),
        }
    }
}
