//! States with `QueryLanguage: JSONata`: `{% expression %}` strings in Arguments, Output,
//! Assign, Choice `Condition`, Map `Items`/`ItemSelector`, TimeoutSeconds/HeartbeatSeconds,
//! Wait `Seconds`/`Timestamp` and Fail `Error`/`Cause`, evaluated with the `$states` variable
//! (`input`, `result`, `errorOutput`, `context`) and the variables in scope. A failed or
//! undefined expression is `States.QueryEvaluationError` with AWS's cause.

use super::run::{self, Outcome, Scope};
use super::{Exec, Failure, Lane, data, jsonata};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// AWS's limit on one variable's and on one state's assigned variables' size (256 KiB).
const VARIABLE_LIMIT: usize = 256 * 1024;

/// The bindings an expression sees: the variables in scope and `$states`.
fn bindings(ctx: &Value, input: &Value, extra: &[(&str, &Value)]) -> Map<String, Value> {
    let mut vars = ctx
        .get(data::VARS)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut context = ctx.clone();
    if let Some(c) = context.as_object_mut() {
        c.remove(data::VARS);
    }
    let mut states = json!({"input": input, "context": context});
    for (k, v) in extra {
        states[*k] = (*v).clone();
    }
    vars.insert("states".into(), states);
    vars
}

/// A value's type as AWS names it in "returned an unexpected result type" causes.
fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn query_error(cause: String) -> Failure {
    Failure::new("States.QueryEvaluationError", cause)
}

/// The expression inside `{% ... %}`, if `s` is one.
pub(super) fn expression(s: &str) -> Option<&str> {
    s.trim()
        .strip_prefix("{%")
        .and_then(|r| r.strip_suffix("%}"))
        .map(str::trim)
}

/// Evaluates a field's value: every `{% %}` string in it (at any depth) is replaced by its
/// expression's value; `location` names the field as AWS's causes do (`Output/result`).
fn eval(t: &Value, vars: &Map<String, Value>, location: &str) -> Result<Value, Failure> {
    match t {
        Value::String(s) => match expression(s) {
            Some(e) => match jsonata::evaluate_opt(e, &Value::Null, vars) {
                Ok(Some(v)) => Ok(v),
                Ok(None) => Err(query_error(format!(
                    "The JSONata expression '{e}' specified for the field '{location}' returned nothing (undefined)."
                ))),
                Err(jsonata::Error(m)) if m == jsonata::FUNCTION_RESULT => {
                    Err(query_error(format!(
                        "The JSONata expression '{e}' specified for the field '{location}' returned an unsupported result type."
                    )))
                }
                Err(jsonata::Error(m)) => Err(query_error(format!(
                    "The JSONata expression '{e}' specified for the field '{location}' threw an error during evaluation. {m}"
                ))),
            },
            None => Ok(t.clone()),
        },
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                out.insert(k.clone(), eval(v, vars, &format!("{location}/{k}"))?);
            }
            Ok(Value::Object(out))
        }
        Value::Array(a) => Ok(Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, v)| eval(v, vars, &format!("{location}[{i}]")))
                .collect::<Result<_, _>>()?,
        )),
        v => Ok(v.clone()),
    }
}

fn field(holder: &Value, key: &str, vars: &Map<String, Value>) -> Result<Option<Value>, Failure> {
    holder.get(key).map(|t| eval(t, vars, key)).transpose()
}

fn assign(
    holder: &Value,
    vars: &Map<String, Value>,
) -> Result<Option<Map<String, Value>>, Failure> {
    match field(holder, "Assign", vars)? {
        None => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(query_error("The field 'Assign' must be an object".into())),
    }
}

/// A number from a field that may be an expression (TimeoutSeconds, Wait Seconds, ...).
fn number(state: &Value, key: &str, vars: &Map<String, Value>) -> Result<Option<f64>, Failure> {
    let Some(v) = field(state, key, vars)? else {
        return Ok(None);
    };
    match v.as_f64() {
        Some(n) if n >= 0.0 && n.fract() == 0.0 => Ok(Some(n)),
        _ => Err(query_error(format!(
            "The JSONata expression specified for the field '{key}' returned an unexpected result type. Expected 'integer', but was '{}' for value: {v}",
            type_name(&v)
        ))),
    }
}

/// Fails a state whose variables are larger than AWS allows.
pub fn check_size(assigned: &Map<String, Value>) -> Result<(), Failure> {
    let mut total = 0;
    for (k, v) in assigned {
        let size = super::json_len(v);
        if size > VARIABLE_LIMIT {
            return Err(Failure::runtime(format!(
                "The variable '{k}' has a size of {size} bytes, which exceeds the limit of {VARIABLE_LIMIT} bytes for a single variable"
            )));
        }
        total += size;
    }
    if total > VARIABLE_LIMIT {
        return Err(Failure::runtime(format!(
            "The variables assigned in this state have a size of {total} bytes, which exceeds the limit of {VARIABLE_LIMIT} bytes"
        )));
    }
    Ok(())
}

/// A JSONata catcher's output and assignments over `$states.errorOutput`.
pub fn caught(
    exec: &Exec,
    name: &str,
    catcher: &Value,
    raw: &Value,
    error: Value,
    entered: f64,
    scope: &Scope,
) -> Result<(Value, Option<Map<String, Value>>), Failure> {
    let ctx = run::context(exec, name, entered, 0, None, scope);
    let vars = bindings(&ctx, raw, &[("errorOutput", &error)]);
    let out = field(catcher, "Output", &vars)?.unwrap_or(error);
    Ok((out, assign(catcher, &vars)?))
}

/// A JSONata state's work after its entered event.
#[allow(clippy::too_many_arguments)]
pub async fn body(
    exec: &Arc<Exec>,
    name: &str,
    state: &Value,
    kind: &str,
    raw: Value,
    lane: &Lane,
    entered: f64,
    scope: &Scope,
) -> Result<Outcome, Failure> {
    let ctx = run::context(exec, name, entered, 0, None, scope);
    let vars = bindings(&ctx, &raw, &[]);
    let next = || -> Option<String> {
        if state["End"] == Value::Bool(true) {
            None
        } else {
            state["Next"].as_str().map(str::to_string)
        }
    };
    let finish = |holder: &Value, vars: &Map<String, Value>, default: Value| {
        let out = field(holder, "Output", vars)?.unwrap_or(default);
        Ok::<_, Failure>((out, assign(holder, vars)?))
    };
    match kind {
        "Pass" => {
            let (out, a) = finish(state, &vars, raw.clone())?;
            Ok((out, next(), a))
        }
        "Succeed" => {
            let (out, a) = finish(state, &vars, raw.clone())?;
            Ok((out, None, a))
        }
        "Fail" => {
            let text = |k: &str| -> Result<String, Failure> {
                Ok(match field(state, k, &vars)? {
                    None => String::new(),
                    Some(Value::String(s)) => s,
                    Some(v) => v.to_string(),
                })
            };
            Err(Failure::new(text("Error")?, text("Cause")?))
        }
        "Choice" => {
            for (i, rule) in state["Choices"]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let loc = format!("Choices[{i}].Condition");
                let cond = match rule.get("Condition") {
                    Some(c) => eval(c, &vars, &loc)?,
                    None => Value::Bool(false),
                };
                let Value::Bool(hit) = cond else {
                    return Err(query_error(format!(
                        "The JSONata expression specified for the field '{loc}' returned an unexpected result type. Expected 'boolean', but was '{}' for value: {cond}",
                        type_name(&cond)
                    )));
                };
                if hit {
                    let (out, a) = finish(rule, &vars, raw.clone())?;
                    let n = rule["Next"].as_str().unwrap_or("").to_string();
                    return Ok((out, Some(n), a));
                }
            }
            let Some(n) = state["Default"].as_str() else {
                return Err(Failure::new("States.NoChoiceMatched", "No Matches!"));
            };
            let (out, a) = finish(state, &vars, raw.clone())?;
            Ok((out, Some(n.to_string()), a))
        }
        "Wait" => {
            let until = if let Some(s) = number(state, "Seconds", &vars)? {
                entered + s
            } else if let Some(t) = field(state, "Timestamp", &vars)? {
                let shown = t.as_str().map_or_else(|| t.to_string(), str::to_string);
                t.as_str().and_then(run::parse_ts).ok_or_else(|| {
                    query_error(format!(
                        "The Timestamp field does not reference a valid ISO-8601 extended offset date-time format string: {shown}"
                    ))
                })?
            } else {
                entered
            };
            run::sleep(exec, until - super::now()).await;
            let (out, a) = finish(state, &vars, raw.clone())?;
            Ok((out, next(), a))
        }
        "Task" | "Parallel" | "Map" => {
            let mut attempts: Vec<u32> = vec![0; state["Retry"].as_array().map_or(0, Vec::len)];
            let mut retry_count = 0u32;
            let result = loop {
                let ctx = run::context(exec, name, entered, retry_count, None, scope);
                let attempt = match kind {
                    "Task" => {
                        let mut effective_state = state.clone();
                        let vars = bindings(&ctx, &raw, &[]);
                        for k in ["TimeoutSeconds", "HeartbeatSeconds"] {
                            if let Some(n) = number(state, k, &vars)? {
                                effective_state[k] = json!(n);
                            }
                        }
                        let args = |ctx: &Value| {
                            let vars = bindings(ctx, &raw, &[]);
                            Ok(field(state, "Arguments", &vars)?.unwrap_or_else(|| raw.clone()))
                        };
                        run::task(exec, name, &effective_state, &raw, &ctx, lane, &args).await
                    }
                    "Parallel" => {
                        let vars = bindings(&ctx, &raw, &[]);
                        let input =
                            field(state, "Arguments", &vars)?.unwrap_or_else(|| raw.clone());
                        run::parallel(exec, name, state, input, lane, scope).await
                    }
                    _ => {
                        let vars = bindings(&ctx, &raw, &[]);
                        let items = field(state, "Items", &vars)?.unwrap_or_else(|| raw.clone());
                        if !items.is_array() {
                            let e = state["Items"].as_str().and_then(expression).unwrap_or("");
                            return Err(query_error(format!(
                                "The JSONata expression '{e}' specified for the field 'Items' returned an unexpected result type. Expected 'array', but was '{}' for value: {items}",
                                type_name(&items)
                            )));
                        }
                        let select = |ctx: &Value| {
                            let vars = bindings(ctx, &raw, &[]);
                            Ok(field(state, "ItemSelector", &vars)?.unwrap_or(Value::Null))
                        };
                        let mut effective_state = state.clone();
                        for k in ["MaxConcurrency", "ToleratedFailureCount"] {
                            if let Some(n) = number(state, k, &vars)? {
                                effective_state[k] = json!(n);
                            }
                        }
                        if let Some(p) = field(state, "ToleratedFailurePercentage", &vars)? {
                            effective_state["ToleratedFailurePercentage"] = p;
                        }
                        run::map(
                            exec,
                            name,
                            &effective_state,
                            &raw,
                            &ctx,
                            lane,
                            scope,
                            Some((items, &select)),
                        )
                        .await
                    }
                };
                let f = match attempt {
                    Ok(v) => break v,
                    Err(f) => f,
                };
                let Some((i, r)) = run::retrier(state, &f) else {
                    return Err(f);
                };
                let max = r["MaxAttempts"].as_u64().unwrap_or(3) as u32;
                if attempts[i] >= max {
                    return Err(f);
                }
                run::sleep(exec, run::backoff(r, attempts[i])).await;
                attempts[i] += 1;
                retry_count += 1;
            };
            let ctx = run::context(exec, name, entered, retry_count, None, scope);
            let vars = bindings(&ctx, &raw, &[("result", &result)]);
            let (out, a) = finish(state, &vars, result.clone())?;
            Ok((out, next(), a))
        }
        other => Err(Failure::runtime(format!("Unknown state type {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_evaluate_at_any_depth_and_undefined_fails_as_aws_says() {
        let mut vars = Map::new();
        vars.insert("states".into(), json!({"input": {"a": 2}}));
        vars.insert("v".into(), json!("x"));
        let t = json!({"n": "{% $states.input.a * 2 %}", "l": ["{% $v %}", 1], "s": "plain"});
        assert_eq!(
            eval(&t, &vars, "Output"),
            Ok(json!({"n": 4, "l": ["x", 1], "s": "plain"}))
        );
        let f = eval(&json!({"result": "{% $doesNotExist %}"}), &vars, "Output").unwrap_err();
        assert_eq!(f.error, "States.QueryEvaluationError");
        assert_eq!(
            f.cause,
            "The JSONata expression '$doesNotExist' specified for the field 'Output/result' returned nothing (undefined)."
        );
        let f = eval(&json!("{% $fn := function($x){$x} %}"), &vars, "Items").unwrap_err();
        assert_eq!(
            f.cause,
            "The JSONata expression '$fn := function($x){$x}' specified for the field 'Items' returned an unsupported result type."
        );
        let f = eval(&json!("{% $nope(1) %}"), &vars, "Output").unwrap_err();
        assert!(
            f.cause.contains("threw an error during evaluation. "),
            "{}",
            f.cause
        );
    }

    #[test]
    fn assigned_variables_are_held_to_aws_size_limit() {
        let mut a = Map::new();
        a.insert("small".into(), json!("x"));
        assert!(check_size(&a).is_ok());
        a.insert("big".into(), json!("x".repeat(VARIABLE_LIMIT)));
        assert_eq!(check_size(&a).unwrap_err().error, "States.Runtime");
    }
}
