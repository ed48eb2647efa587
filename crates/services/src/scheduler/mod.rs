//! Amazon EventBridge Scheduler (rest-json, signing name `scheduler`): schedules with
//! `at()`, `rate()` and `cron()` expressions, flexible time windows, start and end dates and
//! ActionAfterCompletion; schedule groups (the `default` one in every region) with tags.
//!
//! ENABLED schedules fire on the loop EventBridge's scheduled rules fire on
//! (`crate::schedule`), invoking their templated targets in-process (`fire`). Expressions are
//! evaluated in UTC: ScheduleExpressionTimezone is validated by shape, stored and reported,
//! but cumulo has no time zone database to shift firings by.
//!
//! Layout: `expression` (what Scheduler adds to the shared expression language), `state`
//! (records per region, written through to the store), `ops` (typed operations in the API's
//! JSON shape), `fire`, `wire` (routes the REST paths), `provider`.

mod expression;
mod fire;
mod ops;
pub(crate) mod provider;
mod state;
mod wire;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::events::EventsService;
use crate::lambda::LambdaService;
use crate::regional::Regional;
use crate::schedule::Timers;
use crate::sns::SnsService;
use crate::sqs::SqsService;
use crate::stepfunctions::StepFunctionsService;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::Region;
use std::sync::Arc;

/// The Scheduler service. Cheap to clone: the firing loop holds a clone.
#[derive(Clone)]
pub struct SchedulerService {
    inner: Arc<Inner>,
}

pub struct Inner {
    regions: Regional<Region>,
    account_id: String,
    /// Next firing of every ENABLED schedule, by (region, `<group>/<name>`).
    timers: Arc<Timers>,
    sqs: Arc<SqsService>,
    sns: Arc<SnsService>,
    lambda: Arc<LambdaService>,
    sfn: Arc<StepFunctionsService>,
    events: Arc<EventsService>,
}

impl std::ops::Deref for SchedulerService {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.inner
    }
}

/// The services a schedule's targets are invoked through.
pub type Targets = (
    Arc<SqsService>,
    Arc<SnsService>,
    Arc<LambdaService>,
    Arc<StepFunctionsService>,
    Arc<EventsService>,
);

impl SchedulerService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        (sqs, sns, lambda, sfn, events): Targets,
    ) -> Result<Self, StoreError> {
        let regions = Regional::open(store, "scheduler", state::MIGRATIONS, state::TABLE)?;
        let svc = SchedulerService {
            inner: Arc::new(Inner {
                regions,
                account_id: config.account_id.clone(),
                timers: Arc::default(),
                sqs,
                sns,
                lambda,
                sfn,
                events,
            }),
        };
        svc.reschedule_all();
        let firing = svc.clone();
        svc.timers
            .start(move |region, key, now| firing.fire(region, key, now));
        Ok(svc)
    }

    pub fn schedule_arn(&self, region: &str, group: &str, name: &str) -> String {
        format!(
            "arn:aws:scheduler:{region}:{}:schedule/{group}/{name}",
            self.account_id
        )
    }

    pub fn group_arn(&self, region: &str, name: &str) -> String {
        format!(
            "arn:aws:scheduler:{region}:{}:schedule-group/{name}",
            self.account_id
        )
    }
}

impl Catalogued for SchedulerService {
    const SERVICE: Descriptor = Descriptor {
        name: "scheduler",
        protocols: &[Wire::RestJson {
            paths: &["/schedules", "/schedule-groups"],
        }],
        ..Descriptor::BASE
    };
    type Deps = Targets;

    /// An ENABLED schedule fires from the loop the service starts.
    fn pending_work(store: &Store) -> bool {
        crate::catalog::store_has_row(
            store,
            "SELECT 1 FROM scheduler_records WHERE kind = 'schedule' \
             AND json_extract(doc, '$.state') = 'ENABLED' LIMIT 1",
        )
    }

    fn build(context: &Context, deps: Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config, deps)?)
    }
}

#[async_trait::async_trait]
impl Service for SchedulerService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
