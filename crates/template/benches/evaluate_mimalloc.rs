//! The `evaluate` benchmark with mimalloc (v2, no THP: the workspace's features) as the global
//! allocator, as the `cumulo` binary uses it.

mod common;

use criterion::{criterion_group, criterion_main};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

criterion_group!(benches, common::bench);
criterion_main!(benches);
