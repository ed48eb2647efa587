//! The awsJson1_1 adapter: `secretsmanager.<Operation>` bodies into typed calls, results in AWS's
//! member names (SecretBinary base64, timestamps epoch seconds).

use super::SecretsManagerService;
use super::ops::{CreateSecretInput, ListFilter, SecretValue, SecretValueInput};
use super::password::{self, PasswordOptions};
use super::replication::ReplicaInput;
use super::state::{Replica, Secret};
use crate::kms::json::{Body, Members, b64, epoch};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde_json::{Map, Value, json};

/// Operations that need rotation Lambdas or policy analysis: 501 naming them.
const NOT_EMULATED: &[&str] = &[
    "CancelRotateSecret",
    "RotateSecret",
    "ValidateResourcePolicy",
];

fn replica_inputs(b: &Body<'_>) -> Result<Vec<ReplicaInput>, AwsError> {
    b.objects("AddReplicaRegions")?
        .iter()
        .map(|r| {
            Ok(ReplicaInput {
                region: r.str("Region")?,
                kms_key_id: r.opt_str("KmsKeyId")?,
            })
        })
        .collect()
}

/// ReplicationStatus as AWS reports it (a replica without its own key is reported under the
/// default key's alias).
fn replication_json(replicas: &[Replica]) -> Value {
    Value::Array(
        replicas
            .iter()
            .map(|r| {
                json!({
                    "Region": r.region,
                    "KmsKeyId": r.kms_key_id.as_deref().unwrap_or("alias/aws/secretsmanager"),
                    "Status": r.status,
                    "StatusMessage": r.status_message,
                })
            })
            .collect(),
    )
}

pub fn handle(svc: &SecretsManagerService, req: &AwsRequest) -> AwsResponse {
    crate::kms::json::respond(req, |op, b| dispatch(svc, &req.region, op, b))
}

fn value(b: &Body<'_>) -> Result<Option<SecretValueInput>, AwsError> {
    SecretValueInput::from_pair(b.opt_str("SecretString")?, b.opt_blob("SecretBinary")?)
}

fn filters(b: &Body<'_>) -> Result<Vec<ListFilter>, AwsError> {
    b.objects("Filters")?
        .iter()
        .map(|f| {
            Ok(ListFilter {
                key: f.opt_str("Key")?.unwrap_or_default(),
                values: f.strings("Values")?,
            })
        })
        .collect()
}

fn tags_json(tags: &[(String, String)]) -> Value {
    tags.iter()
        .map(|(k, v)| json!({"Key": k, "Value": v}))
        .collect()
}

pub(crate) fn value_json(v: &SecretValue) -> Value {
    let mut out = json!({
        "ARN": v.arn,
        "Name": v.name,
        "VersionId": v.version_id,
        "VersionStages": v.stages,
        "CreatedDate": epoch(v.created_ms),
    });
    match &v.value {
        SecretValueInput::String(s) => out["SecretString"] = json!(s),
        SecretValueInput::Binary(bytes) => out["SecretBinary"] = json!(b64(bytes)),
    }
    out
}

/// DescribeSecret's members, shared with ListSecrets' entries (which name the version map
/// `SecretVersionsToStages`).
fn secret_json(s: &Secret, versions_member: &str) -> Value {
    let mut m = Map::new();
    m.insert("ARN".into(), json!(s.arn));
    m.insert("Name".into(), json!(s.name));
    if let Some(d) = &s.description {
        m.insert("Description".into(), json!(d));
    }
    if let Some(k) = &s.kms_key_id {
        m.insert("KmsKeyId".into(), json!(k));
    }
    m.insert("RotationEnabled".into(), json!(false));
    m.insert("LastChangedDate".into(), epoch(s.last_changed_ms));
    if let Some(a) = s.last_accessed_ms {
        m.insert("LastAccessedDate".into(), epoch(a));
    }
    if let Some(d) = s.deletion_ms {
        m.insert("DeletedDate".into(), epoch(d));
    }
    if !s.tags.is_empty() {
        m.insert("Tags".into(), tags_json(&s.tags));
    }
    let stages: Map<String, Value> = s
        .versions
        .iter()
        .filter(|v| !v.stages.is_empty())
        .map(|v| (v.id.clone(), json!(v.stages)))
        .collect();
    if !stages.is_empty() {
        m.insert(versions_member.into(), Value::Object(stages));
    }
    m.insert("CreatedDate".into(), epoch(s.created_ms));
    if let Some(p) = &s.primary_region {
        m.insert("PrimaryRegion".into(), json!(p));
    }
    if !s.replicas.is_empty() {
        if let Some(region) = s.arn.split(':').nth(3) {
            m.insert("PrimaryRegion".into(), json!(region));
        }
        m.insert("ReplicationStatus".into(), replication_json(&s.replicas));
    }
    Value::Object(m)
}

fn arn_name(arn: String, name: String) -> Value {
    json!({"ARN": arn, "Name": name})
}

fn dispatch(
    svc: &SecretsManagerService,
    region: &str,
    op: &str,
    b: Body<'_>,
) -> Result<Value, AwsError> {
    let id = || b.str("SecretId");
    match op {
        "CreateSecret" => {
            let input = CreateSecretInput {
                name: b.str("Name")?,
                client_request_token: b.opt_str("ClientRequestToken")?,
                description: b.opt_str("Description")?,
                kms_key_id: b.opt_str("KmsKeyId")?,
                value: value(&b)?,
                tags: b.tags("Tags", "Key", "Value")?,
                replicas: replica_inputs(&b)?,
                force_overwrite_replicas: b.bool("ForceOverwriteReplicaSecret")?,
            };
            let (arn, name, vid) = svc.create_secret(region, input)?;
            let mut out = json!({"ARN": arn, "Name": name});
            if let Some(v) = vid {
                out["VersionId"] = json!(v);
            }
            let replicas = svc.describe_secret(region, &arn)?.replicas;
            if !replicas.is_empty() {
                out["ReplicationStatus"] = replication_json(&replicas);
            }
            Ok(out)
        }
        "ReplicateSecretToRegions" => {
            let (arn, replicas) = svc.replicate_secret_to_regions(
                region,
                &id()?,
                &replica_inputs(&b)?,
                b.bool("ForceOverwriteReplicaSecret")?,
            )?;
            Ok(json!({"ARN": arn, "ReplicationStatus": replication_json(&replicas)}))
        }
        "RemoveRegionsFromReplication" => {
            let (arn, replicas) = svc.remove_regions_from_replication(
                region,
                &id()?,
                &b.strings("RemoveReplicaRegions")?,
            )?;
            Ok(json!({"ARN": arn, "ReplicationStatus": replication_json(&replicas)}))
        }
        "StopReplicationToReplica" => {
            Ok(json!({"ARN": svc.stop_replication_to_replica(region, &id()?)?}))
        }
        "GetSecretValue" => {
            let v = svc.get_secret_value(
                region,
                &id()?,
                b.opt_str("VersionId")?.as_deref(),
                b.opt_str("VersionStage")?.as_deref(),
            )?;
            Ok(value_json(&v))
        }
        "PutSecretValue" => {
            let stages = b
                .has("VersionStages")
                .then(|| b.strings("VersionStages"))
                .transpose()?;
            let (arn, name, vid, stages) = svc.put_secret_value(
                region,
                &id()?,
                b.opt_str("ClientRequestToken")?,
                value(&b)?,
                stages,
            )?;
            Ok(json!({"ARN": arn, "Name": name, "VersionId": vid, "VersionStages": stages}))
        }
        "UpdateSecret" => {
            let (arn, name, vid) = svc.update_secret(
                region,
                &id()?,
                b.opt_str("ClientRequestToken")?,
                b.opt_str("Description")?,
                b.opt_str("KmsKeyId")?,
                value(&b)?,
            )?;
            let mut out = arn_name(arn, name);
            if let Some(v) = vid {
                out["VersionId"] = json!(v);
            }
            Ok(out)
        }
        "DescribeSecret" => Ok(secret_json(
            &svc.describe_secret(region, &id()?)?,
            "VersionIdsToStages",
        )),
        "ListSecrets" => {
            let (page, next) = svc.list_secrets(
                region,
                &filters(&b)?,
                b.opt_i64("MaxResults")?,
                b.opt_str("NextToken")?.as_deref(),
                b.opt_str("SortOrder")?.as_deref(),
                b.opt_str("SortBy")?.as_deref(),
                b.bool("IncludePlannedDeletion")?,
            )?;
            let mut out = json!({
                "SecretList": page.iter().map(|s| secret_json(s, "SecretVersionsToStages")).collect::<Vec<_>>(),
            });
            if let Some(n) = next {
                out["NextToken"] = json!(n);
            }
            Ok(out)
        }
        "UpdateSecretVersionStage" => {
            let (arn, name) = svc.update_secret_version_stage(
                region,
                &id()?,
                &b.str("VersionStage")?,
                b.opt_str("RemoveFromVersionId")?.as_deref(),
                b.opt_str("MoveToVersionId")?.as_deref(),
            )?;
            Ok(arn_name(arn, name))
        }
        "ListSecretVersionIds" => {
            let (s, versions, next) = svc.list_secret_version_ids(
                region,
                &id()?,
                b.opt_i64("MaxResults")?,
                b.opt_str("NextToken")?.as_deref(),
                b.bool("IncludeDeprecated")?,
            )?;
            let list: Vec<Value> = versions
                .iter()
                .map(|v| {
                    let mut e = json!({
                        "VersionId": v.id,
                        "VersionStages": v.stages,
                        "CreatedDate": epoch(v.created_ms),
                        "KmsKeyIds": [v.kms_key_arn],
                    });
                    if let Some(a) = v.last_accessed_ms {
                        e["LastAccessedDate"] = epoch(a);
                    }
                    e
                })
                .collect();
            let mut out = json!({"Versions": list, "ARN": s.arn, "Name": s.name});
            if let Some(n) = next {
                out["NextToken"] = json!(n);
            }
            Ok(out)
        }
        "GetRandomPassword" => {
            let o = PasswordOptions {
                length: b.opt_i64("PasswordLength")?,
                exclude_characters: b.opt_str("ExcludeCharacters")?.unwrap_or_default(),
                exclude_numbers: b.bool("ExcludeNumbers")?,
                exclude_punctuation: b.bool("ExcludePunctuation")?,
                exclude_uppercase: b.bool("ExcludeUppercase")?,
                exclude_lowercase: b.bool("ExcludeLowercase")?,
                include_space: b.bool("IncludeSpace")?,
                require_each_included_type: b.opt_bool("RequireEachIncludedType")?,
            };
            Ok(json!({"RandomPassword": password::generate(&o)?}))
        }
        "TagResource" => {
            svc.tag_resource(region, &id()?, &b.tags("Tags", "Key", "Value")?)?;
            Ok(json!({}))
        }
        "UntagResource" => {
            svc.untag_resource(region, &id()?, &b.strings("TagKeys")?)?;
            Ok(json!({}))
        }
        "PutResourcePolicy" => {
            let (arn, name) = svc.put_resource_policy(region, &id()?, &b.str("ResourcePolicy")?)?;
            Ok(arn_name(arn, name))
        }
        "GetResourcePolicy" => {
            let (arn, name, policy) = svc.get_resource_policy(region, &id()?)?;
            let mut out = arn_name(arn, name);
            if let Some(p) = policy {
                out["ResourcePolicy"] = json!(p);
            }
            Ok(out)
        }
        "DeleteResourcePolicy" => {
            let (arn, name) = svc.delete_resource_policy(region, &id()?)?;
            Ok(arn_name(arn, name))
        }
        "DeleteSecret" => {
            let (arn, name, when) = svc.delete_secret(
                region,
                &id()?,
                b.opt_i64("RecoveryWindowInDays")?,
                b.bool("ForceDeleteWithoutRecovery")?,
            )?;
            let mut out = json!({"Name": name, "DeletionDate": epoch(when)});
            if !arn.is_empty() {
                out["ARN"] = json!(arn);
            }
            Ok(out)
        }
        "RestoreSecret" => {
            let (arn, name) = svc.restore_secret(region, &id()?)?;
            Ok(arn_name(arn, name))
        }
        "BatchGetSecretValue" => {
            let r = svc.batch_get_secret_value(
                region,
                &b.strings("SecretIdList")?,
                &filters(&b)?,
                b.opt_i64("MaxResults")?,
                b.opt_str("NextToken")?.as_deref(),
            )?;
            let mut out = json!({
                "SecretValues": r.values.iter().map(value_json).collect::<Vec<_>>(),
                "Errors": r.errors.iter().map(|(id, code, msg)| json!({"SecretId": id, "ErrorCode": code, "Message": msg})).collect::<Vec<_>>(),
            });
            if let Some(n) = r.next_token {
                out["NextToken"] = json!(n);
            }
            Ok(out)
        }
        op if NOT_EMULATED.contains(&op) => Err(AwsError::not_implemented("secretsmanager", op)),
        "" => Err(AwsError::bad_request(
            "UnknownOperationException",
            "Missing X-Amz-Target",
        )),
        op => Err(AwsError::bad_request(
            "UnknownOperationException",
            format!("Unknown operation {op}"),
        )),
    }
}
