//! Input checks with AWS's messages, identifiers as AWS makes them, and the errors IAM raises.

use cumulo_wire::AwsError;
use http::StatusCode;
use rand::Rng;

/// `1 validation error detected: ...` as IAM words it.
pub fn constraint(value: &str, field: &str, rule: &str) -> AwsError {
    AwsError::validation(format!(
        "1 validation error detected: Value '{value}' at '{field}' failed to satisfy constraint: {rule}"
    ))
}

/// A missing required parameter.
pub fn missing(field: &str) -> AwsError {
    AwsError::validation(format!(
        "1 validation error detected: Value null at '{field}' failed to satisfy constraint: Member must not be null"
    ))
}

/// Names of roles, users, groups, policies, instance profiles: `[\w+=,.@-]+`, 1..=max.
pub fn name(value: &str, field: &str, max: usize) -> Result<(), AwsError> {
    if value.is_empty() || value.chars().count() > max {
        return Err(constraint(
            value,
            field,
            &format!("Member must have length less than or equal to {max}"),
        ));
    }
    let ok = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_+=,.@-".contains(c));
    if !ok {
        return Err(constraint(
            value,
            field,
            "Member must satisfy regular expression pattern: [\\w+=,.@-]+",
        ));
    }
    Ok(())
}

/// `/` or `/segment/.../` of printable ASCII, at most 512 characters.
pub fn path(value: &str) -> Result<(), AwsError> {
    let ok = value.len() <= 512
        && (value == "/"
            || (value.len() >= 2
                && value.starts_with('/')
                && value.ends_with('/')
                && value.bytes().all(|b| (0x21..=0x7e).contains(&b))));
    if !ok {
        return Err(constraint(
            value,
            "path",
            "Member must satisfy regular expression pattern: (\\u002F)|(\\u002F[\\u0021-\\u007E]+\\u002F)",
        ));
    }
    Ok(())
}

/// A `PathPrefix` filter: starts with `/`.
pub fn path_prefix(value: &str) -> Result<(), AwsError> {
    if value.len() > 512
        || !value.starts_with('/')
        || value.bytes().any(|b| !(0x21..=0x7f).contains(&b))
    {
        return Err(constraint(
            value,
            "pathPrefix",
            "Member must satisfy regular expression pattern: \\u002F[\\u0021-\\u007F]*",
        ));
    }
    Ok(())
}

/// A policy document: JSON whose statements each say Allow or Deny. Documents are stored as
/// given and never evaluated; this check only refuses what AWS would not store.
pub fn policy_document(doc: &str) -> Result<(), AwsError> {
    if doc.len() > 131_072 {
        return Err(AwsError::new(
            StatusCode::CONFLICT,
            "LimitExceeded",
            "Cannot exceed quota for PolicySize: 131072",
        ));
    }
    let malformed = |m: &str| AwsError::bad_request("MalformedPolicyDocument", m);
    let v: serde_json::Value =
        serde_json::from_str(doc).map_err(|_| malformed("This policy contains invalid Json"))?;
    let obj = v
        .as_object()
        .ok_or_else(|| malformed("This policy contains invalid Json"))?;
    if let Some(version) = obj.get("Version")
        && version != "2012-10-17"
        && version != "2008-10-17"
    {
        return Err(malformed("The policy failed legacy parsing"));
    }
    let statements = match obj.get("Statement") {
        Some(serde_json::Value::Array(a)) if !a.is_empty() => a.clone(),
        Some(s @ serde_json::Value::Object(_)) => vec![s.clone()],
        _ => return Err(malformed("Syntax errors in policy.")),
    };
    for s in &statements {
        let effect = s.get("Effect").and_then(|e| e.as_str());
        if !matches!(effect, Some("Allow" | "Deny")) {
            return Err(malformed("Syntax errors in policy."));
        }
    }
    Ok(())
}

/// Tags: at most 50, keys 1..=128, values up to 256 characters.
pub fn tags(tags: &[(String, String)]) -> Result<(), AwsError> {
    if tags.len() > 50 {
        return Err(AwsError::new(
            StatusCode::CONFLICT,
            "LimitExceeded",
            "Cannot exceed quota for TagsPerRole: 50",
        ));
    }
    for (k, v) in tags {
        if k.is_empty() || k.chars().count() > 128 {
            return Err(constraint(
                k,
                "tags.member.key",
                "Member must have length less than or equal to 128",
            ));
        }
        if v.chars().count() > 256 {
            return Err(constraint(
                v,
                "tags.member.value",
                "Member must have length less than or equal to 256",
            ));
        }
    }
    Ok(())
}

/// The union of `existing` and `new`, a new value replacing an old one for the same key.
pub fn merge_tags(
    existing: &[(String, String)],
    new: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = existing
        .iter()
        .filter(|(k, _)| !new.iter().any(|(n, _)| n == k))
        .cloned()
        .collect();
    out.extend(new.iter().cloned());
    out
}

/// An id as IAM makes them: a four-letter prefix naming the kind (`AROA` role, `AIDA` user,
/// `AGPA` group, `ANPA` policy, `AIPA` instance profile, `AKIA` access key) and upper-case
/// alphanumerics, 21 characters in all (20 for access keys).
pub fn new_id(prefix: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let len = if prefix == "AKIA" { 16 } else { 17 };
    let mut rng = rand::rng();
    let tail: String = (0..len)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    format!("{prefix}{tail}")
}

/// A 40-character secret access key.
pub fn new_secret() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut rng = rand::rng();
    (0..40)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

pub fn no_such_entity(message: impl Into<String>) -> AwsError {
    AwsError::not_found("NoSuchEntity", message)
}

pub fn already_exists(message: impl Into<String>) -> AwsError {
    AwsError::new(StatusCode::CONFLICT, "EntityAlreadyExists", message)
}

pub fn delete_conflict(message: impl Into<String>) -> AwsError {
    AwsError::new(StatusCode::CONFLICT, "DeleteConflict", message)
}

pub fn limit_exceeded(message: impl Into<String>) -> AwsError {
    AwsError::new(StatusCode::CONFLICT, "LimitExceeded", message)
}

pub fn invalid_input(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("InvalidInput", message)
}

/// The error for an operation on a service-linked role that only its service may change.
pub fn unmodifiable(role: &str) -> AwsError {
    AwsError::bad_request(
        "UnmodifiableEntity",
        format!(
            "Cannot perform the operation on the protected role '{role}' - this role is only modifiable by AWS"
        ),
    )
}

/// One page of a listing: the items from `marker` on (a marker is the offset of the first item
/// of the next page, opaque to clients), at most `max_items` (default 100), and the marker of
/// the page after.
pub fn page<T>(
    items: Vec<T>,
    marker: Option<&str>,
    max_items: Option<i64>,
) -> Result<(Vec<T>, Option<String>), AwsError> {
    let max = match max_items {
        None => 100,
        Some(m) if (1..=1000).contains(&m) => m as usize,
        Some(m) => {
            return Err(constraint(
                &m.to_string(),
                "maxItems",
                if m < 1 {
                    "Member must have value greater than or equal to 1"
                } else {
                    "Member must have value less than or equal to 1000"
                },
            ));
        }
    };
    let start = match marker {
        None => 0,
        Some(m) => m
            .parse::<usize>()
            .map_err(|_| AwsError::validation(format!("Invalid Marker: {m}")))?,
    };
    let total = items.len();
    let rest: Vec<T> = items.into_iter().skip(start).take(max).collect();
    let end = start.saturating_add(rest.len());
    let next = (end < total).then(|| end.to_string());
    Ok((rest, next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        assert!(name("my-role_1+=,.@", "roleName", 64).is_ok());
        assert!(name("bad name", "roleName", 64).is_err());
        assert!(name(&"a".repeat(65), "roleName", 64).is_err());
        assert!(path("/").is_ok());
        assert!(path("/a/b/").is_ok());
        assert!(path("/a").is_err());
        assert!(path("a/").is_err());
    }

    #[test]
    fn documents() {
        assert!(policy_document(r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}"#).is_ok());
        assert_eq!(
            policy_document("{not json").unwrap_err().code,
            "MalformedPolicyDocument"
        );
        assert!(policy_document(r#"{"Statement":[{"Effect":"Maybe"}]}"#).is_err());
        assert!(policy_document(r#"{"Version":"2012-10-17"}"#).is_err());
    }

    #[test]
    fn ids_and_pages() {
        let id = new_id("AROA");
        assert_eq!(id.len(), 21);
        assert!(id.starts_with("AROA"));
        assert_eq!(new_id("AKIA").len(), 20);
        let items: Vec<String> = (0..5).map(|i| format!("k{i}")).collect();
        let (p, next) = page(items.clone(), None, Some(2)).expect("page");
        assert_eq!((p.len(), next.as_deref()), (2, Some("2")));
        let (p, next) = page(items.clone(), Some("4"), Some(2)).expect("page");
        assert_eq!((p, next), (vec!["k4".to_string()], None));
        assert!(page(items.clone(), Some("x"), None).is_err());
        assert!(page(items, None, Some(0)).is_err());
    }
}
