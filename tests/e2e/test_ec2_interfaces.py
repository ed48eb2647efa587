"""EC2 network interfaces, elastic IP associations, volumes and endpoint services through EC2's
own API (boto3) and CloudFormation: the corpus templates that use them deploy with
`aws cloudformation deploy`, every resource is checked through the EC2 API, and deleting the
stack leaves nothing. Errors in AWS's words; bad input changes nothing."""
import json
import os
import pathlib
import threading
import time
import uuid

import pytest
from botocore.exceptions import ClientError

from conftest import ROOT

# The shared corpus sits beside the checkout (or beside the worktrees' directory).
CORPUS = pathlib.Path(
    os.environ.get("CUMULO_CORPUS")
    or next((p / "shared" / "corpus" for p in (ROOT.parent, ROOT.parent.parent) if (p / "shared" / "corpus").is_dir()), ROOT.parent / "shared" / "corpus")
)
TEMPLATES = CORPUS / "templates-good" / "aws-cloudformation-templates"
pytestmark = pytest.mark.skipif(not TEMPLATES.is_dir(), reason=f"no corpus at {TEMPLATES}")
AL2 = "/aws/service/ami-amazon-linux-latest/amzn2-ami-hvm-x86_64-gp2"


@pytest.fixture(scope="module")
def ec2(cumulo):
    return cumulo.client("ec2")


def error(call, **kw):
    with pytest.raises(ClientError) as e:
        call(**kw)
    return e.value.response["Error"]


@pytest.fixture(scope="module")
def net(ec2, cumulo):
    """A VPC with a /24 subnet, a group and a running instance in it."""
    vpc = ec2.create_vpc(CidrBlock="10.40.0.0/16")["Vpc"]["VpcId"]
    sub = ec2.create_subnet(VpcId=vpc, CidrBlock="10.40.1.0/24", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    sg = ec2.create_security_group(VpcId=vpc, GroupName="eni", Description="eni")["GroupId"]
    image = cumulo.client("ssm").get_parameter(Name=AL2)["Parameter"]["Value"]
    [inst] = ec2.run_instances(ImageId=image, InstanceType="t3.micro", MinCount=1, MaxCount=1, SubnetId=sub)["Instances"]
    return {"vpc": vpc, "subnet": sub, "group": sg, "instance": inst["InstanceId"], "image": image}


def eni_of(ec2, eni_id):
    return ec2.describe_network_interfaces(NetworkInterfaceIds=[eni_id])["NetworkInterfaces"][0]


def test_interfaces_addresses_attachments_and_their_errors(ec2, net):
    sub, sg = net["subnet"], net["group"]
    eni = ec2.create_network_interface(
        SubnetId=sub, Groups=[sg], Description="mine", PrivateIpAddress="10.40.1.50", SecondaryPrivateIpAddressCount=2,
        TagSpecifications=[{"ResourceType": "network-interface", "Tags": [{"Key": "k", "Value": "v"}]}],
    )["NetworkInterface"]
    eid = eni["NetworkInterfaceId"]
    assert eid.startswith("eni-") and eni["Status"] == "available" and eni["PrivateIpAddress"] == "10.40.1.50"
    ips = [(a["PrivateIpAddress"], a["Primary"]) for a in eni["PrivateIpAddresses"]]
    assert ips[0] == ("10.40.1.50", True) and len(ips) == 3 and not any(p for _, p in ips[1:])
    assert eni["TagSet"] == [{"Key": "k", "Value": "v"}] and eni["Groups"] == [{"GroupId": sg}]

    # Filters over the new fields.
    second = ips[1][0]
    found = ec2.describe_network_interfaces(Filters=[{"Name": "addresses.private-ip-address", "Values": [second]}])["NetworkInterfaces"]
    assert [n["NetworkInterfaceId"] for n in found] == [eid]
    found = ec2.describe_network_interfaces(Filters=[{"Name": "subnet-id", "Values": [sub]}, {"Name": "status", "Values": ["available"]}])["NetworkInterfaces"]
    assert [n["NetworkInterfaceId"] for n in found] == [eid]

    # Bad addresses are refused and change nothing.
    before = ec2.describe_subnets(SubnetIds=[sub])["Subnets"][0]["AvailableIpAddressCount"]
    e = error(ec2.create_network_interface, SubnetId=sub, PrivateIpAddress="10.40.1.50")
    assert e == {"Code": "InvalidIPAddress.InUse", "Message": "The specified address 10.40.1.50 is already in use."}
    e = error(ec2.create_network_interface, SubnetId=sub, PrivateIpAddress="10.40.2.5")
    assert e["Code"] == "InvalidParameterValue" and "does not fall within the subnet's address range" in e["Message"]
    assert error(ec2.create_network_interface, SubnetId=sub, PrivateIpAddress="10.40.1.1")["Code"] == "InvalidParameterValue"
    assert error(ec2.assign_private_ip_addresses, NetworkInterfaceId=eid, PrivateIpAddresses=[second])["Code"] == "InvalidIPAddress.InUse"
    assert ec2.describe_subnets(SubnetIds=[sub])["Subnets"][0]["AvailableIpAddressCount"] == before

    # Secondary addresses come and go, drawn from the subnet.
    added = ec2.assign_private_ip_addresses(NetworkInterfaceId=eid, SecondaryPrivateIpAddressCount=1)["AssignedPrivateIpAddresses"]
    assert len(added) == 1
    assert ec2.describe_subnets(SubnetIds=[sub])["Subnets"][0]["AvailableIpAddressCount"] == before - 1
    ec2.unassign_private_ip_addresses(NetworkInterfaceId=eid, PrivateIpAddresses=[added[0]["PrivateIpAddress"]])
    e = error(ec2.unassign_private_ip_addresses, NetworkInterfaceId=eid, PrivateIpAddresses=["10.40.1.50"])
    assert e["Code"] == "InvalidParameterValue"
    assert len(eni_of(ec2, eid)["PrivateIpAddresses"]) == 3

    # Attributes.
    ec2.modify_network_interface_attribute(NetworkInterfaceId=eid, SourceDestCheck={"Value": False})
    ec2.modify_network_interface_attribute(NetworkInterfaceId=eid, Description={"Value": "changed"})
    got = eni_of(ec2, eid)
    assert got["SourceDestCheck"] is False and got["Description"] == "changed"

    # An elastic IP on a secondary address of the interface.
    alloc = ec2.allocate_address(Domain="vpc")
    assoc = ec2.associate_address(AllocationId=alloc["AllocationId"], NetworkInterfaceId=eid, PrivateIpAddress=second)["AssociationId"]
    assert assoc.startswith("eipassoc-")
    [addr] = ec2.describe_addresses(Filters=[{"Name": "association-id", "Values": [assoc]}])["Addresses"]
    assert (addr["NetworkInterfaceId"], addr["PrivateIpAddress"], addr["PublicIp"]) == (eid, second, alloc["PublicIp"])
    on = {a["PrivateIpAddress"]: a.get("Association") for a in eni_of(ec2, eid)["PrivateIpAddresses"]}
    assert on[second]["AssociationId"] == assoc and on[second]["PublicIp"] == alloc["PublicIp"]
    e = error(ec2.associate_address, AllocationId=alloc["AllocationId"], NetworkInterfaceId=eid)
    assert e == {"Code": "Resource.AlreadyAssociated", "Message": f"resource {alloc['AllocationId']} is already associated with associationId {assoc}"}
    e = error(ec2.associate_address, AllocationId=alloc["AllocationId"], NetworkInterfaceId=eid, PrivateIpAddress="10.40.1.99", AllowReassociation=True)
    assert e["Code"] == "InvalidParameterValue"

    # Attached to the instance: in use, not deletable, the address follows it.
    e = error(ec2.attach_network_interface, NetworkInterfaceId=eid, InstanceId=net["instance"], DeviceIndex=0)
    assert e["Code"] == "InvalidParameterValue" and "device index '0'" in e["Message"]
    att = ec2.attach_network_interface(NetworkInterfaceId=eid, InstanceId=net["instance"], DeviceIndex=1)["AttachmentId"]
    assert att.startswith("eni-attach-")
    got = eni_of(ec2, eid)
    assert got["Status"] == "in-use" and got["Attachment"]["AttachmentId"] == att and got["Attachment"]["DeviceIndex"] == 1
    assert ec2.describe_addresses(AllocationIds=[alloc["AllocationId"]])["Addresses"][0]["InstanceId"] == net["instance"]
    e = error(ec2.delete_network_interface, NetworkInterfaceId=eid)
    assert e == {"Code": "InvalidParameterValue", "Message": f"Network interface '{eid}' is currently in use."}
    assert error(ec2.attach_network_interface, NetworkInterfaceId=eid, InstanceId=net["instance"], DeviceIndex=2)["Code"] == "InvalidNetworkInterface.InUse"
    e = error(ec2.delete_subnet, SubnetId=sub)
    assert e["Code"] == "DependencyViolation"
    primary = ec2.describe_network_interfaces(Filters=[{"Name": "attachment.instance-id", "Values": [net["instance"]]}, {"Name": "attachment.device-index", "Values": ["0"]}])["NetworkInterfaces"][0]
    e = error(ec2.detach_network_interface, AttachmentId=primary["Attachment"]["AttachmentId"])
    assert e["Code"] == "OperationNotPermitted"
    assert error(ec2.detach_network_interface, AttachmentId="eni-attach-0123456789abcdef0")["Code"] == "InvalidAttachmentID.NotFound"
    ec2.detach_network_interface(AttachmentId=att)
    assert eni_of(ec2, eid)["Status"] == "available"
    assert "InstanceId" not in ec2.describe_addresses(AllocationIds=[alloc["AllocationId"]])["Addresses"][0]

    # Disassociation, then deletion releases every address.
    assert error(ec2.disassociate_address, AssociationId="eipassoc-0123456789abcdef0")["Code"] == "InvalidAssociationID.NotFound"
    ec2.disassociate_address(AssociationId=assoc)
    assert "AssociationId" not in ec2.describe_addresses(AllocationIds=[alloc["AllocationId"]])["Addresses"][0]
    ec2.release_address(AllocationId=alloc["AllocationId"])
    ec2.delete_network_interface(NetworkInterfaceId=eid)
    assert error(ec2.describe_network_interfaces, NetworkInterfaceIds=[eid])["Code"] == "InvalidNetworkInterfaceID.NotFound"
    assert ec2.describe_subnets(SubnetIds=[sub])["Subnets"][0]["AvailableIpAddressCount"] == before + 3


def test_an_address_goes_to_an_instance_and_moves_only_when_allowed(ec2, net):
    a = ec2.allocate_address(Domain="vpc")["AllocationId"]
    assoc = ec2.associate_address(AllocationId=a, InstanceId=net["instance"])["AssociationId"]
    [addr] = ec2.describe_addresses(Filters=[{"Name": "instance-id", "Values": [net["instance"]]}])["Addresses"]
    assert addr["AssociationId"] == assoc and addr["AllocationId"] == a
    b = ec2.allocate_address(Domain="vpc")["AllocationId"]
    assert error(ec2.associate_address, AllocationId=b, InstanceId=net["instance"])["Code"] == "Resource.AlreadyAssociated"
    moved = ec2.associate_address(AllocationId=b, InstanceId=net["instance"], AllowReassociation=True)["AssociationId"]
    assert "AssociationId" not in ec2.describe_addresses(AllocationIds=[a])["Addresses"][0]
    assert ec2.describe_addresses(AllocationIds=[b])["Addresses"][0]["AssociationId"] == moved
    assert error(ec2.release_address, AllocationId=b)["Code"] == "InvalidIPAddress.InUse"
    ec2.disassociate_address(AssociationId=moved)
    for x in (a, b):
        ec2.release_address(AllocationId=x)


def deploy(cumulo, template, name, *overrides):
    args = ["cloudformation", "deploy", "--stack-name", name, "--template-file", str(TEMPLATES / template), "--capabilities", "CAPABILITY_IAM"]
    if overrides:
        args += ["--parameter-overrides", *overrides]
    cfn = cumulo.client("cloudformation")
    try:
        cumulo.aws(*args)
    except AssertionError:
        events = cfn.describe_stack_events(StackName=name)["StackEvents"]
        raise AssertionError([(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason")) for e in events if e.get("ResourceStatusReason")])
    resources = {r["LogicalResourceId"]: r for r in cfn.describe_stack_resources(StackName=name)["StackResources"]}
    outputs = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=name)["Stacks"][0].get("Outputs", [])}
    return resources, outputs


def delete(cumulo, name):
    cfn = cumulo.client("cloudformation")
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})


@pytest.fixture(scope="module")
def key_name(ec2):
    name = f"k-{uuid.uuid4().hex[:8]}"
    ec2.create_key_pair(KeyName=name)
    return name


@pytest.mark.parametrize("ext", ["yaml", "json"])
def test_eip_with_association_deploys(cumulo, ec2, key_name, ext):
    default_subnet = ec2.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"][0]["SubnetId"]
    name = f"eipassoc-{ext}-{uuid.uuid4().hex[:6]}"
    res, out = deploy(cumulo, f"EC2__EIP_With_Association.{ext}", name, f"KeyName={key_name}", f"Subnets={default_subnet}")
    instance, assoc = res["EC2Instance"]["PhysicalResourceId"], res["IPAssoc"]["PhysicalResourceId"]
    assert assoc.startswith("eipassoc-") and out["InstanceId"] == instance
    [addr] = ec2.describe_addresses(Filters=[{"Name": "association-id", "Values": [assoc]}])["Addresses"]
    assert addr["InstanceId"] == instance and addr["PublicIp"] == out["InstanceIPAddress"]
    delete(cumulo, name)
    assert not ec2.describe_addresses(Filters=[{"Name": "public-ip", "Values": [addr["PublicIp"]]}])["Addresses"]


@pytest.mark.parametrize("ext", ["yaml", "json"])
def test_single_eni_with_multiple_eips_deploys(cumulo, ec2, net, ext):
    name = f"enieips-{ext}-{uuid.uuid4().hex[:6]}"
    res, _ = deploy(cumulo, f"EC2__SingleENIwithMultipleEIPs.{ext}", name, f"Subnet={net['subnet']}")
    eid = res["ENI"]["PhysicalResourceId"]
    eni = eni_of(ec2, eid)
    secondaries = [a for a in eni["PrivateIpAddresses"] if not a["Primary"]]
    assert len(secondaries) == 2 and eni["SourceDestCheck"] is True
    for logical, ip in (("Association1", secondaries[0]), ("Association2", secondaries[1])):
        assoc = res[logical]["PhysicalResourceId"]
        assert ip["Association"]["AssociationId"] == assoc
        [addr] = ec2.describe_addresses(Filters=[{"Name": "association-id", "Values": [assoc]}])["Addresses"]
        assert (addr["NetworkInterfaceId"], addr["PrivateIpAddress"]) == (eid, ip["PrivateIpAddress"])
    publics = [res[e]["PhysicalResourceId"] for e in ("EIP1", "EIP2")]
    delete(cumulo, name)
    assert error(ec2.describe_network_interfaces, NetworkInterfaceIds=[eid])["Code"] == "InvalidNetworkInterfaceID.NotFound"
    assert not ec2.describe_addresses(Filters=[{"Name": "public-ip", "Values": publics}])["Addresses"]


@pytest.mark.parametrize("ext", ["yaml", "json"])
def test_instance_with_multiple_static_addresses_deploys(cumulo, ec2, net, key_name, ext):
    name = f"static-{ext}-{uuid.uuid4().hex[:6]}"
    octet = 60 if ext == "yaml" else 70
    res, out = deploy(
        cumulo, f"VPC__VPC_EC2_Instance_With_Multiple_Static_IPAddresses.{ext}", name,
        f"KeyName={key_name}", f"VpcId={net['vpc']}", f"SubnetId={net['subnet']}",
        f"PrimaryIPAddress=10.40.1.{octet}", f"SecondaryIPAddress=10.40.1.{octet + 1}",
    )
    eid, instance = res["Eth0"]["PhysicalResourceId"], res["EC2Instance"]["PhysicalResourceId"]
    eni = eni_of(ec2, eid)
    assert [(a["PrivateIpAddress"], a["Primary"]) for a in eni["PrivateIpAddresses"]] == [(f"10.40.1.{octet}", True), (f"10.40.1.{octet + 1}", False)]
    assert eni["Attachment"]["InstanceId"] == instance and eni["Attachment"]["DeviceIndex"] == 0
    assert {t["Key"]: t["Value"] for t in eni["TagSet"]}["Interface"] == "eth0"
    assert [g["GroupId"] for g in eni["Groups"]] == [res["SSHSecurityGroup"]["PhysicalResourceId"]]
    [i] = ec2.describe_instances(InstanceIds=[instance])["Reservations"][0]["Instances"]
    assert i["PrivateIpAddress"] == f"10.40.1.{octet}"
    assoc = res["EIPAssoc1"]["PhysicalResourceId"]
    [addr] = ec2.describe_addresses(Filters=[{"Name": "association-id", "Values": [assoc]}])["Addresses"]
    assert (addr["NetworkInterfaceId"], addr["PrivateIpAddress"], addr["InstanceId"]) == (eid, f"10.40.1.{octet}", instance)
    assert out["PrimaryPrivateIPAddress"] == f"IP address 10.40.1.{octet} on subnet {net['subnet']}"
    assert out["SecondaryPrivateIPAddresses"] == f"IP address 10.40.1.{octet + 1} on subnet {net['subnet']}"
    delete(cumulo, name)
    assert error(ec2.describe_network_interfaces, NetworkInterfaceIds=[eid])["Code"] == "InvalidNetworkInterfaceID.NotFound"
    assert ec2.describe_instances(InstanceIds=[instance])["Reservations"][0]["Instances"][0]["State"]["Name"] == "terminated"
    assert not ec2.describe_addresses(Filters=[{"Name": "association-id", "Values": [assoc]}])["Addresses"]


def test_volumes_are_records_that_attach_and_detach(ec2, net):
    zone = "us-east-1a"
    v = ec2.create_volume(AvailabilityZone=zone, Size=8, VolumeType="gp3", TagSpecifications=[{"ResourceType": "volume", "Tags": [{"Key": "k", "Value": "v"}]}])
    vid = v["VolumeId"]
    assert vid.startswith("vol-") and v["State"] == "creating" and (v["Iops"], v["Throughput"]) == (3000, 125)
    ec2.get_waiter("volume_available").wait(VolumeIds=[vid], WaiterConfig={"Delay": 1, "MaxAttempts": 5})

    # Bad input is refused in AWS's words and makes nothing.
    count = len(ec2.describe_volumes()["Volumes"])
    assert error(ec2.create_volume, AvailabilityZone=zone, Size=8, VolumeType="io1")["Code"] == "MissingParameter"
    assert error(ec2.create_volume, AvailabilityZone=zone, Size=5, VolumeType="st1")["Code"] == "InvalidParameterValue"
    assert error(ec2.create_volume, AvailabilityZone=zone, Size=5, VolumeType="gp2", Iops=300)["Code"] == "InvalidParameterCombination"
    assert error(ec2.create_volume, AvailabilityZone="us-east-1z", Size=5)["Code"] == "InvalidParameterValue"
    assert len(ec2.describe_volumes()["Volumes"]) == count
    assert error(ec2.describe_volumes, VolumeIds=["vol-0123456789abcdef0"]) == {"Code": "InvalidVolume.NotFound", "Message": "The volume 'vol-0123456789abcdef0' does not exist."}
    assert error(ec2.describe_volumes, VolumeIds=["nope"])["Code"] == "InvalidVolumeID.Malformed"

    # Attached: in use, not deletable; the device is the instance's.
    a = ec2.attach_volume(VolumeId=vid, InstanceId=net["instance"], Device="/dev/sdf")
    assert (a["State"], a["Device"], a["InstanceId"]) == ("attaching", "/dev/sdf", net["instance"])
    [got] = ec2.describe_volumes(Filters=[{"Name": "attachment.instance-id", "Values": [net["instance"]]}])["Volumes"]
    assert got["VolumeId"] == vid and got["State"] == "in-use" and got["Attachments"][0]["State"] == "attached"
    assert error(ec2.delete_volume, VolumeId=vid) == {"Code": "VolumeInUse", "Message": f"Volume {vid} is currently attached to {net['instance']}"}
    assert error(ec2.attach_volume, VolumeId=vid, InstanceId=net["instance"], Device="/dev/sdg")["Code"] == "VolumeInUse"
    other = ec2.create_volume(AvailabilityZone=zone, Size=1)["VolumeId"]
    assert error(ec2.attach_volume, VolumeId=other, InstanceId=net["instance"], Device="/dev/sdf")["Code"] == "InvalidParameterValue"
    far = ec2.create_volume(AvailabilityZone="us-east-1b", Size=1)["VolumeId"]
    assert error(ec2.attach_volume, VolumeId=far, InstanceId=net["instance"], Device="/dev/sdh")["Code"] == "InvalidVolume.ZoneMismatch"
    ec2.get_waiter("volume_in_use").wait(VolumeIds=[vid], WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    ec2.detach_volume(VolumeId=vid)
    assert ec2.describe_volumes(VolumeIds=[vid])["Volumes"][0]["State"] == "available"
    assert error(ec2.detach_volume, VolumeId=vid)["Code"] == "IncorrectState"

    # Modified at once; auto-enable-IO is stored.
    ec2.modify_volume(VolumeId=vid, Size=20)
    assert ec2.describe_volumes(VolumeIds=[vid])["Volumes"][0]["Size"] == 20
    assert error(ec2.modify_volume, VolumeId=vid, Size=10)["Code"] == "InvalidParameterValue"
    ec2.modify_volume_attribute(VolumeId=vid, AutoEnableIO={"Value": True})
    assert ec2.describe_volume_attribute(VolumeId=vid, Attribute="autoEnableIO")["AutoEnableIO"]["Value"] is True
    for x in (vid, other, far):
        ec2.delete_volume(VolumeId=x)
    ec2.get_waiter("volume_deleted").wait(VolumeIds=[vid], WaiterConfig={"Delay": 1, "MaxAttempts": 5})


VOLUME_STACK = """
Parameters:
  Image: {Type: 'AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>', Default: /aws/service/ami-amazon-linux-latest/amzn2-ami-hvm-x86_64-gp2}
  Size: {Type: Number, Default: 5}
Resources:
  Server: {Type: AWS::EC2::Instance, Properties: {ImageId: !Ref Image, InstanceType: t3.micro, AvailabilityZone: us-east-1a}}
  Disk:
    Type: AWS::EC2::Volume
    Properties: {AvailabilityZone: us-east-1a, Size: !Ref Size, VolumeType: gp3, Tags: [{Key: Name, Value: data}]}
  Mount: {Type: AWS::EC2::VolumeAttachment, Properties: {VolumeId: !Ref Disk, InstanceId: !Ref Server, Device: /dev/sdf}}
Outputs:
  DiskId: {Value: !GetAtt Disk.VolumeId}
"""


def test_a_volume_stack_deploys_updates_in_place_and_deletes(cumulo, ec2, tmp_path):
    cfn = cumulo.client("cloudformation")
    name = f"vol-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "v.yaml"
    path.write_text(VOLUME_STACK)
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path))
    res = {r["LogicalResourceId"]: r for r in cfn.describe_stack_resources(StackName=name)["StackResources"]}
    vid, server = res["Disk"]["PhysicalResourceId"], res["Server"]["PhysicalResourceId"]
    assert res["Disk"]["ResourceStatusReason"] == "cumulo: no disk exists; the volume is a record"
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]}
    assert out["DiskId"] == vid and res["Mount"]["PhysicalResourceId"] == f"{vid}|{server}"
    [v] = ec2.describe_volumes(VolumeIds=[vid])["Volumes"]
    assert (v["State"], v["Size"], v["Attachments"][0]["InstanceId"], v["Attachments"][0]["Device"]) == ("in-use", 5, server, "/dev/sdf")
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path), "--parameter-overrides", "Size=12")
    assert cfn.describe_stack_resource(StackName=name, LogicalResourceId="Disk")["StackResourceDetail"]["PhysicalResourceId"] == vid
    assert ec2.describe_volumes(VolumeIds=[vid])["Volumes"][0]["Size"] == 12
    delete(cumulo, name)
    assert error(ec2.describe_volumes, VolumeIds=[vid])["Code"] == "InvalidVolume.NotFound"


def test_config_template_makes_a_real_volume(cumulo, ec2, tmp_path):
    """Config__Config's outputs read attributes of AWS Config rules, which cumulo does not emulate
    (they are stubs with no attributes): the template is deployed without its Outputs, so its
    volume is made and checked."""
    template = json.loads((TEMPLATES / "Config__Config.json").read_text())
    template.pop("Outputs")
    path = tmp_path / "config.json"
    path.write_text(json.dumps(template))
    name = f"config-{uuid.uuid4().hex[:6]}"
    res, _ = deploy(cumulo, path, name, "Ec2VolumeAutoEnableIO=true")
    vid = res["Ec2Volume"]["PhysicalResourceId"]
    [v] = ec2.describe_volumes(VolumeIds=[vid])["Volumes"]
    assert v["Size"] == 5 and v["State"] == "available" and v["AvailabilityZone"] == "us-east-1a"
    assert {t["Key"]: t["Value"] for t in v["Tags"]}["CostCenter"] == "Ec2VolumeTagValue"
    assert ec2.describe_volume_attribute(VolumeId=vid, Attribute="autoEnableIO")["AutoEnableIO"]["Value"] is True
    delete(cumulo, name)
    assert error(ec2.describe_volumes, VolumeIds=[vid])["Code"] == "InvalidVolume.NotFound"


def test_endpoint_services_and_their_permissions(ec2, cumulo, net):
    elb = cumulo.client("elbv2")
    nlb = elb.create_load_balancer(Name=f"n-{uuid.uuid4().hex[:6]}", Type="network", Scheme="internal", Subnets=[net["subnet"]])["LoadBalancers"][0]["LoadBalancerArn"]
    alb = nlb.replace("/net/", "/app/")
    assert error(ec2.create_vpc_endpoint_service_configuration, NetworkLoadBalancerArns=[alb])["Code"] == "InvalidParameter"
    assert error(ec2.create_vpc_endpoint_service_configuration)["Code"] == "InvalidParameter"
    s = ec2.create_vpc_endpoint_service_configuration(NetworkLoadBalancerArns=[nlb], AcceptanceRequired=True)["ServiceConfiguration"]
    sid = s["ServiceId"]
    assert sid.startswith("vpce-svc-") and s["ServiceName"] == f"com.amazonaws.vpce.us-east-1.{sid}"
    assert (s["ServiceState"], s["ServiceType"], s["AcceptanceRequired"]) == ("Available", [{"ServiceType": "Interface"}], True)
    assert s["BaseEndpointDnsNames"] == [f"{sid}.us-east-1.vpce.amazonaws.com"]
    assert error(ec2.create_vpc_endpoint_service_configuration, NetworkLoadBalancerArns=[nlb])["Code"] == "InvalidParameter"
    [got] = ec2.describe_vpc_endpoint_service_configurations(Filters=[{"Name": "service-name", "Values": [s["ServiceName"]]}])["ServiceConfigurations"]
    assert got["NetworkLoadBalancerArns"] == [nlb]
    e = error(ec2.describe_vpc_endpoint_service_configurations, ServiceIds=["vpce-svc-0123456789abcdef0"])
    assert e == {"Code": "InvalidVpcEndpointServiceId.NotFound", "Message": "The Vpc Endpoint Service Id 'vpce-svc-0123456789abcdef0' does not exist"}

    # Permissions: every principal checked before any is added.
    assert error(ec2.modify_vpc_endpoint_service_permissions, ServiceId=sid, AddAllowedPrincipals=["appflow.amazonaws.com", "bob"])["Code"] == "InvalidPrincipal"
    assert ec2.describe_vpc_endpoint_service_permissions(ServiceId=sid)["AllowedPrincipals"] == []
    added = ec2.modify_vpc_endpoint_service_permissions(ServiceId=sid, AddAllowedPrincipals=["appflow.amazonaws.com", "arn:aws:iam::123456789012:root"])
    assert added["ReturnValue"] and [p["PrincipalType"] for p in added["AddedPrincipals"]] == ["Service", "Account"]
    assert all(p["ServicePermissionId"].startswith("vpce-svc-perm-") for p in added["AddedPrincipals"])
    only = ec2.describe_vpc_endpoint_service_permissions(ServiceId=sid, Filters=[{"Name": "principal-type", "Values": ["Account"]}])["AllowedPrincipals"]
    assert [p["Principal"] for p in only] == ["arn:aws:iam::123456789012:root"]
    ec2.modify_vpc_endpoint_service_permissions(ServiceId=sid, RemoveAllowedPrincipals=["appflow.amazonaws.com"])
    assert len(ec2.describe_vpc_endpoint_service_permissions(ServiceId=sid)["AllowedPrincipals"]) == 1

    ec2.modify_vpc_endpoint_service_configuration(ServiceId=sid, PrivateDnsName="sap.example.com", AcceptanceRequired=False)
    [got] = ec2.describe_vpc_endpoint_service_configurations(ServiceIds=[sid])["ServiceConfigurations"]
    assert got["PrivateDnsName"] == "sap.example.com" and got["PrivateDnsNameConfiguration"]["Type"] == "TXT" and got["AcceptanceRequired"] is False

    out = ec2.delete_vpc_endpoint_service_configurations(ServiceIds=[sid, "vpce-svc-0123456789abcdef0"])
    assert [u["ResourceId"] for u in out["Unsuccessful"]] == ["vpce-svc-0123456789abcdef0"]
    assert out["Unsuccessful"][0]["Error"]["Code"] == "InvalidVpcEndpointServiceId.NotFound"
    assert error(ec2.describe_vpc_endpoint_service_configurations, ServiceIds=[sid])["Code"] == "InvalidVpcEndpointServiceId.NotFound"
    elb.delete_load_balancer(LoadBalancerArn=nlb)


def validate_when_requested(cumulo, domain, stop):
    """What the template's user does while the stack waits: publish the certificate's validation
    CNAME in a public hosted zone of the domain."""
    acm, r53 = cumulo.client("acm"), cumulo.client("route53")
    zone = r53.create_hosted_zone(Name=domain, CallerReference=uuid.uuid4().hex)["HostedZone"]["Id"]
    while not stop.is_set():
        for c in acm.list_certificates(CertificateStatuses=["PENDING_VALIDATION"])["CertificateSummaryList"]:
            if c["DomainName"] != domain:
                continue
            options = acm.describe_certificate(CertificateArn=c["CertificateArn"])["Certificate"]["DomainValidationOptions"]
            record = options[0].get("ResourceRecord")
            if record:
                r53.change_resource_record_sets(HostedZoneId=zone, ChangeBatch={"Changes": [{"Action": "UPSERT", "ResourceRecordSet": {
                    "Name": record["Name"], "Type": record["Type"], "TTL": 300, "ResourceRecords": [{"Value": record["Value"]}]}}]})
                return
        time.sleep(0.5)


def test_sap_private_link_without_hosted_zone_deploys(cumulo, ec2, net, tmp_path):
    """The template's Lambda function asks for a VpcConfig, which cumulo's Lambda refuses by name
    (functions run on the host): it is deployed without that one property."""
    template = json.loads((TEMPLATES / "AWSSupplyChain__SapPrivateLink__SapPrivateLinkNoHostedZone.json").read_text())
    template["Resources"]["ASCPrivateLinkLambdaFunction"]["Properties"].pop("VpcConfig")
    path = tmp_path / "sap.json"
    path.write_text(json.dumps(template))
    name = f"sap-{uuid.uuid4().hex[:6]}"
    domain = f"sap-{uuid.uuid4().hex[:6]}.example.com"
    stop = threading.Event()
    validator = threading.Thread(target=validate_when_requested, args=(cumulo, domain, stop))
    validator.start()
    try:
        res, out = deploy(
            cumulo, path, name,
            f"DomainName={domain}", f"VpcId={net['vpc']}", f"Subnets={net['subnet']}",
            f"SecurityGroups={net['group']}", "IP=10.40.1.200",
        )
    finally:
        stop.set()
        validator.join()
    sid, nlb = res["ASCPrivateLinkVPCES"]["PhysicalResourceId"], res["ASCPrivateLinkNLB"]["PhysicalResourceId"]
    [s] = ec2.describe_vpc_endpoint_service_configurations(ServiceIds=[sid])["ServiceConfigurations"]
    assert s["NetworkLoadBalancerArns"] == [nlb] and s["AcceptanceRequired"] is False
    [p] = ec2.describe_vpc_endpoint_service_permissions(ServiceId=sid)["AllowedPrincipals"]
    assert (p["Principal"], p["PrincipalType"]) == ("appflow.amazonaws.com", "Service")
    assert out["VPCEndpointServiceURL"].endswith(f"EndpointServiceId={sid}")
    delete(cumulo, name)
    assert error(ec2.describe_vpc_endpoint_service_configurations, ServiceIds=[sid])["Code"] == "InvalidVpcEndpointServiceId.NotFound"


INTERFACE_STACK = """
Parameters:
  Image: {Type: 'AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>', Default: /aws/service/ami-amazon-linux-latest/amzn2-ami-hvm-x86_64-gp2}
  Subnet: {Type: String}
  Count: {Type: Number, Default: 1}
  Text: {Type: String, Default: first}
Resources:
  Server: {Type: AWS::EC2::Instance, Properties: {ImageId: !Ref Image, InstanceType: t3.micro, SubnetId: !Ref Subnet}}
  Nic: {Type: AWS::EC2::NetworkInterface, Properties: {SubnetId: !Ref Subnet, Description: !Ref Text, SecondaryPrivateIpAddressCount: !Ref Count}}
  Plug: {Type: AWS::EC2::NetworkInterfaceAttachment, Properties: {NetworkInterfaceId: !Ref Nic, InstanceId: !Ref Server, DeviceIndex: 1}}
Outputs:
  Primary: {Value: !GetAtt Nic.PrimaryPrivateIpAddress}
  Secondaries: {Value: !Join [',', !GetAtt Nic.SecondaryPrivateIpAddresses]}
  Attachment: {Value: !GetAtt Plug.AttachmentId}
"""


def test_an_interface_stack_updates_in_place_and_detaches_on_delete(cumulo, ec2, net, tmp_path):
    cfn = cumulo.client("cloudformation")
    name = f"nic-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "n.yaml"
    path.write_text(INTERFACE_STACK)
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path), "--parameter-overrides", f"Subnet={net['subnet']}")
    res = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in cfn.describe_stack_resources(StackName=name)["StackResources"]}
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]}
    eni = eni_of(ec2, res["Nic"])
    assert eni["PrivateIpAddress"] == out["Primary"] and out["Secondaries"] == eni["PrivateIpAddresses"][1]["PrivateIpAddress"]
    assert eni["Attachment"]["AttachmentId"] == out["Attachment"] == res["Plug"] and eni["Attachment"]["InstanceId"] == res["Server"]
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path), "--parameter-overrides", f"Subnet={net['subnet']}", "Count=3", "Text=second")
    eni2 = eni_of(ec2, res["Nic"])
    assert eni2["Description"] == "second" and len(eni2["PrivateIpAddresses"]) == 4
    out2 = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]}
    assert out2["Secondaries"].split(",") == [a["PrivateIpAddress"] for a in eni2["PrivateIpAddresses"][1:]]
    delete(cumulo, name)
    assert error(ec2.describe_network_interfaces, NetworkInterfaceIds=[res["Nic"]])["Code"] == "InvalidNetworkInterfaceID.NotFound"
