//! `cumulo serve`: the HTTP front of the gateway. It only moves bytes and enforces transport limits
//! (body and header size): every AWS decision, including how a refused request is answered, is made
//! by `cumulo_services::Gateway`.
//!
//! Startup order matters for "spawn to first answer": the socket is bound before anything else
//! (runtime, store; services are built on their first request), so clients can connect at once;
//! their requests wait in the accept backlog until the store is open, and the first answer is
//! already a real one.

use anyhow::Context;
use bytes::Bytes;
use clap::Args;
use cumulo_console::{AllowedHosts, Console};
use cumulo_services::{Config, Gateway, Refusal, SigningKeys};
use cumulo_store::{Durability, Store};
use cumulo_wire::AwsRequest;
use http_body_util::{BodyExt, Either, Full, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to bind; loopback by default so nothing is exposed unless asked. Without it,
    /// LocalStack's `GATEWAY_LISTEN` (`host:port`) is honoured.
    #[arg(long, env = "CUMULO_HOST")]
    host: Option<String>,
    /// Port to listen on (LocalStack's 4566 by default).
    #[arg(long, env = "CUMULO_PORT")]
    port: Option<u16>,
    /// Directory holding the persistent store.
    #[arg(long, env = "CUMULO_DATA_DIR", default_value = ".cumulo")]
    data_dir: PathBuf,
    /// Keep all state in memory (nothing survives a restart).
    #[arg(long, env = "CUMULO_IN_MEMORY", conflicts_with = "data_dir")]
    in_memory: bool,
    /// fsync every commit (survives power loss, not only process crashes).
    #[arg(long, env = "CUMULO_FSYNC")]
    fsync: bool,
    /// Region used when a request is not signed.
    #[arg(long, env = "CUMULO_DEFAULT_REGION", default_value = "us-east-1")]
    default_region: String,
    /// Reject requests without a valid SigV4 signature by one of the `--credentials` keys.
    #[arg(long, env = "CUMULO_VERIFY_SIGNATURES")]
    verify_signatures: bool,
    /// `ACCESS_KEY_ID:SECRET` pairs accepted by `--verify-signatures` (repeatable; the variable
    /// takes a comma-separated list). Defaults to `test:test`, LocalStack's conventional keys.
    #[arg(long = "credentials", env = "CUMULO_CREDENTIALS", value_delimiter = ',', value_parser = parse_credential)]
    credentials: Vec<(String, String)>,
    /// Largest request body accepted, in bytes; larger ones get the service's "too large" error.
    #[arg(long, env = "CUMULO_MAX_BODY_SIZE", default_value_t = 512 * 1024 * 1024)]
    max_body_size: u64,
    /// Largest request header section accepted, in bytes.
    #[arg(long, env = "CUMULO_MAX_HEADER_SIZE", default_value_t = 64 * 1024)]
    max_header_size: usize,
    /// Fail CloudFormation resources of types cumulo does not emulate instead of stubbing them.
    #[arg(long, env = "CUMULO_STRICT")]
    strict: bool,
    /// How long CloudFormation create/update/delete calls wait for the operation to finish, so
    /// an SDK waiter's first poll sees the terminal status (0: return at once).
    #[arg(long, env = "CUMULO_CFN_SYNC_WAIT_MS", default_value_t = 1000)]
    cfn_sync_wait_ms: u64,
    /// A host name (or `name:port`) the console and `/_cumulo/api/` answer under besides
    /// loopback names and the bound address (repeatable; the variable takes a comma-separated
    /// list): for a `--host 0.0.0.0` reached by a name. Other Host headers are refused there
    /// (DNS rebinding); AWS API routes answer any Host.
    #[arg(
        long = "console-host",
        env = "CUMULO_CONSOLE_HOSTS",
        value_delimiter = ','
    )]
    console_hosts: Vec<String>,
}

fn parse_credential(s: &str) -> Result<(String, String), String> {
    match s.split_once(':') {
        Some((id, secret)) if !id.is_empty() && !secret.is_empty() => {
            Ok((id.to_string(), secret.to_string()))
        }
        _ => Err(format!(
            "expected ACCESS_KEY_ID:SECRET, got '{}'",
            s.split(':').next().unwrap_or_default()
        )),
    }
}

/// Hyper's own read buffer: well above our header limit, so that headers between the two are
/// answered with an AWS-shaped error by us rather than a bare 431 from hyper.
const HTTP_BUFFER: usize = 1024 * 1024;

/// Where to listen: flags and `CUMULO_*` first, then LocalStack's `GATEWAY_LISTEN`
/// (`[host]:port[,...]`, first entry), then 127.0.0.1:4566.
fn listen_address(args: &ServeArgs, gateway_listen: Option<&str>) -> anyhow::Result<(String, u16)> {
    let (mut host, mut port) = ("127.0.0.1".to_string(), 4566);
    if let Some(first) = gateway_listen.and_then(|v| v.split(',').next()) {
        let first = first.trim();
        let (h, p) = first.rsplit_once(':').unwrap_or((first, ""));
        if !h.is_empty() {
            host = h.trim_matches(['[', ']']).to_string();
        }
        if !p.is_empty() {
            port = p
                .parse()
                .with_context(|| format!("GATEWAY_LISTEN has a bad port: '{first}'"))?;
        }
    }
    Ok((args.host.clone().unwrap_or(host), args.port.unwrap_or(port)))
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let gateway_listen = std::env::var("GATEWAY_LISTEN").ok();
    let (host, port) = listen_address(&args, gateway_listen.as_deref())?;
    let listener = std::net::TcpListener::bind((host.as_str(), port))
        .with_context(|| format!("binding {host}:{port}"))?;
    listener.set_nonblocking(true)?;
    // Several workers, not a current-thread runtime: services call the store synchronously, and
    // one commit (an fsync with --fsync) must not stall every other connection. Measured: the
    // two extra threads cost ~50 KiB of idle RSS (5.4 vs 5.5 MiB). More than four buys nothing
    // while the store serializes writes.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 4));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(args, listener))?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) struct Limits {
    pub body: u64,
    pub headers: usize,
    /// Host names the console answers besides loopback ones and the bound address.
    pub console_hosts: Vec<String>,
}

impl Default for Limits {
    /// `cumulo serve`'s defaults.
    fn default() -> Self {
        Limits {
            body: 512 * 1024 * 1024,
            headers: 64 * 1024,
            console_hosts: Vec::new(),
        }
    }
}

async fn serve(args: ServeArgs, listener: std::net::TcpListener) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let store = if args.in_memory {
        Store::in_memory()?
    } else {
        let durability = if args.fsync {
            Durability::Full
        } else {
            Durability::Process
        };
        Store::open(&args.data_dir, durability)?
    };
    let signing_keys = args.verify_signatures.then(|| {
        if args.credentials.is_empty() {
            SigningKeys::new([("test".to_string(), "test".to_string())])
        } else {
            SigningKeys::new(args.credentials.iter().cloned())
        }
    });
    let config = Config {
        default_region: args.default_region.clone(),
        signing_keys,
        endpoint_host: format!("localhost:{}", listener.local_addr()?.port()),
        ..Config::default()
    };
    let engine = cumulo_engine::EngineConfig {
        sync_wait: std::time::Duration::from_millis(args.cfn_sync_wait_ms),
        strict: args.strict,
        ..Default::default()
    };
    let gateway = Arc::new(Gateway::with_engine_config(Arc::new(store), config, engine));
    // Background work the store holds (pollers, running executions, schedules) resumes now,
    // not at its service's first request; off the accept loop, so start-up is not delayed.
    if let Some(catalog) = gateway.catalog().cloned() {
        tokio::task::spawn_blocking(move || {
            let woken = catalog.wake_pending();
            if !woken.is_empty() {
                eprintln!("cumulo: resumed background work of {}", woken.join(", "));
            }
        });
    }
    let limits = Arc::new(Limits {
        body: args.max_body_size,
        headers: args.max_header_size,
        console_hosts: args.console_hosts.clone(),
    });
    // One write, not one per formatted piece: stderr is unbuffered.
    let banner = format!(
        "cumulo: listening on http://{} ({}{})\n",
        listener.local_addr()?,
        if args.in_memory {
            "in memory".to_string()
        } else {
            format!("data in {}", args.data_dir.display())
        },
        if args.verify_signatures {
            ", verifying signatures"
        } else {
            ""
        }
    );
    let _ = std::io::Write::write_all(&mut std::io::stderr(), banner.as_bytes());
    accept_loop(listener, gateway, limits, shutdown_signal()).await;
    Ok(())
}

/// Serves `gateway` on `listener` until `stop` resolves: `cumulo serve`'s loop, and direct
/// deploy's ephemeral listener (see `target.rs`).
pub(crate) async fn accept_loop(
    listener: tokio::net::TcpListener,
    gateway: Arc<Gateway>,
    limits: Arc<Limits>,
    stop: impl std::future::Future<Output = ()>,
) {
    tokio::pin!(stop);
    // The console is a thin router over the gateway's catalog: it builds nothing until a
    // console request needs a service.
    let hosts = match listener.local_addr() {
        Ok(addr) => AllowedHosts::new(addr, &limits.console_hosts),
        Err(_) => AllowedHosts::new(([127, 0, 0, 1], 0).into(), &limits.console_hosts),
    };
    let console = Arc::new(Console::new(gateway.clone(), hosts));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut stop => return,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            // Out of file descriptors and the like: refuse this one, keep serving the rest.
            Err(e) => {
                eprintln!("cumulo: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let gateway = gateway.clone();
        let console = console.clone();
        let limits = limits.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req| {
                let gateway = gateway.clone();
                let console = console.clone();
                let limits = limits.clone();
                async move { Ok::<_, Infallible>(answer(&gateway, &console, &limits, req).await) }
            });
            // A client that hangs up mid-request is its own business; nothing to report.
            let _ = http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(Duration::from_secs(30))
                .max_buf_size(HTTP_BUFFER)
                .max_headers(1000)
                .serve_connection(TokioIo::new(stream), svc)
                .with_upgrades()
                .await;
        });
    }
}

/// Resolves on Ctrl-C or SIGTERM. Every acknowledged write is already committed, so stopping
/// needs no flushing. The handlers are installed when this is called, not when the future is
/// first polled: the accept loop may serve a connection before it polls the shutdown branch, and
/// a SIGTERM arriving then must still be a clean shutdown rather than the default kill.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{Signal, SignalKind, signal};
        async fn recv(signal: Option<Signal>) {
            match signal {
                Some(mut s) => {
                    s.recv().await;
                }
                None => std::future::pending::<()>().await,
            }
        }
        let term = signal(SignalKind::terminate()).ok();
        let int = signal(SignalKind::interrupt()).ok();
        async move {
            tokio::select! {
                _ = recv(term) => {}
                _ = recv(int) => {}
            }
        }
    }
    #[cfg(not(unix))]
    {
        async {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

/// An AWS answer (whole) or a console one (whole, or a stream of server-sent events).
type Answer = hyper::Response<Either<Full<Bytes>, cumulo_console::Body>>;

async fn answer(
    gateway: &Gateway,
    console: &Console,
    limits: &Limits,
    mut req: hyper::Request<Incoming>,
) -> Answer {
    // A WebSocket upgrade (API Gateway's WebSocket APIs): the socket is taken over after the
    // 101 answer, if the gateway gives one.
    let wants_upgrade = req
        .headers()
        .get(http::header::UPGRADE)
        .is_some_and(|u| u.as_bytes().eq_ignore_ascii_case(b"websocket"));
    let on_upgrade = wants_upgrade.then(|| hyper::upgrade::on(&mut req));
    let (parts, body) = req.into_parts();
    let host = parts
        .headers
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost:4566")
        .to_string();
    let raw_query = parts.uri.query().unwrap_or("").to_string();
    let mut aws = AwsRequest {
        method: parts.method,
        raw_path: parts.uri.path().to_string(),
        query: cumulo_wire::query::parse_form(raw_query.as_bytes()),
        raw_query,
        headers: parts.headers,
        body: Bytes::new(),
        request_id: cumulo_wire::ids::request_id(),
        region: String::new(),
        account_id: String::new(),
        access_key: None,
        host,
    };
    let header_size: usize = aws
        .headers
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    let refusal = if header_size > limits.headers {
        Some(Refusal::HeadersTooLarge {
            size: header_size,
            limit: limits.headers,
        })
    } else if declared_length(&aws.headers).is_some_and(|n| n > limits.body) {
        // Refused before reading a byte of it.
        Some(Refusal::BodyTooLarge { limit: limits.body })
    } else {
        let limit = usize::try_from(limits.body).unwrap_or(usize::MAX);
        match Limited::new(body, limit).collect().await {
            Ok(b) => {
                aws.body = b.to_bytes();
                None
            }
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                Some(Refusal::BodyTooLarge { limit: limits.body })
            }
            Err(_) => Some(Refusal::UnreadableBody),
        }
    };
    let resp = match refusal {
        Some(r) => gateway.refuse(aws, r),
        None if Console::serves(&aws.raw_path) => {
            return console.handle(aws).await.map(Either::Right);
        }
        None => {
            let upgrade = match on_upgrade {
                Some(on_upgrade) => gateway.websocket(&aws).await.map(|u| (on_upgrade, u)),
                None => None,
            };
            match upgrade {
                Some((on_upgrade, Ok((resp, session)))) => {
                    tokio::spawn(async move {
                        match on_upgrade.await {
                            Ok(upgraded) => session.run(TokioIo::new(upgraded)).await,
                            Err(_) => session.abandon().await,
                        }
                    });
                    resp
                }
                Some((_, Err(resp))) => resp,
                None => gateway.handle(aws).await,
            }
        }
    };
    let mut out = hyper::Response::new(Either::Left(Full::new(resp.body)));
    *out.status_mut() = resp.status;
    *out.headers_mut() = resp.headers;
    out
}

fn declared_length(headers: &http::HeaderMap) -> Option<u64> {
    headers
        .get(http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn args(argv: &[&str]) -> ServeArgs {
        Cli::parse_from(std::iter::once("serve").chain(argv.iter().copied())).serve
    }

    #[test]
    fn listen_address_precedence() {
        let a = args(&[]);
        assert_eq!(
            listen_address(&a, None).unwrap(),
            ("127.0.0.1".into(), 4566)
        );
        assert_eq!(
            listen_address(&a, Some("0.0.0.0:4567,:443")).unwrap(),
            ("0.0.0.0".into(), 4567)
        );
        assert_eq!(
            listen_address(&a, Some(":5000")).unwrap(),
            ("127.0.0.1".into(), 5000)
        );
        assert_eq!(
            listen_address(&a, Some("[::1]:5001")).unwrap(),
            ("::1".into(), 5001)
        );
        assert!(listen_address(&a, Some("host:port")).is_err());
        let a = args(&["--port", "9", "--host", "::1"]);
        assert_eq!(
            listen_address(&a, Some("0.0.0.0:4567")).unwrap(),
            ("::1".into(), 9)
        );
    }

    #[test]
    fn credentials_are_id_colon_secret() {
        assert_eq!(
            parse_credential("AKID:se:cret").unwrap(),
            ("AKID".into(), "se:cret".into())
        );
        assert!(parse_credential("nocolon").is_err());
        assert!(parse_credential(":secret").is_err());
        let a = args(&["--credentials", "a:b", "--credentials", "c:d"]);
        assert_eq!(a.credentials.len(), 2);
    }
}
