//! Amazon ECR (awsJson1_1, `AmazonEC2ContainerRegistry_V20150921.<Operation>`): repositories
//! with their settings, policies, lifecycle policies and tags, and image manifests (PutImage,
//! BatchGetImage, DescribeImages, ListImages, BatchDeleteImage).
//!
//! What is not emulated: image layers. cumulo has no registry endpoint, so `docker push`/`pull`
//! cannot reach it and the layer operations (InitiateLayerUpload, UploadLayerPart,
//! CompleteLayerUpload, BatchCheckLayerAvailability, GetDownloadUrlForLayer) answer 501 saying
//! so; PutImage stores a manifest without requiring its layers. Lifecycle policies are applied
//! on every push (`lifecycle`).
//!
//! Layout: typed operations in `ops` over `state` (repositories in memory per region, written
//! through to the store whole); `lifecycle` expires images; `wire` decodes and encodes.

mod lifecycle;
mod operations;
mod ops;
pub(crate) mod provider;
mod state;
mod wire;

pub use ops::{CreateRepositoryInput, ImageId, ImageOutcome};
pub use state::{Image, Repository};

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::Regions;
use std::sync::{Arc, Mutex, MutexGuard};

/// The ECR service.
pub struct EcrService {
    store: Arc<Store>,
    regions: Mutex<Regions>,
    account_id: String,
}

impl EcrService {
    pub fn new(store: Arc<Store>, config: &Config) -> Result<Self, StoreError> {
        store.migrate("ecr", state::MIGRATIONS)?;
        let (regions, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: ecr: skipped unreadable stored record: {p}");
        }
        Ok(EcrService {
            store,
            regions: Mutex::new(regions),
            account_id: config.account_id.clone(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Regions> {
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn registry_id(&self) -> &str {
        &self.account_id
    }

    pub fn repository_arn(&self, region: &str, name: &str) -> String {
        format!("arn:aws:ecr:{region}:{}:repository/{name}", self.account_id)
    }

    /// `ACCOUNT.dkr.ecr.REGION.amazonaws.com/NAME`, as AWS reports it.
    pub fn repository_uri(&self, region: &str, name: &str) -> String {
        format!("{}.dkr.ecr.{region}.amazonaws.com/{name}", self.account_id)
    }
}

impl Catalogued for EcrService {
    const SERVICE: Descriptor = Descriptor {
        name: "ecr",
        protocols: &[Wire::Json11 {
            target_prefix: "AmazonEC2ContainerRegistry_V20150921",
        }],
        ..Descriptor::BASE
    };
    type Deps = ();

    fn build(context: &Context, (): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config)?)
    }
}

#[async_trait::async_trait]
impl Service for EcrService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
