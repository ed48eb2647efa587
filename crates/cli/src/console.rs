//! `cumulo console`: opens the console of a running `cumulo serve` in the default browser, or
//! prints its URL where no browser can be opened (no opener, no display, `--print`).

use clap::Args;
use std::process::{Command, ExitCode, Stdio};

#[derive(Args, Debug)]
pub struct ConsoleArgs {
    /// Host the endpoint listens on.
    #[arg(long, env = "CUMULO_HOST", default_value = "localhost")]
    host: String,
    /// Port the endpoint listens on.
    #[arg(long, env = "CUMULO_PORT", default_value_t = 4566)]
    port: u16,
    /// Only print the URL.
    #[arg(long)]
    print: bool,
}

/// The console's URL on `host:port` (a wildcard bind is reached on loopback).
fn url(host: &str, port: u16) -> String {
    let host = match host {
        "0.0.0.0" | "::" | "[::]" => "localhost",
        h => h,
    };
    let host = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    format!("http://{host}:{port}/_cumulo/console/")
}

/// The platform's opener, when a browser could be shown at all.
fn opener() -> Option<&'static str> {
    if cfg!(target_os = "macos") {
        return Some("open");
    }
    let display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
    display.then_some("xdg-open")
}

pub fn run(args: ConsoleArgs) -> anyhow::Result<ExitCode> {
    let url = url(&args.host, args.port);
    let opened = !args.print
        && opener().is_some_and(|cmd| {
            Command::new(cmd)
                .arg(&url)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        });
    if opened {
        say!("opened {url}");
    } else {
        say!("{url}");
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_name_a_reachable_host() {
        assert_eq!(
            url("localhost", 4566),
            "http://localhost:4566/_cumulo/console/"
        );
        assert_eq!(url("0.0.0.0", 1), "http://localhost:1/_cumulo/console/");
        assert_eq!(url("::1", 2), "http://[::1]:2/_cumulo/console/");
    }
}
