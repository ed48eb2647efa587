"""Classic Elastic Load Balancing (2012-06-01) through its own API (boto3, the AWS CLI) and through
CloudFormation: load balancers on the default VPC's subnets with their network interfaces in EC2,
listeners, health checks, instances, attributes, policies, AWS's errors, restart survival, and a
stack that deploys, updates and deletes an AWS::ElasticLoadBalancing::LoadBalancer."""
import json
import uuid

import pytest
from botocore.exceptions import ClientError

from conftest import CumuloServer

AMI = "ami-0a3c3a20c09d6f377"


@pytest.fixture(scope="module")
def ec2(cumulo):
    return cumulo.client("ec2")


@pytest.fixture(scope="module")
def elb(cumulo):
    return cumulo.client("elb")


@pytest.fixture(scope="module")
def network(ec2):
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    subnets = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"]
    subnets = sorted(subnets, key=lambda s: s["AvailabilityZone"])
    return vpc, [s["SubnetId"] for s in subnets[:3]], [s["AvailabilityZone"] for s in subnets[:3]]


def error(call, **kw):
    with pytest.raises(ClientError) as e:
        call(**kw)
    return e.value.response["Error"]


def interfaces(ec2, name):
    return ec2.describe_network_interfaces(Filters=[{"Name": "description", "Values": [f"ELB {name}"]}])["NetworkInterfaces"]


def test_load_balancer_listeners_health_check_instances_and_attributes(elb, ec2, network):
    vpc, subnets, zones = network
    name = f"web-{uuid.uuid4().hex[:8]}"
    dns = elb.create_load_balancer(
        LoadBalancerName=name, Subnets=subnets[:2],
        Listeners=[{"Protocol": "http", "LoadBalancerPort": 80, "InstancePort": 8080}],
        Tags=[{"Key": "team", "Value": "web"}])["DNSName"]
    assert dns.startswith(f"{name}-") and dns.endswith(".us-east-1.elb.amazonaws.com")
    [lb] = elb.describe_load_balancers(LoadBalancerNames=[name])["LoadBalancerDescriptions"]
    assert lb["DNSName"] == dns and lb["CanonicalHostedZoneName"] == dns
    assert lb["CanonicalHostedZoneNameID"] == "Z35SXDOTRQ7X7K" and lb["Scheme"] == "internet-facing"
    assert lb["VPCId"] == vpc and lb["Subnets"] == subnets[:2] and lb["AvailabilityZones"] == zones[:2]
    assert lb["ListenerDescriptions"] == [{"Listener": {"Protocol": "HTTP", "LoadBalancerPort": 80, "InstanceProtocol": "HTTP", "InstancePort": 8080}, "PolicyNames": []}]
    assert lb["HealthCheck"] == {"Target": "TCP:8080", "Interval": 30, "Timeout": 5, "UnhealthyThreshold": 2, "HealthyThreshold": 10}
    default_sg = ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [vpc]}, {"Name": "group-name", "Values": ["default"]}])["SecurityGroups"][0]
    assert lb["SecurityGroups"] == [default_sg["GroupId"]]
    assert lb["SourceSecurityGroup"] == {"OwnerAlias": "000000000000", "GroupName": "default"}
    # One requester-managed network interface per subnet, as on AWS.
    enis = interfaces(ec2, name)
    assert sorted(e["SubnetId"] for e in enis) == sorted(subnets[:2])
    assert all(e["RequesterId"] == "amazon-elb" for e in enis)

    # The same request again is the same load balancer; a different one is refused.
    assert elb.create_load_balancer(LoadBalancerName=name, Subnets=subnets[:2],
                                    Listeners=[{"Protocol": "HTTP", "LoadBalancerPort": 80, "InstancePort": 8080}])["DNSName"] == dns
    assert error(elb.create_load_balancer, LoadBalancerName=name, Subnets=subnets[:2],
                 Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 22, "InstancePort": 22}])["Code"] == "DuplicateLoadBalancerName"

    elb.create_load_balancer_listeners(LoadBalancerName=name, Listeners=[
        {"Protocol": "HTTPS", "LoadBalancerPort": 443, "InstancePort": 8080, "SSLCertificateId": "arn:aws:iam::000000000000:server-certificate/web"}])
    e = error(elb.create_load_balancer_listeners, LoadBalancerName=name, Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 80, "InstancePort": 9000}])
    assert e["Code"] == "DuplicateListener"
    [lb] = elb.describe_load_balancers(LoadBalancerNames=[name])["LoadBalancerDescriptions"]
    https = [d for d in lb["ListenerDescriptions"] if d["Listener"]["LoadBalancerPort"] == 443][0]
    assert https["PolicyNames"] == ["ELBSecurityPolicy-2016-08"]
    assert lb["Policies"]["OtherPolicies"] == ["ELBSecurityPolicy-2016-08"]
    elb.delete_load_balancer_listeners(LoadBalancerName=name, LoadBalancerPorts=[443])

    check = {"Target": "HTTP:8080/health", "Interval": 10, "Timeout": 5, "UnhealthyThreshold": 3, "HealthyThreshold": 2}
    assert elb.configure_health_check(LoadBalancerName=name, HealthCheck=check)["HealthCheck"] == check
    e = error(elb.configure_health_check, LoadBalancerName=name, HealthCheck={**check, "Target": "HTTP:8080"})
    assert e["Code"] == "ValidationError"

    # Instances EC2 has register; an unknown one is InvalidInstance.
    ids = [i["InstanceId"] for i in ec2.run_instances(ImageId=AMI, InstanceType="t3.micro", MinCount=2, MaxCount=2, SubnetId=subnets[0])["Instances"]]
    out = elb.register_instances_with_load_balancer(LoadBalancerName=name, Instances=[{"InstanceId": i} for i in ids])
    assert [i["InstanceId"] for i in out["Instances"]] == ids
    e = error(elb.register_instances_with_load_balancer, LoadBalancerName=name, Instances=[{"InstanceId": "i-0123456789abcdef0"}])
    assert (e["Code"], e["Message"]) == ("InvalidInstance", "The requested instance(s) are not valid: i-0123456789abcdef0")
    elb.get_waiter("instance_in_service").wait(LoadBalancerName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 3})
    states = elb.describe_instance_health(LoadBalancerName=name)["InstanceStates"]
    assert {s["InstanceId"]: s["State"] for s in states} == {i: "InService" for i in ids}
    ec2.terminate_instances(InstanceIds=[ids[1]])
    [state] = elb.describe_instance_health(LoadBalancerName=name, Instances=[{"InstanceId": ids[1]}])["InstanceStates"]
    assert state["State"] == "OutOfService" and state["ReasonCode"] == "Instance"
    elb.deregister_instances_from_load_balancer(LoadBalancerName=name, Instances=[{"InstanceId": ids[1]}])
    elb.get_waiter("instance_deregistered").wait(LoadBalancerName=name, Instances=[{"InstanceId": ids[1]}], WaiterConfig={"Delay": 1, "MaxAttempts": 3})
    e = error(elb.describe_instance_health, LoadBalancerName=name, Instances=[{"InstanceId": ids[1]}])
    assert (e["Code"], e["Message"]) == ("InvalidInstance", f"Could not find EC2 instance {ids[1]}.")

    attrs = elb.describe_load_balancer_attributes(LoadBalancerName=name)["LoadBalancerAttributes"]
    assert attrs["CrossZoneLoadBalancing"] == {"Enabled": False} and attrs["ConnectionSettings"] == {"IdleTimeout": 60}
    assert attrs["ConnectionDraining"] == {"Enabled": False, "Timeout": 300} and attrs["AccessLog"] == {"Enabled": False}
    elb.modify_load_balancer_attributes(LoadBalancerName=name, LoadBalancerAttributes={
        "CrossZoneLoadBalancing": {"Enabled": True}, "ConnectionDraining": {"Enabled": True, "Timeout": 60},
        "ConnectionSettings": {"IdleTimeout": 120},
        "AccessLog": {"Enabled": True, "S3BucketName": "logs", "EmitInterval": 5, "S3BucketPrefix": "elb"}})
    attrs = elb.describe_load_balancer_attributes(LoadBalancerName=name)["LoadBalancerAttributes"]
    assert attrs["CrossZoneLoadBalancing"] == {"Enabled": True} and attrs["ConnectionSettings"] == {"IdleTimeout": 120}
    assert attrs["AccessLog"] == {"Enabled": True, "S3BucketName": "logs", "EmitInterval": 5, "S3BucketPrefix": "elb"}

    # Subnets attach and detach, with their interfaces.
    assert elb.attach_load_balancer_to_subnets(LoadBalancerName=name, Subnets=[subnets[2]])["Subnets"] == subnets
    assert len(interfaces(ec2, name)) == 3
    assert elb.detach_load_balancer_from_subnets(LoadBalancerName=name, Subnets=[subnets[0]])["Subnets"] == subnets[1:]
    assert sorted(e["SubnetId"] for e in interfaces(ec2, name)) == sorted(subnets[1:])

    group = ec2.create_security_group(GroupName=f"lb-{name}", Description="lb", VpcId=vpc)["GroupId"]
    assert elb.apply_security_groups_to_load_balancer(LoadBalancerName=name, SecurityGroups=[group])["SecurityGroups"] == [group]
    [lb] = elb.describe_load_balancers(LoadBalancerNames=[name])["LoadBalancerDescriptions"]
    assert lb["SourceSecurityGroup"]["GroupName"] == f"lb-{name}"

    elb.add_tags(LoadBalancerNames=[name], Tags=[{"Key": "env", "Value": "test"}])
    elb.remove_tags(LoadBalancerNames=[name], Tags=[{"Key": "team"}])
    assert elb.describe_tags(LoadBalancerNames=[name])["TagDescriptions"] == [{"LoadBalancerName": name, "Tags": [{"Key": "env", "Value": "test"}]}]

    elb.delete_load_balancer(LoadBalancerName=name)
    elb.delete_load_balancer(LoadBalancerName=name)  # gone already: still no error, as AWS documents
    e = error(elb.describe_load_balancers, LoadBalancerNames=[name])
    assert (e["Code"], e["Message"]) == ("LoadBalancerNotFound", f"There is no ACTIVE Load Balancer named '{name}'")
    assert interfaces(ec2, name) == []


def test_policies_and_predefined_security_policies(elb, network):
    _, subnets, _ = network
    name = f"pol-{uuid.uuid4().hex[:8]}"
    elb.create_load_balancer(LoadBalancerName=name, Subnets=subnets[:1], Scheme="internal", Listeners=[
        {"Protocol": "HTTP", "LoadBalancerPort": 80, "InstancePort": 80},
        {"Protocol": "SSL", "LoadBalancerPort": 443, "InstancePort": 443, "InstanceProtocol": "TCP", "SSLCertificateId": "arn:aws:acm:us-east-1:000000000000:certificate/x"}])
    [lb] = elb.describe_load_balancers(LoadBalancerNames=[name])["LoadBalancerDescriptions"]
    assert lb["DNSName"].startswith(f"internal-{name}-") and lb["Scheme"] == "internal"
    predefined = elb.describe_load_balancer_policies()["PolicyDescriptions"]
    names = [p["PolicyName"] for p in predefined]
    assert "ELBSecurityPolicy-2016-08" in names and "ELBSecurityPolicy-TLS-1-2-2017-01" in names
    [tls12] = elb.describe_load_balancer_policies(PolicyNames=["ELBSecurityPolicy-TLS-1-2-2017-01"])["PolicyDescriptions"]
    attrs = {a["AttributeName"]: a["AttributeValue"] for a in tls12["PolicyAttributeDescriptions"]}
    assert attrs["Protocol-TLSv1.2"] == "true" and attrs["Protocol-TLSv1"] == "false"

    elb.create_load_balancer_policy(LoadBalancerName=name, PolicyName="tls", PolicyTypeName="SSLNegotiationPolicyType",
                                    PolicyAttributes=[{"AttributeName": "Reference-Security-Policy", "AttributeValue": "ELBSecurityPolicy-TLS-1-2-2017-01"}])
    e = error(elb.create_load_balancer_policy, LoadBalancerName=name, PolicyName="tls", PolicyTypeName="SSLNegotiationPolicyType")
    assert e["Code"] == "DuplicatePolicyName"
    assert error(elb.create_load_balancer_policy, LoadBalancerName=name, PolicyName="x", PolicyTypeName="NoSuchType")["Code"] == "PolicyTypeNotFound"
    elb.create_lb_cookie_stickiness_policy(LoadBalancerName=name, PolicyName="sticky", CookieExpirationPeriod=60)
    elb.set_load_balancer_policies_of_listener(LoadBalancerName=name, LoadBalancerPort=443, PolicyNames=["tls"])
    elb.set_load_balancer_policies_of_listener(LoadBalancerName=name, LoadBalancerPort=80, PolicyNames=["sticky"])
    assert error(elb.set_load_balancer_policies_of_listener, LoadBalancerName=name, LoadBalancerPort=81, PolicyNames=[])["Code"] == "ListenerNotFound"
    assert error(elb.set_load_balancer_policies_of_listener, LoadBalancerName=name, LoadBalancerPort=80, PolicyNames=["nope"])["Code"] == "PolicyNotFound"
    [lb] = elb.describe_load_balancers(LoadBalancerNames=[name])["LoadBalancerDescriptions"]
    assert {d["Listener"]["LoadBalancerPort"]: d["PolicyNames"] for d in lb["ListenerDescriptions"]} == {80: ["sticky"], 443: ["tls"]}
    assert lb["Policies"]["LBCookieStickinessPolicies"] == [{"PolicyName": "sticky", "CookieExpirationPeriod": 60}]
    [tls] = elb.describe_load_balancer_policies(LoadBalancerName=name, PolicyNames=["tls"])["PolicyDescriptions"]
    copied = {a["AttributeName"]: a["AttributeValue"] for a in tls["PolicyAttributeDescriptions"]}
    assert copied["Reference-Security-Policy"] == "ELBSecurityPolicy-TLS-1-2-2017-01" and copied["Protocol-TLSv1"] == "false"
    e = error(elb.delete_load_balancer_policy, LoadBalancerName=name, PolicyName="tls")
    assert e["Code"] == "InvalidConfigurationRequest"
    elb.delete_load_balancer(LoadBalancerName=name)


def test_paging_and_bad_input_change_nothing(elb, ec2, network, cumulo):
    _, subnets, _ = network
    prefix = f"pg{uuid.uuid4().hex[:6]}"
    names = [f"{prefix}-{i}" for i in range(3)]
    for n in names:
        elb.create_load_balancer(LoadBalancerName=n, Subnets=subnets[:1], Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 22, "InstancePort": 22}])
    seen = []
    for page in elb.get_paginator("describe_load_balancers").paginate(PaginationConfig={"PageSize": 2}):
        assert len(page["LoadBalancerDescriptions"]) <= 2
        seen += [lb["LoadBalancerName"] for lb in page["LoadBalancerDescriptions"]]
    assert all(n in seen for n in names) and len(seen) == len(set(seen))
    before = elb.describe_load_balancers()["LoadBalancerDescriptions"]
    enis_before = len(ec2.describe_network_interfaces()["NetworkInterfaces"])
    bad = [
        (dict(LoadBalancerName="-bad", Subnets=subnets[:1], Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 1, "InstancePort": 1}]), "ValidationError"),
        (dict(LoadBalancerName="ok-1", Subnets=["subnet-00000000"], Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 1, "InstancePort": 1}]), "SubnetNotFound"),
        (dict(LoadBalancerName="ok-2", Subnets=subnets[:1], SecurityGroups=["sg-00000000"], Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 1, "InstancePort": 1}]), "InvalidSecurityGroup"),
        (dict(LoadBalancerName="ok-3", Subnets=subnets[:1], Listeners=[{"Protocol": "UDP", "LoadBalancerPort": 1, "InstancePort": 1}]), "UnsupportedProtocol"),
        (dict(LoadBalancerName="ok-4", Subnets=subnets[:1], Listeners=[{"Protocol": "HTTPS", "LoadBalancerPort": 443, "InstancePort": 1}]), "ValidationError"),
        (dict(LoadBalancerName="ok-5", Subnets=subnets[:1], Scheme="public", Listeners=[{"Protocol": "TCP", "LoadBalancerPort": 1, "InstancePort": 1}]), "InvalidScheme"),
    ]
    for kw, code in bad:
        assert error(elb.create_load_balancer, **kw)["Code"] == code, kw
    unchecked = cumulo.client("elb", parameter_validation=False)
    e = error(unchecked.modify_load_balancer_attributes, LoadBalancerName=names[0], LoadBalancerAttributes={"ConnectionSettings": {"IdleTimeout": 0}})
    assert e["Code"] == "ValidationError"
    e = error(unchecked.describe_load_balancers, PageSize=401)
    assert e["Code"] == "ValidationError"
    assert elb.describe_load_balancers()["LoadBalancerDescriptions"] == before
    assert elb.describe_load_balancer_attributes(LoadBalancerName=names[0])["LoadBalancerAttributes"]["ConnectionSettings"] == {"IdleTimeout": 60}
    assert len(ec2.describe_network_interfaces()["NetworkInterfaces"]) == enis_before
    # The AWS CLI sees the same.
    out = cumulo.aws("elb", "describe-load-balancers", "--load-balancer-names", names[0])
    assert out["LoadBalancerDescriptions"][0]["LoadBalancerName"] == names[0]
    proc = cumulo.aws("elb", "describe-load-balancers", "--load-balancer-names", "nope", check=False)
    assert proc.returncode != 0 and "LoadBalancerNotFound" in proc.stderr
    for n in names:
        elb.delete_load_balancer(LoadBalancerName=n)


def test_state_survives_a_restart(fresh_server):
    server = fresh_server.start()
    elb = server.client("elb")
    ec2 = server.client("ec2")
    subnet = ec2.describe_subnets()["Subnets"][0]["SubnetId"]
    dns = elb.create_load_balancer(LoadBalancerName="keep", Subnets=[subnet], Listeners=[{"Protocol": "HTTP", "LoadBalancerPort": 80, "InstancePort": 80}])["DNSName"]
    elb.modify_load_balancer_attributes(LoadBalancerName="keep", LoadBalancerAttributes={"ConnectionSettings": {"IdleTimeout": 30}})
    server.stop()
    server = CumuloServer(data_dir=server.data_dir).start()
    try:
        elb = server.client("elb")
        [lb] = elb.describe_load_balancers(LoadBalancerNames=["keep"])["LoadBalancerDescriptions"]
        assert lb["DNSName"] == dns
        assert elb.describe_load_balancer_attributes(LoadBalancerName="keep")["LoadBalancerAttributes"]["ConnectionSettings"] == {"IdleTimeout": 30}
    finally:
        server.stop()


TEMPLATE = {
    "Parameters": {"Subnets": {"Type": "CommaDelimitedList"}, "Idle": {"Type": "Number", "Default": "60"}, "Port": {"Type": "String", "Default": "80"},
                   "Instances": {"Type": "CommaDelimitedList"}},
    "Resources": {
        "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "lb"}},
        "LB": {
            "Type": "AWS::ElasticLoadBalancing::LoadBalancer",
            "Properties": {
                "Subnets": {"Ref": "Subnets"},
                "SecurityGroups": [{"Fn::GetAtt": ["Group", "GroupId"]}],
                "Listeners": [{"LoadBalancerPort": {"Ref": "Port"}, "InstancePort": "8080", "Protocol": "HTTP", "PolicyNames": ["Sticky"]}],
                "LBCookieStickinessPolicy": [{"PolicyName": "Sticky", "CookieExpirationPeriod": "300"}],
                "HealthCheck": {"Target": "HTTP:8080/", "Interval": "10", "Timeout": "5", "HealthyThreshold": "2", "UnhealthyThreshold": "3"},
                "ConnectionSettings": {"IdleTimeout": {"Ref": "Idle"}},
                "ConnectionDrainingPolicy": {"Enabled": True, "Timeout": 30},
                "CrossZone": True,
                "Instances": {"Ref": "Instances"},
                "Tags": [{"Key": "app", "Value": "web"}],
            },
        },
    },
    "Outputs": {
        "Name": {"Value": {"Ref": "LB"}},
        "Dns": {"Value": {"Fn::GetAtt": ["LB", "DNSName"]}},
        "Zone": {"Value": {"Fn::GetAtt": ["LB", "CanonicalHostedZoneNameID"]}},
        "ZoneName": {"Value": {"Fn::GetAtt": ["LB", "CanonicalHostedZoneName"]}},
        "SourceGroup": {"Value": {"Fn::GetAtt": ["LB", "SourceSecurityGroup.GroupName"]}},
        "SourceOwner": {"Value": {"Fn::GetAtt": ["LB", "SourceSecurityGroup.OwnerAlias"]}},
    },
}


def test_a_classic_load_balancer_stack(cumulo, elb, ec2, network, tmp_path):
    _, subnets, _ = network
    path = tmp_path / "lb.json"
    path.write_text(json.dumps(TEMPLATE))
    stack = f"clb-{uuid.uuid4().hex[:8]}"
    cfn = cumulo.client("cloudformation")
    ids = [i["InstanceId"] for i in ec2.run_instances(ImageId=AMI, InstanceType="t3.micro", MinCount=3, MaxCount=3, SubnetId=subnets[0])["Instances"]]
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path),
               "--parameter-overrides", f"Subnets={','.join(subnets[:2])}", f"Instances={','.join(ids[:2])}")
    outputs = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    name = outputs["Name"]
    [lb] = elb.describe_load_balancers(LoadBalancerNames=[name])["LoadBalancerDescriptions"]
    assert outputs["Dns"] == lb["DNSName"] == outputs["ZoneName"] and outputs["Zone"] == "Z35SXDOTRQ7X7K"
    assert outputs["SourceOwner"] == "000000000000" and outputs["SourceGroup"].startswith(f"{stack}-Group-")
    assert lb["ListenerDescriptions"] == [{"Listener": {"Protocol": "HTTP", "LoadBalancerPort": 80, "InstanceProtocol": "HTTP", "InstancePort": 8080}, "PolicyNames": ["Sticky"]}]
    assert lb["HealthCheck"]["Target"] == "HTTP:8080/" and lb["HealthCheck"]["Interval"] == 10
    attrs = elb.describe_load_balancer_attributes(LoadBalancerName=name)["LoadBalancerAttributes"]
    assert attrs["CrossZoneLoadBalancing"] == {"Enabled": True} and attrs["ConnectionDraining"] == {"Enabled": True, "Timeout": 30}
    tags = {t["Key"]: t["Value"] for t in elb.describe_tags(LoadBalancerNames=[name])["TagDescriptions"][0]["Tags"]}
    assert tags["app"] == "web"
    assert len(interfaces(ec2, name)) == 2
    assert sorted(i["InstanceId"] for i in lb["Instances"]) == sorted(ids[:2])

    # In place: the idle timeout, the listener's port, a third subnet and the instances.
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path),
               "--parameter-overrides", f"Subnets={','.join(subnets)}", "Idle=300", "Port=8000", f"Instances={','.join(ids[1:])}")
    [lb2] = elb.describe_load_balancers(LoadBalancerNames=[name])["LoadBalancerDescriptions"]
    assert lb2["DNSName"] == lb["DNSName"] and lb2["Subnets"] == subnets
    assert [d["Listener"]["LoadBalancerPort"] for d in lb2["ListenerDescriptions"]] == [8000]
    assert lb2["ListenerDescriptions"][0]["PolicyNames"] == ["Sticky"]
    assert elb.describe_load_balancer_attributes(LoadBalancerName=name)["LoadBalancerAttributes"]["ConnectionSettings"] == {"IdleTimeout": 300}
    assert len(interfaces(ec2, name)) == 3
    assert sorted(i["InstanceId"] for i in lb2["Instances"]) == sorted(ids[1:])
    states = elb.describe_instance_health(LoadBalancerName=name)["InstanceStates"]
    assert {s["InstanceId"]: s["State"] for s in states} == {i: "InService" for i in ids[1:]}

    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    assert error(elb.describe_load_balancers, LoadBalancerNames=[name])["Code"] == "LoadBalancerNotFound"
    assert interfaces(ec2, name) == []
