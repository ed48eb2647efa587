//! Stored datapoints and the statistics CloudWatch computes from them over aligned periods.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One metric's identity: namespace, name and its dimensions sorted by name (AWS treats a
/// dimension set as unordered).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct MetricKey {
    pub namespace: String,
    pub name: String,
    pub dimensions: Vec<(String, String)>,
}

impl MetricKey {
    pub fn new(namespace: &str, name: &str, mut dimensions: Vec<(String, String)>) -> Self {
        dimensions.sort();
        MetricKey {
            namespace: namespace.to_string(),
            name: name.to_string(),
            dimensions,
        }
    }
}

/// What one PutMetricData datum recorded: a statistic set over its values (a single Value is a
/// set of one), the values themselves when given (for percentiles), its unit and time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Datum {
    /// Seconds since the epoch.
    pub ts: f64,
    pub unit: Option<String>,
    pub count: f64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    /// `(value, count)` pairs when the datum carried values rather than a statistic set.
    #[serde(default)]
    pub values: Vec<(f64, f64)>,
}

/// Values by period start (seconds since the epoch).
pub type Series = BTreeMap<i64, f64>;

/// The statistics GetMetricStatistics answers for one period.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub count: f64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
}

impl Stats {
    fn of<'a>(data: impl Iterator<Item = &'a Datum>) -> Option<Stats> {
        data.fold(None, |acc: Option<Stats>, d| {
            Some(match acc {
                None => Stats {
                    count: d.count,
                    sum: d.sum,
                    min: d.min,
                    max: d.max,
                },
                Some(s) => Stats {
                    count: s.count + d.count,
                    sum: s.sum + d.sum,
                    min: s.min.min(d.min),
                    max: s.max.max(d.max),
                },
            })
        })
    }
}

/// A statistic as AWS names it: the five basic ones and percentiles `pNN` / `pNN.NN`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    SampleCount,
    Average,
    Sum,
    Minimum,
    Maximum,
    Percentile(f64),
}

impl Stat {
    pub fn parse(text: &str) -> Option<Stat> {
        Some(match text {
            "SampleCount" => Stat::SampleCount,
            "Average" => Stat::Average,
            "Sum" => Stat::Sum,
            "Minimum" => Stat::Minimum,
            "Maximum" => Stat::Maximum,
            p => {
                let n: f64 = p.strip_prefix('p')?.parse().ok()?;
                if !(0.0..=100.0).contains(&n) {
                    return None;
                }
                Stat::Percentile(n)
            }
        })
    }

    fn pick(self, s: Stats, data: &[&Datum]) -> Option<f64> {
        match self {
            Stat::SampleCount => Some(s.count),
            Stat::Average => (s.count > 0.0).then(|| s.sum / s.count),
            Stat::Sum => Some(s.sum),
            Stat::Minimum => Some(s.min),
            Stat::Maximum => Some(s.max),
            Stat::Percentile(p) => percentile(data, p),
        }
    }
}

/// The nearest-rank percentile over the values the period's datums carried (statistic sets
/// carry none; a period of only those has no percentile, as on AWS).
fn percentile(data: &[&Datum], p: f64) -> Option<f64> {
    let mut values: Vec<(f64, f64)> = data.iter().flat_map(|d| d.values.clone()).collect();
    if values.is_empty() {
        return None;
    }
    values.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: f64 = values.iter().map(|v| v.1).sum();
    let rank = (p / 100.0 * total).ceil().max(1.0);
    let mut seen = 0.0;
    for (v, c) in &values {
        seen += c;
        if seen >= rank {
            return Some(*v);
        }
    }
    values.last().map(|v| v.0)
}

/// The period a time falls in, as its start.
pub fn bucket(ts: f64, period: i64) -> i64 {
    let period = period.max(1);
    (ts.floor() as i64).div_euclid(period) * period
}

/// The datums of `[start, end)` grouped by period, with `unit` (when given) as a filter.
pub fn periods<'a>(
    data: &'a [Datum],
    start: f64,
    end: f64,
    period: i64,
    unit: Option<&str>,
) -> BTreeMap<i64, Vec<&'a Datum>> {
    let mut out: BTreeMap<i64, Vec<&Datum>> = BTreeMap::new();
    for d in data {
        if d.ts < start || d.ts >= end {
            continue;
        }
        if let Some(u) = unit
            && d.unit.as_deref().unwrap_or("None") != u
        {
            continue;
        }
        out.entry(bucket(d.ts, period)).or_default().push(d);
    }
    out
}

/// One statistic per period that has data.
pub fn aggregate(
    data: &[Datum],
    start: f64,
    end: f64,
    period: i64,
    stat: Stat,
    unit: Option<&str>,
) -> Series {
    periods(data, start, end, period, unit)
        .into_iter()
        .filter_map(|(t, ds)| {
            let s = Stats::of(ds.iter().copied())?;
            Some((t, stat.pick(s, &ds)?))
        })
        .collect()
}

/// The basic statistics of each period that has data, one datapoint per unit (AWS does not
/// mix units: without a Unit filter a period with two units answers two datapoints).
pub fn statistics<'a>(
    data: &'a [Datum],
    start: f64,
    end: f64,
    period: i64,
    unit: Option<&str>,
) -> Vec<(i64, Stats, Option<String>, Vec<&'a Datum>)> {
    let mut out = Vec::new();
    for (t, ds) in periods(data, start, end, period, unit) {
        let mut by_unit: BTreeMap<Option<String>, Vec<&Datum>> = BTreeMap::new();
        for d in ds {
            by_unit.entry(d.unit.clone()).or_default().push(d);
        }
        for (u, ds) in by_unit {
            if let Some(s) = Stats::of(ds.iter().copied()) {
                out.push((t, s, u, ds));
            }
        }
    }
    out
}

/// A statistic of one period's datums (for GetMetricStatistics' ExtendedStatistics).
pub fn pick(stat: Stat, data: &[&Datum]) -> Option<f64> {
    stat.pick(Stats::of(data.iter().copied())?, data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(ts: f64, v: f64) -> Datum {
        Datum {
            ts,
            unit: None,
            count: 1.0,
            sum: v,
            min: v,
            max: v,
            values: vec![(v, 1.0)],
        }
    }

    #[test]
    fn statistics_per_aligned_period() {
        let data = vec![d(0.0, 1.0), d(30.0, 3.0), d(60.0, 10.0), d(125.0, 4.0)];
        let sum = aggregate(&data, 0.0, 180.0, 60, Stat::Sum, None);
        assert_eq!(sum, Series::from([(0, 4.0), (60, 10.0), (120, 4.0)]));
        let avg = aggregate(&data, 0.0, 60.0, 60, Stat::Average, None);
        assert_eq!(avg, Series::from([(0, 2.0)]));
        assert_eq!(
            aggregate(&data, 0.0, 180.0, 180, Stat::Maximum, None)[&0],
            10.0
        );
        assert_eq!(
            aggregate(&data, 0.0, 180.0, 180, Stat::SampleCount, None)[&0],
            4.0
        );
        assert_eq!(
            aggregate(&data, 0.0, 180.0, 180, Stat::Percentile(50.0), None)[&0],
            3.0
        );
        // The end is exclusive and a unit filters.
        assert!(aggregate(&data, 0.0, 60.0, 60, Stat::Sum, Some("Count")).is_empty());
        assert_eq!(Stat::parse("p99.9"), Some(Stat::Percentile(99.9)));
        assert_eq!(Stat::parse("p101"), None);
        assert_eq!(Stat::parse("Avg"), None);
    }
}
