//! One execution environment: a local `node` or `python3` process running cumulo's bootstrap
//! shim against its own Runtime API server, with its output captured line by line.
//!
//! The shims print a fence line (`\x1ecumulo-fence <request id>`) before they report an
//! invocation's result, so the invoker knows every line the handler wrote has been read.

use super::api::{Job, RuntimeApi};
use super::interpreters::Interpreter;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{mpsc, oneshot, watch};

const FENCE: &str = "\u{1e}cumulo-fence ";

/// Everything needed to start an environment.
pub struct Spawn {
    pub interpreter: Interpreter,
    pub script: PathBuf,
    pub code_dir: PathBuf,
    pub env: Vec<(String, String)>,
}

pub struct Env {
    pub api: Arc<RuntimeApi>,
    pub jobs: mpsc::Sender<Job>,
    lines: Arc<Mutex<Vec<String>>>,
    fence: watch::Receiver<String>,
    exited: watch::Receiver<Option<String>>,
    kill: Mutex<Option<oneshot::Sender<()>>>,
    pub pid: Option<u32>,
    pub stream_name: String,
    pub started: Instant,
    /// Whether an invocation has run here (the first reports the init duration).
    pub warm: std::sync::atomic::AtomicBool,
    pub last_used: Mutex<Instant>,
}

impl Env {
    pub async fn start(spawn: Spawn, stream_name: String) -> std::io::Result<Arc<Env>> {
        let (jobs_tx, jobs_rx) = mpsc::channel(1);
        let api = RuntimeApi::new(jobs_rx);
        let (stop_server, server_stopped) = oneshot::channel();
        let addr = super::api::serve(api.clone(), server_stopped).await?;
        let mut cmd = tokio::process::Command::new(&spawn.interpreter.path);
        cmd.args(&spawn.interpreter.args)
            .arg(&spawn.script)
            .current_dir(&spawn.code_dir)
            .env_clear()
            .envs(spawn.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .env("AWS_LAMBDA_RUNTIME_API", addr.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let pid = child.id();
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (fence_tx, fence_rx) = watch::channel(String::new());
        if let Some(out) = child.stdout.take() {
            let lines = lines.clone();
            tokio::spawn(async move {
                let mut reader = BufReader::new(out).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    if let Some(tag) = line.strip_prefix(FENCE) {
                        let _ = fence_tx.send(tag.to_string());
                    } else {
                        push(&lines, line);
                    }
                }
            });
        }
        if let Some(err) = child.stderr.take() {
            let lines = lines.clone();
            tokio::spawn(async move {
                let mut reader = BufReader::new(err).lines();
                while let Ok(Some(line)) = reader.next_line().await {
                    push(&lines, line);
                }
            });
        }
        let (exit_tx, exit_rx) = watch::channel(None);
        let (kill_tx, kill_rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let status = tokio::select! {
                s = child.wait() => s.map(|s| s.to_string()).unwrap_or_else(|e| e.to_string()),
                _ = kill_rx => {
                    let _ = child.kill().await;
                    "killed".to_string()
                }
            };
            let _ = exit_tx.send(Some(status));
            let _ = stop_server.send(());
        });
        Ok(Arc::new(Env {
            api,
            jobs: jobs_tx,
            lines,
            fence: fence_rx,
            exited: exit_rx,
            kill: Mutex::new(Some(kill_tx)),
            pid,
            stream_name,
            started: Instant::now(),
            warm: std::sync::atomic::AtomicBool::new(false),
            last_used: Mutex::new(Instant::now()),
        }))
    }

    /// Whether the process has ended.
    pub fn is_dead(&self) -> bool {
        self.exited.borrow().is_some()
    }

    /// Resolves with the exit description once the process has ended.
    pub async fn exited(&self) -> String {
        let mut rx = self.exited.clone();
        match rx.wait_for(Option::is_some).await {
            Ok(v) => v.clone().unwrap_or_default(),
            Err(_) => "exited".to_string(),
        }
    }

    /// Waits (briefly) until the shim's fence for `tag` has been read, so all of the
    /// invocation's output is in the buffer.
    pub async fn await_fence(&self, tag: &str) {
        let mut rx = self.fence.clone();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(1), rx.wait_for(|t| t == tag))
            .await;
    }

    /// The lines captured since the last call.
    pub fn take_lines(&self) -> Vec<String> {
        std::mem::take(&mut *self.lines.lock().unwrap_or_else(PoisonError::into_inner))
    }

    pub fn kill(&self) {
        if let Some(k) = self
            .kill
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            let _ = k.send(());
        }
    }

    /// The process's peak resident memory in MB (Linux `/proc`), for the REPORT line.
    pub fn max_memory_mb(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid?)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb.div_ceil(1024))
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Output is capped per invocation: a handler printing in a loop must not exhaust memory.
const MAX_LINES: usize = 10_000;

fn push(lines: &Mutex<Vec<String>>, line: String) {
    let mut l = lines.lock().unwrap_or_else(PoisonError::into_inner);
    if l.len() < MAX_LINES {
        l.push(line);
    }
}
