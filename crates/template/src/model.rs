//! The template model: the sections of a CloudFormation template as typed Rust, built from the
//! parser's JSON value, with AWS's format errors for malformed sections.

use crate::Diagnostic;
use crate::NameMap;
use crate::errors::format_error;
use crate::params::ParameterDecl;
use crate::value::{Map, SmolStr, Value};

/// The transform whose functions cumulo evaluates itself.
pub const LANGUAGE_EXTENSIONS: &str = "AWS::LanguageExtensions";

const TOP_LEVEL_KEYS: &[&str] = &[
    "AWSTemplateFormatVersion",
    "Description",
    "Metadata",
    "Parameters",
    "Rules",
    "Mappings",
    "Conditions",
    "Transform",
    "Resources",
    "Outputs",
    "Hooks",
];

const RESOURCE_KEYS: &[&str] = &[
    "Type",
    "Properties",
    "DependsOn",
    "Condition",
    "DeletionPolicy",
    "UpdateReplacePolicy",
    "Metadata",
    "CreationPolicy",
    "UpdatePolicy",
    "Version",
];

/// A whole template.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    pub format_version: Option<String>,
    pub description: Option<String>,
    pub metadata: Option<Value>,
    pub transforms: Vec<String>,
    pub parameters: NameMap<String, ParameterDecl>,
    /// Map name → top-level key → second-level key → value, kept as JSON.
    pub mappings: Map,
    /// Condition name → unevaluated condition function.
    pub conditions: NameMap<String, Value>,
    pub resources: NameMap<String, Resource>,
    pub outputs: NameMap<String, Output>,
    pub rules: Option<Value>,
}

/// One `Resources` entry. Unevaluated: intrinsics are still in the values.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    pub logical_id: String,
    pub resource_type: String,
    /// An object; `{}` when the template has none.
    pub properties: Value,
    pub depends_on: Vec<String>,
    pub condition: Option<String>,
    pub deletion_policy: Option<Value>,
    pub update_replace_policy: Option<Value>,
    pub metadata: Option<Value>,
    pub creation_policy: Option<Value>,
    pub update_policy: Option<Value>,
}

/// One `Outputs` entry. Unevaluated.
#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub name: String,
    pub value: Value,
    pub description: Option<Value>,
    pub condition: Option<String>,
    pub export_name: Option<Value>,
}

/// The `Transform` section as a list of names (it may be written as a string or a list).
/// Non-string entries (`AWS::Include` with parameters) are reported by their `Name`.
pub fn transforms_of(root: &Value) -> Vec<String> {
    let name = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.to_string()),
            Value::Object(o) => o.get("Name").and_then(Value::as_str).map(str::to_string),
            _ => None,
        }
    };
    match root.get("Transform") {
        Some(Value::Array(items)) => items.iter().filter_map(name).collect(),
        Some(v) => name(v).into_iter().collect(),
        None => Vec::new(),
    }
}

/// The `Parameters` section, needed before anything else is evaluated (Fn::ForEach collections
/// and conditions read parameters).
pub fn parameters_of(root: &Value) -> Result<NameMap<String, ParameterDecl>, Vec<Diagnostic>> {
    let mut out = NameMap::default();
    let mut errors = Vec::new();
    match root.get("Parameters") {
        None | Some(Value::Null) => {}
        Some(Value::Object(params)) => {
            for (name, v) in params {
                match ParameterDecl::from_value(name, v) {
                    Ok(d) => {
                        out.insert(name.to_string(), d);
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
        Some(_) => errors
            .push(format_error("Parameters section must be an object").with_path("Parameters")),
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// A string member of `{section}/{name}` (the path is written only for an error).
fn string_attr(
    obj: &Map,
    key: &str,
    section: &str,
    name: &str,
) -> Result<Option<String>, Diagnostic> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.to_string())),
        Some(_) => Err(
            format_error(format!("[/{section}/{name}/{key}] {key} must be a string"))
                .with_path(format!("{section}/{name}/{key}")),
        ),
    }
}

impl Template {
    /// Builds the model, collecting every format error rather than stopping at the first.
    /// Expects language-extension constructs (Fn::ForEach keys) to be expanded already.
    /// Takes the value by ownership: resource bodies move into the model uncopied (a large
    /// template is mostly resource properties).
    pub fn from_value(root: Value) -> Result<Template, Vec<Diagnostic>> {
        let mut errors = Vec::new();
        let transforms = transforms_of(&root);
        let parameters = parameters_of(&root).unwrap_or_else(|e| {
            errors.extend(e);
            NameMap::default()
        });
        let Value::Object(mut top) = root else {
            return Err(vec![format_error("Template must be a JSON or YAML object")]);
        };
        let invalid: Vec<&str> = top
            .keys()
            .map(SmolStr::as_str)
            .filter(|k| !TOP_LEVEL_KEYS.contains(k))
            .collect();
        if !invalid.is_empty() {
            errors.push(format_error(format!(
                "Invalid template property or properties [{}]",
                invalid.join(", ")
            )));
        }
        let format_version = match top.get("AWSTemplateFormatVersion") {
            None => None,
            Some(v) => {
                let text = crate::params::scalar_text(v).unwrap_or_default();
                if text != "2010-09-09" {
                    errors.push(
                        format_error(format!(
                            "'{text}' is not a supported AWSTemplateFormatVersion value."
                        ))
                        .with_path("AWSTemplateFormatVersion"),
                    );
                }
                Some(text)
            }
        };
        let description = match top.get("Description") {
            None => None,
            Some(Value::String(s)) => Some(s.to_string()),
            Some(_) => {
                errors.push(format_error("Description must be a string").with_path("Description"));
                None
            }
        };
        let mappings = Self::mappings(top.get("Mappings"), &mut errors);
        let mut conditions = NameMap::default();
        match top.get("Conditions") {
            None | Some(Value::Null) => {}
            Some(Value::Object(c)) => {
                for (k, v) in c {
                    conditions.insert(k.to_string(), v.clone());
                }
            }
            Some(_) => errors
                .push(format_error("Conditions section must be an object").with_path("Conditions")),
        }
        let mut resources = NameMap::default();
        match top.remove("Resources") {
            Some(Value::Object(r)) if !r.is_empty() => {
                resources.reserve(r.len());
                for (id, v) in r {
                    match Self::resource(&id, v) {
                        Ok(res) => {
                            resources.insert(id.into(), res);
                        }
                        Err(e) => errors.push(e),
                    }
                }
            }
            _ => errors.push(format_error(
                "At least one Resources member must be defined.",
            )),
        }
        let mut outputs = NameMap::default();
        match top.remove("Outputs") {
            None | Some(Value::Null) => {}
            Some(Value::Object(o)) => {
                outputs.reserve(o.len());
                for (name, v) in o {
                    match Self::output(&name, v) {
                        Ok(out) => {
                            outputs.insert(name.into(), out);
                        }
                        Err(e) => errors.push(e),
                    }
                }
            }
            Some(_) => {
                errors.push(format_error("Outputs section must be an object").with_path("Outputs"))
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(Template {
            format_version,
            description,
            metadata: top.remove("Metadata"),
            transforms,
            parameters,
            mappings,
            conditions,
            resources,
            outputs,
            rules: top.remove("Rules"),
        })
    }

    fn mappings(section: Option<&Value>, errors: &mut Vec<Diagnostic>) -> Map {
        let mut out = Map::new();
        match section {
            None | Some(Value::Null) => {}
            Some(Value::Object(maps)) => {
                for (name, m) in maps {
                    let Some(top_keys) = m.as_object() else {
                        errors.push(
                            format_error(format!("Every Mappings member {name} must be a map"))
                                .with_path(format!("Mappings/{name}")),
                        );
                        continue;
                    };
                    let mut ok = true;
                    for (key, second) in top_keys {
                        if !second.is_object() {
                            errors.push(
                                format_error(format!(
                                    "[/Mappings/{name}/{key}] Every Mappings attribute must be a map"
                                ))
                                .with_path(format!("Mappings/{name}/{key}")),
                            );
                            ok = false;
                        }
                    }
                    if ok {
                        out.insert(name.clone(), m.clone());
                    }
                }
            }
            Some(_) => errors
                .push(format_error("Mappings section must be an object").with_path("Mappings")),
        }
        out
    }

    fn resource(id: &str, v: Value) -> Result<Resource, Diagnostic> {
        // Written out only for an error: a large template has thousands of resources.
        let path = || format!("Resources/{id}");
        let missing_type = || {
            format_error(format!(
                "[/Resources/{id}] Every Resources object must contain a Type member."
            ))
            .with_path(path())
        };
        let Value::Object(mut obj) = v else {
            return Err(missing_type());
        };
        let resource_type = match obj.get("Type") {
            Some(Value::String(t)) if !t.is_empty() => t.clone(),
            _ => return Err(missing_type()),
        };
        if let Some(bad) = obj.keys().find(|k| !RESOURCE_KEYS.contains(&k.as_str())) {
            // AWS words this one without the "Template format error:" prefix.
            return Err(
                Diagnostic::new(format!("Invalid template resource property '{bad}'"))
                    .with_path(format!("{}/{bad}", path())),
            );
        }
        let properties = match obj.remove("Properties") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(p @ Value::Object(_)) => p,
            Some(_) => {
                return Err(format_error(format!(
                    "[/Resources/{id}/Properties] Properties must be an object"
                ))
                .with_path(format!("{}/Properties", path())));
            }
        };
        let depends_on = match obj.get("DependsOn") {
            None => Vec::new(),
            Some(Value::String(s)) => vec![s.to_string()],
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            Some(_) => {
                return Err(format_error(format!(
                    "[/Resources/{id}/DependsOn] DependsOn must be a string or a list of strings"
                ))
                .with_path(format!("{}/DependsOn", path())));
            }
        };
        Ok(Resource {
            logical_id: id.to_string(),
            resource_type: resource_type.to_string(),
            properties,
            depends_on,
            condition: string_attr(&obj, "Condition", "Resources", id)?,
            deletion_policy: obj.remove("DeletionPolicy"),
            update_replace_policy: obj.remove("UpdateReplacePolicy"),
            metadata: obj.remove("Metadata"),
            creation_policy: obj.remove("CreationPolicy"),
            update_policy: obj.remove("UpdatePolicy"),
        })
    }

    fn output(name: &str, v: Value) -> Result<Output, Diagnostic> {
        let path = format!("Outputs/{name}");
        let malformed = || {
            format_error("Every Outputs member must contain a Value object").with_path(path.clone())
        };
        let Value::Object(mut obj) = v else {
            return Err(malformed());
        };
        let value = match obj.remove("Value") {
            None => return Err(malformed()),
            Some(Value::Null) => {
                return Err(format_error(format!(
                    "[/Outputs/{name}/Value] 'null' values are not allowed in templates"
                ))
                .with_path(format!("{path}/Value")));
            }
            Some(v) => v,
        };
        let export_name = match obj.get("Export") {
            None => None,
            Some(Value::Object(e)) => match e.get("Name") {
                Some(n) => Some(n.clone()),
                None => {
                    return Err(format_error(format!(
                        "[/Outputs/{name}/Export] Export must contain a Name member"
                    ))
                    .with_path(format!("{path}/Export")));
                }
            },
            Some(_) => {
                return Err(format_error(format!(
                    "[/Outputs/{name}/Export] Export must be an object"
                ))
                .with_path(format!("{path}/Export")));
            }
        };
        Ok(Output {
            name: name.to_string(),
            value,
            description: obj.remove("Description"),
            condition: string_attr(&obj, "Condition", "Outputs", name)?,
            export_name,
        })
    }

    /// Whether `AWS::LanguageExtensions` is declared.
    pub fn has_language_extensions(&self) -> bool {
        self.transforms.iter().any(|t| t == LANGUAGE_EXTENSIONS)
    }
}
