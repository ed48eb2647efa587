//! CloudFormation providers of ELBv2's types. Their properties carry the API's member names, so
//! each provider hands them (coerced to the model's types) to the same operations the API
//! answers with, and declares only what differs: the properties set through a second call
//! (attributes, targets), what changes in place, and Ref/GetAtt.

use super::ElbService;
use crate::providers::declared::{self, Answer, Declared, Made, refuse_other_changes};
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{ProviderServices, tags};
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SERVICE: &str = "ElasticLoadBalancingV2";
const NOT_FOUND: &[&str] = &[
    "LoadBalancerNotFound",
    "TargetGroupNotFound",
    "ListenerNotFound",
    "RuleNotFound",
];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let elb = || s.elasticloadbalancing.clone();
    declared::register(r, LoadBalancer(elb()));
    declared::register(r, TargetGroup(elb()));
    declared::register(r, Listener(elb()));
    declared::register(r, ListenerRule(elb()));
    declared::register(r, ListenerCertificate(elb()));
    super::classic::provider::register(r, s);
}

/// `props` without `drop`, coerced to `op`'s input, with `extra` members added.
fn input(op: &str, props: &Map<String, Value>, drop: &[&str], extra: &[(&str, Value)]) -> Value {
    let mut m: Map<String, Value> = props
        .iter()
        .filter(|(k, _)| !drop.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in extra {
        m.insert(k.to_string(), v.clone());
    }
    ElbService::coerce(op, Value::Object(m))
}

fn tag_list(ctx: &ProviderContext, props: &Map<String, Value>) -> Result<Value, ProviderError> {
    let mut all = tags(ctx, props)?;
    all.extend(system_tags(ctx));
    Ok(Value::Array(
        all.into_iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect(),
    ))
}

fn retag(
    elb: &ElbService,
    ctx: &ProviderContext,
    arn: &str,
    props: &Map<String, Value>,
) -> Answer<()> {
    let live = elb.call(&ctx.region, "DescribeTags", &json!({"ResourceArns": [arn]}))?;
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
        elb.call(
            &ctx.region,
            "RemoveTags",
            &json!({"ResourceArns": [arn], "TagKeys": change.remove}),
        )?;
    }
    if !change.set.is_empty() {
        let set: Vec<Value> = change
            .set
            .into_iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect();
        elb.call(
            &ctx.region,
            "AddTags",
            &json!({"ResourceArns": [arn], "Tags": set}),
        )?;
    }
    Ok(())
}

fn changed(old: &Map<String, Value>, new: &Map<String, Value>, key: &str) -> bool {
    old.get(key) != new.get(key)
}

fn attributes(
    elb: &ElbService,
    ctx: &ProviderContext,
    op: &str,
    arn_key: &str,
    arn: &str,
    attrs: Option<&Value>,
) -> Answer<()> {
    if let Some(a) = attrs.filter(|a| a.as_array().is_some_and(|a| !a.is_empty())) {
        let body = ElbService::coerce(op, json!({arn_key: arn, "Attributes": a}));
        elb.call(&ctx.region, op, &body)?;
    }
    Ok(())
}

struct LoadBalancer(Arc<ElbService>);

#[async_trait::async_trait]
impl Declared for LoadBalancer {
    const ATTRIBUTES: &'static [&'static str] = &[
        "LoadBalancerArn",
        "LoadBalancerName",
        "LoadBalancerFullName",
        "DNSName",
        "CanonicalHostedZoneID",
        "SecurityGroups",
    ];
    const TYPE: &'static str = "AWS::ElasticLoadBalancingV2::LoadBalancer";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "IpAddressType",
        "LoadBalancerAttributes",
        "Name",
        "Scheme",
        "SecurityGroups",
        "SubnetMappings",
        "Subnets",
        "Tags",
        "Type",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "EnforceSecurityGroupInboundRulesOnPrivateLinkTraffic",
            "cumulo does not emulate PrivateLink",
        ),
        (
            "MinimumLoadBalancerCapacity",
            "cumulo's load balancers have no capacity units",
        ),
        ("Ipv4IpamPoolId", "cumulo does not emulate IPAM"),
        (
            "EnablePrefixForIpv6SourceNat",
            "cumulo does not emulate IPv6 source NAT",
        ),
        (
            "EnableCapacityReservationProvisionStabilize",
            "cumulo's load balancers have no capacity units",
        ),
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = match props.get("Name").and_then(Value::as_str) {
            Some(n) => n.to_string(),
            None => ctx.generated_name(32, "").replace('_', "-"),
        };
        let body = input(
            "CreateLoadBalancer",
            props,
            &["LoadBalancerAttributes", "Tags", "Name"],
            &[("Name", json!(name)), ("Tags", tag_list(ctx, props)?)],
        );
        let out = self.0.call(&ctx.region, "CreateLoadBalancer", &body)?;
        let arn = out["LoadBalancers"][0]["LoadBalancerArn"]
            .as_str()
            .unwrap_or("")
            .to_string();
        attributes(
            &self.0,
            ctx,
            "ModifyLoadBalancerAttributes",
            "LoadBalancerArn",
            &arn,
            props.get("LoadBalancerAttributes"),
        )?;
        self.made(ctx, &arn)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        arn: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(
            Self::TYPE,
            old,
            new,
            &[
                "IpAddressType",
                "LoadBalancerAttributes",
                "SecurityGroups",
                "SubnetMappings",
                "Subnets",
                "Tags",
            ],
        )?;
        if changed(old, new, "SecurityGroups") {
            let groups = new.get("SecurityGroups").cloned().unwrap_or(json!([]));
            self.0.call(
                &ctx.region,
                "SetSecurityGroups",
                &json!({"LoadBalancerArn": arn, "SecurityGroups": groups}),
            )?;
        }
        if changed(old, new, "Subnets") || changed(old, new, "SubnetMappings") {
            let body = input(
                "SetSubnets",
                new,
                &[
                    "LoadBalancerAttributes",
                    "Tags",
                    "Name",
                    "Scheme",
                    "Type",
                    "SecurityGroups",
                    "IpAddressType",
                ],
                &[("LoadBalancerArn", json!(arn))],
            );
            self.0.call(&ctx.region, "SetSubnets", &body)?;
        }
        attributes(
            &self.0,
            ctx,
            "ModifyLoadBalancerAttributes",
            "LoadBalancerArn",
            arn,
            new.get("LoadBalancerAttributes"),
        )?;
        retag(&self.0, ctx, arn, new)?;
        self.made(ctx, arn)
    }

    async fn delete(&self, ctx: &ProviderContext, arn: &str, _: &Map<String, Value>) -> Answer<()> {
        self.0.call(
            &ctx.region,
            "DeleteLoadBalancer",
            &json!({"LoadBalancerArn": arn}),
        )?;
        Ok(())
    }

    fn made(&self, ctx: &ProviderContext, arn: &str) -> Answer<Made> {
        let out = self.0.call(
            &ctx.region,
            "DescribeLoadBalancers",
            &json!({"LoadBalancerArns": [arn]}),
        )?;
        let lb = &out["LoadBalancers"][0];
        let full = arn.split(":loadbalancer/").nth(1).unwrap_or("").to_string();
        Ok(Made::new(arn)
            .with("LoadBalancerArn", arn)
            .with("LoadBalancerName", lb["LoadBalancerName"].clone())
            .with("LoadBalancerFullName", full)
            .with("DNSName", lb["DNSName"].clone())
            .with("CanonicalHostedZoneID", lb["CanonicalHostedZoneId"].clone())
            .with(
                "SecurityGroups",
                lb.get("SecurityGroups").cloned().unwrap_or(json!([])),
            ))
    }
}

struct TargetGroup(Arc<ElbService>);

const TG_HEALTH: &[&str] = &[
    "HealthCheckEnabled",
    "HealthCheckIntervalSeconds",
    "HealthCheckPath",
    "HealthCheckPort",
    "HealthCheckProtocol",
    "HealthCheckTimeoutSeconds",
    "HealthyThresholdCount",
    "UnhealthyThresholdCount",
    "Matcher",
];

impl TargetGroup {
    fn targets(&self, ctx: &ProviderContext, arn: &str, op: &str, targets: &[Value]) -> Answer<()> {
        if !targets.is_empty() {
            let body = ElbService::coerce(op, json!({"TargetGroupArn": arn, "Targets": targets}));
            self.0.call(&ctx.region, op, &body)?;
        }
        Ok(())
    }
}

fn list_of(props: &Map<String, Value>, key: &str) -> Vec<Value> {
    props
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

#[async_trait::async_trait]
impl Declared for TargetGroup {
    const ATTRIBUTES: &'static [&'static str] = &[
        "TargetGroupArn",
        "TargetGroupName",
        "TargetGroupFullName",
        "LoadBalancerArns",
    ];
    const TYPE: &'static str = "AWS::ElasticLoadBalancingV2::TargetGroup";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "HealthCheckEnabled",
        "HealthCheckIntervalSeconds",
        "HealthCheckPath",
        "HealthCheckPort",
        "HealthCheckProtocol",
        "HealthCheckTimeoutSeconds",
        "HealthyThresholdCount",
        "IpAddressType",
        "Matcher",
        "Name",
        "Port",
        "Protocol",
        "ProtocolVersion",
        "Tags",
        "TargetGroupAttributes",
        "TargetType",
        "Targets",
        "UnhealthyThresholdCount",
        "VpcId",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "TargetControlPort",
        "cumulo does not emulate target control ports",
    )];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = match props.get("Name").and_then(Value::as_str) {
            Some(n) => n.to_string(),
            None => ctx.generated_name(32, ""),
        };
        let body = input(
            "CreateTargetGroup",
            props,
            &["Targets", "TargetGroupAttributes", "Tags", "Name"],
            &[("Name", json!(name)), ("Tags", tag_list(ctx, props)?)],
        );
        let out = self.0.call(&ctx.region, "CreateTargetGroup", &body)?;
        let arn = out["TargetGroups"][0]["TargetGroupArn"]
            .as_str()
            .unwrap_or("")
            .to_string();
        attributes(
            &self.0,
            ctx,
            "ModifyTargetGroupAttributes",
            "TargetGroupArn",
            &arn,
            props.get("TargetGroupAttributes"),
        )?;
        self.targets(ctx, &arn, "RegisterTargets", &list_of(props, "Targets"))?;
        self.made(ctx, &arn)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        arn: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let mut mutable = TG_HEALTH.to_vec();
        mutable.extend(["Tags", "TargetGroupAttributes", "Targets"]);
        refuse_other_changes(Self::TYPE, old, new, &mutable)?;
        if TG_HEALTH.iter().any(|k| changed(old, new, k)) {
            let health: Map<String, Value> = TG_HEALTH
                .iter()
                .filter_map(|k| Some((k.to_string(), new.get(*k)?.clone())))
                .collect();
            let body = input(
                "ModifyTargetGroup",
                &health,
                &[],
                &[("TargetGroupArn", json!(arn))],
            );
            self.0.call(&ctx.region, "ModifyTargetGroup", &body)?;
        }
        let (before, after) = (list_of(old, "Targets"), list_of(new, "Targets"));
        self.targets(
            ctx,
            arn,
            "DeregisterTargets",
            &before
                .iter()
                .filter(|t| !after.contains(t))
                .cloned()
                .collect::<Vec<_>>(),
        )?;
        self.targets(
            ctx,
            arn,
            "RegisterTargets",
            &after
                .iter()
                .filter(|t| !before.contains(t))
                .cloned()
                .collect::<Vec<_>>(),
        )?;
        attributes(
            &self.0,
            ctx,
            "ModifyTargetGroupAttributes",
            "TargetGroupArn",
            arn,
            new.get("TargetGroupAttributes"),
        )?;
        retag(&self.0, ctx, arn, new)?;
        self.made(ctx, arn)
    }

    async fn delete(&self, ctx: &ProviderContext, arn: &str, _: &Map<String, Value>) -> Answer<()> {
        self.0.target_group(&ctx.region, arn)?;
        self.0.call(
            &ctx.region,
            "DeleteTargetGroup",
            &json!({"TargetGroupArn": arn}),
        )?;
        Ok(())
    }

    fn made(&self, ctx: &ProviderContext, arn: &str) -> Answer<Made> {
        let out = self.0.call(
            &ctx.region,
            "DescribeTargetGroups",
            &json!({"TargetGroupArns": [arn]}),
        )?;
        let tg = &out["TargetGroups"][0];
        let full = arn.split(':').next_back().unwrap_or("").to_string();
        Ok(Made::new(arn)
            .with("TargetGroupArn", arn)
            .with("TargetGroupName", tg["TargetGroupName"].clone())
            .with("TargetGroupFullName", full)
            .with("LoadBalancerArns", tg["LoadBalancerArns"].clone()))
    }
}

struct Listener(Arc<ElbService>);

#[async_trait::async_trait]
impl Declared for Listener {
    const ATTRIBUTES: &'static [&'static str] = &["ListenerArn"];
    const TYPE: &'static str = "AWS::ElasticLoadBalancingV2::Listener";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AlpnPolicy",
        "Certificates",
        "DefaultActions",
        "LoadBalancerArn",
        "Port",
        "Protocol",
        "SslPolicy",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        ("MutualAuthentication", "cumulo does not emulate mutual TLS"),
        (
            "ListenerAttributes",
            "cumulo does not emulate listener attributes",
        ),
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let out = self.0.call(
            &ctx.region,
            "CreateListener",
            &input("CreateListener", props, &[], &[]),
        )?;
        let arn = out["Listeners"][0]["ListenerArn"]
            .as_str()
            .unwrap_or("")
            .to_string();
        Ok(Made::new(arn.clone()).with("ListenerArn", arn))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        arn: &str,
        _: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        self.0.call(
            &ctx.region,
            "ModifyListener",
            &input(
                "ModifyListener",
                new,
                &["LoadBalancerArn"],
                &[("ListenerArn", json!(arn))],
            ),
        )?;
        Ok(Made::new(arn).with("ListenerArn", arn))
    }

    async fn delete(&self, ctx: &ProviderContext, arn: &str, _: &Map<String, Value>) -> Answer<()> {
        self.0
            .call(&ctx.region, "DeleteListener", &json!({"ListenerArn": arn}))?;
        Ok(())
    }
}

struct ListenerRule(Arc<ElbService>);

#[async_trait::async_trait]
impl Declared for ListenerRule {
    const ATTRIBUTES: &'static [&'static str] = &["RuleArn", "IsDefault"];
    const TYPE: &'static str = "AWS::ElasticLoadBalancingV2::ListenerRule";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] =
        &["Actions", "Conditions", "ListenerArn", "Priority"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] =
        &[("Transforms", "cumulo does not emulate request transforms")];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let out = self.0.call(
            &ctx.region,
            "CreateRule",
            &input("CreateRule", props, &[], &[]),
        )?;
        let arn = out["Rules"][0]["RuleArn"]
            .as_str()
            .unwrap_or("")
            .to_string();
        Ok(Made::new(arn.clone())
            .with("RuleArn", arn)
            .with("IsDefault", false))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        arn: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        if changed(old, new, "Priority") {
            let body = ElbService::coerce(
                "SetRulePriorities",
                json!({"RulePriorities": [{"RuleArn": arn, "Priority": new.get("Priority")}]}),
            );
            self.0.call(&ctx.region, "SetRulePriorities", &body)?;
        }
        self.0.call(
            &ctx.region,
            "ModifyRule",
            &input(
                "ModifyRule",
                new,
                &["ListenerArn", "Priority"],
                &[("RuleArn", json!(arn))],
            ),
        )?;
        Ok(Made::new(arn).with("RuleArn", arn).with("IsDefault", false))
    }

    async fn delete(&self, ctx: &ProviderContext, arn: &str, _: &Map<String, Value>) -> Answer<()> {
        self.0
            .call(&ctx.region, "DeleteRule", &json!({"RuleArn": arn}))?;
        Ok(())
    }
}

/// AWS::ElasticLoadBalancingV2::ListenerCertificate: Ref and `Id` are the listener's ARN (the
/// schema's identifier is the listener).
struct ListenerCertificate(Arc<ElbService>);

#[async_trait::async_trait]
impl Declared for ListenerCertificate {
    const ATTRIBUTES: &'static [&'static str] = &["Id"];
    const TYPE: &'static str = "AWS::ElasticLoadBalancingV2::ListenerCertificate";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["Certificates", "ListenerArn"];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        self.0.call(
            &ctx.region,
            "AddListenerCertificates",
            &input("AddListenerCertificates", props, &[], &[]),
        )?;
        let arn = props
            .get("ListenerArn")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        Ok(Made::new(arn.clone()).with("Id", arn))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        self.0.call(
            &ctx.region,
            "RemoveListenerCertificates",
            &input("RemoveListenerCertificates", old, &[], &[]),
        )?;
        self.0.call(
            &ctx.region,
            "AddListenerCertificates",
            &input("AddListenerCertificates", new, &[], &[]),
        )?;
        Ok(Made::new(id).with("Id", id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        _: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        self.0.call(
            &ctx.region,
            "RemoveListenerCertificates",
            &input("RemoveListenerCertificates", props, &[], &[]),
        )?;
        Ok(())
    }
}
