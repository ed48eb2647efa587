//! Invoke: resolves the version, checks the function can run now, and hands the event to the
//! executor (synchronously, or in the background for `Event`).

use super::Lambda;
use super::names::function_arn;
use super::ops::conflict;
use super::runtime::{InvokeOutput, Launch};
use bytes::Bytes;
use cumulo_wire::AwsError;
use http::StatusCode;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvocationType {
    RequestResponse,
    Event,
    DryRun,
}

impl InvocationType {
    pub fn parse(s: Option<&str>) -> Result<Self, AwsError> {
        match s {
            None | Some("RequestResponse") => Ok(Self::RequestResponse),
            Some("Event") => Ok(Self::Event),
            Some("DryRun") => Ok(Self::DryRun),
            Some(other) => Err(super::ops::validation(
                "invocationType",
                other,
                "Member must satisfy enum value set: [Event, RequestResponse, DryRun]",
            )),
        }
    }
}

/// What an invocation answered with; `output` is `None` for Event and DryRun.
#[derive(Debug, Clone)]
pub struct Invoked {
    pub executed_version: String,
    pub output: Option<InvokeOutput>,
}

impl Lambda {
    /// Invoke. `host` is how the caller reached cumulo: the function's SDK calls and custom
    /// resource responses are sent there.
    pub async fn invoke(
        self: &Arc<Self>,
        region: &str,
        name_or_arn: &str,
        qualifier: Option<&str>,
        payload: Bytes,
        kind: InvocationType,
        host: &str,
    ) -> Result<Invoked, AwsError> {
        let payload = if payload.iter().all(u8::is_ascii_whitespace) {
            Bytes::from_static(b"{}")
        } else {
            payload
        };
        if let Err(e) = serde_json::from_slice::<serde_json::Value>(&payload) {
            return Err(AwsError::bad_request(
                "InvalidRequestContentException",
                format!(
                    "Could not parse request body into json: Could not parse payload into json: {e}"
                ),
            ));
        }
        let (f, resolved) = self.resolve(region, name_or_arn, qualifier)?;
        if f.state != "Active" {
            return Err(conflict(format!(
                "The operation cannot be performed at this time. The function is currently in the following state: {}",
                f.state
            )));
        }
        if f.reserved_concurrency == Some(0) {
            return Err(AwsError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "TooManyRequestsException",
                "Rate Exceeded.",
            )
            .with_extra(
                "Reason",
                "ReservedFunctionConcurrentInvocationLimitExceeded",
            ));
        }
        let executed_version = resolved.version.clone();
        if kind == InvocationType::DryRun {
            return Ok(Invoked {
                executed_version,
                output: None,
            });
        }
        let code_dir = self.unpacked("code", &resolved.config.code_sha256)?;
        let layer_dirs = self.layer_dirs(region, &resolved.config.layers)?;
        let invoked_qualifier = resolved
            .alias
            .clone()
            .or_else(|| qualifier.map(str::to_string))
            .filter(|q| q != "$LATEST")
            .or_else(|| (resolved.version != "$LATEST").then(|| resolved.version.clone()));
        let launch = Launch {
            region: region.to_string(),
            account_id: self.account_id.clone(),
            function_name: resolved.name.clone(),
            version: resolved.version.clone(),
            invoked_arn: function_arn(
                region,
                &self.account_id,
                &resolved.name,
                invoked_qualifier.as_deref(),
            ),
            config: resolved.config,
            code_dir,
            layer_dirs,
            endpoint_host: if host.is_empty() {
                self.endpoint_host.clone()
            } else {
                host.to_string()
            },
        };
        if kind == InvocationType::Event {
            let core = self.clone();
            tokio::spawn(async move {
                if let Err(e) = core.executor.invoke(&launch, payload).await {
                    eprintln!(
                        "cumulo: lambda: asynchronous invocation of {} failed: {}",
                        launch.function_name, e.message
                    );
                }
            });
            return Ok(Invoked {
                executed_version,
                output: None,
            });
        }
        let output = self.executor.invoke(&launch, payload).await?;
        Ok(Invoked {
            executed_version,
            output: Some(output),
        })
    }
}
