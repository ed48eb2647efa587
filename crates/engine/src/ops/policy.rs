//! Stack policies: which update actions (`Update:Modify`, `Update:Replace`, `Update:Delete`)
//! a stack update may take on which resources. As in AWS: no policy allows everything; once a
//! policy is set, an action is allowed only by an `Allow` statement that matches it and no
//! `Deny` statement that matches it; the policy applies to updates only (never to create or
//! DeleteStack).

use crate::api::{Caller, GetStackPolicyOutput, RollbackConfiguration, SetStackPolicyInput};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::ops::common::find_live;
use serde_json::Value;

/// AWS's cap on a stack policy body.
const MAX_POLICY_BYTES: usize = 16_384;

/// Checks a policy document before it is stored (SetStackPolicy, CreateStack, UpdateStack).
pub(crate) fn validate(body: &str) -> Result<(), EngineError> {
    let invalid =
        |why: &str| EngineError::validation(format!("Error validating stack policy: {why}"));
    if body.len() > MAX_POLICY_BYTES {
        return Err(EngineError::validation(format!(
            "1 validation error detected: Value at 'stackPolicyBody' failed to satisfy constraint: Member must have length less than or equal to {MAX_POLICY_BYTES}"
        )));
    }
    let doc: Value =
        serde_json::from_str(body).map_err(|e| invalid(&format!("Invalid JSON: {e}")))?;
    let statements = statements(&doc).ok_or_else(|| invalid("Statement is missing"))?;
    for st in statements {
        let Some(st) = st.as_object() else {
            return Err(invalid("a Statement must be an object"));
        };
        match st.get("Effect").and_then(Value::as_str) {
            Some("Allow" | "Deny") => {}
            _ => return Err(invalid("Effect must be Allow or Deny")),
        }
        if st.contains_key("Action") == st.contains_key("NotAction") {
            return Err(invalid(
                "a Statement needs exactly one of Action and NotAction",
            ));
        }
        if st.contains_key("Resource") == st.contains_key("NotResource") {
            return Err(invalid(
                "a Statement needs exactly one of Resource and NotResource",
            ));
        }
        if !st.contains_key("Principal") {
            return Err(invalid("Principal is missing"));
        }
    }
    Ok(())
}

/// The policy given as a body or a URL (read from the emulator's S3), validated; `what` is the
/// parameter pair's name (`StackPolicy`, `StackPolicyDuringUpdate`).
pub(crate) async fn given(
    engine: &Engine,
    caller: &Caller,
    body: Option<&str>,
    url: Option<&str>,
    what: &str,
) -> Result<Option<String>, EngineError> {
    let text = match (body, url) {
        (Some(_), Some(_)) => {
            return Err(EngineError::validation(format!(
                "You cannot specify both {what}URL and {what}Body"
            )));
        }
        (Some(b), None) => b.to_string(),
        (None, Some(u)) => engine
            .inner
            .world
            .fetch_template(&caller.region, u)
            .await
            .map_err(EngineError::validation)?,
        (None, None) => return Ok(None),
    };
    validate(&text)?;
    Ok(Some(text))
}

/// Rollback triggers watch CloudWatch alarms and a monitoring period waits on them; cumulo
/// emulates neither, so a configuration that asks for either is refused rather than ignored.
/// An empty one is stored and shown as given.
pub(crate) fn check_rollback_configuration(
    c: Option<&RollbackConfiguration>,
) -> Result<(), EngineError> {
    let Some(c) = c else { return Ok(()) };
    if let Some(m) = c.monitoring_time_in_minutes
        && !(0..=180).contains(&m)
    {
        return Err(EngineError::validation(format!(
            "1 validation error detected: Value '{m}' at 'rollbackConfiguration.monitoringTimeInMinutes' failed to satisfy constraint: Member must have value less than or equal to 180"
        )));
    }
    if !c.rollback_triggers.is_empty() || c.monitoring_time_in_minutes.unwrap_or(0) > 0 {
        return Err(EngineError::validation(
            "cumulo: RollbackConfiguration with RollbackTriggers or a MonitoringTimeInMinutes is not supported (CloudWatch alarms are not emulated)",
        ));
    }
    Ok(())
}

/// SetStackPolicy.
pub async fn set_stack_policy(
    engine: &Engine,
    caller: &Caller,
    input: SetStackPolicyInput,
) -> Result<(), EngineError> {
    let policy = given(
        engine,
        caller,
        input.stack_policy_body.as_deref(),
        input.stack_policy_url.as_deref(),
        "StackPolicy",
    )
    .await?;
    let Some(policy) = policy else {
        return Err(EngineError::validation(
            "Either StackPolicyBody or StackPolicyURL must be specified",
        ));
    };
    let mut st = engine.inner.lock();
    let id = find_live(&st, caller, &input.stack_name)?.stack_id.clone();
    let Some(stack) = st.stacks.get_mut(&id) else {
        return Err(EngineError::stack_not_found(&input.stack_name));
    };
    let before = stack.stack_policy.replace(policy);
    if let Err(e) = engine.inner.save_stack(stack) {
        stack.stack_policy = before;
        return Err(e);
    }
    Ok(())
}

/// GetStackPolicy: the body as set, absent when the stack has none.
pub async fn get_stack_policy(
    engine: &Engine,
    caller: &Caller,
    stack_name: &str,
) -> Result<GetStackPolicyOutput, EngineError> {
    let st = engine.inner.lock();
    let stack = find_live(&st, caller, stack_name)?;
    Ok(GetStackPolicyOutput {
        stack_policy_body: stack.stack_policy.clone(),
    })
}

fn statements(doc: &Value) -> Option<Vec<&Value>> {
    match doc.get("Statement")? {
        Value::Array(a) => Some(a.iter().collect()),
        v @ Value::Object(_) => Some(vec![v]),
        _ => None,
    }
}

/// Strings of a policy field that may be a string or a list of them.
fn strings(v: Option<&Value>) -> Vec<&str> {
    match v {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// `*` and `?` wildcards, as policy patterns use them.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn matches_any(patterns: &[&str], text: &str) -> bool {
    patterns.iter().any(|p| glob(p, text))
}

/// Whether a statement's Action/Resource/Condition cover this action on this resource.
fn applies(st: &Value, action: &str, resource: &str, resource_type: &str) -> bool {
    let action_ok = match st.get("Action") {
        Some(a) => matches_any(&strings(Some(a)), action),
        None => !matches_any(&strings(st.get("NotAction")), action),
    };
    let resource_ok = match st.get("Resource") {
        Some(r) => matches_any(&strings(Some(r)), resource),
        None => !matches_any(&strings(st.get("NotResource")), resource),
    };
    action_ok && resource_ok && condition_ok(st.get("Condition"), resource_type)
}

/// `StringEquals` / `StringLike` (and their negations) on `ResourceType`, the only condition
/// key stack policies have.
fn condition_ok(condition: Option<&Value>, resource_type: &str) -> bool {
    let Some(Value::Object(ops)) = condition else {
        return true;
    };
    ops.iter().all(|(op, keys)| {
        let values = strings(keys.get("ResourceType"));
        if values.is_empty() {
            return true;
        }
        match op.as_str() {
            "StringEquals" => values.contains(&resource_type),
            "StringNotEquals" => !values.contains(&resource_type),
            "StringLike" => matches_any(&values, resource_type),
            "StringNotLike" => !matches_any(&values, resource_type),
            _ => true,
        }
    })
}

/// `Ok` when `policy` lets an update take `action` (`Update:Modify`, `Update:Replace`,
/// `Update:Delete`) on the resource; otherwise the reason AWS gives the resource.
pub(crate) fn check(
    policy: Option<&str>,
    logical_id: &str,
    resource_type: &str,
    action: &str,
) -> Result<(), String> {
    let Some(policy) = policy else {
        return Ok(());
    };
    let resource = format!("LogicalResourceId/{logical_id}");
    let doc: Value = serde_json::from_str(policy).unwrap_or(Value::Null);
    let statements = statements(&doc).unwrap_or_default();
    let mut allowed = false;
    for (i, st) in statements.iter().enumerate() {
        if !applies(st, action, &resource, resource_type) {
            continue;
        }
        match st.get("Effect").and_then(Value::as_str) {
            Some("Deny") => {
                return Err(format!(
                    "Action denied by stack policy: Statement [#{}] does not allow [{action}] for resource [{resource}]",
                    i + 1
                ));
            }
            Some("Allow") => allowed = true,
            _ => {}
        }
    }
    if allowed {
        Ok(())
    } else {
        Err(format!(
            "Action not allowed by stack policy: no statement allows [{action}] for resource [{resource}]"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROTECT_DB: &str = r#"{"Statement":[
        {"Effect":"Allow","Action":"Update:*","Principal":"*","Resource":"*"},
        {"Effect":"Deny","Action":["Update:Replace","Update:Delete"],"Principal":"*","Resource":"LogicalResourceId/Db*"}
    ]}"#;

    #[test]
    fn explicit_deny_wins_and_names_the_statement() {
        validate(PROTECT_DB).unwrap();
        let p = Some(PROTECT_DB);
        assert!(check(p, "DbMain", "AWS::SQS::Queue", "Update:Modify").is_ok());
        assert_eq!(
            check(p, "DbMain", "AWS::SQS::Queue", "Update:Replace").unwrap_err(),
            "Action denied by stack policy: Statement [#2] does not allow [Update:Replace] for resource [LogicalResourceId/DbMain]"
        );
        assert!(check(p, "Other", "AWS::SQS::Queue", "Update:Delete").is_ok());
        assert!(check(None, "DbMain", "AWS::SQS::Queue", "Update:Delete").is_ok());
    }

    #[test]
    fn a_policy_denies_what_it_does_not_allow_and_conditions_on_type() {
        let p = r#"{"Statement":{"Effect":"Allow","Action":"Update:Modify","Principal":"*","NotResource":"LogicalResourceId/Keep",
            "Condition":{"StringLike":{"ResourceType":["AWS::SQS::*"]}}}}"#;
        validate(p).unwrap();
        assert!(check(Some(p), "Q", "AWS::SQS::Queue", "Update:Modify").is_ok());
        assert!(check(Some(p), "Keep", "AWS::SQS::Queue", "Update:Modify").is_err());
        assert!(
            check(Some(p), "T", "AWS::SNS::Topic", "Update:Modify")
                .unwrap_err()
                .starts_with("Action not allowed by stack policy")
        );
        assert!(check(Some(p), "Q", "AWS::SQS::Queue", "Update:Replace").is_err());
    }

    #[test]
    fn malformed_policies_are_refused() {
        for bad in [
            "not json",
            "{}",
            r#"{"Statement":[{"Effect":"Maybe","Action":"*","Principal":"*","Resource":"*"}]}"#,
            r#"{"Statement":[{"Effect":"Allow","Principal":"*","Resource":"*"}]}"#,
        ] {
            let e = validate(bad).unwrap_err();
            assert!(
                e.message.starts_with("Error validating stack policy"),
                "{}",
                e.message
            );
        }
    }
}
