//! Auto Scaling's operations over JSON in the API's member names: each takes the operation's
//! input and answers its output, with AWS's defaults, checks and messages. A change to a
//! group's capacity reconciles its instances at once (launched or terminated through EC2,
//! registered with or deregistered from its load balancers) and records the scaling activities
//! AWS would show.

use super::instances::Launched;
use super::{AutoScalingService, Region};
use crate::cloudwatch::target_tracking as tt;
use crate::ec2::Resource;
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::bad_request(code, message)
}

fn validation(message: impl Into<String>) -> AwsError {
    err("ValidationError", message)
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn required<'a>(v: &'a Value, key: &str) -> Result<&'a str, AwsError> {
    text(v, key).filter(|s| !s.is_empty()).ok_or_else(|| {
        validation(format!(
            "1 validation error detected: Value null at '{}' failed to satisfy constraint: Member must not be null",
            lower_first(key)
        ))
    })
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn list(v: &Value, key: &str) -> Vec<Value> {
    v.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn int(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_i64)
}

fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

pub(crate) fn group_not_found(name: &str) -> AwsError {
    validation(format!(
        "AutoScalingGroup name not found - AutoScalingGroup '{name}' not found"
    ))
}

fn group<'a>(r: &'a Region, name: &str) -> Result<&'a Value, AwsError> {
    r.groups.get(name).ok_or_else(|| group_not_found(name))
}

fn group_mut<'a>(r: &'a mut Region, name: &str) -> Result<&'a mut Value, AwsError> {
    r.groups.get_mut(name).ok_or_else(|| group_not_found(name))
}

/// A page of `items` from the `NextToken` offset, at most `MaxRecords` (`default`, up to
/// `max`); answers the page and the next token.
fn page(
    input: &Value,
    items: Vec<Value>,
    default: i64,
    max: i64,
) -> Result<(Vec<Value>, Option<String>), AwsError> {
    let size = int(input, "MaxRecords").unwrap_or(default);
    if !(1..=max).contains(&size) {
        return Err(validation(format!(
            "1 validation error detected: Value '{size}' at 'maxRecords' failed to satisfy constraint: Member must have value less than or equal to {max}"
        )));
    }
    let start = match text(input, "NextToken") {
        None => 0,
        Some(t) => t
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= items.len())
            .ok_or_else(|| err("InvalidNextToken", "The token provided is invalid"))?,
    };
    let size = usize::try_from(size).unwrap_or(50);
    let end = (start + size).min(items.len());
    let next = (end < items.len()).then(|| end.to_string());
    Ok((items[start..end].to_vec(), next))
}

fn with_token(mut out: Value, token: Option<String>) -> Value {
    if let Some(t) = token {
        out["NextToken"] = json!(t);
    }
    out
}

/// Min, max and desired as AWS checks them: max at least min, desired between them.
fn check_bounds(min: i64, max: i64, desired: i64) -> Result<(), AwsError> {
    if min < 0 || max < 0 {
        return Err(validation("Min and max sizes must be at least 0"));
    }
    if max < min {
        return Err(validation(format!(
            "Max bound, {max}, must be greater than or equal to min bound, {min}"
        )));
    }
    if desired < min || desired > max {
        return Err(validation(format!(
            "Desired capacity:{desired} must be between the specified min size:{min} and max size:{max}"
        )));
    }
    Ok(())
}

/// The subnets of `VPCZoneIdentifier` (comma-separated), each checked through EC2, and their
/// zones; else the default VPC's default subnet in each of `AvailabilityZones`.
fn placement(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
) -> Result<(Vec<String>, Vec<String>), AwsError> {
    let ids: Vec<String> = text(input, "VPCZoneIdentifier")
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let mut zones = Vec::new();
    if !ids.is_empty() {
        let mut vpc = String::new();
        for id in &ids {
            let s = svc
                .ec2
                .subnet(region, id)
                .map_err(|_| validation(format!("The subnet ID '{id}' does not exist")))?;
            if !vpc.is_empty() && vpc != s.vpc_id {
                return Err(validation(
                    "The subnets of an Auto Scaling group must all be in the same VPC",
                ));
            }
            vpc = s.vpc_id;
            if !zones.contains(&s.availability_zone) {
                zones.push(s.availability_zone);
            }
        }
        return Ok((ids, zones));
    }
    let asked = strings(input, "AvailabilityZones");
    if asked.is_empty() {
        return Err(validation(
            "At least one Availability Zone or VPC Subnet is required.",
        ));
    }
    let records = svc.ec2.records(region)?;
    let mut subnets = Vec::new();
    for z in &asked {
        let s = records
            .iter()
            .find_map(|r| match r {
                Resource::Subnet(s) if s.default_for_az && &s.availability_zone == z => {
                    Some(s.id.clone())
                }
                _ => None,
            })
            .ok_or_else(|| validation(format!("Invalid Availability Zone: {z}")))?;
        subnets.push(s);
    }
    Ok((subnets, asked))
}

fn check_target_groups(
    svc: &AutoScalingService,
    region: &str,
    arns: &[String],
) -> Result<(), AwsError> {
    for a in arns {
        svc.elb.target_group(region, a).map_err(|_| {
            validation(
                "Provided Target Groups may not be valid. Please ensure they exist and try again.",
            )
        })?;
    }
    Ok(())
}

fn check_load_balancers(
    svc: &AutoScalingService,
    region: &str,
    names: &[String],
) -> Result<(), AwsError> {
    for n in names {
        if !svc.elb.classic_exists(region, n) {
            return Err(validation(
                "Provided Load Balancers may not be valid. Please ensure they exist and try again.",
            ));
        }
    }
    Ok(())
}

/// Tags as a group keeps them (`TagDescription`s, sorted by key).
fn tag_descriptions(group: &str, tags: &[Value]) -> Result<Vec<Value>, AwsError> {
    let mut out: Vec<Value> = Vec::new();
    for t in tags {
        let key = required(t, "Key")?;
        out.retain(|x| x["Key"] != key);
        out.push(json!({
            "ResourceId": group,
            "ResourceType": "auto-scaling-group",
            "Key": key,
            "Value": text(t, "Value").unwrap_or(""),
            "PropagateAtLaunch": t.get("PropagateAtLaunch").and_then(Value::as_bool).unwrap_or(false),
        }));
    }
    out.sort_by(|a, b| a["Key"].as_str().cmp(&b["Key"].as_str()));
    Ok(out)
}

/// The tags an instance of the group is launched with.
fn launch_tags(group: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = list(group, "Tags")
        .iter()
        .filter(|t| t["PropagateAtLaunch"] == true)
        .filter_map(|t| {
            Some((
                text(t, "Key")?.to_string(),
                text(t, "Value").unwrap_or("").to_string(),
            ))
        })
        .collect();
    if let Some(name) = text(group, "AutoScalingGroupName") {
        out.push(("aws:autoscaling:groupName".to_string(), name.to_string()));
    }
    out
}

/// The launch source members a group records from its input.
fn launch_source(input: &Value) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(lc) = text(input, "LaunchConfigurationName") {
        out.insert("LaunchConfigurationName".into(), json!(lc));
    }
    if let Some(lt) = input.get("LaunchTemplate").filter(|v| v.is_object()) {
        let mut lt = lt.clone();
        if lt.get("Version").is_none() {
            lt["Version"] = json!("$Default");
        }
        out.insert("LaunchTemplate".into(), lt);
    }
    if let Some(m) = input.get("MixedInstancesPolicy").filter(|v| v.is_object()) {
        out.insert("MixedInstancesPolicy".into(), m.clone());
    }
    out
}

/// The group's launch template (or its mixed instances policy's) named both ways, as AWS
/// reports it (`Version` as given).
fn name_template(
    svc: &AutoScalingService,
    region: &str,
    source: &mut Map<String, Value>,
) -> Result<(), AwsError> {
    let lt = match source.get_mut("LaunchTemplate") {
        Some(lt) => lt,
        None => match source
            .get_mut("MixedInstancesPolicy")
            .and_then(|m| m.pointer_mut("/LaunchTemplate/LaunchTemplateSpecification"))
        {
            Some(lt) => lt,
            None => return Ok(()),
        },
    };
    let view = svc
        .ec2
        .launch_template(
            region,
            text(lt, "LaunchTemplateId"),
            text(lt, "LaunchTemplateName"),
            text(lt, "Version"),
        )
        .map_err(|e| {
            validation(format!(
                "You must use a valid fully-formed launch template. {}",
                e.message
            ))
        })?;
    lt["LaunchTemplateId"] = json!(view.launch_template_id);
    lt["LaunchTemplateName"] = json!(view.launch_template_name);
    Ok(())
}

/// The launch template of a group's instances as the API reports them.
fn instance_template(svc: &AutoScalingService, region: &str, group: &Value) -> Option<Value> {
    let lt = group
        .get("LaunchTemplate")
        .filter(|v| v.is_object())
        .or_else(|| {
            group.pointer("/MixedInstancesPolicy/LaunchTemplate/LaunchTemplateSpecification")
        })?;
    let view = svc
        .ec2
        .launch_template(
            region,
            text(lt, "LaunchTemplateId"),
            text(lt, "LaunchTemplateName"),
            text(lt, "Version"),
        )
        .ok()?;
    Some(
        json!({"LaunchTemplateId": view.launch_template_id, "LaunchTemplateName": view.launch_template_name, "Version": view.version_number.to_string()}),
    )
}

fn activity(group: &Value, description: String, cause: String, details: Value) -> Value {
    let at = now();
    json!({
        "ActivityId": uuid(),
        "AutoScalingGroupName": group["AutoScalingGroupName"],
        "AutoScalingGroupARN": group["AutoScalingGroupARN"],
        "Description": description,
        "Cause": cause,
        "StartTime": at,
        "EndTime": at,
        "StatusCode": "Successful",
        "Progress": 100,
        "Details": details.to_string(),
    })
}

fn record(r: &mut Region, a: Value) {
    r.activities.insert(0, a);
    r.activities.truncate(1000);
}

/// What a capacity change says about why it happened, AWS's way.
fn why(reason: &str, from: i64, to: i64) -> String {
    let at = chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ");
    if to >= from {
        format!(
            "At {at} {reason} changing the desired capacity from {from} to {to}.  At {at} an instance was started in response to a difference between desired and actual capacity, increasing the capacity from {from} to {to}."
        )
    } else {
        format!(
            "At {at} {reason} changing the desired capacity from {from} to {to}.  At {at} an instance was taken out of service in response to a difference between desired and actual capacity, shrinking the capacity from {from} to {to}."
        )
    }
}

/// Brings the group's instances to its desired capacity: launches into the least used zone's
/// subnet, terminates from the most used zone (the oldest launched first), registers and
/// deregisters with the group's load balancers, records an activity per instance. On a failed
/// launch the instances launched by this call are terminated again.
pub(crate) fn reconcile(
    svc: &AutoScalingService,
    region: &str,
    r: &mut Region,
    name: &str,
    reason: &str,
    from: i64,
) -> Result<(), AwsError> {
    let g = group(r, name)?.clone();
    let desired = int(&g, "DesiredCapacity").unwrap_or(0);
    let mut instances = list(&g, "Instances");
    let live = |i: &Value| i["LifecycleState"] != "Standby";
    let count = i64::try_from(instances.iter().filter(|i| live(i)).count()).unwrap_or(0);
    let subnets = strings(&g, "Subnets");
    let target_groups = strings(&g, "TargetGroupARNs");
    let classic = strings(&g, "LoadBalancerNames");
    let cause = why(reason, from, desired);
    let mut activities = Vec::new();
    if count < desired {
        let spec = svc.group_spec(region, r, &g)?;
        let template = instance_template(svc, region, &g);
        let mut made: Vec<Launched> = Vec::new();
        for _ in count..desired {
            // The subnet whose zone has the fewest instances.
            let zone_count = |z: &str| {
                instances
                    .iter()
                    .filter(|i| i["AvailabilityZone"] == z)
                    .count()
            };
            let mut choices: Vec<(usize, String, String)> = Vec::new();
            for s in &subnets {
                let az = svc
                    .ec2
                    .subnet(region, s)
                    .map(|v| v.availability_zone)
                    .unwrap_or_default();
                choices.push((zone_count(&az), az, s.clone()));
            }
            let Some((_, _, subnet)) = choices.into_iter().min_by_key(|(n, _, _)| *n) else {
                break;
            };
            let launched = match svc.launch(region, &spec, &subnet, launch_tags(&g)) {
                Ok(l) => l,
                Err(e) => {
                    let ids: Vec<String> = made.iter().map(|m| m.instance_id.clone()).collect();
                    svc.terminate(region, &ids);
                    return Err(e);
                }
            };
            let mut i = json!({
                "InstanceId": launched.instance_id,
                "InstanceType": spec.instance_type,
                "AvailabilityZone": launched.availability_zone,
                "LifecycleState": "InService",
                "HealthStatus": "Healthy",
                "ProtectedFromScaleIn": g["NewInstancesProtectedFromScaleIn"] == true,
                "SubnetId": launched.subnet_id,
                "LaunchedAt": now(),
            });
            if let Some(lc) = text(&g, "LaunchConfigurationName") {
                i["LaunchConfigurationName"] = json!(lc);
            }
            if let Some(t) = &template {
                i["LaunchTemplate"] = t.clone();
            }
            activities.push(activity(
                &g,
                format!("Launching a new EC2 instance: {}", launched.instance_id),
                cause.clone(),
                json!({"Subnet ID": launched.subnet_id, "Availability Zone": launched.availability_zone}),
            ));
            instances.push(i);
            made.push(launched);
        }
        let ids: Vec<String> = made.iter().map(|m| m.instance_id.clone()).collect();
        if let Err(e) = register(svc, region, &target_groups, &classic, &ids) {
            svc.terminate(region, &ids);
            return Err(e);
        }
    } else if count > desired {
        let mut gone = Vec::new();
        for _ in desired..count {
            let mut zones: Vec<(usize, String)> = Vec::new();
            for i in instances
                .iter()
                .filter(|i| live(i) && i["ProtectedFromScaleIn"] != true)
            {
                let z = text(i, "AvailabilityZone").unwrap_or("").to_string();
                match zones.iter_mut().find(|(_, x)| *x == z) {
                    Some((n, _)) => *n += 1,
                    None => zones.push((1, z)),
                }
            }
            let Some((_, zone)) = zones.into_iter().max_by_key(|(n, _)| *n) else {
                break;
            };
            let Some(pos) = instances.iter().position(|i| {
                live(i)
                    && i["ProtectedFromScaleIn"] != true
                    && i["AvailabilityZone"] == zone.as_str()
            }) else {
                break;
            };
            let i = instances.remove(pos);
            let id = text(&i, "InstanceId").unwrap_or("").to_string();
            activities.push(activity(
                &g,
                format!("Terminating EC2 instance: {id}"),
                format!(
                    "{cause}  At {} instance {id} was selected for termination.",
                    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ")
                ),
                json!({"Subnet ID": i["SubnetId"], "Availability Zone": i["AvailabilityZone"]}),
            ));
            gone.push(id);
        }
        deregister(svc, region, &target_groups, &classic, &gone);
        svc.terminate(region, &gone);
    }
    group_mut(r, name)?["Instances"] = json!(instances);
    for a in activities {
        record(r, a);
    }
    Ok(())
}

fn register(
    svc: &AutoScalingService,
    region: &str,
    target_groups: &[String],
    classic: &[String],
    ids: &[String],
) -> Result<(), AwsError> {
    if ids.is_empty() {
        return Ok(());
    }
    let targets: Vec<(String, Option<i64>)> = ids.iter().map(|i| (i.clone(), None)).collect();
    for tg in target_groups {
        svc.elb.register_targets(region, tg, &targets)?;
    }
    for lb in classic {
        svc.elb.register_instances(region, lb, ids)?;
    }
    Ok(())
}

/// Deregisters instances from load balancers (one gone meanwhile is no matter).
fn deregister(
    svc: &AutoScalingService,
    region: &str,
    target_groups: &[String],
    classic: &[String],
    ids: &[String],
) {
    if ids.is_empty() {
        return;
    }
    let targets: Vec<(String, Option<i64>)> = ids.iter().map(|i| (i.clone(), None)).collect();
    for tg in target_groups {
        let _ = svc.elb.deregister_targets(region, tg, &targets);
    }
    for lb in classic {
        let _ = svc.elb.deregister_instances(region, lb, ids);
    }
}

fn instance_ids(g: &Value) -> Vec<String> {
    list(g, "Instances")
        .iter()
        .filter_map(|i| text(i, "InstanceId").map(str::to_string))
        .collect()
}

/// A group as DescribeAutoScalingGroups answers it.
/// A group as DescribeAutoScalingGroups answers it: its load balancers also listed as
/// `TrafficSources`, as AWS lists them.
fn public_group(g: &Value) -> Value {
    let mut out = g.clone();
    if let Some(o) = out.as_object_mut() {
        o.remove("Subnets");
    }
    let sources: Vec<Value> = strings(g, "TargetGroupARNs")
        .iter()
        .map(|a| json!({"Identifier": a, "Type": "elbv2"}))
        .chain(
            strings(g, "LoadBalancerNames")
                .iter()
                .map(|n| json!({"Identifier": n, "Type": "elb"})),
        )
        .collect();
    out["TrafficSources"] = json!(sources);
    out
}

/// AttachInstances: running EC2 instances in none of the region's groups join the group
/// (its desired capacity grows with them, within its max), registered with its load balancers.
fn attach_instances(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    let name = required(input, "AutoScalingGroupName")?.to_string();
    let ids = strings(input, "InstanceIds");
    let mut views = Vec::new();
    for id in &ids {
        let v = svc
            .ec2
            .instance(region, id)
            .map_err(|_| validation(format!("Instance {id} is not in correct state")))?;
        if v.state != "running" && v.state != "pending" {
            return Err(validation(format!("Instance {id} is not in correct state")));
        }
        views.push(v);
    }
    svc.change(region, |r| {
        for id in &ids {
            if let Some((other, _)) = instance_in_group(r, id) {
                return Err(validation(format!(
                    "The instance {id} is already part of the Auto Scaling group {other}."
                )));
            }
        }
        let g = group(r, &name)?.clone();
        let desired = int(&g, "DesiredCapacity").unwrap_or(0);
        let max = int(&g, "MaxSize").unwrap_or(0);
        let to = desired + i64::try_from(ids.len()).unwrap_or(0);
        if to > max {
            return Err(validation(format!(
                "The number of instances in the group would exceed the max size of the group ({max})."
            )));
        }
        register(svc, region, &strings(&g, "TargetGroupARNs"), &strings(&g, "LoadBalancerNames"), &ids)?;
        let mut instances = list(&g, "Instances");
        let cause = format!(
            "At {} an instance was added in response to a user request. Keeping the capacity at the new {to}.",
            chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ")
        );
        for v in views {
            instances.push(json!({
                "InstanceId": v.instance_id,
                "AvailabilityZone": v.availability_zone,
                "LifecycleState": "InService",
                "HealthStatus": "Healthy",
                "ProtectedFromScaleIn": false,
                "SubnetId": v.subnet_id,
                "LaunchedAt": now(),
            }));
            let a = activity(&g, format!("Attaching an existing EC2 instance: {}", v.instance_id), cause.clone(), json!({"Subnet ID": v.subnet_id, "Availability Zone": v.availability_zone}));
            record(r, a);
        }
        let gm = group_mut(r, &name)?;
        gm["Instances"] = json!(instances);
        gm["DesiredCapacity"] = json!(to);
        Ok(json!({}))
    })
}

/// DetachInstances: instances leave the group and its load balancers but keep running in EC2;
/// without decrementing, the group launches their replacements.
fn detach_instances(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    let name = required(input, "AutoScalingGroupName")?.to_string();
    let ids = strings(input, "InstanceIds");
    let decrement = input
        .get("ShouldDecrementDesiredCapacity")
        .and_then(Value::as_bool)
        .ok_or_else(|| validation("1 validation error detected: Value null at 'shouldDecrementDesiredCapacity' failed to satisfy constraint: Member must not be null"))?;
    svc.change(region, |r| {
        let g = group(r, &name)?.clone();
        let mut instances = list(&g, "Instances");
        for id in &ids {
            if !instances.iter().any(|i| i["InstanceId"] == id.as_str()) {
                return Err(validation(format!(
                    "The instance {id} is not part of Auto Scaling group {name}."
                )));
            }
        }
        let from = int(&g, "DesiredCapacity").unwrap_or(0);
        let to = if decrement { from - i64::try_from(ids.len()).unwrap_or(0) } else { from };
        let min = int(&g, "MinSize").unwrap_or(0);
        if to < min {
            return Err(validation(format!(
                "The number of instances in the group would fall below the min size of the group ({min})."
            )));
        }
        deregister(svc, region, &strings(&g, "TargetGroupARNs"), &strings(&g, "LoadBalancerNames"), &ids);
        instances.retain(|i| !ids.iter().any(|id| i["InstanceId"] == id.as_str()));
        let mut activities = Vec::new();
        for id in &ids {
            let a = activity(&g, format!("Detaching EC2 instance: {id}"), format!("At {} instance {id} was detached in response to a user request.", chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ")), json!({}));
            activities.push(a.clone());
            record(r, a);
        }
        let gm = group_mut(r, &name)?;
        gm["Instances"] = json!(instances);
        gm["DesiredCapacity"] = json!(to);
        if !decrement {
            reconcile(svc, region, r, &name, "an instance was replaced after a user request detached it", to)?;
        }
        Ok(json!({"Activities": activities}))
    })
}

fn create_launch_configuration(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    let name = required(input, "LaunchConfigurationName")?.to_string();
    if input.get("InstanceId").is_some() {
        return Err(validation(
            "cumulo cannot create a launch configuration from an instance: give ImageId and InstanceType",
        ));
    }
    let image = required(input, "ImageId")?.to_string();
    let instance_type = required(input, "InstanceType")?.to_string();
    if !svc.image_exists(region, &image) {
        return Err(validation(format!(
            "The image id '[{image}]' does not exist"
        )));
    }
    for g in strings(input, "SecurityGroups") {
        if g.starts_with("sg-") && svc.ec2.security_group(region, &g).is_err() {
            return Err(validation(format!(
                "The security group '{g}' does not exist"
            )));
        }
    }
    let mut body = input.clone();
    let arn = format!(
        "arn:aws:autoscaling:{region}:{}:launchConfiguration:{}:launchConfigurationName/{name}",
        svc.account_id,
        uuid()
    );
    body["LaunchConfigurationARN"] = json!(arn);
    body["ImageId"] = json!(image);
    body["InstanceType"] = json!(instance_type);
    body["CreatedTime"] = json!(now());
    for (k, v) in [
        ("KeyName", json!("")),
        ("KernelId", json!("")),
        ("RamdiskId", json!("")),
        ("UserData", json!("")),
        ("SecurityGroups", json!([])),
        ("ClassicLinkVPCSecurityGroups", json!([])),
        ("BlockDeviceMappings", json!([])),
        ("InstanceMonitoring", json!({"Enabled": true})),
        ("EbsOptimized", json!(false)),
    ] {
        if body.get(k).is_none() {
            body[k] = v;
        }
    }
    svc.change(region, |r| {
        if r.launch_configurations.contains_key(&name) {
            return Err(err(
                "AlreadyExists",
                format!("Launch Configuration by this name already exists - A launch configuration already exists with the name {name}"),
            ));
        }
        r.launch_configurations.insert(name, body);
        Ok(json!({}))
    })
}

fn create_group(svc: &AutoScalingService, region: &str, input: &Value) -> Result<Value, AwsError> {
    let name = required(input, "AutoScalingGroupName")?.to_string();
    if name.len() > 255 {
        return Err(validation(
            "1 validation error detected: Value at 'autoScalingGroupName' failed to satisfy constraint: Member must have length less than or equal to 255",
        ));
    }
    let mut source = launch_source(input);
    if source.is_empty() {
        return Err(validation(
            "Valid requests must contain either LaunchTemplate, LaunchConfigurationName, InstanceId or MixedInstancesPolicy parameter.",
        ));
    }
    if source.len() > 1 {
        return Err(validation(
            "Valid requests must contain either LaunchTemplate, LaunchConfigurationName, InstanceId or MixedInstancesPolicy parameter.",
        ));
    }
    name_template(svc, region, &mut source)?;
    let min = int(input, "MinSize").ok_or_else(|| validation("1 validation error detected: Value null at 'minSize' failed to satisfy constraint: Member must not be null"))?;
    let max = int(input, "MaxSize").ok_or_else(|| validation("1 validation error detected: Value null at 'maxSize' failed to satisfy constraint: Member must not be null"))?;
    let desired = int(input, "DesiredCapacity").unwrap_or(min);
    check_bounds(min, max, desired)?;
    let (subnets, zones) = placement(svc, region, input)?;
    let target_groups = strings(input, "TargetGroupARNs");
    check_target_groups(svc, region, &target_groups)?;
    let classic = strings(input, "LoadBalancerNames");
    check_load_balancers(svc, region, &classic)?;
    let tags = tag_descriptions(&name, &list(input, "Tags"))?;
    let hooks = list(input, "LifecycleHookSpecificationList");
    let hook_bodies: Vec<Value> = hooks
        .iter()
        .map(|h| hook_body(&name, h))
        .collect::<Result<_, _>>()?;
    let arn = format!(
        "arn:aws:autoscaling:{region}:{}:autoScalingGroup:{}:autoScalingGroupName/{name}",
        svc.account_id,
        uuid()
    );
    let mut g = json!({
        "AutoScalingGroupName": name,
        "AutoScalingGroupARN": arn,
        "MinSize": min,
        "MaxSize": max,
        "DesiredCapacity": desired,
        "DefaultCooldown": int(input, "DefaultCooldown").unwrap_or(300),
        "AvailabilityZones": zones,
        "LoadBalancerNames": classic,
        "TargetGroupARNs": target_groups,
        "HealthCheckType": text(input, "HealthCheckType").unwrap_or("EC2"),
        "HealthCheckGracePeriod": int(input, "HealthCheckGracePeriod").unwrap_or(0),
        "Instances": [],
        "CreatedTime": now(),
        "SuspendedProcesses": [],
        "VPCZoneIdentifier": text(input, "VPCZoneIdentifier").map(|_| subnets.join(",")).unwrap_or_default(),
        "EnabledMetrics": [],
        "Tags": tags,
        "TerminationPolicies": input.get("TerminationPolicies").filter(|t| t.as_array().is_some_and(|a| !a.is_empty())).cloned().unwrap_or(json!(["Default"])),
        "NewInstancesProtectedFromScaleIn": input.get("NewInstancesProtectedFromScaleIn").cloned().unwrap_or(json!(false)),
        "ServiceLinkedRoleARN": text(input, "ServiceLinkedRoleARN").map(str::to_string).unwrap_or_else(|| format!("arn:aws:iam::{}:role/aws-service-role/autoscaling.amazonaws.com/AWSServiceRoleForAutoScaling", svc.account_id)),
        "CapacityRebalance": input.get("CapacityRebalance").cloned().unwrap_or(json!(false)),
        "TrafficSources": [],
        "Subnets": subnets,
    });
    for (k, v) in source {
        g[k] = v;
    }
    for k in [
        "PlacementGroup",
        "MaxInstanceLifetime",
        "Context",
        "DesiredCapacityType",
        "DefaultInstanceWarmup",
        "InstanceMaintenancePolicy",
        "DeletionProtection",
        "AvailabilityZoneDistribution",
        "AvailabilityZoneImpairmentPolicy",
        "CapacityReservationSpecification",
        "InstanceLifecyclePolicy",
    ] {
        if let Some(v) = input.get(k) {
            g[k] = v.clone();
        }
    }
    svc.change(region, |r| {
        if r.groups.contains_key(&name) {
            return Err(err(
                "AlreadyExists",
                format!("AutoScalingGroup by this name already exists - A group with the name {name} already exists"),
            ));
        }
        if let Some(lc) = text(&g, "LaunchConfigurationName")
            && !r.launch_configurations.contains_key(lc)
        {
            return Err(validation(format!(
                "Launch configuration name not found - Launch configuration {lc} not found"
            )));
        }
        // The launch source must resolve even with nothing to launch yet.
        svc.group_spec(region, r, &g)?;
        r.groups.insert(name.clone(), g);
        for h in hook_bodies {
            let key = format!("{name}/{}", h["LifecycleHookName"].as_str().unwrap_or(""));
            r.hooks.insert(key, h);
        }
        reconcile(svc, region, r, &name, "a user request created an AutoScalingGroup", 0)?;
        Ok(json!({}))
    })
}

fn update_group(svc: &AutoScalingService, region: &str, input: &Value) -> Result<Value, AwsError> {
    let name = required(input, "AutoScalingGroupName")?.to_string();
    let placement_given =
        input.get("VPCZoneIdentifier").is_some() || input.get("AvailabilityZones").is_some();
    let placed = if placement_given {
        Some(placement(svc, region, input)?)
    } else {
        None
    };
    let mut source = launch_source(input);
    if source.len() > 1 {
        return Err(validation(
            "Valid requests must contain either LaunchTemplate, LaunchConfigurationName, InstanceId or MixedInstancesPolicy parameter.",
        ));
    }
    name_template(svc, region, &mut source)?;
    svc.change(region, |r| {
        let g = group(r, &name)?.clone();
        let from = int(&g, "DesiredCapacity").unwrap_or(0);
        let min = int(input, "MinSize").unwrap_or(int(&g, "MinSize").unwrap_or(0));
        let max = int(input, "MaxSize").unwrap_or(int(&g, "MaxSize").unwrap_or(0));
        let desired = match int(input, "DesiredCapacity") {
            Some(d) => d,
            // New bounds move the desired capacity into them, as on AWS.
            None => from.clamp(min.min(max), max.max(min)),
        };
        check_bounds(min, max, desired)?;
        let mut next = g.clone();
        if !source.is_empty() {
            if let Some(o) = next.as_object_mut() {
                o.remove("LaunchConfigurationName");
                o.remove("LaunchTemplate");
                o.remove("MixedInstancesPolicy");
            }
            for (k, v) in &source {
                next[k] = v.clone();
            }
            if let Some(lc) = text(&next, "LaunchConfigurationName")
                && !r.launch_configurations.contains_key(lc)
            {
                return Err(validation(format!(
                    "Launch configuration name not found - Launch configuration {lc} not found"
                )));
            }
            svc.group_spec(region, r, &next)?;
        }
        next["MinSize"] = json!(min);
        next["MaxSize"] = json!(max);
        next["DesiredCapacity"] = json!(desired);
        if let Some((subnets, zones)) = &placed {
            next["AvailabilityZones"] = json!(zones);
            next["Subnets"] = json!(subnets);
            if input.get("VPCZoneIdentifier").is_some() {
                next["VPCZoneIdentifier"] = json!(subnets.join(","));
            }
        }
        for k in [
            "DefaultCooldown",
            "HealthCheckType",
            "HealthCheckGracePeriod",
            "PlacementGroup",
            "TerminationPolicies",
            "NewInstancesProtectedFromScaleIn",
            "ServiceLinkedRoleARN",
            "MaxInstanceLifetime",
            "CapacityRebalance",
            "Context",
            "DesiredCapacityType",
            "DefaultInstanceWarmup",
            "InstanceMaintenancePolicy",
            "DeletionProtection",
            "AvailabilityZoneDistribution",
            "AvailabilityZoneImpairmentPolicy",
            "CapacityReservationSpecification",
            "InstanceLifecyclePolicy",
        ] {
            if let Some(v) = input.get(k) {
                next[k] = v.clone();
            }
        }
        r.groups.insert(name.clone(), next);
        reconcile(
            svc,
            region,
            r,
            &name,
            &format!("a user request update of AutoScalingGroup constraints to min: {min}, max: {max}, desired: {desired}"),
            from,
        )?;
        Ok(json!({}))
    })
}

fn delete_group(svc: &AutoScalingService, region: &str, input: &Value) -> Result<Value, AwsError> {
    let name = required(input, "AutoScalingGroupName")?.to_string();
    let force = input
        .get("ForceDelete")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let alarms = svc.change(region, |r| {
        let g = group(r, &name)?.clone();
        if g["DeletionProtection"] == "prevent-all-deletion"
            || (g["DeletionProtection"] == "prevent-force-deletion" && force)
        {
            return Err(validation(format!(
                "You cannot delete AutoScalingGroup {name} while its deletion protection is {}",
                g["DeletionProtection"].as_str().unwrap_or("")
            )));
        }
        let ids = instance_ids(&g);
        if !ids.is_empty() && !force {
            return Err(err(
                "ResourceInUse",
                "You cannot delete an AutoScalingGroup while there are instances or pending Spot instance request(s) still in the group.",
            ));
        }
        if !ids.is_empty() {
            let from = int(&g, "DesiredCapacity").unwrap_or(0);
            group_mut(r, &name)?["DesiredCapacity"] = json!(0);
            reconcile(svc, region, r, &name, "a user request deleted the AutoScalingGroup", from)?;
        }
        r.groups.remove(&name);
        let prefix = format!("{name}/");
        let alarms: Vec<String> = r
            .policies
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .flat_map(|(_, p)| tt::alarm_names(p))
            .collect();
        r.policies.retain(|k, _| !k.starts_with(&prefix));
        r.scheduled.retain(|k, _| !k.starts_with(&prefix));
        r.hooks.retain(|k, _| !k.starts_with(&prefix));
        r.warm_pools.remove(&name);
        Ok(alarms)
    })?;
    // The group's policies go with it, and so do their alarms.
    tt::delete_alarms(&svc.cloudwatch, region, &alarms);
    Ok(json!({}))
}

fn set_desired(
    svc: &AutoScalingService,
    region: &str,
    name: &str,
    desired: i64,
    reason: &str,
) -> Result<(), AwsError> {
    svc.change(region, |r| {
        let g = group(r, name)?;
        let (min, max) = (int(g, "MinSize").unwrap_or(0), int(g, "MaxSize").unwrap_or(0));
        if desired > max {
            return Err(validation(format!(
                "New SetDesiredCapacity value {desired} is above max value {max} for the AutoScalingGroup."
            )));
        }
        if desired < min {
            return Err(validation(format!(
                "New SetDesiredCapacity value {desired} is below min value {min} for the AutoScalingGroup."
            )));
        }
        let from = int(g, "DesiredCapacity").unwrap_or(0);
        group_mut(r, name)?["DesiredCapacity"] = json!(desired);
        reconcile(svc, region, r, name, reason, from)
    })
}

fn describe_groups(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    let names = strings(input, "AutoScalingGroupNames");
    let filters = list(input, "Filters");
    svc.read(region, |r| {
        let items: Vec<Value> = r
            .groups
            .iter()
            .filter(|(n, _)| names.is_empty() || names.contains(n))
            .filter(|(_, g)| {
                filters.iter().all(|f| {
                    let values = strings(f, "Values");
                    let tags = list(g, "Tags");
                    match text(f, "Name").unwrap_or("") {
                        "tag-key" => tags
                            .iter()
                            .any(|t| values.iter().any(|v| t["Key"] == v.as_str())),
                        "tag-value" => tags
                            .iter()
                            .any(|t| values.iter().any(|v| t["Value"] == v.as_str())),
                        n => match n.strip_prefix("tag:") {
                            Some(k) => tags.iter().any(|t| {
                                t["Key"] == k && values.iter().any(|v| t["Value"] == v.as_str())
                            }),
                            None => false,
                        },
                    }
                })
            })
            .map(|(_, g)| public_group(g))
            .collect();
        let (items, token) = page(input, items, 50, 100)?;
        Ok(with_token(json!({"AutoScalingGroups": items}), token))
    })
}

fn describe_instances(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    let ids = strings(input, "InstanceIds");
    svc.read(region, |r| {
        let mut items = Vec::new();
        for g in r.groups.values() {
            for i in list(g, "Instances") {
                if ids.is_empty() || ids.iter().any(|x| i["InstanceId"] == x.as_str()) {
                    let mut d = i.clone();
                    d["AutoScalingGroupName"] = g["AutoScalingGroupName"].clone();
                    d["HealthStatus"] = json!("HEALTHY");
                    items.push(d);
                }
            }
        }
        let (items, token) = page(input, items, 50, 50)?;
        Ok(with_token(json!({"AutoScalingInstances": items}), token))
    })
}

fn policy_body(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
    existing: Option<&Value>,
) -> Result<Value, AwsError> {
    let group_name = required(input, "AutoScalingGroupName")?;
    let name = required(input, "PolicyName")?;
    let kind = text(input, "PolicyType").unwrap_or("SimpleScaling");
    let adjustment = text(input, "AdjustmentType");
    if let Some(a) = adjustment
        && ![
            "ChangeInCapacity",
            "ExactCapacity",
            "PercentChangeInCapacity",
        ]
        .contains(&a)
    {
        return Err(validation(format!("Invalid adjustment type {a}")));
    }
    match kind {
        "SimpleScaling" => {
            if adjustment.is_none() || input.get("ScalingAdjustment").is_none() {
                return Err(validation(
                    "ScalingAdjustment and AdjustmentType are required for a SimpleScaling policy",
                ));
            }
        }
        "StepScaling" => {
            if adjustment.is_none() || list(input, "StepAdjustments").is_empty() {
                return Err(validation(
                    "StepAdjustments and AdjustmentType are required for a StepScaling policy",
                ));
            }
        }
        "TargetTrackingScaling" => {
            if input.get("TargetTrackingConfiguration").is_none() {
                return Err(validation(
                    "TargetTrackingConfiguration is required for a TargetTrackingScaling policy",
                ));
            }
        }
        "PredictiveScaling" => {
            if input.get("PredictiveScalingConfiguration").is_none() {
                return Err(validation(
                    "PredictiveScalingConfiguration is required for a PredictiveScaling policy",
                ));
            }
        }
        other => {
            return Err(validation(format!(
                "1 validation error detected: Value '{other}' at 'policyType' failed to satisfy constraint: Member must satisfy enum value set: [SimpleScaling, StepScaling, TargetTrackingScaling, PredictiveScaling]"
            )));
        }
    }
    let arn = existing
        .and_then(|p| text(p, "PolicyARN"))
        .map(str::to_string)
        .unwrap_or_else(|| {
            format!(
                "arn:aws:autoscaling:{region}:{}:scalingPolicy:{}:autoScalingGroupName/{group_name}:policyName/{name}",
                svc.account_id,
                uuid()
            )
        });
    let mut body = input.clone();
    body["PolicyARN"] = json!(arn);
    body["PolicyType"] = json!(kind);
    body["Enabled"] = input.get("Enabled").cloned().unwrap_or(json!(true));
    // A target-tracking policy's alarms are made by the caller, through CloudWatch.
    body["Alarms"] = json!([]);
    if kind == "StepScaling" && body.get("MetricAggregationType").is_none() {
        body["MetricAggregationType"] = json!("Average");
    }
    if kind == "TargetTrackingScaling"
        && body["TargetTrackingConfiguration"]
            .get("DisableScaleIn")
            .is_none()
    {
        body["TargetTrackingConfiguration"]["DisableScaleIn"] = json!(false);
    }
    Ok(body)
}

/// PutScalingPolicy: the policy, and for target tracking its alarms through CloudWatch (made
/// before the policy is stored, so a refused alarm stores nothing; an update keeps their names).
fn put_scaling_policy(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    let group_name = required(input, "AutoScalingGroupName")?.to_string();
    let name = required(input, "PolicyName")?.to_string();
    let key = format!("{group_name}/{name}");
    let (mut body, old) = svc.read(region, |r| {
        group(r, &group_name)?;
        let existing = r.policies.get(&key);
        let body = policy_body(svc, region, input, existing)?;
        Ok((body, existing.map(tt::alarm_names).unwrap_or_default()))
    })?;
    let cfg = &body["TargetTrackingConfiguration"];
    let alarms = if body["PolicyType"] == "TargetTrackingScaling" {
        let metric = match tt::customized(cfg) {
            Some(metric) => metric,
            None => predefined_metric(&group_name, cfg)?,
        };
        let arn = body["PolicyARN"].as_str().unwrap_or_default();
        tt::put_alarms(
            &svc.cloudwatch,
            region,
            &group_name,
            cfg,
            &metric,
            arn,
            &old,
        )?
    } else {
        Vec::new()
    };
    tt::delete_alarms(&svc.cloudwatch, region, &tt::stale(old, &alarms));
    body["Alarms"] = json!(alarms);
    let out = json!({"PolicyARN": body["PolicyARN"], "Alarms": body["Alarms"]});
    svc.change(region, |r| {
        group(r, &group_name)?;
        r.policies.insert(key, body);
        Ok(out)
    })
}

/// The metric a predefined target-tracking type tracks for a group, as AWS's alarms name it.
fn predefined_metric(group_name: &str, cfg: &Value) -> Result<Map<String, Value>, AwsError> {
    let p = &cfg["PredefinedMetricSpecification"];
    let by_group = || json!([{"Name": "AutoScalingGroupName", "Value": group_name}]);
    Ok(match p["PredefinedMetricType"].as_str().unwrap_or("") {
        "ASGAverageCPUUtilization" => {
            tt::predefined("AWS/EC2", "CPUUtilization", by_group(), "Average")
        }
        "ASGAverageNetworkIn" => tt::predefined("AWS/EC2", "NetworkIn", by_group(), "Average"),
        "ASGAverageNetworkOut" => tt::predefined("AWS/EC2", "NetworkOut", by_group(), "Average"),
        "ALBRequestCountPerTarget" => {
            // ResourceLabel: app/<lb>/<id>/targetgroup/<tg>/<id>; the dimension is its tail.
            let label = p["ResourceLabel"].as_str().unwrap_or("");
            let tg = label
                .split_once("/targetgroup/")
                .map_or(label, |(_, tg)| tg);
            let dims = json!([{"Name": "TargetGroup", "Value": format!("targetgroup/{tg}")}]);
            tt::predefined("AWS/ApplicationELB", "RequestCountPerTarget", dims, "Sum")
        }
        other => {
            return Err(validation(format!(
                "1 validation error detected: Value '{other}' at 'targetTrackingConfiguration.predefinedMetricSpecification.predefinedMetricType' failed to satisfy constraint: Member must satisfy enum value set: [ASGAverageCPUUtilization, ASGAverageNetworkIn, ASGAverageNetworkOut, ALBRequestCountPerTarget]"
            )));
        }
    })
}

/// The desired capacity a policy's adjustment gives, within the group's bounds.
fn adjusted(g: &Value, adjustment_type: &str, adjustment: i64, min_magnitude: Option<i64>) -> i64 {
    let current = int(g, "DesiredCapacity").unwrap_or(0);
    let (min, max) = (
        int(g, "MinSize").unwrap_or(0),
        int(g, "MaxSize").unwrap_or(0),
    );
    let target = match adjustment_type {
        "ExactCapacity" => adjustment,
        "PercentChangeInCapacity" => {
            let mut delta = current * adjustment / 100;
            if delta == 0 && adjustment != 0 {
                delta = adjustment.signum();
            }
            if let Some(m) = min_magnitude
                && delta.abs() < m
            {
                delta = m * delta.signum();
            }
            current + delta
        }
        _ => current + adjustment,
    };
    target.clamp(min, max)
}

fn execute_policy(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    let policy_name = required(input, "PolicyName")?;
    let (group_name, policy) = svc.read(region, |r| {
        find_policy(r, text(input, "AutoScalingGroupName"), policy_name)
            .map(|(_, p)| {
                (
                    text(p, "AutoScalingGroupName").unwrap_or("").to_string(),
                    p.clone(),
                )
            })
            .ok_or_else(|| validation(format!("No Policy found with name {policy_name}")))
    })?;
    let adjustment_type = text(&policy, "AdjustmentType").unwrap_or("ChangeInCapacity");
    let adjustment = match text(&policy, "PolicyType").unwrap_or("SimpleScaling") {
        "SimpleScaling" => int(&policy, "ScalingAdjustment").unwrap_or(0),
        "StepScaling" => {
            let metric = input
                .get("MetricValue")
                .and_then(Value::as_f64)
                .ok_or_else(|| validation("MetricValue is required for a StepScaling policy"))?;
            let threshold = input
                .get("BreachThreshold")
                .and_then(Value::as_f64)
                .ok_or_else(|| {
                    validation("BreachThreshold is required for a StepScaling policy")
                })?;
            let diff = metric - threshold;
            list(&policy, "StepAdjustments")
                .iter()
                .find(|s| {
                    let lo = s.get("MetricIntervalLowerBound").and_then(Value::as_f64);
                    let hi = s.get("MetricIntervalUpperBound").and_then(Value::as_f64);
                    lo.is_none_or(|l| diff >= l) && hi.is_none_or(|h| diff < h)
                })
                .and_then(|s| int(s, "ScalingAdjustment"))
                .ok_or_else(|| {
                    validation("The metric value matches no step adjustment of the policy")
                })?
        }
        _ => {
            return Err(validation(
                "ExecutePolicy is supported only for SimpleScaling and StepScaling policies",
            ));
        }
    };
    let target = svc.read(region, |r| {
        Ok(adjusted(
            group(r, &group_name)?,
            adjustment_type,
            adjustment,
            int(&policy, "MinAdjustmentMagnitude"),
        ))
    })?;
    set_desired(
        svc,
        region,
        &group_name,
        target,
        &format!("a user request executed policy {policy_name}"),
    )?;
    Ok(json!({}))
}

/// A policy by name (within a group, or any) or by ARN.
fn find_policy<'a>(
    r: &'a Region,
    group: Option<&str>,
    name: &str,
) -> Option<(&'a String, &'a Value)> {
    r.policies.iter().find(|(_, p)| {
        (p["PolicyARN"] == name || p["PolicyName"] == name)
            && group.is_none_or(|g| p["AutoScalingGroupName"] == g)
    })
}

fn scheduled_body(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    let group_name = required(input, "AutoScalingGroupName")?;
    let name = required(input, "ScheduledActionName")?;
    if ["MinSize", "MaxSize", "DesiredCapacity"]
        .iter()
        .all(|k| input.get(*k).is_none())
    {
        return Err(validation(
            "At least one of MinSize, MaxSize and DesiredCapacity must be specified",
        ));
    }
    let mut body = input.clone();
    if let Some(t) = text(input, "Time") {
        body["StartTime"] = json!(t);
    }
    if body.get("StartTime").is_none() {
        body["StartTime"] = json!(now());
    }
    body["Time"] = body["StartTime"].clone();
    body["ScheduledActionARN"] = json!(format!(
        "arn:aws:autoscaling:{region}:{}:scheduledUpdateGroupAction:{}:autoScalingGroupName/{group_name}:scheduledActionName/{name}",
        svc.account_id,
        uuid()
    ));
    Ok(body)
}

const TRANSITIONS: &[&str] = &[
    "autoscaling:EC2_INSTANCE_LAUNCHING",
    "autoscaling:EC2_INSTANCE_TERMINATING",
];

fn hook_body(group_name: &str, input: &Value) -> Result<Value, AwsError> {
    let name = required(input, "LifecycleHookName")?;
    let transition = required(input, "LifecycleTransition")?;
    if !TRANSITIONS.contains(&transition) {
        return Err(validation(format!(
            "Invalid Lifecycle Transition: {transition} is not a valid lifecycle transition"
        )));
    }
    let heartbeat = int(input, "HeartbeatTimeout").unwrap_or(3600);
    if !(30..=7200).contains(&heartbeat) {
        return Err(validation(format!(
            "HeartbeatTimeout {heartbeat} must be between 30 and 7200 seconds"
        )));
    }
    let result = text(input, "DefaultResult").unwrap_or("ABANDON");
    if !matches!(result, "CONTINUE" | "ABANDON") {
        return Err(validation(format!(
            "Invalid DefaultResult: {result} must be CONTINUE or ABANDON"
        )));
    }
    let mut body = json!({
        "LifecycleHookName": name,
        "AutoScalingGroupName": group_name,
        "LifecycleTransition": transition,
        "HeartbeatTimeout": heartbeat,
        "GlobalTimeout": (heartbeat * 100).min(172800),
        "DefaultResult": result,
    });
    for k in ["NotificationTargetARN", "RoleARN", "NotificationMetadata"] {
        if let Some(v) = input.get(k) {
            body[k] = v.clone();
        }
    }
    Ok(body)
}

fn change_tags(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
    delete: bool,
) -> Result<Value, AwsError> {
    let tags = list(input, "Tags");
    svc.change(region, |r| {
        for t in &tags {
            let group_name = required(t, "ResourceId")?;
            let kind = text(t, "ResourceType").unwrap_or("auto-scaling-group");
            if kind != "auto-scaling-group" {
                return Err(validation(format!("Invalid resource type {kind}")));
            }
            let g = group_mut(r, group_name)?;
            let key = required(t, "Key")?;
            let mut current = list(g, "Tags");
            current.retain(|x| x["Key"] != key);
            if !delete {
                current.extend(tag_descriptions(group_name, std::slice::from_ref(t))?);
                current.sort_by(|a, b| a["Key"].as_str().cmp(&b["Key"].as_str()));
                if current.len() > 50 {
                    return Err(err(
                        "LimitExceeded",
                        "The number of tags exceeds the limit of 50",
                    ));
                }
            }
            g["Tags"] = json!(current);
        }
        Ok(json!({}))
    })
}

fn describe_tags(svc: &AutoScalingService, region: &str, input: &Value) -> Result<Value, AwsError> {
    let filters = list(input, "Filters");
    svc.read(region, |r| {
        let items: Vec<Value> = r
            .groups
            .values()
            .flat_map(|g| list(g, "Tags"))
            .filter(|t| {
                filters.iter().all(|f| {
                    let values = strings(f, "Values");
                    let field = match text(f, "Name").unwrap_or("") {
                        "auto-scaling-group" => "ResourceId",
                        "key" => "Key",
                        "value" => "Value",
                        "propagate-at-launch" => "PropagateAtLaunch",
                        _ => return false,
                    };
                    values.iter().any(|v| match &t[field] {
                        Value::Bool(b) => b.to_string() == *v,
                        x => x == v.as_str(),
                    })
                })
            })
            .collect();
        let (items, token) = page(input, items, 50, 100)?;
        Ok(with_token(json!({"Tags": items}), token))
    })
}

fn attach(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
    member: &str,
    detach: bool,
) -> Result<Value, AwsError> {
    let name = required(input, "AutoScalingGroupName")?.to_string();
    let given = strings(input, member);
    if !detach {
        if member == "TargetGroupARNs" {
            check_target_groups(svc, region, &given)?;
        } else {
            check_load_balancers(svc, region, &given)?;
        }
    }
    svc.change(region, |r| {
        let g = group(r, &name)?;
        let ids = instance_ids(g);
        let mut current = strings(g, member);
        let (tgs, lbs): (Vec<String>, Vec<String>) = if member == "TargetGroupARNs" {
            (given.clone(), Vec::new())
        } else {
            (Vec::new(), given.clone())
        };
        if detach {
            deregister(svc, region, &tgs, &lbs, &ids);
            current.retain(|x| !given.contains(x));
        } else {
            let new_tgs: Vec<String> = tgs
                .iter()
                .filter(|x| !current.contains(x))
                .cloned()
                .collect();
            let new_lbs: Vec<String> = lbs
                .iter()
                .filter(|x| !current.contains(x))
                .cloned()
                .collect();
            register(svc, region, &new_tgs, &new_lbs, &ids)?;
            for x in given {
                if !current.contains(&x) {
                    current.push(x);
                }
            }
        }
        group_mut(r, &name)?[member] = json!(current);
        Ok(json!({}))
    })
}

fn instance_in_group<'a>(r: &'a Region, id: &str) -> Option<(&'a String, Value)> {
    r.groups.iter().find_map(|(n, g)| {
        list(g, "Instances")
            .into_iter()
            .find(|i| i["InstanceId"] == id)
            .map(|i| (n, i))
    })
}

fn terminate_instance(
    svc: &AutoScalingService,
    region: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    let id = required(input, "InstanceId")?.to_string();
    let decrement = input
        .get("ShouldDecrementDesiredCapacity")
        .and_then(Value::as_bool)
        .ok_or_else(|| validation("1 validation error detected: Value null at 'shouldDecrementDesiredCapacity' failed to satisfy constraint: Member must not be null"))?;
    svc.change(region, |r| {
        let (name, instance) = instance_in_group(r, &id)
            .map(|(n, i)| (n.clone(), i))
            .ok_or_else(|| validation(format!("Instance Id not found - No managed instance found for instance ID: {id}")))?;
        let g = group(r, &name)?.clone();
        let from = int(&g, "DesiredCapacity").unwrap_or(0);
        let min = int(&g, "MinSize").unwrap_or(0);
        if decrement && from - 1 < min {
            return Err(validation(format!(
                "Currently, desiredSize equals minSize ({min}). Terminating instance without replacement will violate group's min size constraint. Either set shouldDecrementDesiredCapacity flag to false or lower group's min size."
            )));
        }
        deregister(svc, region, &strings(&g, "TargetGroupARNs"), &strings(&g, "LoadBalancerNames"), std::slice::from_ref(&id));
        svc.terminate(region, std::slice::from_ref(&id));
        let to = if decrement { from - 1 } else { from };
        let cause = format!(
            "At {} instance {id} was taken out of service in response to a user request{}.",
            chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ"),
            if decrement { ", shrinking the capacity from {from} to {to}" } else { "" }
        )
        .replace("{from}", &from.to_string())
        .replace("{to}", &to.to_string());
        let a = activity(&g, format!("Terminating EC2 instance: {id}"), cause, json!({"Subnet ID": instance["SubnetId"], "Availability Zone": instance["AvailabilityZone"]}));
        let gm = group_mut(r, &name)?;
        let kept: Vec<Value> = list(gm, "Instances").into_iter().filter(|i| i["InstanceId"] != id.as_str()).collect();
        gm["Instances"] = json!(kept);
        gm["DesiredCapacity"] = json!(to);
        record(r, a.clone());
        if !decrement {
            reconcile(svc, region, r, &name, "an instance was replaced after a user request terminated it", to)?;
        }
        Ok(json!({"Activity": a}))
    })
}

pub(crate) fn dispatch(
    svc: &AutoScalingService,
    region: &str,
    op: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    match op {
        "CreateLaunchConfiguration" => create_launch_configuration(svc, region, input),
        "DescribeLaunchConfigurations" => {
            let names = strings(input, "LaunchConfigurationNames");
            svc.read(region, |r| {
                let items: Vec<Value> = r
                    .launch_configurations
                    .iter()
                    .filter(|(n, _)| names.is_empty() || names.contains(n))
                    .map(|(_, lc)| lc.clone())
                    .collect();
                let (items, token) = page(input, items, 50, 100)?;
                Ok(with_token(json!({"LaunchConfigurations": items}), token))
            })
        }
        "DeleteLaunchConfiguration" => {
            let name = required(input, "LaunchConfigurationName")?.to_string();
            svc.change(region, |r| {
                if !r.launch_configurations.contains_key(&name) {
                    return Err(validation(format!(
                        "Launch configuration name not found - Launch configuration {name} not found"
                    )));
                }
                if let Some(g) = r.groups.values().find(|g| g["LaunchConfigurationName"] == name.as_str()) {
                    return Err(err(
                        "ResourceInUse",
                        format!(
                            "Cannot delete launch configuration {name} because it is attached to AutoScalingGroup {}",
                            g["AutoScalingGroupName"].as_str().unwrap_or("")
                        ),
                    ));
                }
                r.launch_configurations.remove(&name);
                Ok(json!({}))
            })
        }
        "CreateAutoScalingGroup" => create_group(svc, region, input),
        "UpdateAutoScalingGroup" => update_group(svc, region, input),
        "DeleteAutoScalingGroup" => delete_group(svc, region, input),
        "DescribeAutoScalingGroups" => describe_groups(svc, region, input),
        "DescribeAutoScalingInstances" => describe_instances(svc, region, input),
        "SetDesiredCapacity" => {
            let name = required(input, "AutoScalingGroupName")?;
            let desired = int(input, "DesiredCapacity").ok_or_else(|| validation("1 validation error detected: Value null at 'desiredCapacity' failed to satisfy constraint: Member must not be null"))?;
            set_desired(
                svc,
                region,
                name,
                desired,
                "a user request explicitly set group desired capacity",
            )?;
            Ok(json!({}))
        }
        "TerminateInstanceInAutoScalingGroup" => terminate_instance(svc, region, input),
        "AttachInstances" => attach_instances(svc, region, input),
        "DetachInstances" => detach_instances(svc, region, input),
        "SetInstanceProtection" | "SetInstanceHealth" | "EnterStandby" | "ExitStandby" => {
            let ids: Vec<String> = match text(input, "InstanceId") {
                Some(i) => vec![i.to_string()],
                None => strings(input, "InstanceIds"),
            };
            svc.change(region, |r| {
                for id in &ids {
                    let (name, _) = instance_in_group(r, id)
                        .map(|(n, i)| (n.clone(), i))
                        .ok_or_else(|| validation(format!("Instance Id not found - No managed instance found for instance ID: {id}")))?;
                    if let Some(g) = text(input, "AutoScalingGroupName")
                        && g != name
                    {
                        return Err(validation(format!("The instance {id} is not part of Auto Scaling group {g}.")));
                    }
                    let g = group_mut(r, &name)?;
                    let mut all = list(g, "Instances");
                    for i in all.iter_mut().filter(|i| i["InstanceId"] == id.as_str()) {
                        match op {
                            "SetInstanceProtection" => i["ProtectedFromScaleIn"] = input["ProtectedFromScaleIn"].clone(),
                            "SetInstanceHealth" => i["HealthStatus"] = input["HealthStatus"].clone(),
                            "EnterStandby" => i["LifecycleState"] = json!("Standby"),
                            _ => i["LifecycleState"] = json!("InService"),
                        }
                    }
                    g["Instances"] = json!(all);
                    if op == "EnterStandby" && input["ShouldDecrementDesiredCapacity"] == true {
                        let d = int(g, "DesiredCapacity").unwrap_or(0);
                        g["DesiredCapacity"] = json!((d - 1).max(0));
                    }
                }
                Ok(if op.ends_with("Standby") { json!({"Activities": []}) } else { json!({}) })
            })
        }
        "PutScalingPolicy" => put_scaling_policy(svc, region, input),
        "DescribePolicies" => {
            let group_name = text(input, "AutoScalingGroupName");
            let names = strings(input, "PolicyNames");
            let types = strings(input, "PolicyTypes");
            svc.read(region, |r| {
                if let Some(g) = group_name {
                    group(r, g)?;
                }
                let items: Vec<Value> = r
                    .policies
                    .values()
                    .filter(|p| group_name.is_none_or(|g| p["AutoScalingGroupName"] == g))
                    .filter(|p| {
                        names.is_empty()
                            || names.iter().any(|n| {
                                p["PolicyName"] == n.as_str() || p["PolicyARN"] == n.as_str()
                            })
                    })
                    .filter(|p| {
                        types.is_empty() || types.iter().any(|t| p["PolicyType"] == t.as_str())
                    })
                    .cloned()
                    .collect();
                let (items, token) = page(input, items, 50, 100)?;
                Ok(with_token(json!({"ScalingPolicies": items}), token))
            })
        }
        "DeletePolicy" => {
            let name = required(input, "PolicyName")?;
            let alarms = svc.change(region, |r| {
                let key = find_policy(r, text(input, "AutoScalingGroupName"), name)
                    .map(|(k, _)| k.clone())
                    .ok_or_else(|| validation(format!("Policy {name} not found")))?;
                Ok(r.policies.remove(&key).map(|p| tt::alarm_names(&p)))
            })?;
            tt::delete_alarms(&svc.cloudwatch, region, &alarms.unwrap_or_default());
            Ok(json!({}))
        }
        "ExecutePolicy" => execute_policy(svc, region, input),
        "PutScheduledUpdateGroupAction" => {
            let group_name = required(input, "AutoScalingGroupName")?.to_string();
            let body = scheduled_body(svc, region, input)?;
            svc.change(region, |r| {
                group(r, &group_name)?;
                let key = format!(
                    "{group_name}/{}",
                    body["ScheduledActionName"].as_str().unwrap_or("")
                );
                r.scheduled.insert(key, body);
                Ok(json!({}))
            })
        }
        "BatchPutScheduledUpdateGroupAction" => {
            let group_name = required(input, "AutoScalingGroupName")?.to_string();
            let mut bodies = Vec::new();
            for a in list(input, "ScheduledUpdateGroupActions") {
                let mut a = a.clone();
                a["AutoScalingGroupName"] = json!(group_name);
                bodies.push(scheduled_body(svc, region, &a)?);
            }
            svc.change(region, |r| {
                group(r, &group_name)?;
                for b in bodies {
                    let key = format!(
                        "{group_name}/{}",
                        b["ScheduledActionName"].as_str().unwrap_or("")
                    );
                    r.scheduled.insert(key, b);
                }
                Ok(json!({"FailedScheduledUpdateGroupActions": []}))
            })
        }
        "DescribeScheduledActions" => {
            let group_name = text(input, "AutoScalingGroupName");
            let names = strings(input, "ScheduledActionNames");
            svc.read(region, |r| {
                if let Some(g) = group_name {
                    group(r, g)?;
                }
                let items: Vec<Value> = r
                    .scheduled
                    .values()
                    .filter(|a| group_name.is_none_or(|g| a["AutoScalingGroupName"] == g))
                    .filter(|a| {
                        names.is_empty()
                            || names.iter().any(|n| a["ScheduledActionName"] == n.as_str())
                    })
                    .cloned()
                    .collect();
                let (items, token) = page(input, items, 50, 100)?;
                Ok(with_token(
                    json!({"ScheduledUpdateGroupActions": items}),
                    token,
                ))
            })
        }
        "DeleteScheduledAction" | "BatchDeleteScheduledAction" => {
            let group_name = required(input, "AutoScalingGroupName")?.to_string();
            let names: Vec<String> = match text(input, "ScheduledActionName") {
                Some(n) => vec![n.to_string()],
                None => strings(input, "ScheduledActionNames"),
            };
            svc.change(region, |r| {
                group(r, &group_name)?;
                let mut failed = Vec::new();
                for n in &names {
                    if r.scheduled.remove(&format!("{group_name}/{n}")).is_none() {
                        if op == "DeleteScheduledAction" {
                            return Err(validation(format!(
                                "Scheduled Update Group Action name not found - Could not find scheduled update group action with name {n}"
                            )));
                        }
                        failed.push(json!({"ScheduledActionName": n, "ErrorCode": "ValidationError", "ErrorMessage": "Scheduled action not found"}));
                    }
                }
                Ok(if op == "DeleteScheduledAction" { json!({}) } else { json!({"FailedScheduledActions": failed}) })
            })
        }
        "PutLifecycleHook" => {
            let group_name = required(input, "AutoScalingGroupName")?.to_string();
            let name = required(input, "LifecycleHookName")?.to_string();
            svc.change(region, |r| {
                group(r, &group_name)?;
                let key = format!("{group_name}/{name}");
                // A hook put again keeps what the call does not give.
                let mut merged = r.hooks.get(&key).cloned().unwrap_or(json!({}));
                for (k, v) in input.as_object().into_iter().flatten() {
                    merged[k] = v.clone();
                }
                let body = hook_body(&group_name, &merged)?;
                r.hooks.insert(key, body);
                Ok(json!({}))
            })
        }
        "DescribeLifecycleHooks" => {
            let group_name = required(input, "AutoScalingGroupName")?;
            let names = strings(input, "LifecycleHookNames");
            svc.read(region, |r| {
                group(r, group_name)?;
                let items: Vec<Value> = r
                    .hooks
                    .values()
                    .filter(|h| h["AutoScalingGroupName"] == group_name)
                    .filter(|h| {
                        names.is_empty()
                            || names.iter().any(|n| h["LifecycleHookName"] == n.as_str())
                    })
                    .cloned()
                    .collect();
                Ok(json!({"LifecycleHooks": items}))
            })
        }
        "DeleteLifecycleHook" | "CompleteLifecycleAction" | "RecordLifecycleActionHeartbeat" => {
            let group_name = required(input, "AutoScalingGroupName")?.to_string();
            let name = required(input, "LifecycleHookName")?.to_string();
            svc.change(region, |r| {
                group(r, &group_name)?;
                let key = format!("{group_name}/{name}");
                if !r.hooks.contains_key(&key) {
                    return Err(validation(format!(
                        "No Lifecycle Hook found with name {name} for group {group_name}"
                    )));
                }
                if op == "DeleteLifecycleHook" {
                    r.hooks.remove(&key);
                }
                Ok(json!({}))
            })
        }
        "PutWarmPool" => {
            let group_name = required(input, "AutoScalingGroupName")?.to_string();
            let state = text(input, "PoolState").unwrap_or("Stopped");
            if !matches!(state, "Stopped" | "Running" | "Hibernated") {
                return Err(validation(format!("Invalid PoolState {state}")));
            }
            svc.change(region, |r| {
                group(r, &group_name)?;
                let mut cfg =
                    json!({"MinSize": int(input, "MinSize").unwrap_or(0), "PoolState": state});
                for k in ["MaxGroupPreparedCapacity", "InstanceReusePolicy"] {
                    if let Some(v) = input.get(k) {
                        cfg[k] = v.clone();
                    }
                }
                group_mut(r, &group_name)?["WarmPoolConfiguration"] = cfg.clone();
                r.warm_pools.insert(group_name, cfg);
                Ok(json!({}))
            })
        }
        "DescribeWarmPool" => {
            let group_name = required(input, "AutoScalingGroupName")?;
            svc.read(region, |r| {
                group(r, group_name)?;
                let mut out = json!({"Instances": []});
                if let Some(cfg) = r.warm_pools.get(group_name) {
                    out["WarmPoolConfiguration"] = cfg.clone();
                }
                Ok(out)
            })
        }
        "DeleteWarmPool" => {
            let group_name = required(input, "AutoScalingGroupName")?.to_string();
            svc.change(region, |r| {
                group(r, &group_name)?;
                if r.warm_pools.remove(&group_name).is_none() {
                    return Err(validation(format!(
                        "No warm pool found for Auto Scaling group {group_name}"
                    )));
                }
                if let Some(o) = group_mut(r, &group_name)?.as_object_mut() {
                    o.remove("WarmPoolConfiguration");
                }
                Ok(json!({}))
            })
        }
        "DescribeScalingActivities" => {
            let group_name = text(input, "AutoScalingGroupName");
            let ids = strings(input, "ActivityIds");
            let include_deleted = input
                .get("IncludeDeletedGroups")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            svc.read(region, |r| {
                let items: Vec<Value> = r
                    .activities
                    .iter()
                    .filter(|a| group_name.is_none_or(|g| a["AutoScalingGroupName"] == g))
                    .filter(|a| ids.is_empty() || ids.iter().any(|i| a["ActivityId"] == i.as_str()))
                    .filter(|a| {
                        include_deleted
                            || a["AutoScalingGroupName"]
                                .as_str()
                                .is_some_and(|g| r.groups.contains_key(g))
                    })
                    .cloned()
                    .collect();
                let (items, token) = page(input, items, 100, 100)?;
                Ok(with_token(json!({"Activities": items}), token))
            })
        }
        "CreateOrUpdateTags" => change_tags(svc, region, input, false),
        "DeleteTags" => change_tags(svc, region, input, true),
        "DescribeTags" => describe_tags(svc, region, input),
        "AttachLoadBalancerTargetGroups" => attach(svc, region, input, "TargetGroupARNs", false),
        "DetachLoadBalancerTargetGroups" => attach(svc, region, input, "TargetGroupARNs", true),
        "AttachLoadBalancers" => attach(svc, region, input, "LoadBalancerNames", false),
        "DetachLoadBalancers" => attach(svc, region, input, "LoadBalancerNames", true),
        "DescribeLoadBalancerTargetGroups" | "DescribeLoadBalancers" => {
            let group_name = required(input, "AutoScalingGroupName")?;
            svc.read(region, |r| {
                let g = group(r, group_name)?;
                Ok(if op == "DescribeLoadBalancers" {
                    json!({"LoadBalancers": strings(g, "LoadBalancerNames").iter().map(|n| json!({"LoadBalancerName": n, "State": "InService"})).collect::<Vec<_>>()})
                } else {
                    json!({"LoadBalancerTargetGroups": strings(g, "TargetGroupARNs").iter().map(|a| json!({"LoadBalancerTargetGroupARN": a, "State": "InService"})).collect::<Vec<_>>()})
                })
            })
        }
        "SuspendProcesses" | "ResumeProcesses" => {
            let group_name = required(input, "AutoScalingGroupName")?.to_string();
            let mut asked = strings(input, "ScalingProcesses");
            if asked.is_empty() {
                asked = PROCESSES.iter().map(|p| p.to_string()).collect();
            }
            if let Some(bad) = asked.iter().find(|p| !PROCESSES.contains(&p.as_str())) {
                return Err(validation(format!("Invalid scaling process: {bad}")));
            }
            svc.change(region, |r| {
                let g = group_mut(r, &group_name)?;
                let mut current = list(g, "SuspendedProcesses");
                current.retain(|p| !asked.iter().any(|a| p["ProcessName"] == a.as_str()));
                if op == "SuspendProcesses" {
                    for a in &asked {
                        current.push(json!({"ProcessName": a, "SuspensionReason": "User suspended at ".to_string() + &now()}));
                    }
                }
                g["SuspendedProcesses"] = json!(current);
                Ok(json!({}))
            })
        }
        "EnableMetricsCollection" | "DisableMetricsCollection" => {
            let group_name = required(input, "AutoScalingGroupName")?.to_string();
            let mut metrics = strings(input, "Metrics");
            if metrics.is_empty() {
                metrics = METRICS.iter().map(|m| m.to_string()).collect();
            }
            let granularity = text(input, "Granularity").unwrap_or("1Minute").to_string();
            svc.change(region, |r| {
                let g = group_mut(r, &group_name)?;
                let mut current = list(g, "EnabledMetrics");
                current.retain(|m| !metrics.iter().any(|x| m["Metric"] == x.as_str()));
                if op == "EnableMetricsCollection" {
                    for m in &metrics {
                        current.push(json!({"Metric": m, "Granularity": granularity}));
                    }
                }
                g["EnabledMetrics"] = json!(current);
                Ok(json!({}))
            })
        }
        "PutNotificationConfiguration" | "DeleteNotificationConfiguration" => {
            let group_name = required(input, "AutoScalingGroupName")?.to_string();
            let topic = required(input, "TopicARN")?.to_string();
            let types = strings(input, "NotificationTypes");
            svc.change(region, |r| {
                let g = group_mut(r, &group_name)?;
                let mut current: Vec<Value> = list(g, "NotificationConfigurations")
                    .into_iter()
                    .filter(|c| c["TopicARN"] != topic.as_str())
                    .collect();
                if op == "PutNotificationConfiguration" {
                    for t in &types {
                        current.push(json!({"AutoScalingGroupName": group_name, "TopicARN": topic, "NotificationType": t}));
                    }
                }
                g["NotificationConfigurations"] = json!(current);
                Ok(json!({}))
            })
        }
        "DescribeNotificationConfigurations" => {
            let names = strings(input, "AutoScalingGroupNames");
            svc.read(region, |r| {
                let items: Vec<Value> = r
                    .groups
                    .iter()
                    .filter(|(n, _)| names.is_empty() || names.contains(n))
                    .flat_map(|(_, g)| list(g, "NotificationConfigurations"))
                    .collect();
                let (items, token) = page(input, items, 50, 100)?;
                Ok(with_token(
                    json!({"NotificationConfigurations": items}),
                    token,
                ))
            })
        }
        "DescribeAccountLimits" => svc.read(region, |r| {
            Ok(json!({
                "MaxNumberOfAutoScalingGroups": 500,
                "MaxNumberOfLaunchConfigurations": 200,
                "NumberOfAutoScalingGroups": r.groups.len(),
                "NumberOfLaunchConfigurations": r.launch_configurations.len(),
            }))
        }),
        "DescribeAdjustmentTypes" => {
            let types: Vec<Value> = [
                "ChangeInCapacity",
                "ExactCapacity",
                "PercentChangeInCapacity",
            ]
            .iter()
            .map(|t| json!({"AdjustmentType": t}))
            .collect();
            Ok(json!({ "AdjustmentTypes": types }))
        }
        "DescribeTerminationPolicyTypes" => Ok(
            json!({"TerminationPolicyTypes": ["AllocationStrategy", "ClosestToNextInstanceHour", "Default", "NewestInstance", "OldestInstance", "OldestLaunchConfiguration", "OldestLaunchTemplate"]}),
        ),
        "DescribeLifecycleHookTypes" => Ok(json!({"LifecycleHookTypes": TRANSITIONS})),
        "DescribeScalingProcessTypes" => Ok(
            json!({"Processes": PROCESSES.iter().map(|p| json!({"ProcessName": p})).collect::<Vec<_>>()}),
        ),
        "DescribeAutoScalingNotificationTypes" => Ok(json!({"AutoScalingNotificationTypes": [
            "autoscaling:EC2_INSTANCE_LAUNCH", "autoscaling:EC2_INSTANCE_LAUNCH_ERROR",
            "autoscaling:EC2_INSTANCE_TERMINATE", "autoscaling:EC2_INSTANCE_TERMINATE_ERROR",
            "autoscaling:TEST_NOTIFICATION"]})),
        "DescribeMetricCollectionTypes" => Ok(json!({
            "Metrics": METRICS.iter().map(|m| json!({"Metric": m})).collect::<Vec<_>>(),
            "Granularities": [{"Granularity": "1Minute"}],
        })),
        other => Err(AwsError::not_implemented("autoscaling", other)),
    }
}

const PROCESSES: &[&str] = &[
    "Launch",
    "Terminate",
    "AddToLoadBalancer",
    "AlarmNotification",
    "AZRebalance",
    "HealthCheck",
    "InstanceRefresh",
    "ReplaceUnhealthy",
    "ScheduledActions",
];

const METRICS: &[&str] = &[
    "GroupMinSize",
    "GroupMaxSize",
    "GroupDesiredCapacity",
    "GroupInServiceInstances",
    "GroupPendingInstances",
    "GroupStandbyInstances",
    "GroupTerminatingInstances",
    "GroupTotalInstances",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_are_checked_in_aws_words() {
        assert!(check_bounds(1, 3, 2).is_ok());
        assert_eq!(
            check_bounds(2, 1, 1).unwrap_err().message,
            "Max bound, 1, must be greater than or equal to min bound, 2"
        );
        assert_eq!(
            check_bounds(1, 3, 5).unwrap_err().message,
            "Desired capacity:5 must be between the specified min size:1 and max size:3"
        );
    }

    #[test]
    fn adjustments_stay_within_bounds() {
        let g = json!({"MinSize": 1, "MaxSize": 10, "DesiredCapacity": 4});
        assert_eq!(adjusted(&g, "ChangeInCapacity", 2, None), 6);
        assert_eq!(adjusted(&g, "ChangeInCapacity", -9, None), 1);
        assert_eq!(adjusted(&g, "ExactCapacity", 20, None), 10);
        assert_eq!(adjusted(&g, "PercentChangeInCapacity", 50, None), 6);
        assert_eq!(adjusted(&g, "PercentChangeInCapacity", 10, Some(2)), 6);
    }

    #[test]
    fn pages_follow_their_tokens() {
        let items: Vec<Value> = (0..5).map(|i| json!(i)).collect();
        let (p, t) = page(&json!({"MaxRecords": 2}), items.clone(), 50, 100).unwrap();
        assert_eq!((p.len(), t.as_deref()), (2, Some("2")));
        let (p, t) = page(
            &json!({"MaxRecords": 2, "NextToken": "4"}),
            items.clone(),
            50,
            100,
        )
        .unwrap();
        assert_eq!((p, t), (vec![json!(4)], None));
        assert_eq!(
            page(&json!({"NextToken": "x"}), items, 50, 100)
                .unwrap_err()
                .code,
            "InvalidNextToken"
        );
    }

    #[test]
    fn only_propagated_tags_reach_instances() {
        let g = json!({"AutoScalingGroupName": "web", "Tags": tag_descriptions("web", &[
            json!({"Key": "a", "Value": "1", "PropagateAtLaunch": true}),
            json!({"Key": "b", "Value": "2", "PropagateAtLaunch": false}),
        ]).unwrap()});
        assert_eq!(
            launch_tags(&g),
            vec![
                ("a".into(), "1".into()),
                ("aws:autoscaling:groupName".into(), "web".into())
            ]
        );
    }
}
