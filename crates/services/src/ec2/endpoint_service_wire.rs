//! The `ec2` protocol for VPC endpoint services and their permissions.

use super::Ec2Service;
use super::endpoint_services::{EndpointServiceRequest, principal_type};
use super::filters;
use super::model::*;
use super::wire::{Answer, Params, describe, ok, one, tag_set};
use cumulo_wire::xml::XmlWriter;

pub(super) fn dispatch(svc: &Ec2Service, region: &str, p: &Params, action: &str) -> Option<Answer> {
    Some(match action {
        "CreateVpcEndpointServiceConfiguration" => (|| {
            let s = svc.create_endpoint_service(
                region,
                EndpointServiceRequest {
                    acceptance_required: p.flag("AcceptanceRequired").unwrap_or(false),
                    network_load_balancer_arns: p.strings("NetworkLoadBalancerArn"),
                    gateway_load_balancer_arns: p.strings("GatewayLoadBalancerArn"),
                    private_dns_name: p.get("PrivateDnsName").map(str::to_string),
                    supported_ip_address_types: p.strings("SupportedIpAddressType"),
                    tags: p.tag_specs(),
                },
            )?;
            Ok(one("serviceConfiguration", |w| {
                configuration(w, region, &s)
            }))
        })(),
        "DescribeVpcEndpointServiceConfigurations" => describe(
            svc,
            region,
            p,
            "ServiceId",
            "vpce-svc",
            "serviceConfigurationSet",
            |res, w, region| match res {
                Resource::EndpointService(s) => {
                    configuration(w, region, s);
                    true
                }
                _ => false,
            },
        ),
        "DeleteVpcEndpointServiceConfigurations" => (|| {
            let failed = svc.delete_endpoint_services(region, &p.strings("ServiceId"))?;
            let mut w = XmlWriter::new_fragment();
            w.open("unsuccessful", None);
            for (id, e) in failed {
                w.open("item", None)
                    .open("error", None)
                    .elem("code", &e.code)
                    .elem("message", &e.message)
                    .close()
                    .elem("resourceId", &id)
                    .close();
            }
            w.close();
            Ok(w.finish())
        })(),
        "ModifyVpcEndpointServiceConfiguration" => (|| {
            ok(svc.modify_endpoint_service(
                region,
                p.required("ServiceId")?,
                p.flag("AcceptanceRequired"),
                p.get("PrivateDnsName"),
                &p.strings("AddNetworkLoadBalancerArn"),
                &p.strings("RemoveNetworkLoadBalancerArn"),
            ))
        })(),
        "ModifyVpcEndpointServicePermissions" => (|| {
            let id = p.required("ServiceId")?;
            let added = svc.modify_endpoint_service_permissions(
                region,
                id,
                &p.strings("AddAllowedPrincipals"),
                &p.strings("RemoveAllowedPrincipals"),
            )?;
            let mut w = XmlWriter::new_fragment();
            w.open("addedPrincipalSet", None);
            for (principal, perm) in added {
                w.open("item", None)
                    .elem("principalType", principal_type(&principal)?)
                    .elem("principal", &principal)
                    .elem("servicePermissionId", &perm)
                    .elem("serviceId", id)
                    .close();
            }
            w.close().elem("return", "true");
            Ok(w.finish())
        })(),
        "DescribeVpcEndpointServicePermissions" => (|| {
            let id = p.required("ServiceId")?;
            let s = svc.endpoint_service(region, id)?;
            let wanted = p.filters();
            let mut w = XmlWriter::new_fragment();
            w.open("allowedPrincipals", None);
            for (principal, perm) in &s.principals {
                let kind = principal_type(principal)?;
                let values = |name: &str| match name {
                    "principal" => Some(principal.as_str()),
                    "principal-type" => Some(kind),
                    _ => None,
                };
                let mut keep = true;
                for (name, vals) in &wanted {
                    let v = values(name).ok_or_else(|| {
                        cumulo_wire::AwsError::bad_request(
                            "InvalidParameterValue",
                            format!("The filter '{name}' is invalid"),
                        )
                    })?;
                    keep &= vals.iter().any(|x| filters::glob(x, v));
                }
                if keep {
                    w.open("item", None)
                        .elem("principalType", kind)
                        .elem("principal", principal)
                        .elem("servicePermissionId", perm)
                        .elem("serviceId", id)
                        .raw("<tagSet/>")
                        .close();
                }
            }
            w.close();
            Ok(w.finish())
        })(),
        _ => return None,
    })
}

fn configuration(w: &mut XmlWriter, region: &str, s: &EndpointService) {
    let kind = if s.gateway_load_balancer_arns.is_empty() {
        "Interface"
    } else {
        "GatewayLoadBalancer"
    };
    w.open("serviceType", None)
        .open("item", None)
        .elem("serviceType", kind)
        .close()
        .close()
        .elem("serviceId", &s.id)
        .elem("serviceName", &s.service_name)
        .elem("serviceState", "Available")
        .raw("<availabilityZoneIdSet/><availabilityZoneSet/>")
        .elem("acceptanceRequired", &s.acceptance_required.to_string())
        .elem("managesVpcEndpoints", "false");
    for (set, arns) in [
        ("networkLoadBalancerArnSet", &s.network_load_balancer_arns),
        ("gatewayLoadBalancerArnSet", &s.gateway_load_balancer_arns),
        ("supportedIpAddressTypeSet", &s.supported_ip_address_types),
    ] {
        w.open(set, None);
        for a in arns {
            w.elem("item", a);
        }
        w.close();
    }
    w.open("baseEndpointDnsNameSet", None)
        .elem("item", &format!("{}.{region}.vpce.amazonaws.com", s.id))
        .close()
        .opt("privateDnsName", s.private_dns_name.as_deref());
    // The TXT record AWS asks the owner to publish; nothing checks DNS here, so the name
    // stays pending verification.
    if s.private_dns_name.is_some() {
        let token = s.id.trim_start_matches("vpce-svc-");
        w.open("privateDnsNameConfiguration", None)
            .elem("state", "pendingVerification")
            .elem("type", "TXT")
            .elem("value", &format!("vpce:{token}"))
            .elem("name", &format!("_{token}"))
            .close();
    }
    w.elem("payerResponsibility", "ServiceOwner");
    tag_set(w, &s.tags);
}
