//! CloudFormation providers of the Logs account records: AWS::Logs::ResourcePolicy (Ref: the
//! policy name) and AWS::Logs::QueryDefinition (Ref and `QueryDefinitionId`: the id), both
//! declared over `account.rs`'s typed operations and changed in place as AWS changes them.

use super::{LogsService, PutPolicyInput, PutQueryInput};
use crate::providers::declared::{Answer, Declared, Made};
use crate::providers::{json_text, list, required, scalar, scalar_value};
use cumulo_engine::{Observed, ProviderContext, ProviderError};
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SERVICE: &str = "CloudWatchLogs";
const NOT_FOUND: &[&str] = &["ResourceNotFoundException"];

pub(crate) struct ResourcePolicy {
    pub logs: Arc<LogsService>,
}

impl ResourcePolicy {
    fn put(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = required(props, "PolicyName")?;
        self.logs.put_resource_policy(
            &ctx.region,
            PutPolicyInput {
                policy_name: Some(name.clone()),
                policy_document: Some(json_text(props, "PolicyDocument")?.unwrap_or_default()),
                resource_arn: None,
                expected_revision_id: None,
            },
        )?;
        Ok(Made::new(name))
    }
}

#[async_trait::async_trait]
impl Declared for ResourcePolicy {
    const ATTRIBUTES: &'static [&'static str] = &[];
    const TYPE: &'static str = "AWS::Logs::ResourcePolicy";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["PolicyName", "PolicyDocument"];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        // PutResourcePolicy replaces a policy of the same name; CloudFormation's create does not.
        let name = required(props, "PolicyName")?;
        if self.read(ctx, &name, props)?.is_some() {
            return Err(crate::providers::already_exists(ctx, &name).into());
        }
        self.put(ctx, props)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        _id: &str,
        _old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        self.put(ctx, new)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self
            .logs
            .delete_resource_policy(&ctx.region, Some(id), None)?)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let found = self
            .logs
            .describe_resource_policies(&ctx.region, Some("ACCOUNT"), None)?
            .into_iter()
            .find(|p| p.policy_name.as_deref() == Some(id));
        Ok(found.map(|p| Observed {
            properties: Map::from_iter([
                ("PolicyName".to_string(), json!(id)),
                ("PolicyDocument".to_string(), json!(p.policy_document)),
            ]),
            attributes: Map::new(),
        }))
    }
}

pub(crate) struct QueryDefinition {
    pub logs: Arc<LogsService>,
}

impl QueryDefinition {
    fn put(
        &self,
        ctx: &ProviderContext,
        id: Option<String>,
        props: &Map<String, Value>,
    ) -> Answer<Made> {
        let names = list(props, "LogGroupNames")?
            .iter()
            .map(|v| {
                scalar_value(v).ok_or_else(|| {
                    ProviderError::Failed(
                        "Properties validation failed for resource with message: #/LogGroupNames: expected type: String".into(),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let parameters = list(props, "Parameters")?
            .iter()
            .map(|p| {
                let mut out = Map::new();
                for (cfn, api) in [
                    ("Name", "name"),
                    ("DefaultValue", "defaultValue"),
                    ("Description", "description"),
                ] {
                    if let Some(v) = p.get(cfn) {
                        out.insert(api.to_string(), v.clone());
                    }
                }
                Value::Object(out)
            })
            .collect();
        let id = self.logs.put_query_definition(
            &ctx.region,
            PutQueryInput {
                name: required(props, "Name")?,
                query_string: required(props, "QueryString")?,
                query_definition_id: id,
                log_group_names: names,
                query_language: scalar(props, "QueryLanguage")?,
                parameters,
                client_token: None,
            },
        )?;
        Ok(Made::new(id.clone()).with("QueryDefinitionId", id))
    }
}

#[async_trait::async_trait]
impl Declared for QueryDefinition {
    const ATTRIBUTES: &'static [&'static str] = &["QueryDefinitionId"];
    const TYPE: &'static str = "AWS::Logs::QueryDefinition";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "Name",
        "QueryString",
        "LogGroupNames",
        "QueryLanguage",
        "Parameters",
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        self.put(ctx, None, props)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        self.put(ctx, Some(id.to_string()), new)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.logs.delete_query_definition(&ctx.region, id)?)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let found = self
            .logs
            .describe_query_definitions(&ctx.region, None, None)
            .into_iter()
            .find(|q| q.query_definition_id == id);
        Ok(found.map(|q| Observed {
            properties: Map::from_iter([
                ("Name".to_string(), json!(q.name)),
                ("QueryString".to_string(), json!(q.query_string)),
                ("LogGroupNames".to_string(), json!(q.log_group_names)),
                ("QueryLanguage".to_string(), json!(q.query_language)),
            ]),
            attributes: Map::from_iter([("QueryDefinitionId".to_string(), json!(id))]),
        }))
    }
}
