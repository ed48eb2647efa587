//! The change-set gate (`cumulo migrate check --changeset`): before a retain patch is executed,
//! prove from `aws cloudformation describe-change-set` output that it does nothing but retain.
//! Every change must be a `Modify` with `Replacement: False` whose details are only the two
//! deletion policies; also allowed, and listed, are a patched nested stack's TemplateURL and
//! the Dynamic `ResourceAttribute` details CloudFormation reports on a resource that GetAtts a
//! resource whose policies change (and the Conditional replacement such a value may report:
//! it does not happen, the value being unchanged). Nested change sets must be supplied and linked to their
//! parent. An empty change set is its own verdict: it proves nothing, so it never passes.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const POLICIES: [&str; 2] = ["DeletionPolicy", "UpdateReplacePolicy"];

/// The gate's answer.
#[derive(Debug, Default, PartialEq)]
pub struct Verdict {
    /// Why the change set must not be executed (exit 1).
    pub violations: Vec<String>,
    /// Details allowed beyond the policies, listed for the reviewer.
    pub allowed: Vec<String>,
    /// Resource changes checked, nested change sets included.
    pub changes: usize,
    /// Change sets checked (the root and its nested ones).
    pub change_sets: usize,
}

/// Why the gate could not decide.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum GateError {
    /// Unusable input (exit 2).
    #[error("{0}")]
    BadInput(String),
    /// The change set has no changes (exit 3).
    #[error("{0}")]
    Empty(String),
}

/// What the manifest says of one stack.
struct Expected {
    resources: BTreeSet<String>,
    /// Retained by the patch and created: each must appear as a policy change.
    must_change: BTreeSet<String>,
    /// Nested stacks by the logical id of their `AWS::CloudFormation::Stack` resource.
    nested: BTreeSet<String>,
}

fn expected(manifest: &Value, stack: &str) -> Result<Expected, GateError> {
    let entry = manifest["stacks"]
        .as_array()
        .and_then(|a| a.iter().find(|s| s["name"] == stack))
        .ok_or_else(|| GateError::BadInput(format!("stack {stack} is not in the manifest")))?;
    if entry["handed_off"] != true {
        return Err(GateError::BadInput(format!(
            "stack {stack} is kept under CloudFormation in the manifest: it has no retain patch to gate"
        )));
    }
    let strings = |v: &Value| -> BTreeSet<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    };
    let resources: Vec<&Value> = entry["resources"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let created: BTreeSet<String> = resources
        .iter()
        .filter(|r| {
            !r["reason"]
                .as_str()
                .unwrap_or_default()
                .starts_with("no physical id")
        })
        .filter_map(|r| r["logical_id"].as_str().map(String::from))
        .collect();
    Ok(Expected {
        must_change: strings(&entry["retain_patch"]["retained"])
            .intersection(&created)
            .cloned()
            .collect(),
        resources: resources
            .iter()
            .filter_map(|r| r["logical_id"].as_str().map(String::from))
            .collect(),
        nested: resources
            .iter()
            .filter(|r| r["type"] == "AWS::CloudFormation::Stack")
            .filter_map(|r| r["logical_id"].as_str().map(String::from))
            .collect(),
    })
}

/// One describe-change-set answer, its pages merged.
struct ChangeSet {
    id: String,
    stack_name: String,
    parent: Option<String>,
    status: String,
    reason: String,
    changes: Vec<Value>,
}

fn change_sets(files: &[(String, Value)]) -> Result<BTreeMap<String, ChangeSet>, GateError> {
    let mut out: BTreeMap<String, ChangeSet> = BTreeMap::new();
    for (path, v) in files {
        let text = |k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        let id = text("ChangeSetId").ok_or_else(|| {
            GateError::BadInput(format!(
                "{path}: not describe-change-set output (no ChangeSetId)"
            ))
        })?;
        let changes = v
            .get("Changes")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(cs) = out.get_mut(&id) {
            cs.changes.extend(changes);
            continue;
        }
        out.insert(
            id.clone(),
            ChangeSet {
                id,
                stack_name: text("StackName").unwrap_or_default(),
                parent: text("ParentChangeSetId"),
                status: text("Status").unwrap_or_default(),
                reason: text("StatusReason").unwrap_or_default(),
                changes,
            },
        );
    }
    Ok(out)
}

/// Gates the change sets in `files` (path, parsed JSON) for `stack` of `manifest`.
pub fn gate(
    files: &[(String, Value)],
    manifest: &Value,
    stack: &str,
) -> Result<Verdict, GateError> {
    let sets = change_sets(files)?;
    let roots: Vec<&ChangeSet> = sets.values().filter(|c| c.parent.is_none()).collect();
    let root = match roots.as_slice() {
        [one] => *one,
        [] => {
            return Err(GateError::BadInput(
                "no root change set among the files (each has a ParentChangeSetId)".into(),
            ));
        }
        _ => {
            let names: Vec<&str> = roots.iter().map(|c| c.stack_name.as_str()).collect();
            return Err(GateError::BadInput(format!(
                "several root change sets: {}",
                names.join(", ")
            )));
        }
    };
    if root.stack_name != stack {
        return Err(GateError::BadInput(format!(
            "the change set is for stack {}, not {stack}",
            root.stack_name
        )));
    }
    let exp = expected(manifest, stack)?;
    let mut verdict = Verdict::default();
    let mut linked = BTreeSet::new();
    check(root, &exp, &sets, manifest, &mut verdict, &mut linked)?;
    for cs in sets
        .values()
        .filter(|c| c.parent.is_some() && !linked.contains(&c.id))
    {
        verdict.violations.push(format!(
            "change set {} ({}) is not linked to a nested stack change of {stack}",
            cs.id, cs.stack_name
        ));
    }
    Ok(verdict)
}

fn check(
    cs: &ChangeSet,
    exp: &Expected,
    sets: &BTreeMap<String, ChangeSet>,
    manifest: &Value,
    verdict: &mut Verdict,
    linked: &mut BTreeSet<String>,
) -> Result<(), GateError> {
    let name = &cs.stack_name;
    if cs.changes.is_empty() {
        return Err(GateError::Empty(format!(
            "{name}: the change set has no changes ({} {}): nothing would be retained, which proves nothing",
            cs.status, cs.reason
        )));
    }
    if cs.status != "CREATE_COMPLETE" {
        return Err(GateError::BadInput(format!(
            "{name}: change set status {} ({})",
            cs.status, cs.reason
        )));
    }
    verdict.change_sets += 1;
    let changes: Vec<&Value> = cs
        .changes
        .iter()
        .filter_map(|c| c.get("ResourceChange"))
        .collect();
    let stable = stable(&changes, exp);
    let mut seen = BTreeSet::new();
    for rc in changes {
        verdict.changes += 1;
        let logical = rc["LogicalResourceId"].as_str().unwrap_or("?");
        let kind = rc["ResourceType"].as_str().unwrap_or("?");
        seen.insert(logical.to_string());
        let mut bad = |why: String| {
            verdict
                .violations
                .push(format!("{name}: {logical} ({kind}): {why}"))
        };
        let action = rc["Action"].as_str().unwrap_or("(none)");
        if action != "Modify" {
            bad(format!("Action {action}, not Modify"));
        }
        let replacement = rc["Replacement"].as_str().unwrap_or("(none)");
        let conditional_ok = replacement == "Conditional" && stable.contains(logical);
        if replacement != "False" && !conditional_ok {
            bad(format!("Replacement {replacement}, not False"));
        }
        if !exp.resources.contains(logical) {
            bad("not a resource of the inventoried stack".into());
        }
        let mut property_details_ok = true;
        let mut any_property_detail = false;
        for d in details(rc) {
            let attribute = d["Target"]["Attribute"].as_str().unwrap_or_default();
            let target_name = d["Target"]["Name"].as_str().unwrap_or_default();
            let source = d["ChangeSource"].as_str().unwrap_or_default();
            let evaluation = d["Evaluation"].as_str().unwrap_or_default();
            let causing = d["CausingEntity"].as_str().unwrap_or_default();
            if attribute == "Properties" {
                any_property_detail = true;
            }
            match classify(d, kind, logical, exp) {
                Detail::Policy => {}
                Detail::PolicyRecreation(r) => {
                    bad(format!("{attribute} change requires recreation {r}"))
                }
                Detail::Nested(what) => verdict.allowed.push(format!("{name}: {logical}: {what}")),
                Detail::Dynamic(cause) if stable.contains(cause) => {
                    let recreation = d["Target"]["RequiresRecreation"]
                        .as_str()
                        .unwrap_or("Never");
                    verdict.allowed.push(format!(
                        "{name}: {logical}: {target_name} (Dynamic, caused by {causing}, whose policies change{})",
                        if recreation == "Never" {
                            String::new()
                        } else {
                            format!("; recreation {recreation} only if it changed, and it does not")
                        }
                    ));
                }
                Detail::Dynamic(_) | Detail::Other => {
                    property_details_ok &= attribute != "Properties";
                    bad(format!(
                        "changes {attribute}{} ({evaluation} {source}{})",
                        if target_name.is_empty() {
                            String::new()
                        } else {
                            format!(" {target_name}")
                        },
                        if causing.is_empty() {
                            String::new()
                        } else {
                            format!(" {causing}")
                        }
                    ));
                }
            }
        }
        for scope in rc["Scope"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let explained = POLICIES.contains(&scope)
                || (scope == "Properties" && any_property_detail && property_details_ok);
            if !explained {
                bad(format!("Scope {scope} is not a deletion policy"));
            }
        }
        // A nested stack's own change set: supplied, linked, and gated against its entry.
        if kind == "AWS::CloudFormation::Stack" {
            match rc["ChangeSetId"].as_str() {
                None => bad("a nested stack change without its nested change set (create the change set with --include-nested-stacks)".into()),
                Some(id) => match sets.get(id) {
                    None => bad(format!("nested change set {id} was not supplied")),
                    Some(nested) if nested.parent.as_deref() != Some(cs.id.as_str()) => {
                        bad(format!("nested change set {id} names another parent"))
                    }
                    Some(nested) => {
                        linked.insert(nested.id.clone());
                        let nested_exp = expected(manifest, &nested.stack_name)?;
                        check(nested, &nested_exp, sets, manifest, verdict, linked)?;
                    }
                },
            }
        }
    }
    for missing in exp.must_change.iter().filter(|m| !seen.contains(*m)) {
        verdict.violations.push(format!(
            "{name}: {missing} is retained by the manifest's patch but the change set does not change it: not the manifest's patch"
        ));
    }
    Ok(())
}

/// What one change detail is, for the gate.
enum Detail<'a> {
    /// DeletionPolicy/UpdateReplacePolicy, never recreating.
    Policy,
    /// A policy change that says it recreates (never seen; refused).
    PolicyRecreation(&'a str),
    /// A patched nested stack's TemplateURL, or CloudFormation's Automatic mark on it.
    Nested(&'static str),
    /// A value known only at execution, caused by this resource (its logical id).
    Dynamic(&'a str),
    Other,
}

fn classify<'a>(d: &'a Value, kind: &str, logical: &str, exp: &Expected) -> Detail<'a> {
    let attribute = d["Target"]["Attribute"].as_str().unwrap_or_default();
    let target_name = d["Target"]["Name"].as_str().unwrap_or_default();
    let source = d["ChangeSource"].as_str().unwrap_or_default();
    let patched_nested = kind == "AWS::CloudFormation::Stack" && exp.nested.contains(logical);
    if POLICIES.contains(&attribute) {
        return match d["Target"]["RequiresRecreation"]
            .as_str()
            .unwrap_or("Never")
        {
            "Never" => Detail::Policy,
            other => Detail::PolicyRecreation(other),
        };
    }
    if attribute != "Properties" {
        return Detail::Other;
    }
    if patched_nested && target_name == "TemplateURL" {
        return Detail::Nested("TemplateURL of a patched nested stack");
    }
    if patched_nested && target_name.is_empty() && source == "Automatic" {
        // CloudFormation's mark on a nested stack whose own template may change: what changes
        // is gated in the nested change set.
        return Detail::Nested("Automatic (its nested change set is gated too)");
    }
    let dynamic = d["Evaluation"].as_str() == Some("Dynamic")
        && matches!(source, "ResourceAttribute" | "ResourceReference");
    match d["CausingEntity"].as_str() {
        Some(causing) if dynamic => Detail::Dynamic(causing.split('.').next().unwrap_or_default()),
        _ => Detail::Other,
    }
}

/// The resources that will not change but for their policies: those whose details are all
/// policies (or a patched nested stack's), then, until nothing is added, those whose other
/// details are Dynamic values caused by such a resource. A value caused by a resource that
/// only changes its policies is the value it has now, so a replacement it makes
/// "Conditional" does not happen.
fn stable<'a>(changes: &[&'a Value], exp: &Expected) -> BTreeSet<&'a str> {
    let mut stable: BTreeSet<&str> = BTreeSet::new();
    loop {
        let before = stable.len();
        for rc in changes {
            let logical = rc["LogicalResourceId"].as_str().unwrap_or_default();
            let kind = rc["ResourceType"].as_str().unwrap_or_default();
            if stable.contains(logical) || rc["Action"].as_str() != Some("Modify") {
                continue;
            }
            let settled = details(rc).all(|d| match classify(d, kind, logical, exp) {
                Detail::Policy | Detail::Nested(_) => true,
                Detail::Dynamic(cause) => cause != logical && stable.contains(cause),
                Detail::PolicyRecreation(_) | Detail::Other => false,
            });
            if settled {
                stable.insert(logical);
            }
        }
        if stable.len() == before {
            return stable;
        }
    }
}

fn details(rc: &Value) -> impl Iterator<Item = &Value> {
    rc["Details"].as_array().into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn manifest() -> Value {
        json!({"stacks": [
            {"name": "app", "handed_off": true, "retain_patch": {"retained": ["Bucket", "Fn", "Nested"]},
             "resources": [
                {"logical_id": "Bucket", "type": "AWS::S3::Bucket", "reason": ""},
                {"logical_id": "Fn", "type": "AWS::Lambda::Function", "reason": ""},
                {"logical_id": "Nested", "type": "AWS::CloudFormation::Stack", "reason": ""}]},
            {"name": "app-Nested-1", "handed_off": true, "parent": "app", "retain_patch": {"retained": ["Queue"]},
             "resources": [{"logical_id": "Queue", "type": "AWS::SQS::Queue", "reason": ""}]},
            {"name": "kept", "handed_off": false}
        ]})
    }

    fn policy(logical: &str, kind: &str) -> Value {
        json!({"Type": "Resource", "ResourceChange": {
            "Action": "Modify", "LogicalResourceId": logical, "ResourceType": kind, "Replacement": "False",
            "Scope": ["DeletionPolicy", "UpdateReplacePolicy"],
            "Details": [
                {"Target": {"Attribute": "DeletionPolicy", "RequiresRecreation": "Never"}, "Evaluation": "Static", "ChangeSource": "DirectModification"},
                {"Target": {"Attribute": "UpdateReplacePolicy", "RequiresRecreation": "Never"}, "Evaluation": "Static", "ChangeSource": "DirectModification"}]}})
    }

    fn root(changes: Vec<Value>) -> (String, Value) {
        (
            "cs.json".into(),
            json!({"ChangeSetId": "cs-root", "StackName": "app", "Status": "CREATE_COMPLETE", "Changes": changes}),
        )
    }

    fn nested_stack_change(with_dynamic: bool) -> Value {
        let mut details = vec![
            json!({"Target": {"Attribute": "DeletionPolicy", "RequiresRecreation": "Never"}, "Evaluation": "Static", "ChangeSource": "DirectModification"}),
            json!({"Target": {"Attribute": "Properties", "Name": "TemplateURL", "RequiresRecreation": "Never"}, "Evaluation": "Static", "ChangeSource": "DirectModification"}),
        ];
        if with_dynamic {
            details.push(json!({"Target": {"Attribute": "Properties", "Name": "Parameters", "RequiresRecreation": "Never"}, "Evaluation": "Dynamic", "ChangeSource": "ResourceAttribute", "CausingEntity": "Fn.Arn"}));
            details.push(json!({"Target": {"Attribute": "Properties", "RequiresRecreation": "Never"}, "Evaluation": "Dynamic", "ChangeSource": "Automatic"}));
        }
        json!({"Type": "Resource", "ResourceChange": {
            "Action": "Modify", "LogicalResourceId": "Nested", "ResourceType": "AWS::CloudFormation::Stack",
            "Replacement": "False", "ChangeSetId": "cs-nested", "Scope": ["DeletionPolicy", "Properties"], "Details": details}})
    }

    fn nested_file() -> (String, Value) {
        (
            "nested.json".into(),
            json!({"ChangeSetId": "cs-nested", "StackName": "app-Nested-1", "ParentChangeSetId": "cs-root",
            "Status": "CREATE_COMPLETE", "Changes": [policy("Queue", "AWS::SQS::Queue")]}),
        )
    }

    fn full() -> Vec<(String, Value)> {
        vec![
            root(vec![
                policy("Bucket", "AWS::S3::Bucket"),
                policy("Fn", "AWS::Lambda::Function"),
                nested_stack_change(true),
            ]),
            nested_file(),
        ]
    }

    #[test]
    fn a_policy_only_change_set_with_its_nested_one_passes_and_lists_what_it_allowed() {
        let v = gate(&full(), &manifest(), "app").unwrap();
        assert_eq!(v.violations, Vec::<String>::new());
        assert_eq!((v.changes, v.change_sets), (4, 2));
        assert_eq!(v.allowed.len(), 3, "{:?}", v.allowed);
        assert!(v.allowed[1].contains("caused by Fn.Arn"));
    }

    #[test]
    fn anything_more_than_retaining_is_a_violation_naming_it() {
        let mut files = full();
        let tampered = &mut files[0].1["Changes"][0]["ResourceChange"];
        tampered["Replacement"] = json!("True");
        tampered["Details"].as_array_mut().unwrap().push(json!({"Target": {"Attribute": "Properties", "Name": "BucketName", "RequiresRecreation": "Always"}, "Evaluation": "Static", "ChangeSource": "DirectModification"}));
        tampered["Scope"]
            .as_array_mut()
            .unwrap()
            .push(json!("Properties"));
        let v = gate(&files, &manifest(), "app").unwrap();
        let text = v.violations.join("\n");
        assert!(
            text.contains("Bucket (AWS::S3::Bucket): Replacement True"),
            "{text}"
        );
        assert!(text.contains("changes Properties BucketName"), "{text}");
        assert!(text.contains("Scope Properties"), "{text}");

        let mut files = full();
        files[0].1["Changes"][1]["ResourceChange"]["Action"] = json!("Remove");
        let v = gate(&files, &manifest(), "app").unwrap();
        assert!(
            v.violations
                .iter()
                .any(|x| x.contains("Fn (AWS::Lambda::Function): Action Remove")),
            "{v:?}"
        );

        // A Dynamic detail caused by a resource whose policies do not change.
        let mut files = full();
        files[0].1["Changes"][2]["ResourceChange"]["Details"][2]["CausingEntity"] =
            json!("Other.Arn");
        let v = gate(&files, &manifest(), "app").unwrap();
        assert!(
            v.violations
                .iter()
                .any(|x| x.contains("Parameters (Dynamic ResourceAttribute Other.Arn)")),
            "{v:?}"
        );
    }

    #[test]
    fn a_conditional_replacement_through_values_of_policy_only_resources_is_allowed() {
        // Fn GetAtts Bucket (policy-only): Dynamic, createOnly, so CloudFormation says
        // Conditional; Nested refers to Fn: stable in turn.
        let dynamic = |cause: &str, source: &str, recreation: &str| json!({"Target": {"Attribute": "Properties", "Name": "X", "RequiresRecreation": recreation}, "Evaluation": "Dynamic", "ChangeSource": source, "CausingEntity": cause});
        let mut fn_change = policy("Fn", "AWS::Lambda::Function");
        fn_change["ResourceChange"]["Replacement"] = json!("Conditional");
        fn_change["ResourceChange"]["Scope"]
            .as_array_mut()
            .unwrap()
            .push(json!("Properties"));
        fn_change["ResourceChange"]["Details"]
            .as_array_mut()
            .unwrap()
            .push(dynamic("Bucket.Arn", "ResourceAttribute", "Always"));
        let mut nested = nested_stack_change(false);
        nested["ResourceChange"]["Details"]
            .as_array_mut()
            .unwrap()
            .push(dynamic("Fn", "ResourceReference", "Never"));
        let files = vec![
            root(vec![
                policy("Bucket", "AWS::S3::Bucket"),
                fn_change.clone(),
                nested,
            ]),
            nested_file(),
        ];
        let v = gate(&files, &manifest(), "app").unwrap();
        assert_eq!(v.violations, Vec::<String>::new());
        assert!(
            v.allowed
                .iter()
                .any(|a| a.contains("Fn: X (Dynamic, caused by Bucket.Arn")
                    && a.contains("recreation Always only if it changed")),
            "{:?}",
            v.allowed
        );
        // With a static property change beside it, the Conditional replacement is refused.
        fn_change["ResourceChange"]["Details"].as_array_mut().unwrap().push(json!({"Target": {"Attribute": "Properties", "Name": "Code", "RequiresRecreation": "Never"}, "Evaluation": "Static", "ChangeSource": "DirectModification"}));
        let files = vec![
            root(vec![
                policy("Bucket", "AWS::S3::Bucket"),
                fn_change,
                nested_stack_change(false),
            ]),
            nested_file(),
        ];
        let v = gate(&files, &manifest(), "app").unwrap();
        assert!(
            v.violations
                .iter()
                .any(|x| x
                    .contains("Fn (AWS::Lambda::Function): Replacement Conditional, not False")),
            "{v:?}"
        );
    }

    #[test]
    fn nested_change_sets_must_be_supplied_and_linked() {
        let v = gate(&full()[..1], &manifest(), "app").unwrap();
        assert!(
            v.violations
                .iter()
                .any(|x| x.contains("cs-nested was not supplied")),
            "{v:?}"
        );
        let mut files = full();
        files.push(("stray.json".into(), json!({"ChangeSetId": "cs-x", "StackName": "x", "ParentChangeSetId": "cs-other", "Status": "CREATE_COMPLETE", "Changes": [policy("Q", "AWS::SQS::Queue")]})));
        let v = gate(&files, &manifest(), "app").unwrap();
        assert!(
            v.violations
                .iter()
                .any(|x| x.contains("cs-x (x) is not linked")),
            "{v:?}"
        );
    }

    #[test]
    fn a_change_set_missing_a_patched_resource_is_not_the_patch() {
        let files = vec![
            root(vec![
                policy("Bucket", "AWS::S3::Bucket"),
                nested_stack_change(false),
            ]),
            nested_file(),
        ];
        let v = gate(&files, &manifest(), "app").unwrap();
        assert!(
            v.violations
                .iter()
                .any(|x| x.contains("Fn is retained by the manifest's patch")),
            "{v:?}"
        );
    }

    #[test]
    fn empty_and_unusable_input() {
        let empty = vec![(
            "e.json".into(),
            json!({"ChangeSetId": "c", "StackName": "app", "Status": "FAILED",
            "StatusReason": "The submitted information didn't contain changes.", "Changes": []}),
        )];
        assert!(matches!(
            gate(&empty, &manifest(), "app"),
            Err(GateError::Empty(_))
        ));
        assert!(
            matches!(gate(&full(), &manifest(), "other"), Err(GateError::BadInput(m)) if m.contains("not other"))
        );
        assert!(matches!(
            gate(&[("x".into(), json!({}))], &manifest(), "app"),
            Err(GateError::BadInput(_))
        ));
        let kept = vec![(
            "k".into(),
            json!({"ChangeSetId": "c", "StackName": "kept", "Status": "CREATE_COMPLETE", "Changes": [policy("A", "AWS::S3::Bucket")]}),
        )];
        assert!(
            matches!(gate(&kept, &manifest(), "kept"), Err(GateError::BadInput(m)) if m.contains("kept under"))
        );
    }
}
