//! CloudFormation providers over ECS's typed operations: AWS::ECS::Cluster (Ref the name,
//! GetAtt Arn), AWS::ECS::TaskDefinition (Ref and GetAtt TaskDefinitionArn; delete
//! deregisters, as CloudFormation does), AWS::ECS::Service (Ref the ARN, GetAtt Name and
//! ServiceArn; create and update wait for a steady state, delete for the tasks to drain) and
//! AWS::ECS::ClusterCapacityProviderAssociations (Ref the cluster).
//!
//! Template properties are the API's members in PascalCase; `api` turns them into the API's
//! camelCase (the few members named differently are listed) and template strings into the
//! numbers and booleans the API takes.

use super::{CreateClusterInput, EcsService, ServiceInput};
use crate::providers::declared::{self, Answer, Declared, Made, after_create, changed_keys};
use crate::providers::system_tags::system_tags;
use crate::providers::{ProviderServices, already_exists, given_or_generated_name, scalar, tags};
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;

const SERVICE: &str = "Ecs";
const NOT_FOUND: &[&str] = &[
    "ClusterNotFoundException",
    "ServiceNotFoundException",
    "ServiceNotActiveException",
];
/// How long a service may take to reach a steady state before its resource fails. Tasks run
/// within a second here, so only a service that cannot place tasks waits this long.
const STABILIZE: Duration = Duration::from_secs(30);

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let ecs = s.ecs.clone();
    declared::register(r, Cluster { ecs: ecs.clone() });
    declared::register(r, TaskDefinition { ecs: ecs.clone() });
    declared::register(r, EcsServiceType { ecs: ecs.clone() });
    declared::register(r, CapacityProviderAssociations { ecs });
}

/// Template members whose API name is not their camelCase.
const RENAMED: &[(&str, &str)] = &[
    ("ClusterSettings", "settings"),
    ("PlacementStrategies", "placementStrategy"),
    ("EFSVolumeConfiguration", "efsVolumeConfiguration"),
    (
        "FSxWindowsFileServerVolumeConfiguration",
        "fsxWindowsFileServerVolumeConfiguration",
    ),
    ("FilesystemId", "fileSystemId"),
    ("IAM", "iam"),
    ("Role", "roleArn"),
];
/// Members that are maps of user keys, kept as written.
const MAPS: &[&str] = &["DockerLabels", "Options", "DriverOpts", "Labels"];
/// Members the API takes as integers (task-level Cpu and Memory are strings; a container's are
/// integers, handled by position).
const INTEGERS: &[&str] = &[
    "ContainerPort",
    "HostPort",
    "Port",
    "Weight",
    "Base",
    "DesiredCount",
    "MaximumPercent",
    "MinimumHealthyPercent",
    "HealthCheckGracePeriodSeconds",
    "Interval",
    "Retries",
    "StartPeriod",
    "Timeout",
    "MemoryReservation",
    "SizeInGiB",
    "HardLimit",
    "SoftLimit",
    "TransitEncryptionPort",
    "StartTimeout",
    "StopTimeout",
    "SharedMemorySize",
    "Swappiness",
    "MaxSwap",
    "IdleTimeoutSeconds",
    "PerRequestTimeoutSeconds",
];
const BOOLEANS: &[&str] = &[
    "Essential",
    "ReadOnly",
    "Enable",
    "Rollback",
    "Enabled",
    "Privileged",
    "ReadonlyRootFilesystem",
    "Interactive",
    "PseudoTerminal",
    "DisableNetworking",
    "InitProcessEnabled",
    "EnableECSManagedTags",
    "EnableExecuteCommand",
    "EnableFaultInjection",
    "Autoprovision",
];

fn api_name(key: &str) -> String {
    if let Some((_, to)) = RENAMED.iter().find(|(from, _)| *from == key) {
        return to.to_string();
    }
    let mut c = key.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn typed(key: &str, v: &Value, in_container: bool) -> Option<Value> {
    let s = v.as_str()?;
    let integer = INTEGERS.contains(&key) || (in_container && matches!(key, "Cpu" | "Memory"));
    if integer {
        return s.parse::<i64>().ok().map(Value::from);
    }
    if BOOLEANS.contains(&key) {
        return match s.to_ascii_lowercase().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        };
    }
    None
}

/// A template value as the API member it stands for.
fn api(v: &Value, in_container: bool) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, x)| {
                    let inner = in_container || k == "ContainerDefinitions";
                    let value = if MAPS.contains(&k.as_str()) {
                        x.clone()
                    } else if let Some(t) = typed(k, x, in_container) {
                        t
                    } else if k == "ContainerDefinitions" {
                        match x {
                            Value::Array(a) => {
                                Value::Array(a.iter().map(|c| api(c, true)).collect())
                            }
                            other => api(other, true),
                        }
                    } else {
                        api(x, inner)
                    };
                    (api_name(k), value)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| api(x, in_container)).collect()),
        other => other.clone(),
    }
}

fn member(props: &Map<String, Value>, key: &str) -> Option<Value> {
    props
        .get(key)
        .filter(|v| !v.is_null())
        .map(|v| api(&json!({ key: v }), false))
        .and_then(|o| o.get(api_name(key)).cloned())
}

fn members(props: &Map<String, Value>, key: &str) -> Vec<Value> {
    match member(props, key) {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    }
}

fn all_tags(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
) -> Result<Vec<(String, String)>, ProviderError> {
    Ok([tags(ctx, props)?, system_tags(ctx)].concat())
}

/// Replaces a resource's user tags (system tags stay) with what the template now says.
fn retag(
    ecs: &EcsService,
    ctx: &ProviderContext,
    arn: &str,
    props: &Map<String, Value>,
) -> Answer<()> {
    let wanted = tags(ctx, props)?;
    let live = ecs.list_tags(&ctx.region, arn)?;
    let stale: Vec<String> = live
        .iter()
        .filter(|(k, _)| !k.starts_with("aws:") && !wanted.iter().any(|(w, _)| w == k))
        .map(|(k, _)| k.clone())
        .collect();
    if !stale.is_empty() {
        ecs.untag_resource(&ctx.region, arn, &stale)?;
    }
    if !wanted.is_empty() {
        ecs.tag_resource(&ctx.region, arn, wanted)?;
    }
    Ok(())
}

struct Cluster {
    ecs: Arc<EcsService>,
}

#[async_trait::async_trait]
impl Declared for Cluster {
    const ATTRIBUTES: &'static [&'static str] = &["Arn"];
    const TYPE: &'static str = "AWS::ECS::Cluster";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "CapacityProviders",
        "ClusterName",
        "ClusterSettings",
        "Configuration",
        "DefaultCapacityProviderStrategy",
        "ServiceConnectDefaults",
        "Tags",
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = given_or_generated_name(ctx, props, "ClusterName", 255)?;
        if self
            .ecs
            .describe_clusters(&ctx.region, std::slice::from_ref(&name), false)["clusters"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["status"] == "ACTIVE"))
        {
            return Err(already_exists(ctx, &name).into());
        }
        let input = CreateClusterInput {
            name: Some(name.clone()),
            capacity_providers: string_list(props, "CapacityProviders"),
            default_strategy: members(props, "DefaultCapacityProviderStrategy"),
            settings: members(props, "ClusterSettings"),
            configuration: member(props, "Configuration"),
            service_connect_defaults: member(props, "ServiceConnectDefaults"),
            tags: all_tags(ctx, props)?,
        };
        let c = self.ecs.create_cluster(&ctx.region, input)?;
        Ok(Made::new(name).with("Arn", c["clusterArn"].clone()))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let changed = changed_keys(old, new);
        let region = &ctx.region;
        if changed.iter().any(|k| {
            k == "ClusterSettings" || k == "Configuration" || k == "ServiceConnectDefaults"
        }) {
            self.ecs.update_cluster(
                region,
                id,
                Some(members(new, "ClusterSettings")),
                member(new, "Configuration"),
                member(new, "ServiceConnectDefaults"),
            )?;
        }
        if changed
            .iter()
            .any(|k| k == "CapacityProviders" || k == "DefaultCapacityProviderStrategy")
        {
            self.ecs.put_cluster_capacity_providers(
                region,
                id,
                string_list(new, "CapacityProviders"),
                members(new, "DefaultCapacityProviderStrategy"),
            )?;
        }
        let arn = self.ecs.cluster_arn(region, id);
        retag(&self.ecs, ctx, &arn, new)?;
        Ok(Made::new(id).with("Arn", arn))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        self.ecs.delete_cluster(&ctx.region, id)?;
        Ok(())
    }

    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        given_or_generated_name(ctx, props, "ClusterName", 255).ok()
    }
}

fn string_list(props: &Map<String, Value>, key: &str) -> Vec<String> {
    props
        .get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

struct TaskDefinition {
    ecs: Arc<EcsService>,
}

const TASK_DEFINITION_PROPERTIES: &[&str] = &[
    "ContainerDefinitions",
    "Cpu",
    "EnableFaultInjection",
    "EphemeralStorage",
    "ExecutionRoleArn",
    "Family",
    "InferenceAccelerators",
    "IpcMode",
    "Memory",
    "NetworkMode",
    "PidMode",
    "PlacementConstraints",
    "ProxyConfiguration",
    "RequiresCompatibilities",
    "RuntimePlatform",
    "Tags",
    "TaskRoleArn",
    "Volumes",
];

#[async_trait::async_trait]
impl Declared for TaskDefinition {
    const ATTRIBUTES: &'static [&'static str] = &["TaskDefinitionArn"];
    const TYPE: &'static str = "AWS::ECS::TaskDefinition";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = TASK_DEFINITION_PROPERTIES;
    const NOT_FOUND: &'static [&'static str] = &["ClientException"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let family = given_or_generated_name(ctx, props, "Family", 255)?;
        let mut body = Map::new();
        for key in TASK_DEFINITION_PROPERTIES.iter().filter(|k| **k != "Tags") {
            if let Some(v) = member(props, key) {
                body.insert(api_name(key), v);
            }
        }
        body.insert("family".into(), json!(family));
        let out = self
            .ecs
            .register_task_definition(&ctx.region, body, all_tags(ctx, props)?)?;
        let arn = out["taskDefinition"]["taskDefinitionArn"].clone();
        let id = arn.as_str().unwrap_or_default().to_string();
        Ok(Made::new(id).with("TaskDefinitionArn", arn))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        if let Some(key) = changed_keys(old, new).into_iter().find(|k| k != "Tags") {
            return Err(crate::providers::unsupported_prop(
                Self::TYPE,
                &key,
                "a task definition revision cannot change; the engine replaces it",
            )
            .into());
        }
        retag(&self.ecs, ctx, id, new)?;
        Ok(Made::new(id).with("TaskDefinitionArn", id))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        match self.ecs.deregister_task_definition(&ctx.region, id) {
            Ok(_) => Ok(()),
            Err(e) if e.code == "ClientException" => {
                Err(ProviderError::NotFound(id.to_string()).into())
            }
            Err(e) => Err(e.into()),
        }
    }
}

struct EcsServiceType {
    ecs: Arc<EcsService>,
}

/// Template members kept as the service's configuration (the API's names after `api`).
const SERVICE_CONFIG: &[&str] = &[
    "AvailabilityZoneRebalancing",
    "DeploymentConfiguration",
    "DeploymentController",
    "EnableECSManagedTags",
    "EnableExecuteCommand",
    "HealthCheckGracePeriodSeconds",
    "LoadBalancers",
    "NetworkConfiguration",
    "PlacementConstraints",
    "PlacementStrategies",
    "PropagateTags",
    "Role",
    "SchedulingStrategy",
    "ServiceConnectConfiguration",
    "ServiceRegistries",
    "VolumeConfigurations",
    "VpcLatticeConfigurations",
];

impl EcsServiceType {
    fn input(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
        name: String,
    ) -> Result<ServiceInput, ProviderError> {
        let mut config = Map::new();
        for key in SERVICE_CONFIG {
            if let Some(v) = member(props, key) {
                config.insert(api_name(key), v);
            }
        }
        let desired = match scalar(props, "DesiredCount")? {
            Some(d) => Some(d.parse::<i64>().map_err(|_| {
                ProviderError::Failed(format!(
                    "Properties validation failed for resource {} with message: #/DesiredCount: expected type: Integer, found: String",
                    ctx.logical_id
                ))
            })?),
            None => None,
        };
        let strategy = members(props, "CapacityProviderStrategy");
        Ok(ServiceInput {
            cluster: scalar(props, "Cluster")?,
            name,
            task_definition: scalar(props, "TaskDefinition")?,
            desired,
            launch_type: scalar(props, "LaunchType")?,
            capacity_provider_strategy: (!strategy.is_empty()).then_some(strategy),
            platform_version: scalar(props, "PlatformVersion")?,
            config,
            force_new_deployment: props
                .get("ForceNewDeployment")
                .and_then(|f| f.get("EnableForceNewDeployment"))
                .is_some_and(|v| v == &json!(true) || v == &json!("true")),
            tags: [tags(ctx, props)?, system_tags(ctx)].concat(),
        })
    }

    /// Waits as CloudFormation does for the service to be stable; fails with the service's
    /// latest event when it cannot place its tasks.
    async fn stabilize(&self, region: &str, cluster: &str, name: &str) -> Answer<()> {
        let deadline = tokio::time::Instant::now() + STABILIZE;
        loop {
            if self.ecs.service_stable(region, cluster, name) == Some(true) {
                return Ok(());
            }
            let described =
                self.ecs
                    .describe_services(region, Some(cluster), &[name.to_string()], false)?;
            let latest = described["services"][0]["events"][0]["message"]
                .as_str()
                .unwrap_or("")
                .to_string();
            if latest.contains("was unable to place a task")
                || tokio::time::Instant::now() > deadline
            {
                return Err(ProviderError::Failed(format!(
                    "Resource handler returned message: \"Service {name} did not stabilize: {latest}\" (HandlerErrorCode: NotStabilized)"
                ))
                .into());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn made(&self, ctx: &ProviderContext, cluster: &str, name: &str) -> Made {
        let arn = self.ecs.service_arn(&ctx.region, cluster, name);
        Made::new(arn.clone())
            .with("ServiceArn", arn)
            .with("Name", name)
    }
}

/// The cluster and name a service ARN holds (`.../service/CLUSTER/NAME`).
fn service_parts(arn: &str) -> (String, String) {
    let mut parts = arn.rsplit('/');
    let name = parts.next().unwrap_or_default().to_string();
    let cluster = parts.next().unwrap_or("default").to_string();
    (cluster, name)
}

#[async_trait::async_trait]
impl Declared for EcsServiceType {
    const ATTRIBUTES: &'static [&'static str] = &["ServiceArn", "Name"];
    const TYPE: &'static str = "AWS::ECS::Service";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AvailabilityZoneRebalancing",
        "CapacityProviderStrategy",
        "Cluster",
        "DeploymentConfiguration",
        "DeploymentController",
        "DesiredCount",
        "EnableECSManagedTags",
        "EnableExecuteCommand",
        "ForceNewDeployment",
        "HealthCheckGracePeriodSeconds",
        "LaunchType",
        "LoadBalancers",
        "NetworkConfiguration",
        "PlacementConstraints",
        "PlacementStrategies",
        "PlatformVersion",
        "PropagateTags",
        "Role",
        "SchedulingStrategy",
        "ServiceConnectConfiguration",
        "ServiceName",
        "ServiceRegistries",
        "Tags",
        "TaskDefinition",
        "VolumeConfigurations",
        "VpcLatticeConfigurations",
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;
    const LIMITATION: Option<&'static str> = Some(
        "cumulo: no container runs; the service's tasks are records that reach RUNNING (ECS emulation)",
    );

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = given_or_generated_name(ctx, props, "ServiceName", 255)?;
        let mut input = self.input(ctx, props, name.clone())?;
        // CloudFormation starts one task when the template gives no count.
        input.desired.get_or_insert(1);
        let out = match self.ecs.create_service(&ctx.region, input) {
            Err(e) if e.message == "Creation of service was not idempotent." => {
                return Err(already_exists(ctx, &name).into());
            }
            other => other?,
        };
        let arn = out["serviceArn"].as_str().unwrap_or_default();
        let (cluster, name) = service_parts(arn);
        after_create(arn, self.stabilize(&ctx.region, &cluster, &name).await)?;
        Ok(self.made(ctx, &cluster, &name))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let (cluster, name) = service_parts(id);
        let changed = changed_keys(old, new);
        if changed.iter().any(|k| k != "Tags") {
            let mut input = self.input(ctx, new, name.clone())?;
            input.cluster = Some(cluster.clone());
            input.tags = Vec::new();
            self.ecs.update_service(&ctx.region, input)?;
        }
        retag(&self.ecs, ctx, id, new)?;
        self.stabilize(&ctx.region, &cluster, &name).await?;
        Ok(self.made(ctx, &cluster, &name))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        let (cluster, name) = service_parts(id);
        self.ecs
            .delete_service(&ctx.region, Some(&cluster), &name, true)?;
        // CloudFormation waits for the service to be INACTIVE (its tasks stopped).
        let deadline = tokio::time::Instant::now() + STABILIZE;
        while tokio::time::Instant::now() < deadline {
            let d = self
                .ecs
                .describe_services(
                    &ctx.region,
                    Some(&cluster),
                    std::slice::from_ref(&name),
                    false,
                )
                .unwrap_or_default();
            if d["services"][0]["status"] != "DRAINING" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    }

    fn created_identity(
        &self,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Option<String> {
        let name = given_or_generated_name(ctx, props, "ServiceName", 255).ok()?;
        let cluster = scalar(props, "Cluster")
            .ok()
            .flatten()
            .unwrap_or_else(|| "default".into());
        Some(
            self.ecs
                .service_arn(&ctx.region, super::ops::short_name(&cluster), &name),
        )
    }
}

struct CapacityProviderAssociations {
    ecs: Arc<EcsService>,
}

impl CapacityProviderAssociations {
    fn apply(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Result<String, AwsError> {
        let cluster = props
            .get("Cluster")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        self.ecs.put_cluster_capacity_providers(
            &ctx.region,
            &cluster,
            string_list(props, "CapacityProviders"),
            members(props, "DefaultCapacityProviderStrategy"),
        )?;
        Ok(super::ops::short_name(&cluster).to_string())
    }
}

#[async_trait::async_trait]
impl Declared for CapacityProviderAssociations {
    const ATTRIBUTES: &'static [&'static str] = &[];
    const TYPE: &'static str = "AWS::ECS::ClusterCapacityProviderAssociations";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "CapacityProviders",
        "Cluster",
        "DefaultCapacityProviderStrategy",
    ];
    const NOT_FOUND: &'static [&'static str] = &["ClusterNotFoundException"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        Ok(Made::new(self.apply(ctx, props)?))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        _: &str,
        _: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        Ok(Made::new(self.apply(ctx, new)?))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        self.ecs
            .put_cluster_capacity_providers(&ctx.region, id, Vec::new(), Vec::new())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_members_become_api_members() {
        let t = json!({
            "ContainerDefinitions": [{
                "Name": "web", "Cpu": "256", "Essential": "true",
                "PortMappings": [{"ContainerPort": "80", "Protocol": "tcp"}],
                "DockerLabels": {"com.example.Key": "v"},
                "LogConfiguration": {"LogDriver": "awslogs", "Options": {"awslogs-group": "g"}},
            }],
            "Cpu": "256",
            "Volumes": [{"Name": "v", "EFSVolumeConfiguration": {"FilesystemId": "fs-1",
                "AuthorizationConfig": {"IAM": "ENABLED"}}}],
        });
        let a = api(&t, false);
        let c = &a["containerDefinitions"][0];
        assert_eq!(c["cpu"], json!(256));
        assert_eq!(c["essential"], json!(true));
        assert_eq!(c["portMappings"][0]["containerPort"], json!(80));
        assert_eq!(c["dockerLabels"], json!({"com.example.Key": "v"}));
        assert_eq!(
            c["logConfiguration"]["options"],
            json!({"awslogs-group": "g"})
        );
        assert_eq!(a["cpu"], json!("256"));
        let efs = &a["volumes"][0]["efsVolumeConfiguration"];
        assert_eq!(efs["fileSystemId"], json!("fs-1"));
        assert_eq!(efs["authorizationConfig"]["iam"], json!("ENABLED"));
    }

    #[test]
    fn a_service_arn_names_its_cluster_and_service() {
        assert_eq!(
            service_parts("arn:aws:ecs:us-east-1:1:service/web/api"),
            ("web".to_string(), "api".to_string())
        );
    }
}
