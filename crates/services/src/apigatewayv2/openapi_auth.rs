//! The authorization an HTTP API's OpenAPI definition declares, as ImportApi (and
//! CloudFormation's `Body`) turns it into authorizers and route settings:
//! `components.securitySchemes` with `x-amazon-apigateway-authorizer` (`jwt` and `request`
//! Lambda authorizers) become authorizers, a scheme with `x-amazon-apigateway-authtype:
//! awsSigv4` is IAM, and an operation's `security` names its route's authorizer and scopes.

use crate::apigateway::ids;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// What a security scheme authorizes with.
enum Scheme {
    Iam,
    Authorizer { id: String, kind: &'static str },
}

/// The definition's authorizers (by id) and how each scheme name authorizes.
pub(crate) struct Imported {
    pub authorizers: BTreeMap<String, Value>,
    schemes: BTreeMap<String, Scheme>,
}

/// An identity source as the API reports it: a list (the extension may give one
/// comma-separated string).
fn identity_source(v: &Value) -> Option<Value> {
    match v {
        Value::String(s) => Some(json!(s.split(',').map(str::trim).collect::<Vec<_>>())),
        Value::Array(_) => Some(v.clone()),
        _ => None,
    }
}

/// A payload format version as the string the API keeps (a YAML `1.0` is a number).
fn version(v: &Value) -> Option<Value> {
    match v {
        Value::String(_) => Some(v.clone()),
        Value::Number(n) => Some(Value::String(match n.as_f64() {
            Some(f) if f.fract() == 0.0 => format!("{f:.1}"),
            _ => n.to_string(),
        })),
        _ => None,
    }
}

pub(crate) fn import(spec: &Value) -> Imported {
    let mut out = Imported {
        authorizers: BTreeMap::new(),
        schemes: BTreeMap::new(),
    };
    let schemes = spec["components"]["securitySchemes"].as_object();
    for (name, scheme) in schemes.into_iter().flatten() {
        if scheme["x-amazon-apigateway-authtype"] == "awsSigv4" {
            out.schemes.insert(name.clone(), Scheme::Iam);
            continue;
        }
        let Some(a) = scheme.get("x-amazon-apigateway-authorizer") else {
            continue;
        };
        let kind = match a["type"].as_str().map(str::to_ascii_lowercase).as_deref() {
            Some("jwt") => "JWT",
            Some("request") => "REQUEST",
            _ => continue,
        };
        let id = ids::short();
        let mut m = Map::new();
        m.insert("authorizerId".into(), id.clone().into());
        m.insert("name".into(), name.clone().into());
        m.insert("authorizerType".into(), kind.into());
        if let Some(s) = identity_source(&a["identitySource"]) {
            m.insert("identitySource".into(), s);
        }
        if kind == "JWT" {
            m.insert("jwtConfiguration".into(), a["jwtConfiguration"].clone());
        } else {
            for (from, to) in [
                ("authorizerUri", "authorizerUri"),
                ("authorizerCredentials", "authorizerCredentialsArn"),
                (
                    "authorizerResultTtlInSeconds",
                    "authorizerResultTtlInSeconds",
                ),
                ("enableSimpleResponses", "enableSimpleResponses"),
            ] {
                if let Some(v) = a.get(from).filter(|v| !v.is_null()) {
                    m.insert(to.into(), v.clone());
                }
            }
            if let Some(v) = version(&a["authorizerPayloadFormatVersion"]) {
                m.insert("authorizerPayloadFormatVersion".into(), v);
            }
        }
        out.authorizers.insert(id.clone(), Value::Object(m));
        out.schemes
            .insert(name.clone(), Scheme::Authorizer { id, kind });
    }
    out
}

impl Imported {
    /// Whether the definition declares an authorizer of this name.
    pub(crate) fn declares(&self, name: &str) -> bool {
        matches!(self.schemes.get(name), Some(Scheme::Authorizer { .. }))
    }

    /// An operation's first `security` requirement applied to its route: the authorizer it
    /// names (JWT, or CUSTOM for a Lambda one) with its scopes, or AWS_IAM.
    pub(crate) fn apply(&self, op: &Value, route: &mut Value) {
        let Some((name, scopes)) = op["security"]
            .as_array()
            .and_then(|l| l.first())
            .and_then(Value::as_object)
            .and_then(|r| r.iter().next())
        else {
            return;
        };
        match self.schemes.get(name) {
            Some(Scheme::Iam) => route["authorizationType"] = "AWS_IAM".into(),
            Some(Scheme::Authorizer { id, kind }) => {
                route["authorizationType"] = if *kind == "JWT" { "JWT" } else { "CUSTOM" }.into();
                route["authorizerId"] = id.clone().into();
                if scopes.as_array().is_some_and(|s| !s.is_empty()) {
                    route["authorizationScopes"] = scopes.clone();
                }
            }
            None => {}
        }
    }
}
