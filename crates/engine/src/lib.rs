//! Stack operations (plan, execute, rollback), the stack status state machine, events, and the
//! [`Provider`] contract every resource type implements. Knows nothing about HTTP: the
//! CloudFormation API (in `cumulo-services`) and direct deploy (in the CLI) both drive it.
//!
//! Invariants: a provider is the only thing that changes a service's state, and it does so
//! through that service's typed operations; the engine stores the literal template text
//! (dynamic references unresolved) and never persists a resolved dynamic-reference value.

pub mod provider;
pub mod world;

pub use provider::{Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry};
pub use world::World;
