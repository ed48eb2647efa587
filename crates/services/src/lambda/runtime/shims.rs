//! The bootstrap shims (kept in the repository's `lambda-runtime/`), compiled into the binary
//! and written out under Lambda's directory on first use, so a `cumulo` binary runs functions
//! wherever it is copied. The directory name carries a hash of the contents: a newer binary
//! never runs an older shim.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

const FILES: &[(&str, &str)] = &[
    (
        "node/bootstrap.js",
        include_str!("../../../../../lambda-runtime/node/bootstrap.js"),
    ),
    (
        "node/https-to-cumulo.js",
        include_str!("../../../../../lambda-runtime/node/https-to-cumulo.js"),
    ),
    (
        "node/node_modules/cfn-response/index.js",
        include_str!("../../../../../lambda-runtime/node/node_modules/cfn-response/index.js"),
    ),
    (
        "python/bootstrap.py",
        include_str!("../../../../../lambda-runtime/python/bootstrap.py"),
    ),
    (
        "python/cfnresponse/__init__.py",
        include_str!("../../../../../lambda-runtime/python/cfnresponse/__init__.py"),
    ),
];

/// Writes the shims under `base` (once per content version) and returns their directory.
pub fn install(base: &Path) -> std::io::Result<PathBuf> {
    let mut h = Sha256::new();
    for (name, text) in FILES {
        h.update(name.as_bytes());
        h.update(text.as_bytes());
    }
    let dir = base.join(format!("runtime-{}", &hex::encode(h.finalize())[..12]));
    if dir.join(".complete").is_file() {
        return Ok(dir);
    }
    for (name, text) in FILES {
        let path = dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(path, text)?;
    }
    std::fs::write(dir.join(".complete"), b"")?;
    Ok(dir)
}
