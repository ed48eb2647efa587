//! The `AWS::Serverless-2016-10-31` transform (SAM): a SAM template in, the CloudFormation
//! template AWS's own translator (`samtranslator`) makes of it out — the same resources, logical
//! ids (their hashes included), properties and references. Pure: no I/O, no clock; what the
//! translator learns from the world (region, partition, parameter values, the time) comes in
//! through [`Context`]. What cumulo does not implement of SAM fails the transform naming the feature,
//! in the shape of the translator's own errors, never silently dropped.
//!
//! The translator's passes, in its order: Globals merged into each resource, the implicit APIs
//! (`ServerlessRestApi`, `ServerlessHttpApi`) gathered from function events, policy templates
//! expanded, then every SAM resource translated (functions first, then state machines, APIs,
//! the rest), and last the `Fn.Alias`-style references and renamed logical ids resolved.

mod api;
mod conditions;
mod events;
mod function;
mod globals;
mod http_auth;
mod http_domain;
mod intrinsics;
mod policies;
mod py27;
mod pyjson;
mod resource;
mod resources;
mod rest_api;
mod scheduler;

use intrinsics::Refs;
use resource::Res;
use serde_json::{Map, Value};

/// The transform's name, as templates write it.
pub const NAME: &str = "AWS::Serverless-2016-10-31";

/// What the translator needs from the world.
#[derive(Debug, Clone)]
pub struct Context {
    pub region: String,
    pub partition: String,
    /// The operation's parameter values (the template's defaults fill the rest).
    pub parameters: Map<String, Value>,
    /// Refuse the events whose source the deployment target does not emulate (a Kinesis
    /// stream), failing the change set naming it, instead of translating them as AWS's
    /// translator does into resources that would fail at deploy. Set by the engine; rendering
    /// and the comparison with `samtranslator` leave it off.
    pub refuse_unemulated: bool,
    /// The caller's clock, in whole seconds since the epoch: an Api with `AlwaysDeploy` names
    /// its Deployment after it (the translator's `int(time.time())`), so each operation
    /// deploys anew. The transform reads no clock of its own.
    pub now: i64,
}

impl Context {
    pub fn new(region: &str) -> Context {
        Context {
            region: region.to_string(),
            partition: partition_of(region).to_string(),
            parameters: Map::new(),
            refuse_unemulated: false,
            now: 0,
        }
    }
}

/// The partition of a region, as the translator derives it.
pub fn partition_of(region: &str) -> &'static str {
    let r = region.to_ascii_lowercase();
    [
        ("cn-", "aws-cn"),
        ("us-iso-", "aws-iso"),
        ("us-isob", "aws-iso-b"),
        ("us-gov", "aws-us-gov"),
        ("eu-isoe", "aws-iso-e"),
        ("us-isof", "aws-iso-f"),
        ("eusc-", "aws-eusc"),
    ]
    .iter()
    .find(|(p, _)| r.starts_with(p))
    .map_or("aws", |(_, v)| v)
}

/// The translator's refusal: every cause, each a full sentence naming the resource.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("Invalid Serverless Application Specification document. Number of errors found: {}. {}", .causes.len(), .causes.join(" "))]
pub struct Failure {
    pub causes: Vec<String>,
}

/// One cause: a resource's, an event's, or the template's structure.
pub(crate) fn invalid(id: &str, message: impl std::fmt::Display) -> String {
    format!("Resource with id [{id}] is invalid. {message}")
}

pub(crate) fn invalid_event(id: &str, event: &str, message: impl std::fmt::Display) -> String {
    invalid(id, format!("Event with id [{event}] is invalid. {message}"))
}

pub(crate) fn structure(message: impl std::fmt::Display) -> String {
    format!("Structure of the SAM template is invalid. {message}")
}

/// cumulo's refusal of a SAM feature it does not implement, in the translator's shape.
pub(crate) fn unsupported(id: &str, feature: &str) -> String {
    invalid(
        id,
        format!("{feature} is not supported by cumulo's SAM transform."),
    )
}

/// Runs the transform over a whole template (its `Transform` section already taken out or
/// still there: the output has none naming SAM).
pub fn transform(template: &Value, ctx: &Context) -> Result<Value, Failure> {
    let fail = |c: String| Failure { causes: vec![c] };
    let Some(root) = template.as_object() else {
        return Err(fail(structure("'Resources' section is required")));
    };
    let mut root = root.clone();
    match root.get("Resources") {
        Some(Value::Object(r)) if !r.is_empty() => {}
        Some(Value::Object(_)) | None => {
            return Err(fail(structure("'Resources' section is required")));
        }
        Some(_) => {
            return Err(fail(structure(
                "'Resources' section is required and must be a non-empty object",
            )));
        }
    }
    for (id, r) in root["Resources"].as_object().into_iter().flatten() {
        if !r.is_object() {
            return Err(fail(structure(format!(
                "All 'Resources' must be Objects. Resource {id} is not an object"
            ))));
        }
    }
    let params = intrinsics::parameter_values(&root, ctx);
    // The translator's plugins in its order: default definition bodies and the implicit REST
    // API, the implicit HTTP API, then Globals.
    let mut rest = rest_api::add_implicit(&mut root).map_err(|causes| Failure { causes })?;
    let mut t = Translation {
        ctx,
        params,
        original: Value::Null,
        refs: Refs::default(),
        renamed: Map::new(),
        errors: Vec::new(),
        conditions: Map::new(),
        rest: rest_api::Bodies::default(),
    };
    api::add_implicit_apis(&mut root, &t).map_err(|causes| Failure { causes })?;
    rest.http_api_plugin(
        root.get("Resources")
            .and_then(|r| r.get("ServerlessHttpApi"))
            .is_some(),
    );
    globals::apply(&mut root).map_err(fail)?;
    rest_api::fix_openapi_definitions(&mut root, &mut rest);
    t.rest = rest;
    t.original = Value::Object(root.clone());
    let out = t.run(root)?;
    Ok(out)
}

/// The state of one translation, shared by every resource's translation.
pub(crate) struct Translation<'a> {
    pub ctx: &'a Context,
    /// Parameter values (given, defaults, AWS::Region, AWS::Partition).
    pub params: Map<String, Value>,
    /// The template after Globals and implicit APIs, as resources see their neighbours.
    pub original: Value,
    /// `Fn.Alias`-style references: (logical id, property) → generated logical id.
    pub refs: Refs,
    /// Logical ids the translation changed (a LayerVersion's hash suffix).
    pub renamed: Map<String, Value>,
    pub errors: Vec<String>,
    /// Conditions generated along the way.
    pub conditions: Map<String, Value>,
    /// The REST APIs' swagger bodies, as the translator's Python 2.7 values.
    pub rest: rest_api::Bodies,
}

/// The SAM resource types, in the order the translator processes them.
const ORDER: [&[&str]; 4] = [
    &["AWS::Serverless::Function"],
    &["AWS::Serverless::StateMachine"],
    &[
        "AWS::Serverless::Api",
        "AWS::Serverless::HttpApi",
        "AWS::Serverless::WebSocketApi",
    ],
    &[
        "AWS::Serverless::SimpleTable",
        "AWS::Serverless::LayerVersion",
        "AWS::Serverless::Application",
        "AWS::Serverless::GraphQLApi",
        "AWS::Serverless::CapacityProvider",
    ],
];
const CONNECTOR: &str = "AWS::Serverless::Connector";

impl Translation<'_> {
    fn run(&mut self, mut root: Map<String, Value>) -> Result<Value, Failure> {
        let resources = root
            .get("Resources")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for (id, r) in &resources {
            if r.get("Connectors").is_some() {
                self.errors.push(unsupported(id, "Connectors"));
            }
            if r.get("Type").and_then(Value::as_str) == Some(CONNECTOR) {
                self.errors
                    .push(unsupported(id, "AWS::Serverless::Connector"));
            }
        }
        let mut order: Vec<(&String, &Value)> = Vec::new();
        // A template with a REST API is the translator's Python 2.7 dict: its resources come
        // in that dict's order (which the Deployment's hash depends on).
        let converted = self.rest.order();
        let iteration: Vec<(&String, &Value)> = match &converted {
            Some(ids) => ids
                .iter()
                .filter_map(|id| resources.get_key_value(id.as_str()))
                .chain(resources.iter().filter(|(id, _)| !ids.contains(id)))
                .collect(),
            None => resources.iter().collect(),
        };
        for group in ORDER {
            for &(id, r) in &iteration {
                if r.get("Type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| group.contains(&t))
                {
                    order.push((id, r));
                }
            }
        }
        let mut out = resources.clone();
        // The submitted resources, as the translation changes some in place (an S3 event's
        // bucket): later resources see those changes, as the translator's do.
        let mut live = resources.clone();
        for (id, r) in order {
            let current = live.get(id.as_str()).cloned().unwrap_or_else(|| r.clone());
            match resources::translate(self, id, &current, &mut live) {
                Ok(generated) => {
                    out.shift_remove(id.as_str());
                    for g in generated {
                        if !unique_or_allowed(&g, &resources) {
                            self.errors.push(format!(
                                "Transforming resource with id [{id}] attempts to create a new resource with id [{}] and type \"{}\". A resource with that id already exists within this template. Please use a different id for that resource.",
                                g.id, g.ty
                            ));
                            continue;
                        }
                        out.insert(g.id.clone(), g.to_value());
                    }
                }
                Err(e) => self.errors.extend(e),
            }
        }
        if !self.errors.is_empty() {
            let mut causes = std::mem::take(&mut self.errors);
            causes.dedup();
            return Err(Failure { causes });
        }
        root.remove("Transform");
        if !self.conditions.is_empty() {
            let conds = root
                .entry("Conditions")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(c) = conds.as_object_mut() {
                for (k, v) in std::mem::take(&mut self.conditions) {
                    c.insert(k, v);
                }
            }
        }
        root.insert("Resources".into(), Value::Object(out));
        let mut root = Value::Object(root);
        intrinsics::resolve_depends_on(&mut root, &self.renamed);
        intrinsics::resolve_id_refs(&mut root, &self.renamed);
        intrinsics::resolve_resource_refs(&mut root, &self.refs);
        Ok(root)
    }
}

/// Whether a generated resource's logical id is new, or one the translator may replace (the
/// SAM resource it came from, or a bucket or topic an event modified).
fn unique_or_allowed(g: &Res, existing: &Map<String, Value>) -> bool {
    let Some(before) = existing.get(&g.id) else {
        return true;
    };
    let before = before.get("Type").and_then(Value::as_str).unwrap_or("");
    let allowed: &[&str] = match g.ty.as_str() {
        "AWS::Lambda::Function" => &["AWS::Serverless::Function"],
        "AWS::Lambda::LayerVersion" => &["AWS::Serverless::LayerVersion"],
        "AWS::ApiGateway::RestApi" => &["AWS::Serverless::Api"],
        "AWS::ApiGatewayV2::Api" => &["AWS::Serverless::HttpApi", "AWS::Serverless::WebSocketApi"],
        "AWS::S3::Bucket" => &["AWS::S3::Bucket"],
        "AWS::SNS::Topic" => &["AWS::SNS::Topic"],
        "AWS::DynamoDB::Table" => &["AWS::Serverless::SimpleTable"],
        "AWS::CloudFormation::Stack" => &["AWS::Serverless::Application"],
        "AWS::Cognito::UserPool" => &["AWS::Cognito::UserPool"],
        "AWS::ApiGateway::DomainName" => &["AWS::ApiGateway::DomainName"],
        "AWS::ApiGateway::BasePathMapping" => &["AWS::ApiGateway::BasePathMapping"],
        "AWS::StepFunctions::StateMachine" => &["AWS::Serverless::StateMachine"],
        _ => &[],
    };
    allowed.contains(&before)
}
