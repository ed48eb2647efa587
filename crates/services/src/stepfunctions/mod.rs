//! AWS Step Functions (awsJson1_0, `AWSStepFunctions.<Operation>`): state machines (STANDARD
//! and EXPRESS) with their versions and aliases, activities, tags, and executions that really
//! run — the Amazon States Language interpreter (`asl`) on the server's runtime, its Task
//! states reaching Lambda, SQS, SNS, DynamoDB, EventBridge, ECS, S3 and Step Functions itself
//! in-process (`integrations`), and every other emulated service through its own adapter
//! (`sdk`, `rest` for rest-json, `rest_xml` for rest-xml).
//!
//! Layout: `state` (records and their store tables), `ops` (typed operations on machines,
//! versions, aliases, activities, tags), `executions` (start, stop, describe, list, history,
//! the runner and resuming after a restart), `tokens` (task tokens and activity task queues),
//! `integrations` (Task resources), `wire` (the JSON 1.0 adapter), `provider` (CloudFormation).
//!
//! A STANDARD execution's history is written through event by event; the execution resumes
//! after a restart from the last top-level state it entered (that state runs again: a Task
//! in flight at the restart is called again). EXPRESS executions are kept in memory only, as
//! AWS keeps no history of them.

pub mod asl;
mod executions;
mod integrations;
mod ops;
pub(crate) mod provider;
mod rest;
mod rest_routes;
mod rest_xml;
mod sdk;
mod state;
mod tokens;
mod wire;

pub use executions::StartInput;
pub use ops::{AliasInput, CreateMachineInput, UpdateMachineInput};

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::dynamodb::DynamoDbService;
use crate::ecs::EcsService;
use crate::events::EventsService;
use crate::lambda::LambdaService;
use crate::s3::S3Service;
use crate::sns::SnsService;
use crate::sqs::SqsService;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use std::sync::{Arc, Mutex, MutexGuard};

/// The Step Functions service (a handle on its shared core, which running executions hold).
pub struct StepFunctionsService {
    core: Arc<Sfn>,
}

impl std::ops::Deref for StepFunctionsService {
    type Target = Arc<Sfn>;
    fn deref(&self) -> &Arc<Sfn> {
        &self.core
    }
}

/// The services Task states reach.
pub struct Peers {
    pub lambda: Arc<LambdaService>,
    pub sqs: Arc<SqsService>,
    pub sns: Arc<SnsService>,
    pub dynamodb: Arc<DynamoDbService>,
    pub events: Arc<EventsService>,
    pub ecs: Arc<EcsService>,
    pub s3: Arc<S3Service>,
    /// Every other service, reached at call time by an `aws-sdk:` Task (not a build
    /// dependency: that would build every service with Step Functions).
    pub catalog: std::sync::Weak<crate::catalog::Catalog>,
}

pub struct Sfn {
    store: Arc<Store>,
    state: Mutex<state::State>,
    account_id: String,
    endpoint_host: String,
    peers: Peers,
    tokens: tokens::Tokens,
    running: executions::Running,
}

impl StepFunctionsService {
    pub fn new(store: Arc<Store>, config: &Config, peers: Peers) -> Result<Self, StoreError> {
        store.migrate("stepfunctions", state::MIGRATIONS)?;
        let (loaded, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: stepfunctions: skipped unreadable stored record: {p}");
        }
        let core = Arc::new(Sfn {
            store,
            state: Mutex::new(loaded),
            account_id: config.account_id.clone(),
            endpoint_host: config.endpoint_host.clone(),
            peers,
            tokens: tokens::Tokens::default(),
            running: executions::Running::default(),
        });
        executions::resume_all(&core);
        Ok(StepFunctionsService { core })
    }
}

impl Sfn {
    fn lock(&self) -> MutexGuard<'_, state::State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn account_id(&self) -> &str {
        &self.account_id
    }

    pub fn machine_arn(&self, region: &str, name: &str) -> String {
        format!(
            "arn:aws:states:{region}:{}:stateMachine:{name}",
            self.account_id
        )
    }

    pub fn activity_arn(&self, region: &str, name: &str) -> String {
        format!(
            "arn:aws:states:{region}:{}:activity:{name}",
            self.account_id
        )
    }
}

impl Catalogued for StepFunctionsService {
    const SERVICE: Descriptor = Descriptor {
        name: "states",
        protocols: &[Wire::Json10 {
            target_prefix: "AWSStepFunctions",
        }],
        ..Descriptor::BASE
    };
    const STORE_OWNER: &'static str = "stepfunctions";

    /// A running execution resumes when the service is built.
    fn pending_work(store: &Store) -> bool {
        crate::catalog::store_has_row(
            store,
            "SELECT 1 FROM sfn_executions WHERE json_extract(doc, '$.status') = 'RUNNING' LIMIT 1",
        )
    }
    type Deps = (
        Arc<LambdaService>,
        Arc<SqsService>,
        Arc<SnsService>,
        Arc<DynamoDbService>,
        Arc<EventsService>,
        Arc<EcsService>,
        Arc<S3Service>,
    );

    fn build(
        context: &Context,
        (lambda, sqs, sns, dynamodb, events, ecs, s3): Self::Deps,
    ) -> Result<Self, GatewayError> {
        let peers = Peers {
            lambda,
            sqs,
            sns,
            dynamodb,
            events,
            ecs,
            s3,
            catalog: context.catalog.clone(),
        };
        Ok(Self::new(context.store.clone(), &context.config, peers)?)
    }
}

#[async_trait::async_trait]
impl Service for StepFunctionsService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(&self.core, &req).await
    }
}
