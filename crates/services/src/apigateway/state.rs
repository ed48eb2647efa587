//! API Gateway records in memory per region, each written through to the store as one JSON
//! document: a REST API with everything inside it (resources and their methods, deployments
//! with the snapshot they serve, stages, models, validators, authorizers, gateway responses),
//! API keys, usage plans, custom domain names (with their base path mappings), and the v2
//! APIs and domain names. Documents are in the API's member names, as Get answers them.

use crate::regional::{Records, Table};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE apigateway_records (
        region TEXT NOT NULL,
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, kind, id)
    );"];

/// One resource of a REST API's tree and its methods (each a Method document with its
/// `methodResponses` and `methodIntegration`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Resource {
    pub id: String,
    pub parent_id: Option<String>,
    pub path_part: String,
    pub methods: BTreeMap<String, Value>,
}

/// What a deployment serves: the API as it was when deployed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Snapshot {
    pub resources: BTreeMap<String, Resource>,
    pub authorizers: BTreeMap<String, Value>,
    pub gateway_responses: BTreeMap<String, Value>,
    pub api_key_source: String,
    pub binary_media_types: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deployment {
    pub doc: Value,
    pub snapshot: Snapshot,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RestApi {
    /// The RestApi document (id, name, rootResourceId, endpointConfiguration, tags, ...).
    pub doc: Value,
    pub resources: BTreeMap<String, Resource>,
    pub deployments: BTreeMap<String, Deployment>,
    /// Stage documents by stage name.
    pub stages: BTreeMap<String, Value>,
    /// Model documents by model name.
    pub models: BTreeMap<String, Value>,
    pub validators: BTreeMap<String, Value>,
    pub authorizers: BTreeMap<String, Value>,
    /// GatewayResponse documents by response type (only those put on the API).
    pub gateway_responses: BTreeMap<String, Value>,
}

impl RestApi {
    /// The full path of a resource (`/`, `/pets/{id}`).
    pub fn path_of(resources: &BTreeMap<String, Resource>, id: &str) -> String {
        let mut parts = Vec::new();
        let mut at = resources.get(id);
        let mut guard = 0;
        while let Some(r) = at {
            guard += 1;
            if r.parent_id.is_none() || guard > 64 {
                break;
            }
            parts.push(r.path_part.clone());
            at = r.parent_id.as_ref().and_then(|p| resources.get(p));
        }
        parts.reverse();
        format!("/{}", parts.join("/"))
    }
}

/// A v2 (HTTP or WebSocket) API and what it holds, each in the API's member names.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct V2Api {
    pub doc: Value,
    pub routes: BTreeMap<String, Value>,
    pub integrations: BTreeMap<String, Value>,
    pub stages: BTreeMap<String, Value>,
    pub deployments: BTreeMap<String, V2Deployment>,
    pub authorizers: BTreeMap<String, Value>,
    pub models: BTreeMap<String, Value>,
}

/// A v2 deployment and the routes, integrations and authorizers it serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct V2Deployment {
    pub doc: Value,
    pub routes: BTreeMap<String, Value>,
    pub integrations: BTreeMap<String, Value>,
    pub authorizers: BTreeMap<String, Value>,
}

#[derive(Debug, Clone, Default)]
pub struct Region {
    pub rest_apis: BTreeMap<String, RestApi>,
    pub api_keys: BTreeMap<String, Value>,
    /// Usage plan documents; their keys are `keys` (key ids).
    pub usage_plans: BTreeMap<String, Value>,
    pub usage_plan_keys: BTreeMap<String, BTreeSet<String>>,
    /// DomainName documents, with their base path mappings under `basePathMappings`.
    pub domains: BTreeMap<String, Value>,
    pub account: Option<Value>,
    pub v2_apis: BTreeMap<String, V2Api>,
    /// v2 DomainName documents, with their API mappings under `apiMappings`.
    pub v2_domains: BTreeMap<String, Value>,
    pub dirty: BTreeSet<(&'static str, String)>,
}

pub const REST_API: &str = "restapi";
pub const API_KEY: &str = "apikey";
pub const USAGE_PLAN: &str = "usageplan";
pub const DOMAIN: &str = "domain";
pub const ACCOUNT: &str = "account";
pub const V2_API: &str = "v2api";
pub const V2_DOMAIN: &str = "v2domain";

#[derive(Serialize, Deserialize)]
struct PlanDoc {
    doc: Value,
    keys: BTreeSet<String>,
}

impl Region {
    pub fn touch(&mut self, kind: &'static str, id: &str) {
        self.dirty.insert((kind, id.to_string()));
    }
}

/// The store table every record lives in.
pub const TABLE: Table = Table {
    name: "apigateway_records",
    key: "id",
};

/// By hand rather than `records_by_kind!`: a usage plan is stored with its keys, and the
/// account is one document, not a map.
impl Records for Region {
    fn touched(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.dirty.iter().map(|(kind, id)| (*kind, id.as_str()))
    }

    fn clear_touched(&mut self) {
        self.dirty.clear();
    }

    fn doc(&self, kind: &str, id: &str) -> serde_json::Result<Option<String>> {
        match kind {
            REST_API => self.rest_apis.get(id).map(serde_json::to_string),
            API_KEY => self.api_keys.get(id).map(serde_json::to_string),
            USAGE_PLAN => self.usage_plans.get(id).map(|doc| {
                serde_json::to_string(&PlanDoc {
                    doc: doc.clone(),
                    keys: self.usage_plan_keys.get(id).cloned().unwrap_or_default(),
                })
            }),
            DOMAIN => self.domains.get(id).map(serde_json::to_string),
            ACCOUNT => self.account.as_ref().map(serde_json::to_string),
            V2_API => self.v2_apis.get(id).map(serde_json::to_string),
            _ => self.v2_domains.get(id).map(serde_json::to_string),
        }
        .transpose()
    }

    fn put(&mut self, kind: &str, id: String, doc: &str) -> serde_json::Result<()> {
        match kind {
            REST_API => {
                self.rest_apis.insert(id, serde_json::from_str(doc)?);
            }
            API_KEY => {
                self.api_keys.insert(id, serde_json::from_str(doc)?);
            }
            USAGE_PLAN => {
                let p: PlanDoc = serde_json::from_str(doc)?;
                self.usage_plan_keys.insert(id.clone(), p.keys);
                self.usage_plans.insert(id, p.doc);
            }
            DOMAIN => {
                self.domains.insert(id, serde_json::from_str(doc)?);
            }
            ACCOUNT => self.account = Some(serde_json::from_str(doc)?),
            V2_API => {
                self.v2_apis.insert(id, serde_json::from_str(doc)?);
            }
            _ => {
                self.v2_domains.insert(id, serde_json::from_str(doc)?);
            }
        }
        Ok(())
    }
}
