//! Template parameters: declarations, the value a stack gives each one, and AWS's validation rules
//! (AllowedValues, AllowedPattern, lengths, numeric bounds) with AWS's exact messages.

use crate::Diagnostic;
use crate::NameMap;
use crate::errors::format_error;
use crate::value::Value;
use indexmap::{IndexMap, IndexSet};

/// A parameter's declared type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamType {
    String,
    Number,
    ListNumber,
    CommaDelimitedList,
    /// `AWS::EC2::VPC::Id` and friends: a string AWS would check exists; cumulo takes it as given.
    AwsSpecific(String),
    /// `List<AWS::EC2::Subnet::Id>` and friends.
    AwsSpecificList(String),
    /// `AWS::SSM::Parameter::Value<T>`: the given value names an SSM parameter whose value is used.
    Ssm(Box<ParamType>),
    /// `AWS::SSM::Parameter::Name`: the name itself, not looked up.
    SsmName,
}

impl ParamType {
    /// Parses a `Type:` string; `None` when AWS would say "Unrecognized parameter type".
    pub fn parse(text: &str) -> Option<ParamType> {
        match text {
            "String" => Some(ParamType::String),
            "Number" => Some(ParamType::Number),
            "List<Number>" => Some(ParamType::ListNumber),
            "CommaDelimitedList" => Some(ParamType::CommaDelimitedList),
            "AWS::SSM::Parameter::Name" => Some(ParamType::SsmName),
            _ => {
                if let Some(inner) = text
                    .strip_prefix("AWS::SSM::Parameter::Value<")
                    .and_then(|t| t.strip_suffix('>'))
                {
                    // `List<String>` exists only inside SSM types, as a comma-delimited list.
                    if inner == "List<String>" {
                        return Some(ParamType::Ssm(Box::new(ParamType::CommaDelimitedList)));
                    }
                    let inner = ParamType::parse(inner)?;
                    return match inner {
                        ParamType::Ssm(_) | ParamType::SsmName => None,
                        other => Some(ParamType::Ssm(Box::new(other))),
                    };
                }
                if let Some(inner) = text.strip_prefix("List<").and_then(|t| t.strip_suffix('>')) {
                    return is_aws_specific(inner)
                        .then(|| ParamType::AwsSpecificList(inner.to_string()));
                }
                is_aws_specific(text).then(|| ParamType::AwsSpecific(text.to_string()))
            }
        }
    }

    /// List types are referenced as JSON arrays; the rest as strings.
    pub fn is_list(&self) -> bool {
        match self {
            ParamType::ListNumber
            | ParamType::CommaDelimitedList
            | ParamType::AwsSpecificList(_) => true,
            ParamType::Ssm(inner) => inner.is_list(),
            _ => false,
        }
    }
}

/// The AWS-specific parameter types CloudFormation recognises (the console validates that the
/// value exists; cumulo only checks the type name is one AWS accepts).
const AWS_SPECIFIC_TYPES: &[&str] = &[
    "AWS::EC2::AvailabilityZone::Name",
    "AWS::EC2::Image::Id",
    "AWS::EC2::Instance::Id",
    "AWS::EC2::KeyPair::KeyName",
    "AWS::EC2::SecurityGroup::GroupName",
    "AWS::EC2::SecurityGroup::Id",
    "AWS::EC2::Subnet::Id",
    "AWS::EC2::Volume::Id",
    "AWS::EC2::VPC::Id",
    "AWS::Route53::HostedZone::Id",
];

fn is_aws_specific(text: &str) -> bool {
    AWS_SPECIFIC_TYPES.contains(&text)
}

/// One `Parameters` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ParameterDecl {
    pub name: String,
    pub type_name: String,
    pub param_type: ParamType,
    pub default: Option<String>,
    pub allowed_values: Option<Vec<String>>,
    pub allowed_pattern: Option<String>,
    pub min_length: Option<u64>,
    pub max_length: Option<u64>,
    /// Kept as written so messages print the bound exactly as the template does.
    pub min_value: Option<String>,
    pub max_value: Option<String>,
    pub no_echo: bool,
    pub description: Option<String>,
    pub constraint_description: Option<String>,
}

/// Scalars in parameter declarations may be written as strings, numbers or booleans.
pub(crate) fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

impl ParameterDecl {
    /// Builds a declaration from its template JSON, with AWS's messages for malformed ones.
    pub fn from_value(name: &str, v: &Value) -> Result<ParameterDecl, Diagnostic> {
        let path = format!("Parameters/{name}");
        let obj = v.as_object().ok_or_else(|| {
            format_error(format!(
                "[/Parameters/{name}] Every Parameters object must be an object"
            ))
            .with_path(path.clone())
        })?;
        let type_name = obj.get("Type").and_then(Value::as_str).ok_or_else(|| {
            format_error(format!(
                "[/Parameters/{name}] Every Parameters object must contain a Type member."
            ))
            .with_path(path.clone())
        })?;
        let param_type = ParamType::parse(type_name).ok_or_else(|| {
            format_error(format!("Unrecognized parameter type: {type_name}"))
                .with_path(format!("{path}/Type"))
        })?;
        let text = |key: &str| obj.get(key).and_then(scalar_text);
        let uint = |key: &str| -> Result<Option<u64>, Diagnostic> {
            match obj.get(key) {
                None => Ok(None),
                Some(v) => scalar_text(v)
                    .and_then(|t| t.trim().parse::<u64>().ok())
                    .map(Some)
                    .ok_or_else(|| {
                        format_error(format!(
                            "Invalid {key} value for parameter {name}: must be a non-negative integer"
                        ))
                        .with_path(format!("{path}/{key}"))
                    }),
            }
        };
        let number = |key: &str| -> Result<Option<String>, Diagnostic> {
            match obj.get(key) {
                None => Ok(None),
                Some(v) => scalar_text(v)
                    .filter(|t| t.trim().parse::<f64>().is_ok())
                    .map(Some)
                    .ok_or_else(|| {
                        format_error(format!(
                            "Invalid {key} value for parameter {name}: must be a number"
                        ))
                        .with_path(format!("{path}/{key}"))
                    }),
            }
        };
        let allowed_values = match obj.get("AllowedValues") {
            None => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|i| {
                        scalar_text(i).ok_or_else(|| {
                            format_error(format!(
                                "Every AllowedValues member of parameter {name} must be a string"
                            ))
                            .with_path(format!("{path}/AllowedValues"))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(_) => {
                return Err(format_error(format!(
                    "AllowedValues of parameter {name} must be a list"
                ))
                .with_path(format!("{path}/AllowedValues")));
            }
        };
        let default = match obj.get("Default") {
            None => None,
            Some(Value::Array(items)) if param_type.is_list() => Some(
                items
                    .iter()
                    .filter_map(scalar_text)
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            Some(v) => Some(scalar_text(v).ok_or_else(|| {
                format_error(format!(
                    "Default value of parameter {name} must be a string"
                ))
                .with_path(format!("{path}/Default"))
            })?),
        };
        Ok(ParameterDecl {
            name: name.to_string(),
            type_name: type_name.to_string(),
            param_type,
            default,
            allowed_values,
            allowed_pattern: text("AllowedPattern"),
            min_length: uint("MinLength")?,
            max_length: uint("MaxLength")?,
            min_value: number("MinValue")?,
            max_value: number("MaxValue")?,
            no_echo: obj
                .get("NoEcho")
                .and_then(scalar_text)
                .is_some_and(|t| t.eq_ignore_ascii_case("true")),
            description: text("Description"),
            constraint_description: text("ConstraintDescription"),
        })
    }

    /// A value that satisfies this declaration, for rendering or validating a template when the
    /// caller has none (`cumulo validate`, the corpus tests).
    pub fn dummy_value(&self) -> String {
        if let Some(d) = &self.default {
            return d.clone();
        }
        if let Some(first) = self.allowed_values.as_ref().and_then(|v| v.first()) {
            return first.clone();
        }
        let numeric = matches!(self.param_type, ParamType::Number | ParamType::ListNumber)
            || matches!(&self.param_type, ParamType::Ssm(inner) if matches!(**inner, ParamType::Number | ParamType::ListNumber));
        if numeric {
            let n = self
                .min_value
                .clone()
                .or_else(|| self.max_value.clone())
                .unwrap_or_else(|| "1".to_string());
            return if self.param_type.is_list() {
                vec![n; 6].join(",")
            } else {
                n
            };
        }
        let len = self.min_length.unwrap_or(0).max(1);
        let len = self.max_length.map_or(len, |m| len.min(m.max(1)));
        let item = "x".repeat(usize::try_from(len).unwrap_or(1).min(4096));
        // Lists get several members so templates that Fn::Select into them still render.
        if self.param_type.is_list() {
            vec![item; 6].join(",")
        } else {
            item
        }
    }
}

/// A parameter's effective value: lists are split and trimmed as AWS does.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    Str(String),
    List(Vec<String>),
}

impl ParamValue {
    /// The value as `Ref` returns it.
    pub fn to_value(&self) -> Value {
        match self {
            ParamValue::Str(s) => Value::String(s.clone().into()),
            ParamValue::List(l) => Value::Array(l.iter().cloned().map(Value::from).collect()),
        }
    }
}

/// A parameter after validation.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedParameter {
    /// What the stack was given (or the default) — for SSM types, the parameter name.
    pub given: String,
    /// What `Ref` evaluates to.
    pub value: ParamValue,
    /// Describe calls mask NoEcho values; the engine needs to know which.
    pub no_echo: bool,
    /// True when the value came from the declaration's Default.
    pub used_default: bool,
}

/// Reads SSM parameter values for `AWS::SSM::Parameter::Value<...>` parameters; the engine
/// implements it over the SSM service, tests with a map.
pub trait SsmLookup {
    fn get_parameter(&self, name: &str) -> Option<String>;
}

impl<F: Fn(&str) -> Option<String>> SsmLookup for F {
    fn get_parameter(&self, name: &str) -> Option<String> {
        self(name)
    }
}

/// No SSM available: every lookup misses.
pub struct NoSsm;

impl SsmLookup for NoSsm {
    fn get_parameter(&self, _name: &str) -> Option<String> {
        None
    }
}

/// Checks the given values against the declarations and produces every parameter's value.
/// Collects all problems: missing values together, then each constraint failure. Values named
/// in `stand_ins` are not checked against constraints: they are cumulo's stand-ins for values
/// nobody gave (rendering, validation), not user input.
pub fn resolve_parameters(
    decls: &NameMap<String, ParameterDecl>,
    given: &IndexMap<String, String>,
    stand_ins: &IndexSet<String>,
    ssm: &dyn SsmLookup,
) -> Result<NameMap<String, ResolvedParameter>, Vec<Diagnostic>> {
    let unknown: Vec<String> = given
        .keys()
        .filter(|k| !decls.contains_key(*k))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(vec![Diagnostic::new(format!(
            "Parameters: [{}] do not exist in the template",
            unknown.join(", ")
        ))]);
    }
    let missing: Vec<String> = decls
        .values()
        .filter(|d| d.default.is_none() && !given.contains_key(&d.name))
        .map(|d| d.name.clone())
        .collect();
    if !missing.is_empty() {
        return Err(vec![Diagnostic::new(format!(
            "Parameters: [{}] must have values",
            missing.join(", ")
        ))]);
    }
    let mut out = NameMap::default();
    let mut errors = Vec::new();
    let mut ssm_missing = Vec::new();
    for d in decls.values() {
        let (raw, used_default) = match given.get(&d.name) {
            Some(v) => (v.clone(), false),
            None => (d.default.clone().unwrap_or_default(), true),
        };
        let effective_type;
        let text = match &d.param_type {
            ParamType::Ssm(inner) => {
                effective_type = (**inner).clone();
                match ssm.get_parameter(&raw) {
                    Some(v) => v,
                    None => {
                        ssm_missing.push(raw.clone());
                        continue;
                    }
                }
            }
            other => {
                effective_type = other.clone();
                raw.clone()
            }
        };
        let checked = if stand_ins.contains(&d.name) {
            Ok(split_value(&effective_type, &text))
        } else {
            check_value(d, &effective_type, &text)
        };
        match checked {
            Ok(value) => {
                out.insert(
                    d.name.clone(),
                    ResolvedParameter {
                        given: raw,
                        value,
                        no_echo: d.no_echo,
                        used_default,
                    },
                );
            }
            Err(e) => errors.push(e.with_path(format!("Parameters/{}", d.name))),
        }
    }
    if !ssm_missing.is_empty() {
        errors.insert(
            0,
            Diagnostic::new(format!(
                "Unable to fetch parameters [{}] from parameter store for this account.",
                ssm_missing.join(",")
            )),
        );
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// A value as `Ref` sees it: list types split on commas, each member space-trimmed.
fn split_value(ty: &ParamType, text: &str) -> ParamValue {
    if !ty.is_list() {
        return ParamValue::Str(text.to_string());
    }
    ParamValue::List(if text.is_empty() {
        Vec::new()
    } else {
        text.split(',').map(|s| s.trim().to_string()).collect()
    })
}

/// Validates one value against its declaration; lists are checked element by element.
fn check_value(d: &ParameterDecl, ty: &ParamType, text: &str) -> Result<ParamValue, Diagnostic> {
    let value = split_value(ty, text);
    match &value {
        ParamValue::List(items) => {
            let numeric = matches!(ty, ParamType::ListNumber);
            for item in items {
                check_scalar(d, item, numeric)?;
            }
        }
        ParamValue::Str(s) => check_scalar(d, s, matches!(ty, ParamType::Number))?,
    }
    Ok(value)
}

fn check_scalar(d: &ParameterDecl, value: &str, numeric: bool) -> Result<(), Diagnostic> {
    let name = &d.name;
    let constraint = |default_message: String| -> Diagnostic {
        match &d.constraint_description {
            Some(desc) => Diagnostic::new(format!(
                "Parameter '{name}' failed to satisfy constraint: {desc}"
            )),
            None => Diagnostic::new(default_message),
        }
    };
    if let Some(allowed) = &d.allowed_values
        && !allowed.iter().any(|a| a == value)
    {
        return Err(Diagnostic::new(format!(
            "Parameter '{name}' must be one of AllowedValues"
        )));
    }
    if let Some(pattern) = &d.allowed_pattern {
        // AWS anchors AllowedPattern to the whole value (Java's Pattern.matches). Java
        // features the `regex` crate lacks (lookaround, backreferences) cannot be checked
        // here; such a pattern is accepted rather than rejecting a value AWS might accept.
        let anchored = format!("^(?:{pattern})$");
        let matches = regex::Regex::new(&anchored).map_or(true, |re| re.is_match(value));
        if !matches {
            return Err(constraint(format!(
                "Parameter '{name}' must match pattern {pattern}"
            )));
        }
    }
    let chars = value.chars().count() as u64;
    if let Some(min) = d.min_length
        && chars < min
    {
        return Err(constraint(format!(
            "Parameter '{name}' must contain at least {min} characters"
        )));
    }
    if let Some(max) = d.max_length
        && chars > max
    {
        return Err(constraint(format!(
            "Parameter '{name}' must contain at most {max} characters"
        )));
    }
    if numeric || d.min_value.is_some() || d.max_value.is_some() {
        let n: f64 = match value.trim().parse::<f64>() {
            Ok(n) if n.is_finite() => n,
            _ => {
                return Err(Diagnostic::new(format!(
                    "Parameter '{name}' must be a number"
                )));
            }
        };
        if let Some(min) = &d.min_value
            && min.trim().parse::<f64>().is_ok_and(|m| n < m)
        {
            return Err(constraint(format!(
                "Parameter '{name}' must be a number not less than {min}"
            )));
        }
        if let Some(max) = &d.max_value
            && max.trim().parse::<f64>().is_ok_and(|m| n > m)
        {
            return Err(constraint(format!(
                "Parameter '{name}' must be a number not greater than {max}"
            )));
        }
    }
    Ok(())
}
