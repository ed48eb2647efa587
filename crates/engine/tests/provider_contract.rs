//! The engine honours seed 002's provider contract: NoEcho attributes reach dependents in clear
//! but are masked in everything written down (and a later write that would need the clear
//! value refuses), effective properties are recorded with their canonical twin, and drift
//! compares the record with what the provider reads back.

mod support;

use cumulo_engine::*;
use cumulo_store::Store;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use support::*;

const SECRET: &str = "Test::Fake::Secret";
const NARROW: &str = "Test::Fake::Narrow";
const PASSWORD: &str = "hunter2-very-secret";

/// Reports a sensitive `Password` attribute beside an ordinary `Name`.
struct SecretProvider;

#[async_trait::async_trait]
impl Provider for SecretProvider {
    async fn create(
        &self,
        ctx: &ProviderContext,
        _: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        Ok(ProviderOutcome {
            physical_id: ctx.generated_name(64, ""),
            attributes: Map::from_iter([
                ("Password".to_string(), json!(PASSWORD)),
                ("Name".to_string(), json!("plain-name")),
            ]),
            no_echo_attributes: vec!["Password".into()],
            ..Default::default()
        })
    }
    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let mut out = self.create(ctx, new).await?;
        out.physical_id = id.to_string();
        Ok(out)
    }
    async fn delete(&self, _: &ProviderContext, _: &str, _: &Value) -> Result<(), ProviderError> {
        Ok(())
    }
}

/// Sends everything but `Extra` (a deliberate narrowing), so it records the narrowed bag and
/// canonicalizes the same way; reads back what it holds.
#[derive(Default)]
struct NarrowProvider {
    held: Mutex<HashMap<String, Value>>,
    updates: Mutex<usize>,
}

fn narrow(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(o) = v.as_object_mut() {
        o.remove("Extra");
    }
    v
}

struct Narrow(Arc<NarrowProvider>);

#[async_trait::async_trait]
impl Provider for Narrow {
    async fn create(
        &self,
        ctx: &ProviderContext,
        p: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let id = ctx.generated_name(64, "");
        let sent = narrow(p);
        self.0.held.lock().unwrap().insert(id.clone(), sent.clone());
        Ok(ProviderOutcome {
            physical_id: id,
            effective_properties: Some(sent),
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
        *self.0.updates.lock().unwrap() += 1;
        let sent = narrow(new);
        self.0
            .held
            .lock()
            .unwrap()
            .insert(id.to_string(), sent.clone());
        Ok(ProviderOutcome {
            physical_id: id.to_string(),
            effective_properties: Some(sent),
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
    fn canonicalize(&self, properties: Value) -> Value {
        narrow(&properties)
    }
}

fn engine(store: Arc<Store>, fake: &Arc<support::Fake>, narrow: &Arc<NarrowProvider>) -> Engine {
    let mut reg = registry(fake);
    reg.register(SECRET, Arc::new(SecretProvider));
    reg.register(NARROW, Arc::new(Narrow(narrow.clone())));
    Engine::new(store, reg, Arc::new(FakeWorld::default()), config()).unwrap()
}

fn stored_text(store: &Store) -> String {
    store
        .read(|c| {
            let mut out = String::new();
            for table in ["cfn_stacks", "cfn_previous", "cfn_resources", "cfn_events"] {
                let mut st = c.prepare(&format!("SELECT body FROM {table}"))?;
                let rows = st.query_map([], |r| r.get::<_, String>(0))?;
                for r in rows {
                    out.push_str(&r?);
                }
            }
            Ok(out)
        })
        .unwrap()
}

fn secret_template(extra: &str) -> String {
    secret_template_with(extra, json!({}))
}

/// The secret and its dependent `User`, plus `more` resources.
fn secret_template_with(extra: &str, more: Value) -> String {
    let mut resources = json!({
        "S": {"Type": SECRET},
        "User": {"Type": FAKE, "Properties": {
            "Name": "user", "Secret": {"Fn::Join": ["", ["pw=", {"Fn::GetAtt": ["S", "Password"]}]]},
            "Other": extra,
            "Plain": {"Fn::GetAtt": ["S", "Name"]}}}
    });
    if let (Some(all), Some(more)) = (resources.as_object_mut(), more.as_object()) {
        all.extend(more.clone());
    }
    template(
        resources,
        json!({"Pw": {"Value": {"Fn::GetAtt": ["S", "Password"]}}}),
    )
}

async fn create(e: &Engine, name: &str, body: String) {
    let c = caller("req");
    let id = e
        .create_stack(
            &c,
            CreateStackInput {
                stack_name: name.into(),
                template_body: Some(body),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .stack_id;
    e.wait_for_stack(&id).await;
}

/// Updates a stack to `body` and waits for the update to end; the stack's id.
async fn update(
    e: &Engine,
    c: &Caller,
    name: &str,
    body: String,
    disable_rollback: bool,
) -> String {
    let id = e
        .update_stack(
            c,
            UpdateStackInput {
                stack_name: name.into(),
                template_body: Some(body),
                disable_rollback: disable_rollback.then_some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap()
        .stack_id;
    e.wait_for_stack(&id).await;
    id
}

async fn status(e: &Engine, name: &str) -> StackView {
    e.describe_stacks(
        &caller("req"),
        DescribeStacksInput {
            stack_name: Some(name.into()),
            next_token: None,
        },
    )
    .await
    .unwrap()
    .stacks
    .remove(0)
}

#[tokio::test]
async fn no_echo_values_reach_dependents_in_clear_and_are_masked_on_disk() {
    let store = Arc::new(Store::in_memory().unwrap());
    let fake = Arc::new(support::Fake::default());
    let narrow = Arc::new(NarrowProvider::default());
    let e = engine(store.clone(), &fake, &narrow);
    create(&e, "s", secret_template("1")).await;
    assert_eq!(
        status(&e, "s").await.stack_status,
        StackStatus::CREATE_COMPLETE
    );
    // The dependent received the clear value.
    assert_eq!(
        fake.props("user").unwrap()["Secret"],
        json!(format!("pw={PASSWORD}"))
    );
    assert_eq!(fake.props("user").unwrap()["Plain"], json!("plain-name"));
    // Nothing written down carries it: not the attribute, the dependent's properties, the
    // events, nor the output.
    let text = stored_text(&store);
    assert!(!text.contains(PASSWORD), "the secret was written down");
    assert!(
        text.contains("pw=***"),
        "the dependent's recorded properties are masked"
    );
    assert!(
        text.contains("plain-name"),
        "ordinary members are not masked"
    );

    // A restarted engine only has the mask: an unchanged dependent is fine...
    let e = engine(store.clone(), &fake, &narrow);
    assert_eq!(status(&e, "s").await.outputs[0].value, "***");
    // ...but a change that would resend the masked value refuses instead of sending `***`.
    let c = caller("req2");
    update(&e, &c, "s", secret_template("2"), false).await;
    let after = status(&e, "s").await;
    assert_eq!(after.stack_status, StackStatus::UPDATE_ROLLBACK_COMPLETE);
    let events = e
        .describe_stack_events(
            &c,
            DescribeStackEventsInput {
                stack_name: "s".into(),
                next_token: None,
            },
        )
        .await
        .unwrap()
        .stack_events;
    assert!(events.iter().any(|ev| {
        ev.logical_resource_id == "User"
            && ev.resource_status == "UPDATE_FAILED"
            && ev
                .resource_status_reason
                .as_deref()
                .is_some_and(|r| r.contains("NoEcho"))
    }));
    assert_eq!(
        fake.props("user").unwrap()["Secret"],
        json!(format!("pw={PASSWORD}")),
        "the mask was never sent"
    );
}

/// An update keeps the stack's previous generation (template, outputs, every resource) in
/// `cfn_previous` until it ends; a failed update with rollback disabled keeps it there. Its
/// sensitive values are masked like the current generation's, and a rollback after a restart,
/// which then only has the mask, refuses to send it.
#[tokio::test]
async fn the_previous_generation_kept_by_an_update_is_masked_on_disk() {
    let store = Arc::new(Store::in_memory().unwrap());
    let fake = Arc::new(support::Fake::default());
    let narrow = Arc::new(NarrowProvider::default());
    let e = engine(store.clone(), &fake, &narrow);
    create(&e, "p", secret_template("1")).await;
    // User is updated in place (with the clear value), then Bad fails the update.
    let failing = secret_template_with(
        "2",
        json!({"Bad": {"Type": FAKE, "DependsOn": "User", "Properties": {"Name": "bad", "Fail": true}}}),
    );
    let c = caller("req2");
    let id = update(&e, &c, "p", failing, true).await;
    assert_eq!(
        status(&e, "p").await.stack_status,
        StackStatus::UPDATE_FAILED
    );
    assert_eq!(fake.props("user").unwrap()["Other"], json!("2"));
    let text = stored_text(&store);
    let kept: i64 = store
        .read(|c| c.query_row("SELECT count(*) FROM cfn_previous", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(kept, 1, "the failed update keeps the previous generation");
    assert!(!text.contains(PASSWORD), "the secret was written down");

    // Restarted, the engine has only the mask of the previous generation's value.
    let e = engine(store.clone(), &fake, &narrow);
    let c = caller("req3");
    e.rollback_stack(
        &c,
        RollbackStackInput {
            stack_name: "p".into(),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    e.wait_for_stack(&id).await;
    let after = status(&e, "p").await;
    assert_eq!(after.stack_status, StackStatus::UPDATE_ROLLBACK_FAILED);
    assert!(
        after
            .stack_status_reason
            .as_deref()
            .is_some_and(|r| r.contains("User")),
        "{after:?}"
    );
    assert_eq!(
        fake.props("user").unwrap()["Secret"],
        json!(format!("pw={PASSWORD}")),
        "the mask was never sent"
    );
}

#[tokio::test]
async fn effective_properties_are_recorded_and_compared_canonically() {
    let store = Arc::new(Store::in_memory().unwrap());
    let fake = Arc::new(support::Fake::default());
    let narrow = Arc::new(NarrowProvider::default());
    let e = engine(store.clone(), &fake, &narrow);
    let body = template(
        json!({"N": {"Type": NARROW, "Properties": {"Keep": "a", "Extra": "dropped"}}}),
        json!({}),
    );
    create(&e, "n", body.clone()).await;
    let c = caller("req");
    // The record is what was sent, so drift finds nothing...
    let drift = e.drift(&c, "n", Settle::Report, &[]).await.unwrap();
    assert_eq!(drift[0].status, "IN_SYNC", "{drift:?}");
    // ...and the unchanged template is no change (both sides canonical).
    let diff = e
        .diff(
            &c,
            DiffInput {
                stack_name: "n".into(),
                template: body.replace("\"a\"", "\"a\" "),
                parameters: vec![],
            },
        )
        .unwrap();
    assert!(diff.is_empty(), "{diff:?}");
    let changed = body.replace("dropped", "also-dropped");
    update(&e, &c, "n", changed, false).await;
    assert_eq!(
        *narrow.updates.lock().unwrap(),
        0,
        "a change to what is never sent updates nothing"
    );
    // A real change is still one, and drift then sees the live change made behind its back.
    let changed = body.replace("\"a\"", "\"b\"");
    let diff = e
        .diff(
            &c,
            DiffInput {
                stack_name: "n".into(),
                template: changed.clone(),
                parameters: vec![],
            },
        )
        .unwrap();
    assert_eq!(diff[0].action, "update");
    assert_eq!(diff[0].properties[0].name, "Keep");
    let held_id = narrow.held.lock().unwrap().keys().next().cloned().unwrap();
    narrow
        .held
        .lock()
        .unwrap()
        .insert(held_id.clone(), json!({"Keep": "live"}));
    let drift = e.drift(&c, "n", Settle::Revert, &[]).await.unwrap();
    assert_eq!(drift[0].status, "MODIFIED");
    assert_eq!(drift[0].differences[0].path, "Keep");
    assert_eq!(
        narrow.held.lock().unwrap()[&held_id],
        json!({"Keep": "a"}),
        "reverted"
    );
    assert_eq!(
        e.drift(&c, "n", Settle::Report, &[]).await.unwrap()[0].status,
        "IN_SYNC"
    );
}
