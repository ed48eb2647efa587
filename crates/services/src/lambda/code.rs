//! Deployment packages: checked when uploaded (AWS refuses a package it cannot unzip at once),
//! and unpacked on disk once per distinct package under Lambda's directory, which is what an
//! execution environment runs from (`/var/task` on AWS; `/opt` for a layer).

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::AwsError;
use sha2::{Digest, Sha256};
use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};

/// AWS's limit on a directly uploaded package (50 MB zipped).
pub const MAX_ZIP_BYTES: usize = 50 * 1024 * 1024;

/// `CodeSha256`: the package's SHA-256, base64.
pub fn sha256_b64(zip: &[u8]) -> String {
    B64.encode(Sha256::digest(zip))
}

/// A directory-safe form of a `CodeSha256`.
pub fn dir_name(sha_b64: &str) -> String {
    sha_b64.replace('/', "_").replace('+', "-").replace('=', "")
}

/// Checks that the bytes are a zip archive AWS would accept.
pub fn validate(zip: &[u8]) -> Result<(), AwsError> {
    if zip.len() > MAX_ZIP_BYTES {
        return Err(AwsError::new(
            http::StatusCode::PAYLOAD_TOO_LARGE,
            "RequestEntityTooLargeException",
            format!(
                "Request must be smaller than {MAX_ZIP_BYTES} bytes for the CreateFunction operation"
            ),
        ));
    }
    zip::ZipArchive::new(Cursor::new(zip))
        .map(|_| ())
        .map_err(|_| {
            AwsError::bad_request(
                "InvalidParameterValueException",
                "Could not unzip uploaded file. Please check your file, then try to upload again.",
            )
        })
}

/// Unpacks `zip` into `dir` unless it is already there. Unpacks beside it and renames, so a
/// half-written directory is never used; entries that would escape the directory are refused.
pub fn unpack(zip: &[u8], dir: &Path) -> std::io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let parent = dir.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let tmp = parent.join(format!(".unpack-{}", uuid::Uuid::new_v4()));
    let result = (|| {
        let mut archive = zip::ZipArchive::new(Cursor::new(zip)).map_err(std::io::Error::other)?;
        archive.extract(&tmp).map_err(std::io::Error::other)?;
        std::fs::rename(&tmp, dir)
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&tmp);
        // Another unpacker may have won the race: theirs is as good as ours.
        if dir.is_dir() {
            return Ok(());
        }
    }
    result
}

/// A zip holding one file, as CloudFormation builds from an inline `Code.ZipFile` (the file is
/// `index.js` / `index.py` by runtime, so `Handler: index.handler` finds it).
pub fn single_file_zip(name: &str, content: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut w = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Stored)
        .unix_permissions(0o644);
    w.start_file(name, options).map_err(std::io::Error::other)?;
    w.write_all(content)?;
    Ok(w.finish().map_err(std::io::Error::other)?.into_inner())
}

/// Where Lambda keeps unpacked packages: beside the database, or a fresh temporary directory
/// for an in-memory server (removed by nobody: the OS's temp cleaning owns it).
pub fn base_dir(store_location: Option<&Path>) -> PathBuf {
    match store_location.and_then(Path::parent) {
        Some(dir) => dir.join("lambda"),
        None => std::env::temp_dir().join(format!(
            "cumulo-lambda-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_file_zip_round_trips() {
        let zip = single_file_zip("index.py", b"def handler(e, c):\n    return 1\n").unwrap();
        validate(&zip).unwrap();
        let dir = std::env::temp_dir().join(format!("cumulo-test-{}", uuid::Uuid::new_v4()));
        unpack(&zip, &dir).unwrap();
        let text = std::fs::read_to_string(dir.join("index.py")).unwrap();
        assert!(text.contains("def handler"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn garbage_is_refused() {
        let err = validate(b"not a zip").unwrap_err();
        assert_eq!(err.code, "InvalidParameterValueException");
    }
}
