//! REPORT.md: the assessment as Markdown, for a person deciding whether to run the runbook.

use super::{Assessment, Disposition, Fate};
use crate::inventory::model::Inventory;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Pipes and newlines would break a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

fn disposition_name(d: Disposition) -> &'static str {
    match d {
        Disposition::HandOff => "handed off to Terraform",
        Disposition::Keep => "kept",
        Disposition::Blocked => "blocked",
    }
}

pub fn render(inv: &Inventory, a: &Assessment) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# Migration report\n");
    let _ = writeln!(
        md,
        "Inventory of account {} in {}, taken {} from {} by {} (content SHA-256 {}).\n",
        inv.account,
        inv.region,
        inv.taken_at,
        inv.endpoint.as_deref().unwrap_or("AWS"),
        inv.taken_by,
        inv.content_sha256
    );

    let mut counts: BTreeMap<Fate, usize> = BTreeMap::new();
    for r in a.stacks.iter().flat_map(|s| &s.resources) {
        *counts.entry(r.fate).or_default() += 1;
    }
    for o in &a.out_of_band {
        *counts.entry(o.fate).or_default() += 1;
    }
    let _ = writeln!(md, "## Summary\n");
    let _ = writeln!(md, "| Fate | Count |\n| --- | --- |");
    for (fate, n) in &counts {
        let _ = writeln!(md, "| {} | {n} |", fate.name());
    }
    let _ = writeln!(md);
    for s in &a.stacks {
        let _ = writeln!(
            md,
            "- **{}**{}: {} ({})",
            s.name,
            s.copilot_kind
                .map(|k| format!(" (Copilot {k:?})").to_lowercase())
                .unwrap_or_default(),
            disposition_name(s.disposition),
            s.reason
        );
    }

    for s in &a.stacks {
        let _ = writeln!(md, "\n## Stack {}\n", s.name);
        let _ = writeln!(md, "{}: {}.\n", disposition_name(s.disposition), s.reason);
        let _ = writeln!(
            md,
            "| Logical id | Type | Physical id | Fate | Reason |\n| --- | --- | --- | --- | --- |"
        );
        for r in &s.resources {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                cell(&r.logical_id),
                cell(&r.resource_type),
                cell(r.physical_id.as_deref().unwrap_or("")),
                r.fate.name(),
                cell(&r.reason)
            );
        }
        if !s.references.is_empty() {
            let _ = writeln!(
                md,
                "\nParameters naming resources the stack does not own:\n"
            );
            for r in &s.references {
                let _ = writeln!(
                    md,
                    "- {} = {}: {} ({})",
                    r.parameter,
                    r.value,
                    r.fate.name(),
                    r.reason
                );
            }
        }
        if !s.handlers.is_empty() {
            let _ = writeln!(md, "\n### Custom-resource Delete handlers\n");
            let _ = writeln!(
                md,
                "| Resource | Type | Code | Destructive | Delete does | Would destroy |\n| --- | --- | --- | --- | --- | --- |"
            );
            for h in &s.handlers {
                let destructive = match h.destructive {
                    Some(true) => "yes",
                    Some(false) => "no",
                    None => "unknown",
                };
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {destructive} | {} | {} |",
                    cell(&h.logical_id),
                    cell(&h.resource_type),
                    cell(&h.code),
                    cell(&h.on_delete),
                    cell(&h.would_destroy.join("; "))
                );
            }
        }
    }

    if !a.out_of_band.is_empty() {
        let _ = writeln!(md, "\n## Objects outside the stacks\n");
        let _ = writeln!(
            md,
            "| Kind | Id | Fate | Reason |\n| --- | --- | --- | --- |"
        );
        for o in &a.out_of_band {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                o.kind,
                cell(&o.id),
                o.fate.name(),
                cell(&o.reason)
            );
        }
    }

    if !a.cascades.is_empty() {
        let _ = writeln!(md, "\n## Env-controller cascades\n");
        for c in &a.cascades {
            let _ = writeln!(
                md,
                "### Deleting {} (workload {}) updates {}\n",
                c.workload_stack, c.workload, c.env_stack
            );
            if let Some(problem) = &c.problem {
                let _ = writeln!(md, "Not evaluated: {problem}.\n");
                continue;
            }
            for (k, before, after) in &c.parameter_changes {
                let _ = writeln!(md, "- parameter {k}: `{before}` → `{after}`");
            }
            if c.parameter_changes.is_empty() {
                let _ = writeln!(md, "- no parameter changes: the env stack is not updated");
            }
            if c.removed.is_empty() {
                let _ = writeln!(md, "- no env resource is removed");
            } else {
                let _ = writeln!(md, "- env resources deleted by the update:");
                for (logical, kind, pid) in &c.removed {
                    let _ = writeln!(
                        md,
                        "  - {logical} ({kind}) {}",
                        pid.as_deref().unwrap_or("")
                    );
                }
            }
            for h in &c.handlers_fired {
                let _ = writeln!(md, "- handler: {h}");
            }
            let _ = writeln!(md);
        }
    }

    let _ = writeln!(md, "\n## What a plain DeleteStack would destroy\n");
    for d in &a.delete_stack {
        let _ = writeln!(md, "### {}\n", d.stack);
        if d.destroyed.is_empty() && d.handlers.is_empty() {
            let _ = writeln!(md, "- nothing");
        }
        for line in &d.destroyed {
            let _ = writeln!(md, "- deleted: {line}");
        }
        for line in &d.handlers {
            let _ = writeln!(md, "- handler: {line}");
        }
        for line in &d.retained {
            let _ = writeln!(md, "- retained: {line}");
        }
        let _ = writeln!(md);
    }
    md
}
