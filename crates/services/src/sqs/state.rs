//! SQS's in-memory state and its write-through persistence. Every queue lives in memory (the hot
//! path never reads SQLite); every change is committed to the `sqs_*` tables before the operation
//! answers, and [`load`] rebuilds the memory from them on start.

use super::model::MessageAttributes;
use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;
use tokio::sync::Notify;

/// Schema migrations owned by the SQS service. Rows hold JSON documents so new fields need no
/// migration; the columns are what lookups and ordering need. A message's delivery state (which
/// changes on every receive) has its own small column so a receive never rewrites the body.
pub const MIGRATIONS: &[&str] = &["
    CREATE TABLE sqs_queues (
        region TEXT NOT NULL,
        name TEXT NOT NULL,
        data TEXT NOT NULL,
        next_seq INTEGER NOT NULL,
        PRIMARY KEY (region, name)
    );
    CREATE TABLE sqs_dedup (
        region TEXT NOT NULL,
        queue TEXT NOT NULL,
        key TEXT NOT NULL,
        data TEXT NOT NULL,
        expires_ms INTEGER NOT NULL,
        PRIMARY KEY (region, queue, key)
    );
    CREATE TABLE sqs_messages (
        region TEXT NOT NULL,
        queue TEXT NOT NULL,
        seq INTEGER NOT NULL,
        data TEXT NOT NULL,
        delivery TEXT NOT NULL,
        PRIMARY KEY (region, queue, seq)
    );
"];

/// A queue is identified by its region and name (one account per server).
pub type QueueKey = (String, String);

/// A FIFO deduplication record: a repeat within its lifetime returns the original ids.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DedupEntry {
    pub expires_ms: i64,
    pub message_id: String,
    pub sequence_number: Option<String>,
}

/// The persisted description of a queue (everything but its messages).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct QueueMeta {
    pub region: String,
    pub name: String,
    pub account_id: String,
    /// Settable attributes, normalised, including defaults.
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    pub created_s: i64,
    pub last_modified_s: i64,
    /// The next message sequence (orders the queue; FIFO sequence numbers derive from it). Also
    /// stored in its own column, which FIFO sends update without rewriting this document.
    pub next_seq: u64,
    pub last_purge_ms: Option<i64>,
    /// The most recent message move tasks with this queue as their source, newest last.
    #[serde(default)]
    pub move_tasks: Vec<MoveTask>,
}

/// A StartMessageMoveTask run (see `move_tasks.rs`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MoveTask {
    pub task_id: String,
    /// `RUNNING`, `COMPLETED`, `CANCELLING`, `CANCELLED` or `FAILED`.
    pub status: String,
    pub source_arn: String,
    pub destination_arn: Option<String>,
    pub max_per_second: Option<i64>,
    pub moved: i64,
    pub to_move: i64,
    pub failure_reason: Option<String>,
    pub started_ms: i64,
}

impl QueueMeta {
    pub fn is_fifo(&self) -> bool {
        self.attributes.get("FifoQueue").map(String::as_str) == Some("true")
    }

    /// An integer attribute (they are validated on the way in, so the fallback never applies to
    /// stored data).
    pub fn int_attr(&self, name: &str, fallback: i64) -> i64 {
        self.attributes
            .get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(fallback)
    }

    pub fn arn(&self) -> String {
        queue_arn(&self.region, &self.account_id, &self.name)
    }
}

pub fn queue_arn(region: &str, account_id: &str, name: &str) -> String {
    format!("arn:aws:sqs:{region}:{account_id}:{name}")
}

/// One message with its delivery state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Message {
    pub id: String,
    pub body: String,
    pub md5_of_body: String,
    #[serde(default)]
    pub attributes: MessageAttributes,
    #[serde(default)]
    pub system_attributes: MessageAttributes,
    pub sender_id: String,
    pub sent_ms: i64,
    /// Not deliverable before this instant (delay, or visibility timeout while in flight).
    pub visible_at_ms: i64,
    pub receive_count: i64,
    pub first_receive_ms: Option<i64>,
    /// Changes on every receive, so a receipt handle names one delivery.
    pub receipt_nonce: Option<String>,
    pub group_id: Option<String>,
    pub dedup_id: Option<String>,
    pub sequence_number: Option<String>,
    /// Set when the message was moved here from a source queue by redrive.
    pub dead_letter_source_arn: Option<String>,
}

/// The part of a message that changes after it is sent.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Delivery {
    visible_at_ms: i64,
    receive_count: i64,
    first_receive_ms: Option<i64>,
    receipt_nonce: Option<String>,
}

impl Message {
    fn delivery(&self) -> Delivery {
        Delivery {
            visible_at_ms: self.visible_at_ms,
            receive_count: self.receive_count,
            first_receive_ms: self.first_receive_ms,
            receipt_nonce: self.receipt_nonce.clone(),
        }
    }

    fn set_delivery(&mut self, d: Delivery) {
        self.visible_at_ms = d.visible_at_ms;
        self.receive_count = d.receive_count;
        self.first_receive_ms = d.first_receive_ms;
        self.receipt_nonce = d.receipt_nonce;
    }

    /// Received and its visibility timeout has not expired.
    pub fn in_flight(&self, now_ms: i64) -> bool {
        self.receive_count > 0 && self.visible_at_ms > now_ms
    }

    /// Still within its delay, never received.
    pub fn delayed(&self, now_ms: i64) -> bool {
        self.receive_count == 0 && self.visible_at_ms > now_ms
    }
}

/// A queue's messages in send order, indexed by when they become deliverable so a receive
/// touches only deliverable messages however many are in flight or delayed.
///
/// Invariant: every message is in exactly one of `ready` (visible when last classified, and
/// visibility only ever expires forward) or `waiting` (keyed by the instant it becomes visible).
#[derive(Debug, Default)]
pub struct Messages {
    all: BTreeMap<u64, Message>,
    ready: BTreeSet<u64>,
    waiting: BTreeSet<(i64, u64)>,
}

impl Messages {
    /// Adds or replaces the message at `seq`, filing it by its visibility.
    pub fn insert(&mut self, seq: u64, msg: Message, now_ms: i64) {
        self.remove(seq);
        if msg.visible_at_ms > now_ms {
            self.waiting.insert((msg.visible_at_ms, seq));
        } else {
            self.ready.insert(seq);
        }
        self.all.insert(seq, msg);
    }

    pub fn remove(&mut self, seq: u64) -> Option<Message> {
        let msg = self.all.remove(&seq)?;
        self.ready.remove(&seq);
        self.waiting.remove(&(msg.visible_at_ms, seq));
        Some(msg)
    }

    pub fn get(&self, seq: u64) -> Option<&Message> {
        self.all.get(&seq)
    }

    pub fn clear(&mut self) {
        *self = Messages::default();
    }

    /// Every message, in send order.
    pub fn values(&self) -> impl Iterator<Item = &Message> {
        self.all.values()
    }

    /// Moves messages whose delay or visibility timeout has passed to the ready set.
    pub fn promote(&mut self, now_ms: i64) {
        while let Some(&(at, seq)) = self.waiting.first() {
            if at > now_ms {
                break;
            }
            self.waiting.pop_first();
            self.ready.insert(seq);
        }
    }

    /// Deliverable messages (as of the last [`Messages::promote`]) in send order.
    pub fn ready(&self) -> impl Iterator<Item = (u64, &Message)> {
        self.ready
            .iter()
            .filter_map(|seq| self.all.get(seq).map(|m| (*seq, m)))
    }

    /// Messages not yet deliverable: in flight or delayed.
    pub fn waiting(&self) -> impl Iterator<Item = (u64, &Message)> {
        self.waiting
            .iter()
            .filter_map(|(_, seq)| self.all.get(seq).map(|m| (*seq, m)))
    }

    /// When the next waiting message becomes deliverable.
    pub fn next_visible_ms(&self) -> Option<i64> {
        self.waiting.first().map(|(at, _)| *at)
    }
}

/// A FIFO queue's deduplication records of the last five minutes. Each lives in its own row so
/// a send writes one small record however many are live.
#[derive(Debug, Default)]
pub struct Dedup {
    by_key: HashMap<String, DedupEntry>,
    /// (expiry, key) in insertion order, which is expiry order (the window is fixed).
    order: VecDeque<(i64, String)>,
}

impl Dedup {
    /// The live record for `key`, if any.
    pub fn get(&self, key: &str, now_ms: i64) -> Option<&DedupEntry> {
        self.by_key.get(key).filter(|e| e.expires_ms > now_ms)
    }

    pub fn insert(&mut self, key: String, entry: DedupEntry) {
        self.order.push_back((entry.expires_ms, key.clone()));
        self.by_key.insert(key, entry);
    }

    /// Forgets expired records and returns their keys, for deletion from the store.
    pub fn prune(&mut self, now_ms: i64) -> Vec<String> {
        let mut gone = Vec::new();
        while let Some((at, _)) = self.order.front() {
            if *at > now_ms {
                break;
            }
            if let Some((at, key)) = self.order.pop_front()
                && self.by_key.get(&key).is_some_and(|e| e.expires_ms == at)
            {
                self.by_key.remove(&key);
                gone.push(key);
            }
        }
        gone
    }
}

/// What one FIFO ReceiveMessage with a ReceiveRequestAttemptId returned: each message by
/// sequence, receipt nonce and visibility deadline, so a retry can tell that none was deleted,
/// received again or had its visibility changed since.
#[derive(Debug, Clone)]
pub struct ReceiveAttempt {
    pub expires_ms: i64,
    pub messages: Vec<(u64, String, i64)>,
}

/// A live queue: its description, its messages, FIFO deduplication records and receive
/// attempts, and the wake-up long polls wait on. Receive attempts are kept in memory only: a
/// retry after a restart performs a fresh receive, as a retry after the window does in AWS.
#[derive(Debug)]
pub struct Queue {
    pub meta: QueueMeta,
    pub messages: Messages,
    pub dedup: Dedup,
    pub attempts: HashMap<String, ReceiveAttempt>,
    pub notify: Arc<Notify>,
}

impl Queue {
    pub fn new(meta: QueueMeta) -> Self {
        Queue {
            meta,
            messages: Messages::default(),
            dedup: Dedup::default(),
            attempts: HashMap::new(),
            notify: Arc::new(Notify::new()),
        }
    }
}

pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn to_json<T: Serialize>(v: &T) -> rusqlite::Result<String> {
    serde_json::to_string(v).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

pub fn put_queue(tx: &Transaction<'_>, meta: &QueueMeta) -> rusqlite::Result<()> {
    // Cached: a stack writes each of its queues at least once, and parsing the statement anew
    // each time was ~3% of a 500-queue create's CPU.
    tx.prepare_cached(
        "INSERT INTO sqs_queues (region, name, data, next_seq) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (region, name) DO UPDATE SET data = excluded.data, next_seq = excluded.next_seq",
    )?
    .execute(params![meta.region, meta.name, to_json(meta)?, meta.next_seq as i64])?;
    Ok(())
}

/// Records a queue's sequence counter, so FIFO sequence numbers keep increasing across restarts
/// even when every message has been deleted.
pub fn put_next_seq(
    tx: &Transaction<'_>,
    region: &str,
    name: &str,
    next_seq: u64,
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(
        "UPDATE sqs_queues SET next_seq = max(next_seq, ?3) WHERE region = ?1 AND name = ?2",
    )?;
    stmt.execute(params![region, name, next_seq as i64])?;
    Ok(())
}

pub fn put_dedup(
    tx: &Transaction<'_>,
    region: &str,
    queue: &str,
    key: &str,
    entry: &DedupEntry,
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO sqs_dedup (region, queue, key, data, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (region, queue, key) DO UPDATE
         SET data = excluded.data, expires_ms = excluded.expires_ms",
    )?;
    stmt.execute(params![
        region,
        queue,
        key,
        to_json(entry)?,
        entry.expires_ms
    ])?;
    Ok(())
}

pub fn delete_dedup(
    tx: &Transaction<'_>,
    region: &str,
    queue: &str,
    key: &str,
) -> rusqlite::Result<()> {
    let mut stmt =
        tx.prepare_cached("DELETE FROM sqs_dedup WHERE region = ?1 AND queue = ?2 AND key = ?3")?;
    stmt.execute(params![region, queue, key])?;
    Ok(())
}

/// Drops deduplication records that expired while the server was down.
pub fn delete_expired_dedup(tx: &Transaction<'_>, now_ms: i64) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM sqs_dedup WHERE expires_ms <= ?1",
        params![now_ms],
    )?;
    Ok(())
}

pub fn delete_queue(tx: &Transaction<'_>, region: &str, name: &str) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM sqs_queues WHERE region = ?1 AND name = ?2")?
        .execute(params![region, name])?;
    tx.prepare_cached("DELETE FROM sqs_dedup WHERE region = ?1 AND queue = ?2")?
        .execute(params![region, name])?;
    delete_all_messages(tx, region, name)
}

pub fn delete_all_messages(tx: &Transaction<'_>, region: &str, name: &str) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM sqs_messages WHERE region = ?1 AND queue = ?2")?
        .execute(params![region, name])?;
    Ok(())
}

/// Stores a new message (or one moved here by redrive).
pub fn put_message(
    tx: &Transaction<'_>,
    region: &str,
    queue: &str,
    seq: u64,
    msg: &Message,
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO sqs_messages (region, queue, seq, data, delivery) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (region, queue, seq) DO UPDATE
         SET data = excluded.data, delivery = excluded.delivery",
    )?;
    stmt.execute(params![
        region,
        queue,
        seq as i64,
        to_json(msg)?,
        to_json(&msg.delivery())?
    ])?;
    Ok(())
}

/// Records a receive or visibility change: only the small delivery column is rewritten.
pub fn put_delivery(
    tx: &Transaction<'_>,
    region: &str,
    queue: &str,
    seq: u64,
    msg: &Message,
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(
        "UPDATE sqs_messages SET delivery = ?4 WHERE region = ?1 AND queue = ?2 AND seq = ?3",
    )?;
    stmt.execute(params![
        region,
        queue,
        seq as i64,
        to_json(&msg.delivery())?
    ])?;
    Ok(())
}

pub fn delete_message(
    tx: &Transaction<'_>,
    region: &str,
    queue: &str,
    seq: u64,
) -> rusqlite::Result<()> {
    let mut stmt = tx
        .prepare_cached("DELETE FROM sqs_messages WHERE region = ?1 AND queue = ?2 AND seq = ?3")?;
    stmt.execute(params![region, queue, seq as i64])?;
    Ok(())
}

/// Rebuilds every queue from the store. A row that no longer parses is skipped rather than
/// preventing the server from starting; it is reported in the returned list.
pub fn load(conn: &Connection) -> rusqlite::Result<(HashMap<QueueKey, Queue>, Vec<String>)> {
    let now = now_ms();
    let mut queues = HashMap::new();
    let mut problems = Vec::new();
    let mut stmt = conn.prepare("SELECT region, name, data, next_seq FROM sqs_queues")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
        ))
    })?;
    for row in rows {
        let (region, name, data, next_seq) = row?;
        match serde_json::from_str::<QueueMeta>(&data) {
            Ok(mut meta) => {
                meta.next_seq = meta.next_seq.max(next_seq as u64);
                queues.insert((region, name), Queue::new(meta));
            }
            Err(e) => problems.push(format!("queue {region}/{name}: {e}")),
        }
    }
    let mut stmt = conn.prepare("SELECT region, queue, seq, data, delivery FROM sqs_messages")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
        ))
    })?;
    for row in rows {
        let (region, name, seq, data, delivery) = row?;
        let Some(queue) = queues.get_mut(&(region.clone(), name.clone())) else {
            continue;
        };
        let parsed = serde_json::from_str::<Message>(&data)
            .and_then(|m| Ok((m, serde_json::from_str::<Delivery>(&delivery)?)));
        match parsed {
            Ok((mut msg, d)) => {
                msg.set_delivery(d);
                let seq = seq as u64;
                queue.meta.next_seq = queue.meta.next_seq.max(seq + 1);
                queue.messages.insert(seq, msg, now);
            }
            Err(e) => problems.push(format!("message {region}/{name}#{seq}: {e}")),
        }
    }
    let mut stmt = conn.prepare(
        "SELECT region, queue, key, data FROM sqs_dedup WHERE expires_ms > ?1 ORDER BY expires_ms",
    )?;
    let rows = stmt.query_map(params![now], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    for row in rows {
        let (region, name, key, data) = row?;
        let Some(queue) = queues.get_mut(&(region.clone(), name.clone())) else {
            continue;
        };
        match serde_json::from_str::<DedupEntry>(&data) {
            Ok(entry) => queue.dedup.insert(key, entry),
            Err(e) => problems.push(format!("dedup record {region}/{name}/{key}: {e}")),
        }
    }
    Ok((queues, problems))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: &str, visible_at_ms: i64) -> Message {
        Message {
            id: id.into(),
            body: "b".into(),
            md5_of_body: String::new(),
            attributes: MessageAttributes::new(),
            system_attributes: MessageAttributes::new(),
            sender_id: "s".into(),
            sent_ms: 0,
            visible_at_ms,
            receive_count: 0,
            first_receive_ms: None,
            receipt_nonce: None,
            group_id: None,
            dedup_id: None,
            sequence_number: None,
            dead_letter_source_arn: None,
        }
    }

    fn ready_ids(m: &Messages) -> Vec<String> {
        m.ready().map(|(_, m)| m.id.clone()).collect()
    }

    #[test]
    fn index_files_messages_by_visibility() {
        let mut m = Messages::default();
        m.insert(1, msg("a", 100), 100);
        m.insert(2, msg("b", 300), 100);
        m.insert(3, msg("c", 200), 100);
        assert_eq!(ready_ids(&m), ["a"]);
        assert_eq!(m.next_visible_ms(), Some(200));
        m.promote(250);
        assert_eq!(ready_ids(&m), ["a", "c"]);
        // Replacing (a receive) moves a message back to waiting.
        m.insert(1, msg("a", 1_000), 250);
        assert_eq!(ready_ids(&m), ["c"]);
        assert_eq!(m.waiting().map(|(s, _)| s).collect::<Vec<_>>(), [2, 1]);
        assert_eq!(m.remove(2).map(|x| x.id), Some("b".to_string()));
        assert_eq!(m.remove(2).map(|x| x.id), None);
        m.promote(5_000);
        assert_eq!(ready_ids(&m), ["a", "c"]);
        assert_eq!(m.next_visible_ms(), None);
        assert_eq!(m.values().count(), 2);
        m.clear();
        assert_eq!(m.values().count(), 0);
    }

    #[test]
    fn dedup_records_expire_in_order() {
        let entry = |at: i64, id: &str| DedupEntry {
            expires_ms: at,
            message_id: id.into(),
            sequence_number: None,
        };
        let mut d = Dedup::default();
        d.insert("a".into(), entry(100, "1"));
        d.insert("b".into(), entry(200, "2"));
        assert_eq!(d.get("a", 50).map(|e| e.message_id.as_str()), Some("1"));
        assert!(d.get("a", 100).is_none(), "expired at its instant");
        assert_eq!(d.prune(150), ["a"]);
        // A key reused after expiry keeps only its new record.
        d.insert("a".into(), entry(300, "3"));
        assert_eq!(d.prune(250), ["b"]);
        assert_eq!(d.get("a", 250).map(|e| e.message_id.as_str()), Some("3"));
        assert_eq!(d.prune(300), ["a"]);
        assert!(d.prune(1_000).is_empty());
    }
}
