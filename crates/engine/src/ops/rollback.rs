use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;

pub async fn rollback_stack(
    _e: &Engine,
    _c: &Caller,
    _i: RollbackStackInput,
) -> Result<StackIdOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub async fn continue_update_rollback(
    _e: &Engine,
    _c: &Caller,
    _i: ContinueUpdateRollbackInput,
) -> Result<(), EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub async fn cancel_update_stack(
    _e: &Engine,
    _c: &Caller,
    _i: CancelUpdateStackInput,
) -> Result<(), EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
