//! Resource types the engine provides itself: nested stacks (AWS::CloudFormation::Stack),
//! AWS::CloudFormation::WaitConditionHandle and WaitCondition, AWS::CloudFormation::Macro (the record that makes
//! a macro usable, see `ops/transform.rs`), and AWS::CDK::Metadata.

use crate::api::{Caller, CreateStackInput, DeleteStackInput, Parameter, Tag, UpdateStackInput};
use crate::engine::Engine;
use crate::exec;
use crate::ops::create::{Parent, start_create};
use crate::ops::signal::HANDLE_PATH;
use crate::ops::transform::{MACRO_TYPE, macro_function};
use crate::provider::{
    Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use crate::state::{Inner, StackRecord};
use crate::status::StackStatus;
use serde_json::{Map, Value};
use std::sync::{Arc, Weak};

pub(crate) fn register(registry: &mut ProviderRegistry, engine: Weak<Inner>) {
    registry.register(
        "AWS::CloudFormation::Stack",
        Arc::new(NestedStack {
            engine: engine.clone(),
        }),
    );
    let handles = engine.clone();
    registry.register(
        crate::ops::signal::HANDLE_TYPE,
        Arc::new(Marker {
            physical_id: Box::new(move |ctx| {
                let fallback = handles
                    .upgrade()
                    .and_then(|inner| inner.config.handle_host.clone());
                handle_url(ctx, fallback.as_deref())
            }),
        }),
    );
    registry.register(
        crate::exec::WAIT_CONDITION_TYPE,
        Arc::new(Marker {
            physical_id: Box::new(wait_condition_id),
        }),
    );
    registry.register("AWS::CDK::Metadata", Arc::new(CdkMetadata));
    registry.register(MACRO_TYPE, Arc::new(Macro { engine }));
}

struct NestedStack {
    engine: Weak<Inner>,
}

fn failed(msg: impl Into<String>) -> ProviderError {
    ProviderError::Failed(msg.into())
}

impl NestedStack {
    fn engine(&self) -> Result<Engine, ProviderError> {
        self.engine
            .upgrade()
            .map(|inner| Engine { inner })
            .ok_or_else(|| failed("cumulo: the engine is shutting down"))
    }

    fn caller(ctx: &ProviderContext) -> Caller {
        Caller {
            region: ctx.region.clone(),
            account_id: ctx.account_id.clone(),
            // A nested stack's events carry the token of the parent's operation.
            request_id: ctx.client_request_token.clone(),
            // A nested stack's resources are built for the host the parent's caller used.
            host: ctx.host.clone(),
        }
    }

    fn child(engine: &Engine, id: &str) -> Option<StackRecord> {
        engine.inner.lock().stacks.get(id).cloned()
    }

    fn outcome(child: &StackRecord) -> ProviderOutcome {
        let attributes: Map<String, Value> = child
            .outputs
            .iter()
            .map(|o| (format!("Outputs.{}", o.key), Value::String(o.value.clone())))
            .collect();
        ProviderOutcome {
            physical_id: child.stack_id.clone(),
            attributes,
            ..Default::default()
        }
    }

    /// Why a child's operation failed: its last stack event with a reason of its own.
    fn reason(child: &StackRecord) -> String {
        child
            .events
            .iter()
            .rev()
            .filter(|e| e.resource_type == "AWS::CloudFormation::Stack")
            .filter_map(|e| e.reason.clone())
            .find(|r| r != "User Initiated")
            .unwrap_or_default()
    }

    async fn wait_for(engine: &Engine, id: &str) {
        let running = engine
            .inner
            .running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(id)
            .cloned();
        if let Some(r) = running {
            exec::wait_done(&r).await;
        }
    }
}

/// A nested stack resource's `Parameters` as stack parameters (lists joined with commas, as
/// AWS passes them); the error says what is wrong with the property.
pub(crate) fn nested_parameters(props: &Value) -> Result<Vec<Parameter>, &'static str> {
    match props.get("Parameters") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(o)) => Ok(o
            .iter()
            .map(|(k, v)| Parameter {
                key: k.clone(),
                value: Some(crate::resolve::value_text(v)),
                use_previous_value: false,
            })
            .collect()),
        Some(_) => Err("Parameters must be an object"),
    }
}

fn params_of(props: &Value) -> Result<Vec<Parameter>, ProviderError> {
    nested_parameters(props).map_err(|e| failed(format!("Properties validation failed: {e}")))
}

fn tags_of(props: &Value) -> Vec<Tag> {
    props
        .get("Tags")
        .and_then(Value::as_array)
        .map(|tags| {
            tags.iter()
                .filter_map(|t| {
                    Some(Tag {
                        key: t.get("Key")?.as_str()?.to_string(),
                        value: t.get("Value")?.as_str()?.to_string(),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

fn template_url(props: &Value) -> Result<String, ProviderError> {
    props
        .get("TemplateURL")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| {
            failed(
                "Properties validation failed for resource: required key [TemplateURL] not found",
            )
        })
}

#[async_trait::async_trait]
impl Provider for NestedStack {
    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let engine = self.engine()?;
        let (root_id, capabilities) = {
            let st = engine.inner.lock();
            let parent = st.stacks.get(&ctx.stack_id);
            (
                parent
                    .and_then(|p| p.root_id.clone())
                    .unwrap_or_else(|| ctx.stack_id.clone()),
                parent.map(|p| p.capabilities.clone()).unwrap_or_default(),
            )
        };
        // A nested change set being executed made the stack already (REVIEW_IN_PROGRESS).
        let planned = {
            let st = engine.inner.lock();
            crate::ops::nested_changes::planned_stack(&st, &ctx.stack_id, &ctx.logical_id)
        };
        let name = planned.unwrap_or_else(|| ctx.generated_name(128, ""));
        let input = CreateStackInput {
            stack_name: name,
            template_url: Some(template_url(properties)?),
            parameters: params_of(properties)?,
            tags: tags_of(properties),
            capabilities,
            timeout_in_minutes: properties.get("TimeoutInMinutes").and_then(Value::as_i64),
            ..Default::default()
        };
        let parent = Parent {
            parent_id: ctx.stack_id.clone(),
            root_id,
        };
        let (id, running) = start_create(&engine, &Self::caller(ctx), input, Some(parent))
            .await
            .map_err(|e| failed(e.message))?;
        if let Some(r) = running {
            exec::wait_done(&r).await;
        }
        let child = Self::child(&engine, &id).ok_or_else(|| failed("nested stack vanished"))?;
        if child.status == StackStatus::CREATE_COMPLETE {
            return Ok(Self::outcome(&child));
        }
        let reason = Self::reason(&child);
        // The failed child is not the parent's to keep: delete it, as AWS does.
        let del = DeleteStackInput {
            stack_name: id.clone(),
            ..Default::default()
        };
        if let Ok(Some(r)) = crate::ops::delete::start_delete(&engine, &Self::caller(ctx), del) {
            exec::wait_done(&r).await;
        }
        Err(failed(format!(
            "Embedded stack {id} was not successfully created: {reason}"
        )))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let engine = self.engine()?;
        let capabilities = engine
            .inner
            .lock()
            .stacks
            .get(&ctx.stack_id)
            .map(|p| p.capabilities.clone())
            .unwrap_or_default();
        let input = UpdateStackInput {
            stack_name: physical_id.to_string(),
            template_url: Some(template_url(new)?),
            parameters: params_of(new)?,
            tags: Some(tags_of(new)),
            capabilities,
            ..Default::default()
        };
        let mut noop = false;
        match crate::ops::update::start_update(
            &engine,
            &Self::caller(ctx),
            input,
            crate::ops::update::NESTED_UPDATE,
            None,
        )
        .await
        {
            Ok((_, Some(r))) => exec::wait_done(&r).await,
            Ok((_, None)) => Self::wait_for(&engine, physical_id).await,
            Err(e) if e.message == "No updates are to be performed." => noop = true,
            Err(e) => return Err(failed(e.message)),
        }
        let child =
            Self::child(&engine, physical_id).ok_or_else(|| failed("nested stack vanished"))?;
        if noop || child.status == StackStatus::UPDATE_COMPLETE {
            return Ok(Self::outcome(&child));
        }
        Err(failed(format!(
            "Embedded stack {physical_id} was not successfully updated. Currently in {} with reason: {}",
            child.status,
            Self::reason(&child)
        )))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        let engine = self.engine()?;
        let del = DeleteStackInput {
            stack_name: physical_id.to_string(),
            ..Default::default()
        };
        match crate::ops::delete::start_delete(&engine, &Self::caller(ctx), del) {
            Ok(Some(r)) => exec::wait_done(&r).await,
            Ok(None) => Self::wait_for(&engine, physical_id).await,
            Err(e) => return Err(failed(e.message)),
        }
        match Self::child(&engine, physical_id) {
            None => Ok(()),
            Some(c) if c.status == StackStatus::DELETE_COMPLETE => Ok(()),
            Some(c) => Err(failed(format!(
                "Embedded stack {physical_id} was not successfully deleted: {}",
                Self::reason(&c)
            ))),
        }
    }
}

/// A type that makes nothing but its physical id: the wait its resource does happens in the
/// engine (`exec/signals.rs`), and an update is not waited on, as in AWS.
struct Marker {
    physical_id: Box<dyn Fn(&ProviderContext) -> String + Send + Sync>,
}

/// A handle's physical id (its Ref) is the URL signals are PUT to: where AWS gives a presigned
/// S3 URL, an unsigned one on the endpoint the caller used (`ops/signal.rs`); for a caller with
/// no host, the engine's `handle_host` (a direct deploy's own listener), else `localhost:4566`.
fn handle_url(ctx: &ProviderContext, fallback: Option<&str>) -> String {
    let host = match (ctx.host.as_str(), fallback) {
        ("", Some(h)) => h,
        ("", None) => "localhost:4566",
        (h, _) => h,
    };
    let token = uuid::Uuid::new_v4().simple();
    format!("http://{host}{HANDLE_PATH}{token}")
}

fn wait_condition_id(ctx: &ProviderContext) -> String {
    format!("{}/{}", ctx.stack_id, ctx.logical_id)
}

#[async_trait::async_trait]
impl Provider for Marker {
    async fn create(
        &self,
        ctx: &ProviderContext,
        _properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        Ok(ProviderOutcome {
            physical_id: (self.physical_id)(ctx),
            ..Default::default()
        })
    }

    async fn update(
        &self,
        _ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        _new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        Ok(ProviderOutcome {
            physical_id: physical_id.to_string(),
            ..Default::default()
        })
    }

    async fn delete(
        &self,
        _ctx: &ProviderContext,
        _physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        Ok(())
    }
}

struct CdkMetadata;

const CDK_REASON: &str =
    "cumulo: AWS::CDK::Metadata is the CDK's usage record; nothing was created";

#[async_trait::async_trait]
impl Provider for CdkMetadata {
    async fn create(
        &self,
        _ctx: &ProviderContext,
        _properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        Ok(ProviderOutcome {
            physical_id: uuid::Uuid::new_v4().to_string(),
            attributes: Map::new(),
            status_reason: Some(CDK_REASON.into()),
            ..Default::default()
        })
    }

    async fn update(
        &self,
        _ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        _new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        Ok(ProviderOutcome {
            physical_id: physical_id.to_string(),
            attributes: Map::new(),
            status_reason: Some(CDK_REASON.into()),
            ..Default::default()
        })
    }

    async fn delete(
        &self,
        _ctx: &ProviderContext,
        _physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        Ok(())
    }
}

/// A macro definition: the resource record is the registration (transforms find the function
/// through it while it is CREATE_COMPLETE or UPDATE_COMPLETE), so creating it checks what AWS
/// requires and that no other macro of the account and region has the name. LogGroupName and
/// LogRoleARN are stored and reported; cumulo's macro invocations log as any Lambda
/// invocation does, not to that group.
struct Macro {
    engine: Weak<Inner>,
}

impl Macro {
    fn checked(properties: &Value) -> Result<(String, ProviderOutcome), ProviderError> {
        let text = |key: &str| properties.get(key).and_then(Value::as_str);
        let (Some(name), Some(_)) = (text("Name"), text("FunctionName")) else {
            return Err(failed(
                "Properties validation failed for resource: required key [Name] or [FunctionName] not found",
            ));
        };
        let attributes = Map::from_iter([("Id".to_string(), Value::from(name))]);
        Ok((
            name.to_string(),
            ProviderOutcome {
                physical_id: name.to_string(),
                attributes,
                ..Default::default()
            },
        ))
    }
}

#[async_trait::async_trait]
impl Provider for Macro {
    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let (name, outcome) = Self::checked(properties)?;
        let inner = self
            .engine
            .upgrade()
            .ok_or_else(|| failed("cumulo: the engine is shutting down"))?;
        let caller = NestedStack::caller(ctx);
        if macro_function(&inner.lock(), &caller, &name).is_some() {
            return Err(failed(format!(
                "{name} already exists in stack {}",
                ctx.stack_id
            )));
        }
        Ok(outcome)
    }

    async fn update(
        &self,
        _ctx: &ProviderContext,
        _physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        Self::checked(new).map(|(_, outcome)| outcome)
    }

    async fn delete(
        &self,
        _ctx: &ProviderContext,
        _physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        Ok(())
    }
}
