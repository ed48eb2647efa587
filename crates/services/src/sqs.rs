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
