//! The JSON form of a query-protocol answer, as AWS's query services give it to a caller that
//! asks `Accept: application/json` (which API Gateway's AWS integrations do unless a mapping
//! sets another `Accept`): `{"SendMessageResponse": {"SendMessageResult": {...},
//! "ResponseMetadata": {"RequestId": ...}}}`, and for an error `{"Error": {"Type", "Code",
//! "Message"}, "RequestId"}`.
//!
//! Built from the XML answer without the service's model, so it differs from AWS's in three
//! ways (README says so): every value is a string, a member the answer leaves out is absent
//! rather than `null`, and a list is an array under its XML element's name (a `<member>`
//! wrapper's parent, or the repeated element of a flattened list; a flattened list of one is
//! an object).

use crate::s3::xml_in::{self, Element};
use serde_json::{Map, Value};

/// The JSON form of a query answer's XML; `None` when `xml` does not parse.
pub(crate) fn convert(xml: &[u8]) -> Option<Value> {
    let root = xml_in::parse(xml).ok()?;
    if root.name == "ErrorResponse" {
        // AWS's JSON error has no ErrorResponse wrapper.
        return Some(fields(&root));
    }
    let mut out = Map::new();
    out.insert(root.name.clone(), value(&root));
    Some(Value::Object(out))
}

/// An element's value: its text when it has no child elements, an array when its children
/// are `<member>`s, else an object of its children.
fn value(el: &Element) -> Value {
    if el.children.is_empty() {
        return Value::String(el.text.trim().to_string());
    }
    if el.children.iter().all(|c| c.name == "member") {
        return Value::Array(el.children.iter().map(value).collect());
    }
    fields(el)
}

/// An element's children as an object; a name that repeats (a flattened list) holds an array.
fn fields(el: &Element) -> Value {
    let mut out = Map::new();
    for c in &el.children {
        let repeats = el.children.iter().filter(|o| o.name == c.name).count() > 1;
        match out.get_mut(&c.name) {
            Some(Value::Array(items)) if repeats => items.push(value(c)),
            _ if repeats => {
                out.insert(c.name.clone(), Value::Array(vec![value(c)]));
            }
            _ => {
                out.insert(c.name.clone(), value(c));
            }
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_errors_and_lists() {
        let send = br#"<?xml version="1.0"?><SendMessageResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><SendMessageResult><MessageId>m-1</MessageId><MD5OfMessageBody>abc</MD5OfMessageBody></SendMessageResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></SendMessageResponse>"#;
        assert_eq!(
            convert(send).unwrap(),
            json!({"SendMessageResponse": {
                "SendMessageResult": {"MessageId": "m-1", "MD5OfMessageBody": "abc"},
                "ResponseMetadata": {"RequestId": "r-1"}}})
        );
        let error = br#"<ErrorResponse><Error><Type>Sender</Type><Code>InvalidParameterValue</Code><Message>bad &amp; wrong</Message></Error><RequestId>r-2</RequestId></ErrorResponse>"#;
        assert_eq!(
            convert(error).unwrap(),
            json!({"Error": {"Type": "Sender", "Code": "InvalidParameterValue",
                "Message": "bad & wrong"}, "RequestId": "r-2"})
        );
        let lists = br#"<R><Topics><member><TopicArn>a</TopicArn></member><member><TopicArn>b</TopicArn></member></Topics><Message><Id>1</Id></Message><Message><Id>2</Id></Message><Empty/></R>"#;
        assert_eq!(
            convert(lists).unwrap(),
            json!({"R": {"Topics": [{"TopicArn": "a"}, {"TopicArn": "b"}],
                "Message": [{"Id": "1"}, {"Id": "2"}], "Empty": ""}})
        );
        assert_eq!(convert(b"not xml <"), None);
    }
}
