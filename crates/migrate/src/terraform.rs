//! CloudFormation → Terraform (issue 19): the type table ([`table`]), import ids ([`ids`]),
//! template values resolved to literals against the inventory ([`resolve`]) and HCL writing
//! ([`hcl`]). `crate::generate` puts them together for whole stacks.

pub mod hcl;
pub mod ids;
pub mod resolve;
pub mod table;
