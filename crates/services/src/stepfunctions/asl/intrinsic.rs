//! The intrinsic functions (`States.Format('{}', $.x)`, ...) of `.$` fields, parsed and
//! evaluated. A failure is `States.IntrinsicFailure` (the Runtime caller names it).

use super::path;
use base64::Engine as _;
use serde_json::{Map, Value, json};

#[derive(Debug, Clone)]
enum Arg {
    Lit(Value),
    Path(String),
    Context(String),
    Call(String, Vec<Arg>),
}

struct Parser<'a> {
    s: &'a [u8],
    text: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }

    fn call(&mut self) -> Result<Arg, String> {
        self.ws();
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || self.s[self.i] == b'.')
        {
            self.i += 1;
        }
        let name = self.text[start..self.i].to_string();
        self.ws();
        if self.s.get(self.i) != Some(&b'(') {
            return Err(format!("expected '(' after {name}"));
        }
        self.i += 1;
        let mut args = Vec::new();
        loop {
            self.ws();
            if self.s.get(self.i) == Some(&b')') {
                self.i += 1;
                break;
            }
            args.push(self.arg()?);
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b')') => {
                    self.i += 1;
                    break;
                }
                _ => return Err("expected ',' or ')'".into()),
            }
        }
        Ok(Arg::Call(name, args))
    }

    fn arg(&mut self) -> Result<Arg, String> {
        self.ws();
        match self.s.get(self.i) {
            Some(b'\'') => {
                self.i += 1;
                let mut out = String::new();
                let mut chars = self.text[self.i..].char_indices();
                loop {
                    let Some((k, c)) = chars.next() else {
                        return Err("unterminated string".into());
                    };
                    match c {
                        '\\' => {
                            if let Some((_, e)) = chars.next() {
                                if matches!(e, '{' | '}') {
                                    out.push('\\');
                                }
                                out.push(e);
                            }
                        }
                        '\'' => {
                            self.i += k + 1;
                            return Ok(Arg::Lit(Value::String(out)));
                        }
                        c => out.push(c),
                    }
                }
            }
            Some(b'$') => {
                let start = self.i;
                let mut depth = 0i32;
                let mut quote = false;
                while self.i < self.s.len() {
                    let c = self.s[self.i];
                    match c {
                        b'\'' => quote = !quote,
                        b'[' | b'(' if !quote => depth += 1,
                        b']' | b')' if !quote && depth > 0 => depth -= 1,
                        b',' | b')' if !quote && depth == 0 => break,
                        _ => {}
                    }
                    self.i += 1;
                }
                let p = self.text[start..self.i].trim().to_string();
                Ok(match p.strip_prefix("$$") {
                    Some(rest) => Arg::Context(format!("${rest}")),
                    None => Arg::Path(p),
                })
            }
            Some(c) if c.is_ascii_alphabetic() && self.text[self.i..].starts_with("States.") => {
                self.call()
            }
            _ => {
                let start = self.i;
                while self.i < self.s.len() && !matches!(self.s[self.i], b',' | b')') {
                    self.i += 1;
                }
                let lit = self.text[start..self.i].trim();
                serde_json::from_str(lit)
                    .map(Arg::Lit)
                    .map_err(|_| format!("invalid argument {lit}"))
            }
        }
    }
}

/// Whether a `.$` value is an intrinsic call rather than a path.
pub fn is_call(text: &str) -> bool {
    text.trim_start().starts_with("States.")
}

/// Evaluates an intrinsic call against the state's input and the context object.
pub fn eval(text: &str, input: &Value, context: &Value) -> Result<Value, String> {
    let mut p = Parser {
        s: text.as_bytes(),
        text,
        i: 0,
    };
    let call = p.call()?;
    p.ws();
    if p.i != text.len() {
        return Err(format!("unexpected text after the call in {text}"));
    }
    value(&call, input, context)
}

fn value(a: &Arg, input: &Value, ctx: &Value) -> Result<Value, String> {
    match a {
        Arg::Lit(v) => Ok(v.clone()),
        Arg::Path(p) => super::data::lookup(p, input, ctx)?
            .ok_or_else(|| format!("The JsonPath argument for the field '{p}' could not be found in the input")),
        Arg::Context(p) => path::get(p, ctx)?
            .ok_or_else(|| format!("The JsonPath argument for the field '${p}' could not be found in the context object")),
        Arg::Call(name, args) => {
            let vals = args
                .iter()
                .map(|x| value(x, input, ctx))
                .collect::<Result<Vec<_>, _>>()?;
            call(name, vals)
        }
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

fn arity(name: &str, a: &[Value], n: usize) -> Result<(), String> {
    if a.len() == n {
        Ok(())
    } else {
        Err(format!(
            "Function {name} expects {n} argument(s), received {}",
            a.len()
        ))
    }
}

fn num(v: &Value) -> Result<f64, String> {
    v.as_f64().ok_or_else(|| format!("{v} is not a number"))
}

fn int(v: &Value) -> Result<i64, String> {
    v.as_i64()
        .or_else(|| v.as_f64().filter(|f| f.fract() == 0.0).map(|f| f as i64))
        .ok_or_else(|| format!("{v} is not an integer"))
}

fn str_arg(v: &Value) -> Result<&str, String> {
    v.as_str().ok_or_else(|| format!("{v} is not a string"))
}

fn arr(v: &Value) -> Result<&Vec<Value>, String> {
    v.as_array().ok_or_else(|| format!("{v} is not an array"))
}

fn merge(a: &mut Map<String, Value>, b: &Map<String, Value>, deep: bool) {
    for (k, v) in b {
        match (a.get_mut(k), v) {
            (Some(Value::Object(x)), Value::Object(y)) if deep => merge(x, y, true),
            _ => {
                a.insert(k.clone(), v.clone());
            }
        }
    }
}

fn call(name: &str, a: Vec<Value>) -> Result<Value, String> {
    Ok(match name {
        "States.Format" => {
            let fmt = str_arg(a.first().ok_or("States.Format needs a template")?)?;
            let mut out = String::new();
            let mut rest = a[1..].iter();
            let mut chars = fmt.chars().peekable();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => out.extend(chars.next()),
                    '{' if chars.peek() == Some(&'}') => {
                        chars.next();
                        out.push_str(&text_of(rest.next().ok_or(
                            "Number of arguments in the format string does not match the number of arguments given",
                        )?));
                    }
                    c => out.push(c),
                }
            }
            json!(out)
        }
        "States.StringToJson" => {
            arity(name, &a, 1)?;
            serde_json::from_str(str_arg(&a[0])?).map_err(|e| e.to_string())?
        }
        "States.JsonToString" => {
            arity(name, &a, 1)?;
            json!(a[0].to_string())
        }
        "States.Array" => Value::Array(a),
        "States.ArrayPartition" => {
            arity(name, &a, 2)?;
            let size = int(&a[1])?;
            if size <= 0 {
                return Err("The chunk size must be greater than 0".into());
            }
            json!(
                arr(&a[0])?
                    .chunks(size as usize)
                    .map(|c| c.to_vec())
                    .collect::<Vec<_>>()
            )
        }
        "States.ArrayContains" => {
            arity(name, &a, 2)?;
            json!(arr(&a[0])?.contains(&a[1]))
        }
        "States.ArrayRange" => {
            arity(name, &a, 3)?;
            let (s, e, step) = (int(&a[0])?, int(&a[1])?, int(&a[2])?);
            if step == 0 {
                return Err("The step must not be 0".into());
            }
            let mut out = Vec::new();
            let mut x = s;
            while (step > 0 && x <= e) || (step < 0 && x >= e) {
                out.push(json!(x));
                if out.len() > 1000 {
                    return Err("The array range exceeds the maximum length of 1000".into());
                }
                x += step;
            }
            Value::Array(out)
        }
        "States.ArrayGetItem" => {
            arity(name, &a, 2)?;
            let i = int(&a[1])?;
            arr(&a[0])?
                .get(usize::try_from(i).map_err(|_| "negative index")?)
                .cloned()
                .ok_or_else(|| format!("Index {i} out of bounds"))?
        }
        "States.ArrayLength" => {
            arity(name, &a, 1)?;
            json!(arr(&a[0])?.len())
        }
        "States.ArrayUnique" => {
            arity(name, &a, 1)?;
            let mut out: Vec<Value> = Vec::new();
            for v in arr(&a[0])? {
                if !out.contains(v) {
                    out.push(v.clone());
                }
            }
            Value::Array(out)
        }
        "States.Base64Encode" => {
            arity(name, &a, 1)?;
            json!(base64::engine::general_purpose::STANDARD.encode(str_arg(&a[0])?))
        }
        "States.Base64Decode" => {
            arity(name, &a, 1)?;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(str_arg(&a[0])?)
                .map_err(|e| e.to_string())?;
            json!(String::from_utf8_lossy(&bytes))
        }
        "States.Hash" => {
            arity(name, &a, 2)?;
            json!(hash(&text_of(&a[0]), str_arg(&a[1])?)?)
        }
        "States.JsonMerge" => {
            arity(name, &a, 3)?;
            if a[2] != json!(false) {
                return Err("States.JsonMerge supports only a shallow merge (false)".into());
            }
            let (Value::Object(x), Value::Object(y)) = (&a[0], &a[1]) else {
                return Err("States.JsonMerge merges two objects".into());
            };
            let mut x = x.clone();
            merge(&mut x, y, false);
            Value::Object(x)
        }
        "States.MathRandom" => {
            if a.len() < 2 {
                return Err("States.MathRandom takes a start and an end".into());
            }
            let (s, e) = (int(&a[0])?, int(&a[1])?);
            if s >= e {
                return Err("The start must be less than the end".into());
            }
            json!(rand::Rng::random_range(&mut rand::rng(), s..e))
        }
        "States.MathAdd" => {
            arity(name, &a, 2)?;
            let (x, y) = (num(&a[0])?, num(&a[1])?);
            if x.fract() == 0.0 && y.fract() == 0.0 {
                json!((x + y) as i64)
            } else {
                json!(x + y)
            }
        }
        "States.StringSplit" => {
            arity(name, &a, 2)?;
            let s = str_arg(&a[0])?;
            let d: Vec<char> = str_arg(&a[1])?.chars().collect();
            json!(
                s.split(|c| d.contains(&c))
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
            )
        }
        "States.UUID" => json!(uuid::Uuid::new_v4().to_string()),
        other => return Err(format!("Unknown intrinsic function {other}")),
    })
}

/// The hex digest of `data` with one of AWS's algorithms (States.Hash and JSONata's `$hash`).
pub fn hash(data: &str, algorithm: &str) -> Result<String, String> {
    use sha2::Digest;
    let data = data.as_bytes();
    Ok(match algorithm {
        "MD5" => hex::encode(md5::Md5::digest(data)),
        "SHA-1" => hex::encode(sha1::Sha1::digest(data)),
        "SHA-256" => hex::encode(sha2::Sha256::digest(data)),
        "SHA-384" => hex::encode(sha2::Sha384::digest(data)),
        "SHA-512" => hex::encode(sha2::Sha512::digest(data)),
        other => {
            return Err(format!(
                "The hash algorithm {other} is not supported. Supported: MD5, SHA-1, SHA-256, SHA-384, SHA-512"
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(s: &str, input: Value) -> Value {
        eval(s, &input, &json!({"Execution": {"Name": "n"}})).unwrap()
    }

    #[test]
    fn evaluates_the_intrinsics() {
        assert_eq!(
            ev(
                "States.Format('Hi {} from {}', $.a, $$.Execution.Name)",
                json!({"a": "x"})
            ),
            json!("Hi x from n")
        );
        assert_eq!(
            ev("States.StringToJson($.s)", json!({"s": "{\"a\":1}"})),
            json!({"a": 1})
        );
        assert_eq!(
            ev("States.JsonToString($.o)", json!({"o": {"a": 1}})),
            json!("{\"a\":1}")
        );
        assert_eq!(
            ev("States.Array(1, 'a', $.x)", json!({"x": true})),
            json!([1, "a", true])
        );
        assert_eq!(
            ev("States.ArrayPartition($.a, 2)", json!({"a": [1, 2, 3]})),
            json!([[1, 2], [3]])
        );
        assert_eq!(
            ev("States.ArrayContains($.a, 2)", json!({"a": [1, 2]})),
            json!(true)
        );
        assert_eq!(
            ev("States.ArrayRange(1, 9, 2)", json!({})),
            json!([1, 3, 5, 7, 9])
        );
        assert_eq!(
            ev("States.ArrayGetItem($.a, 1)", json!({"a": [1, 2]})),
            json!(2)
        );
        assert_eq!(
            ev("States.ArrayLength($.a)", json!({"a": [1, 2]})),
            json!(2)
        );
        assert_eq!(
            ev("States.ArrayUnique($.a)", json!({"a": [1, 1, 2]})),
            json!([1, 2])
        );
        assert_eq!(
            ev("States.Base64Encode('Data to encode')", json!({})),
            json!("RGF0YSB0byBlbmNvZGU=")
        );
        assert_eq!(
            ev("States.Base64Decode('RGF0YSB0byBlbmNvZGU=')", json!({})),
            json!("Data to encode")
        );
        assert_eq!(
            ev("States.Hash('input data', 'SHA-1')", json!({})),
            json!("aaff4a450a104cd177d28d18d74485e8cae074b7")
        );
        assert_eq!(
            ev(
                "States.JsonMerge($.a, $.b, false)",
                json!({"a": {"x": 1, "y": {"p": 1}}, "b": {"y": {"q": 2}}})
            ),
            json!({"x": 1, "y": {"q": 2}})
        );
        assert_eq!(ev("States.MathAdd(111, -1)", json!({})), json!(110));
        assert_eq!(
            ev("States.StringSplit('1,2,3', ',')", json!({})),
            json!(["1", "2", "3"])
        );
        assert_eq!(
            ev("States.ArrayLength(States.Array(1, 2))", json!({})),
            json!(2)
        );
        let r = ev("States.MathRandom(1, 5)", json!({})).as_i64().unwrap();
        assert!((1..5).contains(&r));
        assert_eq!(ev("States.UUID()", json!({})).as_str().unwrap().len(), 36);
    }
}
