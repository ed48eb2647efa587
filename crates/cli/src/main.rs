//! `cumulo`: CloudFormation that runs anywhere. Subcommands live in one module each.

mod render;
mod serve;
mod validate;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

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
    /// Check templates: print every problem as file:line:column and exit 1 if any.
    Validate(validate::ValidateArgs),
    /// Print a template with intrinsics resolved and its provisioning order, as JSON.
    Render(render::RenderArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Render(args) => render::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cumulo: {e:#}");
            ExitCode::FAILURE
        }
    }
}
