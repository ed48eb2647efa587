//! `cumulo migrate`: moving stacks off CloudFormation without destroying anything (issue 19).
//! `retain-patch` writes a template's retain patch (`cumulo_template::retain`:
//! `DeletionPolicy: Retain` and `UpdateReplacePolicy: Retain` on every resource, no other byte
//! changed); `generate` writes Terraform with import blocks, the patches, the manifest and the
//! runbook from an inventory (`cumulo_migrate::generate`); `check` is the gate: offline
//! (`--template-diff`: a patch changes nothing else) and on a change set (`--changeset`:
//! `cumulo_migrate::changeset`).
//!
//! Exit codes, for scripts and runbooks: 0 the check holds, 1 it does not (each difference
//! printed) or generation was refused (each reason printed), 2 the input is unusable
//! (unreadable or unparsable file, missing argument), 3 an empty change set (proves nothing).

use clap::{Args, Subcommand};
use cumulo_template::retain::{RetainError, policy_only_difference, retain_patch};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct MigrateArgs {
    #[command(subcommand)]
    command: MigrateCommand,
}

#[derive(Subcommand)]
enum MigrateCommand {
    /// Write a template's retain patch: every resource retained, no other byte changed.
    RetainPatch(RetainPatchArgs),
    /// The change-set gate: prove a retain patch changes only the two deletion policies.
    Check(CheckArgs),
    /// From an inventory: Terraform with import blocks, retain patches, manifest and runbook.
    Generate(GenerateArgs),
}

#[derive(Args)]
struct GenerateArgs {
    /// The inventory (`cumulo migrate inventory -o inventory.json`).
    inventory: PathBuf,
    /// The directory to write (terraform/, retain-patches/, manifest.json, RUNBOOK.md).
    #[arg(long)]
    out: PathBuf,
    /// A root stack to keep under CloudFormation (repeatable): not handed off, not patched.
    #[arg(long = "keep", value_name = "STACK")]
    keep: Vec<String>,
}

#[derive(Args)]
struct RetainPatchArgs {
    /// The deployed template (as `aws cloudformation get-template --template-stage Original`
    /// gives it), JSON or YAML.
    template: PathBuf,
    /// Where to write the patch (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(Args)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["template_diff", "changeset"]))]
struct CheckArgs {
    /// The deployed template and its retain patch: the patch must differ only in every
    /// resource's DeletionPolicy and UpdateReplacePolicy, both Retain.
    #[arg(long = "template-diff", num_args = 2, value_names = ["CURRENT", "PATCHED"])]
    template_diff: Vec<PathBuf>,
    /// `aws cloudformation describe-change-set` output: the stack's change set and every
    /// nested change set it links to.
    #[arg(long, num_args = 1.., value_name = "CS.json", requires_all = ["manifest", "stack"])]
    changeset: Vec<PathBuf>,
    /// The manifest `migrate generate` wrote.
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// The stack the change set is for.
    #[arg(long)]
    stack: Option<String>,
}

/// Bad input: exit 2 with the reason.
fn refuse(message: String) -> ExitCode {
    eprintln!("cumulo migrate: {message}");
    ExitCode::from(2)
}

pub fn run(args: MigrateArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        MigrateCommand::RetainPatch(a) => retain(&a),
        MigrateCommand::Check(check) if !check.changeset.is_empty() => Ok(changeset(&check)),
        MigrateCommand::Check(check) => Ok(template_diff(
            &check.template_diff[0],
            &check.template_diff[1],
        )),
        MigrateCommand::Generate(a) => generate(&a),
    }
}

fn read_json(path: &PathBuf) -> Result<serde_json::Value, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not JSON: {e}", path.display()))
}

fn changeset(args: &CheckArgs) -> ExitCode {
    use cumulo_migrate::changeset::{GateError, gate};
    let (Some(manifest), Some(stack)) = (&args.manifest, &args.stack) else {
        return refuse("--changeset needs --manifest and --stack".into());
    };
    let manifest = match read_json(manifest) {
        Ok(m) => m,
        Err(e) => return refuse(e),
    };
    let mut files = Vec::new();
    for path in &args.changeset {
        match read_json(path) {
            Ok(v) => files.push((path.display().to_string(), v)),
            Err(e) => return refuse(e),
        }
    }
    match gate(&files, &manifest, stack) {
        Ok(verdict) => {
            for a in &verdict.allowed {
                say!("allowed: {a}");
            }
            for v in &verdict.violations {
                say!("violation: {v}");
            }
            if verdict.violations.is_empty() {
                say!(
                    "{stack}: {} change(s) in {} change set(s), every one only retains: the gate passes",
                    verdict.changes,
                    verdict.change_sets
                );
                ExitCode::SUCCESS
            } else {
                say!(
                    "{stack}: {} violation(s): do not execute this change set",
                    verdict.violations.len()
                );
                ExitCode::FAILURE
            }
        }
        Err(GateError::Empty(why)) => {
            say!("{why}");
            ExitCode::from(3)
        }
        Err(GateError::BadInput(why)) => refuse(why),
    }
}

fn generate(args: &GenerateArgs) -> anyhow::Result<ExitCode> {
    use cumulo_migrate::generate::{GenerateError, Options, generate};
    let text = match std::fs::read_to_string(&args.inventory) {
        Ok(t) => t,
        Err(e) => return Ok(refuse(format!("reading {}: {e}", args.inventory.display()))),
    };
    let inventory = match cumulo_migrate::inventory::seal::open(&text) {
        Ok(i) => i,
        Err(e) => return Ok(refuse(format!("{}: {e}", args.inventory.display()))),
    };
    let options = Options {
        keep: args.keep.clone(),
        tool: format!("cumulo {}", env!("CARGO_PKG_VERSION")),
        // The hook for `cumulo migrate report`: its Markdown for this inventory becomes
        // DIR/REPORT.md (and the manifest's "report") once the report command is wired here.
        report_markdown: None,
    };
    let generated = match generate(&inventory, &options) {
        Ok(g) => g,
        Err(GenerateError::BadInput(why)) => return Ok(refuse(why)),
        Err(GenerateError::Refused(reasons)) => {
            for r in &reasons {
                eprintln!("cumulo migrate generate: refused: {r}");
            }
            eprintln!(
                "cumulo migrate generate: {} reason(s); nothing written",
                reasons.len()
            );
            return Ok(ExitCode::FAILURE);
        }
    };
    for (path, content) in &generated.files {
        let path = args.out.join(path);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| anyhow::anyhow!("creating {}: {e}", dir.display()))?;
        }
        std::fs::write(&path, content)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    }
    say!(
        "{}: {} import(s); handed off: {}; kept: {}",
        args.out.display(),
        generated.imports,
        if generated.handed_off.is_empty() {
            "none".to_string()
        } else {
            generated.handed_off.join(", ")
        },
        if generated.kept.is_empty() {
            "none".to_string()
        } else {
            generated.kept.join(", ")
        }
    );
    Ok(ExitCode::SUCCESS)
}

fn retain(args: &RetainPatchArgs) -> anyhow::Result<ExitCode> {
    let text = match std::fs::read_to_string(&args.template) {
        Ok(t) => t,
        Err(e) => return Ok(refuse(format!("reading {}: {e}", args.template.display()))),
    };
    let patch = match retain_patch(&text) {
        Ok(p) => p,
        Err(e) => return Ok(refuse(format!("{}: {e}", args.template.display()))),
    };
    match &args.output {
        Some(path) => {
            std::fs::write(path, &patch.text)
                .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
            eprintln!(
                "{}: {} resource(s) retained, {} already were",
                path.display(),
                patch.changed.len(),
                patch.unchanged.len()
            );
        }
        None => {
            use std::io::Write;
            // A closed stdout (`| head`) is not an error of the command.
            let _ = std::io::stdout().write_all(patch.text.as_bytes());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn template_diff(current: &PathBuf, patched: &PathBuf) -> ExitCode {
    let read = |p: &PathBuf| {
        std::fs::read_to_string(p).map_err(|e| format!("reading {}: {e}", p.display()))
    };
    let (a, b) = match (read(current), read(patched)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return refuse(e),
    };
    match policy_only_difference(&a, &b) {
        Ok(differences) if differences.is_empty() => {
            say!(
                "{}: only DeletionPolicy and UpdateReplacePolicy differ from {}, every resource retained",
                patched.display(),
                current.display()
            );
            ExitCode::SUCCESS
        }
        Ok(differences) => {
            for d in &differences {
                say!("{}: {d}", patched.display());
            }
            say!(
                "{}: {} difference(s) from a retain patch of {}",
                patched.display(),
                differences.len(),
                current.display()
            );
            ExitCode::FAILURE
        }
        Err(RetainError::Unparsable(why)) => refuse(format!("a template does not parse: {why}")),
        Err(e) => refuse(e.to_string()),
    }
}
