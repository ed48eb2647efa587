//! Application Auto Scaling's operations as AWS's logic over JSON in the API's member names.
//! Target-tracking policies get the two CloudWatch alarms AWS makes for them, through
//! CloudWatch's typed operations; deleting the policy (or its target) deletes them.

use super::AutoScalingService;
use super::state::{Kind, Record, Region};
use crate::cloudwatch::target_tracking as tt;
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

pub fn validation(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("ValidationException", message)
}

fn not_found(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("ObjectNotFoundException", message)
}

fn required<'a>(input: &'a Value, name: &str, field: &str) -> Result<&'a str, AwsError> {
    input[name].as_str().ok_or_else(|| {
        validation(format!("1 validation error detected: Value null at '{field}' failed to satisfy constraint: Member must not be null"))
    })
}

fn one_of(field: &str, value: &str, set: &[&str]) -> Result<(), AwsError> {
    if set.contains(&value) {
        return Ok(());
    }
    Err(validation(format!(
        "1 validation error detected: Value '{value}' at '{field}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
        set.join(", ")
    )))
}

const NAMESPACES: &[&str] = &[
    "ecs",
    "elasticmapreduce",
    "ec2",
    "appstream",
    "dynamodb",
    "rds",
    "sagemaker",
    "custom-resource",
    "comprehend",
    "lambda",
    "cassandra",
    "kafka",
    "elasticache",
    "neptune",
    "workspaces",
];

const DIMENSIONS: &[&str] = &[
    "ecs:service:DesiredCount",
    "ec2:spot-fleet-request:TargetCapacity",
    "elasticmapreduce:instancegroup:InstanceCount",
    "appstream:fleet:DesiredCapacity",
    "dynamodb:table:ReadCapacityUnits",
    "dynamodb:table:WriteCapacityUnits",
    "dynamodb:index:ReadCapacityUnits",
    "dynamodb:index:WriteCapacityUnits",
    "rds:cluster:ReadReplicaCount",
    "sagemaker:variant:DesiredInstanceCount",
    "custom-resource:ResourceType:Property",
    "comprehend:document-classifier-endpoint:DesiredInferenceUnits",
    "comprehend:entity-recognizer-endpoint:DesiredInferenceUnits",
    "lambda:function:ProvisionedConcurrency",
    "cassandra:table:ReadCapacityUnits",
    "cassandra:table:WriteCapacityUnits",
    "kafka:broker-storage:VolumeSize",
    "elasticache:cache-cluster:Nodes",
    "elasticache:replication-group:NodeGroups",
    "elasticache:replication-group:Replicas",
    "neptune:cluster:ReadReplicaCount",
    "sagemaker:variant:DesiredProvisionedConcurrency",
    "sagemaker:inference-component:DesiredCopyCount",
    "workspaces:workspacespool:DesiredUserSessions",
];

/// The namespace, resource id and dimension a call names, checked against each other.
struct Target<'a> {
    namespace: &'a str,
    resource: &'a str,
    dimension: &'a str,
}

impl Target<'_> {
    fn key(&self) -> String {
        format!("{}|{}|{}", self.namespace, self.resource, self.dimension)
    }

    fn describe(&self) -> String {
        format!(
            "service namespace: {}, resource ID: {}, scalable dimension: {}",
            self.namespace, self.resource, self.dimension
        )
    }
}

fn target(input: &Value) -> Result<Target<'_>, AwsError> {
    let namespace = required(input, "ServiceNamespace", "serviceNamespace")?;
    one_of("serviceNamespace", namespace, NAMESPACES)?;
    let resource = required(input, "ResourceId", "resourceId")?;
    let dimension = required(input, "ScalableDimension", "scalableDimension")?;
    one_of("scalableDimension", dimension, DIMENSIONS)?;
    let shape_ok = match dimension.split(':').nth(1).unwrap_or("") {
        _ if !dimension.starts_with(&format!("{namespace}:")) => false,
        "service" => resource.split('/').count() == 3 && resource.starts_with("service/"),
        "table" => resource.starts_with("table/") && !resource.contains("/index/"),
        "index" => resource.starts_with("table/") && resource.contains("/index/"),
        "function" => resource.starts_with("function:") && resource.split(':').count() == 3,
        _ => !resource.is_empty(),
    };
    if !shape_ok {
        return Err(validation(
            "Unsupported service namespace, resource type or scalable dimension",
        ));
    }
    Ok(Target {
        namespace,
        resource,
        dimension,
    })
}

fn tags_map(v: &Value) -> Vec<(String, String)> {
    v.as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
        .collect()
}

fn page(items: Vec<Value>, input: &Value, default: usize) -> Result<Value, AwsError> {
    let max = input["MaxResults"]
        .as_i64()
        .map_or(default, |m| m.clamp(1, 50) as usize);
    let from = match input["NextToken"].as_str() {
        None => 0,
        Some(t) => t
            .parse()
            .map_err(|_| AwsError::bad_request("InvalidNextTokenException", "Invalid token"))?,
    };
    let end = (from + max).min(items.len());
    let mut out = json!({"items": items.get(from..end).unwrap_or_default()});
    if end < items.len() {
        out["NextToken"] = json!(end.to_string());
    }
    Ok(out)
}

fn listed(items: Vec<Value>, input: &Value, member: &str) -> Result<Value, AwsError> {
    let mut p = page(items, input, 50)?;
    let items = p["items"].take();
    let mut out = json!({member: items});
    if let Some(t) = p.get("NextToken") {
        out["NextToken"] = t.clone();
    }
    Ok(out)
}

impl AutoScalingService {
    fn role_arn(&self, namespace: &str) -> String {
        let (svc, suffix) = match namespace {
            "ecs" => ("ecs", "ECSService"),
            "dynamodb" => ("dynamodb", "DynamoDBTable"),
            "lambda" => ("lambda", "LambdaConcurrency"),
            other => (other, "CustomResource"),
        };
        format!(
            "arn:aws:iam::{}:role/aws-service-role/{svc}.application-autoscaling.amazonaws.com/AWSServiceRoleForApplicationAutoScaling_{suffix}",
            self.account_id
        )
    }

    pub(super) fn register_scalable_target(
        &self,
        region: &str,
        input: &Value,
        now: f64,
    ) -> Result<Value, AwsError> {
        let t = target(input)?;
        let min = input["MinCapacity"].as_i64();
        let max = input["MaxCapacity"].as_i64();
        if min.is_some_and(|m| m < 0) || max.is_some_and(|m| m < 0) {
            return Err(validation("Capacity must be a non-negative number"));
        }
        if t.namespace == "ecs" {
            let mut parts = t.resource.split('/').skip(1);
            let (cluster, service) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            if !self.ecs.service_exists(region, cluster, service) {
                return Err(validation(format!(
                    "ECS service doesn't exist: {}",
                    t.resource
                )));
            }
        }
        let key = t.key();
        self.change(region, |r, touched| {
            let existing = r.records.get(&key).cloned();
            let mut body = match existing {
                Some(rec) => rec.body,
                None => {
                    let (Some(_), Some(_)) = (min, max) else {
                        return Err(validation(
                            "MinCapacity and MaxCapacity are required for registering a new scalable target",
                        ));
                    };
                    json!({
                        "ServiceNamespace": t.namespace,
                        "ResourceId": t.resource,
                        "ScalableDimension": t.dimension,
                        "CreationTime": now,
                        "RoleARN": self.role_arn(t.namespace),
                        "SuspendedState": {"DynamicScalingInSuspended": false, "DynamicScalingOutSuspended": false, "ScheduledScalingSuspended": false},
                        "ScalableTargetARN": format!("arn:aws:application-autoscaling:{region}:{}:scalable-target/{}", self.account_id, uuid::Uuid::new_v4().simple()),
                    })
                }
            };
            if let Some(m) = min {
                body["MinCapacity"] = json!(m);
            }
            if let Some(m) = max {
                body["MaxCapacity"] = json!(m);
            }
            if body["MinCapacity"].as_i64() > body["MaxCapacity"].as_i64() {
                return Err(validation("Maximum capacity cannot be less than minimum capacity"));
            }
            if let Some(role) = input["RoleARN"].as_str() {
                body["RoleARN"] = json!(role);
            }
            if let Some(s) = input["SuspendedState"].as_object() {
                for (k, v) in s {
                    body["SuspendedState"][k] = v.clone();
                }
            }
            let arn = body["ScalableTargetARN"].clone();
            let mut rec = r.records.remove(&key).unwrap_or(Record {
                kind: Kind::Target,
                body: Value::Null,
                tags: Vec::new(),
            });
            rec.body = body;
            for (k, v) in tags_map(&input["Tags"]) {
                rec.tags.retain(|t| t.0 != k);
                rec.tags.push((k, v));
            }
            r.records.insert(key.clone(), rec);
            touched.push(key.clone());
            Ok(json!({"ScalableTargetARN": arn}))
        })
    }

    pub(super) fn describe_scalable_targets(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ns = required(input, "ServiceNamespace", "serviceNamespace")?;
        one_of("serviceNamespace", ns, NAMESPACES)?;
        let ids: Vec<&str> = input["ResourceIds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let dim = input["ScalableDimension"].as_str();
        let items = self.records(region, Kind::Target, |b| {
            b["ServiceNamespace"].as_str() == Some(ns)
                && (ids.is_empty() || ids.iter().any(|i| b["ResourceId"].as_str() == Some(i)))
                && dim.is_none_or(|d| b["ScalableDimension"].as_str() == Some(d))
        });
        listed(items, input, "ScalableTargets")
    }

    pub(super) fn deregister_scalable_target(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let t = target(input)?;
        let key = t.key();
        let alarms = self.change(region, |r, touched| {
            if !r.records.contains_key(&key) {
                return Err(not_found(format!(
                    "No scalable target registered for {}",
                    t.describe()
                )));
            }
            r.records.remove(&key);
            touched.push(key.clone());
            let prefix = format!("{key}|");
            let dependents: Vec<String> = r
                .records
                .keys()
                .filter(|k| k.starts_with(&prefix))
                .cloned()
                .collect();
            let mut alarms = Vec::new();
            for k in dependents {
                if let Some(rec) = r.records.remove(&k) {
                    alarms.extend(tt::alarm_names(&rec.body));
                }
                touched.push(k);
            }
            Ok(alarms)
        })?;
        tt::delete_alarms(&self.cloudwatch, region, &alarms);
        Ok(json!({}))
    }

    pub(super) fn put_scaling_policy(
        &self,
        region: &str,
        input: &Value,
        now: f64,
    ) -> Result<Value, AwsError> {
        let name = required(input, "PolicyName", "policyName")?;
        let t = target(input)?;
        let kind = input["PolicyType"].as_str().unwrap_or("StepScaling");
        one_of(
            "policyType",
            kind,
            &["StepScaling", "TargetTrackingScaling", "PredictiveScaling"],
        )?;
        let tt = input
            .get("TargetTrackingScalingPolicyConfiguration")
            .filter(|v| !v.is_null());
        let step = input
            .get("StepScalingPolicyConfiguration")
            .filter(|v| !v.is_null());
        match kind {
            "TargetTrackingScaling" => {
                let Some(cfg) = tt else {
                    return Err(validation(
                        "TargetTrackingScalingPolicyConfiguration is required for TargetTrackingScaling policies",
                    ));
                };
                if cfg["TargetValue"].as_f64().is_none() {
                    return Err(validation(
                        "1 validation error detected: Value null at 'targetTrackingScalingPolicyConfiguration.targetValue' failed to satisfy constraint: Member must not be null",
                    ));
                }
                let predefined = cfg
                    .get("PredefinedMetricSpecification")
                    .filter(|v| !v.is_null());
                let custom = cfg
                    .get("CustomizedMetricSpecification")
                    .filter(|v| !v.is_null());
                match (predefined, custom) {
                    (Some(_), Some(_)) | (None, None) => {
                        return Err(validation(
                            "Exactly one of PredefinedMetricSpecification or CustomizedMetricSpecification must be specified",
                        ));
                    }
                    (Some(p), None) => {
                        let mt = p["PredefinedMetricType"].as_str().unwrap_or("");
                        if mt == "ALBRequestCountPerTarget" && p["ResourceLabel"].as_str().is_none()
                        {
                            return Err(validation(
                                "ResourceLabel must be specified for ALBRequestCountPerTarget",
                            ));
                        }
                    }
                    _ => {}
                }
            }
            "StepScaling" if step.is_none() => {
                return Err(validation(
                    "StepScalingPolicyConfiguration is required for StepScaling policies",
                ));
            }
            "PredictiveScaling" => {
                return Err(AwsError::not_implemented(
                    "application-autoscaling",
                    "PutScalingPolicy (PredictiveScaling)",
                ));
            }
            _ => {}
        }
        let target_key = t.key();
        let key = format!("{target_key}|policy|{name}");
        let existing = {
            let regions = self.lock();
            let r = regions.get(region);
            if !r.is_some_and(|r| r.records.contains_key(&target_key)) {
                return Err(not_found(format!(
                    "No scalable target registered for {}",
                    t.describe()
                )));
            }
            r.and_then(|r| r.records.get(&key))
                .map(|rec| rec.body.clone())
        };
        let policy_arn = existing
            .as_ref()
            .and_then(|b| b["PolicyARN"].as_str().map(str::to_string))
            .unwrap_or_else(|| {
                format!(
                    "arn:aws:autoscaling:{region}:{}:scalingPolicy:{}:resource/{}/{}:policyName/{name}",
                    self.account_id,
                    uuid::Uuid::new_v4(),
                    t.namespace,
                    t.resource
                )
            });
        let old_alarms = existing.as_ref().map(tt::alarm_names).unwrap_or_default();
        let mut alarms = Vec::new();
        if let (Some(cfg), "TargetTrackingScaling") = (tt, kind) {
            let metric = metric_of(&t, cfg);
            alarms = tt::put_alarms(
                &self.cloudwatch,
                region,
                t.resource,
                cfg,
                &metric,
                &policy_arn,
                &old_alarms,
            )?;
        }
        tt::delete_alarms(&self.cloudwatch, region, &tt::stale(old_alarms, &alarms));
        let mut body = json!({
            "PolicyARN": policy_arn,
            "PolicyName": name,
            "ServiceNamespace": t.namespace,
            "ResourceId": t.resource,
            "ScalableDimension": t.dimension,
            "PolicyType": kind,
            "Alarms": alarms,
            "CreationTime": existing.as_ref().map_or(json!(now), |b| b["CreationTime"].clone()),
        });
        if let Some(c) = tt.filter(|_| kind == "TargetTrackingScaling") {
            body["TargetTrackingScalingPolicyConfiguration"] = c.clone();
        }
        if let Some(c) = step.filter(|_| kind == "StepScaling") {
            body["StepScalingPolicyConfiguration"] = c.clone();
        }
        let answer = json!({"PolicyARN": body["PolicyARN"], "Alarms": body["Alarms"]});
        self.change(region, |r, touched| {
            r.records.insert(
                key.clone(),
                Record {
                    kind: Kind::Policy,
                    body,
                    tags: Vec::new(),
                },
            );
            touched.push(key.clone());
            Ok(())
        })?;
        Ok(answer)
    }

    pub(super) fn describe_scaling_policies(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ns = required(input, "ServiceNamespace", "serviceNamespace")?;
        one_of("serviceNamespace", ns, NAMESPACES)?;
        let names: Vec<&str> = input["PolicyNames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let rid = input["ResourceId"].as_str();
        let dim = input["ScalableDimension"].as_str();
        let items = self.records(region, Kind::Policy, |b| {
            b["ServiceNamespace"].as_str() == Some(ns)
                && (names.is_empty() || names.iter().any(|n| b["PolicyName"].as_str() == Some(n)))
                && rid.is_none_or(|r| b["ResourceId"].as_str() == Some(r))
                && dim.is_none_or(|d| b["ScalableDimension"].as_str() == Some(d))
        });
        listed(items, input, "ScalingPolicies")
    }

    pub(super) fn delete_scaling_policy(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let name = required(input, "PolicyName", "policyName")?;
        let t = target(input)?;
        let key = format!("{}|policy|{name}", t.key());
        let alarms = self.change(region, |r, touched| {
            let rec = r.records.remove(&key).ok_or_else(|| {
                not_found(format!(
                    "No scaling policy found for {}, policy name: {name}",
                    t.describe()
                ))
            })?;
            touched.push(key.clone());
            Ok(tt::alarm_names(&rec.body))
        })?;
        tt::delete_alarms(&self.cloudwatch, region, &alarms);
        Ok(json!({}))
    }

    pub(super) fn put_scheduled_action(
        &self,
        region: &str,
        input: &Value,
        now: f64,
    ) -> Result<Value, AwsError> {
        let name = required(input, "ScheduledActionName", "scheduledActionName")?;
        let t = target(input)?;
        let target_key = t.key();
        let key = format!("{target_key}|scheduled|{name}");
        let schedule = input["Schedule"].as_str();
        let well_formed = |s: &str| {
            (s.starts_with("at(") || s.starts_with("rate(") || s.starts_with("cron("))
                && s.ends_with(')')
        };
        if schedule.is_some_and(|s| !well_formed(s)) {
            return Err(validation(format!(
                "Schedule expression is invalid: {}",
                schedule.unwrap_or("")
            )));
        }
        self.change(region, |r, touched| {
            if !r.records.contains_key(&target_key) {
                return Err(not_found(format!("No scalable target registered for {}", t.describe())));
            }
            let old = r.records.get(&key).map(|rec| rec.body.clone());
            let mut body = old.clone().unwrap_or_else(|| {
                json!({
                    "ScheduledActionName": name,
                    "ScheduledActionARN": format!(
                        "arn:aws:autoscaling:{region}:{}:scheduledAction:{}:resource/{}/{}:scheduledActionName/{name}",
                        self.account_id, uuid::Uuid::new_v4(), t.namespace, t.resource
                    ),
                    "ServiceNamespace": t.namespace,
                    "ResourceId": t.resource,
                    "ScalableDimension": t.dimension,
                    "CreationTime": now,
                })
            });
            if old.is_none() && schedule.is_none() {
                return Err(validation("Schedule is required when creating a scheduled action"));
            }
            for k in ["Schedule", "Timezone", "StartTime", "EndTime", "ScalableTargetAction"] {
                if let Some(v) = input.get(k).filter(|v| !v.is_null()) {
                    body[k] = v.clone();
                }
            }
            r.records.insert(key.clone(), Record { kind: Kind::Scheduled, body, tags: Vec::new() });
            touched.push(key.clone());
            Ok(json!({}))
        })
    }

    pub(super) fn describe_scheduled_actions(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ns = required(input, "ServiceNamespace", "serviceNamespace")?;
        one_of("serviceNamespace", ns, NAMESPACES)?;
        let names: Vec<&str> = input["ScheduledActionNames"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let rid = input["ResourceId"].as_str();
        let dim = input["ScalableDimension"].as_str();
        let items = self.records(region, Kind::Scheduled, |b| {
            b["ServiceNamespace"].as_str() == Some(ns)
                && (names.is_empty()
                    || names
                        .iter()
                        .any(|n| b["ScheduledActionName"].as_str() == Some(n)))
                && rid.is_none_or(|r| b["ResourceId"].as_str() == Some(r))
                && dim.is_none_or(|d| b["ScalableDimension"].as_str() == Some(d))
        });
        listed(items, input, "ScheduledActions")
    }

    pub(super) fn delete_scheduled_action(
        &self,
        region: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let name = required(input, "ScheduledActionName", "scheduledActionName")?;
        let t = target(input)?;
        let key = format!("{}|scheduled|{name}", t.key());
        self.change(region, |r, touched| {
            r.records.remove(&key).ok_or_else(|| {
                not_found(format!(
                    "No scheduled action found for {}, scheduled action name: {name}",
                    t.describe()
                ))
            })?;
            touched.push(key.clone());
            Ok(json!({}))
        })
    }

    pub(super) fn describe_scaling_activities(&self, input: &Value) -> Result<Value, AwsError> {
        let ns = required(input, "ServiceNamespace", "serviceNamespace")?;
        one_of("serviceNamespace", ns, NAMESPACES)?;
        Ok(json!({"ScalingActivities": []}))
    }

    fn target_of_arn<'a>(
        r: &'a mut Region,
        arn: &str,
    ) -> Result<(String, &'a mut Record), AwsError> {
        r.records
            .iter_mut()
            .find(|(_, rec)| {
                rec.kind == Kind::Target && rec.body["ScalableTargetARN"].as_str() == Some(arn)
            })
            .map(|(k, rec)| (k.clone(), rec))
            .ok_or_else(|| {
                AwsError::bad_request(
                    "ResourceNotFoundException",
                    format!("No scalable target found for ARN: {arn}"),
                )
            })
    }

    pub(super) fn tag_resource(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let arn = required(input, "ResourceARN", "resourceARN")?.to_string();
        let tags = tags_map(&input["Tags"]);
        self.change(region, |r, touched| {
            let (key, rec) = Self::target_of_arn(r, &arn)?;
            for (k, v) in tags {
                rec.tags.retain(|t| t.0 != k);
                rec.tags.push((k, v));
            }
            touched.push(key);
            Ok(json!({}))
        })
    }

    pub(super) fn untag_resource(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let arn = required(input, "ResourceARN", "resourceARN")?.to_string();
        let keys: Vec<String> = input["TagKeys"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|k| k.as_str().map(str::to_string))
            .collect();
        self.change(region, |r, touched| {
            let (key, rec) = Self::target_of_arn(r, &arn)?;
            rec.tags.retain(|(k, _)| !keys.contains(k));
            touched.push(key);
            Ok(json!({}))
        })
    }

    pub(super) fn list_tags(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let arn = required(input, "ResourceARN", "resourceARN")?.to_string();
        let mut regions = self.lock();
        let r = regions.entry(region.to_string()).or_default();
        let (_, rec) = Self::target_of_arn(r, &arn)?;
        let tags: Map<String, Value> = rec
            .tags
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        Ok(json!({"Tags": tags}))
    }
}

/// The alarm members naming the metric a target-tracking configuration tracks: a single
/// metric (`Namespace`, `MetricName`, `Dimensions`, `Statistic`, `Unit`, `Period`), or a
/// customized spec's metric math as `Metrics` (each MetricStat on AWS's 60-second period).
fn metric_of(t: &Target<'_>, cfg: &Value) -> Map<String, Value> {
    if let Some(metric) = tt::customized(cfg) {
        return metric;
    }
    let p = &cfg["PredefinedMetricSpecification"];
    let kind = p["PredefinedMetricType"].as_str().unwrap_or("");
    let parts: Vec<&str> = t.resource.split('/').collect();
    let ecs_dims = || {
        json!([
            {"Name": "ClusterName", "Value": parts.get(1).copied().unwrap_or("")},
            {"Name": "ServiceName", "Value": parts.get(2).copied().unwrap_or("")},
        ])
    };
    let table_dims =
        || json!([{"Name": "TableName", "Value": parts.get(1).copied().unwrap_or("")}]);
    let (ns, name, dims, stat) = match kind {
        "ECSServiceAverageCPUUtilization" => ("AWS/ECS", "CPUUtilization", ecs_dims(), "Average"),
        "ECSServiceAverageMemoryUtilization" => {
            ("AWS/ECS", "MemoryUtilization", ecs_dims(), "Average")
        }
        "ALBRequestCountPerTarget" => {
            let label = p["ResourceLabel"].as_str().unwrap_or("");
            let tg = label
                .split_once("/targetgroup/")
                .map_or(label, |(_, tg)| tg);
            (
                "AWS/ApplicationELB",
                "RequestCountPerTarget",
                json!([{"Name": "TargetGroup", "Value": format!("targetgroup/{tg}")}]),
                "Sum",
            )
        }
        "DynamoDBReadCapacityUtilization" => (
            "AWS/DynamoDB",
            "ConsumedReadCapacityUnits",
            table_dims(),
            "Sum",
        ),
        "DynamoDBWriteCapacityUtilization" => (
            "AWS/DynamoDB",
            "ConsumedWriteCapacityUnits",
            table_dims(),
            "Sum",
        ),
        "LambdaProvisionedConcurrencyUtilization" => {
            let f: Vec<&str> = t.resource.split(':').collect();
            (
                "AWS/Lambda",
                "ProvisionedConcurrencyUtilization",
                json!([
                    {"Name": "FunctionName", "Value": f.get(1).copied().unwrap_or("")},
                    {"Name": "Resource", "Value": format!("{}:{}", f.get(1).copied().unwrap_or(""), f.get(2).copied().unwrap_or(""))},
                ]),
                "Maximum",
            )
        }
        other => ("AWS/ApplicationAutoScaling", other, json!([]), "Average"),
    };
    tt::predefined(ns, name, dims, stat)
}
