//! One parse + evaluation of the benchmark's 5,000-resource template, for a profiler
//! (`valgrind --tool=callgrind`, `perf record`): criterion's warm-up and repetitions make the
//! bench binary itself awkward to profile. `profile_5000 json|yaml|both [iterations]`, or
//! `profile_5000 sizes` to generate the texts only. It uses mimalloc, like the `cumulo`
//! binary.

#[path = "../benches/common/mod.rs"]
// `bench`, the criterion entry point, is not used here.
#[allow(dead_code)]
mod common;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "both".to_string());
    let iterations: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(1);
    let (json_text, yaml_text) = common::texts();
    if which == "sizes" {
        println!(
            "JSON {} bytes, YAML {} bytes",
            json_text.len(),
            yaml_text.len()
        );
        return;
    }
    for _ in 0..iterations {
        if which != "yaml" {
            assert_eq!(common::run(&json_text), 5_000);
        }
        if which != "json" {
            assert_eq!(common::run(&yaml_text), 5_000);
        }
    }
}
