//! Typed Cloud Map operations, answering in the API's shape. Changes that AWS makes
//! asynchronously (namespaces, instances, service updates) are applied at once and answered
//! with an OperationId whose operation is SUBMITTED for a moment and then SUCCESS.

use super::ServiceDiscoveryService;
use super::state::{
    Instance, NAMESPACE, Namespace, OPERATION, Operation, Region, SERVICE, Service,
};
use cumulo_wire::AwsError;
use rand::Rng;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Seconds an operation stays SUBMITTED before it is SUCCESS.
const OPERATION_S: f64 = 0.1;

pub fn now_s() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

pub fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::bad_request(code, message)
}

pub fn invalid(message: impl Into<String>) -> AwsError {
    err("InvalidInput", message)
}

fn namespace_not_found(id: &str) -> AwsError {
    err("NamespaceNotFound", format!("Namespace not found: {id}"))
}

fn service_not_found(id: &str) -> AwsError {
    err("ServiceNotFound", format!("Service not found: {id}"))
}

fn lower_alnum(n: usize) -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    (0..n)
        .map(|_| CHARS[rng.random_range(0..CHARS.len())] as char)
        .collect()
}

fn hosted_zone_id() -> String {
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    let tail: String = (0..20)
        .map(|_| CHARS[rng.random_range(0..CHARS.len())] as char)
        .collect();
    format!("Z{tail}")
}

/// The input of the three CreateXNamespace operations.
#[derive(Debug, Clone, Default)]
pub struct NamespaceInput {
    /// DNS_PRIVATE, DNS_PUBLIC or HTTP.
    pub kind: String,
    pub name: String,
    pub description: Option<String>,
    pub creator_request_id: Option<String>,
    pub vpc: Option<String>,
    pub soa_ttl: Option<i64>,
    pub tags: Vec<(String, String)>,
}

/// The input of CreateService.
#[derive(Debug, Clone, Default)]
pub struct ServiceInput {
    pub name: String,
    pub namespace_id: Option<String>,
    pub description: Option<String>,
    pub dns_config: Option<Value>,
    pub health_check_config: Option<Value>,
    pub health_check_custom_config: Option<Value>,
    pub creator_request_id: Option<String>,
    pub kind: Option<String>,
    pub tags: Vec<(String, String)>,
}

fn new_operation(r: &mut Region, kind: &str, targets: Vec<(&str, &str)>, now: f64) -> String {
    let id = format!("{}-{}", lower_alnum(32), lower_alnum(8));
    r.operations.insert(
        id.clone(),
        Operation {
            id: id.clone(),
            kind: kind.to_string(),
            created_at: now,
            targets: targets
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        },
    );
    r.touch(OPERATION, &id);
    id
}

fn operation_status(op: &Operation, now: f64) -> &'static str {
    if now - op.created_at >= OPERATION_S {
        "SUCCESS"
    } else {
        "SUBMITTED"
    }
}

pub fn tags_json(tags: &[(String, String)]) -> Value {
    Value::Array(
        tags.iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect(),
    )
}

/// Whether a filter `{Name, Values, Condition}` admits a value.
fn admits(values: &[String], condition: &str, value: &str) -> bool {
    match condition {
        "BEGINS_WITH" => values.iter().any(|v| value.starts_with(v.as_str())),
        _ => values.iter().any(|v| v == value),
    }
}

/// A filter as the wire gives it.
#[derive(Debug, Clone)]
pub struct Filter {
    pub name: String,
    pub values: Vec<String>,
    pub condition: String,
}

impl ServiceDiscoveryService {
    fn namespace_json(&self, region: &str, r: &Region, ns: &Namespace, full: bool) -> Value {
        let mut props = json!({});
        if ns.kind == "HTTP" {
            props["HttpProperties"] = json!({"HttpName": ns.name});
        } else {
            let mut dns = json!({"HostedZoneId": ns.hosted_zone_id});
            if let Some(ttl) = ns.soa_ttl {
                dns["SOA"] = json!({"TTL": ttl});
            }
            props["DnsProperties"] = dns;
            props["HttpProperties"] = json!({"HttpName": ns.name});
        }
        let mut v = json!({
            "Id": ns.id,
            "Arn": self.namespace_arn(region, &ns.id),
            "ResourceOwner": self.account_id,
            "Name": ns.name,
            "Type": ns.kind,
            "ServiceCount": r.services.values().filter(|s| s.namespace_id == ns.id).count(),
            "Properties": props,
            "CreateDate": ns.created_at,
        });
        if let Some(d) = &ns.description {
            v["Description"] = json!(d);
        }
        if full && let Some(c) = &ns.creator_request_id {
            v["CreatorRequestId"] = json!(c);
        }
        v
    }

    fn service_json(&self, region: &str, s: &Service, full: bool) -> Value {
        let mut v = json!({
            "Id": s.id,
            "Arn": self.service_arn(region, &s.id),
            "ResourceOwner": self.account_id,
            "CreatedByAccount": self.account_id,
            "Name": s.name,
            "Type": s.kind,
            "InstanceCount": s.instances.len(),
            "CreateDate": s.created_at,
        });
        if full {
            v["NamespaceId"] = json!(s.namespace_id);
            if let Some(c) = &s.creator_request_id {
                v["CreatorRequestId"] = json!(c);
            }
        }
        for (key, value) in [
            ("DnsConfig", &s.dns_config),
            ("HealthCheckConfig", &s.health_check_config),
            ("HealthCheckCustomConfig", &s.health_check_custom_config),
        ] {
            if let Some(x) = value {
                v[key] = x.clone();
            }
        }
        if let Some(d) = &s.description {
            v["Description"] = json!(d);
        }
        v
    }

    /// CreateHttpNamespace / CreatePrivateDnsNamespace / CreatePublicDnsNamespace: the
    /// OperationId (and the namespace's id, for providers).
    pub fn create_namespace(
        &self,
        region: &str,
        input: NamespaceInput,
    ) -> Result<(String, String), AwsError> {
        if input.name.is_empty() || input.name.len() > 1024 {
            return Err(invalid(
                "Namespace name must be between 1 and 1024 characters.",
            ));
        }
        if input.kind == "DNS_PRIVATE" && input.vpc.as_deref().is_none_or(str::is_empty) {
            return Err(invalid(
                "1 validation error detected: Value null at 'vpc' failed to satisfy constraint: Member must not be null",
            ));
        }
        let zone = self.create_zone(region, &input)?;
        let made = self.mutate(region, |r, now| {
            if let Some(existing) = r.namespaces.values().find(|n| {
                n.name == input.name
                    && (n.kind == "HTTP" || input.kind == "HTTP" || n.vpc == input.vpc)
            }) {
                if input.creator_request_id.is_some()
                    && existing.creator_request_id == input.creator_request_id
                {
                    return Err(err(
                        "DuplicateRequest",
                        format!(
                            "A request with the same creator request id ({}) has already been made.",
                            input.creator_request_id.clone().unwrap_or_default()
                        ),
                    ));
                }
                return Err(err(
                    "NamespaceAlreadyExists",
                    format!("Namespace {} already exists.", input.name),
                )
                .with_extra("NamespaceId", &existing.id));
            }
            let id = format!("ns-{}", lower_alnum(16));
            let ns = Namespace {
                id: id.clone(),
                name: input.name,
                kind: input.kind.clone(),
                description: input.description,
                creator_request_id: input.creator_request_id,
                vpc: input.vpc,
                hosted_zone_id: (input.kind != "HTTP")
                    .then(|| zone.clone().unwrap_or_else(hosted_zone_id)),
                soa_ttl: if input.kind == "HTTP" {
                    None
                } else {
                    Some(input.soa_ttl.unwrap_or(15))
                },
                created_at: now,
                tags: input.tags,
            };
            r.namespaces.insert(id.clone(), ns);
            r.touch(NAMESPACE, &id);
            let op = new_operation(r, "CREATE_NAMESPACE", vec![("NAMESPACE", &id)], now);
            Ok((op, id))
        });
        if made.is_err()
            && let Some(z) = &zone
        {
            self.delete_zone(z);
        }
        made
    }

    pub fn get_namespace(&self, region: &str, id: &str) -> Result<Value, AwsError> {
        self.read(region, |r, _| {
            r.namespaces
                .get(id)
                .map(|ns| self.namespace_json(region, r, ns, true))
                .ok_or_else(|| namespace_not_found(id))
        })
    }

    pub fn list_namespaces(
        &self,
        region: &str,
        filters: &[Filter],
    ) -> Result<Vec<Value>, AwsError> {
        self.read(region, |r, _| {
            let mut out = Vec::new();
            for ns in r.namespaces.values() {
                let mut ok = true;
                for f in filters {
                    let value = match f.name.as_str() {
                        "TYPE" => ns.kind.as_str(),
                        "NAME" | "HTTP_NAME" => ns.name.as_str(),
                        "RESOURCE_OWNER" => self.account_id.as_str(),
                        other => {
                            return Err(invalid(format!("Unsupported filter name: {other}")));
                        }
                    };
                    ok &= admits(&f.values, &f.condition, value);
                }
                if ok {
                    out.push(self.namespace_json(region, r, ns, false));
                }
            }
            Ok(out)
        })
    }

    /// DeleteNamespace: refused while the namespace has services, as AWS does.
    pub fn delete_namespace(&self, region: &str, id: &str) -> Result<String, AwsError> {
        let zone = self.read(region, |r, _| {
            r.namespaces.get(id).and_then(|n| n.hosted_zone_id.clone())
        });
        let op = self.mutate(region, |r, now| {
            if !r.namespaces.contains_key(id) {
                return Err(namespace_not_found(id));
            }
            if r.services.values().any(|s| s.namespace_id == id) {
                return Err(err(
                    "ResourceInUse",
                    format!("Namespace {id} has associated services and cannot be deleted."),
                ));
            }
            r.namespaces.remove(id);
            r.touch(NAMESPACE, id);
            Ok(new_operation(
                r,
                "DELETE_NAMESPACE",
                vec![("NAMESPACE", id)],
                now,
            ))
        })?;
        if let Some(z) = &zone {
            self.delete_zone(z);
        }
        Ok(op)
    }

    /// UpdateHttpNamespace / UpdatePrivateDnsNamespace / UpdatePublicDnsNamespace.
    pub fn update_namespace(
        &self,
        region: &str,
        id: &str,
        description: Option<String>,
        soa_ttl: Option<i64>,
    ) -> Result<String, AwsError> {
        self.mutate(region, |r, now| {
            let ns = r
                .namespaces
                .get_mut(id)
                .ok_or_else(|| namespace_not_found(id))?;
            if description.is_some() {
                ns.description = description;
            }
            if soa_ttl.is_some() && ns.kind != "HTTP" {
                ns.soa_ttl = soa_ttl;
            }
            r.touch(NAMESPACE, id);
            Ok(new_operation(
                r,
                "UPDATE_NAMESPACE",
                vec![("NAMESPACE", id)],
                now,
            ))
        })
    }

    pub fn get_operation(&self, region: &str, id: &str) -> Result<Value, AwsError> {
        self.read(region, |r, now| {
            let op = r.operations.get(id).ok_or_else(|| {
                err("OperationNotFound", format!("No operation found with ID: {id}"))
            })?;
            let status = operation_status(op, now);
            let targets: serde_json::Map<String, Value> = op
                .targets
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            Ok(json!({
                "Id": op.id,
                "OwnerAccount": self.account_id,
                "Type": op.kind,
                "Status": status,
                "CreateDate": op.created_at,
                "UpdateDate": if status == "SUCCESS" { op.created_at + OPERATION_S } else { op.created_at },
                "Targets": targets,
            }))
        })
    }

    pub fn list_operations(
        &self,
        region: &str,
        filters: &[Filter],
    ) -> Result<Vec<Value>, AwsError> {
        self.read(region, |r, now| {
            let mut ops: Vec<&Operation> = r.operations.values().collect();
            ops.sort_by(|a, b| a.created_at.total_cmp(&b.created_at));
            let mut out = Vec::new();
            for op in ops {
                let status = operation_status(op, now);
                let target = |k: &str| {
                    op.targets
                        .iter()
                        .find(|(t, _)| t == k)
                        .map(|(_, v)| v.as_str())
                        .unwrap_or("")
                };
                let mut ok = true;
                for f in filters {
                    ok &= match f.name.as_str() {
                        "NAMESPACE_ID" => admits(&f.values, "EQ", target("NAMESPACE")),
                        "SERVICE_ID" => admits(&f.values, "EQ", target("SERVICE")),
                        "STATUS" => admits(&f.values, "EQ", status),
                        "TYPE" => admits(&f.values, "EQ", &op.kind),
                        "UPDATE_DATE" => true,
                        other => {
                            return Err(invalid(format!("Unsupported filter name: {other}")));
                        }
                    };
                }
                if ok {
                    out.push(json!({"Id": op.id, "Status": status}));
                }
            }
            Ok(out)
        })
    }

    pub fn create_service(&self, region: &str, input: ServiceInput) -> Result<Value, AwsError> {
        let namespace_id = input
            .namespace_id
            .clone()
            .or_else(|| {
                input
                    .dns_config
                    .as_ref()
                    .and_then(|d| d.get("NamespaceId"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .ok_or_else(|| invalid("NamespaceId is required."))?;
        if input.health_check_config.is_some() && input.health_check_custom_config.is_some() {
            return Err(invalid(
                "You can specify either HealthCheckConfig or HealthCheckCustomConfig but not both.",
            ));
        }
        self.mutate(region, |r, now| {
            let ns = r
                .namespaces
                .get(&namespace_id)
                .cloned()
                .ok_or_else(|| namespace_not_found(&namespace_id))?;
            if let Some(existing) = r
                .services
                .values()
                .find(|s| s.namespace_id == ns.id && s.name == input.name)
            {
                return Err(err(
                    "ServiceAlreadyExists",
                    format!("Service {} already exists.", input.name),
                )
                .with_extra("ServiceId", &existing.id));
            }
            let kind = match (&input.kind, &ns.kind, &input.dns_config) {
                (Some(k), _, _) => {
                    if k != "HTTP" {
                        return Err(invalid(format!("Invalid service type: {k}")));
                    }
                    k.clone()
                }
                (None, nk, _) if nk == "HTTP" => {
                    if input.dns_config.is_some() {
                        return Err(invalid(
                            "DnsConfig is not supported for services in an HTTP namespace.",
                        ));
                    }
                    "HTTP".to_string()
                }
                (None, _, Some(_)) => "DNS_HTTP".to_string(),
                (None, _, None) => "HTTP".to_string(),
            };
            let mut dns_config = input.dns_config.clone();
            if let Some(Value::Object(d)) = &mut dns_config {
                d.remove("NamespaceId");
                d.entry("RoutingPolicy").or_insert(json!("MULTIVALUE"));
            }
            let id = format!("srv-{}", lower_alnum(16));
            let svc = Service {
                id: id.clone(),
                name: input.name,
                namespace_id: ns.id.clone(),
                description: input.description,
                kind,
                dns_config,
                health_check_config: input.health_check_config,
                health_check_custom_config: input.health_check_custom_config,
                creator_request_id: input.creator_request_id,
                created_at: now,
                instances: BTreeMap::new(),
                revision: 1,
                tags: input.tags,
            };
            r.services.insert(id.clone(), svc);
            r.touch(SERVICE, &id);
            Ok(self.service_json(region, &r.services[&id], true))
        })
    }

    pub fn get_service(&self, region: &str, id: &str) -> Result<Value, AwsError> {
        self.read(region, |r, _| {
            r.services
                .get(id)
                .map(|s| self.service_json(region, s, true))
                .ok_or_else(|| service_not_found(id))
        })
    }

    pub fn list_services(&self, region: &str, filters: &[Filter]) -> Result<Vec<Value>, AwsError> {
        self.read(region, |r, _| {
            let mut out = Vec::new();
            for s in r.services.values() {
                let mut ok = true;
                for f in filters {
                    ok &= match f.name.as_str() {
                        "NAMESPACE_ID" => admits(&f.values, "EQ", &s.namespace_id),
                        "RESOURCE_OWNER" => true,
                        other => {
                            return Err(invalid(format!("Unsupported filter name: {other}")));
                        }
                    };
                }
                if ok {
                    out.push(self.service_json(region, s, false));
                }
            }
            Ok(out)
        })
    }

    /// UpdateService: description, DNS records' TTLs and health check, as ServiceChange holds.
    pub fn update_service(
        &self,
        region: &str,
        id: &str,
        description: Option<String>,
        dns_config: Option<Value>,
        health_check_config: Option<Value>,
    ) -> Result<String, AwsError> {
        self.mutate(region, |r, now| {
            let s = r
                .services
                .get_mut(id)
                .ok_or_else(|| service_not_found(id))?;
            if description.is_some() {
                s.description = description;
            }
            if let (Some(Value::Object(new)), Some(Value::Object(old))) =
                (&dns_config, &mut s.dns_config)
                && let Some(records) = new.get("DnsRecords")
            {
                old.insert("DnsRecords".into(), records.clone());
            }
            if health_check_config.is_some() {
                s.health_check_config = health_check_config;
            }
            r.touch(SERVICE, id);
            Ok(new_operation(
                r,
                "UPDATE_SERVICE",
                vec![("SERVICE", id)],
                now,
            ))
        })
    }

    /// DeleteService: refused while instances are registered, as AWS does.
    pub fn delete_service(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.mutate(region, |r, _| {
            let s = r.services.get(id).ok_or_else(|| service_not_found(id))?;
            if !s.instances.is_empty() {
                return Err(err(
                    "ResourceInUse",
                    format!("Service {id} has registered instances and cannot be deleted."),
                ));
            }
            r.services.remove(id);
            r.touch(SERVICE, id);
            Ok(())
        })
    }

    pub fn register_instance(
        &self,
        region: &str,
        service_id: &str,
        instance_id: &str,
        creator_request_id: Option<String>,
        attributes: BTreeMap<String, String>,
    ) -> Result<String, AwsError> {
        if instance_id.is_empty() || instance_id.len() > 64 {
            return Err(invalid("InstanceId must be between 1 and 64 characters."));
        }
        let op = self.mutate(region, |r, now| {
            let s = r
                .services
                .get_mut(service_id)
                .ok_or_else(|| service_not_found(service_id))?;
            check_attributes(s, &attributes)?;
            let health = attributes
                .get("AWS_INIT_HEALTH_STATUS")
                .cloned()
                .unwrap_or_else(|| "HEALTHY".into());
            s.instances.insert(
                instance_id.to_string(),
                Instance {
                    id: instance_id.to_string(),
                    creator_request_id,
                    attributes,
                    health,
                },
            );
            s.revision += 1;
            r.touch(SERVICE, service_id);
            Ok(new_operation(
                r,
                "REGISTER_INSTANCE",
                vec![("SERVICE", service_id), ("INSTANCE", instance_id)],
                now,
            ))
        })?;
        self.write_instance_records(region, service_id, instance_id);
        Ok(op)
    }

    pub fn deregister_instance(
        &self,
        region: &str,
        service_id: &str,
        instance_id: &str,
    ) -> Result<String, AwsError> {
        let stale = self.instance_records(region, service_id, instance_id);
        let op = self.mutate(region, |r, now| {
            let s = r
                .services
                .get_mut(service_id)
                .ok_or_else(|| service_not_found(service_id))?;
            if s.instances.remove(instance_id).is_none() {
                return Err(err(
                    "InstanceNotFound",
                    format!("No instance found with ID: {instance_id}"),
                ));
            }
            s.revision += 1;
            r.touch(SERVICE, service_id);
            Ok(new_operation(
                r,
                "DEREGISTER_INSTANCE",
                vec![("SERVICE", service_id), ("INSTANCE", instance_id)],
                now,
            ))
        })?;
        self.delete_records(stale);
        Ok(op)
    }

    pub fn get_instance(
        &self,
        region: &str,
        service_id: &str,
        instance_id: &str,
    ) -> Result<Value, AwsError> {
        self.read(region, |r, _| {
            let s = r
                .services
                .get(service_id)
                .ok_or_else(|| service_not_found(service_id))?;
            let i = s.instances.get(instance_id).ok_or_else(|| {
                err(
                    "InstanceNotFound",
                    format!("No instance found with ID: {instance_id}"),
                )
            })?;
            let mut v = json!({"Id": i.id, "Attributes": i.attributes, "CreatedByAccount": self.account_id});
            if let Some(c) = &i.creator_request_id {
                v["CreatorRequestId"] = json!(c);
            }
            Ok(v)
        })
    }

    pub fn list_instances(&self, region: &str, service_id: &str) -> Result<Vec<Value>, AwsError> {
        self.read(region, |r, _| {
            let s = r
                .services
                .get(service_id)
                .ok_or_else(|| service_not_found(service_id))?;
            Ok(s.instances
                .values()
                .map(|i| json!({"Id": i.id, "Attributes": i.attributes, "CreatedByAccount": self.account_id}))
                .collect())
        })
    }

    /// DiscoverInstances: the instances of the named service whose attributes match every
    /// query parameter, filtered by health (HEALTHY unless asked otherwise).
    pub fn discover_instances(
        &self,
        region: &str,
        namespace: &str,
        service: &str,
        query: &BTreeMap<String, String>,
        health: Option<&str>,
        max: usize,
    ) -> Result<(Vec<Value>, i64), AwsError> {
        self.read(region, |r, _| {
            let ns = r
                .namespaces
                .values()
                .find(|n| n.name == namespace)
                .ok_or_else(|| namespace_not_found(namespace))?;
            let s = r
                .services
                .values()
                .find(|s| s.namespace_id == ns.id && s.name == service)
                .ok_or_else(|| service_not_found(service))?;
            let wanted = health.unwrap_or("HEALTHY");
            let instances = s
                .instances
                .values()
                .filter(|i| query.iter().all(|(k, v)| i.attributes.get(k) == Some(v)))
                .filter(|i| match wanted {
                    "ALL" => true,
                    "HEALTHY_OR_ELSE_ALL" => true,
                    h => i.health == h,
                })
                .take(max)
                .map(|i| {
                    json!({
                        "InstanceId": i.id,
                        "NamespaceName": ns.name,
                        "ServiceName": s.name,
                        "HealthStatus": i.health,
                        "Attributes": i.attributes,
                    })
                })
                .collect();
            Ok((instances, s.revision))
        })
    }

    pub fn instances_health(
        &self,
        region: &str,
        service_id: &str,
        only: &[String],
    ) -> Result<BTreeMap<String, String>, AwsError> {
        self.read(region, |r, _| {
            let s = r
                .services
                .get(service_id)
                .ok_or_else(|| service_not_found(service_id))?;
            if s.health_check_config.is_none() && s.health_check_custom_config.is_none() {
                return Err(invalid(format!(
                    "Service {service_id} does not have a health check configured."
                )));
            }
            Ok(s.instances
                .values()
                .filter(|i| only.is_empty() || only.contains(&i.id))
                .map(|i| (i.id.clone(), i.health.clone()))
                .collect())
        })
    }

    pub fn update_instance_health(
        &self,
        region: &str,
        service_id: &str,
        instance_id: &str,
        status: &str,
    ) -> Result<(), AwsError> {
        self.mutate(region, |r, _| {
            let s = r
                .services
                .get_mut(service_id)
                .ok_or_else(|| service_not_found(service_id))?;
            if s.health_check_custom_config.is_none() {
                return Err(err(
                    "CustomHealthNotFound",
                    format!("Service {service_id} does not have custom health check configured."),
                ));
            }
            let i = s.instances.get_mut(instance_id).ok_or_else(|| {
                err(
                    "InstanceNotFound",
                    format!("No instance found with ID: {instance_id}"),
                )
            })?;
            i.health = status.to_string();
            r.touch(SERVICE, service_id);
            Ok(())
        })
    }

    fn with_tags<T>(
        &self,
        region: &str,
        arn: &str,
        f: impl FnOnce(&mut Vec<(String, String)>) -> T,
    ) -> Result<T, AwsError> {
        let id = arn.rsplit('/').next().unwrap_or("").to_string();
        let not_found = || {
            err(
                "ResourceNotFoundException",
                format!("Resource not found: {arn}"),
            )
        };
        self.mutate(region, |r, _| {
            if let Some(ns) = r.namespaces.get_mut(&id) {
                let out = f(&mut ns.tags);
                r.touch(NAMESPACE, &id);
                return Ok(out);
            }
            if let Some(s) = r.services.get_mut(&id) {
                let out = f(&mut s.tags);
                r.touch(SERVICE, &id);
                return Ok(out);
            }
            Err(not_found())
        })
    }

    pub fn tag_resource(
        &self,
        region: &str,
        arn: &str,
        tags: Vec<(String, String)>,
    ) -> Result<(), AwsError> {
        self.with_tags(region, arn, |existing| {
            for (k, v) in tags {
                existing.retain(|(key, _)| *key != k);
                existing.push((k, v));
            }
        })
    }

    pub fn untag_resource(&self, region: &str, arn: &str, keys: &[String]) -> Result<(), AwsError> {
        self.with_tags(region, arn, |existing| {
            existing.retain(|(k, _)| !keys.contains(k));
        })
    }

    pub fn list_tags(&self, region: &str, arn: &str) -> Result<Vec<(String, String)>, AwsError> {
        self.with_tags(region, arn, |existing| existing.clone())
    }

    /// The id of a namespace named by its name or ARN (how ECS Service Connect names one).
    pub fn namespace_id(&self, region: &str, name_or_arn: &str) -> Option<String> {
        let id = name_or_arn.rsplit('/').next().unwrap_or("");
        self.read(region, |r, _| {
            r.namespaces
                .values()
                .find(|n| n.id == id || n.name == name_or_arn)
                .map(|n| n.id.clone())
        })
    }

    /// The ARN of the namespace's service `name`, created (tagged `AmazonECSManaged`, as ECS
    /// tags the services Service Connect makes) when it does not exist yet.
    pub fn ensure_service(
        &self,
        region: &str,
        namespace_id: &str,
        name: &str,
    ) -> Result<String, AwsError> {
        let existing = self.read(region, |r, _| {
            r.services
                .values()
                .find(|s| s.namespace_id == namespace_id && s.name == name)
                .map(|s| s.id.clone())
        });
        let id = match existing {
            Some(id) => id,
            None => {
                let created = self.create_service(
                    region,
                    ServiceInput {
                        name: name.to_string(),
                        namespace_id: Some(namespace_id.to_string()),
                        kind: Some("HTTP".into()),
                        tags: vec![("AmazonECSManaged".into(), "true".into())],
                        ..Default::default()
                    },
                )?;
                created["Id"].as_str().unwrap_or_default().to_string()
            }
        };
        Ok(self.service_arn(region, &id))
    }

    /// Deletes a service Service Connect made once no instance is registered in it; one
    /// already gone, or still in use, stays as it is.
    pub fn delete_if_unused(&self, region: &str, arn: &str) {
        let id = arn.rsplit('/').next().unwrap_or("");
        let _in_use_or_gone_is_fine = self.delete_service(region, id);
    }

    /// The DNS record types of a Cloud Map service (by ARN), `None` when it does not exist:
    /// what ECS checks a service registry by.
    pub fn record_types(&self, region: &str, arn: &str) -> Option<Vec<String>> {
        let id = arn.rsplit('/').next().unwrap_or("");
        if !arn.starts_with("arn:") {
            return None;
        }
        self.read(region, |r, _| {
            let s = r.services.get(id)?;
            Some(
                s.dns_config
                    .as_ref()
                    .and_then(|d| d.get("DnsRecords"))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|rec| rec.get("Type").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect(),
            )
        })
    }

    /// Registers an ECS task as an instance of the Cloud Map service an ARN names.
    pub fn register_task(
        &self,
        region: &str,
        service_arn: &str,
        task_id: &str,
        attributes: Vec<(String, String)>,
    ) -> Result<(), AwsError> {
        let id = service_arn.rsplit('/').next().unwrap_or("");
        self.register_instance(region, id, task_id, None, attributes.into_iter().collect())
            .map(drop)
    }

    /// Deregisters a stopped ECS task; one already gone is no error (a user may have
    /// deregistered it, or deleted the service).
    pub fn deregister_task(&self, region: &str, service_arn: &str, task_id: &str) {
        let id = service_arn.rsplit('/').next().unwrap_or("");
        let _gone_is_fine = self.deregister_instance(region, id, task_id);
    }
}

/// A DNS service's instances need the address attributes its records are made from.
fn check_attributes(s: &Service, attributes: &BTreeMap<String, String>) -> Result<(), AwsError> {
    let records: Vec<&str> = s
        .dns_config
        .as_ref()
        .and_then(|d| d.get("DnsRecords"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|r| r.get("Type").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default();
    let has = |k: &str| attributes.contains_key(k);
    if records.contains(&"A") && !has("AWS_INSTANCE_IPV4") && !has("AWS_ALIAS_DNS_NAME") {
        return Err(invalid(
            "AWS_INSTANCE_IPV4 attribute is required for service with A record.",
        ));
    }
    if records.contains(&"SRV") && !has("AWS_INSTANCE_PORT") {
        return Err(invalid(
            "AWS_INSTANCE_PORT attribute is required for service with SRV record.",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_match_exactly_or_by_prefix() {
        let v = vec!["ns-a".to_string()];
        assert!(admits(&v, "EQ", "ns-a"));
        assert!(!admits(&v, "EQ", "ns-ab"));
        assert!(admits(&v, "BEGINS_WITH", "ns-ab"));
    }

    #[test]
    fn operations_succeed_after_a_moment() {
        let op = Operation {
            id: "x".into(),
            kind: "CREATE_NAMESPACE".into(),
            created_at: 10.0,
            targets: vec![],
        };
        assert_eq!(operation_status(&op, 10.0), "SUBMITTED");
        assert_eq!(operation_status(&op, 10.2), "SUCCESS");
    }
}
