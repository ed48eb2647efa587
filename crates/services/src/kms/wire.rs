//! The awsJson1_1 adapter: `TrentService.<Operation>` bodies into typed calls, results in AWS's
//! member names (blobs base64, timestamps epoch seconds).

use super::KmsService;
use super::json::{Body, Members, b64, epoch, missing};
use super::ops::{ALGORITHM, CreateKeyInput, KeyView, check_algorithm, data_key_len};
use super::state::{KeyManager, KeyState};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde_json::{Value, json};

/// KMS operations cumulo does not emulate (asymmetric and HMAC keys, grants, imported material,
/// custom key stores, multi-Region replicas): 501 naming them.
const NOT_EMULATED: &[&str] = &[
    "ConnectCustomKeyStore",
    "CreateCustomKeyStore",
    "CreateGrant",
    "DeleteCustomKeyStore",
    "DeleteImportedKeyMaterial",
    "DeriveSharedSecret",
    "DescribeCustomKeyStores",
    "DisconnectCustomKeyStore",
    "GenerateDataKeyPair",
    "GenerateDataKeyPairWithoutPlaintext",
    "GenerateMac",
    "GetKeyLastUsage",
    "GetParametersForImport",
    "GetPublicKey",
    "ImportKeyMaterial",
    "ListGrants",
    "ListKeyRotations",
    "ListRetirableGrants",
    "ReplicateKey",
    "RetireGrant",
    "RevokeGrant",
    "RotateKeyOnDemand",
    "Sign",
    "UpdateCustomKeyStore",
    "UpdatePrimaryRegion",
    "Verify",
    "VerifyMac",
];

pub fn handle(svc: &KmsService, req: &AwsRequest) -> AwsResponse {
    super::json::respond(req, |op, b| dispatch(svc, &req.region, op, b))
}

pub(crate) fn key_metadata(v: &KeyView) -> Value {
    let r = &v.record;
    let mut m = json!({
        "AWSAccountId": r.account_id,
        "KeyId": r.key_id,
        "Arn": r.arn,
        "CreationDate": epoch(r.creation_ms),
        "Enabled": r.state == KeyState::Enabled,
        "Description": r.description,
        "KeyUsage": "ENCRYPT_DECRYPT",
        "KeyState": r.state.as_str(),
        "Origin": "AWS_KMS",
        "KeyManager": match r.manager { KeyManager::Customer => "CUSTOMER", KeyManager::Aws => "AWS" },
        "CustomerMasterKeySpec": "SYMMETRIC_DEFAULT",
        "KeySpec": "SYMMETRIC_DEFAULT",
        "EncryptionAlgorithms": [ALGORITHM],
        "MultiRegion": false,
    });
    if let Some(d) = r.deletion_ms {
        m["DeletionDate"] = epoch(d);
    }
    if let Some(w) = r.pending_window_days {
        m["PendingDeletionWindowInDays"] = json!(w);
    }
    m
}

fn tags_json(tags: &[(String, String)]) -> Value {
    tags.iter()
        .map(|(k, v)| json!({"TagKey": k, "TagValue": v}))
        .collect()
}

fn dispatch(svc: &KmsService, region: &str, op: &str, b: Body<'_>) -> Result<Value, AwsError> {
    let key = || b.str("KeyId");
    match op {
        "CreateKey" => {
            let spec = match (b.opt_str("KeySpec")?, b.opt_str("CustomerMasterKeySpec")?) {
                (Some(s), _) | (None, Some(s)) => Some(s),
                (None, None) => None,
            };
            if b.has("XksKeyId") {
                return Err(AwsError::not_implemented("kms", "CreateKey with XksKeyId"));
            }
            let input = CreateKeyInput {
                description: b.opt_str("Description")?,
                policy: b.opt_str("Policy")?,
                key_usage: b.opt_str("KeyUsage")?,
                key_spec: spec,
                origin: b.opt_str("Origin")?,
                custom_key_store_id: b.opt_str("CustomKeyStoreId")?,
                multi_region: b.bool("MultiRegion")?,
                tags: b.tags("Tags", "TagKey", "TagValue")?,
            };
            let v = svc.create_key(region, input)?;
            Ok(json!({"KeyMetadata": key_metadata(&v)}))
        }
        "DescribeKey" => {
            let v = svc.describe_key(region, &key()?)?;
            Ok(json!({"KeyMetadata": key_metadata(&v)}))
        }
        "ListKeys" => {
            let (keys, next) =
                svc.list_keys(region, b.opt_i64("Limit")?, b.opt_str("Marker")?.as_deref())?;
            let mut out = json!({
                "Keys": keys.iter().map(|(id, arn)| json!({"KeyId": id, "KeyArn": arn})).collect::<Vec<_>>(),
                "Truncated": next.is_some(),
            });
            if let Some(n) = next {
                out["NextMarker"] = json!(n);
            }
            Ok(out)
        }
        "Encrypt" => {
            check_algorithm(b.opt_str("EncryptionAlgorithm")?.as_deref())?;
            let (blob, arn) = svc.encrypt(
                region,
                &key()?,
                &b.blob("Plaintext")?,
                &b.string_map("EncryptionContext")?,
            )?;
            Ok(
                json!({"CiphertextBlob": b64(&blob), "KeyId": arn, "EncryptionAlgorithm": ALGORITHM}),
            )
        }
        "Decrypt" => {
            check_algorithm(b.opt_str("EncryptionAlgorithm")?.as_deref())?;
            if b.has("Recipient") {
                return Err(AwsError::not_implemented(
                    "kms",
                    "Decrypt with Recipient (Nitro Enclaves)",
                ));
            }
            let (pt, arn) = svc.decrypt(
                region,
                &b.blob("CiphertextBlob")?,
                &b.string_map("EncryptionContext")?,
                b.opt_str("KeyId")?.as_deref(),
            )?;
            Ok(json!({"KeyId": arn, "Plaintext": b64(&pt), "EncryptionAlgorithm": ALGORITHM}))
        }
        "ReEncrypt" => {
            check_algorithm(b.opt_str("SourceEncryptionAlgorithm")?.as_deref())?;
            check_algorithm(b.opt_str("DestinationEncryptionAlgorithm")?.as_deref())?;
            let (blob, source, dest) = svc.re_encrypt(
                region,
                &b.blob("CiphertextBlob")?,
                &b.string_map("SourceEncryptionContext")?,
                b.opt_str("SourceKeyId")?.as_deref(),
                &b.str("DestinationKeyId")?,
                &b.string_map("DestinationEncryptionContext")?,
            )?;
            Ok(json!({
                "CiphertextBlob": b64(&blob),
                "SourceKeyId": source,
                "KeyId": dest,
                "SourceEncryptionAlgorithm": ALGORITHM,
                "DestinationEncryptionAlgorithm": ALGORITHM,
            }))
        }
        "GenerateDataKey" | "GenerateDataKeyWithoutPlaintext" => {
            if b.has("Recipient") {
                return Err(AwsError::not_implemented(
                    "kms",
                    "GenerateDataKey with Recipient (Nitro Enclaves)",
                ));
            }
            let len = data_key_len(
                b.opt_str("KeySpec")?.as_deref(),
                b.opt_i64("NumberOfBytes")?,
            )?;
            let key_id = key()?;
            let (pt, blob, arn) =
                svc.generate_data_key(region, &key_id, len, &b.string_map("EncryptionContext")?)?;
            let mut out = json!({"CiphertextBlob": b64(&blob), "KeyId": arn});
            if op == "GenerateDataKey" {
                out["Plaintext"] = json!(b64(&pt));
            }
            Ok(out)
        }
        "GenerateRandom" => {
            if b.has("CustomKeyStoreId") || b.has("Recipient") {
                return Err(AwsError::not_implemented(
                    "kms",
                    "GenerateRandom with CustomKeyStoreId or Recipient",
                ));
            }
            let bytes = svc.generate_random(b.opt_i64("NumberOfBytes")?)?;
            Ok(json!({"Plaintext": b64(&bytes)}))
        }
        "CreateAlias" => {
            svc.create_alias(region, &b.str("AliasName")?, &b.str("TargetKeyId")?)?;
            Ok(json!({}))
        }
        "UpdateAlias" => {
            svc.update_alias(region, &b.str("AliasName")?, &b.str("TargetKeyId")?)?;
            Ok(json!({}))
        }
        "DeleteAlias" => {
            svc.delete_alias(region, &b.str("AliasName")?)?;
            Ok(json!({}))
        }
        "ListAliases" => {
            let (aliases, next) = svc.list_aliases(
                region,
                b.opt_str("KeyId")?.as_deref(),
                b.opt_i64("Limit")?,
                b.opt_str("Marker")?.as_deref(),
            )?;
            let list: Vec<Value> = aliases
                .iter()
                .map(|a| {
                    json!({
                        "AliasName": a.name,
                        "AliasArn": a.arn,
                        "TargetKeyId": a.target_key_id,
                        "CreationDate": epoch(a.creation_ms),
                        "LastUpdatedDate": epoch(a.updated_ms),
                    })
                })
                .collect();
            let mut out = json!({"Aliases": list, "Truncated": next.is_some()});
            if let Some(n) = next {
                out["NextMarker"] = json!(n);
            }
            Ok(out)
        }
        "GetKeyPolicy" => {
            let name = b.opt_str("PolicyName")?;
            let policy = svc.get_key_policy(region, &key()?, name.as_deref())?;
            Ok(json!({"Policy": policy, "PolicyName": name.unwrap_or_else(|| "default".into())}))
        }
        "PutKeyPolicy" => {
            svc.put_key_policy(
                region,
                &key()?,
                b.opt_str("PolicyName")?.as_deref(),
                &b.str("Policy")?,
            )?;
            Ok(json!({}))
        }
        "ListKeyPolicies" => {
            let names = svc.list_key_policies(region, &key()?)?;
            Ok(json!({"PolicyNames": names, "Truncated": false}))
        }
        "EnableKey" => {
            svc.enable_key(region, &key()?)?;
            Ok(json!({}))
        }
        "DisableKey" => {
            svc.disable_key(region, &key()?)?;
            Ok(json!({}))
        }
        "ScheduleKeyDeletion" => {
            let (arn, when, days) =
                svc.schedule_key_deletion(region, &key()?, b.opt_i64("PendingWindowInDays")?)?;
            Ok(json!({
                "KeyId": arn,
                "DeletionDate": epoch(when),
                "KeyState": KeyState::PendingDeletion.as_str(),
                "PendingWindowInDays": days,
            }))
        }
        "CancelKeyDeletion" => {
            let arn = svc.cancel_key_deletion(region, &key()?)?;
            Ok(json!({"KeyId": arn}))
        }
        "EnableKeyRotation" => {
            svc.set_key_rotation(region, &key()?, true, b.opt_i64("RotationPeriodInDays")?)?;
            Ok(json!({}))
        }
        "DisableKeyRotation" => {
            svc.set_key_rotation(region, &key()?, false, None)?;
            Ok(json!({}))
        }
        "GetKeyRotationStatus" => {
            let (enabled, period, arn) = svc.get_key_rotation_status(region, &key()?)?;
            let mut out = json!({"KeyRotationEnabled": enabled, "KeyId": arn});
            if let Some(p) = period {
                out["RotationPeriodInDays"] = json!(p);
            }
            Ok(out)
        }
        "UpdateKeyDescription" => {
            svc.update_key_description(region, &key()?, &b.str("Description")?)?;
            Ok(json!({}))
        }
        "TagResource" => {
            if !b.has("Tags") {
                return Err(missing("Tags"));
            }
            svc.tag_resource(region, &key()?, &b.tags("Tags", "TagKey", "TagValue")?)?;
            Ok(json!({}))
        }
        "UntagResource" => {
            if !b.has("TagKeys") {
                return Err(missing("TagKeys"));
            }
            svc.untag_resource(region, &key()?, &b.strings("TagKeys")?)?;
            Ok(json!({}))
        }
        "ListResourceTags" => {
            let tags = svc.list_resource_tags(region, &key()?)?;
            Ok(json!({"Tags": tags_json(&tags), "Truncated": false}))
        }
        op if NOT_EMULATED.contains(&op) => Err(AwsError::not_implemented("kms", op)),
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
