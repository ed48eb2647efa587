//! Custom resources (`Custom::*` and `AWS::CloudFormation::CustomResource`) with CloudFormation's
//! real protocol: the request (RequestType, RequestId, StackId, LogicalResourceId,
//! PhysicalResourceId, ResourceType, ResourceProperties, OldResourceProperties, ResponseURL)
//! goes to the ServiceToken — a Lambda function, invoked in-process, or an SNS topic, published
//! to — and the handler answers by PUTting its response to the ResponseURL, as `cfn-response`
//! does. The ResponseURL is an endpoint of cumulo's own ([`RESPONSE_PATH`]), called unsigned as
//! S3 presigned URLs are. A function that returns the response object directly is accepted too.
//!
//! The wait for a response is bounded by `CUMULO_CUSTOM_RESOURCE_TIMEOUT` (seconds; default
//! 300, where AWS waits an hour): a handler that never answers fails the resource then. A
//! function that fails (an unhandled error) without having answered fails the resource at once
//! with the function's error, rather than after the wait: nothing can answer any more.

pub mod provider;
pub(crate) mod responses;

pub use provider::CustomResourceProvider;
pub use responses::{Responses, Sent};

/// Where custom resource handlers PUT their responses: `{RESPONSE_PATH}{token}`.
pub const RESPONSE_PATH: &str = "/_cumulo/cfn-response/";
