//! S3 replication performed between cumulo buckets. A bucket's replication configuration (put
//! by PutBucketReplication or CloudFormation's `ReplicationConfiguration`, stored as S3 returns
//! it) is read when a new object version is written: every enabled rule whose filter matches the
//! key and the object's tags copies the version to its destination bucket (which S3 requires to
//! exist with versioning on, so it is always a cumulo bucket), in the rule's storage class. The
//! source version then reports `x-amz-replication-status: COMPLETED` and the replica `REPLICA`,
//! as S3 does once replication finishes; here it finishes before the write is answered.

use super::errors;
use super::state::State;
use super::xml_in::{self, Element};
use cumulo_wire::AwsError;

/// The configs-table key of the replication document.
pub(super) const KEY: &str = "replication";

/// One destination a new version goes to.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Destination {
    pub bucket: String,
    pub storage_class: Option<String>,
}

/// The bucket name of a destination ARN (`arn:aws:s3:::name`).
fn bucket_of(arn: &str) -> Option<&str> {
    arn.strip_prefix("arn:")?
        .split_once(":s3:::")
        .map(|(_, b)| b)
        .filter(|b| !b.is_empty() && !b.contains('/'))
}

/// S3's checks on a replication document for `bucket`: a Role and at least one rule with a
/// status and a destination bucket ARN (else MalformedXML), versioning on the source, and each
/// destination an existing bucket with versioning on.
pub(super) fn validate(state: &State, bucket: &str, doc: &Element) -> Result<(), AwsError> {
    let rules: Vec<&Element> = doc.children("Rule").collect();
    let well_formed = doc.child("Role").is_some()
        && !rules.is_empty()
        && rules.len() <= 1000
        && rules.iter().all(|r| {
            matches!(r.child_text("Status"), Some("Enabled" | "Disabled"))
                && r.child("Destination")
                    .and_then(|d| d.child_text("Bucket"))
                    .is_some_and(|b| bucket_of(b).is_some())
        });
    if !well_formed {
        return Err(errors::malformed_xml());
    }
    let versioned = |name: &str| {
        state
            .buckets
            .get(name)
            .is_some_and(|b| b.versioning_enabled())
    };
    if !versioned(bucket) {
        return Err(errors::invalid_request(
            "Versioning must be 'Enabled' on the bucket to apply a replication configuration",
        ));
    }
    for r in rules {
        let dest = r
            .child("Destination")
            .and_then(|d| d.child_text("Bucket"))
            .and_then(bucket_of)
            .unwrap_or_default();
        if !versioned(dest) {
            return Err(errors::invalid_request(
                "Destination bucket must have versioning enabled.",
            ));
        }
    }
    Ok(())
}

/// Whether a rule's filter (the older rule-level `Prefix`, or `Filter` with `Prefix`, `Tag` or
/// `And` of them) matches the key and tags.
fn matches(rule: &Element, key: &str, tags: &[(String, String)]) -> bool {
    if let Some(p) = rule.child_text("Prefix") {
        return key.starts_with(p);
    }
    let Some(filter) = rule.child("Filter") else {
        return true;
    };
    let conds = filter.child("And").unwrap_or(filter);
    conds
        .child_text("Prefix")
        .is_none_or(|p| key.starts_with(p))
        && conds.children("Tag").all(|t| {
            tags.iter().any(|(k, v)| {
                t.child_text("Key") == Some(k.as_str()) && t.child_text("Value") == Some(v.as_str())
            })
        })
}

/// Where a new version of `key` in the bucket holding `doc` goes: one destination per bucket,
/// from the highest-priority enabled rule that matches (empty when none does).
pub(super) fn destinations(doc: &str, key: &str, tags: &[(String, String)]) -> Vec<Destination> {
    let Ok(doc) = xml_in::parse(doc.as_bytes()) else {
        return Vec::new();
    };
    let mut rules: Vec<&Element> = doc
        .children("Rule")
        .filter(|r| r.child_text("Status") == Some("Enabled") && matches(r, key, tags))
        .collect();
    let priority = |r: &Element| {
        r.child_text("Priority")
            .and_then(|p| p.parse::<i64>().ok())
            .unwrap_or(0)
    };
    rules.sort_by_key(|r| std::cmp::Reverse(priority(r)));
    let mut out: Vec<Destination> = Vec::new();
    for r in rules {
        let Some(d) = r.child("Destination") else {
            continue;
        };
        let Some(bucket) = d.child_text("Bucket").and_then(bucket_of) else {
            continue;
        };
        if out.iter().all(|o| o.bucket != bucket) {
            out.push(Destination {
                bucket: bucket.to_string(),
                storage_class: d.child_text("StorageClass").map(str::to_string),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "<ReplicationConfiguration><Role>r</Role>\
        <Rule><ID>a</ID><Priority>1</Priority><Status>Enabled</Status><Filter><Prefix>logs/</Prefix></Filter>\
        <Destination><Bucket>arn:aws:s3:::dst</Bucket><StorageClass>GLACIER</StorageClass></Destination></Rule>\
        <Rule><ID>b</ID><Priority>2</Priority><Status>Enabled</Status><Filter><And><Prefix>logs/</Prefix>\
        <Tag><Key>t</Key><Value>1</Value></Tag></And></Filter>\
        <Destination><Bucket>arn:aws:s3:::dst</Bucket></Destination></Rule>\
        <Rule><ID>c</ID><Status>Disabled</Status><Filter></Filter>\
        <Destination><Bucket>arn:aws:s3:::off</Bucket></Destination></Rule>\
        </ReplicationConfiguration>";

    #[test]
    fn rules_match_by_prefix_and_tags_highest_priority_first() {
        let t = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert_eq!(destinations(DOC, "other", &[]), vec![]);
        assert_eq!(
            destinations(DOC, "logs/x", &[]),
            vec![Destination {
                bucket: "dst".into(),
                storage_class: Some("GLACIER".into())
            }]
        );
        // Rule b (priority 2) matches too and wins for the same destination.
        assert_eq!(
            destinations(DOC, "logs/x", &t("t", "1")),
            vec![Destination {
                bucket: "dst".into(),
                storage_class: None
            }]
        );
    }

    #[test]
    fn destination_arns_name_buckets() {
        assert_eq!(bucket_of("arn:aws:s3:::b"), Some("b"));
        assert_eq!(bucket_of("b"), None);
        assert_eq!(bucket_of("arn:aws:s3:::b/k"), None);
    }
}
