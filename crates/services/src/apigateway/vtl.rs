//! API Gateway's mapping templates: the subset of Apache Velocity (VTL) that request and
//! response templates use — references (`$x`, `$!x`, `${x}`, `$a.b.c`, `$a.m(args)`,
//! `$a[0]`), `#set`, `#if`/`#elseif`/`#else`, `#foreach` (with `$foreach.hasNext`/`.index`
//! and `$velocityCount`), comments, and expressions (literals, lists, maps, ranges,
//! comparisons, `&&`/`||`/`!`, arithmetic) — over `$input` (`body`, `json`, `path`,
//! `params`), `$util` (`escapeJavaScript`, `urlEncode`, `urlDecode`, `base64Encode`,
//! `base64Decode`, `parseJson`), and plain variables (`$context`, `$stageVariables`).
//!
//! Anything outside that subset is an error naming it ([`VtlError::Unsupported`]), which the
//! data plane answers as a 500 saying what is missing, never a silently wrong body.
//! Values are JSON values; as in Velocity 1.7 only `null` and `false` are false.

use base64::Engine;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VtlError {
    #[error("cumulo: mapping template uses {0}, which cumulo's VTL does not support")]
    Unsupported(String),
    #[error("cumulo: mapping template does not parse: {0}")]
    Syntax(String),
}

/// The request a template reads through `$input`.
#[derive(Debug, Clone, Default)]
pub struct Input {
    pub body: String,
    pub path: BTreeMap<String, String>,
    pub querystring: BTreeMap<String, String>,
    pub header: BTreeMap<String, String>,
}

/// What a template is rendered with.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub input: Input,
    pub vars: HashMap<String, Value>,
}

/// Renders `template`.
pub fn render(template: &str, env: &mut Env) -> Result<String, VtlError> {
    let mut p = Parser {
        s: template.chars().collect(),
        i: 0,
        depth: 0,
    };
    let (nodes, end) = p.block(&[])?;
    if let Some(e) = end {
        return Err(VtlError::Syntax(format!("unexpected #{e}")));
    }
    let mut out = String::new();
    exec(&nodes, env, &mut out)?;
    Ok(out)
}

#[derive(Debug, Clone)]
enum Node {
    Text(String),
    Ref(Ref),
    /// `#set($var = e)` or `#set($var.a.b = e)` (a property path, created as it goes: how
    /// templates write `$context.requestOverride.header.X` and `$context.responseOverride.status`).
    Set(String, Vec<String>, Expr),
    If(Vec<(Expr, Vec<Node>)>, Vec<Node>),
    Foreach(String, Expr, Vec<Node>),
}

#[derive(Debug, Clone)]
struct Ref {
    quiet: bool,
    root: String,
    chain: Vec<Access>,
    raw: String,
}

#[derive(Debug, Clone)]
enum Access {
    Prop(String),
    Call(String, Vec<Expr>),
    Index(Expr),
}

#[derive(Debug, Clone)]
enum Expr {
    Lit(Value),
    Interp(String),
    Ref(Ref),
    List(Vec<Expr>),
    Map(Vec<(Expr, Expr)>),
    Range(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Bin(String, Box<Expr>, Box<Expr>),
}

struct Parser {
    s: Vec<char>,
    i: usize,
    /// How deeply blocks and expressions nest here; bounded so no template exhausts the stack.
    depth: usize,
}

/// Deeper nesting than any real template uses is refused as a syntax error.
const MAX_DEPTH: usize = 32;

impl Parser {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }

    fn at(&self, text: &str) -> bool {
        let t: Vec<char> = text.chars().collect();
        self.s.get(self.i..self.i + t.len()) == Some(&t[..])
    }

    fn eat(&mut self, text: &str) -> bool {
        if self.at(text) {
            self.i += text.chars().count();
            true
        } else {
            false
        }
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.i += 1;
        }
    }

    fn ident(&mut self) -> Option<String> {
        let start = self.i;
        if !self
            .peek()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        {
            return None;
        }
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            self.i += 1;
        }
        Some(self.s[start..self.i].iter().collect())
    }

    /// Nodes up to one of the directives in `until` (returned), or the end.
    fn block(&mut self, until: &[&str]) -> Result<(Vec<Node>, Option<String>), VtlError> {
        self.depth += 1;
        let out = self.block_inner(until);
        self.depth -= 1;
        out
    }

    fn deeper(&self) -> Result<(), VtlError> {
        if self.depth > MAX_DEPTH {
            return Err(syntax("nested too deeply"));
        }
        Ok(())
    }

    fn block_inner(&mut self, until: &[&str]) -> Result<(Vec<Node>, Option<String>), VtlError> {
        self.deeper()?;
        let mut nodes = Vec::new();
        let mut text = String::new();
        while let Some(c) = self.peek() {
            if c == '#' {
                if self.eat("##") {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.i += 1;
                    }
                    continue;
                }
                if self.eat("#*") {
                    while self.peek().is_some() && !self.eat("*#") {
                        self.i += 1;
                    }
                    continue;
                }
                let save = self.i;
                self.i += 1;
                let braced = self.eat("{");
                let name = self.ident().unwrap_or_default();
                if braced && !self.eat("}") {
                    self.i = save + 1;
                    text.push('#');
                    continue;
                }
                match name.as_str() {
                    "set" | "if" | "elseif" | "foreach" | "else" | "end" => {}
                    "" => {
                        self.i = save + 1;
                        text.push('#');
                        continue;
                    }
                    other => {
                        if self.peek() == Some('(') {
                            return Err(VtlError::Unsupported(format!("#{other}")));
                        }
                        self.i = save + 1;
                        text.push('#');
                        continue;
                    }
                }
                if !text.is_empty() {
                    nodes.push(Node::Text(std::mem::take(&mut text)));
                }
                if until.contains(&name.as_str()) {
                    return Ok((nodes, Some(name)));
                }
                match name.as_str() {
                    "set" => {
                        self.ws();
                        self.expect("(")?;
                        self.ws();
                        self.expect("$")?;
                        self.eat("{");
                        let var = self
                            .ident()
                            .ok_or_else(|| syntax("#set needs a variable"))?;
                        self.eat("}");
                        let mut chain = Vec::new();
                        while self.peek() == Some('.') {
                            self.i += 1;
                            chain.push(self.ident().unwrap_or_default());
                        }
                        self.ws();
                        self.expect("=")?;
                        let e = self.expr()?;
                        self.ws();
                        self.expect(")")?;
                        self.line_end_after_directive();
                        nodes.push(Node::Set(var, chain, e));
                    }
                    "if" => {
                        let mut branches = Vec::new();
                        let mut cond = self.paren_expr()?;
                        let mut otherwise = Vec::new();
                        loop {
                            let (body, end) = self.block(&["elseif", "else", "end"])?;
                            branches.push((cond, body));
                            match end.as_deref() {
                                Some("elseif") => cond = self.paren_expr()?,
                                Some("else") => {
                                    let (body, end) = self.block(&["end"])?;
                                    if end.is_none() {
                                        return Err(syntax("#if without #end"));
                                    }
                                    otherwise = body;
                                    break;
                                }
                                Some(_) => break,
                                None => return Err(syntax("#if without #end")),
                            }
                        }
                        nodes.push(Node::If(branches, otherwise));
                    }
                    "foreach" => {
                        self.ws();
                        self.expect("(")?;
                        self.ws();
                        self.expect("$")?;
                        self.eat("{");
                        let var = self
                            .ident()
                            .ok_or_else(|| syntax("#foreach needs a variable"))?;
                        self.eat("}");
                        self.ws();
                        self.expect("in")?;
                        let e = self.expr()?;
                        self.ws();
                        self.expect(")")?;
                        let (body, end) = self.block(&["end"])?;
                        if end.is_none() {
                            return Err(syntax("#foreach without #end"));
                        }
                        nodes.push(Node::Foreach(var, e, body));
                    }
                    other => return Err(syntax(&format!("unexpected #{other}"))),
                }
                continue;
            }
            if c == '$' {
                let save = self.i;
                if let Some(r) = self.reference()? {
                    if !text.is_empty() {
                        nodes.push(Node::Text(std::mem::take(&mut text)));
                    }
                    nodes.push(Node::Ref(r));
                    continue;
                }
                self.i = save + 1;
                text.push('$');
                continue;
            }
            if c == '\\'
                && self
                    .s
                    .get(self.i + 1)
                    .is_some_and(|n| *n == '$' || *n == '#')
            {
                text.push(self.s[self.i + 1]);
                self.i += 2;
                continue;
            }
            text.push(c);
            self.i += 1;
        }
        if !text.is_empty() {
            nodes.push(Node::Text(text));
        }
        Ok((nodes, None))
    }

    /// A directive alone on its line takes its newline with it, as Velocity does for #set.
    fn line_end_after_directive(&mut self) {
        let save = self.i;
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.i += 1;
        }
        if !self.eat("\n") {
            self.i = save;
        }
    }

    fn expect(&mut self, t: &str) -> Result<(), VtlError> {
        if self.eat(t) {
            Ok(())
        } else {
            Err(syntax(&format!("expected '{t}' at {}", self.i)))
        }
    }

    fn paren_expr(&mut self) -> Result<Expr, VtlError> {
        self.ws();
        self.expect("(")?;
        let e = self.expr()?;
        self.ws();
        self.expect(")")?;
        Ok(e)
    }

    /// `$name...` at the cursor, or `None` (the `$` is literal).
    fn reference(&mut self) -> Result<Option<Ref>, VtlError> {
        let start = self.i;
        self.i += 1;
        let quiet = self.eat("!");
        let braced = self.eat("{");
        let Some(root) = self.ident() else {
            return Ok(None);
        };
        let mut chain = Vec::new();
        loop {
            if self.peek() == Some('.')
                && self
                    .s
                    .get(self.i + 1)
                    .is_some_and(|c| c.is_ascii_alphabetic() || *c == '_')
            {
                self.i += 1;
                let name = self.ident().unwrap_or_default();
                if self.peek() == Some('(') {
                    self.i += 1;
                    let args = self.args(')')?;
                    chain.push(Access::Call(name, args));
                } else {
                    chain.push(Access::Prop(name));
                }
            } else if self.peek() == Some('[') {
                self.i += 1;
                let e = self.expr()?;
                self.ws();
                self.expect("]")?;
                chain.push(Access::Index(e));
            } else {
                break;
            }
        }
        if braced && !self.eat("}") {
            return Ok(None);
        }
        let raw = self.s[start..self.i].iter().collect();
        Ok(Some(Ref {
            quiet,
            root,
            chain,
            raw,
        }))
    }

    fn args(&mut self, close: char) -> Result<Vec<Expr>, VtlError> {
        let mut args = Vec::new();
        self.ws();
        if self.peek() == Some(close) {
            self.i += 1;
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            self.ws();
            match self.peek() {
                Some(',') => self.i += 1,
                Some(c) if c == close => {
                    self.i += 1;
                    return Ok(args);
                }
                _ => return Err(syntax("unclosed argument list")),
            }
        }
    }

    fn expr(&mut self) -> Result<Expr, VtlError> {
        self.depth += 1;
        let out = self.deeper().and_then(|()| self.binary(0));
        self.depth -= 1;
        out
    }

    fn binary(&mut self, level: usize) -> Result<Expr, VtlError> {
        const LEVELS: &[&[&str]] = &[
            &["||", "or"],
            &["&&", "and"],
            &["==", "!=", "eq", "ne"],
            &["<=", ">=", "<", ">", "le", "ge", "lt", "gt"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        loop {
            self.ws();
            let Some(op) = LEVELS[level].iter().find(|op| {
                self.at(op)
                    && (!op.chars().all(|c| c.is_ascii_alphabetic())
                        || !self
                            .s
                            .get(self.i + op.len())
                            .is_some_and(|c| c.is_ascii_alphanumeric()))
            }) else {
                return Ok(left);
            };
            self.i += op.len();
            let right = self.binary(level + 1)?;
            let canonical = match *op {
                "or" => "||",
                "and" => "&&",
                "eq" => "==",
                "ne" => "!=",
                "le" => "<=",
                "ge" => ">=",
                "lt" => "<",
                "gt" => ">",
                o => o,
            };
            left = Expr::Bin(canonical.to_string(), Box::new(left), Box::new(right));
        }
    }

    fn unary(&mut self) -> Result<Expr, VtlError> {
        self.ws();
        if self.eat("!") || (self.at("not ") && self.eat("not")) {
            self.depth += 1;
            let inner = self.deeper().and_then(|()| self.unary());
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(inner?)));
        }
        if self.peek() == Some('-') && self.s.get(self.i + 1).is_some_and(char::is_ascii_digit) {
            self.i += 1;
            return match self.primary()? {
                Expr::Lit(Value::Number(n)) => Ok(Expr::Lit(
                    n.as_i64()
                        .map(|i| Value::from(-i))
                        .unwrap_or_else(|| Value::from(-n.as_f64().unwrap_or(0.0))),
                )),
                _ => Err(syntax("bad number")),
            };
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, VtlError> {
        self.ws();
        match self.peek() {
            Some('$') => self
                .reference()?
                .map(Expr::Ref)
                .ok_or_else(|| syntax("bad reference")),
            Some(q @ ('"' | '\'')) => {
                self.i += 1;
                let mut s = String::new();
                while let Some(c) = self.peek() {
                    self.i += 1;
                    if c == q {
                        if self.peek() == Some(q) {
                            self.i += 1;
                            s.push(q);
                            continue;
                        }
                        return Ok(if q == '"' && (s.contains('$') || s.contains('#')) {
                            Expr::Interp(s)
                        } else {
                            Expr::Lit(Value::String(s))
                        });
                    }
                    s.push(c);
                }
                Err(syntax("unterminated string"))
            }
            Some('[') => {
                self.i += 1;
                self.ws();
                if self.peek() != Some(']') {
                    let first = self.expr()?;
                    self.ws();
                    if self.eat("..") {
                        let last = self.expr()?;
                        self.ws();
                        self.expect("]")?;
                        return Ok(Expr::Range(Box::new(first), Box::new(last)));
                    }
                    let mut items = vec![first];
                    loop {
                        self.ws();
                        if self.eat("]") {
                            return Ok(Expr::List(items));
                        }
                        self.expect(",")?;
                        items.push(self.expr()?);
                    }
                }
                self.i += 1;
                Ok(Expr::List(Vec::new()))
            }
            Some('{') => {
                self.i += 1;
                let mut pairs = Vec::new();
                loop {
                    self.ws();
                    if self.eat("}") {
                        return Ok(Expr::Map(pairs));
                    }
                    let k = self.expr()?;
                    self.ws();
                    self.expect(":")?;
                    let v = self.expr()?;
                    pairs.push((k, v));
                    self.ws();
                    self.eat(",");
                }
            }
            Some('(') => {
                self.i += 1;
                let e = self.expr()?;
                self.ws();
                self.expect(")")?;
                Ok(e)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = self.i;
                while self.peek().is_some_and(|c| {
                    c.is_ascii_digit() || (c == '.' && self.s.get(self.i + 1) != Some(&'.'))
                }) {
                    self.i += 1;
                }
                let t: String = self.s[start..self.i].iter().collect();
                let v = t
                    .parse::<i64>()
                    .map(Value::from)
                    .or_else(|_| t.parse::<f64>().map(Value::from))
                    .map_err(|_| syntax("bad number"))?;
                Ok(Expr::Lit(v))
            }
            _ => {
                let word = self.ident().unwrap_or_default();
                match word.as_str() {
                    "true" => Ok(Expr::Lit(Value::Bool(true))),
                    "false" => Ok(Expr::Lit(Value::Bool(false))),
                    "null" => Ok(Expr::Lit(Value::Null)),
                    _ => Err(syntax(&format!("unexpected '{word}' at {}", self.i))),
                }
            }
        }
    }
}

fn syntax(msg: &str) -> VtlError {
    VtlError::Syntax(msg.to_string())
}

fn exec(nodes: &[Node], env: &mut Env, out: &mut String) -> Result<(), VtlError> {
    for n in nodes {
        match n {
            Node::Text(t) => out.push_str(t),
            Node::Ref(r) => match eval_ref(r, env)? {
                Value::Null if r.quiet => {}
                Value::Null => out.push_str(&r.raw),
                v => out.push_str(&display(&v)),
            },
            Node::Set(var, chain, e) => {
                let v = eval(e, env)?;
                let mut slot = env.vars.entry(var.clone()).or_insert(Value::Null);
                for key in chain {
                    if !slot.is_object() {
                        *slot = Value::Object(Default::default());
                    }
                    slot = slot
                        .as_object_mut()
                        .expect("made an object above")
                        .entry(key.clone())
                        .or_insert(Value::Null);
                }
                *slot = v;
            }
            Node::If(branches, otherwise) => {
                let mut done = false;
                for (cond, body) in branches {
                    if truthy(&eval(cond, env)?) {
                        exec(body, env, out)?;
                        done = true;
                        break;
                    }
                }
                if !done {
                    exec(otherwise, env, out)?;
                }
            }
            Node::Foreach(var, e, body) => {
                let items = match eval(e, env)? {
                    Value::Array(a) => a,
                    Value::Object(m) => m.into_values().collect(),
                    Value::Null => Vec::new(),
                    v => vec![v],
                };
                let n = items.len();
                for (i, item) in items.into_iter().enumerate() {
                    env.vars.insert(var.clone(), item);
                    env.vars.insert(
                        "foreach".into(),
                        serde_json::json!({"hasNext": i + 1 < n, "index": i, "count": i + 1,
                            "first": i == 0, "last": i + 1 == n}),
                    );
                    env.vars.insert("velocityCount".into(), Value::from(i + 1));
                    exec(body, env, out)?;
                }
            }
        }
    }
    Ok(())
}

/// How Velocity prints a value: strings bare, maps and lists in Java's `toString` form.
pub fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(a) => format!("[{}]", a.iter().map(display).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{k}={}", display(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        other => other.to_string(),
    }
}

fn truthy(v: &Value) -> bool {
    !matches!(v, Value::Null | Value::Bool(false))
}

fn eval(e: &Expr, env: &mut Env) -> Result<Value, VtlError> {
    Ok(match e {
        Expr::Lit(v) => v.clone(),
        Expr::Interp(t) => Value::String(render(t, env)?),
        Expr::Ref(r) => eval_ref(r, env)?,
        Expr::List(items) => Value::Array(
            items
                .iter()
                .map(|i| eval(i, env))
                .collect::<Result<_, _>>()?,
        ),
        Expr::Map(pairs) => {
            let mut m = Map::new();
            for (k, v) in pairs {
                let k = display(&eval(k, env)?);
                m.insert(k, eval(v, env)?);
            }
            Value::Object(m)
        }
        Expr::Range(a, b) => {
            let a = eval(a, env)?.as_i64().unwrap_or(0);
            let b = eval(b, env)?.as_i64().unwrap_or(0);
            if a <= b {
                (a..=b).map(Value::from).collect()
            } else {
                (b..=a).rev().map(Value::from).collect()
            }
        }
        Expr::Not(x) => Value::Bool(!truthy(&eval(x, env)?)),
        Expr::Bin(op, a, b) => {
            if op == "&&" {
                return Ok(Value::Bool(
                    truthy(&eval(a, env)?) && truthy(&eval(b, env)?),
                ));
            }
            if op == "||" {
                return Ok(Value::Bool(
                    truthy(&eval(a, env)?) || truthy(&eval(b, env)?),
                ));
            }
            let (x, y) = (eval(a, env)?, eval(b, env)?);
            binary(op, &x, &y)
        }
    })
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

fn binary(op: &str, x: &Value, y: &Value) -> Value {
    let both_int = x.is_i64() && y.is_i64();
    match op {
        "==" => Value::Bool(
            x == y
                || (number(x).is_some()
                    && number(x) == number(y)
                    && x.is_number()
                    && y.is_number())
                || (x.is_string() != y.is_string()
                    && !x.is_null()
                    && !y.is_null()
                    && display(x) == display(y)),
        ),
        "!=" => Value::Bool(!truthy(&binary("==", x, y))),
        "<" | ">" | "<=" | ">=" => {
            let ord = match (number(x), number(y)) {
                (Some(a), Some(b)) if x.is_number() && y.is_number() => a.partial_cmp(&b),
                _ => Some(display(x).cmp(&display(y))),
            };
            let Some(o) = ord else {
                return Value::Bool(false);
            };
            Value::Bool(match op {
                "<" => o.is_lt(),
                ">" => o.is_gt(),
                "<=" => o.is_le(),
                _ => o.is_ge(),
            })
        }
        "+" if x.is_string() || y.is_string() => Value::String(display(x) + &display(y)),
        _ => {
            let (Some(a), Some(b)) = (number(x), number(y)) else {
                return Value::Null;
            };
            if both_int {
                let (a, b) = (a as i64, b as i64);
                return match op {
                    "+" => a.checked_add(b).map(Value::from),
                    "-" => a.checked_sub(b).map(Value::from),
                    "*" => a.checked_mul(b).map(Value::from),
                    "/" => a.checked_div(b).map(Value::from),
                    _ => a.checked_rem(b).map(Value::from),
                }
                .unwrap_or(Value::Null);
            }
            let r = match op {
                "+" => a + b,
                "-" => a - b,
                "*" => a * b,
                "/" => a / b,
                _ => a % b,
            };
            serde_json::Number::from_f64(r).map_or(Value::Null, Value::Number)
        }
    }
}

fn eval_ref(r: &Ref, env: &mut Env) -> Result<Value, VtlError> {
    let mut chain = r.chain.iter();
    let mut cur = match r.root.as_str() {
        "input" => match chain.next() {
            None => return Err(VtlError::Unsupported("$input by itself".into())),
            Some(Access::Prop(p)) if p == "body" => Value::String(env.input.body.clone()),
            Some(Access::Call(m, args)) => {
                let args = args
                    .iter()
                    .map(|a| eval(a, env))
                    .collect::<Result<Vec<_>, _>>()?;
                input_call(&env.input, m, &args)?
            }
            Some(other) => {
                return Err(VtlError::Unsupported(format!(
                    "$input.{}",
                    access_name(other)
                )));
            }
        },
        "util" => match chain.next() {
            Some(Access::Call(m, args)) => {
                let args = args
                    .iter()
                    .map(|a| eval(a, env))
                    .collect::<Result<Vec<_>, _>>()?;
                util_call(m, &args)?
            }
            other => {
                return Err(VtlError::Unsupported(format!(
                    "$util.{}",
                    other.map(access_name).unwrap_or_default()
                )));
            }
        },
        name => env.vars.get(name).cloned().unwrap_or(Value::Null),
    };
    for a in chain {
        cur = match a {
            Access::Prop(p) => match &cur {
                Value::Object(m) => m.get(p).cloned().unwrap_or(Value::Null),
                Value::Array(items) if p == "size" => Value::from(items.len()),
                // Velocity reads a property of anything else through its bean getter
                // (`$s.empty` is `$s.isEmpty()`); none is null, as Velocity's is.
                Value::Null => Value::Null,
                other => {
                    let mut chars = p.chars();
                    let cap: String = chars
                        .next()
                        .map(|c| c.to_ascii_uppercase())
                        .into_iter()
                        .chain(chars)
                        .collect();
                    method_call(other, &format!("is{cap}"), &[])
                        .or_else(|_| method_call(other, &format!("get{cap}"), &[]))
                        .unwrap_or(Value::Null)
                }
            },
            Access::Index(e) => {
                let k = eval(e, env)?;
                match (&cur, &k) {
                    (Value::Array(items), Value::Number(n)) => n
                        .as_u64()
                        .and_then(|i| items.get(i as usize).cloned())
                        .unwrap_or(Value::Null),
                    (Value::Object(m), k) => m.get(&display(k)).cloned().unwrap_or(Value::Null),
                    _ => Value::Null,
                }
            }
            Access::Call(m, args) => {
                let args = args
                    .iter()
                    .map(|a| eval(a, env))
                    .collect::<Result<Vec<_>, _>>()?;
                method_call(&cur, m, &args)?
            }
        };
    }
    Ok(cur)
}

fn access_name(a: &Access) -> String {
    match a {
        Access::Prop(p) | Access::Call(p, _) => p.clone(),
        Access::Index(_) => "[...]".into(),
    }
}

fn arg_str(args: &[Value], i: usize) -> String {
    args.get(i).map(display).unwrap_or_default()
}

fn input_call(input: &Input, m: &str, args: &[Value]) -> Result<Value, VtlError> {
    let body = || -> Value {
        if input.body.trim().is_empty() {
            Value::Object(Map::new())
        } else {
            serde_json::from_str(&input.body).unwrap_or_else(|_| Value::String(input.body.clone()))
        }
    };
    match m {
        "json" => {
            let v = json_path(&body(), &arg_str(args, 0));
            Ok(Value::String(v.to_string()))
        }
        "path" => Ok(json_path(&body(), &arg_str(args, 0))),
        "params" if args.is_empty() => Ok(serde_json::json!({
            "path": input.path, "querystring": input.querystring, "header": input.header,
        })),
        "params" => {
            let name = arg_str(args, 0);
            let found = input
                .path
                .get(&name)
                .or_else(|| input.querystring.get(&name))
                .or_else(|| {
                    input
                        .header
                        .iter()
                        .find(|(k, _)| k.eq_ignore_ascii_case(&name))
                        .map(|(_, v)| v)
                });
            Ok(found.map_or(Value::String(String::new()), |v| Value::String(v.clone())))
        }
        other => Err(VtlError::Unsupported(format!("$input.{other}()"))),
    }
}

fn util_call(m: &str, args: &[Value]) -> Result<Value, VtlError> {
    let s = arg_str(args, 0);
    let b64 = base64::engine::general_purpose::STANDARD;
    Ok(Value::String(match m {
        "escapeJavaScript" => {
            let mut out = String::new();
            for c in s.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\'' => out.push_str("\\'"),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    '/' => out.push_str("\\/"),
                    c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
                    c => out.push(c),
                }
            }
            out
        }
        "urlEncode" => {
            const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
                .remove(b'-')
                .remove(b'_')
                .remove(b'.')
                .remove(b'*');
            percent_encoding::utf8_percent_encode(&s, SET)
                .to_string()
                .replace("%20", "+")
        }
        "urlDecode" => percent_encoding::percent_decode_str(&s.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned(),
        "base64Encode" => b64.encode(s.as_bytes()),
        "base64Decode" => b64
            .decode(s.as_bytes())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default(),
        "parseJson" => {
            return Ok(serde_json::from_str(&s).unwrap_or(Value::Null));
        }
        other => return Err(VtlError::Unsupported(format!("$util.{other}()"))),
    }))
}

fn method_call(v: &Value, m: &str, args: &[Value]) -> Result<Value, VtlError> {
    let text = || display(v);
    Ok(match (m, v) {
        ("size" | "length", Value::Array(a)) => Value::from(a.len()),
        ("size", Value::Object(o)) => Value::from(o.len()),
        ("size" | "length", Value::String(s)) => Value::from(s.chars().count()),
        ("isEmpty", Value::Array(a)) => Value::Bool(a.is_empty()),
        ("isEmpty", Value::Object(o)) => Value::Bool(o.is_empty()),
        ("isEmpty", Value::String(s)) => Value::Bool(s.is_empty()),
        ("keySet", Value::Object(o)) => o.keys().cloned().map(Value::String).collect(),
        ("values", Value::Object(o)) => o.values().cloned().collect(),
        ("entrySet", Value::Object(o)) => o
            .iter()
            .map(|(k, v)| serde_json::json!({"key": k, "value": v}))
            .collect(),
        ("get", Value::Object(o)) => o.get(&arg_str(args, 0)).cloned().unwrap_or(Value::Null),
        ("get", Value::Array(a)) => args
            .first()
            .and_then(Value::as_u64)
            .and_then(|i| a.get(i as usize).cloned())
            .unwrap_or(Value::Null),
        ("containsKey", Value::Object(o)) => Value::Bool(o.contains_key(&arg_str(args, 0))),
        ("contains", Value::Array(a)) => Value::Bool(args.first().is_some_and(|x| a.contains(x))),
        ("contains", _) => Value::Bool(text().contains(&arg_str(args, 0))),
        ("toString", _) => Value::String(text()),
        ("toLowerCase", _) => Value::String(text().to_lowercase()),
        ("toUpperCase", _) => Value::String(text().to_uppercase()),
        ("trim", _) => Value::String(text().trim().to_string()),
        ("startsWith", _) => Value::Bool(text().starts_with(&arg_str(args, 0))),
        ("endsWith", _) => Value::Bool(text().ends_with(&arg_str(args, 0))),
        ("equals", _) => Value::Bool(args.first() == Some(v) || arg_str(args, 0) == text()),
        ("replace" | "replaceAll", _) => {
            let from = arg_str(args, 0);
            let to = arg_str(args, 1);
            if m == "replaceAll" {
                match regex::Regex::new(&from) {
                    Ok(re) => Value::String(
                        re.replace_all(&text(), to.replace('$', "$$").as_str())
                            .into_owned(),
                    ),
                    Err(_) => Value::String(text()),
                }
            } else {
                Value::String(text().replace(&from, &to))
            }
        }
        ("split", _) => {
            let sep = arg_str(args, 0);
            match regex::Regex::new(&sep) {
                Ok(re) => re
                    .split(&text())
                    .map(|s| Value::String(s.to_string()))
                    .collect(),
                Err(_) => Value::Array(vec![Value::String(text())]),
            }
        }
        ("substring", _) => {
            let chars: Vec<char> = text().chars().collect();
            let a = args.first().and_then(Value::as_u64).unwrap_or(0) as usize;
            let b = args
                .get(1)
                .and_then(Value::as_u64)
                .map_or(chars.len(), |b| b as usize)
                .min(chars.len());
            Value::String(
                chars
                    .get(a.min(b)..b)
                    .map(|c| c.iter().collect())
                    .unwrap_or_default(),
            )
        }
        ("indexOf", _) => Value::from(
            text()
                .find(&arg_str(args, 0))
                .map_or(-1, |i| text()[..i].chars().count() as i64),
        ),
        (other, _) => return Err(VtlError::Unsupported(format!(".{other}()"))),
    })
}

/// A JSONPath of the forms templates use: `$`, `$.a.b`, `$['a']`, `$.a[0]`, `$.a[*].b`.
pub fn json_path(root: &Value, path: &str) -> Value {
    let path = path.trim();
    let Some(rest) = path.strip_prefix('$') else {
        return Value::Null;
    };
    let mut steps: Vec<String> = Vec::new();
    let chars: Vec<char> = rest.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                let start = i + 1;
                i += 1;
                while i < chars.len() && chars[i] != '.' && chars[i] != '[' {
                    i += 1;
                }
                steps.push(chars[start..i].iter().collect());
            }
            '[' => {
                let start = i + 1;
                while i < chars.len() && chars[i] != ']' {
                    i += 1;
                }
                let inner: String = chars[start..i.min(chars.len())].iter().collect();
                steps.push(inner.trim_matches(['\'', '"']).to_string());
                i += 1;
            }
            _ => i += 1,
        }
    }
    let mut current = vec![root.clone()];
    let mut wild = false;
    for step in steps {
        let mut next = Vec::new();
        for v in current {
            if step == "*" {
                wild = true;
                match v {
                    Value::Array(a) => next.extend(a),
                    Value::Object(o) => next.extend(o.into_iter().map(|(_, v)| v)),
                    _ => {}
                }
                continue;
            }
            let got = match &v {
                Value::Object(o) => o.get(&step).cloned(),
                Value::Array(a) => step.parse::<usize>().ok().and_then(|i| a.get(i).cloned()),
                _ => None,
            };
            if let Some(g) = got {
                next.push(g);
            }
        }
        current = next;
    }
    if wild {
        Value::Array(current)
    } else {
        current.into_iter().next().unwrap_or(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(body: &str) -> Env {
        let mut e = Env::default();
        e.input.body = body.to_string();
        e.input.path.insert("id".into(), "42".into());
        e.input.querystring.insert("q".into(), "a b".into());
        e.input.header.insert("X-Test".into(), "yes".into());
        e.vars.insert(
            "context".into(),
            json!({"requestId": "r1", "stage": "dev",
            "authorizer": {"principalId": "me"}}),
        );
        e.vars.insert("stageVariables".into(), json!({"v": "sv"}));
        e
    }

    #[test]
    fn input_util_and_context() {
        let mut e = env(r#"{"name": "Ann \"A\"", "items": [1, 2, 3], "n": {"x": 1}}"#);
        let t = r#"{"id": "$input.params('id')", "q": "$util.urlEncode($input.params('q'))", "h": "$input.params().header.get('X-Test')", "name": "$util.escapeJavaScript($input.path('$.name'))", "items": $input.json('$.items'), "first": $input.path('$.items')[0], "req": "$context.requestId", "sv": "$stageVariables.v", "p": "$context.authorizer.principalId", "b64": "$util.base64Encode('hi')"}"#;
        let out = render(t, &mut e).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            v,
            json!({"id": "42", "q": "a+b", "h": "yes", "name": "Ann \"A\"",
            "items": [1, 2, 3], "first": 1, "req": "r1", "sv": "sv", "p": "me", "b64": "aGk="})
        );
    }

    #[test]
    fn bean_properties_of_values() {
        let mut e = env("{}");
        let t = "#set($s = '')#if($s && !$s.empty)full#{else}empty#end #set($t = 'x')#if(!$t.empty)full#end$t.nothing";
        assert_eq!(render(t, &mut e).unwrap(), "empty full$t.nothing");
    }

    #[test]
    fn set_makes_a_property_path() {
        let mut e = env("{}");
        let t = "#set($context.requestOverride.header.X-Amz-Target = \"AWSEvents.PutEvents\")#set($context.responseOverride.status = 201)#set($a.b = 1)$a.b";
        assert_eq!(render(t, &mut e).unwrap(), "1");
        assert_eq!(
            e.vars["context"]["requestOverride"],
            json!({"header": {"X-Amz-Target": "AWSEvents.PutEvents"}})
        );
        assert_eq!(e.vars["context"]["responseOverride"]["status"], 201);
        assert_eq!(e.vars["context"]["requestId"], "r1");
    }

    #[test]
    fn directives() {
        let mut e = env(r#"{"items": [{"k": "a"}, {"k": "b"}], "flag": true}"#);
        let t = "#set($items = $input.path('$.items'))\n[#foreach($i in $items)\"$i.k\"#if($foreach.hasNext),#end#end]#if($input.path('$.flag') && $items.size() == 2) ok#elseif(false) no#else bad#end## comment\n#* block *#$!missing$missing";
        assert_eq!(render(t, &mut e).unwrap(), "[\"a\",\"b\"] ok\n$missing");
        let mut e = env("{}");
        assert_eq!(
            render(
                "#set($n = 2 + 3 * 4)$n #foreach($x in [1..3])$x#end",
                &mut e
            )
            .unwrap(),
            "14 123"
        );
        assert_eq!(
            render("#set($m = {\"a\": 1})$m.a $m", &mut e).unwrap(),
            "1 {a=1}"
        );
    }

    #[test]
    fn unsupported_is_named() {
        let mut e = env("{}");
        let err = render("$util.appendToList($x)", &mut e).unwrap_err();
        assert_eq!(err, VtlError::Unsupported("$util.appendToList()".into()));
        assert!(err.to_string().contains("$util.appendToList()"));
        assert!(matches!(
            render("#macro(x)#end", &mut e),
            Err(VtlError::Unsupported(_))
        ));
        assert!(matches!(
            render("#if(true) open", &mut e),
            Err(VtlError::Syntax(_))
        ));
        let deep = format!("#set($x = {}1{})", "(".repeat(5000), ")".repeat(5000));
        assert!(matches!(render(&deep, &mut e), Err(VtlError::Syntax(_))));
        let deep = format!("#set($x = {}true)", "!".repeat(5000));
        assert!(matches!(render(&deep, &mut e), Err(VtlError::Syntax(_))));
        let deep = "#if(true)".repeat(5000);
        assert!(matches!(render(&deep, &mut e), Err(VtlError::Syntax(_))));
    }

    #[test]
    fn json_paths() {
        let v = json!({"a": {"b": [1, {"c": 2}]}, "k-1": 3});
        assert_eq!(json_path(&v, "$"), v);
        assert_eq!(json_path(&v, "$.a.b[1].c"), json!(2));
        assert_eq!(json_path(&v, "$['k-1']"), json!(3));
        assert_eq!(json_path(&v, "$.a.b[*]"), json!([1, {"c": 2}]));
        assert_eq!(json_path(&v, "$.nope"), Value::Null);
    }
}
