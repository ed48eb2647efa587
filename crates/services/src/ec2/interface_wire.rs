//! The `ec2` protocol for network interfaces and elastic IP associations.

use super::interfaces::{AssociationTarget, InterfaceAddresses, InterfaceAttribute};
use super::model::*;
use super::wire::{Answer, Params, describe, ok, one, tag_set};
use super::{Ec2Service, NetworkInterfaceRequest};
use cumulo_wire::AwsError;
use cumulo_wire::xml::XmlWriter;

pub(super) fn dispatch(svc: &Ec2Service, region: &str, p: &Params, action: &str) -> Option<Answer> {
    Some(match action {
        "CreateNetworkInterface" => create(svc, region, p),
        "DeleteNetworkInterface" => {
            (|| ok(svc.delete_network_interface(region, p.required("NetworkInterfaceId")?)))()
        }
        "DescribeNetworkInterfaces" => (|| {
            let addresses = addresses_of(svc, region)?;
            describe(
                svc,
                region,
                p,
                "NetworkInterfaceId",
                "eni",
                "networkInterfaceSet",
                |res, w, _| match res {
                    Resource::NetworkInterface(n) => {
                        interface(w, n, svc.account_id(), &addresses);
                        true
                    }
                    _ => false,
                },
            )
        })(),
        "AttachNetworkInterface" => (|| {
            let index = p
                .int("DeviceIndex")?
                .ok_or_else(|| super::errors::missing("DeviceIndex"))?;
            let id = svc.attach_network_interface(
                region,
                p.required("NetworkInterfaceId")?,
                p.required("InstanceId")?,
                index,
            )?;
            Ok(format!(
                "<attachmentId>{id}</attachmentId><networkCardIndex>0</networkCardIndex>"
            ))
        })(),
        "DetachNetworkInterface" => {
            (|| ok(svc.detach_network_interface(region, p.required("AttachmentId")?)))()
        }
        "ModifyNetworkInterfaceAttribute" => (|| {
            let groups = p.strings("SecurityGroupId");
            let attribute = if let Some(d) = p.get("Description.Value") {
                InterfaceAttribute::Description(d.to_string())
            } else if let Some(b) = p.flag("SourceDestCheck.Value") {
                InterfaceAttribute::SourceDestCheck(b)
            } else if !groups.is_empty() {
                InterfaceAttribute::Groups(groups)
            } else if let Some(b) = p.flag("Attachment.DeleteOnTermination") {
                InterfaceAttribute::DeleteOnTermination(b)
            } else {
                return Err(AwsError::bad_request(
                    "MissingParameter",
                    "You must specify exactly one attribute.",
                ));
            };
            ok(svc.modify_network_interface(region, p.required("NetworkInterfaceId")?, attribute))
        })(),
        "AssignPrivateIpAddresses" => (|| {
            let id = p.required("NetworkInterfaceId")?;
            let count = count(p, "SecondaryPrivateIpAddressCount")?;
            let added =
                svc.assign_private_ips(region, id, &p.strings("PrivateIpAddress"), count)?;
            let mut w = XmlWriter::new_fragment();
            w.elem("networkInterfaceId", id)
                .open("assignedPrivateIpAddressesSet", None);
            for ip in added {
                w.open("item", None).elem("privateIpAddress", &ip).close();
            }
            w.close().raw("<assignedIpv4PrefixSet/>");
            Ok(w.finish())
        })(),
        "UnassignPrivateIpAddresses" => (|| {
            ok(svc.unassign_private_ips(
                region,
                p.required("NetworkInterfaceId")?,
                &p.strings("PrivateIpAddress"),
            ))
        })(),
        "AssociateAddress" => (|| {
            let allocation = allocation_of(svc, region, p)?;
            let id = svc.associate_address(
                region,
                &allocation,
                AssociationTarget {
                    instance_id: p.get("InstanceId").map(str::to_string),
                    network_interface_id: p.get("NetworkInterfaceId").map(str::to_string),
                    private_ip: p.get("PrivateIpAddress").map(str::to_string),
                    allow_reassociation: p.flag("AllowReassociation").unwrap_or(false),
                },
            )?;
            Ok(format!("<associationId>{id}</associationId>"))
        })(),
        "DisassociateAddress" => (|| {
            let association = match (p.get("AssociationId"), p.get("PublicIp")) {
                (Some(a), _) => a.to_string(),
                (None, Some(ip)) => {
                    by_public_ip(svc, region, ip)?
                        .association_id
                        .ok_or_else(|| {
                            AwsError::bad_request(
                                "InvalidAssociationID.NotFound",
                                format!("The address '{ip}' is not associated"),
                            )
                        })?
                }
                (None, None) => return Err(super::errors::missing("AssociationId")),
            };
            ok(svc.disassociate_address(region, &association))
        })(),
        _ => return None,
    })
}

fn count(p: &Params, key: &str) -> Result<usize, AwsError> {
    match p.int(key)? {
        Some(n) if n < 0 => Err(super::errors::invalid_value(
            &n.to_string(),
            key,
            "Must be a non-negative number.",
        )),
        n => Ok(n.unwrap_or(0) as usize),
    }
}

/// AssociateAddress names the address by allocation id or by public IP.
fn allocation_of(svc: &Ec2Service, region: &str, p: &Params) -> Result<String, AwsError> {
    match (p.get("AllocationId"), p.get("PublicIp")) {
        (Some(a), _) => Ok(a.to_string()),
        (None, Some(ip)) => Ok(by_public_ip(svc, region, ip)?.allocation_id),
        (None, None) => Err(super::errors::missing("AllocationId")),
    }
}

fn by_public_ip(svc: &Ec2Service, region: &str, ip: &str) -> Result<Address, AwsError> {
    svc.read(region, |r| {
        r.of(|x| match x {
            Resource::Address(a) if a.public_ip == ip => Some(a),
            _ => None,
        })
        .next()
        .cloned()
        .ok_or_else(|| {
            AwsError::bad_request(
                "InvalidAddress.NotFound",
                format!("Address '{ip}' not found."),
            )
        })
    })
}

fn create(svc: &Ec2Service, region: &str, p: &Params) -> Answer {
    let mut addresses = InterfaceAddresses {
        primary: p.get("PrivateIpAddress").map(str::to_string),
        secondary_count: count(p, "SecondaryPrivateIpAddressCount")?,
        tags: p.tag_specs(),
        ..Default::default()
    };
    for spec in p.items("PrivateIpAddresses") {
        let ip = spec.required("PrivateIpAddress")?.to_string();
        if spec.flag("Primary") == Some(true) {
            if addresses.primary.as_ref().is_some_and(|x| x != &ip) {
                return Err(AwsError::bad_request(
                    "InvalidParameterValue",
                    "Only one primary private IP address may be specified.",
                ));
            }
            addresses.primary = Some(ip);
        } else {
            addresses.secondary.push(ip);
        }
    }
    let n = svc.create_interface(
        region,
        NetworkInterfaceRequest {
            subnet_id: p.required("SubnetId")?.to_string(),
            security_group_ids: p.strings("SecurityGroupId"),
            description: p.get("Description").unwrap_or("").to_string(),
            interface_type: p.get("InterfaceType").map(str::to_string),
            requester_id: None,
        },
        addresses,
    )?;
    let addresses = addresses_of(svc, region)?;
    Ok(one("networkInterface", |w| {
        interface(w, &n, svc.account_id(), &addresses)
    }))
}

fn addresses_of(svc: &Ec2Service, region: &str) -> Result<Vec<Address>, AwsError> {
    Ok(svc
        .records(region)?
        .into_iter()
        .filter_map(|r| match r {
            Resource::Address(a) if a.association_id.is_some() => Some(a),
            _ => None,
        })
        .collect())
}

fn association(w: &mut XmlWriter, a: &Address, account: &str) {
    w.open("association", None)
        .elem("allocationId", &a.allocation_id)
        .opt("associationId", a.association_id.as_deref())
        .elem("ipOwnerId", account)
        .elem("publicDnsName", "")
        .elem("publicIp", &a.public_ip)
        .close();
}

/// One interface as DescribeNetworkInterfaces answers it, with the elastic IPs on its addresses.
pub(super) fn interface(
    w: &mut XmlWriter,
    n: &NetworkInterface,
    account: &str,
    addresses: &[Address],
) {
    let on = |ip: &str| {
        addresses.iter().find(|a| {
            a.network_interface_id.as_deref() == Some(n.id.as_str())
                && a.private_ip.as_deref() == Some(ip)
        })
    };
    w.elem("networkInterfaceId", &n.id);
    if let Some(a) = on(&n.private_ip) {
        association(w, a, account);
    }
    w.elem("subnetId", &n.subnet_id)
        .elem("vpcId", &n.vpc_id)
        .elem("availabilityZone", &n.availability_zone)
        .elem("description", &n.description)
        .elem("ownerId", account)
        .opt("requesterId", n.requester_id.as_deref())
        .elem("requesterManaged", &n.requester_id.is_some().to_string())
        .elem("status", n.status())
        .elem("macAddress", &n.mac_address)
        .elem("privateIpAddress", &n.private_ip)
        .elem("sourceDestCheck", &n.source_dest_check.to_string())
        .elem("interfaceType", &n.interface_type);
    if let Some(a) = &n.attachment {
        w.open("attachment", None)
            .elem("attachmentId", &a.id)
            .elem("instanceId", &a.instance_id)
            .elem("instanceOwnerId", account)
            .elem("deviceIndex", &a.device_index.to_string())
            .elem("networkCardIndex", "0")
            .elem("status", "attached")
            .elem("attachTime", &a.attached)
            .elem("deleteOnTermination", &a.delete_on_termination.to_string())
            .close();
    }
    w.open("groupSet", None);
    for g in &n.groups {
        w.open("item", None).elem("groupId", g).close();
    }
    w.close().open("privateIpAddressesSet", None);
    for (ip, primary) in
        std::iter::once((&n.private_ip, true)).chain(n.secondary_ips.iter().map(|ip| (ip, false)))
    {
        w.open("item", None);
        if let Some(a) = on(ip) {
            association(w, a, account);
        }
        w.elem("privateIpAddress", ip)
            .elem("primary", &primary.to_string())
            .close();
    }
    w.close();
    tag_set(w, &n.tags);
}
