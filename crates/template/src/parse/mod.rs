//! Template text to a JSON value (long-form intrinsics) plus where each node came from.
//!
//! CloudFormation accepts a template body in JSON or YAML. Like CloudFormation, a body whose first
//! non-blank character is `{` is tried as JSON first; if that fails it is tried as YAML (flow-style
//! YAML such as `{Resources: {A: !Ref B}}` also starts with `{`, and the fallback is why
//! CloudFormation is known to accept a trailing comma in a JSON template). When both fail the JSON
//! diagnostics are returned, because JSON is what the author most likely meant to write.
//!
//! YAML is read by `yaml_quick` when the text stays within the block-style subset it knows
//! (it then gives exactly the value `yaml` would), and by `yaml` (saphyr's events composed)
//! otherwise; positions always come from `yaml`.
//!
//! Both front ends produce the same thing: a [`Value`](crate::Value) in CloudFormation's JSON form
//! (YAML short-form tags already expanded to `Ref`, `Condition` and `Fn::*` keys) and a
//! [`SourceMap`] from node paths to positions, so later stages (evaluator, validation) can point
//! at the line a problem came from.

mod json;
mod path;
pub(crate) mod yaml;
mod yaml_quick;
mod yaml_scalar;
mod yaml_tags;

use crate::Diagnostic;
use std::sync::{Arc, OnceLock};

/// Deepest nesting of mappings and sequences accepted, in either format. Both front ends descend
/// recursively, so unbounded input nesting would otherwise overflow the stack. Real templates stay
/// far below this: the deepest in the shared corpus (Copilot's service stacks) nest 24 levels.
pub const MAX_DEPTH: usize = 200;

/// Most diagnostics reported for one template; past this the rest are noise.
const MAX_DIAGNOSTICS: usize = 50;

/// A parsed template: the value in CloudFormation's JSON form and a map from paths to positions.
#[derive(Debug, Clone)]
pub struct Document {
    pub value: crate::value::Value,
    pub source_map: SourceMap,
}

/// Positions (1-based line, column) of nodes by path (`Resources/Bucket/Properties`).
///
/// A path is the mapping keys and sequence indexes from the root joined by `/`; the root is the
/// empty path. A mapping member is located at its key (where a reader looks for it); a sequence
/// item at the item. Short-form YAML tags get the long-form key as a path segment
/// (`.../BucketName/Fn::Sub`), located at the tag.
///
/// Paths are stored as 64-bit hashes, not strings: a large template locates ~15 nodes per
/// resource, and allocating and hashing every full path string dominated parse time. Two paths
/// sharing a hash could only swap the positions reported for them, never change a value.
///
/// The map of a parsed template is built lazily: positions are wanted only to report a problem,
/// so [`parse_template`] keeps the text and locates the nodes by parsing it again the first time
/// a position is asked for. Locating every node of a well-formed template up front cost about as
/// much as parsing it.
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    positions: OnceLock<foldhash::HashMap<u64, (usize, usize)>>,
    /// The text to locate nodes in, and how it parsed, for a map not built yet.
    source: Option<Arc<(Format, String)>>,
}

/// Which front end accepted a template.
#[derive(Debug, Clone, Copy)]
enum Format {
    Json,
    Yaml,
}

impl SourceMap {
    /// A map located on first use by parsing `text` again as `format`.
    fn lazy(text: &str, format: Format) -> SourceMap {
        SourceMap {
            positions: OnceLock::new(),
            source: Some(Arc::new((format, text.to_string()))),
        }
    }

    fn positions(&self) -> &foldhash::HashMap<u64, (usize, usize)> {
        self.positions.get_or_init(|| match self.source.as_deref() {
            None => foldhash::HashMap::default(),
            Some((Format::Json, text)) => json::locate(text).into_positions(),
            Some((Format::Yaml, text)) => yaml::locate(text).into_positions(),
        })
    }

    fn into_positions(self) -> foldhash::HashMap<u64, (usize, usize)> {
        self.positions.into_inner().unwrap_or_default()
    }

    pub fn insert(&mut self, path: String, line: usize, column: usize) {
        self.insert_hashed(
            path::extend_hash(path::ROOT_HASH, path.as_bytes()),
            line,
            column,
        );
    }

    fn insert_hashed(&mut self, hash: u64, line: usize, column: usize) {
        self.positions();
        if let Some(positions) = self.positions.get_mut() {
            positions.insert(hash, (line, column));
        }
    }

    /// Position of the node at `path`, or of its nearest ancestor that has one.
    pub fn position(&self, path: &str) -> Option<(usize, usize)> {
        // One pass: the hash of each ancestor (the root, then each prefix before a `/`), and of
        // the path itself; the longest located one wins.
        let mut ancestors = vec![path::ROOT_HASH];
        let mut hash = path::ROOT_HASH;
        for (i, segment) in path.split('/').enumerate() {
            if i > 0 {
                ancestors.push(hash);
                hash = path::extend_hash(hash, b"/");
            }
            hash = path::extend_hash(hash, segment.as_bytes());
        }
        std::iter::once(hash)
            .chain(ancestors.into_iter().rev())
            .find_map(|h| self.get_hashed(h))
    }

    fn get_hashed(&self, hash: u64) -> Option<(usize, usize)> {
        self.positions().get(&hash).copied()
    }

    /// Number of located nodes.
    pub fn len(&self) -> usize {
        self.positions().len()
    }

    pub fn is_empty(&self) -> bool {
        self.positions().is_empty()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_map_insert_and_nearest_ancestor() {
        let mut m = SourceMap::default();
        assert_eq!(m.position("Resources"), None);
        m.insert(String::new(), 1, 1);
        m.insert("Resources/A".into(), 3, 3);
        m.insert("Resources/A/Properties/Tags/0".into(), 9, 11);
        assert_eq!(m.position("Resources/A"), Some((3, 3)));
        assert_eq!(m.position("Resources/A/Type"), Some((3, 3)));
        assert_eq!(
            m.position("Resources/A/Properties/Tags/0/Key"),
            Some((9, 11))
        );
        assert_eq!(m.position("Resources/A/Properties/Tags/1"), Some((3, 3)));
        assert_eq!(m.position("Resources"), Some((1, 1)));
        assert_eq!(m.position(""), Some((1, 1)));
        assert_eq!(m.len(), 3);
    }

    #[test]
    fn parser_paths_match_inserted_paths() {
        // A member whose key holds a `/` is found by its full path, as a string map would.
        let doc = parse_template("Files:\n  /etc/x.conf:\n    mode: '000644'\n").expect("parses");
        assert_eq!(doc.source_map.position("Files/etc"), Some((1, 1)));
        assert_eq!(doc.source_map.position("Files//etc/x.conf"), Some((2, 3)));
        assert_eq!(
            doc.source_map.position("Files//etc/x.conf/mode"),
            Some((3, 5))
        );
    }

    #[test]
    fn lazy_source_map_locates_on_first_use() {
        let json_text = "{\n  \"Resources\": {\n    \"A\": {\"Type\": \"T\", \"L\": [1, {\"Ref\": \"B\"}]}\n  }\n}\n";
        let doc = parse_template(json_text).expect("parses");
        assert_eq!(doc.source_map.position(""), Some((1, 1)));
        assert_eq!(doc.source_map.position("Resources/A"), Some((3, 5)));
        assert_eq!(doc.source_map.position("Resources/A/Type"), Some((3, 11)));
        assert_eq!(
            doc.source_map.position("Resources/A/L/1/Ref"),
            Some((3, 34))
        );
        assert_eq!(doc.source_map.len(), 8);
        let yaml_text = "Resources:\n  A:\n    Type: T\n    L: [1, !Ref B]\n";
        let doc = parse_template(yaml_text).expect("parses");
        assert_eq!(doc.source_map.position("Resources/A/Type"), Some((3, 5)));
        assert_eq!(
            doc.source_map.position("Resources/A/L/1/Ref"),
            Some((4, 12))
        );
        // A clone made before first use locates the same nodes.
        let copy = doc.source_map.clone();
        assert_eq!(copy.position("Resources/A/L/1"), Some((4, 12)));
        assert_eq!(copy.len(), doc.source_map.len());
    }
}
