//! The awsJson1_0 adapter: `AppRunner.<Operation>` bodies handed to the operations, which
//! answer in the API's member names (timestamps in epoch seconds).

use super::AppRunnerService;
use super::operations::OPERATIONS;
use super::state::ConfigKind;
use crate::json_body;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use serde_json::Value;

pub fn handle(svc: &AppRunnerService, req: &AwsRequest) -> AwsResponse {
    let op = req.target_operation().unwrap_or("");
    let result =
        json_body::parse(req).and_then(|m| dispatch(svc, &req.region, op, &Value::Object(m)));
    match result {
        Ok(v) => AwsResponse::json("application/x-amz-json-1.0", &v)
            .with_header("x-amzn-requestid", &req.request_id),
        Err(e) => e.into_response(Protocol::Json10, &req.request_id),
    }
}

fn dispatch(
    svc: &AppRunnerService,
    region: &str,
    op: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    use ConfigKind::{AutoScaling, Observability};
    match op {
        "CreateService" => svc.create_service(region, input),
        "DescribeService" => svc.describe_service(region, input),
        "ListServices" => svc.list_services(region, input),
        "UpdateService" => svc.update_service(region, input),
        "DeleteService" => svc.delete_service(region, input),
        "PauseService" => svc.pause_service(region, input, true),
        "ResumeService" => svc.pause_service(region, input, false),
        "StartDeployment" => svc.start_deployment(region, input),
        "ListOperations" => svc.list_operations(region, input),
        "CreateVpcConnector" => svc.create_vpc_connector(region, input),
        "DescribeVpcConnector" => svc.describe_vpc_connector(region, input),
        "ListVpcConnectors" => svc.list_vpc_connectors(region, input),
        "DeleteVpcConnector" => svc.delete_vpc_connector(region, input),
        "CreateVpcIngressConnection" => svc.create_vpc_ingress_connection(region, input),
        "DescribeVpcIngressConnection" => svc.describe_vpc_ingress_connection(region, input),
        "ListVpcIngressConnections" => svc.list_vpc_ingress_connections(region, input),
        "UpdateVpcIngressConnection" => svc.update_vpc_ingress_connection(region, input),
        "DeleteVpcIngressConnection" => svc.delete_vpc_ingress_connection(region, input),
        "CreateAutoScalingConfiguration" => svc.create_config(region, AutoScaling, input),
        "DescribeAutoScalingConfiguration" => svc.describe_config(region, AutoScaling, input),
        "ListAutoScalingConfigurations" => svc.list_configs(region, AutoScaling, input),
        "DeleteAutoScalingConfiguration" => svc.delete_config(region, AutoScaling, input),
        "CreateObservabilityConfiguration" => svc.create_config(region, Observability, input),
        "DescribeObservabilityConfiguration" => svc.describe_config(region, Observability, input),
        "ListObservabilityConfigurations" => svc.list_configs(region, Observability, input),
        "DeleteObservabilityConfiguration" => svc.delete_config(region, Observability, input),
        "AssociateCustomDomain" => svc.associate_custom_domain(region, input),
        "DescribeCustomDomains" => svc.describe_custom_domains(region, input),
        "DisassociateCustomDomain" => svc.disassociate_custom_domain(region, input),
        "TagResource" => svc.tag_resource(region, input),
        "UntagResource" => svc.untag_resource(region, input),
        "ListTagsForResource" => svc.list_tags_for_resource(region, input),
        "" => Err(AwsError::bad_request(
            "MissingAction",
            "Missing X-Amz-Target header naming the operation",
        )),
        other if OPERATIONS.contains(&other) => Err(AwsError::not_implemented("apprunner", other)),
        other => Err(AwsError::bad_request(
            "UnknownOperationException",
            format!("Unknown operation {other}"),
        )),
    }
}
