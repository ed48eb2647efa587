//! The awsQuery protocol driven by a service's model (written by `scripts/gen-query-model.py`
//! from botocore's): form parameters decoded into JSON in the API's member names, and JSON
//! answers encoded as the protocol's XML. A service written over it handles JSON values whose
//! keys are the API's (`LoadBalancerArn`, `Tags`), so its logic never touches the form or XML
//! shapes, and the same values map onto CloudFormation properties, which mostly share the names.
//!
//! The other side, for cumulo's own calls to a query or EC2 service (a Step Functions
//! `aws-sdk:` Task, an API Gateway AWS integration): JSON parameters written as the request's
//! form ([`form`](QueryModel::form)) and the XML answer read back as JSON in the SDK's member
//! names and types ([`read_answer`](QueryModel::read_answer)).

use crate::AwsError;
use crate::query::QueryParams;
use crate::xml::escape;
use serde_json::{Map, Value};
use std::fmt::Write;

mod answer;
mod form;

pub use answer::{Answer, AnswerForm};

/// One service's operations and shapes.
pub struct QueryModel {
    namespace: String,
    /// The model is EC2's dialect (`"protocol": "ec2"`): answers have no result wrapper and
    /// request names come from `queryName` or the capitalised `locationName`.
    ec2: bool,
    operations: Map<String, Value>,
    shapes: Map<String, Value>,
}

#[derive(Debug, thiserror::Error)]
#[error("the query model is unreadable: {0}")]
pub struct ModelError(String);

impl QueryModel {
    pub fn parse(text: &str) -> Result<QueryModel, ModelError> {
        let mut doc: Map<String, Value> =
            serde_json::from_str(text).map_err(|e| ModelError(e.to_string()))?;
        let mut take = |k: &str| match doc.remove(k) {
            Some(Value::Object(m)) => Ok(m),
            _ => Err(ModelError(format!("no {k}"))),
        };
        let operations = take("operations")?;
        let shapes = take("shapes")?;
        let namespace = doc
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let ec2 = doc.get("protocol").and_then(Value::as_str) == Some("ec2");
        Ok(QueryModel {
            namespace,
            ec2,
            operations,
            shapes,
        })
    }

    pub fn has_operation(&self, op: &str) -> bool {
        self.operations.contains_key(op)
    }

    /// A shape by name (`Value::Null` when the model has none).
    pub fn shape(&self, name: &str) -> &Value {
        self.shapes.get(name).unwrap_or(&Value::Null)
    }

    /// The operation's output shape, if it has one.
    pub fn output_shape(&self, op: &str) -> Option<&str> {
        self.operations.get(op).and_then(|o| o["output"].as_str())
    }

    /// The element an operation's answer wraps its output in (`<Op>Result`; EC2 has none).
    pub fn result_wrapper(&self, op: &str) -> Option<&str> {
        self.operations.get(op).and_then(|o| o["wrapper"].as_str())
    }

    /// The name of the error shape whose query code is `code` (`InvalidParameterValue` is
    /// `InvalidParameterValueException`): what an awsQueryCompatible service's JSON errors
    /// carry as `__type`.
    pub fn error_shape(&self, code: &str) -> Option<&str> {
        let is_error = |name: &str| self.shape(name).get("error").is_some();
        if is_error(code) {
            return self.shapes.get_key_value(code).map(|(k, _)| k.as_str());
        }
        self.shapes
            .iter()
            .find(|(_, s)| s["error"]["code"].as_str() == Some(code))
            .map(|(name, _)| name.as_str())
    }

    /// The request's parameters as the operation's input, in member names. A value that does
    /// not parse as its shape's type is AWS's `ValidationError`.
    pub fn decode(&self, op: &str, params: &QueryParams) -> Result<Value, AwsError> {
        let Some(input) = self.operations.get(op).and_then(|o| o["input"].as_str()) else {
            return Ok(Value::Object(Map::new()));
        };
        Ok(self
            .decode_shape(input, "", params)?
            .unwrap_or(Value::Object(Map::new())))
    }

    fn decode_shape(
        &self,
        shape: &str,
        prefix: &str,
        p: &QueryParams,
    ) -> Result<Option<Value>, AwsError> {
        let s = self.shape(shape);
        let key = |name: &str| {
            if prefix.is_empty() {
                name.to_string()
            } else {
                format!("{prefix}.{name}")
            }
        };
        match s["type"].as_str().unwrap_or("string") {
            "structure" => {
                let mut out = Map::new();
                if let Some(members) = s["members"].as_object() {
                    for (name, m) in members {
                        let wire = m["locationName"].as_str().unwrap_or(name);
                        let target = m["shape"].as_str().unwrap_or("");
                        if let Some(v) = self.decode_shape(target, &key(wire), p)? {
                            out.insert(name.clone(), v);
                        }
                    }
                }
                Ok((!out.is_empty() || prefix.is_empty()).then_some(Value::Object(out)))
            }
            "list" => {
                let member = s["member"]["shape"].as_str().unwrap_or("");
                let flattened = s["flattened"].as_bool().unwrap_or(false);
                let base = if flattened {
                    prefix.to_string()
                } else {
                    format!("{prefix}.member")
                };
                let mut items = Vec::new();
                for i in 1.. {
                    match self.decode_shape(member, &format!("{base}.{i}"), p)? {
                        Some(v) => items.push(v),
                        None => break,
                    }
                }
                // `Name=` (empty) is how a client sends an empty list.
                let empty = p.get(prefix).is_some();
                Ok((!items.is_empty() || empty).then_some(Value::Array(items)))
            }
            "map" => {
                let kshape = s["key"]["shape"].as_str().unwrap_or("");
                let vshape = s["value"]["shape"].as_str().unwrap_or("");
                let mut out = Map::new();
                for i in 1.. {
                    let entry = format!("{prefix}.entry.{i}");
                    let Some(Value::String(k)) =
                        self.decode_shape(kshape, &format!("{entry}.key"), p)?
                    else {
                        break;
                    };
                    let v = self
                        .decode_shape(vshape, &format!("{entry}.value"), p)?
                        .unwrap_or(Value::Null);
                    out.insert(k, v);
                }
                Ok((!out.is_empty()).then_some(Value::Object(out)))
            }
            kind => {
                let Some(raw) = p.get(prefix) else {
                    return Ok(None);
                };
                let bad = || {
                    AwsError::bad_request(
                        "ValidationError",
                        format!(
                            "Value '{raw}' at '{prefix}' failed to satisfy constraint: Member must be of type {kind}"
                        ),
                    )
                };
                Ok(Some(match kind {
                    "integer" | "long" => Value::from(raw.parse::<i64>().map_err(|_| bad())?),
                    "double" | "float" => {
                        serde_json::Number::from_f64(raw.parse::<f64>().map_err(|_| bad())?)
                            .map(Value::Number)
                            .ok_or_else(bad)?
                    }
                    "boolean" => match raw {
                        "true" => Value::Bool(true),
                        "false" => Value::Bool(false),
                        _ => return Err(bad()),
                    },
                    _ => Value::String(raw.to_string()),
                }))
            }
        }
    }

    /// `input` with every scalar in the type the operation's input shape gives it (`"80"` for
    /// an integer member becomes 80, `"true"` for a boolean true); what does not parse is left
    /// as it is for the operation to refuse.
    pub fn coerce(&self, op: &str, input: Value) -> Value {
        match self.operations.get(op).and_then(|o| o["input"].as_str()) {
            Some(shape) => self.coerce_shape(shape, input),
            None => input,
        }
    }

    fn coerce_shape(&self, shape: &str, v: Value) -> Value {
        let s = self.shape(shape);
        match (s["type"].as_str().unwrap_or("string"), v) {
            ("structure", Value::Object(obj)) => {
                let members = s["members"].as_object();
                Value::Object(
                    obj.into_iter()
                        .map(|(k, v)| {
                            let target = members
                                .and_then(|m| m.get(&k))
                                .and_then(|m| m["shape"].as_str());
                            let v = match target {
                                Some(t) => self.coerce_shape(t, v),
                                None => v,
                            };
                            (k, v)
                        })
                        .collect(),
                )
            }
            ("list", Value::Array(items)) => {
                let member = s["member"]["shape"].as_str().unwrap_or("");
                Value::Array(
                    items
                        .into_iter()
                        .map(|i| self.coerce_shape(member, i))
                        .collect(),
                )
            }
            ("integer" | "long", Value::String(t)) => t
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or(Value::String(t)),
            ("double" | "float", Value::String(t)) => t
                .parse::<f64>()
                .ok()
                .and_then(serde_json::Number::from_f64)
                .map_or(Value::String(t), Value::Number),
            ("boolean", Value::String(t)) => match t.as_str() {
                "true" | "True" => Value::Bool(true),
                "false" | "False" => Value::Bool(false),
                _ => Value::String(t),
            },
            ("string", Value::Number(n)) => Value::String(n.to_string()),
            ("string", Value::Bool(b)) => Value::String(b.to_string()),
            (_, v) => v,
        }
    }

    /// The whole answer document: `<OpResponse><OpResult>...</OpResult><ResponseMetadata>`.
    pub fn encode(&self, op: &str, result: &Value, request_id: &str) -> String {
        let mut body = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
        let _ = write!(body, "<{op}Response xmlns=\"{}\">", escape(&self.namespace));
        let o = self.operations.get(op);
        if let (Some(wrapper), Some(output)) = (
            o.and_then(|o| o["wrapper"].as_str()),
            o.and_then(|o| o["output"].as_str()),
        ) {
            let _ = write!(body, "<{wrapper}>");
            self.encode_members(output, result, &mut body);
            let _ = write!(body, "</{wrapper}>");
        }
        let _ = write!(
            body,
            "<ResponseMetadata><RequestId>{}</RequestId></ResponseMetadata></{op}Response>",
            escape(request_id)
        );
        body
    }

    fn encode_members(&self, shape: &str, v: &Value, out: &mut String) {
        let (Some(members), Some(obj)) = (self.shape(shape)["members"].as_object(), v.as_object())
        else {
            return;
        };
        for (name, m) in members {
            let Some(value) = obj.get(name).filter(|v| !v.is_null()) else {
                continue;
            };
            let element = m["locationName"].as_str().unwrap_or(name);
            let target = m["shape"].as_str().unwrap_or("");
            let flattened = self.shape(target)["flattened"].as_bool().unwrap_or(false);
            if flattened {
                self.encode_list_items(target, element, value, out);
            } else {
                let _ = write!(out, "<{element}>");
                self.encode_value(target, value, out);
                let _ = write!(out, "</{element}>");
            }
        }
    }

    fn encode_list_items(&self, shape: &str, element: &str, v: &Value, out: &mut String) {
        let member = self.shape(shape)["member"]["shape"].as_str().unwrap_or("");
        for item in v.as_array().into_iter().flatten() {
            let _ = write!(out, "<{element}>");
            self.encode_value(member, item, out);
            let _ = write!(out, "</{element}>");
        }
    }

    fn encode_value(&self, shape: &str, v: &Value, out: &mut String) {
        let s = self.shape(shape);
        match s["type"].as_str().unwrap_or("string") {
            "structure" => self.encode_members(shape, v, out),
            "list" => {
                let element = s["member"]["locationName"].as_str().unwrap_or("member");
                self.encode_list_items(shape, element, v, out);
            }
            "map" => {
                let (ks, vs) = (
                    s["key"]["shape"].as_str().unwrap_or(""),
                    s["value"]["shape"].as_str().unwrap_or(""),
                );
                for (k, val) in v.as_object().into_iter().flatten() {
                    out.push_str("<entry><key>");
                    self.encode_value(ks, &Value::String(k.clone()), out);
                    out.push_str("</key><value>");
                    self.encode_value(vs, val, out);
                    out.push_str("</value></entry>");
                }
            }
            "timestamp" if v.is_number() => {
                let ms = (v.as_f64().unwrap_or(0.0) * 1000.0).round() as i64;
                if let Some(t) = chrono::DateTime::from_timestamp_millis(ms) {
                    out.push_str(&t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string());
                }
            }
            _ => match v {
                Value::String(text) => out.push_str(&escape(text)),
                other => out.push_str(&other.to_string()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const MODEL: &str = r#"{"namespace":"urn:x","operations":{"Make":{"input":"MakeIn","output":"MakeOut","wrapper":"MakeResult"}},
      "shapes":{"MakeIn":{"type":"structure","members":{"Name":{"shape":"S"},"Size":{"shape":"I"},"On":{"shape":"B"},"Tags":{"shape":"TagList"},"Attrs":{"shape":"M"}}},
        "MakeOut":{"type":"structure","members":{"Things":{"shape":"TagList"},"Name":{"shape":"S"}}},
        "TagList":{"type":"list","member":{"shape":"Tag"}},"Tag":{"type":"structure","members":{"Key":{"shape":"S"},"Value":{"shape":"S"}}},
        "M":{"type":"map","key":{"shape":"S"},"value":{"shape":"S"}},
        "S":{"type":"string"},"I":{"type":"integer"},"B":{"type":"boolean"}}}"#;

    fn params(pairs: &[(&str, &str)]) -> QueryParams {
        QueryParams(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn decodes_and_encodes_by_the_model() {
        let m = QueryModel::parse(MODEL).unwrap();
        let p = params(&[
            ("Name", "a&b"),
            ("Size", "3"),
            ("On", "true"),
            ("Tags.member.1.Key", "k1"),
            ("Tags.member.2.Key", "k2"),
            ("Tags.member.2.Value", "v2"),
            ("Attrs.entry.1.key", "x"),
            ("Attrs.entry.1.value", "y"),
        ]);
        let v = m.decode("Make", &p).unwrap();
        assert_eq!(
            v,
            json!({"Name": "a&b", "Size": 3, "On": true, "Tags": [{"Key": "k1"}, {"Key": "k2", "Value": "v2"}], "Attrs": {"x": "y"}})
        );
        let bad = m.decode("Make", &params(&[("Size", "three")])).unwrap_err();
        assert_eq!(bad.code, "ValidationError");
        let xml = m.encode(
            "Make",
            &json!({"Name": "a&b", "Things": [{"Key": "k"}]}),
            "r1",
        );
        assert_eq!(
            xml,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><MakeResponse xmlns=\"urn:x\"><MakeResult><Things><member><Key>k</Key></member></Things><Name>a&amp;b</Name></MakeResult><ResponseMetadata><RequestId>r1</RequestId></ResponseMetadata></MakeResponse>"
        );
    }

    /// A client's model: every kind of member an answer or a request carries.
    const CLIENT: &str = r#"{"namespace":"urn:x","operations":{
        "Get":{"input":"GetIn","output":"GetOut","wrapper":"GetResult"},
        "Bare":{"input":null,"output":null,"wrapper":null}},
      "shapes":{
        "GetIn":{"type":"structure","members":{"Names":{"shape":"Strings"},"Flat":{"shape":"FlatStrings"},
          "Attrs":{"shape":"M"},"Since":{"shape":"T"},"On":{"shape":"B"},"N":{"shape":"I"}}},
        "GetOut":{"type":"structure","members":{"Count":{"shape":"I"},"Big":{"shape":"L"},"Ratio":{"shape":"D"},
          "On":{"shape":"B"},"When":{"shape":"T"},"Names":{"shape":"Strings"},"Flat":{"shape":"FlatStrings","locationName":"Item"},
          "Attrs":{"shape":"M"},"Pairs":{"shape":"FlatMap","locationName":"Pair"},"Inner":{"shape":"Inner"}}},
        "Inner":{"type":"structure","members":{"Name":{"shape":"S"},"Count":{"shape":"I"}}},
        "Strings":{"type":"list","member":{"shape":"S"}},
        "FlatStrings":{"type":"list","member":{"shape":"S"},"flattened":true},
        "M":{"type":"map","key":{"shape":"S"},"value":{"shape":"I"}},
        "FlatMap":{"type":"map","key":{"shape":"S","locationName":"Name"},"value":{"shape":"S","locationName":"Value"},"flattened":true},
        "S":{"type":"string"},"I":{"type":"integer"},"L":{"type":"long"},"D":{"type":"double"},"B":{"type":"boolean"},"T":{"type":"timestamp"}}}"#;

    /// EC2's dialect: no result wrapper, `item` lists, names from locationName and queryName.
    const EC2: &str = r#"{"namespace":"urn:e","protocol":"ec2","operations":{
        "DescribeVpcs":{"input":"In","output":"Out","wrapper":null}},
      "shapes":{
        "In":{"type":"structure","members":{"VpcIds":{"shape":"Ids","locationName":"VpcId"},
          "Filters":{"shape":"Filters","locationName":"Filter"},"DryRun":{"shape":"B","locationName":"dryRun"},
          "Cidr":{"shape":"S","locationName":"cidrBlock","queryName":"CidrBlock"},"Empty":{"shape":"Ids"}}},
        "Ids":{"type":"list","member":{"shape":"S","locationName":"VpcId"}},
        "Filters":{"type":"list","member":{"shape":"Filter","locationName":"Filter"}},
        "Filter":{"type":"structure","members":{"Name":{"shape":"S"},"Values":{"shape":"Ids","locationName":"Value"}}},
        "Out":{"type":"structure","members":{"Vpcs":{"shape":"Vpcs","locationName":"vpcSet"},"NextToken":{"shape":"S","locationName":"nextToken"}}},
        "Vpcs":{"type":"list","member":{"shape":"Vpc","locationName":"item"}},
        "Vpc":{"type":"structure","members":{"VpcId":{"shape":"S","locationName":"vpcId"},"IsDefault":{"shape":"B","locationName":"isDefault"},
          "Tags":{"shape":"Tags","locationName":"tagSet"}}},
        "Tags":{"type":"list","member":{"shape":"Tag","locationName":"item"}},
        "Tag":{"type":"structure","members":{"Key":{"shape":"S","locationName":"key"},"Value":{"shape":"S","locationName":"value"}}},
        "S":{"type":"string"},"B":{"type":"boolean"}}}"#;

    const ANSWER: &str = r#"<?xml version="1.0"?><GetResponse xmlns="urn:x"><GetResult>
        <Count>3</Count><Big>12345678901</Big><Ratio>0.5</Ratio><On>true</On><When>2024-05-01T10:00:00.250Z</When>
        <Names><member>a</member><member>b &amp; c</member></Names>
        <Item>x</Item><Item>y</Item>
        <Attrs><entry><key>k</key><value>7</value></entry></Attrs>
        <Pair><Name>p</Name><Value>q</Value></Pair><Pair><Name>r</Name><Value>s</Value></Pair>
        <Inner><Name>n</Name></Inner>
      </GetResult><ResponseMetadata><RequestId>req-1</RequestId></ResponseMetadata></GetResponse>"#;

    #[test]
    fn reads_answers_in_the_sdk_types() {
        let m = QueryModel::parse(CLIENT).unwrap();
        let a = m
            .read_answer("Get", ANSWER.as_bytes(), AnswerForm::Sdk)
            .unwrap();
        assert_eq!(a.request_id.as_deref(), Some("req-1"));
        assert_eq!(
            a.result,
            json!({"Count": 3, "Big": 12345678901_i64, "Ratio": 0.5, "On": true,
                "When": "2024-05-01T10:00:00.250Z", "Names": ["a", "b & c"], "Flat": ["x", "y"],
                "Attrs": {"k": 7}, "Pairs": {"p": "q", "r": "s"}, "Inner": {"Name": "n"}})
        );
        // An empty list element is an empty list; a missing one, and a missing flattened
        // list, are absent in the SDK's result.
        let empty = br#"<GetResponse><GetResult><Names/><Attrs></Attrs></GetResult></GetResponse>"#;
        let a = m.read_answer("Get", empty, AnswerForm::Sdk).unwrap();
        assert_eq!(a.result, json!({"Names": [], "Attrs": {}}));
        assert_eq!(a.request_id, None);
        // An operation without output reads as an empty object; one the model lacks is refused.
        let bare = br#"<BareResponse><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></BareResponse>"#;
        assert_eq!(
            m.read_answer("Bare", bare, AnswerForm::Sdk).unwrap().result,
            json!({})
        );
        assert!(m.read_answer("Other", bare, AnswerForm::Sdk).is_err());
        assert!(
            m.read_answer("Get", b"<unclosed>", AnswerForm::Sdk)
                .is_err()
        );
    }

    #[test]
    fn the_json_form_writes_absent_members_as_null_and_timestamps_as_epoch_seconds() {
        let m = QueryModel::parse(CLIENT).unwrap();
        let a = m
            .read_answer("Get", ANSWER.as_bytes(), AnswerForm::Json)
            .unwrap();
        assert_eq!(a.result["When"], json!(1714557600.25));
        assert_eq!(a.result["Inner"], json!({"Name": "n", "Count": null}));
        let empty = br#"<GetResponse><GetResult><Count>x</Count></GetResult></GetResponse>"#;
        let a = m.read_answer("Get", empty, AnswerForm::Json).unwrap();
        // Text that is not its type's stays text rather than being lost.
        assert_eq!(
            a.result,
            json!({"Count": "x", "Big": null, "Ratio": null, "On": null, "When": null, "Names": null,
                "Flat": null, "Attrs": null, "Pairs": null, "Inner": null})
        );
    }

    #[test]
    fn a_json_answer_gets_the_json_forms_nulls() {
        let m = QueryModel::parse(CLIENT).unwrap();
        let v = m.with_nulls(
            "Get",
            json!({"Count": 1, "Inner": {"Name": "n"}, "Attrs": {"k": 2}, "Extra": true}),
        );
        assert_eq!(v["Inner"], json!({"Name": "n", "Count": null}));
        assert_eq!(
            (&v["Count"], &v["Extra"], &v["When"]),
            (&json!(1), &json!(true), &Value::Null)
        );
        assert_eq!(m.with_nulls("Other", json!({"A": 1})), json!({"A": 1}));
    }

    #[test]
    fn reads_ec2_answers_by_location_names() {
        let m = QueryModel::parse(EC2).unwrap();
        let xml = br#"<DescribeVpcsResponse xmlns="urn:e"><requestId>r-9</requestId><vpcSet>
            <item><vpcId>vpc-1</vpcId><isDefault>true</isDefault><tagSet><item><key>Name</key><value>n</value></item></tagSet></item>
            <item><vpcId>vpc-2</vpcId><isDefault>false</isDefault><tagSet/></item></vpcSet></DescribeVpcsResponse>"#;
        let a = m.read_answer("DescribeVpcs", xml, AnswerForm::Sdk).unwrap();
        assert_eq!(a.request_id.as_deref(), Some("r-9"));
        assert_eq!(
            a.result,
            json!({"Vpcs": [
                {"VpcId": "vpc-1", "IsDefault": true, "Tags": [{"Key": "Name", "Value": "n"}]},
                {"VpcId": "vpc-2", "IsDefault": false, "Tags": []}]})
        );
    }

    fn pairs(form: Vec<(String, String)>) -> Vec<String> {
        form.into_iter().map(|(k, v)| format!("{k}={v}")).collect()
    }

    #[test]
    fn writes_query_requests_from_the_input_shape() {
        let m = QueryModel::parse(CLIENT).unwrap();
        let form = m
            .form(
                "Get",
                &json!({"Names": ["a", "b"], "Flat": ["x"], "Attrs": {"k": 1}, "Since": 1714557600.25,
                    "On": false, "N": 4}),
            )
            .unwrap();
        let mut got = pairs(form);
        got.sort();
        assert_eq!(
            got,
            [
                "Attrs.entry.1.key=k",
                "Attrs.entry.1.value=1",
                "Flat.1=x",
                "N=4",
                "Names.member.1=a",
                "Names.member.2=b",
                "On=false",
                "Since=2024-05-01T10:00:00.250Z",
            ]
        );
        // awsQuery sends an empty list as an empty value; a null is left out.
        assert_eq!(
            pairs(m.form("Get", &json!({"Names": [], "N": null})).unwrap()),
            ["Names="]
        );
        let bad = m.form("Get", &json!({"Nope": 1})).unwrap_err();
        assert_eq!(bad.code, "ValidationException");
        assert!(
            bad.message
                .starts_with("Unknown parameter in input: \"Nope\"")
        );
        assert!(m.form("Bare", &json!({"X": 1})).is_err());
    }

    #[test]
    fn writes_ec2_requests_by_query_names() {
        let m = QueryModel::parse(EC2).unwrap();
        let form = m
            .form(
                "DescribeVpcs",
                &json!({"VpcIds": ["vpc-1", "vpc-2"], "DryRun": false, "Cidr": "10.0.0.0/16", "Empty": [],
                    "Filters": [{"Name": "tag:Name", "Values": ["a", "b"]}]}),
            )
            .unwrap();
        let mut got = pairs(form);
        got.sort();
        assert_eq!(
            got,
            [
                "CidrBlock=10.0.0.0/16",
                "DryRun=false",
                "Filter.1.Name=tag:Name",
                "Filter.1.Value.1=a",
                "Filter.1.Value.2=b",
                "VpcId.1=vpc-1",
                "VpcId.2=vpc-2",
            ]
        );
    }
}
