//! The `ec2` protocol for the networking extras: network ACLs, DHCP options, egress-only
//! gateways, VPC and subnet CIDR blocks, VPC endpoints, prefix lists, flow logs, peering
//! connections and key pairs.

use super::Ec2Service;
use super::acls::protocol_number;
use super::endpoints::{EndpointChange, EndpointRequest, SERVICES, dns_entries, managed_lists};
use super::links::FlowLogRequest;
use super::model::*;
use super::wire::{Answer, Params, describe, ok, one, tag_set};
use base64::Engine;
use cumulo_wire::AwsError;
use cumulo_wire::xml::XmlWriter;

pub(super) fn dispatch(svc: &Ec2Service, region: &str, p: &Params, action: &str) -> Option<Answer> {
    let account = svc.account_id();
    Some(match action {
        // ----- network ACLs -----
        "CreateNetworkAcl" => (|| {
            let a = svc.create_network_acl(region, p.required("VpcId")?, p.tag_specs())?;
            Ok(one("networkAcl", |w| acl(w, &a, account)))
        })(),
        "DeleteNetworkAcl" => {
            (|| ok(svc.delete_network_acl(region, p.required("NetworkAclId")?)))()
        }
        "CreateNetworkAclEntry" | "ReplaceNetworkAclEntry" => (|| {
            let e = acl_entry(p)?;
            ok(svc.put_network_acl_entry(
                region,
                p.required("NetworkAclId")?,
                e,
                action.starts_with("Replace"),
            ))
        })(),
        "DeleteNetworkAclEntry" => (|| {
            let number = p
                .int("RuleNumber")?
                .ok_or_else(|| super::errors::missing("RuleNumber"))?;
            ok(svc.delete_network_acl_entry(
                region,
                p.required("NetworkAclId")?,
                number,
                p.flag("Egress").unwrap_or(false),
            ))
        })(),
        "ReplaceNetworkAclAssociation" => (|| {
            let id = svc.replace_network_acl_association(
                region,
                p.required("AssociationId")?,
                p.required("NetworkAclId")?,
            )?;
            Ok(format!("<newAssociationId>{id}</newAssociationId>"))
        })(),
        "DescribeNetworkAcls" => describe(
            svc,
            region,
            p,
            "NetworkAclId",
            "acl",
            "networkAclSet",
            |res, w, _| match res {
                Resource::NetworkAcl(a) => {
                    acl(w, a, account);
                    true
                }
                _ => false,
            },
        ),
        // ----- DHCP options -----
        "CreateDhcpOptions" => (|| {
            let configurations = p
                .items("DhcpConfiguration")
                .into_iter()
                .filter_map(|c| Some((c.get("Key")?.to_string(), c.strings("Value"))))
                .collect();
            let d = svc.create_dhcp_options(region, configurations, p.tag_specs())?;
            Ok(one("dhcpOptions", |w| dhcp(w, &d, account)))
        })(),
        "DeleteDhcpOptions" => {
            (|| ok(svc.delete_dhcp_options(region, p.required("DhcpOptionsId")?)))()
        }
        "AssociateDhcpOptions" => (|| {
            ok(svc.associate_dhcp_options(
                region,
                p.required("DhcpOptionsId")?,
                p.required("VpcId")?,
            ))
        })(),
        "DescribeDhcpOptions" => describe(
            svc,
            region,
            p,
            "DhcpOptionsId",
            "dopt",
            "dhcpOptionsSet",
            |res, w, _| match res {
                Resource::DhcpOptions(d) => {
                    dhcp(w, d, account);
                    true
                }
                _ => false,
            },
        ),
        // ----- egress-only gateways and CIDR blocks -----
        "CreateEgressOnlyInternetGateway" => (|| {
            let g = svc.create_egress_only_gateway(region, p.required("VpcId")?, p.tag_specs())?;
            Ok(one("egressOnlyInternetGateway", |w| egress_gateway(w, &g)))
        })(),
        "DeleteEgressOnlyInternetGateway" => (|| {
            svc.delete_egress_only_gateway(region, p.required("EgressOnlyInternetGatewayId")?)?;
            Ok("<returnCode>true</returnCode>".into())
        })(),
        "DescribeEgressOnlyInternetGateways" => describe(
            svc,
            region,
            p,
            "EgressOnlyInternetGatewayId",
            "eigw",
            "egressOnlyInternetGatewaySet",
            |res, w, _| match res {
                Resource::InternetGateway(g) if g.egress_only => {
                    egress_gateway(w, g);
                    true
                }
                _ => false,
            },
        ),
        "AssociateVpcCidrBlock" => (|| {
            let vpc_id = p.required("VpcId")?;
            let amazon = p.flag("AmazonProvidedIpv6CidrBlock").unwrap_or(false);
            let (a, v6) =
                svc.associate_vpc_cidr_block(region, vpc_id, p.get("CidrBlock"), amazon)?;
            Ok(block_answer(vpc_id, &a, v6, "vpcId", "associated"))
        })(),
        "DisassociateVpcCidrBlock" => (|| {
            let (vpc_id, a, v6) =
                svc.disassociate_vpc_cidr_block(region, p.required("AssociationId")?)?;
            Ok(block_answer(&vpc_id, &a, v6, "vpcId", "disassociating"))
        })(),
        "AssociateSubnetCidrBlock" => (|| {
            let subnet = p.required("SubnetId")?;
            let a =
                svc.associate_subnet_cidr_block(region, subnet, p.required("Ipv6CidrBlock")?)?;
            Ok(block_answer(subnet, &a, true, "subnetId", "associated"))
        })(),
        "DisassociateSubnetCidrBlock" => (|| {
            let (subnet, a) =
                svc.disassociate_subnet_cidr_block(region, p.required("AssociationId")?)?;
            Ok(block_answer(
                &subnet,
                &a,
                true,
                "subnetId",
                "disassociating",
            ))
        })(),
        // ----- endpoints -----
        "CreateVpcEndpoint" => (|| {
            let e = svc.create_vpc_endpoint(
                region,
                EndpointRequest {
                    vpc_id: p.required("VpcId")?.to_string(),
                    service_name: p.required("ServiceName")?.to_string(),
                    endpoint_type: p.get("VpcEndpointType").map(str::to_string),
                    route_table_ids: p.strings("RouteTableId"),
                    subnet_ids: p.strings("SubnetId"),
                    group_ids: p.strings("SecurityGroupId"),
                    private_dns_enabled: p.flag("PrivateDnsEnabled"),
                    policy: p.get("PolicyDocument").map(str::to_string),
                    tags: p.tag_specs(),
                },
            )?;
            let links = endpoint_links(svc, region, &e)?;
            Ok(one("vpcEndpoint", |w| {
                endpoint(w, &e, region, account, &links)
            }))
        })(),
        "ModifyVpcEndpoint" => (|| {
            svc.modify_vpc_endpoint(
                region,
                p.required("VpcEndpointId")?,
                EndpointChange {
                    add_route_tables: p.strings("AddRouteTableId"),
                    remove_route_tables: p.strings("RemoveRouteTableId"),
                    add_subnets: p.strings("AddSubnetId"),
                    remove_subnets: p.strings("RemoveSubnetId"),
                    add_groups: p.strings("AddSecurityGroupId"),
                    remove_groups: p.strings("RemoveSecurityGroupId"),
                    policy: p.get("PolicyDocument").map(str::to_string),
                    reset_policy: p.flag("ResetPolicy").unwrap_or(false),
                    private_dns_enabled: p.flag("PrivateDnsEnabled"),
                },
            )?;
            Ok("<return>true</return>".into())
        })(),
        "DeleteVpcEndpoints" => (|| {
            let missing = svc.delete_vpc_endpoints(region, &p.strings("VpcEndpointId"))?;
            Ok(unsuccessful(
                &missing,
                "InvalidVpcEndpoint.NotFound",
                |id| format!("The Vpc Endpoint Id '{id}' does not exist"),
            ))
        })(),
        "DescribeVpcEndpointServices" => describe_endpoint_services(region, p),
        "DescribeVpcEndpoints" => {
            let links_of = |e: &VpcEndpoint| endpoint_links(svc, region, e).unwrap_or_default();
            describe(
                svc,
                region,
                p,
                "VpcEndpointId",
                "vpce",
                "vpcEndpointSet",
                |res, w, _| match res {
                    Resource::VpcEndpoint(e) => {
                        endpoint(w, e, region, account, &links_of(e));
                        true
                    }
                    _ => false,
                },
            )
        }
        // ----- prefix lists -----
        "CreateManagedPrefixList" => (|| {
            let max = p
                .int("MaxEntries")?
                .ok_or_else(|| super::errors::missing("MaxEntries"))?;
            let pl = svc.create_prefix_list(
                region,
                p.required("PrefixListName")?,
                p.required("AddressFamily")?,
                max,
                entries(p, "Entry"),
                p.tag_specs(),
            )?;
            Ok(one("prefixList", |w| prefix_list(w, &pl, region, account)))
        })(),
        "ModifyManagedPrefixList" => (|| {
            let remove: Vec<String> = p
                .items("RemoveEntry")
                .iter()
                .filter_map(|e| e.get("Cidr").map(str::to_string))
                .collect();
            let pl = svc.modify_prefix_list(
                region,
                p.required("PrefixListId")?,
                p.int("CurrentVersion")?,
                p.get("PrefixListName"),
                p.int("MaxEntries")?,
                entries(p, "AddEntry"),
                &remove,
            )?;
            Ok(one("prefixList", |w| prefix_list(w, &pl, region, account)))
        })(),
        "DeleteManagedPrefixList" => (|| {
            let pl = svc.delete_prefix_list(region, p.required("PrefixListId")?)?;
            Ok(one("prefixList", |w| {
                prefix_list(w, &pl, region, account);
            })
            .replace("create-complete", "delete-complete"))
        })(),
        "GetManagedPrefixListEntries" => (|| {
            let list = svc.prefix_list_entries(region, p.required("PrefixListId")?)?;
            let mut w = XmlWriter::new_fragment();
            w.open("entrySet", None);
            for (c, d) in &list {
                w.open("item", None)
                    .elem("cidr", c)
                    .opt("description", d.as_deref())
                    .close();
            }
            w.close();
            Ok(w.finish())
        })(),
        "DescribeManagedPrefixLists" => describe_managed_lists(svc, region, p),
        "DescribePrefixLists" => Ok(describe_prefix_lists(region, p)),
        // ----- flow logs -----
        "CreateFlowLogs" => (|| {
            let out = svc.create_flow_logs(
                region,
                FlowLogRequest {
                    resource_ids: p.strings("ResourceId"),
                    resource_type: p.required("ResourceType")?.to_string(),
                    traffic_type: p.get("TrafficType").map(str::to_string),
                    destination_type: p.get("LogDestinationType").map(str::to_string),
                    destination: p.get("LogDestination").map(str::to_string),
                    log_group_name: p.get("LogGroupName").map(str::to_string),
                    deliver_role_arn: p.get("DeliverLogsPermissionArn").map(str::to_string),
                    log_format: p.get("LogFormat").map(str::to_string),
                    max_aggregation_interval: p.int("MaxAggregationInterval")?,
                    tags: p.tag_specs(),
                    client_token: p.get("ClientToken").map(str::to_string),
                },
            )?;
            let mut w = XmlWriter::new_fragment();
            w.elem("clientToken", &out.client_token)
                .open("flowLogIdSet", None);
            for f in &out.made {
                w.elem("item", &f.id);
            }
            w.close().open("unsuccessful", None);
            for x in &out.refused {
                w.open("item", None)
                    .open("error", None)
                    .elem("code", &x.code)
                    .elem("message", &x.message)
                    .close()
                    .elem("resourceId", &x.resource_id)
                    .close();
            }
            w.close();
            Ok(w.finish())
        })(),
        "DeleteFlowLogs" => (|| {
            let missing = svc.delete_flow_logs(region, &p.strings("FlowLogId"))?;
            Ok(unsuccessful(&missing, "InvalidFlowLogId.NotFound", |id| {
                format!("Flow Log {id} does not exist")
            }))
        })(),
        "DescribeFlowLogs" => describe(
            svc,
            region,
            p,
            "FlowLogId",
            "fl",
            "flowLogSet",
            |res, w, _| match res {
                Resource::FlowLog(f) => {
                    flow_log(w, f);
                    true
                }
                _ => false,
            },
        ),
        // ----- peering -----
        "CreateVpcPeeringConnection" => (|| {
            let pc = svc.create_peering(
                region,
                p.required("VpcId")?,
                p.required("PeerVpcId")?,
                p.get("PeerRegion"),
                p.tag_specs(),
            )?;
            peering_answer(svc, region, &pc)
        })(),
        "AcceptVpcPeeringConnection" => (|| {
            let pc =
                svc.set_peering_status(region, p.required("VpcPeeringConnectionId")?, "active")?;
            peering_answer(svc, region, &pc)
        })(),
        "RejectVpcPeeringConnection" => (|| {
            ok(svc
                .set_peering_status(region, p.required("VpcPeeringConnectionId")?, "rejected")
                .map(|_| ()))
        })(),
        "DeleteVpcPeeringConnection" => (|| {
            ok(svc
                .set_peering_status(region, p.required("VpcPeeringConnectionId")?, "deleted")
                .map(|_| ()))
        })(),
        "DescribeVpcPeeringConnections" => {
            let vpcs = svc.records(region).unwrap_or_default();
            describe(
                svc,
                region,
                p,
                "VpcPeeringConnectionId",
                "pcx",
                "vpcPeeringConnectionSet",
                |res, w, _| match res {
                    Resource::PeeringConnection(pc) => {
                        peering(w, pc, region, account, &vpcs);
                        true
                    }
                    _ => false,
                },
            )
        }
        // ----- key pairs -----
        "CreateKeyPair" => (|| {
            let (k, material) = svc.create_key_pair(
                region,
                p.required("KeyName")?,
                p.get("KeyType"),
                p.get("KeyFormat"),
                p.tag_specs(),
            )?;
            let mut w = XmlWriter::new_fragment();
            w.elem("keyName", &k.name)
                .elem("keyFingerprint", &k.fingerprint)
                .elem("keyMaterial", &material)
                .elem("keyPairId", &k.id);
            tag_set(&mut w, &k.tags);
            Ok(w.finish())
        })(),
        "ImportKeyPair" => (|| {
            let raw = p.required("PublicKeyMaterial")?;
            let decoded = base64::engine::general_purpose::STANDARD
                .decode(raw)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .unwrap_or_else(|| raw.to_string());
            let k = svc.import_key_pair(region, p.required("KeyName")?, &decoded, p.tag_specs())?;
            let mut w = XmlWriter::new_fragment();
            w.elem("keyFingerprint", &k.fingerprint)
                .elem("keyName", &k.name)
                .elem("keyPairId", &k.id);
            tag_set(&mut w, &k.tags);
            Ok(w.finish())
        })(),
        "DeleteKeyPair" => (|| {
            let id = svc.delete_key_pair(region, p.get("KeyName"), p.get("KeyPairId"))?;
            let mut w = XmlWriter::new_fragment();
            w.elem("return", "true").opt("keyPairId", id.as_deref());
            Ok(w.finish())
        })(),
        "DescribeKeyPairs" => describe_key_pairs(svc, region, p),
        _ => return None,
    })
}

fn acl_entry(p: &Params) -> Result<AclEntry, AwsError> {
    let from_to = match (p.int("PortRange.From")?, p.int("PortRange.To")?) {
        (Some(f), Some(t)) => Some((f, t)),
        _ => None,
    };
    let icmp = match (p.int("Icmp.Type")?, p.int("Icmp.Code")?) {
        (Some(t), Some(c)) => Some((t, c)),
        _ => None,
    };
    Ok(AclEntry {
        rule_number: p
            .int("RuleNumber")?
            .ok_or_else(|| super::errors::missing("RuleNumber"))?,
        egress: p.flag("Egress").unwrap_or(false),
        protocol: protocol_number(p.required("Protocol")?)?,
        action: p.required("RuleAction")?.to_string(),
        cidr: p.get("CidrBlock").map(str::to_string),
        ipv6_cidr: p.get("Ipv6CidrBlock").map(str::to_string),
        port_range: from_to,
        icmp,
    })
}

fn acl(w: &mut XmlWriter, a: &NetworkAcl, account: &str) {
    w.elem("networkAclId", &a.id)
        .elem("vpcId", &a.vpc_id)
        .elem("default", &a.is_default.to_string())
        .open("entrySet", None);
    for e in &a.entries {
        w.open("item", None)
            .elem("ruleNumber", &e.rule_number.to_string())
            .elem("protocol", &e.protocol)
            .elem("ruleAction", &e.action)
            .elem("egress", &e.egress.to_string())
            .opt("cidrBlock", e.cidr.as_deref())
            .opt("ipv6CidrBlock", e.ipv6_cidr.as_deref());
        if let Some((t, c)) = e.icmp {
            w.open("icmpTypeCode", None)
                .elem("type", &t.to_string())
                .elem("code", &c.to_string())
                .close();
        }
        if let Some((f, t)) = e.port_range {
            w.open("portRange", None)
                .elem("from", &f.to_string())
                .elem("to", &t.to_string())
                .close();
        }
        w.close();
    }
    w.close().open("associationSet", None);
    for x in &a.associations {
        w.open("item", None)
            .elem("networkAclAssociationId", &x.id)
            .elem("networkAclId", &a.id)
            .elem("subnetId", &x.subnet_id)
            .close();
    }
    w.close();
    tag_set(w, &a.tags);
    w.elem("ownerId", account);
}

fn dhcp(w: &mut XmlWriter, d: &DhcpOptions, account: &str) {
    w.elem("dhcpOptionsId", &d.id)
        .open("dhcpConfigurationSet", None);
    for (k, values) in &d.configurations {
        w.open("item", None).elem("key", k).open("valueSet", None);
        for v in values {
            w.open("item", None).elem("value", v).close();
        }
        w.close().close();
    }
    w.close();
    tag_set(w, &d.tags);
    w.elem("ownerId", account);
}

fn egress_gateway(w: &mut XmlWriter, g: &InternetGateway) {
    w.elem("egressOnlyInternetGatewayId", &g.id)
        .open("attachmentSet", None);
    if let Some(v) = &g.vpc_id {
        w.open("item", None)
            .elem("state", "attached")
            .elem("vpcId", v)
            .close();
    }
    w.close();
    tag_set(w, &g.tags);
}

/// The answer of (Dis)AssociateVpcCidrBlock / (Dis)AssociateSubnetCidrBlock.
fn block_answer(
    owner: &str,
    a: &CidrAssociation,
    v6: bool,
    owner_key: &str,
    state: &str,
) -> String {
    let mut w = XmlWriter::new_fragment();
    w.elem(owner_key, owner);
    if v6 {
        w.open("ipv6CidrBlockAssociation", None)
            .elem("associationId", &a.id)
            .elem("ipv6CidrBlock", &a.cidr)
            .open("ipv6CidrBlockState", None)
            .elem("state", state)
            .close();
        if owner_key == "vpcId" {
            w.elem("ipv6Pool", "Amazon");
        }
        w.close();
    } else {
        w.open("cidrBlockAssociation", None)
            .elem("associationId", &a.id)
            .elem("cidrBlock", &a.cidr)
            .open("cidrBlockState", None)
            .elem("state", state)
            .close()
            .close();
    }
    w.finish()
}

/// What an endpoint's description shows of other records: its subnets' zones and its
/// security groups' names.
#[derive(Default)]
struct EndpointLinks {
    zones: Vec<String>,
    group_names: Vec<String>,
}

fn endpoint_links(
    svc: &Ec2Service,
    region: &str,
    e: &VpcEndpoint,
) -> Result<EndpointLinks, AwsError> {
    svc.read(region, |r| {
        Ok(EndpointLinks {
            zones: e
                .subnet_ids
                .iter()
                .filter_map(|s| r.subnet(s).ok().map(|x| x.availability_zone.clone()))
                .collect(),
            group_names: e
                .group_ids
                .iter()
                .map(|g| r.group(g).map(|x| x.name.clone()).unwrap_or_default())
                .collect(),
        })
    })
}

fn endpoint(
    w: &mut XmlWriter,
    e: &VpcEndpoint,
    region: &str,
    account: &str,
    links: &EndpointLinks,
) {
    w.elem("vpcEndpointId", &e.id)
        .elem("vpcEndpointType", &e.endpoint_type)
        .elem("vpcId", &e.vpc_id)
        .elem("serviceName", &e.service_name)
        .elem("serviceRegion", region)
        .elem("state", &e.state)
        .opt("policyDocument", e.policy.as_deref())
        .open("routeTableIdSet", None);
    for t in &e.route_table_ids {
        w.elem("item", t);
    }
    w.close().open("subnetIdSet", None);
    for s in &e.subnet_ids {
        w.elem("item", s);
    }
    w.close().open("groupSet", None);
    for (g, name) in e.group_ids.iter().zip(&links.group_names) {
        w.open("item", None)
            .elem("groupId", g)
            .elem("groupName", name)
            .close();
    }
    w.close()
        .elem("ipAddressType", "ipv4")
        .open("dnsOptions", None)
        .elem("dnsRecordIpType", "ipv4")
        .close()
        .elem("privateDnsEnabled", &e.private_dns_enabled.to_string())
        .elem("requesterManaged", "false")
        .open("networkInterfaceIdSet", None);
    for n in &e.network_interface_ids {
        w.elem("item", n);
    }
    w.close().open("dnsEntrySet", None);
    for (name, zone) in dns_entries(region, e, &links.zones) {
        w.open("item", None)
            .elem("dnsName", &name)
            .elem("hostedZoneId", &zone)
            .close();
    }
    w.close().elem("creationTimestamp", &e.created);
    tag_set(w, &e.tags);
    w.elem("ownerId", account);
}

fn unsuccessful(missing: &[String], code: &str, message: impl Fn(&str) -> String) -> String {
    let mut w = XmlWriter::new_fragment();
    w.open("unsuccessful", None);
    for id in missing {
        w.open("item", None)
            .open("error", None)
            .elem("code", code)
            .elem("message", &message(id))
            .close()
            .elem("resourceId", id)
            .close();
    }
    w.close();
    w.finish()
}

fn entries(p: &Params, prefix: &str) -> Vec<(String, Option<String>)> {
    p.items(prefix)
        .into_iter()
        .filter_map(|e| {
            Some((
                e.get("Cidr")?.to_string(),
                e.get("Description").map(str::to_string),
            ))
        })
        .collect()
}

fn prefix_list(w: &mut XmlWriter, pl: &PrefixList, region: &str, account: &str) {
    w.elem("prefixListId", &pl.id)
        .elem("addressFamily", &pl.address_family)
        .elem("state", "create-complete")
        .elem(
            "prefixListArn",
            &format!("arn:aws:ec2:{region}:{account}:prefix-list/{}", pl.id),
        )
        .elem("prefixListName", &pl.name)
        .elem("maxEntries", &pl.max_entries.to_string())
        .elem("version", &pl.version.to_string());
    tag_set(w, &pl.tags);
    w.elem("ownerId", account);
}

fn describe_managed_lists(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    let ids = p.strings("PrefixListId");
    let filters = p.filters();
    let mut w = XmlWriter::new_fragment();
    w.open("prefixListSet", None);
    for l in managed_lists(region) {
        let pass = filters.iter().all(|(f, v)| match f.as_str() {
            "prefix-list-id" => v.contains(&l.id),
            "prefix-list-name" => v.contains(&l.name),
            "owner-id" => v.iter().any(|x| x == "AWS"),
            _ => false,
        });
        if (!ids.is_empty() && !ids.contains(&l.id)) || !pass {
            continue;
        }
        w.open("item", None)
            .elem("prefixListId", &l.id)
            .elem("addressFamily", "IPv4")
            .elem("state", "create-complete")
            .elem(
                "prefixListArn",
                &format!("arn:aws:ec2:{region}:aws:prefix-list/{}", l.id),
            )
            .elem("prefixListName", &l.name)
            .elem("version", "1")
            .raw("<tagSet/>")
            .elem("ownerId", "AWS")
            .close();
    }
    let records = svc.records(region)?;
    for id in &ids {
        let known = managed_lists(region).iter().any(|l| &l.id == id)
            || records
                .iter()
                .any(|r| matches!(r, Resource::PrefixList(x) if &x.id == id));
        if !known {
            super::errors::check_id(id, "pl")?;
            return Err(super::errors::not_found(id));
        }
    }
    for r in &records {
        let Resource::PrefixList(pl) = r else {
            continue;
        };
        if (!ids.is_empty() && !ids.contains(&pl.id)) || !super::filters::matches(r, &filters)? {
            continue;
        }
        w.open("item", None);
        prefix_list(&mut w, pl, region, svc.account_id());
        w.close();
    }
    w.close();
    Ok(w.finish())
}

fn flow_log(w: &mut XmlWriter, f: &FlowLog) {
    w.elem("creationTime", &f.created)
        .opt("deliverLogsPermissionArn", f.deliver_role_arn.as_deref())
        .elem("deliverLogsStatus", "SUCCESS")
        .elem("flowLogId", &f.id)
        .elem("flowLogStatus", "ACTIVE")
        .opt("logGroupName", f.log_group_name.as_deref())
        .elem("resourceId", &f.resource_id)
        .elem("trafficType", &f.traffic_type)
        .elem("logDestinationType", &f.destination_type)
        .opt("logDestination", f.destination.as_deref())
        .elem("logFormat", &f.log_format)
        .elem(
            "maxAggregationInterval",
            &f.max_aggregation_interval.to_string(),
        );
    if f.destination_type == "s3" {
        w.open("destinationOptions", None)
            .elem("fileFormat", "plain-text")
            .elem("hiveCompatiblePartitions", "false")
            .elem("perHourPartition", "false")
            .close();
    }
    tag_set(w, &f.tags);
}

fn peering_answer(svc: &Ec2Service, region: &str, pc: &PeeringConnection) -> Answer {
    let vpcs = svc.records(region)?;
    Ok(one("vpcPeeringConnection", |w| {
        peering(w, pc, region, svc.account_id(), &vpcs)
    }))
}

fn peering(
    w: &mut XmlWriter,
    pc: &PeeringConnection,
    region: &str,
    account: &str,
    records: &[Resource],
) {
    let cidr = |id: &str| {
        records.iter().find_map(|r| match r {
            Resource::Vpc(v) if v.id == id => Some(v.cidr.clone()),
            _ => None,
        })
    };
    for (tag, vpc, at) in [
        (
            "accepterVpcInfo",
            &pc.accepter_vpc_id,
            pc.accepter_region.as_str(),
        ),
        ("requesterVpcInfo", &pc.requester_vpc_id, region),
    ] {
        w.open(tag, None);
        if pc.status == "active" || tag == "requesterVpcInfo" {
            if let Some(c) = cidr(vpc) {
                w.elem("cidrBlock", &c)
                    .open("cidrBlockSet", None)
                    .open("item", None)
                    .elem("cidrBlock", &c)
                    .close()
                    .close();
            }
            w.open("peeringOptions", None)
                .elem("allowDnsResolutionFromRemoteVpc", "false")
                .elem("allowEgressFromLocalClassicLinkToRemoteVpc", "false")
                .elem("allowEgressFromLocalVpcToRemoteClassicLink", "false")
                .close();
        }
        w.elem("ownerId", account)
            .elem("vpcId", vpc)
            .elem("region", at)
            .close();
    }
    let message = match pc.status.as_str() {
        "pending-acceptance" => format!("Pending Acceptance by {account}"),
        "active" => "Active".into(),
        "rejected" => format!("Rejected by {account}"),
        "failed" => "Failed due to incorrect VPC-ID, Account ID, or overlapping CIDR range".into(),
        _ => format!("Deleted by {account}"),
    };
    if pc.status == "pending-acceptance" {
        w.elem("expirationTime", &pc.expiration);
    }
    w.open("status", None)
        .elem("code", &pc.status)
        .elem("message", &message)
        .close();
    tag_set(w, &pc.tags);
    w.elem("vpcPeeringConnectionId", &pc.id);
}

fn describe_key_pairs(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    let names = p.strings("KeyName");
    let ids = p.strings("KeyPairId");
    let with_public = p.flag("IncludePublicKey").unwrap_or(false);
    let filters = p.filters();
    let records = svc.records(region)?;
    for n in &names {
        svc.read(region, |r| r.key_pair_named(n).map(|_| ()))?;
    }
    for id in &ids {
        svc.read(region, |r| r.key_pair(id).map(|_| ()))?;
    }
    let mut w = XmlWriter::new_fragment();
    w.open("keySet", None);
    for r in &records {
        let Resource::KeyPair(k) = r else { continue };
        let named =
            (names.is_empty() && ids.is_empty()) || names.contains(&k.name) || ids.contains(&k.id);
        if !named || !super::filters::matches(r, &filters)? {
            continue;
        }
        w.open("item", None)
            .elem("keyPairId", &k.id)
            .elem("keyType", &k.key_type);
        tag_set(&mut w, &k.tags);
        if with_public {
            w.elem("publicKey", &k.public_key);
        }
        w.elem("createTime", &k.created)
            .elem("keyName", &k.name)
            .elem("keyFingerprint", &k.fingerprint)
            .close();
    }
    w.close();
    Ok(w.finish())
}

fn describe_prefix_lists(region: &str, p: &Params) -> String {
    let ids = p.strings("PrefixListId");
    let filters = p.filters();
    let mut w = XmlWriter::new_fragment();
    w.open("prefixListSet", None);
    for l in managed_lists(region) {
        let pass = filters.iter().all(|(f, v)| match f.as_str() {
            "prefix-list-id" => v.contains(&l.id),
            "prefix-list-name" => v.contains(&l.name),
            _ => false,
        });
        if (!ids.is_empty() && !ids.contains(&l.id)) || !pass {
            continue;
        }
        w.open("item", None)
            .elem("prefixListId", &l.id)
            .elem("prefixListName", &l.name)
            .open("cidrSet", None);
        for c in l.cidrs {
            w.elem("item", c);
        }
        w.close().close();
    }
    w.close();
    w.finish()
}

fn describe_endpoint_services(region: &str, p: &Params) -> Answer {
    let wanted = p.strings("ServiceName");
    let filters = p.filters();
    let prefix = format!("com.amazonaws.{region}.");
    for name in &wanted {
        let known = name
            .strip_prefix(&prefix)
            .is_some_and(|s| SERVICES.iter().any(|(x, _, _)| *x == s));
        if !known {
            return Err(AwsError::bad_request(
                "InvalidServiceName",
                format!("The Vpc Endpoint Service '{name}' does not exist"),
            ));
        }
    }
    let zones: Vec<String> = super::zones::zones(region)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let mut names = Vec::new();
    let mut details = XmlWriter::new_fragment();
    details.open("serviceDetailSet", None);
    for (service, gateway, interface) in SERVICES {
        let name = format!("{prefix}{service}");
        let types: Vec<&str> = [(*interface, "Interface"), (*gateway, "Gateway")]
            .iter()
            .filter(|(on, _)| *on)
            .map(|(_, t)| *t)
            .collect();
        for t in types {
            let pass = filters.iter().all(|(f, v)| match f.as_str() {
                "service-name" => v.contains(&name),
                "service-type" => v.iter().any(|x| x == t),
                "owner" => v.iter().any(|x| x == "amazon"),
                _ => false,
            });
            if (!wanted.is_empty() && !wanted.contains(&name)) || !pass {
                continue;
            }
            if !names.contains(&name) {
                names.push(name.clone());
            }
            let digest = super::endpoints::digest::compute_hex(&format!("{name}/{t}"));
            details
                .open("item", None)
                .elem("serviceName", &name)
                .elem("serviceId", &format!("vpce-svc-{}", &digest[..17]))
                .open("serviceType", None)
                .open("item", None)
                .elem("serviceType", t)
                .close()
                .close()
                .open("availabilityZoneSet", None);
            for z in &zones {
                details.elem("item", z);
            }
            details
                .close()
                .elem("owner", "amazon")
                .open("baseEndpointDnsNameSet", None)
                .elem("item", &format!("{service}.{region}.vpce.amazonaws.com"))
                .close();
            if t == "Interface" {
                details.elem(
                    "privateDnsName",
                    &format!("{service}.{region}.amazonaws.com"),
                );
            }
            details
                .elem("vpcEndpointPolicySupported", "true")
                .elem("acceptanceRequired", "false")
                .elem("managesVpcEndpoints", "false")
                .open("supportedIpAddressTypeSet", None)
                .elem("item", "ipv4")
                .close()
                .raw("<tagSet/>")
                .close();
        }
    }
    details.close();
    let mut w = XmlWriter::new_fragment();
    w.open("serviceNameSet", None);
    for n in &names {
        w.elem("item", n);
    }
    w.close().raw(&details.finish());
    Ok(w.finish())
}
