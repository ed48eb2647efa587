//! Dynamic references: recognised, parsed into their typed form, never rescanned.

use cumulo_template::dynref::{parse_dynamic_reference, references_in};
use cumulo_template::{DynamicReference, find_dynamic_references};
use serde_json::json;

#[test]
fn ssm_and_ssm_secure() {
    assert_eq!(
        parse_dynamic_reference("{{resolve:ssm:/app/db/host}}"),
        Ok(DynamicReference::Ssm {
            name: "/app/db/host".into(),
            version: None
        })
    );
    assert_eq!(
        parse_dynamic_reference("{{resolve:ssm:name:3}}"),
        Ok(DynamicReference::Ssm {
            name: "name".into(),
            version: Some(3)
        })
    );
    assert_eq!(
        parse_dynamic_reference("{{resolve:ssm-secure:pw:1}}"),
        Ok(DynamicReference::SsmSecure {
            name: "pw".into(),
            version: Some(1)
        })
    );
    assert_eq!(
        parse_dynamic_reference("{{resolve:ssm:arn:aws:ssm:us-east-1:123456789012:parameter/p:2}}"),
        Ok(DynamicReference::Ssm {
            name: "arn:aws:ssm:us-east-1:123456789012:parameter/p".into(),
            version: Some(2)
        })
    );
    assert!(parse_dynamic_reference("{{resolve:ssm:name:latest}}").is_err());
    assert!(parse_dynamic_reference("{{resolve:ssm:}}").is_err());
}

#[test]
fn secrets_manager_fields() {
    assert_eq!(
        parse_dynamic_reference("{{resolve:secretsmanager:MySecret}}"),
        Ok(DynamicReference::SecretsManager {
            secret_id: "MySecret".into(),
            json_key: None,
            version_stage: None,
            version_id: None
        })
    );
    assert_eq!(
        parse_dynamic_reference(
            "{{resolve:secretsmanager:MySecret:SecretString:password:AWSPREVIOUS}}"
        ),
        Ok(DynamicReference::SecretsManager {
            secret_id: "MySecret".into(),
            json_key: Some("password".into()),
            version_stage: Some("AWSPREVIOUS".into()),
            version_id: None
        })
    );
    assert_eq!(
        parse_dynamic_reference(
            "{{resolve:secretsmanager:arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf:SecretString:user::v-1}}"
        ),
        Ok(DynamicReference::SecretsManager {
            secret_id: "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf".into(),
            json_key: Some("user".into()),
            version_stage: None,
            version_id: Some("v-1".into())
        })
    );
    assert!(parse_dynamic_reference("{{resolve:secretsmanager:s:SecretBinary}}").is_err());
    assert!(
        parse_dynamic_reference("{{resolve:secretsmanager:s:SecretString:k:AWSCURRENT:v1}}")
            .is_err()
    );
    assert!(parse_dynamic_reference("{{resolve:s3:bucket/key}}").is_err());
}

#[test]
fn finds_every_reference_with_its_path() {
    let v = json!({
        "Env": [{"Value": "user={{resolve:ssm:u}} pass={{resolve:ssm-secure:p}}"}],
        "Plain": "no reference {{here}}",
    });
    let found = find_dynamic_references(&v).expect("well formed");
    let got: Vec<(&str, &str)> = found
        .iter()
        .map(|f| (f.path.as_str(), f.text.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            ("/Env/0/Value", "{{resolve:ssm:u}}"),
            ("/Env/0/Value", "{{resolve:ssm-secure:p}}")
        ]
    );
    let bad = find_dynamic_references(&json!({"P": "{{resolve:ssm:n:x}}"})).expect_err("malformed");
    assert_eq!(
        bad[0].message,
        "Incorrect format is used in the following dynamic reference: [{{resolve:ssm:n:x}}]"
    );
}

#[test]
fn unterminated_references_are_not_references() {
    assert!(references_in("{{resolve:ssm:x").is_empty());
    assert_eq!(
        references_in("a{{resolve:ssm:x}}b}}"),
        ["{{resolve:ssm:x}}"]
    );
}
