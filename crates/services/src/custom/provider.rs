//! The provider behind every custom resource type.

use super::{RESPONSE_PATH, Responses};
use crate::lambda::{InvocationType, LambdaService};
use crate::providers::{endpoint_host, object};
use crate::sns::{PublishInput, SnsService};
use cumulo_engine::{Provider, ProviderContext, ProviderError, ProviderOutcome};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;

/// How long a custom resource waits for its handler's response when nothing says sooner that
/// none will come (AWS waits an hour).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

pub struct CustomResourceProvider {
    lambda: Arc<LambdaService>,
    sns: Arc<SnsService>,
    responses: Arc<Responses>,
    /// See [`crate::providers::ProviderServices::callback_host`].
    callback_host: Option<String>,
    timeout: Duration,
}

impl CustomResourceProvider {
    /// The wait comes from `CUMULO_CUSTOM_RESOURCE_TIMEOUT` (seconds) when set.
    pub fn new(
        lambda: Arc<LambdaService>,
        sns: Arc<SnsService>,
        responses: Arc<Responses>,
        callback_host: Option<String>,
    ) -> Self {
        let timeout = std::env::var("CUMULO_CUSTOM_RESOURCE_TIMEOUT")
            .ok()
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_secs)
            .unwrap_or(DEFAULT_TIMEOUT);
        CustomResourceProvider {
            lambda,
            sns,
            responses,
            callback_host,
            timeout,
        }
    }
}

fn failed(msg: impl Into<String>) -> ProviderError {
    ProviderError::Failed(msg.into())
}

/// CloudFormation hands a custom resource its properties with every scalar as a string
/// (`Count: 3` arrives as `"3"`).
fn stringify(v: &Value) -> Value {
    match v {
        Value::Number(n) => Value::String(n.to_string()),
        Value::Bool(b) => Value::String(b.to_string()),
        Value::Array(a) => Value::Array(a.iter().map(stringify).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), stringify(v))).collect())
        }
        other => other.clone(),
    }
}

fn service_token(props: &Map<String, Value>) -> Result<String, ProviderError> {
    match props.get("ServiceToken") {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(failed(
            "Properties validation failed for resource with message: #: required key [ServiceToken] not found",
        )),
    }
}

/// What a successful response said.
struct Answered {
    physical_id: Option<String>,
    data: Map<String, Value>,
    no_echo: bool,
}

impl CustomResourceProvider {
    /// Sends one request to the ServiceToken and waits for the handler's response.
    async fn call(
        &self,
        ctx: &ProviderContext,
        request_type: &str,
        physical_id: Option<&str>,
        props: &Map<String, Value>,
        old: Option<&Map<String, Value>>,
    ) -> Result<Answered, ProviderError> {
        let token = service_token(props)?;
        let (response_token, mut rx) = self.responses.expect();
        let request_id = uuid::Uuid::new_v4().to_string();
        let host = self
            .callback_host
            .clone()
            .unwrap_or_else(|| endpoint_host(ctx));
        let mut request = json!({
            "RequestType": request_type,
            "ServiceToken": token,
            "ResponseURL": format!("http://{host}{RESPONSE_PATH}{response_token}"),
            "StackId": ctx.stack_id,
            "RequestId": request_id,
            "LogicalResourceId": ctx.logical_id,
            "ResourceType": ctx.resource_type,
            "ResourceProperties": stringify(&Value::Object(props.clone())),
        });
        if let Some(p) = physical_id {
            request["PhysicalResourceId"] = json!(p);
        }
        if let Some(o) = old {
            request["OldResourceProperties"] = stringify(&Value::Object(o.clone()));
        }
        self.responses.record(super::Sent {
            request_type: request_type.to_string(),
            stack_id: ctx.stack_id.clone(),
            logical_id: ctx.logical_id.clone(),
            resource_type: ctx.resource_type.clone(),
            physical_id: physical_id.map(str::to_string),
            service_token: token.clone(),
        });
        let result = self.deliver(ctx, &token, &request, &host, &mut rx).await;
        self.responses.forget(&response_token);
        let answer = result?;
        check_answer(&answer, &request_id, ctx)?;
        let status = answer
            .get("Status")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match status {
            "SUCCESS" => {}
            "FAILED" => {
                let reason = answer
                    .get("Reason")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                return Err(failed(format!(
                    "Received response status [FAILED] from custom resource. Message returned: {reason} (RequestId: {request_id})"
                )));
            }
            other => {
                return Err(failed(format!(
                    "Invalid response object: #/Status: {other} is not a valid enum value (RequestId: {request_id})"
                )));
            }
        }
        let data = match answer.get("Data") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => m.clone(),
            Some(_) => {
                return Err(failed(format!(
                    "Invalid response object: #/Data: expected type: JSONObject (RequestId: {request_id})"
                )));
            }
        };
        let no_echo = match answer.get("NoEcho") {
            Some(Value::Bool(b)) => *b,
            Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
            _ => false,
        };
        Ok(Answered {
            physical_id: answer
                .get("PhysicalResourceId")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string),
            data,
            no_echo,
        })
    }

    /// Invokes the function (or publishes to the topic) and waits for the answer.
    async fn deliver(
        &self,
        ctx: &ProviderContext,
        token: &str,
        request: &Value,
        host: &str,
        rx: &mut tokio::sync::oneshot::Receiver<super::responses::Answer>,
    ) -> Result<Value, ProviderError> {
        let payload = request.to_string();
        if token.starts_with("arn:aws:sns:") {
            let region = token.split(':').nth(3).unwrap_or(&ctx.region).to_string();
            let input = PublishInput {
                topic_arn: Some(token.to_string()),
                message: payload,
                ..Default::default()
            };
            self.sns
                .publish(&region, &format!("http://{host}"), input)
                .map_err(|e| {
                    failed(format!(
                        "Failed to publish the request to {token}: {}",
                        e.message
                    ))
                })?;
            return self.wait(rx).await;
        }
        if !token.starts_with("arn:aws:lambda:") {
            return Err(failed(format!(
                "Invalid service token: {token} is neither a Lambda function ARN nor an SNS topic ARN"
            )));
        }
        let region = token.split(':').nth(3).unwrap_or(&ctx.region).to_string();
        let core = self.lambda.core();
        let invoked = core
            .invoke(
                &region,
                token,
                None,
                payload.into(),
                InvocationType::RequestResponse,
                host,
            )
            .await
            .map_err(|e| failed(format!("Failed to invoke {token}: {}", e.message)))?;
        // The response may have been PUT while the function ran.
        if let Ok(answer) = rx.try_recv() {
            return answer.map_err(|e| failed(format!("Invalid response object: {e}")));
        }
        let Some(out) = invoked.output else {
            return self.wait(rx).await;
        };
        if out.function_error.is_some() {
            let msg = serde_json::from_slice::<Value>(&out.payload)
                .ok()
                .and_then(|v| {
                    v.get("errorMessage")
                        .and_then(Value::as_str)
                        .map(str::to_string)
                })
                .unwrap_or_else(|| String::from_utf8_lossy(&out.payload).into_owned());
            return Err(failed(format!(
                "cumulo: the custom resource's function {token} failed without sending a response: {msg}"
            )));
        }
        // A handler that returns the response object instead of PUTting it.
        if let Ok(v @ Value::Object(_)) = serde_json::from_slice::<Value>(&out.payload)
            && v.get("Status").is_some()
        {
            return Ok(v);
        }
        self.wait(rx).await
    }

    async fn wait(
        &self,
        rx: &mut tokio::sync::oneshot::Receiver<super::responses::Answer>,
    ) -> Result<Value, ProviderError> {
        match tokio::time::timeout(self.timeout, rx).await {
            Ok(Ok(answer)) => answer.map_err(|e| failed(format!("Invalid response object: {e}"))),
            _ => Err(failed(format!(
                "CloudFormation did not receive a response from your Custom Resource within {} seconds (cumulo's CUMULO_CUSTOM_RESOURCE_TIMEOUT; AWS waits an hour).",
                self.timeout.as_secs()
            ))),
        }
    }
}

/// The response must be for this request, as CloudFormation checks.
fn check_answer(
    answer: &Value,
    request_id: &str,
    ctx: &ProviderContext,
) -> Result<(), ProviderError> {
    let field = |k: &str| answer.get(k).and_then(Value::as_str);
    if !answer.is_object() {
        return Err(failed("Invalid response object: expected a JSON object"));
    }
    if field("RequestId").is_some_and(|r| r != request_id) {
        return Err(failed(format!(
            "Invalid response object: the RequestId does not match the request (RequestId: {request_id})"
        )));
    }
    if field("LogicalResourceId").is_some_and(|l| l != ctx.logical_id) {
        return Err(failed(format!(
            "Invalid response object: the LogicalResourceId does not match the request (RequestId: {request_id})"
        )));
    }
    if field("StackId").is_some_and(|s| s != ctx.stack_id) {
        return Err(failed(format!(
            "Invalid response object: the StackId does not match the request (RequestId: {request_id})"
        )));
    }
    Ok(())
}

fn outcome(a: Answered, physical_id: String) -> ProviderOutcome {
    ProviderOutcome {
        physical_id,
        attributes: a.data,
        no_echo: a.no_echo,
        ..Default::default()
    }
}

#[async_trait::async_trait]
impl Provider for CustomResourceProvider {
    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(&ctx.resource_type, properties)?;
        let a = self.call(ctx, "Create", None, &props, None).await?;
        let Some(physical) = a.physical_id.clone() else {
            return Err(failed(
                "Invalid PhysicalResourceId: the response to Create must carry one",
            ));
        };
        Ok(outcome(a, physical))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let old = object(&ctx.resource_type, old)?;
        let new = object(&ctx.resource_type, new)?;
        if old.get("ServiceToken") != new.get("ServiceToken") {
            return Err(failed("Modifying service token is not allowed."));
        }
        let a = self
            .call(ctx, "Update", Some(physical_id), &new, Some(&old))
            .await?;
        let physical = a
            .physical_id
            .clone()
            .unwrap_or_else(|| physical_id.to_string());
        Ok(outcome(a, physical))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<(), ProviderError> {
        let props = object(&ctx.resource_type, properties)?;
        let token = service_token(&props)?;
        // A function that no longer exists can answer nothing: the resource is gone with it.
        if token.starts_with("arn:aws:lambda:") {
            let region = token.split(':').nth(3).unwrap_or(&ctx.region).to_string();
            if self.lambda.function(&region, &token).is_err() {
                return Ok(());
            }
        }
        self.call(ctx, "Delete", Some(physical_id), &props, None)
            .await
            .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn properties_reach_the_handler_as_strings() {
        let v = stringify(&json!({"N": 3, "B": true, "L": [1, "x"], "O": {"F": 1.5}, "S": "s"}));
        assert_eq!(
            v,
            json!({"N": "3", "B": "true", "L": ["1", "x"], "O": {"F": "1.5"}, "S": "s"})
        );
    }

    #[test]
    fn a_response_for_another_request_is_refused() {
        let ctx = crate::providers::test_support::ctx("Thing", "Custom::Thing");
        let ok = json!({"Status": "SUCCESS", "RequestId": "r1", "LogicalResourceId": "Thing"});
        assert!(check_answer(&ok, "r1", &ctx).is_ok());
        assert!(check_answer(&ok, "r2", &ctx).is_err());
        let other = json!({"Status": "SUCCESS", "LogicalResourceId": "Other"});
        assert!(check_answer(&other, "r1", &ctx).is_err());
    }
}
