//! Template values resolved to literals against what the inventory recorded (parameters,
//! physical ids, live attributes, exports), so that the Terraform written for an imported
//! resource holds the values the live resource has, not CloudFormation's expressions. A value
//! that cannot be resolved is reported, never guessed.

use serde_json::Value;

/// What resolution needs from the account's recorded state.
pub trait Lookup {
    fn parameter(&self, name: &str) -> Option<Value>;
    /// `AWS::Region`, `AWS::AccountId`, `AWS::StackName`, `AWS::Partition`, ...
    fn pseudo(&self, name: &str) -> Option<Value>;
    fn physical(&self, logical: &str) -> Option<String>;
    fn attribute(&self, logical: &str, attribute: &str) -> Option<Value>;
    fn export(&self, name: &str) -> Option<Value>;
    fn condition(&self, name: &str) -> Option<bool>;
}

/// `AWS::NoValue`: the property is as if absent.
const NO_VALUE: &str = "AWS::NoValue";

/// Resolves `v`; `Ok(None)` is `AWS::NoValue` (the key is dropped).
pub fn resolve(v: &Value, cx: &dyn Lookup) -> Result<Option<Value>, String> {
    match v {
        Value::Array(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                if let Some(r) = resolve(item, cx)? {
                    out.push(r);
                }
            }
            Ok(Some(Value::Array(out)))
        }
        Value::Object(map) if map.len() == 1 => {
            let (key, arg) = map.iter().next().expect("one entry");
            if key == "Ref" || key.starts_with("Fn::") || key == "Condition" {
                intrinsic(key, arg, cx)
            } else {
                object(map, cx)
            }
        }
        Value::Object(map) => object(map, cx),
        other => Ok(Some(other.clone())),
    }
}

fn object(map: &serde_json::Map<String, Value>, cx: &dyn Lookup) -> Result<Option<Value>, String> {
    let mut out = serde_json::Map::new();
    for (k, item) in map {
        if let Some(r) = resolve(item, cx)? {
            out.insert(k.clone(), r);
        }
    }
    Ok(Some(Value::Object(out)))
}

fn text(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Number(n) => Ok(n.to_string()),
        Value::Bool(b) => Ok(b.to_string()),
        other => Err(format!("{other} is not a string")),
    }
}

fn required(v: &Value, cx: &dyn Lookup) -> Result<Value, String> {
    resolve(v, cx)?.ok_or_else(|| "AWS::NoValue where a value is needed".to_string())
}

fn reference(name: &str, cx: &dyn Lookup) -> Result<Option<Value>, String> {
    if name == NO_VALUE {
        return Ok(None);
    }
    if let Some(p) = cx.parameter(name) {
        return Ok(Some(p));
    }
    if name.starts_with("AWS::") {
        return cx
            .pseudo(name)
            .map(Some)
            .ok_or_else(|| format!("pseudo parameter {name} is not known"));
    }
    cx.physical(name)
        .map(|p| Some(Value::String(p)))
        .ok_or_else(|| format!("Ref {name}: no physical id recorded"))
}

fn get_att(logical: &str, attribute: &str, cx: &dyn Lookup) -> Result<Value, String> {
    cx.attribute(logical, attribute)
        .ok_or_else(|| format!("Fn::GetAtt {logical}.{attribute}: not recorded"))
}

fn intrinsic(key: &str, arg: &Value, cx: &dyn Lookup) -> Result<Option<Value>, String> {
    match key {
        "Ref" => reference(&text(arg)?, cx),
        "Fn::GetAtt" => {
            let (logical, attribute) = get_att_parts(arg)?;
            get_att(&logical, &attribute, cx).map(Some)
        }
        "Fn::Sub" => sub(arg, cx).map(|s| Some(Value::String(s))),
        "Fn::Join" => {
            let [sep, items] = two(arg, key)?;
            let sep = text(sep)?;
            let items = required(items, cx)?;
            let parts = items
                .as_array()
                .ok_or("Fn::Join needs a list")?
                .iter()
                .map(text)
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Some(Value::String(parts.join(&sep))))
        }
        "Fn::Select" => {
            let [index, items] = two(arg, key)?;
            let index: usize = text(&required(index, cx)?)?
                .parse()
                .map_err(|_| "Fn::Select index is not a number")?;
            let items = required(items, cx)?;
            items
                .as_array()
                .and_then(|a| a.get(index).cloned())
                .map(Some)
                .ok_or_else(|| format!("Fn::Select index {index} out of range"))
        }
        "Fn::Split" => {
            let [sep, source] = two(arg, key)?;
            let sep = text(sep)?;
            let source = text(&required(source, cx)?)?;
            Ok(Some(Value::Array(
                source
                    .split(sep.as_str())
                    .map(|s| Value::String(s.into()))
                    .collect(),
            )))
        }
        "Fn::ImportValue" => {
            let name = text(&required(arg, cx)?)?;
            cx.export(&name)
                .map(Some)
                .ok_or_else(|| format!("Fn::ImportValue {name}: no such export recorded"))
        }
        "Fn::If" => {
            let items = arg
                .as_array()
                .filter(|a| a.len() == 3)
                .ok_or("Fn::If needs three items")?;
            let name = text(&items[0])?;
            match cx.condition(&name) {
                Some(true) => resolve(&items[1], cx),
                Some(false) => resolve(&items[2], cx),
                None => Err(format!("condition {name} cannot be evaluated")),
            }
        }
        "Fn::Base64" => Err("Fn::Base64 is not carried over".into()),
        other => Err(format!("{other} is not resolved by cumulo migrate")),
    }
}

fn two<'a>(arg: &'a Value, key: &str) -> Result<[&'a Value; 2], String> {
    match arg.as_array().map(Vec::as_slice) {
        Some([a, b]) => Ok([a, b]),
        _ => Err(format!("{key} needs two items")),
    }
}

fn get_att_parts(arg: &Value) -> Result<(String, String), String> {
    match arg {
        Value::String(s) => s
            .split_once('.')
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .ok_or_else(|| format!("Fn::GetAtt {s} has no attribute")),
        Value::Array(a) if a.len() == 2 => Ok((text(&a[0])?, text(&a[1])?)),
        _ => Err("Fn::GetAtt needs [resource, attribute]".into()),
    }
}

fn sub(arg: &Value, cx: &dyn Lookup) -> Result<String, String> {
    let (template, vars) = match arg {
        Value::String(s) => (s.clone(), None),
        Value::Array(a) if a.len() == 2 => (text(&a[0])?, a[1].as_object()),
        _ => return Err("Fn::Sub needs a string or [string, variables]".into()),
    };
    let mut out = String::new();
    let mut rest = template.as_str();
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or("Fn::Sub: unclosed ${")?;
        let name = &after[..end];
        if let Some(literal) = name.strip_prefix('!') {
            out.push_str("${");
            out.push_str(literal);
            out.push('}');
        } else if let Some(v) = vars.and_then(|v| v.get(name)) {
            out.push_str(&text(&required(v, cx)?)?);
        } else if let Some((logical, attribute)) =
            name.split_once('.').filter(|_| !name.starts_with("AWS::"))
        {
            out.push_str(&text(&get_att(logical, attribute, cx)?)?);
        } else {
            let v = reference(name, cx)?.ok_or("Fn::Sub of AWS::NoValue")?;
            out.push_str(&text(&v)?);
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Evaluates a condition expression (the Conditions section's functions).
pub fn condition(expr: &Value, cx: &dyn Lookup) -> Result<bool, String> {
    let map = expr
        .as_object()
        .filter(|m| m.len() == 1)
        .ok_or("a condition must be one function")?;
    let (key, arg) = map.iter().next().expect("one entry");
    let list = || arg.as_array().ok_or(format!("{key} needs a list"));
    match key.as_str() {
        "Condition" => cx
            .condition(&text(arg)?)
            .ok_or_else(|| format!("condition {arg} cannot be evaluated")),
        "Fn::Equals" => {
            let [a, b] = two(arg, key)?;
            let (a, b) = (resolve(a, cx)?, resolve(b, cx)?);
            Ok(match (a, b) {
                (Some(a), Some(b)) => text(&a)
                    .ok()
                    .zip(text(&b).ok())
                    .map_or(a == b, |(a, b)| a == b),
                (a, b) => a == b,
            })
        }
        "Fn::Not" => Ok(!condition(
            list()?.first().ok_or("Fn::Not needs one item")?,
            cx,
        )?),
        "Fn::And" => list()?
            .iter()
            .try_fold(true, |acc, c| Ok(acc & condition(c, cx)?)),
        "Fn::Or" => list()?
            .iter()
            .try_fold(false, |acc, c| Ok(acc | condition(c, cx)?)),
        other => Err(format!("{other} is not a condition function")),
    }
}

/// The logical ids a value references (Ref, Fn::GetAtt, and `${X}`/`${X.Attr}` in Fn::Sub),
/// parameters and pseudo parameters included (the caller keeps the resources).
pub fn references(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| references(i, out)),
        Value::Object(map) => {
            for (k, arg) in map {
                match (k.as_str(), arg) {
                    ("Ref", Value::String(s)) => out.push(s.clone()),
                    ("Fn::GetAtt", _) => {
                        if let Ok((logical, _)) = get_att_parts(arg) {
                            out.push(logical);
                        }
                    }
                    ("Fn::Sub", _) => {
                        let template = match arg {
                            Value::String(s) => Some(s.as_str()),
                            Value::Array(a) => {
                                a.get(1).into_iter().for_each(|vars| references(vars, out));
                                a.first().and_then(Value::as_str)
                            }
                            _ => None,
                        };
                        let mut rest = template.unwrap_or_default();
                        while let Some(start) = rest.find("${") {
                            let after = &rest[start + 2..];
                            let Some(end) = after.find('}') else { break };
                            let name = &after[..end];
                            if !name.starts_with('!') {
                                out.push(name.split('.').next().unwrap_or(name).to_string());
                            }
                            rest = &after[end + 1..];
                        }
                    }
                    _ => references(arg, out),
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct Fixture;
    impl Lookup for Fixture {
        fn parameter(&self, name: &str) -> Option<Value> {
            (name == "Env").then(|| json!("test"))
        }
        fn pseudo(&self, name: &str) -> Option<Value> {
            (name == "AWS::Region").then(|| json!("eu-west-1"))
        }
        fn physical(&self, logical: &str) -> Option<String> {
            (logical == "Vpc").then(|| "vpc-1".into())
        }
        fn attribute(&self, logical: &str, attribute: &str) -> Option<Value> {
            (logical == "Lb" && attribute == "DNSName").then(|| json!("lb.example"))
        }
        fn export(&self, name: &str) -> Option<Value> {
            (name == "test-ClusterId").then(|| json!("cluster-1"))
        }
        fn condition(&self, name: &str) -> Option<bool> {
            (name == "IsTest").then_some(true)
        }
    }

    fn r(v: Value) -> Result<Option<Value>, String> {
        resolve(&v, &Fixture)
    }

    #[test]
    fn intrinsics_resolve_against_the_recorded_state() {
        assert_eq!(r(json!({"Ref": "Vpc"})).unwrap(), Some(json!("vpc-1")));
        assert_eq!(
            r(json!({"Fn::Sub": "${Env}-${Lb.DNSName}-${AWS::Region}-${!Keep}"})).unwrap(),
            Some(json!("test-lb.example-eu-west-1-${Keep}"))
        );
        assert_eq!(
            r(json!({"Fn::ImportValue": {"Fn::Sub": "${Env}-ClusterId"}})).unwrap(),
            Some(json!("cluster-1"))
        );
        assert_eq!(
            r(json!({"Fn::If": ["IsTest", {"Fn::Join": ["/", ["a", {"Ref": "Env"}]]}, "b"]}))
                .unwrap(),
            Some(json!("a/test"))
        );
        assert_eq!(
            r(json!({"Fn::Select": [1, {"Fn::Split": [",", "x,y"]}]})).unwrap(),
            Some(json!("y"))
        );
        assert_eq!(
            r(json!({"A": {"Ref": "AWS::NoValue"}, "B": [1, {"Ref": "AWS::NoValue"}]})).unwrap(),
            Some(json!({"B": [1]}))
        );
    }

    #[test]
    fn what_was_not_recorded_is_an_error_naming_it() {
        assert!(r(json!({"Ref": "Gone"})).unwrap_err().contains("Gone"));
        assert!(
            r(json!({"Fn::GetAtt": ["Lb", "Arn"]}))
                .unwrap_err()
                .contains("Lb.Arn")
        );
        assert!(
            r(json!({"Fn::If": ["Other", 1, 2]}))
                .unwrap_err()
                .contains("Other")
        );
    }

    #[test]
    fn conditions_and_references() {
        let c = json!({"Fn::And": [{"Fn::Equals": [{"Ref": "Env"}, "test"]}, {"Fn::Not": [{"Condition": "IsTest"}]}]});
        assert!(!condition(&c, &Fixture).unwrap());
        let mut refs = Vec::new();
        references(
            &json!({"A": {"Fn::Sub": "${Role.Arn}/${Env}/${!x}"}, "B": [{"Fn::GetAtt": "Fn.Arn"}, {"Ref": "Q"}]}),
            &mut refs,
        );
        assert_eq!(refs, ["Role", "Env", "Fn", "Q"]);
    }
}
