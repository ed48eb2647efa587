//! The verdict on an inventory: each stack's disposition and each resource's fate with the
//! reason, every custom-resource Delete handler with what it would destroy, each workload's
//! env-controller cascade, and what a plain DeleteStack would destroy. [`assess`] computes
//! it (`generate` builds on the same [`Assessment`]); `markdown` and `html` render it.

pub mod cascade;
pub mod html;
pub mod markdown;

use crate::copilot::{self, Handler};
use crate::inventory::model::*;
use crate::inventory::take::is_custom;
use serde::Serialize;
use std::collections::BTreeSet;

/// What happens to a resource (or an out-of-band object) in the migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fate {
    /// Terraform adopts it with an `import` block.
    Import,
    /// It stays where it is, owned by a stack that is kept.
    RetainUnderExistingOwner,
    /// Nothing to import: retained on teardown and removed by hand later (custom-resource
    /// handles and their handler functions, roles, policies, permissions and log groups).
    ManualCleanup,
    /// Referenced but not owned by these stacks: Terraform refers to it, never imports it.
    ExternalReference,
    /// Out of the migration's scope: the stack is left alone.
    Blocked,
    /// A nested stack resource: its resources are judged in the nested stack.
    NestedWrapper,
    /// Never created (its condition was false), or gone (its service says it no longer
    /// exists): nothing to do.
    NotCreated,
}

impl Fate {
    pub fn name(self) -> &'static str {
        match self {
            Fate::Import => "import",
            Fate::RetainUnderExistingOwner => "retain-under-existing-owner",
            Fate::ManualCleanup => "manual-cleanup",
            Fate::ExternalReference => "external-reference",
            Fate::Blocked => "blocked",
            Fate::NestedWrapper => "nested-wrapper",
            Fate::NotCreated => "not-created",
        }
    }
}

/// What happens to a stack as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Disposition {
    /// Retain-patched, its resources imported into Terraform, then deleted.
    HandOff,
    /// Left as it is (Copilot's app and pipeline stacks).
    Keep,
    /// Out of scope; left alone.
    Blocked,
}

#[derive(Debug, Clone, Serialize)]
pub struct Assessment {
    pub stacks: Vec<StackVerdict>,
    pub out_of_band: Vec<ObjectVerdict>,
    pub cascades: Vec<cascade::Cascade>,
    pub delete_stack: Vec<DeleteEffect>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StackVerdict {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copilot_kind: Option<CopilotKind>,
    pub disposition: Disposition,
    pub reason: String,
    pub resources: Vec<ResourceVerdict>,
    pub handlers: Vec<HandlerVerdict>,
    /// Parameters naming resources the stack does not own.
    pub references: Vec<ReferenceVerdict>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ResourceVerdict {
    pub logical_id: String,
    pub resource_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub physical_id: Option<String>,
    pub fate: Fate,
    pub reason: String,
}

/// A custom resource's Delete handler and what it would destroy if a delete reached it.
#[derive(Debug, Clone, Serialize)]
pub struct HandlerVerdict {
    pub logical_id: String,
    pub resource_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub handler: Option<Handler>,
    /// Copilot's source file, or the function's name for handlers this tool does not know.
    pub code: String,
    /// `None`: unknown code, to be treated as destructive.
    pub destructive: Option<bool>,
    pub on_delete: String,
    pub would_destroy: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReferenceVerdict {
    pub parameter: String,
    pub value: String,
    pub fate: Fate,
    pub reason: String,
}

/// An object no stack owns.
#[derive(Debug, Clone, Serialize)]
pub struct ObjectVerdict {
    /// `certificate` or `record`.
    pub kind: &'static str,
    /// The certificate ARN, or `<zone id>/<name>/<type>[/<set id>]`.
    pub id: String,
    pub fate: Fate,
    pub reason: String,
}

/// What a plain `aws cloudformation delete-stack` of one stack would do.
#[derive(Debug, Clone, Serialize)]
pub struct DeleteEffect {
    pub stack: String,
    pub destroyed: Vec<String>,
    pub retained: Vec<String>,
    /// Delete handlers that would run, with what they destroy.
    pub handlers: Vec<String>,
}

/// A template value resolved against the stack where the inventory can: literals, `Ref` to a
/// parameter, resource or pseudo parameter, `Fn::Sub` (string form) and `Fn::Join` of such.
/// `None` for anything else (`Fn::GetAtt` of a resource attribute, say).
pub(crate) fn resolve(stack: &Stack, value: &serde_json::Value) -> Option<String> {
    resolve_in(None, stack, value)
}

/// [`resolve`], and with the inventory also `Fn::GetAtt` of a Copilot env-controller, which
/// answers with its environment stack's outputs.
pub(crate) fn resolve_in(
    inv: Option<&Inventory>,
    stack: &Stack,
    value: &serde_json::Value,
) -> Option<String> {
    use serde_json::Value;
    let by_name = |name: &str| -> Option<String> {
        match name {
            "AWS::StackName" => Some(stack.name.clone()),
            "AWS::StackId" => Some(stack.id.clone()),
            "AWS::Region" => stack.id.split(':').nth(3).map(str::to_string),
            "AWS::AccountId" => stack.id.split(':').nth(4).map(str::to_string),
            "AWS::Partition" => stack.id.split(':').nth(1).map(str::to_string),
            "AWS::URLSuffix" => Some("amazonaws.com".into()),
            _ => stack
                .parameter(name)
                .map(str::to_string)
                .or_else(|| stack.resource(name)?.physical_id.clone()),
        }
    };
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Object(map) if map.len() == 1 => {
            let (key, arg) = map.iter().next()?;
            match key.as_str() {
                "Ref" => by_name(arg.as_str()?),
                "Fn::Sub" => {
                    let mut rest = arg.as_str()?;
                    let mut out = String::new();
                    while let Some(start) = rest.find("${") {
                        out.push_str(&rest[..start]);
                        let end = rest[start..].find('}')? + start;
                        out.push_str(&by_name(&rest[start + 2..end])?);
                        rest = &rest[end + 1..];
                    }
                    out.push_str(rest);
                    Some(out)
                }
                "Fn::Join" => {
                    let parts = arg.as_array()?;
                    let sep = parts.first()?.as_str()?;
                    let items = parts.get(1)?.as_array()?;
                    let resolved: Option<Vec<String>> =
                        items.iter().map(|i| resolve_in(inv, stack, i)).collect();
                    Some(resolved?.join(sep))
                }
                "Fn::GetAtt" => {
                    let (logical, attribute) = match arg {
                        Value::Array(parts) => (parts.first()?.as_str()?, parts.get(1)?.as_str()?),
                        Value::String(dotted) => dotted.split_once('.')?,
                        _ => return None,
                    };
                    let controller = stack.custom_resources.iter().any(|c| {
                        c.logical_id == logical
                            && c.resource_type == "Custom::EnvControllerFunction"
                    });
                    let c = stack.copilot.as_ref().filter(|_| controller)?;
                    let env = inv?.stacks.iter().find(|s| {
                        s.copilot.as_ref().is_some_and(|e| {
                            e.kind == CopilotKind::Env && e.app == c.app && e.env == c.env
                        })
                    })?;
                    env.outputs
                        .iter()
                        .find(|o| o.key == attribute)
                        .map(|o| o.value.clone())
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The deployed template as JSON (nothing when it does not parse).
pub(crate) fn template_of(stack: &Stack) -> serde_json::Value {
    cumulo_template::parse_template(&stack.template)
        .map(|d| d.value.to_json())
        .unwrap_or(serde_json::Value::Null)
}

/// Record names (lowercase, no trailing dot) the stacks' RecordSet and RecordSetGroup
/// resources own.
fn owned_record_names(inv: &Inventory) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let norm = |n: &str| n.trim_end_matches('.').to_ascii_lowercase();
    for stack in &inv.stacks {
        let doc = template_of(stack);
        for r in &stack.resources {
            let declared = doc
                .get("Resources")
                .and_then(|d| d.get(&r.logical_id))
                .and_then(|d| d.get("Properties"));
            match r.resource_type.as_str() {
                "AWS::Route53::RecordSet" => {
                    if let Some(pid) = &r.physical_id {
                        names.insert(norm(pid));
                    }
                    if let Some(n) = declared.and_then(|p| p.get("Name")) {
                        names.extend(resolve_in(Some(inv), stack, n).map(|n| norm(&n)));
                    }
                }
                "AWS::Route53::RecordSetGroup" => {
                    let sets = declared.and_then(|p| p.get("RecordSets"));
                    for set in sets.and_then(|s| s.as_array()).into_iter().flatten() {
                        if let Some(n) = set.get("Name") {
                            names.extend(resolve_in(Some(inv), stack, n).map(|n| norm(&n)));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    names
}

/// Whether a stack is kept or blocked, inherited from its root for nested stacks.
fn disposition(inv: &Inventory, stack: &Stack, handlers: &[Handler]) -> (Disposition, String) {
    if let Some(parent) = stack
        .parent_id
        .as_ref()
        .and_then(|p| inv.stacks.iter().find(|s| &s.id == p))
    {
        let parent_handlers = stack_handlers(parent);
        let (d, reason) = disposition(inv, parent, &parent_handlers);
        if d != Disposition::HandOff {
            return (d, format!("nested in {}: {reason}", parent.name));
        }
    }
    if let Some(feature) = copilot::blocked_feature(handlers) {
        return (
            Disposition::Blocked,
            format!("the stack uses Copilot's {feature}, which this migration does not cover yet"),
        );
    }
    match stack.copilot.as_ref().map(|c| c.kind) {
        Some(CopilotKind::App) => (
            Disposition::Keep,
            "Copilot's app stack serves every environment (roles, app DNS zone): it stays".into(),
        ),
        Some(CopilotKind::Pipeline) => (
            Disposition::Keep,
            "a Copilot pipeline stack is not part of the application's runtime: it stays".into(),
        ),
        _ => (
            Disposition::HandOff,
            "retain-patched, imported into Terraform, then deleted".into(),
        ),
    }
}

fn stack_handlers(stack: &Stack) -> Vec<Handler> {
    let kind = stack.copilot.as_ref().map(|c| c.kind);
    let mut handlers: Vec<Handler> = stack
        .custom_resources
        .iter()
        .filter_map(|c| copilot::classify(kind, c))
        .collect();
    if stack.copilot.is_some()
        && stack
            .resources
            .iter()
            .any(|r| r.logical_id == "BacklogPerTaskCalculatorFunction")
    {
        handlers.push(Handler::BacklogPerTaskCalculator);
    }
    handlers
}

/// The logical ids a template value refers to (Ref, Fn::GetAtt, `${X}` in Fn::Sub).
fn referenced(value: &serde_json::Value, out: &mut BTreeSet<String>) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("Ref", Value::String(name)) => {
                        out.insert(name.clone());
                    }
                    ("Fn::GetAtt", Value::Array(parts)) => {
                        out.extend(parts.first().and_then(Value::as_str).map(str::to_string));
                    }
                    ("Fn::GetAtt", Value::String(dotted)) => {
                        out.extend(dotted.split('.').next().map(str::to_string));
                    }
                    ("Fn::Sub", Value::String(text)) => {
                        let mut rest = text.as_str();
                        while let Some(start) = rest.find("${") {
                            let Some(end) = rest[start..].find('}') else {
                                break;
                            };
                            let name = &rest[start + 2..start + end];
                            out.extend(name.split('.').next().map(str::to_string));
                            rest = &rest[start + end + 1..];
                        }
                    }
                    _ => referenced(v, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|i| referenced(i, out)),
        _ => {}
    }
}

/// The logical ids of what exists only to run the stack's custom resources: the handler
/// functions, their roles and log groups, and the policies and permissions that refer to
/// nothing else of the stack; less whatever the stack's other resources reference.
fn handler_support(stack: &Stack) -> BTreeSet<String> {
    let mut support = BTreeSet::new();
    for f in stack
        .custom_resources
        .iter()
        .filter_map(|c| c.function.as_ref())
    {
        let Some(function) = stack.resources.iter().find(|r| {
            r.resource_type == "AWS::Lambda::Function"
                && (f.logical_id.as_deref() == Some(&r.logical_id)
                    || r.physical_id.as_deref() == Some(f.name.as_str()))
        }) else {
            continue;
        };
        support.insert(function.logical_id.clone());
        let role_name = f.role.as_deref().and_then(|arn| arn.rsplit('/').next());
        let log_group = format!("/aws/lambda/{}", f.name);
        for r in &stack.resources {
            let pid = r.physical_id.as_deref();
            let is_role = r.resource_type == "AWS::IAM::Role" && pid.is_some() && pid == role_name;
            let is_log = r.resource_type == "AWS::Logs::LogGroup" && pid == Some(&log_group);
            if is_role || is_log {
                support.insert(r.logical_id.clone());
            }
        }
    }
    let doc = template_of(stack);
    loop {
        let before = support.len();
        for r in &stack.resources {
            let attachment = matches!(
                r.resource_type.as_str(),
                "AWS::IAM::Policy" | "AWS::Lambda::Permission" | "AWS::Logs::LogGroup"
            );
            if !attachment || support.contains(&r.logical_id) {
                continue;
            }
            let mut refs = BTreeSet::new();
            if let Some(props) = doc
                .get("Resources")
                .and_then(|d| d.get(&r.logical_id))
                .and_then(|d| d.get("Properties"))
            {
                referenced(props, &mut refs);
            }
            let local: Vec<&String> = refs
                .iter()
                .filter(|x| stack.resource(x).is_some())
                .collect();
            if !local.is_empty() && local.iter().all(|x| support.contains(*x)) {
                support.insert(r.logical_id.clone());
            }
        }
        if support.len() == before {
            break;
        }
    }
    // A role a resource policy of the stack names as a principal is not only the handlers'
    // (CDK's bucket policy grants its auto-delete provider's role): deleting it would leave the
    // imported policy naming a principal that is gone, so it is imported with the policy.
    let mut used_elsewhere = BTreeSet::new();
    for r in &stack.resources {
        if !crate::generate::fates::RESOURCE_POLICIES.contains(&r.resource_type.as_str()) {
            continue;
        }
        if let Some(document) = doc
            .get("Resources")
            .and_then(|d| d.get(&r.logical_id))
            .and_then(|d| d.get("Properties"))
            .and_then(|p| p.get("PolicyDocument"))
        {
            referenced(document, &mut used_elsewhere);
        }
    }
    support.retain(|logical| !used_elsewhere.contains(logical));
    support
}

fn fate_of(
    stack: &Stack,
    r: &Resource,
    disposition: Disposition,
    why: &str,
    support: &BTreeSet<String>,
) -> (Fate, String) {
    if r.physical_id.is_none() || r.status.starts_with("DELETE_") {
        return (
            Fate::NotCreated,
            format!("never created or already deleted ({})", r.status),
        );
    }
    if r.resource_type == "AWS::CloudFormation::Stack" {
        let nested = r.physical_id.as_deref().unwrap_or_default();
        let name = nested.split('/').nth(1).unwrap_or(nested);
        return (
            Fate::NestedWrapper,
            format!("its resources are judged in the nested stack {name}"),
        );
    }
    match disposition {
        Disposition::Blocked => return (Fate::Blocked, why.to_string()),
        Disposition::Keep => return (Fate::RetainUnderExistingOwner, why.to_string()),
        Disposition::HandOff => {}
    }
    if is_custom(&r.resource_type) {
        let kind = stack.copilot.as_ref().map(|c| c.kind);
        let code = stack
            .custom_resources
            .iter()
            .find(|c| c.logical_id == r.logical_id)
            .and_then(|c| copilot::classify(kind, c))
            .map_or("an unknown handler".to_string(), |h| {
                h.facts().file.to_string()
            });
        return (
            Fate::ManualCleanup,
            format!(
                "a custom-resource handle ({code}): retain-patched so no delete ever runs its handler; nothing to import"
            ),
        );
    }
    if support.contains(&r.logical_id) {
        return (
            Fate::ManualCleanup,
            "runs only the stack's custom-resource handlers: retained, then removed by hand".into(),
        );
    }
    if stack.copilot.is_some() && r.logical_id.starts_with("BacklogPerTask") {
        return (
            Fate::Import,
            "Copilot's backlog-per-task metric publisher is load-bearing for queue scaling (the seed's ecsodus ADR-0014 imports it; its summary table's \"blocked (Worker)\" is not followed)".into(),
        );
    }
    match &r.live {
        LiveState::Gone { error_code, .. } => (
            Fate::NotCreated,
            format!(
                "its service says it no longer exists ({error_code}): nothing to import or clean up"
            ),
        ),
        LiveState::Failed { error_code, .. } => (
            Fate::Import,
            format!(
                "Terraform adopts it with an import block (its live state could not be read: {error_code})"
            ),
        ),
        _ => (
            Fate::Import,
            "Terraform adopts it with an import block".into(),
        ),
    }
}

/// A parameter value that names an existing AWS resource.
fn names_a_resource(value: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "arn:",
        "vpc-",
        "subnet-",
        "sg-",
        "rtb-",
        "igw-",
        "nat-",
        "eipalloc-",
        "fs-",
    ];
    !value.is_empty()
        && value
            .split(',')
            .all(|v| PREFIXES.iter().any(|p| v.trim().starts_with(p)))
}

fn would_destroy(inv: &Inventory, stack: &Stack, c: &CustomResource, h: Handler) -> Vec<String> {
    let prop = |key: &str| c.properties.get(key).and_then(|v| resolve(stack, v));
    let cert = |arn: &str| {
        let mut out = vec![format!("certificate {arn}")];
        if let Some(found) = inv.out_of_band.certificates.iter().find(|x| x.arn == arn) {
            out[0] = format!("certificate {arn} ({})", found.domain_name);
            for v in &found.validation_records {
                let line = format!("validation record {} {}", v.record_type, v.name);
                if !out.contains(&line) {
                    out.push(line);
                }
            }
        }
        out
    };
    let pid = c.physical_id.clone().unwrap_or_default();
    match h {
        Handler::BucketCleaner => vec![format!(
            "every object version and delete marker in bucket {}",
            prop("BucketName").unwrap_or_else(|| "(unresolved)".into())
        )],
        Handler::DnsCertValidator | Handler::CertReplicator | Handler::WkldCertValidator
            if pid.starts_with("arn:") =>
        {
            cert(&pid)
        }
        Handler::CustomDomain | Handler::WkldCustomDomain => aliases(prop("Aliases"))
            .into_iter()
            .map(|a| format!("A-alias record {a}"))
            .collect(),
        Handler::DnsDelegation => vec![format!("NS delegation record {pid} in the app zone")],
        Handler::CustomDomainAppRunner => vec![format!(
            "App Runner domain association and CNAME {} with its validation CNAMEs",
            prop("CustomDomain").unwrap_or_default()
        )],
        Handler::EnvController => vec![format!(
            "an UpdateStack of env stack {} (see the env-controller cascade)",
            prop("EnvStack").unwrap_or_else(|| "(unresolved)".into())
        )],
        _ => Vec::new(),
    }
}

/// The aliases in a Copilot `Aliases` value: a JSON map of workload to aliases, or a list.
pub(crate) fn aliases(value: Option<String>) -> Vec<String> {
    let Some(text) = value.filter(|v| !v.is_empty()) else {
        return Vec::new();
    };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(map)) => map
            .values()
            .flat_map(|v| v.as_array().cloned().unwrap_or_default())
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Ok(serde_json::Value::Array(items)) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => text.split(',').map(|s| s.trim().to_string()).collect(),
    }
}

fn handler_verdicts(inv: &Inventory, stack: &Stack) -> Vec<HandlerVerdict> {
    let kind = stack.copilot.as_ref().map(|c| c.kind);
    stack
        .custom_resources
        .iter()
        .map(|c| match copilot::classify(kind, c) {
            Some(h) => {
                let facts = h.facts();
                HandlerVerdict {
                    logical_id: c.logical_id.clone(),
                    resource_type: c.resource_type.clone(),
                    handler: Some(h),
                    code: facts.file.to_string(),
                    destructive: Some(facts.destructive),
                    on_delete: facts.on_delete.to_string(),
                    would_destroy: if facts.destructive {
                        would_destroy(inv, stack, c, h)
                    } else {
                        Vec::new()
                    },
                }
            }
            None => HandlerVerdict {
                logical_id: c.logical_id.clone(),
                resource_type: c.resource_type.clone(),
                handler: None,
                code: c
                    .function
                    .as_ref()
                    .map_or(c.service_token.clone(), |f| f.name.clone()),
                destructive: None,
                on_delete: "unknown code: treat its Delete as destructive".into(),
                would_destroy: Vec::new(),
            },
        })
        .collect()
}

fn out_of_band(inv: &Inventory, owned: &BTreeSet<String>) -> Vec<ObjectVerdict> {
    let records = owned_record_names(inv);
    let mut verdicts = Vec::new();
    let mut validation: Vec<(String, String)> = Vec::new();
    for c in &inv.out_of_band.certificates {
        if owned.contains(&c.arn) {
            continue;
        }
        for v in &c.validation_records {
            validation.push((v.name.trim_end_matches('.').to_string(), c.arn.clone()));
        }
        verdicts.push(ObjectVerdict {
            kind: "certificate",
            id: c.arn.clone(),
            fate: Fate::Import,
            reason: format!(
                "made by a handler outside CloudFormation ({}): Terraform imports it so no delete can remove it",
                c.found_by
            ),
        });
    }
    // Load balancers of the stacks, by DNS name, for alias records pointing at them.
    let lb_names: BTreeSet<String> = inv
        .stacks
        .iter()
        .flat_map(|s| &s.resources)
        .filter_map(|r| match &r.live {
            LiveState::Described { calls } => calls
                .first()
                .and_then(|c| c.output.get("LoadBalancers"))
                .and_then(|lbs| {
                    crate::inventory::answer::list(Some(lbs))
                        .first()
                        .and_then(|lb| crate::inventory::answer::text(lb, "DNSName"))
                }),
            _ => None,
        })
        .map(|n| n.trim_end_matches('.').to_ascii_lowercase())
        .collect();
    let delegations: BTreeSet<String> = inv
        .stacks
        .iter()
        .flat_map(|s| &s.custom_resources)
        .filter(|c| c.resource_type == "Custom::DNSDelegationFunction")
        .filter_map(|c| c.physical_id.clone())
        .collect();
    for zone in &inv.out_of_band.hosted_zones {
        for r in &zone.records {
            let name = r.name.trim_end_matches('.');
            let apex = r.name == zone.name && (r.record_type == "SOA" || r.record_type == "NS");
            if apex || owned.contains(name) || records.contains(&name.to_ascii_lowercase()) {
                continue;
            }
            let id = match &r.set_identifier {
                Some(set) => format!("{}/{}/{}/{set}", zone.id, r.name, r.record_type),
                None => format!("{}/{}/{}", zone.id, r.name, r.record_type),
            };
            let (fate, reason) = if let Some((_, cert)) = validation
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
            {
                (
                    Fate::Import,
                    format!("a DNS validation record of certificate {cert}, made by its handler"),
                )
            } else if r.record_type == "NS" && delegations.contains(name) {
                (
                    Fate::Import,
                    "the NS delegation dns-delegation.js made for the environment".into(),
                )
            } else if r.alias_target.as_ref().is_some_and(|a| {
                lb_names.contains(&a.dns_name.trim_end_matches('.').to_ascii_lowercase())
            }) {
                (Fate::Import, "an alias record pointing at one of the stacks' load balancers, made by a custom-domain handler".into())
            } else {
                (
                    Fate::ExternalReference,
                    format!(
                        "in zone {}, not made by these stacks: left alone",
                        zone.name
                    ),
                )
            };
            verdicts.push(ObjectVerdict {
                kind: "record",
                id,
                fate,
                reason,
            });
        }
    }
    verdicts
}

/// What a plain DeleteStack of `stack` would do.
fn delete_effect(stack: &Stack, handlers: &[HandlerVerdict]) -> DeleteEffect {
    let mut effect = DeleteEffect {
        stack: stack.name.clone(),
        destroyed: Vec::new(),
        retained: Vec::new(),
        handlers: Vec::new(),
    };
    for r in &stack.resources {
        let Some(pid) = &r.physical_id else { continue };
        if r.status.starts_with("DELETE_") || is_custom(&r.resource_type) {
            continue;
        }
        let line = format!("{} ({}) {pid}", r.logical_id, r.resource_type);
        match r.deletion_policy.as_deref() {
            Some("Retain") | Some("RetainExceptOnCreate") => effect.retained.push(line),
            Some("Snapshot") => effect.destroyed.push(format!("{line}, after a snapshot")),
            _ => effect.destroyed.push(line),
        }
    }
    for h in handlers {
        let retained = stack
            .resource(&h.logical_id)
            .and_then(|r| r.deletion_policy.as_deref())
            .is_some_and(|p| p.starts_with("Retain"));
        if retained || h.destructive == Some(false) {
            continue;
        }
        let what = if h.would_destroy.is_empty() {
            h.on_delete.clone()
        } else {
            h.would_destroy.join("; ")
        };
        effect
            .handlers
            .push(format!("{} ({}) Delete: {what}", h.logical_id, h.code));
    }
    effect
}

/// Judges an inventory.
pub fn assess(inv: &Inventory) -> Assessment {
    // Physical ids of every stack resource: an object with one of these is owned, not out
    // of band.
    let owned: BTreeSet<String> = inv
        .stacks
        .iter()
        .flat_map(|s| &s.resources)
        .filter(|r| !is_custom(&r.resource_type))
        .filter_map(|r| r.physical_id.clone())
        .collect();
    let mut stacks = Vec::new();
    let mut delete_stack = Vec::new();
    for stack in &inv.stacks {
        let handlers = stack_handlers(stack);
        let (disposition, why) = disposition(inv, stack, &handlers);
        let support = handler_support(stack);
        let mut resources: Vec<ResourceVerdict> = stack
            .resources
            .iter()
            .map(|r| {
                let (fate, reason) = fate_of(stack, r, disposition, &why, &support);
                ResourceVerdict {
                    logical_id: r.logical_id.clone(),
                    resource_type: r.resource_type.clone(),
                    physical_id: r.physical_id.clone(),
                    fate,
                    reason,
                }
            })
            .collect();
        // Declared but never listed: CloudFormation lists no resource whose condition was
        // false at the last deploy.
        let doc = template_of(stack);
        for (logical, declared) in doc
            .get("Resources")
            .and_then(|r| r.as_object())
            .into_iter()
            .flatten()
        {
            if stack.resource(logical).is_none() {
                let condition = declared.get("Condition").and_then(|c| c.as_str());
                resources.push(ResourceVerdict {
                    logical_id: logical.clone(),
                    resource_type: declared
                        .get("Type")
                        .and_then(|t| t.as_str())
                        .unwrap_or_default()
                        .to_string(),
                    physical_id: None,
                    fate: Fate::NotCreated,
                    reason: match condition {
                        Some(c) => format!("its condition {c} was false at the last deploy"),
                        None => "declared but not in the stack".into(),
                    },
                });
            }
        }
        let references = stack
            .parameters
            .iter()
            .filter(|p| !p.no_echo && names_a_resource(&p.value))
            .map(|p| ReferenceVerdict {
                parameter: p.key.clone(),
                value: p.value.clone(),
                fate: Fate::ExternalReference,
                reason: "the stack is given an existing resource: Terraform refers to it (a data source or a literal), never imports it".into(),
            })
            .collect();
        let handler_verdicts = handler_verdicts(inv, stack);
        delete_stack.push(delete_effect(stack, &handler_verdicts));
        stacks.push(StackVerdict {
            name: stack.name.clone(),
            copilot_kind: stack.copilot.as_ref().map(|c| c.kind),
            disposition,
            reason: why,
            resources,
            handlers: handler_verdicts,
            references,
        });
    }
    Assessment {
        stacks,
        out_of_band: out_of_band(inv, &owned),
        cascades: cascade::cascades(inv),
        delete_stack,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::take::copilot_of;
    use serde_json::json;

    fn resource(logical: &str, kind: &str, pid: Option<&str>) -> Resource {
        Resource {
            logical_id: logical.into(),
            resource_type: kind.into(),
            physical_id: pid.map(str::to_string),
            status: "CREATE_COMPLETE".into(),
            status_reason: None,
            last_updated_at: None,
            deletion_policy: None,
            update_replace_policy: None,
            live: LiveState::Described { calls: vec![] },
            import_attributes: Default::default(),
        }
    }

    fn stack(name: &str, tags: &[(&str, &str)], template: &str, resources: Vec<Resource>) -> Stack {
        let tags: std::collections::BTreeMap<String, String> = tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Stack {
            name: name.into(),
            id: format!("arn:aws:cloudformation:us-east-1:111122223333:stack/{name}/1"),
            status: "CREATE_COMPLETE".into(),
            status_reason: None,
            description: None,
            created_at: None,
            last_updated_at: None,
            copilot: copilot_of(&tags),
            tags,
            parameters: vec![],
            outputs: vec![],
            capabilities: vec![],
            role_arn: None,
            termination_protection: false,
            template: template.into(),
            parent_id: None,
            root_id: None,
            resources,
            custom_resources: vec![],
        }
    }

    fn inventory(stacks: Vec<Stack>) -> Inventory {
        Inventory {
            format_version: FORMAT_VERSION,
            account: "111122223333".into(),
            region: "us-east-1".into(),
            taken_at: "2026-12-04T09:00:00Z".into(),
            endpoint: None,
            taken_by: "test".into(),
            selection: Selection::Stacks { names: vec![] },
            stacks,
            out_of_band: OutOfBand::default(),
            content_sha256: String::new(),
        }
    }

    fn fates(a: &Assessment, stack: usize) -> Vec<(String, Fate)> {
        a.stacks[stack]
            .resources
            .iter()
            .map(|r| (r.logical_id.clone(), r.fate))
            .collect()
    }

    const TEMPLATE: &str = r#"
Conditions:
  Never: !Equals [a, b]
Resources:
  Queue: {Type: AWS::SQS::Queue}
  Gone: {Type: AWS::SNS::Topic}
  Child: {Type: AWS::CloudFormation::Stack, Properties: {TemplateURL: x}}
  Handler: {Type: AWS::Lambda::Function, Properties: {Role: !GetAtt HandlerRole.Arn}}
  HandlerRole: {Type: AWS::IAM::Role}
  HandlerPolicy: {Type: AWS::IAM::Policy, Properties: {Roles: [!Ref HandlerRole], PolicyName: p}}
  QueuePolicy: {Type: AWS::IAM::Policy, Properties: {Roles: [!Ref HandlerRole], PolicyName: !GetAtt Queue.Arn}}
  Action: {Type: Custom::BucketCleanerFunction, Properties: {ServiceToken: !GetAtt Handler.Arn, BucketName: logs}}
  Maybe: {Type: AWS::SQS::Queue, Condition: Never}
"#;

    #[test]
    fn each_resource_gets_its_fate_with_handlers_and_their_support_left_for_cleanup() {
        let mut gone = resource("Gone", "AWS::SNS::Topic", Some("arn:topic"));
        gone.live = LiveState::Gone {
            operation: "GetTopicAttributes".into(),
            error_code: "NotFound".into(),
            message: None,
        };
        let mut s = stack(
            "app-test",
            &[
                ("copilot-application", "app"),
                ("copilot-environment", "test"),
            ],
            TEMPLATE,
            vec![
                resource("Queue", "AWS::SQS::Queue", Some("https://q")),
                gone,
                resource(
                    "Child",
                    "AWS::CloudFormation::Stack",
                    Some("arn:aws:cloudformation:us-east-1:1:stack/app-test-Child-1/2"),
                ),
                resource("Handler", "AWS::Lambda::Function", Some("app-test-Handler")),
                resource(
                    "HandlerRole",
                    "AWS::IAM::Role",
                    Some("app-test-HandlerRole"),
                ),
                resource("HandlerPolicy", "AWS::IAM::Policy", Some("app-t-Hand-1")),
                resource("QueuePolicy", "AWS::IAM::Policy", Some("app-t-Queu-1")),
                resource(
                    "Action",
                    "Custom::BucketCleanerFunction",
                    Some("bucket-cleaner-Action"),
                ),
            ],
        );
        s.parameters.push(StackParameter {
            key: "VpcId".into(),
            value: "vpc-123".into(),
            resolved_value: None,
            no_echo: false,
        });
        s.custom_resources.push(CustomResource {
            logical_id: "Action".into(),
            resource_type: "Custom::BucketCleanerFunction".into(),
            physical_id: Some("bucket-cleaner-Action".into()),
            properties: json!({"ServiceToken": {"Fn::GetAtt": ["Handler", "Arn"]}, "BucketName": "logs"}),
            service_token: "arn:aws:lambda:us-east-1:111122223333:function:app-test-Handler".into(),
            function: Some(HandlerFunction {
                logical_id: Some("Handler".into()),
                name: "app-test-Handler".into(),
                arn: "arn:aws:lambda:us-east-1:111122223333:function:app-test-Handler".into(),
                runtime: Some("nodejs20.x".into()),
                handler: Some("index.handler".into()),
                role: Some("arn:aws:iam::111122223333:role/app-test-HandlerRole".into()),
                timeout: None,
                code: CodeLocation::default(),
            }),
        });
        let a = assess(&inventory(vec![s]));
        assert_eq!(
            fates(&a, 0),
            vec![
                ("Queue".into(), Fate::Import),
                ("Gone".into(), Fate::NotCreated),
                ("Child".into(), Fate::NestedWrapper),
                ("Handler".into(), Fate::ManualCleanup),
                ("HandlerRole".into(), Fate::ManualCleanup),
                ("HandlerPolicy".into(), Fate::ManualCleanup),
                ("QueuePolicy".into(), Fate::Import),
                ("Action".into(), Fate::ManualCleanup),
                ("Maybe".into(), Fate::NotCreated),
            ]
        );
        assert_eq!(a.stacks[0].disposition, Disposition::HandOff);
        assert_eq!(a.stacks[0].references[0].fate, Fate::ExternalReference);
        let h = &a.stacks[0].handlers[0];
        assert_eq!(
            (h.handler, h.destructive),
            (Some(Handler::BucketCleaner), Some(true))
        );
        assert_eq!(
            h.would_destroy,
            vec!["every object version and delete marker in bucket logs"]
        );
        // A plain DeleteStack runs the cleaner and deletes the queue.
        let d = &a.delete_stack[0];
        assert!(
            d.handlers[0].starts_with("Action (bucket-cleaner.js) Delete: every object version")
        );
        assert!(
            d.destroyed
                .iter()
                .any(|l| l.starts_with("Queue (AWS::SQS::Queue)"))
        );
    }

    #[test]
    fn the_app_stack_is_kept_and_a_cdn_environment_is_blocked() {
        let app = stack(
            "app-infrastructure-roles",
            &[("copilot-application", "app")],
            "Resources:\n  Zone: {Type: AWS::Route53::HostedZone}\n",
            vec![resource("Zone", "AWS::Route53::HostedZone", Some("Z123"))],
        );
        let mut env = stack(
            "app-prod",
            &[
                ("copilot-application", "app"),
                ("copilot-environment", "prod"),
            ],
            "Resources:\n  Vpc: {Type: AWS::EC2::VPC}\n  CertificateReplicator: {Type: Custom::CertificateReplicatorFunction}\n",
            vec![
                resource("Vpc", "AWS::EC2::VPC", Some("vpc-1")),
                resource(
                    "CertificateReplicator",
                    "Custom::CertificateReplicatorFunction",
                    Some("arn:aws:acm:us-east-1:1:certificate/x"),
                ),
            ],
        );
        env.custom_resources.push(CustomResource {
            logical_id: "CertificateReplicator".into(),
            resource_type: "Custom::CertificateReplicatorFunction".into(),
            physical_id: Some("arn:aws:acm:us-east-1:1:certificate/x".into()),
            properties: json!({}),
            service_token: String::new(),
            function: None,
        });
        let a = assess(&inventory(vec![app, env]));
        assert_eq!(a.stacks[0].disposition, Disposition::Keep);
        assert_eq!(
            fates(&a, 0),
            vec![("Zone".into(), Fate::RetainUnderExistingOwner)]
        );
        assert_eq!(a.stacks[1].disposition, Disposition::Blocked);
        assert!(a.stacks[1].reason.contains("CDN (CloudFront)"));
        assert!(fates(&a, 1).iter().all(|(_, f)| *f == Fate::Blocked));
    }

    #[test]
    fn references_resolve_subs_and_joins_against_the_stack() {
        let mut s = stack("web", &[], "Resources: {}\n", vec![]);
        s.parameters.push(StackParameter {
            key: "Env".into(),
            value: "test".into(),
            resolved_value: None,
            no_echo: false,
        });
        let sub = json!({"Fn::Sub": "${AWS::StackName}-${Env}.${AWS::Region}"});
        assert_eq!(resolve(&s, &sub).as_deref(), Some("web-test.us-east-1"));
        let join = json!({"Fn::Join": [".", [{"Ref": "Env"}, "example.com"]]});
        assert_eq!(resolve(&s, &join).as_deref(), Some("test.example.com"));
        assert_eq!(resolve(&s, &json!({"Fn::GetAtt": ["X", "Y"]})), None);
    }
}
