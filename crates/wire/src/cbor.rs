//! Smithy RPC v2 CBOR (`smithy-protocol: rpc-v2-cbor`, `POST /service/<Service>/operation/<Op>`):
//! CBOR bodies read into JSON in the API's member names and JSON answers written back as CBOR.
//! The only CBOR a client sends that JSON has no word for are timestamps (tag 1, epoch seconds),
//! which become numbers, and byte strings, which become base64 text as in the JSON protocols.
//! Writing needs the model (`QueryModel`, whose shapes are botocore's): a timestamp member is
//! written as tag 1 and a blob as a byte string, since botocore's parser reads them only so.

use crate::AwsError;
use crate::query_model::QueryModel;
use base64::Engine;
use ciborium::Value as Cbor;
use serde_json::{Map, Number, Value};

/// The request body as JSON; an empty body is an empty input. A body that is not CBOR is
/// `SerializationException`, as the JSON protocols answer malformed JSON.
pub fn decode(body: &[u8]) -> Result<Value, AwsError> {
    if body.is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let v: Cbor = ciborium::from_reader(body).map_err(|e| {
        AwsError::bad_request(
            "SerializationException",
            format!("the request body is not CBOR: {e}"),
        )
    })?;
    Ok(to_json(v))
}

fn to_json(v: Cbor) -> Value {
    match v {
        Cbor::Integer(i) => {
            let i = i128::from(i);
            i64::try_from(i)
                .map(Value::from)
                .unwrap_or_else(|_| number(i as f64))
        }
        Cbor::Float(f) => number(f),
        Cbor::Text(t) => Value::String(t),
        Cbor::Bytes(b) => Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Cbor::Bool(b) => Value::Bool(b),
        Cbor::Null => Value::Null,
        Cbor::Tag(_, inner) => to_json(*inner),
        Cbor::Array(items) => Value::Array(items.into_iter().map(to_json).collect()),
        Cbor::Map(entries) => Value::Object(
            entries
                .into_iter()
                .filter_map(|(k, v)| match k {
                    Cbor::Text(k) => Some((k, to_json(v))),
                    _ => None,
                })
                .collect(),
        ),
        _ => Value::Null,
    }
}

fn number(f: f64) -> Value {
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// `v` as CBOR with no model: numbers, text, lists and maps (errors, empty answers).
pub fn encode(v: &Value) -> Vec<u8> {
    write(&plain(v))
}

/// An operation's answer as CBOR, typed by its output shape in `model`.
pub fn encode_output(model: &QueryModel, op: &str, v: &Value) -> Vec<u8> {
    match model.output_shape(op) {
        Some(shape) => write(&typed(model, shape, v)),
        None => write(&Cbor::Map(Vec::new())),
    }
}

fn write(v: &Cbor) -> Vec<u8> {
    let mut out = Vec::new();
    // Writing into a Vec cannot fail.
    let _ = ciborium::into_writer(v, &mut out);
    out
}

fn plain(v: &Value) -> Cbor {
    match v {
        Value::Null => Cbor::Null,
        Value::Bool(b) => Cbor::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Cbor::Integer(i.into()),
            None => Cbor::Float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => Cbor::Text(s.clone()),
        Value::Array(items) => Cbor::Array(items.iter().map(plain).collect()),
        Value::Object(m) => Cbor::Map(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (Cbor::Text(k.clone()), plain(v)))
                .collect(),
        ),
    }
}

fn typed(model: &QueryModel, shape: &str, v: &Value) -> Cbor {
    let s = model.shape(shape);
    let member = |key: &str| s[key]["shape"].as_str().unwrap_or("");
    match (s["type"].as_str().unwrap_or("string"), v) {
        ("structure", Value::Object(m)) => Cbor::Map(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| {
                    let target = s["members"][k.as_str()]["shape"].as_str().unwrap_or("");
                    (Cbor::Text(k.clone()), typed(model, target, v))
                })
                .collect(),
        ),
        ("list", Value::Array(items)) => Cbor::Array(
            items
                .iter()
                .map(|i| typed(model, member("member"), i))
                .collect(),
        ),
        ("map", Value::Object(m)) => Cbor::Map(
            m.iter()
                .map(|(k, v)| (Cbor::Text(k.clone()), typed(model, member("value"), v)))
                .collect(),
        ),
        ("timestamp", Value::Number(n)) => {
            Cbor::Tag(1, Box::new(Cbor::Float(n.as_f64().unwrap_or(0.0))))
        }
        ("timestamp", Value::String(t)) => match chrono::DateTime::parse_from_rfc3339(t) {
            Ok(d) => Cbor::Tag(
                1,
                Box::new(Cbor::Float(d.timestamp_millis() as f64 / 1000.0)),
            ),
            Err(_) => Cbor::Text(t.clone()),
        },
        ("blob", Value::String(t)) => base64::engine::general_purpose::STANDARD
            .decode(t)
            .map_or_else(|_| Cbor::Text(t.clone()), Cbor::Bytes),
        ("double" | "float", Value::Number(n)) => Cbor::Float(n.as_f64().unwrap_or(0.0)),
        _ => plain(v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MODEL: &str = r#"{"namespace":"urn:x","operations":{"Get":{"input":"In","output":"Out"}},
        "shapes":{"Out":{"type":"structure","members":{"At":{"shape":"Ts"},"Vals":{"shape":"Ds"},"N":{"shape":"S"}}},
        "Ts":{"type":"timestamp"},"Ds":{"type":"list","member":{"shape":"D"}},"D":{"type":"double"},"S":{"type":"string"}}}"#;

    #[test]
    fn round_trips_and_types_by_the_model() {
        let m = QueryModel::parse(MODEL).unwrap();
        let bytes = encode_output(
            &m,
            "Get",
            &json!({"At": 1700000000.5, "Vals": [1, 2.5], "N": "x"}),
        );
        let back: Cbor = ciborium::from_reader(bytes.as_slice()).unwrap();
        let Cbor::Map(entries) = back else { panic!() };
        assert!(entries.iter().any(|(k, v)| k == &Cbor::Text("At".into())
            && matches!(v, Cbor::Tag(1, inner) if **inner == Cbor::Float(1700000000.5))));
        assert_eq!(
            decode(&bytes).unwrap(),
            json!({"At": 1700000000.5, "Vals": [1.0, 2.5], "N": "x"})
        );
        assert_eq!(decode(b"").unwrap(), json!({}));
        assert_eq!(
            decode(b"\xff\x00").unwrap_err().code,
            "SerializationException"
        );
    }
}
