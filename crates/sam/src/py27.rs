//! The translator's emulation of Python 2.7 values (`samtranslator.utils.py27hash_fix`), which
//! a REST API's Deployment logical id depends on: the id hashes `str(swagger)`, and that text
//! follows Python 2.7's dict iteration order (a hash table's slot order, which depends on the
//! keys' Python 2 string hashes and on every insert, delete and copy the translator made) and
//! marks the strings that came from the template as unicode (`u'...'`).
//!
//! A [`Py`] value is JSON plus that history: each [`Dict`] is either a `Py27Dict` (its slots
//! kept as the translator's `Py27Keys` keeps them) or a plain Python 3 dict (insertion order),
//! and each string knows whether it is a `Py27UniStr`.

use serde_json::{Map, Value};
use std::collections::BTreeMap;

const MINSIZE: usize = 8;
const PERTURB_SHIFT: u32 = 5;

#[derive(Debug, Clone, PartialEq)]
pub enum Py {
    None,
    Bool(bool),
    Num(serde_json::Number),
    /// A string, and whether it is a `Py27UniStr` (it came from the template).
    Str(String, bool),
    List(Vec<Py>),
    Dict(Dict),
}

/// A dict: its values by key (with each key's unicode mark) and, for a `Py27Dict`, its slots.
#[derive(Debug, Clone, PartialEq)]
pub struct Dict {
    values: Vec<(String, bool, Py)>,
    keys: Option<Keys>,
}

/// `Py27Keys`: the slot each key occupies in Python 2.7's open-addressing table.
#[derive(Debug, Clone, PartialEq)]
struct Keys {
    slots: BTreeMap<usize, Option<String>>,
    size: usize,
    fill: usize,
    mask: usize,
}

/// Python 2.7's string hash (`string_hash`), as the translator's `Hash.shash` computes it.
fn shash(s: &str) -> u64 {
    let chars: Vec<u32> = s.chars().map(u32::from).collect();
    let Some(first) = chars.first() else {
        return 0;
    };
    let mut x: u64 = u64::from(*first) << 7;
    for c in &chars {
        x = x.wrapping_mul(1_000_003) ^ u64::from(*c);
    }
    x ^ chars.len() as u64
}

impl Keys {
    fn new() -> Keys {
        Keys {
            slots: BTreeMap::new(),
            size: 0,
            fill: 0,
            mask: MINSIZE - 1,
        }
    }

    fn is_key(&self, i: usize, k: &str) -> bool {
        matches!(self.slots.get(&i), Some(Some(s)) if s == k)
    }

    fn is_dummy(&self, i: usize) -> bool {
        matches!(self.slots.get(&i), Some(None))
    }

    fn index(&self, k: &str) -> usize {
        let h = shash(k);
        let mask = self.mask as u64;
        let mut i = (h & mask) as usize;
        if !self.slots.contains_key(&i) || self.is_key(i, k) {
            return i;
        }
        let mut freeslot = if self.is_dummy(i) { Some(i) } else { None };
        let mut walker = h;
        let mut perturb = h;
        while self.slots.contains_key(&i) && !self.is_key(i, k) {
            walker = (walker << 2)
                .wrapping_add(walker)
                .wrapping_add(perturb)
                .wrapping_add(1);
            i = (walker & mask) as usize;
            if !self.slots.contains_key(&i) {
                return freeslot.unwrap_or(i);
            }
            if self.is_key(i, k) {
                return i;
            }
            if freeslot.is_none() && self.is_dummy(i) {
                freeslot = Some(i);
            }
            perturb >>= PERTURB_SHIFT;
        }
        i
    }

    fn resize(&mut self, request: usize) {
        let mut newsize = MINSIZE;
        while newsize <= request {
            newsize <<= 1;
        }
        self.mask = newsize - 1;
        let old = std::mem::take(&mut self.slots);
        self.fill = 0;
        self.size = 0;
        for k in old.into_values().flatten() {
            self.add(&k);
        }
    }

    fn add(&mut self, k: &str) {
        let start = self.size;
        let i = self.index(k);
        match self.slots.get(&i) {
            None => {
                self.size += 1;
                self.fill += 1;
                self.slots.insert(i, Some(k.to_string()));
            }
            Some(slot) => {
                if slot.is_none() {
                    self.size += 1;
                }
                if slot.as_deref() != Some(k) {
                    self.slots.insert(i, Some(k.to_string()));
                }
            }
        }
        if self.size > start && self.fill * 3 >= (self.mask + 1) * 2 {
            let factor = if self.size > 50_000 { 2 } else { 4 };
            self.resize(self.size * factor);
        }
    }

    fn remove(&mut self, k: &str) {
        let i = self.index(k);
        if matches!(self.slots.get(&i), Some(Some(_))) {
            self.slots.insert(i, None);
            self.size -= 1;
        }
    }

    /// `PyDict_Merge`'s sizing, then every key added.
    fn merge(&mut self, other: &[String]) {
        if other.is_empty() {
            return;
        }
        if (self.fill + other.len()) * 3 >= (self.mask + 1) * 2 {
            self.resize((self.size + other.len()) * 2);
        }
        for k in other {
            self.add(k);
        }
    }

    fn order(&self) -> Vec<String> {
        self.slots.values().flatten().cloned().collect()
    }
}

impl Dict {
    /// An empty `Py27Dict()`.
    pub fn py27() -> Dict {
        Dict {
            values: Vec::new(),
            keys: Some(Keys::new()),
        }
    }

    /// An empty plain Python 3 dict.
    pub fn plain() -> Dict {
        Dict {
            values: Vec::new(),
            keys: None,
        }
    }

    fn position(&self, k: &str) -> Option<usize> {
        self.values.iter().position(|(key, _, _)| key == k)
    }

    pub fn get(&self, k: &str) -> Option<&Py> {
        self.position(k).map(|i| &self.values[i].2)
    }

    pub fn get_mut(&mut self, k: &str) -> Option<&mut Py> {
        self.position(k).map(|i| &mut self.values[i].2)
    }

    pub fn contains(&self, k: &str) -> bool {
        self.position(k).is_some()
    }

    /// `d[k] = v` (the key a plain `str` unless `uni`).
    pub fn set(&mut self, k: &str, uni: bool, v: Py) {
        match self.position(k) {
            Some(i) => self.values[i].2 = v,
            None => self.values.push((k.to_string(), uni, v)),
        }
        if let Some(keys) = &mut self.keys {
            keys.add(k);
        }
    }

    /// `d.setdefault(k, v)`, answering the value now at `k`.
    pub fn setdefault(&mut self, k: &str, uni: bool, v: Py) -> &mut Py {
        if !self.contains(k) {
            self.set(k, uni, v);
        }
        let i = self.position(k).unwrap_or_default();
        &mut self.values[i].2
    }

    /// `del d[k]` / `d.pop(k)`.
    pub fn remove(&mut self, k: &str) -> Option<Py> {
        let i = self.position(k)?;
        let (_, _, v) = self.values.remove(i);
        if let Some(keys) = &mut self.keys {
            keys.remove(k);
        }
        Some(v)
    }

    /// `Py27Dict(other)` / `d.update(other)` with `other` a dict: its keys merged, then set.
    pub fn update(&mut self, other: Vec<(String, bool, Py)>) {
        if let Some(keys) = &mut self.keys {
            let names: Vec<String> = other.iter().map(|(k, _, _)| k.clone()).collect();
            keys.merge(&names);
        }
        for (k, uni, v) in other {
            self.set(&k, uni, v);
        }
    }

    /// The keys in iteration order.
    pub fn keys(&self) -> Vec<String> {
        match &self.keys {
            Some(keys) => keys.order(),
            None => self.values.iter().map(|(k, _, _)| k.clone()).collect(),
        }
    }

    fn entry(&self, k: &str) -> Option<&(String, bool, Py)> {
        self.values.iter().find(|(key, _, _)| key == k)
    }

    /// The entries in iteration order.
    pub fn items(&self) -> Vec<(String, bool, Py)> {
        self.keys()
            .iter()
            .filter_map(|k| self.entry(k).cloned())
            .collect()
    }

    /// `copy.deepcopy`: a `Py27Dict`'s keys re-added in its order into a fresh table.
    pub fn deepcopy(&self) -> Dict {
        let mut out = Dict {
            values: self
                .values
                .iter()
                .map(|(k, u, v)| (k.clone(), *u, v.deepcopy()))
                .collect(),
            keys: None,
        };
        if let Some(keys) = &self.keys {
            let mut fresh = Keys::new();
            for k in keys.order() {
                fresh.add(&k);
            }
            out.keys = Some(fresh);
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

impl Py {
    pub fn str(s: &str) -> Py {
        Py::Str(s.to_string(), false)
    }

    pub fn uni(s: &str) -> Py {
        Py::Str(s.to_string(), true)
    }

    /// `_convert_to_py27_type`: the template's JSON as the translator holds it (every string a
    /// `Py27UniStr`, every object a `Py27Dict` filled in the template's order).
    pub fn from_template(v: &Value) -> Py {
        match v {
            Value::Null => Py::None,
            Value::Bool(b) => Py::Bool(*b),
            Value::Number(n) => Py::Num(n.clone()),
            Value::String(s) => Py::uni(s),
            Value::Array(a) => Py::List(a.iter().map(Py::from_template).collect()),
            Value::Object(o) => {
                let mut d = Dict::py27();
                for (k, v) in o {
                    d.set(k, true, Py::from_template(v));
                }
                Py::Dict(d)
            }
        }
    }

    /// Generated JSON, as plain Python values (`str`, `dict`).
    pub fn plain(v: &Value) -> Py {
        match v {
            Value::String(s) => Py::str(s),
            Value::Array(a) => Py::List(a.iter().map(Py::plain).collect()),
            Value::Object(o) => {
                let mut d = Dict::plain();
                for (k, v) in o {
                    d.set(k, false, Py::plain(v));
                }
                Py::Dict(d)
            }
            other => Py::from_template(other),
        }
    }

    pub fn deepcopy(&self) -> Py {
        match self {
            Py::Dict(d) => Py::Dict(d.deepcopy()),
            Py::List(l) => Py::List(l.iter().map(Py::deepcopy).collect()),
            other => other.clone(),
        }
    }

    pub fn as_dict(&self) -> Option<&Dict> {
        match self {
            Py::Dict(d) => Some(d),
            _ => None,
        }
    }

    pub fn as_dict_mut(&mut self) -> Option<&mut Dict> {
        match self {
            Py::Dict(d) => Some(d),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Py::Str(s, _) => Some(s),
            _ => None,
        }
    }

    /// Python's truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Py::None => false,
            Py::Bool(b) => *b,
            Py::Num(n) => n.as_f64() != Some(0.0),
            Py::Str(s, _) => !s.is_empty(),
            Py::List(l) => !l.is_empty(),
            Py::Dict(d) => !d.is_empty(),
        }
    }

    /// The JSON the translator writes out (in Python 2.7 iteration order).
    pub fn to_json(&self) -> Value {
        match self {
            Py::None => Value::Null,
            Py::Bool(b) => Value::Bool(*b),
            Py::Num(n) => Value::Number(n.clone()),
            Py::Str(s, _) => Value::String(s.clone()),
            Py::List(l) => Value::Array(l.iter().map(Py::to_json).collect()),
            Py::Dict(d) => {
                let mut m = Map::new();
                for (k, _, v) in d.items() {
                    m.insert(k, v.to_json());
                }
                Value::Object(m)
            }
        }
    }

    /// `str(value)` as the translator's Python computes it (Py27Dict's own `__str__`).
    pub fn to_str(&self) -> String {
        match self {
            Py::Str(s, _) => s.clone(),
            other => other.repr(),
        }
    }

    /// `json.dumps(value)` (default separators, ASCII only, dicts in their iteration order).
    pub fn json_dumps(&self) -> String {
        match self {
            Py::None => "null".into(),
            Py::Bool(b) => b.to_string(),
            Py::Num(n) => crate::pyjson::dumps(&Value::Number(n.clone())),
            Py::Str(s, _) => crate::pyjson::dumps(&Value::String(s.clone())),
            Py::List(l) => format!(
                "[{}]",
                l.iter().map(Py::json_dumps).collect::<Vec<_>>().join(", ")
            ),
            Py::Dict(d) => {
                let parts: Vec<String> = d
                    .items()
                    .iter()
                    .map(|(k, _, v)| {
                        format!(
                            "{}: {}",
                            crate::pyjson::dumps(&Value::String(k.clone())),
                            v.json_dumps()
                        )
                    })
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
        }
    }

    /// `repr(value)`.
    pub fn repr(&self) -> String {
        match self {
            Py::None => "None".into(),
            Py::Bool(true) => "True".into(),
            Py::Bool(false) => "False".into(),
            Py::Num(n) => number_repr(n),
            Py::Str(s, false) => str_repr(s),
            Py::Str(s, true) => uni_repr(s),
            Py::List(l) => format!(
                "[{}]",
                l.iter().map(Py::repr).collect::<Vec<_>>().join(", ")
            ),
            Py::Dict(d) => {
                let parts: Vec<String> = d
                    .items()
                    .iter()
                    .map(|(k, uni, v)| {
                        let key = if *uni { uni_repr(k) } else { str_repr(k) };
                        format!("{key}: {}", v.repr())
                    })
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
        }
    }
}

fn number_repr(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        // Python 2's long beyond sys.maxint.
        return format!("{u}L");
    }
    let f = n.as_f64().unwrap_or(0.0);
    if f.fract() == 0.0 && f.abs() < 1e16 {
        format!("{f:.1}")
    } else {
        format!("{f}")
    }
}

/// Python 3's `repr(str)`.
fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::new();
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

/// `Py27UniStr.__repr__`: `u` + the repr of its `unicode_escape` encoding, doubled
/// backslashes undone.
fn uni_repr(s: &str) -> String {
    let mut escaped = String::new();
    for c in s.chars() {
        let n = c as u32;
        match c {
            '\\' => escaped.push_str("\\\\"),
            '\n' => escaped.push_str("\\n"),
            '\r' => escaped.push_str("\\r"),
            '\t' => escaped.push_str("\\t"),
            c if (0x20..0x7f).contains(&n) => escaped.push(c),
            _ if n < 0x100 => escaped.push_str(&format!("\\x{n:02x}")),
            _ if n < 0x10000 => escaped.push_str(&format!("\\u{n:04x}")),
            _ => escaped.push_str(&format!("\\U{n:08x}")),
        }
    }
    format!("u{}", str_repr(&escaped).replace("\\\\", "\\"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_hash_is_python_27s() {
        // Python 2.7 (64-bit): hash("paths") & 7 and friends, as the translator's Hash.shash.
        assert_eq!(shash(""), 0);
        assert_eq!(shash("a") as i64, 12_416_037_344);
    }

    #[test]
    fn deep_copies_reorder_as_python_27_does() {
        // samtranslator: five keys inserted, then copy.deepcopy twice (each re-adds the keys in
        // iteration order into a fresh table, which can move them).
        let mut d = Dict::py27();
        for k in [
            "type",
            "httpMethod",
            "uri",
            "timeoutInMillis",
            "cacheKeyParameters",
        ] {
            d.set(k, false, Py::None);
        }
        assert_eq!(
            d.keys(),
            [
                "cacheKeyParameters",
                "httpMethod",
                "type",
                "uri",
                "timeoutInMillis"
            ]
        );
        let once = d.deepcopy();
        assert_eq!(
            once.keys(),
            [
                "httpMethod",
                "type",
                "cacheKeyParameters",
                "timeoutInMillis",
                "uri"
            ]
        );
        assert_eq!(
            once.deepcopy().keys(),
            [
                "httpMethod",
                "uri",
                "type",
                "cacheKeyParameters",
                "timeoutInMillis"
            ]
        );
        // A deleted key leaves a dummy slot: later keys probe past it.
        let mut r = Dict::py27();
        for k in ["One", "Two", "Three", "Fn", "ServerlessRestApi"] {
            r.set(k, true, Py::None);
        }
        r.remove("ServerlessRestApi");
        assert_eq!(r.keys(), ["Three", "Two", "Fn", "One"]);
    }

    #[test]
    fn skeleton_prints_in_python_27_order() {
        let mut info = Dict::py27();
        info.set("version", false, Py::str("1.0"));
        info.set("title", false, Py::plain(&json!({"Ref": "AWS::StackName"})));
        let mut s = Dict::py27();
        s.set("swagger", false, Py::str("2.0"));
        s.set("info", false, Py::Dict(info));
        s.set("paths", false, Py::Dict(Dict::py27()));
        assert_eq!(
            Py::Dict(s).to_str(),
            "{'info': {'version': '1.0', 'title': {'Ref': 'AWS::StackName'}}, 'paths': {}, 'swagger': '2.0'}"
        );
        // Thirteen keys: a resize, collisions, and unicode reprs (printed by samtranslator).
        let mut d = Dict::py27();
        for k in [
            "x-amazon-apigateway-integration",
            "responses",
            "get",
            "post",
            "/hello",
            "/{proxy+}",
            "a",
            "b",
            "c",
            "d",
            "e",
            "f",
            "g",
        ] {
            d.set(k, true, Py::uni("v'\u{e9}\n"));
        }
        let v = "u\"v'\\xe9\\n\"";
        let order = [
            "a",
            "c",
            "b",
            "e",
            "responses",
            "f",
            "/hello",
            "x-amazon-apigateway-integration",
            "/{proxy+}",
            "g",
            "get",
            "post",
            "d",
        ];
        let expected: Vec<String> = order.iter().map(|k| format!("u'{k}': {v}")).collect();
        assert_eq!(Py::Dict(d).to_str(), format!("{{{}}}", expected.join(", ")));
    }
}
