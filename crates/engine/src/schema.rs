//! createOnly / readOnly / primaryIdentifier / tagging per resource type, from the table
//! `scripts/gen-resource-schemas.py` derives from the CloudFormation registry schemas.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::LazyLock;

const TABLE: &str = include_str!("../resource-schemas.txt");

#[derive(Debug, Default)]
pub(crate) struct TypeSchema {
    /// Property paths (`Name`, `KeySchema`, `Tags/*/Key`) whose change forces a replacement.
    pub create_only: Vec<Vec<String>>,
    pub read_only: Vec<String>,
    pub primary_identifier: Vec<String>,
    pub tagging: Tagging,
}

/// How CloudFormation tags a resource type: the registry schema's `tagging` block, AWS's own
/// declaration per type (`taggable`: stack-level tags reach it; `cloudFormationSystemTags`:
/// CloudFormation also adds `aws:cloudformation:stack-name`, `stack-id` and `logical-id`).
/// S3 buckets, SNS topics, SSM parameters, Lambda functions and event source mappings, log
/// groups, Secrets Manager secrets, EventBridge rules and buses and ECR repositories get the
/// system tags; SQS queues, DynamoDB tables, KMS keys and IAM roles and users take stack tags
/// only, as the CloudFormation user guide's "Resource tags" page and the recorded answers say.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Tagging {
    /// Not taggable (or not in the registry): stack tags do not reach it.
    #[default]
    None,
    /// Stack-level tags only.
    Stack,
    /// Stack-level tags and CloudFormation's system tags.
    System,
}

impl Tagging {
    pub fn taggable(self) -> bool {
        self != Tagging::None
    }
}

/// How CloudFormation tags resources of `resource_type`.
pub fn tagging(resource_type: &str) -> Tagging {
    schema(resource_type).map_or(Tagging::None, |s| s.tagging)
}

static SCHEMAS: LazyLock<HashMap<&'static str, TypeSchema>> = LazyLock::new(|| {
    let split = |s: &str| -> Vec<String> {
        s.split(',')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect()
    };
    TABLE
        .lines()
        .filter_map(|line| {
            let mut parts = line.split('|');
            let name = parts.next()?;
            let mut schema = TypeSchema::default();
            for part in parts {
                match part.split_once('=') {
                    Some(("c", v)) => {
                        schema.create_only = split(v)
                            .into_iter()
                            .map(|p| p.split('/').map(str::to_string).collect())
                            .collect()
                    }
                    Some(("r", v)) => schema.read_only = split(v),
                    Some(("p", v)) => schema.primary_identifier = split(v),
                    Some(("t", "stack")) => schema.tagging = Tagging::Stack,
                    Some(("t", "system")) => schema.tagging = Tagging::System,
                    _ => {}
                }
            }
            Some((name, schema))
        })
        .collect()
});

pub(crate) fn schema(resource_type: &str) -> Option<&'static TypeSchema> {
    SCHEMAS.get(resource_type)
}

/// The Fn::GetAtt attributes the registry schema gives a type, read as cfn-lint reads them:
/// every readOnlyProperty, nested ones joined with `.` (`Endpoint.Address`; `*` stands for a
/// list's items). Empty for a type the registry does not know.
pub fn getatt_attributes(resource_type: &str) -> Vec<String> {
    schema(resource_type)
        .map(|s| s.read_only.iter().map(|p| p.replace('/', ".")).collect())
        .unwrap_or_default()
}

/// The values at a property path (`*` walks every list item or object member).
fn values_at<'a>(v: &'a Value, path: &[String], out: &mut Vec<&'a Value>) {
    let Some((first, rest)) = path.split_first() else {
        out.push(v);
        return;
    };
    match (first.as_str(), v) {
        ("*", Value::Array(items)) => items.iter().for_each(|i| values_at(i, rest, out)),
        ("*", Value::Object(o)) => o.values().for_each(|i| values_at(i, rest, out)),
        (key, Value::Object(o)) => {
            if let Some(i) = o.get(key) {
                values_at(i, rest, out)
            }
        }
        _ => {}
    }
}

/// The top-level properties whose change forces a replacement of this resource.
pub(crate) fn replacing_properties(resource_type: &str, old: &Value, new: &Value) -> Vec<String> {
    let Some(s) = schema(resource_type) else {
        return Vec::new();
    };
    let mut out: Vec<String> = Vec::new();
    for path in &s.create_only {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        values_at(old, path, &mut a);
        values_at(new, path, &mut b);
        if a != b
            && let Some(top) = path.first()
            && !out.contains(top)
        {
            out.push(top.clone());
        }
    }
    out
}

/// Whether a top-level property is createOnly (or has a createOnly part) for the type.
pub(crate) fn is_create_only(resource_type: &str, property: &str) -> bool {
    schema(resource_type).is_some_and(|s| {
        s.create_only
            .iter()
            .any(|p| p.first().is_some_and(|f| f == property))
    })
}

/// A replacement AWS refuses: a createOnly `...Name` property set, and unchanged, so the new
/// resource would collide with the old one. Returns the name.
pub(crate) fn custom_name_conflict(
    resource_type: &str,
    old: &Value,
    new: &Value,
) -> Option<String> {
    let s = schema(resource_type)?;
    let names: Vec<&str> = s
        .create_only
        .iter()
        .filter(|p| p.len() == 1 && p[0].ends_with("Name"))
        .map(|p| p[0].as_str())
        .filter(|n| new.get(n).is_some())
        .collect();
    // A name is an identity only as a whole: a log stream renamed inside the same log group is
    // a different resource, so one changed name part means the replacement can coexist.
    if names.iter().any(|n| old.get(n) != new.get(n)) {
        return None;
    }
    names
        .first()
        .and_then(|n| new.get(n))
        .map(crate::resolve::value_text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_name_conflicts_only_when_every_name_part_is_unchanged() {
        let t = "AWS::Logs::LogStream";
        let old = json!({"LogGroupName": "g", "LogStreamName": "a"});
        let renamed = json!({"LogGroupName": "g", "LogStreamName": "b"});
        assert_eq!(custom_name_conflict(t, &old, &renamed), None);
        assert!(custom_name_conflict(t, &old, &old).is_some());
        let b = "AWS::S3::Bucket";
        let named = json!({"BucketName": "x", "ObjectLockEnabled": true});
        let same = json!({"BucketName": "x", "ObjectLockEnabled": false});
        assert!(custom_name_conflict(b, &named, &same).is_some());
        assert_eq!(custom_name_conflict(b, &json!({}), &json!({})), None);
    }

    #[test]
    fn create_only_paths_decide_replacement() {
        let q = "AWS::SQS::Queue";
        assert_eq!(
            replacing_properties(
                q,
                &json!({"QueueName": "a", "DelaySeconds": 1}),
                &json!({"QueueName": "b", "DelaySeconds": 1})
            ),
            vec!["QueueName"]
        );
        assert!(
            replacing_properties(q, &json!({"DelaySeconds": 1}), &json!({"DelaySeconds": 2}))
                .is_empty()
        );
        // A createOnly property appearing or disappearing counts as a change.
        assert_eq!(
            replacing_properties(q, &json!({}), &json!({"FifoQueue": true})),
            vec!["FifoQueue"]
        );
        // Unknown types never replace on their own.
        assert!(replacing_properties("Custom::X", &json!({"A": 1}), &json!({"A": 2})).is_empty());
        assert!(is_create_only("AWS::S3::Bucket", "BucketName"));
        assert!(!is_create_only("AWS::S3::Bucket", "Tags"));
    }

    #[test]
    fn tagging_is_per_type_as_the_registry_declares() {
        for t in [
            "AWS::S3::Bucket",
            "AWS::SNS::Topic",
            "AWS::SSM::Parameter",
            "AWS::Lambda::Function",
            "AWS::Logs::LogGroup",
            "AWS::SecretsManager::Secret",
            "AWS::ECR::Repository",
        ] {
            assert_eq!(tagging(t), Tagging::System, "{t}");
        }
        for t in [
            "AWS::SQS::Queue",
            "AWS::DynamoDB::Table",
            "AWS::KMS::Key",
            "AWS::IAM::Role",
        ] {
            assert_eq!(tagging(t), Tagging::Stack, "{t}");
        }
        for t in ["AWS::SQS::QueuePolicy", "AWS::Lambda::Version", "Custom::X"] {
            assert_eq!(tagging(t), Tagging::None, "{t}");
        }
    }

    #[test]
    fn table_covers_the_registry() {
        assert!(SCHEMAS.len() > 1000);
        let ssm = schema("AWS::SSM::Parameter").unwrap();
        assert_eq!(ssm.primary_identifier, vec!["Name"]);
        assert_eq!(
            custom_name_conflict(
                "AWS::SQS::Queue",
                &json!({"QueueName": "q", "FifoQueue": false}),
                &json!({"QueueName": "q", "FifoQueue": true})
            ),
            Some("q".to_string())
        );
    }
}
