//! Running stack operations: provisioning as a DAG with bounded parallelism, teardown in
//! reverse dependency order, and the rollback paths. Every transition is written to the store
//! before the next step starts.

use crate::error::EngineError;
use crate::provider::ProviderContext;
use crate::resolve::{LiveResolver, hash_properties};
use crate::state::{EventRecord, Inner, ResourceRecord, Running, StackRecord, now_ms};
use crate::status::StackStatus;
use cumulo_template::Prepared;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

mod dag;
mod flows;
mod outputs;
mod resource;
mod signals;

pub(crate) use dag::run_dag;
pub(crate) use flows::{
    delete_resources, rollback_create, rollback_update, run_create, run_update,
};
pub(crate) use signals::WAIT_CONDITION_TYPE;

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
    /// Set when a resource of the forward pass failed: what is still in flight is cancelled
    /// (AWS marks it `CREATE_FAILED`/`UPDATE_FAILED` with "Resource creation cancelled" /
    /// "Resource update cancelled") instead of completing before the rollback undoes it.
    /// A watch rather than a flag so that a resource waiting for signals wakes when it turns.
    pub halted: watch::Sender<bool>,
    /// This operation is a DeleteStack (one that may take a stack over from a create).
    pub deleting: bool,
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
            name_token: String::new(),
        }
    }

    /// [`Op::ctx`] for a create whose generated name uses the journaled `name_token`.
    fn ctx_named(
        &self,
        logical_id: &str,
        resource_type: &str,
        name_token: &str,
    ) -> ProviderContext {
        ProviderContext {
            name_token: name_token.to_string(),
            ..self.ctx(logical_id, resource_type)
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

    /// Whether a DeleteStack has taken the stack over from this operation (a create it
    /// cancelled): this operation no longer decides the stack's status.
    pub(crate) fn taken_over(&self) -> bool {
        self.inner
            .lock()
            .stacks
            .get(&self.stack_id)
            .is_some_and(|s| self.superseded(s))
    }

    fn superseded(&self, stack: &crate::state::StackRecord) -> bool {
        stack.op.kind == "DeleteStack" && !self.deleting
    }

    /// Sets the stack's status and reason, with its stack event (not once a DeleteStack has
    /// taken the stack over from this operation).
    pub fn set_status(&self, status: StackStatus, reason: Option<String>) {
        let already_lost = self.lost().is_some();
        let (status, reason) = self.unless_lost(status, reason);
        let mut st = self.inner.lock();
        if st
            .stacks
            .get(&self.stack_id)
            .is_none_or(|s| self.superseded(s))
        {
            return;
        }
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
        let arns = stack.notification_arns.clone();
        let ev = stack.events.last().cloned();
        drop(st);
        if let Some(ev) = ev {
            self.notify(&arns, &ev);
        }
    }

    /// Stores a resource record and writes an event with its status and reason, through the
    /// store's group commit; both show in the stack once committed. When the write fails the
    /// record stands as failed (`CREATE_FAILED`, ...) with the write failure as its reason, and
    /// `false` is returned: the caller must not go on as if it were stored.
    async fn put(&self, mut rec: ResourceRecord, properties: Option<String>) -> bool {
        let Some(seq) = self.next_seq() else {
            return true;
        };
        // What is written down carries the mask for NoEcho values; memory keeps them clear.
        let needles = match self.inner.lock().stacks.get(&self.stack_id) {
            Some(stack) => crate::mask::needles(stack, Some(&rec)),
            None => return true,
        };
        let stored = crate::mask::record(&rec, &needles);
        let properties = properties.map(|p| crate::mask::text(&p, &needles));
        let mut ev = resource_event(seq, &self.token, &rec, properties.clone());
        ev.reason = ev.reason.map(|r| crate::mask::text(&r, &needles));
        let written = self
            .inner
            .save_transition_grouped(
                &self.stack_id,
                Some(stored.as_ref().unwrap_or(&rec)),
                None,
                Some(&ev),
            )
            .await;
        let failed = self.persist(written);
        if let Some(reason) = &failed {
            rec.status = failed_resource_status(&rec.status);
            rec.status_reason = Some(reason.clone());
            ev = resource_event(seq, &self.token, &rec, properties);
        }
        let mut st = self.inner.lock();
        if let Some(stack) = st.stacks.get_mut(&self.stack_id) {
            let arns = stack.notification_arns.clone();
            push_event(stack, ev.clone());
            stack.holds_secrets |= !rec.secret_attributes.is_empty();
            stack.resources.insert(rec.logical_id.clone(), rec);
            drop(st);
            self.notify(&arns, &ev);
        }
        failed.is_none()
    }

    /// The next event sequence number, or `None` when the stack is gone.
    fn next_seq(&self) -> Option<u64> {
        let mut st = self.inner.lock();
        if !st.stacks.contains_key(&self.stack_id) {
            return None;
        }
        let seq = st.next_seq;
        st.next_seq += 1;
        Some(seq)
    }

    /// Writes an event for a resource without storing the record (detached teardown).
    /// Returns whether it was written.
    async fn event_only(&self, rec: &ResourceRecord) -> bool {
        let Some(seq) = self.next_seq() else {
            return true;
        };
        let mut ev = resource_event(seq, &self.token, rec, None);
        let written = self
            .inner
            .save_transition_grouped(&self.stack_id, None, None, Some(&ev))
            .await;
        let failed = self.persist(written);
        if let Some(reason) = &failed {
            ev.status = failed_resource_status(&ev.status);
            ev.reason = Some(reason.clone());
        }
        let mut st = self.inner.lock();
        if let Some(stack) = st.stacks.get_mut(&self.stack_id) {
            let arns = stack.notification_arns.clone();
            push_event(stack, ev.clone());
            drop(st);
            self.notify(&arns, &ev);
        }
        failed.is_none()
    }

    /// Sends an event to the stack's NotificationARNs through SNS, in AWS's message format.
    /// A topic that cannot take it (deleted since) is logged: the operation goes on, as in AWS.
    pub(crate) fn notify(&self, arns: &[String], ev: &EventRecord) {
        if arns.is_empty() {
            return;
        }
        let message = notification(&self.stack_id, &self.stack_name, &self.account_id, ev);
        for arn in arns {
            if let Err(e) = self.inner.world.notify(
                &self.region,
                &self.host,
                arn,
                "AWS CloudFormation Notification",
                &message,
            ) {
                eprintln!(
                    "cumulo: stack {}: notification to {arn} failed: {e}",
                    self.stack_id
                );
            }
        }
    }

    /// Notifies the stack's latest event (the operation's first, written before it started).
    pub(crate) fn notify_latest(&self) {
        let latest = {
            let st = self.inner.lock();
            st.stacks.get(&self.stack_id).and_then(|s| {
                (!s.notification_arns.is_empty())
                    .then(|| (s.notification_arns.clone(), s.events.last().cloned()))
            })
        };
        if let Some((arns, Some(ev))) = latest {
            self.notify(&arns, &ev);
        }
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
    ///
    /// The DAG returns only once every aborted task has stopped, but a task may have seen the
    /// abort first and recorded its own end (a wait condition answers the abort with
    /// "Resource creation cancelled"): only a record still in progress is marked, so no
    /// resource reports its cancellation twice.
    async fn mark_cancelled(&self, logical_ids: &[String]) {
        for logical in logical_ids {
            let Some(mut rec) = self.record(logical) else {
                continue;
            };
            if !rec.status.ends_with("_IN_PROGRESS") {
                continue;
            }
            let (status, reason) = if rec.status.starts_with("CREATE") {
                ("CREATE_FAILED", resource::CREATE_CANCELLED)
            } else {
                ("UPDATE_FAILED", resource::UPDATE_CANCELLED)
            };
            rec.status = status.into();
            rec.status_reason = Some(reason.into());
            rec.updated = now_ms();
            self.put(rec, None).await;
        }
    }

    async fn remove(&self, logical_id: &str) {
        let written = self
            .inner
            .save_transition_grouped(&self.stack_id, None, Some(logical_id), None)
            .await;
        self.persist(written);
        let mut st = self.inner.lock();
        if let Some(stack) = st.stacks.get_mut(&self.stack_id) {
            stack.resources.shift_remove(logical_id);
        }
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
            properties: Arc::new(r.properties.clone()),
            attributes: Arc::default(),
            updated: now_ms(),
            deletion_policy: r.deletion_policy.clone(),
            update_replace_policy: r.update_replace_policy.clone(),
            metadata: r.metadata.clone().map(Arc::new),
            depends_on: r.depends_on.clone(),
            stub: false,
            replaced: None,
            observed: None,
            pending: None,
            signals: Vec::new(),
            secret_attributes: Vec::new(),
        }
    }

    /// Stops the forward pass: the resources in flight finish as cancelled.
    pub(crate) fn halt(&self) {
        self.halted.send_replace(true);
    }

    pub(crate) fn halted(&self) -> bool {
        *self.halted.borrow()
    }

    /// The stack policy this update runs under: StackPolicyDuringUpdate, else the stack's.
    fn update_policy(&self) -> Option<String> {
        let st = self.inner.lock();
        let s = st.stacks.get(&self.stack_id)?;
        s.policy_during_update
            .clone()
            .or_else(|| s.stack_policy.clone())
    }

    /// Resources the new template drops whose deletion the stack policy denies
    /// (`Update:Delete`): each is marked UPDATE_FAILED with the policy's reason.
    async fn denied_removals(&self) -> Vec<String> {
        let policy = self.update_policy();
        let (Some(policy), Some(prepared)) = (policy, &self.prepared) else {
            return Vec::new();
        };
        let live: std::collections::HashSet<&String> = prepared.live.iter().collect();
        let dropped: Vec<ResourceRecord> = self
            .with_stack(|s| {
                s.resources
                    .values()
                    .filter(|r| !live.contains(&r.logical_id))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        let mut denied = Vec::new();
        for mut rec in dropped {
            let verdict = crate::ops::policy::check(
                Some(&policy),
                &rec.logical_id,
                &rec.resource_type,
                "Update:Delete",
            );
            if let Err(reason) = verdict {
                rec.status = "UPDATE_FAILED".into();
                rec.status_reason = Some(reason);
                rec.updated = now_ms();
                denied.push(rec.logical_id.clone());
                self.put(rec, None).await;
            }
        }
        denied
    }

    pub fn cancelled(&self) -> bool {
        *self.abort.borrow()
    }

    /// Runs `f` on the stack's record under the state lock, for what a flow needs of it: a
    /// clone of the whole record copies every event of the stack's history and every
    /// resource's properties (~10 ms for 500 resources), several times per operation.
    /// Whether this update changes the stack-level tags (from the generation it keeps).
    pub(crate) fn stack_tags_changed(&self) -> bool {
        self.with_stack(|s| s.previous.as_ref().is_some_and(|p| p.tags != s.tags))
            .unwrap_or(false)
    }

    pub(crate) fn with_stack<R>(&self, f: impl FnOnce(&StackRecord) -> R) -> Option<R> {
        self.inner.lock().stacks.get(&self.stack_id).map(f)
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

/// AWS's text for a stack event sent to NotificationARNs: `Key='value'` lines, `null` for
/// what the event does not have.
fn notification(stack_id: &str, stack_name: &str, account_id: &str, ev: &EventRecord) -> String {
    let time = chrono::DateTime::from_timestamp_millis(ev.timestamp)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default();
    let or_null = |v: Option<&str>| v.unwrap_or("null").to_string();
    let token = if ev.token.is_empty() {
        "null"
    } else {
        &ev.token
    };
    format!(
        "StackId='{stack_id}'\nTimestamp='{time}'\nEventId='{}'\nLogicalResourceId='{}'\nNamespace='{account_id}'\nPhysicalResourceId='{}'\nPrincipalId='{account_id}'\nResourceProperties='{}'\nResourceStatus='{}'\nResourceStatusReason='{}'\nResourceType='{}'\nStackName='{stack_name}'\nClientRequestToken='{token}'\n",
        ev.event_id,
        ev.logical_id,
        or_null(ev.physical_id.as_deref()),
        or_null(ev.properties.as_deref()),
        ev.status,
        ev.reason.as_deref().unwrap_or(""),
        ev.resource_type,
    )
}

/// Adds an event in sequence order: concurrent transitions commit in any order, and the list
/// is oldest first (a later one is almost always at the end).
fn push_event(stack: &mut StackRecord, ev: EventRecord) {
    let at = stack
        .events
        .iter()
        .rposition(|e| e.seq < ev.seq)
        .map_or(0, |i| i + 1);
    stack.events.insert(at, ev);
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
