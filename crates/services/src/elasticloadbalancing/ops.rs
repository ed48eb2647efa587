//! ELBv2's operations over JSON in the API's member names: each takes the operation's input and
//! answers its output, with AWS's defaults, checks and error codes.

use super::{ElbService, Kind, Record, Region};
use cumulo_wire::AwsError;
use serde_json::{Value, json};

fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::bad_request(code, message)
}

pub(crate) fn tg_not_found() -> AwsError {
    err("TargetGroupNotFound", "One or more target groups not found")
}

fn not_found(kind: Kind) -> AwsError {
    match kind {
        Kind::LoadBalancer => err(
            "LoadBalancerNotFound",
            "One or more load balancers not found",
        ),
        Kind::TargetGroup => tg_not_found(),
        Kind::Listener => err("ListenerNotFound", "One or more listeners not found"),
        Kind::Rule => err("RuleNotFound", "One or more rules not found"),
    }
}

fn validation(message: impl Into<String>) -> AwsError {
    err("ValidationError", message)
}

pub(crate) fn get<'a>(r: &'a Region, arn: &str, kind: Kind) -> Result<&'a Record, AwsError> {
    r.get(arn)
        .filter(|x| x.kind == kind)
        .ok_or_else(|| not_found(kind))
}

fn get_mut<'a>(r: &'a mut Region, arn: &str, kind: Kind) -> Result<&'a mut Record, AwsError> {
    r.get_mut(arn)
        .filter(|x| x.kind == kind)
        .ok_or_else(|| not_found(kind))
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

fn hex16() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..16)
        .map(|_| char::from_digit(rng.random_range(0..16), 16).unwrap_or('0'))
        .collect()
}

fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// A load balancer or target group name: 1-32 alphanumerics and hyphens, no hyphen at either
/// end (AWS's rule).
fn check_name(name: &str, what: &str) -> Result<(), AwsError> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !ok {
        return Err(validation(format!(
            "{what} name '{name}' can only contain characters that are alphanumeric characters or hyphens(-), must not begin or end with a hyphen, and must be at most 32 characters"
        )));
    }
    if what == "Load balancer" && name.starts_with("internal-") {
        return Err(validation(
            "Load balancer name cannot start with 'internal-'",
        ));
    }
    Ok(())
}

/// AWS's per-region hosted zones of load balancer DNS names (ALB, NLB), from AWS's endpoints
/// documentation; other regions get us-east-1's.
fn hosted_zone(region: &str, network: bool) -> &'static str {
    let (alb, nlb) = match region {
        "us-east-2" => ("Z3AADJGX6KTTL2", "ZLMOA37VPKANP"),
        "us-west-1" => ("Z368ELLRRE2KJ0", "Z24FKFUX50B4VW"),
        "us-west-2" => ("Z1H1FL5HABSF5", "Z18D5FSROUN65G"),
        "eu-west-1" => ("Z32O12XQLNTSW2", "Z2IFOLAFXWLO4F"),
        "eu-central-1" => ("Z215JYRZR1TBD5", "Z3F0SRJ5LGBH90"),
        _ => ("Z35SXDOTRQ7X7K", "Z26RNL4JYFTOTI"),
    };
    if network { nlb } else { alb }
}

/// The ids of the target groups a listener's or rule's actions forward to.
fn forwarded(actions: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for a in actions.as_array().into_iter().flatten() {
        if let Some(t) = text(a, "TargetGroupArn") {
            out.push(t.to_string());
        }
        for t in a
            .pointer("/ForwardConfig/TargetGroups")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(arn) = text(t, "TargetGroupArn") {
                out.push(arn.to_string());
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The load balancers whose listeners or rules forward to a target group.
pub(crate) fn load_balancers_of(r: &Region, tg: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for rec in r.values() {
        let lb = match rec.kind {
            Kind::Listener | Kind::Rule => text(&rec.body, "LoadBalancerArn"),
            _ => None,
        };
        let actions = match rec.kind {
            Kind::Listener => &rec.body["DefaultActions"],
            _ => &rec.body["Actions"],
        };
        if let Some(lb) = lb
            && forwarded(actions).iter().any(|t| t == tg)
            && !out.iter().any(|x| x == lb)
        {
            out.push(lb.to_string());
        }
    }
    out
}

pub(crate) fn targets_input(arn: &str, targets: &[(String, Option<i64>)]) -> Value {
    json!({
        "TargetGroupArn": arn,
        "Targets": targets.iter().map(|(id, port)| {
            let mut t = json!({"Id": id});
            if let Some(p) = port { t["Port"] = json!(p); }
            t
        }).collect::<Vec<_>>(),
    })
}

/// Actions get their `Order` and their target groups must exist; a forward to one group is
/// also given as its `ForwardConfig`, as AWS reports it.
fn normalize_actions(r: &Region, actions: &Value) -> Result<Value, AwsError> {
    let list = actions
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or_else(|| validation("At least one action must be specified"))?;
    let mut out = Vec::new();
    for (i, a) in list.iter().enumerate() {
        let mut a = a.clone();
        let kind = text(&a, "Type")
            .ok_or_else(|| validation("An action must have a type"))?
            .to_string();
        if ![
            "forward",
            "redirect",
            "fixed-response",
            "authenticate-oidc",
            "authenticate-cognito",
            "jwt-validation",
        ]
        .contains(&kind.as_str())
        {
            return Err(validation(format!(
                "Action type '{kind}' must be one of 'forward, authenticate-oidc, authenticate-cognito, redirect, fixed-response, jwt-validation'"
            )));
        }
        if a.get("Order").is_none() {
            a["Order"] = json!(i + 1);
        }
        if kind == "forward" {
            if let Some(tg) = text(&a, "TargetGroupArn").map(str::to_string)
                && a.get("ForwardConfig").is_none()
            {
                a["ForwardConfig"] = json!({"TargetGroups": [{"TargetGroupArn": tg, "Weight": 1}], "TargetGroupStickinessConfig": {"Enabled": false}});
            }
            let groups = forwarded(&Value::Array(vec![a.clone()]));
            if groups.is_empty() {
                return Err(validation(
                    "A target group ARN must be specified for a forward action",
                ));
            }
            for tg in groups {
                get(r, &tg, Kind::TargetGroup)?;
            }
        }
        if kind == "fixed-response" && a.pointer("/FixedResponseConfig/StatusCode").is_none() {
            return Err(validation(
                "A status code must be specified for a fixed-response action",
            ));
        }
        out.push(a);
    }
    Ok(Value::Array(out))
}

fn lb_attributes(network: bool) -> Vec<(&'static str, &'static str)> {
    let mut a = vec![
        ("deletion_protection.enabled", "false"),
        ("access_logs.s3.enabled", "false"),
        ("access_logs.s3.bucket", ""),
        ("access_logs.s3.prefix", ""),
        (
            "load_balancing.cross_zone.enabled",
            if network { "false" } else { "true" },
        ),
    ];
    if !network {
        a.extend([
            ("idle_timeout.timeout_seconds", "60"),
            ("routing.http2.enabled", "true"),
            ("routing.http.drop_invalid_header_fields.enabled", "false"),
            ("routing.http.desync_mitigation_mode", "defensive"),
            (
                "routing.http.x_amzn_tls_version_and_cipher_suite.enabled",
                "false",
            ),
            ("routing.http.xff_client_port.enabled", "false"),
            ("routing.http.xff_header_processing.mode", "append"),
            ("routing.http.preserve_host_header.enabled", "false"),
            ("waf.fail_open.enabled", "false"),
            ("client_keep_alive.seconds", "3600"),
        ]);
    }
    a
}

fn tg_attributes(target_type: &str, protocol: Option<&str>) -> Vec<(&'static str, &'static str)> {
    let mut a = vec![
        ("deregistration_delay.timeout_seconds", "300"),
        ("stickiness.enabled", "false"),
    ];
    if matches!(protocol, Some("HTTP" | "HTTPS")) || target_type == "lambda" {
        a.extend([
            ("stickiness.type", "lb_cookie"),
            ("stickiness.lb_cookie.duration_seconds", "86400"),
            ("load_balancing.algorithm.type", "round_robin"),
            ("slow_start.duration_seconds", "0"),
        ]);
    } else {
        a.extend([
            ("stickiness.type", "source_ip"),
            ("proxy_protocol_v2.enabled", "false"),
            ("preserve_client_ip.enabled", "true"),
        ]);
    }
    a
}

fn attributes_out(rec: &Record) -> Value {
    json!({"Attributes": rec.attributes.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>()})
}

fn set_attributes(rec: &mut Record, input: &Value) -> Result<(), AwsError> {
    for a in input["Attributes"].as_array().into_iter().flatten() {
        let key = required(a, "Key")?;
        if !rec.attributes.contains_key(key) {
            return Err(err(
                "InvalidConfigurationRequest",
                format!("Key {key} not valid"),
            ));
        }
        rec.attributes
            .insert(key.to_string(), text(a, "Value").unwrap_or("").to_string());
    }
    Ok(())
}

pub(crate) fn dispatch(
    svc: &ElbService,
    region: &str,
    op: &str,
    input: &Value,
) -> Result<Value, AwsError> {
    match op {
        "CreateLoadBalancer" => create_load_balancer(svc, region, input),
        "DescribeLoadBalancers" => describe(
            svc,
            region,
            input,
            Kind::LoadBalancer,
            "LoadBalancerArns",
            "Names",
            "LoadBalancerName",
            "LoadBalancers",
        ),
        "DeleteLoadBalancer" => {
            delete_load_balancer(svc, region, required(input, "LoadBalancerArn")?)
        }
        "DescribeLoadBalancerAttributes" => read(svc, region, |r| {
            Ok(attributes_out(get(
                r,
                required(input, "LoadBalancerArn")?,
                Kind::LoadBalancer,
            )?))
        }),
        "ModifyLoadBalancerAttributes" => svc.change(region, |r, t| {
            let arn = required(input, "LoadBalancerArn")?;
            let rec = get_mut(r, arn, Kind::LoadBalancer)?;
            set_attributes(rec, input)?;
            t.push(arn.to_string());
            Ok(attributes_out(rec))
        }),
        "SetSecurityGroups" => {
            let groups = strings(input, "SecurityGroups");
            for g in &groups {
                svc.ec2.security_group(region, g).map_err(|_| {
                    err(
                        "InvalidSecurityGroup",
                        format!("One or more security groups are invalid: {g}"),
                    )
                })?;
            }
            svc.change(region, |r, t| {
                let arn = required(input, "LoadBalancerArn")?;
                get_mut(r, arn, Kind::LoadBalancer)?.body["SecurityGroups"] = json!(groups);
                t.push(arn.to_string());
                Ok(json!({"SecurityGroupIds": groups}))
            })
        }
        "SetSubnets" => {
            let (zones, vpc) = subnets(svc, region, input)?;
            svc.change(region, |r, t| {
                let arn = required(input, "LoadBalancerArn")?;
                let rec = get(r, arn, Kind::LoadBalancer)?;
                if text(&rec.body, "VpcId") != Some(vpc.as_str()) {
                    return Err(err(
                        "InvalidConfigurationRequest",
                        "Subnets must all belong to the load balancer's VPC",
                    ));
                }
                let wanted = subnet_ids(&zones);
                let (kept, gone): (Vec<Value>, Vec<Value>) = rec
                    .items
                    .iter()
                    .cloned()
                    .partition(|m| wanted.iter().any(|s| m["SubnetId"] == s.as_str()));
                let new: Vec<String> = wanted
                    .into_iter()
                    .filter(|s| !kept.iter().any(|m| m["SubnetId"] == s.as_str()))
                    .collect();
                let made = svc.make_interfaces(region, &rec.body, &new)?;
                svc.drop_interfaces(region, &gone);
                let rec = get_mut(r, arn, Kind::LoadBalancer)?;
                rec.body["AvailabilityZones"] = zones.clone();
                rec.items = kept.into_iter().chain(made).collect();
                t.push(arn.to_string());
                Ok(json!({"AvailabilityZones": zones}))
            })
        }
        "CreateTargetGroup" => create_target_group(svc, region, input),
        "DescribeTargetGroups" => {
            let mut out = describe(
                svc,
                region,
                input,
                Kind::TargetGroup,
                "TargetGroupArns",
                "Names",
                "TargetGroupName",
                "TargetGroups",
            )?;
            if let Some(lb) = text(input, "LoadBalancerArn") {
                read(svc, region, |r| get(r, lb, Kind::LoadBalancer).map(|_| ()))?;
                if let Some(list) = out["TargetGroups"].as_array_mut() {
                    list.retain(|tg| {
                        tg["LoadBalancerArns"]
                            .as_array()
                            .is_some_and(|a| a.iter().any(|x| x == lb))
                    });
                }
            }
            Ok(out)
        }
        "ModifyTargetGroup" => svc.change(region, |r, t| {
            let arn = required(input, "TargetGroupArn")?;
            let rec = get_mut(r, arn, Kind::TargetGroup)?;
            for (k, v) in input.as_object().into_iter().flatten() {
                if k != "TargetGroupArn" {
                    rec.body[k] = v.clone();
                }
            }
            t.push(arn.to_string());
            let mut body = rec.body.clone();
            body["LoadBalancerArns"] = json!(load_balancers_of(r, arn));
            Ok(json!({"TargetGroups": [body]}))
        }),
        "DeleteTargetGroup" => svc.change(region, |r, t| {
            let arn = required(input, "TargetGroupArn")?;
            if r.get(arn).is_none() {
                return Ok(json!({}));
            }
            if !load_balancers_of(r, arn).is_empty() {
                return Err(err(
                    "ResourceInUse",
                    format!("Target group '{arn}' is currently in use by a listener or a rule"),
                ));
            }
            r.remove(arn);
            t.push(arn.to_string());
            Ok(json!({}))
        }),
        "DescribeTargetGroupAttributes" => read(svc, region, |r| {
            Ok(attributes_out(get(
                r,
                required(input, "TargetGroupArn")?,
                Kind::TargetGroup,
            )?))
        }),
        "ModifyTargetGroupAttributes" => svc.change(region, |r, t| {
            let arn = required(input, "TargetGroupArn")?;
            let rec = get_mut(r, arn, Kind::TargetGroup)?;
            set_attributes(rec, input)?;
            t.push(arn.to_string());
            Ok(attributes_out(rec))
        }),
        "RegisterTargets" | "DeregisterTargets" => svc.change(region, |r, t| {
            let arn = required(input, "TargetGroupArn")?;
            let rec = get_mut(r, arn, Kind::TargetGroup)?;
            let default_port = rec.body["Port"].clone();
            let targets = input["Targets"]
                .as_array()
                .filter(|a| !a.is_empty())
                .ok_or_else(|| validation("Targets must not be empty"))?;
            for target in targets {
                let id = required(target, "Id")?;
                let port = target.get("Port").cloned().unwrap_or(default_port.clone());
                let same = |x: &Value| x["Id"] == id && x["Port"] == port;
                if op == "RegisterTargets" {
                    if !rec.items.iter().any(same) {
                        let mut entry = json!({"Id": id, "Port": port});
                        if let Some(az) = text(target, "AvailabilityZone") {
                            entry["AvailabilityZone"] = json!(az);
                        }
                        rec.items.push(entry);
                    }
                } else {
                    rec.items.retain(|x| !same(x));
                }
            }
            t.push(arn.to_string());
            Ok(json!({}))
        }),
        "DescribeTargetHealth" => read(svc, region, |r| {
            let arn = required(input, "TargetGroupArn")?;
            let rec = get(r, arn, Kind::TargetGroup)?;
            let in_use = !load_balancers_of(r, arn).is_empty();
            let asked = input["Targets"].as_array();
            let health = |t: &Value| {
                let mut h = json!({"Target": t, "HealthCheckPort": t["Port"].to_string()});
                h["TargetHealth"] = if in_use {
                    json!({"State": "healthy"})
                } else {
                    json!({"State": "unused", "Reason": "Target.NotInUse", "Description": "Target group is not configured to receive traffic from the load balancer"})
                };
                h
            };
            let list: Vec<Value> = match asked {
                Some(a) if !a.is_empty() => a
                    .iter()
                    .map(|t| match rec.items.iter().find(|x| x["Id"] == t["Id"]) {
                        Some(x) => health(x),
                        None => json!({"Target": t, "TargetHealth": {"State": "unavailable", "Reason": "Target.NotRegistered", "Description": "Target is not registered to the target group"}}),
                    })
                    .collect(),
                _ => rec.items.iter().map(health).collect(),
            };
            Ok(json!({"TargetHealthDescriptions": list}))
        }),
        "CreateListener" => create_listener(svc, region, input),
        "DescribeListeners" => {
            let arns = strings(input, "ListenerArns");
            read(svc, region, |r| {
                let lb = text(input, "LoadBalancerArn");
                if let Some(lb) = lb {
                    get(r, lb, Kind::LoadBalancer)?;
                }
                for a in &arns {
                    get(r, a, Kind::Listener)?;
                }
                let list: Vec<Value> = r
                    .iter()
                    .filter(|(arn, rec)| {
                        rec.kind == Kind::Listener
                            && (arns.is_empty() || arns.contains(arn))
                            && lb.is_none_or(|lb| text(&rec.body, "LoadBalancerArn") == Some(lb))
                    })
                    .map(|(_, rec)| rec.body.clone())
                    .collect();
                Ok(json!({"Listeners": list}))
            })
        }
        "ModifyListener" => svc.change_certified(region, |r, t| {
            let arn = required(input, "ListenerArn")?;
            let actions = match input.get("DefaultActions") {
                Some(a) => Some(normalize_actions(r, a)?),
                None => None,
            };
            let rec = get_mut(r, arn, Kind::Listener)?;
            for key in [
                "Port",
                "Protocol",
                "SslPolicy",
                "Certificates",
                "AlpnPolicy",
            ] {
                if let Some(v) = input.get(key) {
                    rec.body[key] = v.clone();
                }
            }
            if let Some(a) = actions {
                rec.body["DefaultActions"] = a.clone();
                if let Some(default) = r.values_mut().find(|x| {
                    x.kind == Kind::Rule
                        && x.body["IsDefault"] == true
                        && text(&x.body, "ListenerArn") == Some(arn)
                }) {
                    default.body["Actions"] = a;
                }
            }
            t.push(arn.to_string());
            t.extend(default_rule_arn(r, arn));
            Ok(json!({"Listeners": [get(r, arn, Kind::Listener)?.body.clone()]}))
        }),
        "DeleteListener" => svc.change_certified(region, |r, t| {
            let arn = required(input, "ListenerArn")?;
            get(r, arn, Kind::Listener)?;
            let rules: Vec<String> = r
                .iter()
                .filter(|(_, x)| x.kind == Kind::Rule && text(&x.body, "ListenerArn") == Some(arn))
                .map(|(a, _)| a.clone())
                .collect();
            for a in rules.into_iter().chain([arn.to_string()]) {
                r.remove(&a);
                t.push(a);
            }
            Ok(json!({}))
        }),
        "CreateRule" => create_rule(svc, region, input),
        "DescribeRules" => {
            let arns = strings(input, "RuleArns");
            read(svc, region, |r| {
                let listener = text(input, "ListenerArn");
                if let Some(l) = listener {
                    get(r, l, Kind::Listener)?;
                }
                for a in &arns {
                    get(r, a, Kind::Rule)?;
                }
                let mut list: Vec<&Record> = r
                    .iter()
                    .filter(|(arn, rec)| {
                        rec.kind == Kind::Rule
                            && (arns.is_empty() || arns.contains(arn))
                            && listener.is_none_or(|l| text(&rec.body, "ListenerArn") == Some(l))
                    })
                    .map(|(_, rec)| rec)
                    .collect();
                list.sort_by_key(|x| {
                    text(&x.body, "Priority")
                        .and_then(|p| p.parse::<i64>().ok())
                        .unwrap_or(i64::MAX)
                });
                Ok(json!({"Rules": list.iter().map(|x| public_rule(&x.body)).collect::<Vec<_>>()}))
            })
        }
        "ModifyRule" => svc.change(region, |r, t| {
            let arn = required(input, "RuleArn")?;
            let actions = match input.get("Actions") {
                Some(a) => Some(normalize_actions(r, a)?),
                None => None,
            };
            let conditions = match input.get("Conditions") {
                Some(c) => Some(normalize_conditions(c)?),
                None => None,
            };
            let rec = get_mut(r, arn, Kind::Rule)?;
            if let Some(c) = conditions {
                rec.body["Conditions"] = Value::Array(c);
            }
            if let Some(a) = actions {
                rec.body["Actions"] = a;
            }
            t.push(arn.to_string());
            Ok(json!({"Rules": [public_rule(&rec.body)]}))
        }),
        "SetRulePriorities" => svc.change(region, |r, t| {
            let mut out = Vec::new();
            for p in input["RulePriorities"].as_array().into_iter().flatten() {
                let arn = required(p, "RuleArn")?.to_string();
                let priority = p["Priority"]
                    .as_i64()
                    .ok_or_else(|| validation("Priority is required"))?;
                let listener = text(&get(r, &arn, Kind::Rule)?.body, "ListenerArn")
                    .unwrap_or("")
                    .to_string();
                if priority_taken(r, &listener, priority, Some(&arn)) {
                    return Err(err(
                        "PriorityInUse",
                        format!("Priority '{priority}' is currently in use"),
                    ));
                }
                get_mut(r, &arn, Kind::Rule)?.body["Priority"] = json!(priority.to_string());
                out.push(public_rule(&get(r, &arn, Kind::Rule)?.body));
                t.push(arn);
            }
            Ok(json!({"Rules": out}))
        }),
        "DeleteRule" => svc.change(region, |r, t| {
            let arn = required(input, "RuleArn")?;
            if get(r, arn, Kind::Rule)?.body["IsDefault"] == true {
                return Err(err(
                    "OperationNotPermitted",
                    "Default rule cannot be deleted",
                ));
            }
            r.remove(arn);
            t.push(arn.to_string());
            Ok(json!({}))
        }),
        "AddListenerCertificates" | "RemoveListenerCertificates" => {
            svc.change_certified(region, |r, t| {
                let arn = required(input, "ListenerArn")?;
                let rec = get_mut(r, arn, Kind::Listener)?;
                let certs = input["Certificates"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                for c in &certs {
                    let id = &c["CertificateArn"];
                    rec.items.retain(|x| &x["CertificateArn"] != id);
                    if op == "AddListenerCertificates" {
                        rec.items
                            .push(json!({"CertificateArn": id, "IsDefault": false}));
                    }
                }
                t.push(arn.to_string());
                Ok(if op == "AddListenerCertificates" {
                    json!({"Certificates": certs})
                } else {
                    json!({})
                })
            })
        }
        "DescribeListenerCertificates" => read(svc, region, |r| {
            let rec = get(r, required(input, "ListenerArn")?, Kind::Listener)?;
            let mut certs: Vec<Value> = rec.body["Certificates"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|mut c| {
                    c["IsDefault"] = json!(true);
                    c
                })
                .collect();
            certs.extend(rec.items.iter().cloned());
            Ok(json!({"Certificates": certs}))
        }),
        "AddTags" | "RemoveTags" => svc.change(region, |r, t| {
            let arns = strings(input, "ResourceArns");
            for a in &arns {
                r.get(a).ok_or_else(|| not_found(kind_of_arn(a)))?;
            }
            for a in arns {
                if let Some(rec) = r.get_mut(&a) {
                    if op == "AddTags" {
                        for tag in input["Tags"].as_array().into_iter().flatten() {
                            let key = required(tag, "Key")?.to_string();
                            let value = text(tag, "Value").unwrap_or("").to_string();
                            rec.tags.retain(|(k, _)| *k != key);
                            rec.tags.push((key, value));
                        }
                    } else {
                        let keys = strings(input, "TagKeys");
                        rec.tags.retain(|(k, _)| !keys.contains(k));
                    }
                    t.push(a);
                }
            }
            Ok(json!({}))
        }),
        "DescribeTags" => read(svc, region, |r| {
            let mut out = Vec::new();
            for a in strings(input, "ResourceArns") {
                let rec = r.get(&a).ok_or_else(|| not_found(kind_of_arn(&a)))?;
                out.push(json!({"ResourceArn": a, "Tags": rec.tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>()}));
            }
            Ok(json!({"TagDescriptions": out}))
        }),
        other => Err(AwsError::not_implemented("elasticloadbalancing", other)),
    }
}

fn kind_of_arn(arn: &str) -> Kind {
    if arn.contains(":targetgroup/") {
        Kind::TargetGroup
    } else if arn.contains(":listener-rule/") {
        Kind::Rule
    } else if arn.contains(":listener/") {
        Kind::Listener
    } else {
        Kind::LoadBalancer
    }
}

fn read<R>(
    svc: &ElbService,
    region: &str,
    f: impl FnOnce(&Region) -> Result<R, AwsError>,
) -> Result<R, AwsError> {
    svc.change(region, |r, _| f(r))
}

/// The load balancers or target groups asked for (by ARN or name, each must exist), else all.
#[allow(clippy::too_many_arguments)]
fn describe(
    svc: &ElbService,
    region: &str,
    input: &Value,
    kind: Kind,
    arns_key: &str,
    names_key: &str,
    name_field: &str,
    out_key: &str,
) -> Result<Value, AwsError> {
    let arns = strings(input, arns_key);
    let names = strings(input, names_key);
    svc.change(region, |r, touched| {
        for a in &arns {
            get(r, a, kind)?;
        }
        for n in &names {
            if !r
                .values()
                .any(|x| x.kind == kind && text(&x.body, name_field) == Some(n))
            {
                return Err(not_found(kind));
            }
        }
        // A load balancer is active from its first Describe on.
        let mut list = Vec::new();
        let keys: Vec<String> = r.keys().cloned().collect();
        for arn in keys {
            let lbs = load_balancers_of(r, &arn);
            let Some(rec) = r.get_mut(&arn).filter(|x| x.kind == kind) else {
                continue;
            };
            if !(arns.is_empty() || arns.contains(&arn))
                || !(names.is_empty()
                    || names.iter().any(|n| text(&rec.body, name_field) == Some(n)))
            {
                continue;
            }
            if kind == Kind::LoadBalancer
                && rec.body.pointer("/State/Code").and_then(Value::as_str) == Some("provisioning")
            {
                rec.body["State"] = json!({"Code": "active"});
                touched.push(arn.clone());
            }
            let mut body = rec.body.clone();
            if kind == Kind::TargetGroup {
                body["LoadBalancerArns"] = json!(lbs);
            }
            list.push(body);
        }
        Ok(json!({ out_key: list }))
    })
}

/// The zones of the subnets asked for (checked through EC2), and their VPC.
fn subnets(svc: &ElbService, region: &str, input: &Value) -> Result<(Value, String), AwsError> {
    let mut ids = strings(input, "Subnets");
    for m in input["SubnetMappings"].as_array().into_iter().flatten() {
        ids.extend(text(m, "SubnetId").map(str::to_string));
    }
    if ids.is_empty() {
        return Err(validation("At least one subnet must be specified"));
    }
    let mut zones = Vec::new();
    let mut vpc = String::new();
    for id in &ids {
        let s = svc.ec2.subnet(region, id).map_err(|_| {
            err(
                "SubnetNotFound",
                format!("The subnet ID '{id}' is not valid"),
            )
        })?;
        if !vpc.is_empty() && vpc != s.vpc_id {
            return Err(err(
                "InvalidConfigurationRequest",
                "Subnets must all belong to the same VPC",
            ));
        }
        if zones
            .iter()
            .any(|z: &Value| z["ZoneName"] == s.availability_zone)
        {
            return Err(err(
                "InvalidConfigurationRequest",
                "A load balancer cannot be attached to multiple subnets in the same Availability Zone".to_string(),
            ));
        }
        vpc = s.vpc_id.clone();
        zones.push(json!({"ZoneName": s.availability_zone, "SubnetId": s.subnet_id, "LoadBalancerAddresses": []}));
    }
    Ok((Value::Array(zones), vpc))
}

fn subnet_ids(zones: &Value) -> Vec<String> {
    zones
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|z| text(z, "SubnetId").map(str::to_string))
        .collect()
}

fn create_load_balancer(svc: &ElbService, region: &str, input: &Value) -> Result<Value, AwsError> {
    let name = required(input, "Name")?.to_string();
    check_name(&name, "Load balancer")?;
    let kind = text(input, "Type").unwrap_or("application").to_string();
    let scheme = text(input, "Scheme")
        .unwrap_or("internet-facing")
        .to_string();
    if !["internet-facing", "internal"].contains(&scheme.as_str()) {
        return Err(validation(format!(
            "Scheme '{scheme}' must be one of 'internet-facing, internal'"
        )));
    }
    let (zones, vpc) = subnets(svc, region, input)?;
    let mut groups = strings(input, "SecurityGroups");
    for g in &groups {
        let sg = svc.ec2.security_group(region, g).map_err(|_| {
            err(
                "InvalidSecurityGroup",
                format!("Security group '{g}' does not exist"),
            )
        })?;
        if sg.vpc_id != vpc {
            return Err(err(
                "InvalidSecurityGroup",
                format!("Security group '{g}' does not belong to VPC '{vpc}'"),
            ));
        }
    }
    if groups.is_empty() && kind == "application" {
        // AWS gives an application load balancer its VPC's default group.
        let default = svc.ec2.records(region)?.into_iter().find_map(|r| match r {
            crate::ec2::Resource::SecurityGroup(g) if g.vpc_id == vpc && g.name == "default" => {
                Some(g.id)
            }
            _ => None,
        });
        groups.extend(default);
    }
    let network = kind == "network";
    let short = match kind.as_str() {
        "network" => "net",
        "gateway" => "gwy",
        _ => "app",
    };
    let id = hex16();
    let arn = format!(
        "arn:aws:elasticloadbalancing:{region}:{}:loadbalancer/{short}/{name}/{id}",
        svc.account_id
    );
    let prefix = if scheme == "internal" {
        "internal-"
    } else {
        ""
    };
    let dns = if network {
        format!("{prefix}{name}-{id}.elb.{region}.amazonaws.com")
    } else {
        use rand::Rng;
        format!(
            "{prefix}{name}-{}.{region}.elb.amazonaws.com",
            rand::rng().random_range(100_000_000u64..2_000_000_000)
        )
    };
    svc.change(region, |r, t| {
        if let Some(existing) = r.values().find(|x| x.kind == Kind::LoadBalancer && text(&x.body, "LoadBalancerName") == Some(&name)) {
            if text(&existing.body, "Type") == Some(&kind) && text(&existing.body, "Scheme") == Some(&scheme) {
                return Ok(json!({"LoadBalancers": [existing.body]}));
            }
            return Err(err("DuplicateLoadBalancerName", "A load balancer with the same name exists, but with different settings"));
        }
        let mut body = json!({
            "LoadBalancerArn": arn, "DNSName": dns, "CanonicalHostedZoneId": hosted_zone(region, network),
            "CreatedTime": now(), "LoadBalancerName": name, "Scheme": scheme, "VpcId": vpc,
            "State": {"Code": "provisioning"}, "Type": kind, "AvailabilityZones": zones,
            "IpAddressType": text(input, "IpAddressType").unwrap_or("ipv4"),
        });
        if kind != "gateway" && !(network && groups.is_empty()) {
            body["SecurityGroups"] = json!(groups);
        }
        let interfaces = svc.make_interfaces(region, &body, &subnet_ids(&zones))?;
        let rec = Record {
            kind: Kind::LoadBalancer,
            body: body.clone(),
            tags: tags_of(input),
            attributes: lb_attributes(network).into_iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            items: interfaces,
        };
        r.insert(arn.clone(), rec);
        t.push(arn.clone());
        Ok(json!({"LoadBalancers": [body]}))
    })
}

fn tags_of(input: &Value) -> Vec<(String, String)> {
    input["Tags"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            Some((
                text(t, "Key")?.to_string(),
                text(t, "Value").unwrap_or("").to_string(),
            ))
        })
        .collect()
}

/// DeleteLoadBalancer: its listeners and rules go with it, its network interfaces are deleted
/// in EC2 and its certificates' InUseBy forget it. One that does not exist is deleted already:
/// AWS answers success.
fn delete_load_balancer(svc: &ElbService, region: &str, arn: &str) -> Result<Value, AwsError> {
    svc.change_certified(region, |r, t| {
        let Some(rec) = r.get(arn).filter(|x| x.kind == Kind::LoadBalancer) else {
            return Ok(json!({}));
        };
        let interfaces = rec.items.clone();
        if rec
            .attributes
            .get("deletion_protection.enabled")
            .map(String::as_str)
            == Some("true")
        {
            return Err(err(
                "OperationNotPermitted",
                format!(
                    "Load balancer '{arn}' cannot be deleted because deletion protection is enabled"
                ),
            ));
        }
        let owned: Vec<String> = r
            .iter()
            .filter(|(_, x)| {
                matches!(x.kind, Kind::Listener | Kind::Rule)
                    && text(&x.body, "LoadBalancerArn") == Some(arn)
            })
            .map(|(a, _)| a.clone())
            .collect();
        for a in owned.into_iter().chain([arn.to_string()]) {
            r.remove(&a);
            t.push(a);
        }
        svc.drop_interfaces(region, &interfaces);
        Ok(json!({}))
    })
}

fn create_target_group(svc: &ElbService, region: &str, input: &Value) -> Result<Value, AwsError> {
    let name = required(input, "Name")?.to_string();
    check_name(&name, "Target group")?;
    let target_type = text(input, "TargetType").unwrap_or("instance").to_string();
    let protocol = text(input, "Protocol").map(str::to_string);
    if target_type != "lambda" {
        for key in ["Protocol", "Port", "VpcId"] {
            if input.get(key).is_none() {
                return Err(validation(format!(
                    "A {} must be specified",
                    match key {
                        "Protocol" => "protocol",
                        "Port" => "port",
                        _ => "VPC ID",
                    }
                )));
            }
        }
        svc.ec2
            .vpc(region, required(input, "VpcId")?)
            .map_err(|_| {
                validation(format!(
                    "The VPC ID '{}' is not found",
                    text(input, "VpcId").unwrap_or("")
                ))
            })?;
    }
    let http = matches!(protocol.as_deref(), Some("HTTP" | "HTTPS"));
    let hc_protocol = text(input, "HealthCheckProtocol")
        .map(str::to_string)
        .or_else(|| {
            protocol.clone().map(|p| {
                if matches!(p.as_str(), "UDP" | "TCP_UDP" | "TLS") {
                    "TCP".into()
                } else {
                    p
                }
            })
        })
        .unwrap_or_else(|| "HTTP".into());
    let hc_http = matches!(hc_protocol.as_str(), "HTTP" | "HTTPS");
    let arn = format!(
        "arn:aws:elasticloadbalancing:{region}:{}:targetgroup/{name}/{}",
        svc.account_id,
        hex16()
    );
    let mut body = json!({
        "TargetGroupArn": arn, "TargetGroupName": name, "TargetType": target_type,
        "HealthCheckEnabled": input.get("HealthCheckEnabled").cloned().unwrap_or(json!(true)),
        "HealthCheckIntervalSeconds": input.get("HealthCheckIntervalSeconds").cloned().unwrap_or(json!(if target_type == "lambda" { 35 } else { 30 })),
        "HealthCheckTimeoutSeconds": input.get("HealthCheckTimeoutSeconds").cloned().unwrap_or(json!(if target_type == "lambda" { 30 } else if hc_http { 5 } else { 10 })),
        "HealthyThresholdCount": input.get("HealthyThresholdCount").cloned().unwrap_or(json!(5)),
        "UnhealthyThresholdCount": input.get("UnhealthyThresholdCount").cloned().unwrap_or(json!(2)),
        "LoadBalancerArns": [],
    });
    if target_type != "lambda" {
        for key in ["Protocol", "Port", "VpcId"] {
            body[key] = input[key].clone();
        }
        body["HealthCheckProtocol"] = json!(hc_protocol);
        body["HealthCheckPort"] = input
            .get("HealthCheckPort")
            .cloned()
            .unwrap_or(json!("traffic-port"));
        body["IpAddressType"] = input.get("IpAddressType").cloned().unwrap_or(json!("ipv4"));
    }
    if hc_http || target_type == "lambda" {
        body["HealthCheckPath"] = input.get("HealthCheckPath").cloned().unwrap_or(json!("/"));
        body["Matcher"] = input
            .get("Matcher")
            .cloned()
            .unwrap_or(json!({"HttpCode": "200"}));
    }
    if http {
        body["ProtocolVersion"] = input
            .get("ProtocolVersion")
            .cloned()
            .unwrap_or(json!("HTTP1"));
    }
    svc.change(region, |r, t| {
        if let Some(existing) = r.values().find(|x| {
            x.kind == Kind::TargetGroup && text(&x.body, "TargetGroupName") == Some(&name)
        }) {
            let same = ["Protocol", "Port", "VpcId", "TargetType"]
                .iter()
                .all(|k| existing.body.get(*k) == body.get(*k));
            if same {
                return Ok(json!({"TargetGroups": [existing.body]}));
            }
            return Err(err(
                "DuplicateTargetGroupName",
                "A target group with the same name exists, but with different settings",
            ));
        }
        let rec = Record {
            kind: Kind::TargetGroup,
            body: body.clone(),
            tags: tags_of(input),
            attributes: tg_attributes(&target_type, protocol.as_deref())
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            items: Vec::new(),
        };
        r.insert(arn.clone(), rec);
        t.push(arn.clone());
        Ok(json!({"TargetGroups": [body]}))
    })
}

fn default_rule_arn(r: &Region, listener: &str) -> Option<String> {
    r.iter()
        .find(|(_, x)| {
            x.kind == Kind::Rule
                && x.body["IsDefault"] == true
                && text(&x.body, "ListenerArn") == Some(listener)
        })
        .map(|(a, _)| a.clone())
}

fn create_listener(svc: &ElbService, region: &str, input: &Value) -> Result<Value, AwsError> {
    let lb_arn = required(input, "LoadBalancerArn")?.to_string();
    let port = input["Port"]
        .as_i64()
        .ok_or_else(|| validation("A listener port must be specified"))?;
    svc.change_certified(region, |r, t| {
        let lb = get(r, &lb_arn, Kind::LoadBalancer)?;
        let network = text(&lb.body, "Type") == Some("network");
        let protocol = text(input, "Protocol").map(str::to_string).unwrap_or_else(|| if network { "TCP".into() } else { "HTTP".into() });
        let secure = matches!(protocol.as_str(), "HTTPS" | "TLS");
        if secure && input["Certificates"].as_array().is_none_or(|c| c.is_empty()) {
            return Err(err("CertificateNotFound", "A certificate must be specified for HTTPS listeners"));
        }
        if r.values().any(|x| x.kind == Kind::Listener && text(&x.body, "LoadBalancerArn") == Some(&lb_arn) && x.body["Port"] == port) {
            return Err(err("DuplicateListener", "A listener already exists on this port for this load balancer"));
        }
        let actions = normalize_actions(r, &input["DefaultActions"])?;
        let lb_path = lb_arn.split(":loadbalancer/").nth(1).unwrap_or("");
        let arn = format!("arn:aws:elasticloadbalancing:{region}:{}:listener/{lb_path}/{}", svc.account_id, hex16());
        let mut body = json!({"ListenerArn": arn, "LoadBalancerArn": lb_arn, "Port": port, "Protocol": protocol, "DefaultActions": actions});
        if secure {
            body["Certificates"] = input["Certificates"].clone();
            body["SslPolicy"] = input.get("SslPolicy").cloned().unwrap_or(json!("ELBSecurityPolicy-2016-08"));
        }
        if let Some(alpn) = input.get("AlpnPolicy") {
            body["AlpnPolicy"] = alpn.clone();
        }
        let rule_arn = format!("arn:aws:elasticloadbalancing:{region}:{}:listener-rule/{lb_path}/{}/{}", svc.account_id, arn.rsplit('/').next().unwrap_or(""), hex16());
        r.insert(arn.clone(), Record { kind: Kind::Listener, body: body.clone(), tags: tags_of(input), attributes: Default::default(), items: Vec::new() });
        r.insert(rule_arn.clone(), Record {
            kind: Kind::Rule,
            body: json!({"RuleArn": rule_arn, "ListenerArn": arn, "LoadBalancerArn": lb_arn, "Priority": "default", "Conditions": [], "Actions": actions, "IsDefault": true}),
            tags: Vec::new(),
            attributes: Default::default(),
            items: Vec::new(),
        });
        t.push(arn);
        t.push(rule_arn);
        Ok(json!({"Listeners": [body]}))
    })
}

fn priority_taken(r: &Region, listener: &str, priority: i64, except: Option<&str>) -> bool {
    r.iter().any(|(a, x)| {
        x.kind == Kind::Rule
            && Some(a.as_str()) != except
            && text(&x.body, "ListenerArn") == Some(listener)
            && text(&x.body, "Priority") == Some(priority.to_string().as_str())
    })
}

/// A rule as the API shows it (without the listener and load balancer cumulo keeps on it).
fn public_rule(body: &Value) -> Value {
    let mut b = body.clone();
    if let Some(o) = b.as_object_mut() {
        o.remove("ListenerArn");
        o.remove("LoadBalancerArn");
    }
    b
}

/// A rule's conditions as AWS reports them: a path or host condition given by its legacy
/// `Values` also in its typed config, and one given by its typed config also in `Values`
/// (CreateRule and ModifyRule alike).
fn normalize_conditions(conditions: &Value) -> Result<Vec<Value>, AwsError> {
    let conditions = conditions
        .as_array()
        .filter(|c| !c.is_empty())
        .cloned()
        .ok_or_else(|| validation("A rule must have at least one condition"))?;
    Ok(conditions
        .into_iter()
        .map(|mut c| {
            let field = text(&c, "Field").unwrap_or("").to_string();
            let values = c.get("Values").cloned();
            let config = match field.as_str() {
                "path-pattern" => Some("PathPatternConfig"),
                "host-header" => Some("HostHeaderConfig"),
                _ => None,
            };
            if let (Some(cfg), Some(vals)) = (config, values.clone())
                && c.get(cfg).is_none()
            {
                c[cfg] = json!({"Values": vals});
            }
            if let (Some(cfg), None) = (config, values)
                && let Some(vals) = c.get(cfg).and_then(|x| x.get("Values")).cloned()
            {
                c["Values"] = vals;
            }
            c
        })
        .collect())
}

fn create_rule(svc: &ElbService, region: &str, input: &Value) -> Result<Value, AwsError> {
    let listener = required(input, "ListenerArn")?.to_string();
    let priority = input["Priority"]
        .as_i64()
        .ok_or_else(|| validation("A priority must be specified"))?;
    if !(1..=50000).contains(&priority) {
        return Err(validation(format!(
            "Priority '{priority}' must be between 1 and 50000"
        )));
    }
    let conditions = normalize_conditions(&input["Conditions"])?;
    svc.change(region, |r, t| {
        let lb = text(&get(r, &listener, Kind::Listener)?.body, "LoadBalancerArn").unwrap_or("").to_string();
        if priority_taken(r, &listener, priority, None) {
            return Err(err("PriorityInUse", format!("Priority '{priority}' is currently in use")));
        }
        let actions = normalize_actions(r, &input["Actions"])?;
        let tail = listener.split(":listener/").nth(1).unwrap_or("");
        let arn = format!("arn:aws:elasticloadbalancing:{region}:{}:listener-rule/{tail}/{}", svc.account_id, hex16());
        let body = json!({"RuleArn": arn, "ListenerArn": listener, "LoadBalancerArn": lb, "Priority": priority.to_string(), "Conditions": conditions, "Actions": actions, "IsDefault": false});
        r.insert(arn.clone(), Record { kind: Kind::Rule, body: body.clone(), tags: tags_of(input), attributes: Default::default(), items: Vec::new() });
        t.push(arn);
        Ok(json!({"Rules": [public_rule(&body)]}))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use cumulo_store::Store;
    use std::sync::Arc;

    #[test]
    fn a_load_balancer_its_listener_rules_and_targets() {
        let store = Arc::new(Store::in_memory().unwrap());
        let ec2 = Arc::new(crate::ec2::Ec2Service::new(store.clone(), &Config::default()).unwrap());
        let acm = Arc::new(crate::acm::AcmService::new(store.clone(), &Config::default()).unwrap());
        let vpc = ec2.default_vpc("us-east-1").unwrap();
        let subnets: Vec<String> = ec2
            .records("us-east-1")
            .unwrap()
            .into_iter()
            .filter_map(|r| match r {
                crate::ec2::Resource::Subnet(s) if s.vpc_id == vpc.vpc_id => Some(s.id),
                _ => None,
            })
            .take(2)
            .collect();
        let elb = ElbService::new(store, &Config::default(), ec2.clone(), acm).unwrap();
        let interfaces = |desc: &str| {
            ec2.records("us-east-1")
                .unwrap()
                .into_iter()
                .filter(|r| matches!(r, crate::ec2::Resource::NetworkInterface(e) if e.description.starts_with(desc)))
                .count()
        };
        let lb = elb
            .call(
                "us-east-1",
                "CreateLoadBalancer",
                &json!({"Name": "web", "Subnets": subnets}),
            )
            .unwrap();
        let lb_arn = lb["LoadBalancers"][0]["LoadBalancerArn"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            lb["LoadBalancers"][0]["DNSName"]
                .as_str()
                .unwrap()
                .ends_with(".us-east-1.elb.amazonaws.com")
        );
        assert_eq!(
            lb["LoadBalancers"][0]["CanonicalHostedZoneId"],
            "Z35SXDOTRQ7X7K"
        );
        // One requester-managed interface per subnet, named after the load balancer.
        assert_eq!(interfaces("ELB app/web/"), 2);
        let tg = elb.call("us-east-1", "CreateTargetGroup", &json!({"Name": "tg", "Protocol": "HTTP", "Port": 80, "VpcId": vpc.vpc_id, "TargetType": "ip"})).unwrap();
        let tg_arn = tg["TargetGroups"][0]["TargetGroupArn"]
            .as_str()
            .unwrap()
            .to_string();
        elb.register_targets("us-east-1", &tg_arn, &[("10.0.0.5".into(), None)])
            .unwrap();
        let health = elb
            .call(
                "us-east-1",
                "DescribeTargetHealth",
                &json!({"TargetGroupArn": tg_arn}),
            )
            .unwrap();
        assert_eq!(
            health["TargetHealthDescriptions"][0]["TargetHealth"]["State"],
            "unused"
        );
        let listener = elb.call("us-east-1", "CreateListener", &json!({"LoadBalancerArn": lb_arn, "Port": 80, "Protocol": "HTTP", "DefaultActions": [{"Type": "forward", "TargetGroupArn": tg_arn}]})).unwrap();
        let l_arn = listener["Listeners"][0]["ListenerArn"]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(
            elb.target_group("us-east-1", &tg_arn)
                .unwrap()
                .load_balancer_arns,
            vec![lb_arn.clone()]
        );
        let health = elb
            .call(
                "us-east-1",
                "DescribeTargetHealth",
                &json!({"TargetGroupArn": tg_arn}),
            )
            .unwrap();
        assert_eq!(
            health["TargetHealthDescriptions"][0]["TargetHealth"]["State"],
            "healthy"
        );
        let rule = json!({"ListenerArn": l_arn, "Priority": 5, "Conditions": [{"Field": "path-pattern", "Values": ["/a"]}], "Actions": [{"Type": "fixed-response", "FixedResponseConfig": {"StatusCode": "200"}}]});
        elb.call("us-east-1", "CreateRule", &rule).unwrap();
        assert_eq!(
            elb.call("us-east-1", "CreateRule", &rule).unwrap_err().code,
            "PriorityInUse"
        );
        assert_eq!(
            elb.call(
                "us-east-1",
                "DeleteTargetGroup",
                &json!({"TargetGroupArn": tg_arn})
            )
            .unwrap_err()
            .code,
            "ResourceInUse"
        );
        let rules = elb
            .call("us-east-1", "DescribeRules", &json!({"ListenerArn": l_arn}))
            .unwrap();
        assert_eq!(rules["Rules"].as_array().unwrap().len(), 2);
        // A condition changed by ModifyRule through its typed config is answered in both forms,
        // as CreateRule's are (CloudFormation's ListenerRule update sends the typed one).
        let rule_arn = rules["Rules"][0]["RuleArn"].as_str().unwrap().to_string();
        let modified = elb
            .call(
                "us-east-1",
                "ModifyRule",
                &json!({"RuleArn": rule_arn,
            "Conditions": [{"Field": "path-pattern", "PathPatternConfig": {"Values": ["/b"]}}]}),
            )
            .unwrap();
        let both = json!([{"Field": "path-pattern", "Values": ["/b"], "PathPatternConfig": {"Values": ["/b"]}}]);
        assert_eq!(modified["Rules"][0]["Conditions"], both);
        let rules = elb
            .call("us-east-1", "DescribeRules", &json!({"ListenerArn": l_arn}))
            .unwrap();
        assert_eq!(rules["Rules"][0]["Conditions"], both);
        let https = json!({"LoadBalancerArn": lb_arn, "Port": 443, "Protocol": "HTTPS",
            "Certificates": [{"CertificateArn": "arn:aws:acm:us-east-1:000000000000:certificate/none"}],
            "DefaultActions": [{"Type": "forward", "TargetGroupArn": tg_arn}]});
        let e = elb.call("us-east-1", "CreateListener", &https).unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            (
                "CertificateNotFound",
                "Certificate 'arn:aws:acm:us-east-1:000000000000:certificate/none' not found"
            )
        );
        let listeners = elb
            .call(
                "us-east-1",
                "DescribeListeners",
                &json!({"LoadBalancerArn": lb_arn}),
            )
            .unwrap();
        assert_eq!(listeners["Listeners"].as_array().unwrap().len(), 1);
        elb.call(
            "us-east-1",
            "DeleteLoadBalancer",
            &json!({"LoadBalancerArn": lb_arn}),
        )
        .unwrap();
        assert_eq!(interfaces("ELB app/web/"), 0);
        // Deleting it again is no error, as on AWS.
        elb.call(
            "us-east-1",
            "DeleteLoadBalancer",
            &json!({"LoadBalancerArn": lb_arn}),
        )
        .unwrap();
        elb.call(
            "us-east-1",
            "DeleteTargetGroup",
            &json!({"TargetGroupArn": tg_arn}),
        )
        .unwrap();
        assert_eq!(
            elb.call(
                "us-east-1",
                "DescribeListeners",
                &json!({"ListenerArns": [l_arn]})
            )
            .unwrap_err()
            .code,
            "ListenerNotFound"
        );
    }
}
