//! A created resource that waits for signals before it is complete: one with a CreationPolicy
//! `ResourceSignal` (signalled by SignalResource), or an AWS::CloudFormation::WaitCondition on
//! a handle (signalled by a PUT to the handle's URL). The resource stays CREATE_IN_PROGRESS,
//! its dependents wait, the rest of the stack goes on. The wait ends on the Count-th SUCCESS,
//! the first FAILURE, the timeout, or the operation stopping; it sleeps on a channel, never
//! polls.

use super::Op;
use super::resource::CREATE_CANCELLED;
use crate::ops::signal::{HANDLE_TYPE, Registration, Signal, note, waiter_key};
use crate::state::{ResourceRecord, now_ms};
use cumulo_template::ResolvedResource;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

pub(crate) const WAIT_CONDITION_TYPE: &str = "AWS::CloudFormation::WaitCondition";
/// CreationPolicy's default Timeout (PT5M) and its maximum (PT12H, also WaitCondition's
/// 43200 seconds).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);
const MAX_TIMEOUT: Duration = Duration::from_secs(43_200);

/// What a created resource waits for.
pub(super) struct Wait {
    count: usize,
    timeout: Duration,
    /// The handle a WaitCondition waits on (its logical id); `None` for SignalResource.
    handle: Option<String>,
}

/// `PT1H30M10S` as a duration (CreationPolicy's Timeout).
fn iso_duration(text: &str) -> Option<Duration> {
    let rest = text.strip_prefix("PT")?;
    let (mut secs, mut digits) = (0u64, String::new());
    for c in rest.chars() {
        match c {
            '0'..='9' => digits.push(c),
            'H' | 'M' | 'S' => {
                let n: u64 = digits.parse().ok()?;
                digits.clear();
                secs += n * match c {
                    'H' => 3600,
                    'M' => 60,
                    _ => 1,
                };
            }
            _ => return None,
        }
    }
    (digits.is_empty() && !rest.is_empty()).then_some(Duration::from_secs(secs))
}

/// A count or a number of seconds, which templates give as a number or a string.
fn number(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

fn count_of(v: Option<&Value>, logical_id: &str) -> Result<usize, String> {
    match v {
        None => Ok(1),
        Some(v) => number(v)
            .filter(|n| *n >= 1)
            .map(|n| n as usize)
            .ok_or_else(|| {
                format!("cumulo: {logical_id}'s signal Count must be a positive integer")
            }),
    }
}

fn bounded(timeout: Duration, logical_id: &str) -> Result<Duration, String> {
    if timeout > MAX_TIMEOUT {
        return Err(format!(
            "cumulo: {logical_id}'s signal Timeout exceeds the maximum of 43200 seconds (PT12H)"
        ));
    }
    Ok(timeout)
}

impl Op {
    /// What a resource about to be created will wait for, or why its policy cannot be used.
    pub(super) fn wait_of(&self, resolved: &ResolvedResource) -> Result<Option<Wait>, String> {
        let id = &resolved.logical_id;
        if let Some(signal) = resolved
            .creation_policy
            .as_ref()
            .and_then(|p| p.get("ResourceSignal"))
        {
            let timeout = match signal.get("Timeout") {
                None => DEFAULT_TIMEOUT,
                Some(t) => t.as_str().and_then(iso_duration).ok_or_else(|| {
                    format!("cumulo: {id}'s CreationPolicy Timeout {t} is not an ISO 8601 duration such as PT5M")
                })?,
            };
            return Ok(Some(Wait {
                count: count_of(signal.get("Count"), id)?,
                timeout: bounded(timeout, id)?,
                handle: None,
            }));
        }
        if resolved.resource_type != WAIT_CONDITION_TYPE {
            return Ok(None);
        }
        let props = &resolved.properties;
        let url = props.get("Handle").and_then(Value::as_str).ok_or_else(|| {
            format!("Properties validation failed for resource {id} with message: #: required key [Handle] not found")
        })?;
        let timeout = props.get("Timeout").and_then(number).ok_or_else(|| {
            format!("Properties validation failed for resource {id} with message: #: required key [Timeout] not found")
        })?;
        let handle = self
            .inner
            .lock()
            .stacks
            .get(&self.stack_id)
            .and_then(|s| {
                s.resources.values().find(|r| {
                    r.resource_type == HANDLE_TYPE && r.physical_id.as_deref() == Some(url)
                })
            })
            .map(|r| r.logical_id.clone())
            .ok_or_else(|| {
                format!("cumulo: {id}'s Handle {url} is not a WaitConditionHandle of this stack")
            })?;
        Ok(Some(Wait {
            count: count_of(props.get("Count"), id)?,
            timeout: bounded(Duration::from_secs(timeout), id)?,
            handle: Some(handle),
        }))
    }

    /// Waits for `wait`'s signals, writing each one down (with its event) before it is
    /// acknowledged. `Ok` once Count SUCCESS signals arrived (a WaitCondition's record then
    /// carries its `Data`); `Err` with AWS's reason otherwise.
    pub(super) async fn await_signals(
        &self,
        rec: &mut ResourceRecord,
        props_text: &Option<String>,
        wait: Wait,
    ) -> Result<(), String> {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let key = waiter_key(
            &self.stack_id,
            wait.handle.as_deref().unwrap_or(&rec.logical_id),
        );
        let _registration = {
            let mut waiters = self.inner.signals.lock();
            waiters.insert(key.clone(), tx);
            // What the handle received before this wait began counts (taken under the
            // waiters' lock: see `ops::signal::signal_handle`).
            if let Some(handle) = &wait.handle {
                let early = self
                    .inner
                    .lock()
                    .stacks
                    .get(&self.stack_id)
                    .and_then(|s| s.resources.get(handle))
                    .map(|h| h.signals.clone())
                    .unwrap_or_default();
                for s in early {
                    note(&mut rec.signals, s);
                }
            }
            Registration {
                inner: self.inner.clone(),
                key,
            }
        };
        let deadline = tokio::time::Instant::now() + wait.timeout;
        let mut halted = self.halted.subscribe();
        let mut abort = self.abort.clone();
        loop {
            if let Some(verdict) = verdict(rec, &wait) {
                return verdict;
            }
            tokio::select! {
                got = rx.recv() => {
                    let Some((signal, ack)) = got else {
                        return Err(CREATE_CANCELLED.into());
                    };
                    rec.status_reason = Some(format!(
                        "Received {} signal with UniqueId {}",
                        signal.status, signal.unique_id
                    ));
                    note(&mut rec.signals, signal);
                    rec.updated = now_ms();
                    let written = self.put(rec.clone(), props_text.clone()).await;
                    let _ = ack.send(if written {
                        Ok(())
                    } else {
                        Err(crate::error::EngineError::internal(super::PERSIST_FAILED))
                    });
                    if !written {
                        return Err(super::PERSIST_FAILED.into());
                    }
                }
                _ = tokio::time::sleep_until(deadline) => {
                    return Err(timed_out(rec, &wait));
                }
                _ = stopped(&mut halted) => return Err(CREATE_CANCELLED.into()),
                _ = stopped(&mut abort) => return Err(CREATE_CANCELLED.into()),
            }
        }
    }
}

/// Resolves when the watch turns true; never, when its sender is gone.
async fn stopped(rx: &mut tokio::sync::watch::Receiver<bool>) {
    if rx.wait_for(|v| *v).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// The wait's outcome once its signals decide it: the first FAILURE fails it, Count SUCCESS
/// signals complete it.
fn verdict(rec: &mut ResourceRecord, wait: &Wait) -> Option<Result<(), String>> {
    if let Some(f) = rec.signals.iter().find(|s| !s.success()) {
        return Some(Err(match wait.handle {
            Some(_) => format!(
                "WaitCondition received failed message: '{}' for uniqueId: {}",
                f.reason.as_deref().unwrap_or_default(),
                f.unique_id
            ),
            None => format!("Received FAILURE signal with UniqueId {}", f.unique_id),
        }));
    }
    if rec.signals.iter().filter(|s| s.success()).count() < wait.count {
        return None;
    }
    if wait.handle.is_some() || rec.resource_type == WAIT_CONDITION_TYPE {
        rec.attributes = Arc::new(data_attribute(&rec.signals));
    }
    rec.status_reason = None;
    Some(Ok(()))
}

/// A WaitCondition's `Data`: a JSON object of each signal's UniqueId to its Data (null when
/// the signal had none), as a string.
fn data_attribute(signals: &[Signal]) -> Map<String, Value> {
    let data: Map<String, Value> = signals
        .iter()
        .filter(|s| s.success())
        .map(|s| {
            let d = s.data.clone().map(Value::String).unwrap_or(Value::Null);
            (s.unique_id.clone(), d)
        })
        .collect();
    Map::from_iter([(
        "Data".to_string(),
        Value::String(Value::Object(data).to_string()),
    )])
}

fn timed_out(rec: &ResourceRecord, wait: &Wait) -> String {
    let received = rec.signals.iter().filter(|s| s.success()).count();
    match wait.handle {
        Some(_) => format!(
            "WaitCondition timed out. Received {received} conditions when expecting {}",
            wait.count
        ),
        None => format!(
            "Failed to receive {} resource signal(s) within the specified duration",
            wait.count - received
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::iso_duration;
    use std::time::Duration;

    #[test]
    fn iso_durations_read_as_creation_policy_writes_them() {
        assert_eq!(iso_duration("PT5M"), Some(Duration::from_secs(300)));
        assert_eq!(iso_duration("PT1H2M3S"), Some(Duration::from_secs(3723)));
        assert_eq!(iso_duration("PT2S"), Some(Duration::from_secs(2)));
        assert_eq!(iso_duration("5M"), None);
        assert_eq!(iso_duration("PT"), None);
        assert_eq!(iso_duration("PT5"), None);
    }
}
