//! EC2's typed operations: plain functions over one region's records, which the wire adapter,
//! the CloudFormation providers and other services (through the views in `mod.rs`) call.
//! Each validates everything before it changes anything.

use super::cidr::Block;
use super::errors::{check_id, dependency, invalid_value, not_found};
use super::model::*;
use super::zones::{self, vpc_companions};
use super::{
    Ec2Service, NetworkInterfaceRequest, NetworkInterfaceView, Region, SecurityGroupView,
    SubnetView, VpcView,
};
use cumulo_wire::AwsError;

/// The id a record is kept under.
pub fn id_of(r: &Resource) -> &str {
    match r {
        Resource::Vpc(x) => &x.id,
        Resource::Subnet(x) => &x.id,
        Resource::SecurityGroup(x) => &x.id,
        Resource::RouteTable(x) => &x.id,
        Resource::InternetGateway(x) => &x.id,
        Resource::Address(x) => &x.allocation_id,
        Resource::NatGateway(x) => &x.id,
        Resource::NetworkInterface(x) => &x.id,
        Resource::Instance(x) => &x.id,
        Resource::LaunchTemplate(x) => &x.id,
        Resource::KeyPair(x) => &x.id,
        Resource::NetworkAcl(x) => &x.id,
        Resource::DhcpOptions(x) => &x.id,
        Resource::VpcEndpoint(x) => &x.id,
        Resource::FlowLog(x) => &x.id,
        Resource::PeeringConnection(x) => &x.id,
        Resource::PrefixList(x) => &x.id,
        Resource::Volume(x) => &x.id,
        Resource::EndpointService(x) => &x.id,
    }
}

/// Typed access to one kind of record by id, with AWS's not-found and malformed errors.
macro_rules! kind {
    ($get:ident, $get_mut:ident, $variant:ident, $ty:ty, $prefix:literal) => {
        impl Region {
            pub fn $get(&self, id: &str) -> Result<&$ty, AwsError> {
                check_id(id, $prefix)?;
                match self.items.get(id) {
                    Some(Resource::$variant(x)) => Ok(x),
                    _ => Err(not_found(id)),
                }
            }

            #[allow(dead_code)]
            pub fn $get_mut(&mut self, id: &str) -> Result<&mut $ty, AwsError> {
                check_id(id, $prefix)?;
                match self.items.get_mut(id) {
                    Some(Resource::$variant(x)) => Ok(x),
                    _ => Err(not_found(id)),
                }
            }
        }
    };
}
kind!(vpc, vpc_mut, Vpc, Vpc, "vpc");
kind!(subnet, subnet_mut, Subnet, Subnet, "subnet");
kind!(group, group_mut, SecurityGroup, SecurityGroup, "sg");
kind!(table, table_mut, RouteTable, RouteTable, "rtb");
kind!(
    gateway,
    gateway_mut,
    InternetGateway,
    InternetGateway,
    "igw"
);
kind!(address, address_mut, Address, Address, "eipalloc");
kind!(nat, nat_mut, NatGateway, NatGateway, "nat");
kind!(acl, acl_mut, NetworkAcl, NetworkAcl, "acl");
kind!(dhcp, dhcp_mut, DhcpOptions, DhcpOptions, "dopt");
kind!(endpoint, endpoint_mut, VpcEndpoint, VpcEndpoint, "vpce");
kind!(flow_log, flow_log_mut, FlowLog, FlowLog, "fl");
kind!(
    peering,
    peering_mut,
    PeeringConnection,
    PeeringConnection,
    "pcx"
);
kind!(prefix_list, prefix_list_mut, PrefixList, PrefixList, "pl");
kind!(volume, volume_mut, Volume, Volume, "vol");
kind!(
    endpoint_service,
    endpoint_service_mut,
    EndpointService,
    EndpointService,
    "vpce-svc"
);
kind!(key_pair, key_pair_mut, KeyPair, KeyPair, "key");
kind!(
    interface,
    interface_mut,
    NetworkInterface,
    NetworkInterface,
    "eni"
);

impl Region {
    pub(super) fn of<'a, T: 'a>(
        &'a self,
        pick: impl Fn(&'a Resource) -> Option<&'a T> + 'a,
    ) -> impl Iterator<Item = &'a T> + 'a {
        self.items.values().filter_map(pick)
    }

    pub(super) fn subnets(&self) -> impl Iterator<Item = &Subnet> + '_ {
        self.of(|r| {
            if let Resource::Subnet(x) = r {
                Some(x)
            } else {
                None
            }
        })
    }

    pub(super) fn groups(&self) -> impl Iterator<Item = &SecurityGroup> + '_ {
        self.of(|r| {
            if let Resource::SecurityGroup(x) = r {
                Some(x)
            } else {
                None
            }
        })
    }

    pub(super) fn tables(&self) -> impl Iterator<Item = &RouteTable> + '_ {
        self.of(|r| {
            if let Resource::RouteTable(x) = r {
                Some(x)
            } else {
                None
            }
        })
    }

    pub(super) fn interfaces(&self) -> impl Iterator<Item = &NetworkInterface> + '_ {
        self.of(|r| {
            if let Resource::NetworkInterface(x) = r {
                Some(x)
            } else {
                None
            }
        })
    }

    pub(super) fn insert(&mut self, r: Resource, touched: &mut Vec<String>) {
        let id = id_of(&r).to_string();
        touched.push(id.clone());
        self.items.insert(id, r);
    }

    pub(super) fn remove(&mut self, id: &str, touched: &mut Vec<String>) {
        self.items.remove(id);
        touched.push(id.to_string());
    }

    pub fn default_vpc(&self) -> Option<&Vpc> {
        self.of(|r| {
            if let Resource::Vpc(x) = r {
                Some(x)
            } else {
                None
            }
        })
        .find(|v| v.is_default)
    }

    pub(super) fn main_table_id(&self, vpc_id: &str) -> Option<String> {
        self.tables()
            .find(|t| t.vpc_id == vpc_id && t.is_main())
            .map(|t| t.id.clone())
    }

    pub(super) fn default_group_id(&self, vpc_id: &str) -> Option<String> {
        self.groups()
            .find(|g| g.vpc_id == vpc_id && g.name == "default")
            .map(|g| g.id.clone())
    }

    /// The first free private address of a subnet (AWS keeps the first four and the last).
    pub(super) fn free_ip(&self, subnet: &Subnet) -> Result<String, AwsError> {
        let block =
            Block::parse(&subnet.cidr).ok_or_else(|| AwsError::internal("bad subnet cidr"))?;
        (4..block.size().saturating_sub(1) as u32)
            .map(|n| block.address(n))
            .find(|ip| !subnet.used_ips.contains(ip))
            .ok_or_else(|| {
                AwsError::bad_request(
                    "InsufficientFreeAddressesInSubnet",
                    format!("There are not enough free addresses in subnet '{}' to satisfy the requested number of instances.", subnet.id),
                )
            })
    }
}

/// The rules a new group starts with: the default group allows all traffic from itself; every
/// VPC group allows all egress.
pub fn default_rules(group_id: &str, default_group: bool) -> Vec<Rule> {
    let mut rules = vec![Rule {
        id: new_id("sgr"),
        egress: true,
        protocol: "-1".into(),
        from_port: None,
        to_port: None,
        cidr_ipv4: Some("0.0.0.0/0".into()),
        cidr_ipv6: None,
        referenced_group_id: None,
        prefix_list_id: None,
        description: None,
    }];
    if default_group {
        rules.push(Rule {
            id: new_id("sgr"),
            egress: false,
            protocol: "-1".into(),
            from_port: None,
            to_port: None,
            cidr_ipv4: None,
            cidr_ipv6: None,
            referenced_group_id: Some(group_id.to_string()),
            prefix_list_id: None,
            description: None,
        });
    }
    rules
}

/// A permission as requested: one source or destination each.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleSpec {
    pub protocol: String,
    pub from_port: Option<i64>,
    pub to_port: Option<i64>,
    pub cidr_ipv4: Option<String>,
    pub cidr_ipv6: Option<String>,
    pub group_id: Option<String>,
    pub prefix_list_id: Option<String>,
    pub description: Option<String>,
}

pub(super) fn mac_address() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    let bytes: Vec<String> = (0..5)
        .map(|_| format!("{:02x}", rng.random::<u8>()))
        .collect();
    format!("0e:{}", bytes.join(":"))
}

pub(super) fn now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

impl Ec2Service {
    // ----- VPCs -----

    pub fn create_vpc(
        &self,
        region: &str,
        cidr: &str,
        tenancy: Option<&str>,
        tags: Tags,
    ) -> Result<Vpc, AwsError> {
        let block = Block::parse(cidr)
            .ok_or_else(|| invalid_value(cidr, "cidrBlock", "This is not a valid CIDR block."))?;
        if !(16..=28).contains(&block.prefix) {
            return Err(AwsError::bad_request(
                "InvalidVpc.Range",
                format!("The CIDR '{cidr}' is invalid."),
            ));
        }
        self.change(region, |r, touched| {
            let vpc = Vpc {
                id: new_id("vpc"),
                cidr: cidr.to_string(),
                cidr_association_id: new_id("vpc-cidr-assoc"),
                is_default: false,
                dhcp_options_id: r
                    .default_vpc()
                    .map(|v| v.dhcp_options_id.clone())
                    .unwrap_or_else(|| new_id("dopt")),
                instance_tenancy: tenancy.unwrap_or("default").to_string(),
                enable_dns_support: true,
                enable_dns_hostnames: false,
                secondary: Vec::new(),
                ipv6: Vec::new(),
                tags,
            };
            let (table, group, acl) = vpc_companions(&vpc);
            r.insert(Resource::NetworkAcl(acl), touched);
            r.insert(Resource::RouteTable(table), touched);
            r.insert(Resource::SecurityGroup(group), touched);
            r.insert(Resource::Vpc(vpc.clone()), touched);
            Ok(vpc)
        })
    }

    /// Refused while subnets, gateways, non-default groups or route tables other than the main
    /// one remain; the main table and default group go with it.
    pub fn delete_vpc(&self, region: &str, vpc_id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            r.vpc(vpc_id)?;
            let busy = r.items.values().any(|res| match res {
                Resource::Subnet(s) => s.vpc_id == vpc_id,
                Resource::InternetGateway(g) => g.vpc_id.as_deref() == Some(vpc_id),
                Resource::SecurityGroup(g) => g.vpc_id == vpc_id && g.name != "default",
                Resource::RouteTable(t) => t.vpc_id == vpc_id && !t.is_main(),
                Resource::NetworkInterface(n) => n.vpc_id == vpc_id,
                Resource::NetworkAcl(a) => a.vpc_id == vpc_id && !a.is_default,
                Resource::VpcEndpoint(e) => e.vpc_id == vpc_id && e.state != "deleted",
                _ => false,
            });
            if busy {
                return Err(dependency("vpc", vpc_id));
            }
            // Its flow logs go with it, as on AWS.
            let flow_logs: Vec<String> = r
                .items
                .values()
                .filter_map(|x| match x {
                    Resource::FlowLog(f) if f.resource_id == vpc_id => Some(f.id.clone()),
                    _ => None,
                })
                .collect();
            let companions: Vec<String> = r
                .main_table_id(vpc_id)
                .into_iter()
                .chain(r.default_group_id(vpc_id))
                .chain(r.default_acl_id(vpc_id))
                .chain(flow_logs)
                .collect();
            for id in companions {
                r.remove(&id, touched);
            }
            r.remove(vpc_id, touched);
            Ok(())
        })
    }

    pub fn modify_vpc_attribute(
        &self,
        region: &str,
        vpc_id: &str,
        dns_support: Option<bool>,
        dns_hostnames: Option<bool>,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let v = r.vpc_mut(vpc_id)?;
            if let Some(b) = dns_support {
                v.enable_dns_support = b;
            }
            if let Some(b) = dns_hostnames {
                v.enable_dns_hostnames = b;
            }
            touched.push(vpc_id.to_string());
            Ok(())
        })
    }

    // ----- subnets -----

    pub fn create_subnet(
        &self,
        region: &str,
        vpc_id: &str,
        cidr: &str,
        zone: Option<&str>,
        zone_id: Option<&str>,
        tags: Tags,
    ) -> Result<Subnet, AwsError> {
        let block = Block::parse(cidr)
            .ok_or_else(|| invalid_value(cidr, "cidrBlock", "This is not a valid CIDR block."))?;
        let (zone, zone_id) = match (zone, zone_id) {
            (Some(z), _) => {
                let id = zones::zone_id(region, z).ok_or_else(|| {
                    let names: Vec<String> = zones::zones(region).into_iter().map(|(n, _)| n).collect();
                    invalid_value(z, "availabilityZone", &format!("Subnets can currently only be created in the following availability zones: {}.", names.join(", ")))
                })?;
                (z.to_string(), id)
            }
            (None, Some(id)) => {
                let name = zones::zone_name(region, id).ok_or_else(|| {
                    invalid_value(id, "availabilityZoneId", "No such availability zone id.")
                })?;
                (name, id.to_string())
            }
            (None, None) => zones::zones(region)
                .into_iter()
                .next()
                .ok_or_else(|| AwsError::internal("no zones"))?,
        };
        self.change(region, |r, touched| {
            let vpc = r.vpc(vpc_id)?;
            let inside = std::iter::once(&vpc.cidr)
                .chain(vpc.secondary.iter().map(|c| &c.cidr))
                .filter_map(|c| Block::parse(c))
                .any(|b| b.contains_block(&block));
            if !(16..=28).contains(&block.prefix) || !inside {
                return Err(AwsError::bad_request(
                    "InvalidSubnet.Range",
                    format!("The CIDR '{cidr}' is invalid."),
                ));
            }
            let conflict = r.subnets().any(|s| {
                s.vpc_id == vpc_id && Block::parse(&s.cidr).is_some_and(|b| b.overlaps(&block))
            });
            if conflict {
                return Err(AwsError::bad_request(
                    "InvalidSubnet.Conflict",
                    format!("The CIDR '{cidr}' conflicts with another subnet"),
                ));
            }
            let subnet = Subnet {
                id: new_id("subnet"),
                vpc_id: vpc_id.to_string(),
                cidr: cidr.to_string(),
                availability_zone: zone,
                availability_zone_id: zone_id,
                default_for_az: false,
                map_public_ip_on_launch: false,
                used_ips: Vec::new(),
                ipv6: Vec::new(),
                tags,
            };
            r.join_default_acl(&subnet.id, vpc_id, touched);
            r.insert(Resource::Subnet(subnet.clone()), touched);
            Ok(subnet)
        })
    }

    pub fn delete_subnet(&self, region: &str, subnet_id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            r.subnet(subnet_id)?;
            if r.interfaces().any(|n| n.subnet_id == subnet_id) {
                return Err(dependency("subnet", subnet_id));
            }
            // Its route table association goes with it.
            let tables: Vec<String> = r
                .tables()
                .filter(|t| {
                    t.associations
                        .iter()
                        .any(|a| a.subnet_id.as_deref() == Some(subnet_id))
                })
                .map(|t| t.id.clone())
                .collect();
            for t in tables {
                r.table_mut(&t)?
                    .associations
                    .retain(|a| a.subnet_id.as_deref() != Some(subnet_id));
                touched.push(t);
            }
            r.leave_acl(subnet_id, touched);
            r.remove(subnet_id, touched);
            Ok(())
        })
    }

    pub fn modify_subnet_attribute(
        &self,
        region: &str,
        subnet_id: &str,
        map_public_ip: Option<bool>,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let s = r.subnet_mut(subnet_id)?;
            if let Some(b) = map_public_ip {
                s.map_public_ip_on_launch = b;
            }
            touched.push(subnet_id.to_string());
            Ok(())
        })
    }

    // ----- security groups -----

    pub fn create_security_group(
        &self,
        region: &str,
        name: &str,
        description: &str,
        vpc_id: Option<&str>,
        tags: Tags,
    ) -> Result<SecurityGroup, AwsError> {
        if name.is_empty() {
            return Err(super::errors::missing("GroupName"));
        }
        if description.is_empty() {
            return Err(super::errors::missing("GroupDescription"));
        }
        if name.starts_with("sg-") {
            return Err(invalid_value(
                name,
                "groupName",
                "Group names may not be in the format sg-*.",
            ));
        }
        self.change(region, |r, touched| {
            let vpc_id = match vpc_id {
                Some(v) => r.vpc(v)?.id.clone(),
                None => r.default_vpc().map(|v| v.id.clone()).ok_or_else(|| {
                    AwsError::bad_request("VPCIdNotSpecified", "No default VPC for this user")
                })?,
            };
            if r.groups().any(|g| g.vpc_id == vpc_id && g.name == name) {
                return Err(AwsError::bad_request(
                    "InvalidGroup.Duplicate",
                    format!("The security group '{name}' already exists for VPC '{vpc_id}'"),
                ));
            }
            let id = new_id("sg");
            let group = SecurityGroup {
                rules: default_rules(&id, false),
                id,
                name: name.to_string(),
                description: description.to_string(),
                vpc_id,
                tags,
            };
            r.insert(Resource::SecurityGroup(group.clone()), touched);
            Ok(group)
        })
    }

    pub fn delete_security_group(&self, region: &str, group_id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let g = r.group(group_id)?;
            if g.name == "default" {
                return Err(AwsError::bad_request("CannotDelete", format!("the specified group: \"{group_id}\" name: \"default\" cannot be deleted by a user")));
            }
            let referenced = r.groups().any(|o| o.id != group_id && o.rules.iter().any(|rule| rule.referenced_group_id.as_deref() == Some(group_id)));
            let used = r.interfaces().any(|n| n.groups.iter().any(|g| g == group_id));
            if referenced || used {
                return Err(AwsError::bad_request("DependencyViolation", format!("resource {group_id} has a dependent object")));
            }
            r.remove(group_id, touched);
            Ok(())
        })
    }

    /// Adds rules (ingress or egress); a rule the group already has is refused whole.
    pub fn authorize(
        &self,
        region: &str,
        group_id: &str,
        egress: bool,
        specs: Vec<RuleSpec>,
    ) -> Result<Vec<Rule>, AwsError> {
        self.change(region, |r, touched| {
            let mut new_rules = Vec::new();
            for spec in specs {
                let rule = to_rule(r, spec, egress)?;
                new_rules.push(rule);
            }
            let g = r.group_mut(group_id)?;
            for rule in &new_rules {
                if g.rules.iter().any(|x| x.same_permission(rule)) {
                    let peer = rule
                        .cidr_ipv4
                        .clone()
                        .or(rule.referenced_group_id.clone())
                        .or(rule.cidr_ipv6.clone())
                        .or(rule.prefix_list_id.clone())
                        .unwrap_or_default();
                    return Err(AwsError::bad_request(
                        "InvalidPermission.Duplicate",
                        format!(
                            "the specified rule \"peer: {peer}, {}, ALLOW\" already exists",
                            ports_text(rule)
                        ),
                    ));
                }
            }
            g.rules.extend(new_rules.iter().cloned());
            touched.push(group_id.to_string());
            Ok(new_rules)
        })
    }

    /// Removes rules given as permissions or by `sgr-` id; one that does not exist is refused.
    pub fn revoke(
        &self,
        region: &str,
        group_id: &str,
        egress: bool,
        specs: Vec<RuleSpec>,
        rule_ids: &[String],
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let mut wanted: Vec<Rule> = Vec::new();
            for spec in specs {
                wanted.push(to_rule(r, spec, egress)?);
            }
            let g = r.group_mut(group_id)?;
            for rule in &wanted {
                if !g.rules.iter().any(|x| x.same_permission(rule)) {
                    return Err(AwsError::bad_request(
                        "InvalidPermission.NotFound",
                        "The specified rule does not exist in this security group.",
                    ));
                }
            }
            for id in rule_ids {
                if !g.rules.iter().any(|x| &x.id == id && x.egress == egress) {
                    return Err(not_found(id));
                }
            }
            g.rules.retain(|x| {
                !wanted.iter().any(|w| w.same_permission(x)) && !rule_ids.contains(&x.id)
            });
            touched.push(group_id.to_string());
            Ok(())
        })
    }

    /// UpdateSecurityGroupRuleDescriptionsIngress/Egress: each permission names a rule the
    /// group has (its description aside) and sets that rule's description; one the group lacks
    /// is refused whole, changing nothing.
    pub fn update_rule_descriptions(
        &self,
        region: &str,
        group_id: &str,
        egress: bool,
        specs: Vec<RuleSpec>,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let mut wanted: Vec<Rule> = Vec::new();
            for spec in specs {
                wanted.push(to_rule(r, spec, egress)?);
            }
            let g = r.group_mut(group_id)?;
            let mut found = Vec::new();
            for rule in &wanted {
                let at = g
                    .rules
                    .iter()
                    .position(|x| x.same_permission(rule))
                    .ok_or_else(|| {
                        AwsError::bad_request(
                            "InvalidPermission.NotFound",
                            "The specified rule does not exist in this security group.",
                        )
                    })?;
                found.push((at, rule.description.clone()));
            }
            for (at, description) in found {
                g.rules[at].description = description;
            }
            touched.push(group_id.to_string());
            Ok(())
        })
    }

    pub fn set_rule_description(
        &self,
        region: &str,
        group_id: &str,
        rule_id: &str,
        description: Option<String>,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let g = r.group_mut(group_id)?;
            let rule = g
                .rules
                .iter_mut()
                .find(|x| x.id == rule_id)
                .ok_or_else(|| not_found(rule_id))?;
            rule.description = description;
            touched.push(group_id.to_string());
            Ok(())
        })
    }

    // ----- route tables -----

    pub fn create_route_table(
        &self,
        region: &str,
        vpc_id: &str,
        tags: Tags,
    ) -> Result<RouteTable, AwsError> {
        self.change(region, |r, touched| {
            let vpc = r.vpc(vpc_id)?;
            let table = RouteTable {
                id: new_id("rtb"),
                vpc_id: vpc_id.to_string(),
                routes: vec![Route {
                    destination: vpc.cidr.clone(),
                    target: "local".into(),
                    origin: "CreateRouteTable".into(),
                }],
                associations: Vec::new(),
                tags,
            };
            r.insert(Resource::RouteTable(table.clone()), touched);
            Ok(table)
        })
    }

    pub fn delete_route_table(&self, region: &str, table_id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            if !r.table(table_id)?.associations.is_empty() {
                return Err(dependency("routeTable", table_id));
            }
            r.remove(table_id, touched);
            Ok(())
        })
    }

    /// Adds a route (`replace`: changes an existing one's target).
    pub fn put_route(
        &self,
        region: &str,
        table_id: &str,
        destination: &str,
        target: &str,
        replace: bool,
    ) -> Result<(), AwsError> {
        if Block::parse(destination).is_none()
            && !destination.starts_with("pl-")
            && !destination.contains(':')
        {
            return Err(invalid_value(
                destination,
                "destinationCidrBlock",
                "This is not a valid CIDR block.",
            ));
        }
        self.change(region, |r, touched| {
            let vpc_id = r.table(table_id)?.vpc_id.clone();
            check_target(r, target, &vpc_id)?;
            if destination.starts_with("pl-") {
                super::endpoints::known_list(r, region, destination)?;
            }
            let t = r.table_mut(table_id)?;
            let existing = t.routes.iter_mut().find(|x| x.destination == destination);
            match existing {
                Some(route) if replace && route.target != "local" => {
                    route.target = target.to_string();
                    route.origin = "CreateRoute".into();
                }
                Some(_) if replace => {
                    return Err(invalid_value(destination, "destinationCidrBlock", "The local route cannot be replaced."));
                }
                Some(_) => {
                    return Err(AwsError::bad_request("RouteAlreadyExists", format!("The route identified by {destination} already exists.")));
                }
                None if replace => {
                    return Err(AwsError::bad_request("InvalidRoute.NotFound", format!("no route with destination-cidr-block {destination} in route table {table_id}")));
                }
                None => t.routes.push(Route { destination: destination.to_string(), target: target.to_string(), origin: "CreateRoute".into() }),
            }
            touched.push(table_id.to_string());
            Ok(())
        })
    }

    pub fn delete_route(
        &self,
        region: &str,
        table_id: &str,
        destination: &str,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let t = r.table_mut(table_id)?;
            let before = t.routes.len();
            t.routes.retain(|x| x.destination != destination || x.target == "local");
            if t.routes.len() == before {
                return Err(AwsError::bad_request("InvalidRoute.NotFound", format!("no route with destination-cidr-block {destination} in route table {table_id}")));
            }
            touched.push(table_id.to_string());
            Ok(())
        })
    }

    /// Associates a subnet (or a gateway) with a table; answers the association id.
    pub fn associate_route_table(
        &self,
        region: &str,
        table_id: &str,
        subnet_id: Option<&str>,
        gateway_id: Option<&str>,
    ) -> Result<String, AwsError> {
        self.change(region, |r, touched| {
            let vpc_id = r.table(table_id)?.vpc_id.clone();
            if let Some(s) = subnet_id {
                if r.subnet(s)?.vpc_id != vpc_id {
                    return Err(invalid_value(s, "subnetId", "The subnet and the route table belong to different networks."));
                }
                if let Some(t) = r.tables().find(|t| t.associations.iter().any(|a| a.subnet_id.as_deref() == Some(s))) {
                    return Err(AwsError::bad_request("Resource.AlreadyAssociated", format!("the specified association for route table {} conflicts with an existing association", t.id)));
                }
            } else if let Some(g) = gateway_id {
                check_target(r, g, &vpc_id)?;
            } else {
                return Err(super::errors::missing("subnetId"));
            }
            let id = new_id("rtbassoc");
            r.table_mut(table_id)?.associations.push(Association {
                id: id.clone(),
                subnet_id: subnet_id.map(str::to_string),
                gateway_id: gateway_id.map(str::to_string),
            });
            touched.push(table_id.to_string());
            Ok(id)
        })
    }

    fn table_of_association(r: &Region, association_id: &str) -> Result<String, AwsError> {
        r.tables()
            .find(|t| t.associations.iter().any(|a| a.id == association_id))
            .map(|t| t.id.clone())
            .ok_or_else(|| not_found(association_id))
    }

    pub fn disassociate_route_table(
        &self,
        region: &str,
        association_id: &str,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let table_id = Self::table_of_association(r, association_id)?;
            let t = r.table_mut(&table_id)?;
            if t.associations
                .iter()
                .any(|a| a.id == association_id && a.subnet_id.is_none() && a.gateway_id.is_none())
            {
                return Err(invalid_value(
                    association_id,
                    "associationId",
                    "Cannot disassociate the main route table association",
                ));
            }
            t.associations.retain(|a| a.id != association_id);
            touched.push(table_id);
            Ok(())
        })
    }

    /// Moves an association (the main one too) to another table; answers the new id.
    pub fn replace_route_table_association(
        &self,
        region: &str,
        association_id: &str,
        table_id: &str,
    ) -> Result<String, AwsError> {
        self.change(region, |r, touched| {
            let old_table = Self::table_of_association(r, association_id)?;
            if r.table(table_id)?.vpc_id != r.table(&old_table)?.vpc_id {
                return Err(invalid_value(
                    table_id,
                    "routeTableId",
                    "The route table belongs to a different network.",
                ));
            }
            let t = r.table_mut(&old_table)?;
            let Some(pos) = t.associations.iter().position(|a| a.id == association_id) else {
                return Err(not_found(association_id));
            };
            let mut assoc = t.associations.remove(pos);
            assoc.id = new_id("rtbassoc");
            let id = assoc.id.clone();
            r.table_mut(table_id)?.associations.push(assoc);
            touched.push(old_table);
            touched.push(table_id.to_string());
            Ok(id)
        })
    }

    // ----- internet gateways -----

    pub fn create_internet_gateway(
        &self,
        region: &str,
        tags: Tags,
    ) -> Result<InternetGateway, AwsError> {
        self.change(region, |r, touched| {
            let g = InternetGateway {
                id: new_id("igw"),
                egress_only: false,
                vpc_id: None,
                tags,
            };
            r.insert(Resource::InternetGateway(g.clone()), touched);
            Ok(g)
        })
    }

    pub fn delete_internet_gateway(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            if r.gateway(id)?.vpc_id.is_some() {
                return Err(dependency("internetGateway", id));
            }
            r.remove(id, touched);
            Ok(())
        })
    }

    pub fn attach_internet_gateway(
        &self,
        region: &str,
        id: &str,
        vpc_id: &str,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            r.vpc(vpc_id)?;
            if let Some(v) = &r.gateway(id)?.vpc_id {
                return Err(AwsError::bad_request("Resource.AlreadyAssociated", format!("resource {id} is already attached to network {v}")));
            }
            let taken = r.items.values().any(|x| matches!(x, Resource::InternetGateway(g) if !g.egress_only && g.vpc_id.as_deref() == Some(vpc_id)));
            if taken {
                return Err(AwsError::bad_request("InvalidParameterValue", format!("Network {vpc_id} already has an internet gateway attached")));
            }
            r.gateway_mut(id)?.vpc_id = Some(vpc_id.to_string());
            touched.push(id.to_string());
            Ok(())
        })
    }

    pub fn detach_internet_gateway(
        &self,
        region: &str,
        id: &str,
        vpc_id: &str,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            r.vpc(vpc_id)?;
            if r.gateway(id)?.vpc_id.as_deref() != Some(vpc_id) {
                return Err(AwsError::bad_request(
                    "Gateway.NotAttached",
                    format!("resource {id} is not attached to network {vpc_id}"),
                ));
            }
            r.gateway_mut(id)?.vpc_id = None;
            touched.push(id.to_string());
            Ok(())
        })
    }

    // ----- elastic IPs and NAT gateways -----

    pub fn allocate_address(&self, region: &str, tags: Tags) -> Result<Address, AwsError> {
        use rand::Rng;
        self.change(region, |r, touched| {
            let mut rng = rand::rng();
            let a = Address {
                allocation_id: new_id("eipalloc"),
                public_ip: format!(
                    "54.{}.{}.{}",
                    rng.random_range(0..=255),
                    rng.random_range(0..=255),
                    rng.random_range(1..=254)
                ),
                association_id: None,
                network_interface_id: None,
                private_ip: None,
                instance_id: None,
                tags,
            };
            r.insert(Resource::Address(a.clone()), touched);
            Ok(a)
        })
    }

    pub fn release_address(&self, region: &str, allocation_id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            if r.address(allocation_id)?.association_id.is_some() {
                return Err(AwsError::bad_request(
                    "InvalidIPAddress.InUse",
                    "Address is in use",
                ));
            }
            r.remove(allocation_id, touched);
            Ok(())
        })
    }

    pub fn create_nat_gateway(
        &self,
        region: &str,
        subnet_id: &str,
        allocation_id: Option<&str>,
        connectivity: Option<&str>,
        tags: Tags,
    ) -> Result<NatGateway, AwsError> {
        let connectivity = connectivity.unwrap_or("public").to_string();
        self.change(region, |r, touched| {
            let subnet = r.subnet(subnet_id)?.clone();
            let mut nat = NatGateway {
                id: new_id("nat"),
                subnet_id: subnet_id.to_string(),
                vpc_id: subnet.vpc_id.clone(),
                connectivity: connectivity.clone(),
                allocation_id: allocation_id.map(str::to_string),
                public_ip: None,
                network_interface_id: String::new(),
                private_ip: String::new(),
                state: "pending".into(),
                created: now(),
                tags,
                failure: None,
            };
            match (allocation_id, connectivity.as_str()) {
                (Some(a), _) => {
                    let addr = r.address(a)?;
                    if addr.association_id.is_some() {
                        // AWS accepts the create; the gateway then fails (DescribeNatGateways'
                        // FailureCode and FailureMessage), holding nothing.
                        nat.failure = Some((
                            "Resource.AlreadyAssociated".into(),
                            format!("Elastic IP address [{a}] is already associated"),
                        ));
                        r.insert(Resource::NatGateway(nat.clone()), touched);
                        return Ok(nat);
                    }
                    nat.public_ip = Some(addr.public_ip.clone());
                }
                (None, "public") => return Err(super::errors::missing("AllocationId")),
                (None, _) => {}
            }
            let eni = new_interface(
                r,
                &subnet,
                Vec::new(),
                format!("Interface for NAT Gateway {}", nat.id),
                "nat_gateway",
                Some("amazon-vpc".into()),
            )?;
            nat.network_interface_id = eni.id.clone();
            nat.private_ip = eni.private_ip.clone();
            claim_ip(r, subnet_id, &eni.private_ip, touched)?;
            if let Some(a) = allocation_id {
                let addr = r.address_mut(a)?;
                addr.association_id = Some(new_id("eipassoc"));
                addr.network_interface_id = Some(eni.id.clone());
                addr.private_ip = Some(eni.private_ip.clone());
                touched.push(a.to_string());
            }
            r.insert(Resource::NetworkInterface(eni), touched);
            r.insert(Resource::NatGateway(nat.clone()), touched);
            Ok(nat)
        })
    }

    /// Deleting frees its interface and address at once (AWS takes a while; the record stays
    /// `deleted`).
    pub fn delete_nat_gateway(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let nat = r.nat(id)?.clone();
            if !nat.holds_address() {
                if nat.state != "deleted" {
                    r.nat_mut(id)?.state = "deleted".into();
                    touched.push(id.to_string());
                }
                return Ok(());
            }
            release_interface(r, &nat.network_interface_id, touched)?;
            if let Some(a) = &nat.allocation_id
                && let Ok(addr) = r.address_mut(a)
            {
                addr.association_id = None;
                addr.network_interface_id = None;
                addr.private_ip = None;
                touched.push(a.clone());
            }
            r.nat_mut(id)?.state = "deleted".into();
            touched.push(id.to_string());
            Ok(())
        })
    }

    /// NAT gateways created earlier are available (or failed) from their first Describe on
    /// (the `nat_gateway_available` waiter's first poll).
    pub fn settle_nat_gateways(&self, region: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            for res in r.items.values_mut() {
                if let Resource::NatGateway(n) = res
                    && n.state == "pending"
                {
                    n.state = if n.failure.is_some() {
                        "failed"
                    } else {
                        "available"
                    }
                    .into();
                    touched.push(n.id.clone());
                }
            }
            Ok(())
        })
    }

    // ----- network interfaces -----

    /// A requester-managed interface (a task's, a load balancer's, a mount target's).
    pub fn create_network_interface(
        &self,
        region: &str,
        req: NetworkInterfaceRequest,
    ) -> Result<NetworkInterfaceView, AwsError> {
        let eni = self.create_interface(region, req, Default::default())?;
        Ok(interface_view(&eni))
    }

    // ----- tags -----

    pub fn create_tags(&self, region: &str, ids: &[String], tags: &Tags) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            for id in ids {
                if !r.items.contains_key(id) {
                    return Err(not_found(id));
                }
            }
            for id in ids {
                if let Some(res) = r.items.get_mut(id) {
                    res.tags_mut()
                        .extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
                    touched.push(id.clone());
                }
            }
            Ok(())
        })
    }

    /// Removes tags by key; a key given with a value is removed only when the value matches.
    pub fn delete_tags(
        &self,
        region: &str,
        ids: &[String],
        tags: &[(String, Option<String>)],
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            for id in ids {
                if !r.items.contains_key(id) {
                    return Err(not_found(id));
                }
            }
            for id in ids {
                if let Some(res) = r.items.get_mut(id) {
                    let t = res.tags_mut();
                    if tags.is_empty() {
                        t.clear();
                    }
                    for (k, v) in tags {
                        if v.as_ref().is_none_or(|v| t.get(k) == Some(v)) {
                            t.remove(k);
                        }
                    }
                    touched.push(id.clone());
                }
            }
            Ok(())
        })
    }

    // ----- what other services read -----

    pub fn subnet(&self, region: &str, subnet_id: &str) -> Result<SubnetView, AwsError> {
        self.read(region, |r| {
            let s = r.subnet(subnet_id)?;
            Ok(SubnetView {
                subnet_id: s.id.clone(),
                vpc_id: s.vpc_id.clone(),
                availability_zone: s.availability_zone.clone(),
                availability_zone_id: s.availability_zone_id.clone(),
                cidr_block: s.cidr.clone(),
            })
        })
    }

    pub fn vpc(&self, region: &str, vpc_id: &str) -> Result<VpcView, AwsError> {
        self.read(region, |r| Ok(vpc_view(r.vpc(vpc_id)?)))
    }

    pub fn default_vpc(&self, region: &str) -> Result<VpcView, AwsError> {
        self.read(region, |r| {
            r.default_vpc().map(vpc_view).ok_or_else(|| {
                AwsError::bad_request("VPCIdNotSpecified", "No default VPC for this user")
            })
        })
    }

    pub fn security_group(
        &self,
        region: &str,
        group_id: &str,
    ) -> Result<SecurityGroupView, AwsError> {
        self.read(region, |r| {
            let g = r.group(group_id)?;
            Ok(SecurityGroupView {
                group_id: g.id.clone(),
                group_name: g.name.clone(),
                vpc_id: g.vpc_id.clone(),
            })
        })
    }

    /// The region's security groups for the console, in DescribeSecurityGroups' member names,
    /// each with its rules as DescribeSecurityGroupRules gives them (`SecurityGroupRules`:
    /// the `sgr-` ids, a referenced group as `ReferencedGroupInfo`, a prefix list as
    /// `PrefixListId`; ports `-1` where the protocol has none), sorted by group id.
    pub fn security_groups(&self, region: &str) -> Result<serde_json::Value, AwsError> {
        use serde_json::json;
        let account = self.account_id().to_string();
        self.read(region, |r| {
            let mut groups: Vec<&SecurityGroup> = r
                .items
                .values()
                .filter_map(|i| match i {
                    Resource::SecurityGroup(g) => Some(g),
                    _ => None,
                })
                .collect();
            groups.sort_by(|a, b| a.id.cmp(&b.id));
            let groups: Vec<_> = groups
                .into_iter()
                .map(|g| {
                    let rules: Vec<_> = g
                        .rules
                        .iter()
                        .map(|rule| {
                            json!({
                                "SecurityGroupRuleId": rule.id,
                                "GroupId": g.id,
                                "GroupOwnerId": account,
                                "IsEgress": rule.egress,
                                "IpProtocol": rule.protocol,
                                "FromPort": rule.from_port.unwrap_or(-1),
                                "ToPort": rule.to_port.unwrap_or(-1),
                                "CidrIpv4": rule.cidr_ipv4,
                                "CidrIpv6": rule.cidr_ipv6,
                                "PrefixListId": rule.prefix_list_id,
                                "ReferencedGroupInfo": rule.referenced_group_id.as_ref().map(|id| json!({"GroupId": id, "UserId": account})),
                                "Description": rule.description,
                            })
                        })
                        .collect();
                    json!({
                        "GroupId": g.id,
                        "GroupName": g.name,
                        "Description": g.description,
                        "VpcId": g.vpc_id,
                        "OwnerId": account,
                        "Tags": g.tags.iter().map(|(k, v)| json!({"Key": k, "Value": v})).collect::<Vec<_>>(),
                        "SecurityGroupRules": rules,
                    })
                })
                .collect();
            Ok(json!({ "SecurityGroups": groups }))
        })
    }

    /// A snapshot of the region's records.
    pub(crate) fn records(&self, region: &str) -> Result<Vec<Resource>, AwsError> {
        self.read(region, |r| Ok(r.items.values().cloned().collect()))
    }

    /// The region's network for the console's VPC map: each VPC with its subnets and route
    /// tables, in the Describe operations' member names (a route's target, which AWS spreads
    /// over GatewayId/NatGatewayId/..., is one `Target`).
    pub fn network_map(&self, region: &str) -> Result<serde_json::Value, AwsError> {
        use serde_json::json;
        let tags = |t: &Tags| -> Vec<serde_json::Value> {
            t.iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect()
        };
        self.read(region, |r| {
            let mut vpcs = Vec::new();
            for item in r.items.values() {
                let Resource::Vpc(v) = item else { continue };
                let subnets: Vec<_> = r
                    .items
                    .values()
                    .filter_map(|i| match i {
                        Resource::Subnet(s) if s.vpc_id == v.id => Some(json!({
                            "SubnetId": s.id,
                            "CidrBlock": s.cidr,
                            "AvailabilityZone": s.availability_zone,
                            "DefaultForAz": s.default_for_az,
                            "MapPublicIpOnLaunch": s.map_public_ip_on_launch,
                            "Tags": tags(&s.tags),
                        })),
                        _ => None,
                    })
                    .collect();
                let tables: Vec<_> = r
                    .items
                    .values()
                    .filter_map(|i| match i {
                        Resource::RouteTable(t) if t.vpc_id == v.id => Some(json!({
                            "RouteTableId": t.id,
                            "Main": t.is_main(),
                            "Routes": t.routes.iter().map(|rt| {
                                let destination = if rt.destination.starts_with("pl-") {
                                    "DestinationPrefixListId"
                                } else if rt.destination.contains(':') {
                                    "DestinationIpv6CidrBlock"
                                } else {
                                    "DestinationCidrBlock"
                                };
                                json!({destination: rt.destination, "Target": rt.target, "Origin": rt.origin})
                            }).collect::<Vec<_>>(),
                            "Associations": t.associations.iter().map(|a| json!({
                                "RouteTableAssociationId": a.id,
                                "SubnetId": a.subnet_id,
                                "GatewayId": a.gateway_id,
                                "Main": a.subnet_id.is_none() && a.gateway_id.is_none(),
                            })).collect::<Vec<_>>(),
                            "Tags": tags(&t.tags),
                        })),
                        _ => None,
                    })
                    .collect();
                vpcs.push(json!({
                    "VpcId": v.id,
                    "CidrBlock": v.cidr,
                    "IsDefault": v.is_default,
                    "Tags": tags(&v.tags),
                    "Subnets": subnets,
                    "RouteTables": tables,
                }));
            }
            Ok(json!({ "Vpcs": vpcs }))
        })
    }
}

fn vpc_view(v: &Vpc) -> VpcView {
    VpcView {
        vpc_id: v.id.clone(),
        cidr_block: v.cidr.clone(),
        is_default: v.is_default,
    }
}

fn interface_view(n: &NetworkInterface) -> NetworkInterfaceView {
    NetworkInterfaceView {
        network_interface_id: n.id.clone(),
        private_ip_address: n.private_ip.clone(),
        subnet_id: n.subnet_id.clone(),
        vpc_id: n.vpc_id.clone(),
        availability_zone: n.availability_zone.clone(),
        mac_address: n.mac_address.clone(),
    }
}

pub(super) fn new_interface(
    r: &Region,
    subnet: &Subnet,
    groups: Vec<String>,
    description: String,
    interface_type: &str,
    requester_id: Option<String>,
) -> Result<NetworkInterface, AwsError> {
    Ok(NetworkInterface {
        id: new_id("eni"),
        subnet_id: subnet.id.clone(),
        vpc_id: subnet.vpc_id.clone(),
        availability_zone: subnet.availability_zone.clone(),
        private_ip: r.free_ip(subnet)?,
        mac_address: mac_address(),
        groups,
        description,
        interface_type: interface_type.to_string(),
        requester_id,
        attachment: None,
        secondary_ips: Vec::new(),
        source_dest_check: true,
        tags: Default::default(),
    })
}

pub(super) fn claim_ip(
    r: &mut Region,
    subnet_id: &str,
    ip: &str,
    touched: &mut Vec<String>,
) -> Result<(), AwsError> {
    r.subnet_mut(subnet_id)?.used_ips.push(ip.to_string());
    touched.push(subnet_id.to_string());
    Ok(())
}

pub(super) fn release_interface(
    r: &mut Region,
    eni_id: &str,
    touched: &mut Vec<String>,
) -> Result<(), AwsError> {
    let eni = r.interface(eni_id)?.clone();
    if let Ok(s) = r.subnet_mut(&eni.subnet_id) {
        s.used_ips
            .retain(|ip| ip != &eni.private_ip && !eni.secondary_ips.contains(ip));
        touched.push(eni.subnet_id.clone());
    }
    r.disassociate_interface(eni_id, touched);
    r.remove(eni_id, touched);
    Ok(())
}

/// A route's or association's target must exist (in the VPC, for a gateway).
pub(super) fn check_target(r: &Region, target: &str, vpc_id: &str) -> Result<(), AwsError> {
    match target.split('-').next().unwrap_or("") {
        "igw" => {
            let g = r.gateway(target)?;
            if g.vpc_id.as_deref() != Some(vpc_id) {
                return Err(AwsError::bad_request(
                    "InvalidParameterValue",
                    format!(
                        "route table and network gateway {target} belong to different networks"
                    ),
                ));
            }
        }
        "nat" => {
            r.nat(target)?;
        }
        "eni" => {
            r.interface(target)?;
        }
        "pcx" => {
            r.peering(target)?;
        }
        "vpce" => {
            r.endpoint(target)?;
        }
        "eigw" => match r.items.get(target) {
            Some(Resource::InternetGateway(g)) if g.egress_only => {}
            _ => return Err(not_found(target)),
        },
        // Transit gateways and virtual private gateways are not emulated: their ids are kept
        // as given.
        "tgw" | "vgw" | "local" => {}
        _ => {
            return Err(invalid_value(
                target,
                "gatewayId",
                "The target of a route must be a gateway, NAT gateway, interface, endpoint or peering connection.",
            ));
        }
    }
    Ok(())
}

fn to_rule(r: &Region, spec: RuleSpec, egress: bool) -> Result<Rule, AwsError> {
    let protocol = match spec.protocol.to_ascii_lowercase().as_str() {
        "all" | "-1" => "-1".to_string(),
        "tcp" | "6" => "tcp".to_string(),
        "udp" | "17" => "udp".to_string(),
        "icmp" | "1" => "icmp".to_string(),
        "icmpv6" | "58" => "icmpv6".to_string(),
        p if p.parse::<u8>().is_ok() => p.to_string(),
        p => {
            return Err(AwsError::bad_request(
                "InvalidParameterValue",
                format!("Invalid value '{p}' for IP protocol. Unknown protocol."),
            ));
        }
    };
    let (from, to) = if protocol == "-1" {
        (None, None)
    } else {
        (spec.from_port, spec.to_port)
    };
    if matches!(protocol.as_str(), "tcp" | "udp") {
        match (from, to) {
            (Some(f), Some(t))
                if (0..=65535).contains(&f) && (0..=65535).contains(&t) && f <= t => {}
            (Some(f), Some(t)) => {
                return Err(AwsError::bad_request(
                    "InvalidParameterValue",
                    format!("Invalid TCP/UDP port range {f}-{t}"),
                ));
            }
            _ => {
                return Err(AwsError::bad_request(
                    "InvalidParameterValue",
                    "Invalid value 'Must specify both from and to ports with TCP/UDP.' for portRange.",
                ));
            }
        }
    }
    if let Some(c) = &spec.cidr_ipv4
        && Block::parse(c).is_none()
    {
        return Err(invalid_value(c, "cidrIp", "Not a valid CIDR block."));
    }
    if let Some(g) = &spec.group_id {
        r.group(g)?;
    }
    let peers = [
        &spec.cidr_ipv4,
        &spec.cidr_ipv6,
        &spec.group_id,
        &spec.prefix_list_id,
    ]
    .iter()
    .filter(|p| p.is_some())
    .count();
    if peers == 0 {
        return Err(AwsError::bad_request(
            "InvalidParameterValue",
            "A source or destination must be specified: CIDR block, security group or prefix list.",
        ));
    }
    Ok(Rule {
        id: new_id("sgr"),
        egress,
        protocol,
        from_port: from,
        to_port: to,
        cidr_ipv4: spec.cidr_ipv4,
        cidr_ipv6: spec.cidr_ipv6,
        referenced_group_id: spec.group_id,
        prefix_list_id: spec.prefix_list_id,
        description: spec.description,
    })
}

fn ports_text(rule: &Rule) -> String {
    match (rule.protocol.as_str(), rule.from_port, rule.to_port) {
        ("-1", _, _) => "ALL".to_string(),
        (p, Some(f), Some(t)) => format!("{}, FROM PORT: {f}, TO PORT: {t}", p.to_uppercase()),
        (p, _, _) => p.to_uppercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use cumulo_store::Store;
    use std::sync::Arc;

    fn service(store: Arc<Store>) -> Ec2Service {
        Ec2Service::new(store, &Config::default()).unwrap()
    }

    #[test]
    fn a_region_starts_with_a_default_vpc_and_keeps_what_is_made() {
        let store = Arc::new(Store::in_memory().unwrap());
        let ec2 = service(store.clone());
        let default = ec2.default_vpc("us-east-1").unwrap();
        assert_eq!(default.cidr_block, "172.31.0.0/16");
        let vpc = ec2
            .create_vpc("us-east-1", "10.0.0.0/16", None, Tags::new())
            .unwrap();
        let s = ec2
            .create_subnet(
                "us-east-1",
                &vpc.id,
                "10.0.1.0/24",
                Some("us-east-1b"),
                None,
                Tags::new(),
            )
            .unwrap();
        assert_eq!(s.availability_zone_id, "use1-az1");
        let conflict = ec2
            .create_subnet(
                "us-east-1",
                &vpc.id,
                "10.0.1.128/25",
                None,
                None,
                Tags::new(),
            )
            .unwrap_err();
        assert_eq!(conflict.code, "InvalidSubnet.Conflict");
        let range = ec2
            .create_subnet("us-east-1", &vpc.id, "10.1.0.0/24", None, None, Tags::new())
            .unwrap_err();
        assert_eq!(range.code, "InvalidSubnet.Range");
        let eni = ec2
            .create_network_interface(
                "us-east-1",
                NetworkInterfaceRequest {
                    subnet_id: s.id.clone(),
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(eni.private_ip_address, "10.0.1.4");
        assert_eq!(
            ec2.delete_subnet("us-east-1", &s.id).unwrap_err().code,
            "DependencyViolation"
        );
        assert_eq!(
            ec2.delete_vpc("us-east-1", &vpc.id).unwrap_err().code,
            "DependencyViolation"
        );

        // A second service over the same store sees the same records (the default VPC too).
        let again = service(store);
        assert_eq!(again.default_vpc("us-east-1").unwrap(), default);
        assert_eq!(again.subnet("us-east-1", &s.id).unwrap().vpc_id, vpc.id);
        again
            .delete_network_interface("us-east-1", &eni.network_interface_id)
            .unwrap();
        again.delete_subnet("us-east-1", &s.id).unwrap();
        again.delete_vpc("us-east-1", &vpc.id).unwrap();
        assert_eq!(
            again.vpc("us-east-1", &vpc.id).unwrap_err().code,
            "InvalidVpcID.NotFound"
        );
        assert_eq!(
            again.vpc("us-east-1", "vpc-zz").unwrap_err().code,
            "InvalidVpcID.Malformed"
        );
    }

    #[test]
    fn rules_are_unique_and_groups_in_use_stay() {
        let ec2 = service(Arc::new(Store::in_memory().unwrap()));
        let a = ec2
            .create_security_group("us-east-1", "a", "A", None, Tags::new())
            .unwrap();
        let b = ec2
            .create_security_group("us-east-1", "b", "B", None, Tags::new())
            .unwrap();
        let from_b = RuleSpec {
            protocol: "tcp".into(),
            from_port: Some(443),
            to_port: Some(443),
            group_id: Some(b.id.clone()),
            ..Default::default()
        };
        let added = ec2
            .authorize("us-east-1", &a.id, false, vec![from_b.clone()])
            .unwrap();
        assert!(added[0].id.starts_with("sgr-"));
        let dup = ec2
            .authorize("us-east-1", &a.id, false, vec![from_b.clone()])
            .unwrap_err();
        assert_eq!(dup.code, "InvalidPermission.Duplicate");
        assert_eq!(
            ec2.delete_security_group("us-east-1", &b.id)
                .unwrap_err()
                .code,
            "DependencyViolation"
        );
        ec2.revoke("us-east-1", &a.id, false, vec![from_b], &[])
            .unwrap();
        ec2.delete_security_group("us-east-1", &b.id).unwrap();
    }

    #[test]
    fn a_rule_description_changes_in_place() {
        let ec2 = service(Arc::new(Store::in_memory().unwrap()));
        let g = ec2
            .create_security_group("us-east-1", "g", "G", None, Tags::new())
            .unwrap();
        let all_out = |description: Option<&str>| RuleSpec {
            protocol: "-1".into(),
            cidr_ipv4: Some("0.0.0.0/0".into()),
            description: description.map(str::to_string),
            ..Default::default()
        };
        let rules = || {
            ec2.records("us-east-1")
                .unwrap()
                .into_iter()
                .find_map(|r| match r {
                    Resource::SecurityGroup(x) if x.id == g.id => Some(x.rules),
                    _ => None,
                })
                .unwrap()
        };
        let before = rules();
        ec2.update_rule_descriptions("us-east-1", &g.id, true, vec![all_out(Some("everything"))])
            .unwrap();
        let after = rules();
        let egress: Vec<_> = after.iter().filter(|r| r.egress).collect();
        assert_eq!(egress.len(), 1);
        assert_eq!(egress[0].description.as_deref(), Some("everything"));
        // The same rule (its sgr- id kept), not a new one.
        assert_eq!(egress[0].id, before.iter().find(|r| r.egress).unwrap().id);
        let https = RuleSpec {
            protocol: "tcp".into(),
            from_port: Some(443),
            to_port: Some(443),
            cidr_ipv4: Some("0.0.0.0/0".into()),
            description: Some("x".into()),
            ..Default::default()
        };
        let e = ec2
            .update_rule_descriptions("us-east-1", &g.id, true, vec![all_out(None), https])
            .unwrap_err();
        assert_eq!(e.code, "InvalidPermission.NotFound");
        assert_eq!(rules(), after);
    }
}
