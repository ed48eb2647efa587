//! Schedule expressions: `rate(N unit)` and six-field `cron(min hour day-of-month month
//! day-of-week year)` in UTC, evaluated to the next time a rule fires.
//!
//! Cron fields take `*`, values, ranges `a-b`, lists `a,b`, increments `a/n` and `*/n`, month
//! (`JAN`) and day (`SUN`) names, `?` in one of the day fields (AWS requires exactly one), and `L`
//! (the month's last day) in day-of-month. `W`, `#` and `nL` are refused by name: cumulo cannot
//! evaluate them yet, and a schedule that silently never fires would be worse.

use chrono::{DateTime, Datelike, Duration, TimeZone, Timelike, Utc};

#[derive(Debug, Clone, PartialEq)]
pub enum Schedule {
    /// Every so many milliseconds, counted from when the rule was (re)scheduled.
    Rate(i64),
    Cron(Box<Cron>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cron {
    minutes: Vec<bool>,
    hours: Vec<bool>,
    /// Index 1..=31; `None` when the field is `?`.
    days: Option<Vec<bool>>,
    last_day: bool,
    months: Vec<bool>,
    /// Index 1..=7, Sunday = 1 as AWS numbers them; `None` when `?`.
    weekdays: Option<Vec<bool>>,
    years: Vec<bool>,
}

const FIRST_YEAR: i32 = 1970;
const LAST_YEAR: i32 = 2199;

fn invalid() -> String {
    "Parameter ScheduleExpression is not valid.".to_string()
}

impl Schedule {
    pub fn parse(expr: &str) -> Result<Schedule, String> {
        if let Some(inner) = expr.strip_prefix("rate(").and_then(|s| s.strip_suffix(')')) {
            let (n, unit) = inner.trim().split_once(' ').ok_or_else(invalid)?;
            let n: i64 = n.parse().map_err(|_| invalid())?;
            let unit_ms = match (n, unit.trim()) {
                (1, "minute") => 60_000,
                (1, "hour") => 3_600_000,
                (1, "day") => 86_400_000,
                (n, "minutes") if n > 1 => 60_000,
                (n, "hours") if n > 1 => 3_600_000,
                (n, "days") if n > 1 => 86_400_000,
                _ => return Err(invalid()),
            };
            return Ok(Schedule::Rate(n * unit_ms));
        }
        if let Some(inner) = expr.strip_prefix("cron(").and_then(|s| s.strip_suffix(')')) {
            return parse_cron(inner).map(|c| Schedule::Cron(Box::new(c)));
        }
        Err(invalid())
    }

    /// The first firing strictly after `after` (ms since the epoch); `from` is when a rate
    /// schedule started counting. `None` when a cron has no future firing.
    pub fn next_after(&self, from: i64, after: i64) -> Option<i64> {
        match self {
            Schedule::Rate(period) => {
                let elapsed = (after - from).max(0);
                Some(from + (elapsed / period + 1) * period)
            }
            Schedule::Cron(c) => c.next_after(after),
        }
    }
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

fn value(s: &str, names: &[&str], base: u32) -> Option<u32> {
    s.parse().ok().or_else(|| {
        names
            .iter()
            .position(|n| n.eq_ignore_ascii_case(s))
            .map(|i| i as u32 + base)
    })
}

/// One field as a set over `min..=max` (indexes below `min` stay false).
fn field(s: &str, min: u32, max: u32, names: &[&str]) -> Result<Vec<bool>, String> {
    let mut set = vec![false; max as usize + 1];
    for part in s.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((r, st)) => (
                r,
                st.parse::<u32>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(invalid)?,
            ),
            None => (part, 1),
        };
        let (lo, hi) = if range == "*" {
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (
                value(a, names, min).ok_or_else(invalid)?,
                value(b, names, min).ok_or_else(invalid)?,
            )
        } else {
            let v = value(range, names, min).ok_or_else(invalid)?;
            (v, if part.contains('/') { max } else { v })
        };
        if lo < min || hi > max || lo > hi {
            return Err(invalid());
        }
        let mut v = lo;
        while v <= hi {
            if let Some(slot) = set.get_mut(v as usize) {
                *slot = true;
            }
            v += step;
        }
    }
    Ok(set)
}

fn parse_cron(inner: &str) -> Result<Cron, String> {
    let parts: Vec<&str> = inner.split_whitespace().collect();
    let [min, hour, dom, month, dow, year] = parts.as_slice() else {
        return Err(invalid());
    };
    for f in [dom, dow] {
        if f.contains('W') || f.contains('#') || (f.len() > 1 && f.ends_with('L')) {
            return Err(format!(
                "cumulo: the cron field '{f}' (W, # or nL) is not supported by the emulator's scheduler"
            ));
        }
    }
    let (days, last_day, weekdays) = match (*dom, *dow) {
        ("?", "?") => return Err(invalid()),
        ("?", w) => (None, false, Some(field(w, 1, 7, &DAYS)?)),
        ("L", "?") => (None, true, None),
        (d, "?") => (Some(field(d, 1, 31, &[])?), false, None),
        _ => return Err(invalid()),
    };
    Ok(Cron {
        minutes: field(min, 0, 59, &[])?,
        hours: field(hour, 0, 23, &[])?,
        days,
        last_day,
        months: field(month, 1, 12, &MONTHS)?,
        weekdays,
        years: field(year, FIRST_YEAR as u32, LAST_YEAR as u32, &[])?,
    })
}

fn has(set: &[bool], i: u32) -> bool {
    set.get(i as usize).copied().unwrap_or(false)
}

impl Cron {
    fn day_matches(&self, t: DateTime<Utc>) -> bool {
        if self.last_day {
            return (t + Duration::days(1)).month() != t.month();
        }
        if let Some(days) = &self.days {
            return has(days, t.day());
        }
        if let Some(w) = &self.weekdays {
            return has(w, t.weekday().num_days_from_sunday() + 1);
        }
        false
    }

    /// Walks forward a day, hour or minute at a time, skipping whole units that cannot match.
    fn next_after(&self, after: i64) -> Option<i64> {
        let start = Utc.timestamp_millis_opt(after).single()?;
        let mut t = start.with_second(0)?.with_nanosecond(0)? + Duration::minutes(1);
        while t.year() <= LAST_YEAR {
            if !has(&self.years, t.year() as u32) {
                t = Utc.with_ymd_and_hms(t.year() + 1, 1, 1, 0, 0, 0).single()?;
                continue;
            }
            if !has(&self.months, t.month()) || !self.day_matches(t) {
                t = (t + Duration::days(1)).with_hour(0)?.with_minute(0)?;
                continue;
            }
            if !has(&self.hours, t.hour()) {
                t = (t + Duration::hours(1)).with_minute(0)?;
                continue;
            }
            if !has(&self.minutes, t.minute()) {
                t += Duration::minutes(1);
                continue;
            }
            return Some(t.timestamp_millis());
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> i64 {
        DateTime::parse_from_rfc3339(s)
            .expect("time")
            .timestamp_millis()
    }

    #[test]
    fn rates() {
        assert_eq!(
            Schedule::parse("rate(1 minute)"),
            Ok(Schedule::Rate(60_000))
        );
        assert_eq!(
            Schedule::parse("rate(5 minutes)"),
            Ok(Schedule::Rate(300_000))
        );
        assert!(Schedule::parse("rate(1 minutes)").is_err());
        assert!(Schedule::parse("rate(2 hour)").is_err());
        assert!(Schedule::parse("rate(0 minutes)").is_err());
        let r = Schedule::Rate(60_000);
        assert_eq!(r.next_after(1_000, 1_000), Some(61_000));
        assert_eq!(r.next_after(1_000, 61_000), Some(121_000));
    }

    #[test]
    fn crons() {
        let c = Schedule::parse("cron(0 12 * * ? *)").expect("cron");
        assert_eq!(
            c.next_after(0, at("2026-01-01T12:00:00Z")),
            Some(at("2026-01-02T12:00:00Z"))
        );
        let c = Schedule::parse("cron(0/15 * * * ? *)").expect("cron");
        assert_eq!(
            c.next_after(0, at("2026-01-01T10:07:30Z")),
            Some(at("2026-01-01T10:15:00Z"))
        );
        let c = Schedule::parse("cron(30 8 ? * MON-FRI *)").expect("cron");
        // 2026-01-03 is a Saturday.
        assert_eq!(
            c.next_after(0, at("2026-01-03T00:00:00Z")),
            Some(at("2026-01-05T08:30:00Z"))
        );
        let c = Schedule::parse("cron(0 0 L * ? *)").expect("cron");
        assert_eq!(
            c.next_after(0, at("2026-02-02T00:00:00Z")),
            Some(at("2026-02-28T00:00:00Z"))
        );
        let c = Schedule::parse("cron(0 0 1 JAN ? 2027)").expect("cron");
        assert_eq!(
            c.next_after(0, at("2026-05-01T00:00:00Z")),
            Some(at("2027-01-01T00:00:00Z"))
        );
        assert!(Schedule::parse("cron(* * * * * *)").is_err());
        assert!(Schedule::parse("cron(0 0 * * ?)").is_err());
        assert!(Schedule::parse("cron(0 0 ? * 6#3 *)").is_err());
        assert!(Schedule::parse("cron(61 0 * * ? *)").is_err());
    }
}
