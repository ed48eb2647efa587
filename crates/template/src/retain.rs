//! Retain patches: a deployed template with `DeletionPolicy: Retain` and
//! `UpdateReplacePolicy: Retain` on every resource and no other byte changed, so that a stack
//! can then be deleted leaving every resource in place (what a migration hands to another tool
//! first). The text is edited where the two policies are, never re-serialised: comments, key
//! order, quoting and tags all stay, and a reviewer's diff shows policy lines only.
//! [`policy_only_difference`] proves the same of any two templates by their parsed values.

use crate::parse::{parse_template, yaml};
use crate::value::Value;
use saphyr_parser::{Event, Parser, ScalarStyle, Span};

const POLICIES: [&str; 2] = ["DeletionPolicy", "UpdateReplacePolicy"];
const RETAIN: &str = "Retain";
/// A resource-template loop of AWS::LanguageExtensions: `[identifier, collection, {resources}]`.
const FOR_EACH: &str = "Fn::ForEach::";

/// Why a template could not be patched.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RetainError {
    #[error("the template does not parse: {0}")]
    Unparsable(String),
    #[error("the template has no Resources section")]
    NoResources,
    #[error(
        "resource {resource}: {policy} is not a plain value; cumulo patches plain values only (write Retain there by hand)"
    )]
    NotScalar { resource: String, policy: String },
}

/// A patched template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetainPatch {
    pub text: String,
    /// The resources whose policies changed, in template order.
    pub changed: Vec<String>,
    /// The resources that already retained on both counts.
    pub unchanged: Vec<String>,
}

/// One text edit: replace `start..end` (bytes) of the original with `with`.
#[derive(Debug)]
struct Edit {
    start: usize,
    end: usize,
    with: String,
}

/// What the event walk found of one resource.
struct Found {
    name: String,
    /// The mapping's opening (a flow mapping's `{`, a block mapping's first key).
    open: Span,
    flow: bool,
    /// Keys written as JSON writes them (double-quoted): inserted keys follow suit.
    json_keys: bool,
    policies: Vec<(String, Span, ScalarStyle, String)>,
}

/// Patches `text` (JSON or YAML, as deployed).
pub fn retain_patch(text: &str) -> Result<RetainPatch, RetainError> {
    parse_template(text).map_err(|d| {
        RetainError::Unparsable(d.first().map(|d| d.to_string()).unwrap_or_default())
    })?;
    // Parse as the template parser does: YAML 1.2 with closing brackets re-indented when a
    // template needs it. Only lines starting with `]` or `}` move, and no edit is on one, so the
    // positions of the relaxed text's edits are the original's (by line and column).
    let found = match walk(text) {
        Ok(found) => found,
        Err(first) => {
            let (relaxed, moved) = yaml::indent_closing_brackets(text);
            if moved.is_empty() {
                return Err(first);
            }
            walk(&relaxed)?
        }
    };
    let lines = LineIndex::new(text);
    let mut edits = Vec::new();
    let mut changed = Vec::new();
    let mut unchanged = Vec::new();
    for r in &found {
        let before = edits.len();
        let mut missing = Vec::new();
        for policy in POLICIES {
            match r.policies.iter().find(|(k, ..)| k == policy) {
                Some((_, span, style, value)) if value != RETAIN => {
                    let start = lines.offset(text, span.start.line(), span.start.col());
                    let end = scalar_end(text, start, *style);
                    edits.push(Edit {
                        start,
                        end,
                        with: quoted(RETAIN, *style),
                    });
                }
                Some(_) => {}
                None => missing.push(policy),
            }
        }
        if !missing.is_empty() {
            let at = lines.offset(text, r.open.start.line(), r.open.start.col());
            edits.push(insertion(text, at, r, &missing, &lines));
        }
        if edits.len() > before {
            changed.push(r.name.clone());
        } else {
            unchanged.push(r.name.clone());
        }
    }
    edits.sort_by_key(|e| e.start);
    let mut out = String::with_capacity(text.len() + edits.len() * 32);
    let mut at = 0;
    for e in edits {
        out.push_str(&text[at..e.start]);
        out.push_str(&e.with);
        at = e.end;
    }
    out.push_str(&text[at..]);
    Ok(RetainPatch {
        text: out,
        changed,
        unchanged,
    })
}

fn insertion(text: &str, at: usize, r: &Found, missing: &[&str], lines: &LineIndex) -> Edit {
    if r.flow {
        // After the `{`: `{"DeletionPolicy": "Retain", "Type": ...` (a comma only when the
        // mapping has members).
        let empty = text[at + 1..].trim_start().starts_with('}');
        let members: Vec<String> = missing
            .iter()
            .map(|k| {
                if r.json_keys {
                    format!("\"{k}\": \"{RETAIN}\"")
                } else {
                    format!("{k}: {RETAIN}")
                }
            })
            .collect();
        let sep = if empty { "" } else { ", " };
        return Edit {
            start: at + 1,
            end: at + 1,
            with: format!("{}{sep}", members.join(", ")),
        };
    }
    // A block mapping: one line per policy before its first key, at that key's column.
    let line_start = lines.line_start(r.open.start.line());
    let indent = &text[line_start..at];
    let mut with = String::new();
    if indent.chars().all(|c| c == ' ') {
        for k in missing {
            with.push_str(&format!("{indent}{k}: {RETAIN}\n"));
        }
        return Edit {
            start: line_start,
            end: line_start,
            with,
        };
    }
    // The first key shares its line with something else (`- Key: ...` is not a resource, but
    // be safe): put the policies on the key's line and move the key to the next.
    let column = at - line_start;
    for k in missing {
        with.push_str(&format!("{k}: {RETAIN}\n{}", " ".repeat(column)));
    }
    Edit {
        start: at,
        end: at,
        with,
    }
}

fn quoted(value: &str, style: ScalarStyle) -> String {
    match style {
        ScalarStyle::DoubleQuoted => format!("\"{value}\""),
        ScalarStyle::SingleQuoted => format!("'{value}'"),
        _ => value.to_string(),
    }
}

/// The byte after a scalar starting at `start`: past its closing quote, or the end of a plain
/// word (policy values are single words).
fn scalar_end(text: &str, start: usize, style: ScalarStyle) -> usize {
    let rest = &text[start..];
    match style {
        ScalarStyle::DoubleQuoted | ScalarStyle::SingleQuoted => {
            let quote = if style == ScalarStyle::DoubleQuoted {
                '"'
            } else {
                '\''
            };
            let mut escaped = false;
            for (i, c) in rest.char_indices().skip(1) {
                if escaped {
                    escaped = false;
                } else if c == '\\' && quote == '"' {
                    escaped = true;
                } else if c == quote {
                    return start + i + 1;
                }
            }
            text.len()
        }
        _ => {
            start
                + rest
                    .find(|c: char| c.is_whitespace() || matches!(c, ',' | '}' | ']' | '#'))
                    .unwrap_or(rest.len())
        }
    }
}

/// Byte offsets of line starts, to turn saphyr's (line, char column) into bytes.
struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    /// `line` is 1-based, as saphyr counts.
    fn line_start(&self, line: usize) -> usize {
        self.starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(0)
    }

    fn offset(&self, text: &str, line: usize, col: usize) -> usize {
        let start = self.line_start(line);
        text[start..]
            .char_indices()
            .nth(col)
            .map_or(text.len(), |(i, _)| start + i)
    }
}

/// Walks the event stream to each resource mapping and its two policies.
fn walk(text: &str) -> Result<Vec<Found>, RetainError> {
    let mut w = Walker {
        parser: Parser::new_from_str(text),
        text,
        lines: LineIndex::new(text),
    };
    w.document()
}

struct Walker<'a> {
    parser: Parser<'a, saphyr_parser::StrInput<'a>>,
    text: &'a str,
    /// Built once: every resource asks where its mapping opens.
    lines: LineIndex,
}

impl<'a> Walker<'a> {
    fn next(&mut self) -> Result<(Event<'a>, Span), RetainError> {
        match self.parser.next_event() {
            Some(Ok(ev)) => Ok(ev),
            Some(Err(e)) => Err(RetainError::Unparsable(e.info().to_string())),
            None => Err(RetainError::Unparsable("unexpected end".into())),
        }
    }

    fn document(&mut self) -> Result<Vec<Found>, RetainError> {
        loop {
            match self.next()?.0 {
                Event::MappingStart(..) => break,
                Event::StreamEnd => return Err(RetainError::NoResources),
                _ => {}
            }
        }
        let mut found = None;
        loop {
            match self.next()?.0 {
                Event::MappingEnd => break,
                Event::Scalar(key, ..) if key == "Resources" => {
                    let (event, span) = self.next()?;
                    match event {
                        Event::MappingStart(..) => found = Some(self.resources(span)?),
                        other => self.skip(other)?,
                    }
                }
                other => {
                    self.skip(other)?;
                    let (value, _) = self.next()?;
                    self.skip(value)?;
                }
            }
        }
        found.ok_or(RetainError::NoResources)
    }

    fn resources(&mut self, _open: Span) -> Result<Vec<Found>, RetainError> {
        let mut out = Vec::new();
        loop {
            match self.next()?.0 {
                Event::MappingEnd => return Ok(out),
                Event::Scalar(name, ..) => {
                    let (event, span) = self.next()?;
                    match event {
                        Event::MappingStart(..) if name.starts_with(FOR_EACH) => {
                            self.skip(event)?
                        }
                        Event::MappingStart(..) => out.push(self.resource(name.to_string(), span)?),
                        Event::SequenceStart(..) if name.starts_with(FOR_EACH) => {
                            out.extend(self.for_each()?);
                        }
                        other => self.skip(other)?,
                    }
                }
                other => {
                    self.skip(other)?;
                    let (value, _) = self.next()?;
                    self.skip(value)?;
                }
            }
        }
    }

    /// The resource templates of a loop: its third element, a Resources-like mapping.
    fn for_each(&mut self) -> Result<Vec<Found>, RetainError> {
        let mut out = Vec::new();
        let mut index = 0;
        loop {
            let (event, span) = self.next()?;
            match event {
                Event::SequenceEnd => return Ok(out),
                Event::MappingStart(..) if index == 2 => out.extend(self.resources(span)?),
                other => self.skip(other)?,
            }
            index += 1;
        }
    }

    fn resource(&mut self, name: String, open: Span) -> Result<Found, RetainError> {
        let flow = self.text_at(open).starts_with('{');
        let mut found = Found {
            name,
            open,
            flow,
            // An empty mapping has no key to follow: a JSON template's gets JSON's.
            json_keys: self.text.trim_start().starts_with('{'),
            policies: Vec::new(),
        };
        let mut first = true;
        loop {
            let (event, span) = self.next()?;
            match event {
                Event::MappingEnd => return Ok(found),
                Event::Scalar(key, style, ..) => {
                    if first {
                        found.json_keys = style == ScalarStyle::DoubleQuoted;
                        if !flow {
                            // A block mapping opens where its first key is.
                            found.open = span;
                        }
                        first = false;
                    }
                    let (value, vspan) = self.next()?;
                    match (POLICIES.contains(&key.as_ref()), value) {
                        (true, Event::Scalar(v, vstyle, _, None)) => {
                            found
                                .policies
                                .push((key.to_string(), vspan, vstyle, v.to_string()));
                        }
                        (true, _) => {
                            return Err(RetainError::NotScalar {
                                resource: found.name,
                                policy: key.to_string(),
                            });
                        }
                        (false, other) => self.skip(other)?,
                    }
                }
                other => {
                    self.skip(other)?;
                    let (value, _) = self.next()?;
                    self.skip(value)?;
                }
            }
        }
    }

    fn text_at(&self, span: Span) -> &'a str {
        let at = self
            .lines
            .offset(self.text, span.start.line(), span.start.col());
        &self.text[at..]
    }

    /// Consumes the rest of a node whose first event is `event`.
    fn skip(&mut self, event: Event<'a>) -> Result<(), RetainError> {
        let mut depth = match event {
            Event::MappingStart(..) | Event::SequenceStart(..) => 1,
            _ => 0,
        };
        while depth > 0 {
            match self.next()?.0 {
                Event::MappingStart(..) | Event::SequenceStart(..) => depth += 1,
                Event::MappingEnd | Event::SequenceEnd => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }
}

/// Where two templates differ other than in their resources' DeletionPolicy and
/// UpdateReplacePolicy, and where `patched` does not retain: empty when `patched` is exactly
/// `current` with every resource retained.
pub fn policy_only_difference(current: &str, patched: &str) -> Result<Vec<String>, RetainError> {
    let parse = |t: &str| {
        parse_template(t).map(|d| d.value).map_err(|d| {
            RetainError::Unparsable(d.first().map(|d| d.to_string()).unwrap_or_default())
        })
    };
    let (a, b) = (parse(current)?, parse(patched)?);
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return Err(RetainError::NoResources);
    };
    let mut out = Vec::new();
    let keys = |m: &crate::value::Map| m.keys().cloned().collect::<Vec<_>>();
    for k in keys(a).into_iter().chain(keys(b)) {
        if k != "Resources" && a.get(&k) != b.get(&k) && !out.contains(&k.to_string()) {
            out.push(k.to_string());
        }
    }
    let empty = crate::value::Map::default();
    let ra = a
        .get("Resources")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let rb = b
        .get("Resources")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    compare_resources(ra, rb, "Resources", &mut out);
    Ok(out)
}

/// Compares two Resources sections (or the resource templates of an `Fn::ForEach` loop, which
/// the patch retains too) member by member.
fn compare_resources(
    ra: &crate::value::Map,
    rb: &crate::value::Map,
    at: &str,
    out: &mut Vec<String>,
) {
    let keys = |m: &crate::value::Map| m.keys().cloned().collect::<Vec<_>>();
    let mut names = keys(ra);
    names.extend(keys(rb).into_iter().filter(|n| ra.get(n).is_none()));
    for name in names {
        let path = format!("{at}/{name}");
        if name.starts_with(FOR_EACH) {
            let loops = (
                ra.get(&name).and_then(Value::as_array),
                rb.get(&name).and_then(Value::as_array),
            );
            match loops {
                (Some(x), Some(y)) if x.len() == 3 && y.len() == 3 && x[..2] == y[..2] => {
                    match (x[2].as_object(), y[2].as_object()) {
                        (Some(tx), Some(ty)) => {
                            compare_resources(tx, ty, &format!("{path}/2"), out)
                        }
                        _ => out.push(path),
                    }
                }
                _ => out.push(path),
            }
            continue;
        }
        let (Some(x), Some(y)) = (
            ra.get(&name).and_then(Value::as_object),
            rb.get(&name).and_then(Value::as_object),
        ) else {
            out.push(path);
            continue;
        };
        for k in keys(x).into_iter().chain(keys(y)) {
            if !POLICIES.contains(&k.as_str()) && x.get(&k) != y.get(&k) {
                let p = format!("{path}/{k}");
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        for policy in POLICIES {
            if y.get(policy).and_then(Value::as_str) != Some(RETAIN) {
                out.push(format!("{path}/{policy} is not Retain"));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patched(text: &str) -> String {
        let p = retain_patch(text).unwrap();
        assert_eq!(
            policy_only_difference(text, &p.text).unwrap(),
            Vec::<String>::new()
        );
        p.text
    }

    #[test]
    fn block_yaml_gains_policy_lines_and_nothing_else() {
        let text = "\
AWSTemplateFormatVersion: '2010-09-09'
# a comment that stays
Resources:
  Bucket:
    Type: AWS::S3::Bucket   # trailing comment
    Properties: {BucketName: b}
  Queue:
    DeletionPolicy: Delete
    Type: AWS::SQS::Queue
  Kept:
    Type: AWS::SNS::Topic
    DeletionPolicy: 'Retain'
    UpdateReplacePolicy: \"Snapshot\"
Outputs:
  Q: {Value: !Ref Queue}
";
        let out = patched(text);
        assert_eq!(
            out,
            "\
AWSTemplateFormatVersion: '2010-09-09'
# a comment that stays
Resources:
  Bucket:
    DeletionPolicy: Retain
    UpdateReplacePolicy: Retain
    Type: AWS::S3::Bucket   # trailing comment
    Properties: {BucketName: b}
  Queue:
    UpdateReplacePolicy: Retain
    DeletionPolicy: Retain
    Type: AWS::SQS::Queue
  Kept:
    Type: AWS::SNS::Topic
    DeletionPolicy: 'Retain'
    UpdateReplacePolicy: \"Retain\"
Outputs:
  Q: {Value: !Ref Queue}
"
        );
        let p = retain_patch(text).unwrap();
        assert_eq!(p.changed, ["Bucket", "Queue", "Kept"]);
        // Patching a patch changes nothing.
        let again = retain_patch(&out).unwrap();
        assert_eq!(again.text, out);
        assert_eq!(again.unchanged, ["Bucket", "Queue", "Kept"]);
    }

    #[test]
    fn json_gains_members_after_each_brace() {
        let text = r#"{
  "Resources": {
    "Bucket": {
      "Type": "AWS::S3::Bucket",
      "DeletionPolicy": "Snapshot"
    },
    "Empty": {}
  }
}"#;
        let out = patched(text);
        assert_eq!(
            out,
            r#"{
  "Resources": {
    "Bucket": {"UpdateReplacePolicy": "Retain", 
      "Type": "AWS::S3::Bucket",
      "DeletionPolicy": "Retain"
    },
    "Empty": {"DeletionPolicy": "Retain", "UpdateReplacePolicy": "Retain"}
  }
}"#
        );
        assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok());
    }

    #[test]
    fn copilot_style_closing_brackets_are_read_as_cloudformation_reads_them() {
        let text = "\
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      Actions: [
        \"logs:GetLogEvents\"
      ]
";
        assert!(patched(text).contains(
            "  Role:\n    DeletionPolicy: Retain\n    UpdateReplacePolicy: Retain\n    Type:"
        ));
    }

    #[test]
    fn conditional_policies_are_refused_by_name() {
        let text = "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    DeletionPolicy: !If [C, Retain, Delete]\n";
        assert_eq!(
            retain_patch(text),
            Err(RetainError::NotScalar {
                resource: "B".into(),
                policy: "DeletionPolicy".into()
            })
        );
    }

    #[test]
    fn any_other_difference_is_named() {
        let current =
            "Resources:\n  B:\n    Type: AWS::S3::Bucket\n  Q:\n    Type: AWS::SQS::Queue\n";
        let sneaky = "Resources:\n  B:\n    Type: AWS::S3::Bucket\n    DeletionPolicy: Retain\n    UpdateReplacePolicy: Retain\n    Properties: {BucketName: x}\n  Q:\n    Type: AWS::SQS::Queue\n    DeletionPolicy: Delete\n    UpdateReplacePolicy: Retain\nOutputs: {}\n";
        assert_eq!(
            policy_only_difference(current, sneaky).unwrap(),
            [
                "Outputs",
                "Resources/B/Properties",
                "Resources/Q/DeletionPolicy is not Retain"
            ]
        );
        assert_eq!(
            retain_patch("Parameters: {}\n"),
            Err(RetainError::NoResources)
        );
    }
}
