//! NoEcho attribute values (seed 002's `noEchoAttributes` / `noEchoAttributeNames`): what is
//! written down is masked, what dependents receive is not.
//!
//! A provider reports sensitive attributes per call ([`crate::ProviderOutcome::no_echo`],
//! [`crate::ProviderOutcome::no_echo_attributes`]); the engine keeps the clear values in memory,
//! so `Fn::GetAtt` hands them to dependents in clear (as CloudFormation delivers a NoEcho custom
//! resource's Data), and every string value of them becomes a *needle*: the stored copy of the
//! resource's attributes, of every resource's recorded properties, of the events' properties and
//! of the outputs carries [`MASK`] in its place.
//!
//! The flag is per call and not persisted. After a restart the record holds only the mask, so a
//! later operation that would have to write a property built from it (it can read it back only
//! as `***`) refuses with [`refusal`] instead of sending the mask to a service.

use crate::state::{ResourceRecord, StackRecord, StoredOutput};
use serde_json::{Map, Value};
use std::sync::Arc;

/// What a sensitive value is stored as.
pub(crate) const MASK: &str = "***";

/// The names of the attributes a provider call reported as sensitive, among those it returned.
pub(crate) fn secret_names(outcome: &crate::ProviderOutcome) -> Vec<String> {
    if outcome.no_echo {
        return outcome.attributes.keys().cloned().collect();
    }
    outcome
        .no_echo_attributes
        .iter()
        .filter(|n| outcome.attributes.contains_key(n.as_str()))
        .cloned()
        .collect()
}

/// Every clear sensitive string of the stack (and of `extra`, a record not yet in the map).
/// Empty for almost every stack, which makes masking free for them.
pub(crate) fn needles(stack: &StackRecord, extra: Option<&ResourceRecord>) -> Vec<String> {
    if !stack.holds_secrets && extra.is_none_or(|r| r.secret_attributes.is_empty()) {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    // The previous generation an update keeps may hold values the current one no longer has
    // (a replaced resource's).
    let previous = stack.previous.iter().flat_map(|g| g.resources.values());
    let records = stack.resources.values().chain(previous).chain(extra);
    for r in records {
        for name in &r.secret_attributes {
            if let Some(v) = r.attributes.get(name) {
                collect_strings(v, &mut out);
            }
        }
    }
    out.retain(|s| !s.is_empty() && s != MASK);
    out.sort();
    out.dedup();
    // Longest first, so a needle that contains another is replaced whole.
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(o) => o.values().for_each(|i| collect_strings(i, out)),
        _ => {}
    }
}

/// `text` with every needle replaced by the mask.
pub(crate) fn text(s: &str, needles: &[String]) -> String {
    let mut out = s.to_string();
    for n in needles {
        if out.contains(n.as_str()) {
            out = out.replace(n.as_str(), MASK);
        }
    }
    out
}

/// A JSON value with every needle in every string replaced by the mask.
pub(crate) fn value(v: &Value, needles: &[String]) -> Value {
    match v {
        Value::String(s) => Value::String(text(s, needles)),
        Value::Array(items) => Value::Array(items.iter().map(|i| value(i, needles)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| (k.clone(), value(v, needles)))
                .collect::<Map<_, _>>(),
        ),
        other => other.clone(),
    }
}

/// The copy of a record that is written down: its sensitive attributes, and anything in its
/// attributes or properties carrying a needle, masked. `None` when there is nothing to mask.
pub(crate) fn record(r: &ResourceRecord, needles: &[String]) -> Option<ResourceRecord> {
    if needles.is_empty() && r.secret_attributes.is_empty() {
        return None;
    }
    let mut out = r.clone();
    out.attributes = Arc::new(
        r.attributes
            .iter()
            .map(|(k, v)| match r.secret_attributes.contains(k) {
                true => (k.clone(), Value::String(MASK.into())),
                false => (k.clone(), value(v, needles)),
            })
            .collect(),
    );
    out.properties = Arc::new(value(&out.properties, needles));
    out.observed = out.observed.as_ref().map(|o| Arc::new(value(o, needles)));
    if let Some(old) = &r.replaced {
        out.replaced = Some(Box::new(
            record(old, needles).unwrap_or_else(|| (**old).clone()),
        ));
    }
    Some(out)
}

/// The copy of a stack row that is written down: outputs and retired records masked. `None`
/// when the stack carries nothing sensitive.
pub(crate) fn stack(s: &StackRecord) -> Option<StackRecord> {
    let needles = needles(s, None);
    if needles.is_empty() {
        return None;
    }
    let mut out = s.clone();
    out.outputs = s
        .outputs
        .iter()
        .map(|o| StoredOutput {
            value: text(&o.value, &needles),
            ..o.clone()
        })
        .collect();
    out.orphans = s
        .orphans
        .iter()
        .map(|r| record(r, &needles).unwrap_or_else(|| r.clone()))
        .collect();
    out.resources = s
        .resources
        .iter()
        .map(|(k, r)| (k.clone(), record(r, &needles).unwrap_or_else(|| r.clone())))
        .collect();
    if let Some(g) = out.previous.as_mut() {
        for o in &mut g.outputs {
            o.value = text(&o.value, &needles);
        }
        for r in g.resources.values_mut() {
            if let Some(masked) = record(r, &needles) {
                *r = masked;
            }
        }
    }
    Some(out)
}

/// Whether resolved properties carry a value the stack holds only as the mask (a sensitive
/// attribute recorded by an earlier process).
pub(crate) fn carries_mask(properties: &Value, stack: &StackRecord) -> bool {
    fn has(v: &Value) -> bool {
        match v {
            Value::String(s) => s.contains(MASK),
            Value::Array(items) => items.iter().any(has),
            Value::Object(o) => o.values().any(has),
            _ => false,
        }
    }
    has(properties)
        && stack
            .resources
            .values()
            .any(|r| r.attributes.values().any(|v| v.as_str() == Some(MASK)))
}

/// Why an operation refuses to write a value it can read back only as the mask.
pub(crate) fn refusal(logical_id: &str) -> String {
    format!(
        "cumulo: the properties of {logical_id} are built from a NoEcho value that the state records only as {MASK} (sensitive values are never written down); cumulo refuses to send the mask to the service. Replace the resource that produced the value (or deploy it again in one operation with {logical_id}) so its clear value is known again."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::ResourceRecord;
    use serde_json::json;

    fn rec(attrs: Value, secret: &[&str], props: Value) -> ResourceRecord {
        ResourceRecord {
            logical_id: "R".into(),
            resource_type: "Custom::X".into(),
            physical_id: Some("p".into()),
            status: "CREATE_COMPLETE".into(),
            status_reason: None,
            properties: props.into(),
            hash: String::new(),
            attributes: attrs.as_object().cloned().unwrap_or_default().into(),
            updated: 0,
            deletion_policy: None,
            update_replace_policy: None,
            metadata: None,
            depends_on: Vec::new(),
            stub: false,
            replaced: None,
            observed: None,
            pending: None,
            signals: Vec::new(),
            secret_attributes: secret.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn whole_bag_and_named_members() {
        let outcome = crate::ProviderOutcome {
            attributes: json!({"A": "1", "B": "2"})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            no_echo: true,
            ..Default::default()
        };
        assert_eq!(secret_names(&outcome), vec!["A", "B"]);
        let outcome = crate::ProviderOutcome {
            no_echo: false,
            no_echo_attributes: vec!["B".into(), "Missing".into()],
            ..outcome
        };
        assert_eq!(secret_names(&outcome), vec!["B"]);
    }

    #[test]
    fn stored_copy_masks_attribute_and_every_embedding() {
        let secret = rec(
            json!({"Password": "hunter22", "Name": "n"}),
            &["Password"],
            json!({}),
        );
        let mut consumer = rec(
            json!({}),
            &[],
            json!({"SecretString": "pw=hunter22", "List": ["hunter22", 3]}),
        );
        consumer.logical_id = "C".into();
        let needles = vec!["hunter22".to_string()];
        let stored = record(&secret, &needles).expect("masked");
        assert_eq!(stored.attributes["Password"], json!(MASK));
        assert_eq!(stored.attributes["Name"], json!("n"));
        let stored = record(&consumer, &needles).expect("masked");
        assert_eq!(
            *stored.properties,
            json!({"SecretString": "pw=***", "List": ["***", 3]})
        );
        // The in-memory record keeps the clear value (dependents receive it).
        assert_eq!(consumer.properties["SecretString"], json!("pw=hunter22"));
    }

    #[test]
    fn nothing_sensitive_is_not_copied() {
        let plain = rec(json!({"Arn": "a"}), &[], json!({"X": 1}));
        assert!(record(&plain, &[]).is_none());
    }
}
