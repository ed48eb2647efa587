//! An AWS::Serverless::Api: the RestApi with its body, the Deployment named after its hash,
//! the Stage, and what Auth and Domain add.

use super::*;

pub(crate) const PROPERTIES: [&str; 37] = [
    "__MANAGE_SWAGGER",
    "Name",
    "StageName",
    "Tags",
    "PropagateTags",
    "DefinitionBody",
    "DefinitionUri",
    "MergeDefinitions",
    "CacheClusterEnabled",
    "CacheClusterSize",
    "Variables",
    "EndpointConfiguration",
    "MethodSettings",
    "BinaryMediaTypes",
    "MinimumCompressionSize",
    "Cors",
    "Auth",
    "GatewayResponses",
    "AccessLogSetting",
    "CanarySetting",
    "TracingEnabled",
    "OpenApiVersion",
    "Models",
    "Domain",
    "FailOnWarnings",
    "Description",
    "Mode",
    "DisableExecuteApiEndpoint",
    "ApiKeySourceType",
    "AlwaysDeploy",
    "Policy",
    "SecurityPolicy",
    "EndpointAccessMode",
    "Connectors",
    "IgnoreGlobals",
    "ResourcePolicy",
    "DomainV2",
];

/// The generated types that take the API's tags when PropagateTags says so.
pub(crate) const TAGGED: [&str; 5] = [
    "AWS::ApiGateway::RestApi",
    "AWS::ApiGateway::Stage",
    "AWS::ApiGateway::DomainName",
    "AWS::ApiGateway::UsagePlan",
    "AWS::ApiGateway::ApiKey",
];

/// An AWS::Serverless::Api: the RestApi with its body, its Deployment (named after the body's
/// hash) and its Stage.
pub fn translate(t: &mut Translation, sam: &Sam) -> Result<Vec<Res>, String> {
    sam.check_known(&PROPERTIES[..33])?;
    let Some(stage_name) = sam.cloned("StageName") else {
        return Err(invalid(sam.id, "Missing required property 'StageName'."));
    };
    let uri = sam.get("DefinitionUri").filter(|v| truthy(Some(v)));
    let mut body = t.rest.bodies.get(sam.id).cloned().filter(|b| b.truthy());
    if uri.is_some() && body.is_some() {
        return Err(invalid(
            sam.id,
            "Specify either 'DefinitionUri' or 'DefinitionBody' property and not both.",
        ));
    }
    if uri.is_some() && truthy(sam.get("MergeDefinitions")) {
        return Err(invalid(
            sam.id,
            "Cannot set 'MergeDefinitions' to True when using `DefinitionUri`.",
        ));
    }
    let open_api_version = sam.get("OpenApiVersion").filter(|v| truthy(Some(v)));
    if let Some(v) = open_api_version
        && !v.as_str().is_some_and(|s| {
            let mut parts = s.split('.');
            matches!(parts.next(), Some("2" | "3")) && {
                let rest: Vec<&str> = parts.collect();
                (1..=2).contains(&rest.len())
                    && rest
                        .iter()
                        .all(|p| p.len() == 1 && p.chars().all(|c| c.is_ascii_digit()))
            }
        })
    {
        return Err(invalid(
            sam.id,
            "The OpenApiVersion value must be of the format '3.0.0'.",
        ));
    }
    let mut api = sam.main("AWS::ApiGateway::RestApi");
    let binary = sam
        .get("BinaryMediaTypes")
        .map(|b| crate::intrinsics::resolve_params(b, &t.params));
    api.set("BinaryMediaTypes", binary.clone());
    api.set(
        "MinimumCompressionSize",
        sam.cloned("MinimumCompressionSize"),
    );
    if let Some(endpoint) = sam.get("EndpointConfiguration").filter(|v| truthy(Some(v))) {
        endpoint_configuration(sam.id, &mut api, endpoint)?;
    }
    if let Some(cors) = sam.get("Cors").filter(|v| truthy(Some(v))) {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "Cors works only with inline Swagger specified in 'DefinitionBody' property.",
            ));
        };
        add_cors(sam.id, b, cors)?;
    }
    let auth = sam
        .get("Auth")
        .map(|a| crate::intrinsics::resolve_params(a, &t.params))
        .filter(|a| truthy(Some(a)));
    if let Some(auth) = &auth {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "Auth works only with inline Swagger specified in 'DefinitionBody' property.",
            ));
        };
        // The implicit API's own `Prod` is the translator's `str`, a template's a unicode one.
        let stage = match &stage_name {
            Value::String(s) if sam.id == IMPLICIT && s == "Prod" => Py::str(s),
            other => Py::from_template(other),
        };
        auth::add_api_auth(sam.id, b, auth, &stage)?;
        auth::fix_partition(b, &t.ctx.partition);
        *b = openapi_postprocess(b.clone(), open_api_version.and_then(Value::as_str));
    }
    if let Some(responses) = sam.get("GatewayResponses").filter(|v| truthy(Some(v))) {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "GatewayResponses works only with inline Swagger specified in 'DefinitionBody' property.",
            ));
        };
        add_gateway_responses(sam.id, b, responses)?;
    }
    if let Some(binary) = binary.filter(|b| truthy(Some(b)))
        && let Some(b) = body.as_mut()
    {
        let mut editor = Editor::new(b).map_err(|e| invalid(sam.id, e))?;
        editor.doc.set(
            BINARY_MEDIA_TYPES,
            false,
            replace_slashes(&Py::from_template(&binary)),
        );
        *b = editor.swagger();
    }
    if let Some(models) = sam.get("Models").filter(|v| truthy(Some(v))) {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "Models works only with inline Swagger specified in 'DefinitionBody' property.",
            ));
        };
        add_models(sam.id, b, models)?;
        *b = openapi_postprocess(b.clone(), open_api_version.and_then(Value::as_str));
    }
    if truthy(sam.get("FailOnWarnings")) {
        api.set("FailOnWarnings", sam.cloned("FailOnWarnings"));
    }
    if let Some(disable) = sam.get("DisableExecuteApiEndpoint") {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "DisableExecuteApiEndpoint works only within 'DefinitionBody' property.",
            ));
        };
        disable_execute_api_endpoint(sam.id, b, disable)?;
    }
    let mut swagger = None;
    if let Some(u) = uri {
        let loc = body_s3_location(sam.id, u)?;
        api.put("BodyS3Location", loc.to_json());
        swagger = Some(loc);
    } else if let Some(b) = body {
        let b = openapi_postprocess(b, open_api_version.and_then(Value::as_str));
        api.put("Body", b.to_json());
        swagger = Some(b);
    }
    for p in [
        "Name",
        "Description",
        "Mode",
        "ApiKeySourceType",
        "Policy",
        "SecurityPolicy",
        "EndpointAccessMode",
    ] {
        if truthy(sam.get(p)) {
            api.set(p, sam.cloned(p));
        }
    }
    let domain = match sam.get("Domain") {
        Some(d) => Some(domain::construct(
            sam,
            &crate::intrinsics::resolve_params(d, &t.params),
            &mut t.rest.record_sets,
        )?),
        None => None,
    };
    let mut deployment = Res::new(
        format!("{}Deployment", sam.id),
        "AWS::ApiGateway::Deployment",
        sam.passthrough(),
    );
    deployment.put("RestApiId", reference(sam.id));
    if open_api_version.is_none() {
        deployment.put("StageName", json!("Stage"));
    }
    let prefix = stage_name.as_str().unwrap_or("");
    let stage_id = if !prefix.is_empty() && prefix.chars().all(char::is_alphanumeric) {
        format!("{}{prefix}Stage", sam.id)
    } else if prefix.is_empty() {
        format!("{}Stage", sam.id)
    } else {
        format!("{}Stage{}", sam.id, pyjson::hash(&json!(prefix)))
    };
    if let Some(swagger) = swagger.filter(Py::truthy) {
        let mut inputs = vec![swagger.to_str()];
        if let Some(v) = open_api_version {
            inputs.push(match v {
                Value::String(s) => s.clone(),
                other => Py::from_template(other).to_str(),
            });
        }
        if let Some(d) = &domain {
            inputs.push(d.hashed.clone());
        }
        if let Some(names) = t.rest.function_names.get(sam.id).filter(|n| !n.is_empty()) {
            inputs.push(names.clone());
        }
        // AlwaysDeploy: the hash of the caller's clock alone (whole seconds), a new Deployment
        // at every operation.
        if truthy(sam.get("AlwaysDeploy")) {
            inputs = vec![t.ctx.now.to_string()];
        }
        let data = inputs.join("||");
        let digest = hex::encode(Sha1::digest(data.as_bytes()));
        deployment.id = format!("{}Deployment{}", sam.id, &digest[..10]);
        deployment.put(
            "Description",
            json!(format!("RestApi deployment id: {digest}")),
        );
    }
    let mut stage = Res::new(&stage_id, "AWS::ApiGateway::Stage", sam.passthrough());
    stage.put("DeploymentId", reference(&deployment.id));
    stage.put("RestApiId", reference(sam.id));
    stage.put("StageName", stage_name);
    for (from, to) in [
        ("CacheClusterEnabled", "CacheClusterEnabled"),
        ("CacheClusterSize", "CacheClusterSize"),
        ("Variables", "Variables"),
        ("MethodSettings", "MethodSettings"),
        ("AccessLogSetting", "AccessLogSetting"),
        ("CanarySetting", "CanarySetting"),
        ("TracingEnabled", "TracingEnabled"),
    ] {
        stage.set(to, sam.cloned(from));
    }
    if let Some(tags) = sam.get("Tags") {
        let Some(tags) = tags.as_object() else {
            return Err(invalid(sam.id, "Type of property 'Tags' is invalid."));
        };
        // The converted Tags dict, in its Python 2.7 order.
        let ordered: Map<String, Value> = py27_order(tags.keys())
            .into_iter()
            .filter_map(|k| tags.get(&k).map(|v| (k, v.clone())))
            .collect();
        stage.put("Tags", Value::Array(tag_list(&ordered)));
    }
    t.refs.add(sam.id, "Stage", &stage_id);
    t.refs.add(sam.id, "Deployment", &deployment.id);
    let mut out = vec![api, deployment, stage];
    if let Some(d) = domain {
        if d.resources
            .iter()
            .any(|r| r.ty == "AWS::ApiGateway::DomainName")
        {
            let first = &d.resources[0].id;
            t.refs.add(sam.id, "DomainName", first);
        }
        out.extend(d.resources);
    }
    if let Some(auth) = &auth {
        out.extend(auth::authorizer_permissions(sam, auth, &t.ctx.partition)?);
        let plan = auth::usage_plan(sam, auth, &stage_id, &mut t.rest.shared)?;
        for r in &plan {
            let property = match r.ty.as_str() {
                "AWS::ApiGateway::UsagePlan" => "UsagePlan",
                "AWS::ApiGateway::ApiKey" => "ApiKey",
                _ => "UsagePlanKey",
            };
            t.refs.add(sam.id, property, &r.id);
        }
        out.extend(plan);
    }
    if truthy(sam.get("PropagateTags"))
        && let Some(Value::Object(tags)) = sam.get("Tags").filter(|t| truthy(Some(t)))
    {
        let ordered: Map<String, Value> = py27_order(tags.keys())
            .into_iter()
            .filter_map(|k| tags.get(&k).map(|v| (k, v.clone())))
            .collect();
        for r in out.iter_mut().filter(|r| TAGGED.contains(&r.ty.as_str())) {
            r.put("Tags", Value::Array(tag_list(&ordered)));
        }
    }
    Ok(out)
}

/// `_add_endpoint_extension`: `disableExecuteApiEndpoint` in the endpoint configuration
/// extension (in each of an OpenAPI 3 body's servers).
pub(crate) fn disable_execute_api_endpoint(
    id: &str,
    body: &mut Py,
    value: &Value,
) -> Result<(), String> {
    const EXTENSION: &str = "x-amazon-apigateway-endpoint-configuration";
    let mut editor = Editor::new(body).map_err(|e| invalid(id, e))?;
    let value = Py::from_template(value);
    let deep_set = |d: &mut Py, what: &str| -> Result<(), String> {
        let Some(d) = d.as_dict_mut() else {
            return Err(crate::structure(format!(
                "Invalid OpenAPI definition{what}: ."
            )));
        };
        let config = d.setdefault(EXTENSION, false, Py::Dict(Dict::plain()));
        let Some(config) = config.as_dict_mut() else {
            return Err(crate::structure(format!(
                "Invalid OpenAPI definition{what}: {EXTENSION}."
            )));
        };
        config.set("disableExecuteApiEndpoint", false, value.clone());
        Ok(())
    };
    let openapi = editor
        .doc
        .get("openapi")
        .filter(|v| v.truthy())
        .and_then(Py::as_str)
        .is_some_and(openapi3);
    if openapi {
        let mut servers = match editor.doc.get("servers") {
            Some(Py::List(l)) => l.clone(),
            Some(_) => return Err(invalid(id, "Property 'servers' should be a list.")),
            None => vec![Py::Dict(Dict::py27())],
        };
        for (i, config) in servers.iter_mut().enumerate() {
            deep_set(config, &format!(" of 'servers[{i}]'"))?;
        }
        editor.doc.set("servers", false, Py::List(servers));
    } else {
        let mut doc = Py::Dict(editor.doc.clone());
        deep_set(&mut doc, "")?;
        if let Py::Dict(d) = doc {
            editor.doc = d;
        }
    }
    *body = editor.swagger();
    Ok(())
}

pub(crate) fn endpoint_configuration(id: &str, api: &mut Res, value: &Value) -> Result<(), String> {
    match value {
        Value::Object(o) if truthy(o.get("Type")) => {
            let ty = o["Type"].clone();
            api.put("Parameters", json!({"endpointConfigurationTypes": ty}));
            let mut config = json!({"Types": [ty]});
            if o.contains_key("VPCEndpointIds") && o.contains_key("VpcEndpointIds") {
                return Err(invalid(
                    id,
                    "'VPCEndpointIds' and 'VpcEndpointIds' cannot be used together in EndpointConfiguration.",
                ));
            }
            if let Some(ids) = o.get("VPCEndpointIds").or_else(|| o.get("VpcEndpointIds")) {
                config["VpcEndpointIds"] = ids.clone();
            }
            if let Some(ip) = o.get("IpAddressType") {
                config["IpAddressType"] = ip.clone();
            }
            api.put("EndpointConfiguration", config);
        }
        other => {
            api.put("EndpointConfiguration", json!({"Types": [other]}));
            api.put("Parameters", json!({"endpointConfigurationTypes": other}));
        }
    }
    Ok(())
}

/// `_construct_body_s3_dict`.
pub(crate) fn body_s3_location(id: &str, uri: &Value) -> Result<Py, String> {
    let mut out = Dict::py27();
    match uri {
        Value::Object(o) => {
            if !truthy(o.get("Bucket")) || !truthy(o.get("Key")) {
                return Err(invalid(
                    id,
                    "'DefinitionUri' requires Bucket and Key properties to be specified.",
                ));
            }
            out.set("Bucket", false, Py::from_template(&o["Bucket"]));
            out.set("Key", false, Py::from_template(&o["Key"]));
            if let Some(v) = o.get("Version") {
                out.set("Version", false, Py::from_template(v));
            }
        }
        Value::String(s) => {
            let parsed = s
                .strip_prefix("s3://")
                .and_then(|rest| rest.split_once('/'))
                .filter(|(b, k)| !b.is_empty() && !k.is_empty());
            let Some((bucket, rest)) = parsed else {
                return Err(invalid(
                    id,
                    "'DefinitionUri' is not a valid S3 Uri of the form 's3://bucket/key' with optional versionId query parameter.",
                ));
            };
            let (key, version) = match rest.split_once("?versionId=") {
                Some((k, v)) => (k, Some(v)),
                None => (rest, None),
            };
            if rest.contains('?') && version.is_none() {
                return Err(unsupported(
                    id,
                    "A DefinitionUri with a query other than versionId",
                ));
            }
            out.set("Bucket", false, Py::uni(bucket));
            out.set("Key", false, Py::uni(key));
            if let Some(v) = version {
                out.set("Version", false, Py::uni(v));
            }
        }
        _ => {
            return Err(unsupported(
                id,
                "A DefinitionUri given as an intrinsic function",
            ));
        }
    }
    Ok(Py::Dict(out))
}
