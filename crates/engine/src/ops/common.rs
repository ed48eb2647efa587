//! What several operations share: finding a stack, reading and checking a template, preparing
//! it for a stack, capabilities, parameters and pagination.

use crate::api::{Caller, Parameter, Tag};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::state::{Generation, StackRecord, State, StoredParam};
use crate::status::StackStatus;
use cumulo_template::Value;
use cumulo_template::{Prepared, Pseudo, prepare};
use indexmap::{IndexMap, IndexSet};

/// AWS's caps on a template (TemplateBody, TemplateURL, and the sections).
pub const MAX_BODY_BYTES: usize = 51_200;
pub const MAX_URL_TEMPLATE_BYTES: usize = 1_000_000;
pub const MAX_RESOURCES: usize = 500;
pub const MAX_PARAMETERS: usize = 200;
pub const MAX_OUTPUTS: usize = 200;
pub const MAX_MAPPINGS: usize = 200;
/// Page size of the paginated list operations.
pub const PAGE: usize = 100;

/// A stack by name (live stacks only) or ARN (deleted ones too), in the caller's region.
pub fn find<'a>(st: &'a State, caller: &Caller, name_or_arn: &str) -> Option<&'a StackRecord> {
    if name_or_arn.starts_with("arn:") {
        st.stacks
            .get(name_or_arn)
            .filter(|s| s.region == caller.region)
    } else {
        st.names
            .get(&(caller.region.clone(), name_or_arn.to_string()))
            .and_then(|id| st.stacks.get(id))
    }
}

/// A stack a mutating operation may act on. A name never finds a deleted stack; an ARN does,
/// and AWS refuses it as it refuses any stack in a state that cannot be updated
/// (`Stack:ARN is in DELETE_COMPLETE state and can not be updated.`).
pub fn find_live<'a>(
    st: &'a State,
    caller: &Caller,
    name_or_arn: &str,
) -> Result<&'a StackRecord, EngineError> {
    match find(st, caller, name_or_arn) {
        Some(s) if s.status == StackStatus::DELETE_COMPLETE => Err(cannot_update(s)),
        Some(s) => Ok(s),
        None => Err(EngineError::stack_not_found(name_or_arn)),
    }
}

pub fn cannot_update(stack: &StackRecord) -> EngineError {
    EngineError::validation(format!(
        "Stack:{} is in {} state and can not be updated.",
        stack.stack_id, stack.status
    ))
}

pub fn check_stack_name(name: &str) -> Result<(), EngineError> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-');
    if !ok {
        return Err(EngineError::validation(format!(
            "1 validation error detected: Value '{name}' at 'stackName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z][-a-zA-Z0-9]*|arn:[-a-zA-Z0-9:/._+]*"
        )));
    }
    if name.len() > 128 {
        return Err(EngineError::validation(format!(
            "1 validation error detected: Value '{name}' at 'stackName' failed to satisfy constraint: Member must have length less than or equal to 128"
        )));
    }
    Ok(())
}

/// The template text from TemplateBody or TemplateURL, with AWS's size limits.
pub async fn template_text(
    engine: &Engine,
    caller: &Caller,
    body: Option<&str>,
    url: Option<&str>,
) -> Result<String, EngineError> {
    match (body, url) {
        (Some(_), Some(_)) => Err(EngineError::validation(
            "Specify either TemplateBody or TemplateURL, not both.",
        )),
        (None, None) => Err(EngineError::validation(
            "Either Template URL or Template Body must be specified.",
        )),
        (Some(body), None) => {
            if body.len() > MAX_BODY_BYTES {
                return Err(EngineError::validation(format!(
                    "1 validation error detected: Value at 'templateBody' failed to satisfy constraint: Member must have length less than or equal to {MAX_BODY_BYTES}"
                )));
            }
            Ok(body.to_string())
        }
        (None, Some(url)) => {
            if url.len() > 1024 {
                return Err(EngineError::validation(
                    "1 validation error detected: Value at 'templateURL' failed to satisfy constraint: Member must have length less than or equal to 1024",
                ));
            }
            let text = engine
                .inner
                .world
                .fetch_template(&caller.region, url)
                .await
                .map_err(EngineError::validation)?;
            if text.len() > MAX_URL_TEMPLATE_BYTES {
                return Err(EngineError::validation(format!(
                    "Template may not exceed {MAX_URL_TEMPLATE_BYTES} bytes in size."
                )));
            }
            Ok(text)
        }
    }
}

/// Parses a template and enforces the section quotas.
pub fn parse(text: &str) -> Result<Value, EngineError> {
    let doc = cumulo_template::parse_template(text).map_err(first_error)?;
    let root = doc.value;
    if !root.is_object() {
        return Err(EngineError::validation(
            "Template format error: JSON not well-formed.",
        ));
    }
    let count = |section: &str| {
        root.get(section)
            .and_then(Value::as_object)
            .map_or(0, |o| o.len())
    };
    // AWS words each quota differently (messages as AWS returns them).
    let n = count("Resources");
    if n > MAX_RESOURCES {
        return Err(EngineError::validation(format!(
            "Template format error: Number of resources, {n}, is greater than maximum allowed, {MAX_RESOURCES}"
        )));
    }
    for (section, what, max) in [
        ("Parameters", "Parameter", MAX_PARAMETERS),
        ("Outputs", "Outputs", MAX_OUTPUTS),
        ("Mappings", "Mappings", MAX_MAPPINGS),
    ] {
        let n = count(section);
        if n > max {
            return Err(EngineError::validation(format!(
                "Template format error: {what} count {n} is greater than max allowed {max}."
            )));
        }
    }
    Ok(root)
}

pub fn first_error(diags: Vec<cumulo_template::Diagnostic>) -> EngineError {
    EngineError::validation(
        diags
            .into_iter()
            .next()
            .map(|d| d.aws_message())
            .unwrap_or_else(|| "Template format error".into()),
    )
}

/// Prepares a template for a stack: parameters validated, conditions evaluated, graph built.
pub fn prepare_for(
    engine: &Engine,
    region: &str,
    account_id: &str,
    stack_id: &str,
    stack_name: &str,
    root: &Value,
    given: &IndexMap<String, String>,
) -> Result<Prepared, EngineError> {
    let uuid = stack_id.rsplit('/').next().unwrap_or_default();
    let pseudo = Pseudo::new(region, account_id, stack_name, uuid);
    let world = engine.inner.world.clone();
    let region = region.to_string();
    let ssm = move |name: &str| world.ssm_parameter(&region, name);
    prepare(root.clone(), given, &IndexSet::new(), pseudo, &ssm).map_err(first_error)
}

/// The parameters as the stack records them.
pub fn stored_params(p: &Prepared) -> Vec<StoredParam> {
    p.parameters
        .iter()
        .map(|(key, r)| {
            let ssm = p
                .template
                .parameters
                .get(key)
                .is_some_and(|d| d.type_name.starts_with("AWS::SSM::Parameter::Value"));
            StoredParam {
                key: key.clone(),
                value: r.given.clone(),
                resolved: ssm.then(|| crate::resolve::value_text(&r.value.to_value().to_json())),
                no_echo: r.no_echo,
            }
        })
        .collect()
}

/// Given parameters as a map; UsePreviousValue takes the stack's value.
pub fn given_params(
    params: &[Parameter],
    previous: Option<&[StoredParam]>,
) -> Result<IndexMap<String, String>, EngineError> {
    let mut out = IndexMap::new();
    for p in params {
        let value = if p.use_previous_value {
            previous
                .and_then(|prev| prev.iter().find(|x| x.key == p.key))
                .map(|x| x.value.clone())
                .ok_or_else(|| {
                    EngineError::validation(format!(
                        "Invalid input for parameter key {}. Cannot specify usePreviousValue as true for a parameter key not in the previous template",
                        p.key
                    ))
                })?
        } else {
            p.value.clone().unwrap_or_default()
        };
        out.insert(p.key.clone(), value);
    }
    Ok(out)
}

/// Tags as the stack records them. The `aws:` prefix is AWS's own (CloudFormation puts its
/// `aws:cloudformation:*` tags on resources), so a stack tag using it is refused, as AWS does.
pub fn tags_of(tags: &[Tag]) -> Result<Vec<(String, String)>, EngineError> {
    if tags.iter().any(|t| {
        t.key
            .get(..4)
            .is_some_and(|p| p.eq_ignore_ascii_case("aws:"))
    }) {
        return Err(EngineError::validation(
            "aws: prefixed tag key names are not allowed for external use.",
        ));
    }
    Ok(tags
        .iter()
        .map(|t| (t.key.clone(), t.value.clone()))
        .collect())
}

const IAM_TYPES: &[(&str, &str)] = &[
    ("AWS::IAM::AccessKey", ""),
    ("AWS::IAM::Group", "GroupName"),
    ("AWS::IAM::InstanceProfile", "InstanceProfileName"),
    ("AWS::IAM::ManagedPolicy", "ManagedPolicyName"),
    ("AWS::IAM::Policy", ""),
    ("AWS::IAM::Role", "RoleName"),
    ("AWS::IAM::User", "UserName"),
    ("AWS::IAM::UserToGroupAddition", ""),
];

/// The capabilities a template needs and why, as ValidateTemplate reports them.
pub fn required_capabilities(root: &Value) -> (Vec<String>, Option<String>) {
    let mut iam = Vec::new();
    let mut named = false;
    if let Some(resources) = root.get("Resources").and_then(Value::as_object) {
        for (logical, r) in resources {
            let t = r.get("Type").and_then(Value::as_str).unwrap_or_default();
            if let Some((_, name_prop)) = IAM_TYPES.iter().find(|(ty, _)| *ty == t) {
                iam.push(logical.clone());
                if !name_prop.is_empty()
                    && r.get("Properties").and_then(|p| p.get(name_prop)).is_some()
                {
                    named = true;
                }
            }
        }
    }
    if iam.is_empty() {
        return (Vec::new(), None);
    }
    let cap = if named {
        "CAPABILITY_NAMED_IAM"
    } else {
        "CAPABILITY_IAM"
    };
    (
        vec![cap.to_string()],
        Some(format!(
            "The following resource(s) require capabilities: [{}]",
            iam.iter()
                .filter_map(|l| root
                    .get("Resources")
                    .and_then(|r| r.get(l))
                    .and_then(|r| r.get("Type"))
                    .and_then(Value::as_str))
                .collect::<IndexSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(", ")
        )),
    )
}

pub fn check_capabilities(root: &Value, given: &[String]) -> Result<(), EngineError> {
    let (needed, _) = required_capabilities(root);
    for cap in needed {
        let ok = given.contains(&cap)
            || (cap == "CAPABILITY_IAM" && given.iter().any(|g| g == "CAPABILITY_NAMED_IAM"));
        if !ok {
            return Err(EngineError::insufficient_capabilities(format!(
                "Requires capabilities : [{cap}]"
            )));
        }
    }
    Ok(())
}

/// A snapshot of what the stack is now (what an update's rollback restores).
pub fn generation(stack: &StackRecord) -> Generation {
    Generation {
        template_body: stack.template_body.clone(),
        original_body: stack.original_body.clone(),
        description: stack.description.clone(),
        parameters: stack.parameters.clone(),
        tags: stack.tags.clone(),
        outputs: stack.outputs.clone(),
        notification_arns: stack.notification_arns.clone(),
        capabilities: stack.capabilities.clone(),
        resources: stack.resources.clone(),
        imports: stack.imports.clone(),
    }
}

/// `(items, next_token)` for a page starting at `token` (an opaque offset).
pub fn page<T>(
    items: Vec<T>,
    token: Option<&str>,
) -> Result<(Vec<T>, Option<String>), EngineError> {
    page_of(items, token, PAGE)
}

/// [`page`] for operations with a MaxResults member (1 to [`PAGE`], default [`PAGE`]).
pub fn page_at_most<T>(
    items: Vec<T>,
    token: Option<&str>,
    max_results: Option<i64>,
) -> Result<(Vec<T>, Option<String>), EngineError> {
    page_of(
        items,
        token,
        max_results.unwrap_or(PAGE as i64).clamp(1, PAGE as i64) as usize,
    )
}

fn page_of<T>(
    items: Vec<T>,
    token: Option<&str>,
    size: usize,
) -> Result<(Vec<T>, Option<String>), EngineError> {
    let start = match token {
        None => 0,
        Some(t) => t
            .parse::<usize>()
            .map_err(|_| EngineError::validation("Invalid NextToken"))?,
    };
    let total = items.len();
    let out: Vec<T> = items.into_iter().skip(start).take(size).collect();
    let next = (start + size < total).then(|| (start + size).to_string());
    Ok((out, next))
}

/// Parameters a change set recorded, as an operation's input gives them.
pub fn given_as_input(given: &[(String, String)]) -> Vec<Parameter> {
    given
        .iter()
        .map(|(k, v)| Parameter {
            key: k.clone(),
            value: Some(v.clone()),
            use_previous_value: false,
        })
        .collect()
}

pub fn new_stack_id(region: &str, account_id: &str, name: &str) -> String {
    Pseudo::new(region, account_id, name, &uuid::Uuid::new_v4().to_string()).stack_id
}
