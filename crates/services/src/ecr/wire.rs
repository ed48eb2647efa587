//! The awsJson1_1 adapter: decodes `AmazonEC2ContainerRegistry_V20150921.<Operation>` bodies
//! into typed calls and encodes results with AWS's member names (timestamps in epoch seconds).

use super::EcrService;
use super::operations::OPERATIONS;
use super::ops::{CreateRepositoryInput, ImageId, ImageOutcome, invalid};
use super::state::{Image, Repository};
use crate::json_body::{self, Body, null_member};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde_json::{Value, json};

/// Pushing and pulling layers needs a registry endpoint, which cumulo does not have.
const LAYER_OPERATIONS: &[&str] = &[
    "InitiateLayerUpload",
    "UploadLayerPart",
    "CompleteLayerUpload",
    "BatchCheckLayerAvailability",
    "GetDownloadUrlForLayer",
];

pub fn handle(svc: &EcrService, req: &AwsRequest) -> AwsResponse {
    let op = req.target_operation().unwrap_or("");
    let result =
        json_body::parse(req).and_then(|m| dispatch(svc, &req.region, op, Body::new(&m, missing)));
    json_body::respond(req, result)
}

fn missing(name: &str) -> AwsError {
    invalid(null_member(name))
}

fn repo_json(svc: &EcrService, region: &str, r: &Repository) -> Value {
    let mut enc = json!({"encryptionType": r.encryption_type});
    if let Some(k) = &r.kms_key {
        enc["kmsKey"] = json!(k);
    }
    json!({
        "repositoryArn": svc.repository_arn(region, &r.name),
        "registryId": svc.registry_id(),
        "repositoryName": r.name,
        "repositoryUri": svc.repository_uri(region, &r.name),
        "createdAt": r.created,
        "imageTagMutability": r.tag_mutability,
        "imageScanningConfiguration": {"scanOnPush": r.scan_on_push},
        "encryptionConfiguration": enc,
    })
}

fn id_json(id: &ImageId) -> Value {
    let mut v = json!({});
    if let Some(d) = &id.digest {
        v["imageDigest"] = json!(d);
    }
    if let Some(t) = &id.tag {
        v["imageTag"] = json!(t);
    }
    v
}

fn image_json(svc: &EcrService, repo: &str, id: &ImageId, i: &Image) -> Value {
    json!({
        "registryId": svc.registry_id(),
        "repositoryName": repo,
        "imageId": id_json(id),
        "imageManifest": i.manifest,
        "imageManifestMediaType": i.media_type,
    })
}

fn detail_json(svc: &EcrService, repo: &str, i: &Image) -> Value {
    let mut v = json!({
        "registryId": svc.registry_id(),
        "repositoryName": repo,
        "imageDigest": i.digest,
        "imageSizeInBytes": i.size,
        "imagePushedAt": i.pushed_at,
        "imageManifestMediaType": i.media_type,
    });
    if !i.tags.is_empty() {
        v["imageTags"] = json!(i.tags);
    }
    if let Some(a) = &i.artifact_media_type {
        v["artifactMediaType"] = json!(a);
    }
    v
}

fn image_ids(b: &Body<'_>) -> Result<Vec<ImageId>, AwsError> {
    b.objects("imageIds")?
        .iter()
        .map(|i| {
            Ok(ImageId {
                digest: i.opt_str("imageDigest")?,
                tag: i.opt_str("imageTag")?,
            })
        })
        .collect()
}

fn failures_json<T>(outcomes: &[ImageOutcome<T>]) -> Vec<Value> {
    outcomes
        .iter()
        .filter_map(|o| match o {
            ImageOutcome::Failed { id, code, reason } => Some(json!({
                "imageId": id_json(id), "failureCode": code, "failureReason": reason,
            })),
            ImageOutcome::Ok(_) => None,
        })
        .collect()
}

fn page<T: Clone>(
    items: &[T],
    b: &Body<'_>,
    max: i64,
) -> Result<(Vec<T>, Option<String>), AwsError> {
    let n = b.opt_i64("maxResults")?.unwrap_or(max);
    if !(1..=max).contains(&n) {
        return Err(invalid(format!(
            "Invalid parameter at 'maxResults' failed to satisfy constraint: 'Member must have value between 1 and {max}'"
        )));
    }
    let offset: usize = match b.opt_str("nextToken")? {
        None => 0,
        Some(t) => t.parse().map_err(|_| {
            invalid(
                "Invalid parameter at 'nextToken' failed to satisfy constraint: 'invalid token'",
            )
        })?,
    };
    let out: Vec<T> = items
        .iter()
        .skip(offset)
        .take(n as usize)
        .cloned()
        .collect();
    let end = offset + out.len();
    Ok((out, (end < items.len()).then(|| end.to_string())))
}

fn dispatch(svc: &EcrService, region: &str, op: &str, b: Body<'_>) -> Result<Value, AwsError> {
    let registry = b.opt_str("registryId")?;
    let registry = registry.as_deref().unwrap_or(svc.registry_id());
    let repo_name = || b.str("repositoryName");
    match op {
        "CreateRepository" => {
            if b.has("imageTagMutabilityExclusionFilters") {
                return Err(invalid(
                    "cumulo: imageTagMutabilityExclusionFilters is not supported by the emulator",
                ));
            }
            let enc = b.object("encryptionConfiguration")?;
            let input = CreateRepositoryInput {
                name: repo_name()?,
                tag_mutability: b.opt_str("imageTagMutability")?,
                scan_on_push: match b.object("imageScanningConfiguration")? {
                    Some(s) => s.bool("scanOnPush")?,
                    None => false,
                },
                encryption_type: match &enc {
                    Some(e) => Some(e.str("encryptionType")?),
                    None => None,
                },
                kms_key: match &enc {
                    Some(e) => e.opt_str("kmsKey")?,
                    None => None,
                },
                tags: b.tag_list("tags", "Key", "Value")?,
                system_tags: Vec::new(),
            };
            let repo = svc.create_repository(region, Some(registry), input)?;
            Ok(json!({"repository": repo_json(svc, region, &repo)}))
        }
        "DescribeRepositories" => {
            let names = b.opt_strings("repositoryNames")?;
            let max = b.opt_i64("maxResults")?;
            let token = b.opt_str("nextToken")?;
            let (repos, next) =
                svc.describe_repositories(region, names.as_deref(), max, token.as_deref())?;
            let mut out = json!({
                "repositories": repos.iter().map(|r| repo_json(svc, region, r)).collect::<Vec<_>>(),
            });
            if let Some(t) = next {
                out["nextToken"] = json!(t);
            }
            Ok(out)
        }
        "DeleteRepository" => {
            let repo = svc.delete_repository(region, &repo_name()?, b.bool("force")?)?;
            Ok(json!({"repository": repo_json(svc, region, &repo)}))
        }
        "SetRepositoryPolicy" => {
            let name = repo_name()?;
            let text = b.str("policyText")?;
            svc.set_repository_policy(region, &name, &text)?;
            Ok(json!({"registryId": registry, "repositoryName": name, "policyText": text}))
        }
        "GetRepositoryPolicy" | "DeleteRepositoryPolicy" => {
            let name = repo_name()?;
            let text = if op == "GetRepositoryPolicy" {
                svc.get_repository_policy(region, &name)?
            } else {
                svc.delete_repository_policy(region, &name)?
            };
            Ok(json!({"registryId": registry, "repositoryName": name, "policyText": text}))
        }
        "PutLifecyclePolicy" => {
            let name = repo_name()?;
            let text = b.str("lifecyclePolicyText")?;
            svc.put_lifecycle_policy(region, &name, &text)?;
            Ok(json!({"registryId": registry, "repositoryName": name, "lifecyclePolicyText": text}))
        }
        "GetLifecyclePolicy" | "DeleteLifecyclePolicy" => {
            let name = repo_name()?;
            let text = if op == "GetLifecyclePolicy" {
                svc.get_lifecycle_policy(region, &name)?
            } else {
                svc.delete_lifecycle_policy(region, &name)?
            };
            Ok(json!({"registryId": registry, "repositoryName": name, "lifecyclePolicyText": text}))
        }
        "PutImageTagMutability" => {
            let name = repo_name()?;
            let m = b.str("imageTagMutability")?;
            svc.put_image_tag_mutability(region, &name, &m)?;
            Ok(json!({"registryId": registry, "repositoryName": name, "imageTagMutability": m}))
        }
        "PutImageScanningConfiguration" => {
            let name = repo_name()?;
            let scan = match b.object("imageScanningConfiguration")? {
                Some(s) => s.bool("scanOnPush")?,
                None => return Err(missing("imageScanningConfiguration")),
            };
            svc.put_image_scanning_configuration(region, &name, scan)?;
            Ok(json!({"registryId": registry, "repositoryName": name,
                      "imageScanningConfiguration": {"scanOnPush": scan}}))
        }
        "TagResource" => {
            svc.tag_resource(
                region,
                &b.str("resourceArn")?,
                &b.tag_list("tags", "Key", "Value")?,
            )?;
            Ok(json!({}))
        }
        "UntagResource" => {
            svc.untag_resource(region, &b.str("resourceArn")?, &b.strings("tagKeys")?)?;
            Ok(json!({}))
        }
        "ListTagsForResource" => {
            let tags = svc.list_tags(region, &b.str("resourceArn")?)?;
            let list: Vec<Value> = tags
                .iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect();
            Ok(json!({"tags": list}))
        }
        "PutImage" => {
            let name = repo_name()?;
            let tag = b.opt_str("imageTag")?;
            let image = svc.put_image(
                region,
                &name,
                &b.str("imageManifest")?,
                b.opt_str("imageManifestMediaType")?,
                tag.clone(),
                b.opt_str("imageDigest")?,
            )?;
            let id = ImageId {
                digest: Some(image.digest.clone()),
                tag,
            };
            Ok(json!({"image": image_json(svc, &name, &id, &image)}))
        }
        "BatchGetImage" => {
            let name = repo_name()?;
            let outcomes = svc.batch_get_image(region, &name, &image_ids(&b)?)?;
            let images: Vec<Value> = outcomes
                .iter()
                .filter_map(|o| match o {
                    ImageOutcome::Ok((id, i)) => Some(image_json(svc, &name, id, i)),
                    ImageOutcome::Failed { .. } => None,
                })
                .collect();
            Ok(json!({"images": images, "failures": failures_json(&outcomes)}))
        }
        "DescribeImages" => {
            let name = repo_name()?;
            let status = match b.object("filter")? {
                Some(f) => f.opt_str("tagStatus")?,
                None => None,
            };
            let images = svc.describe_images(region, &name, &image_ids(&b)?, status.as_deref())?;
            let (items, next) = page(&images, &b, 1000)?;
            let mut out = json!({"imageDetails": items.iter().map(|i| detail_json(svc, &name, i)).collect::<Vec<_>>()});
            if let Some(t) = next {
                out["nextToken"] = json!(t);
            }
            Ok(out)
        }
        "ListImages" => {
            let name = repo_name()?;
            let status = match b.object("filter")? {
                Some(f) => f.opt_str("tagStatus")?,
                None => None,
            };
            let images = svc.describe_images(region, &name, &[], status.as_deref())?;
            let ids: Vec<ImageId> = images
                .iter()
                .flat_map(|i| {
                    let digest = Some(i.digest.clone());
                    if i.tags.is_empty() {
                        vec![ImageId { digest, tag: None }]
                    } else {
                        i.tags
                            .iter()
                            .map(|t| ImageId {
                                digest: digest.clone(),
                                tag: Some(t.clone()),
                            })
                            .collect()
                    }
                })
                .collect();
            let (items, next) = page(&ids, &b, 1000)?;
            let mut out = json!({"imageIds": items.iter().map(id_json).collect::<Vec<_>>()});
            if let Some(t) = next {
                out["nextToken"] = json!(t);
            }
            Ok(out)
        }
        "BatchDeleteImage" => {
            let name = repo_name()?;
            let outcomes = svc.batch_delete_image(region, &name, &image_ids(&b)?)?;
            let deleted: Vec<Value> = outcomes
                .iter()
                .filter_map(|o| match o {
                    ImageOutcome::Ok(id) => Some(id_json(id)),
                    ImageOutcome::Failed { .. } => None,
                })
                .collect();
            Ok(json!({"imageIds": deleted, "failures": failures_json(&outcomes)}))
        }
        "GetAuthorizationToken" => {
            let (token, expires, endpoint) = svc.authorization_token(region);
            Ok(json!({"authorizationData": [{
                "authorizationToken": token, "expiresAt": expires, "proxyEndpoint": endpoint,
            }]}))
        }
        "" => Err(AwsError::bad_request(
            "MissingAction",
            "Missing X-Amz-Target header naming the operation",
        )),
        other if LAYER_OPERATIONS.contains(&other) => {
            let mut e = AwsError::not_implemented("ecr", other);
            e.message = format!(
                "cumulo: the ecr operation {other} is not implemented: pushing and pulling image layers is not emulated (there is no registry endpoint); PutImage stores manifests only"
            );
            Err(e)
        }
        other if OPERATIONS.contains(&other) => Err(AwsError::not_implemented("ecr", other)),
        other => Err(AwsError::bad_request(
            "UnknownOperationException",
            format!("Unknown operation {other}"),
        )),
    }
}
