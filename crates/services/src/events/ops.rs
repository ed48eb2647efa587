//! Typed operations on event buses, rules, targets and tags.

use super::EventsService;
use super::pattern::Pattern;
use super::state::{self, Bus, DEFAULT_BUS, LogConfig, Rule, Target};
use crate::providers::system_tags::{RESERVED_KEY, first_reserved};
use crate::schedule::Schedule;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as TOKEN_B64;
use cumulo_wire::AwsError;
use std::collections::BTreeMap;

const MAX_TARGETS: usize = 5;
const RULE_STATES: &[&str] = &[
    "ENABLED",
    "DISABLED",
    "ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS",
];

pub fn validation(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("ValidationException", message)
}

pub fn not_found(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("ResourceNotFoundException", message)
}

fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(e.to_string())
}

pub fn bus_not_found(bus: &str) -> AwsError {
    not_found(format!("Event bus {bus} does not exist."))
}

pub fn rule_not_found(name: &str, bus: &str) -> AwsError {
    not_found(format!("Rule {name} does not exist on EventBus {bus}."))
}

pub use crate::schedule::now_ms;

fn now_s() -> f64 {
    now_ms() as f64 / 1000.0
}

/// The bus name from `EventBusName` (a name or an ARN); absent means `default`.
pub fn bus_name(given: Option<&str>) -> String {
    match given {
        None | Some("") => DEFAULT_BUS.to_string(),
        Some(s) => match s.strip_prefix("arn:") {
            Some(_) => s
                .split_once(":event-bus/")
                .map_or(s, |(_, n)| n)
                .to_string(),
            None => s.to_string(),
        },
    }
}

fn check_rule_name(name: &str) -> Result<(), AwsError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-_".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(validation(format!(
            "1 validation error detected: Value '{name}' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\.\\-_A-Za-z0-9]+"
        )))
    }
}

fn check_bus_name(name: &str) -> Result<(), AwsError> {
    let ok = !name.is_empty()
        && name.len() <= 256
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/.-_".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(validation(format!(
            "1 validation error detected: Value '{name}' at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: [/\\.\\-_A-Za-z0-9]+"
        )))
    }
}

pub fn parse_pattern(text: &str) -> Result<Pattern, AwsError> {
    Pattern::parse(text).map_err(|e| AwsError::bad_request("InvalidEventPatternException", e.0))
}

fn encode_token(s: &str) -> String {
    TOKEN_B64.encode(s)
}

fn decode_token(t: &str) -> Result<String, AwsError> {
    TOKEN_B64
        .decode(t)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| validation("The nextToken provided is invalid."))
}

fn limit(given: Option<i64>) -> Result<usize, AwsError> {
    let n = given.unwrap_or(100);
    if !(1..=100).contains(&n) {
        return Err(validation(format!(
            "1 validation error detected: Value '{n}' at 'limit' failed to satisfy constraint: Member must have value between 1 and 100"
        )));
    }
    Ok(n as usize)
}

/// Input of `PutRule` (create or replace).
#[derive(Debug, Clone, Default)]
pub struct PutRuleInput {
    pub name: String,
    pub bus: Option<String>,
    pub event_pattern: Option<String>,
    pub schedule: Option<String>,
    pub state: Option<String>,
    pub description: Option<String>,
    pub role_arn: Option<String>,
    /// The caller's tags (`aws:` keys refused).
    pub tags: Vec<(String, String)>,
    /// CloudFormation's `aws:cloudformation:*` tags, which only a provider sets (the wire
    /// adapter leaves this empty).
    pub system_tags: Vec<(String, String)>,
}

/// What CreateEventBus and UpdateEventBus set on a bus (an update replaces them all).
#[derive(Debug, Clone, Default)]
pub struct BusSettings {
    pub description: Option<String>,
    pub kms_key: Option<String>,
    pub dead_letter_arn: Option<String>,
    pub log_config: Option<LogConfig>,
}

impl BusSettings {
    fn check(&self) -> Result<(), AwsError> {
        let Some(c) = &self.log_config else {
            return Ok(());
        };
        let enum_check = |v: &Option<String>, member: &str, set: &[&str]| match v {
            Some(x) if !set.contains(&x.as_str()) => Err(validation(format!(
                "1 validation error detected: Value '{x}' at '{member}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
                set.join(", ")
            ))),
            _ => Ok(()),
        };
        enum_check(
            &c.include_detail,
            "logConfig.includeDetail",
            &["NONE", "FULL"],
        )?;
        enum_check(
            &c.level,
            "logConfig.level",
            &["OFF", "ERROR", "INFO", "TRACE"],
        )
    }

    fn apply(self, bus: &mut Bus) {
        bus.description = self.description;
        bus.kms_key = self.kms_key;
        bus.dead_letter_arn = self.dead_letter_arn;
        bus.log_config = self.log_config;
    }
}

/// Input of `CreateEventBus`.
#[derive(Debug, Clone, Default)]
pub struct CreateEventBusInput {
    pub name: String,
    pub settings: BusSettings,
    /// The caller's tags (`aws:` keys refused).
    pub tags: Vec<(String, String)>,
    /// CloudFormation's own tags, set by its provider only.
    pub system_tags: Vec<(String, String)>,
}

/// Refuses tags a user gives in the `aws:` namespace, in EventBridge's error code (the wording:
/// see [`RESERVED_KEY`]).
fn refuse_reserved(tags: &[(String, String)]) -> Result<(), AwsError> {
    match first_reserved(tags.iter().map(|(k, _)| k)) {
        Some(_) => Err(validation(RESERVED_KEY)),
        None => Ok(()),
    }
}

/// One target PutTargets or RemoveTargets could not apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetFailure {
    pub target_id: String,
    pub code: String,
    pub message: String,
}

/// Which resource a tagging ARN names.
enum Tagged {
    Bus(String),
    Rule(String, String),
}

impl EventsService {
    fn default_bus() -> Bus {
        Bus {
            name: DEFAULT_BUS.into(),
            description: None,
            kms_key: None,
            created: 0.0,
            modified: 0.0,
            tags: BTreeMap::new(),
            dead_letter_arn: None,
            log_config: None,
            policy: None,
        }
    }

    /// The bus, or ResourceNotFoundException; `default` always exists.
    pub fn describe_event_bus(&self, region: &str, name: Option<&str>) -> Result<Bus, AwsError> {
        let name = bus_name(name);
        if name == DEFAULT_BUS {
            let regions = self.lock();
            let tags = regions
                .get(region)
                .and_then(|r| r.buses.get(DEFAULT_BUS))
                .map(|b| b.tags.clone())
                .unwrap_or_default();
            return Ok(Bus {
                tags,
                ..Self::default_bus()
            });
        }
        self.lock()
            .get(region)
            .and_then(|r| r.buses.get(&name))
            .cloned()
            .ok_or_else(|| bus_not_found(&name))
    }

    fn bus_exists(&self, region: &str, bus: &str) -> bool {
        bus == DEFAULT_BUS
            || self
                .lock()
                .get(region)
                .is_some_and(|r| r.buses.contains_key(bus))
    }

    pub fn create_event_bus(
        &self,
        region: &str,
        input: CreateEventBusInput,
    ) -> Result<String, AwsError> {
        let name = input.name.as_str();
        check_bus_name(name)?;
        refuse_reserved(&input.tags)?;
        input.settings.check()?;
        if name == DEFAULT_BUS || name.starts_with("aws.") {
            return Err(validation(format!("Event bus name {name} is reserved.")));
        }
        let mut regions = self.lock();
        let r = regions.entry(region.to_string()).or_default();
        if r.buses.contains_key(name) {
            return Err(AwsError::bad_request(
                "ResourceAlreadyExistsException",
                format!("Event bus {name} already exists."),
            ));
        }
        let now = now_s();
        let mut bus = Bus {
            created: now,
            modified: now,
            tags: input.tags.into_iter().chain(input.system_tags).collect(),
            ..Self::default_bus()
        };
        bus.name = name.to_string();
        input.settings.apply(&mut bus);
        self.inner
            .store
            .write(|tx| state::save_bus(tx, region, &bus))
            .map_err(internal)?;
        r.buses.insert(name.to_string(), bus);
        Ok(self.bus_arn(region, name))
    }

    /// UpdateEventBus: description, KMS key, dead-letter queue and log configuration.
    pub fn update_event_bus(
        &self,
        region: &str,
        name: Option<&str>,
        settings: BusSettings,
    ) -> Result<String, AwsError> {
        settings.check()?;
        let name = bus_name(name);
        if name == DEFAULT_BUS {
            return Err(validation(
                "cumulo: the default event bus cannot be updated",
            ));
        }
        let mut regions = self.lock();
        let bus = regions
            .get_mut(region)
            .and_then(|r| r.buses.get_mut(&name))
            .ok_or_else(|| bus_not_found(&name))?;
        let mut updated = bus.clone();
        settings.apply(&mut updated);
        updated.modified = now_s();
        self.inner
            .store
            .write(|tx| state::save_bus(tx, region, &updated))
            .map_err(internal)?;
        *bus = updated;
        Ok(self.bus_arn(region, &name))
    }

    /// Sets (or, with `None`, removes) a custom bus's resource policy document, as
    /// AWS::Events::EventBus `Policy` does; the document must be a JSON object.
    pub fn put_bus_policy(
        &self,
        region: &str,
        name: &str,
        policy: Option<String>,
    ) -> Result<(), AwsError> {
        if let Some(p) = &policy
            && !serde_json::from_str::<serde_json::Value>(p).is_ok_and(|v| v.is_object())
        {
            return Err(validation("Policy is not valid JSON."));
        }
        let mut regions = self.lock();
        let bus = regions
            .get_mut(region)
            .and_then(|r| r.buses.get_mut(name))
            .ok_or_else(|| bus_not_found(name))?;
        let mut updated = bus.clone();
        updated.policy = policy;
        self.inner
            .store
            .write(|tx| state::save_bus(tx, region, &updated))
            .map_err(internal)?;
        *bus = updated;
        Ok(())
    }

    /// Deleting a bus that does not exist succeeds, as on AWS; a bus with rules cannot go.
    pub fn delete_event_bus(&self, region: &str, name: &str) -> Result<(), AwsError> {
        let name = bus_name(Some(name));
        if name == DEFAULT_BUS {
            return Err(validation("Cannot delete event bus default."));
        }
        let mut regions = self.lock();
        let Some(r) = regions.get_mut(region) else {
            return Ok(());
        };
        if !r.buses.contains_key(&name) {
            return Ok(());
        }
        if r.rules.keys().any(|(b, _)| *b == name) {
            return Err(validation(format!(
                "Cannot delete event bus {name} because it has rules."
            )));
        }
        self.inner
            .store
            .write(|tx| state::delete_bus(tx, region, &name))
            .map_err(internal)?;
        r.buses.remove(&name);
        Ok(())
    }

    pub fn list_event_buses(
        &self,
        region: &str,
        prefix: Option<&str>,
        max: Option<i64>,
        token: Option<&str>,
    ) -> Result<(Vec<Bus>, Option<String>), AwsError> {
        let n = limit(max)?;
        let after = token.map(decode_token).transpose()?;
        let mut all = vec![self.describe_event_bus(region, None)?];
        all.extend(
            self.lock()
                .get(region)
                .into_iter()
                .flat_map(|r| r.buses.values())
                .filter(|b| b.name != DEFAULT_BUS)
                .cloned(),
        );
        all.sort_by(|a, b| a.name.cmp(&b.name));
        let mut it = all
            .into_iter()
            .filter(|b| prefix.is_none_or(|p| b.name.starts_with(p)))
            .filter(|b| after.as_ref().is_none_or(|a| b.name > *a));
        let page: Vec<Bus> = it.by_ref().take(n).collect();
        let next = match (it.next(), page.last()) {
            (Some(_), Some(last)) => Some(encode_token(&last.name)),
            _ => None,
        };
        Ok((page, next))
    }

    /// Creates or replaces a rule (targets and tags of an existing rule are kept, as AWS does).
    pub fn put_rule(&self, region: &str, input: PutRuleInput) -> Result<String, AwsError> {
        check_rule_name(&input.name)?;
        refuse_reserved(&input.tags)?;
        let bus = bus_name(input.bus.as_deref());
        if input.event_pattern.is_none() && input.schedule.is_none() {
            return Err(validation(
                "Parameter(s) EventPattern or ScheduleExpression must be specified.",
            ));
        }
        if let Some(p) = &input.event_pattern {
            parse_pattern(p)?;
        }
        if let Some(s) = &input.schedule {
            if bus != DEFAULT_BUS {
                return Err(validation(
                    "ScheduleExpression is supported only on the default event bus.",
                ));
            }
            Schedule::parse(s).map_err(validation)?;
        }
        let state = input.state.unwrap_or_else(|| "ENABLED".into());
        if !RULE_STATES.contains(&state.as_str()) {
            return Err(validation(format!(
                "1 validation error detected: Value '{state}' at 'state' failed to satisfy constraint: Member must satisfy enum value set: [ENABLED, DISABLED, ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS]"
            )));
        }
        if !self.bus_exists(region, &bus) {
            return Err(bus_not_found(&bus));
        }
        let mut regions = self.lock();
        let r = regions.entry(region.to_string()).or_default();
        let key = (bus.clone(), input.name.clone());
        let existing = r.rules.get(&key);
        let schedule_changed = existing.is_none_or(|e| e.schedule != input.schedule);
        let mut tags = existing.map(|e| e.tags.clone()).unwrap_or_default();
        tags.extend(input.tags.into_iter().chain(input.system_tags));
        let rule = Rule {
            name: input.name.clone(),
            bus: bus.clone(),
            description: input.description,
            event_pattern: input.event_pattern,
            schedule: input.schedule,
            state,
            role_arn: input.role_arn,
            tags,
            targets: existing.map(|e| e.targets.clone()).unwrap_or_default(),
            schedule_from: match existing {
                Some(e) if !schedule_changed => e.schedule_from,
                _ => now_ms(),
            },
        };
        self.inner
            .store
            .write(|tx| state::save_rule(tx, region, &rule))
            .map_err(internal)?;
        r.rules.insert(key, rule.clone());
        drop(regions);
        self.reschedule(region, &rule);
        Ok(self.rule_arn(region, &bus, &input.name))
    }

    pub fn describe_rule(
        &self,
        region: &str,
        name: &str,
        bus: Option<&str>,
    ) -> Result<Rule, AwsError> {
        let bus = bus_name(bus);
        self.lock()
            .get(region)
            .and_then(|r| r.rules.get(&(bus.clone(), name.to_string())))
            .cloned()
            .ok_or_else(|| rule_not_found(name, &bus))
    }

    /// Applies `f` to a rule and commits it.
    fn update_rule(
        &self,
        region: &str,
        name: &str,
        bus: Option<&str>,
        f: impl FnOnce(&mut Rule) -> Result<(), AwsError>,
    ) -> Result<Rule, AwsError> {
        let bus = bus_name(bus);
        let mut regions = self.lock();
        let rule = regions
            .get_mut(region)
            .and_then(|r| r.rules.get_mut(&(bus.clone(), name.to_string())))
            .ok_or_else(|| rule_not_found(name, &bus))?;
        let mut updated = rule.clone();
        f(&mut updated)?;
        self.inner
            .store
            .write(|tx| state::save_rule(tx, region, &updated))
            .map_err(internal)?;
        *rule = updated.clone();
        drop(regions);
        self.reschedule(region, &updated);
        Ok(updated)
    }

    pub fn set_rule_state(
        &self,
        region: &str,
        name: &str,
        bus: Option<&str>,
        enabled: bool,
    ) -> Result<(), AwsError> {
        self.update_rule(region, name, bus, |r| {
            let was = r.enabled();
            r.state = if enabled { "ENABLED" } else { "DISABLED" }.into();
            if enabled && !was {
                r.schedule_from = now_ms();
            }
            Ok(())
        })
        .map(|_| ())
    }

    /// Deleting a missing rule succeeds; one with targets cannot be deleted.
    pub fn delete_rule(&self, region: &str, name: &str, bus: Option<&str>) -> Result<(), AwsError> {
        let bus = bus_name(bus);
        let mut regions = self.lock();
        let Some(r) = regions.get_mut(region) else {
            return Ok(());
        };
        let key = (bus.clone(), name.to_string());
        let Some(rule) = r.rules.get(&key) else {
            return Ok(());
        };
        if !rule.targets.is_empty() {
            return Err(validation("Rule can't be deleted since it has targets."));
        }
        self.inner
            .store
            .write(|tx| state::delete_rule(tx, region, &bus, name))
            .map_err(internal)?;
        r.rules.remove(&key);
        drop(regions);
        self.unschedule(region, &bus, name);
        Ok(())
    }

    pub fn list_rules(
        &self,
        region: &str,
        prefix: Option<&str>,
        bus: Option<&str>,
        max: Option<i64>,
        token: Option<&str>,
    ) -> Result<(Vec<Rule>, Option<String>), AwsError> {
        let bus = bus_name(bus);
        if !self.bus_exists(region, &bus) {
            return Err(bus_not_found(&bus));
        }
        let n = limit(max)?;
        let after = token.map(decode_token).transpose()?;
        let regions = self.lock();
        let mut it = regions
            .get(region)
            .into_iter()
            .flat_map(|r| r.rules.values())
            .filter(|r| r.bus == bus)
            .filter(|r| prefix.is_none_or(|p| r.name.starts_with(p)))
            .filter(|r| after.as_ref().is_none_or(|a| r.name > *a));
        let page: Vec<Rule> = it.by_ref().take(n).cloned().collect();
        let next = match (it.next(), page.last()) {
            (Some(_), Some(last)) => Some(encode_token(&last.name)),
            _ => None,
        };
        Ok((page, next))
    }

    pub fn list_rule_names_by_target(
        &self,
        region: &str,
        target_arn: &str,
        bus: Option<&str>,
    ) -> Vec<String> {
        let bus = bus_name(bus);
        self.lock()
            .get(region)
            .into_iter()
            .flat_map(|r| r.rules.values())
            .filter(|r| r.bus == bus && r.targets.iter().any(|t| t.arn == target_arn))
            .map(|r| r.name.clone())
            .collect()
    }

    pub fn put_targets(
        &self,
        region: &str,
        rule: &str,
        bus: Option<&str>,
        targets: Vec<Target>,
    ) -> Result<Vec<TargetFailure>, AwsError> {
        if targets.is_empty() || targets.len() > 10 {
            return Err(validation(format!(
                "1 validation error detected: Value at 'targets' failed to satisfy constraint: Member must have length between 1 and 10 (got {})",
                targets.len()
            )));
        }
        for t in &targets {
            let forms = [
                t.input.is_some(),
                t.input_path.is_some(),
                t.input_transformer.is_some(),
            ];
            if forms.iter().filter(|f| **f).count() > 1 {
                return Err(validation(format!(
                    "Only one of Input, InputPath, or InputTransformer must be provided for target {}.",
                    t.id
                )));
            }
            if let Some(i) = &t.input
                && serde_json::from_str::<serde_json::Value>(i).is_err()
            {
                return Err(validation(format!(
                    "Target {} Input is not valid JSON.",
                    t.id
                )));
            }
        }
        let mut failures = Vec::new();
        self.update_rule(region, rule, bus, |r| {
            for t in targets {
                let count = r.targets.len();
                match r.targets.iter_mut().find(|x| x.id == t.id) {
                    Some(slot) => *slot = t,
                    None if count >= MAX_TARGETS => failures.push(TargetFailure {
                        target_id: t.id.clone(),
                        code: "LimitExceededException".into(),
                        message: "The requested resource exceeds the maximum number allowed."
                            .into(),
                    }),
                    None => r.targets.push(t),
                }
            }
            Ok(())
        })?;
        Ok(failures)
    }

    pub fn remove_targets(
        &self,
        region: &str,
        rule: &str,
        bus: Option<&str>,
        ids: &[String],
    ) -> Result<Vec<TargetFailure>, AwsError> {
        let mut failures = Vec::new();
        self.update_rule(region, rule, bus, |r| {
            for id in ids {
                let before = r.targets.len();
                r.targets.retain(|t| t.id != *id);
                if r.targets.len() == before {
                    failures.push(TargetFailure {
                        target_id: id.clone(),
                        code: "ResourceNotFoundException".into(),
                        message: format!("Target {id} does not exist on rule {rule}."),
                    });
                }
            }
            Ok(())
        })?;
        Ok(failures)
    }

    pub fn list_targets_by_rule(
        &self,
        region: &str,
        rule: &str,
        bus: Option<&str>,
        max: Option<i64>,
        token: Option<&str>,
    ) -> Result<(Vec<Target>, Option<String>), AwsError> {
        let n = limit(max)?;
        let offset: usize = match token {
            None => 0,
            Some(t) => decode_token(t)?
                .parse()
                .map_err(|_| validation("The nextToken provided is invalid."))?,
        };
        let targets = self.describe_rule(region, rule, bus)?.targets;
        let page: Vec<Target> = targets.iter().skip(offset).take(n).cloned().collect();
        let end = offset + page.len();
        Ok((
            page,
            (end < targets.len()).then(|| encode_token(&end.to_string())),
        ))
    }

    fn tagged(&self, region: &str, arn: &str) -> Result<Tagged, AwsError> {
        let prefix = format!("arn:aws:events:{region}:{}:", self.account());
        let rest = arn
            .strip_prefix(&prefix)
            .ok_or_else(|| not_found(format!("Resource {arn} does not exist.")))?;
        if let Some(bus) = rest.strip_prefix("event-bus/") {
            if !self.bus_exists(region, bus) {
                return Err(bus_not_found(bus));
            }
            return Ok(Tagged::Bus(bus.to_string()));
        }
        if let Some(r) = rest.strip_prefix("rule/") {
            let (bus, name) = r.rsplit_once('/').unwrap_or((DEFAULT_BUS, r));
            self.describe_rule(region, name, Some(bus))?;
            return Ok(Tagged::Rule(bus.to_string(), name.to_string()));
        }
        Err(not_found(format!("Resource {arn} does not exist.")))
    }

    fn edit_tags(
        &self,
        region: &str,
        arn: &str,
        f: impl Fn(&mut BTreeMap<String, String>),
    ) -> Result<(), AwsError> {
        match self.tagged(region, arn)? {
            Tagged::Rule(bus, name) => self
                .update_rule(region, &name, Some(&bus), |r| {
                    f(&mut r.tags);
                    Ok(())
                })
                .map(|_| ()),
            Tagged::Bus(bus) => {
                let mut regions = self.lock();
                let r = regions.entry(region.to_string()).or_default();
                let mut updated = r.buses.get(&bus).cloned().unwrap_or_else(Self::default_bus);
                f(&mut updated.tags);
                self.inner
                    .store
                    .write(|tx| state::save_bus(tx, region, &updated))
                    .map_err(internal)?;
                r.buses.insert(bus, updated);
                Ok(())
            }
        }
    }

    pub fn tag_resource(
        &self,
        region: &str,
        arn: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        refuse_reserved(tags)?;
        self.edit_tags(region, arn, |t| t.extend(tags.iter().cloned()))
    }

    pub fn untag_resource(&self, region: &str, arn: &str, keys: &[String]) -> Result<(), AwsError> {
        self.edit_tags(region, arn, |t| {
            for k in keys {
                t.remove(k);
            }
        })
    }

    pub fn list_tags(&self, region: &str, arn: &str) -> Result<BTreeMap<String, String>, AwsError> {
        Ok(match self.tagged(region, arn)? {
            Tagged::Rule(bus, name) => self.describe_rule(region, &name, Some(&bus))?.tags,
            Tagged::Bus(bus) => self.describe_event_bus(region, Some(&bus))?.tags,
        })
    }

    /// Recomputes every scheduled rule's next firing (at start-up).
    pub(super) fn reschedule_all(&self) {
        let rules: Vec<(String, Rule)> = self
            .lock()
            .iter()
            .flat_map(|(region, r)| r.rules.values().map(|rule| (region.clone(), rule.clone())))
            .collect();
        for (region, rule) in rules {
            self.reschedule(&region, &rule);
        }
    }

    /// Records when `rule` fires next (or that it does not) and wakes the scheduler.
    fn reschedule(&self, region: &str, rule: &Rule) {
        let next = rule
            .schedule
            .as_deref()
            .filter(|_| rule.enabled() && rule.bus == DEFAULT_BUS)
            .and_then(|s| Schedule::parse(s).ok())
            .and_then(|s| s.next_after(rule.schedule_from, now_ms()));
        self.inner.timers.set(region, &rule.name, next);
    }

    fn unschedule(&self, region: &str, bus: &str, name: &str) {
        if bus == DEFAULT_BUS {
            self.inner.timers.set(region, name, None);
        }
    }

    /// A due rule: sends its "Scheduled Event" to its targets and records its next firing.
    pub(super) fn fire(&self, region: &str, name: &str, now: i64) {
        let Ok(rule) = self.describe_rule(region, name, None) else {
            return;
        };
        if rule.enabled() {
            let event = self.scheduled_event(region, &rule, now);
            self.dispatch(region, &rule.bus, &event, Some(&rule));
            let next = rule
                .schedule
                .as_deref()
                .and_then(|s| Schedule::parse(s).ok())
                .and_then(|s| s.next_after(rule.schedule_from, now));
            self.inner.timers.set(region, name, next);
        }
    }
}
