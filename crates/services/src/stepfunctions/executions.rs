//! Executions: StartExecution (name idempotency as AWS), StartSyncExecution, StopExecution,
//! DescribeExecution, ListExecutions and GetExecutionHistory, and the runner that drives the
//! interpreter on the server's runtime, writing each history event through to the store.
//!
//! Restart: a STANDARD execution still RUNNING when the service is built again (its first use
//! after `cumulo serve` restarts) resumes from the last top-level state it entered, whose
//! entered event is already in its history; that state runs again from its start.

use super::Sfn;
use super::asl::{self, Checkpoint, Event, Exec, Failure, Lane, run};
use super::integrations::Integ;
use super::ops::{Target, arn_parts, err, machine_missing, now, store_error, validation};
use super::state::{self, Execution, Revision};
use cumulo_wire::AwsError;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Executions running on this server, so StopExecution can end them.
#[derive(Default)]
pub struct Running(Mutex<HashMap<String, tokio::task::AbortHandle>>);

impl Running {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, tokio::task::AbortHandle>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

pub struct StartInput {
    pub target: String,
    pub name: Option<String>,
    pub input: Option<String>,
    pub trace_header: Option<String>,
}

const STATUSES: &[&str] = &[
    "SUCCEEDED",
    "TIMED_OUT",
    "PENDING_REDRIVE",
    "ABORTED",
    "FAILED",
    "RUNNING",
];

fn execution_missing(arn: &str) -> AwsError {
    err(
        "ExecutionDoesNotExist",
        format!("Execution Does Not Exist: '{arn}'"),
    )
}

/// The execution input as AWS accepts it: JSON text (absent is `{}`) within the payload
/// quota, which the model states as the member's length (botocore's `SensitiveData`, max
/// 262144): over it is the ValidationException a length constraint gives, without the
/// sensitive value.
fn parse_input(input: Option<&str>) -> Result<String, AwsError> {
    let text = input.unwrap_or("{}");
    if text.len() > asl::PAYLOAD_QUOTA {
        return Err(validation(format!(
            "1 validation error detected: Value at 'input' failed to satisfy constraint: Member must have length less than or equal to {}",
            asl::PAYLOAD_QUOTA
        )));
    }
    if text.trim().is_empty() {
        return Err(err(
            "InvalidExecutionInput",
            "Invalid State Machine Execution Input: 'Invalid execution input.'",
        ));
    }
    match serde_json::from_str::<Value>(text) {
        Ok(_) => Ok(text.to_string()),
        Err(e) => Err(err(
            "InvalidExecutionInput",
            format!("Invalid State Machine Execution Input: '{e}'"),
        )),
    }
}

fn text(v: &Value) -> String {
    v.to_string()
}

/// The execution's end as its record and its last event state it.
enum End {
    Succeeded(Value),
    Failed(Failure),
    TimedOut,
}

impl Sfn {
    /// What an ARN passed to StartExecution runs: the revision, its version and alias ARNs.
    fn resolve(
        &self,
        target: &str,
    ) -> Result<
        (
            super::state::Machine,
            Revision,
            Option<String>,
            Option<String>,
        ),
        AwsError,
    > {
        Ok(match self.target(target)? {
            Target::Machine(m) => {
                let r = m.revision.clone();
                (m, r, None, None)
            }
            Target::Version(m, v) => {
                let va = format!("{}:{}", m.arn, v.number);
                (m, v.revision, Some(va), None)
            }
            Target::Alias(m, a) => {
                let roll = rand::Rng::random_range(&mut rand::rng(), 0..100u64);
                let mut acc = 0;
                let mut chosen = a.routing[0].0.clone();
                for (arn, w) in &a.routing {
                    acc += w;
                    if roll < acc {
                        chosen = arn.clone();
                        break;
                    }
                }
                let n: u64 = chosen
                    .rsplit(':')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0);
                let v = m
                    .versions
                    .get(&n)
                    .cloned()
                    .ok_or_else(|| machine_missing(&chosen))?;
                let alias = format!("{}:{}", m.arn, a.name);
                (m, v.revision, Some(chosen), Some(alias))
            }
        })
    }

    pub fn start_execution(self: &Arc<Self>, input: StartInput) -> Result<(String, f64), AwsError> {
        let (m, revision, version_arn, alias_arn) = self.resolve(&input.target)?;
        let input_text = parse_input(input.input.as_deref())?;
        let name = input
            .name
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        super::ops::check_name(&name)?;
        let express = m.kind == "EXPRESS";
        let arn = if express {
            format!(
                "arn:aws:states:{}:{}:express:{}:{name}:{}",
                m.region,
                self.account_id,
                m.name,
                uuid::Uuid::new_v4()
            )
        } else {
            format!(
                "arn:aws:states:{}:{}:execution:{}:{name}",
                m.region, self.account_id, m.name
            )
        };
        let start = now();
        let exec = Execution {
            arn: arn.clone(),
            name,
            region: m.region.clone(),
            machine_arn: m.arn.clone(),
            version_arn,
            alias_arn,
            kind: m.kind.clone(),
            revision,
            machine_updated: m.updated.unwrap_or(m.created),
            input: input_text,
            status: "RUNNING".into(),
            output: None,
            error: None,
            cause: None,
            start,
            stop: None,
            checkpoint: None,
            trace_header: input.trace_header,
            redrive_count: 0,
            redrive_date: None,
            last_state: None,
            redriving: false,
        };
        if !express {
            let mut st = self.lock();
            if let Some(old) = st.executions.get(&arn) {
                // Same name and input while it runs: the same execution (AWS's idempotency).
                if old.status == "RUNNING" && old.input == exec.input {
                    return Ok((arn, old.start));
                }
                return Err(err(
                    "ExecutionAlreadyExists",
                    format!("Execution Already Exists: '{arn}'"),
                ));
            }
            self.store
                .write(|tx| state::save_execution(tx, &exec))
                .map_err(store_error)?;
            st.executions.insert(arn.clone(), exec.clone());
        }
        self.launch(exec, Vec::new());
        Ok((arn, start))
    }

    /// StartSyncExecution: runs an EXPRESS machine to its end and answers with the outcome.
    pub async fn start_sync_execution(
        self: &Arc<Self>,
        input: StartInput,
    ) -> Result<Value, AwsError> {
        let (m, revision, _, _) = self.resolve(&input.target)?;
        if m.kind != "EXPRESS" {
            return Err(err(
                "StateMachineTypeNotSupported",
                "This operation is not supported by this type of state machine",
            ));
        }
        let input_text = parse_input(input.input.as_deref())?;
        let name = input
            .name
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        super::ops::check_name(&name)?;
        let arn = format!(
            "arn:aws:states:{}:{}:express:{}:{name}:{}",
            m.region,
            self.account_id,
            m.name,
            uuid::Uuid::new_v4()
        );
        let start = now();
        let exec = Execution {
            arn: arn.clone(),
            name: name.clone(),
            region: m.region.clone(),
            machine_arn: m.arn.clone(),
            version_arn: None,
            alias_arn: None,
            kind: m.kind.clone(),
            revision,
            machine_updated: m.updated.unwrap_or(m.created),
            input: input_text.clone(),
            status: "RUNNING".into(),
            output: None,
            error: None,
            cause: None,
            start,
            stop: None,
            checkpoint: None,
            trace_header: input.trace_header,
            redrive_count: 0,
            redrive_date: None,
            last_state: None,
            redriving: false,
        };
        let end = self.clone().drive(exec, Vec::new()).await;
        let stop = now();
        let mut out = json!({
            "executionArn": arn,
            "stateMachineArn": m.arn,
            "name": name,
            "startDate": start,
            "stopDate": stop,
            "input": input_text,
            "inputDetails": {"included": true},
            "outputDetails": {"included": true},
            "billingDetails": {
                "billedMemoryUsedInMB": 64,
                "billedDurationInMilliseconds": (((stop - start) * 1000.0 / 100.0).ceil().max(1.0) * 100.0) as u64,
            },
        });
        match end {
            End::Succeeded(v) => {
                out["status"] = json!("SUCCEEDED");
                out["output"] = json!(text(&v));
            }
            End::Failed(f) => {
                out["status"] = json!("FAILED");
                out["error"] = json!(f.error);
                if !f.cause.is_empty() {
                    out["cause"] = json!(f.cause);
                }
            }
            End::TimedOut => {
                out["status"] = json!("TIMED_OUT");
                out["error"] = json!("States.Timeout");
            }
        }
        Ok(out)
    }

    /// Runs an execution on the runtime (new, or resumed with its history).
    fn launch(self: &Arc<Self>, exec: Execution, history: Vec<Event>) {
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            eprintln!(
                "cumulo: stepfunctions: no runtime to run execution {}",
                exec.arn
            );
            return;
        };
        let arn = exec.arn.clone();
        let me = self.clone();
        let mut running = self.running.lock();
        let task = rt.spawn(async move {
            let arn = exec.arn.clone();
            me.clone().drive(exec, history).await;
            me.running.lock().remove(&arn);
        });
        running.insert(arn, task.abort_handle());
    }

    /// Runs the interpreter over the execution and records its end.
    async fn drive(self: Arc<Self>, exec: Execution, history: Vec<Event>) -> End {
        let express = exec.kind == "EXPRESS";
        let definition: Value = serde_json::from_str(&exec.revision.definition).unwrap_or_default();
        let input: Value = serde_json::from_str(&exec.input).unwrap_or_default();
        let context = json!({
            "Execution": {
                "Id": exec.arn,
                "Input": input,
                "Name": exec.name,
                "RoleArn": exec.revision.role_arn,
                "StartTime": run::iso(exec.start),
                "RedriveCount": exec.redrive_count,
            },
            "StateMachine": {
                "Id": exec.machine_arn,
                "Name": exec.machine_arn.rsplit(':').next().unwrap_or(""),
            },
        });
        let me = self.clone();
        let arn = exec.arn.clone();
        let sink: asl::Sink = if express {
            Box::new(|_, _| {})
        } else {
            Box::new(move |e: &Event, cp: Option<&Checkpoint>| me.record(&arn, e, cp))
        };
        let integ = Arc::new(Integ::new(self.clone(), exec.arn.clone()));
        let resumed_from = exec.checkpoint.clone();
        let fresh = history.is_empty();
        let runner = Arc::new(Exec::new(
            context,
            exec.region.clone(),
            history,
            sink,
            integ,
        ));
        if fresh {
            let mut d = json!({
                "input": exec.input,
                "inputDetails": {"truncated": false},
                "roleArn": exec.revision.role_arn,
            });
            if let Some(v) = &exec.version_arn {
                d["stateMachineVersionArn"] = json!(v);
            }
            if let Some(a) = &exec.alias_arn {
                d["stateMachineAliasArn"] = json!(a);
            }
            runner.emit(
                &Lane::default(),
                "ExecutionStarted",
                Some(("executionStartedEventDetails", d)),
            );
        }
        let redrive = exec.last_state.clone().filter(|_| exec.redriving && !fresh);
        if redrive.is_some() {
            runner.emit(
                &Lane::at(runner.last_id()),
                "ExecutionRedriven",
                Some((
                    "executionRedrivenEventDetails",
                    json!({"redriveCount": exec.redrive_count}),
                )),
            );
        }
        let work = async {
            match (&resumed_from, &redrive) {
                // A redrive enters the state the execution ended in again.
                (_, Some(from)) => {
                    let lane = Lane::at(runner.last_id());
                    run::run_from(&runner, &definition, from, &lane).await
                }
                (Some(cp), None) if !fresh => {
                    let lane = Lane::at(runner.last_id());
                    run::resume(&runner, &definition, cp, &lane).await
                }
                (_, None) => {
                    let start = definition["StartAt"].as_str().unwrap_or("").to_string();
                    let lane = Lane::at(0);
                    run::run_states(&runner, &definition, start, input.clone(), &lane, true).await
                }
            }
        };
        let end = match definition["TimeoutSeconds"].as_f64() {
            Some(t) => {
                let left = t - (now() - exec.redrive_date.unwrap_or(exec.start));
                match tokio::time::timeout(Duration::from_secs_f64(left.max(0.0)), work).await {
                    Ok(r) => r.map_or_else(End::Failed, End::Succeeded),
                    Err(_) => End::TimedOut,
                }
            }
            None => work.await.map_or_else(End::Failed, End::Succeeded),
        };
        let last = Lane::at(runner.last_id());
        match &end {
            End::Succeeded(v) => runner.emit(
                &last,
                "ExecutionSucceeded",
                Some((
                    "executionSucceededEventDetails",
                    json!({"output": text(v), "outputDetails": {"truncated": false}}),
                )),
            ),
            End::Failed(f) => {
                let mut d = json!({"error": f.error});
                if !f.cause.is_empty() {
                    d["cause"] = json!(f.cause);
                }
                runner.emit(
                    &last,
                    "ExecutionFailed",
                    Some(("executionFailedEventDetails", d)),
                )
            }
            End::TimedOut => runner.emit(
                &last,
                "ExecutionTimedOut",
                Some((
                    "executionTimedOutEventDetails",
                    json!({"error": "States.Timeout"}),
                )),
            ),
        };
        if !express {
            self.finish(&exec.arn, &end);
        }
        end
    }

    /// One history event written through (and the checkpoint a top-level state entry makes).
    fn record(&self, arn: &str, e: &Event, cp: Option<&Checkpoint>) {
        let mut st = self.lock();
        let Some(x) = st.executions.get_mut(arn) else {
            return;
        };
        if x.status != "RUNNING" {
            return;
        }
        if let Some(cp) = cp {
            x.checkpoint = Some(cp.clone());
        }
        // A redrive's first state entry: a restart from here on resumes, not redrives again.
        let redriven = (x.redriving && cp.is_some()).then(|| {
            x.redriving = false;
            x.clone()
        });
        st.events
            .entry(arn.to_string())
            .or_default()
            .push(e.clone());
        let (arn, e, cp) = (arn.to_string(), e.clone(), cp.cloned());
        // Queued in order behind the earlier events and not awaited (the interpreter runs on):
        // a crash loses at most the last moments' events, whose states a resume runs again.
        drop(self.store.write_grouped(move |tx| {
            state::save_event(tx, &arn, &e)?;
            if let Some(cp) = &cp {
                state::save_checkpoint(tx, &arn, Some(cp))?;
            }
            if let Some(x) = &redriven {
                state::save_execution(tx, x)?;
            }
            Ok(())
        }));
    }

    fn finish(&self, arn: &str, end: &End) {
        let mut st = self.lock();
        let Some(x) = st.executions.get(arn) else {
            return;
        };
        if x.status != "RUNNING" {
            return;
        }
        let mut x = x.clone();
        x.stop = Some(now());
        x.last_state = x.checkpoint.take().or(x.last_state);
        x.redriving = false;
        match end {
            End::Succeeded(v) => {
                x.status = "SUCCEEDED".into();
                x.output = Some(text(v));
            }
            End::Failed(f) => {
                x.status = "FAILED".into();
                x.error = Some(f.error.clone());
                x.cause = (!f.cause.is_empty()).then(|| f.cause.clone());
            }
            End::TimedOut => {
                x.status = "TIMED_OUT".into();
                x.error = Some("States.Timeout".into());
            }
        }
        if let Err(e) = self.store.write(|tx| {
            state::save_execution(tx, &x)?;
            state::save_checkpoint(tx, arn, None)
        }) {
            eprintln!("cumulo: stepfunctions: could not record the end of {arn}: {e}");
        }
        st.executions.insert(arn.to_string(), x);
    }

    pub fn describe_execution(&self, arn: &str) -> Result<Execution, AwsError> {
        if !arn.starts_with("arn:") {
            arn_parts(arn, "execution")?;
        }
        self.lock()
            .executions
            .get(arn)
            .cloned()
            .ok_or_else(|| execution_missing(arn))
    }

    pub fn stop_execution(
        &self,
        arn: &str,
        error: Option<String>,
        cause: Option<String>,
    ) -> Result<f64, AwsError> {
        let x = self.describe_execution(arn)?;
        let date = now();
        if x.status != "RUNNING" {
            return Ok(x.stop.unwrap_or(date));
        }
        let mut st = self.lock();
        let mut x = x;
        x.status = "ABORTED".into();
        x.stop = Some(date);
        x.error = error.clone();
        x.cause = cause.clone();
        x.last_state = x.checkpoint.take().or(x.last_state);
        x.redriving = false;
        let events = st.events.entry(arn.to_string()).or_default();
        let mut d = json!({});
        if let Some(e) = &error {
            d["error"] = json!(e);
        }
        if let Some(c) = &cause {
            d["cause"] = json!(c);
        }
        let event = Event {
            id: events.last().map_or(1, |e| e.id + 1),
            previous: 0,
            timestamp: date,
            kind: "ExecutionAborted".into(),
            details: Some(("executionAbortedEventDetails".into(), d)),
        };
        self.store
            .write(|tx| {
                state::save_execution(tx, &x)?;
                state::save_checkpoint(tx, arn, None)?;
                state::save_event(tx, arn, &event)
            })
            .map_err(store_error)?;
        events.push(event);
        st.executions.insert(arn.to_string(), x);
        drop(st);
        if let Some(h) = self.running.lock().remove(arn) {
            h.abort();
        }
        Ok(date)
    }

    /// RedriveExecution: a FAILED, TIMED_OUT or ABORTED STANDARD execution runs again from
    /// the top-level state it ended in (that whole state: a Map or Parallel runs all its
    /// iterations or branches again, where AWS reruns only the unsuccessful ones).
    pub fn redrive_execution(self: &Arc<Self>, arn: &str) -> Result<f64, AwsError> {
        let x = self.describe_execution(arn)?;
        if let Some(reason) = not_redrivable(&x) {
            return Err(err("ExecutionNotRedrivable", reason));
        }
        let date = now();
        let mut x = x;
        x.status = "RUNNING".into();
        x.stop = None;
        x.output = None;
        x.error = None;
        x.cause = None;
        x.redrive_count += 1;
        x.redrive_date = Some(date);
        x.redriving = true;
        let history = {
            let mut st = self.lock();
            self.store
                .write(|tx| state::save_execution(tx, &x))
                .map_err(store_error)?;
            st.executions.insert(arn.to_string(), x.clone());
            st.events.get(arn).cloned().unwrap_or_default()
        };
        self.launch(x, history);
        Ok(date)
    }

    pub fn list_executions(
        &self,
        machine_arn: &str,
        status: Option<&str>,
    ) -> Result<Vec<Execution>, AwsError> {
        if let Some(s) = status
            && !STATUSES.contains(&s)
        {
            return Err(validation(format!(
                "1 validation error detected: Value '{s}' at 'statusFilter' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
                STATUSES.join(", ")
            )));
        }
        let (version, m) = match self.target(machine_arn)? {
            Target::Machine(m) => (None, m),
            Target::Version(m, v) => (Some(format!("{}:{}", m.arn, v.number)), m),
            Target::Alias(m, a) => (Some(format!("{}:{}", m.arn, a.name)), m),
        };
        if m.kind == "EXPRESS" {
            return Err(err(
                "StateMachineTypeNotSupported",
                "This operation is not supported by this type of state machine",
            ));
        }
        let st = self.lock();
        let mut v: Vec<Execution> = st
            .executions
            .values()
            .filter(|x| x.machine_arn == m.arn)
            .filter(|x| {
                version.as_ref().is_none_or(|v| {
                    x.version_arn.as_ref() == Some(v) || x.alias_arn.as_ref() == Some(v)
                })
            })
            .filter(|x| status.is_none_or(|s| x.status == s))
            .cloned()
            .collect();
        v.sort_by(|a, b| b.start.total_cmp(&a.start));
        Ok(v)
    }

    pub fn history(&self, arn: &str) -> Result<Vec<Event>, AwsError> {
        let x = self.describe_execution(arn)?;
        Ok(self.lock().events.get(&x.arn).cloned().unwrap_or_default())
    }

    /// SendTaskSuccess / SendTaskFailure / SendTaskHeartbeat.
    pub fn send_task(&self, token: &str, signal: super::tokens::Signal) -> Result<(), AwsError> {
        if !super::tokens::well_formed(token) {
            return Err(err("InvalidToken", "Invalid Token: 'Invalid token'"));
        }
        if !self.tokens.signal(token, signal) {
            return Err(err(
                "TaskDoesNotExist",
                "Task Timed Out: 'Provided task does not exist anymore'",
            ));
        }
        Ok(())
    }

    /// Waits for a (nested) execution's end; its record.
    pub async fn wait_for(&self, arn: &str) -> Result<Execution, AwsError> {
        loop {
            let x = self.describe_execution(arn)?;
            if x.status != "RUNNING" {
                return Ok(x);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Resumes every STANDARD execution the store holds as RUNNING.
pub fn resume_all(sfn: &Arc<Sfn>) {
    let todo: Vec<(Execution, Vec<Event>)> = {
        let st = sfn.lock();
        st.executions
            .values()
            .filter(|x| x.status == "RUNNING")
            .map(|x| {
                (
                    x.clone(),
                    st.events.get(&x.arn).cloned().unwrap_or_default(),
                )
            })
            .collect()
    };
    for (x, history) in todo {
        sfn.launch(x, history);
    }
}

/// Why an execution cannot be redriven (AWS's redriveStatusReason), if it cannot.
fn not_redrivable(x: &Execution) -> Option<String> {
    match x.status.as_str() {
        "FAILED" | "TIMED_OUT" | "ABORTED" if x.last_state.is_some() => None,
        "FAILED" | "TIMED_OUT" | "ABORTED" => Some(format!(
            "Execution is {} before entering any state and cannot be redriven",
            x.status
        )),
        s => Some(format!("Execution is {s} and cannot be redriven")),
    }
}

/// DescribeExecution's answer.
pub fn execution_json(x: &Execution) -> Value {
    let mut v = json!({
        "executionArn": x.arn,
        "stateMachineArn": x.machine_arn,
        "name": x.name,
        "status": x.status,
        "startDate": x.start,
        "input": x.input,
        "inputDetails": {"included": true},
        "redriveCount": 0,
    });
    if let Some(s) = x.stop {
        v["stopDate"] = json!(s);
    }
    if let Some(o) = &x.output {
        v["output"] = json!(o);
        v["outputDetails"] = json!({"included": true});
    }
    if let Some(e) = &x.error {
        v["error"] = json!(e);
    }
    if let Some(c) = &x.cause {
        v["cause"] = json!(c);
    }
    if let Some(a) = &x.version_arn {
        v["stateMachineVersionArn"] = json!(a);
    }
    if let Some(a) = &x.alias_arn {
        v["stateMachineAliasArn"] = json!(a);
    }
    if let Some(t) = &x.trace_header {
        v["traceHeader"] = json!(t);
    }
    v["redriveCount"] = json!(x.redrive_count);
    if let Some(d) = x.redrive_date {
        v["redriveDate"] = json!(d);
    }
    match not_redrivable(x) {
        Some(reason) => {
            v["redriveStatus"] = json!("NOT_REDRIVABLE");
            v["redriveStatusReason"] = json!(reason);
        }
        None => v["redriveStatus"] = json!("REDRIVABLE"),
    }
    v
}
