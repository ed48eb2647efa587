//! Amazon EFS (rest-json, `/2015-02-01/...`, signing name `elasticfilesystem`): file systems
//! (creating → available, CreationToken idempotency, performance and throughput modes,
//! encryption, backup policy, replication overwrite protection, file system policies, lifecycle
//! configuration), mount targets (one per Availability Zone, all in one VPC, each with a
//! requester-managed network interface and IP address drawn from its subnet by EC2), access
//! points and tags.
//!
//! No NFS server runs: a file system stores no data and reports a fixed metered size. A new
//! file system or mount target is `creating` until its first Describe, as the SDK's waiters
//! poll it.
//!
//! Layout: `state` (records per region, written through to the store), `ops` (typed operations
//! answering in the API's JSON shape), `wire` (routes the REST paths), `provider`.

mod ops;
pub(crate) mod provider;
mod state;
mod wire;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::ec2::Ec2Service;
use crate::regional::Regional;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::Region;
use std::sync::Arc;

/// The EFS service.
pub struct EfsService {
    regions: Regional<Region>,
    account_id: String,
    ec2: Arc<Ec2Service>,
}

impl EfsService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        ec2: Arc<Ec2Service>,
    ) -> Result<Self, StoreError> {
        let regions = Regional::open(store, "efs", state::MIGRATIONS, state::TABLE)?;
        Ok(EfsService {
            regions,
            account_id: config.account_id.clone(),
            ec2,
        })
    }

    pub fn file_system_arn(&self, region: &str, id: &str) -> String {
        format!(
            "arn:aws:elasticfilesystem:{region}:{}:file-system/{id}",
            self.account_id
        )
    }

    pub fn access_point_arn(&self, region: &str, id: &str) -> String {
        format!(
            "arn:aws:elasticfilesystem:{region}:{}:access-point/{id}",
            self.account_id
        )
    }
}

impl Catalogued for EfsService {
    const SERVICE: Descriptor = Descriptor {
        name: "elasticfilesystem",
        protocols: &[Wire::RestJson {
            paths: &["/2015-02-01/"],
        }],
        ..Descriptor::BASE
    };
    const STORE_OWNER: &'static str = "efs";
    type Deps = (Arc<Ec2Service>,);

    fn build(context: &Context, (ec2,): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config, ec2)?)
    }
}

#[async_trait::async_trait]
impl Service for EfsService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
