//! Evaluating parsed expressions against an item: conditions and filters (a missing attribute
//! makes a comparison false, as in DynamoDB), projections, and update actions (every right-hand
//! side is read from the item as it was before the update).

use super::errors::validation;
use super::expr::{CmpOp, Cond, Operand, Path, PathElem, SetValue, UpdOperand, Update};
use super::number::Number;
use super::value::{AttrValue, Item};
use cumulo_wire::AwsError;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// The value at a document path, if the item has one.
pub fn resolve<'a>(item: &'a Item, path: &Path) -> Option<&'a AttrValue> {
    let (first, rest) = path.split_first()?;
    let PathElem::Attr(name) = first else {
        return None;
    };
    let mut cur = item.get(name)?;
    for e in rest {
        cur = match (e, cur) {
            (PathElem::Attr(a), AttrValue::M(m)) => m.get(a)?,
            (PathElem::Index(i), AttrValue::L(l)) => l.get(*i)?,
            _ => return None,
        };
    }
    Some(cur)
}

fn operand<'a>(item: &'a Item, o: &'a Operand) -> Option<std::borrow::Cow<'a, AttrValue>> {
    use std::borrow::Cow;
    match o {
        Operand::Path(p) => resolve(item, p).map(Cow::Borrowed),
        Operand::Value(v) => Some(Cow::Borrowed(v)),
        Operand::Size(p) => {
            let n = match resolve(item, p)? {
                AttrValue::S(s) => s.len(),
                AttrValue::B(b) => b.len(),
                AttrValue::Ss(v) => v.len(),
                AttrValue::Ns(v) => v.len(),
                AttrValue::Bs(v) => v.len(),
                AttrValue::L(v) => v.len(),
                AttrValue::M(v) => v.len(),
                _ => return None,
            };
            Number::parse(&n.to_string())
                .ok()
                .map(|n| Cow::Owned(AttrValue::N(n)))
        }
    }
}

/// Whether the item satisfies the condition (an absent item is the empty item).
pub fn eval(cond: &Cond, item: &Item) -> bool {
    match cond {
        Cond::And(a, b) => eval(a, item) && eval(b, item),
        Cond::Or(a, b) => eval(a, item) || eval(b, item),
        Cond::Not(c) => !eval(c, item),
        Cond::Exists(p) => resolve(item, p).is_some(),
        Cond::NotExists(p) => resolve(item, p).is_none(),
        Cond::Cmp(a, op, b) => {
            let (a, b) = (operand(item, a), operand(item, b));
            match (a, b) {
                (Some(a), Some(b)) => compare(&a, *op, &b),
                _ => *op == CmpOp::Ne,
            }
        }
        Cond::Between(v, lo, hi) => {
            match (operand(item, v), operand(item, lo), operand(item, hi)) {
                (Some(v), Some(lo), Some(hi)) => {
                    compare(&v, CmpOp::Ge, &lo) && compare(&v, CmpOp::Le, &hi)
                }
                _ => false,
            }
        }
        Cond::In(v, list) => match operand(item, v) {
            Some(v) => list
                .iter()
                .any(|o| operand(item, o).is_some_and(|x| *x == *v)),
            None => false,
        },
        Cond::Type(p, t) => match (resolve(item, p), operand(item, t)) {
            (Some(v), Some(t)) => matches!(&*t, AttrValue::S(s) if s == v.type_name()),
            _ => false,
        },
        Cond::BeginsWith(a, b) => match (operand(item, a), operand(item, b)) {
            (Some(a), Some(b)) => match (&*a, &*b) {
                (AttrValue::S(a), AttrValue::S(b)) => a.starts_with(b.as_str()),
                (AttrValue::B(a), AttrValue::B(b)) => a.starts_with(b),
                _ => false,
            },
            _ => false,
        },
        Cond::Contains(a, b) => match (operand(item, a), operand(item, b)) {
            (Some(a), Some(b)) => match (&*a, &*b) {
                (AttrValue::S(a), AttrValue::S(b)) => a.contains(b.as_str()),
                (AttrValue::B(a), AttrValue::B(b)) => {
                    b.is_empty() || a.windows(b.len()).any(|w| w == b.as_slice())
                }
                (AttrValue::Ss(set), AttrValue::S(s)) => set.contains(s),
                (AttrValue::Ns(set), AttrValue::N(n)) => set.contains(n),
                (AttrValue::Bs(set), AttrValue::B(x)) => set.contains(x),
                (AttrValue::L(l), x) => l.contains(x),
                _ => false,
            },
            _ => false,
        },
    }
}

fn compare(a: &AttrValue, op: CmpOp, b: &AttrValue) -> bool {
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        _ => match a.compare(b) {
            Some(o) => match op {
                CmpOp::Lt => o == Ordering::Less,
                CmpOp::Le => o != Ordering::Greater,
                CmpOp::Gt => o == Ordering::Greater,
                _ => o != Ordering::Less,
            },
            None => false,
        },
    }
}

/// The item reduced to the given paths (list elements picked by index are compacted, as
/// DynamoDB returns them).
pub fn project(item: &Item, paths: &[Path]) -> Item {
    let mut out = Item::new();
    for p in paths {
        if let Some(v) = resolve(item, p) {
            insert_projected(&mut out, p, v.clone());
        }
    }
    out
}

fn insert_projected(out: &mut Item, path: &Path, v: AttrValue) {
    let Some((PathElem::Attr(first), rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        out.insert(first.clone(), v);
        return;
    }
    let slot = out.entry(first.clone()).or_insert_with(|| match rest[0] {
        PathElem::Attr(_) => AttrValue::M(BTreeMap::new()),
        PathElem::Index(_) => AttrValue::L(Vec::new()),
    });
    insert_nested(slot, rest, v);
}

fn insert_nested(slot: &mut AttrValue, rest: &[PathElem], v: AttrValue) {
    let Some((head, tail)) = rest.split_first() else {
        *slot = v;
        return;
    };
    let fresh = |t: &[PathElem]| match t.first() {
        Some(PathElem::Attr(_)) => AttrValue::M(BTreeMap::new()),
        Some(PathElem::Index(_)) => AttrValue::L(Vec::new()),
        None => AttrValue::Null,
    };
    match (head, slot) {
        (PathElem::Attr(a), AttrValue::M(m)) => {
            let child = m.entry(a.clone()).or_insert_with(|| fresh(tail));
            insert_nested(child, tail, v);
        }
        // Projected list elements keep their relative order; a second projection into the same
        // element (a[0].x, a[0].y) lands in the last pushed one.
        (PathElem::Index(_), AttrValue::L(l)) => {
            if tail.is_empty() || l.is_empty() {
                l.push(fresh(tail));
            }
            if let Some(child) = l.last_mut() {
                insert_nested(child, tail, v);
            }
        }
        _ => {}
    }
}

fn invalid_path() -> AwsError {
    validation("The document path provided in the update expression is invalid for update")
}

fn wrong_type() -> AwsError {
    validation("An operand in the update expression has an incorrect data type")
}

fn upd_value(item: &Item, o: &UpdOperand) -> Result<AttrValue, AwsError> {
    match o {
        UpdOperand::Value(v) => Ok(v.clone()),
        UpdOperand::Path(p) => resolve(item, p).cloned().ok_or_else(|| {
            validation(
                "The provided expression refers to an attribute that does not exist in the item",
            )
        }),
        UpdOperand::IfNotExists(p, default) => match resolve(item, p) {
            Some(v) => Ok(v.clone()),
            None => upd_value(item, default),
        },
        UpdOperand::ListAppend(a, b) => match (upd_value(item, a)?, upd_value(item, b)?) {
            (AttrValue::L(mut a), AttrValue::L(b)) => {
                a.extend(b);
                Ok(AttrValue::L(a))
            }
            _ => Err(wrong_type()),
        },
    }
}

fn arith(a: AttrValue, b: AttrValue, plus: bool) -> Result<AttrValue, AwsError> {
    match (a, b) {
        (AttrValue::N(a), AttrValue::N(b)) => {
            let r = if plus { a.add(&b) } else { a.sub(&b) };
            r.map(AttrValue::N).map_err(|e| validation(e.to_string()))
        }
        _ => Err(wrong_type()),
    }
}

/// Applies an update to (a copy of) the item; every operand reads the original item.
pub fn apply(update: &Update, original: &Item) -> Result<Item, AwsError> {
    let mut item = original.clone();
    let mut writes: Vec<(&Path, AttrValue)> = Vec::new();
    for (p, v) in &update.set {
        let value = match v {
            SetValue::Plain(o) => upd_value(original, o)?,
            SetValue::Plus(a, b) => arith(upd_value(original, a)?, upd_value(original, b)?, true)?,
            SetValue::Minus(a, b) => {
                arith(upd_value(original, a)?, upd_value(original, b)?, false)?
            }
        };
        writes.push((p, value));
    }
    for (p, v) in writes {
        set_path(&mut item, p, v)?;
    }
    // Higher list indexes first, so each REMOVE addresses the list as it was.
    let mut removes: Vec<&Path> = update.remove.iter().collect();
    removes.sort();
    for p in removes.into_iter().rev() {
        remove_path(&mut item, p)?;
    }
    for (p, v) in &update.add {
        let new = match (resolve(original, p), v) {
            (None, v) => v.clone(),
            (Some(AttrValue::N(a)), AttrValue::N(b)) => {
                AttrValue::N(a.add(b).map_err(|e| validation(e.to_string()))?)
            }
            (Some(AttrValue::Ss(a)), AttrValue::Ss(b)) => AttrValue::Ss(union(a, b)),
            (Some(AttrValue::Ns(a)), AttrValue::Ns(b)) => AttrValue::Ns(union(a, b)),
            (Some(AttrValue::Bs(a)), AttrValue::Bs(b)) => AttrValue::Bs(union(a, b)),
            _ => return Err(wrong_type()),
        };
        set_path(&mut item, p, new)?;
    }
    for (p, v) in &update.delete {
        let remaining = match (resolve(original, p), v) {
            (None, _) => continue,
            (Some(AttrValue::Ss(a)), AttrValue::Ss(b)) => minus(a, b).map(AttrValue::Ss),
            (Some(AttrValue::Ns(a)), AttrValue::Ns(b)) => minus(a, b).map(AttrValue::Ns),
            (Some(AttrValue::Bs(a)), AttrValue::Bs(b)) => minus(a, b).map(AttrValue::Bs),
            _ => return Err(wrong_type()),
        };
        match remaining {
            Some(v) => set_path(&mut item, p, v)?,
            None => remove_path(&mut item, p)?,
        }
    }
    Ok(item)
}

fn union<T: Clone + PartialEq>(a: &[T], b: &[T]) -> Vec<T> {
    let mut out = a.to_vec();
    for x in b {
        if !out.contains(x) {
            out.push(x.clone());
        }
    }
    out
}

/// The set without `b`'s elements; `None` when nothing is left (DynamoDB removes the attribute).
fn minus<T: Clone + PartialEq>(a: &[T], b: &[T]) -> Option<Vec<T>> {
    let out: Vec<T> = a.iter().filter(|x| !b.contains(x)).cloned().collect();
    (!out.is_empty()).then_some(out)
}

/// The container that holds the path's last element (which must exist for a nested path).
fn parent_mut<'a>(item: &'a mut Item, path: &Path) -> Result<Option<&'a mut AttrValue>, AwsError> {
    let Some((PathElem::Attr(first), rest)) = path.split_first() else {
        return Err(invalid_path());
    };
    if rest.is_empty() {
        return Ok(None);
    }
    let mut cur = item.get_mut(first).ok_or_else(invalid_path)?;
    for e in &rest[..rest.len() - 1] {
        cur = match (e, cur) {
            (PathElem::Attr(a), AttrValue::M(m)) => m.get_mut(a).ok_or_else(invalid_path)?,
            (PathElem::Index(i), AttrValue::L(l)) => l.get_mut(*i).ok_or_else(invalid_path)?,
            _ => return Err(invalid_path()),
        };
    }
    Ok(Some(cur))
}

fn set_path(item: &mut Item, path: &Path, v: AttrValue) -> Result<(), AwsError> {
    let last = path.last().ok_or_else(invalid_path)?.clone();
    match (parent_mut(item, path)?, last) {
        (None, PathElem::Attr(a)) => {
            item.insert(a, v);
        }
        (Some(AttrValue::M(m)), PathElem::Attr(a)) => {
            m.insert(a, v);
        }
        (Some(AttrValue::L(l)), PathElem::Index(i)) => {
            if i < l.len() {
                l[i] = v;
            } else {
                l.push(v);
            }
        }
        _ => return Err(invalid_path()),
    }
    Ok(())
}

fn remove_path(item: &mut Item, path: &Path) -> Result<(), AwsError> {
    let last = path.last().ok_or_else(invalid_path)?.clone();
    match (parent_mut(item, path)?, last) {
        (None, PathElem::Attr(a)) => {
            item.remove(&a);
        }
        (Some(AttrValue::M(m)), PathElem::Attr(a)) => {
            m.remove(&a);
        }
        (Some(AttrValue::L(l)), PathElem::Index(i)) => {
            if i < l.len() {
                l.remove(i);
            }
        }
        _ => return Err(invalid_path()),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamodb::expr::{Exprs, Kind};
    use crate::dynamodb::value::item_from_json;
    use serde_json::json;

    fn item(v: serde_json::Value) -> Item {
        item_from_json(&v).unwrap()
    }

    fn exprs(values: serde_json::Value) -> Exprs {
        Exprs::new(None, Some(item(values))).unwrap()
    }

    #[test]
    fn conditions_follow_dynamodb_semantics() {
        let it = item(json!({
            "n": {"N": "5"}, "s": {"S": "hello"}, "tags": {"SS": ["a", "b"]},
            "m": {"M": {"l": {"L": [{"N": "1"}, {"M": {"c": {"S": "deep"}}}]}}}
        }));
        let mut e = exprs(
            json!({":five": {"N": "5.0"}, ":he": {"S": "he"}, ":a": {"S": "a"},
            ":deep": {"S": "deep"}, ":lo": {"N": "1"}, ":hi": {"N": "9"}, ":t": {"S": "SS"}}),
        );
        let cases = [
            ("n = :five", true),
            ("absent <> :five", true),
            ("absent = :five", false),
            ("n BETWEEN :lo AND :hi", true),
            ("begins_with(s, :he) AND contains(tags, :a)", true),
            ("m.l[1].c = :deep", true),
            ("size(s) = :five AND attribute_type(tags, :t)", true),
            ("n IN (:lo, :hi)", false),
            ("NOT attribute_exists(s) OR s < :he", false),
            ("attribute_not_exists(zz) AND (n > :lo)", true),
        ];
        for (text, want) in cases {
            let c = e.condition(text, Kind::Condition).unwrap();
            assert_eq!(eval(&c, &it), want, "{text}");
        }
        e.finish().unwrap();
    }

    #[test]
    fn updates_apply_every_action() {
        let it = item(
            json!({"n": {"N": "1"}, "l": {"L": [{"S": "x"}, {"S": "y"}, {"S": "z"}]},
            "s": {"SS": ["a", "b"]}, "m": {"M": {}}}),
        );
        let mut e = exprs(json!({":one": {"N": "1"}, ":l": {"L": [{"S": "w"}]},
            ":b": {"SS": ["b"]}, ":c": {"SS": ["c"]}, ":v": {"S": "v"}}));
        let u = e
            .update("SET n = n + :one, l = list_append(l, :l), m.k = :v, fresh = if_not_exists(fresh, :one) REMOVE l2 ADD s :c, ctr :one DELETE x :b")
            .unwrap();
        let out = apply(&u, &it).unwrap();
        assert_eq!(out["n"].to_json(), json!({"N": "2"}));
        assert_eq!(out["fresh"].to_json(), json!({"N": "1"}));
        assert_eq!(out["ctr"].to_json(), json!({"N": "1"}));
        assert_eq!(out["m"].to_json(), json!({"M": {"k": {"S": "v"}}}));
        assert_eq!(
            out["l"].to_json(),
            json!({"L": [{"S": "x"}, {"S": "y"}, {"S": "z"}, {"S": "w"}]})
        );
        let u = e.update("REMOVE l[0], l[2]").unwrap();
        assert_eq!(
            apply(&u, &it).unwrap()["l"].to_json(),
            json!({"L": [{"S": "y"}]}),
            "indexes address the list as it was"
        );
        assert_eq!(out["s"].to_json(), json!({"SS": ["a", "b", "c"]}));
        let u = e.update("SET nope.deeper = :v").unwrap();
        assert!(
            apply(&u, &it)
                .unwrap_err()
                .message
                .contains("document path")
        );
        let u = e.update("SET n = s + :one").unwrap();
        assert!(
            apply(&u, &it)
                .unwrap_err()
                .message
                .contains("incorrect data type")
        );
        let u = e.update("DELETE s :b").unwrap();
        assert_eq!(apply(&u, &it).unwrap()["s"].to_json(), json!({"SS": ["a"]}));
    }

    #[test]
    fn projects_nested_paths() {
        let it = item(json!({"a": {"M": {"b": {"S": "1"}, "c": {"S": "2"}}},
            "l": {"L": [{"S": "x"}, {"S": "y"}]}, "z": {"S": "no"}}));
        let mut e = Exprs::new(None, None).unwrap();
        let paths = e.projection("a.b, l[1]").unwrap();
        let out = project(&it, &paths);
        assert_eq!(
            crate::dynamodb::value::item_to_json(&out),
            json!({"a": {"M": {"b": {"S": "1"}}}, "l": {"L": [{"S": "y"}]}})
        );
    }
}
