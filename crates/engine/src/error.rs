//! The engine's error: AWS's error code, HTTP status and message, so the wire adapter renders it
//! without knowing which operation failed. Codes are botocore's (`ChangeSetNotFound`, not
//! `ChangeSetNotFoundException`).

/// A refused operation, shaped as CloudFormation answers it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct EngineError {
    /// AWS's error code (`ValidationError`, `AlreadyExistsException`, ...).
    pub code: &'static str,
    /// HTTP status AWS answers with.
    pub status: u16,
    pub message: String,
}

impl EngineError {
    fn new(code: &'static str, status: u16, message: impl Into<String>) -> Self {
        EngineError {
            code,
            status,
            message: message.into(),
        }
    }

    pub fn validation(message: impl Into<String>) -> Self {
        Self::new("ValidationError", 400, message)
    }

    /// `Stack with id X does not exist`, AWS's answer for a name or ARN it cannot resolve.
    pub fn stack_not_found(name: &str) -> Self {
        Self::validation(format!("Stack with id {name} does not exist"))
    }

    pub fn already_exists(message: impl Into<String>) -> Self {
        Self::new("AlreadyExistsException", 400, message)
    }

    pub fn change_set_not_found(name: &str) -> Self {
        Self::new(
            "ChangeSetNotFound",
            404,
            format!("ChangeSet [{name}] does not exist"),
        )
    }

    pub fn invalid_change_set_status(message: impl Into<String>) -> Self {
        Self::new("InvalidChangeSetStatus", 400, message)
    }

    pub fn insufficient_capabilities(message: impl Into<String>) -> Self {
        Self::new("InsufficientCapabilitiesException", 400, message)
    }

    pub fn token_already_exists(message: impl Into<String>) -> Self {
        Self::new("TokenAlreadyExistsException", 400, message)
    }

    pub fn limit_exceeded(message: impl Into<String>) -> Self {
        Self::new("LimitExceededException", 400, message)
    }

    pub fn type_not_found(message: impl Into<String>) -> Self {
        Self::new("TypeNotFoundException", 404, message)
    }

    /// The store failed: the operation did not happen.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new("InternalFailure", 500, message)
    }
}

impl From<cumulo_store::StoreError> for EngineError {
    fn from(e: cumulo_store::StoreError) -> Self {
        EngineError::internal(e.to_string())
    }
}
