//! `cumulo drift --stack NAME`: each resource's recorded properties against what its service
//! reports now. `--revert` pushes the record back through the provider's update; `--accept`
//! takes the live values into the record. Exit code 0 when in sync (or settled), 1 when drift
//! remains.

use crate::target::{Target, TargetArgs};
use clap::Args;
use cumulo_engine::Settle;
use serde_json::json;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct DriftArgs {
    #[arg(long)]
    pub stack: String,
    /// Push the recorded properties back to drifted resources.
    #[arg(long, conflicts_with = "accept")]
    pub revert: bool,
    /// Record the live values of drifted resources.
    #[arg(long)]
    pub accept: bool,
    /// Only settle these logical ids (repeatable; all are still reported).
    #[arg(long)]
    pub resource: Vec<String>,
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub output: String,
    #[command(flatten)]
    pub target: TargetArgs,
}

pub fn run(args: DriftArgs) -> anyhow::Result<ExitCode> {
    let rt = crate::target::runtime()?;
    rt.block_on(async {
        let target = args.target.open()?;
        let settle = if args.revert {
            Settle::Revert
        } else if args.accept {
            Settle::Accept
        } else {
            Settle::Report
        };
        let lock = target.lock(&args.stack)?;
        let result = target.drift(&args.stack, settle, &args.resource).await;
        target.unlock(&lock)?;
        let report = result?;
        let settled = |r: &cumulo_engine::ResourceDrift| {
            settle != Settle::Report
                && (args.resource.is_empty() || args.resource.contains(&r.logical_id))
                && r.reason.as_deref().is_some_and(|x| !x.contains("failed"))
        };
        let remaining = report
            .iter()
            .any(|r| matches!(r.status.as_str(), "MODIFIED" | "DELETED") && !settled(r));
        if args.output == "json" {
            say!(
                "{}",
                serde_json::to_string_pretty(
                    &json!({"stack": args.stack, "resources": report, "drifted": remaining})
                )?
            );
        } else {
            for r in &report {
                let extra = r
                    .reason
                    .as_deref()
                    .map(|x| format!(" ({x})"))
                    .unwrap_or_default();
                say!(
                    "{:<11} {} {}{extra}",
                    r.status,
                    r.resource_type,
                    r.logical_id
                );
                for d in &r.differences {
                    say!(
                        "    {} {}: expected {} actual {}",
                        d.difference_type,
                        d.path,
                        d.expected
                            .as_ref()
                            .map(|v| v.to_string())
                            .unwrap_or_else(|| "(absent)".into()),
                        d.actual
                            .as_ref()
                            .map(|v| v.to_string())
                            .unwrap_or_else(|| "(absent)".into())
                    );
                }
            }
        }
        Ok(if remaining {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        })
    })
}
