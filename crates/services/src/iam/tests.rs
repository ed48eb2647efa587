//! Typed-operation tests: what the wire tests cannot see directly (reload from the store, the
//! relations kept on one side only).

use super::*;
use crate::Config;
use cumulo_store::Store;

const ACCT: &str = "000000000000";
const TRUST: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;
const DOC: &str =
    r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"*"}]}"#;

fn role(name: &str) -> CreateRoleInput {
    CreateRoleInput {
        name: name.to_string(),
        assume_role_policy: TRUST.to_string(),
        ..Default::default()
    }
}

#[test]
fn state_is_reloaded_from_the_store() {
    let store = Arc::new(Store::in_memory().expect("store"));
    let svc = IamService::new(store.clone(), &Config::default()).expect("iam");
    let r = svc.create_role(ACCT, role("Reloaded")).expect("role");
    svc.put_inline_policy(ACCT, PrincipalKind::Role, "reloaded", "p", DOC)
        .expect("put");
    let p = svc
        .create_policy(
            ACCT,
            CreatePolicyInput {
                name: "pol".into(),
                document: DOC.into(),
                ..Default::default()
            },
        )
        .expect("policy");
    svc.attach_policy(ACCT, PrincipalKind::Role, "Reloaded", &p.arn)
        .expect("attach");
    svc.create_user(ACCT, "u", None, None, &[]).expect("user");
    svc.create_group(ACCT, "g", None).expect("group");
    svc.add_user_to_group(ACCT, "g", "u").expect("member");
    svc.create_instance_profile(ACCT, "ip", None, &[])
        .expect("profile");
    svc.add_role_to_instance_profile(ACCT, "ip", "Reloaded")
        .expect("add");
    drop(svc);

    let svc = IamService::new(store, &Config::default()).expect("iam again");
    assert_eq!(svc.get_role(ACCT, "reloaded").expect("role"), {
        let mut r = r;
        r.inline.insert("p".into(), DOC.into());
        r.attached.push(p.arn.clone());
        r
    });
    assert_eq!(
        svc.get_policy(ACCT, &p.arn)
            .expect("policy")
            .attachment_count,
        1
    );
    let (_, users) = svc.get_group(ACCT, "g").expect("group");
    assert_eq!(users.len(), 1);
    let (_, roles) = svc.get_instance_profile(ACCT, "ip").expect("profile");
    assert_eq!(roles[0].name, "Reloaded");
    // Accounts are separate.
    assert!(svc.get_role("111111111111", "Reloaded").is_err());
}

#[test]
fn a_refused_mutation_changes_nothing() {
    let svc = IamService::new(
        Arc::new(Store::in_memory().expect("store")),
        &Config::default(),
    )
    .expect("iam");
    svc.create_role(ACCT, role("r")).expect("role");
    svc.put_inline_policy(ACCT, PrincipalKind::Role, "r", "p", DOC)
        .expect("put");
    let before = svc.get_role(ACCT, "r").expect("role");
    let e = svc.delete_role(ACCT, "r").expect_err("conflict");
    assert_eq!(
        (e.code.as_str(), e.status.as_u16()),
        ("DeleteConflict", 409)
    );
    let e = svc
        .put_inline_policy(ACCT, PrincipalKind::Role, "r", "q", "{")
        .expect_err("malformed");
    assert_eq!(e.code, "MalformedPolicyDocument");
    let e = svc
        .attach_policy(ACCT, PrincipalKind::Role, "r", "not-an-arn")
        .expect_err("invalid");
    assert_eq!(e.code, "InvalidInput");
    assert_eq!(svc.get_role(ACCT, "r").expect("role"), before);
}

#[test]
fn ten_attached_policies_at_most() {
    let svc = IamService::new(
        Arc::new(Store::in_memory().expect("store")),
        &Config::default(),
    )
    .expect("iam");
    svc.create_user(ACCT, "u", None, None, &[]).expect("user");
    for i in 0..10 {
        svc.attach_policy(
            ACCT,
            PrincipalKind::User,
            "u",
            &format!("arn:aws:iam::aws:policy/P{i}"),
        )
        .expect("attach");
    }
    let e = svc
        .attach_policy(
            ACCT,
            PrincipalKind::User,
            "u",
            "arn:aws:iam::aws:policy/P10",
        )
        .expect_err("quota");
    assert_eq!(e.message, "Cannot exceed quota for PoliciesPerUser: 10");
}
