//! AWS::Serverless::Api and HttpApi, and the Api/HttpApi events of functions.

use crate::events::Event;
use crate::function::Target;
use crate::resource::{Res, Sam};
use crate::{Translation, invalid_event, unsupported};
use serde_json::{Map, Value};

/// The implicit APIs (`ServerlessRestApi`, `ServerlessHttpApi`) functions' events make.
pub fn add_implicit_apis(
    _root: &mut Map<String, Value>,
    _t: &Translation,
) -> Result<(), Vec<String>> {
    Ok(())
}

pub fn function_event(
    _t: &mut Translation,
    sam: &Sam,
    event: &Event,
    _target: &Target,
) -> Result<Vec<Res>, String> {
    Err(invalid_event(
        sam.id,
        event.name,
        format!(
            "Event type '{}' is not supported by cumulo's SAM transform.",
            event.ty
        ),
    ))
}

pub fn translate(_t: &mut Translation, sam: &Sam) -> Result<Vec<Res>, String> {
    Err(unsupported(sam.id, sam.ty))
}
