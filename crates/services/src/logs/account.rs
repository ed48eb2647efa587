//! The region's account-level Logs records that are not log groups: resource policies (which
//! let services such as Route 53, EventBridge or Step Functions' log delivery write to log
//! groups; stored and reported, since cumulo's services write their logs without asking) and
//! saved Logs Insights query definitions.

use super::LogsService;
use super::groups::{decode_token, encode_token, err, group_not_found, invalid, now_ms};
use super::state::{self, internal};
use cumulo_wire::AwsError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// AWS's quota of account-scoped resource policies per region.
const MAX_ACCOUNT_POLICIES: usize = 10;
const MAX_POLICY_LEN: usize = 5120;
const QUERY_LANGUAGES: &[&str] = &["CWLI", "SQL", "PPL"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourcePolicy {
    pub policy_name: Option<String>,
    pub policy_document: String,
    pub last_updated_time: i64,
    /// `Some` for a policy on one log group (scope RESOURCE), `None` for the account's.
    pub resource_arn: Option<String>,
    /// Only resource-scoped policies carry a revision id, as AWS reports them.
    pub revision_id: Option<String>,
    /// Creation order: DescribeResourcePolicies lists policies in it.
    pub seq: u64,
}

impl ResourcePolicy {
    pub fn scope(&self) -> &'static str {
        if self.resource_arn.is_some() {
            "RESOURCE"
        } else {
            "ACCOUNT"
        }
    }
}

fn policy_key(name: Option<&str>, resource_arn: Option<&str>) -> String {
    match resource_arn {
        Some(arn) => format!("resource:{arn}"),
        None => format!("account:{}", name.unwrap_or_default()),
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryDefinition {
    pub query_definition_id: String,
    pub name: String,
    pub query_string: String,
    pub log_group_names: Vec<String>,
    pub query_language: String,
    pub last_modified: i64,
    /// `[{name, defaultValue, description}]`, stored and reported.
    #[serde(default)]
    pub parameters: Vec<serde_json::Value>,
    /// The idempotency token that created it (the SDKs fill one in per call).
    pub client_token: Option<String>,
}

/// One region's records, keyed as they are stored.
#[derive(Debug, Default)]
pub struct AccountRecords {
    pub policies: BTreeMap<String, ResourcePolicy>,
    pub queries: BTreeMap<String, QueryDefinition>,
}

pub struct PutPolicyInput {
    pub policy_name: Option<String>,
    pub policy_document: Option<String>,
    pub resource_arn: Option<String>,
    pub expected_revision_id: Option<String>,
}

pub struct PutQueryInput {
    pub name: String,
    pub query_string: String,
    pub query_definition_id: Option<String>,
    pub log_group_names: Vec<String>,
    pub query_language: Option<String>,
    pub parameters: Vec<serde_json::Value>,
    pub client_token: Option<String>,
}

const POLICY: &str = "policy";
const QUERY: &str = "query";

fn policy_not_found(name: &str) -> AwsError {
    err(
        "ResourceNotFoundException",
        format!("Policy with name [{name}] does not exist."),
    )
}

fn query_not_found(id: &str) -> AwsError {
    // cumulo's wording: AWS's message for an unknown query definition id is not recorded.
    err(
        "ResourceNotFoundException",
        format!("Query definition with id [{id}] does not exist."),
    )
}

impl LogsService {
    pub fn put_resource_policy(
        &self,
        region: &str,
        input: PutPolicyInput,
    ) -> Result<ResourcePolicy, AwsError> {
        let document = input
            .policy_document
            .ok_or_else(|| invalid("policyDocument is required."))?;
        if document.is_empty() || document.len() > MAX_POLICY_LEN {
            return Err(invalid(format!(
                "1 validation error detected: Value at 'policyDocument' failed to satisfy constraint: Member must have length between 1 and {MAX_POLICY_LEN}"
            )));
        }
        if serde_json::from_str::<serde_json::Value>(&document).map_or(true, |v| !v.is_object()) {
            return Err(invalid("Policy document is not a valid JSON object."));
        }
        if input.resource_arn.is_none() && input.policy_name.as_deref().unwrap_or("").is_empty() {
            return Err(invalid(
                "Either policyName or resourceArn must be specified.",
            ));
        }
        let resource_arn = match &input.resource_arn {
            Some(arn) => Some(self.policy_resource(region, arn)?),
            None => None,
        };
        let key = policy_key(input.policy_name.as_deref(), resource_arn.as_deref());
        let mut all = self.lock_account();
        let records = all.entry(region.to_string()).or_default();
        let existing = records.policies.get(&key);
        if let (Some(expected), Some(p)) = (&input.expected_revision_id, existing)
            && p.revision_id.as_deref() != Some(expected)
        {
            return Err(err(
                "OperationAbortedException",
                "The expected revision id does not match the policy's current revision id.",
            ));
        }
        let accounts = records
            .policies
            .values()
            .filter(|p| p.resource_arn.is_none())
            .count();
        if existing.is_none() && resource_arn.is_none() && accounts >= MAX_ACCOUNT_POLICIES {
            return Err(err("LimitExceededException", "Resource limit exceeded."));
        }
        let seq = existing.map_or_else(
            || {
                records
                    .policies
                    .values()
                    .map(|p| p.seq + 1)
                    .max()
                    .unwrap_or(0)
            },
            |p| p.seq,
        );
        let policy = ResourcePolicy {
            policy_name: input.policy_name,
            policy_document: document,
            last_updated_time: now_ms(),
            revision_id: resource_arn
                .is_some()
                .then(|| uuid::Uuid::new_v4().to_string()),
            resource_arn,
            seq,
        };
        self.store
            .write(|tx| state::save_account(tx, region, POLICY, &key, &policy))
            .map_err(internal)?;
        records.policies.insert(key, policy.clone());
        Ok(policy)
    }

    /// The bare ARN of the existing log group `arn` names (with or without its `:*`): the key
    /// of the group's resource-scoped policy.
    fn policy_resource(&self, region: &str, arn: &str) -> Result<String, AwsError> {
        let group = self.group_of_resource_arn(arn)?;
        self.log_group(region, &group)?;
        Ok(self.group_arn_bare(region, &group))
    }

    /// Drops the resource-scoped policy of a deleted log group, as AWS does with the group.
    pub(super) fn forget_group_policy(&self, region: &str, group: &str) -> Result<(), AwsError> {
        let key = policy_key(None, Some(&self.group_arn_bare(region, group)));
        let mut all = self.lock_account();
        let Some(records) = all.get_mut(region) else {
            return Ok(());
        };
        if records.policies.remove(&key).is_some() {
            self.store
                .write(|tx| state::delete_account(tx, region, POLICY, &key))
                .map_err(internal)?;
        }
        Ok(())
    }

    /// Policies in creation order, narrowed to a scope and/or one log group's.
    pub fn describe_resource_policies(
        &self,
        region: &str,
        scope: Option<&str>,
        resource_arn: Option<&str>,
    ) -> Result<Vec<ResourcePolicy>, AwsError> {
        if let Some(s) = scope
            && !["ACCOUNT", "RESOURCE"].contains(&s)
        {
            return Err(invalid(format!(
                "1 validation error detected: Value '{s}' at 'policyScope' failed to satisfy constraint: Member must satisfy enum value set: [ACCOUNT, RESOURCE]"
            )));
        }
        let resource_arn = resource_arn.map(|a| {
            self.group_of_resource_arn(a)
                .map_or_else(|_| a.to_string(), |g| self.group_arn_bare(region, &g))
        });
        let all = self.lock_account();
        let mut out: Vec<ResourcePolicy> = all
            .get(region)
            .map(|r| r.policies.values().cloned().collect())
            .unwrap_or_default();
        out.retain(|p| scope.is_none_or(|s| p.scope() == s));
        out.retain(|p| {
            resource_arn
                .as_deref()
                .is_none_or(|a| p.resource_arn.as_deref() == Some(a))
        });
        out.sort_by_key(|p| p.seq);
        Ok(out)
    }

    pub fn delete_resource_policy(
        &self,
        region: &str,
        policy_name: Option<&str>,
        resource_arn: Option<&str>,
    ) -> Result<(), AwsError> {
        if policy_name.is_none() && resource_arn.is_none() {
            return Err(invalid(
                "Either policyName or resourceArn must be specified.",
            ));
        }
        let resource_arn = match resource_arn {
            Some(arn) => Some(self.policy_resource(region, arn)?),
            None => None,
        };
        let key = policy_key(policy_name, resource_arn.as_deref());
        let mut all = self.lock_account();
        let records = all.entry(region.to_string()).or_default();
        if !records.policies.contains_key(&key) {
            return Err(if resource_arn.is_some() {
                group_not_found()
            } else {
                policy_not_found(policy_name.unwrap_or_default())
            });
        }
        self.store
            .write(|tx| state::delete_account(tx, region, POLICY, &key))
            .map_err(internal)?;
        records.policies.remove(&key);
        Ok(())
    }

    pub fn put_query_definition(
        &self,
        region: &str,
        input: PutQueryInput,
    ) -> Result<String, AwsError> {
        if input.name.is_empty() || input.name.len() > 255 {
            return Err(invalid(format!(
                "1 validation error detected: Value '{}' at 'name' failed to satisfy constraint: Member must have length between 1 and 255",
                input.name
            )));
        }
        if input.query_string.is_empty() || input.query_string.len() > 10000 {
            return Err(invalid(
                "1 validation error detected: Value at 'queryString' failed to satisfy constraint: Member must have length between 1 and 10000",
            ));
        }
        let language = input.query_language.unwrap_or_else(|| "CWLI".into());
        if !QUERY_LANGUAGES.contains(&language.as_str()) {
            return Err(invalid(format!(
                "1 validation error detected: Value '{language}' at 'queryLanguage' failed to satisfy constraint: Member must satisfy enum value set: [CWLI, SQL, PPL]"
            )));
        }
        let mut all = self.lock_account();
        let records = all.entry(region.to_string()).or_default();
        if let Some(token) = &input.client_token
            && input.query_definition_id.is_none()
            && let Some(q) = records
                .queries
                .values()
                .find(|q| q.client_token.as_ref() == Some(token))
        {
            return Ok(q.query_definition_id.clone());
        }
        let id = match input.query_definition_id {
            Some(id) if records.queries.contains_key(&id) => id,
            Some(id) => return Err(query_not_found(&id)),
            None => uuid::Uuid::new_v4().to_string(),
        };
        let query = QueryDefinition {
            query_definition_id: id.clone(),
            name: input.name,
            query_string: input.query_string,
            log_group_names: input.log_group_names,
            query_language: language,
            last_modified: now_ms(),
            parameters: input.parameters,
            client_token: input.client_token,
        };
        self.store
            .write(|tx| state::save_account(tx, region, QUERY, &id, &query))
            .map_err(internal)?;
        records.queries.insert(id.clone(), query);
        Ok(id)
    }

    /// Query definitions in name order, narrowed by name prefix and language.
    pub fn describe_query_definitions(
        &self,
        region: &str,
        prefix: Option<&str>,
        language: Option<&str>,
    ) -> Vec<QueryDefinition> {
        let all = self.lock_account();
        let mut out: Vec<QueryDefinition> = all
            .get(region)
            .map(|r| r.queries.values().cloned().collect())
            .unwrap_or_default();
        out.retain(|q| prefix.is_none_or(|p| q.name.starts_with(p)));
        out.retain(|q| language.is_none_or(|l| q.query_language == l));
        out.sort_by(|a, b| {
            (&a.name, &a.query_definition_id).cmp(&(&b.name, &b.query_definition_id))
        });
        out
    }

    pub fn delete_query_definition(&self, region: &str, id: &str) -> Result<(), AwsError> {
        let mut all = self.lock_account();
        let records = all.entry(region.to_string()).or_default();
        if !records.queries.contains_key(id) {
            return Err(query_not_found(id));
        }
        self.store
            .write(|tx| state::delete_account(tx, region, QUERY, id))
            .map_err(internal)?;
        records.queries.remove(id);
        Ok(())
    }
}

/// Files a stored row under its kind; rows that do not parse are reported by the caller.
pub fn load_row(
    records: &mut std::collections::HashMap<String, AccountRecords>,
    region: String,
    kind: &str,
    key: String,
    doc: &str,
) -> Result<(), String> {
    let r = records.entry(region).or_default();
    match kind {
        POLICY => {
            let p: ResourcePolicy = serde_json::from_str(doc).map_err(|e| e.to_string())?;
            r.policies.insert(key, p);
        }
        QUERY => {
            let q: QueryDefinition = serde_json::from_str(doc).map_err(|e| e.to_string())?;
            r.queries.insert(key, q);
        }
        other => return Err(format!("unknown kind {other}")),
    }
    Ok(())
}

/// One page of `items` from an offset token, at most `limit` (1..=`max`, member `member`).
pub fn page<T>(
    items: Vec<T>,
    limit: Option<i64>,
    max: i64,
    member: &str,
    next_token: Option<&str>,
) -> Result<(Vec<T>, Option<String>), AwsError> {
    let n = limit.unwrap_or(max);
    if n < 1 || n > max {
        return Err(invalid(format!(
            "1 validation error detected: Value '{n}' at '{member}' failed to satisfy constraint: Member must have value between 1 and {max}"
        )));
    }
    let offset: usize = match next_token {
        None => 0,
        Some(t) => decode_token(t)?
            .parse()
            .map_err(|_| invalid(format!("The specified nextToken is invalid: {t}")))?,
    };
    let total = items.len();
    let page: Vec<T> = items.into_iter().skip(offset).take(n as usize).collect();
    let end = offset + page.len();
    Ok((page, (end < total).then(|| encode_token(&end.to_string()))))
}
