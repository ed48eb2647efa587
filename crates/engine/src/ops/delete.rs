//! DeleteStack.

use super::common::*;
use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::exec;
use crate::ops::create::launch;
use crate::resolve::importers;
use crate::state::{GenerationRows, OpRecord, Running};
use crate::status::StackStatus;

pub async fn delete_stack(
    engine: &Engine,
    caller: &Caller,
    input: DeleteStackInput,
) -> Result<(), EngineError> {
    super::termination::check_delete(engine, caller, &input.stack_name)?;
    if let Some(running) = start_delete(engine, caller, input)? {
        exec::wait(&running, engine.inner.config.sync_wait).await;
    }
    Ok(())
}

/// Starts a deletion; `None` when there is nothing to do (absent, deleted, already deleting).
pub(crate) fn start_delete(
    engine: &Engine,
    caller: &Caller,
    input: DeleteStackInput,
) -> Result<Option<Running>, EngineError> {
    let token = input
        .client_request_token
        .clone()
        .unwrap_or_else(|| caller.request_id.clone());
    let (stack_id, stack_name, blocked, creating) = {
        let mut st = engine.inner.lock();
        let Some(stack) = find(&st, caller, &input.stack_name) else {
            return Ok(None);
        };
        if matches!(
            stack.status,
            StackStatus::DELETE_COMPLETE | StackStatus::DELETE_IN_PROGRESS
        ) {
            return Ok(None);
        }
        // A create in progress is cancelled by the delete, as AWS does: what is in flight
        // (a resource waiting for its signals too) ends CREATE_FAILED "Resource creation
        // cancelled" and the delete takes the stack down.
        let creating = (stack.status == StackStatus::CREATE_IN_PROGRESS)
            .then(|| {
                engine
                    .inner
                    .running
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .get(&stack.stack_id)
                    .cloned()
            })
            .flatten();
        if stack.status.in_progress() && creating.is_none() {
            return Err(EngineError::validation(format!(
                "Stack [{}] cannot be deleted while in status {}",
                stack.stack_name, stack.status
            )));
        }
        if stack.termination_protection {
            return Err(super::termination::protection_refusal(stack));
        }
        if !input.retain_resources.is_empty() {
            if stack.status != StackStatus::DELETE_FAILED {
                return Err(EngineError::validation(format!(
                    "Invalid operation on stack [{}]. RetainResources can only be specified when the stack is in the DELETE_FAILED state.",
                    stack.stack_id
                )));
            }
            if let Some(bad) = input
                .retain_resources
                .iter()
                .find(|l| !stack.resources.contains_key(*l))
            {
                return Err(EngineError::validation(format!(
                    "The specified resources to retain [{bad}] do not exist in the stack"
                )));
            }
        }
        let blocked = stack.outputs.iter().find_map(|o| {
            let name = o.export_name.as_ref()?;
            let users = importers(&st, &caller.region, name, &stack.stack_id);
            (!users.is_empty()).then(|| {
                format!(
                    "Export {name} cannot be deleted as it is in use by {}",
                    crate::resolve::and_list(&users)
                )
            })
        });
        let prior = stack.status;
        let (stack_id, stack_name) = (stack.stack_id.clone(), stack.stack_name.clone());
        let seq = st.next_seq;
        st.next_seq += 1;
        let Some(s) = st.stacks.get_mut(&stack_id) else {
            return Ok(None);
        };
        s.status = StackStatus::DELETE_IN_PROGRESS;
        s.status_reason = Some("User Initiated".into());
        s.op = OpRecord {
            token: token.clone(),
            caller_token: input.client_request_token.is_some(),
            kind: "DeleteStack".into(),
            host: caller.host.clone(),
            ..Default::default()
        };
        for l in &input.retain_resources {
            if let Some(r) = s.resources.get_mut(l) {
                r.deletion_policy = Some("Retain".into());
            }
        }
        exec::first_event(s, seq, &token, Some("User Initiated".into()));
        engine
            .inner
            .save_stack_with(s, &input.retain_resources, GenerationRows::Keep)?;
        (
            stack_id,
            stack_name,
            blocked.map(|reason| (prior, reason)),
            creating,
        )
    };
    if let Some(create) = &creating {
        create.abort.send_replace(true);
    }
    let op = OpRecord {
        token,
        kind: "DeleteStack".into(),
        ..Default::default()
    };
    let running = launch(
        engine,
        caller,
        &stack_id,
        &stack_name,
        op,
        None,
        move |op| {
            Box::pin(async move {
                // The cancelled create finishes its in-flight resources first.
                if let Some(create) = creating {
                    exec::wait_done(&create).await;
                }
                match blocked {
                    // As AWS: the stack goes back to where it was, the reason says why.
                    Some((prior, reason)) => op.set_status(prior, Some(reason)),
                    None => exec::delete_resources(&op, false).await,
                }
            })
        },
    );
    Ok(Some(running))
}
