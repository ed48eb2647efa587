//! Import ids: what each Terraform resource's `import { id = ... }` must be, built from the
//! resource as CloudFormation and the inventory know it. Simple ids are declared in the table
//! ([`super::table::Id`]); the composites that need logic are the `Build` functions here, each
//! quoting the provider documentation's example of its format.

use super::hcl::Arg;
use super::table::{Id, Part, Resource};
use serde_json::{Map, Value};

/// One resource as the id builders see it.
pub struct Subject<'a> {
    pub logical_id: &'a str,
    pub physical_id: Option<&'a str>,
    /// The properties that resolved to literals.
    pub props: &'a Map<String, Value>,
    /// The live attributes the inventory recorded (Fn::GetAtt names).
    pub attributes: &'a Map<String, Value>,
    /// The template's own (unresolved) properties, to see which resource a `Ref` names.
    pub raw: &'a Value,
    /// Another resource of the stack, resolved (a scaling policy's scalable target).
    pub sibling: &'a dyn Fn(&str) -> Option<Map<String, Value>>,
}

/// One Terraform resource to write: most CloudFormation resources give one; a record-set
/// group gives one per record, an inline policy one per role.
#[derive(Debug, Clone, PartialEq)]
pub struct Instance {
    pub tf: &'static str,
    /// Appended to the resource's name when a CloudFormation resource gives several.
    pub suffix: Option<String>,
    pub id: String,
    /// Arguments the builder knows besides the table's (a rule's ports, a record's zone).
    pub args: Vec<(String, Arg)>,
}

/// A composite id's builder.
pub type Build = fn(&Subject) -> Result<Vec<Instance>, String>;

impl Subject<'_> {
    fn prop(&self, name: &str) -> Option<&Value> {
        self.props.get(name)
    }

    fn text(&self, name: &str) -> Result<String, String> {
        match self.prop(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            Some(other) => Err(format!("{name} is {other}, not a string")),
            None => Err(format!("{name} is not set or did not resolve")),
        }
    }

    fn opt(&self, name: &str) -> Option<String> {
        self.text(name).ok()
    }

    fn physical(&self) -> Result<&str, String> {
        self.physical_id
            .ok_or_else(|| "no physical id recorded".to_string())
    }

    fn attribute(&self, name: &str) -> Option<String> {
        match self.attributes.get(name)? {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }
}

/// The last segment of an ARN or path (`arn:...:cluster/name` → `name`).
pub fn last_segment(s: &str) -> &str {
    s.rsplit(['/', ':']).next().unwrap_or(s)
}

fn one(tf: &'static str, id: String) -> Vec<Instance> {
    vec![Instance {
        tf,
        suffix: None,
        id,
        args: Vec::new(),
    }]
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn list(s: &Subject, name: &str) -> Vec<String> {
    s.prop(name)
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(text).collect())
        .unwrap_or_default()
}

/// The instances (ids and builder arguments) of one resource.
pub fn instances(r: &Resource, s: &Subject) -> Result<Vec<Instance>, String> {
    let id = match r.id {
        Id::Physical => s.physical()?.to_string(),
        Id::PhysicalName => last_segment(s.physical()?).to_string(),
        Id::Attribute(a) => s
            .attribute(a)
            .ok_or_else(|| format!("live attribute {a} is not recorded"))?,
        Id::Join(sep, parts) => parts
            .iter()
            .map(|p| match p {
                Part::Physical => s.physical().map(str::to_string),
                Part::Prop(name) => s.text(name),
                Part::PropName(name) => s.text(name).map(|v| last_segment(&v).to_string()),
            })
            .collect::<Result<Vec<_>, _>>()?
            .join(sep),
        Id::Build(build) => return build(s),
    };
    Ok(one(r.tf, id))
}

/// `rtb-656C65616E6F72_0.0.0.0/0`: the route table and the destination.
pub fn route(s: &Subject) -> Result<Vec<Instance>, String> {
    let table = s.text("RouteTableId")?;
    let destination = [
        "DestinationCidrBlock",
        "DestinationIpv6CidrBlock",
        "DestinationPrefixListId",
    ]
    .iter()
    .find_map(|p| s.opt(p))
    .ok_or("the route has no destination")?;
    Ok(one("aws_route", format!("{table}_{destination}")))
}

pub fn ingress_rule(s: &Subject) -> Result<Vec<Instance>, String> {
    security_group_rule(s, "ingress", "Source")
}

pub fn egress_rule(s: &Subject) -> Result<Vec<Instance>, String> {
    security_group_rule(s, "egress", "Destination")
}

/// `sg-6e616f6d69_ingress_tcp_8000_8000_10.0.3.0/24`; every protocol is `all` with ports
/// `0_65536` (`sg-7472697374616e_ingress_all_0_65536_sg-6176657279`); the group itself as
/// the source is `self`.
fn security_group_rule(s: &Subject, direction: &str, peer: &str) -> Result<Vec<Instance>, String> {
    let group = s
        .text("GroupId")
        .map_err(|_| "GroupId is not set (a GroupName-only rule of a default VPC)".to_string())?;
    let raw_protocol = s.text("IpProtocol")?.to_ascii_lowercase();
    let protocol = match raw_protocol.as_str() {
        "-1" | "all" => "all",
        "6" => "tcp",
        "17" => "udp",
        "1" => "icmp",
        "58" => "icmpv6",
        other => other,
    }
    .to_string();
    let port = |name: &str| s.opt(name).and_then(|p| p.parse::<i64>().ok());
    let (from, to) = if protocol == "all" {
        (0, 65536)
    } else {
        match (port("FromPort"), port("ToPort")) {
            (Some(f), Some(t)) => (f, t),
            _ => return Err(format!("a {protocol} rule without FromPort and ToPort")),
        }
    };
    let mut args = vec![
        ("type".to_string(), Arg::Value(direction.into())),
        (
            "security_group_id".to_string(),
            Arg::Value(group.clone().into()),
        ),
        ("protocol".to_string(), Arg::Value(raw_protocol.into())),
        // The provider reads an all-protocols rule back with ports 0 and 0.
        (
            "from_port".to_string(),
            Arg::Value(if protocol == "all" { 0 } else { from }.into()),
        ),
        (
            "to_port".to_string(),
            Arg::Value(if protocol == "all" { 0 } else { to }.into()),
        ),
    ];
    let sources: [(String, &str); 4] = [
        ("CidrIp".into(), "cidr_blocks"),
        ("CidrIpv6".into(), "ipv6_cidr_blocks"),
        (format!("{peer}PrefixListId"), "prefix_list_ids"),
        (format!("{peer}SecurityGroupId"), "source_security_group_id"),
    ];
    let (source, arg) = sources
        .iter()
        .find_map(|(prop, arg)| s.opt(prop).map(|v| (v, *arg)))
        .ok_or("the rule has no source or destination")?;
    if arg == "source_security_group_id" && source == group {
        args.push(("self".into(), Arg::Value(true.into())));
    } else if arg == "source_security_group_id" {
        args.push((arg.into(), Arg::Value(source.clone().into())));
    } else {
        args.push((arg.into(), Arg::Value(vec![source.clone()].into())));
    }
    let source = if arg == "source_security_group_id" && source == group {
        "self".to_string()
    } else {
        source
    };
    Ok(vec![Instance {
        tf: "aws_security_group_rule",
        suffix: None,
        id: format!("{group}_{direction}_{protocol}_{from}_{to}_{source}"),
        args,
    }])
}

/// `cluster-name/service-name`.
pub fn ecs_service(s: &Subject) -> Result<Vec<Instance>, String> {
    let cluster = s.opt("Cluster").unwrap_or_else(|| "default".into());
    let service = s
        .attribute("Name")
        .or_else(|| s.opt("ServiceName"))
        .or_else(|| s.physical_id.map(|p| last_segment(p).to_string()))
        .ok_or("the service's name is not recorded")?;
    Ok(one(
        "aws_ecs_service",
        format!("{}/{service}", last_segment(&cluster)),
    ))
}

/// `my_test_lambda_function/AllowExecutionFromCloudWatch` (`function:qualifier/statement`).
pub fn lambda_permission(s: &Subject) -> Result<Vec<Instance>, String> {
    let function = s.text("FunctionName")?;
    // arn:aws:lambda:region:account:function:name[:qualifier]
    let function = match function.split_once(":function:") {
        Some((_, name)) => name.to_string(),
        None => function,
    };
    let statement = s
        .attribute("Id")
        .or_else(|| {
            s.physical_id
                .map(|p| p.rsplit('|').next().unwrap_or(p).to_string())
        })
        .ok_or("the statement id is not recorded")?;
    Ok(vec![Instance {
        tf: "aws_lambda_permission",
        suffix: None,
        id: format!("{function}/{statement}"),
        args: vec![("statement_id".into(), Arg::Value(statement.into()))],
    }])
}

/// `<listener-arn>_<certificate-arn>`, one per certificate.
pub fn listener_certificates(s: &Subject) -> Result<Vec<Instance>, String> {
    let listener = s.text("ListenerArn")?;
    let certificates: Vec<String> = s
        .prop("Certificates")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|c| c.get("CertificateArn").and_then(text))
                .collect()
        })
        .unwrap_or_default();
    if certificates.is_empty() {
        return Err("no certificate resolved".into());
    }
    let several = certificates.len() > 1;
    Ok(certificates
        .into_iter()
        .enumerate()
        .map(|(i, c)| Instance {
            tf: "aws_lb_listener_certificate",
            suffix: several.then(|| i.to_string()),
            id: format!("{listener}_{c}"),
            args: vec![("certificate_arn".into(), Arg::Value(c.into()))],
        })
        .collect())
}

/// An inline policy per principal: `role_name:policy_name` (`aws_iam_role_policy`), and
/// likewise `user:policy` and `group:policy`.
pub fn inline_policies(s: &Subject) -> Result<Vec<Instance>, String> {
    let name = s.text("PolicyName")?;
    let mut out = Vec::new();
    for (prop, tf, arg) in [
        ("Roles", "aws_iam_role_policy", "role"),
        ("Users", "aws_iam_user_policy", "user"),
        ("Groups", "aws_iam_group_policy", "group"),
    ] {
        for principal in list(s, prop) {
            let principal = last_segment(&principal).to_string();
            out.push(Instance {
                tf,
                suffix: Some(format!("{arg}_{principal}")),
                id: format!("{principal}:{name}"),
                args: vec![(arg.into(), Arg::Value(principal.into()))],
            });
        }
    }
    if out.is_empty() {
        return Err("the policy names no role, user or group that resolved".into());
    }
    if out.len() == 1 {
        out[0].suffix = None;
    }
    Ok(out)
}

/// The zone id, without the `/hostedzone/` prefix Route 53 sometimes gives.
pub fn hosted_zone(s: &Subject) -> Result<Vec<Instance>, String> {
    Ok(one(
        "aws_route53_zone",
        s.physical()?.trim_start_matches("/hostedzone/").to_string(),
    ))
}

/// `Z4KAPRWWNC7JR_dev.example.com_NS` (zone, name without the final dot, type), with
/// `_<set identifier>` appended for a record that has one.
fn record(
    record: &Map<String, Value>,
    zone: Option<String>,
    suffix: Option<String>,
) -> Result<Instance, String> {
    let get = |k: &str| record.get(k).and_then(text);
    let zone = get("HostedZoneId")
        .or(zone)
        .ok_or("the record's hosted zone id is not known (HostedZoneName alone, not recorded)")?;
    let zone = zone.trim_start_matches("/hostedzone/").to_string();
    let name = get("Name").ok_or("the record has no Name")?;
    let name = name.trim_end_matches('.').to_string();
    let kind = get("Type").ok_or("the record has no Type")?;
    let mut id = format!("{zone}_{name}_{kind}");
    let mut args = vec![
        ("zone_id".to_string(), Arg::Value(zone.into())),
        ("name".to_string(), Arg::Value(name.into())),
        ("type".to_string(), Arg::Value(kind.into())),
    ];
    if let Some(set) = get("SetIdentifier") {
        id.push('_');
        id.push_str(&set);
        args.push(("set_identifier".into(), Arg::Value(set.into())));
    }
    if let Some(ttl) = get("TTL") {
        let ttl = ttl
            .parse::<i64>()
            .map(Value::from)
            .unwrap_or(Value::String(ttl));
        args.push(("ttl".into(), Arg::Value(ttl)));
    }
    if let Some(records) = record.get("ResourceRecords") {
        args.push(("records".into(), Arg::Value(records.clone())));
    }
    if let Some(alias) = record.get("AliasTarget").and_then(Value::as_object) {
        let mut block = Map::new();
        block.insert(
            "name".into(),
            alias.get("DNSName").cloned().unwrap_or_default(),
        );
        block.insert(
            "zone_id".into(),
            alias.get("HostedZoneId").cloned().unwrap_or_default(),
        );
        block.insert(
            "evaluate_target_health".into(),
            alias
                .get("EvaluateTargetHealth")
                .cloned()
                .unwrap_or(Value::Bool(false)),
        );
        args.push(("alias".into(), Arg::Block(block)));
    }
    Ok(Instance {
        tf: "aws_route53_record",
        suffix,
        id,
        args,
    })
}

fn recorded_zone(s: &Subject) -> Option<String> {
    s.opt("HostedZoneId")
        .or_else(|| s.attribute("HostedZoneId"))
}

pub fn record_set(s: &Subject) -> Result<Vec<Instance>, String> {
    Ok(vec![record(s.props, recorded_zone(s), None)?])
}

pub fn record_set_group(s: &Subject) -> Result<Vec<Instance>, String> {
    let records = s
        .prop("RecordSets")
        .and_then(Value::as_array)
        .ok_or("RecordSets did not resolve")?;
    records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let r = r.as_object().ok_or("a record set is not an object")?;
            record(r, recorded_zone(s), Some(i.to_string()))
        })
        .collect()
}

/// The topic ARN, one per topic.
pub fn topic_policies(s: &Subject) -> Result<Vec<Instance>, String> {
    per_target(s, "Topics", "aws_sns_topic_policy", "arn")
}

/// The queue URL, one per queue.
pub fn queue_policies(s: &Subject) -> Result<Vec<Instance>, String> {
    per_target(s, "Queues", "aws_sqs_queue_policy", "queue_url")
}

fn per_target(
    s: &Subject,
    prop: &str,
    tf: &'static str,
    arg: &str,
) -> Result<Vec<Instance>, String> {
    let targets = list(s, prop);
    if targets.is_empty() {
        return Err(format!("{prop} did not resolve"));
    }
    let several = targets.len() > 1;
    Ok(targets
        .into_iter()
        .enumerate()
        .map(|(i, t)| Instance {
            tf,
            suffix: several.then(|| i.to_string()),
            id: t.clone(),
            args: vec![(arg.into(), Arg::Value(t.into()))],
        })
        .collect())
}

/// The rule: `rule-name`, or `event-bus-name/rule-name` off the default bus. Each target:
/// `rule-name/target-id` (`event-bus-name/rule-name/target-id`).
pub fn event_rule(s: &Subject) -> Result<Vec<Instance>, String> {
    let physical = s.physical_id.unwrap_or_default();
    // Ref is the name; newer stacks give `bus|name` or the rule's ARN (`rule/[bus/]name`).
    let from_physical = physical
        .split_once(":rule/")
        .map(|(_, rest)| rest.replace('|', "/"))
        .unwrap_or_else(|| physical.replace('|', "/"));
    let (bus_from_physical, name_from_physical) = match from_physical.rsplit_once('/') {
        Some((b, n)) => (Some(b.to_string()), n.to_string()),
        None => (None, from_physical.clone()),
    };
    let name = s.opt("Name").unwrap_or(name_from_physical);
    if name.is_empty() {
        return Err("the rule's name is not recorded".into());
    }
    let bus = s
        .opt("EventBusName")
        .map(|b| last_segment(&b).to_string())
        .or(bus_from_physical)
        .filter(|b| b != "default");
    let prefix = bus.as_ref().map(|b| format!("{b}/")).unwrap_or_default();
    let mut out = vec![Instance {
        tf: "aws_cloudwatch_event_rule",
        suffix: None,
        id: format!("{prefix}{name}"),
        args: vec![("name".into(), Arg::Value(name.clone().into()))],
    }];
    for target in s
        .prop("Targets")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let get = |k: &str| target.get(k).and_then(text);
        let id = get("Id").ok_or("an event target has no Id")?;
        let mut args = vec![
            ("rule".to_string(), Arg::Value(name.clone().into())),
            ("target_id".to_string(), Arg::Value(id.clone().into())),
        ];
        for (k, a) in [("Arn", "arn"), ("RoleArn", "role_arn"), ("Input", "input")] {
            if let Some(v) = get(k) {
                args.push((a.into(), Arg::Value(v.into())));
            }
        }
        if let Some(b) = &bus {
            args.push(("event_bus_name".into(), Arg::Value(b.clone().into())));
        }
        out.push(Instance {
            tf: "aws_cloudwatch_event_target",
            suffix: Some(format!("target_{id}")),
            id: format!("{prefix}{name}/{id}"),
            args,
        });
    }
    Ok(out)
}

/// `service-namespace/resource-id/scalable-dimension` (`ecs/service/cluster/svc/ecs:service:DesiredCount`);
/// when the properties do not resolve (Copilot's ResourceId joins an ImportValue and a
/// GetAtt), the target's physical id names the three.
pub fn scalable_target(s: &Subject) -> Result<Vec<Instance>, String> {
    let own = (|| {
        Some((
            s.opt("ServiceNamespace")?,
            s.opt("ResourceId")?,
            s.opt("ScalableDimension")?,
        ))
    })();
    let ((ns, resource, dimension), args) = match own {
        Some(found) => (found, Vec::new()),
        None => {
            let found = target_of_physical_id(s.physical()?)?;
            let args = vec![
                ("resource_id".into(), Arg::Value(found.1.clone().into())),
                (
                    "scalable_dimension".into(),
                    Arg::Value(found.2.clone().into()),
                ),
                (
                    "service_namespace".into(),
                    Arg::Value(found.0.clone().into()),
                ),
            ];
            (found, args)
        }
    };
    Ok(vec![Instance {
        tf: "aws_appautoscaling_target",
        suffix: None,
        id: format!("{ns}/{resource}/{dimension}"),
        args,
    }])
}

/// A scalable target's physical id `resource-id|scalable-dimension|service-namespace`, as
/// (namespace, resource id, dimension).
fn target_of_physical_id(id: &str) -> Result<(String, String, String), String> {
    match id.split('|').collect::<Vec<_>>().as_slice() {
        [r, d, ns] => Ok((ns.to_string(), r.to_string(), d.to_string())),
        _ => Err(format!(
            "scalable target id {id} is not resource|dimension|namespace"
        )),
    }
}

/// `service-namespace/resource-id/scalable-dimension/policy-name`; the target comes from the
/// policy's own properties or from the scalable target its ScalingTargetId names.
pub fn scaling_policy(s: &Subject) -> Result<Vec<Instance>, String> {
    let name = s.text("PolicyName")?;
    let own = (
        s.opt("ServiceNamespace"),
        s.opt("ResourceId"),
        s.opt("ScalableDimension"),
    );
    let (ns, resource, dimension) = match own {
        (Some(ns), Some(r), Some(d)) => (ns, r, d),
        _ => {
            // The target's properties when they resolve; a Copilot target's ResourceId joins an
            // ImportValue and a GetAtt the inventory does not evaluate, so otherwise the Ref's
            // value: the target's physical id `resource-id|scalable-dimension|service-namespace`.
            let target = s
                .raw
                .get("ScalingTargetId")
                .and_then(|t| t.get("Ref"))
                .and_then(Value::as_str)
                .and_then(|logical| (s.sibling)(logical));
            let own = target.and_then(|t| {
                let get = |k: &str| t.get(k).and_then(text);
                Some((
                    get("ServiceNamespace")?,
                    get("ResourceId")?,
                    get("ScalableDimension")?,
                ))
            });
            match own {
                Some(found) => found,
                None => target_of_physical_id(&s.text("ScalingTargetId")?)?,
            }
        }
    };
    Ok(vec![Instance {
        tf: "aws_appautoscaling_policy",
        suffix: None,
        id: format!("{ns}/{resource}/{dimension}/{name}"),
        args: vec![
            ("resource_id".into(), Arg::Value(resource.into())),
            ("scalable_dimension".into(), Arg::Value(dimension.into())),
            ("service_namespace".into(), Arg::Value(ns.into())),
        ],
    }])
}

#[cfg(test)]
mod tests {
    use super::super::table::{To, lookup};
    use super::*;
    use serde_json::json;

    fn ids_of(
        cfn_type: &str,
        physical: Option<&str>,
        props: Value,
        attributes: Value,
    ) -> Result<Vec<String>, String> {
        ids_with(cfn_type, physical, props, attributes, json!({}), &|_| None)
    }

    fn ids_with(
        cfn_type: &str,
        physical: Option<&str>,
        props: Value,
        attributes: Value,
        raw: Value,
        sibling: &dyn Fn(&str) -> Option<Map<String, Value>>,
    ) -> Result<Vec<String>, String> {
        let Some(To::Terraform(r)) = lookup(cfn_type) else {
            panic!("{cfn_type} has no Terraform row")
        };
        let s = Subject {
            logical_id: "X",
            physical_id: physical,
            props: props.as_object().unwrap(),
            attributes: attributes.as_object().unwrap(),
            raw: &raw,
            sibling,
        };
        Ok(instances(r, &s)?.into_iter().map(|i| i.id).collect())
    }

    #[test]
    fn physical_ids_and_names() {
        assert_eq!(
            ids_of("AWS::EC2::VPC", Some("vpc-1"), json!({}), json!({})).unwrap(),
            ["vpc-1"]
        );
        assert_eq!(
            ids_of(
                "AWS::ECS::Cluster",
                Some("arn:aws:ecs:us-east-1:1:cluster/app-test"),
                json!({}),
                json!({})
            )
            .unwrap(),
            ["app-test"]
        );
        assert_eq!(
            ids_of(
                "AWS::ElasticLoadBalancingV2::Listener",
                Some("arn:aws:elasticloadbalancing:us-east-1:1:listener/app/a/b/c"),
                json!({}),
                json!({})
            )
            .unwrap(),
            ["arn:aws:elasticloadbalancing:us-east-1:1:listener/app/a/b/c"]
        );
        assert_eq!(
            ids_of(
                "AWS::Route53::HostedZone",
                Some("/hostedzone/Z123"),
                json!({}),
                json!({})
            )
            .unwrap(),
            ["Z123"]
        );
        assert!(
            ids_of("AWS::EC2::VPC", None, json!({}), json!({}))
                .unwrap_err()
                .contains("physical")
        );
    }

    #[test]
    fn eip_is_its_allocation_id_not_its_address() {
        assert_eq!(
            ids_of(
                "AWS::EC2::EIP",
                Some("3.3.3.3"),
                json!({}),
                json!({"AllocationId": "eipalloc-1"})
            )
            .unwrap(),
            ["eipalloc-1"]
        );
        assert!(
            ids_of("AWS::EC2::EIP", Some("3.3.3.3"), json!({}), json!({}))
                .unwrap_err()
                .contains("AllocationId")
        );
    }

    #[test]
    fn network_composites() {
        assert_eq!(
            ids_of(
                "AWS::EC2::VPCGatewayAttachment",
                Some("x"),
                json!({"InternetGatewayId": "igw-c0a643a9", "VpcId": "vpc-123456"}),
                json!({})
            )
            .unwrap(),
            ["igw-c0a643a9:vpc-123456"]
        );
        assert_eq!(
            ids_of(
                "AWS::EC2::SubnetRouteTableAssociation",
                Some("rtbassoc-1"),
                json!({"SubnetId": "subnet-1", "RouteTableId": "rtb-1"}),
                json!({})
            )
            .unwrap(),
            ["subnet-1/rtb-1"]
        );
        assert_eq!(
            ids_of("AWS::EC2::Route", Some("r"), json!({"RouteTableId": "rtb-1", "DestinationCidrBlock": "0.0.0.0/0", "GatewayId": "igw-1"}), json!({})).unwrap(),
            ["rtb-1_0.0.0.0/0"]
        );
        assert_eq!(
            ids_of(
                "AWS::ServiceDiscovery::PrivateDnsNamespace",
                Some("ns-1"),
                json!({"Vpc": "vpc-1", "Name": "a.local"}),
                json!({})
            )
            .unwrap(),
            ["ns-1:vpc-1"]
        );
    }

    #[test]
    fn security_group_rules() {
        let rule = |props: Value| {
            ids_of(
                "AWS::EC2::SecurityGroupIngress",
                Some("sgr-1"),
                props,
                json!({}),
            )
        };
        assert_eq!(
            rule(json!({"GroupId": "sg-1", "IpProtocol": "tcp", "FromPort": 8000, "ToPort": 8000, "CidrIp": "10.0.3.0/24"})).unwrap(),
            ["sg-1_ingress_tcp_8000_8000_10.0.3.0/24"]
        );
        assert_eq!(
            rule(json!({"GroupId": "sg-1", "IpProtocol": -1, "SourceSecurityGroupId": "sg-2"}))
                .unwrap(),
            ["sg-1_ingress_all_0_65536_sg-2"]
        );
        assert_eq!(
            rule(json!({"GroupId": "sg-1", "IpProtocol": "tcp", "FromPort": 80, "ToPort": 80, "SourceSecurityGroupId": "sg-1"})).unwrap(),
            ["sg-1_ingress_tcp_80_80_self"]
        );
        assert_eq!(
            ids_of("AWS::EC2::SecurityGroupEgress", Some("e"), json!({"GroupId": "sg-1", "IpProtocol": "tcp", "FromPort": 8000, "ToPort": 8000, "DestinationPrefixListId": "pl-6469726b"}), json!({})).unwrap(),
            ["sg-1_egress_tcp_8000_8000_pl-6469726b"]
        );
        assert!(
            rule(json!({"GroupName": "default", "IpProtocol": "tcp"}))
                .unwrap_err()
                .contains("GroupId")
        );
    }

    #[test]
    fn ecs_lambda_and_load_balancing_composites() {
        assert_eq!(
            ids_of(
                "AWS::ECS::Service",
                Some("arn:aws:ecs:us-east-1:1:service/app-test/app-test-web"),
                json!({"Cluster": "arn:aws:ecs:us-east-1:1:cluster/app-test"}),
                json!({})
            )
            .unwrap(),
            ["app-test/app-test-web"]
        );
        assert_eq!(
            ids_of(
                "AWS::Lambda::Permission",
                Some("stack-Perm-1"),
                json!({"FunctionName": "arn:aws:lambda:us-east-1:1:function:calc"}),
                json!({})
            )
            .unwrap(),
            ["calc/stack-Perm-1"]
        );
        assert_eq!(
            ids_of("AWS::ElasticLoadBalancingV2::ListenerCertificate", Some("x"), json!({"ListenerArn": "arn:l", "Certificates": [{"CertificateArn": "arn:c1"}, {"CertificateArn": "arn:c2"}]}), json!({})).unwrap(),
            ["arn:l_arn:c1", "arn:l_arn:c2"]
        );
    }

    #[test]
    fn iam_inline_policies_are_role_colon_policy() {
        assert_eq!(
            ids_of("AWS::IAM::Policy", Some("p"), json!({"PolicyName": "logs", "Roles": ["task-role", "arn:aws:iam::1:role/other"], "Users": ["bob"]}), json!({})).unwrap(),
            ["task-role:logs", "other:logs", "bob:logs"]
        );
    }

    #[test]
    fn route53_records() {
        assert_eq!(
            ids_of(
                "AWS::Route53::RecordSet",
                Some("x"),
                json!({"HostedZoneId": "Z4KAPRWWNC7JR", "Name": "dev.example.com.", "Type": "NS"}),
                json!({})
            )
            .unwrap(),
            ["Z4KAPRWWNC7JR_dev.example.com_NS"]
        );
        assert_eq!(
            ids_of("AWS::Route53::RecordSet", Some("x"), json!({"HostedZoneName": "example.com.", "Name": "a.example.com", "Type": "A", "SetIdentifier": "dev"}), json!({"HostedZoneId": "Z1"})).unwrap(),
            ["Z1_a.example.com_A_dev"]
        );
        assert_eq!(
            ids_of("AWS::Route53::RecordSetGroup", Some("x"), json!({"HostedZoneId": "Z1", "RecordSets": [{"Name": "a.x.com", "Type": "A"}, {"Name": "b.x.com", "Type": "CNAME", "HostedZoneId": "Z2"}]}), json!({})).unwrap(),
            ["Z1_a.x.com_A", "Z2_b.x.com_CNAME"]
        );
        assert!(
            ids_of(
                "AWS::Route53::RecordSet",
                Some("x"),
                json!({"HostedZoneName": "example.com.", "Name": "a", "Type": "A"}),
                json!({})
            )
            .unwrap_err()
            .contains("zone")
        );
    }

    #[test]
    fn policies_per_target_and_events() {
        assert_eq!(
            ids_of(
                "AWS::SQS::QueuePolicy",
                Some("x"),
                json!({"Queues": ["https://sqs/1/q"]}),
                json!({})
            )
            .unwrap(),
            ["https://sqs/1/q"]
        );
        assert_eq!(
            ids_of(
                "AWS::SNS::TopicPolicy",
                Some("x"),
                json!({"Topics": ["arn:t1", "arn:t2"]}),
                json!({})
            )
            .unwrap(),
            ["arn:t1", "arn:t2"]
        );
        assert_eq!(
            ids_of(
                "AWS::Events::Rule",
                Some("calc-rule"),
                json!({"Targets": [{"Id": "Calc", "Arn": "arn:f"}]}),
                json!({})
            )
            .unwrap(),
            ["calc-rule", "calc-rule/Calc"]
        );
        assert_eq!(
            ids_of(
                "AWS::Events::Rule",
                Some("arn:aws:events:us-east-1:1:rule/bus/r"),
                json!({}),
                json!({})
            )
            .unwrap(),
            ["bus/r"]
        );
        assert_eq!(
            ids_of(
                "AWS::S3::BucketPolicy",
                Some("x"),
                json!({"Bucket": "b"}),
                json!({})
            )
            .unwrap(),
            ["b"]
        );
    }

    #[test]
    fn application_autoscaling() {
        let target = json!({"ServiceNamespace": "ecs", "ResourceId": "service/c/s", "ScalableDimension": "ecs:service:DesiredCount"});
        assert_eq!(
            ids_of(
                "AWS::ApplicationAutoScaling::ScalableTarget",
                Some("t"),
                target.clone(),
                json!({})
            )
            .unwrap(),
            ["ecs/service/c/s/ecs:service:DesiredCount"]
        );
        // Copilot's target: its ResourceId did not resolve, its physical id names it.
        assert_eq!(
            ids_of(
                "AWS::ApplicationAutoScaling::ScalableTarget",
                Some("service/c/s|ecs:service:DesiredCount|ecs"),
                json!({"ServiceNamespace": "ecs", "ScalableDimension": "ecs:service:DesiredCount"}),
                json!({})
            )
            .unwrap(),
            ["ecs/service/c/s/ecs:service:DesiredCount"]
        );
        let sibling =
            move |logical: &str| (logical == "Target").then(|| target.as_object().unwrap().clone());
        assert_eq!(
            ids_with(
                "AWS::ApplicationAutoScaling::ScalingPolicy",
                Some("p"),
                json!({"PolicyName": "cpu", "ScalingTargetId": "x"}),
                json!({}),
                json!({"ScalingTargetId": {"Ref": "Target"}}),
                &sibling
            )
            .unwrap(),
            ["ecs/service/c/s/ecs:service:DesiredCount/cpu"]
        );
        // A Copilot target whose ResourceId did not resolve: the Ref's value names it.
        let unresolved = |_: &str| {
            Some(
                json!({"ServiceNamespace": "ecs"})
                    .as_object()
                    .unwrap()
                    .clone(),
            )
        };
        assert_eq!(
            ids_with(
                "AWS::ApplicationAutoScaling::ScalingPolicy",
                Some("p"),
                json!({"PolicyName": "cpu", "ScalingTargetId": "service/c/s|ecs:service:DesiredCount|ecs"}),
                json!({}),
                json!({"ScalingTargetId": {"Ref": "Target"}}),
                &unresolved
            )
            .unwrap(),
            ["ecs/service/c/s/ecs:service:DesiredCount/cpu"]
        );
        assert_eq!(
            ids_of("AWS::ApplicationAutoScaling::ScalingPolicy", Some("p"), json!({"PolicyName": "cpu", "ScalingTargetId": "service/c/s|ecs:service:DesiredCount|ecs"}), json!({})).unwrap(),
            ["ecs/service/c/s/ecs:service:DesiredCount/cpu"]
        );
    }
}
