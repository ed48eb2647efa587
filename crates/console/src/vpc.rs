//! The VPC map: the region's VPCs, each with its subnets and route tables (which subnet each
//! table serves and where its routes go), through EC2's typed `network_map`.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, json_ok};
use cumulo_services::ec2::Ec2Service;
use serde_json::{Value, json};

fn map(ctx: &Ctx<'_>) -> Result<Value, ApiError> {
    ctx.service::<Ec2Service>()?
        .network_map(&ctx.region)
        .map_err(ApiError::from_aws)
}

/// `(id, name, vpc id)` of every VPC and subnet of the region, for the search: the name is the
/// Name tag, or the id where there is none.
pub fn network_ids(ctx: &Ctx<'_>) -> Result<Vec<(String, String, String)>, ApiError> {
    let m = map(ctx)?;
    let name = |v: &Value| {
        v["Tags"]
            .as_array()
            .and_then(|t| t.iter().find(|t| t["Key"] == "Name"))
            .and_then(|t| t["Value"].as_str())
            .filter(|n| !n.is_empty())
            .or(v["SubnetId"].as_str())
            .or(v["VpcId"].as_str())
            .unwrap_or_default()
            .to_string()
    };
    let mut out = Vec::new();
    for v in m["Vpcs"].as_array().into_iter().flatten() {
        let vpc = v["VpcId"].as_str().unwrap_or_default().to_string();
        out.push((vpc.clone(), name(v), vpc.clone()));
        for s in v["Subnets"].as_array().into_iter().flatten() {
            let id = s["SubnetId"].as_str().unwrap_or_default().to_string();
            out.push((id, name(s), vpc.clone()));
        }
    }
    Ok(out)
}

/// `GET ec2/vpcs`: every VPC with its subnets and route tables.
pub fn vpcs(ctx: &Ctx<'_>) -> ApiResult {
    json_ok(&map(ctx)?)
}

/// `GET ec2/vpcs/{id}`: one VPC with its subnets and route tables.
pub fn vpc(ctx: &Ctx<'_>, id: &str) -> ApiResult {
    let m = map(ctx)?;
    let found = m["Vpcs"]
        .as_array()
        .and_then(|l| l.iter().find(|v| v["VpcId"] == id))
        .cloned()
        .ok_or_else(|| {
            ApiError::new(
                http::StatusCode::BAD_REQUEST,
                "InvalidVpcID.NotFound",
                format!("The vpc ID '{id}' does not exist"),
            )
        })?;
    json_ok(&json!({ "vpc": found }))
}

fn security_groups_of(ctx: &Ctx<'_>) -> Result<Vec<Value>, ApiError> {
    let out = ctx
        .service::<Ec2Service>()?
        .security_groups(&ctx.region)
        .map_err(ApiError::from_aws)?;
    Ok(out["SecurityGroups"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// `(id, name, id)` of every security group of the region, for the search.
pub fn security_group_ids(ctx: &Ctx<'_>) -> Result<Vec<(String, String)>, ApiError> {
    Ok(security_groups_of(ctx)?
        .iter()
        .map(|g| {
            let text = |k: &str| g[k].as_str().unwrap_or_default().to_string();
            (text("GroupName"), text("GroupId"))
        })
        .collect())
}

/// `GET ec2/securitygroups[?vpc=]`: the security groups (of one VPC), each with its rules.
pub fn security_groups(ctx: &Ctx<'_>) -> ApiResult {
    let vpc = crate::web::Query::of(ctx.req)
        .get("vpc")
        .filter(|v| !v.is_empty())
        .map(str::to_string);
    let groups: Vec<Value> = security_groups_of(ctx)?
        .into_iter()
        .filter(|g| vpc.as_deref().is_none_or(|v| g["VpcId"] == v))
        .collect();
    json_ok(&json!({ "security_groups": groups }))
}

/// `GET ec2/securitygroups/{id}`: one group with its rules and the groups whose rules
/// reference it (`referenced_by`).
pub fn security_group(ctx: &Ctx<'_>, id: &str) -> ApiResult {
    let all = security_groups_of(ctx)?;
    let group = all
        .iter()
        .find(|g| g["GroupId"] == id)
        .cloned()
        .ok_or_else(|| {
            ApiError::new(
                http::StatusCode::BAD_REQUEST,
                "InvalidGroup.NotFound",
                format!("The security group '{id}' does not exist"),
            )
        })?;
    let referenced_by: Vec<&Value> = all
        .iter()
        .filter(|g| {
            g["GroupId"] != id
                && g["SecurityGroupRules"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|r| r["ReferencedGroupInfo"]["GroupId"] == id)
        })
        .map(|g| &g["GroupId"])
        .collect();
    json_ok(&json!({ "security_group": group, "referenced_by": referenced_by }))
}
