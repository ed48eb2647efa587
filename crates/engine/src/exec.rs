//! Running stack operations: provisioning as a DAG with bounded parallelism, teardown in
//! reverse dependency order, and the rollback paths. Every transition is written to the store
//! before the next step starts.

use crate::provider::{ProviderContext, ProviderError};
use crate::resolve::{LiveResolver, hash_properties, importers, resolve_dynamic, value_text};
use crate::schema;
use crate::state::{
    EventRecord, Inner, ResourceRecord, Running, StackRecord, StoredOutput, now_ms,
};
use crate::status::StackStatus;
use cumulo_template::Prepared;
use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::watch;
use tokio::task::JoinSet;

/// One running stack operation.
pub(crate) struct Op {
    pub inner: Arc<Inner>,
    pub stack_id: String,
    pub stack_name: String,
    pub region: String,
    pub account_id: String,
    pub token: String,
    pub prepared: Option<Arc<Prepared>>,
    pub cancel: Arc<AtomicBool>,
    pub disable_rollback: bool,
    pub delete_on_failure: bool,
    pub retain_except_on_create: bool,
}

/// Starts `work` in the background, registered as the stack's running operation.
pub(crate) fn spawn<F>(
    inner: &Arc<Inner>,
    stack_id: &str,
    cancel: Arc<AtomicBool>,
    work: F,
) -> Running
where
    F: Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = watch::channel(false);
    let running = Running { cancel, done: rx };
    inner
        .running
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(stack_id.to_string(), running.clone());
    let inner = inner.clone();
    let id = stack_id.to_string();
    tokio::spawn(async move {
        work.await;
        inner
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
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

/// Runs `f` over `nodes` so that a node starts once every node it depends on (within `nodes`)
/// has succeeded, at most `parallelism` at a time. After a failure (or when `stop` is set) no
/// new node starts unless `keep_going`. Returns the nodes that failed.
pub(crate) async fn run_dag<F, Fut>(
    nodes: Vec<String>,
    deps: HashMap<String, Vec<String>>,
    parallelism: usize,
    keep_going: bool,
    stop: Arc<AtomicBool>,
    f: F,
) -> Vec<String>
where
    F: Fn(String) -> Fut,
    Fut: Future<Output = bool> + Send + 'static,
{
    let set: HashSet<&String> = nodes.iter().collect();
    let mut waiting: HashMap<String, usize> = HashMap::new();
    let mut dependents: HashMap<String, Vec<String>> = HashMap::new();
    for n in &nodes {
        let ds: Vec<&String> = deps
            .get(n)
            .map(|d| d.iter().filter(|d| set.contains(d) && *d != n).collect())
            .unwrap_or_default();
        waiting.insert(n.clone(), ds.len());
        for d in ds {
            dependents.entry(d.clone()).or_default().push(n.clone());
        }
    }
    let mut ready: std::collections::VecDeque<String> = nodes
        .iter()
        .filter(|n| waiting.get(*n) == Some(&0))
        .cloned()
        .collect();
    let mut failed = Vec::new();
    let mut tasks: JoinSet<(String, bool)> = JoinSet::new();
    let parallelism = parallelism.max(1);
    loop {
        let halted = (!failed.is_empty() && !keep_going) || stop.load(Ordering::SeqCst);
        while !halted && tasks.len() < parallelism {
            let Some(n) = ready.pop_front() else { break };
            let fut = f(n.clone());
            // Each node in its own task: a panic fails the node, not the whole operation.
            tasks.spawn(async move { (n, tokio::spawn(fut).await.unwrap_or(false)) });
        }
        let Some(joined) = tasks.join_next().await else {
            break;
        };
        let (n, ok) = match joined {
            Ok(r) => r,
            // A panicking provider fails its resource, never the engine.
            Err(_) => continue,
        };
        if !ok {
            failed.push(n);
            continue;
        }
        for d in dependents.get(&n).cloned().unwrap_or_default() {
            if let Some(w) = waiting.get_mut(&d) {
                *w -= 1;
                if *w == 0 {
                    ready.push_back(d);
                }
            }
        }
    }
    failed
}

/// Runs a provider call in its own task so that a panicking provider fails its resource
/// rather than wedging the operation.
async fn guarded<T: Send + 'static>(
    resource_type: &str,
    call: impl Future<Output = Result<T, ProviderError>> + Send + 'static,
) -> Result<T, ProviderError> {
    tokio::spawn(call).await.unwrap_or_else(|_| {
        Err(ProviderError::Failed(format!(
            "cumulo: the {resource_type} provider failed unexpectedly"
        )))
    })
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
        }
    }

    /// Sets the stack's status and reason, with its stack event.
    pub fn set_status(&self, status: StackStatus, reason: Option<String>) {
        let mut st = self.inner.lock();
        let seq = st.next_seq;
        st.next_seq += 1;
        let Some(stack) = st.stacks.get_mut(&self.stack_id) else {
            return;
        };
        stack.status = status;
        stack.status_reason = reason.clone();
        let ev = stack_event(stack, seq, &self.token, reason);
        stack.events.push(ev.clone());
        let _ = self.inner.save_stack(stack);
        let _ = self
            .inner
            .save_transition(&self.stack_id, None, None, Some(&ev));
    }

    /// Stores a resource record and writes an event with its status and reason.
    fn put(&self, rec: ResourceRecord, properties: Option<String>) {
        let mut st = self.inner.lock();
        let seq = st.next_seq;
        st.next_seq += 1;
        let Some(stack) = st.stacks.get_mut(&self.stack_id) else {
            return;
        };
        let ev = resource_event(seq, &self.token, &rec, properties);
        stack.events.push(ev.clone());
        let _ = self
            .inner
            .save_transition(&self.stack_id, Some(&rec), None, Some(&ev));
        stack.resources.insert(rec.logical_id.clone(), rec);
    }

    /// Writes an event for a resource without storing the record (detached teardown).
    fn event_only(&self, rec: &ResourceRecord) {
        let mut st = self.inner.lock();
        let seq = st.next_seq;
        st.next_seq += 1;
        let Some(stack) = st.stacks.get_mut(&self.stack_id) else {
            return;
        };
        let ev = resource_event(seq, &self.token, rec, None);
        stack.events.push(ev.clone());
        let _ = self
            .inner
            .save_transition(&self.stack_id, None, None, Some(&ev));
    }

    fn remove(&self, logical_id: &str) {
        let mut st = self.inner.lock();
        if let Some(stack) = st.stacks.get_mut(&self.stack_id) {
            stack.resources.shift_remove(logical_id);
        }
        let _ = self
            .inner
            .save_transition(&self.stack_id, None, Some(logical_id), None);
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
        }
    }

    /// Creates one resource through its provider (or as a labelled stub).
    async fn provider_create(
        &self,
        logical_id: &str,
        resource_type: &str,
        literal: &Value,
    ) -> Result<(crate::ProviderOutcome, bool), String> {
        let actual = resolve_dynamic(self.inner.world.as_ref(), &self.region, literal).await?;
        let ctx = self.ctx(logical_id, resource_type);
        match self.inner.registry.get(resource_type) {
            Some(p) => {
                let (p, ctx) = (p.clone(), ctx.clone());
                guarded(resource_type, async move { p.create(&ctx, &actual).await })
                    .await
                    .map(|o| (o, false))
                    .map_err(|e| e.to_string())
            }
            None if self.inner.config.strict => Err(format!(
                "cumulo: {resource_type} is not emulated (strict mode refuses stubs)"
            )),
            None => Ok((
                crate::ProviderOutcome {
                    physical_id: ctx.generated_name(128, ""),
                    attributes: Map::new(),
                    status_reason: Some(format!(
                        "cumulo: {resource_type} is not emulated; nothing was created"
                    )),
                },
                true,
            )),
        }
    }

    /// Creates a resource that is new in this operation.
    pub async fn create_resource(self: Arc<Self>, logical_id: String) -> bool {
        let resolved = match self.resolve(&logical_id) {
            Ok(r) => r,
            Err(reason) => {
                let (rtype, deps) = self
                    .prepared
                    .as_ref()
                    .and_then(|p| p.template.resources.get(&logical_id))
                    .map(|r| (r.resource_type.clone(), r.depends_on.clone()))
                    .unwrap_or_default();
                let mut rec = ResourceRecord {
                    logical_id: logical_id.clone(),
                    resource_type: rtype,
                    physical_id: None,
                    status: "CREATE_FAILED".into(),
                    status_reason: Some(reason),
                    properties: Value::Null,
                    hash: String::new(),
                    attributes: Map::new(),
                    updated: now_ms(),
                    deletion_policy: None,
                    update_replace_policy: None,
                    metadata: None,
                    depends_on: deps,
                    stub: false,
                    replaced: None,
                    created_by_op: true,
                };
                rec.status = "CREATE_FAILED".into();
                self.put(rec, None);
                return false;
            }
        };
        let props_text = Some(resolved.properties.to_string());
        let mut rec = self.new_record(&resolved, "CREATE_IN_PROGRESS");
        self.put(rec.clone(), props_text.clone());
        match self
            .provider_create(&logical_id, &resolved.resource_type, &resolved.properties)
            .await
        {
            Ok((outcome, stub)) => {
                rec.physical_id = Some(outcome.physical_id);
                rec.attributes = outcome.attributes;
                rec.status = "CREATE_COMPLETE".into();
                rec.status_reason = outcome.status_reason;
                rec.stub = stub;
                rec.updated = now_ms();
                self.put(rec, props_text);
                true
            }
            Err(reason) => {
                rec.status = "CREATE_FAILED".into();
                rec.status_reason = Some(reason);
                rec.updated = now_ms();
                self.put(rec, props_text);
                false
            }
        }
    }

    /// Brings an existing resource to the new template: skipped when its resolved properties
    /// hash the same, updated in place, or replaced when a createOnly property changed.
    pub async fn update_resource(self: Arc<Self>, logical_id: String) -> bool {
        let Some(old) = self.record(&logical_id) else {
            return self.create_resource(logical_id).await;
        };
        if old.physical_id.is_none() {
            return self.create_resource(logical_id).await;
        }
        let resolved = match self.resolve(&logical_id) {
            Ok(r) => r,
            Err(reason) => {
                let mut rec = old.clone();
                rec.status = "UPDATE_FAILED".into();
                rec.status_reason = Some(reason);
                self.put(rec, None);
                return false;
            }
        };
        let new_hash = hash_properties(&resolved.properties);
        let type_changed = resolved.resource_type != old.resource_type;
        // A nested stack is always handed the update: its template may have changed behind
        // an unchanged TemplateURL, and the child itself decides whether anything changed.
        let nested = resolved.resource_type == "AWS::CloudFormation::Stack";
        if !type_changed && !nested && new_hash == old.hash && old.status.ends_with("_COMPLETE") {
            // Unchanged: only the attributes that need no provider call may differ.
            let mut rec = old.clone();
            rec.deletion_policy = resolved.deletion_policy.clone();
            rec.update_replace_policy = resolved.update_replace_policy.clone();
            rec.metadata = resolved.metadata.clone();
            rec.depends_on = resolved.depends_on.clone();
            rec.created_by_op = false;
            if rec != old {
                let mut st = self.inner.lock();
                if let Some(stack) = st.stacks.get_mut(&self.stack_id) {
                    let _ = self
                        .inner
                        .save_transition(&self.stack_id, Some(&rec), None, None);
                    stack.resources.insert(logical_id.clone(), rec);
                }
            }
            return true;
        }
        let props_text = Some(resolved.properties.to_string());
        let replace = type_changed
            || !schema::replacing_properties(
                &resolved.resource_type,
                &old.properties,
                &resolved.properties,
            )
            .is_empty();
        if replace
            && !type_changed
            && let Some(name) = schema::custom_name_conflict(
                &resolved.resource_type,
                &old.properties,
                &resolved.properties,
            )
        {
            let mut failed = old.clone();
            failed.status = "UPDATE_FAILED".into();
            failed.status_reason = Some(format!(
                "CloudFormation cannot update a stack when a custom-named resource requires replacing. Rename {name} and update the stack again."
            ));
            failed.updated = now_ms();
            self.put(failed, props_text);
            return false;
        }
        let mut rec = self.new_record(&resolved, "UPDATE_IN_PROGRESS");
        rec.created_by_op = false;
        rec.physical_id = old.physical_id.clone();
        rec.attributes = old.attributes.clone();
        rec.stub = old.stub;
        if replace {
            rec.status_reason = Some(
                "Requested update requires the creation of a new physical resource; hence creating one."
                    .into(),
            );
        }
        self.put(rec.clone(), props_text.clone());
        rec.status_reason = None;
        if replace {
            match self
                .provider_create(&logical_id, &resolved.resource_type, &resolved.properties)
                .await
            {
                Ok((outcome, stub)) => {
                    let mut previous = old.clone();
                    previous.replaced = None;
                    rec.physical_id = Some(outcome.physical_id);
                    rec.attributes = outcome.attributes;
                    rec.status_reason = outcome.status_reason;
                    rec.stub = stub;
                    rec.replaced = Some(Box::new(previous));
                    rec.status = "UPDATE_COMPLETE".into();
                    rec.updated = now_ms();
                    self.put(rec, props_text);
                    true
                }
                Err(reason) => {
                    // Nothing was replaced: the record keeps describing the original.
                    let mut failed = old.clone();
                    failed.status = "UPDATE_FAILED".into();
                    failed.status_reason = Some(reason);
                    failed.updated = now_ms();
                    self.put(failed, props_text);
                    false
                }
            }
        } else {
            let physical = old.physical_id.clone().unwrap_or_default();
            let result = if old.stub || self.inner.registry.get(&resolved.resource_type).is_none() {
                Ok(crate::ProviderOutcome {
                    physical_id: physical.clone(),
                    attributes: old.attributes.clone(),
                    status_reason: old.status_reason.clone(),
                })
            } else {
                self.provider_update(
                    &resolved.resource_type,
                    &logical_id,
                    &physical,
                    &old.properties,
                    &resolved.properties,
                )
                .await
            };
            match result {
                Ok(outcome) => {
                    if !outcome.physical_id.is_empty() {
                        rec.physical_id = Some(outcome.physical_id);
                    }
                    rec.attributes = outcome.attributes;
                    rec.status_reason = outcome.status_reason;
                    rec.status = "UPDATE_COMPLETE".into();
                    rec.updated = now_ms();
                    self.put(rec, props_text);
                    true
                }
                Err(reason) => {
                    // The attempted properties stay recorded so a rollback reverts them.
                    rec.status = "UPDATE_FAILED".into();
                    rec.status_reason = Some(reason);
                    rec.updated = now_ms();
                    self.put(rec, props_text);
                    false
                }
            }
        }
    }

    async fn provider_update(
        &self,
        resource_type: &str,
        logical_id: &str,
        physical_id: &str,
        old_literal: &Value,
        new_literal: &Value,
    ) -> Result<crate::ProviderOutcome, String> {
        let Some(p) = self.inner.registry.get(resource_type) else {
            return Err(format!("cumulo: {resource_type} is not emulated"));
        };
        let new = resolve_dynamic(self.inner.world.as_ref(), &self.region, new_literal).await?;
        // The old values only guide what changed; a reference that no longer resolves is
        // compared as written.
        let old = resolve_dynamic(self.inner.world.as_ref(), &self.region, old_literal)
            .await
            .unwrap_or_else(|_| old_literal.clone());
        let ctx = self.ctx(logical_id, resource_type);
        let (p, physical_id) = (p.clone(), physical_id.to_string());
        guarded(resource_type, async move {
            p.update(&ctx, &physical_id, &old, &new).await
        })
        .await
        .map_err(|e| e.to_string())
    }

    /// Deletes one physical resource. An absent resource is deleted.
    async fn provider_delete(&self, rec: &ResourceRecord) -> Result<(), String> {
        let Some(physical) = &rec.physical_id else {
            return Ok(());
        };
        if rec.stub {
            return Ok(());
        }
        let Some(p) = self.inner.registry.get(&rec.resource_type) else {
            return Ok(());
        };
        let actual = resolve_dynamic(self.inner.world.as_ref(), &self.region, &rec.properties)
            .await
            .unwrap_or_else(|_| rec.properties.clone());
        let ctx = self.ctx(&rec.logical_id, &rec.resource_type);
        let (p, physical) = (p.clone(), physical.clone());
        let deleted = guarded(&rec.resource_type, async move {
            p.delete(&ctx, &physical, &actual).await
        });
        match deleted.await {
            Ok(()) | Err(ProviderError::NotFound(_)) => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Tears resources down in reverse dependency order. Returns the logical ids that failed.
    pub async fn teardown(self: &Arc<Self>, targets: Vec<Target>, keep_going: bool) -> Vec<String> {
        // Keyed by position: a replaced resource shares its logical id with its replacement.
        let keys: Vec<String> = (0..targets.len()).map(|i| i.to_string()).collect();
        let by_logical: HashMap<String, Vec<String>> =
            targets
                .iter()
                .enumerate()
                .fold(HashMap::new(), |mut m, (i, t)| {
                    m.entry(t.record.logical_id.clone())
                        .or_default()
                        .push(i.to_string());
                    m
                });
        // A resource is deleted after everything that depends on it.
        let mut deps: HashMap<String, Vec<String>> = HashMap::new();
        for (i, t) in targets.iter().enumerate() {
            for d in &t.record.depends_on {
                for j in by_logical.get(d).into_iter().flatten() {
                    deps.entry(j.clone()).or_default().push(i.to_string());
                }
            }
        }
        let targets = Arc::new(targets);
        let op = self.clone();
        run_dag(
            keys,
            deps,
            self.inner.config.parallelism,
            keep_going,
            Arc::new(AtomicBool::new(false)),
            move |key| {
                let op = op.clone();
                let targets = targets.clone();
                async move {
                    let Some(t) = key.parse::<usize>().ok().and_then(|i| targets.get(i)) else {
                        return true;
                    };
                    op.teardown_one(t).await
                }
            },
        )
        .await
    }

    async fn teardown_one(&self, t: &Target) -> bool {
        let mut rec = t.record.clone();
        rec.replaced = None;
        let show = |op: &Op, rec: &ResourceRecord| match t.mode {
            Record::Detached => op.event_only(rec),
            _ => op.put(rec.clone(), None),
        };
        if rec.status == "DELETE_COMPLETE" || rec.status == "DELETE_SKIPPED" {
            return true;
        }
        if t.retain && rec.physical_id.is_some() {
            rec.status = "DELETE_SKIPPED".into();
            rec.status_reason = None;
            rec.updated = now_ms();
            show(self, &rec);
            if t.mode == Record::Remove {
                self.remove(&rec.logical_id);
            }
            return true;
        }
        rec.status = "DELETE_IN_PROGRESS".into();
        rec.status_reason = None;
        rec.updated = now_ms();
        show(self, &rec);
        match self.provider_delete(&rec).await {
            Ok(()) => {
                rec.status = "DELETE_COMPLETE".into();
                rec.updated = now_ms();
                show(self, &rec);
                if t.mode == Record::Remove {
                    self.remove(&rec.logical_id);
                }
                true
            }
            Err(reason) => {
                rec.status = "DELETE_FAILED".into();
                rec.status_reason = Some(reason);
                rec.updated = now_ms();
                show(self, &rec);
                false
            }
        }
    }

    /// Resolves the outputs and checks the exports; sets them on the stack.
    pub fn finish_outputs(&self) -> Result<(), String> {
        let Some(prepared) = &self.prepared else {
            return Ok(());
        };
        let mut st = self.inner.lock();
        let (outputs, imported) = {
            let Some(stack) = st.stacks.get(&self.stack_id) else {
                return Err("stack vanished".into());
            };
            let resolver = LiveResolver::new(&st, stack);
            let resolved = prepared.resolve_outputs(&resolver).map_err(|errors| {
                errors
                    .into_iter()
                    .map(|d| d.message)
                    .collect::<Vec<_>>()
                    .join("; ")
            })?;
            let outputs: Vec<StoredOutput> = resolved
                .into_iter()
                .map(|o| StoredOutput {
                    key: o.name,
                    value: value_text(&o.value),
                    description: o.description,
                    export_name: o.export_name,
                })
                .collect();
            let mut seen = HashSet::new();
            for o in &outputs {
                let Some(name) = &o.export_name else { continue };
                if !seen.insert(name.clone()) {
                    return Err(format!(
                        "Template format error: duplicate Export names found: {name}"
                    ));
                }
                if let Some(other) = st.stacks.values().find(|s| {
                    s.stack_id != self.stack_id
                        && s.region == self.region
                        && s.status != StackStatus::DELETE_COMPLETE
                        && s.outputs
                            .iter()
                            .any(|x| x.export_name.as_deref() == Some(name))
                }) {
                    return Err(format!(
                        "Export with name {name} is already exported by stack {}",
                        other.stack_name
                    ));
                }
            }
            for old in &stack.outputs {
                let Some(name) = &old.export_name else {
                    continue;
                };
                let users = importers(&st, &self.region, name, &self.stack_id);
                if users.is_empty() {
                    continue;
                }
                match outputs
                    .iter()
                    .find(|o| o.export_name.as_ref() == Some(name))
                {
                    None => {
                        return Err(format!(
                            "Export {name} cannot be deleted as it is in use by {}",
                            crate::resolve::and_list(&users)
                        ));
                    }
                    Some(o) if o.value != old.value => {
                        return Err(format!(
                            "Cannot update export {name} as it is in use by {}",
                            crate::resolve::and_list(&users)
                        ));
                    }
                    _ => {}
                }
            }
            (outputs, resolver.imported.into_inner())
        };
        if let Some(stack) = st.stacks.get_mut(&self.stack_id) {
            stack.outputs = outputs;
            for name in imported {
                if !stack.imports.contains(&name) {
                    stack.imports.push(name);
                }
            }
            let _ = self.inner.save_stack(stack);
        }
        Ok(())
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
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

fn failed_list(verb: &str, names: &[String]) -> String {
    let mut names = names.to_vec();
    names.sort();
    format!(
        "The following resource(s) failed to {verb}: [{}].",
        names.join(", ")
    )
}

/// Runs a create: provisions every resource, then completes, rolls back, deletes or stops at
/// CREATE_FAILED as the operation's options say.
pub(crate) async fn run_create(op: Arc<Op>) {
    let (nodes, deps) = op.template_deps();
    let worker = op.clone();
    let failed = run_dag(
        nodes,
        deps,
        op.inner.config.parallelism,
        false,
        op.cancel.clone(),
        move |logical| worker.clone().create_resource(logical),
    )
    .await;
    let reason = if !failed.is_empty() {
        Some(failed_list("create", &failed))
    } else if op.cancelled() {
        Some("User Initiated".to_string())
    } else {
        op.finish_outputs().err()
    };
    let Some(reason) = reason else {
        op.set_status(StackStatus::CREATE_COMPLETE, None);
        return;
    };
    if op.delete_on_failure {
        op.set_status(
            StackStatus::DELETE_IN_PROGRESS,
            Some(format!("{reason} Delete requested by user.")),
        );
        delete_resources(&op, true).await;
    } else if op.disable_rollback {
        op.set_status(StackStatus::CREATE_FAILED, Some(reason));
    } else {
        op.set_status(
            StackStatus::ROLLBACK_IN_PROGRESS,
            Some(format!("{reason} Rollback requested by user.")),
        );
        rollback_create(&op).await;
    }
}

/// Deletes everything a failed create made, honouring DeletionPolicy (Retain keeps the
/// resource unless RetainExceptOnCreate applies: this create made it).
pub(crate) async fn rollback_create(op: &Arc<Op>) {
    let Some(stack) = op.stack() else { return };
    let targets: Vec<Target> = stack
        .resources
        .values()
        .rev()
        .map(|r| Target {
            retain: match r.deletion_policy.as_deref() {
                Some("RetainExceptOnCreate") => false,
                p => is_retain(p) && !op.retain_except_on_create,
            },
            record: r.clone(),
            mode: Record::Keep,
        })
        .collect();
    let failed = op.teardown(targets, true).await;
    if failed.is_empty() {
        op.set_status(StackStatus::ROLLBACK_COMPLETE, None);
    } else {
        let names = failed_names(op, &failed);
        op.set_status(
            StackStatus::ROLLBACK_FAILED,
            Some(failed_list("delete", &names)),
        );
    }
}

fn failed_names(op: &Op, failed: &[String]) -> Vec<String> {
    let Some(stack) = op.stack() else {
        return failed.to_vec();
    };
    let mut names: Vec<String> = stack
        .resources
        .values()
        .filter(|r| r.status.ends_with("_FAILED"))
        .map(|r| r.logical_id.clone())
        .collect();
    if names.is_empty() {
        names = failed.to_vec();
    }
    names
}

/// Deletes the stack's resources and completes the deletion (DeleteStack, OnFailure=DELETE).
pub(crate) async fn delete_resources(op: &Arc<Op>, during_create: bool) {
    let Some(stack) = op.stack() else { return };
    let targets: Vec<Target> = stack
        .resources
        .values()
        .map(|r| Target {
            retain: match r.deletion_policy.as_deref() {
                Some("RetainExceptOnCreate") => !during_create,
                p => is_retain(p) && !(during_create && op.retain_except_on_create),
            },
            record: r.clone(),
            mode: Record::Keep,
        })
        .collect();
    let failed = op.teardown(targets, false).await;
    if !failed.is_empty() {
        let names = failed_names(op, &failed);
        op.set_status(
            StackStatus::DELETE_FAILED,
            Some(failed_list("delete", &names)),
        );
        return;
    }
    let mut st = op.inner.lock();
    let seq = st.next_seq;
    st.next_seq += 1;
    let Some(stack) = st.stacks.get_mut(&op.stack_id) else {
        return;
    };
    stack.status = StackStatus::DELETE_COMPLETE;
    stack.status_reason = None;
    stack.deleted = Some(now_ms());
    let ev = stack_event(stack, seq, &op.token, None);
    stack.events.push(ev.clone());
    let _ = op.inner.save_stack(stack);
    let _ = op
        .inner
        .save_transition(&op.stack_id, None, None, Some(&ev));
    let key = (stack.region.clone(), stack.stack_name.clone());
    if st.names.get(&key) == Some(&op.stack_id) {
        st.names.remove(&key);
    }
    // A deleted stack's change sets go with it.
    let change_sets: Vec<String> = st
        .change_sets
        .values()
        .filter(|c| c.stack_id == op.stack_id)
        .map(|c| c.change_set_id.clone())
        .collect();
    for id in change_sets {
        st.change_sets.shift_remove(&id);
        let _ = op.inner.remove_change_set(&id);
    }
}

/// Runs an update: creates new resources, updates or replaces changed ones in dependency order,
/// then cleans up (success) or rolls back (failure).
pub(crate) async fn run_update(op: Arc<Op>) {
    let (nodes, deps) = op.template_deps();
    let worker = op.clone();
    let failed = run_dag(
        nodes,
        deps,
        op.inner.config.parallelism,
        false,
        op.cancel.clone(),
        move |logical| worker.clone().update_resource(logical),
    )
    .await;
    let reason = if !failed.is_empty() {
        let stack = op.stack();
        let (mut created, mut updated) = (Vec::new(), Vec::new());
        for f in failed {
            let was_new = stack
                .as_ref()
                .and_then(|s| s.resources.get(&f))
                .is_some_and(|r| r.status == "CREATE_FAILED");
            if was_new {
                created.push(f)
            } else {
                updated.push(f)
            }
        }
        let mut parts = Vec::new();
        if !created.is_empty() {
            parts.push(failed_list("create", &created));
        }
        if !updated.is_empty() {
            parts.push(failed_list("update", &updated));
        }
        Some(parts.join(" "))
    } else if op.cancelled() {
        Some("User Initiated".to_string())
    } else {
        op.finish_outputs().err()
    };
    match reason {
        None => {
            op.set_status(StackStatus::UPDATE_COMPLETE_CLEANUP_IN_PROGRESS, None);
            cleanup_update(&op).await;
            {
                let mut st = op.inner.lock();
                if let Some(stack) = st.stacks.get_mut(&op.stack_id) {
                    stack.previous = None;
                    for r in stack.resources.values_mut() {
                        r.replaced = None;
                        r.created_by_op = false;
                    }
                    let _ = op.inner.save_stack_full(stack);
                }
            }
            op.set_status(StackStatus::UPDATE_COMPLETE, None);
        }
        Some(reason) if op.disable_rollback => {
            op.set_status(StackStatus::UPDATE_FAILED, Some(reason));
        }
        Some(reason) => {
            op.set_status(StackStatus::UPDATE_ROLLBACK_IN_PROGRESS, Some(reason));
            rollback_update(&op, &[]).await;
        }
    }
}

/// The cleanup phase of a successful update: deletes resources the template dropped and the
/// physical resources replacements superseded. Failures are reported and do not fail the update.
async fn cleanup_update(op: &Arc<Op>) {
    let Some(stack) = op.stack() else { return };
    let live: HashSet<String> = op
        .prepared
        .as_ref()
        .map(|p| p.live.iter().cloned().collect())
        .unwrap_or_default();
    let mut targets = Vec::new();
    for r in stack.resources.values().rev() {
        if let Some(old) = &r.replaced {
            targets.push(Target {
                record: (**old).clone(),
                retain: is_retain(r.update_replace_policy.as_deref()),
                mode: Record::Detached,
            });
        }
        if !live.contains(&r.logical_id) {
            targets.push(Target {
                record: r.clone(),
                retain: is_retain(r.deletion_policy.as_deref()),
                mode: Record::Remove,
            });
        }
    }
    let failed = op.teardown(targets, true).await;
    // What could not be deleted leaves the stack: the update succeeded without it.
    for logical in failed_names(op, &failed) {
        if !live.contains(&logical) {
            op.remove(&logical);
        }
    }
}

/// Rolls a failed update back: restores the previous template, parameters and tags, reverts
/// resources updated in place, retires replacements and deletes what the update created.
/// `skip` names resources (of this stack) to leave untouched and record as rolled back.
pub(crate) async fn rollback_update(op: &Arc<Op>, skip: &[String]) {
    let Some(stack) = op.stack() else { return };
    let Some(prev) = stack.previous.clone() else {
        op.set_status(StackStatus::UPDATE_ROLLBACK_COMPLETE, None);
        return;
    };
    {
        let mut st = op.inner.lock();
        if let Some(s) = st.stacks.get_mut(&op.stack_id) {
            s.template_body = prev.template_body.clone();
            s.description = prev.description.clone();
            s.parameters = prev.parameters.clone();
            s.tags = prev.tags.clone();
            s.outputs = prev.outputs.clone();
            s.notification_arns = prev.notification_arns.clone();
            s.capabilities = prev.capabilities.clone();
            s.imports = prev.imports.clone();
            let _ = op.inner.save_stack(s);
        }
    }
    let mut failures = Vec::new();
    let mut retire: Vec<ResourceRecord> = stack.orphans.clone();
    for (logical, p) in &prev.resources {
        let Some(cur) = op.record(logical) else {
            op.put(restored(p), None);
            continue;
        };
        if skip.contains(logical) {
            let mut rec = restored(p);
            rec.status_reason = Some("Resource skipped during rollback".into());
            op.put(rec, None);
            continue;
        }
        if cur.replaced.is_some() {
            let mut newer = cur.clone();
            newer.replaced = None;
            retire.push(newer);
            op.put(restored(p), None);
        } else if cur.physical_id != p.physical_id {
            if cur.physical_id.is_some() {
                retire.push(cur.clone());
            }
            op.put(restored(p), None);
        } else if cur.hash != p.hash {
            let mut rec = cur.clone();
            rec.status = "UPDATE_IN_PROGRESS".into();
            rec.status_reason = None;
            op.put(rec.clone(), None);
            let physical = cur.physical_id.clone().unwrap_or_default();
            let result = if cur.stub || op.inner.registry.get(&cur.resource_type).is_none() {
                Ok(crate::ProviderOutcome {
                    physical_id: physical.clone(),
                    attributes: p.attributes.clone(),
                    status_reason: p.status_reason.clone(),
                })
            } else {
                op.provider_update(
                    &cur.resource_type,
                    logical,
                    &physical,
                    &cur.properties,
                    &p.properties,
                )
                .await
            };
            match result {
                Ok(outcome) => {
                    let mut rec = restored(p);
                    rec.attributes = outcome.attributes;
                    op.put(rec, None);
                }
                Err(reason) => {
                    rec.status = "UPDATE_FAILED".into();
                    rec.status_reason = Some(reason);
                    op.put(rec, None);
                    failures.push(logical.clone());
                }
            }
        } else if cur.status.ends_with("_FAILED") {
            op.put(restored(p), None);
        }
    }
    let save_orphans = |op: &Op, orphans: Vec<ResourceRecord>| {
        let mut st = op.inner.lock();
        if let Some(s) = st.stacks.get_mut(&op.stack_id) {
            s.orphans = orphans;
            let _ = op.inner.save_stack(s);
        }
    };
    save_orphans(op, retire.clone());
    if !failures.is_empty() {
        op.set_status(
            StackStatus::UPDATE_ROLLBACK_FAILED,
            Some(failed_list("update", &failures)),
        );
        return;
    }
    op.set_status(
        StackStatus::UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS,
        None,
    );
    let mut targets: Vec<Target> = retire
        .iter()
        .filter(|r| !skip.contains(&r.logical_id))
        .map(|r| Target {
            record: r.clone(),
            retain: false,
            mode: Record::Detached,
        })
        .collect();
    let current = op.stack().map(|s| s.resources).unwrap_or_default();
    for r in current.values().rev() {
        if prev.resources.contains_key(&r.logical_id) {
            continue;
        }
        if skip.contains(&r.logical_id) {
            op.remove(&r.logical_id);
            continue;
        }
        let retain = match r.deletion_policy.as_deref() {
            Some("RetainExceptOnCreate") => false,
            p => is_retain(p) && !op.retain_except_on_create,
        };
        targets.push(Target {
            record: r.clone(),
            retain,
            mode: Record::Remove,
        });
    }
    let failed = op.teardown(targets.clone(), true).await;
    let failed_targets: Vec<&Target> = failed
        .iter()
        .filter_map(|k| k.parse::<usize>().ok().and_then(|i| targets.get(i)))
        .collect();
    let still: Vec<ResourceRecord> = failed_targets
        .iter()
        .filter(|t| t.mode == Record::Detached)
        .map(|t| t.record.clone())
        .collect();
    save_orphans(op, still);
    if !failed_targets.is_empty() {
        let mut names: Vec<String> = failed_targets
            .iter()
            .map(|t| t.record.logical_id.clone())
            .collect();
        names.dedup();
        op.set_status(
            StackStatus::UPDATE_ROLLBACK_FAILED,
            Some(failed_list("delete", &names)),
        );
        return;
    }
    {
        let mut st = op.inner.lock();
        if let Some(s) = st.stacks.get_mut(&op.stack_id) {
            let mut ordered = indexmap::IndexMap::new();
            for k in prev.resources.keys() {
                if let Some(r) = s.resources.shift_remove(k) {
                    ordered.insert(k.clone(), r);
                }
            }
            ordered.extend(s.resources.drain(..));
            for r in ordered.values_mut() {
                r.created_by_op = false;
                r.replaced = None;
            }
            s.resources = ordered;
            s.previous = None;
            let _ = op.inner.save_stack_full(s);
        }
    }
    op.set_status(StackStatus::UPDATE_ROLLBACK_COMPLETE, None);
}

/// A previous generation's record, as it stands again after a rollback.
fn restored(p: &ResourceRecord) -> ResourceRecord {
    let mut rec = p.clone();
    rec.status = "UPDATE_COMPLETE".into();
    rec.status_reason = None;
    rec.replaced = None;
    rec.created_by_op = false;
    rec.updated = now_ms();
    rec
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::time::Duration;

    #[tokio::test]
    async fn a_node_starts_when_its_own_dependencies_finish_not_its_level() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let deps: HashMap<String, Vec<String>> = [("C".to_string(), vec!["B".to_string()])]
            .into_iter()
            .collect();
        let l = log.clone();
        let failed = run_dag(
            vec!["A".into(), "B".into(), "C".into()],
            deps,
            4,
            false,
            Arc::new(AtomicBool::new(false)),
            move |n| {
                let l = l.clone();
                async move {
                    if n == "A" {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                    l.lock().unwrap().push(n);
                    true
                }
            },
        )
        .await;
        assert!(failed.is_empty());
        assert_eq!(*log.lock().unwrap(), vec!["B", "C", "A"]);
    }

    #[tokio::test]
    async fn after_a_failure_nothing_new_starts_and_the_bound_holds() {
        let running = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let peak = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let started = Arc::new(Mutex::new(Vec::new()));
        let (r, p, s) = (running.clone(), peak.clone(), started.clone());
        let nodes: Vec<String> = (0..10).map(|i| format!("N{i}")).collect();
        let mut deps = HashMap::new();
        deps.insert("N9".to_string(), vec!["N0".to_string()]);
        let failed = run_dag(
            nodes,
            deps,
            3,
            false,
            Arc::new(AtomicBool::new(false)),
            move |n| {
                let (r, p, s) = (r.clone(), p.clone(), s.clone());
                async move {
                    s.lock().unwrap().push(n.clone());
                    let now = r.fetch_add(1, Ordering::SeqCst) + 1;
                    p.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    r.fetch_sub(1, Ordering::SeqCst);
                    n != "N0"
                }
            },
        )
        .await;
        assert_eq!(failed, vec!["N0"]);
        assert!(peak.load(Ordering::SeqCst) <= 3);
        assert!(!started.lock().unwrap().contains(&"N9".to_string()));
    }
}
