//! Typed ECS operations: clusters, task definitions, services and their deployments, tasks,
//! tags and account settings. Answers are rendered in the API's shape by `view` under the same
//! lock, since a service's counts and a task's status are derived from the clock (`lifecycle`).

use super::EcsService;
use super::fargate;
use super::lifecycle::{self, Phase};
use super::network::{self, Awsvpc};
use super::state::{
    Cluster, ConnectService, Deployment, Eni, Event, Key, Region, Service, Task, TaskDefinition,
    service_key,
};
use super::view;
use crate::ec2::NetworkInterfaceRequest;
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

pub fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::bad_request(code, message)
}

pub fn invalid(message: impl Into<String>) -> AwsError {
    err("InvalidParameterException", message)
}

pub fn client(message: impl Into<String>) -> AwsError {
    err("ClientException", message)
}

fn cluster_not_found() -> AwsError {
    err("ClusterNotFoundException", "Cluster not found.")
}

fn service_not_found() -> AwsError {
    err("ServiceNotFoundException", "Service not found.")
}

pub fn now_s() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

/// The last path segment of an ARN (`.../cluster/NAME` -> `NAME`), or the identifier itself.
pub fn short_name(ident: &str) -> &str {
    if ident.starts_with("arn:") {
        ident.rsplit('/').next().unwrap_or(ident)
    } else {
        ident
    }
}

const CAPACITY_PROVIDERS: &[&str] = &["FARGATE", "FARGATE_SPOT"];
const LAUNCH_TYPES: &[&str] = &["EC2", "FARGATE", "EXTERNAL", "MANAGED_INSTANCES"];
const ACCOUNT_SETTINGS: &[&str] = &[
    "serviceLongArnFormat",
    "taskLongArnFormat",
    "containerInstanceLongArnFormat",
    "awsvpcTrunking",
    "containerInsights",
    "fargateFIPSMode",
    "tagResourceAuthorization",
    "fargateTaskRetirementWaitPeriod",
    "guardDutyActivate",
    "defaultLogDriverMode",
];

/// The input of CreateCluster.
#[derive(Debug, Clone, Default)]
pub struct CreateClusterInput {
    pub name: Option<String>,
    pub capacity_providers: Vec<String>,
    pub default_strategy: Vec<Value>,
    pub settings: Vec<Value>,
    pub configuration: Option<Value>,
    pub service_connect_defaults: Option<Value>,
    pub tags: Vec<(String, String)>,
}

/// The input of CreateService (and, where present, UpdateService).
#[derive(Debug, Clone, Default)]
pub struct ServiceInput {
    pub cluster: Option<String>,
    pub name: String,
    pub task_definition: Option<String>,
    pub desired: Option<i64>,
    pub launch_type: Option<String>,
    pub capacity_provider_strategy: Option<Vec<Value>>,
    pub platform_version: Option<String>,
    /// Every other member, as given (loadBalancers, serviceRegistries, networkConfiguration,
    /// deploymentConfiguration, serviceConnectConfiguration, ...).
    pub config: Map<String, Value>,
    pub force_new_deployment: bool,
    pub tags: Vec<(String, String)>,
}

/// The input of RunTask.
#[derive(Debug, Clone, Default)]
pub struct RunTaskInput {
    pub cluster: Option<String>,
    pub task_definition: String,
    pub count: i64,
    pub launch_type: Option<String>,
    pub capacity_provider_strategy: Vec<Value>,
    pub platform_version: Option<String>,
    pub network_configuration: Option<Value>,
    pub overrides: Option<Value>,
    pub started_by: Option<String>,
    pub group: Option<String>,
    pub tags: Vec<(String, String)>,
}

/// How tasks are placed: launch type or capacity provider, platform and network.
struct Launch {
    launch_type: Option<String>,
    capacity_provider: Option<String>,
    platform_version: Option<String>,
    network: Option<Awsvpc>,
}

fn validate_strategy(cluster: &Cluster, strategy: &[Value]) -> Result<(), AwsError> {
    for item in strategy {
        let cp = item
            .get("capacityProvider")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !cluster.capacity_providers.iter().any(|c| c == cp) {
            return Err(invalid(
                "The specified capacity provider strategy cannot contain a capacity provider that is not associated with the cluster. Associate the capacity provider with the cluster or specify a valid capacity provider and try again.",
            ));
        }
    }
    Ok(())
}

fn check_capacity_providers(providers: &[String]) -> Result<(), AwsError> {
    for p in providers {
        if !CAPACITY_PROVIDERS.contains(&p.as_str()) {
            return Err(invalid(format!(
                "The specified capacity provider '{p}' is not in an ACTIVE state. Specify a valid capacity provider and try again."
            )));
        }
    }
    Ok(())
}

fn check_settings(settings: &[Value]) -> Result<(), AwsError> {
    for s in settings {
        let name = s.get("name").and_then(Value::as_str).unwrap_or("");
        let value = s.get("value").and_then(Value::as_str).unwrap_or("");
        if name != "containerInsights" {
            return Err(invalid(format!(
                "1 validation error detected: Value '{name}' at 'settings.1.member.name' failed to satisfy constraint: Member must satisfy enum value set: [containerInsights]"
            )));
        }
        if !matches!(value, "enabled" | "disabled" | "enhanced") {
            return Err(invalid(format!(
                "The value '{value}' is not valid for containerInsights. Valid values are: enabled, disabled, enhanced."
            )));
        }
    }
    Ok(())
}

impl Region {
    fn cluster(&self, ident: Option<&str>) -> Result<&Cluster, AwsError> {
        let name = short_name(ident.unwrap_or("default"));
        self.clusters
            .get(name)
            .filter(|c| c.status == "ACTIVE")
            .ok_or_else(cluster_not_found)
    }

    /// A task definition by `family` (latest ACTIVE revision), `family:revision` or ARN.
    pub fn task_definition(&self, ident: &str) -> Option<&TaskDefinition> {
        let ident = if ident.starts_with("arn:") {
            ident
                .rsplit_once("task-definition/")
                .map_or(ident, |(_, r)| r)
        } else {
            ident
        };
        match ident.rsplit_once(':') {
            Some((family, rev)) => {
                let rev: i64 = rev.parse().ok()?;
                self.task_definitions
                    .get(family)?
                    .iter()
                    .find(|t| t.revision == rev && t.status != "DELETE_IN_PROGRESS")
            }
            None => self
                .task_definitions
                .get(ident)?
                .iter()
                .rev()
                .find(|t| t.status == "ACTIVE"),
        }
    }

    fn task_definition_mut(&mut self, ident: &str) -> Option<&mut TaskDefinition> {
        let (family, rev) = {
            let t = self.task_definition(ident)?;
            (t.family.clone(), t.revision)
        };
        self.task_definitions
            .get_mut(&family)?
            .iter_mut()
            .find(|t| t.revision == rev)
    }

    /// The key of a live or draining service named by name or ARN in a cluster.
    fn service_key_of(&self, cluster: &str, ident: &str) -> String {
        service_key(cluster, short_name(ident))
    }

    fn service_tasks<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a Task> + 'a {
        self.tasks
            .values()
            .filter(move |t| t.service.as_deref() == Some(key))
    }
}

impl EcsService {
    pub fn create_cluster(
        &self,
        region: &str,
        input: CreateClusterInput,
    ) -> Result<Value, AwsError> {
        let name = input.name.unwrap_or_else(|| "default".into());
        if name.is_empty()
            || name.len() > 255
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(invalid(
                "Cluster name can have up to 255 characters, and can contain uppercase and lowercase letters, numbers, underscores and hyphens.",
            ));
        }
        check_capacity_providers(&input.capacity_providers)?;
        check_settings(&input.settings)?;
        self.mutate(region, |r, now| {
            if let Some(c) = r.clusters.get(&name).filter(|c| c.status == "ACTIVE") {
                // CreateCluster is idempotent: an existing cluster is answered as it is.
                return Ok(view::cluster(self, region, r, c, now));
            }
            let mut cluster = Cluster {
                name: name.clone(),
                status: "ACTIVE".into(),
                capacity_providers: input.capacity_providers,
                default_strategy: Vec::new(),
                settings: if input.settings.is_empty() {
                    vec![json!({"name": "containerInsights", "value": "disabled"})]
                } else {
                    input.settings
                },
                configuration: input.configuration,
                service_connect_defaults: input.service_connect_defaults,
                tags: input.tags,
            };
            validate_strategy(&cluster, &input.default_strategy)?;
            cluster.default_strategy = input.default_strategy;
            r.clusters.insert(name.clone(), cluster);
            r.touch(Key::Cluster(name.clone()));
            Ok(view::cluster(self, region, r, &r.clusters[&name], now))
        })
    }

    /// DescribeClusters: the clusters found and a MISSING failure for each one not found.
    pub fn describe_clusters(&self, region: &str, idents: &[String], tags: bool) -> Value {
        self.read(region, |r, now| {
            let idents = if idents.is_empty() {
                vec!["default".to_string()]
            } else {
                idents.to_vec()
            };
            let mut clusters = Vec::new();
            let mut failures = Vec::new();
            for ident in &idents {
                match r.clusters.get(short_name(ident)) {
                    Some(c) => {
                        let mut v = view::cluster(self, region, r, c, now);
                        if tags {
                            v["tags"] = view::tags(&c.tags);
                        }
                        clusters.push(v);
                    }
                    None => failures.push(json!({
                        "arn": self.cluster_arn(region, short_name(ident)),
                        "reason": "MISSING",
                    })),
                }
            }
            json!({"clusters": clusters, "failures": failures})
        })
    }

    pub fn list_clusters(&self, region: &str) -> Vec<String> {
        self.read(region, |r, _| {
            r.clusters
                .values()
                .filter(|c| c.status == "ACTIVE")
                .map(|c| self.cluster_arn(region, &c.name))
                .collect()
        })
    }

    pub fn delete_cluster(&self, region: &str, ident: &str) -> Result<Value, AwsError> {
        self.mutate(region, |r, now| {
            let name = r.cluster(Some(ident))?.name.clone();
            if r.services
                .values()
                .any(|s| s.cluster == name && s.status == "ACTIVE")
            {
                return Err(err(
                    "ClusterContainsServicesException",
                    "The Cluster cannot be deleted while Services are active.",
                ));
            }
            if r.tasks
                .values()
                .any(|t| t.cluster == name && lifecycle::phase(t, now) != Phase::Stopped)
            {
                return Err(err(
                    "ClusterContainsTasksException",
                    "The Cluster cannot be deleted while Tasks are active.",
                ));
            }
            let cluster = r.clusters.get_mut(&name).ok_or_else(cluster_not_found)?;
            cluster.status = "INACTIVE".into();
            r.touch(Key::Cluster(name.clone()));
            Ok(view::cluster(self, region, r, &r.clusters[&name], now))
        })
    }

    /// UpdateCluster / UpdateClusterSettings: what is given replaces what was set.
    pub fn update_cluster(
        &self,
        region: &str,
        ident: &str,
        settings: Option<Vec<Value>>,
        configuration: Option<Value>,
        service_connect_defaults: Option<Value>,
    ) -> Result<Value, AwsError> {
        if let Some(s) = &settings {
            check_settings(s)?;
        }
        self.mutate(region, |r, now| {
            let name = r.cluster(Some(ident))?.name.clone();
            let c = r.clusters.get_mut(&name).ok_or_else(cluster_not_found)?;
            if let Some(s) = settings {
                for new in s {
                    let key = new.get("name").cloned();
                    c.settings.retain(|old| old.get("name").cloned() != key);
                    c.settings.push(new);
                }
            }
            if configuration.is_some() {
                c.configuration = configuration;
            }
            if service_connect_defaults.is_some() {
                c.service_connect_defaults = service_connect_defaults;
            }
            r.touch(Key::Cluster(name.clone()));
            Ok(view::cluster(self, region, r, &r.clusters[&name], now))
        })
    }

    pub fn put_cluster_capacity_providers(
        &self,
        region: &str,
        ident: &str,
        providers: Vec<String>,
        strategy: Vec<Value>,
    ) -> Result<Value, AwsError> {
        check_capacity_providers(&providers)?;
        self.mutate(region, |r, now| {
            let name = r.cluster(Some(ident))?.name.clone();
            let in_use: Vec<String> = r
                .services
                .values()
                .filter(|s| s.cluster == name && s.status == "ACTIVE")
                .flat_map(|s| s.capacity_provider_strategy.iter())
                .filter_map(|i| i.get("capacityProvider").and_then(Value::as_str))
                .map(str::to_string)
                .collect();
            if let Some(p) = in_use.iter().find(|p| !providers.contains(p)) {
                return Err(err(
                    "ResourceInUseException",
                    format!("The specified capacity provider {p} is in use and cannot be removed."),
                ));
            }
            let c = r.clusters.get_mut(&name).ok_or_else(cluster_not_found)?;
            c.capacity_providers = providers;
            validate_strategy(c, &strategy)?;
            c.default_strategy = strategy;
            r.touch(Key::Cluster(name.clone()));
            Ok(view::cluster(self, region, r, &r.clusters[&name], now))
        })
    }

    pub fn register_task_definition(
        &self,
        region: &str,
        mut body: Map<String, Value>,
        tags: Vec<(String, String)>,
    ) -> Result<Value, AwsError> {
        let family = body
            .get("family")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if family.is_empty()
            || family.len() > 255
            || !family
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(client(
                "Family contains invalid characters. Up to 255 letters (uppercase and lowercase), numbers, hyphens, and underscores are allowed.",
            ));
        }
        let compatibilities = validate_task_definition(&mut body)?;
        self.mutate(region, |r, _| {
            let revisions = r.task_definitions.entry(family.clone()).or_default();
            let revision = revisions.last().map_or(1, |t| t.revision + 1);
            revisions.push(TaskDefinition {
                family: family.clone(),
                revision,
                status: "ACTIVE".into(),
                body,
                compatibilities,
                registered_at: now_s(),
                deregistered_at: None,
                tags,
            });
            r.touch(Key::Family(family.clone()));
            let td = r.task_definitions[&family]
                .last()
                .ok_or_else(|| AwsError::internal("registered revision vanished"))?;
            Ok(json!({
                "taskDefinition": view::task_definition(self, region, td),
                "tags": view::tags(&td.tags),
            }))
        })
    }

    pub fn describe_task_definition(
        &self,
        region: &str,
        ident: &str,
    ) -> Result<(Value, Value), AwsError> {
        self.read(region, |r, _| {
            r.task_definition(ident)
                .map(|td| {
                    (
                        view::task_definition(self, region, td),
                        view::tags(&td.tags),
                    )
                })
                .ok_or_else(|| client("Unable to describe task definition."))
        })
    }

    pub fn deregister_task_definition(&self, region: &str, ident: &str) -> Result<Value, AwsError> {
        if !ident.contains(':')
            || ident
                .rsplit(':')
                .next()
                .is_none_or(|r| r.parse::<i64>().is_err())
        {
            return Err(client(
                "Revision must be specified when deregistering a task definition.",
            ));
        }
        self.mutate(region, |r, _| {
            let td = r
                .task_definition_mut(ident)
                .ok_or_else(|| client("The specified task definition does not exist."))?;
            td.status = "INACTIVE".into();
            td.deregistered_at.get_or_insert_with(now_s);
            let family = td.family.clone();
            let out = view::task_definition(self, region, td);
            r.touch(Key::Family(family));
            Ok(out)
        })
    }

    /// DeleteTaskDefinitions: each must be INACTIVE first, as AWS requires.
    pub fn delete_task_definitions(
        &self,
        region: &str,
        idents: &[String],
    ) -> Result<Value, AwsError> {
        self.mutate(region, |r, _| {
            let mut deleted = Vec::new();
            let mut failures = Vec::new();
            for ident in idents {
                match r.task_definition_mut(ident) {
                    Some(td) if td.status == "INACTIVE" => {
                        td.status = "DELETE_IN_PROGRESS".into();
                        let family = td.family.clone();
                        deleted.push(view::task_definition(self, region, td));
                        r.touch(Key::Family(family));
                    }
                    Some(td) => failures.push(json!({
                        "arn": self.task_definition_arn(region, &td.family, td.revision),
                        "reason": "The specified task definition is still in ACTIVE status. Please deregister the target and try again.",
                    })),
                    None => failures.push(json!({
                        "arn": ident,
                        "reason": "The specified task definition does not exist. Specify a valid account, family, revision and try again.",
                    })),
                }
            }
            Ok(json!({"taskDefinitions": deleted, "failures": failures}))
        })
    }

    pub fn list_task_definitions(
        &self,
        region: &str,
        family: Option<&str>,
        status: &str,
        descending: bool,
    ) -> Vec<String> {
        self.read(region, |r, _| {
            let mut out: Vec<String> = r
                .task_definitions
                .values()
                .flatten()
                .filter(|t| family.is_none_or(|f| t.family == f) && t.status == status)
                .map(|t| self.task_definition_arn(region, &t.family, t.revision))
                .collect();
            if descending {
                out.reverse();
            }
            out
        })
    }

    pub fn list_task_definition_families(
        &self,
        region: &str,
        prefix: Option<&str>,
        status: &str,
    ) -> Vec<String> {
        self.read(region, |r, _| {
            r.task_definitions
                .iter()
                .filter(|(f, _)| prefix.is_none_or(|p| f.starts_with(p)))
                .filter(|(_, revs)| match status {
                    "ACTIVE" => revs.iter().any(|t| t.status == "ACTIVE"),
                    "INACTIVE" => revs.iter().all(|t| t.status != "ACTIVE"),
                    _ => true,
                })
                .map(|(f, _)| f.clone())
                .collect()
        })
    }

    pub fn create_service(&self, region: &str, input: ServiceInput) -> Result<Value, AwsError> {
        if input.name.is_empty() || input.name.len() > 255 {
            return Err(invalid(
                "Service name can have up to 255 characters, and can contain uppercase and lowercase letters, numbers, underscores and hyphens.",
            ));
        }
        let desired = input.desired.unwrap_or(0);
        if desired < 0 {
            return Err(invalid("desiredCount cannot be negative."));
        }
        self.mutate(region, |r, now| {
            let cluster = r.cluster(input.cluster.as_deref())?.clone();
            let key = service_key(&cluster.name, &input.name);
            if let Some(s) = r.services.get(&key)
                && s.status != "INACTIVE"
                && !(s.status == "DRAINING" && service_drained(r, &key, now))
            {
                return Err(invalid("Creation of service was not idempotent."));
            }
            let td_ident = input
                .task_definition
                .clone()
                .ok_or_else(|| invalid("TaskDefinition must be specified."))?;
            let td = r
                .task_definition(&td_ident)
                .filter(|t| t.status == "ACTIVE")
                .ok_or_else(|| client("TaskDefinition not found."))?
                .clone();
            let launch = self.launch(
                region,
                &cluster,
                &td,
                input.launch_type.clone(),
                input.capacity_provider_strategy.clone().unwrap_or_default(),
                input.platform_version.clone(),
                input.config.get("networkConfiguration"),
            )?;
            self.check_service_links(region, &td, &input.config)?;
            let connect = self.service_connect(region, &cluster, &td, &input.config)?;
            let td_arn = self.task_definition_arn(region, &td.family, td.revision);
            let deployment = new_deployment(&td_arn, desired, &launch, &input, now);
            let service = Service {
                name: input.name.clone(),
                cluster: cluster.name.clone(),
                status: "ACTIVE".into(),
                deleted_at: None,
                task_definition: td_arn,
                desired,
                launch_type: launch.launch_type.clone(),
                capacity_provider_strategy: input.capacity_provider_strategy.unwrap_or_default(),
                platform_version: launch.platform_version.clone(),
                config: input.config,
                deployments: vec![deployment],
                events: Vec::new(),
                created_at: now,
                connect,
                tags: input.tags,
            };
            r.services.insert(key.clone(), service);
            r.touch(Key::Service(key.clone()));
            self.reconcile(region, r, &key, now)?;
            Ok(view::service(
                self,
                region,
                r,
                &r.services[&key],
                now,
                false,
            ))
        })
    }

    /// UpdateService: a desired count alone scales the current deployment; a new task
    /// definition, network, launch or `forceNewDeployment` starts a new PRIMARY deployment.
    pub fn update_service(&self, region: &str, input: ServiceInput) -> Result<Value, AwsError> {
        if input.desired.is_some_and(|d| d < 0) {
            return Err(invalid("desiredCount cannot be negative."));
        }
        self.mutate(region, |r, now| {
            let cluster = r.cluster(input.cluster.as_deref())?.clone();
            let key = r.service_key_of(&cluster.name, &input.name);
            let mut svc = r
                .services
                .get(&key)
                .cloned()
                .ok_or_else(service_not_found)?;
            if svc.status != "ACTIVE" {
                return Err(err("ServiceNotActiveException", "Service was not ACTIVE."));
            }
            let mut redeploy = input.force_new_deployment;
            let td = match &input.task_definition {
                Some(ident) => {
                    let td = r
                        .task_definition(ident)
                        .filter(|t| t.status == "ACTIVE")
                        .ok_or_else(|| client("TaskDefinition not found."))?
                        .clone();
                    let arn = self.task_definition_arn(region, &td.family, td.revision);
                    redeploy |= arn != svc.task_definition;
                    svc.task_definition = arn;
                    td
                }
                None => r
                    .task_definition(&svc.task_definition)
                    .ok_or_else(|| client("TaskDefinition not found."))?
                    .clone(),
            };
            for (k, v) in &input.config {
                if svc.config.get(k) != Some(v) {
                    redeploy |= matches!(
                        k.as_str(),
                        "networkConfiguration"
                            | "loadBalancers"
                            | "serviceRegistries"
                            | "serviceConnectConfiguration"
                    );
                    svc.config.insert(k.clone(), v.clone());
                }
            }
            if let Some(s) = &input.capacity_provider_strategy {
                redeploy |= *s != svc.capacity_provider_strategy;
                svc.capacity_provider_strategy = s.clone();
            }
            if input.platform_version.is_some() && input.platform_version != svc.platform_version {
                redeploy = true;
                svc.platform_version = input.platform_version.clone();
            }
            if let Some(d) = input.desired {
                svc.desired = d;
            }
            let launch = self.launch(
                region,
                &cluster,
                &td,
                svc.launch_type.clone(),
                svc.capacity_provider_strategy.clone(),
                svc.platform_version.clone(),
                svc.config.get("networkConfiguration"),
            )?;
            self.check_service_links(region, &td, &svc.config)?;
            let connect = self.service_connect(region, &cluster, &td, &svc.config)?;
            let dropped: Vec<String> = svc
                .connect
                .iter()
                .filter(|c| !connect.iter().any(|n| n.arn == c.arn))
                .map(|c| c.arn.clone())
                .collect();
            svc.connect = connect;
            if redeploy {
                for d in &mut svc.deployments {
                    d.status = "ACTIVE".into();
                }
                let spec = ServiceInput {
                    config: svc.config.clone(),
                    capacity_provider_strategy: Some(svc.capacity_provider_strategy.clone()),
                    ..Default::default()
                };
                svc.deployments.insert(
                    0,
                    new_deployment(&svc.task_definition, svc.desired, &launch, &spec, now),
                );
            } else if let Some(primary) = svc.deployments.first_mut() {
                primary.desired = svc.desired;
                primary.updated_at = now;
            }
            r.services.insert(key.clone(), svc);
            r.touch(Key::Service(key.clone()));
            self.reconcile(region, r, &key, now)?;
            for arn in &dropped {
                self.discovery.delete_if_unused(region, arn);
            }
            Ok(view::service(
                self,
                region,
                r,
                &r.services[&key],
                now,
                false,
            ))
        })
    }

    pub fn delete_service(
        &self,
        region: &str,
        cluster: Option<&str>,
        ident: &str,
        force: bool,
    ) -> Result<Value, AwsError> {
        self.mutate(region, |r, now| {
            let cluster = r.cluster(cluster)?.name.clone();
            let key = r.service_key_of(&cluster, ident);
            let svc = r
                .services
                .get_mut(&key)
                .filter(|s| s.status != "INACTIVE")
                .ok_or_else(service_not_found)?;
            if svc.status == "DRAINING" {
                return Err(err("ServiceNotActiveException", "Service was not ACTIVE."));
            }
            if svc.desired > 0 && !force {
                return Err(invalid(
                    "The service cannot be stopped while it is scaled above 0.",
                ));
            }
            svc.status = "DRAINING".into();
            svc.desired = 0;
            svc.deleted_at = Some(now);
            for d in &mut svc.deployments {
                d.desired = 0;
                d.updated_at = now;
            }
            r.touch(Key::Service(key.clone()));
            self.reconcile(region, r, &key, now)?;
            // The Cloud Map services Service Connect made go with the last ECS service using them.
            let connect = r.services[&key].connect.clone();
            for c in &connect {
                let shared = r
                    .services
                    .values()
                    .any(|s| s.status == "ACTIVE" && s.connect.iter().any(|o| o.arn == c.arn));
                if !shared {
                    self.discovery.delete_if_unused(region, &c.arn);
                }
            }
            Ok(view::service(
                self,
                region,
                r,
                &r.services[&key],
                now,
                false,
            ))
        })
    }

    pub fn describe_services(
        &self,
        region: &str,
        cluster: Option<&str>,
        idents: &[String],
        tags: bool,
    ) -> Result<Value, AwsError> {
        self.read(region, |r, now| {
            let cluster = r.cluster(cluster)?.name.clone();
            let mut services = Vec::new();
            let mut failures = Vec::new();
            for ident in idents {
                match r.services.get(&r.service_key_of(&cluster, ident)) {
                    Some(s) => services.push(view::service(self, region, r, s, now, tags)),
                    None => failures.push(json!({
                        "arn": self.service_arn(region, &cluster, short_name(ident)),
                        "reason": "MISSING",
                    })),
                }
            }
            Ok(json!({"services": services, "failures": failures}))
        })
    }

    /// Whether `cluster` holds an ACTIVE service `name`: what Application Auto Scaling checks
    /// before it registers `service/<cluster>/<name>` as a scalable target.
    pub fn service_exists(&self, region: &str, cluster: &str, name: &str) -> bool {
        self.read(region, |r, _| {
            r.cluster(Some(cluster)).is_ok_and(|c| {
                r.services
                    .get(&r.service_key_of(&c.name, name))
                    .is_some_and(|s| s.status == "ACTIVE")
            })
        })
    }

    pub fn list_services(
        &self,
        region: &str,
        cluster: Option<&str>,
        launch_type: Option<&str>,
    ) -> Result<Vec<String>, AwsError> {
        self.read(region, |r, _| {
            let cluster = r.cluster(cluster)?.name.clone();
            Ok(r.services
                .values()
                .filter(|s| s.cluster == cluster && s.status == "ACTIVE")
                .filter(|s| launch_type.is_none_or(|l| s.launch_type.as_deref() == Some(l)))
                .map(|s| self.service_arn(region, &s.cluster, &s.name))
                .collect())
        })
    }

    pub fn run_task(&self, region: &str, input: RunTaskInput) -> Result<Value, AwsError> {
        if !(1..=10).contains(&input.count) {
            return Err(invalid("count must be between 1 and 10."));
        }
        self.mutate(region, |r, now| {
            let cluster = r.cluster(input.cluster.as_deref())?.clone();
            let td = r
                .task_definition(&input.task_definition)
                .ok_or_else(|| client("Unable to find task definition."))?
                .clone();
            if td.status == "DELETE_IN_PROGRESS" {
                return Err(client("Unable to find task definition."));
            }
            let launch = self.launch(
                region,
                &cluster,
                &td,
                input.launch_type.clone(),
                input.capacity_provider_strategy.clone(),
                input.platform_version.clone(),
                input.network_configuration.as_ref(),
            )?;
            if launch.launch_type.as_deref() == Some("EC2") {
                return Ok(json!({"tasks": [], "failures": [{
                    "arn": self.cluster_arn(region, &cluster.name),
                    "reason": "No Container Instances were found in your cluster.",
                }]}));
            }
            let mut tasks = Vec::new();
            for n in 0..input.count as usize {
                let task = self.new_task(
                    region,
                    &cluster.name,
                    &td,
                    &launch,
                    TaskOrigin {
                        group: input
                            .group
                            .clone()
                            .unwrap_or_else(|| format!("family:{}", td.family)),
                        started_by: input.started_by.clone(),
                        service: None,
                        overrides: input.overrides.clone(),
                        tags: input.tags.clone(),
                    },
                    n,
                    now,
                )?;
                r.touch(Key::Task(task.id.clone()));
                tasks.push(task.id.clone());
                r.tasks.insert(task.id.clone(), task);
            }
            let tasks: Vec<Value> = tasks
                .iter()
                .filter_map(|id| r.tasks.get(id))
                .map(|t| view::task(self, region, t, now))
                .collect();
            Ok(json!({"tasks": tasks, "failures": []}))
        })
    }

    /// StartTask places tasks on named container instances; cumulo has none, so each is MISSING.
    pub fn start_task(
        &self,
        region: &str,
        cluster: Option<&str>,
        instances: &[String],
    ) -> Result<Value, AwsError> {
        self.read(region, |r, _| {
            let cluster = r.cluster(cluster)?.name.clone();
            let failures: Vec<Value> = instances
                .iter()
                .map(|i| {
                    let arn = if i.starts_with("arn:") {
                        i.clone()
                    } else {
                        format!(
                            "arn:aws:ecs:{region}:{}:container-instance/{cluster}/{i}",
                            self.account_id
                        )
                    };
                    json!({"arn": arn, "reason": "MISSING"})
                })
                .collect();
            Ok(json!({"tasks": [], "failures": failures}))
        })
    }

    pub fn stop_task(
        &self,
        region: &str,
        cluster: Option<&str>,
        ident: &str,
        reason: Option<String>,
    ) -> Result<Value, AwsError> {
        self.mutate(region, |r, now| {
            let cluster = r.cluster(cluster)?.name.clone();
            let id = short_name(ident).to_string();
            let task = r
                .tasks
                .get_mut(&id)
                .filter(|t| t.cluster == cluster)
                .ok_or_else(|| invalid("The referenced task was not found."))?;
            if task.stop_requested_at.is_none() {
                task.stop_requested_at = Some(now);
                task.stopped_reason = Some(reason.unwrap_or_else(|| "Task stopped by user".into()));
                task.stop_code = Some("UserInitiated".into());
                let stopped = task.clone();
                self.release(region, &stopped);
            }
            r.touch(Key::Task(id.clone()));
            // A service replaces a task stopped under it.
            if let Some(key) = r.tasks[&id].service.clone() {
                self.reconcile(region, r, &key, now)?;
            }
            Ok(view::task(self, region, &r.tasks[&id], now))
        })
    }

    pub fn describe_tasks(
        &self,
        region: &str,
        cluster: Option<&str>,
        idents: &[String],
        tags: bool,
    ) -> Result<Value, AwsError> {
        self.read(region, |r, now| {
            let cluster = r.cluster(cluster)?.name.clone();
            let mut tasks = Vec::new();
            let mut failures = Vec::new();
            for ident in idents {
                match r
                    .tasks
                    .get(short_name(ident))
                    .filter(|t| t.cluster == cluster)
                {
                    Some(t) => {
                        let mut v = view::task(self, region, t, now);
                        if tags {
                            v["tags"] = view::tags(&t.tags);
                        }
                        tasks.push(v);
                    }
                    None => failures.push(json!({
                        "arn": self.task_arn(region, &cluster, short_name(ident)),
                        "reason": "MISSING",
                    })),
                }
            }
            Ok(json!({"tasks": tasks, "failures": failures}))
        })
    }

    pub fn list_tasks(
        &self,
        region: &str,
        cluster: Option<&str>,
        filter: &ListTasksFilter,
    ) -> Result<Vec<String>, AwsError> {
        self.read(region, |r, _| {
            let cluster = r.cluster(cluster)?.name.clone();
            let desired = filter.desired_status.as_deref().unwrap_or("RUNNING");
            let service_key = filter
                .service
                .as_deref()
                .map(|s| service_key(&cluster, short_name(s)));
            Ok(r.tasks
                .values()
                .filter(|t| t.cluster == cluster)
                .filter(|t| view::desired_status(t) == desired)
                .filter(|t| service_key.is_none() || t.service == service_key)
                .filter(|t| {
                    filter.family.as_deref().is_none_or(|f| {
                        t.group == format!("family:{f}") || td_family(&t.task_definition) == f
                    })
                })
                .filter(|t| {
                    filter
                        .started_by
                        .as_deref()
                        .is_none_or(|s| t.started_by.as_deref() == Some(s))
                })
                .filter(|t| {
                    filter
                        .launch_type
                        .as_deref()
                        .is_none_or(|l| t.launch_type.as_deref() == Some(l))
                })
                .map(|t| self.task_arn(region, &t.cluster, &t.id))
                .collect())
        })
    }

    pub fn tag_resource(
        &self,
        region: &str,
        arn: &str,
        tags: Vec<(String, String)>,
    ) -> Result<(), AwsError> {
        self.mutate(region, |r, _| {
            let existing = tags_of(r, arn)?;
            for (k, v) in tags {
                existing.retain(|(key, _)| *key != k);
                existing.push((k, v));
            }
            touch_arn(r, arn);
            Ok(())
        })
    }

    pub fn untag_resource(&self, region: &str, arn: &str, keys: &[String]) -> Result<(), AwsError> {
        self.mutate(region, |r, _| {
            tags_of(r, arn)?.retain(|(k, _)| !keys.contains(k));
            touch_arn(r, arn);
            Ok(())
        })
    }

    pub fn list_tags(&self, region: &str, arn: &str) -> Result<Vec<(String, String)>, AwsError> {
        let mut regions = self.regions.lock();
        let r = regions.entry(region.to_string()).or_default();
        tags_of(r, arn).map(|t| t.clone())
    }

    pub fn list_account_settings(&self, region: &str) -> Vec<(String, String)> {
        self.read(region, |r, _| {
            ACCOUNT_SETTINGS
                .iter()
                .map(|name| {
                    let default = match *name {
                        "containerInsights" | "fargateFIPSMode" | "guardDutyActivate" => "disabled",
                        "fargateTaskRetirementWaitPeriod" => "7",
                        "defaultLogDriverMode" => "non-blocking",
                        _ => "enabled",
                    };
                    (
                        name.to_string(),
                        r.settings
                            .get(*name)
                            .cloned()
                            .unwrap_or_else(|| default.into()),
                    )
                })
                .collect()
        })
    }

    pub fn put_account_setting(
        &self,
        region: &str,
        name: &str,
        value: &str,
    ) -> Result<(), AwsError> {
        if !ACCOUNT_SETTINGS.contains(&name) {
            return Err(invalid(format!(
                "1 validation error detected: Value '{name}' at 'name' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
                ACCOUNT_SETTINGS.join(", ")
            )));
        }
        self.mutate(region, |r, _| {
            r.settings.insert(name.to_string(), value.to_string());
            r.touch(Key::Setting(name.to_string()));
            Ok(())
        })
    }

    /// Whether a service's deployment has completed: its tasks run and nothing older drains.
    /// What CloudFormation waits for.
    pub fn service_stable(&self, region: &str, cluster: &str, name: &str) -> Option<bool> {
        self.read(region, |r, now| {
            let key = service_key(short_name(cluster), short_name(name));
            let s = r.services.get(&key)?;
            Some(view::steady_since(r, s, now).is_some())
        })
    }

    /// How tasks of this definition are launched in this cluster.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        region: &str,
        cluster: &Cluster,
        td: &TaskDefinition,
        launch_type: Option<String>,
        strategy: Vec<Value>,
        platform_version: Option<String>,
        network_configuration: Option<&Value>,
    ) -> Result<Launch, AwsError> {
        if launch_type.is_some() && !strategy.is_empty() {
            return Err(invalid(
                "Specifying both a launch type and capacity provider strategy is not supported. Remove one and try again.",
            ));
        }
        if let Some(l) = &launch_type
            && !LAUNCH_TYPES.contains(&l.as_str())
        {
            return Err(invalid(format!(
                "1 validation error detected: Value '{l}' at 'launchType' failed to satisfy constraint: Member must satisfy enum value set: [EC2, FARGATE, EXTERNAL, MANAGED_INSTANCES]"
            )));
        }
        validate_strategy(cluster, &strategy)?;
        let strategy = if launch_type.is_none() && strategy.is_empty() {
            cluster.default_strategy.clone()
        } else {
            strategy
        };
        let capacity_provider = strategy
            .iter()
            .filter_map(|i| i.get("capacityProvider").and_then(Value::as_str))
            .next()
            .map(str::to_string);
        let launch_type = match (&launch_type, &capacity_provider) {
            (Some(l), _) => Some(l.clone()),
            (None, Some(_)) => None,
            (None, None) => Some("EC2".to_string()),
        };
        let fargate = launch_type.as_deref() == Some("FARGATE")
            || capacity_provider
                .as_deref()
                .is_some_and(|c| c.starts_with("FARGATE"));
        if fargate && !td.compatibilities.iter().any(|c| c == "FARGATE") {
            return Err(invalid(
                "Task definition does not support launch_type FARGATE.",
            ));
        }
        let awsvpc_mode = td.body.get("networkMode").and_then(Value::as_str) == Some("awsvpc");
        let network = network::awsvpc(network_configuration)?;
        if let Some(v) = &network {
            for id in &v.subnets {
                self.ec2.subnet(region, id).map_err(|e| {
                    invalid(format!(
                        "Error retrieving subnet information for [{id}]: {} (ErrorCode: {})",
                        e.message, e.code
                    ))
                })?;
            }
            for id in &v.security_groups {
                self.ec2.security_group(region, id).map_err(|e| {
                    invalid(format!("Error retrieving security group information for [{id}]: {} (ErrorCode: {})", e.message, e.code))
                })?;
            }
        }
        if awsvpc_mode && network.is_none() {
            return Err(invalid(
                "Network Configuration must be provided when networkMode 'awsvpc' is specified.",
            ));
        }
        if !awsvpc_mode && network.is_some() {
            return Err(invalid(
                "Network Configuration is not valid for the given networkMode of this task definition.",
            ));
        }
        Ok(Launch {
            launch_type,
            capacity_provider,
            platform_version: if fargate {
                Some(platform_version.unwrap_or_else(|| "LATEST".into()))
            } else {
                None
            },
            network,
        })
    }

    /// The Cloud Map services an enabled Service Connect configuration names, made in its
    /// namespace (the cluster's default when it names none) if they do not exist yet.
    fn service_connect(
        &self,
        region: &str,
        cluster: &Cluster,
        td: &TaskDefinition,
        config: &Map<String, Value>,
    ) -> Result<Vec<ConnectService>, AwsError> {
        let Some(cfg) = config
            .get("serviceConnectConfiguration")
            .filter(|c| c.get("enabled") == Some(&Value::Bool(true)))
        else {
            return Ok(Vec::new());
        };
        let namespace = cfg
            .get("namespace")
            .or_else(|| {
                cluster
                    .service_connect_defaults
                    .as_ref()
                    .and_then(|d| d.get("namespace"))
            })
            .and_then(Value::as_str)
            .ok_or_else(|| {
                invalid("Service Connect requires a namespace: set serviceConnectConfiguration.namespace or the cluster's serviceConnectDefaults.")
            })?;
        let ns_id = self
            .discovery
            .namespace_id(region, namespace)
            .ok_or_else(|| err("NamespaceNotFoundException", "Namespace not found."))?;
        let ports: Vec<(String, Option<i64>)> = td
            .body
            .get("containerDefinitions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| c.get("portMappings").and_then(Value::as_array))
            .flatten()
            .filter_map(|p| {
                let name = p.get("name").and_then(Value::as_str)?;
                Some((
                    name.to_string(),
                    p.get("containerPort").and_then(Value::as_i64),
                ))
            })
            .collect();
        let services = cfg.get("services").and_then(Value::as_array);
        let mut out = Vec::new();
        for s in services.into_iter().flatten() {
            let port_name = s.get("portName").and_then(Value::as_str).unwrap_or("");
            let port = ports
                .iter()
                .find(|(n, _)| n == port_name)
                .ok_or_else(|| {
                    invalid(format!(
                        "The port name {port_name} does not match any named portMappings in the task definition."
                    ))
                })?
                .1;
            let discovery_name = s
                .get("discoveryName")
                .and_then(Value::as_str)
                .unwrap_or(port_name)
                .to_string();
            let arn = self
                .discovery
                .ensure_service(region, &ns_id, &discovery_name)?;
            out.push(ConnectService {
                discovery_name,
                arn,
                port,
            });
        }
        Ok(out)
    }

    /// Load balancers name a container of the definition; service registries exist in Cloud Map.
    fn check_service_links(
        &self,
        region: &str,
        td: &TaskDefinition,
        config: &Map<String, Value>,
    ) -> Result<(), AwsError> {
        let containers = view::container_names(td);
        let lbs = config.get("loadBalancers").and_then(Value::as_array);
        for lb in lbs.into_iter().flatten() {
            let name = lb
                .get("containerName")
                .and_then(Value::as_str)
                .unwrap_or("");
            if !containers.iter().any(|c| c == name) {
                return Err(invalid(format!(
                    "The container {name} does not exist in the task definition."
                )));
            }
            if let Some(tg) = lb.get("targetGroupArn").and_then(Value::as_str) {
                let view = self.elb.target_group(region, tg).map_err(|_| {
                    // cumulo's wording: AWS's for a missing group was not found recorded.
                    invalid(format!(
                        "The target group with targetGroupArn {tg} does not exist."
                    ))
                })?;
                if view.load_balancer_arns.is_empty() {
                    return Err(invalid(format!(
                        "The target group with targetGroupArn {tg} does not have an associated load balancer."
                    )));
                }
            }
        }
        let registries = config.get("serviceRegistries").and_then(Value::as_array);
        for reg in registries.into_iter().flatten() {
            let arn = reg.get("registryArn").and_then(Value::as_str).unwrap_or("");
            let Some(records) = self.discovery.record_types(region, arn) else {
                return Err(invalid(format!(
                    "The service registry ARN '{arn}' is not valid."
                )));
            };
            let port = reg.get("port").is_some() || reg.get("containerPort").is_some();
            if records.iter().any(|r| r == "SRV") && !port {
                return Err(invalid(
                    "When specifying 'SRV' records in service discovery, the 'containerName' and 'containerPort' or 'port' must be specified.",
                ));
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn new_task(
        &self,
        region: &str,
        cluster: &str,
        td: &TaskDefinition,
        launch: &Launch,
        origin: TaskOrigin,
        n: usize,
        now: f64,
    ) -> Result<Task, AwsError> {
        let eni = match &launch.network {
            Some(v) => Some(self.allocate_eni(region, v, n)?),
            None => None,
        };
        let availability_zone = match &eni {
            Some(e) => self.ec2.subnet(region, &e.subnet_id)?.availability_zone,
            None => format!("{region}a"),
        };
        Ok(Task {
            id: uuid::Uuid::new_v4().simple().to_string(),
            cluster: cluster.to_string(),
            task_definition: self.task_definition_arn(region, &td.family, td.revision),
            group: origin.group,
            started_by: origin.started_by,
            service: origin.service,
            launch_type: launch.launch_type.clone(),
            capacity_provider: launch.capacity_provider.clone(),
            platform_version: launch.platform_version.as_ref().map(|p| {
                if p == "LATEST" {
                    "1.4.0".into()
                } else {
                    p.clone()
                }
            }),
            cpu: td
                .body
                .get("cpu")
                .and_then(Value::as_str)
                .map(str::to_string),
            memory: td
                .body
                .get("memory")
                .and_then(Value::as_str)
                .map(str::to_string),
            containers: view::containers(td),
            overrides: origin.overrides.unwrap_or_else(
                || json!({"containerOverrides": [], "inferenceAcceleratorOverrides": []}),
            ),
            availability_zone,
            eni,
            created_at: now,
            stop_requested_at: None,
            stopped_reason: None,
            stop_code: None,
            registries: Vec::new(),
            targets: Vec::new(),
            tags: origin.tags,
        })
    }

    /// The `n`th task of a batch gets an interface in one of its subnets, round-robin, from EC2.
    fn allocate_eni(&self, region: &str, v: &Awsvpc, n: usize) -> Result<Eni, AwsError> {
        let subnet_id = v.subnets[n % v.subnets.len()].clone();
        let attachment_id = uuid::Uuid::new_v4().to_string();
        let view = self.ec2.create_network_interface(
            region,
            NetworkInterfaceRequest {
                subnet_id: subnet_id.clone(),
                security_group_ids: v.security_groups.clone(),
                description: format!(
                    "arn:aws:ecs:{region}:{}:attachment/{attachment_id}",
                    self.account_id
                ),
                interface_type: None,
                requester_id: Some("amazon-ecs".into()),
            },
        )?;
        Ok(Eni {
            attachment_id,
            eni_id: view.network_interface_id,
            subnet_id,
            private_ip: view.private_ip_address,
            mac_address: view.mac_address,
            managed: true,
        })
    }

    /// Registers a service's new awsvpc task in the target groups its load balancers name.
    fn register_targets(
        &self,
        region: &str,
        svc: &Service,
        task: &mut Task,
    ) -> Result<(), AwsError> {
        let Some(eni) = &task.eni else { return Ok(()) };
        let lbs = svc.config.get("loadBalancers").and_then(Value::as_array);
        for lb in lbs.into_iter().flatten() {
            let (Some(tg), Some(port)) = (
                lb.get("targetGroupArn").and_then(Value::as_str),
                lb.get("containerPort").and_then(Value::as_i64),
            ) else {
                continue;
            };
            self.elb
                .register_targets(region, tg, &[(eni.private_ip.clone(), Some(port))])?;
            task.targets
                .push((tg.to_string(), eni.private_ip.clone(), port));
        }
        Ok(())
    }

    /// What a stopped task gives back: its ENI and its Cloud Map instances.
    fn release(&self, region: &str, task: &Task) {
        if let Some(eni) = task.eni.as_ref().filter(|e| e.managed) {
            // Already gone (its subnet's owner removed it) is as good as released.
            let _ = self.ec2.delete_network_interface(region, &eni.eni_id);
        }
        for (tg, ip, port) in &task.targets {
            let _ = self
                .elb
                .deregister_targets(region, tg, &[(ip.clone(), Some(*port))]);
        }
        for arn in &task.registries {
            self.discovery.deregister_task(region, arn, &task.id);
        }
    }

    /// Brings a service's tasks to its deployments' desired counts: starts what is missing,
    /// stops what is too many or belongs to an older deployment, and writes the events.
    fn reconcile(&self, region: &str, r: &mut Region, key: &str, now: f64) -> Result<(), AwsError> {
        let Some(mut svc) = r.services.get(key).cloned() else {
            return Ok(());
        };
        let Some(primary) = svc.deployments.first().cloned() else {
            return Ok(());
        };
        let live: Vec<Task> = r
            .service_tasks(key)
            .filter(|t| t.stop_requested_at.is_none())
            .cloned()
            .collect();
        // Tasks of older deployments, and beyond the desired count, stop.
        let (mine, older): (Vec<Task>, Vec<Task>) = live
            .into_iter()
            .partition(|t| t.started_by.as_deref() == Some(primary.id.as_str()));
        let mut stopping: Vec<Task> = older;
        let wanted = if svc.status == "ACTIVE" {
            primary.desired
        } else {
            0
        };
        let mut mine = mine;
        mine.sort_by(|a, b| a.created_at.total_cmp(&b.created_at));
        while mine.len() as i64 > wanted {
            if let Some(t) = mine.pop() {
                stopping.push(t);
            }
        }
        let mut stopped_ids = Vec::new();
        let mut deregistered = Vec::new();
        for t in &stopping {
            if let Some(task) = r.tasks.get_mut(&t.id) {
                task.stop_requested_at = Some(now);
                task.stopped_reason = Some(format!(
                    "Scaling activity initiated by (deployment {})",
                    task.started_by.clone().unwrap_or_default()
                ));
                task.stop_code = Some("ServiceSchedulerInitiated".into());
                let stopped = task.clone();
                self.release(region, &stopped);
                deregistered.extend(stopped.targets.iter().map(|(tg, _, _)| tg.clone()));
                stopped_ids.push(stopped.id.clone());
                r.touch(Key::Task(stopped.id));
            }
        }
        if !stopped_ids.is_empty() {
            svc.events.insert(
                0,
                event(
                    now,
                    format!(
                        "(service {}) has stopped {} running tasks: {}.",
                        svc.name,
                        stopped_ids.len(),
                        stopped_ids
                            .iter()
                            .map(|i| format!("(task {i})"))
                            .collect::<Vec<_>>()
                            .join(" ")
                    ),
                ),
            );
            for message in target_events(&svc.name, "deregistered", &deregistered) {
                svc.events.insert(0, event(now, message));
            }
        }
        let missing = (wanted - mine.len() as i64).max(0) as usize;
        if missing > 0 {
            let cluster = r
                .clusters
                .get(&svc.cluster)
                .cloned()
                .ok_or_else(cluster_not_found)?;
            let td = r
                .task_definition(&primary.task_definition)
                .cloned()
                .ok_or_else(|| client("TaskDefinition not found."))?;
            let launch = self.launch(
                region,
                &cluster,
                &td,
                primary.launch_type.clone(),
                if primary.launch_type.is_some() {
                    Vec::new()
                } else {
                    primary.capacity_provider_strategy.clone()
                },
                primary.platform_version.clone(),
                primary.network_configuration.as_ref(),
            )?;
            if launch.launch_type.as_deref() == Some("EC2") {
                svc.events.insert(0, event(now, format!(
                    "(service {}) was unable to place a task because no container instance met all of its requirements. Reason: No Container Instances were found in your cluster.",
                    svc.name
                )));
            } else {
                let mut started = Vec::new();
                let mut registered = Vec::new();
                for n in 0..missing {
                    let task = self.new_task(
                        region,
                        &svc.cluster,
                        &td,
                        &launch,
                        TaskOrigin {
                            group: format!("service:{}", svc.name),
                            started_by: Some(primary.id.clone()),
                            service: Some(key.to_string()),
                            overrides: None,
                            tags: propagated_tags(&svc, &td),
                        },
                        mine.len() + n,
                        now,
                    );
                    let mut task = match task {
                        Ok(t) => t,
                        Err(e) => {
                            // As ECS reports a placement it cannot make; the next pass tries again.
                            svc.events.insert(
                                0,
                                event(
                                    now,
                                    format!(
                                        "(service {}) was unable to place a task. Reason: {}.",
                                        svc.name, e.message
                                    ),
                                ),
                            );
                            break;
                        }
                    };
                    task.registries = self.register(region, &svc, &task)?;
                    self.register_targets(region, &svc, &mut task)?;
                    registered.extend(task.targets.iter().map(|(tg, _, _)| tg.clone()));
                    started.push(task.id.clone());
                    r.touch(Key::Task(task.id.clone()));
                    r.tasks.insert(task.id.clone(), task);
                }
                svc.events.insert(
                    0,
                    event(
                        now,
                        format!(
                            "(service {}) has started {} tasks: {}.",
                            svc.name,
                            started.len(),
                            started
                                .iter()
                                .map(|i| format!("(task {i})"))
                                .collect::<Vec<_>>()
                                .join(" ")
                        ),
                    ),
                );
                for message in target_events(&svc.name, "registered", &registered) {
                    svc.events.insert(0, event(now, message));
                }
            }
        }
        // Older deployments whose tasks have all stopped are gone from the service.
        let tasks_of = |d: &Deployment| {
            r.service_tasks(key).any(|t| {
                t.started_by.as_deref() == Some(d.id.as_str())
                    && lifecycle::phase(t, now) != Phase::Stopped
            })
        };
        let keep: Vec<Deployment> = svc
            .deployments
            .iter()
            .enumerate()
            .filter(|(i, d)| *i == 0 || tasks_of(d))
            .map(|(_, d)| d.clone())
            .collect();
        svc.deployments = keep;
        svc.events.truncate(100);
        r.services.insert(key.to_string(), svc);
        r.touch(Key::Service(key.to_string()));
        // Stopped tasks are kept an hour, as ECS shows them.
        let expired: Vec<String> = r
            .tasks
            .values()
            .filter(|t| t.stop_requested_at.is_some_and(|s| now - s > 3600.0))
            .map(|t| t.id.clone())
            .collect();
        for id in expired {
            r.tasks.remove(&id);
            r.touch(Key::Task(id));
        }
        Ok(())
    }

    /// The attributes ECS gives a task's Cloud Map instance.
    fn instance_attributes(
        &self,
        region: &str,
        svc: &Service,
        task: &Task,
    ) -> Vec<(String, String)> {
        let mut attrs = vec![
            (
                "AVAILABILITY_ZONE".to_string(),
                task.availability_zone.clone(),
            ),
            ("AWS_INIT_HEALTH_STATUS".to_string(), "HEALTHY".to_string()),
            ("ECS_CLUSTER_NAME".to_string(), svc.cluster.clone()),
            ("ECS_SERVICE_NAME".to_string(), svc.name.clone()),
            (
                "ECS_TASK_DEFINITION_FAMILY".to_string(),
                td_family(&task.task_definition).to_string(),
            ),
            ("REGION".to_string(), region.to_string()),
        ];
        if let Some(eni) = &task.eni {
            attrs.push(("AWS_INSTANCE_IPV4".to_string(), eni.private_ip.clone()));
        }
        attrs
    }

    /// Registers a service's new task in each of its Cloud Map services (Service Connect's and
    /// its service registries); answers their ARNs.
    fn register(&self, region: &str, svc: &Service, task: &Task) -> Result<Vec<String>, AwsError> {
        let mut registered = Vec::new();
        for c in &svc.connect {
            let mut attrs = self.instance_attributes(region, svc, task);
            if let Some(port) = c.port {
                attrs.push(("AWS_INSTANCE_PORT".to_string(), port.to_string()));
            }
            self.discovery
                .register_task(region, &c.arn, &task.id, attrs)?;
            registered.push(c.arn.clone());
        }
        let regs = svc
            .config
            .get("serviceRegistries")
            .and_then(Value::as_array);
        for reg in regs.into_iter().flatten() {
            let arn = reg.get("registryArn").and_then(Value::as_str).unwrap_or("");
            let mut attrs = self.instance_attributes(region, svc, task);
            if let Some(port) = reg
                .get("port")
                .or_else(|| reg.get("containerPort"))
                .and_then(Value::as_i64)
            {
                attrs.push(("AWS_INSTANCE_PORT".to_string(), port.to_string()));
            }
            self.discovery.register_task(region, arn, &task.id, attrs)?;
            registered.push(arn.to_string());
        }
        Ok(registered)
    }
}

/// Where a task comes from: RunTask's group and startedBy, or a service's deployment.
struct TaskOrigin {
    group: String,
    started_by: Option<String>,
    service: Option<String>,
    overrides: Option<Value>,
    tags: Vec<(String, String)>,
}

/// ListTasks' filters.
#[derive(Debug, Clone, Default)]
pub struct ListTasksFilter {
    pub service: Option<String>,
    pub family: Option<String>,
    pub started_by: Option<String>,
    pub desired_status: Option<String>,
    pub launch_type: Option<String>,
}

fn td_family(arn: &str) -> &str {
    short_name(arn).split(':').next().unwrap_or("")
}

fn propagated_tags(svc: &Service, td: &TaskDefinition) -> Vec<(String, String)> {
    match svc.config.get("propagateTags").and_then(Value::as_str) {
        Some("SERVICE") => svc.tags.clone(),
        Some("TASK_DEFINITION") => td.tags.clone(),
        _ => Vec::new(),
    }
}

/// AWS's service events for targets a service (de)registered: one per target group, with how
/// many, as `(service web) registered 2 targets in (target-group arn:...)`.
fn target_events(service: &str, verb: &str, groups: &[String]) -> Vec<String> {
    let mut counted: Vec<(&str, usize)> = Vec::new();
    for tg in groups {
        match counted.iter_mut().find(|(g, _)| *g == tg.as_str()) {
            Some((_, n)) => *n += 1,
            None => counted.push((tg, 1)),
        }
    }
    counted
        .into_iter()
        .map(|(tg, n)| format!("(service {service}) {verb} {n} targets in (target-group {tg})"))
        .collect()
}

fn event(now: f64, message: String) -> Event {
    Event {
        id: uuid::Uuid::new_v4().to_string(),
        created_at: now,
        message,
    }
}

fn new_deployment(
    td_arn: &str,
    desired: i64,
    launch: &Launch,
    input: &ServiceInput,
    now: f64,
) -> Deployment {
    let digits: u64 = rand::random::<u64>() % 9_000_000_000_000_000_000 + 1_000_000_000_000_000_000;
    Deployment {
        id: format!("ecs-svc/{digits}"),
        status: "PRIMARY".into(),
        task_definition: td_arn.to_string(),
        desired,
        created_at: now,
        updated_at: now,
        launch_type: launch.launch_type.clone(),
        capacity_provider_strategy: input.capacity_provider_strategy.clone().unwrap_or_default(),
        platform_version: launch.platform_version.clone(),
        network_configuration: input.config.get("networkConfiguration").cloned(),
    }
}

fn service_drained(r: &Region, key: &str, now: f64) -> bool {
    r.service_tasks(key)
        .all(|t| lifecycle::phase(t, now) == Phase::Stopped)
}

/// The tags of the resource an ARN names.
fn tags_of<'a>(r: &'a mut Region, arn: &str) -> Result<&'a mut Vec<(String, String)>, AwsError> {
    let not_found = || {
        err(
            "InvalidParameterException",
            "The specified resource could not be found.",
        )
    };
    let rest = arn
        .split(':')
        .nth(5)
        .ok_or_else(|| invalid("Invalid arn syntax."))?;
    let (kind, path) = rest
        .split_once('/')
        .ok_or_else(|| invalid("Invalid arn syntax."))?;
    match kind {
        "cluster" => r
            .clusters
            .get_mut(path)
            .filter(|c| c.status == "ACTIVE")
            .map(|c| &mut c.tags)
            .ok_or_else(|| err("ClusterNotFoundException", "Cluster not found.")),
        "service" => r
            .services
            .get_mut(path)
            .filter(|s| s.status == "ACTIVE")
            .map(|s| &mut s.tags)
            .ok_or_else(service_not_found),
        "task-definition" => r
            .task_definition_mut(path)
            .map(|t| &mut t.tags)
            .ok_or_else(not_found),
        "task" => r
            .tasks
            .get_mut(short_name(path))
            .map(|t| &mut t.tags)
            .ok_or_else(not_found),
        _ => Err(invalid("Invalid arn syntax.")),
    }
}

fn touch_arn(r: &mut Region, arn: &str) {
    let rest = arn.split(':').nth(5).unwrap_or("");
    let Some((kind, path)) = rest.split_once('/') else {
        return;
    };
    match kind {
        "cluster" => r.touch(Key::Cluster(path.to_string())),
        "service" => r.touch(Key::Service(path.to_string())),
        "task-definition" => r.touch(Key::Family(td_family(path).to_string())),
        "task" => r.touch(Key::Task(short_name(path).to_string())),
        _ => {}
    }
}

/// Checks a registration and returns the compatibilities AWS computes for it: EC2 always,
/// FARGATE when the definition satisfies Fargate's rules (awsvpc, task-level sizes from its
/// table). A definition that requires FARGATE and breaks a rule is refused with AWS's message.
fn validate_task_definition(body: &mut Map<String, Value>) -> Result<Vec<String>, AwsError> {
    let containers = body
        .get("containerDefinitions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if containers.is_empty() {
        return Err(client("Container list cannot be empty."));
    }
    for c in &containers {
        if c.get("name")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(client("Container.name should not be null or empty."));
        }
        if c.get("image")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            return Err(client("Container.image should not be null or empty."));
        }
    }
    // Sizes are answered as strings, whichever form they were given in.
    for key in ["cpu", "memory"] {
        if let Some(v) = body.get(key).cloned() {
            let text = match &v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                _ => return Err(client(format!("Invalid '{key}' setting for task."))),
            };
            let units = if key == "cpu" {
                fargate::cpu_units(&text)
            } else {
                fargate::memory_mib(&text)
            };
            let units =
                units.ok_or_else(|| client(format!("Invalid '{key}' setting for task.")))?;
            body.insert(key.to_string(), json!(units.to_string()));
        }
    }
    let requires: Vec<String> = body
        .get("requiresCompatibilities")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mode = body
        .get("networkMode")
        .and_then(Value::as_str)
        .map(str::to_string);
    let cpu = body
        .get("cpu")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok());
    let memory = body
        .get("memory")
        .and_then(Value::as_str)
        .and_then(|s| s.parse().ok());
    let fargate_rule = || -> Result<(), AwsError> {
        if mode.as_deref() != Some("awsvpc") {
            return Err(client(
                "Fargate only supports network mode \u{2018}awsvpc\u{2019}.",
            ));
        }
        let (Some(c), Some(m)) = (cpu, memory) else {
            return Err(client(
                "Fargate requires that 'cpu' be defined at the task level.",
            ));
        };
        if !fargate::offered(c, m) {
            return Err(client(format!(
                "No Fargate configuration exists for given values: {c} CPU, {m} memory. See the Amazon ECS documentation for the valid values."
            )));
        }
        Ok(())
    };
    if requires.iter().any(|r| r == "FARGATE") {
        fargate_rule()?;
    }
    if mode.is_none() {
        body.insert("networkMode".into(), json!("bridge"));
    }
    let awsvpc = mode.as_deref() == Some("awsvpc");
    let normalized: Vec<Value> = containers
        .into_iter()
        .map(|mut c| {
            for (key, default) in [
                ("cpu", json!(0)),
                ("essential", json!(true)),
                ("portMappings", json!([])),
                ("environment", json!([])),
                ("mountPoints", json!([])),
                ("volumesFrom", json!([])),
            ] {
                if c.get(key).is_none_or(Value::is_null) {
                    c[key] = default;
                }
            }
            if let Some(ports) = c.get_mut("portMappings").and_then(Value::as_array_mut) {
                for p in ports {
                    if p.get("protocol").is_none() {
                        p["protocol"] = json!("tcp");
                    }
                    if awsvpc && p.get("hostPort").is_none() {
                        p["hostPort"] = p.get("containerPort").cloned().unwrap_or(Value::Null);
                    }
                }
            }
            c
        })
        .collect();
    body.insert("containerDefinitions".into(), Value::Array(normalized));
    let mut compatibilities = vec!["EC2".to_string()];
    if fargate_rule().is_ok() {
        compatibilities.push("FARGATE".to_string());
    }
    Ok(compatibilities)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn target_events_count_per_group_in_aws_words() {
        let groups = ["tg/a".to_string(), "tg/b".into(), "tg/a".into()];
        assert_eq!(
            target_events("web", "registered", &groups),
            vec![
                "(service web) registered 2 targets in (target-group tg/a)",
                "(service web) registered 1 targets in (target-group tg/b)",
            ]
        );
        assert!(target_events("web", "deregistered", &[]).is_empty());
    }

    #[test]
    fn fargate_definitions_need_awsvpc_and_a_size_fargate_offers() {
        let containers = json!([{"name": "web", "image": "nginx"}]);
        let mut ok = body(json!({"family": "f", "containerDefinitions": containers,
            "requiresCompatibilities": ["FARGATE"], "networkMode": "awsvpc",
            "cpu": "0.25 vCPU", "memory": 512}));
        assert_eq!(
            validate_task_definition(&mut ok).unwrap(),
            ["EC2", "FARGATE"]
        );
        assert_eq!(ok["cpu"], json!("256"));
        assert_eq!(ok["memory"], json!("512"));

        let mut bridge = body(json!({"family": "f", "containerDefinitions": containers,
            "requiresCompatibilities": ["FARGATE"], "cpu": "256", "memory": "512"}));
        assert_eq!(
            validate_task_definition(&mut bridge).unwrap_err().message,
            "Fargate only supports network mode \u{2018}awsvpc\u{2019}."
        );
        let mut size = body(json!({"family": "f", "containerDefinitions": containers,
            "requiresCompatibilities": ["FARGATE"], "networkMode": "awsvpc",
            "cpu": "1024", "memory": "1024"}));
        let e = validate_task_definition(&mut size).unwrap_err();
        assert_eq!(e.code, "ClientException");
        assert_eq!(
            e.message,
            "No Fargate configuration exists for given values: 1024 CPU, 1024 memory. See the Amazon ECS documentation for the valid values."
        );
        let mut ec2 = body(json!({"family": "f", "containerDefinitions": containers}));
        assert_eq!(validate_task_definition(&mut ec2).unwrap(), ["EC2"]);
        assert_eq!(ec2["networkMode"], json!("bridge"));
    }

    #[test]
    fn short_names_come_from_arns() {
        assert_eq!(short_name("arn:aws:ecs:us-east-1:1:cluster/web"), "web");
        assert_eq!(short_name("web"), "web");
        assert_eq!(
            td_family("arn:aws:ecs:us-east-1:1:task-definition/app:3"),
            "app"
        );
    }
}
