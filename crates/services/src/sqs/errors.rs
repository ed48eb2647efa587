//! SQS's errors. SQS speaks JSON today but is awsQueryCompatible: each error has its modern JSON
//! code (`__type`, the shape name in the model) and the legacy query code, which the JSON protocol
//! sends in `x-amzn-query-error` and the query protocol sends as `<Code>`.

use cumulo_wire::AwsError;
use http::StatusCode;

/// Builds an SQS error from its JSON code, legacy query code, status and message.
fn err(status: StatusCode, code: &str, query_code: &str, message: impl Into<String>) -> AwsError {
    AwsError::new(status, code, message).with_query_code(query_code)
}

pub fn queue_does_not_exist() -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "QueueDoesNotExist",
        "AWS.SimpleQueueService.NonExistentQueue",
        "The specified queue does not exist.",
    )
}

pub fn queue_name_exists(message: impl Into<String>) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "QueueNameExists",
        "QueueAlreadyExists",
        message,
    )
}

pub fn invalid_parameter_value(message: impl Into<String>) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "InvalidParameterValue",
        "InvalidParameterValue",
        message,
    )
}

/// The message AWS uses for an out-of-range numeric request parameter.
pub fn invalid_parameter(name: &str, value: impl std::fmt::Display, reason: &str) -> AwsError {
    invalid_parameter_value(format!(
        "Value {value} for parameter {name} is invalid. Reason: {reason}"
    ))
}

pub fn missing_parameter(name: &str) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "MissingParameter",
        "MissingParameter",
        format!("The request must contain the parameter {name}."),
    )
}

pub fn invalid_attribute_name(name: &str) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "InvalidAttributeName",
        "InvalidAttributeName",
        format!("Unknown Attribute {name}."),
    )
}

pub fn invalid_attribute_value(name: &str) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "InvalidAttributeValue",
        "InvalidAttributeValue",
        format!("Invalid value for the parameter {name}."),
    )
}

pub fn receipt_handle_is_invalid(handle: &str) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "ReceiptHandleIsInvalid",
        "ReceiptHandleIsInvalid",
        format!("The input receipt handle \"{handle}\" is not a valid receipt handle."),
    )
}

pub fn message_not_inflight() -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "MessageNotInflight",
        "AWS.SimpleQueueService.MessageNotInflight",
        "Message does not exist or is not available for visibility timeout change.",
    )
}

pub fn purge_queue_in_progress(queue: &str) -> AwsError {
    err(
        StatusCode::FORBIDDEN,
        "PurgeQueueInProgress",
        "AWS.SimpleQueueService.PurgeQueueInProgress",
        format!("Only one PurgeQueue operation on {queue} is allowed every 60 seconds."),
    )
}

pub fn empty_batch_request(entry: &str) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "EmptyBatchRequest",
        "AWS.SimpleQueueService.EmptyBatchRequest",
        format!("There should be at least one {entry} in the request."),
    )
}

pub fn too_many_entries(count: usize) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "TooManyEntriesInBatchRequest",
        "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
        format!("Maximum number of entries per request are 10. You have sent {count}."),
    )
}

pub fn batch_entry_ids_not_distinct(id: &str) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "BatchEntryIdsNotDistinct",
        "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
        format!("Id {id} repeated."),
    )
}

pub fn invalid_batch_entry_id() -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "InvalidBatchEntryId",
        "AWS.SimpleQueueService.InvalidBatchEntryId",
        "A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.",
    )
}

pub fn batch_request_too_long(size: usize, max: i64) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "BatchRequestTooLong",
        "AWS.SimpleQueueService.BatchRequestTooLong",
        format!("Batch requests cannot be longer than {max} bytes. You have sent {size} bytes."),
    )
}

pub fn invalid_message_contents() -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "InvalidMessageContents",
        "InvalidMessageContents",
        "Invalid characters found. Valid unicode characters are #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
    )
}

pub fn too_many_tags() -> AwsError {
    invalid_parameter_value(
        "Too many tags added for queue. Maximum number of tags per queue is 50.",
    )
}

pub fn resource_not_found(message: impl Into<String>) -> AwsError {
    err(
        StatusCode::BAD_REQUEST,
        "ResourceNotFoundException",
        "ResourceNotFoundException",
        message,
    )
}

/// A request body that is not the JSON the protocol requires.
pub fn serialization(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("SerializationException", message)
}

pub fn store_failure(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(format!("cumulo: sqs could not persist the change: {e}"))
}
