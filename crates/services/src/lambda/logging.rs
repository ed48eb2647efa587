//! Advanced logging controls (`LoggingConfig`): validation and merging of what a request gives
//! with what a function has, by AWS's rules — levels only with the JSON format, both levels
//! defaulting to INFO when JSON is chosen without them.

use super::model::{LoggingConfig, LoggingInput};
use super::ops::{invalid_parameter, validation};
use cumulo_wire::AwsError;

const FORMATS: &[&str] = &["JSON", "Text"];
const APPLICATION_LEVELS: &[&str] = &["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"];
const SYSTEM_LEVELS: &[&str] = &["DEBUG", "INFO", "WARN"];

fn one_of(field: &str, value: &str, allowed: &[&str]) -> Result<(), AwsError> {
    if allowed.contains(&value) {
        return Ok(());
    }
    Err(validation(
        field,
        value,
        &format!(
            "Member must satisfy enum value set: [{}]",
            allowed.join(", ")
        ),
    ))
}

/// AWS's log group name rule (1-512 of `[.\-_/#A-Za-z0-9]`).
fn check_group(name: &str) -> Result<(), AwsError> {
    let ok_chars = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || ".-_/#".contains(c));
    if name.is_empty() || name.len() > 512 || !ok_chars {
        return Err(validation(
            "loggingConfig.logGroup",
            name,
            "Member must satisfy regular expression pattern: [\\.\\-_/#A-Za-z0-9]+",
        ));
    }
    Ok(())
}

/// The configuration `input` makes of `current` for function `name`.
pub(super) fn apply(
    current: &LoggingConfig,
    input: &LoggingInput,
    name: &str,
) -> Result<LoggingConfig, AwsError> {
    if let Some(f) = &input.log_format {
        one_of("loggingConfig.logFormat", f, FORMATS)?;
    }
    if let Some(l) = &input.application_log_level {
        one_of("loggingConfig.applicationLogLevel", l, APPLICATION_LEVELS)?;
    }
    if let Some(l) = &input.system_log_level {
        one_of("loggingConfig.systemLogLevel", l, SYSTEM_LEVELS)?;
    }
    if let Some(g) = &input.log_group {
        check_group(g)?;
    }
    let format = input
        .log_format
        .clone()
        .unwrap_or_else(|| current.log_format.clone());
    let json = format == "JSON";
    let asks_levels = input.application_log_level.is_some() || input.system_log_level.is_some();
    if !json && asks_levels {
        return Err(invalid_parameter(
            "LogLevel is not supported when LogFormat is set to \"Text\". Remove LogLevel from your request or change the LogFormat to \"Json\" and try again.",
        ));
    }
    let level = |given: &Option<String>, current: &Option<String>| {
        json.then(|| {
            given
                .clone()
                .or_else(|| current.clone())
                .unwrap_or_else(|| "INFO".to_string())
        })
    };
    let default_group = format!("/aws/lambda/{name}");
    let log_group = match &input.log_group {
        Some(g) if *g == default_group => None,
        Some(g) => Some(g.clone()),
        None => current.log_group.clone(),
    };
    Ok(LoggingConfig {
        application_log_level: level(&input.application_log_level, &current.application_log_level),
        system_log_level: level(&input.system_log_level, &current.system_log_level),
        log_format: format,
        log_group,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(format: Option<&str>, app: Option<&str>, group: Option<&str>) -> LoggingInput {
        LoggingInput {
            log_format: format.map(str::to_string),
            application_log_level: app.map(str::to_string),
            system_log_level: None,
            log_group: group.map(str::to_string),
        }
    }

    #[test]
    fn json_without_levels_defaults_both_to_info() {
        let c = apply(
            &LoggingConfig::default(),
            &input(Some("JSON"), None, None),
            "f",
        )
        .unwrap();
        assert_eq!(c.application_log_level.as_deref(), Some("INFO"));
        assert_eq!(c.system_log_level.as_deref(), Some("INFO"));
        assert_eq!(c.group("f"), "/aws/lambda/f");
    }

    #[test]
    fn levels_with_text_format_are_refused() {
        let e = apply(
            &LoggingConfig::default(),
            &input(None, Some("WARN"), None),
            "f",
        )
        .unwrap_err();
        assert_eq!(e.code, "InvalidParameterValueException");
        assert!(e.message.contains("LogLevel is not supported"));
    }

    #[test]
    fn back_to_text_drops_levels_and_absent_fields_keep_their_values() {
        let json = apply(
            &LoggingConfig::default(),
            &input(Some("JSON"), Some("FATAL"), Some("/custom/g")),
            "f",
        )
        .unwrap();
        let same = apply(&json, &input(None, None, None), "f").unwrap();
        assert_eq!(same, json);
        let text = apply(&json, &input(Some("Text"), None, None), "f").unwrap();
        assert_eq!(text.application_log_level, None);
        assert_eq!(text.system_log_level, None);
        assert_eq!(text.group("f"), "/custom/g");
    }

    #[test]
    fn unknown_values_are_validation_errors() {
        let e = apply(
            &LoggingConfig::default(),
            &input(Some("XML"), None, None),
            "f",
        )
        .unwrap_err();
        assert_eq!(e.code, "ValidationException");
        let e = apply(
            &LoggingConfig::default(),
            &input(None, None, Some("bad group!")),
            "f",
        )
        .unwrap_err();
        assert_eq!(e.code, "ValidationException");
    }
}
