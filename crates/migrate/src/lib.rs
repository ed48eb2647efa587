//! `cumulo migrate` (issue 19): moving stacks off CloudFormation (hand-written, CDK or AWS
//! Copilot) to Terraform without destroying anything.
//!
//! - `inventory`: what an account's stacks hold, read through a client that can only read.
//! - `terraform`: CloudFormation resource types mapped to the Terraform AWS provider's
//!   resources and the exact ids its `import` blocks expect.
//!
//! The retain patch itself is pure text editing of a template and lives in
//! `cumulo_template::retain`.

pub mod changeset;
pub mod generate;
pub mod inventory;
pub mod terraform;
