//! The interpreter: runs a state machine's states from one state to its end, emitting AWS's
//! history events (`<Type>StateEntered/Exited`, Task*, LambdaFunction*, Activity*, Map*,
//! Parallel*) and applying InputPath, Parameters, ResultSelector, ResultPath, OutputPath,
//! Retry and Catch as the Amazon States Language specifies.

use super::{Exec, Failure, Lane, choice, data, path};
use serde_json::{Map, Value, json};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

type Boxed<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a Task's `Resource` names.
#[derive(Debug, Clone, PartialEq)]
pub enum Resource {
    /// `arn:aws:lambda:...:function:name`: the legacy LambdaFunction* events.
    LambdaArn(String),
    /// `arn:aws:states:...:activity:name`.
    Activity(String),
    /// `arn:aws:states:::<service>:<action>[.sync|.sync:2|.waitForTaskToken]`; `service` is
    /// `aws-sdk:<svc>` for the SDK integrations.
    Service {
        arn: String,
        service: String,
        action: String,
        pattern: Pattern,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pattern {
    RequestResponse,
    Sync,
    Sync2,
    WaitForTaskToken,
}

impl Resource {
    pub fn parse(arn: &str) -> Option<Resource> {
        let parts: Vec<&str> = arn.splitn(6, ':').collect();
        if parts.len() < 6 || parts[0] != "arn" {
            return None;
        }
        match (parts[2], parts[5]) {
            ("lambda", rest) if rest.starts_with("function:") => {
                Some(Resource::LambdaArn(arn.to_string()))
            }
            ("states", rest) if rest.starts_with("activity:") => {
                Some(Resource::Activity(arn.to_string()))
            }
            ("states", rest) if parts[3].is_empty() && parts[4].is_empty() => {
                let (rest, pattern) = if let Some(r) = rest.strip_suffix(".waitForTaskToken") {
                    (r, Pattern::WaitForTaskToken)
                } else if let Some(r) = rest.strip_suffix(".sync:2") {
                    (r, Pattern::Sync2)
                } else if let Some(r) = rest.strip_suffix(".sync") {
                    (r, Pattern::Sync)
                } else {
                    (rest, Pattern::RequestResponse)
                };
                let (service, action) = match rest.strip_prefix("aws-sdk:") {
                    Some(r) => {
                        let (s, a) = r.split_once(':')?;
                        (format!("aws-sdk:{s}"), a.to_string())
                    }
                    None => {
                        let (s, a) = rest.split_once(':')?;
                        (s.to_string(), a.to_string())
                    }
                };
                if service.is_empty() || action.is_empty() {
                    return None;
                }
                Some(Resource::Service {
                    arn: arn.to_string(),
                    service,
                    action,
                    pattern,
                })
            }
            _ => None,
        }
    }
}

/// A scope's variables and its default query language: an execution's states share one;
/// a Map iteration or a Parallel branch gets its own copy (it reads the outer variables, and
/// what it assigns stays inside).
pub struct Scope {
    vars: std::sync::Mutex<Map<String, Value>>,
    jsonata: bool,
}

impl Scope {
    fn top(machine: &Value) -> Scope {
        Scope {
            vars: Default::default(),
            jsonata: machine.get("QueryLanguage").and_then(Value::as_str) == Some("JSONata"),
        }
    }

    fn vars(&self) -> Map<String, Value> {
        self.vars.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn inner(&self) -> Scope {
        Scope {
            vars: std::sync::Mutex::new(self.vars()),
            jsonata: self.jsonata,
        }
    }

    fn assign(&self, assigned: &Map<String, Value>) {
        let mut vars = self.vars.lock().unwrap_or_else(|p| p.into_inner());
        for (k, v) in assigned {
            vars.insert(k.clone(), v.clone());
        }
    }
}

/// Where the states of a scope go next.
enum Next {
    State(String, Value),
    End(Value),
}

/// Runs `states` (an object with `States`) from `start` with `input`. `top` marks the
/// execution's own states, whose entries are checkpoints a restart resumes from.
pub fn run_states<'a>(
    exec: &'a Arc<Exec>,
    machine: &'a Value,
    start: String,
    input: Value,
    lane: &'a Lane,
    top: bool,
) -> Boxed<'a, Result<Value, Failure>> {
    Box::pin(async move {
        let scope = Scope::top(machine);
        run_scope(exec, machine, start, input, lane, top, &scope).await
    })
}

/// Runs the execution's states again from the state a checkpoint names (a redrive), with the
/// variables in scope when it was entered: the states that succeeded are not run again, so
/// what they assigned must still be there.
pub fn run_from<'a>(
    exec: &'a Arc<Exec>,
    machine: &'a Value,
    checkpoint: &'a super::Checkpoint,
    lane: &'a Lane,
) -> Boxed<'a, Result<Value, Failure>> {
    Box::pin(async move {
        let scope = Scope::top(machine);
        scope.assign(&checkpoint.variables);
        let (start, input) = (checkpoint.state.clone(), checkpoint.input.clone());
        run_scope(exec, machine, start, input, lane, true, &scope).await
    })
}

/// Runs the states of one scope (see [`run_states`]) with its variables.
fn run_scope<'a>(
    exec: &'a Arc<Exec>,
    machine: &'a Value,
    start: String,
    input: Value,
    lane: &'a Lane,
    top: bool,
    scope: &'a Scope,
) -> Boxed<'a, Result<Value, Failure>> {
    Box::pin(async move {
        let mut name = start;
        let mut input = input;
        loop {
            let Some(state) = machine["States"].get(&name) else {
                return Err(Failure::runtime(format!(
                    "The state '{name}' does not exist"
                )));
            };
            match run_state(exec, machine, &name, state, input, lane, top, None, scope).await? {
                Next::State(n, out) => {
                    name = n;
                    input = out;
                }
                Next::End(out) => return Ok(out),
            }
        }
    })
}

/// Resumes a top-level state entered before a restart (its entered event already written).
pub async fn resume(
    exec: &Arc<Exec>,
    machine: &Value,
    checkpoint: &super::Checkpoint,
    lane: &Lane,
) -> Result<Value, Failure> {
    let name = checkpoint.state.clone();
    let Some(state) = machine["States"].get(&name) else {
        return Err(Failure::runtime(format!(
            "The state '{name}' does not exist"
        )));
    };
    let resumed = Resumed {
        entered: checkpoint.entered,
        entered_id: checkpoint.entered_id,
    };
    let scope = Scope::top(machine);
    scope.assign(&checkpoint.variables);
    match run_state(
        exec,
        machine,
        &name,
        state,
        checkpoint.input.clone(),
        lane,
        true,
        Some(resumed),
        &scope,
    )
    .await?
    {
        Next::State(n, out) => run_scope(exec, machine, n, out, lane, true, &scope).await,
        Next::End(out) => Ok(out),
    }
}

#[derive(Clone, Copy)]
struct Resumed {
    entered: f64,
    entered_id: u64,
}

fn text(v: &Value) -> String {
    v.to_string()
}

fn io(key: &str, name: &str, v: &Value) -> Value {
    let mut m = Map::new();
    m.insert("name".into(), json!(name));
    m.insert(key.into(), json!(text(v)));
    m.insert(format!("{key}Details"), json!({"truncated": false}));
    Value::Object(m)
}

fn opt_path(state: &Value, field: &str, v: Value, ctx: &Value) -> Result<Value, Failure> {
    match state.get(field) {
        None => Ok(v),
        Some(Value::Null) => Ok(json!({})),
        Some(Value::String(p)) => data::read(p, &v, ctx),
        Some(_) => Err(Failure::runtime(format!("{field} must be a path or null"))),
    }
}

fn result_path(state: &Value, raw: Value, result: Value) -> Result<Value, Failure> {
    match state.get("ResultPath") {
        None => Ok(result),
        Some(Value::Null) => Ok(raw),
        Some(Value::String(p)) => path::set(p, raw, result).map_err(Failure::runtime),
        Some(_) => Err(Failure::runtime("ResultPath must be a path or null")),
    }
}

/// The state's context object: the execution's plus `State` (and what `extra` adds).
pub(super) fn context(
    exec: &Exec,
    name: &str,
    entered: f64,
    retry: u32,
    extra: Option<(&str, Value)>,
    scope: &Scope,
) -> Value {
    let mut ctx = exec.context.clone();
    ctx[data::VARS] = Value::Object(scope.vars());
    ctx["State"] = json!({
        "Name": name,
        "EnteredTime": iso(entered),
        "RetryCount": retry,
    });
    if let Some((k, v)) = extra {
        ctx[k] = v;
    }
    ctx
}

pub fn iso(t: f64) -> String {
    chrono::DateTime::from_timestamp_millis((t * 1000.0) as i64)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

fn error_matches(list: &Value, f: &Failure) -> bool {
    list.as_array().is_some_and(|names| {
        names.iter().filter_map(Value::as_str).any(|n| {
            n == f.error
                || (!f.terminal() && n == "States.ALL")
                || (n == "States.TaskFailed" && !f.terminal() && f.error != "States.Timeout")
        })
    })
}

pub(super) async fn sleep(exec: &Exec, seconds: f64) {
    let s = (seconds * exec.time_scale).max(0.0);
    if s > 0.0 {
        tokio::time::sleep(Duration::from_secs_f64(s.min(1e9))).await;
    }
}

/// The seconds a retrier waits before retry `attempt` (0-based).
pub(super) fn backoff(retrier: &Value, attempt: u32) -> f64 {
    let interval = retrier["IntervalSeconds"].as_f64().unwrap_or(1.0);
    let rate = retrier["BackoffRate"].as_f64().unwrap_or(2.0);
    let mut d = interval * rate.powi(attempt as i32);
    if let Some(max) = retrier["MaxDelaySeconds"].as_f64() {
        d = d.min(max);
    }
    if retrier["JitterStrategy"] == "FULL" {
        d = rand::Rng::random_range(&mut rand::rng(), 0.0..=d.max(0.0));
    }
    d
}

#[allow(clippy::too_many_arguments)]
fn run_state<'a>(
    exec: &'a Arc<Exec>,
    machine: &'a Value,
    name: &'a str,
    state: &'a Value,
    raw: Value,
    lane: &'a Lane,
    top: bool,
    resumed: Option<Resumed>,
    scope: &'a Scope,
) -> Boxed<'a, Result<Next, Failure>> {
    Box::pin(async move {
        let kind = state["Type"].as_str().unwrap_or("").to_string();
        let jsonata = match state.get("QueryLanguage").and_then(Value::as_str) {
            Some(l) => l == "JSONata",
            None => scope.jsonata,
        };
        let (entered, entered_id) = match resumed {
            Some(r) => (r.entered, r.entered_id),
            None => {
                let t = super::now();
                let id = exec.emit_at(
                    lane,
                    &format!("{kind}StateEntered"),
                    Some(("stateEnteredEventDetails", io("input", name, &raw))),
                    top.then(|| (name, &raw, scope.vars())),
                );
                (t, id)
            }
        };
        let wrap = |f: Failure| -> Failure {
            if (f.error == "States.Runtime" || f.error == "States.QueryEvaluationError")
                && !f.cause.starts_with("An error occurred while executing")
            {
                Failure::new(
                    f.error,
                    format!(
                        "An error occurred while executing the state '{name}' (entered at the event id #{entered_id}). {}",
                        f.cause
                    ),
                )
            } else {
                f
            }
        };
        let outcome = if jsonata {
            super::jsonata_states::body(exec, name, state, &kind, raw.clone(), lane, entered, scope)
                .await
        } else {
            body(
                exec,
                machine,
                name,
                state,
                &kind,
                raw.clone(),
                lane,
                entered,
                scope,
            )
            .await
        }
        .map_err(wrap)
        // Every state's output is held to the payload quota (before its catchers, as a Task's
        // oversized result is).
        .and_then(|(out, next, assigned)| Ok((super::within_quota(out, name)?, next, assigned)));
        let evaluation_failed = |f: &Failure| {
            if f.error == "States.QueryEvaluationError" {
                // A Map whose own expression failed (not an iteration, which has ended it
                // already) ends with MapStateFailed after the evaluation's event, as recorded.
                let map_ended = exec
                    .history()
                    .last()
                    .is_some_and(|e| e.kind == "MapStateFailed");
                exec.emit(
                    lane,
                    "EvaluationFailed",
                    Some(("evaluationFailedEventDetails", evaluation_details(f, name))),
                );
                if kind == "Map" && !map_ended {
                    exec.emit(lane, "MapStateFailed", None);
                }
            }
        };
        let (output, next, assigned) = match outcome {
            Ok(x) => x,
            Err(f) => match catcher(state, &f) {
                Some(c) => {
                    let err = json!({"Error": f.error, "Cause": f.cause});
                    let caught = if jsonata {
                        super::jsonata_states::caught(exec, name, c, &raw, err, entered, scope)
                    } else {
                        let ctx = context(exec, name, entered, 0, None, scope);
                        let assigned = jsonpath_assign(c, &err, &ctx);
                        result_path(c, raw, err).and_then(|o| Ok((o, assigned?)))
                    };
                    // The catcher's output (the error output placed by its ResultPath or
                    // Output) is the state's output, held to the quota as every output is.
                    let caught = caught
                        .and_then(|(o, a)| Ok((super::within_quota(o, name)?, a)))
                        .map_err(wrap);
                    let (out, assigned) = match caught {
                        Ok(x) => x,
                        Err(f) => {
                            evaluation_failed(&f);
                            return Err(f);
                        }
                    };
                    let next = c["Next"].as_str().unwrap_or("").to_string();
                    (out, Some(next), assigned)
                }
                None => {
                    evaluation_failed(&f);
                    return Err(f);
                }
            },
        };
        let mut exited = io("output", name, &output);
        if let Some(a) = &assigned {
            super::jsonata_states::check_size(a).map_err(wrap)?;
            exited["assignedVariables"] =
                Value::Object(a.iter().map(|(k, v)| (k.clone(), json!(text(v)))).collect());
            exited["assignedVariablesDetails"] = json!({"truncated": false});
            scope.assign(a);
        }
        exec.emit(
            lane,
            &format!("{kind}StateExited"),
            Some(("stateExitedEventDetails", exited)),
        );
        Ok(match next {
            Some(n) => Next::State(n, output),
            None => Next::End(output),
        })
    })
}

/// EvaluationFailed's details: the field AWS's cause names is its `location`.
fn evaluation_details(f: &Failure, state: &str) -> Value {
    let mut d = json!({"error": f.error, "cause": f.cause, "state": state});
    if let Some(rest) = f.cause.split("specified for the field '").nth(1)
        && let Some((location, _)) = rest.split_once('\'')
    {
        d["location"] = json!(location);
    }
    d
}

/// The first retrier matching `f`, with its index.
pub(super) fn retrier<'a>(state: &'a Value, f: &Failure) -> Option<(usize, &'a Value)> {
    state["Retry"].as_array().and_then(|rs| {
        rs.iter()
            .position(|r| error_matches(&r["ErrorEquals"], f))
            .map(|i| (i, &rs[i]))
    })
}

fn catcher<'a>(state: &'a Value, f: &Failure) -> Option<&'a Value> {
    state["Catch"]
        .as_array()?
        .iter()
        .find(|c| error_matches(&c["ErrorEquals"], f))
}

/// A state's output, its `Next` (None at the end) and the variables it assigns.
pub(super) type Outcome = (Value, Option<String>, Option<Map<String, Value>>);

/// A JSONPath state's (or rule's, or catcher's) `Assign`: a template over `src` (the state's
/// result, or its input where it has no result), whose `$name` paths read the variables as
/// they were when the state was entered.
fn jsonpath_assign(
    holder: &Value,
    src: &Value,
    ctx: &Value,
) -> Result<Option<Map<String, Value>>, Failure> {
    match holder.get("Assign") {
        None => Ok(None),
        Some(t) => match data::template(t, src, ctx)? {
            Value::Object(m) => Ok(Some(m)),
            _ => Err(Failure::runtime("Assign must be an object")),
        },
    }
}

/// A state's work after its entered event.
#[allow(clippy::too_many_arguments)]
async fn body(
    exec: &Arc<Exec>,
    machine: &Value,
    name: &str,
    state: &Value,
    kind: &str,
    raw: Value,
    lane: &Lane,
    entered: f64,
    scope: &Scope,
) -> Result<Outcome, Failure> {
    let ctx = context(exec, name, entered, 0, None, scope);
    let assign = |src: &Value| jsonpath_assign(state, src, &ctx);
    let next = || -> Option<String> {
        if state["End"] == Value::Bool(true) {
            None
        } else {
            state["Next"].as_str().map(str::to_string)
        }
    };
    match kind {
        "Pass" => {
            let effective = opt_path(state, "InputPath", raw.clone(), &ctx)?;
            let result = if let Some(r) = state.get("Result") {
                r.clone()
            } else if let Some(p) = state.get("Parameters") {
                super::within_quota(data::template(p, &effective, &ctx)?, name)?
            } else {
                effective
            };
            let assigned = assign(&result)?;
            let out = result_path(state, raw, result)?;
            Ok((opt_path(state, "OutputPath", out, &ctx)?, next(), assigned))
        }
        "Succeed" => {
            let effective = opt_path(state, "InputPath", raw, &ctx)?;
            Ok((opt_path(state, "OutputPath", effective, &ctx)?, None, None))
        }
        "Fail" => {
            let pick = |lit: &str, p: &str| -> Result<String, Failure> {
                if let Some(p) = state.get(p).and_then(Value::as_str) {
                    let v = if super::intrinsic::is_call(p) {
                        super::intrinsic::eval(p, &raw, &ctx)
                            .map_err(|e| Failure::new("States.IntrinsicFailure", e))?
                    } else {
                        data::read(p, &raw, &ctx)?
                    };
                    return Ok(match v {
                        Value::String(s) => s,
                        v => v.to_string(),
                    });
                }
                Ok(state[lit].as_str().unwrap_or("").to_string())
            };
            Err(Failure::new(
                pick("Error", "ErrorPath")?,
                pick("Cause", "CausePath")?,
            ))
        }
        "Choice" => {
            let effective = opt_path(state, "InputPath", raw, &ctx)?;
            let mut chosen = None;
            for rule in state["Choices"].as_array().into_iter().flatten() {
                if choice::matches(rule, &effective, &ctx).map_err(Failure::runtime)? {
                    chosen = rule["Next"]
                        .as_str()
                        .map(|n| (n.to_string(), jsonpath_assign(rule, &effective, &ctx)));
                    break;
                }
            }
            let chosen = chosen.or_else(|| {
                state["Default"]
                    .as_str()
                    .map(|n| (n.to_string(), assign(&effective)))
            });
            let Some((n, assigned)) = chosen else {
                return Err(Failure::new("States.NoChoiceMatched", "No Matches!"));
            };
            Ok((
                opt_path(state, "OutputPath", effective, &ctx)?,
                Some(n),
                assigned?,
            ))
        }
        "Wait" => {
            let effective = opt_path(state, "InputPath", raw, &ctx)?;
            let until = wait_until(state, &effective, &ctx, entered)?;
            sleep(exec, until - super::now()).await;
            let assigned = assign(&effective)?;
            Ok((
                opt_path(state, "OutputPath", effective, &ctx)?,
                next(),
                assigned,
            ))
        }
        "Task" | "Parallel" | "Map" => {
            let effective = opt_path(state, "InputPath", raw.clone(), &ctx)?;
            let mut attempts: Vec<u32> = vec![0; state["Retry"].as_array().map_or(0, Vec::len)];
            let mut retry_count = 0u32;
            let result = loop {
                let ctx = context(exec, name, entered, retry_count, None, scope);
                let params = |ctx: &Value| match state.get("Parameters") {
                    Some(t) => data::template(t, &effective, ctx),
                    None => Ok(effective.clone()),
                };
                let attempt = match kind {
                    "Task" => task(exec, name, state, &effective, &ctx, lane, &params).await,
                    "Parallel" => parallel(exec, name, state, params(&ctx)?, lane, scope).await,
                    _ => map(exec, name, state, &effective, &ctx, lane, scope, None).await,
                };
                let f = match attempt {
                    Ok(v) => break v,
                    Err(f) => f,
                };
                let Some((i, r)) = retrier(state, &f) else {
                    return Err(f);
                };
                let max = r["MaxAttempts"].as_u64().unwrap_or(3) as u32;
                if attempts[i] >= max {
                    return Err(f);
                }
                sleep(exec, backoff(r, attempts[i])).await;
                attempts[i] += 1;
                retry_count += 1;
            };
            let ctx = context(exec, name, entered, retry_count, None, scope);
            let result = match state.get("ResultSelector") {
                Some(t) => data::template(t, &result, &ctx)?,
                None => result,
            };
            let assigned = assign(&result)?;
            let out = result_path(state, raw, result)?;
            let _ = machine;
            Ok((opt_path(state, "OutputPath", out, &ctx)?, next(), assigned))
        }
        other => Err(Failure::runtime(format!("Unknown state type {other}"))),
    }
}

fn wait_until(state: &Value, input: &Value, ctx: &Value, entered: f64) -> Result<f64, Failure> {
    if let Some(s) = state.get("Seconds").and_then(Value::as_f64) {
        return Ok(entered + s);
    }
    if let Some(t) = state.get("Timestamp").and_then(Value::as_str) {
        return parse_ts(t).ok_or_else(|| Failure::runtime(format!("Invalid Timestamp {t}")));
    }
    if let Some(p) = state.get("SecondsPath").and_then(Value::as_str) {
        let v = data::read(p, input, ctx).map_err(|_| {
            Failure::runtime(format!(
                "The SecondsPath parameter does not reference an input value: {p}"
            ))
        })?;
        let Some(n) = v.as_i64() else {
            return Err(Failure::runtime(format!(
                "The SecondsPath parameter cannot be parsed as a long value: {p} == {v}"
            )));
        };
        if n < 0 {
            return Err(Failure::runtime(format!(
                "The SecondsPath parameter references a negative value: {p} == {n}"
            )));
        }
        return Ok(entered + n as f64);
    }
    if let Some(p) = state.get("TimestampPath").and_then(Value::as_str) {
        let v = data::read(p, input, ctx)?;
        let shown = v.as_str().map_or_else(|| v.to_string(), str::to_string);
        return v.as_str().and_then(parse_ts).ok_or_else(|| {
            Failure::runtime(format!(
                "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: {p} == {shown}"
            ))
        });
    }
    Ok(entered)
}

/// An RFC 3339 timestamp as AWS accepts it in Wait states (with `T` and a zone).
pub fn parse_ts(t: &str) -> Option<f64> {
    if !t.contains('T') {
        return None;
    }
    chrono::DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|d| d.timestamp_millis() as f64 / 1000.0)
}

fn resource_type(r: &Resource) -> (String, String) {
    match r {
        Resource::Service {
            service,
            action,
            pattern,
            ..
        } => {
            let suffix = match pattern {
                Pattern::RequestResponse => "",
                Pattern::Sync => ".sync",
                Pattern::Sync2 => ".sync:2",
                Pattern::WaitForTaskToken => ".waitForTaskToken",
            };
            (service.clone(), format!("{action}{suffix}"))
        }
        Resource::LambdaArn(a) | Resource::Activity(a) => (String::new(), a.clone()),
    }
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn task(
    exec: &Arc<Exec>,
    name: &str,
    state: &Value,
    effective: &Value,
    ctx: &Value,
    lane: &Lane,
    params_of: &(dyn Fn(&Value) -> Result<Value, Failure> + Send + Sync),
) -> Result<Value, Failure> {
    let arn = state["Resource"].as_str().unwrap_or("");
    let resource = Resource::parse(arn)
        .ok_or_else(|| Failure::runtime(format!("The resource {arn} is not recognized")))?;
    let token = match &resource {
        Resource::Service {
            pattern: Pattern::WaitForTaskToken,
            ..
        }
        | Resource::Activity(_) => Some(exec.integrations.new_token(exec)),
        _ => None,
    };
    let mut ctx = ctx.clone();
    if let Some(t) = &token {
        ctx["Task"] = json!({"Token": t});
    }
    // The effective input after Parameters (or Arguments) is held to the quota before the
    // resource is called, as AWS documents for States.DataLimitExceeded.
    let params = super::within_quota(params_of(&ctx)?, name)?;
    let timeout = int_field(state, "TimeoutSeconds", effective, &ctx)?;
    let heartbeat = int_field(state, "HeartbeatSeconds", effective, &ctx)?.map(|h| h as u64);
    let (rtype, rname) = resource_type(&resource);
    let detail = |extra: Vec<(&str, Value)>| -> Value {
        let mut m = Map::new();
        m.insert("resourceType".into(), json!(rtype));
        m.insert("resource".into(), json!(rname));
        for (k, v) in extra {
            m.insert(k.into(), v);
        }
        Value::Object(m)
    };
    let work = async {
        match &resource {
            Resource::LambdaArn(a) => {
                exec.emit(
                    lane,
                    "LambdaFunctionScheduled",
                    Some((
                        "lambdaFunctionScheduledEventDetails",
                        scheduled(&params, a, timeout, None),
                    )),
                );
                exec.emit(lane, "LambdaFunctionStarted", None);
                exec.integrations
                    .call(exec, &resource, params.clone(), None)
                    .await
            }
            Resource::Activity(a) => {
                exec.emit(
                    lane,
                    "ActivityScheduled",
                    Some((
                        "activityScheduledEventDetails",
                        scheduled(&params, a, timeout, heartbeat),
                    )),
                );
                // The activity call answers when a worker has taken the task: its name.
                let worker = exec
                    .integrations
                    .call(exec, &resource, params.clone(), token.as_deref())
                    .await?;
                exec.emit(
                    lane,
                    "ActivityStarted",
                    Some(("activityStartedEventDetails", worker)),
                );
                let t = token.clone().unwrap_or_default();
                exec.integrations.await_token(&t, heartbeat).await
            }
            Resource::Service { pattern, .. } => {
                let mut sched = vec![
                    ("region", json!(exec.region)),
                    ("parameters", json!(text(&params))),
                ];
                if let Some(t) = timeout {
                    sched.push(("timeoutInSeconds", json!(t as u64)));
                }
                if let Some(h) = heartbeat {
                    sched.push(("heartbeatInSeconds", json!(h)));
                }
                exec.emit(
                    lane,
                    "TaskScheduled",
                    Some(("taskScheduledEventDetails", detail(sched))),
                );
                exec.emit(
                    lane,
                    "TaskStarted",
                    Some(("taskStartedEventDetails", detail(vec![]))),
                );
                let answer = exec
                    .integrations
                    .call(exec, &resource, params.clone(), token.as_deref())
                    .await?;
                if *pattern != Pattern::RequestResponse {
                    exec.emit(
                        lane,
                        "TaskSubmitted",
                        Some((
                            "taskSubmittedEventDetails",
                            detail(vec![
                                ("output", json!(text(&answer))),
                                ("outputDetails", json!({"truncated": false})),
                            ]),
                        )),
                    );
                    if *pattern != Pattern::WaitForTaskToken {
                        return exec.integrations.await_sync(exec, &resource, answer).await;
                    }
                    let t = token.clone().unwrap_or_default();
                    return exec.integrations.await_token(&t, heartbeat).await;
                }
                Ok(answer)
            }
        }
    };
    let outcome = match timeout {
        Some(t) => match tokio::time::timeout(
            Duration::from_secs_f64((t * exec.time_scale).max(0.001)),
            work,
        )
        .await
        {
            Ok(r) => r,
            Err(_) => Err(Failure::new("States.Timeout", "")),
        },
        None => work.await,
    };
    // Every integration's result is held to the payload quota here, named as AWS names it:
    // the service of an optimized or SDK integration (`lambda`), else the ARN.
    let quota_name = if rtype.is_empty() { &rname } else { &rtype };
    let outcome = outcome.and_then(|v| super::within_quota(v, quota_name));
    let legacy = |k: &str| match &resource {
        Resource::LambdaArn(_) => format!("LambdaFunction{k}"),
        Resource::Activity(_) => format!("Activity{k}"),
        Resource::Service { .. } => format!("Task{k}"),
    };
    let key = |k: &str| {
        let mut s = legacy(k);
        if let Some(c) = s.get(..1) {
            s = format!("{}{}EventDetails", c.to_lowercase(), &s[1..]);
        }
        s
    };
    let is_service = matches!(resource, Resource::Service { .. });
    match outcome {
        Ok(v) => {
            let mut d = vec![
                ("output", json!(text(&v))),
                ("outputDetails", json!({"truncated": false})),
            ];
            if is_service {
                d.extend([("resourceType", json!(rtype)), ("resource", json!(rname))]);
            }
            exec.emit(
                lane,
                &legacy("Succeeded"),
                Some((
                    &key("Succeeded"),
                    Value::Object(d.into_iter().map(|(k, v)| (k.to_string(), v)).collect()),
                )),
            );
            Ok(v)
        }
        Err(f) if f.terminal() => Err(f),
        Err(f) => {
            let which = if f.error == "States.Timeout" || f.error == "States.HeartbeatTimeout" {
                "TimedOut"
            } else {
                "Failed"
            };
            let mut d = Map::new();
            d.insert("error".into(), json!(f.error));
            if !f.cause.is_empty() {
                d.insert("cause".into(), json!(f.cause));
            }
            if is_service {
                d.insert("resourceType".into(), json!(rtype));
                d.insert("resource".into(), json!(rname));
            }
            exec.emit(lane, &legacy(which), Some((&key(which), Value::Object(d))));
            Err(f)
        }
    }
}

/// LambdaFunctionScheduled's and ActivityScheduled's details.
fn scheduled(
    params: &Value,
    resource: &str,
    timeout: Option<f64>,
    heartbeat: Option<u64>,
) -> Value {
    let mut d =
        json!({"input": text(params), "inputDetails": {"truncated": false}, "resource": resource});
    if let Some(t) = timeout {
        d["timeoutInSeconds"] = json!(t as u64);
    }
    if let Some(h) = heartbeat {
        d["heartbeatInSeconds"] = json!(h);
    }
    d
}

/// Polls every future in order until all are done: concurrent work on one task, whose event
/// order is the definition's order whenever no branch has to wait.
async fn join_all<'a, T>(mut futs: Vec<Boxed<'a, T>>) -> Vec<T> {
    let mut out: Vec<Option<T>> = futs.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (i, f) in futs.iter_mut().enumerate() {
            if out[i].is_none() {
                match f.as_mut().poll(cx) {
                    Poll::Ready(v) => out[i] = Some(v),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    out.into_iter().flatten().collect()
}

pub(super) async fn parallel(
    exec: &Arc<Exec>,
    name: &str,
    state: &Value,
    input: Value,
    lane: &Lane,
    scope: &Scope,
) -> Result<Value, Failure> {
    // The branches' input (after Parameters or Arguments) is held to the quota.
    let input = super::within_quota(input, name)?;
    exec.emit(lane, "ParallelStateStarted", None);
    let branches: Vec<&Value> = state["Branches"]
        .as_array()
        .map(|b| b.iter().collect())
        .unwrap_or_default();
    let lanes: Vec<Lane> = branches.iter().map(|_| Lane::at(lane.last())).collect();
    let scopes: Vec<Scope> = branches.iter().map(|_| scope.inner()).collect();
    let futs: Vec<Boxed<'_, Result<Value, Failure>>> = branches
        .iter()
        .zip(&lanes)
        .zip(&scopes)
        .map(|((b, l), s)| {
            let start = b["StartAt"].as_str().unwrap_or("").to_string();
            run_scope(exec, b, start, input.clone(), l, false, s)
        })
        .collect();
    let results = join_all(futs).await;
    lane.set(exec.last_id());
    let mut out = Vec::new();
    for r in results {
        match r {
            Ok(v) => out.push(v),
            Err(f) => {
                exec.emit(lane, "ParallelStateFailed", None);
                return Err(f);
            }
        }
    }
    exec.emit(lane, "ParallelStateSucceeded", None);
    Ok(Value::Array(out))
}

fn int_field(
    state: &Value,
    field: &str,
    input: &Value,
    ctx: &Value,
) -> Result<Option<f64>, Failure> {
    if let Some(v) = state.get(field) {
        return Ok(v.as_f64());
    }
    let pfield = format!("{field}Path");
    let Some(p) = state.get(&pfield).and_then(Value::as_str) else {
        return Ok(None);
    };
    let v = data::read(p, input, ctx)?;
    let float = field == "ToleratedFailurePercentage";
    let ok = if float {
        v.as_f64()
    } else {
        v.as_i64().map(|i| i as f64)
    };
    ok.map(Some).ok_or_else(|| {
        Failure::runtime(format!(
            "The {pfield} field refers to value \"{}\" which is not a valid {}: {p}",
            v.as_str().map_or_else(|| v.to_string(), str::to_string),
            if float { "float" } else { "integer" }
        ))
    })
}

/// A Map iteration not started because an earlier one failed the Map.
const NOT_STARTED: &str = "cumulo.NotStarted";

/// A JSONata Map's items (from `Items`) and its `ItemSelector` applied to one item (the
/// context with `Map.Item` set).
pub(super) type JsonataItems<'a> = (
    Value,
    &'a (dyn Fn(&Value) -> Result<Value, Failure> + Send + Sync),
);

#[allow(clippy::too_many_arguments)]
pub(super) async fn map(
    exec: &Arc<Exec>,
    name: &str,
    state: &Value,
    effective: &Value,
    ctx: &Value,
    lane: &Lane,
    scope: &Scope,
    jsonata: Option<JsonataItems<'_>>,
) -> Result<Value, Failure> {
    let items = match (
        &jsonata,
        state.get("ItemReader"),
        state.get("ItemsPath").and_then(Value::as_str),
    ) {
        (_, Some(r), _) => Value::Array(super::reader::items(exec, r, effective, ctx).await?),
        (Some((items, _)), None, _) => items.clone(),
        (None, None, Some(p)) => data::read(p, effective, ctx)?,
        (None, None, None) => effective.clone(),
    };
    let Value::Array(items) = items else {
        return Err(Failure::runtime(format!(
            "Map state input must be an array, found {}",
            crate::providers::json_type(&items)
        )));
    };
    let processor = state
        .get("ItemProcessor")
        .or_else(|| state.get("Iterator"))
        .cloned()
        .unwrap_or(Value::Null);
    let selector = state
        .get("ItemSelector")
        .or_else(|| state.get("Parameters"));
    let max = int_field(state, "MaxConcurrency", effective, ctx)?.unwrap_or(0.0) as usize;
    let tolerated_count = int_field(state, "ToleratedFailureCount", effective, ctx)?;
    let tolerated_pct = int_field(state, "ToleratedFailurePercentage", effective, ctx)?;
    if tolerated_count.is_some_and(|c| c < 0.0) {
        return Err(Failure::runtime(
            "ToleratedFailureCount cannot be negative.",
        ));
    }
    if tolerated_pct.is_some_and(|p| !(0.0..=100.0).contains(&p)) {
        return Err(Failure::runtime(
            "ToleratedFailurePercentage must be between 0 and 100.",
        ));
    }
    let mut inputs = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let mut c = ctx.clone();
        c["Map"] = json!({"Item": {"Index": i, "Value": item}});
        // An iteration's input made by ItemSelector (or Parameters) is held to the quota.
        inputs.push(match (&jsonata, selector) {
            (Some((_, select)), Some(_)) => super::within_quota(select(&c)?, name)?,
            (None, Some(t)) => super::within_quota(data::template(t, effective, &c)?, name)?,
            (_, None) => item.clone(),
        });
    }
    exec.emit(
        lane,
        "MapStateStarted",
        Some((
            "mapStateStartedEventDetails",
            json!({"length": items.len()}),
        )),
    );
    let limit = Arc::new(tokio::sync::Semaphore::new(if max == 0 {
        1000
    } else {
        max
    }));
    let start = processor["StartAt"].as_str().unwrap_or("").to_string();
    let lanes: Vec<Lane> = inputs.iter().map(|_| Lane::default()).collect();
    let scopes: Vec<Scope> = inputs.iter().map(|_| scope.inner()).collect();
    let shared = lane;
    // As AWS does, no further iteration starts once one has failed the Map.
    let tolerant = tolerated_count.is_some() || tolerated_pct.is_some();
    let broken = std::sync::atomic::AtomicBool::new(false);
    let futs: Vec<Boxed<'_, Result<Value, Failure>>> = inputs
        .into_iter()
        .zip(&lanes)
        .zip(&scopes)
        .enumerate()
        .map(|(i, ((input, l), s))| {
            let limit = limit.clone();
            let processor = &processor;
            let start = start.clone();
            let broken = &broken;
            Box::pin(async move {
                let _permit = limit.acquire_owned().await;
                if broken.load(std::sync::atomic::Ordering::SeqCst) {
                    return Err(Failure::new(NOT_STARTED, ""));
                }
                l.set(shared.last());
                exec.emit(
                    l,
                    "MapIterationStarted",
                    Some((
                        "mapIterationStartedEventDetails",
                        json!({"index": i, "name": name}),
                    )),
                );
                let r = run_scope(exec, processor, start, input, l, false, s).await;
                let before = l.last();
                let kind = if r.is_ok() {
                    "MapIterationSucceeded"
                } else {
                    "MapIterationFailed"
                };
                let key = if r.is_ok() {
                    "mapIterationSucceededEventDetails"
                } else {
                    "mapIterationFailedEventDetails"
                };
                exec.emit(l, kind, Some((key, json!({"index": i, "name": name}))));
                if r.is_err() && !tolerant {
                    broken.store(true, std::sync::atomic::Ordering::SeqCst);
                }
                shared.set(before);
                r
            }) as Boxed<'_, Result<Value, Failure>>
        })
        .collect();
    let results = join_all(futs).await;
    let failures = results.iter().filter(|r| r.is_err()).count();
    let total = results.len();
    let tolerated = failures > 0
        && (tolerated_count.is_some_and(|c| failures as f64 <= c)
            || tolerated_pct
                .is_some_and(|p| total > 0 && failures as f64 * 100.0 / total as f64 <= p));
    if failures > 0 && !tolerated {
        let f = results
            .into_iter()
            .filter_map(Result::err)
            .find(|f| f.error != NOT_STARTED)
            .unwrap_or_else(|| Failure::runtime(""));
        let f = if tolerated_count.is_some() || tolerated_pct.is_some() {
            Failure::new(
                "States.ExceedToleratedFailureThreshold",
                "The specified tolerated failure threshold was exceeded",
            )
        } else {
            f
        };
        exec.emit(lane, "MapStateFailed", None);
        return Err(f);
    }
    exec.emit(lane, "MapStateSucceeded", None);
    Ok(Value::Array(
        results
            .into_iter()
            .map(|r| r.unwrap_or_else(|f| json!({"Error": f.error, "Cause": f.cause})))
            .collect(),
    ))
}
