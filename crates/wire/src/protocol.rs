//! The protocols botocore knows (`metadata.protocol` in a `service-2.json`).

/// How a service encodes requests, responses and errors on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Form-encoded request, XML response (`query`): IAM, STS, SNS, CloudFormation, SQS before 2023.
    /// The string is the response XML namespace, e.g. `http://sns.amazonaws.com/doc/2010-03-31/`.
    Query(&'static str),
    /// EC2's dialect of query: errors are `<Response><Errors><Error>`.
    Ec2(&'static str),
    /// `application/x-amz-json-1.0` with `X-Amz-Target` (DynamoDB, SQS today).
    Json10,
    /// `application/x-amz-json-1.1` with `X-Amz-Target` (SSM, KMS, Logs, Secrets Manager).
    Json11,
    /// Smithy RPC v2 CBOR (`smithy-protocol: rpc-v2-cbor`): CloudWatch for newer SDKs.
    RpcV2Cbor,
    /// REST with JSON bodies (Lambda).
    RestJson,
    /// REST with XML bodies (S3).
    RestXml,
}
