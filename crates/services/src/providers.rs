//! The CloudFormation resource providers of the emulated services, and what they share.
//!
//! Each provider lives beside its service (`s3/provider.rs`, ...) and changes that service only
//! through its typed operations. [`registry`] collects them: each service the catalog lists
//! with providers registers its own (`<module>::provider::register`), so a new resource type is
//! one `register` line in its service's `provider.rs`.
//!
//! The helpers below read resolved template properties the way CloudFormation does (scalars are
//! accepted where AWS's schema says string, since templates write `VisibilityTimeout: 30`), and
//! turn a service's `AwsError` into the resource status reason CloudFormation shows.

pub(crate) mod attached_policy;
pub(crate) mod declared;
#[cfg(test)]
mod getatts;
pub(crate) mod readback;
pub(crate) mod system_tags;

pub use crate::catalog::ProviderServices;
use crate::catalog::{Catalog, Context, Dependencies};
use crate::custom::CustomResourceProvider;
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use cumulo_wire::AwsError;
use serde_json::{Map, Value};
use std::sync::Arc;

/// The host to build URL-shaped identifiers with (SQS queue URLs, SNS endpoints): the one the
/// client used for the CloudFormation call, so the QueueUrl a stack reports is one the client
/// can call; an in-process caller (no host) gets the default endpoint.
pub(crate) fn endpoint_host(ctx: &ProviderContext) -> String {
    if ctx.host.is_empty() {
        "localhost:4566".to_string()
    } else {
        ctx.host.clone()
    }
}

impl ProviderServices {
    /// Every service providers act on, built now over `store` (in-process callers that need
    /// them all at once, such as tests; the gateway and direct deploy build them through a
    /// [`Catalog`] as they are needed).
    pub fn open(
        store: Arc<cumulo_store::Store>,
        config: &crate::Config,
    ) -> Result<Self, crate::GatewayError> {
        let catalog = Catalog::new(Context::new(store, config.clone()));
        Dependencies::resolve(&catalog)
    }
}

/// Every provider of this crate's services.
pub fn registry(services: &ProviderServices) -> ProviderRegistry {
    let mut r = ProviderRegistry::default();
    crate::catalog::register_providers(&mut r, services);
    r.register(
        cumulo_engine::CUSTOM_RESOURCE,
        Arc::new(CustomResourceProvider::new(
            services.lambda.clone(),
            services.sns.clone(),
            services.responses.clone(),
            services.callback_host.clone(),
        )),
    );
    r
}

/// The resolved properties as an object (`Null`, when the template has none, is empty).
pub(crate) fn object<'a>(
    resource_type: &str,
    properties: &'a Value,
) -> Result<std::borrow::Cow<'a, Map<String, Value>>, ProviderError> {
    match properties {
        Value::Object(m) => Ok(std::borrow::Cow::Borrowed(m)),
        Value::Null => Ok(std::borrow::Cow::Owned(Map::new())),
        _ => Err(ProviderError::Failed(format!(
            "Properties of {resource_type} must be an object"
        ))),
    }
}

/// Fails with the first property the provider does not know: nothing is silently dropped.
pub(crate) fn check_known(
    resource_type: &str,
    props: &Map<String, Value>,
    known: &[&str],
    unsupported: &[(&str, &str)],
) -> Result<(), ProviderError> {
    for key in props.keys() {
        if let Some((_, why)) = unsupported.iter().find(|(k, _)| k == key) {
            return Err(unsupported_prop(resource_type, key, why));
        }
        if !known.contains(&key.as_str()) {
            return Err(ProviderError::Failed(format!(
                "Properties validation failed for resource with message: #: extraneous key [{key}] is not permitted"
            )));
        }
    }
    Ok(())
}

pub(crate) fn unsupported_prop(resource_type: &str, property: &str, why: &str) -> ProviderError {
    ProviderError::Unsupported {
        resource_type: resource_type.to_string(),
        property: property.to_string(),
        why: why.to_string(),
    }
}

/// A scalar property as the string the service API takes (`30`, `true`), `None` when absent.
pub(crate) fn scalar(
    props: &Map<String, Value>,
    key: &str,
) -> Result<Option<String>, ProviderError> {
    match props.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => scalar_value(v).map(Some).ok_or_else(|| {
            ProviderError::Failed(format!(
                "Properties validation failed for resource with message: #/{key}: expected type: String, found: {}",
                json_type(v)
            ))
        }),
    }
}

pub(crate) fn scalar_value(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A property that AWS accepts either as a JSON object or as its JSON text (policies,
/// RedrivePolicy): the text the service API takes.
pub(crate) fn json_text(
    props: &Map<String, Value>,
    key: &str,
) -> Result<Option<String>, ProviderError> {
    match props.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(v @ (Value::Object(_) | Value::Array(_))) => Ok(Some(v.to_string())),
        Some(v) => Err(ProviderError::Failed(format!(
            "Properties validation failed for resource with message: #/{key}: expected type: JSONObject, found: {}",
            json_type(v)
        ))),
    }
}

pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "Null",
        Value::Bool(_) => "Boolean",
        Value::Number(_) => "Number",
        Value::String(_) => "String",
        Value::Array(_) => "JSONArray",
        Value::Object(_) => "JSONObject",
    }
}

/// A required string property.
pub(crate) fn required(props: &Map<String, Value>, key: &str) -> Result<String, ProviderError> {
    scalar(props, key)?.ok_or_else(|| {
        ProviderError::Failed(format!(
            "Properties validation failed for resource with message: #: required key [{key}] not found"
        ))
    })
}

/// A list property (absent is empty).
pub(crate) fn list<'a>(
    props: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a [Value], ProviderError> {
    match props.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(v) => Err(ProviderError::Failed(format!(
            "Properties validation failed for resource with message: #/{key}: expected type: JSONArray, found: {}",
            json_type(v)
        ))),
    }
}

/// `Tags: [{Key, Value}]`, then the stack's tags for keys the resource does not set, when the
/// type takes tags (AWS propagates stack-level tags to every resource that supports tags; see
/// [`system_tags`] for the table, and for CloudFormation's own `aws:` tags, which are not here).
pub(crate) fn tags(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
) -> Result<Vec<(String, String)>, ProviderError> {
    let mut out: Vec<(String, String)> = Vec::new();
    for t in list(props, "Tags")? {
        let obj = t.as_object().ok_or_else(|| {
            ProviderError::Failed(
                "Properties validation failed for resource with message: #/Tags: expected type: JSONObject".into(),
            )
        })?;
        let key = required(obj, "Key")?;
        let value = scalar(obj, "Value")?.unwrap_or_default();
        out.push((key, value));
    }
    let taggable = cumulo_engine::tagging(&ctx.resource_type).taggable();
    for (k, v) in ctx.stack_tags.iter().filter(|_| taggable) {
        if !out.iter().any(|(key, _)| key == k) {
            out.push((k.clone(), v.clone()));
        }
    }
    Ok(out)
}

/// The status reason CloudFormation gives when a service refuses a handler's call.
pub(crate) fn failed(ctx: &ProviderContext, service: &str, e: AwsError) -> ProviderError {
    let handler_code = match e.status.as_u16() {
        404 => "NotFound",
        403 => "AccessDenied",
        409 => "AlreadyExists",
        s if s >= 500 => "ServiceInternalError",
        _ => "InvalidRequest",
    };
    ProviderError::Failed(format!(
        "Resource handler returned message: \"{} (Service: {service}, Status Code: {}, Request ID: {})\" (RequestToken: {}, HandlerErrorCode: {handler_code})",
        e.message,
        e.status.as_u16(),
        uuid::Uuid::new_v4(),
        ctx.client_request_token,
    ))
}

/// The name a create gives a resource: its name property (`key`), else the generated
/// `{stack}-{logical}-{RANDOM}` (`max_len` long at most). One function for `create` and
/// `Provider::created_identity`, so the name journaled before the call is the one created.
pub(crate) fn given_or_generated_name(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
    key: &str,
    max_len: usize,
) -> Result<String, ProviderError> {
    Ok(match scalar(props, key)? {
        Some(n) => n,
        None => ctx.generated_name(max_len, ""),
    })
}

/// The reason for a named resource that already exists (CloudFormation never adopts one).
pub(crate) fn already_exists(ctx: &ProviderContext, name: &str) -> ProviderError {
    ProviderError::Failed(format!(
        "Resource handler returned message: \"Resource of type '{}' with identifier '{name}' already exists.\" (RequestToken: {}, HandlerErrorCode: AlreadyExists)",
        ctx.resource_type, ctx.client_request_token
    ))
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::Config;
    use cumulo_store::Store;

    pub fn services() -> ProviderServices {
        let store = Arc::new(Store::in_memory().expect("store"));
        ProviderServices::open(store, &Config::default()).expect("services")
    }

    pub fn ctx(logical_id: &str, resource_type: &str) -> ProviderContext {
        ProviderContext {
            region: "us-east-1".into(),
            account_id: "000000000000".into(),
            stack_name: "teststack".into(),
            stack_id: "arn:aws:cloudformation:us-east-1:000000000000:stack/teststack/1".into(),
            logical_id: logical_id.into(),
            resource_type: resource_type.into(),
            client_request_token: "token-1".into(),
            stack_tags: Vec::new(),
            host: "localhost:4566".into(),
            name_token: String::new(),
        }
    }
}

/// The journal's promise (`Provider::created_identity`): for every type that declares one, the
/// identity known before the call is exactly the physical id the create then reports, with a
/// generated name (the engine's token) and with a given one.
#[cfg(test)]
mod created_identity_tests {
    use super::test_support::{ctx, services};
    use serde_json::{Value, json};

    fn cases() -> Vec<(&'static str, Value, &'static str)> {
        let role = "arn:aws:iam::000000000000:role/r";
        vec![
            ("AWS::SQS::Queue", json!({}), "QueueName"),
            ("AWS::SNS::Topic", json!({}), "TopicName"),
            (
                "AWS::SSM::Parameter",
                json!({"Type": "String", "Value": "v"}),
                "Name",
            ),
            ("AWS::S3::Bucket", json!({}), "BucketName"),
            ("AWS::Logs::LogGroup", json!({}), "LogGroupName"),
            (
                "AWS::DynamoDB::Table",
                json!({"BillingMode": "PAY_PER_REQUEST",
                       "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}],
                       "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}]}),
                "TableName",
            ),
            (
                "AWS::IAM::Role",
                json!({"AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": [
                    {"Effect": "Allow", "Action": "sts:AssumeRole",
                     "Principal": {"Service": "lambda.amazonaws.com"}}]}}),
                "RoleName",
            ),
            (
                "AWS::Lambda::Function",
                json!({"Runtime": "python3.12", "Handler": "index.handler", "Role": role,
                       "Code": {"ZipFile": "def handler(e, c):\n    return e\n"}}),
                "FunctionName",
            ),
        ]
    }

    #[tokio::test]
    async fn the_journaled_identity_is_what_create_makes() {
        let s = services();
        let reg = super::registry(&s);
        for (ty, props, name_key) in cases() {
            let p = reg.get(ty).expect("registered").clone();
            let mut generated = ctx("Res", ty);
            generated.name_token = "JOURNALTOKEN1".into();
            let mut named_props = props.clone();
            named_props[name_key] = json!(format!("given-{}", ty.len()));
            if ty == "AWS::SSM::Parameter" {
                named_props[name_key] = json!("/given/param");
            }
            for (c, props) in [(generated, props), (ctx("Named", ty), named_props)] {
                let identity = p.created_identity(&c, &props);
                let made = p.create(&c, &props).await.expect(ty);
                assert_eq!(identity.as_deref(), Some(made.physical_id.as_str()), "{ty}");
            }
        }
    }
}
