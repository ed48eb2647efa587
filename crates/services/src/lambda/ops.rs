//! Function operations as typed Rust functions: what the wire adapter and the
//! AWS::Lambda::Function provider call. Every change is committed to the store before memory
//! changes and before the caller is answered.

use super::code;
use super::model::{
    CodeInput, CreateFunctionInput, Function, LoggingConfig, UpdateConfigInput, VersionConfig,
};
use super::names::{function_arn, parse_function, parse_new_function};
use super::state::{self, Key};
use super::{Lambda, store_error};
use cumulo_wire::AwsError;
use http::StatusCode;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Every runtime identifier in AWS's model: all are accepted and stored; which of them can run
/// here is decided at invoke time (`runtime::interpreters`).
pub const RUNTIMES: &[&str] = &[
    "nodejs",
    "nodejs4.3",
    "nodejs6.10",
    "nodejs8.10",
    "nodejs10.x",
    "nodejs12.x",
    "nodejs14.x",
    "nodejs16.x",
    "java8",
    "java8.al2",
    "java11",
    "python2.7",
    "python3.6",
    "python3.7",
    "python3.8",
    "python3.9",
    "dotnetcore1.0",
    "dotnetcore2.0",
    "dotnetcore2.1",
    "dotnetcore3.1",
    "dotnet6",
    "dotnet8",
    "nodejs4.3-edge",
    "go1.x",
    "ruby2.5",
    "ruby2.7",
    "provided",
    "provided.al2",
    "nodejs18.x",
    "python3.10",
    "java17",
    "ruby3.2",
    "ruby3.3",
    "ruby3.4",
    "python3.11",
    "nodejs20.x",
    "provided.al2023",
    "python3.12",
    "java21",
    "python3.13",
    "nodejs22.x",
    "nodejs24.x",
    "python3.14",
    "java25",
    "dotnet10",
    "ruby4.0",
];

/// Environment variables the Lambda service sets itself, which a function may not set.
pub const RESERVED_ENV: &[&str] = &[
    "_HANDLER",
    "_X_AMZN_TRACE_ID",
    "AWS_DEFAULT_REGION",
    "AWS_REGION",
    "AWS_EXECUTION_ENV",
    "AWS_LAMBDA_FUNCTION_NAME",
    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
    "AWS_LAMBDA_FUNCTION_VERSION",
    "AWS_LAMBDA_INITIALIZATION_TYPE",
    "AWS_LAMBDA_LOG_GROUP_NAME",
    "AWS_LAMBDA_LOG_STREAM_NAME",
    "AWS_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_LAMBDA_RUNTIME_API",
    "LAMBDA_TASK_ROOT",
    "LAMBDA_RUNTIME_DIR",
];

pub(super) fn now_modified() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3f+0000")
        .to_string()
}

pub(super) fn new_revision() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub(super) fn validation(field: &str, value: impl std::fmt::Display, rule: &str) -> AwsError {
    AwsError::bad_request(
        "ValidationException",
        format!(
            "1 validation error detected: Value '{value}' at '{field}' failed to satisfy constraint: {rule}"
        ),
    )
}

pub(super) fn invalid_parameter(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("InvalidParameterValueException", message)
}

pub(super) fn function_not_found(
    region: &str,
    account: &str,
    name: &str,
    qualifier: Option<&str>,
) -> AwsError {
    AwsError::not_found(
        "ResourceNotFoundException",
        format!(
            "Function not found: {}",
            function_arn(region, account, name, qualifier)
        ),
    )
}

pub(super) fn conflict(message: impl Into<String>) -> AwsError {
    AwsError::new(StatusCode::CONFLICT, "ResourceConflictException", message)
}

/// `TracingConfig.Mode`, one of Lambda's two.
/// `KMSKeyArn`: an ARN, or empty (AWS's pattern).
fn check_kms_key(arn: Option<&str>) -> Result<(), AwsError> {
    match arn {
        Some(k) if !k.is_empty() && !k.starts_with("arn:") => Err(validation(
            "kMSKeyArn",
            k,
            "Member must satisfy regular expression pattern: (arn:(aws[a-zA-Z-]*)?:[a-z0-9-.]+:.*)|()",
        )),
        _ => Ok(()),
    }
}

fn check_tracing(mode: Option<&str>) -> Result<(), AwsError> {
    match mode {
        None | Some("Active" | "PassThrough") => Ok(()),
        Some(m) => Err(validation(
            "tracingConfig.mode",
            m,
            "Member must satisfy enum value set: [Active, PassThrough]",
        )),
    }
}

fn check_settings(
    runtime: Option<&str>,
    timeout: Option<i64>,
    memory: Option<i64>,
    environment: Option<&BTreeMap<String, String>>,
    ephemeral: Option<i64>,
) -> Result<(), AwsError> {
    if let Some(r) = runtime
        && !RUNTIMES.contains(&r)
    {
        return Err(validation(
            "runtime",
            r,
            &format!(
                "Member must satisfy enum value set: [{}]",
                RUNTIMES.join(", ")
            ),
        ));
    }
    if let Some(t) = timeout
        && !(1..=900).contains(&t)
    {
        return Err(validation(
            "timeout",
            t,
            if t < 1 {
                "Member must have value greater than or equal to 1"
            } else {
                "Member must have value less than or equal to 900"
            },
        ));
    }
    if let Some(m) = memory
        && !(128..=10240).contains(&m)
    {
        return Err(validation(
            "memorySize",
            m,
            if m < 128 {
                "Member must have value greater than or equal to 128"
            } else {
                "Member must have value less than or equal to 10240"
            },
        ));
    }
    if let Some(e) = ephemeral
        && !(512..=10240).contains(&e)
    {
        return Err(invalid_parameter(format!(
            "Ephemeral storage size {e} is out of range: must be between 512 and 10240 MB"
        )));
    }
    if let Some(env) = environment {
        let reserved: Vec<&str> = env
            .keys()
            .map(String::as_str)
            .filter(|k| RESERVED_ENV.contains(k))
            .collect();
        if !reserved.is_empty() {
            return Err(invalid_parameter(format!(
                "Lambda was unable to configure your environment variables because the environment variables you have provided contains reserved keys that are currently not supported for modification. Reserved keys used in this request: {}",
                reserved.join(", ")
            )));
        }
        let size: usize = env.iter().map(|(k, v)| k.len() + v.len()).sum();
        if size > 4096 {
            return Err(invalid_parameter(format!(
                "Lambda was unable to configure your environment variables because the environment variables you have provided exceeded the 4KB limit. String measured: {size}"
            )));
        }
    }
    Ok(())
}

fn check_role(role: &str) -> Result<(), AwsError> {
    let ok = role.starts_with("arn:aws:iam::") && role.contains(":role/") && role.len() <= 2048;
    if ok {
        Ok(())
    } else {
        Err(validation(
            "role",
            role,
            "Member must satisfy regular expression pattern: arn:(aws[a-zA-Z-]*)?:iam::\\d{12}:role/?[a-zA-Z_0-9+=,.@\\-_/]+",
        ))
    }
}

impl Lambda {
    /// The bytes of a deployment package: uploaded, or read from S3 through S3's operations.
    pub(super) fn package_bytes(&self, code: &CodeInput) -> Result<Vec<u8>, AwsError> {
        match code {
            CodeInput::Zip(z) => Ok(z.clone()),
            CodeInput::S3 {
                bucket,
                key,
                version,
            } => {
                let got = self.s3.get_object(
                    bucket,
                    key,
                    version.as_deref(),
                    None,
                    &crate::s3::Conditions::default(),
                );
                match got {
                    Ok(Ok(out)) => Ok(out.body),
                    Ok(Err(_)) => Err(invalid_parameter(format!(
                        "Error occurred while GetObject. S3 Error Code: PreconditionFailed. S3 Error Message: the object {bucket}/{key} could not be read"
                    ))),
                    Err(e) => Err(invalid_parameter(format!(
                        "Error occurred while GetObject. S3 Error Code: {}. S3 Error Message: {}",
                        e.code, e.message
                    ))),
                }
            }
            CodeInput::Image => Err(image_refused()),
            CodeInput::None => Err(invalid_parameter(
                "Please provide a source for function code.",
            )),
        }
    }

    /// Stores a checked package; returns `(CodeSha256, CodeSize)`.
    pub(super) fn store_package(&self, zip: &[u8]) -> Result<(String, i64), AwsError> {
        code::validate(zip)?;
        let sha = code::sha256_b64(zip);
        self.store
            .write(|tx| state::put_code(tx, &sha, zip))
            .map_err(store_error)?;
        Ok((sha, zip.len() as i64))
    }

    /// Where a package is unpacked, unpacking it now if it is not yet.
    pub(super) fn unpacked(&self, kind: &str, sha: &str) -> Result<PathBuf, AwsError> {
        let dir = self.base_dir.join(kind).join(code::dir_name(sha));
        if dir.is_dir() {
            return Ok(dir);
        }
        let zip = self
            .store
            .read(|c| state::get_code(c, sha))
            .map_err(store_error)?
            .ok_or_else(|| AwsError::internal(format!("cumulo: package {sha} is missing")))?;
        code::unpack(&zip, &dir).map_err(|e| {
            AwsError::internal(format!("cumulo: could not unpack the package: {e}"))
        })?;
        Ok(dir)
    }

    pub(super) fn persist(&self, region: &str, f: &Function) -> Result<(), AwsError> {
        self.store
            .write(|tx| state::put_function(tx, region, f))
            .map_err(store_error)
    }

    /// The function as stored (a copy).
    pub fn function(&self, region: &str, name_or_arn: &str) -> Result<Function, AwsError> {
        let (name, _) = parse_function(name_or_arn)?;
        self.lock()
            .functions
            .get(&(region.to_string(), name.clone()))
            .cloned()
            .ok_or_else(|| function_not_found(region, &self.account_id, &name, None))
    }

    /// Runs `f` on the stored function and commits the result; memory changes only if the
    /// commit succeeds.
    pub(super) fn mutate<R>(
        &self,
        region: &str,
        name: &str,
        f: impl FnOnce(&mut Function) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let mut st = self.lock();
        let key: Key = (region.to_string(), name.to_string());
        let current = st
            .functions
            .get(&key)
            .ok_or_else(|| function_not_found(region, &self.account_id, name, None))?;
        let mut next = current.clone();
        let r = f(&mut next)?;
        self.persist(region, &next)?;
        st.functions.insert(key, next);
        Ok(r)
    }

    /// CreateFunction. The function starts `Pending` and turns `Active` once its package is
    /// unpacked (in the background), as AWS reports it.
    pub fn create_function(
        self: &Arc<Self>,
        region: &str,
        input: CreateFunctionInput,
    ) -> Result<(Function, String), AwsError> {
        let name = parse_new_function(&input.name)?;
        super::config::refuse_reserved(&input.tags)?;
        if input.package_type.as_deref() == Some("Image") || matches!(input.code, CodeInput::Image)
        {
            return Err(image_refused());
        }
        if let Some(p) = &input.package_type
            && p != "Zip"
        {
            return Err(validation(
                "packageType",
                p,
                "Member must satisfy enum value set: [Zip, Image]",
            ));
        }
        let (Some(runtime), Some(handler)) = (input.runtime.clone(), input.handler.clone()) else {
            return Err(invalid_parameter(
                "Runtime and Handler are mandatory parameters for functions created with deployment packages.",
            ));
        };
        check_role(&input.role)?;
        check_settings(
            Some(&runtime),
            input.timeout,
            input.memory_size,
            input.environment.as_ref(),
            input.ephemeral_storage,
        )?;
        check_tracing(input.tracing_mode.as_deref())?;
        check_kms_key(input.kms_key_arn.as_deref())?;
        for a in &input.architectures {
            if a != "x86_64" && a != "arm64" {
                return Err(validation(
                    "architectures",
                    a,
                    "Member must satisfy enum value set: [x86_64, arm64]",
                ));
            }
        }
        let layers = self.check_layers(region, &input.layers)?;
        if self
            .lock()
            .functions
            .contains_key(&(region.to_string(), name.clone()))
        {
            return Err(conflict(format!("Function already exist: {name}")));
        }
        let logging = match &input.logging {
            Some(l) => super::logging::apply(&LoggingConfig::default(), l, &name)?,
            None => LoggingConfig::default(),
        };
        let zip = self.package_bytes(&input.code)?;
        let (sha, size) = self.store_package(&zip)?;
        let config = VersionConfig {
            runtime,
            handler,
            role: input.role,
            description: input.description.unwrap_or_default(),
            timeout: input.timeout.unwrap_or(3),
            memory_size: input.memory_size.unwrap_or(128),
            environment: input.environment.unwrap_or_default(),
            layers,
            architectures: if input.architectures.is_empty() {
                vec!["x86_64".into()]
            } else {
                input.architectures
            },
            ephemeral_storage: input.ephemeral_storage.unwrap_or(512),
            kms_key_arn: input.kms_key_arn.filter(|k| !k.is_empty()),
            tracing_mode: input
                .tracing_mode
                .unwrap_or_else(super::model::pass_through),
            code_sha256: sha.clone(),
            code_size: size,
            last_modified: now_modified(),
            revision_id: new_revision(),
            logging,
        };
        let mut f = Function {
            name: name.clone(),
            latest: config.clone(),
            state: "Pending".into(),
            last_update_status: "Successful".into(),
            versions: BTreeMap::new(),
            next_version: 1,
            aliases: BTreeMap::new(),
            policy: Vec::new(),
            policy_revision: new_revision(),
            urls: BTreeMap::new(),
            tags: input.tags,
            reserved_concurrency: None,
            event_invoke_configs: BTreeMap::new(),
        };
        let mut version = "$LATEST".to_string();
        if input.publish {
            f.versions.insert(1, config);
            f.next_version = 2;
            version = "1".into();
        }
        {
            let mut st = self.lock();
            let key = (region.to_string(), name.clone());
            if st.functions.contains_key(&key) {
                return Err(conflict(format!("Function already exist: {name}")));
            }
            self.persist(region, &f)?;
            st.functions.insert(key, f.clone());
        }
        self.settle(region, &name, &sha);
        Ok((f, version))
    }

    /// Unpacks the package in the background, then marks the function Active and its last
    /// update Successful (or Failed with the reason, should the package not unpack).
    fn settle(self: &Arc<Self>, region: &str, name: &str, sha: &str) {
        let core = self.clone();
        let (region, name, sha) = (region.to_string(), name.to_string(), sha.to_string());
        let work = move || {
            let unpacked = core.unpacked("code", &sha);
            let mut st = core.lock();
            if let Some(f) = st.functions.get_mut(&(region, name))
                && f.latest.code_sha256 == sha
            {
                match unpacked {
                    Ok(_) => {
                        f.state = "Active".into();
                        f.last_update_status = "Successful".into();
                    }
                    Err(_) => {
                        f.state = "Failed".into();
                        f.last_update_status = "Failed".into();
                    }
                }
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(h) => {
                h.spawn_blocking(work);
            }
            Err(_) => work(),
        }
    }

    /// ListFunctions (every function's `$LATEST`), by name.
    pub fn list_functions(&self, region: &str) -> Vec<Function> {
        let st = self.lock();
        let mut out: Vec<Function> = st
            .functions
            .iter()
            .filter(|((r, _), _)| r == region)
            .map(|(_, f)| f.clone())
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// UpdateFunctionCode. Returns the function and the version reported (`$LATEST`, or the
    /// one published when `publish`).
    pub fn update_function_code(
        self: &Arc<Self>,
        region: &str,
        name_or_arn: &str,
        code: &CodeInput,
        publish: bool,
        revision_id: Option<&str>,
    ) -> Result<(Function, String), AwsError> {
        let (name, _) = parse_function(name_or_arn)?;
        self.function(region, &name)?;
        let zip = self.package_bytes(code)?;
        let (sha, size) = self.store_package(&zip)?;
        let result = self.mutate(region, &name, |f| {
            check_revision(f, revision_id)?;
            check_not_updating(f)?;
            f.latest.code_sha256 = sha.clone();
            f.latest.code_size = size;
            f.latest.last_modified = now_modified();
            f.latest.revision_id = new_revision();
            f.last_update_status = "InProgress".into();
            let version = if publish {
                super::versions::publish_into(f, None)
            } else {
                "$LATEST".to_string()
            };
            Ok((f.clone(), version))
        })?;
        self.executor.retire(region, &name);
        self.settle(region, &name, &sha);
        Ok(result)
    }

    /// UpdateFunctionConfiguration: only the given settings change.
    pub fn update_function_configuration(
        self: &Arc<Self>,
        region: &str,
        name_or_arn: &str,
        input: UpdateConfigInput,
    ) -> Result<Function, AwsError> {
        let (name, _) = parse_function(name_or_arn)?;
        check_settings(
            input.runtime.as_deref(),
            input.timeout,
            input.memory_size,
            input.environment.as_ref(),
            input.ephemeral_storage,
        )?;
        check_tracing(input.tracing_mode.as_deref())?;
        check_kms_key(input.kms_key_arn.as_deref())?;
        if let Some(r) = &input.role {
            check_role(r)?;
        }
        let layers = match &input.layers {
            Some(l) => Some(self.check_layers(region, l)?),
            None => None,
        };
        let f = self.mutate(region, &name, |f| {
            check_revision(f, input.revision_id.as_deref())?;
            check_not_updating(f)?;
            let c = &mut f.latest;
            if let Some(v) = input.runtime {
                c.runtime = v;
            }
            if let Some(v) = input.handler {
                c.handler = v;
            }
            if let Some(v) = input.role {
                c.role = v;
            }
            if let Some(v) = input.description {
                c.description = v;
            }
            if let Some(v) = input.timeout {
                c.timeout = v;
            }
            if let Some(v) = input.memory_size {
                c.memory_size = v;
            }
            if let Some(v) = input.environment {
                c.environment = v;
            }
            if let Some(v) = layers {
                c.layers = v;
            }
            if let Some(v) = input.ephemeral_storage {
                c.ephemeral_storage = v;
            }
            if let Some(v) = &input.tracing_mode {
                c.tracing_mode = v.clone();
            }
            if let Some(v) = &input.kms_key_arn {
                c.kms_key_arn = (!v.is_empty()).then(|| v.clone());
            }
            if let Some(l) = &input.logging {
                c.logging = super::logging::apply(&c.logging, l, &name)?;
            }
            c.last_modified = now_modified();
            c.revision_id = new_revision();
            f.last_update_status = "InProgress".into();
            Ok(f.clone())
        })?;
        self.executor.retire(region, &name);
        self.settle(region, &name, &f.latest.code_sha256);
        Ok(f)
    }

    /// DeleteFunction: the whole function, or one published version when qualified.
    pub fn delete_function(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
    ) -> Result<(), AwsError> {
        let (name, q) = parse_function(name_or_arn)?;
        let qualifier = qualifier.map(str::to_string).or(q);
        match qualifier.as_deref() {
            None => {
                let mut st = self.lock();
                let key = (region.to_string(), name.clone());
                if !st.functions.contains_key(&key) {
                    return Err(function_not_found(region, &self.account_id, &name, None));
                }
                self.store
                    .write(|tx| state::delete_function(tx, region, &name))
                    .map_err(store_error)?;
                st.functions.remove(&key);
            }
            Some("$LATEST") => {
                return Err(invalid_parameter(
                    "$LATEST version cannot be deleted without deleting the function.",
                ));
            }
            Some(v) => {
                let n: u64 = v.parse().map_err(|_| {
                    invalid_parameter("Deletion of aliases is not currently supported.")
                })?;
                self.mutate(region, &name, |f| {
                    if let Some(a) = f.aliases.values().find(|a| a.function_version == v) {
                        return Err(conflict(format!(
                            "Unable to delete version because the following aliases reference it: [{}]",
                            a.name
                        )));
                    }
                    f.versions.remove(&n).ok_or_else(|| {
                        function_not_found(region, &self.account_id, &name, Some(v))
                    })?;
                    Ok(())
                })?;
            }
        }
        self.executor.retire(region, &name);
        Ok(())
    }

    /// Layer version ARNs checked to exist; their order is kept.
    fn check_layers(&self, region: &str, arns: &[String]) -> Result<Vec<String>, AwsError> {
        if arns.len() > 5 {
            return Err(invalid_parameter("Cannot reference more than 5 layers."));
        }
        for arn in arns {
            self.layer_version_by_arn(region, arn)?;
        }
        Ok(arns.to_vec())
    }
}

fn image_refused() -> AwsError {
    invalid_parameter(
        "cumulo: PackageType Image is not supported: container images need a container engine, which cumulo does not use; deploy a .zip package (ZipFile or S3Bucket/S3Key) instead",
    )
}

fn check_revision(f: &Function, revision_id: Option<&str>) -> Result<(), AwsError> {
    match revision_id {
        Some(r) if r != f.latest.revision_id => Err(AwsError::new(
            StatusCode::PRECONDITION_FAILED,
            "PreconditionFailedException",
            "The Revision Id provided does not match the latest Revision Id. Call the GetFunction/GetAlias API to retrieve the latest Revision Id",
        )),
        _ => Ok(()),
    }
}

fn check_not_updating(f: &Function) -> Result<(), AwsError> {
    if f.last_update_status == "InProgress" || f.state == "Pending" {
        return Err(conflict(format!(
            "The operation cannot be performed at this time. An update is in progress for resource: {}",
            f.name
        )));
    }
    Ok(())
}
