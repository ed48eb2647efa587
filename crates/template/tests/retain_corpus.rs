//! Retain patches over the shared template corpus (`../shared/corpus`): every real template
//! with resources patches, the patch differs from it in the two policies only, the patch still
//! parses as the same kind of file, and patching it again changes nothing.

use cumulo_template::retain::{RetainError, policy_only_difference, retain_patch};
use std::path::{Path, PathBuf};

fn corpus(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(sub)
}

fn templates(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("corpus folder {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("json" | "yaml" | "yml" | "template")
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_corpus_template_patches_in_its_policies_only() {
    let mut patched = 0;
    let mut failures = Vec::new();
    for sub in [
        "templates-good/cfn-lint",
        "templates-good/aws-cloudformation-templates",
        "copilot",
    ] {
        for path in templates(&corpus(sub)) {
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let name = path.display().to_string();
            let patch = match retain_patch(&text) {
                Ok(p) => p,
                // Not a template (parameter files, manifests) or no resources to retain.
                Err(RetainError::NoResources | RetainError::Unparsable(_)) => continue,
                // A conditional policy is refused by name: reported, not patched.
                Err(e @ RetainError::NotScalar { .. }) => {
                    eprintln!("{name}: {e}");
                    continue;
                }
            };
            match policy_only_difference(&text, &patch.text) {
                Ok(d) if d.is_empty() => {}
                Ok(d) => failures.push(format!("{name}: {d:?}")),
                Err(e) => failures.push(format!("{name}: the patch does not parse: {e}")),
            }
            if text.trim_start().starts_with('{')
                && serde_json::from_str::<serde_json::Value>(&text).is_ok()
                && serde_json::from_str::<serde_json::Value>(&patch.text).is_err()
            {
                failures.push(format!("{name}: the JSON patch is not JSON"));
            }
            match retain_patch(&patch.text) {
                Ok(again) if again.text == patch.text => {}
                _ => failures.push(format!("{name}: patching the patch changed it")),
            }
            patched += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(patched > 250, "only {patched} templates patched");
    eprintln!("{patched} templates patched");
}
