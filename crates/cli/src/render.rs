//! `cumulo render FILE`: the template with every intrinsic resolved and the provisioning order,
//! as JSON. Values that need a deployed resource are placeholders: `{{cumulo:Ref:Id}}`,
//! `{{cumulo:GetAtt:Id.Attribute}}`, `{{cumulo:ImportValue:Name}}` (list functions over them
//! give e.g. `{{cumulo:Select:0:{{cumulo:GetAtt:Vpc.Ipv6CidrBlocks}}}}`). A SAM template is
//! transformed first (the transform is pure); AWS::Include and macros are refused by name.

use crate::validate::print_diagnostic;
use anyhow::Context;
use clap::Args;
use cumulo_template::transform::{SERVERLESS, template_calls, template_fragment, with_transforms};
use cumulo_template::{PlaceholderSsm, RenderOptions, Value, parse_template, render};
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
    let (root, transformed) = match serverless(doc.value, &options) {
        Ok(v) => v,
        Err(message) => {
            eprintln!("{file}: {message}");
            return Ok(ExitCode::FAILURE);
        }
    };
    // Positions are the submitted text's: none for a transformed template.
    let source_map = (!transformed).then_some(&doc.source_map);
    match render(root, &options, &PlaceholderSsm) {
        Ok(rendered) => {
            println!("{}", serde_json::to_string_pretty(&rendered.output)?);
            Ok(ExitCode::SUCCESS)
        }
        Err(errors) => {
            for d in &errors {
                print_diagnostic(&file, d, source_map);
            }
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The template with SAM's transform run (when its Transform section names it) and whether it
/// ran; the other transforms stay for `render` to refuse by name.
fn serverless(root: Value, options: &RenderOptions) -> Result<(Value, bool), String> {
    let calls = template_calls(&root).map_err(|d| d.aws_message())?;
    if !calls.iter().any(|c| c.name == SERVERLESS) {
        return Ok((root, false));
    }
    let mut ctx = cumulo_sam::Context::new(&options.region);
    ctx.now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    for (k, v) in &options.parameters {
        ctx.parameters
            .insert(k.clone(), serde_json::Value::String(v.clone()));
    }
    let out = cumulo_sam::transform(&template_fragment(&root).to_json(), &ctx)
        .map_err(|f| format!("Transform {SERVERLESS} failed with: {f}"))?;
    let left: Vec<_> = calls.into_iter().filter(|c| c.name != SERVERLESS).collect();
    Ok((with_transforms(Value::from(&out), &left), true))
}
