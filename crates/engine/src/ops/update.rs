use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;

pub async fn update_stack(
    _e: &Engine,
    _c: &Caller,
    _i: UpdateStackInput,
) -> Result<StackIdOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
