use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;

pub async fn create_change_set(
    _e: &Engine,
    _c: &Caller,
    _i: CreateChangeSetInput,
) -> Result<CreateChangeSetOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub fn describe_change_set(
    _e: &Engine,
    _c: &Caller,
    _i: DescribeChangeSetInput,
) -> Result<ChangeSetView, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub async fn execute_change_set(
    _e: &Engine,
    _c: &Caller,
    _i: ExecuteChangeSetInput,
) -> Result<(), EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub fn delete_change_set(_e: &Engine, _c: &Caller, _i: ChangeSetRef) -> Result<(), EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub fn list_change_sets(
    _e: &Engine,
    _c: &Caller,
    _i: ListChangeSetsInput,
) -> Result<ListChangeSetsOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
