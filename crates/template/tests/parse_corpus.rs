//! The shared template corpus (`../shared/corpus` from the repository root): real templates must
//! parse, broken ones must give diagnostics (never a panic), and the JSON and YAML editions of
//! the same aws-cloudformation-templates template must parse to the same value.

use cumulo_template::parse_template;
use serde_json::Value;
use std::collections::BTreeMap;
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

#[test]
fn every_bad_template_parses_or_gives_located_diagnostics() {
    let mut rejected = Vec::new();
    for path in templates(&corpus("templates-bad/cfn-lint")) {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_owned();
        if let Err(diags) = parse_template(&read(&path)) {
            assert!(!diags.is_empty(), "{name}");
            for d in &diags {
                assert!(d.message.starts_with("Template"), "{name}: {d:?}");
            }
            rejected.push(name);
        }
    }
    // Exactly the files MANIFEST.md marks as not parsing, plus the ones holding duplicate keys
    // (which lenient parsers accept) and the bare string (not a mapping).
    let expected = [
        "core__config_invalid_json.json",
        "core__config_invalid_yaml.yaml",
        "core__parse_invalid_map.yaml",
        "duplicate.json",
        "duplicate.yaml",
        "empty_file.yaml",
        "json_parse.json",
        "string.yaml",
        "template.yaml",
    ];
    assert_eq!(rejected, expected);
}

/// Pairs whose editions really say different things. Most were edited apart upstream (a launch
/// template in one, a launch configuration in the other; extra properties; other AMI ids; other
/// scripts). In the two SapPrivateLink pairs the JSON edition lost the YAML's `!ValueOf` tag
/// (it holds the bare list `["Subnets", "VpcId"]` where the YAML means `Fn::ValueOf`).
const DIVERGED_EDITIONS: &[&str] = &[
    "AWSSupplyChain__SapPrivateLink__SapPrivateLink",
    "AWSSupplyChain__SapPrivateLink__SapPrivateLinkNoHostedZone",
    "AutoScaling__AutoScalingRollingUpdates",
    "AutoScaling__AutoScalingScheduledAction",
    "EC2__EC2_Instance_With_Ephemeral_Drives",
    "EC2__EIP_With_Association",
    "EC2__InstanceWithCfnInit",
    "ECS__EC2LaunchType__clusters__private-vpc",
    "ECS__EC2LaunchType__clusters__public-vpc",
    "Solutions__AmazonCloudWatchAgent__inline__centos",
    "Solutions__AmazonCloudWatchAgent__inline__redhat",
    "Solutions__AmazonCloudWatchAgent__inline__suse",
    "Solutions__AmazonCloudWatchAgent__ssm__centos",
    "Solutions__AmazonCloudWatchAgent__ssm__redhat",
    "Solutions__AmazonCloudWatchAgent__ssm__suse",
];

/// Whether a JSON/YAML difference is one the two syntaxes legitimately produce:
/// * an unquoted YAML 1.1 boolean word (`Yes`, `No`, `On`, `Off`, ...) is a bool, which
///   CloudFormation hands on as "true"/"false", where the JSON edition wrote the word itself;
/// * `!GetAZs` with nothing after it is the empty string, where JSON editions write `null`
///   (both mean "this region").
fn legitimate_difference(path: &str, json: &Value, yaml: &Value) -> bool {
    match (json, yaml) {
        (Value::String(word), Value::Bool(b)) => {
            let words: &[&str] = if *b {
                &["yes", "on", "true"]
            } else {
                &["no", "off", "false"]
            };
            words.contains(&word.to_ascii_lowercase().as_str())
        }
        (Value::Null, Value::String(s)) => s.is_empty() && path.ends_with("/Fn::GetAZs"),
        _ => false,
    }
}

#[test]
fn json_and_yaml_editions_parse_to_equal_values() {
    let dir = corpus("templates-good/aws-cloudformation-templates");
    let mut by_base: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for path in templates(&dir) {
        if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
            by_base
                .entry(stem.to_owned())
                .or_default()
                .push(path.clone());
        }
    }
    let (mut pairs, mut equal, mut rain) = (0, 0, 0);
    let mut diverged = Vec::new();
    let mut unexplained = Vec::new();
    for (base, files) in &by_base {
        let json = files
            .iter()
            .find(|p| p.extension().is_some_and(|e| e == "json"));
        let yaml = files
            .iter()
            .find(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"));
        let (Some(json), Some(yaml)) = (json, yaml) else {
            continue;
        };
        pairs += 1;
        let yaml_text = read(yaml);
        let j = parse_template(&read(json)).unwrap_or_else(|d| panic!("{base}.json: {d:?}"));
        let y = match parse_template(&yaml_text) {
            Ok(doc) => doc,
            // The YAML edition spells Rain directives as tags, which only `rain pkg` expands.
            Err(d) if yaml_text.contains("!Rain::") => {
                assert!(
                    d.iter().all(|d| d.message.contains("!Rain::")),
                    "{base}: {d:?}"
                );
                rain += 1;
                continue;
            }
            Err(d) => panic!("{base}.yaml: {d:?}"),
        };
        let mut diffs = Vec::new();
        differences(&j.value.to_json(), &y.value.to_json(), "", &mut diffs);
        diffs.retain(|(path, a, b)| !legitimate_difference(path, a, b));
        if diffs.is_empty() {
            equal += 1;
        } else if DIVERGED_EDITIONS.contains(&base.as_str()) {
            diverged.push(base.as_str());
        } else {
            unexplained.push(format!("{base}: {:?}", &diffs[..diffs.len().min(3)]));
        }
    }
    assert_eq!(pairs, 138);
    assert!(
        unexplained.is_empty(),
        "{} pairs differ:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    assert_eq!(diverged, DIVERGED_EDITIONS, "diverged editions changed");
    assert_eq!(equal + diverged.len() + rain, pairs);
    assert!(equal >= 110, "only {equal} pairs equal");
}

/// Every place (path, JSON value, YAML value) where `a` and `b` differ; a member missing on one
/// side shows as `null` there.
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<(String, Value, Value)>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let p = format!("{path}/{k}");
                match y.get(k) {
                    Some(w) => differences(v, w, &p, out),
                    None => out.push((p, v.clone(), Value::Null)),
                }
            }
            for (k, w) in y.iter().filter(|(k, _)| !x.contains_key(*k)) {
                out.push((format!("{path}/{k}"), Value::Null, w.clone()));
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                differences(v, w, &format!("{path}/{i}"), out);
            }
        }
        _ if a == b => {}
        _ => out.push((path.to_owned(), a.clone(), b.clone())),
    }
}

/// MANIFEST.md rows of `corpus/copilot` whose kind is `kind`.
fn copilot_files(kind: &str) -> Vec<String> {
    read(&corpus("copilot/MANIFEST.md"))
        .lines()
        .filter(|l| l.starts_with("| `"))
        .filter(|l| l.split('|').nth(2).is_some_and(|k| k.trim() == kind))
        .filter_map(|l| l.split('`').nth(1).map(str::to_owned))
        .collect()
}

#[test]
fn every_copilot_template_parses() {
    let files = copilot_files("template");
    assert_eq!(files.len(), 32);
    for name in files {
        let doc = parse_template(&read(&corpus("copilot").join(&name)))
            .unwrap_or_else(|d| panic!("{name}: {d:?}"));
        let resources = doc.value["Resources"].as_object().map_or(0, |r| r.len());
        assert!(resources >= 7, "{name}: {resources} resources");
        // Every resource is located, so diagnostics about it can point at its line.
        for id in doc.value["Resources"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
        {
            let (line, _) = doc
                .source_map
                .position(&format!("Resources/{id}"))
                .unwrap_or_else(|| panic!("{name}: no position for {id}"));
            assert!(line > 1, "{name}/{id}");
        }
    }
}

#[test]
fn copilot_params_and_fragments_parse() {
    for kind in ["params", "template-fragment"] {
        for name in copilot_files(kind) {
            let doc = parse_template(&read(&corpus("copilot").join(&name)))
                .unwrap_or_else(|d| panic!("{name}: {d:?}"));
            assert!(doc.value.is_object(), "{name}");
        }
    }
}
