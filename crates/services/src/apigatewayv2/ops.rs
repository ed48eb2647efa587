//! The v2 control plane as typed operations over JSON in the API's member names. Update*
//! calls take the members to change (not patch operations). A stage with `autoDeploy` gets a
//! new deployment after every change to the API's routes, integrations or authorizers.

use crate::apigateway::ApiGatewayService;
use crate::apigateway::ids;
use crate::apigateway::ops::{conflict, not_found};
use crate::apigateway::records::{Api, Kind, Nested, copy, kind, s};
use crate::apigateway::state::{Region, V2_API, V2_DOMAIN, V2Api, V2Deployment};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

pub fn bad_request(msg: impl Into<String>) -> AwsError {
    AwsError::bad_request("BadRequestException", msg)
}

fn iso_now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

fn items(list: Vec<Value>) -> Value {
    V2Api::items(list)
}

// ---- the record kinds, each declared once (see `apigateway::records`) ----

const ROUTES: Kind<V2Api> = kind!(routes, |id| format!(
    "Invalid Route identifier specified {id}"
));
const INTEGRATIONS: Kind<V2Api> = kind!(integrations, |id| format!(
    "Invalid Integration identifier specified {id}"
));
const STAGES: Kind<V2Api> = kind!(stages, |name| format!(
    "Invalid stage identifier specified {name}"
));
const DEPLOYMENTS: Kind<V2Api, V2Deployment> = kind!(deployments, |id| format!(
    "Invalid Deployment identifier specified {id}"
));
const AUTHORIZERS: Kind<V2Api> = kind!(authorizers, |id| format!(
    "Invalid Authorizer identifier specified {id}"
));
const DOMAINS: Kind<Region> = kind!(v2_domains, |name| format!(
    "Invalid domain name identifier specified {name}"
));
/// A collection of child documents kept inside a parent's document, by id, with one key
/// unique per parent: a WebSocket route's route responses, an integration's integration
/// responses (inside their parent so that a deployment's snapshot carries them to the data
/// plane), a domain name's API mappings. Declared once per collection; one set of operations
/// (`create_child`, `get_children`, `get_child`, `update_child`, `delete_child`) serves them all.
pub struct Children<H: 'static> {
    parent: Kind<H>,
    nested: Nested,
    /// The members naming a child's id and its key (`routeResponseId`, `routeResponseKey`).
    id: &'static str,
    key: &'static str,
    /// The members Create* and Update* copy from the input.
    fields: &'static [&'static str],
    /// Checks a new child's input against its holder and gives its first members.
    new: fn(&H, &Value) -> Result<Members, AwsError>,
    /// AWS's ConflictException message for a key the parent already has.
    taken: fn(&str) -> String,
}

/// A document's members.
type Members = Map<String, Value>;

/// Where a collection's parents live and how a change to them is committed.
pub trait Holder: Sized + 'static {
    /// Changes the holder (`scope` the API's id; `parent` the changed parent's id).
    fn change<T>(
        svc: &ApiGatewayService,
        region: &str,
        scope: &str,
        parent: &str,
        f: impl FnOnce(&mut Self) -> Result<T, AwsError>,
    ) -> Result<T, AwsError>;
    fn look<T>(
        svc: &ApiGatewayService,
        region: &str,
        scope: &str,
        f: impl FnOnce(&Self) -> Result<T, AwsError>,
    ) -> Result<T, AwsError>;
}

/// A v2 API's routes and integrations: the API is written back whole and auto-deployed.
impl Holder for V2Api {
    fn change<T>(
        svc: &ApiGatewayService,
        region: &str,
        scope: &str,
        _: &str,
        f: impl FnOnce(&mut Self) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        svc.within(region, scope, |api: &mut V2Api, _| {
            let out = f(api)?;
            auto_deploy(api);
            Ok(out)
        })
    }

    fn look<T>(
        svc: &ApiGatewayService,
        region: &str,
        scope: &str,
        f: impl FnOnce(&Self) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        svc.of(region, scope, f)
    }
}

/// The region's v2 domain names (no scope): the changed domain is written through.
impl Holder for Region {
    fn change<T>(
        svc: &ApiGatewayService,
        region: &str,
        _: &str,
        parent: &str,
        f: impl FnOnce(&mut Self) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        svc.mutate(region, |r| {
            let out = f(r)?;
            r.touch(V2_DOMAIN, parent);
            Ok(out)
        })
    }

    fn look<T>(
        svc: &ApiGatewayService,
        region: &str,
        _: &str,
        f: impl FnOnce(&Self) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        svc.read(region, f)
    }
}

pub const ROUTE_RESPONSES: Children<V2Api> = Children {
    parent: ROUTES,
    nested: Nested {
        member: "routeResponses",
        missing: |id| format!("Invalid RouteResponse identifier specified {id}"),
        prune: true,
    },
    id: "routeResponseId",
    key: "routeResponseKey",
    fields: &[
        "routeResponseKey",
        "modelSelectionExpression",
        "responseModels",
        "responseParameters",
    ],
    new: |_, input| required_key(input, "routeResponseKey", "RouteResponseKey"),
    taken: |key| format!("RouteResponse with key {key} already exists for this Route"),
};

pub const INTEGRATION_RESPONSES: Children<V2Api> = Children {
    parent: INTEGRATIONS,
    nested: Nested {
        member: "integrationResponses",
        missing: |id| format!("Invalid IntegrationResponse identifier specified {id}"),
        prune: true,
    },
    id: "integrationResponseId",
    key: "integrationResponseKey",
    fields: &[
        "integrationResponseKey",
        "contentHandlingStrategy",
        "responseParameters",
        "responseTemplates",
        "templateSelectionExpression",
    ],
    new: |_, input| required_key(input, "integrationResponseKey", "IntegrationResponseKey"),
    taken: |key| format!("IntegrationResponse with key {key} already exists for this Integration"),
};

pub const API_MAPPINGS: Children<Region> = Children {
    parent: DOMAINS,
    nested: Nested {
        member: "apiMappings",
        missing: |id| format!("Invalid ApiMapping identifier specified {id}"),
        prune: false,
    },
    id: "apiMappingId",
    key: "apiMappingKey",
    fields: &["apiId", "stage", "apiMappingKey"],
    new: new_api_mapping,
    taken: |_| "ApiMapping key already exists for this domain name".to_string(),
};

/// A response's first members: none, but its key is required.
fn required_key(input: &Value, member: &str, name: &str) -> Result<Map<String, Value>, AwsError> {
    if s(input, member).unwrap_or("").is_empty() {
        return Err(bad_request(format!("{name} is required")));
    }
    Ok(Map::new())
}

/// An API mapping names an API's (v2 or REST) existing stage; its key is `""` by default.
fn new_api_mapping(r: &Region, input: &Value) -> Result<Map<String, Value>, AwsError> {
    let api = s(input, "apiId").unwrap_or("");
    let stage = s(input, "stage").unwrap_or("");
    let stage_ok = r
        .v2_apis
        .get(api)
        .map(|a| a.stages.contains_key(stage))
        .or_else(|| r.rest_apis.get(api).map(|a| a.stages.contains_key(stage)));
    match stage_ok {
        None => Err(not_found(format!("Invalid API identifier specified {api}"))),
        Some(false) => Err(bad_request(format!(
            "Invalid stage identifier specified {stage}"
        ))),
        Some(true) => Ok(Map::from_iter([("apiMappingKey".to_string(), "".into())])),
    }
}

/// A route, integration or domain name as Get* answers it: without its children.
fn view<H>(c: &Children<H>, doc: &Value) -> Value {
    c.nested.without(doc)
}

const API_FIELDS: &[&str] = &[
    "name",
    "description",
    "version",
    "apiKeySelectionExpression",
    "routeSelectionExpression",
    "corsConfiguration",
    "disableExecuteApiEndpoint",
    "disableSchemaValidation",
    "ipAddressType",
];
const ROUTE_FIELDS: &[&str] = &[
    "routeKey",
    "target",
    "authorizationType",
    "authorizerId",
    "apiKeyRequired",
    "authorizationScopes",
    "operationName",
    "requestModels",
    "requestParameters",
    "modelSelectionExpression",
    "routeResponseSelectionExpression",
];
const INTEGRATION_FIELDS: &[&str] = &[
    "integrationType",
    "integrationUri",
    "integrationMethod",
    "payloadFormatVersion",
    "connectionType",
    "connectionId",
    "credentialsArn",
    "description",
    "timeoutInMillis",
    "requestParameters",
    "requestTemplates",
    "responseParameters",
    "templateSelectionExpression",
    "passthroughBehavior",
    "contentHandlingStrategy",
    "integrationSubtype",
    "tlsConfig",
];
const STAGE_FIELDS: &[&str] = &[
    "autoDeploy",
    "deploymentId",
    "description",
    "stageVariables",
    "defaultRouteSettings",
    "routeSettings",
    "accessLogSettings",
    "clientCertificateId",
];
const AUTHORIZER_FIELDS: &[&str] = &[
    "name",
    "authorizerType",
    "authorizerUri",
    "authorizerCredentialsArn",
    "authorizerPayloadFormatVersion",
    "authorizerResultTtlInSeconds",
    "enableSimpleResponses",
    "identitySource",
    "identityValidationExpression",
    "jwtConfiguration",
];

impl ApiGatewayService {
    fn v2_not_found(&self, id: &str) -> AwsError {
        V2Api::missing(self, id)
    }

    fn with_v2<T>(
        &self,
        region: &str,
        api_id: &str,
        f: impl FnOnce(&mut V2Api) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        self.within(region, api_id, |api, _| f(api))
    }

    fn v2<T>(
        &self,
        region: &str,
        api_id: &str,
        f: impl FnOnce(&V2Api) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        self.of(region, api_id, f)
    }

    // ---- APIs ----

    pub fn create_api(&self, region: &str, host: &str, input: &Value) -> Result<Value, AwsError> {
        let name = s(input, "name").unwrap_or("");
        if name.is_empty() {
            return Err(bad_request("Name is required"));
        }
        let protocol = s(input, "protocolType").unwrap_or("");
        if protocol != "HTTP" && protocol != "WEBSOCKET" {
            return Err(bad_request(format!(
                "Invalid protocol type {protocol}. Must be HTTP or WEBSOCKET"
            )));
        }
        if protocol == "WEBSOCKET" && s(input, "routeSelectionExpression").is_none() {
            return Err(bad_request(
                "RouteSelectionExpression is required for WEBSOCKET APIs",
            ));
        }
        let id = ids::long();
        let mut m = Map::new();
        m.insert("apiId".into(), id.clone().into());
        m.insert("protocolType".into(), protocol.into());
        m.insert("createdDate".into(), iso_now().into());
        m.insert(
            "apiKeySelectionExpression".into(),
            "$request.header.x-api-key".into(),
        );
        m.insert("disableExecuteApiEndpoint".into(), false.into());
        m.insert(
            "routeSelectionExpression".into(),
            "$request.method $request.path".into(),
        );
        copy(&mut m, input, API_FIELDS);
        let scheme = if protocol == "WEBSOCKET" {
            "ws"
        } else {
            "http"
        };
        // `<id>.execute-api.localhost:<port>`, whatever address the client used: the name
        // resolves to the loopback and the gateway routes it by its first label.
        let port = host.rsplit_once(':').map_or("4566", |(_, p)| p);
        m.insert(
            "apiEndpoint".into(),
            format!("{scheme}://{id}.execute-api.localhost:{port}").into(),
        );
        if let Some(t) = input
            .get("tags")
            .filter(|t| t.as_object().is_some_and(|t| !t.is_empty()))
        {
            m.insert("tags".into(), t.clone());
        }
        let mut api = V2Api {
            doc: Value::Object(m),
            ..V2Api::default()
        };
        // Quick create: a Lambda or HTTP target, a route and a `$default` auto-deploying stage.
        if let Some(target) = s(input, "target") {
            if protocol != "HTTP" {
                return Err(bad_request("Quick create is only supported for HTTP APIs"));
            }
            let integration_id = ids::seven();
            let lambda = target.starts_with("arn:");
            let uri = target.to_string();
            api.integrations.insert(
                integration_id.clone(),
                json!({
                    "integrationId": integration_id,
                    "integrationType": if lambda { "AWS_PROXY" } else { "HTTP_PROXY" },
                    "integrationUri": uri,
                    "integrationMethod": if lambda { "POST" } else { "ANY" },
                    "payloadFormatVersion": if lambda { "2.0" } else { "1.0" },
                    "connectionType": "INTERNET",
                    "timeoutInMillis": 30000,
                    "apiGatewayManaged": true,
                }),
            );
            let route_id = ids::seven();
            api.routes.insert(
                route_id.clone(),
                json!({
                    "routeId": route_id,
                    "routeKey": s(input, "routeKey").unwrap_or("$default"),
                    "target": format!("integrations/{integration_id}"),
                    "authorizationType": "NONE",
                    "apiKeyRequired": false,
                    "apiGatewayManaged": true,
                }),
            );
            let now = iso_now();
            api.stages.insert(
                "$default".into(),
                json!({
                    "stageName": "$default", "autoDeploy": true, "createdDate": now,
                    "lastUpdatedDate": now, "defaultRouteSettings": {"detailedMetricsEnabled": false},
                    "routeSettings": {}, "stageVariables": {}, "tags": {}, "apiGatewayManaged": true,
                }),
            );
            auto_deploy(&mut api);
        }
        let doc = api.doc.clone();
        self.mutate(region, |r| {
            r.v2_apis.insert(id.clone(), api);
            r.touch(V2_API, &id);
            Ok(())
        })?;
        Ok(doc)
    }

    pub fn get_api(&self, region: &str, id: &str) -> Result<Value, AwsError> {
        self.v2(region, id, |a| Ok(a.doc.clone()))
    }

    pub fn get_apis(&self, region: &str) -> Value {
        self.read(region, |r| {
            items(r.v2_apis.values().map(|a| a.doc.clone()).collect())
        })
    }

    pub fn update_api(&self, region: &str, id: &str, input: &Value) -> Result<Value, AwsError> {
        self.with_v2(region, id, |api| {
            let mut m = api.doc.as_object().cloned().unwrap_or_default();
            copy(&mut m, input, API_FIELDS);
            api.doc = Value::Object(m);
            Ok(api.doc.clone())
        })
    }

    pub fn delete_api(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.mutate(region, |r| {
            r.v2_apis.remove(id).ok_or_else(|| self.v2_not_found(id))?;
            r.touch(V2_API, id);
            Ok(())
        })
    }

    pub fn delete_cors_configuration(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.with_v2(region, id, |api| {
            api.doc
                .as_object_mut()
                .map(|m| m.remove("corsConfiguration"));
            Ok(())
        })
    }

    /// ImportApi / ReimportApi and CloudFormation's `Body`: an OpenAPI 3 definition with
    /// `x-amazon-apigateway-integration` on its operations becomes routes and integrations, its
    /// security schemes authorizers and its operations' `security` their routes' (`openapi_auth`).
    pub fn import_api(
        &self,
        region: &str,
        host: &str,
        api_id: Option<&str>,
        body: &Value,
    ) -> Result<Value, AwsError> {
        let spec = match body.get("body") {
            Some(Value::String(t)) => crate::apigateway::openapi_parse(t.as_bytes())?,
            Some(v @ Value::Object(_)) => v.clone(),
            _ => return Err(bad_request("Invalid OpenAPI input.")),
        };
        let id = match api_id {
            Some(id) => id.to_string(),
            None => {
                let title = spec["info"]["title"].as_str().unwrap_or("imported");
                let created = self.create_api(
                    region,
                    host,
                    &json!({"name": title, "protocolType": "HTTP"}),
                )?;
                created["apiId"].as_str().unwrap_or("").to_string()
            }
        };
        let auth = super::openapi_auth::import(&spec);
        self.with_v2(region, &id, |api| {
            api.routes.clear();
            api.integrations.clear();
            // The definition's authorizers replace those of the same names; authorizers made
            // apart (CreateAuthorizer, AWS::ApiGatewayV2::Authorizer) stay.
            api.authorizers
                .retain(|_, a| !auth.declares(a["name"].as_str().unwrap_or("")));
            api.authorizers.extend(auth.authorizers.clone());
            if let Some(t) = spec["info"]["title"].as_str() {
                api.doc["name"] = t.into();
            }
            for (path, item) in spec["paths"].as_object().into_iter().flatten() {
                for (verb, op) in item.as_object().into_iter().flatten() {
                    let method = match verb.as_str() {
                        "x-amazon-apigateway-any-method" => "ANY".to_string(),
                        v if ["get", "put", "post", "delete", "patch", "options", "head"].contains(&v) => v.to_ascii_uppercase(),
                        _ => continue,
                    };
                    let route_key = if path == "$default" { "$default".to_string() } else { format!("{method} {path}") };
                    let route_id = ids::seven();
                    let mut route = json!({"routeId": route_id, "routeKey": route_key,
                        "authorizationType": "NONE", "apiKeyRequired": false});
                    if let Some(i) = op.get("x-amazon-apigateway-integration") {
                        let integration_id = ids::seven();
                        let kind = i["type"].as_str().unwrap_or("aws_proxy").to_ascii_uppercase();
                        api.integrations.insert(integration_id.clone(), json!({
                            "integrationId": integration_id,
                            "integrationType": kind,
                            "integrationUri": i["uri"].as_str().unwrap_or(""),
                            "integrationMethod": i["httpMethod"].as_str().unwrap_or("POST"),
                            "payloadFormatVersion": i["payloadFormatVersion"].as_str().unwrap_or(if kind == "AWS_PROXY" { "2.0" } else { "1.0" }),
                            "connectionType": "INTERNET",
                            "timeoutInMillis": i["timeoutInMillis"].as_i64().unwrap_or(30000),
                        }));
                        route["target"] = format!("integrations/{integration_id}").into();
                    }
                    auth.apply(op, &mut route);
                    api.routes.insert(route_id, route);
                }
            }
            if let Some(c) = spec.get("x-amazon-apigateway-cors") {
                api.doc["corsConfiguration"] = c.clone();
            }
            if let Some(d) = spec["servers"][0]["x-amazon-apigateway-endpoint-configuration"]
                .get("disableExecuteApiEndpoint")
                .filter(|d| d.is_boolean())
            {
                api.doc["disableExecuteApiEndpoint"] = d.clone();
            }
            auto_deploy(api);
            Ok(api.doc.clone())
        })
    }

    // ---- routes ----

    pub fn create_route(
        &self,
        region: &str,
        api_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let key = s(input, "routeKey").unwrap_or("").to_string();
        self.with_v2(region, api_id, |api| {
            check_route_key(api, &key)?;
            if api
                .routes
                .values()
                .any(|r| s(r, "routeKey") == Some(key.as_str()))
            {
                return Err(conflict(format!(
                    "Route with key {key} already exists for this API"
                )));
            }
            check_route_refs(api, input)?;
            let id = ids::seven();
            let mut m = Map::new();
            m.insert("routeId".into(), id.clone().into());
            m.insert("authorizationType".into(), "NONE".into());
            m.insert("apiKeyRequired".into(), false.into());
            copy(&mut m, input, ROUTE_FIELDS);
            let doc = Value::Object(m);
            api.routes.insert(id, doc.clone());
            auto_deploy(api);
            Ok(doc)
        })
    }

    pub fn get_routes(&self, region: &str, api_id: &str) -> Result<Value, AwsError> {
        self.v2(region, api_id, |api| {
            Ok(items(
                ROUTES
                    .docs(api)
                    .iter()
                    .map(|d| view(&ROUTE_RESPONSES, d))
                    .collect(),
            ))
        })
    }

    pub fn get_route(&self, region: &str, api_id: &str, id: &str) -> Result<Value, AwsError> {
        self.v2(region, api_id, |api| {
            Ok(view(&ROUTE_RESPONSES, &ROUTES.doc(api, id)?))
        })
    }

    // ---- child collections: route and integration responses, API mappings ----

    pub fn create_child<H: Holder>(
        &self,
        c: &Children<H>,
        region: &str,
        scope: &str,
        parent_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        H::change(self, region, scope, parent_id, |h| {
            c.parent.require(h, parent_id)?;
            let mut m = (c.new)(h, input)?;
            let id = ids::seven();
            m.insert(c.id.into(), id.clone().into());
            copy(&mut m, input, c.fields);
            let doc = Value::Object(m);
            let key = s(&doc, c.key).unwrap_or("");
            let parent = c.parent.get_mut(h, parent_id)?;
            if c.nested
                .docs(parent)
                .iter()
                .any(|x| s(x, c.key) == Some(key))
            {
                return Err(conflict((c.taken)(key)));
            }
            c.nested.insert(parent, &id, doc.clone());
            Ok(doc)
        })
    }

    pub fn get_children<H: Holder>(
        &self,
        c: &Children<H>,
        region: &str,
        scope: &str,
        parent_id: &str,
    ) -> Result<Value, AwsError> {
        H::look(self, region, scope, |h| {
            Ok(items(c.nested.docs(c.parent.get(h, parent_id)?)))
        })
    }

    pub fn get_child<H: Holder>(
        &self,
        c: &Children<H>,
        region: &str,
        scope: &str,
        parent_id: &str,
        id: &str,
    ) -> Result<Value, AwsError> {
        H::look(self, region, scope, |h| {
            c.nested.doc(c.parent.get(h, parent_id)?, id)
        })
    }

    pub fn update_child<H: Holder>(
        &self,
        c: &Children<H>,
        region: &str,
        scope: &str,
        parent_id: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        H::change(self, region, scope, parent_id, |h| {
            let doc = c.nested.get_mut(c.parent.get_mut(h, parent_id)?, id)?;
            if let Some(m) = doc.as_object_mut() {
                copy(m, input, c.fields);
            }
            Ok(doc.clone())
        })
    }

    pub fn delete_child<H: Holder>(
        &self,
        c: &Children<H>,
        region: &str,
        scope: &str,
        parent_id: &str,
        id: &str,
    ) -> Result<(), AwsError> {
        H::change(self, region, scope, parent_id, |h| {
            c.nested
                .remove(c.parent.get_mut(h, parent_id)?, id)
                .map(drop)
        })
    }

    pub fn update_route(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        self.with_v2(region, api_id, |api| {
            ROUTES.require(api, id)?;
            if let Some(k) = s(input, "routeKey") {
                check_route_key(api, k)?;
            }
            check_route_refs(api, input)?;
            let doc = ROUTES.merge(api, id, input, ROUTE_FIELDS)?;
            auto_deploy(api);
            Ok(view(&ROUTE_RESPONSES, &doc))
        })
    }

    pub fn delete_route(&self, region: &str, api_id: &str, id: &str) -> Result<(), AwsError> {
        self.with_v2(region, api_id, |api| {
            ROUTES.remove(api, id)?;
            auto_deploy(api);
            Ok(())
        })
    }

    // ---- integrations ----

    pub fn create_integration(
        &self,
        region: &str,
        api_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let kind = s(input, "integrationType").unwrap_or("");
        if !["AWS", "AWS_PROXY", "HTTP", "HTTP_PROXY", "MOCK"].contains(&kind) {
            return Err(bad_request(format!("Invalid integration type {kind}")));
        }
        self.with_v2(region, api_id, |api| {
            let http = s(&api.doc, "protocolType") == Some("HTTP");
            if http && kind == "AWS_PROXY" && s(input, "payloadFormatVersion").is_none() {
                return Err(bad_request(
                    "PayloadFormatVersion is required for AWS_PROXY integrations of HTTP APIs",
                ));
            }
            let id = ids::seven();
            let mut m = Map::new();
            m.insert("integrationId".into(), id.clone().into());
            m.insert("connectionType".into(), "INTERNET".into());
            m.insert(
                "timeoutInMillis".into(),
                (if http { 30000 } else { 29000 }).into(),
            );
            m.insert("payloadFormatVersion".into(), "1.0".into());
            if kind == "AWS_PROXY" {
                m.insert("integrationMethod".into(), "POST".into());
            }
            // What selects a WebSocket non-proxy integration's response, fixed by its type.
            let selection = match kind {
                "AWS" => Some("${integration.response.body.errorMessage}"),
                "HTTP" | "MOCK" => Some("${integration.response.statuscode}"),
                _ => None,
            };
            if let Some(e) = selection.filter(|_| !http) {
                m.insert("integrationResponseSelectionExpression".into(), e.into());
            }
            copy(&mut m, input, INTEGRATION_FIELDS);
            let doc = Value::Object(m);
            api.integrations.insert(id, doc.clone());
            auto_deploy(api);
            Ok(doc)
        })
    }

    pub fn get_integrations(&self, region: &str, api_id: &str) -> Result<Value, AwsError> {
        self.v2(region, api_id, |api| {
            Ok(items(
                INTEGRATIONS
                    .docs(api)
                    .iter()
                    .map(|d| view(&INTEGRATION_RESPONSES, d))
                    .collect(),
            ))
        })
    }

    pub fn get_integration_v2(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
    ) -> Result<Value, AwsError> {
        self.v2(region, api_id, |api| {
            Ok(view(&INTEGRATION_RESPONSES, &INTEGRATIONS.doc(api, id)?))
        })
    }

    pub fn update_integration_v2(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        self.with_v2(region, api_id, |api| {
            let doc = INTEGRATIONS.merge(api, id, input, INTEGRATION_FIELDS)?;
            auto_deploy(api);
            Ok(view(&INTEGRATION_RESPONSES, &doc))
        })
    }

    pub fn delete_integration_v2(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
    ) -> Result<(), AwsError> {
        self.with_v2(region, api_id, |api| {
            INTEGRATIONS.require(api, id)?;
            let target = format!("integrations/{id}");
            if api
                .routes
                .values()
                .any(|r| s(r, "target") == Some(target.as_str()))
            {
                return Err(conflict(format!(
                    "Integration {id} is referenced by a route"
                )));
            }
            INTEGRATIONS.remove(api, id)?;
            auto_deploy(api);
            Ok(())
        })
    }

    // ---- stages and deployments ----

    pub fn create_stage_v2(
        &self,
        region: &str,
        api_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let name = s(input, "stageName").unwrap_or("").to_string();
        self.with_v2(region, api_id, |api| {
            if name.is_empty() {
                return Err(bad_request("Stage name is required"));
            }
            if api.stages.contains_key(&name) {
                return Err(conflict(format!("Stage {name} already exists")));
            }
            if let Some(d) = s(input, "deploymentId")
                && !api.deployments.contains_key(d)
            {
                return Err(bad_request(format!(
                    "Invalid deployment identifier specified {d}"
                )));
            }
            let now = iso_now();
            let mut m = Map::new();
            m.insert("stageName".into(), name.clone().into());
            m.insert("createdDate".into(), now.clone().into());
            m.insert("lastUpdatedDate".into(), now.into());
            m.insert("autoDeploy".into(), false.into());
            m.insert(
                "defaultRouteSettings".into(),
                json!({"detailedMetricsEnabled": false}),
            );
            m.insert("routeSettings".into(), json!({}));
            m.insert("stageVariables".into(), json!({}));
            m.insert("tags".into(), json!({}));
            copy(&mut m, input, STAGE_FIELDS);
            copy(&mut m, input, &["tags"]);
            api.stages.insert(name.clone(), Value::Object(m));
            if api.stages[&name]["autoDeploy"] == true {
                auto_deploy(api);
            }
            Ok(api.stages[&name].clone())
        })
    }

    pub fn get_stages_v2(&self, region: &str, api_id: &str) -> Result<Value, AwsError> {
        self.records(&STAGES, region, api_id)
    }

    pub fn get_stage_v2(&self, region: &str, api_id: &str, name: &str) -> Result<Value, AwsError> {
        self.record(&STAGES, region, api_id, name)
    }

    pub fn update_stage_v2(
        &self,
        region: &str,
        api_id: &str,
        name: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        self.with_v2(region, api_id, |api| {
            STAGES.require(api, name)?;
            if let Some(d) = s(input, "deploymentId")
                && !api.deployments.contains_key(d)
            {
                return Err(bad_request(format!(
                    "Invalid deployment identifier specified {d}"
                )));
            }
            STAGES.merge(api, name, input, STAGE_FIELDS)?;
            let stage = STAGES.get_mut(api, name)?;
            stage["lastUpdatedDate"] = iso_now().into();
            if stage["autoDeploy"] == true {
                auto_deploy(api);
            }
            STAGES.doc(api, name)
        })
    }

    pub fn delete_stage_v2(&self, region: &str, api_id: &str, name: &str) -> Result<(), AwsError> {
        self.remove_record(&STAGES, region, api_id, name)
    }

    pub fn create_deployment_v2(
        &self,
        region: &str,
        api_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        self.with_v2(region, api_id, |api| {
            let stage = s(input, "stageName").map(str::to_string);
            if let Some(st) = &stage {
                if !api.stages.contains_key(st) {
                    return Err(bad_request(format!(
                        "Invalid stage identifier specified {st}"
                    )));
                }
                if api.stages[st]["autoDeploy"] == true {
                    return Err(bad_request(format!(
                        "Stage {st} has autoDeploy enabled; it cannot be deployed to"
                    )));
                }
            }
            let d = deploy(api, s(input, "description"), false);
            if let Some(st) = stage
                && let Some(s) = api.stages.get_mut(&st)
            {
                s["deploymentId"] = d["deploymentId"].clone();
                s["lastUpdatedDate"] = iso_now().into();
            }
            Ok(d)
        })
    }

    pub fn get_deployments_v2(&self, region: &str, api_id: &str) -> Result<Value, AwsError> {
        self.records(&DEPLOYMENTS, region, api_id)
    }

    pub fn get_deployment_v2(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
    ) -> Result<Value, AwsError> {
        self.record(&DEPLOYMENTS, region, api_id, id)
    }

    pub fn delete_deployment_v2(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
    ) -> Result<(), AwsError> {
        self.remove_record(&DEPLOYMENTS, region, api_id, id)
    }

    // ---- authorizers ----

    pub fn create_authorizer_v2(
        &self,
        region: &str,
        api_id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        let kind = s(input, "authorizerType").unwrap_or("");
        if kind != "JWT" && kind != "REQUEST" {
            return Err(bad_request(format!("Invalid authorizer type {kind}")));
        }
        if kind == "JWT" && input.get("jwtConfiguration").is_none() {
            return Err(bad_request(
                "JwtConfiguration is required for JWT authorizers",
            ));
        }
        if kind == "REQUEST" && s(input, "authorizerUri").is_none() {
            return Err(bad_request(
                "AuthorizerUri is required for REQUEST authorizers",
            ));
        }
        self.with_v2(region, api_id, |api| {
            let id = ids::short();
            let mut m = Map::new();
            m.insert("authorizerId".into(), id.clone().into());
            copy(&mut m, input, AUTHORIZER_FIELDS);
            let doc = Value::Object(m);
            api.authorizers.insert(id, doc.clone());
            auto_deploy(api);
            Ok(doc)
        })
    }

    pub fn get_authorizers_v2(&self, region: &str, api_id: &str) -> Result<Value, AwsError> {
        self.records(&AUTHORIZERS, region, api_id)
    }

    pub fn get_authorizer_v2(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
    ) -> Result<Value, AwsError> {
        self.record(&AUTHORIZERS, region, api_id, id)
    }

    pub fn update_authorizer_v2(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        self.with_v2(region, api_id, |api| {
            let doc = AUTHORIZERS.merge(api, id, input, AUTHORIZER_FIELDS)?;
            auto_deploy(api);
            Ok(doc)
        })
    }

    pub fn delete_authorizer_v2(
        &self,
        region: &str,
        api_id: &str,
        id: &str,
    ) -> Result<(), AwsError> {
        self.with_v2(region, api_id, |api| {
            if api
                .routes
                .values()
                .any(|r| s(r, "authorizerId") == Some(id))
            {
                return Err(conflict(format!(
                    "Authorizer {id} is referenced by a route"
                )));
            }
            AUTHORIZERS.remove(api, id)?;
            auto_deploy(api);
            Ok(())
        })
    }

    // ---- domain names and API mappings ----

    pub fn create_domain_name_v2(&self, region: &str, input: &Value) -> Result<Value, AwsError> {
        let name = s(input, "domainName").unwrap_or("").to_string();
        if name.is_empty() {
            return Err(bad_request("DomainName is required"));
        }
        let configs: Vec<Value> = input["domainNameConfigurations"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .map(|c| {
                let mut c = c;
                c["apiGatewayDomainName"] =
                    format!("d-{}.execute-api.{region}.amazonaws.com", ids::long()).into();
                c["hostedZoneId"] = "Z1UJRXOUMOOFQ8".into();
                c["domainNameStatus"] = "AVAILABLE".into();
                if c.get("endpointType").is_none() {
                    c["endpointType"] = "REGIONAL".into();
                }
                if c.get("securityPolicy").is_none() {
                    c["securityPolicy"] = "TLS_1_2".into();
                }
                c
            })
            .collect();
        let mut m = Map::new();
        m.insert("domainName".into(), name.clone().into());
        m.insert(
            "apiMappingSelectionExpression".into(),
            "$request.basepath".into(),
        );
        m.insert("domainNameConfigurations".into(), Value::Array(configs));
        copy(&mut m, input, &["mutualTlsAuthentication"]);
        m.insert(
            "tags".into(),
            input.get("tags").cloned().unwrap_or_else(|| json!({})),
        );
        let doc = Value::Object(m);
        self.mutate(region, |r| {
            if r.v2_domains.contains_key(&name) {
                return Err(conflict(format!(
                    "The domain name resource already exists: {name}"
                )));
            }
            r.v2_domains.insert(name.clone(), doc.clone());
            r.touch(V2_DOMAIN, &name);
            Ok(())
        })?;
        Ok(doc)
    }

    pub fn get_domain_names_v2(&self, region: &str) -> Value {
        self.read(region, |r| {
            items(
                r.v2_domains
                    .values()
                    .map(|d| view(&API_MAPPINGS, d))
                    .collect(),
            )
        })
    }

    pub fn get_domain_name_v2(&self, region: &str, name: &str) -> Result<Value, AwsError> {
        self.read(region, |r| {
            DOMAINS.get(r, name).map(|d| view(&API_MAPPINGS, d))
        })
    }

    pub fn update_domain_name_v2(
        &self,
        region: &str,
        name: &str,
        input: &Value,
    ) -> Result<Value, AwsError> {
        self.mutate(region, |r| {
            let doc = DOMAINS.change(r, name, |d| {
                if let Some(c) = input.get("domainNameConfigurations") {
                    d["domainNameConfigurations"] = c.clone();
                }
                Ok(())
            })?;
            r.touch(V2_DOMAIN, name);
            Ok(view(&API_MAPPINGS, &doc))
        })
    }

    pub fn delete_domain_name_v2(&self, region: &str, name: &str) -> Result<(), AwsError> {
        self.mutate(region, |r| {
            DOMAINS.remove(r, name)?;
            r.touch(V2_DOMAIN, name);
            Ok(())
        })
    }
}

/// A route key of the API's protocol: `$default`, or `METHOD /path` for HTTP APIs.
fn check_route_key(api: &V2Api, key: &str) -> Result<(), AwsError> {
    if key.is_empty() {
        return Err(bad_request("RouteKey is required"));
    }
    if key == "$default" || s(&api.doc, "protocolType") == Some("WEBSOCKET") {
        return Ok(());
    }
    let ok = key.split_once(' ').is_some_and(|(m, p)| {
        [
            "ANY", "GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "HEAD",
        ]
        .contains(&m)
            && p.starts_with('/')
    });
    if !ok {
        return Err(bad_request(format!(
            "Unable to create route {key}. Route key must be $default or an HTTP method followed by a path."
        )));
    }
    Ok(())
}

fn check_route_refs(api: &V2Api, input: &Value) -> Result<(), AwsError> {
    if let Some(t) = s(input, "target") {
        let ok = t
            .strip_prefix("integrations/")
            .is_some_and(|i| api.integrations.contains_key(i));
        if !ok {
            return Err(bad_request(format!("Invalid target specified {t}")));
        }
    }
    match s(input, "authorizerId") {
        Some(a) => AUTHORIZERS.require(api, a),
        None => Ok(()),
    }
}

/// A new deployment of the API as it is now.
fn deploy(api: &mut V2Api, description: Option<&str>, auto: bool) -> Value {
    let id = ids::short();
    let mut doc = json!({"deploymentId": id, "deploymentStatus": "DEPLOYED",
        "createdDate": iso_now(), "autoDeployed": auto});
    if let Some(d) = description {
        doc["description"] = d.into();
    }
    api.deployments.insert(
        id,
        V2Deployment {
            doc: doc.clone(),
            routes: api.routes.clone(),
            integrations: api.integrations.clone(),
            authorizers: api.authorizers.clone(),
        },
    );
    doc
}

/// Redeploys to every auto-deploying stage.
pub fn auto_deploy(api: &mut V2Api) {
    let names: Vec<String> = api
        .stages
        .iter()
        .filter(|(_, s)| s["autoDeploy"] == true)
        .map(|(n, _)| n.clone())
        .collect();
    if names.is_empty() {
        return;
    }
    let d = deploy(api, None, true);
    for n in names {
        if let Some(st) = api.stages.get_mut(&n) {
            st["deploymentId"] = d["deploymentId"].clone();
            st["lastDeploymentStatusMessage"] = format!(
                "Successfully deployed stage with deployment ID '{}'",
                d["deploymentId"].as_str().unwrap_or("")
            )
            .into();
        }
    }
}
