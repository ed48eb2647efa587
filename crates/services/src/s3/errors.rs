//! S3's error codes, statuses and messages, worded exactly as AWS words them.

use cumulo_wire::AwsError;
use http::StatusCode;

fn err(status: StatusCode, code: &str, message: &str) -> AwsError {
    AwsError::new(status, code, message)
}

pub fn no_such_bucket(bucket: &str) -> AwsError {
    err(
        StatusCode::NOT_FOUND,
        "NoSuchBucket",
        "The specified bucket does not exist",
    )
    .with_extra("BucketName", bucket)
}

pub fn no_such_key(key: &str) -> AwsError {
    err(
        StatusCode::NOT_FOUND,
        "NoSuchKey",
        "The specified key does not exist.",
    )
    .with_extra("Key", key)
}

pub fn no_such_version(key: &str, version_id: &str) -> AwsError {
    err(
        StatusCode::NOT_FOUND,
        "NoSuchVersion",
        "The specified version does not exist.",
    )
    .with_extra("Key", key)
    .with_extra("VersionId", version_id)
}

pub fn no_such_upload(upload_id: &str) -> AwsError {
    err(
        StatusCode::NOT_FOUND,
        "NoSuchUpload",
        "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
    )
    .with_extra("UploadId", upload_id)
}

pub fn bucket_already_owned(bucket: &str) -> AwsError {
    err(
        StatusCode::CONFLICT,
        "BucketAlreadyOwnedByYou",
        "Your previous request to create the named bucket succeeded and you already own it.",
    )
    .with_extra("BucketName", bucket)
}

pub fn bucket_not_empty(bucket: &str) -> AwsError {
    err(
        StatusCode::CONFLICT,
        "BucketNotEmpty",
        "The bucket you tried to delete is not empty",
    )
    .with_extra("BucketName", bucket)
}

pub fn invalid_bucket_name(bucket: &str) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "InvalidBucketName",
        "The specified bucket is not valid.",
    )
    .with_extra("BucketName", bucket)
}

pub fn malformed_xml() -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "MalformedXML",
        "The XML you provided was not well-formed or did not validate against our published schema",
    )
}

pub fn invalid_argument(message: &str, name: &str, value: &str) -> AwsError {
    err(StatusCode::BAD_REQUEST, "InvalidArgument", message)
        .with_extra("ArgumentName", name)
        .with_extra("ArgumentValue", value)
}

pub fn invalid_request(message: &str) -> AwsError {
    err(StatusCode::BAD_REQUEST, "InvalidRequest", message)
}

pub fn precondition_failed(condition: &str) -> AwsError {
    err(
        StatusCode::PRECONDITION_FAILED,
        "PreconditionFailed",
        "At least one of the pre-conditions you specified did not hold",
    )
    .with_extra("Condition", condition)
}

pub fn invalid_range(range: &str, size: u64) -> AwsError {
    err(
        StatusCode::RANGE_NOT_SATISFIABLE,
        "InvalidRange",
        "The requested range is not satisfiable",
    )
    .with_extra("RangeRequested", range)
    .with_extra("ActualObjectSize", &size.to_string())
}

pub fn bad_digest(what: &str) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "BadDigest",
        &format!("The {what} you specified did not match the calculated checksum."),
    )
}

pub fn invalid_tag(message: &str) -> AwsError {
    err(StatusCode::BAD_REQUEST, "InvalidTag", message)
}

pub fn no_such_config(code: &str, message: &str, bucket: &str) -> AwsError {
    err(StatusCode::NOT_FOUND, code, message).with_extra("BucketName", bucket)
}

pub fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(format!("cumulo s3: {e}"))
}

pub fn not_implemented(operation: &str) -> AwsError {
    AwsError::not_implemented("s3", operation)
}

pub fn method_not_allowed(method: &str, resource: &str) -> AwsError {
    err(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        "The specified method is not allowed against this resource.",
    )
    .with_extra("Method", method)
    .with_extra("ResourceType", resource)
}
