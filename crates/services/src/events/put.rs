//! PutEvents: each entry becomes an event on its bus, is matched against the bus's enabled rules
//! and delivered to their targets — SQS and SNS in-process through those services' typed
//! operations, CloudWatch Logs log groups through Logs' typed operations — with the target's
//! Input / InputPath / InputTransformer applied. A target cumulo
//! cannot deliver to (Lambda until that service exists, Kinesis, ...) fails the entry with an
//! error naming it, and the event goes to the target's dead-letter queue if it has one: a
//! failure is never silent.

use super::EventsService;
use super::ops::{bus_name, not_found};
use super::state::{Rule, Target};
use crate::sns::PublishInput;
use crate::sqs::model::SendMessageInput;
use chrono::{TimeZone, Utc};
use cumulo_wire::AwsError;
use serde_json::{Value, json};

const MAX_ENTRIES: usize = 10;
const MAX_TOTAL_BYTES: usize = 256 * 1024;

/// One PutEvents entry.
#[derive(Debug, Clone, Default)]
pub struct PutEventsEntry {
    pub source: Option<String>,
    pub detail_type: Option<String>,
    pub detail: Option<String>,
    pub resources: Vec<String>,
    /// Seconds since the epoch.
    pub time: Option<f64>,
    pub bus: Option<String>,
}

/// One entry's result: its event id, or the error that kept it from being (fully) handled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PutEventsResult {
    Ok(String),
    Failed { code: String, message: String },
}

fn entry_error(code: &str, message: impl Into<String>) -> PutEventsResult {
    PutEventsResult::Failed {
        code: code.into(),
        message: message.into(),
    }
}

fn iso_time(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms)
        .single()
        .unwrap_or_else(Utc::now)
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// The value at a JSONPath like `$.detail.items[0].id` (`$` is the whole document).
fn select<'v>(doc: &'v Value, path: &str) -> Option<&'v Value> {
    let rest = path.trim().strip_prefix('$')?;
    let mut cur = doc;
    for seg in rest.split('.').filter(|s| !s.is_empty()) {
        let (key, indexes) = match seg.find('[') {
            Some(i) => seg.split_at(i),
            None => (seg, ""),
        };
        if !key.is_empty() {
            cur = cur.get(key)?;
        }
        for idx in indexes.split('[').filter(|s| !s.is_empty()) {
            let n: usize = idx.strip_suffix(']')?.parse().ok()?;
            cur = cur.get(n)?;
        }
    }
    Some(cur)
}

/// The InputTransformer's output: `<name>` placeholders replaced by the values their paths
/// select. Inside a JSON string a string value goes in without its quotes; anywhere else a
/// value goes in as JSON (a missing one as `null`), which is how AWS fills templates.
fn transform(template: &str, vars: &dyn Fn(&str) -> Option<Value>) -> String {
    let mut out = String::new();
    let mut in_string = false;
    let mut escaped = false;
    let mut chars = template.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '<'
            && let Some(end) = template.get(i + 1..).and_then(|s| s.find('>'))
        {
            let name = &template[i + 1..i + 1 + end];
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|ch| ch.is_alphanumeric() || "_-.".contains(ch));
            if valid {
                let v = vars(name);
                match (in_string, v) {
                    (true, Some(Value::String(s))) => {
                        let quoted = Value::String(s).to_string();
                        out.push_str(&quoted[1..quoted.len() - 1]);
                    }
                    (true, Some(v)) => out.push_str(&v.to_string()),
                    (true, None) => {}
                    (false, Some(v)) => out.push_str(&v.to_string()),
                    (false, None) => out.push_str("null"),
                }
                for _ in 0..=end {
                    chars.next();
                }
                continue;
            }
        }
        if c == '"' && !escaped {
            in_string = !in_string;
        }
        escaped = c == '\\' && !escaped;
        out.push(c);
    }
    out
}

impl EventsService {
    /// What a target receives for `event`.
    pub(super) fn target_input(
        &self,
        region: &str,
        rule: &Rule,
        target: &Target,
        event: &Value,
    ) -> String {
        if let Some(i) = &target.input {
            return i.clone();
        }
        if let Some(p) = &target.input_path {
            return select(event, p).map_or_else(|| "null".into(), Value::to_string);
        }
        if let Some(t) = &target.input_transformer {
            let rule_arn = self.rule_arn(region, &rule.bus, &rule.name);
            let vars = |name: &str| -> Option<Value> {
                match name {
                    "aws.events.rule-arn" => Some(json!(rule_arn)),
                    "aws.events.rule-name" => Some(json!(rule.name)),
                    "aws.events.event" | "aws.events.event.json" => Some(event.clone()),
                    "aws.events.event.ingestion-time" => event.get("time").cloned(),
                    _ => t.paths.get(name).and_then(|p| select(event, p)).cloned(),
                }
            };
            return transform(&t.template, &vars);
        }
        event.to_string()
    }

    /// Delivers one input to one target; the error says why it could not be.
    fn deliver(&self, target: &Target, input: &str, event_id: &str) -> Result<(), String> {
        let service = target.arn.split(':').nth(2).unwrap_or_default();
        match service {
            "sqs" => {
                let send = SendMessageInput {
                    body: input.to_string(),
                    group_id: target.message_group_id.clone(),
                    ..Default::default()
                };
                self.inner
                    .sqs
                    .send_to_arn(&target.arn, &send)
                    .map(|_| ())
                    .map_err(|e| format!("{}: {}", e.code, e.message))
            }
            "sns" => {
                let region = target.arn.split(':').nth(3).unwrap_or_default();
                let publish = PublishInput {
                    topic_arn: Some(target.arn.clone()),
                    target_arn: None,
                    phone_number: None,
                    message: input.to_string(),
                    subject: None,
                    message_structure: None,
                    message_attributes: Vec::new(),
                    message_group_id: target.message_group_id.clone(),
                    message_deduplication_id: None,
                };
                self.inner
                    .sns
                    .publish(region, "http://localhost:4566", publish)
                    .map(|_| ())
                    .map_err(|e| format!("{}: {}", e.code, e.message))
            }
            "logs" => self.deliver_to_log_group(target, input, event_id),
            "lambda" => self.deliver_to_function(target, input),
            other => Err(format!(
                "cumulo: delivery to {other} targets is not emulated"
            )),
        }
    }

    /// A Lambda target: invoked with InvocationType `Event`, as EventBridge invokes functions, so
    /// delivery does not wait for the handler. A function that cannot be invoked (gone, not
    /// Active) is logged, as AWS reports it only in metrics.
    fn deliver_to_function(&self, target: &Target, input: &str) -> Result<(), String> {
        let region = target.arn.split(':').nth(3).unwrap_or_default().to_string();
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| "cumulo: no runtime to invoke the Lambda target on".to_string())?;
        let lambda = self.inner.lambda.core();
        let arn = target.arn.clone();
        let payload = bytes::Bytes::from(input.to_string());
        runtime.spawn(async move {
            let invoked = lambda
                .invoke(
                    &region,
                    &arn,
                    None,
                    payload,
                    crate::lambda::InvocationType::Event,
                    "",
                )
                .await;
            if let Err(e) = invoked {
                eprintln!(
                    "cumulo: events: invoking {arn} failed: {}: {}",
                    e.code, e.message
                );
            }
        });
        Ok(())
    }

    /// A log group target: the input goes into a log stream named after the event id, as
    /// EventBridge writes them.
    fn deliver_to_log_group(
        &self,
        target: &Target,
        input: &str,
        event_id: &str,
    ) -> Result<(), String> {
        let region = target.arn.split(':').nth(3).unwrap_or_default();
        let group = crate::logs::group_name_from_arn(&target.arn)
            .ok_or_else(|| format!("{} is not a log group ARN", target.arn))?;
        let logs = &self.inner.logs;
        match logs.create_log_stream(region, &group, event_id) {
            Ok(()) => {}
            Err(e) if e.code == "ResourceAlreadyExistsException" => {}
            Err(e) => return Err(format!("{}: {}", e.code, e.message)),
        }
        let event = crate::logs::InputLogEvent {
            timestamp: super::ops::now_ms(),
            message: input.to_string(),
        };
        logs.put_log_events(region, &group, event_id, &[event])
            .map(|_| ())
            .map_err(|e| format!("{}: {}", e.code, e.message))
    }

    /// Sends `event` to every target of every enabled rule on `bus` whose pattern matches
    /// (`scheduled`: to `rule`'s targets only). Returns the failures, one line per target.
    pub(super) fn dispatch(
        &self,
        region: &str,
        bus: &str,
        event: &Value,
        only: Option<&Rule>,
    ) -> Vec<String> {
        let rules: Vec<Rule> = match only {
            Some(r) => vec![r.clone()],
            None => self
                .lock()
                .get(region)
                .into_iter()
                .flat_map(|r| r.rules.values())
                .filter(|r| r.bus == bus && r.enabled())
                .filter(|r| {
                    r.event_pattern
                        .as_deref()
                        .and_then(|p| super::ops::parse_pattern(p).ok())
                        .is_some_and(|p| p.matches(event))
                })
                .cloned()
                .collect(),
        };
        let mut failures = Vec::new();
        for rule in &rules {
            for target in &rule.targets {
                let input = self.target_input(region, rule, target, event);
                let event_id = event.get("id").and_then(Value::as_str).unwrap_or_default();
                if let Err(why) = self.deliver(target, &input, event_id) {
                    let line = format!(
                        "rule {} target {} ({}): {why}",
                        rule.name, target.id, target.arn
                    );
                    eprintln!("cumulo: events: delivery failed: {line}");
                    if let Some(dlq) = &target.dead_letter_arn {
                        let send = SendMessageInput {
                            body: event.to_string(),
                            ..Default::default()
                        };
                        if let Err(e) = self.inner.sqs.send_to_arn(dlq, &send) {
                            eprintln!(
                                "cumulo: events: dead-letter queue {dlq} refused the event: {}",
                                e.message
                            );
                        }
                    }
                    failures.push(line);
                }
            }
        }
        failures
    }

    pub fn put_events(
        &self,
        region: &str,
        entries: &[PutEventsEntry],
    ) -> Result<Vec<PutEventsResult>, AwsError> {
        if entries.is_empty() || entries.len() > MAX_ENTRIES {
            return Err(super::ops::validation(format!(
                "1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and {MAX_ENTRIES}"
            )));
        }
        let total: usize = entries
            .iter()
            .map(|e| {
                e.source.as_deref().map_or(0, str::len)
                    + e.detail_type.as_deref().map_or(0, str::len)
                    + e.detail.as_deref().map_or(0, str::len)
                    + e.resources.iter().map(String::len).sum::<usize>()
            })
            .sum();
        if total > MAX_TOTAL_BYTES {
            return Err(super::ops::validation(
                "Total size of the entries in the request is over the limit.",
            ));
        }
        Ok(entries.iter().map(|e| self.put_event(region, e)).collect())
    }

    fn put_event(&self, region: &str, e: &PutEventsEntry) -> PutEventsResult {
        let Some(source) = e.source.as_deref().filter(|s| !s.is_empty()) else {
            return entry_error(
                "InvalidArgument",
                "Parameter Source is not valid. Reason: Source is a required argument.",
            );
        };
        let Some(detail_type) = e.detail_type.as_deref().filter(|s| !s.is_empty()) else {
            return entry_error(
                "InvalidArgument",
                "Parameter DetailType is not valid. Reason: DetailType is a required argument.",
            );
        };
        let Some(detail) = e.detail.as_deref() else {
            return entry_error(
                "InvalidArgument",
                "Parameter Detail is not valid. Reason: Detail is a required argument.",
            );
        };
        let detail: Value = match serde_json::from_str(detail) {
            Ok(v @ Value::Object(_)) => v,
            _ => return entry_error("MalformedDetail", "Detail is malformed."),
        };
        let bus = bus_name(e.bus.as_deref());
        if self.describe_event_bus(region, Some(&bus)).is_err() {
            let err = not_found(format!("Event bus {bus} does not exist."));
            return entry_error(&err.code, err.message);
        }
        let id = uuid::Uuid::new_v4().to_string();
        let time_ms = e
            .time
            .map_or_else(super::ops::now_ms, |s| (s * 1000.0) as i64);
        let event = json!({
            "version": "0",
            "id": id,
            "detail-type": detail_type,
            "source": source,
            "account": self.account(),
            "time": iso_time(time_ms),
            "region": region,
            "resources": e.resources,
            "detail": detail,
        });
        let failures = self.dispatch(region, &bus, &event, None);
        if failures.is_empty() {
            PutEventsResult::Ok(id)
        } else {
            entry_error("cumulo.TargetDeliveryFailed", failures.join("; "))
        }
    }

    /// The event a scheduled rule sends its targets.
    pub(super) fn scheduled_event(&self, region: &str, rule: &Rule, at_ms: i64) -> Value {
        json!({
            "version": "0",
            "id": uuid::Uuid::new_v4().to_string(),
            "detail-type": "Scheduled Event",
            "source": "aws.events",
            "account": self.account(),
            "time": iso_time(at_ms),
            "region": region,
            "resources": [self.rule_arn(region, &rule.bus, &rule.name)],
            "detail": {},
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_templates() {
        let ev = json!({"detail": {"id": "i-1", "n": 3, "items": [{"k": "a"}]}, "source": "s"});
        assert_eq!(select(&ev, "$.detail.items[0].k"), Some(&json!("a")));
        assert_eq!(select(&ev, "$"), Some(&ev));
        assert_eq!(select(&ev, "$.nope"), None);
        let vars = |n: &str| match n {
            "id" => Some(json!("i-1")),
            "n" => Some(json!(3)),
            _ => None,
        };
        assert_eq!(
            transform(
                r#"{"instance": <id>, "msg": "<id> has <n>", "m": <missing>}"#,
                &vars
            ),
            r#"{"instance": "i-1", "msg": "i-1 has 3", "m": null}"#
        );
        assert_eq!(transform(r#""<id> is up""#, &vars), r#""i-1 is up""#);
    }
}
