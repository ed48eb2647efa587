//! The template's own document type: a JSON value shaped for templates.
//!
//! Why not `serde_json::Value`: a large template is hundreds of thousands of small nodes, and
//! with serde_json (its `preserve_order` map) every object is an `IndexMap` (an entry vector plus
//! a SipHash table) and every key and string its own heap `String`. Parsing built that tree once,
//! evaluation built it again, and the allocations, copies and hashing were most of the time of
//! parsing and evaluating a 5,000-resource template (see `benches/common`). Here:
//!
//! - strings are [`SmolStr`]: up to 23 bytes inline (most keys and values in a template), longer
//!   ones shared behind an `Arc`, so a clone never copies text;
//! - an object is a vector of entries in document order, searched linearly while small (a
//!   template's objects mostly have a handful of members) and through a hash index once it
//!   grows past [`INDEX_FROM`] members (a `Resources` section, a large mapping).
//!
//! The API follows `serde_json::Value`'s names (`get`, `as_str`, `as_object`, ...), so the code
//! reads the same. The boundary to the rest of cumulo, which speaks `serde_json::Value`, is
//! [`Value::to_json`] and `From<serde_json::Value>`.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
pub use serde_json::Number;
pub use smol_str::SmolStr;
use std::fmt;

/// A template value: JSON's six kinds.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(SmolStr),
    Array(Vec<Value>),
    Object(Map),
}

/// Objects with more members than this get a hash index for lookups; smaller ones are searched
/// linearly, which for a few short keys is faster than hashing and saves the table.
pub const INDEX_FROM: usize = 16;

/// A JSON object in document order.
#[derive(Clone, Default)]
pub struct Map {
    entries: Vec<(SmolStr, Value)>,
    /// Position of each key in `entries`, kept once the map has more than [`INDEX_FROM`] members.
    index: Option<Box<foldhash::HashMap<SmolStr, usize>>>,
}

impl Map {
    pub fn new() -> Map {
        Map::default()
    }

    pub fn with_capacity(capacity: usize) -> Map {
        Map {
            entries: Vec::with_capacity(capacity),
            index: None,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn position(&self, key: &str) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).copied(),
            None => self.entries.iter().position(|(k, _)| k == key),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.position(key).map(|i| &mut self.entries[i].1)
    }

    /// The member's key as stored (shares its text).
    pub fn get_key_value(&self, key: &str) -> Option<(&SmolStr, &Value)> {
        self.position(key).map(|i| {
            let (k, v) = &self.entries[i];
            (k, v)
        })
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Sets a member; an existing key keeps its place and its old value is returned.
    pub fn insert(&mut self, key: impl Into<SmolStr>, value: Value) -> Option<Value> {
        let key = key.into();
        if let Some(i) = self.position(&key) {
            return Some(std::mem::replace(&mut self.entries[i].1, value));
        }
        self.insert_new(key, value);
        None
    }

    /// Appends a member the caller knows is not there yet (a parser that has checked for
    /// duplicates, a copy of another map's members): no search.
    pub fn insert_new(&mut self, key: SmolStr, value: Value) {
        debug_assert!(
            !self.contains_key(&key),
            "insert_new of a present key {key}"
        );
        let at = self.entries.len();
        if let Some(index) = &mut self.index {
            index.insert(key.clone(), at);
        }
        self.entries.push((key, value));
        if self.index.is_none() && self.entries.len() > INDEX_FROM {
            self.index = Some(Box::new(
                self.entries
                    .iter()
                    .enumerate()
                    .map(|(i, (k, _))| (k.clone(), i))
                    .collect(),
            ));
        }
    }

    /// Removes a member, keeping the others in order.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.position(key)?;
        let (_, value) = self.entries.remove(i);
        if let Some(index) = &mut self.index {
            index.remove(key);
            for (_, at) in index.iter_mut() {
                if *at > i {
                    *at -= 1;
                }
            }
        }
        Some(value)
    }

    pub fn iter(&self) -> Iter<'_> {
        Iter(self.entries.iter())
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (&SmolStr, &mut Value)> {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &SmolStr> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.entries.iter().map(|(_, v)| v)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Value> {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// The first member, if any.
    pub fn first(&self) -> Option<(&SmolStr, &Value)> {
        self.entries.first().map(|(k, v)| (k, v))
    }

    /// The member at `i` in document order.
    pub fn get_index(&self, i: usize) -> Option<(&SmolStr, &Value)> {
        self.entries.get(i).map(|(k, v)| (k, v))
    }
}

impl fmt::Debug for Map {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Equal when both have the same members, in any order (as JSON objects, and as
/// `serde_json::Map` compares).
impl PartialEq for Map {
    fn eq(&self, other: &Map) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

/// Iterator over a map's members in document order.
pub struct Iter<'a>(std::slice::Iter<'a, (SmolStr, Value)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a SmolStr, &'a Value);

    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(k, v)| (k, v))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(k, v)| (k, v))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a Map {
    type Item = (&'a SmolStr, &'a Value);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for Map {
    type Item = (SmolStr, Value);
    type IntoIter = std::vec::IntoIter<(SmolStr, Value)>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<K: Into<SmolStr>> FromIterator<(K, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Map {
        let mut map = Map::new();
        map.extend(iter);
        map
    }
}

impl<K: Into<SmolStr>> Extend<(K, Value)> for Map {
    fn extend<I: IntoIterator<Item = (K, Value)>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.entries.reserve(iter.size_hint().0);
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl Value {
    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(m) => m.get(key),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        match self {
            Value::Object(m) => m.get_mut(key),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    /// Takes the value out, leaving null.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }

    /// The same value as a `serde_json::Value`, for the rest of cumulo.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::Value::Number(n.clone()),
            Value::String(s) => serde_json::Value::String(s.to_string()),
            Value::Array(a) => serde_json::Value::Array(a.iter().map(Value::to_json).collect()),
            Value::Object(m) => serde_json::Value::Object(
                m.iter()
                    .map(|(k, v)| (k.to_string(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// `value["Key"]`: the member, or null when absent or not an object (as serde_json indexes).
impl std::ops::Index<&str> for Value {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        static NULL: Value = Value::Null;
        self.get(key).unwrap_or(&NULL)
    }
}

/// Text is copied either way (a `SmolStr` cannot take over a `String`'s buffer), so the owned
/// conversion is the borrowed one.
impl From<serde_json::Value> for Value {
    fn from(v: serde_json::Value) -> Value {
        Value::from(&v)
    }
}

impl From<&serde_json::Value> for Value {
    fn from(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(n.clone()),
            serde_json::Value::String(s) => Value::String(s.into()),
            serde_json::Value::Array(a) => Value::Array(a.iter().map(Value::from).collect()),
            serde_json::Value::Object(m) => {
                let mut out = Map::with_capacity(m.len());
                for (k, v) in m {
                    // serde_json's map has unique keys already.
                    out.insert_new(k.into(), v.into());
                }
                Value::Object(out)
            }
        }
    }
}

impl From<Value> for serde_json::Value {
    fn from(v: Value) -> serde_json::Value {
        match v {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(b),
            Value::Number(n) => serde_json::Value::Number(n),
            Value::String(s) => serde_json::Value::String(s.into()),
            Value::Array(a) => {
                serde_json::Value::Array(a.into_iter().map(serde_json::Value::from).collect())
            }
            Value::Object(m) => serde_json::Value::Object(
                m.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
            ),
        }
    }
}

impl From<SmolStr> for Value {
    fn from(s: SmolStr) -> Value {
        Value::String(s)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s.into())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.into())
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<u64> for Value {
    fn from(n: u64) -> Value {
        Value::Number(n.into())
    }
}

impl From<usize> for Value {
    fn from(n: usize) -> Value {
        Value::Number((n as u64).into())
    }
}

impl From<i64> for Value {
    fn from(n: i64) -> Value {
        Value::Number(n.into())
    }
}

impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Value {
        Value::Array(a)
    }
}

impl From<Map> for Value {
    fn from(m: Map) -> Value {
        Value::Object(m)
    }
}

/// Structural comparison with a `serde_json::Value` (objects in any order), without copying
/// either.
impl PartialEq<serde_json::Value> for Value {
    fn eq(&self, other: &serde_json::Value) -> bool {
        match (self, other) {
            (Value::Null, serde_json::Value::Null) => true,
            (Value::Bool(a), serde_json::Value::Bool(b)) => a == b,
            (Value::Number(a), serde_json::Value::Number(b)) => a == b,
            (Value::String(a), serde_json::Value::String(b)) => a == b,
            (Value::Array(a), serde_json::Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
            }
            (Value::Object(a), serde_json::Value::Object(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.get(k.as_str()).is_some_and(|w| v == w))
            }
            _ => false,
        }
    }
}

impl PartialEq<Value> for serde_json::Value {
    fn eq(&self, other: &Value) -> bool {
        other == self
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => n.serialize(s),
            Value::String(t) => s.serialize_str(t),
            Value::Array(a) => {
                let mut seq = s.serialize_seq(Some(a.len()))?;
                for item in a {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Object(m) => m.serialize(s),
        }
    }
}

impl Serialize for Map {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            map.serialize_entry(k.as_str(), v)?;
        }
        map.end()
    }
}

/// Compact JSON text, as `serde_json::Value` displays.
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(m: &Map) -> Vec<&str> {
        m.keys().map(SmolStr::as_str).collect()
    }

    #[test]
    fn small_and_indexed_maps_keep_document_order_and_find_every_key() {
        for n in [3, INDEX_FROM, INDEX_FROM + 1, 200] {
            let mut m = Map::new();
            for i in (0..n).rev() {
                assert_eq!(m.insert(format!("k{i}"), Value::from(i as u64)), None);
            }
            assert_eq!(m.len(), n);
            assert_eq!(
                m.keys().next().map(SmolStr::as_str),
                Some(&*format!("k{}", n - 1))
            );
            for i in 0..n {
                assert_eq!(
                    m.get(&format!("k{i}")),
                    Some(&Value::from(i as u64)),
                    "n={n} i={i}"
                );
            }
            assert_eq!(m.get("absent"), None);
            // Replacing keeps the member's place.
            assert_eq!(m.insert("k0", Value::Null), Some(Value::from(0_u64)));
            assert_eq!(keys(&m).last(), Some(&"k0"));
            // Removing keeps the others in order, and lookups stay right after it.
            assert_eq!(
                m.remove(&format!("k{}", n - 1)),
                Some(Value::from((n - 1) as u64))
            );
            assert_eq!(m.len(), n - 1);
            for i in 0..n - 1 {
                assert!(m.contains_key(&format!("k{i}")), "n={n} i={i}");
            }
            assert!(!m.contains_key(&format!("k{}", n - 1)));
            let mut expected: Vec<String> = (0..n - 1).rev().map(|i| format!("k{i}")).collect();
            expected.sort_by_key(|k| k == "k0");
            assert_eq!(keys(&m), expected);
        }
    }

    #[test]
    fn converts_to_and_from_serde_json_unchanged() {
        let j = json!({"b": [1, -2, 1.5, "a long string that does not fit inline"], "a": {"x": null, "y": true}});
        let v = Value::from(j.clone());
        assert_eq!(v, j);
        assert_eq!(v.to_json(), j);
        assert_eq!(serde_json::Value::from(v.clone()), j);
        assert_eq!(v.to_string(), j.to_string());
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            serde_json::to_string(&j).unwrap()
        );
    }

    #[test]
    fn objects_compare_as_sets_of_members() {
        let a = Value::from(json!({"x": 1, "y": 2}));
        let b = Value::from(json!({"y": 2, "x": 1}));
        assert_eq!(a, b);
        assert_ne!(a, Value::from(json!({"x": 1})));
        assert_ne!(a, json!({"x": 1, "y": 3}));
    }
}
