//! Fn::GetAtt completeness, driven by the registry schemas: for every type cumulo registers,
//! the attributes its provider declares ([`cumulo_engine::Provider::attributes`], which debug
//! builds hold every answer to) must cover the GetAtt attributes of the type's CloudFormation
//! registry schema (its readOnlyProperties, as cfn-lint reads them), but for the gaps
//! [`NOT_ANSWERED`] lists with why. A new type, or a schema upgrade, with an attribute cumulo
//! does not answer fails here until it is answered or listed.

use super::registry;
use super::test_support::services;
use cumulo_engine::{CUSTOM_RESOURCE, getatt_attributes};

/// Types whose attributes are open, so they declare none.
const OPEN: &[(&str, &str)] = &[(
    CUSTOM_RESOURCE,
    "a custom resource's attributes are whatever its handler's Data holds",
)];

/// GetAtt attributes of the registry schema that cumulo does not answer: `(type, attribute,
/// why)`. Fn::GetAtt of one fails naming it.
const NOT_ANSWERED: &[(&str, &str, &str)] = &[
    // Regional NAT gateways (AvailabilityMode: regional) are not emulated; these describe only
    // them, and a zonal gateway has no value for them.
    (
        "AWS::EC2::NatGateway",
        "AutoProvisionZones",
        "regional NAT gateways only; cumulo's are zonal",
    ),
    (
        "AWS::EC2::NatGateway",
        "AutoScalingIps",
        "regional NAT gateways only; cumulo's are zonal",
    ),
    (
        "AWS::EC2::NatGateway",
        "RouteTableId",
        "regional NAT gateways only; cumulo's are zonal",
    ),
    (
        "AWS::EC2::NetworkInterface",
        "PrimaryIpv6Address",
        "cumulo's network interfaces have no IPv6 addresses",
    ),
    (
        "AWS::EC2::NetworkInterface",
        "PublicIpDnsNameOptions",
        "public IP DNS name options are not emulated",
    ),
    // A path through a list's items (`*`) names no one value.
    (
        "AWS::EFS::FileSystem",
        "ReplicationConfiguration.Destinations.*.Status",
        "replication is not emulated (ReplicationConfiguration is refused)",
    ),
    (
        "AWS::EFS::FileSystem",
        "ReplicationConfiguration.Destinations.*.StatusMessage",
        "replication is not emulated (ReplicationConfiguration is refused)",
    ),
    (
        "AWS::Lambda::Function",
        "SnapStartResponse",
        "an object: its members, SnapStartResponse.ApplyOn and .OptimizationStatus, are answered",
    ),
    (
        "AWS::S3::Bucket",
        "MetadataTableConfiguration.S3TablesDestination.TableNamespace",
        "S3 Metadata tables are not emulated (the property is refused)",
    ),
    (
        "AWS::S3::Bucket",
        "MetadataTableConfiguration.S3TablesDestination.TableArn",
        "S3 Metadata tables are not emulated (the property is refused)",
    ),
    (
        "AWS::S3::Bucket",
        "MetadataConfiguration.Destination",
        "S3 Metadata is not emulated (the property is refused)",
    ),
    (
        "AWS::S3::Bucket",
        "MetadataConfiguration.JournalTableConfiguration.TableName",
        "S3 Metadata is not emulated (the property is refused)",
    ),
    (
        "AWS::S3::Bucket",
        "MetadataConfiguration.JournalTableConfiguration.TableArn",
        "S3 Metadata is not emulated (the property is refused)",
    ),
    (
        "AWS::S3::Bucket",
        "MetadataConfiguration.InventoryTableConfiguration.TableName",
        "S3 Metadata is not emulated (the property is refused)",
    ),
    (
        "AWS::S3::Bucket",
        "MetadataConfiguration.InventoryTableConfiguration.TableArn",
        "S3 Metadata is not emulated (the property is refused)",
    ),
    (
        "AWS::SecretsManager::SecretTargetAttachment",
        "Id",
        "every attachment fails: its targets (RDS, Redshift, DocumentDB) are not emulated",
    ),
];

#[test]
fn every_registered_type_answers_its_schema_getatt_attributes_or_lists_why_not() {
    let registry = registry(&services());
    let mut types: Vec<&str> = registry.types().collect();
    types.sort();
    let mut gaps = Vec::new();
    for t in types {
        let provider = registry.get(t).expect("registered");
        if OPEN.iter().any(|(open, _)| *open == t) {
            assert!(provider.attributes().is_none(), "{t} is open");
            continue;
        }
        let Some(declared) = provider.attributes() else {
            gaps.push(format!("{t}: its provider declares no attributes"));
            continue;
        };
        for a in getatt_attributes(t) {
            let listed = NOT_ANSWERED.iter().any(|(lt, la, _)| *lt == t && *la == a);
            if !declared.contains(&a.as_str()) && !listed {
                gaps.push(format!("{t}: {a}"));
            }
        }
    }
    assert!(
        gaps.is_empty(),
        "GetAtt attributes not answered nor listed: {gaps:#?}"
    );
}

#[test]
fn every_listed_gap_is_still_a_gap() {
    let registry = registry(&services());
    for (t, a, _) in NOT_ANSWERED {
        assert!(
            getatt_attributes(t).iter().any(|s| s == a),
            "{t} {a} is no longer in the registry schema"
        );
        let declared = registry
            .get(t)
            .and_then(|p| p.attributes())
            .unwrap_or_else(|| panic!("{t} is not registered"));
        assert!(!declared.contains(a), "{t} answers {a} now: unlist it");
    }
}
