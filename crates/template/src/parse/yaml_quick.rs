//! The quick reading of a YAML template: the block-style subset most templates are written in,
//! composed straight into the value without saphyr's scanner and event stream.
//!
//! Why: saphyr-parser's scanner and parser were 56-62% of the instructions of parsing and
//! evaluating the 5,000-resource benchmark template in YAML (~270 instructions per byte of
//! input), which made a YAML template three times as slow as the same template in JSON.
//!
//! The contract that keeps this honest: [`compose`] either returns exactly the value the full
//! reading (saphyr's events through `yaml::Composer`) gives for the same text, or `None`, and
//! the full reading decides, with its positions and diagnostics. It never reports a problem of
//! its own. Whatever it does not recognise for certain makes it give up: tabs and carriage
//! returns anywhere (except in CR LF line ends, read as LF), anchors and aliases, `?` keys, core
//! (`!!`) and unknown tags, document markers past the first line, multi-line plain and quoted
//! scalars, flow collections spanning lines, block scalars with an indentation indicator, with
//! keep chomping (`+`), with more-indented lines when folded, or with no content, duplicate
//! keys, merge keys, null keys, and nesting deeper than [`MAX_QUICK_DEPTH`]. The tests compare
//! both readings on every YAML file of the shared corpus (also with CR LF line ends), on
//! generated templates in every style, and on random edits of corpus files.
//!
//! What it reads: block mappings and sequences (a sequence may sit at its key's indentation,
//! and a mapping or a sequence may start on its item's `- ` line, as in `- - a`), plain,
//! single- and double-quoted scalars on one line (plain ones resolved by YAML 1.1's rules,
//! `yaml_scalar`), flow sequences and mappings on one line, literal and folded block scalars,
//! comments, and CloudFormation's short-form tags on any of them (`yaml_tags`).

use super::yaml_scalar::resolve_plain;
use super::yaml_tags::long_form;
use crate::value::{Map, SmolStr, Value};

/// Nesting past which the quick reading gives up (the full reading enforces `MAX_DEPTH`).
const MAX_QUICK_DEPTH: usize = 100;

/// Keys longer than this are left to the full reading (YAML limits implicit keys to 1024
/// characters).
const MAX_KEY_LEN: usize = 1000;

/// The text leaves the subset: the full reading takes over.
struct GiveUp;

type Quick<T> = Result<T, GiveUp>;

/// The template's value, or `None` when the full reading must decide.
pub(super) fn compose(text: &str) -> Option<Value> {
    if text.contains('\r') {
        // A template saved on Windows: YAML reads a CR LF pair as one line break, in scalars
        // too, so the text with LF alone means the same. A CR on its own is left to saphyr.
        let unix = text.replace("\r\n", "\n");
        return if unix.contains('\r') {
            None
        } else {
            compose(&unix)
        };
    }
    if !plain_text(text.as_bytes()) {
        return None;
    }
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        members: Vec::new(),
    };
    reader.document().ok()
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    /// The start of the line to read next, between nodes.
    pos: usize,
    /// Members of the mappings being read, innermost last: each map is built at its final size.
    members: Vec<(SmolStr, Value)>,
}

impl Reader<'_> {
    fn at(&self, i: usize) -> u8 {
        self.bytes.get(i).copied().unwrap_or(b'\n')
    }

    fn is_end(&self, i: usize) -> bool {
        i >= self.bytes.len() || self.bytes[i] == b'\n'
    }

    fn skip_spaces(&self, mut i: usize) -> usize {
        while self.bytes.get(i) == Some(&b' ') {
            i += 1;
        }
        i
    }

    fn line_end(&self, i: usize) -> usize {
        self.bytes[i.min(self.bytes.len())..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(self.bytes.len(), |n| i + n)
    }

    /// The start of the line after the one `i` is on.
    fn next_line(&self, i: usize) -> usize {
        (self.line_end(i) + 1).min(self.bytes.len())
    }

    /// Moves to the next line with content (skipping blank and comment-only lines) and returns
    /// its indentation, or `None` at the end of the text. A document marker gives up.
    fn next_content(&mut self) -> Quick<Option<usize>> {
        loop {
            if self.pos >= self.bytes.len() {
                return Ok(None);
            }
            let first = self.skip_spaces(self.pos);
            match self.at(first) {
                b'\n' if first < self.bytes.len() => self.pos = first + 1,
                b'#' => self.pos = self.next_line(first),
                _ if first >= self.bytes.len() => {
                    self.pos = self.bytes.len();
                    return Ok(None);
                }
                _ => {
                    let indent = first - self.pos;
                    if indent == 0 && self.is_marker(first) {
                        return Err(GiveUp);
                    }
                    return Ok(Some(indent));
                }
            }
        }
    }

    /// `---` or `...` followed by a space or the line's end.
    fn is_marker(&self, i: usize) -> bool {
        let rest = &self.bytes[i..];
        (rest.starts_with(b"---") || rest.starts_with(b"..."))
            && matches!(self.at(i + 3), b' ' | b'\n')
    }

    /// Only spaces and a comment (after a space) remain on the line from `i`: moves past it.
    fn finish_line(&mut self, i: usize) -> Quick<()> {
        let j = self.skip_spaces(i);
        if self.is_end(j) || (j > i && self.at(j) == b'#') {
            self.pos = self.next_line(j);
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    fn document(&mut self) -> Quick<Value> {
        // Blank and comment lines, then an optional `---` line of its own.
        loop {
            let first = self.skip_spaces(self.pos);
            match self.at(first) {
                _ if first >= self.bytes.len() => return Err(GiveUp),
                b'\n' => self.pos = first + 1,
                b'#' => self.pos = self.next_line(first),
                _ => break,
            }
        }
        if self.bytes[self.pos..].starts_with(b"---") && self.is_marker(self.pos) {
            self.finish_line(self.pos + 3)?;
        }
        let Some(indent) = self.next_content()? else {
            return Err(GiveUp);
        };
        let start = self.pos + indent;
        if !self.is_key_line(start) {
            return Err(GiveUp);
        }
        let value = self.block_mapping(indent, start, 0)?;
        match self.next_content()? {
            None => Ok(value),
            Some(_) => Err(GiveUp),
        }
    }

    /// Whether the content at `i` is a mapping entry (`key:` followed by a space or the end of
    /// the line, before any comment).
    fn is_key_line(&self, i: usize) -> bool {
        match self.at(i) {
            b'\'' | b'"' => self
                .quoted(i)
                .is_ok_and(|(_, after)| self.is_key_colon(after)),
            _ => self.plain_key_end(i).is_ok(),
        }
    }

    /// A `:` at `i` that ends a block mapping key.
    fn is_key_colon(&self, i: usize) -> bool {
        self.at(i) == b':' && matches!(self.at(i + 1), b' ' | b'\n')
    }

    /// Where the plain key at `i` ends (its `:`).
    fn plain_key_end(&self, start: usize) -> Quick<usize> {
        if is_indicator(self.at(start)) || self.is_end(start) {
            return Err(GiveUp);
        }
        let end = self.line_end(start);
        let mut j = start;
        loop {
            if j >= end {
                return Err(GiveUp);
            }
            match self.bytes[j] {
                b':' if self.is_key_colon(j) => return Ok(j),
                b'#' if self.bytes[j - 1] == b' ' => return Err(GiveUp),
                _ => j += 1,
            }
        }
    }

    /// Reads the key at `*i` and its `:`; `*i` is left after the colon.
    fn key(&self, i: &mut usize) -> Quick<SmolStr> {
        let start = *i;
        let (text, after) = match self.at(start) {
            b'\'' | b'"' => self.quoted(start)?,
            _ => {
                let j = self.plain_key_end(start)?;
                (plain_key_name(&self.text[start..j])?, j)
            }
        };
        if !self.is_key_colon(after) {
            return Err(GiveUp);
        }
        *i = after + 1;
        Ok(text)
    }

    /// A block mapping at `indent` whose first key is at `first` (the start of a line's content,
    /// or just after a sequence item's `- `).
    fn block_mapping(&mut self, indent: usize, first: usize, depth: usize) -> Quick<Value> {
        if depth > MAX_QUICK_DEPTH {
            return Err(GiveUp);
        }
        let start = self.members.len();
        let mut at = first;
        loop {
            let mut after = at;
            let key = self.key(&mut after)?;
            let value = self.value_after(after, indent, true, depth)?;
            self.members.push((key, value));
            match self.next_content()? {
                Some(i) if i == indent => at = self.pos + i,
                Some(i) if i > indent => return Err(GiveUp),
                _ => break,
            }
        }
        let mut map = Map::with_capacity(self.members.len() - start);
        for (key, value) in self.members.drain(start..) {
            if map.insert(key, value).is_some() {
                return Err(GiveUp);
            }
        }
        Ok(Value::Object(map))
    }

    /// Whether the line at `self.pos` holds a sequence item at `indent`.
    fn is_item(&self, indent: usize) -> bool {
        let dash = self.pos + indent;
        self.at(dash) == b'-' && matches!(self.at(dash + 1), b' ' | b'\n')
    }

    /// A block sequence at `indent` whose first item's `-` is at `first` (the start of a line's
    /// content, or just after an outer item's `- `, as in `- - a`).
    fn block_sequence(&mut self, indent: usize, first: usize, depth: usize) -> Quick<Value> {
        if depth > MAX_QUICK_DEPTH {
            return Err(GiveUp);
        }
        let mut items = Vec::new();
        let mut dash = first;
        loop {
            let line = self.pos;
            let after_dash = dash + 1;
            let content = self.skip_spaces(after_dash);
            let item = if self.at(content) == b'-' && matches!(self.at(content + 1), b' ' | b'\n') {
                self.block_sequence(content - line, content, depth + 1)?
            } else if !self.is_end(content) && self.at(content) != b'#' && self.is_key_line(content)
            {
                self.block_mapping(content - line, content, depth + 1)?
            } else {
                self.value_after(after_dash, indent, false, depth)?
            };
            items.push(item);
            match self.next_content()? {
                Some(i) if i == indent && self.is_item(indent) => dash = self.pos + indent,
                Some(i) if i > indent => return Err(GiveUp),
                // A line at this indentation that is not an item ends a sequence that is a
                // mapping's value at the key's indentation; anywhere else the parent gives up.
                _ => return Ok(Value::Array(items)),
            }
        }
    }

    /// The node on a line of its own at `indent` (the next content line), under a parent at
    /// `parent`.
    fn block_node(&mut self, indent: usize, parent: usize, depth: usize) -> Quick<Value> {
        if self.is_item(indent) {
            return self.block_sequence(indent, self.pos + indent, depth + 1);
        }
        let content = self.pos + indent;
        if self.is_key_line(content) {
            return self.block_mapping(indent, content, depth + 1);
        }
        self.value_after(content, parent, false, depth)
    }

    /// What follows a key's `:` or an item's `-` at `i`, for a node whose parent collection is at
    /// `parent`; `same_indent_sequence` lets a block sequence sit at the parent's indentation
    /// (a mapping's value). Leaves `self.pos` at the start of the line after the node.
    fn value_after(
        &mut self,
        i: usize,
        parent: usize,
        same_indent_sequence: bool,
        depth: usize,
    ) -> Quick<Value> {
        let i = self.skip_spaces(i);
        let b = self.at(i);
        if self.is_end(i) || b == b'#' {
            self.pos = self.next_line(i);
            return match self.next_content()? {
                Some(n) if n > parent => self.block_node(n, parent, depth),
                Some(n) if n == parent && same_indent_sequence && self.is_item(n) => {
                    self.block_sequence(n, self.pos + n, depth + 1)
                }
                _ => Ok(Value::Null),
            };
        }
        match b {
            b'!' => {
                let (key, j) = self.tag(i)?;
                let j = self.skip_spaces(j);
                if self.is_end(j) || self.at(j) == b'#' {
                    self.pos = self.next_line(j);
                    // On the lines below a tag only a block collection is read here.
                    return match self.next_content()? {
                        Some(n)
                            if (n > parent || (n == parent && same_indent_sequence))
                                && self.is_item(n) =>
                        {
                            Ok(wrap(key, self.block_sequence(n, self.pos + n, depth + 1)?))
                        }
                        Some(n) if n > parent && self.is_key_line(self.pos + n) => {
                            let first = self.pos + n;
                            Ok(wrap(key, self.block_mapping(n, first, depth + 1)?))
                        }
                        _ => Err(GiveUp),
                    };
                }
                self.inline(j, parent, Some(key), depth + 1)
            }
            _ => self.inline(i, parent, None, depth),
        }
    }

    /// A tag at `i` (`!Ref`): its long-form key and where it ends.
    fn tag(&self, i: usize) -> Quick<(&'static str, usize)> {
        let mut j = i + 1;
        while !self.is_end(j) && self.bytes[j] != b' ' {
            j += 1;
        }
        let suffix = &self.text[i + 1..j];
        if !suffix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b':')
        {
            return Err(GiveUp);
        }
        let key = long_form(suffix).ok_or(GiveUp)?;
        Ok((key, j))
    }

    /// A node that starts at `i` on the current line (not a tag, not empty): a block scalar,
    /// a flow collection, a quoted or a plain scalar. `intrinsic` is the long form of a tag
    /// the scalar carries (the caller wraps the result).
    fn inline(
        &mut self,
        i: usize,
        parent: usize,
        intrinsic: Option<&'static str>,
        depth: usize,
    ) -> Quick<Value> {
        match self.at(i) {
            b'|' | b'>' => {
                let text = self.block_scalar(i, parent)?;
                Ok(scalar_value(text, false, intrinsic))
            }
            b'[' | b'{' => {
                let mut j = i;
                let value = self.flow(&mut j, depth + 1)?;
                self.finish_line(j)?;
                Ok(match intrinsic {
                    Some(key) => wrap(key, value),
                    None => value,
                })
            }
            b'\'' | b'"' => {
                let (text, j) = self.quoted(i)?;
                self.finish_line(j)?;
                Ok(scalar_value(text, false, intrinsic))
            }
            b'-' if matches!(self.at(i + 1), b' ' | b'\n') => Err(GiveUp),
            b if b != b'-' && is_indicator(b) => Err(GiveUp),
            _ => {
                let end = self.line_end(i);
                let mut j = i;
                while j < end {
                    match self.bytes[j] {
                        b'#' if self.bytes[j - 1] == b' ' => break,
                        b':' if matches!(self.at(j + 1), b' ' | b'\n') => return Err(GiveUp),
                        _ => j += 1,
                    }
                }
                let text = self.text[i..j].trim_end_matches(' ');
                self.pos = self.next_line(j);
                Ok(scalar_value(text, true, intrinsic))
            }
        }
    }

    /// A quoted scalar that starts and ends on this line: its text and the index after it.
    fn quoted(&self, i: usize) -> Quick<(SmolStr, usize)> {
        let quote = self.bytes[i];
        let end = self.line_end(i);
        let mut out = String::new();
        let mut run = i + 1;
        let mut j = i + 1;
        while j < end {
            // Jump to the next quote (or backslash, in double quotes).
            let skip = self.bytes[j..end]
                .iter()
                .position(|&b| b == quote || (quote == b'"' && b == b'\\'));
            let Some(skip) = skip else {
                break;
            };
            j += skip;
            let closes = self.bytes[j] == quote && !(quote == b'\'' && self.at(j + 1) == b'\'');
            if closes && run == i + 1 {
                // No escape before the closing quote: made straight from the text.
                return Ok((SmolStr::new(&self.text[run..j]), j + 1));
            }
            out.push_str(&self.text[run..j]);
            match (quote, self.bytes[j]) {
                (b'\'', _) if self.at(j + 1) == b'\'' => {
                    out.push('\'');
                    j += 2;
                }
                (_, b'\\') => j = self.escape(j, &mut out)?,
                _ => return Ok((out.into(), j + 1)),
            }
            run = j;
        }
        Err(GiveUp)
    }

    /// The escape at `i` (a backslash) of a double-quoted scalar, appended to `out`; returns the
    /// index after it. Only JSON's escapes are read here.
    fn escape(&self, i: usize, out: &mut String) -> Quick<usize> {
        let c = match self.at(i + 1) {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'0' => '\0',
            b'u' => {
                let hex = self.text.get(i + 2..i + 6).ok_or(GiveUp)?;
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return Err(GiveUp);
                }
                let code = u32::from_str_radix(hex, 16).map_err(|_| GiveUp)?;
                out.push(char::from_u32(code).ok_or(GiveUp)?);
                return Ok(i + 6);
            }
            _ => return Err(GiveUp),
        };
        out.push(c);
        Ok(i + 2)
    }

    /// A literal (`|`) or folded (`>`) block scalar whose header is at `i`, under a parent at
    /// `parent`. Leaves `self.pos` at the first line after its content.
    fn block_scalar(&mut self, i: usize, parent: usize) -> Quick<String> {
        let literal = self.bytes[i] == b'|';
        let mut j = i + 1;
        let strip = match self.at(j) {
            b'-' => {
                j += 1;
                true
            }
            b'+' | b'1'..=b'9' => return Err(GiveUp),
            _ => false,
        };
        self.finish_line(j)?;
        // The content's indentation is its first non-blank line's; blank lines before it may
        // not be deeper.
        let mut deepest_blank = 0;
        let mut probe = self.pos;
        let indent = loop {
            if probe >= self.bytes.len() {
                return Err(GiveUp);
            }
            let first = self.skip_spaces(probe);
            if self.is_end(first) {
                if first >= self.bytes.len() {
                    return Err(GiveUp);
                }
                deepest_blank = deepest_blank.max(first - probe);
                probe = first + 1;
                continue;
            }
            break first - probe;
        };
        if indent <= parent || deepest_blank > indent {
            return Err(GiveUp);
        }
        let mut out = String::new();
        let mut pending_breaks = 0usize;
        let mut any = false;
        loop {
            if self.pos >= self.bytes.len() {
                break;
            }
            let first = self.skip_spaces(self.pos);
            let spaces = first - self.pos;
            if self.is_end(first) {
                if first >= self.bytes.len() {
                    // Trailing spaces on the text's last line, with no line break.
                    return Err(GiveUp);
                }
                if spaces > indent {
                    return Err(GiveUp);
                }
                pending_breaks += 1;
                self.pos = first + 1;
                continue;
            }
            if spaces < indent {
                break;
            }
            let end = self.line_end(first);
            if end >= self.bytes.len() {
                // The last line has no line break: left to the full reading.
                return Err(GiveUp);
            }
            let line = &self.text[self.pos + indent..end];
            if !literal && line.starts_with(' ') {
                return Err(GiveUp);
            }
            if !any {
                // Blank lines before the first line are line breaks in either style.
                out.extend(std::iter::repeat_n('\n', pending_breaks));
            } else {
                if literal {
                    out.extend(std::iter::repeat_n('\n', pending_breaks + 1));
                } else if pending_breaks == 0 {
                    out.push(' ');
                } else {
                    out.extend(std::iter::repeat_n('\n', pending_breaks));
                }
            }
            out.push_str(line);
            any = true;
            pending_breaks = 0;
            self.pos = end + 1;
        }
        if !any {
            return Err(GiveUp);
        }
        if !strip {
            out.push('\n');
        }
        Ok(out)
    }

    /// A flow collection at `*i` that closes on this line; `*i` is left after it.
    fn flow(&mut self, i: &mut usize, depth: usize) -> Quick<Value> {
        if depth > MAX_QUICK_DEPTH {
            return Err(GiveUp);
        }
        let open = self.bytes[*i];
        let close = if open == b'[' { b']' } else { b'}' };
        *i = self.skip_spaces(*i + 1);
        let start = self.members.len();
        let mut items = Vec::new();
        if self.at(*i) != close {
            loop {
                if open == b'[' {
                    items.push(self.flow_node(i, depth)?);
                } else {
                    let key = self.flow_key(i)?;
                    let value = self.flow_node(i, depth)?;
                    self.members.push((key, value));
                }
                *i = self.skip_spaces(*i);
                match self.at(*i) {
                    b',' => {
                        *i = self.skip_spaces(*i + 1);
                        if self.at(*i) == close {
                            // A trailing comma.
                            return Err(GiveUp);
                        }
                    }
                    b if b == close => break,
                    _ => return Err(GiveUp),
                }
            }
        }
        *i += 1;
        if open == b'[' {
            return Ok(Value::Array(items));
        }
        let mut map = Map::with_capacity(self.members.len() - start);
        for (key, value) in self.members.drain(start..) {
            if map.insert(key, value).is_some() {
                return Err(GiveUp);
            }
        }
        Ok(Value::Object(map))
    }

    /// A flow mapping's key and its `:`. After a plain key a space must follow the colon; after a
    /// quoted one the value may follow at once, as in JSON (`{"Key":"v"}`).
    fn flow_key(&self, i: &mut usize) -> Quick<SmolStr> {
        let start = *i;
        let (name, after) = match self.at(start) {
            b'\'' | b'"' => {
                let (name, after) = self.quoted(start)?;
                if self.at(after) != b':' {
                    return Err(GiveUp);
                }
                *i = after + 1;
                return Ok(name);
            }
            b if is_indicator(b) => return Err(GiveUp),
            _ => {
                let mut j = start;
                loop {
                    match self.at(j) {
                        b':' if self.at(j + 1) == b' ' => break,
                        b':' if matches!(
                            self.at(j + 1),
                            b'\n' | b',' | b'[' | b']' | b'{' | b'}'
                        ) =>
                        {
                            return Err(GiveUp);
                        }
                        b'\n' | b',' | b'[' | b']' | b'{' | b'}' | b'#' => return Err(GiveUp),
                        _ => j += 1,
                    }
                }
                (plain_key_name(&self.text[start..j])?, j)
            }
        };
        if self.at(after) != b':' || self.at(after + 1) != b' ' {
            return Err(GiveUp);
        }
        *i = after + 2;
        Ok(name)
    }

    /// A node inside a flow collection at `*i`; `*i` is left after it.
    fn flow_node(&mut self, i: &mut usize, depth: usize) -> Quick<Value> {
        *i = self.skip_spaces(*i);
        let mut intrinsic = None;
        if self.at(*i) == b'!' {
            let (key, j) = self.tag(*i)?;
            intrinsic = Some(key);
            *i = self.skip_spaces(j);
        }
        let value = match self.at(*i) {
            b'[' | b'{' => {
                let inner = self.flow(i, depth + 1)?;
                return Ok(match intrinsic {
                    Some(key) => wrap(key, inner),
                    None => inner,
                });
            }
            b'\'' | b'"' => {
                let (text, j) = self.quoted(*i)?;
                let k = self.skip_spaces(j);
                if self.at(k) == b':' {
                    return Err(GiveUp);
                }
                *i = j;
                scalar_value(text, false, intrinsic)
            }
            b'-' if matches!(self.at(*i + 1), b' ' | b',' | b']' | b'}' | b'\n') => {
                return Err(GiveUp);
            }
            b if b != b'-' && is_indicator(b) => return Err(GiveUp),
            _ => {
                let start = *i;
                let mut j = start;
                loop {
                    match self.at(j) {
                        b',' | b']' | b'}' => break,
                        b'\n' | b'[' | b'{' => return Err(GiveUp),
                        b'#' if self.bytes[j - 1] == b' ' => return Err(GiveUp),
                        b':' if matches!(self.at(j + 1), b' ' | b',' | b']' | b'}' | b'\n') => {
                            return Err(GiveUp);
                        }
                        _ => j += 1,
                    }
                }
                *i = j;
                let text = self.text[start..j].trim_end_matches(' ');
                if text.is_empty() {
                    return Err(GiveUp);
                }
                scalar_value(text, true, intrinsic)
            }
        };
        Ok(value)
    }
}

/// Whether the text holds nothing whose reading differs between YAML versions or loaders, or
/// that YAML forbids: tabs (indentation or separation), carriage returns, control characters,
/// C1 controls (NEL is a line break in YAML 1.1), the line and paragraph separators, a byte
/// order mark past the start, and the non-characters U+FFFE and U+FFFF.
fn plain_text(bytes: &[u8]) -> bool {
    // Most templates are printable ASCII: one pass the compiler vectorises decides those.
    let printable = |ok: bool, &b: &u8| ok & ((b.wrapping_sub(b' ') < 0x5f) | (b == b'\n'));
    if bytes
        .chunks(64)
        .all(|chunk| chunk.iter().fold(true, printable))
    {
        return true;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' | b' '..=b'~' => {}
            0x00..=0x1f | 0x7f => return false,
            // U+0080..U+009F
            0xc2 if matches!(bytes.get(i + 1), Some(0x80..=0x9f)) => return false,
            // U+2028, U+2029
            0xe2 if bytes.get(i + 1) == Some(&0x80)
                && matches!(bytes.get(i + 2), Some(0xa8 | 0xa9)) =>
            {
                return false;
            }
            // U+FEFF, U+FFFE, U+FFFF
            0xef if matches!(
                (bytes.get(i + 1), bytes.get(i + 2)),
                (Some(0xbb), Some(0xbf)) | (Some(0xbf), Some(0xbe | 0xbf))
            ) =>
            {
                return false;
            }
            _ => {}
        }
        i += 1;
    }
    true
}

/// The member name a plain key gives, as the full reading names it: CloudFormation keys are
/// strings, so a key YAML 1.1 reads as a number or bool is named by that value's text. Merge
/// and null keys, and over-long ones, are left to the full reading.
fn plain_key_name(raw: &str) -> Quick<SmolStr> {
    let raw = raw.trim_end_matches(' ');
    if raw.is_empty() || raw.len() > MAX_KEY_LEN || raw == "<<" {
        return Err(GiveUp);
    }
    match resolve_plain(raw) {
        Value::String(s) => Ok(s),
        Value::Null => Err(GiveUp),
        other => Ok(other.to_string().into()),
    }
}

/// Characters that cannot start a plain scalar or key here (or that the quick reading leaves
/// to the full one when they do).
fn is_indicator(b: u8) -> bool {
    matches!(
        b,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
    )
}

/// A scalar's value: a plain one without a tag by YAML 1.1's rules, any other the text; under a
/// short-form tag, `{key: text}`, with `!GetAtt A.B` split at its first dot.
fn scalar_value<T>(text: T, plain: bool, intrinsic: Option<&'static str>) -> Value
where
    T: AsRef<str> + Into<SmolStr>,
{
    match intrinsic {
        None if plain => resolve_plain(text.as_ref()),
        None => Value::String(text.into()),
        Some("Fn::GetAtt") => {
            let parts = match text.as_ref().split_once('.') {
                Some((resource, attribute)) => vec![resource.into(), attribute.into()],
                None => vec![Value::String(text.into())],
            };
            wrap("Fn::GetAtt", Value::Array(parts))
        }
        Some(key) => wrap(key, Value::String(text.into())),
    }
}

fn wrap(key: &str, inner: Value) -> Value {
    let mut m = Map::with_capacity(1);
    m.insert(key.to_owned(), inner);
    Value::Object(m)
}

#[cfg(test)]
mod tests {
    use super::compose;
    use crate::parse::yaml::parse_fully;
    use std::path::{Path, PathBuf};

    /// The full reading's value as JSON text (which, unlike `Value`'s equality, sees the order
    /// of members), or `None` when it reports problems.
    fn full(text: &str) -> Result<String, String> {
        parse_fully(text)
            .map(|(v, _)| v.to_string())
            .map_err(|d| format!("{d:?}"))
    }

    /// The quick reading agrees with the full one wherever it answers. Returns whether it did.
    fn agrees(text: &str) -> bool {
        let Some(quick) = compose(text) else {
            return false;
        };
        let full = full(text);
        assert_eq!(
            Ok(quick.to_string()),
            full,
            "the quick reading differs from the full one on:\n{text}"
        );
        true
    }

    #[track_caller]
    fn reads(text: &str) {
        assert!(
            agrees(text),
            "expected the quick reading to answer:\n{text}"
        );
    }

    #[track_caller]
    fn gives_up(text: &str) {
        assert!(
            compose(text).is_none(),
            "expected the quick reading to give up:\n{text}"
        );
    }

    #[test]
    fn reads_block_collections_and_scalars() {
        reads("A: 1\nB: two\nC:\n  D: [1, 2]\n  E: {F: g, 'H': \"i\"}\n");
        reads(
            "A:\n- 1\n- x: 1\n  y: 2\n- - ignored\n"
                .split("- - ")
                .next()
                .unwrap(),
        );
        reads("A:\n  - a\n  -\n    b: c\n  - \n  - 'q''s'\nZ: ~\n");
        reads("Key:\n- a\n- b\nOther: c\n");
        reads("---\n# comment\nA: yes # trailing\nB: 0777\nC: 1.5\nD: 2010-09-09\nE: null\nF:\n");
        reads("\"Quoted key\": v\n'x y': \"a\\\"b\\\\c\\u00e9\\n\"\n");
        reads("A: http://example.com/a#b\nB: a:b\nC: -1\nD: -x\nE: ''\n");
        reads("R:\n  P:\n    Description:\n      one line on its own\n    N: 3\n");
        reads("true: 1\n1: 2\n0x1F: 3\n");
        reads("  A: indented document\n  B: 2\n");
        reads("Key  : spaced\nNested:   # comment\n  Inner: 1\n");
        reads("A: \"a\\/b \\t \\r \\b \\f \\0 \\u00e9\\u4e2d\"\nB: 'a\"b'\nC: \"a'b\"\n");
        reads("a:: b\n'': x\nL: [\"a\", 'b', c d]\n");
        reads("A: |\r\n  windows\r\n  lines\r\nB:\r\n  - 1\r\n");
    }

    #[test]
    fn reads_short_form_tags() {
        reads("A: !Ref X\nB: !GetAtt R.Arn.Sub\nC: !GetAtt [R, Arn]\nD: !Sub 'a-${X}'\n");
        reads(
            "E: !If\n  - C\n  - !Ref A\n  - !Ref AWS::NoValue\nF: !Join ['', [a, !Ref B, \"c\"]]\n",
        );
        reads(
            "G:\n  - !Ref: AWS::NoValue\n  - !Equals [!Ref E, prod]\nH: !Select [0, !GetAZs '']\n",
        );
        reads("I: !Sub |\n  line ${A}\n  two\nJ: !Base64\n  Fn::Sub: x\n");
        reads("K: !Ref 123\nL: {M: !Ref N, O: !GetAtt P.Q}\n");
        reads(
            "J: !Join\n  - ''\n  - - 'arn:aws:s3:::'\n    - !Ref B\n    - - - deep\n  # c\n  - x\n",
        );
        reads("S:\n- K: !If\n  - C\n  - a\n  O: 1\n");
        reads("T:\n  - {\"Key\":\"az\",\"Value\":{\"Fn::Select\":[0,{\"Fn::GetAZs\":\"\"}]}}\n");
    }

    #[test]
    fn reads_block_scalars() {
        reads("A: |\n  one\n\n  three\n   indented\nB: x\n");
        reads("A: |-\n  one\n  two\n\n\nB: x\n");
        reads("A: >\n  folded\n  line\n\n  para\nB: >-\n  x\n  y\n");
        reads("A:\n  - |\n    in a list\n  - >\n    folded in a list\n");
        reads("A: | # comment\n  x\n# a comment ends it\nB: 1\n");
        reads("A: |\n  keeps # this\n  and: this\n");
        reads("A: >\n  trailing  \n  spaces\nB: |\n  a  \n  b  \nC: >-\n  a\n\n\n  b\n");
        reads("A:\n  - >\n\n    leading blank line\n");
    }

    #[test]
    fn gives_up_outside_the_subset() {
        gives_up("A:\tx\n");
        gives_up("A: x\ry\n");
        gives_up("# only a comment\n");
        gives_up("A: &a x\nB: *a\n");
        gives_up("? A\n: x\n");
        gives_up("A: !!int 3\n");
        gives_up("A: !Unknown x\n");
        gives_up("A: ! x\n");
        gives_up("A: multi\n  line\n");
        gives_up("A: 'multi\n  line'\n");
        gives_up("A: [1,\n  2]\n");
        gives_up("A: |2\n   x\n");
        gives_up("A: |+\n  x\n\n");
        gives_up("A: >\n  x\n    more\n");
        gives_up("A: |\n");
        gives_up("A: |\n  no final break");
        gives_up("A: 1\nA: 2\n");
        gives_up("<<: {a: 1}\n");
        gives_up("~: 1\n");
        gives_up("A: 1\n---\nB: 2\n");
        gives_up("A: 1\n...\n");
        gives_up("A: [a, ]\n");
        gives_up("A: {a:1}\n");
        gives_up("- a\n");
        gives_up("");
        gives_up("A: b: c\n");
        gives_up("A: x\n  B: y\n");
        gives_up("A: 'x'y\n");
        gives_up("A: \"\\x41\"\n");
        gives_up("A: \u{85}\n");
        let deep = (0..150).fold(String::from("x"), |acc, _| format!("[{acc}]"));
        gives_up(&format!("A: {deep}\n"));
    }

    fn corpus_files() -> Vec<PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut dirs = vec![
            root.join("../../../shared/corpus"),
            root.join("tests"),
            root.join("../../tests"),
        ];
        let mut files = Vec::new();
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path
                    .extension()
                    .is_some_and(|e| e == "yaml" || e == "yml" || e == "template")
                {
                    files.push(path);
                }
            }
        }
        files.sort();
        files
    }

    /// Every YAML file of the shared corpus and of the repository's tests: where the quick
    /// reading answers, it answers what the full one does; and it answers for most of them.
    #[test]
    fn agrees_with_the_full_reading_on_the_corpus() {
        let files = corpus_files();
        assert!(files.len() > 300, "corpus not found: {} files", files.len());
        let mut read = 0;
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            if agrees(text) {
                read += 1;
            }
            // The same file saved with Windows line ends reads the same.
            let windows = text.replace("\r\n", "\n").replace('\n', "\r\n");
            assert_eq!(
                compose(&windows).is_some(),
                compose(text).is_some(),
                "{path:?}"
            );
            agrees(&windows);
        }
        let share = read * 100 / files.len();
        assert!(
            share >= 75,
            "the quick reading answered for {read} of {} files",
            files.len()
        );
    }

    /// Random edits of corpus files, with the characters YAML gives meaning to: wherever the
    /// quick reading still answers, it answers what the full one does.
    #[test]
    fn agrees_with_the_full_reading_on_edited_templates() {
        const ALPHABET: &[u8] = b" \n-:#'\"[]{},!|>&*?.\\a0~";
        let files = corpus_files();
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut next = move |bound: usize| rng.below(bound);
        let mut answered = 0;
        for path in files
            .iter()
            .filter(|p| !p.to_string_lossy().contains("templates-bad"))
        {
            let Ok(text) = std::fs::read_to_string(path) else {
                continue;
            };
            if text.len() > 60_000 || compose(&text).is_none() {
                continue;
            }
            for _ in 0..40 {
                let mut bytes = text.clone().into_bytes();
                for _ in 0..1 + next(3) {
                    let at = next(bytes.len());
                    let c = ALPHABET[next(ALPHABET.len())];
                    match next(3) {
                        0 => bytes[at] = c,
                        1 => bytes.insert(at, c),
                        _ => {
                            bytes.remove(at);
                        }
                    }
                }
                let Ok(edited) = String::from_utf8(bytes) else {
                    continue;
                };
                if agrees(&edited) {
                    answered += 1;
                }
            }
        }
        assert!(
            answered > 1000,
            "only {answered} edited templates were read quickly"
        );
    }

    /// xorshift64: reproducible randomness without a dependency.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, bound: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % bound.max(1) as u64) as usize
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[self.below(items.len())]
        }
    }

    const KEYS: &[&str] = &[
        "Name",
        "Fn::Sub",
        "a b",
        "'quoted key'",
        "\"dq key\"",
        "1",
        "0777",
        "yes",
        "x.y",
        "a-b",
        "k:v",
        "http://h",
        "Ref",
        "é",
    ];
    const SCALARS: &[&str] = &[
        "plain",
        "two words",
        "-1",
        "1.5",
        "0x1F",
        "1_000",
        "1:30",
        "yes",
        "Off",
        "~",
        "null",
        "2010-09-09",
        "a:b",
        "http://x/y#z",
        "arn:aws:s3:::b/*",
        "'single'",
        "'it''s'",
        "\"double\"",
        "\"esc \\\" \\\\ \\n \\u00e9\"",
        "''",
        "\"\"",
        ".5",
        "-.5",
        "1e3",
        "+12",
        "a # comment",
        "ünï",
        "${X}-${Y.Z}",
        "-x",
        "a,b",
        "a]b",
        "012345670123",
    ];
    const TAGS: &[&str] = &[
        "!Ref", "!Sub", "!GetAtt", "!Base64", "!Not", "!If", "!Join", "!Ref:",
    ];

    /// Random YAML in the shapes templates use (and some they do not), to compare both readings
    /// beyond the corpus's habits.
    struct Gen {
        rng: Rng,
        out: String,
    }

    impl Gen {
        fn pad(&mut self, n: usize) {
            self.out.extend(std::iter::repeat_n(' ', n));
        }

        fn noise(&mut self, indent: usize) {
            match self.rng.below(8) {
                0 => self.out.push('\n'),
                1 => {
                    let n = self.rng.below(indent + 3);
                    self.pad(n);
                    self.out.push_str("# note\n");
                }
                _ => {}
            }
        }

        fn flow(&mut self, depth: usize) {
            if self.rng.below(3) == 0 {
                let tag = self.rng.pick(TAGS);
                self.out.push_str(tag);
                self.out.push(' ');
            }
            let map = self.rng.below(2) == 0;
            self.out.push(if map { '{' } else { '[' });
            let n = self.rng.below(4);
            for i in 0..n {
                if i > 0 {
                    self.out
                        .push_str(if self.rng.below(4) == 0 { " ," } else { ", " });
                }
                if map {
                    let key = self.rng.pick(KEYS);
                    self.out.push_str(key);
                    let json_like = key.starts_with('"') && self.rng.below(2) == 0;
                    self.out.push_str(if json_like { ":" } else { ": " });
                }
                if depth < 3 && self.rng.below(3) == 0 {
                    self.flow(depth + 1);
                } else {
                    let s = self.rng.pick(&SCALARS[..SCALARS.len() - 6]);
                    self.out.push_str(s);
                }
            }
            self.out.push(if map { '}' } else { ']' });
        }

        fn block_scalar(&mut self, indent: usize) {
            let header = self.rng.pick(&["|", "|-", ">", ">-", "|+", "|2"]);
            self.out.push_str(header);
            self.out.push('\n');
            let inner = indent + 1 + self.rng.below(3);
            for _ in 0..1 + self.rng.below(4) {
                match self.rng.below(6) {
                    0 => self.out.push('\n'),
                    1 => {
                        self.pad(inner + 1);
                        self.out.push_str("more indented\n");
                    }
                    _ => {
                        self.pad(inner);
                        let s = self.rng.pick(SCALARS);
                        self.out.push_str(s);
                        self.out.push('\n');
                    }
                }
            }
        }

        /// The value after `key:` or `- ` of a node whose collection is at `indent`.
        fn value(&mut self, indent: usize, depth: usize) {
            let choice = if depth > 4 {
                self.rng.below(4)
            } else {
                self.rng.below(9)
            };
            match choice {
                0 | 1 => {
                    self.out.push(' ');
                    if self.rng.below(3) == 0 {
                        let tag = self.rng.pick(TAGS);
                        self.out.push_str(tag);
                        self.out.push(' ');
                    }
                    let s = self.rng.pick(SCALARS);
                    self.out.push_str(s);
                    self.out.push('\n');
                }
                2 => {
                    self.out.push(' ');
                    self.flow(0);
                    self.out.push('\n');
                }
                3 => {
                    self.out.push(' ');
                    if self.rng.below(2) == 0 {
                        self.out.push_str("!Sub ");
                    }
                    self.block_scalar(indent);
                }
                4 => self.out.push('\n'),
                5 | 6 => {
                    if self.rng.below(3) == 0 {
                        let tag = self.rng.pick(TAGS);
                        self.out.push(' ');
                        self.out.push_str(tag);
                    }
                    self.out.push('\n');
                    let inner = indent + 1 + self.rng.below(3);
                    self.mapping(inner, depth + 1);
                }
                _ => {
                    if self.rng.below(3) == 0 {
                        let tag = self.rng.pick(TAGS);
                        self.out.push(' ');
                        self.out.push_str(tag);
                    }
                    self.out.push('\n');
                    let inner = indent + self.rng.below(3);
                    self.sequence(inner, depth + 1, false);
                }
            }
        }

        fn mapping(&mut self, indent: usize, depth: usize) {
            for _ in 0..1 + self.rng.below(4) {
                self.noise(indent);
                self.pad(indent);
                let key = self.rng.pick(KEYS);
                self.out.push_str(key);
                self.out.push(':');
                self.value(indent, depth);
            }
        }

        /// A block sequence at `indent`; with `inline`, its first item continues the current
        /// line (`- - a`).
        fn sequence(&mut self, indent: usize, depth: usize, inline: bool) {
            for i in 0..1 + self.rng.below(4) {
                if !(inline && i == 0) {
                    self.noise(indent);
                    self.pad(indent);
                }
                self.out.push('-');
                if depth < 4 && self.rng.below(6) == 0 {
                    self.out.push(' ');
                    self.sequence(indent + 2, depth + 1, true);
                    continue;
                }
                if self.rng.below(4) == 0 {
                    // A mapping that starts on the item's line.
                    let key = self.rng.pick(KEYS);
                    self.out.push(' ');
                    self.out.push_str(key);
                    self.out.push(':');
                    self.value(indent + 2, depth + 1);
                    if self.rng.below(2) == 0 {
                        self.pad(indent + 2);
                        self.out.push_str("second:");
                        self.value(indent + 2, depth + 1);
                    }
                } else {
                    self.value(indent, depth);
                }
            }
        }
    }

    #[test]
    fn agrees_with_the_full_reading_on_generated_yaml() {
        let mut answered = 0;
        let mut g = Gen {
            rng: Rng(0x2545_f491_4f6c_dd1d),
            out: String::new(),
        };
        for _ in 0..20_000 {
            g.out.clear();
            if g.rng.below(4) == 0 {
                g.out.push_str("---\n");
            }
            g.mapping(0, 0);
            let text = std::mem::take(&mut g.out);
            if agrees(&text) {
                answered += 1;
            }
            g.out = text;
        }
        assert!(
            answered > 2_000,
            "only {answered} generated texts were read quickly"
        );
    }
}
