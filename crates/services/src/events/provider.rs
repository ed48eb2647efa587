//! CloudFormation providers: AWS::Events::EventBus and AWS::Events::Rule (with its Targets),
//! over EventBridge's typed operations. A bus's Ref is its name; a rule's Ref is its name, or
//! `bus|name` for a rule on a custom bus, as AWS returns it.

use super::EventsService;
use super::ops::{BusSettings, CreateEventBusInput, PutRuleInput, bus_name};
use super::state::{DEFAULT_BUS, LogConfig, Target};
use crate::json_body::Body;
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{
    ProviderServices, already_exists, check_known, failed, json_text, list, object, scalar, tags,
};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::sync::Arc;

const BUS: &str = "AWS::Events::EventBus";
const RULE: &str = "AWS::Events::Rule";
const SERVICE: &str = "EventBridge";

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    r.register(
        BUS,
        Arc::new(BusProvider {
            events: s.events.clone(),
        }),
    );
    r.register(
        RULE,
        Arc::new(RuleProvider {
            events: s.events.clone(),
        }),
    );
}

struct BusProvider {
    events: Arc<EventsService>,
}

fn check_bus(props: &Map<String, Value>) -> Result<(), ProviderError> {
    check_known(
        BUS,
        props,
        &[
            "Name",
            "Description",
            "KmsKeyIdentifier",
            "DeadLetterConfig",
            "LogConfig",
            "Policy",
            "Tags",
        ],
        // A partner event source must exist at the partner; cumulo has none to match.
        &[("EventSourceName", "partner event sources are not emulated")],
    )
}

/// The bus settings of AWS::Events::EventBus, as CreateEventBus/UpdateEventBus take them.
fn bus_settings(props: &Map<String, Value>) -> Result<BusSettings, ProviderError> {
    let sub = |key: &str| -> Result<Option<Map<String, Value>>, ProviderError> {
        match props.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Object(o)) => Ok(Some(o.clone())),
            Some(_) => Err(ProviderError::Failed(format!(
                "Properties validation failed for resource with message: #/{key}: expected type: JSONObject"
            ))),
        }
    };
    Ok(BusSettings {
        description: scalar(props, "Description")?,
        kms_key: scalar(props, "KmsKeyIdentifier")?,
        dead_letter_arn: match sub("DeadLetterConfig")? {
            Some(d) => scalar(&d, "Arn")?,
            None => None,
        },
        log_config: match sub("LogConfig")? {
            Some(l) => Some(LogConfig {
                include_detail: scalar(&l, "IncludeDetail")?,
                level: scalar(&l, "Level")?,
            }),
            None => None,
        },
    })
}

impl BusProvider {
    fn outcome(&self, ctx: &ProviderContext, name: &str) -> ProviderOutcome {
        ProviderOutcome {
            physical_id: name.to_string(),
            attributes: Map::from_iter([
                (
                    "Arn".to_string(),
                    json!(self.events.bus_arn(&ctx.region, name)),
                ),
                ("Name".to_string(), json!(name)),
            ]),
            ..Default::default()
        }
    }
}

#[async_trait::async_trait]
impl Provider for BusProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn", "Name"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(BUS, properties)?;
        check_bus(&props)?;
        let name = crate::providers::required(&props, "Name")?;
        let input = CreateEventBusInput {
            name: name.clone(),
            settings: bus_settings(&props)?,
            tags: tags(ctx, &props)?,
            system_tags: system_tags(ctx),
        };
        match self.events.create_event_bus(&ctx.region, input) {
            Ok(_) => {}
            Err(e) if e.code == "ResourceAlreadyExistsException" => {
                return Err(already_exists(ctx, &name));
            }
            Err(e) => return Err(failed(ctx, SERVICE, e)),
        }
        if let Some(policy) = json_text(&props, "Policy")?
            && let Err(e) = self.events.put_bus_policy(&ctx.region, &name, Some(policy))
        {
            // The bus must not outlive the failed create.
            let _ = self.events.delete_event_bus(&ctx.region, &name);
            return Err(failed(ctx, SERVICE, e));
        }
        Ok(self.outcome(ctx, &name))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(BUS, new)?;
        check_bus(&props)?;
        let fail = |e: AwsError| failed(ctx, SERVICE, e);
        self.events
            .update_event_bus(&ctx.region, Some(physical_id), bus_settings(&props)?)
            .map_err(fail)?;
        self.events
            .put_bus_policy(&ctx.region, physical_id, json_text(&props, "Policy")?)
            .map_err(fail)?;
        let arn = self.events.bus_arn(&ctx.region, physical_id);
        let current = self.events.list_tags(&ctx.region, &arn).map_err(fail)?;
        let change = TagChange::between(&current, &tags(ctx, &props)?);
        self.events
            .untag_resource(&ctx.region, &arn, &change.remove)
            .map_err(fail)?;
        self.events
            .tag_resource(&ctx.region, &arn, &change.set)
            .map_err(fail)?;
        Ok(self.outcome(ctx, physical_id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<(), ProviderError> {
        if self
            .events
            .describe_event_bus(&ctx.region, Some(physical_id))
            .is_err()
        {
            return Err(ProviderError::NotFound(physical_id.to_string()));
        }
        self.events
            .delete_event_bus(&ctx.region, physical_id)
            .map_err(|e| failed(ctx, SERVICE, e))
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let Ok(bus) = self
            .events
            .describe_event_bus(&ctx.region, Some(physical_id))
        else {
            return Ok(None);
        };
        let mut properties = Map::from_iter([("Name".to_string(), json!(bus.name))]);
        if let Some(d) = &bus.description {
            properties.insert("Description".into(), json!(d));
        }
        if let Some(k) = &bus.kms_key {
            properties.insert("KmsKeyIdentifier".into(), json!(k));
        }
        if let Some(d) = &bus.dead_letter_arn {
            properties.insert("DeadLetterConfig".into(), json!({"Arn": d}));
        }
        if let Some(l) = &bus.log_config {
            let mut c = Map::new();
            if let Some(v) = &l.include_detail {
                c.insert("IncludeDetail".into(), json!(v));
            }
            if let Some(v) = &l.level {
                c.insert("Level".into(), json!(v));
            }
            properties.insert("LogConfig".into(), Value::Object(c));
        }
        if let Some(p) = bus
            .policy
            .as_deref()
            .and_then(|p| serde_json::from_str::<Value>(p).ok())
        {
            properties.insert("Policy".into(), p);
        }
        if !bus.tags.is_empty() {
            let t: Vec<Value> = bus
                .tags
                .iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect();
            properties.insert("Tags".into(), Value::Array(t));
        }
        Ok(Some(Observed {
            properties,
            attributes: self.outcome(ctx, physical_id).attributes,
        }))
    }
}

struct RuleProvider {
    events: Arc<EventsService>,
}

/// (bus, rule name) from a rule's physical id.
fn split_id(physical_id: &str) -> (String, String) {
    match physical_id.split_once('|') {
        Some((b, n)) => (b.to_string(), n.to_string()),
        None => (DEFAULT_BUS.to_string(), physical_id.to_string()),
    }
}

fn physical_id(bus: &str, name: &str) -> String {
    if bus == DEFAULT_BUS {
        name.to_string()
    } else {
        format!("{bus}|{name}")
    }
}

fn rule_input(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
    name: String,
) -> Result<(PutRuleInput, Vec<Target>), ProviderError> {
    check_known(
        RULE,
        props,
        &[
            "Description",
            "EventBusName",
            "EventPattern",
            "Name",
            "RoleArn",
            "ScheduleExpression",
            "State",
            "Tags",
            "Targets",
        ],
        &[],
    )?;
    let mut targets = Vec::new();
    for t in list(props, "Targets")? {
        let obj = t.as_object().ok_or_else(|| {
            ProviderError::Failed("Properties validation failed for resource with message: #/Targets: expected type: JSONObject".into())
        })?;
        let body = Body::new(obj, |n| {
            AwsError::validation_exception(format!("#/Targets: required key [{n}] not found"))
        });
        targets.push(super::wire::target(&body).map_err(|e| failed(ctx, SERVICE, e))?);
    }
    let input = PutRuleInput {
        name,
        bus: scalar(props, "EventBusName")?.map(|b| bus_name(Some(&b))),
        event_pattern: json_text(props, "EventPattern")?,
        schedule: scalar(props, "ScheduleExpression")?,
        state: scalar(props, "State")?,
        description: scalar(props, "Description")?,
        role_arn: scalar(props, "RoleArn")?,
        tags: tags(ctx, props)?,
        system_tags: system_tags(ctx),
    };
    Ok((input, targets))
}

impl RuleProvider {
    fn outcome(&self, ctx: &ProviderContext, bus: &str, name: &str) -> ProviderOutcome {
        ProviderOutcome {
            physical_id: physical_id(bus, name),
            attributes: Map::from_iter([(
                "Arn".to_string(),
                json!(self.events.rule_arn(&ctx.region, bus, name)),
            )]),
            ..Default::default()
        }
    }

    /// Makes the rule's targets exactly `targets`.
    fn set_targets(
        &self,
        ctx: &ProviderContext,
        bus: &str,
        name: &str,
        targets: Vec<Target>,
    ) -> Result<(), ProviderError> {
        let fail = |e: AwsError| failed(ctx, SERVICE, e);
        let current = self
            .events
            .describe_rule(&ctx.region, name, Some(bus))
            .map_err(fail)?
            .targets;
        let gone: Vec<String> = current
            .iter()
            .filter(|c| !targets.iter().any(|t| t.id == c.id))
            .map(|c| c.id.clone())
            .collect();
        if !gone.is_empty() {
            self.events
                .remove_targets(&ctx.region, name, Some(bus), &gone)
                .map_err(fail)?;
        }
        if !targets.is_empty() {
            let failures = self
                .events
                .put_targets(&ctx.region, name, Some(bus), targets)
                .map_err(fail)?;
            if let Some(f) = failures.first() {
                return Err(fail(AwsError::bad_request(
                    f.code.clone(),
                    f.message.clone(),
                )));
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Provider for RuleProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(RULE, properties)?;
        let name = match scalar(&props, "Name")? {
            Some(n) => n,
            None => ctx.generated_name(64, ""),
        };
        let (input, targets) = rule_input(ctx, &props, name.clone())?;
        let bus = bus_name(input.bus.as_deref());
        if self
            .events
            .describe_rule(&ctx.region, &name, Some(&bus))
            .is_ok()
        {
            return Err(already_exists(ctx, &name));
        }
        self.events
            .put_rule(&ctx.region, input)
            .map_err(|e| failed(ctx, SERVICE, e))?;
        if let Err(e) = self.set_targets(ctx, &bus, &name, targets) {
            // Leave nothing behind that the stack does not know about.
            let _ = self
                .delete(ctx, &physical_id(&bus, &name), properties)
                .await;
            return Err(e);
        }
        Ok(self.outcome(ctx, &bus, &name))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(RULE, new)?;
        let (bus, name) = split_id(physical_id);
        let (mut input, targets) = rule_input(ctx, &props, name.clone())?;
        input.bus = Some(bus.clone());
        let fail = |e: AwsError| failed(ctx, SERVICE, e);
        let arn = self.events.rule_arn(&ctx.region, &bus, &name);
        let current_tags = self.events.list_tags(&ctx.region, &arn).map_err(fail)?;
        let gone = TagChange::between(&current_tags, &input.tags).remove;
        self.events.put_rule(&ctx.region, input).map_err(fail)?;
        self.events
            .untag_resource(&ctx.region, &arn, &gone)
            .map_err(fail)?;
        self.set_targets(ctx, &bus, &name, targets)?;
        Ok(self.outcome(ctx, &bus, &name))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<(), ProviderError> {
        let (bus, name) = split_id(physical_id);
        let fail = |e: AwsError| failed(ctx, SERVICE, e);
        let rule = match self.events.describe_rule(&ctx.region, &name, Some(&bus)) {
            Ok(r) => r,
            Err(e) if e.code == "ResourceNotFoundException" => {
                return Err(ProviderError::NotFound(physical_id.to_string()));
            }
            Err(e) => return Err(fail(e)),
        };
        let ids: Vec<String> = rule.targets.iter().map(|t| t.id.clone()).collect();
        if !ids.is_empty() {
            self.events
                .remove_targets(&ctx.region, &name, Some(&bus), &ids)
                .map_err(fail)?;
        }
        self.events
            .delete_rule(&ctx.region, &name, Some(&bus))
            .map_err(fail)
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let (bus, name) = split_id(physical_id);
        let Ok(rule) = self.events.describe_rule(&ctx.region, &name, Some(&bus)) else {
            return Ok(None);
        };
        let mut properties = Map::new();
        properties.insert("Name".into(), json!(rule.name));
        properties.insert("State".into(), json!(rule.state));
        if bus != DEFAULT_BUS {
            properties.insert("EventBusName".into(), json!(bus));
        }
        if let Some(p) = &rule.event_pattern {
            properties.insert(
                "EventPattern".into(),
                serde_json::from_str(p).unwrap_or_else(|_| json!(p)),
            );
        }
        for (key, v) in [
            ("ScheduleExpression", &rule.schedule),
            ("Description", &rule.description),
            ("RoleArn", &rule.role_arn),
        ] {
            if let Some(v) = v {
                properties.insert(key.into(), json!(v));
            }
        }
        if !rule.targets.is_empty() {
            properties.insert(
                "Targets".into(),
                Value::Array(rule.targets.iter().map(super::wire::target_json).collect()),
            );
        }
        Ok(Some(Observed {
            properties,
            attributes: self.outcome(ctx, &bus, &name).attributes,
        }))
    }
}
