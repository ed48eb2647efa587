//! Each SAM resource type's translation: functions (`function`), APIs (`api`), and here the
//! simple ones: SimpleTable, LayerVersion, Application and StateMachine.

use crate::function::{self, s3_pointer};
use crate::intrinsics::resolve_params;
use crate::policies::{self, RoleSpec};
use crate::pyjson;
use crate::resource::{Res, Sam, is_intrinsic, tag_list, truthy};
use crate::{Translation, api, invalid, unsupported};
use serde_json::{Map, Value, json};

/// Translates one SAM resource into the resources that replace it.
pub fn translate(
    t: &mut Translation,
    id: &str,
    r: &Value,
    live: &mut Map<String, Value>,
) -> Result<Vec<Res>, Vec<String>> {
    let one = |e: String| vec![e];
    let mut sam = Sam::from(id, r).map_err(one)?;
    match sam.ty {
        "AWS::Serverless::Function" => function::translate(t, &mut sam, live).map_err(one),
        "AWS::Serverless::SimpleTable" => simple_table(&sam).map_err(one),
        "AWS::Serverless::LayerVersion" => layer_version(t, &sam).map_err(one),
        "AWS::Serverless::Application" => application(&sam).map_err(one),
        "AWS::Serverless::StateMachine" => state_machine(t, &mut sam).map_err(one),
        "AWS::Serverless::Api" => crate::rest_api::translate(t, &sam).map_err(one),
        "AWS::Serverless::HttpApi" => api::translate(t, &sam).map_err(one),
        other => Err(one(unsupported(id, other))),
    }
}

fn simple_table(sam: &Sam) -> Result<Vec<Res>, String> {
    sam.check_known(&[
        "PointInTimeRecoverySpecification",
        "PrimaryKey",
        "ProvisionedThroughput",
        "TableName",
        "Tags",
        "SSESpecification",
    ])?;
    let mut table = sam.main("AWS::DynamoDB::Table");
    let key = match sam.get("PrimaryKey") {
        Some(pk) if truthy(Some(pk)) => {
            let name = pk
                .get("Name")
                .filter(|v| !v.is_null())
                .ok_or_else(|| invalid(sam.id, "Property 'PrimaryKey.Name' is required."))?;
            let ty = pk
                .get("Type")
                .filter(|v| !v.is_null())
                .ok_or_else(|| invalid(sam.id, "Property 'PrimaryKey.Type' is required."))?;
            let ty = match ty.as_str() {
                Some("String") => "S",
                Some("Number") => "N",
                Some("Binary") => "B",
                _ => {
                    let shown = ty.as_str().map_or_else(|| ty.to_string(), str::to_string);
                    return Err(invalid(sam.id, format!("Invalid 'Type' \"{shown}\".")));
                }
            };
            json!({"AttributeName": name, "AttributeType": ty})
        }
        _ => json!({"AttributeName": "id", "AttributeType": "S"}),
    };
    table.put(
        "KeySchema",
        json!([{"AttributeName": key["AttributeName"], "KeyType": "HASH"}]),
    );
    table.put("AttributeDefinitions", json!([key]));
    if truthy(sam.get("PointInTimeRecoverySpecification")) {
        table.set(
            "PointInTimeRecoverySpecification",
            sam.cloned("PointInTimeRecoverySpecification"),
        );
    }
    if truthy(sam.get("ProvisionedThroughput")) {
        table.set("ProvisionedThroughput", sam.cloned("ProvisionedThroughput"));
    } else {
        table.put("BillingMode", json!("PAY_PER_REQUEST"));
    }
    if truthy(sam.get("SSESpecification")) {
        table.set("SSESpecification", sam.cloned("SSESpecification"));
    }
    if truthy(sam.get("TableName")) {
        table.set("TableName", sam.cloned("TableName"));
    }
    if let Some(Value::Object(tags)) = sam.get("Tags")
        && !tags.is_empty()
    {
        table.put("Tags", Value::Array(tag_list(tags)));
    }
    Ok(vec![table])
}

const LAYER_PROPERTIES: [&str; 8] = [
    "LayerName",
    "Description",
    "PublishLambdaVersion",
    "ContentUri",
    "CompatibleArchitectures",
    "CompatibleRuntimes",
    "LicenseInfo",
    "RetentionPolicy",
];

/// A string property resolved from a parameter where it names one (the translator's
/// `resolve_string_parameter_in_resource`).
fn resolved_string(t: &Translation, sam: &Sam, name: &str) -> Result<Option<Value>, String> {
    let Some(v) = sam.get(name) else {
        return Ok(None);
    };
    let r = resolve_params(v, &t.params);
    if is_intrinsic(v) && !r.is_string() && !is_intrinsic(&r) {
        return Err(invalid(
            sam.id,
            format!("Could not resolve parameter for '{name}' or parameter is not a String."),
        ));
    }
    Ok(Some(r))
}

fn layer_version(t: &mut Translation, sam: &Sam) -> Result<Vec<Res>, String> {
    sam.check_known(&LAYER_PROPERTIES)?;
    let mut props = sam.props.clone();
    for p in ["LayerName", "LicenseInfo", "Description", "RetentionPolicy"] {
        if let Some(v) = resolved_string(t, sam, p)? {
            props.insert(p.to_string(), v);
        }
    }
    let options = "['Retain', 'Delete']";
    let retention = match props.get("RetentionPolicy").filter(|v| !v.is_null()) {
        None => None,
        Some(v) if is_intrinsic(v) => {
            return Err(invalid(
                sam.id,
                format!(
                    "'RetentionPolicy' does not accept intrinsic functions, please use one of the following options: {options}"
                ),
            ));
        }
        Some(Value::String(s)) => match s.to_ascii_lowercase().as_str() {
            "retain" => Some("Retain"),
            "delete" => Some("Delete"),
            _ => {
                return Err(invalid(
                    sam.id,
                    format!("'RetentionPolicy' must be one of the following options: {options}."),
                ));
            }
        },
        Some(_) => {
            return Err(invalid(
                sam.id,
                format!(
                    "Invalid 'RetentionPolicy' type, please use one of the following options: {options}"
                ),
            ));
        }
    };
    let content = sam
        .get("ContentUri")
        .ok_or_else(|| invalid(sam.id, "Missing required property 'ContentUri'."))?;
    let mut attrs = sam.passthrough();
    if !attrs.contains_key("DeletionPolicy") {
        attrs.insert("DeletionPolicy".into(), json!("Retain"));
    }
    if let Some(r) = retention {
        attrs.insert("DeletionPolicy".into(), json!(r));
    }
    // The hash is of the SAM resource as the translator holds it: Type, DependsOn, its
    // attributes but DeletionPolicy, UpdateReplacePolicy and Metadata, and its properties.
    let mut hashed = Map::new();
    hashed.insert("Type".into(), json!(sam.ty));
    if let Some(d) = &sam.depends_on {
        hashed.insert("DependsOn".into(), d.clone());
    }
    for (k, v) in &sam.attrs {
        if !matches!(
            k.as_str(),
            "DeletionPolicy" | "UpdateReplacePolicy" | "Metadata"
        ) {
            hashed.insert(k.clone(), v.clone());
        }
    }
    let hashed_props: Map<String, Value> = props
        .iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    hashed.insert("Properties".into(), Value::Object(hashed_props));
    let mut wrapper = Map::new();
    wrapper.insert(sam.id.to_string(), Value::Object(hashed));
    let new_id = format!("{}{}", sam.id, pyjson::hash(&Value::Object(wrapper)));
    let mut layer = Res::new(&new_id, "AWS::Lambda::LayerVersion", attrs);
    layer.depends_on = sam.depends_on.clone();
    let name = props
        .get("LayerName")
        .filter(|v| truthy(Some(v)))
        .cloned()
        .unwrap_or_else(|| json!(sam.id));
    layer.put("LayerName", name);
    layer.set("Description", props.get("Description").cloned());
    let (bucket, key, version) = s3_pointer(&new_id, content, "ContentUri")?;
    let mut c = json!({"S3Bucket": bucket, "S3Key": key});
    if let Some(v) = version {
        c["S3ObjectVersion"] = v;
    }
    layer.put("Content", c);
    layer.set(
        "CompatibleArchitectures",
        props.get("CompatibleArchitectures").cloned(),
    );
    if let Some(Value::Array(archs)) = props.get("CompatibleArchitectures") {
        for a in archs {
            if !is_intrinsic(a) && a != "arm64" && a != "x86_64" {
                return Err(invalid(
                    &new_id,
                    "CompatibleArchitectures needs to be a list of 'x86_64' or 'arm64'",
                ));
            }
        }
    }
    layer.set(
        "CompatibleRuntimes",
        props.get("CompatibleRuntimes").cloned(),
    );
    layer.set("LicenseInfo", props.get("LicenseInfo").cloned());
    t.renamed.insert(sam.id.to_string(), json!(new_id));
    Ok(vec![layer])
}

fn application(sam: &Sam) -> Result<Vec<Res>, String> {
    sam.check_known(&[
        "Location",
        "TemplateUrl",
        "Parameters",
        "NotificationARNs",
        "Tags",
        "TimeoutInMinutes",
    ])?;
    let location = sam.get("Location").ok_or_else(|| {
        invalid(
            sam.id,
            "Resource is missing the required [Location] property.",
        )
    })?;
    let url = match location {
        Value::Object(l) => {
            if !l.contains_key("ApplicationId") {
                return Err(invalid(
                    sam.id,
                    "Resource is missing the required [ApplicationId] property.",
                ));
            }
            if !l.contains_key("SemanticVersion") {
                return Err(invalid(
                    sam.id,
                    "Resource is missing the required [SemanticVersion] property.",
                ));
            }
            return Err(unsupported(
                sam.id,
                "An application from the Serverless Application Repository (Location.ApplicationId)",
            ));
        }
        other => other.clone(),
    };
    let mut stack = Res::new(sam.id, "AWS::CloudFormation::Stack", sam.passthrough());
    stack.depends_on = sam.depends_on.clone();
    stack.set("Parameters", sam.cloned("Parameters"));
    stack.set("NotificationARNs", sam.cloned("NotificationARNs"));
    stack.put("Tags", sam.tag_list(&[])?);
    stack.set("TimeoutInMinutes", sam.cloned("TimeoutInMinutes"));
    let url = if truthy(Some(&url)) { url } else { json!("") };
    stack.put("TemplateURL", url);
    Ok(vec![stack])
}

const STATE_MACHINE_PROPERTIES: [&str; 18] = [
    "Definition",
    "DefinitionUri",
    "Logging",
    "Role",
    "RolePath",
    "DefinitionSubstitutions",
    "Events",
    "Name",
    "Type",
    "Tags",
    "PropagateTags",
    "Policies",
    "Tracing",
    "PermissionsBoundary",
    "AutoPublishAlias",
    "DeploymentPreference",
    "UseAliasAsEventTarget",
    "Connectors",
];

fn is_dynamic_reference(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.starts_with("{{resolve:") && s.ends_with("}}"))
}

/// Replaces every intrinsic (and dynamic reference) in a definition with
/// `${definition_substitution_N}`, keys visited in sorted order as the translator does.
fn substitute_dynamic(v: &mut Value, subs: &mut Map<String, Value>) {
    let mut keys: Vec<Value> = match v {
        Value::Object(o) => o.keys().map(|k| json!(k)).collect(),
        Value::Array(items) => (0..items.len()).map(|i| json!(i)).collect(),
        _ => return,
    };
    if v.is_object() {
        keys.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
    }
    for k in keys {
        let child = match (&mut *v, &k) {
            (Value::Object(o), Value::String(k)) => o.get_mut(k),
            (Value::Array(items), Value::Number(i)) => {
                i.as_u64().and_then(|i| items.get_mut(i as usize))
            }
            _ => None,
        };
        let Some(child) = child else { continue };
        if is_intrinsic(child) || is_dynamic_reference(child) {
            let n = subs.len() + 1;
            subs.insert(format!("definition_substitution_{n}"), child.take());
            *child = json!(format!("${{definition_substitution_{n}}}"));
        } else if child.is_object() || child.is_array() {
            substitute_dynamic(child, subs);
        }
    }
}

fn state_machine(t: &mut Translation, sam: &mut Sam) -> Result<Vec<Res>, String> {
    sam.check_known(&STATE_MACHINE_PROPERTIES[..17])?;

    if let Some(p) = policies::expand_templates(sam.id, sam.get("Policies"))? {
        sam.props.insert("Policies".into(), p);
    }
    let mut machine = sam.main("AWS::StepFunctions::StateMachine");
    let mut resources = Vec::new();
    let mut substitutions = sam
        .get("DefinitionSubstitutions")
        .filter(|v| truthy(Some(v)))
        .and_then(Value::as_object)
        .cloned();
    let definition = sam.get("Definition").filter(|v| truthy(Some(v)));
    let uri = sam.get("DefinitionUri").filter(|v| truthy(Some(v)));
    match (definition, uri) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                sam.id,
                "Specify either 'Definition' or 'DefinitionUri' property and not both.",
            ));
        }
        (Some(d), None) => {
            let mut d = d.clone();
            let mut found = Map::new();
            substitute_dynamic(&mut d, &mut found);
            if !found.is_empty() {
                let s = substitutions.get_or_insert_with(Map::new);
                for (k, v) in found {
                    s.insert(k, v);
                }
            }
            let lines: Vec<Value> = pyjson::dumps_indented(&d)
                .split('\n')
                .map(|l| json!(l))
                .collect();
            machine.put("DefinitionString", json!({"Fn::Join": ["\n", lines]}));
        }
        (None, Some(u)) => {
            let (bucket, key, version) = s3_pointer(sam.id, u, "DefinitionUri")?;
            let mut loc = json!({"Bucket": bucket, "Key": key});
            if let Some(v) = version {
                loc["Version"] = v;
            }
            machine.put("DefinitionS3Location", loc);
        }
        (None, None) => {
            return Err(invalid(
                sam.id,
                "Either 'Definition' or 'DefinitionUri' property must be specified.",
            ));
        }
    }
    if let Some(s) = substitutions {
        machine.put("DefinitionSubstitutions", Value::Object(s));
    }
    let tags = {
        let mut list = vec![json!({"Key": "stateMachine:createdBy", "Value": "SAM"})];
        if let Some(Value::Object(tags)) = sam.get("Tags") {
            list.extend(tag_list(tags));
        }
        Value::Array(list)
    };
    let role = sam.get("Role").filter(|v| truthy(Some(v)));
    let policies = sam.get("Policies").filter(|v| truthy(Some(v)));
    if role.is_some() && policies.is_some() {
        return Err(invalid(
            sam.id,
            "Specify either 'Role' or 'Policies' (but not both at the same time) or neither of them",
        ));
    }
    if let Some(r) = role {
        machine.put("RoleArn", r.clone());
    } else {
        let mut list = match policies {
            None => Vec::new(),
            Some(Value::Array(a)) => a.clone(),
            Some(one) => vec![one.clone()],
        };
        if sam.get("Tracing").and_then(|t| t.get("Enabled")) == Some(&json!(true)) {
            list.push(json!(if t.ctx.partition == "aws" {
                "AWSXrayWriteOnlyAccess"
            } else {
                "AWSXRayDaemonWriteAccess"
            }));
        }
        let role = policies::construct_role(
            sam.id,
            RoleSpec {
                role_id: format!("{}Role", sam.id),
                attrs: sam.passthrough(),
                partition: &t.ctx.partition,
                assume_role_policy: policies::states_assume_role(),
                managed_arns: Vec::new(),
                documents: Vec::new(),
                path: sam.cloned("RolePath"),
                permissions_boundary: sam.cloned("PermissionsBoundary"),
                tags: Some(tags.clone()),
            },
            Some(&Value::Array(list)),
        )?;
        machine.put("RoleArn", json!({"Fn::GetAtt": [role.id, "Arn"]}));
        resources.push(role);
    }
    machine.set("StateMachineName", sam.cloned("Name"));
    machine.set("StateMachineType", sam.cloned("Type"));
    machine.set("LoggingConfiguration", sam.cloned("Logging"));
    machine.set("TracingConfiguration", sam.cloned("Tracing"));
    machine.put("Tags", tags);
    resources.insert(0, machine);
    let alias = state_machine_alias(sam)?;
    let target = match (&alias, sam.get("UseAliasAsEventTarget")) {
        (Some(a), Some(Value::Bool(true))) => a.id.clone(),
        _ => sam.id.to_string(),
    };
    resources.extend(
        alias
            .map(|a| {
                let version_id = format!("{}Version", sam.id);
                let mut attrs = sam.passthrough();
                attrs
                    .entry("DeletionPolicy")
                    .or_insert_with(|| json!("Retain"));
                attrs
                    .entry("UpdateReplacePolicy")
                    .or_insert_with(|| json!("Retain"));
                let mut version = Res::new(
                    &version_id,
                    "AWS::StepFunctions::StateMachineVersion",
                    attrs,
                );
                version.put("StateMachineArn", json!({"Ref": sam.id}));
                version.put(
                    "StateMachineRevisionId",
                    json!({"Fn::GetAtt": [sam.id, "StateMachineRevisionId"]}),
                );
                vec![version, a]
            })
            .into_iter()
            .flatten(),
    );
    resources.extend(state_machine_events(t, sam, &target)?);
    function::propagate_tags(sam, &mut resources);
    Ok(resources)
}

/// A state machine's Schedule, CloudWatchEvent and EventBridgeRule events: the rule and the
/// role it starts executions with.
/// AutoPublishAlias: the alias (its DeploymentPreference given, or all at once) on the version
/// `<Machine>Version`, which the caller adds first.
fn state_machine_alias(sam: &Sam) -> Result<Option<Res>, String> {
    let name = sam.get("AutoPublishAlias").filter(|v| truthy(Some(v)));
    let preference = sam.get("DeploymentPreference").filter(|v| truthy(Some(v)));
    if name.is_none()
        && sam
            .get("UseAliasAsEventTarget")
            .is_some_and(|v| truthy(Some(v)))
    {
        return Err(invalid(
            sam.id,
            "'UseAliasAsEventTarget' requires 'AutoPublishAlias' property to be specified.",
        ));
    }
    let Some(name) = name else {
        if preference.is_some() {
            return Err(invalid(
                sam.id,
                "'DeploymentPreference' requires 'AutoPublishAlias' property to be specified.",
            ));
        }
        return Ok(None);
    };
    let Some(shown) = name
        .as_str()
        .filter(|n| n.chars().all(|c| c.is_ascii_alphanumeric()))
    else {
        return Err(unsupported(
            sam.id,
            "An AutoPublishAlias that is not an alphanumeric string",
        ));
    };
    let mut alias = Res::new(
        format!("{}Alias{shown}", sam.id),
        "AWS::StepFunctions::StateMachineAlias",
        sam.passthrough(),
    );
    alias.put("Name", name.clone());
    let mut preference = match preference {
        Some(Value::Object(p)) => p.clone(),
        Some(_) => {
            return Err(invalid(
                sam.id,
                "Type of property 'DeploymentPreference' is invalid.",
            ));
        }
        None => [("Type".to_string(), json!("ALL_AT_ONCE"))]
            .into_iter()
            .collect(),
    };
    preference.insert(
        "StateMachineVersionArn".into(),
        json!({"Ref": format!("{}Version", sam.id)}),
    );
    alias.put("DeploymentPreference", Value::Object(preference));
    Ok(Some(alias))
}

fn state_machine_events(t: &mut Translation, sam: &Sam, target: &str) -> Result<Vec<Res>, String> {
    let Some(events) = sam.get("Events") else {
        return Ok(Vec::new());
    };
    let Some(events) = events.as_object() else {
        return Err(invalid(sam.id, "Type of property 'Events' is invalid."));
    };
    let mut out = Vec::new();
    // A template with a REST API has its Events as a Python 2.7 dict, in that order.
    let names: Vec<String> = t
        .rest
        .converted_order(events.keys())
        .unwrap_or_else(|| events.keys().cloned().collect());
    for name in &names {
        let Some(e) = events.get(name) else { continue };
        let ty = e.get("Type").and_then(Value::as_str).unwrap_or("");
        let props = e
            .get("Properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let get = |p: &str| props.get(p).filter(|v| !v.is_null()).cloned();
        let id = format!("{}{name}", sam.id);
        if ty == "Api" || ty == "ScheduleV2" {
            let event = crate::events::Event {
                name,
                id: id.clone(),
                ty,
                props: props.clone(),
            };
            out.extend(if ty == "Api" {
                crate::rest_api::state_machine_event(t, sam, &event, target)?
            } else {
                crate::scheduler::schedule_v2(
                    sam.id,
                    &event,
                    json!({"Ref": target}),
                    crate::scheduler::Invoked::StateMachine,
                    &sam.passthrough(),
                )?
            });
            continue;
        }
        let known: &[&str] = match ty {
            "Schedule" => &[
                "Schedule",
                "Input",
                "Enabled",
                "State",
                "Name",
                "Description",
                "DeadLetterConfig",
                "RetryPolicy",
                "Target",
                "RoleArn",
            ],
            "CloudWatchEvent" | "EventBridgeRule" => &[
                "EventBusName",
                "RuleName",
                "Pattern",
                "Input",
                "InputPath",
                "DeadLetterConfig",
                "RetryPolicy",
                "State",
                "Target",
                "InputTransformer",
            ],
            _ => {
                return Err(crate::invalid_event(
                    sam.id,
                    name,
                    format!(
                        "Event type '{ty}' of a state machine is not supported by cumulo's SAM transform."
                    ),
                ));
            }
        };
        for k in props.keys() {
            if !known.contains(&k.as_str()) {
                return Err(invalid(
                    &id,
                    format!("property {k} not defined for resource of type {ty}"),
                ));
            }
        }
        let mut rule = Res::new(&id, "AWS::Events::Rule", sam.passthrough());
        if ty == "Schedule" {
            let schedule = get("Schedule")
                .ok_or_else(|| invalid(&id, "Missing required property 'Schedule'."))?;
            rule.put("ScheduleExpression", schedule);
            if get("State").is_some() && get("Enabled").is_some() {
                return Err(crate::invalid_event(
                    sam.id,
                    name,
                    "State and Enabled Properties cannot both be specified.",
                ));
            }
            rule.set("State", get("State"));
            if let Some(enabled) = get("Enabled") {
                let on = enabled.as_bool().unwrap_or(true);
                rule.put("State", json!(if on { "ENABLED" } else { "DISABLED" }));
            }
            rule.set("Name", get("Name"));
            rule.set("Description", get("Description"));
        } else {
            rule.set("EventBusName", get("EventBusName"));
            rule.set("EventPattern", get("Pattern"));
            rule.set("Name", get("RuleName"));
            if truthy(props.get("State")) {
                rule.set("State", get("State"));
            }
        }
        let given_role = if ty == "Schedule" {
            get("RoleArn")
        } else {
            None
        };
        let role = match given_role {
            Some(arn) => {
                out.push(rule.clone());
                arn
            }
            None => {
                let role_id = format!("{id}Role");
                let mut role = Res::new(&role_id, "AWS::IAM::Role", sam.passthrough());
                role.put(
                    "AssumeRolePolicyDocument",
                    json!({"Version": "2012-10-17", "Statement": [{"Action": ["sts:AssumeRole"], "Effect": "Allow", "Principal": {"Service": ["events.amazonaws.com"]}}]}),
                );
                role.put(
                    "Policies",
                    json!([{"PolicyName": format!("{role_id}StartExecutionPolicy"), "PolicyDocument": {"Statement": [{"Action": "states:StartExecution", "Effect": "Allow", "Resource": {"Ref": target}}]}}]),
                );
                role.set(
                    "PermissionsBoundary",
                    sam.cloned("PermissionsBoundary")
                        .filter(|v| truthy(Some(v))),
                );
                out.push(rule.clone());
                out.push(role);
                json!({"Fn::GetAtt": [role_id, "Arn"]})
            }
        };
        let target_id = get("Target")
            .and_then(|t| t.get("Id").cloned())
            .unwrap_or_else(|| {
                const SUFFIX: &str = "StepFunctionsTarget";
                let base = if id.len() + SUFFIX.len() <= 64 {
                    id.as_str()
                } else {
                    &id[..64 - SUFFIX.len()]
                };
                json!(format!("{base}{SUFFIX}"))
            });
        let mut rule_target = json!({"Arn": {"Ref": target}, "Id": target_id, "RoleArn": role});
        for p in ["Input", "InputPath", "RetryPolicy", "InputTransformer"] {
            if let Some(v) = get(p) {
                rule_target[p] = v;
            }
        }
        if let Some(config) = get("DeadLetterConfig") {
            let (arn, made) = crate::events::dead_letter(sam.id, &id, &config, &sam.passthrough())?;
            rule_target["DeadLetterConfig"] = json!({"Arn": arn});
            out.extend(made);
        }
        let index = out.iter().position(|r| r.id == id).unwrap_or(0);
        out[index].put("Targets", json!([rule_target]));
    }
    Ok(out)
}
