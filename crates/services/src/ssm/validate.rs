//! Input rules of Parameter Store, with AWS's error codes and messages.

use cumulo_wire::AwsError;
use http::StatusCode;

/// AWS reserves part of the 2048-character name limit for internal use.
const NAME_MAX_CHARS: usize = 1011;
const MAX_HIERARCHY_LEVELS: usize = 15;
pub const MAX_TAGS: usize = 50;

pub fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::bad_request(code, message)
}

pub fn validation(message: impl Into<String>) -> AwsError {
    AwsError::validation_exception(message)
}

fn reserved_prefix(name: &str) -> bool {
    let bare = name.trim_start_matches('/').to_ascii_lowercase();
    bare.starts_with("aws") || bare.starts_with("ssm")
}

/// The rules PutParameter applies to a new name.
pub fn check_new_name(name: &str) -> Result<(), AwsError> {
    if name.is_empty() {
        return Err(validation(
            "1 validation error detected: Value '' at 'name' failed to satisfy constraint: Member must have length greater than or equal to 1",
        ));
    }
    if name.chars().count() > NAME_MAX_CHARS {
        return Err(validation(format!(
            "Parameter name: can't be longer than {NAME_MAX_CHARS} characters."
        )));
    }
    if reserved_prefix(name) {
        let is_path = name.matches('/').count() > 1;
        if is_path && name.to_ascii_lowercase().starts_with("/aws") {
            return Err(AwsError::new(
                StatusCode::BAD_REQUEST,
                "AccessDeniedException",
                format!("No access to reserved parameter name: {name}."),
            ));
        }
        return Err(validation(if is_path {
            "Parameter name: can't be prefixed with \"ssm\" (case-insensitive). If formed as a path, it can consist of sub-paths divided by slash symbol; each sub-path can be formed as a mix of letters, numbers and the following 3 symbols .-_"
        } else {
            "Parameter name: can't be prefixed with \"aws\" or \"ssm\" (case-insensitive)."
        }));
    }
    let chars_ok = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c));
    if !chars_ok || name.contains("//") || name.ends_with('/') {
        return Err(validation(
            "Parameter name: can't be prefixed with \"aws\" or \"ssm\" (case-insensitive). If formed as a path, it can consist of sub-paths divided by slash symbol; each sub-path can be formed as a mix of letters, numbers and the following 3 symbols .-_",
        ));
    }
    if name.contains('/') && !name.starts_with('/') {
        return Err(validation("Parameter name must be a fully qualified name."));
    }
    if name.matches('/').count() > MAX_HIERARCHY_LEVELS {
        return Err(err(
            "HierarchyLevelLimitExceededException",
            "A hierarchy can have a maximum of 15 levels. For more information, see https://docs.aws.amazon.com/systems-manager/latest/userguide/sysman-paramstore-su-create.html",
        ));
    }
    Ok(())
}

/// A path for GetParametersByPath / a Path filter: `/`, or `/a/b` (a trailing `/` allowed).
pub fn check_path(path: &str) -> Result<(), AwsError> {
    let bad = !path.starts_with('/')
        || path.contains("//")
        || !path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c));
    if bad {
        return Err(validation(
            "The parameter doesn't meet the parameter name requirements. The parameter name must begin with a forward slash \"/\". It can't be prefixed with \"aws\" or \"ssm\" (case-insensitive). It must use only letters, numbers, or the following symbols: . (period), - (hyphen), _ (underscore). Special characters are not allowed. All sub-paths, if specified, must use the forward slash symbol \"/\". Valid example: /get/parameters2-/by1./path0_.",
        ));
    }
    if path.trim_matches('/').split('/').count() > MAX_HIERARCHY_LEVELS {
        return Err(err(
            "HierarchyLevelLimitExceededException",
            "A hierarchy can have a maximum of 15 levels.",
        ));
    }
    Ok(())
}

/// Whether a version label is acceptable; invalid ones are reported back, not raised.
pub fn label_is_valid(label: &str) -> bool {
    let lower = label.to_ascii_lowercase();
    !label.is_empty()
        && label.chars().count() <= 100
        && !lower.starts_with("aws")
        && !lower.starts_with("ssm")
        && !label.starts_with(|c: char| c.is_ascii_digit())
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// Tag keys and values (`^([\p{L}\p{Z}\p{N}_.:/=+\-@]*)$`), and the `aws:` prefix AWS reserves.
pub fn check_tag(key: &str, value: &str) -> Result<(), AwsError> {
    let ok_char = |c: char| c.is_alphanumeric() || c.is_whitespace() || "_.:/=+-@".contains(c);
    if key.is_empty() || key.chars().count() > 128 || !key.chars().all(ok_char) {
        return Err(validation(format!(
            "1 validation error detected: Value '{key}' at 'tags.1.member.key' failed to satisfy constraint: Member must satisfy regular expression pattern: ^([\\p{{L}}\\p{{Z}}\\p{{N}}_.:/=+\\-@]*)$"
        )));
    }
    if value.chars().count() > 256 || !value.chars().all(ok_char) {
        return Err(validation(format!(
            "1 validation error detected: Value '{value}' at 'tags.1.member.value' failed to satisfy constraint: Member must satisfy regular expression pattern: ^([\\p{{L}}\\p{{Z}}\\p{{N}}_.:/=+\\-@]*)$"
        )));
    }
    if key.to_ascii_lowercase().starts_with("aws:") {
        return Err(validation(
            "Tag keys beginning with 'aws:' are reserved for AWS use.",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check_new_name("/app/db/password").is_ok());
        assert!(check_new_name("plain-name_1.x").is_ok());
        assert_eq!(
            check_new_name("awsfoo").unwrap_err().code,
            "ValidationException"
        );
        assert_eq!(
            check_new_name("/aws/x/y").unwrap_err().code,
            "AccessDeniedException"
        );
        assert!(check_new_name("a/b").is_err());
        assert!(check_new_name("/a b").is_err());
        let deep = "/a".repeat(16);
        assert_eq!(
            check_new_name(&deep).unwrap_err().code,
            "HierarchyLevelLimitExceededException"
        );
    }

    #[test]
    fn labels() {
        assert!(label_is_valid("prod"));
        assert!(!label_is_valid("1prod"));
        assert!(!label_is_valid("awsx"));
        assert!(!label_is_valid("a b"));
    }
}
