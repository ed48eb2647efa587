//! SignalResource, and the PUT to a WaitConditionHandle's URL: the signals that complete a
//! resource with a CreationPolicy or an AWS::CloudFormation::WaitCondition.
//!
//! A resource waiting for signals registers a channel here (see `exec/signals.rs`); a signal
//! is handed to it and answered only once the waiting resource has written it down (its
//! record carries the signals it received, its event says "Received SUCCESS signal with
//! UniqueId X"), so an acknowledged signal survives a restart. A handle's signals that arrive
//! while no WaitCondition waits on it are kept on the handle's record, as AWS keeps them, and
//! counted by the WaitCondition that starts later.

use super::common::*;
use crate::api::Caller;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::status::StackStatus;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use tokio::sync::{mpsc, oneshot};

/// The resource type whose Ref is the URL signals are PUT to.
pub const HANDLE_TYPE: &str = "AWS::CloudFormation::WaitConditionHandle";
/// Where a handle's signals arrive: `{HANDLE_PATH}{token}`.
pub const HANDLE_PATH: &str = "/_cumulo/cfn-signal/";

/// One signal, as SignalResource or a handle's PUT sent it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Signal {
    pub unique_id: String,
    /// `SUCCESS` or `FAILURE`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<String>,
}

impl Signal {
    pub fn success(&self) -> bool {
        self.status == "SUCCESS"
    }
}

/// Adds a signal to what a resource received: a UniqueId already seen is replaced, so it
/// counts once.
pub(crate) fn note(signals: &mut Vec<Signal>, signal: Signal) {
    match signals.iter_mut().find(|s| s.unique_id == signal.unique_id) {
        Some(s) => *s = signal,
        None => signals.push(signal),
    }
}

#[derive(Debug, Clone, Default)]
pub struct SignalResourceInput {
    pub stack_name: String,
    pub logical_resource_id: String,
    pub unique_id: String,
    pub status: String,
}

/// A signal handed to a waiting resource, and where it says it wrote the signal down.
pub(crate) type Delivery = (Signal, oneshot::Sender<Result<(), EngineError>>);

/// The resources waiting for signals, by [`waiter_key`].
#[derive(Default)]
pub(crate) struct Waiters {
    map: Mutex<HashMap<String, mpsc::UnboundedSender<Delivery>>>,
}

/// A resource's key among the waiters; a WaitCondition waiting on a handle is registered under
/// the handle's logical id.
pub(crate) fn waiter_key(stack_id: &str, logical_id: &str) -> String {
    format!("{stack_id}\n{logical_id}")
}

impl Waiters {
    pub(crate) fn lock(&self) -> MutexGuard<'_, HashMap<String, mpsc::UnboundedSender<Delivery>>> {
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Removes a waiter's registration when its wait ends, however it ends.
pub(crate) struct Registration {
    pub inner: Arc<crate::state::Inner>,
    pub key: String,
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.inner.signals.lock().remove(&self.key);
    }
}

async fn deliver(
    tx: mpsc::UnboundedSender<Delivery>,
    signal: Signal,
    refused: impl FnOnce() -> EngineError,
) -> Result<(), EngineError> {
    let (ack, written) = oneshot::channel();
    if tx.send((signal, ack)).is_err() {
        return Err(refused());
    }
    written.await.unwrap_or_else(|_| Err(refused()))
}

pub async fn signal_resource(
    engine: &Engine,
    caller: &Caller,
    input: SignalResourceInput,
) -> Result<(), EngineError> {
    if !matches!(input.status.as_str(), "SUCCESS" | "FAILURE") {
        return Err(EngineError::validation(format!(
            "1 validation error detected: Value '{}' at 'status' failed to satisfy constraint: Member must satisfy enum value set: [SUCCESS, FAILURE]",
            input.status
        )));
    }
    let (key, status) = {
        let st = engine.inner.lock();
        let stack = find_live(&st, caller, &input.stack_name)?;
        let Some(rec) = stack.resources.get(&input.logical_resource_id) else {
            return Err(EngineError::validation(format!(
                "Resource {} does not exist for stack {}",
                input.logical_resource_id, stack.stack_name
            )));
        };
        (
            waiter_key(&stack.stack_id, &rec.logical_id),
            rec.status.clone(),
        )
    };
    let refused = || {
        EngineError::validation(format!(
            "Resource {} is in {status} state and cannot be signaled",
            input.logical_resource_id
        ))
    };
    let tx = engine.inner.signals.lock().get(&key).cloned();
    let Some(tx) = tx else {
        return Err(refused());
    };
    let signal = Signal {
        unique_id: input.unique_id,
        status: input.status,
        reason: None,
        data: None,
    };
    deliver(tx, signal, refused).await
}

/// Why a PUT to a handle's URL was refused.
#[derive(Debug, thiserror::Error)]
pub enum HandleRefusal {
    /// No handle (of a live stack) has this URL.
    #[error("no wait condition handle has this URL")]
    Unknown,
    /// The body is not a signal.
    #[error("{0}")]
    Malformed(String),
    #[error("{0}")]
    Failed(#[from] EngineError),
}

/// Reads a handle PUT's body as cfn-signal sends it: `{"Status", "Reason", "UniqueId", "Data"}`.
pub fn parse_handle_body(body: &[u8]) -> Result<Signal, HandleRefusal> {
    let v: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| HandleRefusal::Malformed(format!("the signal is not valid JSON: {e}")))?;
    let text = |k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
    };
    let status = text("Status").unwrap_or_default();
    if !matches!(status.as_str(), "SUCCESS" | "FAILURE") {
        return Err(HandleRefusal::Malformed(format!(
            "the signal's Status must be SUCCESS or FAILURE, not '{status}'"
        )));
    }
    let Some(unique_id) = text("UniqueId").filter(|u| !u.is_empty()) else {
        return Err(HandleRefusal::Malformed(
            "the signal has no UniqueId".into(),
        ));
    };
    Ok(Signal {
        unique_id,
        status,
        reason: text("Reason"),
        data: text("Data"),
    })
}

/// A signal PUT to a handle's URL (`token` is the part after [`HANDLE_PATH`]): handed to the
/// WaitCondition waiting on the handle, or kept on the handle's record until one does.
pub async fn signal_handle(
    engine: &Engine,
    token: &str,
    signal: Signal,
) -> Result<(), HandleRefusal> {
    let suffix = format!("{HANDLE_PATH}{token}");
    let inner = &engine.inner;
    // The waiters' lock is held while a handle keeps the signal, so that a WaitCondition
    // registering meanwhile (it takes the same lock, then reads the handle) cannot miss it.
    let kept = {
        let waiters = inner.signals.lock();
        let mut st = inner.lock();
        let found = st.stacks.values_mut().find_map(|s| {
            if s.status == StackStatus::DELETE_COMPLETE {
                return None;
            }
            let rec = s.resources.values_mut().find(|r| {
                r.resource_type == HANDLE_TYPE
                    && r.physical_id
                        .as_deref()
                        .is_some_and(|p| p.ends_with(&suffix))
            })?;
            Some((s.stack_id.clone(), rec))
        });
        let Some((stack_id, rec)) = found else {
            return Err(HandleRefusal::Unknown);
        };
        match waiters.get(&waiter_key(&stack_id, &rec.logical_id)) {
            Some(tx) => Err(tx.clone()),
            None => {
                note(&mut rec.signals, signal.clone());
                Ok((stack_id, rec.clone()))
            }
        }
    };
    let (stack_id, handle) = match kept {
        Ok(kept) => kept,
        Err(tx) => {
            return Ok(deliver(tx, signal, || {
                EngineError::validation("the wait condition stopped waiting")
            })
            .await?);
        }
    };
    inner
        .save_transition_grouped(&stack_id, Some(&handle), None, None)
        .await?;
    Ok(())
}
