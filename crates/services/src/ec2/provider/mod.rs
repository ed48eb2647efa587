//! CloudFormation providers of EC2's networking types, each a [`Declared`] mapping onto EC2's
//! typed operations. Ref and GetAtt follow AWS's resource reference; where AWS's attribute
//! names something cumulo does not emulate (a VPC's default network ACL, a subnet's ACL
//! association, Outposts), the attribute is absent and Fn::GetAtt of it fails by name.

use super::model::Tags;
use super::ops::RuleSpec;
use super::{AssociationTarget, Ec2Service};
use crate::providers::declared::{self, Answer, Declared, Made, refuse_other_changes};
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{ProviderServices, list, required, scalar, tags};
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use serde_json::{Map, Value, json};
use std::sync::Arc;

mod compute;
mod endpoint_services;
mod interfaces;
mod network;
mod tagged;
mod volumes;

use tagged::{Tagged, TaggedKind, vpc_child};

const SERVICE: &str = "Ec2";

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let ec2 = || s.ec2.clone();
    declared::register(r, Vpc(ec2()));
    declared::register(r, Subnet(ec2()));
    declared::register(r, Tagged::<RouteTable>::new(ec2()));
    declared::register(r, RouteDecl(ec2()));
    declared::register(r, Association(ec2()));
    declared::register(r, Tagged::<Gateway>::new(ec2()));
    declared::register(r, Attachment(ec2()));
    declared::register(r, Eip(ec2()));
    declared::register(r, Nat(ec2()));
    declared::register(r, Group(ec2()));
    declared::register(r, Rule::<false>(ec2()));
    declared::register(r, Rule::<true>(ec2()));
    network::register(r, s);
    compute::register(r, s);
    interfaces::register(r, s);
    volumes::register(r, s);
    endpoint_services::register(r, s);
}

/// The tags a created resource gets: the template's, the stack's, CloudFormation's own.
fn create_tags(ctx: &ProviderContext, props: &Map<String, Value>) -> Result<Tags, ProviderError> {
    let mut t: Tags = tags(ctx, props)?.into_iter().collect();
    t.extend(system_tags(ctx));
    Ok(t)
}

/// Brings a resource's user tags to what the template and stack want now.
fn retag(
    ec2: &Ec2Service,
    ctx: &ProviderContext,
    id: &str,
    props: &Map<String, Value>,
) -> Answer<()> {
    let live = ec2.read(&ctx.region, |r| {
        r.items
            .get(id)
            .map(|x| x.tags().clone())
            .ok_or_else(|| super::errors::not_found(id))
    })?;
    let change = TagChange::between(&live, &tags(ctx, props)?);
    let ids = [id.to_string()];
    if !change.remove.is_empty() {
        let keys: Vec<(String, Option<String>)> =
            change.remove.into_iter().map(|k| (k, None)).collect();
        ec2.delete_tags(&ctx.region, &ids, &keys)?;
    }
    if !change.set.is_empty() {
        ec2.create_tags(&ctx.region, &ids, &change.set.into_iter().collect())?;
    }
    Ok(())
}

fn boolean(props: &Map<String, Value>, key: &str) -> Result<Option<bool>, ProviderError> {
    Ok(scalar(props, key)?.map(|v| v.eq_ignore_ascii_case("true")))
}

fn int(props: &Map<String, Value>, key: &str) -> Result<Option<i64>, ProviderError> {
    scalar(props, key)?
        .map(|v| {
            v.parse::<i64>().map_err(|_| {
                ProviderError::Failed(format!(
                    "Properties validation failed for resource with message: #/{key}: expected type: Integer, found: String"
                ))
            })
        })
        .transpose()
}

const TAGGED_NOT_FOUND: &[&str] = &[
    "InvalidVpcID.NotFound",
    "InvalidSubnetID.NotFound",
    "InvalidRouteTableID.NotFound",
    "InvalidInternetGatewayID.NotFound",
    "InvalidGroup.NotFound",
    "InvalidAllocationID.NotFound",
    "NatGatewayNotFound",
    "InvalidAssociationID.NotFound",
    "InvalidRoute.NotFound",
    "InvalidSecurityGroupRuleId.NotFound",
    "InvalidPermission.NotFound",
    "Gateway.NotAttached",
    "InvalidNetworkAclID.NotFound",
    "InvalidNetworkAclEntry.NotFound",
    "InvalidDhcpOptionID.NotFound",
    "InvalidGatewayID.NotFound",
    "InvalidVpcEndpointId.NotFound",
    "InvalidFlowLogId.NotFound",
    "InvalidVpcPeeringConnectionID.NotFound",
    "InvalidPrefixListID.NotFound",
    "InvalidKeyPair.NotFound",
    "InvalidLaunchTemplateId.NotFound",
    "InvalidLaunchTemplateName.NotFoundException",
    "InvalidInstanceID.NotFound",
    "InvalidVolume.NotFound",
    "InvalidVpcEndpointServiceId.NotFound",
];

struct Vpc(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for Vpc {
    const ATTRIBUTES: &'static [&'static str] = &[
        "VpcId",
        "CidrBlock",
        "DefaultSecurityGroup",
        "DefaultNetworkAcl",
        "CidrBlockAssociations",
        "Ipv6CidrBlocks",
    ];
    const TYPE: &'static str = "AWS::EC2::VPC";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "CidrBlock",
        "EnableDnsHostnames",
        "EnableDnsSupport",
        "InstanceTenancy",
        "Tags",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        ("Ipv4IpamPoolId", "cumulo does not emulate IPAM"),
        ("Ipv4NetmaskLength", "cumulo does not emulate IPAM"),
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;
    /// AWS::EC2::VPCCidrBlock resources add blocks after the VPC was made.
    const LIVE_ATTRIBUTES: &'static [&'static str] = &["Ipv6CidrBlocks", "CidrBlockAssociations"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let cidr = required(props, "CidrBlock")?;
        let v = self.0.create_vpc(
            &ctx.region,
            &cidr,
            scalar(props, "InstanceTenancy")?.as_deref(),
            create_tags(ctx, props)?,
        )?;
        self.apply(ctx, &v.id, props)?;
        self.made(ctx, &v.id)
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
            &["EnableDnsHostnames", "EnableDnsSupport", "Tags"],
        )?;
        self.apply(ctx, id, new)?;
        retag(&self.0, ctx, id, new)?;
        self.made(ctx, id)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_vpc(&ctx.region, id)?)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<cumulo_engine::Observed>> {
        let made = self.made(ctx, id)?;
        let v = self.0.read(&ctx.region, |r| r.vpc(id).cloned())?;
        Ok(Some(cumulo_engine::Observed {
            properties: Map::from_iter([
                ("CidrBlock".into(), json!(v.cidr)),
                ("EnableDnsSupport".into(), json!(v.enable_dns_support)),
                ("EnableDnsHostnames".into(), json!(v.enable_dns_hostnames)),
                ("InstanceTenancy".into(), json!(v.instance_tenancy)),
            ]),
            attributes: made.attributes,
        }))
    }

    fn made(&self, ctx: &ProviderContext, id: &str) -> Answer<Made> {
        let (v, group) = self.0.read(&ctx.region, |r| {
            let v = r.vpc(id)?.clone();
            let group = r
                .items
                .values()
                .find_map(|x| match x {
                    super::Resource::SecurityGroup(g) if g.vpc_id == id && g.name == "default" => {
                        Some(g.id.clone())
                    }
                    _ => None,
                })
                .unwrap_or_default();
            Ok((v, group))
        })?;
        Ok(Made::new(id)
            .with("VpcId", id)
            .with("CidrBlock", v.cidr.clone())
            .with("DefaultSecurityGroup", group)
            .with(
                "DefaultNetworkAcl",
                network::default_acl(&self.0, &ctx.region, id)?,
            )
            .with(
                "CidrBlockAssociations",
                json!(
                    std::iter::once(v.cidr_association_id.clone())
                        .chain(v.secondary.iter().map(|a| a.id.clone()))
                        .collect::<Vec<_>>()
                ),
            )
            .with(
                "Ipv6CidrBlocks",
                json!(v.ipv6.iter().map(|a| a.cidr.clone()).collect::<Vec<_>>()),
            ))
    }
}

impl Vpc {
    fn apply(&self, ctx: &ProviderContext, id: &str, props: &Map<String, Value>) -> Answer<()> {
        // AWS's defaults: DNS support on, hostnames off.
        let support = boolean(props, "EnableDnsSupport")?.unwrap_or(true);
        let hostnames = boolean(props, "EnableDnsHostnames")?.unwrap_or(false);
        Ok(self
            .0
            .modify_vpc_attribute(&ctx.region, id, Some(support), Some(hostnames))?)
    }
}

struct Subnet(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for Subnet {
    const ATTRIBUTES: &'static [&'static str] = &[
        "SubnetId",
        "VpcId",
        "CidrBlock",
        "AvailabilityZone",
        "AvailabilityZoneId",
        "NetworkAclAssociationId",
        "Ipv6CidrBlocks",
        "BlockPublicAccessStates",
    ];
    const TYPE: &'static str = "AWS::EC2::Subnet";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "VpcId",
        "CidrBlock",
        "AvailabilityZone",
        "AvailabilityZoneId",
        "MapPublicIpOnLaunch",
        "Ipv6CidrBlock",
        "Tags",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "Ipv6Native",
            "cumulo's EC2 does not emulate IPv6-only subnets",
        ),
        (
            "AssignIpv6AddressOnCreation",
            "cumulo's EC2 does not emulate IPv6 subnets",
        ),
        ("EnableDns64", "cumulo's EC2 does not emulate DNS64"),
        ("OutpostArn", "cumulo does not emulate Outposts"),
        ("Ipv4IpamPoolId", "cumulo does not emulate IPAM"),
        ("Ipv4NetmaskLength", "cumulo does not emulate IPAM"),
        (
            "PrivateDnsNameOptionsOnLaunch",
            "cumulo's EC2 does not emulate resource-name DNS options",
        ),
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let s = self.0.create_subnet(
            &ctx.region,
            &required(props, "VpcId")?,
            &required(props, "CidrBlock")?,
            scalar(props, "AvailabilityZone")?.as_deref(),
            scalar(props, "AvailabilityZoneId")?.as_deref(),
            create_tags(ctx, props)?,
        )?;
        if let Some(b) = boolean(props, "MapPublicIpOnLaunch")? {
            self.0
                .modify_subnet_attribute(&ctx.region, &s.id, Some(b))?;
        }
        if let Some(block) = scalar(props, "Ipv6CidrBlock")?
            && let Err(e) = self
                .0
                .associate_subnet_cidr_block(&ctx.region, &s.id, &block)
        {
            let _ = self.0.delete_subnet(&ctx.region, &s.id);
            return Err(e.into());
        }
        self.made(ctx, &s.id)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["MapPublicIpOnLaunch", "Tags"])?;
        self.0.modify_subnet_attribute(
            &ctx.region,
            id,
            Some(boolean(new, "MapPublicIpOnLaunch")?.unwrap_or(false)),
        )?;
        retag(&self.0, ctx, id, new)?;
        self.made(ctx, id)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_subnet(&ctx.region, id)?)
    }

    fn made(&self, ctx: &ProviderContext, id: &str) -> Answer<Made> {
        let (s, acl) = self.0.read(&ctx.region, |r| {
            Ok((
                r.subnet(id)?.clone(),
                r.acl_association_of(id).map(|(_, a)| a),
            ))
        })?;
        Ok(Made::new(id)
            .with("SubnetId", id)
            .with("VpcId", s.vpc_id)
            .with("CidrBlock", s.cidr)
            .with("AvailabilityZone", s.availability_zone)
            .with("AvailabilityZoneId", s.availability_zone_id)
            .with("NetworkAclAssociationId", acl.unwrap_or_default())
            .with(
                "Ipv6CidrBlocks",
                json!(s.ipv6.iter().map(|a| a.cidr.clone()).collect::<Vec<_>>()),
            )
            // What DescribeSubnets reports: VPC Block Public Access is not emulated, so off.
            .with(
                "BlockPublicAccessStates",
                json!({"InternetGatewayBlockMode": "off"}),
            ))
    }
}

vpc_child!(
    RouteTable,
    "AWS::EC2::RouteTable",
    "RouteTableId",
    create_route_table,
    delete_route_table
);

/// AWS::EC2::Route: Ref is `<table>|<destination>`, as CloudFormation's handler names it.
struct RouteDecl(Arc<Ec2Service>);

const ROUTE_TARGETS: &[&str] = &[
    "GatewayId",
    "NatGatewayId",
    "NetworkInterfaceId",
    "VpcPeeringConnectionId",
    "VpcEndpointId",
    "TransitGatewayId",
    "EgressOnlyInternetGatewayId",
];

fn route_parts(props: &Map<String, Value>) -> Result<(String, String, String), ProviderError> {
    let table = required(props, "RouteTableId")?;
    let destination = match scalar(props, "DestinationCidrBlock")? {
        Some(d) => d,
        None => match scalar(props, "DestinationIpv6CidrBlock")? {
            Some(d) => d,
            None => required(props, "DestinationPrefixListId")?,
        },
    };
    let mut target = None;
    for k in ROUTE_TARGETS {
        if let Some(t) = scalar(props, k)? {
            target = Some(t);
        }
    }
    let target = target.ok_or_else(|| {
        ProviderError::Failed("Properties validation failed for resource with message: #: exactly one route target is required".into())
    })?;
    Ok((table, destination, target))
}

#[async_trait::async_trait]
impl Declared for RouteDecl {
    const ATTRIBUTES: &'static [&'static str] = &["CidrBlock"];
    const TYPE: &'static str = "AWS::EC2::Route";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "RouteTableId",
        "DestinationCidrBlock",
        "DestinationIpv6CidrBlock",
        "DestinationPrefixListId",
        "GatewayId",
        "NatGatewayId",
        "NetworkInterfaceId",
        "VpcPeeringConnectionId",
        "VpcEndpointId",
        "TransitGatewayId",
        "EgressOnlyInternetGatewayId",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        ("InstanceId", "cumulo's EC2 does not route to instances"),
        (
            "CarrierGatewayId",
            "cumulo does not emulate carrier gateways",
        ),
        ("LocalGatewayId", "cumulo does not emulate local gateways"),
        ("CoreNetworkArn", "cumulo does not emulate Cloud WAN"),
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let (table, destination, target) = route_parts(props)?;
        self.0
            .put_route(&ctx.region, &table, &destination, &target, false)?;
        Ok(Made::new(format!("{table}|{destination}")).with("CidrBlock", destination))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let (table, destination, target) = route_parts(new)?;
        self.0
            .put_route(&ctx.region, &table, &destination, &target, true)?;
        Ok(Made::new(id).with("CidrBlock", destination))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        _: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let (table, destination, _) = route_parts(props)?;
        Ok(self.0.delete_route(&ctx.region, &table, &destination)?)
    }
}

struct Association(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for Association {
    const ATTRIBUTES: &'static [&'static str] = &["Id"];
    const TYPE: &'static str = "AWS::EC2::SubnetRouteTableAssociation";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["SubnetId", "RouteTableId"];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let subnet = required(props, "SubnetId")?;
        let id = self.0.associate_route_table(
            &ctx.region,
            &required(props, "RouteTableId")?,
            Some(&subnet),
            None,
        )?;
        Ok(Made::new(id.clone()).with("Id", id))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.disassociate_route_table(&ctx.region, id)?)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<cumulo_engine::Observed>> {
        let exists = self.0.read(&ctx.region, |r| {
            Ok(r.items.values().any(|x| matches!(x, super::Resource::RouteTable(t) if t.associations.iter().any(|a| a.id == id))))
        })?;
        Ok(exists.then(|| cumulo_engine::Observed {
            properties: Map::new(),
            attributes: Map::from_iter([("Id".into(), json!(id))]),
        }))
    }
}

struct Gateway;

impl TaggedKind for Gateway {
    const TYPE: &'static str = "AWS::EC2::InternetGateway";
    const PROPERTIES: &'static [&'static str] = &["Tags"];
    const ID_ATTRIBUTE: &'static str = "InternetGatewayId";

    fn create(
        ec2: &Ec2Service,
        ctx: &ProviderContext,
        _: &Map<String, Value>,
        tags: Tags,
    ) -> Answer<String> {
        let g = ec2.create_internet_gateway(&ctx.region, tags)?;
        Ok(g.id)
    }

    fn delete(ec2: &Ec2Service, region: &str, id: &str) -> Answer<()> {
        Ok(ec2.delete_internet_gateway(region, id)?)
    }
}

/// AWS::EC2::VPCGatewayAttachment: Ref is `IGW|<vpc>`, as CloudFormation's handler names it.
struct Attachment(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for Attachment {
    const ATTRIBUTES: &'static [&'static str] = &["AttachmentType", "VpcId"];
    const TYPE: &'static str = "AWS::EC2::VPCGatewayAttachment";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["VpcId", "InternetGatewayId"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "VpnGatewayId",
        "cumulo does not emulate virtual private gateways",
    )];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let vpc = required(props, "VpcId")?;
        self.0.attach_internet_gateway(
            &ctx.region,
            &required(props, "InternetGatewayId")?,
            &vpc,
        )?;
        Ok(Made::new(format!("IGW|{vpc}"))
            .with("AttachmentType", "igw")
            .with("VpcId", vpc))
    }

    /// A new gateway for the same VPC: detach the old, attach the new.
    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let vpc = required(new, "VpcId")?;
        self.0
            .detach_internet_gateway(&ctx.region, &required(old, "InternetGatewayId")?, &vpc)?;
        self.0
            .attach_internet_gateway(&ctx.region, &required(new, "InternetGatewayId")?, &vpc)?;
        Ok(Made::new(id)
            .with("AttachmentType", "igw")
            .with("VpcId", vpc))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        _: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        Ok(self.0.detach_internet_gateway(
            &ctx.region,
            &required(props, "InternetGatewayId")?,
            &required(props, "VpcId")?,
        )?)
    }
}

/// AWS::EC2::EIP: Ref is the public address; AllocationId and PublicIp attributes.
struct Eip(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for Eip {
    const ATTRIBUTES: &'static [&'static str] = &["AllocationId", "PublicIp"];
    const TYPE: &'static str = "AWS::EC2::EIP";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "Domain",
        "Tags",
        "NetworkBorderGroup",
        "PublicIpv4Pool",
        "InstanceId",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "TransferAddress",
            "cumulo does not emulate address transfers",
        ),
        ("IpamPoolId", "cumulo does not emulate IPAM"),
        ("Address", "cumulo does not emulate BYOIP addresses"),
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let a = self
            .0
            .allocate_address(&ctx.region, create_tags(ctx, props)?)?;
        if let Some(instance) = scalar(props, "InstanceId")? {
            let target = AssociationTarget {
                instance_id: Some(instance),
                ..Default::default()
            };
            if let Err(e) = self
                .0
                .associate_address(&ctx.region, &a.allocation_id, target)
            {
                self.0.release_address(&ctx.region, &a.allocation_id)?;
                return Err(e.into());
            }
        }
        Ok(Made::new(a.public_ip.clone())
            .with("AllocationId", a.allocation_id)
            .with("PublicIp", a.public_ip))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["Tags"])?;
        let allocation = allocation_of(&self.0, ctx, id)?;
        retag(&self.0, ctx, &allocation, new)?;
        Ok(Made::new(id)
            .with("AllocationId", allocation)
            .with("PublicIp", id))
    }

    /// An association its own InstanceId made goes with it.
    async fn delete(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let allocation = allocation_of(&self.0, ctx, id)?;
        if props.contains_key("InstanceId") {
            let association = self.0.read(&ctx.region, |r| {
                Ok(r.address(&allocation)?.association_id.clone())
            })?;
            if let Some(association) = association {
                self.0.disassociate_address(&ctx.region, &association)?;
            }
        }
        Ok(self.0.release_address(&ctx.region, &allocation)?)
    }
}

/// The allocation id of an address named by its public IP (an EIP's Ref).
fn allocation_of(ec2: &Ec2Service, ctx: &ProviderContext, public_ip: &str) -> Answer<String> {
    Ok(ec2.read(&ctx.region, |r| {
        r.items
            .values()
            .find_map(|x| match x {
                super::Resource::Address(a) if a.public_ip == public_ip => {
                    Some(a.allocation_id.clone())
                }
                _ => None,
            })
            .ok_or_else(|| {
                cumulo_wire::AwsError::bad_request(
                    "InvalidAllocationID.NotFound",
                    format!("The address '{public_ip}' does not exist"),
                )
            })
    })?)
}

/// AWS::EC2::NatGateway: created pending, and available before CloudFormation moves on (its
/// handler waits for that). A gateway that fails (its Elastic IP already associated) fails the
/// resource with EC2's FailureMessage, and its id stays recorded for the rollback to delete.
struct Nat(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for Nat {
    const ATTRIBUTES: &'static [&'static str] = &["NatGatewayId", "EniId"];
    const TYPE: &'static str = "AWS::EC2::NatGateway";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] =
        &["SubnetId", "AllocationId", "ConnectivityType", "Tags"];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "PrivateIpAddress",
            "cumulo chooses a NAT gateway's private address",
        ),
        (
            "SecondaryAllocationIds",
            "cumulo's NAT gateways have one address",
        ),
        (
            "SecondaryPrivateIpAddresses",
            "cumulo's NAT gateways have one address",
        ),
        (
            "SecondaryPrivateIpAddressCount",
            "cumulo's NAT gateways have one address",
        ),
        (
            "MaxDrainDurationSeconds",
            "no connections drain through cumulo's NAT gateways",
        ),
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let n = self.0.create_nat_gateway(
            &ctx.region,
            &required(props, "SubnetId")?,
            scalar(props, "AllocationId")?.as_deref(),
            scalar(props, "ConnectivityType")?.as_deref(),
            create_tags(ctx, props)?,
        )?;
        self.0.settle_nat_gateways(&ctx.region)?;
        if let Some((_, message)) = &n.failure {
            return declared::after_create(
                &n.id,
                Err(ProviderError::Failed(format!(
                    "Resource handler returned message: \"NatGateway {} is in state failed and hence failed to stabilize. Detailed failure message: {message}\" (RequestToken: {}, HandlerErrorCode: NotStabilized)",
                    n.id, ctx.client_request_token
                ))
                .into()),
            );
        }
        self.made(ctx, &n.id)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["Tags"])?;
        retag(&self.0, ctx, id, new)?;
        self.made(ctx, id)
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_nat_gateway(&ctx.region, id)?)
    }

    /// Ref and Fn::GetAtt: the id and the gateway's network interface.
    /// A deleted gateway stays visible (state `deleted`) for a while, as on AWS: it is gone.
    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _: &Map<String, Value>,
    ) -> Answer<Option<cumulo_engine::Observed>> {
        let state = self.0.read(&ctx.region, |r| Ok(r.nat(id)?.state.clone()))?;
        if matches!(state.as_str(), "deleting" | "deleted") {
            return Ok(None);
        }
        Ok(Some(self.made(ctx, id)?.into()))
    }

    fn made(&self, ctx: &ProviderContext, id: &str) -> Answer<Made> {
        let eni = self
            .0
            .read(&ctx.region, |r| Ok(r.nat(id)?.network_interface_id.clone()))?;
        Ok(Made::new(id).with("NatGatewayId", id).with("EniId", eni))
    }
}

/// A rule from a template's rule object (inline in a group, or a rule resource); `peer_keys`
/// name its group and prefix-list fields (Source... for ingress, Destination... for egress).
fn rule_spec(props: &Map<String, Value>, egress: bool) -> Result<RuleSpec, ProviderError> {
    let (group_key, list_key) = if egress {
        ("DestinationSecurityGroupId", "DestinationPrefixListId")
    } else {
        ("SourceSecurityGroupId", "SourcePrefixListId")
    };
    Ok(RuleSpec {
        protocol: required(props, "IpProtocol")?,
        from_port: int(props, "FromPort")?,
        to_port: int(props, "ToPort")?,
        cidr_ipv4: scalar(props, "CidrIp")?,
        cidr_ipv6: scalar(props, "CidrIpv6")?,
        group_id: scalar(props, group_key)?,
        prefix_list_id: scalar(props, list_key)?,
        description: scalar(props, "Description")?,
    })
}

const INGRESS_KEYS: &[&str] = &[
    "IpProtocol",
    "FromPort",
    "ToPort",
    "CidrIp",
    "CidrIpv6",
    "SourceSecurityGroupId",
    "SourcePrefixListId",
    "Description",
    "SourceSecurityGroupOwnerId",
];
const EGRESS_KEYS: &[&str] = &[
    "IpProtocol",
    "FromPort",
    "ToPort",
    "CidrIp",
    "CidrIpv6",
    "DestinationSecurityGroupId",
    "DestinationPrefixListId",
    "Description",
];

fn inline_rules(
    props: &Map<String, Value>,
    key: &str,
    egress: bool,
) -> Result<Vec<RuleSpec>, ProviderError> {
    let allowed = if egress { EGRESS_KEYS } else { INGRESS_KEYS };
    list(props, key)?
        .iter()
        .map(|v| {
            let obj = v.as_object().ok_or_else(|| {
                ProviderError::Failed(format!("Properties validation failed for resource with message: #/{key}: expected type: JSONObject"))
            })?;
            crate::providers::check_known("AWS::EC2::SecurityGroup", obj, allowed, &[("SourceSecurityGroupName", "cumulo needs group ids in VPC rules")])?;
            rule_spec(obj, egress)
        })
        .collect()
}

/// AWS::EC2::SecurityGroup: Ref and GroupId are the group id; the template's egress rules
/// replace the default allow-all egress, as AWS's handler does.
struct Group(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for Group {
    const ATTRIBUTES: &'static [&'static str] = &["Id", "GroupId", "VpcId"];
    const TYPE: &'static str = "AWS::EC2::SecurityGroup";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "GroupDescription",
        "GroupName",
        "VpcId",
        "SecurityGroupIngress",
        "SecurityGroupEgress",
        "Tags",
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let name = match scalar(props, "GroupName")? {
            Some(n) => n,
            None => ctx.generated_name(255, ""),
        };
        let ingress = inline_rules(props, "SecurityGroupIngress", false)?;
        let egress = inline_rules(props, "SecurityGroupEgress", true)?;
        let g = self.0.create_security_group(
            &ctx.region,
            &name,
            &required(props, "GroupDescription")?,
            scalar(props, "VpcId")?.as_deref(),
            create_tags(ctx, props)?,
        )?;
        let set = self.set_rules(ctx, &g.id, [vec![], vec![]], [ingress, egress]);
        if let Err(e) = set {
            // Leave nothing behind: the group goes with its failed rules.
            let _ = self.0.delete_security_group(&ctx.region, &g.id);
            return Err(e);
        }
        Ok(Made::new(g.id.clone())
            .with("Id", g.id.clone())
            .with("GroupId", g.id)
            .with("VpcId", g.vpc_id))
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
            &["SecurityGroupIngress", "SecurityGroupEgress", "Tags"],
        )?;
        let rules = |p: &Map<String, Value>| -> Result<[Vec<RuleSpec>; 2], ProviderError> {
            Ok([
                inline_rules(p, "SecurityGroupIngress", false)?,
                inline_rules(p, "SecurityGroupEgress", true)?,
            ])
        };
        self.set_rules(ctx, id, rules(old)?, rules(new)?)?;
        retag(&self.0, ctx, id, new)?;
        let vpc = self.0.security_group(&ctx.region, id)?.vpc_id;
        Ok(Made::new(id)
            .with("Id", id)
            .with("GroupId", id)
            .with("VpcId", vpc))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_security_group(&ctx.region, id)?)
    }
}

impl Group {
    /// Moves the group's inline rules from `old` to `new` (each an ingress and an egress list;
    /// no egress given means the default allow-all). Only the difference between the two
    /// template lists is revoked and authorized, so rules that standalone
    /// SecurityGroupIngress/Egress resources added stay.
    fn set_rules(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: [Vec<RuleSpec>; 2],
        new: [Vec<RuleSpec>; 2],
    ) -> Answer<()> {
        let same = |a: &RuleSpec, b: &RuleSpec| {
            RuleSpec {
                description: None,
                ..a.clone()
            } == RuleSpec {
                description: None,
                ..b.clone()
            }
        };
        for (is_egress, (mut before, mut after)) in
            [false, true].into_iter().zip(old.into_iter().zip(new))
        {
            if is_egress {
                for list in [&mut before, &mut after] {
                    if list.is_empty() {
                        list.push(RuleSpec {
                            protocol: "-1".into(),
                            cidr_ipv4: Some("0.0.0.0/0".into()),
                            ..Default::default()
                        });
                    }
                }
            }
            let gone: Vec<RuleSpec> = before
                .iter()
                .filter(|b| !after.iter().any(|a| same(a, b)))
                .cloned()
                .collect();
            let added: Vec<RuleSpec> = after
                .iter()
                .filter(|a| !before.iter().any(|b| same(a, b)))
                .cloned()
                .collect();
            if !gone.is_empty() {
                self.0.revoke(&ctx.region, id, is_egress, gone, &[])?;
            }
            if !added.is_empty() {
                self.0.authorize(&ctx.region, id, is_egress, added)?;
            }
            // A rule kept with another description (CDK's described allow-all egress in place
            // of the default one, or a changed Description) has its description set, as AWS's
            // handler does through UpdateSecurityGroupRuleDescriptions*.
            let described: Vec<RuleSpec> = after
                .iter()
                .filter(|a| {
                    before
                        .iter()
                        .any(|b| same(a, b) && b.description != a.description)
                })
                .cloned()
                .collect();
            if !described.is_empty() {
                self.0
                    .update_rule_descriptions(&ctx.region, id, is_egress, described)?;
            }
        }
        Ok(())
    }
}

/// The standalone rule types, AWS::EC2::SecurityGroupIngress (`Rule<false>`) and
/// SecurityGroupEgress (`Rule<true>`): Ref and `Id` are the rule's `sgr-` id; only its
/// Description changes in place.
struct Rule<const EGRESS: bool>(Arc<Ec2Service>);

#[async_trait::async_trait]
impl<const EGRESS: bool> Declared for Rule<EGRESS> {
    const ATTRIBUTES: &'static [&'static str] = &["Id"];
    const TYPE: &'static str = if EGRESS {
        "AWS::EC2::SecurityGroupEgress"
    } else {
        "AWS::EC2::SecurityGroupIngress"
    };
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = if EGRESS {
        &[
            "GroupId",
            "IpProtocol",
            "FromPort",
            "ToPort",
            "CidrIp",
            "CidrIpv6",
            "DestinationSecurityGroupId",
            "DestinationPrefixListId",
            "Description",
        ]
    } else {
        &[
            "GroupId",
            "IpProtocol",
            "FromPort",
            "ToPort",
            "CidrIp",
            "CidrIpv6",
            "SourceSecurityGroupId",
            "SourcePrefixListId",
            "Description",
            "SourceSecurityGroupOwnerId",
        ]
    };
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = if EGRESS {
        &[]
    } else {
        &[
            ("GroupName", "cumulo needs a VPC group's id"),
            ("SourceSecurityGroupName", "cumulo needs a VPC group's id"),
        ]
    };
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let group = required(props, "GroupId")?;
        let spec = rule_spec(props, EGRESS)?;
        let mut added = self.0.authorize(&ctx.region, &group, EGRESS, vec![spec])?;
        let id = added.pop().map(|r| r.id).unwrap_or_default();
        Ok(Made::new(id.clone()).with("Id", id))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["Description"])?;
        let group = required(new, "GroupId")?;
        let description = scalar(new, "Description")?;
        self.0
            .set_rule_description(&ctx.region, &group, id, description)?;
        Ok(Made::new(id).with("Id", id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let group = required(props, "GroupId")?;
        Ok(self
            .0
            .revoke(&ctx.region, &group, EGRESS, vec![], &[id.to_string()])?)
    }
}

#[cfg(test)]
mod tests {
    use crate::providers::test_support::{ctx, services};
    use serde_json::json;

    #[tokio::test]
    async fn a_network_through_the_providers() {
        let s = services();
        let reg = crate::providers::registry(&s);
        let p = |t: &str| reg.get(t).expect(t).clone();
        let vpc = p("AWS::EC2::VPC")
            .create(
                &ctx("Vpc", "AWS::EC2::VPC"),
                &json!({"CidrBlock": "10.9.0.0/16", "EnableDnsHostnames": true}),
            )
            .await
            .unwrap();
        assert!(vpc.physical_id.starts_with("vpc-"));
        assert!(
            vpc.attributes["DefaultSecurityGroup"]
                .as_str()
                .unwrap()
                .starts_with("sg-")
        );
        let subnet = p("AWS::EC2::Subnet")
            .create(&ctx("Sub", "AWS::EC2::Subnet"), &json!({"VpcId": vpc.physical_id, "CidrBlock": "10.9.1.0/24", "AvailabilityZone": "us-east-1a"}))
            .await
            .unwrap();
        assert_eq!(subnet.attributes["AvailabilityZoneId"], "use1-az6");
        let sg_props = json!({"GroupDescription": "web", "VpcId": vpc.physical_id,
            "SecurityGroupIngress": [{"IpProtocol": "tcp", "FromPort": 80, "ToPort": 80, "CidrIp": "0.0.0.0/0"}]});
        let c = ctx("Web", "AWS::EC2::SecurityGroup");
        let sg = p("AWS::EC2::SecurityGroup")
            .create(&c, &sg_props)
            .await
            .unwrap();
        let rules = s
            .ec2
            .read("us-east-1", |r| Ok(r.group(&sg.physical_id)?.rules.clone()))
            .unwrap();
        assert_eq!(rules.len(), 2, "{rules:?}");
        let mut changed = sg_props.clone();
        changed["SecurityGroupIngress"][0]["FromPort"] = json!(443);
        changed["SecurityGroupIngress"][0]["ToPort"] = json!(443);
        p("AWS::EC2::SecurityGroup")
            .update(&c, &sg.physical_id, &sg_props, &changed)
            .await
            .unwrap();
        let rules = s
            .ec2
            .read("us-east-1", |r| Ok(r.group(&sg.physical_id)?.rules.clone()))
            .unwrap();
        assert!(
            rules.iter().any(|r| r.from_port == Some(443))
                && !rules.iter().any(|r| r.from_port == Some(80))
        );
        // The VPC is in use; deleting in reverse order works.
        let e = p("AWS::EC2::VPC")
            .delete(&ctx("Vpc", "AWS::EC2::VPC"), &vpc.physical_id, &json!({}))
            .await
            .unwrap_err();
        assert!(
            e.to_string().contains("DependencyViolation")
                || e.to_string().contains("has dependencies"),
            "{e}"
        );
        p("AWS::EC2::SecurityGroup")
            .delete(&c, &sg.physical_id, &changed)
            .await
            .unwrap();
        p("AWS::EC2::Subnet")
            .delete(
                &ctx("Sub", "AWS::EC2::Subnet"),
                &subnet.physical_id,
                &json!({}),
            )
            .await
            .unwrap();
        p("AWS::EC2::VPC")
            .delete(&ctx("Vpc", "AWS::EC2::VPC"), &vpc.physical_id, &json!({}))
            .await
            .unwrap();
    }
}
