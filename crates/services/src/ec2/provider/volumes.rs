//! AWS::EC2::Volume and AWS::EC2::VolumeAttachment over EC2's volume records.

use super::{SERVICE, TAGGED_NOT_FOUND, boolean, create_tags, int, retag};
use crate::ec2::{Ec2Service, VolumeRequest};
use crate::providers::declared::{self, Answer, Declared, Made, refuse_other_changes};
use crate::providers::{ProviderServices, required, scalar};
use cumulo_engine::{ProviderContext, ProviderRegistry};
use serde_json::{Map, Value};
use std::sync::Arc;

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    declared::register(r, VolumeDecl(s.ec2.clone()));
    declared::register(r, Attachment(s.ec2.clone()));
}

/// AWS::EC2::Volume: Ref and VolumeId are its id; size, type, IOPS, throughput, AutoEnableIO
/// and tags change in place.
struct VolumeDecl(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for VolumeDecl {
    const ATTRIBUTES: &'static [&'static str] = &["VolumeId"];
    const TYPE: &'static str = "AWS::EC2::Volume";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AvailabilityZone",
        "Size",
        "VolumeType",
        "Iops",
        "Throughput",
        "Encrypted",
        "KmsKeyId",
        "SnapshotId",
        "MultiAttachEnabled",
        "AutoEnableIO",
        "Tags",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        ("OutpostArn", "cumulo does not emulate Outposts"),
        ("SourceVolumeId", "cumulo does not copy volumes"),
        ("VolumeInitializationRate", "cumulo's volumes hold no data"),
    ];
    const NOT_FOUND: &'static [&'static str] = &["InvalidVolume.NotFound"];
    const LIMITATION: Option<&'static str> = Some("cumulo: no disk exists; the volume is a record");

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let v = self.0.create_volume(
            &ctx.region,
            VolumeRequest {
                availability_zone: required(props, "AvailabilityZone")?,
                size: int(props, "Size")?,
                volume_type: scalar(props, "VolumeType")?,
                iops: int(props, "Iops")?,
                throughput: int(props, "Throughput")?,
                encrypted: boolean(props, "Encrypted")?.unwrap_or(false),
                kms_key_id: scalar(props, "KmsKeyId")?,
                snapshot_id: scalar(props, "SnapshotId")?,
                multi_attach: boolean(props, "MultiAttachEnabled")?.unwrap_or(false),
                auto_enable_io: boolean(props, "AutoEnableIO")?.unwrap_or(false),
                tags: create_tags(ctx, props)?,
            },
        )?;
        // CloudFormation's handler waits for `available`: reading the volume moves it there.
        self.made(ctx, &v.id)
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
                "Size",
                "VolumeType",
                "Iops",
                "Throughput",
                "AutoEnableIO",
                "Tags",
            ],
        )?;
        let rates = ["Size", "VolumeType", "Iops", "Throughput"];
        if rates.iter().any(|k| old.get(*k) != new.get(*k)) {
            self.0.modify_volume(
                &ctx.region,
                id,
                int(new, "Size")?,
                scalar(new, "VolumeType")?,
                int(new, "Iops")?,
                int(new, "Throughput")?,
            )?;
        }
        let on = boolean(new, "AutoEnableIO")?.unwrap_or(false);
        if on != boolean(old, "AutoEnableIO")?.unwrap_or(false) {
            self.0.set_volume_auto_enable_io(&ctx.region, id, on)?;
        }
        retag(&self.0, ctx, id, new)?;
        self.made(ctx, id)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_volume(&ctx.region, id)?)
    }

    fn made(&self, ctx: &ProviderContext, id: &str) -> Answer<Made> {
        let v = self.0.volume(&ctx.region, id)?;
        Ok(Made::new(v.id.clone()).with("VolumeId", v.id))
    }
}

/// AWS::EC2::VolumeAttachment: its identity is `<volume>|<instance>` (the schema's primary
/// identifier); every property replaces it.
struct Attachment(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for Attachment {
    const ATTRIBUTES: &'static [&'static str] = &[];
    const TYPE: &'static str = "AWS::EC2::VolumeAttachment";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["VolumeId", "InstanceId", "Device"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] =
        &[("EbsCardIndex", "cumulo's instances have one EBS card")];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let volume = required(props, "VolumeId")?;
        let instance = required(props, "InstanceId")?;
        self.0
            .attach_volume(&ctx.region, &volume, &instance, &required(props, "Device")?)?;
        Ok(Made::new(format!("{volume}|{instance}")))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        _: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let instance = required(props, "InstanceId")?;
        match self
            .0
            .detach_volume(&ctx.region, &required(props, "VolumeId")?, Some(&instance))
        {
            // Detached already (its instance terminated): gone is deleted.
            Err(e) if e.code == "IncorrectState" || e.code == "InvalidAttachment.NotFound" => {
                Ok(())
            }
            other => other.map(|_| ()).map_err(Into::into),
        }
    }
}
