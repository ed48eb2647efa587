//! AWS::ElasticLoadBalancing::LoadBalancer: the classic load balancer's template properties,
//! which mostly carry the API's member names, handed to the classic operations in the order
//! CloudFormation applies them: the load balancer with its listeners, its policies and which
//! listeners and back-end ports use them, the health check, the attributes (access log,
//! connection draining and settings, cross-zone), then its instances.

use crate::elasticloadbalancing::ElbService;
use crate::providers::declared::{self, Answer, Declared, Made, refuse_other_changes};
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{ProviderServices, tags};
use cumulo_engine::{ProviderContext, ProviderRegistry};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    declared::register(r, LoadBalancer(s.elasticloadbalancing.clone()));
}

struct LoadBalancer(Arc<ElbService>);

fn list(props: &Map<String, Value>, key: &str) -> Vec<Value> {
    props
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn strings(props: &Map<String, Value>, key: &str) -> Vec<String> {
    list(props, key)
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

fn changed(old: &Map<String, Value>, new: &Map<String, Value>, key: &str) -> bool {
    old.get(key) != new.get(key)
}

/// A listener without its `PolicyNames` (set by their own call), coerced to the API's types.
fn listener_only(l: &Value) -> Value {
    let mut l = l.clone();
    if let Some(o) = l.as_object_mut() {
        o.remove("PolicyNames");
    }
    l
}

fn port_of(l: &Value) -> Option<i64> {
    match &l["LoadBalancerPort"] {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn as_port(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The load balancer's attributes the properties set, in the API's shape.
fn attributes(props: &Map<String, Value>) -> Option<Value> {
    let mut a = Map::new();
    if let Some(c) = props.get("CrossZone") {
        a.insert("CrossZoneLoadBalancing".into(), json!({"Enabled": c}));
    }
    if let Some(l) = props.get("AccessLoggingPolicy") {
        a.insert("AccessLog".into(), l.clone());
    }
    if let Some(d) = props.get("ConnectionDrainingPolicy") {
        a.insert("ConnectionDraining".into(), d.clone());
    }
    if let Some(s) = props.get("ConnectionSettings") {
        a.insert("ConnectionSettings".into(), s.clone());
    }
    (!a.is_empty()).then_some(Value::Object(a))
}

impl LoadBalancer {
    fn call(&self, ctx: &ProviderContext, op: &str, input: Value) -> Answer<Value> {
        Ok(self
            .0
            .classic_call(&ctx.region, op, &ElbService::classic_coerce(op, input))?)
    }

    /// The policies the properties declare, then which listeners and back-end ports use them.
    fn policies(
        &self,
        ctx: &ProviderContext,
        name: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        for p in list(props, "AppCookieStickinessPolicy") {
            self.call(
                ctx,
                "CreateAppCookieStickinessPolicy",
                json!({"LoadBalancerName": name, "PolicyName": p["PolicyName"], "CookieName": p["CookieName"]}),
            )?;
        }
        for p in list(props, "LBCookieStickinessPolicy") {
            let mut input = json!({"LoadBalancerName": name, "PolicyName": p["PolicyName"]});
            if let Some(period) = p.get("CookieExpirationPeriod") {
                input["CookieExpirationPeriod"] = period.clone();
            }
            self.call(ctx, "CreateLBCookieStickinessPolicy", input)?;
        }
        let declared = list(props, "Policies");
        for p in &declared {
            let attrs: Vec<Value> = p["Attributes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| json!({"AttributeName": a["Name"], "AttributeValue": a["Value"]}))
                .collect();
            self.call(
                ctx,
                "CreateLoadBalancerPolicy",
                json!({"LoadBalancerName": name, "PolicyName": p["PolicyName"], "PolicyTypeName": p["PolicyType"], "PolicyAttributes": attrs}),
            )?;
        }
        for l in list(props, "Listeners") {
            let Some(port) = port_of(&l) else { continue };
            let mut names: Vec<Value> = l["PolicyNames"].as_array().cloned().unwrap_or_default();
            for p in &declared {
                let on_port = p["LoadBalancerPorts"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| as_port(x) == Some(port)));
                if on_port && !names.contains(&p["PolicyName"]) {
                    names.push(p["PolicyName"].clone());
                }
            }
            if !names.is_empty() {
                self.call(
                    ctx,
                    "SetLoadBalancerPoliciesOfListener",
                    json!({"LoadBalancerName": name, "LoadBalancerPort": port, "PolicyNames": names}),
                )?;
            }
        }
        let mut backends: Vec<(i64, Vec<Value>)> = Vec::new();
        for p in &declared {
            for port in p["InstancePorts"].as_array().into_iter().flatten() {
                let Some(port) = as_port(port) else { continue };
                match backends.iter_mut().find(|(x, _)| *x == port) {
                    Some((_, names)) => names.push(p["PolicyName"].clone()),
                    None => backends.push((port, vec![p["PolicyName"].clone()])),
                }
            }
        }
        for (port, names) in backends {
            self.call(
                ctx,
                "SetLoadBalancerPoliciesForBackendServer",
                json!({"LoadBalancerName": name, "InstancePort": port, "PolicyNames": names}),
            )?;
        }
        Ok(())
    }

    fn settings(
        &self,
        ctx: &ProviderContext,
        name: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        if let Some(h) = props.get("HealthCheck") {
            self.call(
                ctx,
                "ConfigureHealthCheck",
                json!({"LoadBalancerName": name, "HealthCheck": h}),
            )?;
        }
        if let Some(a) = attributes(props) {
            self.call(
                ctx,
                "ModifyLoadBalancerAttributes",
                json!({"LoadBalancerName": name, "LoadBalancerAttributes": a}),
            )?;
        }
        Ok(())
    }

    fn instances(&self, ctx: &ProviderContext, name: &str, op: &str, ids: &[String]) -> Answer<()> {
        if !ids.is_empty() {
            let instances: Vec<Value> = ids.iter().map(|i| json!({"InstanceId": i})).collect();
            self.call(
                ctx,
                op,
                json!({"LoadBalancerName": name, "Instances": instances}),
            )?;
        }
        Ok(())
    }

    fn retag(&self, ctx: &ProviderContext, name: &str, props: &Map<String, Value>) -> Answer<()> {
        let live = self.call(ctx, "DescribeTags", json!({"LoadBalancerNames": [name]}))?;
        let live: Vec<(String, String)> = live["TagDescriptions"][0]["Tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| {
                Some((
                    t["Key"].as_str()?.to_string(),
                    t["Value"].as_str().unwrap_or("").to_string(),
                ))
            })
            .collect();
        let change = TagChange::between(live.iter().map(|(k, v)| (k, v)), &tags(ctx, props)?);
        if !change.remove.is_empty() {
            let keys: Vec<Value> = change.remove.iter().map(|k| json!({"Key": k})).collect();
            self.call(
                ctx,
                "RemoveTags",
                json!({"LoadBalancerNames": [name], "Tags": keys}),
            )?;
        }
        if !change.set.is_empty() {
            let set: Vec<Value> = change
                .set
                .into_iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect();
            self.call(
                ctx,
                "AddTags",
                json!({"LoadBalancerNames": [name], "Tags": set}),
            )?;
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Declared for LoadBalancer {
    const ATTRIBUTES: &'static [&'static str] = &[
        "Id",
        "DNSName",
        "CanonicalHostedZoneName",
        "CanonicalHostedZoneNameID",
        "SourceSecurityGroup.GroupName",
        "SourceSecurityGroup.OwnerAlias",
    ];
    const TYPE: &'static str = "AWS::ElasticLoadBalancing::LoadBalancer";
    const SERVICE: &'static str = "ElasticLoadBalancing";
    const PROPERTIES: &'static [&'static str] = &[
        "AccessLoggingPolicy",
        "AppCookieStickinessPolicy",
        "AvailabilityZones",
        "ConnectionDrainingPolicy",
        "ConnectionSettings",
        "CrossZone",
        "HealthCheck",
        "Instances",
        "LBCookieStickinessPolicy",
        "Listeners",
        "LoadBalancerName",
        "Policies",
        "Scheme",
        "SecurityGroups",
        "Subnets",
        "Tags",
    ];
    const NOT_FOUND: &'static [&'static str] = &["LoadBalancerNotFound"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = match props.get("LoadBalancerName").and_then(Value::as_str) {
            Some(n) => n.to_string(),
            None => ctx.generated_name(32, "").replace('_', "-"),
        };
        let mut all_tags = tags(ctx, props)?;
        all_tags.extend(system_tags(ctx));
        let mut input = json!({
            "LoadBalancerName": name,
            "Listeners": list(props, "Listeners").iter().map(listener_only).collect::<Vec<_>>(),
            "Tags": all_tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>(),
        });
        for key in ["AvailabilityZones", "Subnets", "SecurityGroups", "Scheme"] {
            if let Some(v) = props.get(key) {
                input[key] = v.clone();
            }
        }
        self.call(ctx, "CreateLoadBalancer", input)?;
        let rest = (|| {
            self.policies(ctx, &name, props)?;
            self.settings(ctx, &name, props)?;
            self.instances(
                ctx,
                &name,
                "RegisterInstancesWithLoadBalancer",
                &strings(props, "Instances"),
            )
        })();
        if let Err(e) = rest {
            // A half-configured load balancer is not left behind.
            let _ = self.call(ctx, "DeleteLoadBalancer", json!({"LoadBalancerName": name}));
            return Err(e);
        }
        self.made(ctx, &name)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        name: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(
            Self::TYPE,
            old,
            new,
            &[
                "AccessLoggingPolicy",
                "AvailabilityZones",
                "ConnectionDrainingPolicy",
                "ConnectionSettings",
                "CrossZone",
                "HealthCheck",
                "Instances",
                "Listeners",
                "SecurityGroups",
                "Subnets",
                "Tags",
            ],
        )?;
        if changed(old, new, "Listeners") {
            let before = list(old, "Listeners");
            let after = list(new, "Listeners");
            let gone: Vec<i64> = before
                .iter()
                .filter(|l| !after.iter().any(|n| listener_only(n) == listener_only(l)))
                .filter_map(port_of)
                .collect();
            if !gone.is_empty() {
                self.call(
                    ctx,
                    "DeleteLoadBalancerListeners",
                    json!({"LoadBalancerName": name, "LoadBalancerPorts": gone}),
                )?;
            }
            let added: Vec<Value> = after
                .iter()
                .filter(|l| !before.iter().any(|o| listener_only(o) == listener_only(l)))
                .map(listener_only)
                .collect();
            if !added.is_empty() {
                self.call(
                    ctx,
                    "CreateLoadBalancerListeners",
                    json!({"LoadBalancerName": name, "Listeners": added}),
                )?;
            }
            for l in after {
                if let (Some(port), Some(names)) = (port_of(&l), l.get("PolicyNames")) {
                    self.call(
                        ctx,
                        "SetLoadBalancerPoliciesOfListener",
                        json!({"LoadBalancerName": name, "LoadBalancerPort": port, "PolicyNames": names}),
                    )?;
                }
            }
        }
        for (key, attach, detach, member) in [
            (
                "Subnets",
                "AttachLoadBalancerToSubnets",
                "DetachLoadBalancerFromSubnets",
                "Subnets",
            ),
            (
                "AvailabilityZones",
                "EnableAvailabilityZonesForLoadBalancer",
                "DisableAvailabilityZonesForLoadBalancer",
                "AvailabilityZones",
            ),
        ] {
            if changed(old, new, key) {
                let before = strings(old, key);
                let after = strings(new, key);
                let added: Vec<&String> = after.iter().filter(|s| !before.contains(s)).collect();
                let gone: Vec<&String> = before.iter().filter(|s| !after.contains(s)).collect();
                if !added.is_empty() {
                    self.call(
                        ctx,
                        attach,
                        json!({"LoadBalancerName": name, member: added}),
                    )?;
                }
                if !gone.is_empty() {
                    self.call(ctx, detach, json!({"LoadBalancerName": name, member: gone}))?;
                }
            }
        }
        if changed(old, new, "SecurityGroups") && !strings(new, "SecurityGroups").is_empty() {
            self.call(
                ctx,
                "ApplySecurityGroupsToLoadBalancer",
                json!({"LoadBalancerName": name, "SecurityGroups": strings(new, "SecurityGroups")}),
            )?;
        }
        self.settings(ctx, name, new)?;
        if changed(old, new, "Instances") {
            let before = strings(old, "Instances");
            let after = strings(new, "Instances");
            let gone: Vec<String> = before
                .iter()
                .filter(|i| !after.contains(i))
                .cloned()
                .collect();
            let added: Vec<String> = after
                .iter()
                .filter(|i| !before.contains(i))
                .cloned()
                .collect();
            self.instances(ctx, name, "DeregisterInstancesFromLoadBalancer", &gone)?;
            self.instances(ctx, name, "RegisterInstancesWithLoadBalancer", &added)?;
        }
        self.retag(ctx, name, new)?;
        self.made(ctx, name)
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        name: &str,
        _: &Map<String, Value>,
    ) -> Answer<()> {
        self.call(ctx, "DeleteLoadBalancer", json!({"LoadBalancerName": name}))?;
        Ok(())
    }

    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        Some(
            match props.get("LoadBalancerName").and_then(Value::as_str) {
                Some(n) => n.to_string(),
                None => ctx.generated_name(32, "").replace('_', "-"),
            },
        )
    }

    fn made(&self, ctx: &ProviderContext, name: &str) -> Answer<Made> {
        let out = self.call(
            ctx,
            "DescribeLoadBalancers",
            json!({"LoadBalancerNames": [name]}),
        )?;
        let lb = &out["LoadBalancerDescriptions"][0];
        Ok(Made::new(name)
            .with("Id", name)
            .with("DNSName", lb["DNSName"].clone())
            .with(
                "CanonicalHostedZoneName",
                lb["CanonicalHostedZoneName"].clone(),
            )
            .with(
                "CanonicalHostedZoneNameID",
                lb["CanonicalHostedZoneNameID"].clone(),
            )
            .with(
                "SourceSecurityGroup.GroupName",
                lb["SourceSecurityGroup"]["GroupName"].clone(),
            )
            .with(
                "SourceSecurityGroup.OwnerAlias",
                lb["SourceSecurityGroup"]["OwnerAlias"].clone(),
            ))
    }
}
