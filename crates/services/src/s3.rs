//! s3: placeholder until its issue fills it; every operation answers 501 naming itself.

use crate::{Config, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use std::sync::Arc;

pub struct S3Service {
    _store: Arc<Store>,
}

impl S3Service {
    pub fn new(store: Arc<Store>, _config: &Config) -> Result<Self, StoreError> {
        Ok(S3Service { _store: store })
    }
}

#[async_trait::async_trait]
impl Service for S3Service {
    fn name(&self) -> &'static str {
        "s3"
    }

    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        let op = req.target_operation().unwrap_or("unknown").to_string();
        AwsError::not_implemented("s3", &op).into_response(Protocol::RestXml, &req.request_id)
    }
}
