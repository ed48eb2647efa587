//! `cumulo migrate`: moving stacks off CloudFormation without destroying anything (issue 19).
//! What exists so far: `retain-patch`, which writes a template's retain patch
//! (`cumulo_template::retain`: `DeletionPolicy: Retain` and `UpdateReplacePolicy: Retain` on
//! every resource, no other byte changed), and the offline half of the change-set gate,
//! `check --template-diff`, which proves that a patch changes nothing else.
//!
//! Exit codes, for scripts and runbooks: 0 the check holds, 1 it does not (each difference
//! printed), 2 the input is unusable (unreadable or unparsable file, missing argument).

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
struct CheckArgs {
    /// The deployed template and its retain patch: the patch must differ only in every
    /// resource's DeletionPolicy and UpdateReplacePolicy, both Retain.
    #[arg(long = "template-diff", num_args = 2, value_names = ["CURRENT", "PATCHED"], required = true)]
    template_diff: Vec<PathBuf>,
}

/// Bad input: exit 2 with the reason.
fn refuse(message: String) -> ExitCode {
    eprintln!("cumulo migrate: {message}");
    ExitCode::from(2)
}

pub fn run(args: MigrateArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        MigrateCommand::RetainPatch(a) => retain(&a),
        MigrateCommand::Check(check) => Ok(template_diff(
            &check.template_diff[0],
            &check.template_diff[1],
        )),
    }
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
