//! One module per group of CloudFormation operations.

pub mod changes;
pub mod changeset;
pub mod common;
pub mod create;
pub mod delete;
pub mod diff;
pub mod drift;
pub mod drift_api;
pub mod import;
pub mod import_change_set;
pub mod limits;
pub mod nested_changes;
pub mod policy;
pub mod read;
pub mod registry;
pub mod rollback;
pub mod signal;
pub mod termination;
pub mod transform;
pub mod update;
pub mod validate;
