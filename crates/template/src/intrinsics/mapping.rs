//! Fn::FindInMap, with the language-extension `DefaultValue` fourth argument.

use super::Evaluator;
use crate::Diagnostic;
use crate::context::PLACEHOLDER_PREFIX;
use crate::errors;
use crate::value::Value;

impl Evaluator<'_> {
    pub(super) fn find_in_map(&self, arg: &Value) -> Result<Value, Diagnostic> {
        let items = arg
            .as_array()
            .ok_or_else(|| errors::malformed("Fn::FindInMap"))?;
        let (keys, default) = match items.as_slice() {
            [a, b, c] => ([a, b, c], None),
            [a, b, c, Value::Object(opts)] if self.lang_ext && opts.len() == 1 => {
                match opts.get("DefaultValue") {
                    Some(d) => ([a, b, c], Some(d)),
                    None => return Err(errors::malformed("Fn::FindInMap")),
                }
            }
            _ => return Err(errors::malformed("Fn::FindInMap")),
        };
        if self.validating && keys.iter().any(|k| self.mentions_parameter(k)) {
            return Ok(Value::String(
                format!("{PLACEHOLDER_PREFIX}FindInMap:parameter-keyed}}}}").into(),
            ));
        }
        let map_name = self.eval_str(keys[0], "Fn::FindInMap")?;
        let top = self.eval_str(keys[1], "Fn::FindInMap")?;
        let second = self.eval_str(keys[2], "Fn::FindInMap")?;
        let found = self
            .mappings
            .get(map_name.as_ref())
            .map(|m| m.get(top.as_ref()).and_then(|t| t.get(second.as_ref())));
        match (found, default) {
            (Some(Some(v)), _) => Ok(v.clone()),
            (_, Some(d)) => self.eval_arg(d, "Fn::FindInMap"),
            (None, None) => Err(errors::template_error(format!(
                "Mapping named '{map_name}' is not present in the 'Mappings' section of template."
            ))),
            (Some(None), None) => Err(errors::template_error(format!(
                "Unable to get mapping for {map_name}::{top}::{second}"
            ))),
        }
    }
}

impl Evaluator<'_> {
    /// Whether `v` refers to a template parameter anywhere (`Ref` or `Fn::Sub`'s `${Name}`).
    fn mentions_parameter(&self, v: &Value) -> bool {
        match v {
            Value::Object(obj) => obj.iter().any(|(k, arg)| match (k.as_str(), arg) {
                ("Ref", Value::String(name)) => self.parameters.contains_key(name.as_str()),
                ("Fn::Sub", Value::String(text)) => self
                    .parameters
                    .keys()
                    .any(|p| text.contains(&format!("${{{p}}}"))),
                _ => self.mentions_parameter(arg),
            }),
            Value::Array(items) => items.iter().any(|i| self.mentions_parameter(i)),
            _ => false,
        }
    }
}
