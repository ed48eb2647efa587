//! Choice rules: a rule is And/Or/Not over rules, or `Variable` with one comparison operator
//! (the `*Path` variants compare against another path's value; `Is*` test presence and type).

use chrono::{DateTime, FixedOffset};
use serde_json::Value;

fn timestamp(v: &Value) -> Option<DateTime<FixedOffset>> {
    v.as_str()
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
}

/// `*` matches any run of characters; `\*` a literal star.
fn string_matches(s: &str, pattern: &str) -> bool {
    let mut parts: Vec<String> = vec![String::new()];
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => parts
                .last_mut()
                .into_iter()
                .for_each(|p| p.extend(chars.next())),
            '*' => parts.push(String::new()),
            c => parts.last_mut().into_iter().for_each(|p| p.push(c)),
        }
    }
    if parts.len() == 1 {
        return s == parts[0];
    }
    let (first, last) = (&parts[0], &parts[parts.len() - 1]);
    if !s.starts_with(first.as_str())
        || s.len() < first.len() + last.len()
        || !s.ends_with(last.as_str())
    {
        return false;
    }
    let mut rest = &s[first.len()..s.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid.as_str()) {
            Some(k) => rest = &rest[k + mid.len()..],
            None => return false,
        }
    }
    true
}

fn operand(rule: &Value, op: &str, input: &Value, ctx: &Value) -> Result<Option<Value>, String> {
    if op.ends_with("Path") {
        let text = rule[op]
            .as_str()
            .ok_or_else(|| format!("{op} must be a path"))?;
        let got = super::data::lookup(text, input, ctx)?;
        return got
            .map(Some)
            .ok_or_else(|| format!("Invalid path '{text}': The choice state's condition path references an invalid value."));
    }
    Ok(rule.get(op).cloned())
}

/// Evaluates a rule against the state's input.
pub fn matches(rule: &Value, input: &Value, ctx: &Value) -> Result<bool, String> {
    if let Some(all) = rule.get("And").and_then(Value::as_array) {
        for r in all {
            if !matches(r, input, ctx)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if let Some(any) = rule.get("Or").and_then(Value::as_array) {
        for r in any {
            if matches(r, input, ctx)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    if let Some(not) = rule.get("Not") {
        return Ok(!matches(not, input, ctx)?);
    }
    let var = rule["Variable"]
        .as_str()
        .ok_or("A choice rule needs a Variable")?;
    let value = super::data::lookup(var, input, ctx)?;
    let Some(op) = rule.as_object().and_then(|m| {
        m.keys()
            .find(|k| !matches!(k.as_str(), "Variable" | "Next" | "Comment"))
    }) else {
        return Err("A choice rule needs a comparison operator".into());
    };
    let op = op.as_str();
    if op == "IsPresent" {
        return Ok(value.is_some() == (rule[op] == Value::Bool(true)));
    }
    let Some(v) = value else {
        return Err(format!(
            "Invalid path '{var}': The choice state's condition path references an invalid value."
        ));
    };
    let want = |b: bool| rule[op] == Value::Bool(b);
    let is = |b: bool| Ok(want(true) == b);
    match op {
        "IsNull" => return is(v.is_null()),
        "IsBoolean" => return is(v.is_boolean()),
        "IsNumeric" => return is(v.is_number()),
        "IsString" => return is(v.is_string()),
        "IsTimestamp" => return is(timestamp(&v).is_some()),
        _ => {}
    }
    let Some(other) = operand(rule, op, input, ctx)? else {
        return Err(format!("Unknown choice operator {op}"));
    };
    let base = op.strip_suffix("Path").unwrap_or(op);
    use std::cmp::Ordering::{self, *};
    let cmp = |o: Option<Ordering>| -> bool {
        match o {
            None => false,
            Some(o) => match base {
                b if b.ends_with("GreaterThanEquals") => o != Less,
                b if b.ends_with("LessThanEquals") => o != Greater,
                b if b.ends_with("GreaterThan") => o == Greater,
                b if b.ends_with("LessThan") => o == Less,
                _ => o == Equal,
            },
        }
    };
    Ok(if base.starts_with("String") {
        if base == "StringMatches" {
            matches!((v.as_str(), other.as_str()), (Some(s), Some(p)) if string_matches(s, p))
        } else {
            match (v.as_str(), other.as_str()) {
                (Some(a), Some(b)) => cmp(Some(a.cmp(b))),
                _ => false,
            }
        }
    } else if base.starts_with("Numeric") {
        match (v.as_f64(), other.as_f64()) {
            (Some(a), Some(b)) => cmp(a.partial_cmp(&b)),
            _ => false,
        }
    } else if base.starts_with("Timestamp") {
        match (timestamp(&v), timestamp(&other)) {
            (Some(a), Some(b)) => cmp(Some(a.cmp(&b))),
            _ => false,
        }
    } else if base == "BooleanEquals" {
        v.is_boolean() && v == other
    } else {
        return Err(format!("Unknown choice operator {op}"));
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(rule: Value, input: Value) -> bool {
        matches(&rule, &input, &json!({})).unwrap()
    }

    #[test]
    fn compares_and_combines() {
        let i = json!({"n": 5, "s": "abc", "b": true, "t": "2024-01-01T00:00:00Z", "m": 7});
        assert!(m(json!({"Variable": "$.n", "NumericEquals": 5}), i.clone()));
        assert!(m(
            json!({"Variable": "$.n", "NumericLessThanPath": "$.m"}),
            i.clone()
        ));
        assert!(m(
            json!({"Variable": "$.n", "NumericGreaterThanEquals": 5}),
            i.clone()
        ));
        assert!(!m(
            json!({"Variable": "$.n", "NumericGreaterThan": 5}),
            i.clone()
        ));
        assert!(m(
            json!({"Variable": "$.s", "StringMatches": "a*c"}),
            i.clone()
        ));
        assert!(m(
            json!({"Variable": "$.s", "StringLessThan": "abd"}),
            i.clone()
        ));
        assert!(m(
            json!({"Variable": "$.b", "BooleanEquals": true}),
            i.clone()
        ));
        assert!(m(
            json!({"Variable": "$.t", "TimestampLessThan": "2025-01-01T00:00:00Z"}),
            i.clone()
        ));
        assert!(m(
            json!({"Variable": "$.t", "IsTimestamp": true}),
            i.clone()
        ));
        assert!(m(json!({"Variable": "$.x", "IsPresent": false}), i.clone()));
        assert!(m(json!({"Variable": "$.s", "IsString": true}), i.clone()));
        assert!(m(
            json!({"Not": {"Variable": "$.n", "IsNull": true}}),
            i.clone()
        ));
        assert!(m(
            json!({"And": [{"Variable": "$.n", "NumericEquals": 5}, {"Or": [{"Variable": "$.b", "BooleanEquals": false}, {"Variable": "$.s", "StringEquals": "abc"}]}]}),
            i.clone()
        ));
        assert!(!m(
            json!({"Variable": "$.s", "NumericEquals": 5}),
            i.clone()
        ));
        assert!(
            matches(
                &json!({"Variable": "$.x", "NumericEquals": 1}),
                &i,
                &json!({})
            )
            .is_err()
        );
    }
}
