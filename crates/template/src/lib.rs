//! CloudFormation templates: parsing (JSON and YAML with every short-form tag), the model,
//! intrinsic functions, conditions and the dependency graph.
//!
//! Invariant: pure — no I/O, no async, no clock. Everything the evaluation needs from the world
//! (parameters, resolved attributes, exports, SSM parameter values) comes in through the context.
//!
//! Pipeline: [`parse_template`] → [`prepare`] (parameters, Fn::ForEach, model, conditions,
//! graph) → [`Prepared::resolve_resource`] / [`Prepared::resolve_outputs`] against a
//! [`Resolver`]; [`render`] does the last step with placeholders. Before `prepare`, a deployment
//! runs AWS::Include and macros with the pieces in [`transform`].

/// Maps and sets of the names a template declares (resources, parameters, conditions, outputs),
/// in declaration order. Hashed with foldhash rather than std's SipHash, which was ~8% of the
/// instructions of evaluating a 5,000-resource template: names are looked up for every
/// reference. foldhash is still seeded per process.
pub type NameMap<K, V> = indexmap::IndexMap<K, V, foldhash::fast::RandomState>;
/// See [`NameMap`].
pub type NameSet<K> = indexmap::IndexSet<K, foldhash::fast::RandomState>;

pub mod conditions;
pub mod context;
pub mod diag;
pub mod dynref;
pub mod errors;
pub mod graph;
pub mod intrinsics;
pub mod lang_ext;
pub mod model;
pub mod params;
pub mod parse;
pub mod prepare;
pub mod render;
pub mod retain;
pub mod transform;
pub mod value;

pub use context::{PlaceholderResolver, Pseudo, Resolver};
pub use diag::Diagnostic;
pub use dynref::{DynamicReference, FoundReference, find_dynamic_references};
pub use graph::DependencyGraph;
pub use model::{Output, Resource, Template};
pub use params::{NoSsm, ParamValue, ResolvedParameter, SsmLookup};
pub use parse::{Document, SourceMap, parse_template};
pub use prepare::{Prepared, ResolvedOutput, ResolvedResource, prepare};
pub use render::{PlaceholderSsm, RenderOptions, Rendered, render};
pub use value::{Map, SmolStr, Value};
