use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;

pub async fn create_stack(
    _e: &Engine,
    _c: &Caller,
    _i: CreateStackInput,
) -> Result<StackIdOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
