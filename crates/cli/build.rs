//! Release builds of the binary for x86_64 Linux lay their code out in the order of
//! `symbol-order.txt`: the functions `cumulo serve` runs to start, answer its health check and
//! serve common requests, first and together. The binary holds every service, the console and
//! the migration client, so without an order the few functions a request needs are spread over
//! tens of megabytes and each one pages in its own 64 KiB window (bench/README.md: idle RSS).
//! `scripts/gen-symbol-order.py` regenerates the file from a profiled run; a name the current
//! build does not have (a dependency changed) is skipped, which only weakens the layout.
//! The toolchain's default linker on this target is rust-lld, which reads the file.

fn main() {
    println!("cargo:rerun-if-changed=symbol-order.txt");
    let target = std::env::var("TARGET").unwrap_or_default();
    let profile = std::env::var("PROFILE").unwrap_or_default();
    if target == "x86_64-unknown-linux-gnu" && profile == "release" {
        let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default();
        println!("cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={dir}/symbol-order.txt");
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}
