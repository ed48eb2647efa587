//! CloudFormation providers of AWS::Scheduler::Schedule and AWS::Scheduler::ScheduleGroup,
//! each a [`Declared`] mapping onto the operations the API runs (template properties and API
//! members share their names; StartDate and EndDate arrive as ISO 8601 strings, which the
//! operations take). Ref is the name of either; a schedule is updated in place by
//! UpdateSchedule (a new GroupName, which CloudFormation also updates without replacement,
//! moves it: the API cannot, so it is created in the new group and deleted from the old), a
//! group's only mutable property is its Tags.

use super::SchedulerService;
use super::state::DEFAULT_GROUP;
use crate::providers::declared::{self, Answer, Declared, Made, refuse_other_changes};
use crate::providers::{ProviderServices, given_or_generated_name, tags};
use cumulo_engine::{Observed, ProviderContext, ProviderRegistry};
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SERVICE: &str = "Scheduler";
const NOT_FOUND: &[&str] = &["ResourceNotFoundException"];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    declared::register(r, ScheduleDecl(s.scheduler.clone()));
    declared::register(r, GroupDecl(s.scheduler.clone()));
}

fn group_of(props: &Map<String, Value>) -> Option<&str> {
    props.get("GroupName").and_then(Value::as_str)
}

/// CloudFormation reports dates as ISO 8601 strings.
fn iso(seconds: &Value) -> Value {
    let ms = (seconds.as_f64().unwrap_or_default() * 1000.0) as i64;
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| json!(t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)))
        .unwrap_or(Value::Null)
}

struct ScheduleDecl(Arc<SchedulerService>);

impl ScheduleDecl {
    fn made(&self, ctx: &ProviderContext, name: &str, group: Option<&str>) -> Answer<Made> {
        let s = self.0.get_schedule(&ctx.region, name, group)?;
        Ok(Made::new(name).with("Arn", s["Arn"].clone()))
    }
}

#[async_trait::async_trait]
impl Declared for ScheduleDecl {
    const TYPE: &'static str = "AWS::Scheduler::Schedule";
    const ATTRIBUTES: &'static [&'static str] = &["Arn"];
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "Description",
        "EndDate",
        "FlexibleTimeWindow",
        "GroupName",
        "KmsKeyArn",
        "Name",
        "ScheduleExpression",
        "ScheduleExpressionTimezone",
        "StartDate",
        "State",
        "Target",
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = given_or_generated_name(ctx, props, "Name", 64)?;
        self.0
            .create_schedule(&ctx.region, &name, &Value::Object(props.clone()))?;
        self.made(ctx, &name, group_of(props))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let group = |p| group_of(p).unwrap_or(DEFAULT_GROUP);
        if group(old) == group(new) {
            self.0
                .update_schedule(&ctx.region, id, &Value::Object(new.clone()))?;
        } else {
            // Created first, so a refused schedule leaves the old one as it was.
            self.0
                .create_schedule(&ctx.region, id, &Value::Object(new.clone()))?;
            match self.0.delete_schedule(&ctx.region, id, group_of(old)) {
                Err(e) if !NOT_FOUND.contains(&e.code.as_str()) => return Err(e.into()),
                _ => {}
            }
        }
        self.made(ctx, id, group_of(new))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        Ok(self.0.delete_schedule(&ctx.region, id, group_of(props))?)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let s = self.0.get_schedule(&ctx.region, id, group_of(props))?;
        Ok(Some(Observed {
            properties: Self::PROPERTIES
                .iter()
                .filter_map(|k| s.get(*k).map(|v| (k.to_string(), v.clone())))
                .collect(),
            attributes: Map::from_iter([("Arn".to_string(), s["Arn"].clone())]),
        }))
    }

    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        given_or_generated_name(ctx, props, "Name", 64).ok()
    }
}

struct GroupDecl(Arc<SchedulerService>);

impl GroupDecl {
    fn made(&self, ctx: &ProviderContext, name: &str) -> Answer<Made> {
        let g = self.0.get_schedule_group(&ctx.region, name)?;
        Ok(Made::new(name)
            .with("Arn", g["Arn"].clone())
            .with("CreationDate", iso(&g["CreationDate"]))
            .with("LastModificationDate", iso(&g["LastModificationDate"]))
            .with("State", g["State"].clone()))
    }

    fn tags(ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Value> {
        Ok(Value::Array(
            tags(ctx, props)?
                .into_iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect(),
        ))
    }
}

#[async_trait::async_trait]
impl Declared for GroupDecl {
    const TYPE: &'static str = "AWS::Scheduler::ScheduleGroup";
    const ATTRIBUTES: &'static [&'static str] =
        &["Arn", "CreationDate", "LastModificationDate", "State"];
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["Name", "Tags"];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = given_or_generated_name(ctx, props, "Name", 64)?;
        let tags = Self::tags(ctx, props)?;
        self.0
            .create_schedule_group(&ctx.region, &name, &json!({"Tags": tags}))?;
        self.made(ctx, &name)
    }

    /// Tags, the group's and the stack's, are made what the template says.
    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["Tags"])?;
        let arn = self.0.group_arn(&ctx.region, id);
        let have = self.0.list_tags(&ctx.region, &arn)?;
        let keys: Vec<String> = have["Tags"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["Key"].as_str().map(str::to_string))
            .collect();
        self.0.untag_resource(&ctx.region, &arn, &keys)?;
        self.0
            .tag_resource(&ctx.region, &arn, &json!({"Tags": Self::tags(ctx, new)?}))?;
        self.made(ctx, id)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_schedule_group(&ctx.region, id)?)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let made = self.made(ctx, id)?;
        Ok(Some(Observed {
            properties: Map::from_iter([("Name".to_string(), json!(id))]),
            attributes: made.attributes,
        }))
    }

    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        given_or_generated_name(ctx, props, "Name", 64).ok()
    }
}
