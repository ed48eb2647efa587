//! CloudFormation providers of AWS::ApiGatewayV2::*, declared as [`Spec`]s for the one
//! provider in [`crate::apigateway::provider`]. The v2 API's member names are the properties'
//! names in camel case, so most types hand their properties over as they are.

use super::ops::{API_MAPPINGS, Children, INTEGRATION_RESPONSES, ROUTE_RESPONSES};
use crate::apigateway::provider::{
    Env, Made, Props, Spec, all_tags, api_input, prop_error, str_prop,
};
use crate::apigateway::state::V2Api;
use cumulo_wire::AwsError;
use serde_json::{Value, json};

fn input(p: &Props, drop: &[&str]) -> Value {
    let mut v = api_input(&Value::Object(p.clone()));
    for k in drop {
        v.as_object_mut().map(|m| m.remove(*k));
    }
    v
}

/// The properties that changed, as an Update* input.
fn changes(old: &Props, new: &Props, drop: &[&str]) -> Value {
    let mut m = Props::new();
    for (k, v) in new {
        if old.get(k) != Some(v) {
            m.insert(k.clone(), v.clone());
        }
    }
    input(&m, drop)
}

fn api_made(env: &Env<'_>, id: &str) -> Result<Made, AwsError> {
    let a = env.svc.get_api(env.region(), id)?;
    Ok(Made::new(id)
        .with("ApiId", id)
        .with("ApiEndpoint", a["apiEndpoint"].clone()))
}

fn body_of(env: &Env<'_>, p: &Props) -> Result<Option<Value>, AwsError> {
    if let Some(b) = p.get("Body") {
        return Ok(Some(json!({"body": b.clone()})));
    }
    if let Some(loc) = p.get("BodyS3Location") {
        let (bucket, key) = (
            loc["Bucket"].as_str().unwrap_or(""),
            loc["Key"].as_str().unwrap_or(""),
        );
        let got = env
            .ps
            .s3
            .get_object(
                bucket,
                key,
                loc["Version"].as_str(),
                None,
                &crate::s3::Conditions::default(),
            )?
            .map_err(|_| {
                prop_error(format!(
                    "cumulo: BodyS3Location s3://{bucket}/{key} could not be read"
                ))
            })?;
        return Ok(Some(json!({"body": String::from_utf8_lossy(&got.body)})));
    }
    Ok(None)
}

const BODY: &[&str] = &[
    "body",
    "bodyS3Location",
    "basePath",
    "failOnWarnings",
    "credentialsArn",
];

fn api_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let host = crate::providers::endpoint_host(env.ctx);
    let id = match body_of(env, p)? {
        Some(body) => {
            let a = env.svc.import_api(env.region(), &host, None, &body)?;
            let id = a["apiId"].as_str().unwrap_or("").to_string();
            let rest = input(p, BODY);
            if rest.as_object().is_some_and(|m| !m.is_empty()) {
                env.svc.update_api(env.region(), &id, &rest)?;
            }
            id
        }
        None => {
            let mut i = input(p, BODY);
            if i.get("protocolType").is_none() {
                return Err(prop_error(
                    "Properties validation failed for resource with message: #: required key [ProtocolType] not found",
                ));
            }
            if i.get("name").is_none() {
                i["name"] = env.ctx.generated_name(128, "").into();
            }
            let a = env.svc.create_api(env.region(), &host, &i)?;
            a["apiId"].as_str().unwrap_or("").to_string()
        }
    };
    let tags = all_tags(env.ctx, p);
    if let Some(t) = tags.as_object().filter(|t| !t.is_empty()) {
        let arn = format!("arn:aws:apigateway:{}::/apis/{id}", env.region());
        env.svc.tag_resource(&arn, t, true)?;
    }
    api_made(env, &id)
}

fn api_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    let body_changed = old.get("Body") != new.get("Body")
        || old.get("BodyS3Location") != new.get("BodyS3Location");
    if body_changed && let Some(body) = body_of(env, new)? {
        env.svc.import_api(env.region(), "", Some(id), &body)?;
    }
    let ch = changes(
        old,
        new,
        &[
            "body",
            "bodyS3Location",
            "basePath",
            "failOnWarnings",
            "tags",
            "target",
            "routeKey",
            "credentialsArn",
        ],
    );
    env.svc.update_api(env.region(), id, &ch)?;
    if old.get("Tags") != new.get("Tags") {
        let arn = format!("arn:aws:apigateway:{}::/apis/{id}", env.region());
        let keys: Vec<String> = old
            .get("Tags")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        env.svc.untag_resource(&arn, &keys, true)?;
        if let Some(t) = new.get("Tags").and_then(Value::as_object) {
            env.svc.tag_resource(&arn, t, true)?;
        }
    }
    api_made(env, id)
}

fn route_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let r = env
        .svc
        .create_route(env.region(), str_prop(p, "ApiId"), &input(p, &["apiId"]))?;
    let id = r["routeId"].as_str().unwrap_or("").to_string();
    Ok(Made::new(&id).with("RouteId", id))
}

fn route_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    env.svc.update_route(
        env.region(),
        str_prop(new, "ApiId"),
        id,
        &changes(old, new, &["apiId"]),
    )?;
    Ok(Made::new(id).with("RouteId", id))
}

/// A route's or an integration's response: `parent` is the property naming the parent's id.
fn response_create(
    env: &Env<'_>,
    p: &Props,
    r: &Children<V2Api>,
    parent: &str,
    id_attr: &str,
) -> Result<Made, AwsError> {
    let parent_member = lower_first(parent);
    let doc = env.svc.create_child(
        r,
        env.region(),
        str_prop(p, "ApiId"),
        str_prop(p, parent),
        &input(p, &["apiId", &parent_member]),
    )?;
    let id = doc[lower_first(id_attr)].as_str().unwrap_or("").to_string();
    Ok(Made::new(&id).with(id_attr, id))
}

fn response_update(
    env: &Env<'_>,
    (id, old, new): (&str, &Props, &Props),
    r: &Children<V2Api>,
    parent: &str,
    id_attr: &str,
) -> Result<Made, AwsError> {
    env.svc.update_child(
        r,
        env.region(),
        str_prop(new, "ApiId"),
        str_prop(new, parent),
        id,
        &changes(old, new, &["apiId", &lower_first(parent)]),
    )?;
    Ok(Made::new(id).with(id_attr, id))
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_ascii_lowercase().to_string() + c.as_str())
        .unwrap_or_default()
}

fn integration_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let i =
        env.svc
            .create_integration(env.region(), str_prop(p, "ApiId"), &input(p, &["apiId"]))?;
    let id = i["integrationId"].as_str().unwrap_or("").to_string();
    Ok(Made::new(&id).with("IntegrationId", id))
}

fn integration_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    env.svc.update_integration_v2(
        env.region(),
        str_prop(new, "ApiId"),
        id,
        &changes(old, new, &["apiId"]),
    )?;
    Ok(Made::new(id).with("IntegrationId", id))
}

fn stage_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let mut i = input(p, &["apiId"]);
    i["tags"] = all_tags(env.ctx, p);
    let s = env
        .svc
        .create_stage_v2(env.region(), str_prop(p, "ApiId"), &i)?;
    let name = s["stageName"].as_str().unwrap_or("").to_string();
    Ok(Made::new(&name).with("Id", name))
}

fn stage_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    env.svc.update_stage_v2(
        env.region(),
        str_prop(new, "ApiId"),
        id,
        &changes(old, new, &["apiId", "stageName", "tags"]),
    )?;
    Ok(Made::new(id).with("Id", id))
}

fn deployment_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let d =
        env.svc
            .create_deployment_v2(env.region(), str_prop(p, "ApiId"), &input(p, &["apiId"]))?;
    let id = d["deploymentId"].as_str().unwrap_or("").to_string();
    Ok(Made::new(&id).with("DeploymentId", id))
}

fn deployment_update(
    env: &Env<'_>,
    _id: &str,
    _old: &Props,
    new: &Props,
) -> Result<Made, AwsError> {
    deployment_create(env, new)
}

fn authorizer_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let a =
        env.svc
            .create_authorizer_v2(env.region(), str_prop(p, "ApiId"), &input(p, &["apiId"]))?;
    let id = a["authorizerId"].as_str().unwrap_or("").to_string();
    Ok(Made::new(&id).with("AuthorizerId", id))
}

fn authorizer_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    env.svc.update_authorizer_v2(
        env.region(),
        str_prop(new, "ApiId"),
        id,
        &changes(old, new, &["apiId"]),
    )?;
    Ok(Made::new(id).with("AuthorizerId", id))
}

fn domain_made(env: &Env<'_>, name: &str) -> Result<Made, AwsError> {
    let d = env.svc.get_domain_name_v2(env.region(), name)?;
    let c = &d["domainNameConfigurations"][0];
    Ok(Made::new(name)
        .with("RegionalDomainName", c["apiGatewayDomainName"].clone())
        .with("RegionalHostedZoneId", c["hostedZoneId"].clone())
        .with(
            "DomainNameArn",
            format!("arn:aws:apigateway:{}::/domainnames/{name}", env.region()),
        ))
}

fn domain_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let mut i = input(p, &[]);
    i["tags"] = all_tags(env.ctx, p);
    env.svc.create_domain_name_v2(env.region(), &i)?;
    domain_made(env, str_prop(p, "DomainName"))
}

fn domain_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    env.svc.update_domain_name_v2(
        env.region(),
        id,
        &changes(old, new, &["domainName", "tags"]),
    )?;
    domain_made(env, id)
}

fn mapping_create(env: &Env<'_>, p: &Props) -> Result<Made, AwsError> {
    let m = env.svc.create_child(
        &API_MAPPINGS,
        env.region(),
        "",
        str_prop(p, "DomainName"),
        &input(p, &["domainName"]),
    )?;
    let id = m["apiMappingId"].as_str().unwrap_or("").to_string();
    Ok(Made::new(&id).with("ApiMappingId", id))
}

fn mapping_update(env: &Env<'_>, id: &str, old: &Props, new: &Props) -> Result<Made, AwsError> {
    env.svc.update_child(
        &API_MAPPINGS,
        env.region(),
        "",
        str_prop(new, "DomainName"),
        id,
        &changes(old, new, &["domainName"]),
    )?;
    Ok(Made::new(id).with("ApiMappingId", id))
}

pub(crate) static SPECS: &[Spec] = &[
    Spec {
        type_name: "AWS::ApiGatewayV2::Api",
        attributes: &["ApiId", "ApiEndpoint"],
        properties: &[
            "Name",
            "ProtocolType",
            "Description",
            "Version",
            "RouteSelectionExpression",
            "ApiKeySelectionExpression",
            "CorsConfiguration",
            "DisableExecuteApiEndpoint",
            "DisableSchemaValidation",
            "Target",
            "RouteKey",
            "CredentialsArn",
            "Body",
            "BodyS3Location",
            "BasePath",
            "FailOnWarnings",
            "IpAddressType",
            "Tags",
        ],
        unsupported: &[],
        create: api_create,
        update: api_update,
        delete: |env, id, _| env.svc.delete_api(env.region(), id),
    },
    Spec {
        type_name: "AWS::ApiGatewayV2::Route",
        attributes: &["RouteId"],
        properties: &[
            "ApiId",
            "RouteKey",
            "Target",
            "AuthorizationType",
            "AuthorizerId",
            "ApiKeyRequired",
            "AuthorizationScopes",
            "OperationName",
            "RequestModels",
            "RequestParameters",
            "ModelSelectionExpression",
            "RouteResponseSelectionExpression",
        ],
        unsupported: &[],
        create: route_create,
        update: route_update,
        delete: |env, id, p| env.svc.delete_route(env.region(), str_prop(p, "ApiId"), id),
    },
    Spec {
        type_name: "AWS::ApiGatewayV2::RouteResponse",
        attributes: &["RouteResponseId"],
        properties: &[
            "ApiId",
            "RouteId",
            "RouteResponseKey",
            "ModelSelectionExpression",
            "ResponseModels",
            "ResponseParameters",
        ],
        unsupported: &[],
        create: |env, p| response_create(env, p, &ROUTE_RESPONSES, "RouteId", "RouteResponseId"),
        update: |env, id, old, new| {
            response_update(
                env,
                (id, old, new),
                &ROUTE_RESPONSES,
                "RouteId",
                "RouteResponseId",
            )
        },
        delete: |env, id, p| {
            let (api, route) = (str_prop(p, "ApiId"), str_prop(p, "RouteId"));
            env.svc
                .delete_child(&ROUTE_RESPONSES, env.region(), api, route, id)
        },
    },
    Spec {
        type_name: "AWS::ApiGatewayV2::IntegrationResponse",
        attributes: &["IntegrationResponseId"],
        properties: &[
            "ApiId",
            "IntegrationId",
            "IntegrationResponseKey",
            "ContentHandlingStrategy",
            "ResponseParameters",
            "ResponseTemplates",
            "TemplateSelectionExpression",
        ],
        unsupported: &[],
        create: |env, p| {
            response_create(
                env,
                p,
                &INTEGRATION_RESPONSES,
                "IntegrationId",
                "IntegrationResponseId",
            )
        },
        update: |env, id, old, new| {
            response_update(
                env,
                (id, old, new),
                &INTEGRATION_RESPONSES,
                "IntegrationId",
                "IntegrationResponseId",
            )
        },
        delete: |env, id, p| {
            let (api, integ) = (str_prop(p, "ApiId"), str_prop(p, "IntegrationId"));
            env.svc
                .delete_child(&INTEGRATION_RESPONSES, env.region(), api, integ, id)
        },
    },
    Spec {
        type_name: "AWS::ApiGatewayV2::Integration",
        attributes: &["IntegrationId"],
        properties: &[
            "ApiId",
            "IntegrationType",
            "IntegrationUri",
            "IntegrationMethod",
            "PayloadFormatVersion",
            "ConnectionType",
            "ConnectionId",
            "CredentialsArn",
            "Description",
            "TimeoutInMillis",
            "RequestParameters",
            "RequestTemplates",
            "ResponseParameters",
            "TemplateSelectionExpression",
            "PassthroughBehavior",
            "ContentHandlingStrategy",
            "IntegrationSubtype",
            "TlsConfig",
        ],
        unsupported: &[],
        create: integration_create,
        update: integration_update,
        delete: |env, id, p| {
            env.svc
                .delete_integration_v2(env.region(), str_prop(p, "ApiId"), id)
        },
    },
    Spec {
        type_name: "AWS::ApiGatewayV2::Stage",
        attributes: &["Id"],
        properties: &[
            "ApiId",
            "StageName",
            "AutoDeploy",
            "DeploymentId",
            "Description",
            "StageVariables",
            "DefaultRouteSettings",
            "RouteSettings",
            "AccessLogSettings",
            "ClientCertificateId",
            "Tags",
        ],
        unsupported: &[],
        create: stage_create,
        update: stage_update,
        delete: |env, id, p| {
            env.svc
                .delete_stage_v2(env.region(), str_prop(p, "ApiId"), id)
        },
    },
    Spec {
        type_name: "AWS::ApiGatewayV2::Deployment",
        attributes: &["DeploymentId"],
        properties: &["ApiId", "Description", "StageName"],
        unsupported: &[],
        create: deployment_create,
        update: deployment_update,
        delete: |env, id, p| {
            env.svc
                .delete_deployment_v2(env.region(), str_prop(p, "ApiId"), id)
        },
    },
    Spec {
        type_name: "AWS::ApiGatewayV2::Authorizer",
        attributes: &["AuthorizerId"],
        properties: &[
            "ApiId",
            "Name",
            "AuthorizerType",
            "AuthorizerUri",
            "AuthorizerCredentialsArn",
            "AuthorizerPayloadFormatVersion",
            "AuthorizerResultTtlInSeconds",
            "EnableSimpleResponses",
            "IdentitySource",
            "IdentityValidationExpression",
            "JwtConfiguration",
        ],
        unsupported: &[],
        create: authorizer_create,
        update: authorizer_update,
        delete: |env, id, p| {
            env.svc
                .delete_authorizer_v2(env.region(), str_prop(p, "ApiId"), id)
        },
    },
    Spec {
        type_name: "AWS::ApiGatewayV2::DomainName",
        attributes: &[
            "RegionalDomainName",
            "RegionalHostedZoneId",
            "DomainNameArn",
        ],
        properties: &[
            "DomainName",
            "DomainNameConfigurations",
            "MutualTlsAuthentication",
            "Tags",
        ],
        unsupported: &[],
        create: domain_create,
        update: domain_update,
        delete: |env, id, _| env.svc.delete_domain_name_v2(env.region(), id),
    },
    Spec {
        type_name: "AWS::ApiGatewayV2::ApiMapping",
        attributes: &["ApiMappingId"],
        properties: &["ApiId", "DomainName", "Stage", "ApiMappingKey"],
        unsupported: &[],
        create: mapping_create,
        update: mapping_update,
        delete: |env, id, p| {
            env.svc.delete_child(
                &API_MAPPINGS,
                env.region(),
                "",
                str_prop(p, "DomainName"),
                id,
            )
        },
    },
];
