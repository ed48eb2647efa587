//! cumulo's browser console: a versioned JSON API under `/_cumulo/api/v1/` and the pages that
//! use it under `/_cumulo/console/`, both served by `cumulo serve` beside the AWS endpoint.
//!
//! The API reads and changes state only through the typed operations the AWS APIs use (the
//! engine's methods for stacks, each service's ops), reached through the gateway's catalog: a
//! service is built when a console request first needs it, never before, so an unused console
//! costs `cumulo serve` nothing. The pages are HTML shells and small ES modules compiled into
//! the binary (`assets/`): no build step, no Node.js, no CDN.
//!
//! Safety: requests whose `Host` does not name this endpoint are refused ([`AllowedHosts`],
//! against DNS rebinding); state-changing calls pass a CSRF check ([`web::check_origin`]); with
//! `--verify-signatures` everything but the login and the static assets needs a session signed
//! in with one of the configured credentials ([`login`]), so state is never served to a caller
//! the AWS endpoint would refuse.

mod api;
mod drift;
mod dynamodb;
mod ecs;
mod edge;
mod elb;
mod events;
mod graph;
mod hosts;
mod iam;
mod kms;
mod lambda;
mod live;
mod login;
mod logs;
mod pages;
mod s3;
mod secrets;
mod sns;
mod sqs;
mod stacks;
mod stepfunctions;
mod vpc;
mod web;

pub use hosts::AllowedHosts;
pub use web::Body;

use cumulo_services::Gateway;
use cumulo_wire::AwsRequest;
use std::sync::Arc;

/// Where the API lives (its version is part of every path).
pub const API_PREFIX: &str = "/_cumulo/api/";
/// Where the pages live.
pub const CONSOLE_PREFIX: &str = "/_cumulo/console";

/// The console over one gateway's services.
pub struct Console {
    gateway: Arc<Gateway>,
    sessions: login::Sessions,
    hosts: AllowedHosts,
    streams: Arc<live::Streams>,
}

impl Console {
    pub fn new(gateway: Arc<Gateway>, hosts: AllowedHosts) -> Self {
        Console {
            gateway,
            sessions: login::Sessions::default(),
            hosts,
            streams: Arc::default(),
        }
    }

    /// Whether a request path is the console's rather than an AWS API's.
    pub fn serves(path: &str) -> bool {
        path.starts_with(API_PREFIX)
            || path == CONSOLE_PREFIX
            || path.starts_with("/_cumulo/console/")
    }

    /// Answers one console or API request (`serves` said yes).
    pub async fn handle(&self, req: AwsRequest) -> ::http::Response<Body> {
        // A request without Host is no browser's (HTTP/1.1 browsers always send it), so it
        // cannot be a rebinding page's.
        if let Some(host) = req.headers.get(::http::header::HOST) {
            let host = host.to_str().unwrap_or_default();
            if !self.hosts.allows(host) {
                return refuse_host(&req, host);
            }
        }
        if let Some(keys) = &self.gateway.config().signing_keys {
            if req.raw_path == login::LOGIN_PATH {
                return self.sessions.login(&req, keys);
            }
            let asset = req.raw_path.starts_with("/_cumulo/console/assets/");
            if !asset && !self.sessions.signed_in(&req) {
                return if req.raw_path.starts_with(API_PREFIX) {
                    web::unauthorized()
                } else {
                    pages::login()
                };
            }
        }
        if req.raw_path.starts_with(API_PREFIX) {
            api::handle(&self.gateway, &self.streams, req).await
        } else {
            pages::handle(&req)
        }
    }
}

/// The answer to a request whose `Host` is not this endpoint's: 403, JSON for the API, a page
/// for the console.
fn refuse_host(req: &AwsRequest, host: &str) -> ::http::Response<Body> {
    let message = format!(
        "Host {host} is not this console's; it answers on loopback names and the address it \
         is bound to (allow another name with cumulo serve --console-host NAME)"
    );
    if req.raw_path.starts_with(API_PREFIX) {
        web::error_response(&web::ApiError::new(
            ::http::StatusCode::FORBIDDEN,
            "ForbiddenHost",
            message,
        ))
    } else {
        pages::page_error(::http::StatusCode::FORBIDDEN, &message)
    }
}
