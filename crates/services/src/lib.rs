//! The emulated AWS services. Each module owns one service: its state (persisted through
//! `cumulo-store` in tables prefixed with its name), its API operations as typed Rust functions, the
//! wire adapter that decodes requests into those operations, and (from the CloudFormation issue on)
//! the providers of its resource types.
//!
//! Invariant: a service changes another service's state only through that service's typed
//! operations, never through its tables; the [`catalog`] is the only place that lists every service.

pub mod acm;
pub mod apigateway;
pub mod apigatewayv2;
pub mod applicationautoscaling;
pub mod apprunner;
pub mod autoscaling;
pub mod catalog;
pub mod cloudformation;
pub mod cloudfront;
pub mod cloudwatch;
pub mod custom;
pub mod dynamodb;
pub mod ec2;
pub mod ecr;
pub mod ecs;
pub mod efs;
pub mod elasticloadbalancing;
pub mod events;
pub mod gateway;
pub mod iam;
mod json_body;
pub mod kms;
pub mod lambda;
pub mod logs;
pub mod providers;
mod query_models;
mod regional;
pub mod route53;
pub mod s3;
mod schedule;
pub mod scheduler;
pub mod secretsmanager;
pub mod servicediscovery;
pub mod sns;
pub mod sqs;
pub mod ssm;
pub mod stepfunctions;
pub mod sts;

pub use apigatewayv2::websocket::{Session as WebSocketSession, Upgrade as WebSocketUpgrade};
pub use gateway::{Config, Gateway, GatewayError, Refusal, SigningKeys};

use cumulo_wire::{AwsRequest, AwsResponse};

/// One emulated AWS service as the gateway sees it. Its name, routing keys and protocols are
/// its [`catalog::Descriptor`].
#[async_trait::async_trait]
pub trait Service: Send + Sync {
    /// Answers one request. Errors are rendered in the service's own protocol by the service.
    async fn handle(&self, req: AwsRequest) -> AwsResponse;
}
