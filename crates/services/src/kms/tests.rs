use super::*;
use crate::Config;
use cumulo_store::Durability;
use std::collections::BTreeMap;

fn kms() -> KmsService {
    KmsService::new(Arc::new(Store::in_memory().unwrap()), &Config::default()).unwrap()
}

fn ctx(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn every_key_reference_form_resolves() {
    let k = kms();
    let v = k
        .create_key("us-east-1", CreateKeyInput::default())
        .unwrap();
    k.create_alias("us-east-1", "alias/app", v.key_id())
        .unwrap();
    let alias_arn = "arn:aws:kms:us-east-1:000000000000:alias/app";
    for r in [v.key_id(), v.arn(), "alias/app", alias_arn] {
        assert_eq!(
            k.describe_key("us-east-1", r).unwrap().key_id(),
            v.key_id(),
            "{r}"
        );
    }
    // Operations that take no aliases refuse them; other regions do not see the key.
    assert_eq!(
        k.disable_key("us-east-1", "alias/app").unwrap_err().code,
        "NotFoundException"
    );
    assert_eq!(
        k.describe_key("eu-west-1", v.key_id()).unwrap_err().code,
        "NotFoundException"
    );
    assert_eq!(
        k.describe_key("us-east-1", "not-a-key").unwrap_err().code,
        "NotFoundException"
    );
}

#[test]
fn ciphertext_is_bound_to_key_and_context() {
    let k = kms();
    let a = k
        .create_key("us-east-1", CreateKeyInput::default())
        .unwrap();
    let (blob, arn) = k
        .encrypt("us-east-1", a.key_id(), b"hello", &ctx(&[("x", "1")]))
        .unwrap();
    assert_eq!(arn, a.arn());
    let (pt, _) = k
        .decrypt("us-east-1", &blob, &ctx(&[("x", "1")]), None)
        .unwrap();
    assert_eq!(pt, b"hello");
    let e = k
        .decrypt("us-east-1", &blob, &ctx(&[("x", "2")]), None)
        .unwrap_err();
    assert_eq!(e.code, "InvalidCiphertextException");
    let mut tampered = blob.clone();
    if let Some(last) = tampered.last_mut() {
        *last ^= 1;
    }
    assert!(
        k.decrypt("us-east-1", &tampered, &ctx(&[("x", "1")]), None)
            .is_err()
    );
    assert!(k.decrypt("us-east-1", &[1, 2, 3], &ctx(&[]), None).is_err());
}

#[test]
fn key_states_gate_cryptography() {
    let k = kms();
    let v = k
        .create_key("us-east-1", CreateKeyInput::default())
        .unwrap();
    k.disable_key("us-east-1", v.key_id()).unwrap();
    let e = k
        .encrypt("us-east-1", v.key_id(), b"x", &BTreeMap::new())
        .unwrap_err();
    assert_eq!(e.code, "DisabledException");
    k.enable_key("us-east-1", v.key_id()).unwrap();
    k.schedule_key_deletion("us-east-1", v.key_id(), Some(7))
        .unwrap();
    let e = k
        .encrypt("us-east-1", v.key_id(), b"x", &BTreeMap::new())
        .unwrap_err();
    assert_eq!(e.code, "KMSInvalidStateException");
    assert_eq!(
        k.schedule_key_deletion("us-east-1", v.key_id(), Some(6))
            .unwrap_err()
            .code,
        "ValidationException"
    );
}

#[test]
fn keys_and_aliases_survive_reopening_the_data_dir() {
    let dir = tempfile::tempdir().unwrap();
    let (blob, id) = {
        let store = Arc::new(Store::open(dir.path(), Durability::Process).unwrap());
        let k = KmsService::new(store, &Config::default()).unwrap();
        let v = k
            .create_key("us-east-1", CreateKeyInput::default())
            .unwrap();
        k.create_alias("us-east-1", "alias/kept", v.key_id())
            .unwrap();
        let (blob, _) = k
            .encrypt("us-east-1", "alias/kept", b"durable", &BTreeMap::new())
            .unwrap();
        (blob, v.key_id().to_string())
    };
    let store = Arc::new(Store::open(dir.path(), Durability::Process).unwrap());
    let k = KmsService::new(store.clone(), &Config::default()).unwrap();
    assert_eq!(
        k.describe_key("us-east-1", "alias/kept").unwrap().key_id(),
        id
    );
    let (pt, _) = k
        .decrypt("us-east-1", &blob, &BTreeMap::new(), None)
        .unwrap();
    assert_eq!(pt, b"durable");
    // The stored material is wrapped: it is not the key that decrypts.
    let material: Vec<u8> = store
        .read(|c| c.query_row("SELECT material FROM kms_keys", [], |r| r.get(0)))
        .unwrap();
    assert_eq!(material.len(), 12 + 32 + 16);
}
