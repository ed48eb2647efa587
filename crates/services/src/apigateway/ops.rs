//! The REST API (v1) control plane as typed operations: JSON in the API's member names in,
//! the record as Get answers it out. Every change goes through [`ApiGatewayService::mutate`],
//! so a refused call changes nothing.

use super::ApiGatewayService;
use super::ids;
use super::patch::{self, PatchOp, bad_request};
use super::records::{Api, Kind, Nested, copy, kind, s};
use super::state::{
    ACCOUNT, API_KEY, DOMAIN, Deployment, REST_API, Region, Resource, RestApi, Snapshot, USAGE_PLAN,
};
use cumulo_wire::AwsError;
use http::StatusCode;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub const HTTP_METHODS: &[&str] = &[
    "GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "HEAD", "ANY",
];

pub const RESPONSE_TYPES: &[(&str, &str)] = &[
    ("ACCESS_DENIED", "403"),
    ("API_CONFIGURATION_ERROR", "500"),
    ("AUTHORIZER_CONFIGURATION_ERROR", "500"),
    ("AUTHORIZER_FAILURE", "500"),
    ("BAD_REQUEST_BODY", "400"),
    ("BAD_REQUEST_PARAMETERS", "400"),
    ("DEFAULT_4XX", ""),
    ("DEFAULT_5XX", ""),
    ("EXPIRED_TOKEN", "403"),
    ("INTEGRATION_FAILURE", "504"),
    ("INTEGRATION_TIMEOUT", "504"),
    ("INVALID_API_KEY", "403"),
    ("INVALID_SIGNATURE", "403"),
    ("MISSING_AUTHENTICATION_TOKEN", "403"),
    ("QUOTA_EXCEEDED", "429"),
    ("REQUEST_TOO_LARGE", "413"),
    ("RESOURCE_NOT_FOUND", "404"),
    ("THROTTLED", "429"),
    ("UNAUTHORIZED", "401"),
    ("UNSUPPORTED_MEDIA_TYPE", "415"),
    ("WAF_FILTERED", "403"),
];

pub fn not_found(msg: impl Into<String>) -> AwsError {
    AwsError::new(StatusCode::NOT_FOUND, "NotFoundException", msg)
}

pub fn conflict(msg: impl Into<String>) -> AwsError {
    AwsError::new(StatusCode::CONFLICT, "ConflictException", msg)
}

// ---- the record kinds, each declared once (see `records`) ----

const RESOURCES: Kind<RestApi, Resource> =
    kind!(resources, |_| "Invalid Resource identifier specified"
        .into());
const METHODS: Kind<Resource> = kind!(methods, |_| "Invalid Method identifier specified".into());
const METHOD_RESPONSES: Nested = Nested {
    member: "methodResponses",
    missing: |_| "Invalid Response status code specified".into(),
    prune: true,
};
const INTEGRATION_RESPONSES: Nested = Nested {
    member: "integrationResponses",
    missing: |_| "Invalid Response status code specified".into(),
    prune: true,
};
const DEPLOYMENTS: Kind<RestApi, Deployment> =
    kind!(deployments, |_| "Invalid Deployment identifier specified"
        .into());
const STAGES: Kind<RestApi> = kind!(stages, |_| "Invalid Stage identifier specified".into());
const MODELS: Kind<RestApi> = kind!(models, |name| format!(
    "Invalid model name specified: {name}"
));
const VALIDATORS: Kind<RestApi> = kind!(validators, |_| {
    "Invalid Request Validator identifier specified".into()
});
const AUTHORIZERS: Kind<RestApi> =
    kind!(authorizers, |_| "Invalid Authorizer identifier specified"
        .into());
const GATEWAY_RESPONSES: Kind<RestApi> = kind!(gateway_responses, |_| {
    "Gateway response type not defined on api".into()
});
const API_KEYS: Kind<Region> = kind!(api_keys, |_| "Invalid API Key identifier specified".into());
const USAGE_PLANS: Kind<Region> = kind!(usage_plans, |_| "Invalid Usage Plan ID specified".into());
const DOMAINS: Kind<Region> = kind!(domains, |_| "Invalid domain name identifier specified"
    .into());
const BASE_PATH_MAPPINGS: Nested = Nested {
    member: "basePathMappings",
    missing: |_| "Invalid base path mapping identifier specified".into(),
    prune: false,
};

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// `{"item": [...]}`, the answer of every Get* list (the model's `locationName` of `items`).
pub fn items(list: Vec<Value>) -> Value {
    json!({ "item": list })
}

impl ApiGatewayService {
    /// Changes one REST API (written back whole).
    pub(crate) fn with_api<T>(
        &self,
        region: &str,
        api_id: &str,
        f: impl FnOnce(&mut RestApi, &mut Region) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        self.within(region, api_id, f)
    }

    pub(crate) fn api<T>(
        &self,
        region: &str,
        api_id: &str,
        f: impl FnOnce(&RestApi) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        self.of(region, api_id, f)
    }

    pub fn rest_api_arn(&self, region: &str, id: &str) -> String {
        format!("arn:aws:apigateway:{region}::/restapis/{id}")
    }

    // ---- REST APIs ----

    pub fn create_rest_api(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let doc = new_rest_api_doc(input)?;
        let id = ids::long();
        let root = ids::long();
        let mut doc = obj(doc);
        doc.insert("id".into(), id.clone().into());
        doc.insert("rootResourceId".into(), root.clone().into());
        doc.insert("createdDate".into(), ids::now().into());
        let mut api = RestApi {
            doc: Value::Object(doc),
            resources: BTreeMap::new(),
            deployments: BTreeMap::new(),
            stages: BTreeMap::new(),
            models: BTreeMap::new(),
            validators: BTreeMap::new(),
            authorizers: BTreeMap::new(),
            gateway_responses: BTreeMap::new(),
        };
        api.resources.insert(
            root.clone(),
            Resource {
                id: root,
                parent_id: None,
                path_part: String::new(),
                methods: BTreeMap::new(),
            },
        );
        for (name, schema) in default_models() {
            api.models.insert(name.to_string(), schema);
        }
        if let Some(source) = input.get("cloneFrom").and_then(Value::as_str) {
            let Some(src) = self.read(region, |r| r.rest_apis.get(source).cloned()) else {
                return Err(RestApi::missing(self, source));
            };
            copy_tree(&src, &mut api);
        }
        let out = api.doc.clone();
        self.mutate(region, |r| {
            r.rest_apis.insert(id.clone(), api);
            r.touch(REST_API, &id);
            Ok(())
        })?;
        Ok(out)
    }

    pub fn get_rest_api(&self, region: &str, id: &str) -> Result<Value, AwsError> {
        self.api(region, id, |a| Ok(a.doc.clone()))
    }

    pub fn get_rest_apis(&self, region: &str) -> Value {
        self.read(region, |r| {
            let mut list: Vec<Value> = r.rest_apis.values().map(|a| a.doc.clone()).collect();
            list.sort_by(|a, b| s(a, "name").cmp(&s(b, "name")));
            items(list)
        })
    }

    pub fn delete_rest_api(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.mutate(region, |r| {
            if r.rest_apis.remove(id).is_none() {
                return Err(RestApi::missing(self, id));
            }
            r.touch(REST_API, id);
            // Usage plans drop the API's stages, as AWS does.
            let plans: Vec<String> = r.usage_plans.keys().cloned().collect();
            for p in plans {
                if let Some(Value::Array(stages)) = r
                    .usage_plans
                    .get_mut(&p)
                    .and_then(|d| d.get_mut("apiStages"))
                {
                    let before = stages.len();
                    stages.retain(|s| s.get("apiId").and_then(Value::as_str) != Some(id));
                    if stages.len() != before {
                        r.touch(USAGE_PLAN, &p);
                    }
                }
            }
            Ok(())
        })
    }

    pub fn update_rest_api(
        &self,
        region: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateRestApiInput")?;
        self.with_api(region, id, |api, _| {
            let mut doc = api.doc.clone();
            for op in &ops {
                let segs = op.segments();
                let first = segs.first().map(String::as_str).unwrap_or("");
                match first {
                    "name" | "description" | "policy" | "version" | "apiKeySource"
                    | "minimumCompressionSize" | "disableExecuteApiEndpoint" => {
                        if op.op != "replace" {
                            return Err(bad_request(
                                "Invalid patch operation specified. Must be one of: [replace]",
                            ));
                        }
                        if first == "minimumCompressionSize" {
                            let ok = op.value.as_deref().is_none_or(|v| {
                                v.is_empty()
                                    || v.parse::<i64>().is_ok_and(|n| (0..=10_485_760).contains(&n))
                            });
                            if !ok {
                                return Err(bad_request(
                                    "Invalid minimum compression size, must be between 0 and 10485760",
                                ));
                            }
                        }
                        let mut op = op.clone();
                        if op.value.as_deref() == Some("") && first == "minimumCompressionSize" {
                            op.value = None;
                        }
                        patch::apply_one(&mut doc, &op)?;
                    }
                    "binaryMediaTypes" if segs.len() == 2 && op.op != "replace" => {
                        if !doc["binaryMediaTypes"].is_array() {
                            doc["binaryMediaTypes"] = json!([]);
                        }
                        patch::apply_one(&mut doc, op)?;
                    }
                    "endpointConfiguration" => {
                        update_endpoint_configuration(&mut doc, op, &segs)?;
                    }
                    _ => return Err(bad_request(format!("Invalid patch path {}", op.path))),
                }
            }
            if doc.get("binaryMediaTypes").is_some_and(|b| b.as_array().is_some_and(Vec::is_empty)) {
                doc.as_object_mut().map(|m| m.remove("binaryMediaTypes"));
            }
            api.doc = doc.clone();
            Ok(doc)
        })
    }

    // ---- resources ----

    fn resource_view(resources: &BTreeMap<String, Resource>, r: &Resource, embed: bool) -> Value {
        let mut m = Map::new();
        m.insert("id".into(), r.id.clone().into());
        if let Some(p) = &r.parent_id {
            m.insert("parentId".into(), p.clone().into());
            m.insert("pathPart".into(), r.path_part.clone().into());
        }
        m.insert("path".into(), RestApi::path_of(resources, &r.id).into());
        if !r.methods.is_empty() {
            let methods: Map<String, Value> = r
                .methods
                .iter()
                .map(|(k, v)| {
                    let v = if embed { v.clone() } else { json!({}) };
                    (k.clone(), v)
                })
                .collect();
            m.insert("resourceMethods".into(), Value::Object(methods));
        }
        Value::Object(m)
    }

    pub fn get_resources(
        &self,
        region: &str,
        api_id: &str,
        embed: bool,
    ) -> Result<Value, AwsError> {
        self.api(region, api_id, |a| {
            let mut list: Vec<(String, Value)> = a
                .resources
                .values()
                .map(|r| {
                    (
                        RestApi::path_of(&a.resources, &r.id),
                        Self::resource_view(&a.resources, r, embed),
                    )
                })
                .collect();
            list.sort_by(|x, y| x.0.cmp(&y.0));
            Ok(items(list.into_iter().map(|(_, v)| v).collect()))
        })
    }

    pub fn get_resource(&self, region: &str, api_id: &str, id: &str) -> Result<Value, AwsError> {
        self.api(region, api_id, |a| {
            let r = RESOURCES.get(a, id)?;
            Ok(Self::resource_view(&a.resources, r, true))
        })
    }

    pub fn create_resource(
        &self,
        region: &str,
        api_id: &str,
        parent_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let path_part = s(input, "pathPart").unwrap_or("").to_string();
        self.with_api(region, api_id, |api, _| {
            if !api.resources.contains_key(parent_id) {
                return Err(not_found("Invalid Resource identifier specified"));
            }
            check_path_part(&api.resources, parent_id, &path_part, None)?;
            let id = ids::short();
            let r = Resource {
                id: id.clone(),
                parent_id: Some(parent_id.to_string()),
                path_part,
                methods: BTreeMap::new(),
            };
            api.resources.insert(id.clone(), r);
            let view = Self::resource_view(&api.resources, &api.resources[&id], true);
            Ok(view)
        })
    }

    pub fn update_resource(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateResourceInput")?;
        self.with_api(region, api_id, |api, _| {
            let mut res = RESOURCES.get(api, id)?.clone();
            for op in &ops {
                patch::replace_only(op, &["/parentId", "/pathPart"])?;
                let value = op.value.clone().unwrap_or_default();
                if res.parent_id.is_none() {
                    let member = op.path.trim_start_matches('/');
                    return Err(bad_request(format!(
                        "Root resource cannot update its {member}."
                    )));
                }
                if op.path == "/pathPart" {
                    res.path_part = value;
                    continue;
                }
                RESOURCES.require(api, &value)?;
                // Moving under one of its own descendants would make a cycle.
                let mut at = Some(value.clone());
                while let Some(p) = at {
                    if p == id {
                        return Err(bad_request("Resources cannot be cyclical."));
                    }
                    at = api.resources.get(&p).and_then(|r| r.parent_id.clone());
                }
                res.parent_id = Some(value);
            }
            if let Some(parent) = res.parent_id.clone() {
                check_path_part(&api.resources, &parent, &res.path_part, Some(id))?;
            }
            api.resources.insert(id.to_string(), res);
            Ok(Self::resource_view(
                &api.resources,
                &api.resources[id],
                true,
            ))
        })
    }

    pub fn delete_resource(&self, region: &str, api_id: &str, id: &str) -> Result<(), AwsError> {
        self.with_api(region, api_id, |api, _| {
            if RESOURCES.get(api, id)?.parent_id.is_none() {
                return Err(bad_request("Cannot delete root resource"));
            }
            // The resource and everything below it.
            let mut gone = vec![id.to_string()];
            let mut i = 0;
            while i < gone.len() {
                let children: Vec<String> = api
                    .resources
                    .values()
                    .filter(|r| r.parent_id.as_deref() == Some(gone[i].as_str()))
                    .map(|r| r.id.clone())
                    .collect();
                gone.extend(children);
                i += 1;
            }
            for g in gone {
                api.resources.remove(&g);
            }
            Ok(())
        })
    }

    // ---- methods ----

    fn method_mut<'a>(
        api: &'a mut RestApi,
        resource_id: &str,
        http_method: &str,
    ) -> Result<&'a mut Value, AwsError> {
        METHODS.get_mut(RESOURCES.get_mut(api, resource_id)?, http_method)
    }

    /// A method's integration.
    fn integration_mut<'a>(
        api: &'a mut RestApi,
        resource_id: &str,
        http_method: &str,
    ) -> Result<&'a mut Value, AwsError> {
        Self::method_mut(api, resource_id, http_method)?
            .get_mut("methodIntegration")
            .ok_or_else(|| not_found("Invalid Integration identifier specified"))
    }

    pub fn put_method(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        if !HTTP_METHODS.contains(&http_method) {
            return Err(bad_request(
                "Invalid HttpMethod specified. Valid options are GET,PUT,POST,DELETE,PATCH,OPTIONS,HEAD,ANY",
            ));
        }
        let auth_type = s(input, "authorizationType").unwrap_or("NONE").to_string();
        let mut m = Map::new();
        m.insert("httpMethod".into(), http_method.into());
        m.insert("authorizationType".into(), auth_type.clone().into());
        m.insert(
            "apiKeyRequired".into(),
            input
                .get("apiKeyRequired")
                .and_then(Value::as_bool)
                .unwrap_or(false)
                .into(),
        );
        copy(
            &mut m,
            input,
            &[
                "authorizerId",
                "requestParameters",
                "requestModels",
                "requestValidatorId",
                "operationName",
                "authorizationScopes",
            ],
        );
        if let Some(params) = input.get("requestParameters").and_then(Value::as_object) {
            check_method_parameters(params)?;
        }
        self.with_api(region, api_id, |api, _| {
            let res = api
                .resources
                .get(resource_id)
                .ok_or_else(|| not_found("Invalid Resource identifier specified"))?;
            let _ = res;
            if matches!(auth_type.as_str(), "CUSTOM" | "COGNITO_USER_POOLS") {
                let ok = s(input, "authorizerId").is_some_and(|a| api.authorizers.contains_key(a));
                if !ok {
                    return Err(bad_request(
                        "Invalid authorizer ID specified. Setting the authorization type to CUSTOM or COGNITO_USER_POOLS requires a valid authorizer.",
                    ));
                }
            }
            if let Some(v) = s(input, "requestValidatorId")
                && !api.validators.contains_key(v)
            {
                return Err(bad_request("Invalid Request Validator identifier specified"));
            }
            if let Some(models) = input.get("requestModels").and_then(Value::as_object) {
                for name in models.values().filter_map(Value::as_str) {
                    if !api.models.contains_key(name) {
                        return Err(bad_request(format!("Invalid model identifier specified: {name}")));
                    }
                }
            }
            let doc = Value::Object(m);
            api.resources
                .get_mut(resource_id)
                .map(|r| r.methods.insert(http_method.to_string(), doc.clone()));
            Ok(doc)
        })
    }

    pub fn get_method(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
    ) -> Result<Value, AwsError> {
        self.api(region, api_id, |a| {
            METHODS.doc(RESOURCES.get(a, resource_id)?, http_method)
        })
    }

    pub fn delete_method(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
    ) -> Result<(), AwsError> {
        self.with_api(region, api_id, |api, _| {
            METHODS
                .remove(RESOURCES.get_mut(api, resource_id)?, http_method)
                .map(drop)
        })
    }

    pub fn update_method(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateMethodInput")?;
        self.with_api(region, api_id, |api, _| {
            let authorizers = api.authorizers.clone();
            let m = Self::method_mut(api, resource_id, http_method)?;
            let mut doc = m.clone();
            for op in &ops {
                let segs = op.segments();
                match segs.first().map(String::as_str) {
                    Some("requestParameters") if segs.len() == 2 => {
                        let mut op = op.clone();
                        if op.op == "add" && op.value.is_none() {
                            op.value = Some("false".into());
                        }
                        if !doc["requestParameters"].is_object() {
                            doc["requestParameters"] = json!({});
                        }
                        let key = segs[1].clone();
                        match op.op.as_str() {
                            "remove" => {
                                doc["requestParameters"].as_object_mut().map(|p| p.remove(&key));
                            }
                            _ => {
                                doc["requestParameters"][key] =
                                    Value::Bool(op.value.as_deref() == Some("true"));
                            }
                        }
                    }
                    Some("requestModels") if segs.len() == 2 => {
                        patch::apply_one(&mut doc, op)?;
                    }
                    Some(
                        "authorizationType" | "authorizerId" | "apiKeyRequired"
                        | "requestValidatorId" | "operationName" | "authorizationScopes",
                    ) => patch::apply_one(&mut doc, op)?,
                    _ => return Err(bad_request(format!("Invalid patch path {}", op.path))),
                }
            }
            if matches!(s(&doc, "authorizationType"), Some("CUSTOM" | "COGNITO_USER_POOLS"))
                && !s(&doc, "authorizerId").is_some_and(|a| authorizers.contains_key(a))
            {
                return Err(bad_request(
                    "Invalid authorizer ID specified. Setting the authorization type to CUSTOM or COGNITO_USER_POOLS requires a valid authorizer.",
                ));
            }
            if s(&doc, "authorizationType") == Some("NONE") {
                doc.as_object_mut().map(|d| d.remove("authorizerId"));
            }
            *m = doc.clone();
            Ok(doc)
        })
    }

    // ---- method responses ----

    pub fn put_method_response(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        status: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        check_status(status)?;
        let mut m = Map::new();
        m.insert("statusCode".into(), status.into());
        copy(&mut m, input, &["responseParameters", "responseModels"]);
        let doc = Value::Object(m);
        self.with_api(region, api_id, |api, _| {
            let method = Self::method_mut(api, resource_id, http_method)?;
            METHOD_RESPONSES.insert(method, status, doc.clone());
            Ok(doc)
        })
    }

    pub fn get_method_response(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        status: &str,
    ) -> Result<Value, AwsError> {
        let m = self.get_method(region, api_id, resource_id, http_method)?;
        METHOD_RESPONSES.doc(&m, status)
    }

    pub fn delete_method_response(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        status: &str,
    ) -> Result<(), AwsError> {
        self.with_api(region, api_id, |api, _| {
            let method = Self::method_mut(api, resource_id, http_method)?;
            METHOD_RESPONSES.remove(method, status).map(drop)
        })
    }

    pub fn update_method_response(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        status: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateMethodResponseInput");
        let status_bad = check_status(status).err();
        match (ops, status_bad) {
            (Err(mut e), Some(s)) => {
                let n = e.message.split("; ").count() + 1;
                let rest = e
                    .message
                    .split_once(": ")
                    .map(|x| x.1)
                    .unwrap_or("")
                    .to_string();
                e.message = format!(
                    "{n} validation errors detected: {rest}; {}",
                    s.message.split_once(": ").map(|x| x.1).unwrap_or("")
                );
                Err(e)
            }
            (Err(e), None) => Err(e),
            (Ok(_), Some(e)) => Err(e),
            (Ok(ops), None) => self.with_api(region, api_id, |api, _| {
                let method = Self::method_mut(api, resource_id, http_method)?;
                let resp = method
                    .get_mut("methodResponses")
                    .and_then(|r| r.get_mut(status))
                    .ok_or_else(|| not_found("Invalid Response status code specified"))?;
                let mut doc = resp.clone();
                for op in &ops {
                    let segs = op.segments();
                    match segs.first().map(String::as_str) {
                        Some("responseParameters") if segs.len() == 2 => {
                            if !doc["responseParameters"].is_object() {
                                doc["responseParameters"] = json!({});
                            }
                            if op.op == "remove" {
                                doc["responseParameters"]
                                    .as_object_mut()
                                    .map(|p| p.remove(&segs[1]));
                            } else {
                                doc["responseParameters"][&segs[1]] =
                                    Value::Bool(op.value.as_deref() == Some("true"));
                            }
                        }
                        Some("responseModels") if segs.len() == 2 => {
                            if op.op == "remove" && doc["responseModels"].get(&segs[1]).is_none() {
                                return Err(not_found("Content-Type specified was not found"));
                            }
                            patch::apply_one(&mut doc, op)?;
                        }
                        _ => return Err(bad_request(format!("Invalid patch path {}", op.path))),
                    }
                }
                *resp = doc.clone();
                Ok(doc)
            }),
        }
    }

    // ---- integrations ----

    pub fn put_integration(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let kind = s(input, "type").unwrap_or("");
        if !["HTTP", "MOCK", "AWS_PROXY", "HTTP_PROXY", "AWS"].contains(&kind) {
            return Err(patch::validation_errors(&[format!(
                "Value '{kind}' at 'putIntegrationInput.type' failed to satisfy constraint: Member must satisfy enum value set: [HTTP, MOCK, AWS_PROXY, HTTP_PROXY, AWS]"
            )]));
        }
        if let Some(Value::Object(params)) = input.get("requestParameters")
            && params.values().any(|v| !v.is_string())
        {
            return Err(AwsError::bad_request(
                "SerializationException",
                "class java.lang.Boolean can not be converted to an String",
            ));
        }
        let uri = s(input, "uri").unwrap_or("");
        // The model names `integrationHttpMethod` `httpMethod` on the wire.
        let integration_method = s(input, "httpMethod").unwrap_or("");
        if kind != "MOCK" {
            if integration_method.is_empty() {
                return Err(bad_request(
                    "Enumeration value for HttpMethod must be non-empty",
                ));
            }
            check_integration_uri(kind, uri)?;
        }
        let mut m = Map::new();
        m.insert("type".into(), kind.into());
        if kind != "MOCK" {
            m.insert("httpMethod".into(), integration_method.into());
            m.insert("uri".into(), uri.into());
            m.insert(
                "connectionType".into(),
                s(input, "connectionType").unwrap_or("INTERNET").into(),
            );
        }
        copy(
            &mut m,
            input,
            &[
                "requestParameters",
                "requestTemplates",
                "credentials",
                "contentHandling",
                "connectionId",
                "tlsConfig",
            ],
        );
        m.insert(
            "passthroughBehavior".into(),
            s(input, "passthroughBehavior")
                .unwrap_or("WHEN_NO_MATCH")
                .into(),
        );
        m.insert(
            "timeoutInMillis".into(),
            input
                .get("timeoutInMillis")
                .and_then(Value::as_i64)
                .unwrap_or(29000)
                .into(),
        );
        m.insert(
            "cacheNamespace".into(),
            s(input, "cacheNamespace")
                .map_or_else(|| resource_id.to_string(), str::to_string)
                .into(),
        );
        m.insert(
            "cacheKeyParameters".into(),
            input
                .get("cacheKeyParameters")
                .cloned()
                .unwrap_or_else(|| json!([])),
        );
        let doc = Value::Object(m);
        self.with_api(region, api_id, |api, _| {
            let method = Self::method_mut(api, resource_id, http_method)?;
            method["methodIntegration"] = doc.clone();
            Ok(doc)
        })
    }

    pub fn get_integration(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
    ) -> Result<Value, AwsError> {
        let m = self.get_method(region, api_id, resource_id, http_method)?;
        m.get("methodIntegration")
            .cloned()
            .ok_or_else(|| not_found("Invalid Integration identifier specified"))
    }

    pub fn delete_integration(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
    ) -> Result<(), AwsError> {
        self.with_api(region, api_id, |api, _| {
            Self::integration_mut(api, resource_id, http_method)?;
            Self::method_mut(api, resource_id, http_method)?
                .as_object_mut()
                .map(|m| m.remove("methodIntegration"));
            Ok(())
        })
    }

    pub fn update_integration(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateIntegrationInput")?;
        self.with_api(region, api_id, |api, _| {
            let doc = Self::integration_mut(api, resource_id, http_method)?;
            patch::apply(
                doc,
                &ops,
                &[
                    "/uri",
                    "/httpMethod",
                    "/type",
                    "/credentials",
                    "/passthroughBehavior",
                    "/timeoutInMillis",
                    "/contentHandling",
                    "/connectionId",
                    "/connectionType",
                    "/cacheNamespace",
                    "/cacheKeyParameters/*",
                    "/requestParameters/*",
                    "/requestTemplates/*",
                    "/tlsConfig/*",
                ],
            )?;
            Ok(doc.clone())
        })
    }

    pub fn put_integration_response(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        status: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        check_status(status)?;
        if let Some(Value::Object(t)) = input.get("responseTemplates") {
            if t.values().any(|v| !v.is_string() && !v.is_null()) {
                return Err(AwsError::bad_request(
                    "SerializationException",
                    "class com.amazon.coral.value.json.numbers.TruncatingBigNumber can not be converted to an String",
                ));
            }
            if let Some(bad) = t.keys().find(|k| !k.contains('/')) {
                return Err(bad_request(format!(
                    "Validation Result: warnings : [], errors : [Invalid content type specified: {bad}]"
                )));
            }
        }
        let mut m = Map::new();
        m.insert("statusCode".into(), status.into());
        m.insert(
            "selectionPattern".into(),
            s(input, "selectionPattern").unwrap_or("").into(),
        );
        copy(
            &mut m,
            input,
            &["responseParameters", "responseTemplates", "contentHandling"],
        );
        if m.get("selectionPattern").and_then(Value::as_str) == Some("")
            && input.get("selectionPattern").is_none()
        {
            m.remove("selectionPattern");
            m.insert("selectionPattern".into(), "".into());
        }
        let doc = Value::Object(m);
        self.with_api(region, api_id, |api, _| {
            let method = Self::method_mut(api, resource_id, http_method)?;
            let integ = method
                .get_mut("methodIntegration")
                .ok_or_else(|| not_found("Invalid Integration identifier specified"))?;
            if !integ["integrationResponses"].is_object() {
                integ["integrationResponses"] = json!({});
            }
            integ["integrationResponses"][status] = doc.clone();
            Ok(doc)
        })
    }

    pub fn get_integration_response(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        status: &str,
    ) -> Result<Value, AwsError> {
        let i = self.get_integration(region, api_id, resource_id, http_method)?;
        INTEGRATION_RESPONSES.doc(&i, status)
    }

    pub fn delete_integration_response(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        status: &str,
    ) -> Result<(), AwsError> {
        self.with_api(region, api_id, |api, _| {
            let integ = Self::integration_mut(api, resource_id, http_method)?;
            INTEGRATION_RESPONSES.remove(integ, status).map(drop)
        })
    }

    pub fn update_integration_response(
        &self,
        region: &str,
        api_id: &str,
        resource_id: &str,
        http_method: &str,
        status: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateIntegrationResponseInput")?;
        self.with_api(region, api_id, |api, _| {
            let doc = Self::method_mut(api, resource_id, http_method)?
                .get_mut("methodIntegration")
                .ok_or_else(|| INTEGRATION_RESPONSES.not_found(status))
                .and_then(|i| INTEGRATION_RESPONSES.get_mut(i, status))?;
            patch::apply(
                doc,
                &ops,
                &[
                    "/selectionPattern",
                    "/contentHandling",
                    "/responseParameters/*",
                    "/responseTemplates/*",
                ],
            )?;
            Ok(doc.clone())
        })
    }

    // ---- deployments and stages ----

    fn snapshot(api: &RestApi) -> Snapshot {
        Snapshot {
            resources: api.resources.clone(),
            authorizers: api.authorizers.clone(),
            gateway_responses: api.gateway_responses.clone(),
            api_key_source: s(&api.doc, "apiKeySource").unwrap_or("HEADER").to_string(),
            binary_media_types: api.doc["binaryMediaTypes"]
                .as_array()
                .map(|b| {
                    b.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    pub fn create_deployment(
        &self,
        region: &str,
        api_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        if input.get("canarySettings").is_some() {
            return Err(AwsError::not_implemented(
                "apigateway",
                "CreateDeployment with canarySettings",
            ));
        }
        self.with_api(region, api_id, |api, _| {
            let has_method = api.resources.values().any(|r| !r.methods.is_empty());
            if !has_method {
                return Err(bad_request("The REST API doesn't contain any methods"));
            }
            if let Some((path, m)) = api.resources.values().find_map(|r| {
                r.methods
                    .iter()
                    .find(|(_, m)| m.get("methodIntegration").is_none())
                    .map(|(k, _)| (RestApi::path_of(&api.resources, &r.id), k.clone()))
            }) {
                let _ = path;
                let _ = m;
                return Err(bad_request("No integration defined for method"));
            }
            let id = ids::short();
            let mut m = Map::new();
            m.insert("id".into(), id.clone().into());
            m.insert("createdDate".into(), ids::now().into());
            copy(&mut m, input, &["description"]);
            let doc = Value::Object(m);
            api.deployments.insert(
                id.clone(),
                Deployment {
                    doc: doc.clone(),
                    snapshot: Self::snapshot(api),
                },
            );
            if let Some(stage) = s(input, "stageName").filter(|n| !n.is_empty()) {
                let now = ids::now();
                let entry = api.stages.entry(stage.to_string()).or_insert_with(|| {
                    json!({
                        "stageName": stage,
                        "cacheClusterEnabled": false,
                        "cacheClusterStatus": "NOT_AVAILABLE",
                        "createdDate": now,
                        "methodSettings": {},
                        "tracingEnabled": input.get("tracingEnabled").and_then(Value::as_bool).unwrap_or(false),
                    })
                });
                entry["deploymentId"] = id.clone().into();
                entry["lastUpdatedDate"] = now.into();
                if let Some(d) = s(input, "stageDescription") {
                    entry["description"] = d.into();
                }
                if let Some(v) = input.get("variables").filter(|v| v.is_object()) {
                    entry["variables"] = v.clone();
                }
            }
            Ok(doc)
        })
    }

    pub fn get_deployments(&self, region: &str, api_id: &str) -> Result<Value, AwsError> {
        self.records(&DEPLOYMENTS, region, api_id)
    }

    pub fn get_deployment(&self, region: &str, api_id: &str, id: &str) -> Result<Value, AwsError> {
        self.record(&DEPLOYMENTS, region, api_id, id)
    }

    pub fn update_deployment(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateDeploymentInput")?;
        self.with_api(region, api_id, |api, _| {
            DEPLOYMENTS.patch(api, id, &ops, &["/description"])
        })
    }

    pub fn delete_deployment(&self, region: &str, api_id: &str, id: &str) -> Result<(), AwsError> {
        self.with_api(region, api_id, |api, _| {
            DEPLOYMENTS.require(api, id)?;
            if api
                .stages
                .values()
                .any(|st| s(st, "deploymentId") == Some(id))
            {
                return Err(bad_request(
                    "Active stages pointing to this deployment must be moved or deleted",
                ));
            }
            DEPLOYMENTS.remove(api, id).map(drop)
        })
    }

    pub fn create_stage(
        &self,
        region: &str,
        api_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let name = s(input, "stageName").unwrap_or("").to_string();
        let deployment = s(input, "deploymentId").unwrap_or("").to_string();
        self.with_api(region, api_id, |api, _| {
            if name.is_empty() {
                return Err(bad_request("Stage name must be non-empty"));
            }
            if !api.deployments.contains_key(&deployment) {
                return Err(bad_request("Invalid deployment identifier specified"));
            }
            if api.stages.contains_key(&name) {
                return Err(conflict("Stage already exists"));
            }
            let now = ids::now();
            let mut m = obj(json!({
                "stageName": name,
                "deploymentId": deployment,
                "cacheClusterEnabled": input.get("cacheClusterEnabled").and_then(Value::as_bool).unwrap_or(false),
                "cacheClusterStatus": "NOT_AVAILABLE",
                "createdDate": now,
                "lastUpdatedDate": now,
                "methodSettings": {},
                "tracingEnabled": input.get("tracingEnabled").and_then(Value::as_bool).unwrap_or(false),
            }));
            if input.get("canarySettings").is_some() {
                return Err(AwsError::not_implemented("apigateway", "CreateStage with canarySettings"));
            }
            copy(&mut m, input, &["description", "variables", "cacheClusterSize", "documentationVersion"]);
            if let Some(t) = input.get("tags").filter(|t| t.as_object().is_some_and(|t| !t.is_empty())) {
                m.insert("tags".into(), t.clone());
            }
            let doc = Value::Object(m);
            api.stages.insert(name.clone(), doc.clone());
            Ok(doc)
        })
    }

    pub fn get_stages(&self, region: &str, api_id: &str) -> Result<Value, AwsError> {
        self.records(&STAGES, region, api_id)
    }

    pub fn get_stage(&self, region: &str, api_id: &str, name: &str) -> Result<Value, AwsError> {
        self.record(&STAGES, region, api_id, name)
    }

    pub fn update_stage(
        &self,
        region: &str,
        api_id: &str,
        name: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateStageInput")?;
        self.with_api(region, api_id, |api, _| {
            let mut doc = STAGES.doc(api, name)?;
            for op in &ops {
                apply_stage_op(&mut doc, op, &api.deployments)?;
            }
            doc["lastUpdatedDate"] = ids::now().into();
            api.stages.insert(name.to_string(), doc.clone());
            Ok(doc)
        })
    }

    pub fn delete_stage(&self, region: &str, api_id: &str, name: &str) -> Result<(), AwsError> {
        self.remove_record(&STAGES, region, api_id, name)
    }

    // ---- models ----

    pub fn create_model(
        &self,
        region: &str,
        api_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let name = s(input, "name").unwrap_or("").to_string();
        self.with_api(region, api_id, |api, _| {
            if name.is_empty() {
                return Err(bad_request("Model name must be non-empty"));
            }
            if api.models.contains_key(&name) {
                return Err(conflict("Model name already exists for this REST API"));
            }
            let schema = match input.get("schema") {
                Some(Value::String(t)) => serde_json::from_str::<Value>(t).ok(),
                Some(v @ Value::Object(_)) => Some(v.clone()),
                _ => None,
            };
            let Some(schema) = schema.filter(|v| v.as_object().is_some_and(|o| !o.is_empty()))
            else {
                return Err(bad_request(
                    "Model schema must have at least 1 property or array items defined",
                ));
            };
            let mut m = Map::new();
            m.insert("id".into(), ids::short().into());
            m.insert("name".into(), name.clone().into());
            m.insert(
                "contentType".into(),
                s(input, "contentType").unwrap_or("application/json").into(),
            );
            copy(&mut m, input, &["description"]);
            m.insert(
                "schema".into(),
                match input.get("schema") {
                    Some(Value::String(t)) => t.clone().into(),
                    _ => schema.to_string().into(),
                },
            );
            let doc = Value::Object(m);
            api.models.insert(name, doc.clone());
            Ok(doc)
        })
    }

    pub fn get_models(&self, region: &str, api_id: &str) -> Result<Value, AwsError> {
        self.records(&MODELS, region, api_id)
    }

    pub fn get_model(&self, region: &str, api_id: &str, name: &str) -> Result<Value, AwsError> {
        self.record(&MODELS, region, api_id, name)
    }

    pub fn update_model(
        &self,
        region: &str,
        api_id: &str,
        name: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateModelInput")?;
        self.with_api(region, api_id, |api, _| {
            MODELS.change(api, name, |doc| {
                for op in &ops {
                    patch::replace_only(op, &["/description", "/schema"])?;
                    patch::apply_one(doc, op)?;
                }
                Ok(())
            })
        })
    }

    pub fn delete_model(&self, region: &str, api_id: &str, name: &str) -> Result<(), AwsError> {
        self.with_api(region, api_id, |api, _| {
            MODELS.require(api, name)?;
            for r in api.resources.values() {
                for (verb, m) in &r.methods {
                    let uses = m["requestModels"]
                        .as_object()
                        .is_some_and(|ms| ms.values().any(|v| v.as_str() == Some(name)));
                    if uses {
                        let path = RestApi::path_of(&api.resources, &r.id);
                        let path = if path == "/" { String::new() } else { path };
                        return Err(conflict(format!(
                            "Cannot delete model '{name}', is referenced in method request: {path}/{verb}"
                        )));
                    }
                }
            }
            MODELS.remove(api, name).map(drop)
        })
    }

    // ---- request validators ----

    pub fn create_request_validator(
        &self,
        region: &str,
        api_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let result = self.with_api(region, api_id, |api, _| {
            let id = ids::short();
            let mut m = Map::new();
            m.insert("id".into(), id.clone().into());
            copy(&mut m, input, &["name"]);
            for k in ["validateRequestBody", "validateRequestParameters"] {
                m.insert(
                    k.into(),
                    input
                        .get(k)
                        .and_then(Value::as_bool)
                        .unwrap_or(false)
                        .into(),
                );
            }
            let doc = Value::Object(m);
            api.validators.insert(id, doc.clone());
            Ok(doc)
        });
        result.map_err(|e| {
            if e.code == "NotFoundException" {
                bad_request("Invalid REST API identifier specified")
            } else {
                e
            }
        })
    }

    pub fn get_request_validators(&self, region: &str, api_id: &str) -> Result<Value, AwsError> {
        self.records(&VALIDATORS, region, api_id)
    }

    pub fn get_request_validator(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
    ) -> Result<Value, AwsError> {
        self.record(&VALIDATORS, region, api_id, id)
    }

    pub fn update_request_validator(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateRequestValidatorInput")?;
        self.with_api(region, api_id, |api, _| {
            VALIDATORS.change(api, id, |doc| {
                for op in &ops {
                    patch::replace_only(
                        op,
                        &[
                            "/name",
                            "/validateRequestParameters",
                            "/validateRequestBody",
                        ],
                    )?;
                    if op.path == "/name" && op.value.as_deref().is_none_or(str::is_empty) {
                        return Err(bad_request("Request Validator name cannot be blank"));
                    }
                    patch::apply_one(doc, op)?;
                }
                Ok(())
            })
        })
    }

    pub fn delete_request_validator(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
    ) -> Result<(), AwsError> {
        self.remove_record(&VALIDATORS, region, api_id, id)
    }

    // ---- authorizers ----

    pub fn create_authorizer(
        &self,
        region: &str,
        api_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let kind = s(input, "type").unwrap_or("").to_string();
        if !["TOKEN", "REQUEST", "COGNITO_USER_POOLS"].contains(&kind.as_str()) {
            return Err(patch::validation_errors(&[format!(
                "Value '{kind}' at 'createAuthorizerInput.type' failed to satisfy constraint: Member must satisfy enum value set: [TOKEN, REQUEST, COGNITO_USER_POOLS]"
            )]));
        }
        let result = self.with_api(region, api_id, |api, _| {
            let id = ids::short();
            let mut m = Map::new();
            m.insert("id".into(), id.clone().into());
            copy(
                &mut m,
                input,
                &[
                    "name",
                    "type",
                    "providerARNs",
                    "authType",
                    "authorizerUri",
                    "authorizerCredentials",
                    "identitySource",
                    "identityValidationExpression",
                ],
            );
            if kind != "COGNITO_USER_POOLS" && !m.contains_key("authorizerUri") {
                return Err(bad_request(
                    "Authorizer URI must be specified for TOKEN and REQUEST authorizers",
                ));
            }
            m.insert(
                "authorizerResultTtlInSeconds".into(),
                input
                    .get("authorizerResultTtlInSeconds")
                    .and_then(Value::as_i64)
                    .unwrap_or(300)
                    .into(),
            );
            let doc = Value::Object(m);
            api.authorizers.insert(id, doc.clone());
            Ok(doc)
        });
        result.map_err(|e| {
            if e.code == "NotFoundException" {
                conflict("Unable to complete operation due to concurrent modification. Please try again later.")
            } else {
                e
            }
        })
    }

    pub fn get_authorizers(&self, region: &str, api_id: &str) -> Result<Value, AwsError> {
        self.records(&AUTHORIZERS, region, api_id)
    }

    pub fn get_authorizer(&self, region: &str, api_id: &str, id: &str) -> Result<Value, AwsError> {
        self.record(&AUTHORIZERS, region, api_id, id)
    }

    pub fn update_authorizer(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateAuthorizerInput")?;
        self.with_api(region, api_id, |api, _| {
            AUTHORIZERS.patch(
                api,
                id,
                &ops,
                &[
                    "/name",
                    "/type",
                    "/authType",
                    "/authorizerUri",
                    "/authorizerCredentials",
                    "/identitySource",
                    "/identityValidationExpression",
                    "/authorizerResultTtlInSeconds",
                    "/providerARNs/*",
                ],
            )
        })
    }

    pub fn delete_authorizer(&self, region: &str, api_id: &str, id: &str) -> Result<(), AwsError> {
        self.with_api(region, api_id, |api, _| {
            AUTHORIZERS.require(api, id)?;
            let used = api
                .resources
                .values()
                .any(|r| r.methods.values().any(|m| s(m, "authorizerId") == Some(id)));
            if used {
                return Err(conflict(
                    "Cannot delete authorizer, is referenced in method",
                ));
            }
            AUTHORIZERS.remove(api, id).map(drop)
        })
    }

    // ---- gateway responses ----

    fn check_response_type(t: &str) -> Result<(), AwsError> {
        if RESPONSE_TYPES.iter().any(|(n, _)| *n == t) {
            return Ok(());
        }
        Err(patch::validation_errors(&[format!(
            "Value '{t}' at 'responseType' failed to satisfy constraint: Member must satisfy enum value set: [REQUEST_TOO_LARGE, RESOURCE_NOT_FOUND, AUTHORIZER_CONFIGURATION_ERROR, MISSING_AUTHENTICATION_TOKEN, BAD_REQUEST_BODY, INVALID_SIGNATURE, INVALID_API_KEY, BAD_REQUEST_PARAMETERS, AUTHORIZER_FAILURE, UNAUTHORIZED, INTEGRATION_TIMEOUT, ACCESS_DENIED, DEFAULT_4XX, DEFAULT_5XX, WAF_FILTERED, QUOTA_EXCEEDED, THROTTLED, API_CONFIGURATION_ERROR, UNSUPPORTED_MEDIA_TYPE, INTEGRATION_FAILURE, EXPIRED_TOKEN]"
        )]))
    }

    pub fn put_gateway_response(
        &self,
        region: &str,
        api_id: &str,
        t: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        Self::check_response_type(t)?;
        self.with_api(region, api_id, |api, _| {
            let default = default_gateway_response(t);
            let mut m = Map::new();
            m.insert("defaultResponse".into(), false.into());
            m.insert(
                "responseParameters".into(),
                input
                    .get("responseParameters")
                    .cloned()
                    .unwrap_or_else(|| json!({})),
            );
            m.insert(
                "responseTemplates".into(),
                input
                    .get("responseTemplates")
                    .cloned()
                    .unwrap_or_else(|| default["responseTemplates"].clone()),
            );
            m.insert("responseType".into(), t.into());
            let status = s(input, "statusCode")
                .map(str::to_string)
                .or_else(|| s(&default, "statusCode").map(str::to_string));
            if let Some(st) = status {
                m.insert("statusCode".into(), st.into());
            }
            let doc = Value::Object(m);
            api.gateway_responses.insert(t.to_string(), doc.clone());
            Ok(doc)
        })
    }

    pub fn get_gateway_response(
        &self,
        region: &str,
        api_id: &str,
        t: &str,
    ) -> Result<Value, AwsError> {
        Self::check_response_type(t)?;
        self.api(region, api_id, |a| {
            Ok(a.gateway_responses
                .get(t)
                .cloned()
                .unwrap_or_else(|| default_gateway_response(t)))
        })
    }

    pub fn get_gateway_responses(&self, region: &str, api_id: &str) -> Result<Value, AwsError> {
        self.api(region, api_id, |a| {
            Ok(items(
                RESPONSE_TYPES
                    .iter()
                    .map(|(t, _)| {
                        a.gateway_responses
                            .get(*t)
                            .cloned()
                            .unwrap_or_else(|| default_gateway_response(t))
                    })
                    .collect(),
            ))
        })
    }

    pub fn update_gateway_response(
        &self,
        region: &str,
        api_id: &str,
        t: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        Self::check_response_type(t)?;
        let ops = patch::parse(input, "updateGatewayResponseInput")?;
        self.with_api(region, api_id, |api, _| {
            let mut doc = api
                .gateway_responses
                .get(t)
                .cloned()
                .unwrap_or_else(|| default_gateway_response(t));
            for op in &ops {
                let segs = op.segments();
                match segs.first().map(String::as_str) {
                    Some("statusCode") if op.op == "replace" => patch::apply_one(&mut doc, op)?,
                    Some(k @ ("responseParameters" | "responseTemplates")) if segs.len() == 2 => {
                        if op.op != "remove" && op.value.as_deref().is_none_or(str::is_empty) {
                            return Err(bad_request(format!("Invalid null or empty value in {k}")));
                        }
                        if op.op == "replace" && doc[k].get(&segs[1]).is_none() {
                            return Err(not_found("Invalid parameter name specified"));
                        }
                        patch::apply_one(&mut doc, op)?;
                    }
                    _ if op.path.is_empty() => return Err(bad_request("Invalid patch path null")),
                    _ => return Err(bad_request(format!("Invalid patch path {}", op.path))),
                }
            }
            doc["defaultResponse"] = false.into();
            api.gateway_responses.insert(t.to_string(), doc.clone());
            Ok(doc)
        })
    }

    pub fn delete_gateway_response(
        &self,
        region: &str,
        api_id: &str,
        t: &str,
    ) -> Result<(), AwsError> {
        Self::check_response_type(t)?;
        self.remove_record(&GATEWAY_RESPONSES, region, api_id, t)
    }

    // ---- API keys and usage plans ----

    pub fn create_api_key(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        if s(input, "name").is_some_and(|n| n.len() > 1024) {
            return Err(bad_request(
                "Invalid API Key name, can be at most 1024 characters.",
            ));
        }
        if s(input, "description").is_some_and(|n| n.len() > 125) {
            return Err(bad_request("Invalid API Key description specified."));
        }
        let value = match s(input, "value").filter(|v| !v.is_empty()) {
            Some(v) if v.len() < 20 => {
                return Err(bad_request(
                    "API Key value should be at least 20 characters",
                ));
            }
            Some(v) if v.len() > 128 => {
                return Err(bad_request(
                    "API Key value exceeds maximum size of 128 characters",
                ));
            }
            Some(v) => v.to_string(),
            None => ids::key_value(),
        };
        let id = ids::long();
        let now = ids::now();
        let mut m = obj(json!({
            "id": id,
            "value": value,
            "enabled": input.get("enabled").and_then(Value::as_bool).unwrap_or(false),
            "createdDate": now,
            "lastUpdatedDate": now,
            "stageKeys": input.get("stageKeys").and_then(Value::as_array).map(|l| {
                l.iter().map(|sk| Value::String(format!("{}/{}", s(sk, "restApiId").unwrap_or(""), s(sk, "stageName").unwrap_or("")))).collect::<Vec<_>>()
            }).unwrap_or_default(),
        }));
        copy(&mut m, input, &["name", "description", "customerId"]);
        if s(input, "name").is_some_and(str::is_empty) {
            m.remove("name");
        }
        if let Some(t) = input
            .get("tags")
            .filter(|t| t.as_object().is_some_and(|t| !t.is_empty()))
        {
            m.insert("tags".into(), t.clone());
        }
        let doc = Value::Object(m);
        self.mutate(region, |r| {
            r.api_keys.insert(id.clone(), doc.clone());
            r.touch(API_KEY, &id);
            Ok(())
        })?;
        Ok(doc)
    }

    fn key_view(doc: &Value, include_value: bool) -> Value {
        let mut d = doc.clone();
        if !include_value {
            d.as_object_mut().map(|m| m.remove("value"));
        }
        d
    }

    pub fn get_api_key(
        &self,
        region: &str,
        id: &str,
        include_value: bool,
    ) -> Result<Value, AwsError> {
        self.read(region, |r| {
            API_KEYS
                .get(r, id)
                .map(|d| Self::key_view(d, include_value))
        })
    }

    pub fn get_api_keys(
        &self,
        region: &str,
        name_query: Option<&str>,
        include_value: bool,
    ) -> Value {
        self.read(region, |r| {
            items(
                r.api_keys
                    .values()
                    .filter(|d| {
                        name_query.is_none_or(|q| s(d, "name").is_some_and(|n| n.starts_with(q)))
                    })
                    .map(|d| Self::key_view(d, include_value))
                    .collect(),
            )
        })
    }

    pub fn update_api_key(&self, region: &str, id: &str, input: &Value) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateApiKeyInput")?;
        self.mutate(region, |r| {
            let doc = API_KEYS.change(r, id, |doc| {
                for op in &ops {
                    if !["/description", "/enabled", "/name", "/customerId"].contains(&op.path.as_str()) {
                        return Err(bad_request(format!(
                            "Invalid patch path  '{}' specified for op '{}'. Must be one of: [/description, /enabled, /name, /customerId]",
                            op.path, op.op
                        )));
                    }
                    patch::apply_one(doc, op)?;
                }
                doc["lastUpdatedDate"] = ids::now().into();
                Ok(())
            })?;
            r.touch(API_KEY, id);
            Ok(Self::key_view(&doc, false))
        })
    }

    pub fn delete_api_key(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.mutate(region, |r| {
            API_KEYS.remove(r, id)?;
            r.touch(API_KEY, id);
            let plans: Vec<String> = r.usage_plan_keys.keys().cloned().collect();
            for p in plans {
                if r.usage_plan_keys.get_mut(&p).is_some_and(|k| k.remove(id)) {
                    r.touch(USAGE_PLAN, &p);
                }
            }
            Ok(())
        })
    }

    fn check_api_stages(&self, r: &Region, plan_id: &str, stages: &Value) -> Result<(), AwsError> {
        for st in stages.as_array().into_iter().flatten() {
            let api = s(st, "apiId").unwrap_or("");
            let stage = s(st, "stage").unwrap_or("");
            let ok = r
                .rest_apis
                .get(api)
                .is_some_and(|a| a.stages.contains_key(stage));
            if !ok {
                return Err(not_found(format!(
                    "Invalid API Stage {{api: {api}, stage: {stage}}} specified for usageplan {plan_id}"
                )));
            }
        }
        Ok(())
    }

    pub fn create_usage_plan(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let id = ids::short();
        let mut m = Map::new();
        m.insert("id".into(), id.clone().into());
        copy(&mut m, input, &["name", "description", "throttle", "quota"]);
        m.insert(
            "apiStages".into(),
            input.get("apiStages").cloned().unwrap_or_else(|| json!([])),
        );
        if let Some(t) = input
            .get("tags")
            .filter(|t| t.as_object().is_some_and(|t| !t.is_empty()))
        {
            m.insert("tags".into(), t.clone());
        }
        if let Some(Value::Object(q)) = m.get_mut("quota") {
            q.entry("offset").or_insert(0.into());
        }
        let doc = Value::Object(m);
        self.mutate(region, |r| {
            self.check_api_stages(r, &id, &doc["apiStages"])?;
            r.usage_plans.insert(id.clone(), doc.clone());
            r.touch(USAGE_PLAN, &id);
            Ok(())
        })?;
        Ok(doc)
    }

    pub fn get_usage_plans(&self, region: &str, key_id: Option<&str>) -> Value {
        self.read(region, |r| {
            items(
                r.usage_plans
                    .iter()
                    .filter(|(id, _)| {
                        key_id.is_none_or(|k| {
                            r.usage_plan_keys.get(*id).is_some_and(|ks| ks.contains(k))
                        })
                    })
                    .map(|(_, d)| d.clone())
                    .collect(),
            )
        })
    }

    pub fn get_usage_plan(&self, region: &str, id: &str) -> Result<Value, AwsError> {
        self.read(region, |r| USAGE_PLANS.doc(r, id))
    }

    pub fn update_usage_plan(
        &self,
        region: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateUsagePlanInput")?;
        self.mutate(region, |r| {
            let mut doc = r
                .usage_plans
                .get(id)
                .cloned()
                .ok_or_else(|| not_found("Invalid Usage Plan ID specified"))?;
            for op in &ops {
                let segs = op.segments();
                if segs.first().map(String::as_str) == Some("apiStages") {
                    let value = op.value.clone().unwrap_or_default();
                    let Some((api, stage)) = value.split_once(':') else {
                        return Err(bad_request("Invalid API Stage specified"));
                    };
                    let entry = json!({"apiId": api, "stage": stage});
                    match op.op.as_str() {
                        "add" => {
                            self.check_api_stages(r, id, &json!([entry]))?;
                            if let Some(list) = doc["apiStages"].as_array_mut()
                                && !list.contains(&entry)
                            {
                                list.push(entry);
                            }
                        }
                        "remove" => {
                            if let Some(list) = doc["apiStages"].as_array_mut() {
                                list.retain(|e| *e != entry);
                            }
                        }
                        _ => return Err(bad_request(format!("Invalid patch path {}", op.path))),
                    }
                    continue;
                }
                patch::apply(
                    &mut doc,
                    std::slice::from_ref(op),
                    &[
                        "/name",
                        "/description",
                        "/productCode",
                        "/throttle/*",
                        "/quota/*",
                    ],
                )?;
            }
            r.usage_plans.insert(id.to_string(), doc.clone());
            r.touch(USAGE_PLAN, id);
            Ok(doc)
        })
    }

    pub fn delete_usage_plan(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.mutate(region, |r| {
            USAGE_PLANS.remove(r, id)?;
            r.usage_plan_keys.remove(id);
            r.touch(USAGE_PLAN, id);
            Ok(())
        })
    }

    fn plan_key_view(key: &Value) -> Value {
        let mut m = Map::new();
        copy(&mut m, key, &["id", "name", "value"]);
        m.insert("type".into(), "API_KEY".into());
        Value::Object(m)
    }

    pub fn create_usage_plan_key(
        &self,
        region: &str,
        plan: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let key_id = s(input, "keyId").unwrap_or("").to_string();
        self.mutate(region, |r| {
            USAGE_PLANS.require(r, plan)?;
            let key = API_KEYS.doc(r, &key_id)?;
            let keys = r.usage_plan_keys.entry(plan.to_string()).or_default();
            if !keys.insert(key_id.clone()) {
                return Err(conflict("Usage Plan already contains specified API key"));
            }
            r.touch(USAGE_PLAN, plan);
            Ok(Self::plan_key_view(&key))
        })
    }

    pub fn get_usage_plan_keys(&self, region: &str, plan: &str) -> Result<Value, AwsError> {
        self.read(region, |r| {
            USAGE_PLANS.require(r, plan)?;
            Ok(items(
                r.usage_plan_keys
                    .get(plan)
                    .into_iter()
                    .flatten()
                    .filter_map(|k| r.api_keys.get(k))
                    .map(Self::plan_key_view)
                    .collect(),
            ))
        })
    }

    pub fn get_usage_plan_key(
        &self,
        region: &str,
        plan: &str,
        key: &str,
    ) -> Result<Value, AwsError> {
        self.read(region, |r| {
            USAGE_PLANS.require(r, plan)?;
            r.usage_plan_keys
                .get(plan)
                .filter(|k| k.contains(key))
                .and_then(|_| r.api_keys.get(key))
                .map(Self::plan_key_view)
                .ok_or_else(|| API_KEYS.not_found(key))
        })
    }

    pub fn delete_usage_plan_key(
        &self,
        region: &str,
        plan: &str,
        key: &str,
    ) -> Result<(), AwsError> {
        self.mutate(region, |r| {
            USAGE_PLANS.require(r, plan)?;
            if !r
                .usage_plan_keys
                .get_mut(plan)
                .is_some_and(|k| k.remove(key))
            {
                return Err(API_KEYS.not_found(key));
            }
            r.touch(USAGE_PLAN, plan);
            Ok(())
        })
    }

    // ---- domain names and base path mappings ----

    pub fn create_domain_name(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let name = s(input, "domainName").unwrap_or("").to_string();
        if name.is_empty() {
            return Err(bad_request("No Domain Name specified"));
        }
        let mut m = Map::new();
        m.insert("domainName".into(), name.clone().into());
        copy(
            &mut m,
            input,
            &[
                "certificateName",
                "certificateArn",
                "regionalCertificateName",
                "regionalCertificateArn",
                "securityPolicy",
                "mutualTlsAuthentication",
                "ownershipVerificationCertificateArn",
            ],
        );
        let types = input["endpointConfiguration"]["types"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| vec!["EDGE".into()]);
        let regional = types.iter().any(|t| t.as_str() == Some("REGIONAL"));
        m.insert("endpointConfiguration".into(), json!({"types": types}));
        m.insert("domainNameStatus".into(), "AVAILABLE".into());
        m.insert(
            "securityPolicy".into(),
            s(input, "securityPolicy").unwrap_or("TLS_1_2").into(),
        );
        if regional {
            m.insert(
                "regionalDomainName".into(),
                format!("d-{}.execute-api.{region}.amazonaws.com", ids::long()).into(),
            );
            m.insert("regionalHostedZoneId".into(), "Z1UJRXOUMOOFQ8".into());
        } else {
            m.insert(
                "distributionDomainName".into(),
                format!("{}.cloudfront.net", ids::long()).into(),
            );
            m.insert("distributionHostedZoneId".into(), "Z2FDTNDATAQYW2".into());
        }
        if let Some(t) = input
            .get("tags")
            .filter(|t| t.as_object().is_some_and(|t| !t.is_empty()))
        {
            m.insert("tags".into(), t.clone());
        }
        let doc = Value::Object(m);
        self.mutate(region, |r| {
            if r.domains.contains_key(&name) {
                return Err(conflict("The domain name you provided already exists."));
            }
            r.domains.insert(name.clone(), doc.clone());
            r.touch(DOMAIN, &name);
            Ok(())
        })?;
        Ok(doc)
    }

    pub fn get_domain_names(&self, region: &str) -> Value {
        self.read(region, |r| {
            items(
                r.domains
                    .values()
                    .map(|d| BASE_PATH_MAPPINGS.without(d))
                    .collect(),
            )
        })
    }

    pub fn get_domain_name(&self, region: &str, name: &str) -> Result<Value, AwsError> {
        self.read(region, |r| {
            DOMAINS.get(r, name).map(|d| BASE_PATH_MAPPINGS.without(d))
        })
    }

    pub fn update_domain_name(
        &self,
        region: &str,
        name: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateDomainNameInput")?;
        self.mutate(region, |r| {
            let doc = DOMAINS.patch(
                r,
                name,
                &ops,
                &[
                    "/certificateName",
                    "/certificateArn",
                    "/regionalCertificateName",
                    "/regionalCertificateArn",
                    "/securityPolicy",
                    "/endpointConfiguration/types/*",
                ],
            )?;
            r.touch(DOMAIN, name);
            Ok(BASE_PATH_MAPPINGS.without(&doc))
        })
    }

    pub fn delete_domain_name(&self, region: &str, name: &str) -> Result<(), AwsError> {
        self.mutate(region, |r| {
            DOMAINS.remove(r, name)?;
            r.touch(DOMAIN, name);
            Ok(())
        })
    }

    pub fn create_base_path_mapping(
        &self,
        region: &str,
        domain: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let base = s(input, "basePath")
            .filter(|b| !b.is_empty())
            .unwrap_or("(none)")
            .to_string();
        let api = s(input, "restApiId").unwrap_or("").to_string();
        self.mutate(region, |r| {
            let d = DOMAINS.get(r, domain)?;
            let rest = r
                .rest_apis
                .get(&api)
                .ok_or_else(|| bad_request("Invalid REST API identifier specified"))?;
            if let Some(stage) = s(input, "stage")
                && !rest.stages.contains_key(stage)
            {
                return Err(bad_request("Invalid stage identifier specified"));
            }
            if BASE_PATH_MAPPINGS.doc(d, &base).is_ok() {
                return Err(conflict("Base path already exists for this domain name"));
            }
            let mut m = Map::new();
            m.insert("basePath".into(), base.clone().into());
            m.insert("restApiId".into(), api.clone().into());
            copy(&mut m, input, &["stage"]);
            let doc = Value::Object(m);
            BASE_PATH_MAPPINGS.insert(DOMAINS.get_mut(r, domain)?, &base, doc.clone());
            r.touch(DOMAIN, domain);
            Ok(doc)
        })
    }

    pub fn get_base_path_mappings(&self, region: &str, domain: &str) -> Result<Value, AwsError> {
        self.read(region, |r| {
            Ok(items(BASE_PATH_MAPPINGS.docs(DOMAINS.get(r, domain)?)))
        })
    }

    pub fn get_base_path_mapping(
        &self,
        region: &str,
        domain: &str,
        base: &str,
    ) -> Result<Value, AwsError> {
        self.read(region, |r| {
            BASE_PATH_MAPPINGS.doc(DOMAINS.get(r, domain)?, base)
        })
    }

    pub fn update_base_path_mapping(
        &self,
        region: &str,
        domain: &str,
        base: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateBasePathMappingInput")?;
        self.mutate(region, |r| {
            let d = DOMAINS.get_mut(r, domain)?;
            let mut doc = BASE_PATH_MAPPINGS.doc(d, base)?;
            patch::apply(
                &mut doc,
                &ops,
                &["/basePath", "/restapiId", "/restApiId", "/stage"],
            )?;
            if let Some(v) = doc.as_object_mut().and_then(|m| m.remove("restapiId")) {
                doc["restApiId"] = v;
            }
            let new_base = s(&doc, "basePath").unwrap_or(base).to_string();
            if let Some(m) = d["basePathMappings"].as_object_mut() {
                m.remove(base);
                m.insert(new_base, doc.clone());
            }
            r.touch(DOMAIN, domain);
            Ok(doc)
        })
    }

    pub fn delete_base_path_mapping(
        &self,
        region: &str,
        domain: &str,
        base: &str,
    ) -> Result<(), AwsError> {
        self.mutate(region, |r| {
            BASE_PATH_MAPPINGS.remove(DOMAINS.get_mut(r, domain)?, base)?;
            r.touch(DOMAIN, domain);
            Ok(())
        })
    }

    // ---- account ----

    pub fn get_account(&self, region: &str) -> Value {
        self.read(region, |r| {
            r.account.clone().unwrap_or_else(|| {
                json!({
                    "throttleSettings": {"burstLimit": 5000, "rateLimit": 10000.0},
                    "features": ["UsagePlans"],
                    "apiKeyVersion": "4",
                })
            })
        })
    }

    pub fn update_account(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let ops = patch::parse(input, "updateAccountInput")?;
        let mut doc = self.get_account(region);
        patch::apply(&mut doc, &ops, &["/cloudwatchRoleArn", "/features/*"])?;
        self.mutate(region, |r| {
            r.account = Some(doc.clone());
            r.touch(ACCOUNT, "account");
            Ok(())
        })?;
        Ok(doc)
    }

    // ---- tags ----

    /// The record a tag ARN names (`arn:aws:apigateway:<region>::/restapis/<id>`), as the
    /// region's kind and id the tags live in, with a function reaching its document.
    fn tagged<'a>(r: &'a mut Region, path: &str) -> Option<(&'static str, String, &'a mut Value)> {
        let segs: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match segs.as_slice() {
            ["restapis", id] => r
                .rest_apis
                .get_mut(*id)
                .map(|a| (REST_API, id.to_string(), &mut a.doc)),
            ["restapis", id, "stages", st] => r
                .rest_apis
                .get_mut(*id)
                .and_then(|a| a.stages.get_mut(*st))
                .map(|d| (REST_API, id.to_string(), d)),
            ["apikeys", id] => r
                .api_keys
                .get_mut(*id)
                .map(|d| (API_KEY, id.to_string(), d)),
            ["usageplans", id] => r
                .usage_plans
                .get_mut(*id)
                .map(|d| (USAGE_PLAN, id.to_string(), d)),
            ["domainnames", id] => r.domains.get_mut(*id).map(|d| (DOMAIN, id.to_string(), d)),
            ["apis", id] => r
                .v2_apis
                .get_mut(*id)
                .map(|a| (super::state::V2_API, id.to_string(), &mut a.doc)),
            ["apis", id, "stages", st] => r
                .v2_apis
                .get_mut(*id)
                .and_then(|a| a.stages.get_mut(*st))
                .map(|d| (super::state::V2_API, id.to_string(), d)),
            ["domainnames_v2", id] => r
                .v2_domains
                .get_mut(*id)
                .map(|d| (super::state::V2_DOMAIN, id.to_string(), d)),
            _ => None,
        }
    }

    fn arn_path(arn: &str) -> Result<(String, String), AwsError> {
        let rest = arn
            .strip_prefix("arn:aws:apigateway:")
            .ok_or_else(|| bad_request(format!("Invalid ARN specified: {arn}")))?;
        let (region, path) = rest
            .split_once("::")
            .ok_or_else(|| bad_request(format!("Invalid ARN specified: {arn}")))?;
        Ok((region.to_string(), path.to_string()))
    }

    /// Tags of the record an ARN names; `v2_domain` says `/domainnames/` means a v2 domain.
    pub fn tags_of(&self, arn: &str, v2: bool) -> Result<Value, AwsError> {
        let (region, path) = Self::arn_path(arn)?;
        let path = v2_path(&path, v2);
        let mut regions = self.regions.lock();
        let r = regions.entry(region).or_default();
        let (_, _, doc) = Self::tagged(r, &path)
            .ok_or_else(|| not_found(format!("Invalid resource identifier specified: {arn}")))?;
        Ok(doc.get("tags").cloned().unwrap_or_else(|| json!({})))
    }

    pub fn tag_resource(
        &self,
        arn: &str,
        tags: &Map<String, Value>,
        v2: bool,
    ) -> Result<(), AwsError> {
        let (region, path) = Self::arn_path(arn)?;
        let path = v2_path(&path, v2);
        self.mutate(&region, |r| {
            let (kind, id, doc) = Self::tagged(r, &path).ok_or_else(|| {
                not_found(format!("Invalid resource identifier specified: {arn}"))
            })?;
            if !doc["tags"].is_object() {
                doc["tags"] = json!({});
            }
            for (k, v) in tags {
                doc["tags"][k] = v.clone();
            }
            r.touch(kind, &id);
            Ok(())
        })
    }

    pub fn untag_resource(&self, arn: &str, keys: &[String], v2: bool) -> Result<(), AwsError> {
        let (region, path) = Self::arn_path(arn)?;
        let path = v2_path(&path, v2);
        self.mutate(&region, |r| {
            let (kind, id, doc) = Self::tagged(r, &path).ok_or_else(|| {
                not_found(format!("Invalid resource identifier specified: {arn}"))
            })?;
            if let Some(t) = doc.get_mut("tags").and_then(Value::as_object_mut) {
                for k in keys {
                    t.remove(k);
                }
                if t.is_empty() {
                    doc.as_object_mut().map(|m| m.remove("tags"));
                }
            }
            r.touch(kind, &id);
            Ok(())
        })
    }

    // ---- import / export ----

    pub fn import_rest_api(
        &self,
        region: &str,
        body: &[u8],
        params: &[(String, String)],
    ) -> Result<Value, AwsError> {
        let spec = super::openapi::parse(body)?;
        let created = self.create_rest_api(region, &super::openapi::api_input(&spec, params))?;
        let id = s(&created, "id").unwrap_or("").to_string();
        let result = self.put_rest_api(region, &id, body, "overwrite", params);
        if result.is_err() {
            let _ = self.delete_rest_api(region, &id);
        }
        result
    }

    pub fn put_rest_api(
        &self,
        region: &str,
        id: &str,
        body: &[u8],
        mode: &str,
        params: &[(String, String)],
    ) -> Result<Value, AwsError> {
        let spec = super::openapi::parse(body)?;
        self.with_api(region, id, |api, _| {
            super::openapi::apply(api, &spec, mode == "merge", params)?;
            Ok(api.doc.clone())
        })
    }

    pub fn get_export(
        &self,
        region: &str,
        api_id: &str,
        stage: &str,
        export_type: &str,
        host: &str,
    ) -> Result<Value, AwsError> {
        self.api(region, api_id, |a| {
            let st = a
                .stages
                .get(stage)
                .ok_or_else(|| not_found("Invalid Stage identifier specified"))?;
            let deployment = s(st, "deploymentId")
                .and_then(|d| a.deployments.get(d))
                .ok_or_else(|| not_found("Invalid Stage identifier specified"))?;
            Ok(super::openapi::export(
                a,
                &deployment.snapshot,
                stage,
                export_type,
                host,
            ))
        })
    }
}

fn v2_path(path: &str, v2: bool) -> String {
    match path.strip_prefix("/domainnames/") {
        Some(name) if v2 => format!("/domainnames_v2/{name}"),
        _ => path.to_string(),
    }
}

/// A new RestApi document from CreateRestApi's input, checked as AWS checks it.
pub fn new_rest_api_doc(input: &Value) -> Result<Value, AwsError> {
    if s(input, "description") == Some("") {
        return Err(bad_request("Description cannot be an empty string"));
    }
    if let Some(n) = input.get("minimumCompressionSize").and_then(Value::as_i64)
        && !(0..=10_485_760).contains(&n)
    {
        return Err(bad_request(
            "Invalid minimum compression size, must be between 0 and 10485760",
        ));
    }
    let mut m = Map::new();
    copy(
        &mut m,
        input,
        &[
            "name",
            "description",
            "version",
            "binaryMediaTypes",
            "minimumCompressionSize",
            "policy",
        ],
    );
    if m.get("binaryMediaTypes")
        .is_some_and(|b| b.as_array().is_some_and(Vec::is_empty))
    {
        m.remove("binaryMediaTypes");
    }
    m.insert(
        "apiKeySource".into(),
        s(input, "apiKeySource").unwrap_or("HEADER").into(),
    );
    m.insert(
        "disableExecuteApiEndpoint".into(),
        input
            .get("disableExecuteApiEndpoint")
            .and_then(Value::as_bool)
            .unwrap_or(false)
            .into(),
    );
    m.insert(
        "endpointConfiguration".into(),
        endpoint_configuration(&input["endpointConfiguration"])?,
    );
    if let Some(t) = input
        .get("tags")
        .filter(|t| t.as_object().is_some_and(|t| !t.is_empty()))
    {
        m.insert("tags".into(), t.clone());
    }
    Ok(Value::Object(m))
}

fn endpoint_configuration(given: &Value) -> Result<Value, AwsError> {
    let types: Vec<String> = given["types"]
        .as_array()
        .map(|l| {
            l.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_else(|| vec!["EDGE".to_string()]);
    let ip = s(given, "ipAddressType").map(str::to_string);
    let mut errors = Vec::new();
    if types
        .iter()
        .any(|t| !["PRIVATE", "EDGE", "REGIONAL"].contains(&t.as_str()))
    {
        errors.push(format!(
            "Value '[{}]' at 'createRestApiInput.endpointConfiguration.types' failed to satisfy constraint: Member must satisfy constraint: [Member must satisfy enum value set: [PRIVATE, EDGE, REGIONAL]]",
            types.join(", ")
        ));
    }
    if let Some(ip) = ip.as_deref().filter(|i| !["ipv4", "dualstack"].contains(i)) {
        errors.push(format!(
            "Value '{ip}' at 'createRestApiInput.endpointConfiguration.ipAddressType' failed to satisfy constraint: Member must satisfy enum value set: [ipv4, dualstack]"
        ));
    }
    if !errors.is_empty() {
        return Err(patch::validation_errors(&errors));
    }
    if types.is_empty() {
        return Err(bad_request(
            "REGIONAL Configuration and EDGE Configuration cannot be both DISABLED.",
        ));
    }
    if types.len() > 1 {
        return Err(bad_request(
            "Cannot create an api with multiple Endpoint Types.",
        ));
    }
    let private = types[0] == "PRIVATE";
    if private && ip.as_deref() == Some("ipv4") {
        return Err(bad_request(
            "Only dualstack ipAddressType is supported for Private APIs.",
        ));
    }
    let ip = ip.unwrap_or_else(|| if private { "dualstack" } else { "ipv4" }.to_string());
    let mut out = json!({"types": types, "ipAddressType": ip});
    if let Some(v) = given.get("vpcEndpointIds") {
        out["vpcEndpointIds"] = v.clone();
    }
    Ok(out)
}

fn update_endpoint_configuration(
    doc: &mut Value,
    op: &PatchOp,
    segs: &[String],
) -> Result<(), AwsError> {
    match segs.get(1).map(String::as_str) {
        Some("types") => {
            if op.op != "replace" {
                return Err(bad_request(
                    "Invalid patch operation specified. Must be 'add'|'remove'|'replace'",
                ));
            }
            let v = op.value.clone().unwrap_or_default();
            if !["REGIONAL", "EDGE", "PRIVATE"].contains(&v.as_str()) {
                return Err(bad_request(
                    "Invalid EndpointTypes specified. Valid options are REGIONAL,EDGE,PRIVATE",
                ));
            }
            doc["endpointConfiguration"]["types"] = json!([v]);
            if v == "PRIVATE" {
                doc["endpointConfiguration"]["ipAddressType"] = "dualstack".into();
            }
            Ok(())
        }
        Some("ipAddressType") => {
            let v = op.value.clone().unwrap_or_default();
            if !["ipv4", "dualstack"].contains(&v.as_str()) {
                return Err(bad_request(
                    "ipAddressType must be either ipv4 or dualstack.",
                ));
            }
            doc["endpointConfiguration"]["ipAddressType"] = v.into();
            Ok(())
        }
        Some("vpcEndpointIds") => patch::apply_one(doc, op),
        _ => Err(bad_request(format!("Invalid patch path {}", op.path))),
    }
}

/// Checks a new or moved resource's path part against its siblings and parent.
fn check_path_part(
    resources: &BTreeMap<String, Resource>,
    parent: &str,
    part: &str,
    except: Option<&str>,
) -> Result<(), AwsError> {
    let parent_res = &resources[parent];
    if parent_res.path_part.ends_with("+}") {
        return Err(bad_request(format!(
            "Cannot create a child of a resource with a greedy path variable: {}",
            parent_res.path_part
        )));
    }
    let siblings: Vec<&Resource> = resources
        .values()
        .filter(|r| r.parent_id.as_deref() == Some(parent) && Some(r.id.as_str()) != except)
        .collect();
    if siblings.iter().any(|r| r.path_part == part) {
        return Err(conflict(format!(
            "Another resource with the same parent already has this name: {part}"
        )));
    }
    if part.starts_with('{')
        && let Some(v) = siblings.iter().find(|r| r.path_part.starts_with('{'))
    {
        return Err(bad_request(format!(
            "A sibling ({}) of this resource already has a variable path part -- only one is allowed",
            v.path_part
        )));
    }
    let valid = !part.is_empty()
        && (part.starts_with('{') && part.ends_with('}') || !part.contains(['{', '}', '/']));
    if !valid {
        return Err(bad_request(format!(
            "Resource's path part only allow a-zA-Z0-9._- and curly braces at the beginning and the end and an optional plus sign before the closing brace. {part}"
        )));
    }
    Ok(())
}

fn check_method_parameters(params: &Map<String, Value>) -> Result<(), AwsError> {
    let mut names = std::collections::BTreeSet::new();
    for (k, v) in params {
        if !v.is_boolean() {
            return Err(bad_request(format!(
                "Invalid mapping expression specified: Validation Result: warnings : [], errors : [Invalid mapping expression specified: {v}]"
            )));
        }
        let name = k.rsplit('.').next().unwrap_or(k);
        if !names.insert(name.to_string()) {
            return Err(bad_request(
                "Parameter names must be unique across querystring, header and path",
            ));
        }
    }
    Ok(())
}

fn check_status(status: &str) -> Result<(), AwsError> {
    let ok = status.len() == 3
        && status.as_bytes()[0].is_ascii_digit()
        && (b'1'..=b'5').contains(&status.as_bytes()[0])
        && status.bytes().all(|b| b.is_ascii_digit());
    if ok {
        return Ok(());
    }
    Err(patch::validation_errors(&[format!(
        "Value '{status}' at 'statusCode' failed to satisfy constraint: Member must satisfy regular expression pattern: [1-5]\\d\\d"
    )]))
}

fn check_integration_uri(kind: &str, uri: &str) -> Result<(), AwsError> {
    match kind {
        "HTTP" | "HTTP_PROXY" => {
            if !(uri.starts_with("http://") || uri.starts_with("https://")) {
                return Err(bad_request("Invalid HTTP endpoint specified for URI"));
            }
        }
        _ => {
            let Some(rest) = uri.strip_prefix("arn:") else {
                return Err(bad_request("Invalid ARN specified in the request"));
            };
            let parts: Vec<&str> = rest.splitn(5, ':').collect();
            if parts.len() < 5 || parts[1] != "apigateway" {
                return Err(bad_request("Invalid ARN specified in the request"));
            }
            let tail = parts[4];
            if !(tail.starts_with("path/") || tail.starts_with("action/")) {
                return Err(bad_request(
                    "AWS ARN for integration must contain path or action",
                ));
            }
            if kind == "AWS_PROXY" && !(parts[3] == "lambda" || parts[3] == "firehose") {
                return Err(bad_request(
                    "Integrations of type 'AWS_PROXY' currently only supports Lambda function and Firehose stream invocations.",
                ));
            }
        }
    }
    Ok(())
}

fn apply_stage_op(
    doc: &mut Value,
    op: &PatchOp,
    deployments: &BTreeMap<String, Deployment>,
) -> Result<(), AwsError> {
    let segs = op.segments();
    let first = segs.first().map(String::as_str).unwrap_or("");
    match first {
        "deploymentId" => {
            let v = op.value.clone().unwrap_or_default();
            if !deployments.contains_key(&v) {
                return Err(bad_request("Deployment id does not exist"));
            }
            doc["deploymentId"] = v.into();
            Ok(())
        }
        "description"
        | "cacheClusterEnabled"
        | "cacheClusterSize"
        | "clientCertificateId"
        | "tracingEnabled"
        | "documentationVersion"
        | "webAclArn" => patch::apply_one(doc, op),
        "variables" if segs.len() == 2 => patch::apply_one(doc, op),
        "accessLogSettings" => {
            let ok = matches!(
                segs.get(1).map(String::as_str),
                Some("destinationArn" | "format")
            );
            if op.op == "remove" && segs.len() == 1 {
                doc.as_object_mut().map(|m| m.remove("accessLogSettings"));
                return Ok(());
            }
            if !ok {
                if op.op == "remove" {
                    return Err(bad_request(format!(
                        "Cannot remove method setting {} because there is no method setting for this method ",
                        op.path.trim_start_matches('/')
                    )));
                }
                return Err(bad_request(
                    "Invalid accessLogSettings path. Must be one of : [/accessLogSettings/destinationArn, /accessLogSettings/format]",
                ));
            }
            if op.op == "remove" {
                return Err(bad_request(format!(
                    "Cannot remove method setting {} because there is no method setting for this method ",
                    op.path.trim_start_matches('/')
                )));
            }
            if op.value.as_deref().is_none_or(str::is_empty) {
                return Err(bad_request("Access Log value must not be empty"));
            }
            patch::apply_one(doc, op)
        }
        _ if segs.len() == 4 || (segs.len() == 3 && segs[0] == "*") => {
            // /{resourcePath}/{httpMethod}/{group}/{setting}: method settings, stored as AWS
            // reports them (`*/*` keys, camel-cased setting names).
            let (path, method, setting) = if segs.len() == 4 {
                (
                    segs[0].clone(),
                    segs[1].clone(),
                    format!("{}/{}", segs[2], segs[3]),
                )
            } else {
                (segs[0].clone(), segs[1].clone(), segs[2].clone())
            };
            let key = format!("{path}/{method}");
            let name = match setting.as_str() {
                "metrics/enabled" => "metricsEnabled",
                "logging/loglevel" => "loggingLevel",
                "logging/dataTrace" => "dataTraceEnabled",
                "throttling/burstLimit" => "throttlingBurstLimit",
                "throttling/rateLimit" => "throttlingRateLimit",
                "caching/enabled" => "cachingEnabled",
                "caching/ttlInSeconds" => "cacheTtlInSeconds",
                "caching/dataEncrypted" => "cacheDataEncrypted",
                "caching/requireAuthorizationForCacheControl" => {
                    "requireAuthorizationForCacheControl"
                }
                "caching/unauthorizedCacheControlHeaderStrategy" => {
                    "unauthorizedCacheControlHeaderStrategy"
                }
                _ => {
                    return Err(bad_request(format!(
                        "Invalid method setting path: {}",
                        op.path
                    )));
                }
            };
            if !doc["methodSettings"].is_object() {
                doc["methodSettings"] = json!({});
            }
            if op.op == "remove" {
                let gone = doc["methodSettings"]
                    .as_object_mut()
                    .and_then(|m| m.remove(&key));
                if gone.is_none() {
                    return Err(bad_request(format!(
                        "Cannot remove method setting {key} because there is no method setting for this method "
                    )));
                }
                return Ok(());
            }
            let entry = doc["methodSettings"]
                .as_object_mut()
                .expect("made an object above")
                .entry(key)
                .or_insert_with(|| {
                    json!({
                        "metricsEnabled": false,
                        "dataTraceEnabled": false,
                        "throttlingBurstLimit": 5000,
                        "throttlingRateLimit": 10000.0,
                        "cachingEnabled": false,
                        "cacheTtlInSeconds": 300,
                        "cacheDataEncrypted": false,
                        "requireAuthorizationForCacheControl": true,
                        "unauthorizedCacheControlHeaderStrategy": "SUCCEED_WITH_RESPONSE_HEADER",
                    })
                });
            let v = op.value.clone().unwrap_or_default();
            entry[name] = match name {
                "loggingLevel" | "unauthorizedCacheControlHeaderStrategy" => v.into(),
                "throttlingRateLimit" => v
                    .parse::<f64>()
                    .map(Value::from)
                    .unwrap_or(Value::String(v)),
                "throttlingBurstLimit" | "cacheTtlInSeconds" => v
                    .parse::<i64>()
                    .map(Value::from)
                    .unwrap_or(Value::String(v)),
                _ => Value::Bool(v == "true"),
            };
            Ok(())
        }
        _ => Err(bad_request(format!(
            "Invalid method setting path: {}. Must be one of: [/deploymentId, /description, /cacheClusterEnabled, /cacheClusterSize, /clientCertificateId, /accessLogSettings, /accessLogSettings/destinationArn, /accessLogSettings/format, /{{resourcePath}}/{{httpMethod}}/metrics/enabled, /{{resourcePath}}/{{httpMethod}}/logging/dataTrace, /{{resourcePath}}/{{httpMethod}}/logging/loglevel, /{{resourcePath}}/{{httpMethod}}/throttling/burstLimit/{{resourcePath}}/{{httpMethod}}/throttling/rateLimit/{{resourcePath}}/{{httpMethod}}/caching/ttlInSeconds, /{{resourcePath}}/{{httpMethod}}/caching/enabled, /{{resourcePath}}/{{httpMethod}}/caching/dataEncrypted, /{{resourcePath}}/{{httpMethod}}/caching/requireAuthorizationForCacheControl, /{{resourcePath}}/{{httpMethod}}/caching/unauthorizedCacheControlHeaderStrategy, /*/*/metrics/enabled, /*/*/logging/dataTrace, /*/*/logging/loglevel, /*/*/throttling/burstLimit /*/*/throttling/rateLimit /*/*/caching/ttlInSeconds, /*/*/caching/enabled, /*/*/caching/dataEncrypted, /*/*/caching/requireAuthorizationForCacheControl, /*/*/caching/unauthorizedCacheControlHeaderStrategy, /variables/{{variable_name}}, /tracingEnabled]",
            op.path
        ))),
    }
}

/// The response AWS answers for a gateway response type the API has not customised.
pub fn default_gateway_response(t: &str) -> Value {
    let status = RESPONSE_TYPES
        .iter()
        .find(|(n, _)| *n == t)
        .map(|(_, s)| *s)
        .unwrap_or("");
    let mut v = json!({
        "defaultResponse": true,
        "responseParameters": {},
        "responseTemplates": {"application/json": "{\"message\":$context.error.messageString}"},
        "responseType": t,
    });
    if !status.is_empty() {
        v["statusCode"] = status.into();
    }
    v
}

/// The models every new REST API has.
fn default_models() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Empty",
            json!({"id": ids::short(), "name": "Empty", "contentType": "application/json",
                "description": "This is a default empty schema model",
                "schema": "{\n  \"$schema\": \"http://json-schema.org/draft-04/schema#\",\n  \"title\" : \"Empty Schema\",\n  \"type\" : \"object\"\n}"}),
        ),
        (
            "Error",
            json!({"id": ids::short(), "name": "Error", "contentType": "application/json",
                "description": "This is a default error schema model",
                "schema": "{\n  \"$schema\" : \"http://json-schema.org/draft-04/schema#\",\n  \"title\" : \"Error Schema\",\n  \"type\" : \"object\",\n  \"properties\" : {\n    \"message\" : { \"type\" : \"string\" }\n  }\n}"}),
        ),
    ]
}

/// CreateRestApi's `cloneFrom`: the source's tree, models, validators, authorizers and
/// gateway responses under new ids.
fn copy_tree(src: &RestApi, dst: &mut RestApi) {
    let root = s(&dst.doc, "rootResourceId").unwrap_or("").to_string();
    let mut ids_map: BTreeMap<String, String> = BTreeMap::new();
    for r in src.resources.values() {
        let new = if r.parent_id.is_none() {
            root.clone()
        } else {
            ids::short()
        };
        ids_map.insert(r.id.clone(), new);
    }
    dst.resources.clear();
    for r in src.resources.values() {
        let id = ids_map[&r.id].clone();
        dst.resources.insert(
            id.clone(),
            Resource {
                id,
                parent_id: r.parent_id.as_ref().and_then(|p| ids_map.get(p)).cloned(),
                path_part: r.path_part.clone(),
                methods: r.methods.clone(),
            },
        );
    }
    dst.models = src.models.clone();
    dst.validators = src.validators.clone();
    dst.authorizers = src.authorizers.clone();
    dst.gateway_responses = src.gateway_responses.clone();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_configuration_defaults_and_refusals() {
        assert_eq!(
            endpoint_configuration(&Value::Null).unwrap(),
            json!({"types": ["EDGE"], "ipAddressType": "ipv4"})
        );
        let e = endpoint_configuration(&json!({"types": ["EDGE", "REGIONAL"]})).unwrap_err();
        assert_eq!(
            e.message,
            "Cannot create an api with multiple Endpoint Types."
        );
        let e = endpoint_configuration(&json!({"types": []})).unwrap_err();
        assert_eq!(
            e.message,
            "REGIONAL Configuration and EDGE Configuration cannot be both DISABLED."
        );
        let e = endpoint_configuration(&json!({"types": ["PRIVATE"], "ipAddressType": "ipv4"}))
            .unwrap_err();
        assert_eq!(
            e.message,
            "Only dualstack ipAddressType is supported for Private APIs."
        );
    }

    #[test]
    fn integration_uris_are_checked() {
        assert!(check_integration_uri("HTTP", "ftp://x").is_err());
        assert_eq!(
            check_integration_uri("AWS", "not-an-arn")
                .unwrap_err()
                .message,
            "Invalid ARN specified in the request"
        );
        assert_eq!(
            check_integration_uri("AWS", "arn:aws:apigateway:us-east-1:s3:bucket")
                .unwrap_err()
                .message,
            "AWS ARN for integration must contain path or action"
        );
        assert!(check_integration_uri(
            "AWS_PROXY",
            "arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/arn:aws:lambda:us-east-1:000000000000:function:f/invocations"
        )
        .is_ok());
    }
}
