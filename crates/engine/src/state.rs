//! The engine's shared state: every stack (live and deleted), its resources and events, and the
//! change sets, in memory with write-through to the store (tables `cfn_*`). A state transition
//! is committed before anything observes it through the API.

use crate::engine::{Engine, EngineConfig};
use crate::error::EngineError;
use crate::provider::ProviderRegistry;
use crate::status::StackStatus;
use crate::world::World;
use cumulo_store::rusqlite::{self, params};
use cumulo_store::{MasterKey, Store};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::watch;

const MIGRATIONS: &[&str] = &["CREATE TABLE cfn_stacks (stack_id TEXT PRIMARY KEY, body TEXT NOT NULL);
     CREATE TABLE cfn_resources (stack_id TEXT NOT NULL, logical_id TEXT NOT NULL, body TEXT NOT NULL,
         PRIMARY KEY (stack_id, logical_id));
     CREATE TABLE cfn_events (stack_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL,
         PRIMARY KEY (stack_id, seq));
     CREATE TABLE cfn_change_sets (change_set_id TEXT PRIMARY KEY, body TEXT NOT NULL);",
    // The previous generation an update keeps moves out of the stack row, which is rewritten at
    // every status change: at 500 resources it was ~11% of an update's CPU to serialize it each
    // time. Rows written before carry it inline; they move here.
    "CREATE TABLE cfn_previous (stack_id TEXT PRIMARY KEY, body TEXT NOT NULL);
     INSERT INTO cfn_previous(stack_id, body)
         SELECT stack_id, json_extract(body, '$.previous') FROM cfn_stacks
         WHERE body LIKE '{%' AND json_type(body, '$.previous') = 'object';",
    // The previous generation's records, copied row for row from `cfn_resources` when an
    // update takes the generation (they are the stack's records at that moment, already
    // serialized): serializing them again was ~5 ms of a 500-resource update's start, under the
    // engine's lock. Generations written before carry their records inline in `cfn_previous`,
    // which still loads.
    "CREATE TABLE cfn_previous_resources (stack_id TEXT NOT NULL, logical_id TEXT NOT NULL,
         body TEXT NOT NULL, PRIMARY KEY (stack_id, logical_id));"];

/// Milliseconds since the epoch: what records keep (views turn it into a `DateTime`).
pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct StoredParam {
    pub key: String,
    /// What the stack was given (or the default); for SSM types the parameter name.
    pub value: String,
    /// For SSM parameter types, the value read from SSM at the operation.
    pub resolved: Option<String>,
    pub no_echo: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct StoredOutput {
    pub key: String,
    pub value: String,
    pub description: Option<String>,
    pub export_name: Option<String>,
}

/// One resource of a stack. `properties` are resolved intrinsics with dynamic references
/// left literal: what is hashed, stored and shown.
///
/// A record is cloned at every transition (the stack's copy, the running step's, an update's
/// previous generation, a deletion's targets); `properties`, `attributes`, `observed` and
/// `metadata`, the trees that make most of its allocations, are shared (`Arc`) and replaced
/// whole, never edited in place. Cloning records was ~16% of a 500-resource deletion's CPU
/// before the first two were shared; sharing the other two took that deletion's CPU from
/// 80-88 ms to 70-72 ms (observed properties are read back after every create and update).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct ResourceRecord {
    pub logical_id: String,
    pub resource_type: String,
    pub physical_id: Option<String>,
    pub status: String,
    pub status_reason: Option<String>,
    pub properties: Arc<Value>,
    pub hash: String,
    pub attributes: Arc<Map<String, Value>>,
    pub updated: i64,
    pub deletion_policy: Option<String>,
    pub update_replace_policy: Option<String>,
    pub metadata: Option<Arc<Value>>,
    pub depends_on: Vec<String>,
    /// Created as a stub (no provider): nothing to delete.
    pub stub: bool,
    /// During an update: the record this one replaced, deleted in the cleanup phase.
    pub replaced: Option<Box<ResourceRecord>>,
    /// What the service last reported for the resource (drift, import), in the template's
    /// shape: the record's observed properties beside its intent (`properties`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed: Option<Arc<Value>>,
    /// A create in flight, journaled durably before the provider is called and cleared when its
    /// answer is recorded. A record still carrying it names a resource the service may hold
    /// that the stack never recorded (the process died in between); the next operation on the
    /// resource looks it up and deletes it (see `Op::reap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingCreate>,
    /// The signals a resource with a CreationPolicy or a WaitCondition received, and those a
    /// WaitConditionHandle keeps until a WaitCondition waits on it (`ops/signal.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<crate::ops::signal::Signal>,
    /// Attributes the last provider call reported as NoEcho (see `mask`): per call, never
    /// written down; what is written down carries the mask instead of their values.
    #[serde(skip)]
    pub secret_attributes: Vec<String>,
}

/// The journal entry of one create: what it will be called, decided before the service call.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct PendingCreate {
    /// The random part of a generated name ([`crate::ProviderContext::name_token`]).
    pub name_token: String,
    /// The physical id the create will produce ([`crate::Provider::created_identity`]).
    pub identity: Option<String>,
    /// Something already lived under `identity` before the call (a name the template gave
    /// that was taken): it is not this create's to delete.
    pub existed: bool,
}

/// What a stack looked like before the running update: what a rollback restores.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Generation {
    pub template_body: String,
    /// The template as submitted, when transforms (AWS::Include, macros) processed it into
    /// `template_body` (GetTemplate's Original stage; `template_body` is the Processed one).
    #[serde(default)]
    pub original_body: Option<String>,
    pub description: Option<String>,
    pub parameters: Vec<StoredParam>,
    pub tags: Vec<(String, String)>,
    pub outputs: Vec<StoredOutput>,
    pub notification_arns: Vec<String>,
    pub capabilities: Vec<String>,
    /// Persisted in `cfn_previous_resources`, copied from `cfn_resources` when the generation
    /// is taken ([`Inner::save_stack_with`] with [`GenerationRows::Take`]); read here only from
    /// rows written before that table existed.
    #[serde(default, skip_serializing)]
    pub resources: IndexMap<String, ResourceRecord>,
    pub imports: Vec<String>,
}

/// The running (or last) operation's options.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub(crate) struct OpRecord {
    pub token: String,
    /// The caller gave the token (idempotent retries compare it).
    pub caller_token: bool,
    pub kind: String,
    pub disable_rollback: bool,
    /// OnFailure=DELETE.
    pub delete_on_failure: bool,
    pub retain_except_on_create: bool,
    /// The host of the call that started the operation, handed to providers (and to nested
    /// stacks' operations). Stored so a stack written before it existed still loads.
    #[serde(default)]
    pub host: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StackRecord {
    pub stack_id: String,
    pub stack_name: String,
    pub region: String,
    pub account_id: String,
    pub status: StackStatus,
    pub status_reason: Option<String>,
    pub created: i64,
    pub updated: Option<i64>,
    pub deleted: Option<i64>,
    pub template_body: String,
    /// The template as submitted, when transforms (AWS::Include, macros) processed it into
    /// `template_body` (GetTemplate's Original stage; `template_body` is the Processed one).
    #[serde(default)]
    pub original_body: Option<String>,
    pub description: Option<String>,
    pub parameters: Vec<StoredParam>,
    pub tags: Vec<(String, String)>,
    pub capabilities: Vec<String>,
    pub notification_arns: Vec<String>,
    pub timeout_in_minutes: Option<i64>,
    pub termination_protection: bool,
    pub disable_rollback: bool,
    pub retain_except_on_create: bool,
    pub outputs: Vec<StoredOutput>,
    pub parent_id: Option<String>,
    pub root_id: Option<String>,
    pub change_set_id: Option<String>,
    /// Export names this stack's template imports.
    pub imports: Vec<String>,
    /// Persisted in `cfn_previous`, written only by [`Inner::save_stack_full`] and
    /// [`Inner::save_stack_with`] (with the stack row, in one transaction). **Invariant:**
    /// whatever sets or clears it writes the stack through one of those two.
    #[serde(default, skip_serializing)]
    pub previous: Option<Generation>,
    /// Physical resources a rollback still has to delete (replacements it retired).
    #[serde(default)]
    pub orphans: Vec<ResourceRecord>,
    /// The stack policy (SetStackPolicy, StackPolicyBody).
    #[serde(default)]
    pub stack_policy: Option<String>,
    /// StackPolicyDuringUpdateBody of the running (or last) update: it replaces
    /// `stack_policy` for that update only.
    #[serde(default)]
    pub policy_during_update: Option<String>,
    #[serde(default)]
    pub role_arn: Option<String>,
    #[serde(default)]
    pub rollback_configuration: Option<crate::api::RollbackConfiguration>,
    pub op: OpRecord,
    /// Persisted in `cfn_resources`.
    #[serde(skip)]
    pub resources: IndexMap<String, ResourceRecord>,
    /// Persisted in `cfn_events`; oldest first.
    #[serde(skip)]
    pub events: Vec<EventRecord>,
    /// A record of this stack (or of its previous generation) got NoEcho attributes from a
    /// provider in this process; never cleared. Without it, finding the stack's needles
    /// ([`crate::mask::needles`]) on every resource transition walked every record: a
    /// quadratic cost that was ~3% of a 500-resource update.
    #[serde(skip)]
    pub holds_secrets: bool,
}

impl StackRecord {
    /// A stack that holds nothing yet (no template, resources or events): what a CREATE change
    /// set's REVIEW_IN_PROGRESS placeholder and an import into a new stack start from.
    pub(crate) fn empty(
        stack_id: &str,
        stack_name: &str,
        region: &str,
        account_id: &str,
        status: StackStatus,
    ) -> Self {
        StackRecord {
            stack_id: stack_id.to_string(),
            stack_name: stack_name.to_string(),
            region: region.to_string(),
            account_id: account_id.to_string(),
            status,
            status_reason: None,
            created: now_ms(),
            updated: None,
            deleted: None,
            template_body: String::new(),
            original_body: None,
            description: None,
            parameters: Vec::new(),
            tags: Vec::new(),
            capabilities: Vec::new(),
            notification_arns: Vec::new(),
            timeout_in_minutes: None,
            termination_protection: false,
            disable_rollback: false,
            retain_except_on_create: false,
            outputs: Vec::new(),
            parent_id: None,
            root_id: None,
            change_set_id: None,
            imports: Vec::new(),
            previous: None,
            orphans: Vec::new(),
            stack_policy: None,
            policy_during_update: None,
            role_arn: None,
            rollback_configuration: None,
            op: OpRecord::default(),
            resources: Default::default(),
            events: Vec::new(),
            holds_secrets: false,
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct EventRecord {
    pub seq: u64,
    pub event_id: String,
    pub logical_id: String,
    pub physical_id: Option<String>,
    pub resource_type: String,
    pub timestamp: i64,
    pub status: String,
    pub reason: Option<String>,
    pub properties: Option<String>,
    pub token: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct ChangeSetRecord {
    pub change_set_id: String,
    pub change_set_name: String,
    pub stack_id: String,
    pub stack_name: String,
    pub region: String,
    pub description: Option<String>,
    pub created: i64,
    pub execution_status: String,
    pub status: String,
    pub status_reason: Option<String>,
    /// `CREATE` or `UPDATE`.
    pub change_set_type: String,
    pub template_body: String,
    /// The template as submitted, when transforms (AWS::Include, macros) processed it into
    /// `template_body` (GetTemplate's Original stage; `template_body` is the Processed one).
    #[serde(default)]
    pub original_body: Option<String>,
    pub parameters: Vec<StoredParam>,
    pub given_parameters: Vec<(String, String)>,
    pub tags: Option<Vec<(String, String)>>,
    pub capabilities: Vec<String>,
    pub notification_arns: Vec<String>,
    pub include_nested_stacks: bool,
    pub on_stack_failure: Option<String>,
    pub changes: Vec<crate::api::ResourceChange>,
    /// RoleARN given to CreateChangeSet: the stack's role once executed.
    #[serde(default)]
    pub role_arn: Option<String>,
    /// A nested change set's parent and root (IncludeNestedStacks); None on a root.
    #[serde(default)]
    pub parent_change_set_id: Option<String>,
    #[serde(default)]
    pub root_change_set_id: Option<String>,
    /// A nested change set's `AWS::CloudFormation::Stack` resource in the parent's template.
    #[serde(default)]
    pub logical_resource_id: Option<String>,
    /// The nested stack was made in REVIEW_IN_PROGRESS for this change set: deleting the
    /// change set deletes it, executing the root creates into it.
    #[serde(default)]
    pub made_stack: bool,
}

#[derive(Default)]
pub(crate) struct State {
    /// Every stack by ARN, deleted ones included.
    pub stacks: HashMap<String, StackRecord>,
    /// (region, name) → ARN of the stack holding the name (anything not DELETE_COMPLETE).
    pub names: HashMap<(String, String), String>,
    pub change_sets: IndexMap<String, ChangeSetRecord>,
    pub next_seq: u64,
}

/// Per running operation: its abort signal (CancelUpdateStack, a timeout) and a channel that
/// turns true when it finished.
#[derive(Clone)]
pub(crate) struct Running {
    pub abort: Arc<watch::Sender<bool>>,
    pub done: watch::Receiver<bool>,
}

pub(crate) struct Inner {
    pub store: Arc<Store>,
    pub registry: ProviderRegistry,
    pub world: Arc<dyn World>,
    pub config: EngineConfig,
    pub state: Mutex<State>,
    pub running: Mutex<HashMap<String, Running>>,
    /// Per stack, the forms of its NoEcho parameter values ([`crate::seal`]), noted whenever
    /// its row is written (the only way its parameters change), for the resource and event rows
    /// written by id alone. A lock of its own, never held with `state`.
    pub needles: Mutex<HashMap<String, Arc<[String]>>>,
    /// Drift detections ([`crate::ops::drift_api`]); a lock of its own, taken after `state`.
    pub drift: Mutex<crate::ops::drift_api::Detections>,
    /// Resources waiting for signals ([`crate::ops::signal`]); a lock of its own, taken
    /// before `state`.
    pub signals: crate::ops::signal::Waiters,
}

/// Why an interrupted operation failed (documented: the engine cannot resume a provider call it
/// lost, so it stops in the failed state AWS would recover from).
pub(crate) const RESTART_REASON: &str =
    "cumulo: the server restarted while this operation was in progress";

impl Inner {
    pub fn open(
        store: Arc<Store>,
        registry: ProviderRegistry,
        world: Arc<dyn World>,
        config: EngineConfig,
    ) -> Result<Engine, EngineError> {
        store.migrate("cfn", MIGRATIONS)?;
        let mut state = load(&store)?;
        recover(&store, &mut state)?;
        let needles = state
            .stacks
            .values()
            .map(|s| (s.stack_id.clone(), stack_needles(s)))
            .collect();
        let drift = crate::ops::drift_api::Detections::load(&store)?;
        let mut registry = registry;
        let inner = Arc::new_cyclic(|weak| {
            crate::builtin::register(&mut registry, weak.clone());
            Inner {
                store,
                registry,
                world,
                config,
                state: Mutex::new(state),
                running: Mutex::new(HashMap::new()),
                needles: Mutex::new(needles),
                drift: Mutex::new(drift),
                signals: Default::default(),
            }
        });
        Ok(Engine { inner })
    }

    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The needles noted for a stack (see [`Inner::needles`]).
    pub(crate) fn needles_of(&self, stack_id: &str) -> Arc<[String]> {
        let map = self.needles.lock().unwrap_or_else(|p| p.into_inner());
        map.get(stack_id).cloned().unwrap_or_else(|| Arc::from([]))
    }

    /// Notes the stack's needles, for what is written by id later, and returns them.
    fn note_needles(&self, stack: &StackRecord) -> Arc<[String]> {
        let needles = stack_needles(stack);
        let mut map = self.needles.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(stack.stack_id.clone(), needles.clone());
        needles
    }

    /// The stored body of a resource or event row of `stack_id`.
    pub(crate) fn row_body<T: Serialize>(
        &self,
        stack_id: &str,
        needles: &[String],
        row: &T,
    ) -> String {
        crate::seal::seal(self.store.master_key(), stack_id, needles, to_json(row))
    }

    /// The stored body of a stack row (already masked): sealed when it holds a NoEcho
    /// parameter value.
    fn stack_body(&self, stack: &StackRecord) -> String {
        stack_body(self.store.master_key(), stack)
    }

    /// Writes a stack's own row (not its resources, events or previous generation).
    pub fn save_stack(&self, stack: &StackRecord) -> Result<(), EngineError> {
        self.note_needles(stack);
        let masked = crate::mask::stack(stack);
        let body = self.stack_body(masked.as_ref().unwrap_or(stack));
        self.store.write(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO cfn_stacks(stack_id, body) VALUES (?1, ?2)",
                params![stack.stack_id, body],
            )
        })?;
        Ok(())
    }

    /// Writes a stack row with all its resources (start and end of operations).
    pub fn save_stack_full(&self, stack: &StackRecord) -> Result<(), EngineError> {
        let needles = self.note_needles(stack);
        let masked = crate::mask::stack(stack);
        let stack = masked.as_ref().unwrap_or(stack);
        let body = self.stack_body(stack);
        let id = stack.stack_id.as_str();
        let resources: Vec<String> = stack
            .resources
            .values()
            .map(|r| self.row_body(id, &needles, r))
            .collect();
        let events = |e: &EventRecord| self.row_body(id, &needles, e);
        let previous = previous_body(self.store.master_key(), stack, &needles);
        self.store.write(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO cfn_stacks(stack_id, body) VALUES (?1, ?2)",
                params![stack.stack_id, body],
            )?;
            write_previous(tx, id, previous.as_deref())?;
            tx.execute(
                "DELETE FROM cfn_resources WHERE stack_id = ?1",
                params![stack.stack_id],
            )?;
            let mut put = tx.prepare_cached(
                "INSERT INTO cfn_resources(stack_id, logical_id, body) VALUES (?1, ?2, ?3)",
            )?;
            for (r, body) in stack.resources.values().zip(&resources) {
                put.execute(params![stack.stack_id, r.logical_id, body])?;
            }
            write_new_events(tx, stack, &events)
        })?;
        Ok(())
    }

    /// Writes a stack row, the named resources and the events not yet written: what starting
    /// or finishing an operation changed, when it changed only those resources. Rewriting all
    /// of them ([`Inner::save_stack_full`]) cost ~15 ms per 500 resources, twice per update.
    ///
    /// With [`GenerationRows::Take`] (an update taking the stack's previous generation), the
    /// generation's records are copied from the stack's stored records, which are exactly
    /// what it holds then: the caller saves before any record of the operation changes.
    pub fn save_stack_with(
        &self,
        stack: &StackRecord,
        changed: &[String],
        generation: GenerationRows,
    ) -> Result<(), EngineError> {
        let sealing = self.note_needles(stack);
        let id = stack.stack_id.as_str();
        let needles = crate::mask::needles(stack, None);
        // Masking copies the record: only for the rare stack holding a sensitive value.
        let masked = if needles.is_empty() {
            None
        } else {
            crate::mask::stack(stack)
        };
        let body = self.stack_body(masked.as_ref().unwrap_or(stack));
        let previous = previous_body(
            self.store.master_key(),
            masked.as_ref().unwrap_or(stack),
            &sealing,
        );
        let resources: Vec<(&str, String)> = changed
            .iter()
            .filter_map(|l| stack.resources.get(l))
            .map(|r| {
                let stored = crate::mask::record(r, &needles);
                let body = self.row_body(id, &sealing, stored.as_ref().unwrap_or(r));
                (r.logical_id.as_str(), body)
            })
            .collect();
        let events = |e: &EventRecord| self.row_body(id, &sealing, e);
        self.store.write(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO cfn_stacks(stack_id, body) VALUES (?1, ?2)",
                params![stack.stack_id, body],
            )?;
            write_previous(tx, id, previous.as_deref())?;
            if generation == GenerationRows::Take && previous.is_some() {
                take_generation_rows(tx, id)?;
            }
            let mut put = tx.prepare_cached(
                "INSERT INTO cfn_resources(stack_id, logical_id, body) VALUES (?1, ?2, ?3) ON CONFLICT(stack_id, logical_id) DO UPDATE SET body = excluded.body",
            )?;
            for (logical, body) in &resources {
                put.execute(params![stack.stack_id, logical, body])?;
            }
            write_new_events(tx, stack, &events)
        })?;
        Ok(())
    }

    /// Writes one resource and one event together: a resource transition.
    pub fn save_transition(
        &self,
        stack_id: &str,
        resource: Option<&ResourceRecord>,
        removed: Option<&str>,
        event: Option<&EventRecord>,
    ) -> Result<(), EngineError> {
        let needles = self.needles_of(stack_id);
        let resource = resource.map(|r| (r, self.row_body(stack_id, &needles, r)));
        let event = event.map(|e| (e, self.row_body(stack_id, &needles, e)));
        self.store.write(|tx| {
            if let Some((r, body)) = &resource {
                tx.execute(
                    "INSERT INTO cfn_resources(stack_id, logical_id, body) VALUES (?1, ?2, ?3) ON CONFLICT(stack_id, logical_id) DO UPDATE SET body = excluded.body",
                    params![stack_id, r.logical_id, body],
                )?;
            }
            if let Some(logical) = removed {
                tx.execute(
                    "DELETE FROM cfn_resources WHERE stack_id = ?1 AND logical_id = ?2",
                    params![stack_id, logical],
                )?;
            }
            if let Some((e, body)) = &event {
                tx.execute(
                    "INSERT OR IGNORE INTO cfn_events(stack_id, seq, body) VALUES (?1, ?2, ?3)",
                    params![stack_id, e.seq as i64, body],
                )?;
            }
            Ok(())
        })?;
        Ok(())
    }

    /// [`Inner::save_transition`] through the store's group commit: concurrent transitions of
    /// an operation (and of every other running operation) share one commit. Resolves once
    /// durable. Serializes here, so the caller's records are not held across the wait.
    pub fn save_transition_grouped(
        &self,
        stack_id: &str,
        resource: Option<&ResourceRecord>,
        removed: Option<&str>,
        event: Option<&EventRecord>,
    ) -> impl Future<Output = Result<(), EngineError>> + Send + use<> {
        let needles = self.needles_of(stack_id);
        let resource =
            resource.map(|r| (r.logical_id.clone(), self.row_body(stack_id, &needles, r)));
        let event = event.map(|e| (e.seq as i64, self.row_body(stack_id, &needles, e)));
        let stack_id = stack_id.to_string();
        let removed = removed.map(str::to_string);
        let written = self.store.write_grouped(move |tx| {
            if let Some((logical, body)) = &resource {
                tx.prepare_cached(
                    "INSERT INTO cfn_resources(stack_id, logical_id, body) VALUES (?1, ?2, ?3) ON CONFLICT(stack_id, logical_id) DO UPDATE SET body = excluded.body",
                )?
                .execute(params![stack_id, logical, body])?;
            }
            if let Some(logical) = &removed {
                tx.prepare_cached(
                    "DELETE FROM cfn_resources WHERE stack_id = ?1 AND logical_id = ?2",
                )?
                .execute(params![stack_id, logical])?;
            }
            if let Some((seq, body)) = &event {
                tx.prepare_cached(
                    "INSERT OR IGNORE INTO cfn_events(stack_id, seq, body) VALUES (?1, ?2, ?3)",
                )?
                .execute(params![stack_id, seq, body])?;
            }
            Ok(())
        });
        async move { Ok(written.await?) }
    }

    pub fn save_change_set(&self, cs: &ChangeSetRecord) -> Result<(), EngineError> {
        let body = change_set_body(self.store.master_key(), cs);
        self.store.write(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO cfn_change_sets(change_set_id, body) VALUES (?1, ?2)",
                params![cs.change_set_id, body],
            )
        })?;
        Ok(())
    }

    pub fn remove_change_set(&self, id: &str) -> Result<(), EngineError> {
        self.store.write(|tx| {
            tx.execute(
                "DELETE FROM cfn_change_sets WHERE change_set_id = ?1",
                params![id],
            )
        })?;
        Ok(())
    }
}

/// Writes the stack's events the store does not have yet (an operation's first event, written
/// with the stack row that starts it); events are appended in sequence order.
fn write_new_events(
    tx: &rusqlite::Transaction<'_>,
    stack: &StackRecord,
    body: &dyn Fn(&EventRecord) -> String,
) -> rusqlite::Result<()> {
    let known: i64 = tx
        .prepare_cached("SELECT coalesce(max(seq), -1) FROM cfn_events WHERE stack_id = ?1")?
        .query_row(params![stack.stack_id], |r| r.get(0))?;
    let mut event = tx.prepare_cached(
        "INSERT OR IGNORE INTO cfn_events(stack_id, seq, body) VALUES (?1, ?2, ?3)",
    )?;
    for e in stack
        .events
        .iter()
        .rev()
        .take_while(|e| e.seq as i64 > known)
    {
        event.execute(params![stack.stack_id, e.seq as i64, body(e)])?;
    }
    Ok(())
}

fn to_json<T: Serialize>(v: &T) -> String {
    // Records are plain data (strings, numbers, JSON values): serialization cannot fail.
    serde_json::to_string(v).unwrap_or_default()
}

/// The forms of a stack's NoEcho parameter values, the previous generation's included (a
/// rollback restores them).
fn stack_needles(stack: &StackRecord) -> Arc<[String]> {
    let previous = stack.previous.iter().flat_map(|g| &g.parameters);
    crate::seal::needles(stack.parameters.iter().chain(previous)).into()
}

/// The stored body of a stack row (its previous generation is not in it): sealed whole when
/// it holds a NoEcho parameter value.
fn stack_body(key: &MasterKey, stack: &StackRecord) -> String {
    let holds = crate::seal::holds_any(&stack.parameters);
    crate::seal::seal_if(holds, key, &stack.stack_id, to_json(stack))
}

/// The stored body of a stack's previous generation: masked like the stack's records, and
/// sealed when it holds a NoEcho parameter value. `None` when the stack has none.
fn previous_body(key: &MasterKey, stack: &StackRecord, needles: &[String]) -> Option<String> {
    let g = stack.previous.as_ref()?;
    let body = to_json(g);
    Some(if crate::seal::holds_any(&g.parameters) {
        crate::seal::seal_always(key, &stack.stack_id, body)
    } else {
        crate::seal::seal(key, &stack.stack_id, needles, body)
    })
}

/// Whether a stack write also takes the previous generation's records (see
/// [`Inner::save_stack_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GenerationRows {
    /// The generation's records stay as stored (or go with it when it is cleared).
    Keep,
    /// An update starts a new generation: its records are the stack's stored records.
    Take,
}

/// Writes a stack's previous generation row (its records are written once, by
/// [`take_generation_rows`]), or clears the generation with its records.
fn write_previous(
    tx: &rusqlite::Transaction<'_>,
    stack_id: &str,
    body: Option<&str>,
) -> rusqlite::Result<()> {
    match body {
        Some(body) => {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO cfn_previous(stack_id, body) VALUES (?1, ?2)",
            )?
            .execute(params![stack_id, body])?;
        }
        None => {
            tx.prepare_cached("DELETE FROM cfn_previous WHERE stack_id = ?1")?
                .execute(params![stack_id])?;
            tx.prepare_cached("DELETE FROM cfn_previous_resources WHERE stack_id = ?1")?
                .execute(params![stack_id])?;
        }
    };
    Ok(())
}

/// Copies the stack's stored records as its previous generation's, in their order: the rows
/// are what the generation would serialize to (masked and sealed the same way).
fn take_generation_rows(tx: &rusqlite::Transaction<'_>, stack_id: &str) -> rusqlite::Result<()> {
    tx.prepare_cached("DELETE FROM cfn_previous_resources WHERE stack_id = ?1")?
        .execute(params![stack_id])?;
    tx.prepare_cached(
        "INSERT INTO cfn_previous_resources(stack_id, logical_id, body)
         SELECT stack_id, logical_id, body FROM cfn_resources WHERE stack_id = ?1 ORDER BY rowid",
    )?
    .execute(params![stack_id])?;
    Ok(())
}

/// The stored body of a change set row: sealed whole when it holds a NoEcho parameter value
/// (its given parameters are the same values).
fn change_set_body(key: &MasterKey, cs: &ChangeSetRecord) -> String {
    let holds = crate::seal::holds_any(&cs.parameters);
    crate::seal::seal_if(holds, key, &cs.change_set_id, to_json(cs))
}

fn load(store: &Store) -> Result<State, EngineError> {
    // Each row as (its label, its plain body); a sealed row that does not open (another data
    // directory's master key) is skipped with a warning, as an unreadable row is.
    let rows = |sql: &str| -> Result<Vec<(String, String)>, EngineError> {
        let rows = store.read(|c| {
            let mut st = c.prepare(sql)?;
            let it = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            it.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        Ok(rows
            .into_iter()
            .filter_map(|(label, body)| {
                match crate::seal::open(store.master_key(), &label, body) {
                    Some(body) => Some((label, body)),
                    None => {
                        eprintln!(
                            "cumulo: cloudformation: skipped a sealed row of {label} that does not open with this data directory's {}",
                            cumulo_store::master::MASTER_KEY_FILE
                        );
                        None
                    }
                }
            })
            .collect())
    };
    let mut state = State::default();
    for (_, body) in rows("SELECT stack_id, body FROM cfn_stacks")? {
        let Ok(stack) = serde_json::from_str::<StackRecord>(&body) else {
            continue;
        };
        if stack.status != StackStatus::DELETE_COMPLETE {
            state.names.insert(
                (stack.region.clone(), stack.stack_name.clone()),
                stack.stack_id.clone(),
            );
        }
        state.stacks.insert(stack.stack_id.clone(), stack);
    }
    for (stack_id, body) in rows("SELECT stack_id, body FROM cfn_previous")? {
        if let (Some(stack), Ok(g)) = (
            state.stacks.get_mut(&stack_id),
            serde_json::from_str::<Generation>(&body),
        ) {
            stack.previous = Some(g);
        }
    }
    for (stack_id, body) in
        rows("SELECT stack_id, body FROM cfn_previous_resources ORDER BY rowid")?
    {
        if let (Some(g), Ok(r)) = (
            state
                .stacks
                .get_mut(&stack_id)
                .and_then(|s| s.previous.as_mut()),
            serde_json::from_str::<ResourceRecord>(&body),
        ) {
            g.resources.insert(r.logical_id.clone(), r);
        }
    }
    for (stack_id, body) in rows("SELECT stack_id, body FROM cfn_resources ORDER BY rowid")? {
        if let (Some(stack), Ok(r)) = (
            state.stacks.get_mut(&stack_id),
            serde_json::from_str::<ResourceRecord>(&body),
        ) {
            stack.resources.insert(r.logical_id.clone(), r);
        }
    }
    for (stack_id, body) in rows("SELECT stack_id, body FROM cfn_events ORDER BY seq")? {
        if let (Some(stack), Ok(e)) = (
            state.stacks.get_mut(&stack_id),
            serde_json::from_str::<EventRecord>(&body),
        ) {
            state.next_seq = state.next_seq.max(e.seq + 1);
            stack.events.push(e);
        }
    }
    for (_, body) in rows("SELECT change_set_id, body FROM cfn_change_sets ORDER BY rowid")? {
        if let Ok(cs) = serde_json::from_str::<ChangeSetRecord>(&body) {
            state.change_sets.insert(cs.change_set_id.clone(), cs);
        }
    }
    Ok(state)
}

/// Finishes, as failed, every operation the previous process did not finish. Each lands in the
/// state AWS lets a user recover from: CREATE_FAILED (delete, RollbackStack, or an update with
/// DisableRollback), UPDATE_FAILED (RollbackStack), UPDATE_ROLLBACK_FAILED
/// (ContinueUpdateRollback), ROLLBACK_FAILED and DELETE_FAILED (DeleteStack again). A cleanup
/// phase after a successful update is recorded as complete: the update itself succeeded.
fn recover(store: &Store, state: &mut State) -> Result<(), EngineError> {
    use StackStatus::*;
    let mut changed = Vec::new();
    let mut seq = state.next_seq;
    for stack in state.stacks.values_mut() {
        let to = match stack.status {
            CREATE_IN_PROGRESS => CREATE_FAILED,
            UPDATE_IN_PROGRESS => UPDATE_FAILED,
            UPDATE_COMPLETE_CLEANUP_IN_PROGRESS => UPDATE_COMPLETE,
            UPDATE_ROLLBACK_IN_PROGRESS | UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS => {
                UPDATE_ROLLBACK_FAILED
            }
            ROLLBACK_IN_PROGRESS => ROLLBACK_FAILED,
            DELETE_IN_PROGRESS => DELETE_FAILED,
            _ => continue,
        };
        for r in stack.resources.values_mut() {
            if r.status.ends_with("_IN_PROGRESS") {
                r.status = r.status.replace("_IN_PROGRESS", "_FAILED");
                r.status_reason = Some(RESTART_REASON.to_string());
            }
        }
        if to == UPDATE_COMPLETE {
            stack.previous = None;
            for r in stack.resources.values_mut() {
                r.replaced = None;
            }
        }
        stack.status = to;
        stack.status_reason = (to != UPDATE_COMPLETE).then(|| RESTART_REASON.to_string());
        stack.events.push(EventRecord {
            seq,
            event_id: uuid::Uuid::new_v4().to_string(),
            logical_id: stack.stack_name.clone(),
            physical_id: Some(stack.stack_id.clone()),
            resource_type: "AWS::CloudFormation::Stack".into(),
            timestamp: now_ms(),
            status: to.as_str().into(),
            reason: stack.status_reason.clone(),
            properties: None,
            token: stack.op.token.clone(),
        });
        seq += 1;
        changed.push(stack.stack_id.clone());
    }
    state.next_seq = seq;
    for cs in state.change_sets.values_mut() {
        if cs.execution_status == "EXECUTE_IN_PROGRESS" {
            cs.execution_status = "EXECUTE_FAILED".into();
        }
    }
    let key = store.master_key();
    let css: Vec<(String, String)> = state
        .change_sets
        .values()
        .map(|cs| (cs.change_set_id.clone(), change_set_body(key, cs)))
        .collect();
    store.write(|tx| {
        for id in &changed {
            let Some(stack) = state.stacks.get(id) else {
                continue;
            };
            let needles = stack_needles(stack);
            tx.execute(
                "INSERT OR REPLACE INTO cfn_stacks(stack_id, body) VALUES (?1, ?2)",
                params![id, stack_body(key, stack)],
            )?;
            if stack.previous.is_none() {
                // A finished cleanup phase let it go.
                write_previous(tx, id, None)?;
            }
            for r in stack.resources.values() {
                tx.execute(
                    "INSERT INTO cfn_resources(stack_id, logical_id, body) VALUES (?1, ?2, ?3) ON CONFLICT(stack_id, logical_id) DO UPDATE SET body = excluded.body",
                    params![id, r.logical_id, crate::seal::seal(key, id, &needles, to_json(r))],
                )?;
            }
            if let Some(e) = stack.events.last() {
                tx.execute(
                    "INSERT OR IGNORE INTO cfn_events(stack_id, seq, body) VALUES (?1, ?2, ?3)",
                    params![id, e.seq as i64, crate::seal::seal(key, id, &needles, to_json(e))],
                )?;
            }
        }
        for (id, body) in &css {
            tx.execute(
                "INSERT OR REPLACE INTO cfn_change_sets(change_set_id, body) VALUES (?1, ?2)",
                params![id, body],
            )?;
        }
        Ok(())
    })?;
    Ok(())
}
