//! Stack operations (plan, execute, rollback), the stack status state machine, events, and the
//! [`Provider`] contract every resource type implements. Knows nothing about HTTP: the
//! CloudFormation API (in `cumulo-services`) and direct deploy (in the CLI) both drive it.
//!
//! Invariants: a provider is the only thing that changes a service's state, and it does so
//! through that service's typed operations; the engine stores the literal template text
//! (dynamic references unresolved) and never persists a resolved dynamic-reference value;
//! a NoEcho parameter's value reaches the store only sealed under the master key (`seal`),
//! a NoEcho attribute's only as a mask (`mask`).
//!
//! Shape: [`Engine`] operations validate and commit synchronously (errors are AWS's), then run
//! in a background task (`exec`): resources are provisioned as a DAG, each starting as soon as
//! its own dependencies finished, at most `EngineConfig::parallelism` at once. Every stack,
//! resource and event transition is written to the store (`cfn_*` tables) before the next step.
//!
//! Decisions where AWS leaves room:
//! - Restart: an operation running when the process died is finished as failed, in the state
//!   AWS lets a user recover from (CREATE_FAILED, UPDATE_FAILED, UPDATE_ROLLBACK_FAILED,
//!   ROLLBACK_FAILED, DELETE_FAILED) with the reason `cumulo: the server restarted while this
//!   operation was in progress`; a cleanup phase after a successful update completes it.
//! - Change sets are computed synchronously: CreateChangeSet answers once the change set is
//!   CREATE_COMPLETE (or FAILED), so CREATE_PENDING is never observed.
//! - A deleted stack stays addressable by its ARN for the life of the store.
//! - When one resource fails, siblings already in flight finish (AWS cancels them) and the
//!   rollback deletes them; TimeoutInMinutes and CancelUpdateStack do cancel what is in flight.
//! - IncludeNestedStacks is recorded but nested change sets are not created: executing the
//!   parent's change set updates the nested stacks all the same.

pub mod api;
mod builtin;
mod canonical;
pub mod engine;
pub mod error;
mod exec;
mod mask;
mod ops;
pub mod provider;
mod resolve;
mod schema;
mod seal;
mod state;
pub mod status;
pub mod world;

pub use api::*;
pub use engine::{Engine, EngineConfig};
pub use error::EngineError;
pub use ops::diff::{DiffInput, PropertyChange, ResourceDiff};
pub use ops::drift::{PropertyDifference, ResourceDrift, Settle};
pub use ops::import::ImportInput;
pub use ops::signal::{HANDLE_PATH, HandleRefusal, Signal, SignalResourceInput, parse_handle_body};
pub use provider::{
    CUSTOM_RESOURCE, Observed, Provider, ProviderContext, ProviderError, ProviderOutcome,
    ProviderRegistry,
};
pub use schema::{Tagging, getatt_attributes, tagging};
pub use status::StackStatus;
pub use world::World;
