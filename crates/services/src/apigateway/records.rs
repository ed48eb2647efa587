//! The one shape of API Gateway's records, shared by the v1 and v2 control planes: every kind
//! of record (a v1 API's models, validators, authorizers, stages, deployments; a v2 API's
//! routes, integrations, authorizers, stages, deployments; the region's API keys, usage plans
//! and domain names) is a [`Kind`] declaring the map that holds it and AWS's NotFound message,
//! and the generic get/list/patch/remove below serve them all. The mappings a domain name holds
//! (v1 base path mappings, v2 API mappings) are a [`Nested`] kind inside its document.
//!
//! An [`Api`] (a v1 `RestApi` or a v2 `V2Api`) is changed through
//! [`ApiGatewayService::within`], which works on a copy and writes it back whole, so a refused
//! call changes nothing and a kind may change its record in place.

use super::ApiGatewayService;
use super::ops::not_found;
use super::patch::{self, PatchOp};
use super::state::{Deployment, REST_API, Region, RestApi, V2_API, V2Api, V2Deployment};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub fn s<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v.get(k).and_then(Value::as_str)
}

/// Copies the members `keys` of `from` that are present into `to`.
pub fn copy(to: &mut Map<String, Value>, from: &Value, keys: &[&str]) {
    for k in keys {
        if let Some(v) = from.get(*k).filter(|v| !v.is_null()) {
            to.insert((*k).to_string(), v.clone());
        }
    }
}

/// A record and the document Get answers for it.
pub trait Doc {
    fn doc(&self) -> &Value;
    fn doc_mut(&mut self) -> &mut Value;
}

impl Doc for Value {
    fn doc(&self) -> &Value {
        self
    }
    fn doc_mut(&mut self) -> &mut Value {
        self
    }
}

impl Doc for Deployment {
    fn doc(&self) -> &Value {
        &self.doc
    }
    fn doc_mut(&mut self) -> &mut Value {
        &mut self.doc
    }
}

impl Doc for V2Deployment {
    fn doc(&self) -> &Value {
        &self.doc
    }
    fn doc_mut(&mut self) -> &mut Value {
        &mut self.doc
    }
}

/// Declares a [`Kind`] over the holder's map `field`, a missing id answered with `missing`:
/// `kind!(models, |name| format!("Invalid model name specified: {name}"))`.
macro_rules! kind {
    ($field:ident, $missing:expr) => {
        $crate::apigateway::records::Kind {
            map: |h| &h.$field,
            map_mut: |h| &mut h.$field,
            missing: $missing,
        }
    };
}
pub(crate) use kind;

/// One kind of record held by `H` (an API or the region) in a map by id.
pub struct Kind<H, R = Value> {
    pub map: fn(&H) -> &BTreeMap<String, R>,
    pub map_mut: fn(&mut H) -> &mut BTreeMap<String, R>,
    /// AWS's NotFoundException message for a missing id.
    pub missing: fn(&str) -> String,
}

impl<H, R> Kind<H, R> {
    pub fn not_found(&self, id: &str) -> AwsError {
        not_found((self.missing)(id))
    }

    pub fn get<'h>(&self, h: &'h H, id: &str) -> Result<&'h R, AwsError> {
        (self.map)(h).get(id).ok_or_else(|| self.not_found(id))
    }

    pub fn get_mut<'h>(&self, h: &'h mut H, id: &str) -> Result<&'h mut R, AwsError> {
        (self.map_mut)(h)
            .get_mut(id)
            .ok_or_else(|| self.not_found(id))
    }

    pub fn require(&self, h: &H, id: &str) -> Result<(), AwsError> {
        self.get(h, id).map(|_| ())
    }

    pub fn remove(&self, h: &mut H, id: &str) -> Result<R, AwsError> {
        (self.map_mut)(h)
            .remove(id)
            .ok_or_else(|| self.not_found(id))
    }
}

impl<H, R: Doc> Kind<H, R> {
    /// The record's document, as Get answers it.
    pub fn doc(&self, h: &H, id: &str) -> Result<Value, AwsError> {
        self.get(h, id).map(|r| r.doc().clone())
    }

    /// Every record's document, in id order.
    pub fn docs(&self, h: &H) -> Vec<Value> {
        (self.map)(h).values().map(|r| r.doc().clone()).collect()
    }

    /// Changes the record's document with `f` and answers it. On error the document may be
    /// half-changed: callers work on a copy (`within`, `mutate`).
    pub fn change(
        &self,
        h: &mut H,
        id: &str,
        f: impl FnOnce(&mut Value) -> Result<(), AwsError>,
    ) -> Result<Value, AwsError> {
        let doc = self.get_mut(h, id)?.doc_mut();
        f(doc)?;
        Ok(doc.clone())
    }

    /// v1's Update*: `ops` applied to the record, each path one of `allowed`.
    pub fn patch(
        &self,
        h: &mut H,
        id: &str,
        ops: &[PatchOp],
        allowed: &[&str],
    ) -> Result<Value, AwsError> {
        self.change(h, id, |doc| patch::apply(doc, ops, allowed))
    }

    /// v2's Update*: the members `fields` of `input` that are present replace the record's.
    pub fn merge(
        &self,
        h: &mut H,
        id: &str,
        input: &Value,
        fields: &[&str],
    ) -> Result<Value, AwsError> {
        self.change(h, id, |doc| {
            if let Some(m) = doc.as_object_mut() {
                copy(m, input, fields);
            }
            Ok(())
        })
    }
}

/// Records kept inside a parent's document under one member, by id (a domain name's base path
/// mappings or API mappings, a method's responses, an integration's responses).
pub struct Nested {
    pub member: &'static str,
    pub missing: fn(&str) -> String,
    /// Whether the member goes once its last record does (a method without responses has no
    /// `methodResponses`).
    pub prune: bool,
}

impl Nested {
    pub fn not_found(&self, id: &str) -> AwsError {
        not_found((self.missing)(id))
    }

    pub fn docs(&self, parent: &Value) -> Vec<Value> {
        parent[self.member]
            .as_object()
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    pub fn doc(&self, parent: &Value, id: &str) -> Result<Value, AwsError> {
        parent
            .get(self.member)
            .and_then(|m| m.get(id))
            .cloned()
            .ok_or_else(|| self.not_found(id))
    }

    pub fn get_mut<'p>(&self, parent: &'p mut Value, id: &str) -> Result<&'p mut Value, AwsError> {
        parent
            .get_mut(self.member)
            .and_then(|m| m.get_mut(id))
            .ok_or_else(|| self.not_found(id))
    }

    pub fn remove(&self, parent: &mut Value, id: &str) -> Result<Value, AwsError> {
        let gone = parent
            .get_mut(self.member)
            .and_then(Value::as_object_mut)
            .and_then(|m| m.remove(id))
            .ok_or_else(|| self.not_found(id))?;
        if self.prune && parent[self.member].as_object().is_some_and(Map::is_empty) {
            parent.as_object_mut().map(|m| m.remove(self.member));
        }
        Ok(gone)
    }

    pub fn insert(&self, parent: &mut Value, id: &str, doc: Value) {
        if !parent[self.member].is_object() {
            parent[self.member] = json!({});
        }
        parent[self.member][id] = doc;
    }

    /// The parent's document without its nested records (what Get answers for a domain name).
    pub fn without(&self, parent: &Value) -> Value {
        let mut d = parent.clone();
        d.as_object_mut().map(|m| m.remove(self.member));
        d
    }
}

/// A v1 REST API or a v2 API: where the region keeps them and how their lists answer.
pub trait Api: Clone {
    /// The store's kind for the API's document.
    const STORE: &'static str;
    fn all(r: &Region) -> &BTreeMap<String, Self>;
    fn all_mut(r: &mut Region) -> &mut BTreeMap<String, Self>;
    fn missing(svc: &ApiGatewayService, id: &str) -> AwsError;
    /// A Get* list's answer (`item` in v1, `items` in v2, as the models name them).
    fn items(list: Vec<Value>) -> Value;
}

impl Api for RestApi {
    const STORE: &'static str = REST_API;
    fn all(r: &Region) -> &BTreeMap<String, Self> {
        &r.rest_apis
    }
    fn all_mut(r: &mut Region) -> &mut BTreeMap<String, Self> {
        &mut r.rest_apis
    }
    fn missing(svc: &ApiGatewayService, id: &str) -> AwsError {
        not_found(format!(
            "Invalid API identifier specified {}:{id}",
            svc.account_id
        ))
    }
    fn items(list: Vec<Value>) -> Value {
        json!({ "item": list })
    }
}

impl Api for V2Api {
    const STORE: &'static str = V2_API;
    fn all(r: &Region) -> &BTreeMap<String, Self> {
        &r.v2_apis
    }
    fn all_mut(r: &mut Region) -> &mut BTreeMap<String, Self> {
        &mut r.v2_apis
    }
    fn missing(_: &ApiGatewayService, id: &str) -> AwsError {
        not_found(format!("Invalid API identifier specified {id}"))
    }
    fn items(list: Vec<Value>) -> Value {
        json!({ "items": list })
    }
}

impl ApiGatewayService {
    /// Changes one API (written back whole; an error leaves it as it was).
    pub(crate) fn within<A: Api, T>(
        &self,
        region: &str,
        api_id: &str,
        f: impl FnOnce(&mut A, &mut Region) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        self.mutate(region, |r| {
            let mut api = A::all(r)
                .get(api_id)
                .cloned()
                .ok_or_else(|| A::missing(self, api_id))?;
            let out = f(&mut api, r)?;
            A::all_mut(r).insert(api_id.to_string(), api);
            r.touch(A::STORE, api_id);
            Ok(out)
        })
    }

    /// Reads one API.
    pub(crate) fn of<A: Api, T>(
        &self,
        region: &str,
        api_id: &str,
        f: impl FnOnce(&A) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        self.read(region, |r| match A::all(r).get(api_id) {
            Some(a) => f(a),
            None => Err(A::missing(self, api_id)),
        })
    }

    /// Get* of one record of an API.
    pub(crate) fn record<A: Api, R: Doc>(
        &self,
        kind: &Kind<A, R>,
        region: &str,
        api_id: &str,
        id: &str,
    ) -> Result<Value, AwsError> {
        self.of(region, api_id, |a| kind.doc(a, id))
    }

    /// Get* of every record of a kind of an API.
    pub(crate) fn records<A: Api, R: Doc>(
        &self,
        kind: &Kind<A, R>,
        region: &str,
        api_id: &str,
    ) -> Result<Value, AwsError> {
        self.of(region, api_id, |a| Ok(A::items(kind.docs(a))))
    }

    /// Delete* of a record nothing else refers to.
    pub(crate) fn remove_record<A: Api, R: Doc>(
        &self,
        kind: &Kind<A, R>,
        region: &str,
        api_id: &str,
        id: &str,
    ) -> Result<(), AwsError> {
        self.within(region, api_id, |a: &mut A, _| kind.remove(a, id).map(drop))
    }
}
