//! VPC endpoints and prefix lists. A Gateway endpoint (S3, DynamoDB) routes its service's
//! AWS-managed prefix list to itself in the route tables it is given; an Interface endpoint
//! puts a network interface in each subnet and has DNS names. Customer-managed prefix lists are
//! versioned sets of CIDRs; the AWS-managed ones (`com.amazonaws.<region>.s3`, `.dynamodb`) are
//! fixed, with AWS's us-east-1 ids. No traffic flows through any of them.

use super::errors::{invalid_value, not_found};
use super::model::*;
use super::ops::{claim_ip, new_interface, now, release_interface};
use super::{Ec2Service, Region};
use cumulo_wire::AwsError;

/// An AWS-managed prefix list: a service's public ranges.
#[derive(Debug, Clone, PartialEq)]
pub struct ManagedList {
    pub id: String,
    pub name: String,
    pub cidrs: &'static [&'static str],
}

const S3: &[&str] = &[
    "3.5.0.0/19",
    "16.15.176.0/20",
    "16.182.0.0/16",
    "18.34.0.0/19",
    "52.216.0.0/15",
    "54.231.0.0/16",
];
const DYNAMODB: &[&str] = &[
    "3.218.180.0/22",
    "35.71.64.0/22",
    "52.94.0.0/22",
    "52.119.224.0/20",
];

/// The region's AWS-managed lists: AWS's ids in us-east-1, stable derived ids elsewhere.
pub fn managed_lists(region: &str) -> Vec<ManagedList> {
    let id = |service: &str, us_east_1: &str| {
        if region == "us-east-1" {
            return us_east_1.to_string();
        }
        let digest = digest::compute_hex(&format!("{region}/{service}"));
        format!("pl-{}", &digest[..8])
    };
    vec![
        ManagedList {
            id: id("s3", "pl-63a5400a"),
            name: format!("com.amazonaws.{region}.s3"),
            cidrs: S3,
        },
        ManagedList {
            id: id("dynamodb", "pl-02cd2c6b"),
            name: format!("com.amazonaws.{region}.dynamodb"),
            cidrs: DYNAMODB,
        },
    ]
}

pub(super) mod digest {
    use ::md5::{Digest, Md5};

    pub fn compute_hex(text: &str) -> String {
        hex::encode(Md5::digest(text.as_bytes()))
    }
}

/// The hosted zone of a region's endpoint DNS names (AWS's in us-east-1).
pub fn endpoint_zone(region: &str) -> String {
    if region == "us-east-1" {
        "Z7HUB22UULQXV".into()
    } else {
        format!("Z{}", &digest::compute_hex(region)[..12].to_uppercase())
    }
}

/// An endpoint's DNS entries: (name, hosted zone), the regional one first, then one per zone.
pub fn dns_entries(region: &str, e: &VpcEndpoint, zones: &[String]) -> Vec<(String, String)> {
    if e.endpoint_type != "Interface" {
        return Vec::new();
    }
    let service = e
        .service_name
        .strip_prefix(&format!("com.amazonaws.{region}."))
        .unwrap_or(&e.service_name);
    let zone = endpoint_zone(region);
    let mut out = vec![(
        format!(
            "{}-{}.{service}.{region}.vpce.amazonaws.com",
            e.id, e.dns_label
        ),
        zone.clone(),
    )];
    for z in zones {
        out.push((
            format!(
                "{}-{}-{z}.{service}.{region}.vpce.amazonaws.com",
                e.id, e.dns_label
            ),
            zone.clone(),
        ));
    }
    if e.private_dns_enabled {
        let private_zone = format!("Z{}", &digest::compute_hex(&e.id)[..20].to_uppercase());
        out.push((format!("{service}.{region}.amazonaws.com"), private_zone));
    }
    out
}

/// The endpoint services DescribeVpcEndpointServices lists: (suffix, Gateway, Interface).
/// CreateVpcEndpoint takes any `com.amazonaws.<region>.<service>` for an Interface endpoint.
pub const SERVICES: &[(&str, bool, bool)] = &[
    ("dynamodb", true, false),
    ("ec2", false, true),
    ("ecr.api", false, true),
    ("ecr.dkr", false, true),
    ("ecs", false, true),
    ("ecs-agent", false, true),
    ("ecs-telemetry", false, true),
    ("elasticfilesystem", false, true),
    ("elasticloadbalancing", false, true),
    ("events", false, true),
    ("execute-api", false, true),
    ("kms", false, true),
    ("lambda", false, true),
    ("logs", false, true),
    ("monitoring", false, true),
    ("s3", true, true),
    ("secretsmanager", false, true),
    ("sns", false, true),
    ("sqs", false, true),
    ("ssm", false, true),
    ("ssmmessages", false, true),
    ("ec2messages", false, true),
    ("states", false, true),
    ("sts", false, true),
    ("xray", false, true),
];

/// The policy an endpoint gets when none is given: full access. AWS writes a gateway
/// endpoint's with `"Version":"2008-10-17"` and an interface endpoint's without a version (as
/// recorded against AWS, aws-recordings/ec2 `test_vpc_endpoint_dns_names`).
pub fn default_policy(endpoint_type: &str) -> String {
    let statement =
        r#""Statement":[{"Effect":"Allow","Principal":"*","Action":"*","Resource":"*"}]"#;
    if endpoint_type == "Interface" {
        format!("{{{statement}}}")
    } else {
        format!(r#"{{"Version":"2008-10-17",{statement}}}"#)
    }
}

/// What CreateVpcEndpoint asks for.
#[derive(Debug, Clone, Default)]
pub struct EndpointRequest {
    pub vpc_id: String,
    pub service_name: String,
    pub endpoint_type: Option<String>,
    pub route_table_ids: Vec<String>,
    pub subnet_ids: Vec<String>,
    pub group_ids: Vec<String>,
    pub private_dns_enabled: Option<bool>,
    pub policy: Option<String>,
    pub tags: Tags,
}

/// A change ModifyVpcEndpoint asks for.
#[derive(Debug, Clone, Default)]
pub struct EndpointChange {
    pub add_route_tables: Vec<String>,
    pub remove_route_tables: Vec<String>,
    pub add_subnets: Vec<String>,
    pub remove_subnets: Vec<String>,
    pub add_groups: Vec<String>,
    pub remove_groups: Vec<String>,
    pub policy: Option<String>,
    pub reset_policy: bool,
    pub private_dns_enabled: Option<bool>,
}

fn service_missing(name: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidServiceName",
        format!("The Vpc Endpoint Service '{name}' does not exist"),
    )
}

impl Region {
    fn managed_list_of(&self, region: &str, service_name: &str) -> Option<ManagedList> {
        managed_lists(region)
            .into_iter()
            .find(|l| l.name == service_name)
    }

    /// Adds (or drops) the endpoint's prefix-list route in a table of its VPC.
    fn endpoint_route(
        &mut self,
        table_id: &str,
        vpc_id: &str,
        list_id: &str,
        endpoint_id: &str,
        add: bool,
        touched: &mut Vec<String>,
    ) -> Result<(), AwsError> {
        let t = self.table_mut(table_id)?;
        if t.vpc_id != vpc_id {
            return Err(invalid_value(
                table_id,
                "routeTableId",
                "The route table belongs to a different network.",
            ));
        }
        t.routes
            .retain(|r| !(r.destination == list_id && r.target == endpoint_id));
        if add {
            if t.routes.iter().any(|r| r.destination == list_id) {
                return Err(AwsError::bad_request(
                    "RouteAlreadyExists",
                    format!(
                        "route table {table_id} already has a route with destination-prefix-list-id {list_id}"
                    ),
                ));
            }
            t.routes.push(Route {
                destination: list_id.to_string(),
                target: endpoint_id.to_string(),
                origin: "CreateRoute".into(),
            });
        }
        touched.push(table_id.to_string());
        Ok(())
    }

    /// Puts an endpoint interface in a subnet of its VPC (one per zone).
    fn endpoint_interface(
        &mut self,
        e: &VpcEndpoint,
        subnet_id: &str,
        touched: &mut Vec<String>,
    ) -> Result<String, AwsError> {
        let subnet = self.subnet(subnet_id)?.clone();
        if subnet.vpc_id != e.vpc_id {
            return Err(invalid_value(
                subnet_id,
                "subnetId",
                "The subnet belongs to a different network.",
            ));
        }
        let zone_taken = e.subnet_ids.iter().filter(|s| *s != subnet_id).any(|s| {
            self.subnet(s)
                .is_ok_and(|x| x.availability_zone == subnet.availability_zone)
        });
        if zone_taken {
            return Err(AwsError::bad_request(
                "DuplicateSubnetsInSameZone",
                format!(
                    "Found another VPC endpoint subnet in the availability zone of {subnet_id}. VPC endpoint subnets should be in different availability zones supported by the VPC endpoint service."
                ),
            ));
        }
        let mut groups = e.group_ids.clone();
        if groups.is_empty() {
            groups.extend(self.default_group_id(&e.vpc_id));
        }
        let eni = new_interface(
            self,
            &subnet,
            groups,
            format!("VPC Endpoint Interface {}", e.id),
            "vpc_endpoint",
            Some("amazonaws".into()),
        )?;
        claim_ip(self, subnet_id, &eni.private_ip, touched)?;
        let id = eni.id.clone();
        self.insert(Resource::NetworkInterface(eni), touched);
        Ok(id)
    }

    fn interface_in(&self, e: &VpcEndpoint, subnet_id: &str) -> Option<String> {
        e.network_interface_ids
            .iter()
            .find(|n| self.interface(n).is_ok_and(|x| x.subnet_id == subnet_id))
            .cloned()
    }
}

impl Ec2Service {
    pub fn create_vpc_endpoint(
        &self,
        region: &str,
        req: EndpointRequest,
    ) -> Result<VpcEndpoint, AwsError> {
        let endpoint_type = req
            .endpoint_type
            .clone()
            .unwrap_or_else(|| "Gateway".into());
        if !matches!(
            endpoint_type.as_str(),
            "Gateway" | "Interface" | "GatewayLoadBalancer"
        ) {
            return Err(invalid_value(
                &endpoint_type,
                "VpcEndpointType",
                "Valid types are Gateway, Interface and GatewayLoadBalancer.",
            ));
        }
        let prefix = format!("com.amazonaws.{region}.");
        if req
            .service_name
            .strip_prefix(&prefix)
            .is_none_or(str::is_empty)
        {
            return Err(service_missing(&req.service_name));
        }
        if let Some(p) = &req.policy
            && serde_json::from_str::<serde_json::Value>(p).is_err()
        {
            return Err(AwsError::bad_request(
                "MalformedPolicyDocument",
                "The policy document is not valid JSON.",
            ));
        }
        self.change(region, |r, touched| {
            r.vpc(&req.vpc_id)?;
            let list = r.managed_list_of(region, &req.service_name);
            if endpoint_type == "Gateway" && list.is_none() {
                return Err(service_missing(&req.service_name));
            }
            for g in &req.group_ids {
                if r.group(g)?.vpc_id != req.vpc_id {
                    return Err(invalid_value(
                        g,
                        "securityGroupId",
                        "The security group belongs to a different network.",
                    ));
                }
            }
            let mut e = VpcEndpoint {
                id: new_id("vpce"),
                vpc_id: req.vpc_id.clone(),
                service_name: req.service_name.clone(),
                endpoint_type: endpoint_type.clone(),
                route_table_ids: Vec::new(),
                subnet_ids: Vec::new(),
                group_ids: if endpoint_type == "Interface" {
                    req.group_ids.clone()
                } else {
                    Vec::new()
                },
                network_interface_ids: Vec::new(),
                private_dns_enabled: endpoint_type == "Interface"
                    && req.private_dns_enabled.unwrap_or(false),
                policy: Some(
                    req.policy
                        .clone()
                        .unwrap_or_else(|| default_policy(&endpoint_type)),
                ),
                dns_label: super::model::new_id("x")[2..10].to_string(),
                state: "available".into(),
                created: now(),
                tags: req.tags.clone(),
            };
            if e.endpoint_type == "Interface" && e.group_ids.is_empty() {
                e.group_ids.extend(r.default_group_id(&e.vpc_id));
            }
            if let Some(list) = &list
                && endpoint_type == "Gateway"
            {
                for t in &req.route_table_ids {
                    r.endpoint_route(t, &e.vpc_id, &list.id, &e.id, true, touched)?;
                    e.route_table_ids.push(t.clone());
                }
            }
            if endpoint_type != "Gateway" {
                for s in &req.subnet_ids {
                    let eni = r.endpoint_interface(&e, s, touched)?;
                    e.subnet_ids.push(s.clone());
                    e.network_interface_ids.push(eni);
                }
            }
            r.insert(Resource::VpcEndpoint(e.clone()), touched);
            Ok(e)
        })
    }

    pub fn modify_vpc_endpoint(
        &self,
        region: &str,
        id: &str,
        change: EndpointChange,
    ) -> Result<VpcEndpoint, AwsError> {
        if let Some(p) = &change.policy
            && serde_json::from_str::<serde_json::Value>(p).is_err()
        {
            return Err(AwsError::bad_request(
                "MalformedPolicyDocument",
                "The policy document is not valid JSON.",
            ));
        }
        self.change(region, |r, touched| {
            let mut e = r.endpoint(id)?.clone();
            let list = r.managed_list_of(region, &e.service_name);
            if let Some(list) = &list
                && e.endpoint_type == "Gateway"
            {
                for t in &change.remove_route_tables {
                    r.endpoint_route(t, &e.vpc_id, &list.id, &e.id, false, touched)?;
                    e.route_table_ids.retain(|x| x != t);
                }
                for t in &change.add_route_tables {
                    if !e.route_table_ids.contains(t) {
                        r.endpoint_route(t, &e.vpc_id, &list.id, &e.id, true, touched)?;
                        e.route_table_ids.push(t.clone());
                    }
                }
            }
            for g in &change.add_groups {
                r.group(g)?;
                if !e.group_ids.contains(g) {
                    e.group_ids.push(g.clone());
                }
            }
            e.group_ids.retain(|g| !change.remove_groups.contains(g));
            if e.endpoint_type != "Gateway" {
                for s in &change.remove_subnets {
                    if let Some(eni) = r.interface_in(&e, s) {
                        release_interface(r, &eni, touched)?;
                        e.network_interface_ids.retain(|x| x != &eni);
                    }
                    e.subnet_ids.retain(|x| x != s);
                }
                for s in &change.add_subnets {
                    if !e.subnet_ids.contains(s) {
                        let eni = r.endpoint_interface(&e, s, touched)?;
                        e.subnet_ids.push(s.clone());
                        e.network_interface_ids.push(eni);
                    }
                }
            }
            if let Some(p) = change.policy.clone() {
                e.policy = Some(p);
            }
            if change.reset_policy {
                e.policy = Some(default_policy(&e.endpoint_type));
            }
            if let Some(b) = change.private_dns_enabled {
                e.private_dns_enabled = b && e.endpoint_type == "Interface";
            }
            r.insert(Resource::VpcEndpoint(e.clone()), touched);
            Ok(e)
        })
    }

    /// Deletes endpoints (their routes and interfaces with them); answers the ids not found.
    pub fn delete_vpc_endpoints(
        &self,
        region: &str,
        ids: &[String],
    ) -> Result<Vec<String>, AwsError> {
        self.change(region, |r, touched| {
            let mut missing = Vec::new();
            for id in ids {
                let Ok(e) = r.endpoint(id).cloned() else {
                    missing.push(id.clone());
                    continue;
                };
                if let Some(list) = r.managed_list_of(region, &e.service_name) {
                    for t in &e.route_table_ids {
                        let _ = r.endpoint_route(t, &e.vpc_id, &list.id, &e.id, false, touched);
                    }
                }
                for eni in &e.network_interface_ids {
                    if r.interface(eni).is_ok() {
                        release_interface(r, eni, touched)?;
                    }
                }
                r.remove(id, touched);
            }
            Ok(missing)
        })
    }

    // ----- customer-managed prefix lists -----

    pub fn create_prefix_list(
        &self,
        region: &str,
        name: &str,
        family: &str,
        max_entries: i64,
        entries: Vec<(String, Option<String>)>,
        tags: Tags,
    ) -> Result<PrefixList, AwsError> {
        check_list(name, family, max_entries, &entries)?;
        self.change(region, |r, touched| {
            let p = PrefixList {
                id: new_id("pl"),
                name: name.to_string(),
                address_family: family.to_string(),
                max_entries,
                entries,
                version: 1,
                tags,
            };
            r.insert(Resource::PrefixList(p.clone()), touched);
            Ok(p)
        })
    }

    /// ModifyManagedPrefixList: `current_version`, when given, must be the list's.
    #[allow(clippy::too_many_arguments)]
    pub fn modify_prefix_list(
        &self,
        region: &str,
        id: &str,
        current_version: Option<i64>,
        name: Option<&str>,
        max_entries: Option<i64>,
        add: Vec<(String, Option<String>)>,
        remove: &[String],
    ) -> Result<PrefixList, AwsError> {
        self.change(region, |r, touched| {
            let mut p = r.prefix_list(id)?.clone();
            if current_version.is_some_and(|v| v != p.version) {
                return Err(AwsError::bad_request(
                    "PrefixListVersionMismatch",
                    "The prefix list has the incorrect version number.",
                ));
            }
            for c in remove {
                if !p.entries.iter().any(|(x, _)| x == c) {
                    return Err(AwsError::bad_request(
                        "InvalidPrefixListModification",
                        format!("The prefix list entry {c} does not exist."),
                    ));
                }
            }
            p.entries.retain(|(c, _)| !remove.contains(c));
            for (c, d) in add {
                match p.entries.iter_mut().find(|(x, _)| *x == c) {
                    Some(e) => e.1 = d,
                    None => p.entries.push((c, d)),
                }
            }
            if let Some(n) = name {
                p.name = n.to_string();
            }
            if let Some(m) = max_entries {
                p.max_entries = m;
            }
            check_list(&p.name, &p.address_family, p.max_entries, &p.entries)?;
            p.version += 1;
            r.insert(Resource::PrefixList(p.clone()), touched);
            Ok(p)
        })
    }

    pub fn delete_prefix_list(&self, region: &str, id: &str) -> Result<PrefixList, AwsError> {
        self.change(region, |r, touched| {
            let p = r.prefix_list(id)?.clone();
            let in_use = r.items.values().any(|x| match x {
                Resource::SecurityGroup(g) => g
                    .rules
                    .iter()
                    .any(|rule| rule.prefix_list_id.as_deref() == Some(id)),
                Resource::RouteTable(t) => t.routes.iter().any(|route| route.destination == id),
                _ => false,
            });
            if in_use {
                return Err(AwsError::bad_request(
                    "PrefixListInUse",
                    format!("The prefix list {id} is in use and cannot be deleted."),
                ));
            }
            r.remove(id, touched);
            Ok(p)
        })
    }

    /// A prefix list's entries, customer-managed or AWS-managed.
    pub fn prefix_list_entries(
        &self,
        region: &str,
        id: &str,
    ) -> Result<Vec<(String, Option<String>)>, AwsError> {
        if let Some(l) = managed_lists(region).into_iter().find(|l| l.id == id) {
            return Ok(l.cidrs.iter().map(|c| (c.to_string(), None)).collect());
        }
        self.read(region, |r| Ok(r.prefix_list(id)?.entries.clone()))
    }
}

fn check_list(
    name: &str,
    family: &str,
    max_entries: i64,
    entries: &[(String, Option<String>)],
) -> Result<(), AwsError> {
    if name.is_empty() || name.starts_with("com.amazonaws") {
        return Err(invalid_value(
            name,
            "prefixListName",
            "The name cannot be empty or start with com.amazonaws.",
        ));
    }
    if !matches!(family, "IPv4" | "IPv6") {
        return Err(invalid_value(
            family,
            "addressFamily",
            "Valid values are IPv4 and IPv6.",
        ));
    }
    if !(1..=1000).contains(&max_entries) {
        return Err(invalid_value(
            &max_entries.to_string(),
            "maxEntries",
            "It must be between 1 and 1000.",
        ));
    }
    if entries.len() as i64 > max_entries {
        return Err(AwsError::bad_request(
            "PrefixListMaxEntriesExceeded",
            format!("The prefix list has more entries than its maximum of {max_entries}."),
        ));
    }
    for (c, _) in entries {
        let ok = if family == "IPv4" {
            super::cidr::Block::parse(c).is_some()
        } else {
            super::blocks::parse_v6(c).is_some()
        };
        if !ok {
            return Err(invalid_value(c, "cidr", "This is not a valid CIDR block."));
        }
    }
    Ok(())
}

/// A list id named in a route or rule: an AWS-managed one of the region, or a customer's.
pub fn known_list(r: &Region, region: &str, id: &str) -> Result<(), AwsError> {
    if managed_lists(region).iter().any(|l| l.id == id) {
        return Ok(());
    }
    r.prefix_list(id).map(|_| ()).map_err(|_| not_found(id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use cumulo_store::Store;
    use std::sync::Arc;

    #[test]
    fn gateway_endpoints_route_their_list_and_interface_endpoints_hold_interfaces() {
        let ec2 =
            Ec2Service::new(Arc::new(Store::in_memory().unwrap()), &Config::default()).unwrap();
        let vpc = ec2
            .create_vpc("us-east-1", "10.0.0.0/16", None, Tags::new())
            .unwrap();
        let t = ec2
            .create_route_table("us-east-1", &vpc.id, Tags::new())
            .unwrap();
        let s = ec2
            .create_subnet(
                "us-east-1",
                &vpc.id,
                "10.0.1.0/24",
                Some("us-east-1a"),
                None,
                Tags::new(),
            )
            .unwrap();
        let gw = ec2
            .create_vpc_endpoint(
                "us-east-1",
                EndpointRequest {
                    vpc_id: vpc.id.clone(),
                    service_name: "com.amazonaws.us-east-1.s3".into(),
                    route_table_ids: vec![t.id.clone()],
                    ..Default::default()
                },
            )
            .unwrap();
        let routes = ec2
            .read("us-east-1", |r| Ok(r.table(&t.id)?.routes.clone()))
            .unwrap();
        assert!(
            routes
                .iter()
                .any(|x| x.destination == "pl-63a5400a" && x.target == gw.id)
        );
        let bad = ec2.create_vpc_endpoint(
            "us-east-1",
            EndpointRequest {
                vpc_id: vpc.id.clone(),
                service_name: "com.amazonaws.us-east-1.nothing".into(),
                ..Default::default()
            },
        );
        assert_eq!(bad.unwrap_err().code, "InvalidServiceName");
        let iface = ec2
            .create_vpc_endpoint(
                "us-east-1",
                EndpointRequest {
                    vpc_id: vpc.id.clone(),
                    service_name: "com.amazonaws.us-east-1.logs".into(),
                    endpoint_type: Some("Interface".into()),
                    subnet_ids: vec![s.id.clone()],
                    private_dns_enabled: Some(true),
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(iface.network_interface_ids.len(), 1);
        let dns = dns_entries("us-east-1", &iface, &["us-east-1a".into()]);
        assert!(dns[0].0.ends_with(".logs.us-east-1.vpce.amazonaws.com"));
        assert_eq!(dns.last().unwrap().0, "logs.us-east-1.amazonaws.com");
        assert_eq!(
            ec2.delete_subnet("us-east-1", &s.id).unwrap_err().code,
            "DependencyViolation"
        );
        let missing = ec2
            .delete_vpc_endpoints(
                "us-east-1",
                &[
                    gw.id.clone(),
                    iface.id.clone(),
                    "vpce-0123456789abcdef0".into(),
                ],
            )
            .unwrap();
        assert_eq!(missing, vec!["vpce-0123456789abcdef0".to_string()]);
        let routes = ec2
            .read("us-east-1", |r| Ok(r.table(&t.id)?.routes.len()))
            .unwrap();
        assert_eq!(routes, 1);
        ec2.delete_subnet("us-east-1", &s.id).unwrap();
    }

    #[test]
    fn prefix_lists_are_versioned() {
        let ec2 =
            Ec2Service::new(Arc::new(Store::in_memory().unwrap()), &Config::default()).unwrap();
        let p = ec2
            .create_prefix_list(
                "us-east-1",
                "office",
                "IPv4",
                2,
                vec![("10.0.0.0/8".into(), None)],
                Tags::new(),
            )
            .unwrap();
        let stale = ec2
            .modify_prefix_list("us-east-1", &p.id, Some(7), None, None, vec![], &[])
            .unwrap_err();
        assert_eq!(stale.code, "PrefixListVersionMismatch");
        let full = ec2
            .modify_prefix_list(
                "us-east-1",
                &p.id,
                Some(1),
                None,
                None,
                vec![("1.0.0.0/8".into(), None), ("2.0.0.0/8".into(), None)],
                &[],
            )
            .unwrap_err();
        assert_eq!(full.code, "PrefixListMaxEntriesExceeded");
        let p2 = ec2
            .modify_prefix_list(
                "us-east-1",
                &p.id,
                Some(1),
                None,
                None,
                vec![("1.0.0.0/8".into(), Some("a".into()))],
                &["10.0.0.0/8".into()],
            )
            .unwrap();
        assert_eq!((p2.version, p2.entries.len()), (2, 1));
        ec2.delete_prefix_list("us-east-1", &p.id).unwrap();
    }
}
