//! Asynchronous invocation settings (Put/Update/Get/Delete/ListFunctionEventInvokeConfig(s)):
//! the retry limit, the maximum event age and the OnSuccess/OnFailure destinations of a function,
//! a version or an alias. Validated and answered as AWS does (messages from the recorded answers),
//! stored in the function's document and reported; cumulo's Event invocations do not retry and
//! do not deliver to the destinations (see README).

use super::Lambda;
use super::model::EventInvokeConfig;
use super::names::{function_arn, parse_function};
use super::ops::{invalid_parameter, validation};
use super::wire::{Body, body, i, ok};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use http::{Method, StatusCode};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// What Put/UpdateFunctionEventInvokeConfig take. A destination is `Some(None)` when the
/// request names the OnSuccess/OnFailure object without a `Destination` (AWS accepts that and
/// stores nothing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventInvokeInput {
    pub maximum_retry_attempts: Option<i64>,
    pub maximum_event_age: Option<i64>,
    /// Whether `DestinationConfig` was given at all (it counts as a setting).
    pub destination_config: bool,
    pub on_success: Option<Option<String>>,
    pub on_failure: Option<Option<String>>,
}

const DESTINATION_PATTERN: &str = "Member must satisfy regular expression pattern: $|kafka://([^.]([a-zA-Z0-9\\-_.]{0,248}))|arn:(aws[a-zA-Z0-9-]*):([a-zA-Z0-9\\-])+:((eusc-)?[a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\\d{1})?:(\\d{12})?:(.*)";

fn function_missing() -> AwsError {
    AwsError::not_found("ResourceNotFoundException", "The function doesn't exist.")
}

fn no_config(arn: &str) -> AwsError {
    AwsError::not_found(
        "ResourceNotFoundException",
        format!("The function {arn} doesn't have an EventInvokeConfig"),
    )
}

/// Whether `arn` has the shape AWS's pattern allows (`arn:aws...:<service>:<region>?:<account>?:...`).
fn arn_shaped(arn: &str) -> bool {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    parts.len() == 6
        && parts[0] == "arn"
        && parts[1].starts_with("aws")
        && !parts[2].is_empty()
        && parts[2]
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && (parts[4].is_empty()
            || (parts[4].len() == 12 && parts[4].bytes().all(|b| b.is_ascii_digit())))
}

impl Lambda {
    /// The function name and the qualifier a FunctionName (+ Qualifier) designates; a qualifier in
    /// the name must agree with the parameter.
    fn invoke_config_target(
        name_or_arn: &str,
        qualifier: Option<&str>,
    ) -> Result<(String, String), AwsError> {
        let (name, derived) = parse_function(name_or_arn)?;
        match (derived.as_deref(), qualifier) {
            (Some(d), Some(q)) if d != q => Err(invalid_parameter(
                "The derived qualifier from the function name does not match the specified qualifier.",
            )),
            (d, q) => Ok((name, q.or(d).unwrap_or("$LATEST").to_string())),
        }
    }

    fn invoke_config_arn(&self, region: &str, name: &str, qualifier: &str) -> String {
        function_arn(region, &self.account_id, name, Some(qualifier))
    }

    /// Refuses what AWS refuses: no setting at all, limits out of range, a destination that is
    /// not an ARN, of a service that is no destination, a missing function, or the function
    /// itself.
    fn check_invoke_input(
        &self,
        region: &str,
        name: &str,
        input: &EventInvokeInput,
        creating: bool,
    ) -> Result<(), AwsError> {
        if creating
            && input.maximum_retry_attempts.is_none()
            && input.maximum_event_age.is_none()
            && !input.destination_config
        {
            return Err(invalid_parameter(
                "You must specify at least one of error handling or destination setting.",
            ));
        }
        if let Some(n) = input.maximum_retry_attempts {
            if n < 0 {
                return Err(validation(
                    "maximumRetryAttempts",
                    n,
                    "Member must have value greater than or equal to 0",
                ));
            }
            if n > 2 {
                return Err(validation(
                    "maximumRetryAttempts",
                    n,
                    "Member must have value less than or equal to 2",
                ));
            }
        }
        if let Some(n) = input.maximum_event_age {
            if n < 60 {
                return Err(validation(
                    "maximumEventAgeInSeconds",
                    n,
                    "Member must have value greater than or equal to 60",
                ));
            }
            if n > 21600 {
                return Err(validation(
                    "maximumEventAgeInSeconds",
                    n,
                    "Member must have value less than or equal to 21600",
                ));
            }
        }
        let given = [
            ("onSuccess", input.on_success.as_ref()),
            ("onFailure", input.on_failure.as_ref()),
        ];
        for (field, destination) in given {
            if let Some(Some(arn)) = destination
                && !arn.is_empty()
                && !arn_shaped(arn)
            {
                return Err(validation(
                    &format!("destinationConfig.{field}.destination"),
                    arn,
                    DESTINATION_PATTERN,
                ));
            }
        }
        for (_, destination) in given {
            let Some(Some(arn)) = destination else {
                continue;
            };
            if arn.is_empty() {
                continue;
            }
            let service = arn.split(':').nth(2).unwrap_or_default();
            if !matches!(service, "sqs" | "sns" | "lambda" | "events" | "s3") {
                let shown = |d: Option<&Option<String>>, kind: &str| match d {
                    None => "null".to_string(),
                    Some(d) => format!("{kind}(destination={})", d.as_deref().unwrap_or("null")),
                };
                return Err(invalid_parameter(format!(
                    "The provided destination config DestinationConfig(onSuccess={}, onFailure={}) is invalid.",
                    shown(input.on_success.as_ref(), "OnSuccess"),
                    shown(input.on_failure.as_ref(), "OnFailure"),
                )));
            }
            if service == "lambda" {
                let target = parse_function(arn).map(|(n, _)| n).unwrap_or_default();
                if target == name {
                    return Err(invalid_parameter(
                        "You can't specify the function as a destination for itself.",
                    ));
                }
                if self.function(region, &target).is_err() {
                    return Err(invalid_parameter(format!(
                        "The destination ARN {arn} is invalid."
                    )));
                }
            }
        }
        Ok(())
    }

    /// Whether `qualifier` names `$LATEST`, a published version or an alias of the function.
    fn qualifier_exists(&self, region: &str, name: &str, qualifier: &str) -> bool {
        let Ok(f) = self.function(region, name) else {
            return false;
        };
        qualifier == "$LATEST"
            || qualifier
                .parse::<u64>()
                .is_ok_and(|n| f.versions.contains_key(&n))
            || f.aliases.contains_key(qualifier)
    }

    /// PutFunctionEventInvokeConfig: replaces the qualifier's settings.
    pub fn put_event_invoke_config(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
        input: &EventInvokeInput,
    ) -> Result<(String, EventInvokeConfig), AwsError> {
        let (name, q) = Self::invoke_config_target(name_or_arn, qualifier)?;
        self.check_invoke_input(region, &name, input, true)?;
        if !self.qualifier_exists(region, &name, &q) {
            return Err(function_missing());
        }
        let config = EventInvokeConfig {
            maximum_retry_attempts: input.maximum_retry_attempts,
            maximum_event_age: input.maximum_event_age,
            on_success: input.on_success.clone().flatten().filter(|d| !d.is_empty()),
            on_failure: input.on_failure.clone().flatten().filter(|d| !d.is_empty()),
            last_modified: now_epoch(),
        };
        self.mutate(region, &name, |f| {
            f.event_invoke_configs.insert(q.clone(), config.clone());
            Ok(())
        })?;
        Ok((self.invoke_config_arn(region, &name, &q), config))
    }

    /// UpdateFunctionEventInvokeConfig: changes only what the request gives.
    pub fn update_event_invoke_config(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
        input: &EventInvokeInput,
    ) -> Result<(String, EventInvokeConfig), AwsError> {
        let (name, q) = Self::invoke_config_target(name_or_arn, qualifier)?;
        self.check_invoke_input(region, &name, input, false)?;
        if self.function(region, &name).is_err() {
            return Err(function_missing());
        }
        let arn = self.invoke_config_arn(region, &name, &q);
        let config = self.mutate(region, &name, |f| {
            let c = f
                .event_invoke_configs
                .get_mut(&q)
                .ok_or_else(|| no_config(&arn))?;
            if let Some(n) = input.maximum_retry_attempts {
                c.maximum_retry_attempts = Some(n);
            }
            if let Some(n) = input.maximum_event_age {
                c.maximum_event_age = Some(n);
            }
            if let Some(d) = &input.on_success {
                c.on_success = d.clone().filter(|d| !d.is_empty());
            }
            if let Some(d) = &input.on_failure {
                c.on_failure = d.clone().filter(|d| !d.is_empty());
            }
            c.last_modified = now_epoch();
            Ok(c.clone())
        })?;
        Ok((arn, config))
    }

    pub fn get_event_invoke_config(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
    ) -> Result<(String, EventInvokeConfig), AwsError> {
        let (name, q) = Self::invoke_config_target(name_or_arn, qualifier)?;
        let arn = self.invoke_config_arn(region, &name, &q);
        let config = self
            .function(region, &name)
            .ok()
            .and_then(|f| f.event_invoke_configs.get(&q).cloned())
            .ok_or_else(|| no_config(&arn))?;
        Ok((arn, config))
    }

    pub fn delete_event_invoke_config(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
    ) -> Result<(), AwsError> {
        let (name, q) = Self::invoke_config_target(name_or_arn, qualifier)?;
        let arn = self.invoke_config_arn(region, &name, &q);
        if self.function(region, &name).is_err() {
            return Err(no_config(&arn));
        }
        self.mutate(region, &name, |f| {
            f.event_invoke_configs
                .remove(&q)
                .map(|_| ())
                .ok_or_else(|| no_config(&arn))
        })
    }

    /// Every qualifier's settings, `$LATEST` first, then versions, then aliases (AWS's order).
    pub fn list_event_invoke_configs(
        &self,
        region: &str,
        name_or_arn: &str,
    ) -> Result<Vec<(String, EventInvokeConfig)>, AwsError> {
        let (name, _) = parse_function(name_or_arn)?;
        let f = self
            .function(region, &name)
            .map_err(|_| function_missing())?;
        let rank = |q: &str| match q {
            "$LATEST" => (0, 0, String::new()),
            q => match q.parse::<u64>() {
                Ok(n) => (1, n, String::new()),
                Err(_) => (2, 0, q.to_string()),
            },
        };
        let mut all: Vec<_> = f.event_invoke_configs.into_iter().collect();
        all.sort_by_key(|(q, _)| rank(q));
        Ok(all
            .into_iter()
            .map(|(q, c)| (self.invoke_config_arn(region, &name, &q), c))
            .collect())
    }
}

fn now_epoch() -> f64 {
    let ms = chrono::Utc::now().timestamp_millis();
    ms as f64 / 1000.0
}

/// `FunctionEventInvokeConfig` as the API reports it.
pub(super) fn config_json(arn: &str, c: &EventInvokeConfig) -> Value {
    let destination = |d: &Option<String>| match d {
        Some(d) => json!({"Destination": d}),
        None => json!({}),
    };
    let mut v = json!({
        "FunctionArn": arn,
        "LastModified": c.last_modified,
        "DestinationConfig": {
            "OnSuccess": destination(&c.on_success),
            "OnFailure": destination(&c.on_failure),
        },
    });
    if let Some(n) = c.maximum_retry_attempts {
        v["MaximumRetryAttempts"] = json!(n);
    }
    if let Some(n) = c.maximum_event_age {
        v["MaximumEventAgeInSeconds"] = json!(n);
    }
    v
}

fn destination(config: &Map<String, Value>, key: &str) -> Result<Option<Option<String>>, AwsError> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(o)) => match o.get("Destination") {
            None | Some(Value::Null) => Ok(Some(None)),
            Some(Value::String(d)) => Ok(Some(Some(d.clone()))),
            Some(_) => Err(serialization(&format!("{key}.Destination"))),
        },
        Some(_) => Err(serialization(key)),
    }
}

fn serialization(field: &str) -> AwsError {
    AwsError::bad_request(
        "SerializationException",
        format!("Could not parse request body: {field} has the wrong type"),
    )
}

/// The request body of Put/UpdateFunctionEventInvokeConfig.
pub(super) fn input(b: &Body) -> Result<EventInvokeInput, AwsError> {
    let mut input = EventInvokeInput {
        maximum_retry_attempts: i(b, "MaximumRetryAttempts")?,
        maximum_event_age: i(b, "MaximumEventAgeInSeconds")?,
        ..Default::default()
    };
    match b.get("DestinationConfig") {
        None | Some(Value::Null) => {}
        Some(Value::Object(d)) => {
            input.destination_config = true;
            input.on_success = destination(d, "OnSuccess")?;
            input.on_failure = destination(d, "OnFailure")?;
        }
        Some(_) => return Err(serialization("DestinationConfig")),
    }
    Ok(input)
}

/// `/2019-09-25/functions/{name}/event-invoke-config[/list]`.
pub(super) fn wire(
    core: &Arc<Lambda>,
    req: &AwsRequest,
    name: &str,
    rest: &[&str],
) -> Result<AwsResponse, AwsError> {
    let region = req.region.as_str();
    let qualifier = req.query_param("Qualifier");
    match (&req.method, rest) {
        (&Method::PUT, []) => {
            let (arn, c) =
                core.put_event_invoke_config(region, name, qualifier, &input(&body(req)?)?)?;
            Ok(ok(StatusCode::OK, config_json(&arn, &c)))
        }
        (&Method::POST, []) => {
            let (arn, c) =
                core.update_event_invoke_config(region, name, qualifier, &input(&body(req)?)?)?;
            Ok(ok(StatusCode::OK, config_json(&arn, &c)))
        }
        (&Method::GET, []) => {
            let (arn, c) = core.get_event_invoke_config(region, name, qualifier)?;
            Ok(ok(StatusCode::OK, config_json(&arn, &c)))
        }
        (&Method::DELETE, []) => {
            core.delete_event_invoke_config(region, name, qualifier)?;
            Ok(AwsResponse::empty(StatusCode::NO_CONTENT))
        }
        (&Method::GET, ["list"]) => {
            let all: Vec<Value> = core
                .list_event_invoke_configs(region, name)?
                .iter()
                .map(|(arn, c)| config_json(arn, c))
                .collect();
            Ok(ok(
                StatusCode::OK,
                json!({"FunctionEventInvokeConfigs": all}),
            ))
        }
        _ => Err(AwsError::not_implemented(
            "lambda",
            &format!("{} {}", req.method, req.raw_path),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_qualifier_in_the_name_must_match_the_parameter() {
        assert_eq!(
            Lambda::invoke_config_target("fn", None).unwrap(),
            ("fn".into(), "$LATEST".into())
        );
        assert_eq!(
            Lambda::invoke_config_target("fn:live", Some("live")).unwrap(),
            ("fn".into(), "live".into())
        );
        assert_eq!(
            Lambda::invoke_config_target(
                "arn:aws:lambda:us-east-1:000000000000:function:fn:1",
                None
            )
            .unwrap(),
            ("fn".into(), "1".into())
        );
        let e = Lambda::invoke_config_target("fn:1", Some("2")).unwrap_err();
        assert_eq!(e.code, "InvalidParameterValueException");
    }

    #[test]
    fn destinations_must_be_arn_shaped() {
        assert!(arn_shaped("arn:aws:sqs:us-east-1:000000000000:q"));
        assert!(arn_shaped(
            "arn:aws:events:us-east-1:000000000000:event-bus/default"
        ));
        assert!(!arn_shaped(
            "arn:aws:_-/!lambda:us-east-1:000000000000:function:f"
        ));
        assert!(!arn_shaped("not-an-arn"));
    }

    #[test]
    fn the_body_tells_an_empty_destination_from_none() {
        let b: Body = serde_json::from_str(
            r#"{"MaximumRetryAttempts": 1, "DestinationConfig": {"OnSuccess": {}, "OnFailure": {"Destination": "arn:aws:sqs:us-east-1:000000000000:q"}}}"#,
        )
        .unwrap();
        let got = input(&b).unwrap();
        assert_eq!(got.maximum_retry_attempts, Some(1));
        assert!(got.destination_config);
        assert_eq!(got.on_success, Some(None));
        assert_eq!(
            got.on_failure,
            Some(Some("arn:aws:sqs:us-east-1:000000000000:q".into()))
        );
    }
}
