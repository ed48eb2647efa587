//! lambda: AWS Lambda without containers. Functions (zip packages, inline or from S3), versions,
//! aliases, resource policies, function URL configurations, tags, layers, SQS and DynamoDB
//! stream event source mappings, and Invoke — which really runs the handler, as a local `node` or `python3`
//! process talking to cumulo's own Lambda Runtime API (see `runtime`).
//!
//! Layout: typed operations are methods of [`Lambda`] (functions in `ops`, versions and aliases
//! in `versions`, policies/URLs/tags/concurrency in `config`, asynchronous invocation settings in
//! `invoke_config`, layers in `layers`, invocation in `invoke`, event source mappings in `esm`),
//! over [`state`] (in-memory documents written through to the store) and [`code`] (packages). `wire` decodes the REST-JSON requests and
//! encodes responses. [`LambdaService`] is what the gateway and CloudFormation hold.

pub mod code;
mod config;
mod esm;
mod esm_streams;
mod invoke;
mod invoke_config;
mod layers;
mod logging;
pub mod logs;
pub mod model;
mod names;
mod ops;
pub(crate) mod provider;
pub mod runtime;
pub mod state;
#[cfg(test)]
mod tests;
mod versions;
mod wire;

pub use invoke::InvocationType;
pub use names::function_arn;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::dynamodb::DynamoDbService;
use crate::logs::LogsService;
use crate::s3::S3Service;
use crate::sns::SnsService;
use crate::sqs::SqsService;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use state::State;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The Lambda service as the gateway holds it: a handle on the shared [`Lambda`] core, which
/// background work (unpacking packages, Event invocations, SQS pollers) also holds.
pub struct LambdaService {
    core: Arc<Lambda>,
}

impl std::ops::Deref for LambdaService {
    type Target = Lambda;
    fn deref(&self) -> &Lambda {
        &self.core
    }
}

pub struct Lambda {
    store: Arc<Store>,
    state: Mutex<State>,
    account_id: String,
    /// Where an invocation no request carries a host for (EventBridge's) sends its SDK calls.
    endpoint_host: String,
    base_dir: PathBuf,
    executor: runtime::Executor,
    s3: Arc<S3Service>,
    sqs: Arc<SqsService>,
    /// DynamoDB streams' event source mappings read through it.
    dynamodb: Arc<DynamoDbService>,
    /// Where a stream mapping's failed batches may go (`DestinationConfig.OnFailure`).
    sns: Arc<SnsService>,
    /// Running SQS pollers by mapping UUID; dropping the sender stops the poller.
    pollers: Mutex<HashMap<String, tokio::sync::watch::Sender<bool>>>,
}

impl LambdaService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        s3: Arc<S3Service>,
        sqs: Arc<SqsService>,
        logs: Arc<LogsService>,
        dynamodb: Arc<DynamoDbService>,
        sns: Arc<SnsService>,
    ) -> Result<Self, StoreError> {
        store.migrate("lambda", state::MIGRATIONS)?;
        let (loaded, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: lambda: skipped unreadable stored record: {p}");
        }
        let base_dir = code::base_dir(store.location());
        let logs = Arc::new(logs::LogSink::new(logs));
        let core = Arc::new(Lambda {
            store,
            state: Mutex::new(loaded),
            account_id: config.account_id.clone(),
            endpoint_host: config.endpoint_host.clone(),
            executor: runtime::Executor::new(base_dir.clone(), logs),
            base_dir,
            s3,
            sqs,
            dynamodb,
            sns,
            pollers: Mutex::new(HashMap::new()),
        });
        esm::start_all(&core);
        Ok(LambdaService { core })
    }

    /// The shared core, for work that outlives a request.
    pub fn core(&self) -> Arc<Lambda> {
        self.core.clone()
    }
}

impl Lambda {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Memory changes only after a successful commit; a panic elsewhere leaves it usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn account_id(&self) -> &str {
        &self.account_id
    }
}

/// A store failure as the 500 Lambda answers with.
fn store_error(e: impl std::fmt::Display) -> AwsError {
    AwsError::new(
        http::StatusCode::INTERNAL_SERVER_ERROR,
        "ServiceException",
        format!("cumulo: the store refused the change: {e}"),
    )
}

impl Catalogued for LambdaService {
    const SERVICE: Descriptor = Descriptor {
        name: "lambda",
        // The dated paths name Lambda for unsigned requests (else they would be taken for S3
        // requests on a bucket named like a date).
        protocols: &[Wire::RestJson {
            paths: &[
                "/2015-03-31/functions",
                "/2015-03-31/event-source-mappings",
                "/2017-03-31/tags/",
                "/2017-10-31/functions/",
                "/2018-10-31/layers",
                "/2019-09-25/functions/",
                "/2019-09-30/functions/",
                "/2021-10-31/functions/",
            ],
        }],
        ..Descriptor::BASE
    };
    type Deps = (
        Arc<S3Service>,
        Arc<SqsService>,
        Arc<LogsService>,
        Arc<DynamoDbService>,
        Arc<SnsService>,
    );

    fn build(
        context: &Context,
        (s3, sqs, logs, dynamodb, sns): Self::Deps,
    ) -> Result<Self, GatewayError> {
        Ok(Self::new(
            context.store.clone(),
            &context.config,
            s3,
            sqs,
            logs,
            dynamodb,
            sns,
        )?)
    }

    /// An enabled event source mapping has a poller to run.
    fn pending_work(store: &Store) -> bool {
        crate::catalog::store_has_row(
            store,
            "SELECT 1 FROM lambda_esm WHERE json_extract(data, '$.enabled') LIMIT 1",
        )
    }
}

#[async_trait::async_trait]
impl Service for LambdaService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(&self.core, req).await
    }
}
