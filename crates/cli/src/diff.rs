//! `cumulo diff`: what `cumulo deploy` of the same source would change, per resource (create,
//! update, replace, delete) and per property, with replacement decided from the createOnly
//! table. `--fail` exits 1 when anything would change.

use crate::assembly;
use crate::target::{Target, TargetArgs};
use clap::Args;
use cumulo_engine::ResourceDiff;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct DiffArgs {
    /// A template file or a CDK cloud assembly directory.
    pub source: PathBuf,
    #[arg(long)]
    pub stack: Option<String>,
    #[arg(long = "param", value_parser = assembly::parse_param)]
    pub params: Vec<(String, String)>,
    /// Exit 1 when any stack would change.
    #[arg(long)]
    pub fail: bool,
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub output: String,
    #[command(flatten)]
    pub target: TargetArgs,
}

/// A value for the text diff: a reference to something the deploy creates or replaces first
/// (the planner's placeholder) reads `${Logical.Attribute}`, as the CDK CLI shows it.
fn short(v: &Option<Value>) -> String {
    let text = match v {
        None => return "(absent)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find("{{cumulo:") {
        let Some(end) = rest[at..].find("}}") else {
            break;
        };
        let inner = &rest[at + "{{cumulo:".len()..at + end];
        let target = inner
            .strip_prefix("GetAtt:")
            .or_else(|| inner.strip_prefix("Ref:"))
            .unwrap_or(inner);
        out.push_str(&rest[..at]);
        out.push_str(&format!("${{{target}}}"));
        rest = &rest[at + end + 2..];
    }
    out.push_str(rest);
    out
}

fn print(stack: &str, diffs: &[ResourceDiff]) {
    say!("Stack {stack}");
    if diffs.is_empty() {
        say!("There were no differences");
        return;
    }
    say!("Resources");
    for d in diffs {
        let sign = match d.action.as_str() {
            "create" => "[+]",
            "delete" => "[-]",
            "replace" => "[-/+]",
            _ => "[~]",
        };
        let note = match d.action.as_str() {
            "replace" => " replace",
            "update" => " update",
            "create" => " create",
            _ => " delete",
        };
        say!("{sign} {} {}{note}", d.resource_type, d.logical_id);
        for p in &d.properties {
            let why = match p.requires_recreation.as_str() {
                "Always" => " (requires replacement)",
                "Conditionally" => " (may cause replacement)",
                _ => "",
            };
            say!(
                " └─ [~] {}{why}\n     ├─ [-] {}\n     └─ [+] {}",
                p.name,
                short(&p.old),
                short(&p.new)
            );
        }
    }
}

pub fn run(args: DiffArgs) -> anyhow::Result<ExitCode> {
    // The services the target opens expect a runtime even though diff never waits on one.
    let rt = crate::target::runtime()?;
    let _guard = rt.enter();
    let target = args.target.open()?;
    let specs = assembly::load(
        &args.source,
        args.stack.as_deref(),
        &args.params,
        target.account_id(),
        target.region(),
    )?;
    let mut any = false;
    let mut out = Vec::new();
    for spec in &specs {
        let diffs = target.diff(spec)?;
        any |= !diffs.is_empty();
        if args.output == "json" {
            out.push(json!({"stack": spec.name, "changes": diffs}));
        } else {
            print(&spec.name, &diffs);
        }
    }
    if args.output == "json" {
        say!("{}", serde_json::to_string_pretty(&json!({"stacks": out}))?);
    }
    Ok(if any && args.fail {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn placeholders_read_as_references() {
        let v = Some(json!({"a": "{{cumulo:GetAtt:Dlq.Arn}}", "b": "x{{cumulo:Ref:Q}}y"}));
        assert_eq!(short(&v), r#"{"a":"${Dlq.Arn}","b":"x${Q}y"}"#);
        assert_eq!(
            short(&Some(json!("{\"k\":{\"n\":1}}"))),
            "{\"k\":{\"n\":1}}"
        );
        assert_eq!(short(&None), "(absent)");
    }
}
