//! Running functions: execution environments (local processes) pooled per function version and
//! configuration, reused warm, spawned in parallel under concurrency, killed on timeout, and
//! retired when the function changes.

pub mod api;
mod env;
pub mod interpreters;
mod shims;

use super::logs::LogSink;
use super::model::VersionConfig;
use api::{Job, Outcome};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use bytes::Bytes;
use cumulo_wire::AwsError;
use env::{Env, Spawn};
use http::StatusCode;
use interpreters::Family;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// Environment variables passed from cumulo's environment to every function process.
const NETWORK_ENV: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "NODE_EXTRA_CA_CERTS",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
];

/// An idle environment unused this long is stopped (AWS recycles idle ones after minutes).
const IDLE_LIMIT: Duration = Duration::from_secs(300);

/// Everything one invocation needs to know about the function.
#[derive(Debug, Clone)]
pub struct Launch {
    pub region: String,
    pub account_id: String,
    pub function_name: String,
    pub version: String,
    pub config: VersionConfig,
    pub code_dir: PathBuf,
    /// Unpacked layers, in the function's order.
    pub layer_dirs: Vec<PathBuf>,
    /// `host:port` clients reached cumulo by: where the function's SDK calls and custom
    /// resource responses go.
    pub endpoint_host: String,
    pub invoked_arn: String,
}

/// The result of a synchronous invocation.
#[derive(Debug, Clone)]
pub struct InvokeOutput {
    pub payload: Bytes,
    /// `Unhandled` when the function failed (X-Amz-Function-Error).
    pub function_error: Option<String>,
    /// The invocation's log, as LogType=Tail returns it (last 4 KB, base64).
    pub log_tail: String,
}

pub struct Executor {
    base_dir: PathBuf,
    shims: Mutex<Option<PathBuf>>,
    idle: Mutex<HashMap<String, Vec<Arc<Env>>>>,
    logs: Arc<LogSink>,
}

fn pool_key(l: &Launch) -> String {
    format!(
        "{}\n{}\n{}\n{}",
        l.region, l.function_name, l.version, l.config.revision_id
    )
}

fn now_iso() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

impl Executor {
    pub fn new(base_dir: PathBuf, logs: Arc<LogSink>) -> Self {
        Executor {
            base_dir,
            shims: Mutex::new(None),
            idle: Mutex::new(HashMap::new()),
            logs,
        }
    }

    /// Stops the idle environments of a function (it was updated or deleted): the next
    /// invocation starts from the new code and configuration, as on AWS.
    pub fn retire(&self, region: &str, function_name: &str) {
        let prefix = format!("{region}\n{function_name}\n");
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        idle.retain(|k, envs| {
            if k.starts_with(&prefix) {
                envs.iter().for_each(|e| e.kill());
                false
            } else {
                true
            }
        });
    }

    fn take_idle(&self, key: &str) -> Option<Arc<Env>> {
        let mut idle = self.idle.lock().unwrap_or_else(PoisonError::into_inner);
        let envs = idle.get_mut(key)?;
        while let Some(env) = envs.pop() {
            let fresh = env
                .last_used
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .elapsed()
                < IDLE_LIMIT;
            if fresh && !env.is_dead() {
                return Some(env);
            }
            env.kill();
        }
        None
    }

    fn put_idle(&self, key: String, env: Arc<Env>) {
        *env.last_used.lock().unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key)
            .or_default()
            .push(env);
    }

    fn shims_dir(&self) -> Result<PathBuf, AwsError> {
        let mut s = self.shims.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(d) = &*s {
            return Ok(d.clone());
        }
        let dir = shims::install(&self.base_dir).map_err(|e| {
            AwsError::internal(format!(
                "cumulo: cannot write the Lambda runtime shims: {e}"
            ))
        })?;
        *s = Some(dir.clone());
        Ok(dir)
    }

    /// Where the Node.js functions' AWS SDK v3 packages live (see lambda-runtime/README.md).
    fn node_sdk_dir(&self) -> PathBuf {
        std::env::var_os("CUMULO_NODE_SDK_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| self.base_dir.join("node-sdk"))
    }

    async fn spawn(&self, l: &Launch) -> Result<(Arc<Env>, Option<String>), AwsError> {
        let (interpreter, note) = interpreters::resolve(&l.config.runtime).map_err(|msg| {
            AwsError::new(StatusCode::BAD_GATEWAY, "InvalidRuntimeException", msg)
        })?;
        let shims = self.shims_dir()?;
        let fam = interpreters::family(&l.config.runtime);
        let stream_name = format!(
            "{}/[{}]{}",
            chrono::Utc::now().format("%Y/%m/%d"),
            l.version,
            uuid::Uuid::new_v4().simple()
        );
        let (host, port) = l
            .endpoint_host
            .rsplit_once(':')
            .unwrap_or((l.endpoint_host.as_str(), "80"));
        let mut envs: Vec<(String, String)> = vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ("LANG".into(), "en_US.UTF-8".into()),
            ("TZ".into(), ":UTC".into()),
            ("HOME".into(), std::env::var("HOME").unwrap_or_default()),
            ("LAMBDA_TASK_ROOT".into(), l.code_dir.display().to_string()),
            ("LAMBDA_RUNTIME_DIR".into(), shims.display().to_string()),
            ("_HANDLER".into(), l.config.handler.clone()),
            ("AWS_REGION".into(), l.region.clone()),
            ("AWS_DEFAULT_REGION".into(), l.region.clone()),
            (
                "AWS_EXECUTION_ENV".into(),
                format!("AWS_Lambda_{}", l.config.runtime),
            ),
            ("AWS_LAMBDA_FUNCTION_NAME".into(), l.function_name.clone()),
            ("AWS_LAMBDA_FUNCTION_VERSION".into(), l.version.clone()),
            (
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE".into(),
                l.config.memory_size.to_string(),
            ),
            (
                "AWS_LAMBDA_LOG_GROUP_NAME".into(),
                l.config.logging.group(&l.function_name),
            ),
            ("AWS_LAMBDA_LOG_STREAM_NAME".into(), stream_name.clone()),
            ("AWS_LAMBDA_INITIALIZATION_TYPE".into(), "on-demand".into()),
            // The emulator's conventional credentials; SDK calls come back to cumulo.
            ("AWS_ACCESS_KEY_ID".into(), "test".into()),
            ("AWS_SECRET_ACCESS_KEY".into(), "test".into()),
            ("AWS_SESSION_TOKEN".into(), "test".into()),
            (
                "AWS_ENDPOINT_URL".into(),
                format!("http://{}", l.endpoint_host),
            ),
            ("CUMULO_ENDPOINT_HOSTS".into(), endpoint_hosts(host)),
            // botocore (python functions) then calls StartSyncExecution and DiscoverInstances
            // on the endpoint's own host, not on a `sync-`/`data-` prefixed one that does not
            // resolve (node functions' resolver shim maps those names instead).
            ("AWS_DISABLE_HOST_PREFIX_INJECTION".into(), "true".into()),
            ("CUMULO_ENDPOINT_PORT".into(), port.to_string()),
        ];
        // The JSON log format and its application level, as AWS's runtimes read them.
        if l.config.logging.is_json() {
            envs.push(("AWS_LAMBDA_LOG_FORMAT".into(), "JSON".into()));
            if let Some(level) = &l.config.logging.application_log_level {
                envs.push(("AWS_LAMBDA_LOG_LEVEL".into(), level.clone()));
            }
        }
        // The machine's network settings (proxies, extra CA certificates) reach functions, so a
        // handler's outbound calls (and the on-demand SDK install) work as cumulo's own do.
        for (k, v) in std::env::vars() {
            let network = NETWORK_ENV.contains(&k.as_str()) || k.starts_with("npm_config_");
            if network && !envs.iter().any(|(key, _)| key == &k) {
                envs.push((k, v));
            }
        }
        let script = match fam {
            Some(Family::Node) => {
                let sdk = self.node_sdk_dir();
                let mut paths: Vec<String> = l
                    .layer_dirs
                    .iter()
                    .map(|d| d.join("nodejs/node_modules").display().to_string())
                    .collect();
                paths.push(shims.join("node/node_modules").display().to_string());
                paths.push(sdk.join("node_modules").display().to_string());
                envs.push(("NODE_PATH".into(), paths.join(":")));
                envs.push(("CUMULO_NODE_SDK_DIR".into(), sdk.display().to_string()));
                if let Ok(v) = std::env::var("CUMULO_NODE_SDK_INSTALL") {
                    envs.push(("CUMULO_NODE_SDK_INSTALL".into(), v));
                }
                shims.join("node/bootstrap.js")
            }
            _ => {
                let mut paths: Vec<String> = l
                    .layer_dirs
                    .iter()
                    .map(|d| d.join("python").display().to_string())
                    .collect();
                paths.push(shims.join("python").display().to_string());
                envs.push(("PYTHONPATH".into(), paths.join(":")));
                shims.join("python/bootstrap.py")
            }
        };
        // The function's own variables win (the reserved ones were refused when set).
        for (k, v) in &l.config.environment {
            envs.retain(|(key, _)| key != k);
            envs.push((k.clone(), v.clone()));
        }
        let spawn = Spawn {
            interpreter,
            script,
            code_dir: l.code_dir.clone(),
            env: envs,
        };
        let env = Env::start(spawn, stream_name).await.map_err(|e| {
            AwsError::new(
                StatusCode::BAD_GATEWAY,
                "ServiceException",
                format!(
                    "cumulo: could not start the {} runtime: {e}",
                    l.config.runtime
                ),
            )
        })?;
        Ok((env, note))
    }

    /// Runs one invocation to its end (response, error, crash or timeout).
    pub async fn invoke(&self, l: &Launch, payload: Bytes) -> Result<InvokeOutput, AwsError> {
        let key = pool_key(l);
        let (env, init_note) = match self.take_idle(&key) {
            Some(env) => (env, None),
            None => {
                let (env, note) = self.spawn(l).await?;
                (env, Some(note))
            }
        };
        let request_id = uuid::Uuid::new_v4().to_string();
        let timeout = Duration::from_secs(l.config.timeout.max(1) as u64);
        let deadline_ms = chrono::Utc::now().timestamp_millis() + timeout.as_millis() as i64;
        let (reply_tx, reply_rx) = oneshot::channel();
        let started = Instant::now();
        let mut log: Vec<String> = Vec::new();
        if let Some(note) = init_note.flatten() {
            log.push(note);
        }
        if !env.warm.load(std::sync::atomic::Ordering::Relaxed) {
            // Lines the runtime printed while starting belong to the first invocation.
            log.push(format!(
                "INIT_START Runtime Version: {}\tRuntime Version ARN: arn:aws:lambda:{}::runtime:cumulo-local",
                l.config.runtime, l.region
            ));
        }
        log.push(format!(
            "START RequestId: {request_id} Version: {}",
            l.version
        ));
        let job = Job {
            request_id: request_id.clone(),
            payload,
            deadline_ms,
            invoked_arn: l.invoked_arn.clone(),
            reply: reply_tx,
        };
        let first = !env.warm.swap(true, std::sync::atomic::Ordering::Relaxed);
        let sent = env.jobs.send(job).await.is_ok();
        enum End {
            Done(Outcome),
            Exited(String),
            TimedOut,
        }
        let end = if !sent {
            End::Exited(env.exited().await)
        } else {
            tokio::select! {
                r = reply_rx => match r {
                    Ok(o) => End::Done(o),
                    Err(_) => End::Exited(env.exited().await),
                },
                status = env.exited() => End::Exited(status),
                _ = tokio::time::sleep(timeout) => End::TimedOut,
            }
        };
        let tag = if first && matches!(end, End::Exited(_)) {
            "init".to_string()
        } else {
            request_id.clone()
        };
        if !matches!(end, End::TimedOut) {
            env.await_fence(&tag).await;
        }
        log.extend(env.take_lines());
        // A cold start's init (process start until the runtime asked for the event) is
        // reported apart from the invocation's duration, as AWS does.
        let picked = env.api.picked().filter(|p| *p >= started);
        let init_ms = picked
            .filter(|_| first)
            .map(|p| p.duration_since(env.started).as_secs_f64() * 1000.0);
        let duration_ms = picked.unwrap_or(started).elapsed().as_secs_f64() * 1000.0;
        let (payload, function_error, status) = match end {
            End::Done(Outcome::Response(body)) => (body, None, None),
            End::Done(Outcome::Error { body, .. }) => (body, Some("Unhandled"), None),
            End::Exited(exit) => {
                let body = match env.api.init_error() {
                    Some(Outcome::Error { body, .. }) => body,
                    _ => {
                        let msg = format!(
                            "RequestId: {request_id} Error: Runtime exited with error: {exit}"
                        );
                        log.push(msg.clone());
                        Bytes::from(
                            serde_json::json!({"errorType": "Runtime.ExitError", "errorMessage": msg})
                                .to_string(),
                        )
                    }
                };
                (body, Some("Unhandled"), Some("error"))
            }
            End::TimedOut => {
                env.kill();
                let secs = format!("{:.2}", timeout.as_secs_f64());
                log.push(format!(
                    "{} {request_id} Task timed out after {secs} seconds",
                    now_iso()
                ));
                let body = serde_json::json!({
                    "errorType": "Sandbox.Timedout",
                    "errorMessage": format!("RequestId: {request_id} Error: Task timed out after {secs} seconds"),
                });
                (
                    Bytes::from(body.to_string()),
                    Some("Unhandled"),
                    Some("timeout"),
                )
            }
        };
        let mut report = format!(
            "REPORT RequestId: {request_id}\tDuration: {duration_ms:.2} ms\tBilled Duration: {} ms\tMemory Size: {} MB\tMax Memory Used: {} MB",
            duration_ms.ceil() as u64,
            l.config.memory_size,
            env.max_memory_mb().unwrap_or(0)
        );
        if let Some(init) = init_ms {
            report.push_str(&format!("\tInit Duration: {init:.2} ms"));
        }
        if let Some(s) = status {
            report.push_str(&format!("\tStatus: {s}"));
        }
        log.push(format!("END RequestId: {request_id}"));
        log.push(report);
        self.logs.write(
            &l.region,
            &l.config.logging.group(&l.function_name),
            &env.stream_name,
            &log,
        );
        if status.is_none() && !env.is_dead() {
            self.put_idle(key, env);
        } else {
            env.kill();
        }
        Ok(InvokeOutput {
            payload,
            function_error: function_error.map(str::to_string),
            log_tail: tail(&log),
        })
    }
}

/// The names cumulo is reached by on this host: the one the client used, and the loopback
/// names that mean the same machine.
fn endpoint_hosts(host: &str) -> String {
    let mut hosts = vec![host];
    for h in ["localhost", "127.0.0.1"] {
        if h != host {
            hosts.push(h);
        }
    }
    hosts.join(",")
}

/// LogType=Tail: the last 4 KB of the invocation's log, base64.
fn tail(lines: &[String]) -> String {
    let text = lines.join("\n") + "\n";
    let bytes = text.as_bytes();
    let start = bytes.len().saturating_sub(4096);
    B64.encode(&bytes[start..])
}
