//! Health checks: their configuration with AWS's defaults filled in, versioned updates,
//! CallerReference idempotency. No checker probes anything locally.

use super::Route53Service;
use super::ops::{Write, err, invalid_input, max_items, now_ms, str_of};
use super::state::HealthCheck;
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

const TYPES: &[&str] = &[
    "HTTP",
    "HTTPS",
    "HTTP_STR_MATCH",
    "HTTPS_STR_MATCH",
    "TCP",
    "CALCULATED",
    "CLOUDWATCH_METRIC",
    "RECOVERY_CONTROL",
];
/// Members UpdateHealthCheck may change.
const UPDATABLE: &[&str] = &[
    "IPAddress",
    "Port",
    "ResourcePath",
    "FullyQualifiedDomainName",
    "SearchString",
    "FailureThreshold",
    "Inverted",
    "Disabled",
    "HealthThreshold",
    "ChildHealthChecks",
    "EnableSNI",
    "Regions",
    "AlarmIdentifier",
    "InsufficientDataHealthStatus",
];

pub fn no_such_health_check(id: &str) -> AwsError {
    AwsError::not_found(
        "NoSuchHealthCheck",
        format!("A health check with id {id} does not exist."),
    )
}

/// The configuration with AWS's defaults for what the request left out.
fn with_defaults(mut c: Map<String, Value>) -> Result<Map<String, Value>, AwsError> {
    let kind = c
        .get("Type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if !TYPES.contains(&kind.as_str()) {
        return Err(invalid_input(format!(
            "1 validation error detected: Value '{kind}' at 'healthCheckConfig.type' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
            TYPES.join(", ")
        )));
    }
    let endpoint = matches!(
        kind.as_str(),
        "HTTP" | "HTTPS" | "HTTP_STR_MATCH" | "HTTPS_STR_MATCH" | "TCP"
    );
    let https = kind.starts_with("HTTPS");
    if endpoint {
        if !c.contains_key("IPAddress") && !c.contains_key("FullyQualifiedDomainName") {
            return Err(invalid_input(
                "Invalid health check: at least one of IPAddress and FullyQualifiedDomainName must be specified.",
            ));
        }
        if kind.ends_with("STR_MATCH") && !c.contains_key("SearchString") {
            return Err(invalid_input(
                "A search string must be specified for health checks of type HTTP_STR_MATCH or HTTPS_STR_MATCH.",
            ));
        }
        let defaults = [
            ("Port", json!(if https { 443 } else { 80 })),
            ("RequestInterval", json!(30)),
            ("FailureThreshold", json!(3)),
            ("MeasureLatency", json!(false)),
            ("EnableSNI", json!(https)),
        ];
        for (k, v) in defaults {
            c.entry(k.to_string()).or_insert(v);
        }
    }
    c.entry("Inverted".to_string()).or_insert(json!(false));
    c.entry("Disabled".to_string()).or_insert(json!(false));
    Ok(c)
}

fn health_check_json(h: &HealthCheck) -> Value {
    json!({
        "Id": h.id,
        "CallerReference": h.caller_reference,
        "HealthCheckConfig": h.config,
        "HealthCheckVersion": h.version,
    })
}

impl Route53Service {
    /// CreateHealthCheck: a CallerReference seen before answers the existing check when the
    /// configuration is the same and HealthCheckAlreadyExists when it differs.
    pub fn create_health_check(
        &self,
        caller_reference: &str,
        config: Map<String, Value>,
    ) -> Result<(HealthCheck, bool), AwsError> {
        if caller_reference.is_empty() {
            return Err(invalid_input(
                "1 validation error detected: Value null at 'callerReference' failed to satisfy constraint: Member must not be null",
            ));
        }
        let config = with_defaults(config)?;
        self.commit(|s| {
            if let Some(h) = s
                .health_checks
                .values()
                .find(|h| h.caller_reference == caller_reference)
            {
                if h.config == config {
                    return Ok(((h.clone(), false), vec![]));
                }
                return Err(AwsError::new(
                    http::StatusCode::CONFLICT,
                    "HealthCheckAlreadyExists",
                    format!(
                        "A health check with the CallerReference {caller_reference} already exists with a different configuration."
                    ),
                ));
            }
            let h = HealthCheck {
                id: uuid::Uuid::new_v4().to_string(),
                caller_reference: caller_reference.to_string(),
                config,
                version: 1,
                tags: Default::default(),
                created_ms: now_ms(),
            };
            Ok(((h.clone(), true), vec![Write::HealthCheck(h)]))
        })
    }

    pub fn health_check(&self, id: &str) -> Result<HealthCheck, AwsError> {
        self.lock()
            .health_checks
            .get(id)
            .cloned()
            .ok_or_else(|| no_such_health_check(id))
    }

    pub(super) fn update_health_check(
        &self,
        id: &str,
        f: impl FnOnce(&mut HealthCheck) -> Result<(), AwsError>,
    ) -> Result<HealthCheck, AwsError> {
        self.commit(|s| {
            let mut h = s
                .health_checks
                .get(id)
                .cloned()
                .ok_or_else(|| no_such_health_check(id))?;
            f(&mut h)?;
            Ok((h.clone(), vec![Write::HealthCheck(h)]))
        })
    }

    /// UpdateHealthCheck's members (and ResetElements) applied; the version goes up by one.
    pub fn change_health_check(
        &self,
        id: &str,
        changes: &Map<String, Value>,
        expected_version: Option<i64>,
        reset: &[String],
    ) -> Result<HealthCheck, AwsError> {
        self.update_health_check(id, |h| {
            if let Some(v) = expected_version
                && v != h.version
            {
                return Err(err(
                    "HealthCheckVersionMismatch",
                    "The value of HealthCheckVersion in the request doesn't match the value of HealthCheckVersion in the health check.",
                ));
            }
            for (k, v) in changes {
                if UPDATABLE.contains(&k.as_str()) {
                    h.config.insert(k.clone(), v.clone());
                }
            }
            for k in reset {
                h.config.remove(k);
            }
            h.version += 1;
            Ok(())
        })
    }

    /// DeleteHealthCheck: refused while a record set names the check.
    pub fn delete_health_check(&self, id: &str) -> Result<(), AwsError> {
        self.commit(|s| {
            if !s.health_checks.contains_key(id) {
                return Err(no_such_health_check(id));
            }
            let used = s.zones.values().flat_map(|z| &z.records).any(|r| {
                r.routing.get("HealthCheckId").and_then(Value::as_str) == Some(id)
            });
            if used {
                return Err(err(
                    "HealthCheckInUse",
                    format!("The health check {id} is still referenced from at least one resource record set."),
                ));
            }
            Ok(((), vec![Write::DropHealthCheck(id.to_string())]))
        })
    }

    pub fn api_create_health_check(&self, input: &Value) -> Result<Value, AwsError> {
        let config = input
            .get("HealthCheckConfig")
            .and_then(Value::as_object)
            .cloned()
            .ok_or_else(|| {
                invalid_input("1 validation error detected: Value null at 'healthCheckConfig' failed to satisfy constraint: Member must not be null")
            })?;
        let (h, _) = self.create_health_check(str_of(input, "CallerReference"), config)?;
        Ok(json!({
            "HealthCheck": health_check_json(&h),
            "Location": format!("https://route53.amazonaws.com/2013-04-01/healthcheck/{}", h.id),
        }))
    }

    pub fn api_get_health_check(&self, id: &str) -> Result<Value, AwsError> {
        Ok(json!({"HealthCheck": health_check_json(&self.health_check(id)?)}))
    }

    pub fn api_update_health_check(&self, input: &Value) -> Result<Value, AwsError> {
        let changes = input.as_object().cloned().unwrap_or_default();
        let reset: Vec<String> = input
            .get("ResetElements")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        let h = self.change_health_check(
            str_of(input, "HealthCheckId"),
            &changes,
            input.get("HealthCheckVersion").and_then(Value::as_i64),
            &reset,
        )?;
        Ok(json!({"HealthCheck": health_check_json(&h)}))
    }

    pub fn api_list_health_checks(&self, input: &Value) -> Result<Value, AwsError> {
        let max = max_items(input)?;
        let marker = input.get("Marker").and_then(Value::as_str);
        let s = self.lock();
        let mut all: Vec<&HealthCheck> = s.health_checks.values().collect();
        all.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        let start = match marker {
            Some(m) => all
                .iter()
                .position(|h| h.id == m)
                .ok_or_else(|| invalid_input(format!("Invalid marker: {m}")))?,
            None => 0,
        };
        let page: Vec<Value> = all
            .iter()
            .skip(start)
            .take(max)
            .map(|h| health_check_json(h))
            .collect();
        let mut out = json!({
            "HealthChecks": page,
            "Marker": marker.unwrap_or(""),
            "IsTruncated": all.len() > start + max,
            "MaxItems": max.to_string(),
        });
        if let Some(n) = all.get(start + max) {
            out["NextMarker"] = json!(n.id);
        }
        Ok(out)
    }

    pub fn api_health_check_count(&self) -> Value {
        json!({"HealthCheckCount": self.lock().health_checks.len()})
    }
}
