use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;

pub async fn delete_stack(
    _e: &Engine,
    _c: &Caller,
    _i: DeleteStackInput,
) -> Result<(), EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
