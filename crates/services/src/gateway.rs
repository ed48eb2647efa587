//! The gateway: decides which service a request is for, the way AWS endpoints and LocalStack do,
//! and answers the health endpoints.
//!
//! Routing order: the SigV4 credential scope's service (header or presigned query), then the
//! `X-Amz-Target` prefix, then the query protocol's `Action`+`Version`, then S3 (REST path or a
//! virtual-hosted bucket host). Anything else answers 501 naming what was asked.

use crate::Service;
use cumulo_store::Store;
use cumulo_wire::query::parse_form;
use cumulo_wire::sigv4::CredentialScope;
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
}

impl Default for Config {
    fn default() -> Self {
        Config {
            default_region: "us-east-1".to_string(),
            account_id: "000000000000".to_string(),
        }
    }
}

/// `X-Amz-Target` prefixes (before the `.`) and the signing name they belong to.
const TARGET_PREFIXES: &[(&str, &str)] = &[
    ("AmazonSQS", "sqs"),
    ("AmazonSSM", "ssm"),
    ("DynamoDB_20120810", "dynamodb"),
    ("DynamoDBStreams_20120810", "dynamodb"),
    ("TrentService", "kms"),
    ("secretsmanager", "secretsmanager"),
    ("Logs_20140328", "logs"),
    ("AWSEvents", "events"),
    ("AmazonEC2ContainerRegistry_V20150921", "ecr"),
];

/// Query-protocol API versions and the signing name they belong to.
const QUERY_VERSIONS: &[(&str, &str)] = &[
    ("2010-03-31", "sns"),
    ("2012-11-05", "sqs"),
    ("2011-06-15", "sts"),
    ("2010-05-15", "cloudformation"),
    ("2010-05-08", "iam"),
];

/// Routes requests to services and reports health.
pub struct Gateway {
    services: HashMap<&'static str, Arc<dyn Service>>,
    store: Arc<Store>,
    config: Config,
}

impl Gateway {
    /// A gateway with every emulated service, sharing one store.
    pub fn new(store: Arc<Store>, config: Config) -> Result<Self, cumulo_store::StoreError> {
        let sqs = Arc::new(crate::sqs::SqsService::new(store.clone(), &config)?);
        let list: Vec<Arc<dyn Service>> = vec![
            Arc::new(crate::s3::S3Service::new(store.clone(), &config)?),
            sqs.clone(),
            Arc::new(crate::sns::SnsService::new(store.clone(), &config, sqs)?),
            Arc::new(crate::ssm::SsmService::new(store.clone(), &config)?),
            Arc::new(crate::sts::StsService::new(store.clone(), &config)?),
        ];
        let services = list.into_iter().map(|s| (s.name(), s)).collect();
        Ok(Gateway {
            services,
            store,
            config,
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The service registered under a signing name.
    pub fn service(&self, name: &str) -> Option<&Arc<dyn Service>> {
        self.services.get(name)
    }

    /// Answers one request.
    pub async fn handle(&self, mut req: AwsRequest) -> AwsResponse {
        let path = req.raw_path.as_str();
        if path == "/_cumulo/health" || path == "/_localstack/health" {
            return self.health(&req);
        }
        let scope = req
            .header("authorization")
            .and_then(CredentialScope::from_authorization)
            .or_else(|| {
                req.query_param("X-Amz-Credential")
                    .and_then(CredentialScope::parse)
            });
        req.region = scope
            .as_ref()
            .map(|s| s.region.clone())
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| self.config.default_region.clone());
        req.account_id = self.config.account_id.clone();
        req.access_key = scope.as_ref().map(|s| s.access_key.clone());
        let name = scope
            .map(|s| s.service)
            .or_else(|| route_by_target(&req))
            .or_else(|| route_by_query_version(&req))
            .unwrap_or_else(|| "s3".to_string());
        let name = if name == "s3express" {
            "s3".to_string()
        } else {
            name
        };
        match self.services.get(name.as_str()) {
            Some(svc) => svc.handle(req).await,
            None => not_emulated(&name, &req),
        }
    }

    fn health(&self, req: &AwsRequest) -> AwsResponse {
        let mut services = serde_json::Map::new();
        let mut names: Vec<_> = self.services.keys().collect();
        names.sort();
        for n in names {
            services.insert(n.to_string(), "running".into());
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
        let status = if store_ok {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        };
        AwsResponse::new(status, "application/json", body.to_string())
            .with_header("x-amzn-requestid", &req.request_id)
    }
}

fn route_by_target(req: &AwsRequest) -> Option<String> {
    let target = req.header("x-amz-target")?;
    let prefix = target.split('.').next()?;
    TARGET_PREFIXES
        .iter()
        .find(|(p, _)| *p == prefix)
        .map(|(_, s)| s.to_string())
}

fn route_by_query_version(req: &AwsRequest) -> Option<String> {
    let find = |params: &[(String, String)]| {
        let version = params.iter().find(|(k, _)| k == "Version")?.1.clone();
        QUERY_VERSIONS
            .iter()
            .find(|(v, _)| *v == version)
            .map(|(_, s)| s.to_string())
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
    let protocol = if req.header("x-amz-target").is_some() {
        Protocol::Json11
    } else if req.body.starts_with(b"Action=") || req.query_param("Action").is_some() {
        Protocol::Query("https://cumulo.invalid/")
    } else {
        Protocol::RestJson
    };
    let mut err = AwsError::not_implemented(service, &operation);
    err.message = format!(
        "cumulo: the {service} service is not emulated (operation {operation} is not implemented)"
    );
    err.into_response(protocol, &req.request_id)
}
