//! Fn::Join, Fn::Select, Fn::Split, Fn::Base64, and the language-extension Fn::Length and
//! Fn::ToJsonString.
//!
//! A placeholder string (a value only a deployment knows, see
//! [`PlaceholderResolver`](crate::PlaceholderResolver)) may stand for a list; list functions
//! applied to one give a placeholder naming the operation, so rendering never fails on them.

use super::{Evaluator, push_scalar};
use crate::Diagnostic;
use crate::context::{PLACEHOLDER_PREFIX, is_placeholder};
use crate::errors;
use crate::value::Value;
use base64::Engine;

/// A list argument: real items, or a placeholder standing for an unknown list.
enum ListArg {
    Items(Vec<Value>),
    Unknown(String),
}

impl Evaluator<'_> {
    fn list_arg(&self, v: &Value, function: &str) -> Result<ListArg, Diagnostic> {
        match self.eval_arg(v, function)? {
            Value::Array(items) => Ok(ListArg::Items(items)),
            Value::String(s) if is_placeholder(&s) => Ok(ListArg::Unknown(s.to_string())),
            _ => Err(errors::malformed(function)),
        }
    }

    pub(super) fn join(&self, arg: &Value) -> Result<Value, Diagnostic> {
        let Some([delim, list]) = arg.as_array().map(Vec::as_slice) else {
            return Err(errors::malformed("Fn::Join"));
        };
        let Value::String(delim) = delim else {
            return Err(errors::malformed("Fn::Join"));
        };
        match self.list_arg(list, "Fn::Join")? {
            ListArg::Unknown(p) => Ok(Value::from(format!(
                "{PLACEHOLDER_PREFIX}Join:{delim}:{p}}}}}"
            ))),
            ListArg::Items(items) => {
                let mut joined = String::new();
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        joined.push_str(delim);
                    }
                    if !push_scalar(item, &mut joined) {
                        return Err(errors::malformed("Fn::Join"));
                    }
                }
                Ok(Value::String(joined.into()))
            }
        }
    }

    pub(super) fn select(&self, arg: &Value) -> Result<Option<Value>, Diagnostic> {
        let Some([index, list]) = arg.as_array().map(Vec::as_slice) else {
            return Err(errors::malformed("Fn::Select"));
        };
        // A literal index (the usual case) is read as is, not written out and parsed back.
        let i: usize = match index.as_u64().and_then(|i| usize::try_from(i).ok()) {
            Some(i) => i,
            None => self
                .eval_str(index, "Fn::Select")?
                .trim()
                .parse()
                .map_err(|_| errors::malformed("Fn::Select"))?,
        };
        match self.list_arg(list, "Fn::Select")? {
            ListArg::Unknown(p) => Ok(Some(Value::from(format!(
                "{PLACEHOLDER_PREFIX}Select:{i}:{p}}}}}"
            )))),
            ListArg::Items(items) => match items.into_iter().nth(i) {
                Some(v) => Ok(Some(v)),
                None => Err(errors::template_error(format!(
                    "Fn::Select cannot select nonexistent value at index {i}"
                ))),
            },
        }
    }

    pub(super) fn split(&self, arg: &Value) -> Result<Value, Diagnostic> {
        let Some([delim, source]) = arg.as_array().map(Vec::as_slice) else {
            return Err(errors::malformed("Fn::Split"));
        };
        let Value::String(delim) = delim else {
            return Err(errors::malformed("Fn::Split"));
        };
        if delim.is_empty() {
            return Err(errors::malformed("Fn::Split"));
        }
        let source = self.eval_string(source, "Fn::Split")?;
        if is_placeholder(&source) {
            return Ok(Value::from(format!(
                "{PLACEHOLDER_PREFIX}Split:{delim}:{source}}}}}"
            )));
        }
        Ok(Value::Array(
            source.split(delim.as_str()).map(Value::from).collect(),
        ))
    }

    pub(super) fn base64(&self, arg: &Value) -> Result<Value, Diagnostic> {
        let text = self.eval_string(arg, "Fn::Base64")?;
        if text.contains(PLACEHOLDER_PREFIX) {
            return Ok(Value::from(format!(
                "{PLACEHOLDER_PREFIX}Base64:{text}}}}}"
            )));
        }
        Ok(Value::String(
            base64::engine::general_purpose::STANDARD
                .encode(text.as_bytes())
                .into(),
        ))
    }

    pub(super) fn length(&self, arg: &Value) -> Result<Value, Diagnostic> {
        match self.list_arg(arg, "Fn::Length")? {
            ListArg::Items(items) => Ok(Value::from(items.len())),
            ListArg::Unknown(p) => Ok(Value::from(format!("{PLACEHOLDER_PREFIX}Length:{p}}}}}"))),
        }
    }

    pub(super) fn to_json_string(&self, arg: &Value) -> Result<Value, Diagnostic> {
        match self.eval_arg(arg, "Fn::ToJsonString")? {
            v @ (Value::Object(_) | Value::Array(_)) => Ok(Value::String(v.to_string().into())),
            _ => Err(errors::malformed("Fn::ToJsonString")),
        }
    }
}
