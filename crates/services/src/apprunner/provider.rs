//! CloudFormation providers of App Runner's types, each a [`Declared`] mapping onto the same
//! operations the API runs (the properties are the API's members, but for a few shapes:
//! `RuntimeEnvironmentVariables` as `[{Name, Value}]` lists, and scalars a template may write
//! as strings). Service and VpcIngressConnection wait, as CloudFormation's handlers do, for
//! RUNNING / AVAILABLE after a create or update and for the deletion to complete.

use super::AppRunnerService;
use super::lifecycle::TRANSITION_SECONDS;
use super::state::ConfigKind;
use crate::providers::declared::{self, Answer, Declared, Made, refuse_other_changes};
use crate::providers::{ProviderServices, given_or_generated_name, tags};
use cumulo_engine::{Observed, ProviderContext, ProviderRegistry};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;

const SERVICE: &str = "AppRunner";
const NOT_FOUND: &[&str] = &["ResourceNotFoundException"];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let a = &s.apprunner;
    declared::register(r, ServiceDecl(a.clone()));
    declared::register(r, VpcConnectorDecl(a.clone()));
    declared::register(r, VpcIngressConnectionDecl(a.clone()));
    declared::register(r, AutoScalingDecl(a.clone()));
    declared::register(r, ObservabilityDecl(a.clone()));
}

const INTEGERS: &[&str] = &[
    "Interval",
    "Timeout",
    "HealthyThreshold",
    "UnhealthyThreshold",
    "MaxConcurrency",
    "MinSize",
    "MaxSize",
];
const BOOLEANS: &[&str] = &[
    "AutoDeploymentsEnabled",
    "IsPubliclyAccessible",
    "ObservabilityEnabled",
];
const STRINGS: &[&str] = &["Port", "Cpu", "Memory"];
const NAME_VALUE_MAPS: &[&str] = &["RuntimeEnvironmentVariables", "RuntimeEnvironmentSecrets"];

/// A template's property value in the API's shape: `[{Name, Value}]` lists as maps (a null
/// value as empty, as CloudFormation sends it), and scalars written as strings (or numbers)
/// as the type the API takes.
fn to_api(key: &str, v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k.clone(), to_api(k, v)))
                .collect(),
        ),
        Value::Array(items) if NAME_VALUE_MAPS.contains(&key) => Value::Object(
            items
                .iter()
                .filter_map(|i| {
                    let name = i.get("Name")?.as_str()?.to_string();
                    let value = match i.get("Value") {
                        Some(Value::String(s)) => s.clone(),
                        Some(Value::Null) | None => String::new(),
                        Some(other) => other.to_string(),
                    };
                    Some((name, Value::String(value)))
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|i| to_api(key, i)).collect()),
        Value::String(s) if INTEGERS.contains(&key) => s
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or_else(|_| v.clone()),
        Value::String(s) if BOOLEANS.contains(&key) => match s.as_str() {
            "true" => json!(true),
            "false" => json!(false),
            _ => v.clone(),
        },
        Value::Number(n) if STRINGS.contains(&key) => json!(n.to_string()),
        other => other.clone(),
    }
}

/// The properties listed, in the API's shape, plus the resource's tags.
fn input(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
    keys: &[&str],
    with_tags: bool,
) -> Answer<Map<String, Value>> {
    let mut m = Map::new();
    for k in keys {
        if let Some(v) = props.get(*k).filter(|v| !v.is_null()) {
            m.insert(k.to_string(), to_api(k, v));
        }
    }
    if with_tags {
        let t: Vec<Value> = tags(ctx, props)?
            .into_iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect();
        m.insert("Tags".into(), Value::Array(t));
    }
    Ok(m)
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// Makes a resource's tags the template's (its Tags, then the stack's): a stack-tag change is
/// an update of every taggable resource, even of a type whose Tags property is createOnly.
fn sync_tags(
    svc: &AppRunnerService,
    ctx: &ProviderContext,
    arn: &str,
    props: &Map<String, Value>,
) -> Answer<()> {
    let want = tags(ctx, props)?;
    let have = svc.list_tags_for_resource(&ctx.region, &json!({"ResourceArn": arn}))?;
    let stale: Vec<String> = have["Tags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["Key"].as_str())
        .filter(|k| !want.iter().any(|(w, _)| w == k))
        .map(str::to_string)
        .collect();
    if !stale.is_empty() {
        svc.untag_resource(&ctx.region, &json!({"ResourceArn": arn, "TagKeys": stale}))?;
    }
    if !want.is_empty() {
        let t: Vec<Value> = want
            .iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect();
        svc.tag_resource(&ctx.region, &json!({"ResourceArn": arn, "Tags": t}))?;
    }
    Ok(())
}

/// The update of a type whose every property is createOnly (the engine replaces it when one
/// changes): only the stack's tags can differ.
fn retag<T: Declared>(
    decl: &T,
    svc: &AppRunnerService,
    ctx: &ProviderContext,
    id: &str,
    old: &Map<String, Value>,
    new: &Map<String, Value>,
) -> Answer<Made> {
    refuse_other_changes(T::TYPE, old, new, &[])?;
    sync_tags(svc, ctx, id, new)?;
    match decl.read(ctx, id, new)? {
        Some(o) => Ok(Made {
            id: id.to_string(),
            attributes: o.attributes,
        }),
        None => Err(AwsError::bad_request("ResourceNotFoundException", id).into()),
    }
}

/// An observation of the members named (template and API share these names).
fn observed(source: &Value, keys: &[&str], attributes: Made) -> Observed {
    Observed {
        properties: keys
            .iter()
            .filter_map(|k| source.get(*k).map(|v| (k.to_string(), v.clone())))
            .collect(),
        attributes: attributes.attributes,
    }
}

/// Polls `status` until it answers one of `want` (or `None`, gone, when `want` is empty), for
/// at most fifty transitions: what CloudFormation's handlers wait for (the whole stack should
/// settle within the engine's sync wait, so the CLI's first poll sees it done).
async fn wait_for(
    mut status: impl FnMut() -> Result<Option<String>, AwsError>,
    want: &[&str],
) -> Answer<Option<String>> {
    let deadline = std::time::Instant::now() + Duration::from_secs_f64(50.0 * TRANSITION_SECONDS);
    loop {
        let now = status()?;
        let done = match &now {
            Some(s) => want.contains(&s.as_str()),
            None => want.is_empty(),
        };
        if done || std::time::Instant::now() > deadline {
            return Ok(now);
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

struct ServiceDecl(Arc<AppRunnerService>);

const SERVICE_MUTABLE: &[&str] = &[
    "SourceConfiguration",
    "InstanceConfiguration",
    "HealthCheckConfiguration",
    "NetworkConfiguration",
    "ObservabilityConfiguration",
    "AutoScalingConfigurationArn",
];

impl ServiceDecl {
    /// Waits for RUNNING and answers the resource's attributes.
    async fn settled(&self, ctx: &ProviderContext, arn: &str) -> Answer<Made> {
        let region = ctx.region.clone();
        let describe = || {
            self.0
                .describe_service(&region, &json!({"ServiceArn": arn}))
                .map(|v| v["Service"].clone())
        };
        let status = wait_for(
            || describe().map(|s| Some(text(&s["Status"]))),
            &["RUNNING", "CREATE_FAILED"],
        )
        .await?;
        let s = describe()?;
        if status.as_deref() != Some("RUNNING") {
            return Err(AwsError::internal(format!(
                "cumulo: service {arn} did not reach RUNNING: {}",
                status.unwrap_or_default()
            ))
            .into());
        }
        Ok(Made::new(arn)
            .with("ServiceArn", arn)
            .with("ServiceId", s["ServiceId"].clone())
            .with("ServiceUrl", s["ServiceUrl"].clone())
            .with("Status", s["Status"].clone()))
    }

    /// What an absent mutable property returns to: AWS's default for it.
    fn reset(&self, ctx: &ProviderContext, key: &str) -> Value {
        match key {
            "InstanceConfiguration" => json!({"Cpu": "1024", "Memory": "2048"}),
            "HealthCheckConfiguration" => json!({}),
            "NetworkConfiguration" => json!({
                "EgressConfiguration": {"EgressType": "DEFAULT"},
                "IngressConfiguration": {"IsPubliclyAccessible": true},
                "IpAddressType": "IPV4",
            }),
            "ObservabilityConfiguration" => json!({"ObservabilityEnabled": false}),
            _ => json!(self.0.arn(&ctx.region, super::ops::DEFAULT_AUTO_SCALING)),
        }
    }
}

#[async_trait::async_trait]
impl Declared for ServiceDecl {
    const ATTRIBUTES: &'static [&'static str] =
        &["ServiceArn", "ServiceId", "ServiceUrl", "Status"];
    const TYPE: &'static str = "AWS::AppRunner::Service";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AutoScalingConfigurationArn",
        "EncryptionConfiguration",
        "HealthCheckConfiguration",
        "InstanceConfiguration",
        "NetworkConfiguration",
        "ObservabilityConfiguration",
        "ServiceName",
        "SourceConfiguration",
        "Tags",
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;
    const LIMITATION: Option<&'static str> = Some(
        "cumulo: the App Runner service is a record; no container runs and its ServiceUrl serves nothing",
    );

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let mut m = input(ctx, props, Self::PROPERTIES, true)?;
        m.insert(
            "ServiceName".into(),
            json!(given_or_generated_name(ctx, props, "ServiceName", 40)?),
        );
        let out = self.0.create_service(&ctx.region, &Value::Object(m))?;
        let arn = text(&out["Service"]["ServiceArn"]);
        self.settled(ctx, &arn).await
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, SERVICE_MUTABLE)?;
        let mut m = input(ctx, new, SERVICE_MUTABLE, false)?;
        for k in SERVICE_MUTABLE {
            if !m.contains_key(*k) && old.contains_key(*k) {
                m.insert(k.to_string(), self.reset(ctx, k));
            }
        }
        m.insert("ServiceArn".into(), json!(id));
        self.0.update_service(&ctx.region, &Value::Object(m))?;
        sync_tags(&self.0, ctx, id, new)?;
        self.settled(ctx, id).await
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        let input = json!({"ServiceArn": id});
        // A service still settling from an earlier operation is waited for first.
        wait_for(
            || {
                self.0
                    .describe_service(&ctx.region, &input)
                    .map(|v| Some(text(&v["Service"]["Status"])))
            },
            &["RUNNING", "PAUSED", "CREATE_FAILED"],
        )
        .await?;
        self.0.delete_service(&ctx.region, &input)?;
        let gone = wait_for(
            || match self.0.describe_service(&ctx.region, &input) {
                Ok(v) => Ok(Some(text(&v["Service"]["Status"]))),
                Err(e) if e.code == "ResourceNotFoundException" => Ok(None),
                Err(e) => Err(e),
            },
            &[],
        )
        .await?;
        match gone {
            None => Ok(()),
            Some(s) => Err(AwsError::internal(format!("cumulo: service {id} still {s}")).into()),
        }
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let out = self
            .0
            .describe_service(&ctx.region, &json!({"ServiceArn": id}))?;
        let s = &out["Service"];
        let made = Made::new(id)
            .with("ServiceArn", id)
            .with("ServiceId", s["ServiceId"].clone())
            .with("ServiceUrl", s["ServiceUrl"].clone())
            .with("Status", s["Status"].clone());
        Ok(Some(observed(s, &["ServiceName"], made)))
    }
}

struct VpcConnectorDecl(Arc<AppRunnerService>);

#[async_trait::async_trait]
impl Declared for VpcConnectorDecl {
    const ATTRIBUTES: &'static [&'static str] = &["VpcConnectorArn", "VpcConnectorRevision"];
    const TYPE: &'static str = "AWS::AppRunner::VpcConnector";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] =
        &["SecurityGroups", "Subnets", "Tags", "VpcConnectorName"];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let mut m = input(ctx, props, &["SecurityGroups", "Subnets"], true)?;
        m.insert(
            "VpcConnectorName".into(),
            json!(given_or_generated_name(ctx, props, "VpcConnectorName", 40)?),
        );
        let out = self
            .0
            .create_vpc_connector(&ctx.region, &Value::Object(m))?;
        let c = &out["VpcConnector"];
        let arn = text(&c["VpcConnectorArn"]);
        Ok(Made::new(&arn)
            .with("VpcConnectorArn", arn.as_str())
            .with("VpcConnectorRevision", c["VpcConnectorRevision"].clone()))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        self.0
            .delete_vpc_connector(&ctx.region, &json!({"VpcConnectorArn": id}))?;
        Ok(())
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        retag(self, &self.0, ctx, id, old, new)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let out = self
            .0
            .describe_vpc_connector(&ctx.region, &json!({"VpcConnectorArn": id}))?;
        let c = &out["VpcConnector"];
        if c["Status"] == "INACTIVE" {
            return Ok(None);
        }
        let made = Made::new(id)
            .with("VpcConnectorArn", id)
            .with("VpcConnectorRevision", c["VpcConnectorRevision"].clone());
        let keys = &["VpcConnectorName", "Subnets", "SecurityGroups"];
        Ok(Some(observed(c, keys, made)))
    }
}

struct VpcIngressConnectionDecl(Arc<AppRunnerService>);

impl VpcIngressConnectionDecl {
    async fn settled(&self, ctx: &ProviderContext, arn: &str) -> Answer<Made> {
        let input = json!({"VpcIngressConnectionArn": arn});
        let describe = || {
            self.0
                .describe_vpc_ingress_connection(&ctx.region, &input)
                .map(|v| v["VpcIngressConnection"].clone())
        };
        wait_for(
            || describe().map(|i| Some(text(&i["Status"]))),
            &["AVAILABLE"],
        )
        .await?;
        let i = describe()?;
        Ok(Made::new(arn)
            .with("VpcIngressConnectionArn", arn)
            .with("DomainName", i["DomainName"].clone())
            .with("Status", i["Status"].clone()))
    }
}

#[async_trait::async_trait]
impl Declared for VpcIngressConnectionDecl {
    const ATTRIBUTES: &'static [&'static str] =
        &["VpcIngressConnectionArn", "DomainName", "Status"];
    const TYPE: &'static str = "AWS::AppRunner::VpcIngressConnection";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "IngressVpcConfiguration",
        "ServiceArn",
        "Tags",
        "VpcIngressConnectionName",
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let mut m = input(ctx, props, &["IngressVpcConfiguration", "ServiceArn"], true)?;
        m.insert(
            "VpcIngressConnectionName".into(),
            json!(given_or_generated_name(
                ctx,
                props,
                "VpcIngressConnectionName",
                40
            )?),
        );
        let out = self
            .0
            .create_vpc_ingress_connection(&ctx.region, &Value::Object(m))?;
        let arn = text(&out["VpcIngressConnection"]["VpcIngressConnectionArn"]);
        self.settled(ctx, &arn).await
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["IngressVpcConfiguration"])?;
        let mut m = input(ctx, new, &["IngressVpcConfiguration"], false)?;
        m.insert("VpcIngressConnectionArn".into(), json!(id));
        self.settled(ctx, id).await?;
        self.0
            .update_vpc_ingress_connection(&ctx.region, &Value::Object(m))?;
        sync_tags(&self.0, ctx, id, new)?;
        self.settled(ctx, id).await
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        let input = json!({"VpcIngressConnectionArn": id});
        let status = |s: &AppRunnerService| {
            s.describe_vpc_ingress_connection(&ctx.region, &input)
                .map(|v| text(&v["VpcIngressConnection"]["Status"]))
        };
        if status(&self.0)? == "DELETED" {
            return Err(AwsError::bad_request("ResourceNotFoundException", id).into());
        }
        wait_for(|| status(&self.0).map(Some), &["AVAILABLE"]).await?;
        self.0.delete_vpc_ingress_connection(&ctx.region, &input)?;
        wait_for(|| status(&self.0).map(Some), &["DELETED"]).await?;
        Ok(())
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let out = self.0.describe_vpc_ingress_connection(
            &ctx.region,
            &json!({"VpcIngressConnectionArn": id}),
        )?;
        let i = &out["VpcIngressConnection"];
        if i["Status"] == "DELETED" {
            return Ok(None);
        }
        let made = Made::new(id)
            .with("VpcIngressConnectionArn", id)
            .with("DomainName", i["DomainName"].clone())
            .with("Status", i["Status"].clone());
        let keys = &[
            "VpcIngressConnectionName",
            "ServiceArn",
            "IngressVpcConfiguration",
        ];
        Ok(Some(observed(i, keys, made)))
    }
}

/// What the two revisioned configuration types share: create by name (or a generated one),
/// Ref the ARN, GetAtt the ARN, revision and Latest; delete that revision.
async fn create_config(
    svc: &AppRunnerService,
    ctx: &ProviderContext,
    props: &Map<String, Value>,
    kind: ConfigKind,
    stem: &str,
    keys: &[&str],
) -> Answer<Made> {
    let mut m = input(ctx, props, keys, true)?;
    let name_key = format!("{stem}Name");
    m.insert(
        name_key.clone(),
        json!(given_or_generated_name(ctx, props, &name_key, 32)?),
    );
    let out = svc.create_config(&ctx.region, kind, &Value::Object(m))?;
    let c = &out[stem];
    let arn = text(&c[format!("{stem}Arn")]);
    Ok(Made::new(&arn)
        .with(&format!("{stem}Arn"), arn.as_str())
        .with(
            &format!("{stem}Revision"),
            c[format!("{stem}Revision")].clone(),
        )
        .with("Latest", c["Latest"].clone()))
}

/// A revision, `None` once deleted (INACTIVE).
fn read_config(
    svc: &AppRunnerService,
    ctx: &ProviderContext,
    kind: ConfigKind,
    stem: &str,
    id: &str,
    keys: &[&str],
) -> Answer<Option<Observed>> {
    let out = svc.describe_config(&ctx.region, kind, &json!({ format!("{stem}Arn"): id }))?;
    let c = &out[stem];
    if c["Status"] == "INACTIVE" {
        return Ok(None);
    }
    let made = Made::new(id)
        .with(&format!("{stem}Arn"), id)
        .with(
            &format!("{stem}Revision"),
            c[format!("{stem}Revision")].clone(),
        )
        .with("Latest", c["Latest"].clone());
    Ok(Some(observed(c, keys, made)))
}

async fn delete_config(
    svc: &AppRunnerService,
    ctx: &ProviderContext,
    kind: ConfigKind,
    stem: &str,
    id: &str,
) -> Answer<()> {
    svc.delete_config(&ctx.region, kind, &json!({ format!("{stem}Arn"): id }))?;
    Ok(())
}

struct AutoScalingDecl(Arc<AppRunnerService>);

#[async_trait::async_trait]
impl Declared for AutoScalingDecl {
    const ATTRIBUTES: &'static [&'static str] = &[
        "AutoScalingConfigurationArn",
        "AutoScalingConfigurationRevision",
        "Latest",
    ];
    const TYPE: &'static str = "AWS::AppRunner::AutoScalingConfiguration";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AutoScalingConfigurationName",
        "MaxConcurrency",
        "MaxSize",
        "MinSize",
        "Tags",
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let keys = &["MaxConcurrency", "MaxSize", "MinSize"];
        create_config(
            &self.0,
            ctx,
            props,
            ConfigKind::AutoScaling,
            "AutoScalingConfiguration",
            keys,
        )
        .await
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        delete_config(
            &self.0,
            ctx,
            ConfigKind::AutoScaling,
            "AutoScalingConfiguration",
            id,
        )
        .await
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        retag(self, &self.0, ctx, id, old, new)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let keys = &[
            "AutoScalingConfigurationName",
            "MaxConcurrency",
            "MaxSize",
            "MinSize",
        ];
        read_config(
            &self.0,
            ctx,
            ConfigKind::AutoScaling,
            "AutoScalingConfiguration",
            id,
            keys,
        )
    }
}

struct ObservabilityDecl(Arc<AppRunnerService>);

#[async_trait::async_trait]
impl Declared for ObservabilityDecl {
    const ATTRIBUTES: &'static [&'static str] = &[
        "ObservabilityConfigurationArn",
        "ObservabilityConfigurationRevision",
        "Latest",
    ];
    const TYPE: &'static str = "AWS::AppRunner::ObservabilityConfiguration";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "ObservabilityConfigurationName",
        "Tags",
        "TraceConfiguration",
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let keys = &["TraceConfiguration"];
        create_config(
            &self.0,
            ctx,
            props,
            ConfigKind::Observability,
            "ObservabilityConfiguration",
            keys,
        )
        .await
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        delete_config(
            &self.0,
            ctx,
            ConfigKind::Observability,
            "ObservabilityConfiguration",
            id,
        )
        .await
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        retag(self, &self.0, ctx, id, old, new)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let keys = &["ObservabilityConfigurationName", "TraceConfiguration"];
        read_config(
            &self.0,
            ctx,
            ConfigKind::Observability,
            "ObservabilityConfiguration",
            id,
            keys,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_shapes_become_api_shapes() {
        let v = to_api(
            "SourceConfiguration",
            &json!({"AutoDeploymentsEnabled": "false", "ImageRepository": {"ImageConfiguration": {
                "Port": 80,
                "RuntimeEnvironmentVariables": [{"Name": "A", "Value": "1"}, {"Name": "B", "Value": null}],
            }}, "Gone": null}),
        );
        assert_eq!(
            v,
            json!({"AutoDeploymentsEnabled": false, "ImageRepository": {"ImageConfiguration": {
                "Port": "80", "RuntimeEnvironmentVariables": {"A": "1", "B": ""},
            }}})
        );
        assert_eq!(to_api("Interval", &json!("7")), json!(7));
        assert_eq!(to_api("Cpu", &json!(1024)), json!("1024"));
    }
}
