//! What an untagged plain YAML scalar means, by the YAML 1.1 rules CloudFormation applies.
//!
//! CloudFormation documents "YAML 1.1 with exceptions: no binary, omap, pairs, set or timestamp
//! tags, no aliases, no hash merges". The resolution below is the YAML 1.1 type repository as
//! PyYAML implements it (the loader behind the AWS CLI's `cloudformation package`, cfn-lint and
//! cfn-flip, i.e. the tools whose output CloudFormation is known to agree with):
//!
//! * null: `~`, `null`, `Null`, `NULL` and the empty scalar.
//! * bool: `true/True/TRUE`, `false/...`, `yes/Yes/YES`, `no/...`, `on/...`, `off/...` (not `y`/`n`,
//!   which PyYAML and SnakeYAML both leave as strings). So `Value: YES` on a tag becomes `true`,
//!   which CloudFormation passes on as the string `"true"` — a well-known surprise we reproduce.
//! * int: decimal `[-+]?(0|[1-9][0-9_]*)`, octal `[-+]?0[0-7_]+` (`0777` is 511, and an account id
//!   made only of digits 0-7 after a leading zero, e.g. `012345670123`, becomes 1402433619 — the
//!   documented reason to quote account ids), hex `0x…`, binary `0b…`, sexagesimal `1:30` (90);
//!   `_` separators are ignored (`1_000` is 1000).
//! * float: needs a `.` (`1.5`, `1.`, `.5`, `6.8e+3`) or is `.inf`/`.nan`; so `1e3` is the string
//!   "1e3", as in YAML 1.1 (its exponent form also needs a dot and a signed exponent), and so is
//!   `-.5` (the leading-dot form takes no sign).
//!
//! Checked against PyYAML on 4,000 generated number-like scalars and every YAML file of the
//! shared corpus: identical, except where PyYAML raises instead (`0x_`, `0b_`, `=` and `<<` as
//! values), where the text is kept as a string.
//! * Everything else is a string, in particular: `012345678901` (a leading zero with an 8 or 9 is
//!   neither octal nor decimal), dates such as `2010-09-09` (timestamps are unsupported, so
//!   `AWSTemplateFormatVersion: 2010-09-09` stays the string "2010-09-09"), and `=`/`<<` as values.
//!
//! Where JSON cannot hold the YAML value the scalar's text is kept as a string: `.inf`/`.nan`
//! (JSON has no infinities) and integers beyond 64 bits (kept exactly rather than rounded).

use crate::value::{Number, Value};

/// The value of an untagged plain scalar.
pub(super) fn resolve_plain(text: &str) -> Value {
    if let Some(v) = null_or_bool(text) {
        return v;
    }
    if let Some(v) = int(text) {
        return v;
    }
    if let Some(v) = float(text) {
        return v;
    }
    Value::from(text)
}

/// `Some` when `text` is a YAML 1.1 null or bool.
pub(super) fn null_or_bool(text: &str) -> Option<Value> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => Some(Value::Null),
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => {
            Some(Value::Bool(true))
        }
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => {
            Some(Value::Bool(false))
        }
        _ => None,
    }
}

fn split_sign(text: &str) -> (bool, &str) {
    match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    }
}

/// The value of the digits of `body` in `radix`, `_` ignored. `None` unless `body` is digits and
/// `_` with at least one digit; `Some(None)` when it is, but the value passes 128 bits.
fn radix_value(body: &str, radix: u32) -> Option<Option<u128>> {
    let mut value = Some(0u128);
    let mut any = false;
    for c in body.chars() {
        if c == '_' {
            continue;
        }
        let digit = c.to_digit(radix)?;
        any = true;
        value = value
            .and_then(|v| v.checked_mul(u128::from(radix)))
            .and_then(|v| v.checked_add(u128::from(digit)));
    }
    any.then_some(value)
}

/// `Some` when `text` matches one of the YAML 1.1 int forms.
pub(super) fn int(text: &str) -> Option<Value> {
    let (negative, body) = split_sign(text);
    let magnitude = if let Some(bin) = body.strip_prefix("0b") {
        radix_value(bin, 2)?
    } else if let Some(hex) = body.strip_prefix("0x") {
        radix_value(hex, 16)?
    } else if body == "0" {
        Some(0)
    } else if let Some(oct) = body.strip_prefix('0') {
        // `0_` is octal syntax with no digits; YAML 1.1 reads it as 0.
        if !oct.is_empty() && oct.bytes().all(|b| b == b'_') {
            Some(0)
        } else {
            radix_value(oct, 8)?
        }
    } else if body.starts_with(|c: char| matches!(c, '1'..='9')) {
        if body.contains(':') {
            sexagesimal_int(body)?
        } else {
            radix_value(body, 10)?
        }
    } else {
        return None;
    };
    Some(match magnitude.and_then(|m| signed_number(negative, m)) {
        Some(n) => Value::Number(n),
        None => Value::from(text),
    })
}

fn signed_number(negative: bool, magnitude: u128) -> Option<Number> {
    if negative {
        let m = i128::try_from(magnitude).ok()?;
        i64::try_from(-m).ok().map(Number::from)
    } else {
        u64::try_from(magnitude).ok().map(Number::from)
    }
}

/// `[1-9][0-9_]*(:[0-5]?[0-9])+`: base 60, e.g. `1:30` is 90.
fn sexagesimal_int(body: &str) -> Option<Option<u128>> {
    let mut parts = body.split(':');
    let mut value = radix_value(parts.next()?, 10)?;
    for part in parts {
        let digit = sexagesimal_digit(part)?;
        value = value
            .and_then(|v| v.checked_mul(60))
            .and_then(|v| v.checked_add(u128::from(digit)));
    }
    Some(value)
}

/// `[0-5]?[0-9]`.
fn sexagesimal_digit(part: &str) -> Option<u8> {
    match part.as_bytes() {
        [d @ b'0'..=b'9'] => Some(d - b'0'),
        [t @ b'0'..=b'5', d @ b'0'..=b'9'] => Some((t - b'0') * 10 + (d - b'0')),
        _ => None,
    }
}

/// `Some` when `text` matches one of the YAML 1.1 float forms (PyYAML's expression):
/// `[-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?`, `\.[0-9][0-9_]*([eE][-+][0-9]+)?`,
/// `[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*`, `[-+]?\.(inf|Inf|INF)`, `\.(nan|NaN|NAN)`.
pub(super) fn float(text: &str) -> Option<Value> {
    match text {
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => return Some(Value::from(text)),
        _ => {}
    }
    let (negative, body) = split_sign(text);
    let value = if body.starts_with('.') {
        // The leading-dot form takes no sign: `-.5` is a string.
        if body.len() != text.len() {
            return None;
        }
        decimal_float(body)?
    } else if body.starts_with(|c: char| c.is_ascii_digit()) {
        match body.split_once('.') {
            Some((whole, _)) if whole.contains(':') => sexagesimal_float(body)?,
            Some(_) => decimal_float(body)?,
            None => return None,
        }
    } else {
        return None;
    };
    let value = if negative { -value } else { value };
    Some(match Number::from_f64(value) {
        Some(n) => Value::Number(n),
        None => Value::from(text),
    })
}

/// `[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?` or `\.[0-9][0-9_]*([eE][-+][0-9]+)?`.
fn decimal_float(body: &str) -> Option<f64> {
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let (whole, frac) = mantissa.split_once('.')?;
    let digit_or_sep = |s: &str| s.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    if !digit_or_sep(whole) || !digit_or_sep(frac) {
        return None;
    }
    if whole.is_empty() {
        // `.5`: the first fraction character must be a digit.
        if !frac.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
    } else if !whole.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if let Some(exp) = exponent {
        let digits = exp.strip_prefix(['-', '+'])?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
    }
    let cleaned: String = body.chars().filter(|&c| c != '_').collect();
    let cleaned = if cleaned.starts_with('.') {
        format!("0{cleaned}")
    } else {
        cleaned
    };
    cleaned.parse::<f64>().ok()
}

/// `[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*`, e.g. `1:30.5` is 90.5.
fn sexagesimal_float(body: &str) -> Option<f64> {
    let (whole, frac) = body.split_once('.')?;
    if !frac.bytes().all(|b| b.is_ascii_digit() || b == b'_') {
        return None;
    }
    let mut parts = whole.split(':');
    let first = parts.next()?;
    if first.is_empty() || !first.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let mut value = radix_value(first, 10)?? as f64;
    let mut any = false;
    for part in parts {
        value = value * 60.0 + f64::from(sexagesimal_digit(part)?);
        any = true;
    }
    if !any {
        return None;
    }
    let frac: String = frac.chars().filter(|&c| c != '_').collect();
    let frac = if frac.is_empty() {
        0.0
    } else {
        format!("0.{frac}").parse::<f64>().ok()?
    };
    Some(value + frac)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nulls_and_bools() {
        for t in ["", "~", "null", "Null", "NULL"] {
            assert_eq!(resolve_plain(t), Value::Null, "{t:?}");
        }
        for t in [
            "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON",
        ] {
            assert_eq!(resolve_plain(t), json!(true), "{t:?}");
        }
        for t in [
            "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF",
        ] {
            assert_eq!(resolve_plain(t), json!(false), "{t:?}");
        }
        for t in ["y", "n", "Y", "N", "yEs", "tRUE", "nULL", "none"] {
            assert_eq!(resolve_plain(t), json!(t), "{t:?}");
        }
    }

    #[test]
    fn ints() {
        assert_eq!(resolve_plain("0"), json!(0));
        assert_eq!(resolve_plain("-0"), json!(0));
        assert_eq!(resolve_plain("42"), json!(42));
        assert_eq!(resolve_plain("+42"), json!(42));
        assert_eq!(resolve_plain("-42"), json!(-42));
        assert_eq!(resolve_plain("1_000"), json!(1000));
        assert_eq!(resolve_plain("0777"), json!(511));
        assert_eq!(resolve_plain("012345670123"), json!(1402433619));
        assert_eq!(resolve_plain("0x1F"), json!(31));
        assert_eq!(resolve_plain("-0x1f"), json!(-31));
        assert_eq!(resolve_plain("0b101"), json!(5));
        assert_eq!(resolve_plain("1:30"), json!(90));
        assert_eq!(resolve_plain("190:20:30"), json!(685230));
        assert_eq!(resolve_plain("123456789012"), json!(123456789012_u64));
        assert_eq!(resolve_plain("18446744073709551615"), json!(u64::MAX));
        assert_eq!(resolve_plain("-9223372036854775808"), json!(i64::MIN));
    }

    #[test]
    fn strings_that_look_numeric() {
        for t in [
            "012345678901",
            "09",
            "1e3",
            "1.0e3",
            "2010-09-09",
            "2012-10-17",
            "2001-12-14t21:59:43.10-05:00",
            "0x",
            "0b",
            "0xg",
            "1:60",
            "1:",
            "0.0.0.0/0",
            "10.0.0.0",
            "1.2.3",
            "=",
            "<<",
            "-",
            ".",
            "+",
            "_1",
            "1_000x",
            "v1",
            "-.5",
            "+.5",
        ] {
            assert_eq!(resolve_plain(t), json!(t), "{t:?}");
        }
    }

    #[test]
    fn oversized_ints_keep_their_text() {
        assert_eq!(
            resolve_plain("123456789012345678901234567890"),
            json!("123456789012345678901234567890")
        );
        assert_eq!(
            resolve_plain("18446744073709551616"),
            json!("18446744073709551616")
        );
        assert_eq!(
            resolve_plain("-9223372036854775809"),
            json!("-9223372036854775809")
        );
    }

    #[test]
    fn floats() {
        assert_eq!(resolve_plain("1.5"), json!(1.5));
        assert_eq!(resolve_plain("-1.5"), json!(-1.5));
        assert_eq!(resolve_plain("1."), json!(1.0));
        assert_eq!(resolve_plain(".5"), json!(0.5));
        assert_eq!(resolve_plain("6.8523015e+5"), json!(685230.15));
        assert_eq!(resolve_plain("685.230_15e+03"), json!(685230.15));
        assert_eq!(resolve_plain("1.0e-3"), json!(0.001));
        assert_eq!(resolve_plain("190:20:30.15"), json!(685230.15));
        assert_eq!(resolve_plain("1_0.2_5"), json!(10.25));
    }

    #[test]
    fn infinities_and_nan_keep_their_text() {
        for t in [".inf", "-.inf", "+.INF", ".nan", ".NaN"] {
            assert_eq!(resolve_plain(t), json!(t), "{t:?}");
        }
    }
}
