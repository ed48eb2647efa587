//! The read-only AWS client behind `cumulo migrate inventory`: it implements
//! `cumulo_migrate::inventory::reads::ReadClient`, so it can only be handed requests that the
//! migrate crate's allowlist built. Credentials come from aws-config's standard chain
//! (environment, profiles, SSO, credential_process, `--profile`); each request is signed with
//! aws-sigv4 and sent over rustls. With `AWS_ENDPOINT_URL` set (a `cumulo serve`), every
//! service goes to that one endpoint, as the AWS CLI does.
//!
//! It speaks the protocols the reads need: query and EC2 query (form POST, XML answer),
//! JSON 1.0/1.1, REST with JSON or XML answers (GET). XML answers become JSON generically:
//! `member`/`item` wrappers and plural-named containers of one element name (`HostedZones`
//! of `HostedZone`) become arrays, repeated elements become arrays, text stays text.

use anyhow::Context;
use aws_credential_types::Credentials;
use aws_credential_types::provider::ProvideCredentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SigningSettings,
    UriPathNormalizationMode, sign,
};
use aws_sigv4::sign::v4;
use bytes::Bytes;
use cumulo_migrate::inventory::reads::{CallError, Protocol, ReadClient, ReadRequest};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Map, Value};
use std::time::{Duration, SystemTime};

/// What the URI-encoding of SigV4 leaves alone: unreserved characters.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

type Https = hyper_rustls::HttpsConnector<HttpConnector>;

pub struct HttpReadClient {
    runtime: tokio::runtime::Runtime,
    http: Client<Https, Full<Bytes>>,
    credentials: Credentials,
    region: String,
    endpoint: Option<String>,
}

/// How to reach the account.
pub struct Connection<'a> {
    pub profile: Option<&'a str>,
    pub region: Option<&'a str>,
}

impl HttpReadClient {
    pub fn connect(how: &Connection) -> anyhow::Result<HttpReadClient> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let tls = aws_smithy_http_client::Builder::new()
            .tls_provider(aws_smithy_http_client::tls::Provider::Rustls(
                aws_smithy_http_client::tls::rustls_provider::CryptoMode::Ring,
            ))
            .build_https();
        let mut loader =
            aws_config::defaults(aws_config::BehaviorVersion::latest()).http_client(tls);
        if let Some(profile) = how.profile {
            loader = loader.profile_name(profile);
        }
        if let Some(region) = how.region {
            loader = loader.region(aws_config::Region::new(region.to_string()));
        }
        let config = runtime.block_on(loader.load());
        let region = config
            .region()
            .map(|r| r.to_string())
            .context("no region: pass --region, or set AWS_REGION or a profile's region")?;
        let provider = config
            .credentials_provider()
            .context("no credentials provider in the AWS configuration")?;
        let credentials = runtime
            .block_on(provider.provide_credentials())
            .context("no AWS credentials (environment, profile, SSO or credential_process)")?;
        let endpoint = config
            .endpoint_url()
            .map(|e| e.trim_end_matches('/').to_string());
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_native_roots(rustls::crypto::ring::default_provider())
            .context("loading the system's root certificates")?
            .https_or_http()
            .enable_http1()
            .build();
        let http = Client::builder(TokioExecutor::new()).build(connector);
        Ok(HttpReadClient {
            runtime,
            http,
            credentials,
            region,
            endpoint,
        })
    }

    /// A client of one endpoint (a rehearsal's twin, served on loopback) with fixed local
    /// credentials: no credential chain is consulted.
    pub fn local(endpoint: &str, region: &str) -> anyhow::Result<HttpReadClient> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the async runtime")?;
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_provider_and_native_roots(rustls::crypto::ring::default_provider())
            .context("loading the system's root certificates")?
            .https_or_http()
            .enable_http1()
            .build();
        Ok(HttpReadClient {
            runtime,
            http: Client::builder(TokioExecutor::new()).build(connector),
            credentials: Credentials::new("test", "test", None, None, "cumulo-twin"),
            region: region.to_string(),
            endpoint: Some(endpoint.trim_end_matches('/').to_string()),
        })
    }

    pub fn region(&self) -> &str {
        &self.region
    }

    pub fn endpoint(&self) -> Option<&str> {
        self.endpoint.as_deref()
    }

    fn base_url(&self, request: &ReadRequest) -> String {
        let op = request.op();
        if let Some(endpoint) = &self.endpoint {
            return endpoint.clone();
        }
        if op.global {
            format!("https://{}.amazonaws.com", op.endpoint_prefix)
        } else {
            format!(
                "https://{}.{}.amazonaws.com",
                op.endpoint_prefix, self.region
            )
        }
    }

    async fn send(&self, request: &ReadRequest) -> Result<Value, CallError> {
        let op = request.op();
        let base = self.base_url(request);
        let input = request.input();
        let (method, url, headers, body) = match op.protocol {
            Protocol::Query { version } | Protocol::Ec2 { version } => {
                let mut form = vec![
                    ("Action".to_string(), op.operation.to_string()),
                    ("Version".to_string(), version.to_string()),
                ];
                form.extend(members(input).map(|(k, v)| (k.to_string(), v)));
                let body = form
                    .iter()
                    .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
                    .collect::<Vec<_>>()
                    .join("&");
                let headers = vec![(
                    "content-type",
                    "application/x-www-form-urlencoded; charset=utf-8".to_string(),
                )];
                ("POST", format!("{base}/"), headers, body.into_bytes())
            }
            Protocol::Json {
                version,
                target_prefix,
            } => {
                let headers = vec![
                    ("content-type", format!("application/x-amz-json-{version}")),
                    ("x-amz-target", format!("{target_prefix}.{}", op.operation)),
                ];
                (
                    "POST",
                    format!("{base}/"),
                    headers,
                    input.to_string().into_bytes(),
                )
            }
            Protocol::RestJson { path } | Protocol::RestXml { path } => (
                "GET",
                format!("{base}{}", rest_path(path, input)),
                vec![],
                Vec::new(),
            ),
        };
        let host = url
            .split("://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .unwrap_or_default()
            .to_string();
        let mut builder = http::Request::builder()
            .method(method)
            .uri(&url)
            .header("host", host);
        for (k, v) in &headers {
            builder = builder.header(*k, v);
        }
        let mut req = builder.body(body.clone()).map_err(transport)?;
        self.sign(&mut req, op.service, op.global, &body)?;
        let (parts, body) = req.into_parts();
        let req = http::Request::from_parts(parts, Full::new(Bytes::from(body)));
        let response = tokio::time::timeout(Duration::from_secs(60), self.http.request(req))
            .await
            .map_err(|_| transport(format!("{} timed out after 60 s", op.operation)))?
            .map_err(transport)?;
        let status = response.status();
        let error_type = response
            .headers()
            .get("x-amzn-errortype")
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(':').next().unwrap_or(v).to_string());
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(transport)?
            .to_bytes();
        let text = String::from_utf8_lossy(&bytes);
        let xml = matches!(
            op.protocol,
            Protocol::Query { .. } | Protocol::Ec2 { .. } | Protocol::RestXml { .. }
        );
        if status.is_success() {
            return if xml {
                Ok(xml_answer(&text, op.operation))
            } else if text.trim().is_empty() {
                Ok(Value::Object(Map::new()))
            } else {
                serde_json::from_str(&text).map_err(transport)
            };
        }
        Err(error_answer(&text, xml, error_type, status.as_u16()))
    }

    fn sign(
        &self,
        req: &mut http::Request<Vec<u8>>,
        service: &str,
        global: bool,
        body: &[u8],
    ) -> Result<(), CallError> {
        let mut settings = SigningSettings::default();
        if service == "s3" {
            settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
            settings.percent_encoding_mode = PercentEncodingMode::Single;
            settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
        }
        let identity = self.credentials.clone().into();
        let region = if global && self.endpoint.is_none() {
            "us-east-1"
        } else {
            &self.region
        };
        let params = v4::SigningParams::builder()
            .identity(&identity)
            .region(region)
            .name(service)
            .time(SystemTime::now())
            .settings(settings)
            .build()
            .map_err(transport)?
            .into();
        let headers = req
            .headers()
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), v.to_str().ok()?)));
        let uri = req.uri().to_string();
        let signable = SignableRequest::new(
            req.method().as_str(),
            &uri,
            headers,
            SignableBody::Bytes(body),
        )
        .map_err(transport)?;
        let (instructions, _) = sign(signable, &params).map_err(transport)?.into_parts();
        instructions.apply_to_request_http1x(req);
        Ok(())
    }
}

impl HttpReadClient {
    /// GETs a presigned URL (a function's code, as GetFunction's Code.Location names it): a
    /// read by construction, unsigned since the URL carries its own authorization.
    pub fn fetch(&self, url: &str) -> Result<Vec<u8>, String> {
        self.runtime.block_on(async {
            let req = http::Request::get(url)
                .body(Full::new(Bytes::new()))
                .map_err(|e| e.to_string())?;
            let response = tokio::time::timeout(Duration::from_secs(60), self.http.request(req))
                .await
                .map_err(|_| "timed out after 60 s".to_string())?
                .map_err(|e| e.to_string())?;
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?
                .to_bytes();
            if status.is_success() {
                Ok(body.to_vec())
            } else {
                Err(format!("HTTP {status}"))
            }
        })
    }
}

impl ReadClient for HttpReadClient {
    fn call(&self, request: &ReadRequest) -> Result<Value, CallError> {
        self.runtime.block_on(self.send(request))
    }
}

fn transport(e: impl std::fmt::Display) -> CallError {
    CallError {
        code: "Transport".into(),
        message: e.to_string(),
    }
}

fn enc(s: &str) -> String {
    utf8_percent_encode(s, UNRESERVED).to_string()
}

/// The input's members as wire strings, nulls left out.
fn members(input: &Value) -> impl Iterator<Item = (&str, String)> {
    input
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return None,
            };
            Some((k.as_str(), s))
        })
}

/// A REST path with its `{Name}` segments filled from the input, and the input's other
/// members as query parameters.
fn rest_path(template: &str, input: &Value) -> String {
    let (path, fixed_query) = template.split_once('?').unwrap_or((template, ""));
    let mut used = Vec::new();
    let mut out = String::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            break;
        };
        let name = &rest[start + 1..start + end];
        let value = input.get(name).and_then(Value::as_str).unwrap_or_default();
        out.push_str(&enc(value));
        used.push(name);
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    let mut query: Vec<String> = Vec::new();
    if !fixed_query.is_empty() {
        query.push(fixed_query.to_string());
    }
    query.extend(
        members(input)
            .filter(|(k, _)| !used.contains(k))
            .map(|(k, v)| format!("{}={}", enc(k), enc(&v))),
    );
    if query.is_empty() {
        out
    } else {
        format!("{out}?{}", query.join("&"))
    }
}

/// An error answer's code and message, from whichever shape the protocol uses.
fn error_answer(text: &str, xml: bool, header: Option<String>, status: u16) -> CallError {
    let doc = if xml {
        xml_to_json(text).map(|(_, v)| v).unwrap_or(Value::Null)
    } else {
        serde_json::from_str(text).unwrap_or(Value::Null)
    };
    let code = header
        .filter(|h| !h.is_empty())
        .or_else(|| find(&doc, &["__type", "Code", "code"]))
        .map(|c| c.rsplit('#').next().unwrap_or(&c).to_string())
        .unwrap_or_else(|| format!("HTTP{status}"));
    let message = find(&doc, &["message", "Message"]).unwrap_or_else(|| text.trim().to_string());
    CallError { code, message }
}

/// The first string member with one of these names, at any depth.
fn find(v: &Value, keys: &[&str]) -> Option<String> {
    match v {
        Value::Object(map) => keys
            .iter()
            .find_map(|k| map.get(*k).and_then(Value::as_str).map(str::to_string))
            .or_else(|| map.values().find_map(|c| find(c, keys))),
        Value::Array(items) => items.iter().find_map(|c| find(c, keys)),
        _ => None,
    }
}

/// A successful XML answer as JSON: the `<Operation>Result` element of a query answer, or
/// the root element's content.
fn xml_answer(text: &str, operation: &str) -> Value {
    let Some((root, value)) = xml_to_json(text) else {
        return Value::Object(Map::new());
    };
    let result = format!("{operation}Result");
    match value {
        Value::Object(mut map) => match map.remove(&result) {
            Some(Value::Object(inner)) => Value::Object(inner),
            Some(_) => Value::Object(Map::new()),
            None => Value::Object(map),
        },
        Value::String(s) if s.is_empty() => Value::Object(Map::new()),
        other => {
            let mut map = Map::new();
            map.insert(root, other);
            Value::Object(map)
        }
    }
}

/// Containers whose single element name is not the container's name less an `s`.
const LIST_CONTAINERS: &[(&str, &str)] = &[("TagSet", "Tag")];

fn is_list(parent: &str, children: &[(String, Value)]) -> bool {
    let Some((first, _)) = children.first() else {
        return false;
    };
    let uniform = children.iter().all(|(n, _)| n == first);
    uniform
        && (first == "member"
            || first == "item"
            || parent.strip_suffix('s') == Some(first.as_str())
            || LIST_CONTAINERS.contains(&(parent, first.as_str())))
}

fn element_value(name: &str, children: Vec<(String, Value)>, text: String) -> Value {
    if children.is_empty() {
        return Value::String(text);
    }
    if is_list(name, &children) {
        return Value::Array(children.into_iter().map(|(_, v)| v).collect());
    }
    let mut map = Map::new();
    for (k, v) in children {
        match map.get_mut(&k) {
            Some(Value::Array(items)) if k != "__single" => items.push(v),
            Some(existing) => {
                let first = existing.take();
                *existing = Value::Array(vec![first, v]);
            }
            None => {
                map.insert(k, v);
            }
        }
    }
    Value::Object(map)
}

/// An element being read: its name, the children read so far, its text.
type OpenElement = (String, Vec<(String, Value)>, String);

/// An XML document as (root element name, JSON value).
fn xml_to_json(text: &str) -> Option<(String, Value)> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(text);
    let mut open: Vec<OpenElement> = Vec::new();
    loop {
        match reader.read_event().ok()? {
            Event::Start(e) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                open.push((name, Vec::new(), String::new()));
            }
            Event::Empty(e) => {
                let name = String::from_utf8_lossy(e.local_name().as_ref()).into_owned();
                match open.last_mut() {
                    Some(parent) => parent.1.push((name, Value::String(String::new()))),
                    None => return Some((name, Value::String(String::new()))),
                }
            }
            Event::Text(t) => {
                if let Some(top) = open.last_mut() {
                    top.2.push_str(&t.unescape().ok()?);
                }
            }
            Event::CData(t) => {
                if let Some(top) = open.last_mut() {
                    top.2.push_str(&String::from_utf8_lossy(&t));
                }
            }
            Event::End(_) => {
                let (name, children, text) = open.pop()?;
                let value = element_value(&name, children, text);
                match open.last_mut() {
                    Some(parent) => parent.1.push((name, value)),
                    None => return Some((name, value)),
                }
            }
            Event::Eof => return None,
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn query_answers_become_json_with_lists() {
        let xml = r#"<DescribeStacksResponse xmlns="http://x/"><DescribeStacksResult><Stacks><member>
            <StackName>a</StackName><Tags><member><Key>k</Key><Value>v &amp; w</Value></member></Tags>
            <Outputs/></member></Stacks></DescribeStacksResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DescribeStacksResponse>"#;
        assert_eq!(
            xml_answer(xml, "DescribeStacks"),
            json!({"Stacks": [{"StackName": "a", "Tags": [{"Key": "k", "Value": "v & w"}], "Outputs": ""}]})
        );
    }

    #[test]
    fn ec2_and_route53_lists_are_arrays() {
        let ec2 = "<DescribeVpcsResponse><requestId>r</requestId><vpcSet><item><vpcId>vpc-1</vpcId></item></vpcSet></DescribeVpcsResponse>";
        assert_eq!(
            xml_answer(ec2, "DescribeVpcs")["vpcSet"],
            json!([{"vpcId": "vpc-1"}])
        );
        let r53 = "<ListResourceRecordSetsResponse><ResourceRecordSets><ResourceRecordSet><Name>a.</Name><ResourceRecords><ResourceRecord><Value>1.2.3.4</Value></ResourceRecord></ResourceRecords></ResourceRecordSet></ResourceRecordSets><IsTruncated>false</IsTruncated></ListResourceRecordSetsResponse>";
        let v = xml_answer(r53, "ListResourceRecordSets");
        assert_eq!(
            v["ResourceRecordSets"][0]["ResourceRecords"][0]["Value"],
            "1.2.3.4"
        );
        let loc = "<LocationConstraint>eu-west-1</LocationConstraint>";
        assert_eq!(
            xml_answer(loc, "GetBucketLocation"),
            json!({"LocationConstraint": "eu-west-1"})
        );
    }

    #[test]
    fn errors_are_read_from_each_shape() {
        let query = "<ErrorResponse><Error><Type>Sender</Type><Code>ValidationError</Code><Message>Stack with id x does not exist</Message></Error></ErrorResponse>";
        let e = error_answer(query, true, None, 400);
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            ("ValidationError", "Stack with id x does not exist")
        );
        let ec2 = "<Response><Errors><Error><Code>InvalidVpcID.NotFound</Code><Message>gone</Message></Error></Errors></Response>";
        assert_eq!(
            error_answer(ec2, true, None, 400).code,
            "InvalidVpcID.NotFound"
        );
        let json = r#"{"__type": "com.amazonaws#ResourceNotFoundException", "message": "no"}"#;
        assert_eq!(
            error_answer(json, false, None, 400).code,
            "ResourceNotFoundException"
        );
        let header = error_answer("{}", false, Some("ResourceNotFoundException".into()), 404);
        assert_eq!(header.code, "ResourceNotFoundException");
    }

    #[test]
    fn rest_paths_take_their_segments_and_query_from_the_input() {
        let input = json!({"Id": "Z1/x", "name": "a.b.", "type": null});
        assert_eq!(
            rest_path("/2013-04-01/hostedzone/{Id}/rrset", &input),
            "/2013-04-01/hostedzone/Z1%2Fx/rrset?name=a.b."
        );
        assert_eq!(
            rest_path("/{Bucket}?versioning", &json!({"Bucket": "b"})),
            "/b?versioning"
        );
    }
}
