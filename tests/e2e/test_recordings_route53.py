"""Route 53 held to the answers recorded against real AWS (aws-recordings/route53:
test_route53.snapshot.json through the API, resource_providers/*.json through CloudFormation
stacks): each recorded case's scenario replayed, and cumulo's answers matched to the recording
(keys, types, literals, placeholders; see `recordings.py`)."""
import json
import uuid

import pytest
from botocore.exceptions import ClientError

from recordings import load, matches

API = load("route53/test_route53.snapshot.json")
RECORD_SETS = load("route53/resource_providers/test_aws_route53_recordset.snapshot.json")
HEALTH_CHECKS = load("route53/resource_providers/test_aws_route53_healthcheck.snapshot.json")

# Recorded cases cumulo cannot replay, and why.
NOT_REPLAYED = {
    "test_create_record_set_without_resource_record":
        "the recorded case's template is not in the recordings, and its answer (an A record with "
        "one value, TTL 900) is the same as test_create_record_set_via_id's, replayed here",
}

WAIT = {"Delay": 1, "MaxAttempts": 60}
S3_WEBSITE_US_EAST_1 = "Z3AQBSTGFYJSTF"
OTHER_ZONE = "Z2F56UZL2M1ACD"


def uid():
    return uuid.uuid4().hex[:8]


def domain():
    return f"z{uid()}.example.com"


@pytest.fixture(scope="module")
def r53(cumulo):
    return cumulo.client("route53")


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


def failure(call, **kw):
    with pytest.raises(ClientError) as e:
        call(**kw)
    return e.value.response


def test_create_hosted_zone(r53):
    created = r53.create_hosted_zone(Name=domain(), CallerReference=uid())
    got = {"create_hosted_zone_response": created,
           "get_hosted_zone": r53.get_hosted_zone(Id=created["HostedZone"]["Id"])}
    matches(API["TestRoute53::test_create_hosted_zone"], got)


def test_create_private_hosted_zone(r53, cumulo):
    vpc = cumulo.client("ec2").create_vpc(CidrBlock="10.113.0.0/16")["Vpc"]["VpcId"]
    created = r53.create_hosted_zone(Name=domain(), CallerReference=uid(),
                                     HostedZoneConfig={"PrivateZone": True, "Comment": "test"},
                                     VPC={"VPCRegion": "us-east-1", "VPCId": vpc})
    zone_id = created["HostedZone"]["Id"]
    got = {
        "create-hosted-zone-response": created,
        "get_hosted_zone": r53.get_hosted_zone(Id=zone_id),
        "list_hosted_zones_by_vpc": r53.list_hosted_zones_by_vpc(VPCId=vpc, VPCRegion="us-east-1"),
        "list_hosted_zones": [z for z in r53.list_hosted_zones()["HostedZones"] if z["Id"] == zone_id],
    }
    matches(API["TestRoute53::test_create_private_hosted_zone"], got)


def test_create_hosted_zone_in_non_existent_vpc(r53):
    got = {"failure-response": failure(r53.create_hosted_zone, Name=domain(), CallerReference=uid(),
                                       VPC={"VPCRegion": "us-east-1", "VPCId": "vpc-0123456789abcdef0"})}
    matches(API["TestRoute53::test_create_hosted_zone_in_non_existent_vpc"], got)


def test_delete_hosted_zone(r53):
    zone_id = r53.create_hosted_zone(Name=domain(), CallerReference=uid())["HostedZone"]["Id"]
    missing = failure(r53.delete_hosted_zone, Id=f"{zone_id.split('/')[-1]}asdf1234")
    got = {"no-such-hosted-zone-error": missing, "delete-hosted-zone-response": r53.delete_hosted_zone(Id=zone_id)}
    matches(API["TestRoute53::test_delete_hosted_zone"], got)
    assert missing["Error"]["Message"] == f"No hosted zone found with ID: {zone_id.split('/')[-1]}asdf1234"


def deploy(cfn, stack, resources, update=False):
    body = json.dumps({"Resources": resources})
    if update:
        cfn.update_stack(StackName=stack, TemplateBody=body)
        cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=WAIT)
    else:
        cfn.create_stack(StackName=stack, TemplateBody=body)
        cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    return {r["LogicalResourceId"]: r["PhysicalResourceId"]
            for r in cfn.describe_stack_resources(StackName=stack)["StackResources"]}


def zone_resource(name):
    return {"Type": "AWS::Route53::HostedZone", "Properties": {"Name": name}}


@pytest.mark.parametrize("recorded,by", [
    ("test_create_record_set_via_id", "HostedZoneId"),
    ("test_create_record_set_via_name", "HostedZoneName"),
])
def test_create_record_set(cfn, r53, recorded, by):
    name = domain()
    where = {"Ref": "Zone"} if by == "HostedZoneId" else f"{name}."
    made = deploy(cfn, f"rs-{uid()}", {
        "Zone": zone_resource(name),
        "Record": {"Type": "AWS::Route53::RecordSet", "DependsOn": "Zone", "Properties": {
            by: where, "Name": f"{name}.", "Type": "A", "TTL": "900", "ResourceRecords": ["192.0.2.10"]}},
    })
    got = {"record-sets": r53.list_resource_record_sets(HostedZoneId=made["Zone"])}
    matches(RECORD_SETS[recorded], got)


def test_create_record_set_without_resource_record():
    pytest.skip(NOT_REPLAYED["test_create_record_set_without_resource_record"])


def weighted(name, weights, targets, identifiers=("region-1", "region-2")):
    return {
        f"Record{i}": {"Type": "AWS::Route53::RecordSet", "DependsOn": "Zone", "Properties": {
            "HostedZoneId": {"Ref": "Zone"}, "Name": f"{name}.", "Type": "A",
            "SetIdentifier": identifiers[i], "Weight": weights[i],
            "AliasTarget": {"DNSName": targets[i][0], "HostedZoneId": targets[i][1], "EvaluateTargetHealth": False}}}
        for i in range(2)
    }


FIRST = ("s3-website-us-east-1.amazonaws.com", S3_WEBSITE_US_EAST_1)
SECOND = ("other.example.net", OTHER_ZONE)


def test_create_multiple_weighted_alias_target_record_sets(cfn, r53):
    name = domain()
    made = deploy(cfn, f"rs-{uid()}", {"Zone": zone_resource(name), **weighted(name, (255, 0), (FIRST, SECOND))})
    got = {"record-sets": r53.list_resource_record_sets(HostedZoneId=made["Zone"])}
    matches(RECORD_SETS["test_create_multiple_weighted_alias_target_record_sets"], got)


def test_update_multiple_weighted_alias_target_record_sets(cfn, r53):
    name, stack = domain(), f"rs-{uid()}"
    zone = {"Zone": zone_resource(name)}
    made = deploy(cfn, stack, {**zone, **weighted(name, (255, 0), (FIRST, SECOND))})
    listing = lambda: r53.list_resource_record_sets(HostedZoneId=made["Zone"])  # noqa: E731
    got = {"record-sets": listing()}
    deploy(cfn, stack, {**zone, **weighted(name, (50, 100), (FIRST, SECOND))}, update=True)
    got["record-sets-update-weights"] = listing()
    deploy(cfn, stack, {**zone, **weighted(name, (50, 100), (FIRST, FIRST))}, update=True)
    got["record-sets-update-alias-target"] = listing()
    deploy(cfn, stack, {**zone, **weighted(name, (50, 100), (FIRST, FIRST), ("region-1", "region-3"))}, update=True)
    got["record-sets-update-set-identifier"] = listing()
    matches(RECORD_SETS["test_update_multiple_weighted_alias_target_record_sets"], got)


def test_create_health_check(cfn, r53):
    made = deploy(cfn, f"hc-{uid()}", {"Check": {"Type": "AWS::Route53::HealthCheck", "Properties": {
        "HealthCheckConfig": {"IPAddress": "1.1.1.1", "Port": 80, "Type": "HTTP", "ResourcePath": "/health",
                              "FullyQualifiedDomainName": "localstacktest.com", "RequestInterval": 30,
                              "FailureThreshold": 3}}}})
    got = {"HealthCheck": r53.get_health_check(HealthCheckId=made["Check"])["HealthCheck"]}
    matches(HEALTH_CHECKS["test_create_health_check"], got)


def test_every_recorded_case_is_replayed_or_listed():
    assert set(API) == {"TestRoute53::test_create_hosted_zone", "TestRoute53::test_create_private_hosted_zone",
                        "TestRoute53::test_create_hosted_zone_in_non_existent_vpc", "TestRoute53::test_delete_hosted_zone"}
    assert set(RECORD_SETS) == {"test_create_record_set_via_id", "test_create_record_set_via_name",
                                "test_create_multiple_weighted_alias_target_record_sets",
                                "test_update_multiple_weighted_alias_target_record_sets"} | set(NOT_REPLAYED)
    assert set(HEALTH_CHECKS) == {"test_create_health_check"}
