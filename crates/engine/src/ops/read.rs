use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;

pub fn describe_stacks(
    _e: &Engine,
    _c: &Caller,
    _i: DescribeStacksInput,
) -> Result<DescribeStacksOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub fn list_stacks(
    _e: &Engine,
    _c: &Caller,
    _i: ListStacksInput,
) -> Result<ListStacksOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub fn describe_stack_events(
    _e: &Engine,
    _c: &Caller,
    _i: DescribeStackEventsInput,
) -> Result<DescribeStackEventsOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub fn describe_stack_resource(
    _e: &Engine,
    _c: &Caller,
    _s: &str,
    _l: &str,
) -> Result<StackResourceView, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub fn describe_stack_resources(
    _e: &Engine,
    _c: &Caller,
    _i: DescribeStackResourcesInput,
) -> Result<Vec<StackResourceView>, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub fn list_stack_resources(
    _e: &Engine,
    _c: &Caller,
    _i: ListStackResourcesInput,
) -> Result<ListStackResourcesOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub fn get_template(
    _e: &Engine,
    _c: &Caller,
    _i: GetTemplateInput,
) -> Result<GetTemplateOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub fn list_exports(
    _e: &Engine,
    _c: &Caller,
    _n: Option<String>,
) -> Result<ListExportsOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub fn list_imports(
    _e: &Engine,
    _c: &Caller,
    _i: ListImportsInput,
) -> Result<ListImportsOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
