//! CloudFormation providers of Application Auto Scaling's types, over the API's operations
//! (the properties carry the API's member names). AWS::ApplicationAutoScaling::ScalableTarget's
//! Ref is AWS's `<ResourceId>|<ScalableDimension>|<ServiceNamespace>` (also GetAtt Id), and its
//! ScheduledActions are the target's scheduled actions; AWS::ApplicationAutoScaling::
//! ScalingPolicy's Ref and GetAtt Arn are the policy ARN, its target named by ScalingTargetId
//! (that Ref) or by the three fields.

use super::AutoScalingService;
use crate::providers::ProviderServices;
use crate::providers::declared::{self, Answer, Declared, Made};
use cumulo_engine::{Observed, ProviderContext, ProviderError, ProviderRegistry};
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SERVICE: &str = "ApplicationAutoScaling";
const NUMBERS: &[&str] = &[
    "MinCapacity",
    "MaxCapacity",
    "TargetValue",
    "ScaleInCooldown",
    "ScaleOutCooldown",
    "Cooldown",
    "MinAdjustmentMagnitude",
    "ScalingAdjustment",
    "MetricIntervalLowerBound",
    "MetricIntervalUpperBound",
];
const BOOLEANS: &[&str] = &[
    "DisableScaleIn",
    "DynamicScalingInSuspended",
    "DynamicScalingOutSuspended",
    "ScheduledScalingSuspended",
];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    declared::register(r, ScalableTarget(s.applicationautoscaling.clone()));
    declared::register(r, ScalingPolicy(s.applicationautoscaling.clone()));
}

/// `v` with the numbers and booleans a template may give as text (through parameters) typed.
fn typed(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = match v {
                        Value::String(t) if NUMBERS.contains(&k.as_str()) => t
                            .parse::<f64>()
                            .ok()
                            .and_then(|f| {
                                if f.fract() == 0.0 && k != "TargetValue" {
                                    Some(json!(f as i64))
                                } else {
                                    serde_json::Number::from_f64(f).map(Value::Number)
                                }
                            })
                            .unwrap_or_else(|| v.clone()),
                        Value::String(t) if BOOLEANS.contains(&k.as_str()) => {
                            json!(t.eq_ignore_ascii_case("true"))
                        }
                        other => typed(other),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(typed).collect()),
        other => other.clone(),
    }
}

fn target_fields(id: &str) -> Option<Value> {
    let mut parts = id.split('|');
    let (r, d, n) = (parts.next()?, parts.next()?, parts.next()?);
    Some(json!({"ResourceId": r, "ScalableDimension": d, "ServiceNamespace": n}))
}

struct ScalableTarget(Arc<AutoScalingService>);

impl ScalableTarget {
    fn apply(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
        old: Option<&Map<String, Value>>,
    ) -> Answer<Made> {
        let props = typed(&Value::Object(props.clone()));
        let mut input = props.clone();
        if let Some(m) = input.as_object_mut() {
            m.remove("ScheduledActions");
        }
        self.0.call(&ctx.region, "RegisterScalableTarget", &input)?;
        let key = |k: &str| props[k].clone();
        let base = json!({"ServiceNamespace": key("ServiceNamespace"), "ResourceId": key("ResourceId"), "ScalableDimension": key("ScalableDimension")});
        let wanted: Vec<Value> = props["ScheduledActions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let name_of = |a: &Value| a["ScheduledActionName"].as_str().map(str::to_string);
        for gone in old
            .and_then(|o| o.get("ScheduledActions"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(name_of)
            .filter(|n| !wanted.iter().any(|w| name_of(w).as_deref() == Some(n)))
        {
            let mut del = base.clone();
            del["ScheduledActionName"] = json!(gone);
            self.0.call(&ctx.region, "DeleteScheduledAction", &del)?;
        }
        for a in &wanted {
            let mut put = base.clone();
            for (k, v) in a.as_object().into_iter().flatten() {
                put[k] = v.clone();
            }
            self.0.call(&ctx.region, "PutScheduledAction", &put)?;
        }
        let id = format!(
            "{}|{}|{}",
            props["ResourceId"].as_str().unwrap_or(""),
            props["ScalableDimension"].as_str().unwrap_or(""),
            props["ServiceNamespace"].as_str().unwrap_or("")
        );
        Ok(Made::new(id.clone()).with("Id", id))
    }
}

#[async_trait::async_trait]
impl Declared for ScalableTarget {
    const ATTRIBUTES: &'static [&'static str] = &["Id"];
    const TYPE: &'static str = "AWS::ApplicationAutoScaling::ScalableTarget";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "MaxCapacity",
        "MinCapacity",
        "ResourceId",
        "RoleARN",
        "ScalableDimension",
        "ScheduledActions",
        "ServiceNamespace",
        "SuspendedState",
    ];
    const NOT_FOUND: &'static [&'static str] = &["ObjectNotFoundException"];
    const LIMITATION: Option<&'static str> =
        Some("cumulo: the target is recorded; no scaling acts on it");

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        self.apply(ctx, props, None)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        _: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        self.apply(ctx, new, Some(old))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        let input = target_fields(id).ok_or_else(|| ProviderError::NotFound(id.to_string()))?;
        self.0
            .call(&ctx.region, "DeregisterScalableTarget", &input)?;
        Ok(())
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let Some(f) = target_fields(id) else {
            return Ok(None);
        };
        let out = self.0.call(
            &ctx.region,
            "DescribeScalableTargets",
            &json!({"ServiceNamespace": f["ServiceNamespace"], "ResourceIds": [f["ResourceId"]], "ScalableDimension": f["ScalableDimension"]}),
        )?;
        Ok(out["ScalableTargets"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
            .then(|| Observed {
                attributes: Map::from_iter([("Id".into(), json!(id))]),
                ..Default::default()
            }))
    }
}

struct ScalingPolicy(Arc<AutoScalingService>);

impl ScalingPolicy {
    /// The PutScalingPolicy input: the properties with the target's three fields (from
    /// ScalingTargetId when given).
    fn input(ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Value> {
        let mut input = typed(&Value::Object(props.clone()));
        let m = input
            .as_object_mut()
            .ok_or_else(|| ProviderError::Failed("Properties must be an object".into()))?;
        if let Some(id) = m.remove("ScalingTargetId") {
            let f = id.as_str().and_then(target_fields).ok_or_else(|| {
                ProviderError::Failed(format!(
                    "Resource handler returned message: \"Invalid ScalingTargetId {id}\" (RequestToken: {}, HandlerErrorCode: InvalidRequest)",
                    ctx.client_request_token
                ))
            })?;
            for (k, v) in f.as_object().into_iter().flatten() {
                m.insert(k.clone(), v.clone());
            }
        }
        Ok(input)
    }

    fn put(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let input = Self::input(ctx, props)?;
        let out = self.0.call(&ctx.region, "PutScalingPolicy", &input)?;
        let arn = out["PolicyARN"].as_str().unwrap_or("").to_string();
        Ok(Made::new(arn.clone()).with("Arn", arn))
    }
}

#[async_trait::async_trait]
impl Declared for ScalingPolicy {
    const ATTRIBUTES: &'static [&'static str] = &["Arn"];
    const TYPE: &'static str = "AWS::ApplicationAutoScaling::ScalingPolicy";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "PolicyName",
        "PolicyType",
        "ResourceId",
        "ScalableDimension",
        "ScalingTargetId",
        "ServiceNamespace",
        "StepScalingPolicyConfiguration",
        "TargetTrackingScalingPolicyConfiguration",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "PredictiveScalingPolicyConfiguration",
        "cumulo does not emulate predictive scaling",
    )];
    const NOT_FOUND: &'static [&'static str] = &["ObjectNotFoundException"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        self.put(ctx, props)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        _: &str,
        _: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        self.put(ctx, new)
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        _: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let input = Self::input(ctx, props)?;
        let del = json!({
            "PolicyName": input["PolicyName"], "ServiceNamespace": input["ServiceNamespace"],
            "ResourceId": input["ResourceId"], "ScalableDimension": input["ScalableDimension"],
        });
        self.0.call(&ctx.region, "DeleteScalingPolicy", &del)?;
        Ok(())
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let input = Self::input(ctx, props)?;
        let out = self.0.call(
            &ctx.region,
            "DescribeScalingPolicies",
            &json!({"ServiceNamespace": input["ServiceNamespace"], "ResourceId": input["ResourceId"], "PolicyNames": [input["PolicyName"]]}),
        )?;
        let found = out["ScalingPolicies"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|p| p["PolicyARN"].as_str() == Some(id));
        Ok(found.then(|| Observed {
            attributes: Map::from_iter([("Arn".into(), json!(id))]),
            ..Default::default()
        }))
    }
}
