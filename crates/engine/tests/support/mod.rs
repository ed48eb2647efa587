//! Fakes for engine tests: an in-memory provider with injectable failures and a world serving
//! templates and SSM values from maps.

#![allow(dead_code)]

use cumulo_engine::*;
use cumulo_store::Store;
use cumulo_template::DynamicReference;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Physical id → properties the provider last applied (resolved values).
#[derive(Default)]
pub struct Fake {
    pub live: Mutex<HashMap<String, Value>>,
    /// Physical ids whose delete fails until removed from the set.
    pub block_delete: Mutex<HashSet<String>>,
    pub calls: Mutex<Vec<String>>,
    /// `"<call> <logical id> <ctx.host>"` per provider call.
    pub hosts: Mutex<Vec<String>>,
    /// Delay per create (parallelism test), in ms.
    pub delay_ms: Mutex<u64>,
    /// Creates running now, and the most ever running at once (parallelism test).
    pub in_flight: Mutex<(usize, usize)>,
    /// Creates wait on this until released (restart test).
    pub hang: Mutex<Option<Arc<tokio::sync::Notify>>>,
}

impl Fake {
    pub fn exists(&self, physical: &str) -> bool {
        self.live.lock().unwrap().contains_key(physical)
    }
    pub fn props(&self, physical: &str) -> Option<Value> {
        self.live.lock().unwrap().get(physical).cloned()
    }
    pub fn count(&self) -> usize {
        self.live.lock().unwrap().len()
    }
    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap().clone()
    }
}

pub struct FakeProvider(pub Arc<Fake>);

fn attrs(physical: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("Arn".into(), json!(format!("arn:fake:{physical}")));
    m
}

#[async_trait::async_trait]
impl Provider for FakeProvider {
    async fn create(
        &self,
        ctx: &ProviderContext,
        p: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        // The stack-wide delay, or this resource's own `DelayMs`.
        let delay = p
            .get("DelayMs")
            .and_then(Value::as_u64)
            .unwrap_or(*self.0.delay_ms.lock().unwrap());
        if delay > 0 {
            {
                let mut f = self.0.in_flight.lock().unwrap();
                f.0 += 1;
                f.1 = f.1.max(f.0);
            }
            tokio::time::sleep(Duration::from_millis(delay)).await;
            self.0.in_flight.lock().unwrap().0 -= 1;
        }
        let hang = self.0.hang.lock().unwrap().clone();
        if let Some(n) = hang {
            n.notified().await;
        }
        self.0
            .calls
            .lock()
            .unwrap()
            .push(format!("create {}", ctx.logical_id));
        self.0
            .hosts
            .lock()
            .unwrap()
            .push(format!("create {} {}", ctx.logical_id, ctx.host));
        if p.get("Fail") == Some(&json!(true)) {
            return Err(ProviderError::Failed(format!("{} refused", ctx.logical_id)));
        }
        let physical = p
            .get("QueueName")
            .or_else(|| p.get("Name"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| ctx.generated_name(64, ""));
        if self.0.exists(&physical) {
            return Err(ProviderError::Failed(format!("{physical} already exists")));
        }
        self.0
            .live
            .lock()
            .unwrap()
            .insert(physical.clone(), p.clone());
        if p.get("FailAfterCreate") == Some(&json!(true)) {
            return Err(
                ProviderError::Failed(format!("{physical} did not stabilize"))
                    .after_create(&physical),
            );
        }
        Ok(ProviderOutcome {
            attributes: attrs(&physical),
            physical_id: physical,
            ..Default::default()
        })
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        self.0
            .calls
            .lock()
            .unwrap()
            .push(format!("update {}", ctx.logical_id));
        self.0
            .hosts
            .lock()
            .unwrap()
            .push(format!("update {} {}", ctx.logical_id, ctx.host));
        if new.get("FailUpdate") == Some(&json!(true)) {
            return Err(ProviderError::Failed(format!(
                "{} update refused",
                ctx.logical_id
            )));
        }
        self.0
            .live
            .lock()
            .unwrap()
            .insert(physical.to_string(), new.clone());
        Ok(ProviderOutcome {
            physical_id: physical.to_string(),
            attributes: attrs(physical),
            ..Default::default()
        })
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical: &str,
        _p: &Value,
    ) -> Result<(), ProviderError> {
        self.0
            .calls
            .lock()
            .unwrap()
            .push(format!("delete {}", ctx.logical_id));
        self.0
            .hosts
            .lock()
            .unwrap()
            .push(format!("delete {} {}", ctx.logical_id, ctx.host));
        if self.0.block_delete.lock().unwrap().contains(physical) {
            return Err(ProviderError::Failed(format!("{physical} is not empty")));
        }
        match self.0.live.lock().unwrap().remove(physical) {
            Some(_) => Ok(()),
            None => Err(ProviderError::NotFound(physical.to_string())),
        }
    }
}

#[derive(Default)]
pub struct FakeWorld {
    /// TemplateURL bodies and AWS::Include snippets, by URL or location.
    pub templates: Mutex<HashMap<String, String>>,
    pub ssm: Mutex<HashMap<String, String>>,
    /// Every function invocation: (function, the event).
    pub invocations: Mutex<Vec<(String, Value)>>,
}

#[async_trait::async_trait]
impl World for FakeWorld {
    async fn fetch_template(&self, _region: &str, url: &str) -> Result<String, String> {
        self.templates
            .lock()
            .unwrap()
            .get(url)
            .cloned()
            .ok_or_else(|| format!("TemplateURL must reference a valid S3 object: {url}"))
    }
    fn ssm_parameter(&self, _region: &str, name: &str) -> Option<String> {
        self.ssm.lock().unwrap().get(name).cloned()
    }
    async fn fetch_include(&self, _region: &str, location: &str) -> Result<String, String> {
        self.templates
            .lock()
            .unwrap()
            .get(location)
            .cloned()
            .ok_or_else(|| format!("S3 error: no object at {location}"))
    }
    /// A macro function that answers success with the fragment plus its params' members.
    async fn invoke_function(
        &self,
        _region: &str,
        _host: &str,
        function: &str,
        payload: String,
    ) -> Result<String, String> {
        let event: Value = serde_json::from_str(&payload).map_err(|e| e.to_string())?;
        self.invocations
            .lock()
            .unwrap()
            .push((function.to_string(), event.clone()));
        let mut fragment = event["fragment"].clone();
        if let (Some(f), Some(p)) = (fragment.as_object_mut(), event["params"].as_object()) {
            f.extend(p.clone());
        }
        Ok(serde_json::json!({
            "requestId": event["requestId"],
            "status": "success",
            "fragment": fragment,
        })
        .to_string())
    }
    async fn resolve_dynamic(
        &self,
        _region: &str,
        reference: &DynamicReference,
    ) -> Result<String, String> {
        match reference {
            DynamicReference::Ssm { name, .. } | DynamicReference::SsmSecure { name, .. } => {
                self.ssm.lock().unwrap().get(name).cloned().ok_or_else(|| {
                    format!(
                        "Unable to resolve {{{{resolve:ssm:{name}}}}}: parameter {name} not found"
                    )
                })
            }
            other => Err(format!("unsupported reference {other:?}")),
        }
    }
}

pub struct Harness {
    pub engine: Engine,
    pub fake: Arc<Fake>,
    pub world: Arc<FakeWorld>,
    pub store: Arc<Store>,
    pub caller: Caller,
}

pub const FAKE: &str = "Test::Fake::Thing";
pub const PANICS: &str = "Test::Fake::Panics";

/// A provider with a bug: the engine must fail its resource, not hang or crash.
pub struct PanicProvider;

#[async_trait::async_trait]
impl Provider for PanicProvider {
    async fn create(
        &self,
        _: &ProviderContext,
        _: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        panic!("provider bug")
    }
    async fn update(
        &self,
        _: &ProviderContext,
        _: &str,
        _: &Value,
        _: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        panic!("provider bug")
    }
    async fn delete(&self, _: &ProviderContext, _: &str, _: &Value) -> Result<(), ProviderError> {
        panic!("provider bug")
    }
}

pub fn registry(fake: &Arc<Fake>) -> ProviderRegistry {
    let mut reg = ProviderRegistry::default();
    reg.register(FAKE, Arc::new(FakeProvider(fake.clone())));
    // A real type name so the createOnly table applies (QueueName forces replacement).
    reg.register("AWS::SQS::Queue", Arc::new(FakeProvider(fake.clone())));
    reg.register(PANICS, Arc::new(PanicProvider));
    reg
}

pub fn config() -> EngineConfig {
    EngineConfig {
        sync_wait: Duration::from_secs(5),
        parallelism: 8,
        strict: false,
        handle_host: None,
    }
}

impl Harness {
    pub fn new() -> Harness {
        Self::with(Arc::new(Store::in_memory().unwrap()), config())
    }

    /// A second engine over the same store, providers and world: what a restarted process
    /// sees.
    pub fn restarted(&self, request_id: &str) -> Harness {
        let engine = Engine::new(
            self.store.clone(),
            registry(&self.fake),
            self.world.clone(),
            config(),
        )
        .unwrap();
        Harness {
            engine,
            fake: self.fake.clone(),
            world: self.world.clone(),
            store: self.store.clone(),
            caller: caller(request_id),
        }
    }

    pub fn with(store: Arc<Store>, config: EngineConfig) -> Harness {
        let fake = Arc::new(Fake::default());
        let world = Arc::new(FakeWorld::default());
        let engine = Engine::new(store.clone(), registry(&fake), world.clone(), config).unwrap();
        Harness {
            engine,
            fake,
            world,
            store,
            caller: caller("req-1"),
        }
    }

    pub async fn create(&self, name: &str, template: &str) -> Result<String, EngineError> {
        self.engine
            .create_stack(
                &self.caller,
                CreateStackInput {
                    stack_name: name.into(),
                    template_body: Some(template.into()),
                    ..Default::default()
                },
            )
            .await
            .map(|o| o.stack_id)
    }

    pub async fn update(&self, name: &str, template: &str) -> Result<String, EngineError> {
        self.engine
            .update_stack(
                &self.caller,
                UpdateStackInput {
                    stack_name: name.into(),
                    template_body: Some(template.into()),
                    ..Default::default()
                },
            )
            .await
            .map(|o| o.stack_id)
    }

    pub async fn delete(&self, name: &str) {
        self.engine
            .delete_stack(
                &self.caller,
                DeleteStackInput {
                    stack_name: name.into(),
                    ..Default::default()
                },
            )
            .await
            .unwrap();
    }

    pub async fn stack(&self, name: &str) -> StackView {
        let mut out = self
            .engine
            .describe_stacks(
                &self.caller,
                DescribeStacksInput {
                    stack_name: Some(name.into()),
                    next_token: None,
                },
            )
            .await
            .unwrap();
        out.stacks.remove(0)
    }

    pub async fn status(&self, name: &str) -> StackStatus {
        self.stack(name).await.stack_status
    }

    pub async fn resources(&self, name: &str) -> Vec<StackResourceView> {
        self.engine
            .describe_stack_resources(
                &self.caller,
                DescribeStackResourcesInput {
                    stack_name: Some(name.into()),
                    ..Default::default()
                },
            )
            .await
            .unwrap()
    }

    pub async fn resource(&self, name: &str, logical: &str) -> StackResourceView {
        self.engine
            .describe_stack_resource(&self.caller, name, logical)
            .await
            .unwrap()
    }

    pub async fn physical(&self, name: &str, logical: &str) -> String {
        self.resource(name, logical)
            .await
            .physical_resource_id
            .unwrap()
    }

    /// Events oldest first, as (logical id, status, reason).
    pub async fn events(&self, name: &str) -> Vec<(String, String, Option<String>)> {
        let mut all = Vec::new();
        let mut token = None;
        loop {
            let out = self
                .engine
                .describe_stack_events(
                    &self.caller,
                    DescribeStackEventsInput {
                        stack_name: name.into(),
                        next_token: token,
                    },
                )
                .await
                .unwrap();
            all.extend(out.stack_events);
            token = out.next_token;
            if token.is_none() {
                break;
            }
        }
        all.reverse();
        all.into_iter()
            .map(|e| {
                (
                    e.logical_resource_id,
                    e.resource_status,
                    e.resource_status_reason,
                )
            })
            .collect()
    }

    /// Waits (polling) until `logical` has reported `status`: tests that act on a resource in
    /// flight (cancel, interrupt) must not race the executor that starts it.
    pub async fn await_event(&self, name: &str, logical: &str, status: &str) {
        for _ in 0..500 {
            if self
                .events(name)
                .await
                .iter()
                .any(|e| e.0 == logical && e.1 == status)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{logical} never reached {status} in stack {name}");
    }

    /// Waits (polling) until the stack leaves its in-progress status.
    pub async fn settle(&self, name: &str) -> StackStatus {
        for _ in 0..500 {
            let s = self.status(name).await;
            if !s.in_progress() {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("stack {name} did not settle");
    }
}

pub fn caller(request_id: &str) -> Caller {
    Caller {
        region: "us-east-1".into(),
        account_id: "000000000000".into(),
        request_id: request_id.into(),
        host: "localhost:4566".into(),
    }
}

/// A template of `n` independent fake resources `R0`..`R{n-1}`, each with `properties` (none
/// when null).
pub fn fakes(n: usize, properties: Value) -> String {
    let resources: serde_json::Map<String, Value> = (0..n)
        .map(|i| {
            let mut r = json!({ "Type": FAKE });
            if !properties.is_null() {
                r["Properties"] = properties.clone();
            }
            (format!("R{i}"), r)
        })
        .collect();
    template(Value::Object(resources), Value::Null)
}

/// A JSON template from a resources object (and optional outputs).
pub fn template(resources: Value, outputs: Value) -> String {
    let mut t = json!({ "Resources": resources });
    if !outputs.is_null() {
        t["Outputs"] = outputs;
    }
    t.to_string()
}
