//! `cumulo serve`: the HTTP front of the gateway. It only moves bytes: every AWS decision is made by
//! `cumulo_services::Gateway`.

use anyhow::Context;
use bytes::Bytes;
use clap::Args;
use cumulo_services::{Config, Gateway};
use cumulo_store::{Durability, Store};
use cumulo_wire::AwsRequest;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Address to bind; loopback by default so nothing is exposed unless asked.
    #[arg(long, env = "CUMULO_HOST", default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on (LocalStack's 4566 by default).
    #[arg(long, env = "CUMULO_PORT", default_value_t = 4566)]
    port: u16,
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
}

pub fn run(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(args))?;
    Ok(ExitCode::SUCCESS)
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
        .await
        .with_context(|| format!("binding {}:{}", args.host, args.port))?;
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
    let config = Config {
        default_region: args.default_region.clone(),
        ..Config::default()
    };
    let gateway = Arc::new(Gateway::new(Arc::new(store), config)?);
    eprintln!(
        "cumulo: listening on http://{} ({})",
        listener.local_addr()?,
        if args.in_memory {
            "in memory".to_string()
        } else {
            format!("data in {}", args.data_dir.display())
        }
    );
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let gateway = gateway.clone();
        tokio::spawn(async move {
            let svc = service_fn(move |req| {
                let gateway = gateway.clone();
                async move { Ok::<_, Infallible>(answer(&gateway, req).await) }
            });
            // A client that hangs up mid-request is its own business; nothing to report.
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

async fn answer(gateway: &Gateway, req: hyper::Request<Incoming>) -> hyper::Response<Full<Bytes>> {
    let (parts, body) = req.into_parts();
    let request_id = cumulo_wire::ids::request_id();
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let host = parts
        .headers
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost:4566")
        .to_string();
    let raw_query = parts.uri.query().unwrap_or("").to_string();
    let aws = AwsRequest {
        method: parts.method,
        raw_path: parts.uri.path().to_string(),
        query: cumulo_wire::query::parse_form(raw_query.as_bytes()),
        raw_query,
        headers: parts.headers,
        body,
        request_id,
        region: String::new(),
        account_id: String::new(),
        access_key: None,
        host,
    };
    let resp = gateway.handle(aws).await;
    let mut out = hyper::Response::new(Full::new(resp.body));
    *out.status_mut() = resp.status;
    *out.headers_mut() = resp.headers;
    out
}
