//! The console's HTTP vocabulary: its response body (whole, or a server-sent event stream), JSON
//! answers and errors, query parameters and the CSRF check of state-changing calls.

use bytes::Bytes;
use cumulo_wire::AwsRequest;
use http::{HeaderValue, Method, Response, StatusCode, header};
use hyper::body::{Frame, SizeHint};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// A console response body: bytes known at once, or a stream of server-sent events that ends
/// when its sender is dropped (and whose sender learns the client left when sending fails).
pub enum Body {
    Whole(Option<Bytes>),
    Stream(mpsc::Receiver<Bytes>),
}

impl Body {
    pub fn whole(bytes: impl Into<Bytes>) -> Self {
        Body::Whole(Some(bytes.into()))
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            Body::Whole(b) => Poll::Ready(b.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream(rx) => rx.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, Body::Whole(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Whole(b) => SizeHint::with_exact(b.as_ref().map_or(0, |b| b.len() as u64)),
            Body::Stream(_) => SizeHint::default(),
        }
    }
}

/// A refused API call: `{"error": {"code", "message"}}` with its status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code: code.to_string(),
            message: message.into(),
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }

    pub fn not_found(code: &str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    /// A service's own AWS error, keeping its code and status.
    pub fn from_aws(e: cumulo_wire::AwsError) -> Self {
        ApiError {
            status: e.status,
            code: e.code.to_string(),
            message: e.message.to_string(),
        }
    }
}

pub type ApiResult = Result<Response<Body>, ApiError>;

pub fn respond(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Body> {
    let mut r = Response::new(Body::whole(body));
    *r.status_mut() = status;
    if let Ok(v) = HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    // Nothing the console answers may be framed or sniffed into something else.
    r.headers_mut().insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    r.headers_mut()
        .insert("x-frame-options", HeaderValue::from_static("DENY"));
    r
}

pub fn json_ok(value: &Value) -> ApiResult {
    Ok(respond(
        StatusCode::OK,
        "application/json",
        value.to_string(),
    ))
}

pub fn error_response(e: &ApiError) -> Response<Body> {
    let body = json!({"error": {"code": e.code, "message": e.message}});
    respond(e.status, "application/json", body.to_string())
}

/// An API call without a console session while the endpoint verifies signatures.
pub fn unauthorized() -> Response<Body> {
    error_response(&ApiError::new(
        StatusCode::UNAUTHORIZED,
        "Unauthorized",
        "Sign in to the console: cumulo serve verifies signatures (--verify-signatures)",
    ))
}

/// The query parameters of a request, decoded, with typed readers that refuse malformed values.
pub struct Query<'a>(&'a AwsRequest);

impl<'a> Query<'a> {
    pub fn of(req: &'a AwsRequest) -> Self {
        Query(req)
    }

    pub fn get(&self, name: &str) -> Option<&'a str> {
        self.0
            .query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// `true`/`false` (absent: `default`).
    pub fn flag(&self, name: &str, default: bool) -> Result<bool, ApiError> {
        match self.get(name) {
            None => Ok(default),
            Some("true") | Some("1") => Ok(true),
            Some("false") | Some("0") => Ok(false),
            Some(v) => Err(ApiError::bad_request(format!(
                "Query parameter {name} must be true or false, got '{v}'"
            ))),
        }
    }

    /// A whole number within `1..=max` (absent: `default`).
    pub fn number(&self, name: &str, default: usize, max: usize) -> Result<usize, ApiError> {
        match self.get(name) {
            None => Ok(default),
            Some(v) => v
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=max).contains(n))
                .ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "Query parameter {name} must be a whole number from 1 to {max}, got '{v}'"
                    ))
                }),
        }
    }

    /// The region asked for (`region=`), or the endpoint's default; a value that is not a
    /// region name is refused.
    pub fn region(&self, default: &str) -> Result<String, ApiError> {
        match self.get("region") {
            None | Some("") => Ok(default.to_string()),
            Some(r) if valid_region(r) => Ok(r.to_string()),
            Some(r) => Err(ApiError::bad_request(format!(
                "Query parameter region is not a region name: '{r}'"
            ))),
        }
    }
}

/// `xx-name-N` (`us-east-1`, `ap-southeast-2`, `us-gov-west-1`).
fn valid_region(r: &str) -> bool {
    let parts: Vec<&str> = r.split('-').collect();
    parts.len() >= 3
        && parts.len() <= 4
        && parts[0].len() == 2
        && parts[..parts.len() - 1]
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_lowercase()))
        && parts[parts.len() - 1]
            .parse::<u8>()
            .is_ok_and(|n| n > 0 && n < 100)
}

/// What `encodeURIComponent` leaves alone, so links read like the names they hold.
const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// A name as one path segment of a console link.
pub fn encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, COMPONENT).to_string()
}

/// The path's segments after `prefix`, percent-decoded (an ARN or an S3 key arrives encoded);
/// `None` when a segment is not UTF-8 after decoding.
pub fn segments(path: &str, prefix: &str) -> Option<Vec<String>> {
    let rest = path.strip_prefix(prefix)?;
    rest.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .ok()
                .map(|c| c.into_owned())
        })
        .collect()
}

/// The CSRF check of a state-changing call: a browser always sends `Origin` with a
/// cross-site POST/PUT/DELETE, so one that is present must be this endpoint's own; one that is
/// absent (curl, scripts) must come with `X-Cumulo-Console: 1`, a header a cross-site form
/// cannot set and a cross-site script cannot send without a CORS preflight cumulo never grants.
pub fn check_origin(req: &AwsRequest) -> Result<(), ApiError> {
    if matches!(req.method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return Ok(());
    }
    let forbidden = |m: String| ApiError::new(StatusCode::FORBIDDEN, "Forbidden", m);
    match req.header("origin") {
        Some(origin) => {
            let own = [
                format!("http://{}", req.host),
                format!("https://{}", req.host),
            ];
            if own.iter().any(|o| o == origin) {
                Ok(())
            } else {
                Err(forbidden(format!(
                    "Origin {origin} is not this console's own ({})",
                    own[0]
                )))
            }
        }
        None if req.header("x-cumulo-console") == Some("1") => Ok(()),
        None => Err(forbidden(
            "A state-changing request needs the console's Origin or the header \
             X-Cumulo-Console: 1"
                .to_string(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(method: Method, headers: &[(&str, &str)]) -> AwsRequest {
        let mut h = http::HeaderMap::new();
        for (k, v) in headers {
            h.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        AwsRequest {
            method,
            raw_path: "/_cumulo/api/v1/x".into(),
            raw_query: String::new(),
            query: Vec::new(),
            headers: h,
            body: Bytes::new(),
            request_id: "r".into(),
            region: String::new(),
            account_id: String::new(),
            access_key: None,
            host: "localhost:4566".into(),
        }
    }

    #[test]
    fn state_changes_need_the_own_origin_or_the_console_header() {
        assert!(check_origin(&request(Method::GET, &[("origin", "http://evil")])).is_ok());
        assert!(
            check_origin(&request(
                Method::POST,
                &[("origin", "http://localhost:4566")]
            ))
            .is_ok()
        );
        assert!(check_origin(&request(Method::POST, &[("x-cumulo-console", "1")])).is_ok());
        let refused = [
            request(Method::POST, &[]),
            request(Method::POST, &[("origin", "http://evil.example")]),
            request(
                Method::DELETE,
                &[("origin", "null"), ("x-cumulo-console", "1")],
            ),
            request(Method::PUT, &[("origin", "http://localhost:4567")]),
            request(Method::POST, &[("x-cumulo-console", "true")]),
        ];
        for r in refused {
            assert_eq!(check_origin(&r).unwrap_err().status, StatusCode::FORBIDDEN);
        }
    }

    #[test]
    fn regions_are_checked() {
        for r in [
            "us-east-1",
            "ap-southeast-2",
            "us-gov-west-1",
            "eu-central-1",
        ] {
            assert!(valid_region(r), "{r}");
        }
        for r in [
            "",
            "us",
            "us-east",
            "US-east-1",
            "us-east-0",
            "x-east-1",
            "us-east-1a",
        ] {
            assert!(!valid_region(r), "{r}");
        }
    }

    #[test]
    fn segments_are_decoded() {
        assert_eq!(
            segments("/a/stacks/arn%3Aaws%2Fx/events", "/a/"),
            Some(vec!["stacks".into(), "arn:aws/x".into(), "events".into()])
        );
        assert_eq!(segments("/a/%FF", "/a/"), None);
    }
}
