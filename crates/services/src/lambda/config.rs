//! What hangs off a function besides its code: the resource-based policy (AddPermission), the
//! function URL configuration, tags and reserved concurrency.

use super::Lambda;
use super::model::UrlConfig;
use super::names::{function_arn, parse_function};
use super::ops::{conflict, invalid_parameter, new_revision, validation};
use crate::providers::system_tags::{RESERVED_KEY, first_reserved};
use cumulo_wire::AwsError;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// What AddPermission takes.
#[derive(Debug, Clone, Default)]
pub struct PermissionInput {
    pub statement_id: String,
    pub action: String,
    pub principal: String,
    pub source_arn: Option<String>,
    pub source_account: Option<String>,
    pub principal_org_id: Option<String>,
    pub function_url_auth_type: Option<String>,
    pub qualifier: Option<String>,
    pub revision_id: Option<String>,
}

fn no_such_resource() -> AwsError {
    AwsError::not_found(
        "ResourceNotFoundException",
        "The resource you requested does not exist.",
    )
}

/// A resource Lambda's tag operations take.
enum Tagged {
    Function(String),
    Mapping(String),
}

/// Refuses tags a user gives in the `aws:` namespace (TagResource, CreateFunction,
/// CreateEventSourceMapping); see [`RESERVED_KEY`] for where the wording comes from.
pub(super) fn refuse_reserved(tags: &BTreeMap<String, String>) -> Result<(), AwsError> {
    match first_reserved(tags.keys()) {
        Some(_) => Err(invalid_parameter(RESERVED_KEY)),
        None => Ok(()),
    }
}

fn is_uuid(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// AWS's answer to a tagging ARN of no resource form Lambda tags (as recorded).
fn bad_resource_arn(arn: &str) -> AwsError {
    AwsError::bad_request(
        "ValidationException",
        format!(
            "1 validation error detected: Value '{arn}' at 'resource' failed to satisfy constraint: Member must satisfy regular expression pattern: arn:(aws[a-zA-Z-]*):lambda:(eusc-)?[a-z]{{2}}((-gov)|(-iso([a-z]?)))?-[a-z]+-\\d{{1}}:\\d{{12}}:(function:[a-zA-Z0-9-_]+(:(\\$LATEST|[a-zA-Z0-9-_]+))?|layer:([a-zA-Z0-9-_]+)|code-signing-config:csc-[a-z0-9]{{17}}|event-source-mapping:[0-9a-fA-F]{{8}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{4}}-[0-9a-fA-F]{{12}}|capacity-provider:[a-zA-Z0-9-_]+)"
        ),
    )
}

fn principal(p: &str) -> Value {
    if p == "*" {
        json!("*")
    } else if p.len() == 12 && p.bytes().all(|b| b.is_ascii_digit()) {
        json!({"AWS": format!("arn:aws:iam::{p}:root")})
    } else if p.ends_with(".amazonaws.com") || p.ends_with(".amazonaws.com.cn") {
        json!({"Service": p})
    } else {
        json!({"AWS": p})
    }
}

impl Lambda {
    /// AddPermission: returns the statement added (as AWS, JSON text on the wire).
    pub fn add_permission(
        &self,
        region: &str,
        name_or_arn: &str,
        input: PermissionInput,
    ) -> Result<Value, AwsError> {
        let (name, q) = parse_function(name_or_arn)?;
        let qualifier = input.qualifier.clone().or(q);
        if input.statement_id.is_empty()
            || !input
                .statement_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(validation(
                "statementId",
                &input.statement_id,
                "Member must satisfy regular expression pattern: ([a-zA-Z0-9-_.]+)",
            ));
        }
        if !input.action.starts_with("lambda:") {
            return Err(invalid_parameter(format!(
                "The action {} is not supported by this resource. Supported actions are lambda:*",
                input.action
            )));
        }
        let version = qualifier;
        if let Some(v) = &version {
            self.resolve(region, &name, Some(v))?;
        }
        let resource = function_arn(region, &self.account_id, &name, version.as_deref());
        let mut statement = json!({
            "Sid": input.statement_id,
            "Effect": "Allow",
            "Principal": principal(&input.principal),
            "Action": input.action,
            "Resource": resource,
        });
        let mut conditions = serde_json::Map::new();
        if let Some(arn) = &input.source_arn {
            conditions.insert("ArnLike".into(), json!({"AWS:SourceArn": arn}));
        }
        let mut equals = serde_json::Map::new();
        if let Some(a) = &input.source_account {
            equals.insert("AWS:SourceAccount".into(), json!(a));
        }
        if let Some(o) = &input.principal_org_id {
            equals.insert("aws:PrincipalOrgID".into(), json!(o));
        }
        if let Some(t) = &input.function_url_auth_type {
            equals.insert("lambda:FunctionUrlAuthType".into(), json!(t));
        }
        if !equals.is_empty() {
            conditions.insert("StringEquals".into(), Value::Object(equals));
        }
        if !conditions.is_empty() {
            statement["Condition"] = Value::Object(conditions);
        }
        self.mutate(region, &name, |f| {
            if let Some(r) = &input.revision_id
                && r != &f.policy_revision
            {
                return Err(AwsError::new(
                    http::StatusCode::PRECONDITION_FAILED,
                    "PreconditionFailedException",
                    "The Revision Id provided does not match the latest Revision Id. Call the GetPolicy API to retrieve the latest Revision Id",
                ));
            }
            if f.policy.iter().any(|s| s["Sid"] == statement["Sid"]) {
                return Err(conflict(
                    "The statement id (sid) provided already exists. Please specify a unique statement id, or remove the existing statement.",
                ));
            }
            f.policy.push(statement.clone());
            f.policy_revision = new_revision();
            Ok(statement.clone())
        })
    }

    /// RemovePermission.
    pub fn remove_permission(
        &self,
        region: &str,
        name_or_arn: &str,
        statement_id: &str,
        revision_id: Option<&str>,
    ) -> Result<(), AwsError> {
        let (name, _) = parse_function(name_or_arn)?;
        self.mutate(region, &name, |f| {
            if let Some(r) = revision_id
                && r != f.policy_revision
            {
                return Err(AwsError::new(
                    http::StatusCode::PRECONDITION_FAILED,
                    "PreconditionFailedException",
                    "The Revision Id provided does not match the latest Revision Id. Call the GetPolicy API to retrieve the latest Revision Id",
                ));
            }
            let before = f.policy.len();
            f.policy.retain(|s| s["Sid"] != statement_id);
            if f.policy.len() == before {
                return Err(AwsError::not_found(
                    "ResourceNotFoundException",
                    format!("Statement {statement_id} is not found in resource policy."),
                ));
            }
            f.policy_revision = new_revision();
            Ok(())
        })
    }

    /// GetPolicy: the policy document and its revision id. With a qualifier, the statements
    /// granted on that qualifier.
    pub fn get_policy(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
    ) -> Result<(Value, String), AwsError> {
        let (name, q) = parse_function(name_or_arn)?;
        let qualifier = qualifier.map(str::to_string).or(q);
        let f = self.function(region, &name)?;
        let resource = function_arn(region, &self.account_id, &name, qualifier.as_deref());
        let statements: Vec<Value> = f
            .policy
            .iter()
            .filter(|s| s["Resource"] == resource.as_str())
            .cloned()
            .collect();
        if statements.is_empty() {
            return Err(no_such_resource());
        }
        Ok((
            json!({"Version": "2012-10-17", "Id": "default", "Statement": statements}),
            f.policy_revision,
        ))
    }

    fn url_qualifier(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
    ) -> Result<(String, String), AwsError> {
        let (name, q) = parse_function(name_or_arn)?;
        let qualifier = qualifier.map(str::to_string).or(q);
        match qualifier.as_deref() {
            None | Some("$LATEST") => Ok((name, "$LATEST".into())),
            Some(q) if q.bytes().all(|b| b.is_ascii_digit()) => Err(invalid_parameter(
                "Function URLs can only be created for the unqualified function ($LATEST) or an alias",
            )),
            Some(q) => {
                self.get_alias(region, &name, q)?;
                Ok((name, q.to_string()))
            }
        }
    }

    /// CreateFunctionUrlConfig.
    pub fn create_url_config(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
        auth_type: &str,
        cors: Option<Value>,
        invoke_mode: Option<&str>,
    ) -> Result<(String, UrlConfig), AwsError> {
        check_url_settings(auth_type, invoke_mode)?;
        let (name, q) = self.url_qualifier(region, name_or_arn, qualifier)?;
        let arn = function_arn(
            region,
            &self.account_id,
            &name,
            (q != "$LATEST").then_some(q.as_str()),
        );
        self.mutate(region, &name, |f| {
            if f.urls.contains_key(&q) {
                return Err(conflict(format!(
                    "Failed to create function url config for [functionArn = {arn}]. Error message:  FunctionUrlConfig exists for this Lambda function"
                )));
            }
            let now = super::ops::now_modified();
            let id: String = uuid::Uuid::new_v4().simple().to_string();
            let c = UrlConfig {
                url_id: id,
                auth_type: auth_type.to_string(),
                cors,
                invoke_mode: invoke_mode.unwrap_or("BUFFERED").to_string(),
                creation_time: now.clone(),
                last_modified_time: now,
            };
            f.urls.insert(q.clone(), c.clone());
            Ok((arn.clone(), c))
        })
    }

    pub fn get_url_config(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
    ) -> Result<(String, UrlConfig), AwsError> {
        let (name, q) = self.url_qualifier(region, name_or_arn, qualifier)?;
        let f = self.function(region, &name)?;
        let c = f.urls.get(&q).cloned().ok_or_else(no_such_resource)?;
        let arn = function_arn(
            region,
            &self.account_id,
            &name,
            (q != "$LATEST").then_some(q.as_str()),
        );
        Ok((arn, c))
    }

    pub fn update_url_config(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
        auth_type: Option<&str>,
        cors: Option<Value>,
        invoke_mode: Option<&str>,
    ) -> Result<(String, UrlConfig), AwsError> {
        check_url_settings(auth_type.unwrap_or("NONE"), invoke_mode)?;
        let (name, q) = self.url_qualifier(region, name_or_arn, qualifier)?;
        let arn = function_arn(
            region,
            &self.account_id,
            &name,
            (q != "$LATEST").then_some(q.as_str()),
        );
        self.mutate(region, &name, |f| {
            let c = f.urls.get_mut(&q).ok_or_else(no_such_resource)?;
            if let Some(a) = auth_type {
                c.auth_type = a.to_string();
            }
            if cors.is_some() {
                c.cors = cors;
            }
            if let Some(m) = invoke_mode {
                c.invoke_mode = m.to_string();
            }
            c.last_modified_time = super::ops::now_modified();
            Ok((arn.clone(), c.clone()))
        })
    }

    pub fn delete_url_config(
        &self,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
    ) -> Result<(), AwsError> {
        let (name, q) = self.url_qualifier(region, name_or_arn, qualifier)?;
        self.mutate(region, &name, |f| {
            f.urls.remove(&q).map(|_| ()).ok_or_else(no_such_resource)
        })
    }

    /// What a tagging ARN names: an unqualified function, or an event source mapping (whose
    /// tags AWS keeps too: TagResource on `arn:...:event-source-mapping:<uuid>`).
    fn tagged(&self, region: &str, arn: &str) -> Result<Tagged, AwsError> {
        if let Some((prefix, uuid)) = arn.split_once(":event-source-mapping:") {
            let expected = format!("arn:aws:lambda:{region}:{}", self.account_id);
            if prefix != expected || !is_uuid(uuid) {
                return Err(bad_resource_arn(arn));
            }
            return match self.lock().mappings.get(uuid) {
                Some(m) if m.region == region => Ok(Tagged::Mapping(uuid.to_string())),
                _ => Err(AwsError::not_found(
                    "ResourceNotFoundException",
                    format!("Event source mapping not found: {arn}"),
                )),
            };
        }
        let (name, q) = parse_function(arn)?;
        if q.is_some() || !arn.starts_with("arn:") {
            return Err(invalid_parameter(format!(
                "Tags are not supported on qualified or non-ARN resources: {arn}"
            )));
        }
        self.function(region, &name)?;
        Ok(Tagged::Function(name))
    }

    /// TagResource from a user: `aws:` keys are AWS's own and refused.
    pub fn tag_resource(
        &self,
        region: &str,
        arn: &str,
        tags: BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        refuse_reserved(&tags)?;
        self.put_tags(region, arn, tags)
    }

    /// CloudFormation's `aws:cloudformation:*` tags on a function or event source mapping it
    /// creates (the internal path TagResource refuses them on).
    pub fn add_system_tags(
        &self,
        region: &str,
        arn: &str,
        tags: BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        self.put_tags(region, arn, tags)
    }

    fn put_tags(
        &self,
        region: &str,
        arn: &str,
        tags: BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        self.edit_tags(region, arn, |t| {
            t.extend(tags);
            if crate::providers::system_tags::counted(t.keys()) > 50 {
                return Err(invalid_parameter(
                    "Number of tags exceeds resource tag limit.",
                ));
            }
            Ok(())
        })
    }

    fn edit_tags(
        &self,
        region: &str,
        arn: &str,
        f: impl FnOnce(&mut BTreeMap<String, String>) -> Result<(), AwsError>,
    ) -> Result<(), AwsError> {
        match self.tagged(region, arn)? {
            Tagged::Function(name) => self.mutate(region, &name, |fun| f(&mut fun.tags)),
            Tagged::Mapping(uuid) => self.mutate_mapping(&uuid, |m| f(&mut m.tags)),
        }
    }

    pub fn untag_resource(&self, region: &str, arn: &str, keys: &[String]) -> Result<(), AwsError> {
        self.edit_tags(region, arn, |t| {
            for k in keys {
                t.remove(k);
            }
            Ok(())
        })
    }

    pub fn list_tags(&self, region: &str, arn: &str) -> Result<BTreeMap<String, String>, AwsError> {
        Ok(match self.tagged(region, arn)? {
            Tagged::Function(name) => self.function(region, &name)?.tags,
            Tagged::Mapping(uuid) => self.get_event_source_mapping(&uuid)?.tags,
        })
    }

    /// PutFunctionConcurrency (`None` deletes it). Reserved concurrency 0 throttles every
    /// invocation, as on AWS.
    pub fn put_concurrency(
        &self,
        region: &str,
        name_or_arn: &str,
        reserved: Option<i64>,
    ) -> Result<(), AwsError> {
        let (name, _) = parse_function(name_or_arn)?;
        if let Some(r) = reserved
            && !(0..=1000).contains(&r)
        {
            return Err(validation(
                "reservedConcurrentExecutions",
                r,
                "Member must have value greater than or equal to 0",
            ));
        }
        self.mutate(region, &name, |f| {
            f.reserved_concurrency = reserved;
            Ok(())
        })
    }
}

fn check_url_settings(auth_type: &str, invoke_mode: Option<&str>) -> Result<(), AwsError> {
    if auth_type != "NONE" && auth_type != "AWS_IAM" {
        return Err(validation(
            "authType",
            auth_type,
            "Member must satisfy enum value set: [NONE, AWS_IAM]",
        ));
    }
    if let Some(m) = invoke_mode
        && m != "BUFFERED"
        && m != "RESPONSE_STREAM"
    {
        return Err(validation(
            "invokeMode",
            m,
            "Member must satisfy enum value set: [BUFFERED, RESPONSE_STREAM]",
        ));
    }
    Ok(())
}
