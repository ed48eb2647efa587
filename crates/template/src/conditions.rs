//! The Conditions block: each condition evaluated once (memoised), cycles between conditions
//! reported, and the boolean functions Fn::Equals/And/Or/Not/Condition.

use crate::Diagnostic;
use crate::NameMap;
use crate::errors;
use crate::intrinsics::Evaluator;
use crate::value::Value;

/// Evaluates every condition. `ev` must be in [`Mode::Conditions`](crate::intrinsics::Mode).
/// Collects one diagnostic per failing condition.
pub fn evaluate_conditions(
    conditions: &NameMap<String, Value>,
    ev: &Evaluator<'_>,
) -> Result<NameMap<String, bool>, Vec<Diagnostic>> {
    let mut state = State {
        conditions,
        done: NameMap::default(),
        visiting: Vec::new(),
    };
    let mut errors = Vec::new();
    for name in conditions.keys() {
        if let Err(e) = state.get(name, ev, None)
            && !errors.iter().any(|x: &Diagnostic| x.message == e.message)
        {
            errors.push(e.with_path(format!("Conditions/{name}")));
        }
    }
    if errors.is_empty() {
        Ok(state.done)
    } else {
        Err(errors)
    }
}

struct State<'c> {
    conditions: &'c NameMap<String, Value>,
    done: NameMap<String, bool>,
    /// The chain of conditions being evaluated, to name a cycle.
    visiting: Vec<String>,
}

impl State<'_> {
    fn get(
        &mut self,
        name: &str,
        ev: &Evaluator<'_>,
        from: Option<&str>,
    ) -> Result<bool, Diagnostic> {
        if let Some(v) = self.done.get(name) {
            return Ok(*v);
        }
        let Some(body) = self.conditions.get(name) else {
            return Err(match from {
                Some(_) => errors::template_error(format!(
                    "unresolved condition dependency {name} in Condition"
                )),
                None => errors::template_error(format!("unresolved condition dependency {name}")),
            });
        };
        if let Some(pos) = self.visiting.iter().position(|n| n == name) {
            // Start the cycle at its first condition in template order, so the same cycle
            // met from another member reads the same (and is reported once).
            let mut cycle: Vec<String> = self.visiting.iter().skip(pos).cloned().collect();
            let first = cycle
                .iter()
                .enumerate()
                .min_by_key(|(_, n)| self.conditions.get_index_of(n.as_str()))
                .map_or(0, |(i, _)| i);
            cycle.rotate_left(first);
            return Err(errors::circular_conditions(&cycle));
        }
        self.visiting.push(name.to_string());
        let result = eval_body(self, body, ev);
        self.visiting.pop();
        let value = result?;
        self.done.insert(name.to_string(), value);
        Ok(value)
    }
}

/// A condition body must be a boolean function.
fn eval_body(state: &mut State<'_>, body: &Value, ev: &Evaluator<'_>) -> Result<bool, Diagnostic> {
    let Some((key, _)) = single_key(body) else {
        return Err(not_boolean());
    };
    if !matches!(
        key,
        "Fn::Equals" | "Fn::And" | "Fn::Or" | "Fn::Not" | "Condition"
    ) {
        return Err(not_boolean());
    }
    let current = state.visiting.last().cloned();
    let mut lookup = |n: &str| state.get(n, ev, current.as_deref());
    eval_bool(ev, body, &mut lookup)
}

fn not_boolean() -> Diagnostic {
    errors::format_error(
        "Conditions can only be boolean operations on parameters and other conditions",
    )
}

fn single_key(v: &Value) -> Option<(&str, &Value)> {
    let obj = v.as_object()?;
    if obj.len() != 1 {
        return None;
    }
    obj.iter().next().map(|(k, v)| (k.as_str(), v))
}

/// Evaluates a boolean function. `lookup` resolves `{"Condition": name}`.
pub fn eval_bool(
    ev: &Evaluator<'_>,
    v: &Value,
    lookup: &mut dyn FnMut(&str) -> Result<bool, Diagnostic>,
) -> Result<bool, Diagnostic> {
    let Some((key, arg)) = single_key(v) else {
        return Err(not_boolean());
    };
    match key {
        "Condition" => match arg {
            Value::String(name) => lookup(name),
            _ => Err(errors::malformed("Condition")),
        },
        "Fn::Not" => match arg.as_array().map(Vec::as_slice) {
            Some([one]) => Ok(!eval_bool(ev, one, lookup).map_err(|e| nested(e, "Fn::Not"))?),
            _ => Err(errors::malformed("Fn::Not")),
        },
        "Fn::And" | "Fn::Or" => {
            let items = arg
                .as_array()
                .filter(|a| (2..=10).contains(&a.len()))
                .ok_or_else(|| errors::malformed(key))?;
            let mut result = key == "Fn::And";
            // Every operand is evaluated so that errors in any of them are reported, as AWS
            // validates the whole block rather than short-circuiting.
            for item in items {
                let b = eval_bool(ev, item, lookup).map_err(|e| nested(e, key))?;
                if key == "Fn::And" {
                    result &= b;
                } else {
                    result |= b;
                }
            }
            Ok(result)
        }
        "Fn::Equals" => {
            let Some([a, b]) = arg.as_array().map(Vec::as_slice) else {
                return Err(errors::malformed("Fn::Equals"));
            };
            let a = ev.eval(a)?;
            let b = ev.eval(b)?;
            Ok(comparable(a.as_ref()) == comparable(b.as_ref()))
        }
        _ => Err(not_boolean()),
    }
}

/// A non-boolean operand inside And/Or/Not is reported as that function's malformed error.
fn nested(e: Diagnostic, function: &str) -> Diagnostic {
    if e.message == not_boolean().message {
        errors::malformed(function)
    } else {
        e
    }
}

/// Fn::Equals compares values as CloudFormation does: scalars by their string form.
fn comparable(v: Option<&Value>) -> Value {
    match v {
        None => Value::Null,
        Some(Value::Number(n)) => Value::String(n.to_string().into()),
        Some(Value::Bool(b)) => Value::String(b.to_string().into()),
        Some(other) => other.clone(),
    }
}
