//! Schedule expressions as EventBridge Scheduler takes them: one-time `at(yyyy-mm-ddThh:mm:ss)`
//! besides the `rate(...)` and `cron(...)` EventBridge's rules take (parsed by the shared
//! `crate::schedule`). Scheduler is stricter about spaces than the rule parser: `rate( 10
//! minutes )` and a leading space are refused, as AWS refuses them. Every refusal reads
//! `Invalid Schedule Expression <expr>.`, as AWS words it, but for the cron features cumulo
//! cannot evaluate, which say so.

use super::ops::validation;
use crate::schedule::Schedule;
use chrono::NaiveDateTime;
use cumulo_wire::AwsError;

#[derive(Debug, Clone, PartialEq)]
pub enum Expression {
    /// A one-time schedule at this instant (ms since the epoch, read as UTC).
    At(i64),
    Recurring(Schedule),
}

impl Expression {
    pub fn parse(expr: &str) -> Result<Expression, AwsError> {
        let invalid = || validation(format!("Invalid Schedule Expression {expr}."));
        if let Some(inner) = expr.strip_prefix("at(").and_then(|s| s.strip_suffix(')')) {
            if inner.len() != 19 {
                return Err(invalid());
            }
            let t =
                NaiveDateTime::parse_from_str(inner, "%Y-%m-%dT%H:%M:%S").map_err(|_| invalid())?;
            return Ok(Expression::At(t.and_utc().timestamp_millis()));
        }
        let inner = expr
            .strip_prefix("rate(")
            .or_else(|| expr.strip_prefix("cron("))
            .and_then(|s| s.strip_suffix(')'))
            .ok_or_else(invalid)?;
        if inner.trim() != inner {
            return Err(invalid());
        }
        Schedule::parse(expr)
            .map(Expression::Recurring)
            .map_err(|e| {
                if e.starts_with("cumulo:") {
                    validation(e)
                } else {
                    invalid()
                }
            })
    }

    /// The first firing strictly after `after` (ms), within `[start, end]` for a recurring
    /// expression (a rate counts from `from`, or from `start` when that is later); an `at()`
    /// fires once, whatever the dates. `None` when nothing is left to fire.
    pub fn next_after(
        &self,
        from: i64,
        after: i64,
        start: Option<i64>,
        end: Option<i64>,
    ) -> Option<i64> {
        match self {
            Expression::At(t) => (*t > after).then_some(*t),
            Expression::Recurring(s) => {
                let from = start.map_or(from, |st| st.max(from));
                let after = start.map_or(after, |st| after.max(st - 1));
                s.next_after(from, after)
                    .filter(|t| end.is_none_or(|e| *t <= e))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The expressions AWS refused and accepted when recorded
    /// (aws-recordings/scheduler/test_scheduler.snapshot.json).
    #[test]
    fn held_to_what_aws_answered() {
        for bad in [
            "cron(0 1 * * * *)",
            "cron(7 20 * * NOT *)",
            "cron(INVALID)",
            "cron(0 dummy ? * MON-FRI *)",
            "cron(71 8 1 * ? *)",
            "cron()",
            "rate(10 seconds)",
            "rate(10 years)",
            "rate()",
            "rate(10)",
            "rate(10 minutess)",
            "rate(foo minutes)",
            "rate(-10 minutes)",
            "rate( 10 minutes )",
            " rate(10 minutes)",
            "at(2021-12-31T23:59:59Z)",
            "at(2021-12-31)",
        ] {
            let e = Expression::parse(bad).unwrap_err();
            assert_eq!(e.code, "ValidationException");
            assert_eq!(e.message, format!("Invalid Schedule Expression {bad}."));
        }
        for good in [
            "cron(0-15/1 8-8 ? * 2,3,4,5,6,7 *)",
            "cron(30-30 13-13 ? * 2,4,6 *)",
            "cron(1-31/30 1-1 ? * 1,7 *)",
            "cron(0 18 ? * MON-FRI *)",
            "cron(*/15 * * * ? *)",
            "cron(0-59/10 0-23/2 ? * * *)",
            "rate(1 minute)",
            "at(2030-01-01T00:00:00)",
        ] {
            assert!(Expression::parse(good).is_ok(), "{good}");
        }
    }

    #[test]
    fn firings_respect_the_dates() {
        let at = Expression::parse("at(1970-01-01T00:01:00)").unwrap();
        assert_eq!(at.next_after(0, 0, None, None), Some(60_000));
        assert_eq!(at.next_after(0, 60_000, None, None), None);
        let rate = Expression::parse("rate(1 minute)").unwrap();
        assert_eq!(rate.next_after(0, 0, None, None), Some(60_000));
        // Counting starts at StartDate; nothing fires after EndDate.
        assert_eq!(rate.next_after(0, 0, Some(600_000), None), Some(660_000));
        assert_eq!(rate.next_after(0, 120_000, None, Some(150_000)), None);
    }
}
