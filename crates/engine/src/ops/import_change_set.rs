//! IMPORT change sets (`cdk import`, the console's "Import resources into stack"): CreateChangeSet
//! with `ChangeSetType: IMPORT` and ResourcesToImport, ExecuteChangeSet of such a change set.
//! The change set is built by the ordinary CreateChangeSet (template, parameters, the
//! REVIEW_IN_PROGRESS stack of a new stack) and then made an import: its changes are the
//! `Import` actions. Executing it is direct deploy's import ([`super::import`]), so both adopt a
//! resource the same way.
//!
//! AWS's checks, made before anything is recorded: each resource is declared in the template
//! with the type given and a DeletionPolicy; its ResourceIdentifier names the type's primary
//! identifier; it exists (read back through its provider); no stack holds it already; and the
//! template changes nothing else.

use super::common::*;
use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::provider::ProviderContext;
use crate::state::ChangeSetRecord;
use crate::status::StackStatus;
use cumulo_template::Value;

/// The physical id an import's ResourceIdentifier names: the primary identifier's values in the
/// schema's order, joined by `|` when there are several.
fn physical_id(r: &ResourceToImport) -> Result<String, EngineError> {
    let keys: Vec<String> = crate::schema::schema(&r.resource_type)
        .map(|s| s.primary_identifier.clone())
        .filter(|k| !k.is_empty())
        .unwrap_or_else(|| {
            r.resource_identifier
                .iter()
                .map(|(k, _)| k.clone())
                .collect()
        });
    let values: Option<Vec<&str>> = keys
        .iter()
        .map(|k| {
            r.resource_identifier
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        })
        .collect();
    match values {
        Some(v) if !v.is_empty() && r.resource_identifier.len() == keys.len() => Ok(v.join("|")),
        _ => Err(EngineError::validation(format!(
            "Invalid ResourceIdentifier for resource [{}]: {} is identified by [{}]",
            r.logical_resource_id,
            r.resource_type,
            keys.join(", ")
        ))),
    }
}

fn listed(logical: &[&str]) -> String {
    logical.join(", ")
}

/// The outputs one template adds, removes or changes against another, by name.
fn changed_outputs<'a>(old: &'a Value, new: &'a Value) -> Vec<&'a str> {
    let outputs = |t: &'a Value| -> Vec<(&'a str, serde_json::Value)> {
        t.get("Outputs")
            .and_then(Value::as_object)
            .map(|o| o.iter().map(|(k, v)| (k.as_str(), v.to_json())).collect())
            .unwrap_or_default()
    };
    let (before, after) = (outputs(old), outputs(new));
    let mut changed: Vec<&str> = after
        .iter()
        .filter(|(k, v)| !before.iter().any(|(b, bv)| b == k && bv == v))
        .map(|(k, _)| *k)
        .chain(
            before
                .iter()
                .filter(|(k, _)| !after.iter().any(|(a, _)| a == k))
                .map(|(k, _)| *k),
        )
        .collect();
    changed.sort_unstable();
    changed
}

pub async fn create(
    engine: &Engine,
    caller: &Caller,
    mut input: CreateChangeSetInput,
) -> Result<CreateChangeSetOutput, EngineError> {
    if input.change_set_type.as_deref() != Some("IMPORT") {
        return Err(EngineError::validation(
            "ResourcesToImport can only be specified with ChangeSetType IMPORT",
        ));
    }
    if input.resources_to_import.is_empty() {
        return Err(EngineError::validation(
            "ResourcesToImport must be specified for a change set of type IMPORT",
        ));
    }
    let text = if input.use_previous_template {
        None
    } else {
        Some(
            template_text(
                engine,
                caller,
                input.template_body.as_deref(),
                input.template_url.as_deref(),
            )
            .await?,
        )
    };
    let existing = {
        let st = engine.inner.lock();
        find(&st, caller, &input.stack_name)
            .filter(|s| {
                !matches!(
                    s.status,
                    StackStatus::DELETE_COMPLETE | StackStatus::REVIEW_IN_PROGRESS
                )
            })
            .cloned()
    };
    let text = match (text, &existing) {
        (Some(t), _) => t,
        (None, Some(s)) => s.template_body.clone(),
        (None, None) => {
            return Err(EngineError::validation(
                "UsePreviousTemplate can only be used with an existing stack",
            ));
        }
    };
    let root = parse(&text)?;
    let imports = input.resources_to_import.clone();
    let mut physical = Vec::new();
    let mut no_policy = Vec::new();
    for r in &imports {
        let declared = root
            .get("Resources")
            .and_then(|rs| rs.get(&r.logical_resource_id));
        let Some(declared) = declared else {
            return Err(EngineError::validation(format!(
                "Resource {} to import is not declared in the template.",
                r.logical_resource_id
            )));
        };
        let t = declared.get("Type").and_then(Value::as_str).unwrap_or("");
        if t != r.resource_type {
            return Err(EngineError::validation(format!(
                "The resource type {} of resource [{}] to import does not match the template's {t}",
                r.resource_type, r.logical_resource_id
            )));
        }
        if declared.get("DeletionPolicy").is_none() {
            no_policy.push(r.logical_resource_id.as_str());
        }
        physical.push(physical_id(r)?);
    }
    if !no_policy.is_empty() {
        return Err(EngineError::validation(format!(
            "The following resources to import [{}] must have DeletionPolicy attribute specified in the template.",
            listed(&no_policy)
        )));
    }
    if let Some(stack) = &existing {
        let live = parse(&stack.template_body)?;
        let changed = changed_outputs(&live, &root);
        if !changed.is_empty() {
            // cumulo's own wording, after the resources' refusal below: AWS's message for an
            // import that also changes Outputs is in neither its documentation nor the
            // recordings.
            return Err(EngineError::validation(format!(
                "You have modified outputs [{}] in your template. Outputs cannot be added, modified or removed during import operations.",
                listed(&changed)
            )));
        }
    }
    {
        let st = engine.inner.lock();
        let held: Vec<&str> = imports
            .iter()
            .zip(&physical)
            .filter(|(r, id)| {
                st.stacks.values().any(|s| {
                    s.status != StackStatus::DELETE_COMPLETE
                        && s.resources.values().any(|rec| {
                            rec.resource_type == r.resource_type
                                && rec.physical_id.as_deref() == Some(id.as_str())
                        })
                })
            })
            .map(|(r, _)| r.logical_resource_id.as_str())
            .collect();
        if !held.is_empty() {
            return Err(EngineError::validation(format!(
                "Resources [{}] passed in ResourceToImport are already in a stack and cannot be imported.",
                listed(&held)
            )));
        }
    }
    let mut missing = Vec::new();
    for (r, id) in imports.iter().zip(&physical) {
        let provider = engine
            .inner
            .registry
            .get(&r.resource_type)
            .cloned()
            .ok_or_else(|| {
                EngineError::validation(format!(
                    "cumulo: {} cannot be imported: it is not emulated",
                    r.resource_type
                ))
            })?;
        let ctx = ProviderContext {
            region: caller.region.clone(),
            account_id: caller.account_id.clone(),
            stack_name: input.stack_name.clone(),
            stack_id: String::new(),
            logical_id: r.logical_resource_id.clone(),
            resource_type: r.resource_type.clone(),
            client_request_token: caller.request_id.clone(),
            stack_tags: Vec::new(),
            host: caller.host.clone(),
            name_token: String::new(),
        };
        match provider.read(&ctx, id, &serde_json::json!({})).await {
            Ok(Some(_)) => {}
            Ok(None) | Err(crate::ProviderError::NotFound(_)) => {
                missing.push(r.logical_resource_id.as_str())
            }
            Err(e) => return Err(EngineError::validation(e.to_string())),
        }
    }
    if !missing.is_empty() {
        return Err(EngineError::validation(format!(
            "Resources [{}] to import do not exist.",
            listed(&missing)
        )));
    }
    // The ordinary change set (a CREATE one for a new stack), made an import below.
    input.change_set_type = Some(
        if existing.is_some() {
            "UPDATE"
        } else {
            "CREATE"
        }
        .into(),
    );
    input.resources_to_import = Vec::new();
    input.template_body = Some(text);
    input.template_url = None;
    input.use_previous_template = false;
    let out = super::changeset::create_change_set(engine, caller, input).await?;
    let mut st = engine.inner.lock();
    let Some(cs) = st.change_sets.get_mut(&out.id) else {
        return Ok(out);
    };
    let imported = |l: &str| imports.iter().any(|r| r.logical_resource_id == l);
    let others: Vec<&str> = cs
        .changes
        .iter()
        .filter(|c| !(c.action == "Add" && imported(&c.logical_resource_id)))
        .map(|c| c.logical_resource_id.as_str())
        .collect();
    if !others.is_empty() {
        let err = EngineError::validation(format!(
            "You have modified resources [{}] in your template that are not being imported. Update, create or delete operations cannot be executed during import operations.",
            listed(&others)
        ));
        engine.inner.remove_change_set(&out.id)?;
        st.change_sets.shift_remove(&out.id);
        return Err(err);
    }
    cs.change_set_type = "IMPORT".into();
    cs.execution_status = "AVAILABLE".into();
    cs.status = "CREATE_COMPLETE".into();
    cs.status_reason = None;
    cs.changes = imports
        .iter()
        .zip(physical)
        .map(|(r, id)| ResourceChange {
            action: "Import".into(),
            logical_resource_id: r.logical_resource_id.clone(),
            physical_resource_id: Some(id),
            resource_type: r.resource_type.clone(),
            replacement: None,
            scope: Vec::new(),
            ..Default::default()
        })
        .collect();
    engine.inner.save_change_set(cs)?;
    Ok(out)
}

/// Executes an IMPORT change set: the import runs before ExecuteChangeSet answers.
pub async fn execute(
    engine: &Engine,
    caller: &Caller,
    cs: &ChangeSetRecord,
) -> Result<(), EngineError> {
    let input = super::import::ImportInput {
        stack_name: cs.stack_name.clone(),
        template: cs.template_body.clone(),
        parameters: given_as_input(&cs.given_parameters),
        resources: cs
            .changes
            .iter()
            .map(|c| {
                (
                    c.logical_resource_id.clone(),
                    c.physical_resource_id.clone().unwrap_or_default(),
                )
            })
            .collect(),
    };
    super::import::import_resources(engine, caller, input).await?;
    let mut st = engine.inner.lock();
    if let Some(c) = st.change_sets.get_mut(&cs.change_set_id) {
        c.execution_status = "EXECUTE_COMPLETE".into();
        engine.inner.save_change_set(c)?;
    }
    if let Some(s) = st.stacks.get_mut(&cs.stack_id) {
        s.change_set_id = Some(cs.change_set_id.clone());
        if let Some(tags) = &cs.tags {
            s.tags = tags.clone();
        }
        s.capabilities = cs.capabilities.clone();
        s.notification_arns = cs.notification_arns.clone();
        if cs.role_arn.is_some() {
            s.role_arn = cs.role_arn.clone();
        }
        engine.inner.save_stack(s)?;
    }
    Ok(())
}
