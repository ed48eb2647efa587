//! NoEcho parameter values at rest: a row that carries one is written sealed whole.
//!
//! A NoEcho parameter is the template author's secret (a database password): DescribeStacks
//! shows it as `****`, but the engine needs it again (UsePreviousValue, a rollback restoring
//! the previous parameters, dependents' properties built from it), so unlike a NoEcho
//! *attribute* ([`crate::mask`]) it cannot be replaced by a mask in what is written down.
//! Instead the rows that hold one are sealed whole under the store's master key (AES-256-GCM,
//! bound to the row's stack or change set ARN) and opened again on load: a stack or change set
//! row whenever it has a NoEcho parameter with a value, and a resource or event row when its
//! serialized body contains one of those values. Other rows stay plain JSON, so a stack
//! without NoEcho parameters pays one empty check per row.
//!
//! What is found in resource and event rows is the value as JSON writes it: as a string (a
//! property) and as a string inside a string (an event's `ResourceProperties`). A value a
//! template transforms beyond recognition (`Fn::Base64` of it) is not found, and neither is a
//! value shorter than [`MIN_LEN`] bytes: see the README.

use crate::state::StoredParam;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use cumulo_store::MasterKey;

/// What a sealed body starts with (a plain body is a JSON object: `{`).
const PREFIX: &str = "cumulo-sealed:v1:";

/// Values shorter than this are not looked for: a one- or two-character value would seal
/// nearly every row of its stack (and is no secret worth the name).
pub(crate) const MIN_LEN: usize = 3;

/// The forms in which the NoEcho values of `params` appear in a serialized row.
pub(crate) fn needles<'a>(params: impl IntoIterator<Item = &'a StoredParam>) -> Vec<String> {
    let mut out = Vec::new();
    for p in params.into_iter().filter(|p| p.no_echo) {
        for v in std::iter::once(&p.value).chain(&p.resolved) {
            if v.len() < MIN_LEN {
                continue;
            }
            let once = escaped(v);
            let twice = escaped(&once);
            out.push(once);
            out.push(twice);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Whether `params` hold a NoEcho value: the row that records them is sealed.
pub(crate) fn holds_any<'a>(params: impl IntoIterator<Item = &'a StoredParam>) -> bool {
    params.into_iter().any(|p| p.no_echo && !p.value.is_empty())
}

/// `s` as it appears between the quotes of a JSON string.
fn escaped(s: &str) -> String {
    let quoted = serde_json::Value::String(s.to_string()).to_string();
    quoted[1..quoted.len() - 1].to_string()
}

/// `body`, sealed under `key` for `label` when it carries a needle.
pub(crate) fn seal(key: &MasterKey, label: &str, needles: &[String], body: String) -> String {
    if needles.iter().any(|n| body.contains(n.as_str())) {
        seal_always(key, label, body)
    } else {
        body
    }
}

/// `body`, sealed under `key` for `label` when `holds` (the row records a NoEcho value
/// itself: a stack's or change set's parameters).
pub(crate) fn seal_if(holds: bool, key: &MasterKey, label: &str, body: String) -> String {
    if holds {
        seal_always(key, label, body)
    } else {
        body
    }
}

/// `body` sealed under `key` for `label`.
pub(crate) fn seal_always(key: &MasterKey, label: &str, body: String) -> String {
    format!(
        "{PREFIX}{}",
        STANDARD.encode(key.wrap(label, body.as_bytes()))
    )
}

/// The plain body of a stored row; `None` when it is sealed and does not open under `key` for
/// `label` (another data directory's master key, or damaged).
pub(crate) fn open(key: &MasterKey, label: &str, body: String) -> Option<String> {
    let Some(sealed) = body.strip_prefix(PREFIX) else {
        return Some(body);
    };
    let bytes = STANDARD.decode(sealed).ok()?;
    String::from_utf8(key.unwrap(label, &bytes)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(value: &str, no_echo: bool) -> StoredParam {
        StoredParam {
            key: "P".into(),
            value: value.into(),
            resolved: None,
            no_echo,
        }
    }

    #[test]
    fn only_no_echo_values_long_enough_are_needles() {
        let params = [
            param("plain-value", false),
            param("pw\"x", true),
            param("ab", true),
        ];
        assert_eq!(needles(&params), vec![r#"pw\"x"#, r#"pw\\\"x"#]);
    }

    #[test]
    fn a_row_with_a_needle_is_sealed_and_opens_only_for_its_label() {
        let key = MasterKey::ephemeral();
        let needles = needles(&[param("hunter22", true)]);
        let plain = r#"{"Name":"x"}"#.to_string();
        assert_eq!(seal(&key, "arn:a", &needles, plain.clone()), plain);
        let body = r#"{"Password":"pw=hunter22"}"#.to_string();
        let sealed = seal(&key, "arn:a", &needles, body.clone());
        assert!(sealed.starts_with(PREFIX));
        assert!(!sealed.contains("hunter22"));
        assert_eq!(open(&key, "arn:a", sealed.clone()), Some(body));
        assert_eq!(open(&key, "arn:b", sealed.clone()), None);
        assert_eq!(open(&MasterKey::ephemeral(), "arn:a", sealed), None);
        assert_eq!(open(&key, "arn:a", plain.clone()), Some(plain));
    }

    #[test]
    fn a_value_inside_an_event_properties_string_is_found() {
        let key = MasterKey::ephemeral();
        let needles = needles(&[param("a\"b\\c", true)]);
        let properties = serde_json::json!({"V": "a\"b\\c"}).to_string();
        let event = serde_json::json!({"properties": properties}).to_string();
        assert!(seal(&key, "l", &needles, event).starts_with(PREFIX));
    }
}
