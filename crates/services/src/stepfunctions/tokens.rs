//! Task tokens (`.waitForTaskToken` and activities): each token's answer (SendTaskSuccess or
//! SendTaskFailure) and heartbeats, and each activity's queue of scheduled tasks that
//! GetActivityTask long-polls. Tokens live in memory: an execution resumed after a restart
//! schedules its task again with a new token.

use super::asl::Failure;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::{Notify, mpsc};

/// What a token's waiter is told.
pub enum Signal {
    Heartbeat,
    Done(Result<Value, Failure>),
}

/// An activity task waiting for a worker: its token, its input, and who to tell the worker's
/// name when one takes it.
struct Scheduled {
    token: String,
    input: String,
    taken: tokio::sync::oneshot::Sender<String>,
}

#[derive(Default)]
pub struct Tokens {
    senders: Mutex<HashMap<String, mpsc::UnboundedSender<Signal>>>,
    receivers: Mutex<HashMap<String, mpsc::UnboundedReceiver<Signal>>>,
    /// Per activity ARN: tasks not yet handed to a worker.
    queues: Mutex<HashMap<String, VecDeque<Scheduled>>>,
    arrived: Notify,
}

/// Whether a token has the shape this server issues (AWS answers InvalidToken otherwise).
pub fn well_formed(token: &str) -> bool {
    use base64::Engine;
    token.len() <= 2048
        && base64::engine::general_purpose::STANDARD
            .decode(token)
            .ok()
            .and_then(|d| String::from_utf8(d).ok())
            .is_some_and(|s| s.starts_with("arn:") && s.contains('#'))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Tokens {
    /// A new token: opaque base64 naming the execution, as AWS's are opaque.
    pub fn issue(&self, execution: &str) -> String {
        use base64::Engine;
        let raw = format!("{execution}#{}", uuid::Uuid::new_v4());
        let token = base64::engine::general_purpose::STANDARD.encode(raw);
        let (tx, rx) = mpsc::unbounded_channel();
        lock(&self.senders).insert(token.clone(), tx);
        lock(&self.receivers).insert(token.clone(), rx);
        token
    }

    /// Delivers a worker's answer; false when no task waits on the token.
    pub fn signal(&self, token: &str, s: Signal) -> bool {
        let done = matches!(s, Signal::Done(_));
        let mut senders = lock(&self.senders);
        let ok = senders.get(token).is_some_and(|tx| tx.send(s).is_ok());
        if done {
            senders.remove(token);
        }
        ok
    }

    /// Waits for the token's answer; `heartbeat` seconds without a signal is
    /// States.HeartbeatTimeout.
    pub async fn wait(&self, token: &str, heartbeat: Option<f64>) -> Result<Value, Failure> {
        let Some(mut rx) = lock(&self.receivers).remove(token) else {
            return Err(Failure::runtime(format!("unknown task token {token}")));
        };
        let out = loop {
            let next = match heartbeat {
                Some(h) => {
                    match tokio::time::timeout(Duration::from_secs_f64(h), rx.recv()).await {
                        Ok(n) => n,
                        // AWS reports a missed heartbeat as States.Timeout (recorded).
                        Err(_) => break Err(Failure::new("States.Timeout", "")),
                    }
                }
                None => rx.recv().await,
            };
            match next {
                Some(Signal::Heartbeat) => continue,
                Some(Signal::Done(r)) => break r,
                None => break Err(Failure::runtime("the task token was dropped")),
            }
        };
        lock(&self.senders).remove(token);
        out
    }

    /// Schedules an activity task; the receiver gets the name of the worker that takes it.
    pub fn enqueue(
        &self,
        activity: &str,
        token: String,
        input: String,
    ) -> tokio::sync::oneshot::Receiver<String> {
        let (taken, rx) = tokio::sync::oneshot::channel();
        lock(&self.queues)
            .entry(activity.to_string())
            .or_default()
            .push_back(Scheduled {
                token,
                input,
                taken,
            });
        self.arrived.notify_waiters();
        rx
    }

    /// GetActivityTask: the next scheduled task (token, input) of the activity, waiting up to
    /// `wait`; a task whose execution has gone is skipped.
    pub async fn poll(
        &self,
        activity: &str,
        worker: &str,
        wait: Duration,
    ) -> Option<(String, String)> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let notified = self.arrived.notified();
            loop {
                let next = lock(&self.queues)
                    .get_mut(activity)
                    .and_then(VecDeque::pop_front);
                let Some(t) = next else { break };
                if t.taken.send(worker.to_string()).is_ok() {
                    return Some((t.token, t.input));
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return None;
            }
        }
    }
}
