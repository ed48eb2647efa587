//! The gateway: decides which service a request is for, the way AWS endpoints and LocalStack do,
//! checks its signature when asked to, and answers the health endpoints.
//!
//! Every routing key comes from the services' descriptors in the [`catalog`]. Routing order: the
//! SigV4 credential scope's service (header or presigned query), then the `X-Amz-Target`
//! prefix, then the query protocol's `Version` (URL query or form body), then a REST service's
//! path prefix (for unsigned requests), then S3 (REST path or a virtual-hosted bucket host),
//! which is also where anonymous browser-style requests go. A service cumulo does not emulate
//! answers 501 naming what was asked.
//!
//! Errors the gateway raises for a service (bad signature, malformed request, oversized body) are
//! rendered in that service's own protocol, so the client raises the exception it would on AWS.

use crate::Service;
use crate::catalog::{self, Catalog};
use cumulo_store::Store;
use cumulo_wire::query::parse_form;
use cumulo_wire::sigv2;
use cumulo_wire::sigv4::{self, Auth, CredentialScope, Placement, SigError, SigV4, SignedParts};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::StatusCode;
use std::collections::HashMap;
use std::sync::Arc;

/// Settings every service shares.
#[derive(Debug, Clone)]
pub struct Config {
    /// Region used when a request carries no credential scope.
    pub default_region: String,
    /// The account every caller acts as.
    pub account_id: String,
    /// When set, every request must carry a valid SigV4 signature by one of these keys; when
    /// `None` (the default, as LocalStack) any credentials are accepted unchecked.
    pub signing_keys: Option<SigningKeys>,
    /// `host:port` at which this endpoint is reached, for work that no request's Host names:
    /// functions that EventBridge invokes point their SDK here. `cumulo serve` sets its
    /// listening port; the default is LocalStack's `localhost:4566`.
    pub endpoint_host: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            default_region: "us-east-1".to_string(),
            account_id: "000000000000".to_string(),
            signing_keys: None,
            endpoint_host: "localhost:4566".to_string(),
        }
    }
}

/// Access key id → secret access key. Its `Debug` never shows a secret.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SigningKeys(HashMap<String, String>);

impl SigningKeys {
    pub fn new(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        SigningKeys(pairs.into_iter().collect())
    }

    pub fn secret(&self, access_key: &str) -> Option<&str> {
        self.0.get(access_key).map(String::as_str)
    }
}

impl std::fmt::Debug for SigningKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut ids: Vec<_> = self.0.keys().collect();
        ids.sort();
        f.debug_struct("SigningKeys")
            .field("access_keys", &ids)
            .finish_non_exhaustive()
    }
}

/// The protocol a request to `service` is in, judged from the service's descriptor and the
/// request's shape.
pub fn infer_protocol(service: &str, req: &AwsRequest) -> Protocol {
    match catalog::descriptor(service) {
        Some(d) => d.protocol_for(req),
        None => catalog::protocol_of_unknown(req),
    }
}

/// Requests the HTTP layer refuses before they reach a service; the gateway renders them in the
/// protocol of the service they were for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The body is larger than the configured limit (bytes).
    BodyTooLarge { limit: u64 },
    /// The header section is larger than the configured limit (bytes).
    HeadersTooLarge { size: usize, limit: usize },
    /// The body could not be read (client hung up or sent a broken chunked encoding).
    UnreadableBody,
}

/// Why the gateway could not start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    #[error(transparent)]
    Store(#[from] cumulo_store::StoreError),
    #[error("cloudformation engine: {0}")]
    Engine(#[from] cumulo_engine::EngineError),
}

/// Routes requests to services and reports health.
pub struct Gateway {
    services: HashMap<&'static str, Arc<dyn Service>>,
    store: Arc<Store>,
    config: Config,
    /// Custom resources' pending requests, answered through their ResponseURLs.
    responses: Arc<crate::custom::Responses>,
    /// The catalog the services come from: it knows which are built yet (the health report)
    /// and hands typed handles to in-process readers beside the AWS APIs (the console); `None`
    /// for a gateway over given services (all of them running).
    catalog: Option<Arc<Catalog>>,
}

impl Gateway {
    /// A gateway with every emulated service, sharing one store. Each is built on its first
    /// request (or when a service that calls it is built), not here: see [`lazy`].
    pub fn new(store: Arc<Store>, config: Config) -> Self {
        Self::with_engine_config(store, config, cumulo_engine::EngineConfig::default())
    }

    /// [`Gateway::new`] with the CloudFormation engine's tunables.
    pub fn with_engine_config(
        store: Arc<Store>,
        config: Config,
        engine: cumulo_engine::EngineConfig,
    ) -> Self {
        let context = catalog::Context {
            engine,
            ..catalog::Context::new(store, config)
        };
        Self::over(&Catalog::new(context))
    }

    /// A gateway over every service of `catalog`: the same instances its other users act on
    /// (direct deploy's engine and providers), so a function's SDK call and a handler's
    /// ResponseURL PUT reach the state the deploy is changing.
    pub fn over(catalog: &Arc<Catalog>) -> Self {
        let context = catalog.context();
        let mut gateway = Self::with_services(
            context.store.clone(),
            context.config.clone(),
            catalog.services(),
        );
        gateway.responses = context.responses.clone();
        gateway.catalog = Some(catalog.clone());
        gateway
    }

    /// A gateway over the given services by signing name (tests route to probes).
    pub fn with_services(
        store: Arc<Store>,
        config: Config,
        list: Vec<(&'static str, Arc<dyn Service>)>,
    ) -> Self {
        Gateway {
            services: list.into_iter().collect(),
            store,
            config,
            responses: Arc::default(),
            catalog: None,
        }
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The catalog this gateway routes to (built services and not-yet-built slots), for
    /// in-process readers that call services' typed operations, such as the console.
    pub fn catalog(&self) -> Option<&Arc<Catalog>> {
        self.catalog.as_ref()
    }

    /// The service registered under a signing name.
    pub fn service(&self, name: &str) -> Option<&Arc<dyn Service>> {
        self.services.get(name)
    }

    /// Answers one request. Every response carries a request id.
    pub async fn handle(&self, mut req: AwsRequest) -> AwsResponse {
        let path = req.raw_path.as_str();
        if path == "/_cumulo/health" || path == "/_localstack/health" {
            return self.health(&req);
        }
        if let Some(resp) = self.cumulo_url(&mut req).await {
            return resp;
        }
        let auth = self.parse_auth(&req);
        let name = self.identify(&mut req, auth.as_ref().ok());
        let request_id = req.request_id.clone();
        if let Err(err) = auth.and_then(|a| self.authenticate(&a, &req, &name)) {
            let has_auth_header = req.header("authorization").is_some();
            return self.render(&name, &req, sig_error(err, &name, &req, has_auth_header));
        }
        if let Some(err) = malformed_uri(&req) {
            return self.render(&name, &req, err(&name, &req));
        }
        if let Some(err) = self.wrong_content_type(&name, &req) {
            return self.render(&name, &req, err);
        }
        if name == "s3" {
            rewrite_virtual_host(&mut req);
        }
        let mut resp = match self.services.get(name.as_str()) {
            Some(svc) => svc.handle(req).await,
            None => not_emulated(&name, &req),
        };
        if !resp.headers.contains_key("x-amzn-requestid")
            && !resp.headers.contains_key("x-amz-request-id")
        {
            resp.set_header("x-amzn-requestid", &request_id);
        }
        resp
    }

    /// A WebSocket upgrade request to a WebSocket API's stage (either data-plane URL form):
    /// `None` when the request is anything else (the HTTP layer then answers it through
    /// [`Gateway::handle`]), else the 101 answer with the session to run over the upgraded
    /// socket, or the refusal.
    pub async fn websocket(&self, req: &AwsRequest) -> Option<crate::WebSocketUpgrade> {
        if !crate::apigatewayv2::websocket::is_upgrade(req) {
            return None;
        }
        let mut req = req.clone();
        if let Some(api_id) = crate::apigateway::invoke::api_of_host(&req.host) {
            req.raw_path = format!(
                "{}{api_id}{}",
                crate::apigateway::EXECUTE_API_PATH,
                req.raw_path
            );
        }
        if !req
            .raw_path
            .starts_with(crate::apigateway::EXECUTE_API_PATH)
        {
            return None;
        }
        req.region = self.config.default_region.clone();
        req.account_id = self.config.account_id.clone();
        let svc = self
            .catalog
            .as_ref()?
            .get::<crate::apigateway::ApiGatewayService>()
            .ok()?;
        let mut upgrade = svc.websocket(&req).await?;
        let request_id = req.request_id.clone();
        match &mut upgrade {
            Ok((resp, _)) | Err(resp) => {
                if !resp.headers.contains_key("x-amzn-requestid") {
                    resp.set_header("x-amzn-RequestId", &request_id);
                }
            }
        }
        Some(upgrade)
    }

    /// URLs called without a signature: API Gateway's data plane, and cumulo's own URLs that
    /// stand in for AWS's presigned ones: Lambda's code downloads (GetFunction's `Code.Location`), custom resources'
    /// ResponseURLs and WaitConditionHandles' URLs.
    async fn cumulo_url(&self, req: &mut AwsRequest) -> Option<AwsResponse> {
        // API Gateway's data plane: `<api-id>.execute-api.<host>/<stage>/<path>` and
        // `/_aws/execute-api/<api-id>/<stage>/<path>`, unsigned as on AWS.
        let host_form = crate::apigateway::invoke::api_of_host(&req.host).is_some();
        if (host_form
            || req
                .raw_path
                .starts_with(crate::apigateway::EXECUTE_API_PATH))
            && req.raw_path.contains("/@connections/")
            && let Some(refused) = self.refuse_unsigned_management(req)
        {
            return Some(refused);
        }
        if let Some(api_id) = crate::apigateway::invoke::api_of_host(&req.host) {
            req.raw_path = format!(
                "{}{api_id}{}",
                crate::apigateway::EXECUTE_API_PATH,
                req.raw_path
            );
        }
        if req
            .raw_path
            .starts_with(crate::apigateway::EXECUTE_API_PATH)
        {
            req.region = self.config.default_region.clone();
            req.account_id = self.config.account_id.clone();
            let svc = self.services.get("apigateway")?;
            return Some(svc.handle(req.clone()).await);
        }
        if req.raw_path.starts_with("/_cumulo/lambda/") {
            req.region = self.config.default_region.clone();
            req.account_id = self.config.account_id.clone();
            let svc = self.services.get("lambda")?;
            return Some(svc.handle(req.clone()).await);
        }
        if req.raw_path.starts_with(crate::custom::RESPONSE_PATH) {
            return Some(self.responses.accept(req));
        }
        if req.raw_path.starts_with(cumulo_engine::HANDLE_PATH) {
            return Some(
                self.services
                    .get("cloudformation")?
                    .handle(req.clone())
                    .await,
            );
        }
        None
    }

    /// The @connections management API is signed (`execute-api`) on AWS, unlike the data plane:
    /// with `--verify-signatures` an unsigned or badly signed call is refused. Checked before the
    /// host form's path is rewritten, since the signature covers the path as sent.
    fn refuse_unsigned_management(&self, req: &AwsRequest) -> Option<AwsResponse> {
        self.config.signing_keys.as_ref()?;
        let err = self
            .parse_auth(req)
            .and_then(|a| self.authenticate(&a, req, "execute-api"))
            .err()?;
        let header = req.header("authorization").is_some();
        Some(self.render("apigateway", req, sig_error(err, "apigateway", req, header)))
    }

    /// Answers a request the HTTP layer refused, in the protocol of the service it was for.
    pub fn refuse(&self, mut req: AwsRequest, refusal: Refusal) -> AwsResponse {
        let auth = self.parse_auth(&req);
        let name = self.identify(&mut req, auth.as_ref().ok());
        let s3 = name == "s3";
        let err = match refusal {
            Refusal::BodyTooLarge { limit } if s3 => AwsError::bad_request(
                "EntityTooLarge",
                "Your proposed upload exceeds the maximum allowed size",
            )
            .with_extra("MaxSizeAllowed", &limit.to_string()),
            Refusal::BodyTooLarge { limit } => AwsError::new(
                StatusCode::PAYLOAD_TOO_LARGE,
                "RequestEntityTooLarge",
                format!("Request body is larger than the maximum of {limit} bytes"),
            ),
            Refusal::HeadersTooLarge { size, limit } => AwsError::bad_request(
                "RequestHeaderSectionTooLarge",
                format!(
                    "Your request header section exceeds the maximum allowed size ({size} > {limit} bytes)."
                ),
            ),
            Refusal::UnreadableBody => AwsError::bad_request(
                if s3 {
                    "IncompleteBody"
                } else {
                    "MalformedInput"
                },
                "The request body could not be read completely",
            ),
        };
        self.render(&name, &req, err)
    }

    /// The request's signature. Without verification an incomplete SigV4 signature still counts
    /// when its credential scope can be read (hand-made requests often skip the date); only one
    /// that names no scope at all, which nothing could route or check, is refused.
    fn parse_auth(&self, req: &AwsRequest) -> Result<Auth, SigError> {
        let auth = sigv4::parse_auth(&req.headers, &req.query);
        if self.config.signing_keys.is_some() {
            return auth;
        }
        auth.or_else(|e| {
            let scope = readable_scope(req).ok_or(e)?;
            Ok(Auth::V4(SigV4 {
                scope,
                signed_headers: Vec::new(),
                signature: String::new(),
                timestamp: String::new(),
                placement: Placement::Header,
            }))
        })
    }

    /// Works out the service a request is for and fills in region, account and access key.
    fn identify(&self, req: &mut AwsRequest, auth: Option<&Auth>) -> String {
        // Even a signature that will be refused names its service: answer in that one's shape.
        let fallback = auth.is_none().then(|| readable_scope(req)).flatten();
        let scope = match auth {
            Some(Auth::V4(sig)) => Some(&sig.scope),
            _ => fallback.as_ref(),
        };
        req.region = scope
            .map(|s| s.region.clone())
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| self.config.default_region.clone());
        req.account_id = self.config.account_id.clone();
        req.access_key = match auth {
            Some(Auth::V4(sig)) => Some(sig.scope.access_key.clone()),
            Some(Auth::V2 { access_key }) => Some(access_key.clone()),
            _ => None,
        };
        if let Some(s) = scope {
            // A name no service signs as is kept, for the 501 that names it.
            return catalog::descriptor(&s.service)
                .map_or_else(|| s.service.clone(), |d| d.name.to_string());
        }
        let routes = &catalog::ROUTES;
        req.header("x-amz-target")
            .and_then(|t| routes.by_target(t))
            .or_else(|| query_version(req).and_then(|v| routes.by_query_version(&v)))
            .or_else(|| routes.by_path(&req.raw_path))
            .map_or("s3", |d| d.name)
            .to_string()
    }

    /// Checks the signature when cumulo was configured with keys; accepts anything otherwise.
    fn authenticate(&self, auth: &Auth, req: &AwsRequest, service: &str) -> Result<(), SigError> {
        let Some(keys) = &self.config.signing_keys else {
            return Ok(());
        };
        match auth {
            Auth::Anonymous => Err(SigError::Missing),
            // Only S3 ever had V2 (boto3 still presigns S3 URLs with it).
            Auth::V2 { access_key } if service == "s3" => {
                let secret = keys
                    .secret(access_key)
                    .ok_or_else(|| SigError::UnknownKey(access_key.clone()))?;
                // V2 signs the path-style resource, also for virtual-hosted requests.
                let resource = match virtual_host_bucket(&req.host) {
                    Some(bucket) => format!("/{bucket}{}", req.raw_path),
                    None => req.raw_path.clone(),
                };
                let parts = sigv2::V2Parts {
                    method: &req.method,
                    resource_path: &resource,
                    raw_query: &req.raw_query,
                    headers: &req.headers,
                    query: &req.query,
                };
                sigv2::verify(&parts, secret, chrono::Utc::now())
            }
            Auth::V2 { .. } => Err(SigError::Unsupported),
            Auth::V4(sig) => {
                let secret = keys
                    .secret(&sig.scope.access_key)
                    .ok_or_else(|| SigError::UnknownKey(sig.scope.access_key.clone()))?;
                sigv4::verify(sig, &SignedParts::of(req), secret, chrono::Utc::now())
            }
        }
    }

    /// A body the service's protocol cannot read because it is declared as something else: AWS
    /// decodes by `Content-Type`, so a JSON-RPC call must say JSON and a query-protocol POST
    /// whose parameters are in the body must say form-encoded. A missing `Content-Type` is let
    /// through (hand-made requests often omit it); only a contradicting one is refused.
    fn wrong_content_type(&self, service: &str, req: &AwsRequest) -> Option<AwsError> {
        let content_type = req.header("content-type")?.trim().to_ascii_lowercase();
        if !self.services.contains_key(service) {
            return None;
        }
        let protocol = infer_protocol(service, req);
        match protocol {
            Protocol::Json10 | Protocol::Json11 if req.header("x-amz-target").is_some() => {
                let ok = content_type.starts_with("application/x-amz-json-1.")
                    || content_type.starts_with("application/json");
                (!ok).then(|| {
                    AwsError::bad_request(
                        "SerializationException",
                        format!(
                            "Unsupported Content-Type '{content_type}': this API reads application/x-amz-json-1.0 or 1.1"
                        ),
                    )
                })
            }
            Protocol::Query(_) | Protocol::Ec2(_)
                if req.method == http::Method::POST
                    && !req.body.is_empty()
                    && req.query_param("Action").is_none() =>
            {
                let ok = content_type.starts_with("application/x-www-form-urlencoded");
                (!ok).then(|| {
                    AwsError::bad_request(
                        "MissingAction",
                        format!(
                            "The request body is {content_type}, not application/x-www-form-urlencoded, so it names no Action"
                        ),
                    )
                })
            }
            _ => None,
        }
    }

    /// Renders an error for `service` with the request id, in that service's protocol.
    fn render(&self, service: &str, req: &AwsRequest, err: AwsError) -> AwsResponse {
        let protocol = infer_protocol(service, req);
        let mut resp = err.into_response(protocol, &req.request_id);
        if protocol == Protocol::RestXml {
            resp.set_header("x-amz-request-id", &req.request_id);
        }
        resp
    }

    fn health(&self, req: &AwsRequest) -> AwsResponse {
        let (store_ok, body) = self.health_report();
        let status = if store_ok {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        AwsResponse::new(status, "application/json", body.to_string())
            .with_header("x-amzn-requestid", &req.request_id)
    }

    /// The health report `/_cumulo/health` answers with, and whether the store is usable. It
    /// builds no service: one not built yet is `available`.
    pub fn health_report(&self) -> (bool, serde_json::Value) {
        let mut services = serde_json::Map::new();
        let mut started = match &self.catalog {
            Some(catalog) => catalog.started(),
            None => self.services.keys().map(|n| (*n, true)).collect(),
        };
        started.sort_unstable();
        for (name, started) in started {
            let state = if started { "running" } else { "available" };
            services.insert(name.to_string(), state.into());
        }
        let store_ok = self
            .store
            .read(|c| c.query_row("SELECT 1", [], |r| r.get::<_, i64>(0)))
            .is_ok();
        let body = serde_json::json!({
            "services": services,
            "store": {
                "status": if store_ok { "ok" } else { "error" },
                "location": self.store.location().map(|p| p.display().to_string()),
            },
            "edition": "cumulo",
            "version": env!("CARGO_PKG_VERSION"),
        });
        (store_ok, body)
    }
}

/// The error AWS gives for each authentication failure, in the service's vocabulary: S3 has its
/// own codes, JSON services say `...Exception`, query services use the common error codes.
fn sig_error(err: SigError, service: &str, req: &AwsRequest, header: bool) -> AwsError {
    let s3 = service == "s3";
    let json = !s3
        && matches!(
            infer_protocol(service, req),
            Protocol::Json10 | Protocol::Json11 | Protocol::RestJson
        );
    let mut aws = auth_error(err.clone(), s3, json, header);
    if json && catalog::descriptor(service).is_some_and(|d| d.query_compatible) {
        // What the service said before it spoke JSON: its code travels in x-amzn-query-error
        // (botocore raises that one) and its status is kept.
        let legacy = auth_error(err, s3, false, header);
        aws.status = legacy.status;
        aws.query_code = Some(legacy.code);
    }
    aws
}

/// `header`: the signature came in an `Authorization` header (else in the query string).
fn auth_error(err: SigError, s3: bool, json: bool, header: bool) -> AwsError {
    let forbidden = |code: &str, msg: &str| AwsError::new(StatusCode::FORBIDDEN, code, msg);
    const MISMATCH: &str = "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.";
    const BAD_TOKEN: &str = "The security token included in the request is invalid.";
    let bad_signature = |msg: &str| {
        if json {
            AwsError::bad_request("InvalidSignatureException", msg)
        } else {
            forbidden("SignatureDoesNotMatch", msg)
        }
    };
    match err {
        SigError::Incomplete(msg) if s3 => AwsError::bad_request(
            if header {
                "AuthorizationHeaderMalformed"
            } else {
                "AuthorizationQueryParametersError"
            },
            msg,
        ),
        SigError::Incomplete(msg) if json => {
            AwsError::bad_request("IncompleteSignatureException", msg)
        }
        SigError::Incomplete(msg) => AwsError::bad_request("IncompleteSignature", msg),
        SigError::Missing if s3 => forbidden("AccessDenied", "Access Denied"),
        SigError::Missing if json => forbidden(
            "MissingAuthenticationTokenException",
            "Missing Authentication Token",
        ),
        SigError::Missing => forbidden(
            "MissingAuthenticationToken",
            "Request is missing Authentication Token",
        ),
        SigError::Unsupported if s3 => AwsError::bad_request(
            "InvalidRequest",
            "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.",
        ),
        SigError::Unsupported => {
            let msg = "Only AWS4-HMAC-SHA256 signatures are supported";
            if json {
                AwsError::bad_request("IncompleteSignatureException", msg)
            } else {
                AwsError::bad_request("IncompleteSignature", msg)
            }
        }
        SigError::UnknownKey(key) if s3 => forbidden(
            "InvalidAccessKeyId",
            "The AWS Access Key Id you provided does not exist in our records.",
        )
        .with_extra("AWSAccessKeyId", &key),
        SigError::UnknownKey(_) if json => {
            AwsError::bad_request("UnrecognizedClientException", BAD_TOKEN)
        }
        SigError::UnknownKey(_) => forbidden("InvalidClientTokenId", BAD_TOKEN),
        SigError::Mismatch {
            access_key,
            signature,
            canonical_request,
            string_to_sign,
        } if s3 => forbidden(
            "SignatureDoesNotMatch",
            "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
        )
        .with_extra("AWSAccessKeyId", &access_key)
        .with_extra("StringToSign", &string_to_sign)
        .with_extra("SignatureProvided", &signature)
        .with_extra("CanonicalRequest", &canonical_request),
        SigError::Mismatch {
            canonical_request,
            string_to_sign,
            ..
        } => bad_signature(&format!(
            "{MISMATCH}\n\nThe Canonical String for this request should have been\n'{canonical_request}'\n\nThe String-to-Sign should have been\n'{string_to_sign}'\n"
        )),
        SigError::TooSkewed { timestamp, now, .. } if s3 => forbidden(
            "RequestTimeTooSkewed",
            "The difference between the request time and the current time is too large.",
        )
        .with_extra("RequestTime", &timestamp)
        .with_extra("ServerTime", &now)
        .with_extra("MaxAllowedSkewMilliseconds", "900000"),
        e @ SigError::TooSkewed { .. } => bad_signature(&e.to_string()),
        SigError::Expired { expires_at, now } if s3 => {
            forbidden("AccessDenied", "Request has expired")
                .with_extra("Expires", &expires_at)
                .with_extra("ServerTime", &now)
        }
        SigError::Expired { expires_at, now } => bad_signature(&format!(
            "Signature expired: {now} is now later than {expires_at}"
        )),
        SigError::ContentSha256Mismatch { declared, computed } if s3 => AwsError::bad_request(
            "XAmzContentSHA256Mismatch",
            "The provided 'x-amz-content-sha256' header does not match what was computed.",
        )
        .with_extra("ClientComputedContentSHA256", &declared)
        .with_extra("S3ComputedContentSHA256", &computed),
        e @ SigError::ContentSha256Mismatch { .. } => bad_signature(&e.to_string()),
    }
}

/// The credential scope from the `Authorization` header or `X-Amz-Credential`, however incomplete
/// the rest of the signature is.
fn readable_scope(req: &AwsRequest) -> Option<CredentialScope> {
    req.header("authorization")
        .and_then(CredentialScope::from_authorization)
        .or_else(|| {
            req.query_param("X-Amz-Credential")
                .and_then(CredentialScope::parse)
        })
}

type ErrorFor = fn(&str, &AwsRequest) -> AwsError;

/// A path or query with a `%` not followed by two hex digits cannot be decoded; AWS refuses it
/// rather than guess.
fn malformed_uri(req: &AwsRequest) -> Option<ErrorFor> {
    fn bad(s: &str) -> bool {
        let b = s.as_bytes();
        b.iter().enumerate().any(|(i, &c)| {
            c == b'%'
                && !(b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit))
        })
    }
    if !bad(&req.raw_path) && !bad(&req.raw_query) {
        return None;
    }
    Some(|service, req| {
        if service == "s3" {
            AwsError::bad_request("InvalidURI", "Couldn't parse the specified URI.")
        } else if matches!(infer_protocol(service, req), Protocol::Query(_)) {
            AwsError::bad_request(
                "MalformedQueryString",
                "The URI contains invalid percent-encoding",
            )
        } else {
            AwsError::validation_exception("The URI contains invalid percent-encoding")
        }
    })
}

/// The bucket of a virtual-hosted-style S3 host, if the host is one: `bucket.localhost`,
/// `bucket.s3.localhost.localstack.cloud`, `bucket.s3.amazonaws.com`,
/// `bucket.s3.<region>.amazonaws.com` (and the legacy `bucket.s3-<region>.amazonaws.com`).
pub fn virtual_host_bucket(host: &str) -> Option<&str> {
    let host = strip_port(host);
    let bucket = if let Some(b) = host.strip_suffix(".s3.localhost.localstack.cloud") {
        b
    } else if let Some(b) = host.strip_suffix(".localhost") {
        b
    } else if let Some(rest) = host.strip_suffix(".amazonaws.com") {
        let (bucket, endpoint) = rest.rsplit_once(".s3")?;
        let endpoint_ok = endpoint.is_empty()
            || endpoint.strip_prefix('.').is_some_and(is_region)
            || endpoint.strip_prefix('-').is_some_and(is_region);
        if !endpoint_ok {
            return None;
        }
        bucket
    } else {
        return None;
    };
    let valid = (3..=63).contains(&bucket.len())
        && bucket
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-')
        && !bucket.starts_with(['.', '-'])
        && bucket != "s3";
    valid.then_some(bucket)
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        // An IPv6 literal is never a bucket host; leave it whole.
        return host;
    }
    host.split_once(':').map_or(host, |(h, _)| h)
}

fn is_region(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// Turns a virtual-hosted-style S3 request into path style, so S3 only ever sees `/bucket/key`.
fn rewrite_virtual_host(req: &mut AwsRequest) {
    let Some(bucket) = virtual_host_bucket(&req.host) else {
        return;
    };
    let path = if req.raw_path.is_empty() || req.raw_path == "/" {
        format!("/{bucket}")
    } else {
        format!("/{bucket}{}", req.raw_path)
    };
    req.raw_path = path;
}

/// The query protocol's `Version`, from the URL query or a form body.
fn query_version(req: &AwsRequest) -> Option<String> {
    let find = |params: &[(String, String)]| {
        params
            .iter()
            .find(|(k, _)| k == "Version")
            .map(|(_, v)| v.clone())
    };
    find(&req.query).or_else(|| {
        let is_form = req
            .header("content-type")
            .is_some_and(|c| c.starts_with("application/x-www-form-urlencoded"));
        if is_form {
            find(&parse_form(&req.body))
        } else {
            None
        }
    })
}

/// 501 for a service cumulo does not emulate, in the shape the caller's protocol expects.
fn not_emulated(service: &str, req: &AwsRequest) -> AwsResponse {
    let operation = req
        .target_operation()
        .map(str::to_string)
        .or_else(|| req.query_param("Action").map(str::to_string))
        .or_else(|| {
            parse_form(&req.body)
                .into_iter()
                .find(|(k, _)| k == "Action")
                .map(|(_, v)| v)
        })
        .unwrap_or_else(|| format!("{} {}", req.method, req.raw_path));
    let mut err = AwsError::not_implemented(service, &operation);
    err.message = format!(
        "cumulo: the {service} service is not emulated (operation {operation} is not implemented)"
    );
    err.into_response(infer_protocol(service, req), &req.request_id)
}

pub(crate) mod lazy;
#[cfg(test)]
mod tests;
