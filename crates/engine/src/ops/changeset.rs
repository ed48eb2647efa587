//! Change sets: CreateChangeSet computes the changes against the live stack (see `changes`),
//! ExecuteChangeSet runs them as a create or an update, and the change set follows the
//! execution to EXECUTE_COMPLETE / EXECUTE_FAILED.

use super::common::*;
use super::nested_changes::{self, Phase};
use super::transform::Stop;
use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::exec;
use crate::ops::create::launch;
use crate::ops::read::{param_views, tag_views, time};
use crate::state::{ChangeSetRecord, OpRecord, StackRecord, State, now_ms};
use crate::status::StackStatus;

pub(crate) const NO_CHANGES: &str = "The submitted information didn't contain changes. Submit different information to create a change set.";

/// A change set by ARN, or by name within a stack (name or ARN).
pub(crate) fn find_change_set<'a>(
    st: &'a State,
    caller: &Caller,
    name: &str,
    stack: Option<&str>,
) -> Result<&'a ChangeSetRecord, EngineError> {
    let found = if name.starts_with("arn:") {
        st.change_sets.get(name)
    } else {
        let stack_id = stack
            .and_then(|s| find(st, caller, s))
            .map(|s| s.stack_id.clone());
        match stack_id {
            Some(id) => st
                .change_sets
                .values()
                .find(|c| c.stack_id == id && c.change_set_name == name),
            None => None,
        }
    };
    found
        .filter(|c| c.region == caller.region)
        .ok_or_else(|| EngineError::change_set_not_found(name))
}

fn check_name(name: &str) -> Result<(), EngineError> {
    let mut chars = name.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-')
        && name.len() <= 128;
    if ok {
        Ok(())
    } else {
        Err(EngineError::validation(format!(
            "1 validation error detected: Value '{name}' at 'changeSetName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z][-a-zA-Z0-9]*"
        )))
    }
}

pub async fn create_change_set(
    engine: &Engine,
    caller: &Caller,
    input: CreateChangeSetInput,
) -> Result<CreateChangeSetOutput, EngineError> {
    check_stack_name(&input.stack_name).or_else(|e| {
        if input.stack_name.starts_with("arn:") {
            Ok(())
        } else {
            Err(e)
        }
    })?;
    check_name(&input.change_set_name)?;
    let kind = input.change_set_type.as_deref().unwrap_or("UPDATE");
    if kind == "IMPORT" || !input.resources_to_import.is_empty() {
        return Box::pin(super::import_change_set::create(engine, caller, input)).await;
    }
    if kind != "CREATE" && kind != "UPDATE" {
        return Err(EngineError::validation(format!(
            "1 validation error detected: Value '{kind}' at 'changeSetType' failed to satisfy constraint: Member must satisfy enum value set: [CREATE, UPDATE, IMPORT]"
        )));
    }
    // The stack as it stands (None: a CREATE change set for a new stack).
    let existing: Option<StackRecord> = {
        let st = engine.inner.lock();
        match (kind, find(&st, caller, &input.stack_name)) {
            ("CREATE", Some(s)) if s.status != StackStatus::REVIEW_IN_PROGRESS => {
                return Err(EngineError::validation(format!(
                    "Stack [{}] already exists and cannot be created again with the changeSet [{}].",
                    input.stack_name, input.change_set_name
                )));
            }
            ("CREATE", s) => s.cloned(),
            (_, Some(s)) if s.status != StackStatus::DELETE_COMPLETE => {
                if !(s.status.updatable() || s.status.resumable_without_rollback()) {
                    return Err(cannot_update(s));
                }
                Some(s.clone())
            }
            _ => {
                return Err(EngineError::validation(format!(
                    "Stack [{}] does not exist",
                    input.stack_name
                )));
            }
        }
    };
    if let Some(s) = &existing {
        let st = engine.inner.lock();
        if name_taken(&st, &s.stack_id, &input.change_set_name) {
            return Err(EngineError::already_exists(format!(
                "ChangeSet [{}] already exists",
                input.change_set_name
            )));
        }
    }
    let live = existing
        .as_ref()
        .filter(|s| s.status != StackStatus::REVIEW_IN_PROGRESS);
    let text = if input.use_previous_template {
        live.map(|s| s.original_body.clone().unwrap_or(s.template_body.clone()))
            .ok_or_else(|| {
                EngineError::validation(
                    "UsePreviousTemplate can only be used with an existing stack",
                )
            })?
    } else {
        template_text(
            engine,
            caller,
            input.template_body.as_deref(),
            input.template_url.as_deref(),
        )
        .await?
    };
    let root = parse(&text)?;
    let given = given_params(&input.parameters, live.map(|s| s.parameters.as_slice()))?;
    let processed =
        match super::transform::run(engine, caller, text.clone(), root.clone(), &given).await {
            Ok(p) => p,
            Err(Stop::Template(e)) => return Err(e),
            // AWS makes the change set and fails it, the transform's failure as its reason.
            Err(Stop::Transform(e)) => {
                let failed = Failed {
                    kind,
                    existing: existing.as_ref(),
                    text,
                    root: &root,
                    given: &given,
                    reason: e.message,
                };
                return failed_change_set(engine, caller, &input, failed);
            }
        };
    let (root, text) = (processed.root, processed.text);
    let stack_name = existing
        .as_ref()
        .map(|s| s.stack_name.clone())
        .unwrap_or_else(|| input.stack_name.clone());
    let stack_id = existing
        .as_ref()
        .map(|s| s.stack_id.clone())
        .unwrap_or_else(|| new_stack_id(&caller.region, &caller.account_id, &stack_name));
    let prepared = prepare_for(
        engine,
        &caller.region,
        &caller.account_id,
        &stack_id,
        &stack_name,
        &root,
        &given,
    )?;
    check_capabilities(&root, &input.capabilities)?;
    let params = stored_params(&prepared);
    let tags = input.tags.as_deref().map(tags_of).transpose()?;
    // Tags left out keep the stack's (as UpdateStack does); given, they may change it.
    let tags_changed = live.is_some_and(|s| tags.as_ref().is_some_and(|t| *t != s.tags));
    let mut changes = {
        let st = engine.inner.lock();
        super::changes::compute_changes(&engine.inner.registry, &st, live, &prepared, tags_changed)
    };
    let change_set_id = format!(
        "arn:{}:cloudformation:{}:{}:changeSet/{}/{}",
        prepared.pseudo.partition(),
        caller.region,
        caller.account_id,
        input.change_set_name,
        uuid::Uuid::new_v4()
    );
    let root_stack_id = existing
        .as_ref()
        .and_then(|s| s.root_id.clone())
        .unwrap_or_else(|| stack_id.clone());
    let nested = if input.include_nested_stacks {
        let level = nested_changes::Level {
            change_set_id: &change_set_id,
            change_set_name: &input.change_set_name,
            root_change_set_id: &change_set_id,
            stack_id: &stack_id,
            stack_name: &stack_name,
            root_stack_id: &root_stack_id,
            live,
            prepared: &prepared,
            capabilities: &input.capabilities,
            description: input.description.as_ref(),
            tags_changed,
        };
        nested_changes::plan(engine, caller, level, &mut changes).await?
    } else {
        nested_changes::Planned::default()
    };
    // Decided after the nested stacks are planned: one of them may change behind the same
    // TemplateURL.
    let unchanged = changes.is_empty()
        && live.is_some_and(|s| {
            s.template_body == text
                && s.parameters == params
                && tags.as_ref().is_none_or(|t| *t == s.tags)
        });

    let record = ChangeSetRecord {
        change_set_id: change_set_id.clone(),
        change_set_name: input.change_set_name.clone(),
        stack_id: stack_id.clone(),
        stack_name: stack_name.clone(),
        region: caller.region.clone(),
        description: input.description.clone(),
        created: now_ms(),
        execution_status: if unchanged {
            "UNAVAILABLE"
        } else {
            "AVAILABLE"
        }
        .into(),
        status: if unchanged {
            "FAILED"
        } else {
            "CREATE_COMPLETE"
        }
        .into(),
        status_reason: unchanged.then(|| NO_CHANGES.to_string()),
        change_set_type: kind.to_string(),
        template_body: text,
        original_body: processed.original,
        parameters: params,
        given_parameters: given.into_iter().collect(),
        tags,
        capabilities: input.capabilities.clone(),
        notification_arns: input.notification_arns.clone(),
        include_nested_stacks: input.include_nested_stacks,
        on_stack_failure: input.on_stack_failure.clone(),
        changes,
        role_arn: input.role_arn.clone(),
        parent_change_set_id: None,
        root_change_set_id: None,
        logical_resource_id: None,
        made_stack: false,
    };
    let mut st = engine.inner.lock();
    // Checked again under the lock that inserts: a concurrent call may have won the name.
    if name_taken(&st, &stack_id, &input.change_set_name) {
        return Err(EngineError::already_exists(format!(
            "ChangeSet [{}] already exists",
            input.change_set_name
        )));
    }
    // An executed change set of that name gives it up to the new one.
    let executed: Vec<String> = st
        .change_sets
        .values()
        .filter(|c| c.stack_id == stack_id && c.change_set_name == input.change_set_name)
        .map(|c| c.change_set_id.clone())
        .collect();
    for id in executed {
        nested_changes::remove_tree(engine, &mut st, &id)?;
    }
    if existing.is_none() {
        // The REVIEW_IN_PROGRESS placeholder a CREATE change set makes.
        let stack = nested_changes::review_stack(caller, &stack_id, &stack_name, None);
        nested_changes::insert_review_stack(engine, &mut st, stack)?;
    }
    for stack in nested.stacks {
        nested_changes::insert_review_stack(engine, &mut st, stack)?;
    }
    for cs in nested.change_sets {
        engine.inner.save_change_set(&cs)?;
        st.change_sets.insert(cs.change_set_id.clone(), cs);
    }
    engine.inner.save_change_set(&record)?;
    st.change_sets.insert(change_set_id.clone(), record);
    Ok(CreateChangeSetOutput {
        id: change_set_id,
        stack_id,
    })
}

/// A change set whose template could not be processed.
struct Failed<'a> {
    kind: &'a str,
    existing: Option<&'a StackRecord>,
    text: String,
    root: &'a cumulo_template::Value,
    given: &'a indexmap::IndexMap<String, String>,
    reason: String,
}

/// Records a change set that failed before its changes could be computed (a transform
/// failed): `FAILED` with the failure as StatusReason, not executable, its stack made in
/// REVIEW_IN_PROGRESS when the change set would have created it, as AWS leaves them.
fn failed_change_set(
    engine: &Engine,
    caller: &Caller,
    input: &CreateChangeSetInput,
    f: Failed<'_>,
) -> Result<CreateChangeSetOutput, EngineError> {
    let (stack_id, stack_name) = match f.existing {
        Some(s) => (s.stack_id.clone(), s.stack_name.clone()),
        None => (
            new_stack_id(&caller.region, &caller.account_id, &input.stack_name),
            input.stack_name.clone(),
        ),
    };
    let decls = cumulo_template::model::parameters_of(f.root).map_err(first_error)?;
    let parameters = decls
        .values()
        .filter_map(|d| {
            let value = f.given.get(&d.name).or(d.default.as_ref())?;
            Some(crate::state::StoredParam {
                key: d.name.clone(),
                value: value.clone(),
                resolved: None,
                no_echo: d.no_echo,
            })
        })
        .collect();
    let head = stack_id.split(":stack/").next().unwrap_or(&stack_id);
    let change_set_id = format!(
        "{head}:changeSet/{}/{}",
        input.change_set_name,
        uuid::Uuid::new_v4()
    );
    let record = ChangeSetRecord {
        change_set_id: change_set_id.clone(),
        change_set_name: input.change_set_name.clone(),
        stack_id: stack_id.clone(),
        stack_name: stack_name.clone(),
        region: caller.region.clone(),
        description: input.description.clone(),
        created: now_ms(),
        execution_status: "UNAVAILABLE".into(),
        status: "FAILED".into(),
        status_reason: Some(f.reason),
        change_set_type: f.kind.to_string(),
        template_body: f.text,
        original_body: None,
        parameters,
        given_parameters: f.given.clone().into_iter().collect(),
        tags: input.tags.as_deref().map(tags_of).transpose()?,
        capabilities: input.capabilities.clone(),
        notification_arns: input.notification_arns.clone(),
        include_nested_stacks: input.include_nested_stacks,
        on_stack_failure: input.on_stack_failure.clone(),
        changes: Vec::new(),
        role_arn: input.role_arn.clone(),
        parent_change_set_id: None,
        root_change_set_id: None,
        logical_resource_id: None,
        made_stack: false,
    };
    let mut st = engine.inner.lock();
    if name_taken(&st, &stack_id, &input.change_set_name) {
        return Err(EngineError::already_exists(format!(
            "ChangeSet [{}] already exists",
            input.change_set_name
        )));
    }
    if f.existing.is_none() {
        let stack = nested_changes::review_stack(caller, &stack_id, &stack_name, None);
        nested_changes::insert_review_stack(engine, &mut st, stack)?;
    }
    engine.inner.save_change_set(&record)?;
    st.change_sets.insert(change_set_id.clone(), record);
    Ok(CreateChangeSetOutput {
        id: change_set_id,
        stack_id,
    })
}

pub fn describe_change_set(
    engine: &Engine,
    caller: &Caller,
    input: DescribeChangeSetInput,
) -> Result<ChangeSetView, EngineError> {
    let st = engine.inner.lock();
    // A stack that does not exist is said first, before the change set is looked for.
    if let Some(stack) = input.change_set.stack_name.as_deref()
        && find(&st, caller, stack).is_none()
    {
        return Err(EngineError::validation(format!(
            "Stack [{stack}] does not exist"
        )));
    }
    let cs = find_change_set(
        &st,
        caller,
        &input.change_set.change_set_name,
        input.change_set.stack_name.as_deref(),
    )?;
    let (mut changes, next_token) = page(cs.changes.clone(), input.next_token.as_deref())?;
    if input.include_property_values {
        mask_no_echo(&mut changes, &cs.parameters);
        if let Some(stack) = st.stacks.get(&cs.stack_id) {
            mask_no_echo(&mut changes, &stack.parameters);
        }
    } else {
        changes.iter_mut().for_each(without_values);
    }
    Ok(ChangeSetView {
        change_set_name: cs.change_set_name.clone(),
        change_set_id: cs.change_set_id.clone(),
        stack_id: cs.stack_id.clone(),
        stack_name: cs.stack_name.clone(),
        description: cs.description.clone(),
        parameters: param_views(&cs.parameters),
        creation_time: time(cs.created),
        execution_status: cs.execution_status.clone(),
        status: cs.status.clone(),
        status_reason: cs.status_reason.clone(),
        notification_arns: cs.notification_arns.clone(),
        capabilities: cs.capabilities.clone(),
        tags: tag_views(cs.tags.as_deref().unwrap_or_default()),
        changes,
        next_token,
        include_nested_stacks: cs.include_nested_stacks,
        parent_change_set_id: cs.parent_change_set_id.clone(),
        root_change_set_id: cs.root_change_set_id.clone(),
        on_stack_failure: cs.on_stack_failure.clone(),
    })
}

pub fn describe_change_set_hooks(
    engine: &Engine,
    caller: &Caller,
    input: ChangeSetRef,
) -> Result<ChangeSetHooksView, EngineError> {
    let st = engine.inner.lock();
    let cs = find_change_set(
        &st,
        caller,
        &input.change_set_name,
        input.stack_name.as_deref(),
    )?;
    Ok(ChangeSetHooksView {
        change_set_id: cs.change_set_id.clone(),
        change_set_name: cs.change_set_name.clone(),
        stack_id: cs.stack_id.clone(),
        stack_name: cs.stack_name.clone(),
        status: if cs.status == "CREATE_COMPLETE" {
            "PLANNED"
        } else {
            "UNAVAILABLE"
        }
        .into(),
    })
}

/// What DescribeChangeSet shows without IncludePropertyValues: no values, no contexts.
fn without_values(change: &mut ResourceChange) {
    change.before_context = None;
    change.after_context = None;
    for d in &mut change.details {
        let t = &mut d.target;
        (
            t.path,
            t.before_value,
            t.after_value,
            t.attribute_change_type,
        ) = (None, None, None, None);
    }
}

/// A NoEcho parameter's value never shows in property values: AWS's mask stands for it.
fn mask_no_echo(changes: &mut [ResourceChange], params: &[crate::state::StoredParam]) {
    let secrets: Vec<&str> = params
        .iter()
        .filter(|p| p.no_echo && !p.value.is_empty())
        .map(|p| p.value.as_str())
        .collect();
    if secrets.is_empty() {
        return;
    }
    let mask = |v: &mut Option<String>| {
        if let Some(text) = v {
            for s in &secrets {
                *text = text.replace(s, "****");
            }
        }
    };
    for c in changes {
        mask(&mut c.before_context);
        mask(&mut c.after_context);
        for d in &mut c.details {
            mask(&mut d.target.before_value);
            mask(&mut d.target.after_value);
        }
    }
}

pub async fn execute_change_set(
    engine: &Engine,
    caller: &Caller,
    input: ExecuteChangeSetInput,
) -> Result<(), EngineError> {
    let cs = {
        let st = engine.inner.lock();
        find_change_set(
            &st,
            caller,
            &input.change_set.change_set_name,
            input.change_set.stack_name.as_deref(),
        )?
        .clone()
    };
    if cs.status != "CREATE_COMPLETE" || cs.execution_status != "AVAILABLE" {
        return Err(EngineError::invalid_change_set_status(format!(
            "ChangeSet [{}] cannot be executed in its current status of [{}]",
            cs.change_set_id, cs.status
        )));
    }
    if cs.change_set_type == "IMPORT" {
        return super::import_change_set::execute(engine, caller, &cs).await;
    }
    let token = input
        .client_request_token
        .clone()
        .unwrap_or_else(|| caller.request_id.clone());
    // The nested change sets go EXECUTE_IN_PROGRESS first: the nested stacks' creates look
    // for the REVIEW_IN_PROGRESS stacks made for them by that status.
    nested_changes::follow(
        engine,
        &mut engine.inner.lock(),
        &cs.change_set_id,
        Phase::Started,
    )?;
    let started = start_execution(engine, caller, &cs, &input, &token).await;
    if started.is_err() {
        nested_changes::follow(
            engine,
            &mut engine.inner.lock(),
            &cs.change_set_id,
            Phase::NotStarted,
        )?;
    }
    let running = started?;
    {
        let mut st = engine.inner.lock();
        if let Some(c) = st.change_sets.get_mut(&cs.change_set_id) {
            c.execution_status = "EXECUTE_IN_PROGRESS".into();
            engine.inner.save_change_set(c)?;
        }
        if let Some(s) = st.stacks.get_mut(&cs.stack_id) {
            s.change_set_id = Some(cs.change_set_id.clone());
            engine.inner.save_stack(s)?;
        }
        // Executing a change set retires the stack's other change sets, as AWS does.
        let others: Vec<String> = st
            .change_sets
            .values()
            .filter(|c| c.stack_id == cs.stack_id && c.change_set_id != cs.change_set_id)
            .map(|c| c.change_set_id.clone())
            .collect();
        for id in others {
            nested_changes::remove_tree(engine, &mut st, &id)?;
        }
    }
    if let Some(running) = running {
        let inner = engine.inner.clone();
        let (cs_id, stack_id) = (cs.change_set_id.clone(), cs.stack_id.clone());
        let watcher = running.clone();
        tokio::spawn(async move {
            exec::wait_done(&watcher).await;
            let mut st = inner.lock();
            let ok = st.stacks.get(&stack_id).is_some_and(|s| {
                matches!(
                    s.status,
                    StackStatus::CREATE_COMPLETE | StackStatus::UPDATE_COMPLETE
                )
            });
            if let Some(c) = st.change_sets.get_mut(&cs_id) {
                c.execution_status = if ok {
                    "EXECUTE_COMPLETE"
                } else {
                    "EXECUTE_FAILED"
                }
                .into();
                // The stack's own operation has finished; a lost change set status is
                // recovered as EXECUTE_FAILED on restart, and said here.
                if let Err(e) = inner.save_change_set(c) {
                    eprintln!(
                        "cumulo: change set {cs_id}: {}: {}",
                        crate::exec::PERSIST_FAILED,
                        e.message
                    );
                }
            }
            let engine = Engine {
                inner: inner.clone(),
            };
            if let Err(e) = nested_changes::follow(&engine, &mut st, &cs_id, Phase::Ended(ok)) {
                eprintln!(
                    "cumulo: nested change sets of {cs_id}: {}: {}",
                    crate::exec::PERSIST_FAILED,
                    e.message
                );
            }
        });
        exec::wait(&running, engine.inner.config.sync_wait).await;
    }
    Ok(())
}

/// Starts the root's operation: a create into the REVIEW_IN_PROGRESS stack or an update.
async fn start_execution(
    engine: &Engine,
    caller: &Caller,
    cs: &ChangeSetRecord,
    input: &ExecuteChangeSetInput,
    token: &str,
) -> Result<Option<crate::state::Running>, EngineError> {
    if cs.change_set_type == "CREATE" {
        return execute_create(engine, caller, cs, input, token);
    }
    let update = UpdateStackInput {
        stack_name: cs.stack_id.clone(),
        parameters: cs
            .given_parameters
            .iter()
            .map(|(k, v)| Parameter {
                key: k.clone(),
                value: Some(v.clone()),
                use_previous_value: false,
            })
            .collect(),
        capabilities: cs.capabilities.clone(),
        notification_arns: cs.notification_arns.clone(),
        tags: cs.tags.as_ref().map(|t| {
            t.iter()
                .map(|(k, v)| Tag {
                    key: k.clone(),
                    value: v.clone(),
                })
                .collect()
        }),
        disable_rollback: input.disable_rollback,
        client_request_token: input.client_request_token.clone(),
        retain_except_on_create: input.retain_except_on_create,
        role_arn: cs.role_arn.clone(),
        ..Default::default()
    };
    let (_, running) = super::update::start_update(
        engine,
        caller,
        update,
        "ExecuteChangeSet",
        Some((cs.template_body.clone(), cs.original_body.clone())),
    )
    .await?;
    Ok(running)
}

/// Executes a CREATE change set on its REVIEW_IN_PROGRESS stack.
fn execute_create(
    engine: &Engine,
    caller: &Caller,
    cs: &ChangeSetRecord,
    input: &ExecuteChangeSetInput,
    token: &str,
) -> Result<Option<crate::state::Running>, EngineError> {
    let root = parse(&cs.template_body)?;
    let given = cs.given_parameters.iter().cloned().collect();
    let prepared = prepare_for(
        engine,
        &caller.region,
        &caller.account_id,
        &cs.stack_id,
        &cs.stack_name,
        &root,
        &given,
    )?;
    let on_failure = cs.on_stack_failure.as_deref().unwrap_or("ROLLBACK");
    let disable_rollback = input.disable_rollback.unwrap_or(on_failure == "DO_NOTHING");
    let op = OpRecord {
        token: token.to_string(),
        caller_token: input.client_request_token.is_some(),
        kind: "ExecuteChangeSet".into(),
        disable_rollback,
        delete_on_failure: on_failure == "DELETE" && input.disable_rollback.is_none(),
        retain_except_on_create: input.retain_except_on_create.unwrap_or(false),
        host: caller.host.clone(),
    };
    {
        let mut st = engine.inner.lock();
        let seq = st.next_seq;
        st.next_seq += 1;
        let Some(s) = st.stacks.get_mut(&cs.stack_id) else {
            return Err(EngineError::stack_not_found(&cs.stack_name));
        };
        if s.status != StackStatus::REVIEW_IN_PROGRESS {
            return Err(EngineError::already_exists(format!(
                "Stack [{}] already exists",
                s.stack_name
            )));
        }
        s.template_body = cs.template_body.clone();
        s.original_body = cs.original_body.clone();
        s.description = prepared.template.description.clone();
        s.parameters = cs.parameters.clone();
        s.tags = cs.tags.clone().unwrap_or_default();
        s.capabilities = cs.capabilities.clone();
        s.notification_arns = cs.notification_arns.clone();
        s.role_arn = cs.role_arn.clone();
        s.disable_rollback = disable_rollback;
        s.retain_except_on_create = op.retain_except_on_create;
        s.status = StackStatus::CREATE_IN_PROGRESS;
        s.status_reason = Some("User Initiated".into());
        s.op = op.clone();
        exec::first_event(s, seq, token, Some("User Initiated".into()));
        engine.inner.save_stack_full(s)?;
    }
    Ok(Some(launch(
        engine,
        caller,
        &cs.stack_id,
        &cs.stack_name,
        op,
        Some(prepared),
        |op| Box::pin(exec::run_create(op)),
    )))
}

pub fn delete_change_set(
    engine: &Engine,
    caller: &Caller,
    input: ChangeSetRef,
) -> Result<(), EngineError> {
    let mut st = engine.inner.lock();
    // AWS deletes a change set named within an existing stack even when the stack has no
    // change set of that name: the request succeeds (the CDK relies on it, deleting its fixed
    // change-set name before every create). A stack that does not exist is an error.
    if !input.change_set_name.starts_with("arn:")
        && let Some(stack) = input.stack_name.as_deref()
    {
        let stack_id = find(&st, caller, stack)
            .map(|s| s.stack_id.clone())
            .ok_or_else(|| EngineError::validation(format!("Stack [{stack}] does not exist")))?;
        let exists = st
            .change_sets
            .values()
            .any(|c| c.stack_id == stack_id && c.change_set_name == input.change_set_name);
        if !exists {
            return Ok(());
        }
    }
    let cs = find_change_set(
        &st,
        caller,
        &input.change_set_name,
        input.stack_name.as_deref(),
    )?;
    if cs.execution_status == "EXECUTE_IN_PROGRESS" {
        return Err(EngineError::invalid_change_set_status(format!(
            "Cannot delete ChangeSet [{}] while it is in EXECUTE_IN_PROGRESS status",
            cs.change_set_id
        )));
    }
    if let Some(root) = &cs.root_change_set_id {
        return Err(EngineError::invalid_change_set_status(format!(
            "ChangeSet [{}] is a nested change set: delete its root change set [{root}]",
            cs.change_set_id
        )));
    }
    let id = cs.change_set_id.clone();
    nested_changes::remove_tree(engine, &mut st, &id)?;
    Ok(())
}

pub fn list_change_sets(
    engine: &Engine,
    caller: &Caller,
    input: ListChangeSetsInput,
) -> Result<ListChangeSetsOutput, EngineError> {
    let st = engine.inner.lock();
    let stack = find(&st, caller, &input.stack_name)
        .ok_or_else(|| EngineError::stack_not_found(&input.stack_name))?;
    let all: Vec<ChangeSetSummary> = st
        .change_sets
        .values()
        .filter(|c| c.stack_id == stack.stack_id)
        .map(|c| ChangeSetSummary {
            stack_id: c.stack_id.clone(),
            stack_name: c.stack_name.clone(),
            change_set_id: c.change_set_id.clone(),
            change_set_name: c.change_set_name.clone(),
            execution_status: c.execution_status.clone(),
            status: c.status.clone(),
            status_reason: c.status_reason.clone(),
            creation_time: time(c.created),
            description: c.description.clone(),
            include_nested_stacks: c.include_nested_stacks,
            parent_change_set_id: c.parent_change_set_id.clone(),
            root_change_set_id: c.root_change_set_id.clone(),
        })
        .collect();
    let (summaries, next_token) = page(all, input.next_token.as_deref())?;
    Ok(ListChangeSetsOutput {
        summaries,
        next_token,
    })
}

/// Whether the stack has a change set of that name that has not been executed. AWS lets a new
/// change set take the name of an executed one (the AWS CLI's `deploy` names change sets after
/// the current second, so two quick deploys reuse a name; so do tools with a fixed name).
fn name_taken(st: &crate::state::State, stack_id: &str, name: &str) -> bool {
    st.change_sets.values().any(|c| {
        c.stack_id == stack_id
            && c.change_set_name == name
            && !matches!(
                c.execution_status.as_str(),
                "EXECUTE_COMPLETE" | "EXECUTE_FAILED" | "OBSOLETE"
            )
    })
}
