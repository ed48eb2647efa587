//! The HTTP client of HTTP and HTTP_PROXY integrations: one HTTP/1.1 request to a plain
//! `http://` endpoint (local servers; cumulo makes no TLS connections).

use bytes::Bytes;
use http::{HeaderMap, Method, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use std::time::Duration;

pub struct Reply {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// Sends one request; errors are text for the 500/504 the data plane answers.
pub async fn send(
    method: Method,
    url: &str,
    headers: &HeaderMap,
    body: Bytes,
    timeout: Duration,
) -> Result<Reply, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("invalid URL {url}: {e}"))?;
    if uri.scheme_str() != Some("http") {
        return Err(format!(
            "cumulo reaches only http:// integration endpoints, not {url}"
        ));
    }
    let host = uri.host().unwrap_or("localhost").to_string();
    let port = uri.port_u16().unwrap_or(80);
    let work = async {
        let stream = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| format!("cannot connect to {host}:{port}: {e}"))?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| e.to_string())?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let mut req = http::Request::builder().method(method).uri(path);
        for (k, v) in headers {
            if k != http::header::HOST && k != http::header::CONTENT_LENGTH {
                req = req.header(k, v);
            }
        }
        let authority = uri.authority().map_or(host.clone(), |a| a.to_string());
        let req = req
            .header(http::header::HOST, authority)
            .body(Full::new(body))
            .map_err(|e| e.to_string())?;
        let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
        let (parts, body) = resp.into_parts();
        let body = body.collect().await.map_err(|e| e.to_string())?.to_bytes();
        Ok(Reply {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    };
    tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| "timed out".to_string())?
}
