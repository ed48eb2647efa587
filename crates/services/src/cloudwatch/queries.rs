//! MetricDataQueries (GetMetricData and metric-math alarms): each MetricStat query aggregated
//! over the period grid, then each Expression evaluated over those, in the order given.

use super::math::{self, Env, Val};
use super::metrics::{self, Datum, MetricKey, Series, Stat};
use cumulo_wire::AwsError;
use serde_json::Value;
use std::collections::BTreeMap;

/// One query's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub id: String,
    pub label: String,
    pub series: Series,
    pub return_data: bool,
}

pub fn invalid(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("InvalidParameterValue", message)
}

/// The metric a `Metric` structure names.
pub fn metric_key(metric: &Value) -> MetricKey {
    MetricKey::new(
        metric["Namespace"].as_str().unwrap_or(""),
        metric["MetricName"].as_str().unwrap_or(""),
        dimensions(&metric["Dimensions"]),
    )
}

pub fn dimensions(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["Name"].as_str().unwrap_or("").to_string(),
                d["Value"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn valid_id(id: &str) -> bool {
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The period a query's values are on: its MetricStat's, else its own, else `default`.
pub fn period_of(q: &Value, default: i64) -> i64 {
    q["MetricStat"]["Period"]
        .as_i64()
        .or_else(|| q["Period"].as_i64())
        .unwrap_or(default)
}

/// Runs `queries` over `[start, end)`; `field` names the list in messages
/// (`MetricDataQueries` or `Metrics`).
pub fn run(
    field: &str,
    queries: &[Value],
    data: &BTreeMap<MetricKey, Vec<Datum>>,
    start: f64,
    end: f64,
) -> Result<Vec<Answer>, AwsError> {
    let mut ids = std::collections::HashSet::new();
    for (i, q) in queries.iter().enumerate() {
        let n = i + 1;
        let id = q["Id"].as_str().unwrap_or("");
        if !valid_id(id) {
            return Err(invalid(format!(
                "The value {id} for parameter {field}.member.{n}.Id is invalid. It must start with a lowercase letter and contain only letters, numbers and underscores."
            )));
        }
        if !ids.insert(id.to_string()) {
            return Err(invalid(format!(
                "The value {id} for parameter {field}.member.{n}.Id is non-unique."
            )));
        }
        let stat = q.get("MetricStat").filter(|v| !v.is_null());
        let expr = q["Expression"].as_str();
        match (stat, expr) {
            (Some(_), Some(_)) => {
                return Err(AwsError::bad_request(
                    "InvalidParameterCombination",
                    format!(
                        "The parameters {field}.member.{n}.MetricStat and {field}.member.{n}.Expression are mutually exclusive and you have specified both."
                    ),
                ));
            }
            (None, None) => {
                return Err(AwsError::bad_request(
                    "MissingParameter",
                    format!(
                        "The parameter {field}.member.{n}.MetricStat or {field}.member.{n}.Expression must be specified."
                    ),
                ));
            }
            _ => {}
        }
    }
    let mut series: BTreeMap<String, Series> = BTreeMap::new();
    let mut metric_ids = Vec::new();
    let mut labels = BTreeMap::new();
    for (i, q) in queries.iter().enumerate() {
        let Some(ms) = q.get("MetricStat").filter(|v| !v.is_null()) else {
            continue;
        };
        let n = i + 1;
        let id = q["Id"].as_str().unwrap_or("").to_string();
        let period = ms["Period"].as_i64().unwrap_or(0);
        check_period(&format!("{field}.member.{n}.MetricStat.Period"), period)?;
        let stat_name = ms["Stat"].as_str().unwrap_or("");
        let stat = Stat::parse(stat_name).ok_or_else(|| {
            invalid(format!(
                "The value {stat_name} for parameter {field}.member.{n}.MetricStat.Stat is invalid."
            ))
        })?;
        let key = metric_key(&ms["Metric"]);
        let s = data
            .get(&key)
            .map(|d| metrics::aggregate(d, start, end, period, stat, ms["Unit"].as_str()))
            .unwrap_or_default();
        let label = q["Label"]
            .as_str()
            .map_or_else(|| default_label(queries, ms), str::to_string);
        metric_ids.push((id.clone(), label.clone()));
        labels.insert(id.clone(), label);
        series.insert(id, s);
    }
    let default_period = queries
        .iter()
        .map(|q| period_of(q, 0))
        .find(|p| *p > 0)
        .unwrap_or(60);
    let mut answers = Vec::new();
    for q in queries {
        let id = q["Id"].as_str().unwrap_or("").to_string();
        if let Some(expr) = q["Expression"].as_str() {
            let period = period_of(q, default_period);
            let grid = (metrics::bucket(start, period), end.ceil() as i64, period);
            let env = Env {
                series: &series,
                metric_ids: &metric_ids,
                grid,
            };
            let s = match math::evaluate(expr, &env)
                .map_err(|e| AwsError::validation(format!("Error in expression '{id}': {e}")))?
            {
                Val::Series(s) => s,
                Val::Scalar(x) => {
                    let mut s = Series::new();
                    let mut t = grid.0;
                    while t < grid.1 {
                        s.insert(t, x);
                        t += period.max(1);
                    }
                    s
                }
                Val::Array(_) => {
                    return Err(AwsError::validation(format!(
                        "Error in expression '{id}': the expression must return a single time series"
                    )));
                }
            };
            labels.insert(id.clone(), q["Label"].as_str().unwrap_or(&id).to_string());
            series.insert(id.clone(), s);
        }
        answers.push(Answer {
            label: labels.get(&id).cloned().unwrap_or_default(),
            series: series.get(&id).cloned().unwrap_or_default(),
            return_data: q["ReturnData"].as_bool().unwrap_or(true),
            id,
        });
    }
    Ok(answers)
}

/// The label AWS gives an unlabelled MetricStat query: its metric's name, with the statistic
/// and then the period added when other unlabelled queries of the same metric differ in them.
fn default_label(queries: &[Value], ms: &Value) -> String {
    let name = ms["Metric"]["MetricName"].as_str().unwrap_or("");
    let same: Vec<&Value> = queries
        .iter()
        .filter(|q| q["Label"].is_null())
        .map(|q| &q["MetricStat"])
        .filter(|o| o["Metric"]["MetricName"].as_str() == Some(name))
        .collect();
    let differs = |k: &str| same.iter().any(|o| o[k] != ms[k]);
    let mut label = name.to_string();
    if differs("Stat") {
        label = format!("{label} {}", ms["Stat"].as_str().unwrap_or(""));
    }
    if differs("Period") {
        label = format!("{label} {}", ms["Period"]);
    }
    label
}

/// AWS's periods: 1, 5, 10, 20, 30 or any multiple of 60.
pub fn check_period(field: &str, period: i64) -> Result<(), AwsError> {
    if period <= 0 || !(matches!(period, 1 | 5 | 10 | 20 | 30) || period % 60 == 0) {
        return Err(invalid(format!(
            "The parameter {field} must be a valid period: 1, 5, 10, 20, 30, or any multiple of 60."
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metric_stats_then_expressions() {
        let key = MetricKey::new("N", "m", vec![]);
        let d = |ts: f64, v: f64| Datum {
            ts,
            unit: None,
            count: 1.0,
            sum: v,
            min: v,
            max: v,
            values: vec![(v, 1.0)],
        };
        let data = BTreeMap::from([(key, vec![d(0.0, 2.0), d(10.0, 4.0), d(70.0, 1.0)])]);
        let qs = vec![
            json!({"Id": "a", "MetricStat": {"Metric": {"Namespace": "N", "MetricName": "m"}, "Period": 60, "Stat": "Sum"}, "ReturnData": false}),
            json!({"Id": "b", "Expression": "a * 2", "Label": "double"}),
        ];
        let out = run("MetricDataQueries", &qs, &data, 0.0, 120.0).unwrap();
        assert_eq!(out[0].series, Series::from([(0, 6.0), (60, 1.0)]));
        assert!(!out[0].return_data);
        assert_eq!(out[0].label, "m");
        assert_eq!(out[1].series, Series::from([(0, 12.0), (60, 2.0)]));
        assert_eq!(out[1].label, "double");
        let stat = |s: &str, p: i64| json!({"Metric": {"Namespace": "N", "MetricName": "m"}, "Period": p, "Stat": s});
        let labels = |qs: Vec<Value>| -> Vec<String> {
            run("MetricDataQueries", &qs, &data, 0.0, 120.0)
                .unwrap()
                .into_iter()
                .map(|a| a.label)
                .collect()
        };
        assert_eq!(
            labels(vec![
                json!({"Id": "a", "MetricStat": stat("Sum", 60)}),
                json!({"Id": "b", "MetricStat": stat("Average", 60)})
            ]),
            ["m Sum", "m Average"]
        );
        assert_eq!(
            labels(vec![
                json!({"Id": "a", "MetricStat": stat("Sum", 60)}),
                json!({"Id": "b", "MetricStat": stat("Minimum", 30)})
            ]),
            ["m Sum 60", "m Minimum 30"]
        );
        let bad = run(
            "MetricDataQueries",
            &[json!({"Id": "A", "Expression": "1"})],
            &data,
            0.0,
            60.0,
        );
        assert_eq!(bad.unwrap_err().code, "InvalidParameterValue");
        let bad = run(
            "MetricDataQueries",
            &[json!({"Id": "x", "Expression": "nope + 1"})],
            &data,
            0.0,
            60.0,
        );
        assert_eq!(bad.unwrap_err().code, "ValidationError");
    }
}
