//! REPORT.html: the assessment with each stack's resource graph drawn as SVG, fates as
//! colours. The graph is the template's own dependency graph (Ref, Fn::GetAtt, DependsOn) for
//! the resources live under the stack's recorded parameters, laid out in provisioning levels:
//! a resource's dependencies are in columns to its left. Self-contained: no script, no fetch.

use super::cascade::prepared;
use super::{Assessment, Fate, StackVerdict};
use crate::inventory::model::{Inventory, Stack};
use indexmap::IndexMap;
use std::collections::BTreeMap;
use std::fmt::Write;

fn colour(fate: Fate) -> &'static str {
    match fate {
        Fate::Import => "#2e7d32",
        Fate::RetainUnderExistingOwner => "#1565c0",
        Fate::ManualCleanup => "#ef6c00",
        Fate::ExternalReference => "#6a1b9a",
        Fate::Blocked => "#c62828",
        Fate::NestedWrapper => "#546e7a",
        Fate::NotCreated => "#9e9e9e",
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const NODE_W: usize = 220;
const NODE_H: usize = 26;
const COL_GAP: usize = 60;
const ROW_GAP: usize = 10;

/// The stack's graph as SVG, or why it could not be drawn.
fn graph(inv: &Inventory, stack: &Stack, verdict: &StackVerdict) -> String {
    let given: IndexMap<String, String> = stack
        .parameters
        .iter()
        .map(|p| (p.key.clone(), p.value.clone()))
        .collect();
    let prepared = match prepared(stack, &inv.region, &inv.account, &given) {
        Ok(p) => p,
        Err(why) => {
            return format!(
                "<p>No graph: the template could not be evaluated ({}).</p>",
                esc(&why)
            );
        }
    };
    let fates: BTreeMap<&str, Fate> = verdict
        .resources
        .iter()
        .map(|r| (r.logical_id.as_str(), r.fate))
        .collect();
    let mut at: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (col, level) in prepared.levels.iter().enumerate() {
        for (row, id) in level.iter().enumerate() {
            at.insert(id.as_str(), (col, row));
        }
    }
    let cols = prepared.levels.len().max(1);
    let rows = prepared.levels.iter().map(Vec::len).max().unwrap_or(1);
    let width = cols * (NODE_W + COL_GAP);
    let height = rows * (NODE_H + ROW_GAP) + ROW_GAP;
    let pos =
        |(c, r): (usize, usize)| (c * (NODE_W + COL_GAP) + 4, r * (NODE_H + ROW_GAP) + ROW_GAP);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">"
    );
    for (id, deps) in &prepared.graph.deps {
        let Some(&to) = at.get(id.as_str()) else {
            continue;
        };
        for dep in deps {
            let Some(&from) = at.get(dep.as_str()) else {
                continue;
            };
            let ((x1, y1), (x2, y2)) = (pos(from), pos(to));
            let _ = write!(
                svg,
                "<line x1=\"{}\" y1=\"{}\" x2=\"{x2}\" y2=\"{}\" stroke=\"#bbb\"/>",
                x1 + NODE_W,
                y1 + NODE_H / 2,
                y2 + NODE_H / 2
            );
        }
    }
    for (id, &cell) in &at {
        let (x, y) = pos(cell);
        let fate = fates.get(id).copied().unwrap_or(Fate::NotCreated);
        let _ = write!(
            svg,
            "<g><title>{} {}</title><rect x=\"{x}\" y=\"{y}\" width=\"{NODE_W}\" height=\"{NODE_H}\" rx=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"{}\" fill=\"#fff\">{}</text></g>",
            esc(id),
            fate.name(),
            colour(fate),
            x + 6,
            y + 17,
            esc(&id.chars().take(34).collect::<String>())
        );
    }
    svg.push_str("</svg>");
    svg
}

pub fn render(inv: &Inventory, a: &Assessment) -> String {
    let mut h = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Migration report</title><style>\
         body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin:1em 0}\
         td,th{border:1px solid #ddd;padding:3px 6px;font-size:13px;text-align:left}\
         .fate{color:#fff;border-radius:3px;padding:1px 5px;white-space:nowrap}.graph{overflow-x:auto;border:1px solid #eee}\
         </style></head><body><h1>Migration report</h1>",
    );
    let _ = write!(
        h,
        "<p>Account {} in {}, taken {} (content SHA-256 <code>{}</code>).</p><p>",
        esc(&inv.account),
        esc(&inv.region),
        esc(&inv.taken_at),
        esc(&inv.content_sha256)
    );
    for fate in [
        Fate::Import,
        Fate::RetainUnderExistingOwner,
        Fate::ManualCleanup,
        Fate::ExternalReference,
        Fate::Blocked,
        Fate::NestedWrapper,
        Fate::NotCreated,
    ] {
        let _ = write!(
            h,
            "<span class=\"fate\" style=\"background:{}\">{}</span> ",
            colour(fate),
            fate.name()
        );
    }
    h.push_str("</p>");
    for (stack, verdict) in inv.stacks.iter().zip(&a.stacks) {
        let _ = write!(
            h,
            "<h2 id=\"{0}\">Stack {0}</h2><p>{1}</p><div class=\"graph\">{2}</div>",
            esc(&stack.name),
            esc(&verdict.reason),
            graph(inv, stack, verdict)
        );
        h.push_str("<table><tr><th>Logical id</th><th>Type</th><th>Physical id</th><th>Fate</th><th>Reason</th></tr>");
        for r in &verdict.resources {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td><span class=\"fate\" style=\"background:{}\">{}</span></td><td>{}</td></tr>",
                esc(&r.logical_id),
                esc(&r.resource_type),
                esc(r.physical_id.as_deref().unwrap_or("")),
                colour(r.fate),
                r.fate.name(),
                esc(&r.reason)
            );
        }
        h.push_str("</table>");
    }
    // The rest reads as well as text: the Markdown report's later sections, verbatim.
    let md = super::markdown::render(inv, a);
    if let Some(rest) = md.find("\n## Objects outside the stacks") {
        let _ = write!(h, "<pre>{}</pre>", esc(&md[rest..]));
    }
    h.push_str("</body></html>\n");
    h
}
