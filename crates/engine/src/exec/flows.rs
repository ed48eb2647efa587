//! The operations' flows: create, update with its cleanup phase, delete, and the rollbacks.

use super::{Op, Record, Target, is_retain, run_dag, stack_event};
use crate::state::{GenerationRows, ResourceRecord, now_ms};
use crate::status::StackStatus;
use std::collections::HashSet;
use std::sync::Arc;

/// Nested stacks whose creation an abort cut short are not recorded by their parent, so no
/// rollback would reach them: abort them too, wait, and delete them.
async fn reap_unrecorded_children(op: &Arc<Op>) {
    let children: Vec<String> = {
        let st = op.inner.lock();
        let recorded: HashSet<&String> = st
            .stacks
            .get(&op.stack_id)
            .map(|s| {
                s.resources
                    .values()
                    .filter_map(|r| r.physical_id.as_ref())
                    .collect()
            })
            .unwrap_or_default();
        st.stacks
            .values()
            .filter(|c| {
                c.parent_id.as_deref() == Some(op.stack_id.as_str())
                    && c.status != StackStatus::DELETE_COMPLETE
                    && !recorded.contains(&c.stack_id)
            })
            .map(|c| c.stack_id.clone())
            .collect()
    };
    let engine = crate::engine::Engine {
        inner: op.inner.clone(),
    };
    let caller = crate::api::Caller {
        region: op.region.clone(),
        account_id: op.account_id.clone(),
        request_id: op.token.clone(),
        host: op.host.clone(),
    };
    for child in children {
        let running = op
            .inner
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&child)
            .cloned();
        if let Some(r) = running {
            r.abort.send_replace(true);
            super::wait_done(&r).await;
        }
        let input = crate::api::DeleteStackInput {
            stack_name: child,
            ..Default::default()
        };
        if let Ok(Some(r)) = crate::ops::delete::start_delete(&engine, &caller, input) {
            super::wait_done(&r).await;
        }
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
    let out = run_dag(
        nodes,
        deps,
        op.inner.config.parallelism,
        false,
        Some(op.abort.clone()),
        move |logical| {
            let op = worker.clone();
            async move {
                let ok = op.clone().create_resource(logical).await;
                if !ok {
                    op.halt();
                }
                ok
            }
        },
    )
    .await;
    op.mark_cancelled(&out.cancelled).await;
    if !out.cancelled.is_empty() {
        reap_unrecorded_children(&op).await;
    }
    // DeleteStack cancelled this create: the delete takes the stack from here.
    if op.taken_over() {
        return;
    }
    // Otherwise a create is only ever aborted by its TimeoutInMinutes.
    let reason = if op.cancelled() {
        Some("Stack creation time exceeded the specified timeout.".to_string())
    } else if !out.failed.is_empty() {
        Some(failed_list("create", &out.failed))
    } else {
        op.refresh_live_attributes(None).await;
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
    let Some(targets) = op.with_stack(|stack| {
        stack
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
            .collect::<Vec<Target>>()
    }) else {
        return;
    };
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
    let mut names: Vec<String> = op
        .with_stack(|stack| {
            stack
                .resources
                .values()
                .filter(|r| r.status.ends_with("_FAILED"))
                .map(|r| r.logical_id.clone())
                .collect()
        })
        .unwrap_or_default();
    if names.is_empty() {
        names = failed.to_vec();
    }
    names
}

/// Deletes the stack's resources and completes the deletion (DeleteStack, OnFailure=DELETE).
pub(crate) async fn delete_resources(op: &Arc<Op>, during_create: bool) {
    let Some(targets) = op.with_stack(|stack| {
        stack
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
            .collect::<Vec<Target>>()
    }) else {
        return;
    };
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
    // A deleted stack's change sets go with it; first, so that a failed write leaves a
    // DELETE_FAILED stack rather than change sets of a deleted one.
    let change_sets: Vec<String> = st
        .change_sets
        .values()
        .filter(|c| c.stack_id == op.stack_id)
        .map(|c| c.change_set_id.clone())
        .collect();
    for id in change_sets {
        if op.persist(op.inner.remove_change_set(&id)).is_none() {
            st.change_sets.shift_remove(&id);
        }
    }
    // Any write of the deletion that failed fails it (set_status makes this DELETE_FAILED).
    if op.lost().is_some() {
        drop(st);
        op.set_status(StackStatus::DELETE_COMPLETE, None);
        return;
    }
    let seq = st.next_seq;
    st.next_seq += 1;
    let Some(stack) = st.stacks.get_mut(&op.stack_id) else {
        return;
    };
    stack.status = StackStatus::DELETE_COMPLETE;
    stack.status_reason = None;
    stack.deleted = Some(now_ms());
    let ev = stack_event(stack, seq, &op.token, None);
    let failed = op.persist(op.inner.save_stack(stack)).or_else(|| {
        op.persist(
            op.inner
                .save_transition(&op.stack_id, None, None, Some(&ev)),
        )
    });
    if failed.is_some() {
        stack.deleted = None;
        drop(st);
        op.set_status(StackStatus::DELETE_COMPLETE, None);
        return;
    }
    stack.events.push(ev.clone());
    let arns = stack.notification_arns.clone();
    let key = (stack.region.clone(), stack.stack_name.clone());
    if st.names.get(&key) == Some(&op.stack_id) {
        st.names.remove(&key);
    }
    drop(st);
    op.notify(&arns, &ev);
}

/// Runs an update: creates new resources, updates or replaces changed ones in dependency order,
/// then cleans up (success) or rolls back (failure).
pub(crate) async fn run_update(op: Arc<Op>) {
    let (nodes, deps) = op.template_deps();
    let worker = op.clone();
    // A removal the stack policy denies fails the update before anything changes.
    let denied = op.denied_removals().await;
    let out = if !denied.is_empty() {
        super::dag::DagOutcome {
            failed: denied,
            ..Default::default()
        }
    } else {
        run_dag(
            nodes,
            deps,
            op.inner.config.parallelism,
            false,
            Some(op.abort.clone()),
            move |logical| {
                let op = worker.clone();
                async move {
                    let ok = op.clone().update_resource(logical).await;
                    if !ok {
                        op.halt();
                    }
                    ok
                }
            },
        )
        .await
    };
    op.mark_cancelled(&out.cancelled).await;
    if !out.cancelled.is_empty() {
        reap_unrecorded_children(&op).await;
    }
    let failed = out.failed;
    let reason = if op.cancelled() {
        Some("Stack update cancelled".to_string())
    } else if !failed.is_empty() {
        let (mut created, mut updated) = (Vec::new(), Vec::new());
        for f in failed {
            let was_new = op
                .with_stack(|s| s.resources.get(&f).map(|r| r.status == "CREATE_FAILED"))
                .flatten()
                .unwrap_or(false);
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
    } else {
        op.refresh_live_attributes(None).await;
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
                    let mut changed = Vec::new();
                    for r in stack.resources.values_mut() {
                        if r.replaced.is_some() {
                            r.replaced = None;
                            changed.push(r.logical_id.clone());
                        }
                    }
                    op.persist(
                        op.inner
                            .save_stack_with(stack, &changed, GenerationRows::Keep),
                    );
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
    let live: HashSet<String> = op
        .prepared
        .as_ref()
        .map(|p| p.live.iter().cloned().collect())
        .unwrap_or_default();
    let Some(targets) = op.with_stack(|stack| {
        let mut targets: Vec<Target> = stack
            .orphans
            .iter()
            .map(|o| Target {
                record: o.clone(),
                retain: is_retain(o.update_replace_policy.as_deref()),
                mode: Record::Detached,
            })
            .collect();
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
        targets
    }) else {
        return;
    };
    let failed = op.teardown(targets, true).await;
    {
        let mut st = op.inner.lock();
        // Only when there were some: the row carries the previous generation (every resource
        // again), a few milliseconds to write for a large stack, for nothing.
        if let Some(s) = st.stacks.get_mut(&op.stack_id)
            && !s.orphans.is_empty()
        {
            s.orphans.clear();
            op.persist(op.inner.save_stack(s));
        }
    }
    // What could not be deleted leaves the stack: the update succeeded without it.
    for logical in failed_names(op, &failed) {
        if !live.contains(&logical) {
            op.remove(&logical).await;
        }
    }
}

/// Rolls a failed update back: restores the previous template, parameters and tags, reverts
/// resources updated in place, retires replacements and deletes what the update created.
/// `skip` names resources (of this stack) to leave untouched and record as rolled back.
pub(crate) async fn rollback_update(op: &Arc<Op>, skip: &[String]) {
    let Some((prev, orphans)) = op.with_stack(|s| (s.previous.clone(), s.orphans.clone())) else {
        return;
    };
    let Some(prev) = prev else {
        op.set_status(StackStatus::UPDATE_ROLLBACK_COMPLETE, None);
        return;
    };
    // The failed update's stack tags, which taggable resources are reverted from.
    let tags_changed = op.stack_tags_changed();
    {
        let mut st = op.inner.lock();
        if let Some(s) = st.stacks.get_mut(&op.stack_id) {
            s.template_body = prev.template_body.clone();
            s.original_body = prev.original_body.clone();
            s.description = prev.description.clone();
            s.parameters = prev.parameters.clone();
            s.tags = prev.tags.clone();
            s.outputs = prev.outputs.clone();
            s.notification_arns = prev.notification_arns.clone();
            s.capabilities = prev.capabilities.clone();
            s.imports = prev.imports.clone();
            op.persist(op.inner.save_stack(s));
        }
    }
    let mut failures = Vec::new();
    let mut retire: Vec<ResourceRecord> = orphans;
    for (logical, p) in &prev.resources {
        let Some(cur) = op.record(logical) else {
            op.put(restored(p), None).await;
            continue;
        };
        if skip.contains(logical) {
            let mut rec = restored(p);
            rec.status_reason = Some("Resource skipped during rollback".into());
            op.put(rec, None).await;
            continue;
        }
        if let Some(older) = &cur.replaced {
            // The replacement goes; so does what it replaced unless that is the original.
            retire.push((**older).clone());
            let mut newer = cur.clone();
            newer.replaced = None;
            retire.push(newer);
            op.put(restored(p), None).await;
        } else if cur.physical_id != p.physical_id {
            if cur.physical_id.is_some() {
                retire.push(cur.clone());
            }
            op.put(restored(p), None).await;
        } else if cur.hash != p.hash
            || (tags_changed && crate::tagging(&cur.resource_type).taggable())
        {
            let mut rec = cur.clone();
            rec.status = "UPDATE_IN_PROGRESS".into();
            rec.status_reason = None;
            op.put(rec.clone(), None).await;
            let physical = cur.physical_id.clone().unwrap_or_default();
            let result = if cur.stub || op.inner.registry.get(&cur.resource_type).is_none() {
                Ok(crate::ProviderOutcome {
                    physical_id: physical.clone(),
                    attributes: (*p.attributes).clone(),
                    status_reason: p.status_reason.clone(),
                    ..Default::default()
                })
            } else if op.carries_mask(&p.properties) {
                // The previous generation was recorded masked (a process restarted since):
                // its clear value is unknown, and the mask is never sent.
                Err(crate::mask::refusal(logical))
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
                    rec.attributes = outcome.attributes.into();
                    op.put(rec, None).await;
                }
                Err(reason) => {
                    rec.status = "UPDATE_FAILED".into();
                    rec.status_reason = Some(reason);
                    op.put(rec, None).await;
                    failures.push(logical.clone());
                }
            }
        } else if cur.status.ends_with("_FAILED") {
            op.put(restored(p), None).await;
        }
    }
    // A physical resource the previous generation still holds is restored, never retired.
    retire.retain(|r| {
        prev.resources
            .get(&r.logical_id)
            .is_none_or(|p| p.physical_id != r.physical_id)
    });
    let save_orphans = |op: &Op, orphans: Vec<ResourceRecord>| {
        let mut st = op.inner.lock();
        if let Some(s) = st.stacks.get_mut(&op.stack_id) {
            s.orphans = orphans;
            op.persist(op.inner.save_stack(s));
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
    let current = op.with_stack(|s| s.resources.clone()).unwrap_or_default();
    for r in current.values().rev() {
        if prev.resources.contains_key(&r.logical_id) {
            continue;
        }
        if skip.contains(&r.logical_id) {
            op.remove(&r.logical_id).await;
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
                r.replaced = None;
            }
            s.resources = ordered;
            s.previous = None;
            op.persist(op.inner.save_stack_full(s));
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
    rec.updated = now_ms();
    rec
}
