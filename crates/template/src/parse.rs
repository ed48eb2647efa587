//! Template text to a JSON value (long-form intrinsics) plus where each node came from.
//!
//! Placeholder: JSON only, until the parser lands (YAML with short-form tags, duplicate keys).

use crate::Diagnostic;
use std::collections::HashMap;

/// A parsed template: the value in CloudFormation's JSON form and a map from paths to positions.
#[derive(Debug, Clone)]
pub struct Document {
    pub value: serde_json::Value,
    pub source_map: SourceMap,
}

/// Positions (1-based line, column) of nodes by path (`Resources/Bucket/Properties`).
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
            p = p.rsplit_once('/')?.0;
        }
    }
}

/// Parses a template in JSON or YAML.
pub fn parse_template(text: &str) -> Result<Document, Vec<Diagnostic>> {
    serde_json::from_str(text)
        .map(|value| Document {
            value,
            source_map: SourceMap::default(),
        })
        .map_err(|e| {
            vec![Diagnostic::new(format!("Template format error: {e}")).at(e.line(), e.column())]
        })
}
