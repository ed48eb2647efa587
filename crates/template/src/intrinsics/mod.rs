//! Intrinsic function evaluation. One [`Evaluator`] walks a JSON value and replaces every
//! intrinsic with its result; each family of functions lives in its own file.
//!
//! `eval` returns `Ok(None)` for `AWS::NoValue`: the caller drops the key or list element.

mod cidr;
mod lists;
mod mapping;
mod refs;
mod sub;

pub use cidr::cidr;
pub(crate) use sub::sub_parts;
pub use sub::{SubPart, parse_sub};

use crate::Diagnostic;
use crate::conditions;
use crate::context::{Pseudo, Resolver};
use crate::errors::{self, Block};
use crate::params::ResolvedParameter;
use crate::value::{Map, Value};
use crate::{NameMap, NameSet};
use std::borrow::Cow;

/// What a `Ref`/`Fn::GetAtt` target may be at this point of evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Evaluating resources or outputs: resources may be referenced if live.
    Values(Block),
    /// Evaluating the Conditions block: resources may not be referenced at all.
    Conditions,
}

/// Everything an evaluation reads. Cheap to build: it only borrows.
pub struct Evaluator<'a> {
    pub parameters: &'a NameMap<String, ResolvedParameter>,
    pub mappings: &'a Map,
    pub pseudo: &'a Pseudo,
    /// Evaluated conditions, for `Fn::If`.
    pub conditions: &'a NameMap<String, bool>,
    /// Every resource the template defines (after Fn::ForEach expansion).
    pub defined: &'a NameSet<String>,
    /// The defined resources whose condition holds.
    pub live: &'a NameSet<String>,
    pub resolver: &'a dyn Resolver,
    /// `AWS::LanguageExtensions` is declared.
    pub lang_ext: bool,
    pub mode: Mode,
    /// Checking the template as ValidateTemplate does, not deploying it: a Fn::FindInMap whose
    /// keys come from parameters is left unevaluated (a placeholder), since AWS does not look it
    /// up with the parameters' defaults and accepts the template.
    pub validating: bool,
}

impl Evaluator<'_> {
    /// Evaluates a value; `None` means `AWS::NoValue` (remove it).
    pub fn eval(&self, v: &Value) -> Result<Option<Value>, Diagnostic> {
        match v {
            Value::Object(obj) => {
                if obj.len() == 1
                    && let Some((key, arg)) = obj.iter().next()
                    && is_function_key(key)
                {
                    return self.call(key, arg);
                }
                let mut out = Map::with_capacity(obj.len());
                for (k, item) in obj {
                    if let Some(value) = self.eval(item)? {
                        out.insert(k.clone(), value);
                    }
                }
                Ok(Some(Value::Object(out)))
            }
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    if let Some(value) = self.eval(item)? {
                        out.push(value);
                    }
                }
                Ok(Some(Value::Array(out)))
            }
            other => Ok(Some(other.clone())),
        }
    }

    /// Evaluates a function argument that must produce a value (NoValue is malformed there).
    pub(crate) fn eval_arg(&self, v: &Value, function: &str) -> Result<Value, Diagnostic> {
        self.eval(v)?.ok_or_else(|| errors::malformed(function))
    }

    /// Evaluates an argument that must be a string (numbers are accepted as their text, as
    /// YAML templates often write them unquoted).
    pub(crate) fn eval_string(&self, v: &Value, function: &str) -> Result<String, Diagnostic> {
        match self.eval_arg(v, function)? {
            Value::String(s) => Ok(s.to_string()),
            Value::Number(n) => Ok(n.to_string()),
            Value::Bool(b) => Ok(b.to_string()),
            _ => Err(errors::malformed(function)),
        }
    }

    /// [`eval_string`](Self::eval_string) that borrows a literal string instead of copying it.
    pub(crate) fn eval_str<'v>(
        &self,
        v: &'v Value,
        function: &str,
    ) -> Result<Cow<'v, str>, Diagnostic> {
        match v {
            Value::String(s) => Ok(Cow::Borrowed(s)),
            other => self.eval_string(other, function).map(Cow::Owned),
        }
    }

    fn call(&self, key: &str, arg: &Value) -> Result<Option<Value>, Diagnostic> {
        let some = |v: Value| Ok(Some(v));
        match key {
            "Ref" => self.reference(arg),
            "Fn::GetAtt" => self.get_att(arg).map(Some),
            "Fn::Sub" => self.sub(arg).map(Some),
            "Fn::Join" => self.join(arg).map(Some),
            "Fn::Select" => self.select(arg),
            "Fn::Split" => self.split(arg).map(Some),
            "Fn::Base64" => self.base64(arg).map(Some),
            "Fn::GetAZs" => self.get_azs(arg).map(Some),
            "Fn::ImportValue" => self.import_value(arg).map(Some),
            "Fn::FindInMap" => self.find_in_map(arg).map(Some),
            "Fn::Cidr" => self.cidr(arg).map(Some),
            "Fn::If" => self.fn_if(arg),
            "Fn::Equals" | "Fn::And" | "Fn::Or" | "Fn::Not" => {
                let mut lookup = |name: &str| {
                    self.conditions
                        .get(name)
                        .copied()
                        .ok_or_else(|| errors::unresolved_condition_in_fn_if(name))
                };
                some(Value::Bool(conditions::eval_bool(
                    self,
                    &Value::Object(Map::from_iter([(key.to_string(), arg.clone())])),
                    &mut lookup,
                )?))
            }
            "Fn::Length" if self.lang_ext => self.length(arg).map(Some),
            "Fn::ToJsonString" if self.lang_ext => self.to_json_string(arg).map(Some),
            "Fn::Transform" => Err(errors::format_error(
                "Fn::Transform runs when a stack operation or change set starts; it is not run here",
            )),
            k if k.starts_with("Rain::") => Err(errors::format_error(format!(
                "{k} is a Rain directive: package the template with `rain pkg` first"
            ))),
            other => Err(errors::unsupported_function(other)),
        }
    }

    fn fn_if(&self, arg: &Value) -> Result<Option<Value>, Diagnostic> {
        let Some([cond, when_true, when_false]) = arg.as_array().map(Vec::as_slice) else {
            return Err(errors::malformed("Fn::If"));
        };
        let Some(name) = cond.as_str() else {
            return Err(errors::malformed("Fn::If"));
        };
        let holds = *self
            .conditions
            .get(name)
            .ok_or_else(|| errors::unresolved_condition_in_fn_if(name))?;
        self.eval(if holds { when_true } else { when_false })
    }
}

/// Keys that make a one-key object a function call rather than data.
fn is_function_key(key: &str) -> bool {
    key == "Ref" || key.starts_with("Fn::") || key.starts_with("Rain::")
}

/// A JSON scalar as the string CloudFormation would use (numbers and booleans as written).
pub(crate) fn scalar_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Appends [`scalar_string`] of `v` to `out` without a string of its own; false (and nothing
/// appended) when `v` is not a scalar.
pub(crate) fn push_scalar(v: &Value, out: &mut String) -> bool {
    use std::fmt::Write;
    match v {
        Value::String(s) => out.push_str(s),
        // Writing to a String cannot fail.
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        _ => return false,
    }
    true
}
