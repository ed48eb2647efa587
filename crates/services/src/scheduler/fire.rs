//! Firing: when an ENABLED schedule is due, the shared loop (`crate::schedule::Timers`) calls
//! [`SchedulerService::fire`], which invokes the schedule's templated target with its `Input`
//! as the payload — Lambda (Invoke, asynchronously), SQS (SendMessage), SNS (Publish), Step
//! Functions (StartExecution) and EventBridge (PutEvents) — through those services' typed
//! operations. Without an `Input` the payload is `{}`. A target cumulo cannot invoke
//! (universal `aws-sdk` targets, Kinesis, ECS, SageMaker, ...) or an invocation that fails is
//! written to stderr naming the schedule and why, and the input goes to the target's
//! dead-letter queue when it has one. A schedule with a flexible time window fires at the
//! window's start. Once nothing is left to fire (an `at()` that fired, a recurring schedule
//! past its EndDate), ActionAfterCompletion DELETE deletes the schedule.

use super::SchedulerService;
use super::expression::Expression;
use super::state::{Schedule, key};
use crate::events::PutEventsEntry;
use crate::schedule::now_ms;
use crate::sns::PublishInput;
use crate::sqs::model::SendMessageInput;
use serde_json::Value;

/// The next firing of `s` after `after` (ms), `None` when it is disabled or done.
pub(super) fn next_firing(s: &Schedule, after: i64) -> Option<i64> {
    if s.state != "ENABLED" {
        return None;
    }
    let ms = |t: Option<f64>| t.map(|t| (t * 1000.0) as i64);
    Expression::parse(&s.expression)
        .ok()?
        .next_after(s.counted_from, after, ms(s.start), ms(s.end))
}

fn text(v: &Value, path: &[&str]) -> Option<String> {
    path.iter()
        .try_fold(v, |v, k| v.get(*k))
        .and_then(Value::as_str)
        .map(str::to_string)
}

impl SchedulerService {
    /// Records when `s` fires next (or that it does not) and wakes the loop.
    pub(super) fn reschedule(&self, region: &str, s: &Schedule) {
        self.timers.set(region, &s.key(), next_firing(s, now_ms()));
    }

    /// Every stored schedule's next firing (at start-up).
    pub(super) fn reschedule_all(&self) {
        let all: Vec<(String, Schedule)> = self
            .regions
            .lock()
            .iter()
            .flat_map(|(region, r)| r.schedules.values().map(|s| (region.clone(), s.clone())))
            .collect();
        for (region, s) in all {
            self.reschedule(&region, &s);
        }
    }

    /// A due schedule (`key` is `<group>/<name>`): invokes its target, then records its next
    /// firing or, when it is done and says so, deletes it.
    pub(super) fn fire(&self, region: &str, key_: &str, now: i64) {
        let Some((group, name)) = key_.split_once('/') else {
            return;
        };
        let Ok(s) = self.schedule(region, name, Some(group)) else {
            return;
        };
        if s.state != "ENABLED" {
            return;
        }
        let input = text(&s.target, &["Input"]).unwrap_or_else(|| "{}".to_string());
        if let Err(why) = self.invoke(region, &s, &input) {
            eprintln!(
                "cumulo: scheduler: schedule {group}/{name} could not invoke {}: {why}",
                s.target["Arn"]
            );
            self.dead_letter(&s, &input);
        }
        match next_firing(&s, now) {
            Some(t) => self.timers.set(region, key_, Some(t)),
            None if s.after_completion.as_deref() == Some("DELETE") => {
                if let Err(e) = self.delete_schedule(region, name, Some(group)) {
                    eprintln!(
                        "cumulo: scheduler: deleting completed schedule {group}/{name}: {}",
                        e.message
                    );
                }
            }
            None => {}
        }
    }

    fn dead_letter(&self, s: &Schedule, input: &str) {
        let Some(dlq) = text(&s.target, &["DeadLetterConfig", "Arn"]) else {
            return;
        };
        let send = SendMessageInput {
            body: input.to_string(),
            ..Default::default()
        };
        if let Err(e) = self.sqs.send_to_arn(&dlq, &send) {
            eprintln!(
                "cumulo: scheduler: dead-letter queue {dlq} of {}: {}: {}",
                key(&s.group, &s.name),
                e.code,
                e.message
            );
        }
    }

    /// Invokes a templated target; the error says why it could not be.
    fn invoke(&self, region: &str, s: &Schedule, input: &str) -> Result<(), String> {
        let arn = text(&s.target, &["Arn"]).unwrap_or_default();
        let service = arn.split(':').nth(2).unwrap_or_default();
        let fail = |e: cumulo_wire::AwsError| format!("{}: {}", e.code, e.message);
        match service {
            "sqs" => {
                let send = SendMessageInput {
                    body: input.to_string(),
                    group_id: text(&s.target, &["SqsParameters", "MessageGroupId"]),
                    ..Default::default()
                };
                self.sqs.send_to_arn(&arn, &send).map(|_| ()).map_err(fail)
            }
            "sns" => {
                let topic_region = arn.split(':').nth(3).unwrap_or(region).to_string();
                let publish = PublishInput {
                    topic_arn: Some(arn.clone()),
                    target_arn: None,
                    phone_number: None,
                    message: input.to_string(),
                    subject: None,
                    message_structure: None,
                    message_attributes: Vec::new(),
                    message_group_id: None,
                    message_deduplication_id: None,
                };
                self.sns
                    .publish(&topic_region, "http://localhost:4566", publish)
                    .map(|_| ())
                    .map_err(fail)
            }
            "states" => self
                .sfn
                .start_execution(crate::stepfunctions::StartInput {
                    target: arn.clone(),
                    name: None,
                    input: Some(input.to_string()),
                    trace_header: None,
                })
                .map(|_| ())
                .map_err(fail),
            "events" => {
                let bus_region = arn.split(':').nth(3).unwrap_or(region).to_string();
                let entry = PutEventsEntry {
                    source: text(&s.target, &["EventBridgeParameters", "Source"]),
                    detail_type: text(&s.target, &["EventBridgeParameters", "DetailType"]),
                    detail: Some(input.to_string()),
                    resources: vec![self.schedule_arn(region, &s.group, &s.name)],
                    time: None,
                    bus: Some(arn.clone()),
                };
                match self
                    .events
                    .put_events(&bus_region, &[entry])
                    .map_err(fail)?
                    .pop()
                {
                    Some(crate::events::PutEventsResult::Failed { code, message }) => {
                        Err(format!("{code}: {message}"))
                    }
                    _ => Ok(()),
                }
            }
            "lambda" => self.invoke_function(&arn, input),
            "scheduler" if arn.contains(":aws-sdk:") => Err(
                "cumulo: universal targets (aws-sdk) are stored but not invoked by the emulator"
                    .to_string(),
            ),
            other => Err(format!(
                "cumulo: {other} targets are stored but not invoked by the emulator"
            )),
        }
    }

    /// Lambda is invoked with InvocationType `Event`, as Scheduler invokes functions, so the
    /// loop does not wait for the handler; a failed invocation is logged.
    fn invoke_function(&self, arn: &str, input: &str) -> Result<(), String> {
        let region = arn.split(':').nth(3).unwrap_or_default().to_string();
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|_| "cumulo: no runtime to invoke the Lambda target on".to_string())?;
        let lambda = self.lambda.core();
        let arn = arn.to_string();
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
                    "cumulo: scheduler: invoking {arn} failed: {}: {}",
                    e.code, e.message
                );
            }
        });
        Ok(())
    }
}
