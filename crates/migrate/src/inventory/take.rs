//! Taking an inventory: finding the stacks, reading each one (template, parameters, tags,
//! outputs, resources with their live state, custom-resource handlers), then what handlers
//! made outside CloudFormation. Every call goes through [`ReadRequest`], so this module can
//! only read.

use super::answer::{flag, list, tags, text};
use super::live::{describe, means_gone};
use super::model::*;
use super::reads::{CallError, ReadClient, ReadRequest, Refused};
use super::seal::seal;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// What to inventory, and the facts about the reading the file records.
pub struct Request {
    pub selection: Selection,
    pub region: String,
    pub endpoint: Option<String>,
    pub taken_at: String,
    pub taken_by: String,
}

/// Why an inventory could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum InventoryError {
    /// A bug: the inventory tried a call that is not a read.
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error("stack {0} does not exist")]
    UnknownStack(String),
    #[error("no stack is tagged copilot-application={app}{envs}")]
    NoCopilotStacks { app: String, envs: String },
    #[error("{operation}: {error}")]
    Call { operation: String, error: CallError },
}

struct Reader<'a> {
    client: &'a dyn ReadClient,
}

impl Reader<'_> {
    /// One read; a service error is the caller's to judge.
    fn try_read(
        &self,
        service: &str,
        operation: &str,
        input: Value,
    ) -> Result<Result<Value, CallError>, Refused> {
        let request = ReadRequest::new(service, operation, input)?;
        Ok(self.client.call(&request))
    }

    /// One read whose failure stops the inventory.
    fn read(&self, service: &str, operation: &str, input: Value) -> Result<Value, InventoryError> {
        self.try_read(service, operation, input)?
            .map_err(|error| InventoryError::Call {
                operation: format!("{service}:{operation}"),
                error,
            })
    }

    /// Every page of a `NextToken`-paged read, each page's `items` member concatenated.
    fn paged(
        &self,
        service: &str,
        operation: &str,
        input: Value,
        items: &str,
    ) -> Result<Vec<Value>, InventoryError> {
        let mut all = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut page_input = input.clone();
            if let (Some(t), Some(obj)) = (&token, page_input.as_object_mut()) {
                obj.insert("NextToken".into(), Value::String(t.clone()));
            }
            let page = self.read(service, operation, page_input)?;
            all.extend(list(page.get(items)).into_iter().cloned());
            token = text(&page, "NextToken").filter(|t| !t.is_empty());
            if token.is_none() {
                return Ok(all);
            }
        }
    }
}

/// What the `copilot-*` tags say a stack is.
pub fn copilot_of(tags: &BTreeMap<String, String>) -> Option<CopilotStack> {
    let get = |k: &str| tags.get(k).filter(|v| !v.is_empty()).cloned();
    let app = get("copilot-application")?;
    let (env, workload, pipeline) = (
        get("copilot-environment"),
        get("copilot-service"),
        get("copilot-pipeline"),
    );
    let kind = if pipeline.is_some() {
        CopilotKind::Pipeline
    } else if env.is_some() && workload.is_some() {
        CopilotKind::Workload
    } else if env.is_some() {
        CopilotKind::Env
    } else {
        CopilotKind::App
    };
    Some(CopilotStack {
        kind,
        app,
        env,
        workload,
        pipeline,
    })
}

/// Takes the inventory and seals it.
pub fn take(client: &dyn ReadClient, request: Request) -> Result<Inventory, InventoryError> {
    let reader = Reader { client };
    let identity = reader.read("sts", "GetCallerIdentity", json!({}))?;
    let account = text(&identity, "Account").unwrap_or_default();

    let mut queue: VecDeque<Value> = find_stacks(&reader, &request.selection)?.into();
    let mut seen = BTreeSet::new();
    let mut stacks = Vec::new();
    while let Some(described) = queue.pop_front() {
        let Some(id) = text(&described, "StackId") else {
            continue;
        };
        if !seen.insert(id) {
            continue;
        }
        let stack = read_stack(&reader, &described)?;
        for nested in stack
            .resources
            .iter()
            .filter(|r| r.resource_type == "AWS::CloudFormation::Stack")
            .filter_map(|r| r.physical_id.clone())
        {
            if seen.contains(&nested) {
                continue;
            }
            let answer = reader.read(
                "cloudformation",
                "DescribeStacks",
                json!({"StackName": nested}),
            )?;
            queue.extend(list(answer.get("Stacks")).into_iter().cloned());
        }
        stacks.push(stack);
    }

    let out_of_band = OutOfBand {
        certificates: certificates(&reader, &request.selection, &stacks, &request.region)?,
        hosted_zones: hosted_zones(&reader, &stacks)?,
    };
    let mut inventory = Inventory {
        format_version: FORMAT_VERSION,
        account,
        region: request.region,
        taken_at: request.taken_at,
        endpoint: request.endpoint,
        taken_by: request.taken_by,
        selection: request.selection,
        stacks,
        out_of_band,
        content_sha256: String::new(),
    };
    seal(&mut inventory);
    Ok(inventory)
}

/// DescribeStacks answers for the stacks asked for.
fn find_stacks(reader: &Reader, selection: &Selection) -> Result<Vec<Value>, InventoryError> {
    match selection {
        Selection::Stacks { names } => {
            let mut found = Vec::new();
            for name in names {
                match reader.try_read(
                    "cloudformation",
                    "DescribeStacks",
                    json!({"StackName": name}),
                )? {
                    Ok(answer) => found.extend(list(answer.get("Stacks")).into_iter().cloned()),
                    // AWS: ValidationError "Stack with id X does not exist".
                    Err(e)
                        if e.code == "ValidationError" && e.message.contains("does not exist") =>
                    {
                        return Err(InventoryError::UnknownStack(name.clone()));
                    }
                    Err(error) => {
                        return Err(InventoryError::Call {
                            operation: "cloudformation:DescribeStacks".into(),
                            error,
                        });
                    }
                }
            }
            Ok(found)
        }
        Selection::Copilot { app, environments } => {
            let all = reader.paged("cloudformation", "DescribeStacks", json!({}), "Stacks")?;
            let found: Vec<Value> = all
                .into_iter()
                .filter(|s| {
                    let Some(c) = copilot_of(&tags(s.get("Tags"))) else {
                        return false;
                    };
                    // Nested (addons) stacks are reached through their parents.
                    c.app == *app
                        && text(s, "ParentId").is_none()
                        && (environments.is_empty()
                            || c.env.as_ref().is_none_or(|e| environments.contains(e)))
                })
                .collect();
            if found.is_empty() {
                let envs = if environments.is_empty() {
                    String::new()
                } else {
                    format!(" in environment(s) {}", environments.join(", "))
                };
                return Err(InventoryError::NoCopilotStacks {
                    app: app.clone(),
                    envs,
                });
            }
            Ok(found)
        }
    }
}

/// The deployed template as JSON, for the facts only it holds (NoEcho, policies, custom
/// resource properties, handler code). An unparsable template gives no such facts.
fn template_json(body: &str) -> Value {
    cumulo_template::parse_template(body)
        .map(|doc| doc.value.to_json())
        .unwrap_or(Value::Null)
}

fn read_stack(reader: &Reader, described: &Value) -> Result<Stack, InventoryError> {
    let id = text(described, "StackId").unwrap_or_default();
    let name = text(described, "StackName").unwrap_or_default();
    let template = reader.read(
        "cloudformation",
        "GetTemplate",
        json!({"StackName": id, "TemplateStage": "Original"}),
    )?;
    let body = text(&template, "TemplateBody").unwrap_or_default();
    let doc = template_json(&body);
    let declared = |section: &str, key: &str| doc.get(section).and_then(|s| s.get(key));

    let parameters = list(described.get("Parameters"))
        .into_iter()
        .map(|p| {
            let key = text(p, "ParameterKey").unwrap_or_default();
            let no_echo = declared("Parameters", &key)
                .and_then(|d| d.get("NoEcho"))
                .is_some_and(|v| v == &json!(true) || v == &json!("true"));
            StackParameter {
                value: text(p, "ParameterValue").unwrap_or_default(),
                resolved_value: text(p, "ResolvedValue"),
                no_echo,
                key,
            }
        })
        .collect();
    let outputs = list(described.get("Outputs"))
        .into_iter()
        .map(|o| StackOutput {
            key: text(o, "OutputKey").unwrap_or_default(),
            value: text(o, "OutputValue").unwrap_or_default(),
            description: text(o, "Description"),
            export_name: text(o, "ExportName"),
        })
        .collect();
    let stack_tags = tags(described.get("Tags"));

    let summaries = reader.paged(
        "cloudformation",
        "ListStackResources",
        json!({"StackName": id}),
        "StackResourceSummaries",
    )?;
    let mut resources = Vec::new();
    for s in &summaries {
        let logical_id = text(s, "LogicalResourceId").unwrap_or_default();
        let resource_type = text(s, "ResourceType").unwrap_or_default();
        let physical_id = text(s, "PhysicalResourceId").filter(|p| !p.is_empty());
        let status = text(s, "ResourceStatus").unwrap_or_default();
        let policy = |key: &str| {
            declared("Resources", &logical_id)
                .and_then(|r| r.get(key))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let described = match &physical_id {
            _ if resource_type == "AWS::CloudFormation::Stack" => None,
            _ if is_custom(&resource_type) => None,
            Some(pid) if !status.starts_with("DELETE_COMPLETE") => {
                Some(describe(reader.client, &resource_type, pid)?)
            }
            _ => None,
        };
        let (live, import_attributes) = match described {
            Some(d) => (d.live, d.import_attributes),
            None => (
                LiveState::NotRead {
                    reason: not_read_reason(&resource_type, physical_id.is_some()),
                },
                BTreeMap::new(),
            ),
        };
        resources.push(Resource {
            deletion_policy: policy("DeletionPolicy"),
            update_replace_policy: policy("UpdateReplacePolicy"),
            logical_id,
            resource_type,
            physical_id,
            status,
            status_reason: text(s, "ResourceStatusReason"),
            last_updated_at: text(s, "LastUpdatedTimestamp"),
            live,
            import_attributes,
        });
    }
    let custom_resources = custom_resources(reader, &doc, &resources, described)?;

    Ok(Stack {
        name,
        status: text(described, "StackStatus").unwrap_or_default(),
        status_reason: text(described, "StackStatusReason"),
        description: text(described, "Description"),
        created_at: text(described, "CreationTime"),
        last_updated_at: text(described, "LastUpdatedTime"),
        copilot: copilot_of(&stack_tags),
        tags: stack_tags,
        parameters,
        outputs,
        capabilities: list(described.get("Capabilities"))
            .into_iter()
            .filter_map(|c| c.as_str().map(str::to_string))
            .collect(),
        role_arn: text(described, "RoleARN"),
        termination_protection: flag(described, "EnableTerminationProtection"),
        template: body,
        parent_id: text(described, "ParentId"),
        root_id: text(described, "RootId"),
        id,
        resources,
        custom_resources,
    })
}

fn not_read_reason(resource_type: &str, has_physical_id: bool) -> String {
    if resource_type == "AWS::CloudFormation::Stack" {
        "a nested stack: read as a stack of its own".into()
    } else if is_custom(resource_type) {
        "a custom resource: its handler is read instead (custom_resources)".into()
    } else if !has_physical_id {
        "no physical id: the resource was not created".into()
    } else {
        "the resource is deleted".into()
    }
}

pub fn is_custom(resource_type: &str) -> bool {
    resource_type.starts_with("Custom::") || resource_type == "AWS::CloudFormation::CustomResource"
}

/// The function a ServiceToken names, as a name or ARN GetFunction takes: a literal, a Ref to
/// a parameter, or `Fn::GetAtt [F, Arn]` of a function in the stack.
fn token_function(token: &Value, resources: &[Resource], described: &Value) -> Option<String> {
    if let Some(s) = token.as_str() {
        return Some(s.to_string());
    }
    if let Some(getatt) = token.get("Fn::GetAtt") {
        let logical = match getatt {
            Value::Array(parts) => parts.first()?.as_str()?.to_string(),
            Value::String(dotted) => dotted.split('.').next()?.to_string(),
            _ => return None,
        };
        return resources
            .iter()
            .find(|r| r.logical_id == logical)
            .and_then(|r| r.physical_id.clone());
    }
    let name = token.get("Ref")?.as_str()?;
    list(described.get("Parameters"))
        .into_iter()
        .find(|p| text(p, "ParameterKey").as_deref() == Some(name))
        .and_then(|p| text(p, "ParameterValue"))
}

fn custom_resources(
    reader: &Reader,
    doc: &Value,
    resources: &[Resource],
    described: &Value,
) -> Result<Vec<CustomResource>, InventoryError> {
    let mut found = Vec::new();
    for r in resources.iter().filter(|r| is_custom(&r.resource_type)) {
        let declared = doc.get("Resources").and_then(|d| d.get(&r.logical_id));
        let properties = declared
            .and_then(|d| d.get("Properties"))
            .cloned()
            .unwrap_or(Value::Null);
        let token = properties
            .get("ServiceToken")
            .cloned()
            .unwrap_or(Value::Null);
        let target = token_function(&token, resources, described)
            .filter(|t| !t.starts_with("arn:") || t.contains(":lambda:"));
        let function = match &target {
            Some(name) => handler_function(reader, name, doc, resources)?,
            None => None,
        };
        let service_token = match (&function, &target, token.as_str()) {
            (Some(f), _, _) => f.arn.clone(),
            (None, _, Some(literal)) => literal.to_string(),
            (None, _, None) => token.to_string(),
        };
        found.push(CustomResource {
            logical_id: r.logical_id.clone(),
            resource_type: r.resource_type.clone(),
            physical_id: r.physical_id.clone(),
            properties,
            service_token,
            function,
        });
    }
    Ok(found)
}

fn handler_function(
    reader: &Reader,
    name: &str,
    doc: &Value,
    resources: &[Resource],
) -> Result<Option<HandlerFunction>, InventoryError> {
    let answer = match reader.try_read("lambda", "GetFunction", json!({"FunctionName": name}))? {
        Ok(a) => a,
        Err(e) if means_gone(&e.code) => return Ok(None),
        Err(error) => {
            return Err(InventoryError::Call {
                operation: "lambda:GetFunction".into(),
                error,
            });
        }
    };
    let config = answer.get("Configuration").cloned().unwrap_or(Value::Null);
    let code = answer.get("Code").cloned().unwrap_or(Value::Null);
    let function_name = text(&config, "FunctionName").unwrap_or_else(|| name.to_string());
    let logical_id = resources
        .iter()
        .find(|r| {
            r.resource_type == "AWS::Lambda::Function"
                && (r.physical_id.as_deref() == Some(function_name.as_str())
                    || r.physical_id.as_deref() == Some(name))
        })
        .map(|r| r.logical_id.clone());
    let template_code = logical_id
        .as_ref()
        .and_then(|l| doc.get("Resources")?.get(l)?.get("Properties")?.get("Code"))
        .cloned()
        .unwrap_or(Value::Null);
    // The function's ARN names the account and region an asset bucket's `Fn::Sub` resolves in.
    let arn = text(&config, "FunctionArn").unwrap_or_default();
    let arn_parts: Vec<&str> = arn.split(':').collect();
    let (region, account) = (
        arn_parts.get(3).copied().unwrap_or_default(),
        arn_parts.get(4).copied().unwrap_or_default(),
    );
    let literal = |key: &str| {
        template_code
            .get(key)
            .and_then(|v| super::model::code_text(v, account, region))
    };
    Ok(Some(HandlerFunction {
        logical_id,
        arn: text(&config, "FunctionArn").unwrap_or_else(|| name.to_string()),
        name: function_name,
        runtime: text(&config, "Runtime"),
        handler: text(&config, "Handler"),
        role: text(&config, "Role"),
        timeout: text(&config, "Timeout").and_then(|t| t.parse().ok()),
        code: CodeLocation {
            repository_type: text(&code, "RepositoryType"),
            url: text(&code, "Location"),
            sha256: text(&config, "CodeSha256"),
            s3_bucket: literal("S3Bucket"),
            s3_key: literal("S3Key"),
            s3_object_version: literal("S3ObjectVersion"),
            zip_file: literal("ZipFile"),
            image_uri: text(&code, "ImageUri"),
        },
    }))
}

/// ACM certificates no stack owns: those tagged for the Copilot app, and those a custom
/// resource's physical id names (Copilot's certificate validators use the ARN).
fn certificates(
    reader: &Reader,
    selection: &Selection,
    stacks: &[Stack],
    region: &str,
) -> Result<Vec<Certificate>, InventoryError> {
    let mut wanted: BTreeMap<String, String> = BTreeMap::new();
    for s in stacks {
        for c in &s.custom_resources {
            if let Some(pid) = c
                .physical_id
                .as_ref()
                .filter(|p| p.starts_with("arn:aws:acm:"))
            {
                wanted.insert(
                    pid.clone(),
                    format!("physical_id:{}/{}", s.name, c.logical_id),
                );
            }
        }
    }
    let mut tags_of: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    if let Selection::Copilot { app, environments } = selection {
        let summaries = reader.paged(
            "acm",
            "ListCertificates",
            json!({}),
            "CertificateSummaryList",
        )?;
        for arn in summaries.iter().filter_map(|c| text(c, "CertificateArn")) {
            let answer = reader.read(
                "acm",
                "ListTagsForCertificate",
                json!({"CertificateArn": arn}),
            )?;
            let t = tags(answer.get("Tags"));
            let ours = t.get("copilot-application") == Some(app)
                && (environments.is_empty()
                    || t.get("copilot-environment")
                        .is_none_or(|e| environments.contains(e)));
            if ours {
                wanted
                    .entry(arn.clone())
                    .and_modify(|why| why.push_str(", tags"))
                    .or_insert_with(|| "tags".into());
            }
            tags_of.insert(arn, t);
        }
    }
    let mut found = Vec::new();
    for (arn, found_by) in wanted {
        let answer =
            match reader.try_read("acm", "DescribeCertificate", json!({"CertificateArn": arn}))? {
                Ok(a) => a,
                Err(e) if means_gone(&e.code) => continue,
                Err(error) => {
                    return Err(InventoryError::Call {
                        operation: "acm:DescribeCertificate".into(),
                        error,
                    });
                }
            };
        let c = answer.get("Certificate").cloned().unwrap_or(Value::Null);
        let tags = match tags_of.remove(&arn) {
            Some(t) => t,
            None => {
                let answer = reader.read(
                    "acm",
                    "ListTagsForCertificate",
                    json!({"CertificateArn": arn}),
                )?;
                super::answer::tags(answer.get("Tags"))
            }
        };
        let strings = |key: &str| {
            list(c.get(key))
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect::<Vec<_>>()
        };
        found.push(Certificate {
            region: arn.split(':').nth(3).unwrap_or(region).to_string(),
            domain_name: text(&c, "DomainName").unwrap_or_default(),
            subject_alternative_names: strings("SubjectAlternativeNames"),
            status: text(&c, "Status").unwrap_or_default(),
            in_use_by: strings("InUseBy"),
            tags,
            validation_records: list(c.get("DomainValidationOptions"))
                .into_iter()
                .filter_map(|o| {
                    let rr = o.get("ResourceRecord")?;
                    Some(ValidationRecord {
                        domain_name: text(o, "DomainName").unwrap_or_default(),
                        name: text(rr, "Name")?,
                        record_type: text(rr, "Type").unwrap_or_else(|| "CNAME".into()),
                        value: text(rr, "Value").unwrap_or_default(),
                    })
                })
                .collect(),
            arn,
            found_by,
        });
    }
    Ok(found)
}

/// A Route 53 hosted zone id, as parameters and physical ids carry it.
fn looks_like_zone_id(v: &str) -> bool {
    let id = v.trim_start_matches("/hostedzone/");
    id.len() >= 10
        && id.len() <= 32
        && id.starts_with('Z')
        && id
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// The hosted zones the stacks reference, with all their records.
fn hosted_zones(reader: &Reader, stacks: &[Stack]) -> Result<Vec<HostedZone>, InventoryError> {
    let mut refs: BTreeMap<String, Vec<ZoneReference>> = BTreeMap::new();
    let mut add = |zone: &str, stack: &str, how: String| {
        let id = zone.trim_start_matches("/hostedzone/").to_string();
        let list = refs.entry(id).or_default();
        let r = ZoneReference {
            stack: stack.to_string(),
            how,
        };
        if !list.contains(&r) {
            list.push(r);
        }
    };
    let mut by_name: Vec<(String, String, String)> = Vec::new();
    for s in stacks {
        for r in &s.resources {
            if r.resource_type == "AWS::Route53::HostedZone"
                && let Some(pid) = &r.physical_id
            {
                add(pid, &s.name, format!("resource:{}", r.logical_id));
            }
        }
        for p in &s.parameters {
            if p.key.contains("HostedZone") && looks_like_zone_id(&p.value) {
                add(&p.value, &s.name, format!("parameter:{}", p.key));
            }
        }
        for o in &s.outputs {
            if o.key.contains("HostedZone") && looks_like_zone_id(&o.value) {
                add(&o.value, &s.name, format!("output:{}", o.key));
            }
        }
        // Copilot's handlers write into the app zone (<app>.<domain>) and the root zone
        // (<domain>), which live in the app stack or outside any stack.
        if s.copilot
            .as_ref()
            .is_some_and(|c| c.kind == CopilotKind::Env)
            && let (Some(app), Some(domain)) = (s.parameter("AppName"), s.parameter("AppDNSName"))
            && !domain.is_empty()
        {
            by_name.push((
                format!("{app}.{domain}."),
                s.name.clone(),
                "app_zone".into(),
            ));
            by_name.push((format!("{domain}."), s.name.clone(), "root_zone".into()));
        }
    }
    for (name, stack, how) in by_name {
        let answer = reader.read(
            "route53",
            "ListHostedZonesByName",
            json!({"dnsname": name, "maxitems": "1"}),
        )?;
        // ListHostedZonesByName starts at the name; only an exact match is the zone.
        if let Some(zone) = list(answer.get("HostedZones"))
            .into_iter()
            .find(|z| text(z, "Name").as_deref() == Some(name.as_str()))
            && let Some(id) = text(zone, "Id")
        {
            add(&id, &stack, format!("{how}:{name}"));
        }
    }

    let mut zones = Vec::new();
    for (id, referenced_by) in refs {
        let answer = match reader.try_read("route53", "GetHostedZone", json!({"Id": id}))? {
            Ok(a) => a,
            Err(e) if means_gone(&e.code) => continue,
            Err(error) => {
                return Err(InventoryError::Call {
                    operation: "route53:GetHostedZone".into(),
                    error,
                });
            }
        };
        let zone = answer.get("HostedZone").cloned().unwrap_or(Value::Null);
        zones.push(HostedZone {
            name: text(&zone, "Name").unwrap_or_default(),
            private: zone.get("Config").is_some_and(|c| flag(c, "PrivateZone")),
            records: records(reader, &id)?,
            id,
            referenced_by,
        });
    }
    Ok(zones)
}

/// Every record set of a zone, following Route 53's NextRecord* paging.
fn records(reader: &Reader, zone_id: &str) -> Result<Vec<RecordSet>, InventoryError> {
    let mut all = Vec::new();
    let mut input = json!({"Id": zone_id});
    loop {
        let page = reader.read("route53", "ListResourceRecordSets", input.clone())?;
        for r in list(page.get("ResourceRecordSets")) {
            all.push(RecordSet {
                name: text(r, "Name").unwrap_or_default(),
                record_type: text(r, "Type").unwrap_or_default(),
                ttl: text(r, "TTL").and_then(|t| t.parse().ok()),
                values: list(r.get("ResourceRecords"))
                    .into_iter()
                    .filter_map(|v| text(v, "Value"))
                    .collect(),
                alias_target: r
                    .get("AliasTarget")
                    .filter(|a| a.is_object())
                    .map(|a| AliasTarget {
                        hosted_zone_id: text(a, "HostedZoneId").unwrap_or_default(),
                        dns_name: text(a, "DNSName").unwrap_or_default(),
                        evaluate_target_health: flag(a, "EvaluateTargetHealth"),
                    }),
                set_identifier: text(r, "SetIdentifier"),
            });
        }
        if !flag(&page, "IsTruncated") {
            return Ok(all);
        }
        input = json!({
            "Id": zone_id,
            "name": text(&page, "NextRecordName"),
            "type": text(&page, "NextRecordType"),
            "identifier": text(&page, "NextRecordIdentifier"),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake account: answers by `service:Operation`, recording every call made.
    struct Fake {
        answer: fn(&str, &Value) -> Result<Value, CallError>,
        calls: std::cell::RefCell<Vec<String>>,
    }

    impl ReadClient for Fake {
        fn call(&self, request: &ReadRequest) -> Result<Value, CallError> {
            let op = format!("{}:{}", request.op().service, request.op().operation);
            self.calls.borrow_mut().push(op.clone());
            (self.answer)(&op, request.input())
        }
    }

    const TEMPLATE: &str = r#"
Parameters:
  Secret: {Type: String, NoEcho: true}
Resources:
  Vpc: {Type: AWS::EC2::VPC, DeletionPolicy: Retain, Properties: {CidrBlock: 10.0.0.0/16}}
  Fn:
    Type: AWS::Lambda::Function
    Properties: {Code: {S3Bucket: artifacts, S3Key: fn.zip}, Handler: index.handler, Runtime: nodejs20.x}
  Action:
    Type: Custom::BucketCleanerFunction
    Properties: {ServiceToken: !GetAtt Fn.Arn, BucketName: logs}
"#;

    fn account(op: &str, input: &Value) -> Result<Value, CallError> {
        let stack = json!({
            "StackName": "app-test", "StackId": "arn:aws:cloudformation:us-east-1:111122223333:stack/app-test/1",
            "StackStatus": "CREATE_COMPLETE",
            "Parameters": [{"ParameterKey": "Secret", "ParameterValue": "****"}],
            "Tags": [{"Key": "copilot-application", "Value": "app"}, {"Key": "copilot-environment", "Value": "test"}],
            "Outputs": {"OutputKey": "VpcId", "OutputValue": "vpc-1"},
            "EnableTerminationProtection": "false",
        });
        match op {
            "sts:GetCallerIdentity" => Ok(json!({"Account": "111122223333"})),
            "cloudformation:DescribeStacks" => match input.get("StackName").and_then(Value::as_str)
            {
                None | Some("app-test") => Ok(json!({"Stacks": [stack]})),
                Some(other) => Err(CallError {
                    code: "ValidationError".into(),
                    message: format!("Stack with id {other} does not exist"),
                }),
            },
            "cloudformation:GetTemplate" => Ok(json!({"TemplateBody": TEMPLATE})),
            "cloudformation:ListStackResources" => match input.get("NextToken") {
                None => Ok(json!({"StackResourceSummaries": [
                    {"LogicalResourceId": "Vpc", "ResourceType": "AWS::EC2::VPC", "PhysicalResourceId": "vpc-1", "ResourceStatus": "CREATE_COMPLETE"},
                    {"LogicalResourceId": "Fn", "ResourceType": "AWS::Lambda::Function", "PhysicalResourceId": "app-test-Fn", "ResourceStatus": "CREATE_COMPLETE"},
                ], "NextToken": "page2"})),
                Some(_) => Ok(
                    json!({"StackResourceSummaries": {"LogicalResourceId": "Action", "ResourceType": "Custom::BucketCleanerFunction", "PhysicalResourceId": "bucket-cleaner-Action", "ResourceStatus": "CREATE_COMPLETE"}}),
                ),
            },
            "ec2:DescribeVpcs" => {
                Ok(json!({"vpcSet": [{"vpcId": "vpc-1", "cidrBlock": "10.0.0.0/16"}]}))
            }
            "lambda:GetFunction" => Ok(json!({
                "Configuration": {"FunctionName": "app-test-Fn", "FunctionArn": "arn:aws:lambda:us-east-1:111122223333:function:app-test-Fn", "Runtime": "nodejs20.x", "Handler": "index.handler", "Timeout": 900},
                "Code": {"RepositoryType": "S3", "Location": "https://example.invalid/code"},
            })),
            "acm:ListCertificates" => Ok(json!({"CertificateSummaryList": []})),
            other => Err(CallError {
                code: "Unexpected".into(),
                message: other.into(),
            }),
        }
    }

    fn request(selection: Selection) -> Request {
        Request {
            selection,
            region: "us-east-1".into(),
            endpoint: None,
            taken_at: "2026-12-04T09:00:00Z".into(),
            taken_by: "test".into(),
        }
    }

    fn fake() -> Fake {
        Fake {
            answer: account,
            calls: Default::default(),
        }
    }

    #[test]
    fn a_stack_is_recorded_with_live_state_handlers_and_masked_parameters() {
        let client = fake();
        let stacks = Selection::Stacks {
            names: vec!["app-test".into()],
        };
        let inv = take(&client, request(stacks)).unwrap();
        assert_eq!(inv.account, "111122223333");
        let s = &inv.stacks[0];
        assert_eq!(s.parameters[0].value, "****");
        assert!(s.parameters[0].no_echo);
        assert_eq!(s.outputs[0].value, "vpc-1");
        assert_eq!(s.copilot.as_ref().unwrap().kind, CopilotKind::Env);
        assert_eq!(s.template, TEMPLATE);
        // Both pages of resources, the VPC described and its policy read from the template.
        assert_eq!(s.resources.len(), 3);
        let vpc = s.resource("Vpc").unwrap();
        assert_eq!(vpc.deletion_policy.as_deref(), Some("Retain"));
        assert_eq!(vpc.import_attributes["vpc_id"], "vpc-1");
        assert!(
            matches!(&vpc.live, LiveState::Described { calls } if calls[0].output["vpcSet"][0]["cidrBlock"] == "10.0.0.0/16")
        );
        let custom = &s.custom_resources[0];
        assert_eq!(custom.properties["BucketName"], "logs");
        let f = custom.function.as_ref().unwrap();
        assert_eq!(custom.service_token, f.arn);
        assert_eq!(f.logical_id.as_deref(), Some("Fn"));
        assert_eq!(f.code.s3_bucket.as_deref(), Some("artifacts"));
        assert_eq!(f.timeout, Some(900));
        assert_eq!(super::super::seal::content_hash(&inv), inv.content_sha256);
        // Stacks selection: no certificate listing by tags.
        assert!(
            !client
                .calls
                .borrow()
                .iter()
                .any(|c| c == "acm:ListCertificates")
        );
    }

    #[test]
    fn an_unknown_stack_is_named() {
        let stacks = Selection::Stacks {
            names: vec!["nope".into()],
        };
        let err = take(&fake(), request(stacks)).unwrap_err();
        assert_eq!(err.to_string(), "stack nope does not exist");
    }

    #[test]
    fn copilot_stacks_are_found_by_tags_and_environments() {
        let found = Selection::Copilot {
            app: "app".into(),
            environments: vec!["test".into()],
        };
        assert_eq!(take(&fake(), request(found)).unwrap().stacks.len(), 1);
        let other_env = Selection::Copilot {
            app: "app".into(),
            environments: vec!["prod".into()],
        };
        let err = take(&fake(), request(other_env)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no stack is tagged copilot-application=app in environment(s) prod"
        );
    }

    #[test]
    fn copilot_kinds_come_from_the_tags() {
        let t = |pairs: &[(&str, &str)]| {
            copilot_of(
                &pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
            .map(|c| c.kind)
        };
        assert_eq!(t(&[("copilot-application", "a")]), Some(CopilotKind::App));
        assert_eq!(
            t(&[
                ("copilot-application", "a"),
                ("copilot-environment", "e"),
                ("copilot-service", "s")
            ]),
            Some(CopilotKind::Workload)
        );
        assert_eq!(
            t(&[("copilot-application", "a"), ("copilot-pipeline", "p")]),
            Some(CopilotKind::Pipeline)
        );
        assert_eq!(t(&[("copilot-environment", "e")]), None);
    }
}
