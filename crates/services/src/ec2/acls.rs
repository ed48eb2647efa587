//! Network ACLs: numbered allow/deny entries per direction, and the subnets they guard. Every
//! VPC has a default ACL (rule 100 allows all, rule 32767 denies the rest, both ways) that
//! each new subnet joins; a subnet is always associated with exactly one ACL, so "removing" an
//! association moves the subnet back to its VPC's default ACL. Nothing filters packets.

use super::cidr::Block;
use super::errors::{dependency, invalid_value, not_found};
use super::model::*;
use super::{Ec2Service, Region};
use cumulo_wire::AwsError;

/// The catch-all deny entry of every ACL, which no call can change.
const LAST_RULE: i64 = 32767;

fn entry(rule_number: i64, egress: bool, action: &str) -> AclEntry {
    AclEntry {
        rule_number,
        egress,
        protocol: "-1".into(),
        action: action.into(),
        cidr: Some("0.0.0.0/0".into()),
        ipv6_cidr: None,
        port_range: None,
        icmp: None,
    }
}

/// A VPC's default ACL: allow all at 100, deny the rest at 32767, both directions.
pub fn default_acl(vpc_id: &str) -> NetworkAcl {
    NetworkAcl {
        id: new_id("acl"),
        vpc_id: vpc_id.to_string(),
        is_default: true,
        entries: [false, true]
            .into_iter()
            .flat_map(|egress| {
                [
                    entry(100, egress, "allow"),
                    entry(LAST_RULE, egress, "deny"),
                ]
            })
            .collect(),
        associations: Vec::new(),
        tags: Default::default(),
    }
}

/// A protocol as AWS keeps it on an entry: a number, `-1` for all.
pub fn protocol_number(p: &str) -> Result<String, AwsError> {
    let n = match p.to_ascii_lowercase().as_str() {
        "all" | "-1" => "-1".to_string(),
        "tcp" => "6".into(),
        "udp" => "17".into(),
        "icmp" => "1".into(),
        "icmpv6" => "58".into(),
        n if n.parse::<u8>().is_ok() => n.parse::<u8>().map(|x| x.to_string()).unwrap_or_default(),
        other => {
            return Err(AwsError::bad_request(
                "InvalidParameterValue",
                format!("Invalid value '{other}' for protocol. Unknown protocol."),
            ));
        }
    };
    Ok(n)
}

/// An entry as requested, checked: rule number 1..=32766, an action, one block, ports for
/// TCP/UDP and a type/code for ICMP.
pub fn check_entry(e: &AclEntry) -> Result<(), AwsError> {
    if !(1..LAST_RULE).contains(&e.rule_number) {
        return Err(AwsError::bad_request(
            "InvalidParameterValue",
            format!(
                "Value ({}) for parameter ruleNumber is invalid. Rule numbers must be between 1 and 32766.",
                e.rule_number
            ),
        ));
    }
    if !matches!(e.action.as_str(), "allow" | "deny") {
        return Err(invalid_value(
            &e.action,
            "ruleAction",
            "Must be allow or deny.",
        ));
    }
    match (&e.cidr, &e.ipv6_cidr) {
        (Some(c), None) if Block::parse(c).is_none() => {
            return Err(invalid_value(
                c,
                "cidrBlock",
                "This is not a valid CIDR block.",
            ));
        }
        (Some(_), None) | (None, Some(_)) => {}
        _ => {
            return Err(AwsError::bad_request(
                "InvalidParameterCombination",
                "Either an IPv4 or an IPv6 CIDR block must be specified.",
            ));
        }
    }
    if matches!(e.protocol.as_str(), "6" | "17") && e.port_range.is_none() {
        return Err(AwsError::bad_request(
            "InvalidParameterValue",
            "Value () for parameter portRange is invalid. TCP and UDP entries need a port range.",
        ));
    }
    if let Some((from, to)) = e.port_range
        && !(from <= to && (0..=65535).contains(&from) && (0..=65535).contains(&to))
    {
        return Err(AwsError::bad_request(
            "InvalidParameterValue",
            format!("Invalid port range {from}-{to}"),
        ));
    }
    if e.protocol == "1" && e.icmp.is_none() {
        return Err(AwsError::bad_request(
            "InvalidParameterValue",
            "Value () for parameter icmpTypeCode is invalid. ICMP entries need a type and code.",
        ));
    }
    Ok(())
}

impl Region {
    pub(super) fn acls(&self) -> impl Iterator<Item = &NetworkAcl> + '_ {
        self.items.values().filter_map(|r| match r {
            Resource::NetworkAcl(a) => Some(a),
            _ => None,
        })
    }

    pub(super) fn default_acl_id(&self, vpc_id: &str) -> Option<String> {
        self.acls()
            .find(|a| a.vpc_id == vpc_id && a.is_default)
            .map(|a| a.id.clone())
    }

    /// Joins a new subnet to its VPC's default ACL.
    pub(super) fn join_default_acl(
        &mut self,
        subnet_id: &str,
        vpc_id: &str,
        touched: &mut Vec<String>,
    ) {
        if let Some(id) = self.default_acl_id(vpc_id)
            && let Ok(acl) = self.acl_mut(&id)
        {
            acl.associations.push(AclAssociation {
                id: new_id("aclassoc"),
                subnet_id: subnet_id.to_string(),
            });
            touched.push(id);
        }
    }

    /// Drops a deleted subnet's association.
    pub(super) fn leave_acl(&mut self, subnet_id: &str, touched: &mut Vec<String>) {
        for r in self.items.values_mut() {
            if let Resource::NetworkAcl(a) = r
                && a.associations.iter().any(|x| x.subnet_id == subnet_id)
            {
                a.associations.retain(|x| x.subnet_id != subnet_id);
                touched.push(a.id.clone());
            }
        }
    }

    /// The ACL holding an association, and the association.
    pub(super) fn acl_of_association(
        &self,
        association_id: &str,
    ) -> Result<(String, AclAssociation), AwsError> {
        self.acls()
            .find_map(|a| {
                a.associations
                    .iter()
                    .find(|x| x.id == association_id)
                    .map(|x| (a.id.clone(), x.clone()))
            })
            .ok_or_else(|| not_found(association_id))
    }

    /// The association of a subnet (every subnet of a VPC with a default ACL has one).
    pub fn acl_association_of(&self, subnet_id: &str) -> Option<(String, String)> {
        self.acls().find_map(|a| {
            a.associations
                .iter()
                .find(|x| x.subnet_id == subnet_id)
                .map(|x| (a.id.clone(), x.id.clone()))
        })
    }
}

impl Ec2Service {
    pub fn create_network_acl(
        &self,
        region: &str,
        vpc_id: &str,
        tags: Tags,
    ) -> Result<NetworkAcl, AwsError> {
        self.change(region, |r, touched| {
            r.vpc(vpc_id)?;
            let acl = NetworkAcl {
                id: new_id("acl"),
                vpc_id: vpc_id.to_string(),
                is_default: false,
                entries: vec![
                    entry(LAST_RULE, false, "deny"),
                    entry(LAST_RULE, true, "deny"),
                ],
                associations: Vec::new(),
                tags,
            };
            r.insert(Resource::NetworkAcl(acl.clone()), touched);
            Ok(acl)
        })
    }

    pub fn delete_network_acl(&self, region: &str, acl_id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let acl = r.acl(acl_id)?;
            if acl.is_default {
                return Err(AwsError::bad_request(
                    "InvalidParameterValue",
                    format!("cannot delete default network ACL {acl_id}"),
                ));
            }
            if !acl.associations.is_empty() {
                return Err(dependency("networkAcl", acl_id));
            }
            r.remove(acl_id, touched);
            Ok(())
        })
    }

    /// Adds an entry (`replace`: changes the entry with the same number and direction).
    pub fn put_network_acl_entry(
        &self,
        region: &str,
        acl_id: &str,
        entry: AclEntry,
        replace: bool,
    ) -> Result<(), AwsError> {
        check_entry(&entry)?;
        self.change(region, |r, touched| {
            let acl = r.acl_mut(acl_id)?;
            let existing = acl
                .entries
                .iter_mut()
                .find(|e| e.rule_number == entry.rule_number && e.egress == entry.egress);
            match (existing, replace) {
                (Some(e), true) => *e = entry,
                (None, false) => acl.entries.push(entry),
                (Some(_), false) => {
                    return Err(AwsError::bad_request(
                        "NetworkAclEntryAlreadyExists",
                        format!(
                            "The network acl entry identified by {} already exists.",
                            entry.rule_number
                        ),
                    ));
                }
                (None, true) => {
                    return Err(AwsError::bad_request(
                        "InvalidNetworkAclEntry.NotFound",
                        format!(
                            "The network acl entry identified by {} does not exist.",
                            entry.rule_number
                        ),
                    ));
                }
            }
            acl.entries.sort_by_key(|e| (e.egress, e.rule_number));
            touched.push(acl_id.to_string());
            Ok(())
        })
    }

    pub fn delete_network_acl_entry(
        &self,
        region: &str,
        acl_id: &str,
        rule_number: i64,
        egress: bool,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let acl = r.acl_mut(acl_id)?;
            let before = acl.entries.len();
            acl.entries.retain(|e| {
                !(e.rule_number == rule_number && e.egress == egress && rule_number != LAST_RULE)
            });
            if acl.entries.len() == before {
                return Err(AwsError::bad_request(
                    "InvalidNetworkAclEntry.NotFound",
                    format!("The network acl entry identified by {rule_number} does not exist."),
                ));
            }
            touched.push(acl_id.to_string());
            Ok(())
        })
    }

    /// Moves a subnet's association to another ACL of its VPC; answers the new association id.
    pub fn replace_network_acl_association(
        &self,
        region: &str,
        association_id: &str,
        acl_id: &str,
    ) -> Result<String, AwsError> {
        self.change(region, |r, touched| {
            let (old_acl, assoc) = r.acl_of_association(association_id)?;
            let vpc = r.subnet(&assoc.subnet_id)?.vpc_id.clone();
            if r.acl(acl_id)?.vpc_id != vpc {
                return Err(invalid_value(
                    acl_id,
                    "networkAclId",
                    "The network ACL and the subnet belong to different networks.",
                ));
            }
            r.acl_mut(&old_acl)?
                .associations
                .retain(|x| x.id != association_id);
            let id = new_id("aclassoc");
            r.acl_mut(acl_id)?.associations.push(AclAssociation {
                id: id.clone(),
                subnet_id: assoc.subnet_id,
            });
            touched.push(old_acl);
            touched.push(acl_id.to_string());
            Ok(id)
        })
    }

    /// Associates a subnet with an ACL (what SubnetNetworkAclAssociation does): its current
    /// association is replaced.
    pub fn associate_network_acl(
        &self,
        region: &str,
        subnet_id: &str,
        acl_id: &str,
    ) -> Result<String, AwsError> {
        let current = self.read(region, |r| {
            r.subnet(subnet_id)?;
            r.acl_association_of(subnet_id)
                .map(|(_, a)| a)
                .ok_or_else(|| not_found(subnet_id))
        })?;
        self.replace_network_acl_association(region, &current, acl_id)
    }

    /// Moves a subnet from the ACL of `association_id` back to its VPC's default ACL.
    pub fn restore_default_network_acl(
        &self,
        region: &str,
        association_id: &str,
    ) -> Result<String, AwsError> {
        let default = self.read(region, |r| {
            let (_, assoc) = r.acl_of_association(association_id)?;
            let vpc = r.subnet(&assoc.subnet_id)?.vpc_id.clone();
            r.default_acl_id(&vpc).ok_or_else(|| not_found(&vpc))
        })?;
        self.replace_network_acl_association(region, association_id, &default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use cumulo_store::Store;
    use std::sync::Arc;

    #[test]
    fn subnets_join_the_default_acl_and_move_between_acls() {
        let ec2 =
            Ec2Service::new(Arc::new(Store::in_memory().unwrap()), &Config::default()).unwrap();
        let vpc = ec2
            .create_vpc("us-east-1", "10.1.0.0/16", None, Tags::new())
            .unwrap();
        let s = ec2
            .create_subnet("us-east-1", &vpc.id, "10.1.1.0/24", None, None, Tags::new())
            .unwrap();
        let (default, assoc) = ec2
            .read("us-east-1", |r| Ok(r.acl_association_of(&s.id).unwrap()))
            .unwrap();
        let entries = ec2
            .read("us-east-1", |r| Ok(r.acl(&default)?.entries.len()))
            .unwrap();
        assert_eq!(entries, 4);
        let acl = ec2
            .create_network_acl("us-east-1", &vpc.id, Tags::new())
            .unwrap();
        let e = AclEntry {
            rule_number: 100,
            egress: false,
            protocol: protocol_number("tcp").unwrap(),
            action: "allow".into(),
            cidr: Some("10.0.0.0/8".into()),
            ipv6_cidr: None,
            port_range: Some((443, 443)),
            icmp: None,
        };
        ec2.put_network_acl_entry("us-east-1", &acl.id, e.clone(), false)
            .unwrap();
        let dup = ec2
            .put_network_acl_entry("us-east-1", &acl.id, e.clone(), false)
            .unwrap_err();
        assert_eq!(dup.code, "NetworkAclEntryAlreadyExists");
        let bad = AclEntry {
            rule_number: 40000,
            ..e.clone()
        };
        assert_eq!(
            ec2.put_network_acl_entry("us-east-1", &acl.id, bad, false)
                .unwrap_err()
                .code,
            "InvalidParameterValue"
        );
        let moved = ec2
            .replace_network_acl_association("us-east-1", &assoc, &acl.id)
            .unwrap();
        assert!(moved.starts_with("aclassoc-"));
        assert_eq!(
            ec2.delete_network_acl("us-east-1", &acl.id)
                .unwrap_err()
                .code,
            "DependencyViolation"
        );
        assert_eq!(
            ec2.delete_network_acl("us-east-1", &default)
                .unwrap_err()
                .code,
            "InvalidParameterValue"
        );
        ec2.restore_default_network_acl("us-east-1", &moved)
            .unwrap();
        ec2.delete_network_acl("us-east-1", &acl.id).unwrap();
        ec2.delete_subnet("us-east-1", &s.id).unwrap();
        ec2.delete_vpc("us-east-1", &vpc.id).unwrap();
        assert_eq!(
            ec2.read("us-east-1", |r| r.acl(&default).map(|_| ()))
                .unwrap_err()
                .code,
            "InvalidNetworkAclID.NotFound"
        );
    }
}
