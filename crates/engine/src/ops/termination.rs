//! Termination protection: UpdateTerminationProtection, and the protection a nested stack
//! takes from its root (AWS sets it on the root only and refuses a direct DeleteStack of a
//! nested stack whose root is protected; an update of the root that removes the nested stack
//! still deletes it, so the engine's own deletions are not checked here).

use super::common::*;
use crate::api::{Caller, StackIdOutput};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::state::{StackRecord, State};
use crate::status::StackStatus;

pub fn update_termination_protection(
    engine: &Engine,
    caller: &Caller,
    stack_name: &str,
    enable: bool,
) -> Result<StackIdOutput, EngineError> {
    let mut st = engine.inner.lock();
    let stack = find_live(&st, caller, stack_name)?;
    if stack.status == StackStatus::DELETE_IN_PROGRESS {
        return Err(cannot_update(stack));
    }
    if let Some(root) = &stack.root_id {
        return Err(EngineError::validation(format!(
            "Termination protection cannot be set on nested stack [{}]: it is set on its root stack [{root}]",
            stack.stack_name
        )));
    }
    let stack_id = stack.stack_id.clone();
    if let Some(s) = st.stacks.get_mut(&stack_id)
        && s.termination_protection != enable
    {
        s.termination_protection = enable;
        engine.inner.save_stack(s)?;
    }
    Ok(StackIdOutput { stack_id })
}

/// Whether the stack is protected: its own setting, or its root's for a nested stack.
pub(crate) fn protected(st: &State, stack: &StackRecord) -> bool {
    match &stack.root_id {
        Some(root) => st
            .stacks
            .get(root)
            .is_some_and(|r| r.termination_protection),
        None => stack.termination_protection,
    }
}

/// DeleteStack as a client calls it: refused while the stack (or, for a nested stack, its
/// root) is protected.
pub(crate) fn check_delete(
    engine: &Engine,
    caller: &Caller,
    stack_name: &str,
) -> Result<(), EngineError> {
    let st = engine.inner.lock();
    match find(&st, caller, stack_name) {
        Some(s) if s.status != StackStatus::DELETE_COMPLETE && protected(&st, s) => {
            Err(protection_refusal(s))
        }
        _ => Ok(()),
    }
}

pub(crate) fn protection_refusal(stack: &StackRecord) -> EngineError {
    EngineError::validation(format!(
        "Stack [{}] cannot be deleted while TerminationProtection is enabled",
        stack.stack_name
    ))
}
