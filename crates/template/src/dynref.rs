//! Dynamic references: `{{resolve:service:...}}` text inside (already evaluated) values.
//!
//! They are recognised and parsed here; the engine resolves them once, after intrinsics, and
//! keeps the literal text in stored state (a resolved value is never rescanned). They never
//! create dependencies.

use crate::Diagnostic;
use crate::value::Value;
use std::fmt::Write;

/// A parsed dynamic reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DynamicReference {
    /// `{{resolve:ssm:name[:version]}}`
    Ssm { name: String, version: Option<u64> },
    /// `{{resolve:ssm-secure:name[:version]}}`
    SsmSecure { name: String, version: Option<u64> },
    /// `{{resolve:secretsmanager:secret-id[:SecretString[:json-key[:version-stage[:version-id]]]]}}`
    SecretsManager {
        secret_id: String,
        json_key: Option<String>,
        version_stage: Option<String>,
        version_id: Option<String>,
    },
}

/// One reference found in a value: the exact text (what gets stored), where, and its meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundReference {
    pub text: String,
    /// JSON-pointer-like path inside the searched value (`/Environment/Variables/DB`).
    pub path: String,
    pub reference: DynamicReference,
}

const OPEN: &str = "{{resolve:";

/// A value references can be searched in: the template's own (rendering) and serde_json's (the
/// engine searches the properties it stores).
pub trait Searchable: Sized {
    fn text(&self) -> Option<&str>;
    /// Calls `f` with each array item or object member, in document order.
    fn each_child<'v>(&'v self, f: impl FnMut(Segment<'v>, &'v Self));
}

impl Searchable for Value {
    fn text(&self) -> Option<&str> {
        self.as_str()
    }

    fn each_child<'v>(&'v self, mut f: impl FnMut(Segment<'v>, &'v Self)) {
        match self {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .for_each(|(i, item)| f(Segment::Index(i), item)),
            Value::Object(obj) => obj.iter().for_each(|(k, item)| f(Segment::Key(k), item)),
            _ => {}
        }
    }
}

impl Searchable for serde_json::Value {
    fn text(&self) -> Option<&str> {
        self.as_str()
    }

    fn each_child<'v>(&'v self, mut f: impl FnMut(Segment<'v>, &'v Self)) {
        match self {
            serde_json::Value::Array(items) => items
                .iter()
                .enumerate()
                .for_each(|(i, item)| f(Segment::Index(i), item)),
            serde_json::Value::Object(obj) => {
                obj.iter().for_each(|(k, item)| f(Segment::Key(k), item))
            }
            _ => {}
        }
    }
}

/// Every dynamic reference in a value, in document order. Malformed ones are errors: AWS fails
/// the stack operation rather than passing the text through.
pub fn find_dynamic_references<V: Searchable>(
    value: &V,
) -> Result<Vec<FoundReference>, Vec<Diagnostic>> {
    let mut found = Vec::new();
    let mut errors = Vec::new();
    walk(value, &mut Vec::new(), &mut found, &mut errors);
    if errors.is_empty() {
        Ok(found)
    } else {
        Err(errors)
    }
}

/// One step of the path to a value.
pub enum Segment<'v> {
    Key(&'v str),
    Index(usize),
}

/// The path as `/a/0/b`. Written out only where a reference is found: formatting it for every
/// node walked cost more than the walk.
fn path_of(segments: &[Segment<'_>]) -> String {
    let mut path = String::new();
    for segment in segments {
        // Writing to a String cannot fail.
        let _ = match segment {
            Segment::Key(k) => write!(path, "/{k}"),
            Segment::Index(i) => write!(path, "/{i}"),
        };
    }
    path
}

fn walk<'v, V: Searchable>(
    v: &'v V,
    path: &mut Vec<Segment<'v>>,
    found: &mut Vec<FoundReference>,
    errors: &mut Vec<Diagnostic>,
) {
    if let Some(s) = v.text() {
        // A byte search first: building a substring searcher for every string of a large
        // template cost more than the walk itself, and almost no string has a `{`.
        if !s.as_bytes().contains(&b'{') || !s.contains(OPEN) {
            return;
        }
        for text in references_in(s) {
            // Built from values a deployment will supply: parsed when they are known.
            if text.contains(crate::context::PLACEHOLDER_PREFIX) {
                continue;
            }
            match parse_dynamic_reference(text) {
                Ok(reference) => found.push(FoundReference {
                    text: text.to_string(),
                    path: path_of(path),
                    reference,
                }),
                Err(e) => errors.push(e),
            }
        }
        return;
    }
    v.each_child(|segment, item| {
        path.push(segment);
        walk(item, path, found, errors);
        path.pop();
    });
}

/// The `{{resolve:...}}` substrings of a string. Braces nest, so a reference whose parts are
/// rendering placeholders (`{{cumulo:...}}`) is found whole.
pub fn references_in(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(found) = s[from..].find(OPEN) {
        let start = from + found;
        let mut depth = 0usize;
        let mut i = start;
        let mut end = None;
        while i + 1 < s.len() {
            match &s.as_bytes()[i..i + 2] {
                b"{{" => {
                    depth += 1;
                    i += 2;
                }
                b"}}" => {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        end = Some(i);
                        break;
                    }
                }
                _ => i += 1,
            }
        }
        let Some(end) = end else {
            break;
        };
        out.push(&s[start..end]);
        from = end;
    }
    out
}

fn malformed(text: &str) -> Diagnostic {
    Diagnostic::new(format!(
        "Incorrect format is used in the following dynamic reference: [{text}]"
    ))
}

/// Parses one `{{resolve:...}}` text.
pub fn parse_dynamic_reference(text: &str) -> Result<DynamicReference, Diagnostic> {
    let inner = text
        .strip_prefix(OPEN)
        .and_then(|t| t.strip_suffix("}}"))
        .ok_or_else(|| malformed(text))?;
    let (service, rest) = inner.split_once(':').ok_or_else(|| malformed(text))?;
    match service {
        "ssm" | "ssm-secure" => {
            let (name, version) = split_arn_or_name(rest, 6);
            if name.is_empty() {
                return Err(malformed(text));
            }
            let version = match version {
                None => None,
                Some(v) => Some(v.parse::<u64>().map_err(|_| malformed(text))?),
            };
            Ok(if service == "ssm" {
                DynamicReference::Ssm { name, version }
            } else {
                DynamicReference::SsmSecure { name, version }
            })
        }
        "secretsmanager" => {
            let (secret_id, rest) = split_arn_or_name(rest, 7);
            if secret_id.is_empty() {
                return Err(malformed(text));
            }
            let fields: Vec<&str> = rest
                .as_deref()
                .map(|r| r.split(':').collect())
                .unwrap_or_default();
            if fields.len() > 4 {
                return Err(malformed(text));
            }
            let field = |i: usize| {
                fields
                    .get(i)
                    .filter(|f| !f.is_empty())
                    .map(|f| f.to_string())
            };
            if let Some(kind) = field(0)
                && kind != "SecretString"
            {
                return Err(malformed(text));
            }
            let (version_stage, version_id) = (field(2), field(3));
            if version_stage.is_some() && version_id.is_some() {
                return Err(Diagnostic::new(format!(
                    "Specify either version stage or version id, not both, in the following dynamic reference: [{text}]"
                )));
            }
            Ok(DynamicReference::SecretsManager {
                secret_id,
                json_key: field(1),
                version_stage,
                version_id,
            })
        }
        other => Err(Diagnostic::new(format!(
            "Dynamic reference service {other} is not supported: [{text}]"
        ))),
    }
}

/// Splits `name[:rest]`, where an ARN name keeps its own `arn_parts` colon-separated parts.
fn split_arn_or_name(s: &str, arn_parts: usize) -> (String, Option<String>) {
    let take = if s.starts_with("arn:") { arn_parts } else { 1 };
    let mut parts = s.splitn(take + 1, ':');
    let name: Vec<&str> = parts.by_ref().take(take).collect();
    (name.join(":"), parts.next().map(str::to_string))
}
