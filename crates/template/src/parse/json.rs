//! Strict JSON (ECMA-404, as CloudFormation requires) with positions and duplicate-key detection.
//!
//! Hand-written because serde_json silently keeps the last of duplicate keys and reports no
//! positions for values. One pass over the bytes, tracking line and column as it goes, so the
//! cost is linear even for a minified template on a single line.

use super::path::NodePath;
use super::{Diagnostics, Format, MAX_DEPTH, SourceMap};
use crate::Diagnostic;
use crate::value::{Map, Number, SmolStr, Value};

use crate::errors::JSON_NOT_WELL_FORMED as NOT_WELL_FORMED;

/// Parses `text` as one JSON value followed only by whitespace. A well-formed template is
/// parsed without positions at all (the source map re-parses on first use); only a template
/// with problems is parsed again with positions and paths, for its diagnostics.
pub(super) fn parse(text: &str) -> Result<(Value, SourceMap), Vec<Diagnostic>> {
    match run::<false>(text) {
        Ok((value, _)) => Ok((value, SourceMap::lazy(text, Format::Json))),
        Err(_) => run::<true>(text),
    }
}

/// The source map of a template [`parse`] accepted.
pub(super) fn locate(text: &str) -> SourceMap {
    run::<true>(text).map(|(_, map)| map).unwrap_or_default()
}

/// One pass over `text`. `TRACK` is a type parameter, not a flag, so that the fast pass (no
/// lines, columns, paths or source map: a template is mostly whitespace and string bytes, and
/// counting lines and columns for every byte was most of the parse) compiles to its own tight
/// loops. Without `TRACK` the first problem ends the pass; the caller parses again with it for
/// the diagnostics, so what is reported never depends on the fast pass.
fn run<const TRACK: bool>(text: &str) -> Result<(Value, SourceMap), Vec<Diagnostic>> {
    let mut p = JsonParser::<TRACK> {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        line: 1,
        column: 1,
        path: if TRACK {
            NodePath::default()
        } else {
            NodePath::untracked()
        },
        map: SourceMap::default(),
        diags: Diagnostics::default(),
        members: Vec::new(),
    };
    p.skip_ws();
    p.locate(p.path.hash(), p.line, p.column);
    let result = p.document();
    let JsonParser { map, diags, .. } = p;
    diags.finish(result.map(|value| (value, map)))
}

struct JsonParser<'a, const TRACK: bool> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// 1-based line of `pos`.
    line: usize,
    /// 1-based column of `pos`, in characters.
    column: usize,
    path: NodePath,
    map: SourceMap,
    diags: Diagnostics,
    /// Members of the objects being parsed (innermost last), so that each object's map is
    /// allocated once at its final size instead of growing and rehashing member by member.
    members: Vec<(SmolStr, Value)>,
}

impl<const TRACK: bool> JsonParser<'_, TRACK> {
    /// Records where the node at the current path starts, when paths are tracked.
    fn locate(&mut self, hash: u64, line: usize, column: usize) {
        if self.path.is_tracked() {
            self.map.insert_hashed(hash, line, column);
        }
    }

    fn document(&mut self) -> Result<Value, Diagnostic> {
        let value = self.value(0)?;
        self.skip_ws();
        if self.pos < self.bytes.len() {
            return Err(self.error("unexpected content after the end of the template"));
        }
        Ok(value)
    }

    fn error(&self, detail: &str) -> Diagnostic {
        Diagnostic::new(format!("{NOT_WELL_FORMED} {detail}"))
            .at(self.line, self.column)
            .with_path(self.path.as_str())
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    /// Advances over one byte, keeping line and column (columns count characters, so UTF-8
    /// continuation bytes do not move the column).
    fn bump(&mut self) {
        if let Some(&b) = self.bytes.get(self.pos) {
            self.pos += 1;
            if !TRACK {
                return;
            }
            if b == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if b & 0xC0 != 0x80 {
                self.column += 1;
            }
        }
    }

    fn skip_ws(&mut self) {
        if !TRACK {
            self.pos = skip_whitespace(self.bytes, self.pos);
            return;
        }
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.bump();
        }
    }

    fn expect(&mut self, byte: u8, what: &str) -> Result<(), Diagnostic> {
        if self.peek() == Some(byte) {
            self.bump();
            Ok(())
        } else {
            Err(self.error(&format!("expected {what}")))
        }
    }

    /// One value at the current position (whitespace already skipped).
    fn value(&mut self, depth: usize) -> Result<Value, Diagnostic> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => self.string().map(Value::from),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(_) => Err(self.error("expected a value")),
            None => Err(self.error("unexpected end of template")),
        }
    }

    fn literal(&mut self, word: &str, value: Value) -> Result<Value, Diagnostic> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            for _ in 0..word.len() {
                self.bump();
            }
            Ok(value)
        } else {
            Err(self.error("expected a value"))
        }
    }

    fn check_depth(&self, depth: usize) -> Result<(), Diagnostic> {
        if depth > MAX_DEPTH {
            Err(self.error(&format!("nesting deeper than {MAX_DEPTH} levels")))
        } else {
            Ok(())
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, Diagnostic> {
        if !TRACK {
            return self.object_fast(depth);
        }
        self.check_depth(depth)?;
        self.bump(); // '{'
        let mut members = Map::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.bump();
            return Ok(Value::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a member name in double quotes"));
            }
            let (key_line, key_column) = (self.line, self.column);
            let key = self.string()?;
            let mark = self.path.push(&key);
            self.skip_ws();
            self.expect(b':', "':' after the member name")?;
            self.skip_ws();
            let duplicate = members.contains_key(&key);
            if duplicate {
                let mut message = format!("{NOT_WELL_FORMED} Duplicate key \"{key}\"");
                if let Some((l, c)) = self.map.get_hashed(self.path.hash()) {
                    message.push_str(&format!(" (first defined at line {l}, column {c})"));
                }
                self.diags.push(
                    Diagnostic::new(message)
                        .at(key_line, key_column)
                        .with_path(self.path.as_str()),
                );
            } else {
                self.locate(self.path.hash(), key_line, key_column);
            }
            let value = self.value(depth)?;
            self.path.truncate(mark);
            if !duplicate {
                members.insert_new(key, value);
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b'}') => {
                    self.bump();
                    return Ok(Value::Object(members));
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
    }

    /// [`object`](Self::object) for the fast pass: members are collected first and the map
    /// built at its final size; a duplicate key fails the pass (the tracked pass reports it).
    fn object_fast(&mut self, depth: usize) -> Result<Value, Diagnostic> {
        self.check_depth(depth)?;
        self.bump(); // '{'
        let start = self.members.len();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.bump();
            return Ok(Value::Object(Map::new()));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a member name in double quotes"));
            }
            let key = self.string()?;
            self.skip_ws();
            self.expect(b':', "':' after the member name")?;
            self.skip_ws();
            let value = self.value(depth)?;
            self.members.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b'}') => {
                    self.bump();
                    break;
                }
                _ => return Err(self.error("expected ',' or '}'")),
            }
        }
        let mut members = Map::with_capacity(self.members.len() - start);
        let mut duplicate = false;
        for (key, value) in self.members.drain(start..) {
            if members.contains_key(&key) {
                duplicate = true;
            } else {
                members.insert_new(key, value);
            }
        }
        if duplicate {
            return Err(self.error("duplicate key"));
        }
        Ok(Value::Object(members))
    }

    fn array(&mut self, depth: usize) -> Result<Value, Diagnostic> {
        self.check_depth(depth)?;
        self.bump(); // '['
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.bump();
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            let mark = self.path.push_index(items.len());
            self.locate(self.path.hash(), self.line, self.column);
            items.push(self.value(depth)?);
            self.path.truncate(mark);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.bump(),
                Some(b']') => {
                    self.bump();
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']'")),
            }
        }
    }

    /// A string starting at the opening quote. Plain runs are copied as slices; escapes decoded.
    fn string(&mut self) -> Result<SmolStr, Diagnostic> {
        self.bump(); // '"'
        let mut out = String::new();
        let mut first = true;
        loop {
            let start = self.pos;
            if TRACK {
                while let Some(b) = self.peek() {
                    if b == b'"' || b == b'\\' || b < 0x20 {
                        break;
                    }
                    self.bump();
                }
            } else {
                // No line or column to keep: one tight scan to the end of the plain run.
                self.pos += self.bytes[start..]
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                    .unwrap_or(self.bytes.len() - start);
            }
            // `start` and `pos` sit on ASCII bytes or the ends, so both are char boundaries.
            let run = &self.text[start..self.pos];
            match self.peek() {
                // Most strings have no escape: made straight from the text, no buffer.
                Some(b'"') if first => {
                    self.bump();
                    return Ok(SmolStr::new(run));
                }
                Some(b'"') => {
                    out.push_str(run);
                    self.bump();
                    return Ok(out.into());
                }
                Some(b'\\') => {
                    out.push_str(run);
                    self.bump();
                    self.escape(&mut out)?;
                    first = false;
                }
                Some(_) => return Err(self.error("control character in a string")),
                None => return Err(self.error("unterminated string")),
            }
        }
    }

    fn escape(&mut self, out: &mut String) -> Result<(), Diagnostic> {
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.bump();
                let high = self.hex4()?;
                let c = if (0xD800..0xDC00).contains(&high) {
                    if !self.bytes[self.pos..].starts_with(b"\\u") {
                        return Err(self.error("unpaired surrogate in a \\u escape"));
                    }
                    self.bump();
                    self.bump();
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return Err(self.error("unpaired surrogate in a \\u escape"));
                    }
                    char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                } else {
                    char::from_u32(high)
                };
                out.push(c.ok_or_else(|| self.error("unpaired surrogate in a \\u escape"))?);
                return Ok(());
            }
            _ => return Err(self.error("invalid escape in a string")),
        };
        self.bump();
        out.push(c);
        Ok(())
    }

    fn hex4(&mut self) -> Result<u32, Diagnostic> {
        let mut n = 0;
        for _ in 0..4 {
            let digit = self
                .peek()
                .and_then(|b| char::from(b).to_digit(16))
                .ok_or_else(|| self.error("expected four hex digits in a \\u escape"))?;
            n = n * 16 + digit;
            self.bump();
        }
        Ok(n)
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`; integers that fit stay exact.
    fn number(&mut self) -> Result<Value, Diagnostic> {
        let (line, column) = (self.line, self.column);
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.bump();
        }
        match self.peek() {
            Some(b'0') => self.bump(),
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("invalid number")),
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            integer = false;
            self.bump();
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("invalid number: expected a digit after '.'"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            integer = false;
            self.bump();
            if let Some(b'+' | b'-') = self.peek() {
                self.bump();
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("invalid number: expected a digit in the exponent"));
            }
            self.digits();
        }
        if matches!(self.peek(), Some(b'0'..=b'9')) {
            return Err(self.error("invalid number: leading zeros are not allowed"));
        }
        let text = &self.text[start..self.pos];
        if integer {
            if let Ok(n) = text.parse::<i64>() {
                return Ok(Value::Number(n.into()));
            }
            if let Ok(n) = text.parse::<u64>() {
                return Ok(Value::Number(n.into()));
            }
        }
        text.parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| {
                Diagnostic::new(format!("{NOT_WELL_FORMED} number out of range"))
                    .at(line, column)
                    .with_path(self.path.as_str())
            })
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.bump();
        }
    }
}

/// The first index at or after `pos` that is not JSON whitespace. A pretty-printed template is
/// mostly indentation: spaces are skipped eight bytes at a time (one 64-bit compare, and the
/// first non-space byte of the word found from its trailing zero bits), which made the fast
/// pass's whitespace skipping several times cheaper than a byte at a time.
///
/// Called before and after every token, and most tokens follow no whitespace: the first byte
/// is tested inline, and only a real run goes on to the word loop.
#[inline]
fn skip_whitespace(bytes: &[u8], pos: usize) -> usize {
    match bytes.get(pos) {
        Some(b' ' | b'\t' | b'\n' | b'\r') => skip_whitespace_run(bytes, pos + 1),
        _ => pos,
    }
}

fn skip_whitespace_run(bytes: &[u8], mut pos: usize) -> usize {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    loop {
        while let Some(word) = bytes.get(pos..).and_then(<[u8]>::first_chunk::<8>) {
            let other = u64::from_le_bytes(*word) ^ SPACES;
            if other != 0 {
                pos += (other.trailing_zeros() / 8) as usize;
                break;
            }
            pos += 8;
        }
        match bytes.get(pos) {
            Some(b' ' | b'\t' | b'\n' | b'\r') => pos += 1,
            _ => return pos,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON parser alone (`parse_template` would retry these as YAML).
    fn assert_error(text: &str, detail: &str, line: usize, column: usize) {
        let d = match parse(text) {
            Ok((v, _)) => panic!("{text:?} parsed: {v}"),
            Err(mut d) => {
                assert_eq!(d.len(), 1, "{d:?}");
                d.remove(0)
            }
        };
        assert!(d.message.starts_with(NOT_WELL_FORMED), "{text:?}: {d:?}");
        assert!(d.message.contains(detail), "{text:?}: {d:?}");
        assert_eq!(
            (d.line, d.column),
            (Some(line), Some(column)),
            "{text:?}: {d:?}"
        );
    }

    #[test]
    fn strictness_errors_with_positions() {
        assert_error("{\"A\": 1,}", "expected a member name", 1, 9);
        assert_error("{\"A\": [1, 2,]}", "expected a value", 1, 13);
        assert_error("{\"A\": 01}", "leading zeros", 1, 8);
        assert_error("{\"A\": 1.}", "digit after '.'", 1, 9);
        assert_error("{\"A\": 1e}", "exponent", 1, 9);
        assert_error("{\"A\": \"x\ty\"}", "control character", 1, 9);
        assert_error("{\"A\": \"\\x\"}", "invalid escape", 1, 9);
        assert_error("{\"A\": \"\\ud800\"}", "unpaired surrogate", 1, 14);
        assert_error("{\"A\": \"\\udc00\"}", "unpaired surrogate", 1, 14);
        assert_error("{\"A\": \"\\u12\"}", "four hex digits", 1, 12);
        assert_error("{\"A\": tru}", "expected a value", 1, 7);
        assert_error("{\"A\" 1}", "':'", 1, 6);
        assert_error("{\"A\": 1} x", "after the end", 1, 10);
        assert_error("{\"A\": 1e999}", "out of range", 1, 7);
        assert_error("{'A': 1}", "double quotes", 1, 2);
        assert_error("{\"A\": \"unterminated", "unterminated string", 1, 20);
        assert_error("{\"A\": 1 // comment\n}", "expected ',' or '}'", 1, 9);
        assert_error("", "unexpected end", 1, 1);
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        assert_error("{\"é😀\": 1,\n \"ü\": x}", "expected a value", 2, 7);
    }

    #[test]
    fn whitespace_runs_of_every_length() {
        for n in 0..20 {
            for tail in ["", "\n", "\t\r\n  "] {
                let text = format!("{}{tail}x", " ".repeat(n));
                assert_eq!(
                    skip_whitespace(text.as_bytes(), 0),
                    text.len() - 1,
                    "{text:?}"
                );
            }
        }
        assert_eq!(skip_whitespace(b"    ", 0), 4);
        assert_eq!(skip_whitespace("  é".as_bytes(), 0), 2);
    }

    #[test]
    fn numbers() {
        assert!(parse("[1e400]").is_err());
        let (v, _) = parse("[0, -0, 12, -7, 1.5, 2e3, 1E-2, 9223372036854775808]").expect("parses");
        assert_eq!(
            v,
            serde_json::json!([0, 0, 12, -7, 1.5, 2000.0, 0.01, 9223372036854775808_u64])
        );
    }
}
