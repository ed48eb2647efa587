//! UpdateStack.

use super::common::*;
use super::transform;
use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::exec;
use crate::ops::create::launch;
use crate::ops::policy;
use crate::state::{GenerationRows, OpRecord, Running, now_ms};
use crate::status::StackStatus;

/// The operation kind of a nested stack's update run by its parent's.
pub(crate) const NESTED_UPDATE: &str = "UpdateNestedStack";

pub async fn update_stack(
    engine: &Engine,
    caller: &Caller,
    input: UpdateStackInput,
) -> Result<StackIdOutput, EngineError> {
    let (stack_id, running) = start_update(engine, caller, input, "UpdateStack", None).await?;
    if let Some(running) = running {
        exec::wait(&running, engine.inner.config.sync_wait).await;
    }
    Ok(StackIdOutput { stack_id })
}

/// Validates an update and starts it. `kind` names the operation for token idempotency;
/// `template` is a template already read, checked and processed (a change set's), with the
/// original text its transforms processed, if any.
pub(crate) async fn start_update(
    engine: &Engine,
    caller: &Caller,
    input: UpdateStackInput,
    kind: &str,
    template: Option<(String, Option<String>)>,
) -> Result<(String, Option<Running>), EngineError> {
    let token = input
        .client_request_token
        .clone()
        .unwrap_or_else(|| caller.request_id.clone());
    let disable_rollback = input.disable_rollback.unwrap_or(false);
    let stack = {
        let st = engine.inner.lock();
        let stack = find_live(&st, caller, &input.stack_name)?;
        if input.client_request_token.is_some() && stack.op.caller_token && stack.op.token == token
        {
            if stack.op.kind == kind {
                return Ok((stack.stack_id.clone(), None));
            }
            return Err(EngineError::token_already_exists(format!(
                "Another {} request with the same client request token is already in progress",
                stack.op.kind
            )));
        }
        let allowed = stack.status.updatable()
            || (disable_rollback && stack.status.resumable_without_rollback());
        if !allowed {
            return Err(cannot_update(stack));
        }
        Head {
            stack_id: stack.stack_id.clone(),
            stack_name: stack.stack_name.clone(),
            template_body: stack.template_body.clone(),
            original_body: stack.original_body.clone(),
            parameters: stack.parameters.clone(),
            tags: stack.tags.clone(),
            notification_arns: stack.notification_arns.clone(),
            status: stack.status,
        }
    };
    let (text, submitted) = if let Some((text, original)) = template {
        (text, original)
    } else if input.use_previous_template {
        if input.template_body.is_some() || input.template_url.is_some() {
            return Err(EngineError::validation(
                "You cannot specify both usePreviousTemplate and Template Body/Template URL.",
            ));
        }
        // The previous template as submitted: its transforms run again, as AWS runs them.
        (
            stack
                .original_body
                .clone()
                .unwrap_or(stack.template_body.clone()),
            None,
        )
    } else {
        let text = template_text(
            engine,
            caller,
            input.template_body.as_deref(),
            input.template_url.as_deref(),
        )
        .await?;
        (text, None)
    };
    let root = parse(&text)?;
    crate::ops::policy::check_rollback_configuration(input.rollback_configuration.as_ref())?;
    let new_policy = policy::given(
        engine,
        caller,
        input.stack_policy_body.as_deref(),
        input.stack_policy_url.as_deref(),
        "StackPolicy",
    )
    .await?;
    let during_update = policy::given(
        engine,
        caller,
        input.stack_policy_during_update_body.as_deref(),
        input.stack_policy_during_update_url.as_deref(),
        "StackPolicyDuringUpdate",
    )
    .await?;
    let given = given_params(&input.parameters, Some(&stack.parameters))?;
    let (root, text, original) = match submitted {
        Some(original) => (root, text, Some(original)),
        None => {
            transform::check_auto_expand(&root, &input.capabilities)?;
            let processed = transform::process(engine, caller, text, root, &given).await?;
            (processed.root, processed.text, processed.original)
        }
    };
    let prepared = prepare_for(
        engine,
        &caller.region,
        &caller.account_id,
        &stack.stack_id,
        &stack.stack_name,
        &root,
        &given,
    )?;
    check_capabilities(&root, &input.capabilities)?;
    let params = stored_params(&prepared);
    let tags = input
        .tags
        .as_deref()
        .map(tags_of)
        .transpose()?
        .unwrap_or_else(|| stack.tags.clone());
    let notification_arns = if input.notification_arns.is_empty() {
        stack.notification_arns.clone()
    } else {
        input.notification_arns.clone()
    };
    let unchanged = text == stack.template_body
        && params == stack.parameters
        && tags == stack.tags
        && notification_arns == stack.notification_arns
        && stack.status.updatable()
        // An executable change set has changes, perhaps only in a nested stack's template
        // behind an unchanged TemplateURL; for the same reason a nested stack that has nested
        // stacks of its own hands them the update (at worst an update that changes nothing).
        && kind != "ExecuteChangeSet"
        && !(kind == NESTED_UPDATE && text.contains("AWS::CloudFormation::Stack"));
    if unchanged {
        return Err(EngineError::validation("No updates are to be performed."));
    }
    let op_record = OpRecord {
        token: token.clone(),
        caller_token: input.client_request_token.is_some(),
        kind: kind.to_string(),
        disable_rollback,
        delete_on_failure: false,
        retain_except_on_create: input.retain_except_on_create.unwrap_or(false),
        host: caller.host.clone(),
    };
    {
        let mut st = engine.inner.lock();
        let seq = st.next_seq;
        st.next_seq += 1;
        let Some(s) = st.stacks.get_mut(&stack.stack_id) else {
            return Err(EngineError::stack_not_found(&input.stack_name));
        };
        // Re-checked under the lock: another operation may have started meanwhile.
        let allowed =
            s.status.updatable() || (disable_rollback && s.status.resumable_without_rollback());
        if !allowed {
            return Err(cannot_update(s));
        }
        let generation_rows = if s.previous.is_none() || s.status.updatable() {
            s.previous = Some(generation(s));
            GenerationRows::Take
        } else {
            GenerationRows::Keep
        };
        s.template_body = text;
        s.original_body = original;
        s.description = prepared.template.description.clone();
        s.parameters = params;
        s.tags = tags;
        s.notification_arns = notification_arns;
        if new_policy.is_some() {
            s.stack_policy = new_policy;
        }
        s.policy_during_update = during_update;
        if input.role_arn.is_some() {
            s.role_arn = input.role_arn.clone();
        }
        if input.rollback_configuration.is_some() {
            s.rollback_configuration = input.rollback_configuration.clone();
        }
        s.capabilities = input.capabilities.clone();
        s.disable_rollback = disable_rollback;
        s.retain_except_on_create = op_record.retain_except_on_create;
        s.imports.clear();
        s.updated = Some(now_ms());
        s.status = StackStatus::UPDATE_IN_PROGRESS;
        s.status_reason = Some("User Initiated".into());
        s.op = op_record.clone();
        exec::first_event(s, seq, &token, Some("User Initiated".into()));
        engine.inner.save_stack_with(s, &[], generation_rows)?;
    }
    let running = launch(
        engine,
        caller,
        &stack.stack_id,
        &stack.stack_name,
        op_record,
        Some(prepared),
        |op| Box::pin(exec::run_update(op)),
    );
    Ok((stack.stack_id, Some(running)))
}

/// What an update reads of the stack before it starts: not a clone of the whole record, which
/// copies every event of the stack's history and every resource.
struct Head {
    stack_id: String,
    stack_name: String,
    template_body: String,
    original_body: Option<String>,
    parameters: Vec<crate::state::StoredParam>,
    tags: Vec<(String, String)>,
    notification_arns: Vec<String>,
    status: StackStatus,
}
