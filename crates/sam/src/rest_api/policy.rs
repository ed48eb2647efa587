//! A REST API's `Auth.ResourcePolicy` (the API's, for every path, and an Api event's, for its
//! path) as the translator writes it into the swagger's `x-amazon-apigateway-policy`: account,
//! IP range and VPC allow/deny lists as statements on the path's methods, then the custom
//! statements. Its values keep the translator's Python 2.7 types (the statements `Py27Dict`s,
//! the conditions plain dicts), as the Deployment's hash reads them.

use super::*;
use crate::rest_api::event::wildcard_parameters;

const POLICY: &str = "x-amazon-apigateway-policy";
const VERSION: &str = "2012-10-17";
const INVOKE: &str = "execute-api:Invoke";

/// The translator's document error: the template's, naming no resource.
fn document_error(message: impl std::fmt::Display) -> String {
    crate::structure(message)
}

fn get<'a>(d: &'a Dict, k: &str) -> Option<&'a Py> {
    d.get(k).filter(|v| !matches!(v, Py::None))
}

/// The policy the editor holds (`self._doc.get(X) or Py27Dict()`).
fn policy_of(editor: &Editor) -> Result<Dict, String> {
    match editor.doc.get(POLICY).filter(|p| p.truthy()) {
        None => Ok(Dict::py27()),
        Some(Py::Dict(d)) => Ok(d.clone()),
        Some(_) => Err(document_error(format!(
            "Value of '{POLICY}' must be a dictionary."
        ))),
    }
}

/// `statement = policy["Statement"]`, as a list (a single statement wrapped).
fn statements(policy: &Dict) -> Option<Vec<Py>> {
    match get(policy, "Statement")? {
        Py::List(l) => Some(l.clone()),
        other => Some(vec![other.clone()]),
    }
}

fn same(a: &Py, b: &Py) -> bool {
    a.to_json() == b.to_json()
}

/// `_get_method_path_uri_list`: `execute-api:/${__Stage__}/METHOD/path` for every key of the
/// path's item, each an `Fn::Sub` of the stage.
fn resources(editor: &Editor, path: &str, path_uni: bool, stage: &Py) -> Result<Py, String> {
    let mut methods = Vec::new();
    if let Some(item) = editor.paths().get(path) {
        for content in contents(item) {
            let Some(d) = content.as_dict() else {
                return Err(document_error(format!(
                    "Value of '{path}' path must be a dictionary according to Swagger spec."
                )));
            };
            methods.extend(d.items().into_iter().map(|(k, uni, _)| (k, uni)));
        }
    }
    let wildcarded = wildcard_parameters(path);
    let mut out = Vec::new();
    for (m, m_uni) in methods {
        let lower = m.to_lowercase();
        let (method, uni) = if lower == ANY_METHOD || lower == "any" {
            ("*".to_string(), false)
        } else {
            (m.to_uppercase(), m_uni)
        };
        let resource = format!("execute-api:/${{__Stage__}}/{method}{wildcarded}");
        let mut variables = Dict::plain();
        variables.set("__Stage__", false, stage.clone());
        let mut sub = Dict::plain();
        sub.set(
            "Fn::Sub",
            false,
            Py::List(vec![
                Py::Str(resource, uni || path_uni),
                Py::Dict(variables),
            ]),
        );
        out.push(Py::Dict(sub));
    }
    Ok(Py::List(out))
}

fn statement(effect: &str, resources: &Py, principal: Py, condition: Option<Py>) -> Py {
    let mut s = Dict::py27();
    s.set("Effect", false, Py::str(effect));
    s.set("Action", false, Py::str(INVOKE));
    s.set("Resource", false, resources.clone());
    s.set("Principal", false, principal);
    if let Some(c) = condition {
        s.set("Condition", false, c);
    }
    Py::Dict(s)
}

/// `_add_iam_resource_policy_for_method`: the accounts allowed or denied.
fn add_accounts(
    policy: &mut Dict,
    accounts: &Py,
    effect: &str,
    resources: &Py,
) -> Result<(), String> {
    if !accounts.truthy() {
        return Ok(());
    }
    let accounts = match accounts {
        Py::List(_) => accounts.clone(),
        Py::Dict(_) => Py::List(vec![accounts.clone()]),
        other => {
            return Err(document_error(format!(
                "Type of '{}' must be a list or dictionary",
                other.to_str()
            )));
        }
    };
    policy.set("Version", false, Py::str(VERSION));
    let mut principal = Dict::py27();
    principal.update(vec![("AWS".into(), false, accounts)]);
    let s = statement(effect, resources, Py::Dict(principal), None);
    match statements(policy) {
        None => policy.set("Statement", false, s),
        Some(mut list) => {
            list.push(s);
            policy.set("Statement", false, Py::List(list));
        }
    }
    Ok(())
}

/// The allow-all statement and the conditional deny the IP and VPC lists make, each added
/// unless an equal one is there.
fn add_allow_and_deny(policy: &mut Dict, resources: &Py, condition: Py) {
    policy.set("Version", false, Py::str(VERSION));
    let allow = statement("Allow", resources, Py::str("*"), None);
    let deny = statement("Deny", resources, Py::str("*"), Some(condition));
    match statements(policy) {
        None => policy.set("Statement", false, Py::List(vec![allow, deny])),
        Some(mut list) => {
            for s in [allow, deny] {
                if !list.iter().any(|x| same(x, &s)) {
                    list.push(s);
                }
            }
            policy.set("Statement", false, Py::List(list));
        }
    }
}

/// `_add_ip_resource_policy_for_method`.
fn add_ip_ranges(policy: &mut Dict, ranges: &Py, conditional: &str, resources: &Py) {
    if !ranges.truthy() {
        return;
    }
    let ranges = match ranges {
        Py::List(_) => ranges.clone(),
        other => Py::List(vec![other.clone()]),
    };
    let mut inner = Dict::plain();
    inner.set("aws:SourceIp", false, ranges);
    let mut condition = Dict::plain();
    condition.set(conditional, false, Py::Dict(inner));
    add_allow_and_deny(policy, resources, Py::Dict(condition));
}

/// `_add_vpc_resource_policy_for_method`: the VPCs and endpoints (`vpc-` and `vpce-` ids from
/// the string list, then the intrinsic lists as given).
fn add_vpcs(
    policy: &mut Dict,
    (strings, vpcs, vpces): (Option<&Py>, Option<&Py>, Option<&Py>),
    conditional: &str,
    resources: &Py,
) -> Result<(), String> {
    let mut condition = Dict::py27();
    let mut extend = |key: &str, items: Vec<Py>| {
        let list = condition.setdefault(key, false, Py::List(Vec::new()));
        if let Py::List(l) = list {
            l.extend(items);
        }
    };
    let items = |v: &Py| -> Result<Vec<Py>, String> {
        match v {
            Py::List(l) => Ok(l.clone()),
            Py::Dict(d) => Ok(d.keys().iter().map(|k| Py::str(k)).collect()),
            Py::Str(s, uni) => Ok(s.chars().map(|c| Py::Str(c.to_string(), *uni)).collect()),
            other => Err(document_error(format!(
                "'{}' object is not iterable",
                other.to_str()
            ))),
        }
    };
    if let Some(list) = strings {
        let list = items(list)?;
        let pick = |prefix: &str| -> Vec<Py> {
            list.iter()
                .filter(|e| e.as_str().is_some_and(|s| s.starts_with(prefix)))
                .cloned()
                .collect()
        };
        let (vpc, vpce) = (pick("vpc-"), pick("vpce-"));
        if !vpc.is_empty() {
            extend("aws:SourceVpc", vpc);
        }
        if !vpce.is_empty() {
            extend("aws:SourceVpce", vpce);
        }
    }
    if let Some(v) = vpcs {
        extend("aws:SourceVpc", items(v)?);
    }
    if let Some(v) = vpces {
        extend("aws:SourceVpce", items(v)?);
    }
    let empty = |k: &str| !condition.get(k).is_some_and(Py::truthy);
    if empty("aws:SourceVpc") && empty("aws:SourceVpce") {
        return Ok(());
    }
    let mut outer = Dict::plain();
    outer.set(conditional, false, Py::Dict(condition));
    add_allow_and_deny(policy, resources, Py::Dict(outer));
    Ok(())
}

/// `add_resource_policy` for one path: its statements added to the editor's policy, which is
/// written back (even when nothing was added).
pub(crate) fn add_resource_policy(
    editor: &mut Editor,
    resource_policy: &Py,
    (path, path_uni): (&str, bool),
    stage: &Py,
) -> Result<(), String> {
    let Some(rp) = resource_policy.as_dict() else {
        return Err(document_error("Resource Policy is not a valid dictionary."));
    };
    let mut policy = policy_of(editor)?;
    let list = |k: &str| get(rp, k);
    for (key, effect) in [
        ("AwsAccountWhitelist", "Allow"),
        ("AwsAccountBlacklist", "Deny"),
    ] {
        if let Some(accounts) = list(key) {
            let r = resources(editor, path, path_uni, stage)?;
            add_accounts(&mut policy, accounts, effect, &r)?;
        }
    }
    for (key, conditional) in [
        ("IpRangeWhitelist", "NotIpAddress"),
        ("IpRangeBlacklist", "IpAddress"),
    ] {
        if let Some(ranges) = list(key) {
            let r = resources(editor, path, path_uni, stage)?;
            add_ip_ranges(&mut policy, ranges, conditional, &r);
        }
    }
    let resolved = |k: &str| match list(k) {
        None => true,
        Some(Py::List(l)) => l.iter().all(|x| matches!(x, Py::Str(..))),
        Some(Py::Dict(_)) => true,
        Some(Py::Str(..)) => true,
        Some(_) => false,
    };
    for (kind, strings, vpcs, vpces, conditional) in [
        (
            "Blacklist",
            "SourceVpcBlacklist",
            "IntrinsicVpcBlacklist",
            "IntrinsicVpceBlacklist",
            "StringEquals",
        ),
        (
            "Whitelist",
            "SourceVpcWhitelist",
            "IntrinsicVpcWhitelist",
            "IntrinsicVpceWhitelist",
            "StringNotEquals",
        ),
    ] {
        if !resolved(strings) {
            return Err(document_error(format!(
                "SourceVpc{kind} must be a list of strings. Use IntrinsicVpc{kind} instead for values that use Intrinsic Functions"
            )));
        }
        let r = resources(editor, path, path_uni, stage)?;
        add_vpcs(
            &mut policy,
            (list(strings), list(vpcs), list(vpces)),
            conditional,
            &r,
        )?;
    }
    editor.doc.set(POLICY, false, Py::Dict(policy));
    Ok(())
}

/// `add_custom_statements`: each statement added unless an equal one is there (a policy
/// without statements takes them as given).
pub(crate) fn add_custom_statements(editor: &mut Editor, custom: &Py) -> Result<(), String> {
    let mut policy = policy_of(editor)?;
    if !matches!(custom, Py::None) {
        policy.set("Version", false, Py::str(VERSION));
        match statements(&policy) {
            None => policy.set("Statement", false, custom.clone()),
            Some(mut list) => {
                let custom = match custom {
                    Py::List(l) => l.clone(),
                    other => vec![other.clone()],
                };
                for s in custom {
                    if !list.iter().any(|x| same(x, &s)) {
                        list.push(s);
                    }
                }
                policy.set("Statement", false, Py::List(list));
            }
        }
    }
    editor.doc.set(POLICY, false, Py::Dict(policy));
    Ok(())
}
