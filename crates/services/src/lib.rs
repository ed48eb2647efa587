//! The emulated AWS services. Each module owns one service: its state (persisted through
//! `cumulo-store` in tables prefixed with its name), its API operations as typed Rust functions, the
//! wire adapter that decodes requests into those operations, and (from the CloudFormation issue on)
//! the providers of its resource types.
//!
//! Invariant: a service changes another service's state only through that service's typed
//! operations, never through its tables; the [`gateway`] is the only place that knows every service.

pub mod cloudformation;
pub mod dynamodb;
pub mod gateway;
pub mod iam;
mod json_body;
pub mod kms;
pub mod logs;
pub mod providers;
pub mod s3;
pub mod secretsmanager;
pub mod sns;
pub mod sqs;
pub mod ssm;
pub mod sts;

pub use gateway::{Config, Gateway, GatewayError, Refusal, SigningKeys};

use cumulo_wire::{AwsRequest, AwsResponse, Protocol};

/// One emulated AWS service as the gateway sees it.
#[async_trait::async_trait]
pub trait Service: Send + Sync {
    /// The SigV4 signing name (`s3`, `sqs`, ...) — also the key in the health report.
    fn name(&self) -> &'static str;

    /// The protocol this service speaks for `req`. The gateway renders the errors it raises on the
    /// service's behalf (bad signature, oversized body, malformed request) in it, so clients raise
    /// the same exception class as against AWS. The default infers it from the service name and
    /// the request's shape, as botocore would have built it (SQS, say, speaks JSON when the request
    /// has `X-Amz-Target` and query otherwise); override only if that guess is wrong.
    fn protocol(&self, req: &AwsRequest) -> Protocol {
        gateway::infer_protocol(self.name(), req)
    }

    /// Whether the service has been built: the health report says `running` for one that has
    /// and `available` for one that is built on its first request (LocalStack's words).
    fn started(&self) -> bool {
        true
    }

    /// Answers one request. Errors are rendered in the service's own protocol by the service.
    async fn handle(&self, req: AwsRequest) -> AwsResponse;
}
