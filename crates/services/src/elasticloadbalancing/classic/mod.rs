//! Classic Elastic Load Balancing (awsQuery, Version 2012-06-01): load balancers named by name,
//! with their listeners, health check, registered instances, attributes, policies, security
//! groups, subnets and tags. It shares ELBv2's signing name, so the gateway hands both to
//! [`ElbService`], which answers a request with `Version=2012-06-01` here.
//!
//! Written as ELBv2 is: the model-driven query codec over `model.json`
//! (`scripts/gen-query-model.py elb 2012-06-01 ...`) turns requests into JSON in the API's
//! member names, `ops` is AWS's logic over those values, and the CloudFormation provider
//! (`provider`) hands AWS::ElasticLoadBalancing::LoadBalancer's properties to the same
//! operations. A load balancer in a VPC holds a requester-managed network interface from EC2 in
//! each of its subnets, as on AWS. No traffic is balanced.

mod ops;
mod policies;
pub(crate) mod provider;

use super::ElbService;
use cumulo_store::rusqlite::{self, params};
use cumulo_store::{Store, StoreError};
use cumulo_wire::query::QueryParams;
use cumulo_wire::query_model::QueryModel;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::{LazyLock, Mutex, MutexGuard};

pub(crate) const VERSION: &str = "2012-06-01";
pub(crate) const NS: &str = "http://elasticloadbalancing.amazonaws.com/doc/2012-06-01/";

static MODEL: LazyLock<Option<QueryModel>> =
    LazyLock::new(|| QueryModel::parse(include_str!("model.json")).ok());

/// The classic ELB model, also for cumulo's own calls ([`crate::query_models`]).
pub(crate) fn model() -> Option<&'static QueryModel> {
    MODEL.as_ref()
}

const MIGRATIONS: &[&str] = &["CREATE TABLE elb_classic (
        region TEXT NOT NULL,
        name TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, name)
    );"];

/// One classic load balancer: its description in the API's member names
/// (`LoadBalancerDescription`) and what the API keeps beside it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Lb {
    pub body: Value,
    /// `LoadBalancerAttributes`, whole.
    pub attributes: Value,
    /// The load balancer's own policies (`PolicyDescription`s).
    #[serde(default)]
    pub policies: Vec<Value>,
    #[serde(default)]
    pub tags: Vec<(String, String)>,
    /// `{SubnetId, NetworkInterfaceId}` per subnet.
    #[serde(default)]
    pub interfaces: Vec<Value>,
}

pub(crate) type Region = BTreeMap<String, Lb>;

/// The classic load balancers of every region, by name.
pub(crate) struct Classic {
    regions: Mutex<HashMap<String, Region>>,
}

impl Classic {
    pub(crate) fn load(store: &Store) -> Result<Self, StoreError> {
        store.migrate("elb_classic", MIGRATIONS)?;
        let mut regions: HashMap<String, Region> = HashMap::new();
        let problems = store.read(|c| {
            let mut problems = Vec::new();
            let mut stmt = c.prepare("SELECT region, name, doc FROM elb_classic")?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })?;
            for row in rows {
                let (region, name, doc) = row?;
                match serde_json::from_str::<Lb>(&doc) {
                    Ok(lb) => {
                        regions.entry(region).or_default().insert(name, lb);
                    }
                    Err(e) => problems.push(format!("{name}: {e}")),
                }
            }
            Ok(problems)
        })?;
        for p in problems {
            eprintln!("cumulo: elasticloadbalancing (classic): skipped unreadable record: {p}");
        }
        Ok(Classic {
            regions: Mutex::new(regions),
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Region>> {
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ElbService {
    /// Runs `f` over the region's classic load balancers on a copy and, when it succeeds, writes
    /// every name it reports touched (present: saved; gone: deleted) before keeping the copy:
    /// a refused call changes nothing.
    pub(crate) fn classic_change<R>(
        &self,
        region: &str,
        f: impl FnOnce(&mut Region, &mut Vec<String>) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let mut regions = self.classic.lock();
        let current = regions.entry(region.to_string()).or_default();
        let mut next = current.clone();
        let mut touched = Vec::new();
        let out = f(&mut next, &mut touched)?;
        if touched.is_empty() {
            return Ok(out);
        }
        let docs: Vec<(String, Option<String>)> = touched
            .iter()
            .map(|name| {
                next.get(name)
                    .map(serde_json::to_string)
                    .transpose()
                    .map(|d| (name.clone(), d))
            })
            .collect::<Result<_, _>>()
            .map_err(|e| AwsError::internal(e.to_string()))?;
        self.store
            .write(|tx| {
                for (name, doc) in &docs {
                    match doc {
                        Some(doc) => tx.execute(
                            "INSERT OR REPLACE INTO elb_classic(region, name, doc) VALUES (?1, ?2, ?3)",
                            params![region, name, doc],
                        )?,
                        None => tx.execute(
                            "DELETE FROM elb_classic WHERE region = ?1 AND name = ?2",
                            params![region, name],
                        )?,
                    };
                }
                Ok::<_, rusqlite::Error>(())
            })
            .map_err(|e| AwsError::internal(e.to_string()))?;
        *current = next;
        Ok(out)
    }

    pub(crate) fn classic_read<R>(
        &self,
        region: &str,
        f: impl FnOnce(&Region) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let regions = self.classic.lock();
        match regions.get(region) {
            Some(r) => f(r),
            None => f(&Region::new()),
        }
    }

    /// Calls one classic operation with its input in the API's member names.
    pub fn classic_call(
        &self,
        region: &str,
        operation: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        ops::dispatch(self, region, operation, input)
    }

    /// The operation's input with every scalar in the type the classic model gives it.
    pub(crate) fn classic_coerce(operation: &str, input: Value) -> Value {
        match MODEL.as_ref() {
            Some(m) => m.coerce(operation, input),
            None => input,
        }
    }

    /// Registers instances with a classic load balancer (what Auto Scaling does for a group's
    /// `LoadBalancerNames`).
    pub fn register_instances(
        &self,
        region: &str,
        name: &str,
        instance_ids: &[String],
    ) -> Result<(), AwsError> {
        self.instances_call(
            region,
            "RegisterInstancesWithLoadBalancer",
            name,
            instance_ids,
        )
    }

    pub fn deregister_instances(
        &self,
        region: &str,
        name: &str,
        instance_ids: &[String],
    ) -> Result<(), AwsError> {
        self.instances_call(
            region,
            "DeregisterInstancesFromLoadBalancer",
            name,
            instance_ids,
        )
    }

    /// Whether a classic load balancer of that name exists.
    pub fn classic_exists(&self, region: &str, name: &str) -> bool {
        self.classic_read(region, |r| Ok(r.contains_key(name)))
            .unwrap_or(false)
    }

    fn instances_call(
        &self,
        region: &str,
        op: &str,
        name: &str,
        ids: &[String],
    ) -> Result<(), AwsError> {
        if ids.is_empty() {
            return Ok(());
        }
        let instances: Vec<Value> = ids
            .iter()
            .map(|id| serde_json::json!({"InstanceId": id}))
            .collect();
        self.classic_call(
            region,
            op,
            &serde_json::json!({"LoadBalancerName": name, "Instances": instances}),
        )
        .map(|_| ())
    }

    /// Answers one classic request.
    pub(crate) fn classic_handle(&self, req: &AwsRequest, params: &QueryParams) -> AwsResponse {
        let action = params.get("Action").unwrap_or("").to_string();
        let answer = (|| {
            let model = MODEL
                .as_ref()
                .ok_or_else(|| AwsError::internal("the classic ELB model is unreadable"))?;
            if !model.has_operation(&action) {
                return Err(AwsError::bad_request(
                    "InvalidAction",
                    format!("Could not find operation {action} for version {VERSION}"),
                ));
            }
            let input = model.decode(&action, params)?;
            let output = self.classic_call(&req.region, &action, &input)?;
            Ok(model.encode(&action, &output, &req.request_id))
        })();
        match answer {
            Ok(body) => AwsResponse::xml(body).with_header("x-amzn-requestid", &req.request_id),
            Err(e) => e.into_response(Protocol::Query(NS), &req.request_id),
        }
    }
}

/// What the classic load balancer asks EC2 about instances: registering one EC2 does not have
/// is `InvalidInstance`, and one no longer running is OutOfService.
impl ElbService {
    pub(crate) fn instance_known(&self, region: &str, id: &str) -> bool {
        self.ec2.instance(region, id).is_ok()
    }

    pub(crate) fn instance_state(&self, region: &str, id: &str) -> Option<String> {
        self.ec2.instance(region, id).ok().map(|i| i.state)
    }
}
