//! Best-effort HTTP POSTs to `http` subscription endpoints: one attempt, five-second timeout,
//! never blocking the request that caused it (the POST runs on the async runtime in the
//! background). Plain `http://` only; `https` endpoints are not contacted (see the module docs
//! of `sns`).

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const TIMEOUT: Duration = Duration::from_secs(5);

/// `http://host[:port]/path?query` → (`host:port`, `host[:port]`, `/path?query`).
fn split_url(url: &str) -> Option<(String, String, String)> {
    let rest = url.strip_prefix("http://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let connect = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
    {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    Some((connect, authority.to_string(), path.to_string()))
}

/// Sends the POST in the background; returns at once. Without an async runtime (an in-process
/// caller outside the server) nothing is sent.
pub fn post(url: &str, headers: Vec<(String, String)>, body: String) {
    let Some((connect, host, path)) = split_url(url) else {
        return;
    };
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (k, v) in headers {
        // Header values come from ARNs and ids cumulo made; line breaks are dropped regardless.
        let v: String = v.chars().filter(|c| *c != '\r' && *c != '\n').collect();
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    runtime.spawn(async move {
        // Delivery failures are not reported anywhere: AWS would retry per the delivery policy,
        // cumulo makes the one attempt.
        let _ = tokio::time::timeout(TIMEOUT, async move {
            let mut stream = tokio::net::TcpStream::connect(&connect).await?;
            stream.write_all(request.as_bytes()).await?;
            let mut sink = Vec::new();
            stream.read_to_end(&mut sink).await?;
            Ok::<_, std::io::Error>(())
        })
        .await;
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_urls() {
        assert_eq!(
            split_url("http://127.0.0.1:8080/hook?x=1"),
            Some((
                "127.0.0.1:8080".into(),
                "127.0.0.1:8080".into(),
                "/hook?x=1".into()
            ))
        );
        assert_eq!(
            split_url("http://example.com"),
            Some(("example.com:80".into(), "example.com".into(), "/".into()))
        );
        assert_eq!(split_url("https://example.com/"), None);
    }
}
