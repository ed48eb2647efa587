//! A REST API's `Auth` as the translator writes it into the swagger: its authorizers (Lambda
//! TOKEN/REQUEST, Cognito user pools, AWS_IAM) as `securityDefinitions`, the default
//! authorizer and required API key on every method, each Api event's own Authorizer and
//! ApiKeyRequired, the resource policy (`policy`), the authorizers' invoke permissions, and
//! the usage plan with its API key.

use super::{Editor, INTEGRATION, contents, normalize};
use crate::events::Event;
use crate::py27::{Dict, Py};
use crate::resource::{Res, Sam, reference, truthy};
use crate::{invalid, invalid_event, unsupported};
use serde_json::{Value, json};

const AUTH_PROPERTIES: [&str; 8] = [
    "Authorizers",
    "DefaultAuthorizer",
    "InvokeRole",
    "AddDefaultAuthorizerToCorsPreflight",
    "AddApiKeyRequiredToCorsPreflight",
    "ApiKeyRequired",
    "ResourcePolicy",
    "UsagePlan",
];
const IAM: &str = "AWS_IAM";
const EXCLUDED_PATH_FIELDS: [&str; 3] = ["summary", "description", "parameters"];

/// One authorizer (`ApiGatewayAuthorizer`), its values as the translator holds them.
struct Authorizer {
    name: String,
    uni: bool,
    user_pool_arn: Option<Py>,
    function_arn: Option<Py>,
    identity: Option<Py>,
    payload: Option<String>,
    invoke_role: Option<Py>,
    scopes: Option<Py>,
    disable_permissions: bool,
    iam: bool,
}

fn get<'a>(d: &'a Dict, k: &str) -> Option<&'a Py> {
    d.get(k).filter(|v| !matches!(v, Py::None))
}

impl Authorizer {
    fn kind(&self) -> &'static str {
        if self.iam {
            IAM
        } else if self.user_pool_arn.as_ref().is_some_and(Py::truthy) {
            "COGNITO_USER_POOLS"
        } else {
            "LAMBDA"
        }
    }

    fn payload(&self) -> &str {
        self.payload.as_deref().unwrap_or("TOKEN")
    }

    fn identity(&self) -> Option<&Dict> {
        self.identity.as_ref().and_then(Py::as_dict)
    }

    /// `generate_swagger`: the authorizer's security definition.
    fn swagger(&self, partition: &str) -> Py {
        const KEY: &str = "x-amazon-apigateway-authorizer";
        let kind = self.kind();
        let mut s = Dict::py27();
        s.set("type", false, Py::str("apiKey"));
        let header = if kind == "LAMBDA" && self.payload() == "REQUEST" {
            Py::str("Unused")
        } else {
            self.identity()
                .and_then(|i| get(i, "Header"))
                .filter(|h| h.truthy())
                .cloned()
                .unwrap_or(Py::str("Authorization"))
        };
        s.set("name", false, header);
        s.set("in", false, Py::str("header"));
        let authtype = match kind {
            IAM => "awsSigv4",
            "COGNITO_USER_POOLS" => "cognito_user_pools",
            _ => "custom",
        };
        s.set("x-amazon-apigateway-authtype", false, Py::str(authtype));
        let mut authorizer = None;
        if kind == "COGNITO_USER_POOLS" {
            let mut a = Dict::py27();
            a.set("type", false, Py::str("cognito_user_pools"));
            let arns = match &self.user_pool_arn {
                Some(Py::List(l)) => Py::List(l.clone()),
                Some(other) => Py::List(vec![other.clone()]),
                None => Py::List(vec![Py::None]),
            };
            a.set("providerARNs", false, arns);
            authorizer = Some(a);
        } else if kind == "LAMBDA" {
            let mut a = Dict::py27();
            let ty = if self.payload() == "REQUEST" {
                "request"
            } else {
                "token"
            };
            a.update(vec![("type".into(), false, Py::str(ty))]);
            let mut sub_values = Dict::plain();
            sub_values.set(
                "__FunctionArn__",
                false,
                self.function_arn.clone().unwrap_or(Py::None),
            );
            let mut sub = Dict::plain();
            sub.set(
                "Fn::Sub",
                false,
                Py::List(vec![
                    Py::str(&format!(
                        "arn:{partition}:apigateway:${{AWS::Region}}:lambda:path/2015-03-31/functions/${{__FunctionArn__}}/invocations"
                    )),
                    Py::Dict(sub_values),
                ]),
            );
            a.set("authorizerUri", false, Py::Dict(sub));
            if let Some(ttl) = self.identity().and_then(|i| get(i, "ReauthorizeEvery")) {
                a.set("authorizerResultTtlInSeconds", false, ttl.clone());
            }
            if let Some(role) = self
                .invoke_role
                .as_ref()
                .filter(|r| r.truthy() && r.as_str() != Some("NONE"))
            {
                a.set("authorizerCredentials", false, role.clone());
            }
            if self.payload() == "REQUEST" {
                let source = self.identity_source();
                if source.truthy() {
                    a.set("identitySource", false, source);
                }
            }
            authorizer = Some(a);
        }
        let token = kind == "LAMBDA" && self.payload() == "TOKEN";
        if (kind == "COGNITO_USER_POOLS" || token)
            && let Some(expression) = self
                .identity()
                .and_then(|i| get(i, "ValidationExpression"))
                .filter(|e| e.truthy())
            && let Some(a) = authorizer.as_mut()
        {
            a.set("identityValidationExpression", false, expression.clone());
        }
        if let Some(a) = authorizer {
            s.set(KEY, false, Py::Dict(a));
        }
        Py::Dict(s)
    }

    fn identity_source(&self) -> Py {
        let mut items = Vec::new();
        let mut any_uni = false;
        for (key, prefix) in [
            ("Headers", "method.request.header."),
            ("QueryStrings", "method.request.querystring."),
            ("StageVariables", "stageVariables."),
            ("Context", "context."),
        ] {
            if let Some(Py::List(values)) = self.identity().and_then(|i| get(i, key)) {
                for v in values {
                    if let Py::Str(s, uni) = v {
                        any_uni |= *uni;
                        items.push(format!("{prefix}{s}"));
                    }
                }
            }
        }
        Py::Str(items.join(", "), any_uni)
    }

    fn scopes(&self) -> Py {
        self.scopes.clone().unwrap_or(Py::List(Vec::new()))
    }
}

/// The Auth's keys, checked as the translator checks them.
fn auth_dict(id: &str, auth: &Py) -> Result<Dict, String> {
    let Some(d) = auth.as_dict() else {
        return Err(invalid(id, "Invalid value for 'Auth' property"));
    };
    if !d
        .keys()
        .iter()
        .all(|k| AUTH_PROPERTIES.contains(&k.as_str()))
    {
        return Err(invalid(id, "Invalid value for 'Auth' property"));
    }
    Ok(d.clone())
}

/// `_get_authorizers`: AWS_IAM first when it is the default, then the configured ones.
fn authorizers(
    id: &str,
    auth: &Dict,
    default: Option<&str>,
) -> Result<Option<Vec<Authorizer>>, String> {
    let mut out = Vec::new();
    if default == Some(IAM) {
        out.push(Authorizer {
            name: IAM.into(),
            uni: true,
            user_pool_arn: None,
            function_arn: None,
            identity: None,
            payload: None,
            invoke_role: None,
            scopes: None,
            disable_permissions: false,
            iam: true,
        });
    }
    let config = get(auth, "Authorizers").filter(|c| c.truthy());
    let Some(config) = config else {
        return Ok(if out.is_empty() { None } else { Some(out) });
    };
    let Some(config) = config.as_dict() else {
        return Err(invalid(id, "Property 'Auth.Authorizers' should be a map."));
    };
    for (name, uni, a) in config.items() {
        let Some(a) = a.as_dict() else {
            return Err(invalid(
                id,
                format!("Property 'Auth.Authorizers.{name}' should be a map."),
            ));
        };
        let payload = match get(a, "FunctionPayloadType") {
            None => None,
            Some(Py::Str(p, _)) if p == "TOKEN" || p == "REQUEST" => Some(p.clone()),
            Some(other) => {
                return Err(invalid(
                    id,
                    format!(
                        "{name} Authorizer has invalid 'FunctionPayloadType': {}.",
                        other.to_str()
                    ),
                ));
            }
        };
        let identity = get(a, "Identity").cloned();
        if let Some(i) = &identity
            && i.truthy()
            && i.as_dict().is_none()
        {
            return Err(invalid(
                id,
                "Auth.Authorizers.<Authorizer>.Identity must be a dict (LambdaTokenAuthorizationIdentity, LambdaRequestAuthorizationIdentity or CognitoAuthorizationIdentity).",
            ));
        }
        if payload.as_deref() == Some("REQUEST") {
            let d = identity.as_ref().and_then(Py::as_dict);
            let has = |k: &str| d.and_then(|d| get(d, k)).is_some_and(Py::truthy);
            let ttl = d.and_then(|d| get(d, "ReauthorizeEvery"));
            let missing = !has("Headers")
                && !has("QueryStrings")
                && !has("StageVariables")
                && !has("Context");
            let ttl_zero = match ttl {
                Some(Py::Num(n)) => n.as_i64() == Some(0),
                Some(Py::Str(s, _)) => s.trim().parse::<i64>().ok() == Some(0),
                _ => false,
            };
            if missing && !(ttl.is_some() && ttl_zero) {
                return Err(invalid(
                    id,
                    format!(
                        "{name} Authorizer must specify Identity with at least one of Headers, QueryStrings, StageVariables, or Context."
                    ),
                ));
            }
        }
        let scopes = get(a, "AuthorizationScopes").cloned();
        if let Some(s) = &scopes
            && !matches!(s, Py::List(_))
        {
            return Err(invalid(
                id,
                format!("Property 'Authorizers.{name}.AuthorizationScopes' should be a list."),
            ));
        }
        let disable = match get(a, "DisableFunctionDefaultPermissions") {
            None => false,
            Some(Py::Bool(b)) => *b,
            Some(_) => {
                return Err(invalid(
                    id,
                    format!(
                        "Property 'Authorizers.{name}.DisableFunctionDefaultPermissions' should be a boolean."
                    ),
                ));
            }
        };
        out.push(Authorizer {
            name: name.clone(),
            uni,
            user_pool_arn: get(a, "UserPoolArn").cloned(),
            function_arn: get(a, "FunctionArn").cloned(),
            identity,
            payload,
            invoke_role: get(a, "FunctionInvokeRole").cloned(),
            scopes,
            disable_permissions: disable,
            iam: false,
        });
    }
    Ok(Some(out))
}

/// `iter_on_all_methods_for_path`: the methods with an integration, by normalized name.
fn methods_with_integration(editor: &Editor, path: &str) -> Vec<(String, String)> {
    let Some(item) = editor.path_item(path) else {
        return Vec::new();
    };
    item.keys()
        .into_iter()
        .filter(|m| !EXCLUDED_PATH_FIELDS.contains(&m.as_str()))
        .filter(|m| {
            item.get(m)
                .and_then(|def| contents(def).into_iter().next())
                .and_then(Py::as_dict)
                .and_then(|d| d.get(INTEGRATION))
                .is_some_and(Py::truthy)
        })
        .map(|m| (normalize(&m, false).0, m))
        .collect()
}

fn security_list(id: &str, def: &Dict, path: &str, method: &str) -> Result<Vec<Py>, String> {
    match def.get("security") {
        None => Ok(Vec::new()),
        Some(Py::List(l)) => {
            for s in l {
                if s.as_dict().is_none() {
                    return Err(invalid(
                        id,
                        format!(
                            "Structure of the SAM template is invalid. {} in Security for path {path} method {method} is not a valid dictionary.",
                            s.repr()
                        ),
                    ));
                }
            }
            Ok(l.clone())
        }
        Some(_) => Err(invalid(
            id,
            format!(
                "Structure of the SAM template is invalid. Type of security for path {path} method {method} must be a list"
            ),
        )),
    }
}

fn keys_of(s: &Py) -> Vec<String> {
    s.as_dict().map(Dict::keys).unwrap_or_default()
}

/// `add_awsiam_security_definition` / `add_apikey_security_definition` (idempotent).
fn add_security_definition(editor: &mut Editor, name: &str, fields: &[(&str, &str)]) {
    let mut inner = Dict::py27();
    for (k, v) in fields {
        inner.set(k, false, Py::str(v));
    }
    let mut definition = Dict::py27();
    definition.set(name, false, Py::Dict(inner));
    let defs = match editor.doc.get("securityDefinitions") {
        Some(Py::Dict(d)) if !d.is_empty() => d.clone(),
        _ => Dict::py27(),
    };
    let mut defs = defs;
    if !defs.contains(name) {
        defs.update(definition.items());
    }
    editor.doc.set("securityDefinitions", false, Py::Dict(defs));
}

fn add_iam_definition(editor: &mut Editor) {
    add_security_definition(
        editor,
        IAM,
        &[
            ("x-amazon-apigateway-authtype", "awsSigv4"),
            ("type", "apiKey"),
            ("name", "Authorization"),
            ("in", "header"),
        ],
    );
}

fn add_apikey_definition(editor: &mut Editor) {
    add_security_definition(
        editor,
        "api_key",
        &[("type", "apiKey"), ("name", "x-api-key"), ("in", "header")],
    );
}

fn first_has_iam(security: &[Py]) -> bool {
    security
        .first()
        .and_then(Py::as_dict)
        .is_some_and(|d| d.contains(IAM))
}

/// `set_path_default_authorizer`.
fn set_default_authorizer(
    id: &str,
    editor: &mut Editor,
    path: &str,
    default: &str,
    authorizers: &[Authorizer],
    to_preflight: bool,
) -> Result<(), String> {
    for (method, raw) in methods_with_integration(editor, path) {
        if !to_preflight && method == "options" {
            continue;
        }
        let mut names: Vec<String> = vec![IAM.into()];
        names.extend(authorizers.iter().map(|a| a.name.clone()));
        let Some(def) = editor.method_mut(path, &raw) else {
            continue;
        };
        let existing = security_list(id, def, path, &method)?;
        let (mut others, authorizer_security): (Vec<Py>, Vec<Py>) = existing
            .into_iter()
            .partition(|s| keys_of(s).iter().all(|k| !names.contains(k)));
        let none = others
            .iter()
            .position(|s| keys_of(s).iter().any(|k| k == "NONE"));
        let chosen = if let Some(i) = none {
            others.remove(i);
            Vec::new()
        } else if !authorizer_security.is_empty() {
            authorizer_security
        } else {
            let scopes = authorizers
                .iter()
                .find(|a| a.name == default)
                .map_or(Py::List(Vec::new()), Authorizer::scopes);
            let mut d = Dict::py27();
            d.set(default, true, scopes);
            vec![Py::Dict(d)]
        };
        let security: Vec<Py> = others.into_iter().chain(chosen).collect();
        if !security.is_empty() {
            let iam = first_has_iam(&security);
            def.set("security", false, Py::List(security));
            if iam {
                add_iam_definition(editor);
            }
        }
    }
    Ok(())
}

/// `set_path_default_apikey_required`.
fn set_default_apikey_required(
    id: &str,
    editor: &mut Editor,
    path: &str,
    to_preflight: bool,
) -> Result<(), String> {
    for (method, raw) in methods_with_integration(editor, path) {
        let Some(def) = editor.method_mut(path, &raw) else {
            continue;
        };
        let existing = security_list(id, def, path, &method)?;
        let is_key = |s: &Py| {
            keys_of(s)
                .iter()
                .any(|k| k == "api_key" || k == "api_key_false")
        };
        let others: Vec<Py> = existing.iter().filter(|s| !is_key(s)).cloned().collect();
        let mut keyed: Vec<Py> = existing.iter().filter(|s| is_key(s)).cloned().collect();
        let mut required = Vec::new();
        match keyed
            .iter()
            .position(|s| keys_of(s).iter().any(|k| k == "api_key_false"))
        {
            Some(i) => {
                keyed.remove(i);
            }
            None => {
                let mut d = Dict::py27();
                d.set("api_key", false, Py::List(Vec::new()));
                required.push(Py::Dict(d));
            }
        }
        let mut security: Vec<Py> = others.iter().cloned().chain(required).collect();
        if method == "options" && !to_preflight {
            security = others;
        }
        if security != existing {
            def.set("security", false, Py::List(security));
        }
    }
    Ok(())
}

fn bool_or(d: &Dict, k: &str, default: bool) -> bool {
    get(d, k).map_or(default, Py::truthy)
}

/// `_add_auth`: the API's Auth written into its body.
pub fn add_api_auth(id: &str, body: &mut Py, auth: &Value, stage: &Py) -> Result<(), String> {
    let auth = Py::from_template(auth);
    let auth = auth_dict(id, &auth)?;
    if !crate::rest_api::is_valid(body) {
        return Err(invalid(
            id,
            "Unable to add Auth configuration because 'DefinitionBody' does not contain a valid Swagger definition.",
        ));
    }
    let mut editor = Editor::new(body).map_err(|e| invalid(id, e))?;
    let default = match get(&auth, "DefaultAuthorizer").filter(|d| d.truthy()) {
        None => None,
        Some(Py::Str(s, _)) => Some(s.clone()),
        Some(_) => return Err(invalid(id, "DefaultAuthorizer is not a string.")),
    };
    let list = authorizers(id, &auth, default.as_deref())?;
    if let Some(list) = &list {
        let mut defs = match editor.doc.get("securityDefinitions") {
            Some(Py::Dict(d)) if !d.is_empty() => d.clone(),
            _ => Dict::py27(),
        };
        for a in list {
            defs.set(&a.name, a.uni, a.swagger("aws"));
        }
        if !defs.is_empty() {
            editor.doc.set("securityDefinitions", false, Py::Dict(defs));
        }
        if let Some(default) = &default {
            if default != IAM && !list.iter().any(|a| &a.name == default) {
                return Err(invalid(
                    id,
                    format!(
                        "Unable to set DefaultAuthorizer because '{default}' was not defined in 'Authorizers'."
                    ),
                ));
            }
            let preflight = bool_or(&auth, "AddDefaultAuthorizerToCorsPreflight", true);
            for path in editor.paths().keys() {
                set_default_authorizer(id, &mut editor, &path, default, list, preflight)?;
            }
        }
    }
    if get(&auth, "ApiKeyRequired").is_some_and(Py::truthy) {
        add_apikey_definition(&mut editor);
        let preflight = bool_or(&auth, "AddApiKeyRequiredToCorsPreflight", true);
        for path in editor.paths().keys() {
            set_default_apikey_required(id, &mut editor, &path, preflight)?;
        }
    }
    if let Some(policy) = get(&auth, "ResourcePolicy").filter(|p| p.truthy()) {
        if policy.as_dict().is_none() {
            return Err(invalid(
                id,
                crate::structure("ResourcePolicy must be a map (ResourcePolicyStatement)."),
            ));
        }
        for (path, uni, _) in editor.paths().items() {
            super::policy::add_resource_policy(&mut editor, policy, (&path, uni), stage)?;
        }
        if let Some(custom) = policy
            .as_dict()
            .and_then(|p| p.get("CustomStatements"))
            .filter(|c| c.truthy())
        {
            super::policy::add_custom_statements(&mut editor, custom)?;
        }
    }
    *body = editor.swagger();
    Ok(())
}

/// The partition-specific fix for the authorizers' URIs: the translator writes its own
/// partition, which [`add_api_auth`] takes as `aws` and this rewrites.
pub fn fix_partition(body: &mut Py, partition: &str) {
    if partition == "aws" {
        return;
    }
    if let Some(Py::Dict(defs)) = body
        .as_dict_mut()
        .and_then(|d| d.get_mut("securityDefinitions"))
    {
        for name in defs.keys() {
            if let Some(Py::Dict(uri)) = defs
                .get_mut(&name)
                .and_then(Py::as_dict_mut)
                .and_then(|d| d.get_mut("x-amazon-apigateway-authorizer"))
                .and_then(Py::as_dict_mut)
                .and_then(|a| a.get_mut("authorizerUri"))
                && let Some(Py::List(parts)) = uri.get_mut("Fn::Sub")
                && let Some(Py::Str(s, _)) = parts.first_mut()
            {
                *s = s.replacen("arn:aws:", &format!("arn:{partition}:"), 1);
            }
        }
    }
}

/// The Lambda authorizers' invoke permissions.
pub fn authorizer_permissions(
    sam: &Sam,
    auth: &Value,
    partition: &str,
) -> Result<Vec<Res>, String> {
    let auth = auth_dict(sam.id, &Py::from_template(auth))?;
    let Some(list) = authorizers(sam.id, &auth, None)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for a in list {
        let Some(arn) = a.function_arn.as_ref().filter(|f| f.truthy()) else {
            continue;
        };
        if a.disable_permissions {
            continue;
        }
        let mut p = Res::new(
            format!("{}{}AuthorizerPermission", sam.id, a.name),
            "AWS::Lambda::Permission",
            sam.passthrough(),
        );
        p.put("Action", json!("lambda:InvokeFunction"));
        p.put("FunctionName", arn.to_json());
        p.put("Principal", json!("apigateway.amazonaws.com"));
        p.put(
            "SourceArn",
            json!({"Fn::Sub": [
                format!("arn:{partition}:execute-api:${{AWS::Region}}:${{AWS::AccountId}}:${{__ApiId__}}/authorizers/*"),
                {"__ApiId__": reference(sam.id)}
            ]}),
        );
        out.push(p);
    }
    Ok(out)
}

const USAGE_PLAN_PROPERTIES: [&str; 6] = [
    "CreateUsagePlan",
    "Description",
    "Quota",
    "Tags",
    "Throttle",
    "UsagePlanName",
];

/// The usage plans the translator shares between APIs (`SHARED`): the APIs, stages and keys
/// gathered so far.
#[derive(Debug, Default)]
pub struct SharedUsagePlan {
    depends_on: Vec<Value>,
    stages: Vec<Value>,
    keys: Vec<Value>,
}

/// `_construct_usage_plan`: the usage plan, its API key and their link.
pub fn usage_plan(
    sam: &Sam,
    auth: &Value,
    stage_id: &str,
    shared: &mut SharedUsagePlan,
) -> Result<Vec<Res>, String> {
    let Some(plan) = auth.get("UsagePlan").filter(|p| !p.is_null()) else {
        return Ok(Vec::new());
    };
    let Some(plan) = plan.as_object() else {
        return Err(invalid(sam.id, "'UsagePlan' must be a dictionary"));
    };
    if !plan
        .keys()
        .all(|k| USAGE_PLAN_PROPERTIES.contains(&k.as_str()))
    {
        return Err(invalid(sam.id, "Invalid property for 'UsagePlan'"));
    }
    let Some(create) = plan.get("CreateUsagePlan").filter(|c| !c.is_null()) else {
        return Err(invalid(
            sam.id,
            "'CreateUsagePlan' is a required field for UsagePlan.",
        ));
    };
    let create = create.as_str().unwrap_or("");
    if !["SHARED", "PER_API", "NONE"].contains(&create) {
        return Err(invalid(
            sam.id,
            "'CreateUsagePlan' accepts one of ['SHARED', 'PER_API', 'NONE'].",
        ));
    }
    if create == "NONE" {
        return Ok(Vec::new());
    }
    let stage = json!({"ApiId": reference(sam.id), "Stage": reference(stage_id)});
    let stage_key = json!({"RestApiId": reference(sam.id), "StageName": reference(stage_id)});
    let (plan_id, key_id, link_id, attrs, stages, keys, depends) = if create == "PER_API" {
        (
            format!("{}UsagePlan", sam.id),
            format!("{}ApiKey", sam.id),
            format!("{}UsagePlanKey", sam.id),
            sam.passthrough(),
            vec![stage],
            vec![stage_key],
            vec![json!(sam.id)],
        )
    } else {
        if !sam.passthrough().is_empty() {
            return Err(unsupported(
                sam.id,
                "A SHARED usage plan of an API with a Condition, DeletionPolicy or UpdateReplacePolicy",
            ));
        }
        if !shared.depends_on.contains(&json!(sam.id)) {
            shared.depends_on.push(json!(sam.id));
        }
        if !shared.stages.contains(&stage) {
            shared.stages.push(stage);
        }
        if !shared.keys.contains(&stage_key) {
            shared.keys.push(stage_key);
        }
        (
            "ServerlessUsagePlan".to_string(),
            "ServerlessApiKey".to_string(),
            "ServerlessUsagePlanKey".to_string(),
            sam.passthrough(),
            shared.stages.clone(),
            shared.keys.clone(),
            shared.depends_on.clone(),
        )
    };
    let mut usage_plan = Res::new(&plan_id, "AWS::ApiGateway::UsagePlan", attrs.clone());
    usage_plan.depends_on = Some(Value::Array(depends));
    usage_plan.put("ApiStages", Value::Array(stages));
    for name in ["UsagePlanName", "Description", "Quota", "Tags", "Throttle"] {
        if let Some(v) = plan.get(name).filter(|v| truthy(Some(v))) {
            usage_plan.put(name, v.clone());
        }
    }
    let mut key = Res::new(&key_id, "AWS::ApiGateway::ApiKey", attrs.clone());
    key.depends_on = Some(json!([plan_id]));
    key.put("Enabled", json!(true));
    key.put("StageKeys", Value::Array(keys));
    let mut link = Res::new(&link_id, "AWS::ApiGateway::UsagePlanKey", attrs);
    link.depends_on = Some(json!([key_id]));
    link.put("KeyId", reference(&key_id));
    link.put("KeyType", json!("API_KEY"));
    link.put("UsagePlanId", reference(&plan_id));
    Ok(vec![usage_plan, key, link])
}

/// `add_lambda_integration`'s credentials: an AWS_IAM method invokes with the caller's
/// credentials (the translator's own string) or the InvokeRole (the template's).
pub fn integration_credentials(
    event_auth: Option<&Value>,
    api_auth: Option<&Value>,
    partition: &str,
) -> Option<Py> {
    let empty = json!({});
    let method = event_auth.filter(|a| truthy(Some(a))).unwrap_or(&empty);
    let api = api_auth.filter(|a| truthy(Some(a))).unwrap_or(&empty);
    let iam = method.get("Authorizer").and_then(Value::as_str) == Some(IAM)
        || (api.get("DefaultAuthorizer").and_then(Value::as_str) == Some(IAM)
            && method.as_object().is_none_or(|m| m.is_empty()));
    if !iam {
        return None;
    }
    let role = |auth: &Value| -> Option<Py> {
        match auth.get("InvokeRole") {
            Some(v) if truthy(Some(v)) => Some(Py::from_template(v)),
            Some(_) => Some(Py::str("NONE")),
            None => None,
        }
    };
    let chosen = role(method).or_else(|| role(api));
    let credentials = match chosen {
        Some(r) if r.as_str() != Some("CALLER_CREDENTIALS") => r,
        _ => Py::str(&format!("arn:{partition}:iam::*:user/*")),
    };
    (credentials.as_str() != Some("NONE")).then_some(credentials)
}

/// `Api.add_auth_to_swagger`: an event's Authorizer and ApiKeyRequired on its method.
pub fn add_event_auth(
    sam: &Sam,
    event: &Event,
    editor: &mut Editor,
    event_auth: &Value,
    api_auth: Option<&Value>,
    (path, method): (&str, &str),
    stage: &Py,
) -> Result<(), String> {
    let (event_name, event_id) = (event.name, event.id.as_str());
    let Some(event_auth) = event_auth.as_object() else {
        return Err(invalid_event(
            sam.id,
            event_name,
            "Property 'Auth' should be a map.",
        ));
    };
    let api_auth = api_auth.filter(|a| truthy(Some(a)));
    let api_authorizers = api_auth
        .and_then(|a| a.get("Authorizers"))
        .filter(|a| truthy(Some(a)));
    let method_authorizer = event_auth.get("Authorizer").filter(|a| truthy(Some(a)));
    if let Some(authorizer) = method_authorizer
        && authorizer.as_str() != Some(IAM)
    {
        let name = authorizer.as_str();
        let shown = crate::py27::Py::from_template(authorizer).to_str();
        if name != Some("NONE") {
            if api_authorizers.is_none() {
                return Err(invalid(
                    event_id,
                    format!(
                        "Unable to set Authorizer [{shown}] on API method [{method}] for path [{path}] because the related API does not define any Authorizers."
                    ),
                ));
            }
            if name.is_none() || !api_authorizers.is_some_and(Value::is_object) {
                return Err(invalid(
                    event_id,
                    format!(
                        "Unable to set Authorizer [{shown}] on API method [{method}] for path [{path}]. The method authorizer must be a string with a corresponding dict entry in the api authorizer."
                    ),
                ));
            }
            if !api_authorizers
                .and_then(|a| a.get(name.unwrap_or("")))
                .is_some_and(|a| truthy(Some(a)))
            {
                return Err(invalid(
                    event_id,
                    format!(
                        "Unable to set Authorizer [{shown}] on API method [{method}] for path [{path}] because it wasn't defined in the API's Authorizers."
                    ),
                ));
            }
        } else if !api_auth
            .and_then(|a| a.get("DefaultAuthorizer"))
            .is_some_and(|d| truthy(Some(d)))
        {
            return Err(invalid(
                event_id,
                format!(
                    "Unable to set Authorizer on API method [{method}] for path [{path}] because 'NONE' is only a valid value when a DefaultAuthorizer on the API is specified."
                ),
            ));
        }
    }
    let scopes = event_auth
        .get("AuthorizationScopes")
        .filter(|s| truthy(Some(s)));
    if let Some(s) = scopes {
        if !s.is_array() {
            return Err(invalid(
                event_id,
                "Property 'Auth.AuthorizationScopes' should be a list.",
            ));
        }
        if method_authorizer.is_none() {
            return Err(invalid(
                event_id,
                "AuthorizationScopes works only when Authorizer is set",
            ));
        }
    }
    let apikey = event_auth.get("ApiKeyRequired").filter(|v| !v.is_null());
    if apikey.is_some_and(|v| !truthy(Some(v)))
        && !api_auth
            .and_then(|a| a.get("ApiKeyRequired"))
            .is_some_and(|v| truthy(Some(v)))
    {
        return Err(invalid(
            event_id,
            format!(
                "Unable to set ApiKeyRequired [False] on API method [{method}] for path [{path}] because the related API does not specify any ApiKeyRequired."
            ),
        ));
    }
    let (m, _) = normalize(method, true);
    let auth_py = Py::from_template(&Value::Object(event_auth.clone()));
    let auth_py = auth_py.as_dict().cloned().unwrap_or_else(Dict::py27);
    if let Some(Py::Str(name, uni)) = get(&auth_py, "Authorizer").filter(|a| a.truthy()).cloned() {
        let authorizers = api_authorizers.map(Py::from_template);
        let method_scopes = get(&auth_py, "AuthorizationScopes").cloned();
        if let Some(def) = editor.method_mut(path, &m)
            && def.get(INTEGRATION).is_some_and(Py::truthy)
        {
            let existing = security_list(sam.id, def, path, method)?;
            let mut entry = Dict::py27();
            entry.set(&name, uni, Py::List(Vec::new()));
            if name != "NONE"
                && let Some(Py::Dict(all)) = authorizers.as_ref().filter(|a| a.truthy())
            {
                let own = all.get(&name).and_then(Py::as_dict);
                let mut scopes = own.and_then(|a| get(a, "AuthorizationScopes")).cloned();
                if method_scopes.is_some() {
                    scopes = method_scopes.clone();
                }
                if all.get(&name).is_some_and(|a| !matches!(a, Py::None))
                    && let Some(s) = scopes
                {
                    entry.set(&name, uni, s);
                }
            }
            let security: Vec<Py> = existing.into_iter().chain([Py::Dict(entry)]).collect();
            let iam = first_has_iam(&security);
            def.set("security", false, Py::List(security));
            if iam {
                add_iam_definition(editor);
            }
        }
    }
    if let Some(required) = get(&auth_py, "ApiKeyRequired").cloned() {
        let needed = required.truthy();
        if let Some(def) = editor.method_mut(path, &m)
            && def.get(INTEGRATION).is_some_and(Py::truthy)
        {
            let existing = security_list(sam.id, def, path, method)?;
            let mut entry = Dict::py27();
            entry.set(
                if needed { "api_key" } else { "api_key_false" },
                false,
                Py::List(Vec::new()),
            );
            let security: Vec<Py> = existing.iter().cloned().chain([Py::Dict(entry)]).collect();
            if security != existing {
                def.set("security", false, Py::List(security));
            }
            if needed {
                add_apikey_definition(editor);
            }
        }
    }
    if let Some(policy) = event_auth.get("ResourcePolicy").filter(|p| truthy(Some(p))) {
        if !policy.is_object() {
            return Err(invalid_event(
                sam.id,
                event_name,
                "Property 'Auth.ResourcePolicy' should be a map.",
            ));
        }
        let policy = Py::from_template(policy);
        super::policy::add_resource_policy(editor, &policy, (path, true), stage)?;
        if let Some(custom) = policy
            .as_dict()
            .and_then(|p| p.get("CustomStatements"))
            .filter(|c| c.truthy())
        {
            super::policy::add_custom_statements(editor, custom)?;
        }
    }
    Ok(())
}
