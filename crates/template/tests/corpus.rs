//! The shared corpus: every good template renders (or fails with the documented diagnostic),
//! no bad template panics, and the Copilot templates render with their parameter files.

use cumulo_template::{PlaceholderSsm, RenderOptions, parse_template, render};
use indexmap::IndexMap;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn corpus(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(sub)
}

fn templates(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("json" | "yaml" | "yml" | "template")
            )
        })
        .collect();
    out.sort();
    out
}

fn render_file(path: &Path, params: IndexMap<String, String>) -> Result<Value, Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| vec![e.to_string()])?;
    let doc =
        parse_template(&text).map_err(|e| e.into_iter().map(|d| d.message).collect::<Vec<_>>())?;
    let options = RenderOptions {
        parameters: params,
        dummy_parameters: true,
        ..RenderOptions::default()
    };
    render(doc.value, &options, &PlaceholderSsm)
        .map(|r| r.output.to_json())
        .map_err(|e| e.into_iter().map(|d| d.message).collect())
}

/// MANIFEST.md rows: file name → flags.
fn manifest_flags(dir: &Path) -> IndexMap<String, String> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.md")).expect("MANIFEST.md");
    text.lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            let file = cols.get(1)?.trim_matches('`');
            (cols.len() >= 4 && file.contains('/')).then(|| {
                let name = file.rsplit('/').next().unwrap_or(file).to_string();
                (name, cols[3].to_string())
            })
        })
        .collect()
}

/// Templates in templates-good that real CloudFormation would also reject (or that only lint,
/// not deploy), each with the diagnostic cumulo must give. cfn-lint's fixtures are lint-clean,
/// not necessarily deployable (MANIFEST.md says so).
const EXPECTED_FAILURES: &[(&str, &str)] = &[
    // Empty Resources: AWS's own error.
    (
        "core__config_cfn_lint.json",
        "At least one Resources member must be defined.",
    ),
    (
        "core__config_cfn_lint.yaml",
        "At least one Resources member must be defined.",
    ),
    (
        "core__config_only_i1002.yaml",
        "At least one Resources member must be defined.",
    ),
    (
        "core__config_only_i1003.yaml",
        "At least one Resources member must be defined.",
    ),
    (
        "core__config_parameters.yaml",
        "At least one Resources member must be defined.",
    ),
    (
        "decode__parsing.json",
        "At least one Resources member must be defined.",
    ),
    (
        "mappings__name.yaml",
        "At least one Resources member must be defined.",
    ),
    (
        "parameters__default.yaml",
        "Unrecognized parameter type: List<String>",
    ),
    (
        "resources__cloudformation__stack_nested.yaml",
        "At least one Resources member must be defined.",
    ),
    // A cfn-lint custom-rules fixture with a misspelt top-level section.
    (
        "custom__is-defined.yaml",
        "Invalid template property or properties [Parameter]",
    ),
    // Fn::GetStackOutput is not a CloudFormation intrinsic cumulo knows.
    (
        "functions__get_stack_output.yaml",
        "Encountered unsupported function: Fn::GetStackOutput",
    ),
    // References to resources that only exist after a module/SAM expansion.
    (
        "functions__ref.yaml",
        "Unresolved resource dependencies [ModuleResource] in the Outputs block",
    ),
    (
        "functions__sub_needed.yaml",
        "Unresolved resource dependencies [GreetingResource, GreetingApi]",
    ),
    // Fn::Sub over Fn::Transform (a macro, which rendering alone does not run).
    (
        "functions__sub.yaml",
        "Fn::Sub intrinsic functions don't specify expected arguments",
    ),
    // Lint fixtures whose mapping keys no deployable value matches.
    (
        "functions_findinmap.yaml",
        "Unable to get mapping for myMap::us-east-1::us-east-1",
    ),
    (
        "resources_deletionpolicy.yaml",
        "Unable to get mapping for StackIdMap01::",
    ),
    (
        "resources_updatereplacepolicy.yaml",
        "Unable to get mapping for StackIdMap01::",
    ),
];

/// Parameter values that make a template deployable where the stand-ins are not (mapping
/// keys, CIDRs, and one template whose default settings reference a condition-false resource).
fn overrides(name: &str) -> IndexMap<String, String> {
    let pairs: &[(&str, &str)] = match name {
        "functions__foreach.yaml" => &[("Environment", "Production")],
        "mappings__used.yaml" => &[("Environment", "acceptance")],
        "properties_ec2_vpc.yaml" => &[("cidrBlockAllowedPattern", "10.0.0.0/8")],
        // The YAML twin writes the allowed values unquoted: YAML 1.1 reads `Yes` as true.
        "Solutions__ADConnector__templates__ADCONNECTOR.cfn.json" => {
            &[("CreateADConnectorDomainMembersSG", "Yes")]
        }
        "Solutions__ADConnector__templates__ADCONNECTOR.cfn.yaml" => {
            &[("CreateADConnectorDomainMembersSG", "true")]
        }
        _ => &[],
    };
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn every_good_template_renders_or_fails_as_documented() {
    let mut rendered = 0;
    let mut failures = Vec::new();
    for sub in [
        "templates-good/cfn-lint",
        "templates-good/aws-cloudformation-templates",
    ] {
        let dir = corpus(sub);
        let flags = manifest_flags(&corpus("templates-good"));
        for path in templates(&dir) {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default()
                .to_string();
            let flag = flags.get(&name).cloned().unwrap_or_default();
            let unsupported =
                flag.contains("SAM") || flag.contains("macro:") || flag.contains("Rain-directives");
            let expected = EXPECTED_FAILURES
                .iter()
                .find(|(f, _)| *f == name)
                .map(|(_, m)| *m);
            let result = render_file(&path, overrides(&name));
            match (result, unsupported, expected) {
                (Ok(out), false, None) => {
                    assert!(out["Resources"].is_object(), "{name}");
                    rendered += 1;
                }
                (Err(errs), true, _) => {
                    let clear = errs.iter().any(|e| {
                        e.contains("Transform") || e.contains("Rain") || e.contains("Fn::Transform")
                    });
                    if !clear {
                        failures.push(format!(
                            "{name}: unsupported feature without a clear diagnostic: {errs:?}"
                        ));
                    }
                }
                (Err(errs), false, Some(m)) => {
                    if !errs.iter().any(|e| e.contains(m)) {
                        failures.push(format!("{name}: expected {m:?}, got {errs:?}"));
                    }
                }
                // Fn::Transform (inline macros) is not flagged in MANIFEST.md; it runs when a
                // stack operation starts, so rendering alone says so.
                (Err(errs), false, None)
                    if errs
                        .iter()
                        .all(|e| e.contains("Fn::Transform runs when a stack operation")) => {}
                (Err(errs), false, None) => failures.push(format!("{name}: {errs:?}")),
                (Ok(_), _, _) => failures.push(format!(
                    "{name}: rendered but was expected to fail ({flag})"
                )),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(rendered > 250, "only {rendered} templates rendered");
}

#[test]
fn bad_templates_never_panic() {
    let mut n = 0;
    for path in templates(&corpus("templates-bad/cfn-lint")) {
        // Any outcome but a panic is acceptable; diagnostics must carry a message.
        if let Err(errs) = render_file(&path, IndexMap::new()) {
            assert!(errs.iter().all(|e| !e.is_empty()), "{}", path.display());
        }
        n += 1;
    }
    assert!(n >= 90, "only {n} bad templates found");
}

/// The params file Copilot deploys a template with, if any.
fn copilot_params(template: &Path) -> Option<PathBuf> {
    let name = template.file_name()?.to_str()?;
    let candidates = [
        name.replace("-template.yml", "-params.json"),
        name.replace(
            "-template-without-port-config.yml",
            "-params-without-port-config.json",
        ),
        name.replace(".stack.yml", ".params.json"),
    ];
    candidates
        .iter()
        .map(|c| template.with_file_name(c))
        .find(|p| p.exists() && p.as_path() != template)
}

#[test]
fn copilot_templates_render_with_their_params() {
    let dir = corpus("copilot");
    // MANIFEST.md's `kind` column tells full templates from manifests, params and fragments.
    let manifest = std::fs::read_to_string(dir.join("MANIFEST.md")).expect("MANIFEST.md");
    let full_templates: Vec<String> = manifest
        .lines()
        .filter_map(|l| {
            let cols: Vec<&str> = l.split('|').map(str::trim).collect();
            (cols.len() > 3 && cols[2] == "template").then(|| cols[1].trim_matches('`').to_string())
        })
        .collect();
    let mut rendered = 0;
    let mut failures = Vec::new();
    for path in templates(&dir) {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default()
            .to_string();
        if !full_templates.contains(&name) {
            continue;
        }
        let mut params = IndexMap::new();
        if name.starts_with("environments__") {
            // Environment stacks have no params file: use what `copilot env deploy` passes for
            // a fresh environment (no workloads yet). The ALB-enabled variant of
            // template-with-default-access-log-config has a `!Ref 'arn:${AWS::Partition}:iam::'`
            // that AWS would reject too.
            for (k, v) in [
                ("AppName", "my-app"),
                ("EnvironmentName", "test"),
                ("ALBWorkloads", ""),
                ("InternalALBWorkloads", ""),
                ("EFSWorkloads", ""),
                ("NATWorkloads", ""),
                ("AppRunnerPrivateWorkloads", ""),
                ("ToolsAccountPrincipalARN", "arn:aws:iam::123456789012:root"),
                ("AppDNSName", ""),
                ("AppDNSDelegationRole", ""),
                ("Aliases", ""),
                ("CreateHTTPSListener", "false"),
                ("CreateInternalHTTPSListener", "false"),
                ("ServiceDiscoveryEndpoint", "test.my-app.local"),
            ] {
                params.insert(k.to_string(), v.to_string());
            }
        }
        if let Some(p) = copilot_params(&path) {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&p).expect("params"))
                .expect("params json");
            for (k, v) in v["Parameters"].as_object().into_iter().flatten() {
                params.insert(
                    k.clone(),
                    v.as_str().map_or_else(|| v.to_string(), str::to_string),
                );
            }
        }
        match render_file(&path, params) {
            Ok(out) => {
                let order = out["ProvisioningOrder"].as_array().map_or(0, Vec::len);
                assert_eq!(
                    order,
                    out["Resources"].as_object().map_or(0, |r| r.len()),
                    "{name}"
                );
                rendered += 1;
            }
            Err(e) => failures.push(format!("{name}: {e:?}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(rendered, 32, "the 32 Copilot templates");
}
