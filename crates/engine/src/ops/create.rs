//! CreateStack.

use super::common::*;
use super::transform;
use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::exec::{self, Op};
use crate::state::{OpRecord, Running, StackRecord, now_ms};
use crate::status::StackStatus;
use std::sync::Arc;

/// A nested stack's links to its parent and root.
#[derive(Debug, Clone)]
pub(crate) struct Parent {
    pub parent_id: String,
    pub root_id: String,
}

pub async fn create_stack(
    engine: &Engine,
    caller: &Caller,
    input: CreateStackInput,
) -> Result<StackIdOutput, EngineError> {
    let (stack_id, running) = start_create(engine, caller, input, None).await?;
    if let Some(running) = running {
        exec::wait(&running, engine.inner.config.sync_wait).await;
    }
    Ok(StackIdOutput { stack_id })
}

/// Validates and records the stack, then starts provisioning. `None` running: an idempotent
/// retry of a create that already started.
pub(crate) async fn start_create(
    engine: &Engine,
    caller: &Caller,
    input: CreateStackInput,
    parent: Option<Parent>,
) -> Result<(String, Option<Running>), EngineError> {
    check_stack_name(&input.stack_name)?;
    if input.disable_rollback.is_some() && input.on_failure.is_some() {
        return Err(EngineError::validation(
            "You cannot specify both DisableRollback and OnFailure.",
        ));
    }
    if let Some(t) = input.timeout_in_minutes.filter(|t| *t < 1) {
        return Err(EngineError::validation(format!(
            "1 validation error detected: Value '{t}' at 'timeoutInMinutes' failed to satisfy constraint: Member must have value greater than or equal to 1"
        )));
    }
    let on_failure = input.on_failure.as_deref().unwrap_or("ROLLBACK");
    if !matches!(on_failure, "ROLLBACK" | "DO_NOTHING" | "DELETE") {
        return Err(EngineError::validation(format!(
            "1 validation error detected: Value '{on_failure}' at 'onFailure' failed to satisfy constraint: Member must satisfy enum value set: [DO_NOTHING, ROLLBACK, DELETE]"
        )));
    }
    let token = input
        .client_request_token
        .clone()
        .unwrap_or_else(|| caller.request_id.clone());
    // A nested stack a nested change set made in REVIEW_IN_PROGRESS is created into.
    let mut adopted: Option<StackRecord> = None;
    {
        let st = engine.inner.lock();
        if let Some(existing) = find(&st, caller, &input.stack_name) {
            if input.client_request_token.is_some()
                && existing.op.caller_token
                && existing.op.token == token
                && existing.op.kind == "CreateStack"
            {
                return Ok((existing.stack_id.clone(), None));
            }
            let made_for_parent = existing.status == StackStatus::REVIEW_IN_PROGRESS
                && parent
                    .as_ref()
                    .is_some_and(|p| existing.parent_id.as_deref() == Some(p.parent_id.as_str()));
            if !made_for_parent {
                return Err(EngineError::already_exists(format!(
                    "Stack [{}] already exists",
                    input.stack_name
                )));
            }
            adopted = Some(existing.clone());
        }
    }
    let text = template_text(
        engine,
        caller,
        input.template_body.as_deref(),
        input.template_url.as_deref(),
    )
    .await?;
    let root = parse(&text)?;
    let given = given_params(&input.parameters, None)?;
    transform::check_auto_expand(&root, &input.capabilities)?;
    let processed = transform::process(engine, caller, text, root, &given).await?;
    let (root, text) = (processed.root, processed.text);
    let stack_id = adopted
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
    check_capabilities(&root, &input.capabilities)?;
    crate::ops::policy::check_rollback_configuration(input.rollback_configuration.as_ref())?;
    let rollback_configuration = input.rollback_configuration.clone();
    let stack_policy = crate::ops::policy::given(
        engine,
        caller,
        input.stack_policy_body.as_deref(),
        input.stack_policy_url.as_deref(),
        "StackPolicy",
    )
    .await?;
    let disable_rollback = input.disable_rollback.unwrap_or(on_failure == "DO_NOTHING");
    let retain_except_on_create = input.retain_except_on_create.unwrap_or(false);
    let op_record = OpRecord {
        token: token.clone(),
        caller_token: input.client_request_token.is_some(),
        kind: "CreateStack".into(),
        disable_rollback,
        delete_on_failure: on_failure == "DELETE",
        retain_except_on_create,
        host: caller.host.clone(),
    };
    let mut stack = StackRecord {
        stack_id: stack_id.clone(),
        stack_name: input.stack_name.clone(),
        region: caller.region.clone(),
        account_id: caller.account_id.clone(),
        status: StackStatus::CREATE_IN_PROGRESS,
        status_reason: Some("User Initiated".into()),
        created: adopted.as_ref().map_or_else(now_ms, |s| s.created),
        updated: None,
        deleted: None,
        template_body: text,
        original_body: processed.original,
        description: prepared.template.description.clone(),
        parameters: stored_params(&prepared),
        tags: tags_of(&input.tags)?,
        capabilities: input.capabilities.clone(),
        notification_arns: input.notification_arns.clone(),
        timeout_in_minutes: input.timeout_in_minutes,
        termination_protection: input.enable_termination_protection.unwrap_or(false),
        disable_rollback,
        retain_except_on_create,
        outputs: Vec::new(),
        parent_id: parent.as_ref().map(|p| p.parent_id.clone()),
        root_id: parent.as_ref().map(|p| p.root_id.clone()),
        change_set_id: None,
        imports: Vec::new(),
        previous: None,
        orphans: Vec::new(),
        stack_policy,
        policy_during_update: None,
        role_arn: input.role_arn.clone(),
        rollback_configuration,
        op: op_record.clone(),
        resources: Default::default(),
        events: adopted.map(|s| s.events).unwrap_or_default(),
        holds_secrets: false,
    };
    {
        let mut st = engine.inner.lock();
        let key = (caller.region.clone(), input.stack_name.clone());
        let held_by_other = st.names.get(&key).is_some_and(|id| *id != stack_id);
        if held_by_other {
            return Err(EngineError::already_exists(format!(
                "Stack [{}] already exists",
                input.stack_name
            )));
        }
        let seq = st.next_seq;
        st.next_seq += 1;
        exec::first_event(&mut stack, seq, &token, Some("User Initiated".into()));
        engine.inner.save_stack_full(&stack)?;
        st.names.insert(key, stack_id.clone());
        st.stacks.insert(stack_id.clone(), stack);
    }
    let timeout = input.timeout_in_minutes;
    let running = launch(
        engine,
        caller,
        &stack_id,
        &input.stack_name,
        op_record,
        Some(prepared),
        |op| Box::pin(exec::run_create(op)),
    );
    if let Some(minutes) = timeout {
        // TimeoutInMinutes: past it, the create is aborted and fails (then rolls back).
        let (abort, mut done) = (running.abort.clone(), running.done.clone());
        let limit = std::time::Duration::from_secs(u64::try_from(minutes).unwrap_or(0) * 60);
        tokio::spawn(async move {
            tokio::select! {
                _ = tokio::time::sleep(limit) => { abort.send_replace(true); }
                _ = done.wait_for(|d| *d) => {}
            }
        });
    }
    Ok((stack_id, Some(running)))
}

type Work = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Starts an operation on a recorded stack.
pub(crate) fn launch(
    engine: &Engine,
    caller: &Caller,
    stack_id: &str,
    stack_name: &str,
    op: OpRecord,
    prepared: Option<cumulo_template::Prepared>,
    work: impl FnOnce(Arc<Op>) -> Work,
) -> Running {
    let (abort, abort_rx) = tokio::sync::watch::channel(false);
    // An in-process caller has no host: keep the one stored with the stack's operation.
    let host = if caller.host.is_empty() {
        engine
            .inner
            .lock()
            .stacks
            .get(stack_id)
            .map(|s| s.op.host.clone())
            .unwrap_or_default()
    } else {
        caller.host.clone()
    };
    let op = Arc::new(Op {
        inner: engine.inner.clone(),
        stack_id: stack_id.to_string(),
        stack_name: stack_name.to_string(),
        region: caller.region.clone(),
        account_id: caller.account_id.clone(),
        token: op.token,
        host,
        prepared: prepared.map(Arc::new),
        abort: abort_rx,
        disable_rollback: op.disable_rollback,
        delete_on_failure: op.delete_on_failure,
        retain_except_on_create: op.retain_except_on_create,
        lost: Default::default(),
        halted: Default::default(),
        deleting: op.kind == "DeleteStack",
    });
    op.notify_latest();
    exec::spawn(&engine.inner, stack_id, Arc::new(abort), work(op))
}
