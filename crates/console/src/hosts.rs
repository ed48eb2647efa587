//! The DNS-rebinding defence: a page on `http://attacker.example:4566/` whose name an attacker
//! re-points at 127.0.0.1 is same-origin with itself, not with the console, so the CSRF check
//! cannot see it; but its requests carry `Host: attacker.example:4566`. The console and its API
//! answer only requests whose `Host` names this endpoint: a loopback address, `localhost` or a
//! `*.localhost` name (RFC 6761: never resolved through DNS), the address `serve` is bound to,
//! or a name the user allowed (`--console-host`), each with the bound port. The AWS API routes
//! are not checked: SDKs and LocalStack-style virtual hosts (`<bucket>.s3.localhost.localstack.cloud`)
//! reach them under any name.

use std::net::{IpAddr, SocketAddr};

/// The `Host` values the console answers.
#[derive(Debug, Clone)]
pub struct AllowedHosts {
    port: u16,
    /// The bound address, unless it is a wildcard (0.0.0.0 or ::), which names no host.
    bound: Option<IpAddr>,
    /// Names the user allowed, lower-case, each `name` (with the bound port) or `name:port`.
    names: Vec<String>,
}

impl AllowedHosts {
    pub fn new(bound: SocketAddr, names: &[String]) -> Self {
        AllowedHosts {
            port: bound.port(),
            bound: Some(bound.ip()).filter(|ip| !ip.is_unspecified()),
            names: names
                .iter()
                .map(|n| n.trim().to_ascii_lowercase())
                .collect(),
        }
    }

    /// Whether a request with this `Host` header value may reach the console.
    pub fn allows(&self, host: &str) -> bool {
        let host = host.trim().to_ascii_lowercase();
        let Some((name, port)) = split(&host) else {
            return false;
        };
        if self
            .names
            .iter()
            .any(|n| *n == host || (*n == name && port == self.port))
        {
            return true;
        }
        if port != self.port {
            return false;
        }
        if name == "localhost" || name.ends_with(".localhost") {
            return true;
        }
        match name.parse::<IpAddr>() {
            Ok(ip) => ip.is_loopback() || Some(ip) == self.bound,
            Err(_) => false,
        }
    }
}

/// `(name, port)` of a Host value (`name`, `name:port`, `[v6]`, `[v6]:port`); no port is 80.
fn split(host: &str) -> Option<(&str, u16)> {
    let (name, port) = if let Some(rest) = host.strip_prefix('[') {
        let (name, after) = rest.split_once(']')?;
        match after {
            "" => (name, None),
            p => (name, Some(p.strip_prefix(':')?)),
        }
    } else {
        match host.split_once(':') {
            Some((name, port)) => (name, Some(port)),
            None => (host, None),
        }
    };
    let port = match port {
        Some(p) => p.parse().ok()?,
        None => 80,
    };
    (!name.is_empty()).then_some((name, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(bound: &str, names: &[&str]) -> AllowedHosts {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        AllowedHosts::new(bound.parse().unwrap(), &names)
    }

    #[test]
    fn loopback_names_and_the_bound_address_with_its_port() {
        let h = hosts("127.0.0.1:4566", &[]);
        for ok in [
            "localhost:4566",
            "LOCALHOST:4566",
            "127.0.0.1:4566",
            "127.8.9.10:4566",
            "[::1]:4566",
            "console.localhost:4566",
        ] {
            assert!(h.allows(ok), "{ok}");
        }
        for refused in [
            "attacker.example:4566",
            "localhost.attacker.example:4566",
            "localhost:4567",
            "localhost",
            "127.0.0.1",
            "192.168.1.5:4566",
            "localhost:x",
            "[::1",
            ":4566",
            "",
        ] {
            assert!(!h.allows(refused), "{refused}");
        }
    }

    #[test]
    fn a_wildcard_bind_allows_only_named_hosts() {
        let h = hosts("0.0.0.0:4566", &["dev-box", "proxy.example:443"]);
        assert!(!h.allows("0.0.0.0:4566"));
        assert!(!h.allows("192.168.1.5:4566"));
        assert!(h.allows("dev-box:4566"));
        assert!(!h.allows("dev-box:80"));
        assert!(h.allows("proxy.example:443"));
        assert!(!h.allows("proxy.example:4566"));
        assert!(h.allows("localhost:4566"));
        let bound = hosts("192.168.1.5:80", &[]);
        assert!(bound.allows("192.168.1.5"));
        assert!(bound.allows("192.168.1.5:80"));
        assert!(!bound.allows("192.168.1.6"));
    }
}
