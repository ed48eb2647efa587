//! Services: CreateService (the configuration checked and completed with AWS's defaults),
//! Describe/List/Update/Delete, Pause/Resume, StartDeployment and ListOperations. Each change
//! records an operation and keeps the service OPERATION_IN_PROGRESS for a moment (`lifecycle`).

use super::{
    AppRunnerService, body, check_enum, check_pattern, check_range, hex32, internal, invalid,
    invalid_state, not_found, now, page, put, required_object, tags_in, with_token,
};
use crate::apprunner::instance::{
    DEFAULT_CPU, DEFAULT_MEMORY, combination_allowed, cpu_units, memory_units,
};
use crate::apprunner::lifecycle::{TRANSITION_SECONDS, operation_status, service_status};
use crate::apprunner::state::{self, AppService, ConfigKind, Doc, Operation, Region};
use crate::json_body::Body;
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

const NAME_PATTERN: &str = "[A-Za-z0-9][A-Za-z0-9-_]{3,39}";
const ROLE_PATTERN: &str = r"arn:(aws|aws-us-gov|aws-cn|aws-iso|aws-iso-b):iam::[0-9]{12}:(role|role\/service-role)\/[\w+=,.@\-/]{1,1000}";
const IMAGE_PATTERN: &str = r"([0-9]{12}.dkr.ecr.[a-z\-]+-[0-9]{1}.amazonaws.com\/((?:[a-z0-9]+(?:[._-][a-z0-9]+)*\/)*[a-z0-9]+(?:[._-][a-z0-9]+)*)(:([\w\d+\-=._:\/@])+|@([\w\d\:]+))?)|(public\.ecr\.aws\/.+\/((?:[a-z0-9]+(?:[._-][a-z0-9]+)*\/)*[a-z0-9]+(?:[._-][a-z0-9]+)*)(:([\w\d+\-=._:\/@])+|@([\w\d\:]+))?)";
const KMS_PATTERN: &str = r"arn:aws(-[\w]+)*:kms:[a-z\-]+-[0-9]{1}:[0-9]{12}:key\/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";

pub fn service_not_found(arn: &str) -> AwsError {
    not_found(format!("Service with ARN {arn} not found"))
}

/// A `{Name: Value}` map member, checked to be strings.
fn string_map(b: &Body<'_>, name: &str) -> Result<Option<Value>, AwsError> {
    if !b.has(name) {
        return Ok(None);
    }
    let m = b.string_map(name)?;
    Ok(Some(json!(m)))
}

/// SourceConfiguration as DescribeService reports it: exactly one repository, each with its
/// required members and AWS's default port.
fn source(b: &Body<'_>) -> Result<Value, AwsError> {
    let image = b.object("ImageRepository")?;
    let code = b.object("CodeRepository")?;
    let mut out = Map::new();
    let auth = b.object("AuthenticationConfiguration")?;
    let mut auth_out = Map::new();
    if let Some(a) = &auth {
        if let Some(role) = a.opt_str("AccessRoleArn")? {
            check_pattern(
                "SourceConfiguration.AuthenticationConfiguration.AccessRoleArn",
                &role,
                ROLE_PATTERN,
            )?;
            auth_out.insert("AccessRoleArn".into(), json!(role));
        }
        if let Some(c) = a.opt_str("ConnectionArn")? {
            auth_out.insert("ConnectionArn".into(), json!(c));
        }
    }
    match (image, code) {
        (Some(i), None) => {
            let id = i.str("ImageIdentifier")?;
            check_pattern(
                "SourceConfiguration.ImageRepository.ImageIdentifier",
                &id,
                IMAGE_PATTERN,
            )?;
            let kind = i.str("ImageRepositoryType")?;
            check_enum(
                "SourceConfiguration.ImageRepository.ImageRepositoryType",
                &kind,
                &["ECR", "ECR_PUBLIC"],
            )?;
            if kind == "ECR" && !auth_out.contains_key("AccessRoleArn") {
                return Err(invalid(
                    "Authentication configuration is invalid: an AccessRoleArn is required for an ECR image repository",
                ));
            }
            let mut config = Map::new();
            let c = i.object("ImageConfiguration")?;
            let port = match &c {
                Some(c) => c.opt_str("Port")?,
                None => None,
            };
            config.insert("Port".into(), json!(port.unwrap_or_else(|| "8080".into())));
            if let Some(c) = &c {
                put(
                    &mut config,
                    "RuntimeEnvironmentVariables",
                    string_map(c, "RuntimeEnvironmentVariables")?,
                );
                put(
                    &mut config,
                    "RuntimeEnvironmentSecrets",
                    string_map(c, "RuntimeEnvironmentSecrets")?,
                );
                put(
                    &mut config,
                    "StartCommand",
                    c.opt_str("StartCommand")?.map(Value::from),
                );
            }
            out.insert(
                "ImageRepository".into(),
                json!({"ImageIdentifier": id, "ImageConfiguration": config, "ImageRepositoryType": kind}),
            );
        }
        (None, Some(c)) => {
            let url = c.str("RepositoryUrl")?;
            let version = c.object("SourceCodeVersion")?.ok_or_else(|| {
                super::missing("SourceConfiguration.CodeRepository.SourceCodeVersion")
            })?;
            let vtype = version.str("Type")?;
            check_enum(
                "SourceConfiguration.CodeRepository.SourceCodeVersion.Type",
                &vtype,
                &["BRANCH"],
            )?;
            if !auth_out.contains_key("ConnectionArn") {
                return Err(invalid(
                    "Authentication configuration is invalid: a ConnectionArn is required for a code repository",
                ));
            }
            let mut repo = json!({
                "RepositoryUrl": url,
                "SourceCodeVersion": {"Type": vtype, "Value": version.str("Value")?},
            });
            if let Some(cc) = c.object("CodeConfiguration")? {
                let from = cc.str("ConfigurationSource")?;
                check_enum(
                    "SourceConfiguration.CodeRepository.CodeConfiguration.ConfigurationSource",
                    &from,
                    &["REPOSITORY", "API"],
                )?;
                let mut conf = json!({"ConfigurationSource": from});
                if let Some(v) = cc.get("CodeConfigurationValues") {
                    conf["CodeConfigurationValues"] = v.clone();
                } else if from == "API" {
                    return Err(invalid(
                        "CodeConfigurationValues are required when ConfigurationSource is API",
                    ));
                }
                repo["CodeConfiguration"] = conf;
            }
            if let Some(d) = c.opt_str("SourceDirectory")? {
                repo["SourceDirectory"] = json!(d);
            }
            out.insert("CodeRepository".into(), repo);
        }
        _ => {
            return Err(invalid(
                "SourceConfiguration must specify exactly one of ImageRepository or CodeRepository",
            ));
        }
    }
    put(
        &mut out,
        "AutoDeploymentsEnabled",
        b.opt_bool("AutoDeploymentsEnabled")?.map(Value::from),
    );
    if !auth_out.is_empty() {
        out.insert(
            "AuthenticationConfiguration".into(),
            Value::Object(auth_out),
        );
    }
    Ok(Value::Object(out))
}

/// InstanceConfiguration in units (`1 vCPU` → `1024`), over `old` for members not given.
fn instance(b: Option<&Body<'_>>, old: Option<&Value>) -> Result<Value, AwsError> {
    let old_num = |k: &str, d: u32| -> u32 {
        old.and_then(|o| o[k].as_str())
            .and_then(|s| s.parse().ok())
            .unwrap_or(d)
    };
    let (cpu, memory, role) = match b {
        Some(b) => {
            let cpu = match b.opt_str("Cpu")? {
                Some(c) => cpu_units(&c).ok_or_else(|| {
                    invalid(format!(
                        "1 validation error detected: Value '{c}' at 'instanceConfiguration.cpu' failed to satisfy constraint: Member must satisfy regular expression pattern: 256|512|1024|2048|4096|(0.25|0.5|1|2|4) vCPU"
                    ))
                })?,
                None => old_num("Cpu", DEFAULT_CPU),
            };
            let memory = match b.opt_str("Memory")? {
                Some(m) => memory_units(&m).ok_or_else(|| {
                    invalid(format!(
                        "1 validation error detected: Value '{m}' at 'instanceConfiguration.memory' failed to satisfy constraint: Member must satisfy regular expression pattern: 512|1024|2048|3072|4096|6144|8192|10240|12288|(0.5|1|2|3|4|6|8|10|12) GB"
                    ))
                })?,
                None => old_num("Memory", DEFAULT_MEMORY),
            };
            let role = match b.opt_str("InstanceRoleArn")? {
                Some(r) => {
                    check_pattern("InstanceConfiguration.InstanceRoleArn", &r, ROLE_PATTERN)?;
                    Some(r)
                }
                None => old.and_then(|o| o["InstanceRoleArn"].as_str().map(str::to_string)),
            };
            (cpu, memory, role)
        }
        None => (
            old_num("Cpu", DEFAULT_CPU),
            old_num("Memory", DEFAULT_MEMORY),
            old.and_then(|o| o["InstanceRoleArn"].as_str().map(str::to_string)),
        ),
    };
    if !combination_allowed(cpu, memory) {
        return Err(invalid(format!(
            "The combination of Cpu {cpu} and Memory {memory} is not supported. See the App Runner documentation for supported CPU and memory configurations."
        )));
    }
    let mut out = json!({"Cpu": cpu.to_string(), "Memory": memory.to_string()});
    if let Some(r) = role {
        out["InstanceRoleArn"] = json!(r);
    }
    Ok(out)
}

/// HealthCheckConfiguration with AWS's defaults (TCP, `/`, 5 s, 2 s, 1, 5).
fn health(b: Option<&Body<'_>>) -> Result<Value, AwsError> {
    let mut out = json!({"Protocol": "TCP", "Path": "/", "Interval": 5, "Timeout": 2,
                         "HealthyThreshold": 1, "UnhealthyThreshold": 5});
    let Some(b) = b else { return Ok(out) };
    if let Some(p) = b.opt_str("Protocol")? {
        check_enum("HealthCheckConfiguration.Protocol", &p, &["TCP", "HTTP"])?;
        out["Protocol"] = json!(p);
    }
    if let Some(p) = b.opt_str("Path")? {
        if p.is_empty() {
            return Err(invalid(
                "1 validation error detected: Value '' at 'healthCheckConfiguration.path' failed to satisfy constraint: Member must have length greater than or equal to 1",
            ));
        }
        out["Path"] = json!(p);
    }
    for (k, max) in [
        ("Interval", 20),
        ("Timeout", 20),
        ("HealthyThreshold", 20),
        ("UnhealthyThreshold", 20),
    ] {
        if let Some(n) = b.opt_i64(k)? {
            check_range(&format!("HealthCheckConfiguration.{k}"), n, 1, max)?;
            out[k] = json!(n);
        }
    }
    Ok(out)
}

impl AppRunnerService {
    /// NetworkConfiguration with its defaults (DEFAULT egress, public ingress, IPV4), a VPC
    /// egress naming an active connector.
    fn network(
        &self,
        r: &Region,
        b: Option<&Body<'_>>,
        old: Option<&Value>,
    ) -> Result<Value, AwsError> {
        let mut out = old.cloned().unwrap_or_else(|| {
            json!({"EgressConfiguration": {"EgressType": "DEFAULT"},
                   "IngressConfiguration": {"IsPubliclyAccessible": true},
                   "IpAddressType": "IPV4"})
        });
        let Some(b) = b else { return Ok(out) };
        if let Some(e) = b.object("EgressConfiguration")? {
            let kind = e.opt_str("EgressType")?.unwrap_or_else(|| "DEFAULT".into());
            check_enum(
                "NetworkConfiguration.EgressConfiguration.EgressType",
                &kind,
                &["DEFAULT", "VPC"],
            )?;
            let connector = e.opt_str("VpcConnectorArn")?;
            out["EgressConfiguration"] = match (kind.as_str(), connector) {
                ("VPC", Some(arn)) => {
                    let active = r.connectors.get(&arn).filter(|c| c.deleted_at.is_none());
                    if active.is_none() {
                        return Err(invalid(format!(
                            "VPC connector with ARN {arn} does not exist or is not active"
                        )));
                    }
                    json!({"EgressType": "VPC", "VpcConnectorArn": arn})
                }
                ("VPC", None) => {
                    return Err(invalid(
                        "VpcConnectorArn is required when EgressType is VPC",
                    ));
                }
                (_, Some(_)) => {
                    return Err(invalid(
                        "VpcConnectorArn can only be specified when EgressType is VPC",
                    ));
                }
                (_, None) => json!({"EgressType": "DEFAULT"}),
            };
        }
        if let Some(i) = b.object("IngressConfiguration")? {
            out["IngressConfiguration"] = json!({"IsPubliclyAccessible": i.opt_bool("IsPubliclyAccessible")?.unwrap_or(true)});
        }
        if let Some(t) = b.opt_str("IpAddressType")? {
            check_enum(
                "NetworkConfiguration.IpAddressType",
                &t,
                &["IPV4", "DUAL_STACK"],
            )?;
            out["IpAddressType"] = json!(t);
        }
        Ok(out)
    }

    fn observability(
        &self,
        r: &Region,
        region: &str,
        b: Option<&Body<'_>>,
    ) -> Result<Value, AwsError> {
        let Some(b) = b else {
            return Ok(json!({"ObservabilityEnabled": false}));
        };
        let enabled = b
            .opt_bool("ObservabilityEnabled")?
            .ok_or_else(|| super::missing("ObservabilityConfiguration.ObservabilityEnabled"))?;
        let mut out = json!({"ObservabilityEnabled": enabled});
        match b.opt_str("ObservabilityConfigurationArn")? {
            Some(reference) => {
                let arn = self
                    .resolve_config(r, region, ConfigKind::Observability, &reference)
                    .ok_or_else(|| {
                        invalid(format!(
                            "Observability configuration with ARN {reference} does not exist"
                        ))
                    })?;
                out["ObservabilityConfigurationArn"] = json!(arn);
            }
            None if enabled => {
                return Err(invalid(
                    "ObservabilityConfigurationArn is required when ObservabilityEnabled is true",
                ));
            }
            None => {}
        }
        Ok(out)
    }

    fn auto_scaling(
        &self,
        r: &Region,
        region: &str,
        reference: Option<&str>,
    ) -> Result<String, AwsError> {
        let default = self.arn(region, super::DEFAULT_AUTO_SCALING);
        let reference = reference.unwrap_or(&default);
        self.resolve_config(r, region, ConfigKind::AutoScaling, reference)
            .ok_or_else(|| {
                invalid(format!(
                    "Auto scaling configuration with ARN {reference} does not exist"
                ))
            })
    }

    pub(super) fn service_json(&self, r: &Region, arn: &str, s: &AppService, now: f64) -> Value {
        let mut m = Map::new();
        m.insert("ServiceName".into(), json!(s.name));
        m.insert("ServiceId".into(), json!(s.id));
        m.insert("ServiceArn".into(), json!(arn));
        m.insert("ServiceUrl".into(), json!(s.url));
        m.insert("CreatedAt".into(), json!(s.created));
        m.insert("UpdatedAt".into(), json!(s.updated));
        put(&mut m, "DeletedAt", s.deleted_at.map(Value::from));
        m.insert(
            "Status".into(),
            json!(service_status(s, now).unwrap_or("DELETED")),
        );
        m.insert("SourceConfiguration".into(), s.source.clone());
        m.insert("InstanceConfiguration".into(), s.instance.clone());
        put(&mut m, "EncryptionConfiguration", s.encryption.clone());
        m.insert("HealthCheckConfiguration".into(), s.health.clone());
        m.insert(
            "AutoScalingConfigurationSummary".into(),
            self.config_summary(r, &s.auto_scaling_arn),
        );
        m.insert("NetworkConfiguration".into(), s.network.clone());
        m.insert("ObservabilityConfiguration".into(), s.observability.clone());
        Value::Object(m)
    }

    /// The live service an ARN names (a completed deletion is gone).
    pub(super) fn live_service<'a>(
        r: &'a Region,
        arn: &str,
        now: f64,
    ) -> Result<&'a AppService, AwsError> {
        r.services
            .get(arn)
            .filter(|s| service_status(s, now).is_some())
            .ok_or_else(|| service_not_found(arn))
    }

    /// Writes a changed service, recording the operation that changed it.
    fn commit_service(
        &self,
        r: &mut Region,
        region: &str,
        arn: &str,
        mut s: AppService,
        kind: &str,
        now: f64,
    ) -> Result<Value, AwsError> {
        let op = Operation {
            id: uuid::Uuid::new_v4().to_string(),
            kind: kind.into(),
            started: now,
            ends: now + TRANSITION_SECONDS,
        };
        let op_id = op.id.clone();
        s.operations.push(op);
        s.updated = now;
        if kind != "DELETE_SERVICE" {
            s.busy_until = now + TRANSITION_SECONDS;
        }
        // Services whose deletion completed are dropped from the store with this write.
        let gone: Vec<String> = r
            .services
            .iter()
            .filter(|(a, g)| a.as_str() != arn && service_status(g, now).is_none())
            .map(|(a, _)| a.clone())
            .collect();
        self.store
            .write(|tx| {
                for a in &gone {
                    state::delete(tx, region, a)?;
                }
                state::save(tx, region, arn, Doc::Service(&s))
            })
            .map_err(internal)?;
        for a in &gone {
            r.services.remove(a);
        }
        r.services.insert(arn.to_string(), s);
        let service = self.service_json(r, arn, &r.services[arn], now);
        Ok(json!({"Service": service, "OperationId": op_id}))
    }

    pub fn create_service(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let b = body(input)?;
        let name = b.str("ServiceName")?;
        check_pattern("ServiceName", &name, NAME_PATTERN)?;
        let source = source(&required_object(&b, "SourceConfiguration")?)?;
        let instance = instance(b.object("InstanceConfiguration")?.as_ref(), None)?;
        let health = health(b.object("HealthCheckConfiguration")?.as_ref())?;
        let encryption = match b.object("EncryptionConfiguration")? {
            Some(e) => {
                let key = e.str("KmsKey")?;
                check_pattern("EncryptionConfiguration.KmsKey", &key, KMS_PATTERN)?;
                Some(json!({"KmsKey": key}))
            }
            None => None,
        };
        let tags = tags_in(&b)?;
        let scaling_ref = b.opt_str("AutoScalingConfigurationArn")?;
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let network = self.network(r, b.object("NetworkConfiguration")?.as_ref(), None)?;
        let observability =
            self.observability(r, region, b.object("ObservabilityConfiguration")?.as_ref())?;
        let auto_scaling_arn = self.auto_scaling(r, region, scaling_ref.as_deref())?;
        if r.services
            .values()
            .any(|s| s.name == name && service_status(s, now).is_some())
        {
            return Err(invalid(format!(
                "Service with the provided name already exists: {name}"
            )));
        }
        let id = hex32();
        let arn = self.arn(region, &format!("service/{name}/{id}"));
        let s = AppService {
            name,
            id,
            url: format!("{}.{region}.awsapprunner.com", super::alnum(10)),
            created: now,
            updated: now,
            source,
            instance,
            health,
            network,
            observability,
            encryption,
            auto_scaling_arn,
            tags,
            paused: false,
            busy_until: now,
            deleted_at: None,
            operations: vec![],
            domains: vec![],
        };
        self.commit_service(r, region, &arn, s, "CREATE_SERVICE", now)
    }

    pub fn describe_service(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let arn = body(input)?.str("ServiceArn")?;
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let s = Self::live_service(r, &arn, now)?;
        Ok(json!({"Service": self.service_json(r, &arn, s, now)}))
    }

    pub fn list_services(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let b = body(input)?;
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let mut live: Vec<(&String, &AppService)> = r
            .services
            .iter()
            .filter(|(_, s)| service_status(s, now).is_some())
            .collect();
        live.sort_by(|a, b| a.1.created.total_cmp(&b.1.created));
        let arns: Vec<String> = live.into_iter().map(|(a, _)| a.clone()).collect();
        let (items, token) = page(&b, &arns, 20)?;
        let list: Vec<Value> = items
            .iter()
            .map(|a| {
                let s = &r.services[a];
                json!({"ServiceName": s.name, "ServiceId": s.id, "ServiceArn": a,
                       "ServiceUrl": s.url, "CreatedAt": s.created, "UpdatedAt": s.updated,
                       "Status": service_status(s, now).unwrap_or("DELETED")})
            })
            .collect();
        Ok(with_token(json!({"ServiceSummaryList": list}), token))
    }

    /// A live service that is not in the middle of an operation, for a change.
    fn settled(r: &Region, arn: &str, now: f64, what: &str) -> Result<AppService, AwsError> {
        let s = Self::live_service(r, arn, now)?;
        match service_status(s, now) {
            Some("OPERATION_IN_PROGRESS") => Err(invalid_state(format!(
                "You can't {what} service {arn} while it is in OPERATION_IN_PROGRESS status."
            ))),
            _ => Ok(s.clone()),
        }
    }

    pub fn update_service(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let b = body(input)?;
        let arn = b.str("ServiceArn")?;
        let source = match b.object("SourceConfiguration")? {
            Some(s) => Some(source(&s)?),
            None => None,
        };
        let health = match b.object("HealthCheckConfiguration")? {
            Some(h) => Some(health(Some(&h))?),
            None => None,
        };
        let scaling_ref = b.opt_str("AutoScalingConfigurationArn")?;
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let mut s = Self::settled(r, &arn, now, "update")?;
        let instance = match b.object("InstanceConfiguration")? {
            Some(i) => Some(instance(Some(&i), Some(&s.instance))?),
            None => None,
        };
        let network = match b.object("NetworkConfiguration")? {
            Some(n) => Some(self.network(r, Some(&n), Some(&s.network))?),
            None => None,
        };
        let observability = match b.object("ObservabilityConfiguration")? {
            Some(o) => Some(self.observability(r, region, Some(&o))?),
            None => None,
        };
        let scaling = match scaling_ref {
            Some(reference) => Some(self.auto_scaling(r, region, Some(&reference))?),
            None => None,
        };
        if let Some(v) = source {
            s.source = v;
        }
        if let Some(v) = instance {
            s.instance = v;
        }
        if let Some(v) = health {
            s.health = v;
        }
        if let Some(v) = network {
            s.network = v;
        }
        if let Some(v) = observability {
            s.observability = v;
        }
        if let Some(v) = scaling {
            s.auto_scaling_arn = v;
        }
        self.commit_service(r, region, &arn, s, "UPDATE_SERVICE", now)
    }

    pub fn delete_service(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let arn = body(input)?.str("ServiceArn")?;
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let mut s = Self::settled(r, &arn, now, "delete")?;
        s.deleted_at = Some(now);
        self.commit_service(r, region, &arn, s, "DELETE_SERVICE", now)
    }

    pub fn pause_service(
        &self,
        region: &str,
        input: &Value,
        pause: bool,
    ) -> Result<Value, AwsError> {
        let arn = body(input)?.str("ServiceArn")?;
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let verb = if pause { "pause" } else { "resume" };
        let mut s = Self::settled(r, &arn, now, verb)?;
        let (want, kind) = if pause {
            ("RUNNING", "PAUSE_SERVICE")
        } else {
            ("PAUSED", "RESUME_SERVICE")
        };
        let status = service_status(&s, now).unwrap_or("DELETED");
        if status != want {
            return Err(invalid_state(format!(
                "You can't {verb} service {arn} while it is in {status} status."
            )));
        }
        s.paused = pause;
        self.commit_service(r, region, &arn, s, kind, now)
    }

    pub fn start_deployment(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let arn = body(input)?.str("ServiceArn")?;
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let s = Self::live_service(r, &arn, now)?.clone();
        let out = self.commit_service(r, region, &arn, s, "START_DEPLOYMENT", now)?;
        Ok(json!({"OperationId": out["OperationId"]}))
    }

    pub fn list_operations(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let b = body(input)?;
        let arn = b.str("ServiceArn")?;
        let now = now();
        let mut regions = self.lock();
        let r = self.region(&mut regions, region);
        let s = Self::live_service(r, &arn, now)?;
        let ops: Vec<&Operation> = s.operations.iter().rev().collect();
        let (items, token) = page(&b, &ops, 20)?;
        let list: Vec<Value> = items
            .iter()
            .map(|o| {
                let status = operation_status(o, now);
                let mut v = json!({"Id": o.id, "Type": o.kind, "Status": status,
                                   "TargetArn": arn, "StartedAt": o.started,
                                   "UpdatedAt": if status == "SUCCEEDED" { o.ends } else { o.started }});
                if status == "SUCCEEDED" {
                    v["EndedAt"] = json!(o.ends);
                }
                v
            })
            .collect();
        Ok(with_token(json!({"OperationSummaryList": list}), token))
    }
}
