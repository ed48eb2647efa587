//! EC2's error codes and messages, in AWS's words.

use cumulo_wire::AwsError;

pub fn not_found(id: &str) -> AwsError {
    let prefix = id.rsplit_once('-').map_or("", |(p, _)| p);
    let (code, noun) = match prefix {
        "vpc" => ("InvalidVpcID.NotFound", "vpc"),
        "subnet" => ("InvalidSubnetID.NotFound", "subnet"),
        "sg" => {
            return AwsError::bad_request(
                "InvalidGroup.NotFound",
                format!("The security group '{id}' does not exist"),
            );
        }
        "rtb" => ("InvalidRouteTableID.NotFound", "routeTable"),
        "igw" => ("InvalidInternetGatewayID.NotFound", "internetGateway"),
        "eigw" => ("InvalidGatewayID.NotFound", "gateway"),
        "eipalloc" => ("InvalidAllocationID.NotFound", "allocation"),
        "eipassoc" | "rtbassoc" => ("InvalidAssociationID.NotFound", "association"),
        "nat" => {
            return AwsError::bad_request(
                "NatGatewayNotFound",
                format!("The Nat Gateway {id} was not found"),
            );
        }
        "eni" => ("InvalidNetworkInterfaceID.NotFound", "networkInterface"),
        "acl" => ("InvalidNetworkAclID.NotFound", "networkAcl"),
        "aclassoc" | "vpc-cidr-assoc" | "subnet-cidr-assoc" => {
            ("InvalidAssociationID.NotFound", "association")
        }
        "dopt" => ("InvalidDhcpOptionID.NotFound", "dhcpOption"),
        "vpce" => ("InvalidVpcEndpointId.NotFound", "Vpc Endpoint"),
        "fl" => ("InvalidFlowLogId.NotFound", "flow log"),
        "pcx" => (
            "InvalidVpcPeeringConnectionID.NotFound",
            "vpcPeeringConnection",
        ),
        "pl" => ("InvalidPrefixListID.NotFound", "prefix list"),
        "key" => {
            return AwsError::bad_request(
                "InvalidKeyPair.NotFound",
                format!("The key pair '{id}' does not exist"),
            );
        }
        "vpce-svc" => {
            return AwsError::bad_request(
                "InvalidVpcEndpointServiceId.NotFound",
                format!("The Vpc Endpoint Service Id '{id}' does not exist"),
            );
        }
        "vol" => {
            return AwsError::bad_request(
                "InvalidVolume.NotFound",
                format!("The volume '{id}' does not exist."),
            );
        }
        "sgr" => {
            return AwsError::bad_request(
                "InvalidSecurityGroupRuleId.NotFound",
                format!("The security group rule ID '{id}' does not exist"),
            );
        }
        _ => ("InvalidID", "resource"),
    };
    AwsError::bad_request(code, format!("The {noun} ID '{id}' does not exist"))
}

/// An id that is not `<prefix>-<hex>`: AWS's `<Kind>ID.Malformed`.
pub fn check_id(id: &str, prefix: &str) -> Result<(), AwsError> {
    let ok = id
        .strip_prefix(prefix)
        .and_then(|r| r.strip_prefix('-'))
        .is_some_and(|hex| {
            (8..=17).contains(&hex.len()) && hex.bytes().all(|b| b.is_ascii_hexdigit())
        });
    if ok {
        return Ok(());
    }
    let code = match prefix {
        "vpc" => "InvalidVpcID.Malformed",
        "subnet" => "InvalidSubnetID.Malformed",
        "sg" => "InvalidGroupId.Malformed",
        "rtb" => "InvalidRouteTableID.Malformed",
        "igw" => "InvalidInternetGatewayID.Malformed",
        "eipalloc" => "InvalidAllocationID.Malformed",
        "eni" => "InvalidNetworkInterfaceID.Malformed",
        "nat" => "InvalidNatGatewayID.Malformed",
        "i" => "InvalidInstanceID.Malformed",
        "ami" => "InvalidAMIID.Malformed",
        "lt" => "InvalidLaunchTemplateId.Malformed",
        "key" => "InvalidKeyPair.Malformed",
        "acl" => "InvalidNetworkAclID.Malformed",
        "dopt" => "InvalidDhcpOptionsId.Malformed",
        "vpce" => "InvalidVpcEndpointId.Malformed",
        "fl" => "InvalidFlowLogId.Malformed",
        "pcx" => "InvalidVpcPeeringConnectionId.Malformed",
        "pl" => "InvalidPrefixListID.Malformed",
        "eigw" => "InvalidEgressOnlyInternetGatewayId.Malformed",
        "vol" => "InvalidVolumeID.Malformed",
        "vpce-svc" => "InvalidVpcEndpointServiceId.Malformed",
        _ => "InvalidParameterValue",
    };
    Err(AwsError::bad_request(
        code,
        format!("Invalid id: \"{id}\" (expecting \"{prefix}-...\")"),
    ))
}

pub fn dependency(noun: &str, id: &str) -> AwsError {
    AwsError::bad_request(
        "DependencyViolation",
        format!("The {noun} '{id}' has dependencies and cannot be deleted."),
    )
}

pub fn invalid_value(value: &str, parameter: &str, why: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidParameterValue",
        format!("Value ({value}) for parameter {parameter} is invalid. {why}"),
    )
}

pub fn missing(parameter: &str) -> AwsError {
    AwsError::bad_request(
        "MissingParameter",
        format!("The request must contain the parameter {parameter}"),
    )
}

/// A group named in the default VPC that does not exist.
pub fn not_found_group_name(name: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidGroup.NotFound",
        format!("The security group '{name}' does not exist in default VPC"),
    )
}
