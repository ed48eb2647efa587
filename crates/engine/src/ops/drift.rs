//! Drift: each resource's recorded properties against what its service reports now (through
//! the provider's [`crate::Provider::read`]), and the two ways to settle it: revert (push the
//! record back through the provider's update) and accept (take the live values into the
//! record).
//!
//! Decisions (seed 002's drift rules):
//! - The comparison walks the keys the RECORD carries: a property the service reports that the
//!   template never declared is the service's default, not drift. Objects are compared member
//!   by member, arrays wholesale (positionally), scalars by their text (`30` equals `"30"`,
//!   which is how the services themselves report numbers).
//! - Both sides go through the provider's canonical twin first, the same helper deploy uses.
//! - A declared empty collection the service does not report is not drift: it is not a
//!   removal intent, and the service has nothing to report for it.
//! - The baseline is what was OBSERVED at deploy time (a create or update reads the resource
//!   back and records it; so do import, revert and accept), restricted to the keys the record
//!   declares: a value the service reports in its own spelling (or a default it filled in)
//!   is then not drift, and a change made since the deploy is. A record without an observation
//!   (written before observations were recorded, or of a type that cannot be read back) falls
//!   back to its intent.
//! - Settling records a new observation (revert: a read after the update; accept: the live
//!   values); a report only reads.

use super::common::find_live;
use crate::api::Caller;
use crate::canonical::canonical;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::provider::{Observed, ProviderContext, ProviderError};
use crate::resolve::{hash_properties, resolve_dynamic};
use crate::state::{ResourceRecord, StackRecord, now_ms};
use serde::Serialize;
use serde_json::{Map, Value};
use std::sync::Arc;

/// One property path whose live value differs from the record.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct PropertyDifference {
    /// `Name`, `Parent.Child`, `List` (arrays are compared whole).
    pub path: String,
    pub expected: Option<Value>,
    pub actual: Option<Value>,
    /// `NOT_EQUAL` | `REMOVE` (the service no longer reports it), as CloudFormation names them.
    pub difference_type: String,
}

/// One resource's drift status.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceDrift {
    pub logical_id: String,
    pub resource_type: String,
    pub physical_id: Option<String>,
    /// `IN_SYNC` | `MODIFIED` | `DELETED` | `NOT_CHECKED` (CloudFormation's
    /// StackResourceDriftStatus).
    pub status: String,
    /// Why it was not checked, or what settling it did.
    pub reason: Option<String>,
    pub differences: Vec<PropertyDifference>,
    /// The baseline and the live values compared, cut to the declared keys, dynamic references
    /// kept literal (DescribeStackResourceDrifts' ExpectedProperties and ActualProperties).
    #[serde(skip)]
    pub expected: Option<Value>,
    #[serde(skip)]
    pub actual: Option<Value>,
}

/// What to do about drift once detected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Settle {
    /// Only report.
    Report,
    /// Push the record back through the provider's update.
    Revert,
    /// Record the live values as the resource's properties.
    Accept,
}

fn context(stack: &StackRecord, rec: &ResourceRecord, token: &str) -> ProviderContext {
    ProviderContext {
        region: stack.region.clone(),
        account_id: stack.account_id.clone(),
        stack_name: stack.stack_name.clone(),
        stack_id: stack.stack_id.clone(),
        logical_id: rec.logical_id.clone(),
        resource_type: rec.resource_type.clone(),
        client_request_token: token.to_string(),
        stack_tags: stack.tags.clone(),
        host: stack.op.host.clone(),
        name_token: String::new(),
    }
}

/// Detects drift on every resource of a stack, and settles it as asked. Only resources in
/// `only` are settled when it is non-empty (all are still reported).
pub async fn drift(
    engine: &Engine,
    caller: &Caller,
    stack_name: &str,
    settle: Settle,
    only: &[String],
) -> Result<Vec<ResourceDrift>, EngineError> {
    let stack = {
        let st = engine.inner.lock();
        find_live(&st, caller, stack_name)?.clone()
    };
    if stack.status.in_progress() {
        return Err(EngineError::validation(format!(
            "Stack {} is in {} state: drift is detected on a stack no operation is running on.",
            stack.stack_name, stack.status
        )));
    }
    let mut out = Vec::new();
    for rec in stack.resources.values() {
        let mut report = ResourceDrift {
            logical_id: rec.logical_id.clone(),
            resource_type: rec.resource_type.clone(),
            physical_id: rec.physical_id.clone(),
            status: "NOT_CHECKED".into(),
            reason: None,
            differences: Vec::new(),
            expected: None,
            actual: None,
        };
        let (Some(physical), Some(provider)) = (
            rec.physical_id.clone(),
            engine.inner.registry.get(&rec.resource_type).cloned(),
        ) else {
            report.reason = Some(format!(
                "cumulo: {} is not emulated (nothing to read back)",
                rec.resource_type
            ));
            out.push(report);
            continue;
        };
        if rec.stub || !rec.status.ends_with("_COMPLETE") {
            report.reason = Some(format!("cumulo: the resource is {}", rec.status));
            out.push(report);
            continue;
        }
        let ctx = context(&stack, rec, &caller.request_id);
        let world = engine.inner.world.clone();
        let expected = match resolve_dynamic(world.as_ref(), &stack.region, &rec.properties).await {
            Ok(v) => v,
            Err(e) => {
                report.reason = Some(e);
                out.push(report);
                continue;
            }
        };
        let observed = match provider.read(&ctx, &physical, &expected).await {
            Ok(Some(o)) => o,
            Ok(None) | Err(ProviderError::NotFound(_)) => {
                report.status = "DELETED".into();
                out.push(report);
                continue;
            }
            Err(e) => {
                report.reason = Some(e.to_string());
                out.push(report);
                continue;
            }
        };
        let rtype = &rec.resource_type;
        let literal_baseline = match &rec.observed {
            Some(o) => restrict(o, &rec.properties),
            None => (*rec.properties).clone(),
        };
        let baseline = match &rec.observed {
            Some(_) => resolve_dynamic(world.as_ref(), &stack.region, &literal_baseline)
                .await
                .unwrap_or_else(|_| expected.clone()),
            None => expected.clone(),
        };
        let want = canonical(&engine.inner.registry, rtype, &baseline);
        let have = canonical(
            &engine.inner.registry,
            rtype,
            &Value::Object(observed.properties.clone()),
        );
        report.differences = compare(&want, &have);
        shown(
            &mut report,
            rec,
            &engine.inner.registry,
            &literal_baseline,
            &have,
        );
        report.status = if report.differences.is_empty() {
            "IN_SYNC"
        } else {
            "MODIFIED"
        }
        .into();
        let chosen = only.is_empty() || only.contains(&rec.logical_id);
        // A report leaves the observation alone: it is the baseline, and recording the
        // drifted values would make the next drift (and a revert) find nothing.
        let mut updated = rec.clone();
        if report.status == "MODIFIED" && chosen {
            match settle {
                Settle::Report => {}
                Settle::Revert => {
                    match provider
                        .update(
                            &ctx,
                            &physical,
                            &Value::Object(observed.properties.clone()),
                            &expected,
                        )
                        .await
                    {
                        Ok(outcome) => {
                            if !outcome.physical_id.is_empty() {
                                updated.physical_id = Some(outcome.physical_id.clone());
                            }
                            updated.attributes = outcome.attributes.clone().into();
                            updated.secret_attributes = crate::mask::secret_names(&outcome);
                            if let Some(effective) = &outcome.effective_properties
                                && !rec.properties.to_string().contains("{{resolve:")
                            {
                                updated.properties = Arc::new(effective.clone());
                            }
                            // What the service holds now is what was pushed.
                            updated.observed = reread(&*provider, &ctx, &physical, &expected)
                                .await
                                .map(|o| Arc::new(observation(&rec.properties, o.properties)));
                            report.reason = Some("reverted to the recorded properties".into());
                        }
                        Err(e) => report.reason = Some(format!("revert failed: {e}")),
                    }
                }
                Settle::Accept => {
                    updated.properties = accept(&rec.properties, &observed.properties).into();
                    updated.attributes =
                        merge_attributes(&rec.attributes, &observed.attributes).into();
                    updated.observed = Some(Arc::new(observation(
                        &rec.properties,
                        observed.properties.clone(),
                    )));
                    report.reason = Some("the live values were recorded".into());
                }
            }
        }
        updated.hash = hash_properties(&updated.properties);
        if updated != *rec {
            updated.updated = now_ms();
            save(engine, &stack.stack_id, updated)?;
        }
        out.push(report);
    }
    Ok(out)
}

/// Fills what a report shows of both sides without a resolved dynamic reference: the literal
/// baseline, the live values cut to the declared keys with references kept literal, and each
/// difference under a reference replaced by the reference itself.
fn shown(
    report: &mut ResourceDrift,
    rec: &ResourceRecord,
    registry: &crate::provider::ProviderRegistry,
    literal_baseline: &Value,
    have: &Value,
) {
    let literal = &*rec.properties;
    report.expected = Some(canonical(registry, &rec.resource_type, literal_baseline));
    let live = match restrict(have, literal) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    report.actual = Some(observation(literal, live));
    if literal.to_string().contains("{{resolve:") {
        for d in &mut report.differences {
            let at = d.path.split('.').try_fold(literal, |v, k| v.get(k));
            if let Some(reference) = at.filter(|v| v.to_string().contains("{{resolve:")) {
                d.expected = Some(reference.clone());
                d.actual = Some(reference.clone());
            }
        }
    }
}

async fn reread(
    provider: &dyn crate::Provider,
    ctx: &ProviderContext,
    physical: &str,
    properties: &Value,
) -> Option<Observed> {
    provider
        .read(ctx, physical, properties)
        .await
        .ok()
        .flatten()
}

/// What is written down as a resource's observed properties: the live properties, with every
/// value the intent holds as a dynamic reference kept as that literal reference. The service
/// reports the resolved secret; the state never stores it in clear (drift resolves the
/// reference again when it compares).
pub(crate) fn observation(literal: &Value, live: Map<String, Value>) -> Value {
    let mut out = Value::Object(live);
    if literal.to_string().contains("{{resolve:") {
        keep_references(literal, &mut out);
    }
    out
}

fn keep_references(literal: &Value, live: &mut Value) {
    match (literal, live) {
        (Value::String(s), live) if s.contains("{{resolve:") => *live = literal.clone(),
        (Value::Object(l), Value::Object(o)) => {
            for (k, v) in l {
                if let Some(w) = o.get_mut(k) {
                    keep_references(v, w);
                }
            }
        }
        (Value::Array(l), Value::Array(o)) => {
            for (v, w) in l.iter().zip(o.iter_mut()) {
                keep_references(v, w);
            }
        }
        _ => {}
    }
}

/// The observation cut to the keys the record declares (members of declared objects too;
/// arrays are compared whole): the drift baseline.
fn restrict(observed: &Value, declared: &Value) -> Value {
    match (observed, declared) {
        (Value::Object(o), Value::Object(d)) => Value::Object(
            d.iter()
                .filter_map(|(k, dv)| o.get(k).map(|ov| (k.clone(), restrict(ov, dv))))
                .collect(),
        ),
        _ => observed.clone(),
    }
}

/// Writes one record back (masked as every record is) and puts it in the stack.
fn save(engine: &Engine, stack_id: &str, rec: ResourceRecord) -> Result<(), EngineError> {
    let mut st = engine.inner.lock();
    let Some(stack) = st.stacks.get_mut(stack_id) else {
        return Ok(());
    };
    let needles = crate::mask::needles(stack, Some(&rec));
    let stored = crate::mask::record(&rec, &needles);
    engine
        .inner
        .save_transition(stack_id, Some(stored.as_ref().unwrap_or(&rec)), None, None)?;
    stack.holds_secrets |= !rec.secret_attributes.is_empty();
    stack.resources.insert(rec.logical_id.clone(), rec);
    Ok(())
}

/// The record with each key it carries taken from the live properties (dropped when the
/// service no longer reports it). Keys the record never declared stay undeclared.
fn accept(recorded: &Value, live: &Map<String, Value>) -> Value {
    let Some(rec) = recorded.as_object() else {
        return recorded.clone();
    };
    let mut out = Map::new();
    for (k, v) in rec {
        match live.get(k) {
            Some(l) => {
                out.insert(k.clone(), l.clone());
            }
            None if is_empty_collection(v) => {
                out.insert(k.clone(), v.clone());
            }
            None => {}
        }
    }
    Value::Object(out)
}

/// Read attributes over recorded ones (a read never drops a key it could not see).
fn merge_attributes(
    recorded: &Map<String, Value>,
    live: &Map<String, Value>,
) -> Map<String, Value> {
    let mut out = recorded.clone();
    for (k, v) in live {
        out.insert(k.clone(), v.clone());
    }
    out
}

fn is_empty_collection(v: &Value) -> bool {
    match v {
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    }
}

/// Scalars compare by their text: services report `30` where templates write `"30"`.
fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| equal(v, w))
        }
        (Value::Null, Value::Null) => true,
        _ => match (scalar_text(a), scalar_text(b)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        },
    }
}

/// The differences between the record (`expected`) and the live properties, walking the
/// record's keys.
pub(crate) fn compare(expected: &Value, actual: &Value) -> Vec<PropertyDifference> {
    let mut out = Vec::new();
    walk("", expected, actual, &mut out);
    out
}

fn walk(path: &str, expected: &Value, actual: &Value, out: &mut Vec<PropertyDifference>) {
    let (Some(e), Some(a)) = (expected.as_object(), actual.as_object()) else {
        if !equal(expected, actual) {
            out.push(PropertyDifference {
                path: path.to_string(),
                expected: Some(expected.clone()),
                actual: Some(actual.clone()),
                difference_type: "NOT_EQUAL".into(),
            });
        }
        return;
    };
    for (k, v) in e {
        let sub = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}.{k}")
        };
        match a.get(k) {
            Some(w) => walk(&sub, v, w, out),
            None if is_empty_collection(v) || v.is_null() => {}
            None => out.push(PropertyDifference {
                path: sub,
                expected: Some(v.clone()),
                actual: None,
                difference_type: "REMOVE".into(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn walks_the_records_keys_and_compares_scalars_by_text() {
        let expected = json!({"VisibilityTimeout": 30, "Tags": [], "Nested": {"A": "1"}});
        let actual = json!({"VisibilityTimeout": "30", "Nested": {"A": 1, "B": 2}, "Extra": "x"});
        assert!(compare(&expected, &actual).is_empty());
    }

    #[test]
    fn reports_changed_and_removed_values() {
        let expected = json!({"DelaySeconds": 5, "Nested": {"A": "1"}, "Gone": "x"});
        let actual = json!({"DelaySeconds": "7", "Nested": {"A": "2"}});
        let d = compare(&expected, &actual);
        assert_eq!(d.len(), 3);
        assert_eq!(d[0].path, "DelaySeconds");
        assert_eq!(d[1].path, "Nested.A");
        assert_eq!(d[2].difference_type, "REMOVE");
    }

    #[test]
    fn accept_takes_live_values_for_recorded_keys_only() {
        let live = json!({"DelaySeconds": "7", "Extra": 1});
        let out = accept(
            &json!({"DelaySeconds": 5, "Tags": []}),
            live.as_object().unwrap_or(&Map::new()),
        );
        assert_eq!(out, json!({"DelaySeconds": "7", "Tags": []}));
    }
}
