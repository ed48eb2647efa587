//! The `ec2` protocol: query-style parameters in (`Filter.N.Value.M`, `VpcId.N`,
//! `IpPermissions.N.IpRanges.M.CidrIp`), EC2's XML out (lower-camel element names, lists as
//! `<item>`s, a `requestId` in every answer).

use super::filters::{self, Filters};
use super::model::*;
use super::ops::RuleSpec;
use super::{Ec2Service, zones};
use cumulo_wire::query::QueryParams;
use cumulo_wire::xml::XmlWriter;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use std::collections::BTreeMap;

pub(crate) const NS: &str = "http://ec2.amazonaws.com/doc/2016-11-15/";
const PROTOCOL: Protocol = Protocol::Ec2(NS);

pub fn handle(svc: &Ec2Service, req: &AwsRequest) -> AwsResponse {
    let p = Params(QueryParams::from_request(req).0);
    let action = p.get("Action").unwrap_or("").to_string();
    let region = req.region.clone();
    let result = if p.get("DryRun") == Some("true") {
        Err(AwsError::new(
            http::StatusCode::PRECONDITION_FAILED,
            "DryRunOperation",
            "Request would have succeeded, but DryRun flag is set.",
        ))
    } else {
        dispatch(svc, &region, &p, &action)
    };
    match result {
        Ok(body) => {
            let mut w = XmlWriter::new();
            w.raw(&format!("<{action}Response xmlns=\"{NS}\">"));
            w.elem("requestId", &req.request_id);
            w.raw(&body);
            w.raw(&format!("</{action}Response>"));
            AwsResponse::xml(w.finish()).with_header("x-amzn-requestid", &req.request_id)
        }
        Err(e) => e.into_response(PROTOCOL, &req.request_id),
    }
}

/// The request's parameters, with EC2's list shapes.
pub(super) struct Params(pub(super) Vec<(String, String)>);

impl Params {
    pub(super) fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub(super) fn required(&self, key: &str) -> Result<&str, AwsError> {
        self.get(key).ok_or_else(|| super::errors::missing(key))
    }

    pub(super) fn flag(&self, key: &str) -> Option<bool> {
        self.get(key).map(|v| v.eq_ignore_ascii_case("true"))
    }

    pub(super) fn int(&self, key: &str) -> Result<Option<i64>, AwsError> {
        self.get(key)
            .map(|v| {
                v.parse::<i64>()
                    .map_err(|_| super::errors::invalid_value(v, key, "Not a number."))
            })
            .transpose()
    }

    /// `Prefix.N.rest=value` grouped by N (in order), each with `rest` as its key.
    pub(super) fn items(&self, prefix: &str) -> Vec<Params> {
        let mut by: BTreeMap<u32, Vec<(String, String)>> = BTreeMap::new();
        for (k, v) in &self.0 {
            let Some(rest) = k.strip_prefix(prefix).and_then(|r| r.strip_prefix('.')) else {
                continue;
            };
            let (idx, field) = rest.split_once('.').unwrap_or((rest, ""));
            if let Ok(i) = idx.parse::<u32>() {
                by.entry(i)
                    .or_default()
                    .push((field.to_string(), v.clone()));
            }
        }
        by.into_values().map(Params).collect()
    }

    /// `Prefix.N=value`, in order.
    pub(super) fn strings(&self, prefix: &str) -> Vec<String> {
        self.items(prefix)
            .into_iter()
            .filter_map(|p| p.get("").map(str::to_string))
            .collect()
    }

    pub(super) fn filters(&self) -> Filters {
        self.items("Filter")
            .into_iter()
            .filter_map(|f| Some((f.get("Name")?.to_string(), f.strings("Value"))))
            .collect()
    }

    /// The tags of `TagSpecification.N` (any resource type: one resource per call here).
    pub(super) fn tag_specs(&self) -> Tags {
        self.items("TagSpecification")
            .into_iter()
            .flat_map(|s| s.tags("Tag"))
            .collect()
    }

    pub(super) fn tags(&self, prefix: &str) -> Tags {
        self.items(prefix)
            .into_iter()
            .filter_map(|t| {
                Some((
                    t.get("Key")?.to_string(),
                    t.get("Value").unwrap_or("").to_string(),
                ))
            })
            .collect()
    }

    /// `IpPermissions.N` (or the legacy flat form) as rule specs, one per peer.
    fn permissions(&self) -> Result<Vec<RuleSpec>, AwsError> {
        let mut out = Vec::new();
        let mut perms = self.items("IpPermissions");
        if perms.is_empty() && self.get("IpProtocol").is_some() {
            perms.push(Params(self.0.clone()));
        }
        for perm in perms {
            let base = RuleSpec {
                protocol: perm.required("IpProtocol")?.to_string(),
                from_port: perm.int("FromPort")?,
                to_port: perm.int("ToPort")?,
                ..Default::default()
            };
            let before = out.len();
            for r in perm.items("IpRanges") {
                out.push(RuleSpec {
                    cidr_ipv4: r.get("CidrIp").map(str::to_string),
                    description: r.get("Description").map(str::to_string),
                    ..base.clone()
                });
            }
            for r in perm.items("Ipv6Ranges") {
                out.push(RuleSpec {
                    cidr_ipv6: r.get("CidrIpv6").map(str::to_string),
                    description: r.get("Description").map(str::to_string),
                    ..base.clone()
                });
            }
            for r in perm
                .items("Groups")
                .into_iter()
                .chain(perm.items("UserIdGroupPairs"))
            {
                out.push(RuleSpec {
                    group_id: r.get("GroupId").map(str::to_string),
                    description: r.get("Description").map(str::to_string),
                    ..base.clone()
                });
            }
            for r in perm.items("PrefixListIds") {
                out.push(RuleSpec {
                    prefix_list_id: r.get("PrefixListId").map(str::to_string),
                    description: r.get("Description").map(str::to_string),
                    ..base.clone()
                });
            }
            if let Some(c) = perm.get("CidrIp") {
                out.push(RuleSpec {
                    cidr_ipv4: Some(c.to_string()),
                    ..base.clone()
                });
            }
            if out.len() == before {
                out.push(base);
            }
        }
        Ok(out)
    }
}

pub(super) type Answer = Result<String, AwsError>;

fn dispatch(svc: &Ec2Service, region: &str, p: &Params, action: &str) -> Answer {
    match action {
        "DescribeAvailabilityZones" => describe_zones(region, p),
        "DescribeRegions" => describe_regions(region, p),
        "CreateVpc" => {
            // Address pools (BYOIP, IPAM) are not emulated: refused by name rather than given
            // a block from a pool that does not exist.
            if let Some(name) = [
                "Ipv6Pool",
                "Ipv6CidrBlock",
                "Ipv4IpamPoolId",
                "Ipv6IpamPoolId",
            ]
            .into_iter()
            .find(|n| p.get(n).is_some())
            {
                return Err(AwsError::new(
                    http::StatusCode::NOT_IMPLEMENTED,
                    "NotImplemented",
                    format!("cumulo: CreateVpc's {name} (address pools) is not implemented"),
                ));
            }
            let mut v = svc.create_vpc(
                region,
                p.required("CidrBlock")?,
                p.get("InstanceTenancy"),
                p.tag_specs(),
            )?;
            if p.flag("AmazonProvidedIpv6CidrBlock").unwrap_or(false) {
                svc.associate_vpc_cidr_block(region, &v.id, None, true)?;
                v = svc.read(region, |r| r.vpc(&v.id).cloned())?;
            }
            Ok(one("vpc", |w| vpc(w, &v, "pending")))
        }
        "DeleteVpc" => ok(svc.delete_vpc(region, p.required("VpcId")?)),
        "ModifyVpcAttribute" => ok(svc.modify_vpc_attribute(
            region,
            p.required("VpcId")?,
            p.flag("EnableDnsSupport.Value"),
            p.flag("EnableDnsHostnames.Value"),
        )),
        "DescribeVpcAttribute" => {
            let id = p.required("VpcId")?;
            let attr = p.required("Attribute")?;
            let v = svc.read(region, |r| r.vpc(id).cloned())?;
            let (name, value) = match attr {
                "enableDnsSupport" => ("enableDnsSupport", v.enable_dns_support),
                "enableDnsHostnames" => ("enableDnsHostnames", v.enable_dns_hostnames),
                other => {
                    return Err(super::errors::invalid_value(
                        other,
                        "attribute",
                        "Unknown attribute.",
                    ));
                }
            };
            Ok(format!(
                "<vpcId>{id}</vpcId><{name}><value>{value}</value></{name}>"
            ))
        }
        "CreateSubnet" => {
            let s = svc.create_subnet(
                region,
                p.required("VpcId")?,
                p.required("CidrBlock")?,
                p.get("AvailabilityZone"),
                p.get("AvailabilityZoneId"),
                p.tag_specs(),
            )?;
            Ok(one("subnet", |w| subnet(w, &s, region)))
        }
        "DeleteSubnet" => ok(svc.delete_subnet(region, p.required("SubnetId")?)),
        "ModifySubnetAttribute" => ok(svc.modify_subnet_attribute(
            region,
            p.required("SubnetId")?,
            p.flag("MapPublicIpOnLaunch.Value"),
        )),
        "CreateSecurityGroup" => {
            let g = svc.create_security_group(
                region,
                p.get("GroupName").unwrap_or(""),
                p.get("GroupDescription").unwrap_or(""),
                p.get("VpcId"),
                p.tag_specs(),
            )?;
            Ok(format!(
                "<return>true</return><groupId>{}</groupId><securityGroupArn>arn:aws:ec2:{region}:{}:security-group/{}</securityGroupArn>",
                g.id,
                svc.account_id(),
                g.id
            ))
        }
        "DeleteSecurityGroup" => {
            let id = match (p.get("GroupId"), p.get("GroupName")) {
                (Some(id), _) => id.to_string(),
                (None, Some(name)) => group_by_name(svc, region, name)?,
                (None, None) => return Err(super::errors::missing("GroupId")),
            };
            svc.delete_security_group(region, &id)?;
            Ok(format!("<return>true</return><groupId>{id}</groupId>"))
        }
        "AuthorizeSecurityGroupIngress" | "AuthorizeSecurityGroupEgress" => {
            let egress = action.ends_with("Egress");
            let id = group_param(svc, region, p)?;
            let rules = svc.authorize(region, &id, egress, p.permissions()?)?;
            let mut w = XmlWriter::new_fragment();
            w.elem("return", "true");
            w.open("securityGroupRuleSet", None);
            for r in &rules {
                w.open("item", None);
                rule(&mut w, &id, r, svc.account_id());
                w.close();
            }
            w.close();
            Ok(w.finish())
        }
        "UpdateSecurityGroupRuleDescriptionsIngress"
        | "UpdateSecurityGroupRuleDescriptionsEgress" => {
            let egress = action.ends_with("Egress");
            let id = group_param(svc, region, p)?;
            svc.update_rule_descriptions(region, &id, egress, p.permissions()?)?;
            Ok("<return>true</return>".into())
        }
        "RevokeSecurityGroupIngress" | "RevokeSecurityGroupEgress" => {
            let egress = action.ends_with("Egress");
            let id = group_param(svc, region, p)?;
            svc.revoke(
                region,
                &id,
                egress,
                p.permissions()?,
                &p.strings("SecurityGroupRuleId"),
            )?;
            Ok("<return>true</return>".into())
        }
        "CreateRouteTable" => {
            let t = svc.create_route_table(region, p.required("VpcId")?, p.tag_specs())?;
            Ok(one("routeTable", |w| route_table(w, &t, svc.account_id())))
        }
        "DeleteRouteTable" => ok(svc.delete_route_table(region, p.required("RouteTableId")?)),
        "CreateRoute" | "ReplaceRoute" => {
            let target = [
                "GatewayId",
                "NatGatewayId",
                "NetworkInterfaceId",
                "VpcPeeringConnectionId",
                "VpcEndpointId",
                "TransitGatewayId",
                "EgressOnlyInternetGatewayId",
            ]
            .iter()
            .find_map(|k| p.get(k))
            .ok_or_else(|| super::errors::missing("GatewayId"))?;
            let destination = p
                .get("DestinationCidrBlock")
                .or(p.get("DestinationIpv6CidrBlock"))
                .or(p.get("DestinationPrefixListId"))
                .ok_or_else(|| super::errors::missing("DestinationCidrBlock"))?;
            ok(svc.put_route(
                region,
                p.required("RouteTableId")?,
                destination,
                target,
                action == "ReplaceRoute",
            ))
        }
        "DeleteRoute" => {
            let destination = p
                .get("DestinationCidrBlock")
                .or(p.get("DestinationIpv6CidrBlock"))
                .or(p.get("DestinationPrefixListId"))
                .ok_or_else(|| super::errors::missing("DestinationCidrBlock"))?;
            ok(svc.delete_route(region, p.required("RouteTableId")?, destination))
        }
        "AssociateRouteTable" => {
            let id = svc.associate_route_table(
                region,
                p.required("RouteTableId")?,
                p.get("SubnetId"),
                p.get("GatewayId"),
            )?;
            Ok(format!(
                "<associationId>{id}</associationId><associationState><state>associated</state></associationState>"
            ))
        }
        "DisassociateRouteTable" => {
            ok(svc.disassociate_route_table(region, p.required("AssociationId")?))
        }
        "ReplaceRouteTableAssociation" => {
            let id = svc.replace_route_table_association(
                region,
                p.required("AssociationId")?,
                p.required("RouteTableId")?,
            )?;
            Ok(format!(
                "<newAssociationId>{id}</newAssociationId><associationState><state>associated</state></associationState>"
            ))
        }
        "CreateInternetGateway" => {
            let g = svc.create_internet_gateway(region, p.tag_specs())?;
            Ok(one("internetGateway", |w| gateway(w, &g, svc.account_id())))
        }
        "DeleteInternetGateway" => {
            ok(svc.delete_internet_gateway(region, p.required("InternetGatewayId")?))
        }
        "AttachInternetGateway" => ok(svc.attach_internet_gateway(
            region,
            p.required("InternetGatewayId")?,
            p.required("VpcId")?,
        )),
        "DetachInternetGateway" => ok(svc.detach_internet_gateway(
            region,
            p.required("InternetGatewayId")?,
            p.required("VpcId")?,
        )),
        "AllocateAddress" => {
            let a = svc.allocate_address(region, p.tag_specs())?;
            Ok(format!(
                "<publicIp>{}</publicIp><domain>vpc</domain><allocationId>{}</allocationId><publicIpv4Pool>amazon</publicIpv4Pool><networkBorderGroup>{region}</networkBorderGroup>",
                a.public_ip, a.allocation_id
            ))
        }
        "ReleaseAddress" => ok(svc.release_address(region, p.required("AllocationId")?)),
        "CreateNatGateway" => {
            let n = svc.create_nat_gateway(
                region,
                p.required("SubnetId")?,
                p.get("AllocationId"),
                p.get("ConnectivityType"),
                p.tag_specs(),
            )?;
            Ok(one("natGateway", |w| nat(w, &n)))
        }
        "DeleteNatGateway" => {
            let id = p.required("NatGatewayId")?;
            svc.delete_nat_gateway(region, id)?;
            Ok(format!("<natGatewayId>{id}</natGatewayId>"))
        }
        "CreateTags" => ok(svc.create_tags(region, &p.strings("ResourceId"), &p.tags("Tag"))),
        "DeleteTags" => {
            let tags: Vec<(String, Option<String>)> = p
                .items("Tag")
                .into_iter()
                .filter_map(|t| {
                    Some((
                        t.get("Key")?.to_string(),
                        t.get("Value").map(str::to_string),
                    ))
                })
                .collect();
            ok(svc.delete_tags(region, &p.strings("ResourceId"), &tags))
        }
        "DescribeTags" => describe_tags(svc, region, p),
        "DescribeVpcs" => describe(
            svc,
            region,
            p,
            "VpcId",
            "vpc",
            "vpcSet",
            |res, w, _| match res {
                Resource::Vpc(v) => {
                    vpc(w, v, "available");
                    true
                }
                _ => false,
            },
        ),
        "DescribeSubnets" => describe(
            svc,
            region,
            p,
            "SubnetId",
            "subnet",
            "subnetSet",
            |res, w, region| match res {
                Resource::Subnet(s) => {
                    subnet(w, s, region);
                    true
                }
                _ => false,
            },
        ),
        "DescribeSecurityGroups" => {
            let names = p.strings("GroupName");
            let mut ids = p.strings("GroupId");
            for n in names {
                ids.push(group_by_name(svc, region, &n)?);
            }
            describe_ids(
                svc,
                region,
                p,
                ids,
                "sg",
                "securityGroupInfo",
                |res, w, _| match res {
                    Resource::SecurityGroup(g) => {
                        group(w, g, svc.account_id());
                        true
                    }
                    _ => false,
                },
            )
        }
        "DescribeSecurityGroupRules" => describe_rules(svc, region, p),
        "GetSecurityGroupsForVpc" => groups_for_vpc(svc, region, p),
        "DescribeRouteTables" => describe(
            svc,
            region,
            p,
            "RouteTableId",
            "rtb",
            "routeTableSet",
            |res, w, _| match res {
                Resource::RouteTable(t) => {
                    route_table(w, t, svc.account_id());
                    true
                }
                _ => false,
            },
        ),
        "DescribeInternetGateways" => describe(
            svc,
            region,
            p,
            "InternetGatewayId",
            "igw",
            "internetGatewaySet",
            |res, w, _| match res {
                Resource::InternetGateway(g) if !g.egress_only => {
                    gateway(w, g, svc.account_id());
                    true
                }
                _ => false,
            },
        ),
        "DescribeAddresses" => {
            // PublicIp.N narrows the answer as AllocationId.N does.
            let ips = p.strings("PublicIp");
            describe(
                svc,
                region,
                p,
                "AllocationId",
                "eipalloc",
                "addressesSet",
                |res, w, _| match res {
                    Resource::Address(a) if ips.is_empty() || ips.contains(&a.public_ip) => {
                        address(w, a);
                        true
                    }
                    _ => false,
                },
            )
        }
        "DescribeNatGateways" => {
            svc.settle_nat_gateways(region)?;
            describe(
                svc,
                region,
                p,
                "NatGatewayId",
                "nat",
                "natGatewaySet",
                |res, w, _| match res {
                    Resource::NatGateway(n) => {
                        nat(w, n);
                        true
                    }
                    _ => false,
                },
            )
        }
        "" => Err(AwsError::bad_request(
            "MissingAction",
            "The request must contain the parameter Action",
        )),
        other => super::compute_wire::dispatch(svc, region, p, other)
            .or_else(|| super::network_wire::dispatch(svc, region, p, other))
            .or_else(|| super::interface_wire::dispatch(svc, region, p, other))
            .or_else(|| super::volume_wire::dispatch(svc, region, p, other))
            .or_else(|| super::endpoint_service_wire::dispatch(svc, region, p, other))
            .unwrap_or_else(|| Err(AwsError::not_implemented("ec2", other))),
    }
}

pub(super) fn ok(r: Result<(), AwsError>) -> Answer {
    r.map(|()| "<return>true</return>".to_string())
}

pub(super) fn one(name: &'static str, f: impl FnOnce(&mut XmlWriter)) -> String {
    let mut w = XmlWriter::new_fragment();
    w.open(name, None);
    f(&mut w);
    w.close();
    w.finish()
}

pub(super) fn group_by_name(
    svc: &Ec2Service,
    region: &str,
    name: &str,
) -> Result<String, AwsError> {
    svc.read(region, |r| {
        let default_vpc = r.default_vpc().map(|v| v.id.clone());
        r.items
            .values()
            .find_map(|x| match x {
                Resource::SecurityGroup(g)
                    if g.name == name && Some(&g.vpc_id) == default_vpc.as_ref() =>
                {
                    Some(g.id.clone())
                }
                _ => None,
            })
            .ok_or_else(|| {
                AwsError::bad_request(
                    "InvalidGroup.NotFound",
                    format!(
                        "The security group '{name}' does not exist in default VPC '{}'",
                        default_vpc.unwrap_or_default()
                    ),
                )
            })
    })
}

fn group_param(svc: &Ec2Service, region: &str, p: &Params) -> Result<String, AwsError> {
    match (p.get("GroupId"), p.get("GroupName")) {
        (Some(id), _) => Ok(id.to_string()),
        (None, Some(name)) => group_by_name(svc, region, name),
        (None, None) => Err(super::errors::missing("GroupId")),
    }
}

/// A Describe over one kind: the ids asked for (each must exist), then the filters.
pub(super) fn describe(
    svc: &Ec2Service,
    region: &str,
    p: &Params,
    id_param: &str,
    prefix: &str,
    set: &'static str,
    write: impl Fn(&Resource, &mut XmlWriter, &str) -> bool,
) -> Answer {
    describe_ids(svc, region, p, p.strings(id_param), prefix, set, write)
}

pub(super) fn describe_ids(
    svc: &Ec2Service,
    region: &str,
    p: &Params,
    ids: Vec<String>,
    prefix: &str,
    set: &'static str,
    write: impl Fn(&Resource, &mut XmlWriter, &str) -> bool,
) -> Answer {
    let filters = p.filters();
    let page = super::paging::Page::of(p)?;
    let records = svc.records(region)?;
    let mut probe = XmlWriter::new_fragment();
    for id in &ids {
        super::errors::check_id(id, prefix)?;
        let found = records
            .iter()
            .any(|r| super::ops::id_of(r) == id && write(r, &mut probe, region));
        if !found {
            return Err(super::errors::not_found(id));
        }
    }
    let mut found = Vec::new();
    for r in &records {
        let id = super::ops::id_of(r);
        if !ids.is_empty() && !ids.iter().any(|i| i == id) {
            continue;
        }
        let mut item = XmlWriter::new_fragment();
        if !write(r, &mut item, region) || !filters::matches(r, &filters)? {
            continue;
        }
        found.push((id.to_string(), item.finish()));
    }
    let (items, next) = page.take(found);
    let mut w = XmlWriter::new_fragment();
    w.open(set, None);
    for item in items {
        w.open("item", None).raw(&item).close();
    }
    w.close();
    if let Some(token) = next {
        w.elem("nextToken", &token);
    }
    Ok(w.finish())
}

fn describe_zones(region: &str, p: &Params) -> Answer {
    let names = p.strings("ZoneName");
    let ids = p.strings("ZoneId");
    let filters = p.filters();
    let mut w = XmlWriter::new_fragment();
    w.open("availabilityZoneInfo", None);
    for (name, id) in zones::zones(region) {
        if (!names.is_empty() && !names.contains(&name)) || (!ids.is_empty() && !ids.contains(&id))
        {
            continue;
        }
        let pass = filters.iter().all(|(f, values)| match f.as_str() {
            "zone-name" => values.contains(&name),
            "zone-id" => values.contains(&id),
            "region-name" => values.iter().any(|v| v == region),
            "state" => values.iter().any(|v| v == "available"),
            "zone-type" => values.iter().any(|v| v == "availability-zone"),
            "group-name" => values.iter().any(|v| v == &format!("{region}-zg-1")),
            "opt-in-status" => values.iter().any(|v| v == "opt-in-not-required"),
            _ => false,
        });
        if let Some((f, _)) = filters.iter().find(|(f, _)| {
            ![
                "zone-name",
                "zone-id",
                "region-name",
                "state",
                "zone-type",
                "group-name",
                "opt-in-status",
            ]
            .contains(&f.as_str())
        }) {
            return Err(AwsError::bad_request(
                "InvalidParameterValue",
                format!("The filter '{f}' is invalid"),
            ));
        }
        if !pass {
            continue;
        }
        w.open("item", None)
            .elem("optInStatus", "opt-in-not-required")
            .elem("zoneName", &name)
            .elem("zoneId", &id)
            .elem("zoneState", "available")
            .elem("regionName", region)
            .elem("groupName", &format!("{region}-zg-1"))
            .elem("networkBorderGroup", region)
            .elem("zoneType", "availability-zone")
            .raw("<messageSet/>")
            .elem("groupLongName", &format!("{} 1", region_long_name(region)))
            .close();
    }
    w.close();
    Ok(w.finish())
}

/// A region's name as AWS writes it in zone group names (`US East (N. Virginia)`).
fn region_long_name(region: &str) -> String {
    let long = match region {
        "us-east-1" => "US East (N. Virginia)",
        "us-east-2" => "US East (Ohio)",
        "us-west-1" => "US West (N. California)",
        "us-west-2" => "US West (Oregon)",
        "ca-central-1" => "Canada (Central)",
        "eu-west-1" => "Europe (Ireland)",
        "eu-west-2" => "Europe (London)",
        "eu-west-3" => "Europe (Paris)",
        "eu-central-1" => "Europe (Frankfurt)",
        "eu-north-1" => "Europe (Stockholm)",
        "ap-south-1" => "Asia Pacific (Mumbai)",
        "ap-northeast-1" => "Asia Pacific (Tokyo)",
        "ap-northeast-2" => "Asia Pacific (Seoul)",
        "ap-northeast-3" => "Asia Pacific (Osaka)",
        "ap-southeast-1" => "Asia Pacific (Singapore)",
        "ap-southeast-2" => "Asia Pacific (Sydney)",
        "sa-east-1" => "South America (Sao Paulo)",
        other => other,
    };
    long.to_string()
}

fn describe_regions(current: &str, p: &Params) -> Answer {
    let names = p.strings("RegionName");
    let filters = p.filters();
    const REGIONS: &[&str] = &[
        "us-east-1",
        "us-east-2",
        "us-west-1",
        "us-west-2",
        "ca-central-1",
        "eu-west-1",
        "eu-west-2",
        "eu-west-3",
        "eu-central-1",
        "eu-north-1",
        "ap-south-1",
        "ap-northeast-1",
        "ap-northeast-2",
        "ap-northeast-3",
        "ap-southeast-1",
        "ap-southeast-2",
        "sa-east-1",
    ];
    let mut w = XmlWriter::new_fragment();
    w.open("regionInfo", None);
    for r in REGIONS
        .iter()
        .copied()
        .chain((!REGIONS.contains(&current)).then_some(current))
    {
        let endpoint = format!("ec2.{r}.amazonaws.com");
        let mut pass = true;
        for (f, values) in &filters {
            pass &= match f.as_str() {
                "region-name" => values.iter().any(|v| v == r),
                "endpoint" => values.contains(&endpoint),
                "opt-in-status" => values.iter().any(|v| v == "opt-in-not-required"),
                other => {
                    return Err(AwsError::bad_request(
                        "InvalidParameterValue",
                        format!("The filter '{other}' is invalid"),
                    ));
                }
            };
        }
        if !pass || (!names.is_empty() && !names.iter().any(|n| n == r)) {
            continue;
        }
        w.open("item", None)
            .elem("regionName", r)
            .elem("regionEndpoint", &endpoint)
            .elem("optInStatus", "opt-in-not-required")
            .close();
    }
    w.close();
    for n in &names {
        if !REGIONS.contains(&n.as_str()) && n != current {
            return Err(AwsError::bad_request(
                "InvalidParameterValue",
                format!("Invalid region: {n}"),
            ));
        }
    }
    Ok(w.finish())
}

fn describe_tags(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    let filters = p.filters();
    let mut w = XmlWriter::new_fragment();
    w.open("tagSet", None);
    for r in svc.records(region)? {
        let id = super::ops::id_of(&r).to_string();
        for (k, v) in r.tags() {
            let pass = filters.iter().all(|(f, values)| match f.as_str() {
                "resource-id" => values.contains(&id),
                "resource-type" => values.iter().any(|t| t == r.type_name()),
                "key" => values.contains(k),
                "value" => values.contains(v),
                _ => false,
            });
            if pass {
                w.open("item", None)
                    .elem("resourceId", &id)
                    .elem("resourceType", r.type_name())
                    .elem("key", k)
                    .elem("value", v)
                    .close();
            }
        }
    }
    w.close();
    Ok(w.finish())
}

fn describe_rules(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    let ids = p.strings("SecurityGroupRuleId");
    let filters = p.filters();
    let mut w = XmlWriter::new_fragment();
    w.open("securityGroupRuleSet", None);
    for r in svc.records(region)? {
        let Resource::SecurityGroup(g) = r else {
            continue;
        };
        for rule_ in &g.rules {
            if !ids.is_empty() && !ids.contains(&rule_.id) {
                continue;
            }
            let pass = filters.iter().all(|(f, values)| match f.as_str() {
                "group-id" => values.contains(&g.id),
                "security-group-rule-id" => values.contains(&rule_.id),
                _ => false,
            });
            if pass {
                w.open("item", None);
                rule(&mut w, &g.id, rule_, svc.account_id());
                w.close();
            }
        }
    }
    w.close();
    Ok(w.finish())
}

/// One IPv6 block association of a VPC (with its pool) or a subnet.
pub(super) fn ipv6_association(w: &mut XmlWriter, a: &CidrAssociation, vpc: Option<&Vpc>) {
    w.open("item", None)
        .elem("associationId", &a.id)
        .elem("ipv6CidrBlock", &a.cidr)
        .open("ipv6CidrBlockState", None)
        .elem("state", "associated")
        .close();
    if vpc.is_some() {
        w.elem("ipv6Pool", "Amazon")
            .elem("networkBorderGroup", "us-east-1");
    }
    w.close();
}

pub(super) fn tag_set(w: &mut XmlWriter, tags: &Tags) {
    w.open("tagSet", None);
    for (k, v) in tags {
        w.open("item", None).elem("key", k).elem("value", v).close();
    }
    w.close();
}

pub(super) fn vpc(w: &mut XmlWriter, v: &Vpc, state: &str) {
    w.elem("vpcId", &v.id)
        .elem("ownerId", "000000000000")
        .elem("state", state)
        .elem("cidrBlock", &v.cidr)
        .open("cidrBlockAssociationSet", None);
    let primary = CidrAssociation {
        id: v.cidr_association_id.clone(),
        cidr: v.cidr.clone(),
    };
    for a in std::iter::once(&primary).chain(&v.secondary) {
        w.open("item", None)
            .elem("cidrBlock", &a.cidr)
            .elem("associationId", &a.id)
            .open("cidrBlockState", None)
            .elem("state", "associated")
            .close()
            .close();
    }
    w.close().open("ipv6CidrBlockAssociationSet", None);
    for a in &v.ipv6 {
        ipv6_association(w, a, Some(v));
    }
    w.close()
        .elem("dhcpOptionsId", &v.dhcp_options_id)
        .elem("instanceTenancy", &v.instance_tenancy)
        .elem("isDefault", &v.is_default.to_string());
    tag_set(w, &v.tags);
}

pub(super) fn subnet(w: &mut XmlWriter, s: &Subnet, region: &str) {
    let size = super::cidr::Block::parse(&s.cidr)
        .map(|b| b.size())
        .unwrap_or(0);
    let available = size.saturating_sub(5 + s.used_ips.len() as u64);
    w.elem("subnetId", &s.id)
        .elem(
            "subnetArn",
            &format!("arn:aws:ec2:{region}:000000000000:subnet/{}", s.id),
        )
        .elem("state", "available")
        .elem("ownerId", "000000000000")
        .elem("vpcId", &s.vpc_id)
        .elem("cidrBlock", &s.cidr)
        .open("ipv6CidrBlockAssociationSet", None);
    for a in &s.ipv6 {
        ipv6_association(w, a, None);
    }
    w.close()
        .elem("availableIpAddressCount", &available.to_string())
        .elem("availabilityZone", &s.availability_zone)
        .elem("availabilityZoneId", &s.availability_zone_id)
        .elem("defaultForAz", &s.default_for_az.to_string())
        .elem(
            "mapPublicIpOnLaunch",
            &s.map_public_ip_on_launch.to_string(),
        )
        .elem("assignIpv6AddressOnCreation", "false")
        .elem("mapCustomerOwnedIpOnLaunch", "false")
        .elem("enableDns64", "false")
        .elem("ipv6Native", "false")
        .open("privateDnsNameOptionsOnLaunch", None)
        .elem("hostnameType", "ip-name")
        .elem("enableResourceNameDnsARecord", "false")
        .elem("enableResourceNameDnsAAAARecord", "false")
        .close()
        // VPC Block Public Access is not emulated: nothing blocks a subnet's gateway traffic.
        .open("blockPublicAccessStates", None)
        .elem("internetGatewayBlockMode", "off")
        .close();
    tag_set(w, &s.tags);
}

fn permissions(w: &mut XmlWriter, rules: &[&Rule], account: &str) {
    // Rules of one protocol and port range are one permission with several peers.
    let mut groups: Vec<Vec<&Rule>> = Vec::new();
    for r in rules {
        match groups.iter_mut().find(|g| {
            g[0].protocol == r.protocol
                && g[0].from_port == r.from_port
                && g[0].to_port == r.to_port
        }) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    for g in groups {
        let first = g[0];
        w.open("item", None).elem("ipProtocol", &first.protocol);
        if let Some(f) = first.from_port {
            w.elem("fromPort", &f.to_string());
        }
        if let Some(t) = first.to_port {
            w.elem("toPort", &t.to_string());
        }
        w.open("groups", None);
        for r in g.iter().filter(|r| r.referenced_group_id.is_some()) {
            w.open("item", None)
                .opt("description", r.description.as_deref())
                .elem("userId", account)
                .opt("groupId", r.referenced_group_id.as_deref())
                .close();
        }
        w.close().open("ipRanges", None);
        for r in g.iter().filter(|r| r.cidr_ipv4.is_some()) {
            w.open("item", None)
                .opt("cidrIp", r.cidr_ipv4.as_deref())
                .opt("description", r.description.as_deref())
                .close();
        }
        w.close().open("ipv6Ranges", None);
        for r in g.iter().filter(|r| r.cidr_ipv6.is_some()) {
            w.open("item", None)
                .opt("cidrIpv6", r.cidr_ipv6.as_deref())
                .opt("description", r.description.as_deref())
                .close();
        }
        w.close().open("prefixListIds", None);
        for r in g.iter().filter(|r| r.prefix_list_id.is_some()) {
            w.open("item", None)
                .opt("prefixListId", r.prefix_list_id.as_deref())
                .opt("description", r.description.as_deref())
                .close();
        }
        w.close().close();
    }
}

/// GetSecurityGroupsForVpc: the VPC's groups, its default group first (then by id; cumulo
/// keeps no creation order).
fn groups_for_vpc(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    let vpc_id = p.required("VpcId")?;
    let filters = p.filters();
    let mut groups: Vec<Resource> = svc.read(region, |r| {
        r.vpc(vpc_id)?;
        Ok(r.items
            .values()
            .filter(|x| matches!(x, Resource::SecurityGroup(g) if g.vpc_id == vpc_id))
            .cloned()
            .collect())
    })?;
    groups.sort_by_key(|x| match x {
        Resource::SecurityGroup(g) => (g.name != "default", g.id.clone()),
        _ => (true, String::new()),
    });
    let mut w = XmlWriter::new_fragment();
    w.open("securityGroupForVpcSet", None);
    for res in &groups {
        let Resource::SecurityGroup(g) = res else {
            continue;
        };
        if !filters::matches(res, &filters)? {
            continue;
        }
        w.open("item", None)
            .elem("description", &g.description)
            .elem("groupId", &g.id)
            .elem("groupName", &g.name)
            .elem("ownerId", svc.account_id())
            .elem("primaryVpcId", &g.vpc_id);
        tag_set(&mut w, &g.tags);
        w.close();
    }
    w.close();
    Ok(w.finish())
}

fn group(w: &mut XmlWriter, g: &SecurityGroup, account: &str) {
    w.elem("ownerId", account)
        .elem("groupId", &g.id)
        .elem("groupName", &g.name)
        .elem("groupDescription", &g.description)
        .elem("vpcId", &g.vpc_id)
        .elem(
            "securityGroupArn",
            &format!("arn:aws:ec2:us-east-1:{account}:security-group/{}", g.id),
        );
    w.open("ipPermissions", None);
    permissions(
        w,
        &g.rules.iter().filter(|r| !r.egress).collect::<Vec<_>>(),
        account,
    );
    w.close().open("ipPermissionsEgress", None);
    permissions(
        w,
        &g.rules.iter().filter(|r| r.egress).collect::<Vec<_>>(),
        account,
    );
    w.close();
    tag_set(w, &g.tags);
}

fn rule(w: &mut XmlWriter, group_id: &str, r: &Rule, account: &str) {
    w.elem("securityGroupRuleId", &r.id)
        .elem("groupId", group_id)
        .elem("groupOwnerId", account)
        .elem("isEgress", &r.egress.to_string())
        .elem("ipProtocol", &r.protocol)
        .elem("fromPort", &r.from_port.unwrap_or(-1).to_string())
        .elem("toPort", &r.to_port.unwrap_or(-1).to_string())
        .opt("cidrIpv4", r.cidr_ipv4.as_deref())
        .opt("cidrIpv6", r.cidr_ipv6.as_deref())
        .opt("prefixListId", r.prefix_list_id.as_deref())
        .opt("description", r.description.as_deref());
    if let Some(g) = &r.referenced_group_id {
        w.open("referencedGroupInfo", None)
            .elem("groupId", g)
            .elem("userId", account)
            .close();
    }
    w.raw("<tagSet/>");
}

pub(super) fn route_table(w: &mut XmlWriter, t: &RouteTable, account: &str) {
    w.elem("routeTableId", &t.id)
        .elem("vpcId", &t.vpc_id)
        .elem("ownerId", account);
    w.open("routeSet", None);
    for r in &t.routes {
        let destination = if r.destination.starts_with("pl-") {
            "destinationPrefixListId"
        } else if r.destination.contains(':') {
            "destinationIpv6CidrBlock"
        } else {
            "destinationCidrBlock"
        };
        w.open("item", None).elem(destination, &r.destination);
        let key = match r.target.split('-').next().unwrap_or("") {
            "nat" => "natGatewayId",
            "eni" => "networkInterfaceId",
            "pcx" => "vpcPeeringConnectionId",
            "tgw" => "transitGatewayId",
            "eigw" => "egressOnlyInternetGatewayId",
            _ => "gatewayId",
        };
        w.elem(key, &r.target)
            .elem("state", "active")
            .elem("origin", &r.origin)
            .close();
    }
    w.close().open("associationSet", None);
    for a in &t.associations {
        w.open("item", None)
            .elem("routeTableAssociationId", &a.id)
            .elem("routeTableId", &t.id)
            .opt("subnetId", a.subnet_id.as_deref())
            .opt("gatewayId", a.gateway_id.as_deref())
            .elem(
                "main",
                &(a.subnet_id.is_none() && a.gateway_id.is_none()).to_string(),
            )
            .open("associationState", None)
            .elem("state", "associated")
            .close()
            .close();
    }
    w.close().raw("<propagatingVgwSet/>");
    tag_set(w, &t.tags);
}

pub(super) fn gateway(w: &mut XmlWriter, g: &InternetGateway, account: &str) {
    w.elem("internetGatewayId", &g.id).elem("ownerId", account);
    w.open("attachmentSet", None);
    if let Some(v) = &g.vpc_id {
        w.open("item", None)
            .elem("vpcId", v)
            .elem("state", "available")
            .close();
    }
    w.close();
    tag_set(w, &g.tags);
}

fn address(w: &mut XmlWriter, a: &Address) {
    w.elem("publicIp", &a.public_ip)
        .elem("allocationId", &a.allocation_id)
        .opt("associationId", a.association_id.as_deref())
        .opt("instanceId", a.instance_id.as_deref())
        .elem("domain", "vpc")
        .opt("networkInterfaceId", a.network_interface_id.as_deref())
        .elem("networkInterfaceOwnerId", "000000000000")
        .opt("privateIpAddress", a.private_ip.as_deref())
        .elem("publicIpv4Pool", "amazon");
    tag_set(w, &a.tags);
}

/// A value a failed NAT gateway does not have (empty), omitted.
fn made(s: &str) -> Option<&str> {
    Some(s).filter(|s| !s.is_empty())
}

fn nat(w: &mut XmlWriter, n: &NatGateway) {
    w.elem("createTime", &n.created)
        .elem("natGatewayId", &n.id)
        .elem("state", &n.state)
        .elem("subnetId", &n.subnet_id)
        .elem("vpcId", &n.vpc_id)
        .elem("connectivityType", &n.connectivity);
    if let Some((code, message)) = &n.failure {
        w.elem("failureCode", code).elem("failureMessage", message);
    }
    w.open("natGatewayAddressSet", None)
        .open("item", None)
        .opt("allocationId", n.allocation_id.as_deref())
        .opt("networkInterfaceId", made(&n.network_interface_id))
        .opt("privateIp", made(&n.private_ip))
        .opt("publicIp", n.public_ip.as_deref())
        .elem("isPrimary", "true")
        .elem(
            "status",
            if n.failure.is_some() {
                "failed"
            } else {
                "succeeded"
            },
        )
        .close()
        .close();
    tag_set(w, &n.tags);
}
