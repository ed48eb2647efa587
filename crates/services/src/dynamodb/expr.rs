//! DynamoDB's expression languages — condition (also filter and key condition), update and
//! projection — parsed into small ASTs with the request's ExpressionAttributeNames/Values
//! substituted. [`Exprs`] tracks which names and values the request's expressions used, since
//! DynamoDB refuses a request that defines one it never uses. Evaluation is in `eval`.

use super::errors::validation;
use super::value::{AttrValue, Item};
use cumulo_wire::AwsError;
use std::collections::{BTreeMap, BTreeSet};

/// One step of a document path: `a`, `.b`, `[0]`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum PathElem {
    Attr(String),
    Index(usize),
}

pub type Path = Vec<PathElem>;

/// A path as DynamoDB prints it in messages: `[a, b, [0]]`.
pub fn show_path(p: &Path) -> String {
    let parts: Vec<String> = p
        .iter()
        .map(|e| match e {
            PathElem::Attr(a) => a.clone(),
            PathElem::Index(i) => format!("[{i}]"),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone)]
pub enum Operand {
    Path(Path),
    Value(AttrValue),
    Size(Path),
}

#[derive(Debug, Clone)]
pub enum Cond {
    Cmp(Operand, CmpOp, Operand),
    Between(Operand, Operand, Operand),
    In(Operand, Vec<Operand>),
    And(Box<Cond>, Box<Cond>),
    Or(Box<Cond>, Box<Cond>),
    Not(Box<Cond>),
    Exists(Path),
    NotExists(Path),
    Type(Path, Operand),
    BeginsWith(Operand, Operand),
    Contains(Operand, Operand),
}

/// The right-hand side of a SET action.
#[derive(Debug, Clone)]
pub enum SetValue {
    Plain(UpdOperand),
    Plus(UpdOperand, UpdOperand),
    Minus(UpdOperand, UpdOperand),
}

#[derive(Debug, Clone)]
pub enum UpdOperand {
    Path(Path),
    Value(AttrValue),
    IfNotExists(Path, Box<UpdOperand>),
    ListAppend(Box<UpdOperand>, Box<UpdOperand>),
}

#[derive(Debug, Clone, Default)]
pub struct Update {
    pub set: Vec<(Path, SetValue)>,
    pub remove: Vec<Path>,
    pub add: Vec<(Path, AttrValue)>,
    pub delete: Vec<(Path, AttrValue)>,
}

impl Update {
    /// Every path the update writes, for overlap checks, key checks and UPDATED_* results.
    pub fn targets(&self) -> Vec<&Path> {
        self.set
            .iter()
            .map(|(p, _)| p)
            .chain(self.remove.iter())
            .chain(self.add.iter().map(|(p, _)| p))
            .chain(self.delete.iter().map(|(p, _)| p))
            .collect()
    }
}

/// Which expression a message is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Condition,
    Filter,
    KeyCondition,
    Projection,
    Update,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Condition => "ConditionExpression",
            Kind::Filter => "FilterExpression",
            Kind::KeyCondition => "KeyConditionExpression",
            Kind::Projection => "ProjectionExpression",
            Kind::Update => "UpdateExpression",
        }
    }
}

/// The substitutions of one request, and which of them its expressions used.
pub struct Exprs {
    names: Option<BTreeMap<String, String>>,
    values: Option<BTreeMap<String, AttrValue>>,
    used_names: BTreeSet<String>,
    used_values: BTreeSet<String>,
    parsed_any: bool,
}

impl Exprs {
    pub fn new(
        names: Option<BTreeMap<String, String>>,
        values: Option<Item>,
    ) -> Result<Exprs, AwsError> {
        if values.as_ref().is_some_and(BTreeMap::is_empty) {
            return Err(validation("ExpressionAttributeValues must not be empty"));
        }
        if names.as_ref().is_some_and(BTreeMap::is_empty) {
            return Err(validation("ExpressionAttributeNames must not be empty"));
        }
        if let Some(names) = &names {
            for k in names.keys() {
                if !k.starts_with('#') || k.len() < 2 {
                    return Err(validation(format!(
                        "ExpressionAttributeNames contains invalid key: Syntax error; key: \"{k}\""
                    )));
                }
            }
        }
        if let Some(values) = &values {
            for k in values.keys() {
                if !k.starts_with(':') || k.len() < 2 {
                    return Err(validation(format!(
                        "ExpressionAttributeValues contains invalid key: Syntax error; key: \"{k}\""
                    )));
                }
            }
        }
        Ok(Exprs {
            names,
            values,
            used_names: BTreeSet::new(),
            used_values: BTreeSet::new(),
            parsed_any: false,
        })
    }

    /// After every expression of the request is parsed: refuses definitions nobody used.
    pub fn finish(&self) -> Result<(), AwsError> {
        if let Some(names) = &self.names {
            if !self.parsed_any {
                return Err(validation(
                    "ExpressionAttributeNames can only be specified when using expressions",
                ));
            }
            let unused: Vec<&str> = names
                .keys()
                .filter(|k| !self.used_names.contains(*k))
                .map(String::as_str)
                .collect();
            if !unused.is_empty() {
                return Err(validation(format!(
                    "Value provided in ExpressionAttributeNames unused in expressions: keys: {{{}}}",
                    unused.join(", ")
                )));
            }
        }
        if let Some(values) = &self.values {
            if !self.parsed_any {
                return Err(validation(
                    "ExpressionAttributeValues can only be specified when using expressions",
                ));
            }
            let unused: Vec<&str> = values
                .keys()
                .filter(|k| !self.used_values.contains(*k))
                .map(String::as_str)
                .collect();
            if !unused.is_empty() {
                return Err(validation(format!(
                    "Value provided in ExpressionAttributeValues unused in expressions: keys: {{{}}}",
                    unused.join(", ")
                )));
            }
        }
        Ok(())
    }

    pub fn condition(&mut self, text: &str, kind: Kind) -> Result<Cond, AwsError> {
        let mut p = Parser::new(self, text, kind)?;
        let c = p.or()?;
        p.expect_end()?;
        Ok(c)
    }

    pub fn update(&mut self, text: &str) -> Result<Update, AwsError> {
        let mut p = Parser::new(self, text, Kind::Update)?;
        let u = p.update()?;
        p.expect_end()?;
        Ok(u)
    }

    pub fn projection(&mut self, text: &str) -> Result<Vec<Path>, AwsError> {
        let mut p = Parser::new(self, text, Kind::Projection)?;
        let mut paths = vec![p.path()?];
        while p.eat(&Tok::Comma) {
            paths.push(p.path()?);
        }
        p.expect_end()?;
        check_overlaps(&paths.iter().collect::<Vec<_>>(), Kind::Projection)?;
        Ok(paths)
    }
}

/// DynamoDB refuses two paths of one expression where one contains the other.
pub fn check_overlaps(paths: &[&Path], kind: Kind) -> Result<(), AwsError> {
    for (i, a) in paths.iter().enumerate() {
        for b in &paths[..i] {
            let n = a.len().min(b.len());
            if a[..n] == b[..n] {
                return Err(validation(format!(
                    "Invalid {}: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: {}, path two: {}",
                    kind.label(),
                    show_path(b),
                    show_path(a)
                )));
            }
        }
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Name(String),
    Value(String),
    Int(String),
    Op(&'static str),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Dot,
    Plus,
    Minus,
    Eof,
}

impl Tok {
    fn text(&self) -> String {
        match self {
            Tok::Ident(s) | Tok::Name(s) | Tok::Value(s) | Tok::Int(s) => s.clone(),
            Tok::Op(s) => s.to_string(),
            Tok::LParen => "(".into(),
            Tok::RParen => ")".into(),
            Tok::LBracket => "[".into(),
            Tok::RBracket => "]".into(),
            Tok::Comma => ",".into(),
            Tok::Dot => ".".into(),
            Tok::Plus => "+".into(),
            Tok::Minus => "-".into(),
            Tok::Eof => "<EOF>".into(),
        }
    }

    fn keyword(&self, kw: &str) -> bool {
        matches!(self, Tok::Ident(s) if s.eq_ignore_ascii_case(kw))
    }
}

fn lex(text: &str, kind: Kind) -> Result<Vec<Tok>, AwsError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let word = |i: &mut usize| {
        let start = *i;
        while *i < chars.len() && (chars[*i].is_ascii_alphanumeric() || chars[*i] == '_') {
            *i += 1;
        }
        chars[start..*i].iter().collect::<String>()
    };
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
        let tok = match c {
            '#' | ':' => {
                i += 1;
                let w = word(&mut i);
                if w.is_empty() {
                    return Err(syntax(kind, &c.to_string(), &c.to_string()));
                }
                if c == '#' {
                    Tok::Name(format!("#{w}"))
                } else {
                    Tok::Value(format!(":{w}"))
                }
            }
            c if c.is_ascii_digit() => {
                let start = i;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                Tok::Int(chars[start..i].iter().collect())
            }
            c if c.is_ascii_alphabetic() || c == '_' => Tok::Ident(word(&mut i)),
            _ => {
                i += 1;
                match c {
                    '(' => Tok::LParen,
                    ')' => Tok::RParen,
                    '[' => Tok::LBracket,
                    ']' => Tok::RBracket,
                    ',' => Tok::Comma,
                    '.' => Tok::Dot,
                    '+' => Tok::Plus,
                    '-' => Tok::Minus,
                    '=' => Tok::Op("="),
                    '<' if two == "<>" => {
                        i += 1;
                        Tok::Op("<>")
                    }
                    '<' if two == "<=" => {
                        i += 1;
                        Tok::Op("<=")
                    }
                    '>' if two == ">=" => {
                        i += 1;
                        Tok::Op(">=")
                    }
                    '<' => Tok::Op("<"),
                    '>' => Tok::Op(">"),
                    _ => {
                        let prev = out.last().map(Tok::text).unwrap_or_default();
                        return Err(validation(format!(
                            "Invalid {}: Syntax error; token: \"{c}\", near: \"{prev}{c}\"",
                            kind.label()
                        )));
                    }
                }
            }
        };
        out.push(tok);
    }
    out.push(Tok::Eof);
    Ok(out)
}

fn syntax(kind: Kind, token: &str, near: &str) -> AwsError {
    validation(format!(
        "Invalid {}: Syntax error; token: \"{token}\", near: \"{near}\"",
        kind.label()
    ))
}

/// DynamoDB's limit on an expression's length.
const MAX_EXPRESSION_BYTES: usize = 4096;
/// DynamoDB's limit on a document path's depth.
const MAX_PATH_DEPTH: usize = 32;
/// Parentheses and NOTs nest at most this deep (keeps the recursive parser's stack small).
const MAX_NESTING: usize = 64;

struct Parser<'a> {
    ctx: &'a mut Exprs,
    toks: Vec<Tok>,
    pos: usize,
    kind: Kind,
    depth: usize,
}

impl<'a> Parser<'a> {
    fn new(ctx: &'a mut Exprs, text: &str, kind: Kind) -> Result<Self, AwsError> {
        if text.trim().is_empty() {
            return Err(validation(format!(
                "Invalid {}: The expression can not be empty;",
                kind.label()
            )));
        }
        if text.len() > MAX_EXPRESSION_BYTES {
            return Err(validation(format!(
                "Invalid {}: Expression size has exceeded the maximum allowed size; expression size: {}",
                kind.label(),
                text.len()
            )));
        }
        ctx.parsed_any = true;
        let toks = lex(text, kind)?;
        Ok(Parser {
            ctx,
            toks,
            pos: 0,
            kind,
            depth: 0,
        })
    }

    fn peek(&self) -> &Tok {
        self.toks.get(self.pos).unwrap_or(&Tok::Eof)
    }

    fn peek_at(&self, n: usize) -> &Tok {
        self.toks.get(self.pos + n).unwrap_or(&Tok::Eof)
    }

    fn next(&mut self) -> Tok {
        let t = self.peek().clone();
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// A syntax error at the current token, with the previous one as context (DynamoDB's
    /// `near`).
    fn unexpected(&self) -> AwsError {
        let tok = self.peek().text();
        let near = match self.pos.checked_sub(1).and_then(|i| self.toks.get(i)) {
            Some(prev) if *self.peek() == Tok::Eof => prev.text(),
            Some(prev) => format!("{}{}", prev.text(), tok),
            None => tok.clone(),
        };
        syntax(self.kind, &tok, &near)
    }

    fn expect(&mut self, t: &Tok) -> Result<(), AwsError> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn expect_end(&self) -> Result<(), AwsError> {
        if *self.peek() == Tok::Eof {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn err(&self, detail: impl std::fmt::Display) -> AwsError {
        validation(format!("Invalid {}: {detail}", self.kind.label()))
    }

    fn name_part(&mut self) -> Result<String, AwsError> {
        match self.next() {
            Tok::Ident(s) if super::reserved::is_reserved(&s) => Err(self.err(format!(
                "Attribute name is a reserved keyword; reserved keyword: {s}"
            ))),
            Tok::Ident(s) => Ok(s),
            Tok::Name(n) => {
                let resolved = self.ctx.names.as_ref().and_then(|m| m.get(&n)).cloned();
                match resolved {
                    Some(v) => {
                        self.ctx.used_names.insert(n);
                        Ok(v)
                    }
                    None => Err(self.err(format!(
                        "An expression attribute name used in the document path is not defined; attribute name: {n}"
                    ))),
                }
            }
            _ => {
                self.pos -= 1;
                Err(self.unexpected())
            }
        }
    }

    fn path(&mut self) -> Result<Path, AwsError> {
        let mut p = vec![PathElem::Attr(self.name_part()?)];
        loop {
            if self.eat(&Tok::Dot) {
                p.push(PathElem::Attr(self.name_part()?));
            } else if self.eat(&Tok::LBracket) {
                match self.next() {
                    Tok::Int(n) => {
                        let i = n.parse::<usize>().map_err(|_| {
                            self.err(format!("List index is too large; index: {n}"))
                        })?;
                        p.push(PathElem::Index(i));
                    }
                    _ => {
                        self.pos -= 1;
                        return Err(self.unexpected());
                    }
                }
                self.expect(&Tok::RBracket)?;
            } else {
                return Ok(p);
            }
            if p.len() > MAX_PATH_DEPTH {
                return Err(self.err(format!(
                    "The document path has too many nesting levels; nesting levels: {}",
                    p.len()
                )));
            }
        }
    }

    fn value(&mut self, name: &str) -> Result<AttrValue, AwsError> {
        match self.ctx.values.as_ref().and_then(|m| m.get(name)).cloned() {
            Some(v) => {
                self.ctx.used_values.insert(name.to_string());
                Ok(v)
            }
            None => Err(self.err(format!(
                "An expression attribute value used in expression is not defined; attribute value: {name}"
            ))),
        }
    }

    fn or(&mut self) -> Result<Cond, AwsError> {
        let mut left = self.and()?;
        while self.peek().keyword("OR") {
            self.pos += 1;
            let right = self.and()?;
            left = Cond::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Cond, AwsError> {
        let mut left = self.not()?;
        while self.peek().keyword("AND") {
            self.pos += 1;
            let right = self.not()?;
            left = Cond::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn nested<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(self.err(format!(
                "The expression has too many nesting levels; nesting levels: {}",
                self.depth
            )));
        }
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn not(&mut self) -> Result<Cond, AwsError> {
        if self.peek().keyword("NOT") {
            self.pos += 1;
            return self.nested(|p| Ok(Cond::Not(Box::new(p.not()?))));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Cond, AwsError> {
        if self.eat(&Tok::LParen) {
            let c = self.nested(Self::or)?;
            self.expect(&Tok::RParen)?;
            return Ok(c);
        }
        if let (Tok::Ident(f), Tok::LParen) = (self.peek().clone(), self.peek_at(1).clone())
            && f != "size"
        {
            return self.function(&f);
        }
        let left = self.operand()?;
        let op = match self.peek().clone() {
            Tok::Op(op) => op,
            t if t.keyword("BETWEEN") => {
                self.pos += 1;
                let lo = self.operand()?;
                if !self.peek().keyword("AND") {
                    return Err(self.unexpected());
                }
                self.pos += 1;
                let hi = self.operand()?;
                if let (Operand::Value(a), Operand::Value(b)) = (&lo, &hi) {
                    match a.compare(b) {
                        Some(std::cmp::Ordering::Greater) => {
                            return Err(self.err(format!(
                                "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {{{}:{}}}, upper bound operand: AttributeValue: {{{}:{}}}",
                                a.type_name(),
                                show_scalar(a),
                                b.type_name(),
                                show_scalar(b)
                            )));
                        }
                        None if a.type_name() != b.type_name() => {
                            return Err(self.err(format!(
                                "The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: AttributeValue: {{{}:{}}}, upper bound operand: AttributeValue: {{{}:{}}}",
                                a.type_name(),
                                show_scalar(a),
                                b.type_name(),
                                show_scalar(b)
                            )));
                        }
                        _ => {}
                    }
                }
                return Ok(Cond::Between(left, lo, hi));
            }
            t if t.keyword("IN") => {
                self.pos += 1;
                self.expect(&Tok::LParen)?;
                let mut list = vec![self.operand()?];
                while self.eat(&Tok::Comma) {
                    list.push(self.operand()?);
                }
                self.expect(&Tok::RParen)?;
                if list.len() > 100 {
                    return Err(self.err(
                        "The IN operator is provided with too many operands; number of operands: "
                            .to_string()
                            + &list.len().to_string(),
                    ));
                }
                return Ok(Cond::In(left, list));
            }
            _ => return Err(self.unexpected()),
        };
        self.pos += 1;
        let right = self.operand()?;
        let op = match op {
            "=" => CmpOp::Eq,
            "<>" => CmpOp::Ne,
            "<" => CmpOp::Lt,
            "<=" => CmpOp::Le,
            ">" => CmpOp::Gt,
            _ => CmpOp::Ge,
        };
        Ok(Cond::Cmp(left, op, right))
    }

    fn function(&mut self, f: &str) -> Result<Cond, AwsError> {
        self.pos += 2;
        let c = match f {
            "attribute_exists" => Cond::Exists(self.path()?),
            "attribute_not_exists" => Cond::NotExists(self.path()?),
            "attribute_type" => {
                let p = self.path()?;
                self.expect(&Tok::Comma)?;
                let t = self.operand()?;
                if let Operand::Value(v) = &t {
                    match v {
                        AttrValue::S(s)
                            if ["S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M"]
                                .contains(&s.as_str()) => {}
                        AttrValue::S(s) => {
                            return Err(self.err(format!(
                                "Invalid attribute type name found; type: {s}, valid types: {{ B,NULL,SS,BOOL,L,BS,N,NS,S,M }}"
                            )));
                        }
                        other => {
                            return Err(self.incorrect_operand("attribute_type", other));
                        }
                    }
                }
                Cond::Type(p, t)
            }
            "begins_with" => {
                let a = self.operand()?;
                self.expect(&Tok::Comma)?;
                let b = self.operand()?;
                for o in [&a, &b] {
                    if let Operand::Value(v) = o
                        && !matches!(v, AttrValue::S(_) | AttrValue::B(_))
                    {
                        return Err(self.incorrect_operand("begins_with", v));
                    }
                }
                Cond::BeginsWith(a, b)
            }
            "contains" => {
                let a = self.operand()?;
                self.expect(&Tok::Comma)?;
                let b = self.operand()?;
                Cond::Contains(a, b)
            }
            other => {
                return Err(self.err(format!("Invalid function name; function: {other}")));
            }
        };
        self.expect(&Tok::RParen)?;
        Ok(c)
    }

    fn incorrect_operand(&self, f: &str, v: &AttrValue) -> AwsError {
        self.err(format!(
            "Incorrect operand type for operator or function; operator or function: {f}, operand type: {}",
            v.type_name()
        ))
    }

    fn operand(&mut self) -> Result<Operand, AwsError> {
        match self.peek().clone() {
            Tok::Value(v) => {
                self.pos += 1;
                Ok(Operand::Value(self.value(&v)?))
            }
            Tok::Ident(f) if *self.peek_at(1) == Tok::LParen => {
                if f != "size" {
                    return Err(self.err(format!(
                        "The function is not allowed to be used this way in an expression; function: {f}"
                    )));
                }
                self.pos += 2;
                let p = self.path()?;
                self.expect(&Tok::RParen)?;
                Ok(Operand::Size(p))
            }
            Tok::Ident(_) | Tok::Name(_) => Ok(Operand::Path(self.path()?)),
            _ => Err(self.unexpected()),
        }
    }

    fn update(&mut self) -> Result<Update, AwsError> {
        let mut u = Update::default();
        let mut seen: Vec<&'static str> = Vec::new();
        while *self.peek() != Tok::Eof {
            let clause = match self.peek() {
                t if t.keyword("SET") => "SET",
                t if t.keyword("REMOVE") => "REMOVE",
                t if t.keyword("ADD") => "ADD",
                t if t.keyword("DELETE") => "DELETE",
                _ => return Err(self.unexpected()),
            };
            if seen.contains(&clause) {
                return Err(self.err(format!(
                    "The \"{clause}\" section can only be used once in an update expression;"
                )));
            }
            seen.push(clause);
            self.pos += 1;
            loop {
                match clause {
                    "SET" => {
                        let p = self.path()?;
                        self.expect(&Tok::Op("="))?;
                        let a = self.upd_operand()?;
                        let v = if self.eat(&Tok::Plus) {
                            SetValue::Plus(a, self.upd_operand()?)
                        } else if self.eat(&Tok::Minus) {
                            SetValue::Minus(a, self.upd_operand()?)
                        } else {
                            SetValue::Plain(a)
                        };
                        u.set.push((p, v));
                    }
                    "REMOVE" => u.remove.push(self.path()?),
                    _ => {
                        let p = self.path()?;
                        let v = match self.next() {
                            Tok::Value(name) => self.value(&name)?,
                            _ => {
                                self.pos -= 1;
                                return Err(self.unexpected());
                            }
                        };
                        let ok = if clause == "ADD" {
                            matches!(
                                v,
                                AttrValue::N(_)
                                    | AttrValue::Ss(_)
                                    | AttrValue::Ns(_)
                                    | AttrValue::Bs(_)
                            )
                        } else {
                            matches!(v, AttrValue::Ss(_) | AttrValue::Ns(_) | AttrValue::Bs(_))
                        };
                        if !ok {
                            return Err(self.err(format!(
                                "Incorrect operand type for operator or function; operator: {clause}, operand type: {}",
                                v.long_type_name()
                            )));
                        }
                        if clause == "ADD" {
                            u.add.push((p, v));
                        } else {
                            u.delete.push((p, v));
                        }
                    }
                }
                if !self.eat(&Tok::Comma) {
                    break;
                }
            }
        }
        if seen.is_empty() {
            return Err(self.unexpected());
        }
        check_overlaps(&u.targets(), Kind::Update)?;
        Ok(u)
    }

    fn upd_operand(&mut self) -> Result<UpdOperand, AwsError> {
        match self.peek().clone() {
            Tok::Value(v) => {
                self.pos += 1;
                Ok(UpdOperand::Value(self.value(&v)?))
            }
            Tok::Ident(f) if *self.peek_at(1) == Tok::LParen => {
                self.pos += 2;
                let out = match f.as_str() {
                    "if_not_exists" => {
                        let p = self.path()?;
                        self.expect(&Tok::Comma)?;
                        UpdOperand::IfNotExists(p, Box::new(self.nested(Self::upd_operand)?))
                    }
                    "list_append" => {
                        let a = self.nested(Self::upd_operand)?;
                        self.expect(&Tok::Comma)?;
                        let b = self.nested(Self::upd_operand)?;
                        for o in [&a, &b] {
                            if let UpdOperand::Value(v) = o
                                && !matches!(v, AttrValue::L(_))
                            {
                                return Err(self.err(format!(
                                    "Incorrect operand type for operator or function; operator or function: list_append, operand type: {}",
                                    v.type_name()
                                )));
                            }
                        }
                        UpdOperand::ListAppend(Box::new(a), Box::new(b))
                    }
                    other => {
                        return Err(self.err(format!("Invalid function name; function: {other}")));
                    }
                };
                self.expect(&Tok::RParen)?;
                Ok(out)
            }
            Tok::Ident(_) | Tok::Name(_) => Ok(UpdOperand::Path(self.path()?)),
            _ => Err(self.unexpected()),
        }
    }
}

fn show_scalar(v: &AttrValue) -> String {
    match v {
        AttrValue::S(s) => s.clone(),
        AttrValue::N(n) => n.to_string(),
        other => other.to_json().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamodb::number::Number;

    fn ctx() -> Exprs {
        let names = BTreeMap::from([("#s".to_string(), "status".to_string())]);
        let values = BTreeMap::from([
            (":a".to_string(), AttrValue::N(Number::parse("1").unwrap())),
            (":b".to_string(), AttrValue::N(Number::parse("5").unwrap())),
        ]);
        Exprs::new(Some(names), Some(values)).unwrap()
    }

    #[test]
    fn parses_precedence_and_paths() {
        let mut c = ctx();
        let cond = c
            .condition(
                "NOT a.b[2].c = :a OR #s BETWEEN :a AND :b AND size(x) > :a",
                Kind::Condition,
            )
            .unwrap();
        let Cond::Or(l, r) = cond else {
            panic!("OR binds loosest: {cond:?}")
        };
        assert!(matches!(*l, Cond::Not(_)));
        assert!(matches!(*r, Cond::And(_, _)));
        c.finish().unwrap();
    }

    #[test]
    fn reports_errors_as_dynamodb() {
        let mut c = ctx();
        let e = c.condition("a = :zz", Kind::Condition).unwrap_err();
        assert_eq!(
            e.message,
            "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :zz"
        );
        let e = c.condition("a = ", Kind::Condition).unwrap_err();
        assert_eq!(
            e.message,
            "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"=\""
        );
        let mut c = ctx();
        c.condition("a = :a", Kind::Condition).unwrap();
        let e = c.finish().unwrap_err();
        assert!(e.message.contains("ExpressionAttributeNames unused"), "{e}");
        let mut c = ctx();
        let e = c.update("SET a = :a, a.b = :b").unwrap_err();
        assert!(e.message.contains("Two document paths overlap"), "{e}");
        let e = c.condition("status = :a", Kind::Filter).unwrap_err();
        assert_eq!(
            e.message,
            "Invalid FilterExpression: Attribute name is a reserved keyword; reserved keyword: status"
        );
        let deep = format!("{}a = :a{}", "(".repeat(200), ")".repeat(200));
        let e = c.condition(&deep, Kind::Condition).unwrap_err();
        assert!(e.message.contains("too many nesting levels"), "{e}");
        let e = c
            .condition(&"NOT ".repeat(1100), Kind::Condition)
            .unwrap_err();
        assert!(e.message.contains("Expression size has exceeded"), "{e}");
        let e = c.update("SET a = :a SET b = :b").unwrap_err();
        assert!(
            e.message.contains("\"SET\" section can only be used once"),
            "{e}"
        );
    }

    #[test]
    fn parses_update_clauses() {
        let mut c = ctx();
        let u = c
            .update(
                "SET x = if_not_exists(x, :a) + :b, l = list_append(l, l2) REMOVE y[1] ADD n :a",
            )
            .unwrap();
        assert_eq!(u.set.len(), 2);
        assert_eq!(
            u.remove,
            vec![vec![PathElem::Attr("y".into()), PathElem::Index(1)]]
        );
        assert_eq!(u.add.len(), 1);
    }
}
