//! Metric math: the expressions of GetMetricData queries and metric-math alarms. Supported:
//! numbers, query ids, `+ - * /` and `^` with precedence and parentheses, unary minus, arrays
//! `[a, b]`, and the functions `SUM AVG MIN MAX` (of an array: per timestamp; of one series: a
//! scalar), `ABS CEIL FLOOR SQRT`, `FILL(series, value)` (over the periods asked for) and `METRICS()`/`METRICS("filter")`
//! (every MetricStat query, or those whose id or label contains the filter). Series arithmetic
//! is per timestamp, over the timestamps both sides have.

use super::metrics::Series;
use std::collections::BTreeMap;

/// A value an expression yields.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Scalar(f64),
    Series(Series),
    Array(Vec<Series>),
}

/// What expressions see: each query id's series, and which ids are metric queries (with
/// labels) for `METRICS()`.
pub struct Env<'a> {
    pub series: &'a BTreeMap<String, Series>,
    pub metric_ids: &'a [(String, String)],
    /// The periods asked for, `(start, end, period)`, where FILL fills gaps.
    pub grid: (i64, i64, i64),
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Ident(String),
    Str(String),
    Op(char),
}

fn tokens(text: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            let s: String = chars[start..i].iter().collect();
            out.push(Tok::Num(
                s.parse().map_err(|_| format!("Invalid number {s}"))?,
            ));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        } else if c == '"' || c == '\'' {
            let start = i + 1;
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += 1;
            }
            if i >= chars.len() {
                return Err("Unterminated string".into());
            }
            out.push(Tok::Str(chars[start..i].iter().collect()));
            i += 1;
        } else if "+-*/^(),[]".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else {
            return Err(format!("Unexpected character '{c}'"));
        }
    }
    Ok(out)
}

struct Parser<'e, 'a> {
    toks: Vec<Tok>,
    pos: usize,
    env: &'e Env<'a>,
}

/// Evaluates `expression` over `env`.
pub fn evaluate(expression: &str, env: &Env<'_>) -> Result<Val, String> {
    let mut p = Parser {
        toks: tokens(expression)?,
        pos: 0,
        env,
    };
    let v = p.sum()?;
    if p.pos != p.toks.len() {
        return Err(format!("Unexpected token at position {}", p.pos + 1));
    }
    Ok(v)
}

impl Parser<'_, '_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Op(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(format!("Expected '{c}'"))
        }
    }

    fn sum(&mut self) -> Result<Val, String> {
        let mut v = self.product()?;
        loop {
            if self.eat('+') {
                v = binary(v, self.product()?, &|a, b| a + b)?;
            } else if self.eat('-') {
                v = binary(v, self.product()?, &|a, b| a - b)?;
            } else {
                return Ok(v);
            }
        }
    }

    fn product(&mut self) -> Result<Val, String> {
        let mut v = self.power()?;
        loop {
            if self.eat('*') {
                v = binary(v, self.power()?, &|a, b| a * b)?;
            } else if self.eat('/') {
                v = binary(v, self.power()?, &|a, b| a / b)?;
            } else {
                return Ok(v);
            }
        }
    }

    fn power(&mut self) -> Result<Val, String> {
        let base = self.unary()?;
        if self.eat('^') {
            let exp = self.power()?;
            return binary(base, exp, &f64::powf);
        }
        Ok(base)
    }

    fn unary(&mut self) -> Result<Val, String> {
        if self.eat('-') {
            return binary(Val::Scalar(0.0), self.unary()?, &|a, b| a - b);
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Val, String> {
        match self.toks.get(self.pos).cloned() {
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Ok(Val::Scalar(n))
            }
            Some(Tok::Op('(')) => {
                self.pos += 1;
                let v = self.sum()?;
                self.expect(')')?;
                Ok(v)
            }
            Some(Tok::Op('[')) => {
                self.pos += 1;
                let mut items = Vec::new();
                if !self.eat(']') {
                    loop {
                        flatten_into(self.sum()?, &mut items)?;
                        if self.eat(']') {
                            break;
                        }
                        self.expect(',')?;
                    }
                }
                Ok(Val::Array(items))
            }
            Some(Tok::Ident(name)) => {
                self.pos += 1;
                if self.eat('(') {
                    let mut args = Vec::new();
                    if !self.eat(')') {
                        loop {
                            args.push(match self.peek().cloned() {
                                Some(Tok::Str(s)) => {
                                    self.pos += 1;
                                    Arg::Text(s)
                                }
                                _ => Arg::Val(self.sum()?),
                            });
                            if self.eat(')') {
                                break;
                            }
                            self.expect(',')?;
                        }
                    }
                    return self.call(&name, args);
                }
                self.env
                    .series
                    .get(&name)
                    .cloned()
                    .map(Val::Series)
                    .ok_or_else(|| format!("Unrecognized identifier {name}"))
            }
            Some(t) => Err(format!("Unexpected token {t:?}")),
            None => Err("Unexpected end of expression".into()),
        }
    }

    fn call(&self, name: &str, args: Vec<Arg>) -> Result<Val, String> {
        let upper = name.to_ascii_uppercase();
        let one = |args: &[Arg]| match args {
            [Arg::Val(v)] => Ok(v.clone()),
            _ => Err(format!("{upper} takes one argument")),
        };
        match upper.as_str() {
            "METRICS" => {
                let filter = match args.as_slice() {
                    [] => None,
                    [Arg::Text(f)] => Some(f.clone()),
                    _ => return Err("METRICS takes an optional string filter".into()),
                };
                Ok(Val::Array(
                    self.env
                        .metric_ids
                        .iter()
                        .filter(|(id, label)| {
                            filter
                                .as_deref()
                                .is_none_or(|f| id.contains(f) || label.contains(f))
                        })
                        .filter_map(|(id, _)| self.env.series.get(id).cloned())
                        .collect(),
                ))
            }
            "SUM" | "AVG" | "MIN" | "MAX" => reduce(&upper, one(&args)?),
            "ABS" => map(one(&args)?, f64::abs),
            "CEIL" => map(one(&args)?, f64::ceil),
            "FLOOR" => map(one(&args)?, f64::floor),
            "SQRT" => map(one(&args)?, f64::sqrt),
            "FILL" => match args.as_slice() {
                [Arg::Val(v), Arg::Val(Val::Scalar(fill))] => {
                    Ok(fill_gaps(v.clone(), *fill, self.env.grid))
                }
                _ => Err("FILL takes a time series and a number".into()),
            },
            _ => Err(format!("Unrecognized function {name}")),
        }
    }
}

enum Arg {
    Val(Val),
    Text(String),
}

fn flatten_into(v: Val, items: &mut Vec<Series>) -> Result<(), String> {
    match v {
        Val::Series(s) => items.push(s),
        Val::Array(a) => items.extend(a),
        Val::Scalar(_) => return Err("An array holds time series, not numbers".into()),
    }
    Ok(())
}

fn binary(a: Val, b: Val, f: &dyn Fn(f64, f64) -> f64) -> Result<Val, String> {
    Ok(match (a, b) {
        (Val::Scalar(x), Val::Scalar(y)) => Val::Scalar(f(x, y)),
        (Val::Series(s), Val::Scalar(y)) => {
            Val::Series(s.into_iter().map(|(t, x)| (t, f(x, y))).collect())
        }
        (Val::Scalar(x), Val::Series(s)) => {
            Val::Series(s.into_iter().map(|(t, y)| (t, f(x, y))).collect())
        }
        (Val::Series(s), Val::Series(r)) => Val::Series(
            s.into_iter()
                .filter_map(|(t, x)| r.get(&t).map(|y| (t, f(x, *y))))
                .collect(),
        ),
        (Val::Array(a), other) => Val::Array(
            a.into_iter()
                .map(|s| match binary(Val::Series(s), other.clone(), f) {
                    Ok(Val::Series(s)) => s,
                    _ => Series::new(),
                })
                .collect(),
        ),
        (other, Val::Array(a)) => Val::Array(
            a.into_iter()
                .map(|s| match binary(other.clone(), Val::Series(s), f) {
                    Ok(Val::Series(s)) => s,
                    _ => Series::new(),
                })
                .collect(),
        ),
    })
}

fn map(v: Val, f: fn(f64) -> f64) -> Result<Val, String> {
    binary(v, Val::Scalar(0.0), &|x, _| f(x))
}

fn fold(name: &str, values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(match name {
        "SUM" => values.iter().sum(),
        "AVG" => values.iter().sum::<f64>() / values.len() as f64,
        "MIN" => values.iter().copied().fold(f64::INFINITY, f64::min),
        _ => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    })
}

fn reduce(name: &str, v: Val) -> Result<Val, String> {
    match v {
        Val::Array(series) => {
            let mut by_time: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
            for s in &series {
                for (t, x) in s {
                    by_time.entry(*t).or_default().push(*x);
                }
            }
            Ok(Val::Series(
                by_time
                    .into_iter()
                    .filter_map(|(t, xs)| fold(name, &xs).map(|x| (t, x)))
                    .collect(),
            ))
        }
        Val::Series(s) => {
            let xs: Vec<f64> = s.values().copied().collect();
            Ok(fold(name, &xs).map_or(Val::Series(Series::new()), Val::Scalar))
        }
        Val::Scalar(x) => Ok(Val::Scalar(x)),
    }
}

fn fill_gaps(v: Val, fill: f64, (start, end, period): (i64, i64, i64)) -> Val {
    let grid = |mut s: Series| {
        let mut t = start;
        while t < end && period > 0 {
            s.entry(t).or_insert(fill);
            t += period;
        }
        s
    };
    match v {
        Val::Series(s) => Val::Series(grid(s)),
        Val::Array(a) => Val::Array(a.into_iter().map(grid).collect()),
        scalar => scalar,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(series: &BTreeMap<String, Series>) -> Val {
        let ids: Vec<(String, String)> = series.keys().map(|k| (k.clone(), k.clone())).collect();
        let env = Env {
            series,
            metric_ids: &ids,
            grid: (0, 180, 60),
        };
        evaluate("SUM(METRICS())", &env).unwrap()
    }

    #[test]
    fn arithmetic_and_functions_over_series() {
        let series = BTreeMap::from([
            ("m1".to_string(), Series::from([(0, 1.0), (60, 2.0)])),
            (
                "m2".to_string(),
                Series::from([(0, 10.0), (60, 20.0), (120, 5.0)]),
            ),
        ]);
        let ids = vec![
            ("m1".to_string(), "A".to_string()),
            ("m2".to_string(), "B".to_string()),
        ];
        let env = Env {
            series: &series,
            metric_ids: &ids,
            grid: (0, 180, 60),
        };
        let ev = |e: &str| evaluate(e, &env);
        assert_eq!(
            ev("m1 + m2").unwrap(),
            Val::Series(Series::from([(0, 11.0), (60, 22.0)]))
        );
        assert_eq!(
            ev("2 * m1 + 1").unwrap(),
            Val::Series(Series::from([(0, 3.0), (60, 5.0)]))
        );
        assert_eq!(ev("(1 + 2) * 3 - 2 ^ 2").unwrap(), Val::Scalar(5.0));
        assert_eq!(
            ev("-m1").unwrap(),
            Val::Series(Series::from([(0, -1.0), (60, -2.0)]))
        );
        assert_eq!(
            ev("SUM([m1, m2])").unwrap(),
            Val::Series(Series::from([(0, 11.0), (60, 22.0), (120, 5.0)]))
        );
        assert_eq!(
            ev("AVG(METRICS())").unwrap(),
            Val::Series(Series::from([(0, 5.5), (60, 11.0), (120, 5.0)]))
        );
        assert_eq!(
            ev("MAX(METRICS(\"B\"))").unwrap(),
            Val::Series(series["m2"].clone())
        );
        assert_eq!(ev("SUM(m2)").unwrap(), Val::Scalar(35.0));
        assert_eq!(ev("MIN(m2)").unwrap(), Val::Scalar(5.0));
        assert_eq!(
            ev("m2 / m1").unwrap(),
            Val::Series(Series::from([(0, 10.0), (60, 10.0)]))
        );
        assert!(ev("m3 + 1").unwrap_err().contains("m3"));
        assert!(ev("FOO(m1)").unwrap_err().contains("FOO"));
        assert!(ev("m1 +").is_err());
        assert!(ev("(m1").is_err());
        assert_eq!(
            ev("FILL(m1, 0)").unwrap(),
            Val::Series(Series::from([(0, 1.0), (60, 2.0), (120, 0.0)]))
        );
        assert_eq!(
            env_of(&series),
            Val::Series(Series::from([(0, 11.0), (60, 22.0), (120, 5.0)]))
        );
    }
}
