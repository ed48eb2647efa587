//! The `ec2` protocol for EBS volumes.

use super::Ec2Service;
use super::model::*;
use super::volumes::VolumeRequest;
use super::wire::{Answer, Params, describe, ok, tag_set};
use cumulo_wire::AwsError;
use cumulo_wire::xml::XmlWriter;

pub(super) fn dispatch(svc: &Ec2Service, region: &str, p: &Params, action: &str) -> Option<Answer> {
    Some(match action {
        "CreateVolume" => (|| {
            let v = svc.create_volume(
                region,
                VolumeRequest {
                    availability_zone: p
                        .get("AvailabilityZone")
                        .map(str::to_string)
                        .or_else(|| {
                            p.get("AvailabilityZoneId")
                                .and_then(|id| super::zones::zone_name(region, id))
                        })
                        .unwrap_or_default(),
                    size: p.int("Size")?,
                    volume_type: p.get("VolumeType").map(str::to_string),
                    iops: p.int("Iops")?,
                    throughput: p.int("Throughput")?,
                    encrypted: p.flag("Encrypted").unwrap_or(false),
                    kms_key_id: p.get("KmsKeyId").map(str::to_string),
                    snapshot_id: p.get("SnapshotId").map(str::to_string),
                    multi_attach: p.flag("MultiAttachEnabled").unwrap_or(false),
                    auto_enable_io: false,
                    tags: p.tag_specs(),
                },
            )?;
            let mut w = XmlWriter::new_fragment();
            volume(&mut w, region, &v);
            Ok(w.finish())
        })(),
        "DescribeVolumes" => (|| {
            svc.settle_volumes(region)?;
            describe(
                svc,
                region,
                p,
                "VolumeId",
                "vol",
                "volumeSet",
                |res, w, region| match res {
                    Resource::Volume(v) => {
                        volume(w, region, v);
                        true
                    }
                    _ => false,
                },
            )
        })(),
        "DeleteVolume" => (|| ok(svc.delete_volume(region, p.required("VolumeId")?)))(),
        "AttachVolume" => (|| {
            let volume_id = p.required("VolumeId")?;
            let a = svc.attach_volume(
                region,
                volume_id,
                p.required("InstanceId")?,
                p.required("Device")?,
            )?;
            let mut w = XmlWriter::new_fragment();
            attachment(&mut w, volume_id, &a, "attaching");
            Ok(w.finish())
        })(),
        "DetachVolume" => (|| {
            let volume_id = p.required("VolumeId")?;
            let a = svc.detach_volume(region, volume_id, p.get("InstanceId"))?;
            let mut w = XmlWriter::new_fragment();
            attachment(&mut w, volume_id, &a, "detaching");
            Ok(w.finish())
        })(),
        "ModifyVolume" => (|| {
            let v = svc.modify_volume(
                region,
                p.required("VolumeId")?,
                p.int("Size")?,
                p.get("VolumeType").map(str::to_string),
                p.int("Iops")?,
                p.int("Throughput")?,
            )?;
            let mut w = XmlWriter::new_fragment();
            w.open("volumeModification", None)
                .elem("volumeId", &v.id)
                .elem("modificationState", "completed")
                .elem("targetSize", &v.size.to_string())
                .elem("targetVolumeType", &v.volume_type)
                .opt("targetIops", v.iops.map(|i| i.to_string()).as_deref())
                .opt(
                    "targetThroughput",
                    v.throughput.map(|i| i.to_string()).as_deref(),
                )
                .elem("progress", "100")
                .elem("startTime", &super::ops::now())
                .close();
            Ok(w.finish())
        })(),
        "DescribeVolumeAttribute" => (|| {
            let id = p.required("VolumeId")?;
            let v = svc.volume(region, id)?;
            match p.required("Attribute")? {
                "autoEnableIO" => Ok(format!(
                    "<volumeId>{id}</volumeId><autoEnableIO><value>{}</value></autoEnableIO>",
                    v.auto_enable_io
                )),
                "productCodes" => Ok(format!("<volumeId>{id}</volumeId><productCodes/>")),
                other => Err(super::errors::invalid_value(
                    other,
                    "attribute",
                    "Valid values: autoEnableIO, productCodes",
                )),
            }
        })(),
        "ModifyVolumeAttribute" => (|| {
            let on = p.flag("AutoEnableIO.Value").ok_or_else(|| {
                AwsError::bad_request(
                    "MissingParameter",
                    "The request must contain the parameter AutoEnableIO",
                )
            })?;
            ok(svc.set_volume_auto_enable_io(region, p.required("VolumeId")?, on))
        })(),
        _ => return None,
    })
}

fn attachment(w: &mut XmlWriter, volume_id: &str, a: &VolumeAttachment, status: &str) {
    w.elem("volumeId", volume_id)
        .elem("instanceId", &a.instance_id)
        .elem("device", &a.device)
        .elem("status", status)
        .elem("attachTime", &a.attached)
        .elem("deleteOnTermination", &a.delete_on_termination.to_string());
}

fn volume(w: &mut XmlWriter, region: &str, v: &Volume) {
    w.elem("volumeId", &v.id)
        .elem("size", &v.size.to_string())
        .opt("snapshotId", v.snapshot_id.as_deref())
        .elem("availabilityZone", &v.availability_zone)
        .opt(
            "availabilityZoneId",
            super::zones::zone_id(region, &v.availability_zone).as_deref(),
        )
        .elem("status", v.state())
        .elem("createTime", &v.created)
        .open("attachmentSet", None);
    for a in &v.attachments {
        w.open("item", None);
        attachment(w, &v.id, a, "attached");
        w.close();
    }
    w.close()
        .elem("volumeType", &v.volume_type)
        .opt("iops", v.iops.map(|i| i.to_string()).as_deref())
        .opt("throughput", v.throughput.map(|i| i.to_string()).as_deref())
        .elem("encrypted", &v.encrypted.to_string())
        .opt("kmsKeyId", v.kms_key_id.as_deref())
        .elem("multiAttachEnabled", &v.multi_attach.to_string())
        .elem("fastRestored", "false");
    tag_set(w, &v.tags);
}
