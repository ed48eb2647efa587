//! CloudFormation providers of CloudWatch's types. Their properties carry the API's member
//! names, so each hands them (coerced to the model's types) to the operation the API answers
//! with: AWS::CloudWatch::Alarm to PutMetricAlarm, AWS::CloudWatch::CompositeAlarm to
//! PutCompositeAlarm (both Ref = name, GetAtt Arn; tags kept in step through
//! TagResource/UntagResource), AWS::CloudWatch::Dashboard to PutDashboard (Ref = name).

use super::CloudWatchService;
use crate::providers::declared::{self, Answer, Declared, Made};
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{
    ProviderServices, already_exists, given_or_generated_name, json_text, tags,
};
use cumulo_engine::{Observed, ProviderContext, ProviderError, ProviderRegistry};
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SERVICE: &str = "CloudWatch";

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    declared::register(r, Alarm(s.cloudwatch.clone()));
    declared::register(r, CompositeAlarm(s.cloudwatch.clone()));
    declared::register(r, Dashboard(s.cloudwatch.clone()));
}

/// What differs between the two alarm types.
struct Kind {
    put: &'static str,
    alarm_type: &'static str,
    list: &'static str,
}

const METRIC: Kind = Kind {
    put: "PutMetricAlarm",
    alarm_type: "MetricAlarm",
    list: "MetricAlarms",
};
const COMPOSITE: Kind = Kind {
    put: "PutCompositeAlarm",
    alarm_type: "CompositeAlarm",
    list: "CompositeAlarms",
};

fn live(cw: &CloudWatchService, region: &str, kind: &Kind, name: &str) -> Answer<Option<Value>> {
    let out = cw.call(
        region,
        "DescribeAlarms",
        &json!({"AlarmNames": [name], "AlarmTypes": [kind.alarm_type]}),
    )?;
    Ok(out[kind.list].as_array().and_then(|a| a.first()).cloned())
}

fn put(
    cw: &CloudWatchService,
    ctx: &ProviderContext,
    kind: &Kind,
    name: &str,
    props: &Map<String, Value>,
) -> Answer<Made> {
    let mut input: Map<String, Value> = props
        .iter()
        .filter(|(k, _)| k.as_str() != "Tags")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    input.insert("AlarmName".into(), json!(name));
    let input = CloudWatchService::coerce(kind.put, Value::Object(input));
    cw.call(&ctx.region, kind.put, &input)?;
    retag(cw, ctx, name, props)?;
    Ok(Made::new(name).with("Arn", cw.alarm_arn(&ctx.region, name)))
}

/// Brings the alarm's tags to the template's (with the system tags on a create).
fn retag(
    cw: &CloudWatchService,
    ctx: &ProviderContext,
    name: &str,
    props: &Map<String, Value>,
) -> Answer<()> {
    let arn = cw.alarm_arn(&ctx.region, name);
    let out = cw.call(
        &ctx.region,
        "ListTagsForResource",
        &json!({"ResourceARN": arn}),
    )?;
    let live: Vec<(String, String)> = out["Tags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some((
                t["Key"].as_str()?.to_string(),
                t["Value"].as_str()?.to_string(),
            ))
        })
        .collect();
    let mut wanted = tags(ctx, props)?;
    for (k, v) in system_tags(ctx) {
        if !wanted.iter().any(|(w, _)| *w == k) {
            wanted.push((k, v));
        }
    }
    let change = TagChange::between(live.iter().map(|(k, v)| (k, v)), &wanted);
    if !change.remove.is_empty() {
        cw.call(
            &ctx.region,
            "UntagResource",
            &json!({"ResourceARN": arn, "TagKeys": change.remove}),
        )?;
    }
    if !change.set.is_empty() {
        let set: Vec<Value> = change
            .set
            .into_iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect();
        cw.call(
            &ctx.region,
            "TagResource",
            &json!({"ResourceARN": arn, "Tags": set}),
        )?;
    }
    Ok(())
}

fn create_alarm(
    cw: &CloudWatchService,
    ctx: &ProviderContext,
    kind: &Kind,
    props: &Map<String, Value>,
) -> Answer<Made> {
    let name = given_or_generated_name(ctx, props, "AlarmName", 255)?;
    // An alarm of either kind holds the name.
    if live(cw, &ctx.region, &METRIC, &name)?.is_some()
        || live(cw, &ctx.region, &COMPOSITE, &name)?.is_some()
    {
        return Err(already_exists(ctx, &name).into());
    }
    put(cw, ctx, kind, &name, props)
}

fn read_alarm(
    cw: &CloudWatchService,
    ctx: &ProviderContext,
    kind: &Kind,
    id: &str,
) -> Answer<Option<Observed>> {
    let Some(body) = live(cw, &ctx.region, kind, id)? else {
        return Ok(None);
    };
    Ok(Some(Observed {
        attributes: Map::from_iter([("Arn".into(), body["AlarmArn"].clone())]),
        ..Default::default()
    }))
}

fn delete_alarm(cw: &CloudWatchService, ctx: &ProviderContext, id: &str) -> Answer<()> {
    cw.call(&ctx.region, "DeleteAlarms", &json!({"AlarmNames": [id]}))?;
    Ok(())
}

struct Alarm(Arc<CloudWatchService>);

#[async_trait::async_trait]
impl Declared for Alarm {
    const ATTRIBUTES: &'static [&'static str] = &["Arn"];
    const TYPE: &'static str = "AWS::CloudWatch::Alarm";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "ActionsEnabled",
        "AlarmActions",
        "AlarmDescription",
        "AlarmName",
        "ComparisonOperator",
        "DatapointsToAlarm",
        "Dimensions",
        "EvaluateLowSampleCountPercentile",
        "EvaluationPeriods",
        "ExtendedStatistic",
        "InsufficientDataActions",
        "MetricName",
        "Metrics",
        "Namespace",
        "OKActions",
        "Period",
        "Statistic",
        "Tags",
        "Threshold",
        "ThresholdMetricId",
        "TreatMissingData",
        "Unit",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "EvaluationCriteria",
            "cumulo does not evaluate PromQL alarms",
        ),
        (
            "EvaluationInterval",
            "cumulo does not evaluate PromQL alarms",
        ),
    ];
    const NOT_FOUND: &'static [&'static str] = &["ResourceNotFound"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        create_alarm(&self.0, ctx, &METRIC, props)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        put(&self.0, ctx, &METRIC, id, new)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        delete_alarm(&self.0, ctx, id)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        read_alarm(&self.0, ctx, &METRIC, id)
    }

    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        given_or_generated_name(ctx, props, "AlarmName", 255).ok()
    }
}

struct CompositeAlarm(Arc<CloudWatchService>);

#[async_trait::async_trait]
impl Declared for CompositeAlarm {
    const ATTRIBUTES: &'static [&'static str] = &["Arn"];
    const TYPE: &'static str = "AWS::CloudWatch::CompositeAlarm";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "ActionsEnabled",
        "ActionsSuppressor",
        "ActionsSuppressorExtensionPeriod",
        "ActionsSuppressorWaitPeriod",
        "AlarmActions",
        "AlarmDescription",
        "AlarmName",
        "AlarmRule",
        "InsufficientDataActions",
        "OKActions",
        "Tags",
    ];
    const NOT_FOUND: &'static [&'static str] = &["ResourceNotFound"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        create_alarm(&self.0, ctx, &COMPOSITE, props)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        put(&self.0, ctx, &COMPOSITE, id, new)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        delete_alarm(&self.0, ctx, id)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        read_alarm(&self.0, ctx, &COMPOSITE, id)
    }

    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        given_or_generated_name(ctx, props, "AlarmName", 255).ok()
    }
}

struct Dashboard(Arc<CloudWatchService>);

impl Dashboard {
    fn put(&self, ctx: &ProviderContext, name: &str, props: &Map<String, Value>) -> Answer<Made> {
        let body = json_text(props, "DashboardBody")?.ok_or_else(|| {
            ProviderError::Failed(
                "Properties validation failed for resource with message: #: required key [DashboardBody] not found".into(),
            )
        })?;
        self.0.call(
            &ctx.region,
            "PutDashboard",
            &json!({"DashboardName": name, "DashboardBody": body}),
        )?;
        Ok(Made::new(name))
    }
}

#[async_trait::async_trait]
impl Declared for Dashboard {
    const ATTRIBUTES: &'static [&'static str] = &[];
    const TYPE: &'static str = "AWS::CloudWatch::Dashboard";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["DashboardBody", "DashboardName"];
    const NOT_FOUND: &'static [&'static str] = &["ResourceNotFound"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = given_or_generated_name(ctx, props, "DashboardName", 255)?;
        let exists = self
            .0
            .call(&ctx.region, "GetDashboard", &json!({"DashboardName": name}));
        if exists.is_ok() {
            return Err(already_exists(ctx, &name).into());
        }
        self.put(ctx, &name, props)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        self.put(ctx, id, new)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        self.0.call(
            &ctx.region,
            "DeleteDashboards",
            &json!({"DashboardNames": [id]}),
        )?;
        Ok(())
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        self.0
            .call(&ctx.region, "GetDashboard", &json!({"DashboardName": id}))?;
        Ok(Some(Observed::default()))
    }

    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        given_or_generated_name(ctx, props, "DashboardName", 255).ok()
    }
}
