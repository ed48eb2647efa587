//! Cross-Region replication: a replica is a real secret of the same name in another region of
//! the local account (ARN with that region and the primary's suffix), every version re-sealed
//! under the replica's key there. It is made as ReplicateSecretToRegions (or CreateSecret's
//! AddReplicaRegions) is answered, so its status is `InSync` at once, and it is rebuilt from the
//! primary after every change to the primary. A replica refuses changes (AWS's words), and a
//! primary with replicas refuses deletion until they are removed (RemoveRegionsFromReplication)
//! or promoted (StopReplicationToReplica).

use super::SecretsManagerService;
use super::ops::{DEFAULT_KEY, invalid_parameter, marked_for_deletion, not_found, store_error};
use super::sealed;
use super::state::{self, Replica, Secret};
use crate::kms::json::now_ms;
use cumulo_wire::AwsError;

/// One region to replicate to, as AddReplicaRegions gives it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReplicaInput {
    pub region: String,
    pub kms_key_id: Option<String>,
}

/// AWS's answer to a change made on a replica (reported verbatim in public issues, e.g.
/// gruntwork-io/cloud-nuke#435).
pub(super) fn replica_refused() -> AwsError {
    invalid_parameter(
        "Operation not permitted on a replica secret. Call must be made in primary secret's region.",
    )
}

/// AWS's answer to deleting a primary that still has replicas (same source as above).
pub(super) fn has_replicas(s: &Secret) -> AwsError {
    let mut regions: Vec<&str> = s.replicas.iter().map(|r| r.region.as_str()).collect();
    regions.sort_unstable();
    invalid_parameter(format!(
        "You can't delete secret {} that still has replica regions [{}].",
        s.arn,
        regions.join(", ")
    ))
}

/// A region name of AWS's form (`us-east-1`, `us-gov-west-1`).
fn region_like(r: &str) -> bool {
    let parts: Vec<&str> = r.split('-').collect();
    parts.len() >= 3
        && parts[0].len() == 2
        && parts.iter().all(|p| !p.is_empty())
        && parts[..parts.len() - 1]
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_lowercase()))
        && parts[parts.len() - 1].bytes().all(|b| b.is_ascii_digit())
}

/// Refuses a replica region that is the secret's own or no region at all.
pub(super) fn check_regions(region: &str, adds: &[ReplicaInput]) -> Result<(), AwsError> {
    if adds
        .iter()
        .any(|a| a.region == region || !region_like(&a.region))
    {
        // moto's wording, whose replica tests were checked against AWS.
        return Err(invalid_parameter("Invalid replica region."));
    }
    Ok(())
}

impl SecretsManagerService {
    /// The replica of `primary` (in `primary_region`) to be held in `region`.
    fn build_replica(
        &self,
        primary_region: &str,
        primary: &Secret,
        region: &str,
        kms_key_id: Option<&str>,
    ) -> Result<Secret, AwsError> {
        let arn = primary
            .arn
            .replacen(&format!(":{primary_region}:"), &format!(":{region}:"), 1);
        let key = kms_key_id.unwrap_or(DEFAULT_KEY);
        let mut versions = Vec::with_capacity(primary.versions.len());
        for v in &primary.versions {
            let bytes = sealed::open(&self.kms, primary_region, &primary.arn, &v.id, &v.sealed)?;
            let (blob, key_arn) = sealed::seal(&self.kms, region, key, &arn, &v.id, &bytes)?;
            let mut copy = v.clone();
            copy.sealed = blob;
            copy.kms_key_arn = key_arn;
            copy.last_accessed_ms = None;
            versions.push(copy);
        }
        Ok(Secret {
            arn,
            kms_key_id: kms_key_id.map(str::to_string),
            versions,
            last_accessed_ms: None,
            deletion_ms: None,
            primary_region: Some(primary_region.to_string()),
            replicas: Vec::new(),
            ..primary.clone()
        })
    }

    /// ReplicateSecretToRegions (and CreateSecret's AddReplicaRegions): `(arn, replicas)`.
    /// A region already holding a secret of the name fails its replica (`Failed`, the secret
    /// there untouched) unless `force` overwrites it.
    pub fn replicate_secret_to_regions(
        &self,
        region: &str,
        id: &str,
        adds: &[ReplicaInput],
        force: bool,
    ) -> Result<(String, Vec<Replica>), AwsError> {
        check_regions(region, adds)?;
        let mut all = self.lock();
        let secrets = all.entry(region.to_string()).or_default();
        self.purge(region, secrets)?;
        let name = Self::resolve(secrets, id).ok_or_else(not_found)?;
        let mut primary = secrets.get(&name).cloned().ok_or_else(not_found)?;
        if primary.primary_region.is_some() {
            return Err(replica_refused());
        }
        if primary.deletion_ms.is_some() {
            return Err(marked_for_deletion());
        }
        for add in adds {
            let target = all.entry(add.region.clone()).or_default();
            self.purge(&add.region, target)?;
            let ours = |s: &Secret| s.primary_region.as_deref() == Some(region);
            let taken = target.get(&name).is_some_and(|s| !ours(s));
            let key_problem = add
                .kms_key_id
                .as_ref()
                .and_then(|k| self.kms.describe_key(&add.region, k).err().map(|e| (k, e)));
            let (status, message) = if taken && !force {
                // moto's wording for this status, checked against AWS by its authors.
                (
                    "Failed",
                    format!(
                        "Replication failed: Secret name {name} already exists in region {}.",
                        add.region
                    ),
                )
            } else if let Some((k, e)) = key_problem {
                // cumulo's own wording: AWS reports a bad replica key only as a Failed status.
                (
                    "Failed",
                    format!(
                        "Replication failed: KMS key {k} is not usable: {}",
                        e.message
                    ),
                )
            } else {
                let replica =
                    self.build_replica(region, &primary, &add.region, add.kms_key_id.as_deref())?;
                self.store
                    .write(|tx| state::save(tx, &add.region, &replica))
                    .map_err(store_error)?;
                target.insert(name.clone(), replica);
                ("InSync", "Replication succeeded".to_string())
            };
            primary.replicas.retain(|r| r.region != add.region);
            primary.replicas.push(Replica {
                region: add.region.clone(),
                kms_key_id: add.kms_key_id.clone(),
                status: status.to_string(),
                status_message: message,
            });
        }
        primary.last_changed_ms = now_ms();
        self.store
            .write(|tx| state::save(tx, region, &primary))
            .map_err(store_error)?;
        let out = (primary.arn.clone(), primary.replicas.clone());
        all.entry(region.to_string())
            .or_default()
            .insert(name, primary);
        Ok(out)
    }

    /// RemoveRegionsFromReplication: the replicas in `regions` are deleted; `(arn, replicas
    /// left)`. A region the secret is not replicated to changes nothing.
    pub fn remove_regions_from_replication(
        &self,
        region: &str,
        id: &str,
        regions: &[String],
    ) -> Result<(String, Vec<Replica>), AwsError> {
        let mut all = self.lock();
        let secrets = all.entry(region.to_string()).or_default();
        let name = Self::resolve(secrets, id).ok_or_else(not_found)?;
        let mut primary = secrets.get(&name).cloned().ok_or_else(not_found)?;
        if primary.primary_region.is_some() {
            return Err(replica_refused());
        }
        for r in regions {
            if !primary.replicas.iter().any(|x| &x.region == r) {
                continue;
            }
            let ours = all
                .get(r)
                .and_then(|t| t.get(&name))
                .is_some_and(|s| s.primary_region.as_deref() == Some(region));
            if ours {
                self.store
                    .write(|tx| state::delete(tx, r, &name))
                    .map_err(store_error)?;
                if let Some(t) = all.get_mut(r) {
                    t.remove(&name);
                }
            }
            primary.replicas.retain(|x| &x.region != r);
        }
        self.store
            .write(|tx| state::save(tx, region, &primary))
            .map_err(store_error)?;
        let out = (primary.arn.clone(), primary.replicas.clone());
        all.entry(region.to_string())
            .or_default()
            .insert(name, primary);
        Ok(out)
    }

    /// StopReplicationToReplica, called in the replica's region: the replica becomes a
    /// standalone secret and leaves its primary's list. Its ARN.
    pub fn stop_replication_to_replica(&self, region: &str, id: &str) -> Result<String, AwsError> {
        let mut all = self.lock();
        let secrets = all.entry(region.to_string()).or_default();
        let name = Self::resolve(secrets, id).ok_or_else(not_found)?;
        let mut s = secrets.get(&name).cloned().ok_or_else(not_found)?;
        let Some(primary_region) = s.primary_region.take() else {
            // cumulo's own wording: AWS's message for a secret that is no replica is not known.
            return Err(invalid_parameter(format!(
                "Secret {} is not a replica secret.",
                s.arn
            )));
        };
        self.store
            .write(|tx| state::save(tx, region, &s))
            .map_err(store_error)?;
        let arn = s.arn.clone();
        secrets.insert(name.clone(), s);
        if let Some(p) = all.get_mut(&primary_region).and_then(|m| m.get_mut(&name)) {
            let mut updated = p.clone();
            updated.replicas.retain(|r| r.region != region);
            self.store
                .write(|tx| state::save(tx, &primary_region, &updated))
                .map_err(store_error)?;
            *p = updated;
        }
        Ok(arn)
    }

    /// Rebuilds every in-sync replica of the primary `name` (in `region`) from it, after a
    /// change to the primary.
    pub(super) fn sync_replicas(&self, region: &str, name: &str) -> Result<(), AwsError> {
        let mut all = self.lock();
        let Some(primary) = all.get(region).and_then(|m| m.get(name)).cloned() else {
            return Ok(());
        };
        for r in primary.replicas.iter().filter(|r| r.status == "InSync") {
            let replica =
                self.build_replica(region, &primary, &r.region, r.kms_key_id.as_deref())?;
            self.store
                .write(|tx| state::save(tx, &r.region, &replica))
                .map_err(store_error)?;
            all.entry(r.region.clone())
                .or_default()
                .insert(name.to_string(), replica);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::region_like;

    #[test]
    fn region_names_of_aws_form() {
        assert!(region_like("us-west-2"));
        assert!(region_like("us-gov-west-1"));
        assert!(!region_like("nowhere"));
        assert!(!region_like("us-west-x"));
        assert!(!region_like("US-west-2"));
    }
}
