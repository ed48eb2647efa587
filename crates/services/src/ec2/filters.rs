//! The `Filter.N.Name` / `Filter.N.Value.M` grammar of every Describe, written once: a record
//! matches when, for every filter, one of its values for the filter's name matches one of the
//! filter's values (`*` and `?` are wildcards). Each kind declares its filterable fields in
//! [`fields`]; `tag:<key>`, `tag-key` and `tag-value` work for every kind.

use super::model::Resource;
use cumulo_wire::AwsError;

pub type Filters = Vec<(String, Vec<String>)>;

/// Whether `res` passes every filter; a name its kind does not know is AWS's
/// `InvalidParameterValue`.
pub fn matches(res: &Resource, filters: &Filters) -> Result<bool, AwsError> {
    for (name, wanted) in filters {
        let values = values_of(res, name).ok_or_else(|| {
            AwsError::bad_request(
                "InvalidParameterValue",
                format!("The filter '{name}' is invalid"),
            )
        })?;
        if !values.iter().any(|v| wanted.iter().any(|w| glob(w, v))) {
            return Ok(false);
        }
    }
    Ok(true)
}

fn values_of(res: &Resource, name: &str) -> Option<Vec<String>> {
    let tags = res.tags();
    if let Some(key) = name.strip_prefix("tag:") {
        return Some(tags.get(key).cloned().into_iter().collect());
    }
    match name {
        "tag-key" => Some(tags.keys().cloned().collect()),
        "tag-value" => Some(tags.values().cloned().collect()),
        _ => fields(res, name),
    }
}

fn one(s: &str) -> Option<Vec<String>> {
    Some(vec![s.to_string()])
}

fn flag(b: bool) -> Option<Vec<String>> {
    one(if b { "true" } else { "false" })
}

fn opt(s: &Option<String>) -> Option<Vec<String>> {
    Some(s.iter().cloned().collect())
}

/// Each kind's filter names, as AWS documents them for its Describe call.
fn fields(res: &Resource, name: &str) -> Option<Vec<String>> {
    match res {
        Resource::Vpc(v) => match name {
            "vpc-id" => one(&v.id),
            "cidr" | "cidr-block-association.cidr-block" | "cidrBlock" => one(&v.cidr),
            "is-default" | "isDefault" => flag(v.is_default),
            "state" => one("available"),
            "dhcp-options-id" => one(&v.dhcp_options_id),
            "owner-id" => one("000000000000"),
            _ => None,
        },
        Resource::Subnet(s) => match name {
            "subnet-id" => one(&s.id),
            "vpc-id" | "vpcId" => one(&s.vpc_id),
            "cidr-block" | "cidr" | "cidrBlock" => one(&s.cidr),
            "availability-zone" | "availabilityZone" => one(&s.availability_zone),
            "availability-zone-id" | "availabilityZoneId" => one(&s.availability_zone_id),
            "default-for-az" | "defaultForAz" => flag(s.default_for_az),
            "map-public-ip-on-launch" => flag(s.map_public_ip_on_launch),
            "state" => one("available"),
            _ => None,
        },
        Resource::SecurityGroup(g) => match name {
            "group-id" => one(&g.id),
            "group-name" => one(&g.name),
            "vpc-id" => one(&g.vpc_id),
            "description" => one(&g.description),
            "owner-id" => one("000000000000"),
            _ => None,
        },
        Resource::RouteTable(t) => match name {
            "route-table-id" => one(&t.id),
            "vpc-id" => one(&t.vpc_id),
            "association.main" => flag(t.is_main()),
            "association.subnet-id" => Some(
                t.associations
                    .iter()
                    .filter_map(|a| a.subnet_id.clone())
                    .collect(),
            ),
            "association.route-table-association-id" => {
                Some(t.associations.iter().map(|a| a.id.clone()).collect())
            }
            "route.gateway-id" => Some(t.routes.iter().map(|r| r.target.clone()).collect()),
            "route.nat-gateway-id" => Some(
                t.routes
                    .iter()
                    .filter(|r| r.target.starts_with("nat-"))
                    .map(|r| r.target.clone())
                    .collect(),
            ),
            "route.destination-cidr-block" => {
                Some(t.routes.iter().map(|r| r.destination.clone()).collect())
            }
            _ => None,
        },
        Resource::InternetGateway(g) => match name {
            "internet-gateway-id" | "egress-only-internet-gateway-id" => one(&g.id),
            "attachment.vpc-id" => opt(&g.vpc_id),
            "attachment.state" => Some(g.vpc_id.iter().map(|_| "available".to_string()).collect()),
            _ => None,
        },
        Resource::Address(a) => match name {
            "allocation-id" => one(&a.allocation_id),
            "public-ip" => one(&a.public_ip),
            "association-id" => opt(&a.association_id),
            "network-interface-id" => opt(&a.network_interface_id),
            "private-ip-address" => opt(&a.private_ip),
            "instance-id" => opt(&a.instance_id),
            "domain" => one("vpc"),
            _ => None,
        },
        Resource::NatGateway(n) => match name {
            "nat-gateway-id" => one(&n.id),
            "subnet-id" => one(&n.subnet_id),
            "vpc-id" => one(&n.vpc_id),
            "state" => one(&n.state),
            _ => None,
        },
        Resource::NetworkInterface(n) => match name {
            "network-interface-id" => one(&n.id),
            "subnet-id" => one(&n.subnet_id),
            "vpc-id" => one(&n.vpc_id),
            "availability-zone" => one(&n.availability_zone),
            "private-ip-address" => one(&n.private_ip),
            "addresses.private-ip-address" => Some(
                std::iter::once(&n.private_ip)
                    .chain(&n.secondary_ips)
                    .cloned()
                    .collect(),
            ),
            "addresses.primary" => Some(
                std::iter::once("true")
                    .chain(n.secondary_ips.iter().map(|_| "false"))
                    .map(str::to_string)
                    .collect(),
            ),
            "mac-address" => one(&n.mac_address),
            "source-dest-check" => flag(n.source_dest_check),
            "group-id" => Some(n.groups.clone()),
            "description" => one(&n.description),
            "interface-type" => one(&n.interface_type),
            "requester-managed" => flag(n.requester_id.is_some()),
            "status" => one(n.status()),
            "attachment.device-index" => Some(
                n.attachment
                    .iter()
                    .map(|a| a.device_index.to_string())
                    .collect(),
            ),
            "attachment.instance-id" => {
                Some(n.attachment.iter().map(|a| a.instance_id.clone()).collect())
            }
            "attachment.attachment-id" => Some(n.attachment.iter().map(|a| a.id.clone()).collect()),
            _ => None,
        },
        Resource::Instance(i) => match name {
            "instance-id" => one(&i.id),
            "instance-state-name" => one(&i.state),
            "instance-state-code" => one(&super::instances::state_code(&i.state).to_string()),
            "instance-type" => one(&i.instance_type),
            "image-id" => one(&i.image_id),
            "subnet-id" => one(&i.subnet_id),
            "vpc-id" => one(&i.vpc_id),
            "availability-zone" => one(&i.availability_zone),
            "private-ip-address" => one(&i.private_ip),
            "ip-address" => opt(&i.public_ip),
            "key-name" => opt(&i.key_name),
            "reservation-id" => one(&i.reservation_id),
            "instance.group-id" | "group-id" => Some(i.groups.clone()),
            "network-interface.network-interface-id" => opt(&i.network_interface_id),
            "iam-instance-profile.arn" => opt(&i.iam_instance_profile_arn),
            "launch-index" => one(&i.launch_index.to_string()),
            _ => None,
        },
        Resource::LaunchTemplate(t) => match name {
            "launch-template-name" => one(&t.name),
            "create-time" => one(&t.created),
            _ => None,
        },
        Resource::NetworkAcl(a) => match name {
            "network-acl-id" => one(&a.id),
            "vpc-id" => one(&a.vpc_id),
            "default" => flag(a.is_default),
            "owner-id" => one("000000000000"),
            "association.association-id" => {
                Some(a.associations.iter().map(|x| x.id.clone()).collect())
            }
            "association.network-acl-id" => {
                Some(a.associations.iter().map(|_| a.id.clone()).collect())
            }
            "association.subnet-id" => {
                Some(a.associations.iter().map(|x| x.subnet_id.clone()).collect())
            }
            "entry.rule-number" => Some(
                a.entries
                    .iter()
                    .map(|e| e.rule_number.to_string())
                    .collect(),
            ),
            "entry.egress" => Some(a.entries.iter().map(|e| e.egress.to_string()).collect()),
            "entry.protocol" => Some(a.entries.iter().map(|e| e.protocol.clone()).collect()),
            "entry.rule-action" => Some(a.entries.iter().map(|e| e.action.clone()).collect()),
            "entry.cidr" => Some(a.entries.iter().filter_map(|e| e.cidr.clone()).collect()),
            _ => None,
        },
        Resource::DhcpOptions(d) => match name {
            "dhcp-options-id" => one(&d.id),
            "key" => Some(d.configurations.iter().map(|(k, _)| k.clone()).collect()),
            "value" => Some(
                d.configurations
                    .iter()
                    .flat_map(|(_, v)| v.clone())
                    .collect(),
            ),
            "owner-id" => one("000000000000"),
            _ => None,
        },
        Resource::VpcEndpoint(e) => match name {
            "vpc-endpoint-id" => one(&e.id),
            "vpc-id" => one(&e.vpc_id),
            "service-name" => one(&e.service_name),
            "vpc-endpoint-state" => one(&e.state),
            "vpc-endpoint-type" => one(&e.endpoint_type),
            _ => None,
        },
        Resource::FlowLog(f) => match name {
            "flow-log-id" => one(&f.id),
            "resource-id" => one(&f.resource_id),
            "traffic-type" => one(&f.traffic_type),
            "log-destination-type" => one(&f.destination_type),
            "log-group-name" => opt(&f.log_group_name),
            "deliver-log-status" => one("SUCCESS"),
            _ => None,
        },
        Resource::PeeringConnection(p) => match name {
            "vpc-peering-connection-id" => one(&p.id),
            "status-code" => one(&p.status),
            "requester-vpc-info.vpc-id" => one(&p.requester_vpc_id),
            "accepter-vpc-info.vpc-id" => one(&p.accepter_vpc_id),
            "requester-vpc-info.owner-id" | "accepter-vpc-info.owner-id" => one("000000000000"),
            _ => None,
        },
        Resource::Volume(v) => match name {
            "volume-id" => one(&v.id),
            "status" => one(v.state()),
            "availability-zone" => one(&v.availability_zone),
            "volume-type" => one(&v.volume_type),
            "size" => one(&v.size.to_string()),
            "encrypted" => flag(v.encrypted),
            "snapshot-id" => opt(&v.snapshot_id),
            "multi-attach-enabled" => flag(v.multi_attach),
            "create-time" => one(&v.created),
            "attachment.instance-id" => Some(
                v.attachments
                    .iter()
                    .map(|a| a.instance_id.clone())
                    .collect(),
            ),
            "attachment.device" => Some(v.attachments.iter().map(|a| a.device.clone()).collect()),
            "attachment.status" => Some(
                v.attachments
                    .iter()
                    .map(|_| "attached".to_string())
                    .collect(),
            ),
            "attachment.delete-on-termination" => Some(
                v.attachments
                    .iter()
                    .map(|a| a.delete_on_termination.to_string())
                    .collect(),
            ),
            _ => None,
        },
        Resource::EndpointService(e) => match name {
            "service-id" => one(&e.id),
            "service-name" => one(&e.service_name),
            "service-state" => one("Available"),
            "supported-ip-address-types" => Some(e.supported_ip_address_types.clone()),
            _ => None,
        },
        Resource::PrefixList(p) => match name {
            "prefix-list-id" => one(&p.id),
            "prefix-list-name" => one(&p.name),
            "owner-id" => one("000000000000"),
            _ => None,
        },
        Resource::KeyPair(k) => match name {
            "key-pair-id" => one(&k.id),
            "key-name" => one(&k.name),
            "fingerprint" => one(&k.fingerprint),
            "key-type" => one(&k.key_type),
            _ => None,
        },
    }
}

/// `*` any run, `?` any one character; everything else literal.
pub fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn wildcards() {
        assert!(glob("vpc-*", "vpc-123"));
        assert!(glob("a?c", "abc") && !glob("a?c", "abbc"));
        assert!(glob("*", "") && glob("x", "x") && !glob("x", "y"));
        assert!(glob("*-b-*", "a-b-c"));
    }
}
