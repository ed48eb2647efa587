//! `cumulo validate FILE...`: parses and fully evaluates each template (with stand-in values for
//! parameters that have none) and prints every problem as `file:line:column: message`. It
//! accepts what AWS's ValidateTemplate accepts: a Fn::FindInMap keyed by parameters is not
//! looked up with their defaults.

use clap::Args;
use cumulo_template::{
    Diagnostic, PlaceholderSsm, RenderOptions, SourceMap, parse_template, render,
};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ValidateArgs {
    /// Template files (JSON or YAML).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
}

/// Prints one diagnostic with the best position known for it.
pub fn print_diagnostic(file: &str, d: &Diagnostic, source_map: Option<&SourceMap>) {
    let pos = match (d.line, d.column) {
        (Some(l), Some(c)) => Some((l, c)),
        _ => d
            .path
            .as_deref()
            .and_then(|p| source_map.and_then(|m| m.position(p))),
    };
    match pos {
        Some((l, c)) => eprintln!("{file}:{l}:{c}: {}", d.message),
        None => eprintln!("{file}: {}", d.message),
    }
}

/// Diagnostics for one file: parse errors, then everything evaluation finds.
fn check(path: &PathBuf) -> (Vec<Diagnostic>, Option<SourceMap>) {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return (
                vec![Diagnostic::new(format!("cannot read file: {e}"))],
                None,
            );
        }
    };
    let doc = match parse_template(&text) {
        Ok(d) => d,
        Err(errors) => return (errors, None),
    };
    // As ValidateTemplate, AWS::Include and macros are not run: what they produce is checked
    // when a stack runs them.
    if cumulo_template::transform::expands(&doc.value) {
        return match cumulo_template::model::parameters_of(&doc.value) {
            Ok(_) => (Vec::new(), Some(doc.source_map)),
            Err(errors) => (errors, Some(doc.source_map)),
        };
    }
    let options = RenderOptions {
        dummy_parameters: true,
        validate: true,
        ..RenderOptions::default()
    };
    match render(doc.value, &options, &PlaceholderSsm) {
        Ok(_) => (Vec::new(), Some(doc.source_map)),
        Err(errors) => (errors, Some(doc.source_map)),
    }
}

pub fn run(args: ValidateArgs) -> anyhow::Result<ExitCode> {
    let mut failed = false;
    for path in &args.files {
        let file = path.display().to_string();
        let (errors, source_map) = check(path);
        if errors.is_empty() {
            println!("{file}: valid");
        } else {
            failed = true;
            for d in &errors {
                print_diagnostic(&file, d, source_map.as_ref());
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
