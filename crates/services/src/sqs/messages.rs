//! Message operations: send, receive (with long polling), delete and visibility, as typed Rust
//! functions. The decisions they commit are made by the pure functions in [`super::delivery`].

use super::SqsService;
use super::attributes::RedrivePolicy;
use super::delivery::{
    MAX_PAYLOAD, attributes_size, batch_error, check_batch_ids, decode_receipt, plan_receive,
    prepare_send, render_received, send_output, valid_fifo_id,
};
use super::errors::*;
use super::model::*;
use super::ops::{Caller, parse_queue_arn, queue_name_from_url, store_err};
use super::state::{self, Message, Queue, QueueKey, ReceiveAttempt, now_ms};
use cumulo_wire::AwsError;
use std::collections::HashMap;
use std::time::Duration;

/// ReceiveRequestAttemptIds are honoured for five minutes, as in AWS.
const RECEIVE_ATTEMPT_WINDOW_MS: i64 = 5 * 60 * 1000;

impl SqsService {
    /// SendMessage.
    pub fn send_message(
        &self,
        caller: &Caller,
        url: &str,
        input: &SendMessageInput,
    ) -> Result<SendMessageOutput, AwsError> {
        let out = self.send_message_batch_inner(caller, url, std::slice::from_ref(input))?;
        out.into_iter()
            .next()
            .unwrap_or_else(|| Err(AwsError::internal("cumulo: sqs send produced no result")))
    }

    /// SendMessageBatch: every entry is validated and enqueued independently, all committed
    /// in one transaction.
    pub fn send_message_batch(
        &self,
        caller: &Caller,
        url: &str,
        entries: &[(String, SendMessageInput)],
    ) -> Result<BatchOutput<SendMessageOutput>, AwsError> {
        check_batch_ids(
            entries.iter().map(|(id, _)| id.as_str()),
            "SendMessageBatchRequestEntry",
        )?;
        let total: usize = entries
            .iter()
            .map(|(_, e)| e.body.len() + attributes_size(&e.message_attributes))
            .sum();
        if total as i64 > MAX_PAYLOAD {
            return Err(batch_request_too_long(total, MAX_PAYLOAD));
        }
        let inputs: Vec<SendMessageInput> = entries.iter().map(|(_, e)| e.clone()).collect();
        let results = self.send_message_batch_inner(caller, url, &inputs)?;
        let mut out = BatchOutput {
            successful: Vec::new(),
            failed: Vec::new(),
        };
        for ((id, _), r) in entries.iter().zip(results) {
            match r {
                Ok(sent) => out.successful.push((id.clone(), sent)),
                Err(e) => out.failed.push(batch_error(id, e)),
            }
        }
        Ok(out)
    }

    /// Validates and enqueues each input, committing all new messages (and FIFO deduplication
    /// records and sequence counter) in one transaction before any becomes visible. An input's
    /// own error fails only that input.
    fn send_message_batch_inner(
        &self,
        caller: &Caller,
        url: &str,
        inputs: &[SendMessageInput],
    ) -> Result<Vec<Result<SendMessageOutput, AwsError>>, AwsError> {
        self.with_queue(caller, url, |q| {
            let now = now_ms();
            let fifo = q.meta.is_fifo();
            let mut pending = HashMap::new();
            let mut staged = Vec::new();
            let mut next_seq = q.meta.next_seq;
            let mut results = Vec::with_capacity(inputs.len());
            for input in inputs {
                match prepare_send(q, &pending, next_seq, caller, input, now) {
                    Ok(p) => {
                        results.push(Ok(send_output(input, &p)));
                        if let Some((key, entry)) = p.dedup {
                            pending.insert(key, entry);
                        }
                        if p.is_new {
                            next_seq = p.seq + 1;
                            staged.push((p.seq, p.message));
                        }
                    }
                    Err(e) => results.push(Err(e)),
                }
            }
            if staged.is_empty() {
                return Ok(results);
            }
            // Expired records are invisible already; forgetting them before the commit is safe.
            let expired = if fifo { q.dedup.prune(now) } else { Vec::new() };
            let (region, name) = (&q.meta.region, &q.meta.name);
            self.store
                .write(|tx| {
                    for key in &expired {
                        state::delete_dedup(tx, region, name, key)?;
                    }
                    for (key, entry) in &pending {
                        state::put_dedup(tx, region, name, key, entry)?;
                    }
                    for (seq, m) in &staged {
                        state::put_message(tx, region, name, *seq, m)?;
                    }
                    if fifo {
                        state::put_next_seq(tx, region, name, next_seq)?;
                    }
                    Ok(())
                })
                .map_err(store_err)?;
            for (key, entry) in pending {
                q.dedup.insert(key, entry);
            }
            q.meta.next_seq = next_seq;
            for (seq, m) in staged {
                q.messages.insert(seq, m, now);
            }
            q.notify.notify_waiters();
            Ok(results)
        })
    }

    /// ReceiveMessage, long-polling up to WaitTimeSeconds without busy-waiting: it sleeps on the
    /// queue's `Notify` (woken by sends and visibility changes) or until the next message
    /// becomes visible.
    pub async fn receive_message(
        &self,
        caller: &Caller,
        url: &str,
        input: &ReceiveMessageInput,
    ) -> Result<Vec<ReceivedMessage>, AwsError> {
        let max = input.max_number_of_messages.unwrap_or(1);
        if !(1..=10).contains(&max) {
            return Err(invalid_parameter(
                "MaxNumberOfMessages",
                max,
                "Must be between 1 and 10, if provided.",
            ));
        }
        if let Some(v) = input.visibility_timeout
            && !(0..=43_200).contains(&v)
        {
            return Err(invalid_parameter(
                "VisibilityTimeout",
                v,
                "Must be >= 0 and <= 43200, if provided.",
            ));
        }
        if let Some(w) = input.wait_time_seconds
            && !(0..=20).contains(&w)
        {
            return Err(invalid_parameter(
                "WaitTimeSeconds",
                w,
                "Must be >= 0 and <= 20, if provided.",
            ));
        }
        if let Some(id) = &input.receive_request_attempt_id
            && !valid_fifo_id(id)
        {
            return Err(invalid_parameter(
                "ReceiveRequestAttemptId",
                id,
                "ReceiveRequestAttemptId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
            ));
        }
        let name = queue_name_from_url(url).ok_or_else(queue_does_not_exist)?;
        let key = caller.key(name);
        let wait_s = match input.wait_time_seconds {
            Some(w) => w,
            None => self.with_queue(caller, url, |q| {
                Ok(q.meta.int_attr("ReceiveMessageWaitTimeSeconds", 0))
            })?,
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(wait_s as u64);
        loop {
            let notify = self
                .lock()
                .get(&key)
                .map(|q| q.notify.clone())
                .ok_or_else(queue_does_not_exist)?;
            let notified = notify.notified();
            tokio::pin!(notified);
            // Registered before looking, so a send between the look and the wait still wakes us.
            notified.as_mut().enable();
            let (messages, next_visible_ms) = self.receive_once(&key, max as usize, input)?;
            let now = tokio::time::Instant::now();
            if !messages.is_empty() || now >= deadline {
                return Ok(messages);
            }
            let mut wake = deadline;
            if let Some(at) = next_visible_ms {
                let in_ms = (at - now_ms()).max(1) as u64;
                wake = wake.min(now + Duration::from_millis(in_ms));
            }
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep_until(wake) => {}
            }
        }
    }

    /// One non-blocking pass of ReceiveMessage: expires old messages, redrives over-received
    /// ones to the dead-letter queue and takes up to `max` deliverable messages.
    fn receive_once(
        &self,
        key: &QueueKey,
        max: usize,
        input: &ReceiveMessageInput,
    ) -> Result<(Vec<ReceivedMessage>, Option<i64>), AwsError> {
        let mut queues = self.lock();
        let now = now_ms();
        let q = queues.get_mut(key).ok_or_else(queue_does_not_exist)?;
        q.messages.promote(now);
        if let Some(replayed) = self.replay_attempt(q, now, input)? {
            return Ok((replayed, None));
        }
        let q = queues.get(key).ok_or_else(queue_does_not_exist)?;
        let redrive = q
            .meta
            .attributes
            .get("RedrivePolicy")
            .and_then(|rp| RedrivePolicy::parse(rp).ok())
            .and_then(|rp| {
                let (region, _, name) = parse_queue_arn(&rp.dead_letter_target_arn)?;
                let dlq_key = (region.to_string(), name.to_string());
                queues
                    .contains_key(&dlq_key)
                    .then_some((dlq_key, rp.max_receive_count))
            });
        let plan = plan_receive(q, now, max, input, redrive.as_ref().map(|(_, n)| *n));
        if plan.expired.is_empty() && plan.redrive.is_empty() && plan.received.is_empty() {
            return Ok((Vec::new(), plan.next_visible_ms));
        }
        let (region, name) = (q.meta.region.clone(), q.meta.name.clone());
        let source_arn = q.meta.arn();
        let mut dlq_seqs = Vec::new();
        let redriven: Vec<Message> = plan
            .redrive
            .iter()
            .map(|(_, m)| {
                let mut m = m.clone();
                m.dead_letter_source_arn = Some(source_arn.clone());
                m
            })
            .collect();
        if let Some((dlq_key, _)) = &redrive
            && let Some(dlq) = queues.get(dlq_key)
        {
            let first = dlq.meta.next_seq;
            dlq_seqs = (0..redriven.len() as u64).map(|i| first + i).collect();
        }
        self.store
            .write(|tx| {
                for seq in &plan.expired {
                    state::delete_message(tx, &region, &name, *seq)?;
                }
                for (seq, _) in &plan.redrive {
                    state::delete_message(tx, &region, &name, *seq)?;
                }
                if let Some((dlq_key, _)) = &redrive {
                    for (seq, m) in dlq_seqs.iter().zip(&redriven) {
                        state::put_message(tx, &dlq_key.0, &dlq_key.1, *seq, m)?;
                    }
                }
                for (seq, m) in &plan.received {
                    state::put_delivery(tx, &region, &name, *seq, m)?;
                }
                Ok(())
            })
            .map_err(store_err)?;
        let out = {
            let q = queues.get_mut(key).ok_or_else(queue_does_not_exist)?;
            for seq in plan
                .expired
                .iter()
                .chain(plan.redrive.iter().map(|(s, _)| s))
            {
                q.messages.remove(*seq);
            }
            let out = plan
                .received
                .iter()
                .map(|(seq, m)| render_received(&name, *seq, m, input))
                .collect();
            if let Some(id) = &input.receive_request_attempt_id
                && q.meta.is_fifo()
                && !plan.received.is_empty()
            {
                q.attempts.retain(|_, a| a.expires_ms > now);
                let messages = plan
                    .received
                    .iter()
                    .map(|(seq, m)| {
                        (
                            *seq,
                            m.receipt_nonce.clone().unwrap_or_default(),
                            m.visible_at_ms,
                        )
                    })
                    .collect();
                q.attempts.insert(
                    id.clone(),
                    ReceiveAttempt {
                        expires_ms: now + RECEIVE_ATTEMPT_WINDOW_MS,
                        messages,
                    },
                );
            }
            for (seq, m) in plan.received {
                q.messages.insert(seq, m, now);
            }
            out
        };
        if let Some((dlq_key, _)) = &redrive
            && let Some(dlq) = queues.get_mut(dlq_key)
        {
            for (seq, m) in dlq_seqs.into_iter().zip(redriven) {
                dlq.meta.next_seq = seq + 1;
                dlq.messages.insert(seq, m, now);
            }
            dlq.notify.notify_waiters();
        }
        Ok((out, plan.next_visible_ms))
    }

    /// A FIFO retry with a known ReceiveRequestAttemptId: when none of that attempt's messages
    /// has been deleted, received again or had its visibility changed, the same messages and
    /// receipt handles come back with their visibility timeout restarted. `None` means receive
    /// normally.
    fn replay_attempt(
        &self,
        q: &mut Queue,
        now: i64,
        input: &ReceiveMessageInput,
    ) -> Result<Option<Vec<ReceivedMessage>>, AwsError> {
        let Some(id) = input.receive_request_attempt_id.as_deref() else {
            return Ok(None);
        };
        if !q.meta.is_fifo() {
            return Ok(None);
        }
        let Some(attempt) = q.attempts.get(id).filter(|a| a.expires_ms > now) else {
            return Ok(None);
        };
        let unchanged = attempt.messages.iter().all(|(seq, nonce, visible_at)| {
            q.messages.get(*seq).is_some_and(|m| {
                m.receipt_nonce.as_deref() == Some(nonce.as_str()) && m.visible_at_ms == *visible_at
            })
        });
        if !unchanged {
            return Ok(None);
        }
        let visibility_s = input
            .visibility_timeout
            .unwrap_or_else(|| q.meta.int_attr("VisibilityTimeout", 30));
        let again: Vec<(u64, Message)> = attempt
            .messages
            .iter()
            .filter_map(|(seq, ..)| {
                let mut m = q.messages.get(*seq)?.clone();
                m.visible_at_ms = now + visibility_s * 1000;
                Some((*seq, m))
            })
            .collect();
        let (region, name) = (q.meta.region.clone(), q.meta.name.clone());
        self.store
            .write(|tx| {
                for (seq, m) in &again {
                    state::put_delivery(tx, &region, &name, *seq, m)?;
                }
                Ok(())
            })
            .map_err(store_err)?;
        let out = again
            .iter()
            .map(|(seq, m)| render_received(&name, *seq, m, input))
            .collect();
        let messages = again
            .iter()
            .map(|(seq, m)| {
                (
                    *seq,
                    m.receipt_nonce.clone().unwrap_or_default(),
                    m.visible_at_ms,
                )
            })
            .collect();
        if let Some(a) = q.attempts.get_mut(id) {
            a.messages = messages;
        }
        for (seq, m) in again {
            q.messages.insert(seq, m, now);
        }
        Ok(Some(out))
    }

    /// Up to `max` messages in queue order as they are, for looking without consuming: no
    /// receive count, visibility or receipt changes, nothing written. Not an AWS operation
    /// (AWS has no way to look without receiving); the console's peek.
    pub fn peek_messages(
        &self,
        caller: &Caller,
        url: &str,
        max: usize,
    ) -> Result<Vec<PeekedMessage>, AwsError> {
        self.with_queue(caller, url, |q| {
            let now = now_ms();
            Ok(q.messages
                .values()
                .take(max)
                .map(|m| PeekedMessage {
                    message_id: m.id.clone(),
                    body: m.body.clone(),
                    md5_of_body: m.md5_of_body.clone(),
                    sent_timestamp_ms: m.sent_ms,
                    receive_count: m.receive_count,
                    state: if m.in_flight(now) {
                        "in_flight"
                    } else if m.delayed(now) {
                        "delayed"
                    } else {
                        "visible"
                    },
                    group_id: m.group_id.clone(),
                    attributes: m
                        .attributes
                        .iter()
                        .map(|(k, v)| {
                            let value = v.string_value.clone().unwrap_or_else(|| {
                                use base64::Engine;
                                base64::engine::general_purpose::STANDARD
                                    .encode(v.binary_value.as_deref().unwrap_or_default())
                            });
                            (k.clone(), value)
                        })
                        .collect(),
                })
                .collect())
        })
    }

    /// DeleteMessage. As the API reference says, only the most recent receipt handle deletes:
    /// an older one (or one for a message already gone) succeeds without deleting anything.
    pub fn delete_message(&self, caller: &Caller, url: &str, handle: &str) -> Result<(), AwsError> {
        self.with_queue(caller, url, |q| {
            let r = decode_receipt(&q.meta.name, handle)?;
            let current = q.messages.get(r.seq).is_some_and(|m| {
                m.id == r.message_id && m.receipt_nonce.as_deref() == Some(r.nonce.as_str())
            });
            if current {
                self.store
                    .write(|tx| state::delete_message(tx, &q.meta.region, &q.meta.name, r.seq))
                    .map_err(store_err)?;
                q.messages.remove(r.seq);
                if q.meta.is_fifo() {
                    // Deleting may unlock the message's group for a waiting long poll.
                    q.notify.notify_waiters();
                }
            }
            Ok(())
        })
    }

    /// DeleteMessageBatch: each entry as DeleteMessage, failures reported per entry.
    pub fn delete_message_batch(
        &self,
        caller: &Caller,
        url: &str,
        entries: &[(String, String)],
    ) -> Result<BatchOutput<()>, AwsError> {
        check_batch_ids(
            entries.iter().map(|(id, _)| id.as_str()),
            "DeleteMessageBatchRequestEntry",
        )?;
        let mut out = BatchOutput {
            successful: Vec::new(),
            failed: Vec::new(),
        };
        for (id, handle) in entries {
            match self.delete_message(caller, url, handle) {
                Ok(()) => out.successful.push((id.clone(), ())),
                Err(e) if e.code == "QueueDoesNotExist" => return Err(e),
                Err(e) => out.failed.push(batch_error(id, e)),
            }
        }
        Ok(out)
    }

    /// ChangeMessageVisibility: only for a message in flight, through its current receipt.
    pub fn change_message_visibility(
        &self,
        caller: &Caller,
        url: &str,
        handle: &str,
        timeout: i64,
    ) -> Result<(), AwsError> {
        self.with_queue(caller, url, |q| {
            let r = decode_receipt(&q.meta.name, handle)?;
            if !(0..=43_200).contains(&timeout) {
                return Err(invalid_parameter(
                    "VisibilityTimeout",
                    timeout,
                    "VisibilityTimeout must be an integer between 0 and 43200",
                ));
            }
            let now = now_ms();
            let Some(m) = q.messages.get(r.seq).filter(|m| m.id == r.message_id) else {
                return Err(message_not_inflight());
            };
            if !m.in_flight(now) {
                return Err(message_not_inflight());
            }
            if m.receipt_nonce.as_deref() != Some(r.nonce.as_str()) {
                return Err(invalid_parameter(
                    "ReceiptHandle",
                    handle,
                    "The receipt handle has expired.",
                ));
            }
            let mut m = m.clone();
            m.visible_at_ms = now + timeout * 1000;
            self.store
                .write(|tx| state::put_delivery(tx, &q.meta.region, &q.meta.name, r.seq, &m))
                .map_err(store_err)?;
            q.messages.insert(r.seq, m, now);
            // Waiting long polls re-plan: the message may be deliverable now or sooner than
            // they were going to look.
            q.notify.notify_waiters();
            Ok(())
        })
    }

    /// ChangeMessageVisibilityBatch: each entry as ChangeMessageVisibility.
    pub fn change_message_visibility_batch(
        &self,
        caller: &Caller,
        url: &str,
        entries: &[(String, String, i64)],
    ) -> Result<BatchOutput<()>, AwsError> {
        check_batch_ids(
            entries.iter().map(|(id, _, _)| id.as_str()),
            "ChangeMessageVisibilityBatchRequestEntry",
        )?;
        let mut out = BatchOutput {
            successful: Vec::new(),
            failed: Vec::new(),
        };
        for (id, handle, timeout) in entries {
            match self.change_message_visibility(caller, url, handle, *timeout) {
                Ok(()) => out.successful.push((id.clone(), ())),
                Err(e) if e.code == "QueueDoesNotExist" => return Err(e),
                Err(e) => out.failed.push(batch_error(id, e)),
            }
        }
        Ok(out)
    }

    /// The delivery path of SNS and EventBridge: SendMessage addressed by queue ARN.
    pub fn send_to_arn(
        &self,
        queue_arn: &str,
        input: &SendMessageInput,
    ) -> Result<SendMessageOutput, AwsError> {
        let (region, account, name) =
            parse_queue_arn(queue_arn).ok_or_else(queue_does_not_exist)?;
        let caller = Caller {
            region: region.to_string(),
            account_id: account.to_string(),
            host: "localhost".to_string(),
            sender_id: account.to_string(),
        };
        self.send_message(&caller, &format!("/{account}/{name}"), input)
    }
}
