//! One resource's create, update (in place or by replacement) and teardown through its
//! provider.

use super::{Op, Record, Target, run_dag};
use crate::provider::ProviderError;
use crate::resolve::{hash_properties, resolve_dynamic};
use crate::schema;
use crate::state::{PendingCreate, ResourceRecord, now_ms};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;

/// AWS's reasons for a resource whose operation was cut short because another one failed (or
/// the stack operation was cancelled).
pub(super) const CREATE_CANCELLED: &str = "Resource creation cancelled";
/// The reason of AWS's second IN_PROGRESS event of a create (a replacement's too): the
/// handler has started it and the physical id is known.
pub(super) const CREATION_INITIATED: &str = "Resource creation Initiated";
pub(super) const UPDATE_CANCELLED: &str = "Resource update cancelled";

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

/// Debug builds hold a provider to its declared attributes ([`crate::Provider::attributes`]):
/// one it answers without declaring panics, which [`guarded`] turns into the resource's
/// failure, so a test that provisions the type finds the list stale.
fn check_declared(p: &dyn crate::Provider, resource_type: &str, outcome: &crate::ProviderOutcome) {
    if let Some(declared) = p.attributes() {
        for name in outcome.attributes.keys() {
            debug_assert!(
                declared.contains(&name.as_str()),
                "{resource_type} answered Fn::GetAtt attribute {name}, which its provider does not declare"
            );
        }
    }
}

/// Why a create failed, with the physical id of what it had already made
/// ([`ProviderError::FailedAfterCreate`]), which the failed resource records so the rollback or
/// a delete removes it.
pub(super) struct CreateFailed {
    reason: String,
    made: Option<String>,
}

impl From<String> for CreateFailed {
    fn from(reason: String) -> Self {
        CreateFailed { reason, made: None }
    }
}

impl From<ProviderError> for CreateFailed {
    fn from(e: ProviderError) -> Self {
        CreateFailed {
            made: e.made().map(str::to_string),
            reason: e.to_string(),
        }
    }
}

/// What a create or update reports beyond the physical id and attributes: the NoEcho
/// attribute names (per call) and, when the provider narrowed what it sent, the effective
/// properties in place of the declared ones. A record whose declared properties hold a dynamic
/// reference keeps them: the effective bag carries the resolved value, which is never written
/// down.
fn record_outcome_extras(
    rec: &mut ResourceRecord,
    outcome: &crate::ProviderOutcome,
    declared: &Value,
) {
    rec.secret_attributes = crate::mask::secret_names(outcome);
    if let Some(effective) = &outcome.effective_properties
        && !declared.to_string().contains("{{resolve:")
    {
        rec.properties = Arc::new(effective.clone());
        rec.hash = hash_properties(effective);
    }
}

impl Op {
    /// Reads a resource back right after a create or update succeeded: what the service holds
    /// is recorded as the resource's observed properties (seed 002: service defaults and
    /// computed values belong there, captured by a real read-back), so drift later compares the
    /// live resource with what was observed at deploy time rather than with the template.
    /// In-process a read costs about what the create did (bench/direct.py: the figures are in
    /// its docstring). `None` for a type that cannot be read back, or a read that failed: the
    /// record then has no observation and drift falls back to the intent.
    /// Takes what a create (or a replacement's create) made into its record: the outcome's
    /// extras, the deploy-time observation (none for a stub, nor once the operation halts:
    /// the record is about to be rolled back), the physical id, attributes and stub flag.
    /// Returns the provider's status reason, which the caller shows or not.
    async fn take_created(
        &self,
        rec: &mut ResourceRecord,
        resolved: &cumulo_template::ResolvedResource,
        outcome: crate::ProviderOutcome,
        stub: bool,
    ) -> Option<String> {
        record_outcome_extras(rec, &outcome, &resolved.properties);
        if !stub && !self.halted() {
            rec.observed = self
                .observe(
                    &rec.logical_id,
                    &resolved.resource_type,
                    &outcome.physical_id,
                    &resolved.properties,
                )
                .await;
        }
        rec.physical_id = Some(outcome.physical_id);
        rec.attributes = outcome.attributes.into();
        rec.stub = stub;
        outcome.status_reason
    }

    /// Writes AWS's "Resource creation Initiated" event of a create (or a replacement's
    /// create): the record, still in progress, with the physical id the provider answered.
    async fn initiated(&self, rec: &ResourceRecord, properties: &Option<String>) -> bool {
        let mut shown = rec.clone();
        shown.status_reason = Some(CREATION_INITIATED.into());
        shown.updated = now_ms();
        self.put(shown, properties.clone()).await
    }

    async fn observe(
        &self,
        logical_id: &str,
        resource_type: &str,
        physical_id: &str,
        literal: &Value,
    ) -> Option<Arc<Value>> {
        let p = self.inner.registry.get(resource_type)?.clone();
        let actual = resolve_dynamic(self.inner.world.as_ref(), &self.region, literal)
            .await
            .ok()?;
        let ctx = self.ctx(logical_id, resource_type);
        let physical = physical_id.to_string();
        let read = guarded(resource_type, async move {
            p.read(&ctx, &physical, &actual).await
        })
        .await;
        match read {
            Ok(Some(o)) => Some(Arc::new(crate::ops::drift::observation(
                literal,
                o.properties,
            ))),
            _ => None,
        }
    }

    /// Whether resolved properties need a value the stack holds only as the NoEcho mask.
    pub(super) fn carries_mask(&self, properties: &Value) -> bool {
        self.inner
            .lock()
            .stacks
            .get(&self.stack_id)
            .is_some_and(|s| crate::mask::carries_mask(properties, s))
    }

    /// Decides what a create will be called and what it will produce, before any service
    /// call: the journal entry the CREATE_IN_PROGRESS record carries. For a name the template
    /// gave (the identity does not carry the random token), whether something already lives
    /// there is read first: a name that was taken is never this create's to delete later. A
    /// generated name carries a token no one else uses, so existing under it proves the
    /// resource is this create's.
    async fn journal(
        &self,
        logical_id: &str,
        resource_type: &str,
        literal: &Value,
    ) -> PendingCreate {
        let mut journal = PendingCreate {
            name_token: crate::provider::name_token(),
            identity: None,
            existed: false,
        };
        let Some(p) = self.inner.registry.get(resource_type).cloned() else {
            return journal;
        };
        let Ok(actual) = resolve_dynamic(self.inner.world.as_ref(), &self.region, literal).await
        else {
            return journal;
        };
        let ctx = self.ctx_named(logical_id, resource_type, &journal.name_token);
        journal.identity = p.created_identity(&ctx, &actual);
        if let Some(id) = journal.identity.clone()
            && !id.contains(&journal.name_token)
        {
            let read = guarded(
                resource_type,
                async move { p.read(&ctx, &id, &actual).await },
            );
            journal.existed = matches!(read.await, Ok(Some(_)));
        }
        journal
    }

    /// Finds and deletes what a create cut short made: the record's journal names a resource
    /// the service may hold that the stack never recorded (the process died between the
    /// service call and the state write). Deleted rather than adopted (seed 002's fix-forward:
    /// a proven orphan is removed by the next successful operation): it was made from a
    /// template this operation may no longer declare, and a create starts over cleanly under
    /// a new name. Only a proven orphan is touched: one under a generated name, or under a
    /// given name that was free before the call.
    pub(super) async fn reap(&self, rec: &ResourceRecord) -> Result<(), String> {
        let Some(journal) = &rec.pending else {
            return Ok(());
        };
        let Some(identity) = journal.identity.clone().filter(|_| !journal.existed) else {
            return Ok(());
        };
        let Some(p) = self.inner.registry.get(&rec.resource_type).cloned() else {
            return Ok(());
        };
        let actual = resolve_dynamic(self.inner.world.as_ref(), &self.region, &rec.properties)
            .await
            .unwrap_or_else(|_| (*rec.properties).clone());
        let ctx = self.ctx_named(&rec.logical_id, &rec.resource_type, &journal.name_token);
        let (reader, read_ctx, read_id, read_props) =
            (p.clone(), ctx.clone(), identity.clone(), actual.clone());
        let found = guarded(&rec.resource_type, async move {
            reader.read(&read_ctx, &read_id, &read_props).await
        })
        .await;
        let left = |e: ProviderError| {
            format!(
                "cumulo: {identity}, which an interrupted create of {} left, could not be removed: {e}",
                rec.logical_id
            )
        };
        match found {
            Ok(Some(_)) => {}
            Ok(None) | Err(ProviderError::NotFound(_)) => return Ok(()),
            Err(e) => return Err(left(e)),
        }
        let id = identity.clone();
        let deleted = guarded(&rec.resource_type, async move {
            p.delete(&ctx, &id, &actual).await
        })
        .await;
        match deleted {
            Ok(()) | Err(ProviderError::NotFound(_)) => Ok(()),
            Err(e) => Err(left(e)),
        }
    }

    /// Reads back the [`crate::Provider::live_attributes`] of the resources `logical_id` uses
    /// (every resource of the stack with `None`, for the outputs) and records what the service
    /// answers, so the resolution that follows sees them as they are now. A read that fails
    /// leaves the recorded value: the resolution answers as it did before.
    pub(super) async fn refresh_live_attributes(&self, logical_id: Option<&str>) {
        let wanted: Option<Vec<String>> = match (logical_id, &self.prepared) {
            (Some(id), Some(prepared)) => Some(
                prepared
                    .graph
                    .deps
                    .get(id)
                    .map(|deps| deps.iter().cloned().collect())
                    .unwrap_or_default(),
            ),
            (Some(_), None) => return,
            (None, _) => None,
        };
        let targets: Vec<_> = {
            let st = self.inner.lock();
            let Some(stack) = st.stacks.get(&self.stack_id) else {
                return;
            };
            stack
                .resources
                .values()
                .filter(|r| wanted.as_ref().is_none_or(|w| w.contains(&r.logical_id)))
                .filter_map(|r| {
                    let p = self.inner.registry.get(&r.resource_type)?.clone();
                    let physical = r.physical_id.clone()?;
                    (!p.live_attributes().is_empty()).then(|| {
                        (
                            p,
                            r.logical_id.clone(),
                            r.resource_type.clone(),
                            physical,
                            r.properties.clone(),
                        )
                    })
                })
                .collect()
        };
        for (p, logical, rtype, physical, props) in targets {
            let ctx = self.ctx(&logical, &rtype);
            let live = p.live_attributes();
            let reader = p.clone();
            let read = guarded(
                &rtype,
                async move { reader.read(&ctx, &physical, &props).await },
            )
            .await;
            let Ok(Some(observed)) = read else { continue };
            let mut st = self.inner.lock();
            if let Some(rec) = st
                .stacks
                .get_mut(&self.stack_id)
                .and_then(|s| s.resources.get_mut(&logical))
            {
                let attributes = Arc::make_mut(&mut rec.attributes);
                for name in live {
                    if let Some(v) = observed.attributes.get(*name) {
                        attributes.insert(name.to_string(), v.clone());
                    }
                }
            }
        }
    }

    /// Creates one resource through its provider (or as a labelled stub).
    pub(super) async fn provider_create(
        &self,
        logical_id: &str,
        resource_type: &str,
        literal: &Value,
        name_token: &str,
    ) -> Result<(crate::ProviderOutcome, bool), CreateFailed> {
        let actual = resolve_dynamic(self.inner.world.as_ref(), &self.region, literal).await?;
        let ctx = self.ctx_named(logical_id, resource_type, name_token);
        match self.inner.registry.get(resource_type) {
            Some(p) => {
                let (p, ctx) = (p.clone(), ctx.clone());
                let created = guarded(resource_type, async move {
                    let outcome = p.create(&ctx, &actual).await?;
                    check_declared(p.as_ref(), &ctx.resource_type, &outcome);
                    Ok(outcome)
                })
                .await
                .map(|o| (o, false))
                .map_err(CreateFailed::from);
                test_hook::after_create(logical_id).await;
                created
            }
            None if self.inner.config.strict => Err(format!(
                "cumulo: {resource_type} is not emulated (strict mode refuses stubs)"
            )
            .into()),
            None => Ok((
                crate::ProviderOutcome {
                    physical_id: ctx.generated_name(128, ""),
                    attributes: Map::new(),
                    status_reason: Some(format!(
                        "cumulo: {resource_type} is not emulated; nothing was created"
                    )),
                    ..Default::default()
                },
                true,
            )),
        }
    }

    /// Creates a resource that is new in this operation.
    pub async fn create_resource(self: Arc<Self>, logical_id: String) -> bool {
        self.refresh_live_attributes(Some(&logical_id)).await;
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
                    properties: Arc::new(Value::Null),
                    hash: String::new(),
                    attributes: Arc::default(),
                    updated: now_ms(),
                    deletion_policy: None,
                    update_replace_policy: None,
                    metadata: None,
                    depends_on: deps,
                    stub: false,
                    replaced: None,
                    observed: None,
                    pending: None,
                    signals: Vec::new(),
                    secret_attributes: Vec::new(),
                };
                rec.status = "CREATE_FAILED".into();
                self.put(rec, None).await;
                return false;
            }
        };
        let props_text = Some(resolved.properties.to_string());
        let mut rec = self.new_record(&resolved, "CREATE_IN_PROGRESS");
        if let Some(old) = self.record(&logical_id)
            && let Err(reason) = self.reap(&old).await
        {
            rec.status = "CREATE_FAILED".into();
            rec.status_reason = Some(reason);
            rec.pending = old.pending;
            self.put(rec, props_text).await;
            return false;
        }
        if self.carries_mask(&resolved.properties) {
            rec.status = "CREATE_FAILED".into();
            rec.status_reason = Some(crate::mask::refusal(&logical_id));
            self.put(rec, props_text).await;
            return false;
        }
        // Nothing is created that the stack could not record (and so never delete): the
        // record, journaling what the create will make, is durable before the service call.
        let journal = self
            .journal(&logical_id, &resolved.resource_type, &resolved.properties)
            .await;
        let token = journal.name_token.clone();
        rec.pending = Some(journal);
        if !self.put(rec.clone(), props_text.clone()).await {
            return false;
        }
        rec.pending = None;
        if self.halted() {
            rec.status = "CREATE_FAILED".into();
            rec.status_reason = Some(CREATE_CANCELLED.into());
            rec.updated = now_ms();
            self.put(rec, props_text).await;
            return false;
        }
        let wait = match self.wait_of(&resolved) {
            Ok(wait) => wait,
            Err(reason) => {
                rec.status = "CREATE_FAILED".into();
                rec.status_reason = Some(reason);
                rec.updated = now_ms();
                self.put(rec, props_text).await;
                return false;
            }
        };
        match self
            .provider_create(
                &logical_id,
                &resolved.resource_type,
                &resolved.properties,
                &token,
            )
            .await
        {
            Ok((outcome, stub)) => {
                let status_reason = self.take_created(&mut rec, &resolved, outcome, stub).await;
                if !stub && !self.initiated(&rec, &props_text).await {
                    return false;
                }
                // A stub waits for nothing: no instance of it runs to signal.
                if let Some(wait) = wait.filter(|_| !stub && !self.halted())
                    && let Err(reason) = self.await_signals(&mut rec, &props_text, wait).await
                {
                    rec.status = "CREATE_FAILED".into();
                    rec.status_reason = Some(reason);
                    rec.updated = now_ms();
                    self.put(rec, props_text).await;
                    return false;
                }
                rec.updated = now_ms();
                // Another resource failed meanwhile: this one is cancelled, and what its
                // provider made stays recorded so the rollback deletes it.
                let cancelled = self.halted();
                if cancelled {
                    rec.status = "CREATE_FAILED".into();
                    rec.status_reason = Some(CREATE_CANCELLED.into());
                } else {
                    rec.status = "CREATE_COMPLETE".into();
                    rec.status_reason = status_reason;
                }
                self.put(rec, props_text).await && !cancelled
            }
            Err(failed) => {
                // Made, then failed: AWS shows it initiated under its id, and the id stays
                // recorded so the rollback deletes it.
                if let Some(made) = failed.made {
                    rec.physical_id = Some(made);
                    if !self.initiated(&rec, &props_text).await {
                        return false;
                    }
                }
                rec.status = "CREATE_FAILED".into();
                rec.status_reason = Some(failed.reason);
                rec.updated = now_ms();
                self.put(rec, props_text).await;
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
        // A replacement cut short: its journaled resource goes before anything else.
        if let Err(reason) = self.reap(&old).await {
            let mut rec = old.clone();
            rec.status = "UPDATE_FAILED".into();
            rec.status_reason = Some(reason);
            self.put(rec, None).await;
            return false;
        }
        let old = ResourceRecord {
            pending: None,
            ..old
        };
        self.refresh_live_attributes(Some(&logical_id)).await;
        let resolved = match self.resolve(&logical_id) {
            Ok(r) => r,
            Err(reason) => {
                let mut rec = old.clone();
                rec.status = "UPDATE_FAILED".into();
                rec.status_reason = Some(reason);
                self.put(rec, None).await;
                return false;
            }
        };
        let type_changed = resolved.resource_type != old.resource_type;
        // A nested stack is always handed the update: its template may have changed behind
        // an unchanged TemplateURL, and the child itself decides whether anything changed.
        let nested = resolved.resource_type == "AWS::CloudFormation::Stack";
        // Compared in the provider's canonical shape (what it records after narrowing).
        // New stack-level tags reach every taggable resource, its properties unchanged or not.
        let retag = crate::tagging(&resolved.resource_type).taggable() && self.stack_tags_changed();
        let unchanged = !type_changed
            && !retag
            && crate::canonical::same(
                &self.inner.registry,
                &resolved.resource_type,
                &old.properties,
                &resolved.properties,
            );
        if !nested && unchanged && old.status.ends_with("_COMPLETE") {
            // Unchanged: only the attributes that need no provider call may differ.
            let mut rec = old.clone();
            rec.deletion_policy = resolved.deletion_policy.clone();
            rec.update_replace_policy = resolved.update_replace_policy.clone();
            rec.metadata = resolved.metadata.clone().map(Arc::new);
            rec.depends_on = resolved.depends_on.clone();
            if rec != old {
                let mut st = self.inner.lock();
                if let Some(stack) = st.stacks.get_mut(&self.stack_id) {
                    let failed = self.persist(self.inner.save_transition(
                        &self.stack_id,
                        Some(&rec),
                        None,
                        None,
                    ));
                    if let Some(reason) = &failed {
                        rec.status = "UPDATE_FAILED".into();
                        rec.status_reason = Some(reason.clone());
                    }
                    stack.resources.insert(logical_id.clone(), rec);
                    return failed.is_none();
                }
            }
            return true;
        }
        let props_text = Some(resolved.properties.to_string());
        if !unchanged && self.carries_mask(&resolved.properties) {
            let mut failed = old.clone();
            failed.status = "UPDATE_FAILED".into();
            failed.status_reason = Some(crate::mask::refusal(&logical_id));
            failed.updated = now_ms();
            self.put(failed, props_text).await;
            return false;
        }
        let replace = type_changed
            || !schema::replacing_properties(
                &resolved.resource_type,
                &old.properties,
                &resolved.properties,
            )
            .is_empty();
        let action = if replace {
            "Update:Replace"
        } else {
            "Update:Modify"
        };
        if let Err(reason) = crate::ops::policy::check(
            self.update_policy().as_deref(),
            &logical_id,
            &resolved.resource_type,
            action,
        ) {
            let mut denied = old.clone();
            denied.status = "UPDATE_FAILED".into();
            denied.status_reason = Some(reason);
            denied.updated = now_ms();
            self.put(denied, props_text).await;
            return false;
        }
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
            self.put(failed, props_text).await;
            return false;
        }
        let mut rec = self.new_record(&resolved, "UPDATE_IN_PROGRESS");
        rec.physical_id = old.physical_id.clone();
        rec.attributes = old.attributes.clone();
        rec.stub = old.stub;
        // A resumed update (from UPDATE_FAILED) keeps what an earlier attempt superseded.
        rec.replaced = old.replaced.clone();
        if replace {
            rec.status_reason = Some(
                "Requested update requires the creation of a new physical resource; hence creating one."
                    .into(),
            );
        }
        let journal = if replace {
            Some(
                self.journal(&logical_id, &resolved.resource_type, &resolved.properties)
                    .await,
            )
        } else {
            None
        };
        let token = journal
            .as_ref()
            .map(|j| j.name_token.clone())
            .unwrap_or_default();
        rec.pending = journal;
        if !self.put(rec.clone(), props_text.clone()).await {
            return false;
        }
        rec.pending = None;
        rec.status_reason = None;
        if self.halted() {
            // Nothing applied: the record keeps describing the resource as it is.
            let mut cancelled = old.clone();
            cancelled.status = "UPDATE_FAILED".into();
            cancelled.status_reason = Some(UPDATE_CANCELLED.into());
            cancelled.updated = now_ms();
            self.put(cancelled, props_text).await;
            return false;
        }
        if replace {
            match self
                .provider_create(
                    &logical_id,
                    &resolved.resource_type,
                    &resolved.properties,
                    &token,
                )
                .await
            {
                Ok((outcome, stub)) => {
                    let mut previous = old.clone();
                    if let Some(older) = previous.replaced.take() {
                        // Replaced twice (a resumed update): the first one is cleanup's too.
                        self.add_orphan(*older);
                    }
                    let reason = self.take_created(&mut rec, &resolved, outcome, stub).await;
                    rec.replaced = Some(Box::new(previous));
                    if !stub && !self.initiated(&rec, &props_text).await {
                        return false;
                    }
                    rec.status_reason = reason;
                    rec.updated = now_ms();
                    let cancelled = self.halted();
                    if cancelled {
                        rec.status = "UPDATE_FAILED".into();
                        rec.status_reason = Some(UPDATE_CANCELLED.into());
                    } else {
                        rec.status = "UPDATE_COMPLETE".into();
                    }
                    self.put(rec, props_text).await && !cancelled
                }
                Err(CreateFailed { reason, made }) => {
                    // Nothing was replaced: the record keeps describing the original. What the
                    // replacement's create made is retired with the update's other leftovers.
                    if let Some(made) = made {
                        let mut leftover = rec.clone();
                        leftover.physical_id = Some(made);
                        leftover.status = "CREATE_FAILED".into();
                        leftover.replaced = None;
                        self.add_orphan(leftover);
                    }
                    let mut failed = old.clone();
                    failed.status = "UPDATE_FAILED".into();
                    failed.status_reason = Some(reason);
                    failed.updated = now_ms();
                    self.put(failed, props_text).await;
                    false
                }
            }
        } else {
            let physical = old.physical_id.clone().unwrap_or_default();
            let result = if old.stub || self.inner.registry.get(&resolved.resource_type).is_none() {
                Ok(crate::ProviderOutcome {
                    physical_id: physical.clone(),
                    attributes: (*old.attributes).clone(),
                    status_reason: old.status_reason.clone(),
                    ..Default::default()
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
                    record_outcome_extras(&mut rec, &outcome, &resolved.properties);
                    if !outcome.physical_id.is_empty() {
                        if old.physical_id.as_ref() != Some(&outcome.physical_id) {
                            // An update answered with a new physical id (custom resources may)
                            // replaced the resource: the old one is cleanup's to delete, as
                            // CloudFormation does.
                            let mut previous = old.clone();
                            if let Some(older) = previous.replaced.take() {
                                self.add_orphan(*older);
                            }
                            rec.replaced = Some(Box::new(previous));
                        }
                        rec.physical_id = Some(outcome.physical_id);
                    }
                    if !rec.stub
                        && !self.halted()
                        && let Some(physical) = rec.physical_id.clone()
                    {
                        rec.observed = self
                            .observe(
                                &logical_id,
                                &resolved.resource_type,
                                &physical,
                                &resolved.properties,
                            )
                            .await;
                    }
                    rec.attributes = outcome.attributes.into();
                    rec.updated = now_ms();
                    // Applied, but another resource failed meanwhile: cancelled, with the new
                    // properties recorded so the rollback reverts them.
                    let cancelled = self.halted();
                    if cancelled {
                        rec.status = "UPDATE_FAILED".into();
                        rec.status_reason = Some(UPDATE_CANCELLED.into());
                    } else {
                        rec.status = "UPDATE_COMPLETE".into();
                        rec.status_reason = outcome.status_reason;
                    }
                    self.put(rec, props_text).await && !cancelled
                }
                Err(reason) => {
                    // The attempted properties stay recorded so a rollback reverts them.
                    rec.status = "UPDATE_FAILED".into();
                    rec.status_reason = Some(reason);
                    rec.updated = now_ms();
                    self.put(rec, props_text).await;
                    false
                }
            }
        }
    }

    pub(super) async fn provider_update(
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
            let outcome = p.update(&ctx, &physical_id, &old, &new).await?;
            check_declared(p.as_ref(), &ctx.resource_type, &outcome);
            Ok(outcome)
        })
        .await
        .map_err(|e| e.to_string())
    }

    /// Deletes one physical resource. An absent resource is deleted.
    pub(super) async fn provider_delete(&self, rec: &ResourceRecord) -> Result<(), String> {
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
            .unwrap_or_else(|_| (*rec.properties).clone());
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
            None,
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
        .failed
    }

    pub(super) async fn teardown_one(&self, t: &Target) -> bool {
        let mut rec = t.record.clone();
        rec.replaced = None;
        let show = async |rec: &ResourceRecord| match t.mode {
            Record::Detached => self.event_only(rec).await,
            _ => self.put(rec.clone(), None).await,
        };
        if rec.status == "DELETE_COMPLETE" || rec.status == "DELETE_SKIPPED" {
            return true;
        }
        if t.retain && rec.physical_id.is_some() {
            rec.status = "DELETE_SKIPPED".into();
            rec.status_reason = None;
            rec.updated = now_ms();
            let shown = show(&rec).await;
            if t.mode == Record::Remove {
                self.remove(&rec.logical_id).await;
            }
            return shown;
        }
        rec.status = "DELETE_IN_PROGRESS".into();
        rec.status_reason = None;
        rec.updated = now_ms();
        // Deleting is idempotent: the delete goes ahead even if this write failed, and the
        // operation fails at its end (`Op::persist`). So it need not wait for the write: both
        // run at once. The transition is queued on the store's group commit first (a future
        // runs up to its first wait when joined, in order), and a service's own delete queues
        // after it, so the store never holds a deletion without its DELETE_IN_PROGRESS: one
        // commit wait per resource less, which is most of a stack deletion's time. An orphan
        // journaled by an interrupted create is removed first (`reap`).
        let (_, (reaped, deleted)) = tokio::join!(show(&rec), async {
            let reaped = self.reap(&rec).await;
            (reaped, self.provider_delete(&rec).await)
        });
        if reaped.is_ok() {
            rec.pending = None;
        }
        match reaped.and(deleted) {
            Ok(()) => {
                rec.status = "DELETE_COMPLETE".into();
                rec.updated = now_ms();
                let shown = show(&rec).await;
                if shown && t.mode == Record::Remove {
                    self.remove(&rec.logical_id).await;
                }
                shown
            }
            Err(reason) => {
                rec.status = "DELETE_FAILED".into();
                rec.status_reason = Some(reason);
                rec.updated = now_ms();
                show(&rec).await;
                false
            }
        }
    }
}

/// A test-only pause: with `CUMULO_TEST_HANG_AFTER_CREATE=<logical id>` in the environment, the
/// process stops right after that resource's provider create returned and before its state is
/// written, saying so on stderr, so an end-to-end test can `kill -9` it exactly in the window
/// the create journal exists for (tests/e2e/test_direct.py). Unset (always, outside tests), it
/// costs one environment lookup per process.
mod test_hook {
    use std::sync::LazyLock;

    static HANG_AFTER: LazyLock<Option<String>> =
        LazyLock::new(|| std::env::var("CUMULO_TEST_HANG_AFTER_CREATE").ok());

    pub(super) async fn after_create(logical_id: &str) {
        if HANG_AFTER.as_deref() == Some(logical_id) {
            eprintln!(
                "cumulo: test hook: {logical_id} created; hanging before its state is written"
            );
            std::future::pending::<()>().await;
        }
    }
}
