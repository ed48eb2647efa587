//! ASL's JSONPath: reference paths (`$.a.b[0]`, `$['key']`), the query forms ASL allows in
//! InputPath/ItemsPath/`.$` fields (`[*]`, `..`, slices, `[?(@.x op v)]` filters), and the
//! writes ResultPath makes. Hand-written: ASL paths are a small subset and no JSONPath crate
//! matches ASL's reference-path rules (a path that matches nothing is an error, not `[]`).

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Field(String),
    Index(i64),
    Wildcard,
    Descend(String),
    Slice(Option<i64>, Option<i64>),
    Filter(String, String, Value),
}

/// A parsed path; `definite` when it names one node (no wildcard, descent, slice or filter).
#[derive(Debug, Clone)]
pub struct Path {
    pub steps: Vec<Step>,
}

pub fn parse(text: &str) -> Result<Path, String> {
    let rest = text
        .strip_prefix('$')
        .ok_or_else(|| format!("The path '{text}' does not start with '$'"))?;
    let b = rest.as_bytes();
    let mut i = 0;
    let mut steps = Vec::new();
    let bad = || format!("Invalid path '{text}'");
    while i < b.len() {
        match b[i] {
            b'.' if b.get(i + 1) == Some(&b'.') => {
                i += 2;
                let start = i;
                while i < b.len() && b[i] != b'.' && b[i] != b'[' {
                    i += 1;
                }
                steps.push(Step::Descend(rest[start..i].to_string()));
            }
            b'.' => {
                i += 1;
                let start = i;
                while i < b.len() && b[i] != b'.' && b[i] != b'[' {
                    i += 1;
                }
                let name = &rest[start..i];
                if name.is_empty() {
                    return Err(bad());
                }
                steps.push(if name == "*" {
                    Step::Wildcard
                } else {
                    Step::Field(name.to_string())
                });
            }
            b'[' => {
                let close = find_close(rest, i).ok_or_else(bad)?;
                let inner = rest[i + 1..close].trim();
                i = close + 1;
                steps.push(bracket(inner).ok_or_else(bad)?);
            }
            _ => return Err(bad()),
        }
    }
    Ok(Path { steps })
}

fn find_close(s: &str, open: usize) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (k, c) in s[open + 1..].char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, ']') => return Some(open + 1 + k),
            _ => {}
        }
    }
    None
}

fn bracket(inner: &str) -> Option<Step> {
    if inner == "*" {
        return Some(Step::Wildcard);
    }
    if let Some(q) = inner
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
    {
        return Some(Step::Field(q.to_string()));
    }
    if let Some(f) = inner.strip_prefix("?(").and_then(|s| s.strip_suffix(')')) {
        let f = f.trim().strip_prefix("@.")?;
        for op in ["==", "!=", "<=", ">=", "<", ">"] {
            if let Some((l, r)) = f.split_once(op) {
                let r = r.trim();
                let v = serde_json::from_str(r).ok().or_else(|| {
                    r.strip_prefix('\'')
                        .and_then(|s| s.strip_suffix('\''))
                        .map(|s| Value::String(s.to_string()))
                })?;
                return Some(Step::Filter(l.trim().to_string(), op.to_string(), v));
            }
        }
        return None;
    }
    if let Some((a, b)) = inner.split_once(':') {
        let p = |s: &str| -> Option<Option<i64>> {
            let s = s.trim();
            if s.is_empty() {
                Some(None)
            } else {
                s.parse().ok().map(Some)
            }
        };
        return Some(Step::Slice(p(a)?, p(b)?));
    }
    inner.parse().ok().map(Step::Index)
}

impl Path {
    pub fn definite(&self) -> bool {
        self.steps
            .iter()
            .all(|s| matches!(s, Step::Field(_) | Step::Index(_)))
    }
}

fn index(len: usize, i: i64) -> Option<usize> {
    let i = if i < 0 { len as i64 + i } else { i };
    (0..len as i64).contains(&i).then_some(i as usize)
}

fn descend(v: &Value, name: &str, out: &mut Vec<Value>) {
    match v {
        Value::Object(m) => {
            if let Some(x) = m.get(name) {
                out.push(x.clone());
            }
            for x in m.values() {
                descend(x, name, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|x| descend(x, name, out)),
        _ => {}
    }
}

fn compare(a: &Value, op: &str, b: &Value) -> bool {
    use std::cmp::Ordering::*;
    let ord = match (a, b) {
        (Value::Number(x), Value::Number(y)) => x
            .as_f64()
            .zip(y.as_f64())
            .and_then(|(x, y)| x.partial_cmp(&y)),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => (a == b).then_some(Equal),
    };
    match op {
        "==" => ord == Some(Equal),
        "!=" => ord != Some(Equal),
        "<" => ord == Some(Less),
        "<=" => matches!(ord, Some(Less | Equal)),
        ">" => ord == Some(Greater),
        ">=" => matches!(ord, Some(Greater | Equal)),
        _ => false,
    }
}

/// Every node the path selects.
fn select(path: &Path, root: &Value) -> Vec<Value> {
    let mut cur = vec![root.clone()];
    for step in &path.steps {
        let mut next = Vec::new();
        for v in cur {
            match (step, &v) {
                (Step::Field(f), Value::Object(m)) => next.extend(m.get(f).cloned()),
                (Step::Index(i), Value::Array(a)) => {
                    next.extend(index(a.len(), *i).map(|i| a[i].clone()))
                }
                (Step::Wildcard, Value::Array(a)) => next.extend(a.iter().cloned()),
                (Step::Wildcard, Value::Object(m)) => next.extend(m.values().cloned()),
                (Step::Descend(n), _) => descend(&v, n, &mut next),
                (Step::Slice(s, e), Value::Array(a)) => {
                    let len = a.len() as i64;
                    let fix = |x: i64| if x < 0 { (len + x).max(0) } else { x.min(len) };
                    let s = fix(s.unwrap_or(0));
                    let e = fix(e.unwrap_or(len));
                    if s < e {
                        next.extend(a[s as usize..e as usize].iter().cloned());
                    }
                }
                (Step::Filter(field, op, val), Value::Array(a)) => next.extend(
                    a.iter()
                        .filter(|x| {
                            let got = field.split('.').try_fold(*x, |x, k| x.get(k));
                            got.is_some_and(|g| compare(g, op, val))
                        })
                        .cloned(),
                ),
                _ => {}
            }
        }
        cur = next;
    }
    cur
}

/// The value a path names in `root`: one node for a definite path (`None` when absent), an
/// array of the selected nodes otherwise.
pub fn get(text: &str, root: &Value) -> Result<Option<Value>, String> {
    let path = parse(text)?;
    let found = select(&path, root);
    if path.definite() {
        Ok(found.into_iter().next())
    } else {
        Ok(Some(Value::Array(found)))
    }
}

/// Writes `value` at a reference path in `root` (ResultPath), creating objects on the way.
pub fn set(text: &str, root: Value, value: Value) -> Result<Value, String> {
    let path = parse(text)?;
    if !path.definite() {
        return Err(format!(
            "Invalid path '{text}': a ResultPath must be a reference path"
        ));
    }
    if path.steps.is_empty() {
        return Ok(value);
    }
    let mut root = root;
    let mut cur = &mut root;
    let last = path.steps.len() - 1;
    for (k, step) in path.steps.iter().enumerate() {
        match step {
            Step::Field(f) => {
                if !cur.is_object() {
                    if k == 0 || cur.is_null() {
                        *cur = Value::Object(Map::new());
                    } else {
                        return Err(format!(
                            "Invalid path '{text}': cannot write into a non-object"
                        ));
                    }
                }
                let Value::Object(m) = cur else {
                    unreachable!("made an object above")
                };
                if k == last {
                    m.insert(f.clone(), value);
                    return Ok(root);
                }
                cur = m.entry(f.clone()).or_insert(Value::Null);
            }
            Step::Index(i) => {
                let Value::Array(a) = cur else {
                    return Err(format!("Invalid path '{text}': not an array"));
                };
                let Some(i) = index(a.len(), *i) else {
                    return Err(format!("Invalid path '{text}': index out of bounds"));
                };
                if k == last {
                    a[i] = value;
                    return Ok(root);
                }
                cur = &mut a[i];
            }
            _ => unreachable!("definite paths hold fields and indices"),
        }
    }
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_reference_and_query_paths() {
        let v = json!({"a": {"b": [1, 2, {"c": 3}]}, "k y": 5, "items": [{"p": 1}, {"p": 7}]});
        assert_eq!(get("$", &v).unwrap(), Some(v.clone()));
        assert_eq!(get("$.a.b[2].c", &v).unwrap(), Some(json!(3)));
        assert_eq!(get("$['k y']", &v).unwrap(), Some(json!(5)));
        assert_eq!(get("$.a.b[-1]", &v).unwrap(), Some(json!({"c": 3})));
        assert_eq!(get("$.missing", &v).unwrap(), None);
        assert_eq!(get("$.items[*].p", &v).unwrap(), Some(json!([1, 7])));
        assert_eq!(get("$..p", &v).unwrap(), Some(json!([1, 7])));
        assert_eq!(
            get("$.items[?(@.p > 3)]", &v).unwrap(),
            Some(json!([{"p": 7}]))
        );
        assert_eq!(get("$.a.b[0:2]", &v).unwrap(), Some(json!([1, 2])));
        assert!(get("a.b", &v).is_err());
    }

    #[test]
    fn writes_result_paths() {
        assert_eq!(set("$", json!({"x": 1}), json!(2)).unwrap(), json!(2));
        assert_eq!(
            set("$.r.s", json!({"x": 1}), json!(2)).unwrap(),
            json!({"x": 1, "r": {"s": 2}})
        );
        assert!(set("$.x.y", json!({"x": 1}), json!(2)).is_err());
    }
}
