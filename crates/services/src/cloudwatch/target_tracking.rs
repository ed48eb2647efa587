//! The CloudWatch alarms a target-tracking scaling policy owns, made as both of AWS's scalers
//! (EC2 Auto Scaling and Application Auto Scaling) make them: `TargetTracking-<resource>-
//! AlarmHigh-<uuid>` (3 of 3 one-minute datapoints above the target) and `-AlarmLow-` (15 of 15
//! below 90% of it, unless scale-in is disabled), each with the policy as its action and
//! "DO NOT EDIT OR DELETE" in its description. A policy's update keeps its alarms' names.

use super::CloudWatchService;
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

/// The alarm members naming a metric the scaler predefines (`ASGAverageCPUUtilization`, ...).
pub fn predefined(
    namespace: &str,
    name: &str,
    dimensions: Value,
    statistic: &str,
) -> Map<String, Value> {
    Map::from_iter([
        ("Namespace".to_string(), json!(namespace)),
        ("MetricName".to_string(), json!(name)),
        ("Dimensions".to_string(), dimensions),
        ("Statistic".to_string(), json!(statistic)),
        ("Period".to_string(), json!(60)),
    ])
}

/// The alarm members of a configuration's `CustomizedMetricSpecification`: one metric
/// (`Namespace`, `MetricName`, `Dimensions`, `Statistic`, `Unit`), or metric-math `Metrics`;
/// `None` when the configuration names a predefined metric instead.
pub fn customized(cfg: &Value) -> Option<Map<String, Value>> {
    let c = cfg
        .get("CustomizedMetricSpecification")
        .filter(|v| !v.is_null())?;
    let mut out = Map::new();
    if let Some(queries) = c["Metrics"].as_array().filter(|m| !m.is_empty()) {
        let queries: Vec<Value> = queries
            .iter()
            .map(|q| {
                let mut q = q.clone();
                if q.get("MetricStat").is_some_and(Value::is_object) {
                    q["MetricStat"]["Period"] = json!(60);
                }
                q
            })
            .collect();
        out.insert("Metrics".into(), json!(queries));
        return Some(out);
    }
    for k in ["Namespace", "MetricName", "Unit"] {
        if let Some(v) = c.get(k).filter(|v| !v.is_null()) {
            out.insert(k.into(), v.clone());
        }
    }
    out.insert(
        "Dimensions".into(),
        c.get("Dimensions").cloned().unwrap_or(json!([])),
    );
    out.insert(
        "Statistic".into(),
        json!(c["Statistic"].as_str().unwrap_or("Average")),
    );
    out.insert("Period".into(), json!(60));
    Some(out)
}

/// Makes (or updates, keeping the names in `old`) the alarms of the policy `policy_arn` on
/// `resource` (the scaler's name for what it scales), tracking `metric` at `cfg`'s
/// `TargetValue`; answers them as the policy's `Alarms` (`AlarmName`, `AlarmARN`).
pub fn put_alarms(
    cloudwatch: &CloudWatchService,
    region: &str,
    resource: &str,
    cfg: &Value,
    metric: &Map<String, Value>,
    policy_arn: &str,
    old: &[String],
) -> Result<Vec<Value>, AwsError> {
    let target = cfg["TargetValue"].as_f64().unwrap_or(0.0);
    let mut made = Vec::new();
    let kinds: &[(&str, &str, f64, i64)] = &[
        ("AlarmHigh", "GreaterThanThreshold", target, 3),
        ("AlarmLow", "LessThanThreshold", target * 0.9, 15),
    ];
    for (suffix, op, threshold, periods) in kinds {
        if *suffix == "AlarmLow" && cfg["DisableScaleIn"].as_bool() == Some(true) {
            continue;
        }
        let marker = format!("TargetTracking-{resource}-{suffix}-");
        let name = old
            .iter()
            .find(|o| o.starts_with(&marker))
            .cloned()
            .unwrap_or_else(|| format!("{marker}{}", uuid::Uuid::new_v4()));
        let mut input = json!({
            "AlarmName": name,
            "AlarmDescription": format!("DO NOT EDIT OR DELETE. For TargetTrackingScaling policy {policy_arn}."),
            "ActionsEnabled": true,
            "AlarmActions": [policy_arn],
            "EvaluationPeriods": periods,
            "DatapointsToAlarm": periods,
            "Threshold": threshold,
            "ComparisonOperator": op,
        });
        for (k, v) in metric {
            input[k] = v.clone();
        }
        cloudwatch.call(region, "PutMetricAlarm", &input)?;
        made.push(json!({"AlarmName": name, "AlarmARN": cloudwatch.alarm_arn(region, &name)}));
    }
    Ok(made)
}

/// The alarm names of a policy's `Alarms`.
pub fn alarm_names(policy: &Value) -> Vec<String> {
    policy["Alarms"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["AlarmName"].as_str().map(str::to_string))
        .collect()
}

/// The names in `old` that `made` no longer has (the policy stopped tracking, or disabled
/// scale-in): the alarms to delete.
pub fn stale(old: Vec<String>, made: &[Value]) -> Vec<String> {
    old.into_iter()
        .filter(|o| !made.iter().any(|a| a["AlarmName"].as_str() == Some(o)))
        .collect()
}

/// Deletes a policy's alarms; one someone already deleted is gone either way.
pub fn delete_alarms(cloudwatch: &CloudWatchService, region: &str, names: &[String]) {
    for n in names {
        let _ = cloudwatch.call(region, "DeleteAlarms", &json!({"AlarmNames": [n]}));
    }
}
