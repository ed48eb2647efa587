//! The pure pieces of running transforms (AWS::Include and macros): finding the template-level
//! `Transform` calls and the `Fn::Transform` sites, cutting out the fragment each one is given,
//! and splicing the answer back. Running a transform needs the world (S3 for AWS::Include, a
//! Lambda function for a macro), so the engine drives the loop; nothing here does I/O.
//!
//! AWS's order: every `Fn::Transform`, the most deeply nested first, then the `Transform`
//! section's transforms in the order listed. `AWS::LanguageExtensions` stays in the section for
//! [`prepare`](crate::prepare) to expand; SAM is left there to be refused by name.

use crate::Diagnostic;
use crate::errors;
use crate::model::LANGUAGE_EXTENSIONS;
use crate::value::{Map, SmolStr, Value};

/// AWS's transform that reads a snippet from S3.
pub const INCLUDE: &str = "AWS::Include";
/// The SAM transform, run by the engine through the `cumulo-sam` crate.
pub const SERVERLESS: &str = "AWS::Serverless-2016-10-31";
const FN_TRANSFORM: &str = "Fn::Transform";

/// One transform to run: its name and its `Parameters`, unevaluated (AWS passes a macro its
/// parameters as written).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub name: String,
    pub parameters: Map,
}

/// One step into a value: a member name or a list index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Key(SmolStr),
    Index(usize),
}

/// An `Fn::Transform` site: where its map is, the calls it names (in order) and the fragment
/// they are given, the sibling content of that map.
#[derive(Debug, Clone, PartialEq)]
pub struct Site {
    pub path: Vec<Step>,
    pub calls: Vec<Call>,
    pub fragment: Value,
}

/// Whether the template names a transform the engine runs (AWS::Include or a macro), in its
/// `Transform` section or an `Fn::Transform`: such a template needs CAPABILITY_AUTO_EXPAND for
/// CreateStack and UpdateStack, and ValidateTemplate does not evaluate it.
pub fn expands(root: &Value) -> bool {
    let named =
        template_calls(root).is_ok_and(|calls| calls.iter().any(|c| is_run_by_engine(&c.name)));
    named || !matches!(innermost_site(root), Ok(None))
}

/// Whether a transform is run by the engine (rather than by `prepare`).
pub fn is_run_by_engine(name: &str) -> bool {
    name != LANGUAGE_EXTENSIONS
}

fn malformed(what: &str) -> Diagnostic {
    errors::format_error(format!(
        "{what} must name a transform: a string, or an object with a string Name and optional Parameters object"
    ))
}

fn call_of(v: &Value, what: &str) -> Result<Call, Diagnostic> {
    match v {
        Value::String(name) => Ok(Call {
            name: name.to_string(),
            parameters: Map::new(),
        }),
        Value::Object(obj) => {
            let name = obj
                .get("Name")
                .and_then(Value::as_str)
                .ok_or_else(|| malformed(what))?;
            let parameters = match obj.get("Parameters") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(p)) => p.clone(),
                Some(_) => return Err(malformed(what)),
            };
            Ok(Call {
                name: name.to_string(),
                parameters,
            })
        }
        _ => Err(malformed(what)),
    }
}

fn calls_of(v: &Value, what: &str) -> Result<Vec<Call>, Diagnostic> {
    match v {
        Value::Array(items) => items.iter().map(|i| call_of(i, what)).collect(),
        one => Ok(vec![call_of(one, what)?]),
    }
}

/// The `Transform` section's calls, in order.
pub fn template_calls(root: &Value) -> Result<Vec<Call>, Diagnostic> {
    match root.get("Transform") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(v) => calls_of(v, "Transform").map_err(|e| e.with_path("Transform")),
    }
}

/// The most deeply nested `Fn::Transform` site (the first in document order among equals).
pub fn innermost_site(root: &Value) -> Result<Option<Site>, Diagnostic> {
    let mut best: Option<Vec<Step>> = None;
    let mut path = Vec::new();
    deepest(root, &mut path, &mut best);
    let Some(path) = best else {
        return Ok(None);
    };
    let Some(Value::Object(obj)) = get(root, &path) else {
        return Ok(None);
    };
    let at = render_path(&path);
    let spec = obj.get(FN_TRANSFORM).unwrap_or(&Value::Null);
    let calls = calls_of(spec, FN_TRANSFORM).map_err(|e| e.with_path(&at))?;
    let mut fragment = obj.clone();
    fragment.remove(FN_TRANSFORM);
    Ok(Some(Site {
        path,
        calls,
        fragment: Value::Object(fragment),
    }))
}

fn deepest(v: &Value, path: &mut Vec<Step>, best: &mut Option<Vec<Step>>) {
    match v {
        Value::Object(obj) => {
            if obj.contains_key(FN_TRANSFORM) && best.as_ref().is_none_or(|b| b.len() < path.len())
            {
                *best = Some(path.clone());
            }
            for (k, child) in obj {
                // A transform's own Name and Parameters are not a fragment.
                if k != FN_TRANSFORM {
                    path.push(Step::Key(k.clone()));
                    deepest(child, path, best);
                    path.pop();
                }
            }
        }
        Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                path.push(Step::Index(i));
                deepest(child, path, best);
                path.pop();
            }
        }
        _ => {}
    }
}

fn get<'v>(root: &'v Value, path: &[Step]) -> Option<&'v Value> {
    path.iter().try_fold(root, |v, step| match step {
        Step::Key(k) => v.get(k.as_str()),
        Step::Index(i) => v.as_array().and_then(|a| a.get(*i)),
    })
}

/// Replaces the value at `path` (a path [`innermost_site`] returned) with `value`.
pub fn splice(root: &mut Value, path: &[Step], value: Value) {
    let mut at = root;
    for step in path {
        let next = match (step, at) {
            (Step::Key(k), Value::Object(obj)) => obj.get_mut(k.as_str()),
            (Step::Index(i), Value::Array(items)) => items.get_mut(*i),
            _ => None,
        };
        match next {
            Some(v) => at = v,
            None => return,
        }
    }
    *at = value;
}

/// `/Resources/Bucket/Properties`, as AWS's paths are written.
pub fn render_path(path: &[Step]) -> String {
    path.iter()
        .map(|s| match s {
            Step::Key(k) => format!("/{k}"),
            Step::Index(i) => format!("/{i}"),
        })
        .collect()
}

/// The fragment a template-level transform is given: the whole template but its `Transform`
/// section.
pub fn template_fragment(root: &Value) -> Value {
    let mut out = root.clone();
    if let Some(obj) = out.as_object_mut() {
        obj.remove("Transform");
    }
    out
}

/// A processed template: `fragment` with the transforms the engine does not run (`left`) put
/// back as its `Transform` section, or none when nothing is left.
pub fn with_transforms(fragment: Value, left: &[Call]) -> Value {
    let Value::Object(mut obj) = fragment else {
        return fragment;
    };
    obj.remove("Transform");
    if !left.is_empty() {
        let names = left.iter().map(|c| Value::from(c.name.as_str())).collect();
        // The Transform section leads, as it is usually written.
        let mut out = Map::with_capacity(obj.len() + 1);
        out.insert("Transform", Value::Array(names));
        for (k, v) in obj {
            out.insert(k, v);
        }
        return Value::Object(out);
    }
    Value::Object(obj)
}

/// AWS::Include's answer: the snippet in place of the `Fn::Transform`, merged with the
/// enclosing map's other members (which are kept where the snippet does not name them too).
pub fn include(fragment: Value, snippet: Value) -> Result<Value, String> {
    match (fragment, snippet) {
        (Value::Object(siblings), snippet) if siblings.is_empty() => Ok(snippet),
        (Value::Object(mut siblings), Value::Object(members)) => {
            for (k, v) in members {
                siblings.insert(k, v);
            }
            Ok(Value::Object(siblings))
        }
        (Value::Object(_), _) => {
            Err("the snippet must be an object where the enclosing map has other members".into())
        }
        (other, _) => Ok(other),
    }
}

/// `Location` of an AWS::Include call, with a `Ref` to a parameter resolved through `param`
/// (AWS resolves that one reference; anything else must be a literal string).
pub fn include_location(
    call: &Call,
    param: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    match call.parameters.get("Location") {
        Some(Value::String(s)) => Ok(s.to_string()),
        Some(Value::Object(r)) if r.len() == 1 => match r.get("Ref").and_then(Value::as_str) {
            Some(name) => param(name).ok_or_else(|| format!("Parameter {name} has no value")),
            None => Err("Location must be a string or a Ref to a parameter".into()),
        },
        None => Err("the Location parameter is required".into()),
        Some(_) => Err("Location must be a string or a Ref to a parameter".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_template;

    fn doc(text: &str) -> Value {
        parse_template(text).expect("parses").value
    }

    #[test]
    fn innermost_site_first_with_its_sibling_fragment() {
        let root = doc("Resources:
  A:
    Type: X
    Properties:
      Fn::Transform: {Name: Outer}
      Tags:
        - Key: k
          Fn::Transform: [{Name: Inner, Parameters: {P: 1}}, Again]
");
        let site = innermost_site(&root).expect("ok").expect("found");
        assert_eq!(render_path(&site.path), "/Resources/A/Properties/Tags/0");
        assert_eq!(
            site.calls
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>(),
            ["Inner", "Again"]
        );
        assert_eq!(site.calls[0].parameters.get("P"), Some(&Value::from(1u64)));
        assert_eq!(site.fragment, doc("Key: k"));
        let mut spliced = root.clone();
        splice(&mut spliced, &site.path, doc("{Key: k, Value: v}"));
        let next = innermost_site(&spliced).expect("ok").expect("found");
        assert_eq!(render_path(&next.path), "/Resources/A/Properties");
        assert_eq!(next.fragment, doc("Tags: [{Key: k, Value: v}]"));
    }

    #[test]
    fn template_calls_and_the_processed_section() {
        let root = doc("Transform: [Mine, {Name: AWS::Include, Parameters: {Location: s3://b/k}}, AWS::LanguageExtensions]
Resources: {A: {Type: X}}
");
        let calls = template_calls(&root).expect("ok");
        assert_eq!(calls.len(), 3);
        assert_eq!(calls[1].name, INCLUDE);
        let left: Vec<Call> = calls
            .into_iter()
            .filter(|c| !is_run_by_engine(&c.name))
            .collect();
        let processed = with_transforms(template_fragment(&root), &left);
        assert_eq!(
            processed,
            doc("{Transform: [AWS::LanguageExtensions], Resources: {A: {Type: X}}}")
        );
        assert_eq!(
            template_calls(&doc("Transform: [1]\nResources: {}"))
                .expect_err("malformed")
                .path
                .as_deref(),
            Some("Transform")
        );
    }

    #[test]
    fn include_merges_with_siblings() {
        let list = Value::Array(vec![Value::from(1u64)]);
        assert_eq!(include(doc("{}"), list.clone()).expect("ok"), list);
        assert_eq!(
            include(doc("{A: 1, B: 2}"), doc("{B: 3, C: 4}")).expect("ok"),
            doc("{A: 1, B: 3, C: 4}")
        );
        assert!(include(doc("{A: 1}"), Value::from("text")).is_err());
        let call = Call {
            name: INCLUDE.into(),
            parameters: doc("{Location: {Ref: Where}}")
                .as_object()
                .cloned()
                .expect("map"),
        };
        let param = |n: &str| (n == "Where").then(|| "s3://b/k".to_string());
        assert_eq!(include_location(&call, &param), Ok("s3://b/k".into()));
    }
}
