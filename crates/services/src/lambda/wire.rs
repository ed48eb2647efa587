//! The REST-JSON adapter: routes `/2015-03-31/functions...` and the other dated paths to the
//! typed operations and encodes their results in the shapes of botocore's Lambda model.

use super::config::PermissionInput;
use super::invoke::InvocationType;
use super::layers::PublishLayerInput;
use super::model::{
    Alias, CodeInput, CreateFunctionInput, Function, LayerVersion, LoggingConfig, LoggingInput,
    UpdateConfigInput, UrlConfig, VersionConfig,
};
use super::names::function_arn;
use super::ops::validation;
use super::{Lambda, esm, invoke_config, state, store_error};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::{Method, StatusCode};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

pub(super) type Body = Map<String, Value>;

pub(super) fn ok(status: StatusCode, v: Value) -> AwsResponse {
    AwsResponse::new(status, "application/json", v.to_string())
}

fn no_content() -> AwsResponse {
    AwsResponse::empty(StatusCode::NO_CONTENT)
}

pub(super) fn body(req: &AwsRequest) -> Result<Body, AwsError> {
    if req.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(&req.body) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(AwsError::bad_request(
            "InvalidRequestContentException",
            "Could not parse request body into json: the body is not a JSON object",
        )),
    }
}

pub(super) fn s<'a>(b: &'a Body, k: &str) -> Result<Option<&'a str>, AwsError> {
    match b.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(serialization(k, "a string")),
    }
}

pub(super) fn i(b: &Body, k: &str) -> Result<Option<i64>, AwsError> {
    match b.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .map(Some)
            .ok_or_else(|| serialization(k, "an integer")),
    }
}

pub(super) fn flag(b: &Body, k: &str) -> Result<Option<bool>, AwsError> {
    match b.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(x)) => Ok(Some(*x)),
        Some(_) => Err(serialization(k, "a boolean")),
    }
}

pub(super) fn strings(b: &Body, k: &str) -> Result<Option<Vec<String>>, AwsError> {
    match b.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| serialization(k, "a list of strings"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(serialization(k, "a list of strings")),
    }
}

pub(super) fn string_map(
    v: Option<&Value>,
    k: &str,
) -> Result<Option<BTreeMap<String, String>>, AwsError> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(key, v)| {
                v.as_str()
                    .map(|s| (key.clone(), s.to_string()))
                    .ok_or_else(|| serialization(k, "a map of strings"))
            })
            .collect::<Result<BTreeMap<_, _>, _>>()
            .map(Some),
        Some(_) => Err(serialization(k, "a map of strings")),
    }
}

fn serialization(k: &str, what: &str) -> AwsError {
    AwsError::bad_request(
        "SerializationException",
        format!("Could not read {k}: expected {what}"),
    )
}

fn code_input(v: Option<&Value>) -> Result<CodeInput, AwsError> {
    let Some(Value::Object(c)) = v else {
        return Ok(CodeInput::None);
    };
    if s(c, "ImageUri")?.is_some() {
        return Ok(CodeInput::Image);
    }
    if let Some(z) = s(c, "ZipFile")? {
        let bytes = B64.decode(z).map_err(|_| {
            AwsError::bad_request(
                "InvalidParameterValueException",
                "Could not unzip uploaded file. Please check your file, then try to upload again.",
            )
        })?;
        return Ok(CodeInput::Zip(bytes));
    }
    match (s(c, "S3Bucket")?, s(c, "S3Key")?) {
        (Some(bucket), Some(key)) => Ok(CodeInput::S3 {
            bucket: bucket.to_string(),
            key: key.to_string(),
            version: s(c, "S3ObjectVersion")?.map(str::to_string),
        }),
        _ => Ok(CodeInput::None),
    }
}

fn environment(b: &Body) -> Result<Option<BTreeMap<String, String>>, AwsError> {
    match b.get("Environment") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(e)) => Ok(Some(
            string_map(e.get("Variables"), "Environment.Variables")?.unwrap_or_default(),
        )),
        Some(_) => Err(serialization("Environment", "an object")),
    }
}

fn logging(b: &Body) -> Result<Option<LoggingInput>, AwsError> {
    match b.get("LoggingConfig") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(l)) => Ok(Some(LoggingInput {
            log_format: s(l, "LogFormat")?.map(str::to_string),
            application_log_level: s(l, "ApplicationLogLevel")?.map(str::to_string),
            system_log_level: s(l, "SystemLogLevel")?.map(str::to_string),
            log_group: s(l, "LogGroup")?.map(str::to_string),
        })),
        Some(_) => Err(serialization("LoggingConfig", "an object")),
    }
}

/// The LoggingConfig shape FunctionConfiguration reports (levels only when set, as AWS does).
pub(super) fn logging_json(l: &LoggingConfig, function_name: &str) -> Value {
    let mut v = json!({"LogFormat": l.log_format, "LogGroup": l.group(function_name)});
    if let Some(level) = &l.application_log_level {
        v["ApplicationLogLevel"] = json!(level);
    }
    if let Some(level) = &l.system_log_level {
        v["SystemLogLevel"] = json!(level);
    }
    v
}

/// `TracingConfig: {Mode}`.
fn tracing(b: &Body) -> Result<Option<String>, AwsError> {
    match b.get("TracingConfig") {
        Some(Value::Object(t)) => Ok(s(t, "Mode")?.map(str::to_string)),
        _ => Ok(None),
    }
}

fn ephemeral(b: &Body) -> Result<Option<i64>, AwsError> {
    match b.get("EphemeralStorage") {
        Some(Value::Object(e)) => i(e, "Size"),
        _ => Ok(None),
    }
}

/// The code download URL GetFunction reports: one of cumulo's own, valid while the package is
/// stored (the package's digest makes it unguessable, as a presigned URL's signature does).
fn code_location(host: &str, sha: &str) -> String {
    let enc = percent_encoding::utf8_percent_encode(sha, percent_encoding::NON_ALPHANUMERIC);
    format!("http://{host}/_cumulo/lambda/code/{enc}")
}

impl Lambda {
    /// GetFunctionConfiguration's answer for a function's `$LATEST`, for readers outside the
    /// wire (the console) that show what the AWS API reports.
    pub fn function_configuration(
        &self,
        region: &str,
        name_or_arn: &str,
    ) -> Result<Value, AwsError> {
        let f = self.function(region, name_or_arn)?;
        Ok(configuration(self, region, &f, "$LATEST", &f.latest, false))
    }
}

/// FunctionConfiguration for one version.
pub(super) fn configuration(
    core: &Lambda,
    region: &str,
    f: &Function,
    version: &str,
    c: &VersionConfig,
    qualified_latest: bool,
) -> Value {
    let account = core.account_id();
    let qualifier = (version != "$LATEST" || qualified_latest).then_some(version);
    let layers: Vec<Value> = c
        .layers
        .iter()
        .map(|arn| {
            let size = core
                .layer_version_by_arn(region, arn)
                .map(|(_, v)| v.code_size)
                .unwrap_or(0);
            json!({"Arn": arn, "CodeSize": size})
        })
        .collect();
    let latest = version == "$LATEST";
    let state = if latest { f.state.as_str() } else { "Active" };
    let mut v = json!({
        "FunctionName": f.name,
        "FunctionArn": function_arn(region, account, &f.name, qualifier),
        "Runtime": c.runtime,
        "Role": c.role,
        "Handler": c.handler,
        "CodeSize": c.code_size,
        "Description": c.description,
        "Timeout": c.timeout,
        "MemorySize": c.memory_size,
        "LastModified": c.last_modified,
        "CodeSha256": c.code_sha256,
        "Version": version,
        "TracingConfig": {"Mode": c.tracing_mode},
        "RevisionId": c.revision_id,
        "State": state,
        "LastUpdateStatus": if latest { f.last_update_status.as_str() } else { "Successful" },
        "PackageType": "Zip",
        "Architectures": c.architectures,
        "EphemeralStorage": {"Size": c.ephemeral_storage},
        "SnapStart": {"ApplyOn": "None", "OptimizationStatus": "Off"},
        "LoggingConfig": logging_json(&c.logging, &f.name),
    });
    if !c.environment.is_empty() {
        v["Environment"] = json!({"Variables": c.environment});
    }
    if let Some(k) = &c.kms_key_arn {
        v["KMSKeyArn"] = json!(k);
    }
    if !layers.is_empty() {
        v["Layers"] = Value::Array(layers);
    }
    match state {
        "Pending" => {
            v["StateReason"] = json!("The function is being created.");
            v["StateReasonCode"] = json!("Creating");
        }
        "Failed" => {
            v["StateReason"] = json!("cumulo could not unpack the deployment package.");
            v["StateReasonCode"] = json!("InvalidZipFileException");
        }
        _ => {}
    }
    if latest && f.last_update_status == "InProgress" {
        v["LastUpdateStatusReason"] = json!("The function is being created.");
        v["LastUpdateStatusReasonCode"] = json!("Creating");
    }
    v
}

fn alias_json(region: &str, account: &str, function: &str, a: &Alias) -> Value {
    let mut v = json!({
        "AliasArn": function_arn(region, account, function, Some(&a.name)),
        "Name": a.name,
        "FunctionVersion": a.function_version,
        "Description": a.description,
        "RevisionId": a.revision_id,
    });
    if !a.routing.is_empty() {
        v["RoutingConfig"] = json!({"AdditionalVersionWeights": a.routing});
    }
    v
}

fn url_json(region: &str, arn: &str, c: &UrlConfig) -> Value {
    let mut v = json!({
        "FunctionUrl": format!("https://{}.lambda-url.{region}.on.aws/", c.url_id),
        "FunctionArn": arn,
        "AuthType": c.auth_type,
        "CreationTime": c.creation_time,
        "LastModifiedTime": c.last_modified_time,
        "InvokeMode": c.invoke_mode,
    });
    if let Some(cors) = &c.cors {
        v["Cors"] = cors.clone();
    }
    v
}

fn layer_version_json(
    core: &Lambda,
    region: &str,
    host: &str,
    name: &str,
    v: &LayerVersion,
    full: bool,
) -> Value {
    let layer_arn = core.layer_arn(region, name);
    let mut out = json!({
        "LayerVersionArn": format!("{layer_arn}:{}", v.version),
        "Version": v.version,
        "Description": v.description,
        "CreatedDate": v.created_date,
        "CompatibleRuntimes": v.compatible_runtimes,
        "CompatibleArchitectures": v.compatible_architectures,
    });
    if let Some(l) = &v.license_info {
        out["LicenseInfo"] = json!(l);
    }
    if full {
        out["LayerArn"] = json!(layer_arn);
        out["Content"] = json!({
            "Location": code_location(host, &v.code_sha256),
            "CodeSha256": v.code_sha256,
            "CodeSize": v.code_size,
        });
    }
    out
}

fn decode(seg: &str) -> String {
    percent_encoding::percent_decode_str(seg)
        .decode_utf8_lossy()
        .into_owned()
}

fn host(req: &AwsRequest) -> String {
    if req.host.is_empty() {
        "localhost:4566".into()
    } else {
        req.host.clone()
    }
}

pub async fn handle(core: &Arc<Lambda>, req: AwsRequest) -> AwsResponse {
    let request_id = req.request_id.clone();
    let mut resp = match route(core, &req).await {
        Ok(r) => r,
        Err(e) => e.into_response(Protocol::RestJson, &request_id),
    };
    resp.set_header("x-amzn-requestid", &request_id);
    resp
}

async fn route(core: &Arc<Lambda>, req: &AwsRequest) -> Result<AwsResponse, AwsError> {
    let segs: Vec<String> = req
        .raw_path
        .trim_matches('/')
        .split('/')
        .map(decode)
        .collect();
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let m = &req.method;
    let region = req.region.as_str();
    let q = |k: &str| req.query_param(k);
    match (m.clone(), segs.as_slice()) {
        (Method::GET, ["_cumulo", "lambda", "code", sha]) => download(core, sha),
        (Method::POST, ["2015-03-31", "functions"]) => create_function(core, req).await,
        (Method::GET, ["2015-03-31", "functions"]) => list_functions(core, req),
        (Method::GET, ["2015-03-31", "functions", name]) => {
            let (f, r) = core.resolve(region, name, q("Qualifier"))?;
            let mut v = json!({
                "Configuration": configuration(core, region, &f, &r.version, &r.config, false),
                "Code": {"RepositoryType": "S3", "Location": code_location(&host(req), &r.config.code_sha256)},
            });
            if !f.tags.is_empty() {
                v["Tags"] = json!(f.tags);
            }
            if let Some(c) = f.reserved_concurrency {
                v["Concurrency"] = json!({"ReservedConcurrentExecutions": c});
            }
            Ok(ok(StatusCode::OK, v))
        }
        (Method::DELETE, ["2015-03-31", "functions", name]) => {
            core.delete_function(region, name, q("Qualifier"))?;
            Ok(no_content())
        }
        (Method::GET, ["2015-03-31", "functions", name, "configuration"]) => {
            let (f, r) = core.resolve(region, name, q("Qualifier"))?;
            Ok(ok(
                StatusCode::OK,
                configuration(core, region, &f, &r.version, &r.config, false),
            ))
        }
        (Method::PUT, ["2015-03-31", "functions", name, "configuration"]) => {
            let b = body(req)?;
            let input = UpdateConfigInput {
                runtime: s(&b, "Runtime")?.map(str::to_string),
                handler: s(&b, "Handler")?.map(str::to_string),
                role: s(&b, "Role")?.map(str::to_string),
                description: s(&b, "Description")?.map(str::to_string),
                timeout: i(&b, "Timeout")?,
                memory_size: i(&b, "MemorySize")?,
                environment: environment(&b)?,
                layers: strings(&b, "Layers")?,
                ephemeral_storage: ephemeral(&b)?,
                logging: logging(&b)?,
                tracing_mode: tracing(&b)?,
                kms_key_arn: s(&b, "KMSKeyArn")?.map(str::to_string),
                revision_id: s(&b, "RevisionId")?.map(str::to_string),
            };
            let f = core.update_function_configuration(region, name, input)?;
            Ok(ok(
                StatusCode::OK,
                configuration(core, region, &f, "$LATEST", &f.latest, false),
            ))
        }
        (Method::PUT, ["2015-03-31", "functions", name, "code"]) => {
            let b = body(req)?;
            let code = if let Some(z) = s(&b, "ZipFile")? {
                CodeInput::Zip(B64.decode(z).map_err(|_| {
                    AwsError::bad_request(
                        "InvalidParameterValueException",
                        "Could not unzip uploaded file. Please check your file, then try to upload again.",
                    )
                })?)
            } else if s(&b, "ImageUri")?.is_some() {
                CodeInput::Image
            } else {
                code_input(Some(&Value::Object(b.clone())))?
            };
            let publish = flag(&b, "Publish")?.unwrap_or(false);
            let (f, version) =
                core.update_function_code(region, name, &code, publish, s(&b, "RevisionId")?)?;
            let cfg = version_config(&f, &version);
            Ok(ok(
                StatusCode::OK,
                configuration(core, region, &f, &version, &cfg, false),
            ))
        }
        (Method::POST, ["2015-03-31", "functions", name, "invocations"]) => {
            invoke(core, req, name).await
        }
        (Method::POST, ["2015-03-31", "functions", name, "versions"]) => {
            let b = body(req)?;
            let (f, v) = core.publish_version(
                region,
                name,
                s(&b, "Description")?,
                s(&b, "CodeSha256")?,
                s(&b, "RevisionId")?,
            )?;
            let cfg = version_config(&f, &v);
            Ok(ok(
                StatusCode::CREATED,
                configuration(core, region, &f, &v, &cfg, false),
            ))
        }
        (Method::GET, ["2015-03-31", "functions", name, "versions"]) => {
            let f = core.function(region, name)?;
            let mut versions = vec![configuration(core, region, &f, "$LATEST", &f.latest, true)];
            for (n, c) in &f.versions {
                versions.push(configuration(core, region, &f, &n.to_string(), c, false));
            }
            Ok(ok(StatusCode::OK, json!({"Versions": versions})))
        }
        (Method::POST, ["2015-03-31", "functions", name, "aliases"]) => {
            let b = body(req)?;
            let alias_name = s(&b, "Name")?.ok_or_else(|| missing("Name"))?;
            let version = s(&b, "FunctionVersion")?.ok_or_else(|| missing("FunctionVersion"))?;
            let routing = routing(&b)?.unwrap_or_default();
            let a = core.create_alias(
                region,
                name,
                alias_name,
                version,
                s(&b, "Description")?,
                routing,
            )?;
            let fname = core.function(region, name)?.name;
            Ok(ok(
                StatusCode::CREATED,
                alias_json(region, core.account_id(), &fname, &a),
            ))
        }
        (Method::GET, ["2015-03-31", "functions", name, "aliases"]) => {
            let f = core.function(region, name)?;
            let version = q("FunctionVersion");
            let aliases: Vec<Value> = f
                .aliases
                .values()
                .filter(|a| version.is_none_or(|v| a.function_version == v))
                .map(|a| alias_json(region, core.account_id(), &f.name, a))
                .collect();
            Ok(ok(StatusCode::OK, json!({"Aliases": aliases})))
        }
        (Method::GET, ["2015-03-31", "functions", name, "aliases", alias]) => {
            let a = core.get_alias(region, name, alias)?;
            let fname = core.function(region, name)?.name;
            Ok(ok(
                StatusCode::OK,
                alias_json(region, core.account_id(), &fname, &a),
            ))
        }
        (Method::PUT, ["2015-03-31", "functions", name, "aliases", alias]) => {
            let b = body(req)?;
            let a = core.update_alias(
                region,
                name,
                alias,
                s(&b, "FunctionVersion")?,
                s(&b, "Description")?,
                routing(&b)?,
                s(&b, "RevisionId")?,
            )?;
            let fname = core.function(region, name)?.name;
            Ok(ok(
                StatusCode::OK,
                alias_json(region, core.account_id(), &fname, &a),
            ))
        }
        (Method::DELETE, ["2015-03-31", "functions", name, "aliases", alias]) => {
            core.delete_alias(region, name, alias)?;
            Ok(no_content())
        }
        (Method::POST, ["2015-03-31", "functions", name, "policy"]) => {
            let b = body(req)?;
            let input = PermissionInput {
                statement_id: s(&b, "StatementId")?
                    .ok_or_else(|| missing("StatementId"))?
                    .to_string(),
                action: s(&b, "Action")?
                    .ok_or_else(|| missing("Action"))?
                    .to_string(),
                principal: s(&b, "Principal")?
                    .ok_or_else(|| missing("Principal"))?
                    .to_string(),
                source_arn: s(&b, "SourceArn")?.map(str::to_string),
                source_account: s(&b, "SourceAccount")?.map(str::to_string),
                principal_org_id: s(&b, "PrincipalOrgID")?.map(str::to_string),
                function_url_auth_type: s(&b, "FunctionUrlAuthType")?.map(str::to_string),
                qualifier: q("Qualifier").map(str::to_string),
                revision_id: s(&b, "RevisionId")?.map(str::to_string),
            };
            let st = core.add_permission(region, name, input)?;
            Ok(ok(
                StatusCode::CREATED,
                json!({"Statement": st.to_string()}),
            ))
        }
        (Method::GET, ["2015-03-31", "functions", name, "policy"]) => {
            let (policy, rev) = core.get_policy(region, name, q("Qualifier"))?;
            Ok(ok(
                StatusCode::OK,
                json!({"Policy": policy.to_string(), "RevisionId": rev}),
            ))
        }
        (Method::DELETE, ["2015-03-31", "functions", name, "policy", sid]) => {
            core.remove_permission(region, name, sid, q("RevisionId"))?;
            Ok(no_content())
        }
        (Method::POST | Method::GET, ["2021-10-31", "functions", name, "url"])
        | (Method::PUT | Method::DELETE, ["2021-10-31", "functions", name, "url"]) => {
            url(core, req, name)
        }
        (Method::GET, ["2017-03-31", "tags", arn]) => {
            let tags = core.list_tags(region, arn)?;
            Ok(ok(StatusCode::OK, json!({"Tags": tags})))
        }
        (Method::POST, ["2017-03-31", "tags", arn]) => {
            let b = body(req)?;
            let tags = string_map(b.get("Tags"), "Tags")?.ok_or_else(|| missing("Tags"))?;
            core.tag_resource(region, arn, tags)?;
            Ok(no_content())
        }
        (Method::DELETE, ["2017-03-31", "tags", arn]) => {
            let keys: Vec<String> = req
                .query
                .iter()
                .filter(|(k, _)| k == "tagKeys")
                .map(|(_, v)| v.clone())
                .collect();
            core.untag_resource(region, arn, &keys)?;
            Ok(no_content())
        }
        (Method::PUT, ["2017-10-31", "functions", name, "concurrency"]) => {
            let b = body(req)?;
            let n = i(&b, "ReservedConcurrentExecutions")?
                .ok_or_else(|| missing("ReservedConcurrentExecutions"))?;
            core.put_concurrency(region, name, Some(n))?;
            Ok(ok(
                StatusCode::OK,
                json!({"ReservedConcurrentExecutions": n}),
            ))
        }
        (Method::DELETE, ["2017-10-31", "functions", name, "concurrency"]) => {
            core.put_concurrency(region, name, None)?;
            Ok(no_content())
        }
        (Method::GET, ["2019-09-30", "functions", name, "concurrency"]) => {
            let f = core.function(region, name)?;
            Ok(ok(
                StatusCode::OK,
                match f.reserved_concurrency {
                    Some(n) => json!({"ReservedConcurrentExecutions": n}),
                    None => json!({}),
                },
            ))
        }
        (Method::GET, ["2018-10-31", "layers"]) => {
            let layers: Vec<Value> = core
                .list_layers(region)
                .iter()
                .map(|(n, v)| {
                    json!({
                        "LayerName": n,
                        "LayerArn": core.layer_arn(region, n),
                        "LatestMatchingVersion": layer_version_json(core, region, &host(req), n, v, false),
                    })
                })
                .collect();
            Ok(ok(StatusCode::OK, json!({"Layers": layers})))
        }
        (Method::POST, ["2018-10-31", "layers", layer, "versions"]) => {
            let b = body(req)?;
            let input = PublishLayerInput {
                description: s(&b, "Description")?.map(str::to_string),
                content: code_input(b.get("Content"))?,
                compatible_runtimes: strings(&b, "CompatibleRuntimes")?.unwrap_or_default(),
                compatible_architectures: strings(&b, "CompatibleArchitectures")?
                    .unwrap_or_default(),
                license_info: s(&b, "LicenseInfo")?.map(str::to_string),
            };
            let (name, v) = core.publish_layer_version(region, layer, input)?;
            Ok(ok(
                StatusCode::CREATED,
                layer_version_json(core, region, &host(req), &name, &v, true),
            ))
        }
        (Method::GET, ["2018-10-31", "layers", layer, "versions"]) => {
            let (name, versions) = core.list_layer_versions(region, layer)?;
            let list: Vec<Value> = versions
                .iter()
                .map(|v| layer_version_json(core, region, &host(req), &name, v, false))
                .collect();
            Ok(ok(StatusCode::OK, json!({"LayerVersions": list})))
        }
        (Method::GET, ["2018-10-31", "layers", layer, "versions", n]) => {
            let n = layer_number(n)?;
            let (name, v) = core.get_layer_version(region, layer, n)?;
            Ok(ok(
                StatusCode::OK,
                layer_version_json(core, region, &host(req), &name, &v, true),
            ))
        }
        (Method::DELETE, ["2018-10-31", "layers", layer, "versions", n]) => {
            let n = layer_number(n)?;
            core.delete_layer_version(region, layer, n)?;
            Ok(no_content())
        }
        (_, ["2015-03-31", "event-source-mappings", ..]) => esm::wire(core, req, &segs[2..]),
        (
            _,
            [
                "2019-09-25",
                "functions",
                name,
                "event-invoke-config",
                rest @ ..,
            ],
        ) => invoke_config::wire(core, req, name, rest),
        _ => Err(AwsError::not_implemented(
            "lambda",
            &format!("{} {}", req.method, req.raw_path),
        )),
    }
}

fn layer_number(n: &str) -> Result<u64, AwsError> {
    n.parse()
        .map_err(|_| validation("versionNumber", n, "Member must be a number"))
}

fn missing(k: &str) -> AwsError {
    AwsError::bad_request("InvalidParameterValueException", format!("{k} is required"))
}

fn routing(b: &Body) -> Result<Option<BTreeMap<String, f64>>, AwsError> {
    let Some(Value::Object(rc)) = b.get("RoutingConfig") else {
        return Ok(None);
    };
    let Some(Value::Object(w)) = rc.get("AdditionalVersionWeights") else {
        return Ok(Some(BTreeMap::new()));
    };
    w.iter()
        .map(|(k, v)| {
            v.as_f64()
                .map(|f| (k.clone(), f))
                .ok_or_else(|| serialization("AdditionalVersionWeights", "numbers"))
        })
        .collect::<Result<BTreeMap<_, _>, _>>()
        .map(Some)
}

fn version_config(f: &Function, version: &str) -> VersionConfig {
    version
        .parse::<u64>()
        .ok()
        .and_then(|n| f.versions.get(&n))
        .cloned()
        .unwrap_or_else(|| f.latest.clone())
}

async fn create_function(core: &Arc<Lambda>, req: &AwsRequest) -> Result<AwsResponse, AwsError> {
    let b = body(req)?;
    let input = CreateFunctionInput {
        name: s(&b, "FunctionName")?
            .ok_or_else(|| missing("FunctionName"))?
            .to_string(),
        runtime: s(&b, "Runtime")?.map(str::to_string),
        handler: s(&b, "Handler")?.map(str::to_string),
        role: s(&b, "Role")?.ok_or_else(|| missing("Role"))?.to_string(),
        description: s(&b, "Description")?.map(str::to_string),
        timeout: i(&b, "Timeout")?,
        memory_size: i(&b, "MemorySize")?,
        environment: environment(&b)?,
        layers: strings(&b, "Layers")?.unwrap_or_default(),
        architectures: strings(&b, "Architectures")?.unwrap_or_default(),
        ephemeral_storage: ephemeral(&b)?,
        tags: string_map(b.get("Tags"), "Tags")?.unwrap_or_default(),
        package_type: s(&b, "PackageType")?.map(str::to_string),
        code: code_input(b.get("Code"))?,
        publish: flag(&b, "Publish")?.unwrap_or(false),
        logging: logging(&b)?,
        tracing_mode: tracing(&b)?,
        kms_key_arn: s(&b, "KMSKeyArn")?.map(str::to_string),
    };
    let region = req.region.as_str();
    let (f, version) = core.create_function(region, input)?;
    let cfg = version_config(&f, &version);
    Ok(ok(
        StatusCode::CREATED,
        configuration(core, region, &f, &version, &cfg, false),
    ))
}

fn list_functions(core: &Lambda, req: &AwsRequest) -> Result<AwsResponse, AwsError> {
    let region = req.region.as_str();
    let max = match req.query_param("MaxItems") {
        Some(m) => m
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=10000).contains(n))
            .ok_or_else(|| {
                validation("maxItems", m, "Member must have value between 1 and 10000")
            })?,
        None => 50,
    };
    let all = core.list_functions(region);
    let start = match req.query_param("Marker") {
        Some(m) => all
            .iter()
            .position(|f| f.name.as_str() > m)
            .unwrap_or(all.len()),
        None => 0,
    };
    let page: Vec<&Function> = all.iter().skip(start).take(max).collect();
    let mut v = json!({
        "Functions": page
            .iter()
            .map(|f| configuration(core, region, f, "$LATEST", &f.latest, false))
            .collect::<Vec<_>>(),
    });
    if start + max < all.len()
        && let Some(last) = page.last()
    {
        v["NextMarker"] = json!(last.name);
    }
    Ok(ok(StatusCode::OK, v))
}

async fn invoke(core: &Arc<Lambda>, req: &AwsRequest, name: &str) -> Result<AwsResponse, AwsError> {
    let kind = InvocationType::parse(req.header("x-amz-invocation-type"))?;
    let tail = match req.header("x-amz-log-type") {
        None | Some("None") => false,
        Some("Tail") => true,
        Some(other) => {
            return Err(validation(
                "logType",
                other,
                "Member must satisfy enum value set: [None, Tail]",
            ));
        }
    };
    let invoked = core
        .invoke(
            &req.region,
            name,
            req.query_param("Qualifier"),
            req.body.clone(),
            kind,
            &host(req),
        )
        .await?;
    let mut resp = match (kind, invoked.output) {
        (InvocationType::DryRun, _) => AwsResponse::empty(StatusCode::NO_CONTENT),
        (InvocationType::Event, _) | (_, None) => AwsResponse::empty(StatusCode::ACCEPTED),
        (InvocationType::RequestResponse, Some(out)) => {
            let mut r = AwsResponse::new(StatusCode::OK, "application/json", out.payload);
            if let Some(e) = &out.function_error {
                r.set_header("x-amz-function-error", e);
            }
            if tail {
                r.set_header("x-amz-log-result", &out.log_tail);
            }
            r
        }
    };
    resp.set_header("x-amz-executed-version", &invoked.executed_version);
    Ok(resp)
}

fn url(core: &Lambda, req: &AwsRequest, name: &str) -> Result<AwsResponse, AwsError> {
    let region = req.region.as_str();
    let qualifier = req.query_param("Qualifier");
    match req.method {
        Method::POST => {
            let b = body(req)?;
            let auth = s(&b, "AuthType")?.ok_or_else(|| missing("AuthType"))?;
            let (arn, c) = core.create_url_config(
                region,
                name,
                qualifier,
                auth,
                b.get("Cors").cloned(),
                s(&b, "InvokeMode")?,
            )?;
            let mut v = url_json(region, &arn, &c);
            if let Some(o) = v.as_object_mut() {
                o.remove("LastModifiedTime");
            }
            Ok(ok(StatusCode::CREATED, v))
        }
        Method::GET => {
            let (arn, c) = core.get_url_config(region, name, qualifier)?;
            Ok(ok(StatusCode::OK, url_json(region, &arn, &c)))
        }
        Method::PUT => {
            let b = body(req)?;
            let (arn, c) = core.update_url_config(
                region,
                name,
                qualifier,
                s(&b, "AuthType")?,
                b.get("Cors").cloned(),
                s(&b, "InvokeMode")?,
            )?;
            Ok(ok(StatusCode::OK, url_json(region, &arn, &c)))
        }
        _ => {
            core.delete_url_config(region, name, qualifier)?;
            Ok(no_content())
        }
    }
}

/// Serves a stored package at the URL GetFunction reported.
fn download(core: &Lambda, sha: &str) -> Result<AwsResponse, AwsError> {
    let zip = core
        .store
        .read(|c| state::get_code(c, sha))
        .map_err(store_error)?
        .ok_or_else(|| AwsError::not_found("NoSuchKey", "The specified key does not exist."))?;
    Ok(AwsResponse::new(StatusCode::OK, "application/zip", zip))
}
