//! AWS::Serverless::Function: the Lambda function, its generated execution role
//! (`<Fn>Role`), AutoPublishAlias's version (`<Fn>Version<hash>`) and alias, the function URL
//! and its permissions, and each event's resources.

use crate::events;
use crate::intrinsics::resolve_params;
use crate::policies::{self, RoleSpec};
use crate::pyjson;
use crate::resource::{Res, Sam, get_att, is_intrinsic, managed_arn, reference, truthy};
use crate::{Translation, invalid};
use serde_json::{Map, Value, json};

const KNOWN: [&str; 49] = [
    "FunctionName",
    "Handler",
    "Runtime",
    "CodeUri",
    "ImageUri",
    "PackageType",
    "InlineCode",
    "DeadLetterQueue",
    "Description",
    "MemorySize",
    "Timeout",
    "VpcConfig",
    "Role",
    "AssumeRolePolicyDocument",
    "Policies",
    "RolePath",
    "PermissionsBoundary",
    "Environment",
    "Events",
    "Tags",
    "PropagateTags",
    "Tracing",
    "KmsKeyArn",
    "DeploymentPreference",
    "ReservedConcurrentExecutions",
    "Layers",
    "EventInvokeConfig",
    "EphemeralStorage",
    "AutoPublishAlias",
    "AutoPublishCodeSha256",
    "AutoPublishAliasAllProperties",
    "VersionDescription",
    "ProvisionedConcurrencyConfig",
    "FileSystemConfigs",
    "ImageConfig",
    "CodeSigningConfigArn",
    "Architectures",
    "SnapStart",
    "FunctionUrlConfig",
    "RuntimeManagementConfig",
    "LoggingConfig",
    "RecursiveLoop",
    "SourceKMSKeyArn",
    "CapacityProviderConfig",
    "FunctionScalingConfig",
    "VersionDeletionPolicy",
    "PublishToLatestPublished",
    "TenancyConfig",
    "DurableConfig",
];

/// Properties cumulo's transform does not implement: refused by name.
const REFUSED: [&str; 5] = [
    "DeploymentPreference",
    "CapacityProviderConfig",
    "FunctionScalingConfig",
    "DurableConfig",
    "TenancyConfig",
];

/// The function (or its alias, when AutoPublishAlias made one) events connect to.
pub struct Target {
    pub id: String,
    pub is_alias: bool,
    pub attrs: Map<String, Value>,
}

impl Target {
    /// `FunctionName` of a permission or mapping: the function's Ref, or the alias's (an ARN).
    pub fn name(&self) -> Value {
        reference(&self.id)
    }

    pub fn arn(&self) -> Value {
        if self.is_alias {
            reference(&self.id)
        } else {
            get_att(&self.id, "Arn")
        }
    }
}

pub fn translate(
    t: &mut Translation,
    sam: &mut Sam,
    live: &mut Map<String, Value>,
) -> Result<Vec<Res>, String> {
    sam.check_known(&KNOWN)?;
    sam.refuse(&REFUSED)?;
    if sam
        .get("AutoPublishAliasAllProperties")
        .is_some_and(|v| !v.is_boolean())
    {
        return Err(invalid(
            sam.id,
            "Type of property 'AutoPublishAliasAllProperties' is invalid.",
        ));
    }
    if let Some(p) = policies::expand_templates(sam.id, sam.get("Policies"))? {
        sam.props.insert("Policies".into(), p);
    }
    if let Some(dlq) = sam.get("DeadLetterQueue") {
        let ty = dlq.get("Type");
        if ty.is_none() || !truthy(dlq.get("TargetArn")) {
            return Err(invalid(
                sam.id,
                "'DeadLetterQueue' requires Type and TargetArn properties to be specified.",
            ));
        }
        if !matches!(ty.and_then(Value::as_str), Some("SQS" | "SNS")) {
            return Err(invalid(
                sam.id,
                "'DeadLetterQueue' requires Type of ['SQS', 'SNS']",
            ));
        }
    }
    let mut resources = Vec::new();
    let mut function = construct_function(t, sam)?;
    if sam.get("ProvisionedConcurrencyConfig").is_some() && sam.get("AutoPublishAlias").is_none() {
        return Err(invalid(
            sam.id,
            "To set ProvisionedConcurrencyConfig AutoPublishALias must be defined on the function",
        ));
    }
    let mut alias: Option<Res> = None;
    let mut version_and_alias = Vec::new();
    if let Some(alias_value) = sam.get("AutoPublishAlias") {
        let name = match resolve_params(alias_value, &t.params) {
            Value::String(s) => s,
            _ => {
                return Err(invalid(
                    sam.id,
                    "'AutoPublishAlias' must be a string or a Ref to a template parameter",
                ));
            }
        };
        let mut code_sha256 = None;
        if let Some(sha) = sam.get("AutoPublishCodeSha256") {
            let Value::String(sha) = resolve_params(sha, &t.params) else {
                return Err(invalid(sam.id, "AutoPublishCodeSha256 must be a string"));
            };
            let description = sam.get("Description").map(|d| resolve_params(d, &t.params));
            let described = match description {
                None => json!(sha),
                Some(Value::String(d)) if d.is_empty() => json!(sha),
                Some(Value::String(d)) => json!(format!("{d} {sha}")),
                Some(Value::Null) => json!(sha),
                Some(d) => json!({"Fn::Join": [" ", [d, sha]]}),
            };
            function.put("Description", described);
            code_sha256 = Some(sha);
        }
        // The translator resolves the code's parameter references in place for the hash, so
        // the function keeps the resolved values too.
        let code = resolve_params(&function.props["Code"], &t.params);
        function.put("Code", code);
        let version = construct_version(t, sam, &function, code_sha256.as_deref())?;
        let a = construct_alias(sam, &name, &function, &version)?;
        t.refs.add(sam.id, "Version", &version.id);
        t.refs.add(sam.id, "Alias", &a.id);
        version_and_alias.push(version);
        alias = Some(a.clone());
        version_and_alias.push(a);
    }
    let target = match &alias {
        Some(a) => Target {
            id: a.id.clone(),
            is_alias: true,
            attrs: sam.passthrough(),
        },
        None => Target {
            id: sam.id.to_string(),
            is_alias: false,
            attrs: sam.passthrough(),
        },
    };
    let mut url_resources = Vec::new();
    if let Some(config) = sam.get("FunctionUrlConfig") {
        url_resources = function_url(sam, config, &target)?;
    }
    let mut invoke_resources = Vec::new();
    let mut invoke_policies = Vec::new();
    if let Some(config) = sam.get("EventInvokeConfig") {
        let alias_name = alias
            .as_ref()
            .and_then(|a| a.props.get("Name"))
            .and_then(Value::as_str);
        (invoke_resources, invoke_policies) = event_invoke_config(
            t,
            sam,
            config,
            alias.as_ref().map(|a| a.id.as_str()),
            alias_name,
        )?;
    }
    let mut role = construct_role(t, sam, invoke_policies)?;
    let role_needed = match function.props.get("Role") {
        None => {
            function.put("Role", get_att(&role.id, "Arn"));
            true
        }
        Some(r) if r.get("Fn::If").is_some() && r.as_object().is_some_and(|o| o.len() == 1) => {
            let items = r["Fn::If"].as_array().cloned().unwrap_or_default();
            if items
                .iter()
                .skip(1)
                .any(|b| b.get("Ref").and_then(Value::as_str) == Some("AWS::NoValue"))
            {
                return Err(crate::unsupported(
                    sam.id,
                    "A 'Role' of Fn::If with AWS::NoValue",
                ));
            }
            false
        }
        Some(_) => false,
    };
    let event_resources = events::translate(t, sam, &target, &mut role, live)?;
    resources.push(function);
    resources.extend(version_and_alias);
    resources.extend(url_resources);
    resources.extend(invoke_resources);
    if role_needed {
        resources.push(role);
    }
    resources.extend(event_resources);
    propagate_tags(sam, &mut resources);
    Ok(resources)
}

/// The generated resource types the translator's models give a `Tags` list.
const TAGGABLE: [&str; 8] = [
    "AWS::Lambda::Function",
    "AWS::IAM::Role",
    "AWS::SQS::Queue",
    "AWS::SNS::Topic",
    "AWS::DynamoDB::Table",
    "AWS::StepFunctions::StateMachine",
    "AWS::CloudFormation::Stack",
    "AWS::S3::Bucket",
];

/// PropagateTags: every generated resource that takes tags gets the resource's `Tags` as its
/// whole list (the translator replaces, so SAM's own `lambda:createdBy` goes too).
pub fn propagate_tags(sam: &Sam, resources: &mut [Res]) {
    let Some(Value::Object(tags)) = sam.get("Tags") else {
        return;
    };
    if !truthy(sam.get("PropagateTags")) || tags.is_empty() {
        return;
    }
    let list = Value::Array(crate::resource::tag_list(tags));
    for r in resources
        .iter_mut()
        .filter(|r| TAGGABLE.contains(&r.ty.as_str()))
    {
        r.put("Tags", list.clone());
    }
}

fn construct_function(t: &Translation, sam: &Sam) -> Result<Res, String> {
    let mut f = sam.main("AWS::Lambda::Function");
    if truthy(sam.get("FunctionName")) {
        f.set("FunctionName", sam.cloned("FunctionName"));
    }
    for p in [
        "Handler",
        "Runtime",
        "Description",
        "MemorySize",
        "Timeout",
        "VpcConfig",
        "Role",
        "Environment",
    ] {
        f.set(p, sam.cloned(p));
    }
    f.put("Code", code(sam)?);
    for p in ["KmsKeyArn", "ReservedConcurrentExecutions"] {
        f.set(p, sam.cloned(p));
    }
    f.put("Tags", sam.tag_list(&[])?);
    for p in [
        "Layers",
        "FileSystemConfigs",
        "ImageConfig",
        "PackageType",
        "Architectures",
        "SnapStart",
        "EphemeralStorage",
    ] {
        f.set(p, sam.cloned(p));
    }
    if let Some(tracing) = sam.get("Tracing")
        && truthy(Some(tracing))
        && resolve_params(tracing, &t.params) != json!("Disabled")
    {
        f.put("TracingConfig", json!({"Mode": tracing}));
    }
    if let Some(dlq) = sam.get("DeadLetterQueue") {
        f.put("DeadLetterConfig", json!({"TargetArn": dlq["TargetArn"]}));
    }
    for p in [
        "CodeSigningConfigArn",
        "RuntimeManagementConfig",
        "LoggingConfig",
        "RecursiveLoop",
        "PublishToLatestPublished",
    ] {
        f.set(p, sam.cloned(p));
    }
    validate_package_type(sam, &f)?;
    Ok(f)
}

fn validate_package_type(sam: &Sam, f: &Res) -> Result<(), String> {
    let package = f
        .props
        .get("PackageType")
        .and_then(Value::as_str)
        .unwrap_or("Zip");
    let has = |p: &str| truthy(f.props.get(p));
    if package == "Zip" {
        if !(has("Runtime") && has("Handler")) {
            return Err(invalid(
                sam.id,
                "Runtime and Handler needs to be present when PackageType is of type `Zip`",
            ));
        }
        if truthy(f.props.get("Code").and_then(|c| c.get("ImageUri"))) || has("ImageConfig") {
            return Err(invalid(
                sam.id,
                "ImageUri or ImageConfig cannot be present when PackageType is of type `Zip`",
            ));
        }
    } else if has("Handler") || has("Runtime") || has("Layers") {
        return Err(invalid(
            sam.id,
            "Runtime, Handler, Layers cannot be present when PackageType is of type `Image`",
        ));
    }
    Ok(())
}

/// The Code dictionary: InlineCode, CodeUri (an S3 URI or {Bucket, Key, Version}) or ImageUri.
fn code(sam: &Sam) -> Result<Value, String> {
    let package = match sam.get("PackageType") {
        None => "Zip".to_string(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let present = |p: &str| sam.props.get(p).is_some_and(|v| !v.is_null());
    let mut code = match package.as_str() {
        "Zip" => {
            if present("InlineCode") {
                json!({"ZipFile": sam.props["InlineCode"]})
            } else if present("CodeUri") {
                s3_location(sam.id, &sam.props["CodeUri"], "CodeUri")?
            } else {
                return Err(invalid(
                    sam.id,
                    "Only one of 'InlineCode' or 'CodeUri' can be set.",
                ));
            }
        }
        "Image" => {
            if !present("ImageUri") {
                return Err(invalid(sam.id, "'ImageUri' must be set."));
            }
            if !truthy(sam.props.get("ImageUri")) {
                return Err(invalid(
                    sam.id,
                    "'ImageUri' requires that a image hosted at a registry be specified.",
                ));
            }
            json!({"ImageUri": sam.props["ImageUri"]})
        }
        other => return Err(invalid(sam.id, format!("invalid 'PackageType' : {other}"))),
    };
    if package == "Zip"
        && let (Some(k), Some(c)) = (sam.get("SourceKMSKeyArn"), code.as_object_mut())
    {
        c.insert("SourceKMSKeyArn".into(), k.clone());
    }
    Ok(code)
}

/// `construct_s3_location_object`: a CodeUri/ContentUri/DefinitionUri as Lambda's S3 keys.
pub fn s3_location(id: &str, uri: &Value, property: &str) -> Result<Value, String> {
    let (bucket, key, version) = s3_pointer(id, uri, property)?;
    let mut code = json!({"S3Bucket": bucket, "S3Key": key});
    if let Some(v) = version {
        code["S3ObjectVersion"] = v;
    }
    Ok(code)
}

/// An S3 location's bucket, key and version, from `s3://bucket/key?versionId=v` or a map.
pub fn s3_pointer(
    id: &str,
    uri: &Value,
    property: &str,
) -> Result<(Value, Value, Option<Value>), String> {
    match uri {
        Value::Object(o) => {
            if !truthy(o.get("Bucket")) || !truthy(o.get("Key")) {
                return Err(invalid(
                    id,
                    format!("'{property}' requires Bucket and Key properties to be specified."),
                ));
            }
            Ok((
                o["Bucket"].clone(),
                o["Key"].clone(),
                o.get("Version").cloned(),
            ))
        }
        Value::String(s) => {
            if s.contains("{{resolve:") && s.contains('/') {
                return Err(invalid(
                    id,
                    format!(
                        "Unsupported dynamic reference detected in '{property}'. Please consider using alternative 'FunctionCode' object format."
                    ),
                ));
            }
            parse_s3_uri(s).ok_or_else(|| {
                invalid(
                    id,
                    format!("'{property}' is not a valid S3 Uri of the form 's3://bucket/key' with optional versionId query parameter."),
                )
            })
        }
        _ => Err(invalid(
            id,
            format!("'{property}' must be of type dict or string."),
        )),
    }
}

fn parse_s3_uri(s: &str) -> Option<(Value, Value, Option<Value>)> {
    let rest = s.strip_prefix("s3://")?;
    let (location, query) = match rest.split_once('?') {
        Some((l, q)) => (l, Some(q)),
        None => (rest, None),
    };
    let location = location.split('#').next().unwrap_or(location);
    let (bucket, path) = location.split_once('/')?;
    if bucket.is_empty() {
        return None;
    }
    let key = path.trim_start_matches('/');
    let versions: Vec<&str> = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .filter_map(|kv| kv.strip_prefix("versionId="))
        .filter(|v| !v.is_empty())
        .collect();
    let version = (versions.len() == 1).then(|| json!(versions[0]));
    Some((json!(bucket), json!(key), version))
}

fn construct_version(
    t: &Translation,
    sam: &Sam,
    function: &Res,
    code_sha256: Option<&str>,
) -> Result<Res, String> {
    let logical = if truthy(sam.get("AutoPublishAliasAllProperties")) {
        all_properties(t, function)
    } else {
        code_properties(function)
    };
    let hash = match code_sha256 {
        Some(sha) if !sha.is_empty() => sha.chars().take(10).collect(),
        _ => pyjson::hash(&Value::Object(logical)),
    };
    let mut attrs = sam.passthrough();
    if !attrs.contains_key("DeletionPolicy") {
        let policy = sam
            .cloned("VersionDeletionPolicy")
            .unwrap_or(json!("Retain"));
        attrs.insert("DeletionPolicy".into(), policy);
    }
    let mut v = Res::new(
        format!("{}Version{hash}", sam.id),
        "AWS::Lambda::Version",
        attrs,
    );
    v.put("FunctionName", reference(sam.id));
    v.set("Description", sam.cloned("VersionDescription"));
    Ok(v)
}

/// What a version's hash covers by default: the code, the environment, the memory size and an
/// active SnapStart (a new version is published when one of them changes).
fn code_properties(function: &Res) -> Map<String, Value> {
    let mut logical = function.props["Code"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    if let Some(Value::Object(env)) = function.props.get("Environment") {
        for (k, v) in env {
            logical.insert(k.clone(), v.clone());
        }
    }
    if truthy(function.props.get("MemorySize")) {
        logical.insert("MemorySize".into(), function.props["MemorySize"].clone());
    }
    if let Some(snap) = function.props.get("SnapStart")
        && truthy(Some(snap))
        && snap
            .get("ApplyOn")
            .and_then(Value::as_str)
            .unwrap_or("None")
            != "None"
    {
        logical.insert("SnapStart".into(), snap.clone());
    }
    logical
}

/// `AutoPublishAliasAllProperties`: the hash covers every property the function has when its
/// version is made (before a generated role is given to it, as in AWS's translator), plus the
/// properties of each of its layers declared in the template with `PublishLambdaVersion`, so a
/// change to such a layer publishes a new version too.
fn all_properties(t: &Translation, function: &Res) -> Map<String, Value> {
    let mut logical = function.props.clone();
    let layers = function.props.get("Layers").and_then(Value::as_array);
    for layer in layers.into_iter().flatten() {
        let Some(id) = logical_id_of(layer) else {
            continue;
        };
        let Some(resource) = t.original["Resources"].get(id) else {
            continue;
        };
        let props = resource
            .get("Properties")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        if truthy(props.get("PublishLambdaVersion")) {
            logical.insert(id.to_string(), props);
        }
    }
    logical
}

/// The logical id a `Ref` or `Fn::GetAtt` names.
fn logical_id_of(v: &Value) -> Option<&str> {
    let o = v.as_object().filter(|o| o.len() == 1)?;
    if let Some(Value::String(id)) = o.get("Ref") {
        return Some(id);
    }
    match o.get("Fn::GetAtt")? {
        Value::Array(a) if a.len() == 2 => a[0].as_str(),
        Value::String(s) => s.split('.').next(),
        _ => None,
    }
}

fn construct_alias(sam: &Sam, name: &str, function: &Res, version: &Res) -> Result<Res, String> {
    if name.is_empty() {
        return Err(invalid(sam.id, "Alias name is required to create an alias"));
    }
    let valid = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.chars().all(|c| c.is_ascii_digit());
    if !valid {
        return Err(invalid(
            sam.id,
            format!(
                "AutoPublishAlias name ('{name}') must contain only alphanumeric characters, hyphens, or underscores matching (?!^[0-9]+$)([a-zA-Z0-9-_]+) pattern."
            ),
        ));
    }
    let alnum = name.replace('-', "D").replace('_', "U");
    let mut a = Res::new(
        format!("{}Alias{alnum}", function.id),
        "AWS::Lambda::Alias",
        sam.passthrough(),
    );
    a.put("Name", json!(name));
    a.put("FunctionName", reference(&function.id));
    a.put("FunctionVersion", get_att(&version.id, "Version"));
    a.set(
        "ProvisionedConcurrencyConfig",
        sam.cloned("ProvisionedConcurrencyConfig"),
    );
    Ok(a)
}

fn function_url(sam: &Sam, config: &Value, target: &Target) -> Result<Vec<Res>, String> {
    if !is_intrinsic(config) {
        let auth = config.get("AuthType");
        let auth_ok = auth.is_some_and(is_intrinsic)
            || matches!(auth.and_then(Value::as_str), Some("AWS_IAM" | "NONE"));
        if !auth_ok {
            return Err(invalid(
                sam.id,
                "AuthType is required to configure function property `FunctionUrlConfig`. Please provide either AWS_IAM or NONE.",
            ));
        }
        if let Some(Value::Object(cors)) = config.get("Cors").filter(|c| !is_intrinsic(c)) {
            for (k, v) in cors {
                let ty = match k.as_str() {
                    "AllowOrigins" | "AllowMethods" | "AllowHeaders" | "ExposeHeaders" => "list",
                    "AllowCredentials" => "bool",
                    "MaxAge" => "int",
                    _ => {
                        return Err(invalid(
                            sam.id,
                            format!("{k} is not a valid property for configuring Cors."),
                        ));
                    }
                };
                let ok = is_intrinsic(v)
                    || match ty {
                        "list" => v.is_array(),
                        "bool" => v.is_boolean(),
                        _ => v.is_i64() || v.is_u64() || v.is_boolean(),
                    };
                if !ok {
                    return Err(invalid(sam.id, format!("{k} must be of type {ty}.")));
                }
            }
        }
    }
    let target_value = if target.is_alias {
        reference(&target.id)
    } else {
        reference(sam.id)
    };
    let mut url = Res::new(
        format!("{}Url", sam.id),
        "AWS::Lambda::Url",
        sam.passthrough(),
    );
    if truthy(config.get("Cors")) {
        url.put("Cors", config["Cors"].clone());
    }
    url.set("AuthType", config.get("AuthType").cloned());
    url.put("TargetFunctionArn", target_value.clone());
    url.set("InvokeMode", config.get("InvokeMode").cloned());
    let mut out = vec![url];
    if config.get("AuthType").and_then(Value::as_str) == Some("NONE") && !is_intrinsic(config) {
        let mut public = Res::new(
            format!("{}UrlPublicPermissions", sam.id),
            "AWS::Lambda::Permission",
            sam.passthrough(),
        );
        public.put("Action", json!("lambda:InvokeFunctionUrl"));
        public.put("FunctionName", target_value.clone());
        public.put("Principal", json!("*"));
        public.put("FunctionUrlAuthType", json!("NONE"));
        let mut invoke = Res::new(
            format!("{}URLInvokeAllowPublicAccess", sam.id),
            "AWS::Lambda::Permission",
            sam.passthrough(),
        );
        invoke.put("Action", json!("lambda:InvokeFunction"));
        invoke.put("FunctionName", target_value);
        invoke.put("Principal", json!("*"));
        invoke.put("InvokedViaFunctionUrl", json!(true));
        out.push(public);
        out.push(invoke);
    }
    Ok(out)
}

fn construct_role(t: &Translation, sam: &Sam, invoke_policies: Vec<Value>) -> Result<Res, String> {
    let partition = t.ctx.partition.as_str();
    let mut managed = vec![managed_arn(
        partition,
        "service-role/AWSLambdaBasicExecutionRole",
    )];
    if let Some(tracing) = sam.get("Tracing")
        && truthy(Some(tracing))
        && resolve_params(tracing, &t.params) != json!("Disabled")
    {
        managed.push(policies::xray_arn(partition));
    }
    if truthy(sam.get("VpcConfig")) {
        managed.push(managed_arn(
            partition,
            "service-role/AWSLambdaVPCAccessExecutionRole",
        ));
    }
    let mut documents = Vec::new();
    if let Some(dlq) = sam.get("DeadLetterQueue") {
        let action = if dlq["Type"] == json!("SQS") {
            "sqs:SendMessage"
        } else {
            "sns:Publish"
        };
        documents.push(json!({"PolicyName": "DeadLetterQueuePolicy", "PolicyDocument": {"Version": "2012-10-17", "Statement": [{"Action": action, "Resource": dlq["TargetArn"], "Effect": "Allow"}]}}));
    }
    documents.extend(invoke_policies);
    policies::construct_role(
        sam.id,
        RoleSpec {
            role_id: format!("{}Role", sam.id),
            attrs: sam.passthrough(),
            partition,
            assume_role_policy: sam
                .cloned("AssumeRolePolicyDocument")
                .unwrap_or_else(policies::lambda_assume_role),
            managed_arns: managed,
            documents,
            path: sam.cloned("RolePath"),
            permissions_boundary: sam.cloned("PermissionsBoundary"),
            tags: Some(sam.tag_list(&[])?),
        },
        sam.get("Policies"),
    )
}

/// EventInvokeConfig: the AWS::Lambda::EventInvokeConfig (on the alias when there is one), the
/// queue or topic SAM makes for a destination of type SQS/SNS given without an ARN, and the
/// role policies that let the function send to each destination.
fn event_invoke_config(
    t: &Translation,
    sam: &Sam,
    config: &Value,
    alias_id: Option<&str>,
    alias_name: Option<&str>,
) -> Result<(Vec<Res>, Vec<Value>), String> {
    let resolved = resolve_params(config, &t.params);
    let logical_id = format!("{}EventInvokeConfig", sam.id);
    let mut resources = Vec::new();
    let mut policies = Vec::new();
    let mut destinations = Map::new();
    if let Some(input) = resolved
        .get("DestinationConfig")
        .filter(|v| truthy(Some(v)))
    {
        let Some(input) = input.as_object() else {
            return Err(invalid(
                sam.id,
                "Property 'EventInvokeConfig.DestinationConfig' should be a map.",
            ));
        };
        for name in ["OnSuccess", "OnFailure"] {
            let Some(dest) = input.get(name).filter(|v| !v.is_null()) else {
                continue;
            };
            if !dest.is_object() {
                return Err(invalid(
                    sam.id,
                    format!(
                        "Property 'EventInvokeConfig.DestinationConfig.{name}' should be a map."
                    ),
                ));
            }
            let accepted = ["SQS", "SNS", "EventBridge", "Lambda", "S3Bucket"];
            let ty = dest
                .get("Type")
                .and_then(Value::as_str)
                .filter(|t| accepted.contains(t));
            let Some(ty) = ty else {
                let shown = dest.get("Type").map_or("None".to_string(), |v| {
                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                });
                return Err(invalid(
                    sam.id,
                    format!(
                        "'Type: {shown}' must be one of ['SQS', 'SNS', 'EventBridge', 'Lambda', 'S3Bucket']"
                    ),
                ));
            };
            let given = dest.get("Destination").filter(|v| !v.is_null());
            if given.is_some_and(|d| d.get("Fn::If").is_some()) {
                return Err(crate::unsupported(
                    sam.id,
                    "An EventInvokeConfig Destination of Fn::If",
                ));
            }
            let resource_id = format!("{logical_id}{name}");
            let destination = match given {
                Some(d) => d.clone(),
                None => match ty {
                    "SQS" => {
                        let q = Res::new(
                            format!("{resource_id}Queue"),
                            "AWS::SQS::Queue",
                            sam.passthrough(),
                        );
                        let arn = get_att(&q.id, "Arn");
                        resources.push(q);
                        arn
                    }
                    "SNS" => {
                        let topic = Res::new(
                            format!("{resource_id}Topic"),
                            "AWS::SNS::Topic",
                            sam.passthrough(),
                        );
                        let arn = reference(&topic.id);
                        resources.push(topic);
                        arn
                    }
                    _ => {
                        return Err(invalid(
                            sam.id,
                            "Destination is required if Type is not ['SQS', 'SNS']",
                        ));
                    }
                },
            };
            let statement = |suffix: &str, statements: Value| json!({"PolicyName": format!("{resource_id}{suffix}"), "PolicyDocument": {"Statement": statements}});
            policies.push(match ty {
                "SQS" => statement("SQSPolicy", json!([{"Action": "sqs:SendMessage", "Effect": "Allow", "Resource": destination}])),
                "SNS" => statement("SNSPolicy", json!([{"Action": "sns:publish", "Effect": "Allow", "Resource": destination}])),
                "EventBridge" => statement("EventBridgePolicy", json!([{"Action": "events:PutEvents", "Effect": "Allow", "Resource": destination}])),
                "Lambda" => statement("LambdaPolicy", json!([{"Action": "lambda:InvokeFunction", "Effect": "Allow", "Resource": destination}])),
                _ => statement("S3Policy", json!([{"Action": "s3:PutObject", "Effect": "Allow", "Resource": {"Fn::Join": ["/", [destination, "*"]]}}, {"Action": "s3:ListBucket", "Effect": "Allow", "Resource": destination}])),
            });
            destinations.insert(name.to_string(), json!({"Destination": destination}));
        }
    }
    let mut r = Res::new(
        &logical_id,
        "AWS::Lambda::EventInvokeConfig",
        sam.attrs.clone(),
    );
    if let Some(a) = alias_id {
        r.depends_on = Some(json!([a]));
    }
    r.put("FunctionName", reference(sam.id));
    r.put("Qualifier", json!(alias_name.unwrap_or("$LATEST")));
    r.put("DestinationConfig", Value::Object(destinations));
    r.set(
        "MaximumEventAgeInSeconds",
        resolved.get("MaximumEventAgeInSeconds").cloned(),
    );
    r.set(
        "MaximumRetryAttempts",
        resolved.get("MaximumRetryAttempts").cloned(),
    );
    resources.push(r);
    Ok((resources, policies))
}
