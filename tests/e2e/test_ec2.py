"""EC2 networking through its own API (boto3 and the AWS CLI) and through CloudFormation: the
default VPC, VPCs, subnets, security groups and their rules, route tables, gateways, addresses,
NAT gateways, tags and filters, errors in AWS's words, and state across a restart."""
import json
import time
import uuid

import pytest
from botocore.exceptions import ClientError

from conftest import CumuloServer


@pytest.fixture(scope="module")
def ec2(cumulo):
    return cumulo.client("ec2")


def error(call, **kw):
    with pytest.raises(ClientError) as e:
        call(**kw)
    return e.value.response["Error"]


def test_a_region_starts_with_a_default_vpc(ec2):
    [vpc] = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"]
    assert vpc["CidrBlock"] == "172.31.0.0/16" and vpc["IsDefault"] is True
    subnets = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc["VpcId"]]}, {"Name": "default-for-az", "Values": ["true"]}])["Subnets"]
    zones = ec2.describe_availability_zones()["AvailabilityZones"]
    assert sorted(s["AvailabilityZone"] for s in subnets) == sorted(z["ZoneName"] for z in zones)
    assert {z["ZoneName"]: z["ZoneId"] for z in zones}["us-east-1a"] == "use1-az6"
    assert all(s["AvailableIpAddressCount"] == 4091 and s["MapPublicIpOnLaunch"] for s in subnets)
    [igw] = ec2.describe_internet_gateways(Filters=[{"Name": "attachment.vpc-id", "Values": [vpc["VpcId"]]}])["InternetGateways"]
    [main] = ec2.describe_route_tables(Filters=[{"Name": "vpc-id", "Values": [vpc["VpcId"]]}, {"Name": "association.main", "Values": ["true"]}])["RouteTables"]
    assert {r["DestinationCidrBlock"]: r["GatewayId"] for r in main["Routes"]} == {"172.31.0.0/16": "local", "0.0.0.0/0": igw["InternetGatewayId"]}
    [default_sg] = ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [vpc["VpcId"]]}, {"Name": "group-name", "Values": ["default"]}])["SecurityGroups"]
    assert default_sg["Description"] == "default VPC security group"


def test_vpcs_subnets_and_their_errors(ec2, cumulo):
    vpc = ec2.create_vpc(CidrBlock="10.20.0.0/16", TagSpecifications=[{"ResourceType": "vpc", "Tags": [{"Key": "Name", "Value": "t1"}]}])["Vpc"]
    vid = vpc["VpcId"]
    assert vid.startswith("vpc-") and len(vid) == 21 and vpc["State"] == "pending"
    assert ec2.describe_vpcs(Filters=[{"Name": "tag:Name", "Values": ["t1"]}])["Vpcs"][0]["VpcId"] == vid
    sub = ec2.create_subnet(VpcId=vid, CidrBlock="10.20.1.0/24", AvailabilityZone="us-east-1b")["Subnet"]
    assert sub["AvailableIpAddressCount"] == 251 and sub["AvailabilityZoneId"] == "use1-az1"
    assert error(ec2.create_subnet, VpcId=vid, CidrBlock="10.20.1.128/25")["Code"] == "InvalidSubnet.Conflict"
    assert error(ec2.create_subnet, VpcId=vid, CidrBlock="10.21.0.0/24")["Code"] == "InvalidSubnet.Range"
    assert error(ec2.create_vpc, CidrBlock="10.0.0.0/8")["Code"] == "InvalidVpc.Range"
    bad = error(ec2.create_vpc, CidrBlock="10.0.0.1/33")
    assert bad["Code"] == "InvalidParameterValue" and "10.0.0.1/33" in bad["Message"]
    missing = error(ec2.describe_vpcs, VpcIds=["vpc-0123456789abcdef0"])
    assert missing == {"Code": "InvalidVpcID.NotFound", "Message": "The vpc ID 'vpc-0123456789abcdef0' does not exist"}
    assert error(ec2.describe_subnets, SubnetIds=["nope"])["Code"] == "InvalidSubnetID.Malformed"
    assert error(ec2.describe_vpcs, Filters=[{"Name": "no-such-filter", "Values": ["x"]}])["Code"] == "InvalidParameterValue"
    before = len(ec2.describe_vpcs()["Vpcs"])
    assert error(ec2.delete_vpc, VpcId=vid)["Code"] == "DependencyViolation"
    assert len(ec2.describe_vpcs()["Vpcs"]) == before
    # The AWS CLI sees the same records.
    out = cumulo.aws("ec2", "describe-subnets", "--filters", f"Name=vpc-id,Values={vid}")
    assert [s["SubnetId"] for s in out["Subnets"]] == [sub["SubnetId"]]
    ec2.modify_vpc_attribute(VpcId=vid, EnableDnsHostnames={"Value": True})
    assert ec2.describe_vpc_attribute(VpcId=vid, Attribute="enableDnsHostnames")["EnableDnsHostnames"]["Value"] is True
    ec2.delete_subnet(SubnetId=sub["SubnetId"])
    ec2.delete_vpc(VpcId=vid)
    assert error(ec2.describe_vpcs, VpcIds=[vid])["Code"] == "InvalidVpcID.NotFound"


def test_a_vpc_created_with_an_amazon_ipv6_block(ec2):
    """CreateVpc's AmazonProvidedIpv6CidrBlock gives the VPC a /56 at once (it was once dropped);
    address pools, which cumulo does not emulate, are refused by name and create nothing."""
    vpc = ec2.create_vpc(CidrBlock="10.30.0.0/16", AmazonProvidedIpv6CidrBlock=True)["Vpc"]
    [block] = vpc["Ipv6CidrBlockAssociationSet"]
    assert block["Ipv6CidrBlock"].endswith("::/56") and block["Ipv6Pool"] == "Amazon"
    [seen] = ec2.describe_vpcs(VpcIds=[vpc["VpcId"]])["Vpcs"]
    assert [b["Ipv6CidrBlock"] for b in seen["Ipv6CidrBlockAssociationSet"]] == [block["Ipv6CidrBlock"]]
    before = len(ec2.describe_vpcs()["Vpcs"])
    refused = error(ec2.create_vpc, CidrBlock="10.31.0.0/16", Ipv4IpamPoolId="ipam-pool-0123456789abcdef0")
    assert refused["Code"] == "NotImplemented" and "Ipv4IpamPoolId" in refused["Message"]
    assert len(ec2.describe_vpcs()["Vpcs"]) == before
    ec2.delete_vpc(VpcId=vpc["VpcId"])


def test_security_group_rules(ec2):
    vid = ec2.create_vpc(CidrBlock="10.30.0.0/16")["Vpc"]["VpcId"]
    a = ec2.create_security_group(GroupName="a", Description="A", VpcId=vid)["GroupId"]
    b = ec2.create_security_group(GroupName="b", Description="B", VpcId=vid)["GroupId"]
    perm = {"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "UserIdGroupPairs": [{"GroupId": b, "Description": "from b"}]}
    added = ec2.authorize_security_group_ingress(GroupId=a, IpPermissions=[perm])["SecurityGroupRules"]
    assert added[0]["SecurityGroupRuleId"].startswith("sgr-") and added[0]["ReferencedGroupInfo"]["GroupId"] == b
    dup = error(ec2.authorize_security_group_ingress, GroupId=a, IpPermissions=[perm])
    assert dup["Code"] == "InvalidPermission.Duplicate"
    [group] = ec2.describe_security_groups(GroupIds=[a])["SecurityGroups"]
    assert group["IpPermissions"][0]["UserIdGroupPairs"][0]["GroupId"] == b
    assert group["IpPermissionsEgress"][0]["IpProtocol"] == "-1"
    rules = ec2.describe_security_group_rules(Filters=[{"Name": "group-id", "Values": [a]}])["SecurityGroupRules"]
    assert sorted(r["IsEgress"] for r in rules) == [False, True]
    assert error(ec2.delete_security_group, GroupId=b)["Code"] == "DependencyViolation"
    assert error(ec2.create_security_group, GroupName="a", Description="again", VpcId=vid)["Code"] == "InvalidGroup.Duplicate"
    ec2.revoke_security_group_ingress(GroupId=a, SecurityGroupRuleIds=[added[0]["SecurityGroupRuleId"]])
    for g in (a, b):
        ec2.delete_security_group(GroupId=g)
    ec2.delete_vpc(VpcId=vid)


def test_routes_gateways_addresses_and_nat(ec2):
    vid = ec2.create_vpc(CidrBlock="10.40.0.0/16")["Vpc"]["VpcId"]
    sub = ec2.create_subnet(VpcId=vid, CidrBlock="10.40.0.0/24")["Subnet"]["SubnetId"]
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    rtb = ec2.create_route_table(VpcId=vid)["RouteTable"]["RouteTableId"]
    assert error(ec2.create_route, RouteTableId=rtb, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)["Code"] == "InvalidParameterValue"
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vid)
    ec2.create_route(RouteTableId=rtb, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    assoc = ec2.associate_route_table(RouteTableId=rtb, SubnetId=sub)["AssociationId"]
    assert assoc.startswith("rtbassoc-")
    eip = ec2.allocate_address(Domain="vpc")
    nat = ec2.create_nat_gateway(SubnetId=sub, AllocationId=eip["AllocationId"])["NatGateway"]
    assert nat["State"] == "pending"
    ec2.get_waiter("nat_gateway_available").wait(NatGatewayIds=[nat["NatGatewayId"]], WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    [addr] = ec2.describe_addresses(AllocationIds=[eip["AllocationId"]])["Addresses"]
    assert addr["NetworkInterfaceId"].startswith("eni-") and addr["PrivateIpAddress"] == "10.40.0.4"
    assert error(ec2.release_address, AllocationId=eip["AllocationId"])["Code"] == "InvalidIPAddress.InUse"
    [eni] = ec2.describe_network_interfaces(Filters=[{"Name": "subnet-id", "Values": [sub]}])["NetworkInterfaces"]
    assert eni["InterfaceType"] == "nat_gateway" and eni["RequesterManaged"] is True
    assert error(ec2.delete_subnet, SubnetId=sub)["Code"] == "DependencyViolation"
    ec2.delete_nat_gateway(NatGatewayId=nat["NatGatewayId"])
    ec2.release_address(AllocationId=eip["AllocationId"])
    ec2.disassociate_route_table(AssociationId=assoc)
    ec2.delete_route_table(RouteTableId=rtb)
    assert error(ec2.delete_internet_gateway, InternetGatewayId=igw)["Code"] == "DependencyViolation"
    ec2.detach_internet_gateway(InternetGatewayId=igw, VpcId=vid)
    ec2.delete_internet_gateway(InternetGatewayId=igw)
    ec2.delete_subnet(SubnetId=sub)
    ec2.delete_vpc(VpcId=vid)


def test_a_nat_gateway_on_an_associated_address_is_made_and_fails(ec2):
    """AWS accepts CreateNatGateway with an Elastic IP already associated, then fails the
    gateway (FailureCode, FailureMessage); the address stays with its owner."""
    vid = ec2.create_vpc(CidrBlock="10.41.0.0/16")["Vpc"]["VpcId"]
    sub = ec2.create_subnet(VpcId=vid, CidrBlock="10.41.0.0/24")["Subnet"]["SubnetId"]
    eip = ec2.allocate_address(Domain="vpc")["AllocationId"]
    first = ec2.create_nat_gateway(SubnetId=sub, AllocationId=eip)["NatGateway"]
    second = ec2.create_nat_gateway(SubnetId=sub, AllocationId=eip)
    assert second["ResponseMetadata"]["HTTPStatusCode"] == 200
    second = second["NatGateway"]
    assert second["State"] == "pending" and second["NatGatewayId"] != first["NatGatewayId"]
    [failed] = ec2.describe_nat_gateways(NatGatewayIds=[second["NatGatewayId"]])["NatGateways"]
    assert failed["State"] == "failed"
    assert failed["FailureCode"] == "Resource.AlreadyAssociated"
    assert failed["FailureMessage"] == f"Elastic IP address [{eip}] is already associated"
    assert failed["NatGatewayAddresses"] == [{"AllocationId": eip, "IsPrimary": True, "Status": "failed"}]
    with pytest.raises(Exception, match="failure"):
        ec2.get_waiter("nat_gateway_available").wait(NatGatewayIds=[second["NatGatewayId"]], WaiterConfig={"Delay": 1, "MaxAttempts": 2})
    [owner] = ec2.describe_nat_gateways(NatGatewayIds=[first["NatGatewayId"]])["NatGateways"]
    assert owner["State"] == "available" and "FailureCode" not in owner
    [addr] = ec2.describe_addresses(AllocationIds=[eip])["Addresses"]
    assert addr["NetworkInterfaceId"] == owner["NatGatewayAddresses"][0]["NetworkInterfaceId"]
    # Only the first gateway's interface was made.
    assert len(ec2.describe_network_interfaces(Filters=[{"Name": "subnet-id", "Values": [sub]}])["NetworkInterfaces"]) == 1

    # Deleting the failed gateway leaves the address with its owner.
    ec2.delete_nat_gateway(NatGatewayId=second["NatGatewayId"])
    assert ec2.describe_nat_gateways(NatGatewayIds=[second["NatGatewayId"]])["NatGateways"][0]["State"] == "deleted"
    [addr] = ec2.describe_addresses(AllocationIds=[eip])["Addresses"]
    assert addr["NetworkInterfaceId"] == owner["NatGatewayAddresses"][0]["NetworkInterfaceId"]
    ec2.delete_nat_gateway(NatGatewayId=first["NatGatewayId"])
    ec2.release_address(AllocationId=eip)
    ec2.delete_subnet(SubnetId=sub)
    ec2.delete_vpc(VpcId=vid)


def settled(cfn, name, timeout=60):
    """The stack's status once no operation is in progress."""
    deadline = time.time() + timeout
    while True:
        status = cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"]
        if not status.endswith("_IN_PROGRESS") or time.time() > deadline:
            return status
        time.sleep(0.5)


FAILING_NAT = {
    "Parameters": {"Subnet": {"Type": "String"}, "Allocation": {"Type": "String"}},
    "Resources": {
        "Nat": {"Type": "AWS::EC2::NatGateway", "Properties": {"SubnetId": {"Ref": "Subnet"}, "AllocationId": {"Ref": "Allocation"}}},
    },
}


def test_a_nat_gateway_resource_that_fails_is_rolled_back(cumulo, ec2):
    """The gateway is made, fails to stabilize with EC2's FailureMessage, and the rollback
    deletes it (its physical id was recorded): ROLLBACK_COMPLETE, the address untouched."""
    cfn = cumulo.client("cloudformation")
    vid = ec2.create_vpc(CidrBlock="10.42.0.0/16")["Vpc"]["VpcId"]
    sub = ec2.create_subnet(VpcId=vid, CidrBlock="10.42.0.0/24")["Subnet"]["SubnetId"]
    eip = ec2.allocate_address(Domain="vpc")["AllocationId"]
    owner = ec2.create_nat_gateway(SubnetId=sub, AllocationId=eip)["NatGateway"]["NatGatewayId"]
    name = f"natfail-{uuid.uuid4().hex[:8]}"
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(FAILING_NAT), Parameters=[
        {"ParameterKey": "Subnet", "ParameterValue": sub}, {"ParameterKey": "Allocation", "ParameterValue": eip}])
    assert settled(cfn, name) == "ROLLBACK_COMPLETE"
    events = cfn.describe_stack_events(StackName=name)["StackEvents"][::-1]
    nat_events = [e for e in events if e["LogicalResourceId"] == "Nat"]
    failed = next(e for e in nat_events if e["ResourceStatus"] == "CREATE_FAILED")
    made = failed["PhysicalResourceId"]
    assert made.startswith("nat-") and made != owner
    assert failed["ResourceStatusReason"].startswith(
        f'Resource handler returned message: "NatGateway {made} is in state failed and hence failed to stabilize. '
        f'Detailed failure message: Elastic IP address [{eip}] is already associated" (RequestToken: ')
    assert failed["ResourceStatusReason"].endswith("HandlerErrorCode: NotStabilized)")
    assert [(e["ResourceStatus"], e.get("ResourceStatusReason")) for e in nat_events] == [
        ("CREATE_IN_PROGRESS", None), ("CREATE_IN_PROGRESS", "Resource creation Initiated"),
        ("CREATE_FAILED", failed["ResourceStatusReason"]), ("DELETE_IN_PROGRESS", None), ("DELETE_COMPLETE", None)]
    assert ec2.describe_nat_gateways(NatGatewayIds=[made])["NatGateways"][0]["State"] == "deleted"
    [kept] = ec2.describe_nat_gateways(NatGatewayIds=[owner])["NatGateways"]
    [addr] = ec2.describe_addresses(AllocationIds=[eip])["Addresses"]
    assert kept["State"] == "available" and addr["NetworkInterfaceId"] == kept["NatGatewayAddresses"][0]["NetworkInterfaceId"]
    cfn.delete_stack(StackName=name)
    ec2.delete_nat_gateway(NatGatewayId=owner)
    ec2.release_address(AllocationId=eip)
    ec2.delete_subnet(SubnetId=sub)
    ec2.delete_vpc(VpcId=vid)


def test_tags_and_an_unimplemented_operation(ec2):
    vid = ec2.create_vpc(CidrBlock="10.50.0.0/16")["Vpc"]["VpcId"]
    ec2.create_tags(Resources=[vid], Tags=[{"Key": "team", "Value": "net"}, {"Key": "tier", "Value": "x"}])
    tags = ec2.describe_tags(Filters=[{"Name": "resource-id", "Values": [vid]}])["Tags"]
    assert {(t["Key"], t["Value"], t["ResourceType"]) for t in tags} == {("team", "net", "vpc"), ("tier", "x", "vpc")}
    ec2.delete_tags(Resources=[vid], Tags=[{"Key": "tier"}])
    assert [t["Key"] for t in ec2.describe_vpcs(VpcIds=[vid])["Vpcs"][0]["Tags"]] == ["team"]
    # Other modules' VPCs share the server: the filter finds this one and only te* keys.
    tagged = ec2.describe_vpcs(Filters=[{"Name": "tag-key", "Values": ["te*"]}])["Vpcs"]
    assert vid in [v["VpcId"] for v in tagged]
    assert all(any(t["Key"].startswith("te") for t in v["Tags"]) for v in tagged)
    e = error(ec2.describe_vpn_connections)
    assert "DescribeVpnConnections" in e["Message"]
    ec2.delete_vpc(VpcId=vid)


NETWORK = {
    "Parameters": {"Env": {"Type": "String", "Default": "test"}},
    "Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.60.0.0/16", "EnableDnsHostnames": True, "Tags": [{"Key": "env", "Value": {"Ref": "Env"}}]}},
        "Igw": {"Type": "AWS::EC2::InternetGateway"},
        "Attach": {"Type": "AWS::EC2::VPCGatewayAttachment", "Properties": {"VpcId": {"Ref": "Vpc"}, "InternetGatewayId": {"Ref": "Igw"}}},
        "PublicA": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.60.0.0/24", "AvailabilityZone": "us-east-1a", "MapPublicIpOnLaunch": True}},
        "PublicB": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.60.1.0/24", "AvailabilityZone": "us-east-1b", "MapPublicIpOnLaunch": True}},
        "PrivateA": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.60.2.0/24", "AvailabilityZone": "us-east-1a"}},
        "PrivateB": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.60.3.0/24", "AvailabilityZone": "us-east-1b"}},
        "PublicRt": {"Type": "AWS::EC2::RouteTable", "Properties": {"VpcId": {"Ref": "Vpc"}}},
        "PublicRoute": {"Type": "AWS::EC2::Route", "DependsOn": "Attach", "Properties": {"RouteTableId": {"Ref": "PublicRt"}, "DestinationCidrBlock": "0.0.0.0/0", "GatewayId": {"Ref": "Igw"}}},
        "PublicAAssoc": {"Type": "AWS::EC2::SubnetRouteTableAssociation", "Properties": {"SubnetId": {"Ref": "PublicA"}, "RouteTableId": {"Ref": "PublicRt"}}},
        "PublicBAssoc": {"Type": "AWS::EC2::SubnetRouteTableAssociation", "Properties": {"SubnetId": {"Ref": "PublicB"}, "RouteTableId": {"Ref": "PublicRt"}}},
        "NatIp": {"Type": "AWS::EC2::EIP", "Properties": {"Domain": "vpc"}},
        "Nat": {"Type": "AWS::EC2::NatGateway", "Properties": {"SubnetId": {"Ref": "PublicA"}, "AllocationId": {"Fn::GetAtt": ["NatIp", "AllocationId"]}}},
        "PrivateRt": {"Type": "AWS::EC2::RouteTable", "Properties": {"VpcId": {"Ref": "Vpc"}}},
        "PrivateRoute": {"Type": "AWS::EC2::Route", "Properties": {"RouteTableId": {"Ref": "PrivateRt"}, "DestinationCidrBlock": "0.0.0.0/0", "NatGatewayId": {"Ref": "Nat"}}},
        "PrivateAAssoc": {"Type": "AWS::EC2::SubnetRouteTableAssociation", "Properties": {"SubnetId": {"Ref": "PrivateA"}, "RouteTableId": {"Ref": "PrivateRt"}}},
        "PrivateBAssoc": {"Type": "AWS::EC2::SubnetRouteTableAssociation", "Properties": {"SubnetId": {"Ref": "PrivateB"}, "RouteTableId": {"Ref": "PrivateRt"}}},
        "LbSg": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "load balancer", "VpcId": {"Ref": "Vpc"},
                 "SecurityGroupIngress": [{"IpProtocol": "tcp", "FromPort": 80, "ToPort": 80, "CidrIp": "0.0.0.0/0"}]}},
        "AppSg": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "app", "VpcId": {"Ref": "Vpc"}}},
        "AppFromLb": {"Type": "AWS::EC2::SecurityGroupIngress", "Properties": {"GroupId": {"Ref": "AppSg"}, "IpProtocol": "tcp", "FromPort": 8080, "ToPort": 8080,
                      "SourceSecurityGroupId": {"Fn::GetAtt": ["LbSg", "GroupId"]}, "Description": "from the load balancer"}},
    },
    "Outputs": {
        "VpcId": {"Value": {"Ref": "Vpc"}},
        "DefaultSg": {"Value": {"Fn::GetAtt": ["Vpc", "DefaultSecurityGroup"]}},
        "Nat": {"Value": {"Ref": "Nat"}},
        "NatEni": {"Value": {"Fn::GetAtt": ["Nat", "EniId"]}},
        "RuleId": {"Value": {"Ref": "AppFromLb"}},
        "PrivateAZone": {"Value": {"Fn::GetAtt": ["PrivateA", "AvailabilityZoneId"]}},
    },
}


def test_a_network_stack_deploys_updates_and_deletes(cumulo, ec2, tmp_path):
    cfn = cumulo.client("cloudformation")
    name = f"net-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "net.json"
    path.write_text(json.dumps(NETWORK))
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path), "--tags", "team=net")
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]}
    vid = out["VpcId"]
    assert out["PrivateAZone"] == "use1-az6" and out["RuleId"].startswith("sgr-")
    subnets = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vid]}])["Subnets"]
    assert len(subnets) == 4
    [nat] = ec2.describe_nat_gateways(Filters=[{"Name": "vpc-id", "Values": [vid]}])["NatGateways"]
    assert nat["State"] == "available" and nat["NatGatewayId"] == out["Nat"]
    assert out["NatEni"] == nat["NatGatewayAddresses"][0]["NetworkInterfaceId"]
    tables = ec2.describe_route_tables(Filters=[{"Name": "vpc-id", "Values": [vid]}, {"Name": "route.nat-gateway-id", "Values": [nat["NatGatewayId"]]}])["RouteTables"]
    assert len(tables[0]["Associations"]) == 2
    [vpc] = ec2.describe_vpcs(VpcIds=[vid])["Vpcs"]
    tags = {t["Key"]: t["Value"] for t in vpc["Tags"]}
    assert tags["env"] == "test" and tags["team"] == "net" and tags["aws:cloudformation:logical-id"] == "Vpc"
    groups = {g["GroupName"]: g for g in ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [vid]}])["SecurityGroups"]}
    assert groups["default"]["GroupId"] == out["DefaultSg"]
    app = next(g for n, g in groups.items() if n.startswith(f"{name}-AppSg-"))
    assert app["IpPermissions"][0]["UserIdGroupPairs"][0]["Description"] == "from the load balancer"

    # An update: a tag value, and the load balancer's ingress port.
    NETWORK2 = json.loads(json.dumps(NETWORK))
    NETWORK2["Resources"]["LbSg"]["Properties"]["SecurityGroupIngress"][0].update(FromPort=443, ToPort=443)
    path.write_text(json.dumps(NETWORK2))
    # A changed stack tag updates every taggable resource, the groups among them.
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path), "--tags", "team=net2", "--parameter-overrides", "Env=prod")
    [vpc] = ec2.describe_vpcs(VpcIds=[vid])["Vpcs"]
    assert {t["Key"]: t["Value"] for t in vpc["Tags"]}["env"] == "prod"
    [app] = ec2.describe_security_groups(GroupIds=[app["GroupId"]])["SecurityGroups"]
    assert {t["Key"]: t["Value"] for t in app["Tags"]}["team"] == "net2"
    # ... and the rule a standalone SecurityGroupIngress added to one stays.
    assert app["IpPermissions"][0]["UserIdGroupPairs"][0]["Description"] == "from the load balancer"
    lb = next(g for n, g in ((g["GroupName"], g) for g in ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [vid]}])["SecurityGroups"]) if n.startswith(f"{name}-LbSg-"))
    assert [p["FromPort"] for p in lb["IpPermissions"]] == [443]

    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    assert error(ec2.describe_vpcs, VpcIds=[vid])["Code"] == "InvalidVpcID.NotFound"
    assert ec2.describe_nat_gateways(NatGatewayIds=[nat["NatGatewayId"]])["NatGateways"][0]["State"] == "deleted"
    assert not ec2.describe_addresses(Filters=[{"Name": "allocation-id", "Values": [nat["NatGatewayAddresses"][0]["AllocationId"]]}])["Addresses"]


def test_state_survives_restart(tmp_path):
    server = CumuloServer(data_dir=tmp_path / "d").start()
    try:
        ec2 = server.client("ec2")
        default = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
        vid = ec2.create_vpc(CidrBlock="10.70.0.0/16")["Vpc"]["VpcId"]
        sg = ec2.create_security_group(GroupName="kept", Description="kept", VpcId=vid)["GroupId"]
        server.kill9()
        server.start()
        ec2 = server.client("ec2")
        assert ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"] == default
        assert ec2.describe_security_groups(GroupIds=[sg])["SecurityGroups"][0]["VpcId"] == vid
    finally:
        server.stop()


def test_rule_descriptions_change_in_place(cumulo, ec2, tmp_path):
    """UpdateSecurityGroupRuleDescriptions* sets a rule's description (same sgr- id); a
    template's described allow-all egress (as the CDK writes it) and a changed Description keep
    the rule and set its description, as AWS's handler does."""
    vid = ec2.create_vpc(CidrBlock="10.31.0.0/16")["Vpc"]["VpcId"]
    g = ec2.create_security_group(GroupName="described", Description="D", VpcId=vid)["GroupId"]
    everything = {"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0", "Description": "all out"}]}
    [before] = [r for r in ec2.describe_security_group_rules(Filters=[{"Name": "group-id", "Values": [g]}])["SecurityGroupRules"] if r["IsEgress"]]
    assert ec2.update_security_group_rule_descriptions_egress(GroupId=g, IpPermissions=[everything])["Return"] is True
    [after] = [r for r in ec2.describe_security_group_rules(Filters=[{"Name": "group-id", "Values": [g]}])["SecurityGroupRules"] if r["IsEgress"]]
    assert (after["SecurityGroupRuleId"], after["Description"]) == (before["SecurityGroupRuleId"], "all out")
    https = {"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "IpRanges": [{"CidrIp": "0.0.0.0/0", "Description": "x"}]}
    e = error(ec2.update_security_group_rule_descriptions_ingress, GroupId=g, IpPermissions=[https])
    assert (e["Code"], e["Message"]) == ("InvalidPermission.NotFound", "The specified rule does not exist in this security group.")
    ec2.delete_security_group(GroupId=g)
    ec2.delete_vpc(VpcId=vid)

    def template(description):
        egress = {"CidrIp": "0.0.0.0/0", "Description": description, "IpProtocol": "-1"}
        return {"Resources": {
            "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.32.0.0/16"}},
            "Sg": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "d", "VpcId": {"Ref": "Vpc"}, "SecurityGroupEgress": [egress]}},
        }, "Outputs": {"Sg": {"Value": {"Ref": "Sg"}}}}

    name = f"desc-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "desc.json"
    cfn = cumulo.client("cloudformation")
    egress_of = lambda sg: ec2.describe_security_groups(GroupIds=[sg])["SecurityGroups"][0]["IpPermissionsEgress"]  # noqa: E731
    for description in ("Allow all outbound traffic by default", "changed"):
        path.write_text(json.dumps(template(description)))
        cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path))
        sg = cfn.describe_stacks(StackName=name)["Stacks"][0]["Outputs"][0]["OutputValue"]
        assert egress_of(sg) == [{"IpProtocol": "-1", "IpRanges": [{"CidrIp": "0.0.0.0/0", "Description": description}], "Ipv6Ranges": [], "PrefixListIds": [], "UserIdGroupPairs": []}]
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})


READABLE = {
    "Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.43.0.0/16"}},
        "Subnet": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.43.0.0/24"}},
        "Eip": {"Type": "AWS::EC2::EIP", "Properties": {"Domain": "vpc"}},
        "Nat": {"Type": "AWS::EC2::NatGateway", "Properties": {"SubnetId": {"Ref": "Subnet"}, "AllocationId": {"Fn::GetAtt": ["Eip", "AllocationId"]}}},
        "Targets": {"Type": "AWS::ElasticLoadBalancingV2::TargetGroup", "Properties": {"VpcId": {"Ref": "Vpc"}, "Port": 80, "Protocol": "HTTP", "TargetType": "ip"}},
    },
}


def test_drift_reads_nat_gateways_and_target_groups(cumulo, ec2):
    """NAT gateways and target groups are read back by their create's own attribute mapping:
    drift finds them IN_SYNC, and a gateway deleted out of band (still listed as `deleted`, as
    AWS lists it) DELETED."""
    cfn = cumulo.client("cloudformation")
    name = f"readable-{uuid.uuid4().hex[:8]}"
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(READABLE))
    assert settled(cfn, name) == "CREATE_COMPLETE"

    def drifts():
        detection = cfn.detect_stack_drift(StackName=name)["StackDriftDetectionId"]
        deadline = time.time() + 30
        while cfn.describe_stack_drift_detection_status(StackDriftDetectionId=detection)["DetectionStatus"] == "DETECTION_IN_PROGRESS":
            assert time.time() < deadline
            time.sleep(0.2)
        found = cfn.describe_stack_resource_drifts(StackName=name)["StackResourceDrifts"]
        return {d["LogicalResourceId"]: d["StackResourceDriftStatus"] for d in found}

    seen = drifts()
    assert seen["Nat"] == "IN_SYNC" and seen["Targets"] == "IN_SYNC", seen
    nat = cfn.describe_stack_resource(StackName=name, LogicalResourceId="Nat")["StackResourceDetail"]["PhysicalResourceId"]
    ec2.delete_nat_gateway(NatGatewayId=nat)
    assert drifts()["Nat"] == "DELETED"
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 1})
