//! The `evaluate` benchmark with mimalloc as the global allocator: most of what is left of a
//! parse and evaluation is allocating and freeing serde_json's values, so this shows what a
//! faster allocator in the binary would give on top of the engine's own work.

mod common;

use criterion::{criterion_group, criterion_main};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

criterion_group!(benches, common::bench);
criterion_main!(benches);
