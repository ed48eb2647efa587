//! Elastic Load Balancing v2 (awsQuery, Version 2015-12-01): application, network and gateway
//! load balancers, target groups and their targets, listeners, rules, listener certificates,
//! attributes and tags. No traffic is balanced: the records are what the API reports, what
//! CloudFormation and ECS build on, and what a migration inventory reads.
//!
//! The wire side is the model-driven query codec (`cumulo_wire::query_model`, over `model.json`
//! written by `scripts/gen-query-model.py` from botocore's model): requests arrive as JSON in the
//! API's member names and answers leave as JSON, so `ops` is AWS's logic over those values, and
//! the CloudFormation providers (`provider`) hand their properties, which carry the same names,
//! to the same operations. Subnets and security groups are checked and described through EC2's
//! typed lookups, and a load balancer's subnets get its network interfaces from EC2 (`links`);
//! the ACM certificates its listeners use name it in their InUseBy. The classic load balancer
//! (Version 2012-06-01) shares the signing name and is answered here, by `classic`.

pub(crate) mod classic;
mod links;
mod ops;
pub(crate) mod provider;

use crate::acm::AcmService;
use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::ec2::Ec2Service;
use crate::{Config, GatewayError, Service};
use cumulo_store::rusqlite::{self, params};
use cumulo_store::{Store, StoreError};
use cumulo_wire::query::QueryParams;
use cumulo_wire::query_model::QueryModel;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

const NS: &str = "http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/";
const VERSION: &str = "2015-12-01";
const CLASSIC_VERSION: &str = classic::VERSION;

static MODEL: LazyLock<Option<QueryModel>> =
    LazyLock::new(|| QueryModel::parse(include_str!("model.json")).ok());

/// The ELBv2 model, also for cumulo's own calls ([`crate::query_models`]).
pub(crate) fn model() -> Option<&'static QueryModel> {
    MODEL.as_ref()
}

const MIGRATIONS: &[&str] = &["CREATE TABLE elb_records (
        region TEXT NOT NULL,
        arn TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, arn)
    );"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Kind {
    LoadBalancer,
    TargetGroup,
    Listener,
    Rule,
}

/// One record: its API shape (`body`, in the API's member names) and what the API keeps beside
/// it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    pub kind: Kind,
    pub body: Value,
    #[serde(default)]
    pub tags: Vec<(String, String)>,
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
    /// A target group's registered targets (`{Id, Port, AvailabilityZone}`); a listener's
    /// certificates beyond the default one.
    #[serde(default)]
    pub items: Vec<Value>,
}

pub(crate) type Region = BTreeMap<String, Record>;

/// The ELBv2 service.
pub struct ElbService {
    store: Arc<Store>,
    regions: Mutex<HashMap<String, Region>>,
    account_id: String,
    ec2: Arc<Ec2Service>,
    acm: Arc<AcmService>,
    classic: classic::Classic,
}

/// A target group as other services see it.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetGroupView {
    pub arn: String,
    pub target_type: String,
    pub protocol: Option<String>,
    pub port: Option<i64>,
    pub vpc_id: Option<String>,
    pub load_balancer_arns: Vec<String>,
}

impl ElbService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        ec2: Arc<Ec2Service>,
        acm: Arc<AcmService>,
    ) -> Result<Self, StoreError> {
        store.migrate("elb", MIGRATIONS)?;
        let mut regions: HashMap<String, Region> = HashMap::new();
        let problems = store.read(|c| {
            let mut problems = Vec::new();
            let mut stmt = c.prepare("SELECT region, arn, doc FROM elb_records")?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })?;
            for row in rows {
                let (region, arn, doc) = row?;
                match serde_json::from_str::<Record>(&doc) {
                    Ok(rec) => {
                        regions.entry(region).or_default().insert(arn, rec);
                    }
                    Err(e) => problems.push(format!("{arn}: {e}")),
                }
            }
            Ok(problems)
        })?;
        for p in problems {
            eprintln!("cumulo: elasticloadbalancing: skipped unreadable stored record: {p}");
        }
        let classic = classic::Classic::load(&store)?;
        Ok(ElbService {
            classic,
            store,
            regions: Mutex::new(regions),
            account_id: config.account_id.clone(),
            ec2,
            acm,
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Region>> {
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` over the region's records and writes every ARN it reports touched (present:
    /// saved; gone: deleted) before returning; `f` checks before it changes anything.
    pub(crate) fn change<R>(
        &self,
        region: &str,
        f: impl FnOnce(&mut Region, &mut Vec<String>) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let mut regions = self.lock();
        let r = regions.entry(region.to_string()).or_default();
        let mut touched = Vec::new();
        let out = f(r, &mut touched)?;
        let docs: Vec<(String, Option<String>)> = touched
            .iter()
            .map(|arn| {
                r.get(arn)
                    .map(serde_json::to_string)
                    .transpose()
                    .map(|d| (arn.clone(), d))
            })
            .collect::<Result<_, _>>()
            .map_err(|e| AwsError::internal(e.to_string()))?;
        self.store
            .write(|tx| {
                for (arn, doc) in &docs {
                    match doc {
                        Some(doc) => tx.execute(
                            "INSERT OR REPLACE INTO elb_records(region, arn, doc) VALUES (?1, ?2, ?3)",
                            params![region, arn, doc],
                        )?,
                        None => tx.execute("DELETE FROM elb_records WHERE region = ?1 AND arn = ?2", params![region, arn])?,
                    };
                }
                Ok::<_, rusqlite::Error>(())
            })
            .map_err(|e| AwsError::internal(e.to_string()))?;
        Ok(out)
    }

    /// Calls one operation with its input in the API's member names; answers its output.
    pub fn call(&self, region: &str, operation: &str, input: &Value) -> Result<Value, AwsError> {
        ops::dispatch(self, region, operation, input)
    }

    /// The operation's input with every scalar in the type its model gives it (CloudFormation
    /// properties arrive as strings where parameters fed them).
    pub(crate) fn coerce(operation: &str, input: Value) -> Value {
        match MODEL.as_ref() {
            Some(m) => m.coerce(operation, input),
            None => input,
        }
    }

    pub fn target_group(&self, region: &str, arn: &str) -> Result<TargetGroupView, AwsError> {
        let regions = self.lock();
        let r = regions.get(region).ok_or_else(ops::tg_not_found)?;
        let tg = ops::get(r, arn, Kind::TargetGroup)?;
        let b = &tg.body;
        Ok(TargetGroupView {
            arn: arn.to_string(),
            target_type: b["TargetType"].as_str().unwrap_or("instance").to_string(),
            protocol: b["Protocol"].as_str().map(str::to_string),
            port: b["Port"].as_i64(),
            vpc_id: b["VpcId"].as_str().map(str::to_string),
            load_balancer_arns: ops::load_balancers_of(r, arn),
        })
    }

    pub fn register_targets(
        &self,
        region: &str,
        arn: &str,
        targets: &[(String, Option<i64>)],
    ) -> Result<(), AwsError> {
        self.call(region, "RegisterTargets", &ops::targets_input(arn, targets))
            .map(|_| ())
    }

    pub fn deregister_targets(
        &self,
        region: &str,
        arn: &str,
        targets: &[(String, Option<i64>)],
    ) -> Result<(), AwsError> {
        self.call(
            region,
            "DeregisterTargets",
            &ops::targets_input(arn, targets),
        )
        .map(|_| ())
    }
}

impl Catalogued for ElbService {
    const SERVICE: Descriptor = Descriptor {
        name: "elasticloadbalancing",
        protocols: &[
            Wire::Query {
                version: VERSION,
                namespace: NS,
            },
            Wire::Query {
                version: CLASSIC_VERSION,
                namespace: classic::NS,
            },
        ],
        ..Descriptor::BASE
    };
    const STORE_OWNER: &'static str = "elb";
    type Deps = (Arc<Ec2Service>, Arc<AcmService>);

    fn build(context: &Context, (ec2, acm): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config, ec2, acm)?)
    }
}

#[async_trait::async_trait]
impl Service for ElbService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        let params = QueryParams::from_request(&req);
        if params.get("Version") == Some(CLASSIC_VERSION) {
            return self.classic_handle(&req, &params);
        }
        let action = params.get("Action").unwrap_or("").to_string();
        let protocol = Protocol::Query(NS);
        let answer = (|| {
            let model = MODEL
                .as_ref()
                .ok_or_else(|| AwsError::internal("the ELBv2 model is unreadable"))?;
            if !model.has_operation(&action) {
                return Err(AwsError::bad_request(
                    "InvalidAction",
                    format!("Could not find operation {action} for version {VERSION}"),
                ));
            }
            let input = model.decode(&action, &params)?;
            let output = self.call(&req.region, &action, &input)?;
            Ok(model.encode(&action, &output, &req.request_id))
        })();
        match answer {
            Ok(body) => AwsResponse::xml(body).with_header("x-amzn-requestid", &req.request_id),
            Err(e) => e.into_response(protocol, &req.request_id),
        }
    }
}
