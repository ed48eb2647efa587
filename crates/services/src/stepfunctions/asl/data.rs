//! Payload templates (Parameters, ResultSelector, ItemSelector): a `"key.$"` field takes the
//! value of a path into the input (`$.x`), the context object (`$$.x`) or an intrinsic call.

use super::{Failure, intrinsic, path};
use serde_json::{Map, Value};

/// Reads a path (`$...` into `input`, `$$...` into `ctx`); absent is States.Runtime.
pub fn read(text: &str, input: &Value, ctx: &Value) -> Result<Value, Failure> {
    let got = match text.strip_prefix("$$") {
        Some(rest) => path::get(&format!("${rest}"), ctx),
        None => path::get(text, input),
    }
    .map_err(Failure::runtime)?;
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
