//! `Policies` of a function or state machine: SAM's policy templates (the translator's own
//! `policy_templates.json`, embedded whole), AWS managed policy names (its bundled name → ARN
//! map for the `aws` partition), ARNs and intrinsics, and inline statements; and the execution
//! role the translator generates from them.

use crate::resource::{Res, is_intrinsic, managed_arn};
use serde_json::{Map, Value, json};
use std::sync::OnceLock;

static TEMPLATES: &str = include_str!("../data/policy_templates.json");
static MANAGED: &str = include_str!("../data/managed_policies.json");

fn templates() -> &'static Map<String, Value> {
    static T: OnceLock<Map<String, Value>> = OnceLock::new();
    T.get_or_init(|| {
        serde_json::from_str::<Value>(TEMPLATES)
            .ok()
            .and_then(|v| v.get("Templates").and_then(Value::as_object).cloned())
            .unwrap_or_default()
    })
}

fn managed() -> &'static Map<String, Value> {
    static M: OnceLock<Map<String, Value>> = OnceLock::new();
    M.get_or_init(|| {
        serde_json::from_str::<Value>(MANAGED)
            .ok()
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default()
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Managed,
    Statement,
    Template,
    Unknown,
}

fn is_no_value(v: &Value) -> bool {
    v.get("Ref").and_then(Value::as_str) == Some("AWS::NoValue")
        && v.as_object().is_some_and(|o| o.len() == 1)
}

fn if_items(v: &Value) -> Option<&Vec<Value>> {
    let o = v.as_object()?;
    if o.len() != 1 {
        return None;
    }
    o.get("Fn::If")?.as_array()
}

fn kind(p: &Value, with_templates: bool) -> Result<Kind, String> {
    if p.is_string() {
        return Ok(Kind::Managed);
    }
    if let Some(items) = if_items(p) {
        if items.len() != 3 {
            return Err("Fn::If requires 3 arguments".into());
        }
        let (a, b) = (
            kind(&items[1], with_templates)?,
            kind(&items[2], with_templates)?,
        );
        if a == b {
            return Ok(a);
        }
        if is_no_value(&items[1]) {
            return Ok(b);
        }
        if is_no_value(&items[2]) {
            return Ok(a);
        }
        return Err("Structure of the SAM template is invalid. Different policy types within the same Fn::If statement is unsupported. Separate different policy types into different Fn::If statements".into());
    }
    if is_intrinsic(p) {
        return Ok(Kind::Managed);
    }
    if p.get("Statement").is_some() && p.is_object() {
        return Ok(Kind::Statement);
    }
    if with_templates
        && let Some(o) = p.as_object()
        && o.len() == 1
        && o.keys().next().is_some_and(|k| templates().contains_key(k))
    {
        return Ok(Kind::Template);
    }
    Ok(Kind::Unknown)
}

fn as_list(policies: Option<&Value>) -> Vec<Value> {
    match policies {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(s)) if s.is_empty() => Vec::new(),
        Some(Value::Object(o)) if o.is_empty() => Vec::new(),
        Some(one) => vec![one.clone()],
    }
}

/// The policy-templates plugin: each template in `Policies` becomes its statement document.
pub fn expand_templates(id: &str, policies: Option<&Value>) -> Result<Option<Value>, String> {
    let list = as_list(policies);
    if list.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(list.len());
    for p in list {
        if kind(&p, true).map_err(|e| fix(id, e))? != Kind::Template {
            out.push(p);
            continue;
        }
        if let Some(items) = if_items(&p) {
            let mut branches = vec![items[0].clone()];
            for b in &items[1..] {
                branches.push(if is_no_value(b) {
                    b.clone()
                } else {
                    convert(id, b)?
                });
            }
            out.push(json!({"Fn::If": branches}));
            continue;
        }
        out.push(convert(id, &p)?);
    }
    Ok(Some(Value::Array(out)))
}

fn fix(id: &str, e: String) -> String {
    if e.starts_with("Structure") {
        e
    } else {
        crate::invalid(id, e)
    }
}

fn convert(id: &str, p: &Value) -> Result<Value, String> {
    let Some((name, values)) = p.as_object().and_then(|o| o.iter().next()) else {
        return Ok(p.clone());
    };
    let Some(template) = templates().get(name) else {
        return Ok(p.clone());
    };
    let Some(values) = values.as_object() else {
        return Err(crate::invalid(
            id,
            format!("Must specify valid parameter values for policy template '{name}'"),
        ));
    };
    let params = template
        .get("Parameters")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let missing: Vec<&str> = params
        .keys()
        .filter(|k| !values.contains_key(k.as_str()))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(crate::invalid(
            id,
            format!(
                "Following required parameters of template '{name}' don't have values: {}",
                crate::globals::py_list(&missing)
            ),
        ));
    }
    let definition = template.get("Definition").cloned().unwrap_or(json!({}));
    Ok(substitute(&definition, &params, values))
}

fn substitute(v: &Value, params: &Map<String, Value>, values: &Map<String, Value>) -> Value {
    match v {
        Value::Object(o) => {
            if o.len() == 1
                && let Some(Value::String(name)) = o.get("Ref")
                && params.contains_key(name)
                && let Some(value) = values.get(name)
            {
                return value.clone();
            }
            Value::Object(
                o.iter()
                    .map(|(k, c)| (k.clone(), substitute(c, params, values)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|c| substitute(c, params, values))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// A managed policy name's ARN: the bundled map, else the name (an ARN, or anything the
/// translator cannot look up) as given.
pub fn managed_policy_arn(partition: &str, name: &str) -> String {
    if partition == "aws"
        && let Some(arn) = managed().get(name).and_then(Value::as_str)
    {
        return arn.to_string();
    }
    name.to_string()
}

/// What goes into an execution role besides `Policies`.
pub struct RoleSpec<'a> {
    pub role_id: String,
    pub attrs: Map<String, Value>,
    pub partition: &'a str,
    pub assume_role_policy: Value,
    pub managed_arns: Vec<Value>,
    pub documents: Vec<Value>,
    pub path: Option<Value>,
    pub permissions_boundary: Option<Value>,
    pub tags: Option<Value>,
}

/// `construct_role_for_resource`: statements become `<Role>Policy<index>` documents, managed
/// names their ARNs (de-duplicated), anything else refused by index.
pub fn construct_role(
    owner: &str,
    spec: RoleSpec,
    policies: Option<&Value>,
) -> Result<Res, String> {
    let mut role = Res::new(&spec.role_id, "AWS::IAM::Role", spec.attrs);
    role.put("AssumeRolePolicyDocument", spec.assume_role_policy);
    let mut arns = spec.managed_arns;
    let mut documents = spec.documents;
    let partition = spec.partition;
    for (index, p) in as_list(policies).into_iter().enumerate() {
        match kind(&p, false).map_err(|e| fix(owner, e))? {
            Kind::Statement => {
                let name = format!("{}Policy{index}", spec.role_id);
                if let Some(items) = if_items(&p) {
                    let mut items = items.clone();
                    for b in items.iter_mut().skip(1) {
                        if !is_no_value(b) {
                            *b = json!({"PolicyName": name, "PolicyDocument": b.clone()});
                        }
                    }
                    documents.push(json!({"Fn::If": items}));
                } else {
                    documents.push(json!({"PolicyName": name, "PolicyDocument": p}));
                }
            }
            Kind::Managed => {
                let arn = match &p {
                    Value::String(s) => json!(managed_policy_arn(partition, s)),
                    v if if_items(v).is_some() => {
                        let mut items = if_items(v).cloned().unwrap_or_default();
                        for b in items.iter_mut().skip(1) {
                            if let Value::String(s) = b {
                                *b = json!(managed_policy_arn(partition, s));
                            }
                        }
                        json!({"Fn::If": items})
                    }
                    v => v.clone(),
                };
                if !arns.contains(&arn) {
                    arns.push(arn);
                }
            }
            Kind::Template | Kind::Unknown => {
                return Err(crate::invalid(
                    owner,
                    format!("Policy at index {index} in the 'Policies' property is not valid"),
                ));
            }
        }
    }
    role.put("ManagedPolicyArns", Value::Array(arns));
    if !documents.is_empty() {
        role.put("Policies", Value::Array(documents));
    }
    role.set("Path", spec.path);
    role.set("PermissionsBoundary", spec.permissions_boundary);
    role.set("Tags", spec.tags);
    Ok(role)
}

/// The trust policy of a Lambda execution role.
pub fn lambda_assume_role() -> Value {
    json!({"Version": "2012-10-17", "Statement": [{"Action": ["sts:AssumeRole"], "Effect": "Allow", "Principal": {"Service": ["lambda.amazonaws.com"]}}]})
}

/// The trust policy of a state machine's role.
pub fn states_assume_role() -> Value {
    json!({"Version": "2012-10-17", "Statement": [{"Action": ["sts:AssumeRole"], "Effect": "Allow", "Principal": {"Service": ["states.amazonaws.com"]}}]})
}

/// X-Ray's managed policy for a traced function's role.
pub fn xray_arn(partition: &str) -> Value {
    let name = if partition == "aws" {
        "AWSXrayWriteOnlyAccess"
    } else {
        "AWSXRayDaemonWriteAccess"
    };
    managed_arn(partition, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_expand_with_their_parameters() {
        let p = json!([{"S3ReadPolicy": {"BucketName": {"Ref": "B"}}}, "AmazonS3ReadOnlyAccess", {"SQSPollerPolicy": {}}]);
        let err = expand_templates("F", Some(&p)).expect_err("QueueName missing");
        assert!(err.contains("Following required parameters of template 'SQSPollerPolicy' don't have values: ['QueueName']"), "{err}");
        let p = json!([{"S3ReadPolicy": {"BucketName": {"Ref": "B"}}}, "AmazonS3ReadOnlyAccess"]);
        let out = expand_templates("F", Some(&p)).expect("ok").expect("some");
        let resources = &out[0]["Statement"][0]["Resource"][0]["Fn::Sub"][1]["bucketName"];
        assert_eq!(resources, &json!({"Ref": "B"}));
        assert_eq!(
            managed_policy_arn("aws", "AmazonS3ReadOnlyAccess"),
            "arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"
        );
    }
}
