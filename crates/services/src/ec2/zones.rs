//! Availability zones and the default VPC a new account has in each region.
//!
//! AWS maps zone names to zone ids per account; cumulo uses one fixed mapping. In us-east-1 it
//! is the one AWS's recorded answers show for `us-east-1a` (use1-az6); other regions get
//! `<abbreviation>-az<N>` in order.

use super::Region;
use super::acls::default_acl;
use super::model::{
    AclAssociation, Association, DhcpOptions, InternetGateway, NetworkAcl, Resource, Route,
    RouteTable, SecurityGroup, Subnet, Vpc, new_id,
};
use super::ops::default_rules;

/// The region's zones: (name, id).
pub fn zones(region: &str) -> Vec<(String, String)> {
    if region == "us-east-1" {
        return [
            "use1-az6", "use1-az1", "use1-az2", "use1-az4", "use1-az3", "use1-az5",
        ]
        .iter()
        .zip('a'..)
        .map(|(id, letter)| (format!("{region}{letter}"), id.to_string()))
        .collect();
    }
    let abbreviation: String = {
        let parts: Vec<&str> = region.split('-').collect();
        match parts.as_slice() {
            [geo, rest @ .., number] => {
                let mid: String = rest.iter().filter_map(|p| p.chars().next()).collect();
                format!("{geo}{mid}{number}")
            }
            _ => region.to_string(),
        }
    };
    ('a'..='c')
        .enumerate()
        .map(|(i, letter)| {
            (
                format!("{region}{letter}"),
                format!("{abbreviation}-az{}", i + 1),
            )
        })
        .collect()
}

/// The zone id of a zone name, or the name of a zone id.
pub fn zone_id(region: &str, name: &str) -> Option<String> {
    zones(region)
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, id)| id)
}

pub fn zone_name(region: &str, id: &str) -> Option<String> {
    zones(region)
        .into_iter()
        .find(|(_, i)| i == id)
        .map(|(n, _)| n)
}

/// A new VPC's main route table (its local route), default security group and default
/// network ACL.
pub fn vpc_companions(vpc: &Vpc) -> (RouteTable, SecurityGroup, NetworkAcl) {
    let table = RouteTable {
        id: new_id("rtb"),
        vpc_id: vpc.id.clone(),
        routes: vec![Route {
            destination: vpc.cidr.clone(),
            target: "local".into(),
            origin: "CreateRouteTable".into(),
        }],
        associations: vec![Association {
            id: new_id("rtbassoc"),
            subnet_id: None,
            gateway_id: None,
        }],
        tags: Default::default(),
    };
    let group_id = new_id("sg");
    let group = SecurityGroup {
        rules: default_rules(&group_id, true),
        id: group_id,
        name: "default".into(),
        description: "default VPC security group".into(),
        vpc_id: vpc.id.clone(),
        tags: Default::default(),
    };
    (table, group, default_acl(&vpc.id))
}

/// The DHCP options a region's VPCs start with: Amazon's DNS and the region's domain.
pub fn default_dhcp_options(region: &str) -> DhcpOptions {
    let domain = if region == "us-east-1" {
        "ec2.internal".to_string()
    } else {
        format!("{region}.compute.internal")
    };
    DhcpOptions {
        id: new_id("dopt"),
        configurations: vec![
            ("domain-name".into(), vec![domain]),
            (
                "domain-name-servers".into(),
                vec!["AmazonProvidedDNS".into()],
            ),
        ],
        tags: Default::default(),
    }
}

/// Makes the region's default VPC, recording every new id in `touched`.
pub fn make_defaults(r: &mut Region, region: &str, touched: &mut Vec<String>) {
    let dhcp = default_dhcp_options(region);
    let vpc = Vpc {
        id: new_id("vpc"),
        cidr: "172.31.0.0/16".into(),
        cidr_association_id: new_id("vpc-cidr-assoc"),
        is_default: true,
        dhcp_options_id: dhcp.id.clone(),
        instance_tenancy: "default".into(),
        enable_dns_support: true,
        enable_dns_hostnames: true,
        secondary: Vec::new(),
        ipv6: Vec::new(),
        tags: Default::default(),
    };
    let (mut table, group, mut acl) = vpc_companions(&vpc);
    let igw = InternetGateway {
        id: new_id("igw"),
        egress_only: false,
        vpc_id: Some(vpc.id.clone()),
        tags: Default::default(),
    };
    table.routes.push(Route {
        destination: "0.0.0.0/0".into(),
        target: igw.id.clone(),
        origin: "CreateRoute".into(),
    });
    let mut items = vec![
        Resource::DhcpOptions(dhcp),
        Resource::RouteTable(table),
        Resource::SecurityGroup(group),
        Resource::InternetGateway(igw),
    ];
    for (i, (name, id)) in zones(region).into_iter().enumerate() {
        let subnet_id = new_id("subnet");
        acl.associations.push(AclAssociation {
            id: new_id("aclassoc"),
            subnet_id: subnet_id.clone(),
        });
        items.push(Resource::Subnet(Subnet {
            id: subnet_id,
            vpc_id: vpc.id.clone(),
            cidr: format!("172.31.{}.0/20", i * 16),
            availability_zone: name,
            availability_zone_id: id,
            default_for_az: true,
            map_public_ip_on_launch: true,
            used_ips: Vec::new(),
            ipv6: Vec::new(),
            tags: Default::default(),
        }));
    }
    items.push(Resource::NetworkAcl(acl));
    items.push(Resource::Vpc(vpc));
    for item in items {
        let id = super::ops::id_of(&item).to_string();
        touched.push(id.clone());
        r.items.insert(id, item);
    }
}
