//! CloudWatch's three protocols over the one set of operations (`ops`): Smithy RPC v2 CBOR
//! (`smithy-protocol: rpc-v2-cbor`, the operation in the path), awsJson1_0 (`X-Amz-Target:
//! GraniteServiceVersion20100801.<Op>`) and awsQuery (`Action`, `Version=2010-08-01`). Each
//! decodes into JSON in the API's member names and encodes the answer from it; the query codec
//! and the CBOR writer are driven by botocore's model (`model.json`). The model is
//! awsQueryCompatible: JSON and CBOR errors carry the error shape's name as `__type` and the
//! query code in `x-amzn-query-error`, which botocore turns back into the query code.

use super::CloudWatchService;
use cumulo_wire::query::QueryParams;
use cumulo_wire::query_model::QueryModel;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol, cbor};
use serde_json::Value;
use std::sync::LazyLock;

pub const NS: &str = "http://monitoring.amazonaws.com/doc/2010-08-01/";
pub const VERSION: &str = "2010-08-01";
pub const TARGET_PREFIX: &str = "GraniteServiceVersion20100801";

static MODEL: LazyLock<Option<QueryModel>> =
    LazyLock::new(|| QueryModel::parse(include_str!("model.json")).ok());

pub fn model() -> Result<&'static QueryModel, AwsError> {
    MODEL
        .as_ref()
        .ok_or_else(|| AwsError::internal("the CloudWatch model is unreadable"))
}

/// The request's protocol and operation.
fn protocol_and_operation(req: &AwsRequest, params: &QueryParams) -> (Protocol, String) {
    if req.header("smithy-protocol") == Some("rpc-v2-cbor") {
        let op = req
            .raw_path
            .rsplit_once("/operation/")
            .map_or("", |(_, op)| op);
        return (Protocol::RpcV2Cbor, op.to_string());
    }
    if let Some(op) = req.target_operation() {
        return (Protocol::Json10, op.to_string());
    }
    (
        Protocol::Query(NS),
        params.get("Action").unwrap_or("").to_string(),
    )
}

fn decode(
    protocol: Protocol,
    model: &QueryModel,
    op: &str,
    req: &AwsRequest,
    params: &QueryParams,
) -> Result<Value, AwsError> {
    match protocol {
        Protocol::RpcV2Cbor => cbor::decode(&req.body),
        Protocol::Json10 => {
            if req.body.iter().all(u8::is_ascii_whitespace) {
                return Ok(Value::Object(Default::default()));
            }
            match serde_json::from_slice::<Value>(&req.body) {
                Ok(v @ Value::Object(_)) => Ok(v),
                _ => Err(AwsError::bad_request(
                    "SerializationException",
                    "Start of structure or map found where not expected.",
                )),
            }
        }
        _ => model.decode(op, params),
    }
}

/// The error in the request's protocol, with the query code for the JSON ones.
fn error(
    protocol: Protocol,
    model: Option<&QueryModel>,
    mut e: AwsError,
    request_id: &str,
) -> AwsResponse {
    if matches!(protocol, Protocol::Json10 | Protocol::RpcV2Cbor) && e.code != "NotImplemented" {
        // Qualified as AWS sends them (recorded against AWS, aws-recordings/cloudwatch): the
        // model's shapes in CloudWatch's namespace, input validation in the framework's.
        let shape = match model.and_then(|m| m.error_shape(&e.code)) {
            Some(s) => format!("com.amazonaws.cloudwatch.v2010_08_01#{s}"),
            None if e.code == "ValidationError" => {
                "com.amazon.coral.validate#ValidationException".to_string()
            }
            None => e.code.clone(),
        };
        let query = std::mem::replace(&mut e.code, shape);
        e = e.with_query_code(&query);
    }
    e.into_response(protocol, request_id)
}

pub fn handle(svc: &CloudWatchService, req: &AwsRequest) -> AwsResponse {
    let params = QueryParams::from_request(req);
    let (protocol, op) = protocol_and_operation(req, &params);
    let model = match model() {
        Ok(m) => m,
        Err(e) => return error(protocol, None, e, &req.request_id),
    };
    let answer = (|| {
        if !model.has_operation(&op) {
            return Err(match protocol {
                Protocol::Query(_) => AwsError::bad_request(
                    "InvalidAction",
                    format!("Could not find operation {op} for version {VERSION}"),
                ),
                _ => AwsError::bad_request(
                    "UnknownOperationException",
                    format!("Unknown operation {op}"),
                ),
            });
        }
        let input = decode(protocol, model, &op, req, &params)?;
        svc.call(&req.region, &op, &input)
    })();
    let output = match answer {
        Ok(v) => v,
        Err(e) => return error(protocol, Some(model), e, &req.request_id),
    };
    let mut resp = match protocol {
        Protocol::RpcV2Cbor => {
            let mut r = AwsResponse::new(
                http::StatusCode::OK,
                "application/cbor",
                cbor::encode_output(model, &op, &output),
            );
            r.set_header("smithy-protocol", "rpc-v2-cbor");
            r
        }
        Protocol::Json10 => AwsResponse::json("application/x-amz-json-1.0", &output),
        _ => AwsResponse::xml(model.encode(&op, &output, &req.request_id)),
    };
    resp.set_header("x-amzn-requestid", &req.request_id);
    resp
}
