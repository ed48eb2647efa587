"""Issue 18's CDK acceptance: the real `cdk` CLI (tests/cdk-serve-app's pinned aws-cdk) deploys
tests/cdk-serve-app/net.js against `cumulo serve`: a VPC with two AZs and one NAT gateway, an
ApplicationLoadBalancedFargateService from a public registry image behind HTTPS (port 80
redirects), a listener rule, a private hosted zone with a record, and an ACM certificate validated
through a public zone that lives in a stack of its own (CdkNetZone). Every resource is checked
through its service's API with boto3; then a change (desired count 1 -> 2, the rule's path) is
deployed and checked, and both stacks are destroyed.

What the test does about the public zone, as on AWS: CloudFormation writes the certificate's
validation CNAME into the zone itself and leaves it there when the certificate is deleted, so
`cdk destroy --all` removes CdkNet and then fails on CdkNetZone (DELETE_FAILED, HostedZoneNotEmpty).
The test asserts exactly that, then does what an AWS user does: deletes the leftover record
through Route 53 and runs `cdk destroy CdkNetZone` again, which succeeds. After it nothing of
the app is left in any service except what AWS also leaves: the task's log group (the CDK gives
it DeletionPolicy Retain), the INACTIVE task definition revision and the NAT gateway in state
`deleted`.
"""
import json

import pytest

from cdk_cli import ACCOUNT_ENV, APP, QUALIFIER, Cdk, check_bootstrap, ensure_app, gone, stack_outputs
from conftest import CumuloServer

NET, ZONE = "CdkNet", "CdkNetZone"
DOMAIN = "cumulo-net.example.com"
APP_COMMAND = "node net.js"


@pytest.fixture(scope="module")
def app():
    return ensure_app()


def by_type(ec2, op, key, vpc, **kwargs):
    return getattr(ec2, op)(Filters=[{"Name": "vpc-id", "Values": [vpc]}], **kwargs)[key]


def check_network(server, out):
    """The VPC as ec2.Vpc(maxAzs: 2, natGateways: 1) makes it: two public and two private /18
    subnets in two AZs, public routes to the internet gateway, private ones to the one NAT
    gateway (in the first public subnet, with its elastic IP)."""
    ec2 = server.client("ec2")
    vpc = out["VpcId"]
    [described] = ec2.describe_vpcs(VpcIds=[vpc])["Vpcs"]
    assert described["CidrBlock"] == "10.0.0.0/16" and described["State"] == "available"
    assert {"Key": "Name", "Value": "CdkNet/Vpc"} in described["Tags"]
    for attribute, key in (("enableDnsSupport", "EnableDnsSupport"), ("enableDnsHostnames", "EnableDnsHostnames")):
        assert ec2.describe_vpc_attribute(VpcId=vpc, Attribute=attribute)[key]["Value"] is True

    subnets = by_type(ec2, "describe_subnets", "Subnets", vpc)
    kind = {s["SubnetId"]: {t["Key"]: t["Value"] for t in s["Tags"]}["aws-cdk:subnet-type"] for s in subnets}
    public = sorted((s for s in subnets if kind[s["SubnetId"]] == "Public"), key=lambda s: s["CidrBlock"])
    private = sorted((s for s in subnets if kind[s["SubnetId"]] == "Private"), key=lambda s: s["CidrBlock"])
    assert [s["CidrBlock"] for s in public] == ["10.0.0.0/18", "10.0.64.0/18"]
    assert [s["CidrBlock"] for s in private] == ["10.0.128.0/18", "10.0.192.0/18"]
    assert [s["AvailabilityZone"] for s in public] == [s["AvailabilityZone"] for s in private] == ["us-east-1a", "us-east-1b"]
    assert all(s["MapPublicIpOnLaunch"] for s in public) and not any(s["MapPublicIpOnLaunch"] for s in private)

    [igw] = ec2.describe_internet_gateways(Filters=[{"Name": "attachment.vpc-id", "Values": [vpc]}])["InternetGateways"]
    assert igw["Attachments"] == [{"State": "available", "VpcId": vpc}]
    [nat] = by_type(ec2, "describe_nat_gateways", "NatGateways", vpc)
    assert nat["State"] == "available" and nat["SubnetId"] == public[0]["SubnetId"]
    [nat_address] = nat["NatGatewayAddresses"]
    [eip] = ec2.describe_addresses(AllocationIds=[nat_address["AllocationId"]])["Addresses"]
    assert eip["Domain"] == "vpc" and eip["PublicIp"] == nat_address["PublicIp"]
    assert eip["NetworkInterfaceId"] == nat_address["NetworkInterfaceId"] and eip["AssociationId"].startswith("eipassoc-")

    tables = by_type(ec2, "describe_route_tables", "RouteTables", vpc)
    [main] = [t for t in tables if any(a["Main"] for a in t["Associations"])]
    assert [r["GatewayId"] for r in main["Routes"]] == ["local"]
    routed = {a["SubnetId"]: t for t in tables for a in t["Associations"] if not a["Main"]}
    assert set(routed) == set(kind)
    for subnet, table in routed.items():
        default = {r["DestinationCidrBlock"]: r for r in table["Routes"]}
        assert default["10.0.0.0/16"]["GatewayId"] == "local"
        target = "GatewayId" if kind[subnet] == "Public" else "NatGatewayId"
        assert default["0.0.0.0/0"][target] == (igw["InternetGatewayId"] if target == "GatewayId" else nat["NatGatewayId"])
        assert default["0.0.0.0/0"]["State"] == "active"
    return {"public": [s["SubnetId"] for s in public], "private": [s["SubnetId"] for s in private]}


def check_load_balancer(server, out, subnets, cert_arn, rule_path):
    """The ALB in the public subnets behind its own group, its HTTPS listener with the
    certificate and the rule, the HTTP redirect listener, the target group of task IPs."""
    elb, ec2 = server.client("elbv2"), server.client("ec2")
    [lb] = [b for b in elb.describe_load_balancers()["LoadBalancers"] if b["DNSName"] == out["LoadBalancerDns"]]
    assert (lb["Type"], lb["Scheme"], lb["State"]["Code"], lb["VpcId"]) == ("application", "internet-facing", "active", out["VpcId"])
    assert sorted(z["SubnetId"] for z in lb["AvailabilityZones"]) == sorted(subnets["public"])
    assert lb["DNSName"].endswith(".us-east-1.elb.amazonaws.com") and lb["CanonicalHostedZoneId"] == "Z35SXDOTRQ7X7K"
    [lb_group] = ec2.describe_security_groups(GroupIds=lb["SecurityGroups"])["SecurityGroups"]
    opened = {(p["FromPort"], r["CidrIp"]) for p in lb_group["IpPermissions"] for r in p["IpRanges"]}
    assert opened == {(80, "0.0.0.0/0"), (443, "0.0.0.0/0")}

    listeners = {l["Port"]: l for l in elb.describe_listeners(LoadBalancerArn=lb["LoadBalancerArn"])["Listeners"]}
    https, http = listeners[443], listeners[80]
    assert https["ListenerArn"] == out["ListenerArn"] and https["Protocol"] == "HTTPS"
    assert https["Certificates"] == [{"CertificateArn": cert_arn}]
    assert elb.describe_listener_certificates(ListenerArn=https["ListenerArn"])["Certificates"] == [
        {"CertificateArn": cert_arn, "IsDefault": True}
    ]
    assert http["Protocol"] == "HTTP"
    [redirect] = http["DefaultActions"]
    assert redirect["Type"] == "redirect"
    assert redirect["RedirectConfig"] == {"Protocol": "HTTPS", "Port": "443", "StatusCode": "HTTP_301"}
    [forward] = https["DefaultActions"]
    tg_arn = forward["TargetGroupArn"]

    rules = elb.describe_rules(ListenerArn=https["ListenerArn"])["Rules"]
    assert [r["Priority"] for r in rules] == ["10", "default"]
    [condition] = rules[0]["Conditions"]
    # AWS answers a path condition in both its legacy and typed forms, whichever was given.
    assert condition == {"Field": "path-pattern", "Values": [rule_path], "PathPatternConfig": {"Values": [rule_path]}}
    [action] = rules[0]["Actions"]
    assert action["FixedResponseConfig"] == {"MessageBody": "ok", "StatusCode": "200", "ContentType": "text/plain"}
    assert rules[1]["IsDefault"] and rules[1]["Actions"][0]["TargetGroupArn"] == tg_arn

    [tg] = elb.describe_target_groups(TargetGroupArns=[tg_arn])["TargetGroups"]
    assert (tg["TargetType"], tg["Protocol"], tg["Port"], tg["VpcId"]) == ("ip", "HTTP", 80, out["VpcId"])
    assert tg["LoadBalancerArns"] == [lb["LoadBalancerArn"]]
    health = elb.describe_target_health(TargetGroupArn=tg_arn)["TargetHealthDescriptions"]
    assert {h["TargetHealth"]["State"] for h in health} == {"healthy"}
    return lb, tg_arn, sorted(h["Target"]["Id"] for h in health)


def check_service(server, out, subnets, tg_arn, desired):
    """The Fargate service at steady state with `desired` RUNNING tasks in the private subnets,
    each task's IP a target of the group."""
    ecs, ec2 = server.client("ecs"), server.client("ec2")
    cluster, service = out["ClusterName"], out["ServiceName"]
    [c] = ecs.describe_clusters(clusters=[cluster])["clusters"]
    assert c["status"] == "ACTIVE"
    ecs.get_waiter("services_stable").wait(cluster=cluster, services=[service], WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    [svc] = ecs.describe_services(cluster=cluster, services=[service])["services"]
    assert (svc["status"], svc["launchType"]) == ("ACTIVE", "FARGATE")
    assert (svc["desiredCount"], svc["runningCount"], svc["pendingCount"]) == (desired, desired, 0)
    [deployment] = svc["deployments"]
    assert (deployment["status"], deployment["rolloutState"]) == ("PRIMARY", "COMPLETED")
    assert svc["loadBalancers"] == [{"targetGroupArn": tg_arn, "containerName": "web", "containerPort": 80}]
    awsvpc = svc["networkConfiguration"]["awsvpcConfiguration"]
    assert sorted(awsvpc["subnets"]) == sorted(subnets["private"]) and awsvpc["assignPublicIp"] == "DISABLED"
    assert svc["deploymentConfiguration"]["deploymentCircuitBreaker"] == {"enable": True, "rollback": True}
    # The service's events say what it did, in AWS's words, newest first.
    messages = [e["message"] for e in svc["events"]]
    name = f"(service {svc['serviceName']})"
    assert messages[0] == f"{name} has reached a steady state."
    assert messages[1] == f"{name} registered 1 targets in (target-group {tg_arn})"
    assert messages[2].startswith(f"{name} has started 1 tasks: (task ")

    # The task's group: HTTP from the load balancer's group only, and the CDK's described
    # allow-all egress (its description kept, as on AWS).
    [group] = ec2.describe_security_groups(GroupIds=awsvpc["securityGroups"])["SecurityGroups"]
    [ingress] = group["IpPermissions"]
    assert (ingress["FromPort"], ingress["IpRanges"]) == (80, [])
    assert [p["Description"] for p in ingress["UserIdGroupPairs"]] == ["Load balancer to target"]
    assert group["IpPermissionsEgress"][0]["IpRanges"] == [
        {"CidrIp": "0.0.0.0/0", "Description": "Allow all outbound traffic by default"}
    ]

    td = ecs.describe_task_definition(taskDefinition=svc["taskDefinition"])["taskDefinition"]
    assert (td["cpu"], td["memory"], td["networkMode"]) == ("256", "512", "awsvpc")
    assert td["containerDefinitions"][0]["image"] == "public.ecr.aws/nginx/nginx:stable"

    arns = ecs.list_tasks(cluster=cluster, serviceName=service)["taskArns"]
    assert len(arns) == desired
    tasks = ecs.describe_tasks(cluster=cluster, tasks=arns)["tasks"]
    ips = []
    for task in tasks:
        assert (task["lastStatus"], task["launchType"]) == ("RUNNING", "FARGATE")
        details = {d["name"]: d["value"] for d in task["attachments"][0]["details"]}
        assert details["subnetId"] in subnets["private"]
        [eni] = ec2.describe_network_interfaces(NetworkInterfaceIds=[details["networkInterfaceId"]])["NetworkInterfaces"]
        assert eni["PrivateIpAddress"] == details["privateIPv4Address"] and eni["Status"] == "in-use"
        ips.append(details["privateIPv4Address"])
    return svc, sorted(ips)


def check_dns_and_certificate(server, out, zone_id, lb_dns):
    """The private zone associated with the VPC and its CNAME to the ALB; the certificate ISSUED
    (the CDK's waiter agrees) with its validation CNAME written into the public zone."""
    r53, acm = server.client("route53"), server.client("acm")
    internal = r53.get_hosted_zone(Id=out["InternalZoneId"])
    assert internal["HostedZone"]["Name"] == "internal.cumulo." and internal["HostedZone"]["Config"]["PrivateZone"] is True
    assert internal["VPCs"] == [{"VPCRegion": "us-east-1", "VPCId": out["VpcId"]}]
    by_vpc = r53.list_hosted_zones_by_vpc(VPCId=out["VpcId"], VPCRegion="us-east-1")["HostedZoneSummaries"]
    assert [z["HostedZoneId"] for z in by_vpc] == [out["InternalZoneId"]]
    records = r53.list_resource_record_sets(HostedZoneId=out["InternalZoneId"])["ResourceRecordSets"]
    assert [(r["Name"], r["Type"]) for r in records] == [
        ("internal.cumulo.", "NS"), ("internal.cumulo.", "SOA"), ("web.internal.cumulo.", "CNAME")
    ]
    assert records[2]["ResourceRecords"] == [{"Value": lb_dns}]

    cert_arn = out["CertificateArn"]
    acm.get_waiter("certificate_validated").wait(CertificateArn=cert_arn, WaiterConfig={"Delay": 1, "MaxAttempts": 10})
    cert = acm.describe_certificate(CertificateArn=cert_arn)["Certificate"]
    assert (cert["Status"], cert["DomainName"], cert["Type"]) == ("ISSUED", f"app.{DOMAIN}", "AMAZON_ISSUED")
    [option] = cert["DomainValidationOptions"]
    assert (option["ValidationMethod"], option["ValidationStatus"]) == ("DNS", "SUCCESS")
    validation = option["ResourceRecord"]
    assert validation["Type"] == "CNAME" and validation["Name"].endswith(f".app.{DOMAIN}.")
    public = r53.list_resource_record_sets(HostedZoneId=zone_id)["ResourceRecordSets"]
    [written] = [r for r in public if r["Name"] == validation["Name"]]
    assert written["Type"] == "CNAME" and written["ResourceRecords"] == [{"Value": validation["Value"]}]
    return cert, validation


def stack_changes(cfn, stack, before):
    """The logical ids the stack's operation since `before` (event ids) touched."""
    events = cfn.describe_stack_events(StackName=stack)["StackEvents"]
    return {e["LogicalResourceId"] for e in events if e["EventId"] not in before and e["LogicalResourceId"] != stack}


def check_nothing_left(server, vpc, lb_arn, cert_arn, log_group, role_names):
    """After both destroys: nothing of the app in any service, except what AWS also keeps."""
    ec2, elb, ecs = server.client("ec2"), server.client("elbv2"), server.client("ecs")
    gone(lambda: ec2.describe_vpcs(VpcIds=[vpc]), "InvalidVpcID.NotFound")
    assert [v["IsDefault"] for v in ec2.describe_vpcs()["Vpcs"]] == [True]
    assert all(s["DefaultForAz"] for s in ec2.describe_subnets()["Subnets"])
    assert [g["GroupName"] for g in ec2.describe_security_groups()["SecurityGroups"]] == ["default"]
    assert ec2.describe_network_interfaces()["NetworkInterfaces"] == []
    assert ec2.describe_addresses()["Addresses"] == []
    # AWS lists a deleted NAT gateway for about an hour, in state `deleted`.
    assert {n["State"] for n in ec2.describe_nat_gateways()["NatGateways"]} == {"deleted"}
    assert len(ec2.describe_internet_gateways()["InternetGateways"]) == 1  # the default VPC's
    gone(lambda: elb.describe_load_balancers(LoadBalancerArns=[lb_arn]), "LoadBalancerNotFound")
    assert elb.describe_target_groups()["TargetGroups"] == []
    assert ecs.list_clusters()["clusterArns"] == []
    assert ecs.list_task_definitions()["taskDefinitionArns"] == []
    # CloudFormation deregisters the revision; AWS keeps it, INACTIVE.
    assert len(ecs.list_task_definitions(status="INACTIVE")["taskDefinitionArns"]) == 1
    assert server.client("route53").list_hosted_zones()["HostedZones"] == []
    gone(lambda: server.client("acm").describe_certificate(CertificateArn=cert_arn), "ResourceNotFoundException")
    # The CDK's log group for the container is DeletionPolicy Retain: AWS keeps it too.
    assert [g["logGroupName"] for g in server.client("logs").describe_log_groups()["logGroups"]] == [log_group]
    iam = server.client("iam")
    for name in role_names:
        gone(lambda n=name: iam.get_role(RoleName=n), "NoSuchEntity")
    assert all(r["RoleName"].startswith(f"cdk-{QUALIFIER}-") for r in iam.list_roles()["Roles"])
    cfn = server.client("cloudformation")
    assert [s["StackName"] for s in cfn.describe_stacks()["Stacks"]] == ["CDKToolkit"]
    assert [e["Name"] for e in cfn.list_exports()["Exports"]] == [f"CdkBootstrap-{QUALIFIER}-FileAssetKeyArn"]


def test_cdk_network_app_deploy_change_destroy(app, tmp_path):
    # The app looks up the account's AZs (ec2.Vpc with an explicit env): start without the
    # CLI's cached answer so the lookup reaches cumulo.
    (APP / "cdk.context.json").unlink(missing_ok=True)
    server = CumuloServer(data_dir=tmp_path / "data").start()
    try:
        cdk = Cdk(server, "127.0.0.1", tmp_path / "cdk.out", app=APP_COMMAND)
        cfn = server.client("cloudformation")
        cdk("bootstrap", ACCOUNT_ENV)
        check_bootstrap(server)

        cdk("deploy", "--all", "--require-approval", "never")
        context = json.loads((APP / "cdk.context.json").read_text())
        assert context["availability-zones:account=000000000000:region=us-east-1"][:2] == ["us-east-1a", "us-east-1b"]
        for stack in (ZONE, NET):
            assert cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
        resources = cfn.list_stack_resources(StackName=NET)["StackResourceSummaries"]
        assert len(resources) == 41 and {r["ResourceStatus"] for r in resources} == {"CREATE_COMPLETE"}
        zone_id = stack_outputs(cfn, ZONE)["ExportsOutputRefPublicD0AE4A11C01C0853"]
        out = stack_outputs(cfn, NET)

        subnets = check_network(server, out)
        cert, validation = check_dns_and_certificate(server, out, zone_id, out["LoadBalancerDns"])
        lb, tg_arn, targets = check_load_balancer(server, out, subnets, cert["CertificateArn"], "/health")
        svc, ips = check_service(server, out, subnets, tg_arn, 1)
        assert targets == ips
        # ACM knows the load balancer uses the certificate, and refuses to delete it meanwhile.
        assert cert["InUseBy"] == [lb["LoadBalancerArn"]]
        gone(lambda: server.client("acm").delete_certificate(CertificateArn=cert["CertificateArn"]), "ResourceInUseException")

        # The change: two tasks instead of one, another path for the rule; nothing replaced.
        before = {e["EventId"] for e in cfn.describe_stack_events(StackName=NET)["StackEvents"]}
        cdk("deploy", "--all", "--require-approval", "never", "-c", "desired=2", "-c", "rulePath=/ping")
        assert cfn.describe_stacks(StackName=NET)["Stacks"][0]["StackStatus"] == "UPDATE_COMPLETE"
        assert stack_outputs(cfn, NET) == out
        assert stack_changes(cfn, NET, before) == {"WebServiceD04B5F3E", "WebLBPublicListenerHealthRule423E844C"}
        lb2, tg2, targets = check_load_balancer(server, out, subnets, cert["CertificateArn"], "/ping")
        assert (lb2["LoadBalancerArn"], tg2) == (lb["LoadBalancerArn"], tg_arn)
        svc2, ips = check_service(server, out, subnets, tg_arn, 2)
        assert targets == ips and len(ips) == 2
        assert svc2["serviceArn"] == svc["serviceArn"]

        log_group = next(
            r["PhysicalResourceId"] for r in resources if r["ResourceType"] == "AWS::Logs::LogGroup"
        )
        roles = [r["PhysicalResourceId"] for r in resources if r["ResourceType"] == "AWS::IAM::Role"]
        assert len(roles) == 2

        # Destroy both: CdkNet goes; CdkNetZone fails on the validation record CloudFormation
        # wrote and, as on AWS, left behind.
        code, printed = cdk.run("destroy", "--all", "--force")
        assert code != 0 and "CdkNet: destroyed" in printed, printed
        gone(lambda: cfn.describe_stacks(StackName=NET), "ValidationError")
        assert cfn.describe_stacks(StackName=ZONE)["Stacks"][0]["StackStatus"] == "DELETE_FAILED"
        [failed] = [
            e for e in cfn.describe_stack_events(StackName=ZONE)["StackEvents"]
            if e["LogicalResourceId"] == "PublicD0AE4A11" and e["ResourceStatus"] == "DELETE_FAILED"
        ]
        assert "contains non-required resource record sets" in failed["ResourceStatusReason"]
        r53 = server.client("route53")
        left = [r for r in r53.list_resource_record_sets(HostedZoneId=zone_id)["ResourceRecordSets"] if r["Type"] not in ("NS", "SOA")]
        assert [(r["Name"], r["Type"]) for r in left] == [(validation["Name"], "CNAME")]
        # What an AWS user then does: remove the record, destroy the zone's stack again.
        r53.change_resource_record_sets(
            HostedZoneId=zone_id, ChangeBatch={"Changes": [{"Action": "DELETE", "ResourceRecordSet": left[0]}]}
        )
        cdk("destroy", ZONE, "--force")
        gone(lambda: cfn.describe_stacks(StackName=ZONE), "ValidationError")
        check_nothing_left(server, out["VpcId"], lb["LoadBalancerArn"], cert["CertificateArn"], log_group, roles)
    finally:
        server.stop()
