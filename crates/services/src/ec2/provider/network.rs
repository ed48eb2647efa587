//! CloudFormation providers of the networking extras: network ACLs and their entries and subnet
//! associations, DHCP options and their VPC association, egress-only gateways, VPC and subnet
//! CIDR blocks, VPC endpoints, flow logs, peering connections and prefix lists.

use super::tagged::{Tagged, TaggedKind, vpc_child};
use super::{SERVICE, TAGGED_NOT_FOUND, boolean, create_tags, int, retag};
use crate::ec2::Ec2Service;
use crate::ec2::endpoints::{EndpointChange, EndpointRequest, dns_entries};
use crate::ec2::links::FlowLogRequest;
use crate::ec2::model::Tags;
use crate::ec2::model::{AclEntry, Resource};
use crate::providers::declared::{self, Answer, Declared, Made, refuse_other_changes};
use crate::providers::{ProviderServices, json_text, list, required, scalar, scalar_value};
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let ec2 = || s.ec2.clone();
    declared::register(r, Tagged::<Acl>::new(ec2()));
    declared::register(r, AclEntryDecl(ec2()));
    declared::register(r, AclAssociation(ec2()));
    declared::register(r, Tagged::<Dhcp>::new(ec2()));
    declared::register(r, DhcpAssociation(ec2()));
    declared::register(r, Tagged::<EgressGateway>::new(ec2()));
    declared::register(r, VpcBlock(ec2()));
    declared::register(r, SubnetBlock(ec2()));
    declared::register(r, Endpoint(ec2()));
    declared::register(r, Tagged::<FlowLogDecl>::new(ec2()));
    declared::register(r, Tagged::<Peering>::new(ec2()));
    declared::register(r, PrefixListDecl(ec2()));
}

/// A list of strings property.
pub(super) fn strings(props: &Map<String, Value>, key: &str) -> Result<Vec<String>, ProviderError> {
    Ok(list(props, key)?.iter().filter_map(scalar_value).collect())
}

vpc_child!(
    Acl,
    "AWS::EC2::NetworkAcl",
    "Id",
    create_network_acl,
    delete_network_acl
);

/// AWS::EC2::NetworkAclEntry: Ref is `<acl>|<egress>|<rule number>`, which names it.
struct AclEntryDecl(Arc<Ec2Service>);

fn acl_entry(props: &Map<String, Value>) -> Result<(String, AclEntry), ProviderError> {
    let pair = |key: &str, a: &str, b: &str| -> Result<Option<(i64, i64)>, ProviderError> {
        match props.get(key).and_then(Value::as_object) {
            Some(o) => Ok(match (int(o, a)?, int(o, b)?) {
                (Some(x), Some(y)) => Some((x, y)),
                _ => None,
            }),
            None => Ok(None),
        }
    };
    let protocol = crate::ec2::acls::protocol_number(&required(props, "Protocol")?)
        .map_err(|e| ProviderError::Failed(e.message))?;
    Ok((
        required(props, "NetworkAclId")?,
        AclEntry {
            rule_number: int(props, "RuleNumber")?.unwrap_or(0),
            egress: boolean(props, "Egress")?.unwrap_or(false),
            protocol,
            action: required(props, "RuleAction")?.to_ascii_lowercase(),
            cidr: scalar(props, "CidrBlock")?,
            ipv6_cidr: scalar(props, "Ipv6CidrBlock")?,
            port_range: pair("PortRange", "From", "To")?,
            icmp: pair("Icmp", "Type", "Code")?,
        },
    ))
}

#[async_trait::async_trait]
impl Declared for AclEntryDecl {
    const ATTRIBUTES: &'static [&'static str] = &["Id"];
    const TYPE: &'static str = "AWS::EC2::NetworkAclEntry";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "NetworkAclId",
        "RuleNumber",
        "Protocol",
        "RuleAction",
        "Egress",
        "CidrBlock",
        "Ipv6CidrBlock",
        "Icmp",
        "PortRange",
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let (acl, e) = acl_entry(props)?;
        let id = format!("{acl}|{}|{}", e.egress, e.rule_number);
        self.0.put_network_acl_entry(&ctx.region, &acl, e, false)?;
        Ok(Made::new(id.clone()).with("Id", id))
    }

    /// Protocol, action, blocks and ports change in place (ReplaceNetworkAclEntry).
    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let (acl, e) = acl_entry(new)?;
        self.0.put_network_acl_entry(&ctx.region, &acl, e, true)?;
        Ok(Made::new(id).with("Id", id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        _: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let (acl, e) = acl_entry(props)?;
        Ok(self
            .0
            .delete_network_acl_entry(&ctx.region, &acl, e.rule_number, e.egress)?)
    }
}

/// AWS::EC2::SubnetNetworkAclAssociation: replaces the subnet's association; deleting it puts
/// the subnet back in its VPC's default ACL.
struct AclAssociation(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for AclAssociation {
    const ATTRIBUTES: &'static [&'static str] = &["AssociationId"];
    const TYPE: &'static str = "AWS::EC2::SubnetNetworkAclAssociation";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["SubnetId", "NetworkAclId"];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let id = self.0.associate_network_acl(
            &ctx.region,
            &required(props, "SubnetId")?,
            &required(props, "NetworkAclId")?,
        )?;
        Ok(Made::new(id.clone()).with("AssociationId", id))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        self.0.restore_default_network_acl(&ctx.region, id)?;
        Ok(())
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<cumulo_engine::Observed>> {
        let exists = self
            .0
            .read(&ctx.region, |r| Ok(r.acl_of_association(id).is_ok()))?;
        Ok(exists.then(|| cumulo_engine::Observed {
            properties: Map::new(),
            attributes: Map::from_iter([("AssociationId".into(), json!(id))]),
        }))
    }
}

struct Dhcp;

impl TaggedKind for Dhcp {
    const TYPE: &'static str = "AWS::EC2::DHCPOptions";
    const PROPERTIES: &'static [&'static str] = &[
        "DomainName",
        "DomainNameServers",
        "NetbiosNameServers",
        "NetbiosNodeType",
        "NtpServers",
        "Ipv6AddressPreferredLeaseTime",
        "Tags",
    ];
    const ID_ATTRIBUTE: &'static str = "DhcpOptionsId";

    fn create(
        ec2: &Ec2Service,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
        tags: Tags,
    ) -> Answer<String> {
        let mut configurations = Vec::new();
        for (key, name) in [
            ("DomainName", "domain-name"),
            ("NetbiosNodeType", "netbios-node-type"),
            (
                "Ipv6AddressPreferredLeaseTime",
                "ipv6-address-preferred-lease-time",
            ),
        ] {
            if let Some(v) = scalar(props, key)? {
                configurations.push((name.to_string(), vec![v]));
            }
        }
        for (key, name) in [
            ("DomainNameServers", "domain-name-servers"),
            ("NetbiosNameServers", "netbios-name-servers"),
            ("NtpServers", "ntp-servers"),
        ] {
            let values = strings(props, key)?;
            if !values.is_empty() {
                configurations.push((name.to_string(), values));
            }
        }
        let d = ec2.create_dhcp_options(&ctx.region, configurations, tags)?;
        Ok(d.id)
    }

    fn delete(ec2: &Ec2Service, region: &str, id: &str) -> Answer<()> {
        Ok(ec2.delete_dhcp_options(region, id)?)
    }
}

/// AWS::EC2::VPCDHCPOptionsAssociation: Ref is `<options>|<vpc>`; deleting it returns the
/// VPC to the region's default options.
struct DhcpAssociation(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for DhcpAssociation {
    const ATTRIBUTES: &'static [&'static str] = &[];
    const TYPE: &'static str = "AWS::EC2::VPCDHCPOptionsAssociation";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["DhcpOptionsId", "VpcId"];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let (options, vpc) = (required(props, "DhcpOptionsId")?, required(props, "VpcId")?);
        self.0.associate_dhcp_options(&ctx.region, &options, &vpc)?;
        Ok(Made::new(format!("{options}|{vpc}")))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        _: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let (options, vpc) = (required(props, "DhcpOptionsId")?, required(props, "VpcId")?);
        let current = self
            .0
            .read(&ctx.region, |r| Ok(r.vpc(&vpc)?.dhcp_options_id.clone()))?;
        if current == options {
            self.0
                .associate_dhcp_options(&ctx.region, "default", &vpc)?;
        }
        Ok(())
    }
}

vpc_child!(
    EgressGateway,
    "AWS::EC2::EgressOnlyInternetGateway",
    "Id",
    create_egress_only_gateway,
    delete_egress_only_gateway
);

const IPAM: &str = "cumulo does not emulate IPAM";

/// AWS::EC2::VPCCidrBlock: Ref and Id are the association id.
struct VpcBlock(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for VpcBlock {
    const ATTRIBUTES: &'static [&'static str] = &["Id", "IpSource", "Ipv6AddressAttribute"];
    const TYPE: &'static str = "AWS::EC2::VPCCidrBlock";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "VpcId",
        "CidrBlock",
        "AmazonProvidedIpv6CidrBlock",
        "Ipv6CidrBlockNetworkBorderGroup",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        ("Ipv6Pool", "cumulo's IPv6 blocks are Amazon-provided"),
        ("Ipv6CidrBlock", "cumulo's IPv6 blocks are Amazon-provided"),
        ("Ipv4IpamPoolId", IPAM),
        ("Ipv4NetmaskLength", IPAM),
        ("Ipv6IpamPoolId", IPAM),
        ("Ipv6NetmaskLength", IPAM),
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let (a, v6) = self.0.associate_vpc_cidr_block(
            &ctx.region,
            &required(props, "VpcId")?,
            scalar(props, "CidrBlock")?.as_deref(),
            boolean(props, "AmazonProvidedIpv6CidrBlock")?.unwrap_or(false),
        )?;
        let made = Made::new(a.id.clone())
            .with("Id", a.id)
            .with("IpSource", if v6 { "amazon" } else { "none" });
        Ok(if v6 {
            made.with("Ipv6AddressAttribute", "public")
        } else {
            made
        })
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        self.0.disassociate_vpc_cidr_block(&ctx.region, id)?;
        Ok(())
    }
}

/// AWS::EC2::SubnetCidrBlock: an IPv6 /64 of the VPC's block; Ref and Id are the association.
struct SubnetBlock(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for SubnetBlock {
    const ATTRIBUTES: &'static [&'static str] = &["Id", "Ipv6AddressAttribute", "IpSource"];
    const TYPE: &'static str = "AWS::EC2::SubnetCidrBlock";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["SubnetId", "Ipv6CidrBlock"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] =
        &[("Ipv6IpamPoolId", IPAM), ("Ipv6NetmaskLength", IPAM)];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let a = self.0.associate_subnet_cidr_block(
            &ctx.region,
            &required(props, "SubnetId")?,
            &required(props, "Ipv6CidrBlock")?,
        )?;
        Ok(Made::new(a.id.clone())
            .with("Id", a.id)
            .with("Ipv6AddressAttribute", "public")
            .with("IpSource", "amazon"))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        self.0.disassociate_subnet_cidr_block(&ctx.region, id)?;
        Ok(())
    }
}

/// AWS::EC2::VPCEndpoint: route tables, subnets, groups, policy, private DNS and tags change in
/// place (ModifyVpcEndpoint); DnsEntries are `<zone>:<name>` as CloudFormation reports them.
struct Endpoint(Arc<Ec2Service>);

fn policy(props: &Map<String, Value>) -> Result<Option<String>, ProviderError> {
    json_text(props, "PolicyDocument")
}

/// What `new` has that `old` has not (swap them for what was removed).
pub(super) fn added(old: &[String], new: &[String]) -> Vec<String> {
    new.iter().filter(|x| !old.contains(x)).cloned().collect()
}

#[async_trait::async_trait]
impl Declared for Endpoint {
    const ATTRIBUTES: &'static [&'static str] = &[
        "Id",
        "CreationTimestamp",
        "DnsEntries",
        "NetworkInterfaceIds",
    ];
    const TYPE: &'static str = "AWS::EC2::VPCEndpoint";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "VpcId",
        "ServiceName",
        "VpcEndpointType",
        "RouteTableIds",
        "SubnetIds",
        "SecurityGroupIds",
        "PrivateDnsEnabled",
        "PolicyDocument",
        "Tags",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "DnsOptions",
            "cumulo's endpoints have IPv4 DNS records only",
        ),
        ("IpAddressType", "cumulo's endpoints are IPv4"),
        ("ServiceNetworkArn", "cumulo does not emulate VPC Lattice"),
        (
            "ResourceConfigurationArn",
            "cumulo does not emulate VPC Lattice",
        ),
        (
            "ServiceRegion",
            "cumulo's endpoints reach services of their own region",
        ),
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let e = self.0.create_vpc_endpoint(
            &ctx.region,
            EndpointRequest {
                vpc_id: required(props, "VpcId")?,
                service_name: required(props, "ServiceName")?,
                endpoint_type: scalar(props, "VpcEndpointType")?,
                route_table_ids: strings(props, "RouteTableIds")?,
                subnet_ids: strings(props, "SubnetIds")?,
                group_ids: strings(props, "SecurityGroupIds")?,
                private_dns_enabled: boolean(props, "PrivateDnsEnabled")?,
                policy: policy(props)?,
                tags: create_tags(ctx, props)?,
            },
        )?;
        self.made(ctx, &e.id)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(
            Self::TYPE,
            old,
            new,
            &[
                "RouteTableIds",
                "SubnetIds",
                "SecurityGroupIds",
                "PrivateDnsEnabled",
                "PolicyDocument",
                "Tags",
            ],
        )?;
        let pair = |k: &str| -> Result<(Vec<String>, Vec<String>), ProviderError> {
            Ok((strings(old, k)?, strings(new, k)?))
        };
        let (t0, t1) = pair("RouteTableIds")?;
        let (s0, s1) = pair("SubnetIds")?;
        let (g0, g1) = pair("SecurityGroupIds")?;
        let new_policy = policy(new)?;
        self.0.modify_vpc_endpoint(
            &ctx.region,
            id,
            EndpointChange {
                add_route_tables: added(&t0, &t1),
                remove_route_tables: added(&t1, &t0),
                add_subnets: added(&s0, &s1),
                remove_subnets: added(&s1, &s0),
                add_groups: added(&g0, &g1),
                remove_groups: added(&g1, &g0),
                reset_policy: new_policy.is_none(),
                policy: new_policy,
                private_dns_enabled: Some(boolean(new, "PrivateDnsEnabled")?.unwrap_or(false)),
            },
        )?;
        retag(&self.0, ctx, id, new)?;
        self.made(ctx, id)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        let missing = self
            .0
            .delete_vpc_endpoints(&ctx.region, &[id.to_string()])?;
        if !missing.is_empty() {
            return Err(ProviderError::NotFound(id.to_string()).into());
        }
        Ok(())
    }

    fn made(&self, ctx: &ProviderContext, id: &str) -> Answer<Made> {
        let (e, zones) = self.0.read(&ctx.region, |r| {
            let e = r.endpoint(id)?.clone();
            let zones: Vec<String> = e
                .subnet_ids
                .iter()
                .filter_map(|s| r.subnet(s).ok().map(|x| x.availability_zone.clone()))
                .collect();
            Ok((e, zones))
        })?;
        let dns: Vec<String> = dns_entries(&ctx.region, &e, &zones)
            .into_iter()
            .map(|(name, zone)| format!("{zone}:{name}"))
            .collect();
        Ok(Made::new(id)
            .with("Id", id)
            .with("CreationTimestamp", e.created.clone())
            .with("DnsEntries", json!(dns))
            .with("NetworkInterfaceIds", json!(e.network_interface_ids)))
    }
}

/// AWS::EC2::FlowLog: stored; no traffic flows, so no records are ever delivered.
struct FlowLogDecl;

impl TaggedKind for FlowLogDecl {
    const TYPE: &'static str = "AWS::EC2::FlowLog";
    const PROPERTIES: &'static [&'static str] = &[
        "ResourceId",
        "ResourceType",
        "TrafficType",
        "LogDestination",
        "LogDestinationType",
        "LogGroupName",
        "DeliverLogsPermissionArn",
        "LogFormat",
        "MaxAggregationInterval",
        "Tags",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        ("DeliverCrossAccountRole", "cumulo emulates one account"),
        (
            "DestinationOptions",
            "cumulo's flow logs deliver no files to shape",
        ),
    ];
    const LIMITATION: Option<&'static str> =
        Some("cumulo: no traffic flows, so this flow log never delivers records");
    const ID_ATTRIBUTE: &'static str = "Id";

    fn create(
        ec2: &Ec2Service,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
        tags: Tags,
    ) -> Answer<String> {
        let resource_type = required(props, "ResourceType")?;
        let mut traffic = scalar(props, "TrafficType")?;
        if traffic.is_none() {
            traffic = Some("ALL".into());
        }
        let out = ec2.create_flow_logs(
            &ctx.region,
            FlowLogRequest {
                resource_ids: vec![required(props, "ResourceId")?],
                resource_type,
                traffic_type: traffic,
                destination_type: scalar(props, "LogDestinationType")?,
                destination: scalar(props, "LogDestination")?,
                log_group_name: scalar(props, "LogGroupName")?,
                deliver_role_arn: scalar(props, "DeliverLogsPermissionArn")?,
                log_format: scalar(props, "LogFormat")?,
                max_aggregation_interval: int(props, "MaxAggregationInterval")?,
                tags,
                client_token: None,
            },
        )?;
        match (out.made.into_iter().next(), out.refused.into_iter().next()) {
            (Some(f), _) => Ok(f.id),
            (None, Some(why)) => Err(ProviderError::Failed(why.message).into()),
            (None, None) => Err(ProviderError::Failed("no flow log was made".into()).into()),
        }
    }

    fn delete(ec2: &Ec2Service, region: &str, id: &str) -> Answer<()> {
        if !ec2.delete_flow_logs(region, &[id.to_string()])?.is_empty() {
            return Err(ProviderError::NotFound(id.to_string()).into());
        }
        Ok(())
    }
}

/// AWS::EC2::VPCPeeringConnection within the account and region: CloudFormation accepts it, so
/// it is active when created.
struct Peering;

impl TaggedKind for Peering {
    const TYPE: &'static str = "AWS::EC2::VPCPeeringConnection";
    const PROPERTIES: &'static [&'static str] =
        &["VpcId", "PeerVpcId", "PeerOwnerId", "PeerRegion", "Tags"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        ("PeerRoleArn", "cumulo emulates one account"),
        ("AssumeRoleRegion", "cumulo emulates one account"),
    ];
    const ID_ATTRIBUTE: &'static str = "Id";

    fn create(
        ec2: &Ec2Service,
        ctx: &ProviderContext,
        props: &Map<String, Value>,
        tags: Tags,
    ) -> Answer<String> {
        if let Some(owner) = scalar(props, "PeerOwnerId")?
            && owner != ec2.account_id()
        {
            return Err(crate::providers::unsupported_prop(
                Self::TYPE,
                "PeerOwnerId",
                "cumulo emulates one account",
            )
            .into());
        }
        let p = ec2.create_peering(
            &ctx.region,
            &required(props, "VpcId")?,
            &required(props, "PeerVpcId")?,
            scalar(props, "PeerRegion")?.as_deref(),
            tags,
        )?;
        if p.status == "failed" {
            return Err(ProviderError::Failed(format!(
                "VPC peering connection {} failed: the VPCs' CIDR blocks overlap",
                p.id
            ))
            .into());
        }
        ec2.set_peering_status(&ctx.region, &p.id, "active")?;
        Ok(p.id)
    }

    fn delete(ec2: &Ec2Service, region: &str, id: &str) -> Answer<()> {
        let p = ec2.peering_connection(region, id)?;
        if p.status != "deleted" {
            ec2.set_peering_status(region, id, "deleted")?;
        }
        Ok(())
    }
}

/// AWS::EC2::PrefixList: name, size, entries and tags change in place, each change a version.
struct PrefixListDecl(Arc<Ec2Service>);

fn list_entries(
    props: &Map<String, Value>,
) -> Result<Vec<(String, Option<String>)>, ProviderError> {
    list(props, "Entries")?
        .iter()
        .map(|e| {
            let o = e.as_object().ok_or_else(|| {
                ProviderError::Failed("Properties validation failed for resource with message: #/Entries: expected type: JSONObject".into())
            })?;
            Ok((required(o, "Cidr")?, scalar(o, "Description")?))
        })
        .collect()
}

#[async_trait::async_trait]
impl Declared for PrefixListDecl {
    const ATTRIBUTES: &'static [&'static str] = &["PrefixListId", "OwnerId", "Version", "Arn"];
    const TYPE: &'static str = "AWS::EC2::PrefixList";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "PrefixListName",
        "AddressFamily",
        "MaxEntries",
        "Entries",
        "Tags",
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let entries = list_entries(props)?;
        let max = int(props, "MaxEntries")?.unwrap_or(entries.len().max(1) as i64);
        let p = self.0.create_prefix_list(
            &ctx.region,
            &required(props, "PrefixListName")?,
            &required(props, "AddressFamily")?,
            max,
            entries,
            create_tags(ctx, props)?,
        )?;
        Ok(self.made(ctx, &p))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(
            Self::TYPE,
            old,
            new,
            &["PrefixListName", "MaxEntries", "Entries", "Tags"],
        )?;
        let (before, after) = (list_entries(old)?, list_entries(new)?);
        let remove: Vec<String> = before
            .iter()
            .filter(|(c, _)| !after.iter().any(|(x, _)| x == c))
            .map(|(c, _)| c.clone())
            .collect();
        let add: Vec<(String, Option<String>)> =
            after.into_iter().filter(|e| !before.contains(e)).collect();
        let name = scalar(new, "PrefixListName")?;
        let p = if add.is_empty()
            && remove.is_empty()
            && old.get("PrefixListName") == new.get("PrefixListName")
            && old.get("MaxEntries") == new.get("MaxEntries")
        {
            self.0.read(&ctx.region, |r| r.prefix_list(id).cloned())?
        } else {
            self.0.modify_prefix_list(
                &ctx.region,
                id,
                None,
                name.as_deref(),
                int(new, "MaxEntries")?,
                add,
                &remove,
            )?
        };
        retag(&self.0, ctx, id, new)?;
        Ok(self.made(ctx, &p))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        self.0.delete_prefix_list(&ctx.region, id)?;
        Ok(())
    }
}

impl PrefixListDecl {
    fn made(&self, ctx: &ProviderContext, p: &crate::ec2::model::PrefixList) -> Made {
        let account = self.0.account_id();
        Made::new(p.id.clone())
            .with("PrefixListId", p.id.clone())
            .with("OwnerId", account)
            .with("Version", p.version)
            .with(
                "Arn",
                format!("arn:aws:ec2:{}:{account}:prefix-list/{}", ctx.region, p.id),
            )
    }
}

/// The default network ACL of a VPC and a subnet's ACL association (VPC and Subnet GetAtt).
pub(super) fn default_acl(ec2: &Ec2Service, region: &str, vpc_id: &str) -> Answer<String> {
    Ok(ec2.read(region, |r| {
        Ok(r.items
            .values()
            .find_map(|x| match x {
                Resource::NetworkAcl(a) if a.vpc_id == vpc_id && a.is_default => Some(a.id.clone()),
                _ => None,
            })
            .unwrap_or_default())
    })?)
}
