//! The Amazon States Language: definition validation (`validate`), paths (`path`), payload
//! templates (`data`), intrinsic functions (`intrinsic`), Choice rules (`choice`) and the
//! interpreter (`run`), which emits AWS's history events through an [`Exec`] and reaches the
//! world only through [`Integrations`] (Task resources, task tokens).

pub mod choice;
pub mod data;
pub mod intrinsic;
pub mod jsonata;
#[cfg(test)]
mod jsonata_js_table;
mod jsonata_number;
mod jsonata_states;
mod jsonata_time;
mod jsonata_words;
pub mod path;
#[cfg(test)]
mod quota_tests;
pub mod reader;
#[cfg(test)]
mod recorded_tests;
pub mod run;
pub mod validate;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// A state's or an execution's failure: AWS's error name and cause.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub error: String,
    pub cause: String,
}

impl Failure {
    pub fn new(error: impl Into<String>, cause: impl Into<String>) -> Self {
        Failure {
            error: error.into(),
            cause: cause.into(),
        }
    }

    pub fn runtime(cause: impl Into<String>) -> Self {
        Failure::new("States.Runtime", cause)
    }

    /// Errors no Retry or Catch handles (AWS: States.ALL does not match them).
    /// States.DataLimitExceeded is not one of them: AWS's documentation says States.ALL does
    /// not catch it, but its recorded executions (`error_handling/test_states_errors`) show a
    /// Task's oversized result failing the Task (TaskFailed) and caught by `States.ALL` as by
    /// its own name; cumulo follows the recordings.
    pub fn terminal(&self) -> bool {
        matches!(
            self.error.as_str(),
            "States.Runtime" | "States.QueryEvaluationError"
        )
    }
}

/// Step Functions' quota on a task's result, a state's output and an execution's input: bytes
/// of their JSON text in UTF-8 (<https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html>,
/// "Maximum input or output size for a task, state, or execution").
pub const PAYLOAD_QUOTA: usize = 262_144;

/// `v` if it fits the payload quota; else States.DataLimitExceeded naming `what` (a Task's
/// resource or a state's name) in AWS's recorded wording. AWS documents the error for a
/// connector's output, a state's output and a state's input after Parameters; it has been
/// recorded only for outputs, so an oversized input (and a catcher's output) is reported in
/// the same words, naming the state.
pub fn within_quota(v: Value, what: &str) -> Result<Value, Failure> {
    if json_len(&v) <= PAYLOAD_QUOTA {
        return Ok(v);
    }
    Err(Failure::new(
        "States.DataLimitExceeded",
        format!(
            "The state/task '{what}' returned a result with a size exceeding the maximum number of bytes service limit."
        ),
    ))
}

/// The length of a value's JSON text, counted without building the text: every state's
/// payload is measured against the quota, and may be up to 256 KiB.
pub fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a Value to a counter cannot fail: it has no I/O and only string keys.
    let _ = serde_json::to_writer(&mut count, v);
    count.0
}

/// One history event as GetExecutionHistory answers it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub id: u64,
    pub previous: u64,
    pub timestamp: f64,
    #[serde(rename = "type")]
    pub kind: String,
    /// `(<member name>, <details>)`, e.g. `("stateEnteredEventDetails", {...})`.
    pub details: Option<(String, Value)>,
}

/// One line of events (the execution's, a branch's, an iteration's): the id the next event
/// names as its previous one.
#[derive(Debug, Default)]
pub struct Lane(AtomicU64);

impl Lane {
    pub fn at(last: u64) -> Self {
        Lane(AtomicU64::new(last))
    }
    pub fn last(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
    pub fn set(&self, id: u64) {
        self.0.store(id, Ordering::SeqCst)
    }
}

/// Where a top-level state starts: what a restarted server resumes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    pub state: String,
    pub input: Value,
    /// When the state was entered (epoch seconds): a Wait resumes with what is left.
    pub entered: f64,
    /// The id of the state's entered event.
    pub entered_id: u64,
    /// The variables in scope when the state was entered: a resumed execution still sees
    /// what earlier states assigned.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub variables: serde_json::Map<String, Value>,
}

/// What the interpreter reaches the world through.
#[async_trait::async_trait]
pub trait Integrations: Send + Sync {
    /// Runs one Task resource with its effective parameters. `token` is the task token for
    /// `.waitForTaskToken` (the call answers; the token's answer is awaited separately).
    async fn call(
        &self,
        exec: &Exec,
        resource: &run::Resource,
        params: Value,
        token: Option<&str>,
    ) -> Result<Value, Failure>;
    /// Waits for SendTaskSuccess/SendTaskFailure on `token`; `heartbeat` seconds between
    /// SendTaskHeartbeat calls before States.Timeout.
    async fn await_token(&self, token: &str, heartbeat: Option<u64>) -> Result<Value, Failure>;
    /// A `.sync`/`.sync:2` resource's end: what the job `submitted` (the call's answer,
    /// recorded as TaskSubmitted) ended with.
    async fn await_sync(
        &self,
        exec: &Exec,
        resource: &run::Resource,
        submitted: Value,
    ) -> Result<Value, Failure> {
        let _ = (exec, resource);
        Ok(submitted)
    }
    /// A new task token registered for this execution.
    fn new_token(&self, exec: &Exec) -> String;
}

/// Receives each event as it is written, with the checkpoint a top-level state entry makes.
pub type Sink = Box<dyn Fn(&Event, Option<&Checkpoint>) + Send + Sync>;

/// A running execution as the interpreter sees it: its context object, its history (each
/// event handed to `sink` as it is written) and its integrations.
pub struct Exec {
    pub context: Value,
    pub region: String,
    history: Mutex<Vec<Event>>,
    sink: Sink,
    pub integrations: std::sync::Arc<dyn Integrations>,
    /// How many seconds a Wait or a retry interval really waits per second asked (1.0; tests
    /// and benchmarks shrink it).
    pub time_scale: f64,
}

pub fn now() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

impl Exec {
    pub fn new(
        context: Value,
        region: String,
        history: Vec<Event>,
        sink: Sink,
        integrations: std::sync::Arc<dyn Integrations>,
    ) -> Self {
        Exec {
            context,
            region,
            history: Mutex::new(history),
            sink,
            integrations,
            time_scale: 1.0,
        }
    }

    pub fn history(&self) -> Vec<Event> {
        self.history
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn last_id(&self) -> u64 {
        self.history
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .last()
            .map_or(0, |e| e.id)
    }

    /// Appends an event after the lane's last one; `checkpoint` marks a top-level state entry.
    pub fn emit_at(
        &self,
        lane: &Lane,
        kind: &str,
        details: Option<(&str, Value)>,
        checkpoint: Option<(&str, &Value, serde_json::Map<String, Value>)>,
    ) -> u64 {
        let mut h = self.history.lock().unwrap_or_else(|p| p.into_inner());
        let id = h.last().map_or(1, |e| e.id + 1);
        let event = Event {
            id,
            previous: lane.last(),
            timestamp: now(),
            kind: kind.to_string(),
            details: details.map(|(k, v)| (k.to_string(), v)),
        };
        let cp = checkpoint.map(|(state, input, variables)| Checkpoint {
            state: state.to_string(),
            input: input.clone(),
            entered: event.timestamp,
            entered_id: id,
            variables,
        });
        (self.sink)(&event, cp.as_ref());
        h.push(event);
        lane.set(id);
        id
    }

    pub fn emit(&self, lane: &Lane, kind: &str, details: Option<(&str, Value)>) -> u64 {
        self.emit_at(lane, kind, details, None)
    }
}
