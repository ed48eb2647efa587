//! The inventory's seal: a SHA-256 over the file's canonical JSON, so that a file edited
//! after it was taken (a fate forced by hand, a resource dropped) is refused instead of
//! silently trusted. It protects against accidents and stale copies, not against someone who
//! recomputes the hash: the file is not signed.

use super::model::{FORMAT_VERSION, Inventory};
use sha2::{Digest, Sha256};

/// Why an inventory file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    #[error("not an inventory file: {0}")]
    Unparsable(String),
    #[error("inventory format version {found} is not the one this cumulo reads ({expected})")]
    Version { found: u32, expected: u32 },
    #[error(
        "the inventory was changed after it was taken (content hash {found} does not match {expected}): take it again with `cumulo migrate inventory`"
    )]
    Tampered { found: String, expected: String },
}

/// The hash of `inventory` with its `content_sha256` left empty, as lowercase hex.
pub fn content_hash(inventory: &Inventory) -> String {
    let mut unsealed = inventory.clone();
    unsealed.content_sha256.clear();
    // Serializing a value of these types cannot fail: every map key is a string.
    let canonical = serde_json::to_vec(&unsealed).unwrap_or_default();
    hex::encode(Sha256::digest(&canonical))
}

/// Sets `content_sha256` from the rest of the file.
pub fn seal(inventory: &mut Inventory) {
    inventory.content_sha256 = content_hash(inventory);
}

/// Parses an inventory file and checks its version and seal.
pub fn open(text: &str) -> Result<Inventory, SealError> {
    let raw: serde_json::Value =
        serde_json::from_str(text).map_err(|e| SealError::Unparsable(e.to_string()))?;
    // The version is checked before the shape: a future format may not parse as this one.
    let found = raw
        .get("format_version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| SealError::Unparsable("no format_version".into()))?;
    if found != u64::from(FORMAT_VERSION) {
        return Err(SealError::Version {
            found: u32::try_from(found).unwrap_or(u32::MAX),
            expected: FORMAT_VERSION,
        });
    }
    let inventory: Inventory =
        serde_json::from_value(raw).map_err(|e| SealError::Unparsable(e.to_string()))?;
    let expected = content_hash(&inventory);
    if inventory.content_sha256 != expected {
        return Err(SealError::Tampered {
            found: inventory.content_sha256.clone(),
            expected,
        });
    }
    Ok(inventory)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::model::{OutOfBand, Selection};

    fn sample() -> Inventory {
        let mut inv = Inventory {
            format_version: FORMAT_VERSION,
            account: "000000000000".into(),
            region: "us-east-1".into(),
            taken_at: "2026-12-04T09:00:00Z".into(),
            endpoint: None,
            taken_by: "cumulo test".into(),
            selection: Selection::Stacks {
                names: vec!["s".into()],
            },
            stacks: vec![],
            out_of_band: OutOfBand::default(),
            content_sha256: String::new(),
        };
        seal(&mut inv);
        inv
    }

    #[test]
    fn a_sealed_file_opens_after_a_round_trip() {
        let text = serde_json::to_string_pretty(&sample()).unwrap();
        assert_eq!(open(&text).unwrap(), sample());
    }

    #[test]
    fn an_edit_after_sealing_is_refused() {
        let text = serde_json::to_string_pretty(&sample())
            .unwrap()
            .replace("us-east-1", "eu-west-1");
        assert!(matches!(open(&text), Err(SealError::Tampered { .. })));
    }

    #[test]
    fn another_version_is_refused_before_its_shape_is_read() {
        let text = r#"{"format_version": 99, "whatever": true}"#;
        assert!(matches!(
            open(text),
            Err(SealError::Version { found: 99, .. })
        ));
        assert!(matches!(open("[]"), Err(SealError::Unparsable(_))));
    }
}
