//! EFS's typed operations. Inputs are the API's request members (JSON in the API's names, as
//! the wire decodes them and the providers build them); answers are the API's response shapes.
//! Every check runs before anything changes, so a refused call changes nothing.

use super::EfsService;
use super::state::{
    ACCESS_POINT, AccessPoint, FILE_SYSTEM, FileSystem, MOUNT_TARGET, MountTarget, Region, Tags,
};
use crate::ec2::{NetworkInterfaceRequest, Resource};
use crate::providers::system_tags::is_system;
use cumulo_wire::AwsError;
use http::StatusCode;
use serde_json::{Map, Value, json};

/// An EFS error: AWS's status and code, with the `ErrorCode` member its error shapes carry.
pub(crate) fn error(status: u16, code: &str, message: impl Into<String>) -> AwsError {
    AwsError::new(
        StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
        code,
        message,
    )
    .with_extra("ErrorCode", code)
}

pub(crate) fn bad_request(message: impl Into<String>) -> AwsError {
    error(400, "BadRequest", message)
}

fn fs_not_found(id: &str) -> AwsError {
    error(
        404,
        "FileSystemNotFound",
        format!("File system '{id}' does not exist."),
    )
}

fn mt_not_found(id: &str) -> AwsError {
    error(
        404,
        "MountTargetNotFound",
        format!("Mount target '{id}' does not exist."),
    )
}

fn ap_not_found(id: &str) -> AwsError {
    error(
        404,
        "AccessPointNotFound",
        format!("Access point '{id}' does not exist."),
    )
}

/// AWS's framework message for a member outside its pattern.
fn pattern_error(member: &str, value: &str, pattern: &str) -> AwsError {
    error(
        400,
        "ValidationException",
        format!(
            "1 validation error detected: Value '{value}' at '{member}' failed to satisfy constraint: Member must satisfy regular expression pattern: {pattern}"
        ),
    )
}

const FS_PATTERN: &str = "^(arn:aws[-a-z]*:elasticfilesystem:[0-9a-z-:]+:file-system/fs-[0-9a-f]{8,40}|fs-[0-9a-f]{8,40})$";
const AP_PATTERN: &str = "^(arn:aws[-a-z]*:elasticfilesystem:[0-9a-z-:]+:access-point/fsap-[0-9a-f]{8,40}|fsap-[0-9a-f]{8,40})$";
const MT_PATTERN: &str = "^fsmt-[0-9a-f]{8,40}$";

fn is_hex_id(s: &str, prefix: &str) -> bool {
    s.strip_prefix(prefix).is_some_and(|h| {
        (8..=40).contains(&h.len())
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// The bare id of a file system named by id or ARN.
pub(crate) fn file_system_id(member: &str, v: &str) -> Result<String, AwsError> {
    let bare = v.rsplit_once(":file-system/").map_or(v, |(_, id)| id);
    if is_hex_id(bare, "fs-") && (bare == v || v.starts_with("arn:aws")) {
        Ok(bare.to_string())
    } else {
        Err(pattern_error(member, v, FS_PATTERN))
    }
}

fn access_point_id(member: &str, v: &str) -> Result<String, AwsError> {
    let bare = v.rsplit_once(":access-point/").map_or(v, |(_, id)| id);
    if is_hex_id(bare, "fsap-") && (bare == v || v.starts_with("arn:aws")) {
        Ok(bare.to_string())
    } else {
        Err(pattern_error(member, v, AP_PATTERN))
    }
}

fn mount_target_id(member: &str, v: &str) -> Result<String, AwsError> {
    if is_hex_id(v, "fsmt-") {
        Ok(v.to_string())
    } else {
        Err(pattern_error(member, v, MT_PATTERN))
    }
}

/// A new id in AWS's long format: the prefix and 17 hex digits.
fn new_id(prefix: &str) -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("{prefix}{}", &hex[..17])
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| (d.as_millis() as f64) / 1000.0)
        .unwrap_or(0.0)
}

fn text<'a>(input: &'a Value, key: &str) -> Result<Option<&'a str>, AwsError> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(bad_request(format!("{key} must be a string"))),
    }
}

fn required<'a>(input: &'a Value, key: &str) -> Result<&'a str, AwsError> {
    text(input, key)?.ok_or_else(|| bad_request(format!("{key} is required")))
}

fn one_of(member: &str, v: &str, allowed: &[&str]) -> Result<(), AwsError> {
    if allowed.contains(&v) {
        Ok(())
    } else {
        Err(error(
            400,
            "ValidationException",
            format!(
                "1 validation error detected: Value '{v}' at '{member}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
                allowed.join(", ")
            ),
        ))
    }
}

/// `Tags: [{Key, Value}]` from a user: `aws:` keys are AWS's own.
pub(crate) fn user_tags(input: &Value, key: &str) -> Result<Tags, AwsError> {
    let mut out = Tags::new();
    for t in input
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let k = required(t, "Key")?;
        let v = text(t, "Value")?.unwrap_or_default();
        if k.is_empty() || k.len() > 128 {
            return Err(bad_request(format!(
                "Tag key '{k}' must be between 1 and 128 characters"
            )));
        }
        if is_system(k) {
            return Err(error(
                400,
                "ValidationException",
                format!(
                    "1 validation error detected: Value '{k}' at 'tags.1.member.key' failed to satisfy constraint: Member must satisfy regular expression pattern: ^(?![aA]{{1}}[wW]{{1}}[sS]{{1}}:)([\\p{{L}}\\p{{Z}}\\p{{N}}_.:/=+\\-@]+)$"
                ),
            ));
        }
        out.push((k.to_string(), v.to_string()));
    }
    Ok(out)
}

fn set_tags(tags: &mut Tags, new: Tags) {
    for (k, v) in new {
        match tags.iter_mut().find(|(key, _)| *key == k) {
            Some(t) => t.1 = v,
            None => tags.push((k, v)),
        }
    }
}

fn tags_json(tags: &Tags) -> Value {
    Value::Array(
        tags.iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect(),
    )
}

fn name_of(tags: &Tags) -> Option<&str> {
    tags.iter()
        .find(|(k, _)| k == "Name")
        .map(|(_, v)| v.as_str())
}

/// Pages a sorted list by the id that starts the next page.
fn page<'a, T>(
    items: impl Iterator<Item = (&'a String, T)>,
    marker: Option<&str>,
    max: usize,
) -> (Vec<T>, Option<String>) {
    let mut out = Vec::new();
    let mut next = None;
    for (id, item) in items {
        if marker.is_some_and(|m| id.as_str() < m) {
            continue;
        }
        if out.len() == max {
            next = Some(id.clone());
            break;
        }
        out.push(item);
    }
    (out, next)
}

fn max_items(input: &Value, key: &str, default: usize) -> Result<usize, AwsError> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => match v
            .as_i64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        {
            Some(n) if n >= 1 => Ok(n as usize),
            _ => Err(error(
                400,
                "ValidationException",
                format!(
                    "1 validation error detected: Value '{}' at '{}' failed to satisfy constraint: Member must have value greater than or equal to 1",
                    crate::providers::scalar_value(v).unwrap_or_default(),
                    lower_first(key)
                ),
            )),
        },
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
        .unwrap_or_default()
}

const PERFORMANCE_MODES: &[&str] = &["generalPurpose", "maxIO"];
const THROUGHPUT_MODES: &[&str] = &["bursting", "provisioned", "elastic"];

fn throughput(mode: &str, mibps: Option<f64>) -> Result<Option<f64>, AwsError> {
    one_of("throughputMode", mode, THROUGHPUT_MODES)?;
    match (mode, mibps) {
        ("provisioned", None) => Err(bad_request(
            "ProvisionedThroughputInMibps is required when ThroughputMode is set to provisioned.",
        )),
        ("provisioned", Some(m)) if m < 1.0 => Err(bad_request(
            "ProvisionedThroughputInMibps must be at least 1.",
        )),
        ("provisioned", m) => Ok(m),
        (_, Some(_)) => Err(bad_request(
            "ProvisionedThroughputInMibps can only be set when ThroughputMode is set to provisioned.",
        )),
        _ => Ok(None),
    }
}

fn number(input: &Value, key: &str) -> Result<Option<f64>, AwsError> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .map(Some)
            .ok_or_else(|| bad_request(format!("{key} must be a number"))),
    }
}

fn flag(input: &Value, key: &str) -> Result<Option<bool>, AwsError> {
    match input.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(Some(true)),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(Some(false)),
        Some(_) => Err(bad_request(format!("{key} must be a boolean"))),
    }
}

/// The lifecycle policies of a PutLifecycleConfiguration: each names exactly one transition.
fn lifecycle_policies(input: &Value) -> Result<Vec<Value>, AwsError> {
    let Some(list) = input.get("LifecyclePolicies").and_then(Value::as_array) else {
        return Err(bad_request("LifecyclePolicies is required"));
    };
    if list.len() > 3 {
        return Err(error(
            400,
            "ValidationException",
            "1 validation error detected: Value at 'lifecyclePolicies' failed to satisfy constraint: Member must have length less than or equal to 3",
        ));
    }
    const RULES: &[(&str, &[&str])] = &[
        (
            "TransitionToIA",
            &[
                "AFTER_1_DAY",
                "AFTER_7_DAYS",
                "AFTER_14_DAYS",
                "AFTER_30_DAYS",
                "AFTER_60_DAYS",
                "AFTER_90_DAYS",
                "AFTER_180_DAYS",
                "AFTER_270_DAYS",
                "AFTER_365_DAYS",
            ],
        ),
        ("TransitionToPrimaryStorageClass", &["AFTER_1_ACCESS"]),
        (
            "TransitionToArchive",
            &[
                "AFTER_1_DAY",
                "AFTER_7_DAYS",
                "AFTER_14_DAYS",
                "AFTER_30_DAYS",
                "AFTER_60_DAYS",
                "AFTER_90_DAYS",
                "AFTER_180_DAYS",
                "AFTER_270_DAYS",
                "AFTER_365_DAYS",
            ],
        ),
    ];
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for p in list {
        let obj = p.as_object().cloned().unwrap_or_default();
        let set: Vec<(&String, &Value)> = obj.iter().filter(|(_, v)| !v.is_null()).collect();
        if set.len() != 1 {
            return Err(bad_request(
                "Each lifecycle policy must contain exactly one transition rule.",
            ));
        }
        let (key, v) = set[0];
        let Some((_, allowed)) = RULES.iter().find(|(k, _)| k == key) else {
            return Err(bad_request(format!(
                "Unknown lifecycle policy member {key}"
            )));
        };
        let v = v.as_str().unwrap_or_default();
        one_of(
            &format!(
                "lifecyclePolicies.{}.member.{}",
                out.len() + 1,
                lower_first(key)
            ),
            v,
            allowed,
        )?;
        if seen.contains(key) {
            return Err(bad_request(format!(
                "The lifecycle configuration contains more than one {key} policy."
            )));
        }
        seen.push(key.clone());
        out.push(json!({ key.clone(): v }));
    }
    Ok(out)
}

impl EfsService {
    fn describe_fs(&self, region: &str, f: &FileSystem, mount_targets: usize) -> Value {
        let mut d = json!({
            "OwnerId": self.account_id,
            "CreationToken": f.creation_token,
            "FileSystemId": f.id,
            "FileSystemArn": self.file_system_arn(region, &f.id),
            "CreationTime": f.created_at,
            "LifeCycleState": f.state,
            "NumberOfMountTargets": mount_targets,
            "SizeInBytes": {"Value": 6144, "Timestamp": f.created_at, "ValueInIA": 0, "ValueInStandard": 6144, "ValueInArchive": 0},
            "PerformanceMode": f.performance_mode,
            "Encrypted": f.encrypted,
            "ThroughputMode": f.throughput_mode,
            "Tags": tags_json(&f.tags),
            "FileSystemProtection": {"ReplicationOverwriteProtection": f.replication_overwrite_protection},
        });
        if let Some(n) = name_of(&f.tags) {
            d["Name"] = json!(n);
        }
        if let Some(k) = &f.kms_key_id {
            d["KmsKeyId"] = json!(k);
        }
        if let Some(m) = f.provisioned_mibps {
            d["ProvisionedThroughputInMibps"] = json!(m);
        }
        if let Some((name, id)) = &f.availability_zone {
            d["AvailabilityZoneName"] = json!(name);
            d["AvailabilityZoneId"] = json!(id);
        }
        d
    }

    fn describe_mt(&self, m: &MountTarget) -> Value {
        json!({
            "OwnerId": self.account_id,
            "MountTargetId": m.id,
            "FileSystemId": m.file_system_id,
            "SubnetId": m.subnet_id,
            "LifeCycleState": m.state,
            "IpAddress": m.ip_address,
            "NetworkInterfaceId": m.network_interface_id,
            "AvailabilityZoneId": m.availability_zone_id,
            "AvailabilityZoneName": m.availability_zone,
            "VpcId": m.vpc_id,
        })
    }

    fn describe_ap(&self, region: &str, a: &AccessPoint) -> Value {
        let mut d = json!({
            "ClientToken": a.client_token,
            "Tags": tags_json(&a.tags),
            "AccessPointId": a.id,
            "AccessPointArn": self.access_point_arn(region, &a.id),
            "FileSystemId": a.file_system_id,
            "RootDirectory": a.root_directory,
            "OwnerId": self.account_id,
            "LifeCycleState": "available",
        });
        if let Some(n) = name_of(&a.tags) {
            d["Name"] = json!(n);
        }
        if let Some(p) = &a.posix_user {
            d["PosixUser"] = p.clone();
        }
        d
    }

    fn mount_target_count(r: &Region, fs: &str) -> usize {
        r.mount_targets
            .values()
            .filter(|m| m.file_system_id == fs)
            .count()
    }

    // ----- file systems -----

    /// CreateFileSystem; `system_tags` are CloudFormation's `aws:` tags (never a user's).
    pub fn create_file_system(
        &self,
        region: &str,
        input: &Value,
        system_tags: Tags,
    ) -> Result<Value, AwsError> {
        let token = required(input, "CreationToken")?;
        if token.is_empty() || token.len() > 64 {
            return Err(error(
                400,
                "ValidationException",
                format!(
                    "1 validation error detected: Value '{token}' at 'creationToken' failed to satisfy constraint: Member must have length less than or equal to 64"
                ),
            ));
        }
        let performance = text(input, "PerformanceMode")?.unwrap_or("generalPurpose");
        one_of("performanceMode", performance, PERFORMANCE_MODES)?;
        let mode = text(input, "ThroughputMode")?.unwrap_or("bursting");
        let mibps = throughput(mode, number(input, "ProvisionedThroughputInMibps")?)?;
        if performance == "maxIO" && mode == "elastic" {
            return Err(bad_request(
                "Performance mode maxIO is not supported with throughput mode elastic.",
            ));
        }
        let kms = text(input, "KmsKeyId")?.map(str::to_string);
        let encrypted = flag(input, "Encrypted")?.unwrap_or(false);
        if kms.is_some() && !encrypted {
            return Err(bad_request(
                "KmsKeyId can only be specified when Encrypted is true.",
            ));
        }
        let zone = match text(input, "AvailabilityZoneName")? {
            Some(z) => Some(self.zone(region, z)?),
            None => None,
        };
        // One Zone file systems have automatic backups on unless asked otherwise, as AWS.
        let backup = flag(input, "Backup")?.unwrap_or(zone.is_some());
        let mut tags = user_tags(input, "Tags")?;
        set_tags(&mut tags, system_tags);
        let kms = kms.or_else(|| {
            encrypted.then(|| {
                format!(
                    "arn:aws:kms:{region}:{}:alias/aws/elasticfilesystem",
                    self.account_id
                )
            })
        });
        self.regions.mutate(region, |r| {
            if let Some(f) = r.file_systems.values().find(|f| f.creation_token == token) {
                return Err(error(
                    409,
                    "FileSystemAlreadyExists",
                    format!(
                        "File system '{}' already exists with creation token '{token}'",
                        f.id
                    ),
                )
                .with_extra("FileSystemId", &f.id));
            }
            let f = FileSystem {
                id: new_id("fs-"),
                creation_token: token.to_string(),
                created_at: now(),
                state: "creating".into(),
                performance_mode: performance.to_string(),
                throughput_mode: mode.to_string(),
                provisioned_mibps: mibps,
                encrypted,
                kms_key_id: kms,
                availability_zone: zone,
                backup: if backup { "ENABLED" } else { "DISABLED" }.into(),
                replication_overwrite_protection: "ENABLED".into(),
                policy: None,
                lifecycle: Vec::new(),
                tags,
            };
            r.touch(FILE_SYSTEM, &f.id);
            let out = self.describe_fs(region, &f, 0);
            r.file_systems.insert(f.id.clone(), f);
            Ok(out)
        })
    }

    /// An Availability Zone name of the region and its id, as EC2's subnets (the default
    /// VPC has one in every zone) name them.
    fn zone(&self, region: &str, name: &str) -> Result<(String, String), AwsError> {
        let records = self.ec2.records(region)?;
        records
            .iter()
            .find_map(|res| match res {
                Resource::Subnet(s) if s.availability_zone == name => {
                    Some((s.availability_zone.clone(), s.availability_zone_id.clone()))
                }
                _ => None,
            })
            .ok_or_else(|| {
                error(
                    400,
                    "UnsupportedAvailabilityZone",
                    format!("The requested Availability Zone '{name}' is not supported."),
                )
            })
    }

    /// The VPC's default security group, which a mount target made without groups gets.
    fn default_group(&self, region: &str, vpc: &str) -> Result<Vec<String>, AwsError> {
        Ok(self
            .ec2
            .records(region)?
            .into_iter()
            .filter_map(|res| match res {
                Resource::SecurityGroup(g) if g.vpc_id == vpc && g.name == "default" => Some(g.id),
                _ => None,
            })
            .collect())
    }

    /// DescribeFileSystems. File systems created earlier are available from their first
    /// Describe on (the `file_system_available`-style poll's first answer).
    pub fn describe_file_systems(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let id = text(input, "FileSystemId")?
            .map(|v| file_system_id("fileSystemId", v))
            .transpose()?;
        let token = text(input, "CreationToken")?.map(str::to_string);
        let marker = text(input, "Marker")?.map(str::to_string);
        let max = max_items(input, "MaxItems", 100)?;
        self.regions.mutate(region, |r| {
            if let Some(id) = &id
                && !r.file_systems.contains_key(id)
            {
                return Err(fs_not_found(id));
            }
            let settle: Vec<String> = r
                .file_systems
                .values()
                .filter(|f| f.state == "creating")
                .map(|f| f.id.clone())
                .collect();
            for fid in settle {
                if let Some(f) = r.file_systems.get_mut(&fid) {
                    f.state = "available".into();
                }
                r.touch(FILE_SYSTEM, &fid);
            }
            let r = &*r;
            let (list, next) = page(
                r.file_systems
                    .iter()
                    .filter(|(fid, f)| {
                        id.as_ref().is_none_or(|i| i == *fid)
                            && token.as_ref().is_none_or(|t| *t == f.creation_token)
                    })
                    .map(|(fid, f)| {
                        (
                            fid,
                            self.describe_fs(region, f, Self::mount_target_count(r, fid)),
                        )
                    }),
                marker.as_deref(),
                max,
            );
            let mut out = json!({ "FileSystems": list });
            if let Some(m) = &marker {
                out["Marker"] = json!(m);
            }
            if let Some(n) = next {
                out["NextMarker"] = json!(n);
            }
            Ok(out)
        })
    }

    fn with_fs<T>(
        &self,
        region: &str,
        id: &str,
        f: impl FnOnce(&mut Region, &str) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        let id = file_system_id("fileSystemId", id)?;
        self.regions.mutate(region, |r| {
            if !r.file_systems.contains_key(&id) {
                return Err(fs_not_found(&id));
            }
            f(r, &id)
        })
    }

    fn fs_mut<'a>(r: &'a mut Region, id: &str) -> &'a mut FileSystem {
        r.touch(FILE_SYSTEM, id);
        r.file_systems
            .get_mut(id)
            .expect("checked by with_fs before")
    }

    pub fn update_file_system(
        &self,
        region: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let mode_in = text(input, "ThroughputMode")?.map(str::to_string);
        let mibps_in = number(input, "ProvisionedThroughputInMibps")?;
        self.with_fs(region, id, |r, id| {
            let f = r.file_systems[id].clone();
            if f.state != "available" {
                return Err(incorrect_state(id, &f.state));
            }
            let mode = mode_in.unwrap_or(f.throughput_mode.clone());
            let mibps = match (mode.as_str(), mibps_in) {
                ("provisioned", None) => f.provisioned_mibps,
                (_, m) => m,
            };
            let mibps = throughput(&mode, mibps)?;
            let count = Self::mount_target_count(r, id);
            let f = Self::fs_mut(r, id);
            f.throughput_mode = mode;
            f.provisioned_mibps = mibps;
            let f = f.clone();
            Ok(self.describe_fs(region, &f, count))
        })
    }

    pub fn delete_file_system(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.with_fs(region, id, |r, id| {
            if Self::mount_target_count(r, id) > 0 {
                return Err(error(
                    409,
                    "FileSystemInUse",
                    format!("File system '{id}' has mount targets and cannot be deleted."),
                ));
            }
            let aps: Vec<String> = r
                .access_points
                .values()
                .filter(|a| a.file_system_id == id)
                .map(|a| a.id.clone())
                .collect();
            for ap in aps {
                r.access_points.remove(&ap);
                r.touch(ACCESS_POINT, &ap);
            }
            r.file_systems.remove(id);
            r.touch(FILE_SYSTEM, id);
            Ok(())
        })
    }

    pub fn put_backup_policy(
        &self,
        region: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let status = input
            .pointer("/BackupPolicy/Status")
            .and_then(Value::as_str)
            .ok_or_else(|| bad_request("BackupPolicy.Status is required"))?
            .to_string();
        one_of(
            "backupPolicy.status",
            &status,
            &["ENABLED", "ENABLING", "DISABLED", "DISABLING"],
        )?;
        if status == "ENABLING" || status == "DISABLING" {
            return Err(error(
                400,
                "ValidationException",
                format!("Invalid backup policy status '{status}': set ENABLED or DISABLED."),
            ));
        }
        self.with_fs(region, id, |r, id| {
            Self::fs_mut(r, id).backup = status.clone();
            Ok(json!({"BackupPolicy": {"Status": status}}))
        })
    }

    pub fn describe_backup_policy(&self, region: &str, id: &str) -> Result<Value, AwsError> {
        let id = file_system_id("fileSystemId", id)?;
        self.regions.read(region, |r| {
            let f = r.file_systems.get(&id).ok_or_else(|| fs_not_found(&id))?;
            Ok(json!({"BackupPolicy": {"Status": f.backup}}))
        })
    }

    pub fn update_file_system_protection(
        &self,
        region: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let p = text(input, "ReplicationOverwriteProtection")?.map(str::to_string);
        if let Some(p) = &p {
            one_of(
                "replicationOverwriteProtection",
                p,
                &["ENABLED", "DISABLED"],
            )?;
        }
        self.with_fs(region, id, |r, id| {
            let f = Self::fs_mut(r, id);
            if let Some(p) = p {
                f.replication_overwrite_protection = p;
            }
            Ok(json!({"ReplicationOverwriteProtection": f.replication_overwrite_protection}))
        })
    }

    // ----- policies and lifecycle -----

    pub fn put_file_system_policy(
        &self,
        region: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let policy = required(input, "Policy")?.to_string();
        match serde_json::from_str::<Value>(&policy) {
            Ok(Value::Object(m)) if m.get("Statement").is_some() => {}
            _ => {
                return Err(error(
                    400,
                    "InvalidPolicyException",
                    "Policy contains invalid Json or is missing a Statement.",
                ));
            }
        }
        self.with_fs(region, id, |r, id| {
            Self::fs_mut(r, id).policy = Some(policy.clone());
            Ok(json!({"FileSystemId": id, "Policy": policy}))
        })
    }

    pub fn describe_file_system_policy(&self, region: &str, id: &str) -> Result<Value, AwsError> {
        let id = file_system_id("fileSystemId", id)?;
        self.regions.read(region, |r| {
            let f = r.file_systems.get(&id).ok_or_else(|| fs_not_found(&id))?;
            match &f.policy {
                Some(p) => Ok(json!({"FileSystemId": id, "Policy": p})),
                None => Err(error(
                    404,
                    "PolicyNotFound",
                    format!("No policy found for file system '{id}'"),
                )),
            }
        })
    }

    pub fn delete_file_system_policy(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.with_fs(region, id, |r, id| {
            Self::fs_mut(r, id).policy = None;
            Ok(())
        })
    }

    pub fn put_lifecycle_configuration(
        &self,
        region: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let policies = lifecycle_policies(input)?;
        self.with_fs(region, id, |r, id| {
            Self::fs_mut(r, id).lifecycle = policies.clone();
            Ok(json!({"LifecyclePolicies": policies}))
        })
    }

    pub fn describe_lifecycle_configuration(
        &self,
        region: &str,
        id: &str,
    ) -> Result<Value, AwsError> {
        let id = file_system_id("fileSystemId", id)?;
        self.regions.read(region, |r| {
            let f = r.file_systems.get(&id).ok_or_else(|| fs_not_found(&id))?;
            Ok(json!({"LifecyclePolicies": f.lifecycle}))
        })
    }

    // ----- mount targets -----

    /// Security groups as EFS checks them: at most five, each existing in `vpc`.
    fn check_groups(&self, region: &str, groups: &[String], vpc: &str) -> Result<(), AwsError> {
        if groups.len() > 5 {
            return Err(error(
                400,
                "SecurityGroupLimitExceeded",
                "The number of security groups exceeds the limit of 5.",
            ));
        }
        for g in groups {
            let view = self.ec2.security_group(region, g).map_err(|_| {
                error(
                    400,
                    "SecurityGroupNotFound",
                    format!("Security group '{g}' does not exist."),
                )
            })?;
            if view.vpc_id != vpc {
                return Err(error(
                    400,
                    "SecurityGroupMismatch",
                    format!(
                        "Security group '{g}' does not belong to the VPC '{vpc}' of the mount target's subnet."
                    ),
                ));
            }
        }
        Ok(())
    }

    fn strings(input: &Value, key: &str) -> Result<Vec<String>, AwsError> {
        match input.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| bad_request(format!("{key} must be a list of strings")))
                })
                .collect(),
            Some(_) => Err(bad_request(format!("{key} must be a list of strings"))),
        }
    }

    pub fn create_mount_target(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let fs = file_system_id("fileSystemId", required(input, "FileSystemId")?)?;
        let subnet_id = required(input, "SubnetId")?.to_string();
        if text(input, "IpAddress")?.is_some() || text(input, "Ipv6Address")?.is_some() {
            return Err(bad_request(
                "cumulo: a mount target's address is drawn from its subnet; IpAddress and Ipv6Address cannot be chosen",
            ));
        }
        if let Some(t) = text(input, "IpAddressType")?
            && t != "IPV4_ONLY"
        {
            one_of(
                "ipAddressType",
                t,
                &["IPV4_ONLY", "IPV6_ONLY", "DUAL_STACK"],
            )?;
            return Err(bad_request(format!(
                "cumulo: EC2's subnets have no IPv6 addresses; IpAddressType {t} cannot be served"
            )));
        }
        let mut groups = Self::strings(input, "SecurityGroups")?;
        // Checks before any interface is made.
        self.regions.read(region, |r| -> Result<(), AwsError> {
            let f = r.file_systems.get(&fs).ok_or_else(|| fs_not_found(&fs))?;
            if f.state != "available" {
                return Err(incorrect_state(&fs, &f.state));
            }
            Ok(())
        })?;
        let subnet = self.ec2.subnet(region, &subnet_id).map_err(|_| {
            error(
                400,
                "SubnetNotFound",
                format!("The subnet ID '{subnet_id}' does not exist"),
            )
        })?;
        if groups.is_empty() {
            groups = self.default_group(region, &subnet.vpc_id)?;
        }
        self.check_groups(region, &groups, &subnet.vpc_id)?;
        self.regions.read(region, |r| -> Result<(), AwsError> {
            let f = &r.file_systems[&fs];
            if let Some((zone, _)) = &f.availability_zone
                && *zone != subnet.availability_zone
            {
                return Err(error(
                    400,
                    "AvailabilityZonesMismatch",
                    format!("The subnet's Availability Zone '{}' does not match the file system's Availability Zone '{zone}'.", subnet.availability_zone),
                ));
            }
            for m in r.mount_targets.values().filter(|m| m.file_system_id == fs) {
                if m.vpc_id != subnet.vpc_id {
                    return Err(error(
                        409,
                        "MountTargetConflict",
                        "requested subnet for new mount target is not in the same VPC as existing mount targets",
                    ));
                }
                if m.availability_zone == subnet.availability_zone {
                    return Err(error(409, "MountTargetConflict", "mount target already exists in this AZ"));
                }
            }
            Ok(())
        })?;
        let id = new_id("fsmt-");
        let eni = self
            .ec2
            .create_network_interface(
                region,
                NetworkInterfaceRequest {
                    subnet_id: subnet_id.clone(),
                    security_group_ids: groups.clone(),
                    description: format!("EFS mount target for {fs} ({id})"),
                    interface_type: None,
                    requester_id: Some(self.account_id.clone()),
                },
            )
            .map_err(|e| match e.code.as_str() {
                "InsufficientFreeAddressesInSubnet" => error(
                    409,
                    "NoFreeAddressesInSubnet",
                    format!("The subnet '{subnet_id}' has no free addresses."),
                ),
                _ => bad_request(e.message),
            })?;
        let m = MountTarget {
            id: id.clone(),
            file_system_id: fs.clone(),
            subnet_id,
            vpc_id: subnet.vpc_id,
            availability_zone: subnet.availability_zone,
            availability_zone_id: subnet.availability_zone_id,
            ip_address: eni.private_ip_address,
            network_interface_id: eni.network_interface_id.clone(),
            security_groups: groups,
            state: "creating".into(),
        };
        let out = self.describe_mt(&m);
        let saved = self.regions.mutate(region, |r| {
            // The file system may have gone while the interface was made.
            if !r.file_systems.contains_key(&fs) {
                return Err(fs_not_found(&fs));
            }
            r.touch(MOUNT_TARGET, &id);
            r.mount_targets.insert(id.clone(), m);
            Ok(())
        });
        if let Err(e) = saved {
            let _ = self
                .ec2
                .delete_network_interface(region, &eni.network_interface_id);
            return Err(e);
        }
        Ok(out)
    }

    /// DescribeMountTargets: exactly one of FileSystemId, MountTargetId, AccessPointId.
    /// Mount targets created earlier are available from their first Describe on.
    pub fn describe_mount_targets(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let fs = text(input, "FileSystemId")?
            .map(|v| file_system_id("fileSystemId", v))
            .transpose()?;
        let mt = text(input, "MountTargetId")?
            .map(|v| mount_target_id("mountTargetId", v))
            .transpose()?;
        let ap = text(input, "AccessPointId")?
            .map(|v| access_point_id("accessPointId", v))
            .transpose()?;
        if [fs.is_some(), mt.is_some(), ap.is_some()]
            .iter()
            .filter(|x| **x)
            .count()
            != 1
        {
            return Err(bad_request(
                "Must specify exactly one mutually exclusive parameter.",
            ));
        }
        let marker = text(input, "Marker")?.map(str::to_string);
        let max = max_items(input, "MaxItems", 10)?;
        self.regions.mutate(region, |r| {
            let fs = match (&fs, &ap) {
                (Some(f), _) => {
                    if !r.file_systems.contains_key(f) {
                        return Err(fs_not_found(f));
                    }
                    Some(f.clone())
                }
                (_, Some(a)) => Some(
                    r.access_points
                        .get(a)
                        .ok_or_else(|| ap_not_found(a))?
                        .file_system_id
                        .clone(),
                ),
                _ => None,
            };
            if let Some(m) = &mt
                && !r.mount_targets.contains_key(m)
            {
                return Err(mt_not_found(m));
            }
            let settle: Vec<String> = r
                .mount_targets
                .values()
                .filter(|m| m.state == "creating")
                .map(|m| m.id.clone())
                .collect();
            for id in settle {
                if let Some(m) = r.mount_targets.get_mut(&id) {
                    m.state = "available".into();
                }
                r.touch(MOUNT_TARGET, &id);
            }
            let (list, next) = page(
                r.mount_targets
                    .iter()
                    .filter(|(id, m)| {
                        fs.as_ref().is_none_or(|f| *f == m.file_system_id)
                            && mt.as_ref().is_none_or(|x| x == *id)
                    })
                    .map(|(id, m)| (id, self.describe_mt(m))),
                marker.as_deref(),
                max,
            );
            let mut out = json!({ "MountTargets": list });
            if let Some(m) = &marker {
                out["Marker"] = json!(m);
            }
            if let Some(n) = next {
                out["NextMarker"] = json!(n);
            }
            Ok(out)
        })
    }

    pub fn delete_mount_target(&self, region: &str, id: &str) -> Result<(), AwsError> {
        let id = mount_target_id("mountTargetId", id)?;
        let m = self.regions.mutate(region, |r| {
            let m = r
                .mount_targets
                .remove(&id)
                .ok_or_else(|| mt_not_found(&id))?;
            r.touch(MOUNT_TARGET, &id);
            Ok(m)
        })?;
        // Already gone in EC2 is as good as released.
        let _ = self
            .ec2
            .delete_network_interface(region, &m.network_interface_id);
        Ok(())
    }

    pub fn describe_mount_target_security_groups(
        &self,
        region: &str,
        id: &str,
    ) -> Result<Value, AwsError> {
        let id = mount_target_id("mountTargetId", id)?;
        self.regions.read(region, |r| {
            let m = r.mount_targets.get(&id).ok_or_else(|| mt_not_found(&id))?;
            Ok(json!({"SecurityGroups": m.security_groups}))
        })
    }

    /// ModifyMountTargetSecurityGroups: the mount target's groups as EFS reports them (the
    /// EC2 interface keeps the groups it was made with: EC2's lookups for other services have
    /// no call that changes them).
    pub fn modify_mount_target_security_groups(
        &self,
        region: &str,
        id: &str,
        input: &Value,
    ) -> Result<(), AwsError> {
        let id = mount_target_id("mountTargetId", id)?;
        let groups = Self::strings(input, "SecurityGroups")?;
        let (vpc, state) = self.regions.read(region, |r| {
            r.mount_targets
                .get(&id)
                .map(|m| (m.vpc_id.clone(), m.state.clone()))
                .ok_or_else(|| mt_not_found(&id))
        })?;
        if state != "available" {
            return Err(error(
                409,
                "IncorrectMountTargetState",
                format!("Mount target '{id}' is in state '{state}'; it must be 'available'."),
            ));
        }
        self.check_groups(region, &groups, &vpc)?;
        self.regions.mutate(region, |r| {
            let m = r
                .mount_targets
                .get_mut(&id)
                .ok_or_else(|| mt_not_found(&id))?;
            m.security_groups = groups;
            r.touch(MOUNT_TARGET, &id);
            Ok(())
        })
    }

    // ----- access points -----

    pub fn create_access_point(
        &self,
        region: &str,
        input: &Value,
        system_tags: Tags,
    ) -> Result<Value, AwsError> {
        let token = required(input, "ClientToken")?.to_string();
        let fs = file_system_id("fileSystemId", required(input, "FileSystemId")?)?;
        let posix = match input.get("PosixUser") {
            None | Some(Value::Null) => None,
            Some(p) => Some(posix_user(p)?),
        };
        let root = root_directory(input.get("RootDirectory"))?;
        let mut tags = user_tags(input, "Tags")?;
        set_tags(&mut tags, system_tags);
        self.regions.mutate(region, |r| {
            let f = r.file_systems.get(&fs).ok_or_else(|| fs_not_found(&fs))?;
            if f.state != "available" {
                return Err(incorrect_state(&fs, &f.state));
            }
            if let Some(a) = r.access_points.values().find(|a| a.client_token == token) {
                return Err(error(
                    409,
                    "AccessPointAlreadyExists",
                    format!("Access point already exists with client token '{token}'"),
                )
                .with_extra("AccessPointId", &a.id));
            }
            if r.access_points.values().filter(|a| a.file_system_id == fs).count() >= 10_000 {
                return Err(error(
                    403,
                    "AccessPointLimitExceeded",
                    "You have reached the maximum number of access points (10000) for your file system.",
                ));
            }
            let a = AccessPoint {
                id: new_id("fsap-"),
                file_system_id: fs.clone(),
                client_token: token.clone(),
                posix_user: posix,
                root_directory: root,
                tags,
            };
            r.touch(ACCESS_POINT, &a.id);
            let out = self.describe_ap(region, &a);
            r.access_points.insert(a.id.clone(), a);
            Ok(out)
        })
    }

    pub fn describe_access_points(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let ap = text(input, "AccessPointId")?
            .map(|v| access_point_id("accessPointId", v))
            .transpose()?;
        let fs = text(input, "FileSystemId")?
            .map(|v| file_system_id("fileSystemId", v))
            .transpose()?;
        if ap.is_some() && fs.is_some() {
            return Err(bad_request(
                "Must specify exactly one mutually exclusive parameter.",
            ));
        }
        let marker = text(input, "NextToken")?.map(str::to_string);
        let max = max_items(input, "MaxResults", 100)?;
        self.regions.read(region, |r| {
            if let Some(a) = &ap
                && !r.access_points.contains_key(a)
            {
                return Err(ap_not_found(a));
            }
            if let Some(f) = &fs
                && !r.file_systems.contains_key(f)
            {
                return Err(fs_not_found(f));
            }
            let (list, next) = page(
                r.access_points
                    .iter()
                    .filter(|(id, a)| {
                        ap.as_ref().is_none_or(|x| x == *id)
                            && fs.as_ref().is_none_or(|f| *f == a.file_system_id)
                    })
                    .map(|(id, a)| (id, self.describe_ap(region, a))),
                marker.as_deref(),
                max,
            );
            let mut out = json!({ "AccessPoints": list });
            if let Some(n) = next {
                out["NextToken"] = json!(n);
            }
            Ok(out)
        })
    }

    pub fn delete_access_point(&self, region: &str, id: &str) -> Result<(), AwsError> {
        let id = access_point_id("accessPointId", id)?;
        self.regions.mutate(region, |r| {
            r.access_points
                .remove(&id)
                .ok_or_else(|| ap_not_found(&id))?;
            r.touch(ACCESS_POINT, &id);
            Ok(())
        })
    }

    // ----- tags -----

    /// The tags of a file system or access point named by id or ARN.
    fn with_tags<T>(
        &self,
        region: &str,
        resource: &str,
        f: impl FnOnce(&mut Tags) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        let is_ap = resource.contains("fsap-");
        let id = if is_ap {
            access_point_id("resourceId", resource)?
        } else {
            file_system_id("resourceId", resource)?
        };
        self.regions.mutate(region, |r| {
            if is_ap {
                let a = r
                    .access_points
                    .get_mut(&id)
                    .ok_or_else(|| ap_not_found(&id))?;
                let out = f(&mut a.tags)?;
                r.touch(ACCESS_POINT, &id);
                Ok(out)
            } else {
                let x = r
                    .file_systems
                    .get_mut(&id)
                    .ok_or_else(|| fs_not_found(&id))?;
                let out = f(&mut x.tags)?;
                r.touch(FILE_SYSTEM, &id);
                Ok(out)
            }
        })
    }

    pub fn tag_resource(&self, region: &str, resource: &str, tags: Tags) -> Result<(), AwsError> {
        self.with_tags(region, resource, |t| {
            set_tags(t, tags);
            Ok(())
        })
    }

    /// Removes user tags (a key that starts with `aws:` is AWS's and never removed by a user).
    pub fn untag_resource(
        &self,
        region: &str,
        resource: &str,
        keys: &[String],
    ) -> Result<(), AwsError> {
        if let Some(k) = keys.iter().find(|k| is_system(k)) {
            return Err(error(
                400,
                "ValidationException",
                format!(
                    "1 validation error detected: Value '{k}' at 'tagKeys' failed to satisfy constraint: Member must not start with aws:"
                ),
            ));
        }
        self.with_tags(region, resource, |t| {
            t.retain(|(k, _)| !keys.contains(k));
            Ok(())
        })
    }

    pub fn list_tags_for_resource(&self, region: &str, resource: &str) -> Result<Value, AwsError> {
        let tags = self.with_tags(region, resource, |t| Ok(t.clone()))?;
        Ok(json!({"Tags": tags_json(&tags)}))
    }

    /// The tags of a resource, as providers diff them.
    pub fn tags_of(&self, region: &str, resource: &str) -> Result<Tags, AwsError> {
        self.with_tags(region, resource, |t| Ok(t.clone()))
    }

    /// The legacy DescribeTags (file systems only, Marker paging).
    pub fn describe_tags(&self, region: &str, fs: &str, input: &Value) -> Result<Value, AwsError> {
        let fs = file_system_id("fileSystemId", fs)?;
        let tags = self.tags_of(region, &fs)?;
        let marker = text(input, "Marker")?.map(str::to_string);
        let max = max_items(input, "MaxItems", 100)?;
        let start = marker
            .as_deref()
            .and_then(|m| m.parse::<usize>().ok())
            .unwrap_or(0);
        let slice: Vec<&(String, String)> = tags.iter().skip(start).take(max).collect();
        let mut out = json!({"Tags": slice.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>()});
        if let Some(m) = &marker {
            out["Marker"] = json!(m);
        }
        if start + max < tags.len() {
            out["NextMarker"] = json!((start + max).to_string());
        }
        Ok(out)
    }
}

fn incorrect_state(id: &str, state: &str) -> AwsError {
    error(
        409,
        "IncorrectFileSystemLifeCycleState",
        format!("File system '{id}' is in state '{state}'; it must be 'available'."),
    )
}

fn id_number(v: &Value, member: &str) -> Result<i64, AwsError> {
    let n = v
        .as_i64()
        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
        .ok_or_else(|| bad_request(format!("{member} must be a number")))?;
    if !(0..=4_294_967_295).contains(&n) {
        return Err(error(
            400,
            "ValidationException",
            format!(
                "1 validation error detected: Value '{n}' at '{member}' failed to satisfy constraint: Member must have value less than or equal to 4294967295"
            ),
        ));
    }
    Ok(n)
}

fn posix_user(p: &Value) -> Result<Value, AwsError> {
    let uid = id_number(p.get("Uid").unwrap_or(&Value::Null), "posixUser.uid")?;
    let gid = id_number(p.get("Gid").unwrap_or(&Value::Null), "posixUser.gid")?;
    let mut out = json!({"Uid": uid, "Gid": gid});
    if let Some(s) = p.get("SecondaryGids").and_then(Value::as_array) {
        let gids = s
            .iter()
            .map(|g| id_number(g, "posixUser.secondaryGids"))
            .collect::<Result<Vec<_>, _>>()?;
        if gids.len() > 16 {
            return Err(bad_request(
                "SecondaryGids can contain at most 16 group ids.",
            ));
        }
        out["SecondaryGids"] = json!(gids);
    }
    Ok(out)
}

/// A RootDirectory: Path (default `/`), and CreationInfo with all three members or none.
fn root_directory(v: Option<&Value>) -> Result<Value, AwsError> {
    let empty = Value::Object(Map::new());
    let v = v.filter(|v| !v.is_null()).unwrap_or(&empty);
    let path = v.get("Path").and_then(Value::as_str).unwrap_or("/");
    let valid_path = path == "/"
        || (path.starts_with('/')
            && !path.ends_with('/')
            && path.len() <= 100
            && path.split('/').skip(1).count() <= 4
            && path.split('/').skip(1).all(|seg| {
                !seg.is_empty()
                    && !seg.starts_with('.')
                    && !seg.chars().any(|c| "$#<>;`|&?{}^*\n".contains(c))
            }));
    if !valid_path {
        return Err(pattern_error(
            "rootDirectory.path",
            path,
            "^(\\/|(\\/(?!\\.)+[^$#<>;`|&?{}^*/\\n]+){1,4})$",
        ));
    }
    let mut out = json!({ "Path": path });
    if let Some(ci) = v.get("CreationInfo").filter(|c| !c.is_null()) {
        let uid = id_number(
            ci.get("OwnerUid").unwrap_or(&Value::Null),
            "rootDirectory.creationInfo.ownerUid",
        )?;
        let gid = id_number(
            ci.get("OwnerGid").unwrap_or(&Value::Null),
            "rootDirectory.creationInfo.ownerGid",
        )?;
        let perms = ci
            .get("Permissions")
            .and_then(Value::as_str)
            .ok_or_else(|| bad_request("CreationInfo.Permissions is required"))?;
        if !(3..=4).contains(&perms.len()) || !perms.bytes().all(|b| (b'0'..=b'7').contains(&b)) {
            return Err(pattern_error(
                "rootDirectory.creationInfo.permissions",
                perms,
                "^[0-7]{3,4}$",
            ));
        }
        out["CreationInfo"] = json!({"OwnerUid": uid, "OwnerGid": gid, "Permissions": perms});
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked_against_aws_patterns() {
        assert_eq!(
            file_system_id("f", "fs-0123456789abcdef0").unwrap(),
            "fs-0123456789abcdef0"
        );
        assert_eq!(
            file_system_id(
                "f",
                "arn:aws:elasticfilesystem:us-east-1:000000000000:file-system/fs-01234567"
            )
            .unwrap(),
            "fs-01234567"
        );
        assert_eq!(
            file_system_id("f", "fs-xyz").unwrap_err().code,
            "ValidationException"
        );
        assert!(mount_target_id("m", "fsmt-0123abcd").is_ok());
        assert!(mount_target_id("m", "fsmt-12").is_err());
        assert!(access_point_id("a", "fsap-0123456789abcdef0").is_ok());
        assert_eq!(new_id("fs-").len(), 20);
    }

    #[test]
    fn root_directory_paths_and_creation_info() {
        assert_eq!(root_directory(None).unwrap(), json!({"Path": "/"}));
        assert!(root_directory(Some(&json!({"Path": "/a/b"}))).is_ok());
        for bad in ["a", "/a/", "/.x", "/a/b/c/d/e", "/a*"] {
            assert!(
                root_directory(Some(&json!({"Path": bad}))).is_err(),
                "{bad}"
            );
        }
        let ok = json!({"Path": "/job", "CreationInfo": {"OwnerUid": 4225294584u64, "OwnerGid": "1", "Permissions": "0755"}});
        assert_eq!(
            root_directory(Some(&ok)).unwrap()["CreationInfo"]["OwnerUid"],
            4225294584u64
        );
        let bad = json!({"CreationInfo": {"OwnerUid": 1, "OwnerGid": 1, "Permissions": "0958"}});
        assert!(root_directory(Some(&bad)).is_err());
    }

    #[test]
    fn lifecycle_policies_take_one_rule_each() {
        let ok = json!({"LifecyclePolicies": [{"TransitionToIA": "AFTER_30_DAYS"}, {"TransitionToPrimaryStorageClass": "AFTER_1_ACCESS"}]});
        assert_eq!(lifecycle_policies(&ok).unwrap().len(), 2);
        let two = json!({"LifecyclePolicies": [{"TransitionToIA": "AFTER_30_DAYS", "TransitionToArchive": "AFTER_90_DAYS"}]});
        assert!(lifecycle_policies(&two).is_err());
        let bad = json!({"LifecyclePolicies": [{"TransitionToIA": "AFTER_2_DAYS"}]});
        assert_eq!(
            lifecycle_policies(&bad).unwrap_err().code,
            "ValidationException"
        );
    }

    #[test]
    fn throughput_needs_mibps_only_when_provisioned() {
        assert!(throughput("provisioned", None).is_err());
        assert_eq!(throughput("provisioned", Some(5.0)).unwrap(), Some(5.0));
        assert!(throughput("bursting", Some(5.0)).is_err());
        assert!(throughput("fast", None).is_err());
    }
}
