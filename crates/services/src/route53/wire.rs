//! The rest-xml adapter: the model routes a request to its operation and reads it into JSON;
//! this dispatches to the operations and has the model write the answer. Errors take Route
//! 53's `<ErrorResponse><Error><Type>Sender</Type>...` shape (the query protocol's).

use super::{Route53Service, model};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::StatusCode;
use serde_json::{Value, json};

const ERRORS: Protocol = Protocol::Query("https://route53.amazonaws.com/doc/2013-04-01/");

pub(super) fn handle(svc: &Route53Service, req: &AwsRequest) -> AwsResponse {
    match answer(svc, req) {
        Ok(r) => r,
        Err(e) => e.into_response(ERRORS, &req.request_id),
    }
}

fn answer(svc: &Route53Service, req: &AwsRequest) -> Result<AwsResponse, AwsError> {
    let m = model()?;
    let Some((op, labels)) = m.route(req) else {
        return Err(AwsError::new(
            StatusCode::NOT_IMPLEMENTED,
            "NotImplemented",
            format!(
                "cumulo: the Route 53 operation at {} {} is not implemented",
                req.method, req.raw_path
            ),
        ));
    };
    let input = m.decode(op, req, &labels)?;
    let out = dispatch(svc, op, &input)?;
    Ok(m.encode(op, &out))
}

fn s<'a>(input: &'a Value, key: &str) -> &'a str {
    input.get(key).and_then(Value::as_str).unwrap_or("")
}

fn dispatch(svc: &Route53Service, op: &str, input: &Value) -> Result<Value, AwsError> {
    Ok(match op {
        "CreateHostedZone" => svc.api_create_hosted_zone(input)?,
        "GetHostedZone" => svc.api_get_hosted_zone(s(input, "Id"))?,
        "DeleteHostedZone" => svc.api_delete_hosted_zone(s(input, "Id"))?,
        "UpdateHostedZoneComment" => svc.api_update_comment(input)?,
        "ListHostedZones" => svc.api_list_hosted_zones(input)?,
        "ListHostedZonesByName" => svc.api_list_hosted_zones_by_name(input)?,
        "ListHostedZonesByVPC" => svc.api_list_hosted_zones_by_vpc(input)?,
        "GetHostedZoneCount" => svc.api_hosted_zone_count(),
        "AssociateVPCWithHostedZone" => svc.api_vpc_association(input, true)?,
        "DisassociateVPCFromHostedZone" => svc.api_vpc_association(input, false)?,
        "ChangeResourceRecordSets" => svc.api_change_resource_record_sets(input)?,
        "ListResourceRecordSets" => svc.api_list_resource_record_sets(input)?,
        "GetChange" => svc.api_get_change(s(input, "Id"))?,
        "CreateHealthCheck" => svc.api_create_health_check(input)?,
        "GetHealthCheck" => svc.api_get_health_check(s(input, "HealthCheckId"))?,
        "UpdateHealthCheck" => svc.api_update_health_check(input)?,
        "DeleteHealthCheck" => {
            svc.delete_health_check(s(input, "HealthCheckId"))?;
            json!({})
        }
        "ListHealthChecks" => svc.api_list_health_checks(input)?,
        "GetHealthCheckCount" => svc.api_health_check_count(),
        "CreateQueryLoggingConfig" => svc.api_create_query_logging(input)?,
        "GetQueryLoggingConfig" => svc.api_get_query_logging(s(input, "Id"))?,
        "ListQueryLoggingConfigs" => svc.api_list_query_logging(input)?,
        "DeleteQueryLoggingConfig" => {
            svc.delete_query_logging(s(input, "Id"))?;
            json!({})
        }
        "ChangeTagsForResource" => svc.api_change_tags(input)?,
        "ListTagsForResource" => svc.api_list_tags(input)?,
        "ListTagsForResources" => svc.api_list_tags_many(input)?,
        other => return Err(AwsError::not_implemented("route53", other)),
    })
}
