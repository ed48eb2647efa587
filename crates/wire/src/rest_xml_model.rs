//! The rest-xml protocol driven by a service's model (written by `scripts/gen-rest-xml-model.py`
//! from botocore's): a request is routed to its operation by method, URI template and literal
//! query keys; its URI labels, query string, headers and XML body are read into one JSON object
//! in the API's member names; an answer in member names is written back as the protocol's
//! headers and XML payload. A service written over it handles JSON values whose keys are the
//! API's (`DistributionConfig`, `Origins`), so its logic never touches XML.

mod client;

pub use client::{RequestError, error_code};

use crate::xml::escape;
use crate::xml_tree::{Element, parse as parse_xml};
use crate::{AwsError, AwsRequest, AwsResponse};
use http::StatusCode;
use serde_json::{Map, Value};

/// A request's URI labels: `(label, decoded value)`.
pub type Labels = Vec<(String, String)>;

/// One service's operations and shapes.
pub struct RestXmlModel {
    namespace: String,
    operations: Map<String, Value>,
    shapes: Map<String, Value>,
}

#[derive(Debug, thiserror::Error)]
#[error("the rest-xml model is unreadable: {0}")]
pub struct ModelError(String);

/// Whose document is read: a request's (the service reads it; scalars as sent) or an answer's
/// (an SDK reads it: timestamps become instants, `2017-03-27T18:12:11Z`, whatever form the
/// service wrote them in).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Reading {
    Request,
    Answer,
}

impl RestXmlModel {
    pub fn parse(text: &str) -> Result<RestXmlModel, ModelError> {
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
        Ok(RestXmlModel {
            namespace,
            operations,
            shapes,
        })
    }

    /// A shape of the model (`Null` when it has none of that name).
    pub fn shape(&self, name: &str) -> &Value {
        self.shapes.get(name).unwrap_or(&Value::Null)
    }

    /// The operation a request names, with its URI labels: the method matches, every path
    /// segment matches its literal or label, and the template's literal query keys (`WithTags`,
    /// `Operation=Tag`) are present. A template with more literal query keys wins.
    pub fn route(&self, req: &AwsRequest) -> Option<(&str, Labels)> {
        let segs: Vec<String> = req
            .raw_path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(|s| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            })
            .collect();
        // The best match so far, with its count of literal query keys.
        let mut best: Option<(&str, Labels, usize)> = None;
        for (name, op) in &self.operations {
            if op["method"].as_str() != Some(req.method.as_str()) {
                continue;
            }
            let uri = op["uri"].as_str().unwrap_or("");
            let (path, query) = uri.split_once('?').unwrap_or((uri, ""));
            let tmpl: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
            if tmpl.len() != segs.len() {
                continue;
            }
            let mut labels = Vec::new();
            let matched = tmpl.iter().zip(&segs).all(|(t, s)| {
                match t.strip_prefix('{').and_then(|t| t.strip_suffix('}')) {
                    Some(label) => {
                        labels.push((label.trim_end_matches('+').to_string(), s.clone()));
                        true
                    }
                    None => t == s,
                }
            });
            let keys: Vec<(&str, Option<&str>)> = query
                .split('&')
                .filter(|q| !q.is_empty())
                .map(|q| match q.split_once('=') {
                    Some((k, v)) => (k, Some(v)),
                    None => (q, None),
                })
                .collect();
            let query_ok = keys.iter().all(|(k, v)| {
                req.query
                    .iter()
                    .any(|(qk, qv)| qk == k && v.is_none_or(|v| v == qv))
            });
            if matched && query_ok && best.as_ref().is_none_or(|b| keys.len() > b.2) {
                best = Some((name.as_str(), labels, keys.len()));
            }
        }
        best.map(|(n, l, _)| (n, l))
    }

    /// The request as the operation's input: URI labels, query string members, headers and
    /// the XML body (the payload member's shape, or the input's body members).
    pub fn decode(
        &self,
        op: &str,
        req: &AwsRequest,
        labels: &[(String, String)],
    ) -> Result<Value, AwsError> {
        let Some(input) = self.operations.get(op).and_then(|o| o["input"].as_str()) else {
            return Ok(Value::Object(Map::new()));
        };
        let shape = self.shape(input);
        let mut out = Map::new();
        let empty = Map::new();
        let members = shape["members"].as_object().unwrap_or(&empty);
        for (name, spec) in members {
            let loc_name = spec["locationName"].as_str().unwrap_or(name);
            let member_shape = spec["shape"].as_str().unwrap_or("");
            match spec["location"].as_str() {
                Some("uri") => {
                    if let Some((_, v)) = labels.iter().find(|(l, _)| l == loc_name) {
                        out.insert(name.clone(), Value::String(v.clone()));
                    }
                }
                Some("querystring") => {
                    let values: Vec<&String> = req
                        .query
                        .iter()
                        .filter(|(k, _)| k == loc_name)
                        .map(|(_, v)| v)
                        .collect();
                    if self.shape(member_shape)["type"] == "list" {
                        if !values.is_empty() {
                            out.insert(
                                name.clone(),
                                Value::from(values.into_iter().cloned().collect::<Vec<_>>()),
                            );
                        }
                    } else if let Some(v) = values.first() {
                        out.insert(
                            name.clone(),
                            self.scalar(member_shape, v, loc_name, Reading::Request)?,
                        );
                    }
                }
                Some("header") => {
                    if let Some(v) = req.header(loc_name) {
                        out.insert(name.clone(), Value::String(v.to_string()));
                    }
                }
                _ => {}
            }
        }
        if req.body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Value::Object(out));
        }
        if let Some(payload) = shape["payload"].as_str() {
            let spec = &members[payload];
            let pshape = spec["shape"].as_str().unwrap_or("");
            if matches!(self.shape(pshape)["type"].as_str(), Some("blob" | "string")) {
                out.insert(
                    payload.to_string(),
                    Value::String(String::from_utf8_lossy(&req.body).into_owned()),
                );
            } else {
                let root = parse_xml(&req.body)?;
                out.insert(
                    payload.to_string(),
                    self.read(pshape, &root, Reading::Request)?,
                );
            }
        } else {
            let root = parse_xml(&req.body)?;
            if let Value::Object(body) = self.read(input, &root, Reading::Request)? {
                for (k, v) in body {
                    let located = members[&k]["location"].is_string();
                    if !located {
                        out.insert(k, v);
                    }
                }
            }
        }
        Ok(Value::Object(out))
    }

    fn scalar(
        &self,
        shape: &str,
        text: &str,
        member: &str,
        reading: Reading,
    ) -> Result<Value, AwsError> {
        let bad = || {
            AwsError::bad_request(
                "InvalidArgument",
                format!("The value '{text}' of {member} is not valid for its type."),
            )
        };
        Ok(
            match self.shape(shape)["type"].as_str().unwrap_or("string") {
                "integer" | "long" => Value::from(text.trim().parse::<i64>().map_err(|_| bad())?),
                "double" | "float" => {
                    let f: f64 = text.trim().parse().map_err(|_| bad())?;
                    serde_json::Number::from_f64(f)
                        .map(Value::Number)
                        .ok_or_else(bad)?
                }
                "boolean" => match text.trim() {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    _ => return Err(bad()),
                },
                "timestamp" if reading == Reading::Answer => {
                    Value::String(client::instant(text).unwrap_or_else(|| text.to_string()))
                }
                _ => Value::String(text.to_string()),
            },
        )
    }

    /// One element read as `shape`.
    fn read(&self, shape: &str, el: &Element, reading: Reading) -> Result<Value, AwsError> {
        let s = self.shape(shape);
        match s["type"].as_str().unwrap_or("string") {
            "structure" => {
                let mut out = Map::new();
                let empty = Map::new();
                for (name, spec) in s["members"].as_object().unwrap_or(&empty) {
                    let loc = spec["locationName"].as_str().unwrap_or(name);
                    let mshape = spec["shape"].as_str().unwrap_or("");
                    let flattened = spec["flattened"].as_bool().unwrap_or(false)
                        || self.shape(mshape)["flattened"].as_bool().unwrap_or(false);
                    if flattened {
                        let items: Vec<&Element> =
                            el.children.iter().filter(|c| c.name == loc).collect();
                        if !items.is_empty() {
                            let inner = self.shape(mshape)["member"]["shape"]
                                .as_str()
                                .unwrap_or("")
                                .to_string();
                            let value = if self.shape(mshape)["type"] == "map" {
                                self.entries(mshape, &items, reading)?
                            } else {
                                Value::Array(
                                    items
                                        .into_iter()
                                        .map(|c| self.read(&inner, c, reading))
                                        .collect::<Result<Vec<_>, _>>()?,
                                )
                            };
                            out.insert(name.clone(), value);
                        }
                    } else if let Some(c) = el.child(loc) {
                        out.insert(name.clone(), self.read(mshape, c, reading)?);
                    }
                }
                Ok(Value::Object(out))
            }
            "list" => {
                let inner = s["member"]["shape"].as_str().unwrap_or("");
                el.children
                    .iter()
                    .map(|c| self.read(inner, c, reading))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Value::Array)
            }
            "map" => self.entries(shape, &el.children.iter().collect::<Vec<_>>(), reading),
            _ => self.scalar(shape, &el.text, &el.name, reading),
        }
    }

    /// A map's entries (`<entry><key>…</key><value>…</value></entry>`, or the flattened
    /// elements themselves) as a JSON object.
    fn entries(
        &self,
        shape: &str,
        entries: &[&Element],
        reading: Reading,
    ) -> Result<Value, AwsError> {
        let s = self.shape(shape);
        let key_name = s["key"]["locationName"].as_str().unwrap_or("key");
        let value_name = s["value"]["locationName"].as_str().unwrap_or("value");
        let value_shape = s["value"]["shape"].as_str().unwrap_or("");
        let mut out = Map::new();
        for e in entries {
            let key = e
                .child(key_name)
                .map(|k| k.text.clone())
                .unwrap_or_default();
            let value = match e.child(value_name) {
                Some(v) => self.read(value_shape, v, reading)?,
                None => Value::Null,
            };
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }

    /// The operation's answer: its header members as headers, its payload (or body members)
    /// as XML, with the operation's success status.
    pub fn encode(&self, op: &str, output: &Value) -> AwsResponse {
        let opdef = self.operations.get(op);
        let code = opdef
            .and_then(|o| o["code"].as_u64())
            .and_then(|c| StatusCode::from_u16(c as u16).ok())
            .unwrap_or(StatusCode::OK);
        let Some(out_shape) = opdef.and_then(|o| o["output"].as_str()) else {
            return AwsResponse::empty(code);
        };
        let shape = self.shape(out_shape);
        let empty = Map::new();
        let members = shape["members"].as_object().unwrap_or(&empty);
        let mut headers = Vec::new();
        for (name, spec) in members {
            if spec["location"] == "header"
                && let Some(v) = output.get(name).and_then(Value::as_str)
            {
                headers.push((
                    spec["locationName"].as_str().unwrap_or(name).to_string(),
                    v.to_string(),
                ));
            }
        }
        let mut resp = if let Some(payload) = shape["payload"].as_str() {
            let spec = &members[payload];
            let pshape = spec["shape"].as_str().unwrap_or("");
            match output.get(payload) {
                None | Some(Value::Null) => AwsResponse::empty(code),
                Some(v) if self.shape(pshape)["type"] == "blob" => {
                    let bytes = v.as_str().unwrap_or("").as_bytes().to_vec();
                    AwsResponse::new(code, "application/octet-stream", bytes)
                }
                Some(v) => {
                    let root = spec["locationName"].as_str().unwrap_or(payload);
                    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
                    self.write(&mut xml, root, pshape, v, self.root_namespace());
                    AwsResponse::new(code, "text/xml", xml)
                }
            }
        } else {
            let mut body = Map::new();
            for (name, spec) in members {
                if !spec["location"].is_string()
                    && let Some(v) = output.get(name)
                {
                    body.insert(name.clone(), v.clone());
                }
            }
            if body.is_empty() {
                AwsResponse::empty(code)
            } else {
                let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
                self.write(
                    &mut xml,
                    out_shape,
                    out_shape,
                    &Value::Object(body),
                    self.root_namespace(),
                );
                AwsResponse::new(code, "text/xml", xml)
            }
        };
        for (k, v) in headers {
            resp.set_header(&k, &v);
        }
        resp
    }

    /// The XML of `value` as `shape`, in an element named `name`.
    pub fn to_xml(&self, name: &str, shape: &str, value: &Value) -> String {
        let mut out = String::new();
        self.write(&mut out, name, shape, value, None);
        out
    }

    /// The model's namespace, for a document's root element.
    fn root_namespace(&self) -> Option<&str> {
        Some(self.namespace.as_str()).filter(|n| !n.is_empty())
    }

    fn write(&self, out: &mut String, name: &str, shape: &str, value: &Value, xmlns: Option<&str>) {
        let s = self.shape(shape);
        out.push('<');
        out.push_str(name);
        if let Some(ns) = xmlns {
            out.push_str(" xmlns=\"");
            out.push_str(&escape(ns));
            out.push('"');
        }
        out.push('>');
        match s["type"].as_str().unwrap_or("string") {
            "structure" => {
                let empty = Map::new();
                for (m, spec) in s["members"].as_object().unwrap_or(&empty) {
                    // An XML attribute (S3's `xsi:type`) is not an element; none is written.
                    if spec["xmlAttribute"] == true {
                        continue;
                    }
                    let Some(v) = value.get(m).filter(|v| !v.is_null()) else {
                        continue;
                    };
                    let loc = spec["locationName"].as_str().unwrap_or(m);
                    let mshape = spec["shape"].as_str().unwrap_or("");
                    let flattened = spec["flattened"].as_bool().unwrap_or(false)
                        || self.shape(mshape)["flattened"].as_bool().unwrap_or(false);
                    if flattened && self.shape(mshape)["type"] == "map" {
                        self.write_entries(out, Some(loc), mshape, v);
                    } else if flattened {
                        let inner = self.shape(mshape)["member"]["shape"].as_str().unwrap_or("");
                        for item in v.as_array().into_iter().flatten() {
                            self.write(out, loc, inner, item, None);
                        }
                    } else {
                        self.write(out, loc, mshape, v, None);
                    }
                }
            }
            "list" => {
                let inner = s["member"]["shape"].as_str().unwrap_or("");
                let item_name = s["member"]["locationName"].as_str().unwrap_or("member");
                for item in value.as_array().into_iter().flatten() {
                    self.write(out, item_name, inner, item, None);
                }
            }
            "map" => self.write_entries(out, None, shape, value),
            _ => {
                let text = match value {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                out.push_str(&escape(&text));
            }
        }
        out.push_str("</");
        out.push_str(name);
        out.push('>');
    }

    /// A map's entries: each in `<entry>` (or, flattened, in an element named `flat`) with its
    /// key and value elements.
    fn write_entries(&self, out: &mut String, flat: Option<&str>, shape: &str, value: &Value) {
        let s = self.shape(shape);
        let key_name = s["key"]["locationName"].as_str().unwrap_or("key");
        let value_name = s["value"]["locationName"].as_str().unwrap_or("value");
        let key_shape = s["key"]["shape"].as_str().unwrap_or("");
        let value_shape = s["value"]["shape"].as_str().unwrap_or("");
        let entry = flat.unwrap_or("entry");
        for (k, v) in value.as_object().into_iter().flatten() {
            out.push('<');
            out.push_str(entry);
            out.push('>');
            self.write(out, key_name, key_shape, &Value::String(k.clone()), None);
            self.write(out, value_name, value_shape, v, None);
            out.push_str("</");
            out.push_str(entry);
            out.push('>');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::Method;
    use serde_json::json;

    fn model() -> RestXmlModel {
        RestXmlModel::parse(
            &json!({
                "namespace": "http://x.amazonaws.com/doc/1/",
                "operations": {
                    "Create": {"method": "POST", "uri": "/1/thing", "code": 201, "input": "CreateReq", "output": "CreateRes"},
                    "CreateTagged": {"method": "POST", "uri": "/1/thing?WithTags", "code": 201, "input": "CreateReq", "output": "CreateRes"},
                    "Get": {"method": "GET", "uri": "/1/thing/{Id}", "code": 200, "input": "GetReq", "output": "CreateRes"}
                },
                "shapes": {
                    "CreateReq": {"type": "structure", "payload": "Config", "members": {"Config": {"shape": "Config", "locationName": "Config"}}},
                    "GetReq": {"type": "structure", "members": {"Id": {"shape": "string", "location": "uri", "locationName": "Id"}, "IfMatch": {"shape": "string", "location": "header", "locationName": "If-Match"}}},
                    "CreateRes": {"type": "structure", "payload": "Thing", "members": {"Thing": {"shape": "Config"}, "ETag": {"shape": "string", "location": "header", "locationName": "ETag"}}},
                    "Config": {"type": "structure", "members": {"Name": {"shape": "string"}, "Size": {"shape": "integer"}, "On": {"shape": "boolean"}, "Items": {"shape": "Names"}}},
                    "Names": {"type": "list", "member": {"shape": "string", "locationName": "Name"}},
                    "string": {"type": "string"}, "integer": {"type": "integer"}, "boolean": {"type": "boolean"}
                }
            })
            .to_string(),
        )
        .unwrap()
    }

    #[test]
    fn routes_decodes_and_encodes() {
        let m = model();
        let mut req = AwsRequest::new(Method::POST, "/1/thing?WithTags");
        assert_eq!(m.route(&req).unwrap().0, "CreateTagged");
        req = AwsRequest::new(Method::POST, "/1/thing");
        assert_eq!(m.route(&req).unwrap().0, "Create");
        req.body = "<Config xmlns=\"x\"><Name>a &amp; b</Name><Size>3</Size><On>true</On><Items><Name>x</Name><Name>y</Name></Items></Config>".into();
        let v = m.decode("Create", &req, &[]).unwrap();
        assert_eq!(
            v,
            json!({"Config": {"Name": "a & b", "Size": 3, "On": true, "Items": ["x", "y"]}})
        );

        let mut get = AwsRequest::new(Method::GET, "/1/thing/E123");
        get.headers.insert("if-match", "E1".parse().unwrap());
        let (op, labels) = m.route(&get).unwrap();
        assert_eq!(
            m.decode(op, &get, &labels).unwrap(),
            json!({"Id": "E123", "IfMatch": "E1"})
        );

        let r = m.encode("Create", &json!({"Thing": v["Config"], "ETag": "E9"}));
        assert_eq!(r.status, StatusCode::CREATED);
        assert_eq!(r.headers.get("etag").unwrap(), "E9");
        let body = String::from_utf8(r.body.to_vec()).unwrap();
        assert!(body.contains("<Thing xmlns=\"http://x.amazonaws.com/doc/1/\"><Name>a &amp; b</Name><Size>3</Size><On>true</On><Items><Name>x</Name><Name>y</Name></Items></Thing>"), "{body}");

        req.body = "<Config><Size>many</Size></Config>".into();
        assert_eq!(
            m.decode("Create", &req, &[]).unwrap_err().code,
            "InvalidArgument"
        );
        req.body = "<Config><Size>".into();
        assert_eq!(
            m.decode("Create", &req, &[]).unwrap_err().code,
            "MalformedInput"
        );
    }
}
