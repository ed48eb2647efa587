//! The tags CloudFormation puts on what it creates: the stack-level tags, on every type that
//! takes tags, and its own `aws:cloudformation:stack-name`, `stack-id` and `logical-id`, on the
//! types whose registry schema says `cloudFormationSystemTags` (one table for both, derived from
//! AWS's registry schemas: [`cumulo_engine::tagging`]). Sources: the CloudFormation user guide's
//! "Resource tags" page (stack tags reach every resource that supports tags, plus the three
//! `aws:cloudformation:*` tags) and each type's schema `tagging` block, which the recorded AWS
//! answers agree with (an event source mapping made by a stack lists all three).
//!
//! The `aws:` prefix is reserved: the services refuse it from users ([`is_system`]) and do not
//! count such tags against their tag limits, as AWS does not; only providers set them, through
//! each service's `*_system_tags` operation.

use cumulo_engine::{ProviderContext, Tagging};

/// Whether a tag key is in the namespace only AWS sets (`aws:`, any case).
pub(crate) fn is_system(key: &str) -> bool {
    key.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("aws:"))
}

/// The message Lambda, EventBridge and ECR refuse a user's `aws:` tag key with, each under its
/// own error code (InvalidParameterValueException, ValidationException,
/// InvalidTagParameterException). Neither the recordings nor these services' API references
/// give the text; this is the wording AWS's shared tagging layer answers other services'
/// TagResource and CloudFormation's CreateStack with (reported verbatim in public issues, e.g.
/// aws-quickstart/quickstart-amazon-eks#42), so it is the closest AWS source, not a recording
/// of these three services.
pub(crate) const RESERVED_KEY: &str =
    "aws: prefixed tag key names are not allowed for external use.";

/// The first of `keys` in the reserved namespace, which only AWS itself may set.
pub(crate) fn first_reserved<'a>(keys: impl IntoIterator<Item = &'a String>) -> Option<&'a String> {
    keys.into_iter().find(|k| is_system(k))
}

/// How many of `keys` count against a service's tag limit (system tags do not).
pub(crate) fn counted<'a>(keys: impl IntoIterator<Item = &'a String>) -> usize {
    keys.into_iter().filter(|k| !is_system(k)).count()
}

/// CloudFormation's own tags for the resource `ctx` creates: the three `aws:cloudformation:*`
/// tags for the types that get them, none for the others.
pub(crate) fn system_tags(ctx: &ProviderContext) -> Vec<(String, String)> {
    if cumulo_engine::tagging(&ctx.resource_type) != Tagging::System {
        return Vec::new();
    }
    vec![
        (
            "aws:cloudformation:stack-name".into(),
            ctx.stack_name.clone(),
        ),
        ("aws:cloudformation:stack-id".into(), ctx.stack_id.clone()),
        (
            "aws:cloudformation:logical-id".into(),
            ctx.logical_id.clone(),
        ),
    ]
}

/// What an update changes in a resource's tags, from what the service reports now and what the
/// template and stack want: the user tags to remove (never a system tag) and those to set (new
/// or changed). Computed from the live tags, as AWS's handlers do, so a stack-level tag dropped
/// by UpdateStack (which the previous properties do not show) goes too.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct TagChange {
    pub remove: Vec<String>,
    pub set: Vec<(String, String)>,
}

impl TagChange {
    pub(crate) fn between<'a>(
        live: impl IntoIterator<Item = (&'a String, &'a String)>,
        wanted: &[(String, String)],
    ) -> TagChange {
        let live: Vec<(&String, &String)> =
            live.into_iter().filter(|(k, _)| !is_system(k)).collect();
        TagChange {
            remove: live
                .iter()
                .filter(|(k, _)| !wanted.iter().any(|(w, _)| w == *k))
                .map(|(k, _)| (*k).clone())
                .collect(),
            set: wanted
                .iter()
                .filter(|(k, v)| !live.iter().any(|(lk, lv)| *lk == k && *lv == v))
                .cloned()
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::ctx;

    #[test]
    fn system_tags_go_only_where_the_registry_puts_them() {
        let bucket = system_tags(&ctx("Bucket", "AWS::S3::Bucket"));
        assert_eq!(
            bucket.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            [
                "aws:cloudformation:stack-name",
                "aws:cloudformation:stack-id",
                "aws:cloudformation:logical-id"
            ]
        );
        assert_eq!(bucket[2].1, "Bucket");
        assert!(system_tags(&ctx("Q", "AWS::SQS::Queue")).is_empty());
        assert!(system_tags(&ctx("R", "AWS::IAM::Role")).is_empty());
    }

    #[test]
    fn an_update_removes_dropped_user_tags_and_keeps_system_ones() {
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        let live = [
            s("aws:cloudformation:stack-name", "st"),
            s("team", "a"),
            s("old", "x"),
        ];
        let change = TagChange::between(
            live.iter().map(|(k, v)| (k, v)),
            &[s("team", "b"), s("keep", "y")],
        );
        assert_eq!(change.remove, ["old"]);
        assert_eq!(change.set, [s("team", "b"), s("keep", "y")]);
        assert!(is_system("AWS:x"));
        assert_eq!(counted(&["aws:a".to_string(), "b".to_string()]), 1);
    }
}

/// Through the providers: stack tags reach a taggable type and leave it when UpdateStack drops
/// them (the template unchanged), CloudFormation's own tags staying.
#[cfg(test)]
mod provider_tests {
    use crate::providers::test_support::{ctx, services};
    use serde_json::json;

    #[tokio::test]
    async fn stack_tags_follow_the_stack_and_system_tags_stay() {
        let s = services();
        let reg = crate::providers::registry(&s);
        let topic = reg.get("AWS::SNS::Topic").expect("registered").clone();
        let mut c = ctx("Topic", "AWS::SNS::Topic");
        c.stack_tags = vec![("team".into(), "a".into()), ("env".into(), "dev".into())];
        let props = json!({"Tags": [{"Key": "own", "Value": "1"}]});
        let arn = topic.create(&c, &props).await.expect("create").physical_id;
        let tags = |s: &crate::providers::ProviderServices| {
            s.sns
                .list_tags_for_resource("us-east-1", &arn)
                .expect("tags")
        };
        let t = tags(&s);
        assert_eq!(
            (t["team"].as_str(), t["env"].as_str(), t["own"].as_str()),
            ("a", "dev", "1")
        );
        assert_eq!(t["aws:cloudformation:logical-id"], "Topic");
        c.stack_tags = vec![("team".into(), "b".into())];
        topic
            .update(&c, &arn, &props, &props)
            .await
            .expect("update");
        let t = tags(&s);
        assert_eq!(t.get("env"), None);
        assert_eq!((t["team"].as_str(), t["own"].as_str()), ("b", "1"));
        assert_eq!(t["aws:cloudformation:stack-name"], "teststack");
    }
}
