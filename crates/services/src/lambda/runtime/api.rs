//! cumulo's Lambda Runtime API: the HTTP protocol AWS's runtimes speak to their sandbox
//! (`/2018-06-01/runtime/invocation/next`, `/{id}/response`, `/{id}/error`, `/init/error`).
//! Each execution environment gets its own server on a loopback port (its
//! `AWS_LAMBDA_RUNTIME_API`), so an environment only ever sees its own invocations, as on AWS.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{mpsc, oneshot};

/// One invocation handed to the environment.
pub struct Job {
    pub request_id: String,
    pub payload: Bytes,
    pub deadline_ms: i64,
    pub invoked_arn: String,
    pub reply: oneshot::Sender<Outcome>,
}

/// How an invocation ended, as the runtime reported it.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Response(Bytes),
    Error {
        body: Bytes,
        error_type: Option<String>,
    },
}

/// The state one environment's server shares with the invoker.
pub struct RuntimeApi {
    jobs: tokio::sync::Mutex<mpsc::Receiver<Job>>,
    current: Mutex<Option<(String, oneshot::Sender<Outcome>)>>,
    init_error: Mutex<Option<Outcome>>,
    /// When the runtime last took an invocation: the end of init for the first one.
    picked: Mutex<Option<std::time::Instant>>,
}

impl RuntimeApi {
    pub fn new(jobs: mpsc::Receiver<Job>) -> Arc<Self> {
        Arc::new(RuntimeApi {
            jobs: tokio::sync::Mutex::new(jobs),
            current: Mutex::new(None),
            init_error: Mutex::new(None),
            picked: Mutex::new(None),
        })
    }

    /// The init error the runtime reported, if it reported one.
    pub fn init_error(&self) -> Option<Outcome> {
        self.init_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// When the runtime took its latest invocation.
    pub fn picked(&self) -> Option<std::time::Instant> {
        *self.picked.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn complete(&self, id: &str, outcome: Outcome) -> bool {
        let mut cur = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        match cur.take() {
            Some((cur_id, reply)) if cur_id == id => {
                let _ = reply.send(outcome);
                true
            }
            other => {
                *cur = other;
                false
            }
        }
    }
}

/// Serves `api` on a fresh loopback port; the task ends when `shutdown` fires.
pub async fn serve(
    api: Arc<RuntimeApi>,
    mut shutdown: oneshot::Receiver<()>,
) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move {
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((s, _)) => s,
                    Err(_) => continue,
                },
                _ = &mut shutdown => return,
            };
            let api = api.clone();
            tokio::spawn(async move {
                let svc = service_fn(move |req| {
                    let api = api.clone();
                    async move { Ok::<_, Infallible>(route(&api, req).await) }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc)
                    .await;
            });
        }
    });
    Ok(addr)
}

fn reply(status: u16, body: impl Into<Bytes>) -> hyper::Response<Full<Bytes>> {
    let mut r = hyper::Response::new(Full::new(body.into()));
    *r.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::OK);
    r.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    r
}

fn error_reply(status: u16, error_type: &str, message: &str) -> hyper::Response<Full<Bytes>> {
    reply(
        status,
        serde_json::json!({"errorMessage": message, "errorType": error_type}).to_string(),
    )
}

async fn route(api: &RuntimeApi, req: hyper::Request<Incoming>) -> hyper::Response<Full<Bytes>> {
    let path = req.uri().path().to_string();
    let method = req.method().clone();
    let error_type = req
        .headers()
        .get("lambda-runtime-function-error-type")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return error_reply(400, "InvalidRequest", "unreadable body"),
    };
    let Some(rest) = path.strip_prefix("/2018-06-01/runtime/") else {
        return error_reply(404, "NotFound", "not a Runtime API path");
    };
    match (method.as_str(), rest) {
        ("GET", "invocation/next") => next(api).await,
        ("POST", "init/error") => {
            *api.init_error
                .lock()
                .unwrap_or_else(PoisonError::into_inner) =
                Some(Outcome::Error { body, error_type });
            reply(202, r#"{"status":"OK"}"#)
        }
        ("POST", r) => {
            let Some((id, what)) = r
                .strip_prefix("invocation/")
                .and_then(|s| s.rsplit_once('/'))
            else {
                return error_reply(404, "NotFound", "not a Runtime API path");
            };
            let outcome = match what {
                "response" => Outcome::Response(body),
                "error" => Outcome::Error { body, error_type },
                _ => return error_reply(404, "NotFound", "not a Runtime API path"),
            };
            if api.complete(id, outcome) {
                reply(202, r#"{"status":"OK"}"#)
            } else {
                error_reply(
                    400,
                    "InvalidRequestID",
                    &format!("Invalid request ID: {id}"),
                )
            }
        }
        _ => error_reply(405, "MethodNotAllowed", "method not allowed"),
    }
}

async fn next(api: &RuntimeApi) -> hyper::Response<Full<Bytes>> {
    let job = {
        let mut jobs = api.jobs.lock().await;
        jobs.recv().await
    };
    let Some(job) = job else {
        return error_reply(500, "ShuttingDown", "the environment is shutting down");
    };
    let mut r = reply(200, job.payload);
    let headers = r.headers_mut();
    let mut set = |name: &'static str, value: &str| {
        if let Ok(v) = http::HeaderValue::from_str(value) {
            headers.insert(name, v);
        }
    };
    set("lambda-runtime-aws-request-id", &job.request_id);
    set("lambda-runtime-deadline-ms", &job.deadline_ms.to_string());
    set("lambda-runtime-invoked-function-arn", &job.invoked_arn);
    set(
        "lambda-runtime-trace-id",
        &format!(
            "Root=1-{:08x}-{};Sampled=0",
            chrono::Utc::now().timestamp(),
            &uuid::Uuid::new_v4().simple().to_string()[..24]
        ),
    );
    *api.picked.lock().unwrap_or_else(PoisonError::into_inner) = Some(std::time::Instant::now());
    *api.current.lock().unwrap_or_else(PoisonError::into_inner) = Some((job.request_id, job.reply));
    r
}
