//! `cumulo migrate`: moving stacks off CloudFormation without destroying anything (issue 19).
//! `retain-patch` writes a template's retain patch (`cumulo_template::retain`:
//! `DeletionPolicy: Retain` and `UpdateReplacePolicy: Retain` on every resource, no other byte
//! changed); `generate` writes Terraform with import blocks, the patches, the manifest and the
//! runbook from an inventory (`cumulo_migrate::generate`); `check` is the gate: offline
//! (`--template-diff`: a patch changes nothing else) and on a change set (`--changeset`:
//! `cumulo_migrate::changeset`).
//!
//! `inventory` reads an account's stacks through the read-only client (`aws_read`) into a
//! sealed inventory file; `report` judges one (fates, Delete handlers, cascades).
//!
//! Exit codes, for scripts and runbooks: 0 the check holds, 1 it does not (each difference
//! printed) or generation was refused (each reason printed), 2 the input is unusable
//! (unreadable or unparsable file, missing argument, an unknown stack, a stale or tampered
//! inventory) or a refused non-read call (a bug), 3 an empty change set (proves nothing).

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
    /// Read stacks (Copilot apps by tag, or any named stacks) into an inventory file,
    /// through a client that can only read.
    Inventory(InventoryArgs),
    /// Judge an inventory: each resource's fate, the Delete handlers and what they would
    /// destroy, env-controller cascades, and what a plain DeleteStack would destroy.
    Report(ReportArgs),
    /// From an inventory: Terraform with import blocks, retain patches, manifest and runbook.
    Generate(GenerateArgs),
    /// Rehearse the plan on local twins of the account: retain patches through gated change
    /// sets and teardown (proving every import survives and no Delete handler runs), and the
    /// careless plain DeleteStack (reporting what it destroys).
    Rehearse(crate::rehearse::RehearseArgs),
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
    /// First read the account again (read-only, standard credential chain or
    /// AWS_ENDPOINT_URL) and refuse (exit 2) if any stack's status, last update or template
    /// changed since the inventory was taken. Without it the command works offline.
    #[arg(long)]
    recheck: bool,
}

#[derive(Args)]
#[command(group = clap::ArgGroup::new("what").required(true).args(["app", "stack"]))]
struct InventoryArgs {
    /// A Copilot application: its app, environment and workload stacks, by their tags.
    #[arg(long)]
    app: Option<String>,
    /// Only these environments of the app (repeatable).
    #[arg(long = "env", requires = "app")]
    env: Vec<String>,
    /// Any stacks by name (repeatable), with their nested stacks.
    #[arg(long = "stack")]
    stack: Vec<String>,
    /// Where to write the inventory (created 0600).
    #[arg(short, long)]
    output: PathBuf,
    /// The AWS profile to read with (default: the standard credential chain).
    #[arg(long)]
    profile: Option<String>,
    /// The region (default: AWS_REGION or the profile's).
    #[arg(long)]
    region: Option<String>,
}

#[derive(Args)]
struct ReportArgs {
    /// An inventory file written by `cumulo migrate inventory`.
    inventory: PathBuf,
    /// Where to write REPORT.md (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Also write an HTML report with each stack's resource graph, fates as colours.
    #[arg(long)]
    html: Option<PathBuf>,
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
    #[arg(long, num_args = 1.., value_name = "CS.json", requires_all = ["manifest", "stack"], conflicts_with = "template_diff")]
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
        MigrateCommand::Inventory(a) => inventory(&a),
        MigrateCommand::Report(a) => report(&a),
        MigrateCommand::Generate(a) => generate(&a),
        MigrateCommand::Rehearse(a) => crate::rehearse::run(&a),
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
    // Files left from another run would be read by Terraform with the new ones.
    if std::fs::read_dir(&args.out).is_ok_and(|mut d| d.next().is_some()) {
        return Ok(refuse(format!(
            "{} exists and is not empty: generate into a new directory",
            args.out.display()
        )));
    }
    let text = match std::fs::read_to_string(&args.inventory) {
        Ok(t) => t,
        Err(e) => return Ok(refuse(format!("reading {}: {e}", args.inventory.display()))),
    };
    let inventory = match cumulo_migrate::inventory::seal::open(&text) {
        Ok(i) => i,
        Err(e) => return Ok(refuse(format!("{}: {e}", args.inventory.display()))),
    };
    if let Some(stop) = freshness(&inventory, args.recheck, "generate")? {
        return Ok(stop);
    }
    let options = Options {
        keep: args.keep.clone(),
        tool: format!("cumulo {}", env!("CARGO_PKG_VERSION")),
        // `cumulo migrate report`'s Markdown for the same inventory becomes DIR/REPORT.md.
        report_markdown: Some(cumulo_migrate::report::markdown::render(
            &inventory,
            &cumulo_migrate::report::assess(&inventory),
        )),
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

fn inventory(args: &InventoryArgs) -> anyhow::Result<ExitCode> {
    use cumulo_migrate::inventory::model::Selection;
    use cumulo_migrate::inventory::take::{InventoryError, Request, take};
    let selection = match &args.app {
        Some(app) => Selection::Copilot {
            app: app.clone(),
            environments: args.env.clone(),
        },
        None => Selection::Stacks {
            names: args.stack.clone(),
        },
    };
    // A test seam for the refusal path (debug builds only): the e2e tests make the command
    // attempt a call that is not a read, as a bug would.
    if cfg!(debug_assertions)
        && let Ok(call) = std::env::var("CUMULO_MIGRATE_TEST_ATTEMPT")
    {
        let (service, operation) = call.split_once(':').unwrap_or(("", call.as_str()));
        let attempt = cumulo_migrate::inventory::reads::ReadRequest::new(
            service,
            operation,
            serde_json::json!({}),
        );
        if let Err(refused) = attempt {
            return Ok(refuse(format!(
                "refused {}: {refused}. This is a bug in cumulo; nothing was changed",
                refused.operation()
            )));
        }
    }
    let client = crate::aws_read::HttpReadClient::connect(&crate::aws_read::Connection {
        profile: args.profile.as_deref(),
        region: args.region.as_deref(),
    })?;
    let request = Request {
        selection,
        region: client.region().to_string(),
        endpoint: client.endpoint().map(str::to_string),
        taken_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        taken_by: format!("cumulo {}", env!("CARGO_PKG_VERSION")),
    };
    let inventory = match take(&client, request) {
        Ok(i) => i,
        Err(InventoryError::Refused(refused)) => {
            return Ok(refuse(format!(
                "refused {}: {refused}. This is a bug in cumulo; nothing was changed",
                refused.operation()
            )));
        }
        Err(e @ (InventoryError::UnknownStack(_) | InventoryError::NoCopilotStacks { .. })) => {
            return Ok(refuse(e.to_string()));
        }
        Err(e) => return Err(e.into()),
    };
    let text = serde_json::to_string_pretty(&inventory)?;
    write_private(&args.output, text.as_bytes())?;
    let resources: usize = inventory.stacks.iter().map(|s| s.resources.len()).sum();
    eprintln!(
        "{}: {} stack(s), {} resource(s), {} certificate(s) and {} hosted zone(s) outside them (account {}, {})",
        args.output.display(),
        inventory.stacks.len(),
        resources,
        inventory.out_of_band.certificates.len(),
        inventory.out_of_band.hosted_zones.len(),
        inventory.account,
        inventory.region
    );
    Ok(ExitCode::SUCCESS)
}

/// Whether an inventory may be acted on. With `--recheck` the account is read again and any
/// change since the inventory was taken refuses the command (exit 2, each change named: a plan
/// from a stale inventory would patch templates no longer deployed). Without it the command
/// works offline from the file alone, and says how old the inventory is. `Some(code)`: stop.
pub fn freshness(
    inv: &cumulo_migrate::inventory::model::Inventory,
    recheck: bool,
    command: &str,
) -> anyhow::Result<Option<ExitCode>> {
    use cumulo_migrate::inventory::recheck::{RecheckError, age, recheck as read_again};
    if !recheck {
        let age = age(&inv.taken_at, chrono::Utc::now().timestamp())
            .map(|a| format!(", {a} ago"))
            .unwrap_or_default();
        eprintln!(
            "cumulo migrate {command}: warning: the inventory was taken {}{age} and is not rechecked against account {}: pass --recheck to refuse a stale one",
            inv.taken_at, inv.account
        );
        return Ok(None);
    }
    let refuse = |message: String| {
        eprintln!("cumulo migrate {command}: {message}");
        Ok(Some(ExitCode::from(2)))
    };
    let client = crate::aws_read::HttpReadClient::connect(&crate::aws_read::Connection {
        profile: None,
        region: Some(&inv.region),
    })?;
    match read_again(&client, inv) {
        Ok(changes) if changes.is_empty() => {
            eprintln!(
                "cumulo migrate {command}: rechecked: account {}'s {} stack(s) are as inventoried at {}",
                inv.account,
                inv.stacks.len(),
                inv.taken_at
            );
            Ok(None)
        }
        Ok(changes) => {
            for c in &changes {
                eprintln!("cumulo migrate {command}: changed: {c}");
            }
            refuse(format!(
                "the inventory taken {} is stale ({} change(s)): take it again",
                inv.taken_at,
                changes.len()
            ))
        }
        Err(RecheckError::Refused(r)) => refuse(format!(
            "refused {}: {r}. This is a bug in cumulo; nothing was changed",
            r.operation()
        )),
        Err(e @ RecheckError::Call { .. }) => refuse(format!("cannot recheck the inventory: {e}")),
    }
}

/// Writes a file only its owner can read: an inventory names accounts, ARNs and parameters.
fn write_private(path: &PathBuf, bytes: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    // An existing file keeps its mode on open: narrow it too.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.write_all(bytes)
        .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    Ok(())
}

fn report(args: &ReportArgs) -> anyhow::Result<ExitCode> {
    use cumulo_migrate::inventory::seal;
    use cumulo_migrate::report::{assess, markdown};
    let text = match std::fs::read_to_string(&args.inventory) {
        Ok(t) => t,
        Err(e) => return Ok(refuse(format!("reading {}: {e}", args.inventory.display()))),
    };
    let inventory = match seal::open(&text) {
        Ok(i) => i,
        Err(e) => return Ok(refuse(format!("{}: {e}", args.inventory.display()))),
    };
    let assessment = assess(&inventory);
    if let Some(path) = &args.html {
        let page = cumulo_migrate::report::html::render(&inventory, &assessment);
        std::fs::write(path, page)
            .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
    }
    let md = markdown::render(&inventory, &assessment);
    match &args.output {
        Some(path) => {
            std::fs::write(path, &md)
                .map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
            eprintln!(
                "{}: report on {} stack(s)",
                path.display(),
                inventory.stacks.len()
            );
        }
        None => {
            use std::io::Write;
            let _ = std::io::stdout().write_all(md.as_bytes());
        }
    }
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
