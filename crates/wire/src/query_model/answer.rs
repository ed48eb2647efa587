//! A query or EC2 answer's XML read as JSON by the operation's output shape, as botocore's
//! parsers read it: members by their `locationName` (EC2's `vpcSet` is `Vpcs`), lists by their
//! items whatever the items are called (`member`, `item`) or, flattened, by the repeated
//! element, maps by their `entry`/`key`/`value` names, and scalars in their shape's type.

use super::QueryModel;
use crate::AwsError;
use crate::xml_tree::{self, Element};
use serde_json::{Map, Number, Value};

/// What an answer read by the model writes where the XML leaves a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerForm {
    /// The SDK's result, as a Step Functions `aws-sdk:` Task gets it: a member the answer
    /// leaves out is absent, and a timestamp is its ISO-8601 text (the integration hands
    /// timestamps on as strings, `"2013-08-23T01:02:15.422Z"`).
    Sdk,
    /// The JSON form AWS's query services answer `Accept: application/json` with (what API
    /// Gateway's AWS integrations get): every member of a structure is written, `null` when the
    /// answer leaves it out (the recorded SSM answer's `"Selector": null`), and a timestamp is
    /// epoch seconds, as the JSON protocols write them.
    Json,
}

/// A successful answer read by the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The output shape's members (the `<Op>Result` element's, EC2's root's).
    pub result: Value,
    /// `ResponseMetadata/RequestId` (EC2: `requestId`).
    pub request_id: Option<String>,
}

impl QueryModel {
    /// `body`, the XML answer to `op`, read by the operation's output shape. An operation the
    /// model does not have, or a body that is not XML, is an error.
    pub fn read_answer(&self, op: &str, body: &[u8], form: AnswerForm) -> Result<Answer, AwsError> {
        let o = self
            .operations
            .get(op)
            .ok_or_else(|| AwsError::internal(format!("{op} is not in the model")))?;
        let root = xml_tree::parse(body)?;
        let request_id = if self.ec2 {
            root.child("requestId")
        } else {
            root.child("ResponseMetadata")
                .and_then(|m| m.child("RequestId"))
        }
        .map(|e| e.text.trim().to_string());
        let result = match o["output"].as_str() {
            None => Value::Object(Map::new()),
            Some(output) => {
                let start = match o["wrapper"].as_str() {
                    Some(wrapper) => root.child(wrapper),
                    None => Some(&root),
                };
                match start {
                    Some(el) => self.read(output, el, form),
                    None => self.read(output, &Element::default(), form),
                }
            }
        };
        Ok(Answer { result, request_id })
    }

    /// A JSON protocol's answer to `op` (SSM's) in the JSON form of the legacy query protocol
    /// AWS also answers it in: every member of a structure written, `null` where the answer
    /// leaves it out. What the model does not describe is left as it is.
    pub fn with_nulls(&self, op: &str, answer: Value) -> Value {
        match self.output_shape(op) {
            Some(output) => self.nulls(output, answer),
            None => answer,
        }
    }

    fn nulls(&self, shape: &str, v: Value) -> Value {
        let s = self.shape(shape);
        match (s["type"].as_str().unwrap_or("string"), v) {
            ("structure", Value::Object(mut obj)) => {
                for (name, m) in s["members"].as_object().into_iter().flatten() {
                    let target = m["shape"].as_str().unwrap_or("");
                    let value = obj.remove(name).unwrap_or(Value::Null);
                    obj.insert(name.clone(), self.nulls(target, value));
                }
                Value::Object(obj)
            }
            ("list", Value::Array(items)) => {
                let member = s["member"]["shape"].as_str().unwrap_or("");
                Value::Array(items.into_iter().map(|i| self.nulls(member, i)).collect())
            }
            ("map", Value::Object(entries)) => {
                let value = s["value"]["shape"].as_str().unwrap_or("");
                Value::Object(
                    entries
                        .into_iter()
                        .map(|(k, v)| (k, self.nulls(value, v)))
                        .collect(),
                )
            }
            (_, v) => v,
        }
    }

    fn read(&self, shape: &str, el: &Element, form: AnswerForm) -> Value {
        let s = self.shape(shape);
        match s["type"].as_str().unwrap_or("string") {
            "structure" => {
                let mut out = Map::new();
                for (name, m) in s["members"].as_object().into_iter().flatten() {
                    let target = m["shape"].as_str().unwrap_or("");
                    let t = self.shape(target);
                    let flattened = m["flattened"].as_bool().unwrap_or(false)
                        || t["flattened"].as_bool().unwrap_or(false);
                    let mut xml_name = m["locationName"].as_str().unwrap_or(name);
                    if flattened && t["type"] == "list" {
                        // A flattened list repeats its member's name when the member has one.
                        xml_name = t["member"]["locationName"].as_str().unwrap_or(xml_name);
                    }
                    let value = if flattened {
                        let items: Vec<&Element> =
                            el.children.iter().filter(|c| c.name == xml_name).collect();
                        (!items.is_empty()).then(|| self.read_repeated(target, &items, form))
                    } else {
                        el.child(xml_name).map(|c| self.read(target, c, form))
                    };
                    match value {
                        Some(v) => {
                            out.insert(name.clone(), v);
                        }
                        None if form == AnswerForm::Json => {
                            out.insert(name.clone(), Value::Null);
                        }
                        None => {}
                    }
                }
                Value::Object(out)
            }
            "list" | "map" => {
                let items: Vec<&Element> = el.children.iter().collect();
                self.read_repeated(shape, &items, form)
            }
            kind => scalar(kind, &el.text, form),
        }
    }

    /// A list's items or a map's entries, each one element.
    fn read_repeated(&self, shape: &str, items: &[&Element], form: AnswerForm) -> Value {
        let s = self.shape(shape);
        if s["type"] == "map" {
            let key_name = s["key"]["locationName"].as_str().unwrap_or("key");
            let value_name = s["value"]["locationName"].as_str().unwrap_or("value");
            let value_shape = s["value"]["shape"].as_str().unwrap_or("");
            let mut out = Map::new();
            for entry in items {
                let Some(k) = entry.child(key_name) else {
                    continue;
                };
                let v = entry
                    .child(value_name)
                    .map_or(Value::Null, |v| self.read(value_shape, v, form));
                out.insert(k.text.clone(), v);
            }
            return Value::Object(out);
        }
        let member = s["member"]["shape"].as_str().unwrap_or("");
        Value::Array(
            items
                .iter()
                .map(|item| self.read(member, item, form))
                .collect(),
        )
    }
}

/// A scalar's text in its shape's type; text that does not parse as the type stays text.
fn scalar(kind: &str, text: &str, form: AnswerForm) -> Value {
    let t = text.trim();
    let number =
        |n: Option<Number>| n.map_or_else(|| Value::String(text.to_string()), Value::Number);
    match kind {
        "integer" | "long" => number(t.parse::<i64>().ok().map(Number::from)),
        "float" | "double" => number(t.parse::<f64>().ok().and_then(Number::from_f64)),
        "boolean" => Value::Bool(t == "true"),
        "timestamp" if form == AnswerForm::Json => number(
            chrono::DateTime::parse_from_rfc3339(t)
                .ok()
                .and_then(|d| Number::from_f64(d.timestamp_millis() as f64 / 1000.0)),
        ),
        "timestamp" => Value::String(t.to_string()),
        _ => Value::String(text.to_string()),
    }
}
