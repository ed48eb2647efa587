//! Amazon CloudWatch metrics, alarms and dashboards, in every protocol its model lists: Smithy
//! RPC v2 CBOR (newer SDKs), awsJson1_0 (botocore 1.43, the AWS CLI) and awsQuery (older SDKs).
//!
//! Layout: `wire` decodes each protocol into JSON in the API's member names and encodes
//! answers; `ops` is AWS's logic over those values (the typed operations other services and
//! the providers call through [`CloudWatchService::call`]); `metrics` stores datapoints and
//! computes statistics; `queries` runs MetricDataQueries and `math` their expressions;
//! `alarms` evaluates metric, metric-math and composite alarms; `state` keeps it all.
//!
//! What differs from AWS: alarm actions (SNS, Auto Scaling, EC2) are recorded, not executed;
//! an alarm is evaluated when it is read or data arrives for its metric (at most once a minute
//! otherwise), not on a clock; datapoints are kept until deleted with the data directory.

mod alarms;
mod math;
mod metrics;
mod ops;
pub(crate) mod provider;
mod queries;
mod state;
pub mod target_tracking;
pub(crate) mod wire;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde_json::Value;
use state::State;
use std::sync::{Arc, Mutex};

/// The CloudWatch service.
pub struct CloudWatchService {
    store: Arc<Store>,
    state: Mutex<State>,
    account_id: String,
}

impl CloudWatchService {
    pub fn new(store: Arc<Store>, config: &Config) -> Result<Self, StoreError> {
        store.migrate("cloudwatch", state::MIGRATIONS)?;
        let (state, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: cloudwatch: skipped unreadable stored record: {p}");
        }
        Ok(CloudWatchService {
            store,
            state: Mutex::new(state),
            account_id: config.account_id.clone(),
        })
    }

    /// Calls one operation with its input in the API's member names and answers its output,
    /// after writing what it changed. An operation cumulo does not implement answers 501.
    pub fn call(&self, region: &str, operation: &str, input: &Value) -> Result<Value, AwsError> {
        let now = chrono::Utc::now().timestamp_millis() as f64 / 1000.0;
        let call = ops::Call {
            region,
            account: &self.account_id,
            now,
        };
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let mut writes = Vec::new();
        let out = ops::dispatch(&mut state, &call, operation, input, &mut writes)
            .unwrap_or_else(|| Err(AwsError::not_implemented("cloudwatch", operation)));
        if !writes.is_empty() {
            self.store
                .write(|tx| state::save(tx, &writes))
                .map_err(|e| AwsError::internal(e.to_string()))?;
        }
        out
    }

    /// The ARN of an alarm.
    pub fn alarm_arn(&self, region: &str, name: &str) -> String {
        format!(
            "arn:aws:cloudwatch:{region}:{}:alarm:{name}",
            self.account_id
        )
    }

    /// The operation's input with every scalar in the type the model gives it (CloudFormation
    /// properties arrive as strings where parameters fed them).
    pub(crate) fn coerce(operation: &str, input: Value) -> Value {
        match wire::model() {
            Ok(m) => m.coerce(operation, input),
            Err(_) => input,
        }
    }
}

impl Catalogued for CloudWatchService {
    const SERVICE: Descriptor = Descriptor {
        name: "monitoring",
        protocols: &[
            Wire::RpcV2Cbor {
                service: wire::TARGET_PREFIX,
            },
            Wire::Json10 {
                target_prefix: wire::TARGET_PREFIX,
            },
            Wire::Query {
                version: wire::VERSION,
                namespace: wire::NS,
            },
        ],
        query_compatible: true,
        ..Descriptor::BASE
    };
    const STORE_OWNER: &'static str = "cloudwatch";
    type Deps = ();

    fn build(context: &Context, (): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config)?)
    }
}

#[async_trait::async_trait]
impl Service for CloudWatchService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
