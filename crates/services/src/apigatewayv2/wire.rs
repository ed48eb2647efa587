//! The REST-JSON adapter of the v2 control plane (`/v2/...` paths of botocore's
//! `apigatewayv2/2018-11-29`): 201 for Create*, 204 for Delete*.

use super::ops::{API_MAPPINGS, Children, Holder, INTEGRATION_RESPONSES, ROUTE_RESPONSES};
use crate::apigateway::ApiGatewayService;
use crate::apigateway::wire::{answer, body, segments};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::{Method, StatusCode};
use serde_json::{Value, json};

pub(crate) fn handle(svc: &ApiGatewayService, req: &AwsRequest) -> AwsResponse {
    match route(svc, req) {
        Ok(r) => r,
        Err(e) => e.into_response(Protocol::RestJson, &req.request_id),
    }
}

/// A child collection's paths: `/routes/{id}/routeresponses[/{id}]`,
/// `/integrations/{id}/integrationresponses[/{id}]` (`scope` the API's id) and
/// `/domainnames/{name}/apimappings[/{id}]`.
fn children<H: Holder>(
    svc: &ApiGatewayService,
    req: &AwsRequest,
    c: &Children<H>,
    method: &Method,
    scope: &str,
    parent: &str,
    rest: &[&str],
) -> Result<AwsResponse, AwsError> {
    let region = req.region.as_str();
    match (method, rest) {
        (&Method::POST, []) => Ok(answer(
            201,
            svc.create_child(c, region, scope, parent, &body(req)?)?,
        )),
        (&Method::GET, []) => Ok(answer(200, svc.get_children(c, region, scope, parent)?)),
        (&Method::GET, [id]) => Ok(answer(200, svc.get_child(c, region, scope, parent, id)?)),
        (&Method::PATCH, [id]) => Ok(answer(
            200,
            svc.update_child(c, region, scope, parent, id, &body(req)?)?,
        )),
        (&Method::DELETE, [id]) => svc
            .delete_child(c, region, scope, parent, id)
            .map(|()| AwsResponse::empty(StatusCode::NO_CONTENT)),
        _ => Err(AwsError::not_implemented(
            "apigateway",
            &format!("{} {}", req.method, req.raw_path),
        )),
    }
}

fn route(svc: &ApiGatewayService, req: &AwsRequest) -> Result<AwsResponse, AwsError> {
    let region = req.region.as_str();
    let segs = segments(&req.raw_path);
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let ok = |v: Value| Ok(answer(200, v));
    let created = |v: Value| Ok(answer(201, v));
    let gone = |r: Result<(), AwsError>| r.map(|()| AwsResponse::empty(StatusCode::NO_CONTENT));
    let host = req.host.as_str();
    match (&req.method, s.get(1..).unwrap_or(&[])) {
        (&Method::POST, ["apis"]) => created(svc.create_api(region, host, &body(req)?)?),
        (&Method::PUT, ["apis"]) => created(svc.import_api(region, host, None, &body(req)?)?),
        (&Method::GET, ["apis"]) => ok(svc.get_apis(region)),
        (&Method::GET, ["apis", id]) => ok(svc.get_api(region, id)?),
        (&Method::PATCH, ["apis", id]) => ok(svc.update_api(region, id, &body(req)?)?),
        (&Method::PUT, ["apis", id]) => {
            created(svc.import_api(region, host, Some(id), &body(req)?)?)
        }
        (&Method::DELETE, ["apis", id]) => gone(svc.delete_api(region, id)),
        (&Method::DELETE, ["apis", id, "cors"]) => gone(svc.delete_cors_configuration(region, id)),
        (&Method::POST, ["apis", id, "routes"]) => {
            created(svc.create_route(region, id, &body(req)?)?)
        }
        (&Method::GET, ["apis", id, "routes"]) => ok(svc.get_routes(region, id)?),
        (&Method::GET, ["apis", id, "routes", r]) => ok(svc.get_route(region, id, r)?),
        (&Method::PATCH, ["apis", id, "routes", r]) => {
            ok(svc.update_route(region, id, r, &body(req)?)?)
        }
        (&Method::DELETE, ["apis", id, "routes", r]) => gone(svc.delete_route(region, id, r)),
        (m, ["apis", id, "routes", r, "routeresponses", rest @ ..]) => {
            children(svc, req, &ROUTE_RESPONSES, m, id, r, rest)
        }
        (&Method::POST, ["apis", id, "integrations"]) => {
            created(svc.create_integration(region, id, &body(req)?)?)
        }
        (&Method::GET, ["apis", id, "integrations"]) => ok(svc.get_integrations(region, id)?),
        (&Method::GET, ["apis", id, "integrations", i]) => {
            ok(svc.get_integration_v2(region, id, i)?)
        }
        (&Method::PATCH, ["apis", id, "integrations", i]) => {
            ok(svc.update_integration_v2(region, id, i, &body(req)?)?)
        }
        (&Method::DELETE, ["apis", id, "integrations", i]) => {
            gone(svc.delete_integration_v2(region, id, i))
        }
        (
            m,
            [
                "apis",
                id,
                "integrations",
                i,
                "integrationresponses",
                rest @ ..,
            ],
        ) => children(svc, req, &INTEGRATION_RESPONSES, m, id, i, rest),
        (&Method::POST, ["apis", id, "stages"]) => {
            created(svc.create_stage_v2(region, id, &body(req)?)?)
        }
        (&Method::GET, ["apis", id, "stages"]) => ok(svc.get_stages_v2(region, id)?),
        (&Method::GET, ["apis", id, "stages", st]) => ok(svc.get_stage_v2(region, id, st)?),
        (&Method::PATCH, ["apis", id, "stages", st]) => {
            ok(svc.update_stage_v2(region, id, st, &body(req)?)?)
        }
        (&Method::DELETE, ["apis", id, "stages", st]) => gone(svc.delete_stage_v2(region, id, st)),
        (&Method::POST, ["apis", id, "deployments"]) => {
            created(svc.create_deployment_v2(region, id, &body(req)?)?)
        }
        (&Method::GET, ["apis", id, "deployments"]) => ok(svc.get_deployments_v2(region, id)?),
        (&Method::GET, ["apis", id, "deployments", d]) => ok(svc.get_deployment_v2(region, id, d)?),
        (&Method::DELETE, ["apis", id, "deployments", d]) => {
            gone(svc.delete_deployment_v2(region, id, d))
        }
        (&Method::POST, ["apis", id, "authorizers"]) => {
            created(svc.create_authorizer_v2(region, id, &body(req)?)?)
        }
        (&Method::GET, ["apis", id, "authorizers"]) => ok(svc.get_authorizers_v2(region, id)?),
        (&Method::GET, ["apis", id, "authorizers", a]) => ok(svc.get_authorizer_v2(region, id, a)?),
        (&Method::PATCH, ["apis", id, "authorizers", a]) => {
            ok(svc.update_authorizer_v2(region, id, a, &body(req)?)?)
        }
        (&Method::DELETE, ["apis", id, "authorizers", a]) => {
            gone(svc.delete_authorizer_v2(region, id, a))
        }
        (&Method::POST, ["domainnames"]) => {
            created(svc.create_domain_name_v2(region, &body(req)?)?)
        }
        (&Method::GET, ["domainnames"]) => ok(svc.get_domain_names_v2(region)),
        (&Method::GET, ["domainnames", n]) => ok(svc.get_domain_name_v2(region, n)?),
        (&Method::PATCH, ["domainnames", n]) => {
            ok(svc.update_domain_name_v2(region, n, &body(req)?)?)
        }
        (&Method::DELETE, ["domainnames", n]) => gone(svc.delete_domain_name_v2(region, n)),
        (m, ["domainnames", n, "apimappings", rest @ ..]) => {
            children(svc, req, &API_MAPPINGS, m, "", n, rest)
        }
        (&Method::GET, ["tags", arn]) => ok(json!({"tags": svc.tags_of(arn, true)?})),
        (&Method::POST, ["tags", arn]) => {
            let b = body(req)?;
            let tags = b
                .get("tags")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            svc.tag_resource(arn, &tags, true)?;
            Ok(answer(201, json!({})))
        }
        (&Method::DELETE, ["tags", arn]) => {
            let keys: Vec<String> = req
                .query
                .iter()
                .filter(|(k, _)| k == "tagKeys")
                .map(|(_, v)| v.clone())
                .collect();
            svc.untag_resource(arn, &keys, true)?;
            Ok(AwsResponse::empty(StatusCode::NO_CONTENT))
        }
        _ => Err(AwsError::not_implemented(
            "apigateway",
            &format!("{} {}", req.method, req.raw_path),
        )),
    }
}
