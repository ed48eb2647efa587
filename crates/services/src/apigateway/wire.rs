//! The REST-JSON adapter of the v1 control plane: routes the paths of botocore's
//! `apigateway/2015-07-09` model to the typed operations, with its status codes (201 for
//! Create*/Put*, 202 for Delete*).

use super::ApiGatewayService;
use super::patch::bad_request;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::{Method, StatusCode};
use serde_json::{Map, Value};

pub(super) fn handle(svc: &ApiGatewayService, req: &AwsRequest) -> AwsResponse {
    match route(svc, req) {
        Ok(r) => r,
        Err(e) => e.into_response(Protocol::RestJson, &req.request_id),
    }
}

pub(crate) fn answer(status: u16, v: Value) -> AwsResponse {
    AwsResponse::new(
        StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
        "application/json",
        v.to_string(),
    )
}

pub(crate) fn accepted() -> AwsResponse {
    AwsResponse::empty(StatusCode::ACCEPTED)
}

pub(crate) fn body(req: &AwsRequest) -> Result<Value, AwsError> {
    if req.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_slice::<Value>(&req.body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(AwsError::bad_request(
            "SerializationException",
            "The request body is not a JSON object.",
        )),
    }
}

/// The path's segments, each percent-decoded (an ARN label arrives with its `/` encoded).
pub(crate) fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect()
}

fn flag(req: &AwsRequest, name: &str) -> bool {
    req.query_param(name) == Some("true")
}

fn route(svc: &ApiGatewayService, req: &AwsRequest) -> Result<AwsResponse, AwsError> {
    let region = req.region.as_str();
    let segs = segments(&req.raw_path);
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let m = &req.method;
    let ok = |v: Value| Ok(answer(200, v));
    let created = |v: Value| Ok(answer(201, v));
    let done = |r: Result<(), AwsError>| r.map(|()| accepted());
    match (m, s.as_slice()) {
        (&Method::POST, ["restapis"]) if req.query_param("mode") == Some("import") => {
            created(svc.import_rest_api(region, &req.body, &req.query)?)
        }
        (&Method::POST, ["restapis"]) => created(svc.create_rest_api(region, &body(req)?)?),
        (&Method::GET, ["restapis"]) => ok(svc.get_rest_apis(region)),
        (&Method::GET, ["restapis", id]) => ok(svc.get_rest_api(region, id)?),
        (&Method::PATCH, ["restapis", id]) => ok(svc.update_rest_api(region, id, &body(req)?)?),
        (&Method::PUT, ["restapis", id]) => {
            let mode = req.query_param("mode").unwrap_or("merge");
            ok(svc.put_rest_api(region, id, &req.body, mode, &req.query)?)
        }
        (&Method::DELETE, ["restapis", id]) => done(svc.delete_rest_api(region, id)),
        (&Method::GET, ["restapis", id, "resources"]) => {
            let embed = req
                .query
                .iter()
                .any(|(k, v)| k == "embed" && v == "methods");
            ok(svc.get_resources(region, id, embed)?)
        }
        (&Method::GET, ["restapis", id, "resources", r]) => ok(svc.get_resource(region, id, r)?),
        (&Method::POST, ["restapis", id, "resources", parent]) => {
            created(svc.create_resource(region, id, parent, &body(req)?)?)
        }
        (&Method::PATCH, ["restapis", id, "resources", r]) => {
            ok(svc.update_resource(region, id, r, &body(req)?)?)
        }
        (&Method::DELETE, ["restapis", id, "resources", r]) => {
            done(svc.delete_resource(region, id, r))
        }
        (_, ["restapis", id, "resources", r, "methods", verb, rest @ ..]) => {
            method_routes(svc, req, region, id, r, verb, rest)
        }
        (&Method::POST, ["restapis", id, "deployments"]) => {
            created(svc.create_deployment(region, id, &body(req)?)?)
        }
        (&Method::GET, ["restapis", id, "deployments"]) => ok(svc.get_deployments(region, id)?),
        (&Method::GET, ["restapis", id, "deployments", d]) => {
            ok(svc.get_deployment(region, id, d)?)
        }
        (&Method::PATCH, ["restapis", id, "deployments", d]) => {
            ok(svc.update_deployment(region, id, d, &body(req)?)?)
        }
        (&Method::DELETE, ["restapis", id, "deployments", d]) => {
            done(svc.delete_deployment(region, id, d))
        }
        (&Method::POST, ["restapis", id, "stages"]) => {
            created(svc.create_stage(region, id, &body(req)?)?)
        }
        (&Method::GET, ["restapis", id, "stages"]) => ok(svc.get_stages(region, id)?),
        (&Method::GET, ["restapis", id, "stages", st]) => ok(svc.get_stage(region, id, st)?),
        (&Method::PATCH, ["restapis", id, "stages", st]) => {
            ok(svc.update_stage(region, id, st, &body(req)?)?)
        }
        (&Method::DELETE, ["restapis", id, "stages", st]) => done(svc.delete_stage(region, id, st)),
        (&Method::POST, ["restapis", id, "models"]) => {
            created(svc.create_model(region, id, &body(req)?)?)
        }
        (&Method::GET, ["restapis", id, "models"]) => ok(svc.get_models(region, id)?),
        (&Method::GET, ["restapis", id, "models", n]) => ok(svc.get_model(region, id, n)?),
        (&Method::PATCH, ["restapis", id, "models", n]) => {
            ok(svc.update_model(region, id, n, &body(req)?)?)
        }
        (&Method::DELETE, ["restapis", id, "models", n]) => done(svc.delete_model(region, id, n)),
        (&Method::POST, ["restapis", id, "requestvalidators"]) => {
            created(svc.create_request_validator(region, id, &body(req)?)?)
        }
        (&Method::GET, ["restapis", id, "requestvalidators"]) => {
            ok(svc.get_request_validators(region, id)?)
        }
        (&Method::GET, ["restapis", id, "requestvalidators", v]) => {
            ok(svc.get_request_validator(region, id, v)?)
        }
        (&Method::PATCH, ["restapis", id, "requestvalidators", v]) => {
            ok(svc.update_request_validator(region, id, v, &body(req)?)?)
        }
        (&Method::DELETE, ["restapis", id, "requestvalidators", v]) => {
            done(svc.delete_request_validator(region, id, v))
        }
        (&Method::POST, ["restapis", id, "authorizers"]) => {
            created(svc.create_authorizer(region, id, &body(req)?)?)
        }
        (&Method::GET, ["restapis", id, "authorizers"]) => ok(svc.get_authorizers(region, id)?),
        (&Method::GET, ["restapis", id, "authorizers", a]) => {
            ok(svc.get_authorizer(region, id, a)?)
        }
        (&Method::PATCH, ["restapis", id, "authorizers", a]) => {
            ok(svc.update_authorizer(region, id, a, &body(req)?)?)
        }
        (&Method::DELETE, ["restapis", id, "authorizers", a]) => {
            done(svc.delete_authorizer(region, id, a))
        }
        (&Method::GET, ["restapis", id, "gatewayresponses"]) => {
            ok(svc.get_gateway_responses(region, id)?)
        }
        (&Method::PUT, ["restapis", id, "gatewayresponses", t]) => {
            created(svc.put_gateway_response(region, id, t, &body(req)?)?)
        }
        (&Method::GET, ["restapis", id, "gatewayresponses", t]) => {
            ok(svc.get_gateway_response(region, id, t)?)
        }
        (&Method::PATCH, ["restapis", id, "gatewayresponses", t]) => {
            ok(svc.update_gateway_response(region, id, t, &body(req)?)?)
        }
        (&Method::DELETE, ["restapis", id, "gatewayresponses", t]) => {
            done(svc.delete_gateway_response(region, id, t))
        }
        (&Method::GET, ["restapis", id, "stages", st, "exports", kind]) => {
            let doc = svc.get_export(region, id, st, kind, &req.host)?;
            let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            Ok(
                AwsResponse::new(StatusCode::OK, "application/json", text).with_header(
                    "content-disposition",
                    &format!("attachment; filename=\"{kind}.json\""),
                ),
            )
        }
        (&Method::POST, ["apikeys"]) => created(svc.create_api_key(region, &body(req)?)?),
        (&Method::GET, ["apikeys"]) => {
            ok(svc.get_api_keys(region, req.query_param("name"), flag(req, "includeValues")))
        }
        (&Method::GET, ["apikeys", id]) => {
            ok(svc.get_api_key(region, id, flag(req, "includeValue"))?)
        }
        (&Method::PATCH, ["apikeys", id]) => ok(svc.update_api_key(region, id, &body(req)?)?),
        (&Method::DELETE, ["apikeys", id]) => done(svc.delete_api_key(region, id)),
        (&Method::POST, ["usageplans"]) => created(svc.create_usage_plan(region, &body(req)?)?),
        (&Method::GET, ["usageplans"]) => ok(svc.get_usage_plans(region, req.query_param("keyId"))),
        (&Method::GET, ["usageplans", id]) => ok(svc.get_usage_plan(region, id)?),
        (&Method::PATCH, ["usageplans", id]) => {
            ok(svc.update_usage_plan(region, id, &body(req)?)?)
        }
        (&Method::DELETE, ["usageplans", id]) => done(svc.delete_usage_plan(region, id)),
        (&Method::POST, ["usageplans", id, "keys"]) => {
            created(svc.create_usage_plan_key(region, id, &body(req)?)?)
        }
        (&Method::GET, ["usageplans", id, "keys"]) => ok(svc.get_usage_plan_keys(region, id)?),
        (&Method::GET, ["usageplans", id, "keys", k]) => ok(svc.get_usage_plan_key(region, id, k)?),
        (&Method::DELETE, ["usageplans", id, "keys", k]) => {
            done(svc.delete_usage_plan_key(region, id, k))
        }
        (&Method::POST, ["domainnames"]) => created(svc.create_domain_name(region, &body(req)?)?),
        (&Method::GET, ["domainnames"]) => ok(svc.get_domain_names(region)),
        (&Method::GET, ["domainnames", n]) => ok(svc.get_domain_name(region, n)?),
        (&Method::PATCH, ["domainnames", n]) => {
            ok(svc.update_domain_name(region, n, &body(req)?)?)
        }
        (&Method::DELETE, ["domainnames", n]) => done(svc.delete_domain_name(region, n)),
        (&Method::POST, ["domainnames", n, "basepathmappings"]) => {
            created(svc.create_base_path_mapping(region, n, &body(req)?)?)
        }
        (&Method::GET, ["domainnames", n, "basepathmappings"]) => {
            ok(svc.get_base_path_mappings(region, n)?)
        }
        (&Method::GET, ["domainnames", n, "basepathmappings", b]) => {
            ok(svc.get_base_path_mapping(region, n, b)?)
        }
        (&Method::PATCH, ["domainnames", n, "basepathmappings", b]) => {
            ok(svc.update_base_path_mapping(region, n, b, &body(req)?)?)
        }
        (&Method::DELETE, ["domainnames", n, "basepathmappings", b]) => {
            done(svc.delete_base_path_mapping(region, n, b))
        }
        (&Method::GET, ["account"]) => ok(svc.get_account(region)),
        (&Method::PATCH, ["account"]) => ok(svc.update_account(region, &body(req)?)?),
        (&Method::GET, ["tags", arn]) => ok(serde_json::json!({"tags": svc.tags_of(arn, false)?})),
        (&Method::PUT, ["tags", arn]) => {
            let b = body(req)?;
            let tags = b
                .get("tags")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            svc.tag_resource(arn, &tags, false)?;
            Ok(AwsResponse::empty(StatusCode::NO_CONTENT))
        }
        (&Method::DELETE, ["tags", arn]) => {
            let keys: Vec<String> = req
                .query
                .iter()
                .filter(|(k, _)| k == "tagKeys")
                .map(|(_, v)| v.clone())
                .collect();
            svc.untag_resource(arn, &keys, false)?;
            Ok(AwsResponse::empty(StatusCode::NO_CONTENT))
        }
        _ => Err(AwsError::not_implemented(
            "apigateway",
            &format!("{} {}", req.method, req.raw_path),
        )),
    }
}

fn method_routes(
    svc: &ApiGatewayService,
    req: &AwsRequest,
    region: &str,
    api: &str,
    res: &str,
    verb: &str,
    rest: &[&str],
) -> Result<AwsResponse, AwsError> {
    let m = &req.method;
    let ok = |v: Value| Ok(answer(200, v));
    let created = |v: Value| Ok(answer(201, v));
    let done = |r: Result<(), AwsError>| r.map(|()| accepted());
    match (m, rest) {
        (&Method::PUT, []) => created(svc.put_method(region, api, res, verb, &body(req)?)?),
        (&Method::GET, []) => ok(svc.get_method(region, api, res, verb)?),
        (&Method::PATCH, []) => ok(svc.update_method(region, api, res, verb, &body(req)?)?),
        (&Method::DELETE, []) => done(svc.delete_method(region, api, res, verb)),
        (&Method::PUT, ["responses", code]) => {
            created(svc.put_method_response(region, api, res, verb, code, &body(req)?)?)
        }
        (&Method::GET, ["responses", code]) => {
            ok(svc.get_method_response(region, api, res, verb, code)?)
        }
        (&Method::PATCH, ["responses", code]) => {
            ok(svc.update_method_response(region, api, res, verb, code, &body(req)?)?)
        }
        (&Method::DELETE, ["responses", code]) => {
            done(svc.delete_method_response(region, api, res, verb, code))
        }
        (&Method::PUT, ["integration"]) => {
            created(svc.put_integration(region, api, res, verb, &body(req)?)?)
        }
        (&Method::GET, ["integration"]) => ok(svc.get_integration(region, api, res, verb)?),
        (&Method::PATCH, ["integration"]) => {
            ok(svc.update_integration(region, api, res, verb, &body(req)?)?)
        }
        (&Method::DELETE, ["integration"]) => done(svc.delete_integration(region, api, res, verb)),
        (&Method::PUT, ["integration", "responses", code]) => {
            created(svc.put_integration_response(region, api, res, verb, code, &body(req)?)?)
        }
        (&Method::GET, ["integration", "responses", code]) => {
            ok(svc.get_integration_response(region, api, res, verb, code)?)
        }
        (&Method::PATCH, ["integration", "responses", code]) => {
            ok(svc.update_integration_response(region, api, res, verb, code, &body(req)?)?)
        }
        (&Method::DELETE, ["integration", "responses", code]) => {
            done(svc.delete_integration_response(region, api, res, verb, code))
        }
        _ => Err(bad_request(format!(
            "cumulo: {} {} is not an API Gateway operation",
            req.method, req.raw_path
        ))),
    }
}
