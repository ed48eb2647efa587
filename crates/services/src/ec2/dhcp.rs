//! DHCP options sets and the VPCs that use them. A region's VPCs start with its default set
//! (Amazon's DNS, the region's domain); associating `default` returns a VPC to it.

use super::errors::{dependency, invalid_value};
use super::model::*;
use super::{Ec2Service, Region};
use cumulo_wire::AwsError;

const KEYS: &[&str] = &[
    "domain-name",
    "domain-name-servers",
    "ntp-servers",
    "netbios-name-servers",
    "netbios-node-type",
    "ipv6-address-preferred-lease-time",
];

impl Region {
    /// The region's default options: those the default VPC uses.
    fn default_dhcp_id(&self) -> Option<String> {
        self.default_vpc().map(|v| v.dhcp_options_id.clone())
    }
}

impl Ec2Service {
    pub fn create_dhcp_options(
        &self,
        region: &str,
        configurations: Vec<(String, Vec<String>)>,
        tags: Tags,
    ) -> Result<DhcpOptions, AwsError> {
        if configurations.is_empty() {
            return Err(super::errors::missing("DhcpConfiguration"));
        }
        for (k, values) in &configurations {
            if !KEYS.contains(&k.as_str()) {
                return Err(invalid_value(
                    k,
                    "dhcpConfiguration.key",
                    "Unknown DHCP option.",
                ));
            }
            if values.is_empty() {
                return Err(invalid_value(
                    k,
                    "dhcpConfiguration.value",
                    "A value is required.",
                ));
            }
            if k == "netbios-node-type"
                && !values
                    .iter()
                    .all(|v| ["1", "2", "4", "8"].contains(&v.as_str()))
            {
                return Err(invalid_value(
                    &values.join(","),
                    "netbios-node-type",
                    "Valid values are 1, 2, 4 and 8.",
                ));
            }
        }
        self.change(region, |r, touched| {
            let d = DhcpOptions {
                id: new_id("dopt"),
                configurations,
                tags,
            };
            r.insert(Resource::DhcpOptions(d.clone()), touched);
            Ok(d)
        })
    }

    pub fn delete_dhcp_options(&self, region: &str, id: &str) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            r.dhcp(id)?;
            let used = r
                .items
                .values()
                .any(|x| matches!(x, Resource::Vpc(v) if v.dhcp_options_id == id));
            if used {
                return Err(dependency("dhcpOptions", id));
            }
            r.remove(id, touched);
            Ok(())
        })
    }

    /// `id` may be `default`: the region's default options.
    pub fn associate_dhcp_options(
        &self,
        region: &str,
        id: &str,
        vpc_id: &str,
    ) -> Result<(), AwsError> {
        self.change(region, |r, touched| {
            let options = if id == "default" {
                r.default_dhcp_id().unwrap_or_default()
            } else {
                r.dhcp(id)?.id.clone()
            };
            r.vpc_mut(vpc_id)?.dhcp_options_id = options;
            touched.push(vpc_id.to_string());
            Ok(())
        })
    }
}
