//! Application Auto Scaling (awsJson1_1, `AnyScaleFrontendService.<Operation>`): scalable
//! targets, target-tracking and step scaling policies, scheduled actions and tags.
//!
//! A target-tracking policy makes AWS's two CloudWatch alarms (`TargetTracking-<resource>-
//! AlarmHigh-<uuid>` and `-AlarmLow-`) through CloudWatch's typed operations, and deleting it
//! deletes them. What differs from AWS: nothing scales. Alarm actions are not executed, so no
//! policy or scheduled action changes an ECS service's desired count (doing so honestly would
//! need CloudWatch to run actions on a clock); DescribeScalingActivities answers an empty list.
//! An ECS target must name an existing service (`service/<cluster>/<service>`), checked
//! through ECS's typed `service_exists`.

mod ops;
pub(crate) mod provider;
mod state;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::cloudwatch::CloudWatchService;
use crate::ecs::EcsService;
use crate::json_body;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use serde_json::Value;
use state::{Kind, Region, Regions};
use std::sync::{Arc, Mutex, MutexGuard};

/// Every operation in the API (botocore's model); the ones not implemented answer 501.
const OPERATIONS: &[&str] = &[
    "DeleteScalingPolicy",
    "DeleteScheduledAction",
    "DeregisterScalableTarget",
    "DescribeScalableTargets",
    "DescribeScalingActivities",
    "DescribeScalingPolicies",
    "DescribeScheduledActions",
    "GetPredictiveScalingForecast",
    "ListTagsForResource",
    "PutScalingPolicy",
    "PutScheduledAction",
    "RegisterScalableTarget",
    "TagResource",
    "UntagResource",
];

/// The Application Auto Scaling service.
pub struct AutoScalingService {
    store: Arc<Store>,
    regions: Mutex<Regions>,
    account_id: String,
    cloudwatch: Arc<CloudWatchService>,
    ecs: Arc<EcsService>,
}

impl AutoScalingService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        cloudwatch: Arc<CloudWatchService>,
        ecs: Arc<EcsService>,
    ) -> Result<Self, StoreError> {
        store.migrate("appautoscaling", state::MIGRATIONS)?;
        let (regions, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: application-autoscaling: skipped unreadable stored record: {p}");
        }
        Ok(AutoScalingService {
            store,
            regions: Mutex::new(regions),
            account_id: config.account_id.clone(),
            cloudwatch,
            ecs,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Regions> {
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` over the region and writes every key it reports touched before answering;
    /// `f` checks before it changes anything.
    fn change<R>(
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
            .map(|k| {
                r.records
                    .get(k)
                    .map(serde_json::to_string)
                    .transpose()
                    .map(|d| (k.clone(), d))
            })
            .collect::<Result<_, _>>()
            .map_err(|e| AwsError::internal(e.to_string()))?;
        self.store
            .write(|tx| state::save(tx, region, &docs))
            .map_err(|e| AwsError::internal(e.to_string()))?;
        Ok(out)
    }

    /// The bodies of one kind of record that `keep` accepts, in key order.
    fn records(&self, region: &str, kind: Kind, keep: impl Fn(&Value) -> bool) -> Vec<Value> {
        self.lock()
            .get(region)
            .map(|r| {
                r.records
                    .values()
                    .filter(|rec| rec.kind == kind && keep(&rec.body))
                    .map(|rec| rec.body.clone())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Calls one operation with its input in the API's member names.
    pub fn call(&self, region: &str, op: &str, input: &Value) -> Result<Value, AwsError> {
        let now = chrono::Utc::now().timestamp_millis() as f64 / 1000.0;
        match op {
            "RegisterScalableTarget" => self.register_scalable_target(region, input, now),
            "DescribeScalableTargets" => self.describe_scalable_targets(region, input),
            "DeregisterScalableTarget" => self.deregister_scalable_target(region, input),
            "PutScalingPolicy" => self.put_scaling_policy(region, input, now),
            "DescribeScalingPolicies" => self.describe_scaling_policies(region, input),
            "DeleteScalingPolicy" => self.delete_scaling_policy(region, input),
            "PutScheduledAction" => self.put_scheduled_action(region, input, now),
            "DescribeScheduledActions" => self.describe_scheduled_actions(region, input),
            "DeleteScheduledAction" => self.delete_scheduled_action(region, input),
            "DescribeScalingActivities" => self.describe_scaling_activities(input),
            "TagResource" => self.tag_resource(region, input),
            "UntagResource" => self.untag_resource(region, input),
            "ListTagsForResource" => self.list_tags(region, input),
            op if OPERATIONS.contains(&op) => {
                Err(AwsError::not_implemented("application-autoscaling", op))
            }
            op => Err(AwsError::bad_request(
                "UnknownOperationException",
                format!("Unknown operation {op}"),
            )),
        }
    }
}

impl Catalogued for AutoScalingService {
    const SERVICE: Descriptor = Descriptor {
        name: "application-autoscaling",
        protocols: &[Wire::Json11 {
            target_prefix: "AnyScaleFrontendService",
        }],
        ..Descriptor::BASE
    };
    const STORE_OWNER: &'static str = "appautoscaling";
    type Deps = (Arc<CloudWatchService>, Arc<EcsService>);

    fn build(context: &Context, (cloudwatch, ecs): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(
            context.store.clone(),
            &context.config,
            cloudwatch,
            ecs,
        )?)
    }
}

#[async_trait::async_trait]
impl Service for AutoScalingService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        let op = req.target_operation().unwrap_or("").to_string();
        let result =
            json_body::parse(&req).and_then(|m| self.call(&req.region, &op, &Value::Object(m)));
        match result {
            Ok(v) => json_body::respond(&req, Ok(v)),
            Err(e) => e.into_response(Protocol::Json11, &req.request_id),
        }
    }
}
