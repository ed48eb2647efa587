//! Bucket configurations: policy, tagging, CORS, lifecycle, encryption, website, notification,
//! public access block and ownership controls. Each is validated, stored as the canonical
//! document S3 returns, and answered with S3's "not configured" error (or S3's default, for the
//! settings every new bucket has) when absent.

use super::xml_in::{self, Element};
use super::{S3Service, XMLNS, errors};
use crate::providers::system_tags::is_system;
use cumulo_store::rusqlite::params;
use cumulo_wire::AwsError;

/// The XML-document configurations and how S3 answers when each is absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigKind {
    Cors,
    Lifecycle,
    Encryption,
    Website,
    Notification,
    PublicAccessBlock,
    OwnershipControls,
    Replication,
}

/// What a GET answers for a configuration that was never set.
enum Absent {
    Error(&'static str, &'static str),
    Default(&'static str),
}

impl ConfigKind {
    /// The key in the configs table (also the query subresource name).
    pub fn key(self) -> &'static str {
        match self {
            ConfigKind::Cors => "cors",
            ConfigKind::Lifecycle => "lifecycle",
            ConfigKind::Encryption => "encryption",
            ConfigKind::Website => "website",
            ConfigKind::Notification => "notification",
            ConfigKind::PublicAccessBlock => "publicAccessBlock",
            ConfigKind::OwnershipControls => "ownershipControls",
            ConfigKind::Replication => super::replication::KEY,
        }
    }

    pub fn root(self) -> &'static str {
        match self {
            ConfigKind::Cors => "CORSConfiguration",
            ConfigKind::Lifecycle => "LifecycleConfiguration",
            ConfigKind::Encryption => "ServerSideEncryptionConfiguration",
            ConfigKind::Website => "WebsiteConfiguration",
            ConfigKind::Notification => "NotificationConfiguration",
            ConfigKind::PublicAccessBlock => "PublicAccessBlockConfiguration",
            ConfigKind::OwnershipControls => "OwnershipControls",
            ConfigKind::Replication => "ReplicationConfiguration",
        }
    }

    fn absent(self) -> Absent {
        match self {
            ConfigKind::Cors => Absent::Error(
                "NoSuchCORSConfiguration",
                "The CORS configuration does not exist",
            ),
            ConfigKind::Lifecycle => Absent::Error(
                "NoSuchLifecycleConfiguration",
                "The lifecycle configuration does not exist",
            ),
            ConfigKind::Replication => Absent::Error(
                "ReplicationConfigurationNotFoundError",
                "The replication configuration was not found",
            ),
            ConfigKind::Website => Absent::Error(
                "NoSuchWebsiteConfiguration",
                "The specified bucket does not have a website configuration",
            ),
            // Since 2023 every bucket has SSE-S3 default encryption, blocks public access and
            // enforces bucket-owner ownership unless told otherwise.
            ConfigKind::Encryption => Absent::Default(
                "<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm></ApplyServerSideEncryptionByDefault><BucketKeyEnabled>false</BucketKeyEnabled></Rule></ServerSideEncryptionConfiguration>",
            ),
            ConfigKind::PublicAccessBlock => Absent::Default(
                "<PublicAccessBlockConfiguration><BlockPublicAcls>true</BlockPublicAcls><IgnorePublicAcls>true</IgnorePublicAcls><BlockPublicPolicy>true</BlockPublicPolicy><RestrictPublicBuckets>true</RestrictPublicBuckets></PublicAccessBlockConfiguration>",
            ),
            ConfigKind::OwnershipControls => Absent::Default(
                "<OwnershipControls><Rule><ObjectOwnership>BucketOwnerEnforced</ObjectOwnership></Rule></OwnershipControls>",
            ),
            ConfigKind::Notification => {
                Absent::Default("<NotificationConfiguration></NotificationConfiguration>")
            }
        }
    }

    /// S3's checks on a document of this kind (beyond the root element).
    fn validate(self, doc: &Element) -> Result<(), AwsError> {
        let require = |ok: bool| {
            if ok {
                Ok(())
            } else {
                Err(errors::malformed_xml())
            }
        };
        match self {
            ConfigKind::Cors => {
                let rules: Vec<_> = doc.children("CORSRule").collect();
                require(!rules.is_empty() && rules.len() <= 100)?;
                for r in rules {
                    require(
                        r.child("AllowedOrigin").is_some() && r.child("AllowedMethod").is_some(),
                    )?;
                    for m in r.children("AllowedMethod") {
                        let m = m.text.trim();
                        if !["GET", "PUT", "POST", "DELETE", "HEAD"].contains(&m) {
                            return Err(errors::invalid_request(&format!(
                                "Found unsupported HTTP method in CORS config. Unsupported method is {m}"
                            )));
                        }
                    }
                }
                Ok(())
            }
            ConfigKind::Lifecycle => {
                let rules: Vec<_> = doc.children("Rule").collect();
                require(!rules.is_empty() && rules.len() <= 1000)?;
                for r in rules {
                    require(matches!(
                        r.child_text("Status"),
                        Some("Enabled" | "Disabled")
                    ))?;
                }
                Ok(())
            }
            ConfigKind::Encryption => {
                let rules: Vec<_> = doc.children("Rule").collect();
                require(!rules.is_empty())?;
                for r in rules {
                    let alg = r
                        .child("ApplyServerSideEncryptionByDefault")
                        .and_then(|d| d.child_text("SSEAlgorithm"));
                    require(matches!(alg, Some("AES256" | "aws:kms" | "aws:kms:dsse")))?;
                }
                Ok(())
            }
            ConfigKind::Website => require(
                doc.child("IndexDocument")
                    .and_then(|i| i.child_text("Suffix"))
                    .is_some_and(|s| !s.is_empty())
                    || doc.child("RedirectAllRequestsTo").is_some(),
            ),
            ConfigKind::OwnershipControls => {
                let o = doc
                    .child("Rule")
                    .and_then(|r| r.child_text("ObjectOwnership"));
                require(matches!(
                    o,
                    Some("BucketOwnerEnforced" | "BucketOwnerPreferred" | "ObjectWriter")
                ))
            }
            // Replication's checks need the buckets too (`replication::validate`).
            ConfigKind::Notification | ConfigKind::PublicAccessBlock | ConfigKind::Replication => {
                Ok(())
            }
        }
    }
}

impl S3Service {
    /// Installs (or removes) one configuration document and queues its write on the store's
    /// group commit under the state lock; answers once it is durable.
    async fn set_config(
        &self,
        bucket: &str,
        key: &str,
        body: Option<String>,
    ) -> Result<(), AwsError> {
        let commit = {
            let mut state = self.write();
            let b = state
                .buckets
                .get_mut(bucket)
                .ok_or_else(|| errors::no_such_bucket(bucket))?;
            match &body {
                Some(body) => b.configs.insert(key.to_string(), body.clone()),
                None => b.configs.remove(key),
            };
            let (bucket, key) = (bucket.to_string(), key.to_string());
            self.store.write_grouped(move |tx| match &body {
                Some(b) => tx
                    .prepare_cached(
                        "INSERT OR REPLACE INTO s3_bucket_configs (bucket, kind, body) VALUES (?1, ?2, ?3)",
                    )?
                    .execute(params![bucket, key, b]),
                None => tx
                    .prepare_cached("DELETE FROM s3_bucket_configs WHERE bucket = ?1 AND kind = ?2")?
                    .execute(params![bucket, key]),
            })
        };
        commit.await.map_err(errors::internal)
    }

    fn config(&self, bucket: &str, key: &str) -> Result<Option<String>, AwsError> {
        self.read()
            .buckets
            .get(bucket)
            .map(|b| b.configs.get(key).cloned())
            .ok_or_else(|| errors::no_such_bucket(bucket))
    }

    /// Put{Cors,Lifecycle,...}: validates and stores the document (re-serialized, with S3's
    /// namespace, which is how GET returns it).
    pub async fn put_bucket_config(
        &self,
        bucket: &str,
        kind: ConfigKind,
        doc: &Element,
    ) -> Result<(), AwsError> {
        if doc.name != kind.root() {
            return Err(errors::malformed_xml());
        }
        kind.validate(doc)?;
        if kind == ConfigKind::Replication {
            super::replication::validate(&self.read(), bucket, doc)?;
        }
        self.set_config(bucket, kind.key(), Some(doc.to_xml(Some(XMLNS))))
            .await
    }

    /// Get{Cors,Lifecycle,...}: the stored document, S3's default, or the "no such" error.
    pub fn get_bucket_config(&self, bucket: &str, kind: ConfigKind) -> Result<String, AwsError> {
        if let Some(doc) = self.config(bucket, kind.key())? {
            return Ok(doc);
        }
        match kind.absent() {
            Absent::Error(code, message) => Err(errors::no_such_config(code, message, bucket)),
            Absent::Default(doc) => {
                let el = xml_in::parse(doc.as_bytes()).map_err(errors::internal)?;
                Ok(el.to_xml(Some(XMLNS)))
            }
        }
    }

    /// Delete{Cors,Lifecycle,...}: back to "not configured" (or S3's default).
    pub async fn delete_bucket_config(
        &self,
        bucket: &str,
        kind: ConfigKind,
    ) -> Result<(), AwsError> {
        self.set_config(bucket, kind.key(), None).await
    }

    /// PutBucketPolicy: the policy must be a JSON object with a `Statement`.
    pub async fn put_bucket_policy(&self, bucket: &str, policy: &str) -> Result<(), AwsError> {
        let malformed = |m: &str| AwsError::bad_request("MalformedPolicy", m);
        let v: serde_json::Value = serde_json::from_str(policy)
            .map_err(|_| malformed("Policies must be valid JSON and the first byte must be '{'"))?;
        let obj = v.as_object().ok_or_else(|| {
            malformed("Policies must be valid JSON and the first byte must be '{'")
        })?;
        let statements = match obj.get("Statement") {
            Some(serde_json::Value::Array(a)) if !a.is_empty() => a.clone(),
            Some(s @ serde_json::Value::Object(_)) => vec![s.clone()],
            _ => return Err(malformed("Missing required field Statement")),
        };
        for s in &statements {
            let effect = s.get("Effect").and_then(|e| e.as_str());
            if !matches!(effect, Some("Allow" | "Deny")) {
                return Err(malformed("Invalid effect"));
            }
            if s.get("Action").is_none() && s.get("NotAction").is_none() {
                return Err(malformed("Missing required field Action"));
            }
        }
        self.set_config(bucket, "policy", Some(policy.to_string()))
            .await
    }

    /// GetBucketPolicy: the policy text exactly as put.
    pub fn get_bucket_policy(&self, bucket: &str) -> Result<String, AwsError> {
        self.config(bucket, "policy")?.ok_or_else(|| {
            errors::no_such_config(
                "NoSuchBucketPolicy",
                "The bucket policy does not exist",
                bucket,
            )
        })
    }

    pub async fn delete_bucket_policy(&self, bucket: &str) -> Result<(), AwsError> {
        self.set_config(bucket, "policy", None).await
    }

    /// PutBucketTagging (replaces the whole set; up to 50 tags). The bucket's system (`aws:`)
    /// tags, which CloudFormation sets, must be sent back unchanged: as on AWS, one added or
    /// changed is refused ("System tags cannot be added/updated by requester") and one left out
    /// too ("System Tags cannot be removed by requester"). They do not count against the 50.
    pub async fn put_bucket_tagging(
        &self,
        bucket: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        let (system, user): (Vec<_>, Vec<_>) =
            tags.iter().cloned().partition(|(k, _)| is_system(k));
        super::object::validate_tags(&user, 50)?;
        let kept = self.system_tags(bucket)?;
        if let Some((k, _)) = system.iter().find(|t| !kept.contains(t)) {
            return Err(
                errors::invalid_tag("System tags cannot be added/updated by requester")
                    .with_extra("TagKey", k),
            );
        }
        if kept.iter().any(|t| !system.contains(t)) {
            return Err(errors::invalid_tag(
                "System Tags cannot be removed by requester",
            ));
        }
        self.store_tagging(bucket, &[user, kept].concat()).await
    }

    /// CloudFormation's `aws:cloudformation:*` tags on a bucket it creates, added to its set
    /// (which PutBucketTagging refuses from users).
    pub async fn add_system_tags(
        &self,
        bucket: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        let mut all = match self.get_bucket_tagging(bucket) {
            Ok(t) => t,
            Err(e) if e.code == "NoSuchTagSet" => Vec::new(),
            Err(e) => return Err(e),
        };
        all.retain(|(k, _)| !tags.iter().any(|(s, _)| s == k));
        all.extend(tags.iter().cloned());
        self.store_tagging(bucket, &all).await
    }

    /// The bucket's system tags (none when it has no tag set).
    fn system_tags(&self, bucket: &str) -> Result<Vec<(String, String)>, AwsError> {
        match self.get_bucket_tagging(bucket) {
            Ok(t) => Ok(t.into_iter().filter(|(k, _)| is_system(k)).collect()),
            Err(e) if e.code == "NoSuchTagSet" => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    async fn store_tagging(&self, bucket: &str, tags: &[(String, String)]) -> Result<(), AwsError> {
        let doc = (!tags.is_empty())
            .then(|| serde_json::to_string(tags).map_err(errors::internal))
            .transpose()?;
        self.set_config(bucket, "tagging", doc).await
    }

    /// GetBucketTagging: `NoSuchTagSet` when the bucket has none.
    pub fn get_bucket_tagging(&self, bucket: &str) -> Result<Vec<(String, String)>, AwsError> {
        let doc = self.config(bucket, "tagging")?.ok_or_else(|| {
            errors::no_such_config("NoSuchTagSet", "The TagSet does not exist", bucket)
        })?;
        serde_json::from_str(&doc).map_err(errors::internal)
    }

    /// DeleteBucketTagging: removes the user tags; the system tags CloudFormation set stay
    /// (users cannot remove them).
    pub async fn delete_bucket_tagging(&self, bucket: &str) -> Result<(), AwsError> {
        let kept = self.system_tags(bucket)?;
        self.store_tagging(bucket, &kept).await
    }
}

/// Tags from a `<Tagging><TagSet><Tag><Key/><Value/></Tag>...` document.
pub fn parse_tagging(doc: &Element) -> Result<Vec<(String, String)>, AwsError> {
    if doc.name != "Tagging" {
        return Err(errors::malformed_xml());
    }
    let set = doc.child("TagSet").ok_or_else(errors::malformed_xml)?;
    set.children("Tag")
        .map(|t| {
            let k = t.child("Key").ok_or_else(errors::malformed_xml)?;
            let v = t.child("Value").map(|v| v.text.clone()).unwrap_or_default();
            Ok((k.text.clone(), v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> Element {
        xml_in::parse(s.as_bytes()).unwrap()
    }

    #[test]
    fn validates_cors() {
        let ok = doc(
            "<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>",
        );
        assert!(ConfigKind::Cors.validate(&ok).is_ok());
        let bad = doc(
            "<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>PATCH</AllowedMethod></CORSRule></CORSConfiguration>",
        );
        assert_eq!(
            ConfigKind::Cors.validate(&bad).unwrap_err().code,
            "InvalidRequest"
        );
        let empty = doc("<CORSConfiguration/>");
        assert_eq!(
            ConfigKind::Cors.validate(&empty).unwrap_err().code,
            "MalformedXML"
        );
    }

    #[test]
    fn validates_lifecycle_and_encryption() {
        let ok = doc(
            "<LifecycleConfiguration><Rule><Status>Enabled</Status></Rule></LifecycleConfiguration>",
        );
        assert!(ConfigKind::Lifecycle.validate(&ok).is_ok());
        let bad = doc(
            "<LifecycleConfiguration><Rule><Status>On</Status></Rule></LifecycleConfiguration>",
        );
        assert!(ConfigKind::Lifecycle.validate(&bad).is_err());
        let enc = doc(
            "<ServerSideEncryptionConfiguration><Rule><ApplyServerSideEncryptionByDefault><SSEAlgorithm>DES</SSEAlgorithm></ApplyServerSideEncryptionByDefault></Rule></ServerSideEncryptionConfiguration>",
        );
        assert!(ConfigKind::Encryption.validate(&enc).is_err());
    }

    #[test]
    fn parses_tagging() {
        let tags = parse_tagging(&doc("<Tagging><TagSet><Tag><Key>a</Key><Value>1</Value></Tag><Tag><Key>b</Key><Value></Value></Tag></TagSet></Tagging>")).unwrap();
        assert_eq!(
            tags,
            vec![("a".into(), "1".into()), ("b".into(), "".into())]
        );
        assert!(parse_tagging(&doc("<Tagging/>")).is_err());
    }
}
