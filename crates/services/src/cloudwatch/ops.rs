//! CloudWatch's operations as AWS's logic over JSON in the API's member names: every protocol
//! (CBOR, JSON, query) decodes into these and encodes what they answer. Each checks its input
//! before it changes anything and lists what it changed as [`Write`]s.

use super::alarms::{self, ALARM, INSUFFICIENT, OK, Rule, Verdict};
use super::metrics::{self, Datum, MetricKey, Stat};
use super::queries::{self, check_period, invalid};
use super::state::{Alarm, Dashboard, Region, State, Write};
use cumulo_wire::AwsError;
use http::StatusCode;
use serde_json::{Map, Value, json};

/// Who is asking, where and when.
pub struct Call<'a> {
    pub region: &'a str,
    pub account: &'a str,
    pub now: f64,
}

/// Every operation cumulo implements, by name.
pub fn dispatch(
    s: &mut State,
    c: &Call<'_>,
    op: &str,
    input: &Value,
    w: &mut Vec<Write>,
) -> Option<Result<Value, AwsError>> {
    match op {
        "PutDashboard" => return Some(put_dashboard(s, c, input, w)),
        "GetDashboard" => return Some(get_dashboard(s, c, input)),
        "ListDashboards" => return Some(list_dashboards(s, c, input)),
        "DeleteDashboards" => return Some(delete_dashboards(s, input, w)),
        _ => {}
    }
    let r = s.regions.entry(c.region.to_string()).or_default();
    Some(match op {
        "PutMetricData" => put_metric_data(r, c, input, w),
        "GetMetricData" => get_metric_data(r, c, input),
        "GetMetricStatistics" => get_metric_statistics(r, input),
        "ListMetrics" => list_metrics(r, c, input),
        "PutMetricAlarm" => put_metric_alarm(r, c, input, w),
        "PutCompositeAlarm" => put_composite_alarm(r, c, input, w),
        "DescribeAlarms" => {
            refresh(r, c, None, w);
            describe_alarms(r, c, input)
        }
        "DescribeAlarmsForMetric" => {
            refresh(r, c, None, w);
            describe_alarms_for_metric(r, input)
        }
        "DeleteAlarms" => delete_alarms(r, c, input, w),
        "SetAlarmState" => set_alarm_state(r, c, input, w),
        "EnableAlarmActions" => actions_enabled(r, input, true, w, c),
        "DisableAlarmActions" => actions_enabled(r, input, false, w, c),
        "DescribeAlarmHistory" => {
            refresh(r, c, None, w);
            describe_alarm_history(r, input)
        }
        "TagResource" => tag_resource(r, c, input, w),
        "UntagResource" => untag_resource(r, c, input, w),
        "ListTagsForResource" => list_tags(r, c, input),
        _ => return None,
    })
}

// ---- input helpers ----

fn missing(name: &str) -> AwsError {
    AwsError::bad_request(
        "MissingParameter",
        format!("The parameter {name} is required."),
    )
}

fn required<'a>(input: &'a Value, name: &str) -> Result<&'a str, AwsError> {
    input[name].as_str().ok_or_else(|| missing(name))
}

fn one_of(field: &str, value: &str, set: &[&str]) -> Result<(), AwsError> {
    if set.contains(&value) {
        return Ok(());
    }
    Err(AwsError::validation(format!(
        "1 validation error detected: Value '{value}' at '{field}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
        set.join(", ")
    )))
}

/// A timestamp member as epoch seconds: a number (JSON, CBOR) or ISO 8601 text (query).
fn time(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(t) => t.parse::<f64>().ok().or_else(|| {
            chrono::DateTime::parse_from_rfc3339(t)
                .ok()
                .map(|d| d.timestamp_millis() as f64 / 1000.0)
                .or_else(|| {
                    chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f")
                        .ok()
                        .map(|d| d.and_utc().timestamp_millis() as f64 / 1000.0)
                })
        }),
        _ => None,
    }
}

fn required_time(input: &Value, name: &str) -> Result<f64, AwsError> {
    match input.get(name).filter(|v| !v.is_null()) {
        None => Err(missing(name)),
        Some(v) => time(v)
            .ok_or_else(|| invalid(format!("The value {v} for parameter {name} is invalid."))),
    }
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

fn token(input: &Value) -> Result<usize, AwsError> {
    match input["NextToken"].as_str() {
        None => Ok(0),
        Some(t) => t.parse().map_err(|_| {
            AwsError::bad_request(
                "InvalidNextToken",
                "The service cannot process the request because the NextToken is invalid.",
            )
        }),
    }
}

/// One page of `items` from the request's token, and the next token.
fn page<T: Clone>(items: &[T], from: usize, size: usize) -> (Vec<T>, Option<String>) {
    let end = (from + size).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    (items.get(from..end).unwrap_or_default().to_vec(), next)
}

fn with_token(mut out: Value, next: Option<String>) -> Value {
    if let Some(t) = next {
        out["NextToken"] = Value::String(t);
    }
    out
}

const UNITS: &[&str] = &[
    "Seconds",
    "Microseconds",
    "Milliseconds",
    "Bytes",
    "Kilobytes",
    "Megabytes",
    "Gigabytes",
    "Terabytes",
    "Bits",
    "Kilobits",
    "Megabits",
    "Gigabits",
    "Terabits",
    "Percent",
    "Count",
    "Bytes/Second",
    "Kilobytes/Second",
    "Megabytes/Second",
    "Gigabytes/Second",
    "Terabytes/Second",
    "Bits/Second",
    "Kilobits/Second",
    "Megabits/Second",
    "Gigabits/Second",
    "Terabits/Second",
    "Count/Second",
    "None",
];

const COMPARISONS: &[&str] = &[
    "GreaterThanOrEqualToThreshold",
    "GreaterThanThreshold",
    "LessThanThreshold",
    "LessThanOrEqualToThreshold",
    "LessThanLowerOrGreaterThanUpperThreshold",
    "LessThanLowerThreshold",
    "GreaterThanUpperThreshold",
];

const STATISTICS: &[&str] = &["SampleCount", "Average", "Sum", "Minimum", "Maximum"];

// ---- metrics ----

fn check_dimensions(field: &str, dims: &Value) -> Result<(), AwsError> {
    let list = dims.as_array().map_or(&[][..], Vec::as_slice);
    if list.len() > 30 {
        return Err(invalid(format!(
            "The collection {field} must not have a size greater than 30."
        )));
    }
    for (j, d) in list.iter().enumerate() {
        if d["Name"].as_str().is_none_or(str::is_empty) {
            return Err(missing(&format!("{field}.member.{}.Name", j + 1)));
        }
        if d["Value"].as_str().is_none() {
            return Err(missing(&format!("{field}.member.{}.Value", j + 1)));
        }
    }
    Ok(())
}

fn put_metric_data(
    r: &mut Region,
    c: &Call<'_>,
    input: &Value,
    w: &mut Vec<Write>,
) -> Result<Value, AwsError> {
    let ns = required(input, "Namespace")?;
    if ns.starts_with("AWS/") {
        return Err(invalid(format!(
            "The value {ns} for parameter Namespace is invalid."
        )));
    }
    let data = input["MetricData"]
        .as_array()
        .ok_or_else(|| missing("MetricData"))?;
    if data.len() > 1000 {
        return Err(invalid(
            "The collection MetricData must not have a size greater than 1000.",
        ));
    }
    let mut made = Vec::new();
    for (i, m) in data.iter().enumerate() {
        let f = |name: &str| format!("MetricData.member.{}.{name}", i + 1);
        let combination = |a: &str, b: &str| {
            AwsError::bad_request(
                "InvalidParameterCombination",
                format!(
                    "The parameters {} and {} are mutually exclusive and you have specified both.",
                    f(a),
                    f(b)
                ),
            )
        };
        let name = m["MetricName"]
            .as_str()
            .ok_or_else(|| missing(&f("MetricName")))?;
        check_dimensions(&f("Dimensions"), &m["Dimensions"])?;
        let value = m["Value"].as_f64();
        let values = m["Values"].as_array();
        let set = m.get("StatisticValues").filter(|v| !v.is_null());
        if value.is_some() && values.is_some_and(|v| !v.is_empty()) {
            return Err(combination("Value", "Values"));
        }
        if value.is_some() && set.is_some() {
            return Err(combination("Value", "StatisticValues"));
        }
        if set.is_some() && values.is_some_and(|v| !v.is_empty()) {
            return Err(combination("Values", "StatisticValues"));
        }
        if let Some(u) = m["Unit"].as_str() {
            one_of(&f("Unit"), u, UNITS)?;
        }
        if let Some(res) = m["StorageResolution"].as_i64()
            && res != 1
            && res != 60
        {
            return Err(invalid(format!(
                "The value {res} for parameter {} is invalid. Valid values are 1 and 60.",
                f("StorageResolution")
            )));
        }
        let ts = match m.get("Timestamp").filter(|v| !v.is_null()) {
            None => c.now,
            Some(t) => time(t).ok_or_else(|| {
                invalid(format!(
                    "The value {t} for parameter {} is invalid.",
                    f("Timestamp")
                ))
            })?,
        };
        if ts > c.now + 2.0 * 3600.0 {
            return Err(invalid(format!(
                "The parameter {} must specify a time no more than two hours in the future.",
                f("Timestamp")
            )));
        }
        if ts < c.now - 14.0 * 86400.0 {
            return Err(invalid(format!(
                "The parameter {} must specify a time within the past two weeks.",
                f("Timestamp")
            )));
        }
        let unit = m["Unit"].as_str().map(str::to_string);
        let datum = if let Some(set) = set {
            let get = |k: &str| {
                set[k]
                    .as_f64()
                    .ok_or_else(|| missing(&f(&format!("StatisticValues.{k}"))))
            };
            Datum {
                ts,
                unit,
                count: get("SampleCount")?,
                sum: get("Sum")?,
                min: get("Minimum")?,
                max: get("Maximum")?,
                values: Vec::new(),
            }
        } else {
            let pairs: Vec<(f64, f64)> = match (value, values) {
                (Some(v), _) => vec![(v, 1.0)],
                (None, Some(vs)) if !vs.is_empty() => {
                    let counts = m["Counts"].as_array();
                    if let Some(cs) = counts
                        && cs.len() != vs.len()
                    {
                        return Err(invalid(format!(
                            "The parameters {} and {} must be of the same size.",
                            f("Values"),
                            f("Counts")
                        )));
                    }
                    if vs.len() > 150 {
                        return Err(invalid(format!(
                            "The collection {} must not have a size greater than 150.",
                            f("Values")
                        )));
                    }
                    vs.iter()
                        .enumerate()
                        .map(|(j, v)| {
                            let c = counts.and_then(|cs| cs[j].as_f64()).unwrap_or(1.0);
                            (v.as_f64().unwrap_or(0.0), c)
                        })
                        .collect()
                }
                _ => {
                    return Err(missing(&f("Value")));
                }
            };
            let count: f64 = pairs.iter().map(|p| p.1).sum();
            Datum {
                ts,
                unit,
                count,
                sum: pairs.iter().map(|p| p.0 * p.1).sum(),
                min: pairs.iter().map(|p| p.0).fold(f64::INFINITY, f64::min),
                max: pairs.iter().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max),
                values: pairs,
            }
        };
        let key = MetricKey::new(ns, name, queries::dimensions(&m["Dimensions"]));
        made.push((key, datum));
    }
    let mut touched = Vec::new();
    for (key, d) in made {
        w.push(Write::Datum(c.region.to_string(), key.clone(), d.clone()));
        r.data.entry(key.clone()).or_default().push(d);
        touched.push(key);
    }
    refresh(r, c, Some(&touched), w);
    Ok(json!({}))
}

fn get_metric_data(r: &mut Region, c: &Call<'_>, input: &Value) -> Result<Value, AwsError> {
    let qs = input["MetricDataQueries"]
        .as_array()
        .ok_or_else(|| missing("MetricDataQueries"))?;
    if qs.len() > 500 {
        return Err(invalid(
            "The collection MetricDataQueries must not have a size greater than 500.",
        ));
    }
    let start = required_time(input, "StartTime")?;
    let end = required_time(input, "EndTime")?;
    if start >= end {
        return Err(invalid(
            "The parameter StartTime must be less than the parameter EndTime.",
        ));
    }
    if let Some(scan) = input["ScanBy"].as_str() {
        one_of(
            "scanBy",
            scan,
            &["TimestampDescending", "TimestampAscending"],
        )?;
    }
    let _ = c;
    let answers = queries::run("MetricDataQueries", qs, &r.data, start, end)?;
    let descending = input["ScanBy"].as_str() != Some("TimestampAscending");
    let max = input["MaxDatapoints"].as_i64().unwrap_or(100_800).max(1) as usize;
    let (mut qi, mut vi) = match input["NextToken"].as_str() {
        None => (0, 0),
        Some(t) => t
            .split_once(':')
            .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
            .ok_or_else(|| {
                AwsError::bad_request(
                    "InvalidNextToken",
                    "The service cannot process the request because the NextToken is invalid.",
                )
            })?,
    };
    let shown: Vec<_> = answers.into_iter().filter(|a| a.return_data).collect();
    let mut budget = max;
    let mut results = Vec::new();
    let mut next = None;
    while qi < shown.len() {
        let a = &shown[qi];
        let mut points: Vec<(i64, f64)> = a.series.iter().map(|(t, v)| (*t, *v)).collect();
        if descending {
            points.reverse();
        }
        let rest = points.get(vi..).unwrap_or_default();
        let take = rest.len().min(budget);
        let partial = take < rest.len();
        results.push(json!({
            "Id": a.id,
            "Label": a.label,
            "Timestamps": rest[..take].iter().map(|p| p.0).collect::<Vec<_>>(),
            "Values": rest[..take].iter().map(|p| p.1).collect::<Vec<_>>(),
            "StatusCode": if partial { "PartialData" } else { "Complete" },
        }));
        budget -= take;
        if partial {
            next = Some(format!("{qi}:{}", vi + take));
            break;
        }
        qi += 1;
        vi = 0;
        if budget == 0 && qi < shown.len() {
            next = Some(format!("{qi}:0"));
            break;
        }
    }
    Ok(with_token(
        json!({"MetricDataResults": results, "Messages": []}),
        next,
    ))
}

fn get_metric_statistics(r: &mut Region, input: &Value) -> Result<Value, AwsError> {
    let ns = required(input, "Namespace")?;
    let name = required(input, "MetricName")?;
    let start = required_time(input, "StartTime")?;
    let end = required_time(input, "EndTime")?;
    let period = input["Period"].as_i64().ok_or_else(|| missing("Period"))?;
    check_period("Period", period)?;
    let stats = strings(&input["Statistics"]);
    let extended = strings(&input["ExtendedStatistics"]);
    if stats.is_empty() && extended.is_empty() {
        return Err(missing("Statistics"));
    }
    if !stats.is_empty() && !extended.is_empty() {
        return Err(AwsError::bad_request(
            "InvalidParameterCombination",
            "The parameters Statistics and ExtendedStatistics are mutually exclusive and you have specified both.",
        ));
    }
    for s in &stats {
        one_of("statistics", s, STATISTICS)?;
    }
    for s in &extended {
        if !matches!(Stat::parse(s), Some(Stat::Percentile(_))) {
            return Err(invalid(format!(
                "The value {s} for parameter ExtendedStatistics is not supported."
            )));
        }
    }
    if let Some(u) = input["Unit"].as_str() {
        one_of("unit", u, UNITS)?;
    }
    if start >= end {
        return Err(invalid(
            "The parameter StartTime must be less than the parameter EndTime.",
        ));
    }
    let points = ((end - start) / period as f64).ceil() as i64;
    if points > 1440 {
        return Err(AwsError::bad_request(
            "InvalidParameterCombination",
            format!(
                "You have requested up to {points} datapoints, which exceeds the limit of 1440. You may reduce the datapoints requested by increasing Period, or decreasing the time range."
            ),
        ));
    }
    let key = MetricKey::new(ns, name, queries::dimensions(&input["Dimensions"]));
    let empty = Vec::new();
    let data = r.data.get(&key).unwrap_or(&empty);
    let unit = input["Unit"].as_str();
    let datapoints: Vec<Value> = metrics::statistics(data, start, end, period, unit)
        .into_iter()
        .map(|(t, s, u, ds)| {
            let mut p = json!({"Timestamp": t, "Unit": u.unwrap_or_else(|| "None".into())});
            for st in &stats {
                p[st.as_str()] = json!(match st.as_str() {
                    "SampleCount" => s.count,
                    "Average" => s.sum / s.count,
                    "Sum" => s.sum,
                    "Minimum" => s.min,
                    _ => s.max,
                });
            }
            if !extended.is_empty() {
                let ext: Map<String, Value> = extended
                    .iter()
                    .filter_map(|e| {
                        let v = metrics::pick(Stat::parse(e)?, &ds)?;
                        Some((e.clone(), json!(v)))
                    })
                    .collect();
                p["ExtendedStatistics"] = Value::Object(ext);
            }
            p
        })
        .collect();
    Ok(json!({"Label": name, "Datapoints": datapoints}))
}

fn list_metrics(r: &mut Region, c: &Call<'_>, input: &Value) -> Result<Value, AwsError> {
    let ns = input["Namespace"].as_str();
    let name = input["MetricName"].as_str();
    let filters: Vec<(String, Option<String>)> = input["Dimensions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["Name"].as_str().unwrap_or("").to_string(),
                d["Value"].as_str().map(str::to_string),
            )
        })
        .collect();
    let recent = match input["RecentlyActive"].as_str() {
        Some(v) => {
            one_of("recentlyActive", v, &["PT3H"])?;
            Some(c.now - 3.0 * 3600.0)
        }
        None => None,
    };
    let metrics: Vec<Value> = r
        .data
        .iter()
        .filter(|(k, ds)| {
            ns.is_none_or(|n| n == k.namespace)
                && name.is_none_or(|n| n == k.name)
                && filters.iter().all(|(fname, fval)| {
                    k.dimensions
                        .iter()
                        .any(|(dn, dv)| dn == fname && fval.as_ref().is_none_or(|v| v == dv))
                })
                && recent.is_none_or(|since| ds.iter().any(|d| d.ts >= since))
        })
        .map(|(k, _)| {
            json!({
                "Namespace": k.namespace,
                "MetricName": k.name,
                "Dimensions": k.dimensions.iter().map(|(n, v)| json!({"Name": n, "Value": v})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let (items, next) = page(&metrics, token(input)?, 500);
    Ok(with_token(json!({"Metrics": items}), next))
}

// ---- alarms ----

fn alarm_arn(c: &Call<'_>, name: &str) -> String {
    format!("arn:aws:cloudwatch:{}:{}:alarm:{name}", c.region, c.account)
}

/// One alarm-history item: what happened to which alarm.
struct Entry<'a> {
    name: &'a str,
    composite: bool,
    kind: &'a str,
    summary: String,
    data: Value,
}

fn history(r: &mut Region, c: &Call<'_>, w: &mut Vec<Write>, e: Entry<'_>) {
    let item = json!({
        "AlarmName": e.name,
        "AlarmType": if e.composite { "CompositeAlarm" } else { "MetricAlarm" },
        "Timestamp": c.now,
        "HistoryItemType": e.kind,
        "HistorySummary": e.summary,
        "HistoryData": e.data.to_string(),
    });
    w.push(Write::History(c.region.to_string(), item.clone()));
    r.history.push(item);
}

/// Sets an alarm's state (recording the transition in its history) and writes it.
fn set_state(r: &mut Region, c: &Call<'_>, w: &mut Vec<Write>, name: &str, v: Verdict) {
    let Some(a) = r.alarms.get_mut(name) else {
        return;
    };
    a.evaluated = c.now;
    let old = a.body["StateValue"]
        .as_str()
        .unwrap_or(INSUFFICIENT)
        .to_string();
    let old_reason = a.body["StateReason"].clone();
    let b = &mut a.body;
    b["StateReason"] = json!(v.reason);
    b["StateReasonData"] = json!(v.data.to_string());
    b["StateUpdatedTimestamp"] = json!(c.now);
    let changed = old != v.state;
    if changed {
        b["StateValue"] = json!(v.state);
        b["StateTransitionedTimestamp"] = json!(c.now);
    }
    let composite = a.composite;
    let saved = a.clone();
    w.push(Write::Alarm(
        c.region.to_string(),
        name.to_string(),
        Some(saved),
    ));
    if changed {
        let data = json!({
            "version": "1.0",
            "oldState": {"stateValue": old, "stateReason": old_reason},
            "newState": {"stateValue": v.state, "stateReason": v.reason, "stateReasonData": v.data},
        });
        history(
            r,
            c,
            w,
            Entry {
                name,
                composite,
                kind: "StateUpdate",
                summary: format!("Alarm updated from {old} to {}", v.state),
                data,
            },
        );
    }
}

/// AWS evaluates every alarm once a minute; cumulo evaluates one when asked about it and its
/// last decision is a minute old, and at once when data arrives for its metric. A composite
/// follows its children whenever they are evaluated.
fn refresh(r: &mut Region, c: &Call<'_>, touched: Option<&[MetricKey]>, w: &mut Vec<Write>) {
    let names: Vec<String> = r
        .alarms
        .iter()
        .filter(|(_, a)| !a.composite)
        .filter(|(_, a)| {
            c.now - a.evaluated >= 60.0
                || touched.is_some_and(|ks| ks.iter().any(|k| uses(&a.body, k)))
        })
        .map(|(n, _)| n.clone())
        .collect();
    for name in names {
        let Some(a) = r.alarms.get(&name) else {
            continue;
        };
        // The reason is the last transition's, as on AWS: an evaluation that keeps the state
        // changes nothing but when it ran.
        match alarms::evaluate(&a.body, &r.data, c.now) {
            Some(v) if a.body["StateValue"].as_str() != Some(v.state) => {
                set_state(r, c, w, &name, v)
            }
            _ => {
                if let Some(a) = r.alarms.get_mut(&name) {
                    a.evaluated = c.now;
                }
            }
        }
    }
    evaluate_composites(r, c, w);
}

fn uses(alarm: &Value, k: &MetricKey) -> bool {
    let direct = alarm["MetricName"].as_str() == Some(&k.name)
        && alarm["Namespace"].as_str() == Some(&k.namespace);
    direct
        || alarm["Metrics"].as_array().into_iter().flatten().any(|q| {
            q["MetricStat"]["Metric"]["MetricName"].as_str() == Some(&k.name)
                && q["MetricStat"]["Metric"]["Namespace"].as_str() == Some(&k.namespace)
        })
}

/// The alarm a composite rule names, by name or ARN.
fn child_alarm<'a>(r: &'a Region, c: &Call<'_>, child: &str) -> Option<&'a Alarm> {
    let name = child
        .strip_prefix(&format!(
            "arn:aws:cloudwatch:{}:{}:alarm:",
            c.region, c.account
        ))
        .unwrap_or(child);
    r.alarms.get(name)
}

fn state_of(r: &Region, c: &Call<'_>, child: &str) -> Option<String> {
    child_alarm(r, c, child).and_then(|a| a.body["StateValue"].as_str().map(str::to_string))
}

/// Why a composite moved: the alarm of its rule that transitioned last (the one that moved
/// it), as AWS words it and as its `triggeringAlarms` (recorded against AWS,
/// aws-recordings/cloudwatch `test_trigger_composite_alarm`).
fn composite_cause(r: &Region, c: &Call<'_>, rule: &Rule) -> (String, Value) {
    let cause = rule
        .children()
        .iter()
        .filter_map(|ch| {
            let a = child_alarm(r, c, ch)?;
            let state = a.body["StateValue"].as_str()?.to_string();
            let at = a.body["StateTransitionedTimestamp"].as_f64().unwrap_or(0.0);
            let arn = a.body["AlarmArn"].as_str().unwrap_or(ch).to_string();
            Some((arn, state, at))
        })
        .max_by(|x, y| x.2.total_cmp(&y.2));
    let Some((arn, state, at)) = cause else {
        return (
            "No alarm of the rule exists".to_string(),
            json!({"triggeringAlarms": []}),
        );
    };
    let when = chrono::DateTime::from_timestamp_millis((at * 1000.0) as i64)
        .map(|d| d.format("%A %d %B, %Y %H:%M:%S UTC").to_string())
        .unwrap_or_default();
    (
        format!("{arn} transitioned to {state} at {when}"),
        json!({"triggeringAlarms": [{"arn": arn, "state": {"value": state, "timestamp": alarms::iso(at)}}]}),
    )
}

/// Every composite alarm's state from its rule, composites of composites included (a few
/// passes settle any acyclic nesting).
fn evaluate_composites(r: &mut Region, c: &Call<'_>, w: &mut Vec<Write>) {
    let composites: Vec<String> = r
        .alarms
        .iter()
        .filter(|(_, a)| a.composite)
        .map(|(n, _)| n.clone())
        .collect();
    for _ in 0..composites.len().min(8) {
        let mut changed = false;
        for name in &composites {
            let Some(a) = r.alarms.get(name).filter(|a| c.now >= a.held_until) else {
                continue;
            };
            let Ok(rule) = Rule::parse(a.body["AlarmRule"].as_str().unwrap_or("FALSE")) else {
                continue;
            };
            let holds = rule.holds(&|n| state_of(r, c, n));
            let state = if holds { ALARM } else { OK };
            if a.body["StateValue"].as_str() == Some(state) {
                continue;
            }
            let (reason, data) = composite_cause(r, c, &rule);
            let v = Verdict {
                state,
                reason,
                data,
            };
            set_state(r, c, w, name, v);
            changed = true;
        }
        if !changed {
            break;
        }
    }
}

fn tags_of(input: &Value) -> Result<Vec<(String, String)>, AwsError> {
    input["Tags"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let k = t["Key"]
                .as_str()
                .ok_or_else(|| missing("Tags.member.N.Key"))?;
            Ok((k.to_string(), t["Value"].as_str().unwrap_or("").to_string()))
        })
        .collect()
}

fn common_alarm_fields(input: &Value) -> Result<Map<String, Value>, AwsError> {
    let mut b = Map::new();
    for k in ["AlarmName", "AlarmDescription"] {
        if let Some(v) = input.get(k).filter(|v| !v.is_null()) {
            b.insert(k.into(), v.clone());
        }
    }
    b.insert(
        "ActionsEnabled".into(),
        json!(input["ActionsEnabled"].as_bool().unwrap_or(true)),
    );
    for k in ["OKActions", "AlarmActions", "InsufficientDataActions"] {
        let list = strings(&input[k]);
        if list.len() > 5 {
            return Err(invalid(format!(
                "The collection {k} must not have a size greater than 5."
            )));
        }
        b.insert(k.into(), json!(list));
    }
    Ok(b)
}

fn save_alarm(
    r: &mut Region,
    c: &Call<'_>,
    w: &mut Vec<Write>,
    name: &str,
    mut body: Map<String, Value>,
    composite: bool,
    tags: Vec<(String, String)>,
) {
    body.insert("AlarmArn".into(), json!(alarm_arn(c, name)));
    body.insert("AlarmConfigurationUpdatedTimestamp".into(), json!(c.now));
    let existing = r.alarms.get(name).cloned();
    let alarm = match existing {
        Some(old) => {
            // An update keeps the state and the tags (AWS ignores Tags on an update).
            for k in [
                "StateValue",
                "StateReason",
                "StateReasonData",
                "StateUpdatedTimestamp",
                "StateTransitionedTimestamp",
            ] {
                if let Some(v) = old.body.get(k) {
                    body.insert(k.into(), v.clone());
                }
            }
            Alarm {
                body: Value::Object(body),
                composite,
                tags: old.tags,
                evaluated: 0.0,
                held_until: 0.0,
            }
        }
        None => {
            body.insert("StateValue".into(), json!(INSUFFICIENT));
            body.insert(
                "StateReason".into(),
                json!("Unchecked: Initial alarm creation"),
            );
            body.insert("StateUpdatedTimestamp".into(), json!(c.now));
            body.insert("StateTransitionedTimestamp".into(), json!(c.now));
            Alarm {
                body: Value::Object(body),
                composite,
                tags,
                evaluated: 0.0,
                held_until: 0.0,
            }
        }
    };
    let created = !r.alarms.contains_key(name);
    let summary = format!(
        "Alarm \"{name}\" {}",
        if created { "created" } else { "updated" }
    );
    let data = json!({"type": if created { "Create" } else { "Update" }, "version": "1.0"});
    r.alarms.insert(name.to_string(), alarm.clone());
    w.push(Write::Alarm(
        c.region.to_string(),
        name.to_string(),
        Some(alarm),
    ));
    history(
        r,
        c,
        w,
        Entry {
            name,
            composite,
            kind: "ConfigurationUpdate",
            summary,
            data,
        },
    );
    refresh(r, c, None, w);
}

fn put_metric_alarm(
    r: &mut Region,
    c: &Call<'_>,
    input: &Value,
    w: &mut Vec<Write>,
) -> Result<Value, AwsError> {
    let name = required(input, "AlarmName")?;
    if r.alarms.get(name).is_some_and(|a| a.composite) {
        return Err(invalid(format!(
            "The alarm {name} is a composite alarm and cannot be updated with PutMetricAlarm."
        )));
    }
    let evaluation = input["EvaluationPeriods"]
        .as_i64()
        .ok_or_else(|| missing("EvaluationPeriods"))?;
    if evaluation < 1 {
        return Err(invalid(
            "The parameter EvaluationPeriods must be greater than or equal to 1.",
        ));
    }
    let op = required(input, "ComparisonOperator")?;
    one_of("comparisonOperator", op, COMPARISONS)?;
    if let Some(d) = input["DatapointsToAlarm"].as_i64()
        && (d < 1 || d > evaluation)
    {
        return Err(invalid(
            "DatapointsToAlarm must be between 1 and EvaluationPeriods.",
        ));
    }
    if let Some(t) = input["TreatMissingData"].as_str() {
        one_of(
            "treatMissingData",
            t,
            &["breaching", "notBreaching", "ignore", "missing"],
        )?;
    }
    if let Some(u) = input["Unit"].as_str() {
        one_of("unit", u, UNITS)?;
    }
    let has_metrics = input["Metrics"].as_array().is_some_and(|m| !m.is_empty());
    let single = [
        "MetricName",
        "Namespace",
        "Statistic",
        "ExtendedStatistic",
        "Dimensions",
        "Period",
    ]
    .iter()
    .find(|k| input.get(**k).is_some_and(|v| !v.is_null()));
    if has_metrics {
        if let Some(k) = single {
            return Err(AwsError::bad_request(
                "InvalidParameterCombination",
                format!(
                    "The parameters Metrics and {k} are mutually exclusive and you have specified both."
                ),
            ));
        }
        let qs = input["Metrics"].as_array().map_or(&[][..], Vec::as_slice);
        let returning = qs
            .iter()
            .filter(|q| q["ReturnData"].as_bool().unwrap_or(true))
            .count();
        if returning != 1 {
            return Err(AwsError::validation(
                "Exactly one element of the metrics list should return data.",
            ));
        }
        queries::run("Metrics", qs, &Default::default(), 0.0, 60.0)?;
    } else {
        required(input, "MetricName")?;
        required(input, "Namespace")?;
        let stat = input["Statistic"].as_str();
        let ext = input["ExtendedStatistic"].as_str();
        match (stat, ext) {
            (Some(_), Some(_)) => {
                return Err(AwsError::bad_request(
                    "InvalidParameterCombination",
                    "The parameters Statistic and ExtendedStatistic are mutually exclusive and you have specified both.",
                ));
            }
            (None, None) => {
                return Err(missing("Statistic or ExtendedStatistic"));
            }
            (Some(s), None) => one_of("statistic", s, STATISTICS)?,
            (None, Some(e)) => {
                if !matches!(Stat::parse(e), Some(Stat::Percentile(_))) {
                    return Err(invalid(format!(
                        "The value {e} for parameter ExtendedStatistic is not supported."
                    )));
                }
            }
        }
        let period = input["Period"].as_i64().ok_or_else(|| missing("Period"))?;
        check_period("Period", period)?;
        check_dimensions("Dimensions", &input["Dimensions"])?;
    }
    let anomaly = input["ThresholdMetricId"].as_str().is_some();
    if input["Threshold"].as_f64().is_none() && !anomaly {
        return Err(missing("Threshold"));
    }
    let tags = tags_of(input)?;
    let mut body = common_alarm_fields(input)?;
    for k in [
        "MetricName",
        "Namespace",
        "Statistic",
        "ExtendedStatistic",
        "Period",
        "Unit",
        "EvaluationPeriods",
        "DatapointsToAlarm",
        "ComparisonOperator",
        "TreatMissingData",
        "EvaluateLowSampleCountPercentile",
        "Metrics",
        "ThresholdMetricId",
    ] {
        if let Some(v) = input.get(k).filter(|v| !v.is_null()) {
            body.insert(k.into(), v.clone());
        }
    }
    if let Some(t) = input["Threshold"].as_f64() {
        body.insert("Threshold".into(), json!(t));
    }
    if !has_metrics {
        body.insert(
            "Dimensions".into(),
            input
                .get("Dimensions")
                .filter(|v| !v.is_null())
                .cloned()
                .unwrap_or(json!([])),
        );
    }
    save_alarm(r, c, w, name, body, false, tags);
    Ok(json!({}))
}

fn put_composite_alarm(
    r: &mut Region,
    c: &Call<'_>,
    input: &Value,
    w: &mut Vec<Write>,
) -> Result<Value, AwsError> {
    let name = required(input, "AlarmName")?;
    let rule_text = required(input, "AlarmRule")?;
    if r.alarms.get(name).is_some_and(|a| !a.composite) {
        return Err(invalid(format!(
            "The alarm {name} is a metric alarm and cannot be updated with PutCompositeAlarm."
        )));
    }
    let rule = Rule::parse(rule_text)
        .map_err(|e| AwsError::validation(format!("Error in alarm rule: {e}")))?;
    let unknown: Vec<String> = rule
        .children()
        .into_iter()
        .filter(|ch| state_of(r, c, ch).is_none())
        .collect();
    if !unknown.is_empty() {
        return Err(AwsError::validation(format!(
            "Could not save the composite alarm as alarms [{}] in the alarm rule do not exist",
            unknown.join(", ")
        )));
    }
    if rule
        .children()
        .iter()
        .any(|ch| ch == name || ch.ends_with(&format!(":alarm:{name}")))
    {
        return Err(AwsError::validation(
            "The alarm rule of a composite alarm cannot reference the alarm itself.",
        ));
    }
    let tags = tags_of(input)?;
    let mut body = common_alarm_fields(input)?;
    body.insert("AlarmRule".into(), json!(rule_text));
    for k in [
        "ActionsSuppressor",
        "ActionsSuppressorWaitPeriod",
        "ActionsSuppressorExtensionPeriod",
    ] {
        if let Some(v) = input.get(k).filter(|v| !v.is_null()) {
            body.insert(k.into(), v.clone());
        }
    }
    save_alarm(r, c, w, name, body, true, tags);
    Ok(json!({}))
}

fn children_of(r: &Region, c: &Call<'_>, name: &str) -> Vec<String> {
    r.alarms
        .get(name)
        .filter(|a| a.composite)
        .and_then(|a| Rule::parse(a.body["AlarmRule"].as_str().unwrap_or("")).ok())
        .map(|rule| {
            rule.children()
                .into_iter()
                .map(|ch| {
                    ch.strip_prefix(&format!(
                        "arn:aws:cloudwatch:{}:{}:alarm:",
                        c.region, c.account
                    ))
                    .map_or(ch.clone(), str::to_string)
                })
                .collect()
        })
        .unwrap_or_default()
}

fn describe_alarms(r: &mut Region, c: &Call<'_>, input: &Value) -> Result<Value, AwsError> {
    let names = strings(&input["AlarmNames"]);
    let prefix = input["AlarmNamePrefix"].as_str();
    if !names.is_empty() && prefix.is_some() {
        return Err(AwsError::bad_request(
            "InvalidParameterCombination",
            "The parameters AlarmNames and AlarmNamePrefix are mutually exclusive and you have specified both.",
        ));
    }
    let types = strings(&input["AlarmTypes"]);
    for t in &types {
        one_of("alarmTypes", t, &["CompositeAlarm", "MetricAlarm"])?;
    }
    if let Some(s) = input["StateValue"].as_str() {
        one_of("stateValue", s, &[OK, ALARM, INSUFFICIENT])?;
    }
    let max = input["MaxRecords"].as_i64().unwrap_or(50);
    if !(1..=100).contains(&max) {
        return Err(AwsError::validation(format!(
            "1 validation error detected: Value '{max}' at 'maxRecords' failed to satisfy constraint: Member must have value between 1 and 100"
        )));
    }
    let related: Option<Vec<String>> = if let Some(parent) = input["ChildrenOfAlarmName"].as_str() {
        Some(children_of(r, c, parent))
    } else {
        input["ParentsOfAlarmName"].as_str().map(|child| {
            r.alarms
                .iter()
                .filter(|(n, a)| {
                    a.composite
                        && children_of(r, c, n)
                            .iter()
                            .any(|ch| ch == child || ch.ends_with(&format!(":alarm:{child}")))
                })
                .map(|(n, _)| n.clone())
                .collect()
        })
    };
    let want_metric =
        related.is_some() || types.is_empty() || types.iter().any(|t| t == "MetricAlarm");
    let want_composite = related.is_some() || types.iter().any(|t| t == "CompositeAlarm");
    let state = input["StateValue"].as_str();
    let action = input["ActionPrefix"].as_str();
    let matching: Vec<&Alarm> = r
        .alarms
        .iter()
        .filter(|(n, a)| {
            (if a.composite {
                want_composite
            } else {
                want_metric
            }) && (names.is_empty() || names.contains(n))
                && prefix.is_none_or(|p| n.starts_with(p))
                && related.as_ref().is_none_or(|rel| rel.contains(n))
                && state.is_none_or(|s| a.body["StateValue"].as_str() == Some(s))
                && action.is_none_or(|p| {
                    ["OKActions", "AlarmActions", "InsufficientDataActions"]
                        .iter()
                        .any(|k| strings(&a.body[*k]).iter().any(|x| x.starts_with(p)))
                })
        })
        .map(|(_, a)| a)
        .collect();
    let (items, next) = page(&matching, token(input)?, max as usize);
    let metric: Vec<Value> = items
        .iter()
        .filter(|a| !a.composite)
        .map(|a| a.body.clone())
        .collect();
    let composite: Vec<Value> = items
        .iter()
        .filter(|a| a.composite)
        .map(|a| a.body.clone())
        .collect();
    Ok(with_token(
        json!({"MetricAlarms": metric, "CompositeAlarms": composite}),
        next,
    ))
}

fn describe_alarms_for_metric(r: &mut Region, input: &Value) -> Result<Value, AwsError> {
    let name = required(input, "MetricName")?;
    let ns = required(input, "Namespace")?;
    let dims = input.get("Dimensions").filter(|v| !v.is_null()).map(|d| {
        let mut v = queries::dimensions(d);
        v.sort();
        v
    });
    let found: Vec<Value> = r
        .alarms
        .values()
        .filter(|a| !a.composite)
        .map(|a| &a.body)
        .filter(|b| {
            b["MetricName"].as_str() == Some(name)
                && b["Namespace"].as_str() == Some(ns)
                && ["Statistic", "ExtendedStatistic", "Period", "Unit"]
                    .iter()
                    .all(|k| input.get(*k).is_none_or(|v| v.is_null() || &b[*k] == v))
                && dims.as_ref().is_none_or(|d| {
                    let mut mine = queries::dimensions(&b["Dimensions"]);
                    mine.sort();
                    &mine == d
                })
        })
        .cloned()
        .collect();
    Ok(json!({"MetricAlarms": found}))
}

fn delete_alarms(
    r: &mut Region,
    c: &Call<'_>,
    input: &Value,
    w: &mut Vec<Write>,
) -> Result<Value, AwsError> {
    let names = strings(&input["AlarmNames"]);
    if names.len() > 100 {
        return Err(invalid(
            "The collection AlarmNames must not have a size greater than 100.",
        ));
    }
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| !r.alarms.contains_key(*n))
        .collect();
    if let Some(n) = unknown.first() {
        return Err(AwsError::new(
            StatusCode::NOT_FOUND,
            "ResourceNotFound",
            format!("{n} does not exist"),
        ));
    }
    for n in &names {
        if let Some(a) = r.alarms.remove(n) {
            w.push(Write::Alarm(c.region.to_string(), n.clone(), None));
            history(
                r,
                c,
                w,
                Entry {
                    name: n,
                    composite: a.composite,
                    kind: "ConfigurationUpdate",
                    summary: format!("Alarm \"{n}\" deleted"),
                    data: json!({"type": "Delete", "version": "1.0"}),
                },
            );
        }
    }
    Ok(json!({}))
}

fn set_alarm_state(
    r: &mut Region,
    c: &Call<'_>,
    input: &Value,
    w: &mut Vec<Write>,
) -> Result<Value, AwsError> {
    let name = required(input, "AlarmName")?;
    let state = required(input, "StateValue")?;
    one_of("stateValue", state, &[INSUFFICIENT, ALARM, OK])?;
    let reason = required(input, "StateReason")?;
    let data = match input["StateReasonData"].as_str() {
        None => json!({}),
        Some(t) => serde_json::from_str::<Value>(t).map_err(|_| {
            AwsError::bad_request(
                "InvalidFormat",
                "The value for StateReasonData is not valid JSON.",
            )
        })?,
    };
    if !r.alarms.contains_key(name) {
        return Err(AwsError::new(StatusCode::NOT_FOUND, "ResourceNotFound", ""));
    }
    let state = match state {
        ALARM => ALARM,
        OK => OK,
        _ => INSUFFICIENT,
    };
    set_state(
        r,
        c,
        w,
        name,
        Verdict {
            state,
            reason: reason.to_string(),
            data,
        },
    );
    if let Some(a) = r.alarms.get_mut(name) {
        a.held_until = c.now + 60.0;
        // A state set without data describes none (as recorded against AWS).
        if input["StateReasonData"].is_null()
            && let Some(b) = a.body.as_object_mut()
        {
            b.remove("StateReasonData");
        }
        w.push(Write::Alarm(
            c.region.to_string(),
            name.to_string(),
            Some(a.clone()),
        ));
    }
    evaluate_composites(r, c, w);
    Ok(json!({}))
}

fn actions_enabled(
    r: &mut Region,
    input: &Value,
    on: bool,
    w: &mut Vec<Write>,
    c: &Call<'_>,
) -> Result<Value, AwsError> {
    for n in strings(&input["AlarmNames"]) {
        if let Some(a) = r.alarms.get_mut(&n) {
            a.body["ActionsEnabled"] = json!(on);
            w.push(Write::Alarm(
                c.region.to_string(),
                n.clone(),
                Some(a.clone()),
            ));
        }
    }
    Ok(json!({}))
}

fn describe_alarm_history(r: &mut Region, input: &Value) -> Result<Value, AwsError> {
    let name = input["AlarmName"].as_str();
    let types = strings(&input["AlarmTypes"]);
    let kind = input["HistoryItemType"].as_str();
    if let Some(k) = kind {
        one_of(
            "historyItemType",
            k,
            &[
                "ConfigurationUpdate",
                "StateUpdate",
                "Action",
                "AlarmContributorStateUpdate",
                "AlarmContributorAction",
            ],
        )?;
    }
    let start = input.get("StartDate").and_then(time);
    let end = input.get("EndDate").and_then(time);
    let max = input["MaxRecords"].as_i64().unwrap_or(100).clamp(1, 100) as usize;
    let mut items: Vec<Value> = r
        .history
        .iter()
        .filter(|h| {
            let t = h["Timestamp"].as_f64().unwrap_or(0.0);
            name.is_none_or(|n| h["AlarmName"].as_str() == Some(n))
                && (types.is_empty() || types.iter().any(|x| h["AlarmType"].as_str() == Some(x)))
                && kind.is_none_or(|k| h["HistoryItemType"].as_str() == Some(k))
                && start.is_none_or(|s| t >= s)
                && end.is_none_or(|e| t <= e)
        })
        .cloned()
        .collect();
    if input["ScanBy"].as_str() != Some("TimestampAscending") {
        items.reverse();
    }
    let (items, next) = page(&items, token(input)?, max);
    Ok(with_token(json!({"AlarmHistoryItems": items}), next))
}

// ---- tags ----

fn alarm_of_arn<'a>(r: &'a mut Region, c: &Call<'_>, arn: &str) -> Result<&'a mut Alarm, AwsError> {
    let prefix = format!("arn:aws:cloudwatch:{}:{}:alarm:", c.region, c.account);
    arn.strip_prefix(&prefix)
        .and_then(|n| r.alarms.get_mut(n))
        .ok_or_else(|| {
            AwsError::new(
                StatusCode::NOT_FOUND,
                "ResourceNotFoundException",
                format!("Unknown resource: {arn}"),
            )
        })
}

fn tag_resource(
    r: &mut Region,
    c: &Call<'_>,
    input: &Value,
    w: &mut Vec<Write>,
) -> Result<Value, AwsError> {
    let arn = required(input, "ResourceARN")?;
    let tags = tags_of(input)?;
    let a = alarm_of_arn(r, c, arn)?;
    for (k, v) in tags {
        match a.tags.iter_mut().find(|t| t.0 == k) {
            Some(t) => t.1 = v,
            None => a.tags.push((k, v)),
        }
    }
    let name = a.body["AlarmName"].as_str().unwrap_or("").to_string();
    w.push(Write::Alarm(c.region.to_string(), name, Some(a.clone())));
    Ok(json!({}))
}

fn untag_resource(
    r: &mut Region,
    c: &Call<'_>,
    input: &Value,
    w: &mut Vec<Write>,
) -> Result<Value, AwsError> {
    let arn = required(input, "ResourceARN")?;
    let keys = strings(&input["TagKeys"]);
    let a = alarm_of_arn(r, c, arn)?;
    a.tags.retain(|(k, _)| !keys.contains(k));
    let name = a.body["AlarmName"].as_str().unwrap_or("").to_string();
    w.push(Write::Alarm(c.region.to_string(), name, Some(a.clone())));
    Ok(json!({}))
}

/// An alarm ARN naming no alarm (a deleted one) has no tags rather than being unknown, as
/// recorded against AWS (aws-recordings/cloudwatch `test_tagging_metric_alarm`).
fn list_tags(r: &mut Region, c: &Call<'_>, input: &Value) -> Result<Value, AwsError> {
    let arn = required(input, "ResourceARN")?;
    let prefix = format!("arn:aws:cloudwatch:{}:{}:alarm:", c.region, c.account);
    let a = match alarm_of_arn(r, c, arn) {
        Ok(a) => a,
        Err(_) if arn.starts_with(&prefix) => return Ok(json!({"Tags": []})),
        Err(e) => return Err(e),
    };
    Ok(
        json!({"Tags": a.tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>()}),
    )
}

// ---- dashboards ----

fn dashboard_arn(c: &Call<'_>, name: &str) -> String {
    format!("arn:aws:cloudwatch::{}:dashboard/{name}", c.account)
}

fn dashboard_not_found(name: &str) -> AwsError {
    AwsError::new(
        StatusCode::NOT_FOUND,
        "ResourceNotFound",
        format!("Dashboard {name} does not exist"),
    )
}

fn put_dashboard(
    s: &mut State,
    c: &Call<'_>,
    input: &Value,
    w: &mut Vec<Write>,
) -> Result<Value, AwsError> {
    let name = required(input, "DashboardName")?;
    let body = required(input, "DashboardBody")?;
    if name.is_empty()
        || name.len() > 255
        || !name
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_')
    {
        return Err(invalid(
            "The value for field DashboardName contains invalid characters. It can only contain alphanumerics, dash (-) and underscore (_).\n",
        ));
    }
    let parsed: Result<Value, _> = serde_json::from_str(body);
    // An object whose `widgets`, when present, is a list.
    let problem = match &parsed {
        Ok(Value::Object(m)) => !matches!(m.get("widgets"), Some(Value::Array(_)) | None),
        _ => true,
    };
    if problem {
        return Err(AwsError::bad_request(
            "InvalidParameterInput",
            "The field DashboardBody must be a valid JSON object",
        ));
    }
    let d = Dashboard {
        body: body.to_string(),
        modified: c.now,
    };
    s.dashboards.insert(name.to_string(), d.clone());
    w.push(Write::Dashboard(name.to_string(), Some(d)));
    Ok(json!({"DashboardValidationMessages": []}))
}

fn get_dashboard(s: &mut State, c: &Call<'_>, input: &Value) -> Result<Value, AwsError> {
    let name = required(input, "DashboardName")?;
    let d = s
        .dashboards
        .get(name)
        .ok_or_else(|| dashboard_not_found(name))?;
    Ok(
        json!({"DashboardArn": dashboard_arn(c, name), "DashboardBody": d.body, "DashboardName": name}),
    )
}

fn list_dashboards(s: &mut State, c: &Call<'_>, input: &Value) -> Result<Value, AwsError> {
    let prefix = input["DashboardNamePrefix"].as_str().unwrap_or("");
    let entries: Vec<Value> = s
        .dashboards
        .iter()
        .filter(|(n, _)| n.starts_with(prefix))
        .map(|(n, d)| {
            json!({"DashboardName": n, "DashboardArn": dashboard_arn(c, n), "LastModified": d.modified, "Size": d.body.len()})
        })
        .collect();
    let (items, next) = page(&entries, token(input)?, 1000);
    Ok(with_token(json!({"DashboardEntries": items}), next))
}

fn delete_dashboards(s: &mut State, input: &Value, w: &mut Vec<Write>) -> Result<Value, AwsError> {
    let names = strings(&input["DashboardNames"]);
    if names.is_empty() {
        return Err(missing("DashboardNames"));
    }
    let unknown: Vec<&String> = names
        .iter()
        .filter(|n| !s.dashboards.contains_key(*n))
        .collect();
    if !unknown.is_empty() {
        return Err(AwsError::new(
            StatusCode::NOT_FOUND,
            "ResourceNotFound",
            format!(
                "Dashboard{} {} {} not exist",
                if unknown.len() == 1 { "" } else { "s" },
                unknown
                    .iter()
                    .map(|n| n.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                if unknown.len() == 1 { "does" } else { "do" }
            ),
        ));
    }
    for n in names {
        s.dashboards.remove(&n);
        w.push(Write::Dashboard(n, None));
    }
    Ok(json!({}))
}
