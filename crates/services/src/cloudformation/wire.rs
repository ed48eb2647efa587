//! The awsQuery adapter: form members in (`Parameters.member.1.ParameterKey`), the engine's typed
//! operations called, `<XResponse><XResult>...` out, errors in the query shape.

use super::NS;
use super::encode::{self, ResourceShape};
use cumulo_engine::*;
use cumulo_wire::query::QueryParams;
use cumulo_wire::xml::XmlWriter;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::StatusCode;

const PROTOCOL: Protocol = Protocol::Query(NS);

/// Every operation in CloudFormation's API (botocore's model): the ones not dispatched below
/// answer 501 naming themselves; a name outside this list is AWS's InvalidAction.
const OPERATIONS: &[&str] = &[
    "ActivateOrganizationsAccess",
    "ActivateType",
    "BatchDescribeTypeConfigurations",
    "CancelUpdateStack",
    "ContinueUpdateRollback",
    "CreateChangeSet",
    "CreateGeneratedTemplate",
    "CreateStack",
    "CreateStackInstances",
    "CreateStackRefactor",
    "CreateStackSet",
    "DeactivateOrganizationsAccess",
    "DeactivateType",
    "DeleteChangeSet",
    "DeleteGeneratedTemplate",
    "DeleteStack",
    "DeleteStackInstances",
    "DeleteStackSet",
    "DeregisterType",
    "DescribeAccountLimits",
    "DescribeChangeSet",
    "DescribeChangeSetHooks",
    "DescribeEvents",
    "DescribeGeneratedTemplate",
    "DescribeOrganizationsAccess",
    "DescribePublisher",
    "DescribeResourceScan",
    "DescribeStackDriftDetectionStatus",
    "DescribeStackEvents",
    "DescribeStackInstance",
    "DescribeStackRefactor",
    "DescribeStackResource",
    "DescribeStackResourceDrifts",
    "DescribeStackResources",
    "DescribeStackSet",
    "DescribeStackSetOperation",
    "DescribeStacks",
    "DescribeType",
    "DescribeTypeRegistration",
    "DetectStackDrift",
    "DetectStackResourceDrift",
    "DetectStackSetDrift",
    "EstimateTemplateCost",
    "ExecuteChangeSet",
    "ExecuteStackRefactor",
    "GetGeneratedTemplate",
    "GetHookResult",
    "GetStackPolicy",
    "GetTemplate",
    "GetTemplateSummary",
    "ImportStacksToStackSet",
    "ListChangeSets",
    "ListExports",
    "ListGeneratedTemplates",
    "ListHookResults",
    "ListImports",
    "ListResourceScanRelatedResources",
    "ListResourceScanResources",
    "ListResourceScans",
    "ListStackInstanceResourceDrifts",
    "ListStackInstances",
    "ListStackRefactorActions",
    "ListStackRefactors",
    "ListStackResources",
    "ListStackSetAutoDeploymentTargets",
    "ListStackSetOperationResults",
    "ListStackSetOperations",
    "ListStackSets",
    "ListStacks",
    "ListTypeRegistrations",
    "ListTypeVersions",
    "ListTypes",
    "PublishType",
    "RecordHandlerProgress",
    "RegisterPublisher",
    "RegisterType",
    "RollbackStack",
    "SetStackPolicy",
    "SetTypeConfiguration",
    "SetTypeDefaultVersion",
    "SignalResource",
    "StartResourceScan",
    "StopStackSetOperation",
    "TestType",
    "UpdateGeneratedTemplate",
    "UpdateStack",
    "UpdateStackInstances",
    "UpdateStackSet",
    "UpdateTerminationProtection",
    "ValidateTemplate",
];

pub async fn handle(engine: &Engine, req: &AwsRequest) -> AwsResponse {
    let params = QueryParams::from_request(req);
    let action = params.get("Action").unwrap_or("").to_string();
    let caller = Caller {
        region: req.region.clone(),
        account_id: req.account_id.clone(),
        request_id: req.request_id.clone(),
        host: req.host.clone(),
    };
    match dispatch(engine, &caller, &params, &action).await {
        Ok(result) => {
            let mut w = XmlWriter::new();
            w.raw(&format!("<{action}Response xmlns=\"{NS}\">"));
            match result {
                Some(inner) => w.raw(&format!("<{action}Result>{inner}</{action}Result>")),
                None => &mut w,
            };
            w.open("ResponseMetadata", None)
                .elem("RequestId", &req.request_id)
                .close();
            w.raw(&format!("</{action}Response>"));
            AwsResponse::xml(w.finish()).with_header("x-amzn-requestid", &req.request_id)
        }
        Err(e) => e.into_response(PROTOCOL, &req.request_id),
    }
}

fn engine_error(e: EngineError) -> AwsError {
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::BAD_REQUEST);
    AwsError::new(status, e.code, e.message)
}

/// AWS's message for a missing required member (named in lowerCamel, as the model's validator).
fn missing(member: &str) -> AwsError {
    let mut camel = member.to_string();
    if let Some(first) = camel.get(..1) {
        camel.replace_range(..1, &first.to_ascii_lowercase());
    }
    AwsError::validation(format!(
        "1 validation error detected: Value null at '{camel}' failed to satisfy constraint: Member must not be null"
    ))
}

fn required(p: &QueryParams, member: &str) -> Result<String, AwsError> {
    p.get(member)
        .map(str::to_string)
        .ok_or_else(|| missing(member))
}

fn opt(p: &QueryParams, member: &str) -> Option<String> {
    p.get(member).map(str::to_string)
}

fn boolean(p: &QueryParams, member: &str) -> Result<Option<bool>, AwsError> {
    match p.get(member) {
        None => Ok(None),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(v) => Err(AwsError::validation(format!(
            "Invalid value '{v}' for {member}: expected true or false"
        ))),
    }
}

fn integer(p: &QueryParams, member: &str) -> Result<Option<i64>, AwsError> {
    p.get(member)
        .map(|v| {
            v.parse::<i64>().map_err(|_| {
                AwsError::validation(format!(
                    "Invalid value '{v}' for {member}: expected an integer"
                ))
            })
        })
        .transpose()
}

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn parameters(p: &QueryParams) -> Vec<Parameter> {
    p.list_of_structs("Parameters")
        .into_iter()
        .map(|f| Parameter {
            key: field(&f, "ParameterKey").unwrap_or_default().to_string(),
            value: field(&f, "ParameterValue").map(str::to_string),
            use_previous_value: field(&f, "UsePreviousValue")
                .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        })
        .collect()
}

/// RollbackConfiguration (`RollbackConfiguration.RollbackTriggers.member.N.Arn|Type`,
/// `RollbackConfiguration.MonitoringTimeInMinutes`); `None` when absent.
fn rollback_configuration(p: &QueryParams) -> Result<Option<RollbackConfiguration>, AwsError> {
    let triggers: Vec<(String, String)> = p
        .list_of_structs("RollbackConfiguration.RollbackTriggers")
        .into_iter()
        .map(|f| {
            (
                field(&f, "Arn").unwrap_or_default().to_string(),
                field(&f, "Type").unwrap_or_default().to_string(),
            )
        })
        .collect();
    let monitoring = integer(p, "RollbackConfiguration.MonitoringTimeInMinutes")?;
    let given = p.get("RollbackConfiguration").is_some()
        || p.get("RollbackConfiguration.RollbackTriggers").is_some();
    Ok(
        (given || monitoring.is_some() || !triggers.is_empty()).then_some(RollbackConfiguration {
            rollback_triggers: triggers,
            monitoring_time_in_minutes: monitoring,
        }),
    )
}

fn tags(p: &QueryParams) -> Vec<Tag> {
    p.list_of_structs("Tags")
        .into_iter()
        .map(|f| Tag {
            key: field(&f, "Key").unwrap_or_default().to_string(),
            value: field(&f, "Value").unwrap_or_default().to_string(),
        })
        .collect()
}

/// UpdateStack's and CreateChangeSet's Tags: absent keeps the stack's; an empty list (sent as
/// `Tags=`) removes them.
fn tags_update(p: &QueryParams) -> Option<Vec<Tag>> {
    let t = tags(p);
    if !t.is_empty() || p.get("Tags").is_some() {
        Some(t)
    } else {
        None
    }
}

/// `ResourcesToImport.member.N.{ResourceType,LogicalResourceId}` and
/// `...ResourceIdentifier.entry.M.{key,value}`.
fn resources_to_import(p: &QueryParams) -> Vec<ResourceToImport> {
    p.list_of_structs("ResourcesToImport")
        .into_iter()
        .map(|f| {
            let mut ids: std::collections::BTreeMap<u32, (String, String)> = Default::default();
            for (k, v) in &f {
                let Some(rest) = k.strip_prefix("ResourceIdentifier.entry.") else {
                    continue;
                };
                let Some((i, member)) = rest.split_once('.') else {
                    continue;
                };
                let Ok(i) = i.parse() else { continue };
                let slot = ids.entry(i).or_default();
                match member {
                    "key" => slot.0 = v.clone(),
                    "value" => slot.1 = v.clone(),
                    _ => {}
                }
            }
            ResourceToImport {
                resource_type: field(&f, "ResourceType").unwrap_or_default().to_string(),
                logical_resource_id: field(&f, "LogicalResourceId")
                    .unwrap_or_default()
                    .to_string(),
                resource_identifier: ids.into_values().collect(),
            }
        })
        .collect()
}

fn change_set_ref(p: &QueryParams) -> Result<ChangeSetRef, AwsError> {
    Ok(ChangeSetRef {
        change_set_name: required(p, "ChangeSetName")?,
        stack_name: opt(p, "StackName"),
    })
}

fn template_input(p: &QueryParams) -> TemplateInput {
    TemplateInput {
        template_body: opt(p, "TemplateBody"),
        template_url: opt(p, "TemplateURL"),
        stack_name: opt(p, "StackName"),
    }
}

/// The `<XResult>` contents, or `None` for operations whose output has no members.
type Outcome = Result<Option<String>, AwsError>;

fn result(f: impl FnOnce(&mut XmlWriter)) -> Outcome {
    const DECLARATION: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>";
    let mut w = XmlWriter::new();
    f(&mut w);
    let doc = w.finish();
    // XmlWriter starts documents with the declaration; a result is a fragment of one.
    Ok(Some(
        doc.strip_prefix(DECLARATION).unwrap_or(&doc).to_string(),
    ))
}

fn next_token(w: &mut XmlWriter, token: &Option<String>) {
    w.opt("NextToken", token.as_deref());
}

async fn dispatch(engine: &Engine, c: &Caller, p: &QueryParams, action: &str) -> Outcome {
    let e = engine_error;
    match action {
        "CreateStack" => {
            let out = engine
                .create_stack(
                    c,
                    CreateStackInput {
                        stack_name: required(p, "StackName")?,
                        template_body: opt(p, "TemplateBody"),
                        template_url: opt(p, "TemplateURL"),
                        parameters: parameters(p),
                        disable_rollback: boolean(p, "DisableRollback")?,
                        on_failure: opt(p, "OnFailure"),
                        timeout_in_minutes: integer(p, "TimeoutInMinutes")?,
                        notification_arns: p.list("NotificationARNs"),
                        capabilities: p.list("Capabilities"),
                        tags: tags(p),
                        client_request_token: opt(p, "ClientRequestToken"),
                        enable_termination_protection: boolean(p, "EnableTerminationProtection")?,
                        retain_except_on_create: boolean(p, "RetainExceptOnCreate")?,
                        stack_policy_body: opt(p, "StackPolicyBody"),
                        stack_policy_url: opt(p, "StackPolicyURL"),
                        role_arn: opt(p, "RoleARN"),
                        rollback_configuration: rollback_configuration(p)?,
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.elem("StackId", &out.stack_id);
            })
        }
        "UpdateStack" => {
            let out = engine
                .update_stack(
                    c,
                    UpdateStackInput {
                        stack_name: required(p, "StackName")?,
                        template_body: opt(p, "TemplateBody"),
                        template_url: opt(p, "TemplateURL"),
                        use_previous_template: boolean(p, "UsePreviousTemplate")?.unwrap_or(false),
                        parameters: parameters(p),
                        capabilities: p.list("Capabilities"),
                        notification_arns: p.list("NotificationARNs"),
                        tags: tags_update(p),
                        disable_rollback: boolean(p, "DisableRollback")?,
                        client_request_token: opt(p, "ClientRequestToken"),
                        retain_except_on_create: boolean(p, "RetainExceptOnCreate")?,
                        stack_policy_body: opt(p, "StackPolicyBody"),
                        stack_policy_url: opt(p, "StackPolicyURL"),
                        stack_policy_during_update_body: opt(p, "StackPolicyDuringUpdateBody"),
                        stack_policy_during_update_url: opt(p, "StackPolicyDuringUpdateURL"),
                        role_arn: opt(p, "RoleARN"),
                        rollback_configuration: rollback_configuration(p)?,
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.elem("StackId", &out.stack_id);
            })
        }
        "DeleteStack" => {
            engine
                .delete_stack(
                    c,
                    DeleteStackInput {
                        stack_name: required(p, "StackName")?,
                        retain_resources: p.list("RetainResources"),
                        client_request_token: opt(p, "ClientRequestToken"),
                    },
                )
                .await
                .map_err(e)?;
            Ok(None)
        }
        "DescribeStacks" => {
            let out = engine
                .describe_stacks(
                    c,
                    DescribeStacksInput {
                        stack_name: opt(p, "StackName"),
                        next_token: opt(p, "NextToken"),
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.open("Stacks", None);
                for s in &out.stacks {
                    encode::stack(w, s);
                }
                w.close();
                next_token(w, &out.next_token);
            })
        }
        "ListStacks" => {
            let out = engine
                .list_stacks(
                    c,
                    ListStacksInput {
                        stack_status_filter: p.list("StackStatusFilter"),
                        next_token: opt(p, "NextToken"),
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.open("StackSummaries", None);
                for s in &out.stack_summaries {
                    encode::stack_summary(w, s);
                }
                w.close();
                next_token(w, &out.next_token);
            })
        }
        "DescribeStackEvents" => {
            let out = engine
                .describe_stack_events(
                    c,
                    DescribeStackEventsInput {
                        stack_name: required(p, "StackName")?,
                        next_token: opt(p, "NextToken"),
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.open("StackEvents", None);
                for ev in &out.stack_events {
                    encode::event(w, ev);
                }
                w.close();
                next_token(w, &out.next_token);
            })
        }
        "DescribeStackResource" => {
            let stack = required(p, "StackName")?;
            let logical = required(p, "LogicalResourceId")?;
            let r = engine
                .describe_stack_resource(c, &stack, &logical)
                .await
                .map_err(e)?;
            result(|w| {
                w.open("StackResourceDetail", None);
                encode::resource(w, &r, ResourceShape::Detail);
                w.close();
            })
        }
        "DescribeStackResources" => {
            let out = engine
                .describe_stack_resources(
                    c,
                    DescribeStackResourcesInput {
                        stack_name: opt(p, "StackName"),
                        logical_resource_id: opt(p, "LogicalResourceId"),
                        physical_resource_id: opt(p, "PhysicalResourceId"),
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.open("StackResources", None);
                for r in &out {
                    w.open("member", None);
                    encode::resource(w, r, ResourceShape::Resource);
                    w.close();
                }
                w.close();
            })
        }
        "ListStackResources" => {
            let out = engine
                .list_stack_resources(
                    c,
                    ListStackResourcesInput {
                        stack_name: required(p, "StackName")?,
                        next_token: opt(p, "NextToken"),
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.open("StackResourceSummaries", None);
                for r in &out.stack_resource_summaries {
                    w.open("member", None);
                    encode::resource(w, r, ResourceShape::Summary);
                    w.close();
                }
                w.close();
                next_token(w, &out.next_token);
            })
        }
        "GetTemplate" => {
            let out = engine
                .get_template(
                    c,
                    GetTemplateInput {
                        stack_name: opt(p, "StackName"),
                        change_set_name: opt(p, "ChangeSetName"),
                        template_stage: opt(p, "TemplateStage"),
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.elem("TemplateBody", &out.template_body);
                encode::strings(w, "StagesAvailable", &out.stages_available);
            })
        }
        "GetTemplateSummary" => {
            let out = engine
                .get_template_summary(c, template_input(p))
                .await
                .map_err(e)?;
            result(|w| {
                encode::parameter_declarations(w, &out.parameters);
                w.opt("Description", out.description.as_deref());
                encode::strings(w, "Capabilities", &out.capabilities);
                w.opt("CapabilitiesReason", out.capabilities_reason.as_deref());
                encode::strings(w, "ResourceTypes", &out.resource_types);
                w.opt("Version", out.version.as_deref())
                    .opt("Metadata", out.metadata.as_deref());
                encode::strings(w, "DeclaredTransforms", &out.declared_transforms);
                if !out.resource_identifier_summaries.is_empty() {
                    w.open("ResourceIdentifierSummaries", None);
                    for s in &out.resource_identifier_summaries {
                        w.open("member", None);
                        w.elem("ResourceType", &s.resource_type);
                        encode::strings(w, "LogicalResourceIds", &s.logical_resource_ids);
                        encode::strings(w, "ResourceIdentifiers", &s.resource_identifiers);
                        w.close();
                    }
                    w.close();
                }
            })
        }
        "ValidateTemplate" => {
            let mut input = template_input(p);
            input.stack_name = None;
            let out = engine.validate_template(c, input).await.map_err(e)?;
            result(|w| {
                encode::template_parameters(w, &out.parameters);
                w.opt("Description", out.description.as_deref());
                encode::strings(w, "Capabilities", &out.capabilities);
                w.opt("CapabilitiesReason", out.capabilities_reason.as_deref());
                encode::strings(w, "DeclaredTransforms", &out.declared_transforms);
            })
        }
        "CreateChangeSet" => {
            let resources_to_import = resources_to_import(p);
            let out = engine
                .create_change_set(
                    c,
                    CreateChangeSetInput {
                        stack_name: required(p, "StackName")?,
                        change_set_name: required(p, "ChangeSetName")?,
                        template_body: opt(p, "TemplateBody"),
                        template_url: opt(p, "TemplateURL"),
                        use_previous_template: boolean(p, "UsePreviousTemplate")?.unwrap_or(false),
                        parameters: parameters(p),
                        capabilities: p.list("Capabilities"),
                        notification_arns: p.list("NotificationARNs"),
                        tags: tags_update(p),
                        client_token: opt(p, "ClientToken"),
                        description: opt(p, "Description"),
                        change_set_type: opt(p, "ChangeSetType"),
                        resources_to_import,
                        include_nested_stacks: boolean(p, "IncludeNestedStacks")?.unwrap_or(false),
                        on_stack_failure: opt(p, "OnStackFailure"),
                        role_arn: opt(p, "RoleARN"),
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.elem("Id", &out.id).elem("StackId", &out.stack_id);
            })
        }
        "DescribeChangeSet" => {
            let out = engine
                .describe_change_set(
                    c,
                    DescribeChangeSetInput {
                        change_set: change_set_ref(p)?,
                        next_token: opt(p, "NextToken"),
                        include_property_values: boolean(p, "IncludePropertyValues")?
                            .unwrap_or(false),
                    },
                )
                .await
                .map_err(e)?;
            result(|w| encode::change_set(w, &out))
        }
        "DescribeChangeSetHooks" => {
            let out = engine
                .describe_change_set_hooks(c, change_set_ref(p)?)
                .await
                .map_err(e)?;
            result(|w| {
                w.elem("ChangeSetId", &out.change_set_id)
                    .elem("ChangeSetName", &out.change_set_name);
                w.open("Hooks", None).close();
                w.elem("Status", &out.status)
                    .elem("StackId", &out.stack_id)
                    .elem("StackName", &out.stack_name);
            })
        }
        "ExecuteChangeSet" => {
            engine
                .execute_change_set(
                    c,
                    ExecuteChangeSetInput {
                        change_set: change_set_ref(p)?,
                        client_request_token: opt(p, "ClientRequestToken"),
                        disable_rollback: boolean(p, "DisableRollback")?,
                        retain_except_on_create: boolean(p, "RetainExceptOnCreate")?,
                    },
                )
                .await
                .map_err(e)?;
            Ok(Some(String::new()))
        }
        "DeleteChangeSet" => {
            engine
                .delete_change_set(c, change_set_ref(p)?)
                .await
                .map_err(e)?;
            Ok(Some(String::new()))
        }
        "ListChangeSets" => {
            let out = engine
                .list_change_sets(
                    c,
                    ListChangeSetsInput {
                        stack_name: required(p, "StackName")?,
                        next_token: opt(p, "NextToken"),
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.open("Summaries", None);
                for s in &out.summaries {
                    encode::change_set_summary(w, s);
                }
                w.close();
                next_token(w, &out.next_token);
            })
        }
        "ListExports" => {
            let out = engine
                .list_exports(c, opt(p, "NextToken"))
                .await
                .map_err(e)?;
            result(|w| {
                w.open("Exports", None);
                for x in &out.exports {
                    w.open("member", None);
                    w.elem("ExportingStackId", &x.exporting_stack_id)
                        .elem("Name", &x.name)
                        .elem("Value", &x.value);
                    w.close();
                }
                w.close();
                next_token(w, &out.next_token);
            })
        }
        "ListImports" => {
            let out = engine
                .list_imports(
                    c,
                    ListImportsInput {
                        export_name: required(p, "ExportName")?,
                        next_token: opt(p, "NextToken"),
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.open("Imports", None);
                for i in &out.imports {
                    w.elem("member", i);
                }
                w.close();
                next_token(w, &out.next_token);
            })
        }
        "RollbackStack" => {
            let out = engine
                .rollback_stack(
                    c,
                    RollbackStackInput {
                        stack_name: required(p, "StackName")?,
                        client_request_token: opt(p, "ClientRequestToken"),
                        retain_except_on_create: boolean(p, "RetainExceptOnCreate")?,
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.elem("StackId", &out.stack_id);
            })
        }
        "ContinueUpdateRollback" => {
            engine
                .continue_update_rollback(
                    c,
                    ContinueUpdateRollbackInput {
                        stack_name: required(p, "StackName")?,
                        resources_to_skip: p.list("ResourcesToSkip"),
                        client_request_token: opt(p, "ClientRequestToken"),
                    },
                )
                .await
                .map_err(e)?;
            Ok(Some(String::new()))
        }
        "SetStackPolicy" => {
            engine
                .set_stack_policy(
                    c,
                    SetStackPolicyInput {
                        stack_name: required(p, "StackName")?,
                        stack_policy_body: opt(p, "StackPolicyBody"),
                        stack_policy_url: opt(p, "StackPolicyURL"),
                    },
                )
                .await
                .map_err(e)?;
            Ok(None)
        }
        "GetStackPolicy" => {
            let out = engine
                .get_stack_policy(c, &required(p, "StackName")?)
                .await
                .map_err(e)?;
            result(|w| {
                w.opt("StackPolicyBody", out.stack_policy_body.as_deref());
            })
        }
        "SignalResource" => {
            engine
                .signal_resource(
                    c,
                    SignalResourceInput {
                        stack_name: required(p, "StackName")?,
                        logical_resource_id: required(p, "LogicalResourceId")?,
                        unique_id: required(p, "UniqueId")?,
                        status: required(p, "Status")?,
                    },
                )
                .await
                .map_err(e)?;
            Ok(None)
        }
        "CancelUpdateStack" => {
            engine
                .cancel_update_stack(
                    c,
                    CancelUpdateStackInput {
                        stack_name: required(p, "StackName")?,
                        client_request_token: opt(p, "ClientRequestToken"),
                    },
                )
                .await
                .map_err(e)?;
            Ok(None)
        }
        "UpdateTerminationProtection" => {
            let enable = boolean(p, "EnableTerminationProtection")?
                .ok_or_else(|| missing("EnableTerminationProtection"))?;
            let out = engine
                .update_termination_protection(c, &required(p, "StackName")?, enable)
                .await
                .map_err(e)?;
            result(|w| {
                w.elem("StackId", &out.stack_id);
            })
        }
        "DescribeType" => {
            let t = engine
                .describe_type(
                    c,
                    DescribeTypeInput {
                        kind: opt(p, "Type"),
                        type_name: opt(p, "TypeName"),
                        arn: opt(p, "Arn"),
                        version_id: opt(p, "VersionId"),
                    },
                )
                .map_err(e)?;
            result(|w| {
                w.elem("Arn", &t.arn)
                    .elem("Type", "RESOURCE")
                    .elem("TypeName", &t.type_name)
                    .elem("DefaultVersionId", &t.default_version_id)
                    .elem("IsDefaultVersion", "true")
                    .opt("Description", t.description.as_deref())
                    .elem("Schema", &t.schema)
                    .elem("ProvisioningType", &t.provisioning_type)
                    .elem("DeprecatedStatus", "LIVE")
                    .elem("Visibility", "PUBLIC")
                    .opt("SourceUrl", t.source_url.as_deref())
                    .opt("DocumentationUrl", t.documentation_url.as_deref());
            })
        }
        "ListTypes" => {
            let out = engine
                .list_types(
                    c,
                    ListTypesInput {
                        visibility: opt(p, "Visibility"),
                        provisioning_type: opt(p, "ProvisioningType"),
                        deprecated_status: opt(p, "DeprecatedStatus"),
                        kind: opt(p, "Type"),
                        category: opt(p, "Filters.Category"),
                        type_name_prefix: opt(p, "Filters.TypeNamePrefix"),
                        max_results: integer(p, "MaxResults")?,
                        next_token: opt(p, "NextToken"),
                    },
                )
                .map_err(e)?;
            result(|w| {
                w.open("TypeSummaries", None);
                for t in &out.types {
                    w.open("member", None)
                        .elem("Type", "RESOURCE")
                        .elem("TypeName", &t.type_name)
                        .elem("DefaultVersionId", &t.default_version_id)
                        .elem("TypeArn", &t.arn)
                        .opt("Description", t.description.as_deref())
                        .close();
                }
                w.close();
                next_token(w, &out.next_token);
            })
        }
        "BatchDescribeTypeConfigurations" => {
            let ids = p
                .list_of_structs("TypeConfigurationIdentifiers")
                .into_iter()
                .map(|f| TypeConfigurationIdentifier {
                    type_arn: field(&f, "TypeArn").map(str::to_string),
                    type_configuration_alias: field(&f, "TypeConfigurationAlias")
                        .map(str::to_string),
                    type_configuration_arn: field(&f, "TypeConfigurationArn").map(str::to_string),
                    kind: field(&f, "Type").map(str::to_string),
                    type_name: field(&f, "TypeName").map(str::to_string),
                })
                .collect();
            let errors = engine.batch_describe_type_configurations(ids).map_err(e)?;
            result(|w| {
                w.open("Errors", None);
                for err in &errors {
                    let id = &err.identifier;
                    w.open("member", None)
                        .elem("ErrorCode", &err.error_code)
                        .elem("ErrorMessage", &err.error_message);
                    w.open("TypeConfigurationIdentifier", None)
                        .opt("TypeArn", id.type_arn.as_deref())
                        .opt(
                            "TypeConfigurationAlias",
                            id.type_configuration_alias.as_deref(),
                        )
                        .opt("TypeConfigurationArn", id.type_configuration_arn.as_deref())
                        .opt("Type", id.kind.as_deref())
                        .opt("TypeName", id.type_name.as_deref())
                        .close();
                    w.close();
                }
                w.close();
                w.open("UnprocessedTypeConfigurations", None).close();
                w.open("TypeConfigurations", None).close();
            })
        }
        "DescribeAccountLimits" => result(|w| {
            w.open("AccountLimits", None);
            for l in engine.describe_account_limits() {
                w.open("member", None)
                    .elem("Name", &l.name)
                    .elem("Value", &l.value.to_string())
                    .close();
            }
            w.close();
        }),
        "DetectStackDrift" => {
            let id = engine
                .detect_stack_drift(c, &required(p, "StackName")?, &p.list("LogicalResourceIds"))
                .await
                .map_err(e)?;
            result(|w| {
                w.elem("StackDriftDetectionId", &id);
            })
        }
        "DetectStackResourceDrift" => {
            let out = engine
                .detect_stack_resource_drift(
                    c,
                    &required(p, "StackName")?,
                    &required(p, "LogicalResourceId")?,
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.open("StackResourceDrift", None);
                encode::resource_drift(w, &out);
                w.close();
            })
        }
        "DescribeStackDriftDetectionStatus" => {
            let d = engine
                .describe_stack_drift_detection_status(c, &required(p, "StackDriftDetectionId")?)
                .await
                .map_err(e)?;
            result(|w| {
                w.elem("StackId", &d.stack_id)
                    .elem("StackDriftDetectionId", &d.stack_drift_detection_id)
                    .elem("StackDriftStatus", &d.stack_drift_status)
                    .elem("DetectionStatus", &d.detection_status)
                    .opt(
                        "DetectionStatusReason",
                        d.detection_status_reason.as_deref(),
                    )
                    .elem(
                        "DriftedStackResourceCount",
                        &d.drifted_stack_resource_count.to_string(),
                    )
                    .elem("Timestamp", &encode::timestamp(&d.timestamp));
            })
        }
        "DescribeStackResourceDrifts" => {
            let out = engine
                .describe_stack_resource_drifts(
                    c,
                    DescribeStackResourceDriftsInput {
                        stack_name: required(p, "StackName")?,
                        status_filters: p.list("StackResourceDriftStatusFilters"),
                        next_token: opt(p, "NextToken"),
                        max_results: integer(p, "MaxResults")?,
                    },
                )
                .await
                .map_err(e)?;
            result(|w| {
                w.open("StackResourceDrifts", None);
                for d in &out.drifts {
                    w.open("member", None);
                    encode::resource_drift(w, d);
                    w.close();
                }
                w.close();
                next_token(w, &out.next_token);
            })
        }
        op if OPERATIONS.contains(&op) => Err(AwsError::not_implemented("cloudformation", op)),
        "" => Err(AwsError::bad_request(
            "MissingAction",
            "The request must contain the parameter Action.",
        )),
        op => Err(AwsError::bad_request(
            "InvalidAction",
            format!("The action {op} is not valid for this web service."),
        )),
    }
}
