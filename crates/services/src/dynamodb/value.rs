//! Attribute values: DynamoDB's ten types, their wire JSON (`{"S": "x"}`), their validation with
//! DynamoDB's messages, their size (the 400 KB item limit) and the ordering of key values.

use super::errors::validation;
use super::number::Number;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// One item: attribute name → value.
pub type Item = BTreeMap<String, AttrValue>;

#[derive(Debug, Clone)]
pub enum AttrValue {
    S(String),
    N(Number),
    B(Vec<u8>),
    /// Sets keep insertion order (DynamoDB's order is unspecified) and never hold duplicates.
    Ss(Vec<String>),
    Ns(Vec<Number>),
    Bs(Vec<Vec<u8>>),
    M(BTreeMap<String, AttrValue>),
    L(Vec<AttrValue>),
    Null,
    Bool(bool),
}

/// Sets compare as sets; everything else structurally.
impl PartialEq for AttrValue {
    fn eq(&self, other: &Self) -> bool {
        use AttrValue::*;
        fn same_set<T: PartialEq>(a: &[T], b: &[T]) -> bool {
            a.len() == b.len() && a.iter().all(|x| b.contains(x))
        }
        match (self, other) {
            (S(a), S(b)) => a == b,
            (N(a), N(b)) => a == b,
            (B(a), B(b)) => a == b,
            (Ss(a), Ss(b)) => same_set(a, b),
            (Ns(a), Ns(b)) => same_set(a, b),
            (Bs(a), Bs(b)) => same_set(a, b),
            (M(a), M(b)) => a == b,
            (L(a), L(b)) => a == b,
            (Null, Null) => true,
            (Bool(a), Bool(b)) => a == b,
            _ => false,
        }
    }
}

impl AttrValue {
    /// The type's name in the wire format and in DynamoDB's messages (`S`, `NS`, `BOOL`, ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            AttrValue::S(_) => "S",
            AttrValue::N(_) => "N",
            AttrValue::B(_) => "B",
            AttrValue::Ss(_) => "SS",
            AttrValue::Ns(_) => "NS",
            AttrValue::Bs(_) => "BS",
            AttrValue::M(_) => "M",
            AttrValue::L(_) => "L",
            AttrValue::Null => "NULL",
            AttrValue::Bool(_) => "BOOL",
        }
    }

    /// The type's name in expression-operand messages (`STRING`, `NUMBER`, ...).
    pub fn long_type_name(&self) -> &'static str {
        match self {
            AttrValue::S(_) => "STRING",
            AttrValue::N(_) => "NUMBER",
            AttrValue::B(_) => "BINARY",
            AttrValue::Ss(_) => "SS",
            AttrValue::Ns(_) => "NS",
            AttrValue::Bs(_) => "BS",
            AttrValue::M(_) => "MAP",
            AttrValue::L(_) => "LIST",
            AttrValue::Null => "NULL",
            AttrValue::Bool(_) => "BOOLEAN",
        }
    }

    /// Decodes one wire attribute value, validating it as DynamoDB does.
    pub fn from_json(v: &Value) -> Result<AttrValue, AwsError> {
        let obj = v.as_object().ok_or_else(|| {
            AwsError::bad_request(
                "SerializationException",
                "Start of structure or map found where not expected",
            )
        })?;
        let mut set = obj.iter().filter(|(_, v)| !v.is_null());
        let Some((ty, val)) = set.next() else {
            return Err(validation(
                "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
            ));
        };
        if set.next().is_some() {
            return Err(validation(
                "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
            ));
        }
        let ser = |what: &str| {
            AwsError::bad_request(
                "SerializationException",
                format!("Unexpected value type in payload for {what}"),
            )
        };
        let string = |v: &Value| v.as_str().map(str::to_string).ok_or_else(|| ser(ty));
        let number = |v: &Value| -> Result<Number, AwsError> {
            let text = match v {
                Value::String(s) => s.clone(),
                _ => return Err(ser(ty)),
            };
            Number::parse(&text).map_err(|e| validation(e.to_string()))
        };
        let binary = |v: &Value| -> Result<Vec<u8>, AwsError> {
            let s = v.as_str().ok_or_else(|| ser(ty))?;
            B64.decode(s).map_err(|_| {
                AwsError::bad_request(
                    "SerializationException",
                    "Base64 encoded length is expected a multiple of 4 bytes but found: "
                        .to_string()
                        + &s.len().to_string(),
                )
            })
        };
        let array = |v: &Value| v.as_array().cloned().ok_or_else(|| ser(ty));
        Ok(match ty.as_str() {
            "S" => AttrValue::S(string(val)?),
            "N" => AttrValue::N(number(val)?),
            "B" => AttrValue::B(binary(val)?),
            "BOOL" => AttrValue::Bool(val.as_bool().ok_or_else(|| ser(ty))?),
            "NULL" => {
                if val.as_bool() != Some(true) {
                    return Err(validation(
                        "One or more parameter values were invalid: Null attribute value types must have the value of true",
                    ));
                }
                AttrValue::Null
            }
            "SS" => {
                let items = array(val)?
                    .iter()
                    .map(string)
                    .collect::<Result<Vec<_>, _>>()?;
                check_set("string", &items, |s| s.clone())?;
                AttrValue::Ss(items)
            }
            "NS" => {
                let items = array(val)?
                    .iter()
                    .map(number)
                    .collect::<Result<Vec<_>, _>>()?;
                check_set("number", &items, ToString::to_string)?;
                AttrValue::Ns(items)
            }
            "BS" => {
                let items = array(val)?
                    .iter()
                    .map(binary)
                    .collect::<Result<Vec<_>, _>>()?;
                check_set("binary", &items, |b| B64.encode(b))?;
                AttrValue::Bs(items)
            }
            "L" => AttrValue::L(
                array(val)?
                    .iter()
                    .map(AttrValue::from_json)
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            "M" => AttrValue::M(item_from_json(val)?),
            other => {
                return Err(AwsError::bad_request(
                    "SerializationException",
                    format!("Unknown AttributeValue type: {other}"),
                ));
            }
        })
    }

    pub fn to_json(&self) -> Value {
        match self {
            AttrValue::S(s) => json!({ "S": s }),
            AttrValue::N(n) => json!({ "N": n.to_string() }),
            AttrValue::B(b) => json!({ "B": B64.encode(b) }),
            AttrValue::Ss(v) => json!({ "SS": v }),
            AttrValue::Ns(v) => {
                json!({ "NS": v.iter().map(ToString::to_string).collect::<Vec<_>>() })
            }
            AttrValue::Bs(v) => {
                json!({ "BS": v.iter().map(|b| B64.encode(b)).collect::<Vec<_>>() })
            }
            AttrValue::M(m) => json!({ "M": item_to_json(m) }),
            AttrValue::L(l) => json!({ "L": l.iter().map(AttrValue::to_json).collect::<Vec<_>>() }),
            AttrValue::Null => json!({ "NULL": true }),
            AttrValue::Bool(b) => json!({ "BOOL": b }),
        }
    }

    /// DynamoDB's size of a value in bytes (names counted by the enclosing map or item).
    pub fn size(&self) -> usize {
        match self {
            AttrValue::S(s) => s.len(),
            AttrValue::N(n) => number_size(n),
            AttrValue::B(b) => b.len(),
            AttrValue::Ss(v) => v.iter().map(String::len).sum(),
            AttrValue::Ns(v) => v.iter().map(number_size).sum(),
            AttrValue::Bs(v) => v.iter().map(Vec::len).sum(),
            AttrValue::M(m) => 3 + m.iter().map(|(k, v)| k.len() + v.size() + 1).sum::<usize>(),
            AttrValue::L(l) => 3 + l.iter().map(|v| v.size() + 1).sum::<usize>(),
            AttrValue::Null | AttrValue::Bool(_) => 1,
        }
    }

    /// Ordering for the comparison operators: only S, N and B are ordered, each by DynamoDB's
    /// rule (UTF-8 bytes, numeric value, unsigned bytes).
    pub fn compare(&self, other: &AttrValue) -> Option<Ordering> {
        match (self, other) {
            (AttrValue::S(a), AttrValue::S(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
            (AttrValue::N(a), AttrValue::N(b)) => Some(a.cmp(b)),
            (AttrValue::B(a), AttrValue::B(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }
}

fn number_size(n: &Number) -> usize {
    1 + n.significant_digits().div_ceil(2)
}

fn check_set<T: PartialEq>(
    kind: &str,
    items: &[T],
    show: impl Fn(&T) -> String,
) -> Result<(), AwsError> {
    if items.is_empty() {
        return Err(validation(format!(
            "One or more parameter values were invalid: An {kind} set  may not be empty"
        )));
    }
    for (i, x) in items.iter().enumerate() {
        if items[..i].contains(x) {
            let all: Vec<String> = items.iter().map(&show).collect();
            return Err(validation(format!(
                "One or more parameter values were invalid: Input collection [{}] contains duplicates.",
                all.join(", ")
            )));
        }
    }
    Ok(())
}

/// Decodes a map of attribute values (an item, a key, `M`, ExpressionAttributeValues).
pub fn item_from_json(v: &Value) -> Result<Item, AwsError> {
    let obj = v.as_object().ok_or_else(|| {
        AwsError::bad_request(
            "SerializationException",
            "Unexpected value type in payload: expected a map of attribute values",
        )
    })?;
    obj.iter()
        .map(|(k, v)| Ok((k.clone(), AttrValue::from_json(v)?)))
        .collect()
}

pub fn item_to_json(item: &Item) -> Value {
    Value::Object(
        item.iter()
            .map(|(k, v)| (k.clone(), v.to_json()))
            .collect::<Map<String, Value>>(),
    )
}

/// DynamoDB's size of an item: every name plus every value.
pub fn item_size(item: &Item) -> usize {
    item.iter().map(|(k, v)| k.len() + v.size()).sum()
}

/// A key attribute's value: the three scalar types, ordered as DynamoDB orders keys.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyVal {
    S(String),
    N(Number),
    B(Vec<u8>),
}

impl KeyVal {
    pub fn from_attr(v: &AttrValue) -> Option<KeyVal> {
        match v {
            AttrValue::S(s) => Some(KeyVal::S(s.clone())),
            AttrValue::N(n) => Some(KeyVal::N(n.clone())),
            AttrValue::B(b) => Some(KeyVal::B(b.clone())),
            _ => None,
        }
    }

    pub fn to_attr(&self) -> AttrValue {
        match self {
            KeyVal::S(s) => AttrValue::S(s.clone()),
            KeyVal::N(n) => AttrValue::N(n.clone()),
            KeyVal::B(b) => AttrValue::B(b.clone()),
        }
    }

    /// Bytes for hashing into a Scan segment: stable across restarts.
    pub fn hash_bytes(&self) -> Vec<u8> {
        match self {
            KeyVal::S(s) => s.as_bytes().to_vec(),
            KeyVal::N(n) => n.to_string().into_bytes(),
            KeyVal::B(b) => b.clone(),
        }
    }
}

/// A table item's primary key: partition value, then sort value if the table has one. Ordered
/// so that a partition's items are contiguous and in sort-key order.
pub type PrimaryKey = (KeyVal, Option<KeyVal>);
