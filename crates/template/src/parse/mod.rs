//! Template text to a JSON value (long-form intrinsics) plus where each node came from.
//!
//! CloudFormation accepts a template body in JSON or YAML. Like CloudFormation, a body whose first
//! non-blank character is `{` is tried as JSON first; if that fails it is tried as YAML (flow-style
//! YAML such as `{Resources: {A: !Ref B}}` also starts with `{`), and when both fail the JSON
//! diagnostics are returned because that is what the author most likely meant to write.
//!
//! Both front ends produce the same thing: a `serde_json::Value` in CloudFormation's JSON form
//! (YAML short-form tags already expanded to `Ref`, `Condition` and `Fn::*` keys) and a
//! [`SourceMap`] from node paths to positions, so later stages (evaluator, validation) can point
//! at the line a problem came from.

mod json;
mod path;
mod yaml;
mod yaml_scalar;
mod yaml_tags;

use crate::Diagnostic;
use std::collections::HashMap;

/// Deepest nesting of mappings and sequences accepted, in either format. Both front ends descend
/// recursively, so unbounded input nesting would otherwise overflow the stack. Real templates stay
/// far below this (inline Step Functions definitions, the deepest common case, reach about 40).
pub const MAX_DEPTH: usize = 200;

/// Most diagnostics reported for one template; past this the rest are noise.
const MAX_DIAGNOSTICS: usize = 50;

/// A parsed template: the value in CloudFormation's JSON form and a map from paths to positions.
#[derive(Debug, Clone)]
pub struct Document {
    pub value: serde_json::Value,
    pub source_map: SourceMap,
}

/// Positions (1-based line, column) of nodes by path (`Resources/Bucket/Properties`).
///
/// A path is the mapping keys and sequence indexes from the root joined by `/`; the root is the
/// empty path. A mapping member is located at its key (where a reader looks for it); a sequence
/// item at the item. Short-form YAML tags get the long-form key as a path segment
/// (`.../BucketName/Fn::Sub`), located at the tag.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    positions: HashMap<String, (usize, usize)>,
}

impl SourceMap {
    pub fn insert(&mut self, path: String, line: usize, column: usize) {
        self.positions.insert(path, (line, column));
    }

    /// Position of the node at `path`, or of its nearest ancestor that has one.
    pub fn position(&self, path: &str) -> Option<(usize, usize)> {
        let mut p = path;
        loop {
            if let Some(pos) = self.positions.get(p) {
                return Some(*pos);
            }
            p = match p.rsplit_once('/') {
                Some((parent, _)) => parent,
                None if !p.is_empty() => "",
                None => return None,
            };
        }
    }

    /// Number of located nodes.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }
}

/// Parses a template in JSON or YAML.
///
/// The top level must be a mapping: anything else (an empty body, a bare string, a list) is
/// rejected as CloudFormation does, with `Template format error: unsupported structure.`
pub fn parse_template(text: &str) -> Result<Document, Vec<Diagnostic>> {
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (value, source_map) = if body.trim_start().starts_with('{') {
        match json::parse(body) {
            Ok(parsed) => parsed,
            Err(json_diags) => yaml::parse(body).map_err(|_| json_diags)?,
        }
    } else {
        yaml::parse(body)?
    };
    if !value.is_object() {
        let (line, column) = source_map.position("").unwrap_or((1, 1));
        return Err(vec![
            Diagnostic::new("Template format error: unsupported structure.").at(line, column),
        ]);
    }
    Ok(Document { value, source_map })
}

/// Collects diagnostics that do not stop parsing (duplicate keys, unknown tags, aliases), so one
/// run reports all of them.
#[derive(Debug, Default)]
struct Diagnostics {
    list: Vec<Diagnostic>,
}

impl Diagnostics {
    fn push(&mut self, diag: Diagnostic) {
        if self.list.len() < MAX_DIAGNOSTICS {
            self.list.push(diag);
        }
    }

    /// `Ok(value)` when nothing was reported, otherwise every diagnostic in source order. A
    /// `fatal` error (one that stopped parsing) comes after those found before it.
    fn finish<T>(mut self, result: Result<T, Diagnostic>) -> Result<T, Vec<Diagnostic>> {
        match result {
            Ok(value) if self.list.is_empty() => Ok(value),
            Ok(_) => {
                self.list.sort_by_key(|d| (d.line, d.column));
                Err(self.list)
            }
            Err(fatal) => {
                self.list.sort_by_key(|d| (d.line, d.column));
                self.list.push(fatal);
                Err(self.list)
            }
        }
    }
}
