//! The awsJson1_1 adapter: decodes `AmazonSSM.<Operation>` bodies into typed calls and encodes
//! results with AWS's member names (timestamps as epoch seconds).

use super::SsmService;
use super::operations::OPERATIONS;
use super::ops::{DescribeInput, GetByPathInput, ParameterView, PutParameterInput, StringFilter};
use super::state::{Parameter, Version};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use serde_json::{Map, Value, json};

const CONTENT_TYPE: &str = "application/x-amz-json-1.1";

pub async fn handle(svc: &SsmService, req: &AwsRequest) -> AwsResponse {
    let op = req.target_operation().unwrap_or("").to_string();
    let result = match check_content_type(req).and_then(|()| parse_body(&req.body)) {
        Ok(body) => dispatch(svc, &req.region, &op, &body).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(v) => {
            AwsResponse::json(CONTENT_TYPE, &v).with_header("x-amzn-requestid", &req.request_id)
        }
        Err(e) => e.into_response(Protocol::Json11, &req.request_id),
    }
}

/// The JSON protocol's body is only read under a JSON content type (clients always send
/// `application/x-amz-json-1.1`); anything else is refused before it is parsed.
fn check_content_type(req: &AwsRequest) -> Result<(), AwsError> {
    match req.header("content-type") {
        None => Ok(()),
        Some(ct)
            if ct.starts_with("application/x-amz-json-1.")
                || ct.starts_with("application/json") =>
        {
            Ok(())
        }
        Some(ct) => Err(AwsError::bad_request(
            "SerializationException",
            format!("Content-Type {ct} is not supported; send application/x-amz-json-1.1"),
        )),
    }
}

fn parse_body(body: &[u8]) -> Result<Map<String, Value>, AwsError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(AwsError::bad_request(
            "SerializationException",
            "Start of structure or map found where not expected.",
        )),
    }
}

/// Typed access to request members; a member of the wrong JSON type is a SerializationException,
/// as AWS answers.
struct Body<'a>(&'a Map<String, Value>);

fn wrong_type(name: &str) -> AwsError {
    AwsError::bad_request(
        "SerializationException",
        format!("Unexpected JSON type for member {name}"),
    )
}

impl Body<'_> {
    fn opt_str(&self, name: &str) -> Result<Option<String>, AwsError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(wrong_type(name)),
        }
    }

    fn str(&self, name: &str) -> Result<String, AwsError> {
        self.opt_str(name)?.ok_or_else(|| {
            let field = lower_first(name);
            AwsError::validation_exception(format!(
                "1 validation error detected: Value null at '{field}' failed to satisfy constraint: Member must not be null"
            ))
        })
    }

    fn bool(&self, name: &str) -> Result<bool, AwsError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(wrong_type(name)),
        }
    }

    fn opt_int(&self, name: &str) -> Result<Option<i64>, AwsError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| wrong_type(name)),
        }
    }

    fn strings(&self, name: &str) -> Result<Vec<String>, AwsError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| wrong_type(name))
                })
                .collect(),
            Some(_) => Err(wrong_type(name)),
        }
    }

    fn objects(&self, name: &str) -> Result<Vec<Body<'_>>, AwsError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| i.as_object().map(Body).ok_or_else(|| wrong_type(name)))
                .collect(),
            Some(_) => Err(wrong_type(name)),
        }
    }

    fn tags(&self, name: &str) -> Result<Vec<(String, String)>, AwsError> {
        self.objects(name)?
            .iter()
            .map(|t| Ok((t.str("Key")?, t.str("Value")?)))
            .collect()
    }

    fn string_filters(&self) -> Result<Vec<StringFilter>, AwsError> {
        self.objects("ParameterFilters")?
            .iter()
            .map(|f| {
                Ok(StringFilter {
                    key: f.str("Key")?,
                    option: f.opt_str("Option")?,
                    values: f.strings("Values")?,
                })
            })
            .collect()
    }
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

async fn dispatch(
    svc: &SsmService,
    region: &str,
    op: &str,
    raw: &Map<String, Value>,
) -> Result<Value, AwsError> {
    let b = Body(raw);
    match op {
        "PutParameter" => {
            let input = PutParameterInput {
                name: b.str("Name")?,
                value: b.str("Value")?,
                param_type: b.opt_str("Type")?,
                description: b.opt_str("Description")?,
                key_id: b.opt_str("KeyId")?,
                overwrite: b.bool("Overwrite")?,
                allowed_pattern: b.opt_str("AllowedPattern")?,
                tags: b.tags("Tags")?,
                tier: b.opt_str("Tier")?,
                policies: b.opt_str("Policies")?,
                data_type: b.opt_str("DataType")?,
            };
            let (version, tier) = svc.put_parameter(region, input).await?;
            Ok(json!({"Version": version, "Tier": tier.as_str()}))
        }
        "GetParameter" => {
            let v = svc.get_parameter(region, &b.str("Name")?, b.bool("WithDecryption")?)?;
            Ok(json!({"Parameter": parameter_json(&v)}))
        }
        "GetParameters" => {
            let (found, invalid) =
                svc.get_parameters(region, &b.strings("Names")?, b.bool("WithDecryption")?)?;
            Ok(json!({
                "Parameters": found.iter().map(parameter_json).collect::<Vec<_>>(),
                "InvalidParameters": invalid,
            }))
        }
        "GetParametersByPath" => {
            let input = GetByPathInput {
                path: b.str("Path")?,
                recursive: b.bool("Recursive")?,
                filters: b.string_filters()?,
                with_decryption: b.bool("WithDecryption")?,
                max_results: b.opt_int("MaxResults")?,
                next_token: b.opt_str("NextToken")?,
            };
            let (found, next) = svc.get_parameters_by_path(region, input)?;
            let mut out =
                json!({"Parameters": found.iter().map(parameter_json).collect::<Vec<_>>()});
            if let Some(t) = next {
                out["NextToken"] = t.into();
            }
            Ok(out)
        }
        "GetParameterHistory" => {
            let name = b.str("Name")?;
            let (versions, next) = svc.get_parameter_history(
                region,
                &name,
                b.bool("WithDecryption")?,
                b.opt_int("MaxResults")?,
                b.opt_str("NextToken")?.as_deref(),
            )?;
            let items: Vec<Value> = versions
                .iter()
                .map(|(v, value)| {
                    let mut m = version_metadata(&name, v);
                    m.insert("Value".into(), value.clone().into());
                    m.insert("Labels".into(), json!(v.labels));
                    Value::Object(m)
                })
                .collect();
            let mut out = json!({"Parameters": items});
            if let Some(t) = next {
                out["NextToken"] = t.into();
            }
            Ok(out)
        }
        "DescribeParameters" => {
            let filters = b
                .objects("Filters")?
                .iter()
                .map(|f| Ok((f.str("Key")?, f.strings("Values")?)))
                .collect::<Result<Vec<_>, AwsError>>()?;
            let input = DescribeInput {
                filters,
                parameter_filters: b.string_filters()?,
                max_results: b.opt_int("MaxResults")?,
                next_token: b.opt_str("NextToken")?,
            };
            let (found, next) = svc.describe_parameters(region, input)?;
            let items: Vec<Value> = found
                .iter()
                .map(|(p, v)| {
                    let mut m = version_metadata(&p.name, v);
                    m.insert("ARN".into(), svc_arn(svc, region, p).into());
                    Value::Object(m)
                })
                .collect();
            let mut out = json!({"Parameters": items});
            if let Some(t) = next {
                out["NextToken"] = t.into();
            }
            Ok(out)
        }
        "LabelParameterVersion" => {
            let o = svc
                .label_parameter_version(
                    region,
                    &b.str("Name")?,
                    b.opt_int("ParameterVersion")?,
                    &b.strings("Labels")?,
                )
                .await?;
            Ok(json!({"InvalidLabels": o.invalid_labels, "ParameterVersion": o.version}))
        }
        "UnlabelParameterVersion" => {
            let version = b.opt_int("ParameterVersion")?.ok_or_else(|| {
                AwsError::validation_exception(
                    "1 validation error detected: Value null at 'parameterVersion' failed to satisfy constraint: Member must not be null",
                )
            })?;
            let (removed, invalid) = svc
                .unlabel_parameter_version(region, &b.str("Name")?, version, &b.strings("Labels")?)
                .await?;
            Ok(json!({"RemovedLabels": removed, "InvalidLabels": invalid}))
        }
        "DeleteParameter" => {
            svc.delete_parameter(region, &b.str("Name")?).await?;
            Ok(json!({}))
        }
        "DeleteParameters" => {
            let (deleted, invalid) = svc.delete_parameters(region, &b.strings("Names")?).await?;
            Ok(json!({"DeletedParameters": deleted, "InvalidParameters": invalid}))
        }
        "AddTagsToResource" => {
            svc.add_tags(
                region,
                &b.str("ResourceType")?,
                &b.str("ResourceId")?,
                &b.tags("Tags")?,
            )
            .await?;
            Ok(json!({}))
        }
        "RemoveTagsFromResource" => {
            svc.remove_tags(
                region,
                &b.str("ResourceType")?,
                &b.str("ResourceId")?,
                &b.strings("TagKeys")?,
            )
            .await?;
            Ok(json!({}))
        }
        "ListTagsForResource" => {
            let tags = svc.list_tags(region, &b.str("ResourceType")?, &b.str("ResourceId")?)?;
            let list: Vec<Value> = tags
                .iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect();
            Ok(json!({"TagList": list}))
        }
        "" => Err(AwsError::bad_request(
            "MissingAction",
            "Missing X-Amz-Target header naming the operation",
        )),
        other if OPERATIONS.contains(&other) => Err(AwsError::not_implemented("ssm", other)),
        other => Err(AwsError::bad_request(
            "UnknownOperationException",
            format!("Unknown operation {other}"),
        )),
    }
}

fn svc_arn(svc: &SsmService, region: &str, p: &Parameter) -> String {
    format!(
        "arn:aws:ssm:{region}:{}:parameter/{}",
        svc.account_id,
        p.name.trim_start_matches('/')
    )
}

fn parameter_json(v: &ParameterView) -> Value {
    let mut m = json!({
        "Name": v.name,
        "Type": v.param_type.as_str(),
        "Value": v.value,
        "Version": v.version,
        "LastModifiedDate": v.last_modified,
        "ARN": v.arn,
        "DataType": v.data_type,
    });
    if let Some(s) = &v.selector {
        m["Selector"] = s.clone().into();
    }
    m
}

/// The members ParameterMetadata and ParameterHistory share.
fn version_metadata(name: &str, v: &Version) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("Name".into(), name.into());
    m.insert("Type".into(), v.param_type.as_str().into());
    if let Some(k) = &v.key_id {
        m.insert("KeyId".into(), k.clone().into());
    }
    m.insert("LastModifiedDate".into(), v.last_modified.into());
    m.insert(
        "LastModifiedUser".into(),
        v.last_modified_user.clone().into(),
    );
    if let Some(d) = &v.description {
        m.insert("Description".into(), d.clone().into());
    }
    if let Some(p) = &v.allowed_pattern {
        m.insert("AllowedPattern".into(), p.clone().into());
    }
    m.insert("Version".into(), v.version.into());
    m.insert("Tier".into(), v.tier.as_str().into());
    m.insert("Policies".into(), policies_json(v.policies.as_deref()));
    m.insert("DataType".into(), v.data_type.clone().into());
    m
}

/// `ParameterInlinePolicy` entries for the stored policies JSON.
fn policies_json(policies: Option<&str>) -> Value {
    let items: Vec<Value> = policies
        .and_then(|p| serde_json::from_str::<Value>(p).ok())
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
        .into_iter()
        .map(|item| {
            json!({
                "PolicyText": item.to_string(),
                "PolicyType": item.get("Type").cloned().unwrap_or(Value::Null),
                "PolicyStatus": "Pending",
            })
        })
        .collect();
    Value::Array(items)
}
