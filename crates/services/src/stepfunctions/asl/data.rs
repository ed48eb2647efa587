//! Payload templates (Parameters, ResultSelector, ItemSelector): a `"key.$"` field takes the
//! value of a path into the input (`$.x`), the context object (`$$.x`) or an intrinsic call.

use super::{Failure, intrinsic, path};
use serde_json::{Map, Value};

/// The key under which a state's context object carries the variables in scope (`$name`
/// paths read them); never shown as part of `$$`.
pub const VARS: &str = "cumulo:variables";

/// Resolves a path: `$...` into `input`, `$$...` into `ctx`, `$name...` into the variable.
pub fn lookup(text: &str, input: &Value, ctx: &Value) -> Result<Option<Value>, String> {
    if let Some(rest) = text.strip_prefix("$$") {
        let mut got = path::get(&format!("${rest}"), ctx)?;
        if let Some(Value::Object(m)) = &mut got {
            m.remove(VARS);
        }
        return Ok(got);
    }
    let name_len = text
        .get(1..)
        .unwrap_or("")
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(text.len().saturating_sub(1));
    if text.starts_with('$') && name_len > 0 {
        let name = &text[1..1 + name_len];
        let Some(v) = ctx.get(VARS).and_then(|vars| vars.get(name)) else {
            return Err(format!(
                "Invalid path '{text}': The variable '{name}' is not defined"
            ));
        };
        return path::get(&format!("${}", &text[1 + name_len..]), v);
    }
    path::get(text, input)
}

/// Reads a path (see [`lookup`]); absent is States.Runtime.
pub fn read(text: &str, input: &Value, ctx: &Value) -> Result<Value, Failure> {
    let got = lookup(text, input, ctx).map_err(Failure::runtime)?;
    got.ok_or_else(|| {
        Failure::runtime(format!(
            "An error occurred while executing the state. Invalid path '{text}' : No results for path: $['{}']",
            text.trim_start_matches('$').trim_start_matches('.')
        ))
    })
}

/// Applies a payload template.
pub fn template(t: &Value, input: &Value, ctx: &Value) -> Result<Value, Failure> {
    match t {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                if let Some(key) = k.strip_suffix(".$") {
                    let Some(text) = v.as_str() else {
                        return Err(Failure::runtime(format!(
                            "The value of {k} must be a string"
                        )));
                    };
                    let value = if intrinsic::is_call(text) {
                        intrinsic::eval(text, input, ctx).map_err(|e| Failure {
                            error: "States.IntrinsicFailure".into(),
                            cause: e,
                        })?
                    } else {
                        read(text, input, ctx).map_err(|f| Failure {
                            cause: format!(
                                "The JSONPath '{text}' specified for the field '{k}' could not be found in the input '{input}'"
                            ),
                            ..f
                        })?
                    };
                    out.insert(key.to_string(), value);
                } else {
                    out.insert(k.clone(), template(v, input, ctx)?);
                }
            }
            Ok(Value::Object(out))
        }
        Value::Array(a) => Ok(Value::Array(
            a.iter()
                .map(|v| template(v, input, ctx))
                .collect::<Result<_, _>>()?,
        )),
        v => Ok(v.clone()),
    }
}
