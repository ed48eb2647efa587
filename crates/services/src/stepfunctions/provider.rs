//! CloudFormation providers over Step Functions' typed operations:
//! AWS::StepFunctions::StateMachine (Definition / DefinitionString / DefinitionS3Location with
//! DefinitionSubstitutions; Ref the ARN; GetAtt Arn, Name, StateMachineRevisionId),
//! AWS::StepFunctions::Activity (Ref the ARN; GetAtt Arn, Name),
//! AWS::StepFunctions::StateMachineVersion and AWS::StepFunctions::StateMachineAlias (Ref and
//! GetAtt Arn).

use super::StepFunctionsService;
use super::ops::{AliasInput, CreateMachineInput, Target, UpdateMachineInput};
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{
    ProviderServices, already_exists, check_known, failed, given_or_generated_name, json_type,
    list, object, required, scalar, tags,
};
use crate::s3::{Conditions, S3Service};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::sync::Arc;

const MACHINE: &str = "AWS::StepFunctions::StateMachine";
const ACTIVITY: &str = "AWS::StepFunctions::Activity";
const VERSION: &str = "AWS::StepFunctions::StateMachineVersion";
const ALIAS: &str = "AWS::StepFunctions::StateMachineAlias";
const SERVICE: &str = "Sfn";

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let sfn = s.stepfunctions.clone();
    r.register(
        MACHINE,
        Arc::new(MachineProvider {
            sfn: sfn.clone(),
            s3: s.s3.clone(),
        }),
    );
    r.register(ACTIVITY, Arc::new(ActivityProvider { sfn: sfn.clone() }));
    r.register(VERSION, Arc::new(VersionProvider { sfn: sfn.clone() }));
    r.register(ALIAS, Arc::new(AliasProvider { sfn }));
}

fn bad(key: &str, v: &Value, want: &str) -> ProviderError {
    ProviderError::Failed(format!(
        "Properties validation failed for resource with message: #/{key}: expected type: {want}, found: {}",
        json_type(v)
    ))
}

fn sub<'a>(
    props: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a Map<String, Value>>, ProviderError> {
    match props.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(v) => Err(bad(key, v, "JSONObject")),
    }
}

fn gone(e: &AwsError) -> bool {
    matches!(
        e.code.as_str(),
        "StateMachineDoesNotExist" | "ActivityDoesNotExist" | "ResourceNotFound"
    )
}

/// `${name}` replaced by each substitution's value, as CloudFormation does before it sends the
/// definition.
fn substitute(text: &str, subs: Option<&Map<String, Value>>) -> Result<String, ProviderError> {
    let mut out = text.to_string();
    for (k, v) in subs.into_iter().flatten() {
        let value = match v {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            v => return Err(bad(&format!("DefinitionSubstitutions/{k}"), v, "String")),
        };
        out = out.replace(&format!("${{{k}}}"), &value);
    }
    Ok(out)
}

struct MachineProvider {
    sfn: Arc<StepFunctionsService>,
    s3: Arc<S3Service>,
}

/// What a StateMachine's properties ask for.
struct MachineSpec {
    definition: String,
    role_arn: String,
    logging: Option<Value>,
    tracing: Option<Value>,
    tags: Vec<(String, String)>,
}

/// CloudFormation's LoggingConfiguration in the API's member names.
fn logging_api(l: &Map<String, Value>) -> Value {
    let mut v = json!({});
    if let Some(level) = l.get("Level") {
        v["level"] = level.clone();
    }
    if let Some(i) = l.get("IncludeExecutionData") {
        v["includeExecutionData"] = json!(i == &json!(true) || i == &json!("true"));
    }
    if let Some(Value::Array(d)) = l.get("Destinations") {
        let dests: Vec<Value> = d
            .iter()
            .map(|x| {
                json!({"cloudWatchLogsLogGroup": {
                    "logGroupArn": x["CloudWatchLogsLogGroup"]["LogGroupArn"]
                }})
            })
            .collect();
        v["destinations"] = Value::Array(dests);
    }
    v
}

impl MachineProvider {
    fn spec(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Result<MachineSpec, ProviderError> {
        check_known(
            MACHINE,
            props,
            &[
                "Definition",
                "DefinitionString",
                "DefinitionS3Location",
                "DefinitionSubstitutions",
                "LoggingConfiguration",
                "RoleArn",
                "StateMachineName",
                "StateMachineType",
                "Tags",
                "TracingConfiguration",
            ],
            &[(
                "EncryptionConfiguration",
                "cumulo's Step Functions does not emulate customer-managed KMS encryption of state machines",
            )],
        )?;
        let given = ["Definition", "DefinitionString", "DefinitionS3Location"]
            .iter()
            .filter(|k| props.get(**k).is_some_and(|v| !v.is_null()))
            .count();
        if given != 1 {
            return Err(ProviderError::Failed(
                "Properties validation failed for resource with message: #: only 1 subschema matches out of 3 required: exactly one of Definition, DefinitionString or DefinitionS3Location"
                    .into(),
            ));
        }
        let text = if let Some(d) = sub(props, "Definition")? {
            Value::Object(d.clone()).to_string()
        } else if let Some(s) = scalar(props, "DefinitionString")? {
            s
        } else {
            let loc = sub(props, "DefinitionS3Location")?
                .cloned()
                .unwrap_or_default();
            let bucket = required(&loc, "Bucket")?;
            let key = required(&loc, "Key")?;
            let version = scalar(&loc, "Version")?;
            let got = self
                .s3
                .get_object(
                    &bucket,
                    &key,
                    version.as_deref(),
                    None,
                    &Conditions::default(),
                )
                .map_err(|e| failed(ctx, "S3", e))?
                .map_err(|_| ProviderError::Failed("precondition failed".into()))?;
            let raw = String::from_utf8_lossy(&got.body).to_string();
            if serde_json::from_str::<Value>(&raw).is_err() {
                return Err(ProviderError::Failed(format!(
                    "cumulo reads the DefinitionS3Location object s3://{bucket}/{key} only as JSON, and it is not JSON"
                )));
            }
            raw
        };
        let definition = substitute(&text, sub(props, "DefinitionSubstitutions")?)?;
        let mut t = tags(ctx, props)?;
        t.extend(system_tags(ctx));
        Ok(MachineSpec {
            definition,
            role_arn: required(props, "RoleArn")?,
            logging: sub(props, "LoggingConfiguration")?.map(logging_api),
            tracing: sub(props, "TracingConfiguration")?
                .map(|t| json!({"enabled": t.get("Enabled") == Some(&json!(true)) || t.get("Enabled") == Some(&json!("true"))})),
            tags: t,
        })
    }

    fn outcome(&self, arn: &str) -> Result<ProviderOutcome, AwsError> {
        let m = self.sfn.machine(arn)?;
        Ok(ProviderOutcome {
            physical_id: arn.to_string(),
            attributes: Map::from_iter([
                ("Arn".to_string(), json!(m.arn)),
                ("Name".to_string(), json!(m.name)),
                (
                    "StateMachineRevisionId".to_string(),
                    json!(revision_of(&m.revision.revision_id)),
                ),
            ]),
            ..Default::default()
        })
    }
}

/// The revision id CloudFormation reports: the machine's, or `INITIAL` before any update.
pub fn revision_of(id: &Option<String>) -> String {
    id.clone().unwrap_or_else(|| "INITIAL".into())
}

#[async_trait::async_trait]
impl Provider for MachineProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn", "Name", "StateMachineRevisionId"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(MACHINE, properties)?;
        let s = self.spec(ctx, &props)?;
        let name = given_or_generated_name(ctx, &props, "StateMachineName", 80)?;
        let input = CreateMachineInput {
            name: name.clone(),
            definition: s.definition,
            role_arn: s.role_arn,
            kind: scalar(&props, "StateMachineType")?,
            logging: s.logging,
            tracing: s.tracing,
            tags: s.tags,
            publish: false,
            version_description: None,
        };
        let arn = self.sfn.machine_arn(&ctx.region, &name);
        if self.sfn.machine(&arn).is_ok() {
            return Err(already_exists(ctx, &name));
        }
        self.sfn
            .create_state_machine(&ctx.region, input)
            .map_err(|e| failed(ctx, SERVICE, e))?;
        self.outcome(&arn).map_err(|e| failed(ctx, SERVICE, e))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(MACHINE, new)?;
        let s = self.spec(ctx, &props)?;
        let fail = |e: AwsError| failed(ctx, SERVICE, e);
        let current = self.sfn.machine(physical_id).map_err(fail)?;
        let input = UpdateMachineInput {
            definition: Some(s.definition),
            role_arn: Some(s.role_arn),
            logging: Some(s.logging.unwrap_or_else(|| json!({"level": "OFF"}))),
            tracing: Some(s.tracing.unwrap_or_else(|| json!({"enabled": false}))),
            publish: false,
            version_description: None,
        };
        self.sfn
            .update_state_machine(physical_id, input)
            .map_err(fail)?;
        let change = TagChange::between(&current.tags, &s.tags);
        self.sfn
            .change_tags(physical_id, &change.set, &change.remove)
            .map_err(fail)?;
        self.outcome(physical_id).map_err(fail)
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<(), ProviderError> {
        match self.sfn.machine(physical_id) {
            Err(e) if gone(&e) => return Err(ProviderError::NotFound(physical_id.into())),
            _ => {}
        }
        self.sfn
            .delete_state_machine(physical_id)
            .map_err(|e| failed(ctx, SERVICE, e))
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let m = match self.sfn.machine(physical_id) {
            Ok(m) => m,
            Err(e) if gone(&e) => return Ok(None),
            Err(e) => return Err(failed(ctx, SERVICE, e)),
        };
        let mut p = Map::new();
        p.insert("StateMachineName".into(), json!(m.name));
        p.insert("StateMachineType".into(), json!(m.kind));
        p.insert("RoleArn".into(), json!(m.revision.role_arn));
        p.insert("DefinitionString".into(), json!(m.revision.definition));
        Ok(Some(Observed {
            properties: p,
            attributes: self
                .outcome(physical_id)
                .map_err(|e| failed(ctx, SERVICE, e))?
                .attributes,
        }))
    }

    fn created_identity(&self, ctx: &ProviderContext, properties: &Value) -> Option<String> {
        let props = object(MACHINE, properties).ok()?;
        let name = given_or_generated_name(ctx, &props, "StateMachineName", 80).ok()?;
        Some(self.sfn.machine_arn(&ctx.region, &name))
    }
}

struct ActivityProvider {
    sfn: Arc<StepFunctionsService>,
}

fn activity_outcome(arn: &str) -> ProviderOutcome {
    ProviderOutcome {
        physical_id: arn.to_string(),
        attributes: Map::from_iter([
            ("Arn".to_string(), json!(arn)),
            (
                "Name".to_string(),
                json!(arn.rsplit(':').next().unwrap_or("")),
            ),
        ]),
        ..Default::default()
    }
}

#[async_trait::async_trait]
impl Provider for ActivityProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn", "Name"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(ACTIVITY, properties)?;
        check_known(
            ACTIVITY,
            &props,
            &["Name", "Tags"],
            &[(
                "EncryptionConfiguration",
                "cumulo's Step Functions does not emulate customer-managed KMS encryption of activities",
            )],
        )?;
        let name = required(&props, "Name")?;
        let arn = self.sfn.activity_arn(&ctx.region, &name);
        if self.sfn.activity(&arn).is_ok() {
            return Err(already_exists(ctx, &name));
        }
        let mut t = tags(ctx, &props)?;
        t.extend(system_tags(ctx));
        self.sfn
            .create_activity(&ctx.region, &name, t)
            .map_err(|e| failed(ctx, SERVICE, e))?;
        Ok(activity_outcome(&arn))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(ACTIVITY, new)?;
        let fail = |e: AwsError| failed(ctx, SERVICE, e);
        let current = self.sfn.activity(physical_id).map_err(fail)?;
        let wanted = tags(ctx, &props)?;
        let change = TagChange::between(&current.tags, &wanted);
        self.sfn
            .change_tags(physical_id, &change.set, &change.remove)
            .map_err(fail)?;
        Ok(activity_outcome(physical_id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<(), ProviderError> {
        match self.sfn.activity(physical_id) {
            Err(e) if gone(&e) => Err(ProviderError::NotFound(physical_id.into())),
            _ => self
                .sfn
                .delete_activity(physical_id)
                .map_err(|e| failed(ctx, SERVICE, e)),
        }
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        match self.sfn.activity(physical_id) {
            Ok(a) => Ok(Some(Observed {
                properties: Map::from_iter([("Name".to_string(), json!(a.name))]),
                attributes: activity_outcome(physical_id).attributes,
            })),
            Err(e) if gone(&e) => Ok(None),
            Err(e) => Err(failed(ctx, SERVICE, e)),
        }
    }
}

fn arn_outcome(arn: &str) -> ProviderOutcome {
    ProviderOutcome {
        physical_id: arn.to_string(),
        attributes: Map::from_iter([("Arn".to_string(), json!(arn))]),
        ..Default::default()
    }
}

struct VersionProvider {
    sfn: Arc<StepFunctionsService>,
}

#[async_trait::async_trait]
impl Provider for VersionProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn"])
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
            &["StateMachineArn", "StateMachineRevisionId", "Description"],
            &[],
        )?;
        let machine = required(&props, "StateMachineArn")?;
        let revision = scalar(&props, "StateMachineRevisionId")?;
        let (arn, _) = self
            .sfn
            .publish_state_machine_version(
                &machine,
                revision.as_deref(),
                scalar(&props, "Description")?,
            )
            .map_err(|e| failed(ctx, SERVICE, e))?;
        Ok(arn_outcome(&arn))
    }

    async fn update(
        &self,
        _ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        _new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        // Every property is createOnly: the engine replaces a version rather than update it.
        Ok(arn_outcome(physical_id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<(), ProviderError> {
        match self.sfn.target(physical_id) {
            Ok(Target::Version(..)) => self
                .sfn
                .delete_state_machine_version(physical_id)
                .map_err(|e| failed(ctx, SERVICE, e)),
            _ => Err(ProviderError::NotFound(physical_id.into())),
        }
    }

    async fn read(
        &self,
        _ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        Ok(match self.sfn.target(physical_id) {
            Ok(Target::Version(m, v)) => Some(Observed {
                properties: Map::from_iter([
                    ("StateMachineArn".to_string(), json!(m.arn)),
                    (
                        "StateMachineRevisionId".to_string(),
                        json!(revision_of(&v.revision.revision_id)),
                    ),
                ]),
                attributes: arn_outcome(physical_id).attributes,
            }),
            _ => None,
        })
    }
}

struct AliasProvider {
    sfn: Arc<StepFunctionsService>,
}

fn alias_routing(props: &Map<String, Value>) -> Result<Vec<(String, u64)>, ProviderError> {
    list(props, "RoutingConfiguration")?
        .iter()
        .map(|r| {
            let o = r
                .as_object()
                .ok_or_else(|| bad("RoutingConfiguration", r, "JSONObject"))?;
            let w = required(o, "Weight")?;
            let weight = w
                .parse::<u64>()
                .map_err(|_| bad("RoutingConfiguration/Weight", &o["Weight"], "Integer"))?;
            Ok((required(o, "StateMachineVersionArn")?, weight))
        })
        .collect()
}

fn alias_check(props: &Map<String, Value>) -> Result<(), ProviderError> {
    check_known(
        ALIAS,
        props,
        &["Name", "Description", "RoutingConfiguration"],
        &[(
            "DeploymentPreference",
            "cumulo does not run gradual alias deployments (CodeDeploy-style traffic shifting); give RoutingConfiguration",
        )],
    )
}

#[async_trait::async_trait]
impl Provider for AliasProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(ALIAS, properties)?;
        alias_check(&props)?;
        let input = AliasInput {
            name: given_or_generated_name(ctx, &props, "Name", 80)?,
            description: scalar(&props, "Description")?,
            routing: alias_routing(&props)?,
        };
        let (arn, _) = self
            .sfn
            .create_state_machine_alias(input)
            .map_err(|e| failed(ctx, SERVICE, e))?;
        Ok(arn_outcome(&arn))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(ALIAS, new)?;
        alias_check(&props)?;
        self.sfn
            .update_state_machine_alias(
                physical_id,
                Some(scalar(&props, "Description")?.unwrap_or_default()),
                Some(alias_routing(&props)?),
            )
            .map_err(|e| failed(ctx, SERVICE, e))?;
        Ok(arn_outcome(physical_id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<(), ProviderError> {
        match self.sfn.target(physical_id) {
            Ok(Target::Alias(..)) => self
                .sfn
                .delete_state_machine_alias(physical_id)
                .map_err(|e| failed(ctx, SERVICE, e)),
            _ => Err(ProviderError::NotFound(physical_id.into())),
        }
    }

    async fn read(
        &self,
        _ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        Ok(match self.sfn.target(physical_id) {
            Ok(Target::Alias(_, a)) => Some(Observed {
                properties: Map::from_iter([("Name".to_string(), json!(a.name))]),
                attributes: arn_outcome(physical_id).attributes,
            }),
            _ => None,
        })
    }
}
