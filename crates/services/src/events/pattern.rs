//! EventBridge event patterns ("Content filtering in Amazon EventBridge event patterns"): every
//! key of the pattern must match the event; a leaf is an array of matchers, any of which may
//! match; an event field that is an array matches when any element does. Matchers: literals
//! (string, number, true/false, null), `prefix`, `suffix` (both also with `equals-ignore-case`),
//! `anything-but` (values, lists, `prefix`, `suffix`, `equals-ignore-case`, `wildcard`),
//! `numeric`, `exists`, `cidr`, `equals-ignore-case`, `wildcard`, and `$or` between sub-patterns.

use serde_json::{Map, Value};
use std::net::IpAddr;

/// A pattern refused as AWS refuses it (InvalidEventPatternException).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(pub String);

#[derive(Debug, Clone)]
pub struct Pattern {
    root: Node,
}

#[derive(Debug, Clone)]
enum Node {
    /// Every field must match; each `$or` entry is a list of alternatives of which one must.
    Object {
        fields: Vec<(String, Field)>,
        ors: Vec<Vec<Node>>,
    },
}

#[derive(Debug, Clone)]
enum Field {
    Nested(Node),
    Matchers(Vec<Matcher>),
}

#[derive(Debug, Clone)]
enum Matcher {
    Literal(Value),
    Prefix(String, bool),
    Suffix(String, bool),
    IgnoreCase(String),
    Wildcard(String),
    AnythingBut(Box<AnythingBut>),
    Numeric(Vec<(String, f64)>),
    Exists(bool),
    Cidr(IpAddr, u8),
}

#[derive(Debug, Clone)]
enum AnythingBut {
    Values(Vec<Value>),
    Prefix(String),
    Suffix(String),
    IgnoreCase(Vec<String>),
    Wildcard(Vec<String>),
}

fn bad(reason: impl Into<String>) -> PatternError {
    PatternError(format!(
        "Event pattern is not valid. Reason: {}",
        reason.into()
    ))
}

impl Pattern {
    pub fn parse(text: &str) -> Result<Pattern, PatternError> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| bad(format!("Filter is not valid JSON: {e}")))?;
        match &v {
            Value::Object(m) => Ok(Pattern { root: node(m)? }),
            _ => Err(bad("Filter is not an object")),
        }
    }

    pub fn matches(&self, event: &Value) -> bool {
        match_node(&self.root, Some(event))
    }
}

fn node(m: &Map<String, Value>) -> Result<Node, PatternError> {
    let mut fields = Vec::new();
    let mut ors = Vec::new();
    for (k, v) in m {
        if k == "$or" {
            let alts = v
                .as_array()
                .filter(|a| a.len() >= 2)
                .ok_or_else(|| bad("$or must be an array of at least two patterns"))?;
            let alts = alts
                .iter()
                .map(|a| match a {
                    Value::Object(o) => node(o),
                    _ => Err(bad("$or entries must be objects")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            ors.push(alts);
            continue;
        }
        let field = match v {
            Value::Object(o) => Field::Nested(node(o)?),
            Value::Array(items) => {
                if items.is_empty() {
                    return Err(bad(format!("Empty arrays are not allowed at {k}")));
                }
                Field::Matchers(items.iter().map(matcher).collect::<Result<_, _>>()?)
            }
            _ => {
                return Err(bad(format!(
                    "Match value must be String, number, true, false, or null at {k}"
                )));
            }
        };
        fields.push((k.clone(), field));
    }
    Ok(Node::Object { fields, ors })
}

fn text(v: &Value, what: &str) -> Result<String, PatternError> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| bad(format!("{what} match pattern must be a string")))
}

/// `"x"` or `{"equals-ignore-case": "x"}` inside prefix/suffix.
fn affix(v: &Value, what: &str) -> Result<(String, bool), PatternError> {
    match v {
        Value::Object(o) if o.len() == 1 => match o.get("equals-ignore-case") {
            Some(s) => Ok((text(s, what)?, true)),
            None => Err(bad(format!("Unsupported {what} option"))),
        },
        _ => Ok((text(v, what)?, false)),
    }
}

fn strings(v: &Value, what: &str) -> Result<Vec<String>, PatternError> {
    match v {
        Value::Array(items) => items.iter().map(|i| text(i, what)).collect(),
        _ => Ok(vec![text(v, what)?]),
    }
}

fn matcher(v: &Value) -> Result<Matcher, PatternError> {
    let o = match v {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err(bad(
                "Match value must be String, number, true, false, or null",
            ));
        }
        _ => return Ok(Matcher::Literal(v.clone())),
    };
    let (op, arg) = match o.iter().next() {
        Some(kv) if o.len() == 1 => kv,
        _ => return Err(bad("Only one key allowed in match expression")),
    };
    Ok(match op.as_str() {
        "prefix" => {
            let (s, ic) = affix(arg, "prefix")?;
            Matcher::Prefix(s, ic)
        }
        "suffix" => {
            let (s, ic) = affix(arg, "suffix")?;
            Matcher::Suffix(s, ic)
        }
        "equals-ignore-case" => Matcher::IgnoreCase(text(arg, "equals-ignore-case")?),
        "wildcard" => {
            let w = text(arg, "wildcard")?;
            if w.contains("**") {
                return Err(bad(
                    "Consecutive wildcard characters at pos are not allowed",
                ));
            }
            Matcher::Wildcard(w)
        }
        "exists" => Matcher::Exists(
            arg.as_bool()
                .ok_or_else(|| bad("exists match pattern must be either true or false."))?,
        ),
        "numeric" => {
            let items = arg
                .as_array()
                .filter(|a| !a.is_empty() && a.len() % 2 == 0 && a.len() <= 4)
                .ok_or_else(|| bad("Value of numeric must be an array."))?;
            let mut out = Vec::new();
            for pair in items.chunks(2) {
                let (Some(op), Some(n)) = (
                    pair.first().and_then(Value::as_str),
                    pair.get(1).and_then(Value::as_f64),
                ) else {
                    return Err(bad("Malformed numeric filter"));
                };
                if !["=", "<", "<=", ">", ">="].contains(&op) {
                    return Err(bad(format!("Unrecognized numeric range operator: {op}")));
                }
                out.push((op.to_string(), n));
            }
            Matcher::Numeric(out)
        }
        "cidr" => {
            let s = text(arg, "cidr")?;
            let (ip, bits) = s
                .split_once('/')
                .ok_or_else(|| bad(format!("Malformed CIDR, one '/' required: {s}")))?;
            let ip: IpAddr = ip
                .parse()
                .map_err(|_| bad(format!("Nonstandard IP address: {ip}")))?;
            let max = if ip.is_ipv4() { 32 } else { 128 };
            let bits: u8 = bits
                .parse()
                .ok()
                .filter(|b| *b <= max)
                .ok_or_else(|| bad(format!("Malformed CIDR: {s}")))?;
            Matcher::Cidr(ip, bits)
        }
        "anything-but" => Matcher::AnythingBut(Box::new(match arg {
            Value::Object(inner) if inner.len() == 1 => {
                let (k, a) = inner.iter().next().ok_or_else(|| bad("anything-but"))?;
                match k.as_str() {
                    "prefix" => AnythingBut::Prefix(text(a, "prefix")?),
                    "suffix" => AnythingBut::Suffix(text(a, "suffix")?),
                    "equals-ignore-case" => {
                        AnythingBut::IgnoreCase(strings(a, "equals-ignore-case")?)
                    }
                    "wildcard" => AnythingBut::Wildcard(strings(a, "wildcard")?),
                    other => return Err(bad(format!("Unsupported anything-but pattern: {other}"))),
                }
            }
            Value::Array(items) => {
                if items.iter().any(|i| i.is_object() || i.is_array()) {
                    return Err(bad(
                        "Inside anything but list, start|null|boolean is not supported.",
                    ));
                }
                AnythingBut::Values(items.clone())
            }
            Value::Object(_) => return Err(bad("Only one key allowed in anything-but")),
            other => AnythingBut::Values(vec![other.clone()]),
        })),
        other => return Err(bad(format!("Unrecognized match type {other}"))),
    })
}

fn match_node(n: &Node, v: Option<&Value>) -> bool {
    let Node::Object { fields, ors } = n;
    let obj = v.and_then(Value::as_object);
    fields.iter().all(|(k, f)| {
        let child = obj.and_then(|o| o.get(k));
        match f {
            Field::Nested(inner) => match child {
                // A nested pattern over an array of objects matches if any element does.
                Some(Value::Array(items)) => items.iter().any(|i| match_node(inner, Some(i))),
                _ => match_node(inner, child),
            },
            Field::Matchers(ms) => match_field(ms, child),
        }
    }) && ors.iter().all(|alts| alts.iter().any(|a| match_node(a, v)))
}

fn match_field(ms: &[Matcher], v: Option<&Value>) -> bool {
    ms.iter().any(|m| match (m, v) {
        (Matcher::Exists(want), _) => {
            let present = match v {
                None => false,
                // An object field (not a leaf) does not "exist" as a leaf value.
                Some(Value::Object(_)) => false,
                Some(Value::Array(a)) => !a.is_empty(),
                Some(_) => true,
            };
            present == *want
        }
        (_, None) => false,
        (_, Some(Value::Array(items))) => items.iter().any(|i| match_value(m, i)),
        (_, Some(value)) => match_value(m, value),
    })
}

fn eq_literal(want: &Value, got: &Value) -> bool {
    match (want, got) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => want == got,
    }
}

fn match_value(m: &Matcher, v: &Value) -> bool {
    let s = v.as_str();
    match m {
        Matcher::Literal(want) => eq_literal(want, v),
        Matcher::Prefix(p, false) => s.is_some_and(|s| s.starts_with(p.as_str())),
        Matcher::Prefix(p, true) => {
            s.is_some_and(|s| s.to_lowercase().starts_with(&p.to_lowercase()))
        }
        Matcher::Suffix(p, false) => s.is_some_and(|s| s.ends_with(p.as_str())),
        Matcher::Suffix(p, true) => {
            s.is_some_and(|s| s.to_lowercase().ends_with(&p.to_lowercase()))
        }
        Matcher::IgnoreCase(want) => s.is_some_and(|s| s.to_lowercase() == want.to_lowercase()),
        Matcher::Wildcard(w) => s.is_some_and(|s| wildcard(w, s)),
        Matcher::Exists(_) => true,
        Matcher::Numeric(conds) => v.as_f64().is_some_and(|n| {
            conds.iter().all(|(op, want)| match op.as_str() {
                "=" => n == *want,
                "<" => n < *want,
                "<=" => n <= *want,
                ">" => n > *want,
                _ => n >= *want,
            })
        }),
        Matcher::Cidr(net, bits) => s
            .and_then(|s| s.parse::<IpAddr>().ok())
            .is_some_and(|ip| in_cidr(ip, *net, *bits)),
        Matcher::AnythingBut(ab) => match ab.as_ref() {
            AnythingBut::Values(vals) => !vals.iter().any(|w| eq_literal(w, v)),
            AnythingBut::Prefix(p) => s.is_some_and(|s| !s.starts_with(p.as_str())),
            AnythingBut::Suffix(p) => s.is_some_and(|s| !s.ends_with(p.as_str())),
            AnythingBut::IgnoreCase(vals) => {
                s.is_some_and(|s| !vals.iter().any(|w| w.to_lowercase() == s.to_lowercase()))
            }
            AnythingBut::Wildcard(ws) => s.is_some_and(|s| !ws.iter().any(|w| wildcard(w, s))),
        },
    }
}

fn in_cidr(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
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

/// `*` matches any run of characters (`\*` is a literal star).
fn wildcard(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Tokens: Some(c) literal, None star.
    let mut toks: Vec<Option<char>> = Vec::new();
    let mut i = 0;
    while let Some(&c) = p.get(i) {
        match c {
            '\\' if p.get(i + 1).is_some() => {
                toks.push(p.get(i + 1).copied());
                i += 2;
            }
            '*' => {
                toks.push(None);
                i += 1;
            }
            c => {
                toks.push(Some(c));
                i += 1;
            }
        }
    }
    // Classic greedy matching with backtracking to the last star.
    let (mut ti, mut pi) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match toks.get(pi) {
            Some(Some(c)) if t.get(ti) == Some(c) => {
                ti += 1;
                pi += 1;
            }
            Some(None) => {
                star = Some((pi, ti));
                pi += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    toks[pi.min(toks.len())..].iter().all(Option::is_none)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(p: Value, e: Value) -> bool {
        Pattern::parse(&p.to_string()).expect("valid").matches(&e)
    }

    #[test]
    fn matchers() {
        let e = json!({"source": "my.app", "detail-type": "Order", "detail": {
            "state": "Running", "n": 5, "ip": "10.0.0.7", "file": "a/b.png", "tags": ["x", "y"],
            "items": [{"sku": "A"}, {"sku": "B"}], "none": null}});
        assert!(m(json!({"source": ["my.app"]}), e.clone()));
        assert!(!m(json!({"source": ["other"]}), e.clone()));
        assert!(m(
            json!({"detail": {"state": [{"prefix": "Run"}]}}),
            e.clone()
        ));
        assert!(m(
            json!({"detail": {"state": [{"prefix": {"equals-ignore-case": "RUN"}}]}}),
            e.clone()
        ));
        assert!(m(
            json!({"detail": {"file": [{"suffix": ".png"}]}}),
            e.clone()
        ));
        assert!(m(
            json!({"detail": {"state": [{"anything-but": ["Stopped", "Pending"]}]}}),
            e.clone()
        ));
        assert!(!m(
            json!({"detail": {"state": [{"anything-but": {"prefix": "Ru"}}]}}),
            e.clone()
        ));
        assert!(m(
            json!({"detail": {"n": [{"numeric": [">", 0, "<=", 5]}]}}),
            e.clone()
        ));
        assert!(!m(
            json!({"detail": {"n": [{"numeric": ["<", 5]}]}}),
            e.clone()
        ));
        assert!(m(json!({"detail": {"n": [5.0]}}), e.clone()));
        assert!(m(
            json!({"detail": {"missing": [{"exists": false}], "n": [{"exists": true}]}}),
            e.clone()
        ));
        assert!(!m(
            json!({"detail": {"missing": [{"exists": true}]}}),
            e.clone()
        ));
        assert!(m(
            json!({"detail": {"ip": [{"cidr": "10.0.0.0/24"}]}}),
            e.clone()
        ));
        assert!(!m(
            json!({"detail": {"ip": [{"cidr": "10.0.1.0/24"}]}}),
            e.clone()
        ));
        assert!(m(
            json!({"detail": {"state": [{"equals-ignore-case": "running"}]}}),
            e.clone()
        ));
        assert!(m(
            json!({"detail": {"file": [{"wildcard": "a/*.png"}]}}),
            e.clone()
        ));
        assert!(!m(
            json!({"detail": {"file": [{"wildcard": "b/*"}]}}),
            e.clone()
        ));
        assert!(m(json!({"detail": {"tags": ["y"]}}), e.clone()));
        assert!(m(json!({"detail": {"items": {"sku": ["B"]}}}), e.clone()));
        assert!(m(json!({"detail": {"none": [null]}}), e.clone()));
        assert!(m(
            json!({"$or": [{"source": ["nope"]}, {"detail": {"n": [5]}}]}),
            e.clone()
        ));
        assert!(!m(
            json!({"$or": [{"source": ["nope"]}, {"detail": {"n": [6]}}]}),
            e.clone()
        ));
        assert!(!m(
            json!({"detail": {"missing": [{"anything-but": "x"}]}}),
            e
        ));
    }

    #[test]
    fn invalid_patterns() {
        for p in [
            "[]",
            "{\"source\": \"x\"}",
            "{\"source\": []}",
            "{\"a\": [{\"nope\": 1}]}",
            "{\"a\": [{\"numeric\": [\">\"]}]}",
            "{\"a\": [{\"cidr\": \"10.0.0.0\"}]}",
            "not json",
        ] {
            assert!(Pattern::parse(p).is_err(), "{p}");
        }
    }

    #[test]
    fn wildcards() {
        assert!(wildcard("*", ""));
        assert!(wildcard("a*b*c", "axxbyyc"));
        assert!(!wildcard("a*b*c", "axxbyy"));
        assert!(wildcard("a\\*", "a*"));
        assert!(!wildcard("a\\*", "ab"));
    }
}
