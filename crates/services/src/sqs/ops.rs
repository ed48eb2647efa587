//! Queue operations as typed Rust functions: what the wire adapters and (next issue)
//! CloudFormation's AWS::SQS::Queue provider call. Each mutating operation is committed to the
//! store before it answers, so an acknowledged change survives a crash. Queue changes are queued
//! on the store's group commit under the queues' lock and installed at once (the store sees them
//! in the order memory does), then awaited with the lock released, so concurrent requests share
//! commits. Message operations (in `messages`) commit before they change memory.

use super::SqsService;
use super::attributes::{self, RedrivePolicy};
use super::errors::*;
use super::model::*;
use super::state::{self, Message, Queue, QueueKey, QueueMeta, now_ms};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::AwsError;
use std::collections::{BTreeMap, HashMap};

/// Who is calling and how they reached us: queue URLs are built from the host the client used.
#[derive(Debug, Clone)]
pub struct Caller {
    pub region: String,
    pub account_id: String,
    /// `Host` the client called, e.g. `localhost:4566`.
    pub host: String,
    /// SenderId stamped on sent messages.
    pub sender_id: String,
}

impl Caller {
    /// `http://{host}/{account}/{name}`: the URL as this caller can reach it.
    pub fn queue_url(&self, name: &str) -> String {
        format!("http://{}/{}/{}", self.host, self.account_id, name)
    }

    pub(super) fn key(&self, name: &str) -> QueueKey {
        (self.region.clone(), name.to_string())
    }
}

/// A queue can be purged once a minute.
const PURGE_INTERVAL_MS: i64 = 60 * 1000;
/// AWS's cap on tags per queue.
const MAX_TAGS: usize = 50;
/// The queue name in a queue URL (`http://host/account/name`, or just its path). Any host is
/// accepted: clients keep URLs from whichever endpoint they used.
pub fn queue_name_from_url(url: &str) -> Option<&str> {
    let path = match url.split_once("://") {
        Some((_, rest)) => &rest[rest.find('/')?..],
        None => url,
    };
    let mut parts = path.trim_matches('/').split('/');
    let (_account, name) = (parts.next()?, parts.next()?);
    (parts.next().is_none() && !name.is_empty()).then_some(name)
}

/// `(region, name)` from a queue ARN.
pub fn parse_queue_arn(arn: &str) -> Option<(&str, &str, &str)> {
    let mut p = arn.split(':');
    if p.next()? != "arn" || p.next().is_none() || p.next()? != "sqs" {
        return None;
    }
    let (region, account, name) = (p.next()?, p.next()?, p.next()?);
    p.next().is_none().then_some((region, account, name))
}

fn valid_queue_name(name: &str) -> bool {
    let base = name.strip_suffix(".fifo").unwrap_or(name);
    !base.is_empty()
        && name.len() <= 80
        && base
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

pub(super) fn store_err(e: cumulo_store::StoreError) -> AwsError {
    store_failure(e)
}

impl SqsService {
    pub(super) fn with_queue<R>(
        &self,
        caller: &Caller,
        url: &str,
        f: impl FnOnce(&mut Queue) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let name = queue_name_from_url(url).ok_or_else(queue_does_not_exist)?;
        let mut queues = self.lock();
        let q = queues
            .get_mut(&caller.key(name))
            .ok_or_else(queue_does_not_exist)?;
        f(q)
    }

    /// CreateQueue: idempotent when the given attributes match an existing queue's.
    pub async fn create_queue(
        &self,
        caller: &Caller,
        name: &str,
        attributes: &BTreeMap<String, String>,
        tags: &BTreeMap<String, String>,
    ) -> Result<String, AwsError> {
        if name.is_empty() {
            return Err(missing_parameter("QueueName"));
        }
        if !valid_queue_name(name) {
            return Err(invalid_parameter_value(
                "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
            ));
        }
        let fifo = name.ends_with(".fifo");
        let mut changes = attributes.clone();
        // The `.fifo` suffix and FifoQueue=true go together; FifoQueue=false on a standard
        // queue is accepted and not stored (AWS does not report it back).
        match changes
            .get("FifoQueue")
            .map(|v| v.to_ascii_lowercase())
            .as_deref()
        {
            Some("true") if fifo => {}
            Some("false") if !fifo => {
                changes.remove("FifoQueue");
            }
            None if !fifo => {}
            Some("true" | "false") | None => {
                return Err(invalid_parameter_value(
                    "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.",
                ));
            }
            Some(_) => return Err(invalid_attribute_value("FifoQueue")),
        }
        check_tags(tags)?;
        let mut attrs = attributes::defaults(fifo);
        attributes::apply(&mut attrs, &changes, fifo)?;
        let commit = {
            let mut queues = self.lock();
            if let Some(rp) = attrs.get("RedrivePolicy") {
                let source = state::queue_arn(&caller.region, &caller.account_id, name);
                check_dead_letter_target(&queues, caller, rp, fifo, &source)?;
            }
            let key = caller.key(name);
            if let Some(existing) = queues.get(&key) {
                // AWS compares only the attributes the caller gave.
                let mut wanted = existing.meta.attributes.clone();
                attributes::apply(&mut wanted, &changes, fifo)?;
                if let Some(diff) = changes
                    .keys()
                    .find(|k| wanted.get(*k) != existing.meta.attributes.get(*k))
                {
                    return Err(queue_name_exists(format!(
                        "A queue already exists with the same name and a different value for attribute {diff}"
                    )));
                }
                return Ok(caller.queue_url(name));
            }
            let now = now_ms();
            let meta = QueueMeta {
                region: caller.region.clone(),
                name: name.to_string(),
                account_id: caller.account_id.clone(),
                attributes: attrs,
                tags: tags.clone(),
                created_s: now / 1000,
                last_modified_s: now / 1000,
                next_seq: 1,
                last_purge_ms: None,
                move_tasks: Vec::new(),
            };
            let stored = meta.clone();
            let commit = self
                .store
                .write_grouped(move |tx| state::put_queue(tx, &stored));
            queues.insert(key, Queue::new(meta));
            commit
        };
        commit.await.map_err(store_err)?;
        Ok(caller.queue_url(name))
    }

    /// DeleteQueue: the queue and its messages go at once (AWS takes up to 60 s; immediate is a
    /// valid observation of that).
    pub async fn delete_queue(&self, caller: &Caller, url: &str) -> Result<(), AwsError> {
        let name = queue_name_from_url(url).ok_or_else(queue_does_not_exist)?;
        let commit = {
            let mut queues = self.lock();
            let key = caller.key(name);
            let q = queues.remove(&key).ok_or_else(queue_does_not_exist)?;
            let (region, name) = (q.meta.region.clone(), q.meta.name.clone());
            q.notify.notify_waiters();
            self.store
                .write_grouped(move |tx| state::delete_queue(tx, &region, &name))
        };
        commit.await.map_err(store_err)
    }

    /// GetQueueUrl; a queue owned by another account (`QueueOwnerAWSAccountId`) does not exist
    /// here, since cumulo serves one account.
    pub fn get_queue_url(
        &self,
        caller: &Caller,
        name: &str,
        owner: Option<&str>,
    ) -> Result<String, AwsError> {
        if name.is_empty() {
            return Err(missing_parameter("QueueName"));
        }
        if owner.is_some_and(|o| o != caller.account_id) {
            return Err(queue_does_not_exist());
        }
        let queues = self.lock();
        queues
            .contains_key(&caller.key(name))
            .then(|| caller.queue_url(name))
            .ok_or_else(queue_does_not_exist)
    }

    /// ListQueues: queue URLs in name order; a page token only when MaxResults was given.
    pub fn list_queues(
        &self,
        caller: &Caller,
        prefix: Option<&str>,
        max_results: Option<i64>,
        next_token: Option<&str>,
    ) -> Result<QueueUrlPage, AwsError> {
        let mut names: Vec<String> = {
            let queues = self.lock();
            queues
                .keys()
                .filter(|(r, n)| *r == caller.region && n.starts_with(prefix.unwrap_or("")))
                .map(|(_, n)| n.clone())
                .collect()
        };
        names.sort();
        paginate(caller, names, max_results, next_token)
    }

    /// GetQueueAttributes for the given names (`All` for every one that has a value).
    pub fn get_queue_attributes(
        &self,
        caller: &Caller,
        url: &str,
        names: &[String],
    ) -> Result<Vec<(String, String)>, AwsError> {
        self.with_queue(caller, url, |q| {
            let fifo = q.meta.is_fifo();
            for n in names {
                let known = n == "All" || attributes::ALL_NAMES.contains(&n.as_str());
                if !known || (!fifo && attributes::FIFO_ONLY.contains(&n.as_str())) {
                    return Err(invalid_attribute_name(n));
                }
            }
            let all = names.iter().any(|n| n == "All");
            let now = now_ms();
            let count = |f: &dyn Fn(&Message) -> bool| {
                q.messages.values().filter(|m| f(m)).count().to_string()
            };
            let mut out = Vec::new();
            for name in attributes::ALL_NAMES {
                if !all && !names.iter().any(|n| n == name) {
                    continue;
                }
                let value = match *name {
                    "QueueArn" => Some(q.meta.arn()),
                    "ApproximateNumberOfMessages" => Some(count(&|m| m.visible_at_ms <= now)),
                    "ApproximateNumberOfMessagesNotVisible" => Some(count(&|m| m.in_flight(now))),
                    "ApproximateNumberOfMessagesDelayed" => Some(count(&|m| m.delayed(now))),
                    "CreatedTimestamp" => Some(q.meta.created_s.to_string()),
                    "LastModifiedTimestamp" => Some(q.meta.last_modified_s.to_string()),
                    other => q.meta.attributes.get(other).cloned(),
                };
                if let Some(v) = value {
                    out.push((name.to_string(), v));
                }
            }
            Ok(out)
        })
    }

    /// SetQueueAttributes: validated as a whole; on any error nothing changes.
    pub async fn set_queue_attributes(
        &self,
        caller: &Caller,
        url: &str,
        changes: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        let name = queue_name_from_url(url).ok_or_else(queue_does_not_exist)?;
        let commit = {
            let mut queues = self.lock();
            let key = caller.key(name);
            let q = queues.get(&key).ok_or_else(queue_does_not_exist)?;
            let fifo = q.meta.is_fifo();
            if changes.contains_key("FifoQueue") {
                // FifoQueue is fixed at creation; AWS rejects changing it.
                return Err(invalid_attribute_name("FifoQueue"));
            }
            let mut meta = q.meta.clone();
            attributes::apply(&mut meta.attributes, changes, fifo)?;
            if let Some(rp) = meta.attributes.get("RedrivePolicy")
                && changes.contains_key("RedrivePolicy")
            {
                check_dead_letter_target(&queues, caller, rp, fifo, &meta.arn())?;
            }
            meta.last_modified_s = now_ms() / 1000;
            let stored = meta.clone();
            let commit = self
                .store
                .write_grouped(move |tx| state::put_queue(tx, &stored));
            if let Some(q) = queues.get_mut(&key) {
                q.meta = meta;
                // A shorter delay or new redrive policy can make messages deliverable now.
                q.notify.notify_waiters();
            }
            commit
        };
        commit.await.map_err(store_err)
    }

    /// TagQueue: adds or overwrites tags (50 at most per queue).
    pub async fn tag_queue(
        &self,
        caller: &Caller,
        url: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        self.update_meta(caller, url, |meta| {
            let mut next = meta.tags.clone();
            next.extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
            check_tags(&next)?;
            meta.tags = next;
            Ok(())
        })
        .await
    }

    /// UntagQueue: removing a key that is not there is not an error.
    pub async fn untag_queue(
        &self,
        caller: &Caller,
        url: &str,
        keys: &[String],
    ) -> Result<(), AwsError> {
        self.update_meta(caller, url, |meta| {
            for k in keys {
                meta.tags.remove(k);
            }
            Ok(())
        })
        .await
    }

    /// ListQueueTags.
    pub fn list_queue_tags(
        &self,
        caller: &Caller,
        url: &str,
    ) -> Result<BTreeMap<String, String>, AwsError> {
        self.with_queue(caller, url, |q| Ok(q.meta.tags.clone()))
    }

    /// Applies `f` to a copy of the queue's description, commits it, then installs it.
    pub(super) async fn update_meta(
        &self,
        caller: &Caller,
        url: &str,
        f: impl FnOnce(&mut QueueMeta) -> Result<(), AwsError>,
    ) -> Result<(), AwsError> {
        let commit = self.with_queue(caller, url, |q| {
            let mut meta = q.meta.clone();
            f(&mut meta)?;
            let stored = meta.clone();
            let commit = self
                .store
                .write_grouped(move |tx| state::put_queue(tx, &stored));
            q.meta = meta;
            Ok(commit)
        })?;
        commit.await.map_err(store_err)
    }

    /// PurgeQueue: deletes every message; a second purge within 60 s is refused as in AWS.
    pub fn purge_queue(&self, caller: &Caller, url: &str) -> Result<(), AwsError> {
        self.with_queue(caller, url, |q| {
            let now = now_ms();
            if q.meta
                .last_purge_ms
                .is_some_and(|t| now - t < PURGE_INTERVAL_MS)
            {
                return Err(purge_queue_in_progress(&q.meta.name));
            }
            let mut meta = q.meta.clone();
            meta.last_purge_ms = Some(now);
            self.store
                .write(|tx| {
                    state::put_queue(tx, &meta)?;
                    state::delete_all_messages(tx, &meta.region, &meta.name)
                })
                .map_err(store_err)?;
            q.meta = meta;
            q.messages.clear();
            Ok(())
        })
    }

    /// ListDeadLetterSourceQueues: queues whose RedrivePolicy targets this one.
    pub fn list_dead_letter_source_queues(
        &self,
        caller: &Caller,
        url: &str,
        max_results: Option<i64>,
        next_token: Option<&str>,
    ) -> Result<QueueUrlPage, AwsError> {
        let arn = self.with_queue(caller, url, |q| Ok(q.meta.arn()))?;
        let mut names: Vec<String> = {
            let queues = self.lock();
            queues
                .values()
                .filter(|q| q.meta.region == caller.region)
                .filter(|q| {
                    q.meta
                        .attributes
                        .get("RedrivePolicy")
                        .and_then(|rp| RedrivePolicy::parse(rp).ok())
                        .is_some_and(|rp| rp.dead_letter_target_arn == arn)
                })
                .map(|q| q.meta.name.clone())
                .collect()
        };
        names.sort();
        paginate(caller, names, max_results, next_token)
    }
}

/// Tag limits: at most 50 per queue, keys of 1-128 and values of up to 256 characters.
fn check_tags(tags: &BTreeMap<String, String>) -> Result<(), AwsError> {
    if tags.len() > MAX_TAGS {
        return Err(too_many_tags());
    }
    for (k, v) in tags {
        if k.is_empty() || k.chars().count() > 128 {
            return Err(invalid_parameter_value(
                "Tag keys must be between 1 and 128 characters in length.",
            ));
        }
        if v.chars().count() > 256 {
            return Err(invalid_parameter_value(
                "Tag values must be less than 256 characters in length.",
            ));
        }
    }
    Ok(())
}

/// Validates a RedrivePolicy's target: it must exist in this region, be of the same type, and
/// its RedriveAllowPolicy must admit `source_arn`.
fn check_dead_letter_target(
    queues: &HashMap<QueueKey, Queue>,
    caller: &Caller,
    policy: &str,
    fifo: bool,
    source_arn: &str,
) -> Result<(), AwsError> {
    let rp = RedrivePolicy::parse(policy)?;
    let bad = |reason: &str| {
        invalid_parameter_value(format!(
            "Value {policy} for parameter RedrivePolicy is invalid. Reason: {reason}"
        ))
    };
    let target = parse_queue_arn(&rp.dead_letter_target_arn)
        .filter(|(region, _, _)| *region == caller.region)
        .and_then(|(region, _, name)| queues.get(&(region.to_string(), name.to_string())))
        .ok_or_else(|| bad("Dead-letter target does not exist."))?;
    if target.meta.is_fifo() != fifo {
        return Err(bad(
            "Dead-letter queue must be same type of queue as the source.",
        ));
    }
    if let Some(allow) = target.meta.attributes.get("RedriveAllowPolicy") {
        let v: serde_json::Value = serde_json::from_str(allow).unwrap_or_default();
        let allowed = match v.get("redrivePermission").and_then(|p| p.as_str()) {
            Some("denyAll") => false,
            Some("byQueue") => v
                .get("sourceQueueArns")
                .and_then(|a| a.as_array())
                .is_some_and(|a| a.iter().any(|x| x.as_str() == Some(source_arn))),
            _ => true,
        };
        if !allowed {
            return Err(bad(&format!(
                "Queue {} does not allow {source_arn} to use it as a dead-letter queue.",
                target.meta.arn()
            )));
        }
    }
    Ok(())
}

fn paginate(
    caller: &Caller,
    names: Vec<String>,
    max_results: Option<i64>,
    next_token: Option<&str>,
) -> Result<QueueUrlPage, AwsError> {
    if let Some(m) = max_results
        && !(1..=1000).contains(&m)
    {
        return Err(invalid_parameter(
            "MaxResults",
            m,
            "MaxResults must be an integer between 1 and 1000.",
        ));
    }
    let start = match next_token {
        Some(t) if !t.is_empty() => {
            let after = B64
                .decode(t)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| invalid_parameter_value("Invalid NextToken value."))?;
            names.partition_point(|n| *n <= after)
        }
        _ => 0,
    };
    let limit = max_results.unwrap_or(1000) as usize;
    let page: Vec<String> = names.iter().skip(start).take(limit).cloned().collect();
    let more = start + page.len() < names.len();
    let next_token = (max_results.is_some() && more)
        .then(|| page.last().map(|n| B64.encode(n)))
        .flatten();
    Ok(QueueUrlPage {
        queue_urls: page.iter().map(|n| caller.queue_url(n)).collect(),
        next_token,
    })
}
