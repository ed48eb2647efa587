//! REST APIs: AWS::Serverless::Api and functions' `Api` events, as the translator makes them.
//!
//! Three passes, in the translator's order: before Globals, every Api without a definition gets
//! SAM's swagger skeleton and the implicit `ServerlessRestApi` gathers the events that name no
//! `RestApiId` (each event's path and method added to its API's swagger); during each
//! function's translation, its Api events add their Lambda proxy integrations and permissions;
//! last, each Api becomes an AWS::ApiGateway::RestApi, a Deployment and a Stage.
//!
//! The swagger bodies live as [`Py`] values, the translator's Python 2.7 emulation, because the
//! Deployment's logical id hashes `str(swagger)`: every copy and insertion the translator makes
//! of a body is made here in the same order, so the dicts print in the same order.

use crate::events::Event;
use crate::function::Target;
use crate::py27::{Dict, Py};
use crate::resource::{Res, Sam, reference, tag_list, truthy};
use crate::{Translation, invalid, invalid_event, pyjson, unsupported};
use serde_json::{Map, Value, json};
use sha1::{Digest, Sha1};
use std::collections::BTreeMap;

mod auth;
pub(crate) mod domain;
mod editor;
mod event;
mod extensions;
mod plugin;
mod policy;
mod resource;

use editor::*;
pub use event::{function_event, state_machine_event};
use extensions::*;
use plugin::py27_order;
pub use plugin::{add_implicit, fix_openapi_definitions};
pub use resource::translate;

pub const API: &str = "AWS::Serverless::Api";

const IMPLICIT: &str = "ServerlessRestApi";

const IMPLICIT_HTTP: &str = "ServerlessHttpApi";

/// Each REST API's swagger body (by the API's logical id), as the translator holds it.
#[derive(Debug, Default)]
pub struct Bodies {
    bodies: BTreeMap<String, Py>,
    /// Per API, the concatenated FunctionNames of the functions whose Api events name it: part
    /// of the Deployment's hash.
    function_names: BTreeMap<String, String>,
    /// The template's Resources as the translator's converted dict (its keys' history), when
    /// it has a REST API.
    resources: Option<Dict>,
    /// The `SHARED` usage plan gathered over the APIs.
    shared: auth::SharedUsagePlan,
    /// The Route 53 record set groups the APIs' domains share.
    pub(crate) record_sets: domain::RecordSetGroups,
}

impl Bodies {
    /// The resources' iteration order, when the translator converted the template.
    pub fn order(&self) -> Option<Vec<String>> {
        self.resources.as_ref().map(Dict::keys)
    }

    /// A converted dict's iteration order of these keys, when the translator converted the
    /// template (it has a REST API); `None` otherwise.
    pub fn converted_order<'a>(
        &self,
        keys: impl Iterator<Item = &'a String>,
    ) -> Option<Vec<String>> {
        self.resources.as_ref().map(|_| py27_order(keys))
    }

    /// The implicit HTTP API plugin's passage through the Resources dict: `ServerlessHttpApi`
    /// set, and deleted again unless kept.
    pub fn http_api_plugin(&mut self, kept: bool) {
        if let Some(d) = &mut self.resources {
            d.set(IMPLICIT_HTTP, false, Py::None);
            if !kept {
                d.remove(IMPLICIT_HTTP);
            }
        }
    }
}
