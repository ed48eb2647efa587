//! AWS's own wording for template errors, in one place so every module says the same thing and
//! tests can assert the exact text CloudFormation's ValidateTemplate/CreateStack would return.

use crate::Diagnostic;

/// Which top-level block a reference was found in; AWS names it in dependency errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Block {
    Resources,
    Outputs,
    Conditions,
}

impl Block {
    pub fn name(self) -> &'static str {
        match self {
            Block::Resources => "Resources",
            Block::Outputs => "Outputs",
            Block::Conditions => "Conditions",
        }
    }
}

/// Every intrinsic AWS accepts outside `Rules`; listed in unsupported-function errors.
const SUPPORTED_FUNCTIONS: &str = "[Fn::Base64, Fn::GetAtt, Fn::GetAZs, Fn::ImportValue, Fn::Join, \
Fn::Split, Fn::FindInMap, Fn::Select, Ref, Fn::Equals, Fn::If, Fn::Not, Condition, Fn::And, Fn::Or, \
Fn::Contains, Fn::EachMemberEquals, Fn::EachMemberIn, Fn::ValueOf, Fn::ValueOfAll, Fn::RefAll, \
Fn::Sub, Fn::Cidr]";

/// How AWS begins the answer for a template that does not parse; cumulo adds what it found
/// after it, and [`Diagnostic::aws_message`] gives AWS's own text.
pub const JSON_NOT_WELL_FORMED: &str = "Template format error: JSON not well-formed.";
/// See [`JSON_NOT_WELL_FORMED`].
pub const YAML_NOT_WELL_FORMED: &str = "Template format error: YAML not well-formed.";

pub fn format_error(detail: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::new(format!("Template format error: {detail}"))
}

pub fn template_error(detail: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::new(format!("Template error: {detail}"))
}

pub fn unresolved_dependencies(names: &[String], block: Block) -> Diagnostic {
    format_error(format!(
        "Unresolved resource dependencies [{}] in the {} block of the template",
        names.join(", "),
        block.name()
    ))
}

pub fn getatt_undefined(resource: &str) -> Diagnostic {
    template_error(format!(
        "instance of Fn::GetAtt references undefined resource {resource}"
    ))
}

pub fn unsupported_function(name: &str) -> Diagnostic {
    format_error(format!(
        "Encountered unsupported function: {name} Supported functions are: {SUPPORTED_FUNCTIONS}"
    ))
}

pub fn circular_resources(names: &[String]) -> Diagnostic {
    Diagnostic::new(format!(
        "Circular dependency between resources: [{}]",
        names.join(", ")
    ))
}

pub fn circular_conditions(names: &[String]) -> Diagnostic {
    format_error(format!(
        "Circular dependency between conditions: [{}]",
        names.join(", ")
    ))
}

pub fn unresolved_condition_in_fn_if(name: &str) -> Diagnostic {
    template_error(format!("unresolved condition dependency {name} in Fn::If"))
}

pub fn unresolved_condition_in_block(name: &str, block: Block) -> Diagnostic {
    format_error(format!(
        "Unresolved condition dependency {name} in the {} block of the template",
        block.name()
    ))
}

pub fn resources_in_conditions(names: &[String]) -> Diagnostic {
    format_error(format!(
        "Unresolved dependencies [{}]. Cannot reference resources in the Conditions block of the template",
        names.join(", ")
    ))
}

/// The standard "every Fn::X object requires ..." shape-error wording.
pub fn malformed(function: &str) -> Diagnostic {
    let detail = match function {
        "Fn::Join" => {
            "every Fn::Join object requires two parameters, (1) a string delimiter and (2) a list of \
             strings to be joined or a function that returns a list of strings (such as Fn::GetAZs) to \
             be joined."
        }
        "Fn::Select" => {
            "Fn::Select requires a list argument with two elements: an integer index and a list"
        }
        "Fn::Split" => {
            "Fn::Split requires a list argument with two elements: a delimiter and a source string"
        }
        "Fn::FindInMap" => {
            "every Fn::FindInMap object requires three parameters, the map name, map key and the \
             attribute for return value"
        }
        "Fn::GetAtt" => {
            "every Fn::GetAtt object requires two non-empty parameters, the resource name and the \
             resource attribute"
        }
        "Fn::If" => "Fn::If requires a list argument with the first element being a condition",
        "Fn::Equals" => "every Fn::Equals object requires a list of 2 string parameters.",
        "Fn::And" => {
            "every Fn::And object requires a list of at least 2 and at most 10 boolean parameters."
        }
        "Fn::Or" => {
            "every Fn::Or object requires a list of at least 2 and at most 10 boolean parameters."
        }
        "Fn::Not" => "every Fn::Not object requires a list with exactly 1 boolean parameter.",
        "Fn::Sub" => {
            "One or more Fn::Sub intrinsic functions don't specify expected arguments. Specify a \
             string as first argument, and an optional second argument to specify a mapping of \
             values to replace in the string"
        }
        "Fn::Base64" => "every Fn::Base64 object requires a string parameter.",
        "Fn::ImportValue" => "every Fn::ImportValue object requires a string parameter.",
        "Fn::GetAZs" => "every Fn::GetAZs object requires a string parameter.",
        "Fn::Cidr" => {
            "Fn::Cidr requires a list argument with three elements: an ipBlock, a count and the \
             cidrBits"
        }
        "Fn::Length" => "Fn::Length requires a list argument or a function that returns a list.",
        "Fn::ToJsonString" => {
            "Fn::ToJsonString requires an object or a list argument, or a function that returns one."
        }
        "Fn::ForEach" => {
            "Fn::ForEach requires a list argument with three elements: an identifier, a collection \
             and an output object"
        }
        "Ref" => "every Ref object requires a single string parameter.",
        "Condition" => "every Condition object requires a single string parameter.",
        other => return template_error(format!("{other} is malformed")),
    };
    template_error(detail)
}
