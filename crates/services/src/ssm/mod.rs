//! ssm: placeholder until its issue fills it; every operation answers 501 naming itself.

use crate::{Config, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use std::sync::Arc;

pub struct SsmService {
    _store: Arc<Store>,
}

impl SsmService {
    pub fn new(store: Arc<Store>, _config: &Config) -> Result<Self, StoreError> {
        Ok(SsmService { _store: store })
    }
}

#[async_trait::async_trait]
impl Service for SsmService {
    fn name(&self) -> &'static str {
        "ssm"
    }

    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        let op = req.target_operation().unwrap_or("unknown").to_string();
        AwsError::not_implemented("ssm", &op).into_response(Protocol::Json11, &req.request_id)
    }
}
