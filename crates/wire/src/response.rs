//! The response every service returns; the HTTP layer only copies it out.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode};

#[derive(Debug, Clone)]
pub struct AwsResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl AwsResponse {
    pub fn new(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Self {
        let mut r = AwsResponse {
            status,
            headers: HeaderMap::new(),
            body: body.into(),
        };
        if !content_type.is_empty() {
            r.set_header("content-type", content_type);
        }
        r
    }

    /// 200 with an XML body.
    pub fn xml(body: impl Into<Bytes>) -> Self {
        Self::new(StatusCode::OK, "text/xml", body)
    }

    /// 200 with a JSON body for the given protocol's content type.
    pub fn json(content_type: &str, value: &serde_json::Value) -> Self {
        Self::new(StatusCode::OK, content_type, value.to_string())
    }

    /// An empty response with the given status.
    pub fn empty(status: StatusCode) -> Self {
        Self::new(status, "", Bytes::new())
    }

    /// Sets a header, ignoring values that are not valid header text (never panics on user data:
    /// such a value is percent-encoded instead).
    pub fn set_header(&mut self, name: &str, value: &str) {
        let Ok(name) = HeaderName::from_bytes(name.as_bytes()) else {
            return;
        };
        let value = HeaderValue::from_str(value).unwrap_or_else(|_| {
            let enc = percent_encoding::utf8_percent_encode(value, percent_encoding::CONTROLS)
                .to_string();
            HeaderValue::from_str(&enc).unwrap_or(HeaderValue::from_static(""))
        });
        self.headers.insert(name, value);
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.set_header(name, value);
        self
    }
}
