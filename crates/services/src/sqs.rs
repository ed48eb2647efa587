//! sqs: placeholder until its issue fills it; every operation answers 501 naming itself.

use crate::{Config, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use std::sync::Arc;

pub struct SqsService {
    _store: Arc<Store>,
}

impl SqsService {
    pub fn new(store: Arc<Store>, _config: &Config) -> Result<Self, StoreError> {
        Ok(SqsService { _store: store })
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
        let _ = (queue_arn, body, message_attributes, group_id, dedup_id);
        Err(AwsError::not_implemented("sqs", "SendMessage"))
    }
}

#[async_trait::async_trait]
impl Service for SqsService {
    fn name(&self) -> &'static str {
        "sqs"
    }

    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        let op = req.target_operation().unwrap_or("unknown").to_string();
        AwsError::not_implemented("sqs", &op).into_response(Protocol::Json10, &req.request_id)
    }
}
