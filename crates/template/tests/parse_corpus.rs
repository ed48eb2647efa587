//! The shared template corpus (`../shared/corpus` from the repository root): real templates must
//! parse, broken ones must give diagnostics (never a panic), and the JSON and YAML editions of
//! the same aws-cloudformation-templates template must parse to the same value.

use cumulo_template::parse_template;
use std::path::{Path, PathBuf};

fn corpus(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(sub)
}

/// Template files (`.json`, `.yaml`, `.yml`, `.template`) directly in `dir`, sorted.
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

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Files MANIFEST.md flags `Rain-directives`: they hold `!Rain::...` tags (YAML) or `Rain::...`
/// keys (JSON), which only `rain pkg` expands.
fn rain_flagged() -> Vec<String> {
    read(&corpus("templates-good/MANIFEST.md"))
        .lines()
        .filter(|l| l.contains("Rain-directives") && l.starts_with("| `"))
        .filter_map(|l| l.split('`').nth(1).map(str::to_owned))
        .collect()
}

#[test]
fn every_good_template_parses() {
    let rain = rain_flagged();
    let mut parsed = 0;
    let mut failures = Vec::new();
    for sub in [
        "templates-good/cfn-lint",
        "templates-good/aws-cloudformation-templates",
    ] {
        for path in templates(&corpus(sub)) {
            let name = format!(
                "{}/{}",
                sub.trim_start_matches("templates-good/"),
                path.file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or_default()
            );
            let text = read(&path);
            match parse_template(&text) {
                Ok(doc) => {
                    assert!(doc.value.is_object(), "{name}");
                    parsed += 1;
                }
                Err(diags) => {
                    let uses_rain_tags = text.contains("!Rain::");
                    if rain.contains(&name) && uses_rain_tags {
                        assert!(
                            diags.iter().any(|d| d.message.contains("!Rain::")
                                && d.message.contains("rain pkg")
                                && d.line.is_some()),
                            "{name}: {diags:?}"
                        );
                    } else {
                        failures.push(format!("{name}: {diags:?}"));
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(parsed > 350, "only {parsed} parsed");
}
