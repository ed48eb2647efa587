//! Running a template's transforms before it is prepared, as CloudFormation does when a stack
//! operation or change set starts: every `Fn::Transform` (most deeply nested first), then the
//! `Transform` section in order. AWS::Include reads its snippet from the emulator's S3; a macro
//! is the `AWS::CloudFormation::Macro` some stack of the account and region has created, and
//! its Lambda function is invoked with AWS's request event and must answer with AWS's response;
//! SAM (`AWS::Serverless-2016-10-31`) is the pure `cumulo-sam` crate.
//! The template crate finds the sites and splices the answers; this drives the world.

use crate::api::Caller;
use crate::engine::Engine;
use crate::error::EngineError;
use crate::state::State;
use crate::status::StackStatus;
use cumulo_template::Value;
use cumulo_template::model::parameters_of;
pub use cumulo_template::transform::expands;
use cumulo_template::transform::{self, Call, INCLUDE, SERVERLESS};
use indexmap::IndexMap;
use serde_json::json;

/// The resource type that registers a macro.
pub const MACRO_TYPE: &str = "AWS::CloudFormation::Macro";
/// A macro that keeps answering with more `Fn::Transform`s is cut off after this many sites.
const MAX_SITES: usize = 500;

/// A template after its transforms ran.
pub struct Processed {
    pub root: Value,
    /// What the stack records and later operations prepare from: the processed template, or
    /// the submitted text when no transform ran.
    pub text: String,
    /// The submitted text, when it differs from `text` (GetTemplate's Original stage).
    pub original: Option<String>,
}

/// AWS's refusal of CreateStack/UpdateStack for a template with macros without the capability
/// (change sets do not need it: their processed template is reviewed before it runs).
pub fn check_auto_expand(root: &Value, capabilities: &[String]) -> Result<(), EngineError> {
    if expands(root) && !capabilities.iter().any(|c| c == "CAPABILITY_AUTO_EXPAND") {
        return Err(EngineError::insufficient_capabilities(
            "Requires capabilities : [CAPABILITY_AUTO_EXPAND]",
        ));
    }
    Ok(())
}

/// Why processing stopped: the template itself is wrong (refused at the call, as AWS refuses
/// it), or a transform failed (a change set records that as its FAILED status).
pub enum Stop {
    Template(EngineError),
    Transform(EngineError),
}

/// Runs the template's transforms. `given` are the operation's parameter values (defaults fill
/// the rest) for `templateParameterValues` and AWS::Include's `Location`.
pub async fn process(
    engine: &Engine,
    caller: &Caller,
    text: String,
    root: Value,
    given: &IndexMap<String, String>,
) -> Result<Processed, EngineError> {
    run(engine, caller, text, root, given)
        .await
        .map_err(|stop| match stop {
            Stop::Template(e) | Stop::Transform(e) => e,
        })
}

/// [`process`], telling a transform's failure from a template's error.
pub async fn run(
    engine: &Engine,
    caller: &Caller,
    text: String,
    root: Value,
    given: &IndexMap<String, String>,
) -> Result<Processed, Stop> {
    let refused = Stop::Template;
    let failed = Stop::Transform;
    let unprocessed = |root: Value, text: String| Processed {
        root,
        text,
        original: None,
    };
    let template_calls = transform::template_calls(&root)
        .map_err(diag)
        .map_err(refused)?;
    if !expands(&root) {
        return Ok(unprocessed(root, text));
    }
    let values = parameter_values(&root, given).map_err(refused)?;
    let run = Runner {
        engine,
        caller,
        values: &values,
    };
    let mut root = root;
    for _ in 0..MAX_SITES {
        let Some(site) = transform::innermost_site(&root)
            .map_err(diag)
            .map_err(refused)?
        else {
            let mut fragment = transform::template_fragment(&root);
            let mut left: Vec<Call> = Vec::new();
            for call in template_calls {
                if transform::is_run_by_engine(&call.name) {
                    fragment = run.call(&call, fragment).await.map_err(failed)?;
                } else {
                    left.push(call);
                }
            }
            let root = transform::with_transforms(fragment, &left);
            let processed = serde_json::to_string_pretty(&root.to_json())
                .map_err(|e| EngineError::validation(e.to_string()))
                .map_err(refused)?;
            return Ok(Processed {
                root,
                text: processed,
                original: Some(text),
            });
        };
        let mut fragment = site.fragment;
        for call in &site.calls {
            fragment = run.call(call, fragment).await.map_err(failed)?;
        }
        transform::splice(&mut root, &site.path, fragment);
    }
    Err(failed(EngineError::validation(format!(
        "Template format error: more than {MAX_SITES} Fn::Transform sites were processed; a macro keeps answering with Fn::Transform"
    ))))
}

fn diag(d: cumulo_template::Diagnostic) -> EngineError {
    EngineError::validation(d.aws_message())
}

/// `templateParameterValues`: every declared parameter's value (given, else its default),
/// list types as lists, as AWS passes them evaluated.
fn parameter_values(
    root: &Value,
    given: &IndexMap<String, String>,
) -> Result<serde_json::Map<String, serde_json::Value>, EngineError> {
    let decls = parameters_of(root).map_err(super::common::first_error)?;
    Ok(decls
        .values()
        .filter_map(|d| {
            let v = given.get(&d.name).or(d.default.as_ref())?;
            let listed = d.type_name == "CommaDelimitedList" || d.type_name.starts_with("List<");
            let value = if listed {
                json!(v.split(',').map(str::trim).collect::<Vec<_>>())
            } else {
                json!(v)
            };
            Some((d.name.clone(), value))
        })
        .collect())
}

struct Runner<'a> {
    engine: &'a Engine,
    caller: &'a Caller,
    values: &'a serde_json::Map<String, serde_json::Value>,
}

impl Runner<'_> {
    async fn call(&self, call: &Call, fragment: Value) -> Result<Value, EngineError> {
        if call.name == INCLUDE {
            return self.include(call, fragment).await;
        }
        if call.name == SERVERLESS {
            return self.serverless(fragment);
        }
        self.run_macro(call, fragment).await
    }

    /// SAM: AWS's translator's output, made in-process by the `cumulo-sam` crate.
    fn serverless(&self, fragment: Value) -> Result<Value, EngineError> {
        let ctx = cumulo_sam::Context {
            region: self.caller.region.clone(),
            partition: cumulo_sam::partition_of(&self.caller.region).to_string(),
            parameters: self.values.clone(),
            refuse_unemulated: true,
            now: crate::state::now_ms() / 1000,
        };
        let out = cumulo_sam::transform(&fragment.to_json(), &ctx).map_err(|failure| {
            EngineError::validation(format!("Transform {SERVERLESS} failed with: {failure}"))
        })?;
        Ok(Value::from(&out))
    }

    async fn include(&self, call: &Call, fragment: Value) -> Result<Value, EngineError> {
        let failed = |why: String| {
            EngineError::validation(format!("Transform {INCLUDE} failed with: {why}"))
        };
        let param = |name: &str| {
            self.values.get(name).map(|v| match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            })
        };
        let location = transform::include_location(call, &param).map_err(failed)?;
        if !location.starts_with("s3://") {
            return Err(failed(format!(
                "Location {location} must be an Amazon S3 URI (s3://bucket/key)"
            )));
        }
        let text = self
            .engine
            .inner
            .world
            .fetch_include(&self.caller.region, &location)
            .await
            .map_err(failed)?;
        let snippet = cumulo_template::parse_template(&text)
            .map_err(|d| failed(super::common::first_error(d).message))?
            .value;
        transform::include(fragment, snippet).map_err(failed)
    }

    async fn run_macro(&self, call: &Call, fragment: Value) -> Result<Value, EngineError> {
        let id = format!("{}::{}", self.caller.account_id, call.name);
        let function = {
            let st = self.engine.inner.lock();
            macro_function(&st, self.caller, &call.name)
        }
        .ok_or_else(|| EngineError::validation(format!("No transform named {id} found.")))?;
        let request_id = uuid::Uuid::new_v4().to_string();
        let params: serde_json::Value = Value::Object(call.parameters.clone()).to_json();
        let event = json!({
            "region": self.caller.region,
            "accountId": self.caller.account_id,
            "fragment": fragment.to_json(),
            "transformId": id,
            "params": params,
            "requestId": request_id,
            "templateParameterValues": self.values,
        });
        let failed =
            |why: &str| EngineError::validation(format!("Transform {id} failed with: {why}"));
        let malformed =
            || EngineError::validation(format!("Received malformed response from transform {id}"));
        let answer = self
            .engine
            .inner
            .world
            .invoke_function(
                &self.caller.region,
                &self.caller.host,
                &function,
                event.to_string(),
            )
            .await
            .map_err(|e| failed(&e))?;
        let answer: serde_json::Value = serde_json::from_str(&answer).map_err(|_| malformed())?;
        if answer.get("requestId").and_then(|v| v.as_str()) != Some(request_id.as_str()) {
            return Err(malformed());
        }
        let status = answer.get("status").and_then(|v| v.as_str());
        if !status.is_some_and(|s| s.eq_ignore_ascii_case("success")) {
            let why = answer
                .get("errorMessage")
                .and_then(|v| v.as_str())
                .unwrap_or_default();
            return Err(failed(why));
        }
        match answer.get("fragment") {
            Some(f) if !f.is_null() => Ok(Value::from(f)),
            _ => Err(malformed()),
        }
    }
}

/// The function of the macro named `name` in the caller's account and region: the
/// `AWS::CloudFormation::Macro` resource a live stack has created with that Name.
pub(crate) fn macro_function(st: &State, caller: &Caller, name: &str) -> Option<String> {
    st.stacks
        .values()
        .filter(|s| {
            s.region == caller.region
                && s.account_id == caller.account_id
                && s.status != StackStatus::DELETE_COMPLETE
        })
        .flat_map(|s| s.resources.values())
        .filter(|r| r.resource_type == MACRO_TYPE)
        .filter(|r| matches!(r.status.as_str(), "CREATE_COMPLETE" | "UPDATE_COMPLETE"))
        .find(|r| r.properties.get("Name").and_then(|v| v.as_str()) == Some(name))
        .and_then(|r| {
            r.properties
                .get("FunctionName")?
                .as_str()
                .map(str::to_string)
        })
}
