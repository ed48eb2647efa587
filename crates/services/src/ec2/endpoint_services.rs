//! VPC endpoint services (PrivateLink): a service in front of network or gateway load
//! balancers, named `com.amazonaws.vpce.<region>.vpce-svc-<id>`, and the principals allowed to
//! connect to it. The load balancers are named by ARN; EC2 cannot call Elastic Load Balancing
//! (which is built on EC2), so the API checks an ARN's shape and the CloudFormation provider
//! checks that the load balancer exists.

use super::model::*;
use super::{Ec2Service, Region};
use cumulo_wire::AwsError;

/// What CreateVpcEndpointServiceConfiguration asks for.
#[derive(Debug, Clone, Default)]
pub struct EndpointServiceRequest {
    pub acceptance_required: bool,
    pub network_load_balancer_arns: Vec<String>,
    pub gateway_load_balancer_arns: Vec<String>,
    pub private_dns_name: Option<String>,
    pub supported_ip_address_types: Vec<String>,
    pub tags: Tags,
}

fn invalid(message: String) -> AwsError {
    AwsError::bad_request("InvalidParameter", message)
}

/// Exactly one kind of load balancer, each an ELB load balancer ARN of that kind.
fn check_balancers(network: &[String], gateway: &[String]) -> Result<(), AwsError> {
    if network.is_empty() == gateway.is_empty() {
        return Err(invalid(
            "Exactly one of NetworkLoadBalancerArns or GatewayLoadBalancerArns must be specified."
                .into(),
        ));
    }
    for (arns, kind) in [(network, "net"), (gateway, "gwy")] {
        for arn in arns {
            let ok = arn.starts_with("arn:aws")
                && arn.contains(":elasticloadbalancing:")
                && arn.contains(&format!(":loadbalancer/{kind}/"));
            if !ok {
                return Err(invalid(format!("Invalid load balancer ARN: {arn}")));
            }
        }
    }
    Ok(())
}

/// `*`, an IAM ARN (account root, user or role) or a service principal; answers its type.
pub fn principal_type(principal: &str) -> Result<&'static str, AwsError> {
    let kind = if principal == "*" {
        "All"
    } else if principal.ends_with(".amazonaws.com") {
        "Service"
    } else if let Some(rest) = principal.strip_prefix("arn:aws:iam::") {
        match rest.split_once(':') {
            Some((_, "root")) => "Account",
            Some((_, r)) if r.starts_with("user/") => "User",
            Some((_, r)) if r.starts_with("role/") => "Role",
            _ => "",
        }
    } else {
        ""
    };
    if kind.is_empty() {
        return Err(AwsError::bad_request(
            "InvalidPrincipal",
            format!("Invalid Principal: '{principal}'"),
        ));
    }
    Ok(kind)
}

fn check_ip_types(types: &[String]) -> Result<(), AwsError> {
    match types
        .iter()
        .find(|t| !matches!(t.as_str(), "ipv4" | "ipv6"))
    {
        Some(t) => Err(invalid(format!("Invalid supported IP address type: {t}"))),
        None => Ok(()),
    }
}

impl Region {
    fn endpoint_services(&self) -> impl Iterator<Item = &EndpointService> + '_ {
        self.of(|r| match r {
            Resource::EndpointService(x) => Some(x),
            _ => None,
        })
    }
}

impl Ec2Service {
    pub fn create_endpoint_service(
        &self,
        region: &str,
        req: EndpointServiceRequest,
    ) -> Result<EndpointService, AwsError> {
        check_balancers(
            &req.network_load_balancer_arns,
            &req.gateway_load_balancer_arns,
        )?;
        check_ip_types(&req.supported_ip_address_types)?;
        self.change(region, |r, touched| {
            if let Some(taken) = r.endpoint_services().find(|s| {
                s.network_load_balancer_arns
                    .iter()
                    .chain(&s.gateway_load_balancer_arns)
                    .any(|a| {
                        req.network_load_balancer_arns.contains(a)
                            || req.gateway_load_balancer_arns.contains(a)
                    })
            }) {
                return Err(invalid(format!(
                    "The load balancer is already associated with another VPC Endpoint Service: {}",
                    taken.id
                )));
            }
            let id = new_id("vpce-svc");
            let service = EndpointService {
                service_name: format!("com.amazonaws.vpce.{region}.{id}"),
                id,
                acceptance_required: req.acceptance_required,
                network_load_balancer_arns: req.network_load_balancer_arns,
                gateway_load_balancer_arns: req.gateway_load_balancer_arns,
                private_dns_name: req.private_dns_name,
                supported_ip_address_types: if req.supported_ip_address_types.is_empty() {
                    vec!["ipv4".into()]
                } else {
                    req.supported_ip_address_types
                },
                principals: Vec::new(),
                tags: req.tags,
            };
            r.insert(Resource::EndpointService(service.clone()), touched);
            Ok(service)
        })
    }

    pub fn endpoint_service(&self, region: &str, id: &str) -> Result<EndpointService, AwsError> {
        self.read(region, |r| r.endpoint_service(id).cloned())
    }

    /// ModifyVpcEndpointServiceConfiguration: acceptance and load balancers added or removed.
    pub fn modify_endpoint_service(
        &self,
        region: &str,
        id: &str,
        acceptance_required: Option<bool>,
        private_dns_name: Option<&str>,
        add_network: &[String],
        remove_network: &[String],
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let mut s = r.endpoint_service(id)?.clone();
            if let Some(a) = acceptance_required {
                s.acceptance_required = a;
            }
            if let Some(name) = private_dns_name {
                s.private_dns_name = Some(name.to_string());
            }
            s.network_load_balancer_arns
                .retain(|a| !remove_network.contains(a));
            for a in add_network {
                if !s.network_load_balancer_arns.contains(a) {
                    s.network_load_balancer_arns.push(a.clone());
                }
            }
            check_balancers(&s.network_load_balancer_arns, &s.gateway_load_balancer_arns)?;
            r.insert(Resource::EndpointService(s), touched);
            Ok(())
        })
    }

    /// DeleteVpcEndpointServiceConfigurations: each id deleted or answered as unsuccessful
    /// (code, message), as AWS answers a batch.
    pub fn delete_endpoint_services(
        &self,
        region: &str,
        ids: &[String],
    ) -> Result<Vec<(String, AwsError)>, AwsError> {
        self.change(region, |r, touched| {
            let mut failed = Vec::new();
            for id in ids {
                match r.endpoint_service(id) {
                    Ok(_) => r.remove(id, touched),
                    Err(e) => failed.push((id.clone(), e)),
                }
            }
            Ok(failed)
        })
    }

    /// ModifyVpcEndpointServicePermissions: every principal checked before any is added;
    /// removing one not allowed is AWS's `InvalidParameter`. Answers the added principals.
    pub fn modify_endpoint_service_permissions(
        &self,
        region: &str,
        id: &str,
        add: &[String],
        remove: &[String],
    ) -> Result<Vec<(String, String)>, AwsError> {
        for p in add.iter().chain(remove) {
            principal_type(p)?;
        }
        self.change(region, |r, touched| {
            let s = r.endpoint_service_mut(id)?;
            if let Some(p) = remove
                .iter()
                .find(|p| !s.principals.iter().any(|(x, _)| x == *p))
            {
                return Err(invalid(format!(
                    "Principal {p} is not allowed for service {id}"
                )));
            }
            s.principals.retain(|(p, _)| !remove.contains(p));
            let mut added = Vec::new();
            for p in add {
                if !s.principals.iter().any(|(x, _)| x == p) {
                    let perm = (p.clone(), new_id("vpce-svc-perm"));
                    s.principals.push(perm.clone());
                    added.push(perm);
                }
            }
            touched.push(id.to_string());
            Ok(added)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_and_balancers() {
        assert_eq!(principal_type("*").unwrap(), "All");
        assert_eq!(principal_type("appflow.amazonaws.com").unwrap(), "Service");
        assert_eq!(
            principal_type("arn:aws:iam::123456789012:root").unwrap(),
            "Account"
        );
        assert_eq!(
            principal_type("arn:aws:iam::123456789012:role/x").unwrap(),
            "Role"
        );
        assert_eq!(principal_type("bob").unwrap_err().code, "InvalidPrincipal");
        let nlb = "arn:aws:elasticloadbalancing:us-east-1:000000000000:loadbalancer/net/n/0123"
            .to_string();
        let alb = "arn:aws:elasticloadbalancing:us-east-1:000000000000:loadbalancer/app/a/0123"
            .to_string();
        assert!(check_balancers(std::slice::from_ref(&nlb), &[]).is_ok());
        assert!(check_balancers(&[alb], &[]).is_err());
        assert!(check_balancers(&[], &[]).is_err());
    }
}
