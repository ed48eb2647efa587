//! SNS subscription filter policies: parsing with AWS's validation, and matching against message
//! attributes (`FilterPolicyScope: MessageAttributes`) or the JSON message body (`MessageBody`).
//!
//! A policy is compiled into alternatives (one per combination of `$or` branches), each a list of
//! (path, conditions): a message matches when some alternative has every path matched by at
//! least one of its conditions. Attribute paths are one name long; body paths follow nested
//! objects, and arrays along the way (or as the value) match when any element does.

use serde_json::{Map, Value};
use std::net::IpAddr;

/// Where a policy looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    MessageAttributes,
    MessageBody,
}

/// A scalar a condition compares with.
#[derive(Debug, Clone, PartialEq)]
enum Scalar {
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Cmp {
    Lt,
    Le,
    Eq,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
enum AnythingBut {
    Values(Vec<Scalar>),
    Prefix(String),
    Suffix(String),
    IgnoreCase(Vec<String>),
}

#[derive(Debug, Clone, PartialEq)]
enum Cond {
    Exact(Scalar),
    Prefix(String),
    Suffix(String),
    IgnoreCase(String),
    AnythingBut(AnythingBut),
    Numeric(Vec<(Cmp, f64)>),
    Exists(bool),
    Cidr(IpAddr, u8),
}

type Alternative = Vec<(Vec<String>, Vec<Cond>)>;

/// A compiled filter policy.
#[derive(Debug, Clone, PartialEq)]
pub struct FilterPolicy {
    alternatives: Vec<Alternative>,
}

/// One message attribute as filtering sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttributeValue<'a> {
    pub data_type: &'a str,
    pub string_value: Option<&'a str>,
}

const MAX_KEYS: usize = 5;
const MAX_COMBINATIONS: usize = 150;

fn bad(msg: impl std::fmt::Display) -> String {
    format!("Invalid parameter: FilterPolicy: {msg}")
}

impl FilterPolicy {
    /// Parses and validates a policy; the error is the complete AWS message.
    pub fn parse(policy: &str, scope: Scope) -> Result<Self, String> {
        let v: Value =
            serde_json::from_str(policy).map_err(|e| bad(format!("failed to parse JSON. {e}")))?;
        let obj = v
            .as_object()
            .ok_or_else(|| bad("Filter policy must be a JSON object"))?;
        let alternatives = compile_object(obj, &[], scope, 0)?;
        for alt in &alternatives {
            if alt.len() > MAX_KEYS {
                return Err(bad("Filter policy can not have more than 5 keys"));
            }
            let combos = alt
                .iter()
                .map(|(_, c)| c.len().max(1))
                .try_fold(1usize, |acc, n| acc.checked_mul(n))
                .unwrap_or(usize::MAX);
            if combos > MAX_COMBINATIONS {
                return Err(bad("Filter policy is too complex"));
            }
        }
        if alternatives.iter().all(Vec::is_empty) && !obj.is_empty() {
            return Err(bad("Filter policy is empty"));
        }
        Ok(FilterPolicy { alternatives })
    }

    /// Matches message attributes (name → attribute).
    pub fn matches_attributes(&self, attrs: &[(&str, AttributeValue<'_>)]) -> bool {
        self.alternatives.iter().any(|alt| {
            alt.iter().all(|(path, conds)| {
                let found = path
                    .first()
                    .and_then(|name| attrs.iter().find(|(n, _)| n == name));
                let values = found.map(|(_, a)| attribute_scalars(a)).unwrap_or_default();
                conditions_match(conds, found.is_some(), &values)
            })
        })
    }

    /// Matches a message body; a body that is not a JSON object matches nothing.
    pub fn matches_body(&self, body: &str) -> bool {
        let root: Value = match serde_json::from_str(body) {
            Ok(v @ Value::Object(_)) => v,
            _ => return false,
        };
        self.alternatives.iter().any(|alt| {
            alt.iter().all(|(path, conds)| {
                let mut values = Vec::new();
                let present = collect(&root, path, &mut values);
                conditions_match(conds, present, &values)
            })
        })
    }
}

/// Compiles an object level into alternatives; `$or` multiplies them.
fn compile_object(
    obj: &Map<String, Value>,
    prefix: &[String],
    scope: Scope,
    depth: usize,
) -> Result<Vec<Alternative>, String> {
    if depth > 5 {
        return Err(bad("Filter policy is too deeply nested"));
    }
    let mut alternatives: Vec<Alternative> = vec![Vec::new()];
    for (key, value) in obj {
        let branches: Vec<Alternative> = if key == "$or" {
            let items = value
                .as_array()
                .filter(|a| a.len() >= 2)
                .ok_or_else(|| bad("$or must be an array of at least two objects"))?;
            let mut out = Vec::new();
            for item in items {
                let o = item
                    .as_object()
                    .ok_or_else(|| bad("$or must be an array of at least two objects"))?;
                out.extend(compile_object(o, prefix, scope, depth + 1)?);
            }
            out
        } else {
            let mut path = prefix.to_vec();
            path.push(key.clone());
            match value {
                Value::Array(items) => vec![vec![(path, compile_conditions(key, items)?)]],
                Value::Object(inner) => {
                    if scope == Scope::MessageAttributes {
                        return Err(bad(
                            "Filter policy scope MessageAttributes does not support nested filter policy",
                        ));
                    }
                    compile_object(inner, &path, scope, depth + 1)?
                }
                _ => {
                    return Err(bad(format!("\"{key}\" must be an object or an array")));
                }
            }
        };
        let mut next = Vec::new();
        for a in &alternatives {
            for b in &branches {
                let mut merged = a.clone();
                merged.extend(b.iter().cloned());
                next.push(merged);
            }
        }
        alternatives = next;
        if alternatives.len() > MAX_COMBINATIONS {
            return Err(bad("Filter policy is too complex"));
        }
    }
    Ok(alternatives)
}

fn scalar(v: &Value) -> Option<Scalar> {
    match v {
        Value::String(s) => Some(Scalar::Str(s.clone())),
        Value::Number(n) => n.as_f64().map(Scalar::Num),
        Value::Bool(b) => Some(Scalar::Bool(*b)),
        Value::Null => Some(Scalar::Null),
        _ => None,
    }
}

fn string_arg(op: &str, v: &Value) -> Result<String, String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| bad(format!("{op} match pattern must be a string")))
}

fn compile_conditions(key: &str, items: &[Value]) -> Result<Vec<Cond>, String> {
    if items.is_empty() {
        return Err(bad(format!("Empty arrays are not allowed (key \"{key}\")")));
    }
    items.iter().map(compile_condition).collect()
}

fn compile_condition(item: &Value) -> Result<Cond, String> {
    let Value::Object(op) = item else {
        return scalar(item)
            .map(Cond::Exact)
            .ok_or_else(|| bad("Match value must be String, number, true, false, or null"));
    };
    if op.len() != 1 {
        return Err(bad("Only one key allowed in match expression"));
    }
    let Some((name, arg)) = op.iter().next() else {
        return Err(bad("Empty objects are not allowed"));
    };
    match name.as_str() {
        "prefix" => Ok(Cond::Prefix(string_arg("prefix", arg)?)),
        "suffix" => Ok(Cond::Suffix(string_arg("suffix", arg)?)),
        "equals-ignore-case" => Ok(Cond::IgnoreCase(string_arg("equals-ignore-case", arg)?)),
        "exists" => arg
            .as_bool()
            .map(Cond::Exists)
            .ok_or_else(|| bad("exists match pattern must be either true or false.")),
        "numeric" => compile_numeric(arg),
        "anything-but" => compile_anything_but(arg),
        "cidr" => compile_cidr(arg),
        other => Err(bad(format!("Unrecognized match type {other}"))),
    }
}

fn compile_numeric(arg: &Value) -> Result<Cond, String> {
    let items = arg
        .as_array()
        .filter(|a| !a.is_empty() && a.len() % 2 == 0 && a.len() <= 4)
        .ok_or_else(|| bad("Value of numeric must be an array of operator and value pairs"))?;
    let mut out = Vec::new();
    for pair in items.chunks_exact(2) {
        let [op_value, bound] = pair else {
            continue;
        };
        let op = match op_value.as_str() {
            Some("<") => Cmp::Lt,
            Some("<=") => Cmp::Le,
            Some("=") => Cmp::Eq,
            Some(">") => Cmp::Gt,
            Some(">=") => Cmp::Ge,
            _ => {
                return Err(bad(format!(
                    "Unrecognized numeric range operator: {op_value}"
                )));
            }
        };
        let n = bound
            .as_f64()
            .ok_or_else(|| bad(format!("Value of {op_value} must be numeric")))?;
        out.push((op, n));
    }
    let has_eq = out.iter().any(|(op, _)| *op == Cmp::Eq);
    if has_eq && out.len() > 1 {
        return Err(bad("Bad numeric range operator: = cannot be combined"));
    }
    if out.len() == 2 {
        let lower = out
            .iter()
            .filter(|(op, _)| matches!(op, Cmp::Gt | Cmp::Ge))
            .count();
        if lower != 1 {
            return Err(bad("Too many elements in numeric expression"));
        }
        let lo = out.iter().find(|(op, _)| matches!(op, Cmp::Gt | Cmp::Ge));
        let hi = out.iter().find(|(op, _)| matches!(op, Cmp::Lt | Cmp::Le));
        if let (Some((_, l)), Some((_, h))) = (lo, hi)
            && l >= h
        {
            return Err(bad("Bottom must be less than top"));
        }
    }
    Ok(Cond::Numeric(out))
}

fn compile_anything_but(arg: &Value) -> Result<Cond, String> {
    let nested_strings = |op: &str, v: &Value| -> Result<Vec<String>, String> {
        match v {
            Value::String(s) => Ok(vec![s.clone()]),
            Value::Array(a) if !a.is_empty() => a.iter().map(|i| string_arg(op, i)).collect(),
            _ => Err(bad(format!("{op} match pattern must be a string"))),
        }
    };
    match arg {
        Value::Array(items) if !items.is_empty() => {
            let vals = items
                .iter()
                .map(|i| match i {
                    Value::String(_) | Value::Number(_) => scalar(i),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    bad("Inside anything but list, start|null|boolean is not supported.")
                })?;
            Ok(Cond::AnythingBut(AnythingBut::Values(vals)))
        }
        Value::String(_) | Value::Number(_) => Ok(Cond::AnythingBut(AnythingBut::Values(vec![
            scalar(arg).unwrap_or(Scalar::Null),
        ]))),
        Value::Object(o) if o.len() == 1 => {
            let Some((op, v)) = o.iter().next() else {
                return Err(bad(
                    "Value of anything-but must be an array or single string/number value.",
                ));
            };
            match op.as_str() {
                "prefix" => Ok(Cond::AnythingBut(AnythingBut::Prefix(string_arg(
                    "prefix", v,
                )?))),
                "suffix" => Ok(Cond::AnythingBut(AnythingBut::Suffix(string_arg(
                    "suffix", v,
                )?))),
                "equals-ignore-case" => Ok(Cond::AnythingBut(AnythingBut::IgnoreCase(
                    nested_strings("equals-ignore-case", v)?,
                ))),
                other => Err(bad(format!("Unsupported anything-but pattern: {other}"))),
            }
        }
        _ => Err(bad(
            "Value of anything-but must be an array or single string/number value.",
        )),
    }
}

fn compile_cidr(arg: &Value) -> Result<Cond, String> {
    let err = || bad(format!("Malformed CIDR, one '/' required: {arg}"));
    let s = arg.as_str().ok_or_else(err)?;
    let (ip, bits) = s.split_once('/').ok_or_else(err)?;
    let ip: IpAddr = ip
        .parse()
        .map_err(|_| bad(format!("Nonstandard IP address: {ip}")))?;
    let bits: u8 = bits.parse().map_err(|_| err())?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    if bits > max {
        return Err(err());
    }
    Ok(Cond::Cidr(ip, bits))
}

/// The values an attribute offers to matching: String.Array elements, a Number, or a string.
/// Binary attributes offer none (they only satisfy `exists`).
fn attribute_scalars(a: &AttributeValue<'_>) -> Vec<Scalar> {
    let Some(s) = a.string_value else {
        return Vec::new();
    };
    if a.data_type.starts_with("String.Array") {
        match serde_json::from_str::<Value>(s) {
            Ok(Value::Array(items)) => items.iter().filter_map(scalar).collect(),
            _ => Vec::new(),
        }
    } else if a.data_type.starts_with("Number") {
        s.trim()
            .parse::<f64>()
            .map(Scalar::Num)
            .into_iter()
            .collect()
    } else if a.data_type.starts_with("String") {
        vec![Scalar::Str(s.to_string())]
    } else {
        Vec::new()
    }
}

/// Collects the scalars at `path`, expanding arrays; returns whether the path exists.
fn collect(v: &Value, path: &[String], out: &mut Vec<Scalar>) -> bool {
    match v {
        Value::Array(items) => {
            let mut present = false;
            for i in items {
                present |= collect(i, path, out);
            }
            present
        }
        Value::Object(o) => match path.split_first() {
            Some((head, rest)) => o.get(head).is_some_and(|child| collect(child, rest, out)),
            None => false,
        },
        leaf => {
            if !path.is_empty() {
                return false;
            }
            if let Some(s) = scalar(leaf) {
                out.push(s);
            }
            true
        }
    }
}

fn conditions_match(conds: &[Cond], present: bool, values: &[Scalar]) -> bool {
    conds.iter().any(|c| match c {
        Cond::Exists(want) => *want == present,
        _ => values.iter().any(|v| cond_matches(c, v)),
    })
}

fn nums_equal(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

fn scalar_equal(a: &Scalar, b: &Scalar) -> bool {
    match (a, b) {
        (Scalar::Num(x), Scalar::Num(y)) => nums_equal(*x, *y),
        _ => a == b,
    }
}

fn cond_matches(c: &Cond, v: &Scalar) -> bool {
    match (c, v) {
        (Cond::Exact(want), v) => scalar_equal(want, v),
        (Cond::Prefix(p), Scalar::Str(s)) => s.starts_with(p.as_str()),
        (Cond::Suffix(p), Scalar::Str(s)) => s.ends_with(p.as_str()),
        (Cond::IgnoreCase(p), Scalar::Str(s)) => s.to_lowercase() == p.to_lowercase(),
        (Cond::AnythingBut(ab), v) => match (ab, v) {
            (AnythingBut::Values(list), v) => !list.iter().any(|x| scalar_equal(x, v)),
            (AnythingBut::Prefix(p), Scalar::Str(s)) => !s.starts_with(p.as_str()),
            (AnythingBut::Suffix(p), Scalar::Str(s)) => !s.ends_with(p.as_str()),
            (AnythingBut::IgnoreCase(list), Scalar::Str(s)) => {
                !list.iter().any(|x| x.to_lowercase() == s.to_lowercase())
            }
            _ => false,
        },
        (Cond::Numeric(ranges), Scalar::Num(n)) => ranges.iter().all(|(op, x)| match op {
            Cmp::Lt => n < x,
            Cmp::Le => n <= x,
            Cmp::Eq => nums_equal(*n, *x),
            Cmp::Gt => n > x,
            Cmp::Ge => n >= x,
        }),
        (Cond::Cidr(net, bits), Scalar::Str(s)) => s
            .parse::<IpAddr>()
            .is_ok_and(|ip| in_network(ip, *net, *bits)),
        _ => false,
    }
}

fn in_network(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net) {
        (IpAddr::V4(a), IpAddr::V4(b)) => {
            let mask = if bits == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(bits))
            };
            u32::from(a) & mask == u32::from(b) & mask
        }
        (IpAddr::V6(a), IpAddr::V6(b)) => {
            let mask = if bits == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(bits))
            };
            u128::from(a) & mask == u128::from(b) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs_policy(p: &str) -> FilterPolicy {
        FilterPolicy::parse(p, Scope::MessageAttributes).unwrap()
    }

    fn body_policy(p: &str) -> FilterPolicy {
        FilterPolicy::parse(p, Scope::MessageBody).unwrap()
    }

    fn s<'a>(v: &'a str) -> AttributeValue<'a> {
        AttributeValue {
            data_type: "String",
            string_value: Some(v),
        }
    }

    fn n<'a>(v: &'a str) -> AttributeValue<'a> {
        AttributeValue {
            data_type: "Number",
            string_value: Some(v),
        }
    }

    fn arr<'a>(v: &'a str) -> AttributeValue<'a> {
        AttributeValue {
            data_type: "String.Array",
            string_value: Some(v),
        }
    }

    #[test]
    fn exact_strings_and_numbers() {
        let p = attrs_policy(r#"{"color": ["red", "blue"], "size": [10]}"#);
        assert!(p.matches_attributes(&[("color", s("red")), ("size", n("10"))]));
        assert!(p.matches_attributes(&[("color", s("blue")), ("size", n("10.0"))]));
        assert!(!p.matches_attributes(&[("color", s("green")), ("size", n("10"))]));
        assert!(!p.matches_attributes(&[("color", s("red"))]));
        // A string "10" is not the number 10.
        assert!(!p.matches_attributes(&[("color", s("red")), ("size", s("10"))]));
    }

    #[test]
    fn prefix_suffix_ignore_case() {
        let p = attrs_policy(
            r#"{"a": [{"prefix": "ord"}], "b": [{"suffix": ".png"}], "c": [{"equals-ignore-case": "HeLLo"}]}"#,
        );
        assert!(p.matches_attributes(&[("a", s("order")), ("b", s("x.png")), ("c", s("hello"))]));
        assert!(!p.matches_attributes(&[("a", s("xorder")), ("b", s("x.png")), ("c", s("hello"))]));
        assert!(!p.matches_attributes(&[("a", s("order")), ("b", s("x.jpg")), ("c", s("hello"))]));
        assert!(!p.matches_attributes(&[("a", s("order")), ("b", s("x.png")), ("c", s("help"))]));
    }

    #[test]
    fn anything_but_forms() {
        let p = attrs_policy(r#"{"c": [{"anything-but": ["red", "blue"]}]}"#);
        assert!(p.matches_attributes(&[("c", s("green"))]));
        assert!(!p.matches_attributes(&[("c", s("red"))]));
        assert!(!p.matches_attributes(&[]));
        let p = attrs_policy(r#"{"c": [{"anything-but": {"prefix": "int"}}]}"#);
        assert!(p.matches_attributes(&[("c", s("external"))]));
        assert!(!p.matches_attributes(&[("c", s("internal"))]));
        let p = attrs_policy(r#"{"n": [{"anything-but": 5}]}"#);
        assert!(p.matches_attributes(&[("n", n("6"))]));
        assert!(!p.matches_attributes(&[("n", n("5"))]));
        let p = attrs_policy(r#"{"c": [{"anything-but": {"equals-ignore-case": ["RED"]}}]}"#);
        assert!(!p.matches_attributes(&[("c", s("red"))]));
        assert!(p.matches_attributes(&[("c", s("reddish"))]));
    }

    #[test]
    fn numeric_ranges() {
        let p = attrs_policy(r#"{"price": [{"numeric": [">", 0, "<=", 100]}]}"#);
        assert!(p.matches_attributes(&[("price", n("100"))]));
        assert!(p.matches_attributes(&[("price", n("0.5"))]));
        assert!(!p.matches_attributes(&[("price", n("0"))]));
        assert!(!p.matches_attributes(&[("price", n("100.01"))]));
        assert!(!p.matches_attributes(&[("price", s("50"))]));
        let p = attrs_policy(r#"{"price": [{"numeric": ["=", 3.5]}]}"#);
        assert!(p.matches_attributes(&[("price", n("3.5"))]));
    }

    #[test]
    fn exists_and_arrays() {
        let p = attrs_policy(r#"{"a": [{"exists": true}], "b": [{"exists": false}]}"#);
        assert!(p.matches_attributes(&[("a", s("x"))]));
        assert!(!p.matches_attributes(&[("a", s("x")), ("b", s("y"))]));
        assert!(!p.matches_attributes(&[]));
        let p = attrs_policy(r#"{"tags": ["vip"]}"#);
        assert!(p.matches_attributes(&[("tags", arr(r#"["basic", "vip"]"#))]));
        assert!(!p.matches_attributes(&[("tags", arr(r#"["basic"]"#))]));
    }

    #[test]
    fn or_alternatives() {
        let p = attrs_policy(
            r#"{"source": ["aws.cloudwatch"], "$or": [{"metricName": ["CPU"]}, {"namespace": ["AWS/EC2"]}]}"#,
        );
        assert!(p.matches_attributes(&[("source", s("aws.cloudwatch")), ("metricName", s("CPU"))]));
        assert!(
            p.matches_attributes(&[("source", s("aws.cloudwatch")), ("namespace", s("AWS/EC2"))])
        );
        assert!(!p.matches_attributes(&[("source", s("aws.cloudwatch")), ("namespace", s("x"))]));
        assert!(!p.matches_attributes(&[("metricName", s("CPU"))]));
    }

    #[test]
    fn nested_body_policies() {
        let p = body_policy(
            r#"{"order": {"status": ["paid"], "total": [{"numeric": [">=", 100]}]}, "items": {"sku": [{"prefix": "A-"}]}}"#,
        );
        assert!(p.matches_body(r#"{"order": {"status": "paid", "total": 150}, "items": [{"sku": "B-1"}, {"sku": "A-2"}]}"#));
        assert!(!p.matches_body(
            r#"{"order": {"status": "paid", "total": 50}, "items": [{"sku": "A-2"}]}"#
        ));
        assert!(!p.matches_body(r#"{"order": {"status": "paid", "total": 150}}"#));
        assert!(!p.matches_body("not json"));
        let p = body_policy(r#"{"flag": [true], "gone": [{"exists": false}], "nothing": [null]}"#);
        assert!(p.matches_body(r#"{"flag": true, "nothing": null}"#));
        assert!(!p.matches_body(r#"{"flag": true, "nothing": null, "gone": 1}"#));
    }

    #[test]
    fn cidr_matching() {
        let p = attrs_policy(r#"{"ip": [{"cidr": "10.0.0.0/24"}]}"#);
        assert!(p.matches_attributes(&[("ip", s("10.0.0.255"))]));
        assert!(!p.matches_attributes(&[("ip", s("10.0.1.1"))]));
    }

    #[test]
    fn validation_errors() {
        let err = |p: &str, scope| FilterPolicy::parse(p, scope).unwrap_err();
        assert!(err("nope", Scope::MessageAttributes).contains("failed to parse JSON"));
        assert!(
            err(r#"{"a": "x"}"#, Scope::MessageAttributes)
                .contains("must be an object or an array")
        );
        assert!(
            err(r#"{"a": {"b": ["x"]}}"#, Scope::MessageAttributes)
                .contains("does not support nested")
        );
        assert!(
            err(r#"{"a": [{"bogus": 1}]}"#, Scope::MessageAttributes)
                .contains("Unrecognized match type bogus")
        );
        assert!(
            err(
                r#"{"a": [{"numeric": ["<>", 1]}]}"#,
                Scope::MessageAttributes
            )
            .contains("numeric range operator")
        );
        assert!(err(r#"{"a": [{"exists": "yes"}]}"#, Scope::MessageAttributes).contains("exists"));
        assert!(
            err(
                r#"{"a":[1],"b":[1],"c":[1],"d":[1],"e":[1],"f":[1]}"#,
                Scope::MessageAttributes
            )
            .contains("more than 5 keys")
        );
        let many: Vec<String> = (0..13).map(|i| format!("\"v{i}\"")).collect();
        let list = many.join(",");
        let big = format!(r#"{{"a":[{list}],"b":[{list}]}}"#);
        assert!(err(&big, Scope::MessageAttributes).contains("too complex"));
        assert!(err(r#"{"a": []}"#, Scope::MessageAttributes).contains("Empty arrays"));
    }
}
