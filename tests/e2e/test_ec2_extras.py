"""EC2 beyond the basic network, through its own API (boto3 and the AWS CLI) and CloudFormation:
network ACLs, DHCP options, egress-only gateways, VPC and subnet CIDR blocks, VPC endpoints,
prefix lists, flow logs, peering, key pairs, launch templates, instances, images and the public
AMI parameters; errors in AWS's words, bad input changing nothing, state across a restart."""
import base64
import json
import uuid

import pytest
from botocore.exceptions import ClientError

from conftest import CumuloServer

AL2023 = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"


@pytest.fixture(scope="module")
def ec2(cumulo):
    return cumulo.client("ec2")


def error(call, **kw):
    with pytest.raises(ClientError) as e:
        call(**kw)
    return e.value.response["Error"]


def test_every_vpc_has_a_default_network_acl_and_subnets_move_between_acls(ec2):
    default_vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    [acl] = ec2.describe_network_acls(Filters=[{"Name": "vpc-id", "Values": [default_vpc]}, {"Name": "default", "Values": ["true"]}])["NetworkAcls"]
    assert len(acl["Associations"]) == len(ec2.describe_availability_zones()["AvailabilityZones"])
    assert {(e["RuleNumber"], e["Egress"], e["RuleAction"]) for e in acl["Entries"]} == {
        (100, False, "allow"), (32767, False, "deny"), (100, True, "allow"), (32767, True, "deny")}

    vid = ec2.create_vpc(CidrBlock="10.40.0.0/16")["Vpc"]["VpcId"]
    sub = ec2.create_subnet(VpcId=vid, CidrBlock="10.40.1.0/24")["Subnet"]["SubnetId"]
    [default] = ec2.describe_network_acls(Filters=[{"Name": "association.subnet-id", "Values": [sub]}])["NetworkAcls"]
    assert default["IsDefault"] and default["VpcId"] == vid
    assoc = default["Associations"][0]["NetworkAclAssociationId"]
    assert assoc.startswith("aclassoc-")

    custom = ec2.create_network_acl(VpcId=vid, TagSpecifications=[{"ResourceType": "network-acl", "Tags": [{"Key": "k", "Value": "v"}]}])["NetworkAcl"]
    assert [(e["RuleNumber"], e["RuleAction"]) for e in custom["Entries"]] == [(32767, "deny"), (32767, "deny")]
    acl_id = custom["NetworkAclId"]
    ec2.create_network_acl_entry(NetworkAclId=acl_id, RuleNumber=100, Protocol="6", RuleAction="allow", Egress=False, CidrBlock="0.0.0.0/0", PortRange={"From": 443, "To": 443})
    dup = error(ec2.create_network_acl_entry, NetworkAclId=acl_id, RuleNumber=100, Protocol="6", RuleAction="allow", Egress=False, CidrBlock="0.0.0.0/0", PortRange={"From": 80, "To": 80})
    assert dup == {"Code": "NetworkAclEntryAlreadyExists", "Message": "The network acl entry identified by 100 already exists."}
    bad = error(ec2.create_network_acl_entry, NetworkAclId=acl_id, RuleNumber=40000, Protocol="-1", RuleAction="allow", Egress=False, CidrBlock="0.0.0.0/0")
    assert bad["Code"] == "InvalidParameterValue"
    ec2.replace_network_acl_entry(NetworkAclId=acl_id, RuleNumber=100, Protocol="6", RuleAction="deny", Egress=False, CidrBlock="10.0.0.0/8", PortRange={"From": 22, "To": 22})
    [entry] = [e for e in ec2.describe_network_acls(NetworkAclIds=[acl_id])["NetworkAcls"][0]["Entries"] if e["RuleNumber"] == 100]
    assert (entry["RuleAction"], entry["CidrBlock"], entry["PortRange"]) == ("deny", "10.0.0.0/8", {"From": 22, "To": 22})

    moved = ec2.replace_network_acl_association(AssociationId=assoc, NetworkAclId=acl_id)["NewAssociationId"]
    assert moved.startswith("aclassoc-") and moved != assoc
    assert error(ec2.delete_network_acl, NetworkAclId=acl_id)["Code"] == "DependencyViolation"
    assert error(ec2.delete_network_acl, NetworkAclId=default["NetworkAclId"])["Code"] == "InvalidParameterValue"
    missing = error(ec2.describe_network_acls, NetworkAclIds=["acl-0123456789abcdef0"])
    assert missing == {"Code": "InvalidNetworkAclID.NotFound", "Message": "The networkAcl ID 'acl-0123456789abcdef0' does not exist"}
    assert error(ec2.describe_network_acls, NetworkAclIds=["acl-zz"])["Code"] == "InvalidNetworkAclID.Malformed"
    ec2.replace_network_acl_association(AssociationId=moved, NetworkAclId=default["NetworkAclId"])
    ec2.delete_network_acl_entry(NetworkAclId=acl_id, RuleNumber=100, Egress=False)
    ec2.delete_network_acl(NetworkAclId=acl_id)
    ec2.delete_subnet(SubnetId=sub)
    ec2.delete_vpc(VpcId=vid)
    assert not ec2.describe_network_acls(Filters=[{"Name": "vpc-id", "Values": [vid]}])["NetworkAcls"]


def test_dhcp_options_blocks_and_egress_only_gateways(ec2):
    vid = ec2.create_vpc(CidrBlock="10.41.0.0/16")["Vpc"]["VpcId"]
    [vpc] = ec2.describe_vpcs(VpcIds=[vid])["Vpcs"]
    [default_options] = ec2.describe_dhcp_options(DhcpOptionsIds=[vpc["DhcpOptionsId"]])["DhcpOptions"]
    assert {c["Key"]: [v["Value"] for v in c["Values"]] for c in default_options["DhcpConfigurations"]} == {
        "domain-name": ["ec2.internal"], "domain-name-servers": ["AmazonProvidedDNS"]}
    opts = ec2.create_dhcp_options(DhcpConfigurations=[{"Key": "domain-name", "Values": ["corp.example"]}, {"Key": "domain-name-servers", "Values": ["10.0.0.2", "10.0.0.3"]}])["DhcpOptions"]
    assert error(ec2.create_dhcp_options, DhcpConfigurations=[{"Key": "colour", "Values": ["blue"]}])["Code"] == "InvalidParameterValue"
    ec2.associate_dhcp_options(DhcpOptionsId=opts["DhcpOptionsId"], VpcId=vid)
    assert ec2.describe_vpcs(VpcIds=[vid])["Vpcs"][0]["DhcpOptionsId"] == opts["DhcpOptionsId"]
    assert error(ec2.delete_dhcp_options, DhcpOptionsId=opts["DhcpOptionsId"])["Code"] == "DependencyViolation"
    ec2.associate_dhcp_options(DhcpOptionsId="default", VpcId=vid)
    ec2.delete_dhcp_options(DhcpOptionsId=opts["DhcpOptionsId"])
    assert error(ec2.describe_dhcp_options, DhcpOptionsIds=[opts["DhcpOptionsId"]])["Code"] == "InvalidDhcpOptionID.NotFound"

    second = ec2.associate_vpc_cidr_block(VpcId=vid, CidrBlock="10.42.0.0/16")["CidrBlockAssociation"]
    assert second["CidrBlockState"]["State"] == "associated"
    assert error(ec2.associate_vpc_cidr_block, VpcId=vid, CidrBlock="10.42.128.0/17")["Code"] == "InvalidVpc.Range"
    v6 = ec2.associate_vpc_cidr_block(VpcId=vid, AmazonProvidedIpv6CidrBlock=True)["Ipv6CidrBlockAssociation"]
    assert v6["Ipv6CidrBlock"].endswith("::/56")
    [vpc] = ec2.describe_vpcs(VpcIds=[vid])["Vpcs"]
    assert [a["CidrBlock"] for a in vpc["CidrBlockAssociationSet"]] == ["10.41.0.0/16", "10.42.0.0/16"]
    assert vpc["Ipv6CidrBlockAssociationSet"][0]["Ipv6CidrBlock"] == v6["Ipv6CidrBlock"]
    [main] = ec2.describe_route_tables(Filters=[{"Name": "vpc-id", "Values": [vid]}])["RouteTables"]
    local = {r.get("DestinationCidrBlock") or r.get("DestinationIpv6CidrBlock") for r in main["Routes"] if r.get("GatewayId") == "local"}
    assert local == {"10.41.0.0/16", "10.42.0.0/16", v6["Ipv6CidrBlock"]}

    sub = ec2.create_subnet(VpcId=vid, CidrBlock="10.42.3.0/24")["Subnet"]["SubnetId"]
    prefix = v6["Ipv6CidrBlock"].split("::/")[0]
    sub64 = prefix[:-2] + "01::/64" if prefix.endswith("00") else prefix + "::/64"
    sa = ec2.associate_subnet_cidr_block(SubnetId=sub, Ipv6CidrBlock=sub64)["Ipv6CidrBlockAssociation"]
    assert ec2.describe_subnets(SubnetIds=[sub])["Subnets"][0]["Ipv6CidrBlockAssociationSet"][0]["AssociationId"] == sa["AssociationId"]
    assert error(ec2.disassociate_vpc_cidr_block, AssociationId=second["AssociationId"])["Code"] == "InvalidCidrBlock.InUse"

    eigw = ec2.create_egress_only_internet_gateway(VpcId=vid)["EgressOnlyInternetGateway"]
    assert eigw["Attachments"] == [{"State": "attached", "VpcId": vid}]
    ec2.create_route(RouteTableId=main["RouteTableId"], DestinationIpv6CidrBlock="::/0", EgressOnlyInternetGatewayId=eigw["EgressOnlyInternetGatewayId"])
    assert error(ec2.delete_egress_only_internet_gateway, EgressOnlyInternetGatewayId=eigw["EgressOnlyInternetGatewayId"])["Code"] == "DependencyViolation"
    ec2.delete_route(RouteTableId=main["RouteTableId"], DestinationIpv6CidrBlock="::/0")
    assert ec2.delete_egress_only_internet_gateway(EgressOnlyInternetGatewayId=eigw["EgressOnlyInternetGatewayId"])["ReturnCode"] is True
    ec2.disassociate_subnet_cidr_block(AssociationId=sa["AssociationId"])
    ec2.delete_subnet(SubnetId=sub)
    ec2.disassociate_vpc_cidr_block(AssociationId=second["AssociationId"])
    ec2.disassociate_vpc_cidr_block(AssociationId=v6["AssociationId"])
    ec2.delete_vpc(VpcId=vid)


def test_endpoints_prefix_lists_flow_logs_and_peering(ec2, cumulo):
    vid = ec2.create_vpc(CidrBlock="10.43.0.0/16")["Vpc"]["VpcId"]
    rtb = ec2.create_route_table(VpcId=vid)["RouteTable"]["RouteTableId"]
    sub = ec2.create_subnet(VpcId=vid, CidrBlock="10.43.1.0/24", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    [s3_list] = ec2.describe_prefix_lists(Filters=[{"Name": "prefix-list-name", "Values": ["com.amazonaws.us-east-1.s3"]}])["PrefixLists"]
    assert s3_list["PrefixListId"] == "pl-63a5400a"
    services = ec2.describe_vpc_endpoint_services(Filters=[{"Name": "service-type", "Values": ["Gateway"]}])
    assert services["ServiceNames"] == ["com.amazonaws.us-east-1.dynamodb", "com.amazonaws.us-east-1.s3"]
    [logs] = ec2.describe_vpc_endpoint_services(ServiceNames=["com.amazonaws.us-east-1.logs"])["ServiceDetails"]
    assert logs["PrivateDnsName"] == "logs.us-east-1.amazonaws.com" and logs["ServiceType"] == [{"ServiceType": "Interface"}]
    assert error(ec2.describe_vpc_endpoint_services, ServiceNames=["com.amazonaws.us-east-1.nothing"])["Code"] == "InvalidServiceName"
    gw = ec2.create_vpc_endpoint(VpcId=vid, ServiceName="com.amazonaws.us-east-1.s3", RouteTableIds=[rtb])["VpcEndpoint"]
    routes = ec2.describe_route_tables(RouteTableIds=[rtb])["RouteTables"][0]["Routes"]
    assert {"DestinationPrefixListId": "pl-63a5400a", "GatewayId": gw["VpcEndpointId"], "Origin": "CreateRoute", "State": "active"} in routes
    iface = ec2.create_vpc_endpoint(VpcId=vid, VpcEndpointType="Interface", ServiceName="com.amazonaws.us-east-1.logs", SubnetIds=[sub], PrivateDnsEnabled=True)["VpcEndpoint"]
    assert len(iface["NetworkInterfaceIds"]) == 1 and iface["State"] == "available"
    names = [d["DnsName"] for d in iface["DnsEntries"]]
    assert names[0].startswith(iface["VpcEndpointId"] + "-") and names[0].endswith(".logs.us-east-1.vpce.amazonaws.com")
    assert "logs.us-east-1.amazonaws.com" in names
    [eni] = ec2.describe_network_interfaces(NetworkInterfaceIds=iface["NetworkInterfaceIds"])["NetworkInterfaces"]
    assert eni["InterfaceType"] == "vpc_endpoint" and eni["SubnetId"] == sub
    bad = error(ec2.create_vpc_endpoint, VpcId=vid, ServiceName="com.amazonaws.us-east-1.nothing")
    assert bad == {"Code": "InvalidServiceName", "Message": "The Vpc Endpoint Service 'com.amazonaws.us-east-1.nothing' does not exist"}
    assert len(ec2.describe_vpc_endpoints(Filters=[{"Name": "vpc-id", "Values": [vid]}])["VpcEndpoints"]) == 2
    assert error(ec2.delete_vpc, VpcId=vid)["Code"] == "DependencyViolation"
    out = ec2.delete_vpc_endpoints(VpcEndpointIds=[gw["VpcEndpointId"], iface["VpcEndpointId"], "vpce-0123456789abcdef0"])
    assert [u["ResourceId"] for u in out["Unsuccessful"]] == ["vpce-0123456789abcdef0"]
    assert len(ec2.describe_route_tables(RouteTableIds=[rtb])["RouteTables"][0]["Routes"]) == 1

    pl = ec2.create_managed_prefix_list(PrefixListName="office", AddressFamily="IPv4", MaxEntries=2, Entries=[{"Cidr": "10.0.0.0/8", "Description": "hq"}])["PrefixList"]
    assert pl["Version"] == 1 and pl["State"] == "create-complete"
    stale = error(ec2.modify_managed_prefix_list, PrefixListId=pl["PrefixListId"], CurrentVersion=5, AddEntries=[{"Cidr": "192.168.0.0/16"}])
    assert stale["Code"] == "PrefixListVersionMismatch"
    ec2.modify_managed_prefix_list(PrefixListId=pl["PrefixListId"], CurrentVersion=1, AddEntries=[{"Cidr": "192.168.0.0/16"}])
    entries = ec2.get_managed_prefix_list_entries(PrefixListId=pl["PrefixListId"])["Entries"]
    assert [e["Cidr"] for e in entries] == ["10.0.0.0/8", "192.168.0.0/16"]
    lists = ec2.describe_managed_prefix_lists()["PrefixLists"]
    assert {"pl-63a5400a", pl["PrefixListId"]} <= {x["PrefixListId"] for x in lists}
    ec2.delete_managed_prefix_list(PrefixListId=pl["PrefixListId"])

    no_dest = error(ec2.create_flow_logs, ResourceIds=[vid], ResourceType="VPC", TrafficType="ALL", LogDestinationType="cloud-watch-logs")
    assert no_dest == {"Code": "InvalidParameter", "Message": "LogDestination can't be empty if LogGroupName is not provided."}
    both = error(ec2.create_flow_logs, ResourceIds=[vid], ResourceType="VPC", TrafficType="ALL", LogGroupName="g", LogDestination="arn:aws:logs:us-east-1:000000000000:log-group:g", DeliverLogsPermissionArn="arn:aws:iam::000000000000:role/r")
    assert both["Message"] == "Please only provide LogGroupName or only provide LogDestination."
    # A bucket that does not exist refuses the resource in a successful answer, as on AWS.
    bucket = f"flow-bucket-{uuid.uuid4().hex[:8]}"
    refused = ec2.create_flow_logs(ResourceIds=[vid], ResourceType="VPC", TrafficType="ALL", LogDestinationType="s3", LogDestination=f"arn:aws:s3:::{bucket}")
    assert refused["FlowLogIds"] == [] and refused["Unsuccessful"] == [
        {"Error": {"Code": "400", "Message": f"LogDestination: {bucket} does not exist"}, "ResourceId": vid}]
    cumulo.client("s3").create_bucket(Bucket=bucket)
    made = ec2.create_flow_logs(ResourceIds=[vid], ResourceType="VPC", TrafficType="ALL", LogDestinationType="s3", LogDestination=f"arn:aws:s3:::{bucket}/logs/")
    [fl] = ec2.describe_flow_logs(FlowLogIds=made["FlowLogIds"])["FlowLogs"]
    assert (fl["ResourceId"], fl["FlowLogStatus"], fl["DestinationOptions"]["FileFormat"]) == (vid, "ACTIVE", "plain-text")

    peer = ec2.create_vpc(CidrBlock="10.44.0.0/16")["Vpc"]["VpcId"]
    pcx = ec2.create_vpc_peering_connection(VpcId=vid, PeerVpcId=peer)["VpcPeeringConnection"]
    assert pcx["Status"]["Code"] == "pending-acceptance"
    active = ec2.accept_vpc_peering_connection(VpcPeeringConnectionId=pcx["VpcPeeringConnectionId"])["VpcPeeringConnection"]
    assert active["Status"] == {"Code": "active", "Message": "Active"} and active["AccepterVpcInfo"]["CidrBlock"] == "10.44.0.0/16"
    ec2.create_route(RouteTableId=rtb, DestinationCidrBlock="10.44.0.0/16", VpcPeeringConnectionId=pcx["VpcPeeringConnectionId"])
    assert error(ec2.create_route, RouteTableId=rtb, DestinationCidrBlock="10.45.0.0/16", VpcPeeringConnectionId="pcx-0123456789abcdef0")["Code"] == "InvalidVpcPeeringConnectionID.NotFound"
    ec2.delete_route(RouteTableId=rtb, DestinationCidrBlock="10.44.0.0/16")
    ec2.delete_vpc_peering_connection(VpcPeeringConnectionId=pcx["VpcPeeringConnectionId"])
    [gone] = ec2.describe_vpc_peering_connections(VpcPeeringConnectionIds=[pcx["VpcPeeringConnectionId"]])["VpcPeeringConnections"]
    assert gone["Status"]["Code"] == "deleted"
    ec2.delete_subnet(SubnetId=sub)
    ec2.delete_route_table(RouteTableId=rtb)
    ec2.delete_vpc(VpcId=vid)
    ec2.delete_vpc(VpcId=peer)
    # The flow log went with its VPC.
    assert not ec2.describe_flow_logs(Filters=[{"Name": "resource-id", "Values": [vid]}])["FlowLogs"]


def test_key_pairs(ec2, cumulo):
    name = f"k-{uuid.uuid4().hex[:6]}"
    made = ec2.create_key_pair(KeyName=name)
    assert made["KeyMaterial"].startswith("-----BEGIN RSA PRIVATE KEY-----") and made["KeyPairId"].startswith("key-")
    assert len(made["KeyFingerprint"].split(":")) == 20
    assert error(ec2.create_key_pair, KeyName=name) == {"Code": "InvalidKeyPair.Duplicate", "Message": f"The keypair '{name}' already exists."}
    ed = ec2.create_key_pair(KeyName=name + "-ed", KeyType="ed25519")
    assert ed["KeyMaterial"].startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    [info] = ec2.describe_key_pairs(KeyNames=[name + "-ed"], IncludePublicKey=True)["KeyPairs"]
    assert info["KeyType"] == "ed25519" and info["PublicKey"].startswith("ssh-ed25519 ") and "KeyMaterial" not in info
    imported = ec2.import_key_pair(KeyName=name + "-imp", PublicKeyMaterial=info["PublicKey"].encode())
    assert imported["KeyFingerprint"] == info["KeyFingerprint"]
    assert error(ec2.import_key_pair, KeyName=name + "-bad", PublicKeyMaterial=b"ssh-rsa nonsense")["Code"] == "InvalidKey.Format"
    missing = error(ec2.describe_key_pairs, KeyNames=["no-such-key"])
    assert missing == {"Code": "InvalidKeyPair.NotFound", "Message": "The key pair 'no-such-key' does not exist"}
    out = cumulo.aws("ec2", "describe-key-pairs", "--filters", f"Name=key-name,Values={name}*")
    assert sorted(k["KeyName"] for k in out["KeyPairs"]) == sorted([name, name + "-ed", name + "-imp"])
    for n in (name, name + "-ed", name + "-imp"):
        ec2.delete_key_pair(KeyName=n)
    ec2.delete_key_pair(KeyName=name)  # gone already: AWS answers success
    assert not ec2.describe_key_pairs(Filters=[{"Name": "key-name", "Values": [name + "*"]}])["KeyPairs"]


def test_images_public_parameters_instances_and_launch_templates(ec2, cumulo):
    ssm = cumulo.client("ssm")
    ami = ssm.get_parameter(Name=AL2023)["Parameter"]
    assert ami["DataType"] == "aws:ec2:image" and ami["Value"].startswith("ami-")
    via_cli = cumulo.aws("ssm", "get-parameter", "--name", "/aws/service/ecs/optimized-ami/amazon-linux-2/recommended")
    doc = json.loads(via_cli["Parameter"]["Value"])
    [ecs_image] = ec2.describe_images(ImageIds=[doc["image_id"]])["Images"]
    assert ecs_image["Name"] == doc["image_name"] and ecs_image["State"] == "available"
    [image] = ec2.describe_images(Owners=["amazon"], Filters=[{"Name": "name", "Values": ["al2023-ami-2023.*-x86_64"]}])["Images"]
    assert image["ImageId"] == ami["Value"]
    assert error(ec2.describe_images, ImageIds=["ami-00000000000000000"]) == {"Code": "InvalidAMIID.NotFound", "Message": "The image id '[ami-00000000000000000]' does not exist"}

    vid = ec2.create_vpc(CidrBlock="10.46.0.0/16")["Vpc"]["VpcId"]
    sub = ec2.create_subnet(VpcId=vid, CidrBlock="10.46.1.0/24")["Subnet"]["SubnetId"]
    sg = ec2.create_security_group(GroupName="web", Description="web", VpcId=vid)["GroupId"]
    before = ec2.describe_subnets(SubnetIds=[sub])["Subnets"][0]["AvailableIpAddressCount"]
    assert error(ec2.run_instances, ImageId="ami-00000000000000000", InstanceType="t3.micro", MinCount=1, MaxCount=1, SubnetId=sub)["Code"] == "InvalidAMIID.NotFound"
    assert error(ec2.run_instances, ImageId=ami["Value"], InstanceType="t3.micro", MinCount=1, MaxCount=1, SubnetId=sub, KeyName="nokey")["Code"] == "InvalidKeyPair.NotFound"
    assert error(ec2.run_instances, ImageId=ami["Value"], InstanceType="huge", MinCount=1, MaxCount=1, SubnetId=sub)["Code"] == "InvalidParameterValue"
    assert ec2.describe_subnets(SubnetIds=[sub])["Subnets"][0]["AvailableIpAddressCount"] == before

    lt = ec2.create_launch_template(LaunchTemplateName=f"lt-{uuid.uuid4().hex[:6]}", LaunchTemplateData={
        "ImageId": ami["Value"], "InstanceType": "t3.micro", "SecurityGroupIds": [sg],
        "TagSpecifications": [{"ResourceType": "instance", "Tags": [{"Key": "Name", "Value": "from-lt"}]}]})["LaunchTemplate"]
    assert (lt["DefaultVersionNumber"], lt["LatestVersionNumber"]) == (1, 1)
    v2 = ec2.create_launch_template_version(LaunchTemplateId=lt["LaunchTemplateId"], SourceVersion="1", LaunchTemplateData={"InstanceType": "t3.small"})["LaunchTemplateVersion"]
    assert v2["VersionNumber"] == 2 and v2["LaunchTemplateData"]["ImageId"] == ami["Value"] and v2["LaunchTemplateData"]["SecurityGroupIds"] == [sg]
    dup = error(ec2.create_launch_template, LaunchTemplateName=lt["LaunchTemplateName"], LaunchTemplateData={"InstanceType": "t3.micro"})
    assert dup["Code"] == "InvalidLaunchTemplateName.AlreadyExistsException"

    run = ec2.run_instances(LaunchTemplate={"LaunchTemplateId": lt["LaunchTemplateId"], "Version": "$Latest"}, SubnetId=sub, MinCount=2, MaxCount=2)
    ids = [i["InstanceId"] for i in run["Instances"]]
    assert [i["State"]["Name"] for i in run["Instances"]] == ["pending", "pending"]
    assert [i["PrivateIpAddress"] for i in run["Instances"]] == ["10.46.1.4", "10.46.1.5"]
    ec2.get_waiter("instance_running").wait(InstanceIds=ids, WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    [res] = ec2.describe_instances(InstanceIds=ids)["Reservations"]
    first = res["Instances"][0]
    assert first["InstanceType"] == "t3.small" and first["SecurityGroups"] == [{"GroupId": sg, "GroupName": "web"}]
    assert {t["Key"]: t["Value"] for t in first["Tags"]} == {"Name": "from-lt"}
    assert first["NetworkInterfaces"][0]["Attachment"]["Status"] == "attached"
    assert ec2.describe_instances(Filters=[{"Name": "tag:Name", "Values": ["from-lt"]}, {"Name": "instance-state-name", "Values": ["running"]}])["Reservations"][0]["Instances"][0]["InstanceId"] in ids
    statuses = ec2.describe_instance_status(InstanceIds=ids)["InstanceStatuses"]
    assert {s["InstanceStatus"]["Status"] for s in statuses} == {"ok"}
    stopped = ec2.stop_instances(InstanceIds=ids[:1])["StoppingInstances"][0]
    assert (stopped["PreviousState"]["Name"], stopped["CurrentState"]["Name"]) == ("running", "stopping")
    ec2.get_waiter("instance_stopped").wait(InstanceIds=ids[:1], WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    assert ec2.start_instances(InstanceIds=ids[:1])["StartingInstances"][0]["CurrentState"]["Name"] == "pending"
    missing = error(ec2.terminate_instances, InstanceIds=["i-0123456789abcdef0"])
    assert missing == {"Code": "InvalidInstanceID.NotFound", "Message": "The instance ID 'i-0123456789abcdef0' does not exist"}
    assert error(ec2.delete_subnet, SubnetId=sub)["Code"] == "DependencyViolation"
    ec2.terminate_instances(InstanceIds=ids)
    ec2.get_waiter("instance_terminated").wait(InstanceIds=ids, WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    assert ec2.describe_subnets(SubnetIds=[sub])["Subnets"][0]["AvailableIpAddressCount"] == before
    assert error(ec2.start_instances, InstanceIds=ids[:1])["Code"] == "IncorrectInstanceState"

    ec2.delete_launch_template(LaunchTemplateId=lt["LaunchTemplateId"])
    assert error(ec2.describe_launch_templates, LaunchTemplateIds=[lt["LaunchTemplateId"]])["Code"] == "InvalidLaunchTemplateId.NotFound"
    ec2.delete_security_group(GroupId=sg)
    ec2.delete_subnet(SubnetId=sub)
    ec2.delete_vpc(VpcId=vid)


def test_state_survives_restart(tmp_path):
    server = CumuloServer(data_dir=tmp_path / "d").start()
    try:
        ec2 = server.client("ec2")
        key = ec2.create_key_pair(KeyName="kept")["KeyFingerprint"]
        image = server.client("ssm").get_parameter(Name=AL2023)["Parameter"]["Value"]
        [inst] = ec2.run_instances(ImageId=image, InstanceType="t3.micro", MinCount=1, MaxCount=1, KeyName="kept")["Instances"]
        vid = ec2.create_vpc(CidrBlock="10.47.0.0/16")["Vpc"]["VpcId"]
        acl = ec2.create_network_acl(VpcId=vid)["NetworkAcl"]["NetworkAclId"]
        server.kill9()
        server.start()
        ec2 = server.client("ec2")
        assert ec2.describe_key_pairs(KeyNames=["kept"])["KeyPairs"][0]["KeyFingerprint"] == key
        [res] = ec2.describe_instances(InstanceIds=[inst["InstanceId"]])["Reservations"]
        assert res["Instances"][0]["KeyName"] == "kept" and res["Instances"][0]["State"]["Name"] == "running"
        assert ec2.describe_network_acls(NetworkAclIds=[acl])["NetworkAcls"][0]["VpcId"] == vid
    finally:
        server.stop()


STACK = {
    "Parameters": {
        "Image": {"Type": "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>", "Default": AL2023},
        "Port": {"Type": "Number", "Default": 443},
    },
    "Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.50.0.0/16"}},
        "V6": {"Type": "AWS::EC2::VPCCidrBlock", "Properties": {"VpcId": {"Ref": "Vpc"}, "AmazonProvidedIpv6CidrBlock": True}},
        "Second": {"Type": "AWS::EC2::VPCCidrBlock", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.51.0.0/16"}},
        "Subnet": {"Type": "AWS::EC2::Subnet", "DependsOn": "Second", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.51.1.0/24", "AvailabilityZone": "us-east-1a"}},
        "Rt": {"Type": "AWS::EC2::RouteTable", "Properties": {"VpcId": {"Ref": "Vpc"}}},
        "Eigw": {"Type": "AWS::EC2::EgressOnlyInternetGateway", "Properties": {"VpcId": {"Ref": "Vpc"}}},
        "V6Route": {"Type": "AWS::EC2::Route", "DependsOn": "V6", "Properties": {"RouteTableId": {"Ref": "Rt"}, "DestinationIpv6CidrBlock": "::/0", "EgressOnlyInternetGatewayId": {"Ref": "Eigw"}}},
        "Acl": {"Type": "AWS::EC2::NetworkAcl", "Properties": {"VpcId": {"Ref": "Vpc"}, "Tags": [{"Key": "Name", "Value": "acl"}]}},
        "AclIn": {"Type": "AWS::EC2::NetworkAclEntry", "Properties": {"NetworkAclId": {"Ref": "Acl"}, "RuleNumber": 100, "Protocol": 6, "RuleAction": "allow", "CidrBlock": "0.0.0.0/0", "PortRange": {"From": {"Ref": "Port"}, "To": {"Ref": "Port"}}}},
        "AclAssoc": {"Type": "AWS::EC2::SubnetNetworkAclAssociation", "Properties": {"SubnetId": {"Ref": "Subnet"}, "NetworkAclId": {"Ref": "Acl"}}},
        "Dhcp": {"Type": "AWS::EC2::DHCPOptions", "Properties": {"DomainName": "corp.example", "DomainNameServers": ["AmazonProvidedDNS"]}},
        "DhcpAssoc": {"Type": "AWS::EC2::VPCDHCPOptionsAssociation", "Properties": {"VpcId": {"Ref": "Vpc"}, "DhcpOptionsId": {"Ref": "Dhcp"}}},
        "S3Endpoint": {"Type": "AWS::EC2::VPCEndpoint", "Properties": {"VpcId": {"Ref": "Vpc"}, "ServiceName": "com.amazonaws.us-east-1.s3", "RouteTableIds": [{"Ref": "Rt"}],
                       "PolicyDocument": {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "*"}]}}},
        "LogsEndpoint": {"Type": "AWS::EC2::VPCEndpoint", "Properties": {"VpcId": {"Ref": "Vpc"}, "ServiceName": "com.amazonaws.us-east-1.logs", "VpcEndpointType": "Interface", "SubnetIds": [{"Ref": "Subnet"}], "PrivateDnsEnabled": True}},
        "Flow": {"Type": "AWS::EC2::FlowLog", "Properties": {"ResourceId": {"Ref": "Vpc"}, "ResourceType": "VPC", "TrafficType": "REJECT", "LogDestinationType": "s3", "LogDestination": {"Fn::GetAtt": ["FlowBucket", "Arn"]}}},
        "FlowBucket": {"Type": "AWS::S3::Bucket"},
        "Peer": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.60.0.0/16"}},
        "Peering": {"Type": "AWS::EC2::VPCPeeringConnection", "Properties": {"VpcId": {"Ref": "Vpc"}, "PeerVpcId": {"Ref": "Peer"}}},
        "Office": {"Type": "AWS::EC2::PrefixList", "Properties": {"PrefixListName": "office", "AddressFamily": "IPv4", "MaxEntries": 3, "Entries": [{"Cidr": "10.0.0.0/8", "Description": "hq"}]}},
        "Key": {"Type": "AWS::EC2::KeyPair", "Properties": {"KeyName": {"Fn::Sub": "${AWS::StackName}-key"}, "KeyType": "ed25519"}},
        "Template": {"Type": "AWS::EC2::LaunchTemplate", "Properties": {"LaunchTemplateData": {"ImageId": {"Ref": "Image"}, "InstanceType": "t3.micro", "KeyName": {"Ref": "Key"}}}},
        "Server": {"Type": "AWS::EC2::Instance", "Properties": {"LaunchTemplate": {"LaunchTemplateId": {"Ref": "Template"}, "Version": {"Fn::GetAtt": ["Template", "LatestVersionNumber"]}},
                   "SubnetId": {"Ref": "Subnet"}, "Tags": [{"Key": "Name", "Value": "server"}]}},
    },
    "Outputs": {
        "VpcId": {"Value": {"Ref": "Vpc"}},
        "DefaultAcl": {"Value": {"Fn::GetAtt": ["Vpc", "DefaultNetworkAcl"]}},
        "AclAssoc": {"Value": {"Ref": "AclAssoc"}},
        "KeyId": {"Value": {"Fn::GetAtt": ["Key", "KeyPairId"]}},
        "Dns": {"Value": {"Fn::Select": [0, {"Fn::GetAtt": ["LogsEndpoint", "DnsEntries"]}]}},
        "Latest": {"Value": {"Fn::GetAtt": ["Template", "LatestVersionNumber"]}},
        "ServerIp": {"Value": {"Fn::GetAtt": ["Server", "PrivateIp"]}},
        "ListVersion": {"Value": {"Fn::GetAtt": ["Office", "Version"]}},
    },
}


def test_a_stack_of_the_new_types_deploys_updates_and_deletes(cumulo, ec2, tmp_path):
    cfn, ssm = cumulo.client("cloudformation"), cumulo.client("ssm")
    name = f"ec2x-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(STACK))
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path))
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]}
    vid = out["VpcId"]
    resources = {r["LogicalResourceId"]: r for r in cfn.describe_stack_resources(StackName=name)["StackResources"]}
    assert resources["Server"]["ResourceStatusReason"] == "cumulo: no virtual machine runs; the instance is a record"

    [vpc] = ec2.describe_vpcs(VpcIds=[vid])["Vpcs"]
    assert len(vpc["CidrBlockAssociationSet"]) == 2 and len(vpc["Ipv6CidrBlockAssociationSet"]) == 1
    assert vpc["DhcpOptionsId"] == resources["Dhcp"]["PhysicalResourceId"]
    acls = {a["NetworkAclId"]: a for a in ec2.describe_network_acls(Filters=[{"Name": "vpc-id", "Values": [vid]}])["NetworkAcls"]}
    assert acls[out["DefaultAcl"]]["IsDefault"]
    custom = acls[resources["Acl"]["PhysicalResourceId"]]
    assert custom["Associations"][0]["NetworkAclAssociationId"] == out["AclAssoc"]
    assert [e["PortRange"] for e in custom["Entries"] if e["RuleNumber"] == 100] == [{"From": 443, "To": 443}]
    endpoints = {e["ServiceName"]: e for e in ec2.describe_vpc_endpoints(Filters=[{"Name": "vpc-id", "Values": [vid]}])["VpcEndpoints"]}
    assert json.loads(endpoints["com.amazonaws.us-east-1.s3"]["PolicyDocument"])["Statement"][0]["Action"] == "s3:GetObject"
    assert out["Dns"].startswith("Z7HUB22UULQXV:" + endpoints["com.amazonaws.us-east-1.logs"]["VpcEndpointId"])
    [fl] = ec2.describe_flow_logs(Filters=[{"Name": "resource-id", "Values": [vid]}])["FlowLogs"]
    assert fl["TrafficType"] == "REJECT" and fl["LogDestination"] == f"arn:aws:s3:::{resources['FlowBucket']['PhysicalResourceId']}"
    [pcx] = ec2.describe_vpc_peering_connections(VpcPeeringConnectionIds=[resources["Peering"]["PhysicalResourceId"]])["VpcPeeringConnections"]
    assert pcx["Status"]["Code"] == "active"
    key_param = ssm.get_parameter(Name=f"/ec2/keypair/{out['KeyId']}", WithDecryption=True)["Parameter"]
    assert key_param["Type"] == "SecureString" and key_param["Value"].startswith("-----BEGIN OPENSSH PRIVATE KEY-----")
    [res] = ec2.describe_instances(Filters=[{"Name": "tag:aws:cloudformation:stack-name", "Values": [name]}])["Reservations"]
    server = res["Instances"][0]
    assert server["State"]["Name"] == "running" and server["KeyName"] == f"{name}-key" and server["PrivateIpAddress"] == out["ServerIp"]
    assert server["ImageId"] == ssm.get_parameter(Name=AL2023)["Parameter"]["Value"]

    # An update: the ACL entry's port, the template's type (a new default version), the
    # prefix list's entries, the S3 endpoint's route tables.
    changed = json.loads(json.dumps(STACK))
    changed["Resources"]["Template"]["Properties"]["LaunchTemplateData"]["InstanceType"] = "t3.small"
    changed["Resources"]["Office"]["Properties"]["Entries"].append({"Cidr": "192.168.0.0/16"})
    changed["Resources"]["Rt2"] = {"Type": "AWS::EC2::RouteTable", "Properties": {"VpcId": {"Ref": "Vpc"}}}
    changed["Resources"]["S3Endpoint"]["Properties"]["RouteTableIds"] = [{"Ref": "Rt2"}]
    path.write_text(json.dumps(changed))
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path), "--parameter-overrides", "Port=8443")
    out2 = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]}
    assert (out2["Latest"], out2["ListVersion"]) == ("2", "2")
    [entry] = [e for e in ec2.describe_network_acls(NetworkAclIds=[custom["NetworkAclId"]])["NetworkAcls"][0]["Entries"] if e["RuleNumber"] == 100]
    assert entry["PortRange"] == {"From": 8443, "To": 8443}
    [t] = ec2.describe_launch_templates(LaunchTemplateIds=[resources["Template"]["PhysicalResourceId"]])["LaunchTemplates"]
    assert t["DefaultVersionNumber"] == 2
    s3 = ec2.describe_vpc_endpoints(VpcEndpointIds=[endpoints["com.amazonaws.us-east-1.s3"]["VpcEndpointId"]])["VpcEndpoints"][0]
    rt2 = cfn.describe_stack_resource(StackName=name, LogicalResourceId="Rt2")["StackResourceDetail"]["PhysicalResourceId"]
    assert s3["RouteTableIds"] == [rt2]

    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    assert error(ec2.describe_vpcs, VpcIds=[vid])["Code"] == "InvalidVpcID.NotFound"
    assert not ec2.describe_key_pairs(Filters=[{"Name": "key-name", "Values": [f"{name}-key"]}])["KeyPairs"]
    assert error(ssm.get_parameter, Name=f"/ec2/keypair/{out['KeyId']}")["Code"] == "ParameterNotFound"
    assert ec2.describe_instances(InstanceIds=[server["InstanceId"]])["Reservations"][0]["Instances"][0]["State"]["Name"] == "terminated"
    assert not ec2.describe_managed_prefix_lists(Filters=[{"Name": "prefix-list-name", "Values": ["office"]}])["PrefixLists"]
    assert error(ec2.describe_dhcp_options, DhcpOptionsIds=[resources["Dhcp"]["PhysicalResourceId"]])["Code"] == "InvalidDhcpOptionID.NotFound"
    assert ec2.describe_vpc_peering_connections(VpcPeeringConnectionIds=[pcx["VpcPeeringConnectionId"]])["VpcPeeringConnections"][0]["Status"]["Code"] == "deleted"


def test_zones_and_regions_as_aws_records_them(ec2):
    [zone] = ec2.describe_availability_zones(Filters=[{"Name": "zone-name", "Values": ["us-east-1a"]}])["AvailabilityZones"]
    assert zone == {"GroupLongName": "US East (N. Virginia) 1", "GroupName": "us-east-1-zg-1", "Messages": [], "NetworkBorderGroup": "us-east-1",
                    "OptInStatus": "opt-in-not-required", "RegionName": "us-east-1", "State": "available", "ZoneId": "use1-az6",
                    "ZoneName": "us-east-1a", "ZoneType": "availability-zone"}
    assert error(ec2.describe_availability_zones, Filters=[{"Name": "colour", "Values": ["x"]}])["Code"] == "InvalidParameterValue"
    [eu] = ec2.describe_regions(RegionNames=["eu-west-1"])["Regions"]
    assert eu == {"Endpoint": "ec2.eu-west-1.amazonaws.com", "RegionName": "eu-west-1", "OptInStatus": "opt-in-not-required"}
    assert [r["RegionName"] for r in ec2.describe_regions(Filters=[{"Name": "region-name", "Values": ["us-west-2"]}])["Regions"]] == ["us-west-2"]


def test_describes_page_by_max_results_and_next_token(cumulo, ec2):
    vpc = ec2.create_vpc(CidrBlock="10.61.0.0/16")["Vpc"]["VpcId"]
    made = sorted(ec2.create_dhcp_options(DhcpConfigurations=[{"Key": "domain-name", "Values": [f"p{i}.internal"]}])["DhcpOptions"]["DhcpOptionsId"] for i in range(7))
    for gw in range(6):
        ec2.create_egress_only_internet_gateway(VpcId=vpc)
    everything = [d["DhcpOptionsId"] for d in ec2.describe_dhcp_options()["DhcpOptions"]]
    assert set(made) <= set(everything) and everything == sorted(everything)

    first = ec2.describe_dhcp_options(MaxResults=5)
    assert len(first["DhcpOptions"]) == 5 and first["NextToken"]
    pages = [p["DhcpOptions"] for p in ec2.get_paginator("describe_dhcp_options").paginate(PaginationConfig={"PageSize": 5})]
    assert [d["DhcpOptionsId"] for page in pages for d in page] == everything
    assert all(len(p) <= 5 for p in pages) and len(pages) >= 2

    filtered = ec2.get_paginator("describe_egress_only_internet_gateways").paginate(
        Filters=[{"Name": "attachment.vpc-id", "Values": [vpc]}], PaginationConfig={"PageSize": 5})
    assert [len(p["EgressOnlyInternetGateways"]) for p in filtered] == [5, 1]
    last = ec2.describe_network_acls(MaxResults=1000)
    assert "NextToken" not in last

    # Below the operation's range (botocore checks it too, so ask without its validation).
    raw = cumulo.client("ec2", parameter_validation=False)
    err = error(raw.describe_network_acls, MaxResults=1)
    assert err == {"Code": "InvalidParameterValue", "Message": "Value ( 1 ) for parameter maxResults is invalid. Expecting a value greater than 5."}


def test_vpc_ipv6_blocks_answer_getatt_after_a_vpccidrblock_adds_one(cumulo, ec2, tmp_path):
    """The usual dual-stack template: a VPCCidrBlock asks for an Amazon-provided IPv6 block and a
    subnet (DependsOn it) carves a /64 out of `Fn::GetAtt Vpc.Ipv6CidrBlocks`, which CloudFormation
    answers as the VPC is now, not as it was created; so do the outputs."""
    template = {
        "Resources": {
            "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.70.0.0/16"}},
            "V6": {"Type": "AWS::EC2::VPCCidrBlock", "Properties": {"VpcId": {"Ref": "Vpc"}, "AmazonProvidedIpv6CidrBlock": True}},
            "Subnet": {"Type": "AWS::EC2::Subnet", "DependsOn": "V6", "Properties": {
                "VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.70.1.0/24",
                "Ipv6CidrBlock": {"Fn::Select": [0, {"Fn::Cidr": [{"Fn::Select": [0, {"Fn::GetAtt": ["Vpc", "Ipv6CidrBlocks"]}]}, 4, 64]}]},
            }},
        },
        "Outputs": {
            "Blocks": {"Value": {"Fn::Join": [",", {"Fn::GetAtt": ["Vpc", "Ipv6CidrBlocks"]}]}},
            "Associations": {"Value": {"Fn::Join": [",", {"Fn::GetAtt": ["Vpc", "CidrBlockAssociations"]}]}},
            "Subnet": {"Value": {"Ref": "Subnet"}},
            "VpcId": {"Value": {"Ref": "Vpc"}},
        },
    }
    name = f"v6-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "v6.json"
    path.write_text(json.dumps(template))
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path))
    cfn = cumulo.client("cloudformation")
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]}
    [vpc] = ec2.describe_vpcs(VpcIds=[out["VpcId"]])["Vpcs"]
    [block] = vpc["Ipv6CidrBlockAssociationSet"]
    assert block["Ipv6CidrBlock"].endswith("::/56") and out["Blocks"] == block["Ipv6CidrBlock"]
    # CidrBlockAssociations lists the IPv4 associations only (AWS's attribute).
    assert out["Associations"] == vpc["CidrBlockAssociationSet"][0]["AssociationId"]
    [subnet] = ec2.describe_subnets(SubnetIds=[out["Subnet"]])["Subnets"]
    [v6] = subnet["Ipv6CidrBlockAssociationSet"]
    assert v6["Ipv6CidrBlock"] == block["Ipv6CidrBlock"].replace("::/56", "::/64")
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    error_code = error(ec2.describe_vpcs, VpcIds=[out["VpcId"]])["Code"]
    assert error_code == "InvalidVpcID.NotFound"
