use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;

pub async fn get_template_summary(
    _e: &Engine,
    _c: &Caller,
    _i: TemplateInput,
) -> Result<TemplateSummaryOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
pub async fn validate_template(
    _e: &Engine,
    _c: &Caller,
    _i: TemplateInput,
) -> Result<ValidateTemplateOutput, EngineError> {
    Err(EngineError::internal(
        "cumulo: the engine does not implement this operation yet",
    ))
}
