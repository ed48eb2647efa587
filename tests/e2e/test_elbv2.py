"""Elastic Load Balancing v2 through its own API (boto3, the AWS CLI) and through CloudFormation:
load balancers on the default VPC's subnets, target groups and targets, listeners and rules,
AWS's errors, and a stack that deploys, updates and deletes an application load balancer."""
import json
import uuid

import pytest
from botocore.exceptions import ClientError


@pytest.fixture(scope="module")
def ec2(cumulo):
    return cumulo.client("ec2")


@pytest.fixture(scope="module")
def elb(cumulo):
    return cumulo.client("elbv2")


@pytest.fixture(scope="module")
def network(ec2):
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    subnets = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"]
    return vpc, [s["SubnetId"] for s in sorted(subnets, key=lambda s: s["AvailabilityZone"])[:2]]


def error(call, **kw):
    with pytest.raises(ClientError) as e:
        call(**kw)
    return e.value.response["Error"]


def test_load_balancer_listener_rules_and_targets(elb, network):
    vpc, subnets = network
    name = f"lb-{uuid.uuid4().hex[:8]}"
    lb = elb.create_load_balancer(Name=name, Subnets=subnets, Tags=[{"Key": "team", "Value": "web"}])["LoadBalancers"][0]
    assert lb["State"]["Code"] == "provisioning" and lb["VpcId"] == vpc
    assert lb["DNSName"].startswith(f"{name}-") and lb["DNSName"].endswith(".us-east-1.elb.amazonaws.com")
    assert lb["CanonicalHostedZoneId"] == "Z35SXDOTRQ7X7K" and len(lb["AvailabilityZones"]) == 2
    elb.get_waiter("load_balancer_available").wait(LoadBalancerArns=[lb["LoadBalancerArn"]], WaiterConfig={"Delay": 1, "MaxAttempts": 5})
    nlb = elb.create_load_balancer(Name=f"n{name}", Subnets=subnets, Type="network", Scheme="internal")["LoadBalancers"][0]
    assert nlb["DNSName"].startswith(f"internal-n{name}-") and ".elb.us-east-1.amazonaws.com" in nlb["DNSName"]
    assert nlb["CanonicalHostedZoneId"] == "Z26RNL4JYFTOTI"
    tg = elb.create_target_group(Name=f"tg-{name[3:]}", Protocol="HTTP", Port=80, VpcId=vpc, TargetType="ip")["TargetGroups"][0]
    assert (tg["HealthCheckPath"], tg["HealthCheckPort"], tg["Matcher"]) == ("/", "traffic-port", {"HttpCode": "200"})
    elb.register_targets(TargetGroupArn=tg["TargetGroupArn"], Targets=[{"Id": "172.31.0.10"}])
    [h] = elb.describe_target_health(TargetGroupArn=tg["TargetGroupArn"])["TargetHealthDescriptions"]
    assert h["TargetHealth"]["State"] == "unused" and h["TargetHealth"]["Reason"] == "Target.NotInUse"
    listener = elb.create_listener(LoadBalancerArn=lb["LoadBalancerArn"], Protocol="HTTP", Port=80,
                                   DefaultActions=[{"Type": "forward", "TargetGroupArn": tg["TargetGroupArn"]}])["Listeners"][0]
    assert error(elb.create_listener, LoadBalancerArn=lb["LoadBalancerArn"], Protocol="HTTP", Port=80,
                 DefaultActions=[{"Type": "fixed-response", "FixedResponseConfig": {"StatusCode": "404"}}])["Code"] == "DuplicateListener"
    [h] = elb.describe_target_health(TargetGroupArn=tg["TargetGroupArn"])["TargetHealthDescriptions"]
    assert h["TargetHealth"]["State"] == "healthy"
    assert elb.describe_target_groups(LoadBalancerArn=lb["LoadBalancerArn"])["TargetGroups"][0]["LoadBalancerArns"] == [lb["LoadBalancerArn"]]
    rule = dict(ListenerArn=listener["ListenerArn"], Priority=10, Conditions=[{"Field": "path-pattern", "Values": ["/api/*"]}],
                Actions=[{"Type": "fixed-response", "FixedResponseConfig": {"StatusCode": "200", "MessageBody": "ok"}}])
    created = elb.create_rule(**rule)["Rules"][0]
    assert created["Conditions"][0]["PathPatternConfig"] == {"Values": ["/api/*"]}
    e = error(elb.create_rule, **rule)
    assert (e["Code"], e["Message"]) == ("PriorityInUse", "Priority '10' is currently in use")
    rules = elb.describe_rules(ListenerArn=listener["ListenerArn"])["Rules"]
    assert [r["Priority"] for r in rules] == ["10", "default"] and rules[1]["IsDefault"] is True
    assert error(elb.delete_target_group, TargetGroupArn=tg["TargetGroupArn"])["Code"] == "ResourceInUse"
    attrs = {a["Key"]: a["Value"] for a in elb.describe_load_balancer_attributes(LoadBalancerArn=lb["LoadBalancerArn"])["Attributes"]}
    assert attrs["idle_timeout.timeout_seconds"] == "60"
    elb.modify_load_balancer_attributes(LoadBalancerArn=lb["LoadBalancerArn"], Attributes=[{"Key": "deletion_protection.enabled", "Value": "true"}])
    assert error(elb.delete_load_balancer, LoadBalancerArn=lb["LoadBalancerArn"])["Code"] == "OperationNotPermitted"
    elb.modify_load_balancer_attributes(LoadBalancerArn=lb["LoadBalancerArn"], Attributes=[{"Key": "deletion_protection.enabled", "Value": "false"}])
    tags = elb.describe_tags(ResourceArns=[lb["LoadBalancerArn"]])["TagDescriptions"][0]["Tags"]
    assert tags == [{"Key": "team", "Value": "web"}]
    for arn in (lb["LoadBalancerArn"], nlb["LoadBalancerArn"]):
        elb.delete_load_balancer(LoadBalancerArn=arn)
    elb.delete_target_group(TargetGroupArn=tg["TargetGroupArn"])
    e = error(elb.describe_load_balancers, LoadBalancerArns=[lb["LoadBalancerArn"]])
    assert (e["Code"], e["Message"]) == ("LoadBalancerNotFound", "One or more load balancers not found")
    assert error(elb.describe_listeners, ListenerArns=[listener["ListenerArn"]])["Code"] == "ListenerNotFound"


def test_bad_input_changes_nothing(elb, network, cumulo):
    _, subnets = network
    before = len(elb.describe_load_balancers()["LoadBalancers"])
    assert error(elb.create_load_balancer, Name="-bad-", Subnets=subnets)["Code"] == "ValidationError"
    assert error(elb.create_load_balancer, Name="ok-name", Subnets=["subnet-0123456789abcdef0"])["Code"] == "SubnetNotFound"
    assert len(elb.describe_load_balancers()["LoadBalancers"]) == before
    # The AWS CLI, and an operation cumulo does not implement.
    out = cumulo.aws("elbv2", "describe-load-balancers")
    assert len(out["LoadBalancers"]) == before
    assert "DescribeTrustStores" in error(elb.describe_trust_stores)["Message"]


def template(subnets, vpc, priority, body):
    return {
        "Resources": {
            "Sg": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "alb", "VpcId": vpc,
                   "SecurityGroupIngress": [{"IpProtocol": "tcp", "FromPort": 80, "ToPort": 80, "CidrIp": "0.0.0.0/0"}]}},
            "Lb": {"Type": "AWS::ElasticLoadBalancingV2::LoadBalancer", "Properties": {
                "Subnets": subnets, "SecurityGroups": [{"Ref": "Sg"}],
                "LoadBalancerAttributes": [{"Key": "idle_timeout.timeout_seconds", "Value": "30"}]}},
            "Blue": {"Type": "AWS::ElasticLoadBalancingV2::TargetGroup", "Properties": {
                "Port": "8080", "Protocol": "HTTP", "VpcId": vpc, "TargetType": "ip", "HealthCheckPath": "/health",
                "Targets": [{"Id": "172.31.0.20", "Port": 8080}],
                "TargetGroupAttributes": [{"Key": "deregistration_delay.timeout_seconds", "Value": "60"}]}},
            "Green": {"Type": "AWS::ElasticLoadBalancingV2::TargetGroup", "Properties": {"Port": 8080, "Protocol": "HTTP", "VpcId": vpc, "TargetType": "ip"}},
            "Http": {"Type": "AWS::ElasticLoadBalancingV2::Listener", "Properties": {
                "LoadBalancerArn": {"Ref": "Lb"}, "Port": 80, "Protocol": "HTTP",
                "DefaultActions": [{"Type": "fixed-response", "FixedResponseConfig": {"StatusCode": "404", "MessageBody": body}}]}},
            "Weighted": {"Type": "AWS::ElasticLoadBalancingV2::ListenerRule", "Properties": {
                "ListenerArn": {"Ref": "Http"}, "Priority": priority,
                "Conditions": [{"Field": "host-header", "HostHeaderConfig": {"Values": ["app.example.com"]}}],
                "Actions": [{"Type": "forward", "ForwardConfig": {"TargetGroups": [
                    {"TargetGroupArn": {"Ref": "Blue"}, "Weight": 90}, {"TargetGroupArn": {"Ref": "Green"}, "Weight": 10}]}}]}},
        },
        "Outputs": {
            "Lb": {"Value": {"Ref": "Lb"}},
            "Dns": {"Value": {"Fn::GetAtt": ["Lb", "DNSName"]}},
            "Zone": {"Value": {"Fn::GetAtt": ["Lb", "CanonicalHostedZoneID"]}},
            "FullName": {"Value": {"Fn::GetAtt": ["Lb", "LoadBalancerFullName"]}},
            "Blue": {"Value": {"Ref": "Blue"}},
            "BlueLbs": {"Value": {"Fn::Join": [",", {"Fn::GetAtt": ["Blue", "LoadBalancerArns"]}]}},
            "Http": {"Value": {"Ref": "Http"}},
            "Rule": {"Value": {"Ref": "Weighted"}},
        },
    }


def test_an_application_load_balancer_stack(cumulo, elb, network, tmp_path):
    vpc, subnets = network
    cfn = cumulo.client("cloudformation")
    name = f"alb-{uuid.uuid4().hex[:8]}"
    path = tmp_path / "alb.json"
    path.write_text(json.dumps(template(subnets, vpc, 5, "nothing here")))
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path))
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=name)["Stacks"][0]["Outputs"]}
    [lb] = elb.describe_load_balancers(LoadBalancerArns=[out["Lb"]])["LoadBalancers"]
    assert lb["DNSName"] == out["Dns"] and out["Zone"] == "Z35SXDOTRQ7X7K" and out["FullName"].startswith("app/")
    assert lb["LoadBalancerName"].startswith(name[:10])
    attrs = {a["Key"]: a["Value"] for a in elb.describe_load_balancer_attributes(LoadBalancerArn=out["Lb"])["Attributes"]}
    assert attrs["idle_timeout.timeout_seconds"] == "30"
    # As on AWS, the attribute is what the group had when it was made: no listener yet.
    assert out["BlueLbs"] == ""
    [blue] = elb.describe_target_groups(TargetGroupArns=[out["Blue"]])["TargetGroups"]
    assert blue["Port"] == 8080 and blue["HealthCheckPath"] == "/health" and blue["LoadBalancerArns"] == [out["Lb"]]
    assert [t["Target"]["Id"] for t in elb.describe_target_health(TargetGroupArn=out["Blue"])["TargetHealthDescriptions"]] == ["172.31.0.20"]
    [rule] = elb.describe_rules(RuleArns=[out["Rule"]])["Rules"]
    assert [g["Weight"] for g in rule["Actions"][0]["ForwardConfig"]["TargetGroups"]] == [90, 10]
    tags = {t["Key"]: t["Value"] for t in elb.describe_tags(ResourceArns=[out["Lb"]])["TagDescriptions"][0]["Tags"]}
    assert tags["aws:cloudformation:logical-id"] == "Lb"

    # An update in place: the rule's priority, the listener's default answer.
    path.write_text(json.dumps(template(subnets, vpc, 7, "moved")))
    cumulo.aws("cloudformation", "deploy", "--stack-name", name, "--template-file", str(path))
    [rule] = elb.describe_rules(RuleArns=[out["Rule"]])["Rules"]
    assert rule["Priority"] == "7"
    [listener] = elb.describe_listeners(ListenerArns=[out["Http"]])["Listeners"]
    assert listener["DefaultActions"][0]["FixedResponseConfig"]["MessageBody"] == "moved"

    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    assert error(elb.describe_load_balancers, LoadBalancerArns=[out["Lb"]])["Code"] == "LoadBalancerNotFound"
    assert error(elb.describe_target_groups, TargetGroupArns=[out["Blue"]])["Code"] == "TargetGroupNotFound"
