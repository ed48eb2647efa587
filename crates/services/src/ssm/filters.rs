//! `ParameterStringFilter`s (DescribeParameters, GetParametersByPath) and DescribeParameters'
//! legacy `ParametersFilter`s: validation with AWS's codes, and matching.

use super::state::{Parameter, Version};
use super::validate::{check_path, err, validation};
use cumulo_wire::AwsError;

/// One `ParameterStringFilter`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StringFilter {
    pub key: String,
    pub option: Option<String>,
    pub values: Vec<String>,
}

/// Which operation the filters are for: they accept different keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterUse {
    Describe,
    ByPath,
}

fn option_of(f: &StringFilter) -> &str {
    f.option.as_deref().unwrap_or(if f.key == "Path" {
        "OneLevel"
    } else {
        "Equals"
    })
}

/// Checks keys, options and values as AWS does, before anything is matched.
pub fn check(filters: &[StringFilter], usage: FilterUse) -> Result<(), AwsError> {
    let mut seen: Vec<&str> = Vec::new();
    for f in filters {
        let key = f.key.as_str();
        let is_tag = key.starts_with("tag:") && key.len() > 4;
        let known = is_tag
            || matches!(
                key,
                "Name" | "Type" | "KeyId" | "Path" | "Label" | "Tier" | "DataType"
            );
        if !known {
            return Err(validation(format!(
                "1 validation error detected: Value '{key}' at 'parameterFilters.1.member.key' failed to satisfy constraint: Member must satisfy regular expression pattern: tag:.+|Name|Type|KeyId|Path|Label|Tier|DataType"
            )));
        }
        match usage {
            FilterUse::Describe if key == "Label" => {
                return Err(err(
                    "InvalidFilterKey",
                    "The following filter key is not valid: Label. Valid filter keys include: [Path, Name, Type, KeyId, Tier, DataType].",
                ));
            }
            FilterUse::ByPath if matches!(key, "Name" | "Path" | "Tier" | "DataType") => {
                return Err(err(
                    "InvalidFilterKey",
                    format!(
                        "The following filter key is not valid: {key}. Valid filter keys include: [Type, KeyId, Label]."
                    ),
                ));
            }
            _ => {}
        }
        if seen.contains(&key) {
            return Err(err(
                "InvalidFilterKey",
                format!(
                    "The following filter is duplicated in the request: {key}. A request can contain only one occurrence of a specific filter."
                ),
            ));
        }
        seen.push(key);
        if f.values.is_empty() && !is_tag {
            return Err(err(
                "InvalidFilterValue",
                format!("The following filter values are missing : null for filter key {key}."),
            ));
        }
        if f.values.len() > 50 || f.values.iter().any(|v| v.is_empty() || v.len() > 1024) {
            return Err(validation(format!(
                "1 validation error detected: Value at 'parameterFilters.1.member.values' failed to satisfy constraint: Member must have length between 1 and 50, each value between 1 and 1024 characters (filter {key})"
            )));
        }
        let option = option_of(f);
        let allowed: &[&str] = match key {
            "Path" => &["Recursive", "OneLevel"],
            "Name" => &["Equals", "BeginsWith", "Contains"],
            "Label" => &["Equals"],
            _ => &["Equals", "BeginsWith"],
        };
        if !allowed.contains(&option) {
            return Err(err(
                "InvalidFilterOption",
                format!(
                    "The following filter option is not valid: {option}. Valid options include: [{}].",
                    allowed.join(", ")
                ),
            ));
        }
        let enum_values: Option<&[&str]> = match key {
            "Type" => Some(&["String", "StringList", "SecureString"]),
            "Tier" => Some(&["Standard", "Advanced", "Intelligent-Tiering"]),
            _ => None,
        };
        if let Some(valid) = enum_values
            && let Some(bad) = f.values.iter().find(|v| !valid.contains(&v.as_str()))
        {
            return Err(err(
                "InvalidFilterValue",
                format!(
                    "The following filter value is not valid: {bad}. Valid values include: [{}].",
                    valid.join(", ")
                ),
            ));
        }
        if key == "Path" {
            for v in &f.values {
                check_path(v)?;
            }
        }
    }
    Ok(())
}

fn text_matches(option: &str, what: &str, values: &[String]) -> bool {
    values.iter().any(|v| match option {
        "BeginsWith" => what.starts_with(v.as_str()),
        "Contains" => what.contains(v.as_str()),
        _ => what == v,
    })
}

/// `/` + name without leading slashes, so `a` and `/a` compare as AWS compares them in filters.
fn rooted(name: &str) -> String {
    format!("/{}", name.trim_start_matches('/'))
}

/// Whether `name` is directly under (`recursive == false`) or anywhere below `path`.
pub fn under_path(name: &str, path: &str, recursive: bool) -> bool {
    let base = format!("{}/", path.trim_end_matches('/'));
    let name = rooted(name);
    match name.strip_prefix(&base) {
        Some(rest) => !rest.is_empty() && (recursive || !rest.contains('/')),
        None => false,
    }
}

/// Matches a parameter against the filters; returns the version to report (the one carrying a
/// requested label, else the latest), or `None` when it does not match.
pub fn matches<'a>(p: &'a Parameter, filters: &[StringFilter]) -> Option<&'a Version> {
    let mut chosen = p.latest()?;
    for f in filters {
        let option = option_of(f);
        let ok = match f.key.as_str() {
            "Name" => {
                let values: Vec<String> = if option == "Contains" {
                    f.values.clone()
                } else {
                    f.values.iter().map(|v| rooted(v)).collect()
                };
                let what = if option == "Contains" {
                    p.name.clone()
                } else {
                    rooted(&p.name)
                };
                text_matches(option, &what, &values)
            }
            "Path" => f
                .values
                .iter()
                .any(|v| under_path(&p.name, v, option == "Recursive")),
            "Type" => text_matches(option, chosen.param_type.as_str(), &f.values),
            "KeyId" => chosen
                .key_id
                .as_deref()
                .is_some_and(|k| text_matches(option, k, &f.values)),
            "Tier" => text_matches(option, chosen.tier.as_str(), &f.values),
            "DataType" => text_matches(option, &chosen.data_type, &f.values),
            "Label" => match p
                .versions
                .iter()
                .rev()
                .find(|v| v.labels.iter().any(|l| f.values.contains(l)))
            {
                Some(v) => {
                    chosen = v;
                    true
                }
                None => false,
            },
            key => {
                let tag_key = key.strip_prefix("tag:").unwrap_or(key);
                match p.tags.get(tag_key) {
                    Some(value) => f.values.is_empty() || text_matches(option, value, &f.values),
                    None => false,
                }
            }
        };
        if !ok {
            return None;
        }
    }
    Some(chosen)
}

/// DescribeParameters' legacy `Filters` (keys Name, Type, KeyId; Name matches by prefix).
pub fn legacy_matches(p: &Parameter, filters: &[(String, Vec<String>)]) -> bool {
    let Some(latest) = p.latest() else {
        return false;
    };
    filters.iter().all(|(key, values)| match key.as_str() {
        "Name" => values.iter().any(|v| p.name.starts_with(v.as_str())),
        "Type" => values.iter().any(|v| v == latest.param_type.as_str()),
        "KeyId" => latest
            .key_id
            .as_deref()
            .is_some_and(|k| values.iter().any(|v| v == k)),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(key: &str, option: Option<&str>, values: &[&str]) -> StringFilter {
        StringFilter {
            key: key.into(),
            option: option.map(str::to_string),
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    #[test]
    fn filter_validation_codes() {
        let code = |f: StringFilter, u| check(&[f], u).unwrap_err().code;
        assert_eq!(
            code(filter("Label", None, &["x"]), FilterUse::Describe),
            "InvalidFilterKey"
        );
        assert_eq!(
            code(filter("Name", None, &["x"]), FilterUse::ByPath),
            "InvalidFilterKey"
        );
        assert_eq!(
            code(filter("Name", Some("Nope"), &["x"]), FilterUse::Describe),
            "InvalidFilterOption"
        );
        assert_eq!(
            code(filter("Type", None, &["Bogus"]), FilterUse::Describe),
            "InvalidFilterValue"
        );
        assert_eq!(
            code(filter("Type", None, &[]), FilterUse::Describe),
            "InvalidFilterValue"
        );
        assert_eq!(
            code(filter("Colour", None, &["x"]), FilterUse::Describe),
            "ValidationException"
        );
        assert!(check(&[filter("tag:team", None, &[])], FilterUse::Describe).is_ok());
        let dup = [
            filter("Type", None, &["String"]),
            filter("Type", None, &["String"]),
        ];
        assert_eq!(
            check(&dup, FilterUse::Describe).unwrap_err().code,
            "InvalidFilterKey"
        );
    }

    #[test]
    fn paths() {
        assert!(under_path("/a/b", "/a", false));
        assert!(under_path("/a/b", "/a/", false));
        assert!(!under_path("/a/b/c", "/a", false));
        assert!(under_path("/a/b/c", "/a", true));
        assert!(under_path("/x", "/", false));
        assert!(!under_path("/ab", "/a", true));
    }
}
