//! Every create and update records what the service reports right after it (the resource's
//! observed properties), and drift compares the live resource with that observation rather
//! than with the template: a value the service spells its own way is not drift, a change made
//! since the deploy is. Secrets resolved from dynamic references are never recorded in clear.

mod support;

use cumulo_engine::*;
use cumulo_store::Store;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use support::*;

const SPELLER: &str = "Test::Fake::Speller";

/// A service that stores `Protocol: "6"` as `"tcp"` (a value mapping it performs, which no
/// effective-properties bag can know at send time) and fills in a `Mode` default.
#[derive(Default)]
struct Service {
    held: Mutex<HashMap<String, Value>>,
}

fn stored(p: &Value) -> Value {
    let mut v = p.as_object().cloned().unwrap_or_default();
    if v.get("Protocol") == Some(&json!("6")) {
        v.insert("Protocol".into(), json!("tcp"));
    }
    v.entry("Mode").or_insert(json!("standard"));
    Value::Object(v)
}

struct Speller(Arc<Service>);

#[async_trait::async_trait]
impl Provider for Speller {
    async fn create(
        &self,
        ctx: &ProviderContext,
        p: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let id = ctx.generated_name(64, "");
        self.0.held.lock().unwrap().insert(id.clone(), stored(p));
        Ok(ProviderOutcome {
            physical_id: id,
            ..Default::default()
        })
    }
    async fn update(
        &self,
        _: &ProviderContext,
        id: &str,
        _: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        self.0
            .held
            .lock()
            .unwrap()
            .insert(id.to_string(), stored(new));
        Ok(ProviderOutcome {
            physical_id: id.to_string(),
            ..Default::default()
        })
    }
    async fn delete(&self, _: &ProviderContext, id: &str, _: &Value) -> Result<(), ProviderError> {
        self.0.held.lock().unwrap().remove(id);
        Ok(())
    }
    async fn read(
        &self,
        _: &ProviderContext,
        id: &str,
        _: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        Ok(self.0.held.lock().unwrap().get(id).map(|v| Observed {
            properties: v.as_object().cloned().unwrap_or_default(),
            attributes: Map::new(),
        }))
    }
}

struct Setup {
    engine: Engine,
    store: Arc<Store>,
    service: Arc<Service>,
}

fn setup() -> Setup {
    let store = Arc::new(Store::in_memory().unwrap());
    let fake = Arc::new(Fake::default());
    let service = Arc::new(Service::default());
    let mut reg = registry(&fake);
    reg.register(SPELLER, Arc::new(Speller(service.clone())));
    let world = Arc::new(FakeWorld::default());
    world
        .ssm
        .lock()
        .unwrap()
        .insert("/secret".into(), "s3cr3t-value".into());
    let engine = Engine::new(store.clone(), reg, world, config()).unwrap();
    Setup {
        engine,
        store,
        service,
    }
}

fn observed_on_disk(store: &Store) -> Value {
    let body: String = store
        .read(|c| {
            c.query_row(
                "SELECT body FROM cfn_resources WHERE logical_id = 'R'",
                [],
                |r| r.get(0),
            )
        })
        .unwrap();
    serde_json::from_str::<Value>(&body).unwrap()["observed"].clone()
}

async fn deploy(e: &Engine, props: Value, update: bool) {
    let c = caller("req");
    let body = template(
        json!({"R": {"Type": SPELLER, "Properties": props}}),
        json!({}),
    );
    let id = if update {
        e.update_stack(
            &c,
            UpdateStackInput {
                stack_name: "s".into(),
                template_body: Some(body),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .stack_id
    } else {
        e.create_stack(
            &c,
            CreateStackInput {
                stack_name: "s".into(),
                template_body: Some(body),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .stack_id
    };
    e.wait_for_stack(&id).await;
}

#[tokio::test]
async fn create_and_update_record_what_the_service_reports_and_drift_starts_from_it() {
    let s = setup();
    deploy(&s.engine, json!({"Protocol": "6", "Port": 80}), false).await;
    assert_eq!(
        observed_on_disk(&s.store),
        json!({"Protocol": "tcp", "Port": 80, "Mode": "standard"})
    );
    let c = caller("req");
    // The service's own spelling is what was observed at deploy time: not drift.
    let drift = s.engine.drift(&c, "s", Settle::Report, &[]).await.unwrap();
    assert_eq!(drift[0].status, "IN_SYNC", "{drift:?}");
    // A change made behind the stack's back is, measured from the observation.
    let id = s
        .service
        .held
        .lock()
        .unwrap()
        .keys()
        .next()
        .cloned()
        .unwrap();
    s.service.held.lock().unwrap().insert(
        id.clone(),
        json!({"Protocol": "udp", "Port": 80, "Mode": "standard"}),
    );
    let drift = s.engine.drift(&c, "s", Settle::Report, &[]).await.unwrap();
    assert_eq!(drift[0].status, "MODIFIED");
    let d = &drift[0].differences;
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        (
            d[0].path.as_str(),
            d[0].expected.clone(),
            d[0].actual.clone()
        ),
        ("Protocol", Some(json!("tcp")), Some(json!("udp")))
    );
    // An in-place update records a fresh observation.
    deploy(&s.engine, json!({"Protocol": "6", "Port": 81}), true).await;
    assert_eq!(
        observed_on_disk(&s.store),
        json!({"Protocol": "tcp", "Port": 81, "Mode": "standard"})
    );
    let drift = s.engine.drift(&c, "s", Settle::Report, &[]).await.unwrap();
    assert_eq!(drift[0].status, "IN_SYNC", "{drift:?}");
}

#[tokio::test]
async fn a_resolved_secret_is_observed_as_its_reference() {
    let s = setup();
    deploy(
        &s.engine,
        json!({"Password": "{{resolve:ssm:/secret}}"}),
        false,
    )
    .await;
    // The service holds the clear value; the state holds the reference.
    let id = s
        .service
        .held
        .lock()
        .unwrap()
        .keys()
        .next()
        .cloned()
        .unwrap();
    assert_eq!(
        s.service.held.lock().unwrap()[&id]["Password"],
        json!("s3cr3t-value")
    );
    assert_eq!(
        observed_on_disk(&s.store),
        json!({"Password": "{{resolve:ssm:/secret}}", "Mode": "standard"})
    );
    let drift = s
        .engine
        .drift(&caller("req"), "s", Settle::Report, &[])
        .await
        .unwrap();
    assert_eq!(drift[0].status, "IN_SYNC", "{drift:?}");
}
