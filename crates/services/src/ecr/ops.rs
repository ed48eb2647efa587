//! Typed ECR operations: repositories, policies, tags and image manifests.

use super::EcrService;
use super::state::{self, Image, Repository};
use crate::providers::system_tags::{RESERVED_KEY, first_reserved};
use base64::Engine;
use base64::engine::general_purpose::{STANDARD as B64, URL_SAFE_NO_PAD as TOKEN_B64};
use cumulo_wire::AwsError;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::sync::LazyLock;

const TAG_MUTABILITY: &[&str] = &["MUTABLE", "IMMUTABLE"];
const DEFAULT_MEDIA_TYPE: &str = "application/vnd.docker.distribution.manifest.v2+json";
/// How long a GetAuthorizationToken token is valid, as on AWS.
const TOKEN_HOURS: i64 = 12;

static NAME: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(r"^(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*$").ok()
});
static TAG: LazyLock<Option<regex::Regex>> =
    LazyLock::new(|| regex::Regex::new(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$").ok());

pub fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::bad_request(code, message)
}

pub fn invalid(message: impl Into<String>) -> AwsError {
    err("InvalidParameterException", message)
}

fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(e.to_string())
}

fn now_s() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

/// An image reference: by digest, by tag, or both (which must then agree).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImageId {
    pub digest: Option<String>,
    pub tag: Option<String>,
}

/// A batch operation's per-image result.
#[derive(Debug, Clone, PartialEq)]
pub enum ImageOutcome<T> {
    Ok(T),
    Failed {
        id: ImageId,
        code: &'static str,
        reason: String,
    },
}

/// Input of `CreateRepository`.
#[derive(Debug, Clone, Default)]
pub struct CreateRepositoryInput {
    pub name: String,
    pub tag_mutability: Option<String>,
    pub scan_on_push: bool,
    pub encryption_type: Option<String>,
    pub kms_key: Option<String>,
    /// The caller's tags (`aws:` keys refused).
    pub tags: Vec<(String, String)>,
    /// CloudFormation's `aws:cloudformation:*` tags, which only its provider sets (the wire
    /// adapter leaves this empty).
    pub system_tags: Vec<(String, String)>,
}

/// Refuses tags a user gives in the `aws:` namespace, in ECR's error code (the wording: see
/// [`RESERVED_KEY`]).
fn refuse_reserved(tags: &[(String, String)]) -> Result<(), AwsError> {
    match first_reserved(tags.iter().map(|(k, _)| k)) {
        Some(_) => Err(err("InvalidTagParameterException", RESERVED_KEY)),
        None => Ok(()),
    }
}

fn check_name(name: &str) -> Result<(), AwsError> {
    let ok = (2..=256).contains(&name.len()) && NAME.as_ref().is_some_and(|r| r.is_match(name));
    if ok {
        Ok(())
    } else {
        Err(invalid(format!(
            "Invalid parameter at 'repositoryName' failed to satisfy constraint: 'must satisfy regular expression '(?:[a-z0-9]+(?:[._-][a-z0-9]+)*/)*[a-z0-9]+(?:[._-][a-z0-9]+)*'' (value '{name}')"
        )))
    }
}

fn check_mutability(m: &str) -> Result<(), AwsError> {
    if TAG_MUTABILITY.contains(&m) {
        Ok(())
    } else {
        Err(invalid(format!(
            "Invalid parameter at 'imageTagMutability' failed to satisfy constraint: 'Member must satisfy enum value set: [MUTABLE, IMMUTABLE]' (value '{m}')"
        )))
    }
}

fn check_policy(text: &str) -> Result<(), AwsError> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) if m.get("Statement").is_some() => Ok(()),
        _ => Err(invalid(
            "Invalid parameter at 'PolicyText' failed to satisfy constraint: 'Invalid repository policy provided'",
        )),
    }
}

/// The structure AWS's lifecycle policy validation checks: rules with unique priorities, a
/// selection (tagStatus, countType, countNumber) and an `expire` action.
fn check_lifecycle(text: &str) -> Result<(), AwsError> {
    let fail = |why: &str| {
        invalid(format!(
            "Invalid parameter at 'LifecyclePolicyText' failed to satisfy constraint: 'Lifecycle policy validation failure: {why}'"
        ))
    };
    let v: Value = serde_json::from_str(text).map_err(|_| fail("the policy is not valid JSON"))?;
    let rules = v
        .get("rules")
        .and_then(Value::as_array)
        .filter(|r| !r.is_empty())
        .ok_or_else(|| fail("object has missing required properties ([\"rules\"])"))?;
    let mut priorities = Vec::new();
    for r in rules {
        let priority = r
            .get("rulePriority")
            .and_then(Value::as_i64)
            .ok_or_else(|| fail("rulePriority is required"))?;
        if priorities.contains(&priority) {
            return Err(fail("rulePriority must be unique"));
        }
        priorities.push(priority);
        let sel = r
            .get("selection")
            .ok_or_else(|| fail("selection is required"))?;
        let status = sel.get("tagStatus").and_then(Value::as_str);
        if !matches!(status, Some("tagged" | "untagged" | "any")) {
            return Err(fail("tagStatus must be one of tagged, untagged, any"));
        }
        let count_type = sel.get("countType").and_then(Value::as_str);
        if !matches!(count_type, Some("imageCountMoreThan" | "sinceImagePushed")) {
            return Err(fail(
                "countType must be imageCountMoreThan or sinceImagePushed",
            ));
        }
        if sel
            .get("countNumber")
            .and_then(Value::as_i64)
            .is_none_or(|n| n < 1)
        {
            return Err(fail("countNumber must be a positive integer"));
        }
        if r.pointer("/action/type").and_then(Value::as_str) != Some("expire") {
            return Err(fail("action type must be expire"));
        }
    }
    Ok(())
}

fn describe(id: &ImageId) -> String {
    format!(
        "{{imageDigest:'{}', imageTag:'{}'}}",
        id.digest.as_deref().unwrap_or("null"),
        id.tag.as_deref().unwrap_or("null")
    )
}

/// `sha256:<hex>` of the manifest's bytes.
pub fn manifest_digest(manifest: &str) -> String {
    format!(
        "sha256:{}",
        hex::encode(Sha256::digest(manifest.as_bytes()))
    )
}

impl EcrService {
    fn repo_not_found(&self, name: &str) -> AwsError {
        err(
            "RepositoryNotFoundException",
            format!(
                "The repository with name '{name}' does not exist in the registry with id '{}'",
                self.account_id
            ),
        )
    }

    fn check_registry(&self, registry_id: Option<&str>) -> Result<(), AwsError> {
        match registry_id {
            Some(id) if id != self.account_id => Err(invalid(format!(
                "Invalid parameter at 'registryId' failed to satisfy constraint: 'registry {id} is not this account's registry ({})'",
                self.account_id
            ))),
            _ => Ok(()),
        }
    }

    pub fn create_repository(
        &self,
        region: &str,
        registry_id: Option<&str>,
        input: CreateRepositoryInput,
    ) -> Result<Repository, AwsError> {
        self.check_registry(registry_id)?;
        check_name(&input.name)?;
        refuse_reserved(&input.tags)?;
        let mutability = input.tag_mutability.unwrap_or_else(|| "MUTABLE".into());
        check_mutability(&mutability)?;
        let encryption = input.encryption_type.unwrap_or_else(|| "AES256".into());
        match (encryption.as_str(), &input.kms_key) {
            ("AES256", None) | ("KMS", _) | ("KMS_DSSE", _) => {}
            ("AES256", Some(_)) => {
                return Err(invalid(
                    "Invalid parameter at 'encryptionConfiguration' failed to satisfy constraint: 'kmsKey can only be specified when encryptionType is KMS'",
                ));
            }
            (other, _) => {
                return Err(invalid(format!(
                    "Invalid parameter at 'encryptionType' failed to satisfy constraint: 'Member must satisfy enum value set: [AES256, KMS, KMS_DSSE]' (value '{other}')"
                )));
            }
        }
        let mut regions = self.lock();
        let repos = regions.entry(region.to_string()).or_default();
        if repos.contains_key(&input.name) {
            return Err(err(
                "RepositoryAlreadyExistsException",
                format!(
                    "The repository with name '{}' already exists in the registry with id '{}'",
                    input.name, self.account_id
                ),
            ));
        }
        let kms_key = match encryption.as_str() {
            "AES256" => None,
            _ => Some(input.kms_key.unwrap_or_else(|| {
                format!("arn:aws:kms:{region}:{}:alias/aws/ecr", self.account_id)
            })),
        };
        let repo = Repository {
            name: input.name.clone(),
            created: now_s(),
            tag_mutability: mutability,
            scan_on_push: input.scan_on_push,
            encryption_type: encryption,
            kms_key,
            tags: input.tags.into_iter().chain(input.system_tags).collect(),
            policy: None,
            lifecycle_policy: None,
            images: Vec::new(),
        };
        self.store
            .write(|tx| state::save(tx, region, &repo))
            .map_err(internal)?;
        repos.insert(input.name, repo.clone());
        Ok(repo)
    }

    pub fn repository(&self, region: &str, name: &str) -> Result<Repository, AwsError> {
        self.lock()
            .get(region)
            .and_then(|r| r.get(name))
            .cloned()
            .ok_or_else(|| self.repo_not_found(name))
    }

    /// Applies `f` to a repository and commits it; returns what `f` returned.
    fn update<T>(
        &self,
        region: &str,
        name: &str,
        f: impl FnOnce(&mut Repository) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        let mut regions = self.lock();
        let repo = regions
            .get_mut(region)
            .and_then(|r| r.get_mut(name))
            .ok_or_else(|| self.repo_not_found(name))?;
        let mut updated = repo.clone();
        let out = f(&mut updated)?;
        self.store
            .write(|tx| state::save(tx, region, &updated))
            .map_err(internal)?;
        *repo = updated;
        Ok(out)
    }

    pub fn describe_repositories(
        &self,
        region: &str,
        names: Option<&[String]>,
        max: Option<i64>,
        token: Option<&str>,
    ) -> Result<(Vec<Repository>, Option<String>), AwsError> {
        if let Some(names) = names {
            return names
                .iter()
                .map(|n| self.repository(region, n))
                .collect::<Result<_, _>>()
                .map(|r| (r, None));
        }
        let n = max.unwrap_or(1000);
        if !(1..=1000).contains(&n) {
            return Err(invalid(
                "Invalid parameter at 'maxResults' failed to satisfy constraint: 'Member must have value between 1 and 1000'",
            ));
        }
        let after = match token {
            Some(t) => Some(
                TOKEN_B64
                    .decode(t)
                    .ok()
                    .and_then(|b| String::from_utf8(b).ok())
                    .ok_or_else(|| invalid("Invalid parameter at 'nextToken' failed to satisfy constraint: 'invalid token'"))?,
            ),
            None => None,
        };
        let regions = self.lock();
        let mut it = regions
            .get(region)
            .into_iter()
            .flat_map(|r| r.values())
            .filter(|r| after.as_ref().is_none_or(|a| r.name > *a));
        let page: Vec<Repository> = it.by_ref().take(n as usize).cloned().collect();
        let next = match (it.next(), page.last()) {
            (Some(_), Some(last)) => Some(TOKEN_B64.encode(&last.name)),
            _ => None,
        };
        Ok((page, next))
    }

    /// Deletes a repository; one that holds images only with `force`.
    pub fn delete_repository(
        &self,
        region: &str,
        name: &str,
        force: bool,
    ) -> Result<Repository, AwsError> {
        let mut regions = self.lock();
        let repos = regions
            .get_mut(region)
            .ok_or_else(|| self.repo_not_found(name))?;
        let repo = repos.get(name).ok_or_else(|| self.repo_not_found(name))?;
        if !repo.images.is_empty() && !force {
            return Err(err(
                "RepositoryNotEmptyException",
                format!(
                    "The repository with name '{name}' in registry with id '{}' cannot be deleted because it still contains images",
                    self.account_id
                ),
            ));
        }
        self.store
            .write(|tx| state::delete(tx, region, name))
            .map_err(internal)?;
        repos.remove(name).ok_or_else(|| self.repo_not_found(name))
    }

    pub fn set_repository_policy(
        &self,
        region: &str,
        name: &str,
        text: &str,
    ) -> Result<(), AwsError> {
        check_policy(text)?;
        self.update(region, name, |r| {
            r.policy = Some(text.to_string());
            Ok(())
        })
    }

    pub fn get_repository_policy(&self, region: &str, name: &str) -> Result<String, AwsError> {
        self.repository(region, name)?
            .policy
            .ok_or_else(|| self.policy_not_found(name))
    }

    fn policy_not_found(&self, name: &str) -> AwsError {
        err(
            "RepositoryPolicyNotFoundException",
            format!(
                "Repository policy does not exist for the repository with name '{name}' in the registry with id '{}'",
                self.account_id
            ),
        )
    }

    pub fn delete_repository_policy(&self, region: &str, name: &str) -> Result<String, AwsError> {
        self.update(region, name, |r| {
            r.policy.take().ok_or_else(|| self.policy_not_found(name))
        })
    }

    pub fn put_lifecycle_policy(
        &self,
        region: &str,
        name: &str,
        text: &str,
    ) -> Result<(), AwsError> {
        check_lifecycle(text)?;
        self.update(region, name, |r| {
            r.lifecycle_policy = Some(text.to_string());
            super::lifecycle::apply(r, now_s());
            Ok(())
        })
    }

    fn lifecycle_not_found(&self, name: &str) -> AwsError {
        err(
            "LifecyclePolicyNotFoundException",
            format!(
                "Lifecycle policy does not exist for the repository with name '{name}' in the registry with id '{}'",
                self.account_id
            ),
        )
    }

    pub fn get_lifecycle_policy(&self, region: &str, name: &str) -> Result<String, AwsError> {
        self.repository(region, name)?
            .lifecycle_policy
            .ok_or_else(|| self.lifecycle_not_found(name))
    }

    pub fn delete_lifecycle_policy(&self, region: &str, name: &str) -> Result<String, AwsError> {
        self.update(region, name, |r| {
            r.lifecycle_policy
                .take()
                .ok_or_else(|| self.lifecycle_not_found(name))
        })
    }

    pub fn put_image_tag_mutability(
        &self,
        region: &str,
        name: &str,
        m: &str,
    ) -> Result<(), AwsError> {
        check_mutability(m)?;
        self.update(region, name, |r| {
            r.tag_mutability = m.to_string();
            Ok(())
        })
    }

    pub fn put_image_scanning_configuration(
        &self,
        region: &str,
        name: &str,
        scan_on_push: bool,
    ) -> Result<(), AwsError> {
        self.update(region, name, |r| {
            r.scan_on_push = scan_on_push;
            Ok(())
        })
    }

    /// The repository a tagging ARN names.
    fn repo_of_arn(&self, region: &str, arn: &str) -> Result<String, AwsError> {
        let prefix = format!("arn:aws:ecr:{region}:{}:repository/", self.account_id);
        arn.strip_prefix(&prefix)
            .map(str::to_string)
            .ok_or_else(|| invalid(format!("Invalid parameter at 'resourceArn' failed to satisfy constraint: 'Invalid ARN {arn}'")))
    }

    pub fn tag_resource(
        &self,
        region: &str,
        arn: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        let name = self.repo_of_arn(region, arn)?;
        refuse_reserved(tags)?;
        self.update(region, &name, |r| {
            r.tags.extend(tags.iter().cloned());
            if crate::providers::system_tags::counted(r.tags.keys()) > 50 {
                return Err(err(
                    "TooManyTagsException",
                    "A resource can have no more than 50 tags.",
                ));
            }
            Ok(())
        })
    }

    pub fn untag_resource(&self, region: &str, arn: &str, keys: &[String]) -> Result<(), AwsError> {
        let name = self.repo_of_arn(region, arn)?;
        self.update(region, &name, |r| {
            for k in keys {
                r.tags.remove(k);
            }
            Ok(())
        })
    }

    pub fn list_tags(&self, region: &str, arn: &str) -> Result<BTreeMap<String, String>, AwsError> {
        let name = self.repo_of_arn(region, arn)?;
        Ok(self.repository(region, &name)?.tags)
    }

    /// Stores a manifest under its sha256 digest, tagging it `tag` (moved from another image in
    /// a MUTABLE repository, refused in an IMMUTABLE one). Layers are not required to exist:
    /// cumulo stores no layers (see the module docs).
    pub fn put_image(
        &self,
        region: &str,
        name: &str,
        manifest: &str,
        media_type: Option<String>,
        tag: Option<String>,
        declared_digest: Option<String>,
    ) -> Result<Image, AwsError> {
        let parsed: Value = serde_json::from_str(manifest).map_err(|_| {
            invalid("Invalid parameter at 'ImageManifest' failed to satisfy constraint: 'Invalid JSON syntax'")
        })?;
        let digest = manifest_digest(manifest);
        if let Some(d) = &declared_digest
            && *d != digest
        {
            return Err(err(
                "ImageDigestDoesNotMatchException",
                format!("Provided digest {d} does not match the digest of the manifest {digest}"),
            ));
        }
        if let Some(t) = &tag
            && !TAG.as_ref().is_some_and(|r| r.is_match(t))
        {
            return Err(invalid(format!(
                "Invalid parameter at 'imageTag' failed to satisfy constraint: 'must satisfy regular expression '[a-zA-Z0-9_][a-zA-Z0-9_.-]{{0,127}}'' (value '{t}')"
            )));
        }
        let media_type = media_type
            .or_else(|| {
                parsed
                    .get("mediaType")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_else(|| DEFAULT_MEDIA_TYPE.into());
        let size = parsed
            .get("layers")
            .and_then(Value::as_array)
            .map_or(0, |ls| {
                ls.iter()
                    .filter_map(|l| l.get("size")?.as_i64())
                    .sum::<i64>()
            })
            + parsed
                .pointer("/config/size")
                .and_then(Value::as_i64)
                .unwrap_or(0);
        let artifact = parsed
            .pointer("/config/mediaType")
            .and_then(Value::as_str)
            .map(str::to_string);
        let account = self.account_id.clone();
        self.update(region, name, |r| {
            let existing = r.images.iter().position(|i| i.digest == digest);
            if let Some(t) = &tag {
                if let Some(i) = existing.and_then(|i| r.images.get(i))
                    && i.tags.contains(t)
                {
                    return Err(err(
                        "ImageAlreadyExistsException",
                        format!(
                            "Image with digest '{digest}' and tag '{t}' already exists in the repository with name '{name}' in registry with id '{account}'"
                        ),
                    ));
                }
                let taken = r.images.iter().any(|i| i.digest != digest && i.tags.contains(t));
                if taken && r.tag_mutability == "IMMUTABLE" {
                    return Err(err(
                        "ImageTagAlreadyExistsException",
                        format!(
                            "The image tag '{t}' already exists in the '{name}' repository and cannot be overwritten because the repository is immutable."
                        ),
                    ));
                }
                for i in &mut r.images {
                    i.tags.retain(|x| x != t);
                }
            } else if existing.is_some() {
                return Err(err(
                    "ImageAlreadyExistsException",
                    format!(
                        "Image with digest '{digest}' already exists in the repository with name '{name}' in registry with id '{account}'"
                    ),
                ));
            }
            let image = match existing.and_then(|i| r.images.get_mut(i)) {
                Some(i) => i,
                None => {
                    r.images.push(Image {
                        digest: digest.clone(),
                        tags: Vec::new(),
                        manifest: manifest.to_string(),
                        media_type: media_type.clone(),
                        artifact_media_type: artifact.clone(),
                        pushed_at: now_s(),
                        size,
                    });
                    let last = r.images.len() - 1;
                    &mut r.images[last]
                }
            };
            if let Some(t) = &tag {
                image.tags.push(t.clone());
            }
            let stored = image.clone();
            super::lifecycle::apply(r, now_s());
            Ok(stored)
        })
    }

    fn find<'r>(
        &self,
        repo: &'r Repository,
        id: &ImageId,
    ) -> Result<&'r Image, (&'static str, String)> {
        if id.digest.is_none() && id.tag.is_none() {
            return Err((
                "MissingDigestAndTag",
                "Invalid request parameters: both tag and digest cannot be null".into(),
            ));
        }
        let found = repo.images.iter().find(|i| {
            id.digest.as_ref().is_none_or(|d| i.digest == *d)
                && id.tag.as_ref().is_none_or(|t| i.tags.contains(t))
        });
        match found {
            Some(i) => Ok(i),
            None if id.digest.is_some()
                && id.tag.is_some()
                && repo
                    .images
                    .iter()
                    .any(|i| Some(&i.digest) == id.digest.as_ref()) =>
            {
                Err((
                    "ImageTagDoesNotMatchDigest",
                    "Invalid request parameters: given tag does not map to the given digest".into(),
                ))
            }
            None => Err(("ImageNotFound", "Requested image not found".into())),
        }
    }

    pub fn batch_get_image(
        &self,
        region: &str,
        name: &str,
        ids: &[ImageId],
    ) -> Result<Vec<ImageOutcome<(ImageId, Image)>>, AwsError> {
        let repo = self.repository(region, name)?;
        Ok(ids
            .iter()
            .map(|id| match self.find(&repo, id) {
                Ok(i) => ImageOutcome::Ok((
                    ImageId {
                        digest: Some(i.digest.clone()),
                        tag: id.tag.clone(),
                    },
                    i.clone(),
                )),
                Err((code, reason)) => ImageOutcome::Failed {
                    id: id.clone(),
                    code,
                    reason,
                },
            })
            .collect())
    }

    /// DescribeImages: the named images (ImageNotFoundException for a missing one), or every
    /// image matching `tag_status` (`TAGGED`, `UNTAGGED`, `ANY`).
    pub fn describe_images(
        &self,
        region: &str,
        name: &str,
        ids: &[ImageId],
        tag_status: Option<&str>,
    ) -> Result<Vec<Image>, AwsError> {
        let repo = self.repository(region, name)?;
        if !ids.is_empty() {
            return ids
                .iter()
                .map(|id| {
                    self.find(&repo, id).cloned().map_err(|_| {
                        err(
                            "ImageNotFoundException",
                            format!(
                                "The image with imageId {} does not exist within the repository with name '{name}' in the registry with id '{}'",
                                describe(id),
                                self.account_id
                            ),
                        )
                    })
                })
                .collect();
        }
        Ok(repo
            .images
            .into_iter()
            .filter(|i| match tag_status {
                Some("TAGGED") => !i.tags.is_empty(),
                Some("UNTAGGED") => i.tags.is_empty(),
                _ => true,
            })
            .collect())
    }

    /// BatchDeleteImage: by digest the whole image goes; by tag only the tag does, and the
    /// image with it once it has no tag left.
    pub fn batch_delete_image(
        &self,
        region: &str,
        name: &str,
        ids: &[ImageId],
    ) -> Result<Vec<ImageOutcome<ImageId>>, AwsError> {
        self.update(region, name, |r| {
            let mut out = Vec::new();
            for id in ids {
                let found = self.find(r, id).map(|i| i.digest.clone());
                match found {
                    Err((code, reason)) => out.push(ImageOutcome::Failed {
                        id: id.clone(),
                        code,
                        reason,
                    }),
                    Ok(digest) => {
                        match &id.tag {
                            Some(t) => {
                                for i in r.images.iter_mut().filter(|i| i.digest == digest) {
                                    i.tags.retain(|x| x != t);
                                }
                                r.images.retain(|i| {
                                    i.digest != digest || !i.tags.is_empty() || id.digest.is_some()
                                });
                                if id.digest.is_some() {
                                    r.images.retain(|i| i.digest != digest);
                                }
                            }
                            None => r.images.retain(|i| i.digest != digest),
                        }
                        out.push(ImageOutcome::Ok(ImageId {
                            digest: Some(digest),
                            tag: id.tag.clone(),
                        }));
                    }
                }
            }
            Ok(out)
        })
    }

    /// `AWS:<password>` base64-encoded, valid 12 hours, with the registry's endpoint.
    pub fn authorization_token(&self, region: &str) -> (String, f64, String) {
        let password = uuid::Uuid::new_v4().simple().to_string();
        let token = B64.encode(format!("AWS:{password}"));
        let expires =
            (chrono::Utc::now() + chrono::Duration::hours(TOKEN_HOURS)).timestamp() as f64;
        (
            token,
            expires,
            format!("https://{}.dkr.ecr.{region}.amazonaws.com", self.account_id),
        )
    }
}
