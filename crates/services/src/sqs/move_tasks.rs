//! Message move tasks (DLQ redrive back to a source queue): StartMessageMoveTask,
//! ListMessageMoveTasks and CancelMessageMoveTask.
//!
//! AWS runs a task in the background at up to MaxNumberOfMessagesPerSecond; cumulo moves every
//! deliverable message at once, inside one transaction, so a task is `COMPLETED` (or `FAILED`,
//! with a reason, when some messages have no queue to go back to) by the time Start answers.
//! Consequently there is never a `RUNNING` task to cancel.

use super::SqsService;
use super::attributes::RedrivePolicy;
use super::errors::{invalid_parameter, invalid_parameter_value, resource_not_found};
use super::ops::{Caller, parse_queue_arn, store_err};
use super::state::{self, Message, MoveTask, QueueKey, now_ms};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::AwsError;
use std::collections::HashMap;

/// ListMessageMoveTasks reports at most this many tasks per source queue.
const KEPT_TASKS: usize = 10;

fn no_source(arn: &str) -> AwsError {
    resource_not_found(format!(
        "The resource that you specified for the SourceArn parameter doesn't exist: {arn}"
    ))
}

impl SqsService {
    /// StartMessageMoveTask: moves the deliverable messages of dead-letter queue `source_arn`
    /// to `destination_arn`, or each back to the queue it was redriven from.
    pub fn start_message_move_task(
        &self,
        caller: &Caller,
        source_arn: &str,
        destination_arn: Option<&str>,
        max_per_second: Option<i64>,
    ) -> Result<String, AwsError> {
        if let Some(r) = max_per_second
            && !(1..=500).contains(&r)
        {
            return Err(invalid_parameter(
                "MaxNumberOfMessagesPerSecond",
                r,
                "Must be between 1 and 500, if provided.",
            ));
        }
        let key_of = |arn: &str| -> Option<QueueKey> {
            let (region, _, name) = parse_queue_arn(arn)?;
            (region == caller.region).then(|| (region.to_string(), name.to_string()))
        };
        let mut queues = self.lock();
        let src_key = key_of(source_arn)
            .filter(|k| queues.contains_key(k))
            .ok_or_else(|| no_source(source_arn))?;
        let is_dead_letter_queue = queues.values().any(|q| {
            q.meta
                .attributes
                .get("RedrivePolicy")
                .and_then(|rp| RedrivePolicy::parse(rp).ok())
                .is_some_and(|rp| rp.dead_letter_target_arn == source_arn)
        });
        if !is_dead_letter_queue {
            return Err(invalid_parameter_value(
                "Source queue must be configured as a Dead Letter Queue.",
            ));
        }
        let fixed_dest = match destination_arn {
            Some(d) => Some(
                key_of(d)
                    .filter(|k| queues.contains_key(k) && *k != src_key)
                    .ok_or_else(|| {
                        resource_not_found(format!(
                            "The resource that you specified for the DestinationArn parameter doesn't exist: {d}"
                        ))
                    })?,
            ),
            None => None,
        };
        let now = now_ms();
        let src = queues
            .get_mut(&src_key)
            .ok_or_else(|| no_source(source_arn))?;
        src.messages.promote(now);
        let src = queues.get(&src_key).ok_or_else(|| no_source(source_arn))?;
        // Plan: which message goes where, under which new sequence number.
        let mut next_seqs: HashMap<QueueKey, u64> = HashMap::new();
        let mut moves: Vec<(u64, QueueKey, u64, Message)> = Vec::new();
        let mut stranded = 0;
        let candidates: Vec<(u64, Message)> =
            src.messages.ready().map(|(s, m)| (s, m.clone())).collect();
        for (seq, m) in candidates {
            let dest = fixed_dest.clone().or_else(|| {
                m.dead_letter_source_arn
                    .as_deref()
                    .and_then(key_of)
                    .filter(|k| queues.contains_key(k))
            });
            let Some(dest) = dest else {
                stranded += 1;
                continue;
            };
            let dest_seq = next_seqs
                .entry(dest.clone())
                .or_insert_with(|| queues.get(&dest).map_or(1, |q| q.meta.next_seq));
            let moved = Message {
                receive_count: 0,
                first_receive_ms: None,
                receipt_nonce: None,
                dead_letter_source_arn: None,
                visible_at_ms: now,
                ..m
            };
            moves.push((seq, dest, *dest_seq, moved));
            *dest_seq += 1;
        }
        let task = MoveTask {
            task_id: uuid::Uuid::new_v4().to_string(),
            status: if stranded == 0 { "COMPLETED" } else { "FAILED" }.to_string(),
            source_arn: source_arn.to_string(),
            destination_arn: destination_arn.map(str::to_string),
            max_per_second,
            moved: moves.len() as i64,
            to_move: (moves.len() + stranded) as i64,
            failure_reason: (stranded > 0).then(|| {
                format!("{stranded} messages have no source queue to return to; specify a DestinationArn.")
            }),
            started_ms: now,
        };
        let mut meta = src.meta.clone();
        meta.move_tasks.push(task.clone());
        let excess = meta.move_tasks.len().saturating_sub(KEPT_TASKS);
        meta.move_tasks.drain(..excess);
        self.store
            .write(|tx| {
                state::put_queue(tx, &meta)?;
                for (seq, dest, dest_seq, m) in &moves {
                    state::delete_message(tx, &src_key.0, &src_key.1, *seq)?;
                    state::put_message(tx, &dest.0, &dest.1, *dest_seq, m)?;
                }
                for (dest, next) in &next_seqs {
                    state::put_next_seq(tx, &dest.0, &dest.1, *next)?;
                }
                Ok(())
            })
            .map_err(store_err)?;
        if let Some(src) = queues.get_mut(&src_key) {
            src.meta = meta;
            for (seq, ..) in &moves {
                src.messages.remove(*seq);
            }
        }
        for (_, dest, dest_seq, m) in moves {
            if let Some(q) = queues.get_mut(&dest) {
                q.meta.next_seq = q.meta.next_seq.max(dest_seq + 1);
                q.messages.insert(dest_seq, m, now);
                q.notify.notify_waiters();
            }
        }
        Ok(B64.encode(format!("{source_arn}\u{1}{}", task.task_id)))
    }

    /// ListMessageMoveTasks: the most recent tasks of a source queue, newest first.
    pub fn list_message_move_tasks(
        &self,
        caller: &Caller,
        source_arn: &str,
        max_results: Option<i64>,
    ) -> Result<Vec<MoveTask>, AwsError> {
        let max = max_results.unwrap_or(1);
        if !(1..=10).contains(&max) {
            return Err(invalid_parameter(
                "MaxResults",
                max,
                "Must be between 1 and 10, if provided.",
            ));
        }
        let (region, _, name) = parse_queue_arn(source_arn).ok_or_else(|| no_source(source_arn))?;
        if region != caller.region {
            return Err(no_source(source_arn));
        }
        let queues = self.lock();
        let q = queues
            .get(&(region.to_string(), name.to_string()))
            .ok_or_else(|| no_source(source_arn))?;
        Ok(q.meta
            .move_tasks
            .iter()
            .rev()
            .take(max as usize)
            .cloned()
            .collect())
    }

    /// CancelMessageMoveTask: only a `RUNNING` task can be cancelled, and cumulo's tasks finish
    /// before StartMessageMoveTask answers, so this names the task's actual state.
    pub fn cancel_message_move_task(&self, caller: &Caller, handle: &str) -> Result<i64, AwsError> {
        let invalid = || resource_not_found(format!("Task does not exist: {handle}"));
        let text = B64
            .decode(handle.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(invalid)?;
        let (source_arn, task_id) = text.split_once('\u{1}').ok_or_else(invalid)?;
        let tasks = self.list_message_move_tasks(caller, source_arn, Some(10))?;
        let task = tasks
            .iter()
            .find(|t| t.task_id == task_id)
            .ok_or_else(invalid)?;
        Err(invalid_parameter_value(format!(
            "Only a RUNNING task can be cancelled; task {task_id} is {}.",
            task.status
        )))
    }
}
