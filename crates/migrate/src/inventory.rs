//! What an account's stacks hold, taken read-only: the file's model, its seal, and (in the
//! modules below) the reads that fill it.

pub mod model;
pub mod seal;
