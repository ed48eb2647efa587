//! Typed-operation tests of Lambda's bookkeeping (invocation is covered end to end in
//! tests/e2e/test_lambda.py, where real node / python3 processes run).

use super::LambdaService;
use super::code::single_file_zip;
use super::config::PermissionInput;
use super::model::{CodeInput, CreateFunctionInput};
use crate::Config;
use cumulo_store::Store;
use std::collections::BTreeMap;
use std::sync::Arc;

fn service() -> LambdaService {
    let store = Arc::new(Store::in_memory().expect("store"));
    let config = Config::default();
    let sqs = Arc::new(crate::sqs::SqsService::new(store.clone(), &config).expect("sqs"));
    let s3 = Arc::new(crate::s3::S3Service::new(store.clone(), &config).expect("s3"));
    let logs = Arc::new(crate::logs::LogsService::new(store.clone(), &config).expect("logs"));
    let ddb = Arc::new(crate::dynamodb::DynamoDbService::new(store.clone(), &config).expect("ddb"));
    let sns =
        Arc::new(crate::sns::SnsService::new(store.clone(), &config, sqs.clone()).expect("sns"));
    LambdaService::new(store, &config, s3, sqs, logs, ddb, sns).expect("lambda")
}

fn input(name: &str, body: &str) -> CreateFunctionInput {
    CreateFunctionInput {
        name: name.into(),
        runtime: Some("python3.11".into()),
        handler: Some("index.handler".into()),
        role: "arn:aws:iam::000000000000:role/r".into(),
        code: CodeInput::Zip(single_file_zip("index.py", body.as_bytes()).unwrap()),
        ..Default::default()
    }
}

#[test]
fn create_is_active_outside_a_runtime_and_refuses_duplicates() {
    let svc = service();
    let core = svc.core();
    let (f, v) = core
        .create_function("us-east-1", input("f", "x = 1"))
        .unwrap();
    assert_eq!((f.name.as_str(), v.as_str()), ("f", "$LATEST"));
    assert_eq!(svc.function("us-east-1", "f").unwrap().state, "Active");
    let dup = core
        .create_function("us-east-1", input("f", "x = 1"))
        .unwrap_err();
    assert_eq!(dup.code, "ResourceConflictException");
    // Another region is another namespace.
    core.create_function("eu-west-1", input("f", "x = 1"))
        .unwrap();
}

#[test]
fn bad_settings_are_refused_before_anything_is_stored() {
    let svc = service();
    let core = svc.core();
    let mut i = input("g", "");
    i.timeout = Some(0);
    assert_eq!(
        core.create_function("us-east-1", i).unwrap_err().code,
        "ValidationException"
    );
    let mut i = input("g", "");
    i.environment = Some(BTreeMap::from([("AWS_REGION".into(), "x".into())]));
    assert_eq!(
        core.create_function("us-east-1", i).unwrap_err().code,
        "InvalidParameterValueException"
    );
    let mut i = input("g", "");
    i.code = CodeInput::Zip(b"junk".to_vec());
    assert_eq!(
        core.create_function("us-east-1", i).unwrap_err().code,
        "InvalidParameterValueException"
    );
    assert!(svc.list_functions("us-east-1").is_empty());
}

#[test]
fn publishing_unchanged_code_returns_the_same_version() {
    let svc = service();
    let core = svc.core();
    core.create_function("us-east-1", input("v", "a = 1"))
        .unwrap();
    assert_eq!(
        svc.publish_version("us-east-1", "v", None, None, None)
            .unwrap()
            .1,
        "1"
    );
    assert_eq!(
        svc.publish_version("us-east-1", "v", None, None, None)
            .unwrap()
            .1,
        "1"
    );
    let code = CodeInput::Zip(single_file_zip("index.py", b"a = 2").unwrap());
    core.update_function_code("us-east-1", "v", &code, true, None)
        .unwrap();
    let f = svc.function("us-east-1", "v").unwrap();
    assert_eq!(f.versions.keys().copied().collect::<Vec<_>>(), vec![1, 2]);
    let wrong_sha = svc.publish_version("us-east-1", "v", None, Some("nope"), None);
    assert_eq!(
        wrong_sha.unwrap_err().code,
        "InvalidParameterValueException"
    );
}

#[test]
fn aliases_resolve_to_their_version() {
    let svc = service();
    let core = svc.core();
    core.create_function("us-east-1", input("a", "a = 1"))
        .unwrap();
    svc.publish_version("us-east-1", "a", None, None, None)
        .unwrap();
    svc.create_alias("us-east-1", "a", "live", "1", None, BTreeMap::new())
        .unwrap();
    let (_, r) = svc.resolve("us-east-1", "a:live", None).unwrap();
    assert_eq!(
        (r.version.as_str(), r.alias.as_deref()),
        ("1", Some("live"))
    );
    let numeric = svc.create_alias("us-east-1", "a", "7", "1", None, BTreeMap::new());
    assert_eq!(numeric.unwrap_err().code, "ValidationException");
    let missing = svc.resolve("us-east-1", "a", Some("nope")).unwrap_err();
    assert_eq!(missing.code, "ResourceNotFoundException");
}

#[test]
fn permissions_are_statements_of_the_function_policy() {
    let svc = service();
    svc.core()
        .create_function("us-east-1", input("p", "a = 1"))
        .unwrap();
    let st = svc
        .add_permission(
            "us-east-1",
            "p",
            PermissionInput {
                statement_id: "acct".into(),
                action: "lambda:InvokeFunction".into(),
                principal: "123456789012".into(),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(st["Principal"]["AWS"], "arn:aws:iam::123456789012:root");
    let (policy, _) = svc.get_policy("us-east-1", "p", None).unwrap();
    assert_eq!(policy["Statement"][0]["Sid"], "acct");
    svc.remove_permission("us-east-1", "p", "acct", None)
        .unwrap();
    let gone = svc
        .remove_permission("us-east-1", "p", "acct", None)
        .unwrap_err();
    assert_eq!(gone.code, "ResourceNotFoundException");
}

#[test]
fn state_is_reloaded_from_the_store() {
    let dir = std::env::temp_dir().join(format!("cumulo-lambda-{}", uuid::Uuid::new_v4()));
    let config = Config::default();
    let open = || {
        let store = Arc::new(Store::open(&dir, cumulo_store::Durability::Process).unwrap());
        let sqs = Arc::new(crate::sqs::SqsService::new(store.clone(), &config).unwrap());
        let s3 = Arc::new(crate::s3::S3Service::new(store.clone(), &config).unwrap());
        let logs = Arc::new(crate::logs::LogsService::new(store.clone(), &config).unwrap());
        let ddb = Arc::new(crate::dynamodb::DynamoDbService::new(store.clone(), &config).unwrap());
        let sns =
            Arc::new(crate::sns::SnsService::new(store.clone(), &config, sqs.clone()).unwrap());
        LambdaService::new(store, &config, s3, sqs, logs, ddb, sns).unwrap()
    };
    {
        let svc = open();
        svc.core()
            .create_function("us-east-1", input("kept", "a = 1"))
            .unwrap();
        svc.publish_version("us-east-1", "kept", Some("first"), None, None)
            .unwrap();
    }
    let svc = open();
    let f = svc.function("us-east-1", "kept").unwrap();
    assert_eq!(f.state, "Active");
    assert_eq!(f.versions[&1].description, "first");
    std::fs::remove_dir_all(&dir).unwrap();
}
