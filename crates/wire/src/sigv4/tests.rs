//! The verifier against requests signed by botocore (`vectors.json`, made by `gen_vectors.py`) and
//! against AWS's published SigV4 test suite.

use super::*;
use http::{HeaderName, HeaderValue};

struct Case {
    name: String,
    method: Method,
    path: String,
    query: String,
    headers: HeaderMap,
    body: Vec<u8>,
}

fn vectors() -> (String, DateTime<Utc>, Vec<Case>) {
    let v: serde_json::Value = serde_json::from_str(include_str!("vectors.json")).unwrap();
    let now = parse_amz_date(v["now"].as_str().unwrap()).unwrap();
    let cases = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let mut headers = HeaderMap::new();
            for h in c["headers"].as_array().unwrap() {
                let name = HeaderName::from_bytes(h[0].as_str().unwrap().as_bytes()).unwrap();
                // HTTP servers hand over values without surrounding whitespace.
                let value = HeaderValue::from_str(h[1].as_str().unwrap().trim()).unwrap();
                headers.append(name, value);
            }
            Case {
                name: c["name"].as_str().unwrap().to_string(),
                method: Method::from_bytes(c["method"].as_str().unwrap().as_bytes()).unwrap(),
                path: c["path"].as_str().unwrap().to_string(),
                query: c["query"].as_str().unwrap().to_string(),
                headers,
                body: c["body"].as_str().unwrap().as_bytes().to_vec(),
            }
        })
        .collect();
    (v["secret"].as_str().unwrap().to_string(), now, cases)
}

fn query_of(raw: &str) -> Vec<(String, String)> {
    crate::query::parse_form(raw.as_bytes())
}

fn check(c: &Case, secret: &str, now: DateTime<Utc>) -> Result<(), SigError> {
    let Auth::V4(sig) = parse_auth(&c.headers, &query_of(&c.query))? else {
        panic!("{}: not SigV4", c.name);
    };
    let parts = SignedParts {
        method: &c.method,
        raw_path: &c.path,
        raw_query: &c.query,
        headers: &c.headers,
        body: &c.body,
    };
    verify(&sig, &parts, secret, now)
}

#[test]
fn accepts_every_botocore_signed_request() {
    let (secret, now, cases) = vectors();
    assert!(cases.len() >= 9);
    for c in &cases {
        check(c, &secret, now).unwrap_or_else(|e| panic!("{}: {e:?}", c.name));
    }
}

#[test]
fn rejects_a_wrong_secret() {
    let (_, now, cases) = vectors();
    for c in &cases {
        let err = check(c, "not-the-secret", now).unwrap_err();
        assert!(
            matches!(err, SigError::Mismatch { .. }),
            "{}: {err:?}",
            c.name
        );
    }
}

#[test]
fn rejects_tampering_with_path_query_headers_and_body() {
    let (secret, now, cases) = vectors();
    for c in cases {
        let mut p = Case {
            path: format!("{}x", c.path),
            ..clone(&c)
        };
        assert!(check(&p, &secret, now).is_err(), "path {}", c.name);
        p = Case {
            query: format!("{}&extra=1", c.query),
            ..clone(&c)
        };
        assert!(check(&p, &secret, now).is_err(), "query {}", c.name);
        p = clone(&c);
        p.headers.insert("host", HeaderValue::from_static("evil:1"));
        assert!(check(&p, &secret, now).is_err(), "host {}", c.name);
        let signs_body = !c.body.is_empty()
            && c.headers
                .get("x-amz-content-sha256")
                .is_none_or(|v| v != UNSIGNED_PAYLOAD);
        if signs_body {
            p = Case {
                body: b"tampered".to_vec(),
                ..clone(&c)
            };
            assert!(check(&p, &secret, now).is_err(), "body {}", c.name);
        }
    }
}

fn clone(c: &Case) -> Case {
    Case {
        name: c.name.clone(),
        method: c.method.clone(),
        path: c.path.clone(),
        query: c.query.clone(),
        headers: c.headers.clone(),
        body: c.body.clone(),
    }
}

#[test]
fn enforces_clock_skew_and_presigned_expiry() {
    let (secret, now, cases) = vectors();
    let later = now + chrono::Duration::minutes(16);
    for c in &cases {
        let err = check(c, &secret, later).unwrap_err();
        if c.name.contains("presigned") {
            // Presigned with X-Amz-Expires=300: valid for five minutes, not sixteen.
            assert!(
                matches!(err, SigError::Expired { .. }),
                "{}: {err:?}",
                c.name
            );
            assert!(check(c, &secret, now + chrono::Duration::minutes(4)).is_ok());
        } else {
            assert!(
                matches!(err, SigError::TooSkewed { .. }),
                "{}: {err:?}",
                c.name
            );
            assert!(check(c, &secret, now - chrono::Duration::minutes(14)).is_ok());
        }
    }
}

#[test]
fn declared_payload_hash_must_be_the_bodys() {
    let (secret, now, cases) = vectors();
    let c = cases
        .iter()
        .find(|c| c.name == "s3-put-unnormalized-key")
        .unwrap();
    let p = Case {
        body: b"other".to_vec(),
        ..clone(c)
    };
    let err = check(&p, &secret, now).unwrap_err();
    assert!(
        matches!(err, SigError::ContentSha256Mismatch { .. }),
        "{err:?}"
    );
}

/// `get-vanilla` from AWS's SigV4 test suite: an independent check of key derivation and signing.
#[test]
fn aws_test_suite_get_vanilla() {
    let mut headers = HeaderMap::new();
    headers.insert("host", HeaderValue::from_static("example.amazonaws.com"));
    headers.insert("x-amz-date", HeaderValue::from_static("20150830T123600Z"));
    headers.insert(
        "authorization",
        HeaderValue::from_static(
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
         SignedHeaders=host;x-amz-date, \
         Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
        ),
    );
    let c = Case {
        name: "get-vanilla".into(),
        method: Method::GET,
        path: "/".into(),
        query: String::new(),
        headers,
        body: Vec::new(),
    };
    let now = parse_amz_date("20150830T123600Z").unwrap();
    check(&c, "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", now).unwrap();
}

#[test]
fn parses_authorization() {
    let s = CredentialScope::from_authorization(
        "AWS4-HMAC-SHA256 Credential=AKID/20240101/eu-west-1/sqs/aws4_request, SignedHeaders=host, Signature=abc",
    )
    .unwrap();
    assert_eq!(s.region, "eu-west-1");
    assert_eq!(s.service, "sqs");
    assert_eq!(s.access_key, "AKID");
}

#[test]
fn rejects_garbage_and_incomplete_signatures() {
    assert!(CredentialScope::from_authorization("Basic abc").is_none());
    assert!(CredentialScope::parse("a/b/c").is_none());
    assert!(CredentialScope::parse("a/b/c/d/aws4_request/more").is_none());
    let auth = |v: &'static str| {
        let mut h = HeaderMap::new();
        h.insert("authorization", HeaderValue::from_static(v));
        h.insert("x-amz-date", HeaderValue::from_static("20240101T000000Z"));
        parse_auth(&h, &[])
    };
    for bad in [
        "garbage",
        "Basic dXNlcjpwYXNz",
        "AWS4-HMAC-SHA256",
        "AWS4-HMAC-SHA256 Credential=AKID/20240101/us-east-1/sqs/aws4_request",
        "AWS4-HMAC-SHA256 Credential=nonsense, SignedHeaders=host, Signature=00",
        "AWS nocolon",
    ] {
        assert!(matches!(auth(bad), Err(SigError::Incomplete(_))), "{bad}");
    }
    assert_eq!(
        auth("AWS AKID:c2ln").unwrap(),
        Auth::V2 {
            access_key: "AKID".into()
        }
    );
    let presigned = query_of("X-Amz-Credential=a%2F20240101%2Fus-east-1%2Fs3%2Faws4_request");
    assert!(matches!(
        parse_auth(&HeaderMap::new(), &presigned),
        Err(SigError::Incomplete(_))
    ));
    assert_eq!(parse_auth(&HeaderMap::new(), &[]).unwrap(), Auth::Anonymous);
}

#[test]
fn uri_encoding_and_path_normalization() {
    assert_eq!(uri_encode("a b/c~d%", false), "a%20b/c~d%25");
    assert_eq!(uri_encode("a/b", true), "a%2Fb");
    assert_eq!(normalize_path("/a/./b/../c//d/"), "/a/c/d/");
    assert_eq!(normalize_path(""), "/");
    assert_eq!(normalize_path("/.."), "/");
    assert_eq!(canonical_query("b=2&a=%7e&a=1&c", false), "a=1&a=~&b=2&c=");
}
