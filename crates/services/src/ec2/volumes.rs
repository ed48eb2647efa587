//! EBS volumes as records: CreateVolume validates what AWS validates (zone, size per type,
//! IOPS and throughput where the type takes them), a volume is `creating` until its first read
//! and `in-use` while attached. No disk exists: nothing is stored on it.

use super::errors::{invalid_value, missing};
use super::model::*;
use super::ops::now;
use super::{Ec2Service, Region, zones};
use cumulo_wire::AwsError;

/// What CreateVolume asks for.
#[derive(Debug, Clone, Default)]
pub struct VolumeRequest {
    pub availability_zone: String,
    pub size: Option<i64>,
    pub volume_type: Option<String>,
    pub iops: Option<i64>,
    pub throughput: Option<i64>,
    pub encrypted: bool,
    pub kms_key_id: Option<String>,
    pub snapshot_id: Option<String>,
    pub multi_attach: bool,
    pub auto_enable_io: bool,
    pub tags: Tags,
}

/// Each type's size range in GiB.
const SIZES: &[(&str, i64, i64)] = &[
    ("standard", 1, 1024),
    ("gp2", 1, 16384),
    ("gp3", 1, 16384),
    ("io1", 4, 16384),
    ("io2", 4, 65536),
    ("st1", 125, 16384),
    ("sc1", 125, 16384),
];

fn bad(message: String) -> AwsError {
    AwsError::bad_request("InvalidParameterValue", message)
}

/// The request checked, with AWS's defaults filled in (gp2; gp3's 3000 IOPS and 125 MiB/s;
/// gp2's 3 IOPS per GiB, 100 to 16000).
fn checked(region: &str, req: VolumeRequest) -> Result<Volume, AwsError> {
    if req.availability_zone.is_empty() {
        return Err(missing("AvailabilityZone"));
    }
    if zones::zone_id(region, &req.availability_zone).is_none() {
        return Err(bad(format!(
            "Invalid availability zone: [{}]",
            req.availability_zone
        )));
    }
    if let Some(s) = &req.snapshot_id {
        return Err(AwsError::bad_request(
            "InvalidSnapshot.NotFound",
            format!("The snapshot '{s}' does not exist."),
        ));
    }
    let volume_type = req.volume_type.clone().unwrap_or_else(|| "gp2".into());
    let Some(&(_, min, max)) = SIZES.iter().find(|(t, _, _)| *t == volume_type) else {
        return Err(invalid_value(
            &volume_type,
            "volumeType",
            "Valid types: standard, io1, io2, gp2, sc1, st1, gp3",
        ));
    };
    let size = req.size.ok_or_else(|| missing("size/snapshot"))?;
    if size < min {
        return Err(bad(format!(
            "Volume of size {size}GiB is too small; minimum is {min}GiB."
        )));
    }
    if size > max {
        return Err(bad(format!(
            "Volume of {size}GiB is too large for volume type {volume_type}; maximum is {max}GiB"
        )));
    }
    let takes_iops = matches!(volume_type.as_str(), "io1" | "io2" | "gp3");
    let iops = match (req.iops, volume_type.as_str()) {
        (Some(_), _) if !takes_iops => {
            return Err(AwsError::bad_request(
                "InvalidParameterCombination",
                format!("The parameter iops is not supported for {volume_type} volumes."),
            ));
        }
        (None, "io1" | "io2") => {
            return Err(AwsError::bad_request(
                "MissingParameter",
                format!("The parameter iops must be specified for {volume_type} volumes."),
            ));
        }
        (None, "gp3") => Some(3000),
        (None, "gp2") => Some((size * 3).clamp(100, 16000)),
        (i, _) => i,
    };
    let throughput = match (req.throughput, volume_type.as_str()) {
        (Some(_), t) if t != "gp3" => {
            return Err(AwsError::bad_request(
                "InvalidParameterCombination",
                format!("The parameter throughput is not supported for {t} volumes."),
            ));
        }
        (None, "gp3") => Some(125),
        (t, _) => t,
    };
    if req.multi_attach && !matches!(volume_type.as_str(), "io1" | "io2") {
        return Err(AwsError::bad_request(
            "InvalidParameterCombination",
            "Multi-Attach is supported only for io1 and io2 volumes.",
        ));
    }
    Ok(Volume {
        id: new_id("vol"),
        availability_zone: req.availability_zone,
        size,
        volume_type,
        iops,
        throughput,
        encrypted: req.encrypted || req.kms_key_id.is_some(),
        kms_key_id: req.kms_key_id,
        snapshot_id: None,
        multi_attach: req.multi_attach,
        auto_enable_io: req.auto_enable_io,
        created_state: "creating".into(),
        attachments: Vec::new(),
        created: now(),
        tags: req.tags,
    })
}

/// A device name AWS accepts for an EBS attachment (`/dev/sd[a-z]`, `/dev/xvd[a-z]`, with an
/// optional partition letter or number).
fn valid_device(device: &str) -> bool {
    let rest = device
        .strip_prefix("/dev/sd")
        .or_else(|| device.strip_prefix("/dev/xvd"))
        .or_else(|| device.strip_prefix("xvd"));
    rest.is_some_and(|r| {
        let mut chars = r.chars();
        chars.next().is_some_and(|c| c.is_ascii_lowercase())
            && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && r.len() <= 3
    })
}

impl Region {
    /// Volumes created earlier are available from their first read on.
    pub(super) fn settle_volumes(&mut self, touched: &mut Vec<String>) {
        for res in self.items.values_mut() {
            if let Resource::Volume(v) = res
                && v.created_state == "creating"
            {
                v.created_state = "available".into();
                touched.push(v.id.clone());
            }
        }
    }

    /// An instance that terminates leaves its volumes detached.
    pub(super) fn detach_volumes_of(&mut self, instance_id: &str, touched: &mut Vec<String>) {
        for res in self.items.values_mut() {
            if let Resource::Volume(v) = res
                && v.attachments.iter().any(|a| a.instance_id == instance_id)
            {
                v.attachments.retain(|a| a.instance_id != instance_id);
                touched.push(v.id.clone());
            }
        }
    }
}

impl Ec2Service {
    pub fn create_volume(&self, region: &str, req: VolumeRequest) -> Result<Volume, AwsError> {
        let volume = checked(region, req)?;
        self.change(region, |r, touched| {
            r.insert(Resource::Volume(volume.clone()), touched);
            Ok(volume)
        })
    }

    /// One volume, its creation settled.
    pub fn volume(&self, region: &str, id: &str) -> Result<Volume, AwsError> {
        self.change(region, |r, touched| {
            let v = r.volume(id)?.clone();
            r.settle_volumes(touched);
            Ok(r.volume(&v.id)?.clone())
        })
    }

    pub fn settle_volumes(&self, region: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            r.settle_volumes(touched);
            Ok(())
        })
    }

    pub fn delete_volume(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let v = r.volume(id)?;
            if let Some(a) = v.attachments.first() {
                return Err(AwsError::bad_request(
                    "VolumeInUse",
                    format!("Volume {id} is currently attached to {}", a.instance_id),
                ));
            }
            r.remove(id, touched);
            Ok(())
        })
    }

    /// AttachVolume: same zone, a free valid device, the volume available (or Multi-Attach).
    pub fn attach_volume(
        &self,
        region: &str,
        volume_id: &str,
        instance_id: &str,
        device: &str,
    ) -> Result<VolumeAttachment, AwsError> {
        self.change(region, |r, touched| {
            r.settle_instances(touched);
            r.settle_volumes(touched);
            let v = r.volume(volume_id)?.clone();
            let i = r.instance(instance_id)?.clone();
            if !valid_device(device) {
                return Err(invalid_value(
                    device,
                    "device",
                    &format!("{device} is not a valid EBS device name."),
                ));
            }
            if i.state == "terminated" || i.state == "shutting-down" {
                return Err(AwsError::bad_request(
                    "IncorrectState",
                    format!("Instance '{instance_id}' is not 'running' or 'stopped'."),
                ));
            }
            if v.availability_zone != i.availability_zone {
                return Err(AwsError::bad_request(
                    "InvalidVolume.ZoneMismatch",
                    format!("The volume '{volume_id}' is not in the same availability zone as instance '{instance_id}'"),
                ));
            }
            if !v.attachments.is_empty() && !v.multi_attach {
                return Err(AwsError::bad_request(
                    "VolumeInUse",
                    format!("{volume_id} is already attached to an instance"),
                ));
            }
            let taken = r.of(|x| match x {
                Resource::Volume(o) => Some(o),
                _ => None,
            })
            .any(|o| o.attachments.iter().any(|a| a.instance_id == instance_id && a.device == device));
            if taken {
                return Err(bad(format!(
                    "Invalid value '{device}' for unixDevice. Attachment point {device} is already in use"
                )));
            }
            let a = VolumeAttachment {
                instance_id: instance_id.to_string(),
                device: device.to_string(),
                attached: now(),
                delete_on_termination: false,
            };
            r.volume_mut(volume_id)?.attachments.push(a.clone());
            touched.push(volume_id.to_string());
            Ok(a)
        })
    }

    /// DetachVolume: from the instance named, or its only attachment.
    pub fn detach_volume(
        &self,
        region: &str,
        volume_id: &str,
        instance_id: Option<&str>,
    ) -> Result<VolumeAttachment, AwsError> {
        self.change(region, |r, touched| {
            r.settle_volumes(touched);
            let v = r.volume(volume_id)?.clone();
            if v.attachments.is_empty() {
                return Err(AwsError::bad_request(
                    "IncorrectState",
                    format!("Volume '{volume_id}' is in the '{}' state.", v.state()),
                ));
            }
            let a = v
                .attachments
                .iter()
                .find(|a| instance_id.is_none_or(|i| a.instance_id == i))
                .cloned()
                .ok_or_else(|| {
                    AwsError::bad_request(
                        "InvalidAttachment.NotFound",
                        format!(
                            "The volume '{volume_id}' is not attached to instance '{}'.",
                            instance_id.unwrap_or_default()
                        ),
                    )
                })?;
            r.volume_mut(volume_id)?
                .attachments
                .retain(|x| x.instance_id != a.instance_id);
            touched.push(volume_id.to_string());
            Ok(a)
        })
    }

    /// ModifyVolume's effect, at once (AWS's modification completes later): size only grows.
    pub fn modify_volume(
        &self,
        region: &str,
        volume_id: &str,
        size: Option<i64>,
        volume_type: Option<String>,
        iops: Option<i64>,
        throughput: Option<i64>,
    ) -> Result<Volume, AwsError> {
        self.change(region, |r, touched| {
            r.settle_volumes(touched);
            let v = r.volume(volume_id)?.clone();
            if let Some(s) = size
                && s < v.size
            {
                return Err(bad(format!(
                    "New size cannot be smaller than existing size {}.",
                    v.size
                )));
            }
            let keep_rates =
                volume_type.is_none() || volume_type.as_deref() == Some(&v.volume_type);
            let probe = checked(
                region,
                VolumeRequest {
                    availability_zone: v.availability_zone.clone(),
                    size: Some(size.unwrap_or(v.size)),
                    volume_type: Some(volume_type.clone().unwrap_or(v.volume_type.clone())),
                    iops: iops.or(if keep_rates && v.volume_type != "gp2" {
                        v.iops
                    } else {
                        None
                    }),
                    throughput: throughput.or(if keep_rates { v.throughput } else { None }),
                    multi_attach: v.multi_attach,
                    ..Default::default()
                },
            )?;
            let x = r.volume_mut(volume_id)?;
            x.size = probe.size;
            x.volume_type = probe.volume_type;
            x.iops = probe.iops;
            x.throughput = probe.throughput;
            touched.push(volume_id.to_string());
            Ok(x.clone())
        })
    }

    pub fn set_volume_auto_enable_io(
        &self,
        region: &str,
        volume_id: &str,
        on: bool,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            r.volume_mut(volume_id)?.auto_enable_io = on;
            touched.push(volume_id.to_string());
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names() {
        for ok in ["/dev/sdf", "/dev/xvdh", "xvdb", "/dev/sdf1"] {
            assert!(valid_device(ok), "{ok}");
        }
        for bad in ["/dev/hda", "sdf", "/dev/sd", "/dev/sdF", ""] {
            assert!(!valid_device(bad), "{bad}");
        }
    }

    #[test]
    fn defaults_and_limits_per_type() {
        let req = |t: &str, size: i64| VolumeRequest {
            availability_zone: "us-east-1a".into(),
            size: Some(size),
            volume_type: Some(t.into()),
            ..Default::default()
        };
        let v = checked("us-east-1", req("gp3", 10)).unwrap();
        assert_eq!((v.iops, v.throughput), (Some(3000), Some(125)));
        assert_eq!(
            checked("us-east-1", req("gp2", 100)).unwrap().iops,
            Some(300)
        );
        assert_eq!(
            checked("us-east-1", req("st1", 10)).unwrap_err().code,
            "InvalidParameterValue"
        );
        assert_eq!(
            checked("us-east-1", req("io1", 10)).unwrap_err().code,
            "MissingParameter"
        );
        assert_eq!(
            checked("us-east-1", req("gp9", 10)).unwrap_err().code,
            "InvalidParameterValue"
        );
        let far = VolumeRequest {
            availability_zone: "us-east-1z".into(),
            ..req("gp2", 5)
        };
        assert_eq!(
            checked("us-east-1", far).unwrap_err().code,
            "InvalidParameterValue"
        );
    }
}
