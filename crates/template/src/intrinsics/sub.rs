//! Fn::Sub: `${Name}` (parameter, pseudo parameter, resource Ref or local variable),
//! `${Resource.Attribute}` (GetAtt) and `${!Literal}` (the text `${Literal}`).

use super::{Evaluator, push_scalar};
use crate::Diagnostic;
use crate::context::is_placeholder;
use crate::errors;
use crate::params::ParamValue;
use crate::value::{Map, Value};

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
    sub_parts(s).collect()
}

/// [`parse_sub`] without collecting: the evaluator and the dependency walk visit every Fn::Sub
/// of a template, and a vector per string was a measurable part of both.
pub(crate) fn sub_parts(s: &str) -> SubParts<'_> {
    SubParts {
        rest: s,
        pending: None,
    }
}

/// The iterator behind [`sub_parts`].
pub(crate) struct SubParts<'s> {
    rest: &'s str,
    /// The variable that follows a literal just returned.
    pending: Option<SubPart<'s>>,
}

impl<'s> Iterator for SubParts<'s> {
    type Item = SubPart<'s>;

    fn next(&mut self) -> Option<SubPart<'s>> {
        if let Some(part) = self.pending.take() {
            return Some(part);
        }
        let rest = self.rest;
        if rest.is_empty() {
            return None;
        }
        let var = find_open(rest).and_then(|start| {
            let len = rest[start + 2..].find('}')?;
            Some((start, len))
        });
        let Some((start, len)) = var else {
            self.rest = "";
            return Some(SubPart::Literal(rest));
        };
        let inner = &rest[start + 2..start + 2 + len];
        let part = match inner.strip_prefix('!') {
            Some(lit) => SubPart::Escaped(lit),
            None => SubPart::Var(inner.trim()),
        };
        self.rest = &rest[start + 3 + len..];
        if start > 0 {
            self.pending = Some(part);
            Some(SubPart::Literal(&rest[..start]))
        } else {
            Some(part)
        }
    }
}

/// Where the first `${` is. A byte scan for `$`: `str::find("${")` builds a substring searcher
/// on every call, which cost more than the rest of splitting a short Fn::Sub string.
fn find_open(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(i) = bytes.get(from..)?.iter().position(|&b| b == b'$') {
        let at = from + i;
        if bytes.get(at + 1) == Some(&b'{') {
            return Some(at);
        }
        from = at + 1;
    }
    None
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
        for part in sub_parts(text) {
            match part {
                SubPart::Literal(l) => out.push_str(l),
                SubPart::Escaped(l) => {
                    out.push_str("${");
                    out.push_str(l);
                    out.push('}');
                }
                SubPart::Var(name) => self.sub_var(name, &locals, &mut out)?,
            }
        }
        Ok(Value::String(out.into()))
    }

    fn eval_locals(&self, vars: &Map) -> Result<Map, Diagnostic> {
        let mut out = Map::with_capacity(vars.len());
        for (k, v) in vars {
            let value = self.eval_arg(v, "Fn::Sub")?;
            out.insert(k.clone(), value);
        }
        Ok(out)
    }

    /// Appends the value of `${name}` to `out`.
    fn sub_var(&self, name: &str, locals: &Map, out: &mut String) -> Result<(), Diagnostic> {
        let resolved;
        let value = if let Some(v) = locals.get(name) {
            v
        } else if let Some(text) = self.borrowed_ref(name) {
            out.push_str(text);
            return Ok(());
        } else if let Some(v) = self.sub_ref(name)? {
            resolved = v;
            &resolved
        } else {
            return Err(errors::template_error(format!(
                "variable {name} in Fn::Sub expression resolves to AWS::NoValue"
            )));
        };
        if push_scalar(value, out) {
            Ok(())
        } else {
            Err(errors::template_error(format!(
                "variable {name} in Fn::Sub expression does not resolve to a string"
            )))
        }
    }

    /// `${Name}` for a string-valued pseudo parameter or parameter, borrowed: the general path
    /// ([`sub_ref`](Self::sub_ref)) makes a value for it only to copy it into the result.
    fn borrowed_ref(&self, name: &str) -> Option<&str> {
        if let Some(text) = self.pseudo.get_str(name) {
            return Some(text);
        }
        match &self.parameters.get(name)?.value {
            ParamValue::Str(text) => Some(text),
            ParamValue::List(_) => None,
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
        if let Some((resource, attribute)) = name.split_once('.')
            && !self.parameters.contains_key(name)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dollars_that_open_nothing_are_literal() {
        assert_eq!(
            parse_sub("a$b$${X}c$"),
            vec![
                SubPart::Literal("a$b$"),
                SubPart::Var("X"),
                SubPart::Literal("c$")
            ]
        );
        assert_eq!(parse_sub("$"), vec![SubPart::Literal("$")]);
        assert_eq!(parse_sub("${!Y}"), vec![SubPart::Escaped("Y")]);
    }
}
