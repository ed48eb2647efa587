//! Amazon EventBridge (awsJson1_1, `AWSEvents.<Operation>`): event buses, rules with event
//! patterns or schedules, targets, PutEvents and TestEventPattern.
//!
//! Layout: typed operations on buses, rules and targets in `ops`; PutEvents, the input
//! transformations and delivery to targets (SQS, SNS and CloudWatch Logs in-process through
//! their typed operations) in `put`; the pattern language in `pattern`; scheduled rules fire
//! from the loop and expressions shared with EventBridge Scheduler (`crate::schedule`); `state`
//! keeps everything in memory with write-through to the store; `wire` decodes and encodes.

mod operations;
mod ops;
mod pattern;
pub use pattern::Pattern;
pub(crate) mod provider;
mod put;
mod state;
mod wire;

pub use ops::{PutRuleInput, TargetFailure};
pub use put::{PutEventsEntry, PutEventsResult};
pub use state::{Bus, InputTransformer, Rule, Target};

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::lambda::LambdaService;
use crate::logs::LogsService;
use crate::schedule::Timers;
use crate::sns::SnsService;
use crate::sqs::SqsService;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::Regions;
use std::sync::{Arc, Mutex, MutexGuard};

/// The EventBridge service. Cheap to clone: the scheduler task holds a clone.
#[derive(Clone)]
pub struct EventsService {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<Store>,
    regions: Mutex<Regions>,
    /// Next firing of every enabled scheduled rule, by (region, rule name).
    timers: Arc<Timers>,
    account_id: String,
    sqs: Arc<SqsService>,
    sns: Arc<SnsService>,
    logs: Arc<LogsService>,
    /// Lambda targets are invoked through it (asynchronously, as EventBridge invokes them).
    lambda: Arc<LambdaService>,
}

impl EventsService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        sqs: Arc<SqsService>,
        sns: Arc<SnsService>,
        logs: Arc<LogsService>,
        lambda: Arc<LambdaService>,
    ) -> Result<Self, StoreError> {
        store.migrate("events", state::MIGRATIONS)?;
        let (regions, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: events: skipped unreadable stored record: {p}");
        }
        let svc = EventsService {
            inner: Arc::new(Inner {
                store,
                regions: Mutex::new(regions),
                timers: Arc::default(),
                account_id: config.account_id.clone(),
                sqs,
                sns,
                logs,
                lambda,
            }),
        };
        svc.reschedule_all();
        let firing = svc.clone();
        svc.inner
            .timers
            .start(move |region, name, now| firing.fire(region, name, now));
        Ok(svc)
    }

    fn lock(&self) -> MutexGuard<'_, Regions> {
        self.inner.regions.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn account(&self) -> &str {
        &self.inner.account_id
    }

    pub fn bus_arn(&self, region: &str, bus: &str) -> String {
        format!("arn:aws:events:{region}:{}:event-bus/{bus}", self.account())
    }

    /// `rule/NAME` on the default bus, `rule/BUS/NAME` on any other, as AWS forms them.
    pub fn rule_arn(&self, region: &str, bus: &str, name: &str) -> String {
        if bus == state::DEFAULT_BUS {
            format!("arn:aws:events:{region}:{}:rule/{name}", self.account())
        } else {
            format!(
                "arn:aws:events:{region}:{}:rule/{bus}/{name}",
                self.account()
            )
        }
    }
}

impl Catalogued for EventsService {
    const SERVICE: Descriptor = Descriptor {
        name: "events",
        protocols: &[Wire::Json11 {
            target_prefix: "AWSEvents",
        }],
        ..Descriptor::BASE
    };

    /// An enabled scheduled rule fires from the scheduler the service starts.
    fn pending_work(store: &Store) -> bool {
        crate::catalog::store_has_row(
            store,
            "SELECT 1 FROM events_rules WHERE json_extract(doc, '$.schedule') IS NOT NULL \
             AND json_extract(doc, '$.state') LIKE 'ENABLED%' LIMIT 1",
        )
    }
    type Deps = (
        Arc<SqsService>,
        Arc<SnsService>,
        Arc<LogsService>,
        Arc<LambdaService>,
    );

    fn build(
        context: &Context,
        (sqs, sns, logs, lambda): Self::Deps,
    ) -> Result<Self, GatewayError> {
        Ok(Self::new(
            context.store.clone(),
            &context.config,
            sqs,
            sns,
            logs,
            lambda,
        )?)
    }
}

#[async_trait::async_trait]
impl Service for EventsService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
