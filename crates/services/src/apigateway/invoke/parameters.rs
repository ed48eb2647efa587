//! An integration's `requestParameters`: values for the integration request's headers, query
//! string and path, each taken from a source. REST APIs read the method request
//! (`method.request.*`), WebSocket APIs the route (`route.request.*`); both share the targets,
//! literals, `context.*` and `stageVariables.*`, and the template's `$context.requestOverride`,
//! which wins over what the parameters mapped.

use super::Call;
use crate::apigateway::vtl;
use ::http::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

/// What an integration's `requestParameters` (and a template's overrides) set on the request.
#[derive(Default, Debug, PartialEq)]
pub(crate) struct Mapped {
    pub headers: Vec<(String, String)>,
    pub query: Vec<(String, String)>,
    pub path: Vec<(String, String)>,
}

impl Mapped {
    /// Maps each `integration.request.header|querystring|path.X` target from its source as
    /// `source` resolves it; a source without a value maps nothing.
    pub(crate) fn resolve(
        parameters: &Value,
        mut source: impl FnMut(&str) -> Option<String>,
    ) -> Self {
        let mut out = Mapped::default();
        for (target, src) in parameters.as_object().into_iter().flatten() {
            let Some(value) = src.as_str().and_then(&mut source) else {
                continue;
            };
            out.set(target, value);
        }
        out
    }

    /// Sets a target, replacing an earlier value of the same name (header names compare
    /// without case).
    fn set(&mut self, target: &str, value: String) {
        if let Some(h) = target.strip_prefix("integration.request.header.") {
            self.headers.retain(|(k, _)| !k.eq_ignore_ascii_case(h));
            self.headers.push((h.to_string(), value));
            return;
        }
        let (list, name) = if let Some(q) = target.strip_prefix("integration.request.querystring.")
        {
            (&mut self.query, q)
        } else if let Some(p) = target.strip_prefix("integration.request.path.") {
            (&mut self.path, p)
        } else {
            return;
        };
        list.retain(|(k, _)| k != name);
        list.push((name.to_string(), value));
    }

    /// Applies a rendered template's `$context.requestOverride` (`header`, `querystring`,
    /// `path` maps), replacing what the parameters mapped under the same name.
    pub(crate) fn apply_overrides(&mut self, overrides: &Value) {
        for (kind, target) in [
            ("header", "integration.request.header."),
            ("querystring", "integration.request.querystring."),
            ("path", "integration.request.path."),
        ] {
            for (name, v) in overrides[kind].as_object().into_iter().flatten() {
                if v.is_null() {
                    continue;
                }
                self.set(&format!("{target}{name}"), vtl::display(v));
            }
        }
    }

    /// The last value mapped to a header (names compare without case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .rev()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `uri` with each mapped path parameter substituted for its `{name}` (or `{name+}`).
    pub(crate) fn substitute_path(&self, uri: &str) -> String {
        let mut out = uri.to_string();
        for (k, v) in &self.path {
            out = out.replace(&format!("{{{k}}}"), v);
            out = out.replace(&format!("{{{k}+}}"), v);
        }
        out
    }

    /// `uri` with the mapped path parameters, then `query` (a raw query string passed through)
    /// and the mapped query parameters.
    pub(crate) fn url(&self, uri: &str, query: &str) -> String {
        let mut url = self.substitute_path(uri);
        for part in [query.to_string(), self.query_string()] {
            if !part.is_empty() {
                url.push(if url.contains('?') { '&' } else { '?' });
                url.push_str(&part);
            }
        }
        url
    }

    /// Sets the mapped headers on `headers`, replacing what they had under those names.
    pub(crate) fn apply_headers(&self, headers: &mut HeaderMap) {
        for (k, v) in &self.headers {
            if let (Ok(k), Ok(v)) = (k.parse::<HeaderName>(), HeaderValue::from_str(v)) {
                headers.insert(k, v);
            }
        }
    }

    /// The mapped query parameters, percent-encoded (`a=1&b=x%20y`).
    pub(crate) fn query_string(&self) -> String {
        let enc = |s: &str| {
            percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
        };
        self.query
            .iter()
            .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// A REST API method request's value for a parameter source: `'literal'`,
/// `method.request.path|querystring|multivaluequerystring|header|multivalueheader.X`,
/// `method.request.body` and `method.request.body.<JSONPath>`, `context.X` and
/// `stageVariables.X`. An unknown source maps nothing and says so in the server's log.
pub(crate) fn rest_source(call: &Call<'_>, src: &str) -> Option<String> {
    if let Some(lit) = src.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
        return Some(lit.to_string());
    }
    if let Some(rest) = src.strip_prefix("method.request.") {
        if rest == "body" {
            return Some(String::from_utf8_lossy(&call.req.body).into_owned());
        }
        if let Some(path) = rest.strip_prefix("body.") {
            let json: Value = serde_json::from_slice(&call.req.body).unwrap_or(Value::Null);
            let path = if path.starts_with('$') {
                path.to_string()
            } else {
                format!("$.{path}")
            };
            let v = vtl::json_path(&json, &path);
            return (!v.is_null()).then(|| vtl::display(&v));
        }
        let (kind, name) = rest.split_once('.')?;
        let headers = || {
            call.req
                .headers
                .get_all(name)
                .iter()
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
                .collect::<Vec<_>>()
        };
        let queries = || {
            call.req
                .query
                .iter()
                .filter(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .collect::<Vec<_>>()
        };
        let joined = |all: Vec<String>| (!all.is_empty()).then(|| all.join(","));
        return match kind {
            "path" => call.path_params.get(name).cloned(),
            "querystring" => queries().pop(),
            "multivaluequerystring" => joined(queries()),
            "header" => headers().pop(),
            "multivalueheader" => joined(headers()),
            _ => unsupported(src),
        };
    }
    let (root, path) = if let Some(p) = src.strip_prefix("context.") {
        (call.context(), p)
    } else if let Some(p) = src.strip_prefix("stageVariables.") {
        (call.stage_variables(), p)
    } else {
        return unsupported(src);
    };
    let v = path.split('.').try_fold(&root, |v, k| v.get(k))?;
    (!v.is_null()).then(|| vtl::display(v))
}

fn unsupported(src: &str) -> Option<String> {
    eprintln!("cumulo: apigateway: request parameter source {src} is not supported");
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn overrides_replace_mapped_values() {
        let mut m = Mapped::resolve(
            &json!({
                "integration.request.header.Content-Type": "'application/json'",
                "integration.request.querystring.Name": "'p'",
                "integration.request.path.id": "'7'",
                "integration.request.body": "'ignored'",
            }),
            |s| s.strip_prefix('\'')?.strip_suffix('\'').map(str::to_string),
        );
        assert_eq!(m.header("content-type"), Some("application/json"));
        m.apply_overrides(&json!({
            "header": {"content-type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSEvents.PutEvents"},
            "querystring": {"Name": "q"},
        }));
        assert_eq!(m.header("Content-Type"), Some("application/x-amz-json-1.1"));
        assert_eq!(m.header("x-amz-target"), Some("AWSEvents.PutEvents"));
        assert_eq!(m.query_string(), "Name=q");
        assert_eq!(m.substitute_path("/items/{id}/{id+}"), "/items/7/7");
        assert_eq!(
            m.url("http://h/{id}?a=1", "b=2"),
            "http://h/7?a=1&b=2&Name=q"
        );
        assert_eq!(m.headers.len(), 2);
    }
}
