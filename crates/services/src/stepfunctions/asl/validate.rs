//! Definition checks made at CreateStateMachine/UpdateStateMachine and answered by
//! ValidateStateMachineDefinition, in AWS's words: each problem is a diagnostic with a code,
//! a location (`/States/<name>/<field>`) and a message; CreateStateMachine refuses the first as
//! `InvalidDefinition: Invalid State Machine Definition: '<CODE>: <message> at <location>'`.

use super::run::{Pattern, Resource};
use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub message: String,
    pub location: Option<String>,
}

impl Diagnostic {
    fn schema(message: impl Into<String>, location: impl Into<String>) -> Self {
        Diagnostic {
            code: "SCHEMA_VALIDATION_FAILED",
            message: message.into(),
            location: Some(location.into()),
        }
    }

    /// The text InvalidDefinition's message carries.
    pub fn invalid_definition(&self) -> String {
        match &self.location {
            Some(l) => format!(
                "Invalid State Machine Definition: '{}: {} at {l}'",
                self.code, self.message
            ),
            None => format!(
                "Invalid State Machine Definition: '{}: {}'",
                self.code, self.message
            ),
        }
    }
}

const TYPES: &[&str] = &[
    "Task", "Wait", "Pass", "Succeed", "Fail", "Choice", "Parallel", "Map",
];

/// Optimized integrations cumulo runs (service, action) besides `lambda:invoke`, aws-sdk and
/// activities; any other `arn:aws:states:::` resource is refused as AWS refuses an unknown one.
const OPTIMIZED: &[(&str, &str)] = &[
    ("lambda", "invoke"),
    ("sqs", "sendMessage"),
    ("sns", "publish"),
    ("dynamodb", "getItem"),
    ("dynamodb", "putItem"),
    ("dynamodb", "updateItem"),
    ("dynamodb", "deleteItem"),
    ("events", "putEvents"),
    ("states", "startExecution"),
    ("ecs", "runTask"),
];

/// Every problem of a definition (empty: valid).
pub fn check(text: &str, express: bool) -> Vec<Diagnostic> {
    if text.trim().is_empty() {
        return vec![Diagnostic {
            code: "SCHEMA_VALIDATION_FAILED",
            message: "Definition must be a valid JSON object".into(),
            location: None,
        }];
    }
    let def: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return vec![Diagnostic {
                code: "INVALID_JSON_DESCRIPTION",
                message: e.to_string(),
                location: None,
            }];
        }
    };
    if !def.is_object() {
        return vec![Diagnostic {
            code: "SCHEMA_VALIDATION_FAILED",
            message: "Definition must be a valid JSON object".into(),
            location: None,
        }];
    }
    let mut out = Vec::new();
    scope(
        &def,
        "",
        express,
        def.get("QueryLanguage").and_then(Value::as_str) == Some("JSONata"),
        &mut out,
    );
    out
}

fn scope(def: &Value, at: &str, express: bool, jsonata: bool, out: &mut Vec<Diagnostic>) {
    let root = if at.is_empty() {
        "/".to_string()
    } else {
        at.to_string()
    };
    let missing: Vec<&str> = ["States", "StartAt"]
        .into_iter()
        .filter(|k| def.get(*k).is_none())
        .collect();
    if !missing.is_empty() {
        out.push(Diagnostic::schema(
            format!("These fields are required: [{}]", missing.join(", ")),
            root,
        ));
        return;
    }
    let Some(states) = def["States"].as_object() else {
        out.push(Diagnostic::schema(
            "The field 'States' must be an object",
            format!("{at}/States"),
        ));
        return;
    };
    let start = def["StartAt"].as_str().unwrap_or("");
    if !states.contains_key(start) {
        out.push(Diagnostic {
            code: "MISSING_TRANSITION_TARGET",
            message: format!("Missing 'Next' target: {start}"),
            location: Some(format!("{at}/StartAt")),
        });
    }
    for (name, s) in states {
        let loc = format!("{at}/States/{name}");
        let kind = s["Type"].as_str().unwrap_or("");
        if !TYPES.contains(&kind) {
            out.push(Diagnostic::schema(
                format!(
                    "The field 'Type' should have one of these values: [{}]",
                    TYPES.join(", ")
                ),
                format!("{loc}/Type"),
            ));
            continue;
        }
        if jsonata && s.get("QueryLanguage").and_then(Value::as_str) == Some("JSONPath") {
            out.push(Diagnostic::schema(
                "'QueryLanguage' can not be 'JSONPath' if set to 'JSONata' for whole state machine",
                loc.clone(),
            ));
        }
        let state_jsonata = match s.get("QueryLanguage").and_then(Value::as_str) {
            Some(l) => l == "JSONata",
            None => jsonata,
        };
        query_language_fields(s, &loc, state_jsonata, out);
        if state_jsonata {
            jsonata_expressions(s, &loc, out);
        }
        let mut targets: Vec<(&str, String)> = Vec::new();
        if let Some(n) = s["Next"].as_str() {
            targets.push((n, format!("{loc}/Next")));
        }
        if kind == "Choice" {
            if let Some(d) = s["Default"].as_str() {
                targets.push((d, format!("{loc}/Default")));
            }
            for (i, c) in s["Choices"].as_array().into_iter().flatten().enumerate() {
                if let Some(n) = c["Next"].as_str() {
                    targets.push((n, format!("{loc}/Choices[{i}]/Next")));
                }
            }
        }
        for (i, c) in s["Catch"].as_array().into_iter().flatten().enumerate() {
            if let Some(n) = c["Next"].as_str() {
                targets.push((n, format!("{loc}/Catch[{i}]/Next")));
            }
        }
        for (t, l) in targets {
            if !states.contains_key(t) {
                out.push(Diagnostic {
                    code: "MISSING_TRANSITION_TARGET",
                    message: format!("Missing 'Next' target: {t}"),
                    location: Some(l),
                });
            }
        }
        let terminal = matches!(kind, "Succeed" | "Fail" | "Choice");
        if !terminal && s.get("Next").is_none() && s["End"] != Value::Bool(true) {
            out.push(Diagnostic::schema(
                "This state must have either a 'Next' or an 'End' field",
                loc.clone(),
            ));
        }
        match kind {
            "Task" => task(s, &loc, express, jsonata, out),
            "Wait" => {
                if let Some(t) = s.get("Timestamp").and_then(Value::as_str)
                    && !t.starts_with("{%")
                    && super::run::parse_ts(t).is_none()
                {
                    out.push(Diagnostic::schema(
                        "String does not match RFC3339 timestamp",
                        format!("{loc}/Timestamp"),
                    ));
                }
            }
            "Parallel" => match s["Branches"].as_array() {
                Some(b) if !b.is_empty() => {
                    for (i, b) in b.iter().enumerate() {
                        scope(b, &format!("{loc}/Branches[{i}]"), express, jsonata, out);
                    }
                }
                _ => out.push(Diagnostic::schema(
                    "Value cannot be empty",
                    format!("{loc}/Branches"),
                )),
            },
            "Map" => {
                let (field, p) = match s.get("ItemProcessor") {
                    Some(p) => ("ItemProcessor", p),
                    None => ("Iterator", &s["Iterator"]),
                };
                if p.is_object() {
                    scope(p, &format!("{loc}/{field}"), express, jsonata, out);
                } else {
                    out.push(Diagnostic::schema(
                        "These fields are required: [ItemProcessor]",
                        loc.clone(),
                    ));
                }
            }
            _ => {}
        }
        for field in ["Parameters", "ResultSelector", "ItemSelector"] {
            if let Some(t) = s.get(field) {
                paths(t, &format!("{loc}/{field}"), out);
            }
        }
    }
}

/// The fields of the other query language: JSONPath's path fields in a JSONata state, and
/// JSONata's Arguments/Output in a JSONPath state (cumulo's wording: AWS's is not recorded).
fn query_language_fields(s: &Value, loc: &str, jsonata: bool, out: &mut Vec<Diagnostic>) {
    let (foreign, language): (&[&str], &str) = if jsonata {
        (
            &[
                "InputPath",
                "Parameters",
                "ResultSelector",
                "ResultPath",
                "OutputPath",
                "ItemsPath",
                "SecondsPath",
                "TimestampPath",
                "ErrorPath",
                "CausePath",
            ],
            "JSONata",
        )
    } else {
        (&["Arguments", "Output", "Items"], "JSONPath")
    };
    for f in foreign {
        if s.get(*f).is_some() {
            out.push(Diagnostic::schema(
                format!("The field '{f}' is not supported for states that use QueryLanguage '{language}'"),
                format!("{loc}/{f}"),
            ));
        }
    }
    if !jsonata && let Some(rules) = s["Choices"].as_array() {
        for (i, r) in rules.iter().enumerate() {
            if r.get("Condition").is_some() {
                out.push(Diagnostic::schema(
                    "The field 'Condition' is not supported for states that use QueryLanguage 'JSONPath'",
                    format!("{loc}/Choices[{i}]/Condition"),
                ));
            }
        }
    }
}

/// Every `{% %}` expression of a JSONata state parses: AWS refuses one that does not with
/// `INVALID_JSONATA_EXPRESSION`, the parser's message and the field's location (states of a
/// Map's processor or a Parallel's branches are checked as their own scopes).
fn jsonata_expressions(s: &Value, loc: &str, out: &mut Vec<Diagnostic>) {
    fn walk(v: &Value, loc: String, out: &mut Vec<Diagnostic>) {
        match v {
            Value::String(text) => {
                let Some(e) = super::jsonata_states::expression(text) else {
                    return;
                };
                if let Err(message) = super::jsonata::check(e) {
                    out.push(Diagnostic {
                        code: "INVALID_JSONATA_EXPRESSION",
                        message,
                        location: Some(loc),
                    });
                    return;
                }
                for name in super::jsonata::top_level_references(e) {
                    out.push(Diagnostic {
                        code: "UNSUPPORTED_JSONATA_EXPRESSION",
                        message: format!(
                            "Reference to '{name}' at the top level is not supported."
                        ),
                        location: Some(loc.clone()),
                    });
                }
            }
            Value::Object(m) => {
                for (k, x) in m {
                    walk(x, format!("{loc}/{k}"), out);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, format!("{loc}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    for (k, v) in s.as_object().into_iter().flatten() {
        if !matches!(k.as_str(), "ItemProcessor" | "Iterator" | "Branches") {
            walk(v, format!("{loc}/{k}"), out);
        }
    }
}

/// A path with its `$$` (context) or `$name` (variable) root read as `$`, to check its steps.
fn variable_free(s: &str) -> String {
    if let Some(r) = s.strip_prefix("$$") {
        return format!("${r}");
    }
    match s.strip_prefix('$') {
        Some(r) if r.starts_with(|c: char| c.is_alphabetic() || c == '_') => {
            let end = r
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(r.len());
            format!("${}", &r[end..])
        }
        _ => s.to_string(),
    }
}

/// Every `.$` field of a payload template holds a path or an intrinsic call.
fn paths(t: &Value, loc: &str, out: &mut Vec<Diagnostic>) {
    match t {
        Value::Object(m) => {
            for (k, v) in m {
                if k.ends_with(".$") {
                    let ok = v.as_str().is_some_and(|s| {
                        super::intrinsic::is_call(s)
                            || super::path::parse(&variable_free(s)).is_ok()
                    });
                    if !ok {
                        out.push(Diagnostic::schema(
                            format!("The value for the field '{k}' must be a valid JSONPath or a valid intrinsic function call"),
                            loc,
                        ));
                    }
                } else {
                    paths(v, loc, out);
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|v| paths(v, loc, out)),
        _ => {}
    }
}

fn task(s: &Value, loc: &str, express: bool, jsonata: bool, out: &mut Vec<Diagnostic>) {
    let _ = jsonata;
    let arn = s["Resource"].as_str().unwrap_or("");
    let at = format!("{loc}/Resource");
    let unknown = || {
        Diagnostic::schema(
            format!(
                "The resource provided {arn} is not recognized. The value is not a valid resource ARN, or the resource is not available in this region."
            ),
            at.clone(),
        )
    };
    match Resource::parse(arn) {
        None => out.push(unknown()),
        Some(Resource::Activity(_)) if express => out.push(Diagnostic::schema(
            "Express state machine does not support Activity ARN",
            at,
        )),
        Some(Resource::Service {
            service,
            action,
            pattern,
            ..
        }) => {
            if !service.starts_with("aws-sdk:")
                && !OPTIMIZED.contains(&(service.as_str(), action.as_str()))
            {
                out.push(unknown());
            } else if express && pattern == Pattern::WaitForTaskToken {
                out.push(Diagnostic::schema(
                    "Express state machine does not support '.waitForTaskToken' service integration ",
                    at,
                ));
            } else if express && matches!(pattern, Pattern::Sync | Pattern::Sync2) {
                out.push(Diagnostic::schema(
                    "Express state machine does not support '.sync' service integration",
                    at,
                ));
            }
        }
        Some(_) => {}
    }
    if let Some(c) = s.get("Credentials")
        && c.get("RoleArn").is_none()
        && c.get("RoleArn.$").is_none()
    {
        out.push(Diagnostic::schema(
            "The field 'RoleArn' is required but was missing",
            format!("{loc}/Credentials"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(def: &str, express: bool) -> String {
        check(def, express)
            .first()
            .map(Diagnostic::invalid_definition)
            .unwrap_or_default()
    }

    #[test]
    fn malformed_jsonata_is_refused_with_the_parser_message() {
        let def = r#"{"QueryLanguage": "JSONata", "StartAt": "Main", "States": {
            "Main": {"Type": "Pass", "Output": {"v": "{% 1 + %}"}, "Next": "C"},
            "C": {"Type": "Choice", "Choices": [{"Condition": "{% $x = %}", "Next": "Main"}],
                  "Default": "M"},
            "M": {"Type": "Map", "Items": "{% [1, 2] %}", "End": true,
                  "ItemProcessor": {"StartAt": "In", "States": {
                      "In": {"Type": "Pass", "Output": "{% 'open %}", "End": true}}}}}}"#;
        let found: Vec<String> = check(def, false)
            .iter()
            .map(Diagnostic::invalid_definition)
            .collect();
        assert_eq!(
            found,
            [
                "Invalid State Machine Definition: 'INVALID_JSONATA_EXPRESSION: Unexpected end of expression at /States/Main/Output/v'",
                "Invalid State Machine Definition: 'INVALID_JSONATA_EXPRESSION: Unexpected end of expression at /States/C/Choices[0]/Condition'",
                "Invalid State Machine Definition: 'INVALID_JSONATA_EXPRESSION: String literal must be terminated by a matching quote at /States/M/ItemProcessor/States/In/Output'",
            ]
        );
        let jsonpath = r#"{"StartAt": "P", "States": {"P": {"Type": "Pass", "Result": "{% 1 + %}", "End": true}}}"#;
        assert!(check(jsonpath, false).is_empty());
    }

    #[test]
    fn top_level_context_references_are_refused_as_unsupported() {
        let def = r#"{"QueryLanguage": "JSONata", "StartAt": "E", "States": {
            "E": {"Type": "Pass", "Output": {"v": "{% phone %}",
                  "w": "{% $count(items) + $count(items) & $ & $$ %}",
                  "x": "{% $count(*) + $count(**.a) + $count($states.input.*) %}",
                  "fine": "{% $states.input.items[price > 1].(name & %.id) %}",
                  "f": "{% $map($states.input.a, function($x) { $x.b }) %}"}, "End": true}}}"#;
        let found: Vec<String> = check(def, false)
            .iter()
            .map(Diagnostic::invalid_definition)
            .collect();
        let refused = |name: &str, field: &str| {
            format!(
                "Invalid State Machine Definition: 'UNSUPPORTED_JSONATA_EXPRESSION: Reference to '{name}' at the top level is not supported. at /States/E/Output/{field}'"
            )
        };
        assert_eq!(
            found,
            [
                refused("phone", "v"),
                refused("items", "w"),
                refused("$", "w"),
                refused("$$", "w"),
                refused("*", "x"),
                refused("**", "x")
            ]
        );
    }

    #[test]
    fn refuses_in_aws_words() {
        assert_eq!(
            first(r#"{"StartAt": "A"}"#, false),
            "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: These fields are required: [States] at /'"
        );
        assert_eq!(
            check("{}", false)[0].message,
            "These fields are required: [States, StartAt]"
        );
        assert_eq!(
            first(
                r#"{"StartAt": "ExistingButInvalidState", "States": {"ExistingButInvalidState": {"Type": "Nope"}}}"#,
                false
            ),
            "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map] at /States/ExistingButInvalidState/Type'"
        );
        assert_eq!(
            first(
                r#"{"StartAt": "WaitUntil", "States": {"WaitUntil": {"Type": "Wait", "Timestamp": "2016-03-14 01:59:00Z", "End": true}}}"#,
                false
            ),
            "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: String does not match RFC3339 timestamp at /States/WaitUntil/Timestamp'"
        );
        assert_eq!(
            first(
                r#"{"StartAt": "Query", "States": {"Query": {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:query", "End": true}}}"#,
                false
            ),
            "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: The resource provided arn:aws:states:::dynamodb:query is not recognized. The value is not a valid resource ARN, or the resource is not available in this region. at /States/Query/Resource'"
        );
        assert_eq!(
            first(
                r#"{"StartAt": "Publish", "States": {"Publish": {"Type": "Task", "Resource": "arn:aws:states:::sns:publish.waitForTaskToken", "End": true}}}"#,
                true
            ),
            "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Express state machine does not support '.waitForTaskToken' service integration  at /States/Publish/Resource'"
        );
        assert_eq!(
            first(
                r#"{"StartAt": "StateName", "States": {"StateName": {"Type": "Parallel", "Branches": [], "End": true}}}"#,
                false
            ),
            "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: Value cannot be empty at /States/StateName/Branches'"
        );
        assert_eq!(
            check("not a definition", false)[0].code,
            "INVALID_JSON_DESCRIPTION"
        );
        assert!(
            check(
                r#"{"StartAt": "A", "States": {"A": {"Type": "Pass", "End": true}}}"#,
                false
            )
            .is_empty()
        );
    }
}
