//! Import: adopts existing resources into a stack (a new one or an existing one), recording
//! for each the complete attribute map its provider's [`crate::Provider::read`] returns (what
//! Ref and Fn::GetAtt need, built by the same mapping create uses) and the live properties as
//! its observed properties.
//!
//! Rules, as CloudFormation's resource import: the template is the stack's template after the
//! import, so every resource it declares is either already in the stack or imported now; a
//! stack resource the template no longer declares is refused (import only adds); a resource
//! that does not exist is refused with AWS's wording. The recorded properties are the
//! template's (the intent): where the live resource differs, `cumulo drift` shows it.

use super::common::*;
use crate::api::{Caller, Parameter};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::provider::ProviderContext;
use crate::resolve::{LiveResolver, hash_properties, resolve_dynamic, value_text};
use crate::state::{EventRecord, OpRecord, ResourceRecord, StackRecord, StoredOutput, now_ms};
use crate::status::StackStatus;
use std::sync::Arc;

/// Input of [`Engine::import_resources`].
#[derive(Debug, Clone, Default)]
pub struct ImportInput {
    pub stack_name: String,
    /// The stack's template after the import (any size: it never crosses the API).
    pub template: String,
    pub parameters: Vec<Parameter>,
    /// Logical id → physical id of each resource to adopt.
    pub resources: Vec<(String, String)>,
}

pub async fn import_resources(
    engine: &Engine,
    caller: &Caller,
    input: ImportInput,
) -> Result<String, EngineError> {
    check_stack_name(&input.stack_name)?;
    if input.resources.is_empty() {
        return Err(EngineError::validation(
            "ResourcesToImport must name at least one resource (--resource Logical=PhysicalId)",
        ));
    }
    let root = parse(&input.template)?;
    let existing: Option<StackRecord> = {
        let st = engine.inner.lock();
        match find(&st, caller, &input.stack_name) {
            Some(s)
                if !matches!(
                    s.status,
                    StackStatus::DELETE_COMPLETE | StackStatus::ROLLBACK_COMPLETE
                ) =>
            {
                // A new stack's IMPORT change set made its REVIEW_IN_PROGRESS placeholder.
                if !s.status.updatable() && s.status != StackStatus::REVIEW_IN_PROGRESS {
                    return Err(cannot_update(s));
                }
                Some(s.clone())
            }
            _ => None,
        }
    };
    let given = given_params(
        &input.parameters,
        existing.as_ref().map(|s| s.parameters.as_slice()),
    )?;
    let stack_id = existing
        .as_ref()
        .map(|s| s.stack_id.clone())
        .unwrap_or_else(|| new_stack_id(&caller.region, &caller.account_id, &input.stack_name));
    let prepared = prepare_for(
        engine,
        &caller.region,
        &caller.account_id,
        &stack_id,
        &input.stack_name,
        &root,
        &given,
    )?;
    for (logical, _) in &input.resources {
        if !prepared.live.contains(logical) {
            return Err(EngineError::validation(format!(
                "Resource {logical} to import is not declared in the template."
            )));
        }
        if existing
            .as_ref()
            .is_some_and(|s| s.resources.contains_key(logical))
        {
            return Err(EngineError::validation(format!(
                "Resource {logical} is already in the stack: only resources new to the stack can be imported."
            )));
        }
    }
    let imported = |l: &String| input.resources.iter().any(|(x, _)| x == l);
    for logical in &prepared.live {
        let in_stack = existing
            .as_ref()
            .is_some_and(|s| s.resources.contains_key(logical));
        if !in_stack && !imported(logical) {
            return Err(EngineError::validation(format!(
                "cumulo: {logical} is neither in the stack nor imported: an import only adopts resources (deploy the rest afterwards)."
            )));
        }
    }
    if let Some(s) = &existing
        && let Some(gone) = s.resources.keys().find(|l| !prepared.live.contains(*l))
    {
        return Err(EngineError::validation(format!(
            "cumulo: {gone} is in the stack but not in the template: an import cannot remove resources."
        )));
    }
    let token = caller.request_id.clone();
    let mut stack = existing.clone().unwrap_or_else(|| {
        StackRecord::empty(
            &stack_id,
            &input.stack_name,
            &caller.region,
            &caller.account_id,
            StackStatus::IMPORT_IN_PROGRESS,
        )
    });
    // Every resource is read before anything is recorded: a failed read changes nothing.
    let mut records = Vec::new();
    for logical in &prepared.order {
        let Some((_, physical)) = input.resources.iter().find(|(l, _)| l == logical) else {
            continue;
        };
        let resolved = {
            let st = engine.inner.lock();
            let resolver = LiveResolver::new(&st, &stack);
            prepared
                .resolve_resource(logical, &resolver)
                .map_err(|d| EngineError::validation(d.message))?
        };
        let provider = engine
            .inner
            .registry
            .get(&resolved.resource_type)
            .cloned()
            .ok_or_else(|| {
                EngineError::validation(format!(
                    "cumulo: {} cannot be imported: it is not emulated",
                    resolved.resource_type
                ))
            })?;
        let ctx = ProviderContext {
            region: caller.region.clone(),
            account_id: caller.account_id.clone(),
            stack_name: stack.stack_name.clone(),
            stack_id: stack_id.clone(),
            logical_id: logical.clone(),
            resource_type: resolved.resource_type.clone(),
            client_request_token: token.clone(),
            stack_tags: stack.tags.clone(),
            host: caller.host.clone(),
            name_token: String::new(),
        };
        let actual = resolve_dynamic(
            engine.inner.world.as_ref(),
            &caller.region,
            &resolved.properties,
        )
        .await
        .map_err(EngineError::validation)?;
        let observed = provider
            .read(&ctx, physical, &actual)
            .await
            .map_err(|e| EngineError::validation(e.to_string()))?
            .ok_or_else(|| {
                EngineError::validation(format!(
                    "Resources [{logical}] do not exist: {} with identifier {physical} was not found.",
                    resolved.resource_type
                ))
            })?;
        let rec = ResourceRecord {
            logical_id: logical.clone(),
            resource_type: resolved.resource_type.clone(),
            physical_id: Some(physical.clone()),
            status: "IMPORT_COMPLETE".into(),
            status_reason: None,
            hash: hash_properties(&resolved.properties),
            properties: resolved.properties.clone().into(),
            attributes: observed.attributes.into(),
            updated: now_ms(),
            deletion_policy: resolved.deletion_policy.clone(),
            update_replace_policy: resolved.update_replace_policy.clone(),
            metadata: resolved.metadata.clone().map(Arc::new),
            depends_on: resolved.depends_on.clone(),
            stub: false,
            replaced: None,
            observed: Some(Arc::new(super::drift::observation(
                &resolved.properties,
                observed.properties,
            ))),
            pending: None,
            signals: Vec::new(),
            secret_attributes: Vec::new(),
        };
        // Later resources may reference this one.
        stack.resources.insert(logical.clone(), rec.clone());
        records.push(rec);
    }
    let outputs: Vec<StoredOutput> = {
        let st = engine.inner.lock();
        let resolver = LiveResolver::new(&st, &stack);
        prepared
            .resolve_outputs(&resolver)
            .map_err(first_error)?
            .into_iter()
            .map(|o| StoredOutput {
                key: o.name,
                value: value_text(&o.value),
                description: o.description,
                export_name: o.export_name,
            })
            .collect()
    };
    let mut st = engine.inner.lock();
    // An operation may have started on the stack while the resources were read.
    if existing.is_some()
        && st
            .stacks
            .get(&stack_id)
            .is_none_or(|s| s.status.in_progress())
    {
        return Err(EngineError::validation(format!(
            "Stack {} changed while the resources were read; import again.",
            input.stack_name
        )));
    }
    if existing.is_none()
        && st
            .names
            .contains_key(&(caller.region.clone(), input.stack_name.clone()))
    {
        return Err(EngineError::already_exists(format!(
            "Stack [{}] already exists",
            input.stack_name
        )));
    }
    stack.template_body = input.template.clone();
    stack.original_body = None;
    stack.description = prepared.template.description.clone();
    stack.parameters = stored_params(&prepared);
    stack.outputs = outputs;
    stack.status = StackStatus::IMPORT_COMPLETE;
    stack.status_reason = None;
    if existing
        .as_ref()
        .is_some_and(|s| s.status != StackStatus::REVIEW_IN_PROGRESS)
    {
        stack.updated = Some(now_ms());
    }
    stack.op = OpRecord {
        token: token.clone(),
        kind: "Import".into(),
        host: caller.host.clone(),
        ..Default::default()
    };
    let mut seq = st.next_seq;
    let mut event = |logical: &str, physical: Option<String>, rtype: &str, status: &str| {
        let e = EventRecord {
            seq,
            event_id: uuid::Uuid::new_v4().to_string(),
            logical_id: logical.to_string(),
            physical_id: physical,
            resource_type: rtype.to_string(),
            timestamp: now_ms(),
            status: status.to_string(),
            reason: None,
            properties: None,
            token: token.clone(),
        };
        seq += 1;
        e
    };
    let stack_type = "AWS::CloudFormation::Stack";
    let (name, sid) = (stack.stack_name.clone(), stack.stack_id.clone());
    stack.events.push(event(
        &name,
        Some(sid.clone()),
        stack_type,
        "IMPORT_IN_PROGRESS",
    ));
    for r in &records {
        for status in ["IMPORT_IN_PROGRESS", "IMPORT_COMPLETE"] {
            let e = event(
                &r.logical_id,
                r.physical_id.clone(),
                &r.resource_type,
                status,
            );
            stack.events.push(e);
        }
    }
    stack
        .events
        .push(event(&name, Some(sid), stack_type, "IMPORT_COMPLETE"));
    st.next_seq = seq;
    engine.inner.save_stack_full(&stack)?;
    st.names.insert(
        (caller.region.clone(), stack.stack_name.clone()),
        stack_id.clone(),
    );
    st.stacks.insert(stack_id.clone(), stack);
    Ok(stack_id)
}
