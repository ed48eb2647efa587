//! AWS::EC2::VPCEndpointService and AWS::EC2::VPCEndpointServicePermissions. The provider,
//! unlike EC2's API, can reach Elastic Load Balancing: each load balancer named must exist and
//! be of the kind the property names.

use super::network::{added, strings};
use super::{SERVICE, TAGGED_NOT_FOUND, boolean, create_tags, retag};
use crate::ec2::{Ec2Service, EndpointServiceRequest};
use crate::elasticloadbalancing::ElbService;
use crate::providers::declared::{self, Answer, Declared, Made, refuse_other_changes};
use crate::providers::{ProviderServices, required};
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    declared::register(r, Service(s.ec2.clone(), s.elasticloadbalancing.clone()));
    declared::register(r, Permissions(s.ec2.clone()));
}

struct Service(Arc<Ec2Service>, Arc<ElbService>);

impl Service {
    /// Each ARN names an existing load balancer of type `kind`.
    fn check(&self, ctx: &ProviderContext, arns: &[String], kind: &str) -> Answer<()> {
        for arn in arns {
            let found = self.1.call(
                &ctx.region,
                "DescribeLoadBalancers",
                &json!({"LoadBalancerArns": [arn]}),
            )?;
            let actual = found
                .pointer("/LoadBalancers/0/Type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if actual != kind {
                return Err(ProviderError::Failed(format!(
                    "Load balancer {arn} is not a {kind} load balancer"
                ))
                .into());
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Declared for Service {
    const ATTRIBUTES: &'static [&'static str] = &["ServiceId"];
    const TYPE: &'static str = "AWS::EC2::VPCEndpointService";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "AcceptanceRequired",
        "NetworkLoadBalancerArns",
        "GatewayLoadBalancerArns",
        "SupportedIpAddressTypes",
        "PayerResponsibility",
        "ContributorInsightsEnabled",
        "Tags",
    ];
    const UNSUPPORTED: &'static [(&'static str, &'static str)] = &[(
        "SupportedRegions",
        "cumulo's endpoint services serve their own region",
    )];
    const NOT_FOUND: &'static [&'static str] = &["InvalidVpcEndpointServiceId.NotFound"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let network = strings(props, "NetworkLoadBalancerArns")?;
        let gateway = strings(props, "GatewayLoadBalancerArns")?;
        self.check(ctx, &network, "network")?;
        self.check(ctx, &gateway, "gateway")?;
        let s = self.0.create_endpoint_service(
            &ctx.region,
            EndpointServiceRequest {
                acceptance_required: boolean(props, "AcceptanceRequired")?.unwrap_or(false),
                network_load_balancer_arns: network,
                gateway_load_balancer_arns: gateway,
                private_dns_name: None,
                supported_ip_address_types: strings(props, "SupportedIpAddressTypes")?,
                tags: create_tags(ctx, props)?,
            },
        )?;
        Ok(Made::new(s.id.clone()).with("ServiceId", s.id))
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
                "AcceptanceRequired",
                "NetworkLoadBalancerArns",
                "PayerResponsibility",
                "ContributorInsightsEnabled",
                "Tags",
            ],
        )?;
        let before = strings(old, "NetworkLoadBalancerArns")?;
        let after = strings(new, "NetworkLoadBalancerArns")?;
        self.check(ctx, &after, "network")?;
        let (added, removed) = (added(&before, &after), added(&after, &before));
        self.0.modify_endpoint_service(
            &ctx.region,
            id,
            Some(boolean(new, "AcceptanceRequired")?.unwrap_or(false)),
            None,
            &added,
            &removed,
        )?;
        retag(&self.0, ctx, id, new)?;
        Ok(Made::new(id).with("ServiceId", id))
    }

    async fn delete(&self, ctx: &ProviderContext, id: &str, _: &Map<String, Value>) -> Answer<()> {
        match self
            .0
            .delete_endpoint_services(&ctx.region, &[id.to_string()])?
            .pop()
        {
            Some((_, e)) => Err(e.into()),
            None => Ok(()),
        }
    }
}

/// AWS::EC2::VPCEndpointServicePermissions: the service's allowed principals, changed in place.
struct Permissions(Arc<Ec2Service>);

#[async_trait::async_trait]
impl Declared for Permissions {
    const ATTRIBUTES: &'static [&'static str] = &[];
    const TYPE: &'static str = "AWS::EC2::VPCEndpointServicePermissions";
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["ServiceId", "AllowedPrincipals"];
    const NOT_FOUND: &'static [&'static str] = TAGGED_NOT_FOUND;

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let id = required(props, "ServiceId")?;
        self.0.modify_endpoint_service_permissions(
            &ctx.region,
            &id,
            &strings(props, "AllowedPrincipals")?,
            &[],
        )?;
        Ok(Made::new(id))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        let before = strings(old, "AllowedPrincipals")?;
        let after = strings(new, "AllowedPrincipals")?;
        let (added, removed) = (added(&before, &after), added(&after, &before));
        self.0
            .modify_endpoint_service_permissions(&ctx.region, id, &added, &removed)?;
        Ok(Made::new(id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let live = self.0.endpoint_service(&ctx.region, id)?;
        let remove: Vec<String> = strings(props, "AllowedPrincipals")?
            .into_iter()
            .filter(|p| live.principals.iter().any(|(x, _)| x == p))
            .collect();
        self.0
            .modify_endpoint_service_permissions(&ctx.region, id, &[], &remove)?;
        Ok(())
    }
}
