//! One module per group of CloudFormation operations.

pub mod changes;
pub mod changeset;
pub mod common;
pub mod create;
pub mod delete;
pub mod diff;
pub mod drift;
pub mod import;
pub mod policy;
pub mod read;
pub mod rollback;
pub mod transform;
pub mod update;
pub mod validate;
