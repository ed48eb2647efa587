//! Parsing plus full evaluation of a 5,000-resource template (see `common`), with the system
//! allocator.

mod common;

use criterion::{criterion_group, criterion_main};

criterion_group!(benches, common::bench);
criterion_main!(benches);
