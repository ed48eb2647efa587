//! dynamodb: Amazon DynamoDB over awsJson1_0 (`X-Amz-Target: DynamoDB_20120810.X`) — tables with
//! key schemas, secondary indexes, billing modes, streams settings, TTL and tags; items with
//! condition and update expressions; Query and Scan; batch and transactional reads and writes.
//!
//! Layout: the typed operations (what CloudFormation calls) are methods of [`DynamoDbService`] —
//! table operations in `tables`, single-item operations in `items`, Query/Scan in `read`,
//! batches and transactions in `batch` — built on [`state`] (in-memory tables with write-through
//! to the store), [`schema`] (table definitions and their rules), [`value`] and [`number`]
//! (attribute values, exact decimal numbers), `expr` and `eval` (the expression languages).
//! `wire` only decodes requests and encodes responses.
//!
//! DynamoDB Streams (`DynamoDBStreams_20120810.*`) shares the signing name: `streams` builds the
//! stream records every item change of a table with a stream enabled commits with it, and
//! serves them (`streams_ops`).

mod batch;
pub mod errors;
mod eval;
mod expr;
pub mod items;
pub mod number;
pub(crate) mod provider;
pub mod read;
mod reserved;
pub mod schema;
pub mod state;
pub mod streams;
mod streams_ops;
pub use streams_ops::RecordsPage;
pub mod tables;
pub mod value;
mod wire;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use errors::table_not_found;
use state::{Change, Table, TableKey};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The DynamoDB service: every table of every region in memory, persisted through the store.
pub struct DynamoDbService {
    store: Arc<Store>,
    /// One lock over all tables: transactions span tables, and every critical section is short
    /// (no awaiting; the only I/O is the store commit).
    tables: Mutex<HashMap<TableKey, Table>>,
    /// TransactWriteItems' ClientRequestTokens of the last ten minutes: token → (the request's
    /// fingerprint, when it succeeded). A retry with the same token and request is answered
    /// without being applied again, as DynamoDB's idempotency window; kept in memory only.
    tx_tokens: Mutex<HashMap<String, (String, Instant)>>,
    /// Every stream and its records; locked after `tables` when both are held.
    streams: Mutex<streams::Streams>,
}

type Tables = HashMap<TableKey, Table>;

impl DynamoDbService {
    pub fn new(store: Arc<Store>, _config: &Config) -> Result<Self, StoreError> {
        store.migrate("dynamodb", state::MIGRATIONS)?;
        let (tables, mut problems) = store.read(state::load)?;
        let (streams, more) = store.read(streams::load)?;
        problems.extend(more);
        for p in problems {
            eprintln!("cumulo: dynamodb: skipped unreadable stored record: {p}");
        }
        Ok(DynamoDbService {
            store,
            tables: Mutex::new(tables),
            tx_tokens: Mutex::new(HashMap::new()),
            streams: Mutex::new(streams),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Tables> {
        // Memory changes only after a successful commit, so a panic elsewhere cannot leave a
        // half-applied change behind; keep serving.
        self.tables.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn lock_streams(&self) -> MutexGuard<'_, streams::Streams> {
        self.streams.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Commits a request's item changes, then applies them to memory.
    fn commit(&self, tables: &mut Tables, changes: Vec<Change>) -> Result<(), AwsError> {
        self.commit_by(tables, changes, false)
    }

    /// Commits item changes with their stream records (`by_ttl`: made by TTL, which the
    /// records' `userIdentity` says) in one transaction, then applies both to memory.
    fn commit_by(
        &self,
        tables: &mut Tables,
        changes: Vec<Change>,
        by_ttl: bool,
    ) -> Result<(), AwsError> {
        if changes.is_empty() {
            return Ok(());
        }
        let mut streams = self.lock_streams();
        let mut pending = streams::Pending::default();
        streams.records_for(tables, &changes, by_ttl, &mut pending);
        let written = self.store.write(|tx| {
            state::write_changes(tx, &changes)?;
            streams::write_pending(tx, &pending)
        });
        if let Err(e) = written {
            // The records' sequence numbers are not reused: only their order matters.
            return Err(AwsError::internal(format!(
                "dynamodb: cannot store items: {e}"
            )));
        }
        streams.apply(pending);
        drop(streams);
        for c in changes {
            match c {
                Change::Put {
                    meta_key, pk, item, ..
                } => {
                    if let Some(t) = tables.get_mut(&meta_key) {
                        t.insert(pk, item);
                    }
                }
                Change::Delete { meta_key, pk, .. } => {
                    if let Some(t) = tables.get_mut(&meta_key) {
                        t.remove(&pk);
                    }
                }
            }
        }
        Ok(())
    }

    /// Removes the table's expired items (TTL), as DynamoDB's background process does; run
    /// lazily before each access to the table, at most once a second. Items whose TTL is more
    /// than five years in the past are ignored, as DynamoDB ignores them.
    fn sweep_ttl(&self, tables: &mut Tables, key: &TableKey) -> Result<(), AwsError> {
        let Some(t) = tables.get_mut(key) else {
            return Ok(());
        };
        let Some(attr) = t.meta.ttl_attribute.clone() else {
            return Ok(());
        };
        if t.last_ttl_sweep
            .is_some_and(|at| at.elapsed() < Duration::from_secs(1))
        {
            return Ok(());
        }
        t.last_ttl_sweep = Some(Instant::now());
        let now = chrono::Utc::now().timestamp();
        let five_years = 5 * 365 * 24 * 3600;
        let changes: Vec<Change> = t
            .items
            .iter()
            .filter(|(_, item)| match item.get(&attr) {
                Some(value::AttrValue::N(n)) => n
                    .to_i64()
                    .or_else(|| n.to_string().split('.').next().and_then(|s| s.parse().ok()))
                    .is_some_and(|at: i64| at <= now && at > now - five_years),
                _ => false,
            })
            .map(|(pk, item)| Change::delete(&t.meta, pk.clone(), item))
            .collect();
        self.commit_by(tables, changes, true)
    }

    /// The table for an item operation, with expired items swept.
    fn table_for_items<'a>(
        &self,
        tables: &'a mut Tables,
        region: &str,
        name: &str,
    ) -> Result<&'a mut Table, AwsError> {
        let key = (region.to_string(), name.to_string());
        self.sweep_ttl(tables, &key)?;
        tables.get_mut(&key).ok_or_else(table_not_found)
    }
}

pub(crate) fn now_secs() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

impl Catalogued for DynamoDbService {
    const SERVICE: Descriptor = Descriptor {
        name: "dynamodb",
        protocols: &[
            Wire::Json10 {
                target_prefix: "DynamoDB_20120810",
            },
            Wire::Json10 {
                target_prefix: "DynamoDBStreams_20120810",
            },
        ],
        ..Descriptor::BASE
    };
    type Deps = ();

    fn build(context: &Context, (): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config)?)
    }
}

#[async_trait::async_trait]
impl Service for DynamoDbService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
