//! EC2 Auto Scaling (awsQuery, Version 2011-01-01): launch configurations, Auto Scaling groups
//! and their instances, scaling policies, scheduled actions, lifecycle hooks, warm pools,
//! notification configurations, tags and the scaling activities every change records.
//!
//! Written as ELBv2 is: the model-driven query codec (`cumulo_wire::query_model` over
//! `model.json`, made by `scripts/gen-query-model.py autoscaling 2011-01-01 ...`) turns requests
//! into JSON in the API's member names, `ops` is AWS's logic over those values, and the
//! CloudFormation providers hand their properties to the same operations. A group's instances
//! are EC2's (`instances`: launched and terminated through EC2's typed operations, so
//! `aws ec2 describe-instances` lists them), registered with the group's ELBv2 target groups and
//! classic load balancers. No virtual machine runs; scaling policies and scheduled actions are
//! kept and answered, and a policy runs only through ExecutePolicy. A target-tracking policy
//! owns AWS's two CloudWatch alarms, made through CloudWatch's typed operations and deleted
//! with the policy or its group; no alarm fires on a clock, so nothing scales by itself.

mod instances;
mod ops;
pub(crate) mod provider;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::cloudwatch::CloudWatchService;
use crate::ec2::Ec2Service;
use crate::elasticloadbalancing::ElbService;
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

const NS: &str = "http://autoscaling.amazonaws.com/doc/2011-01-01/";
const VERSION: &str = "2011-01-01";

static MODEL: LazyLock<Option<QueryModel>> =
    LazyLock::new(|| QueryModel::parse(include_str!("model.json")).ok());

/// The Auto Scaling model, also for cumulo's own calls ([`crate::query_models`]).
pub(crate) fn model() -> Option<&'static QueryModel> {
    MODEL.as_ref()
}

const MIGRATIONS: &[&str] = &["CREATE TABLE autoscaling_regions (
        region TEXT PRIMARY KEY,
        doc TEXT NOT NULL
    );"];

/// One region's records, each in the API's member names. Members the API does not list
/// (a group's notification configurations) ride along in the bodies: the codec encodes only
/// what the model names.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Region {
    #[serde(default)]
    pub launch_configurations: BTreeMap<String, Value>,
    #[serde(default)]
    pub groups: BTreeMap<String, Value>,
    /// By `<group>/<policy>`.
    #[serde(default)]
    pub policies: BTreeMap<String, Value>,
    /// By `<group>/<action>`.
    #[serde(default)]
    pub scheduled: BTreeMap<String, Value>,
    /// By `<group>/<hook>`.
    #[serde(default)]
    pub hooks: BTreeMap<String, Value>,
    /// By group.
    #[serde(default)]
    pub warm_pools: BTreeMap<String, Value>,
    /// Newest first.
    #[serde(default)]
    pub activities: Vec<Value>,
}

/// The EC2 Auto Scaling service.
pub struct AutoScalingService {
    store: Arc<Store>,
    regions: Mutex<HashMap<String, Region>>,
    account_id: String,
    ec2: Arc<Ec2Service>,
    elb: Arc<ElbService>,
    /// Where target-tracking policies' alarms live.
    cloudwatch: Arc<CloudWatchService>,
}

impl AutoScalingService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        ec2: Arc<Ec2Service>,
        elb: Arc<ElbService>,
        cloudwatch: Arc<CloudWatchService>,
    ) -> Result<Self, StoreError> {
        store.migrate("autoscaling", MIGRATIONS)?;
        let mut regions = HashMap::new();
        let problems = store.read(|c| {
            let mut problems = Vec::new();
            let mut stmt = c.prepare("SELECT region, doc FROM autoscaling_regions")?;
            let rows =
                stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
            for row in rows {
                let (region, doc) = row?;
                match serde_json::from_str::<Region>(&doc) {
                    Ok(r) => {
                        regions.insert(region, r);
                    }
                    Err(e) => problems.push(format!("{region}: {e}")),
                }
            }
            Ok(problems)
        })?;
        for p in problems {
            eprintln!("cumulo: autoscaling: skipped unreadable stored region: {p}");
        }
        Ok(AutoScalingService {
            store,
            regions: Mutex::new(regions),
            account_id: config.account_id.clone(),
            ec2,
            elb,
            cloudwatch,
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Region>> {
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on a copy of the region and, when it succeeds, writes the copy through and keeps
    /// it: a refused call changes nothing here (what `f` did in EC2 it undoes itself).
    pub(crate) fn change<R>(
        &self,
        region: &str,
        f: impl FnOnce(&mut Region) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let mut regions = self.lock();
        let current = regions.entry(region.to_string()).or_default();
        let mut next = current.clone();
        let out = f(&mut next)?;
        let doc = serde_json::to_string(&next).map_err(|e| AwsError::internal(e.to_string()))?;
        self.store
            .write(|tx| {
                tx.execute(
                    "INSERT OR REPLACE INTO autoscaling_regions(region, doc) VALUES (?1, ?2)",
                    params![region, doc],
                )?;
                Ok::<_, rusqlite::Error>(())
            })
            .map_err(|e| AwsError::internal(e.to_string()))?;
        *current = next;
        Ok(out)
    }

    pub(crate) fn read<R>(
        &self,
        region: &str,
        f: impl FnOnce(&Region) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let regions = self.lock();
        match regions.get(region) {
            Some(r) => f(r),
            None => f(&Region::default()),
        }
    }

    /// Calls one operation with its input in the API's member names; answers its output.
    pub fn call(&self, region: &str, operation: &str, input: &Value) -> Result<Value, AwsError> {
        ops::dispatch(self, region, operation, input)
    }

    /// The operation's input with every scalar in the type its model gives it.
    pub(crate) fn coerce(operation: &str, input: Value) -> Value {
        match MODEL.as_ref() {
            Some(m) => m.coerce(operation, input),
            None => input,
        }
    }
}

impl Catalogued for AutoScalingService {
    const SERVICE: Descriptor = Descriptor {
        name: "autoscaling",
        protocols: &[Wire::Query {
            version: VERSION,
            namespace: NS,
        }],
        ..Descriptor::BASE
    };
    type Deps = (Arc<Ec2Service>, Arc<ElbService>, Arc<CloudWatchService>);

    fn build(context: &Context, (ec2, elb, cloudwatch): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(
            context.store.clone(),
            &context.config,
            ec2,
            elb,
            cloudwatch,
        )?)
    }
}

#[async_trait::async_trait]
impl Service for AutoScalingService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        let params = QueryParams::from_request(&req);
        let action = params.get("Action").unwrap_or("").to_string();
        let answer = (|| {
            let model = MODEL
                .as_ref()
                .ok_or_else(|| AwsError::internal("the Auto Scaling model is unreadable"))?;
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
            Err(e) => e.into_response(Protocol::Query(NS), &req.request_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ec2::Resource;
    use serde_json::json;

    const AMI: &str = "ami-0a3c3a20c09d6f377";
    const R: &str = "us-east-1";

    #[test]
    fn a_group_keeps_ec2_instances_and_a_classic_load_balancer_in_step() {
        let store = Arc::new(Store::in_memory().unwrap());
        let config = Config::default();
        let ec2 = Arc::new(Ec2Service::new(store.clone(), &config).unwrap());
        let acm = Arc::new(crate::acm::AcmService::new(store.clone(), &config).unwrap());
        let elb = Arc::new(ElbService::new(store.clone(), &config, ec2.clone(), acm).unwrap());
        let cloudwatch = Arc::new(CloudWatchService::new(store.clone(), &config).unwrap());
        let asg =
            AutoScalingService::new(store, &config, ec2.clone(), elb.clone(), cloudwatch).unwrap();
        ec2.default_vpc(R).unwrap();
        let subnets: Vec<String> = ec2
            .records(R)
            .unwrap()
            .into_iter()
            .filter_map(|r| match r {
                Resource::Subnet(s) if s.default_for_az => Some(s.id),
                _ => None,
            })
            .take(2)
            .collect();
        elb.classic_call(
            R,
            "CreateLoadBalancer",
            &json!({"LoadBalancerName": "web", "Subnets": subnets,
            "Listeners": [{"Protocol": "HTTP", "LoadBalancerPort": 80, "InstancePort": 80}]}),
        )
        .unwrap();
        asg.call(
            R,
            "CreateLaunchConfiguration",
            &json!({"LaunchConfigurationName": "lc", "ImageId": AMI, "InstanceType": "t3.micro"}),
        )
        .unwrap();
        asg.call(R, "CreateAutoScalingGroup", &json!({"AutoScalingGroupName": "g", "LaunchConfigurationName": "lc",
            "MinSize": 1, "MaxSize": 3, "DesiredCapacity": 2, "VPCZoneIdentifier": subnets.join(","), "LoadBalancerNames": ["web"]}))
            .unwrap();
        let instances = |asg: &AutoScalingService| -> Vec<String> {
            let g = asg
                .call(R, "DescribeAutoScalingGroups", &json!({}))
                .unwrap();
            g["AutoScalingGroups"][0]["Instances"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["InstanceId"].as_str().unwrap().to_string())
                .collect()
        };
        let registered = || -> usize {
            let lb = elb
                .classic_call(R, "DescribeLoadBalancers", &json!({}))
                .unwrap();
            lb["LoadBalancerDescriptions"][0]["Instances"]
                .as_array()
                .unwrap()
                .len()
        };
        let ids = instances(&asg);
        assert_eq!(ids.len(), 2);
        assert_eq!(registered(), 2);
        let zones: Vec<String> = ids
            .iter()
            .map(|i| ec2.instance(R, i).unwrap().availability_zone)
            .collect();
        assert_ne!(zones[0], zones[1]);
        // Refused: nothing changes.
        let e = asg
            .call(
                R,
                "SetDesiredCapacity",
                &json!({"AutoScalingGroupName": "g", "DesiredCapacity": 4}),
            )
            .unwrap_err();
        assert_eq!(
            e.message,
            "New SetDesiredCapacity value 4 is above max value 3 for the AutoScalingGroup."
        );
        assert_eq!(instances(&asg), ids);
        asg.call(
            R,
            "SetDesiredCapacity",
            &json!({"AutoScalingGroupName": "g", "DesiredCapacity": 1}),
        )
        .unwrap();
        let kept = instances(&asg);
        assert_eq!(kept.len(), 1);
        assert_eq!(registered(), 1);
        let gone = ids.iter().find(|i| !kept.contains(i)).unwrap();
        assert!(matches!(
            ec2.instance(R, gone).unwrap().state.as_str(),
            "shutting-down" | "terminated"
        ));
        asg.call(
            R,
            "DeleteAutoScalingGroup",
            &json!({"AutoScalingGroupName": "g", "ForceDelete": true}),
        )
        .unwrap();
        assert_eq!(registered(), 0);
        assert!(matches!(
            ec2.instance(R, &kept[0]).unwrap().state.as_str(),
            "shutting-down" | "terminated"
        ));
        let activities = asg
            .call(
                R,
                "DescribeScalingActivities",
                &json!({"IncludeDeletedGroups": true}),
            )
            .unwrap();
        assert_eq!(activities["Activities"].as_array().unwrap().len(), 4);
    }
}
