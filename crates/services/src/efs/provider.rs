//! CloudFormation providers of EFS's types, each a [`Declared`] mapping onto EFS's typed
//! operations (the template's properties carry the API's member names, so each maps onto the
//! same JSON input the wire builds). A file system and a mount target are waited for as
//! CloudFormation's handlers wait: until Describe reports them `available`.

use super::EfsService;
use super::state::Tags;
use crate::providers::declared::{
    self, Answer, Declared, Made, after_create, refuse_other_changes,
};
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{ProviderServices, json_text, required, tags};
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SERVICE: &str = "Efs";
const NOT_FOUND: &[&str] = &[
    "FileSystemNotFound",
    "MountTargetNotFound",
    "AccessPointNotFound",
];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    declared::register(r, FileSystemDecl(s.efs.clone()));
    declared::register(r, MountTargetDecl(s.efs.clone()));
    declared::register(r, AccessPointDecl(s.efs.clone()));
}

/// The user and stack tags of a type whose tag property is `key` (`FileSystemTags`).
fn tags_at(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
    key: &str,
) -> Result<Tags, ProviderError> {
    let mut m = Map::new();
    if let Some(t) = props.get(key) {
        m.insert("Tags".into(), t.clone());
    }
    tags(ctx, &m)
}

fn tags_json(t: &Tags) -> Value {
    Value::Array(
        t.iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect(),
    )
}

/// Brings a resource's user tags to what the template and stack want now.
fn retag(
    efs: &EfsService,
    ctx: &ProviderContext,
    id: &str,
    props: &Map<String, Value>,
    key: &str,
) -> Answer<()> {
    let live = efs.tags_of(&ctx.region, id)?;
    let change = TagChange::between(live.iter().map(|(k, v)| (k, v)), &tags_at(ctx, props, key)?);
    if !change.remove.is_empty() {
        efs.untag_resource(&ctx.region, id, &change.remove)?;
    }
    if !change.set.is_empty() {
        efs.tag_resource(&ctx.region, id, change.set)?;
    }
    Ok(())
}

struct FileSystemDecl(Arc<EfsService>);

impl FileSystemDecl {
    fn made(&self, ctx: &ProviderContext, id: &str) -> Made {
        Made::new(id)
            .with("FileSystemId", id)
            .with("Arn", self.0.file_system_arn(&ctx.region, id))
    }

    /// The settings applied after create and on update: backup, protection, policy, lifecycle.
    fn apply(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: Option<&Map<String, Value>>,
        new: &Map<String, Value>,
    ) -> Answer<()> {
        let changed = |k: &str| old.is_none_or(|o| o.get(k) != new.get(k));
        let region = &ctx.region;
        if changed("BackupPolicy") && (old.is_some() || new.contains_key("BackupPolicy")) {
            let status = new
                .get("BackupPolicy")
                .and_then(|b| b.get("Status"))
                .and_then(Value::as_str)
                .unwrap_or("DISABLED");
            self.0
                .put_backup_policy(region, id, &json!({"BackupPolicy": {"Status": status}}))?;
        }
        if changed("FileSystemProtection")
            && (old.is_some() || new.contains_key("FileSystemProtection"))
        {
            let p = new
                .get("FileSystemProtection")
                .and_then(|b| b.get("ReplicationOverwriteProtection"))
                .and_then(Value::as_str)
                .unwrap_or("ENABLED");
            self.0.update_file_system_protection(
                region,
                id,
                &json!({"ReplicationOverwriteProtection": p}),
            )?;
        }
        if changed("FileSystemPolicy") {
            match json_text(new, "FileSystemPolicy")? {
                Some(p) => {
                    self.0
                        .put_file_system_policy(region, id, &json!({"Policy": p}))?;
                }
                None if old.is_some() => self.0.delete_file_system_policy(region, id)?,
                None => {}
            }
        }
        if changed("LifecyclePolicies") && (old.is_some() || new.contains_key("LifecyclePolicies"))
        {
            let list = new.get("LifecyclePolicies").cloned().unwrap_or(json!([]));
            self.0
                .put_lifecycle_configuration(region, id, &json!({"LifecyclePolicies": list}))?;
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Declared for FileSystemDecl {
    const ATTRIBUTES: &'static [&'static str] = &["FileSystemId", "Arn"];
    const TYPE: &'static str = "AWS::EFS::FileSystem";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AvailabilityZoneName",
        "BackupPolicy",
        "BypassPolicyLockoutSafetyCheck",
        "Encrypted",
        "FileSystemPolicy",
        "FileSystemProtection",
        "FileSystemTags",
        "KmsKeyId",
        "LifecyclePolicies",
        "PerformanceMode",
        "ProvisionedThroughputInMibps",
        "ThroughputMode",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "ReplicationConfiguration",
        "cumulo's EFS does not emulate replication",
    )];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;
    const LIMITATION: Option<&'static str> =
        Some("cumulo: the file system is a record; no NFS server serves it");

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let mut input = Map::new();
        input.insert(
            "CreationToken".into(),
            json!(
                format!("{}-{}", ctx.logical_id, uuid::Uuid::new_v4().simple())
                    .chars()
                    .take(64)
                    .collect::<String>()
            ),
        );
        for k in [
            "AvailabilityZoneName",
            "Encrypted",
            "KmsKeyId",
            "PerformanceMode",
            "ProvisionedThroughputInMibps",
            "ThroughputMode",
        ] {
            if let Some(v) = props.get(k) {
                input.insert(k.into(), v.clone());
            }
        }
        input.insert(
            "Tags".into(),
            tags_json(&tags_at(ctx, props, "FileSystemTags")?),
        );
        let d = self
            .0
            .create_file_system(&ctx.region, &Value::Object(input), system_tags(ctx))?;
        let id = d["FileSystemId"].as_str().unwrap_or_default().to_string();
        // The handler waits for `available`: the first Describe is that. The file system
        // exists from here on, so a failure names it for the rollback to delete.
        after_create(
            &id,
            async {
                self.0
                    .describe_file_systems(&ctx.region, &json!({"FileSystemId": id}))?;
                self.apply(ctx, &id, None, props)
            }
            .await,
        )?;
        Ok(self.made(ctx, &id))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(
            Self::TYPE,
            old,
            new,
            &[
                "BackupPolicy",
                "BypassPolicyLockoutSafetyCheck",
                "FileSystemPolicy",
                "FileSystemProtection",
                "FileSystemTags",
                "LifecyclePolicies",
                "ProvisionedThroughputInMibps",
                "ThroughputMode",
            ],
        )?;
        if old.get("ThroughputMode") != new.get("ThroughputMode")
            || old.get("ProvisionedThroughputInMibps") != new.get("ProvisionedThroughputInMibps")
        {
            let mut input = json!({
                "ThroughputMode": new.get("ThroughputMode").cloned().unwrap_or(json!("bursting")),
            });
            if let Some(m) = new.get("ProvisionedThroughputInMibps") {
                input["ProvisionedThroughputInMibps"] = m.clone();
            }
            self.0.update_file_system(&ctx.region, id, &input)?;
        }
        self.apply(ctx, id, Some(old), new)?;
        retag(&self.0, ctx, id, new, "FileSystemTags")?;
        Ok(self.made(ctx, id))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_file_system(&ctx.region, id)?)
    }
}

struct MountTargetDecl(Arc<EfsService>);

#[async_trait::async_trait]
impl Declared for MountTargetDecl {
    const ATTRIBUTES: &'static [&'static str] = &["Id", "IpAddress"];
    const TYPE: &'static str = "AWS::EFS::MountTarget";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "FileSystemId",
        "SecurityGroups",
        "SubnetId",
        "IpAddressType",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "IpAddress",
            "cumulo's EC2 draws a mount target's address from its subnet; it cannot be chosen",
        ),
        ("Ipv6Address", "cumulo's EC2 does not emulate IPv6 subnets"),
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let mut input = json!({
            "FileSystemId": required(props, "FileSystemId")?,
            "SubnetId": required(props, "SubnetId")?,
            "SecurityGroups": props.get("SecurityGroups").cloned().unwrap_or(json!([])),
        });
        if let Some(t) = props.get("IpAddressType") {
            input["IpAddressType"] = t.clone();
        }
        let d = self.0.create_mount_target(&ctx.region, &input)?;
        let id = d["MountTargetId"].as_str().unwrap_or_default().to_string();
        after_create(
            &id,
            self.0
                .describe_mount_targets(&ctx.region, &json!({"MountTargetId": id}))
                .map_err(Into::into),
        )?;
        Ok(Made::new(&id)
            .with("Id", id.as_str())
            .with("IpAddress", d["IpAddress"].clone()))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["SecurityGroups"])?;
        self.0.modify_mount_target_security_groups(
            &ctx.region,
            id,
            &json!({"SecurityGroups": new.get("SecurityGroups").cloned().unwrap_or(json!([]))}),
        )?;
        let d = self
            .0
            .describe_mount_targets(&ctx.region, &json!({"MountTargetId": id}))?;
        Ok(Made::new(id)
            .with("Id", id)
            .with("IpAddress", d["MountTargets"][0]["IpAddress"].clone()))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_mount_target(&ctx.region, id)?)
    }
}

struct AccessPointDecl(Arc<EfsService>);

impl AccessPointDecl {
    fn made(&self, ctx: &ProviderContext, id: &str) -> Made {
        Made::new(id)
            .with("AccessPointId", id)
            .with("Arn", self.0.access_point_arn(&ctx.region, id))
    }
}

#[async_trait::async_trait]
impl Declared for AccessPointDecl {
    const ATTRIBUTES: &'static [&'static str] = &["AccessPointId", "Arn"];
    const TYPE: &'static str = "AWS::EFS::AccessPoint";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AccessPointTags",
        "ClientToken",
        "FileSystemId",
        "PosixUser",
        "RootDirectory",
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let token = match props.get("ClientToken").and_then(Value::as_str) {
            Some(t) => t.to_string(),
            None => format!("{}-{}", ctx.logical_id, uuid::Uuid::new_v4().simple())
                .chars()
                .take(64)
                .collect(),
        };
        let mut input = json!({
            "ClientToken": token,
            "FileSystemId": required(props, "FileSystemId")?,
            "Tags": tags_json(&tags_at(ctx, props, "AccessPointTags")?),
        });
        for k in ["PosixUser", "RootDirectory"] {
            if let Some(v) = props.get(k) {
                input[k] = v.clone();
            }
        }
        let d = self
            .0
            .create_access_point(&ctx.region, &input, system_tags(ctx))?;
        let id = d["AccessPointId"].as_str().unwrap_or_default().to_string();
        Ok(self.made(ctx, &id))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["AccessPointTags"])?;
        retag(&self.0, ctx, id, new, "AccessPointTags")?;
        Ok(self.made(ctx, id))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_access_point(&ctx.region, id)?)
    }
}
