//! `cumulo migrate` (issue 19): moving stacks off CloudFormation (hand-written, CDK or AWS
//! Copilot) to Terraform without destroying anything.
//!
//! - `inventory`: what an account's stacks hold, read through a client that can only read.
//!   The client itself (HTTP, SigV4, credentials) lives in the `cumulo` binary behind
//!   [`inventory::reads::ReadClient`], so this crate stays free of I/O and its logic is
//!   tested against a fake account.
//! - `report`: each resource's fate, the Delete handlers and what they would destroy, the
//!   env-controller cascades, what a plain DeleteStack would destroy.
//! - `copilot`: what AWS Copilot's custom resources do (the only Copilot-specific module).
//! - `terraform`: CloudFormation resource types mapped to the Terraform AWS provider's
//!   resources and the exact ids its `import` blocks expect.
//!
//! The retain patch itself is pure text editing of a template and lives in
//! `cumulo_template::retain`.

pub mod changeset;
pub mod copilot;
pub mod generate;
pub mod inventory;
pub mod rehearse;
pub mod report;
pub mod terraform;
