//! Fn::Sub: `${Name}` (parameter, pseudo parameter, resource Ref or local variable),
//! `${Resource.Attribute}` (GetAtt) and `${!Literal}` (the text `${Literal}`).

use super::{Evaluator, scalar_string};
use crate::Diagnostic;
use crate::context::is_placeholder;
use crate::errors;
use serde_json::{Map, Value};

/// A piece of an Fn::Sub string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubPart<'s> {
    Literal(&'s str),
    /// `${!X}`: emitted as `${X}`.
    Escaped(&'s str),
    /// `${X}`, name trimmed.
    Var(&'s str),
}

/// Splits an Fn::Sub string into literals and variables. An unclosed `${` is literal text.
pub fn parse_sub(s: &str) -> Vec<SubPart<'_>> {
    let mut parts = Vec::new();
    let mut rest = s;
    while let Some(start) = rest.find("${") {
        let Some(len) = rest[start + 2..].find('}') else {
            break;
        };
        if start > 0 {
            parts.push(SubPart::Literal(&rest[..start]));
        }
        let inner = &rest[start + 2..start + 2 + len];
        parts.push(match inner.strip_prefix('!') {
            Some(lit) => SubPart::Escaped(lit),
            None => SubPart::Var(inner.trim()),
        });
        rest = &rest[start + 3 + len..];
    }
    if !rest.is_empty() {
        parts.push(SubPart::Literal(rest));
    }
    parts
}

impl Evaluator<'_> {
    pub(super) fn sub(&self, arg: &Value) -> Result<Value, Diagnostic> {
        let (text, locals) = match arg {
            Value::String(s) => (s.as_str(), None),
            Value::Array(items) => match items.as_slice() {
                [Value::String(s)] => (s.as_str(), None),
                [Value::String(s), Value::Object(vars)] => (s.as_str(), Some(vars)),
                _ => return Err(errors::malformed("Fn::Sub")),
            },
            _ => return Err(errors::malformed("Fn::Sub")),
        };
        let locals = match locals {
            Some(vars) => self.eval_locals(vars)?,
            None => Map::new(),
        };
        let mut out = String::with_capacity(text.len());
        for part in parse_sub(text) {
            match part {
                SubPart::Literal(l) => out.push_str(l),
                SubPart::Escaped(l) => {
                    out.push_str("${");
                    out.push_str(l);
                    out.push('}');
                }
                SubPart::Var(name) => out.push_str(&self.sub_var(name, &locals)?),
            }
        }
        Ok(Value::String(out))
    }

    fn eval_locals(&self, vars: &Map<String, Value>) -> Result<Map<String, Value>, Diagnostic> {
        let mut out = Map::with_capacity(vars.len());
        for (k, v) in vars {
            let value = self.eval_arg(v, "Fn::Sub")?;
            out.insert(k.clone(), value);
        }
        Ok(out)
    }

    fn sub_var(&self, name: &str, locals: &Map<String, Value>) -> Result<String, Diagnostic> {
        let value = if let Some(v) = locals.get(name) {
            v.clone()
        } else if let Some(v) = self.sub_ref(name)? {
            v
        } else {
            return Err(errors::template_error(format!(
                "variable {name} in Fn::Sub expression resolves to AWS::NoValue"
            )));
        };
        match scalar_string(&value) {
            Some(s) => Ok(s),
            None => Err(errors::template_error(format!(
                "variable {name} in Fn::Sub expression does not resolve to a string"
            ))),
        }
    }

    /// `${Name}` outside the local map: a Ref, or a GetAtt when the name has a dot (pseudo
    /// parameters and parameters never do).
    fn sub_ref(&self, name: &str) -> Result<Option<Value>, Diagnostic> {
        if name.is_empty() {
            return Err(errors::template_error(
                "Fn::Sub expression contains an empty variable name ${}",
            ));
        }
        if !self.parameters.contains_key(name)
            && let Some((resource, attribute)) = name.split_once('.')
        {
            let v = self.get_att_of(resource, attribute)?;
            // A list-valued attribute placeholder is still a single placeholder string.
            return Ok(Some(match v {
                Value::String(s) if is_placeholder(&s) => Value::String(s),
                other => other,
            }));
        }
        self.ref_name(name)
    }
}
