//! Bucket operations: create, delete, list, head, location and versioning.

use super::state::Bucket;
use super::{S3Service, errors, now_ms};
use cumulo_store::rusqlite::params;
use cumulo_wire::AwsError;

/// Regions S3 accepts as a `LocationConstraint` (the commercial partition).
const REGIONS: &[&str] = &[
    "af-south-1",
    "ap-east-1",
    "ap-east-2",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-south-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-7",
    "ca-central-1",
    "ca-west-1",
    "eu-central-1",
    "eu-central-2",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "il-central-1",
    "me-central-1",
    "me-south-1",
    "mx-central-1",
    "sa-east-1",
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
    "EU",
];

/// One entry of ListBuckets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketSummary {
    pub name: String,
    pub region: String,
    pub created: i64,
}

/// S3's bucket naming rules (general purpose buckets).
pub fn valid_bucket_name(name: &str) -> bool {
    let b = name.as_bytes();
    let ok_chars = b
        .iter()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'.' || *c == b'-');
    let edge = |c: Option<&u8>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let is_ip = name.split('.').count() == 4 && name.split('.').all(|p| p.parse::<u8>().is_ok());
    (3..=63).contains(&b.len())
        && ok_chars
        && edge(b.first())
        && edge(b.last())
        && !name.contains("..")
        && !name.contains(".-")
        && !name.contains("-.")
        && !is_ip
        && !name.starts_with("xn--")
        && !name.starts_with("sthree-")
        && !name.ends_with("-s3alias")
        && !name.ends_with("--ol-s3")
}

impl S3Service {
    /// CreateBucket in `region` (the endpoint's region). AWS's rules: outside us-east-1 the
    /// constraint must name the endpoint's region; in us-east-1 it must be absent; re-creating a
    /// bucket you own is a no-op in us-east-1 and `BucketAlreadyOwnedByYou` elsewhere.
    pub async fn create_bucket(
        &self,
        region: &str,
        name: &str,
        location_constraint: Option<&str>,
    ) -> Result<(), AwsError> {
        if !valid_bucket_name(name) {
            return Err(errors::invalid_bucket_name(name));
        }
        let constraint = location_constraint.filter(|c| !c.is_empty());
        let bucket_region = match constraint {
            Some(c) if !REGIONS.contains(&c) || (c == "us-east-1") => {
                return Err(AwsError::bad_request(
                    "InvalidLocationConstraint",
                    "The specified location-constraint is not valid",
                )
                .with_extra("LocationConstraint", c));
            }
            Some(c) => {
                let c = if c == "EU" { "eu-west-1" } else { c };
                if c != region {
                    return Err(AwsError::bad_request(
                        "IllegalLocationConstraintException",
                        format!(
                            "The {c} location constraint is incompatible for the region specific endpoint this request was sent to."
                        ),
                    ));
                }
                c.to_string()
            }
            None if region != "us-east-1" => {
                return Err(AwsError::bad_request(
                    "IllegalLocationConstraintException",
                    "The unspecified location constraint is incompatible for the region specific endpoint this request was sent to.",
                ));
            }
            None => "us-east-1".to_string(),
        };
        let commit = {
            let mut state = self.write();
            if let Some(existing) = state.buckets.get(name) {
                if existing.region == "us-east-1" && bucket_region == "us-east-1" {
                    return Ok(());
                }
                return Err(errors::bucket_already_owned(name));
            }
            let created = now_ms();
            let (n, r) = (name.to_string(), bucket_region.clone());
            let commit = self.store.write_grouped(move |tx| {
                tx.prepare_cached(
                    "INSERT INTO s3_buckets (name, region, created, versioning) VALUES (?1, ?2, ?3, NULL)",
                )?
                .execute(params![n, r, created])
            });
            state.buckets.insert(
                name.to_string(),
                Bucket {
                    name: name.to_string(),
                    region: bucket_region,
                    created,
                    ..Default::default()
                },
            );
            commit
        };
        commit.await.map_err(errors::internal)
    }

    /// DeleteBucket: only when no object version (or delete marker) remains. In-progress
    /// multipart uploads are discarded with the bucket.
    pub async fn delete_bucket(&self, name: &str) -> Result<(), AwsError> {
        let commit = {
            let mut state = self.write();
            let bucket = state
                .buckets
                .get(name)
                .ok_or_else(|| errors::no_such_bucket(name))?;
            if !bucket.objects.is_empty() {
                return Err(errors::bucket_not_empty(name));
            }
            state.buckets.remove(name);
            let name = name.to_string();
            self.store.write_grouped(move |tx| {
                tx.prepare_cached(
                    "DELETE FROM s3_parts WHERE upload_id IN (SELECT upload_id FROM s3_uploads WHERE bucket = ?1)",
                )?
                .execute([&name])?;
                tx.prepare_cached("DELETE FROM s3_uploads WHERE bucket = ?1")?
                    .execute([&name])?;
                tx.prepare_cached("DELETE FROM s3_bucket_configs WHERE bucket = ?1")?
                    .execute([&name])?;
                tx.prepare_cached("DELETE FROM s3_buckets WHERE name = ?1")?
                    .execute([&name])
            })
        };
        commit.await.map_err(errors::internal)
    }

    /// ListBuckets: every bucket of the account, by name.
    pub fn list_buckets(&self) -> Vec<BucketSummary> {
        self.read()
            .buckets
            .values()
            .map(|b| BucketSummary {
                name: b.name.clone(),
                region: b.region.clone(),
                created: b.created,
            })
            .collect()
    }

    /// HeadBucket / GetBucketLocation: the bucket's region.
    pub fn bucket_region(&self, name: &str) -> Result<String, AwsError> {
        self.read()
            .buckets
            .get(name)
            .map(|b| b.region.clone())
            .ok_or_else(|| errors::no_such_bucket(name))
    }

    /// PutBucketVersioning: `Enabled` or `Suspended`.
    pub async fn put_bucket_versioning(&self, name: &str, status: &str) -> Result<(), AwsError> {
        if status != "Enabled" && status != "Suspended" {
            return Err(errors::malformed_xml());
        }
        let commit = {
            let mut state = self.write();
            let b = state
                .buckets
                .get_mut(name)
                .ok_or_else(|| errors::no_such_bucket(name))?;
            b.versioning = Some(status.to_string());
            let (name, status) = (name.to_string(), status.to_string());
            self.store.write_grouped(move |tx| {
                tx.execute(
                    "UPDATE s3_buckets SET versioning = ?2 WHERE name = ?1",
                    params![name, status],
                )
            })
        };
        commit.await.map_err(errors::internal)
    }

    /// GetBucketVersioning: `None` if versioning was never configured.
    pub fn get_bucket_versioning(&self, name: &str) -> Result<Option<String>, AwsError> {
        self.read()
            .buckets
            .get(name)
            .map(|b| b.versioning.clone())
            .ok_or_else(|| errors::no_such_bucket(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_names() {
        for ok in ["abc", "my-bucket.1", "a1b", "0-0"] {
            assert!(valid_bucket_name(ok), "{ok}");
        }
        for bad in [
            "ab",
            "Abc",
            "a_b",
            "-ab",
            "ab-",
            "a..b",
            "192.168.1.1",
            "xn--ab",
            &"a".repeat(64),
        ] {
            assert!(!valid_bucket_name(bad), "{bad}");
        }
    }
}
