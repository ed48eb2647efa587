//! The resource dependency graph: edges from DependsOn, Ref, Fn::GetAtt and Fn::Sub (never from
//! dynamic references), read after conditions are known so an untaken Fn::If branch adds
//! nothing. Gives a deterministic provisioning order, parallel levels, and AWS's errors for
//! unresolved references and cycles.

use crate::Diagnostic;
use crate::context::is_pseudo;
use crate::errors::{self, Block};
use crate::intrinsics::{SubPart, parse_sub};
use crate::model::Template;
use indexmap::{IndexMap, IndexSet};
use serde_json::Value;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How a reference was written; GetAtt to an undefined resource has its own error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    Ref,
    GetAtt,
    Sub,
    DependsOn,
}

/// A name a value refers to (a resource, parameter or pseudo parameter).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub target: String,
    pub kind: RefKind,
}

/// Collects the references in an unevaluated value. Where a condition is known, only the taken
/// Fn::If branch counts.
pub fn references(v: &Value, conditions: &IndexMap<String, bool>, out: &mut Vec<Reference>) {
    match v {
        Value::Object(obj) => {
            if obj.len() == 1
                && let Some((key, arg)) = obj.iter().next()
                && function_references(key, arg, conditions, out)
            {
                return;
            }
            for item in obj.values() {
                references(item, conditions, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                references(item, conditions, out);
            }
        }
        _ => {}
    }
}

/// Handles the functions that reference names; false for anything else.
fn function_references(
    key: &str,
    arg: &Value,
    conditions: &IndexMap<String, bool>,
    out: &mut Vec<Reference>,
) -> bool {
    let push = |out: &mut Vec<Reference>, target: &str, kind| {
        if !is_pseudo(target) {
            out.push(Reference {
                target: target.to_string(),
                kind,
            });
        }
    };
    match key {
        "Ref" => {
            if let Some(t) = static_name(arg) {
                // `Ref: Resource.Attribute` is read as Fn::GetAtt.
                match t.split_once('.') {
                    Some((r, _)) => push(out, r, RefKind::GetAtt),
                    None => push(out, &t, RefKind::Ref),
                }
            }
            true
        }
        "Fn::GetAtt" => {
            match arg {
                Value::String(s) => {
                    if let Some((r, _)) = s.split_once('.') {
                        push(out, r, RefKind::GetAtt);
                    }
                }
                Value::Array(items) => {
                    if let Some(r) = items.first().and_then(static_name) {
                        push(out, &r, RefKind::GetAtt);
                    }
                    for item in items.iter().skip(1) {
                        references(item, conditions, out);
                    }
                }
                _ => {}
            }
            true
        }
        "Fn::Sub" => {
            let (text, locals) = match arg {
                Value::String(s) => (s.as_str(), None),
                Value::Array(items) => match items.first() {
                    Some(Value::String(s)) => (s.as_str(), items.get(1).and_then(Value::as_object)),
                    _ => return false,
                },
                _ => return false,
            };
            for part in parse_sub(text) {
                if let SubPart::Var(name) = part {
                    if locals.is_some_and(|l| l.contains_key(name)) {
                        continue;
                    }
                    let target = name.split_once('.').map_or(name, |(r, _)| r);
                    if !target.is_empty() {
                        push(out, target, RefKind::Sub);
                    }
                }
            }
            if let Some(l) = locals {
                for v in l.values() {
                    references(v, conditions, out);
                }
            }
            true
        }
        "Fn::If" => {
            if let Some([Value::String(c), a, b]) = arg.as_array().map(Vec::as_slice)
                && let Some(holds) = conditions.get(c)
            {
                references(if *holds { a } else { b }, conditions, out);
                return true;
            }
            false
        }
        _ => false,
    }
}

/// A name written as a string, or (language extensions, after Fn::ForEach substitution) as an
/// Fn::Sub without variables.
fn static_name(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Object(obj) if obj.len() == 1 => match obj.get("Fn::Sub") {
            Some(Value::String(s)) => parse_sub(s)
                .into_iter()
                .map(|p| match p {
                    SubPart::Literal(l) => Some(l.to_string()),
                    SubPart::Escaped(l) => Some(format!("${{{l}}}")),
                    SubPart::Var(_) => None,
                })
                .collect(),
            _ => None,
        },
        _ => None,
    }
}

/// Resource → the resources it depends on, for the live resources, in template order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DependencyGraph {
    pub deps: IndexMap<String, IndexSet<String>>,
}

impl DependencyGraph {
    /// Builds the graph over the live resources and checks every reference in the live
    /// resources and outputs, collecting AWS's errors.
    pub fn build(
        template: &Template,
        live: &IndexSet<String>,
        live_outputs: &[String],
        conditions: &IndexMap<String, bool>,
    ) -> (DependencyGraph, Vec<Diagnostic>) {
        let mut graph = DependencyGraph::default();
        let mut diagnostics = Vec::new();
        let mut unresolved: Vec<String> = Vec::new();
        let mut refs = Vec::new();
        for id in live {
            let Some(r) = template.resources.get(id) else {
                continue;
            };
            refs.clear();
            references(&r.properties, conditions, &mut refs);
            for extra in [
                &r.metadata,
                &r.creation_policy,
                &r.update_policy,
                &r.deletion_policy,
                &r.update_replace_policy,
            ]
            .into_iter()
            .flatten()
            {
                references(extra, conditions, &mut refs);
            }
            refs.extend(r.depends_on.iter().map(|d| Reference {
                target: d.clone(),
                kind: RefKind::DependsOn,
            }));
            let mut deps = IndexSet::new();
            for reference in &refs {
                let t = &reference.target;
                // DependsOn names only resources; the others may name parameters.
                if reference.kind != RefKind::DependsOn && template.parameters.contains_key(t) {
                    continue;
                }
                if live.contains(t) {
                    deps.insert(t.clone());
                } else if reference.kind == RefKind::GetAtt && !template.resources.contains_key(t) {
                    let d = errors::getatt_undefined(t).with_path(format!("Resources/{id}"));
                    if !diagnostics.contains(&d) {
                        diagnostics.push(d);
                    }
                } else if !unresolved.contains(t) {
                    unresolved.push(t.clone());
                }
            }
            graph.deps.insert(id.clone(), deps);
        }
        if !unresolved.is_empty() {
            diagnostics.insert(
                0,
                errors::unresolved_dependencies(&unresolved, Block::Resources),
            );
        }
        let mut unresolved_outputs: Vec<String> = Vec::new();
        for name in live_outputs {
            let Some(o) = template.outputs.get(name) else {
                continue;
            };
            refs.clear();
            references(&o.value, conditions, &mut refs);
            if let Some(e) = &o.export_name {
                references(e, conditions, &mut refs);
            }
            for reference in &refs {
                let t = &reference.target;
                if template.parameters.contains_key(t) || live.contains(t) {
                    continue;
                }
                if reference.kind == RefKind::GetAtt && !template.resources.contains_key(t) {
                    diagnostics
                        .push(errors::getatt_undefined(t).with_path(format!("Outputs/{name}")));
                } else if !unresolved_outputs.contains(t) {
                    unresolved_outputs.push(t.clone());
                }
            }
        }
        if !unresolved_outputs.is_empty() {
            diagnostics.push(errors::unresolved_dependencies(
                &unresolved_outputs,
                Block::Outputs,
            ));
        }
        (graph, diagnostics)
    }

    /// A topological order: every resource after its dependencies; among resources that are
    /// ready together, template order. Cycles are errors naming the resources in each cycle.
    pub fn order(&self) -> Result<Vec<String>, Vec<Diagnostic>> {
        let index: IndexMap<&str, usize> = self
            .deps
            .keys()
            .enumerate()
            .map(|(i, k)| (k.as_str(), i))
            .collect();
        let n = index.len();
        let mut pending = vec![0usize; n];
        let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, deps) in self.deps.values().enumerate() {
            for d in deps {
                if let Some(&j) = index.get(d.as_str()) {
                    pending[i] += 1;
                    dependents[j].push(i);
                }
            }
        }
        let mut ready: BinaryHeap<Reverse<usize>> =
            (0..n).filter(|&i| pending[i] == 0).map(Reverse).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(Reverse(i)) = ready.pop() {
            order.push(i);
            for &j in &dependents[i] {
                pending[j] -= 1;
                if pending[j] == 0 {
                    ready.push(Reverse(j));
                }
            }
        }
        let names: Vec<&String> = self.deps.keys().collect();
        if order.len() == n {
            return Ok(order.into_iter().map(|i| names[i].clone()).collect());
        }
        Err(self
            .cycles(&pending)
            .into_iter()
            .map(|c| errors::circular_resources(&c))
            .collect())
    }

    /// Resources grouped so each level depends only on earlier levels: a level can be
    /// provisioned in parallel. Empty when the graph has a cycle.
    pub fn levels(&self) -> Vec<Vec<String>> {
        let Ok(order) = self.order() else {
            return Vec::new();
        };
        let mut level_of: IndexMap<&str, usize> = IndexMap::with_capacity(order.len());
        let mut levels: Vec<Vec<String>> = Vec::new();
        for id in &order {
            let level = self.deps.get(id).map_or(0, |deps| {
                deps.iter()
                    .filter_map(|d| level_of.get(d.as_str()))
                    .map(|l| l + 1)
                    .max()
                    .unwrap_or(0)
            });
            level_of.insert(id, level);
            if levels.len() <= level {
                levels.resize(level + 1, Vec::new());
            }
            levels[level].push(id.clone());
        }
        levels
    }

    /// The strongly connected components with a cycle among the nodes Kahn's algorithm could
    /// not place (`pending > 0`), each in template order.
    fn cycles(&self, pending: &[usize]) -> Vec<Vec<String>> {
        let names: Vec<&String> = self.deps.keys().collect();
        let stuck: IndexSet<usize> = (0..names.len()).filter(|&i| pending[i] > 0).collect();
        // Iterative Tarjan over the stuck subgraph.
        let n = names.len();
        let mut idx = vec![usize::MAX; n];
        let mut low = vec![0usize; n];
        let mut on_stack = vec![false; n];
        let mut stack = Vec::new();
        let mut counter = 0;
        let mut out = Vec::new();
        let succ = |i: usize| -> Vec<usize> {
            self.deps[i]
                .iter()
                .filter_map(|d| self.deps.get_index_of(d))
                .filter(|j| stuck.contains(j))
                .collect()
        };
        for &start in &stuck {
            if idx[start] != usize::MAX {
                continue;
            }
            let mut work: Vec<(usize, Vec<usize>, usize)> = vec![(start, succ(start), 0)];
            idx[start] = counter;
            low[start] = counter;
            counter += 1;
            stack.push(start);
            on_stack[start] = true;
            while let Some((v, children, pos)) = work.last_mut() {
                let v = *v;
                if *pos < children.len() {
                    let w = children[*pos];
                    *pos += 1;
                    if idx[w] == usize::MAX {
                        idx[w] = counter;
                        low[w] = counter;
                        counter += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        work.push((w, succ(w), 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(idx[w]);
                    }
                } else {
                    work.pop();
                    if let Some((parent, _, _)) = work.last() {
                        low[*parent] = low[*parent].min(low[v]);
                    }
                    if low[v] == idx[v] {
                        let mut component = Vec::new();
                        while let Some(w) = stack.pop() {
                            on_stack[w] = false;
                            component.push(w);
                            if w == v {
                                break;
                            }
                        }
                        let self_loop = component.len() == 1 && succ(v).contains(&v);
                        if component.len() > 1 || self_loop {
                            component.sort_unstable();
                            out.push(component.into_iter().map(|i| names[i].clone()).collect());
                        }
                    }
                }
            }
        }
        out.sort();
        out
    }
}
