//! A create is journaled before its provider is called, so one cut short between the service
//! call and the state write (a killed process, seen here as a second engine over the same
//! store) is found by the next operation and deleted: but only a proven orphan, never a
//! resource that already lived under a name the template gave.

mod support;

use cumulo_engine::*;
use cumulo_store::Store;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use support::{caller, config, template};

const NAMED: &str = "Test::Fake::Named";

/// A service keyed by name; every create hangs, once it has answered, until the test ends
/// (the process "dies" there).
#[derive(Default)]
struct Service {
    live: Mutex<HashMap<String, Value>>,
    answered: AtomicBool,
}

struct Named(Arc<Service>);

fn name(ctx: &ProviderContext, p: &Value) -> String {
    p.get("Name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| ctx.generated_name(64, ""))
}

#[async_trait::async_trait]
impl Provider for Named {
    async fn create(
        &self,
        ctx: &ProviderContext,
        p: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let id = name(ctx, p);
        let taken = self.0.live.lock().unwrap().contains_key(&id);
        if !taken {
            self.0.live.lock().unwrap().insert(id.clone(), p.clone());
        }
        self.0.answered.store(true, Ordering::SeqCst);
        std::future::pending().await
    }
    async fn update(
        &self,
        _: &ProviderContext,
        id: &str,
        _: &Value,
        _: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        Ok(ProviderOutcome {
            physical_id: id.to_string(),
            ..Default::default()
        })
    }
    async fn delete(&self, _: &ProviderContext, id: &str, _: &Value) -> Result<(), ProviderError> {
        match self.0.live.lock().unwrap().remove(id) {
            Some(_) => Ok(()),
            None => Err(ProviderError::NotFound(id.to_string())),
        }
    }
    async fn read(
        &self,
        _: &ProviderContext,
        id: &str,
        _: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        Ok(self.0.live.lock().unwrap().get(id).map(|_| Observed {
            properties: Map::new(),
            attributes: Map::new(),
        }))
    }
    fn created_identity(&self, ctx: &ProviderContext, p: &Value) -> Option<String> {
        Some(name(ctx, p))
    }
}

fn engine(store: &Arc<Store>, service: &Arc<Service>) -> Engine {
    let mut reg = ProviderRegistry::default();
    reg.register(NAMED, Arc::new(Named(service.clone())));
    Engine::new(
        store.clone(),
        reg,
        Arc::new(support::FakeWorld::default()),
        // The create never finishes: nothing waits for it.
        EngineConfig {
            sync_wait: std::time::Duration::ZERO,
            ..config()
        },
    )
    .unwrap()
}

/// Creates a stack whose one resource's create answers and then never returns; returns once
/// the service has answered, with the engine "killed" (dropped from use).
async fn create_cut_short(store: &Arc<Store>, service: &Arc<Service>, props: Value) -> String {
    let first = engine(store, service);
    let id = first
        .create_stack(
            &caller("req"),
            CreateStackInput {
                stack_name: "s".into(),
                template_body: Some(template(
                    json!({"R": {"Type": NAMED, "Properties": props}}),
                    json!({}),
                )),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .stack_id;
    while !service.answered.load(Ordering::SeqCst) {
        tokio::task::yield_now().await;
    }
    id
}

async fn delete(e: &Engine, id: &str) -> StackStatus {
    let c = caller("req2");
    e.delete_stack(
        &c,
        DeleteStackInput {
            stack_name: id.into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    e.wait_for_stack(id).await;
    e.describe_stacks(
        &c,
        DescribeStacksInput {
            stack_name: Some(id.into()),
            next_token: None,
        },
    )
    .await
    .unwrap()
    .stacks[0]
        .stack_status
}

#[tokio::test]
async fn a_generated_name_orphan_is_deleted_by_the_next_operation() {
    let store = Arc::new(Store::in_memory().unwrap());
    let service = Arc::new(Service::default());
    let id = create_cut_short(&store, &service, json!({})).await;
    assert_eq!(service.live.lock().unwrap().len(), 1, "the service made it");
    // What a restarted process sees: the record says CREATE_FAILED with no physical id,
    // and its journal names the orphan.
    let again = engine(&store, &service);
    assert_eq!(delete(&again, &id).await, StackStatus::DELETE_COMPLETE);
    assert!(
        service.live.lock().unwrap().is_empty(),
        "the orphan is gone"
    );
}

#[tokio::test]
async fn a_given_name_that_was_taken_before_the_create_is_left_alone() {
    let store = Arc::new(Store::in_memory().unwrap());
    let service = Arc::new(Service::default());
    service
        .live
        .lock()
        .unwrap()
        .insert("taken".into(), json!({"owner": "someone else"}));
    let id = create_cut_short(&store, &service, json!({"Name": "taken"})).await;
    let again = engine(&store, &service);
    assert_eq!(delete(&again, &id).await, StackStatus::DELETE_COMPLETE);
    assert_eq!(
        service.live.lock().unwrap().get("taken"),
        Some(&json!({"owner": "someone else"})),
        "not this create's to delete"
    );
}

#[tokio::test]
async fn a_given_name_that_was_free_is_this_creates_and_is_deleted() {
    let store = Arc::new(Store::in_memory().unwrap());
    let service = Arc::new(Service::default());
    let id = create_cut_short(&store, &service, json!({"Name": "mine"})).await;
    assert!(service.live.lock().unwrap().contains_key("mine"));
    let again = engine(&store, &service);
    assert_eq!(delete(&again, &id).await, StackStatus::DELETE_COMPLETE);
    assert!(service.live.lock().unwrap().is_empty());
}
