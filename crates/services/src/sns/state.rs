//! Topics and subscriptions: in memory, written through to `sns_topics` / `sns_subscriptions`.

use super::filter::{FilterPolicy, Scope};
use cumulo_store::rusqlite::{self, params};
use cumulo_store::{Commit, Store, StoreError};
use cumulo_wire::AwsError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

const MIGRATIONS: &[&str] = &[
    "CREATE TABLE sns_topics (arn TEXT PRIMARY KEY, doc TEXT NOT NULL);
     CREATE TABLE sns_subscriptions (arn TEXT PRIMARY KEY, doc TEXT NOT NULL);",
];

/// A topic. `attributes` holds only what callers set (DisplayName, Policy, FifoTopic, ...);
/// computed ones (TopicArn, Owner, counts, defaults) are added when read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topic {
    pub arn: String,
    pub name: String,
    pub region: String,
    pub attributes: BTreeMap<String, String>,
    pub tags: BTreeMap<String, String>,
    pub subscriptions_deleted: u64,
}

impl Topic {
    pub fn is_fifo(&self) -> bool {
        self.attributes
            .get("FifoTopic")
            .is_some_and(|v| v == "true")
    }

    pub fn content_based_dedup(&self) -> bool {
        self.attributes
            .get("ContentBasedDeduplication")
            .is_some_and(|v| v == "true")
    }
}

/// A subscription. `attributes` holds what callers set (RawMessageDelivery, FilterPolicy, ...).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Subscription {
    pub arn: String,
    pub topic_arn: String,
    pub region: String,
    pub protocol: String,
    pub endpoint: String,
    pub owner: String,
    pub attributes: BTreeMap<String, String>,
    pub confirmed: bool,
    /// The token ConfirmSubscription expects while pending.
    pub token: Option<String>,
    /// The compiled FilterPolicy (derived from `attributes`, rebuilt on load).
    #[serde(skip)]
    pub filter: Option<FilterPolicy>,
}

impl Subscription {
    pub fn filter_scope(&self) -> Scope {
        match self.attributes.get("FilterPolicyScope").map(String::as_str) {
            Some("MessageBody") => Scope::MessageBody,
            _ => Scope::MessageAttributes,
        }
    }

    /// Compiles the stored FilterPolicy (validated when it was set).
    pub fn recompile(&mut self) {
        self.filter = self
            .attributes
            .get("FilterPolicy")
            .and_then(|p| FilterPolicy::parse(p, self.filter_scope()).ok());
    }

    pub fn raw(&self) -> bool {
        self.attributes
            .get("RawMessageDelivery")
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    }
}

#[derive(Default)]
pub struct Data {
    pub topics: BTreeMap<String, Topic>,
    pub subscriptions: BTreeMap<String, Subscription>,
}

pub struct SnsStore {
    store: Arc<Store>,
    data: Mutex<Data>,
}

pub(super) fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(e.to_string())
}

fn load_docs(store: &Store, table: &str) -> Result<Vec<String>, StoreError> {
    store.read(|c| {
        let mut stmt = c.prepare(&format!("SELECT doc FROM {table}"))?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
    })
}

impl SnsStore {
    pub fn open(store: Arc<Store>) -> Result<Self, StoreError> {
        store.migrate("sns", MIGRATIONS)?;
        let mut data = Data::default();
        // Rows that do not parse were not written by cumulo; they are skipped, not fatal.
        for doc in load_docs(&store, "sns_topics")? {
            if let Ok(t) = serde_json::from_str::<Topic>(&doc) {
                data.topics.insert(t.arn.clone(), t);
            }
        }
        for doc in load_docs(&store, "sns_subscriptions")? {
            if let Ok(mut s) = serde_json::from_str::<Subscription>(&doc) {
                s.recompile();
                data.subscriptions.insert(s.arn.clone(), s);
            }
        }
        Ok(SnsStore {
            store,
            data: Mutex::new(data),
        })
    }

    pub fn lock(&self) -> Locked<'_> {
        Locked {
            store: &self.store,
            data: self.data.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }
}

/// Exclusive access. Subscription changes commit to SQLite before they change memory; topic
/// changes are queued on the store's group commit under this lock (so the store sees them in
/// the order memory does) and installed at once, and the operation awaits the commit before it
/// answers.
pub struct Locked<'a> {
    store: &'a Store,
    pub data: MutexGuard<'a, Data>,
}

impl Locked<'_> {
    /// Queues the topic's write on the group commit and installs it; the caller releases the
    /// lock and awaits the [`Commit`] before it answers.
    pub fn save_topic(&mut self, topic: Topic) -> Result<Commit, AwsError> {
        let doc = serde_json::to_string(&topic).map_err(internal)?;
        let arn = topic.arn.clone();
        let commit = self.store.write_grouped(move |tx| {
            tx.prepare_cached("INSERT OR REPLACE INTO sns_topics(arn, doc) VALUES (?1, ?2)")?
                .execute(params![arn, doc])
        });
        self.data.topics.insert(topic.arn.clone(), topic);
        Ok(commit)
    }

    pub fn save_subscription(&mut self, mut sub: Subscription) -> Result<(), AwsError> {
        let doc = serde_json::to_string(&sub).map_err(internal)?;
        self.store
            .write(|tx| {
                tx.execute(
                    "INSERT OR REPLACE INTO sns_subscriptions(arn, doc) VALUES (?1, ?2)",
                    params![sub.arn, doc],
                )
            })
            .map_err(internal)?;
        sub.recompile();
        self.data.subscriptions.insert(sub.arn.clone(), sub);
        Ok(())
    }

    /// Removes a subscription and records the deletion on its topic, in one transaction.
    pub fn remove_subscription(&mut self, arn: &str) -> Result<(), AwsError> {
        let Some(sub) = self.data.subscriptions.get(arn) else {
            return Ok(());
        };
        let topic = self.data.topics.get(&sub.topic_arn).cloned().map(|mut t| {
            t.subscriptions_deleted += 1;
            t
        });
        let topic_doc = topic
            .as_ref()
            .map(serde_json::to_string)
            .transpose()
            .map_err(internal)?;
        self.store
            .write(|tx| {
                tx.execute("DELETE FROM sns_subscriptions WHERE arn = ?1", params![arn])?;
                if let (Some(t), Some(doc)) = (&topic, &topic_doc) {
                    tx.execute(
                        "UPDATE sns_topics SET doc = ?2 WHERE arn = ?1",
                        params![t.arn, doc],
                    )?;
                }
                Ok(())
            })
            .map_err(internal)?;
        self.data.subscriptions.remove(arn);
        if let Some(t) = topic {
            self.data.topics.insert(t.arn.clone(), t);
        }
        Ok(())
    }

    /// Removes a topic with all its subscriptions, in one grouped write (awaited as for
    /// [`Locked::save_topic`]).
    pub fn remove_topic(&mut self, arn: &str) -> Commit {
        let subs: Vec<String> = self
            .data
            .subscriptions
            .values()
            .filter(|s| s.topic_arn == arn)
            .map(|s| s.arn.clone())
            .collect();
        self.data.topics.remove(arn);
        for s in &subs {
            self.data.subscriptions.remove(s);
        }
        let arn = arn.to_string();
        self.store.write_grouped(move |tx| {
            tx.prepare_cached("DELETE FROM sns_topics WHERE arn = ?1")?
                .execute(params![arn])?;
            for s in &subs {
                tx.prepare_cached("DELETE FROM sns_subscriptions WHERE arn = ?1")?
                    .execute(params![s])?;
            }
            Ok(())
        })
    }
}
