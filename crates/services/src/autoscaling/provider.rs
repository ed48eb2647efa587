//! CloudFormation providers of Auto Scaling's types. Their properties carry the API's member
//! names (with a few renames: an Auto Scaling group's `Cooldown` and list-valued
//! `VPCZoneIdentifier`, a launch configuration's `InstanceMonitoring` and `RamDiskId`), so each
//! provider hands them, coerced to the model's types, to the operations the API answers with.
//!
//! An Auto Scaling group's CreationPolicy (ResourceSignal) is the engine's, as for every type;
//! its UpdatePolicy is kept in the template and an update is applied in place: a rolling or
//! replacing update does not roll instances, since no virtual machine runs (README).

use super::AutoScalingService;
use super::ops::group_not_found;
use crate::providers::declared::{self, Answer, Declared, Fault, Made, refuse_other_changes};
use crate::providers::system_tags::system_tags;
use crate::providers::{ProviderServices, tags};
use cumulo_engine::{ProviderContext, ProviderRegistry};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SERVICE: &str = "AutoScaling";

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let asg = || s.autoscaling.clone();
    declared::register(r, Group(asg()));
    declared::register(r, LaunchConfiguration(asg()));
    declared::register(r, ScalingPolicy(asg()));
    declared::register(r, Put::<ScheduledAction>::new(asg()));
    declared::register(r, Put::<LifecycleHook>::new(asg()));
    declared::register(r, Put::<WarmPool>::new(asg()));
}

/// A refusal that means the thing (or its group) is gone: Auto Scaling words these as
/// ValidationErrors, so the message tells.
fn gone(e: &AwsError) -> bool {
    e.code == "ValidationError" && (e.message.contains("not found") || e.message.contains("No "))
}

fn call(asg: &AutoScalingService, ctx: &ProviderContext, op: &str, input: Value) -> Answer<Value> {
    Ok(asg.call(&ctx.region, op, &AutoScalingService::coerce(op, input))?)
}

/// A delete that treats "gone" as done.
fn delete_call(
    asg: &AutoScalingService,
    ctx: &ProviderContext,
    op: &str,
    input: Value,
) -> Answer<()> {
    match call(asg, ctx, op, input) {
        Err(Fault::Service(e)) if gone(&e) => Ok(()),
        other => other.map(|_| ()),
    }
}

/// `props` without `drop`, with `extra` members added.
fn input(props: &Map<String, Value>, drop: &[&str], extra: &[(&str, Value)]) -> Value {
    let mut m: Map<String, Value> = props
        .iter()
        .filter(|(k, _)| !drop.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in extra {
        m.insert(k.to_string(), v.clone());
    }
    Value::Object(m)
}

fn name_or_generated(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
    key: &str,
    max: usize,
) -> String {
    match props.get(key).and_then(Value::as_str) {
        Some(n) => n.to_string(),
        None => ctx.generated_name(max, ""),
    }
}

fn changed(old: &Map<String, Value>, new: &Map<String, Value>, key: &str) -> bool {
    old.get(key) != new.get(key)
}

fn strings(props: &Map<String, Value>, key: &str) -> Vec<String> {
    props
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

struct Group(Arc<AutoScalingService>);

/// The group's template properties as CreateAutoScalingGroup's or UpdateAutoScalingGroup's
/// input (those applied by their own calls left out).
fn group_input(props: &Map<String, Value>, name: &str) -> Value {
    let mut v = input(
        props,
        &[
            "Cooldown",
            "VPCZoneIdentifier",
            "Tags",
            "NotificationConfigurations",
            "NotificationConfiguration",
            "MetricsCollection",
            "AutoScalingGroupName",
        ],
        &[("AutoScalingGroupName", json!(name))],
    );
    if let Some(c) = props.get("Cooldown") {
        v["DefaultCooldown"] = c.clone();
    }
    let subnets = strings(props, "VPCZoneIdentifier");
    if !subnets.is_empty() {
        v["VPCZoneIdentifier"] = json!(subnets.join(","));
    }
    v
}

/// The group's tags with the stack's and CloudFormation's own, which AWS propagates to
/// instances.
fn group_tags(ctx: &ProviderContext, props: &Map<String, Value>, name: &str) -> Answer<Vec<Value>> {
    let given: Vec<Value> = props
        .get("Tags")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut out: Vec<Value> = Vec::new();
    for (k, v) in tags(ctx, props)?.into_iter().chain(system_tags(ctx)) {
        let propagate = given
            .iter()
            .find(|t| t["Key"] == k.as_str())
            .map(|t| t["PropagateAtLaunch"].clone())
            .unwrap_or(json!(true));
        out.push(json!({"ResourceId": name, "ResourceType": "auto-scaling-group", "Key": k, "Value": v, "PropagateAtLaunch": propagate}));
    }
    Ok(out)
}

impl Group {
    /// Notification configurations and metrics collection, each through its own call.
    fn extras(
        &self,
        ctx: &ProviderContext,
        name: &str,
        old: Option<&Map<String, Value>>,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let notifications = |p: &Map<String, Value>| -> Vec<Value> {
            let mut all: Vec<Value> = p
                .get("NotificationConfigurations")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            all.extend(p.get("NotificationConfiguration").cloned());
            all
        };
        let before = old.map(notifications).unwrap_or_default();
        let after = notifications(props);
        if before != after {
            for n in &before {
                call(
                    &self.0,
                    ctx,
                    "DeleteNotificationConfiguration",
                    json!({"AutoScalingGroupName": name, "TopicARN": n["TopicARN"]}),
                )?;
            }
            for n in &after {
                call(
                    &self.0,
                    ctx,
                    "PutNotificationConfiguration",
                    json!({"AutoScalingGroupName": name, "TopicARN": n["TopicARN"], "NotificationTypes": n["NotificationTypes"]}),
                )?;
            }
        }
        if old.is_none_or(|o| changed(o, props, "MetricsCollection")) {
            if old.is_some() {
                call(
                    &self.0,
                    ctx,
                    "DisableMetricsCollection",
                    json!({"AutoScalingGroupName": name}),
                )?;
            }
            for m in props
                .get("MetricsCollection")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let mut i = json!({"AutoScalingGroupName": name, "Granularity": m["Granularity"]});
                if let Some(list) = m.get("Metrics") {
                    i["Metrics"] = list.clone();
                }
                call(&self.0, ctx, "EnableMetricsCollection", i)?;
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Declared for Group {
    const ATTRIBUTES: &'static [&'static str] = &["AutoScalingGroupARN"];
    const TYPE: &'static str = "AWS::AutoScaling::AutoScalingGroup";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AutoScalingGroupName",
        "AvailabilityZones",
        "AvailabilityZoneDistribution",
        "AvailabilityZoneImpairmentPolicy",
        "CapacityRebalance",
        "CapacityReservationSpecification",
        "Context",
        "Cooldown",
        "DefaultInstanceWarmup",
        "DeletionProtection",
        "DesiredCapacity",
        "DesiredCapacityType",
        "HealthCheckGracePeriod",
        "HealthCheckType",
        "InstanceLifecyclePolicy",
        "InstanceMaintenancePolicy",
        "LaunchConfigurationName",
        "LaunchTemplate",
        "LifecycleHookSpecificationList",
        "LoadBalancerNames",
        "MaxInstanceLifetime",
        "MaxSize",
        "MetricsCollection",
        "MinSize",
        "MixedInstancesPolicy",
        "NewInstancesProtectedFromScaleIn",
        "NotificationConfiguration",
        "NotificationConfigurations",
        "PlacementGroup",
        "ServiceLinkedRoleARN",
        "SkipZonalShiftValidation",
        "Tags",
        "TargetGroupARNs",
        "TerminationPolicies",
        "VPCZoneIdentifier",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "InstanceId",
            "cumulo cannot derive a group from a running instance",
        ),
        (
            "TrafficSources",
            "cumulo attaches load balancers by TargetGroupARNs and LoadBalancerNames only",
        ),
        (
            "AvailabilityZoneIds",
            "cumulo places groups by subnet or Availability Zone name",
        ),
        ("LaunchTemplateSpecification", "give LaunchTemplate instead"),
    ];
    const NOT_FOUND: &'static [&'static str] = &[];
    const LIMITATION: Option<&'static str> =
        Some("cumulo: instances are EC2 records; no virtual machine runs");

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = name_or_generated(ctx, props, "AutoScalingGroupName", 255);
        let mut body = group_input(props, &name);
        body["Tags"] = json!(group_tags(ctx, props, &name)?);
        call(&self.0, ctx, "CreateAutoScalingGroup", body)?;
        if let Err(e) = self.extras(ctx, &name, None, props) {
            let _ = call(
                &self.0,
                ctx,
                "DeleteAutoScalingGroup",
                json!({"AutoScalingGroupName": name, "ForceDelete": true}),
            );
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
        let mutable: Vec<&str> = Self::PROPERTIES
            .iter()
            .copied()
            .filter(|p| {
                !matches!(
                    *p,
                    "AutoScalingGroupName" | "LifecycleHookSpecificationList"
                )
            })
            .collect();
        refuse_other_changes(Self::TYPE, old, new, &mutable)?;
        let mut body = group_input(new, name);
        for k in [
            "TargetGroupARNs",
            "LoadBalancerNames",
            "LifecycleHookSpecificationList",
        ] {
            if let Some(o) = body.as_object_mut() {
                o.remove(k);
            }
        }
        // An unchanged DesiredCapacity is not sent again: scaling since then stands, as on AWS.
        if !changed(old, new, "DesiredCapacity")
            && let Some(o) = body.as_object_mut()
        {
            o.remove("DesiredCapacity");
        }
        call(&self.0, ctx, "UpdateAutoScalingGroup", body)?;
        for (key, attach, detach) in [
            (
                "TargetGroupARNs",
                "AttachLoadBalancerTargetGroups",
                "DetachLoadBalancerTargetGroups",
            ),
            (
                "LoadBalancerNames",
                "AttachLoadBalancers",
                "DetachLoadBalancers",
            ),
        ] {
            if changed(old, new, key) {
                let before = strings(old, key);
                let after = strings(new, key);
                let gone: Vec<&String> = before.iter().filter(|x| !after.contains(x)).collect();
                let added: Vec<&String> = after.iter().filter(|x| !before.contains(x)).collect();
                if !gone.is_empty() {
                    call(
                        &self.0,
                        ctx,
                        detach,
                        json!({"AutoScalingGroupName": name, key: gone}),
                    )?;
                }
                if !added.is_empty() {
                    call(
                        &self.0,
                        ctx,
                        attach,
                        json!({"AutoScalingGroupName": name, key: added}),
                    )?;
                }
            }
        }
        let wanted = group_tags(ctx, new, name)?;
        let live = call(
            &self.0,
            ctx,
            "DescribeTags",
            json!({"Filters": [{"Name": "auto-scaling-group", "Values": [name]}]}),
        )?;
        let stale: Vec<Value> = live["Tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| !t["Key"].as_str().unwrap_or("").starts_with("aws:"))
            .filter(|t| !wanted.iter().any(|w| w["Key"] == t["Key"]))
            .map(|t| json!({"ResourceId": name, "ResourceType": "auto-scaling-group", "Key": t["Key"]}))
            .collect();
        if !stale.is_empty() {
            call(&self.0, ctx, "DeleteTags", json!({"Tags": stale}))?;
        }
        if !wanted.is_empty() {
            call(&self.0, ctx, "CreateOrUpdateTags", json!({"Tags": wanted}))?;
        }
        self.extras(ctx, name, Some(old), new)?;
        self.made(ctx, name)
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        name: &str,
        _: &Map<String, Value>,
    ) -> Answer<()> {
        delete_call(
            &self.0,
            ctx,
            "DeleteAutoScalingGroup",
            json!({"AutoScalingGroupName": name, "ForceDelete": true}),
        )
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        name: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<cumulo_engine::Observed>> {
        match self.made(ctx, name) {
            Ok(m) => Ok(Some(m.into())),
            Err(Fault::Service(e)) if gone(&e) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        Some(name_or_generated(ctx, props, "AutoScalingGroupName", 255))
    }

    fn made(&self, ctx: &ProviderContext, name: &str) -> Answer<Made> {
        let out = call(
            &self.0,
            ctx,
            "DescribeAutoScalingGroups",
            json!({"AutoScalingGroupNames": [name]}),
        )?;
        let g = out["AutoScalingGroups"]
            .get(0)
            .cloned()
            .ok_or_else(|| Fault::Service(group_not_found(name)))?;
        Ok(Made::new(name).with("AutoScalingGroupARN", g["AutoScalingGroupARN"].clone()))
    }
}

struct LaunchConfiguration(Arc<AutoScalingService>);

#[async_trait::async_trait]
impl Declared for LaunchConfiguration {
    const ATTRIBUTES: &'static [&'static str] = &[];
    const TYPE: &'static str = "AWS::AutoScaling::LaunchConfiguration";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AssociatePublicIpAddress",
        "BlockDeviceMappings",
        "ClassicLinkVPCId",
        "ClassicLinkVPCSecurityGroups",
        "EbsOptimized",
        "IamInstanceProfile",
        "ImageId",
        "InstanceMonitoring",
        "InstanceType",
        "KernelId",
        "KeyName",
        "LaunchConfigurationName",
        "MetadataOptions",
        "PlacementTenancy",
        "RamDiskId",
        "SecurityGroups",
        "SpotPrice",
        "UserData",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "InstanceId",
        "cumulo cannot derive a launch configuration from a running instance",
    )];
    const NOT_FOUND: &'static [&'static str] = &[];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = name_or_generated(ctx, props, "LaunchConfigurationName", 255);
        let mut body = input(
            props,
            &["InstanceMonitoring", "RamDiskId"],
            &[("LaunchConfigurationName", json!(name))],
        );
        if let Some(m) = props.get("InstanceMonitoring") {
            body["InstanceMonitoring"] = json!({"Enabled": m});
        }
        if let Some(r) = props.get("RamDiskId") {
            body["RamdiskId"] = r.clone();
        }
        call(&self.0, ctx, "CreateLaunchConfiguration", body)?;
        Ok(Made::new(name))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        name: &str,
        _: &Map<String, Value>,
    ) -> Answer<()> {
        delete_call(
            &self.0,
            ctx,
            "DeleteLaunchConfiguration",
            json!({"LaunchConfigurationName": name}),
        )
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        name: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<cumulo_engine::Observed>> {
        let out = call(
            &self.0,
            ctx,
            "DescribeLaunchConfigurations",
            json!({"LaunchConfigurationNames": [name]}),
        )?;
        Ok(out["LaunchConfigurations"]
            .get(0)
            .map(|_| cumulo_engine::Observed {
                properties: Map::new(),
                attributes: Map::new(),
            }))
    }

    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        Some(name_or_generated(
            ctx,
            props,
            "LaunchConfigurationName",
            255,
        ))
    }
}

struct ScalingPolicy(Arc<AutoScalingService>);

impl ScalingPolicy {
    fn put(&self, ctx: &ProviderContext, name: &str, props: &Map<String, Value>) -> Answer<Made> {
        let mut body = input(props, &["Cooldown"], &[("PolicyName", json!(name))]);
        if let Some(c) = props.get("Cooldown") {
            body["Cooldown"] = c.clone();
        }
        let out = call(&self.0, ctx, "PutScalingPolicy", body)?;
        let arn = out["PolicyARN"].as_str().unwrap_or("").to_string();
        Ok(Made::new(&arn)
            .with("Arn", arn.as_str())
            .with("PolicyName", name))
    }
}

fn policy_name_of(arn: &str) -> &str {
    arn.rsplit(":policyName/").next().unwrap_or(arn)
}

#[async_trait::async_trait]
impl Declared for ScalingPolicy {
    const ATTRIBUTES: &'static [&'static str] = &["Arn", "PolicyName"];
    const TYPE: &'static str = "AWS::AutoScaling::ScalingPolicy";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AdjustmentType",
        "AutoScalingGroupName",
        "Cooldown",
        "EstimatedInstanceWarmup",
        "MetricAggregationType",
        "MinAdjustmentMagnitude",
        "PolicyType",
        "PredictiveScalingConfiguration",
        "ScalingAdjustment",
        "StepAdjustments",
        "TargetTrackingConfiguration",
    ];
    const NOT_FOUND: &'static [&'static str] = &[];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        self.put(ctx, &ctx.generated_name(255, ""), props)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        arn: &str,
        _: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        self.put(ctx, policy_name_of(arn), new)
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        arn: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let mut body = json!({"PolicyName": arn});
        if let Some(g) = props.get("AutoScalingGroupName") {
            body["AutoScalingGroupName"] = g.clone();
        }
        delete_call(&self.0, ctx, "DeletePolicy", body)
    }
}

/// Scheduled actions, lifecycle hooks and warm pools: one `Put*` call creates and updates,
/// one `Delete*` deletes, keyed by the group and a name. Each declares what differs; [`Put`]
/// is the one provider of them all.
trait PutKind: Send + Sync + 'static {
    const TYPE: &'static str;
    const PROPERTIES: &'static [&'static str];
    const LIMITATION: Option<&'static str> = None;
    const PUT: &'static str;
    const DELETE: &'static str;
    /// The member naming it in `Put*`/`Delete*`; `None` where the group alone names it (a
    /// group's one warm pool), whose Ref is then the group's name.
    const NAME_MEMBER: Option<&'static str>;
    /// The property its name may come from (else the name is generated).
    const NAME_PROPERTY: Option<&'static str> = None;
    /// Its Fn::GetAtt attributes: at most its name, named as `NAME_MEMBER`.
    const ATTRIBUTES: &'static [&'static str] = &[];
    /// The properties that change in place; `None`: every one (the `Put*` call takes all).
    const MUTABLE: Option<&'static [&'static str]> = None;
}

struct Put<K>(Arc<AutoScalingService>, std::marker::PhantomData<fn() -> K>);

impl<K: PutKind> Put<K> {
    fn new(asg: Arc<AutoScalingService>) -> Self {
        Put(asg, std::marker::PhantomData)
    }

    fn name(ctx: &ProviderContext, props: &Map<String, Value>) -> String {
        match (K::NAME_MEMBER, K::NAME_PROPERTY) {
            (None, _) => props
                .get("AutoScalingGroupName")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            (Some(_), Some(key)) => name_or_generated(ctx, props, key, 255),
            (Some(_), None) => ctx.generated_name(255, ""),
        }
    }

    fn put(&self, ctx: &ProviderContext, name: &str, props: &Map<String, Value>) -> Answer<Made> {
        let extra: Vec<(&str, Value)> = K::NAME_MEMBER
            .map(|m| (m, json!(name)))
            .into_iter()
            .collect();
        call(&self.0, ctx, K::PUT, input(props, &[], &extra))?;
        let made = Made::new(name);
        Ok(match K::NAME_MEMBER {
            Some(m) if K::ATTRIBUTES.contains(&m) => made.with(m, name),
            _ => made,
        })
    }
}

#[async_trait::async_trait]
impl<K: PutKind> Declared for Put<K> {
    const ATTRIBUTES: &'static [&'static str] = K::ATTRIBUTES;
    const TYPE: &'static str = K::TYPE;
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = K::PROPERTIES;
    const NOT_FOUND: &'static [&'static str] = &[];
    const LIMITATION: Option<&'static str> = K::LIMITATION;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        self.put(ctx, &Self::name(ctx, props), props)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        name: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        if let Some(mutable) = K::MUTABLE {
            refuse_other_changes(Self::TYPE, old, new, mutable)?;
        }
        self.put(ctx, name, new)
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        name: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let body = match K::NAME_MEMBER {
            Some(m) => {
                let mut body = json!({"AutoScalingGroupName": props.get("AutoScalingGroupName")});
                body[m] = json!(name);
                body
            }
            None => json!({"AutoScalingGroupName": name}),
        };
        delete_call(&self.0, ctx, K::DELETE, body)
    }

    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        K::NAME_PROPERTY.map(|_| Self::name(ctx, props))
    }
}

struct ScheduledAction;

impl PutKind for ScheduledAction {
    const TYPE: &'static str = "AWS::AutoScaling::ScheduledAction";
    const PROPERTIES: &'static [&'static str] = &[
        "AutoScalingGroupName",
        "DesiredCapacity",
        "EndTime",
        "MaxSize",
        "MinSize",
        "Recurrence",
        "StartTime",
        "TimeZone",
    ];
    const PUT: &'static str = "PutScheduledUpdateGroupAction";
    const DELETE: &'static str = "DeleteScheduledAction";
    const NAME_MEMBER: Option<&'static str> = Some("ScheduledActionName");
    const ATTRIBUTES: &'static [&'static str] = &["ScheduledActionName"];
}

struct LifecycleHook;

impl PutKind for LifecycleHook {
    const TYPE: &'static str = "AWS::AutoScaling::LifecycleHook";
    const PROPERTIES: &'static [&'static str] = &[
        "AutoScalingGroupName",
        "DefaultResult",
        "HeartbeatTimeout",
        "LifecycleHookName",
        "LifecycleTransition",
        "NotificationMetadata",
        "NotificationTargetARN",
        "RoleARN",
    ];
    const PUT: &'static str = "PutLifecycleHook";
    const DELETE: &'static str = "DeleteLifecycleHook";
    const NAME_MEMBER: Option<&'static str> = Some("LifecycleHookName");
    const NAME_PROPERTY: Option<&'static str> = Some("LifecycleHookName");
    const MUTABLE: Option<&'static [&'static str]> = Some(&[
        "DefaultResult",
        "HeartbeatTimeout",
        "LifecycleTransition",
        "NotificationMetadata",
        "NotificationTargetARN",
        "RoleARN",
    ]);
}

struct WarmPool;

impl PutKind for WarmPool {
    const TYPE: &'static str = "AWS::AutoScaling::WarmPool";
    const PROPERTIES: &'static [&'static str] = &[
        "AutoScalingGroupName",
        "InstanceReusePolicy",
        "MaxGroupPreparedCapacity",
        "MinSize",
        "PoolState",
    ];
    const LIMITATION: Option<&'static str> =
        Some("cumulo: the warm pool's configuration is kept; it holds no instances");
    const PUT: &'static str = "PutWarmPool";
    const DELETE: &'static str = "DeleteWarmPool";
    const NAME_MEMBER: Option<&'static str> = None;
}
