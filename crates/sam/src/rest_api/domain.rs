//! A REST API's custom `Domain`: the AWS::ApiGateway::DomainName (named after a hash of the
//! domain name), a BasePathMapping per base path, and the Route 53 alias records (grouped per
//! hosted zone across APIs, or one group per domain). The domain, as the translator completes
//! it, is part of the Deployment's hash (`json.dumps` of its Python 2.7 dict). A PRIVATE
//! domain (the translator's DomainNameV2) is refused by name.

use crate::py27::{Dict, Py};
use crate::resource::{Res, Sam, get_att, reference};
use crate::{invalid, pyjson, unsupported};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

const ENDPOINTS: [&str; 3] = ["EDGE", "REGIONAL", "PRIVATE"];

/// The record set groups shared by the APIs of a template, by logical id.
#[derive(Debug, Default)]
pub struct RecordSetGroups {
    groups: BTreeMap<String, Res>,
}

impl RecordSetGroups {
    /// The group of this logical id, made by `make` when it is the first (an HTTP API's
    /// domain shares these with the REST APIs', as the translator does).
    pub(crate) fn entry(&mut self, id: &str, make: impl FnOnce() -> Res) -> &mut Res {
        self.groups.entry(id.to_string()).or_insert_with(make)
    }
}

fn get<'a>(d: &'a Dict, k: &str) -> Option<&'a Py> {
    d.get(k).filter(|v| !matches!(v, Py::None))
}

/// What the domain adds: the resources, and the domain as the Deployment's hash reads it.
pub struct Domain {
    pub resources: Vec<Res>,
    pub hashed: String,
}

/// `_construct_api_domain`.
pub fn construct(
    sam: &Sam,
    domain: &Value,
    groups: &mut RecordSetGroups,
) -> Result<Domain, String> {
    let id = sam.id;
    let Py::Dict(mut d) = Py::from_template(domain) else {
        return Err(invalid(id, "Property 'Domain' should be a map."));
    };
    let Some(name) = get(&d, "DomainName").cloned() else {
        return Err(invalid(id, "Property 'Domain.DomainName' is required."));
    };
    let Some(certificate) = get(&d, "CertificateArn").cloned() else {
        return Err(invalid(id, "Property 'Domain.CertificateArn' is required."));
    };
    if get(&d, "EndpointConfiguration").and_then(Py::as_str) == Some("PRIVATE") {
        return Err(unsupported(id, "A PRIVATE custom Domain"));
    }
    let name_json = name.to_json();
    let domain_id = format!("ApiGatewayDomainName{}", pyjson::hash(&name_json));
    d.set("ApiDomainName", false, Py::str(&domain_id));
    let attrs = sam.passthrough();
    let mut resource = Res::new(&domain_id, "AWS::ApiGateway::DomainName", attrs.clone());
    resource.put("DomainName", name_json.clone());
    let endpoint = match get(&d, "EndpointConfiguration") {
        None => {
            d.set("EndpointConfiguration", false, Py::str("REGIONAL"));
            "REGIONAL".to_string()
        }
        Some(Py::Str(e, _)) if ENDPOINTS.contains(&e.as_str()) => e.clone(),
        Some(_) => {
            return Err(invalid(
                id,
                "EndpointConfiguration for Custom Domains must be one of ['EDGE', 'REGIONAL', 'PRIVATE'].",
            ));
        }
    };
    let certificate_property = if endpoint == "REGIONAL" {
        "RegionalCertificateArn"
    } else {
        "CertificateArn"
    };
    resource.put(certificate_property, certificate.to_json());
    let mut endpoint_config = json!({"Types": [endpoint]});
    if let Some(ip) = get(&d, "IpAddressType").filter(|v| v.truthy()) {
        endpoint_config["IpAddressType"] = ip.to_json();
    }
    resource.put("EndpointConfiguration", endpoint_config);
    if let Some(mtls) = get(&d, "MutualTlsAuthentication").filter(|v| v.truthy()) {
        let Some(m) = mtls.as_dict() else {
            return Err(invalid(
                id,
                "Property 'Domain.MutualTlsAuthentication' should be a map.",
            ));
        };
        if !m
            .keys()
            .iter()
            .all(|k| k == "TruststoreUri" || k == "TruststoreVersion")
        {
            return Err(invalid(
                id,
                "Available Domain.MutualTlsAuthentication fields are ['TruststoreUri', 'TruststoreVersion'].",
            ));
        }
        let mut out = Map::new();
        for k in ["TruststoreUri", "TruststoreVersion"] {
            if let Some(v) = get(m, k).filter(|v| v.truthy()) {
                out.insert(k.into(), v.to_json());
            }
        }
        resource.put("MutualTlsAuthentication", Value::Object(out));
    }
    for k in [
        "SecurityPolicy",
        "EndpointAccessMode",
        "Policy",
        "OwnershipVerificationCertificateArn",
    ] {
        if let Some(v) = get(&d, k).filter(|v| v.truthy()) {
            resource.put(k, v.to_json());
        }
    }
    let mut resources = vec![resource];
    // Base path mappings.
    let base_paths = match get(&d, "BasePath").filter(|v| v.truthy()) {
        Some(Py::Str(s, _)) => Some(vec![s.clone()]),
        Some(Py::List(l)) => {
            let mut out = Vec::new();
            for v in l {
                let Some(s) = v.as_str() else {
                    return Err(invalid(
                        id,
                        "Property 'Domain.BasePath' should be a list of str.",
                    ));
                };
                out.push(s.to_string());
            }
            Some(out)
        }
        _ => None,
    };
    let normalize = get(&d, "NormalizeBasePath").is_none_or(Py::truthy);
    let mapping = |logical_id: String, base: Option<String>| {
        let mut m = Res::new(
            logical_id,
            "AWS::ApiGateway::BasePathMapping",
            attrs.clone(),
        );
        m.put("DomainName", reference(&domain_id));
        m.put("RestApiId", reference(id));
        m.put("Stage", reference(&format!("{id}.Stage")));
        if let Some(b) = base {
            m.put("BasePath", json!(b));
        }
        m
    };
    match base_paths {
        None => resources.push(mapping(format!("{id}BasePathMapping"), None)),
        Some(paths) => {
            for base in paths {
                let path: String = base.chars().filter(|c| c.is_alphanumeric()).collect();
                let value = if normalize { path.clone() } else { base };
                resources.push(mapping(format!("{id}{path}BasePathMapping"), Some(value)));
            }
        }
    }
    // Route 53.
    if let Some(route53) = get(&d, "Route53").cloned() {
        let Some(r) = route53.as_dict() else {
            return Err(invalid(id, "Property 'Domain.Route53' should be a map."));
        };
        let zone = get(r, "HostedZoneId").or_else(|| get(r, "HostedZoneName"));
        let Some(zone) = zone.cloned() else {
            return Err(invalid(
                id,
                "HostedZoneId or HostedZoneName is required to enable Route53 support on Custom Domains.",
            ));
        };
        let (records, r) = record_sets(&d, &domain_id, &endpoint, r)?;
        d.set("Route53", false, Py::Dict(r.clone()));
        let zone_props = |g: &mut Res| {
            if let Some(v) = r.get("HostedZoneId") {
                g.put("HostedZoneId", v.to_json());
            }
            if let Some(v) = r.get("HostedZoneName") {
                g.put("HostedZoneName", v.to_json());
            }
        };
        match get(&r, "SeparateRecordSetGroup") {
            Some(Py::Bool(true)) => {
                let key = json!([zone.to_json(), name_json]);
                let group_id = format!("RecordSetGroup{}", pyjson::hash(&key));
                let mut g = Res::new(group_id, "AWS::Route53::RecordSetGroup", attrs.clone());
                zone_props(&mut g);
                g.put("RecordSets", Value::Array(records));
                resources.push(g);
            }
            Some(Py::Bool(false)) | None => {
                let group_id = format!("RecordSetGroup{}", pyjson::hash(&zone.to_json()));
                let g = groups.groups.entry(group_id.clone()).or_insert_with(|| {
                    let mut g = Res::new(&group_id, "AWS::Route53::RecordSetGroup", attrs.clone());
                    zone_props(&mut g);
                    g.put("RecordSets", json!([]));
                    g
                });
                if let Some(Value::Array(list)) = g.props.get_mut("RecordSets") {
                    list.extend(records);
                }
                resources.push(g.clone());
            }
            Some(_) => {
                return Err(invalid(
                    id,
                    "Property 'Domain.Route53.SeparateRecordSetGroup' should be a boolean.",
                ));
            }
        }
    }
    Ok(Domain {
        resources,
        hashed: Py::Dict(d).json_dumps(),
    })
}

/// `_construct_record_sets_for_domain`: an A record (and an AAAA one with IpV6) aliasing the
/// domain; an EDGE domain's distribution name is written back into the Route53 config.
fn record_sets(
    d: &Dict,
    domain_id: &str,
    endpoint: &str,
    route53: &Dict,
) -> Result<(Vec<Value>, Dict), String> {
    let mut r = route53.clone();
    let mut alias = Map::new();
    if let Some(h) = get(&r, "EvaluateTargetHealth") {
        alias.insert("EvaluateTargetHealth".into(), h.to_json());
    }
    match endpoint {
        "REGIONAL" => {
            alias.insert(
                "HostedZoneId".into(),
                get_att(domain_id, "RegionalHostedZoneId"),
            );
            alias.insert("DNSName".into(), get_att(domain_id, "RegionalDomainName"));
        }
        "EDGE" => {
            if get(&r, "DistributionDomainName").is_none() {
                r.set(
                    "DistributionDomainName",
                    false,
                    Py::plain(&get_att(domain_id, "DistributionDomainName")),
                );
            }
            alias.insert("HostedZoneId".into(), json!("Z2FDTNDATAQYW2"));
            alias.insert(
                "DNSName".into(),
                r.get("DistributionDomainName")
                    .map_or(Value::Null, Py::to_json),
            );
        }
        _ => {
            alias.insert(
                "HostedZoneId".into(),
                r.get("VpcEndpointHostedZoneId")
                    .map_or(Value::Null, Py::to_json),
            );
            alias.insert(
                "DNSName".into(),
                r.get("VpcEndpointDomainName")
                    .map_or(Value::Null, Py::to_json),
            );
        }
    }
    let name = d.get("DomainName").map_or(Value::Null, Py::to_json);
    let record = |ty: &str| {
        let mut rec =
            json!({"Name": name, "Type": ty, "AliasTarget": Value::Object(alias.clone())});
        for k in ["Region", "SetIdentifier"] {
            if let Some(v) = get(&r, k) {
                rec[k] = v.to_json();
            }
        }
        rec
    };
    let mut out = vec![record("A")];
    if get(&r, "IpV6") == Some(&Py::Bool(true)) {
        out.push(record("AAAA"));
    }
    Ok((out, r))
}
