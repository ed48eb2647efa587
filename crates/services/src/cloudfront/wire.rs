//! The rest-xml adapter: the model routes a request to its operation and reads it into JSON;
//! this dispatches to the typed operations and has the model write the answer.

use super::ops::{
    ORIGIN_ACCESS_CONTROL, ORIGIN_ACCESS_IDENTITY, POLICIES, config_with_tags, object_or_empty,
};
use super::{CloudFrontService, model};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::StatusCode;
use serde_json::{Value, json};

pub(super) fn handle(svc: &CloudFrontService, req: &AwsRequest) -> AwsResponse {
    match answer(svc, req) {
        Ok(r) => r,
        Err(e) => e.into_response(Protocol::RestXml, &req.request_id),
    }
}

fn answer(svc: &CloudFrontService, req: &AwsRequest) -> Result<AwsResponse, AwsError> {
    let m = model()?;
    let Some((op, labels)) = m.route(req) else {
        return Err(AwsError::new(
            StatusCode::NOT_IMPLEMENTED,
            "NotImplemented",
            format!(
                "cumulo: the CloudFront operation at {} {} is not implemented",
                req.method, req.raw_path
            ),
        ));
    };
    let input = m.decode(op, req, &labels)?;
    let out = dispatch(svc, op, &input)?;
    let mut resp = m.encode(op, &out);
    if op == "UpdateFunction"
        && let Some(e) = out.get("ETag").and_then(Value::as_str)
    {
        // botocore's model names this header `ETtag`; AWS sends ETag.
        resp.set_header("ETag", e);
    }
    Ok(resp)
}

fn id(input: &Value) -> &str {
    input.get("Id").and_then(Value::as_str).unwrap_or("")
}

fn dispatch(svc: &CloudFrontService, op: &str, input: &Value) -> Result<Value, AwsError> {
    let empty = json!({});
    // `CachePolicy` and its list operation's `CachePolicies` share `CachePolic`.
    let policy = |name: &str| {
        POLICIES
            .iter()
            .find(|k| name.contains(&k.object[..k.object.len() - 1]))
    };
    Ok(match op {
        "CreateDistribution" => svc.create_distribution(
            &object_or_empty(input.get("DistributionConfig")),
            Vec::new(),
        )?,
        "CreateDistributionWithTags" => {
            let (cfg, tags) = config_with_tags(input)?;
            svc.create_distribution(&cfg, tags)?
        }
        "GetDistribution" => svc.get_distribution(id(input))?,
        "GetDistributionConfig" => svc.get_distribution_config(id(input))?,
        "UpdateDistribution" => svc.update_distribution(input)?,
        "DeleteDistribution" => {
            svc.delete_distribution(input)?;
            empty
        }
        "ListDistributions" => svc.list_distributions(input)?,
        "CreateInvalidation" => svc.create_invalidation(input)?,
        "GetInvalidation" => svc.get_invalidation(input)?,
        "ListInvalidations" => svc.list_invalidations(input)?,
        "TagResource" => {
            let arn = input.get("Resource").and_then(Value::as_str).unwrap_or("");
            svc.tag_resource(arn, &object_or_empty(input.get("Tags")))?;
            empty
        }
        "UntagResource" => {
            let arn = input.get("Resource").and_then(Value::as_str).unwrap_or("");
            svc.untag_resource(arn, &object_or_empty(input.get("TagKeys")))?;
            empty
        }
        "ListTagsForResource" => {
            svc.list_tags_for_resource(input.get("Resource").and_then(Value::as_str).unwrap_or(""))?
        }
        "CreateFunction" => svc.create_function(input)?,
        "DescribeFunction" => svc.describe_function(input)?,
        "GetFunction" => svc.get_function(input)?,
        "UpdateFunction" => svc.update_function(input)?,
        "PublishFunction" => svc.publish_function(input)?,
        "DeleteFunction" => {
            svc.delete_function(input)?;
            empty
        }
        "ListFunctions" => svc.list_functions(input)?,
        _ => {
            let kind = if op.contains("OriginAccessControl") {
                &ORIGIN_ACCESS_CONTROL
            } else if op.contains("OriginAccessIdentit") {
                &ORIGIN_ACCESS_IDENTITY
            } else {
                policy(op).ok_or_else(|| AwsError::not_implemented("CloudFront", op))?
            };
            if op.starts_with("Create") {
                svc.create_configured(kind, input)?
            } else if op.starts_with("Update") {
                svc.update_configured(kind, input)?
            } else if op.starts_with("Delete") {
                svc.delete_configured(kind, input)?;
                empty
            } else if op.starts_with("List") {
                svc.list_configured(kind, input)?
            } else if op.ends_with("Config") {
                svc.get_configured_config(kind, id(input))?
            } else {
                svc.get_configured(kind, id(input))?
            }
        }
    })
}
