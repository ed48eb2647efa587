//! The JSON form of a query-protocol answer, as AWS's query services give it to a caller that
//! asks `Accept: application/json` (which API Gateway's AWS integrations do unless a mapping
//! sets another `Accept`): `{"SendMessageResponse": {"SendMessageResult": {...},
//! "ResponseMetadata": {"RequestId": ...}}}`, and for an error `{"Error": {"Type", "Code",
//! "Message"}, "RequestId"}`.
//!
//! The result is read by the service's model ([`crate::query_models`]), so it carries the
//! API's types and member names: numbers and booleans as JSON's, every member of a structure
//! written (`null` when the answer leaves it out, as the recorded SSM answer's `"Selector":
//! null`), lists as arrays, maps as objects, timestamps as epoch seconds. EC2's answers, which
//! have no result wrapper, put the output's members directly under `<Op>Response`.

use crate::s3::xml_in::{self, Element};
use cumulo_wire::query_model::{AnswerForm, QueryModel};
use serde_json::{Map, Value, json};

/// The JSON form of a query answer's XML; `None` when `xml` is not an answer of an operation
/// the model knows.
pub(crate) fn convert(model: &QueryModel, xml: &[u8]) -> Option<Value> {
    let root = xml_in::parse(xml).ok()?;
    if let Some(error) = find(&root, "Error") {
        return Some(error_form(&root, error));
    }
    let op = root.name.strip_suffix("Response")?;
    let answer = model.read_answer(op, xml, AnswerForm::Json).ok()?;
    let metadata = json!({"RequestId": answer.request_id});
    let mut body = Map::new();
    match (model.result_wrapper(op), answer.result) {
        (Some(wrapper), result) => {
            body.insert(wrapper.to_string(), result);
        }
        // EC2 answers carry their members directly.
        (None, Value::Object(members)) => body.extend(members),
        (None, _) => {}
    }
    body.insert("ResponseMetadata".into(), metadata);
    Some(json!({ root.name.clone(): body }))
}

fn find<'a>(e: &'a Element, name: &str) -> Option<&'a Element> {
    if e.name == name {
        return Some(e);
    }
    e.children.iter().find_map(|c| find(c, name))
}

/// `{"Error": {"Type", "Code", "Message"}, "RequestId"}`: the error's own elements as text
/// (EC2's `<Response><Errors><Error>` and `RequestID` read the same way).
fn error_form(root: &Element, error: &Element) -> Value {
    let fields: Map<String, Value> = error
        .children
        .iter()
        .map(|c| (c.name.clone(), Value::String(c.text.trim().to_string())))
        .collect();
    let request_id = root
        .child_text("RequestId")
        .or_else(|| root.child_text("RequestID"));
    json!({"Error": fields, "RequestId": request_id})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_errors_and_lists_by_the_model() {
        let sqs = crate::query_models::model("sqs", "2012-11-05").unwrap();
        let send = br#"<?xml version="1.0"?><SendMessageResponse xmlns="http://queue.amazonaws.com/doc/2012-11-05/"><SendMessageResult><MessageId>m-1</MessageId><MD5OfMessageBody>abc</MD5OfMessageBody></SendMessageResult><ResponseMetadata><RequestId>r-1</RequestId></ResponseMetadata></SendMessageResponse>"#;
        assert_eq!(
            convert(sqs, send).unwrap(),
            json!({"SendMessageResponse": {
                "SendMessageResult": {"MessageId": "m-1", "MD5OfMessageBody": "abc",
                    "MD5OfMessageAttributes": null, "MD5OfMessageSystemAttributes": null,
                    "SequenceNumber": null},
                "ResponseMetadata": {"RequestId": "r-1"}}})
        );
        let receive = br#"<ReceiveMessageResponse><ReceiveMessageResult><Message><MessageId>m</MessageId><Body>b</Body><Attribute><Name>SentTimestamp</Name><Value>17</Value></Attribute></Message></ReceiveMessageResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></ReceiveMessageResponse>"#;
        let v = convert(sqs, receive).unwrap();
        let m = &v["ReceiveMessageResponse"]["ReceiveMessageResult"]["Messages"][0];
        assert_eq!(m["Attributes"], json!({"SentTimestamp": "17"}));
        assert_eq!(m["MessageAttributes"], Value::Null);
        let error = br#"<ErrorResponse><Error><Type>Sender</Type><Code>InvalidParameterValue</Code><Message>bad &amp; wrong</Message></Error><RequestId>r-2</RequestId></ErrorResponse>"#;
        assert_eq!(
            convert(sqs, error).unwrap(),
            json!({"Error": {"Type": "Sender", "Code": "InvalidParameterValue",
                "Message": "bad & wrong"}, "RequestId": "r-2"})
        );
        assert_eq!(convert(sqs, b"not xml <"), None);
        let ec2 = crate::query_models::model("ec2", "2016-11-15").unwrap();
        let vpcs = br#"<DescribeVpcsResponse><requestId>r-3</requestId><vpcSet><item><vpcId>v</vpcId><isDefault>true</isDefault></item></vpcSet></DescribeVpcsResponse>"#;
        let v = convert(ec2, vpcs).unwrap();
        assert_eq!(
            v["DescribeVpcsResponse"]["Vpcs"][0]["IsDefault"],
            json!(true)
        );
        assert_eq!(v["DescribeVpcsResponse"]["NextToken"], Value::Null);
        assert_eq!(
            v["DescribeVpcsResponse"]["ResponseMetadata"],
            json!({"RequestId": "r-3"})
        );
    }
}
