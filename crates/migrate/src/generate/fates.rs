//! What `generate` does with each resource, decided from the type table and the inventory:
//! imported into Terraform, cleaned up by hand after the stack is gone (custom-resource
//! handles and the function, role, log group and attachments that exist only to serve them),
//! or nothing to do. The report's verdict (`cumulo migrate report`) is laid over it, so that
//! what the report says is not imported is not imported here either.

use crate::inventory::model::{LiveState, Stack};
pub use crate::report::Fate;
use crate::report::StackVerdict;
use crate::terraform::resolve::references;
use crate::terraform::table::{To, lookup};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Resource policies whose PolicyDocument may name a handler's role as a principal (CDK's
/// bucket policy grants its auto-delete provider's role). Such a role is imported with the
/// policy rather than deleted by hand: AWS would leave the policy naming a principal that is
/// gone.
pub const RESOURCE_POLICIES: &[&str] = &[
    "AWS::S3::BucketPolicy",
    "AWS::SQS::QueuePolicy",
    "AWS::SNS::TopicPolicy",
];

/// The fate of every resource of a stack, with the reason.
pub fn classify(
    stack: &Stack,
    resources: &serde_json::Map<String, Value>,
    report: Option<&StackVerdict>,
) -> BTreeMap<String, (Fate, String)> {
    let mut fates = BTreeMap::new();
    let mut handlers = BTreeSet::new();
    for r in &stack.resources {
        let fate = match lookup(&r.resource_type) {
            _ if r.physical_id.is_none() => (
                Fate::NotCreated,
                "no physical id: never created".to_string(),
            ),
            _ if matches!(r.live, LiveState::Gone { .. }) => (
                Fate::NotCreated,
                "its service says it no longer exists".to_string(),
            ),
            Some(To::Terraform(t)) => (
                Fate::Import,
                format!(
                    "{} (import id: {})",
                    t.tf,
                    crate::terraform::table::doc_url(t.tf)
                ),
            ),
            Some(To::NestedStack) => (
                Fate::NestedWrapper,
                "its resources are in the nested stack's own file".into(),
            ),
            Some(To::CustomResource) => {
                let token = resources
                    .get(&r.logical_id)
                    .and_then(|d| d.get("Properties"))
                    .and_then(|p| p.get("ServiceToken"));
                if let Some(token) = token {
                    let mut refs = Vec::new();
                    references(token, &mut refs);
                    handlers.extend(refs);
                }
                (
                    Fate::ManualCleanup,
                    "custom resource handle: retained so its Delete handler never runs, then removed from the stack by deleting it"
                        .into(),
                )
            }
            Some(To::CloudFormationOnly(why)) => (Fate::NotCreated, why.to_string()),
            Some(To::NoEquivalent(why)) => (Fate::ManualCleanup, why.to_string()),
            None => (
                Fate::Blocked,
                format!("{} has no Terraform mapping in cumulo", r.resource_type),
            ),
        };
        fates.insert(r.logical_id.clone(), fate);
    }
    // The handler functions, their roles, and what exists only for them.
    let mut serving: BTreeSet<String> = handlers
        .into_iter()
        .filter(|h| {
            stack
                .resource(h)
                .is_some_and(|r| r.resource_type == "AWS::Lambda::Function")
        })
        .collect();
    for f in serving.clone() {
        let role = resources
            .get(&f)
            .and_then(|d| d.get("Properties"))
            .and_then(|p| p.get("Role"));
        if let Some(role) = role {
            let mut refs = Vec::new();
            references(role, &mut refs);
            serving.extend(refs.into_iter().filter(|r| {
                stack
                    .resource(r)
                    .is_some_and(|r| r.resource_type == "AWS::IAM::Role")
            }));
        }
    }
    // Attachments whose every reference to a resource of the stack is one of those: an inline
    // policy of a handler's role, a permission to invoke a handler, a handler's log group.
    loop {
        let mut grew = false;
        for r in &stack.resources {
            if serving.contains(&r.logical_id)
                || !matches!(
                    r.resource_type.as_str(),
                    "AWS::IAM::Policy" | "AWS::Lambda::Permission" | "AWS::Logs::LogGroup"
                )
            {
                continue;
            }
            let mut refs = Vec::new();
            if let Some(props) = resources
                .get(&r.logical_id)
                .and_then(|d| d.get("Properties"))
            {
                references(props, &mut refs);
            }
            let local: Vec<&String> = refs
                .iter()
                .filter(|x| stack.resource(x).is_some())
                .collect();
            if !local.is_empty() && local.iter().all(|x| serving.contains(*x)) {
                serving.insert(r.logical_id.clone());
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    // A role a resource policy names as a principal stays imported with the policy (see
    // [`RESOURCE_POLICIES`]).
    let mut used_elsewhere = Vec::new();
    for r in &stack.resources {
        if !RESOURCE_POLICIES.contains(&r.resource_type.as_str()) {
            continue;
        }
        if let Some(document) = resources
            .get(&r.logical_id)
            .and_then(|d| d.get("Properties"))
            .and_then(|p| p.get("PolicyDocument"))
        {
            references(document, &mut used_elsewhere);
        }
    }
    serving.retain(|logical| !used_elsewhere.contains(logical));
    for logical in serving {
        if let Some(f) = fates.get_mut(&logical).filter(|f| f.0 == Fate::Import) {
            *f = (
                Fate::ManualCleanup,
                "serves a custom resource handler only: retained, then deleted by hand once the stacks are gone".into(),
            );
        }
    }
    // What the report says is not to be imported is not imported.
    for v in report.map(|r| r.resources.as_slice()).unwrap_or_default() {
        let overrides = v.fate != Fate::Import && v.fate != Fate::Blocked;
        if let Some(f) = fates
            .get_mut(&v.logical_id)
            .filter(|f| overrides && f.0 == Fate::Import)
        {
            *f = (v.fate, v.reason.clone());
        }
    }
    fates
}
