//! Amazon EC2's networking (the `ec2` protocol, Version 2016-11-15): VPCs, subnets, security
//! groups and their rules, route tables, internet gateways, elastic IPs, NAT gateways and
//! network interfaces, with tags and the `Filter.N` grammar on every Describe.
//!
//! Each region starts as a new AWS account's does, with a default VPC (172.31.0.0/16, a default
//! /20 subnet per availability zone, an attached internet gateway, the main route table routing
//! 0.0.0.0/0 to it, the default security group), made on the region's first use and kept.
//! Nothing carries packets: the records are what the API reports, and what other services
//! (load balancers, tasks, mount targets) draw subnets, groups and private addresses from.
//!
//! Layout: `model` (the records), `cidr` (block arithmetic), `ops` (typed operations over one
//! region's records, written through to `ec2_resources` before answering), `filters` (the
//! Describe filter grammar, declared per kind), `wire` (requests and EC2's XML), `provider`
//! (CloudFormation types), `errors` (AWS's codes and messages).

mod acls;
mod blocks;
mod cidr;
mod compute_wire;
mod dhcp;
mod endpoint_service_wire;
mod endpoint_services;
mod endpoints;
mod errors;
mod filters;
mod images;
mod instances;
mod interface_wire;
mod interfaces;
mod keys;
mod links;
mod model;
mod network_wire;
mod ops;
mod paging;
pub(crate) mod provider;
mod volume_wire;
mod volumes;
mod wire;
mod zones;

pub use endpoint_services::EndpointServiceRequest;
pub use images::parameter as public_parameter;
pub use instances::{InstanceRequest, InstanceView, LaunchTemplateView};
pub use interfaces::{AssociationTarget, InterfaceAddresses, InterfaceAttribute};
pub use model::{Resource, Rule};
pub use ops::RuleSpec;
pub use volumes::VolumeRequest;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::{Config, GatewayError, Service};
use cumulo_store::rusqlite::{self, params};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

const MIGRATIONS: &[&str] = &["CREATE TABLE ec2_resources (
        region TEXT NOT NULL,
        id TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, id)
    );
    CREATE TABLE ec2_regions (region TEXT PRIMARY KEY);"];

/// One region's records by id, and whether its default VPC has been made.
#[derive(Default)]
pub(crate) struct Region {
    pub items: BTreeMap<String, Resource>,
    pub initialized: bool,
}

/// The EC2 service.
pub struct Ec2Service {
    store: Arc<Store>,
    regions: Mutex<HashMap<String, Region>>,
    account_id: String,
    /// S3, for the buckets flow logs deliver to (AWS refuses a missing one). None where EC2
    /// is built alone (unit tests): destinations are then taken as given.
    buckets: Option<Arc<crate::s3::S3Service>>,
}

/// A subnet as other services see it.
#[derive(Debug, Clone, PartialEq)]
pub struct SubnetView {
    pub subnet_id: String,
    pub vpc_id: String,
    pub availability_zone: String,
    pub availability_zone_id: String,
    pub cidr_block: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct VpcView {
    pub vpc_id: String,
    pub cidr_block: String,
    pub is_default: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SecurityGroupView {
    pub group_id: String,
    pub group_name: String,
    pub vpc_id: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct NetworkInterfaceView {
    pub network_interface_id: String,
    pub private_ip_address: String,
    pub subnet_id: String,
    pub vpc_id: String,
    pub availability_zone: String,
    pub mac_address: String,
}

/// What a requester-managed network interface is made from.
#[derive(Debug, Clone, Default)]
pub struct NetworkInterfaceRequest {
    pub subnet_id: String,
    pub security_group_ids: Vec<String>,
    pub description: String,
    pub interface_type: Option<String>,
    pub requester_id: Option<String>,
}

impl Ec2Service {
    pub fn new(store: Arc<Store>, config: &Config) -> Result<Self, StoreError> {
        store.migrate("ec2", MIGRATIONS)?;
        let mut regions: HashMap<String, Region> = HashMap::new();
        let problems = store.read(|c| {
            let mut problems = Vec::new();
            let mut stmt = c.prepare("SELECT region FROM ec2_regions")?;
            for r in stmt.query_map([], |r| r.get::<_, String>(0))? {
                regions.entry(r?).or_default().initialized = true;
            }
            let mut stmt = c.prepare("SELECT region, id, doc FROM ec2_resources")?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })?;
            for row in rows {
                let (region, id, doc) = row?;
                match serde_json::from_str::<Resource>(&doc) {
                    Ok(res) => {
                        regions.entry(region).or_default().items.insert(id, res);
                    }
                    Err(e) => problems.push(format!("{region}/{id}: {e}")),
                }
            }
            Ok(problems)
        })?;
        for p in problems {
            eprintln!("cumulo: ec2: skipped unreadable stored record: {p}");
        }
        let mut backfilled: Vec<(String, String, String)> = Vec::new();
        for (name, region) in regions.iter_mut() {
            for id in zones::backfill(region, name) {
                if let Some(doc) = region
                    .items
                    .get(&id)
                    .and_then(|r| serde_json::to_string(r).ok())
                {
                    backfilled.push((name.clone(), id, doc));
                }
            }
        }
        if !backfilled.is_empty() {
            store.write(|tx| {
                for (region, id, doc) in &backfilled {
                    tx.execute(
                        "INSERT OR REPLACE INTO ec2_resources(region, id, doc) VALUES (?1, ?2, ?3)",
                        params![region, id, doc],
                    )?;
                }
                Ok::<_, rusqlite::Error>(())
            })?;
        }
        Ok(Ec2Service {
            store,
            regions: Mutex::new(regions),
            account_id: config.account_id.clone(),
            buckets: None,
        })
    }

    /// Checks flow logs' S3 destinations against `s3`'s buckets.
    pub fn with_buckets(mut self, s3: Arc<crate::s3::S3Service>) -> Self {
        self.buckets = Some(s3);
        self
    }

    pub fn account_id(&self) -> &str {
        &self.account_id
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Region>> {
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` over the region's records (made with their defaults on first use) and writes
    /// every record whose id `f` reports touched (present: saved; gone: deleted) before
    /// returning. `f` validates before it changes anything, so an error leaves nothing changed.
    pub(crate) fn change<R>(
        &self,
        region: &str,
        f: impl FnOnce(&mut Region, &mut Vec<String>) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let mut regions = self.lock();
        let r = regions.entry(region.to_string()).or_default();
        let mut touched = Vec::new();
        let fresh = !r.initialized;
        if fresh {
            zones::make_defaults(r, region, &mut touched);
            r.initialized = true;
        }
        let out = f(r, &mut touched);
        if out.is_err() && !fresh {
            return out;
        }
        let docs: Vec<(String, Option<String>)> = touched
            .iter()
            .map(|id| {
                let doc = r.items.get(id).map(serde_json::to_string).transpose();
                doc.map(|d| (id.clone(), d))
            })
            .collect::<Result<_, _>>()
            .map_err(|e| AwsError::internal(e.to_string()))?;
        self.store
            .write(|tx| {
                if fresh {
                    tx.execute("INSERT OR IGNORE INTO ec2_regions(region) VALUES (?1)", params![region])?;
                }
                for (id, doc) in &docs {
                    match doc {
                        Some(doc) => tx.execute(
                            "INSERT OR REPLACE INTO ec2_resources(region, id, doc) VALUES (?1, ?2, ?3)",
                            params![region, id, doc],
                        )?,
                        None => tx.execute(
                            "DELETE FROM ec2_resources WHERE region = ?1 AND id = ?2",
                            params![region, id],
                        )?,
                    };
                }
                Ok::<_, rusqlite::Error>(())
            })
            .map_err(|e| AwsError::internal(e.to_string()))?;
        out
    }

    /// Reads the region (made with its defaults on first use).
    pub(crate) fn read<R>(
        &self,
        region: &str,
        f: impl FnOnce(&Region) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        self.change(region, |r, _| f(r))
    }
}

impl Catalogued for Ec2Service {
    const SERVICE: Descriptor = Descriptor {
        name: "ec2",
        protocols: &[Wire::Ec2 {
            version: "2016-11-15",
            namespace: wire::NS,
        }],
        ..Descriptor::BASE
    };
    type Deps = (Arc<crate::s3::S3Service>,);

    fn build(context: &Context, (s3,): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config)?.with_buckets(s3))
    }
}

#[async_trait::async_trait]
impl Service for Ec2Service {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
