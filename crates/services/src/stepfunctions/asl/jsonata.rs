//! A focused JSONata evaluator for Step Functions' `QueryLanguage: JSONata`: the expression
//! forms and functions state machines write (paths, predicates, constructors, operators,
//! conditionals, blocks, lambdas, the common built-in functions and AWS's additions
//! `$partition`, `$range`, `$hash`, `$random`, `$uuid`, `$parse`). Sequences are arrays: a path
//! step over an array maps and flattens, and a one-item result is that item, as JSONata does.

use serde_json::{Map, Number, Value, json};
use std::collections::HashMap;
use std::rc::Rc;

#[path = "jsonata_references.rs"]
mod references;
#[path = "jsonata_tuples.rs"]
mod tuples;

/// Why an expression failed: the text AWS reports as the cause of `States.QueryEvaluationError`.
#[derive(Debug, Clone, PartialEq)]
pub struct Error(pub String);

type R<T> = Result<T, Error>;

fn err<T>(m: impl Into<String>) -> R<T> {
    Err(Error(m.into()))
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Name(String),
    Var(String),
    Op(&'static str),
    /// A `/pattern/flags` literal: its pattern and flags (`i`, `m`).
    Regex(String, String),
}

const OPS: [&str; 31] = [
    ":=", "~>", "..", "!=", "<=", ">=", "**", ".", "[", "]", "{", "}", "(", ")", ",", ":", ";",
    "?", "+", "-", "*", "/", "%", "=", "<", ">", "&", "|", "^", "@", "#",
];

/// Whether a `/` after these tokens starts a regular expression (an operand is expected)
/// rather than dividing.
fn expects_operand(last: Option<&Tok>) -> bool {
    match last {
        None => true,
        Some(Tok::Op(o)) => !matches!(*o, ")" | "]" | "}"),
        Some(Tok::Name(n)) => matches!(n.as_str(), "and" | "or" | "in"),
        _ => false,
    }
}

/// Reads a regular expression literal whose opening `/` is at `start`: its pattern, flags and
/// the index after it.
fn regex_literal(cs: &[char], start: usize) -> R<(String, String, usize)> {
    let mut i = start + 1;
    let mut class = false;
    let mut pattern = String::new();
    loop {
        let Some(&c) = cs.get(i) else {
            return err("S0302: No terminating / in regular expression");
        };
        if c == '\\' {
            pattern.push(c);
            if let Some(&d) = cs.get(i + 1) {
                pattern.push(d);
            }
            i += 2;
            continue;
        }
        if c == '/' && !class {
            break;
        }
        match c {
            '[' => class = true,
            ']' => class = false,
            _ => {}
        }
        pattern.push(c);
        i += 1;
    }
    if pattern.is_empty() {
        return err("S0301: Empty regular expressions are not allowed");
    }
    i += 1;
    let mut flags = String::new();
    while let Some(&f) = cs.get(i).filter(|f| **f == 'i' || **f == 'm') {
        flags.push(f);
        i += 1;
    }
    Ok((pattern, flags, i))
}

/// Compiles a JavaScript regular expression with the `regex` crate. JavaScript's ASCII
/// classes (`\d`, `\w`) are kept ASCII; look-around and backreferences, which the crate does
/// not have, are refused with its reason.
fn compile_regex(pattern: &str, flags: &str) -> R<regex::Regex> {
    let mut translated = String::new();
    let mut cs = pattern.chars();
    while let Some(c) = cs.next() {
        if c != '\\' {
            translated.push(c);
            continue;
        }
        match cs.next() {
            Some('d') => translated.push_str("[0-9]"),
            Some('D') => translated.push_str("[^0-9]"),
            Some('w') => translated.push_str("[0-9A-Za-z_]"),
            Some('W') => translated.push_str("[^0-9A-Za-z_]"),
            Some('/') => translated.push('/'),
            Some(o) => {
                translated.push('\\');
                translated.push(o);
            }
            None => translated.push('\\'),
        }
    }
    regex::RegexBuilder::new(&translated)
        .case_insensitive(flags.contains('i'))
        .multi_line(flags.contains('m'))
        .build()
        .map_err(|e| {
            let reason = e.to_string();
            let reason = reason.lines().last().unwrap_or("").trim().to_string();
            Error(format!(
                "Invalid regular expression /{pattern}/: {reason} (cumulo's JSONata runs regular expressions without look-around or backreferences)"
            ))
        })
}

fn tokens(src: &str) -> R<Vec<Tok>> {
    let cs: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && cs.get(i + 1) == Some(&'*') {
            let rest: String = cs[i..].iter().collect();
            let end = rest
                .find("*/")
                .ok_or(Error("S0106: Comment has no closing tag".into()))?;
            i += rest[..end + 2].chars().count();
        } else if c == '"' || c == '\'' {
            let mut s = String::new();
            i += 1;
            loop {
                let Some(&d) = cs.get(i) else {
                    return err("S0101: String literal must be terminated by a matching quote");
                };
                i += 1;
                if d == c {
                    break;
                }
                if d == '\\' {
                    let e = cs.get(i).copied().unwrap_or('\\');
                    i += 1;
                    s.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        'u' => {
                            let hex: String = cs.iter().skip(i).take(4).collect();
                            i += 4;
                            u32::from_str_radix(&hex, 16)
                                .ok()
                                .and_then(char::from_u32)
                                .unwrap_or('\u{fffd}')
                        }
                        o => o,
                    });
                } else {
                    s.push(d);
                }
            }
            out.push(Tok::Str(s));
        } else if c == '`' {
            let start = i + 1;
            let end = cs[start..].iter().position(|&d| d == '`').ok_or(Error(
                "S0105: Quoted property name must be terminated with a backquote (`)".into(),
            ))?;
            out.push(Tok::Name(cs[start..start + end].iter().collect()));
            i = start + end + 1;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < cs.len()
                && (cs[i].is_ascii_digit()
                    || (cs[i] == '.' && cs.get(i + 1).is_some_and(char::is_ascii_digit))
                    || ((cs[i] == 'e' || cs[i] == 'E')
                        && cs
                            .get(i + 1)
                            .is_some_and(|d| d.is_ascii_digit() || *d == '-' || *d == '+')))
            {
                if cs[i] == 'e' || cs[i] == 'E' {
                    i += 1;
                }
                i += 1;
            }
            let t: String = cs[start..i].iter().collect();
            out.push(Tok::Num(
                t.parse()
                    .map_err(|_| Error(format!("Invalid number {t}")))?,
            ));
        } else if c == '$' {
            let start = i + 1;
            i += 1;
            if cs.get(i) == Some(&'$') {
                i += 1;
            }
            while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            out.push(Tok::Var(cs[start..i].iter().collect()));
        } else if c == '/' && cs.get(i + 1) != Some(&'*') && expects_operand(out.last()) {
            let (pattern, flags, end) = regex_literal(&cs, i)?;
            out.push(Tok::Regex(pattern, flags));
            i = end;
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < cs.len() && (cs[i].is_alphanumeric() || cs[i] == '_') {
                i += 1;
            }
            out.push(Tok::Name(cs[start..i].iter().collect()));
        } else {
            let rest: String = cs[i..cs.len().min(i + 2)].iter().collect();
            let Some(op) = OPS.iter().find(|o| rest.starts_with(**o)) else {
                return err(format!("S0204: Unknown operator: \"{c}\""));
            };
            out.push(Tok::Op(op));
            i += op.len();
        }
    }
    Ok(out)
}

#[derive(Debug, Clone)]
enum Node {
    Lit(Value),
    Name(String),
    Var(String),
    Context,
    Wild,
    Path(Box<Node>, Box<Node>),
    Filter(Box<Node>, Box<Node>),
    Bin(&'static str, Box<Node>, Box<Node>),
    Neg(Box<Node>),
    Cond(Box<Node>, Box<Node>, Option<Box<Node>>),
    Array(Vec<Node>),
    Object(Vec<(Node, Node)>),
    Block(Vec<Node>),
    Bind(String, Box<Node>),
    Call(Box<Node>, Vec<Node>),
    Lambda(Rc<(Vec<String>, Node)>),
    Range(Box<Node>, Box<Node>),
    Chain(Box<Node>, Box<Node>),
    Regex(Rc<regex::Regex>),
    /// `**`: the context and every value below it (arrays are looked into, not listed).
    Descendants,
    /// `sequence^(>key, key)`: the sequence sorted (stably) by its terms.
    OrderBy(Box<Node>, Vec<(bool, Node)>),
    /// `sequence{key: value}`: the items grouped by key, each group's value evaluated over it.
    Group(Box<Node>, Vec<(Node, Node)>),
    /// `| location | update [, delete] |`: a function copying its argument with the objects
    /// `location` selects updated.
    Transform(Rc<(Node, Node, Option<Node>)>),
    /// `%`: the parent of the context value, read from the label the step that produced it
    /// bound (the label is resolved when the expression is parsed).
    Parent(String),
    /// `step@$v`: the step binds each of its values to `$v` and keeps the context.
    Focus(Box<Node>, String),
    /// `step#$i`: the step binds each value's position to `$i`.
    Index(Box<Node>, String),
    /// A path evaluated as a stream of tuples (a value with its bindings), because one of its
    /// steps binds a focus, a position or a parent label.
    Tuples(Rc<tuples::TuplePath>),
}

/// A token as JSONata's messages quote it.
fn shown(t: Option<&Tok>) -> String {
    match t {
        None => "(end)".into(),
        Some(Tok::Num(n)) => num(*n).to_string(),
        Some(Tok::Str(s) | Tok::Name(s)) => Value::String(s.clone()).to_string(),
        Some(Tok::Var(v)) => Value::String(format!("${v}")).to_string(),
        Some(Tok::Op(o)) => Value::String(o.to_string()).to_string(),
        Some(Tok::Regex(p, f)) => Value::String(format!("/{p}/{f}")).to_string(),
    }
}

struct Parser {
    toks: Vec<Tok>,
    at: usize,
    /// How many `%` have been read: each gets its own label.
    parents: usize,
}

fn bp(op: &str) -> u8 {
    match op {
        "." => 75,
        "[" | "(" | "^" | "@" | "#" => 80,
        "{" => 70,
        "*" | "/" | "%" => 60,
        "+" | "-" | "&" => 50,
        "=" | "!=" | "<" | "<=" | ">" | ">=" | "in" => 40,
        "~>" => 40,
        "and" => 30,
        "or" => 25,
        "?" => 20,
        ":=" => 10,
        _ => 0,
    }
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.at)
    }
    fn is_op(&self, o: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(p)) if *p == o)
    }
    fn expect(&mut self, o: &str) -> R<()> {
        if self.is_op(o) {
            self.at += 1;
            Ok(())
        } else if self.peek().is_none() {
            err(format!("S0203: Expected \"{o}\" before end of expression"))
        } else {
            err(format!(
                "S0202: Expected \"{o}\", got {}",
                shown(self.peek())
            ))
        }
    }
    fn infix_op(&self) -> Option<&'static str> {
        match self.peek()? {
            Tok::Op(o) => Some(o),
            Tok::Name(n) if n == "and" => Some("and"),
            Tok::Name(n) if n == "or" => Some("or"),
            Tok::Name(n) if n == "in" => Some("in"),
            _ => None,
        }
    }

    fn expr(&mut self, rbp: u8) -> R<Node> {
        let mut left = self.prefix()?;
        while let Some(op) = self.infix_op() {
            let p = bp(op);
            if p <= rbp {
                break;
            }
            self.at += 1;
            left = match op {
                // An order-by or a grouping sorts or groups the whole path before it, not
                // only its last step.
                "." => match self.expr(p)? {
                    Node::OrderBy(step, terms) => {
                        Node::OrderBy(Box::new(Node::Path(Box::new(left), step)), terms)
                    }
                    Node::Group(step, pairs) => {
                        Node::Group(Box::new(Node::Path(Box::new(left), step)), pairs)
                    }
                    step => Node::Path(Box::new(left), Box::new(step)),
                },
                "[" => {
                    if self.is_op("]") {
                        self.at += 1;
                        left
                    } else {
                        let f = self.expr(0)?;
                        self.expect("]")?;
                        Node::Filter(Box::new(left), Box::new(f))
                    }
                }
                "(" => Node::Call(Box::new(left), self.list(")")?),
                "^" => Node::OrderBy(Box::new(left), self.order_terms()?),
                "{" => Node::Group(Box::new(left), self.pairs()?),
                "?" => {
                    let then = self.expr(0)?;
                    let other = if self.is_op(":") {
                        self.at += 1;
                        Some(Box::new(self.expr(p - 1)?))
                    } else {
                        None
                    };
                    Node::Cond(Box::new(left), Box::new(then), other)
                }
                ":=" => {
                    let Node::Var(v) = left else {
                        return err(
                            "S0212: The left side of := must be a variable name (start with $)",
                        );
                    };
                    Node::Bind(v, Box::new(self.expr(p - 1)?))
                }
                "~>" => Node::Chain(Box::new(left), Box::new(self.expr(p)?)),
                "@" | "#" => {
                    let Node::Var(v) = self.expr(p)? else {
                        return err(format!(
                            "S0214: The right side of {op} must be a variable name (start with $)"
                        ));
                    };
                    if op == "@" {
                        Node::Focus(Box::new(left), v)
                    } else {
                        Node::Index(Box::new(left), v)
                    }
                }
                op => Node::Bin(op, Box::new(left), Box::new(self.expr(p)?)),
            };
        }
        Ok(left)
    }

    /// An object constructor's `key: value` pairs after its `{`, through its `}`.
    fn pairs(&mut self) -> R<Vec<(Node, Node)>> {
        let mut pairs = Vec::new();
        if !self.is_op("}") {
            loop {
                let k = self.expr(0)?;
                self.expect(":")?;
                let v = self.expr(0)?;
                pairs.push((k, v));
                if self.is_op(",") {
                    self.at += 1;
                    continue;
                }
                break;
            }
        }
        self.expect("}")?;
        Ok(pairs)
    }

    /// An order-by's terms after its `^`: `(>price, name)`, `>` descending.
    fn order_terms(&mut self) -> R<Vec<(bool, Node)>> {
        self.expect("(")?;
        let mut terms = Vec::new();
        loop {
            let descending = if self.is_op(">") || self.is_op("<") {
                let d = self.is_op(">");
                self.at += 1;
                d
            } else {
                false
            };
            terms.push((descending, self.expr(0)?));
            if self.is_op(",") {
                self.at += 1;
                continue;
            }
            break;
        }
        self.expect(")")?;
        Ok(terms)
    }

    fn list(&mut self, close: &str) -> R<Vec<Node>> {
        let mut items = Vec::new();
        if self.is_op(close) {
            self.at += 1;
            return Ok(items);
        }
        loop {
            let item = self.expr(0)?;
            if close == "]" && self.is_op("..") {
                self.at += 1;
                let hi = self.expr(0)?;
                items.push(Node::Range(Box::new(item), Box::new(hi)));
            } else {
                items.push(item);
            }
            if self.is_op(",") {
                self.at += 1;
                continue;
            }
            self.expect(close)?;
            return Ok(items);
        }
    }

    fn prefix(&mut self) -> R<Node> {
        let Some(t) = self.peek().cloned() else {
            return err("S0207: Unexpected end of expression");
        };
        self.at += 1;
        Ok(match t {
            Tok::Num(n) => Node::Lit(num(n)),
            Tok::Str(s) => Node::Lit(Value::String(s)),
            Tok::Var(v) if v.is_empty() => Node::Context,
            Tok::Var(v) => Node::Var(v),
            Tok::Name(n) => match n.as_str() {
                "true" => Node::Lit(Value::Bool(true)),
                "false" => Node::Lit(Value::Bool(false)),
                "null" => Node::Lit(Value::Null),
                "function" if self.is_op("(") => {
                    self.at += 1;
                    let mut params = Vec::new();
                    while let Some(Tok::Var(v)) = self.peek().cloned() {
                        self.at += 1;
                        params.push(v);
                        if self.is_op(",") {
                            self.at += 1;
                        }
                    }
                    self.expect(")")?;
                    self.expect("{")?;
                    let body = self.expr(0)?;
                    self.expect("}")?;
                    Node::Lambda(Rc::new((params, body)))
                }
                _ => Node::Name(n),
            },
            Tok::Regex(p, f) => Node::Regex(Rc::new(compile_regex(&p, &f)?)),
            Tok::Op("|") => {
                let location = self.expr(0)?;
                self.expect("|")?;
                let update = self.expr(0)?;
                let delete = if self.is_op(",") {
                    self.at += 1;
                    Some(self.expr(0)?)
                } else {
                    None
                };
                self.expect("|")?;
                Node::Transform(Rc::new((location, update, delete)))
            }
            Tok::Op("-") => Node::Neg(Box::new(self.expr(70)?)),
            Tok::Op("*") => Node::Wild,
            Tok::Op("[") => Node::Array(self.list("]")?),
            Tok::Op("(") => {
                let mut body = Vec::new();
                while !self.is_op(")") {
                    body.push(self.expr(0)?);
                    if self.is_op(";") {
                        self.at += 1;
                    } else {
                        break;
                    }
                }
                self.expect(")")?;
                Node::Block(body)
            }
            Tok::Op("{") => Node::Object(self.pairs()?),
            Tok::Op("%") => {
                self.parents += 1;
                Node::Parent(format!("!{}", self.parents - 1))
            }
            Tok::Op("**") => Node::Descendants,
            Tok::Op(o) => {
                return err(format!(
                    "S0211: The symbol \"{o}\" cannot be used as a unary operator"
                ));
            }
        })
    }
}

fn parse(src: &str) -> R<Node> {
    let mut p = Parser {
        toks: tokens(src)?,
        at: 0,
        parents: 0,
    };
    let n = p.expr(0)?;
    if p.at < p.toks.len() {
        return err(format!("S0201: Syntax error: {}", shown(p.peek())));
    }
    tuples::resolve_top(n)
}

fn num(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
        json!(n as i64)
    } else {
        Number::from_f64(n).map_or(Value::Null, Value::Number)
    }
}

/// A value during evaluation: JSON, a function, or undefined (`None`).
#[derive(Clone)]
enum V {
    J(Value),
    F(Func),
}

#[derive(Clone)]
enum Func {
    Lambda(Rc<(Vec<String>, Node)>, Env),
    Builtin(String),
    Regex(Rc<regex::Regex>),
    Transform(Rc<(Node, Node, Option<Node>)>, Env),
}

type Env = Rc<Scope>;

struct Scope {
    vars: std::cell::RefCell<HashMap<String, Option<V>>>,
    parent: Option<Env>,
}

impl Scope {
    fn child(parent: &Env) -> Env {
        Rc::new(Scope {
            vars: Default::default(),
            parent: Some(parent.clone()),
        })
    }
    fn get(&self, n: &str) -> Option<Option<V>> {
        if let Some(v) = self.vars.borrow().get(n) {
            return Some(v.clone());
        }
        self.parent.as_ref().and_then(|p| p.get(n))
    }
}

type O = Option<V>;

fn j(v: Value) -> O {
    Some(V::J(v))
}

/// A path result: several values are an array, one is itself, none is undefined.
fn seq(mut items: Vec<Value>) -> O {
    match items.len() {
        0 => None,
        1 => items.pop().map(V::J),
        _ => j(Value::Array(items)),
    }
}

struct Ctx<'a> {
    root: &'a Value,
    /// The evaluation's one "now": every `$now()`/`$millis()` in it answers the same.
    now: i64,
}

/// What an expression that parses reads from the context value at its top level (field
/// names, `$`, `$$`): Step Functions refuses each at definition time.
pub fn top_level_references(src: &str) -> Vec<String> {
    parse(src).map_or_else(|_| Vec::new(), |n| references::top_level(&n))
}

/// Whether `src` parses: the parser's message (without JSONata's code) when it does not.
/// Syntax cumulo does not evaluate (its messages carry no JSONata code) is not refused here:
/// AWS accepts it, and the execution fails naming it.
pub fn check(src: &str) -> Result<(), String> {
    match parse(src) {
        Ok(_) => Ok(()),
        Err(Error(m)) => match m.split_once(": ") {
            Some((code, rest)) if is_code(code) => Err(rest.to_string()),
            _ => Ok(()),
        },
    }
}

/// A JSONata error code (`S0201`, `T1006`, `D3132`).
fn is_code(s: &str) -> bool {
    s.len() == 5
        && s.starts_with(['S', 'T', 'D', 'U'])
        && s[1..].chars().all(|c| c.is_ascii_digit())
}

/// The error an expression whose value is a function ends with: JSON cannot hold it, and AWS
/// reports it as "an unsupported result type".
pub const FUNCTION_RESULT: &str = "The expression's value is a function";

/// Evaluates `src` against `input` with the given variable bindings (names without `$`).
pub fn evaluate(src: &str, input: &Value, vars: &Map<String, Value>) -> Result<Value, Error> {
    Ok(evaluate_opt(src, input, vars)?.unwrap_or(Value::Null))
}

/// As [`evaluate`], but `None` when the expression's result is undefined.
pub fn evaluate_opt(
    src: &str,
    input: &Value,
    vars: &Map<String, Value>,
) -> Result<Option<Value>, Error> {
    let node = parse(src)?;
    let env: Env = Rc::new(Scope {
        vars: std::cell::RefCell::new(
            vars.iter()
                .map(|(k, v)| (k.clone(), Some(V::J(v.clone()))))
                .collect(),
        ),
        parent: None,
    });
    let cx = Ctx {
        root: input,
        now: chrono::Utc::now().timestamp_millis(),
    };
    match eval(&node, &Some(V::J(input.clone())), &env, &cx)? {
        None => Ok(None),
        Some(V::J(v)) => Ok(Some(v)),
        Some(V::F(_)) => Err(Error(FUNCTION_RESULT.into())),
    }
}

fn eval(n: &Node, input: &O, env: &Env, cx: &Ctx) -> R<O> {
    Ok(match n {
        Node::Lit(v) => j(v.clone()),
        Node::Context => input.clone(),
        Node::Var(v) if v == "$" => j(cx.root.clone()),
        Node::Var(v) => match env.get(v) {
            Some(x) => x,
            None if is_builtin(v) => Some(V::F(Func::Builtin(v.clone()))),
            None => None,
        },
        Node::Name(k) => match input {
            Some(V::J(v)) => field(v, k),
            _ => None,
        },
        Node::Wild => match input {
            Some(V::J(Value::Object(m))) => seq(flatten(m.values().cloned())),
            Some(V::J(Value::Array(a))) => seq(flatten(a.iter().flat_map(|v| match v {
                Value::Object(m) => m.values().cloned().collect::<Vec<_>>(),
                _ => vec![],
            }))),
            _ => None,
        },
        Node::Path(l, r) => {
            let left = eval(l, input, env, cx)?;
            match left {
                Some(V::J(Value::Array(items))) => {
                    let mut out = Vec::new();
                    for it in items {
                        match eval(r, &j(it), env, cx)? {
                            Some(V::J(Value::Array(a))) if !matches!(**r, Node::Array(_)) => {
                                out.extend(a)
                            }
                            Some(V::J(v)) => out.push(v),
                            _ => {}
                        }
                    }
                    seq(out)
                }
                None => None,
                other => eval(r, &other, env, cx)?,
            }
        }
        Node::Filter(l, f) => {
            let left = eval(l, input, env, cx)?;
            let items = match left {
                None => return Ok(None),
                Some(V::J(Value::Array(a))) => a,
                Some(V::J(v)) => vec![v],
                Some(V::F(_)) => return err("Cannot filter a function"),
            };
            if let Node::Lit(Value::Number(k)) = &**f {
                let k = k.as_f64().unwrap_or(0.0).floor() as i64;
                let i = if k < 0 { items.len() as i64 + k } else { k };
                return Ok(items.get(i as usize).filter(|_| i >= 0).cloned().map(V::J));
            }
            let mut out = Vec::new();
            let len = items.len() as i64;
            for (idx, it) in items.into_iter().enumerate() {
                let r = eval(f, &j(it.clone()), env, cx)?;
                let keep = match &r {
                    Some(V::J(Value::Number(k))) => {
                        let k = k.as_f64().unwrap_or(0.0).floor() as i64;
                        (if k < 0 { len + k } else { k }) == idx as i64
                    }
                    other => truthy(other),
                };
                if keep {
                    out.push(it);
                }
            }
            seq(out)
        }
        Node::Neg(x) => match eval(x, input, env, cx)? {
            None => None,
            Some(V::J(Value::Number(k))) => j(num(-k.as_f64().unwrap_or(0.0))),
            Some(V::J(v)) => return err(format!("D1002: Cannot negate a non-numeric value: {v}")),
            Some(V::F(_)) => return err("D1002: Cannot negate a non-numeric value"),
        },
        Node::Bin(op, l, r) => binary(op, l, r, input, env, cx)?,
        Node::Cond(c, t, e) => {
            if truthy(&eval(c, input, env, cx)?) {
                eval(t, input, env, cx)?
            } else if let Some(e) = e {
                eval(e, input, env, cx)?
            } else {
                None
            }
        }
        Node::Array(items) => {
            let mut out = Vec::new();
            for it in items {
                match it {
                    Node::Range(lo, hi) => {
                        let lo = eval(lo, input, env, cx)?;
                        let hi = eval(hi, input, env, cx)?;
                        let (Some(V::J(lo)), Some(V::J(hi))) = (lo, hi) else {
                            continue;
                        };
                        let (Some(lo), Some(hi)) = (lo.as_i64(), hi.as_i64()) else {
                            return err(if lo.as_i64().is_none() {
                                "T2003: The left side of the range operator (..) must evaluate to an integer"
                            } else {
                                "T2004: The right side of the range operator (..) must evaluate to an integer"
                            });
                        };
                        if hi - lo > 10_000_000 {
                            return err(format!(
                                "D2014: The size of the sequence allocated by the range operator (..) must not exceed 1e7.  Attempted to allocate {}.",
                                hi - lo + 1
                            ));
                        }
                        out.extend((lo..=hi).map(|i| json!(i)));
                    }
                    Node::Array(_) => {
                        if let Some(V::J(v)) = eval(it, input, env, cx)? {
                            out.push(v)
                        }
                    }
                    _ => match eval(it, input, env, cx)? {
                        Some(V::J(Value::Array(a))) => out.extend(a),
                        Some(V::J(v)) => out.push(v),
                        _ => {}
                    },
                }
            }
            j(Value::Array(out))
        }
        Node::Object(pairs) => {
            let mut m = Map::new();
            for (k, v) in pairs {
                let key = match eval(k, input, env, cx)? {
                    Some(V::J(Value::String(s))) => s,
                    Some(V::J(v)) => {
                        return err(format!(
                            "T1003: Key in object structure must evaluate to a string; got: {v}"
                        ));
                    }
                    _ => {
                        return err(
                            "T1003: Key in object structure must evaluate to a string; got: undefined",
                        );
                    }
                };
                if let Some(V::J(v)) = eval(v, input, env, cx)? {
                    m.insert(key, v);
                }
            }
            j(Value::Object(m))
        }
        Node::Block(body) => {
            let scope = Scope::child(env);
            let mut last = None;
            for b in body {
                last = eval(b, input, &scope, cx)?;
            }
            last
        }
        Node::Bind(name, x) => {
            let v = eval(x, input, env, cx)?;
            env.vars.borrow_mut().insert(name.clone(), v.clone());
            v
        }
        Node::Lambda(l) => Some(V::F(Func::Lambda(l.clone(), env.clone()))),
        Node::Call(f, args) => {
            let func = eval(f, input, env, cx)?;
            let mut vals = Vec::new();
            for a in args {
                vals.push(eval(a, input, env, cx)?);
            }
            let Some(V::F(func)) = func else {
                return err("T1006: Attempted to invoke a non-function");
            };
            apply(&func, vals, input, cx)?
        }
        Node::Chain(l, r) => {
            let v = eval(l, input, env, cx)?;
            match &**r {
                Node::Call(f, args) => {
                    let func = eval(f, input, env, cx)?;
                    let mut vals = vec![v];
                    for a in args {
                        vals.push(eval(a, input, env, cx)?);
                    }
                    let Some(V::F(func)) = func else {
                        return err(
                            "T2006: The right side of the function application operator ~> must be a function",
                        );
                    };
                    apply(&func, vals, input, cx)?
                }
                other => match eval(other, input, env, cx)? {
                    Some(V::F(func)) => apply(&func, vec![v], input, cx)?,
                    _ => {
                        return err(
                            "T2006: The right side of the function application operator ~> must be a function",
                        );
                    }
                },
            }
        }
        Node::Range(..) => return err("The range operator (..) is only allowed in arrays"),
        Node::Regex(r) => Some(V::F(Func::Regex(r.clone()))),
        Node::Descendants => {
            fn below(v: &Value, out: &mut Vec<Value>) {
                match v {
                    Value::Array(a) => a.iter().for_each(|x| below(x, out)),
                    Value::Object(m) => {
                        out.push(v.clone());
                        m.values().for_each(|x| below(x, out));
                    }
                    v => out.push(v.clone()),
                }
            }
            match input {
                Some(V::J(v)) => {
                    let mut out = Vec::new();
                    below(v, &mut out);
                    seq(out)
                }
                _ => None,
            }
        }
        Node::OrderBy(l, terms) => order_by(l, terms, input, env, cx)?,
        Node::Group(l, pairs) => group(l, pairs, input, env, cx)?,
        Node::Transform(t) => Some(V::F(Func::Transform(t.clone(), env.clone()))),
        Node::Parent(label) => env.get(label).flatten(),
        Node::Tuples(p) => seq(tuples::evaluate(p, input, env, cx)?
            .into_iter()
            .map(|t| t.at)
            .collect()),
        Node::Focus(..) | Node::Index(..) => {
            return err("A variable binding (@ or #) must be a step of a path");
        }
    })
}

/// `sequence^(terms)`: a stable sort; items without a key go last, as JSONata places them.
fn order_by(l: &Node, terms: &[(bool, Node)], input: &O, env: &Env, cx: &Ctx) -> R<O> {
    let Some(left) = eval(l, input, env, cx)? else {
        return Ok(None);
    };
    let sorted = sort_by_terms(items(&Some(left)), terms, cx, |v| {
        (j(v.clone()), env.clone())
    })?;
    Ok(seq(sorted))
}

/// Sorts `items` stably by `terms`, each evaluated over an item's context in its scope.
fn sort_by_terms<T>(
    items: Vec<T>,
    terms: &[(bool, Node)],
    cx: &Ctx,
    context: impl Fn(&T) -> (O, Env),
) -> R<Vec<T>> {
    let mut keyed = Vec::new();
    for it in items {
        let (input, scope) = context(&it);
        let mut keys = Vec::new();
        for (_, t) in terms {
            keys.push(match eval(t, &input, &scope, cx)? {
                None => None,
                Some(V::J(k @ (Value::Number(_) | Value::String(_)))) => Some(k),
                _ => {
                    return err(
                        "T2008: The expressions within an order-by clause must evaluate to numeric or string values",
                    );
                }
            });
        }
        keyed.push((keys, it));
    }
    let mut mismatch = None;
    keyed.sort_by(|(a, _), (b, _)| {
        for (k, (desc, _)) in terms.iter().enumerate() {
            let ord = match (&a[k], &b[k]) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, _) => std::cmp::Ordering::Greater,
                (_, None) => std::cmp::Ordering::Less,
                (Some(Value::Number(x)), Some(Value::Number(y))) => x
                    .as_f64()
                    .partial_cmp(&y.as_f64())
                    .unwrap_or(std::cmp::Ordering::Equal),
                (Some(Value::String(x)), Some(Value::String(y))) => x.cmp(y),
                (Some(x), Some(y)) => {
                    mismatch.get_or_insert((x.clone(), y.clone()));
                    std::cmp::Ordering::Equal
                }
            };
            let ord = if *desc && a[k].is_some() && b[k].is_some() {
                ord.reverse()
            } else {
                ord
            };
            if ord.is_ne() {
                return ord;
            }
        }
        std::cmp::Ordering::Equal
    });
    if let Some((x, y)) = mismatch {
        return err(format!(
            "T2007: Type mismatch when comparing values {x} and {y} in order-by clause"
        ));
    }
    Ok(keyed.into_iter().map(|(_, v)| v).collect())
}

/// `sequence{key: value}`: items grouped by their key (first-seen order), each pair's value
/// evaluated over its group (one item, or the array of them). Over a tuple path the keys see
/// each tuple's bindings, and the values the group's bindings appended.
fn group(l: &Node, pairs: &[(Node, Node)], input: &O, env: &Env, cx: &Ctx) -> R<O> {
    let members: Vec<tuples::Tuple> = match l {
        Node::Tuples(p) => tuples::evaluate(p, input, env, cx)?,
        l => match eval(l, input, env, cx)? {
            None => return Ok(None),
            left => items(&left).into_iter().map(tuples::Tuple::new).collect(),
        },
    };
    let mut groups: Vec<(String, usize, Vec<tuples::Tuple>)> = Vec::new();
    for it in members {
        let scope = it.frame(env);
        for (p, (k, _)) in pairs.iter().enumerate() {
            let key = match eval(k, &j(it.at.clone()), &scope, cx)? {
                None => continue,
                Some(V::J(Value::String(s))) => s,
                Some(V::J(v)) => {
                    return err(format!(
                        "T1003: Key in object structure must evaluate to a string; got: {v}"
                    ));
                }
                Some(V::F(_)) => {
                    return err("T1003: Key in object structure must evaluate to a string");
                }
            };
            match groups.iter_mut().find(|(g, _, _)| *g == key) {
                Some((_, q, _)) if *q != p => {
                    return err(format!(
                        "D1009: Multiple key definitions evaluate to same key: {}",
                        Value::String(key)
                    ));
                }
                Some((_, _, members)) => members.push(it.clone()),
                None => groups.push((key, p, vec![it.clone()])),
            }
        }
    }
    let mut m = Map::new();
    for (key, p, members) in groups {
        let (context, scope) = tuples::reduce(&members, env);
        if let Some(V::J(v)) = eval(&pairs[p].1, &context, &scope, cx)? {
            m.insert(key, v);
        }
    }
    Ok(j(Value::Object(m)))
}

fn flatten(items: impl Iterator<Item = Value>) -> Vec<Value> {
    let mut out = Vec::new();
    for v in items {
        match v {
            Value::Array(a) => out.extend(a),
            v => out.push(v),
        }
    }
    out
}

fn field(v: &Value, k: &str) -> O {
    match v {
        Value::Object(m) => m.get(k).cloned().map(V::J),
        Value::Array(a) => seq(flatten(
            a.iter().filter_map(|x| x.as_object()?.get(k).cloned()),
        )),
        _ => None,
    }
}

fn truthy(v: &O) -> bool {
    match v {
        None => false,
        Some(V::F(_)) => false,
        Some(V::J(v)) => truthy_json(v),
    }
}

fn truthy_json(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => a.iter().any(truthy_json),
        Value::Object(m) => !m.is_empty(),
    }
}

fn number(v: &O, op: &str, left: bool) -> R<Option<f64>> {
    match v {
        None => Ok(None),
        Some(V::J(Value::Number(n))) => Ok(n.as_f64()),
        _ if left => err(format!(
            "T2001: The left side of the \"{op}\" operator must evaluate to a number"
        )),
        _ => err(format!(
            "T2002: The right side of the \"{op}\" operator must evaluate to a number"
        )),
    }
}

fn binary(op: &str, l: &Node, r: &Node, input: &O, env: &Env, cx: &Ctx) -> R<O> {
    if op == "and" {
        return Ok(j(Value::Bool(
            truthy(&eval(l, input, env, cx)?) && truthy(&eval(r, input, env, cx)?),
        )));
    }
    if op == "or" {
        return Ok(j(Value::Bool(
            truthy(&eval(l, input, env, cx)?) || truthy(&eval(r, input, env, cx)?),
        )));
    }
    let a = eval(l, input, env, cx)?;
    let b = eval(r, input, env, cx)?;
    Ok(match op {
        "+" | "-" | "*" | "/" | "%" => {
            let (Some(x), Some(y)) = (number(&a, op, true)?, number(&b, op, false)?) else {
                return Ok(None);
            };
            let v = match op {
                "+" => x + y,
                "-" => x - y,
                "*" => x * y,
                "/" => x / y,
                _ => x % y,
            };
            if !v.is_finite() {
                return err(format!("D1001: Number out of range: {v}"));
            }
            j(num(v))
        }
        "&" => j(Value::String(format!(
            "{}{}",
            a.map(|v| stringify(&v)).unwrap_or_default(),
            b.map(|v| stringify(&v)).unwrap_or_default()
        ))),
        "=" | "!=" => {
            let (Some(V::J(x)), Some(V::J(y))) = (&a, &b) else {
                return Ok(j(Value::Bool(false)));
            };
            let eq = json_eq(x, y);
            j(Value::Bool(if op == "=" { eq } else { !eq }))
        }
        "<" | "<=" | ">" | ">=" => {
            let (Some(V::J(x)), Some(V::J(y))) = (&a, &b) else {
                return Ok(None);
            };
            let ord = match (x, y) {
                (Value::Number(p), Value::Number(q)) => p.as_f64().partial_cmp(&q.as_f64()),
                (Value::String(p), Value::String(q)) => Some(p.cmp(q)),
                (Value::Number(_) | Value::String(_), Value::Number(_) | Value::String(_)) => {
                    return err(format!(
                        "T2009: The values {x} and {y} either side of operator \"{op}\" must be of the same data type"
                    ));
                }
                _ => {
                    return err(format!(
                        "T2010: The expressions either side of operator \"{op}\" must evaluate to numeric or string values"
                    ));
                }
            };
            let Some(o) = ord else { return Ok(None) };
            j(Value::Bool(match op {
                "<" => o.is_lt(),
                "<=" => o.is_le(),
                ">" => o.is_gt(),
                _ => o.is_ge(),
            }))
        }
        "in" => {
            let Some(V::J(x)) = &a else {
                return Ok(j(Value::Bool(false)));
            };
            j(Value::Bool(match &b {
                Some(V::J(Value::Array(items))) => items.iter().any(|i| json_eq(i, x)),
                Some(V::J(y)) => json_eq(x, y),
                _ => false,
            }))
        }
        _ => return err(format!("Unknown operator {op}")),
    })
}

fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// `$string`'s text of a value: strings as they are, everything else as JSON.
fn stringify(v: &V) -> String {
    match v {
        V::J(Value::String(s)) => s.clone(),
        V::J(v) => v.to_string(),
        V::F(_) => String::new(),
    }
}

const BUILTINS: [&str; 68] = [
    "string",
    "number",
    "boolean",
    "not",
    "exists",
    "type",
    "count",
    "sum",
    "max",
    "min",
    "average",
    "length",
    "substring",
    "substringBefore",
    "substringAfter",
    "uppercase",
    "lowercase",
    "trim",
    "contains",
    "split",
    "join",
    "replace",
    "abs",
    "floor",
    "ceil",
    "round",
    "power",
    "sqrt",
    "append",
    "reverse",
    "sort",
    "distinct",
    "keys",
    "lookup",
    "merge",
    "spread",
    "map",
    "filter",
    "reduce",
    "each",
    "single",
    "zip",
    "now",
    "millis",
    "pad",
    "base64encode",
    "base64decode",
    "partition",
    "range",
    "hash",
    "random",
    "uuid",
    "parse",
    "toMillis",
    "fromMillis",
    "match",
    "error",
    "assert",
    "sift",
    "shuffle",
    "formatBase",
    "encodeUrlComponent",
    "encodeUrl",
    "decodeUrlComponent",
    "decodeUrl",
    "formatNumber",
    "formatInteger",
    "parseInteger",
];

fn is_builtin(n: &str) -> bool {
    BUILTINS.contains(&n)
}

fn apply(f: &Func, args: Vec<O>, input: &O, cx: &Ctx) -> R<O> {
    match f {
        Func::Lambda(l, env) => {
            let scope = Scope::child(env);
            for (i, p) in l.0.iter().enumerate() {
                scope
                    .vars
                    .borrow_mut()
                    .insert(p.clone(), args.get(i).cloned().flatten());
            }
            eval(&l.1, input, &scope, cx)
        }
        Func::Builtin(name) => builtin(name, args, input, cx),
        Func::Regex(re) => {
            let s = text_arg("regex", &args.first().cloned().flatten(), 1)?;
            Ok(match s {
                Some(s) => regex_matches(re, &s, Some(1))?
                    .first()
                    .map(|m| V::J(m.object(&s))),
                None => None,
            })
        }
        Func::Transform(t, env) => transform(t, env, args.first().cloned().flatten(), cx),
    }
}

/// One match of a regular expression (byte offsets into the text) and its groups.
struct Found {
    whole: String,
    start: usize,
    end: usize,
    groups: Vec<Option<String>>,
}

impl Found {
    /// The object `$match` answers: the match, its index (in characters; JavaScript counts
    /// UTF-16 units, the same outside the BMP's surrogates) and its groups.
    fn object(&self, s: &str) -> Value {
        json!({
            "match": self.whole,
            "index": s[..self.start].chars().count(),
            "groups": self.groups.iter().map(|g| g.clone().map_or(Value::Null, Value::String)).collect::<Vec<_>>(),
        })
    }
}

/// The matches of `re` in `s`, at most `limit`. As JSONata does, a pattern that matches an
/// empty string where it would be asked for a following match is an error (it never advances).
fn regex_matches(re: &regex::Regex, s: &str, limit: Option<usize>) -> R<Vec<Found>> {
    let mut out = Vec::new();
    for c in re.captures_iter(s) {
        if limit.is_some_and(|l| out.len() >= l) {
            break;
        }
        let Some(m) = c.get(0) else { continue };
        if m.as_str().is_empty() && !(out.is_empty() && (limit == Some(1) || s.is_empty())) {
            return err("D1004: Regular expression matches zero length string");
        }
        out.push(Found {
            whole: m.as_str().to_string(),
            start: m.start(),
            end: m.end(),
            groups: c
                .iter()
                .skip(1)
                .map(|g| g.map(|g| g.as_str().to_string()))
                .collect(),
        });
    }
    Ok(out)
}

/// `$replace`'s replacement text for one match: `$0` is the match, `$1`... its groups (the
/// longest number naming a group), `$$` a dollar; any other `$` is itself.
fn substitute(replacement: &str, m: &Found) -> String {
    let groups = m.groups.len();
    let cs: Vec<char> = replacement.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < cs.len() {
        if cs[i] != '$' {
            out.push(cs[i]);
            i += 1;
            continue;
        }
        let digits: String = cs[i + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .collect();
        match cs.get(i + 1) {
            Some('$') => {
                out.push('$');
                i += 2;
            }
            Some('0') => {
                out.push_str(&m.whole);
                i += 2;
            }
            _ if !digits.is_empty() => {
                let max = groups.max(1).to_string().len();
                let mut take = digits.len().min(max);
                let mut n: usize = digits[..take].parse().unwrap_or(0);
                if take > 1 && n > groups {
                    take -= 1;
                    n = digits[..take].parse().unwrap_or(0);
                }
                if let Some(Some(g)) = n.checked_sub(1).and_then(|k| m.groups.get(k)) {
                    out.push_str(g);
                }
                i += 1 + take;
            }
            _ => {
                out.push('$');
                i += 1;
            }
        }
    }
    out
}

/// A hidden key tagging each object of a transform's copy, so the objects its location
/// selects (evaluated as copies) are found again in the copy.
const TAG: &str = "\u{0}cumulo:transform";

fn tag(v: &mut Value, next: &mut u64) {
    match v {
        Value::Object(m) => {
            for x in m.values_mut() {
                tag(x, next);
            }
            m.insert(TAG.into(), json!(*next));
            *next += 1;
        }
        Value::Array(a) => a.iter_mut().for_each(|x| tag(x, next)),
        _ => {}
    }
}

fn untag(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove(TAG);
            m.values_mut().for_each(untag);
        }
        Value::Array(a) => a.iter_mut().for_each(untag),
        _ => {}
    }
}

/// Applies `update` (merged in) and `delete` (keys removed) to each object tagged in `ids`.
fn apply_updates(v: &mut Value, changes: &HashMap<u64, (Map<String, Value>, Vec<String>)>) {
    match v {
        Value::Object(m) => {
            for x in m.values_mut() {
                apply_updates(x, changes);
            }
            if let Some((update, delete)) = m
                .get(TAG)
                .and_then(Value::as_u64)
                .and_then(|id| changes.get(&id))
            {
                for (k, x) in update {
                    m.insert(k.clone(), x.clone());
                }
                for k in delete {
                    m.remove(k);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|x| apply_updates(x, changes)),
        _ => {}
    }
}

/// `| location | update [, delete] |` applied to `arg`: a copy whose selected objects are
/// updated.
fn transform(t: &(Node, Node, Option<Node>), env: &Env, arg: O, cx: &Ctx) -> R<O> {
    let mut copy = match arg {
        None => return Ok(None),
        Some(V::J(v)) => v,
        Some(V::F(_)) => {
            return err(
                "T0410: Argument 1 of function \"transform\" does not match function signature",
            );
        }
    };
    let mut next = 0;
    tag(&mut copy, &mut next);
    let (location, update, delete) = t;
    let selected = items(&eval(location, &j(copy.clone()), env, cx)?);
    let mut changes = HashMap::new();
    for mut obj in selected {
        let Some(id) = obj.get(TAG).and_then(Value::as_u64) else {
            continue;
        };
        untag(&mut obj);
        let here = j(obj);
        let up = match eval(update, &here, env, cx)? {
            None => Map::new(),
            Some(V::J(Value::Object(m))) => m,
            Some(V::J(v)) => {
                return err(format!(
                    "T2011: The insert/update clause of the transform expression must evaluate to an object: {v}"
                ));
            }
            Some(V::F(_)) => {
                return err(
                    "T2011: The insert/update clause of the transform expression must evaluate to an object",
                );
            }
        };
        let mut del = Vec::new();
        if let Some(d) = delete {
            match eval(d, &here, env, cx)? {
                None => {}
                Some(V::J(Value::String(k))) => del.push(k),
                Some(V::J(Value::Array(ks))) if ks.iter().all(Value::is_string) => {
                    del.extend(
                        ks.into_iter()
                            .filter_map(|k| k.as_str().map(str::to_string)),
                    );
                }
                Some(V::J(v)) => {
                    return err(format!(
                        "T2012: The delete clause of the transform expression must evaluate to a string or array of strings: {v}"
                    ));
                }
                Some(V::F(_)) => {
                    return err(
                        "T2012: The delete clause of the transform expression must evaluate to a string or array of strings",
                    );
                }
            }
        }
        changes.insert(id, (up, del));
    }
    apply_updates(&mut copy, &changes);
    untag(&mut copy);
    Ok(j(copy))
}

fn arity(f: &Func) -> usize {
    match f {
        Func::Lambda(l, _) => l.0.len(),
        _ => 1,
    }
}

fn items(v: &O) -> Vec<Value> {
    match v {
        None => vec![],
        Some(V::J(Value::Array(a))) => a.clone(),
        Some(V::J(v)) => vec![v.clone()],
        Some(V::F(_)) => vec![],
    }
}

fn nums(name: &str, v: &O) -> R<Vec<f64>> {
    items(v)
        .iter()
        .map(|x| {
            x.as_f64().ok_or_else(|| {
                Error(format!(
                    "T0412: Argument 1 of function \"{name}\" must be an array of numbers"
                ))
            })
        })
        .collect()
}

fn text_arg(name: &str, v: &O, i: usize) -> R<Option<String>> {
    match v {
        None => Ok(None),
        Some(V::J(Value::String(s))) => Ok(Some(s.clone())),
        _ => err(format!(
            "T0410: Argument {i} of function \"{name}\" does not match function signature"
        )),
    }
}

fn num_arg(name: &str, v: &O, i: usize) -> R<Option<f64>> {
    match v {
        None => Ok(None),
        Some(V::J(Value::Number(n))) => Ok(n.as_f64()),
        _ => err(format!(
            "T0410: Argument {i} of function \"{name}\" does not match function signature"
        )),
    }
}

fn func_arg(name: &str, v: &O, i: usize) -> R<Func> {
    match v {
        Some(V::F(f)) => Ok(f.clone()),
        _ => err(format!(
            "T0410: Argument {i} of function \"{name}\" does not match function signature"
        )),
    }
}

fn builtin(name: &str, mut args: Vec<O>, input: &O, cx: &Ctx) -> R<O> {
    // As JSONata does, a unary function called without arguments takes the context.
    let context_default = [
        "string",
        "number",
        "boolean",
        "length",
        "uppercase",
        "lowercase",
        "trim",
        "keys",
        "exists",
        "type",
    ];
    if args.is_empty() && context_default.contains(&name) {
        args.push(input.clone());
    }
    let a = |i: usize| args.get(i).cloned().flatten();
    let a0 = a(0);
    Ok(match name {
        "string" => match (a0, a(1)) {
            (Some(V::J(v)), Some(V::J(Value::Bool(true)))) if !v.is_string() => {
                serde_json::to_string_pretty(&v)
                    .ok()
                    .map(|s| V::J(json!(s)))
            }
            (v, _) => v.map(|v| V::J(Value::String(stringify(&v)))),
        },
        "number" => match &a0 {
            None => None,
            Some(V::J(Value::Number(n))) => j(Value::Number(n.clone())),
            Some(V::J(Value::Bool(b))) => j(json!(if *b { 1 } else { 0 })),
            Some(V::J(Value::String(s))) => match s.trim().parse::<f64>() {
                Ok(n) if n.is_finite() => j(num(n)),
                _ => {
                    return err(format!("D3030: Unable to cast value to a number: \"{s}\""));
                }
            },
            Some(V::J(v)) => return err(format!("D3030: Unable to cast value to a number: {v}")),
            _ => return err("D3030: Unable to cast value to a number"),
        },
        "boolean" => a0.as_ref().map(|_| V::J(Value::Bool(truthy(&a0)))),
        "not" => a0.as_ref().map(|_| V::J(Value::Bool(!truthy(&a0)))),
        "exists" => j(Value::Bool(a0.is_some())),
        "type" => a0.map(|v| {
            V::J(json!(match v {
                V::F(_) => "function",
                V::J(Value::Null) => "null",
                V::J(Value::Bool(_)) => "boolean",
                V::J(Value::Number(_)) => "number",
                V::J(Value::String(_)) => "string",
                V::J(Value::Array(_)) => "array",
                V::J(Value::Object(_)) => "object",
            }))
        }),
        "count" => j(json!(items(&a0).len())),
        "sum" => j(num(nums(name, &a0)?.iter().sum())),
        "max" | "min" | "average" => {
            let ns = nums(name, &a0)?;
            if ns.is_empty() {
                return Ok(None);
            }
            let v = match name {
                "max" => ns.iter().cloned().fold(f64::MIN, f64::max),
                "min" => ns.iter().cloned().fold(f64::MAX, f64::min),
                _ => ns.iter().sum::<f64>() / ns.len() as f64,
            };
            j(num(v))
        }
        "length" => text_arg(name, &a0, 1)?.map(|s| V::J(json!(s.chars().count()))),
        "uppercase" => text_arg(name, &a0, 1)?.map(|s| V::J(json!(s.to_uppercase()))),
        "lowercase" => text_arg(name, &a0, 1)?.map(|s| V::J(json!(s.to_lowercase()))),
        "trim" => text_arg(name, &a0, 1)?
            .map(|s| V::J(json!(s.split_whitespace().collect::<Vec<_>>().join(" ")))),
        "substring" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let cs: Vec<char> = s.chars().collect();
            let start = num_arg(name, &a(1), 2)?.unwrap_or(0.0) as i64;
            let start = if start < 0 {
                (cs.len() as i64 + start).max(0)
            } else {
                start.min(cs.len() as i64)
            } as usize;
            let len = num_arg(name, &a(2), 3)?.map_or(cs.len(), |l| l.max(0.0) as usize);
            j(json!(cs[start..].iter().take(len).collect::<String>()))
        }
        "substringBefore" | "substringAfter" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let sep = text_arg(name, &a(1), 2)?.unwrap_or_default();
            j(json!(match s.find(&sep) {
                None => s.clone(),
                Some(i) if name == "substringBefore" => s[..i].to_string(),
                Some(i) => s[i + sep.len()..].to_string(),
            }))
        }
        "contains" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            j(Value::Bool(match a(1) {
                Some(V::F(Func::Regex(re))) => re.is_match(&s),
                p => s.contains(&text_arg(name, &p, 2)?.unwrap_or_default()),
            }))
        }
        "split" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let limit = match num_arg(name, &a(2), 3)? {
                Some(l) if l < 0.0 => {
                    return err(
                        "D3020: Third argument of split function must evaluate to a positive number",
                    );
                }
                l => l.map(|l| l.floor() as usize),
            };
            let parts: Vec<Value> = match a(1) {
                Some(V::F(Func::Regex(re))) => {
                    let found = regex_matches(&re, &s, None)?;
                    let mut parts = Vec::new();
                    let mut start = 0;
                    for m in &found {
                        parts.push(json!(s[start..m.start]));
                        start = m.end;
                    }
                    parts.push(json!(s[start..]));
                    parts
                }
                p => {
                    let sep = text_arg(name, &p, 2)?.unwrap_or_default();
                    if sep.is_empty() {
                        s.chars().map(|c| json!(c.to_string())).collect()
                    } else {
                        s.split(sep.as_str()).map(|p| json!(p)).collect()
                    }
                }
            };
            let limit = limit.unwrap_or(parts.len());
            j(Value::Array(parts.into_iter().take(limit).collect()))
        }
        "match" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let Some(V::F(Func::Regex(re))) = a(1) else {
                return err(
                    "T0410: Argument 2 of function \"match\" does not match function signature",
                );
            };
            let limit = match num_arg(name, &a(2), 3)? {
                Some(l) if l < 0.0 => {
                    return err(
                        "D3040: Third argument of match function must evaluate to a positive number",
                    );
                }
                l => l.map(|l| l.floor() as usize),
            };
            seq(regex_matches(&re, &s, limit)?
                .iter()
                .map(|m| m.object(&s))
                .collect())
        }
        "join" => {
            let sep = text_arg(name, &a(1), 2)?.unwrap_or_default();
            let mut parts = Vec::new();
            for v in items(&a0) {
                match v {
                    Value::String(s) => parts.push(s),
                    _ => {
                        return err(
                            "T0412: Argument 1 of function \"join\" must be an array of strings",
                        );
                    }
                }
            }
            j(json!(parts.join(&sep)))
        }
        "replace" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let limit = match num_arg(name, &a(3), 4)? {
                Some(l) if l < 0.0 => {
                    return err(
                        "D3011: Fourth argument of replace function must evaluate to a positive number",
                    );
                }
                l => l.map(|l| l.floor() as usize),
            };
            let re = match a(1) {
                Some(V::F(Func::Regex(re))) => re,
                p => {
                    let p = text_arg(name, &p, 2)?.unwrap_or_default();
                    if p.is_empty() {
                        return err(
                            "D3010: Second argument of replace function cannot be an empty string",
                        );
                    }
                    let r = text_arg(name, &a(2), 3)?.unwrap_or_default();
                    return Ok(match limit {
                        Some(n) => j(json!(s.replacen(&p, &r, n))),
                        None => j(json!(s.replace(&p, &r))),
                    });
                }
            };
            let mut out = String::new();
            let mut at = 0;
            for m in regex_matches(&re, &s, limit)? {
                out.push_str(&s[at..m.start]);
                match a(2) {
                    Some(V::F(f)) => match apply(&f, vec![j(m.object(&s))], input, cx)? {
                        Some(V::J(Value::String(r))) => out.push_str(&r),
                        _ => {
                            return err(
                                "D3012: Attempted to replace a matched string with a non-string value",
                            );
                        }
                    },
                    r => out.push_str(&substitute(&text_arg(name, &r, 3)?.unwrap_or_default(), &m)),
                }
                at = m.end;
            }
            out.push_str(&s[at..]);
            j(json!(out))
        }
        "pad" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let w = num_arg(name, &a(1), 2)?.unwrap_or(0.0) as i64;
            let ch = text_arg(name, &a(2), 3)?.unwrap_or(" ".into());
            let len = s.chars().count() as i64;
            let fill: String = ch
                .chars()
                .cycle()
                .take((w.abs() - len).max(0) as usize)
                .collect();
            j(json!(if w < 0 {
                format!("{fill}{s}")
            } else {
                format!("{s}{fill}")
            }))
        }
        "abs" | "floor" | "ceil" | "round" | "sqrt" => {
            let Some(x) = num_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            j(num(match name {
                "abs" => x.abs(),
                "floor" => x.floor(),
                "ceil" => x.ceil(),
                "sqrt" => x.sqrt(),
                _ => {
                    let p = 10f64.powi(num_arg(name, &a(1), 2)?.unwrap_or(0.0) as i32);
                    let v = x * p;
                    // Round half to even, as JSONata does.
                    let r = v.round();
                    let r = if (v - v.trunc()).abs() == 0.5 && r % 2.0 != 0.0 {
                        r - v.signum()
                    } else {
                        r
                    };
                    r / p
                }
            }))
        }
        "power" => {
            let (Some(x), Some(y)) = (num_arg(name, &a0, 1)?, num_arg(name, &a(1), 2)?) else {
                return Ok(None);
            };
            j(num(x.powf(y)))
        }
        "append" => match (&a0, &a(1)) {
            (None, b) => b.clone(),
            (a, None) => a.clone(),
            (a, b) => {
                let mut v = items(a);
                v.extend(items(b));
                j(Value::Array(v))
            }
        },
        "reverse" => a0
            .as_ref()
            .map(|_| V::J(Value::Array(items(&a0).into_iter().rev().collect()))),
        "distinct" => {
            let mut out: Vec<Value> = Vec::new();
            for v in items(&a0) {
                if !out.iter().any(|o| json_eq(o, &v)) {
                    out.push(v);
                }
            }
            j(Value::Array(out))
        }
        "sort" => {
            if a0.is_none() {
                return Ok(None);
            }
            let mut v = items(&a0);
            match a(1) {
                Some(V::F(f)) => {
                    // An insertion sort: the comparator answers whether a goes after b.
                    let mut out: Vec<Value> = Vec::new();
                    for x in v {
                        let mut at = out.len();
                        while at > 0 {
                            let after =
                                apply(&f, vec![j(out[at - 1].clone()), j(x.clone())], input, cx)?;
                            if truthy(&after) {
                                at -= 1;
                            } else {
                                break;
                            }
                        }
                        out.insert(at, x);
                    }
                    v = out;
                }
                _ => {
                    if v.iter().all(Value::is_number) {
                        v.sort_by(|x, y| {
                            x.as_f64()
                                .partial_cmp(&y.as_f64())
                                .unwrap_or(std::cmp::Ordering::Equal)
                        });
                    } else if v.iter().all(Value::is_string) {
                        v.sort_by(|x, y| x.as_str().cmp(&y.as_str()));
                    } else {
                        return err(
                            "D3070: The single argument form of the sort function can only be applied to an array of strings or an array of numbers.  Use the second argument to specify a comparison function",
                        );
                    }
                }
            }
            j(Value::Array(v))
        }
        "keys" => {
            let mut ks: Vec<Value> = Vec::new();
            for v in items(&a0) {
                if let Value::Object(m) = v {
                    for k in m.keys() {
                        if !ks.iter().any(|x| x == k) {
                            ks.push(json!(k));
                        }
                    }
                }
            }
            seq(ks)
        }
        "lookup" => {
            let k = text_arg(name, &a(1), 2)?.unwrap_or_default();
            match a0 {
                Some(V::J(v)) => field(&v, &k),
                _ => None,
            }
        }
        "merge" => {
            let mut m = Map::new();
            for v in items(&a0) {
                if let Value::Object(o) = v {
                    m.extend(o);
                }
            }
            j(Value::Object(m))
        }
        "spread" => {
            let mut out = Vec::new();
            for v in items(&a0) {
                if let Value::Object(o) = v {
                    for (k, v) in o {
                        out.push(json!({ k: v }));
                    }
                }
            }
            seq(out)
        }
        "map" | "filter" | "each" => {
            let f = func_arg(name, &a(1), 2)?;
            let n = arity(&f);
            let mut out = Vec::new();
            if name == "each" {
                if let Some(V::J(Value::Object(m))) = &a0 {
                    for (k, v) in m {
                        let mut call = vec![j(v.clone()), j(json!(k))];
                        call.truncate(n.max(1));
                        if let Some(V::J(r)) = apply(&f, call, input, cx)? {
                            out.push(r);
                        }
                    }
                }
                return Ok(seq(out));
            }
            let all = items(&a0);
            for (i, v) in all.iter().enumerate() {
                let mut call = vec![j(v.clone()), j(json!(i)), j(Value::Array(all.clone()))];
                call.truncate(n.max(1));
                let r = apply(&f, call, input, cx)?;
                if name == "map" {
                    if let Some(V::J(r)) = r {
                        out.push(r);
                    }
                } else if truthy(&r) {
                    out.push(v.clone());
                }
            }
            if name == "map" && matches!(a0, Some(V::J(Value::Array(_)))) && out.len() == 1 {
                return Ok(j(Value::Array(out)));
            }
            seq(out)
        }
        "single" => {
            let all = items(&a0);
            let mut found = Vec::new();
            for v in all {
                let keep = match a(1) {
                    Some(V::F(f)) => truthy(&apply(&f, vec![j(v.clone())], input, cx)?),
                    _ => true,
                };
                if keep {
                    found.push(v);
                }
            }
            if found.len() > 1 {
                return err(
                    "D3138: The $single() function expected exactly 1 matching result.  Instead it matched more.",
                );
            }
            if found.is_empty() {
                return err(
                    "D3139: The $single() function expected exactly 1 matching result.  Instead it matched 0.",
                );
            }
            found.pop().map(V::J)
        }
        "reduce" => {
            let f = func_arg(name, &a(1), 2)?;
            let mut all = items(&a0).into_iter();
            let mut acc = match a(2) {
                Some(v) => Some(v),
                None => all.next().map(V::J),
            };
            for v in all {
                acc = apply(&f, vec![acc, j(v)], input, cx)?;
            }
            acc
        }
        "zip" => {
            let lists: Vec<Vec<Value>> = args.iter().map(items).collect();
            let n = lists.iter().map(Vec::len).min().unwrap_or(0);
            j(Value::Array(
                (0..n)
                    .map(|i| Value::Array(lists.iter().map(|l| l[i].clone()).collect()))
                    .collect(),
            ))
        }
        "now" | "fromMillis" => {
            let (ms, at) = if name == "now" {
                (cx.now, 0)
            } else {
                match num_arg(name, &a0, 1)? {
                    Some(ms) => (ms.floor() as i64, 1),
                    None => return Ok(None),
                }
            };
            let picture = text_arg(name, &a(at), at + 1)?;
            let tz = text_arg(name, &a(at + 1), at + 2)?;
            j(json!(
                super::jsonata_time::format(ms, picture.as_deref(), tz.as_deref())
                    .map_err(Error)?
            ))
        }
        "millis" => j(json!(cx.now)),
        "error" => {
            let m = text_arg(name, &a0, 1)?;
            return err(format!(
                "D3137: {}",
                m.unwrap_or_else(|| "$error() function evaluated".into())
            ));
        }
        "assert" => match a0 {
            Some(V::J(Value::Bool(true))) => None,
            Some(V::J(Value::Bool(false))) => {
                let m = text_arg(name, &a(1), 2)?;
                return err(format!(
                    "D3141: {}",
                    m.unwrap_or_else(|| "$assert() statement failed".into())
                ));
            }
            _ => {
                return err(
                    "T0410: Argument 1 of function \"assert\" does not match function signature",
                );
            }
        },
        "sift" => {
            let Some(V::J(Value::Object(m))) = &a0 else {
                return Ok(None);
            };
            let f = func_arg(name, &a(1), 2)?;
            let n = arity(&f);
            let mut out = Map::new();
            for (k, v) in m {
                let mut call = vec![j(v.clone()), j(json!(k)), a0.clone()];
                call.truncate(n.max(1));
                if truthy(&apply(&f, call, input, cx)?) {
                    out.insert(k.clone(), v.clone());
                }
            }
            if out.is_empty() {
                None
            } else {
                j(Value::Object(out))
            }
        }
        "shuffle" => {
            use rand::seq::SliceRandom;
            let mut v = items(&a0);
            if a0.is_none() {
                return Ok(None);
            }
            v.shuffle(&mut rand::rng());
            j(Value::Array(v))
        }
        "formatNumber" => {
            let Some(x) = num_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let picture = text_arg(name, &a(1), 2)?.unwrap_or_default();
            let options = match a(2) {
                Some(V::J(Value::Object(o))) => Some(o),
                None => None,
                _ => {
                    return err(
                        "T0410: Argument 3 of function \"formatNumber\" does not match function signature",
                    );
                }
            };
            j(json!(
                super::jsonata_number::format_number(x, &picture, options.as_ref())
                    .map_err(Error)?
            ))
        }
        "formatInteger" => {
            let Some(x) = num_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let picture = text_arg(name, &a(1), 2)?.unwrap_or_default();
            j(json!(
                super::jsonata_number::format_integer(x.trunc() as i64, &picture).map_err(Error)?
            ))
        }
        "parseInteger" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let picture = text_arg(name, &a(1), 2)?.unwrap_or_default();
            super::jsonata_number::parse_integer(&s, &picture)
                .map_err(Error)?
                .map(|n| V::J(json!(n)))
        }
        "formatBase" => {
            let Some(x) = num_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let radix = num_arg(name, &a(1), 2)?.unwrap_or(10.0);
            if !(2.0..=36.0).contains(&radix) {
                return err(format!(
                    "D3100: The radix of the formatBase function must be between 2 and 36.  It was given {}",
                    num(radix)
                ));
            }
            let mut n = x.round().abs() as u64;
            let radix = radix as u64;
            let mut digits = Vec::new();
            loop {
                digits.push(std::char::from_digit((n % radix) as u32, radix as u32).unwrap_or('0'));
                n /= radix;
                if n == 0 {
                    break;
                }
            }
            if x.round() < 0.0 {
                digits.push('-');
            }
            j(json!(digits.iter().rev().collect::<String>()))
        }
        "encodeUrlComponent" | "encodeUrl" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let keep = if name == "encodeUrl" {
                "-_.!~*'();,/?:@&=+$#"
            } else {
                "-_.!~*'()"
            };
            let mut out = String::new();
            for c in s.chars() {
                if c.is_ascii_alphanumeric() || keep.contains(c) {
                    out.push(c);
                } else {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        out.push_str(&format!("%{b:02X}"));
                    }
                }
            }
            j(json!(out))
        }
        "decodeUrlComponent" | "decodeUrl" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let malformed = || {
                Error(format!(
                    "D3140: Malformed URL passed to ${name}(): {}",
                    json!(s)
                ))
            };
            let bytes = s.as_bytes();
            let mut out = Vec::new();
            let mut i = 0;
            while i < bytes.len() {
                if bytes[i] == b'%' {
                    let hex = s.get(i + 1..i + 3).ok_or_else(malformed)?;
                    out.push(u8::from_str_radix(hex, 16).map_err(|_| malformed())?);
                    i += 3;
                } else {
                    out.push(bytes[i]);
                    i += 1;
                }
            }
            j(json!(String::from_utf8(out).map_err(|_| malformed())?))
        }
        "toMillis" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            match text_arg(name, &a(1), 2)? {
                None => j(json!(super::jsonata_time::parse_iso(&s).map_err(Error)?)),
                Some(p) => super::jsonata_time::parse(&s, &p, cx.now)
                    .map_err(Error)?
                    .map(|ms| V::J(json!(ms))),
            }
        }
        "base64encode" | "base64decode" => {
            use base64::Engine;
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            let e = base64::engine::general_purpose::STANDARD;
            if name == "base64encode" {
                j(json!(e.encode(s)))
            } else {
                let bytes = e
                    .decode(s)
                    .map_err(|_| Error("Invalid base64 input".into()))?;
                j(json!(String::from_utf8_lossy(&bytes)))
            }
        }
        "partition" => {
            let all = items(&a0);
            let Some(size) = num_arg(name, &a(1), 2)? else {
                return err("Argument 2 of function \"partition\" is required");
            };
            if size < 1.0 {
                return err("Invalid arguments: size must be > 0");
            }
            j(Value::Array(
                all.chunks(size as usize)
                    .map(|c| Value::Array(c.to_vec()))
                    .collect(),
            ))
        }
        "range" => {
            let (Some(start), Some(end), Some(step)) = (
                num_arg(name, &a0, 1)?,
                num_arg(name, &a(1), 2)?,
                num_arg(name, &a(2), 3)?,
            ) else {
                return err("Invalid arguments: start, end and step are required");
            };
            if step == 0.0 {
                return err("Invalid arguments: step cannot be 0");
            }
            let mut out = Vec::new();
            let mut x = start;
            while (step > 0.0 && x <= end) || (step < 0.0 && x >= end) {
                out.push(num(x));
                if out.len() > 1000 {
                    return err("Invalid arguments: the range must not exceed 1000 elements");
                }
                x += step;
            }
            j(Value::Array(out))
        }
        "hash" => {
            let s = text_arg(name, &a0, 1)?.unwrap_or_default();
            let alg = text_arg(name, &a(1), 2)?.unwrap_or_default();
            j(json!(super::intrinsic::hash(&s, &alg).map_err(Error)?))
        }
        "random" => {
            let r: f64 = match num_arg(name, &a0, 1)? {
                Some(seed) => {
                    use rand::{Rng, SeedableRng};
                    rand::rngs::StdRng::seed_from_u64(seed as u64).random()
                }
                None => rand::random(),
            };
            j(json!(r))
        }
        "uuid" => j(json!(uuid::Uuid::new_v4().to_string())),
        "parse" => {
            let Some(s) = text_arg(name, &a0, 1)? else {
                return Ok(None);
            };
            match serde_json::from_str::<Value>(&s) {
                Ok(v) => j(v),
                Err(_) => return err(format!("Unable to parse JSON: {s}")),
            }
        }
        other => return err(format!("Unknown function: ${other}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str, input: Value) -> Result<Option<Value>, Error> {
        let mut vars = Map::new();
        vars.insert("x".into(), json!(3));
        vars.insert("states".into(), json!({"input": input.clone()}));
        evaluate_opt(src, &input, &vars)
    }

    #[test]
    fn expressions_evaluate_as_jsonata_does() {
        let input = json!({
            "name": "Ann",
            "orders": [
                {"id": 1, "price": 10, "items": ["a", "b"]},
                {"id": 2, "price": 25.5, "items": ["c"]},
                {"id": 3, "price": 4, "items": []}
            ],
            "flag": true,
            "s": "  Hello   World  "
        });
        let cases: &[(&str, Value)] = &[
            ("name", json!("Ann")),
            ("$states.input.name", json!("Ann")),
            ("orders.id", json!([1, 2, 3])),
            ("orders[0].id", json!(1)),
            ("orders[-1].id", json!(3)),
            ("orders[price > 5].id", json!([1, 2])),
            ("orders[price > 20].id", json!(2)),
            ("orders.items", json!(["a", "b", "c"])),
            ("$sum(orders.price)", json!(39.5)),
            ("$count(orders)", json!(3)),
            ("$max(orders.price)", json!(25.5)),
            ("$average([1, 2, 3])", json!(2)),
            ("1 + 2 * 3 - 4 / 2", json!(5)),
            ("10 % 3", json!(1)),
            ("-$x", json!(-3)),
            ("\"a\" & 1 & true", json!("a1true")),
            ("$x > 2 ? \"big\" : \"small\"", json!("big")),
            ("$x = 3 and flag", json!(true)),
            ("$x < 2 or false", json!(false)),
            ("2 in [1, 2]", json!(true)),
            (
                "{\"n\": name, \"c\": $count(orders)}",
                json!({"n": "Ann", "c": 3}),
            ),
            ("[1, [2, 3], 4]", json!([1, [2, 3], 4])),
            ("[1..4]", json!([1, 2, 3, 4])),
            ("$string(42)", json!("42")),
            ("$string({\"a\": 1})", json!("{\"a\":1}")),
            ("$number(\"12.5\")", json!(12.5)),
            ("$map([1, 2, 3], function($v) { $v * 2 })", json!([2, 4, 6])),
            (
                "$filter(orders, function($o) { $o.price < 20 }).id",
                json!([1, 3]),
            ),
            ("$reduce([1, 2, 3], function($a, $b) { $a + $b })", json!(6)),
            ("$merge([{\"a\": 1}, {\"b\": 2}])", json!({"a": 1, "b": 2})),
            ("$exists(nothing)", json!(false)),
            ("$exists(name)", json!(true)),
            ("$uppercase(name)", json!("ANN")),
            ("$lowercase(\"AB\")", json!("ab")),
            ("$trim(s)", json!("Hello World")),
            ("$substring(\"hello\", 1, 3)", json!("ell")),
            ("$substringBefore(\"a-b\", \"-\")", json!("a")),
            ("$substringAfter(\"a-b\", \"-\")", json!("b")),
            ("$split(\"a,b,c\", \",\")", json!(["a", "b", "c"])),
            ("$join([\"a\", \"b\"], \"-\")", json!("a-b")),
            ("$contains(name, \"nn\")", json!(true)),
            ("$replace(\"aXbX\", \"X\", \"-\")", json!("a-b-")),
            ("$length(name)", json!(3)),
            ("$keys({\"a\": 1, \"b\": 2})", json!(["a", "b"])),
            ("$lookup({\"a\": 1}, \"a\")", json!(1)),
            ("$append([1], 2)", json!([1, 2])),
            ("$sort([3, 1, 2])", json!([1, 2, 3])),
            ("$reverse([1, 2])", json!([2, 1])),
            ("$distinct([1, 1, 2])", json!([1, 2])),
            ("$round(2.5)", json!(2)),
            ("$round(2.71828, 2)", json!(2.72)),
            ("$floor(2.7) + $ceil(2.1) + $abs(-1)", json!(6)),
            ("$type([])", json!("array")),
            ("$not(false)", json!(true)),
            ("$boolean(\"\")", json!(false)),
            ("($a := 2; $b := $a * 5; $b + 1)", json!(11)),
            ("orders.price ~> $sum()", json!(39.5)),
            (
                "$partition([1, 2, 3, 4, 5], 2)",
                json!([[1, 2], [3, 4], [5]]),
            ),
            ("$range(0, 10, 5)", json!([0, 5, 10])),
            (
                "$hash(\"abc\", \"MD5\")",
                json!("900150983cd24fb0d6963f7d28e17f72"),
            ),
            ("$parse(\"{\\\"a\\\": [1]}\")", json!({"a": [1]})),
            ("$random(7) = $random(7)", json!(true)),
            ("$length($uuid())", json!(36)),
            ("orders[id = 2].items[0]", json!("c")),
            ("$$.name", json!("Ann")),
            ("/* note */ name", json!("Ann")),
            ("`name`", json!("Ann")),
        ];
        for (src, want) in cases {
            assert_eq!(
                run(src, input.clone()).map_err(|e| format!("{src}: {e:?}")),
                Ok(Some(want.clone())),
                "{src}"
            );
        }
        assert_eq!(run("nothing", input.clone()), Ok(None));
        assert_eq!(run("orders[price > 100]", input.clone()), Ok(None));
    }

    #[test]
    fn regular_expressions_match_split_and_replace() {
        let input =
            json!({"s": "Order-12 shipped to Ann, order-7 pending", "e": "ann@example.com"});
        let cases: &[(&str, Value)] = &[
            ("$contains(s, /order-\\d+/)", json!(true)),
            ("$contains(s, /ORDER-99/i)", json!(false)),
            ("$contains(e, /^[a-z]+@[a-z]+\\.com$/)", json!(true)),
            ("$match(s, /order-(\\d+)/i).groups[0]", json!(["12", "7"])),
            (
                "$match(s, /order-(\\d+)/i, 1)",
                json!({"match": "Order-12", "index": 0, "groups": ["12"]}),
            ),
            ("$count($match(s, /o/))", json!(2)),
            ("$match(s, /xyz/)", Value::Null),
            ("$split('a1b22c', /\\d+/)", json!(["a", "b", "c"])),
            ("$split('a, b;c', /[,;] ?/, 2)", json!(["a", "b"])),
            (
                "$replace(s, /order-(\\d+)/i, '#$1')",
                json!("#12 shipped to Ann, #7 pending"),
            ),
            (
                "$replace('John Smith', /(\\w+)\\s(\\w+)/, '$2, $1')",
                json!("Smith, John"),
            ),
            ("$replace('abc', /b/, '[$0]')", json!("a[b]c")),
            ("$replace('a.b.c', /\\./, '$$', 1)", json!("a$b.c")),
            ("$replace('265USD', /([0-9]+)USD/, '$$$1')", json!("$265")),
            (
                "$replace('x2 y3', /\\d/, function($m) { $string($number($m.match) * 2) })",
                json!("x4 y6"),
            ),
            ("$type(/a/)", json!("function")),
            (
                "[1, 2, 3] ~> $map(function($v) { $v / 2 })",
                json!([0.5, 1, 1.5]),
            ),
            ("(/a+b/)('xaaab').match", json!("aaab")),
        ];
        for (src, want) in cases {
            let got = run(src, input.clone()).map_err(|e| format!("{src}: {e:?}"));
            if want.is_null() {
                assert_eq!(got, Ok(None), "{src}");
            } else {
                assert_eq!(got, Ok(Some(want.clone())), "{src}");
            }
        }
        let errors = [
            (
                "$replace('aaa', /x*/, '-')",
                "D1004: Regular expression matches zero length string",
            ),
            (
                "$match('a', 'a')",
                "T0410: Argument 2 of function \"match\"",
            ),
            (
                "$contains('a', /(?=a)/)",
                "Invalid regular expression /(?=a)/",
            ),
            ("'a' ~> /b", "S0302: No terminating / in regular expression"),
        ];
        for (src, want) in errors {
            let e = run(src, json!({})).expect_err(src);
            assert!(e.0.starts_with(want), "{src}: {}", e.0);
        }
    }

    #[test]
    fn dates_format_and_parse_with_pictures() {
        let cases: &[(&str, Value)] = &[
            (
                "$fromMillis(1510067274972)",
                json!("2017-11-07T15:07:54.972Z"),
            ),
            (
                "$fromMillis(1510067274972, '[Y0001]-[M01]-[D01]T[H01]:[m01]:[s01].[f001]Z')",
                json!("2017-11-07T15:07:54.972Z"),
            ),
            (
                "$fromMillis(1510067274972, '[H01]:[m01] [z]', '-0500')",
                json!("10:07 GMT-05:00"),
            ),
            (
                "$toMillis('2017-11-07T15:07:54.972Z')",
                json!(1510067274972i64),
            ),
            (
                "$toMillis('07/11/2017', '[D01]/[M01]/[Y0001]')",
                json!(1510012800000i64),
            ),
            ("$toMillis($now()) > 1700000000000", json!(true)),
            ("$length($now('[Y0001]-[M01]-[D01]'))", json!(10)),
            ("$now() = $now() and $millis() = $millis()", json!(true)),
            ("$toMillis($now()) = $millis()", json!(true)),
            (
                "$string({'a': [1]}, true)",
                json!("{\n  \"a\": [\n    1\n  ]\n}"),
            ),
            (
                "$substring($now('[H01]:[m01][Z]', '+0530'), 5)",
                json!("+05:30"),
            ),
        ];
        for (src, want) in cases {
            assert_eq!(
                run(src, json!({})).map_err(|e| format!("{src}: {e:?}")),
                Ok(Some(want.clone())),
                "{src}"
            );
        }
        assert_eq!(run("$toMillis('2017', '[Y]-[M]')", json!({})), Ok(None));
        let e = run("$fromMillis(0, '[Q]')", json!({})).unwrap_err();
        assert!(e.0.starts_with("D3132: "), "{}", e.0);
        let e = run("$toMillis('soon')", json!({})).unwrap_err();
        assert!(e.0.starts_with("D3110: "), "{}", e.0);
    }

    #[test]
    fn transform_copies_with_updates_and_deletions() {
        let input = json!({"order": {"id": 1, "items": [
            {"sku": "a", "price": 10, "tmp": 1}, {"sku": "b", "price": 20, "tmp": 2}]}});
        let cases: &[(&str, Value)] = &[
            (
                "$ ~> | order.items | {'price': price * 2}, 'tmp' |",
                json!({"order": {"id": 1, "items": [
                    {"sku": "a", "price": 20}, {"sku": "b", "price": 40}]}}),
            ),
            (
                "order ~> | items[sku = 'b'] | {'sale': true} |",
                json!({"id": 1, "items": [
                    {"sku": "a", "price": 10, "tmp": 1},
                    {"sku": "b", "price": 20, "tmp": 2, "sale": true}]}),
            ),
            ("order ~> | $ | {}, ['items', 'nope'] |", json!({"id": 1})),
            (
                "($t := | items | {'n': 0} |; $t(order).items.n)",
                json!([0, 0]),
            ),
            ("order.items[0].price", json!(10)),
        ];
        for (src, want) in cases {
            assert_eq!(
                run(src, input.clone()).map_err(|e| format!("{src}: {e:?}")),
                Ok(Some(want.clone())),
                "{src}"
            );
        }
        let e = run("$ ~> | order | 5 |", input.clone()).unwrap_err();
        assert!(e.0.starts_with("T2011: "), "{}", e.0);
        let e = run("$ ~> | order | {}, 5 |", input.clone()).unwrap_err();
        assert!(e.0.starts_with("T2012: "), "{}", e.0);
    }

    #[test]
    fn syntax_is_checked_without_evaluating() {
        assert_eq!(check("$states.input.a + 1"), Ok(()));
        assert_eq!(check("1 +"), Err("Unexpected end of expression".into()));
        assert_eq!(check("a[1,2)"), Err("Expected \"]\", got \",\"".into()));
        assert_eq!(
            check("'open"),
            Err("String literal must be terminated by a matching quote".into())
        );
        assert_eq!(
            check("{'a':}"),
            Err("The symbol \"}\" cannot be used as a unary operator".into())
        );
        assert_eq!(
            check("$f(1"),
            Err("Expected \")\" before end of expression".into())
        );
    }

    #[test]
    fn order_by_and_grouping() {
        let input = json!({"items": [
            {"sku": "a", "cat": "x", "price": 5},
            {"sku": "b", "cat": "y", "price": 9},
            {"sku": "c", "cat": "x", "price": 7},
            {"sku": "d", "cat": "y"}]});
        let cases: &[(&str, Value)] = &[
            ("items^(price).sku", json!(["a", "c", "b", "d"])),
            ("items^(>price).sku", json!(["b", "c", "a", "d"])),
            ("items^(cat, >price).sku", json!(["c", "a", "b", "d"])),
            ("items{cat: $sum(price)}", json!({"x": 12, "y": 9})),
            ("items{cat: sku}", json!({"x": ["a", "c"], "y": ["b", "d"]})),
            ("items[price > 6]{sku: price}", json!({"b": 9, "c": 7})),
            ("$states.input.items^(sku)[0].sku", json!("a")),
            (
                "[{'o': [{'p': 3}, {'p': 1}]}, {'o': [{'p': 2}]}].o^(p).p",
                json!([1, 2, 3]),
            ),
            (
                "[{'o': [{'c': 'x'}]}, {'o': [{'c': 'x'}]}].o{c: $count($)}",
                json!({"x": 2}),
            ),
        ];
        for (src, want) in cases {
            assert_eq!(
                run(src, input.clone()).map_err(|e| format!("{src}: {e:?}")),
                Ok(Some(want.clone())),
                "{src}"
            );
        }
        let e = run("[{'a': 1}, {'a': 'x'}]^(a)", json!({})).unwrap_err();
        assert!(e.0.starts_with("T2007: "), "{}", e.0);
        let e = run("items{sku: 1, sku: 2}", input.clone()).unwrap_err();
        assert!(e.0.starts_with("D1009: "), "{}", e.0);
        assert_eq!(
            check("items^(price"),
            Err("Expected \")\" before end of expression".into())
        );
    }

    #[test]
    fn further_standard_functions() {
        let cases: &[(&str, Value)] = &[
            (
                "$sift({'a': 1, 'b': 2, 'c': 3}, function($v) { $v > 1 })",
                json!({"b": 2, "c": 3}),
            ),
            ("$count($shuffle([1, 2, 3]))", json!(3)),
            ("$sort($shuffle([3, 1, 2]))", json!([1, 2, 3])),
            ("$formatBase(100, 2)", json!("1100100")),
            ("$formatBase(-255, 16)", json!("-ff")),
            (
                "$encodeUrlComponent('?x=a b&é')",
                json!("%3Fx%3Da%20b%26%C3%A9"),
            ),
            (
                "$encodeUrl('https://h/p?q=a b')",
                json!("https://h/p?q=a%20b"),
            ),
            (
                "$decodeUrlComponent('%3Fx%3Da%20b%26%C3%A9')",
                json!("?x=a b&é"),
            ),
            (
                "$decodeUrl('https://h/p?q=a%20b')",
                json!("https://h/p?q=a b"),
            ),
            ("$formatNumber(1234.5678, '#,##0.00')", json!("1,234.57")),
            ("$formatInteger(2024, 'I')", json!("MMXXIV")),
            ("$parseInteger('1,234', '#,##0')", json!(1234)),
            ("{'a': {'b': 1, 'c': [{'b': 2}]}}.**.b", json!([1, 2])),
            ("($assert(true, 'no'); 1)", json!(1)),
        ];
        for (src, want) in cases {
            assert_eq!(
                run(src, json!({})).map_err(|e| format!("{src}: {e:?}")),
                Ok(Some(want.clone())),
                "{src}"
            );
        }
        let errors = [
            ("$error('stop here')", "D3137: stop here"),
            ("$assert(1 = 2, 'one is not two')", "D3141: one is not two"),
            (
                "$formatBase(1, 40)",
                "D3100: The radix of the formatBase function must be between 2 and 36.  It was given 40",
            ),
            (
                "$decodeUrl('%E0%A4%A')",
                "D3140: Malformed URL passed to $decodeUrl(): \"%E0%A4%A\"",
            ),
        ];
        for (src, want) in errors {
            assert_eq!(run(src, json!({})).unwrap_err().0, want, "{src}");
        }
    }

    #[test]
    fn eval_is_not_a_function_in_step_functions() {
        let e = run("$eval('1 + 1')", json!({})).unwrap_err();
        assert_eq!(e.0, "T1006: Attempted to invoke a non-function");
    }

    #[test]
    fn errors_say_what_failed() {
        let cases = [
            ("1 +", "Unexpected end of expression"),
            ("\"a\" + 1", "must evaluate to a number"),
            ("$nope()", "Attempted to invoke a non-function"),
            ("$number(\"x\")", "Unable to cast value to a number"),
            ("$partition([1], 0)", "size must be > 0"),
            ("$range(1, 2, 0)", "step cannot be 0"),
            ("$parse(\"{\")", "Unable to parse JSON"),
            ("1 < \"a\"", "same data type"),
        ];
        for (src, want) in cases {
            let e = run(src, json!({})).expect_err(src);
            assert!(e.0.contains(want), "{src}: {}", e.0);
        }
    }
}
