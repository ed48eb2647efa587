//! An HTTP API's custom `Domain` (`ApiV2Generator._construct_api_domain`): the
//! AWS::ApiGatewayV2::DomainName (named after a hash of the domain name), an ApiMapping per
//! base path (or one without a key), and the Route 53 alias records, grouped per hosted zone
//! with the REST APIs' own.

use crate::resource::{Res, Sam, get_att, reference, truthy};
use crate::rest_api::domain::RecordSetGroups;
use crate::{invalid, pyjson};
use serde_json::{Map, Value, json};

const MTLS_FIELDS: [&str; 2] = ["TruststoreUri", "TruststoreVersion"];

/// What the domain adds, and the DomainName's logical id (`<Api>.DomainName`).
pub struct Domain {
    pub resources: Vec<Res>,
    pub domain_id: String,
}

fn present<'a>(d: &'a Map<String, Value>, k: &str) -> Option<&'a Value> {
    d.get(k).filter(|v| !v.is_null())
}

/// The domain's resources; `tags` are the DomainName's (SAM's `httpapi:createdBy` with the
/// API's own).
pub fn construct(
    sam: &Sam,
    domain: &Value,
    tags: Value,
    groups: &mut RecordSetGroups,
) -> Result<Domain, String> {
    let id = sam.id;
    let Some(d) = domain.as_object() else {
        return Err(invalid(id, "Type of property 'Domain' is invalid."));
    };
    let (Some(name), Some(certificate)) = (present(d, "DomainName"), present(d, "CertificateArn"))
    else {
        return Err(invalid(
            id,
            "Custom Domains only works if both DomainName and CertificateArn are provided.",
        ));
    };
    let domain_id = format!("ApiGatewayDomainNameV2{}", pyjson::hash(name));
    let attrs = sam.passthrough();
    let mut resource = Res::new(&domain_id, "AWS::ApiGatewayV2::DomainName", attrs.clone());
    resource.put("DomainName", name.clone());
    resource.put("Tags", tags);
    let endpoint = present(d, "EndpointConfiguration")
        .cloned()
        .unwrap_or(json!("REGIONAL"));
    if endpoint != json!("REGIONAL") {
        return Err(invalid(
            id,
            "EndpointConfiguration for Custom Domains must be one of ['REGIONAL'].",
        ));
    }
    let mut config = json!({"CertificateArn": certificate, "EndpointType": endpoint});
    for k in ["OwnershipVerificationCertificateArn", "SecurityPolicy"] {
        if let Some(v) = d.get(k).filter(|v| truthy(Some(v))) {
            config[k] = v.clone();
        }
    }
    resource.put("DomainNameConfigurations", json!([config]));
    if let Some(mtls) = d.get("MutualTlsAuthentication").filter(|v| truthy(Some(v))) {
        let Some(m) = mtls.as_object() else {
            return Err(invalid(
                id,
                "MutualTlsAuthentication must be a map with at least one of the following fields ['TruststoreUri', 'TruststoreVersion'].",
            ));
        };
        let mut unknown: Vec<&str> = m
            .keys()
            .map(String::as_str)
            .filter(|k| !MTLS_FIELDS.contains(k))
            .collect();
        if !unknown.is_empty() {
            unknown.sort_unstable();
            return Err(invalid(
                &unknown.join(","),
                "Available MutualTlsAuthentication fields are ['TruststoreUri', 'TruststoreVersion'].",
            ));
        }
        let kept: Map<String, Value> = MTLS_FIELDS
            .iter()
            .filter_map(|k| {
                m.get(*k)
                    .filter(|v| truthy(Some(v)))
                    .map(|v| (k.to_string(), v.clone()))
            })
            .collect();
        resource.put("MutualTlsAuthentication", Value::Object(kept));
    }
    let mut resources = vec![resource];
    let mapping = |logical_id: String, key: Option<String>| {
        let mut m = Res::new(logical_id, "AWS::ApiGatewayV2::ApiMapping", attrs.clone());
        m.put("DomainName", reference(&domain_id));
        m.put("ApiId", reference(id));
        m.put("Stage", reference(&format!("{id}.Stage")));
        if let Some(k) = key {
            m.put("ApiMappingKey", json!(k));
        }
        m
    };
    let base_paths = match d.get("BasePath").filter(|v| truthy(Some(v))) {
        Some(Value::String(s)) => Some(vec![json!(s)]),
        Some(Value::Array(l)) => Some(l.clone()),
        _ => None,
    };
    match base_paths {
        None => resources.push(mapping(format!("{id}ApiMapping"), None)),
        Some(paths) => {
            for path in paths {
                let Some(path) = path.as_str() else {
                    return Err(invalid(id, "Basepath must be a string."));
                };
                if path
                    .chars()
                    .any(|c| !(c.is_ascii_alphanumeric() || "/-_".contains(c)))
                {
                    return Err(invalid(id, "Invalid Basepath name provided."));
                }
                let stripped: String = path.chars().filter(|c| !"-_/".contains(*c)).collect();
                resources.push(mapping(
                    format!("{id}{stripped}ApiMapping"),
                    Some(path.trim_matches('/').to_string()),
                ));
            }
        }
    }
    if let Some(route53) = d.get("Route53").filter(|v| !v.is_null()) {
        let Some(r) = route53.as_object() else {
            return Err(invalid(id, "Property 'Domain.Route53' should be a map."));
        };
        let zone_id = present(r, "HostedZoneId");
        let zone_name = present(r, "HostedZoneName");
        if zone_id.is_none() && zone_name.is_none() {
            return Err(invalid(
                id,
                "HostedZoneId or HostedZoneName is required to enable Route53 support on Custom Domains.",
            ));
        }
        let zone = zone_id
            .filter(|z| truthy(Some(z)))
            .or(zone_name)
            .cloned()
            .unwrap_or(Value::Null);
        let group_id = format!("RecordSetGroup{}", pyjson::hash(&zone));
        let group = groups.entry(&group_id, || {
            let mut g = Res::new(&group_id, "AWS::Route53::RecordSetGroup", attrs.clone());
            if r.contains_key("HostedZoneId") {
                g.put("HostedZoneId", r["HostedZoneId"].clone());
            } else {
                g.put("HostedZoneName", r["HostedZoneName"].clone());
            }
            g.put("RecordSets", json!([]));
            g
        });
        let mut alias = Map::new();
        if let Some(h) = present(r, "EvaluateTargetHealth") {
            alias.insert("EvaluateTargetHealth".into(), h.clone());
        }
        alias.insert(
            "HostedZoneId".into(),
            get_att(&domain_id, "RegionalHostedZoneId"),
        );
        alias.insert("DNSName".into(), get_att(&domain_id, "RegionalDomainName"));
        let record = |ty: &str| {
            let mut rec = json!({"Name": name, "Type": ty, "AliasTarget": alias});
            for k in ["Region", "SetIdentifier"] {
                if let Some(v) = present(r, k) {
                    rec[k] = v.clone();
                }
            }
            rec
        };
        let mut records = vec![record("A")];
        if r.get("IpV6") == Some(&json!(true)) {
            records.push(record("AAAA"));
        }
        if let Some(Value::Array(list)) = group.props.get_mut("RecordSets") {
            list.extend(records);
        }
        resources.push(group.clone());
    }
    Ok(Domain {
        resources,
        domain_id,
    })
}
