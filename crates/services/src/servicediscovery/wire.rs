//! The awsJson1_1 adapter: decodes `Route53AutoNaming_v20170314.<Operation>` bodies into typed
//! calls and encodes results with the API's (PascalCase) member names.

use super::ServiceDiscoveryService;
use super::operations::OPERATIONS;
use super::ops::{Filter, NamespaceInput, ServiceInput, invalid, tags_json};
use crate::json_body::{self, Body, null_member};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde_json::{Map, Value, json};

pub fn handle(svc: &ServiceDiscoveryService, req: &AwsRequest) -> AwsResponse {
    let op = req.target_operation().unwrap_or("");
    let result = json_body::parse(req).and_then(|m| dispatch(svc, &req.region, op, &m));
    json_body::respond(req, result)
}

fn missing(name: &str) -> AwsError {
    invalid(null_member(name))
}

fn structure(m: &Map<String, Value>, name: &str) -> Result<Option<Value>, AwsError> {
    match m.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(v.clone())),
        Some(_) => Err(AwsError::bad_request(
            "SerializationException",
            format!("Unexpected JSON type for member {name}"),
        )),
    }
}

fn filters(b: &Body<'_>) -> Result<Vec<Filter>, AwsError> {
    b.objects("Filters")?
        .iter()
        .map(|f| {
            Ok(Filter {
                name: f.str("Name")?,
                values: f.strings("Values")?,
                condition: f.opt_str("Condition")?.unwrap_or_else(|| "EQ".into()),
            })
        })
        .collect()
}

/// Paging by offset over a listed set.
fn page(items: Vec<Value>, b: &Body<'_>, member: &str) -> Result<Value, AwsError> {
    let max = b.opt_i64("MaxResults")?.unwrap_or(100).clamp(1, 100) as usize;
    let offset: usize = match b.opt_str("NextToken")? {
        None => 0,
        Some(t) => t.parse().map_err(|_| invalid("Invalid NextToken"))?,
    };
    let end = offset.saturating_add(max).min(items.len());
    let slice = items.get(offset.min(items.len())..end).unwrap_or(&[]);
    let mut out = json!({ member: slice });
    if end < items.len() {
        out["NextToken"] = json!(end.to_string());
    }
    Ok(out)
}

fn soa_ttl(m: &Map<String, Value>) -> Option<i64> {
    m.get("Properties")
        .and_then(|p| p.get("DnsProperties"))
        .and_then(|d| d.get("SOA"))
        .and_then(|s| s.get("TTL"))
        .and_then(Value::as_i64)
}

fn dispatch(
    svc: &ServiceDiscoveryService,
    region: &str,
    op: &str,
    m: &Map<String, Value>,
) -> Result<Value, AwsError> {
    let b = Body::new(m, missing);
    let tags = || b.tag_list("Tags", "Key", "Value");
    match op {
        "CreateHttpNamespace" | "CreatePrivateDnsNamespace" | "CreatePublicDnsNamespace" => {
            let kind = match op {
                "CreateHttpNamespace" => "HTTP",
                "CreatePrivateDnsNamespace" => "DNS_PRIVATE",
                _ => "DNS_PUBLIC",
            };
            let input = NamespaceInput {
                kind: kind.into(),
                name: b.str("Name")?,
                description: b.opt_str("Description")?,
                creator_request_id: b.opt_str("CreatorRequestId")?,
                vpc: if kind == "DNS_PRIVATE" {
                    Some(b.str("Vpc")?)
                } else {
                    None
                },
                soa_ttl: soa_ttl(m),
                tags: tags()?,
            };
            let (operation, _) = svc.create_namespace(region, input)?;
            Ok(json!({"OperationId": operation}))
        }
        "GetNamespace" => Ok(json!({"Namespace": svc.get_namespace(region, &b.str("Id")?)?})),
        "ListNamespaces" => page(
            svc.list_namespaces(region, &filters(&b)?)?,
            &b,
            "Namespaces",
        ),
        "DeleteNamespace" => {
            Ok(json!({"OperationId": svc.delete_namespace(region, &b.str("Id")?)?}))
        }
        "UpdateHttpNamespace" | "UpdatePrivateDnsNamespace" | "UpdatePublicDnsNamespace" => {
            let change = b.object("Namespace")?.ok_or_else(|| missing("Namespace"))?;
            let change_map = m
                .get("Namespace")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let op = svc.update_namespace(
                region,
                &b.str("Id")?,
                change.opt_str("Description")?,
                soa_ttl(&change_map),
            )?;
            Ok(json!({"OperationId": op}))
        }
        "GetOperation" => {
            Ok(json!({"Operation": svc.get_operation(region, &b.str("OperationId")?)?}))
        }
        "ListOperations" => page(
            svc.list_operations(region, &filters(&b)?)?,
            &b,
            "Operations",
        ),
        "CreateService" => {
            let input = ServiceInput {
                name: b.str("Name")?,
                namespace_id: b.opt_str("NamespaceId")?,
                description: b.opt_str("Description")?,
                dns_config: structure(m, "DnsConfig")?,
                health_check_config: structure(m, "HealthCheckConfig")?,
                health_check_custom_config: structure(m, "HealthCheckCustomConfig")?,
                creator_request_id: b.opt_str("CreatorRequestId")?,
                kind: b.opt_str("Type")?,
                tags: tags()?,
            };
            Ok(json!({"Service": svc.create_service(region, input)?}))
        }
        "GetService" => Ok(json!({"Service": svc.get_service(region, &b.str("Id")?)?})),
        "ListServices" => page(svc.list_services(region, &filters(&b)?)?, &b, "Services"),
        "UpdateService" => {
            let change = m
                .get("Service")
                .and_then(Value::as_object)
                .cloned()
                .ok_or_else(|| missing("Service"))?;
            let op = svc.update_service(
                region,
                &b.str("Id")?,
                change
                    .get("Description")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                structure(&change, "DnsConfig")?,
                structure(&change, "HealthCheckConfig")?,
            )?;
            Ok(json!({"OperationId": op}))
        }
        "DeleteService" => {
            svc.delete_service(region, &b.str("Id")?)?;
            Ok(json!({}))
        }
        "RegisterInstance" => {
            let attributes = b.string_map("Attributes")?;
            if !b.has("Attributes") {
                return Err(missing("Attributes"));
            }
            let op = svc.register_instance(
                region,
                &b.str("ServiceId")?,
                &b.str("InstanceId")?,
                b.opt_str("CreatorRequestId")?,
                attributes,
            )?;
            Ok(json!({"OperationId": op}))
        }
        "DeregisterInstance" => Ok(json!({"OperationId": svc.deregister_instance(
            region,
            &b.str("ServiceId")?,
            &b.str("InstanceId")?,
        )?})),
        "GetInstance" => Ok(json!({"Instance": svc.get_instance(
            region,
            &b.str("ServiceId")?,
            &b.str("InstanceId")?,
        )?})),
        "ListInstances" => {
            let items = svc.list_instances(region, &b.str("ServiceId")?)?;
            let mut out = page(items, &b, "Instances")?;
            out["ResourceOwner"] = json!(svc.account_id);
            Ok(out)
        }
        "DiscoverInstances" => {
            let max = b.opt_i64("MaxResults")?.unwrap_or(100).clamp(1, 1000) as usize;
            let health = b.opt_str("HealthStatus")?;
            let (instances, revision) = svc.discover_instances(
                region,
                &b.str("NamespaceName")?,
                &b.str("ServiceName")?,
                &b.string_map("QueryParameters")?,
                health.as_deref(),
                max,
            )?;
            Ok(json!({"Instances": instances, "InstancesRevision": revision}))
        }
        "GetInstancesHealthStatus" => {
            let status =
                svc.instances_health(region, &b.str("ServiceId")?, &b.strings("Instances")?)?;
            Ok(json!({"Status": status}))
        }
        "UpdateInstanceCustomHealthStatus" => {
            svc.update_instance_health(
                region,
                &b.str("ServiceId")?,
                &b.str("InstanceId")?,
                &b.str("Status")?,
            )?;
            Ok(json!({}))
        }
        "TagResource" => {
            svc.tag_resource(region, &b.str("ResourceARN")?, tags()?)?;
            Ok(json!({}))
        }
        "UntagResource" => {
            svc.untag_resource(region, &b.str("ResourceARN")?, &b.strings("TagKeys")?)?;
            Ok(json!({}))
        }
        "ListTagsForResource" => {
            let tags = svc.list_tags(region, &b.str("ResourceARN")?)?;
            Ok(json!({"Tags": tags_json(&tags)}))
        }
        "" => Err(AwsError::bad_request(
            "MissingAction",
            "Missing X-Amz-Target header naming the operation",
        )),
        other if OPERATIONS.contains(&other) => {
            Err(AwsError::not_implemented("servicediscovery", other))
        }
        other => Err(AwsError::bad_request(
            "UnknownOperationException",
            format!("Unknown operation {other}"),
        )),
    }
}
