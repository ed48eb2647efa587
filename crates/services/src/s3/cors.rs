//! CORS at request time: answering browser preflights (`OPTIONS`) and adding the
//! `Access-Control-*` headers to requests that carry an `Origin`, from the bucket's stored
//! CORS configuration, with S3's matching rules (one `*` wildcard in origins and headers,
//! exact methods, first matching rule wins).

use super::{S3Service, xml_in};
use cumulo_wire::AwsError;
use http::StatusCode;

/// The headers a matching rule grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CorsGrant {
    pub allow_origin: String,
    pub allow_methods: String,
    pub allow_headers: Option<String>,
    pub expose_headers: Option<String>,
    pub max_age: Option<String>,
    /// S3 allows credentials unless the rule's origin is the bare `*`.
    pub allow_credentials: bool,
}

/// `*` matches any run of characters, once, as S3 allows in origins and headers.
fn wildcard(pattern: &str, value: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == value,
        Some((pre, post)) => {
            value.len() >= pre.len() + post.len() && value.starts_with(pre) && value.ends_with(post)
        }
    }
}

/// The first rule of a CORS document granting `origin` the `method` with `request_headers`.
pub fn evaluate(
    doc: &xml_in::Element,
    origin: &str,
    method: &str,
    request_headers: &[String],
) -> Option<CorsGrant> {
    doc.children("CORSRule").find_map(|rule| {
        let texts = |name| {
            rule.children(name)
                .map(|e| e.text.trim().to_string())
                .collect::<Vec<_>>()
        };
        let origins = texts("AllowedOrigin");
        let matched_origin = origins.iter().find(|o| wildcard(o, origin))?;
        let methods = texts("AllowedMethod");
        if !methods.iter().any(|m| m == method) {
            return None;
        }
        let allowed_headers: Vec<String> = texts("AllowedHeader")
            .iter()
            .map(|h| h.to_ascii_lowercase())
            .collect();
        if !request_headers.iter().all(|h| {
            allowed_headers
                .iter()
                .any(|a| wildcard(a, &h.to_ascii_lowercase()))
        }) {
            return None;
        }
        let star = matched_origin == "*";
        let expose = texts("ExposeHeader");
        Some(CorsGrant {
            allow_origin: if star {
                "*".to_string()
            } else {
                origin.to_string()
            },
            allow_methods: methods.join(", "),
            allow_headers: (!request_headers.is_empty()).then(|| request_headers.join(", ")),
            expose_headers: (!expose.is_empty()).then(|| expose.join(", ")),
            max_age: rule.child_text("MaxAgeSeconds").map(str::to_string),
            allow_credentials: !star,
        })
    })
}

impl S3Service {
    /// The CORS grant for a request from `origin`; `Ok(None)` if the bucket has CORS but no
    /// rule matches, `Err` (403) if the bucket has no CORS configuration at all.
    pub fn cors_grant(
        &self,
        bucket: &str,
        origin: &str,
        method: &str,
        request_headers: &[String],
    ) -> Result<Option<CorsGrant>, AwsError> {
        let doc = self
            .get_bucket_config(bucket, super::ConfigKind::Cors)
            .map_err(|e| {
                if e.code == "NoSuchCORSConfiguration" {
                    AwsError::new(
                        StatusCode::FORBIDDEN,
                        "AccessForbidden",
                        "CORSResponse: CORS is not enabled for this bucket.",
                    )
                    .with_extra("Method", method)
                    .with_extra("ResourceType", "BUCKET")
                } else {
                    e
                }
            })?;
        let doc = xml_in::parse(doc.as_bytes())?;
        Ok(evaluate(&doc, origin, method, request_headers))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> xml_in::Element {
        xml_in::parse(
            b"<CORSConfiguration>
                <CORSRule><AllowedOrigin>https://*.example.com</AllowedOrigin><AllowedMethod>PUT</AllowedMethod>
                  <AllowedHeader>x-amz-*</AllowedHeader><ExposeHeader>ETag</ExposeHeader><MaxAgeSeconds>60</MaxAgeSeconds></CORSRule>
                <CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>
              </CORSConfiguration>",
        )
        .unwrap()
    }

    #[test]
    fn first_matching_rule_wins() {
        let g = evaluate(
            &doc(),
            "https://app.example.com",
            "PUT",
            &["X-Amz-Date".into()],
        )
        .unwrap();
        assert_eq!(g.allow_origin, "https://app.example.com");
        assert_eq!(g.allow_methods, "PUT");
        assert_eq!(g.allow_headers.as_deref(), Some("X-Amz-Date"));
        assert_eq!(g.expose_headers.as_deref(), Some("ETag"));
        assert_eq!(g.max_age.as_deref(), Some("60"));
        assert!(g.allow_credentials);
        let g = evaluate(&doc(), "http://other", "GET", &[]).unwrap();
        assert_eq!(g.allow_origin, "*");
        assert!(!g.allow_credentials);
    }

    #[test]
    fn refuses_unlisted_origin_method_or_header() {
        assert!(evaluate(&doc(), "https://evil.com", "PUT", &[]).is_none());
        assert!(evaluate(&doc(), "https://app.example.com", "DELETE", &[]).is_none());
        assert!(
            evaluate(
                &doc(),
                "https://app.example.com",
                "PUT",
                &["authorization".into()]
            )
            .is_none()
        );
    }

    #[test]
    fn wildcards() {
        assert!(wildcard("*", "anything"));
        assert!(wildcard("a*c", "abbbc"));
        assert!(!wildcard("a*c", "ac-x"));
        assert!(!wildcard("ab*ba", "aba"));
    }
}
