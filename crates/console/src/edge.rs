//! Route 53 hosted zones and their records, ACM certificates, and API Gateway APIs (REST with
//! their resources and methods, HTTP/WebSocket with their routes), through each service's typed
//! operations, which answer in the AWS API's own shapes: those are passed on as they are.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, json_ok};
use cumulo_services::acm::AcmService;
use cumulo_services::apigateway::ApiGatewayService;
use cumulo_services::route53::Route53Service;
use serde_json::{Value, json};
use std::sync::Arc;

/// Every ACM key type, so a listing is not limited to ListCertificates' RSA-only default.
const KEY_TYPES: &[&str] = &[
    "RSA_1024",
    "RSA_2048",
    "RSA_3072",
    "RSA_4096",
    "EC_prime256v1",
    "EC_secp384r1",
    "EC_secp521r1",
];

fn list(v: &Value, key: &str) -> Vec<Value> {
    v.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn route53(ctx: &Ctx<'_>) -> Result<Arc<Route53Service>, ApiError> {
    ctx.service::<Route53Service>()
}

/// Every hosted zone (ListHostedZones, every page): Route 53 is global, the region is ignored.
pub fn all_zones(ctx: &Ctx<'_>) -> Result<Vec<Value>, ApiError> {
    let svc = route53(ctx)?;
    let mut out = Vec::new();
    let mut marker: Option<String> = None;
    loop {
        let mut input = json!({"MaxItems": "100"});
        if let Some(m) = &marker {
            input["Marker"] = json!(m);
        }
        let page = svc
            .api_list_hosted_zones(&input)
            .map_err(ApiError::from_aws)?;
        out.extend(list(&page, "HostedZones"));
        match page.get("NextMarker").and_then(Value::as_str) {
            Some(m) => marker = Some(m.to_string()),
            None => return Ok(out),
        }
    }
}

/// `GET route53/zones`: ListHostedZones' `HostedZones`.
pub fn zones(ctx: &Ctx<'_>) -> ApiResult {
    json_ok(&json!({ "hosted_zones": all_zones(ctx)? }))
}

/// `GET route53/zones/{id}`: GetHostedZone and every record set (ListResourceRecordSets).
pub fn zone(ctx: &Ctx<'_>, id: &str) -> ApiResult {
    let svc = route53(ctx)?;
    let mut out = svc.api_get_hosted_zone(id).map_err(ApiError::from_aws)?;
    let mut records = Vec::new();
    let mut input = json!({"HostedZoneId": id, "MaxItems": "300"});
    loop {
        let page = svc
            .api_list_resource_record_sets(&input)
            .map_err(ApiError::from_aws)?;
        records.extend(list(&page, "ResourceRecordSets"));
        if page.get("IsTruncated") != Some(&json!(true)) {
            break;
        }
        for (from, to) in [
            ("NextRecordName", "StartRecordName"),
            ("NextRecordType", "StartRecordType"),
            ("NextRecordIdentifier", "StartRecordIdentifier"),
        ] {
            match page.get(from) {
                Some(v) => input[to] = v.clone(),
                None => {
                    if let Some(o) = input.as_object_mut() {
                        o.remove(to);
                    }
                }
            }
        }
    }
    out["ResourceRecordSets"] = json!(records);
    json_ok(&out)
}

/// Every certificate summary of the region (ListCertificates, every page, every key type).
pub fn all_certificates(ctx: &Ctx<'_>) -> Result<Vec<Value>, ApiError> {
    let svc = ctx.service::<AcmService>()?;
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let mut input = json!({"Includes": {"keyTypes": KEY_TYPES}, "MaxItems": 1000});
        if let Some(t) = &token {
            input["NextToken"] = json!(t);
        }
        let page = svc
            .list_certificates(&ctx.region, &input)
            .map_err(ApiError::from_aws)?;
        out.extend(list(&page, "CertificateSummaryList"));
        match page.get("NextToken").and_then(Value::as_str) {
            Some(t) => token = Some(t.to_string()),
            None => return Ok(out),
        }
    }
}

/// `GET acm/certificates`: ListCertificates' summaries.
pub fn certificates(ctx: &Ctx<'_>) -> ApiResult {
    json_ok(&json!({ "certificates": all_certificates(ctx)? }))
}

/// `GET acm/certificates/{arn}`: DescribeCertificate's `Certificate`.
pub fn certificate(ctx: &Ctx<'_>, arn: &str) -> ApiResult {
    let out = ctx
        .service::<AcmService>()?
        .describe_certificate(&ctx.region, arn)
        .map_err(ApiError::from_aws)?;
    json_ok(&out["Certificate"])
}

/// `(name, id, kind)` of every REST and HTTP/WebSocket API of the region.
pub fn api_names(ctx: &Ctx<'_>) -> Result<Vec<(String, String, &'static str)>, ApiError> {
    let svc = ctx.service::<ApiGatewayService>()?;
    let named = |v: &Value, id: &str, kind: &'static str| {
        (
            v["name"].as_str().unwrap_or_default().to_string(),
            v[id].as_str().unwrap_or_default().to_string(),
            kind,
        )
    };
    let mut out: Vec<_> = list(&svc.get_rest_apis(&ctx.region), "item")
        .iter()
        .map(|v| named(v, "id", "REST"))
        .collect();
    out.extend(
        list(&svc.get_apis(&ctx.region), "items")
            .iter()
            .map(|v| named(v, "apiId", "HTTP")),
    );
    Ok(out)
}

/// `GET apigateway/apis`: GetRestApis' and (v2) GetApis' items.
pub fn apis(ctx: &Ctx<'_>) -> ApiResult {
    let svc = ctx.service::<ApiGatewayService>()?;
    json_ok(&json!({
        "rest_apis": list(&svc.get_rest_apis(&ctx.region), "item"),
        "apis": list(&svc.get_apis(&ctx.region), "items"),
    }))
}

/// `GET apigateway/apis/{id}`: a REST API with its resources (methods embedded), or an
/// HTTP/WebSocket API with its routes.
pub fn api(ctx: &Ctx<'_>, id: &str) -> ApiResult {
    let svc = ctx.service::<ApiGatewayService>()?;
    if let Ok(api) = svc.get_rest_api(&ctx.region, id) {
        let resources = svc
            .get_resources(&ctx.region, id, true)
            .map_err(ApiError::from_aws)?;
        return json_ok(&json!({
            "kind": "REST",
            "api": api,
            "resources": list(&resources, "item"),
        }));
    }
    let api = svc.get_api(&ctx.region, id).map_err(ApiError::from_aws)?;
    let routes = svc
        .get_routes(&ctx.region, id)
        .map_err(ApiError::from_aws)?;
    json_ok(&json!({
        "kind": api["protocolType"],
        "api": api,
        "routes": list(&routes, "items"),
    }))
}
