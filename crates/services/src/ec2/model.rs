//! EC2's networking records, as they are kept and persisted: one [`Resource`] per id.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub type Tags = BTreeMap<String, String>;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Vpc {
    pub id: String,
    pub cidr: String,
    pub cidr_association_id: String,
    pub is_default: bool,
    pub dhcp_options_id: String,
    pub instance_tenancy: String,
    pub enable_dns_support: bool,
    pub enable_dns_hostnames: bool,
    /// Secondary IPv4 blocks (AssociateVpcCidrBlock).
    #[serde(default)]
    pub secondary: Vec<CidrAssociation>,
    /// Amazon-provided IPv6 blocks (/56).
    #[serde(default)]
    pub ipv6: Vec<CidrAssociation>,
    pub tags: Tags,
}

/// A block associated with a VPC or subnet, with its association id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CidrAssociation {
    pub id: String,
    pub cidr: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Subnet {
    pub id: String,
    pub vpc_id: String,
    pub cidr: String,
    pub availability_zone: String,
    pub availability_zone_id: String,
    pub default_for_az: bool,
    pub map_public_ip_on_launch: bool,
    /// Private addresses handed out (network interfaces), which the available count excludes.
    pub used_ips: Vec<String>,
    /// IPv6 /64 blocks (AssociateSubnetCidrBlock).
    #[serde(default)]
    pub ipv6: Vec<CidrAssociation>,
    pub tags: Tags,
}

/// One rule of a security group, with its `sgr-` id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    pub id: String,
    pub egress: bool,
    /// `-1` (all), `tcp`, `udp`, `icmp` or a protocol number, as given.
    pub protocol: String,
    pub from_port: Option<i64>,
    pub to_port: Option<i64>,
    /// Exactly one of these four is set.
    pub cidr_ipv4: Option<String>,
    pub cidr_ipv6: Option<String>,
    pub referenced_group_id: Option<String>,
    pub prefix_list_id: Option<String>,
    pub description: Option<String>,
}

impl Rule {
    /// Two rules are the same permission (AWS's duplicate test) when all but id and
    /// description agree.
    pub fn same_permission(&self, other: &Rule) -> bool {
        self.egress == other.egress
            && self.protocol == other.protocol
            && self.from_port == other.from_port
            && self.to_port == other.to_port
            && self.cidr_ipv4 == other.cidr_ipv4
            && self.cidr_ipv6 == other.cidr_ipv6
            && self.referenced_group_id == other.referenced_group_id
            && self.prefix_list_id == other.prefix_list_id
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SecurityGroup {
    pub id: String,
    pub name: String,
    pub description: String,
    pub vpc_id: String,
    pub rules: Vec<Rule>,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Route {
    pub destination: String,
    /// `local`, `igw-...`, `eigw-...`, `nat-...`, `vpce-...`, `eni-...`, `pcx-...`, `tgw-...`.
    pub target: String,
    pub origin: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Association {
    pub id: String,
    /// `None` for the main association.
    pub subnet_id: Option<String>,
    pub gateway_id: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RouteTable {
    pub id: String,
    pub vpc_id: String,
    pub routes: Vec<Route>,
    pub associations: Vec<Association>,
    pub tags: Tags,
}

impl RouteTable {
    pub fn is_main(&self) -> bool {
        self.associations
            .iter()
            .any(|a| a.subnet_id.is_none() && a.gateway_id.is_none())
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InternetGateway {
    pub id: String,
    /// Egress-only gateways (`eigw-`) are always attached to their VPC.
    pub egress_only: bool,
    pub vpc_id: Option<String>,
    pub tags: Tags,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Address {
    pub allocation_id: String,
    pub public_ip: String,
    pub association_id: Option<String>,
    pub network_interface_id: Option<String>,
    pub private_ip: Option<String>,
    /// The instance whose interface holds it (AssociateAddress with InstanceId, or an
    /// interface attached to one).
    #[serde(default)]
    pub instance_id: Option<String>,
    pub tags: Tags,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NatGateway {
    pub id: String,
    pub subnet_id: String,
    pub vpc_id: String,
    pub connectivity: String,
    pub allocation_id: Option<String>,
    pub public_ip: Option<String>,
    pub network_interface_id: String,
    pub private_ip: String,
    /// `pending` until first described after creation, then `available` (or `failed` when
    /// it has a [`NatGateway::failure`]); `deleted` after DeleteNatGateway (kept visible, as
    /// AWS keeps it for a while).
    pub state: String,
    pub created: String,
    pub tags: Tags,
    /// Why the gateway could not be made (`FailureCode`, `FailureMessage`): AWS accepts the
    /// create and fails the gateway afterwards. A failed gateway holds no interface (its
    /// `network_interface_id` and `private_ip` are empty) and does not hold its address.
    #[serde(default)]
    pub failure: Option<(String, String)>,
}

impl NatGateway {
    /// Whether it holds its interface and Elastic IP (it was made, and is not deleted).
    pub fn holds_address(&self) -> bool {
        self.failure.is_none() && self.state != "deleted"
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NetworkInterface {
    pub id: String,
    pub subnet_id: String,
    pub vpc_id: String,
    pub availability_zone: String,
    pub private_ip: String,
    pub mac_address: String,
    pub groups: Vec<String>,
    pub description: String,
    pub interface_type: String,
    pub requester_id: Option<String>,
    /// The instance it is attached to (an instance's primary interface).
    #[serde(default)]
    pub attachment: Option<InterfaceAttachment>,
    /// Secondary private addresses (AssignPrivateIpAddresses), drawn from the subnet.
    #[serde(default)]
    pub secondary_ips: Vec<String>,
    #[serde(default = "yes")]
    pub source_dest_check: bool,
    pub tags: Tags,
}

fn yes() -> bool {
    true
}

impl NetworkInterface {
    /// `in-use` while attached or owned by a service; `available` otherwise.
    pub fn status(&self) -> &'static str {
        if self.attachment.is_some() || self.requester_id.is_some() {
            "in-use"
        } else {
            "available"
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InterfaceAttachment {
    pub id: String,
    pub instance_id: String,
    pub device_index: i64,
    pub attached: String,
    #[serde(default = "yes")]
    pub delete_on_termination: bool,
}

/// An instance as RunInstances records it: no virtual machine runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Instance {
    pub id: String,
    pub reservation_id: String,
    pub launch_index: usize,
    pub image_id: String,
    pub instance_type: String,
    pub subnet_id: String,
    pub vpc_id: String,
    pub availability_zone: String,
    pub private_ip: String,
    pub public_ip: Option<String>,
    /// The primary interface; released (and `None`) once terminated.
    pub network_interface_id: Option<String>,
    pub mac_address: String,
    pub groups: Vec<String>,
    pub key_name: Option<String>,
    pub iam_instance_profile_arn: Option<String>,
    pub user_data: Option<String>,
    /// `(id, version)` of the launch template it was launched from.
    pub launch_template: Option<(String, String)>,
    /// `pending`, `running`, `stopping`, `stopped`, `shutting-down`, `terminated`: a
    /// transitional state settles at the next read (a waiter's first poll).
    pub state: String,
    pub state_transition_reason: String,
    pub launch_time: String,
    pub tags: Tags,
}

/// One version of a launch template: its data in the API's member names
/// (`RequestLaunchTemplateData`: ImageId, InstanceType, SecurityGroupIds, ...).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TemplateVersion {
    pub number: i64,
    pub description: Option<String>,
    pub data: serde_json::Value,
    pub created: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LaunchTemplate {
    pub id: String,
    pub name: String,
    pub default_version: i64,
    pub versions: Vec<TemplateVersion>,
    pub created: String,
    pub tags: Tags,
}

impl LaunchTemplate {
    pub fn latest_version(&self) -> i64 {
        self.versions.iter().map(|v| v.number).max().unwrap_or(1)
    }
}

/// A key pair: its public half and fingerprint. The private key is never kept (CreateKeyPair
/// answers it once; CloudFormation's KeyPair puts it in SSM).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeyPair {
    pub id: String,
    pub name: String,
    pub key_type: String,
    pub fingerprint: String,
    pub public_key: String,
    pub created: String,
    pub tags: Tags,
}

/// One numbered entry of a network ACL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AclEntry {
    pub rule_number: i64,
    pub egress: bool,
    /// A protocol number (`-1` all, `6` tcp, `17` udp, `1` icmp, ...).
    pub protocol: String,
    /// `allow` or `deny`.
    pub action: String,
    pub cidr: Option<String>,
    pub ipv6_cidr: Option<String>,
    pub port_range: Option<(i64, i64)>,
    /// ICMP (type, code).
    pub icmp: Option<(i64, i64)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AclAssociation {
    pub id: String,
    pub subnet_id: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NetworkAcl {
    pub id: String,
    pub vpc_id: String,
    pub is_default: bool,
    pub entries: Vec<AclEntry>,
    pub associations: Vec<AclAssociation>,
    pub tags: Tags,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DhcpOptions {
    pub id: String,
    /// Each key (`domain-name`, `domain-name-servers`, ...) with its values, in order.
    pub configurations: Vec<(String, Vec<String>)>,
    pub tags: Tags,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VpcEndpoint {
    pub id: String,
    pub vpc_id: String,
    pub service_name: String,
    /// `Gateway`, `Interface` or `GatewayLoadBalancer`.
    pub endpoint_type: String,
    pub route_table_ids: Vec<String>,
    pub subnet_ids: Vec<String>,
    pub group_ids: Vec<String>,
    pub network_interface_ids: Vec<String>,
    pub private_dns_enabled: bool,
    pub policy: Option<String>,
    /// The random part of the endpoint's DNS names, kept so they do not change.
    pub dns_label: String,
    pub state: String,
    pub created: String,
    pub tags: Tags,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlowLog {
    pub id: String,
    pub resource_id: String,
    pub traffic_type: String,
    pub destination_type: String,
    pub destination: Option<String>,
    pub log_group_name: Option<String>,
    pub deliver_role_arn: Option<String>,
    pub log_format: String,
    pub max_aggregation_interval: i64,
    pub created: String,
    pub tags: Tags,
    /// The ClientToken of the request that made it (records from before tokens have none).
    #[serde(default)]
    pub client_token: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PeeringConnection {
    pub id: String,
    pub requester_vpc_id: String,
    pub accepter_vpc_id: String,
    pub accepter_region: String,
    /// `pending-acceptance`, `active`, `rejected` or `deleted`.
    pub status: String,
    pub expiration: String,
    pub tags: Tags,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PrefixList {
    pub id: String,
    pub name: String,
    pub address_family: String,
    pub max_entries: i64,
    /// (cidr, description), in the order given.
    pub entries: Vec<(String, Option<String>)>,
    pub version: i64,
    pub tags: Tags,
}

/// An EBS volume as CreateVolume records it: no disk exists.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Volume {
    pub id: String,
    pub availability_zone: String,
    pub size: i64,
    pub volume_type: String,
    pub iops: Option<i64>,
    pub throughput: Option<i64>,
    pub encrypted: bool,
    pub kms_key_id: Option<String>,
    pub snapshot_id: Option<String>,
    pub multi_attach: bool,
    pub auto_enable_io: bool,
    /// `creating` until first read after creation, then `available` (or `in-use` while
    /// attached, which [`Volume::state`] derives).
    pub created_state: String,
    pub attachments: Vec<VolumeAttachment>,
    pub created: String,
    pub tags: Tags,
}

impl Volume {
    pub fn state(&self) -> &str {
        if self.created_state != "available" {
            &self.created_state
        } else if self.attachments.is_empty() {
            "available"
        } else {
            "in-use"
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VolumeAttachment {
    pub instance_id: String,
    pub device: String,
    pub attached: String,
    pub delete_on_termination: bool,
}

/// A VPC endpoint service (PrivateLink) in front of load balancers, with the principals
/// allowed to connect to it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EndpointService {
    pub id: String,
    pub service_name: String,
    pub acceptance_required: bool,
    pub network_load_balancer_arns: Vec<String>,
    pub gateway_load_balancer_arns: Vec<String>,
    pub private_dns_name: Option<String>,
    pub supported_ip_address_types: Vec<String>,
    /// (principal, `vpce-svc-perm-` id), in the order added.
    pub principals: Vec<(String, String)>,
    pub tags: Tags,
}

/// Every record kind, as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind")]
pub enum Resource {
    Vpc(Vpc),
    Subnet(Subnet),
    SecurityGroup(SecurityGroup),
    RouteTable(RouteTable),
    InternetGateway(InternetGateway),
    Address(Address),
    NatGateway(NatGateway),
    NetworkInterface(NetworkInterface),
    Instance(Instance),
    LaunchTemplate(LaunchTemplate),
    KeyPair(KeyPair),
    NetworkAcl(NetworkAcl),
    DhcpOptions(DhcpOptions),
    VpcEndpoint(VpcEndpoint),
    FlowLog(FlowLog),
    PeeringConnection(PeeringConnection),
    PrefixList(PrefixList),
    Volume(Volume),
    EndpointService(EndpointService),
}

impl Resource {
    pub fn tags(&self) -> &Tags {
        match self {
            Resource::Vpc(r) => &r.tags,
            Resource::Subnet(r) => &r.tags,
            Resource::SecurityGroup(r) => &r.tags,
            Resource::RouteTable(r) => &r.tags,
            Resource::InternetGateway(r) => &r.tags,
            Resource::Address(r) => &r.tags,
            Resource::NatGateway(r) => &r.tags,
            Resource::NetworkInterface(r) => &r.tags,
            Resource::Instance(r) => &r.tags,
            Resource::LaunchTemplate(r) => &r.tags,
            Resource::KeyPair(r) => &r.tags,
            Resource::NetworkAcl(r) => &r.tags,
            Resource::DhcpOptions(r) => &r.tags,
            Resource::VpcEndpoint(r) => &r.tags,
            Resource::FlowLog(r) => &r.tags,
            Resource::PeeringConnection(r) => &r.tags,
            Resource::PrefixList(r) => &r.tags,
            Resource::Volume(r) => &r.tags,
            Resource::EndpointService(r) => &r.tags,
        }
    }

    pub fn tags_mut(&mut self) -> &mut Tags {
        match self {
            Resource::Vpc(r) => &mut r.tags,
            Resource::Subnet(r) => &mut r.tags,
            Resource::SecurityGroup(r) => &mut r.tags,
            Resource::RouteTable(r) => &mut r.tags,
            Resource::InternetGateway(r) => &mut r.tags,
            Resource::Address(r) => &mut r.tags,
            Resource::NatGateway(r) => &mut r.tags,
            Resource::NetworkInterface(r) => &mut r.tags,
            Resource::Instance(r) => &mut r.tags,
            Resource::LaunchTemplate(r) => &mut r.tags,
            Resource::KeyPair(r) => &mut r.tags,
            Resource::NetworkAcl(r) => &mut r.tags,
            Resource::DhcpOptions(r) => &mut r.tags,
            Resource::VpcEndpoint(r) => &mut r.tags,
            Resource::FlowLog(r) => &mut r.tags,
            Resource::PeeringConnection(r) => &mut r.tags,
            Resource::PrefixList(r) => &mut r.tags,
            Resource::Volume(r) => &mut r.tags,
            Resource::EndpointService(r) => &mut r.tags,
        }
    }

    /// The `resource-type` DescribeTags reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Resource::Vpc(_) => "vpc",
            Resource::Subnet(_) => "subnet",
            Resource::SecurityGroup(_) => "security-group",
            Resource::RouteTable(_) => "route-table",
            Resource::InternetGateway(g) if g.egress_only => "egress-only-internet-gateway",
            Resource::InternetGateway(_) => "internet-gateway",
            Resource::Address(_) => "elastic-ip",
            Resource::NatGateway(_) => "natgateway",
            Resource::NetworkInterface(_) => "network-interface",
            Resource::Instance(_) => "instance",
            Resource::LaunchTemplate(_) => "launch-template",
            Resource::KeyPair(_) => "key-pair",
            Resource::NetworkAcl(_) => "network-acl",
            Resource::DhcpOptions(_) => "dhcp-options",
            Resource::VpcEndpoint(_) => "vpc-endpoint",
            Resource::FlowLog(_) => "vpc-flow-log",
            Resource::PeeringConnection(_) => "vpc-peering-connection",
            Resource::PrefixList(_) => "prefix-list",
            Resource::Volume(_) => "volume",
            Resource::EndpointService(_) => "vpc-endpoint-service",
        }
    }
}

/// A new id in AWS's form: the prefix and 17 lower-case hex digits.
pub fn new_id(prefix: &str) -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    let hex: String = (0..17)
        .map(|_| char::from_digit(rng.random_range(0..16), 16).unwrap_or('0'))
        .collect();
    format!("{prefix}-{hex}")
}
