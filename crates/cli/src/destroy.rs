//! `cumulo destroy`: deletes stacks from the local cloud, with the same progress lines and exit
//! codes as deploy (0 deleted or absent, 2 left in DELETE_FAILED).

use crate::assembly;
use crate::deploy::{outcome_code, stack_json};
use crate::progress::Progress;
use crate::target::{Target, TargetArgs};
use clap::Args;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct DestroyArgs {
    /// The stack to delete (repeatable), or give SOURCE to delete its stacks.
    #[arg(long)]
    pub stack: Vec<String>,
    /// A template file or cloud assembly whose stacks to delete (in reverse order).
    pub source: Option<PathBuf>,
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub output: String,
    #[command(flatten)]
    pub target: TargetArgs,
}

pub fn run(args: DestroyArgs) -> anyhow::Result<ExitCode> {
    crate::target::runtime()?.block_on(destroy(args))
}

async fn destroy(args: DestroyArgs) -> anyhow::Result<ExitCode> {
    let target = args.target.open_serving()?;
    let mut names = args.stack.clone();
    if let Some(source) = &args.source {
        let only = names.first().cloned();
        let specs = assembly::load(
            source,
            only.as_deref(),
            &[],
            target.account_id(),
            target.region(),
        )?;
        names = specs.into_iter().rev().map(|s| s.name).collect();
    }
    if names.is_empty() {
        anyhow::bail!(
            "name the stack to destroy: --stack NAME, or the template / cdk.out it was deployed from"
        );
    }
    let json_out = args.output == "json";
    let mut progress = Progress::new(json_out);
    let mut results = Vec::new();
    let mut code = 0u8;
    for name in &names {
        let started = Instant::now();
        let lock = target.lock(name)?;
        let result = target.destroy(name, &mut progress).await;
        target.unlock(&lock)?;
        match result? {
            None => {
                if !json_out {
                    say!("{name}: no such stack (nothing to destroy)");
                }
                results.push(json!({"stack": name, "status": "ABSENT"}));
            }
            Some(f) => {
                let this = f.stack.as_ref().map_or(2, |s| outcome_code(s.stack_status));
                if !json_out {
                    let status = f
                        .stack
                        .as_ref()
                        .map(|s| s.stack_status.as_str())
                        .unwrap_or("UNKNOWN");
                    let mark = if this == 0 { "✅" } else { "❌" };
                    say!("\n {mark}  {name}: {status}");
                    if let Some(r) = f
                        .stack
                        .as_ref()
                        .and_then(|s| s.stack_status_reason.clone())
                        .filter(|_| this != 0)
                    {
                        say!("    {r}");
                    }
                }
                results.push(stack_json(name, &f, started.elapsed().as_secs_f64(), 0));
                code = code.max(this);
            }
        }
    }
    progress.finish();
    if json_out {
        say!(
            "{}",
            serde_json::to_string_pretty(&json!({"stacks": results, "exitCode": code}))?
        );
    }
    Ok(ExitCode::from(code))
}
