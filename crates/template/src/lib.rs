//! CloudFormation templates: parsing (JSON and YAML with every short-form tag), the model,
//! intrinsic functions, conditions and the dependency graph.
//!
//! Invariant: pure — no I/O, no async, no clock. Everything the evaluation needs from the world
//! (parameters, resolved attributes, exports, SSM parameter values) comes in through the context.

pub mod diag;
pub mod parse;

pub use diag::Diagnostic;
pub use parse::{Document, SourceMap, parse_template};
