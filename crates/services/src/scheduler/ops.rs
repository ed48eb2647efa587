//! The typed operations, taking and answering the API's JSON members (the provider calls them
//! with template properties, which have the same names). Validation follows AWS's wording
//! where it is recorded (`Invalid Schedule Expression <expr>.`, `Schedule <name> does not
//! exist.`).

use super::SchedulerService;
use super::expression::Expression;
use super::state::{DEFAULT_GROUP, GROUP, Group, SCHEDULE, Schedule, key};
use crate::schedule::now_ms;
use cumulo_wire::AwsError;
use http::StatusCode;
use serde_json::{Map, Value, json};

pub fn validation(message: impl Into<String>) -> AwsError {
    AwsError::new(StatusCode::BAD_REQUEST, "ValidationException", message)
}

pub fn not_found(message: impl Into<String>) -> AwsError {
    AwsError::new(StatusCode::NOT_FOUND, "ResourceNotFoundException", message)
}

fn conflict(message: impl Into<String>) -> AwsError {
    AwsError::new(StatusCode::CONFLICT, "ConflictException", message)
}

fn schedule_not_found(name: &str) -> AwsError {
    not_found(format!("Schedule {name} does not exist."))
}

fn group_not_found(name: &str) -> AwsError {
    not_found(format!("Schedule group {name} does not exist."))
}

fn now_s() -> f64 {
    now_ms() as f64 / 1000.0
}

/// Names of schedules, groups and name prefixes: `^[0-9a-zA-Z-_.]+$`, 1 to 64 long.
fn check_name(member: &str, name: &str) -> Result<(), AwsError> {
    let ok = (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(validation(format!(
            "1 validation error detected: Value '{name}' at '{member}' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[0-9a-zA-Z-_.]+$"
        )))
    }
}

fn text(input: &Value, member: &str) -> Result<Option<String>, AwsError> {
    match input.get(member) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(validation(format!(
            "{member} must be a string, not {other}"
        ))),
    }
}

fn required<'a>(input: &'a Value, member: &str) -> Result<&'a Value, AwsError> {
    input
        .get(member)
        .filter(|v| !v.is_null())
        .ok_or_else(|| {
            validation(format!(
                "1 validation error detected: Value null at '{}' failed to satisfy constraint: Member must not be null",
                lower_first(member)
            ))
        })
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_lowercase().chain(c).collect())
        .unwrap_or_default()
}

/// An integer member, also when a template wrote it as a string.
fn integer(v: &Value) -> Option<i64> {
    v.as_i64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
}

/// A timestamp member: epoch seconds (the SDKs' rest-json encoding) or an ISO 8601 string
/// (CloudFormation's `date-time`).
fn timestamp(input: &Value, member: &str) -> Result<Option<f64>, AwsError> {
    match input.get(member) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64()),
        Some(Value::String(s)) => chrono::DateTime::parse_from_rfc3339(s)
            .map(|t| Some(t.timestamp_millis() as f64 / 1000.0))
            .or_else(|_| s.parse::<f64>().map(Some))
            .map_err(|_| validation(format!("Invalid {member} {s}."))),
        Some(other) => Err(validation(format!("Invalid {member} {other}."))),
    }
}

/// `^[A-Za-z]+(/[A-Za-z0-9_+-]+)*$`-shaped IANA names (`UTC`, `Europe/Paris`,
/// `America/Argentina/Buenos_Aires`, `Etc/GMT+5`).
fn check_timezone(tz: &str) -> Result<(), AwsError> {
    let mut parts = tz.split('/');
    let first_ok = parts
        .next()
        .is_some_and(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphabetic() || c == '_'));
    let rest_ok = parts.all(|p| {
        !p.is_empty()
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '+' | '-'))
    });
    if first_ok && rest_ok && tz.len() <= 50 {
        Ok(())
    } else {
        Err(validation(format!("Invalid time zone {tz}.")))
    }
}

fn check_window(window: &Value) -> Result<(), AwsError> {
    let mode = window.get("Mode").and_then(Value::as_str).unwrap_or("");
    let max = window
        .get("MaximumWindowInMinutes")
        .filter(|v| !v.is_null());
    match mode {
        "OFF" => Ok(()),
        "FLEXIBLE" => match max.and_then(integer) {
            Some(1..=1440) => Ok(()),
            Some(n) => Err(validation(format!(
                "1 validation error detected: Value '{n}' at 'flexibleTimeWindow.maximumWindowInMinutes' failed to satisfy constraint: Member must have value between 1 and 1440"
            ))),
            None => Err(validation(
                "MaximumWindowInMinutes is required when FlexibleTimeWindow Mode is FLEXIBLE.",
            )),
        },
        other => Err(validation(format!(
            "1 validation error detected: Value '{other}' at 'flexibleTimeWindow.mode' failed to satisfy constraint: Member must satisfy enum value set: [OFF, FLEXIBLE]"
        ))),
    }
}

fn check_target(target: &Value) -> Result<(), AwsError> {
    let Some(obj) = target.as_object() else {
        return Err(validation("Target must be an object."));
    };
    for member in ["Arn", "RoleArn"] {
        required(target, member).map_err(|_| {
            validation(format!(
                "1 validation error detected: Value null at 'target.{}' failed to satisfy constraint: Member must not be null",
                lower_first(member)
            ))
        })?;
    }
    if obj.get("Input").and_then(Value::as_str) == Some("") {
        return Err(validation(
            "1 validation error detected: Value '' at 'target.input' failed to satisfy constraint: Member must have length greater than or equal to 1",
        ));
    }
    Ok(())
}

fn one_of(
    member: &str,
    value: Option<String>,
    allowed: &[&str],
) -> Result<Option<String>, AwsError> {
    match value {
        Some(v) if !allowed.contains(&v.as_str()) => Err(validation(format!(
            "1 validation error detected: Value '{v}' at '{}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
            lower_first(member),
            allowed.join(", ")
        ))),
        v => Ok(v),
    }
}

/// A schedule from CreateSchedule's or UpdateSchedule's members (everything but the name).
fn schedule_from(name: &str, input: &Value, now: f64) -> Result<Schedule, AwsError> {
    check_name("name", name)?;
    let group = text(input, "GroupName")?.unwrap_or_else(|| DEFAULT_GROUP.to_string());
    check_name("groupName", &group)?;
    let expression = required(input, "ScheduleExpression")?
        .as_str()
        .unwrap_or_default()
        .to_string();
    Expression::parse(&expression)?;
    let timezone = text(input, "ScheduleExpressionTimezone")?;
    if let Some(tz) = &timezone {
        check_timezone(tz)?;
    }
    let window = required(input, "FlexibleTimeWindow")?.clone();
    check_window(&window)?;
    let mut target = required(input, "Target")?.clone();
    check_target(&target)?;
    // A target given no retry policy gets AWS's default, and GetSchedule reports it.
    if let Some(t) = target.as_object_mut() {
        t.entry("RetryPolicy").or_insert_with(
            || serde_json::json!({"MaximumEventAgeInSeconds": 86400, "MaximumRetryAttempts": 185}),
        );
    }
    let (start, end) = (timestamp(input, "StartDate")?, timestamp(input, "EndDate")?);
    if let (Some(s), Some(e)) = (start, end)
        && s >= e
    {
        return Err(validation("The StartDate must come before the EndDate."));
    }
    let description = text(input, "Description")?;
    if description.as_ref().is_some_and(|d| d.len() > 512) {
        return Err(validation(
            "1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 512",
        ));
    }
    Ok(Schedule {
        name: name.to_string(),
        group,
        expression,
        timezone,
        description,
        start,
        end,
        window,
        target,
        state: one_of("State", text(input, "State")?, &["ENABLED", "DISABLED"])?
            .unwrap_or_else(|| "ENABLED".to_string()),
        kms_key: text(input, "KmsKeyArn")?,
        after_completion: one_of(
            "ActionAfterCompletion",
            text(input, "ActionAfterCompletion")?,
            &["NONE", "DELETE"],
        )?,
        created: now,
        modified: now,
        counted_from: (now * 1000.0) as i64,
    })
}

fn tag_list(tags: &[(String, String)]) -> Value {
    Value::Array(
        tags.iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect(),
    )
}

fn tags_of(input: &Value) -> Result<Vec<(String, String)>, AwsError> {
    let mut out = Vec::new();
    for t in input
        .get("Tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (Some(k), Some(v)) = (
            t.get("Key").and_then(Value::as_str),
            t.get("Value").and_then(Value::as_str),
        ) else {
            return Err(validation("Each tag must have a Key and a Value."));
        };
        if k.is_empty() || k.len() > 128 || v.is_empty() || v.len() > 256 {
            return Err(validation(format!("Invalid tag {k}.")));
        }
        out.push((k.to_string(), v.to_string()));
    }
    Ok(out)
}

/// `NextToken` paging over an ordered list: the token is the index of the next item.
fn page(items: Vec<Value>, input: &Value, list: &str) -> Result<Value, AwsError> {
    let max = match input.get("MaxResults").filter(|v| !v.is_null()) {
        None => 100,
        Some(v) => match integer(v) {
            Some(n @ 1..=100) => n as usize,
            _ => {
                return Err(validation(format!(
                    "1 validation error detected: Value '{v}' at 'maxResults' failed to satisfy constraint: Member must have value between 1 and 100"
                )));
            }
        },
    };
    let from = match text(input, "NextToken")? {
        None => 0,
        Some(t) => t
            .parse::<usize>()
            .map_err(|_| validation("The NextToken is not valid."))?,
    };
    let mut out = Map::new();
    let end = (from + max).min(items.len());
    out.insert(
        list.into(),
        Value::Array(items.get(from..end).unwrap_or_default().to_vec()),
    );
    if end < items.len() {
        out.insert("NextToken".into(), json!(end.to_string()));
    }
    Ok(Value::Object(out))
}

impl SchedulerService {
    fn group_json(&self, region: &str, g: &Group) -> Value {
        json!({
            "Arn": self.group_arn(region, &g.name),
            "Name": g.name,
            "State": "ACTIVE",
            "CreationDate": g.created,
            "LastModificationDate": g.modified,
        })
    }

    pub fn schedule_json(&self, region: &str, s: &Schedule) -> Value {
        let mut v = json!({
            "Arn": self.schedule_arn(region, &s.group, &s.name),
            "Name": s.name,
            "GroupName": s.group,
            "ScheduleExpression": s.expression,
            "FlexibleTimeWindow": s.window,
            "Target": s.target,
            "State": s.state,
            "CreationDate": s.created,
            "LastModificationDate": s.modified,
        });
        let optional = [
            (
                "ScheduleExpressionTimezone",
                s.timezone.clone().map(Value::from),
            ),
            ("Description", s.description.clone().map(Value::from)),
            ("StartDate", s.start.map(Value::from)),
            ("EndDate", s.end.map(Value::from)),
            ("KmsKeyArn", s.kms_key.clone().map(Value::from)),
            (
                "ActionAfterCompletion",
                s.after_completion.clone().map(Value::from),
            ),
        ];
        for (k, val) in optional {
            if let Some(val) = val {
                v[k] = val;
            }
        }
        v
    }

    pub fn create_schedule(
        &self,
        region: &str,
        name: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let now = now_s();
        let s = schedule_from(name, input, now)?;
        let arn = self.schedule_arn(region, &s.group, name);
        self.regions.mutate(region, |r| {
            r.keep_default(now);
            if r.group(&s.group, now).is_none() {
                return Err(group_not_found(&s.group));
            }
            if r.schedules.contains_key(&s.key()) {
                return Err(conflict(format!("Schedule {name} already exists.")));
            }
            r.touch(SCHEDULE, &s.key());
            r.schedules.insert(s.key(), s.clone());
            Ok(())
        })?;
        self.reschedule(region, &s);
        Ok(json!({"ScheduleArn": arn}))
    }

    /// UpdateSchedule replaces every member, as AWS does: what the request leaves out is reset.
    pub fn update_schedule(
        &self,
        region: &str,
        name: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let now = now_s();
        let mut s = schedule_from(name, input, now)?;
        let arn = self.schedule_arn(region, &s.group, name);
        self.regions.mutate(region, |r| {
            let old = r
                .schedules
                .get(&s.key())
                .ok_or_else(|| schedule_not_found(name))?;
            s.created = old.created;
            r.touch(SCHEDULE, &s.key());
            r.schedules.insert(s.key(), s.clone());
            Ok(())
        })?;
        self.reschedule(region, &s);
        Ok(json!({"ScheduleArn": arn}))
    }

    pub fn schedule(
        &self,
        region: &str,
        name: &str,
        group: Option<&str>,
    ) -> Result<Schedule, AwsError> {
        let group = group.unwrap_or(DEFAULT_GROUP);
        check_name("name", name)?;
        self.regions
            .read(region, |r| r.schedules.get(&key(group, name)).cloned())
            .ok_or_else(|| schedule_not_found(name))
    }

    pub fn get_schedule(
        &self,
        region: &str,
        name: &str,
        group: Option<&str>,
    ) -> Result<Value, AwsError> {
        let s = self.schedule(region, name, group)?;
        Ok(self.schedule_json(region, &s))
    }

    pub fn delete_schedule(
        &self,
        region: &str,
        name: &str,
        group: Option<&str>,
    ) -> Result<(), AwsError> {
        let group = group.unwrap_or(DEFAULT_GROUP).to_string();
        check_name("name", name)?;
        let k = key(&group, name);
        self.regions.mutate(region, |r| {
            r.schedules
                .remove(&k)
                .ok_or_else(|| schedule_not_found(name))?;
            r.touch(SCHEDULE, &k);
            Ok(())
        })?;
        self.timers.set(region, &k, None);
        Ok(())
    }

    pub fn list_schedules(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let group = text(input, "GroupName")?;
        let prefix = text(input, "NamePrefix")?;
        let state = one_of("State", text(input, "State")?, &["ENABLED", "DISABLED"])?;
        let now = now_s();
        let items = self.regions.read(region, |r| {
            if let Some(g) = &group
                && r.group(g, now).is_none()
            {
                return Err(group_not_found(g));
            }
            Ok(r.schedules
                .values()
                .filter(|s| group.as_ref().is_none_or(|g| *g == s.group))
                .filter(|s| {
                    prefix
                        .as_ref()
                        .is_none_or(|p| s.name.starts_with(p.as_str()))
                })
                .filter(|s| state.as_ref().is_none_or(|st| *st == s.state))
                .map(|s| {
                    json!({
                        "Arn": self.schedule_arn(region, &s.group, &s.name),
                        "Name": s.name,
                        "GroupName": s.group,
                        "State": s.state,
                        "CreationDate": s.created,
                        "LastModificationDate": s.modified,
                        "Target": {"Arn": s.target["Arn"]},
                    })
                })
                .collect::<Vec<Value>>())
        })?;
        page(items, input, "Schedules")
    }

    pub fn create_schedule_group(
        &self,
        region: &str,
        name: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        check_name("name", name)?;
        let tags = tags_of(input)?;
        let now = now_s();
        self.regions.mutate(region, |r| {
            r.keep_default(now);
            if r.groups.contains_key(name) {
                return Err(conflict(format!("Schedule group {name} already exists.")));
            }
            r.groups.insert(
                name.to_string(),
                Group {
                    name: name.to_string(),
                    created: now,
                    modified: now,
                    tags,
                },
            );
            r.touch(GROUP, name);
            Ok(())
        })?;
        Ok(json!({"ScheduleGroupArn": self.group_arn(region, name)}))
    }

    pub fn get_schedule_group(&self, region: &str, name: &str) -> Result<Value, AwsError> {
        check_name("name", name)?;
        let g = self
            .regions
            .read(region, |r| r.group(name, now_s()))
            .ok_or_else(|| group_not_found(name))?;
        Ok(self.group_json(region, &g))
    }

    /// Deletes the group and every schedule in it. AWS reports the group DELETING while it
    /// deletes them in the background; here both are gone when the call returns.
    pub fn delete_schedule_group(&self, region: &str, name: &str) -> Result<(), AwsError> {
        check_name("name", name)?;
        if name == DEFAULT_GROUP {
            return Err(validation("The default schedule group cannot be deleted."));
        }
        let gone = self.regions.mutate(region, |r| {
            r.groups.remove(name).ok_or_else(|| group_not_found(name))?;
            r.touch(GROUP, name);
            let keys: Vec<String> = r
                .schedules
                .values()
                .filter(|s| s.group == name)
                .map(Schedule::key)
                .collect();
            for k in &keys {
                r.schedules.remove(k);
                r.touch(SCHEDULE, k);
            }
            Ok(keys)
        })?;
        for k in gone {
            self.timers.set(region, &k, None);
        }
        Ok(())
    }

    pub fn list_schedule_groups(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let prefix = text(input, "NamePrefix")?;
        let now = now_s();
        let items = self.regions.read(region, |r| {
            let mut groups: Vec<Group> = r.groups.values().cloned().collect();
            if !r.groups.contains_key(DEFAULT_GROUP) {
                groups.extend(r.group(DEFAULT_GROUP, now));
                groups.sort_by(|a, b| a.name.cmp(&b.name));
            }
            groups
                .iter()
                .filter(|g| {
                    prefix
                        .as_ref()
                        .is_none_or(|p| g.name.starts_with(p.as_str()))
                })
                .map(|g| self.group_json(region, g))
                .collect::<Vec<Value>>()
        });
        page(items, input, "ScheduleGroups")
    }

    /// The group a tagging ARN names (`arn:aws:scheduler:<region>:<account>:schedule-group/<name>`);
    /// schedules take no tags.
    fn tagged_group(&self, arn: &str) -> Result<String, AwsError> {
        let resource = arn.splitn(6, ':').nth(5).unwrap_or_default();
        match resource.split_once('/') {
            Some(("schedule-group", name)) if arn.starts_with("arn:aws:scheduler:") => {
                Ok(name.to_string())
            }
            _ => Err(validation(format!(
                "Invalid ARN {arn}: only schedule groups take tags."
            ))),
        }
    }

    fn edit_tags(
        &self,
        region: &str,
        arn: &str,
        edit: impl FnOnce(&mut Vec<(String, String)>),
    ) -> Result<(), AwsError> {
        let name = self.tagged_group(arn)?;
        let now = now_s();
        self.regions.mutate(region, |r| {
            r.keep_default(now);
            let g = r
                .groups
                .get_mut(&name)
                .ok_or_else(|| group_not_found(&name))?;
            edit(&mut g.tags);
            r.touch(GROUP, &name);
            Ok(())
        })
    }

    pub fn tag_resource(&self, region: &str, arn: &str, input: &Value) -> Result<(), AwsError> {
        let tags = tags_of(input)?;
        self.edit_tags(region, arn, |have| {
            for (k, v) in tags {
                have.retain(|(hk, _)| *hk != k);
                have.push((k, v));
            }
        })
    }

    pub fn untag_resource(&self, region: &str, arn: &str, keys: &[String]) -> Result<(), AwsError> {
        self.edit_tags(region, arn, |have| have.retain(|(k, _)| !keys.contains(k)))
    }

    pub fn list_tags(&self, region: &str, arn: &str) -> Result<Value, AwsError> {
        let name = self.tagged_group(arn)?;
        let g = self
            .regions
            .read(region, |r| r.group(&name, now_s()))
            .ok_or_else(|| group_not_found(&name))?;
        Ok(json!({"Tags": tag_list(&g.tags)}))
    }
}
