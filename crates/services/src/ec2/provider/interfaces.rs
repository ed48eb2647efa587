//! AWS::EC2::NetworkInterface, AWS::EC2::NetworkInterfaceAttachment and
//! AWS::EC2::EIPAssociation over EC2's interface and address operations.

use super::network::{added, strings};
use super::{SERVICE, TAGGED_NOT_FOUND, boolean, create_tags, int, retag};
use crate::ec2::model::NetworkInterface;
use crate::ec2::{
    AssociationTarget, Ec2Service, InterfaceAddresses, InterfaceAttribute, NetworkInterfaceRequest,
};
use crate::providers::declared::{self, Answer, Declared, Made, refuse_other_changes};
use crate::providers::{ProviderServices, list, required, scalar};
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    declared::register(r, Interface(s.ec2.clone()));
    declared::register(r, InterfaceAttachment(s.ec2.clone()));
    declared::register(r, EipAssociation(s.ec2.clone()));
}

const NOT_FOUND: &[&str] = &[
    "InvalidNetworkInterfaceID.NotFound",
    "InvalidAttachmentID.NotFound",
    "InvalidAssociationID.NotFound",
];

/// AWS::EC2::NetworkInterface: Ref is its id; addresses, groups, description and the
/// source/destination check change in place.
struct Interface(Arc<Ec2Service>);

/// The template's `PrivateIpAddresses` split into (primary, secondaries).
fn listed_addresses(
    props: &Map<String, Value>,
) -> Result<(Option<String>, Vec<String>), ProviderError> {
    let mut primary = scalar(props, "PrivateIpAddress")?;
    let mut secondary = Vec::new();
    for spec in list(props, "PrivateIpAddresses")? {
        let Some(spec) = spec.as_object() else {
            continue;
        };
        let ip = required(spec, "PrivateIpAddress")?;
        if boolean(spec, "Primary")? == Some(true) {
            primary = Some(ip);
        } else {
            secondary.push(ip);
        }
    }
    Ok((primary, secondary))
}

fn secondary_count(props: &Map<String, Value>) -> Result<usize, ProviderError> {
    Ok(int(props, "SecondaryPrivateIpAddressCount")?
        .unwrap_or(0)
        .max(0) as usize)
}

#[async_trait::async_trait]
impl Declared for Interface {
    const ATTRIBUTES: &'static [&'static str] = &[
        "Id",
        "PrimaryPrivateIpAddress",
        "SecondaryPrivateIpAddresses",
        "VpcId",
    ];
    const TYPE: &'static str = "AWS::EC2::NetworkInterface";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "SubnetId",
        "Description",
        "GroupSet",
        "InterfaceType",
        "PrivateIpAddress",
        "PrivateIpAddresses",
        "SecondaryPrivateIpAddressCount",
        "SourceDestCheck",
        "Tags",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[
        (
            "Ipv6AddressCount",
            "cumulo's interfaces have no IPv6 addresses",
        ),
        (
            "Ipv6Addresses",
            "cumulo's interfaces have no IPv6 addresses",
        ),
        (
            "EnablePrimaryIpv6",
            "cumulo's interfaces have no IPv6 addresses",
        ),
        (
            "Ipv6PrefixCount",
            "cumulo does not emulate prefix delegation",
        ),
        ("Ipv6Prefixes", "cumulo does not emulate prefix delegation"),
        (
            "Ipv4PrefixCount",
            "cumulo does not emulate prefix delegation",
        ),
        ("Ipv4Prefixes", "cumulo does not emulate prefix delegation"),
        (
            "ConnectionTrackingSpecification",
            "cumulo carries no traffic",
        ),
    ];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let (primary, secondary) = listed_addresses(props)?;
        let eni = self.0.create_interface(
            &ctx.region,
            NetworkInterfaceRequest {
                subnet_id: required(props, "SubnetId")?,
                security_group_ids: strings(props, "GroupSet")?,
                description: scalar(props, "Description")?.unwrap_or_default(),
                interface_type: scalar(props, "InterfaceType")?,
                requester_id: None,
            },
            InterfaceAddresses {
                primary,
                secondary,
                secondary_count: secondary_count(props)?,
                source_dest_check: boolean(props, "SourceDestCheck")?,
                tags: create_tags(ctx, props)?,
            },
        )?;
        Ok(made(&eni))
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
                "Description",
                "GroupSet",
                "SourceDestCheck",
                "PrivateIpAddresses",
                "SecondaryPrivateIpAddressCount",
                "Tags",
            ],
        )?;
        let region = &ctx.region;
        let eni = self.eni(region, id)?;
        let description = scalar(new, "Description")?.unwrap_or_default();
        if description != eni.description {
            self.0.modify_network_interface(
                region,
                id,
                InterfaceAttribute::Description(description),
            )?;
        }
        let check = boolean(new, "SourceDestCheck")?.unwrap_or(true);
        if check != eni.source_dest_check {
            self.0.modify_network_interface(
                region,
                id,
                InterfaceAttribute::SourceDestCheck(check),
            )?;
        }
        let groups = strings(new, "GroupSet")?;
        if !groups.is_empty() && groups != eni.groups {
            self.0
                .modify_network_interface(region, id, InterfaceAttribute::Groups(groups))?;
        }
        // Secondary addresses: those listed, or as many as counted.
        let (_, listed) = listed_addresses(new)?;
        let wanted = if listed.is_empty() {
            None
        } else {
            Some(listed)
        };
        match wanted {
            Some(listed) => {
                let gone = added(&listed, &eni.secondary_ips);
                if !gone.is_empty() {
                    self.0.unassign_private_ips(region, id, &gone)?;
                }
                let new_ips = added(&eni.secondary_ips, &listed);
                if !new_ips.is_empty() {
                    self.0.assign_private_ips(region, id, &new_ips, 0)?;
                }
            }
            None => {
                let count = secondary_count(new)?;
                let have = eni.secondary_ips.len();
                if count > have {
                    self.0.assign_private_ips(region, id, &[], count - have)?;
                } else if count < have {
                    self.0
                        .unassign_private_ips(region, id, &eni.secondary_ips[count..])?;
                }
            }
        }
        retag(&self.0, ctx, id, new)?;
        Ok(made(&self.eni(region, id)?))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.delete_network_interface(&ctx.region, id)?)
    }
}

impl Interface {
    fn eni(&self, region: &str, id: &str) -> Answer<NetworkInterface> {
        Ok(self.0.read(region, |r| r.interface(id).cloned())?)
    }
}

fn made(eni: &NetworkInterface) -> Made {
    Made::new(eni.id.clone())
        .with("Id", eni.id.clone())
        .with("PrimaryPrivateIpAddress", eni.private_ip.clone())
        .with("SecondaryPrivateIpAddresses", json!(eni.secondary_ips))
        .with("VpcId", eni.vpc_id.clone())
}

/// AWS::EC2::NetworkInterfaceAttachment: Ref is the `eni-attach-` id; DeleteOnTermination
/// changes in place.
struct InterfaceAttachment(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for InterfaceAttachment {
    const ATTRIBUTES: &'static [&'static str] = &["AttachmentId"];
    const TYPE: &'static str = "AWS::EC2::NetworkInterfaceAttachment";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "DeviceIndex",
        "InstanceId",
        "NetworkInterfaceId",
        "DeleteOnTermination",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] =
        &[("EnaSrdSpecification", "cumulo carries no traffic")];
    const NOT_FOUND: &'static [&'static str] = NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let index = int(props, "DeviceIndex")?
            .ok_or_else(|| ProviderError::Failed("Property DeviceIndex cannot be empty.".into()))?;
        let eni = required(props, "NetworkInterfaceId")?;
        let id = self.0.attach_network_interface(
            &ctx.region,
            &eni,
            &required(props, "InstanceId")?,
            index,
        )?;
        let delete = boolean(props, "DeleteOnTermination")?.unwrap_or(true);
        self.0.modify_network_interface(
            &ctx.region,
            &eni,
            InterfaceAttribute::DeleteOnTermination(delete),
        )?;
        Ok(Made::new(id.clone()).with("AttachmentId", id))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        refuse_other_changes(Self::TYPE, old, new, &["DeleteOnTermination"])?;
        self.0.modify_network_interface(
            &ctx.region,
            &required(new, "NetworkInterfaceId")?,
            InterfaceAttribute::DeleteOnTermination(
                boolean(new, "DeleteOnTermination")?.unwrap_or(true),
            ),
        )?;
        Ok(Made::new(id).with("AttachmentId", id))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.detach_network_interface(&ctx.region, id)?)
    }
}

/// AWS::EC2::EIPAssociation: Ref is the `eipassoc-` id; every property replaces it.
struct EipAssociation(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for EipAssociation {
    const ATTRIBUTES: &'static [&'static str] = &["Id"];
    const TYPE: &'static str = "AWS::EC2::EIPAssociation";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AllocationId",
        "EIP",
        "InstanceId",
        "NetworkInterfaceId",
        "PrivateIpAddress",
    ];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let allocation = match (scalar(props, "AllocationId")?, scalar(props, "EIP")?) {
            (Some(a), _) => a,
            (None, Some(ip)) => super::allocation_of(&self.0, ctx, &ip)?,
            (None, None) => {
                return Err(ProviderError::Failed(
                    "Either AllocationId or EIP must be specified".into(),
                )
                .into());
            }
        };
        let id = self.0.associate_address(
            &ctx.region,
            &allocation,
            AssociationTarget {
                instance_id: scalar(props, "InstanceId")?,
                network_interface_id: scalar(props, "NetworkInterfaceId")?,
                private_ip: scalar(props, "PrivateIpAddress")?,
                allow_reassociation: false,
            },
        )?;
        Ok(Made::new(id.clone()).with("Id", id))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        Ok(self.0.disassociate_address(&ctx.region, id)?)
    }
}
