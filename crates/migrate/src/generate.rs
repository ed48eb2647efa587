//! `cumulo migrate generate`: from an inventory, everything a migration needs, as files —
//! Terraform with an `import` block per resource (`terraform/`), the retain patch of every
//! handed-off stack (`retain-patches/`), the manifest (`manifest.json`: imports, stacks handed
//! off or kept, teardown order, patch hashes, what the change-set gate checks against) and the
//! runbook (`RUNBOOK.md`). Pure: it returns the files; the CLI writes them.
//!
//! It refuses (nothing written) when a handed-off stack holds a type with no Terraform mapping,
//! when an import id cannot be built, or when an import or a kept stack would reference a
//! resource that is to be cleaned up by hand (it would break when that is deleted).

pub mod fates;
mod runbook;
mod stack;

use crate::inventory::model::{Inventory, Stack};
use crate::terraform::hcl;
use fates::Fate;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};

/// The Terraform AWS provider version the generated configuration pins: the import id formats
/// in `terraform::table` are this major version's.
pub const PROVIDER_VERSION: &str = "5.80.0";
/// `import` blocks need Terraform 1.5.
pub const TERRAFORM_VERSION: &str = ">= 1.5.0";

/// What the caller decides.
#[derive(Debug, Default)]
pub struct Options {
    /// Root stacks to keep under CloudFormation (with their nested stacks): not handed off.
    pub keep: Vec<String>,
    /// `cumulo <version>`, recorded in the manifest.
    pub tool: String,
    /// The report (`cumulo migrate report`'s Markdown), written as `REPORT.md` when given.
    /// This is the hook the report command plugs into.
    pub report_markdown: Option<String>,
}

/// Why nothing was generated.
#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// The input names something the inventory does not hold (exit 2).
    #[error("{0}")]
    BadInput(String),
    /// The migration as asked would break something (exit 1); each reason names what.
    #[error("refused: {}", .0.join("; "))]
    Refused(Vec<String>),
}

/// The generated files, by path relative to the output directory.
#[derive(Debug, Default)]
pub struct Generated {
    pub files: BTreeMap<String, String>,
    pub imports: usize,
    pub handed_off: Vec<String>,
    pub kept: Vec<String>,
}

/// A stack as generation sees it.
pub(crate) struct Planned<'a> {
    pub stack: &'a Stack,
    pub handed_off: bool,
    pub parent: Option<String>,
    /// The template as JSON (short forms long).
    pub template: Value,
    pub fates: BTreeMap<String, (Fate, String)>,
}

pub fn generate(inv: &Inventory, options: &Options) -> Result<Generated, GenerateError> {
    for k in &options.keep {
        if inv.stack(k).is_none() {
            return Err(GenerateError::BadInput(format!(
                "--keep {k}: no such stack in the inventory"
            )));
        }
    }
    let by_id: BTreeMap<&str, &Stack> = inv.stacks.iter().map(|s| (s.id.as_str(), s)).collect();
    let root_of = |s: &Stack| -> String {
        let mut cur = s;
        while let Some(p) = cur.parent_id.as_deref().and_then(|p| by_id.get(p)) {
            cur = p;
        }
        cur.name.clone()
    };
    let assessment = crate::report::assess(inv);
    let verdict = |name: &str| assessment.stacks.iter().find(|v| v.name == name);
    let mut refusals = Vec::new();
    let mut planned = Vec::new();
    for s in &inv.stacks {
        let template = match cumulo_template::parse_template(&s.template) {
            Ok(doc) => doc.value.to_json(),
            Err(d) => {
                let why = d.first().map(ToString::to_string).unwrap_or_default();
                return Err(GenerateError::BadInput(format!(
                    "stack {}: its template does not parse: {why}",
                    s.name
                )));
            }
        };
        let resources = template
            .get("Resources")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let fates = fates::classify(s, &resources, verdict(&s.name));
        // Handed off unless kept by the caller or by the report (Copilot's app and pipeline
        // stacks, kinds out of scope).
        let root = root_of(s);
        let handed_off = !options.keep.contains(&root)
            && verdict(&root).is_none_or(|v| v.disposition == crate::report::Disposition::HandOff);
        if handed_off {
            for (logical, (fate, why)) in &fates {
                if *fate == Fate::Blocked {
                    refusals.push(format!(
                        "stack {} resource {logical}: {why} (keep the stack with --keep {})",
                        s.name,
                        root_of(s)
                    ));
                }
            }
        }
        let parent = s
            .parent_id
            .as_deref()
            .and_then(|p| by_id.get(p))
            .map(|p| p.name.clone());
        planned.push(Planned {
            stack: s,
            handed_off,
            parent,
            template,
            fates,
        });
    }

    let mut out = Generated::default();
    let mut imports = Vec::new();
    let mut manifest_stacks = Vec::new();
    let mut names = BTreeSet::new();
    for p in &planned {
        if !p.handed_off {
            out.kept.push(p.stack.name.clone());
            refusals.extend(stack::kept_references(p, &planned, inv));
            let why = if options.keep.contains(&p.stack.name) {
                "kept with --keep".to_string()
            } else {
                verdict(&p.stack.name)
                    .map(|v| v.reason.clone())
                    .unwrap_or_default()
            };
            manifest_stacks.push(json!({
                "name": p.stack.name,
                "id": p.stack.id,
                "handed_off": false,
                "reason": why,
                "parent": p.parent,
                "copilot_kind": p.stack.copilot.as_ref().map(|c| c.kind),
            }));
            continue;
        }
        out.handed_off.push(p.stack.name.clone());
        let written = match stack::terraform(p, inv, &mut names) {
            Ok(w) => w,
            Err(mut why) => {
                refusals.append(&mut why);
                continue;
            }
        };
        let file = format!("terraform/{}.tf", file_stem(&p.stack.name));
        let patch = match cumulo_template::retain::retain_patch(&p.stack.template) {
            Ok(patch) => patch,
            Err(e) => {
                refusals.push(format!("stack {}: no retain patch: {e}", p.stack.name));
                continue;
            }
        };
        let patch_path = format!("retain-patches/{}.yml", file_stem(&p.stack.name));
        let sha = hex::encode(Sha256::digest(patch.text.as_bytes()));
        out.files.insert(patch_path.clone(), patch.text);
        out.files.insert(file.clone(), written.text);
        imports.extend(written.imports);
        manifest_stacks.push(json!({
            "name": p.stack.name,
            "id": p.stack.id,
            "handed_off": true,
            "parent": p.parent,
            "copilot_kind": p.stack.copilot.as_ref().map(|c| c.kind),
            "terraform_file": file,
            "retain_patch": {
                "path": patch_path,
                "sha256": sha,
                "retained": patch.changed,
                "already_retained": patch.unchanged,
            },
            "nested_stacks": planned.iter()
                .filter(|c| c.parent.as_deref() == Some(p.stack.name.as_str()))
                .map(|c| c.stack.name.clone()).collect::<Vec<_>>(),
            "resources": p.fates.iter().map(|(l, (f, why))| json!({
                "logical_id": l,
                "type": p.stack.resource(l).map(|r| r.resource_type.clone()),
                "fate": f.name(),
                "reason": why,
            })).collect::<Vec<_>>(),
        }));
    }
    let wanted: BTreeSet<&str> = assessment
        .out_of_band
        .iter()
        .filter(|o| o.fate == Fate::Import)
        .map(|o| o.id.as_str())
        .collect();
    let (oob_text, oob_imports) = stack::out_of_band(inv, &wanted, &imports, &mut names);
    if !oob_imports.is_empty() {
        out.files
            .insert("terraform/out-of-band.tf".into(), oob_text);
        imports.extend(oob_imports);
    }
    if !refusals.is_empty() {
        return Err(GenerateError::Refused(refusals));
    }

    let teardown = teardown_order(&planned, inv);
    out.files
        .insert("terraform/versions.tf".into(), versions_tf());
    out.files
        .insert("terraform/providers.tf".into(), providers_tf(inv));
    out.imports = imports.len();
    let manifest = json!({
        "format_version": 1,
        "generated_by": options.tool,
        "inventory": {
            "account": inv.account,
            "region": inv.region,
            "taken_at": inv.taken_at,
            "endpoint": inv.endpoint,
            "content_sha256": inv.content_sha256,
        },
        "terraform": {"required_version": TERRAFORM_VERSION, "aws_provider": PROVIDER_VERSION},
        "stacks": manifest_stacks,
        "imports": imports,
        "teardown_order": teardown,
        "report": options.report_markdown.as_ref().map(|_| "REPORT.md"),
    });
    let manifest_text = serde_json::to_string_pretty(&manifest).unwrap_or_default() + "\n";
    out.files
        .insert("RUNBOOK.md".into(), runbook::write(inv, &manifest));
    out.files.insert("manifest.json".into(), manifest_text);
    if let Some(report) = &options.report_markdown {
        out.files.insert("REPORT.md".into(), report.clone());
    }
    Ok(out)
}

/// A file name for a stack (stack names are `[A-Za-z][-A-Za-z0-9]*` already).
fn file_stem(stack: &str) -> String {
    stack
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn versions_tf() -> String {
    format!(
        "# Written by cumulo migrate generate: the provider version whose import id formats the\n# import blocks follow.\nterraform {{\n  required_version = {}\n\n  required_providers {{\n    aws = {{\n      source  = \"hashicorp/aws\"\n      version = {}\n    }}\n  }}\n}}\n",
        hcl::string(TERRAFORM_VERSION),
        hcl::string(PROVIDER_VERSION)
    )
}

/// The provider alias for another region (`aws.us_east_1`).
pub(crate) fn region_alias(region: &str) -> String {
    region.replace('-', "_")
}

fn providers_tf(inv: &Inventory) -> String {
    let mut regions: BTreeSet<&str> = inv
        .out_of_band
        .certificates
        .iter()
        .map(|c| c.region.as_str())
        .collect();
    regions.remove(inv.region.as_str());
    let mut out = String::from(
        "# Pinned to the inventoried account and region: a plan against any other account fails.\n",
    );
    let block = |alias: Option<&str>, region: &str| {
        let alias = alias
            .map(|a| format!("  alias               = {}\n", hcl::string(a)))
            .unwrap_or_default();
        format!(
            "provider \"aws\" {{\n{alias}  region              = {}\n  allowed_account_ids = [{}]\n}}\n",
            hcl::string(region),
            hcl::string(&inv.account)
        )
    };
    out.push_str(&block(None, &inv.region));
    for r in regions {
        out.push('\n');
        out.push_str(&block(Some(&region_alias(r)), r));
    }
    out
}

/// Root stacks to delete, dependents first: the reverse of the order they can be deployed in
/// (`rehearse::deploy_order`: exporters before importers, a stack whose output another takes
/// as a parameter before that one, Copilot's app before environments before workloads).
/// Each entry lists its nested stacks, which go with it.
fn teardown_order(planned: &[Planned], inv: &Inventory) -> Vec<Value> {
    let order: Vec<&Planned> = crate::rehearse::deploy_order(inv)
        .iter()
        .rev()
        .filter_map(|s| {
            planned
                .iter()
                .find(|p| p.handed_off && p.parent.is_none() && p.stack.name == s.name)
        })
        .collect();
    order
        .into_iter()
        .map(|p| {
            let mut nested = Vec::new();
            let mut frontier = vec![p.stack.name.clone()];
            while let Some(parent) = frontier.pop() {
                for c in planned
                    .iter()
                    .filter(|c| c.parent.as_deref() == Some(parent.as_str()))
                {
                    nested.push(c.stack.name.clone());
                    frontier.push(c.stack.name.clone());
                }
            }
            json!({"stack": p.stack.name, "nested": nested})
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inventory::seal;

    const ENV: &str = r#"
Resources:
  Vpc: {Type: AWS::EC2::VPC, Properties: {CidrBlock: 10.0.0.0/16}}
  Bucket: {Type: AWS::S3::Bucket, Properties: {BucketName: logs}}
  BucketPolicy:
    Type: AWS::S3::BucketPolicy
    Properties:
      Bucket: !Ref Bucket
      PolicyDocument: {Statement: [{Effect: Allow, Resource: !Sub "${Bucket.Arn}/*"}]}
  CleanerRole: {Type: AWS::IAM::Role, Properties: {AssumeRolePolicyDocument: {}}}
  CleanerPolicy: {Type: AWS::IAM::Policy, Properties: {PolicyName: p, Roles: [!Ref CleanerRole], PolicyDocument: {}}}
  CleanerFunction: {Type: AWS::Lambda::Function, Properties: {Role: !GetAtt CleanerRole.Arn, Handler: index.handler}}
  Cleaner: {Type: Custom::BucketCleanerFunction, Properties: {ServiceToken: !GetAtt CleanerFunction.Arn, BucketName: !Ref Bucket}}
  Handle: {Type: AWS::CloudFormation::WaitConditionHandle}
Outputs:
  VpcId: {Value: !Ref Vpc, Export: {Name: app-test-VpcId}}
"#;
    const WEB: &str = r#"
Resources:
  Sg: {Type: AWS::EC2::SecurityGroup, Properties: {GroupDescription: web, VpcId: !ImportValue app-test-VpcId}}
"#;

    fn resource(logical: &str, kind: &str, physical: &str) -> serde_json::Value {
        json!({"logical_id": logical, "resource_type": kind, "physical_id": physical, "status": "CREATE_COMPLETE",
               "live": {"state": "not_read", "reason": "test"}, "import_attributes": {}})
    }

    fn stack(
        name: &str,
        kind: &str,
        template: &str,
        resources: Vec<serde_json::Value>,
        outputs: serde_json::Value,
    ) -> serde_json::Value {
        json!({"name": name, "id": format!("arn:aws:cloudformation:us-east-1:111111111111:stack/{name}/1"),
               "status": "CREATE_COMPLETE", "template": template, "resources": resources, "outputs": outputs,
               "copilot": {"kind": kind, "app": "app", "env": "test"}})
    }

    fn inventory(extra_web: Option<&str>) -> Inventory {
        let env = stack(
            "app-test",
            "env",
            ENV,
            vec![
                resource("Vpc", "AWS::EC2::VPC", "vpc-1"),
                resource("Bucket", "AWS::S3::Bucket", "logs"),
                resource("BucketPolicy", "AWS::S3::BucketPolicy", "logs"),
                resource("CleanerRole", "AWS::IAM::Role", "cleaner-role"),
                resource("CleanerPolicy", "AWS::IAM::Policy", "clean-Polic-1"),
                resource("CleanerFunction", "AWS::Lambda::Function", "cleaner"),
                resource(
                    "Cleaner",
                    "Custom::BucketCleanerFunction",
                    "bucket-cleaner-Cleaner",
                ),
                resource(
                    "Handle",
                    "AWS::CloudFormation::WaitConditionHandle",
                    "https://wait",
                ),
            ],
            json!([{"key": "VpcId", "value": "vpc-1", "export_name": "app-test-VpcId"}]),
        );
        let web_template = extra_web
            .map(|e| format!("{WEB}{e}"))
            .unwrap_or_else(|| WEB.to_string());
        let mut web_resources = vec![resource("Sg", "AWS::EC2::SecurityGroup", "sg-1")];
        if extra_web.is_some() {
            web_resources.push(resource("Odd", "AWS::Made::Up", "odd-1"));
        }
        let web = stack(
            "app-test-web",
            "workload",
            &web_template,
            web_resources,
            json!([]),
        );
        let mut inv: Inventory = serde_json::from_value(json!({
            "format_version": 1, "account": "111111111111", "region": "us-east-1", "taken_at": "t",
            "taken_by": "test", "selection": {"kind": "stacks", "names": []},
            "stacks": [env, web], "content_sha256": ""}))
        .unwrap();
        seal::seal(&mut inv);
        inv
    }

    #[test]
    fn handlers_are_manual_cleanup_and_the_rest_imports_with_references() {
        let g = generate(&inventory(None), &Options::default()).unwrap();
        let manifest: serde_json::Value = serde_json::from_str(&g.files["manifest.json"]).unwrap();
        let fates: BTreeMap<String, String> = manifest["stacks"][0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["logical_id"].as_str().unwrap().into(),
                    r["fate"].as_str().unwrap().into(),
                )
            })
            .collect();
        for handler in ["Cleaner", "CleanerFunction", "CleanerRole", "CleanerPolicy"] {
            assert_eq!(fates[handler], "manual-cleanup", "{handler}");
        }
        assert_eq!(fates["Handle"], "not-created");
        assert_eq!(fates["Bucket"], "import");
        let env_tf = &g.files["terraform/app-test.tf"];
        // An attribute the inventory did not record refers to the imported bucket.
        assert!(
            env_tf.contains(r#""Resource" = "${aws_s3_bucket.app-test_Bucket.arn}/*""#),
            "{env_tf}"
        );
        assert!(!env_tf.contains("Cleaner"), "{env_tf}");
        // The workload's import of the env's export is the recorded value; workload first.
        assert!(g.files["terraform/app-test-web.tf"].contains(r#"vpc_id = "vpc-1""#));
        assert_eq!(
            manifest["teardown_order"],
            json!([{"stack": "app-test-web", "nested": []}, {"stack": "app-test", "nested": []}])
        );
        assert_eq!(g.imports, 4);
        assert!(
            g.files["RUNBOOK.md"].contains("cumulo migrate check --changeset cs-app-test.json")
        );
        let patch = &g.files["retain-patches/app-test.yml"];
        assert_eq!(patch.matches("DeletionPolicy: Retain").count(), 8);
    }

    #[test]
    fn refusals_name_what_they_refuse() {
        // A type without a mapping blocks handing off its stack...
        let odd = "  Odd: {Type: AWS::Made::Up}\n";
        let err = generate(&inventory(Some(odd)), &Options::default()).unwrap_err();
        assert!(
            matches!(&err, GenerateError::Refused(r) if r[0].contains("Odd: AWS::Made::Up has no Terraform mapping")),
            "{err}"
        );
        // ...unless the stack is kept.
        let keep = Options {
            keep: vec!["app-test-web".into()],
            ..Options::default()
        };
        let g = generate(&inventory(Some(odd)), &keep).unwrap();
        assert_eq!(g.kept, ["app-test-web"]);
        // An import referring to a handler's role (deleted by hand later) is refused.
        let uses_role =
            "  Extra: {Type: AWS::EC2::VPC, Properties: {CidrBlock: !GetAtt CleanerRole.Arn}}\n";
        let mut inv = inventory(None);
        inv.stacks[0].template = ENV.replace("Outputs:", &format!("{uses_role}Outputs:"));
        inv.stacks[0]
            .resources
            .push(serde_json::from_value(resource("Extra", "AWS::EC2::VPC", "vpc-2")).unwrap());
        let err = generate(&inv, &Options::default()).unwrap_err();
        assert!(
            err.to_string()
                .contains("Extra (AWS::EC2::VPC) would be imported referencing CleanerRole"),
            "{err}"
        );
        // A kept stack importing a manual-cleanup resource's export is refused.
        let mut inv = inventory(None);
        inv.stacks[0].template = ENV.replace(
            "Outputs:",
            "Outputs:\n  Fn: {Value: !Ref CleanerFunction, Export: {Name: cleaner-fn}}",
        );
        inv.stacks[0].outputs.push(
            serde_json::from_value(
                json!({"key": "Fn", "value": "cleaner", "export_name": "cleaner-fn"}),
            )
            .unwrap(),
        );
        inv.stacks[1]
            .template
            .push_str("Outputs:\n  F: {Value: !ImportValue cleaner-fn}\n");
        let err = generate(&inv, &keep).unwrap_err();
        assert!(err.to_string().contains("kept stack app-test-web imports cleaner-fn from app-test, the value of CleanerFunction"), "{err}");
        // Bad input.
        let bad = Options {
            keep: vec!["nope".into()],
            ..Options::default()
        };
        assert!(
            matches!(generate(&inventory(None), &bad), Err(GenerateError::BadInput(m)) if m.contains("--keep nope"))
        );
    }
}
