//! In-process tests of the typed operations (what a CloudFormation provider calls), including
//! reloading the index from the store.

use super::*;
use crate::Config;
use cumulo_store::Store;

fn service() -> (Arc<Store>, S3Service) {
    let store = Arc::new(Store::in_memory().unwrap());
    let svc = S3Service::new(store.clone(), &Config::default()).unwrap();
    (store, svc)
}

fn put(svc: &S3Service, bucket: &str, key: &str, body: &[u8]) -> PutOutput {
    svc.put_object(
        bucket,
        PutInput {
            key: key.into(),
            body: bytes::Bytes::copy_from_slice(body),
            ..Default::default()
        },
    )
    .unwrap()
}

fn body(svc: &S3Service, bucket: &str, key: &str, version: Option<&str>) -> Vec<u8> {
    svc.get_object(bucket, key, version, None, &Conditions::default())
        .unwrap()
        .unwrap()
        .body
}

#[tokio::test]
async fn versions_and_delete_markers() {
    let (_, svc) = service();
    svc.create_bucket("us-east-1", "bkt", None).await.unwrap();
    put(&svc, "bkt", "k", b"null-version");
    svc.put_bucket_versioning("bkt", "Enabled").await.unwrap();
    let v1 = put(&svc, "bkt", "k", b"one").version_id.unwrap();
    let marker = svc.delete_object("bkt", "k", None).unwrap();
    assert!(marker.delete_marker);
    assert_eq!(
        svc.head_object("bkt", "k", None).unwrap_err().code,
        "NoSuchKey"
    );
    assert_eq!(body(&svc, "bkt", "k", Some(&v1)), b"one");
    assert_eq!(body(&svc, "bkt", "k", Some(NULL_VERSION)), b"null-version");
    let input = ListInput {
        max_keys: 1000,
        ..Default::default()
    };
    let versions = svc.list_object_versions("bkt", &input, None).unwrap();
    let kinds: Vec<_> = versions
        .versions
        .iter()
        .map(|(m, latest)| (m.delete_marker, *latest))
        .collect();
    assert_eq!(kinds, vec![(true, true), (false, false), (false, false)]);
    assert!(svc.list_objects("bkt", &input).unwrap().entries.is_empty());
    svc.delete_object("bkt", "k", marker.version_id.as_deref())
        .unwrap();
    assert_eq!(body(&svc, "bkt", "k", None), b"one");
    assert_eq!(
        svc.delete_bucket("bkt").await.unwrap_err().code,
        "BucketNotEmpty"
    );
}

#[tokio::test]
async fn state_reloads_from_the_store() {
    let (store, svc) = service();
    svc.create_bucket("us-east-1", "bkt", None).await.unwrap();
    put(&svc, "bkt", "a/x", b"1");
    put(&svc, "bkt", "a/y", b"22");
    svc.put_bucket_tagging("bkt", &[("t".into(), "v".into())])
        .await
        .unwrap();
    let (upload, _) = svc
        .create_multipart_upload(
            "bkt",
            ObjectMeta {
                key: "mp".into(),
                ..Default::default()
            },
            None,
            false,
        )
        .unwrap();
    svc.upload_part("bkt", "mp", &upload, 1, b"part", &[])
        .unwrap();
    drop(svc);
    let svc = S3Service::new(store, &Config::default()).unwrap();
    assert_eq!(body(&svc, "bkt", "a/y", None), b"22");
    assert_eq!(
        svc.get_bucket_tagging("bkt").unwrap(),
        vec![("t".to_string(), "v".to_string())]
    );
    let (page, _) = svc.list_parts("bkt", "mp", &upload, 0, 10).unwrap();
    assert_eq!(page.parts.len(), 1);
    let (meta, _) = svc
        .complete_multipart_upload(
            "bkt",
            "mp",
            &upload,
            &[CompletedPart {
                number: 1,
                etag: page.parts[&1].etag.clone(),
                checksum: None,
            }],
            &[],
        )
        .unwrap();
    assert!(meta.etag.ends_with("-1"));
    assert_eq!(body(&svc, "bkt", "mp", None), b"part");
}

#[tokio::test]
async fn multipart_rules() {
    let (_, svc) = service();
    svc.create_bucket("us-east-1", "bkt", None).await.unwrap();
    let template = ObjectMeta {
        key: "k".into(),
        ..Default::default()
    };
    let (id, _) = svc
        .create_multipart_upload("bkt", template, None, false)
        .unwrap();
    let small = svc.upload_part("bkt", "k", &id, 1, b"small", &[]).unwrap();
    let last = svc.upload_part("bkt", "k", &id, 2, b"last", &[]).unwrap();
    let part = |p: &PartMeta| CompletedPart {
        number: p.number,
        etag: p.etag.clone(),
        checksum: None,
    };
    let e = svc
        .complete_multipart_upload("bkt", "k", &id, &[part(&small), part(&last)], &[])
        .unwrap_err();
    assert_eq!(e.code, "EntityTooSmall");
    assert_eq!(
        svc.upload_part("bkt", "other-key", &id, 1, b"x", &[])
            .unwrap_err()
            .code,
        "NoSuchUpload"
    );
    assert_eq!(
        svc.upload_part("bkt", "k", &id, 0, b"x", &[])
            .unwrap_err()
            .code,
        "InvalidArgument"
    );
    svc.abort_multipart_upload("bkt", "k", &id).unwrap();
    assert_eq!(
        svc.list_parts("bkt", "k", &id, 0, 10).unwrap_err().code,
        "NoSuchUpload"
    );
}

#[tokio::test]
async fn copy_keeps_body_and_replaces_metadata() {
    let (_, svc) = service();
    svc.create_bucket("us-east-1", "bkt", None).await.unwrap();
    put(&svc, "bkt", "src", b"payload");
    let (meta, src_version, _) = svc
        .copy_object(
            "bkt",
            CopyInput {
                src_bucket: "bkt".into(),
                src_key: "src".into(),
                key: "dst".into(),
                replace_metadata: true,
                user_meta: vec![("a".into(), "1".into())],
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(src_version, NULL_VERSION);
    assert_eq!(meta.user_meta, vec![("a".to_string(), "1".to_string())]);
    assert_eq!(body(&svc, "bkt", "dst", None), b"payload");
    let e = svc
        .copy_object(
            "bkt",
            CopyInput {
                src_bucket: "bkt".into(),
                src_key: "src".into(),
                key: "src".into(),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(e.code, "InvalidRequest");
}

#[tokio::test]
async fn bucket_configs_and_errors() {
    let (_, svc) = service();
    assert_eq!(
        svc.create_bucket("eu-west-1", "bkt", None)
            .await
            .unwrap_err()
            .code,
        "IllegalLocationConstraintException"
    );
    svc.create_bucket("eu-west-1", "bkt", Some("eu-west-1"))
        .await
        .unwrap();
    assert_eq!(
        svc.create_bucket("eu-west-1", "bkt", Some("eu-west-1"))
            .await
            .unwrap_err()
            .code,
        "BucketAlreadyOwnedByYou"
    );
    assert_eq!(svc.bucket_region("bkt").unwrap(), "eu-west-1");
    assert_eq!(
        svc.get_bucket_config("bkt", ConfigKind::Cors)
            .unwrap_err()
            .code,
        "NoSuchCORSConfiguration"
    );
    assert!(
        svc.get_bucket_config("bkt", ConfigKind::Encryption)
            .unwrap()
            .contains("AES256")
    );
    let cors = parse_xml(b"<CORSConfiguration><CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule></CORSConfiguration>").unwrap();
    svc.put_bucket_config("bkt", ConfigKind::Cors, &cors)
        .await
        .unwrap();
    assert!(
        svc.get_bucket_config("bkt", ConfigKind::Cors)
            .unwrap()
            .starts_with("<CORSConfiguration xmlns=")
    );
    assert_eq!(
        svc.put_bucket_policy("bkt", "{not json")
            .await
            .unwrap_err()
            .code,
        "MalformedPolicy"
    );
    svc.delete_bucket("bkt").await.unwrap();
    assert_eq!(svc.bucket_region("bkt").unwrap_err().code, "NoSuchBucket");
}

#[tokio::test]
async fn batch_delete_applies_in_order_within_one_commit() {
    let (store, svc) = service();
    svc.create_bucket("us-east-1", "bkt", None).await.unwrap();
    svc.put_bucket_versioning("bkt", "Enabled").await.unwrap();
    let v = put(&svc, "bkt", "k", b"1").version_id.unwrap();
    // Two deletes of the same key: two markers; then removing the version itself.
    let entries = svc
        .delete_objects(
            "bkt",
            &[
                ("k".into(), None),
                ("k".into(), None),
                ("k".into(), Some(v.clone())),
                ("k".into(), Some("bad id!".into())),
            ],
        )
        .unwrap();
    let results: Vec<_> = entries
        .iter()
        .map(|e| e.result.as_ref().map(|d| d.delete_marker))
        .collect();
    assert_eq!(results[..3], [Ok(true), Ok(true), Ok(false)]);
    assert_eq!(
        entries[3].result.as_ref().unwrap_err().code,
        "InvalidArgument"
    );
    let input = ListInput {
        max_keys: 1000,
        ..Default::default()
    };
    let versions = svc.list_object_versions("bkt", &input, None).unwrap();
    assert_eq!(versions.versions.len(), 2);
    assert!(versions.versions.iter().all(|(m, _)| m.delete_marker));
    // The index and the store agree after a reload.
    drop(svc);
    let svc = S3Service::new(store, &Config::default()).unwrap();
    assert_eq!(
        svc.list_object_versions("bkt", &input, None).unwrap(),
        versions
    );
}
