//! `cumulo deploy TEMPLATE|CDK_OUT_DIR`: creates or updates stacks in the local cloud
//! in-process, printing one line per resource event. Exit codes: 0 deployed (or nothing to
//! change), 1 failed with nothing left half-done (rolled back, or refused before starting),
//! 2 failed part-way (`--no-rollback`, or a rollback that itself failed): some resources are
//! changed and the stack says which.

use crate::assembly::{self, StackSpec};
use crate::progress::Progress;
use crate::target::{DeployOptions, Finished, Target, TargetArgs};
use clap::Args;
use cumulo_engine::StackStatus;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

#[derive(Args, Debug)]
pub struct DeployArgs {
    /// A template file (JSON or YAML), or a CDK cloud assembly directory (`cdk.out`).
    pub source: PathBuf,
    /// The stack name (default: the template file's name; for an assembly, every stack).
    #[arg(long)]
    pub stack: Option<String>,
    /// A template parameter, `NAME=VALUE` (repeatable).
    #[arg(long = "param", value_parser = assembly::parse_param)]
    pub params: Vec<(String, String)>,
    /// A stack-level tag, `KEY=VALUE` (repeatable): every resource that takes tags gets it.
    #[arg(long = "tag", value_parser = assembly::parse_param)]
    pub tags: Vec<(String, String)>,
    /// Leave a failed deploy where it stopped instead of rolling it back (exit code 2).
    #[arg(long)]
    pub no_rollback: bool,
    /// `text` (progress lines) or `json` (a result document on stdout, progress on stderr).
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub output: String,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// How an operation's final stack status maps to the exit code.
pub fn outcome_code(status: StackStatus) -> u8 {
    use StackStatus::*;
    match status {
        CREATE_COMPLETE | UPDATE_COMPLETE | IMPORT_COMPLETE | DELETE_COMPLETE => 0,
        ROLLBACK_COMPLETE | UPDATE_ROLLBACK_COMPLETE | IMPORT_ROLLBACK_COMPLETE => 1,
        _ => 2,
    }
}

/// The result document of one stack; `resource_events` counts the resource events the
/// operation wrote (0: no resource was touched).
pub fn stack_json(name: &str, f: &Finished, seconds: f64, resource_events: usize) -> Value {
    let Some(s) = &f.stack else {
        return json!({"stack": name, "status": "UNKNOWN"});
    };
    let outputs: serde_json::Map<String, Value> = s
        .outputs
        .iter()
        .map(|o| (o.key.clone(), Value::String(o.value.clone())))
        .collect();
    json!({
        "stack": s.stack_name,
        "stackId": s.stack_id,
        "status": s.stack_status.as_str(),
        "reason": s.stack_status_reason,
        "unchanged": f.unchanged,
        "outputs": outputs,
        "resourceEvents": resource_events,
        "seconds": seconds,
    })
}

/// Uploads a stack's assets after making the environment look bootstrapped.
pub async fn publish_assets(target: &dyn Target, spec: &StackSpec) -> anyhow::Result<()> {
    if let Some(b) = &spec.bootstrap {
        target.bootstrap(b).await?;
    }
    for asset in &spec.assets {
        let body = assembly::asset_bytes(asset)?;
        target.publish(&asset.bucket, &asset.key, body).await?;
    }
    Ok(())
}

pub fn run(args: DeployArgs) -> anyhow::Result<ExitCode> {
    let rt = crate::target::runtime()?;
    rt.block_on(deploy(args))
}

async fn deploy(args: DeployArgs) -> anyhow::Result<ExitCode> {
    let target = args.target.open_serving()?;
    let specs = assembly::load(
        &args.source,
        args.stack.as_deref(),
        &args.params,
        target.account_id(),
        target.region(),
    )?;
    let json_out = args.output == "json";
    let mut progress = Progress::new(json_out);
    let options = DeployOptions {
        no_rollback: args.no_rollback,
        tags: args.tags.clone(),
    };
    let mut results = Vec::new();
    let mut code = 0u8;
    for spec in &specs {
        let started = Instant::now();
        let lock = target.lock(&spec.name)?;
        let result = async {
            publish_assets(&target, spec).await?;
            target.deploy(spec, &options, &mut progress).await
        }
        .await;
        target.unlock(&lock)?;
        let finished = match result {
            Ok(f) => f,
            Err(e) => {
                progress.finish();
                eprintln!("cumulo: {}: {e:#}", spec.name);
                code = code.max(1);
                results.push(
                    json!({"stack": spec.name, "status": "REFUSED", "reason": format!("{e:#}")}),
                );
                break;
            }
        };
        let seconds = started.elapsed().as_secs_f64();
        let status = finished.stack.as_ref().map(|s| s.stack_status);
        let this = status.map_or(1, outcome_code);
        if !json_out {
            match (&finished.stack, finished.unchanged) {
                (Some(s), true) => say!("{}: no changes ({})", s.stack_name, s.stack_status),
                (Some(s), false) => {
                    let mark = if this == 0 { "✅" } else { "❌" };
                    say!(
                        "\n {mark}  {} ({}) in {seconds:.2}s",
                        s.stack_name,
                        s.stack_status
                    );
                    if let Some(r) = s.stack_status_reason.as_ref().filter(|_| this != 0) {
                        say!("    {r}");
                    }
                    if !s.outputs.is_empty() {
                        say!("\nOutputs:");
                        for o in &s.outputs {
                            say!("{}.{} = {}", s.stack_name, o.key, o.value);
                        }
                    }
                    say!("\nStack ARN:\n{}", s.stack_id);
                }
                (None, _) => say!("{}: the stack vanished", spec.name),
            }
        }
        let touched = progress
            .events
            .iter()
            .filter(|e| {
                e.stack_name == spec.name && e.resource_type != "AWS::CloudFormation::Stack"
            })
            .count();
        results.push(stack_json(&spec.name, &finished, seconds, touched));
        code = code.max(this);
        if this != 0 {
            break;
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
