//! The resource dependency graph: edges from DependsOn, Ref, Fn::GetAtt and Fn::Sub (never from
//! dynamic references), read after conditions are known so an untaken Fn::If branch adds
//! nothing. Gives a deterministic provisioning order, parallel levels, and AWS's errors for
//! unresolved references and cycles.

use crate::Diagnostic;
use crate::context::is_pseudo;
use crate::errors::{self, Block};
use crate::intrinsics::{SubPart, sub_parts};
use crate::model::Template;
use crate::value::Value;
use crate::{NameMap, NameSet};
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt::Write;

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
    /// Where, relative to the walked value (`Properties/Tags/0/Value`), for diagnostics.
    pub path: String,
}

/// Collects the references in an unevaluated value whose own path is `base`. Where a condition
/// is known, only the taken Fn::If branch counts.
pub fn references(
    v: &Value,
    base: &str,
    conditions: &NameMap<String, bool>,
    out: &mut Vec<Reference>,
) {
    let mut found = Vec::new();
    let mut walker = Walker {
        conditions,
        out: &mut found,
        base: Some(base),
        segments: Vec::new(),
    };
    walker.walk(v);
    out.extend(found.into_iter().map(|f| Reference {
        target: f.target.into_owned(),
        kind: f.kind,
        path: f.path,
    }));
}

/// A reference as the walk finds it: the target borrowed from the walked value where it can
/// be, and the path only when the walk writes paths.
struct Found<'v> {
    target: Cow<'v, str>,
    kind: RefKind,
    /// Empty unless the walker has a base path.
    path: String,
}

/// One step below the walked value.
#[derive(Clone, Copy)]
enum Segment<'v> {
    Key(&'v str),
    Index(usize),
}

struct Walker<'a, 'v> {
    conditions: &'a NameMap<String, bool>,
    out: &'a mut Vec<Found<'v>>,
    /// Where the walked value is; `None` to write no paths at all (they are needed only to
    /// report an error, and the graph walks again with paths when there is one).
    base: Option<&'a str>,
    /// The path below `base`, kept as borrowed segments: it is written out only for the few
    /// nodes that hold a reference, not formatted for every node walked.
    segments: Vec<Segment<'v>>,
}

impl<'v> Walker<'_, 'v> {
    fn at(&mut self, segment: Segment<'v>, v: &'v Value) {
        if self.base.is_some() {
            self.segments.push(segment);
            self.walk(v);
            self.segments.pop();
        } else {
            self.walk(v);
        }
    }

    fn path(&self) -> String {
        let Some(base) = self.base else {
            return String::new();
        };
        let mut path = base.to_string();
        for segment in &self.segments {
            if !path.is_empty() {
                path.push('/');
            }
            // Writing to a String cannot fail.
            let _ = match segment {
                Segment::Key(k) => write!(path, "{k}"),
                Segment::Index(i) => write!(path, "{i}"),
            };
        }
        path
    }

    fn walk(&mut self, v: &'v Value) {
        match v {
            Value::Object(obj) => {
                if obj.len() == 1
                    && let Some((key, arg)) = obj.iter().next()
                    && self.function(key, arg)
                {
                    return;
                }
                for (k, item) in obj {
                    self.at(Segment::Key(k), item);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.at(Segment::Index(i), item);
                }
            }
            _ => {}
        }
    }

    fn push(&mut self, target: Cow<'v, str>, kind: RefKind) {
        if !is_pseudo(&target) {
            let path = self.path();
            self.out.push(Found { target, kind, path });
        }
    }

    /// The resource part of `Resource.Attribute`, keeping the borrow when there is one.
    fn resource_of(name: Cow<'v, str>) -> Option<Cow<'v, str>> {
        match name {
            Cow::Borrowed(s) => s.split_once('.').map(|(r, _)| Cow::Borrowed(r)),
            Cow::Owned(s) => s.split_once('.').map(|(r, _)| Cow::Owned(r.to_string())),
        }
    }

    /// Handles the functions that reference names; false for anything else.
    fn function(&mut self, key: &str, arg: &'v Value) -> bool {
        match key {
            "Ref" => {
                if let Some(t) = static_name(arg) {
                    // `Ref: Resource.Attribute` is read as Fn::GetAtt.
                    if t.contains('.') {
                        if let Some(r) = Self::resource_of(t) {
                            self.push(r, RefKind::GetAtt);
                        }
                    } else {
                        self.push(t, RefKind::Ref);
                    }
                }
                true
            }
            "Fn::GetAtt" => {
                match arg {
                    Value::String(s) => {
                        if let Some((r, _)) = s.split_once('.') {
                            self.push(Cow::Borrowed(r), RefKind::GetAtt);
                        }
                    }
                    Value::Array(items) => {
                        if let Some(r) = items.first().and_then(static_name) {
                            self.push(r, RefKind::GetAtt);
                        }
                        for item in items.iter().skip(1) {
                            self.walk(item);
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
                        Some(Value::String(s)) => {
                            (s.as_str(), items.get(1).and_then(Value::as_object))
                        }
                        _ => return false,
                    },
                    _ => return false,
                };
                for part in sub_parts(text) {
                    if let SubPart::Var(name) = part {
                        if locals.is_some_and(|l| l.contains_key(name)) {
                            continue;
                        }
                        let target = name.split_once('.').map_or(name, |(r, _)| r);
                        if !target.is_empty() {
                            self.push(Cow::Borrowed(target), RefKind::Sub);
                        }
                    }
                }
                if let Some(l) = locals {
                    for v in l.values() {
                        self.walk(v);
                    }
                }
                true
            }
            "Fn::If" => {
                if let Some([Value::String(c), a, b]) = arg.as_array().map(Vec::as_slice)
                    && let Some(holds) = self.conditions.get(c.as_str())
                {
                    self.walk(if *holds { a } else { b });
                    return true;
                }
                false
            }
            _ => false,
        }
    }
}

/// A name written as a string, or (language extensions, after Fn::ForEach substitution) as an
/// Fn::Sub without variables.
fn static_name(v: &Value) -> Option<Cow<'_, str>> {
    match v {
        Value::String(s) => Some(Cow::Borrowed(s)),
        Value::Object(obj) if obj.len() == 1 => match obj.get("Fn::Sub") {
            Some(Value::String(s)) => sub_parts(s)
                .map(|p| match p {
                    SubPart::Literal(l) => Some(l.to_string()),
                    SubPart::Escaped(l) => Some(format!("${{{l}}}")),
                    SubPart::Var(_) => None,
                })
                .collect::<Option<String>>()
                .map(Cow::Owned),
            _ => None,
        },
        _ => None,
    }
}

/// Resource → the resources it depends on, for the live resources, in template order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DependencyGraph {
    pub deps: NameMap<String, NameSet<String>>,
}

impl DependencyGraph {
    /// Builds the graph over the live resources and checks every reference in the live
    /// resources and outputs, collecting AWS's errors.
    pub fn build(
        template: &Template,
        live: &NameSet<String>,
        live_outputs: &[String],
        conditions: &NameMap<String, bool>,
    ) -> (DependencyGraph, Vec<Diagnostic>) {
        let mut graph = DependencyGraph {
            deps: NameMap::with_capacity_and_hasher(live.len(), Default::default()),
        };
        let mut diagnostics = Vec::new();
        let mut unresolved: Vec<String> = Vec::new();
        // Where the first unresolved reference is, so the one AWS-style message has a position.
        let mut first_unresolved: Option<String> = None;
        let mut refs = Vec::new();
        let mut found = Vec::new();
        for id in live {
            let Some(r) = template.resources.get(id) else {
                continue;
            };
            // First without paths: they are needed only for an error, and most resources have
            // none. A resource with a reference that does not resolve is walked again below,
            // with paths, so its diagnostics are exactly those of a walk that always had them.
            found.clear();
            let mut walker = Walker {
                conditions,
                out: &mut found,
                base: None,
                segments: Vec::new(),
            };
            walker.walk(&r.properties);
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
                walker.walk(extra);
            }
            found.extend(r.depends_on.iter().map(|d| Found {
                target: Cow::Borrowed(d.as_str()),
                kind: RefKind::DependsOn,
                path: String::new(),
            }));
            let mut deps = NameSet::default();
            let mut resolved = true;
            for f in &found {
                let t = f.target.as_ref();
                // DependsOn names only resources; the others may name parameters.
                if f.kind != RefKind::DependsOn && template.parameters.contains_key(t) {
                    continue;
                }
                if !live.contains(t) {
                    resolved = false;
                    break;
                }
                if !deps.contains(t) {
                    deps.insert(t.to_string());
                }
            }
            if resolved {
                graph.deps.insert(id.clone(), deps);
                continue;
            }
            refs.clear();
            let base = format!("Resources/{id}");
            references(
                &r.properties,
                &format!("{base}/Properties"),
                conditions,
                &mut refs,
            );
            for (key, extra) in [
                ("Metadata", &r.metadata),
                ("CreationPolicy", &r.creation_policy),
                ("UpdatePolicy", &r.update_policy),
                ("DeletionPolicy", &r.deletion_policy),
                ("UpdateReplacePolicy", &r.update_replace_policy),
            ] {
                if let Some(extra) = extra {
                    references(extra, &format!("{base}/{key}"), conditions, &mut refs);
                }
            }
            refs.extend(r.depends_on.iter().map(|d| Reference {
                target: d.clone(),
                kind: RefKind::DependsOn,
                path: format!("{base}/DependsOn"),
            }));
            let mut deps = NameSet::default();
            for reference in &refs {
                let t = &reference.target;
                // DependsOn names only resources; the others may name parameters.
                if reference.kind != RefKind::DependsOn && template.parameters.contains_key(t) {
                    continue;
                }
                if live.contains(t) {
                    deps.insert(t.clone());
                } else if reference.kind == RefKind::GetAtt && !template.resources.contains_key(t) {
                    let d = errors::getatt_undefined(t).with_path(reference.path.clone());
                    if !diagnostics.contains(&d) {
                        diagnostics.push(d);
                    }
                } else if !unresolved.contains(t) {
                    unresolved.push(t.clone());
                    first_unresolved.get_or_insert_with(|| reference.path.clone());
                }
            }
            graph.deps.insert(id.clone(), deps);
        }
        if !unresolved.is_empty() {
            let mut d = errors::unresolved_dependencies(&unresolved, Block::Resources);
            d.path = first_unresolved;
            diagnostics.insert(0, d);
        }
        let mut unresolved_outputs: Vec<String> = Vec::new();
        let mut first_unresolved_output: Option<String> = None;
        for name in live_outputs {
            let Some(o) = template.outputs.get(name) else {
                continue;
            };
            refs.clear();
            references(
                &o.value,
                &format!("Outputs/{name}/Value"),
                conditions,
                &mut refs,
            );
            if let Some(e) = &o.export_name {
                references(
                    e,
                    &format!("Outputs/{name}/Export/Name"),
                    conditions,
                    &mut refs,
                );
            }
            for reference in &refs {
                let t = &reference.target;
                if template.parameters.contains_key(t) || live.contains(t) {
                    continue;
                }
                if reference.kind == RefKind::GetAtt && !template.resources.contains_key(t) {
                    diagnostics.push(errors::getatt_undefined(t).with_path(reference.path.clone()));
                } else if !unresolved_outputs.contains(t) {
                    unresolved_outputs.push(t.clone());
                    first_unresolved_output.get_or_insert_with(|| reference.path.clone());
                }
            }
        }
        if !unresolved_outputs.is_empty() {
            let mut d = errors::unresolved_dependencies(&unresolved_outputs, Block::Outputs);
            d.path = first_unresolved_output;
            diagnostics.push(d);
        }
        (graph, diagnostics)
    }

    /// A topological order: every resource after its dependencies; among resources that are
    /// ready together, template order. Cycles are errors naming the resources in each cycle.
    pub fn order(&self) -> Result<Vec<String>, Vec<Diagnostic>> {
        let index: NameMap<&str, usize> = self
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
            .map(|c| {
                let d = errors::circular_resources(&c);
                match c.first() {
                    Some(first) => d.with_path(format!("Resources/{first}")),
                    None => d,
                }
            })
            .collect())
    }

    /// Resources grouped so each level depends only on earlier levels: a level can be
    /// provisioned in parallel. Empty when the graph has a cycle.
    pub fn levels(&self) -> Vec<Vec<String>> {
        match self.order() {
            Ok(order) => self.levels_of(&order),
            Err(_) => Vec::new(),
        }
    }

    /// [`levels`](Self::levels) for an order already computed by [`order`](Self::order).
    pub fn levels_of(&self, order: &[String]) -> Vec<Vec<String>> {
        let mut level_of: NameMap<&str, usize> =
            NameMap::with_capacity_and_hasher(order.len(), Default::default());
        let mut levels: Vec<Vec<String>> = Vec::new();
        for id in order {
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
        let stuck: NameSet<usize> = (0..names.len()).filter(|&i| pending[i] > 0).collect();
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
