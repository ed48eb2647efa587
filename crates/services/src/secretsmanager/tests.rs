use super::*;
use crate::Config;
use cumulo_store::Durability;
use ops::{CURRENT, PREVIOUS};

fn service(store: Arc<Store>) -> SecretsManagerService {
    let kms = Arc::new(KmsService::new(store.clone(), &Config::default()).unwrap());
    SecretsManagerService::new(store, &Config::default(), kms).unwrap()
}

fn string(s: &str) -> Option<SecretValueInput> {
    Some(SecretValueInput::String(s.to_string()))
}

fn stages_of(svc: &SecretsManagerService, id: &str) -> Vec<(String, Vec<String>)> {
    svc.describe_secret("us-east-1", id)
        .unwrap()
        .versions
        .into_iter()
        .map(|v| (v.id, v.stages))
        .collect()
}

#[test]
fn awscurrent_moves_and_leaves_awsprevious_behind() {
    let svc = service(Arc::new(Store::in_memory().unwrap()));
    let (_, _, v1) = svc
        .create_secret(
            "us-east-1",
            CreateSecretInput {
                name: "s".into(),
                value: string("1"),
                ..Default::default()
            },
        )
        .unwrap();
    let v1 = v1.unwrap();
    let (_, _, v2, _) = svc
        .put_secret_value("us-east-1", "s", None, string("2"), None)
        .unwrap();
    let (_, _, v3, _) = svc
        .put_secret_value("us-east-1", "s", None, string("3"), None)
        .unwrap();
    assert_eq!(
        stages_of(&svc, "s"),
        vec![
            (v1.clone(), vec![]),
            (v2.clone(), vec![PREVIOUS.to_string()]),
            (v3.clone(), vec![CURRENT.to_string()]),
        ]
    );
    // Moving AWSCURRENT back by hand: the holder must be named, and it becomes AWSPREVIOUS.
    assert!(
        svc.update_secret_version_stage("us-east-1", "s", CURRENT, None, Some(&v1))
            .is_err()
    );
    svc.update_secret_version_stage("us-east-1", "s", CURRENT, Some(&v3), Some(&v1))
        .unwrap();
    assert_eq!(
        stages_of(&svc, "s"),
        vec![
            (v1, vec![CURRENT.to_string()]),
            (v2, vec![]),
            (v3, vec![PREVIOUS.to_string()]),
        ]
    );
    let got = svc.get_secret_value("us-east-1", "s", None, None).unwrap();
    assert_eq!(got.value, SecretValueInput::String("1".into()));
}

#[test]
fn secrets_survive_reopening_and_are_stored_sealed() {
    let dir = tempfile::tempdir().unwrap();
    {
        let svc = service(Arc::new(
            Store::open(dir.path(), Durability::Process).unwrap(),
        ));
        svc.create_secret(
            "us-east-1",
            CreateSecretInput {
                name: "kept".into(),
                value: string("plain-text-value"),
                tags: vec![("k".into(), "v".into())],
                ..Default::default()
            },
        )
        .unwrap();
    }
    let store = Arc::new(Store::open(dir.path(), Durability::Process).unwrap());
    let svc = service(store.clone());
    let got = svc
        .get_secret_value("us-east-1", "kept", None, None)
        .unwrap();
    assert_eq!(
        got.value,
        SecretValueInput::String("plain-text-value".into())
    );
    let record: String = store
        .read(|c| {
            c.query_row("SELECT record FROM secretsmanager_secrets", [], |r| {
                r.get(0)
            })
        })
        .unwrap();
    assert!(record.contains("\"k\""));
    assert!(!record.contains("plain-text-value"));
}
