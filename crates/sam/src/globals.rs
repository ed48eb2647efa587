//! The `Globals` section: properties merged into every SAM resource of a type (maps merged
//! key by key, lists concatenated global first, anything else — intrinsics included — the
//! resource's own value winning), minus what a resource's `IgnoreGlobals` names.

use crate::resource::is_intrinsic;
use serde_json::{Map, Value};

/// The properties each section may set, as the translator lists them.
const SUPPORTED: [(&str, &[&str]); 8] = [
    (
        "Function",
        &[
            "Handler",
            "Runtime",
            "CodeUri",
            "DeadLetterQueue",
            "Description",
            "MemorySize",
            "Timeout",
            "VpcConfig",
            "Environment",
            "Tags",
            "PropagateTags",
            "Tracing",
            "KmsKeyArn",
            "AutoPublishAlias",
            "AutoPublishAliasAllProperties",
            "Layers",
            "DeploymentPreference",
            "RolePath",
            "PermissionsBoundary",
            "ReservedConcurrentExecutions",
            "ProvisionedConcurrencyConfig",
            "AssumeRolePolicyDocument",
            "EventInvokeConfig",
            "FileSystemConfigs",
            "CodeSigningConfigArn",
            "Architectures",
            "SnapStart",
            "EphemeralStorage",
            "FunctionUrlConfig",
            "RuntimeManagementConfig",
            "LoggingConfig",
            "RecursiveLoop",
            "SourceKMSKeyArn",
            "TenancyConfig",
            "DurableConfig",
            "CapacityProviderConfig",
            "FunctionScalingConfig",
            "PublishToLatestPublished",
            "VersionDeletionPolicy",
        ],
    ),
    (
        "Api",
        &[
            "Auth",
            "Name",
            "DefinitionUri",
            "CacheClusterEnabled",
            "CacheClusterSize",
            "MergeDefinitions",
            "Variables",
            "EndpointConfiguration",
            "MethodSettings",
            "BinaryMediaTypes",
            "MinimumCompressionSize",
            "Cors",
            "GatewayResponses",
            "AccessLogSetting",
            "CanarySetting",
            "TracingEnabled",
            "OpenApiVersion",
            "Domain",
            "AlwaysDeploy",
            "PropagateTags",
            "SecurityPolicy",
            "EndpointAccessMode",
        ],
    ),
    (
        "HttpApi",
        &[
            "Auth",
            "AccessLogSettings",
            "StageVariables",
            "Tags",
            "CorsConfiguration",
            "DefaultRouteSettings",
            "Domain",
            "RouteSettings",
            "FailOnWarnings",
            "PropagateTags",
        ],
    ),
    ("SimpleTable", &["SSESpecification"]),
    ("StateMachine", &["PropagateTags"]),
    ("LayerVersion", &["PublishLambdaVersion"]),
    (
        "CapacityProvider",
        &[
            "VpcConfig",
            "OperatorRole",
            "Tags",
            "InstanceRequirements",
            "ScalingConfig",
            "KmsKeyArn",
            "PropagateTags",
        ],
    ),
    (
        "WebSocketApi",
        &[
            "AccessLogSettings",
            "ApiKeySelectionExpression",
            "DefaultRouteSettings",
            "DisableExecuteApiEndpoint",
            "DisableSchemaValidation",
            "Domain",
            "FailOnWarnings",
            "IpAddressType",
            "PropagateTags",
            "RouteSelectionExpression",
            "RouteSettings",
            "StageVariables",
            "Tags",
        ],
    ),
];

const SAM_TYPES: [&str; 9] = [
    "AWS::Serverless::Api",
    "AWS::Serverless::Function",
    "AWS::Serverless::SimpleTable",
    "AWS::Serverless::Application",
    "AWS::Serverless::LayerVersion",
    "AWS::Serverless::HttpApi",
    "AWS::Serverless::WebSocketApi",
    "AWS::Serverless::StateMachine",
    "AWS::Serverless::CapacityProvider",
];

/// A Python list's repr, as the translator's messages print them.
pub fn py_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("'{i}'")).collect();
    format!("[{}]", quoted.join(", "))
}

fn section_error(message: String) -> String {
    format!("'Globals' section is invalid. {message}")
}

/// Merges the Globals section into the template's SAM resources and removes it.
pub fn apply(root: &mut Map<String, Value>) -> Result<(), String> {
    let Some(section) = root.remove("Globals") else {
        return Ok(());
    };
    let Value::Object(section) = section else {
        return Err(section_error("It must be a non-empty dictionary".into()));
    };
    let mut globals: Vec<(String, Map<String, Value>)> = Vec::new();
    let mut names: Vec<&str> = SUPPORTED.iter().map(|(n, _)| *n).collect();
    names.sort();
    for (name, props) in &section {
        let Some((_, supported)) = SUPPORTED.iter().find(|(n, _)| n == name) else {
            return Err(section_error(format!(
                "'{name}' is not supported. Must be one of the following values - {}",
                py_list(&names)
            )));
        };
        let Value::Object(props) = props else {
            return Err(section_error(
                "Value of ${section} must be a dictionary".into(),
            ));
        };
        for key in props.keys() {
            if !supported.contains(&key.as_str()) {
                return Err(section_error(format!(
                    "'{key}' is not a supported property of '{name}'. Must be one of the following values - {}",
                    py_list(supported)
                )));
            }
        }
        globals.push((format!("AWS::Serverless::{name}"), props.clone()));
    }
    let Some(Value::Object(resources)) = root.get_mut("Resources") else {
        return Ok(());
    };
    for (id, r) in resources.iter_mut() {
        let Some(r) = r.as_object_mut() else { continue };
        let ty = r
            .get("Type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if !SAM_TYPES.contains(&ty.as_str()) {
            continue;
        }
        let Some((_, global)) = globals.iter().find(|(t, _)| *t == ty) else {
            continue;
        };
        let mut global = global.clone();
        match r.get("IgnoreGlobals") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if s == "*" => global.clear(),
            Some(Value::Array(keys)) => {
                for k in keys {
                    let k = k.as_str().unwrap_or_default();
                    if global.remove(k).is_none() {
                        return Err(format!(
                            "Attribute 'IgnoreGlobals' should be a valid attribute. Resource {id} has invalid resource attribute 'IgnoreGlobals' on item '{k}'."
                        ));
                    }
                }
            }
            Some(_) => {
                return Err(format!(
                    "Resource {id} has invalid resource attribute 'IgnoreGlobals'."
                ));
            }
        }
        let local = match r.get("Properties") {
            Some(Value::Object(p)) => p.clone(),
            _ => Map::new(),
        };
        let merged = merge(Value::Object(global), Value::Object(local));
        r.insert("Properties".into(), merged);
    }
    Ok(())
}

#[derive(PartialEq)]
enum Token {
    Primitive,
    Dict,
    List,
}

fn token(v: &Value) -> Token {
    match v {
        Value::Object(_) if is_intrinsic(v) => Token::Primitive,
        Value::Object(_) => Token::Dict,
        Value::Array(_) => Token::List,
        _ => Token::Primitive,
    }
}

fn merge(global: Value, local: Value) -> Value {
    let (tg, tl) = (token(&global), token(&local));
    if tg != tl || tg == Token::Primitive {
        return local;
    }
    match (global, local) {
        (Value::Object(mut g), Value::Object(l)) => {
            for (k, v) in l {
                match g.get_mut(&k) {
                    Some(gv) => {
                        let old = gv.take();
                        *gv = merge(old, v);
                    }
                    None => {
                        g.insert(k, v);
                    }
                }
            }
            Value::Object(g)
        }
        (Value::Array(mut g), Value::Array(l)) => {
            g.extend(l);
            Value::Array(g)
        }
        (_, local) => local,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn merges_maps_lists_and_intrinsics() {
        let g = json!({"Environment": {"Variables": {"A": "1", "B": "2"}}, "Layers": ["g"], "Timeout": 3, "Role": {"Ref": "R"}});
        let l = json!({"Environment": {"Variables": {"B": "x"}}, "Layers": ["l"], "Role": {"Fn::GetAtt": ["X", "Arn"]}});
        assert_eq!(
            merge(g, l),
            json!({"Environment": {"Variables": {"A": "1", "B": "x"}}, "Layers": ["g", "l"], "Timeout": 3, "Role": {"Fn::GetAtt": ["X", "Arn"]}})
        );
    }
}
