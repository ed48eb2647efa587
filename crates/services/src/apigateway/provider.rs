//! CloudFormation providers of AWS::ApiGateway::* (and, through
//! [`crate::apigatewayv2::provider`], AWS::ApiGatewayV2::*). Every type is one [`Spec`]: its
//! accepted properties and three functions over the service's typed operations (create,
//! update in place, delete); [`SpecProvider`] does the rest (property checks, the handler's
//! error wording, a resource already gone counting as deleted). Properties are turned into the
//! API's member names by [`api_input`] (camel case, user-keyed maps kept as written), so the
//! providers hand the same JSON to the operations the wire adapter does.
//!
//! An API's invocation of a Lambda function is not checked against the function's resource
//! policy (`AWS::Lambda::Permission` is stored, not enforced): cumulo's data plane calls the
//! function as the account itself.

use super::ApiGatewayService;
use crate::providers::system_tags::system_tags;
use crate::providers::{ProviderServices, check_known, failed, object};
use cumulo_engine::{Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// A created or updated resource: physical id and Fn::GetAtt attributes.
pub(crate) struct Made {
    pub id: String,
    pub attributes: Map<String, Value>,
}

impl Made {
    pub fn new(id: impl Into<String>) -> Self {
        Made {
            id: id.into(),
            attributes: Map::new(),
        }
    }

    pub fn with(mut self, k: &str, v: impl Into<Value>) -> Self {
        self.attributes.insert(k.to_string(), v.into());
        self
    }
}

pub(crate) type Props = Map<String, Value>;

/// What a type's functions get.
pub(crate) struct Env<'a> {
    pub svc: &'a ApiGatewayService,
    pub ps: &'a ProviderServices,
    pub ctx: &'a ProviderContext,
}

impl Env<'_> {
    pub fn region(&self) -> &str {
        &self.ctx.region
    }
}

pub(crate) type CreateFn = fn(&Env<'_>, &Props) -> Result<Made, AwsError>;
pub(crate) type UpdateFn = fn(&Env<'_>, &str, &Props, &Props) -> Result<Made, AwsError>;
pub(crate) type DeleteFn = fn(&Env<'_>, &str, &Props) -> Result<(), AwsError>;

/// One resource type.
pub(crate) struct Spec {
    pub type_name: &'static str,
    /// Every Fn::GetAtt attribute its [`Made`] answers ([`Provider::attributes`]).
    pub attributes: &'static [&'static str],
    pub properties: &'static [&'static str],
    pub unsupported: &'static [(&'static str, &'static str)],
    pub create: CreateFn,
    pub update: UpdateFn,
    pub delete: DeleteFn,
}

pub(crate) struct SpecProvider {
    pub svc: Arc<ApiGatewayService>,
    pub ps: ProviderServices,
    pub spec: &'static Spec,
}

impl SpecProvider {
    fn props(&self, v: &Value) -> Result<Props, ProviderError> {
        let p = object(self.spec.type_name, v)?;
        check_known(
            self.spec.type_name,
            &p,
            self.spec.properties,
            self.spec.unsupported,
        )?;
        Ok(p.into_owned())
    }

    fn outcome(m: Made) -> ProviderOutcome {
        ProviderOutcome {
            physical_id: m.id,
            attributes: m.attributes,
            ..Default::default()
        }
    }
}

/// A service refusal as the handler error CloudFormation shows, or the provider's own words.
fn fail(ctx: &ProviderContext, e: AwsError) -> ProviderError {
    if e.code == "cumulo" {
        return ProviderError::Failed(e.message);
    }
    failed(ctx, "ApiGateway", e)
}

/// A property problem found by a type's function (not the service's answer).
pub(crate) fn prop_error(msg: impl Into<String>) -> AwsError {
    AwsError::bad_request("cumulo", msg)
}

#[async_trait::async_trait]
impl Provider for SpecProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(self.spec.attributes)
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let p = self.props(properties)?;
        let env = Env {
            svc: &self.svc,
            ps: &self.ps,
            ctx,
        };
        (self.spec.create)(&env, &p)
            .map(Self::outcome)
            .map_err(|e| fail(ctx, e))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let new = self.props(new)?;
        let old = object(self.spec.type_name, old)?.into_owned();
        let env = Env {
            svc: &self.svc,
            ps: &self.ps,
            ctx,
        };
        (self.spec.update)(&env, physical_id, &old, &new)
            .map(Self::outcome)
            .map_err(|e| fail(ctx, e))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<(), ProviderError> {
        let p = object(self.spec.type_name, properties)?.into_owned();
        let env = Env {
            svc: &self.svc,
            ps: &self.ps,
            ctx,
        };
        match (self.spec.delete)(&env, physical_id, &p) {
            Ok(()) => Ok(()),
            Err(e) if e.code == "NotFoundException" => {
                Err(ProviderError::NotFound(physical_id.to_string()))
            }
            Err(e) => Err(fail(ctx, e)),
        }
    }
}

/// Maps whose keys are the user's (header names, content types, variable names): kept as
/// written when properties become API members.
const USER_KEYED: &[&str] = &[
    "Variables",
    "StageVariables",
    "RequestParameters",
    "RequestTemplates",
    "ResponseParameters",
    "ResponseTemplates",
    "RequestModels",
    "ResponseModels",
    "RouteSettings",
];

pub(crate) fn camel(k: &str) -> String {
    let mut c = k.chars();
    match c.next() {
        Some(f) => f.to_lowercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// Template properties as API input: keys camel-cased at every level except inside the maps
/// whose keys are the user's; `Tags` as a key/value list becomes a map.
pub(crate) fn api_input(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let value = if USER_KEYED.contains(&k.as_str()) {
                    v.clone()
                } else if k == "Tags" {
                    tags_map(v)
                } else {
                    api_input(v)
                };
                out.insert(camel(k), value);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(api_input).collect()),
        other => other.clone(),
    }
}

/// `[{Key, Value}]` or `{k: v}` as a map.
pub(crate) fn tags_map(v: &Value) -> Value {
    match v {
        Value::Array(list) => Value::Object(
            list.iter()
                .filter_map(|t| {
                    Some((
                        t["Key"].as_str()?.to_string(),
                        Value::String(
                            t["Value"]
                                .as_str()
                                .map_or_else(|| t["Value"].to_string(), str::to_string),
                        ),
                    ))
                })
                .collect(),
        ),
        Value::Object(m) => Value::Object(m.clone()),
        _ => json!({}),
    }
}

/// The tags a new resource gets: the template's, the stack's, and CloudFormation's own.
pub(crate) fn all_tags(ctx: &ProviderContext, props: &Props) -> Value {
    let mut t = props.get("Tags").map(tags_map).unwrap_or_else(|| json!({}));
    let taggable = cumulo_engine::tagging(&ctx.resource_type).taggable();
    for (k, v) in ctx
        .stack_tags
        .iter()
        .filter(|_| taggable)
        .cloned()
        .chain(system_tags(ctx))
    {
        t.as_object_mut()
            .map(|m| m.entry(k).or_insert(Value::String(v)));
    }
    t
}

pub(crate) fn str_prop<'a>(p: &'a Props, k: &str) -> &'a str {
    p.get(k).and_then(Value::as_str).unwrap_or("")
}

/// A JSON-valued property (`Policy`, `Schema`) as the string the API stores.
fn json_string(v: &Value) -> Value {
    match v {
        Value::String(s) => Value::String(s.clone()),
        other => Value::String(other.to_string()),
    }
}

/// A patch operation replacing `path` with a value (as the string patches carry).
fn replace(path: &str, v: &Value) -> Value {
    let value = match v {
        Value::String(s) => Value::String(s.clone()),
        Value::Null => Value::Null,
        other => Value::String(other.to_string()),
    };
    json!({"op": "replace", "path": path, "value": value})
}

/// Patch operations for the changed properties among `fields` (property, API path).
fn changed(old: &Props, new: &Props, fields: &[(&str, &str)]) -> Value {
    let ops: Vec<Value> = fields
        .iter()
        .filter(|(k, _)| old.get(*k) != new.get(*k))
        .map(|(k, path)| replace(path, new.get(*k).unwrap_or(&Value::Null)))
        .collect();
    json!({"patchOperations": ops})
}

/// Refuses a change to a property outside `mutable` (the engine replaces on createOnly ones).
fn only(old: &Props, new: &Props, type_name: &str, mutable: &[&str]) -> Result<(), AwsError> {
    for k in old.keys().chain(new.keys()) {
        if old.get(k) != new.get(k) && !mutable.contains(&k.as_str()) {
            return Err(prop_error(format!(
                "cumulo: property {k} of {type_name} is not supported: cumulo cannot change it in place"
            )));
        }
    }
    Ok(())
}

fn split2(id: &str) -> (&str, &str) {
    id.split_once('|').unwrap_or((id, ""))
}

// ---- AWS::ApiGateway::RestApi ----

fn rest_api_body(env: &Env<'_>, p: &Props) -> Result<Option<Vec<u8>>, AwsError> {
    if let Some(b) = p.get("Body") {
        return Ok(Some(match b {
            Value::String(s) => s.clone().into_bytes(),
            other => other.to_string().into_bytes(),
        }));
    }
    if let Some(loc) = p.get("BodyS3Location") {
        let bucket = loc["Bucket"].as_str().unwrap_or("");
        let key = loc["Key"].as_str().unwrap_or("");
        let version = loc["Version"].as_str();
        let got = env
            .ps
            .s3
            .get_object(
                bucket,
                key,
                version,
                None,
                &crate::s3::Conditions::default(),
            )?
            .map_err(|_| {
                prop_error(format!(
                    "cumulo: BodyS3Location s3://{bucket}/{key} could not be read"
                ))
            })?;
        return Ok(Some(got.body));
    }
    Ok(None)
}

fn rest_api_input(ctx: &ProviderContext, p: &Props) -> Value {
    let mut input = api_input(&Value::Object(p.clone()));
    let m = input.as_object_mut().expect("an object");
    for k in [
        "body",
        "bodyS3Location",
        "failOnWarnings",
        "mode",
        "parameters",
        "apiKeySourceType",
    ] {
        m.remove(k);
    }
    if let Some(s) = p.get("ApiKeySourceType") {
        m.insert("apiKeySource".into(), s.clone());
    }
    if let Some(pol) = p.get("Policy") {
        m.insert("policy".into(), json_string(pol));
    }
    m.insert("tags".into(), all_tags(ctx, p));
    input
}

fn rest_api_made(env: &Env<'_>, id: &str) -> Result<Made, AwsError> {
    let doc = env.svc.get_rest_api(env.region(), id)?;
    Ok(Made::new(id)
        .with("RestApiId", id)
        .with("RootResourceId", doc["rootResourceId"].clone()))
}

fn rest_api_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let mut input = rest_api_input(env.ctx, p);
    let body = rest_api_body(env, p)?;
    if input.get("name").is_none() {
        let spec = body.as_deref().map(super::openapi::parse).transpose()?;
        let title = spec
            .as_ref()
            .and_then(|s| s["info"]["title"].as_str().map(str::to_string));
        match title {
            Some(t) => input["name"] = t.into(),
            None => {
                return Err(prop_error(
                    "Properties validation failed for resource with message: #: required key [Name] not found",
                ));
            }
        }
    }
    let created = env.svc.create_rest_api(env.region(), &input)?;
    let id = created["id"].as_str().unwrap_or("").to_string();
    if let Some(body) = body {
        let mode = p.get("Mode").and_then(Value::as_str).unwrap_or("overwrite");
        if let Err(e) = env.svc.put_rest_api(env.region(), &id, &body, mode, &[]) {
            let _ = env.svc.delete_rest_api(env.region(), &id);
            return Err(e);
        }
        // The template's own settings win over the definition's.
        if let Some(n) = p.get("Name") {
            env.svc.update_rest_api(
                env.region(),
                &id,
                &json!({"patchOperations": [replace("/name", n)]}),
            )?;
        }
    }
    rest_api_made(env, &id)
}

fn rest_api_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    let ops = changed(
        old,
        new,
        &[
            ("Name", "/name"),
            ("Description", "/description"),
            ("ApiKeySourceType", "/apiKeySource"),
            ("MinimumCompressionSize", "/minimumCompressionSize"),
            ("DisableExecuteApiEndpoint", "/disableExecuteApiEndpoint"),
        ],
    );
    env.svc.update_rest_api(env.region(), id, &ops)?;
    if old.get("Policy") != new.get("Policy") {
        let v = new.get("Policy").map(json_string).unwrap_or(Value::Null);
        env.svc.update_rest_api(
            env.region(),
            id,
            &json!({"patchOperations": [replace("/policy", &v)]}),
        )?;
    }
    if old.get("EndpointConfiguration") != new.get("EndpointConfiguration") {
        let cur = env.svc.get_rest_api(env.region(), id)?;
        let from = cur["endpointConfiguration"]["types"][0]
            .as_str()
            .unwrap_or("EDGE")
            .to_string();
        let to = new["EndpointConfiguration"]["Types"][0]
            .as_str()
            .unwrap_or("EDGE");
        env.svc.update_rest_api(env.region(), id, &json!({"patchOperations": [
            {"op": "replace", "path": format!("/endpointConfiguration/types/{from}"), "value": to}]}))?;
    }
    if old.get("BinaryMediaTypes") != new.get("BinaryMediaTypes") {
        let list = |p: &Props| -> Vec<String> {
            p.get("BinaryMediaTypes")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default()
        };
        let (o, n) = (list(old), list(new));
        let mut ops = Vec::new();
        for t in o.iter().filter(|t| !n.contains(t)) {
            ops.push(json!({"op": "remove", "path": format!("/binaryMediaTypes/{}", t.replace('/', "~1"))}));
        }
        for t in n.iter().filter(|t| !o.contains(t)) {
            ops.push(
                json!({"op": "add", "path": format!("/binaryMediaTypes/{}", t.replace('/', "~1"))}),
            );
        }
        env.svc
            .update_rest_api(env.region(), id, &json!({"patchOperations": ops}))?;
    }
    let body_changed = old.get("Body") != new.get("Body")
        || old.get("BodyS3Location") != new.get("BodyS3Location");
    if body_changed && let Some(body) = rest_api_body(env, new)? {
        let mode = new
            .get("Mode")
            .and_then(Value::as_str)
            .unwrap_or("overwrite");
        env.svc.put_rest_api(env.region(), id, &body, mode, &[])?;
    }
    if old.get("Tags") != new.get("Tags") {
        let arn = env.svc.rest_api_arn(env.region(), id);
        let keys: Vec<String> = tags_map(old.get("Tags").unwrap_or(&Value::Null))
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        env.svc.untag_resource(&arn, &keys, false)?;
        if let Value::Object(t) = tags_map(new.get("Tags").unwrap_or(&Value::Null)) {
            env.svc.tag_resource(&arn, &t, false)?;
        }
    }
    rest_api_made(env, id)
}

// ---- Resource ----

fn resource_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let r = env.svc.create_resource(
        env.region(),
        str_prop(p, "RestApiId"),
        str_prop(p, "ParentId"),
        &json!({"pathPart": str_prop(p, "PathPart")}),
    )?;
    let id = r["id"].as_str().unwrap_or("").to_string();
    Ok(Made::new(&id).with("ResourceId", id))
}

// ---- Method ----

fn method_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let (api, res, verb) = (
        str_prop(p, "RestApiId"),
        str_prop(p, "ResourceId"),
        str_prop(p, "HttpMethod"),
    );
    let mut input = api_input(&Value::Object(p.clone()));
    let m = input.as_object_mut().expect("an object");
    let integration = m.remove("integration");
    let responses = m.remove("methodResponses");
    if m.get("authorizationType").is_none() {
        let auth = if m.contains_key("authorizerId") {
            "CUSTOM"
        } else {
            "NONE"
        };
        m.insert("authorizationType".into(), auth.into());
    }
    let region = env.region();
    env.svc.put_method(region, api, res, verb, &input)?;
    for r in responses
        .as_ref()
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let code = r["statusCode"]
            .as_str()
            .map_or_else(|| r["statusCode"].to_string(), str::to_string);
        env.svc
            .put_method_response(region, api, res, verb, &code, r)?;
    }
    if let Some(mut i) = integration {
        let irs = i
            .as_object_mut()
            .and_then(|m| m.remove("integrationResponses"));
        if let Some(m) = i.as_object_mut()
            && let Some(v) = m.remove("integrationHttpMethod")
        {
            m.insert("httpMethod".into(), v);
        }
        env.svc.put_integration(region, api, res, verb, &i)?;
        for r in irs.as_ref().and_then(Value::as_array).into_iter().flatten() {
            let code = r["statusCode"]
                .as_str()
                .map_or_else(|| r["statusCode"].to_string(), str::to_string);
            env.svc
                .put_integration_response(region, api, res, verb, &code, r)?;
        }
    }
    Ok(Made::new(format!("{api}|{res}|{verb}")))
}

fn method_update(env: &Env<'_>, _id: &str, _old: &Props, new: &Props) -> Result<Made, AwsError> {
    method_create(env, new)
}

fn method_delete(env: &Env<'_>, _id: &str, p: &Props) -> Result<(), AwsError> {
    env.svc.delete_method(
        env.region(),
        str_prop(p, "RestApiId"),
        str_prop(p, "ResourceId"),
        str_prop(p, "HttpMethod"),
    )
}

// ---- Deployment and Stage ----

fn method_settings_ops(settings: Option<&Value>) -> Vec<Value> {
    let mut ops = Vec::new();
    for s in settings.and_then(Value::as_array).into_iter().flatten() {
        let path = s["ResourcePath"].as_str().unwrap_or("/*");
        let path = if path == "/*" {
            "*".to_string()
        } else {
            path.replace('/', "~1")
        };
        let verb = s["HttpMethod"].as_str().unwrap_or("*");
        for (k, setting) in [
            ("LoggingLevel", "logging/loglevel"),
            ("MetricsEnabled", "metrics/enabled"),
            ("DataTraceEnabled", "logging/dataTrace"),
            ("ThrottlingBurstLimit", "throttling/burstLimit"),
            ("ThrottlingRateLimit", "throttling/rateLimit"),
            ("CachingEnabled", "caching/enabled"),
            ("CacheTtlInSeconds", "caching/ttlInSeconds"),
            ("CacheDataEncrypted", "caching/dataEncrypted"),
        ] {
            if let Some(v) = s.get(k) {
                ops.push(replace(&format!("/{path}/{verb}/{setting}"), v));
            }
        }
    }
    ops
}

fn deployment_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let api = str_prop(p, "RestApiId");
    let mut input = json!({});
    if let Some(d) = p.get("Description") {
        input["description"] = d.clone();
    }
    let stage = p.get("StageName").and_then(Value::as_str);
    if let Some(s) = stage {
        input["stageName"] = s.into();
        let sd = p.get("StageDescription").cloned().unwrap_or(Value::Null);
        if let Some(v) = sd.get("Variables") {
            input["variables"] = v.clone();
        }
        if let Some(d) = sd.get("Description") {
            input["stageDescription"] = d.clone();
        }
        if let Some(t) = sd.get("TracingEnabled") {
            input["tracingEnabled"] = t.clone();
        }
    }
    let d = env.svc.create_deployment(env.region(), api, &input)?;
    let id = d["id"].as_str().unwrap_or("").to_string();
    if let Some(s) = stage {
        let sd = p.get("StageDescription").cloned().unwrap_or(Value::Null);
        let ops = method_settings_ops(sd.get("MethodSettings"));
        if !ops.is_empty() {
            env.svc
                .update_stage(env.region(), api, s, &json!({"patchOperations": ops}))?;
        }
    }
    Ok(Made::new(&id).with("DeploymentId", id))
}

fn deployment_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    only(
        old,
        new,
        "AWS::ApiGateway::Deployment",
        &["Description", "StageName", "StageDescription"],
    )?;
    let api = str_prop(new, "RestApiId");
    if old.get("Description") != new.get("Description") {
        env.svc.update_deployment(
            env.region(),
            api,
            id,
            &changed(old, new, &[("Description", "/description")]),
        )?;
    }
    // A changed stage is pointed at this deployment again, as CloudFormation does.
    if let Some(s) = new.get("StageName").and_then(Value::as_str) {
        let exists = env.svc.get_stage(env.region(), api, s).is_ok();
        if exists {
            env.svc.update_stage(
                env.region(),
                api,
                s,
                &json!({"patchOperations": [replace("/deploymentId", &json!(id))]}),
            )?;
        } else {
            env.svc.create_stage(
                env.region(),
                api,
                &json!({"stageName": s, "deploymentId": id}),
            )?;
        }
    }
    Ok(Made::new(id).with("DeploymentId", id))
}

fn deployment_delete(env: &Env<'_>, id: &str, p: &Props) -> Result<(), AwsError> {
    let api = str_prop(p, "RestApiId");
    if let Some(s) = p.get("StageName").and_then(Value::as_str)
        && env
            .svc
            .get_stage(env.region(), api, s)
            .is_ok_and(|st| st["deploymentId"] == id)
    {
        env.svc.delete_stage(env.region(), api, s)?;
    }
    env.svc.delete_deployment(env.region(), api, id)
}

fn stage_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let api = str_prop(p, "RestApiId");
    let mut input = api_input(&Value::Object(p.clone()));
    let m = input.as_object_mut().expect("an object");
    for k in ["methodSettings", "accessLogSetting", "restApiId"] {
        m.remove(k);
    }
    m.insert("tags".into(), all_tags(env.ctx, p));
    let name = str_prop(p, "StageName").to_string();
    env.svc.create_stage(env.region(), api, &input)?;
    let mut ops = method_settings_ops(p.get("MethodSettings"));
    if let Some(a) = p.get("AccessLogSetting") {
        if let Some(d) = a.get("DestinationArn") {
            ops.push(replace("/accessLogSettings/destinationArn", d));
        }
        if let Some(f) = a.get("Format") {
            ops.push(replace("/accessLogSettings/format", f));
        }
    }
    if !ops.is_empty() {
        env.svc
            .update_stage(env.region(), api, &name, &json!({"patchOperations": ops}))?;
    }
    Ok(Made::new(name))
}

fn stage_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    only(
        old,
        new,
        "AWS::ApiGateway::Stage",
        &[
            "DeploymentId",
            "Description",
            "Variables",
            "TracingEnabled",
            "CacheClusterEnabled",
            "CacheClusterSize",
            "MethodSettings",
            "Tags",
        ],
    )?;
    let api = str_prop(new, "RestApiId");
    let mut body = changed(
        old,
        new,
        &[
            ("DeploymentId", "/deploymentId"),
            ("Description", "/description"),
            ("TracingEnabled", "/tracingEnabled"),
            ("CacheClusterEnabled", "/cacheClusterEnabled"),
            ("CacheClusterSize", "/cacheClusterSize"),
        ],
    );
    let ops = body["patchOperations"].as_array_mut().expect("a list");
    let vars = |p: &Props| {
        p.get("Variables")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    };
    let (ov, nv) = (vars(old), vars(new));
    for k in ov.keys().filter(|k| !nv.contains_key(*k)) {
        ops.push(json!({"op": "remove", "path": format!("/variables/{k}")}));
    }
    for (k, v) in nv.iter().filter(|(k, v)| ov.get(*k) != Some(v)) {
        ops.push(replace(&format!("/variables/{k}"), v));
    }
    if old.get("MethodSettings") != new.get("MethodSettings") {
        ops.extend(method_settings_ops(new.get("MethodSettings")));
    }
    env.svc.update_stage(env.region(), api, id, &body)?;
    Ok(Made::new(id))
}

fn stage_delete(env: &Env<'_>, id: &str, p: &Props) -> Result<(), AwsError> {
    env.svc
        .delete_stage(env.region(), str_prop(p, "RestApiId"), id)
}

// ---- Authorizer, Model, RequestValidator, GatewayResponse ----

fn authorizer_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let input = api_input(&Value::Object(p.clone()));
    let a = env
        .svc
        .create_authorizer(env.region(), str_prop(p, "RestApiId"), &input)?;
    let id = a["id"].as_str().unwrap_or("").to_string();
    Ok(Made::new(&id).with("AuthorizerId", id))
}

fn authorizer_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    let ops = changed(
        old,
        new,
        &[
            ("Name", "/name"),
            ("Type", "/type"),
            ("AuthorizerUri", "/authorizerUri"),
            ("AuthorizerCredentials", "/authorizerCredentials"),
            ("IdentitySource", "/identitySource"),
            (
                "IdentityValidationExpression",
                "/identityValidationExpression",
            ),
            (
                "AuthorizerResultTtlInSeconds",
                "/authorizerResultTtlInSeconds",
            ),
            ("AuthType", "/authType"),
        ],
    );
    only(
        old,
        new,
        "AWS::ApiGateway::Authorizer",
        &[
            "Name",
            "Type",
            "AuthorizerUri",
            "AuthorizerCredentials",
            "IdentitySource",
            "IdentityValidationExpression",
            "AuthorizerResultTtlInSeconds",
            "AuthType",
        ],
    )?;
    env.svc
        .update_authorizer(env.region(), str_prop(new, "RestApiId"), id, &ops)?;
    Ok(Made::new(id).with("AuthorizerId", id))
}

fn model_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let mut input = api_input(&Value::Object(p.clone()));
    if let Some(s) = p.get("Schema") {
        input["schema"] = json_string(s);
    }
    if input.get("name").is_none() {
        let name: String = env
            .ctx
            .generated_name(64, "")
            .chars()
            .filter(char::is_ascii_alphanumeric)
            .collect();
        input["name"] = name.into();
    }
    let m = env
        .svc
        .create_model(env.region(), str_prop(p, "RestApiId"), &input)?;
    Ok(Made::new(m["name"].as_str().unwrap_or("")))
}

fn model_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    only(
        old,
        new,
        "AWS::ApiGateway::Model",
        &["Description", "Schema"],
    )?;
    let mut ops = Vec::new();
    if old.get("Description") != new.get("Description") {
        ops.push(replace(
            "/description",
            new.get("Description").unwrap_or(&Value::Null),
        ));
    }
    if old.get("Schema") != new.get("Schema") {
        ops.push(replace(
            "/schema",
            &new.get("Schema").map(json_string).unwrap_or(Value::Null),
        ));
    }
    env.svc.update_model(
        env.region(),
        str_prop(new, "RestApiId"),
        id,
        &json!({"patchOperations": ops}),
    )?;
    Ok(Made::new(id))
}

fn validator_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let v = env.svc.create_request_validator(
        env.region(),
        str_prop(p, "RestApiId"),
        &api_input(&Value::Object(p.clone())),
    )?;
    let id = v["id"].as_str().unwrap_or("").to_string();
    Ok(Made::new(&id).with("RequestValidatorId", id))
}

fn validator_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    let ops = changed(
        old,
        new,
        &[
            ("ValidateRequestBody", "/validateRequestBody"),
            ("ValidateRequestParameters", "/validateRequestParameters"),
        ],
    );
    env.svc
        .update_request_validator(env.region(), str_prop(new, "RestApiId"), id, &ops)?;
    Ok(Made::new(id).with("RequestValidatorId", id))
}

fn gateway_response_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let (api, t) = (str_prop(p, "RestApiId"), str_prop(p, "ResponseType"));
    env.svc
        .put_gateway_response(env.region(), api, t, &api_input(&Value::Object(p.clone())))?;
    let id = format!("{api}|{t}");
    Ok(Made::new(&id).with("Id", id))
}

fn gateway_response_update(
    env: &Env<'_>,
    _id: &str,
    _old: &Props,
    new: &Props,
) -> Result<Made, AwsError> {
    gateway_response_create(env, new)
}

fn gateway_response_delete(env: &Env<'_>, _id: &str, p: &Props) -> Result<(), AwsError> {
    env.svc.delete_gateway_response(
        env.region(),
        str_prop(p, "RestApiId"),
        str_prop(p, "ResponseType"),
    )
}

// ---- ApiKey, UsagePlan, UsagePlanKey ----

fn api_key_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let mut input = api_input(&Value::Object(p.clone()));
    if input.get("name").is_none() {
        input["name"] = env.ctx.generated_name(128, "").into();
    }
    input
        .as_object_mut()
        .map(|m| m.remove("generateDistinctId"));
    input["tags"] = all_tags(env.ctx, p);
    let k = env.svc.create_api_key(env.region(), &input)?;
    let id = k["id"].as_str().unwrap_or("").to_string();
    Ok(Made::new(&id).with("APIKeyId", id))
}

fn api_key_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    only(
        old,
        new,
        "AWS::ApiGateway::ApiKey",
        &["Description", "Enabled", "CustomerId", "Tags"],
    )?;
    let ops = changed(
        old,
        new,
        &[
            ("Description", "/description"),
            ("Enabled", "/enabled"),
            ("CustomerId", "/customerId"),
        ],
    );
    env.svc.update_api_key(env.region(), id, &ops)?;
    Ok(Made::new(id).with("APIKeyId", id))
}

fn usage_plan_input(env: &Env<'_>, p: &Props) -> Value {
    let mut input = api_input(&Value::Object(p.clone()));
    let m = input.as_object_mut().expect("an object");
    if let Some(n) = m.remove("usagePlanName") {
        m.insert("name".into(), n);
    }
    m.insert("tags".into(), all_tags(env.ctx, p));
    input
}

fn usage_plan_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let u = env
        .svc
        .create_usage_plan(env.region(), &usage_plan_input(env, p))?;
    let id = u["id"].as_str().unwrap_or("").to_string();
    Ok(Made::new(&id).with("Id", id))
}

fn usage_plan_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    only(
        old,
        new,
        "AWS::ApiGateway::UsagePlan",
        &[
            "UsagePlanName",
            "Description",
            "ApiStages",
            "Quota",
            "Throttle",
            "Tags",
        ],
    )?;
    let mut ops = changed(
        old,
        new,
        &[("UsagePlanName", "/name"), ("Description", "/description")],
    );
    let list = ops["patchOperations"].as_array_mut().expect("a list");
    let stages = |p: &Props| -> Vec<String> {
        p.get("ApiStages")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|s| {
                        format!(
                            "{}:{}",
                            s["ApiId"].as_str().unwrap_or(""),
                            s["Stage"].as_str().unwrap_or("")
                        )
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    let (o, n) = (stages(old), stages(new));
    for s in o.iter().filter(|s| !n.contains(s)) {
        list.push(json!({"op": "remove", "path": "/apiStages", "value": s}));
    }
    for s in n.iter().filter(|s| !o.contains(s)) {
        list.push(json!({"op": "add", "path": "/apiStages", "value": s}));
    }
    for (prop, base, fields) in [
        (
            "Quota",
            "/quota",
            &[
                ("Limit", "limit"),
                ("Offset", "offset"),
                ("Period", "period"),
            ][..],
        ),
        (
            "Throttle",
            "/throttle",
            &[("BurstLimit", "burstLimit"), ("RateLimit", "rateLimit")][..],
        ),
    ] {
        if old.get(prop) != new.get(prop) {
            for (k, f) in fields {
                if let Some(v) = new.get(prop).and_then(|q| q.get(*k)) {
                    list.push(replace(&format!("{base}/{f}"), v));
                }
            }
        }
    }
    env.svc.update_usage_plan(env.region(), id, &ops)?;
    Ok(Made::new(id).with("Id", id))
}

fn usage_plan_key_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let key = str_prop(p, "KeyId");
    env.svc.create_usage_plan_key(
        env.region(),
        str_prop(p, "UsagePlanId"),
        &json!({"keyId": key, "keyType": str_prop(p, "KeyType")}),
    )?;
    Ok(Made::new(key).with("Id", key))
}

fn usage_plan_key_delete(env: &Env<'_>, id: &str, p: &Props) -> Result<(), AwsError> {
    env.svc
        .delete_usage_plan_key(env.region(), str_prop(p, "UsagePlanId"), id)
}

// ---- DomainName, BasePathMapping, Account ----

fn domain_made(env: &Env<'_>, name: &str) -> Result<Made, AwsError> {
    let d = env.svc.get_domain_name(env.region(), name)?;
    let mut m = Made::new(name).with(
        "DomainNameArn",
        format!("arn:aws:apigateway:{}::/domainnames/{name}", env.region()),
    );
    for k in [
        "DistributionDomainName",
        "DistributionHostedZoneId",
        "RegionalDomainName",
        "RegionalHostedZoneId",
    ] {
        m = m.with(k, d.get(camel(k)).cloned().unwrap_or_else(|| json!("")));
    }
    Ok(m)
}

fn domain_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let mut input = api_input(&Value::Object(p.clone()));
    input["tags"] = all_tags(env.ctx, p);
    let d = env.svc.create_domain_name(env.region(), &input)?;
    domain_made(env, d["domainName"].as_str().unwrap_or(""))
}

fn domain_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    only(
        old,
        new,
        "AWS::ApiGateway::DomainName",
        &[
            "CertificateArn",
            "RegionalCertificateArn",
            "SecurityPolicy",
            "Tags",
        ],
    )?;
    let ops = changed(
        old,
        new,
        &[
            ("CertificateArn", "/certificateArn"),
            ("RegionalCertificateArn", "/regionalCertificateArn"),
            ("SecurityPolicy", "/securityPolicy"),
        ],
    );
    env.svc.update_domain_name(env.region(), id, &ops)?;
    domain_made(env, id)
}

fn base_path_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let domain = str_prop(p, "DomainName");
    let m = env.svc.create_base_path_mapping(
        env.region(),
        domain,
        &api_input(&Value::Object(p.clone())),
    )?;
    Ok(Made::new(format!(
        "{domain}|{}",
        m["basePath"].as_str().unwrap_or("")
    )))
}

fn base_path_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    let (domain, base) = split2(id);
    let ops = changed(
        old,
        new,
        &[("RestApiId", "/restapiId"), ("Stage", "/stage")],
    );
    env.svc
        .update_base_path_mapping(env.region(), domain, base, &ops)?;
    Ok(Made::new(id))
}

fn base_path_delete(env: &Env<'_>, id: &str, _p: &Props) -> Result<(), AwsError> {
    let (domain, base) = split2(id);
    env.svc.delete_base_path_mapping(env.region(), domain, base)
}

fn account_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let role = p.get("CloudWatchRoleArn").cloned().unwrap_or(Value::Null);
    env.svc.update_account(
        env.region(),
        &json!({"patchOperations": [replace("/cloudwatchRoleArn", &role)]}),
    )?;
    let id = format!("{}-account", env.ctx.stack_name);
    Ok(Made::new(&id).with("Id", id))
}

fn account_update(env: &Env<'_>, _id: &str, _old: &Props, new: &Props) -> Result<Made, AwsError> {
    account_create(env, new)
}

fn account_delete(_env: &Env<'_>, _id: &str, _p: &Props) -> Result<(), AwsError> {
    // The account's settings outlive the stack, as on AWS.
    Ok(())
}

/// Types whose every property is createOnly: an update changes nothing (the engine replaces
/// them when one changes); their one attribute is their id.
fn unchanged(id: &str, old: &Props, new: &Props, attribute: &str) -> Result<Made, AwsError> {
    only(old, new, "this type", &[])?;
    Ok(Made::new(id).with(attribute, id))
}

fn resource_update(_env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    unchanged(id, old, new, "ResourceId")
}

fn usage_plan_key_update(
    _env: &Env<'_>,
    id: &str,
    old: &Props,
    new: &Props,
) -> Result<Made, AwsError> {
    unchanged(id, old, new, "Id")
}

static SPECS: &[Spec] = &[
    Spec {
        type_name: "AWS::ApiGateway::RestApi",
        attributes: &["RestApiId", "RootResourceId"],
        properties: &[
            "Name",
            "Description",
            "ApiKeySourceType",
            "BinaryMediaTypes",
            "Body",
            "BodyS3Location",
            "CloneFrom",
            "DisableExecuteApiEndpoint",
            "EndpointConfiguration",
            "FailOnWarnings",
            "MinimumCompressionSize",
            "Mode",
            "Parameters",
            "Policy",
            "Tags",
        ],
        unsupported: &[],
        create: rest_api_create,
        update: rest_api_update,
        delete: |env, id, _| env.svc.delete_rest_api(env.region(), id),
    },
    Spec {
        type_name: "AWS::ApiGateway::Resource",
        attributes: &["ResourceId"],
        properties: &["RestApiId", "ParentId", "PathPart"],
        unsupported: &[],
        create: resource_create,
        update: resource_update,
        delete: |env, id, p| {
            env.svc
                .delete_resource(env.region(), str_prop(p, "RestApiId"), id)
        },
    },
    Spec {
        type_name: "AWS::ApiGateway::Method",
        attributes: &[],
        properties: &[
            "RestApiId",
            "ResourceId",
            "HttpMethod",
            "AuthorizationType",
            "AuthorizerId",
            "ApiKeyRequired",
            "AuthorizationScopes",
            "Integration",
            "MethodResponses",
            "OperationName",
            "RequestModels",
            "RequestParameters",
            "RequestValidatorId",
        ],
        unsupported: &[],
        create: method_create,
        update: method_update,
        delete: method_delete,
    },
    Spec {
        type_name: "AWS::ApiGateway::Deployment",
        attributes: &["DeploymentId"],
        properties: &["RestApiId", "Description", "StageName", "StageDescription"],
        unsupported: &[("DeploymentCanarySettings", "cumulo has no canary releases")],
        create: deployment_create,
        update: deployment_update,
        delete: deployment_delete,
    },
    Spec {
        type_name: "AWS::ApiGateway::Stage",
        attributes: &[],
        properties: &[
            "RestApiId",
            "StageName",
            "DeploymentId",
            "Description",
            "Variables",
            "TracingEnabled",
            "CacheClusterEnabled",
            "CacheClusterSize",
            "MethodSettings",
            "AccessLogSetting",
            "ClientCertificateId",
            "DocumentationVersion",
            "Tags",
        ],
        unsupported: &[("CanarySetting", "cumulo has no canary releases")],
        create: stage_create,
        update: stage_update,
        delete: stage_delete,
    },
    Spec {
        type_name: "AWS::ApiGateway::Authorizer",
        attributes: &["AuthorizerId"],
        properties: &[
            "RestApiId",
            "Name",
            "Type",
            "AuthorizerUri",
            "AuthorizerCredentials",
            "IdentitySource",
            "IdentityValidationExpression",
            "AuthorizerResultTtlInSeconds",
            "ProviderARNs",
            "AuthType",
        ],
        unsupported: &[],
        create: authorizer_create,
        update: authorizer_update,
        delete: |env, id, p| {
            env.svc
                .delete_authorizer(env.region(), str_prop(p, "RestApiId"), id)
        },
    },
    Spec {
        type_name: "AWS::ApiGateway::Model",
        attributes: &[],
        properties: &["RestApiId", "Name", "ContentType", "Description", "Schema"],
        unsupported: &[],
        create: model_create,
        update: model_update,
        delete: |env, id, p| {
            env.svc
                .delete_model(env.region(), str_prop(p, "RestApiId"), id)
        },
    },
    Spec {
        type_name: "AWS::ApiGateway::RequestValidator",
        attributes: &["RequestValidatorId"],
        properties: &[
            "RestApiId",
            "Name",
            "ValidateRequestBody",
            "ValidateRequestParameters",
        ],
        unsupported: &[],
        create: validator_create,
        update: validator_update,
        delete: |env, id, p| {
            env.svc
                .delete_request_validator(env.region(), str_prop(p, "RestApiId"), id)
        },
    },
    Spec {
        type_name: "AWS::ApiGateway::GatewayResponse",
        attributes: &["Id"],
        properties: &[
            "RestApiId",
            "ResponseType",
            "StatusCode",
            "ResponseParameters",
            "ResponseTemplates",
        ],
        unsupported: &[],
        create: gateway_response_create,
        update: gateway_response_update,
        delete: gateway_response_delete,
    },
    Spec {
        type_name: "AWS::ApiGateway::ApiKey",
        attributes: &["APIKeyId"],
        properties: &[
            "Name",
            "Description",
            "Enabled",
            "Value",
            "CustomerId",
            "GenerateDistinctId",
            "StageKeys",
            "Tags",
        ],
        unsupported: &[],
        create: api_key_create,
        update: api_key_update,
        delete: |env, id, _| env.svc.delete_api_key(env.region(), id),
    },
    Spec {
        type_name: "AWS::ApiGateway::UsagePlan",
        attributes: &["Id"],
        properties: &[
            "UsagePlanName",
            "Description",
            "ApiStages",
            "Quota",
            "Throttle",
            "Tags",
        ],
        unsupported: &[],
        create: usage_plan_create,
        update: usage_plan_update,
        delete: |env, id, _| env.svc.delete_usage_plan(env.region(), id),
    },
    Spec {
        type_name: "AWS::ApiGateway::UsagePlanKey",
        attributes: &["Id"],
        properties: &["KeyId", "KeyType", "UsagePlanId"],
        unsupported: &[],
        create: usage_plan_key_create,
        update: usage_plan_key_update,
        delete: usage_plan_key_delete,
    },
    Spec {
        type_name: "AWS::ApiGateway::DomainName",
        attributes: &[
            "DomainNameArn",
            "DistributionDomainName",
            "DistributionHostedZoneId",
            "RegionalDomainName",
            "RegionalHostedZoneId",
        ],
        properties: &[
            "DomainName",
            "CertificateArn",
            "RegionalCertificateArn",
            "EndpointConfiguration",
            "SecurityPolicy",
            "MutualTlsAuthentication",
            "OwnershipVerificationCertificateArn",
            "Tags",
        ],
        unsupported: &[],
        create: domain_create,
        update: domain_update,
        delete: |env, id, _| env.svc.delete_domain_name(env.region(), id),
    },
    Spec {
        type_name: "AWS::ApiGateway::BasePathMapping",
        attributes: &[],
        properties: &["DomainName", "BasePath", "RestApiId", "Stage"],
        unsupported: &[],
        create: base_path_create,
        update: base_path_update,
        delete: base_path_delete,
    },
    Spec {
        type_name: "AWS::ApiGateway::Account",
        attributes: &["Id"],
        properties: &["CloudWatchRoleArn"],
        unsupported: &[],
        create: account_create,
        update: account_update,
        delete: account_delete,
    },
];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    for spec in SPECS.iter().chain(crate::apigatewayv2::provider::SPECS) {
        r.register(
            spec.type_name,
            Arc::new(SpecProvider {
                svc: s.apigateway.clone(),
                ps: s.clone(),
                spec,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_become_api_members() {
        let v = api_input(
            &json!({"Name": "a", "EndpointConfiguration": {"Types": ["REGIONAL"]},
            "Variables": {"MyVar": "x"}, "Tags": [{"Key": "k", "Value": "v"}], "ProviderARNs": ["p"],
            "MethodResponses": [{"StatusCode": "200", "ResponseParameters": {"method.response.header.X": true}}]}),
        );
        assert_eq!(
            v,
            json!({"name": "a", "endpointConfiguration": {"types": ["REGIONAL"]},
            "variables": {"MyVar": "x"}, "tags": {"k": "v"}, "providerARNs": ["p"],
            "methodResponses": [{"statusCode": "200", "responseParameters": {"method.response.header.X": true}}]})
        );
    }
}
