//! Which local interpreter runs which Lambda runtime.
//!
//! `nodejs18.x` … `nodejs24.x` run on the machine's `node`, `python3.x` on its `python3`
//! (overridable with `CUMULO_LAMBDA_NODE` / `CUMULO_LAMBDA_PYTHON`). When the machine's version
//! differs from the declared one (Node.js 20 running a `nodejs22.x` function, say) the function
//! still runs, and the mapping is written into its logs at the start of every execution
//! environment, never silently. Any other runtime (Java, .NET, Ruby, custom runtimes) cannot
//! run here and fails the invoke naming it.

use std::path::PathBuf;
use std::sync::OnceLock;

/// A resolved interpreter: its executable (the real one, not a version manager's shim), the
/// arguments before the script, and its version.
#[derive(Debug, Clone)]
pub struct Interpreter {
    pub path: PathBuf,
    pub args: Vec<String>,
    pub version: String,
}

/// The language family of a runtime identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Node,
    Python,
}

pub fn family(runtime: &str) -> Option<Family> {
    if runtime.starts_with("nodejs") {
        Some(Family::Node)
    } else if runtime.starts_with("python3") {
        Some(Family::Python)
    } else {
        None
    }
}

/// The version a runtime declares: `nodejs22.x` → `22`, `python3.12` → `3.12`.
fn declared_version(runtime: &str) -> &str {
    runtime
        .trim_start_matches("nodejs")
        .trim_start_matches("python")
        .trim_end_matches(".x")
}

/// Why a runtime cannot run, or the interpreter and (when versions differ) the mapping note.
pub fn resolve(runtime: &str) -> Result<(Interpreter, Option<String>), String> {
    let fam = family(runtime).ok_or_else(|| {
        format!(
            "cumulo runs Node.js and Python functions with the machine's interpreters; runtime {runtime} cannot run on this machine"
        )
    })?;
    let found = match fam {
        Family::Node => node(),
        Family::Python => python(),
    };
    let interp = found.clone().ok_or_else(|| {
        let what = match fam {
            Family::Node => "Node.js (`node`, or CUMULO_LAMBDA_NODE)",
            Family::Python => "Python 3 (`python3`, or CUMULO_LAMBDA_PYTHON)",
        };
        format!("runtime {runtime} needs {what}, which is not installed on this machine")
    })?;
    let declared = declared_version(runtime);
    let machine = interp.version.trim_start_matches('v');
    let same = match fam {
        Family::Node => machine.split('.').next() == Some(declared),
        Family::Python => {
            let mm: Vec<&str> = machine.split('.').take(2).collect();
            mm.join(".") == declared
        }
    };
    let note = (!same).then(|| {
        let (lang, rel) = match fam {
            Family::Node => ("Node.js", compare(declared, machine)),
            Family::Python => ("Python", compare(declared, machine)),
        };
        format!(
            "cumulo: runtime {runtime} is mapped to this machine's {lang} {} ({rel} than declared)",
            interp.version
        )
    });
    Ok((interp, note))
}

/// `older` / `newer`: how the machine's version compares with the declared one.
fn compare(declared: &str, machine: &str) -> &'static str {
    let parse = |s: &str| -> Vec<u64> { s.split('.').filter_map(|p| p.parse().ok()).collect() };
    let (d, m) = (parse(declared), parse(machine));
    let m = &m[..d.len().min(m.len())];
    if m < d.as_slice() { "older" } else { "newer" }
}

fn node() -> Option<Interpreter> {
    static NODE: OnceLock<Option<Interpreter>> = OnceLock::new();
    NODE.get_or_init(|| {
        let exe = std::env::var("CUMULO_LAMBDA_NODE").unwrap_or_else(|_| "node".into());
        let out = std::process::Command::new(&exe)
            .args(["-p", "process.execPath + '\\n' + process.version"])
            .output()
            .ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        let mut lines = text.lines();
        let path = lines.next()?.trim().into();
        let version = lines.next()?.trim().to_string();
        Some(Interpreter {
            path,
            args: Vec::new(),
            version,
        })
    })
    .clone()
}

fn python() -> Option<Interpreter> {
    static PYTHON: OnceLock<Option<Interpreter>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            let exe = std::env::var("CUMULO_LAMBDA_PYTHON").unwrap_or_else(|_| "python3".into());
            let out = std::process::Command::new(&exe)
                .args([
                    "-c",
                    "import sys, platform; print(sys.executable); print(platform.python_version())",
                ])
                .output()
                .ok()?;
            let text = String::from_utf8(out.stdout).ok()?;
            let mut lines = text.lines();
            let path = lines.next()?.trim().into();
            let version = lines.next()?.trim().to_string();
            Some(Interpreter {
                path,
                // Unbuffered, so output reaches cumulo in order with the fence.
                args: vec!["-u".into()],
                version,
            })
        })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_versions_and_comparison() {
        assert_eq!(declared_version("nodejs22.x"), "22");
        assert_eq!(declared_version("python3.12"), "3.12");
        assert_eq!(compare("22", "20.1.0"), "older");
        assert_eq!(compare("3.10", "3.11.7"), "newer");
        assert!(family("java21").is_none());
        assert!(resolve("java21").unwrap_err().contains("java21"));
    }
}
