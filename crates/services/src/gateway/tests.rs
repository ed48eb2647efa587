//! Gateway behaviour with probe services that echo what they were handed.

use super::*;
use http::{HeaderValue, Method};

/// Answers 200 with what it saw: service name, path, region, access key.
struct Probe(&'static str);

#[async_trait::async_trait]
impl Service for Probe {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        let body = serde_json::json!({
            "service": self.0,
            "path": req.raw_path,
            "region": req.region,
            "access_key": req.access_key,
        });
        AwsResponse::new(StatusCode::OK, "application/json", body.to_string())
    }
}

fn gateway(keys: Option<&[(&str, &str)]>) -> Gateway {
    let config = Config {
        signing_keys: keys
            .map(|k| SigningKeys::new(k.iter().map(|(a, s)| (a.to_string(), s.to_string())))),
        ..Config::default()
    };
    let probes: Vec<(&'static str, Arc<dyn Service>)> = ["s3", "sqs", "sns", "ssm", "sts"]
        .into_iter()
        .map(|n| (n, Arc::new(Probe(n)) as Arc<dyn Service>))
        .collect();
    Gateway::with_services(Arc::new(Store::in_memory().unwrap()), config, probes)
}

fn req(method: Method, path: &str, headers: &[(&'static str, &str)], body: &str) -> AwsRequest {
    let mut r = AwsRequest::new(method, path);
    for (k, v) in headers {
        r.headers.insert(*k, HeaderValue::from_str(v).unwrap());
    }
    r.body = bytes::Bytes::from(body.to_string());
    r
}

async fn call(g: &Gateway, r: AwsRequest) -> (StatusCode, serde_json::Value, AwsResponse) {
    let resp = g.handle(r).await;
    let v = serde_json::from_slice(&resp.body).unwrap_or(serde_json::Value::Null);
    (resp.status, v, resp)
}

fn body(resp: &AwsResponse) -> String {
    String::from_utf8_lossy(&resp.body).into_owned()
}

const SCOPED: &str = "AWS4-HMAC-SHA256 Credential=AKID/20240101/eu-west-2/ssm/aws4_request, SignedHeaders=host;x-amz-date, Signature=00";

#[tokio::test]
async fn routes_by_scope_target_version_and_falls_back_to_s3() {
    let g = gateway(None);
    let (_, v, _) = call(
        &g,
        req(
            Method::POST,
            "/",
            &[
                ("authorization", SCOPED),
                ("x-amz-date", "20240101T000000Z"),
            ],
            "{}",
        ),
    )
    .await;
    assert_eq!(
        (v["service"].as_str(), v["region"].as_str()),
        (Some("ssm"), Some("eu-west-2"))
    );
    assert_eq!(v["access_key"], "AKID");

    let (_, v, _) = call(
        &g,
        req(
            Method::POST,
            "/",
            &[("x-amz-target", "AmazonSQS.ListQueues")],
            "{}",
        ),
    )
    .await;
    assert_eq!(
        (v["service"].as_str(), v["region"].as_str()),
        (Some("sqs"), Some("us-east-1"))
    );

    let form = [(
        "content-type",
        "application/x-www-form-urlencoded; charset=utf-8",
    )];
    let (_, v, _) = call(
        &g,
        req(
            Method::POST,
            "/",
            &form,
            "Action=ListTopics&Version=2010-03-31",
        ),
    )
    .await;
    assert_eq!(v["service"], "sns");
    let (_, v, _) = call(
        &g,
        req(
            Method::GET,
            "/?Action=GetCallerIdentity&Version=2011-06-15",
            &[],
            "",
        ),
    )
    .await;
    assert_eq!(v["service"], "sts");

    let (_, v, _) = call(&g, req(Method::GET, "/bucket/key", &[], "")).await;
    assert_eq!(
        (v["service"].as_str(), v["path"].as_str()),
        (Some("s3"), Some("/bucket/key"))
    );

    let presigned = "/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKID%2F20240101%2Fap-south-1%2Fs3%2Faws4_request&X-Amz-Date=20240101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=00";
    let (_, v, _) = call(&g, req(Method::GET, presigned, &[], "")).await;
    assert_eq!(
        (v["service"].as_str(), v["region"].as_str()),
        (Some("s3"), Some("ap-south-1"))
    );
}

#[tokio::test]
async fn rewrites_virtual_hosted_s3_to_path_style() {
    let g = gateway(None);
    for (host, path, want) in [
        (
            "bucket.localhost:4566",
            "/key/with%20space",
            "/bucket/key/with%20space",
        ),
        (
            "my.bucket.s3.localhost.localstack.cloud:4566",
            "/",
            "/my.bucket",
        ),
        ("bucket.s3.amazonaws.com", "/k", "/bucket/k"),
        ("bucket.s3.eu-west-1.amazonaws.com", "/k", "/bucket/k"),
        ("bucket.s3-eu-west-1.amazonaws.com", "/k", "/bucket/k"),
        ("localhost:4566", "/bucket/k", "/bucket/k"),
        (
            "s3.localhost.localstack.cloud:4566",
            "/bucket/k",
            "/bucket/k",
        ),
        ("127.0.0.1:4566", "/bucket/k", "/bucket/k"),
        ("s3.amazonaws.com", "/bucket/k", "/bucket/k"),
    ] {
        let mut r = req(Method::GET, path, &[], "");
        r.host = host.to_string();
        let (_, v, _) = call(&g, r).await;
        assert_eq!(v["path"], want, "{host}{path}");
    }
}

#[test]
fn virtual_host_bucket_rejects_non_bucket_hosts() {
    assert_eq!(virtual_host_bucket("bucket.localhost"), Some("bucket"));
    assert_eq!(virtual_host_bucket("[::1]:4566"), None);
    assert_eq!(virtual_host_bucket("sqs.us-east-1.amazonaws.com"), None);
    assert_eq!(virtual_host_bucket("Bad_Bucket.localhost"), None);
    assert_eq!(virtual_host_bucket("ab.localhost"), None);
}

#[tokio::test]
async fn adds_a_request_id_when_the_service_did_not() {
    let g = gateway(None);
    let (_, _, resp) = call(&g, req(Method::GET, "/b", &[], "")).await;
    assert!(!resp.headers["x-amzn-requestid"].is_empty());
}

#[tokio::test]
async fn refuses_garbage_authorization_in_the_services_shape() {
    let g = gateway(None);
    let (status, v, resp) = call(
        &g,
        req(
            Method::POST,
            "/",
            &[
                ("authorization", "garbage"),
                ("x-amz-target", "AmazonSSM.GetParameter"),
            ],
            "{}",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(v["__type"], "IncompleteSignatureException");
    assert!(resp.headers.contains_key("x-amzn-requestid"));

    let (status, _, resp) = call(
        &g,
        req(Method::GET, "/bucket", &[("authorization", "Bearer x")], ""),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body(&resp).contains("<Code>AuthorizationHeaderMalformed</Code>"));
}

#[tokio::test]
async fn verification_refuses_unsigned_unknown_and_wrong_signatures() {
    let g = gateway(Some(&[("test", "test")]));
    let (status, _, resp) = call(
        &g,
        req(
            Method::GET,
            "/?Action=GetCallerIdentity&Version=2011-06-15",
            &[],
            "",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(
        body(&resp).contains("<Code>MissingAuthenticationToken</Code>"),
        "{}",
        body(&resp)
    );

    let (status, _, resp) = call(&g, req(Method::GET, "/bucket", &[], "")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body(&resp).contains("<Code>AccessDenied</Code>"));

    let now = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let scoped = |key: &str, svc: &str| {
        format!(
            "AWS4-HMAC-SHA256 Credential={key}/{}/us-east-1/{svc}/aws4_request, SignedHeaders=host;x-amz-date, Signature=0000",
            &now[..8]
        )
    };
    let (status, _, resp) = call(
        &g,
        req(
            Method::GET,
            "/bucket",
            &[
                ("authorization", &scoped("nobody", "s3")),
                ("x-amz-date", &now),
            ],
            "",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(body(&resp).contains("<Code>InvalidAccessKeyId</Code>"));

    let (status, _, resp) = call(
        &g,
        req(
            Method::GET,
            "/bucket",
            &[
                ("authorization", &scoped("test", "s3")),
                ("x-amz-date", &now),
                ("host", "localhost"),
            ],
            "",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let b = body(&resp);
    assert!(
        b.contains("<Code>SignatureDoesNotMatch</Code>")
            && b.contains("<CanonicalRequest>GET\n/bucket\n"),
        "{b}"
    );

    let (status, v, _) = call(
        &g,
        req(
            Method::POST,
            "/",
            &[
                ("authorization", &scoped("test", "ssm")),
                ("x-amz-date", &now),
                ("x-amz-target", "AmazonSSM.GetParameter"),
            ],
            "{}",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(v["__type"], "InvalidSignatureException");

    // The health endpoints stay open: orchestration polls them without credentials.
    let (status, _, _) = call(&g, req(Method::GET, "/_cumulo/health", &[], "")).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn verification_accepts_a_correct_signature() {
    let g = gateway(Some(&[("AKIDEXAMPLE", "secret")]));
    let now = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let scope = cumulo_wire::sigv4::CredentialScope {
        access_key: "AKIDEXAMPLE".into(),
        date: now[..8].to_string(),
        region: "us-east-1".into(),
        service: "sqs".into(),
    };
    let body_hash = "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"; // sha256("{}")
    let canonical = format!(
        "POST\n/\n\nhost:localhost:4566\nx-amz-date:{now}\nx-amz-target:AmazonSQS.ListQueues\n\nhost;x-amz-date;x-amz-target\n{body_hash}"
    );
    let key = sigv4::signing_key("secret", &scope.date, "us-east-1", "sqs");
    let signature = sigv4::sign(&key, &sigv4::string_to_sign(&now, &scope, &canonical));
    let auth = format!(
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/{}/us-east-1/sqs/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature={signature}",
        scope.date
    );
    let headers = [
        ("authorization", auth.as_str()),
        ("x-amz-date", now.as_str()),
        ("host", "localhost:4566"),
        ("x-amz-target", "AmazonSQS.ListQueues"),
    ];
    let (status, v, _) = call(&g, req(Method::POST, "/", &headers, "{}")).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["service"], "sqs");
}

#[tokio::test]
async fn refuses_bad_percent_encoding() {
    let g = gateway(None);
    let (status, _, resp) = call(&g, req(Method::GET, "/bucket/%zz", &[], "")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body(&resp).contains("<Code>InvalidURI</Code>"));
    let (status, _, resp) = call(
        &g,
        req(
            Method::GET,
            "/?Action=ListTopics&Version=2010-03-31&x=%4",
            &[],
            "",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body(&resp).contains("<Code>MalformedQueryString</Code>"));
}

#[test]
fn refusals_use_the_services_shape() {
    let g = gateway(None);
    let r = g.refuse(
        req(Method::PUT, "/b/k", &[], ""),
        Refusal::BodyTooLarge { limit: 10 },
    );
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(body(&r).contains("<Code>EntityTooLarge</Code>"));
    assert!(r.headers.contains_key("x-amz-request-id"));
    let r = g.refuse(
        req(
            Method::POST,
            "/",
            &[("x-amz-target", "AmazonSQS.SendMessage")],
            "",
        ),
        Refusal::BodyTooLarge { limit: 10 },
    );
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(v["__type"], "RequestEntityTooLarge");
}

#[test]
fn infers_protocols() {
    let plain = req(Method::POST, "/", &[], "");
    let target = req(
        Method::POST,
        "/",
        &[("x-amz-target", "AmazonSQS.ListQueues")],
        "",
    );
    assert_eq!(infer_protocol("s3", &plain), Protocol::RestXml);
    assert_eq!(infer_protocol("sqs", &target), Protocol::Json10);
    assert!(matches!(infer_protocol("sqs", &plain), Protocol::Query(_)));
    assert_eq!(infer_protocol("ssm", &plain), Protocol::Json11);
    assert_eq!(infer_protocol("lambda", &plain), Protocol::RestJson);
}

#[tokio::test]
async fn without_verification_an_incomplete_but_scoped_signature_routes() {
    let g = gateway(None);
    let auth = "AWS4-HMAC-SHA256 Credential=x/20240101/eu-north-1/sts/aws4_request, SignedHeaders=host, Signature=0";
    let (status, v, _) = call(&g, req(Method::POST, "/", &[("authorization", auth)], "")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        (v["service"].as_str(), v["region"].as_str()),
        (Some("sts"), Some("eu-north-1"))
    );
    // With verification the same request is incomplete (no X-Amz-Date).
    let g = gateway(Some(&[("x", "y")]));
    let (status, _, resp) = call(&g, req(Method::POST, "/", &[("authorization", auth)], "")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body(&resp).contains("<Code>IncompleteSignature</Code>"));
}

#[tokio::test]
async fn refuses_a_content_type_the_protocol_cannot_read() {
    let g = gateway(None);
    let target = ("x-amz-target", "AmazonSSM.GetParameter");
    let (status, v, _) = call(
        &g,
        req(
            Method::POST,
            "/",
            &[target, ("content-type", "text/plain")],
            "{}",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(v["__type"], "SerializationException");
    for ok in [
        "application/x-amz-json-1.1",
        "application/json; charset=utf-8",
    ] {
        let (status, _, _) = call(
            &g,
            req(Method::POST, "/", &[target, ("content-type", ok)], "{}"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{ok}");
    }
    let (status, v, _) = call(&g, req(Method::POST, "/", &[target], "{}")).await;
    assert_eq!(
        (status, v["service"].as_str()),
        (StatusCode::OK, Some("ssm"))
    );

    let sts = "AWS4-HMAC-SHA256 Credential=x/20240101/us-east-1/sts/aws4_request, SignedHeaders=host, Signature=0";
    let form_body = "Action=GetCallerIdentity&Version=2011-06-15";
    let (status, _, resp) = call(
        &g,
        req(
            Method::POST,
            "/",
            &[("authorization", sts), ("content-type", "application/json")],
            form_body,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(body(&resp).contains("<Code>MissingAction</Code>"));
    let form = (
        "content-type",
        "application/x-www-form-urlencoded; charset=utf-8",
    );
    let (status, _, _) = call(
        &g,
        req(
            Method::POST,
            "/",
            &[("authorization", sts), form],
            form_body,
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}

fn health_of(v: &serde_json::Value, name: &str) -> String {
    v["services"][name].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn services_are_built_on_first_use_and_health_says_so() {
    let g = Gateway::new(Arc::new(Store::in_memory().unwrap()), Config::default());
    let (_, v, _) = call(&g, req(Method::GET, "/_localstack/health", &[], "")).await;
    for name in ["s3", "sqs", "sns", "ssm", "sts", "cloudformation"] {
        assert_eq!(health_of(&v, name), "available", "{name}");
    }
    let sns = "AWS4-HMAC-SHA256 Credential=AKID/20240101/us-east-1/sns/aws4_request, SignedHeaders=host, Signature=00";
    let (status, _, _) = call(
        &g,
        req(
            Method::POST,
            "/",
            &[("authorization", sns)],
            "Action=ListTopics&Version=2010-03-31",
        ),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, v, _) = call(&g, req(Method::GET, "/_cumulo/health", &[], "")).await;
    // SNS delivers to SQS, so building it built SQS; nothing else was touched.
    assert_eq!(health_of(&v, "sns"), "running");
    assert_eq!(health_of(&v, "sqs"), "running");
    assert_eq!(health_of(&v, "s3"), "available");
    assert_eq!(health_of(&v, "cloudformation"), "available");
}

#[test]
fn a_failed_build_is_retried_and_a_success_is_kept() {
    let attempts = std::cell::Cell::new(0);
    let build = || {
        attempts.set(attempts.get() + 1);
        if attempts.get() == 1 {
            Err(cumulo_store::StoreError::Dir {
                path: "/nowhere".into(),
                source: std::io::Error::other("refused"),
            }
            .into())
        } else {
            Ok(Probe("probe"))
        }
    };
    let lazy = lazy::Lazy::default();
    assert!(!lazy.started());
    assert!(lazy.get(build).is_err());
    assert!(!lazy.started());
    let first = lazy.get(build).unwrap();
    assert!(lazy.started());
    assert!(Arc::ptr_eq(&first, &lazy.get(build).unwrap()));
    assert_eq!(attempts.get(), 2);
}
