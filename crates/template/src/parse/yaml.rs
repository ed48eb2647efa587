//! YAML templates: saphyr-parser's event stream composed into CloudFormation's JSON form.
//!
//! saphyr-parser is a YAML 1.2 *syntax* parser that reports tags and positions and never
//! interprets scalars, which is exactly the split we need: the syntax is the same in 1.1 and
//! 1.2, and the meaning of plain scalars is decided here by CloudFormation's YAML 1.1 rules
//! (see `yaml_scalar`). Its parser is iterative, so only this composer recurses, bounded by
//! [`MAX_DEPTH`].
//!
//! What CloudFormation rejects, so do we (with positions):
//! * aliases (`*name`): "YAML aliases are not allowed in CloudFormation templates" is AWS's own
//!   message; anchors without aliases are harmless and accepted;
//! * merge keys (`<<`), which CloudFormation documents as unsupported (only `aws cloudformation
//!   package` expands them);
//! * the binary/omap/pairs/set/timestamp core tags, unknown local tags, non-scalar keys, null
//!   keys, duplicate keys, and more than one document.

use super::path::NodePath;
use super::yaml_scalar::{float, int, null_or_bool, resolve_plain};
use super::yaml_tags::long_form;
use super::{Diagnostics, Format, MAX_DEPTH, SourceMap};
use crate::Diagnostic;
use crate::value::{Map, SmolStr, Value};
use saphyr_parser::{Event, Parser, ScalarStyle, ScanError, Span, StrInput, Tag};
use std::borrow::Cow;

use crate::errors::YAML_NOT_WELL_FORMED as NOT_WELL_FORMED;

/// Parses `text` as a single YAML document.
///
/// Most templates are read by `yaml_quick`, which gives the same value as the full reading
/// (below) or leaves the text to it. Either way the source map composes the text again with
/// saphyr on first use.
pub(super) fn parse(text: &str) -> Result<(Value, SourceMap), Vec<Diagnostic>> {
    match super::yaml_quick::compose(text) {
        Some(value) => Ok((value, SourceMap::lazy(text, Format::Yaml))),
        None => parse_fully(text),
    }
}

/// The full reading: saphyr's event stream composed. A well-formed template is composed without
/// locating its nodes; only one with problems is composed again with paths, for diagnostics.
pub(super) fn parse_fully(text: &str) -> Result<(Value, SourceMap), Vec<Diagnostic>> {
    if let (Ok((value, _)), _) = compose(text, false, false) {
        return Ok((value, SourceMap::lazy(text, Format::Yaml)));
    }
    let (result, _) = compose(text, false, true);
    let diags = match result {
        Ok(parsed) => return Ok(parsed),
        Err(diags) => diags,
    };
    if !diags
        .last()
        .is_some_and(|d| d.message.ends_with(INVALID_INDENTATION))
    {
        return Err(diags);
    }
    // YAML 1.2 (and saphyr) wants the lines of a flow collection indented past the block that
    // holds it; the YAML 1.1 loaders CloudFormation's users rely on (PyYAML, SnakeYAML) ignore
    // indentation inside flow collections, and real templates (AWS Copilot's, for one) close a
    // flow list at the key's own column:
    //
    //     Action: [
    //       "logs:GetLogEvents"
    //     ]
    //
    // So retry once with every line that starts with `]` or `}` indented like the line above it,
    // and accept the result only if each such bracket really closed a flow collection in that
    // parse (so a bracket inside a block scalar, whose indentation is content, is never moved).
    let (relaxed, moved) = indent_closing_brackets(text);
    if moved.is_empty() {
        return Err(diags);
    }
    match compose(&relaxed, true, true) {
        (Ok(parsed), mut closed) => {
            closed.sort_unstable();
            if moved.iter().all(|at| closed.binary_search(at).is_ok()) {
                Ok(parsed)
            } else {
                Err(diags)
            }
        }
        (Err(_), _) => Err(diags),
    }
}

const INVALID_INDENTATION: &str = "invalid indentation";

/// A composed document, or why it could not be.
type Composed = Result<(Value, SourceMap), Vec<Diagnostic>>;

/// The source map of a template [`parse`] accepted without relaxing its indentation.
pub(super) fn locate(text: &str) -> SourceMap {
    match compose(text, false, true) {
        (Ok((_, map)), _) => map,
        (Err(_), _) => SourceMap::default(),
    }
}

/// Composes `text`; with `record_ends`, also returns where each flow collection ended. With
/// `track`, nodes are located and diagnostics carry their paths.
fn compose(text: &str, record_ends: bool, track: bool) -> (Composed, Vec<(usize, usize)>) {
    let mut c = Composer {
        parser: Parser::new_from_str(text),
        path: if track {
            NodePath::default()
        } else {
            NodePath::untracked()
        },
        map: SourceMap::default(),
        diags: Diagnostics::default(),
        ends: record_ends.then(Vec::new),
        last: (1, 1),
        members: Vec::new(),
    };
    let result = c.stream();
    let Composer {
        map, diags, ends, ..
    } = c;
    (
        diags.finish(result.map(|value| (value, map))),
        ends.unwrap_or_default(),
    )
}

/// `text` with each line that starts with a closing flow bracket indented at least as far as the
/// previous non-blank line, and the (line, column) where each moved bracket now is. Lines of block
/// scalars (`|`, `>`) are left alone: their brackets are text.
pub(crate) fn indent_closing_brackets(text: &str) -> (String, Vec<(usize, usize)>) {
    let mut out = String::with_capacity(text.len() + 64);
    let mut moved = Vec::new();
    let mut previous_indent = 0;
    let mut block_scalar_parent: Option<usize> = None;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let content = line.trim_start_matches(' ');
        let indent = line.len() - content.len();
        let blank = content.trim().is_empty();
        if let Some(parent) = block_scalar_parent {
            if blank || indent > parent {
                out.push_str(line);
                continue;
            }
            block_scalar_parent = None;
        }
        if (content.starts_with(']') || content.starts_with('}')) && indent < previous_indent {
            out.extend(std::iter::repeat_n(' ', previous_indent));
            out.push_str(content);
            moved.push((i + 1, previous_indent + 1));
            continue;
        }
        out.push_str(line);
        if !blank && !content.starts_with('#') {
            previous_indent = indent;
            if starts_block_scalar(content) {
                block_scalar_parent = Some(indent);
            }
        }
    }
    (out, moved)
}

/// Whether a line ends with a block scalar header (`key: |`, `- >-`, `!Sub |2`, ...).
fn starts_block_scalar(content: &str) -> bool {
    let code = content.split(" #").next().unwrap_or(content);
    code.split_whitespace().last().is_some_and(|last| {
        let mut chars = last.chars();
        matches!(chars.next(), Some('|' | '>')) && chars.all(|c| matches!(c, '-' | '+' | '1'..='9'))
    })
}

/// Where a node starts, 1-based.
fn position(span: &Span) -> (usize, usize) {
    (span.start.line(), span.start.col() + 1)
}

/// How a tag changes the node it is on.
enum TagKind {
    /// No tag: plain scalars are resolved, others are taken as written.
    None,
    /// The non-specific tag `!`: a scalar is the string written, a collection is unchanged.
    NonSpecific,
    /// `!!str`, `!!int`, ...: the scalar is that type.
    Core(CoreTag),
    /// A CloudFormation short form: the node becomes `{long_form: node}`.
    Intrinsic(&'static str),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CoreTag {
    Str,
    Int,
    Float,
    Bool,
    Null,
    Seq,
    Map,
}

struct Composer<'a> {
    parser: Parser<'a, StrInput<'a>>,
    path: NodePath,
    map: SourceMap,
    diags: Diagnostics,
    /// Where flow collections ended (the closing bracket), when asked for.
    ends: Option<Vec<(usize, usize)>>,
    /// Where the last event started, for an error with no position of its own.
    last: (usize, usize),
    /// Members of the mappings being composed (innermost last), when nodes are not located:
    /// see [`mapping_fast`](Self::mapping_fast).
    members: Vec<(SmolStr, Value)>,
}

impl<'a> Composer<'a> {
    /// Records where the node at the current path starts, when paths are tracked.
    fn locate(&mut self, hash: u64, line: usize, column: usize) {
        if self.path.is_tracked() {
            self.map.insert_hashed(hash, line, column);
        }
    }

    fn record_end(&mut self, span: &Span) {
        if let Some(ends) = &mut self.ends {
            ends.push(position(span));
        }
    }

    fn error_at(&self, (line, column): (usize, usize), detail: &str) -> Diagnostic {
        Diagnostic::new(format!("{NOT_WELL_FORMED} {detail}"))
            .at(line, column)
            .with_path(self.path.as_str())
    }

    fn scan_error(&self, e: &ScanError) -> Diagnostic {
        let m = e.marker();
        self.error_at((m.line(), m.col() + 1), e.info())
    }

    fn next(&mut self) -> Result<(Event<'a>, Span), Diagnostic> {
        match self.parser.next_event() {
            Some(Ok(ev)) => {
                self.last = position(&ev.1);
                Ok(ev)
            }
            Some(Err(e)) => Err(self.scan_error(&e)),
            None => Err(self.error_at(self.last, "unexpected end of template")),
        }
    }

    /// The whole stream: nothing (an empty template, `null`) or exactly one document.
    fn stream(&mut self) -> Result<Value, Diagnostic> {
        let mut value = Value::Null;
        let mut documents = 0;
        loop {
            let (event, span) = self.next()?;
            match event {
                Event::StreamStart | Event::DocumentEnd | Event::Nothing => {}
                Event::StreamEnd => return Ok(value),
                Event::DocumentStart(_) => {
                    documents += 1;
                    if documents > 1 {
                        return Err(self.error_at(
                            position(&span),
                            "A template must be a single YAML document",
                        ));
                    }
                    let (line, column) = position(&span);
                    self.locate(self.path.hash(), line, column);
                    let (event, span) = self.next()?;
                    value = self.node(event, span, 0)?;
                }
                _ => return Err(self.error_at(position(&span), "unexpected YAML event")),
            }
        }
    }

    fn classify(&mut self, tag: Option<&Tag>, at: (usize, usize)) -> Option<TagKind> {
        let Some(tag) = tag else {
            return Some(TagKind::None);
        };
        if (tag.handle.is_empty() && tag.suffix == "!")
            || (tag.handle == "!" && tag.suffix.is_empty())
        {
            return Some(TagKind::NonSpecific);
        }
        if tag.is_yaml_core_schema() {
            let core = match tag.suffix.as_str() {
                "str" => CoreTag::Str,
                "int" => CoreTag::Int,
                "float" => CoreTag::Float,
                "bool" => CoreTag::Bool,
                "null" => CoreTag::Null,
                "seq" => CoreTag::Seq,
                "map" => CoreTag::Map,
                other => {
                    let diag = self.error_at(
                        at,
                        &format!("The YAML tag !!{other} is not supported by CloudFormation"),
                    );
                    self.diags.push(diag);
                    return None;
                }
            };
            return Some(TagKind::Core(core));
        }
        if tag.handle == "!"
            && let Some(key) = long_form(&tag.suffix)
        {
            return Some(TagKind::Intrinsic(key));
        }
        let name = format!("{}{}", tag.handle, tag.suffix);
        let mut detail = format!("Unsupported YAML tag {name}");
        if tag.suffix.starts_with("Rain::") {
            detail.push_str(" (a Rain directive: run `rain pkg` on the template first)");
        }
        let diag = self.error_at(at, &detail);
        self.diags.push(diag);
        None
    }

    /// Composes the node that starts with `event`, consuming all its events.
    fn node(&mut self, event: Event<'a>, span: Span, depth: usize) -> Result<Value, Diagnostic> {
        let at = position(&span);
        match event {
            Event::Scalar(text, style, _anchor, tag) => {
                let kind = self.classify(tag.as_deref(), at);
                Ok(self.scalar(text, style, kind, at))
            }
            Event::SequenceStart(_anchor, tag) => {
                let kind = self.classify(tag.as_deref(), at);
                self.tagged_collection(kind, CoreTag::Seq, at, depth, Self::sequence)
            }
            Event::MappingStart(_anchor, tag) => {
                let kind = self.classify(tag.as_deref(), at);
                let compose = if self.path.is_tracked() {
                    Self::mapping
                } else {
                    Self::mapping_fast
                };
                self.tagged_collection(kind, CoreTag::Map, at, depth, compose)
            }
            Event::Alias(_) => {
                let diag = Diagnostic::new(
                    "Template error: YAML aliases are not allowed in CloudFormation templates",
                )
                .at(at.0, at.1)
                .with_path(self.path.as_str());
                self.diags.push(diag);
                Ok(Value::Null)
            }
            _ => Err(self.error_at(at, "unexpected YAML event")),
        }
    }

    /// A sequence or mapping under its tag: core collection tags must match the node kind, an
    /// intrinsic wraps the collection in `{key: ...}` with the key as an extra path segment.
    fn tagged_collection(
        &mut self,
        kind: Option<TagKind>,
        collection: CoreTag,
        at: (usize, usize),
        depth: usize,
        compose: fn(&mut Self, usize) -> Result<Value, Diagnostic>,
    ) -> Result<Value, Diagnostic> {
        if depth >= MAX_DEPTH {
            return Err(self.error_at(at, &format!("nesting deeper than {MAX_DEPTH} levels")));
        }
        match kind {
            Some(TagKind::Intrinsic(key)) => {
                let mark = self.path.push(key);
                self.locate(self.path.hash(), at.0, at.1);
                let inner = compose(self, depth + 1)?;
                self.path.truncate(mark);
                Ok(wrap(key, inner))
            }
            Some(TagKind::Core(core)) if core != collection => {
                let diag = self.error_at(at, "The node does not match its YAML tag");
                self.diags.push(diag);
                compose(self, depth + 1)
            }
            _ => compose(self, depth + 1),
        }
    }

    fn scalar(
        &mut self,
        text: Cow<'a, str>,
        style: ScalarStyle,
        kind: Option<TagKind>,
        at: (usize, usize),
    ) -> Value {
        let plain = style == ScalarStyle::Plain;
        match kind {
            None => Value::Null,
            Some(TagKind::None) if plain => resolve_plain(&text),
            Some(TagKind::None | TagKind::NonSpecific | TagKind::Core(CoreTag::Str)) => {
                Value::String(SmolStr::new(&text))
            }
            Some(TagKind::Intrinsic(key)) => {
                let mark = self.path.push(key);
                self.locate(self.path.hash(), at.0, at.1);
                self.path.truncate(mark);
                let inner = if key == "Fn::GetAtt" {
                    // `!GetAtt Res.Attr.Sub` names attribute `Attr.Sub` of `Res`.
                    let parts = match text.split_once('.') {
                        Some((resource, attribute)) => vec![resource.into(), attribute.into()],
                        None => vec![Value::String(SmolStr::new(&text))],
                    };
                    Value::Array(parts)
                } else {
                    Value::String(SmolStr::new(&text))
                };
                wrap(key, inner)
            }
            Some(TagKind::Core(core)) => {
                let resolved = match core {
                    CoreTag::Int => int(&text),
                    CoreTag::Float => float(&text).or_else(|| int(&text)),
                    CoreTag::Bool => null_or_bool(&text).filter(Value::is_boolean),
                    CoreTag::Null => null_or_bool(&text).filter(Value::is_null),
                    CoreTag::Str | CoreTag::Seq | CoreTag::Map => None,
                };
                resolved.unwrap_or_else(|| {
                    let diag = self.error_at(at, &format!("{text:?} does not match its YAML tag"));
                    self.diags.push(diag);
                    Value::Null
                })
            }
        }
    }

    fn sequence(&mut self, depth: usize) -> Result<Value, Diagnostic> {
        let mut items = Vec::new();
        loop {
            let (event, span) = self.next()?;
            if let Event::SequenceEnd = event {
                self.record_end(&span);
                return Ok(Value::Array(items));
            }
            let mark = self.path.push_index(items.len());
            let (line, column) = position(&span);
            self.locate(self.path.hash(), line, column);
            items.push(self.node(event, span, depth)?);
            self.path.truncate(mark);
        }
    }

    fn mapping(&mut self, depth: usize) -> Result<Value, Diagnostic> {
        let mut members = Map::new();
        loop {
            let (event, span) = self.next()?;
            let at = position(&span);
            let key = match event {
                Event::MappingEnd => {
                    self.record_end(&span);
                    return Ok(Value::Object(members));
                }
                Event::Scalar(text, style, _anchor, tag) => self.key(text, style, tag, at),
                other => {
                    // Consume the complex key so the error names the right position only once.
                    let diag = self.error_at(at, "A mapping key must be a scalar");
                    self.node(other, span, depth)?;
                    self.diags.push(diag);
                    None
                }
            };
            let (event, span) = self.next()?;
            let Some(key) = key else {
                self.node(event, span, depth)?;
                continue;
            };
            let mark = self.path.push(&key);
            let duplicate = members.contains_key(&key);
            if duplicate {
                let mut detail = format!("Duplicate key \"{key}\"");
                if let Some((l, c)) = self.map.get_hashed(self.path.hash()) {
                    detail.push_str(&format!(" (first defined at line {l}, column {c})"));
                }
                let diag = self.error_at(at, &detail);
                self.diags.push(diag);
            } else {
                self.locate(self.path.hash(), at.0, at.1);
            }
            let value = self.node(event, span, depth)?;
            self.path.truncate(mark);
            if !duplicate {
                members.insert_new(key, value);
            }
        }
    }

    /// [`mapping`](Self::mapping) when nodes are not located: members are collected first and
    /// the map built at its final size. A duplicate key is only flagged here; the located pass
    /// that follows any problem reports it properly.
    fn mapping_fast(&mut self, depth: usize) -> Result<Value, Diagnostic> {
        let start = self.members.len();
        loop {
            let (event, span) = self.next()?;
            let at = position(&span);
            let key = match event {
                Event::MappingEnd => {
                    self.record_end(&span);
                    break;
                }
                Event::Scalar(text, style, _anchor, tag) => self.key(text, style, tag, at),
                other => {
                    let diag = self.error_at(at, "A mapping key must be a scalar");
                    self.node(other, span, depth)?;
                    self.diags.push(diag);
                    None
                }
            };
            let (event, span) = self.next()?;
            let value = self.node(event, span, depth)?;
            if let Some(key) = key {
                self.members.push((key, value));
            }
        }
        let mut members = Map::with_capacity(self.members.len() - start);
        let mut duplicate = false;
        for (key, value) in self.members.drain(start..) {
            duplicate |= members.insert(key, value).is_some();
        }
        if duplicate {
            let diag = self.error_at(self.last, "Duplicate key");
            self.diags.push(diag);
        }
        Ok(Value::Object(members))
    }

    /// The member name for a key scalar. CloudFormation keys are strings: a plain key that YAML
    /// 1.1 reads as a number or bool is named by that value's text (`0777:` is `"511"`, `yes:` is
    /// `"true"`), as a Java or Python loader stringifies it. `None` after reporting a bad key.
    fn key(
        &mut self,
        text: Cow<'a, str>,
        style: ScalarStyle,
        tag: Option<Cow<'a, Tag>>,
        at: (usize, usize),
    ) -> Option<SmolStr> {
        let kind = match tag.as_deref() {
            None => TagKind::None,
            Some(t) => match self.classify(Some(t), at)? {
                TagKind::Intrinsic(_) => {
                    let diag = self.error_at(at, "A short-form function cannot be a mapping key");
                    self.diags.push(diag);
                    return None;
                }
                kind => kind,
            },
        };
        if style == ScalarStyle::Plain && text == "<<" && matches!(kind, TagKind::None) {
            let mark = self.path.push("<<");
            let diag = self.error_at(
                at,
                "YAML merge keys (<<) are not supported in CloudFormation templates",
            );
            self.path.truncate(mark);
            self.diags.push(diag);
            return None;
        }
        match self.scalar(text, style, Some(kind), at) {
            Value::String(s) => Some(s),
            Value::Null => {
                let diag = self.error_at(at, "A mapping key must not be null");
                self.diags.push(diag);
                None
            }
            other => Some(other.to_string().into()),
        }
    }
}

fn wrap(key: &str, inner: Value) -> Value {
    let mut m = Map::with_capacity(1);
    m.insert(key.to_owned(), inner);
    Value::Object(m)
}
