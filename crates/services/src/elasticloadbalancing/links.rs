//! What a load balancer holds in other services, kept through their typed operations: a
//! requester-managed network interface from EC2 in each of its subnets (so its subnets'
//! available addresses drop, DescribeNetworkInterfaces lists it, and deleting the subnet or its
//! security group is a DependencyViolation, as on AWS), and its place in the InUseBy of every ACM
//! certificate its listeners use (so ACM refuses to delete one in use).

use super::{ElbService, Kind, Region};
use crate::ec2::NetworkInterfaceRequest;
use cumulo_wire::AwsError;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Every (certificate, load balancer) pair the region's listeners make: a listener's default
/// certificates and those added with AddListenerCertificates.
fn certificate_users(r: &Region) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for rec in r.values().filter(|x| x.kind == Kind::Listener) {
        let Some(lb) = rec.body["LoadBalancerArn"].as_str() else {
            continue;
        };
        let certs = rec.body["Certificates"].as_array().into_iter().flatten();
        for c in certs.chain(rec.items.iter()) {
            if let Some(arn) = c["CertificateArn"].as_str() {
                out.insert((arn.to_string(), lb.to_string()));
            }
        }
    }
    out
}

/// The region of an ACM certificate's ARN; `None` for what ACM does not hold (an IAM server
/// certificate, `arn:aws:iam::...:server-certificate/...`, which cumulo does not emulate).
fn acm_region(arn: &str) -> Option<&str> {
    let mut parts = arn.split(':');
    let (_, _, service, region) = (parts.next(), parts.next(), parts.next()?, parts.next()?);
    (service == "acm").then_some(region)
}

fn certificate_not_found(arn: &str) -> AwsError {
    AwsError::bad_request(
        "CertificateNotFound",
        format!("Certificate '{arn}' not found"),
    )
}

/// The interface type EC2 reports for a load balancer's network interfaces.
fn interface_type(lb_type: &str) -> &'static str {
    match lb_type {
        "network" => "network_load_balancer",
        "gateway" => "gateway_load_balancer",
        _ => "interface",
    }
}

impl ElbService {
    /// [`ElbService::change`] for operations that may change which certificates the region's
    /// listeners use: `f` runs on a copy, ACM records each new use (a certificate ACM does not
    /// have is `CertificateNotFound`, and nothing changes) and forgets each ended one, and only
    /// then is the copy kept.
    pub(crate) fn change_certified<R>(
        &self,
        region: &str,
        f: impl FnOnce(&mut Region, &mut Vec<String>) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        self.change(region, |r, touched| {
            let before = certificate_users(r);
            let mut next = r.clone();
            let mut changed = Vec::new();
            let out = f(&mut next, &mut changed)?;
            let after = certificate_users(&next);
            let mut recorded: Vec<(&str, &str, &str)> = Vec::new();
            for (cert, lb) in after.difference(&before) {
                let Some(at) = acm_region(cert) else {
                    continue;
                };
                if self.acm.add_in_use_by(at, cert, lb).is_err() {
                    for (at, c, l) in recorded {
                        let _ = self.acm.remove_in_use_by(at, c, l);
                    }
                    return Err(certificate_not_found(cert));
                }
                recorded.push((at, cert, lb));
            }
            for (cert, lb) in before.difference(&after) {
                if let Some(at) = acm_region(cert) {
                    // A certificate ACM no longer has has nothing to forget.
                    let _ = self.acm.remove_in_use_by(at, cert, lb);
                }
            }
            *r = next;
            touched.extend(changed);
            Ok(out)
        })
    }

    /// One network interface per subnet for the load balancer `body` describes, recorded as
    /// `{SubnetId, NetworkInterfaceId}`; if one cannot be made, those made are deleted again.
    pub(crate) fn make_interfaces(
        &self,
        region: &str,
        body: &Value,
        subnets: &[String],
    ) -> Result<Vec<Value>, AwsError> {
        let arn = body["LoadBalancerArn"].as_str().unwrap_or("");
        let full = arn.split(":loadbalancer/").nth(1).unwrap_or(arn);
        let groups: Vec<String> = body["SecurityGroups"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| g.as_str().map(str::to_string))
            .collect();
        let lb_type = body["Type"].as_str().unwrap_or("application");
        let mut made = Vec::new();
        for subnet in subnets {
            let req = NetworkInterfaceRequest {
                subnet_id: subnet.clone(),
                security_group_ids: groups.clone(),
                description: format!("ELB {full}"),
                interface_type: Some(interface_type(lb_type).to_string()),
                requester_id: Some("amazon-elb".to_string()),
            };
            match self.ec2.create_network_interface(region, req) {
                Ok(eni) => made.push(
                    json!({"SubnetId": subnet, "NetworkInterfaceId": eni.network_interface_id}),
                ),
                Err(e) => {
                    self.drop_interfaces(region, &made);
                    return Err(e);
                }
            }
        }
        Ok(made)
    }

    /// Deletes the network interfaces `made` lists (one EC2 already lost is no matter).
    pub(crate) fn drop_interfaces(&self, region: &str, made: &[Value]) {
        for m in made {
            if let Some(eni) = m["NetworkInterfaceId"].as_str() {
                let _ = self.ec2.delete_network_interface(region, eni);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_acm_certificates_are_tracked() {
        assert_eq!(
            acm_region("arn:aws:acm:eu-west-1:123456789012:certificate/abc"),
            Some("eu-west-1")
        );
        assert_eq!(
            acm_region("arn:aws:iam::123456789012:server-certificate/web"),
            None
        );
        assert_eq!(acm_region("not-an-arn"), None);
    }
}
