//! ECS records as the API answers them (member names, defaults AWS fills in), with the counts
//! and statuses derived from the clock at the moment of asking.

use super::EcsService;
use super::lifecycle::{self, Phase};
use super::state::{Cluster, Deployment, Region, Service, Task, TaskDefinition, service_key};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

pub fn tags(tags: &[(String, String)]) -> Value {
    Value::Array(
        tags.iter()
            .map(|(k, v)| json!({"key": k, "value": v}))
            .collect(),
    )
}

fn registered_by(svc: &EcsService) -> String {
    format!("arn:aws:iam::{}:root", svc.account_id)
}

pub fn cluster(svc: &EcsService, region: &str, r: &Region, c: &Cluster, now: f64) -> Value {
    let phases: Vec<Phase> = r
        .tasks
        .values()
        .filter(|t| t.cluster == c.name)
        .map(|t| lifecycle::phase(t, now))
        .collect();
    let mut v = json!({
        "clusterArn": svc.cluster_arn(region, &c.name),
        "clusterName": c.name,
        "status": c.status,
        "registeredContainerInstancesCount": 0,
        "runningTasksCount": phases.iter().filter(|p| **p == Phase::Running).count(),
        "pendingTasksCount": phases.iter().filter(|p| p.is_pending()).count(),
        "activeServicesCount": r.services.values().filter(|s| s.cluster == c.name && s.status == "ACTIVE").count(),
        "statistics": [],
        "tags": [],
        "settings": c.settings,
        "capacityProviders": c.capacity_providers,
        "defaultCapacityProviderStrategy": c.default_strategy,
    });
    if let Some(cfg) = &c.configuration {
        v["configuration"] = cfg.clone();
    }
    if let Some(d) = &c.service_connect_defaults {
        v["serviceConnectDefaults"] = d.clone();
    }
    v
}

pub fn task_definition(svc: &EcsService, region: &str, td: &TaskDefinition) -> Value {
    let mut v = Value::Object(td.body.clone());
    v["taskDefinitionArn"] = json!(svc.task_definition_arn(region, &td.family, td.revision));
    v["revision"] = json!(td.revision);
    v["status"] = json!(if td.status == "DELETE_IN_PROGRESS" {
        "DELETE_IN_PROGRESS"
    } else {
        td.status.as_str()
    });
    v["compatibilities"] = json!(td.compatibilities);
    v["registeredAt"] = json!(td.registered_at);
    v["registeredBy"] = json!(registered_by(svc));
    if let Some(d) = td.deregistered_at {
        v["deregisteredAt"] = json!(d);
    }
    for (key, default) in [
        ("volumes", json!([])),
        ("placementConstraints", json!([])),
        ("requiresAttributes", json!([])),
    ] {
        if v.get(key).is_none() {
            v[key] = default;
        }
    }
    v
}

pub fn container_names(td: &TaskDefinition) -> Vec<String> {
    containers(td).into_iter().map(|(n, _)| n).collect()
}

pub fn containers(td: &TaskDefinition) -> Vec<(String, String)> {
    td.body
        .get("containerDefinitions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            (s("name"), s("image"))
        })
        .collect()
}

/// A task's desiredStatus: RUNNING until it is asked to stop.
pub fn desired_status(t: &Task) -> &'static str {
    if t.stop_requested_at.is_some() {
        "STOPPED"
    } else {
        "RUNNING"
    }
}

pub fn task(svc: &EcsService, region: &str, t: &Task, now: f64) -> Value {
    let phase = lifecycle::phase(t, now);
    let arn = svc.task_arn(region, &t.cluster, &t.id);
    let running_at = lifecycle::running_at(t.created_at);
    let has_run = now >= running_at && t.stop_requested_at.is_none_or(|s| s >= running_at);
    let container_status = match phase {
        Phase::Provisioning | Phase::Pending => "PENDING",
        Phase::Running => "RUNNING",
        Phase::Deprovisioning | Phase::Stopped if has_run => {
            if phase == Phase::Stopped {
                "STOPPED"
            } else {
                "RUNNING"
            }
        }
        _ => "STOPPED",
    };
    let containers: Vec<Value> = t
        .containers
        .iter()
        .map(|(name, image)| {
            let mut c = json!({
                "containerArn": format!("arn:aws:ecs:{region}:{}:container/{}/{}/{}", svc.account_id, t.cluster, t.id, uuid_of(&format!("{}{name}", t.id))),
                "taskArn": arn,
                "name": name,
                "image": image,
                "lastStatus": container_status,
                "healthStatus": "UNKNOWN",
                "networkInterfaces": [],
            });
            if let Some(eni) = &t.eni {
                c["networkInterfaces"] = json!([{
                    "attachmentId": eni.attachment_id,
                    "privateIpv4Address": eni.private_ip,
                }]);
            }
            if phase == Phase::Stopped && has_run {
                c["exitCode"] = json!(0);
            }
            c
        })
        .collect();
    let mut v = json!({
        "taskArn": arn,
        "clusterArn": svc.cluster_arn(region, &t.cluster),
        "taskDefinitionArn": t.task_definition,
        "containers": containers,
        "lastStatus": phase.as_str(),
        "desiredStatus": desired_status(t),
        "group": t.group,
        "createdAt": t.created_at,
        "availabilityZone": t.availability_zone,
        "connectivity": "CONNECTED",
        "connectivityAt": t.created_at,
        "healthStatus": "UNKNOWN",
        "overrides": t.overrides,
        "version": match phase { Phase::Provisioning => 1, Phase::Pending => 2, Phase::Running => 3, Phase::Deprovisioning => 4, Phase::Stopped => 5 },
        "enableExecuteCommand": false,
        "attachments": [],
        "tags": [],
    });
    for (key, value) in [
        ("cpu", &t.cpu),
        ("memory", &t.memory),
        ("launchType", &t.launch_type),
        ("capacityProviderName", &t.capacity_provider),
        ("platformVersion", &t.platform_version),
        ("startedBy", &t.started_by),
    ] {
        if let Some(x) = value {
            v[key] = json!(x);
        }
    }
    if t.platform_version.is_some() {
        v["platformFamily"] = json!("Linux");
        v["ephemeralStorage"] = json!({"sizeInGiB": 20});
    }
    if has_run {
        v["pullStartedAt"] = json!(t.created_at + lifecycle::PROVISIONING_S);
        v["pullStoppedAt"] = json!(running_at);
        v["startedAt"] = json!(running_at);
    }
    if let Some(s) = t.stop_requested_at {
        v["stoppingAt"] = json!(s);
        v["executionStoppedAt"] = json!(s);
        if phase == Phase::Stopped {
            v["stoppedAt"] = json!(lifecycle::stopped_at(s));
        }
        if let Some(reason) = &t.stopped_reason {
            v["stoppedReason"] = json!(reason);
        }
        if let Some(code) = &t.stop_code {
            v["stopCode"] = json!(code);
        }
    }
    if let Some(eni) = &t.eni {
        let status = match phase {
            Phase::Provisioning => "PRECREATED",
            Phase::Pending | Phase::Running => "ATTACHED",
            Phase::Deprovisioning => "DELETED",
            Phase::Stopped => "DELETED",
        };
        v["attachments"] = json!([{
            "id": eni.attachment_id,
            "type": "ElasticNetworkInterface",
            "status": status,
            "details": [
                {"name": "subnetId", "value": eni.subnet_id},
                {"name": "networkInterfaceId", "value": eni.eni_id},
                {"name": "macAddress", "value": eni.mac_address},
                {"name": "privateDnsName", "value": format!("ip-{}.ec2.internal", eni.private_ip.replace('.', "-"))},
                {"name": "privateIPv4Address", "value": eni.private_ip},
            ],
        }]);
    }
    v
}

/// A stable id for something derived (a container, the steady-state event).
fn uuid_of(seed: &str) -> String {
    let h = Sha256::digest(seed.as_bytes());
    let x = hex::encode(&h[..16]);
    format!(
        "{}-{}-{}-{}-{}",
        &x[..8],
        &x[8..12],
        &x[12..16],
        &x[16..20],
        &x[20..32]
    )
}

fn deployment_tasks<'a>(
    r: &'a Region,
    key: &'a str,
    d: &'a Deployment,
) -> impl Iterator<Item = &'a Task> + 'a {
    r.tasks.values().filter(move |t| {
        t.service.as_deref() == Some(key) && t.started_by.as_deref() == Some(d.id.as_str())
    })
}

/// When the service reached its steady state: its primary deployment's tasks all run, as many
/// as desired, and every other task of the service has stopped. `None` while it has not.
pub fn steady_since(r: &Region, s: &Service, now: f64) -> Option<f64> {
    if s.status != "ACTIVE" {
        return None;
    }
    let primary = s.deployments.first()?;
    let key = service_key(&s.cluster, &s.name);
    let mut since = primary.updated_at;
    let mut running = 0;
    for t in r
        .tasks
        .values()
        .filter(|t| t.service.as_deref() == Some(key.as_str()))
    {
        match (lifecycle::phase(t, now), t.stop_requested_at) {
            (Phase::Stopped, Some(stop)) => {
                if stop >= primary.created_at {
                    since = since.max(lifecycle::stopped_at(stop));
                }
            }
            (Phase::Running, None) if t.started_by.as_deref() == Some(primary.id.as_str()) => {
                running += 1;
                since = since.max(lifecycle::running_at(t.created_at));
            }
            _ => return None,
        }
    }
    (running == primary.desired).then_some(since)
}

fn deployment(
    r: &Region,
    key: &str,
    d: &Deployment,
    primary: bool,
    steady: bool,
    now: f64,
) -> Value {
    let phases: Vec<Phase> = deployment_tasks(r, key, d)
        .map(|t| lifecycle::phase(t, now))
        .collect();
    let completed = !primary || steady;
    let mut v = json!({
        "id": d.id,
        "status": d.status,
        "taskDefinition": d.task_definition,
        "desiredCount": d.desired,
        "pendingCount": phases.iter().filter(|p| p.is_pending()).count(),
        "runningCount": phases.iter().filter(|p| **p == Phase::Running).count(),
        "failedTasks": 0,
        "createdAt": d.created_at,
        "updatedAt": d.updated_at,
        "capacityProviderStrategy": d.capacity_provider_strategy,
        "rolloutState": if completed { "COMPLETED" } else { "IN_PROGRESS" },
        "rolloutStateReason": if completed {
            format!("ECS deployment {} completed.", d.id)
        } else {
            format!("ECS deployment {} in progress.", d.id)
        },
    });
    if let Some(l) = &d.launch_type {
        v["launchType"] = json!(l);
    }
    if let Some(p) = &d.platform_version {
        v["platformVersion"] = json!(if p == "LATEST" { "1.4.0" } else { p });
        v["platformFamily"] = json!("Linux");
    }
    if let Some(n) = &d.network_configuration {
        v["networkConfiguration"] = n.clone();
    }
    if d.capacity_provider_strategy.is_empty()
        && let Some(m) = v.as_object_mut()
    {
        m.remove("capacityProviderStrategy");
    }
    v
}

/// Service settings the API reports on each deployment rather than on the service.
const DEPLOYMENT_MEMBERS: &[&str] = &[
    "serviceConnectConfiguration",
    "volumeConfigurations",
    "vpcLatticeConfigurations",
];

pub fn service(
    svc: &EcsService,
    region: &str,
    r: &Region,
    s: &Service,
    now: f64,
    with_tags: bool,
) -> Value {
    let key = service_key(&s.cluster, &s.name);
    let steady = steady_since(r, s, now);
    let phases: Vec<Phase> = r
        .tasks
        .values()
        .filter(|t| t.service.as_deref() == Some(key.as_str()))
        .map(|t| lifecycle::phase(t, now))
        .collect();
    let drained = phases.iter().all(|p| *p == Phase::Stopped);
    let status = if s.status == "DRAINING" && drained {
        "INACTIVE"
    } else {
        s.status.as_str()
    };
    let deployments: Vec<Value> = s
        .deployments
        .iter()
        .enumerate()
        .filter(|(i, d)| {
            *i == 0
                || deployment_tasks(r, &key, d).any(|t| lifecycle::phase(t, now) != Phase::Stopped)
        })
        .map(|(i, d)| {
            let mut v = deployment(r, &key, d, i == 0, steady.is_some(), now);
            for k in DEPLOYMENT_MEMBERS {
                if let Some(x) = s.config.get(*k) {
                    v[*k] = x.clone();
                }
            }
            if !s.connect.is_empty() {
                v["serviceConnectResources"] = Value::Array(
                    s.connect
                        .iter()
                        .map(|c| json!({"discoveryName": c.discovery_name, "discoveryArn": c.arn}))
                        .collect(),
                );
            }
            v
        })
        .collect();
    let mut events: Vec<Value> = s
        .events
        .iter()
        .map(|e| json!({"id": e.id, "createdAt": e.created_at, "message": e.message}))
        .collect();
    if let Some(at) = steady
        && s.events.first().is_none_or(|e| e.created_at <= at)
    {
        let message = format!("(service {}) has reached a steady state.", s.name);
        events.insert(
            0,
            json!({"id": uuid_of(&format!("{key}{at}")), "createdAt": at, "message": message}),
        );
    }
    let mut out = Map::new();
    let defaults = json!({
        "loadBalancers": [],
        "serviceRegistries": [],
        "placementConstraints": [],
        "placementStrategy": [],
        "schedulingStrategy": "REPLICA",
        "deploymentController": {"type": "ECS"},
        "deploymentConfiguration": {
            "deploymentCircuitBreaker": {"enable": false, "rollback": false},
            "maximumPercent": 200,
            "minimumHealthyPercent": 100,
        },
        "enableECSManagedTags": false,
        "propagateTags": "NONE",
        "enableExecuteCommand": false,
    });
    if let Value::Object(d) = defaults {
        out.extend(d);
    }
    for (k, v) in &s.config {
        if !DEPLOYMENT_MEMBERS.contains(&k.as_str()) {
            out.insert(k.clone(), v.clone());
        }
    }
    let mut v = Value::Object(out);
    v["serviceArn"] = json!(svc.service_arn(region, &s.cluster, &s.name));
    v["serviceName"] = json!(s.name);
    v["clusterArn"] = json!(svc.cluster_arn(region, &s.cluster));
    v["status"] = json!(status);
    v["desiredCount"] = json!(s.desired);
    v["runningCount"] = json!(phases.iter().filter(|p| **p == Phase::Running).count());
    v["pendingCount"] = json!(phases.iter().filter(|p| p.is_pending()).count());
    v["taskDefinition"] = json!(s.task_definition);
    v["deployments"] = json!(deployments);
    v["events"] = json!(events);
    v["createdAt"] = json!(s.created_at);
    v["createdBy"] = json!(registered_by(svc));
    if let Some(l) = &s.launch_type {
        v["launchType"] = json!(l);
    }
    if !s.capacity_provider_strategy.is_empty() {
        v["capacityProviderStrategy"] = json!(s.capacity_provider_strategy);
    }
    if let Some(p) = &s.platform_version {
        v["platformVersion"] = json!(p);
        v["platformFamily"] = json!("Linux");
    }
    if with_tags {
        v["tags"] = tags(&s.tags);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ecs::state::Deployment;

    fn task(id: &str, deployment: &str, created: f64, stop: Option<f64>) -> Task {
        Task {
            id: id.into(),
            cluster: "c".into(),
            task_definition: "arn:aws:ecs:us-east-1:1:task-definition/f:1".into(),
            group: "service:s".into(),
            started_by: Some(deployment.into()),
            service: Some("c/s".into()),
            launch_type: Some("FARGATE".into()),
            capacity_provider: None,
            platform_version: None,
            cpu: None,
            memory: None,
            containers: Vec::new(),
            overrides: Value::Null,
            availability_zone: "us-east-1a".into(),
            eni: None,
            created_at: created,
            stop_requested_at: stop,
            stopped_reason: None,
            stop_code: None,
            registries: Vec::new(),
            targets: Vec::new(),
            tags: Vec::new(),
        }
    }

    fn service(desired: i64) -> Service {
        let deployment = |id: &str, status: &str| Deployment {
            id: id.into(),
            status: status.into(),
            task_definition: String::new(),
            desired,
            created_at: 100.0,
            updated_at: 100.0,
            launch_type: Some("FARGATE".into()),
            capacity_provider_strategy: Vec::new(),
            platform_version: None,
            network_configuration: None,
        };
        Service {
            name: "s".into(),
            cluster: "c".into(),
            status: "ACTIVE".into(),
            deleted_at: None,
            task_definition: String::new(),
            desired,
            launch_type: Some("FARGATE".into()),
            capacity_provider_strategy: Vec::new(),
            platform_version: None,
            config: Map::new(),
            deployments: vec![deployment("new", "PRIMARY"), deployment("old", "ACTIVE")],
            events: Vec::new(),
            created_at: 0.0,
            connect: Vec::new(),
            tags: Vec::new(),
        }
    }

    fn region(tasks: Vec<Task>) -> Region {
        let mut r = Region::default();
        for t in tasks {
            r.tasks.insert(t.id.clone(), t);
        }
        r
    }

    #[test]
    fn steady_once_the_primary_runs_and_the_old_tasks_have_stopped() {
        let s = service(2);
        let r = region(vec![
            task("a", "new", 100.0, None),
            task("b", "new", 100.2, None),
            task("o", "old", 50.0, Some(100.0)),
        ]);
        // b runs at 100.7; o stopped at 100.3.
        assert_eq!(steady_since(&r, &s, 100.6), None);
        assert_eq!(steady_since(&r, &s, 101.0), Some(100.7));
        // A task still stopping holds the steady state back.
        let r = region(vec![
            task("a", "new", 100.0, None),
            task("b", "new", 100.0, None),
            task("o", "old", 50.0, Some(100.9)),
        ]);
        assert_eq!(steady_since(&r, &s, 101.0), None);
        assert_eq!(steady_since(&r, &s, 101.3), Some(101.2));
    }

    #[test]
    fn fewer_running_tasks_than_desired_is_not_steady() {
        let r = region(vec![task("a", "new", 100.0, None)]);
        assert_eq!(steady_since(&r, &service(2), 200.0), None);
        assert_eq!(steady_since(&r, &service(1), 200.0), Some(100.5));
    }
}
