//! AddPermission / RemovePermission: AWS implements them as edits of the queue's `Policy`
//! attribute (one statement per label), so that is what they do here too — GetQueueAttributes
//! shows the resulting policy, and SetQueueAttributes can replace it.

use super::SqsService;
use super::errors::{invalid_parameter, missing_parameter};
use super::ops::Caller;
use super::state;
use cumulo_wire::AwsError;
use serde_json::{Value, json};

/// Actions AddPermission accepts (without the `SQS:` prefix AWS adds in the policy).
const ACTIONS: &[&str] = &[
    "*",
    "SendMessage",
    "ReceiveMessage",
    "DeleteMessage",
    "ChangeMessageVisibility",
    "GetQueueAttributes",
    "GetQueueUrl",
    "ListDeadLetterSourceQueues",
    "PurgeQueue",
    "ListQueueTags",
];

fn label_ok(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 80
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The statements of a stored policy (validated JSON object on the way in).
fn statements(policy: Option<&String>) -> Vec<Value> {
    policy
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .and_then(|v| v.get("Statement").and_then(Value::as_array).cloned())
        .unwrap_or_default()
}

impl SqsService {
    /// AddPermission: adds a statement labelled `label` allowing the accounts the actions.
    pub async fn add_permission(
        &self,
        caller: &Caller,
        url: &str,
        label: &str,
        accounts: &[String],
        actions: &[String],
    ) -> Result<(), AwsError> {
        if label.is_empty() {
            return Err(missing_parameter("Label"));
        }
        if !label_ok(label) {
            return Err(invalid_parameter(
                "Label",
                label,
                "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
            ));
        }
        if accounts.is_empty() {
            return Err(missing_parameter("AWSAccountIds"));
        }
        if actions.is_empty() {
            return Err(missing_parameter("Actions"));
        }
        if let Some(bad) = actions.iter().find(|a| !ACTIONS.contains(&a.as_str())) {
            return Err(invalid_parameter(
                "ActionName.1",
                bad,
                "Please refer to the appropriate WSDL for a list of valid actions.",
            ));
        }
        self.update_meta(caller, url, |meta| {
            let mut list = statements(meta.attributes.get("Policy"));
            if list
                .iter()
                .any(|s| s.get("Sid").and_then(Value::as_str) == Some(label))
            {
                return Err(invalid_parameter("Label", label, "Already exists."));
            }
            let principals: Vec<String> = accounts
                .iter()
                .map(|a| format!("arn:aws:iam::{a}:root"))
                .collect();
            let actions: Vec<String> = actions.iter().map(|a| format!("SQS:{a}")).collect();
            let one_or_many = |v: Vec<String>| match v.as_slice() {
                [one] => json!(one),
                _ => json!(v),
            };
            list.push(json!({
                "Sid": label,
                "Effect": "Allow",
                "Principal": {"AWS": one_or_many(principals)},
                "Action": one_or_many(actions),
                "Resource": meta.arn(),
            }));
            let policy = json!({
                "Version": "2012-10-17",
                "Id": format!("{}/SQSDefaultPolicy", meta.arn()),
                "Statement": list,
            });
            meta.attributes.insert("Policy".into(), policy.to_string());
            meta.last_modified_s = state::now_ms() / 1000;
            Ok(())
        })
        .await
    }

    /// RemovePermission: drops the statement labelled `label` (the whole policy if it was the
    /// last one).
    pub async fn remove_permission(
        &self,
        caller: &Caller,
        url: &str,
        label: &str,
    ) -> Result<(), AwsError> {
        if label.is_empty() {
            return Err(missing_parameter("Label"));
        }
        self.update_meta(caller, url, |meta| {
            let mut list = statements(meta.attributes.get("Policy"));
            let before = list.len();
            list.retain(|s| s.get("Sid").and_then(Value::as_str) != Some(label));
            if list.len() == before {
                return Err(invalid_parameter("Label", label, "can't find label."));
            }
            if list.is_empty() {
                meta.attributes.remove("Policy");
            } else if let Some(p) = meta.attributes.get_mut("Policy") {
                let mut v: Value = serde_json::from_str(p).unwrap_or_else(|_| json!({}));
                v["Statement"] = Value::Array(list);
                *p = v.to_string();
            }
            meta.last_modified_s = state::now_ms() / 1000;
            Ok(())
        })
        .await
    }
}
