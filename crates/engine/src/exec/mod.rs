//! Running stack operations: provisioning as a DAG with bounded parallelism, teardown in
//! reverse dependency order, and the rollback paths. Every transition is written to the store
//! before the next step starts.

use crate::error::EngineError;
use crate::provider::ProviderContext;
use crate::resolve::{LiveResolver, hash_properties};
use crate::state::{EventRecord, Inner, ResourceRecord, Running, StackRecord, now_ms};
use crate::status::StackStatus;
use cumulo_template::Prepared;
use serde_json::Map;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

mod dag;
mod flows;
mod outputs;
mod resource;

pub(crate) use dag::run_dag;
pub(crate) use flows::{
    delete_resources, rollback_create, rollback_update, run_create, run_update,
};

/// One running stack operation.
pub(crate) struct Op {
    pub inner: Arc<Inner>,
    pub stack_id: String,
    pub stack_name: String,
    pub region: String,
    pub account_id: String,
    pub token: String,
    /// The caller's host (see [`crate::api::Caller::host`]).
    pub host: String,
    pub prepared: Option<Arc<Prepared>>,
    /// Turns true when the operation is to stop (CancelUpdateStack, a stack timeout).
    pub abort: watch::Receiver<bool>,
    pub disable_rollback: bool,
    pub delete_on_failure: bool,
    pub retain_except_on_create: bool,
    /// The first write of this operation that failed, as the reason it shows (see
    /// [`Op::persist`]).
    pub lost: Mutex<Option<String>>,
}

/// The reason a stack or resource shows when its state could not be written.
pub(crate) const PERSIST_FAILED: &str = "cumulo: could not persist stack state";

/// A resource status for the same action, failed (`CREATE_COMPLETE` → `CREATE_FAILED`).
fn failed_resource_status(status: &str) -> String {
    let action = ["_IN_PROGRESS", "_COMPLETE", "_SKIPPED", "_FAILED"]
        .iter()
        .find_map(|s| status.strip_suffix(s))
        .unwrap_or(status);
    format!("{action}_FAILED")
}

/// Starts `work` in the background, registered as the stack's running operation.
pub(crate) fn spawn<F>(
    inner: &Arc<Inner>,
    stack_id: &str,
    abort: Arc<watch::Sender<bool>>,
    work: F,
) -> Running
where
    F: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = watch::channel(false);
    let running = Running { abort, done: rx };
    inner
        .running
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(stack_id.to_string(), running.clone());
    let inner = inner.clone();
    let id = stack_id.to_string();
    let mine = running.abort.clone();
    tokio::spawn(async move {
        work.await;
        let mut map = inner.running.lock().unwrap_or_else(|p| p.into_inner());
        // The next operation on the stack may already have registered itself: leave it.
        if map.get(&id).is_some_and(|r| Arc::ptr_eq(&r.abort, &mine)) {
            map.remove(&id);
        }
        drop(map);
        let _ = tx.send(true);
    });
    running
}

/// Waits for a running operation to finish, at most `budget`.
pub(crate) async fn wait(running: &Running, budget: std::time::Duration) {
    let mut rx = running.done.clone();
    let _ = tokio::time::timeout(budget, rx.wait_for(|d| *d)).await;
}

/// Waits for the operation to finish, however long it takes (nested stacks).
pub(crate) async fn wait_done(running: &Running) {
    let mut rx = running.done.clone();
    let _ = rx.wait_for(|d| *d).await;
}

/// What a teardown does with the stack's record of a deleted resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Record {
    /// Keep it, with its final status (DeleteStack, create rollback).
    Keep,
    /// Drop it once deleted or retained (update cleanup, update-rollback cleanup).
    Remove,
    /// It is not in the stack's map (a replaced physical resource): events only.
    Detached,
}

/// One resource to tear down.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub record: ResourceRecord,
    pub retain: bool,
    pub mode: Record,
}

pub(crate) fn is_retain(policy: Option<&str>) -> bool {
    matches!(policy, Some("Retain" | "Snapshot" | "RetainExceptOnCreate"))
}

impl Op {
    fn ctx(&self, logical_id: &str, resource_type: &str) -> ProviderContext {
        let tags = self
            .inner
            .lock()
            .stacks
            .get(&self.stack_id)
            .map(|s| s.tags.clone())
            .unwrap_or_default();
        ProviderContext {
            region: self.region.clone(),
            account_id: self.account_id.clone(),
            stack_name: self.stack_name.clone(),
            stack_id: self.stack_id.clone(),
            logical_id: logical_id.to_string(),
            resource_type: resource_type.to_string(),
            client_request_token: self.token.clone(),
            stack_tags: tags,
            host: self.host.clone(),
        }
    }

    /// Every write of a background flow goes through here. Nothing acknowledged may be lost
    /// silently, and no one is waiting on a response to report a failed write to: it is
    /// logged, and it fails the operation. The first failure is remembered, and from then on
    /// every final status [`Op::set_status`] writes is the failed one with its reason, so the
    /// stack never shows success for an operation whose record is not on disk. Returns the
    /// reason when the write failed.
    pub(crate) fn persist(&self, result: Result<(), EngineError>) -> Option<String> {
        let e = result.err()?;
        let reason = format!("{PERSIST_FAILED}: {}", e.message);
        eprintln!(
            "cumulo: stack {} (operation {}): {reason}",
            self.stack_id, self.token
        );
        self.lost
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert_with(|| reason.clone());
        Some(reason)
    }

    /// The first write of this operation that failed, as a reason.
    fn lost(&self) -> Option<String> {
        self.lost.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// What a final status becomes once a write of the operation failed: its failed variant,
    /// with the write failure as (or added to) the reason. Intermediate statuses stand: the
    /// flow goes on (a rollback still cleans up) and fails at its end.
    fn unless_lost(
        &self,
        status: StackStatus,
        reason: Option<String>,
    ) -> (StackStatus, Option<String>) {
        let Some(lost) = self.lost() else {
            return (status, reason);
        };
        if status.in_progress() {
            return (status, reason);
        }
        let failed = status.failed();
        let reason = match reason {
            Some(r) if failed == status => format!("{r} {lost}"),
            _ => lost,
        };
        (failed, Some(reason))
    }

    /// Sets the stack's status and reason, with its stack event.
    pub fn set_status(&self, status: StackStatus, reason: Option<String>) {
        let already_lost = self.lost().is_some();
        let (status, reason) = self.unless_lost(status, reason);
        let mut st = self.inner.lock();
        let seq = st.next_seq;
        st.next_seq += 1;
        let Some(stack) = st.stacks.get_mut(&self.stack_id) else {
            return;
        };
        stack.status = status;
        stack.status_reason = reason.clone();
        let ev = stack_event(stack, seq, &self.token, reason.clone());
        let failed = self.persist(self.inner.save_stack(stack)).or_else(|| {
            self.persist(
                self.inner
                    .save_transition(&self.stack_id, None, None, Some(&ev)),
            )
        });
        stack.events.push(ev);
        if failed.is_some() && !already_lost {
            // This very write failed: what the stack shows is the failed state.
            let (status, reason) = self.unless_lost(status, reason);
            stack.status = status;
            stack.status_reason = reason.clone();
            if let Some(ev) = stack.events.last_mut() {
                ev.status = status.as_str().into();
                ev.reason = reason;
            }
        }
    }

    /// Stores a resource record and writes an event with its status and reason. When the
    /// write fails the record stands as failed (`CREATE_FAILED`, ...) with the write failure
    /// as its reason, and `false` is returned: the caller must not go on as if it were stored.
    fn put(&self, mut rec: ResourceRecord, properties: Option<String>) -> bool {
        let mut st = self.inner.lock();
        let seq = st.next_seq;
        st.next_seq += 1;
        let Some(stack) = st.stacks.get_mut(&self.stack_id) else {
            return true;
        };
        // What is written down carries the mask for NoEcho values; memory keeps them clear.
        let needles = crate::mask::needles(stack, Some(&rec));
        let stored = crate::mask::record(&rec, &needles);
        let properties = properties.map(|p| crate::mask::text(&p, &needles));
        let mut ev = resource_event(seq, &self.token, &rec, properties.clone());
        ev.reason = ev.reason.map(|r| crate::mask::text(&r, &needles));
        let failed = self.persist(self.inner.save_transition(
            &self.stack_id,
            Some(stored.as_ref().unwrap_or(&rec)),
            None,
            Some(&ev),
        ));
        if let Some(reason) = &failed {
            rec.status = failed_resource_status(&rec.status);
            rec.status_reason = Some(reason.clone());
            ev = resource_event(seq, &self.token, &rec, properties);
        }
        stack.events.push(ev);
        stack.resources.insert(rec.logical_id.clone(), rec);
        failed.is_none()
    }

    /// Writes an event for a resource without storing the record (detached teardown).
    /// Returns whether it was written.
    fn event_only(&self, rec: &ResourceRecord) -> bool {
        let mut st = self.inner.lock();
        let seq = st.next_seq;
        st.next_seq += 1;
        let Some(stack) = st.stacks.get_mut(&self.stack_id) else {
            return true;
        };
        let mut ev = resource_event(seq, &self.token, rec, None);
        let failed =
            self.persist(
                self.inner
                    .save_transition(&self.stack_id, None, None, Some(&ev)),
            );
        if let Some(reason) = &failed {
            ev.status = failed_resource_status(&ev.status);
            ev.reason = Some(reason.clone());
        }
        stack.events.push(ev);
        failed.is_none()
    }

    /// Records a physical resource the running operation must delete when it ends.
    fn add_orphan(&self, rec: ResourceRecord) {
        let mut st = self.inner.lock();
        if let Some(stack) = st.stacks.get_mut(&self.stack_id) {
            stack.orphans.push(rec);
            self.persist(self.inner.save_stack(stack));
        }
    }

    /// Records resources whose provider call an abort cut short, as AWS reports them.
    fn mark_cancelled(&self, logical_ids: &[String]) {
        for logical in logical_ids {
            let Some(mut rec) = self.record(logical) else {
                continue;
            };
            let (status, reason) = if rec.status.starts_with("CREATE") {
                ("CREATE_FAILED", "Resource creation cancelled")
            } else {
                ("UPDATE_FAILED", "Resource update cancelled")
            };
            rec.status = status.into();
            rec.status_reason = Some(reason.into());
            rec.updated = now_ms();
            self.put(rec, None);
        }
    }

    fn remove(&self, logical_id: &str) {
        let mut st = self.inner.lock();
        if let Some(stack) = st.stacks.get_mut(&self.stack_id) {
            stack.resources.shift_remove(logical_id);
        }
        self.persist(
            self.inner
                .save_transition(&self.stack_id, None, Some(logical_id), None),
        );
    }

    fn record(&self, logical_id: &str) -> Option<ResourceRecord> {
        self.inner
            .lock()
            .stacks
            .get(&self.stack_id)
            .and_then(|s| s.resources.get(logical_id).cloned())
    }

    /// Resolves a resource's intrinsics against the stack as it stands.
    fn resolve(&self, logical_id: &str) -> Result<cumulo_template::ResolvedResource, String> {
        let Some(prepared) = &self.prepared else {
            return Err("cumulo: no template to resolve".into());
        };
        let mut st = self.inner.lock();
        let (resolved, imported) = {
            let Some(stack) = st.stacks.get(&self.stack_id) else {
                return Err("stack vanished".into());
            };
            let resolver = LiveResolver::new(&st, stack);
            let r = prepared.resolve_resource(logical_id, &resolver);
            (r, resolver.imported.into_inner())
        };
        if let Some(stack) = st.stacks.get_mut(&self.stack_id) {
            for name in imported {
                if !stack.imports.contains(&name) {
                    stack.imports.push(name);
                }
            }
        }
        resolved.map_err(|d| d.message)
    }

    fn new_record(&self, r: &cumulo_template::ResolvedResource, status: &str) -> ResourceRecord {
        ResourceRecord {
            logical_id: r.logical_id.clone(),
            resource_type: r.resource_type.clone(),
            physical_id: None,
            status: status.to_string(),
            status_reason: None,
            hash: hash_properties(&r.properties),
            properties: r.properties.clone(),
            attributes: Map::new(),
            updated: now_ms(),
            deletion_policy: r.deletion_policy.clone(),
            update_replace_policy: r.update_replace_policy.clone(),
            metadata: r.metadata.clone(),
            depends_on: r.depends_on.clone(),
            stub: false,
            replaced: None,
            created_by_op: true,
            observed: None,
            secret_attributes: Vec::new(),
        }
    }

    pub fn cancelled(&self) -> bool {
        *self.abort.borrow()
    }

    pub fn stack(&self) -> Option<StackRecord> {
        self.inner.lock().stacks.get(&self.stack_id).cloned()
    }

    /// Dependencies of the template's live resources.
    fn template_deps(&self) -> (Vec<String>, HashMap<String, Vec<String>>) {
        let Some(p) = &self.prepared else {
            return (Vec::new(), HashMap::new());
        };
        let deps = p
            .graph
            .deps
            .iter()
            .map(|(k, v)| (k.clone(), v.iter().cloned().collect()))
            .collect();
        (p.order.clone(), deps)
    }
}

fn stack_event(stack: &StackRecord, seq: u64, token: &str, reason: Option<String>) -> EventRecord {
    EventRecord {
        seq,
        event_id: uuid::Uuid::new_v4().to_string(),
        logical_id: stack.stack_name.clone(),
        physical_id: Some(stack.stack_id.clone()),
        resource_type: "AWS::CloudFormation::Stack".into(),
        timestamp: now_ms(),
        status: stack.status.as_str().into(),
        reason,
        properties: None,
        token: token.to_string(),
    }
}

/// Writes the first event of an operation on a stack that is not yet in the state.
pub(crate) fn first_event(stack: &mut StackRecord, seq: u64, token: &str, reason: Option<String>) {
    let ev = stack_event(stack, seq, token, reason);
    stack.events.push(ev);
}

fn resource_event(
    seq: u64,
    token: &str,
    rec: &ResourceRecord,
    properties: Option<String>,
) -> EventRecord {
    EventRecord {
        seq,
        event_id: uuid::Uuid::new_v4().to_string(),
        logical_id: rec.logical_id.clone(),
        physical_id: rec.physical_id.clone(),
        resource_type: rec.resource_type.clone(),
        timestamp: now_ms(),
        status: rec.status.clone(),
        reason: rec.status_reason.clone(),
        properties,
        token: token.to_string(),
    }
}
