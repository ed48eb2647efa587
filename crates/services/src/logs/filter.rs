//! CloudWatch Logs filter patterns (FilterLogEvents' `filterPattern`), as the "Filter pattern
//! syntax" page describes them:
//!
//! - unstructured: terms (`ERROR`), quoted phrases (`"not found"`), exclusions (`-DEBUG`), all
//!   of which must hold; `?a ?b` matches when any of the optional terms does; `%regex%`;
//! - JSON: `{ $.level = "ERROR" && ($.latency > 100 || $.user.id != 7) }` with `= != < > <= >=`,
//!   `*` wildcards in string values, `IS NULL`, `IS TRUE`, `IS FALSE`, `NOT EXISTS`, array
//!   indexes (`$.a[0]`);
//! - space-delimited: `[ip, user, ..., status = 404, size > 1000]` over whitespace-separated
//!   fields (`"quoted"` and `[bracketed]` fields are one field each).
//!
//! Terms match case-sensitively anywhere in the message, as they do on AWS.

use cumulo_wire::AwsError;
use serde_json::Value;

/// A parsed filter pattern.
#[derive(Debug, Clone)]
pub enum Pattern {
    All,
    Terms {
        required: Vec<Term>,
        excluded: Vec<Term>,
        optional: Vec<Term>,
    },
    Json(Expr),
    Space(Vec<Field>),
}

#[derive(Debug, Clone)]
pub enum Term {
    Text(String),
    Regex(regex::Regex),
}

impl Term {
    fn matches(&self, message: &str) -> bool {
        match self {
            Term::Text(t) => message.contains(t.as_str()),
            Term::Regex(r) => r.is_match(message),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Expr {
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Cmp(Vec<Step>, Op, Literal),
    IsNull(Vec<Step>),
    IsBool(Vec<Step>, bool),
    NotExists(Vec<Step>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    Key(String),
    Index(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Number(f64),
    Text(String),
}

/// One field of a space-delimited pattern: a name (or `...`) with an optional condition.
#[derive(Debug, Clone)]
pub struct Field {
    pub ellipsis: bool,
    pub condition: Option<(Op, Literal)>,
}

fn invalid(pattern: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidParameterException",
        format!("Invalid filter pattern: {pattern}"),
    )
}

impl Pattern {
    pub fn parse(pattern: &str) -> Result<Pattern, AwsError> {
        let p = pattern.trim();
        if p.is_empty() || p == "\"\"" {
            return Ok(Pattern::All);
        }
        if let Some(inner) = p.strip_prefix('{') {
            let inner = inner.strip_suffix('}').ok_or_else(|| invalid(pattern))?;
            let tokens = lex(inner).ok_or_else(|| invalid(pattern))?;
            let mut parser = Parser { tokens, pos: 0 };
            let expr = parser.or().ok_or_else(|| invalid(pattern))?;
            if parser.pos != parser.tokens.len() {
                return Err(invalid(pattern));
            }
            return Ok(Pattern::Json(expr));
        }
        if let Some(inner) = p.strip_prefix('[') {
            let inner = inner.strip_suffix(']').ok_or_else(|| invalid(pattern))?;
            // `[]` names no field, so it constrains nothing: AWS accepts it (a recorded
            // PutSubscriptionFilter) and it matches every event.
            if inner.trim().is_empty() {
                return Ok(Pattern::All);
            }
            return parse_space(inner)
                .map(Pattern::Space)
                .ok_or_else(|| invalid(pattern));
        }
        parse_terms(p).ok_or_else(|| invalid(pattern))
    }

    pub fn matches(&self, message: &str) -> bool {
        match self {
            Pattern::All => true,
            Pattern::Terms {
                required,
                excluded,
                optional,
            } => {
                required.iter().all(|t| t.matches(message))
                    && !excluded.iter().any(|t| t.matches(message))
                    && (optional.is_empty() || optional.iter().any(|t| t.matches(message)))
            }
            Pattern::Json(expr) => serde_json::from_str::<Value>(message.trim())
                .ok()
                .is_some_and(|doc| eval(expr, &doc)),
            Pattern::Space(fields) => match_space(fields, &split_fields(message)),
        }
    }
}

fn parse_terms(p: &str) -> Option<Pattern> {
    let (mut required, mut excluded, mut optional) = (Vec::new(), Vec::new(), Vec::new());
    let mut chars = p.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&first) = chars.peek() else { break };
        let kind = match first {
            '-' | '?' => {
                chars.next();
                first
            }
            _ => ' ',
        };
        let term = match chars.peek() {
            Some('"') => {
                chars.next();
                let mut s = String::new();
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => s.push(chars.next()?),
                        c => s.push(c),
                    }
                }
                Term::Text(s)
            }
            Some('%') => {
                chars.next();
                let mut s = String::new();
                loop {
                    match chars.next()? {
                        '%' => break,
                        c => s.push(c),
                    }
                }
                Term::Regex(regex::Regex::new(&s).ok()?)
            }
            _ => {
                let mut s = String::new();
                while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                    s.push(c);
                }
                if s.is_empty() {
                    return None;
                }
                Term::Text(s)
            }
        };
        match kind {
            '-' => excluded.push(term),
            '?' => optional.push(term),
            _ => required.push(term),
        }
    }
    Some(Pattern::Terms {
        required,
        excluded,
        optional,
    })
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Selector(Vec<Step>),
    Op(Op),
    And,
    Or,
    Open,
    Close,
    Str(String),
    Word(String),
}

fn lex(s: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' => {
                chars.next();
                out.push(Tok::Open);
            }
            ')' => {
                chars.next();
                out.push(Tok::Close);
            }
            '&' | '|' => {
                chars.next();
                if chars.next()? != c {
                    return None;
                }
                out.push(if c == '&' { Tok::And } else { Tok::Or });
            }
            '=' | '!' | '<' | '>' => {
                chars.next();
                let eq = chars.next_if_eq(&'=').is_some();
                out.push(Tok::Op(match (c, eq) {
                    ('=', _) => Op::Eq,
                    ('!', true) => Op::Ne,
                    ('<', false) => Op::Lt,
                    ('<', true) => Op::Le,
                    ('>', false) => Op::Gt,
                    ('>', true) => Op::Ge,
                    _ => return None,
                }));
            }
            '"' => {
                chars.next();
                let mut v = String::new();
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => v.push(chars.next()?),
                        ch => v.push(ch),
                    }
                }
                out.push(Tok::Str(v));
            }
            '$' => {
                chars.next();
                let mut steps = Vec::new();
                loop {
                    match chars.peek() {
                        Some('.') => {
                            chars.next();
                            let mut key = String::new();
                            while let Some(ch) =
                                chars.next_if(|ch| ch.is_alphanumeric() || "_-@:".contains(*ch))
                            {
                                key.push(ch);
                            }
                            if key.is_empty() {
                                return None;
                            }
                            steps.push(Step::Key(key));
                        }
                        Some('[') => {
                            chars.next();
                            let mut n = String::new();
                            while let Some(ch) = chars.next_if(|ch| *ch != ']') {
                                n.push(ch);
                            }
                            chars.next()?;
                            steps.push(Step::Index(n.trim().parse().ok()?));
                        }
                        _ => break,
                    }
                }
                out.push(Tok::Selector(steps));
            }
            _ => {
                let mut w = String::new();
                while let Some(ch) =
                    chars.next_if(|ch| !ch.is_whitespace() && !"()&|=!<>\"".contains(*ch))
                {
                    w.push(ch);
                }
                if w.is_empty() {
                    return None;
                }
                out.push(Tok::Word(w));
            }
        }
    }
    Some(out)
}

struct Parser {
    tokens: Vec<Tok>,
    pos: usize,
}

impl Parser {
    fn next(&mut self) -> Option<Tok> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos)
    }

    fn or(&mut self) -> Option<Expr> {
        let mut left = self.and()?;
        while self.peek() == Some(&Tok::Or) {
            self.pos += 1;
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Some(left)
    }

    fn and(&mut self) -> Option<Expr> {
        let mut left = self.unary()?;
        while self.peek() == Some(&Tok::And) {
            self.pos += 1;
            left = Expr::And(Box::new(left), Box::new(self.unary()?));
        }
        Some(left)
    }

    fn word(&mut self, expected: &str) -> Option<()> {
        match self.next()? {
            Tok::Word(w) if w.eq_ignore_ascii_case(expected) => Some(()),
            _ => None,
        }
    }

    fn unary(&mut self) -> Option<Expr> {
        match self.next()? {
            Tok::Open => {
                let e = self.or()?;
                (self.next()? == Tok::Close).then_some(e)
            }
            Tok::Selector(steps) => match self.next()? {
                Tok::Op(op) => Some(Expr::Cmp(steps, op, literal(self.next()?)?)),
                Tok::Word(w) if w.eq_ignore_ascii_case("IS") => match self.next()? {
                    Tok::Word(v) if v.eq_ignore_ascii_case("NULL") => Some(Expr::IsNull(steps)),
                    Tok::Word(v) if v.eq_ignore_ascii_case("TRUE") => {
                        Some(Expr::IsBool(steps, true))
                    }
                    Tok::Word(v) if v.eq_ignore_ascii_case("FALSE") => {
                        Some(Expr::IsBool(steps, false))
                    }
                    _ => None,
                },
                Tok::Word(w) if w.eq_ignore_ascii_case("NOT") => {
                    self.word("EXISTS")?;
                    Some(Expr::NotExists(steps))
                }
                _ => None,
            },
            _ => None,
        }
    }
}

fn literal(t: Tok) -> Option<Literal> {
    match t {
        Tok::Str(s) => Some(Literal::Text(s)),
        Tok::Word(w) => Some(match w.parse::<f64>() {
            Ok(n) => Literal::Number(n),
            Err(_) => Literal::Text(w),
        }),
        _ => None,
    }
}

fn select<'v>(doc: &'v Value, steps: &[Step]) -> Option<&'v Value> {
    steps.iter().try_fold(doc, |v, s| match s {
        Step::Key(k) => v.get(k.as_str()),
        Step::Index(i) => v.get(*i),
    })
}

fn eval(expr: &Expr, doc: &Value) -> bool {
    match expr {
        Expr::And(a, b) => eval(a, doc) && eval(b, doc),
        Expr::Or(a, b) => eval(a, doc) || eval(b, doc),
        Expr::IsNull(s) => select(doc, s).is_some_and(Value::is_null),
        Expr::IsBool(s, b) => select(doc, s).and_then(Value::as_bool) == Some(*b),
        Expr::NotExists(s) => select(doc, s).is_none(),
        Expr::Cmp(s, op, lit) => select(doc, s).is_some_and(|v| compare_json(v, *op, lit)),
    }
}

fn compare_json(v: &Value, op: Op, lit: &Literal) -> bool {
    match v {
        Value::Number(n) => n
            .as_f64()
            .is_some_and(|n| compare_value(&n.to_string(), Some(n), op, lit)),
        Value::String(s) => compare_value(s, s.parse().ok(), op, lit),
        Value::Bool(b) => compare_value(&b.to_string(), None, op, lit),
        _ => false,
    }
}

/// Compares a field (its text, and its number when it is one) with a literal: numbers compare
/// numerically with every operator; text only with `=`/`!=`, `*` matching any run.
fn compare_value(text: &str, number: Option<f64>, op: Op, lit: &Literal) -> bool {
    match lit {
        Literal::Number(want) => number.is_some_and(|n| match op {
            Op::Eq => n == *want,
            Op::Ne => n != *want,
            Op::Lt => n < *want,
            Op::Gt => n > *want,
            Op::Le => n <= *want,
            Op::Ge => n >= *want,
        }),
        Literal::Text(want) => match op {
            Op::Eq => wildcard(want, text),
            Op::Ne => !wildcard(want, text),
            _ => false,
        },
    }
}

/// `*` matches any run of characters; everything else literally.
fn wildcard(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    true
}

fn parse_space(inner: &str) -> Option<Vec<Field>> {
    let mut fields = Vec::new();
    for raw in inner.split(',') {
        let f = raw.trim();
        if f.is_empty() {
            return None;
        }
        if f == "..." {
            fields.push(Field {
                ellipsis: true,
                condition: None,
            });
            continue;
        }
        let tokens = lex(f)?;
        let mut it = tokens.into_iter();
        match it.next()? {
            Tok::Word(_) => {}
            _ => return None,
        }
        let condition = match (it.next(), it.next()) {
            (None, _) => None,
            (Some(Tok::Op(op)), Some(t)) => Some((op, literal(t)?)),
            _ => return None,
        };
        if it.next().is_some() {
            return None;
        }
        fields.push(Field {
            ellipsis: false,
            condition,
        });
    }
    Some(fields)
}

/// Splits a message into whitespace-separated fields; `"..."` and `[...]` are one field each
/// (without their delimiters), as AWS reads them.
fn split_fields(message: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = message.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let Some(&c) = chars.peek() else { break };
        let mut f = String::new();
        let close = match c {
            '"' => Some('"'),
            '[' => Some(']'),
            _ => None,
        };
        if let Some(close) = close {
            chars.next();
            for ch in chars.by_ref() {
                if ch == close {
                    break;
                }
                f.push(ch);
            }
        } else {
            while let Some(ch) = chars.next_if(|ch| !ch.is_whitespace()) {
                f.push(ch);
            }
        }
        out.push(f);
    }
    out
}

fn match_space(fields: &[Field], values: &[String]) -> bool {
    match fields.split_first() {
        None => values.is_empty(),
        Some((f, rest)) if f.ellipsis => {
            (0..=values.len()).any(|skip| match_space(rest, &values[skip..]))
        }
        Some((f, rest)) => match values.split_first() {
            None => false,
            Some((v, vs)) => {
                let ok = f
                    .condition
                    .as_ref()
                    .is_none_or(|(op, lit)| compare_value(v, v.parse().ok(), *op, lit));
                ok && match_space(rest, vs)
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, msg: &str) -> bool {
        Pattern::parse(p).expect("parses").matches(msg)
    }

    #[test]
    fn terms_phrases_and_exclusions() {
        assert!(m("", "anything"));
        assert!(m("ERROR", "an ERROR here"));
        assert!(!m("ERROR", "an error here"));
        assert!(m("ERROR timeout", "ERROR: timeout"));
        assert!(!m("ERROR timeout", "ERROR: ok"));
        assert!(m("\"not found\"", "file not found"));
        assert!(!m("\"not found\"", "not really found"));
        assert!(m("ERROR -DEBUG", "ERROR x"));
        assert!(!m("ERROR -DEBUG", "ERROR DEBUG x"));
        assert!(m("?ERROR ?WARN", "WARN disk"));
        assert!(!m("?ERROR ?WARN", "INFO disk"));
        assert!(m("%ERR(OR)?\\s\\d+%", "ERR 42"));
    }

    #[test]
    fn json_patterns() {
        let doc = r#"{"level":"ERROR","latency":250,"user":{"id":7,"name":"ann"},"tags":["a","b"],"ok":true,"gone":null}"#;
        assert!(m(r#"{ $.level = "ERROR" }"#, doc));
        assert!(m("{ $.level = ERR* }", doc));
        assert!(!m(r#"{ $.level != "ERROR" }"#, doc));
        assert!(m("{ $.latency > 100 && $.user.id = 7 }", doc));
        assert!(!m("{ $.latency < 100 && $.user.id = 7 }", doc));
        assert!(m("{ $.latency < 100 || $.user.name = \"ann\" }", doc));
        assert!(m("{ ($.latency >= 250) && ($.tags[1] = \"b\") }", doc));
        assert!(m(
            "{ $.ok IS TRUE && $.gone IS NULL && $.missing NOT EXISTS }",
            doc
        ));
        assert!(!m("{ $.level = \"ERROR\" }", "not json"));
        assert!(Pattern::parse("{ $.x = }").is_err());
        assert!(Pattern::parse("{ $.x = 1").is_err());
    }

    #[test]
    fn an_empty_space_delimited_pattern_matches_everything() {
        let p = Pattern::parse("[]").expect("AWS accepts []");
        assert!(p.matches("anything at all") && p.matches(""));
        assert!(Pattern::parse("[ ]").is_ok());
    }

    #[test]
    fn space_delimited() {
        let line = r#"127.0.0.1 - frank [10/Oct/2000:13:25:15 -0700] "GET /a HTTP/1.0" 404 1534"#;
        assert!(m(
            "[ip, id, user, timestamp, request, status = 404, size]",
            line
        ));
        assert!(m("[..., status = 4*, size > 1000]", line));
        assert!(!m("[..., status = 200, size]", line));
        assert!(!m("[ip, user]", line));
    }
}
