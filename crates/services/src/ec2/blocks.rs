//! The blocks of a VPC beyond its first: secondary IPv4 CIDRs and Amazon-provided IPv6 /56s
//! (each with its association id and a local route in every route table of the VPC), IPv6 /64s
//! of subnets, and egress-only internet gateways for IPv6 egress.

use super::cidr::Block;
use super::errors::{dependency, invalid_value, not_found};
use super::model::*;
use super::{Ec2Service, Region};
use cumulo_wire::AwsError;
use std::net::Ipv6Addr;

/// An IPv6 block: its base as a number and prefix length.
pub fn parse_v6(text: &str) -> Option<(u128, u8)> {
    let (addr, len) = text.split_once('/')?;
    let addr: Ipv6Addr = addr.parse().ok()?;
    let prefix: u8 = len.parse().ok().filter(|p| *p <= 128)?;
    let base = u128::from(addr);
    let mask = if prefix == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(prefix))
    };
    (base & !mask == 0).then_some((base, prefix))
}

fn v6_contains(outer: (u128, u8), inner: (u128, u8)) -> bool {
    let mask = if outer.1 == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(outer.1))
    };
    inner.1 >= outer.1 && inner.0 & mask == outer.0
}

/// A new Amazon-provided /56, in the range AWS hands out (2600:1f18::/32 for us-east-1).
fn amazon_v6() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    let (a, b): (u16, u8) = (rng.random(), rng.random());
    format!("2600:1f18:{a:x}:{:x}00::/56", b)
}

fn local_route(destination: &str) -> Route {
    Route {
        destination: destination.to_string(),
        target: "local".into(),
        origin: "CreateRouteTable".into(),
    }
}

impl Region {
    /// Adds or drops the local route of `cidr` in every route table of the VPC.
    fn local_routes(&mut self, vpc_id: &str, cidr: &str, add: bool, touched: &mut Vec<String>) {
        for r in self.items.values_mut() {
            if let Resource::RouteTable(t) = r
                && t.vpc_id == vpc_id
            {
                t.routes.retain(|x| x.destination != cidr);
                if add {
                    t.routes.push(local_route(cidr));
                }
                touched.push(t.id.clone());
            }
        }
    }

    /// The VPC holding a block association.
    fn vpc_of_block(
        &self,
        association_id: &str,
    ) -> Result<(String, CidrAssociation, bool), AwsError> {
        for r in self.items.values() {
            if let Resource::Vpc(v) = r {
                if let Some(a) = v.secondary.iter().find(|a| a.id == association_id) {
                    return Ok((v.id.clone(), a.clone(), false));
                }
                if let Some(a) = v.ipv6.iter().find(|a| a.id == association_id) {
                    return Ok((v.id.clone(), a.clone(), true));
                }
                if v.cidr_association_id == association_id {
                    return Err(invalid_value(
                        association_id,
                        "associationId",
                        "The primary CIDR block of a VPC cannot be disassociated.",
                    ));
                }
            }
        }
        Err(not_found(association_id))
    }
}

impl Ec2Service {
    /// AssociateVpcCidrBlock: a secondary IPv4 block, or (`amazon_ipv6`) an Amazon /56.
    /// Answers the association.
    pub fn associate_vpc_cidr_block(
        &self,
        region: &str,
        vpc_id: &str,
        cidr: Option<&str>,
        amazon_ipv6: bool,
    ) -> Result<(CidrAssociation, bool), AwsError> {
        let block = match (cidr, amazon_ipv6) {
            (Some(c), false) => {
                let b = Block::parse(c).ok_or_else(|| {
                    invalid_value(c, "cidrBlock", "This is not a valid CIDR block.")
                })?;
                if !(16..=28).contains(&b.prefix) {
                    return Err(AwsError::bad_request(
                        "InvalidVpc.Range",
                        format!("The CIDR '{c}' is invalid."),
                    ));
                }
                Some(b)
            }
            (None, true) => None,
            _ => {
                return Err(AwsError::bad_request(
                    "InvalidParameterCombination",
                    "Exactly one of CidrBlock and AmazonProvidedIpv6CidrBlock must be given.",
                ));
            }
        };
        self.change(region, |r, touched| {
            let vpc = r.vpc(vpc_id)?;
            let association = match (block, cidr) {
                (Some(b), Some(c)) => {
                    let clash = std::iter::once(&vpc.cidr)
                        .chain(vpc.secondary.iter().map(|a| &a.cidr))
                        .filter_map(|x| Block::parse(x))
                        .any(|x| x.overlaps(&b));
                    if clash {
                        return Err(AwsError::bad_request(
                            "InvalidVpc.Range",
                            format!("The CIDR '{c}' conflicts with another CIDR block of the VPC {vpc_id}."),
                        ));
                    }
                    if vpc.secondary.len() >= 4 {
                        return Err(AwsError::bad_request(
                            "CidrLimitExceeded",
                            format!("This network '{vpc_id}' has met its maximum number of allowed CIDRs: 5"),
                        ));
                    }
                    let a = CidrAssociation { id: new_id("vpc-cidr-assoc"), cidr: c.to_string() };
                    r.vpc_mut(vpc_id)?.secondary.push(a.clone());
                    a
                }
                _ => {
                    if !vpc.ipv6.is_empty() {
                        return Err(AwsError::bad_request(
                            "CidrLimitExceeded",
                            format!("This network '{vpc_id}' has met its maximum number of allowed CIDRs: 1"),
                        ));
                    }
                    let a = CidrAssociation { id: new_id("vpc-cidr-assoc"), cidr: amazon_v6() };
                    r.vpc_mut(vpc_id)?.ipv6.push(a.clone());
                    a
                }
            };
            touched.push(vpc_id.to_string());
            r.local_routes(vpc_id, &association.cidr, true, touched);
            Ok((association, amazon_ipv6))
        })
    }

    /// Refused while a subnet uses the block. Answers (vpc, association, is IPv6).
    pub fn disassociate_vpc_cidr_block(
        &self,
        region: &str,
        association_id: &str,
    ) -> Result<(String, CidrAssociation, bool), AwsError> {
        self.change(region, |r, touched| {
            let (vpc_id, a, v6) = r.vpc_of_block(association_id)?;
            let in_use = r.subnets().any(|s| {
                s.vpc_id == vpc_id
                    && if v6 {
                        s.ipv6.iter().any(|x| {
                            matches!((parse_v6(&a.cidr), parse_v6(&x.cidr)), (Some(o), Some(i)) if v6_contains(o, i))
                        })
                    } else {
                        matches!((Block::parse(&a.cidr), Block::parse(&s.cidr)), (Some(o), Some(i)) if o.contains_block(&i))
                    }
            });
            if in_use {
                return Err(AwsError::bad_request(
                    "InvalidCidrBlock.InUse",
                    format!("The vpc {vpc_id} currently has a subnet within CIDR block {}", a.cidr),
                ));
            }
            let v = r.vpc_mut(&vpc_id)?;
            v.secondary.retain(|x| x.id != association_id);
            v.ipv6.retain(|x| x.id != association_id);
            touched.push(vpc_id.clone());
            r.local_routes(&vpc_id, &a.cidr, false, touched);
            Ok((vpc_id, a, v6))
        })
    }

    /// AssociateSubnetCidrBlock: a /64 inside the VPC's IPv6 block, not used by another subnet.
    pub fn associate_subnet_cidr_block(
        &self,
        region: &str,
        subnet_id: &str,
        cidr: &str,
    ) -> Result<CidrAssociation, AwsError> {
        let block = parse_v6(cidr).ok_or_else(|| {
            invalid_value(
                cidr,
                "ipv6CidrBlock",
                "This is not a valid IPv6 CIDR block.",
            )
        })?;
        self.change(region, |r, touched| {
            let subnet = r.subnet(subnet_id)?;
            let vpc = r.vpc(&subnet.vpc_id)?;
            let inside = vpc
                .ipv6
                .iter()
                .filter_map(|a| parse_v6(&a.cidr))
                .any(|o| v6_contains(o, block));
            if block.1 != 64 || !inside {
                return Err(AwsError::bad_request(
                    "InvalidSubnet.Range",
                    format!("The IPv6 CIDR '{cidr}' is invalid."),
                ));
            }
            if !subnet.ipv6.is_empty() {
                return Err(AwsError::bad_request(
                    "InvalidParameterValue",
                    format!("The subnet {subnet_id} already has an IPv6 CIDR block."),
                ));
            }
            let vpc_id = subnet.vpc_id.clone();
            let taken = r
                .subnets()
                .any(|s| s.vpc_id == vpc_id && s.ipv6.iter().any(|x| x.cidr == cidr));
            if taken {
                return Err(AwsError::bad_request(
                    "InvalidSubnet.Conflict",
                    format!("The CIDR '{cidr}' conflicts with another subnet"),
                ));
            }
            let a = CidrAssociation {
                id: new_id("subnet-cidr-assoc"),
                cidr: cidr.to_string(),
            };
            r.subnet_mut(subnet_id)?.ipv6.push(a.clone());
            touched.push(subnet_id.to_string());
            Ok(a)
        })
    }

    /// Answers (subnet, association).
    pub fn disassociate_subnet_cidr_block(
        &self,
        region: &str,
        association_id: &str,
    ) -> Result<(String, CidrAssociation), AwsError> {
        self.change(region, |r, touched| {
            let found = r.subnets().find_map(|s| {
                s.ipv6
                    .iter()
                    .find(|a| a.id == association_id)
                    .map(|a| (s.id.clone(), a.clone()))
            });
            let (subnet_id, a) = found.ok_or_else(|| not_found(association_id))?;
            r.subnet_mut(&subnet_id)?
                .ipv6
                .retain(|x| x.id != association_id);
            touched.push(subnet_id.clone());
            Ok((subnet_id, a))
        })
    }

    // ----- egress-only internet gateways -----

    pub fn create_egress_only_gateway(
        &self,
        region: &str,
        vpc_id: &str,
        tags: Tags,
    ) -> Result<InternetGateway, AwsError> {
        self.change(region, |r, touched| {
            r.vpc(vpc_id)?;
            let g = InternetGateway {
                id: new_id("eigw"),
                egress_only: true,
                vpc_id: Some(vpc_id.to_string()),
                tags,
            };
            r.insert(Resource::InternetGateway(g.clone()), touched);
            Ok(g)
        })
    }

    pub fn delete_egress_only_gateway(&self, region: &str, id: &str) -> Result<(), AwsError> {
        super::errors::check_id(id, "eigw")?;
        self.change(region, |r, touched| {
            match r.items.get(id) {
                Some(Resource::InternetGateway(g)) if g.egress_only => {}
                _ => return Err(not_found(id)),
            }
            let routed = r.tables().any(|t| t.routes.iter().any(|x| x.target == id));
            if routed {
                return Err(dependency("egressOnlyInternetGateway", id));
            }
            r.remove(id, touched);
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use cumulo_store::Store;
    use std::sync::Arc;

    #[test]
    fn vpc_blocks_bring_local_routes_and_room_for_subnets() {
        let ec2 =
            Ec2Service::new(Arc::new(Store::in_memory().unwrap()), &Config::default()).unwrap();
        let vpc = ec2
            .create_vpc("us-east-1", "10.0.0.0/16", None, Tags::new())
            .unwrap();
        let (a, _) = ec2
            .associate_vpc_cidr_block("us-east-1", &vpc.id, Some("10.1.0.0/16"), false)
            .unwrap();
        let clash = ec2
            .associate_vpc_cidr_block("us-east-1", &vpc.id, Some("10.1.128.0/17"), false)
            .unwrap_err();
        assert_eq!(clash.code, "InvalidVpc.Range");
        let s = ec2
            .create_subnet("us-east-1", &vpc.id, "10.1.2.0/24", None, None, Tags::new())
            .unwrap();
        let routes = ec2
            .read("us-east-1", |r| {
                Ok(r.table(&r.main_table_id(&vpc.id).unwrap())?.routes.clone())
            })
            .unwrap();
        assert!(
            routes
                .iter()
                .any(|x| x.destination == "10.1.0.0/16" && x.target == "local")
        );
        assert_eq!(
            ec2.disassociate_vpc_cidr_block("us-east-1", &a.id)
                .unwrap_err()
                .code,
            "InvalidCidrBlock.InUse"
        );

        let (v6, _) = ec2
            .associate_vpc_cidr_block("us-east-1", &vpc.id, None, true)
            .unwrap();
        let (base, len) = parse_v6(&v6.cidr).unwrap();
        assert_eq!(len, 56);
        let sub64 = format!("{}/64", Ipv6Addr::from(base | (3u128 << 64)));
        let sa = ec2
            .associate_subnet_cidr_block("us-east-1", &s.id, &sub64)
            .unwrap();
        let outside = ec2
            .associate_subnet_cidr_block("us-east-1", &s.id, "2001:db8::/64")
            .unwrap_err();
        assert_eq!(outside.code, "InvalidSubnet.Range");
        ec2.disassociate_subnet_cidr_block("us-east-1", &sa.id)
            .unwrap();
        ec2.delete_subnet("us-east-1", &s.id).unwrap();
        ec2.disassociate_vpc_cidr_block("us-east-1", &a.id).unwrap();
        let routes = ec2
            .read("us-east-1", |r| {
                Ok(r.table(&r.main_table_id(&vpc.id).unwrap())?.routes.clone())
            })
            .unwrap();
        assert!(!routes.iter().any(|x| x.destination == "10.1.0.0/16"));
    }
}
