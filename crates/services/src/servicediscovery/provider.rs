//! CloudFormation providers over Cloud Map's typed operations: the three namespace types (Ref
//! and GetAtt Id, GetAtt Arn, and HostedZoneId for the DNS ones), AWS::ServiceDiscovery::Service
//! (Ref Id; GetAtt Id, Arn, Name) and AWS::ServiceDiscovery::Instance (Ref the instance id).
//! The namespace types share one declaration shape, `Kind`, since they differ only in their
//! type, their properties and the VPC a private namespace needs.

use super::{NamespaceInput, ServiceDiscoveryService, ServiceInput};
use crate::providers::declared::{self, Answer, Declared, Made, changed_keys};
use crate::providers::{
    ProviderServices, already_exists, required, scalar, tags, unsupported_prop,
};
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::marker::PhantomData;
use std::sync::Arc;

const SERVICE: &str = "ServiceDiscovery";

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let sd = s.servicediscovery.clone();
    declared::register(r, Namespace::<Private>::new(sd.clone()));
    declared::register(r, Namespace::<Public>::new(sd.clone()));
    declared::register(r, Namespace::<Http>::new(sd.clone()));
    declared::register(r, DiscoveryService { sd: sd.clone() });
    declared::register(r, DiscoveryInstance { sd });
}

/// What distinguishes the namespace types.
trait Kind: Send + Sync + 'static {
    const TYPE: &'static str;
    const API_TYPE: &'static str;
    const PROPERTIES: &'static [&'static str];
    /// Its Fn::GetAtt attributes (a DNS namespace's also name its hosted zone).
    const ATTRIBUTES: &'static [&'static str] = &["Id", "Arn", "HostedZoneId"];
}

struct Private;
struct Public;
struct Http;

impl Kind for Private {
    const TYPE: &'static str = "AWS::ServiceDiscovery::PrivateDnsNamespace";
    const API_TYPE: &'static str = "DNS_PRIVATE";
    const PROPERTIES: &'static [&'static str] =
        &["Description", "Name", "Properties", "Tags", "Vpc"];
}

impl Kind for Public {
    const TYPE: &'static str = "AWS::ServiceDiscovery::PublicDnsNamespace";
    const API_TYPE: &'static str = "DNS_PUBLIC";
    const PROPERTIES: &'static [&'static str] = &["Description", "Name", "Properties", "Tags"];
}

impl Kind for Http {
    const TYPE: &'static str = "AWS::ServiceDiscovery::HttpNamespace";
    const API_TYPE: &'static str = "HTTP";
    const PROPERTIES: &'static [&'static str] = &["Description", "Name", "Tags"];
    const ATTRIBUTES: &'static [&'static str] = &["Id", "Arn"];
}

struct Namespace<K> {
    sd: Arc<ServiceDiscoveryService>,
    kind: PhantomData<K>,
}

impl<K> Namespace<K> {
    fn new(sd: Arc<ServiceDiscoveryService>) -> Self {
        Namespace {
            sd,
            kind: PhantomData,
        }
    }
}

fn soa_ttl(props: &Map<String, Value>) -> Option<i64> {
    let ttl = props
        .get("Properties")?
        .get("DnsProperties")?
        .get("SOA")?
        .get("TTL")?;
    ttl.as_i64()
        .or_else(|| ttl.as_str().and_then(|s| s.parse().ok()))
}

#[async_trait::async_trait]
impl<K: Kind> Declared for Namespace<K> {
    const ATTRIBUTES: &'static [&'static str] = K::ATTRIBUTES;
    const TYPE: &'static str = K::TYPE;
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = K::PROPERTIES;
    const NOT_FOUND: &'static [&'static str] = &["NamespaceNotFound"];

    fn made(&self, ctx: &ProviderContext, id: &str) -> Answer<Made> {
        let ns = self.sd.get_namespace(&ctx.region, id)?;
        let mut made = Made::new(id).with("Id", id).with("Arn", ns["Arn"].clone());
        if K::ATTRIBUTES.contains(&"HostedZoneId") {
            made = made.with(
                "HostedZoneId",
                ns["Properties"]["DnsProperties"]["HostedZoneId"].clone(),
            );
        }
        Ok(made)
    }

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = required(props, "Name")?;
        let input = NamespaceInput {
            kind: K::API_TYPE.into(),
            name: name.clone(),
            description: scalar(props, "Description")?,
            creator_request_id: Some(ctx.client_request_token.clone()),
            vpc: scalar(props, "Vpc")?,
            soa_ttl: soa_ttl(props),
            tags: tags(ctx, props)?,
        };
        let (_, id) = match self.sd.create_namespace(&ctx.region, input) {
            Err(e) if e.code == "NamespaceAlreadyExists" => {
                return Err(already_exists(ctx, &name).into());
            }
            other => other?,
        };
        self.made(ctx, &id)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let changed = changed_keys(old, new);
        if changed
            .iter()
            .any(|k| k == "Description" || k == "Properties")
        {
            self.sd
                .update_namespace(&ctx.region, id, scalar(new, "Description")?, soa_ttl(new))?;
        }
        if changed.iter().any(|k| k == "Tags") {
            retag(&self.sd, ctx, &self.sd.namespace_arn(&ctx.region, id), new)?;
        }
        self.made(ctx, id)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        self.sd.delete_namespace(&ctx.region, id)?;
        Ok(())
    }
}

fn retag(
    sd: &ServiceDiscoveryService,
    ctx: &ProviderContext,
    arn: &str,
    props: &Map<String, Value>,
) -> Answer<()> {
    let wanted = tags(ctx, props)?;
    let stale: Vec<String> = sd
        .list_tags(&ctx.region, arn)?
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| !wanted.iter().any(|(w, _)| w == k))
        .collect();
    sd.untag_resource(&ctx.region, arn, &stale)?;
    sd.tag_resource(&ctx.region, arn, wanted)?;
    Ok(())
}

/// A structure property with its scalar leaves as the API's numbers (`TTL`, `FailureThreshold`).
fn structure(props: &Map<String, Value>, key: &str) -> Option<Value> {
    fn typed(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| {
                        let numeric = matches!(k.as_str(), "TTL" | "FailureThreshold");
                        let value = match x.as_str().and_then(|s| s.parse::<i64>().ok()) {
                            Some(n) if numeric => Value::from(n),
                            _ => typed(x),
                        };
                        (k.clone(), value)
                    })
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(typed).collect()),
            other => other.clone(),
        }
    }
    props.get(key).filter(|v| !v.is_null()).map(typed)
}

struct DiscoveryService {
    sd: Arc<ServiceDiscoveryService>,
}

#[async_trait::async_trait]
impl Declared for DiscoveryService {
    const ATTRIBUTES: &'static [&'static str] = &["Id", "Arn", "Name"];
    const TYPE: &'static str = "AWS::ServiceDiscovery::Service";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "Description",
        "DnsConfig",
        "HealthCheckConfig",
        "HealthCheckCustomConfig",
        "Name",
        "NamespaceId",
        "Tags",
        "Type",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "ServiceAttributes",
        "cumulo's Cloud Map does not emulate service attributes",
    )];
    const NOT_FOUND: &'static [&'static str] = &["ServiceNotFound"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = match scalar(props, "Name")? {
            Some(n) => n,
            None => ctx.generated_name(127, ""),
        };
        let input = ServiceInput {
            name: name.clone(),
            namespace_id: scalar(props, "NamespaceId")?,
            description: scalar(props, "Description")?,
            dns_config: structure(props, "DnsConfig"),
            health_check_config: structure(props, "HealthCheckConfig"),
            health_check_custom_config: structure(props, "HealthCheckCustomConfig"),
            creator_request_id: Some(ctx.client_request_token.clone()),
            kind: scalar(props, "Type")?,
            tags: tags(ctx, props)?,
        };
        let s = match self.sd.create_service(&ctx.region, input) {
            Err(e) if e.code == "ServiceAlreadyExists" => {
                return Err(already_exists(ctx, &name).into());
            }
            other => other?,
        };
        self.made(ctx, s["Id"].as_str().unwrap_or_default())
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let changed = changed_keys(old, new);
        if changed.iter().any(|k| {
            matches!(
                k.as_str(),
                "Description" | "DnsConfig" | "HealthCheckConfig"
            )
        }) {
            self.sd.update_service(
                &ctx.region,
                id,
                scalar(new, "Description")?,
                structure(new, "DnsConfig"),
                structure(new, "HealthCheckConfig"),
            )?;
        }
        if changed.iter().any(|k| k == "Tags") {
            retag(&self.sd, ctx, &self.sd.service_arn(&ctx.region, id), new)?;
        }
        self.made(ctx, id)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        self.sd.delete_service(&ctx.region, id)?;
        Ok(())
    }

    fn made(&self, ctx: &ProviderContext, id: &str) -> Answer<Made> {
        let s = self.sd.get_service(&ctx.region, id)?;
        Ok(Made::new(id)
            .with("Id", id)
            .with("Arn", s["Arn"].clone())
            .with("Name", s["Name"].clone()))
    }
}

struct DiscoveryInstance {
    sd: Arc<ServiceDiscoveryService>,
}

fn attributes(props: &Map<String, Value>) -> Result<BTreeMap<String, String>, ProviderError> {
    match props.get("InstanceAttributes") {
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| {
                crate::providers::scalar_value(v)
                    .map(|s| (k.clone(), s))
                    .ok_or_else(|| unsupported_prop(
                        "AWS::ServiceDiscovery::Instance",
                        "InstanceAttributes",
                        "attribute values are strings",
                    ))
            })
            .collect(),
        _ => Err(ProviderError::Failed(
            "Properties validation failed for resource with message: #: required key [InstanceAttributes] not found".into(),
        )),
    }
}

#[async_trait::async_trait]
impl Declared for DiscoveryInstance {
    const ATTRIBUTES: &'static [&'static str] = &["InstanceId"];
    const TYPE: &'static str = "AWS::ServiceDiscovery::Instance";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["InstanceAttributes", "InstanceId", "ServiceId"];
    const NOT_FOUND: &'static [&'static str] = &["InstanceNotFound", "ServiceNotFound"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let service = required(props, "ServiceId")?;
        let id = match scalar(props, "InstanceId")? {
            Some(i) => i,
            None => ctx.generated_name(64, ""),
        };
        self.sd
            .register_instance(&ctx.region, &service, &id, None, attributes(props)?)?;
        Ok(Made::new(id.clone()).with("InstanceId", id))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        // RegisterInstance with an existing id replaces its attributes, as on AWS.
        let service = required(new, "ServiceId")?;
        self.sd
            .register_instance(&ctx.region, &service, id, None, attributes(new)?)?;
        Ok(Made::new(id).with("InstanceId", id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let service = required(props, "ServiceId")?;
        self.sd.deregister_instance(&ctx.region, &service, id)?;
        Ok(())
    }
}
