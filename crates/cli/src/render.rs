//! `cumulo render FILE`: the template with every intrinsic resolved and the provisioning order,
//! as JSON. Values that need a deployed resource are placeholders: `{{cumulo:Ref:Id}}`,
//! `{{cumulo:GetAtt:Id.Attribute}}`, `{{cumulo:ImportValue:Name}}` (list functions over them
//! give e.g. `{{cumulo:Select:0:{{cumulo:GetAtt:Vpc.Ipv6CidrBlocks}}}}`).

use crate::validate::print_diagnostic;
use anyhow::Context;
use clap::Args;
use cumulo_template::{PlaceholderSsm, RenderOptions, parse_template, render};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct RenderArgs {
    /// Template file (JSON or YAML).
    pub file: PathBuf,
    /// A parameter value, `Key=Value` (repeatable).
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    #[arg(long, default_value = "us-east-1")]
    pub region: String,
    #[arg(long = "stack-name", default_value = "cumulo-render")]
    pub stack_name: String,
    #[arg(long = "account-id", default_value = "000000000000")]
    pub account_id: String,
}

pub fn run(args: RenderArgs) -> anyhow::Result<ExitCode> {
    let file = args.file.display().to_string();
    let text = std::fs::read_to_string(&args.file).with_context(|| format!("reading {file}"))?;
    let mut options = RenderOptions {
        region: args.region,
        stack_name: args.stack_name,
        account_id: args.account_id,
        ..RenderOptions::default()
    };
    for p in &args.params {
        let (k, v) = p
            .split_once('=')
            .with_context(|| format!("--param {p}: expected KEY=VALUE"))?;
        options.parameters.insert(k.to_string(), v.to_string());
    }
    let doc = match parse_template(&text) {
        Ok(d) => d,
        Err(errors) => {
            for d in &errors {
                print_diagnostic(&file, d, None);
            }
            return Ok(ExitCode::FAILURE);
        }
    };
    match render(doc.value, &options, &PlaceholderSsm) {
        Ok(rendered) => {
            println!("{}", serde_json::to_string_pretty(&rendered.output)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(errors) => {
            for d in &errors {
                print_diagnostic(&file, d, Some(&doc.source_map));
            }
            Ok(ExitCode::FAILURE)
        }
    }
}
