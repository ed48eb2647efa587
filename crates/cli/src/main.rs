//! `cumulo`: CloudFormation that runs anywhere. Subcommands live in one module each.

mod serve;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cumulo: {e:#}");
            ExitCode::FAILURE
        }
    }
}
