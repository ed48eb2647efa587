//! Python's `json.dumps(data, separators=(",", ":"), sort_keys=True)` (ASCII-escaped), which the
//! translator hashes for its logical-id suffixes; the bytes must match for the ids to.

use serde_json::Value;
use sha1::{Digest, Sha1};

pub fn dumps(v: &Value) -> String {
    let mut out = String::new();
    write(v, &mut out);
    out
}

/// The translator's `LogicalIdGenerator.get_hash`: SHA-1 of the dump (a string as itself),
/// hex, first 10 characters; empty for no (or empty) data.
pub fn hash(data: &Value) -> String {
    let text = match data {
        Value::String(s) => s.clone(),
        v if !crate::resource::truthy(Some(v)) => return String::new(),
        v => dumps(v),
    };
    let digest = Sha1::digest(text.as_bytes());
    hex::encode(digest)[..10].to_string()
}

fn write(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&number(n)),
        Value::String(s) => string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        Value::Object(obj) => {
            let mut keys: Vec<&String> = obj.keys().collect();
            // Python sorts str keys by code point; Rust's str order is the same on UTF-8.
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                string(k, out);
                out.push(':');
                write(&obj[k.as_str()], out);
            }
            out.push('}');
        }
    }
}

/// `json.dumps(data, sort_keys=True, indent=4, separators=(",", ": "))`: a state machine's
/// DefinitionString lines.
pub fn dumps_indented(v: &Value) -> String {
    let mut out = String::new();
    indented(v, 0, &mut out);
    out
}

fn indented(v: &Value, level: usize, out: &mut String) {
    let pad = |n: usize| " ".repeat(4 * n);
    match v {
        Value::Array(items) if !items.is_empty() => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                out.push_str(if i > 0 { ",\n" } else { "\n" });
                out.push_str(&pad(level + 1));
                indented(item, level + 1, out);
            }
            out.push('\n');
            out.push_str(&pad(level));
            out.push(']');
        }
        Value::Object(obj) if !obj.is_empty() => {
            let mut keys: Vec<&String> = obj.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                out.push_str(if i > 0 { ",\n" } else { "\n" });
                out.push_str(&pad(level + 1));
                string(k, out);
                out.push_str(": ");
                indented(&obj[k.as_str()], level + 1, out);
            }
            out.push('\n');
            out.push_str(&pad(level));
            out.push('}');
        }
        other => write(other, out),
    }
}

fn number(n: &serde_json::Number) -> String {
    if n.is_i64() || n.is_u64() {
        return n.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    // Python's float repr: shortest round-trip, with ".0" for integral values.
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e16 {
        return format!("{f:.1}");
    }
    let s = format!("{f}");
    s
}

fn string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dumps_as_python_does() {
        let v = json!({"b": [1, 2.5, 3.0, true, null], "a": "é\n\"x\u{1F600}"});
        assert_eq!(
            dumps(&v),
            r#"{"a":"\u00e9\n\"x\ud83d\ude00","b":[1,2.5,3.0,true,null]}"#
        );
        // python3 -c 'import hashlib;print(hashlib.sha1(b"{\"S3Bucket\":\"b\",\"S3Key\":\"k\"}").hexdigest()[:10])'
        assert_eq!(hash(&json!({"S3Bucket": "b", "S3Key": "k"})), "03ba323aca");
    }
}
