//! sns: placeholder until its issue fills it; every operation answers 501 naming itself.

use crate::{Config, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use std::sync::Arc;

pub struct SnsService {
    _store: Arc<Store>,
}

impl SnsService {
    pub fn new(store: Arc<Store>, _config: &Config) -> Result<Self, StoreError> {
        Ok(SnsService { _store: store })
    }
}

#[async_trait::async_trait]
impl Service for SnsService {
    fn name(&self) -> &'static str {
        "sns"
    }

    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        let op = req.target_operation().unwrap_or("unknown").to_string();
        AwsError::not_implemented("sns", &op)
            .into_response(Protocol::Query("https://example.invalid/"), &req.request_id)
    }
}
