//! Stack operations (plan, execute, rollback), the stack status state machine, events, and the
//! `Provider` contract every resource type implements. Knows nothing about HTTP.
//!
//! Thin shell until the CloudFormation issue fills it.
