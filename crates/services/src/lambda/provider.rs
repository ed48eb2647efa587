//! CloudFormation providers of Lambda's resource types, over Lambda's typed operations:
//! AWS::Lambda::Function (waits for Active), Version, Alias, Permission, Url, LayerVersion,
//! EventSourceMapping and EventInvokeConfig.

use super::config::PermissionInput;
use super::esm::MappingInput;
use super::invoke_config::EventInvokeInput;
use super::layers::PublishLayerInput;
use super::model::{
    CodeInput, CreateFunctionInput, LoggingConfig, LoggingInput, UpdateConfigInput,
};
use super::names::function_arn;
use super::{Lambda, LambdaService, code};
use crate::providers::declared::{self, Answer, Declared, Made};
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{
    ProviderServices, already_exists, check_known, endpoint_host, failed, given_or_generated_name,
    list, object, required, scalar, tags,
};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

const FUNCTION: &str = "AWS::Lambda::Function";
const VERSION: &str = "AWS::Lambda::Version";
const ALIAS: &str = "AWS::Lambda::Alias";
const PERMISSION: &str = "AWS::Lambda::Permission";
const URL: &str = "AWS::Lambda::Url";
const LAYER_VERSION: &str = "AWS::Lambda::LayerVersion";
const MAPPING: &str = "AWS::Lambda::EventSourceMapping";
const INVOKE_CONFIG: &str = "AWS::Lambda::EventInvokeConfig";

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let core = s.lambda.core();
    r.register(
        FUNCTION,
        Arc::new(FunctionProvider {
            lambda: s.lambda.clone(),
        }),
    );
    r.register(VERSION, Arc::new(VersionProvider { core: core.clone() }));
    r.register(ALIAS, Arc::new(AliasProvider { core: core.clone() }));
    r.register(
        PERMISSION,
        Arc::new(PermissionProvider { core: core.clone() }),
    );
    r.register(URL, Arc::new(UrlProvider { core: core.clone() }));
    r.register(
        LAYER_VERSION,
        Arc::new(LayerVersionProvider { core: core.clone() }),
    );
    declared::register(r, InvokeConfig(core.clone()));
    r.register(MAPPING, Arc::new(MappingProvider { core }));
}

fn fail(ctx: &ProviderContext, e: cumulo_wire::AwsError) -> ProviderError {
    failed(ctx, "Lambda", e)
}

fn int(props: &Map<String, Value>, key: &str) -> Result<Option<i64>, ProviderError> {
    match scalar(props, key)? {
        None => Ok(None),
        Some(s) => s.parse().map(Some).map_err(|_| {
            ProviderError::Failed(format!(
                "Properties validation failed for resource with message: #/{key}: expected type: Integer, found: String"
            ))
        }),
    }
}

fn strings(props: &Map<String, Value>, key: &str) -> Result<Vec<String>, ProviderError> {
    list(props, key)?
        .iter()
        .map(|v| {
            crate::providers::scalar_value(v).ok_or_else(|| {
                ProviderError::Failed(format!(
                    "Properties validation failed for resource with message: #/{key}: expected type: String"
                ))
            })
        })
        .collect()
}

fn sub_object<'a>(
    props: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a Map<String, Value>>, ProviderError> {
    match props.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(_) => Err(ProviderError::Failed(format!(
            "Properties validation failed for resource with message: #/{key}: expected type: JSONObject"
        ))),
    }
}

// --- AWS::Lambda::Function -------------------------------------------------------------------

struct FunctionProvider {
    lambda: Arc<LambdaService>,
}

const FUNCTION_KNOWN: &[&str] = &[
    "Architectures",
    "Code",
    "Description",
    "Environment",
    "EphemeralStorage",
    "FunctionName",
    "Handler",
    "KmsKeyArn",
    "Layers",
    "LoggingConfig",
    "MemorySize",
    "PackageType",
    "ReservedConcurrentExecutions",
    "Role",
    "Runtime",
    "Tags",
    "Timeout",
    "TracingConfig",
];

const FUNCTION_UNSUPPORTED: &[(&str, &str)] = &[
    (
        "CapacityProviderConfig",
        "Lambda Managed Instances are not emulated",
    ),
    ("CodeSigningConfigArn", "code signing is not emulated"),
    (
        "DeadLetterConfig",
        "dead-letter queues of asynchronous invocations are not emulated",
    ),
    ("DurableConfig", "durable functions are not emulated"),
    ("FileSystemConfigs", "EFS mounts are not emulated"),
    (
        "FunctionScalingConfig",
        "scaling configuration is not emulated",
    ),
    (
        "ImageConfig",
        "container image functions need a container engine, which cumulo does not use",
    ),
    ("PublishToLatestPublished", "not emulated"),
    ("RecursiveLoop", "recursive loop detection is not emulated"),
    (
        "RuntimeManagementConfig",
        "runtime management is not emulated",
    ),
    ("SnapStart", "SnapStart is not emulated"),
    ("TenancyConfig", "tenant isolation is not emulated"),
    ("VpcConfig", "functions run on the host, not in a VPC"),
];

/// The function's settings from its properties.
struct FunctionProps {
    runtime: Option<String>,
    handler: Option<String>,
    role: String,
    description: String,
    timeout: Option<i64>,
    memory: Option<i64>,
    environment: BTreeMap<String, String>,
    layers: Vec<String>,
    architectures: Vec<String>,
    ephemeral: Option<i64>,
    concurrency: Option<i64>,
    logging: Option<Map<String, Value>>,
    tracing_mode: Option<String>,
    kms_key_arn: Option<String>,
}

/// The whole LoggingConfig a template declares for function `name` (absent fields at AWS's
/// defaults), so an update replaces what the function has rather than merging into it.
fn logging_input(p: &FunctionProps, name: &str) -> Result<LoggingInput, ProviderError> {
    let empty = Map::new();
    let l = p.logging.as_ref().unwrap_or(&empty);
    let format = scalar(l, "LogFormat")?.unwrap_or_else(|| "Text".into());
    let json = format == "JSON";
    let level = |field: &str| -> Result<Option<String>, ProviderError> {
        Ok(scalar(l, field)?.or_else(|| json.then(|| "INFO".to_string())))
    };
    Ok(LoggingInput {
        application_log_level: level("ApplicationLogLevel")?,
        system_log_level: level("SystemLogLevel")?,
        log_format: Some(format),
        log_group: Some(scalar(l, "LogGroup")?.unwrap_or_else(|| format!("/aws/lambda/{name}"))),
    })
}

fn function_props(props: &Map<String, Value>) -> Result<FunctionProps, ProviderError> {
    check_known(FUNCTION, props, FUNCTION_KNOWN, FUNCTION_UNSUPPORTED)?;
    if let Some(p) = scalar(props, "PackageType")?
        && p != "Zip"
    {
        return Err(crate::providers::unsupported_prop(
            FUNCTION,
            "PackageType",
            "container image functions need a container engine, which cumulo does not use",
        ));
    }
    // Stored and reported as Lambda does (X-Ray itself is not emulated: no traces are sent).
    let tracing_mode = match sub_object(props, "TracingConfig")? {
        Some(t) => scalar(t, "Mode")?,
        None => None,
    };
    let environment = match sub_object(props, "Environment")? {
        Some(e) => match sub_object(e, "Variables")? {
            Some(vars) => vars
                .iter()
                .map(|(k, v)| {
                    crate::providers::scalar_value(v)
                        .map(|s| (k.clone(), s))
                        .ok_or_else(|| {
                            ProviderError::Failed(format!(
                                "Properties validation failed for resource with message: #/Environment/Variables/{k}: expected type: String"
                            ))
                        })
                })
                .collect::<Result<_, _>>()?,
            None => BTreeMap::new(),
        },
        None => BTreeMap::new(),
    };
    let ephemeral = match sub_object(props, "EphemeralStorage")? {
        Some(e) => int(e, "Size")?,
        None => None,
    };
    Ok(FunctionProps {
        runtime: scalar(props, "Runtime")?,
        handler: scalar(props, "Handler")?,
        role: required(props, "Role")?,
        description: scalar(props, "Description")?.unwrap_or_default(),
        timeout: int(props, "Timeout")?,
        memory: int(props, "MemorySize")?,
        environment,
        layers: strings(props, "Layers")?,
        logging: sub_object(props, "LoggingConfig")?.cloned(),
        architectures: strings(props, "Architectures")?,
        ephemeral,
        concurrency: int(props, "ReservedConcurrentExecutions")?,
        tracing_mode,
        kms_key_arn: scalar(props, "KmsKeyArn")?,
    })
}

/// The package a `Code` property stands for. Inline `ZipFile` source becomes `index.js` /
/// `index.py` (by runtime) in a one-file zip, as CloudFormation does.
fn code_input(
    props: &Map<String, Value>,
    runtime: Option<&str>,
) -> Result<CodeInput, ProviderError> {
    let code = sub_object(props, "Code")?.ok_or_else(|| {
        ProviderError::Failed(
            "Properties validation failed for resource with message: #: required key [Code] not found".into(),
        )
    })?;
    if code.contains_key("ImageUri") {
        return Err(crate::providers::unsupported_prop(
            FUNCTION,
            "Code.ImageUri",
            "container image functions need a container engine, which cumulo does not use",
        ));
    }
    if code.contains_key("SourceKMSKeyArn") {
        return Err(crate::providers::unsupported_prop(
            FUNCTION,
            "Code.SourceKMSKeyArn",
            "encrypted packages are not emulated",
        ));
    }
    if let Some(src) = scalar(code, "ZipFile")? {
        let file = match runtime {
            Some(r) if r.starts_with("python") => "index.py",
            _ => "index.js",
        };
        let zip = code::single_file_zip(file, src.as_bytes()).map_err(|e| {
            ProviderError::Failed(format!("cumulo: could not build the inline package: {e}"))
        })?;
        return Ok(CodeInput::Zip(zip));
    }
    match (scalar(code, "S3Bucket")?, scalar(code, "S3Key")?) {
        (Some(bucket), Some(key)) => Ok(CodeInput::S3 {
            bucket,
            key,
            version: scalar(code, "S3ObjectVersion")?,
        }),
        _ => Err(ProviderError::Failed(
            "Properties validation failed for resource with message: #/Code: one of ZipFile, S3Bucket/S3Key or ImageUri is required".into(),
        )),
    }
}

/// Waits until the function is Active and its last update finished, as CloudFormation does
/// before it reports the resource complete.
async fn settled(core: &Lambda, ctx: &ProviderContext, name: &str) -> Result<(), ProviderError> {
    for _ in 0..600 {
        let f = core.function(&ctx.region, name).map_err(|e| fail(ctx, e))?;
        match (f.state.as_str(), f.last_update_status.as_str()) {
            ("Failed", _) | (_, "Failed") => {
                return Err(ProviderError::Failed(format!(
                    "Resource handler returned message: \"The function {name} could not be made Active: its package could not be unpacked\" (RequestToken: {}, HandlerErrorCode: NotStabilized)",
                    ctx.client_request_token
                )));
            }
            ("Active", "Successful") => return Ok(()),
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    Err(ProviderError::Failed(format!(
        "Resource handler returned message: \"The function {name} did not become Active in time\" (RequestToken: {}, HandlerErrorCode: NotStabilized)",
        ctx.client_request_token
    )))
}

fn function_outcome(ctx: &ProviderContext, core: &Lambda, name: &str) -> ProviderOutcome {
    let mut attributes = Map::new();
    attributes.insert(
        "Arn".into(),
        json!(function_arn(&ctx.region, core.account_id(), name, None)),
    );
    attributes.insert("SnapStartResponse.ApplyOn".into(), json!("None"));
    attributes.insert("SnapStartResponse.OptimizationStatus".into(), json!("Off"));
    ProviderOutcome {
        physical_id: name.to_string(),
        attributes,
        ..Default::default()
    }
}

#[async_trait::async_trait]
impl Provider for FunctionProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&[
            "Arn",
            "SnapStartResponse.ApplyOn",
            "SnapStartResponse.OptimizationStatus",
        ])
    }

    fn created_identity(&self, ctx: &ProviderContext, properties: &Value) -> Option<String> {
        let props = object(FUNCTION, properties).ok()?;
        given_or_generated_name(ctx, &props, "FunctionName", 64).ok()
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(FUNCTION, properties)?;
        let p = function_props(&props)?;
        let code = code_input(&props, p.runtime.as_deref())?;
        let name = given_or_generated_name(ctx, &props, "FunctionName", 64)?;
        let core = self.lambda.core();
        if core.function(&ctx.region, &name).is_ok() {
            return Err(already_exists(ctx, &name));
        }
        let logging = logging_input(&p, &name)?;
        let input = CreateFunctionInput {
            logging: Some(logging),
            name: name.clone(),
            runtime: p.runtime,
            handler: p.handler,
            role: p.role,
            description: Some(p.description),
            timeout: p.timeout,
            memory_size: p.memory,
            environment: Some(p.environment),
            layers: p.layers,
            architectures: p.architectures,
            ephemeral_storage: p.ephemeral,
            tags: tags(ctx, &props)?.into_iter().collect(),
            package_type: None,
            code,
            publish: false,
            tracing_mode: p.tracing_mode,
            kms_key_arn: p.kms_key_arn,
        };
        core.create_function(&ctx.region, input)
            .map_err(|e| fail(ctx, e))?;
        // The function exists from here on: a failure names it for the rollback to delete.
        let finish = async {
            let system = system_tags(ctx);
            if !system.is_empty() {
                let arn = function_arn(&ctx.region, core.account_id(), &name, None);
                core.add_system_tags(&ctx.region, &arn, system.into_iter().collect())
                    .map_err(|e| fail(ctx, e))?;
            }
            if let Some(c) = p.concurrency {
                core.put_concurrency(&ctx.region, &name, Some(c))
                    .map_err(|e| fail(ctx, e))?;
            }
            settled(&core, ctx, &name).await
        };
        finish.await.map_err(|e| e.after_create(&name))?;
        Ok(function_outcome(ctx, &core, &name))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let old = object(FUNCTION, old)?;
        let new = object(FUNCTION, new)?;
        let p = function_props(&new)?;
        let core = self.lambda.core();
        let region = ctx.region.as_str();
        settled(&core, ctx, physical_id).await?;
        if old.get("Code") != new.get("Code") {
            let code = code_input(&new, p.runtime.as_deref())?;
            core.update_function_code(region, physical_id, &code, false, None)
                .map_err(|e| fail(ctx, e))?;
            settled(&core, ctx, physical_id).await?;
        }
        let logging = logging_input(&p, physical_id)?;
        let input = UpdateConfigInput {
            runtime: p.runtime,
            handler: p.handler,
            role: Some(p.role),
            description: Some(p.description),
            timeout: Some(p.timeout.unwrap_or(3)),
            memory_size: Some(p.memory.unwrap_or(128)),
            environment: Some(p.environment),
            layers: Some(p.layers),
            ephemeral_storage: Some(p.ephemeral.unwrap_or(512)),
            logging: Some(logging),
            // Absent is Lambda's default, so an update that drops it turns tracing off.
            tracing_mode: Some(p.tracing_mode.unwrap_or_else(super::model::pass_through)),
            // Absent goes back to AWS's default key.
            kms_key_arn: Some(p.kms_key_arn.unwrap_or_default()),
            revision_id: None,
        };
        core.update_function_configuration(region, physical_id, input)
            .map_err(|e| fail(ctx, e))?;
        settled(&core, ctx, physical_id).await?;
        if old.get("ReservedConcurrentExecutions") != new.get("ReservedConcurrentExecutions") {
            core.put_concurrency(region, physical_id, p.concurrency)
                .map_err(|e| fail(ctx, e))?;
        }
        let arn = function_arn(region, core.account_id(), physical_id, None);
        let current = core.list_tags(region, &arn).map_err(|e| fail(ctx, e))?;
        let change = TagChange::between(&current, &tags(ctx, &new)?);
        if !change.remove.is_empty() {
            core.untag_resource(region, &arn, &change.remove)
                .map_err(|e| fail(ctx, e))?;
        }
        if !change.set.is_empty() {
            core.tag_resource(region, &arn, change.set.into_iter().collect())
                .map_err(|e| fail(ctx, e))?;
        }
        Ok(function_outcome(ctx, &core, physical_id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self.lambda.delete_function(&ctx.region, physical_id, None) {
            Ok(()) => Ok(()),
            Err(e) if e.status == http::StatusCode::NOT_FOUND => Ok(()),
            Err(e) => Err(fail(ctx, e)),
        }
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let f = match self.lambda.function(&ctx.region, physical_id) {
            Ok(f) => f,
            Err(e) if e.status == http::StatusCode::NOT_FOUND => return Ok(None),
            Err(e) => return Err(fail(ctx, e)),
        };
        let c = &f.latest;
        let mut props = Map::new();
        props.insert("FunctionName".into(), json!(f.name));
        props.insert("Runtime".into(), json!(c.runtime));
        props.insert("Handler".into(), json!(c.handler));
        props.insert("Role".into(), json!(c.role));
        props.insert("Description".into(), json!(c.description));
        props.insert("Timeout".into(), json!(c.timeout));
        props.insert("MemorySize".into(), json!(c.memory_size));
        props.insert("Architectures".into(), json!(c.architectures));
        props.insert(
            "EphemeralStorage".into(),
            json!({"Size": c.ephemeral_storage}),
        );
        props.insert("PackageType".into(), json!("Zip"));
        props.insert("TracingConfig".into(), json!({"Mode": c.tracing_mode}));
        if let Some(k) = &c.kms_key_arn {
            props.insert("KmsKeyArn".into(), json!(k));
        }
        if !c.environment.is_empty() {
            props.insert("Environment".into(), json!({"Variables": c.environment}));
        }
        if !c.layers.is_empty() {
            props.insert("Layers".into(), json!(c.layers));
        }
        // Only a configuration a template could have declared: AWS's default reads as absent.
        if c.logging != LoggingConfig::default() {
            props.insert(
                "LoggingConfig".into(),
                super::wire::logging_json(&c.logging, &f.name),
            );
        }
        if let Some(n) = f.reserved_concurrency {
            props.insert("ReservedConcurrentExecutions".into(), json!(n));
        }
        if !f.tags.is_empty() {
            let t: Vec<Value> = f
                .tags
                .iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect();
            props.insert("Tags".into(), Value::Array(t));
        }
        let core = self.lambda.core();
        Ok(Some(Observed {
            properties: props,
            attributes: function_outcome(ctx, &core, &f.name).attributes,
        }))
    }
}

// --- AWS::Lambda::Version --------------------------------------------------------------------

struct VersionProvider {
    core: Arc<Lambda>,
}

#[async_trait::async_trait]
impl Provider for VersionProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["FunctionArn", "Version"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(VERSION, properties)?;
        check_known(
            VERSION,
            &props,
            &["CodeSha256", "Description", "FunctionName"],
            &[
                (
                    "ProvisionedConcurrencyConfig",
                    "provisioned concurrency is not emulated",
                ),
                ("RuntimePolicy", "runtime management is not emulated"),
                (
                    "FunctionScalingConfig",
                    "scaling configuration is not emulated",
                ),
            ],
        )?;
        let function = required(&props, "FunctionName")?;
        settled(
            &self.core,
            ctx,
            &super::names::parse_function(&function)
                .map_err(|e| fail(ctx, e))?
                .0,
        )
        .await?;
        let (f, v) = self
            .core
            .publish_version(
                &ctx.region,
                &function,
                scalar(&props, "Description")?.as_deref(),
                scalar(&props, "CodeSha256")?.as_deref(),
                None,
            )
            .map_err(|e| fail(ctx, e))?;
        let arn = function_arn(&ctx.region, self.core.account_id(), &f.name, Some(&v));
        let mut attributes = Map::new();
        attributes.insert("FunctionArn".into(), json!(arn));
        attributes.insert("Version".into(), json!(v));
        Ok(ProviderOutcome {
            physical_id: arn,
            attributes,
            ..Default::default()
        })
    }

    /// Every property but the unsupported ones is createOnly: nothing to change in place.
    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(VERSION, new)?;
        check_known(
            VERSION,
            &props,
            &["CodeSha256", "Description", "FunctionName"],
            &[],
        )?;
        let (_, r) = self
            .core
            .resolve(&ctx.region, physical_id, None)
            .map_err(|e| fail(ctx, e))?;
        let mut attributes = Map::new();
        attributes.insert("FunctionArn".into(), json!(physical_id));
        attributes.insert("Version".into(), json!(r.version));
        Ok(ProviderOutcome {
            physical_id: physical_id.to_string(),
            attributes,
            ..Default::default()
        })
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self.core.delete_function(&ctx.region, physical_id, None) {
            Ok(()) => Ok(()),
            Err(e) if e.status == http::StatusCode::NOT_FOUND => Ok(()),
            Err(e) => Err(fail(ctx, e)),
        }
    }
}

// --- AWS::Lambda::Alias ----------------------------------------------------------------------

struct AliasProvider {
    core: Arc<Lambda>,
}

fn alias_routing(props: &Map<String, Value>) -> Result<BTreeMap<String, f64>, ProviderError> {
    let mut out = BTreeMap::new();
    if let Some(rc) = sub_object(props, "RoutingConfig")? {
        for w in list(rc, "AdditionalVersionWeights")? {
            let w = w.as_object().ok_or_else(|| {
                ProviderError::Failed("Properties validation failed for resource with message: #/RoutingConfig/AdditionalVersionWeights: expected type: JSONObject".into())
            })?;
            let v = required(w, "FunctionVersion")?;
            let weight = required(w, "FunctionWeight")?.parse::<f64>().map_err(|_| {
                ProviderError::Failed("Properties validation failed for resource with message: #/RoutingConfig/AdditionalVersionWeights/FunctionWeight: expected type: Number".into())
            })?;
            out.insert(v, weight);
        }
    }
    Ok(out)
}

const ALIAS_KNOWN: &[&str] = &[
    "Description",
    "FunctionName",
    "FunctionVersion",
    "Name",
    "RoutingConfig",
];
const ALIAS_UNSUPPORTED: &[(&str, &str)] = &[(
    "ProvisionedConcurrencyConfig",
    "provisioned concurrency is not emulated",
)];

fn alias_outcome(arn: String) -> ProviderOutcome {
    identified_by("AliasArn", arn)
}

#[async_trait::async_trait]
impl Provider for AliasProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["AliasArn"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(ALIAS, properties)?;
        check_known(ALIAS, &props, ALIAS_KNOWN, ALIAS_UNSUPPORTED)?;
        let function = required(&props, "FunctionName")?;
        let name = required(&props, "Name")?;
        self.core
            .create_alias(
                &ctx.region,
                &function,
                &name,
                &required(&props, "FunctionVersion")?,
                scalar(&props, "Description")?.as_deref(),
                alias_routing(&props)?,
            )
            .map_err(|e| fail(ctx, e))?;
        let fname = self
            .core
            .function(&ctx.region, &function)
            .map_err(|e| fail(ctx, e))?
            .name;
        Ok(alias_outcome(function_arn(
            &ctx.region,
            self.core.account_id(),
            &fname,
            Some(&name),
        )))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(ALIAS, new)?;
        check_known(ALIAS, &props, ALIAS_KNOWN, ALIAS_UNSUPPORTED)?;
        let function = required(&props, "FunctionName")?;
        let name = required(&props, "Name")?;
        self.core
            .update_alias(
                &ctx.region,
                &function,
                &name,
                Some(&required(&props, "FunctionVersion")?),
                Some(&scalar(&props, "Description")?.unwrap_or_default()),
                Some(alias_routing(&props)?),
                None,
            )
            .map_err(|e| fail(ctx, e))?;
        Ok(alias_outcome(physical_id.to_string()))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        let Ok((name, Some(alias))) = super::names::parse_function(physical_id) else {
            return Ok(());
        };
        match self.core.delete_alias(&ctx.region, &name, &alias) {
            Ok(()) => Ok(()),
            Err(e) if e.status == http::StatusCode::NOT_FOUND => Ok(()),
            Err(e) => Err(fail(ctx, e)),
        }
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let Ok((name, Some(alias))) = super::names::parse_function(physical_id) else {
            return Ok(None);
        };
        let a = match self.core.get_alias(&ctx.region, &name, &alias) {
            Ok(a) => a,
            Err(e) if e.status == http::StatusCode::NOT_FOUND => return Ok(None),
            Err(e) => return Err(fail(ctx, e)),
        };
        let mut props = Map::new();
        props.insert("FunctionName".into(), json!(name));
        props.insert("Name".into(), json!(a.name));
        props.insert("FunctionVersion".into(), json!(a.function_version));
        props.insert("Description".into(), json!(a.description));
        Ok(Some(Observed {
            properties: props,
            attributes: alias_outcome(physical_id.to_string()).attributes,
        }))
    }
}

// --- AWS::Lambda::Permission -----------------------------------------------------------------

struct PermissionProvider {
    core: Arc<Lambda>,
}

#[async_trait::async_trait]
impl Provider for PermissionProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Id"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(PERMISSION, properties)?;
        check_known(
            PERMISSION,
            &props,
            &[
                "Action",
                "FunctionName",
                "FunctionUrlAuthType",
                "Principal",
                "PrincipalOrgID",
                "SourceAccount",
                "SourceArn",
            ],
            &[
                (
                    "EventSourceToken",
                    "Alexa event source tokens are not emulated",
                ),
                ("InvokedViaFunctionUrl", "not emulated"),
            ],
        )?;
        let id = ctx.generated_name(100, "");
        let input = PermissionInput {
            statement_id: id.clone(),
            action: required(&props, "Action")?,
            principal: required(&props, "Principal")?,
            source_arn: scalar(&props, "SourceArn")?,
            source_account: scalar(&props, "SourceAccount")?,
            principal_org_id: scalar(&props, "PrincipalOrgID")?,
            function_url_auth_type: scalar(&props, "FunctionUrlAuthType")?,
            qualifier: None,
            revision_id: None,
        };
        self.core
            .add_permission(&ctx.region, &required(&props, "FunctionName")?, input)
            .map_err(|e| fail(ctx, e))?;
        Ok(identified_by("Id", id))
    }

    /// Every property is createOnly.
    async fn update(
        &self,
        _ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        _new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        Ok(identified_by("Id", physical_id.to_string()))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<(), ProviderError> {
        let props = object(PERMISSION, properties)?;
        let function = required(&props, "FunctionName")?;
        match self
            .core
            .remove_permission(&ctx.region, &function, physical_id, None)
        {
            Ok(()) => Ok(()),
            Err(e) if e.status == http::StatusCode::NOT_FOUND => Ok(()),
            Err(e) => Err(fail(ctx, e)),
        }
    }
}

// --- AWS::Lambda::Url ------------------------------------------------------------------------

struct UrlProvider {
    core: Arc<Lambda>,
}

const URL_KNOWN: &[&str] = &[
    "AuthType",
    "Cors",
    "InvokeMode",
    "Qualifier",
    "TargetFunctionArn",
];

fn url_outcome(region: &str, arn: String, c: &super::model::UrlConfig) -> ProviderOutcome {
    let mut attributes = Map::new();
    attributes.insert("FunctionArn".into(), json!(arn));
    attributes.insert(
        "FunctionUrl".into(),
        json!(format!("https://{}.lambda-url.{region}.on.aws/", c.url_id)),
    );
    ProviderOutcome {
        physical_id: arn,
        attributes,
        ..Default::default()
    }
}

#[async_trait::async_trait]
impl Provider for UrlProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["FunctionArn", "FunctionUrl"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(URL, properties)?;
        check_known(URL, &props, URL_KNOWN, &[])?;
        let (arn, c) = self
            .core
            .create_url_config(
                &ctx.region,
                &required(&props, "TargetFunctionArn")?,
                scalar(&props, "Qualifier")?.as_deref(),
                &required(&props, "AuthType")?,
                props.get("Cors").cloned(),
                scalar(&props, "InvokeMode")?.as_deref(),
            )
            .map_err(|e| fail(ctx, e))?;
        Ok(url_outcome(&ctx.region, arn, &c))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        _physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(URL, new)?;
        check_known(URL, &props, URL_KNOWN, &[])?;
        let (arn, c) = self
            .core
            .update_url_config(
                &ctx.region,
                &required(&props, "TargetFunctionArn")?,
                scalar(&props, "Qualifier")?.as_deref(),
                Some(&required(&props, "AuthType")?),
                Some(props.get("Cors").cloned().unwrap_or_else(|| json!({}))),
                Some(&scalar(&props, "InvokeMode")?.unwrap_or_else(|| "BUFFERED".into())),
            )
            .map_err(|e| fail(ctx, e))?;
        Ok(url_outcome(&ctx.region, arn, &c))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        _physical_id: &str,
        properties: &Value,
    ) -> Result<(), ProviderError> {
        let props = object(URL, properties)?;
        match self.core.delete_url_config(
            &ctx.region,
            &required(&props, "TargetFunctionArn")?,
            scalar(&props, "Qualifier")?.as_deref(),
        ) {
            Ok(()) => Ok(()),
            Err(e) if e.status == http::StatusCode::NOT_FOUND => Ok(()),
            Err(e) => Err(fail(ctx, e)),
        }
    }
}

// --- AWS::Lambda::LayerVersion ---------------------------------------------------------------

struct LayerVersionProvider {
    core: Arc<Lambda>,
}

#[async_trait::async_trait]
impl Provider for LayerVersionProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["LayerVersionArn"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(LAYER_VERSION, properties)?;
        check_known(
            LAYER_VERSION,
            &props,
            &[
                "CompatibleArchitectures",
                "CompatibleRuntimes",
                "Content",
                "Description",
                "LayerName",
                "LicenseInfo",
            ],
            &[],
        )?;
        let content = sub_object(&props, "Content")?.ok_or_else(|| {
            ProviderError::Failed("Properties validation failed for resource with message: #: required key [Content] not found".into())
        })?;
        let layer = match scalar(&props, "LayerName")? {
            Some(n) => n,
            None => ctx.generated_name(64, ""),
        };
        let input = PublishLayerInput {
            description: scalar(&props, "Description")?,
            content: CodeInput::S3 {
                bucket: required(content, "S3Bucket")?,
                key: required(content, "S3Key")?,
                version: scalar(content, "S3ObjectVersion")?,
            },
            compatible_runtimes: strings(&props, "CompatibleRuntimes")?,
            compatible_architectures: strings(&props, "CompatibleArchitectures")?,
            license_info: scalar(&props, "LicenseInfo")?,
        };
        let (name, v) = self
            .core
            .publish_layer_version(&ctx.region, &layer, input)
            .map_err(|e| fail(ctx, e))?;
        let arn = format!("{}:{}", self.core.layer_arn(&ctx.region, &name), v.version);
        Ok(identified_by("LayerVersionArn", arn))
    }

    /// Every property is createOnly.
    async fn update(
        &self,
        _ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        _new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        Ok(identified_by("LayerVersionArn", physical_id.to_string()))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        let Some((region, name, version)) = super::names::parse_layer_version_arn(physical_id)
        else {
            return Ok(());
        };
        self.core
            .delete_layer_version(&region, &name, version)
            .map_err(|e| fail(ctx, e))
    }
}

// --- AWS::Lambda::EventSourceMapping ---------------------------------------------------------

struct MappingProvider {
    core: Arc<Lambda>,
}

const MAPPING_KNOWN: &[&str] = &[
    "BatchSize",
    "BisectBatchOnFunctionError",
    "DestinationConfig",
    "Enabled",
    "EventSourceArn",
    "FilterCriteria",
    "FunctionName",
    "FunctionResponseTypes",
    "MaximumBatchingWindowInSeconds",
    "MaximumRecordAgeInSeconds",
    "MaximumRetryAttempts",
    "ParallelizationFactor",
    "StartingPosition",
    "Tags",
    "TumblingWindowInSeconds",
];

fn mapping_input(props: &Map<String, Value>) -> Result<MappingInput, ProviderError> {
    let unsupported: Vec<(&str, &str)> = [
        "AmazonManagedKafkaEventSourceConfig",
        "DocumentDBEventSourceConfig",
        "KmsKeyArn",
        "LoggingConfig",
        "MetricsConfig",
        "ProvisionedPollerConfig",
        "Queues",
        "ScalingConfig",
        "SelfManagedEventSource",
        "SelfManagedKafkaEventSourceConfig",
        "SourceAccessConfigurations",
        "StartingPositionTimestamp",
        "Topics",
    ]
    .iter()
    .map(|k| {
        (
            *k,
            "only SQS queue and DynamoDB stream event sources are emulated",
        )
    })
    .collect();
    check_known(MAPPING, props, MAPPING_KNOWN, &unsupported)?;
    let types = strings(props, "FunctionResponseTypes")?;
    Ok(MappingInput {
        event_source_arn: scalar(props, "EventSourceArn")?,
        function_name: Some(required(props, "FunctionName")?),
        enabled: scalar(props, "Enabled")?.map(|v| v.eq_ignore_ascii_case("true")),
        batch_size: int(props, "BatchSize")?,
        maximum_batching_window: int(props, "MaximumBatchingWindowInSeconds")?,
        report_batch_item_failures: Some(types.iter().any(|t| t == "ReportBatchItemFailures")),
        tags: BTreeMap::new(),
        filter_criteria: props.get("FilterCriteria").cloned(),
        starting_position: scalar(props, "StartingPosition")?,
        maximum_retry_attempts: int(props, "MaximumRetryAttempts")?,
        bisect_batch_on_function_error: scalar(props, "BisectBatchOnFunctionError")?
            .map(|v| v.eq_ignore_ascii_case("true")),
        on_failure: super::esm::on_failure(props.get("DestinationConfig")),
        maximum_record_age: int(props, "MaximumRecordAgeInSeconds")?,
        parallelization_factor: int(props, "ParallelizationFactor")?,
        tumbling_window: int(props, "TumblingWindowInSeconds")?,
    })
}

fn mapping_arn(core: &Lambda, region: &str, uuid: &str) -> String {
    format!(
        "arn:aws:lambda:{region}:{}:event-source-mapping:{uuid}",
        core.account_id()
    )
}

fn mapping_outcome(core: &Lambda, region: &str, uuid: &str) -> ProviderOutcome {
    let mut attributes = Map::new();
    attributes.insert("Id".into(), json!(uuid));
    attributes.insert(
        "EventSourceMappingArn".into(),
        json!(mapping_arn(core, region, uuid)),
    );
    ProviderOutcome {
        physical_id: uuid.to_string(),
        attributes,
        ..Default::default()
    }
}

#[async_trait::async_trait]
impl Provider for MappingProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Id", "EventSourceMappingArn"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(MAPPING, properties)?;
        let mut input = mapping_input(&props)?;
        input.tags = tags(ctx, &props)?.into_iter().collect();
        let m = self
            .core
            .create_event_source_mapping(&ctx.region, input, &endpoint_host(ctx))
            .map_err(|e| fail(ctx, e))?;
        let system = system_tags(ctx);
        if !system.is_empty() {
            let arn = mapping_arn(&self.core, &ctx.region, &m.uuid);
            self.core
                .add_system_tags(&ctx.region, &arn, system.into_iter().collect())
                .map_err(|e| fail(ctx, e))?;
        }
        Ok(mapping_outcome(&self.core, &ctx.region, &m.uuid))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(MAPPING, new)?;
        let mut input = mapping_input(&props)?;
        // What the template no longer sets goes back to AWS's default.
        let stream = input
            .event_source_arn
            .as_deref()
            .is_some_and(super::esm_streams::is_dynamodb_stream);
        input.event_source_arn = None;
        input.batch_size = Some(input.batch_size.unwrap_or(if stream { 100 } else { 10 }));
        input.filter_criteria = Some(input.filter_criteria.unwrap_or(Value::Null));
        if stream {
            input.on_failure = Some(input.on_failure.unwrap_or(None));
            input.maximum_retry_attempts = Some(input.maximum_retry_attempts.unwrap_or(-1));
            input.bisect_batch_on_function_error =
                Some(input.bisect_batch_on_function_error.unwrap_or(false));
        }
        input.maximum_batching_window = Some(input.maximum_batching_window.unwrap_or(0));
        input.enabled = Some(input.enabled.unwrap_or(true));
        self.core
            .update_event_source_mapping(&ctx.region, physical_id, input)
            .map_err(|e| fail(ctx, e))?;
        let arn = mapping_arn(&self.core, &ctx.region, physical_id);
        let current = self
            .core
            .list_tags(&ctx.region, &arn)
            .map_err(|e| fail(ctx, e))?;
        let change = TagChange::between(&current, &tags(ctx, &props)?);
        self.core
            .untag_resource(&ctx.region, &arn, &change.remove)
            .map_err(|e| fail(ctx, e))?;
        if !change.set.is_empty() {
            self.core
                .tag_resource(&ctx.region, &arn, change.set.into_iter().collect())
                .map_err(|e| fail(ctx, e))?;
        }
        Ok(mapping_outcome(&self.core, &ctx.region, physical_id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self.core.delete_event_source_mapping(physical_id) {
            Ok(_) => Ok(()),
            Err(e) if e.status == http::StatusCode::NOT_FOUND => Ok(()),
            Err(e) => Err(fail(ctx, e)),
        }
    }
}

// --- AWS::Lambda::EventInvokeConfig ----------------------------------------------------------

struct InvokeConfig(Arc<Lambda>);

const INVOKE_CONFIG_KNOWN: &[&str] = &[
    "FunctionName",
    "Qualifier",
    "MaximumEventAgeInSeconds",
    "MaximumRetryAttempts",
    "DestinationConfig",
];

/// The resource's settings as the API takes them, the function and the qualifier.
fn invoke_config_input(
    props: &Map<String, Value>,
) -> Result<(String, String, EventInvokeInput), ProviderError> {
    let mut input = EventInvokeInput {
        maximum_retry_attempts: int(props, "MaximumRetryAttempts")?,
        maximum_event_age: int(props, "MaximumEventAgeInSeconds")?,
        ..Default::default()
    };
    if let Some(d) = sub_object(props, "DestinationConfig")? {
        check_known(INVOKE_CONFIG, d, &["OnSuccess", "OnFailure"], &[])?;
        input.destination_config = true;
        let destination = |key: &str| -> Result<Option<Option<String>>, ProviderError> {
            Ok(match sub_object(d, key)? {
                None => None,
                Some(o) => {
                    check_known(INVOKE_CONFIG, o, &["Destination"], &[])?;
                    Some(scalar(o, "Destination")?)
                }
            })
        };
        input.on_success = destination("OnSuccess")?;
        input.on_failure = destination("OnFailure")?;
    }
    Ok((
        required(props, "FunctionName")?,
        required(props, "Qualifier")?,
        input,
    ))
}

/// FunctionName and Qualifier are createOnly; everything else changes in place.
#[async_trait::async_trait]
impl Declared for InvokeConfig {
    const ATTRIBUTES: &'static [&'static str] = &[];
    const TYPE: &'static str = INVOKE_CONFIG;
    const SERVICE: &'static str = "Lambda";
    const PROPERTIES: &'static [&'static str] = INVOKE_CONFIG_KNOWN;
    const NOT_FOUND: &'static [&'static str] = &["ResourceNotFoundException"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let (function, qualifier, input) = invoke_config_input(props)?;
        let id = format!("{function}|{qualifier}");
        if self
            .0
            .get_event_invoke_config(&ctx.region, &function, Some(&qualifier))
            .is_ok()
        {
            return Err(already_exists(ctx, &id).into());
        }
        self.0
            .put_event_invoke_config(&ctx.region, &function, Some(&qualifier), &input)?;
        Ok(Made::new(id))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let (function, qualifier, input) = invoke_config_input(new)?;
        self.0
            .put_event_invoke_config(&ctx.region, &function, Some(&qualifier), &input)?;
        Ok(Made::new(id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        _id: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let function = required(props, "FunctionName")?;
        let qualifier = required(props, "Qualifier")?;
        Ok(self
            .0
            .delete_event_invoke_config(&ctx.region, &function, Some(&qualifier))?)
    }
}

/// An outcome whose one GetAtt attribute (`attr`) is the physical id itself, as for a
/// permission's `Id`, a layer version's or an alias's ARN.
fn identified_by(attr: &str, physical_id: String) -> ProviderOutcome {
    let mut attributes = Map::new();
    attributes.insert(attr.into(), json!(physical_id));
    ProviderOutcome {
        physical_id,
        attributes,
        ..Default::default()
    }
}
