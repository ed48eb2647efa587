//! Network interfaces as their owner manages them (CreateNetworkInterface with its addresses,
//! attach and detach, secondary private addresses, attributes) and elastic IP associations
//! (to an instance's primary interface or to an interface and one of its addresses).

use super::cidr::Block;
use super::errors::{check_id, invalid_value, missing, not_found};
use super::model::*;
use super::ops::{claim_ip, new_interface, now};
use super::{Ec2Service, NetworkInterfaceRequest, Region};
use cumulo_wire::AwsError;
use std::net::Ipv4Addr;

/// What CreateNetworkInterface adds to what other services ask for.
#[derive(Debug, Clone, Default)]
pub struct InterfaceAddresses {
    /// The primary address, or the subnet's next free one.
    pub primary: Option<String>,
    /// Secondary addresses asked for by value...
    pub secondary: Vec<String>,
    /// ...or by count, drawn from the subnet.
    pub secondary_count: usize,
    pub source_dest_check: Option<bool>,
    pub tags: Tags,
}

/// Where AssociateAddress puts an address.
#[derive(Debug, Clone, Default)]
pub struct AssociationTarget {
    pub instance_id: Option<String>,
    pub network_interface_id: Option<String>,
    pub private_ip: Option<String>,
    pub allow_reassociation: bool,
}

/// ModifyNetworkInterfaceAttribute's one attribute per call.
#[derive(Debug, Clone)]
pub enum InterfaceAttribute {
    Description(String),
    SourceDestCheck(bool),
    Groups(Vec<String>),
    /// Of its attachment (`Attachment.DeleteOnTermination`).
    DeleteOnTermination(bool),
}

/// AWS's answer to deleting an interface still attached.
pub fn interface_in_use(id: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidNetworkInterface.InUse",
        format!("Interface: [{id}] in use."),
    )
}

fn address_in_use(ip: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidIPAddress.InUse",
        format!("The specified address {ip} is already in use."),
    )
}

impl Region {
    /// Addresses associated with an interface follow it to the instance it is attached to
    /// (`None`: detached).
    pub(super) fn address_follow_interface(
        &mut self,
        eni_id: &str,
        instance_id: Option<&str>,
        touched: &mut Vec<String>,
    ) {
        for res in self.items.values_mut() {
            if let Resource::Address(a) = res
                && a.network_interface_id.as_deref() == Some(eni_id)
            {
                a.instance_id = instance_id.map(str::to_string);
                touched.push(a.allocation_id.clone());
            }
        }
    }

    /// Every address associated with an interface loses its association (the interface goes).
    pub(super) fn disassociate_interface(&mut self, eni_id: &str, touched: &mut Vec<String>) {
        for res in self.items.values_mut() {
            if let Resource::Address(a) = res
                && a.network_interface_id.as_deref() == Some(eni_id)
            {
                clear(a);
                touched.push(a.allocation_id.clone());
            }
        }
    }

    /// A requested private address: inside the subnet, not one of the five AWS keeps, free.
    fn check_free_ip(&self, subnet: &Subnet, ip: &str, taken: &[String]) -> Result<(), AwsError> {
        let block = Block::parse(&subnet.cidr).ok_or_else(|| AwsError::internal("bad cidr"))?;
        let addr: Ipv4Addr = ip
            .parse()
            .map_err(|_| invalid_value(ip, "PrivateIpAddresses", "Invalid private IP address."))?;
        let offset = u64::from(u32::from(addr).wrapping_sub(block.base));
        if u32::from(addr) < block.base || offset >= block.size() {
            return Err(AwsError::bad_request(
                "InvalidParameterValue",
                format!(
                    "Address {ip} does not fall within the subnet's address range ({}).",
                    subnet.cidr
                ),
            ));
        }
        if offset < 4 || offset == block.size() - 1 {
            return Err(AwsError::bad_request(
                "InvalidParameterValue",
                format!("Address {ip} is reserved by AWS."),
            ));
        }
        if subnet.used_ips.iter().any(|u| u == ip) || taken.iter().any(|t| t == ip) {
            return Err(address_in_use(ip));
        }
        Ok(())
    }

    /// `count` free addresses of the subnet besides `taken`.
    fn draw_ips(
        &self,
        subnet: &Subnet,
        count: usize,
        taken: &[String],
    ) -> Result<Vec<String>, AwsError> {
        let mut scratch = subnet.clone();
        scratch.used_ips.extend(taken.iter().cloned());
        let mut out = Vec::new();
        for _ in 0..count {
            let ip = self.free_ip(&scratch)?;
            scratch.used_ips.push(ip.clone());
            out.push(ip);
        }
        Ok(out)
    }
}

fn clear(a: &mut Address) {
    a.association_id = None;
    a.network_interface_id = None;
    a.private_ip = None;
    a.instance_id = None;
}

impl Ec2Service {
    /// CreateNetworkInterface: the groups and subnet checked as for every interface, then
    /// the addresses asked for, each free in the subnet.
    pub fn create_interface(
        &self,
        region: &str,
        req: NetworkInterfaceRequest,
        addresses: InterfaceAddresses,
    ) -> Result<NetworkInterface, AwsError> {
        self.change(region, |r, touched| {
            let subnet = r.subnet(&req.subnet_id)?.clone();
            let mut groups = Vec::new();
            for g in &req.security_group_ids {
                if r.group(g)?.vpc_id != subnet.vpc_id {
                    return Err(invalid_value(
                        g,
                        "groupId",
                        "The security group and the subnet belong to different networks.",
                    ));
                }
                groups.push(g.clone());
            }
            if groups.is_empty() {
                groups.extend(r.default_group_id(&subnet.vpc_id));
            }
            let mut eni = new_interface(
                r,
                &subnet,
                groups,
                req.description,
                req.interface_type.as_deref().unwrap_or("interface"),
                req.requester_id,
            )?;
            let mut taken = Vec::new();
            if let Some(ip) = &addresses.primary {
                r.check_free_ip(&subnet, ip, &taken)?;
                eni.private_ip = ip.clone();
            }
            taken.push(eni.private_ip.clone());
            for ip in &addresses.secondary {
                r.check_free_ip(&subnet, ip, &taken)?;
                taken.push(ip.clone());
            }
            let drawn = r.draw_ips(&subnet, addresses.secondary_count, &taken)?;
            eni.secondary_ips = addresses.secondary.into_iter().chain(drawn).collect();
            eni.source_dest_check = addresses.source_dest_check.unwrap_or(true);
            eni.tags = addresses.tags;
            for ip in std::iter::once(&eni.private_ip).chain(&eni.secondary_ips) {
                claim_ip(r, &subnet.id, ip, touched)?;
            }
            r.insert(Resource::NetworkInterface(eni.clone()), touched);
            Ok(eni)
        })
    }

    /// DeleteNetworkInterface: refused while attached to an instance.
    pub fn delete_network_interface(&self, region: &str, eni_id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            if r.interface(eni_id)?.attachment.is_some() {
                return Err(AwsError::bad_request(
                    "InvalidParameterValue",
                    format!("Network interface '{eni_id}' is currently in use."),
                ));
            }
            super::ops::release_interface(r, eni_id, touched)
        })
    }

    /// AttachNetworkInterface: same availability zone, a free device index; answers the
    /// `eni-attach-` id.
    pub fn attach_network_interface(
        &self,
        region: &str,
        eni_id: &str,
        instance_id: &str,
        device_index: i64,
    ) -> Result<String, AwsError> {
        self.change(region, |r, touched| {
            r.settle_instances(touched);
            let eni = r.interface(eni_id)?.clone();
            let instance = r.instance(instance_id)?.clone();
            if eni.attachment.is_some() {
                return Err(interface_in_use(eni_id));
            }
            if instance.state == "terminated" || instance.state == "shutting-down" {
                return Err(AwsError::bad_request(
                    "IncorrectInstanceState",
                    format!("The instance '{instance_id}' is not in a valid state for this operation."),
                ));
            }
            if eni.availability_zone != instance.availability_zone {
                return Err(AwsError::bad_request(
                    "InvalidParameterCombination",
                    "You may not attach a network interface to an instance if they are not in the same availability zone",
                ));
            }
            if device_index < 0 {
                return Err(invalid_value(&device_index.to_string(), "deviceIndex", "Device index must be non-negative."));
            }
            let taken = r.interfaces().any(|n| {
                n.attachment
                    .as_ref()
                    .is_some_and(|a| a.instance_id == instance_id && a.device_index == device_index)
            });
            if taken {
                return Err(AwsError::bad_request(
                    "InvalidParameterValue",
                    format!("Instance '{instance_id}' already has an interface attached at device index '{device_index}'."),
                ));
            }
            let id = new_id("eni-attach");
            r.interface_mut(eni_id)?.attachment = Some(InterfaceAttachment {
                id: id.clone(),
                instance_id: instance_id.to_string(),
                device_index,
                attached: now(),
                delete_on_termination: false,
            });
            touched.push(eni_id.to_string());
            r.address_follow_interface(eni_id, Some(instance_id), touched);
            Ok(id)
        })
    }

    /// DetachNetworkInterface by attachment id; an instance's primary interface stays.
    pub fn detach_network_interface(
        &self,
        region: &str,
        attachment_id: &str,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let eni = r
                .interfaces()
                .find(|n| n.attachment.as_ref().is_some_and(|a| a.id == attachment_id))
                .cloned()
                .ok_or_else(|| {
                    if check_id(attachment_id, "eni-attach").is_err() {
                        return AwsError::bad_request(
                            "InvalidAttachmentID.Malformed",
                            format!("Invalid id: \"{attachment_id}\" (expecting \"eni-attach-...\")"),
                        );
                    }
                    AwsError::bad_request(
                        "InvalidAttachmentID.NotFound",
                        format!("Interface attachment '{attachment_id}' does not exist"),
                    )
                })?;
            if eni.attachment.as_ref().is_some_and(|a| a.device_index == 0) {
                return Err(AwsError::bad_request(
                    "OperationNotPermitted",
                    "The network interface at device index 0 and networkCard index 0 cannot be detached.",
                ));
            }
            r.interface_mut(&eni.id)?.attachment = None;
            touched.push(eni.id.clone());
            r.address_follow_interface(&eni.id, None, touched);
            Ok(())
        })
    }

    /// AssignPrivateIpAddresses: the addresses named, or `count` drawn from the subnet;
    /// answers those assigned.
    pub fn assign_private_ips(
        &self,
        region: &str,
        eni_id: &str,
        ips: &[String],
        count: usize,
    ) -> Result<Vec<String>, AwsError> {
        self.change(region, |r, touched| {
            let eni = r.interface(eni_id)?.clone();
            if ips.is_empty() && count == 0 {
                return Err(missing("SecondaryPrivateIpAddressCount"));
            }
            let subnet = r.subnet(&eni.subnet_id)?.clone();
            let mut taken = Vec::new();
            for ip in ips {
                r.check_free_ip(&subnet, ip, &taken)?;
                taken.push(ip.clone());
            }
            let drawn = r.draw_ips(&subnet, count, &taken)?;
            let added: Vec<String> = ips.iter().cloned().chain(drawn).collect();
            for ip in &added {
                claim_ip(r, &subnet.id, ip, touched)?;
            }
            r.interface_mut(eni_id)?
                .secondary_ips
                .extend(added.iter().cloned());
            touched.push(eni_id.to_string());
            Ok(added)
        })
    }

    /// UnassignPrivateIpAddresses: each must be a secondary address of the interface; an
    /// elastic IP on one loses its association.
    pub fn unassign_private_ips(
        &self,
        region: &str,
        eni_id: &str,
        ips: &[String],
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let eni = r.interface(eni_id)?.clone();
            if ips.is_empty() {
                return Err(missing("PrivateIpAddress"));
            }
            if let Some(bad) = ips.iter().find(|ip| !eni.secondary_ips.contains(ip)) {
                return Err(AwsError::bad_request(
                    "InvalidParameterValue",
                    format!("Some of the specified addresses are not assigned to interface {eni_id}: {bad}"),
                ));
            }
            if let Ok(s) = r.subnet_mut(&eni.subnet_id) {
                s.used_ips.retain(|u| !ips.contains(u));
                touched.push(eni.subnet_id.clone());
            }
            r.interface_mut(eni_id)?.secondary_ips.retain(|u| !ips.contains(u));
            touched.push(eni_id.to_string());
            for res in r.items.values_mut() {
                if let Resource::Address(a) = res
                    && a.network_interface_id.as_deref() == Some(eni_id)
                    && a.private_ip.as_ref().is_some_and(|p| ips.contains(p))
                {
                    clear(a);
                    touched.push(a.allocation_id.clone());
                }
            }
            Ok(())
        })
    }

    pub fn modify_network_interface(
        &self,
        region: &str,
        eni_id: &str,
        attribute: InterfaceAttribute,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let eni = r.interface(eni_id)?.clone();
            if let InterfaceAttribute::Groups(groups) = &attribute {
                for g in groups {
                    if r.group(g)?.vpc_id != eni.vpc_id {
                        return Err(invalid_value(
                            g,
                            "groupId",
                            "The security group and the network interface belong to different networks.",
                        ));
                    }
                }
            }
            if matches!(attribute, InterfaceAttribute::DeleteOnTermination(_))
                && eni.attachment.is_none()
            {
                return Err(AwsError::bad_request(
                    "InvalidAttachmentID.NotFound",
                    format!("Interface '{eni_id}' is not attached"),
                ));
            }
            let n = r.interface_mut(eni_id)?;
            match attribute {
                InterfaceAttribute::DeleteOnTermination(b) => {
                    if let Some(a) = &mut n.attachment {
                        a.delete_on_termination = b;
                    }
                }
                InterfaceAttribute::Description(d) => n.description = d,
                InterfaceAttribute::SourceDestCheck(b) => n.source_dest_check = b,
                InterfaceAttribute::Groups(g) => n.groups = g,
            }
            touched.push(eni_id.to_string());
            Ok(())
        })
    }

    /// AssociateAddress: to an instance's primary interface, or to an interface (and one of
    /// its addresses, the primary by default). An address already associated moves only with
    /// `allow_reassociation`; one already on the target is taken off it. Answers the
    /// `eipassoc-` id.
    pub fn associate_address(
        &self,
        region: &str,
        allocation_id: &str,
        target: AssociationTarget,
    ) -> Result<String, AwsError> {
        self.change(region, |r, touched| {
            r.settle_instances(touched);
            let address = r.address(allocation_id)?.clone();
            let eni_id = match (&target.network_interface_id, &target.instance_id) {
                (Some(eni), _) => {
                    r.interface(eni)?;
                    eni.clone()
                }
                (None, Some(i)) => {
                    let instance = r.instance(i)?;
                    if instance.state != "running" && instance.state != "stopped" {
                        return Err(AwsError::bad_request(
                            "IncorrectInstanceState",
                            format!("The pending-instance-running instance to which '{i}' is associated is not in a valid state for this operation."),
                        ));
                    }
                    instance
                        .network_interface_id
                        .clone()
                        .ok_or_else(|| AwsError::bad_request("IncorrectInstanceState", format!("The instance '{i}' is not in a valid state for this operation.")))?
                }
                (None, None) => return Err(missing("InstanceId")),
            };
            let eni = r.interface(&eni_id)?.clone();
            if let Some(i) = &target.instance_id
                && target.network_interface_id.is_some()
                && eni.attachment.as_ref().map(|a| &a.instance_id) != Some(i)
            {
                return Err(AwsError::bad_request(
                    "InvalidParameterCombination",
                    format!("The network interface {eni_id} is not attached to instance {i}."),
                ));
            }
            let private_ip = target.private_ip.clone().unwrap_or_else(|| eni.private_ip.clone());
            if private_ip != eni.private_ip && !eni.secondary_ips.contains(&private_ip) {
                return Err(AwsError::bad_request(
                    "InvalidParameterValue",
                    format!("The specified private IP address {private_ip} is not assigned to network interface {eni_id}."),
                ));
            }
            if address.association_id.is_some() && !target.allow_reassociation {
                return Err(AwsError::bad_request(
                    "Resource.AlreadyAssociated",
                    format!(
                        "resource {allocation_id} is already associated with associationId {}",
                        address.association_id.unwrap_or_default()
                    ),
                ));
            }
            // An address already on that interface address is replaced.
            let displaced: Vec<String> = r
                .of(|x| match x {
                    Resource::Address(a)
                        if a.allocation_id != allocation_id
                            && a.network_interface_id.as_deref() == Some(eni_id.as_str())
                            && a.private_ip.as_deref() == Some(private_ip.as_str()) =>
                    {
                        Some(&a.allocation_id)
                    }
                    _ => None,
                })
                .cloned()
                .collect();
            if !displaced.is_empty() && !target.allow_reassociation {
                return Err(AwsError::bad_request(
                    "Resource.AlreadyAssociated",
                    format!("resource {eni_id} is already associated with an elastic IP address at {private_ip}"),
                ));
            }
            for d in displaced {
                clear(r.address_mut(&d)?);
                touched.push(d);
            }
            let id = new_id("eipassoc");
            let a = r.address_mut(allocation_id)?;
            a.association_id = Some(id.clone());
            a.network_interface_id = Some(eni_id.clone());
            a.private_ip = Some(private_ip);
            a.instance_id = eni.attachment.map(|at| at.instance_id);
            touched.push(allocation_id.to_string());
            Ok(id)
        })
    }

    /// DisassociateAddress by association id.
    pub fn disassociate_address(&self, region: &str, association_id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let allocation = r
                .of(|x| match x {
                    Resource::Address(a) if a.association_id.as_deref() == Some(association_id) => {
                        Some(&a.allocation_id)
                    }
                    _ => None,
                })
                .next()
                .cloned()
                .ok_or_else(|| {
                    if check_id(association_id, "eipassoc").is_err() {
                        return AwsError::bad_request(
                            "InvalidAssociationID.Malformed",
                            format!("Invalid id: \"{association_id}\" (expecting \"eipassoc-...\")"),
                        );
                    }
                    not_found(association_id)
                })?;
            let nat_owned = r.items.values().any(|x| {
                matches!(x, Resource::NatGateway(n) if n.allocation_id.as_deref() == Some(allocation.as_str()) && n.holds_address())
            });
            if nat_owned {
                return Err(AwsError::bad_request(
                    "AuthFailure",
                    "You do not have permission to access the specified resource.",
                ));
            }
            clear(r.address_mut(&allocation)?);
            touched.push(allocation);
            Ok(())
        })
    }
}
