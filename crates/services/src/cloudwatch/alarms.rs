//! Alarm evaluation: a metric (or metric-math) alarm's state from the stored datapoints of its
//! last EvaluationPeriods periods, and a composite alarm's from its rule over its children.
//!
//! The periods are epoch-aligned and the last one is the period `now` falls in, so a datapoint
//! put now counts at once (AWS waits for the period to close; a local test should not).

use super::metrics::{self, Datum, MetricKey, Series, Stat};
use super::queries;
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub const OK: &str = "OK";
pub const ALARM: &str = "ALARM";
pub const INSUFFICIENT: &str = "INSUFFICIENT_DATA";

/// A state an evaluation decided, with AWS's reason text and reason data.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub state: &'static str,
    pub reason: String,
    pub data: Value,
}

fn breaches(op: &str, v: f64, threshold: f64) -> Option<bool> {
    Some(match op {
        "GreaterThanOrEqualToThreshold" => v >= threshold,
        "GreaterThanThreshold" => v > threshold,
        "LessThanThreshold" => v < threshold,
        "LessThanOrEqualToThreshold" => v <= threshold,
        _ => return None,
    })
}

fn words(op: &str) -> &'static str {
    match op {
        "GreaterThanOrEqualToThreshold" => "greater than or equal to",
        "GreaterThanThreshold" => "greater than",
        "LessThanThreshold" => "less than",
        _ => "less than or equal to",
    }
}

fn stamp(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%d/%m/%y %H:%M:%S").to_string())
        .unwrap_or_default()
}

pub(super) fn iso(t: f64) -> String {
    chrono::DateTime::from_timestamp_millis((t * 1000.0) as i64)
        .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3f+0000").to_string())
        .unwrap_or_default()
}

/// Each evaluated period's start and value (`None`: no data), oldest first.
type Periods = Vec<(i64, Option<f64>)>;

/// What an alarm evaluates: its periods' values, the period, and (for an alarm on one metric)
/// each period's sample count, which AWS shows in the reason data.
struct Evaluated {
    values: Periods,
    period: i64,
    counts: Series,
}

/// The values of the alarm's periods, oldest first (`None`: no data in that period), and the
/// period; `None` when the alarm cannot be evaluated (an anomaly-band comparison).
fn period_values(
    alarm: &Value,
    data: &BTreeMap<MetricKey, Vec<Datum>>,
    now: f64,
) -> Option<Evaluated> {
    let n = alarm["EvaluationPeriods"].as_i64().unwrap_or(1).max(1);
    let series: Series;
    let period;
    let mut counts = Series::new();
    if let Some(qs) = alarm["Metrics"].as_array().filter(|q| !q.is_empty()) {
        let ret = qs
            .iter()
            .find(|q| q["ReturnData"].as_bool() == Some(true))
            .or_else(|| qs.last())?;
        period = queries::period_of(ret, 60);
        let last = metrics::bucket(now, period);
        let start = last - (n - 1) * period;
        let answers =
            queries::run("Metrics", qs, data, start as f64, (last + period) as f64).ok()?;
        series = answers
            .into_iter()
            .find(|a| Some(a.id.as_str()) == ret["Id"].as_str())?
            .series;
    } else {
        period = alarm["Period"].as_i64().unwrap_or(60).max(1);
        let stat = alarm["Statistic"]
            .as_str()
            .or_else(|| alarm["ExtendedStatistic"].as_str())
            .and_then(Stat::parse)?;
        let key = MetricKey::new(
            alarm["Namespace"].as_str().unwrap_or(""),
            alarm["MetricName"].as_str().unwrap_or(""),
            queries::dimensions(&alarm["Dimensions"]),
        );
        let last = metrics::bucket(now, period);
        let start = last - (n - 1) * period;
        let of = |stat| {
            data.get(&key)
                .map(|d| {
                    metrics::aggregate(
                        d,
                        start as f64,
                        (last + period) as f64,
                        period,
                        stat,
                        alarm["Unit"].as_str(),
                    )
                })
                .unwrap_or_default()
        };
        series = of(stat);
        counts = of(Stat::SampleCount);
    }
    let last = metrics::bucket(now, period);
    let values = (0..n)
        .map(|i| {
            let t = last - (n - 1 - i) * period;
            (t, series.get(&t).copied())
        })
        .collect();
    Some(Evaluated {
        values,
        period,
        counts,
    })
}

/// A metric or metric-math alarm's state now, `None` when it stays as it is (TreatMissingData
/// `ignore` with no data, or a comparison cumulo does not evaluate).
pub fn evaluate(
    alarm: &Value,
    data: &BTreeMap<MetricKey, Vec<Datum>>,
    now: f64,
) -> Option<Verdict> {
    let op = alarm["ComparisonOperator"].as_str().unwrap_or("");
    let threshold = alarm["Threshold"].as_f64()?;
    breaches(op, 0.0, threshold)?;
    let Evaluated {
        values,
        period,
        counts,
    } = period_values(alarm, data, now)?;
    let n = values.len();
    let m = alarm["DatapointsToAlarm"]
        .as_i64()
        .map_or(n, |m| m as usize)
        .clamp(1, n.max(1));
    let treat = alarm["TreatMissingData"].as_str().unwrap_or("missing");
    let present: Vec<(i64, f64)> = values
        .iter()
        .filter_map(|(t, v)| v.map(|v| (*t, v)))
        .collect();
    let missing = n - present.len();
    // As AWS writes it (recorded against AWS, aws-recordings/cloudwatch): the alarm's unit
    // when it has one, each evaluated datapoint's sample count.
    let reason_data = |recent: &[(i64, f64)]| {
        let mut data = json!({
            "version": "1.0",
            "queryDate": iso(now),
            "startDate": iso(values.first().map_or(0, |v| v.0) as f64),
            "statistic": alarm["Statistic"].clone(),
            "period": period,
            "recentDatapoints": recent.iter().map(|v| v.1).collect::<Vec<_>>(),
            "threshold": threshold,
            "evaluatedDatapoints": recent.iter().rev().map(|(t, v)| {
                let mut d = json!({"timestamp": iso(*t as f64), "value": v});
                if let Some(c) = counts.get(t) {
                    d["sampleCount"] = json!(c);
                }
                d
            }).collect::<Vec<_>>(),
        });
        if let Some(unit) = alarm["Unit"].as_str() {
            data["unit"] = json!(unit);
        }
        data
    };
    // With no data, AWS names each evaluated period by its time alone and gives no start.
    let no_data = || {
        let mut data = reason_data(&[]);
        if let Some(d) = data.as_object_mut() {
            d.remove("startDate");
        }
        data["evaluatedDatapoints"] = values
            .iter()
            .rev()
            .map(|(t, _)| json!({"timestamp": iso(*t as f64)}))
            .collect();
        data
    };
    if present.is_empty() {
        return match treat {
            "breaching" => Some(Verdict {
                state: ALARM,
                reason: format!(
                    "Threshold Crossed: no datapoints were received for {n} period{} and {n} missing datapoint{} {} treated as [Breaching].",
                    plural(n),
                    plural(n),
                    if n == 1 { "was" } else { "were" }
                ),
                data: no_data(),
            }),
            "notBreaching" => Some(Verdict {
                state: OK,
                reason: format!(
                    "Threshold Crossed: no datapoints were received for {n} period{} and {n} missing datapoint{} {} treated as [NonBreaching].",
                    plural(n),
                    plural(n),
                    if n == 1 { "was" } else { "were" }
                ),
                data: no_data(),
            }),
            "ignore" => None,
            _ => Some(Verdict {
                state: INSUFFICIENT,
                reason: format!(
                    "Insufficient Data: {n} datapoint{} {} unknown.",
                    plural(n),
                    if n == 1 { "was" } else { "were" }
                ),
                data: no_data(),
            }),
        };
    }
    let breaching = present
        .iter()
        .filter(|(_, v)| breaches(op, *v, threshold) == Some(true))
        .count()
        + if treat == "breaching" { missing } else { 0 };
    let state = if breaching >= m { ALARM } else { OK };
    let shown: Vec<String> = present
        .iter()
        .rev()
        .map(|(t, v)| format!("{v:?} ({})", stamp(*t)))
        .collect();
    let k = present.len();
    // One period evaluated, AWS says so plainly (as recorded against AWS,
    // aws-recordings/cloudwatch `test_put_metric_alarm`); over several, it counts them.
    let reason = if state == ALARM && n == 1 {
        format!(
            "Threshold Crossed: {k} datapoint{} [{}] {} {} the threshold ({threshold:?}).",
            plural(k),
            shown.join(", "),
            if k == 1 { "was" } else { "were" },
            words(op)
        )
    } else if state == ALARM {
        format!(
            "Threshold Crossed: {breaching} out of the last {n} datapoints [{}] {} {} the threshold ({threshold:?}) (minimum {m} datapoint{} for OK -> ALARM transition).",
            shown.join(", "),
            if breaching == 1 { "was" } else { "were" },
            words(op),
            plural(m)
        )
    } else {
        format!(
            "Threshold Crossed: {k} datapoint{} [{}] {} not {} the threshold ({threshold:?}).",
            plural(k),
            shown.join(", "),
            if k == 1 { "was" } else { "were" },
            words(op)
        )
    };
    Some(Verdict {
        state,
        reason,
        data: reason_data(&present),
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A composite alarm's rule.
#[derive(Debug, Clone, PartialEq)]
pub enum Rule {
    /// `ALARM(x)`, `OK(x)`, `INSUFFICIENT_DATA(x)`: child `x` (name or ARN) is in that state.
    State(&'static str, String),
    Const(bool),
    And(Box<Rule>, Box<Rule>),
    Or(Box<Rule>, Box<Rule>),
    Not(Box<Rule>),
}

impl Rule {
    /// Parses an AlarmRule; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let mut p = RuleParser {
            s: text.as_bytes(),
            i: 0,
        };
        let r = p.or()?;
        p.ws();
        if p.i != p.s.len() {
            return Err(format!("Unexpected text at position {}", p.i + 1));
        }
        Ok(r)
    }

    /// The children the rule names (names or ARNs, as written).
    pub fn children(&self) -> Vec<String> {
        match self {
            Rule::State(_, n) => vec![n.clone()],
            Rule::Const(_) => vec![],
            Rule::And(a, b) | Rule::Or(a, b) => {
                let mut v = a.children();
                v.extend(b.children());
                v
            }
            Rule::Not(a) => a.children(),
        }
    }

    /// True when the rule holds, given each child's state.
    pub fn holds(&self, state_of: &dyn Fn(&str) -> Option<String>) -> bool {
        match self {
            Rule::State(s, n) => state_of(n).as_deref() == Some(*s),
            Rule::Const(b) => *b,
            Rule::And(a, b) => a.holds(state_of) && b.holds(state_of),
            Rule::Or(a, b) => a.holds(state_of) || b.holds(state_of),
            Rule::Not(a) => !a.holds(state_of),
        }
    }
}

struct RuleParser<'a> {
    s: &'a [u8],
    i: usize,
}

impl RuleParser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn keyword(&mut self, k: &str) -> bool {
        self.ws();
        let end = self.i + k.len();
        let next_is_word = self
            .s
            .get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
        if self.s.get(self.i..end) == Some(k.as_bytes()) && !next_is_word {
            self.i = end;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<Rule, String> {
        let mut r = self.and()?;
        while self.keyword("OR") {
            r = Rule::Or(Box::new(r), Box::new(self.and()?));
        }
        Ok(r)
    }

    fn and(&mut self) -> Result<Rule, String> {
        let mut r = self.not()?;
        while self.keyword("AND") {
            r = Rule::And(Box::new(r), Box::new(self.not()?));
        }
        Ok(r)
    }

    fn not(&mut self) -> Result<Rule, String> {
        if self.keyword("NOT") {
            return Ok(Rule::Not(Box::new(self.not()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Rule, String> {
        self.ws();
        if self.s.get(self.i) == Some(&b'(') {
            self.i += 1;
            let r = self.or()?;
            self.ws();
            if self.s.get(self.i) != Some(&b')') {
                return Err("Expected ')'".into());
            }
            self.i += 1;
            return Ok(r);
        }
        if self.keyword("TRUE") {
            return Ok(Rule::Const(true));
        }
        if self.keyword("FALSE") {
            return Ok(Rule::Const(false));
        }
        for state in [ALARM, OK, INSUFFICIENT] {
            if self.keyword(state) {
                self.ws();
                if self.s.get(self.i) != Some(&b'(') {
                    return Err(format!("Expected '(' after {state}"));
                }
                self.i += 1;
                self.ws();
                let name = self.name()?;
                self.ws();
                if self.s.get(self.i) != Some(&b')') {
                    return Err(format!("Expected ')' after {name}"));
                }
                self.i += 1;
                return Ok(Rule::State(state, name));
            }
        }
        Err(format!("Unexpected text at position {}", self.i + 1))
    }

    fn name(&mut self) -> Result<String, String> {
        let quote = self
            .s
            .get(self.i)
            .copied()
            .filter(|c| *c == b'"' || *c == b'\'');
        let start = self.i + usize::from(quote.is_some());
        let mut end = start;
        while end < self.s.len() {
            let c = self.s[end];
            let stop = match quote {
                Some(q) => c == q,
                None => c == b')' || c.is_ascii_whitespace(),
            };
            if stop {
                break;
            }
            end += 1;
        }
        if quote.is_some() && end >= self.s.len() {
            return Err("Unterminated alarm name".into());
        }
        let name = String::from_utf8_lossy(&self.s[start..end]).into_owned();
        if name.is_empty() {
            return Err("Empty alarm name".into());
        }
        self.i = end + usize::from(quote.is_some());
        Ok(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(points: &[(f64, f64)]) -> BTreeMap<MetricKey, Vec<Datum>> {
        let ds = points
            .iter()
            .map(|(ts, v)| Datum {
                ts: *ts,
                unit: None,
                count: 1.0,
                sum: *v,
                min: *v,
                max: *v,
                values: vec![(*v, 1.0)],
            })
            .collect();
        BTreeMap::from([(MetricKey::new("N", "m", vec![]), ds)])
    }

    fn alarm(extra: Value) -> Value {
        let mut a = json!({"Namespace": "N", "MetricName": "m", "Statistic": "Maximum", "Period": 60,
            "EvaluationPeriods": 3, "Threshold": 5.0, "ComparisonOperator": "GreaterThanThreshold"});
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        a
    }

    #[test]
    fn m_out_of_n_and_missing_data() {
        let now = 1000.0 * 60.0 + 30.0;
        let t = |i: f64| (1000.0 - i) * 60.0 + 1.0;
        let d = data(&[(t(0.0), 9.0), (t(1.0), 1.0), (t(2.0), 9.0)]);
        // All three must breach by default; two of three with DatapointsToAlarm 2.
        assert_eq!(evaluate(&alarm(json!({})), &d, now).unwrap().state, OK);
        let v = evaluate(&alarm(json!({"DatapointsToAlarm": 2})), &d, now).unwrap();
        assert_eq!(v.state, ALARM);
        assert!(
            v.reason
                .starts_with("Threshold Crossed: 2 out of the last 3 datapoints"),
            "{}",
            v.reason
        );
        // Missing data by TreatMissingData.
        let sparse = data(&[(t(0.0), 9.0)]);
        assert_eq!(evaluate(&alarm(json!({})), &sparse, now).unwrap().state, OK);
        assert_eq!(
            evaluate(
                &alarm(json!({"TreatMissingData": "breaching"})),
                &sparse,
                now
            )
            .unwrap()
            .state,
            ALARM
        );
        let empty = data(&[]);
        assert_eq!(
            evaluate(&alarm(json!({})), &empty, now).unwrap().state,
            INSUFFICIENT
        );
        assert_eq!(
            evaluate(&alarm(json!({"TreatMissingData": "ignore"})), &empty, now),
            None
        );
        assert_eq!(
            evaluate(
                &alarm(json!({"TreatMissingData": "notBreaching"})),
                &empty,
                now
            )
            .unwrap()
            .state,
            OK
        );
        // LessThan and a metric-math alarm.
        let lt = alarm(json!({"ComparisonOperator": "LessThanThreshold", "EvaluationPeriods": 1}));
        assert_eq!(
            evaluate(&lt, &data(&[(t(0.0), 1.0)]), now).unwrap().state,
            ALARM
        );
        let math = json!({"EvaluationPeriods": 1, "Threshold": 15.0, "ComparisonOperator": "GreaterThanThreshold",
            "Metrics": [
                {"Id": "a", "MetricStat": {"Metric": {"Namespace": "N", "MetricName": "m"}, "Period": 60, "Stat": "Sum"}, "ReturnData": false},
                {"Id": "e", "Expression": "a * 2", "ReturnData": true}]});
        assert_eq!(evaluate(&math, &d, now).unwrap().state, ALARM);
    }

    #[test]
    fn composite_rules() {
        let r = Rule::parse("ALARM(\"a\") OR (ALARM(b) AND NOT OK('c'))").unwrap();
        assert_eq!(r.children(), vec!["a", "b", "c"]);
        let states = |m: &'static [(&'static str, &'static str)]| {
            move |n: &str| m.iter().find(|(k, _)| *k == n).map(|(_, s)| s.to_string())
        };
        assert!(r.holds(&states(&[("a", "ALARM"), ("b", "OK"), ("c", "OK")])));
        assert!(r.holds(&states(&[("a", "OK"), ("b", "ALARM"), ("c", "ALARM")])));
        assert!(!r.holds(&states(&[("a", "OK"), ("b", "ALARM"), ("c", "OK")])));
        assert_eq!(Rule::parse("TRUE").unwrap(), Rule::Const(true));
        assert!(Rule::parse("ALARM(a) OR").is_err());
        assert!(Rule::parse("ALARM(\"a\"").is_err());
        assert!(Rule::parse("SOMETHING(a)").is_err());
        assert!(Rule::parse("ALARMS(a)").is_err());
    }
}
