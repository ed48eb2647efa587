//! `cumulo import SOURCE --resource Logical=PhysicalId`: adopts existing resources of the local
//! cloud into a stack, recording what their providers read back (every attribute Ref and
//! Fn::GetAtt need). The template is the stack's template after the import.

use crate::assembly;
use crate::target::{Target, TargetArgs};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// The template (or cloud assembly) declaring the resources.
    pub source: PathBuf,
    #[arg(long)]
    pub stack: Option<String>,
    /// `LogicalId=PhysicalId` of a resource to adopt (repeatable).
    #[arg(long = "resource", value_parser = assembly::parse_param, required = true)]
    pub resources: Vec<(String, String)>,
    #[arg(long = "param", value_parser = assembly::parse_param)]
    pub params: Vec<(String, String)>,
    #[command(flatten)]
    pub target: TargetArgs,
}

pub fn run(args: ImportArgs) -> anyhow::Result<ExitCode> {
    crate::target::runtime()?.block_on(async {
        let target = args.target.open()?;
        let specs = assembly::load(
            &args.source,
            args.stack.as_deref(),
            &args.params,
            target.account_id(),
            target.region(),
        )?;
        let [spec] = specs.as_slice() else {
            anyhow::bail!("import acts on one stack: name it with --stack");
        };
        let lock = target.lock(&spec.name)?;
        let result = target.import(spec, args.resources.clone()).await;
        target.unlock(&lock)?;
        let stack_id = result?;
        for (logical, physical) in &args.resources {
            say!("{} | IMPORT_COMPLETE | {logical} ({physical})", spec.name);
        }
        say!(
            "\n ✅  {} (IMPORT_COMPLETE)\n\nStack ARN:\n{stack_id}",
            spec.name
        );
        Ok(ExitCode::SUCCESS)
    })
}
