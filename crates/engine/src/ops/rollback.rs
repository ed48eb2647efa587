//! RollbackStack, ContinueUpdateRollback, CancelUpdateStack.

use super::common::*;
use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::exec;
use crate::ops::create::launch;
use crate::state::{OpRecord, StackRecord, State};
use crate::status::StackStatus;

pub async fn rollback_stack(
    engine: &Engine,
    caller: &Caller,
    input: RollbackStackInput,
) -> Result<StackIdOutput, EngineError> {
    let token = input
        .client_request_token
        .clone()
        .unwrap_or_else(|| caller.request_id.clone());
    let retain_except_on_create = input.retain_except_on_create.unwrap_or(false);
    let (stack_id, stack_name, status) = {
        let mut st = engine.inner.lock();
        let stack = find_live(&st, caller, &input.stack_name)?;
        use StackStatus::*;
        let to = match stack.status {
            CREATE_FAILED => ROLLBACK_IN_PROGRESS,
            UPDATE_FAILED | UPDATE_ROLLBACK_FAILED => UPDATE_ROLLBACK_IN_PROGRESS,
            _ => return Err(cannot_update(stack)),
        };
        let (id, name) = (stack.stack_id.clone(), stack.stack_name.clone());
        begin(
            &mut st,
            engine,
            &id,
            to,
            &token,
            &input.client_request_token,
            &caller.host,
            "RollbackStack",
            retain_except_on_create,
        )?;
        (id, name, to)
    };
    let op = OpRecord {
        token,
        retain_except_on_create,
        ..Default::default()
    };
    let prepared = None;
    let running = launch(
        engine,
        caller,
        &stack_id,
        &stack_name,
        op,
        prepared,
        move |op| {
            Box::pin(async move {
                if status == StackStatus::ROLLBACK_IN_PROGRESS {
                    exec::rollback_create(&op).await
                } else {
                    exec::rollback_update(&op, &[]).await
                }
            })
        },
    );
    exec::wait(&running, engine.inner.config.sync_wait).await;
    Ok(StackIdOutput { stack_id })
}

#[allow(clippy::too_many_arguments)]
fn begin(
    st: &mut State,
    engine: &Engine,
    stack_id: &str,
    to: StackStatus,
    token: &str,
    caller_token: &Option<String>,
    host: &str,
    kind: &str,
    retain_except_on_create: bool,
) -> Result<(), EngineError> {
    let seq = st.next_seq;
    st.next_seq += 1;
    let Some(s) = st.stacks.get_mut(stack_id) else {
        return Err(EngineError::stack_not_found(stack_id));
    };
    s.status = to;
    s.status_reason = Some("User Initiated".into());
    s.op = OpRecord {
        token: token.to_string(),
        caller_token: caller_token.is_some(),
        kind: kind.to_string(),
        retain_except_on_create,
        host: host.to_string(),
        ..Default::default()
    };
    exec::first_event(s, seq, token, Some("User Initiated".into()));
    engine.inner.save_stack_full(s)?;
    Ok(())
}

/// Resources of `stack` that may be skipped: those the rollback failed on.
fn skippable(stack: &StackRecord, logical: &str) -> bool {
    stack
        .resources
        .get(logical)
        .is_some_and(|r| r.status.ends_with("_FAILED"))
        || stack.orphans.iter().any(|r| r.logical_id == logical)
}

/// Checks every ResourcesToSkip entry (following `Nested.Logical` paths) and returns, per
/// stack id, the logical ids to skip in it.
fn plan_skips(
    st: &State,
    stack: &StackRecord,
    paths: &[String],
    out: &mut Vec<(String, Vec<String>)>,
) -> Result<(), EngineError> {
    let mut here = Vec::new();
    let mut nested: Vec<(String, Vec<String>)> = Vec::new();
    for path in paths {
        match path.split_once('.') {
            None => {
                if !skippable(stack, path) {
                    return Err(EngineError::validation(format!(
                        "Nested stack resource {path} not found in stack {} or is not in a state that can be skipped",
                        stack.stack_name
                    )));
                }
                here.push(path.clone());
            }
            Some((first, rest)) => {
                let is_nested = stack
                    .resources
                    .get(first)
                    .is_some_and(|r| r.resource_type == "AWS::CloudFormation::Stack");
                if !is_nested {
                    return Err(EngineError::validation(format!(
                        "Nested stack resource {first} not found in stack {}",
                        stack.stack_name
                    )));
                }
                match nested.iter_mut().find(|(n, _)| n == first) {
                    Some((_, v)) => v.push(rest.to_string()),
                    None => nested.push((first.to_string(), vec![rest.to_string()])),
                }
            }
        }
    }
    for (logical, rest) in nested {
        let child = stack
            .resources
            .get(&logical)
            .and_then(|r| r.physical_id.as_ref())
            .and_then(|id| st.stacks.get(id))
            .filter(|c| c.status == StackStatus::UPDATE_ROLLBACK_FAILED)
            .ok_or_else(|| {
                EngineError::validation(format!(
                    "Nested stack {logical} is not in UPDATE_ROLLBACK_FAILED state"
                ))
            })?;
        plan_skips(st, child, &rest, out)?;
    }
    out.push((stack.stack_id.clone(), here));
    Ok(())
}

pub async fn continue_update_rollback(
    engine: &Engine,
    caller: &Caller,
    input: ContinueUpdateRollbackInput,
) -> Result<(), EngineError> {
    let token = input
        .client_request_token
        .clone()
        .unwrap_or_else(|| caller.request_id.clone());
    let plan = {
        let st = engine.inner.lock();
        let stack = find_live(&st, caller, &input.stack_name)?;
        if stack.status != StackStatus::UPDATE_ROLLBACK_FAILED {
            return Err(cannot_update(stack));
        }
        let mut plan = Vec::new();
        plan_skips(&st, stack, &input.resources_to_skip, &mut plan)?;
        // Nested stacks stuck in UPDATE_ROLLBACK_FAILED are continued before their parent.
        let mut stuck: Vec<(String, Vec<String>)> = Vec::new();
        collect_stuck_children(&st, stack, &mut stuck);
        for (id, skips) in plan {
            match stuck.iter_mut().find(|(s, _)| *s == id) {
                Some((_, v)) => v.extend(skips),
                None => stuck.push((id, skips)),
            }
        }
        stuck
    };
    let root_id = plan.last().map(|(id, _)| id.clone()).unwrap_or_default();
    let mut last = None;
    for (stack_id, skips) in plan {
        let name = {
            let mut st = engine.inner.lock();
            let Some(s) = st.stacks.get(&stack_id) else {
                continue;
            };
            if s.status != StackStatus::UPDATE_ROLLBACK_FAILED {
                continue;
            }
            let name = s.stack_name.clone();
            begin(
                &mut st,
                engine,
                &stack_id,
                StackStatus::UPDATE_ROLLBACK_IN_PROGRESS,
                &token,
                &input.client_request_token,
                &caller.host,
                "ContinueUpdateRollback",
                false,
            )?;
            name
        };
        let op = OpRecord {
            token: token.clone(),
            ..Default::default()
        };
        let running = launch(engine, caller, &stack_id, &name, op, None, move |op| {
            Box::pin(async move { exec::rollback_update(&op, &skips).await })
        });
        if stack_id == root_id {
            last = Some(running);
        } else {
            exec::wait_done(&running).await;
        }
    }
    if let Some(running) = last {
        exec::wait(&running, engine.inner.config.sync_wait).await;
    }
    Ok(())
}

fn collect_stuck_children(st: &State, stack: &StackRecord, out: &mut Vec<(String, Vec<String>)>) {
    for r in stack.resources.values() {
        if r.resource_type != "AWS::CloudFormation::Stack" {
            continue;
        }
        if let Some(child) = r.physical_id.as_ref().and_then(|id| st.stacks.get(id))
            && child.status == StackStatus::UPDATE_ROLLBACK_FAILED
        {
            collect_stuck_children(st, child, out);
            out.push((child.stack_id.clone(), Vec::new()));
        }
    }
}

pub async fn cancel_update_stack(
    engine: &Engine,
    caller: &Caller,
    input: CancelUpdateStackInput,
) -> Result<(), EngineError> {
    let stack_id = {
        let st = engine.inner.lock();
        let stack = find_live(&st, caller, &input.stack_name)?;
        if stack.status != StackStatus::UPDATE_IN_PROGRESS {
            return Err(EngineError::validation(
                "CancelUpdateStack cannot be called from current stack status",
            ));
        }
        stack.stack_id.clone()
    };
    let running = engine
        .inner
        .running
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get(&stack_id)
        .cloned();
    if let Some(running) = running {
        running.abort.send_replace(true);
        exec::wait(&running, engine.inner.config.sync_wait).await;
    }
    Ok(())
}
