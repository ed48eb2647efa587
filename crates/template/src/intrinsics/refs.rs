//! Ref, Fn::GetAtt, Fn::ImportValue and Fn::GetAZs: the functions whose values come from
//! parameters, pseudo parameters or the deployment (through the [`Resolver`](crate::Resolver)).

use super::{Evaluator, Mode};
use crate::Diagnostic;
use crate::errors::{self, Block};
use crate::value::Value;
use std::borrow::Cow;

impl Evaluator<'_> {
    /// The block named in dependency errors.
    fn block(&self) -> Block {
        match self.mode {
            Mode::Values(b) => b,
            Mode::Conditions => Block::Conditions,
        }
    }

    /// Checks that a resource may be referenced here; the error is AWS's for each case.
    fn check_resource(&self, id: &str) -> Result<(), Diagnostic> {
        match self.mode {
            Mode::Conditions => Err(errors::resources_in_conditions(&[id.to_string()])),
            Mode::Values(block) if !self.live.contains(id) => {
                Err(errors::unresolved_dependencies(&[id.to_string()], block))
            }
            Mode::Values(_) => Ok(()),
        }
    }

    pub(super) fn reference(&self, arg: &Value) -> Result<Option<Value>, Diagnostic> {
        match arg {
            Value::String(name) => self.ref_name(name),
            // The language extensions allow the name itself to be computed (`Ref: !Sub ...`).
            Value::Object(_) if self.lang_ext => {
                let name = self.eval_string(arg, "Ref")?;
                self.ref_name(&name)
            }
            _ => Err(errors::malformed("Ref")),
        }
    }

    /// `Ref` by name, shared with Fn::Sub's `${Name}`.
    pub(crate) fn ref_name(&self, name: &str) -> Result<Option<Value>, Diagnostic> {
        if name == "AWS::NoValue" {
            return Ok(None);
        }
        if let Some(v) = self.pseudo.get(name) {
            return Ok(Some(v));
        }
        if let Some(p) = self.parameters.get(name) {
            return Ok(Some(p.value.to_value()));
        }
        // A live resource is defined and may be referenced in Values mode: one lookup instead
        // of the two of the general case below.
        if matches!(self.mode, Mode::Values(_)) && self.live.contains(name) {
            return self.resolver.resource_ref(name).map(Some);
        }
        if self.defined.contains(name) {
            self.check_resource(name)?;
            return self.resolver.resource_ref(name).map(Some);
        }
        // CloudFormation reads `Ref: Resource.Attribute` as Fn::GetAtt (Copilot relies on it).
        if let Some((resource, attribute)) = name.split_once('.')
            && self.defined.contains(resource)
        {
            return self.get_att_of(resource, attribute).map(Some);
        }
        match self.block() {
            Block::Conditions => Err(errors::resources_in_conditions(&[name.to_string()])),
            block => Err(errors::unresolved_dependencies(&[name.to_string()], block)),
        }
    }

    pub(super) fn get_att(&self, arg: &Value) -> Result<Value, Diagnostic> {
        let (resource, attribute) = match arg {
            Value::String(s) => match s.split_once('.') {
                Some((r, a)) if !r.is_empty() && !a.is_empty() => {
                    (Cow::Borrowed(r), Cow::Borrowed(a))
                }
                _ => return Err(errors::malformed("Fn::GetAtt")),
            },
            Value::Array(items) => match items.as_slice() {
                [name, attr] => {
                    // The language extensions allow a computed resource name (`!Sub`).
                    let r = match name {
                        Value::String(r) => Cow::Borrowed(r.as_str()),
                        Value::Object(_) if self.lang_ext => {
                            Cow::Owned(self.eval_string(name, "Fn::GetAtt")?)
                        }
                        _ => return Err(errors::malformed("Fn::GetAtt")),
                    };
                    let a = self.eval_str(attr, "Fn::GetAtt")?;
                    if r.is_empty() || a.is_empty() {
                        return Err(errors::malformed("Fn::GetAtt"));
                    }
                    (r, a)
                }
                _ => return Err(errors::malformed("Fn::GetAtt")),
            },
            _ => return Err(errors::malformed("Fn::GetAtt")),
        };
        self.get_att_of(&resource, &attribute)
    }

    /// `Fn::GetAtt` by name, shared with Fn::Sub's `${Resource.Attribute}`.
    pub(crate) fn get_att_of(&self, resource: &str, attribute: &str) -> Result<Value, Diagnostic> {
        if matches!(self.mode, Mode::Values(_)) && self.live.contains(resource) {
            return self.resolver.get_att(resource, attribute);
        }
        if !self.defined.contains(resource) {
            return Err(match self.mode {
                Mode::Conditions => errors::resources_in_conditions(&[resource.to_string()]),
                Mode::Values(_) => errors::getatt_undefined(resource),
            });
        }
        self.check_resource(resource)?;
        self.resolver.get_att(resource, attribute)
    }

    pub(super) fn import_value(&self, arg: &Value) -> Result<Value, Diagnostic> {
        let name = self.eval_string(arg, "Fn::ImportValue")?;
        if name.is_empty() {
            return Err(errors::malformed("Fn::ImportValue"));
        }
        self.resolver.import_value(&name)
    }

    pub(super) fn get_azs(&self, arg: &Value) -> Result<Value, Diagnostic> {
        // `!GetAZs` with no argument parses as null: the stack's region, like "".
        let region = match arg {
            Value::Null => String::new(),
            other => self.eval_string(other, "Fn::GetAZs")?,
        };
        let region = if region.is_empty() {
            self.pseudo.region.clone()
        } else {
            region
        };
        Ok(Value::Array(
            self.resolver
                .availability_zones(&region)
                .into_iter()
                .map(Value::from)
                .collect(),
        ))
    }
}
