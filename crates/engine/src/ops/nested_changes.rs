//! Nested change sets (CreateChangeSet with IncludeNestedStacks): one change set per
//! `AWS::CloudFormation::Stack` resource the parent's change set adds or modifies, at any
//! depth, linked to its parent and root. Only the root executes (the nested stacks' creates and
//! updates run inside the root's operation, as they do for any stack update) and deleting the
//! root deletes the whole hierarchy, with the nested stacks it made in REVIEW_IN_PROGRESS.

use super::common::*;
use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::exec;
use crate::provider::name_token;
use crate::state::{ChangeSetRecord, OpRecord, StackRecord, State, now_ms};
use crate::status::StackStatus;
use cumulo_template::Prepared;
use serde_json::Value;

pub(crate) const NESTED_STACK: &str = "AWS::CloudFormation::Stack";

/// AWS's StatusReason of a nested change set (DescribeChangeSet).
pub(crate) const EXECUTABLE_FROM_ROOT: &str = "Executable from root change set";

/// One change set level: the stack it is for and what it plans there.
pub(crate) struct Level<'a> {
    pub change_set_id: &'a str,
    pub change_set_name: &'a str,
    pub root_change_set_id: &'a str,
    pub stack_id: &'a str,
    pub stack_name: &'a str,
    pub root_stack_id: &'a str,
    pub live: Option<&'a StackRecord>,
    pub prepared: &'a Prepared,
    pub capabilities: &'a [String],
    pub description: Option<&'a String>,
    /// The root's stack tags change (nested stacks take the root's tags).
    pub tags_changed: bool,
}

/// What creating a hierarchy adds besides the root's record: the nested change sets and the
/// REVIEW_IN_PROGRESS stacks made for nested stacks that do not exist yet.
#[derive(Default)]
pub(crate) struct Planned {
    pub change_sets: Vec<ChangeSetRecord>,
    pub stacks: Vec<StackRecord>,
}

/// `base-<13 random>` cut to AWS's 128-character limit of names.
fn generated(base: &str) -> String {
    let token = name_token();
    let mut base = base.to_string();
    base.truncate(128 - token.len() - 1);
    format!("{base}-{token}")
}

fn change_set_arn(stack_id: &str, name: &str) -> String {
    // arn:<partition>:cloudformation:<region>:<account>:stack/<name>/<uuid>
    let head = stack_id.split(":stack/").next().unwrap_or(stack_id);
    format!("{head}:changeSet/{name}/{}", uuid::Uuid::new_v4())
}

/// Plans the nested change sets under `level`, recording each one's id in the parent's
/// resource change, as AWS shows it (`ResourceChange.ChangeSetId`). A nested stack whose
/// properties are unchanged is looked into too (its template may have changed behind the same
/// TemplateURL, and the update hands every nested stack its template): it becomes a Modify
/// only when its nested change set finds something.
pub(crate) fn plan<'a>(
    engine: &'a Engine,
    caller: &'a Caller,
    level: Level<'a>,
    changes: &'a mut Vec<ResourceChange>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Planned, EngineError>> + Send + 'a>>
{
    Box::pin(async move {
        let mut planned = Planned::default();
        let snapshot = changes.clone();
        for change in changes.iter_mut() {
            if change.resource_type == NESTED_STACK
                && matches!(change.action.as_str(), "Add" | "Modify")
            {
                one(engine, caller, &level, &snapshot, change, &mut planned).await?;
            }
        }
        let Some(live) = level.live else {
            return Ok(planned);
        };
        for logical in &level.prepared.order {
            let untouched = level
                .prepared
                .template
                .resources
                .get(logical)
                .is_some_and(|r| r.resource_type == NESTED_STACK)
                && !snapshot.iter().any(|c| c.logical_resource_id == *logical);
            let Some(physical) = live
                .resources
                .get(logical)
                .and_then(|r| r.physical_id.clone())
                .filter(|_| untouched)
            else {
                continue;
            };
            let mut change = ResourceChange {
                action: "Modify".into(),
                logical_resource_id: logical.clone(),
                physical_resource_id: Some(physical),
                resource_type: NESTED_STACK.into(),
                replacement: Some("False".into()),
                scope: vec!["Properties".into()],
                ..Default::default()
            };
            let mut below = Planned::default();
            if one(engine, caller, &level, &snapshot, &mut change, &mut below).await? {
                planned.change_sets.extend(below.change_sets);
                planned.stacks.extend(below.stacks);
                changes.push(change);
            }
        }
        Ok(planned)
    })
}

/// Plans the nested change set of one nested stack resource into `planned`; true when it
/// changes something (its resources, template or parameters).
async fn one(
    engine: &Engine,
    caller: &Caller,
    level: &Level<'_>,
    snapshot: &[ResourceChange],
    change: &mut ResourceChange,
    planned: &mut Planned,
) -> Result<bool, EngineError> {
    let logical = change.logical_resource_id.clone();
    let props = {
        let st = engine.inner.lock();
        super::changes::planned_properties(
            &st,
            &caller.region,
            level.live,
            level.prepared,
            snapshot,
            &logical,
        )
        .map_err(|d| EngineError::validation(d.message))?
    };
    let url = props
        .get("TemplateURL")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            EngineError::validation(format!(
                "Properties validation failed for resource {logical} with message: required key [TemplateURL] not found"
            ))
        })?;
    let text = template_text(engine, caller, None, Some(url)).await?;
    let root = parse(&text)?;
    check_capabilities(&root, level.capabilities)?;
    let live: Option<StackRecord> = match (&change.physical_resource_id, change.action.as_str()) {
        (Some(id), "Modify") => engine.inner.lock().stacks.get(id).cloned(),
        _ => None,
    };
    // A value known only once the parent runs stays the planner's placeholder.
    let params = crate::builtin::nested_parameters(&props)
        .map_err(|e| EngineError::validation(format!("Template error: resource {logical}: {e}")))?;
    let given = given_params(&params, live.as_ref().map(|s| s.parameters.as_slice()))?;
    let (stack_id, stack_name) = match &live {
        Some(s) => (s.stack_id.clone(), s.stack_name.clone()),
        None => {
            let name = generated(&format!("{}-{logical}", level.stack_name));
            let id = new_stack_id(&caller.region, &caller.account_id, &name);
            (id, name)
        }
    };
    let prepared = prepare_for(
        engine,
        &caller.region,
        &caller.account_id,
        &stack_id,
        &stack_name,
        &root,
        &given,
    )?;
    let mut nested_changes = {
        let st = engine.inner.lock();
        super::changes::compute_changes(
            &engine.inner.registry,
            &st,
            live.as_ref(),
            &prepared,
            level.tags_changed && live.is_some(),
        )
    };
    let name = generated(&format!("{}-{logical}", level.change_set_name));
    let id = change_set_arn(&stack_id, &name);
    let below = plan(
        engine,
        caller,
        Level {
            change_set_id: &id,
            change_set_name: &name,
            root_change_set_id: level.root_change_set_id,
            stack_id: &stack_id,
            stack_name: &stack_name,
            root_stack_id: level.root_stack_id,
            live: live.as_ref(),
            prepared: &prepared,
            capabilities: level.capabilities,
            description: level.description,
            tags_changed: level.tags_changed,
        },
        &mut nested_changes,
    )
    .await?;
    let parameters = stored_params(&prepared);
    let differs = live.as_ref().is_none_or(|s| {
        !nested_changes.is_empty() || s.template_body != text || s.parameters != parameters
    });
    if live.is_none() {
        planned.stacks.push(review_stack(
            caller,
            &stack_id,
            &stack_name,
            Some((level.stack_id, level.root_stack_id)),
        ));
    }
    planned.change_sets.push(ChangeSetRecord {
        change_set_id: id.clone(),
        change_set_name: name,
        stack_id,
        stack_name,
        region: caller.region.clone(),
        description: level.description.cloned(),
        created: now_ms(),
        execution_status: "UNAVAILABLE".into(),
        status: "CREATE_COMPLETE".into(),
        status_reason: Some(EXECUTABLE_FROM_ROOT.into()),
        change_set_type: if live.is_some() { "UPDATE" } else { "CREATE" }.into(),
        template_body: text,
        original_body: None,
        parameters,
        given_parameters: given.into_iter().collect(),
        tags: None,
        capabilities: level.capabilities.to_vec(),
        notification_arns: Vec::new(),
        include_nested_stacks: true,
        on_stack_failure: None,
        changes: nested_changes,
        role_arn: None,
        parent_change_set_id: Some(level.change_set_id.to_string()),
        root_change_set_id: Some(level.root_change_set_id.to_string()),
        logical_resource_id: Some(logical),
        made_stack: live.is_none(),
    });
    planned.change_sets.extend(below.change_sets);
    planned.stacks.extend(below.stacks);
    if change.action == "Modify" {
        // The nested stack's own changes are evaluated when it runs: AWS's Automatic cause.
        change.details.push(ResourceChangeDetail {
            target: ResourceTargetDefinition {
                attribute: "Properties".into(),
                requires_recreation: Some("Never".into()),
                ..Default::default()
            },
            evaluation: "Dynamic".into(),
            change_source: "Automatic".into(),
            causing_entity: None,
        });
    }
    change.change_set_id = Some(id);
    Ok(differs)
}

/// A stack a CREATE change set makes before it is executed (AWS's REVIEW_IN_PROGRESS
/// placeholder); `parent` is (parent id, root id) for a nested one.
pub(crate) fn review_stack(
    caller: &Caller,
    stack_id: &str,
    stack_name: &str,
    parent: Option<(&str, &str)>,
) -> StackRecord {
    StackRecord {
        status_reason: Some("User Initiated".into()),
        parent_id: parent.map(|p| p.0.to_string()),
        root_id: parent.map(|p| p.1.to_string()),
        op: OpRecord {
            token: caller.request_id.clone(),
            kind: "CreateChangeSet".into(),
            host: caller.host.clone(),
            ..Default::default()
        },
        ..StackRecord::empty(
            stack_id,
            stack_name,
            &caller.region,
            &caller.account_id,
            StackStatus::REVIEW_IN_PROGRESS,
        )
    }
}

/// Records a REVIEW_IN_PROGRESS stack, its first event and its name.
pub(crate) fn insert_review_stack(
    engine: &Engine,
    st: &mut State,
    mut stack: StackRecord,
) -> Result<(), EngineError> {
    let key = (stack.region.clone(), stack.stack_name.clone());
    if st.names.contains_key(&key) {
        return Err(EngineError::already_exists(format!(
            "Stack [{}] already exists",
            stack.stack_name
        )));
    }
    let seq = st.next_seq;
    st.next_seq += 1;
    let token = stack.op.token.clone();
    exec::first_event(&mut stack, seq, &token, Some("User Initiated".into()));
    engine.inner.save_stack_full(&stack)?;
    st.names.insert(key, stack.stack_id.clone());
    st.stacks.insert(stack.stack_id.clone(), stack);
    Ok(())
}

/// The nested change sets of a root, every level.
pub(crate) fn descendants(st: &State, root_id: &str) -> Vec<String> {
    st.change_sets
        .values()
        .filter(|c| c.root_change_set_id.as_deref() == Some(root_id))
        .map(|c| c.change_set_id.clone())
        .collect()
}

/// Removes a change set and its nested ones; a nested stack made for one of them that is
/// still REVIEW_IN_PROGRESS is deleted with it, as AWS does.
pub(crate) fn remove_tree(engine: &Engine, st: &mut State, id: &str) -> Result<(), EngineError> {
    let mut ids = descendants(st, id);
    ids.push(id.to_string());
    for id in ids {
        let Some(cs) = st.change_sets.get(&id) else {
            continue;
        };
        let made = cs.made_stack.then(|| cs.stack_id.clone());
        engine.inner.remove_change_set(&id)?;
        st.change_sets.shift_remove(&id);
        if let Some(stack_id) = made {
            retire_review_stack(engine, st, &stack_id)?;
        }
    }
    Ok(())
}

fn retire_review_stack(engine: &Engine, st: &mut State, stack_id: &str) -> Result<(), EngineError> {
    let seq = st.next_seq;
    let Some(s) = st
        .stacks
        .get_mut(stack_id)
        .filter(|s| s.status == StackStatus::REVIEW_IN_PROGRESS)
    else {
        return Ok(());
    };
    s.status = StackStatus::DELETE_COMPLETE;
    s.status_reason = None;
    s.deleted = Some(now_ms());
    let token = s.op.token.clone();
    exec::first_event(s, seq, &token, None);
    engine.inner.save_stack_full(s)?;
    let key = (s.region.clone(), s.stack_name.clone());
    st.next_seq += 1;
    st.names.remove(&key);
    Ok(())
}

/// The REVIEW_IN_PROGRESS stack an executing nested change set made for the parent's
/// resource `logical_id`: the nested stack's create goes into it (its StackId is the one the
/// change set showed).
pub(crate) fn planned_stack(st: &State, parent_stack_id: &str, logical_id: &str) -> Option<String> {
    st.change_sets
        .values()
        .filter(|c| {
            c.made_stack
                && c.execution_status == "EXECUTE_IN_PROGRESS"
                && c.logical_resource_id.as_deref() == Some(logical_id)
        })
        .filter_map(|c| st.stacks.get(&c.stack_id))
        .find(|s| {
            s.status == StackStatus::REVIEW_IN_PROGRESS
                && s.parent_id.as_deref() == Some(parent_stack_id)
        })
        .map(|s| s.stack_name.clone())
}

/// Where a root's execution is, for its nested change sets.
#[derive(Clone, Copy)]
pub(crate) enum Phase {
    Started,
    /// The root's operation could not start: they are as they were.
    NotStarted,
    /// The root's operation ended (true: its stack completed).
    Ended(bool),
}

/// Sets the execution status of a root's nested change sets; at the end each follows its own
/// nested stack's outcome (a failed root fails them all).
pub(crate) fn follow(
    engine: &Engine,
    st: &mut State,
    root_id: &str,
    phase: Phase,
) -> Result<(), EngineError> {
    for id in descendants(st, root_id) {
        let completed = st.change_sets.get(&id).is_some_and(|c| {
            st.stacks.get(&c.stack_id).is_some_and(|s| {
                matches!(
                    s.status,
                    StackStatus::CREATE_COMPLETE | StackStatus::UPDATE_COMPLETE
                )
            })
        });
        if let Some(c) = st.change_sets.get_mut(&id) {
            c.execution_status = match phase {
                Phase::Started => "EXECUTE_IN_PROGRESS",
                Phase::NotStarted => "UNAVAILABLE",
                Phase::Ended(true) if completed => "EXECUTE_COMPLETE",
                Phase::Ended(_) => "EXECUTE_FAILED",
            }
            .into();
            engine.inner.save_change_set(c)?;
        }
    }
    Ok(())
}
