//! The SDK's direction of the rest-xml protocol, for in-process callers that speak a service's
//! API as a client does (Step Functions' `aws-sdk:` Tasks): an operation's input, in the API's
//! member names, written as the HTTP request an SDK sends (method, URI template with its
//! labels, query string, headers, XML or raw payload), and the service's answer read back into
//! the operation's output, typed by the model (numbers, booleans, timestamps as instants,
//! lists, maps), or its error into a code and message.

use super::{Element, Reading, RestXmlModel, parse_xml};
use crate::{AwsError, AwsRequest, AwsResponse};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value};

/// Why an input cannot be written as a request.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RequestError {
    #[error("the API has no operation {0}")]
    UnknownOperation(String),
    #[error("{operation} has no parameter {member}")]
    UnknownMember { operation: String, member: String },
    #[error("{operation} needs the parameter {member}")]
    MissingLabel { operation: String, member: String },
}

/// Everything but unreserved characters percent-encoded (`/` kept in a greedy label).
fn encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (keep_slash && b == b'/')
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A time given as ISO 8601, an HTTP date or epoch seconds.
fn parse_time(v: &Value) -> Option<DateTime<Utc>> {
    match v {
        Value::Number(n) => {
            let secs = n.as_f64()?;
            DateTime::from_timestamp_millis((secs * 1000.0).round() as i64)
        }
        Value::String(s) => {
            let s = s.trim();
            DateTime::parse_from_rfc3339(s)
                .or_else(|_| DateTime::parse_from_rfc2822(s))
                .map(|d| d.with_timezone(&Utc))
                .ok()
                .or_else(|| parse_time(&Value::from(s.parse::<f64>().ok()?)))
        }
        _ => None,
    }
}

/// A timestamp as the SDKs' instants print (`2017-03-27T18:12:11Z`, fractional seconds only
/// when there are any), from any of the forms a service writes.
pub(super) fn instant(text: &str) -> Option<String> {
    parse_time(&Value::String(text.to_string()))
        .map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// A scalar parameter as text in a URI, query or header: timestamps in the member's format
/// (`header` default: an HTTP date; elsewhere ISO 8601).
fn text(value: &Value, format: Option<&str>) -> String {
    if let Some(format) = format
        && let Some(t) = parse_time(value)
    {
        return match format {
            "rfc822" => t.format("%a, %d %b %Y %H:%M:%S GMT").to_string(),
            "unixTimestamp" => t.timestamp().to_string(),
            _ => t.to_rfc3339_opts(SecondsFormat::AutoSi, true),
        };
    }
    match value {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|i| text(i, None))
            .collect::<Vec<_>>()
            .join(","),
        other => other.to_string(),
    }
}

/// An error answer's code and message: the XML `<Error>` (in `<ErrorResponse>` or alone), or,
/// when there is no body (HEAD), the status's name as S3 and the SDKs give it.
pub fn error_code(resp: &AwsResponse) -> (String, String) {
    fn find<'a>(e: &'a Element, name: &str) -> Option<&'a Element> {
        if e.name == name {
            return Some(e);
        }
        e.children.iter().find_map(|c| find(c, name))
    }
    let parsed = parse_xml(&resp.body).ok();
    if let Some(error) = parsed.as_ref().and_then(|r| find(r, "Error"))
        && let Some(code) = error.child("Code")
    {
        let message = error.child("Message").map(|m| m.text.clone());
        return (code.text.clone(), message.unwrap_or_default());
    }
    let code = match resp.status.as_u16() {
        304 => "NotModified",
        400 => "BadRequest",
        403 => "Forbidden",
        404 => "NotFound",
        412 => "PreconditionFailed",
        _ => "UnknownError",
    };
    let reason = resp.status.canonical_reason().unwrap_or("").to_string();
    (code.to_string(), reason)
}

impl RestXmlModel {
    /// Whether the model has this operation.
    pub fn has_operation(&self, op: &str) -> bool {
        self.operations.contains_key(op)
    }

    fn members(&self, shape: &str) -> Map<String, Value> {
        self.shape(shape)["members"]
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    /// The timestamp format of a member, when its shape is a timestamp.
    fn time_format<'a>(&'a self, spec: &'a Value, default: &'a str) -> Option<&'a str> {
        let shape = self.shape(spec["shape"].as_str().unwrap_or(""));
        if shape["type"] != "timestamp" {
            return None;
        }
        spec["timestampFormat"]
            .as_str()
            .or_else(|| shape["timestampFormat"].as_str())
            .or(Some(default))
    }

    /// The request an SDK sends for `op` with `input` (the API's member names): labels in the
    /// URI template, query and header members where the model binds them, the payload member
    /// (raw text for a blob or string, any other JSON value as its JSON text; XML for a
    /// structure) or the other members as the input's XML document.
    pub fn request(&self, op: &str, input: &Value) -> Result<AwsRequest, RequestError> {
        let def = self
            .operations
            .get(op)
            .ok_or_else(|| RequestError::UnknownOperation(op.to_string()))?;
        let input_shape = def["input"].as_str().unwrap_or("");
        let members = self.members(input_shape);
        let given = input.as_object().cloned().unwrap_or_default();
        if let Some(unknown) = given.keys().find(|k| !members.contains_key(*k))
            && !input_shape.is_empty()
        {
            return Err(RequestError::UnknownMember {
                operation: op.to_string(),
                member: unknown.clone(),
            });
        }
        let present = |m: &str| given.get(m).filter(|v| !v.is_null());
        let uri = def["uri"].as_str().unwrap_or("/");
        let (template, fixed) = uri.split_once('?').unwrap_or((uri, ""));

        let mut path = String::new();
        let mut tail = template;
        while let Some(start) = tail.find('{') {
            path.push_str(&tail[..start]);
            let end = tail[start..].find('}').map_or(tail.len(), |e| start + e);
            let label = &tail[start + 1..end];
            let (label, greedy) = match label.strip_suffix('+') {
                Some(l) => (l, true),
                None => (label, false),
            };
            // The member bound to this label (a model without the input binds it by name).
            let member = members
                .iter()
                .find(|(_, s)| s["location"] == "uri" && s["locationName"] == label)
                .map_or(label, |(m, _)| m.as_str());
            let value = present(member).ok_or_else(|| RequestError::MissingLabel {
                operation: op.to_string(),
                member: member.to_string(),
            })?;
            path.push_str(&encode(&text(value, None), greedy));
            tail = tail.get(end + 1..).unwrap_or("");
        }
        path.push_str(tail);

        let mut query: Vec<String> = fixed
            .split('&')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect();
        let mut headers: Vec<(String, String)> = Vec::new();
        let mut body_members = Map::new();
        for (m, spec) in &members {
            let Some(value) = present(m) else { continue };
            let loc = spec["locationName"].as_str().unwrap_or(m);
            match spec["location"].as_str() {
                Some("uri") => {}
                Some("querystring") => {
                    let format = self.time_format(spec, "iso8601");
                    let pairs: Vec<(String, &Value)> = match value {
                        Value::Array(items) => items.iter().map(|i| (loc.to_string(), i)).collect(),
                        Value::Object(map) => map.iter().map(|(k, v)| (k.clone(), v)).collect(),
                        v => vec![(loc.to_string(), v)],
                    };
                    for (k, v) in pairs {
                        query.push(format!(
                            "{}={}",
                            encode(&k, false),
                            encode(&text(v, format), false)
                        ));
                    }
                }
                Some("header") => {
                    let format = self.time_format(spec, "rfc822");
                    headers.push((loc.to_string(), text(value, format)));
                }
                Some("headers") => {
                    for (k, v) in value.as_object().into_iter().flatten() {
                        headers.push((format!("{loc}{k}"), text(v, None)));
                    }
                }
                _ => {
                    body_members.insert(m.clone(), value.clone());
                }
            }
        }

        let shape = self.shape(input_shape);
        let mut content_type = "application/xml";
        let body = match shape["payload"].as_str() {
            Some(payload) => match body_members.get(payload) {
                None => None,
                Some(v) => {
                    let spec = &members[payload];
                    let pshape = spec["shape"].as_str().unwrap_or("");
                    if matches!(self.shape(pshape)["type"].as_str(), Some("blob" | "string")) {
                        content_type = "";
                        Some(match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                    } else {
                        let root = spec["locationName"]
                            .as_str()
                            .or_else(|| self.shape(pshape)["locationName"].as_str())
                            .unwrap_or(payload);
                        let ns = spec["xmlNamespace"]["uri"]
                            .as_str()
                            .or_else(|| self.root_namespace());
                        let mut xml = String::new();
                        self.write(&mut xml, root, pshape, v, ns);
                        Some(xml)
                    }
                }
            },
            None if body_members.is_empty() => None,
            None => {
                let root = shape["locationName"].as_str().unwrap_or(input_shape);
                let ns = shape["xmlNamespace"]["uri"]
                    .as_str()
                    .or_else(|| self.root_namespace());
                let mut xml = String::new();
                self.write(
                    &mut xml,
                    root,
                    input_shape,
                    &Value::Object(body_members),
                    ns,
                );
                Some(xml)
            }
        };

        if !query.is_empty() {
            path = format!("{path}?{}", query.join("&"));
        }
        let method = def["method"]
            .as_str()
            .and_then(|m| m.parse().ok())
            .unwrap_or(http::Method::POST);
        let mut req = AwsRequest::new(method, &path);
        for (name, value) in headers {
            if let (Ok(n), Ok(v)) = (
                http::HeaderName::from_bytes(name.as_bytes()),
                http::HeaderValue::from_str(&value),
            ) {
                req.headers.append(n, v);
            }
        }
        if let Some(body) = body {
            if !content_type.is_empty()
                && !req.headers.contains_key("content-type")
                && let Ok(v) = http::HeaderValue::from_str(content_type)
            {
                req.headers.insert("content-type", v);
            }
            req.body = body.into();
        }
        Ok(req)
    }

    /// A successful answer to `op` as the operation's output: header members typed by their
    /// shapes (a prefixed header map is always there, empty when no header has the prefix),
    /// the status code where the model binds it, and the payload (a blob or string as text) or
    /// the XML document's members.
    pub fn answer(&self, op: &str, resp: &AwsResponse) -> Result<Value, AwsError> {
        let Some(out_shape) = self.operations.get(op).and_then(|o| o["output"].as_str()) else {
            return Ok(Value::Object(Map::new()));
        };
        let members = self.members(out_shape);
        let mut out = Map::new();
        for (m, spec) in &members {
            let loc = spec["locationName"].as_str().unwrap_or(m);
            let mshape = spec["shape"].as_str().unwrap_or("");
            match spec["location"].as_str() {
                Some("header") => {
                    // An in-process answer has no Content-Length unless the service set one
                    // (HEAD); the transport would send the body's.
                    let length = resp.body.len().to_string();
                    let v = resp.headers.get(loc).and_then(|v| v.to_str().ok());
                    let v = v.or((loc.eq_ignore_ascii_case("content-length")).then_some(&*length));
                    if let Some(v) = v {
                        let v = if self.shape(mshape)["type"] == "list" {
                            Value::from(
                                v.split(',')
                                    .map(|s| s.trim().to_string())
                                    .collect::<Vec<_>>(),
                            )
                        } else {
                            self.scalar(mshape, v, loc, Reading::Answer)?
                        };
                        out.insert(m.clone(), v);
                    }
                }
                Some("headers") => {
                    let prefix = loc.to_ascii_lowercase();
                    let map: Map<String, Value> = resp
                        .headers
                        .iter()
                        .filter_map(|(k, v)| {
                            let key = k.as_str().strip_prefix(&prefix)?;
                            Some((key.to_string(), Value::from(v.to_str().ok()?)))
                        })
                        .collect();
                    out.insert(m.clone(), Value::Object(map));
                }
                Some("statusCode") => {
                    out.insert(m.clone(), Value::from(resp.status.as_u16()));
                }
                _ => {}
            }
        }
        let shape = self.shape(out_shape);
        if let Some(payload) = shape["payload"].as_str() {
            let pshape = members[payload]["shape"].as_str().unwrap_or("");
            if matches!(self.shape(pshape)["type"].as_str(), Some("blob" | "string")) {
                let text = String::from_utf8_lossy(&resp.body).into_owned();
                out.insert(payload.to_string(), Value::String(text));
            } else if !resp.body.iter().all(u8::is_ascii_whitespace) {
                let root = parse_xml(&resp.body)?;
                out.insert(
                    payload.to_string(),
                    self.read(pshape, &root, Reading::Answer)?,
                );
            }
        } else if !resp.body.iter().all(u8::is_ascii_whitespace) {
            let root = parse_xml(&resp.body)?;
            // A one-member document may be that member itself (S3's `<LocationConstraint>`).
            let itself = members.iter().find(|(m, spec)| {
                !spec["location"].is_string()
                    && spec["locationName"].as_str().unwrap_or(m) == root.name
                    && root.child(&root.name).is_none()
            });
            if let Some((m, spec)) = itself {
                let mshape = spec["shape"].as_str().unwrap_or("");
                out.insert(m.clone(), self.read(mshape, &root, Reading::Answer)?);
            } else if let Value::Object(body) = self.read(out_shape, &root, Reading::Answer)? {
                for (k, v) in body {
                    if !members[&k]["location"].is_string() {
                        out.insert(k, v);
                    }
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::{Method, StatusCode};
    use serde_json::json;

    fn model() -> RestXmlModel {
        RestXmlModel::parse(
            &json!({
                "namespace": "http://x.amazonaws.com/doc/1/",
                "operations": {
                    "PutThing": {"method": "PUT", "uri": "/{Bucket}/{Key+}?x-id=PutThing", "code": 200, "input": "PutReq", "output": "PutRes"},
                    "GetThing": {"method": "GET", "uri": "/{Bucket}/{Key+}", "code": 200, "input": "GetReq", "output": "GetRes"},
                    "ChangeSets": {"method": "POST", "uri": "/2013/zone/{Id}/rrset", "code": 200, "input": "ChangeReq", "output": "ListRes"},
                    "Tag": {"method": "PUT", "uri": "/{Bucket}?tagging", "code": 204, "input": "TagReq"},
                    "Location": {"method": "GET", "uri": "/{Bucket}?location", "code": 200, "input": "LocReq", "output": "LocRes"}
                },
                "shapes": {
                    "PutReq": {"type": "structure", "payload": "Body", "members": {
                        "Bucket": {"shape": "string", "location": "uri", "locationName": "Bucket"},
                        "Key": {"shape": "string", "location": "uri", "locationName": "Key"},
                        "Body": {"shape": "blob"},
                        "Meta": {"shape": "Meta", "location": "headers", "locationName": "x-amz-meta-"},
                        "Since": {"shape": "time", "location": "header", "locationName": "If-Modified-Since"},
                        "Max": {"shape": "integer", "location": "querystring", "locationName": "max-keys"},
                        "Names": {"shape": "Names", "location": "querystring", "locationName": "name"}}},
                    "PutRes": {"type": "structure", "members": {
                        "ETag": {"shape": "string", "location": "header", "locationName": "ETag"},
                        "Size": {"shape": "long", "location": "header", "locationName": "Content-Length"},
                        "Modified": {"shape": "time", "location": "header", "locationName": "Last-Modified"},
                        "Meta": {"shape": "Meta", "location": "headers", "locationName": "x-amz-meta-"},
                        "Body": {"shape": "blob"}}, "payload": "Body"},
                    "GetReq": {"type": "structure", "members": {
                        "Bucket": {"shape": "string", "location": "uri", "locationName": "Bucket"},
                        "Key": {"shape": "string", "location": "uri", "locationName": "Key"}}},
                    "GetRes": {"type": "structure", "members": {
                        "Missing": {"shape": "boolean", "location": "header", "locationName": "x-missing"}}},
                    "ChangeReq": {"type": "structure", "locationName": "ChangeReq",
                        "xmlNamespace": {"uri": "https://x.amazonaws.com/doc/2013/"}, "members": {
                        "Id": {"shape": "string", "location": "uri", "locationName": "Id"},
                        "Batch": {"shape": "Batch"}}},
                    "Batch": {"type": "structure", "members": {"Changes": {"shape": "Changes"}, "Weights": {"shape": "Weights"}}},
                    "Changes": {"type": "list", "member": {"shape": "Change", "locationName": "Change"}},
                    "Change": {"type": "structure", "members": {"Action": {"shape": "string"}, "TTL": {"shape": "long"}}},
                    "Weights": {"type": "map", "key": {"shape": "string"}, "value": {"shape": "integer"}},
                    "ListRes": {"type": "structure", "members": {
                        "Items": {"shape": "Items"}, "Truncated": {"shape": "boolean"},
                        "Count": {"shape": "integer"}, "When": {"shape": "time"},
                        "Weights": {"shape": "Weights"}, "Empty": {"shape": "Names"}}},
                    "Items": {"type": "list", "member": {"shape": "Change"}, "flattened": true},
                    "TagReq": {"type": "structure", "payload": "Tagging", "members": {
                        "Bucket": {"shape": "string", "location": "uri", "locationName": "Bucket"},
                        "Tagging": {"shape": "Tagging", "locationName": "Tagging",
                            "xmlNamespace": {"uri": "http://s3.amazonaws.com/doc/2006-03-01/"}}}},
                    "Tagging": {"type": "structure", "members": {"TagSet": {"shape": "TagSet"}}},
                    "TagSet": {"type": "list", "member": {"shape": "Tag", "locationName": "Tag"}},
                    "Tag": {"type": "structure", "members": {"Key": {"shape": "string"}, "Value": {"shape": "string"}}},
                    "LocReq": {"type": "structure", "members": {
                        "Bucket": {"shape": "string", "location": "uri", "locationName": "Bucket"}}},
                    "LocRes": {"type": "structure", "members": {"LocationConstraint": {"shape": "string"}}},
                    "Names": {"type": "list", "member": {"shape": "string"}},
                    "Meta": {"type": "map", "key": {"shape": "string"}, "value": {"shape": "string"}},
                    "string": {"type": "string"}, "integer": {"type": "integer"}, "long": {"type": "long"},
                    "boolean": {"type": "boolean"}, "blob": {"type": "blob"}, "time": {"type": "timestamp"}
                }
            })
            .to_string(),
        )
        .unwrap()
    }

    #[test]
    fn writes_labels_query_headers_and_raw_payloads() {
        let m = model();
        let req = m
            .request(
                "PutThing",
                &json!({"Bucket": "b", "Key": "dir/a b.txt", "Body": {"k": 1},
                    "Meta": {"color": "red"}, "Since": "2024-01-02T03:04:05Z", "Max": 5,
                    "Names": ["x", "y&z"]}),
            )
            .unwrap();
        assert_eq!(req.method, Method::PUT);
        assert_eq!(req.raw_path, "/b/dir/a%20b.txt");
        assert_eq!(req.raw_query, "x-id=PutThing&max-keys=5&name=x&name=y%26z");
        assert_eq!(req.header("x-amz-meta-color"), Some("red"));
        assert_eq!(
            req.header("if-modified-since"),
            Some("Tue, 02 Jan 2024 03:04:05 GMT")
        );
        // A JSON value given for a blob is sent as its JSON text.
        assert_eq!(req.body.as_ref(), br#"{"k":1}"#);
        assert_eq!(
            m.request(
                "PutThing",
                &json!({"Bucket": "b", "Key": "k", "Body": "plain"})
            )
            .unwrap()
            .body
            .as_ref(),
            b"plain"
        );
    }

    #[test]
    fn writes_xml_documents_with_their_namespace() {
        let m = model();
        let req = m
            .request(
                "ChangeSets",
                &json!({"Id": "Z1", "Batch": {"Changes": [{"Action": "CREATE", "TTL": 60}],
                    "Weights": {"a": 1}}}),
            )
            .unwrap();
        assert_eq!(req.raw_path, "/2013/zone/Z1/rrset");
        assert_eq!(
            String::from_utf8(req.body.to_vec()).unwrap(),
            "<ChangeReq xmlns=\"https://x.amazonaws.com/doc/2013/\"><Batch><Changes><Change>\
             <Action>CREATE</Action><TTL>60</TTL></Change></Changes><Weights><entry><key>a</key>\
             <value>1</value></entry></Weights></Batch></ChangeReq>"
        );
        let tag = m
            .request(
                "Tag",
                &json!({"Bucket": "b", "Tagging": {"TagSet": [{"Key": "k", "Value": "v"}]}}),
            )
            .unwrap();
        assert_eq!(tag.raw_query, "tagging");
        assert_eq!(
            String::from_utf8(tag.body.to_vec()).unwrap(),
            "<Tagging xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><TagSet><Tag><Key>k</Key>\
             <Value>v</Value></Tag></TagSet></Tagging>"
        );
    }

    #[test]
    fn refuses_unknown_operations_members_and_missing_labels() {
        let m = model();
        assert_eq!(
            m.request("Nope", &json!({})).unwrap_err(),
            RequestError::UnknownOperation("Nope".into())
        );
        assert!(matches!(
            m.request("GetThing", &json!({"Bucket": "b", "Key": "k", "Extra": 1})),
            Err(RequestError::UnknownMember { member, .. }) if member == "Extra"
        ));
        assert!(matches!(
            m.request("GetThing", &json!({"Bucket": "b"})),
            Err(RequestError::MissingLabel { member, .. }) if member == "Key"
        ));
    }

    #[test]
    fn reads_answers_typed_by_the_model() {
        let m = model();
        let mut resp = AwsResponse::new(StatusCode::OK, "text/plain", "hello");
        resp.set_header("ETag", "\"e1\"");
        resp.set_header("Last-Modified", "Tue, 02 Jan 2024 03:04:05 GMT");
        resp.set_header("x-amz-meta-color", "red");
        assert_eq!(
            m.answer("PutThing", &resp).unwrap(),
            json!({"ETag": "\"e1\"", "Size": 5, "Modified": "2024-01-02T03:04:05Z",
                "Meta": {"color": "red"}, "Body": "hello"})
        );
        // A prefixed header map is there even when empty.
        let bare = AwsResponse::new(StatusCode::OK, "", "");
        assert_eq!(
            m.answer("PutThing", &bare).unwrap(),
            json!({"Size": 0, "Meta": {}, "Body": ""})
        );

        let xml = "<ListRes xmlns=\"x\"><Items><Action>A</Action><TTL>300</TTL></Items>\
                   <Items><Action>B</Action></Items><Truncated>false</Truncated><Count>2</Count>\
                   <When>2024-01-02T03:04:05.000Z</When><Weights><entry><key>a</key>\
                   <value>7</value></entry></Weights><Empty/></ListRes>";
        let resp = AwsResponse::new(StatusCode::OK, "text/xml", xml);
        assert_eq!(
            m.answer("ChangeSets", &resp).unwrap(),
            json!({"Items": [{"Action": "A", "TTL": 300}, {"Action": "B"}], "Truncated": false,
                "Count": 2, "When": "2024-01-02T03:04:05Z", "Weights": {"a": 7}, "Empty": []})
        );
        let loc = AwsResponse::new(
            StatusCode::OK,
            "text/xml",
            "<LocationConstraint xmlns=\"x\">eu-west-1</LocationConstraint>",
        );
        assert_eq!(
            m.answer("Location", &loc).unwrap(),
            json!({"LocationConstraint": "eu-west-1"})
        );
        assert_eq!(m.answer("Tag", &bare).unwrap(), json!({}));
    }

    #[test]
    fn reads_error_codes_with_or_without_a_body() {
        let r53 = AwsResponse::new(
            StatusCode::NOT_FOUND,
            "text/xml",
            "<ErrorResponse><Error><Type>Sender</Type><Code>NoSuchHostedZone</Code>\
             <Message>No hosted zone found with ID: Z1</Message></Error></ErrorResponse>",
        );
        assert_eq!(
            error_code(&r53),
            (
                "NoSuchHostedZone".into(),
                "No hosted zone found with ID: Z1".into()
            )
        );
        let s3 = AwsResponse::new(
            StatusCode::NOT_FOUND,
            "application/xml",
            "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>",
        );
        assert_eq!(error_code(&s3).0, "NoSuchKey");
        let head = AwsResponse::empty(StatusCode::NOT_FOUND);
        assert_eq!(error_code(&head), ("NotFound".into(), "Not Found".into()));
    }
}
