//! What an account's stacks hold, taken read-only: the file's model and seal, the reads the
//! inventory may make (and the client seam they go through), and the taking itself.

pub mod answer;
pub mod live;
pub mod model;
pub mod reads;
pub mod recheck;
pub mod seal;
pub mod take;
