//! The Default Definition Body and implicit REST API plugins (before Globals), and Globals'
//! OpenApiVersion fix of a managed body.

use super::*;
use crate::conditions::{PathCondition, RouteConditions};

/// Whether the template has a REST API (explicit, or an Api event): only then does the
/// translator convert it to its Python 2.7 types.
pub(crate) fn has_rest_api(resources: &Map<String, Value>) -> bool {
    resources.values().any(|r| {
        let ty = r.get("Type").and_then(Value::as_str);
        ty == Some(API)
            || (matches!(
                ty,
                Some("AWS::Serverless::Function" | "AWS::Serverless::StateMachine")
            ) && r
                .pointer("/Properties/Events")
                .and_then(Value::as_object)
                .is_some_and(|events| {
                    events
                        .values()
                        .any(|e| e.get("Type").and_then(Value::as_str) == Some("Api"))
                }))
    })
}

/// The translator's iteration order of a template-converted dict's keys.
pub(crate) fn py27_order<'a>(keys: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut d = Dict::py27();
    for k in keys {
        d.set(k, true, Py::None);
    }
    d.keys()
}

/// The Default Definition Body and implicit REST API plugins: bodies for every Api, the
/// implicit `ServerlessRestApi`, and each Api event's path in its API's managed swagger.
pub fn add_implicit(root: &mut Map<String, Value>) -> Result<Bodies, Vec<String>> {
    let mut bodies = Bodies::default();
    let Some(Value::Object(resources)) = root.get_mut("Resources") else {
        return Ok(bodies);
    };
    if !has_rest_api(resources) {
        return Ok(bodies);
    }
    let mut dict = Dict::py27();
    for k in resources.keys() {
        dict.set(k, true, Py::None);
    }
    for (id, r) in resources.iter_mut() {
        if r.get("Type").and_then(Value::as_str) != Some(API) {
            continue;
        }
        let Some(r) = r.as_object_mut() else { continue };
        let props = r.entry("Properties").or_insert_with(|| json!({}));
        let Some(p) = props.as_object_mut() else {
            continue;
        };
        if !truthy(p.get("DefinitionBody")) && !truthy(p.get("DefinitionUri")) {
            bodies.bodies.insert(id.clone(), skeleton());
            p.insert("__MANAGE_SWAGGER".into(), json!(true));
        } else if let Some(b) = p.get("DefinitionBody").filter(|b| !b.is_null()) {
            bodies.bodies.insert(id.clone(), Py::from_template(b));
        }
    }
    let existing = resources.get(IMPLICIT).cloned();
    dict.set(IMPLICIT, false, Py::None);
    let order = dict.keys();
    resources.insert(
        IMPLICIT.into(),
        json!({"Type": API, "Properties": {"StageName": "Prod", "__MANAGE_SWAGGER": true}}),
    );
    let previous_body = bodies.bodies.insert(IMPLICIT.into(), skeleton());
    let mut errors = Vec::new();
    let mut deletion = Vec::new();
    let mut conditions = RouteConditions::default();
    let mut replace = Vec::new();
    for id in &order {
        let Some(r) = resources.get(id.as_str()) else {
            continue;
        };
        let ty = r.get("Type").and_then(Value::as_str).unwrap_or("");
        if ty != "AWS::Serverless::Function" && ty != "AWS::Serverless::StateMachine" {
            continue;
        }
        let Some(Value::Object(events)) = r.pointer("/Properties/Events") else {
            continue;
        };
        let mut events = events.clone();
        // `_get_api_events`: a Py27Dict of the Api events, filled in the Events' own order.
        let api_events: Vec<String> = py27_order(py27_order(events.keys()).iter().filter(|name| {
            events[name.as_str()].get("Type").and_then(Value::as_str) == Some("Api")
        }));
        if api_events.is_empty() {
            continue;
        }
        let condition = r.get("Condition").cloned();
        let policies = (
            r.get("DeletionPolicy").cloned(),
            r.get("UpdateReplacePolicy").cloned(),
        );
        for name in api_events {
            let Some(event) = events.get_mut(&name) else {
                continue;
            };
            let props = match event.get_mut("Properties") {
                None | Some(Value::Null) => continue,
                Some(Value::Object(p)) if p.is_empty() => continue,
                Some(Value::Object(p)) => p,
                Some(_) => {
                    errors.push(invalid_event(id, &name, "Properties should be a map."));
                    continue;
                }
            };
            if condition.as_ref().is_some_and(|c| !c.is_string()) {
                errors.push(unsupported(id, "A Condition that is not a string"));
                continue;
            }
            if !props.contains_key("RestApiId") {
                props.insert("RestApiId".into(), json!({"Ref": IMPLICIT}));
            }
            let api_id = match props.get("RestApiId") {
                Some(Value::Object(o)) if o.contains_key("Ref") => o["Ref"].clone(),
                Some(v) => v.clone(),
                None => Value::Null,
            };
            for p in ["Path", "Method"] {
                if props.get(p).is_none_or(Value::is_null) {
                    errors.push(invalid_event(
                        id,
                        &name,
                        format!("Property '{p}' is required."),
                    ));
                }
            }
            let (Some(path), Some(method)) = (
                props
                    .get("Path")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                props
                    .get("Method")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            ) else {
                if props
                    .get("Path")
                    .is_some_and(|v| !v.is_null() && !v.is_string())
                {
                    errors.push(invalid_event(
                        id,
                        &name,
                        "Property 'Path' should be a string.",
                    ));
                } else if props
                    .get("Method")
                    .is_some_and(|v| !v.is_null() && !v.is_string())
                {
                    errors.push(invalid_event(
                        id,
                        &name,
                        "Property 'Method' should be a string.",
                    ));
                }
                continue;
            };
            let Some(api_id) = api_id.as_str().map(str::to_string) else {
                errors.push(invalid_event(
                    id,
                    &name,
                    "Property 'RestApiId' should be a string.",
                ));
                continue;
            };
            conditions.add(
                &api_id,
                &path,
                &method,
                condition
                    .as_ref()
                    .and_then(Value::as_str)
                    .map(str::to_string),
            );
            deletion.push((api_id.clone(), policies.0.clone()));
            replace.push((api_id.clone(), policies.1.clone()));
            let target_type = resources
                .get(&api_id)
                .and_then(|a| a.get("Type"))
                .and_then(Value::as_str);
            if target_type.is_none() || target_type == Some("AWS::Serverless::HttpApi") {
                errors.push(invalid_event(
                    id,
                    &name,
                    format!("RestApiId must be a valid reference to an '{API}' resource in same template."),
                ));
                continue;
            }
            let managed = resources
                .get(&api_id)
                .and_then(|a| a.pointer("/Properties/__MANAGE_SWAGGER"))
                .is_some_and(|v| truthy(Some(v)));
            if managed
                && let Some(body) = bodies.bodies.get_mut(&api_id)
                && is_valid(body)
            {
                match Editor::new(body) {
                    Ok(mut editor) => {
                        if let Err(e) = editor.add_path(&path, true, &method, true) {
                            errors.push(invalid(&api_id, e));
                            continue;
                        }
                        *body = editor.swagger();
                    }
                    Err(e) => errors.push(invalid(&api_id, e)),
                }
            }
        }
        if let Some(p) = resources
            .get_mut(id.as_str())
            .and_then(|r| r.get_mut("Properties"))
            .and_then(Value::as_object_mut)
        {
            p.insert("Events".into(), Value::Object(std::mem::take(&mut events)));
        }
    }
    if let Some(api) = resources.get_mut(IMPLICIT).and_then(Value::as_object_mut) {
        crate::resource::inherit_policies(api, IMPLICIT, &deletion, &replace);
    }
    if let Some(api) = resources.get_mut(IMPLICIT).and_then(Value::as_object_mut) {
        conditions.condition_implicit(IMPLICIT, api, IMPLICIT_CONDITION);
    }
    // `_maybe_add_conditions_to_implicit_api_paths`: a path all of whose methods have
    // conditions exists only under them; every managed body passes through an editor once more
    // (two deep copies), conditions or not.
    for (id, r) in resources.iter() {
        let managed = r.get("Type").and_then(Value::as_str) == Some(API)
            && r.pointer("/Properties/__MANAGE_SWAGGER")
                .is_some_and(|v| truthy(Some(v)));
        if !managed {
            continue;
        }
        let Some(body) = bodies.bodies.get_mut(id) else {
            continue;
        };
        let mut editor = match Editor::new(body) {
            Ok(e) => e,
            Err(e) => {
                errors.push(invalid(id, e));
                continue;
            }
        };
        for path in editor.paths().keys() {
            match conditions.path(id, &path) {
                Some(PathCondition::Own(c)) => editor.make_path_conditional(&path, Py::uni(&c)),
                Some(PathCondition::Combined(c)) => {
                    editor.make_path_conditional(&path, Py::str(&c))
                }
                None => {}
            }
        }
        *body = editor.swagger();
    }

    let empty = bodies
        .bodies
        .get(IMPLICIT)
        .and_then(Py::as_dict)
        .and_then(|d| d.get("paths"))
        .is_none_or(|p| !p.truthy());
    if empty {
        match existing {
            Some(e) => {
                resources.insert(IMPLICIT.into(), e);
                match previous_body {
                    Some(b) => bodies.bodies.insert(IMPLICIT.into(), b),
                    None => bodies.bodies.remove(IMPLICIT),
                };
            }
            None => {
                resources.shift_remove(IMPLICIT);
                bodies.bodies.remove(IMPLICIT);
                dict.remove(IMPLICIT);
            }
        }
    }
    sync(resources, &bodies);
    bodies.resources = Some(dict);
    conditions.write(root);
    if errors.is_empty() {
        Ok(bodies)
    } else {
        Err(errors)
    }
}

/// Writes the bodies back into the template (what Globals and other resources see).
pub(crate) fn sync(resources: &mut Map<String, Value>, bodies: &Bodies) {
    for (id, body) in &bodies.bodies {
        if let Some(p) = resources
            .get_mut(id)
            .and_then(|r| r.get_mut("Properties"))
            .and_then(Value::as_object_mut)
        {
            p.insert("DefinitionBody".into(), body.to_json());
        }
    }
}

/// The Globals plugin's `fix_openapi_definitions`: a managed body takes the API's
/// OpenApiVersion (3.x) as its `openapi`, losing `swagger`.
pub fn fix_openapi_definitions(root: &mut Map<String, Value>, bodies: &mut Bodies) {
    let Some(Value::Object(resources)) = root.get_mut("Resources") else {
        return;
    };
    for (id, r) in resources.iter() {
        if r.get("Type").and_then(Value::as_str) != Some(API) {
            continue;
        }
        let Some(p) = r.get("Properties") else {
            continue;
        };
        let Some(version) = p.get("OpenApiVersion").and_then(Value::as_str) else {
            continue;
        };
        if p.get("__MANAGE_SWAGGER").is_none() || !openapi3(version) {
            continue;
        }
        if let Some(Py::Dict(d)) = bodies.bodies.get_mut(id) {
            d.set("openapi", false, Py::uni(version));
            if d.get("swagger").is_some_and(Py::truthy) {
                d.remove("swagger");
            }
        }
    }
    sync(resources, bodies);
}

const IMPLICIT_CONDITION: &str = "ServerlessRestApiCondition";
