//! `cumulo`: CloudFormation that runs anywhere. Subcommands live in one module each.

/// `println!` that does not panic when stdout is closed early (`cumulo diff | head`): the
/// output is a report, and a reader that stopped reading is not an error of the command.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod assembly;
mod aws_read;
mod console;
mod deploy;
mod destroy;
mod diff;
mod drift;
mod import;
mod lock;
mod migrate;
mod progress;
mod rehearse;
mod render;
mod serve;
mod target;
mod validate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// mimalloc (its v2 design, transparent huge pages off): a large template's parse and
/// evaluation is mostly allocating and freeing small JSON values, and glibc's malloc spent
/// ~45% of it consolidating free lists; with mimalloc the 5,000-resource template bench takes
/// half the CPU. v2 without THP costs ~0.2 MiB of idle RSS; v3 (the crate's default) cost
/// 6.7 MiB. Figures in `crates/template/benches/common/mod.rs`.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "cumulo", version, about = "CloudFormation that runs anywhere")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve a local AWS endpoint (LocalStack conventions, port 4566).
    Serve(serve::ServeArgs),
    /// Open the browser console of a running `cumulo serve` (or print its URL).
    Console(console::ConsoleArgs),
    /// Check templates: print every problem as file:line:column and exit 1 if any.
    Validate(validate::ValidateArgs),
    /// Print a template with intrinsics resolved and its provisioning order, as JSON.
    Render(render::RenderArgs),
    /// Deploy a template or CDK cloud assembly to the local cloud in-process (no server).
    Deploy(deploy::DeployArgs),
    /// Show what a deploy would change, per resource and property.
    Diff(diff::DiffArgs),
    /// Delete deployed stacks.
    Destroy(destroy::DestroyArgs),
    /// Compare deployed resources with what their services report now; revert or accept.
    Drift(drift::DriftArgs),
    /// Adopt existing resources into a stack.
    Import(import::ImportArgs),
    /// Drop a stack's deploy lock left by a deploy that died.
    ForceUnlock(ForceUnlockArgs),
    /// Move stacks off CloudFormation without destroying anything.
    Migrate(migrate::MigrateArgs),
}

#[derive(clap::Args, Debug)]
struct ForceUnlockArgs {
    /// The stack whose lock to drop.
    stack: String,
    #[command(flatten)]
    target: target::TargetArgs,
}

fn force_unlock(args: ForceUnlockArgs) -> anyhow::Result<ExitCode> {
    use target::Target;
    let rt = target::runtime()?;
    let _guard = rt.enter();
    let t = args.target.open()?;
    if t.force_unlock(&args.stack)? {
        say!("{}: lock dropped", args.stack);
    } else {
        say!("{}: was not locked", args.stack);
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Console(args) => console::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Render(args) => render::run(args),
        Command::Deploy(args) => deploy::run(args),
        Command::Diff(args) => diff::run(args),
        Command::Destroy(args) => destroy::run(args),
        Command::Drift(args) => drift::run(args),
        Command::Import(args) => import::run(args),
        Command::ForceUnlock(args) => force_unlock(args),
        Command::Migrate(args) => migrate::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cumulo: {e:#}");
            ExitCode::FAILURE
        }
    }
}
