//! Typed operations on state machines, versions, aliases, activities and tags, with AWS's
//! error codes and messages (as recorded in `../shared/aws-recordings/stepfunctions`).

use super::Sfn;
use super::asl::validate;
use super::state::{self, Activity, Alias, Machine, Revision, Version};
use cumulo_wire::AwsError;
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::bad_request(code, message)
}

pub fn validation(message: impl Into<String>) -> AwsError {
    err("ValidationException", message)
}

pub fn store_error(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(format!("cumulo: the store refused the change: {e}"))
}

pub fn machine_missing(arn: &str) -> AwsError {
    err(
        "StateMachineDoesNotExist",
        format!("State Machine Does Not Exist: '{arn}'"),
    )
}

pub fn not_found() -> AwsError {
    err(
        "ResourceNotFound",
        "Request references a resource that does not exist.",
    )
}

/// An ARN's parts after `arn:aws:states:<region>:<account>:`, or InvalidArn as AWS words it.
pub fn arn_parts<'a>(arn: &'a str, kind: &str) -> Result<(&'a str, Vec<&'a str>), AwsError> {
    let invalid = |why: &str| err("InvalidArn", format!("Invalid Arn: '{why}'"));
    if !arn.starts_with("arn:") {
        return Err(invalid(&format!("Invalid ARN prefix: {arn}")));
    }
    let parts: Vec<&str> = arn.split(':').collect();
    if parts.len() < 7 || parts[2] != "states" {
        return Err(invalid(&format!(
            "Resource type not valid in this context: {arn}"
        )));
    }
    if !kind.is_empty() && parts[5] != kind {
        return Err(invalid(&format!(
            "Resource type not valid in this context: {}",
            parts[5]
        )));
    }
    Ok((parts[3], parts[6..].to_vec()))
}

/// AWS's name rule for machines, activities and executions: 1-80 characters, none of
/// whitespace, `<>{}[]?*"#%\^|~`$&,;:/` or control characters.
pub fn check_name(name: &str) -> Result<(), AwsError> {
    let bad = name.is_empty()
        || name.chars().count() > 80
        || name
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || "<>{}[]?*\"#%\\^|~`$&,;:/".contains(c));
    if bad {
        return Err(err("InvalidName", format!("Invalid Name: '{name}'")));
    }
    Ok(())
}

pub fn now() -> f64 {
    super::asl::now()
}

fn check_definition(text: &str, express: bool) -> Result<(), AwsError> {
    match validate::check(text, express).first() {
        Some(d) => Err(err("InvalidDefinition", d.invalid_definition())),
        None => Ok(()),
    }
}

fn check_role(role: &str) -> Result<(), AwsError> {
    if !role.starts_with("arn:") {
        return Err(err(
            "InvalidArn",
            format!("Invalid Arn: 'Invalid ARN prefix: {role}'"),
        ));
    }
    Ok(())
}

/// The logging configuration as stored and reported (AWS's defaults filled in).
pub fn logging(given: Option<&Value>) -> Result<Value, AwsError> {
    let Some(g) = given else {
        return Ok(json!({"level": "OFF", "includeExecutionData": false}));
    };
    let level = g["level"].as_str().unwrap_or("OFF");
    if !["ALL", "ERROR", "FATAL", "OFF"].contains(&level) {
        return Err(validation(format!(
            "1 validation error detected: Value '{level}' at 'loggingConfiguration.level' failed to satisfy constraint: Member must satisfy enum value set: [ALL, ERROR, FATAL, OFF]"
        )));
    }
    let dests = g["destinations"].as_array().cloned().unwrap_or_default();
    if level != "OFF" && dests.len() != 1 {
        return Err(err(
            "InvalidLoggingConfiguration",
            "Invalid Logging Configuration: Must specify exactly one Log Destination.",
        ));
    }
    let mut out = json!({
        "level": level,
        "includeExecutionData": g["includeExecutionData"].as_bool().unwrap_or(false),
    });
    if !dests.is_empty() {
        out["destinations"] = Value::Array(dests);
    }
    Ok(out)
}

pub fn tracing(given: Option<&Value>) -> Value {
    json!({"enabled": given.and_then(|t| t["enabled"].as_bool()).unwrap_or(false)})
}

#[derive(Debug, Clone, Default)]
pub struct CreateMachineInput {
    pub name: String,
    pub definition: String,
    pub role_arn: String,
    pub kind: Option<String>,
    pub logging: Option<Value>,
    pub tracing: Option<Value>,
    pub tags: Vec<(String, String)>,
    pub publish: bool,
    pub version_description: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct UpdateMachineInput {
    pub definition: Option<String>,
    pub role_arn: Option<String>,
    pub logging: Option<Value>,
    pub tracing: Option<Value>,
    pub publish: bool,
    pub version_description: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct AliasInput {
    pub name: String,
    pub description: Option<String>,
    pub routing: Vec<(String, u64)>,
}

/// What Create/Update answer: the machine's ARN, the date, the version published (if any)
/// and the revision id.
pub struct Written {
    pub arn: String,
    pub date: f64,
    pub version_arn: Option<String>,
    pub revision_id: Option<String>,
}

/// What a state machine ARN (or a version's, or an alias's) names.
pub enum Target {
    Machine(Machine),
    Version(Machine, Version),
    Alias(Machine, Alias),
}

impl Sfn {
    fn persist(
        &self,
        f: impl FnOnce(&cumulo_store::rusqlite::Transaction<'_>) -> cumulo_store::rusqlite::Result<()>,
    ) -> Result<(), AwsError> {
        self.store.write(f).map_err(store_error)
    }

    pub fn create_state_machine(
        &self,
        region: &str,
        input: CreateMachineInput,
    ) -> Result<Written, AwsError> {
        check_name(&input.name)?;
        let kind = input.kind.clone().unwrap_or_else(|| "STANDARD".into());
        if kind != "STANDARD" && kind != "EXPRESS" {
            return Err(validation(format!(
                "1 validation error detected: Value '{kind}' at 'type' failed to satisfy constraint: Member must satisfy enum value set: [STANDARD, EXPRESS]"
            )));
        }
        if input.version_description.is_some() && !input.publish {
            return Err(validation(
                "Version description can only be set when publish is true",
            ));
        }
        check_definition(&input.definition, kind == "EXPRESS")?;
        check_role(&input.role_arn)?;
        let logging = logging(input.logging.as_ref())?;
        let tracing = tracing(input.tracing.as_ref());
        let arn = self.machine_arn(region, &input.name);
        let revision = Revision {
            definition: input.definition.clone(),
            role_arn: input.role_arn.clone(),
            logging,
            tracing,
            revision_id: None,
        };
        let mut st = self.lock();
        if let Some(m) = st.machines.get(&arn) {
            // An exact repeat is idempotent; anything else is a conflict.
            if m.revision == revision && m.kind == kind {
                return Ok(Written {
                    arn,
                    date: m.created,
                    version_arn: None,
                    revision_id: None,
                });
            }
            return Err(err(
                "StateMachineAlreadyExists",
                format!("State Machine Already Exists: '{arn}'"),
            ));
        }
        let created = now();
        let mut m = Machine {
            arn: arn.clone(),
            name: input.name.clone(),
            region: region.to_string(),
            kind,
            revision,
            description: None,
            created,
            updated: None,
            tags: input.tags.into_iter().collect(),
            versions: BTreeMap::new(),
            next_version: 1,
            aliases: BTreeMap::new(),
        };
        let version_arn = input
            .publish
            .then(|| publish(&mut m, input.version_description.clone(), created));
        self.persist(|tx| state::save_machine(tx, &m))?;
        st.machines.insert(arn.clone(), m);
        Ok(Written {
            arn,
            date: created,
            version_arn,
            revision_id: None,
        })
    }

    /// The machine, version or alias an ARN names.
    pub fn target(&self, arn: &str) -> Result<Target, AwsError> {
        let (_, rest) = arn_parts(arn, "stateMachine")?;
        let st = self.lock();
        let base = rest[..1].join(":");
        let machine_arn = format!(
            "{}:{base}",
            arn.splitn(7, ':').take(6).collect::<Vec<_>>().join(":")
        );
        let Some(m) = st.machines.get(&machine_arn) else {
            return Err(machine_missing(arn));
        };
        match rest.get(1) {
            None => Ok(Target::Machine(m.clone())),
            Some(q) => {
                if let Ok(n) = q.parse::<u64>() {
                    match m.versions.get(&n) {
                        Some(v) => Ok(Target::Version(m.clone(), v.clone())),
                        None => Err(machine_missing(arn)),
                    }
                } else {
                    match m.aliases.get(*q) {
                        Some(a) => Ok(Target::Alias(m.clone(), a.clone())),
                        None => Err(not_found()),
                    }
                }
            }
        }
    }

    pub fn machine(&self, arn: &str) -> Result<Machine, AwsError> {
        match self.target(arn)? {
            Target::Machine(m) => Ok(m),
            _ => Err(machine_missing(arn)),
        }
    }

    pub fn update_state_machine(
        &self,
        arn: &str,
        input: UpdateMachineInput,
    ) -> Result<Written, AwsError> {
        if input.definition.is_none()
            && input.role_arn.is_none()
            && input.logging.is_none()
            && input.tracing.is_none()
        {
            return Err(err(
                "MissingRequiredParameter",
                "Either the definition, the role ARN, the LoggingConfiguration, or the TracingConfiguration must be specified",
            ));
        }
        if input.version_description.is_some() && !input.publish {
            return Err(validation(
                "Version description can only be set when publish is true",
            ));
        }
        let current = self.machine(arn)?;
        let mut m = current.clone();
        if let Some(d) = &input.definition {
            check_definition(d, m.kind == "EXPRESS")?;
            m.revision.definition = d.clone();
        }
        if let Some(r) = &input.role_arn {
            check_role(r)?;
            m.revision.role_arn = r.clone();
        }
        if let Some(l) = &input.logging {
            m.revision.logging = logging(Some(l))?;
        }
        if let Some(t) = &input.tracing {
            m.revision.tracing = tracing(Some(t));
        }
        let date = now();
        let changed = Revision {
            revision_id: None,
            ..m.revision.clone()
        } != Revision {
            revision_id: None,
            ..current.revision.clone()
        };
        if changed || m.revision.revision_id.is_none() {
            m.revision.revision_id = Some(uuid::Uuid::new_v4().to_string());
        }
        m.updated = Some(date);
        let version_arn = input
            .publish
            .then(|| publish(&mut m, input.version_description.clone(), date));
        let mut st = self.lock();
        if !st.machines.contains_key(&m.arn) {
            return Err(machine_missing(arn));
        }
        self.persist(|tx| state::save_machine(tx, &m))?;
        let out = Written {
            arn: m.arn.clone(),
            date,
            version_arn,
            revision_id: m.revision.revision_id.clone(),
        };
        st.machines.insert(m.arn.clone(), m);
        Ok(out)
    }

    /// DeleteStateMachine: succeeds whether or not it exists (as AWS answers); executions
    /// already running keep their definition and run to their end.
    pub fn delete_state_machine(&self, arn: &str) -> Result<(), AwsError> {
        arn_parts(arn, "stateMachine")?;
        let mut st = self.lock();
        if st.machines.contains_key(arn) {
            self.persist(|tx| state::delete_machine(tx, arn))?;
            st.machines.remove(arn);
        }
        Ok(())
    }

    pub fn list_state_machines(&self, region: &str) -> Vec<Machine> {
        let st = self.lock();
        let mut v: Vec<Machine> = st
            .machines
            .values()
            .filter(|m| m.region == region)
            .cloned()
            .collect();
        v.sort_by(|a, b| a.created.total_cmp(&b.created));
        v
    }

    pub fn publish_state_machine_version(
        &self,
        arn: &str,
        revision_id: Option<&str>,
        description: Option<String>,
    ) -> Result<(String, f64), AwsError> {
        let mut m = self.machine(arn)?;
        let current = super::provider::revision_of(&m.revision.revision_id);
        if let Some(r) = revision_id
            && r != current
        {
            return Err(err(
                "ConflictException",
                format!(
                    "Failed to publish the State Machine version for revision {r}. The current State Machine revision is {current}."
                ),
            ));
        }
        // Publishing the revision the latest version already holds answers that version.
        if let Some((_, v)) = m.versions.iter().next_back()
            && v.revision == m.revision
        {
            return Ok((format!("{}:{}", m.arn, v.number), v.created));
        }
        let date = now();
        let version_arn = publish(&mut m, description, date);
        let mut st = self.lock();
        self.persist(|tx| state::save_machine(tx, &m))?;
        st.machines.insert(m.arn.clone(), m);
        Ok((version_arn, date))
    }

    pub fn delete_state_machine_version(&self, version_arn: &str) -> Result<(), AwsError> {
        let (_, rest) = arn_parts(version_arn, "stateMachine")?;
        let Some(Ok(n)) = rest.get(1).map(|q| q.parse::<u64>()) else {
            return Err(validation(format!("Invalid version ARN: {version_arn}")));
        };
        let Ok(Target::Version(mut m, _)) = self.target(version_arn) else {
            return Ok(());
        };
        let users: Vec<String> = m
            .aliases
            .values()
            .filter(|a| a.routing.iter().any(|(v, _)| v == version_arn))
            .map(|a| a.name.clone())
            .collect();
        if !users.is_empty() {
            return Err(err(
                "ConflictException",
                format!(
                    "Version to be deleted must not be referenced by an alias. Current list of aliases referencing this version: [{}]",
                    users.join(", ")
                ),
            ));
        }
        m.versions.remove(&n);
        let mut st = self.lock();
        self.persist(|tx| state::save_machine(tx, &m))?;
        st.machines.insert(m.arn.clone(), m);
        Ok(())
    }

    fn check_routing(&self, machine_arn: &str, routing: &[(String, u64)]) -> Result<(), AwsError> {
        let arns: Vec<&str> = routing.iter().map(|(a, _)| a.as_str()).collect();
        if routing.is_empty() || routing.len() > 2 {
            return Err(validation(format!(
                "1 validation error detected: Value at 'routingConfiguration' failed to satisfy constraint: Member must have length between 1 and 2 (received {})",
                routing.len()
            )));
        }
        for (_, w) in routing {
            if *w > 100 {
                return Err(validation(format!(
                    "1 validation error detected: Value '{w}' at 'routingConfiguration.1.member.weight' failed to satisfy constraint: Member must have value less than or equal to 100"
                )));
            }
        }
        let versions = arns.iter().all(|a| {
            a.strip_prefix(machine_arn)
                .and_then(|r| r.strip_prefix(':'))
                .is_some_and(|n| n.parse::<u64>().is_ok())
        });
        if !versions {
            return Err(validation(format!(
                "Routing configuration must contain state machine version ARNs. Received: [{}]",
                arns.join(", ")
            )));
        }
        if arns.len() == 2 && arns[0] == arns[1] {
            return Err(validation(format!(
                "Routing configuration must contain distinct state machine version ARNs. Received: [{}]",
                arns.join(", ")
            )));
        }
        let sum: u64 = routing.iter().map(|(_, w)| w).sum();
        if sum != 100 {
            return Err(validation(format!(
                "Sum of routing configuration weights must equal 100. Received: [{}]",
                routing
                    .iter()
                    .map(|(_, w)| w.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        for a in arns {
            if !matches!(self.target(a), Ok(Target::Version(..))) {
                return Err(not_found());
            }
        }
        Ok(())
    }

    pub fn create_state_machine_alias(&self, input: AliasInput) -> Result<(String, f64), AwsError> {
        let name = &input.name;
        let name_ok = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
            && name
                .chars()
                .any(|c| c.is_ascii_alphabetic() || "_-.".contains(c));
        if name.len() > 80 {
            return Err(validation(format!(
                "1 validation error detected: Value '{name}' at 'name' failed to satisfy constraint: Member must have length less than or equal to 80"
            )));
        }
        if !name_ok {
            return Err(validation(format!(
                "1 validation error detected: Value '{name}' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: ^(?=.*[a-zA-Z_\\-\\.])[a-zA-Z0-9_\\-\\.]+$"
            )));
        }
        let first = input
            .routing
            .first()
            .map(|(a, _)| a.clone())
            .unwrap_or_default();
        let machine_arn = first
            .rsplit_once(':')
            .map_or(first.clone(), |(m, _)| m.to_string());
        let mut m = self.machine(&machine_arn).map_err(|e| {
            if e.code == "StateMachineDoesNotExist" {
                validation(format!(
                    "Routing configuration must contain state machine version ARNs. Received: [{first}]"
                ))
            } else {
                e
            }
        })?;
        self.check_routing(&m.arn, &input.routing)?;
        let arn = format!("{}:{name}", m.arn);
        if let Some(a) = m.aliases.get(name) {
            if a.routing == input.routing && a.description == input.description {
                return Ok((arn, a.created));
            }
            return Err(err(
                "ConflictException",
                "Failed to create alias because an alias with the same name and a different routing configuration already exists.",
            ));
        }
        let created = now();
        m.aliases.insert(
            name.clone(),
            Alias {
                name: name.clone(),
                description: input.description,
                routing: input.routing,
                created,
                updated: None,
            },
        );
        let mut st = self.lock();
        self.persist(|tx| state::save_machine(tx, &m))?;
        st.machines.insert(m.arn.clone(), m);
        Ok((arn, created))
    }

    pub fn update_state_machine_alias(
        &self,
        alias_arn: &str,
        description: Option<String>,
        routing: Option<Vec<(String, u64)>>,
    ) -> Result<f64, AwsError> {
        let Target::Alias(mut m, mut a) = self.target(alias_arn).map_err(|e| {
            if e.code == "StateMachineDoesNotExist" {
                not_found()
            } else {
                e
            }
        })?
        else {
            return Err(not_found());
        };
        if let Some(r) = routing {
            self.check_routing(&m.arn, &r)?;
            a.routing = r;
        }
        if description.is_some() {
            a.description = description;
        }
        let date = now();
        a.updated = Some(date);
        m.aliases.insert(a.name.clone(), a);
        let mut st = self.lock();
        self.persist(|tx| state::save_machine(tx, &m))?;
        st.machines.insert(m.arn.clone(), m);
        Ok(date)
    }

    pub fn delete_state_machine_alias(&self, alias_arn: &str) -> Result<(), AwsError> {
        arn_parts(alias_arn, "stateMachine")?;
        let Ok(Target::Alias(mut m, a)) = self.target(alias_arn) else {
            return Ok(());
        };
        m.aliases.remove(&a.name);
        let mut st = self.lock();
        self.persist(|tx| state::save_machine(tx, &m))?;
        st.machines.insert(m.arn.clone(), m);
        Ok(())
    }

    pub fn create_activity(
        &self,
        region: &str,
        name: &str,
        tags: Vec<(String, String)>,
    ) -> Result<(String, f64), AwsError> {
        check_name(name)?;
        let arn = self.activity_arn(region, name);
        let mut st = self.lock();
        if let Some(a) = st.activities.get(&arn) {
            return Ok((arn, a.created));
        }
        let a = Activity {
            arn: arn.clone(),
            name: name.to_string(),
            created: now(),
            tags: tags.into_iter().collect(),
        };
        self.persist(|tx| state::save_activity(tx, &a))?;
        let created = a.created;
        st.activities.insert(arn.clone(), a);
        Ok((arn, created))
    }

    pub fn activity(&self, arn: &str) -> Result<Activity, AwsError> {
        arn_parts(arn, "activity")?;
        self.lock().activities.get(arn).cloned().ok_or_else(|| {
            err(
                "ActivityDoesNotExist",
                format!("Activity Does Not Exist: '{arn}'"),
            )
        })
    }

    pub fn delete_activity(&self, arn: &str) -> Result<(), AwsError> {
        arn_parts(arn, "activity")?;
        let mut st = self.lock();
        if st.activities.contains_key(arn) {
            self.persist(|tx| state::delete_activity(tx, arn))?;
            st.activities.remove(arn);
        }
        Ok(())
    }

    pub fn list_activities(&self, region: &str) -> Vec<Activity> {
        let mut v: Vec<Activity> = self
            .lock()
            .activities
            .values()
            .filter(|a| a.arn.split(':').nth(3) == Some(region))
            .cloned()
            .collect();
        v.sort_by(|a, b| a.created.total_cmp(&b.created));
        v
    }

    /// Tags of a machine or an activity (versions and aliases have none).
    pub fn tags(&self, arn: &str) -> Result<BTreeMap<String, String>, AwsError> {
        let st = self.lock();
        if let Some(m) = st.machines.get(arn) {
            return Ok(m.tags.clone());
        }
        if let Some(a) = st.activities.get(arn) {
            return Ok(a.tags.clone());
        }
        Err(err(
            "ResourceNotFound",
            format!("Resource not found: '{arn}'"),
        ))
    }

    pub fn change_tags(
        &self,
        arn: &str,
        add: &[(String, String)],
        remove: &[String],
    ) -> Result<(), AwsError> {
        let _ = self.tags(arn)?;
        let mut st = self.lock();
        if let Some(m) = st.machines.get(arn) {
            let mut m = m.clone();
            m.tags.extend(add.iter().cloned());
            for k in remove {
                m.tags.remove(k);
            }
            self.persist(|tx| state::save_machine(tx, &m))?;
            st.machines.insert(arn.to_string(), m);
        } else if let Some(a) = st.activities.get(arn) {
            let mut a = a.clone();
            a.tags.extend(add.iter().cloned());
            for k in remove {
                a.tags.remove(k);
            }
            self.persist(|tx| state::save_activity(tx, &a))?;
            st.activities.insert(arn.to_string(), a);
        }
        Ok(())
    }
}

/// Adds a version holding the machine's current revision; its ARN.
fn publish(m: &mut Machine, description: Option<String>, created: f64) -> String {
    let n = m.next_version;
    m.next_version += 1;
    m.versions.insert(
        n,
        Version {
            number: n,
            revision: m.revision.clone(),
            description,
            created,
        },
    );
    format!("{}:{n}", m.arn)
}
