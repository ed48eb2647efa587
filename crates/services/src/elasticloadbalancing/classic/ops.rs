//! Classic ELB's operations over JSON in the API's member names: each takes the operation's
//! input and answers its output, with AWS's defaults, checks and error codes. Every check runs
//! before anything changes; EC2's network interfaces are made last, after every check.

use super::policies::{self, DEFAULT_SSL_POLICY};
use super::{Lb, Region};
use crate::ec2::{NetworkInterfaceRequest, Resource};
use crate::elasticloadbalancing::ElbService;
use cumulo_wire::AwsError;
use http::StatusCode;
use serde_json::{Value, json};

fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::bad_request(code, message)
}

fn validation(message: impl Into<String>) -> AwsError {
    err("ValidationError", message)
}

/// `InvalidConfigurationRequest` is HTTP 409 in the model.
fn invalid_configuration(message: impl Into<String>) -> AwsError {
    AwsError::new(StatusCode::CONFLICT, "InvalidConfigurationRequest", message)
}

pub(crate) fn not_found(name: &str) -> AwsError {
    err(
        "LoadBalancerNotFound",
        format!("There is no ACTIVE Load Balancer named '{name}'"),
    )
}

fn text<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

fn required<'a>(v: &'a Value, key: &str) -> Result<&'a str, AwsError> {
    text(v, key).ok_or_else(|| validation(format!("{key} is required")))
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn list(v: &Value, key: &str) -> Vec<Value> {
    v.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn get<'a>(r: &'a Region, name: &str) -> Result<&'a Lb, AwsError> {
    r.get(name).ok_or_else(|| not_found(name))
}

fn get_mut<'a>(r: &'a mut Region, name: &str) -> Result<&'a mut Lb, AwsError> {
    r.get_mut(name).ok_or_else(|| not_found(name))
}

/// 1-32 alphanumerics and hyphens, no hyphen at either end (AWS's rule for classic names).
fn check_name(name: &str) -> Result<(), AwsError> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(validation(format!(
            "LoadBalancerName '{name}' must contain only alphanumeric characters or hyphens, must not begin or end with a hyphen, and must be at most 32 characters long"
        )))
    }
}

/// AWS's per-region hosted zone of classic load balancer DNS names (the Elastic Load Balancing
/// endpoints table: classic shares the application load balancers' zones); other regions get
/// us-east-1's.
pub(crate) fn hosted_zone(region: &str) -> &'static str {
    match region {
        "us-east-2" => "Z3AADJGX6KTTL2",
        "us-west-1" => "Z368ELLRRE2KJ0",
        "us-west-2" => "Z1H1FL5HABSF5",
        "ca-central-1" => "ZQSVJUPU6J1EY",
        "eu-west-1" => "Z32O12XQLNTSW2",
        "eu-west-2" => "ZHURV8PSTC4K8",
        "eu-west-3" => "Z3Q77PNBQS71R4",
        "eu-central-1" => "Z215JYRZR1TBD5",
        "eu-north-1" => "Z23TAZQNQ8SORR",
        "ap-south-1" => "ZP97RAFLXTNZK",
        "ap-northeast-1" => "Z14GRHDCWA56QT",
        "ap-northeast-2" => "ZWKZPGTI48KDX",
        "ap-southeast-1" => "Z1LMS91P8CMLE5",
        "ap-southeast-2" => "Z1GM3OXH4ZPM65",
        "sa-east-1" => "Z2P70J7HTTTPLU",
        _ => "Z35SXDOTRQ7X7K",
    }
}

/// A classic DNS name: `<name>-<number>.<region>.elb.amazonaws.com`, `internal-` first for an
/// internal load balancer.
fn dns_name(name: &str, region: &str, internal: bool) -> String {
    use rand::Rng;
    let n: u64 = rand::rng().random_range(100_000_000..2_000_000_000);
    let prefix = if internal { "internal-" } else { "" };
    format!("{prefix}{name}-{n}.{region}.elb.amazonaws.com")
}

fn protocol(p: &str) -> Option<&'static str> {
    match p.to_ascii_uppercase().as_str() {
        "HTTP" => Some("HTTP"),
        "HTTPS" => Some("HTTPS"),
        "TCP" => Some("TCP"),
        "SSL" => Some("SSL"),
        _ => None,
    }
}

fn layer7(p: &str) -> bool {
    matches!(p, "HTTP" | "HTTPS")
}

fn secure(p: &str) -> bool {
    matches!(p, "HTTPS" | "SSL")
}

fn port(v: &Value, key: &str) -> Result<i64, AwsError> {
    let p = v
        .get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| validation(format!("{key} is required")))?;
    if !(1..=65535).contains(&p) {
        return Err(validation(format!(
            "{key} {p} is out of range: it must be between 1 and 65535"
        )));
    }
    Ok(p)
}

/// A listener as AWS keeps it: protocols upper-cased, the instance protocol defaulted from the
/// front end's layer and required to share it, a certificate for HTTPS and SSL.
fn normalize_listener(l: &Value) -> Result<Value, AwsError> {
    let raw = required(l, "Protocol")?;
    let proto = protocol(raw).ok_or_else(|| {
        err(
            "UnsupportedProtocol",
            format!(
                "Listener protocol '{raw}' is not supported: it must be HTTP, HTTPS, TCP or SSL"
            ),
        )
    })?;
    let lb_port = port(l, "LoadBalancerPort")?;
    let instance_port = port(l, "InstancePort")?;
    let instance_proto = match text(l, "InstanceProtocol") {
        None => {
            if layer7(proto) {
                "HTTP"
            } else {
                "TCP"
            }
        }
        Some(raw) => protocol(raw).ok_or_else(|| {
            err(
                "UnsupportedProtocol",
                format!(
                    "Instance protocol '{raw}' is not supported: it must be HTTP, HTTPS, TCP or SSL"
                ),
            )
        })?,
    };
    if layer7(proto) != layer7(instance_proto) {
        return Err(validation(format!(
            "Listener protocol '{proto}' and instance protocol '{instance_proto}' are not compatible"
        )));
    }
    let mut out = json!({"Protocol": proto, "LoadBalancerPort": lb_port, "InstanceProtocol": instance_proto, "InstancePort": instance_port});
    match text(l, "SSLCertificateId") {
        Some(c) if secure(proto) => out["SSLCertificateId"] = json!(c),
        None if secure(proto) => {
            return Err(validation(format!(
                "A listener with protocol {proto} requires an SSLCertificateId"
            )));
        }
        _ => {}
    }
    Ok(out)
}

/// Adds listeners to a load balancer's body: the same listener again is no change, another on
/// a taken port is `DuplicateListener`. A secure listener gets AWS's default SSL policy.
fn add_listeners(lb: &mut Lb, listeners: &[Value]) -> Result<(), AwsError> {
    let name = text(&lb.body, "LoadBalancerName").unwrap_or("").to_string();
    let mut descriptions = list(&lb.body, "ListenerDescriptions");
    for l in listeners {
        let l = normalize_listener(l)?;
        let existing = descriptions
            .iter()
            .find(|d| d["Listener"]["LoadBalancerPort"] == l["LoadBalancerPort"]);
        match existing {
            Some(d) if d["Listener"] == l => continue,
            Some(_) => {
                return Err(err(
                    "DuplicateListener",
                    format!(
                        "A listener already exists for {name} with LoadBalancerPort {}, but with a different InstancePort, Protocol, or SSLCertificateId",
                        l["LoadBalancerPort"]
                    ),
                ));
            }
            None => {}
        }
        let mut policy_names = Vec::new();
        if secure(text(&l, "Protocol").unwrap_or("")) {
            if !lb
                .policies
                .iter()
                .any(|p| p["PolicyName"] == DEFAULT_SSL_POLICY)
                && let Some(p) = policies::predefined(DEFAULT_SSL_POLICY)
            {
                lb.policies.push(p);
            }
            policy_names.push(json!(DEFAULT_SSL_POLICY));
        }
        descriptions.push(json!({"Listener": l, "PolicyNames": policy_names}));
    }
    lb.body["ListenerDescriptions"] = json!(descriptions);
    sync_other_policies(lb);
    Ok(())
}

/// `Policies` of the description: the stickiness policies by their own shapes, the rest by
/// name.
fn sync_other_policies(lb: &mut Lb) {
    let mut app = Vec::new();
    let mut cookie = Vec::new();
    let mut other = Vec::new();
    for p in &lb.policies {
        let name = p["PolicyName"].clone();
        let attr = |key: &str| {
            p["PolicyAttributeDescriptions"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["AttributeName"] == key)
                .map(|a| a["AttributeValue"].clone())
        };
        match text(p, "PolicyTypeName") {
            Some("AppCookieStickinessPolicyType") => app.push(
                json!({"PolicyName": name, "CookieName": attr("CookieName").unwrap_or(Value::Null)}),
            ),
            Some("LBCookieStickinessPolicyType") => {
                let mut c = json!({"PolicyName": name});
                if let Some(period) = attr("CookieExpirationPeriod")
                    .and_then(|v| v.as_str().and_then(|s| s.parse::<i64>().ok()))
                {
                    c["CookieExpirationPeriod"] = json!(period);
                }
                cookie.push(c);
            }
            _ => other.push(name),
        }
    }
    lb.body["Policies"] = json!({"AppCookieStickinessPolicies": app, "LBCookieStickinessPolicies": cookie, "OtherPolicies": other});
}

/// The subnets asked for, checked through EC2: they exist, share one VPC, and take one per
/// Availability Zone (`existing` counts the load balancer's own).
fn check_subnets(
    svc: &ElbService,
    region: &str,
    ids: &[String],
    existing: &[(String, String)],
) -> Result<(Vec<(String, String)>, String), AwsError> {
    let mut out: Vec<(String, String)> = Vec::new();
    let mut vpc = String::new();
    for id in ids {
        let s = svc.ec2.subnet(region, id).map_err(|_| {
            err(
                "SubnetNotFound",
                format!("One or more subnets not found: {id}"),
            )
        })?;
        if !vpc.is_empty() && vpc != s.vpc_id {
            return Err(err(
                "InvalidSubnet",
                "All subnets of a load balancer must belong to the same VPC",
            ));
        }
        vpc = s.vpc_id.clone();
        if existing.iter().any(|(sid, _)| sid == id) || out.iter().any(|(sid, _)| sid == id) {
            continue;
        }
        if existing
            .iter()
            .chain(out.iter())
            .any(|(_, az)| *az == s.availability_zone)
        {
            return Err(invalid_configuration(format!(
                "Only one subnet per Availability Zone can be attached to a load balancer: {} is in {}",
                id, s.availability_zone
            )));
        }
        out.push((id.clone(), s.availability_zone));
    }
    Ok((out, vpc))
}

/// The default VPC's default subnet in each Availability Zone named (what AWS places a load
/// balancer given only `AvailabilityZones` in, now that EC2-Classic is gone).
fn default_subnets(
    svc: &ElbService,
    region: &str,
    zones: &[String],
) -> Result<Vec<String>, AwsError> {
    let records = svc.ec2.records(region)?;
    zones
        .iter()
        .map(|z| {
            records
                .iter()
                .find_map(|r| match r {
                    Resource::Subnet(s) if s.default_for_az && &s.availability_zone == z => {
                        Some(s.id.clone())
                    }
                    _ => None,
                })
                .ok_or_else(|| {
                    invalid_configuration(format!(
                        "Availability Zone '{z}' has no default subnet the load balancer can use"
                    ))
                })
        })
        .collect()
}

fn default_group(svc: &ElbService, region: &str, vpc: &str) -> Result<Vec<String>, AwsError> {
    Ok(svc
        .ec2
        .records(region)?
        .into_iter()
        .find_map(|r| match r {
            Resource::SecurityGroup(g) if g.vpc_id == vpc && g.name == "default" => Some(g.id),
            _ => None,
        })
        .into_iter()
        .collect())
}

/// The security groups asked for, each in `vpc`; answers the first one's name (the source
/// security group AWS reports).
fn check_groups(
    svc: &ElbService,
    region: &str,
    groups: &[String],
    vpc: &str,
) -> Result<String, AwsError> {
    let mut first = String::new();
    for g in groups {
        let view = svc.ec2.security_group(region, g).map_err(|_| {
            err(
                "InvalidSecurityGroup",
                format!("One or more security groups are invalid: {g}"),
            )
        })?;
        if view.vpc_id != vpc {
            return Err(err(
                "InvalidSecurityGroup",
                format!("Security group {g} does not belong to VPC {vpc}"),
            ));
        }
        if first.is_empty() {
            first = view.group_name;
        }
    }
    Ok(first)
}

fn default_attributes() -> Value {
    json!({
        "CrossZoneLoadBalancing": {"Enabled": false},
        "AccessLog": {"Enabled": false},
        "ConnectionDraining": {"Enabled": false, "Timeout": 300},
        "ConnectionSettings": {"IdleTimeout": 60},
        "AdditionalAttributes": [{"Key": "elb.http.desyncmitigationmode", "Value": "defensive"}],
    })
}

fn tags_of(input: &Value) -> Result<Vec<(String, String)>, AwsError> {
    let mut out: Vec<(String, String)> = Vec::new();
    for t in list(input, "Tags") {
        let key = required(&t, "Key")?.to_string();
        if out.iter().any(|(k, _)| *k == key) {
            return Err(err(
                "DuplicateTagKeys",
                format!("Tag key '{key}' was given more than once"),
            ));
        }
        out.push((key, text(&t, "Value").unwrap_or("").to_string()));
    }
    Ok(out)
}

fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

fn interface_request(name: &str, subnet: &str, groups: &[String]) -> NetworkInterfaceRequest {
    NetworkInterfaceRequest {
        subnet_id: subnet.to_string(),
        security_group_ids: groups.to_vec(),
        description: format!("ELB {name}"),
        interface_type: Some("interface".to_string()),
        requester_id: Some("amazon-elb".to_string()),
    }
}

/// One network interface per subnet; on a failure those made are deleted again.
fn make_interfaces(
    svc: &ElbService,
    region: &str,
    name: &str,
    subnets: &[String],
    groups: &[String],
) -> Result<Vec<Value>, AwsError> {
    let mut made: Vec<Value> = Vec::new();
    for s in subnets {
        match svc
            .ec2
            .create_network_interface(region, interface_request(name, s, groups))
        {
            Ok(eni) => {
                made.push(json!({"SubnetId": s, "NetworkInterfaceId": eni.network_interface_id}))
            }
            Err(e) => {
                svc.drop_interfaces(region, &made);
                return Err(e);
            }
        }
    }
    Ok(made)
}

fn create_load_balancer(svc: &ElbService, region: &str, input: &Value) -> Result<Value, AwsError> {
    let name = required(input, "LoadBalancerName")?.to_string();
    check_name(&name)?;
    let listeners = list(input, "Listeners");
    if listeners.is_empty() {
        return Err(validation("At least one listener must be specified"));
    }
    let scheme = text(input, "Scheme").unwrap_or("internet-facing");
    if !matches!(scheme, "internet-facing" | "internal") {
        return Err(err(
            "InvalidScheme",
            format!("Scheme '{scheme}' is not valid: it must be internet-facing or internal"),
        ));
    }
    let mut subnet_ids = strings(input, "Subnets");
    let zones = strings(input, "AvailabilityZones");
    if subnet_ids.is_empty() && zones.is_empty() {
        return Err(validation(
            "Either AvailabilityZones or SubnetIds must be specified",
        ));
    }
    if !subnet_ids.is_empty() && !zones.is_empty() {
        return Err(validation(
            "Only one of SubnetIds or AvailabilityZones may be specified",
        ));
    }
    if subnet_ids.is_empty() {
        subnet_ids = default_subnets(svc, region, &zones)?;
    }
    let (subnets, vpc) = check_subnets(svc, region, &subnet_ids, &[])?;
    let mut groups = strings(input, "SecurityGroups");
    if groups.is_empty() {
        groups = default_group(svc, region, &vpc)?;
    }
    let group_name = check_groups(svc, region, &groups, &vpc)?;
    let tags = tags_of(input)?;
    let mut lb = Lb {
        body: json!({
            "LoadBalancerName": name,
            "ListenerDescriptions": [],
            "BackendServerDescriptions": [],
            "AvailabilityZones": subnets.iter().map(|(_, az)| az).collect::<Vec<_>>(),
            "Subnets": subnets.iter().map(|(s, _)| s).collect::<Vec<_>>(),
            "VPCId": vpc,
            "Instances": [],
            "SecurityGroups": groups,
            "SourceSecurityGroup": {"OwnerAlias": svc.account_id, "GroupName": group_name},
            "CreatedTime": now(),
            "Scheme": scheme,
        }),
        attributes: default_attributes(),
        policies: Vec::new(),
        tags,
        interfaces: Vec::new(),
    };
    add_listeners(&mut lb, &listeners)?;
    let first_port = lb.body["ListenerDescriptions"][0]["Listener"]["InstancePort"].clone();
    lb.body["HealthCheck"] = json!({"Target": format!("TCP:{first_port}"), "Interval": 30, "Timeout": 5, "UnhealthyThreshold": 2, "HealthyThreshold": 10});
    svc.classic_change(region, |r, touched| {
        if let Some(existing) = r.get(&name) {
            // The same request again answers the same load balancer, as on AWS.
            if existing.body["ListenerDescriptions"] == lb.body["ListenerDescriptions"]
                && existing.body["Subnets"] == lb.body["Subnets"]
                && existing.body["Scheme"] == lb.body["Scheme"]
            {
                return Ok(json!({"DNSName": existing.body["DNSName"]}));
            }
            return Err(err(
                "DuplicateLoadBalancerName",
                format!("Load Balancer named '{name}' already exists and it is configured with different parameters."),
            ));
        }
        let dns = dns_name(&name, region, scheme == "internal");
        lb.body["DNSName"] = json!(dns);
        lb.body["CanonicalHostedZoneName"] = json!(dns);
        lb.body["CanonicalHostedZoneNameID"] = json!(hosted_zone(region));
        let ids: Vec<String> = subnets.iter().map(|(s, _)| s.clone()).collect();
        lb.interfaces = make_interfaces(svc, region, &name, &ids, &groups)?;
        r.insert(name.clone(), lb);
        touched.push(name.clone());
        Ok(json!({"DNSName": dns}))
    })
}

/// DescribeLoadBalancers: named ones (each must exist) or all, paged by name.
fn describe_load_balancers(
    svc: &ElbService,
    region: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    let names = strings(input, "LoadBalancerNames");
    let size = input.get("PageSize").and_then(Value::as_i64).unwrap_or(400);
    if !(1..=400).contains(&size) {
        return Err(validation(format!(
            "PageSize {size} is out of range: it must be between 1 and 400"
        )));
    }
    let marker = text(input, "Marker").map(str::to_string);
    svc.classic_read(region, |r| {
        for n in &names {
            get(r, n)?;
        }
        let all: Vec<&Lb> = r
            .iter()
            .filter(|(n, _)| names.is_empty() || names.contains(n))
            .filter(|(n, _)| marker.as_ref().is_none_or(|m| n.as_str() >= m.as_str()))
            .map(|(_, lb)| lb)
            .collect();
        let size = usize::try_from(size).unwrap_or(400);
        let page: Vec<Value> = all.iter().take(size).map(|lb| lb.body.clone()).collect();
        let mut out = json!({"LoadBalancerDescriptions": page});
        if let Some(next) = all.get(size) {
            out["NextMarker"] = next.body["LoadBalancerName"].clone();
        }
        Ok(out)
    })
}

fn delete_load_balancer(svc: &ElbService, region: &str, name: &str) -> Result<Value, AwsError> {
    svc.classic_change(region, |r, touched| {
        // Deleting one that is gone succeeds, as AWS documents.
        if let Some(lb) = r.remove(name) {
            svc.drop_interfaces(region, &lb.interfaces);
            touched.push(name.to_string());
        }
        Ok(json!({}))
    })
}

fn check_health_check(h: &Value) -> Result<Value, AwsError> {
    let target = required(h, "Target")?;
    let (proto, rest) = target
        .split_once(':')
        .ok_or_else(|| validation(format!("Invalid Target: '{target}' must be PROTOCOL:PORT")))?;
    let proto = protocol(proto)
        .ok_or_else(|| validation(format!("Invalid Target protocol in '{target}'")))?;
    let (port, path) = match rest.split_once('/') {
        Some((p, _)) => (p, true),
        None => (rest, false),
    };
    if port.parse::<u16>().ok().filter(|p| *p > 0).is_none() {
        return Err(validation(format!("Invalid Target port in '{target}'")));
    }
    if layer7(proto) && !path {
        return Err(validation(format!(
            "Invalid Target '{target}': an {proto} target must include a path"
        )));
    }
    let number = |key: &str, lo: i64, hi: i64| -> Result<i64, AwsError> {
        let v = h
            .get(key)
            .and_then(Value::as_i64)
            .ok_or_else(|| validation(format!("{key} is required")))?;
        if !(lo..=hi).contains(&v) {
            return Err(validation(format!(
                "{key} {v} is out of range: it must be between {lo} and {hi}"
            )));
        }
        Ok(v)
    };
    let interval = number("Interval", 5, 300)?;
    let timeout = number("Timeout", 2, 60)?;
    let unhealthy = number("UnhealthyThreshold", 2, 10)?;
    let healthy = number("HealthyThreshold", 2, 10)?;
    if timeout >= interval {
        return Err(validation("HealthCheck Timeout must be less than Interval"));
    }
    Ok(
        json!({"Target": target, "Interval": interval, "Timeout": timeout, "UnhealthyThreshold": unhealthy, "HealthyThreshold": healthy}),
    )
}

/// The instance ids of an `Instances` list, each checked by EC2 when it keeps instances.
fn instance_ids(svc: &ElbService, region: &str, input: &Value) -> Result<Vec<String>, AwsError> {
    let ids: Vec<String> = list(input, "Instances")
        .iter()
        .filter_map(|i| text(i, "InstanceId").map(str::to_string))
        .collect();
    if ids.is_empty() {
        return Err(validation("At least one instance must be specified"));
    }
    let bad: Vec<&String> = ids
        .iter()
        .filter(|id| !svc.instance_known(region, id))
        .collect();
    if !bad.is_empty() {
        return Err(err(
            "InvalidInstance",
            format!(
                "The requested instance(s) are not valid: {}",
                bad.iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(ids)
}

fn instances_of(lb: &Lb) -> Vec<String> {
    list(&lb.body, "Instances")
        .iter()
        .filter_map(|i| text(i, "InstanceId").map(str::to_string))
        .collect()
}

fn instances_out(ids: &[String]) -> Value {
    json!({"Instances": ids.iter().map(|i| json!({"InstanceId": i})).collect::<Vec<_>>()})
}

fn describe_instance_health(
    svc: &ElbService,
    region: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    let name = required(input, "LoadBalancerName")?;
    let asked: Vec<String> = list(input, "Instances")
        .iter()
        .filter_map(|i| text(i, "InstanceId").map(str::to_string))
        .collect();
    let registered = svc.classic_read(region, |r| Ok(instances_of(get(r, name)?)))?;
    for id in &asked {
        if !registered.contains(id) {
            return Err(err(
                "InvalidInstance",
                format!("Could not find EC2 instance {id}."),
            ));
        }
    }
    let ids = if asked.is_empty() { registered } else { asked };
    let states: Vec<Value> = ids
        .iter()
        .map(|id| match svc.instance_state(region, id) {
            Some(state) if state != "running" && state != "pending" => json!({"InstanceId": id, "State": "OutOfService", "ReasonCode": "Instance", "Description": format!("Instance is in {state} state.")}),
            _ => json!({"InstanceId": id, "State": "InService", "ReasonCode": "N/A", "Description": "N/A"}),
        })
        .collect();
    Ok(json!({"InstanceStates": states}))
}

fn attributes_in(current: &Value, given: &Value) -> Result<Value, AwsError> {
    let mut out = current.clone();
    if let Some(c) = given.get("CrossZoneLoadBalancing") {
        let enabled = c
            .get("Enabled")
            .and_then(Value::as_bool)
            .ok_or_else(|| validation("CrossZoneLoadBalancing.Enabled is required"))?;
        out["CrossZoneLoadBalancing"] = json!({"Enabled": enabled});
    }
    if let Some(a) = given.get("AccessLog") {
        let enabled = a
            .get("Enabled")
            .and_then(Value::as_bool)
            .ok_or_else(|| validation("AccessLog.Enabled is required"))?;
        let mut log = json!({"Enabled": enabled});
        if enabled {
            let bucket = text(a, "S3BucketName").ok_or_else(|| {
                validation("An S3BucketName must be specified when access logs are enabled")
            })?;
            let interval = a.get("EmitInterval").and_then(Value::as_i64).unwrap_or(60);
            if !matches!(interval, 5 | 60) {
                return Err(validation(format!(
                    "EmitInterval {interval} is not valid: it must be 5 or 60"
                )));
            }
            log["S3BucketName"] = json!(bucket);
            log["EmitInterval"] = json!(interval);
            log["S3BucketPrefix"] = json!(text(a, "S3BucketPrefix").unwrap_or(""));
        }
        out["AccessLog"] = log;
    }
    if let Some(d) = given.get("ConnectionDraining") {
        let enabled = d
            .get("Enabled")
            .and_then(Value::as_bool)
            .ok_or_else(|| validation("ConnectionDraining.Enabled is required"))?;
        let timeout = d.get("Timeout").and_then(Value::as_i64).unwrap_or(300);
        if !(1..=3600).contains(&timeout) {
            return Err(validation(format!(
                "ConnectionDraining Timeout {timeout} is out of range: it must be between 1 and 3600"
            )));
        }
        out["ConnectionDraining"] = json!({"Enabled": enabled, "Timeout": timeout});
    }
    if let Some(s) = given.get("ConnectionSettings") {
        let idle = s
            .get("IdleTimeout")
            .and_then(Value::as_i64)
            .ok_or_else(|| validation("ConnectionSettings.IdleTimeout is required"))?;
        if !(1..=4000).contains(&idle) {
            return Err(validation(format!(
                "IdleTimeout {idle} is out of range: it must be between 1 and 4000"
            )));
        }
        out["ConnectionSettings"] = json!({"IdleTimeout": idle});
    }
    for a in list(given, "AdditionalAttributes") {
        let key = required(&a, "Key")?;
        if key != "elb.http.desyncmitigationmode" {
            return Err(err(
                "LoadBalancerAttributeNotFound",
                format!("The specified load balancer attribute does not exist: {key}"),
            ));
        }
        let value = text(&a, "Value").unwrap_or("");
        if !matches!(value, "monitor" | "defensive" | "strictest") {
            return Err(validation(format!(
                "Value '{value}' of {key} is not valid: it must be monitor, defensive or strictest"
            )));
        }
        out["AdditionalAttributes"] = json!([{"Key": key, "Value": value}]);
    }
    Ok(out)
}

fn policy_not_found(name: &str, lb: &str) -> AwsError {
    err(
        "PolicyNotFound",
        format!("There is no policy with name {name} for load balancer {lb}"),
    )
}

/// A new policy on a load balancer: the type exists, the name is free, and an SSL negotiation
/// policy naming a `Reference-Security-Policy` takes that predefined policy's attributes.
fn add_policy(
    lb: &mut Lb,
    policy: &str,
    kind: &str,
    attributes: Vec<Value>,
) -> Result<(), AwsError> {
    let name = text(&lb.body, "LoadBalancerName").unwrap_or("").to_string();
    if !policies::TYPES.iter().any(|(t, _)| *t == kind) {
        return Err(err(
            "PolicyTypeNotFound",
            format!("There is no policy type named '{kind}'"),
        ));
    }
    if lb.policies.iter().any(|p| p["PolicyName"] == policy) {
        return Err(err(
            "DuplicatePolicyName",
            format!("Policy name {policy} already exists for load balancer {name}"),
        ));
    }
    let mut attrs = attributes;
    if kind == "SSLNegotiationPolicyType"
        && let Some(reference) = attrs
            .iter()
            .find(|a| a["AttributeName"] == "Reference-Security-Policy")
            .and_then(|a| text(a, "AttributeValue"))
            .map(str::to_string)
    {
        let mut copied = policies::predefined_attributes(&reference).ok_or_else(|| {
            err(
                "PolicyNotFound",
                format!("There is no predefined policy named {reference}"),
            )
        })?;
        copied.push(
            json!({"AttributeName": "Reference-Security-Policy", "AttributeValue": reference}),
        );
        attrs = copied;
    }
    lb.policies.push(
        json!({"PolicyName": policy, "PolicyTypeName": kind, "PolicyAttributeDescriptions": attrs}),
    );
    sync_other_policies(lb);
    Ok(())
}

fn policy_names_exist(lb: &Lb, names: &[String]) -> Result<(), AwsError> {
    let lb_name = text(&lb.body, "LoadBalancerName").unwrap_or("");
    for n in names {
        if !lb.policies.iter().any(|p| p["PolicyName"] == n.as_str()) {
            return Err(policy_not_found(n, lb_name));
        }
    }
    Ok(())
}

fn policy_in_use(lb: &Lb, policy: &str) -> bool {
    let named = |d: &Value| {
        d["PolicyNames"]
            .as_array()
            .is_some_and(|a| a.iter().any(|p| p == policy))
    };
    list(&lb.body, "ListenerDescriptions").iter().any(named)
        || list(&lb.body, "BackendServerDescriptions")
            .iter()
            .any(named)
}

fn describe_policies(svc: &ElbService, region: &str, input: &Value) -> Result<Value, AwsError> {
    let names = strings(input, "PolicyNames");
    let Some(lb_name) = text(input, "LoadBalancerName") else {
        let mut out = Vec::new();
        for n in &names {
            out.push(policies::predefined(n).ok_or_else(|| {
                err(
                    "PolicyNotFound",
                    format!("There is no policy with name {n}"),
                )
            })?);
        }
        if names.is_empty() {
            out = policies::all_predefined();
        }
        return Ok(json!({"PolicyDescriptions": out}));
    };
    svc.classic_read(region, |r| {
        let lb = get(r, lb_name)?;
        if names.is_empty() {
            return Ok(json!({"PolicyDescriptions": lb.policies}));
        }
        let mut out = Vec::new();
        for n in &names {
            let found = lb
                .policies
                .iter()
                .find(|p| p["PolicyName"] == n.as_str())
                .cloned()
                .or_else(|| policies::predefined(n))
                .ok_or_else(|| policy_not_found(n, lb_name))?;
            out.push(found);
        }
        Ok(json!({"PolicyDescriptions": out}))
    })
}

fn tag_names(input: &Value) -> Result<Vec<String>, AwsError> {
    let names = strings(input, "LoadBalancerNames");
    if names.is_empty() || names.len() > 20 {
        return Err(validation(
            "LoadBalancerNames must name between 1 and 20 load balancers",
        ));
    }
    Ok(names)
}

fn attach_subnets(svc: &ElbService, region: &str, input: &Value) -> Result<Value, AwsError> {
    let name = required(input, "LoadBalancerName")?.to_string();
    let ids = strings(input, "Subnets");
    if ids.is_empty() {
        return Err(validation("At least one subnet must be specified"));
    }
    let (existing, vpc, groups) = svc.classic_read(region, |r| {
        let lb = get(r, &name)?;
        let subnets = strings(&lb.body, "Subnets");
        let zones = strings(&lb.body, "AvailabilityZones");
        Ok((
            subnets.into_iter().zip(zones).collect::<Vec<_>>(),
            text(&lb.body, "VPCId").unwrap_or("").to_string(),
            strings(&lb.body, "SecurityGroups"),
        ))
    })?;
    let (new, new_vpc) = check_subnets(svc, region, &ids, &existing)?;
    if new_vpc != vpc {
        return Err(err(
            "InvalidSubnet",
            format!("The subnets must belong to the load balancer's VPC {vpc}"),
        ));
    }
    svc.classic_change(region, |r, touched| {
        let ids: Vec<String> = new.iter().map(|(s, _)| s.clone()).collect();
        let made = make_interfaces(svc, region, &name, &ids, &groups)?;
        let lb = get_mut(r, &name)?;
        let all: Vec<(String, String)> = existing.into_iter().chain(new).collect();
        lb.body["Subnets"] = json!(all.iter().map(|(s, _)| s).collect::<Vec<_>>());
        lb.body["AvailabilityZones"] = json!(all.iter().map(|(_, z)| z).collect::<Vec<_>>());
        lb.interfaces.extend(made);
        touched.push(name.clone());
        Ok(json!({"Subnets": lb.body["Subnets"]}))
    })
}

fn detach_subnets(
    svc: &ElbService,
    region: &str,
    name: &str,
    ids: &[String],
) -> Result<Value, AwsError> {
    svc.classic_change(region, |r, touched| {
        let lb = get_mut(r, name)?;
        let subnets = strings(&lb.body, "Subnets");
        let zones = strings(&lb.body, "AvailabilityZones");
        let kept: Vec<(String, String)> = subnets
            .into_iter()
            .zip(zones)
            .filter(|(s, _)| !ids.contains(s))
            .collect();
        if kept.is_empty() {
            return Err(invalid_configuration(
                "A load balancer must remain attached to at least one subnet",
            ));
        }
        let (gone, stay): (Vec<Value>, Vec<Value>) = lb
            .interfaces
            .iter()
            .cloned()
            .partition(|m| ids.iter().any(|s| m["SubnetId"] == s.as_str()));
        svc.drop_interfaces(region, &gone);
        lb.interfaces = stay;
        lb.body["Subnets"] = json!(kept.iter().map(|(s, _)| s).collect::<Vec<_>>());
        lb.body["AvailabilityZones"] = json!(kept.iter().map(|(_, z)| z).collect::<Vec<_>>());
        touched.push(name.to_string());
        Ok(lb.body.clone())
    })
}

pub(crate) fn dispatch(
    svc: &ElbService,
    region: &str,
    op: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    match op {
        "CreateLoadBalancer" => create_load_balancer(svc, region, input),
        "DescribeLoadBalancers" => describe_load_balancers(svc, region, input),
        "DeleteLoadBalancer" => {
            delete_load_balancer(svc, region, required(input, "LoadBalancerName")?)
        }
        "CreateLoadBalancerListeners" => {
            let name = required(input, "LoadBalancerName")?;
            let listeners = list(input, "Listeners");
            if listeners.is_empty() {
                return Err(validation("At least one listener must be specified"));
            }
            svc.classic_change(region, |r, touched| {
                add_listeners(get_mut(r, name)?, &listeners)?;
                touched.push(name.to_string());
                Ok(json!({}))
            })
        }
        "DeleteLoadBalancerListeners" => {
            let name = required(input, "LoadBalancerName")?;
            let ports: Vec<i64> = list(input, "LoadBalancerPorts")
                .iter()
                .filter_map(Value::as_i64)
                .collect();
            svc.classic_change(region, |r, touched| {
                let lb = get_mut(r, name)?;
                let kept: Vec<Value> = list(&lb.body, "ListenerDescriptions")
                    .into_iter()
                    .filter(|d| {
                        d["Listener"]["LoadBalancerPort"]
                            .as_i64()
                            .is_none_or(|p| !ports.contains(&p))
                    })
                    .collect();
                lb.body["ListenerDescriptions"] = json!(kept);
                touched.push(name.to_string());
                Ok(json!({}))
            })
        }
        "ConfigureHealthCheck" => {
            let name = required(input, "LoadBalancerName")?;
            let check = check_health_check(
                input
                    .get("HealthCheck")
                    .ok_or_else(|| validation("HealthCheck is required"))?,
            )?;
            svc.classic_change(region, |r, touched| {
                get_mut(r, name)?.body["HealthCheck"] = check.clone();
                touched.push(name.to_string());
                Ok(json!({"HealthCheck": check}))
            })
        }
        "RegisterInstancesWithLoadBalancer" | "DeregisterInstancesFromLoadBalancer" => {
            let name = required(input, "LoadBalancerName")?;
            svc.classic_read(region, |r| get(r, name).map(|_| ()))?;
            let ids = instance_ids(svc, region, input)?;
            svc.classic_change(region, |r, touched| {
                let lb = get_mut(r, name)?;
                let mut current = instances_of(lb);
                if op == "RegisterInstancesWithLoadBalancer" {
                    for id in ids {
                        if !current.contains(&id) {
                            current.push(id);
                        }
                    }
                } else {
                    current.retain(|id| !ids.contains(id));
                }
                let out = instances_out(&current);
                lb.body["Instances"] = out["Instances"].clone();
                touched.push(name.to_string());
                Ok(out)
            })
        }
        "DescribeInstanceHealth" => describe_instance_health(svc, region, input),
        "DescribeLoadBalancerAttributes" => {
            let name = required(input, "LoadBalancerName")?;
            svc.classic_read(region, |r| {
                Ok(json!({"LoadBalancerAttributes": get(r, name)?.attributes}))
            })
        }
        "ModifyLoadBalancerAttributes" => {
            let name = required(input, "LoadBalancerName")?;
            let given = input
                .get("LoadBalancerAttributes")
                .ok_or_else(|| validation("LoadBalancerAttributes is required"))?;
            svc.classic_change(region, |r, touched| {
                let lb = get_mut(r, name)?;
                lb.attributes = attributes_in(&lb.attributes, given)?;
                touched.push(name.to_string());
                Ok(json!({"LoadBalancerName": name, "LoadBalancerAttributes": given}))
            })
        }
        "CreateLoadBalancerPolicy" => {
            let name = required(input, "LoadBalancerName")?;
            let policy = required(input, "PolicyName")?;
            let kind = required(input, "PolicyTypeName")?;
            svc.classic_change(region, |r, touched| {
                add_policy(
                    get_mut(r, name)?,
                    policy,
                    kind,
                    list(input, "PolicyAttributes"),
                )?;
                touched.push(name.to_string());
                Ok(json!({}))
            })
        }
        "CreateAppCookieStickinessPolicy" | "CreateLBCookieStickinessPolicy" => {
            let name = required(input, "LoadBalancerName")?;
            let policy = required(input, "PolicyName")?;
            let (kind, attrs) = if op == "CreateAppCookieStickinessPolicy" {
                let cookie = required(input, "CookieName")?;
                (
                    "AppCookieStickinessPolicyType",
                    vec![json!({"AttributeName": "CookieName", "AttributeValue": cookie})],
                )
            } else {
                let period = input
                    .get("CookieExpirationPeriod")
                    .and_then(Value::as_i64)
                    .map(|p| p.to_string());
                (
                    "LBCookieStickinessPolicyType",
                    period
                        .map(|p| json!({"AttributeName": "CookieExpirationPeriod", "AttributeValue": p}))
                        .into_iter()
                        .collect(),
                )
            };
            svc.classic_change(region, |r, touched| {
                add_policy(get_mut(r, name)?, policy, kind, attrs)?;
                touched.push(name.to_string());
                Ok(json!({}))
            })
        }
        "DeleteLoadBalancerPolicy" => {
            let name = required(input, "LoadBalancerName")?;
            let policy = required(input, "PolicyName")?;
            svc.classic_change(region, |r, touched| {
                let lb = get_mut(r, name)?;
                if policy_in_use(lb, policy) {
                    return Err(invalid_configuration(format!(
                        "Cannot delete policy {policy}: it is in use by a listener or back-end server"
                    )));
                }
                lb.policies.retain(|p| p["PolicyName"] != policy);
                sync_other_policies(lb);
                touched.push(name.to_string());
                Ok(json!({}))
            })
        }
        "SetLoadBalancerPoliciesOfListener" => {
            let name = required(input, "LoadBalancerName")?;
            let port = input
                .get("LoadBalancerPort")
                .and_then(Value::as_i64)
                .ok_or_else(|| validation("LoadBalancerPort is required"))?;
            let names = strings(input, "PolicyNames");
            svc.classic_change(region, |r, touched| {
                let lb = get_mut(r, name)?;
                policy_names_exist(lb, &names)?;
                let mut descriptions = list(&lb.body, "ListenerDescriptions");
                let d = descriptions
                    .iter_mut()
                    .find(|d| d["Listener"]["LoadBalancerPort"] == port)
                    .ok_or_else(|| {
                        err(
                            "ListenerNotFound",
                            format!("There is no listener on port {port} for load balancer {name}"),
                        )
                    })?;
                d["PolicyNames"] = json!(names);
                lb.body["ListenerDescriptions"] = json!(descriptions);
                touched.push(name.to_string());
                Ok(json!({}))
            })
        }
        "SetLoadBalancerPoliciesForBackendServer" => {
            let name = required(input, "LoadBalancerName")?;
            let port = port(input, "InstancePort")?;
            let names = strings(input, "PolicyNames");
            svc.classic_change(region, |r, touched| {
                let lb = get_mut(r, name)?;
                policy_names_exist(lb, &names)?;
                let mut backends: Vec<Value> = list(&lb.body, "BackendServerDescriptions")
                    .into_iter()
                    .filter(|b| b["InstancePort"] != port)
                    .collect();
                if !names.is_empty() {
                    backends.push(json!({"InstancePort": port, "PolicyNames": names}));
                }
                lb.body["BackendServerDescriptions"] = json!(backends);
                touched.push(name.to_string());
                Ok(json!({}))
            })
        }
        "SetLoadBalancerListenerSSLCertificate" => {
            let name = required(input, "LoadBalancerName")?;
            let port = input
                .get("LoadBalancerPort")
                .and_then(Value::as_i64)
                .ok_or_else(|| validation("LoadBalancerPort is required"))?;
            let cert = required(input, "SSLCertificateId")?;
            svc.classic_change(region, |r, touched| {
                let lb = get_mut(r, name)?;
                let mut descriptions = list(&lb.body, "ListenerDescriptions");
                let d = descriptions
                    .iter_mut()
                    .find(|d| d["Listener"]["LoadBalancerPort"] == port)
                    .ok_or_else(|| {
                        err(
                            "ListenerNotFound",
                            format!("There is no listener on port {port} for load balancer {name}"),
                        )
                    })?;
                if !secure(text(&d["Listener"], "Protocol").unwrap_or("")) {
                    return Err(invalid_configuration(format!(
                        "The listener on port {port} is not an HTTPS or SSL listener"
                    )));
                }
                d["Listener"]["SSLCertificateId"] = json!(cert);
                lb.body["ListenerDescriptions"] = json!(descriptions);
                touched.push(name.to_string());
                Ok(json!({}))
            })
        }
        "DescribeLoadBalancerPolicies" => describe_policies(svc, region, input),
        "DescribeLoadBalancerPolicyTypes" => {
            let names = strings(input, "PolicyTypeNames");
            let mut out = Vec::new();
            for (n, d) in policies::TYPES {
                if names.is_empty() || names.iter().any(|x| x == n) {
                    out.push(json!({"PolicyTypeName": n, "Description": d}));
                }
            }
            if let Some(missing) = names
                .iter()
                .find(|n| !policies::TYPES.iter().any(|(t, _)| t == n))
            {
                return Err(err(
                    "PolicyTypeNotFound",
                    format!("There is no policy type named '{missing}'"),
                ));
            }
            Ok(json!({"PolicyTypeDescriptions": out}))
        }
        "ApplySecurityGroupsToLoadBalancer" => {
            let name = required(input, "LoadBalancerName")?;
            let groups = strings(input, "SecurityGroups");
            if groups.is_empty() {
                return Err(validation("At least one security group must be specified"));
            }
            let vpc = svc.classic_read(region, |r| {
                Ok(text(&get(r, name)?.body, "VPCId").unwrap_or("").to_string())
            })?;
            let first = check_groups(svc, region, &groups, &vpc)?;
            svc.classic_change(region, |r, touched| {
                let lb = get_mut(r, name)?;
                lb.body["SecurityGroups"] = json!(groups);
                lb.body["SourceSecurityGroup"]["GroupName"] = json!(first);
                touched.push(name.to_string());
                Ok(json!({"SecurityGroups": groups}))
            })
        }
        "AttachLoadBalancerToSubnets" => attach_subnets(svc, region, input),
        "DetachLoadBalancerFromSubnets" => {
            let name = required(input, "LoadBalancerName")?;
            let ids = strings(input, "Subnets");
            let body = detach_subnets(svc, region, name, &ids)?;
            Ok(json!({"Subnets": body["Subnets"]}))
        }
        "EnableAvailabilityZonesForLoadBalancer" => {
            let name = required(input, "LoadBalancerName")?;
            let subnets = default_subnets(svc, region, &strings(input, "AvailabilityZones"))?;
            let out = attach_subnets(
                svc,
                region,
                &json!({"LoadBalancerName": name, "Subnets": subnets}),
            )?;
            let zones = svc.classic_read(region, |r| {
                Ok(get(r, name)?.body["AvailabilityZones"].clone())
            })?;
            let _ = out;
            Ok(json!({"AvailabilityZones": zones}))
        }
        "DisableAvailabilityZonesForLoadBalancer" => {
            let name = required(input, "LoadBalancerName")?;
            let zones = strings(input, "AvailabilityZones");
            let ids = svc.classic_read(region, |r| {
                let lb = get(r, name)?;
                Ok(strings(&lb.body, "Subnets")
                    .into_iter()
                    .zip(strings(&lb.body, "AvailabilityZones"))
                    .filter(|(_, z)| zones.contains(z))
                    .map(|(s, _)| s)
                    .collect::<Vec<_>>())
            })?;
            let body = detach_subnets(svc, region, name, &ids)?;
            Ok(json!({"AvailabilityZones": body["AvailabilityZones"]}))
        }
        "AddTags" | "RemoveTags" => {
            let names = tag_names(input)?;
            let tags = tags_of(input)?;
            svc.classic_change(region, |r, touched| {
                for n in &names {
                    get(r, n)?;
                }
                for n in names {
                    let lb = get_mut(r, &n)?;
                    for (k, v) in &tags {
                        lb.tags.retain(|(x, _)| x != k);
                        if op == "AddTags" {
                            lb.tags.push((k.clone(), v.clone()));
                        }
                    }
                    if lb.tags.len() > 50 {
                        return Err(err(
                            "TooManyTags",
                            format!("Load balancer {n} would have more than 50 tags"),
                        ));
                    }
                    touched.push(n);
                }
                Ok(json!({}))
            })
        }
        "DescribeTags" => {
            let names = tag_names(input)?;
            svc.classic_read(region, |r| {
                let mut out = Vec::new();
                for n in &names {
                    let lb = get(r, n)?;
                    out.push(json!({"LoadBalancerName": n, "Tags": lb.tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>()}));
                }
                Ok(json!({"TagDescriptions": out}))
            })
        }
        "DescribeAccountLimits" => Ok(json!({"Limits": [
            {"Name": "classic-load-balancers", "Max": "20"},
            {"Name": "classic-listeners", "Max": "100"},
            {"Name": "classic-registered-instances", "Max": "1000"},
        ]})),
        other => Err(AwsError::not_implemented(
            "elasticloadbalancing (classic)",
            other,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listeners_are_normalized_as_aws_keeps_them() {
        let l = normalize_listener(
            &json!({"Protocol": "http", "LoadBalancerPort": 80, "InstancePort": 8080}),
        )
        .unwrap();
        assert_eq!(l["Protocol"], "HTTP");
        assert_eq!(l["InstanceProtocol"], "HTTP");
        let e = normalize_listener(
            &json!({"Protocol": "HTTPS", "LoadBalancerPort": 443, "InstancePort": 80}),
        )
        .unwrap_err();
        assert_eq!(e.code, "ValidationError");
        let e = normalize_listener(&json!({"Protocol": "TCP", "LoadBalancerPort": 80, "InstancePort": 80, "InstanceProtocol": "HTTP"})).unwrap_err();
        assert_eq!(e.code, "ValidationError");
        let e = normalize_listener(
            &json!({"Protocol": "UDP", "LoadBalancerPort": 80, "InstancePort": 80}),
        )
        .unwrap_err();
        assert_eq!(e.code, "UnsupportedProtocol");
    }

    #[test]
    fn health_checks_are_validated() {
        let ok = json!({"Target": "HTTP:80/health", "Interval": 10, "Timeout": 5, "UnhealthyThreshold": 2, "HealthyThreshold": 3});
        assert!(check_health_check(&ok).is_ok());
        let mut no_path = ok.clone();
        no_path["Target"] = json!("HTTP:80");
        assert!(check_health_check(&no_path).is_err());
        let mut slow = ok.clone();
        slow["Timeout"] = json!(10);
        assert!(check_health_check(&slow).is_err());
        let mut tcp = ok;
        tcp["Target"] = json!("TCP:22");
        assert!(check_health_check(&tcp).is_ok());
    }

    #[test]
    fn names_and_dns_names_follow_aws() {
        assert!(check_name("web-1").is_ok());
        assert!(check_name("-web").is_err());
        assert!(check_name("web_1").is_err());
        assert!(check_name(&"a".repeat(33)).is_err());
        let dns = dns_name("web", "eu-west-1", true);
        assert!(dns.starts_with("internal-web-") && dns.ends_with(".eu-west-1.elb.amazonaws.com"));
        assert_eq!(hosted_zone("eu-west-1"), "Z32O12XQLNTSW2");
    }

    #[test]
    fn attributes_merge_and_validate() {
        let current = default_attributes();
        let out = attributes_in(
            &current,
            &json!({"ConnectionSettings": {"IdleTimeout": 120}, "CrossZoneLoadBalancing": {"Enabled": true}}),
        )
        .unwrap();
        assert_eq!(out["ConnectionSettings"]["IdleTimeout"], 120);
        assert_eq!(out["CrossZoneLoadBalancing"]["Enabled"], true);
        assert_eq!(out["ConnectionDraining"]["Timeout"], 300);
        assert!(attributes_in(&current, &json!({"AccessLog": {"Enabled": true}})).is_err());
        assert_eq!(
            attributes_in(
                &current,
                &json!({"AdditionalAttributes": [{"Key": "x", "Value": "y"}]})
            )
            .unwrap_err()
            .code,
            "LoadBalancerAttributeNotFound"
        );
    }
}
