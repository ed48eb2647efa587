//! sqs: Amazon SQS — standard and FIFO queues, long polling, visibility, dead-letter redrive —
//! over both wire protocols SQS clients speak: awsJson1_0 (`X-Amz-Target: AmazonSQS.X`, current
//! SDKs; awsQueryCompatible error codes) and the older query protocol (form `Action=...`, XML).
//!
//! Layout: the typed operations (what SNS delivery and CloudFormation call) are methods of
//! [`SqsService`] taking [`model`] types — queue operations in [`ops`], message operations in
//! `messages`, AddPermission/RemovePermission in `permissions`, DLQ redrive tasks in
//! `move_tasks` — built on [`state`] (in-memory
//! queues with write-through to the store), `delivery` (the pure send/receive rules) and
//! [`attributes`] (queue attribute rules). `wire_json` and `wire_query` only decode requests and
//! encode responses; [`errors`] has every SQS error in both protocols' codes.

pub mod attributes;
mod delivery;
pub mod errors;
mod messages;
pub mod model;
mod move_tasks;
pub mod ops;
mod permissions;
pub(crate) mod provider;
pub mod state;
#[cfg(test)]
mod tests;
mod wire_json;
mod wire_query;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use model::{MessageAttributes, SendMessageInput};
use state::{Queue, QueueKey};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

pub use ops::Caller;

/// The SQS service: every queue of every region in memory, persisted through the store.
pub struct SqsService {
    store: Arc<Store>,
    /// One lock over all queues: redrive moves a message between two queues atomically, and
    /// each critical section is short (no I/O but the store commit, no awaiting).
    queues: Mutex<HashMap<QueueKey, Queue>>,
}

impl SqsService {
    pub fn new(store: Arc<Store>, _config: &Config) -> Result<Self, StoreError> {
        store.migrate("sqs", state::MIGRATIONS)?;
        store.write(|tx| state::delete_expired_dedup(tx, state::now_ms()))?;
        let (queues, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: sqs: skipped unreadable stored record: {p}");
        }
        Ok(SqsService {
            store,
            queues: Mutex::new(queues),
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<QueueKey, Queue>> {
        // State is replaced only once its write is committed or queued (the group commit takes
        // it in order), so a panic elsewhere cannot leave a half-applied change behind.
        self.queues.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The typed operation behind SendMessage, addressed by queue ARN: how SNS and EventBridge
    /// deliver (they never touch SQS's tables). `message_attributes` uses the JSON protocol's
    /// shape: `{"Name": {"DataType": "String", "StringValue": "v"}}`. Returns the message id.
    pub fn send_message_to_arn(
        &self,
        queue_arn: &str,
        body: &str,
        message_attributes: &serde_json::Value,
        group_id: Option<&str>,
        dedup_id: Option<&str>,
    ) -> Result<String, AwsError> {
        let input = SendMessageInput {
            body: body.to_string(),
            delay_seconds: None,
            message_attributes: wire_json::message_attributes(message_attributes)?,
            system_attributes: MessageAttributes::new(),
            group_id: group_id.map(str::to_string),
            dedup_id: dedup_id.map(str::to_string),
        };
        Ok(self.send_to_arn(queue_arn, &input)?.message_id)
    }
}

/// The error for an action the adapters do not know (every operation in botocore's SQS model is
/// dispatched, so this is a name SQS does not have).
fn unknown_operation(op: &str) -> AwsError {
    if op.is_empty() {
        AwsError::bad_request(
            "MissingAction",
            "The request must contain the parameter Action.",
        )
        .with_query_code("MissingAction")
    } else {
        AwsError::bad_request(
            "InvalidAction",
            format!("The action {op} is not valid for this web service."),
        )
        .with_query_code("InvalidAction")
    }
}

impl From<&AwsRequest> for Caller {
    fn from(req: &AwsRequest) -> Self {
        Caller {
            region: req.region.clone(),
            account_id: req.account_id.clone(),
            host: if req.host.is_empty() {
                "localhost:4566".to_string()
            } else {
                req.host.clone()
            },
            sender_id: req
                .access_key
                .clone()
                .unwrap_or_else(|| req.account_id.clone()),
        }
    }
}

impl Catalogued for SqsService {
    const SERVICE: Descriptor = Descriptor {
        name: "sqs",
        protocols: &[
            Wire::Json10 {
                target_prefix: "AmazonSQS",
            },
            Wire::Query {
                version: "2012-11-05",
                namespace: wire_query::NAMESPACE,
            },
        ],
        query_compatible: true,
        ..Descriptor::BASE
    };
    type Deps = ();

    fn build(context: &Context, (): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config)?)
    }
}

#[async_trait::async_trait]
impl Service for SqsService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        if req.header("x-amz-target").is_some() {
            wire_json::handle(self, &req).await
        } else {
            wire_query::handle(self, &req).await
        }
    }
}
