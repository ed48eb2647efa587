//! Amazon ECS (awsJson1_1, `AmazonEC2ContainerServiceV20141113.<Operation>`): clusters with
//! their capacity providers and settings, task definitions (families, revisions,
//! deregistration, Fargate sizes validated), services with deployments, events and counts,
//! tasks (RunTask, StopTask, Describe/List), tags and account settings.
//!
//! No container runs: a task is a record whose status moves PROVISIONING -> PENDING -> RUNNING
//! on a short clock (`lifecycle`), so waiters (`services_stable`, `tasks_running`) pass. A
//! service's tasks are registered in its Cloud Map services (`servicediscovery`).
//!
//! Layout: `state` (records per region, written through to the store), `ops` (typed
//! operations), `view` (records as the API answers them), `fargate` (Fargate's size table),
//! `network` (a task's ENI), `lifecycle` (a task's status from its timestamps), `wire`.

mod fargate;
mod lifecycle;
mod network;
mod operations;
mod ops;
pub(crate) mod provider;
mod state;
mod view;
mod wire;

pub use ops::{CreateClusterInput, ListTasksFilter, RunTaskInput, ServiceInput};

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::ec2::Ec2Service;
use crate::elasticloadbalancing::ElbService;
use crate::regional::Regional;
use crate::servicediscovery::ServiceDiscoveryService;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use state::Region;
use std::sync::Arc;

/// The ECS service.
pub struct EcsService {
    regions: Regional<Region>,
    account_id: String,
    discovery: Arc<ServiceDiscoveryService>,
    /// Where awsvpc tasks' network interfaces come from.
    ec2: Arc<Ec2Service>,
    /// Where a service's tasks are registered as targets.
    elb: Arc<ElbService>,
}

impl EcsService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        discovery: Arc<ServiceDiscoveryService>,
        ec2: Arc<Ec2Service>,
        elb: Arc<ElbService>,
    ) -> Result<Self, StoreError> {
        let regions = Regional::open(store, "ecs", state::MIGRATIONS, state::TABLE)?;
        Ok(EcsService {
            regions,
            account_id: config.account_id.clone(),
            discovery,
            ec2,
            elb,
        })
    }

    /// Runs `f`, with the time, over a copy of the region and commits the records it touched.
    fn mutate<T>(
        &self,
        region: &str,
        f: impl FnOnce(&mut Region, f64) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        self.regions.mutate(region, |r| f(r, ops::now_s()))
    }

    fn read<T>(&self, region: &str, f: impl FnOnce(&Region, f64) -> T) -> T {
        self.regions.read(region, |r| f(r, ops::now_s()))
    }

    pub fn cluster_arn(&self, region: &str, name: &str) -> String {
        format!("arn:aws:ecs:{region}:{}:cluster/{name}", self.account_id)
    }

    pub fn service_arn(&self, region: &str, cluster: &str, name: &str) -> String {
        format!(
            "arn:aws:ecs:{region}:{}:service/{cluster}/{name}",
            self.account_id
        )
    }

    pub fn task_arn(&self, region: &str, cluster: &str, id: &str) -> String {
        format!(
            "arn:aws:ecs:{region}:{}:task/{cluster}/{id}",
            self.account_id
        )
    }

    pub fn task_definition_arn(&self, region: &str, family: &str, revision: i64) -> String {
        format!(
            "arn:aws:ecs:{region}:{}:task-definition/{family}:{revision}",
            self.account_id
        )
    }
}

impl Catalogued for EcsService {
    const SERVICE: Descriptor = Descriptor {
        name: "ecs",
        protocols: &[Wire::Json11 {
            target_prefix: "AmazonEC2ContainerServiceV20141113",
        }],
        ..Descriptor::BASE
    };
    type Deps = (
        Arc<ServiceDiscoveryService>,
        Arc<Ec2Service>,
        Arc<ElbService>,
    );

    fn build(context: &Context, (discovery, ec2, elb): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(
            context.store.clone(),
            &context.config,
            discovery,
            ec2,
            elb,
        )?)
    }
}

#[async_trait::async_trait]
impl Service for EcsService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
