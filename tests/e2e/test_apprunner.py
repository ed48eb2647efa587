"""App Runner through boto3 and the AWS CLI: services (OPERATION_IN_PROGRESS -> RUNNING on a clock,
Cpu/Memory normalised, defaults filled, operations recorded, pause/resume, deletion), VPC
connectors against EC2's subnets and groups, ingress connections, revisioned auto scaling and
observability configurations, custom domains, tags, errors with their codes and messages (bad
input changes nothing), restart survival, and a CLI-deployed stack shaped like AWS Copilot's
Request-Driven Web Service, updated and deleted leaving nothing.

Copilot's RDWS names `autoscalingconfiguration/high-availability/3`. A new AWS account has only
App Runner's `DefaultConfiguration`, so the test creates `high-availability` three times first
(revision 3), as a Copilot user's account would have it."""

import re
import time
import uuid

import botocore.exceptions
import pytest

from conftest import CumuloServer

ACCOUNT = "000000000000"
REGION = "us-east-1"
IMAGE = "public.ecr.aws/nginx/nginx:latest"
SOURCE = {"ImageRepository": {"ImageIdentifier": IMAGE, "ImageRepositoryType": "ECR_PUBLIC"}}
FAST = {"Delay": 1, "MaxAttempts": 30}


def uid():
    return uuid.uuid4().hex[:8]


def raises(code, fn, *args, **kw):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        fn(*args, **kw)
    err = e.value.response["Error"]
    assert err["Code"] == code, err
    return err["Message"]


def wait_status(get, want, timeout=5.0):
    deadline = time.time() + timeout
    while True:
        status = get()
        if status == want or time.time() > deadline:
            return status
        time.sleep(0.1)


@pytest.fixture(scope="module")
def ar(cumulo):
    # Parameter validation off: the server's own validation is what is under test.
    return cumulo.client("apprunner", parameter_validation=False)


@pytest.fixture(scope="module")
def ec2(cumulo):
    return cumulo.client("ec2")


def service_status(ar, arn):
    return ar.describe_service(ServiceArn=arn)["Service"]["Status"]


def running(ar, arn):
    assert wait_status(lambda: service_status(ar, arn), "RUNNING") == "RUNNING"


def create(ar, name=None, **kw):
    return ar.create_service(ServiceName=name or f"svc-{uid()}", SourceConfiguration=SOURCE, **kw)


def network(ec2):
    vpc = ec2.create_vpc(CidrBlock="10.20.0.0/16")["Vpc"]["VpcId"]
    subnets = [ec2.create_subnet(VpcId=vpc, CidrBlock=f"10.20.{i}.0/24")["Subnet"]["SubnetId"] for i in (1, 2)]
    group = ec2.create_security_group(GroupName=f"ar-{uid()}", Description="app runner", VpcId=vpc)["GroupId"]
    return vpc, subnets, group


def test_a_service_runs_through_its_lifecycle(ar):
    name = f"web-{uid()}"
    out = create(ar, name, InstanceConfiguration={"Cpu": "1 vCPU", "Memory": "2 GB"},
                 Tags=[{"Key": "team", "Value": "a"}])
    s = out["Service"]
    arn = s["ServiceArn"]
    assert re.fullmatch(r"[0-9a-f]{32}", s["ServiceId"])
    assert arn == f"arn:aws:apprunner:{REGION}:{ACCOUNT}:service/{name}/{s['ServiceId']}"
    assert re.fullmatch(r"[a-z0-9]{10}\.us-east-1\.awsapprunner\.com", s["ServiceUrl"])
    assert s["Status"] == "OPERATION_IN_PROGRESS"
    assert s["InstanceConfiguration"] == {"Cpu": "1024", "Memory": "2048"}
    assert s["HealthCheckConfiguration"] == {"Protocol": "TCP", "Path": "/", "Interval": 5, "Timeout": 2,
                                             "HealthyThreshold": 1, "UnhealthyThreshold": 5}
    assert s["NetworkConfiguration"] == {"EgressConfiguration": {"EgressType": "DEFAULT"},
                                         "IngressConfiguration": {"IsPubliclyAccessible": True},
                                         "IpAddressType": "IPV4"}
    assert s["ObservabilityConfiguration"] == {"ObservabilityEnabled": False}
    assert s["SourceConfiguration"]["ImageRepository"]["ImageConfiguration"] == {"Port": "8080"}
    scaling = s["AutoScalingConfigurationSummary"]
    assert scaling["AutoScalingConfigurationArn"] == (
        f"arn:aws:apprunner:{REGION}:{ACCOUNT}:autoscalingconfiguration/DefaultConfiguration/1/"
        "00000000000000000000000000000001")
    assert scaling["IsDefault"] is True and scaling["HasAssociatedService"] is True
    [op] = ar.list_operations(ServiceArn=arn)["OperationSummaryList"]
    assert (op["Id"], op["Type"], op["Status"]) == (out["OperationId"], "CREATE_SERVICE", "IN_PROGRESS")

    running(ar, arn)
    assert ar.list_operations(ServiceArn=arn)["OperationSummaryList"][0]["Status"] == "SUCCEEDED"
    env = {"LOG_LEVEL": "debug"}
    up = ar.update_service(ServiceArn=arn, SourceConfiguration={"ImageRepository": {
        **SOURCE["ImageRepository"], "ImageConfiguration": {"Port": "80", "RuntimeEnvironmentVariables": env}}},
        InstanceConfiguration={"Memory": "4 GB"})
    assert up["Service"]["Status"] == "OPERATION_IN_PROGRESS"
    # A change while one is in progress is refused; the service keeps its state.
    msg = raises("InvalidStateException", ar.pause_service, ServiceArn=arn)
    assert msg == f"You can't pause service {arn} while it is in OPERATION_IN_PROGRESS status."
    running(ar, arn)
    d = ar.describe_service(ServiceArn=arn)["Service"]
    assert d["SourceConfiguration"]["ImageRepository"]["ImageConfiguration"] == {
        "Port": "80", "RuntimeEnvironmentVariables": env}
    assert d["InstanceConfiguration"] == {"Cpu": "1024", "Memory": "4096"}

    ar.pause_service(ServiceArn=arn)
    assert wait_status(lambda: service_status(ar, arn), "PAUSED") == "PAUSED"
    msg = raises("InvalidStateException", ar.pause_service, ServiceArn=arn)
    assert msg == f"You can't pause service {arn} while it is in PAUSED status."
    ar.resume_service(ServiceArn=arn)
    running(ar, arn)
    dep = ar.start_deployment(ServiceArn=arn)["OperationId"]
    ops = ar.list_operations(ServiceArn=arn)["OperationSummaryList"]
    assert [o["Type"] for o in ops] == ["START_DEPLOYMENT", "RESUME_SERVICE", "PAUSE_SERVICE",
                                        "UPDATE_SERVICE", "CREATE_SERVICE"]
    assert ops[0]["Id"] == dep and all(o["TargetArn"] == arn for o in ops)
    page = ar.list_operations(ServiceArn=arn, MaxResults=2)
    assert len(page["OperationSummaryList"]) == 2 and page["NextToken"]
    running(ar, arn)

    gone = ar.delete_service(ServiceArn=arn)["Service"]
    assert gone["Status"] == "OPERATION_IN_PROGRESS"
    deadline = time.time() + 5
    while time.time() < deadline:
        try:
            ar.describe_service(ServiceArn=arn)
            time.sleep(0.1)
        except botocore.exceptions.ClientError:
            break
    msg = raises("ResourceNotFoundException", ar.describe_service, ServiceArn=arn)
    assert msg == f"Service with ARN {arn} not found"
    assert arn not in [s["ServiceArn"] for s in ar.list_services()["ServiceSummaryList"]]


def test_bad_input_is_refused_as_app_runner_does_and_changes_nothing(ar, cumulo):
    before = ar.list_services(MaxResults=20)["ServiceSummaryList"]
    name = f"bad-{uid()}"
    msg = raises("InvalidRequestException", create, ar, name,
                 InstanceConfiguration={"Cpu": "0.25 vCPU", "Memory": "4 GB"})
    assert msg == ("The combination of Cpu 256 and Memory 4096 is not supported. See the App Runner "
                   "documentation for supported CPU and memory configurations.")
    msg = raises("InvalidRequestException", create, ar, name, InstanceConfiguration={"Cpu": "3 vCPU"})
    assert msg == ("1 validation error detected: Value '3 vCPU' at 'instanceConfiguration.cpu' failed to "
                   "satisfy constraint: Member must satisfy regular expression pattern: "
                   "256|512|1024|2048|4096|(0.25|0.5|1|2|4) vCPU")
    msg = raises("InvalidRequestException", create, ar, "ab")
    assert msg.startswith("1 validation error detected: Value 'ab' at 'serviceName' failed to satisfy")
    msg = raises("InvalidRequestException", ar.create_service, ServiceName=name)
    assert msg == ("1 validation error detected: Value null at 'sourceConfiguration' failed to satisfy "
                   "constraint: Member must not be null")
    private = {"ImageRepository": {"ImageIdentifier": f"{ACCOUNT}.dkr.ecr.us-east-1.amazonaws.com/app:1",
                                   "ImageRepositoryType": "ECR"}}
    msg = raises("InvalidRequestException", ar.create_service, ServiceName=name, SourceConfiguration=private)
    assert "AccessRoleArn is required" in msg
    missing = f"arn:aws:apprunner:{REGION}:{ACCOUNT}:vpcconnector/none/1/{'0' * 32}"
    msg = raises("InvalidRequestException", create, ar, name, NetworkConfiguration={
        "EgressConfiguration": {"EgressType": "VPC", "VpcConnectorArn": missing}})
    assert msg == f"VPC connector with ARN {missing} does not exist or is not active"
    nowhere = f"arn:aws:apprunner:{REGION}:{ACCOUNT}:autoscalingconfiguration/nowhere/1"
    msg = raises("InvalidRequestException", create, ar, name, AutoScalingConfigurationArn=nowhere)
    assert msg == f"Auto scaling configuration with ARN {nowhere} does not exist"
    msg = raises("InvalidRequestException", create, ar, name, Tags=[{"Key": "aws:x", "Value": "1"}])
    assert "at 'tags.member.key'" in msg
    msg = raises("InvalidRequestException", ar.list_services, MaxResults=21)
    assert msg == ("1 validation error detected: Value '21' at 'maxResults' failed to satisfy constraint: "
                   "Member must have value between 1 and 20")
    assert ar.list_services(MaxResults=20)["ServiceSummaryList"] == before

    taken = create(ar)["Service"]
    msg = raises("InvalidRequestException", create, ar, taken["ServiceName"])
    assert msg == f"Service with the provided name already exists: {taken['ServiceName']}"
    unknown = f"arn:aws:apprunner:{REGION}:{ACCOUNT}:service/x/{'1' * 32}"
    for op in (ar.describe_service, ar.delete_service, ar.pause_service, ar.list_operations):
        assert raises("ResourceNotFoundException", op, ServiceArn=unknown) == f"Service with ARN {unknown} not found"

    # An operation cumulo does not implement answers 501 naming it.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ar.list_connections()
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501
    assert "ListConnections" in e.value.response["Error"]["Message"]
    running(ar, taken["ServiceArn"])
    ar.delete_service(ServiceArn=taken["ServiceArn"])


def test_list_services_pages(ar):
    arns = [create(ar)["Service"]["ServiceArn"] for _ in range(3)]
    listed, token = [], None
    while True:
        page = ar.list_services(MaxResults=2, **({"NextToken": token} if token else {}))
        assert len(page["ServiceSummaryList"]) <= 2
        listed += [s["ServiceArn"] for s in page["ServiceSummaryList"]]
        token = page.get("NextToken")
        if not token:
            break
    assert all(a in listed for a in arns) and len(listed) == len(set(listed))
    for a in arns:
        running(ar, a)
        ar.delete_service(ServiceArn=a)


def test_vpc_connectors_need_ec2_networks_and_stay_describable_when_deleted(ar, ec2):
    vpc, subnets, group = network(ec2)
    name = f"conn-{uid()}"
    before = ar.list_vpc_connectors()["VpcConnectors"]
    msg = raises("InvalidRequestException", ar.create_vpc_connector, VpcConnectorName=name,
                 Subnets=["subnet-0000000000000000f"])
    assert msg == "Subnet subnet-0000000000000000f does not exist"
    msg = raises("InvalidRequestException", ar.create_vpc_connector, VpcConnectorName=name,
                 Subnets=subnets, SecurityGroups=["sg-0000000000000000f"])
    assert msg == "Security group sg-0000000000000000f does not exist"
    msg = raises("InvalidRequestException", ar.create_vpc_connector, VpcConnectorName=name)
    assert msg == "1 validation error detected: Value null at 'subnets' failed to satisfy constraint: Member must not be null"
    assert ar.list_vpc_connectors()["VpcConnectors"] == before

    c1 = ar.create_vpc_connector(VpcConnectorName=name, Subnets=subnets, SecurityGroups=[group])["VpcConnector"]
    assert re.fullmatch(rf"arn:aws:apprunner:{REGION}:{ACCOUNT}:vpcconnector/{name}/1/[0-9a-f]{{32}}",
                        c1["VpcConnectorArn"])
    assert (c1["VpcConnectorRevision"], c1["Status"], c1["Subnets"], c1["SecurityGroups"]) == (
        1, "ACTIVE", subnets, [group])
    c2 = ar.create_vpc_connector(VpcConnectorName=name, Subnets=subnets[:1])["VpcConnector"]
    assert c2["VpcConnectorRevision"] == 2

    svc = create(ar, NetworkConfiguration={"EgressConfiguration": {
        "EgressType": "VPC", "VpcConnectorArn": c1["VpcConnectorArn"]}})["Service"]
    assert svc["NetworkConfiguration"]["EgressConfiguration"] == {
        "EgressType": "VPC", "VpcConnectorArn": c1["VpcConnectorArn"]}
    running(ar, svc["ServiceArn"])
    ar.delete_service(ServiceArn=svc["ServiceArn"])

    gone = ar.delete_vpc_connector(VpcConnectorArn=c1["VpcConnectorArn"])["VpcConnector"]
    assert gone["Status"] == "INACTIVE" and "DeletedAt" in gone
    assert ar.describe_vpc_connector(VpcConnectorArn=c1["VpcConnectorArn"])["VpcConnector"]["Status"] == "INACTIVE"
    listed = [c["VpcConnectorArn"] for c in ar.list_vpc_connectors()["VpcConnectors"]]
    assert c2["VpcConnectorArn"] in listed and c1["VpcConnectorArn"] not in listed
    msg = raises("ResourceNotFoundException", ar.delete_vpc_connector, VpcConnectorArn=c1["VpcConnectorArn"])
    assert msg == f"VPC connector with ARN {c1['VpcConnectorArn']} not found"
    ar.delete_vpc_connector(VpcConnectorArn=c2["VpcConnectorArn"])


def test_auto_scaling_configurations_are_revisioned(ar):
    default = ar.list_auto_scaling_configurations(AutoScalingConfigurationName="DefaultConfiguration")
    [d] = default["AutoScalingConfigurationSummaryList"]
    assert (d["AutoScalingConfigurationRevision"], d["Status"], d["IsDefault"]) == (1, "ACTIVE", True)
    full = ar.describe_auto_scaling_configuration(AutoScalingConfigurationArn=d["AutoScalingConfigurationArn"])
    c = full["AutoScalingConfiguration"]
    assert (c["MaxConcurrency"], c["MinSize"], c["MaxSize"], c["Latest"]) == (100, 1, 25, True)

    name = f"ha-{uid()}"
    made = [ar.create_auto_scaling_configuration(AutoScalingConfigurationName=name, MinSize=2, MaxSize=n)
            ["AutoScalingConfiguration"] for n in (5, 6, 7)]
    assert [m["AutoScalingConfigurationRevision"] for m in made] == [1, 2, 3]
    assert re.fullmatch(rf"arn:aws:apprunner:{REGION}:{ACCOUNT}:autoscalingconfiguration/{name}/3/[0-9a-f]{{32}}",
                        made[2]["AutoScalingConfigurationArn"])
    latest = lambda a: ar.describe_auto_scaling_configuration(AutoScalingConfigurationArn=a)[
        "AutoScalingConfiguration"]["Latest"]
    assert [latest(m["AutoScalingConfigurationArn"]) for m in made] == [False, False, True]
    only = ar.list_auto_scaling_configurations(AutoScalingConfigurationName=name, LatestOnly=True)
    assert [s["AutoScalingConfigurationRevision"] for s in only["AutoScalingConfigurationSummaryList"]] == [3]
    msg = raises("InvalidRequestException", ar.create_auto_scaling_configuration,
                 AutoScalingConfigurationName=name, MinSize=9, MaxSize=3)
    assert msg == "MinSize (9) must not be greater than MaxSize (3)"
    msg = raises("InvalidRequestException", ar.create_auto_scaling_configuration,
                 AutoScalingConfigurationName=name, MaxConcurrency=201)
    assert msg.endswith("at 'maxConcurrency' failed to satisfy constraint: Member must have value between 1 and 200")
    assert len(ar.list_auto_scaling_configurations(AutoScalingConfigurationName=name)[
        "AutoScalingConfigurationSummaryList"]) == 3

    # A service names a revision as Copilot does, without the id.
    short = f"arn:aws:apprunner:{REGION}:{ACCOUNT}:autoscalingconfiguration/{name}/2"
    svc = create(ar, AutoScalingConfigurationArn=short)["Service"]
    summary = svc["AutoScalingConfigurationSummary"]
    assert summary["AutoScalingConfigurationArn"] == made[1]["AutoScalingConfigurationArn"]
    assert summary["AutoScalingConfigurationRevision"] == 2 and summary["HasAssociatedService"] is True
    running(ar, svc["ServiceArn"])
    ar.delete_service(ServiceArn=svc["ServiceArn"])

    gone = ar.delete_auto_scaling_configuration(AutoScalingConfigurationArn=made[2]["AutoScalingConfigurationArn"])
    assert gone["AutoScalingConfiguration"]["Status"] == "INACTIVE"
    assert latest(made[1]["AutoScalingConfigurationArn"]) is True
    ar.delete_auto_scaling_configuration(AutoScalingConfigurationArn=made[0]["AutoScalingConfigurationArn"],
                                         DeleteAllRevisions=True)
    assert ar.list_auto_scaling_configurations(AutoScalingConfigurationName=name)[
        "AutoScalingConfigurationSummaryList"] == []
    msg = raises("ResourceNotFoundException", ar.describe_auto_scaling_configuration,
                 AutoScalingConfigurationArn=short.replace(name, "missing-name"))
    assert msg == f"The auto scaling configuration with ARN {short.replace(name, 'missing-name')} does not exist"


def test_observability_configurations_and_a_traced_service(ar):
    name = f"obs-{uid()}"
    msg = raises("InvalidRequestException", ar.create_observability_configuration,
                 ObservabilityConfigurationName=name, TraceConfiguration={"Vendor": "JAEGER"})
    assert msg == ("1 validation error detected: Value 'JAEGER' at 'traceConfiguration.vendor' failed to "
                   "satisfy constraint: Member must satisfy enum value set: [AWSXRAY]")
    o = ar.create_observability_configuration(ObservabilityConfigurationName=name,
                                              TraceConfiguration={"Vendor": "AWSXRAY"})["ObservabilityConfiguration"]
    assert (o["ObservabilityConfigurationRevision"], o["Latest"], o["Status"], o["TraceConfiguration"]) == (
        1, True, "ACTIVE", {"Vendor": "AWSXRAY"})
    arn = o["ObservabilityConfigurationArn"]
    msg = raises("InvalidRequestException", create, ar, ObservabilityConfiguration={"ObservabilityEnabled": True})
    assert msg == "ObservabilityConfigurationArn is required when ObservabilityEnabled is true"
    svc = create(ar, ObservabilityConfiguration={"ObservabilityEnabled": True,
                                                 "ObservabilityConfigurationArn": arn})["Service"]
    assert svc["ObservabilityConfiguration"] == {"ObservabilityEnabled": True, "ObservabilityConfigurationArn": arn}
    listed = ar.list_observability_configurations(ObservabilityConfigurationName=name)
    assert listed["ObservabilityConfigurationSummaryList"] == [{
        "ObservabilityConfigurationArn": arn, "ObservabilityConfigurationName": name,
        "ObservabilityConfigurationRevision": 1}]
    running(ar, svc["ServiceArn"])
    ar.delete_service(ServiceArn=svc["ServiceArn"])
    ar.delete_observability_configuration(ObservabilityConfigurationArn=arn)
    assert ar.describe_observability_configuration(ObservabilityConfigurationArn=arn)[
        "ObservabilityConfiguration"]["Status"] == "INACTIVE"


def test_vpc_ingress_connections_become_available(ar, ec2):
    vpc, _, _ = network(ec2)
    svc = create(ar, NetworkConfiguration={"IngressConfiguration": {"IsPubliclyAccessible": False}})["Service"]
    arn = svc["ServiceArn"]
    assert svc["NetworkConfiguration"]["IngressConfiguration"] == {"IsPubliclyAccessible": False}
    name = f"in-{uid()}"
    msg = raises("InvalidRequestException", ar.create_vpc_ingress_connection, ServiceArn=arn,
                 VpcIngressConnectionName=name,
                 IngressVpcConfiguration={"VpcId": "vpc-0000000000000000f", "VpcEndpointId": "vpce-0123456789abcdef0"})
    assert msg == "VPC vpc-0000000000000000f does not exist"
    assert ar.list_vpc_ingress_connections(Filter={"ServiceArn": arn})["VpcIngressConnectionSummaryList"] == []
    i = ar.create_vpc_ingress_connection(
        ServiceArn=arn, VpcIngressConnectionName=name,
        IngressVpcConfiguration={"VpcId": vpc, "VpcEndpointId": "vpce-0123456789abcdef0"})["VpcIngressConnection"]
    iarn = i["VpcIngressConnectionArn"]
    assert re.fullmatch(rf"arn:aws:apprunner:{REGION}:{ACCOUNT}:vpcingressconnection/{name}/[0-9a-f]{{32}}", iarn)
    label = svc["ServiceUrl"].split(".")[0]
    assert i["DomainName"] == f"{label}.vpce-0123456789abcdef0.{REGION}.awsapprunner.com"
    assert (i["Status"], i["AccountId"], i["ServiceArn"]) == ("PENDING_CREATION", ACCOUNT, arn)
    status = lambda: ar.describe_vpc_ingress_connection(VpcIngressConnectionArn=iarn)["VpcIngressConnection"]["Status"]
    msg = raises("InvalidStateException", ar.delete_vpc_ingress_connection, VpcIngressConnectionArn=iarn)
    assert msg == f"You can't delete VPC ingress connection {iarn} while it is in PENDING_CREATION status."
    assert wait_status(status, "AVAILABLE") == "AVAILABLE"
    assert ar.list_vpc_ingress_connections(Filter={"VpcEndpointId": "vpce-0123456789abcdef0"})[
        "VpcIngressConnectionSummaryList"][-1] == {"VpcIngressConnectionArn": iarn, "ServiceArn": arn}
    up = ar.update_vpc_ingress_connection(VpcIngressConnectionArn=iarn, IngressVpcConfiguration={
        "VpcId": vpc, "VpcEndpointId": "vpce-0fedcba9876543210"})["VpcIngressConnection"]
    assert up["Status"] == "PENDING_UPDATE" and ".vpce-0fedcba9876543210." in up["DomainName"]
    assert wait_status(status, "AVAILABLE") == "AVAILABLE"
    assert ar.delete_vpc_ingress_connection(VpcIngressConnectionArn=iarn)["VpcIngressConnection"][
        "Status"] == "PENDING_DELETION"
    assert wait_status(status, "DELETED") == "DELETED"
    assert ar.list_vpc_ingress_connections(Filter={"ServiceArn": arn})["VpcIngressConnectionSummaryList"] == []
    running(ar, arn)
    ar.delete_service(ServiceArn=arn)


def test_custom_domains_report_their_validation_records(ar, cumulo):
    svc = create(ar)["Service"]
    arn = svc["ServiceArn"]
    a = ar.associate_custom_domain(ServiceArn=arn, DomainName="app.example.com")
    assert (a["DNSTarget"], a["ServiceArn"]) == (svc["ServiceUrl"], arn)
    d = a["CustomDomain"]
    assert (d["DomainName"], d["EnableWWWSubdomain"], d["Status"]) == (
        "app.example.com", True, "PENDING_CERTIFICATE_DNS_VALIDATION")
    names = [r["Name"] for r in d["CertificateValidationRecords"]]
    assert len(names) == 2 and names[0].endswith(".app.example.com.") and names[1].endswith(".www.app.example.com.")
    for r in d["CertificateValidationRecords"]:
        assert re.fullmatch(r"_[0-9a-f]{32}\.(www\.)?app\.example\.com\.", r["Name"])
        assert r["Type"] == "CNAME" and r["Status"] == "PENDING_VALIDATION"
        assert re.fullmatch(r"_[0-9a-f]{32}\.[a-z]{10}\.acm-validations\.aws\.", r["Value"])
    bare = ar.associate_custom_domain(ServiceArn=arn, DomainName="api.example.com", EnableWWWSubdomain=False)
    assert len(bare["CustomDomain"]["CertificateValidationRecords"]) == 1
    msg = raises("InvalidRequestException", ar.associate_custom_domain, ServiceArn=arn, DomainName="app.example.com")
    assert msg == f"Domain app.example.com is already associated with service {arn}"
    described = ar.describe_custom_domains(ServiceArn=arn)
    assert described["DNSTarget"] == svc["ServiceUrl"]
    assert [c["DomainName"] for c in described["CustomDomains"]] == ["app.example.com", "api.example.com"]
    assert described["CustomDomains"][0] == d
    out = ar.disassociate_custom_domain(ServiceArn=arn, DomainName="app.example.com")
    assert out["CustomDomain"]["Status"] == "DELETING"
    msg = raises("ResourceNotFoundException", ar.disassociate_custom_domain, ServiceArn=arn,
                 DomainName="app.example.com")
    assert msg == f"Domain app.example.com is not associated with service {arn}"
    [api] = ar.describe_custom_domains(ServiceArn=arn)["CustomDomains"]
    assert api["DomainName"] == "api.example.com"
    # Its validation record written in a public zone covering the name makes the domain ACTIVE.
    r53 = cumulo.client("route53")
    zone = r53.create_hosted_zone(Name=f"{uuid.uuid4().hex[:8]}-zone.example.com",
                                  CallerReference=uuid.uuid4().hex)["HostedZone"]["Id"]
    zone_name = r53.get_hosted_zone(Id=zone)["HostedZone"]["Name"]
    assert api["Status"] == "PENDING_CERTIFICATE_DNS_VALIDATION"
    other = ar.associate_custom_domain(ServiceArn=arn, DomainName=zone_name.rstrip("."),
                                       EnableWWWSubdomain=False)["CustomDomain"]
    [record] = other["CertificateValidationRecords"]
    r53.change_resource_record_sets(HostedZoneId=zone, ChangeBatch={"Changes": [{
        "Action": "UPSERT", "ResourceRecordSet": {"Name": record["Name"], "Type": "CNAME", "TTL": 300,
                                                  "ResourceRecords": [{"Value": record["Value"]}]}}]})
    now = {c["DomainName"]: c for c in ar.describe_custom_domains(ServiceArn=arn)["CustomDomains"]}
    assert now[zone_name.rstrip(".")]["Status"] == "ACTIVE"
    assert now[zone_name.rstrip(".")]["CertificateValidationRecords"][0]["Status"] == "SUCCESS"
    assert now["api.example.com"]["Status"] == "PENDING_CERTIFICATE_DNS_VALIDATION"
    r53.change_resource_record_sets(HostedZoneId=zone, ChangeBatch={"Changes": [{
        "Action": "DELETE", "ResourceRecordSet": {"Name": record["Name"], "Type": "CNAME", "TTL": 300,
                                                  "ResourceRecords": [{"Value": record["Value"]}]}}]})
    r53.delete_hosted_zone(Id=zone)
    running(ar, arn)
    ar.delete_service(ServiceArn=arn)


def test_tags(ar):
    arn = create(ar, Tags=[{"Key": "a", "Value": "1"}])["Service"]["ServiceArn"]
    ar.tag_resource(ResourceArn=arn, Tags=[{"Key": "b", "Value": "2"}, {"Key": "a", "Value": "3"}])
    assert ar.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "a", "Value": "3"}, {"Key": "b", "Value": "2"}]
    ar.untag_resource(ResourceArn=arn, TagKeys=["a"])
    assert ar.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "b", "Value": "2"}]
    raises("InvalidRequestException", ar.tag_resource, ResourceArn=arn, Tags=[{"Key": "aws:x", "Value": "1"}])
    assert ar.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "b", "Value": "2"}]
    unknown = f"arn:aws:apprunner:{REGION}:{ACCOUNT}:vpcconnector/x/1/{'2' * 32}"
    msg = raises("ResourceNotFoundException", ar.list_tags_for_resource, ResourceArn=unknown)
    assert msg == f"Resource with ARN {unknown} not found"
    cfg = ar.create_observability_configuration(ObservabilityConfigurationName=f"t-{uid()}",
                                                Tags=[{"Key": "k", "Value": "v"}])["ObservabilityConfiguration"]
    assert ar.list_tags_for_resource(ResourceArn=cfg["ObservabilityConfigurationArn"])["Tags"] == [
        {"Key": "k", "Value": "v"}]
    running(ar, arn)
    ar.delete_service(ServiceArn=arn)


def test_state_survives_restart(tmp_path):
    server = CumuloServer(data_dir=tmp_path).start()
    try:
        ar = server.client("apprunner")
        ec2 = server.client("ec2")
        _, subnets, group = network(ec2)
        conn = ar.create_vpc_connector(VpcConnectorName="keep-conn", Subnets=subnets,
                                       SecurityGroups=[group])["VpcConnector"]
        ha = ar.create_auto_scaling_configuration(AutoScalingConfigurationName="high-availability",
                                                  MinSize=2)["AutoScalingConfiguration"]
        svc = ar.create_service(ServiceName="keep-svc", SourceConfiguration=SOURCE,
                                AutoScalingConfigurationArn=ha["AutoScalingConfigurationArn"],
                                NetworkConfiguration={"EgressConfiguration": {
                                    "EgressType": "VPC", "VpcConnectorArn": conn["VpcConnectorArn"]}})["Service"]
        ar.associate_custom_domain(ServiceArn=svc["ServiceArn"], DomainName="keep.example.com")
        before = ar.describe_service(ServiceArn=svc["ServiceArn"])["Service"]
        server.kill9()
        server = CumuloServer(data_dir=tmp_path).start()
        ar = server.client("apprunner")
        running(ar, svc["ServiceArn"])
        after = ar.describe_service(ServiceArn=svc["ServiceArn"])["Service"]
        for k in ("ServiceId", "ServiceUrl", "NetworkConfiguration", "AutoScalingConfigurationSummary",
                  "InstanceConfiguration", "SourceConfiguration"):
            assert after[k] == before[k], k
        assert ar.describe_vpc_connector(VpcConnectorArn=conn["VpcConnectorArn"])["VpcConnector"] == conn
        assert [c["DomainName"] for c in ar.describe_custom_domains(ServiceArn=svc["ServiceArn"])["CustomDomains"]] == [
            "keep.example.com"]
        assert [o["Type"] for o in ar.list_operations(ServiceArn=svc["ServiceArn"])["OperationSummaryList"]] == [
            "CREATE_SERVICE"]
    finally:
        server.stop()


RDWS_TEMPLATE = """
AWSTemplateFormatVersion: 2010-09-09
Description: A Request-Driven Web Service shaped like AWS Copilot's (workloads/rdws).
Parameters:
  AppName: {Type: String, Default: my-app}
  EnvName: {Type: String, Default: test}
  WorkloadName: {Type: String, Default: frontend}
  ContainerPort: {Type: String, Default: '80'}
  InstanceCPU: {Type: String, Default: 1 vCPU}
  InstanceMemory: {Type: String, Default: 2 GB}
  HealthCheckPath: {Type: String, Default: /healthz}
  HealthCheckInterval: {Type: String, Default: '10'}
  LogLevel: {Type: String, Default: debug}
Resources:
  Vpc:
    Type: AWS::EC2::VPC
    Properties: {CidrBlock: 10.30.0.0/16}
  PrivateSubnet1:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: !Ref Vpc, CidrBlock: 10.30.1.0/24}
  PrivateSubnet2:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: !Ref Vpc, CidrBlock: 10.30.2.0/24}
  ServiceSecurityGroup:
    Type: AWS::EC2::SecurityGroup
    Properties:
      GroupDescription: !Join ['', [!Ref AppName, '-', !Ref EnvName, !Ref WorkloadName]]
      VpcId: !Ref Vpc
  AccessRole:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Version: '2012-10-17'
        Statement:
          - Effect: Allow
            Principal: {Service: build.apprunner.amazonaws.com}
            Action: sts:AssumeRole
  InstanceRole:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Version: '2012-10-17'
        Statement:
          - Effect: Allow
            Principal: {Service: tasks.apprunner.amazonaws.com}
            Action: sts:AssumeRole
  Tracing:
    Type: AWS::AppRunner::ObservabilityConfiguration
    Properties:
      TraceConfiguration: {Vendor: AWSXRAY}
  VpcConnector:
    Type: AWS::AppRunner::VpcConnector
    Properties:
      Subnets: [!Ref PrivateSubnet1, !Ref PrivateSubnet2]
      SecurityGroups: [!Ref ServiceSecurityGroup]
      Tags:
        - {Key: copilot-application, Value: !Ref AppName}
        - {Key: copilot-environment, Value: !Ref EnvName}
        - {Key: copilot-service, Value: !Ref WorkloadName}
  Service:
    Type: AWS::AppRunner::Service
    Properties:
      ServiceName: !Sub '${AppName}-${EnvName}-${WorkloadName}'
      SourceConfiguration:
        AuthenticationConfiguration:
          AccessRoleArn: !GetAtt AccessRole.Arn
        AutoDeploymentsEnabled: false
        ImageRepository:
          ImageIdentifier: !Sub '${AWS::AccountId}.dkr.ecr.${AWS::Region}.amazonaws.com/my-app/frontend:latest'
          ImageRepositoryType: ECR
          ImageConfiguration:
            Port: !Ref ContainerPort
            RuntimeEnvironmentVariables:
              - {Name: COPILOT_APPLICATION_NAME, Value: !Ref AppName}
              - {Name: COPILOT_SERVICE_DISCOVERY_ENDPOINT, Value: }
              - {Name: LOG_LEVEL, Value: !Ref LogLevel}
            StartCommand: crazy diamond
      InstanceConfiguration:
        Cpu: !Ref InstanceCPU
        Memory: !Ref InstanceMemory
        InstanceRoleArn: !GetAtt InstanceRole.Arn
      HealthCheckConfiguration:
        Path: !Ref HealthCheckPath
        Protocol: HTTP
        Interval: !Ref HealthCheckInterval
      NetworkConfiguration:
        EgressConfiguration:
          EgressType: VPC
          VpcConnectorArn: !Ref VpcConnector
      ObservabilityConfiguration:
        ObservabilityEnabled: true
        ObservabilityConfigurationArn: !GetAtt Tracing.ObservabilityConfigurationArn
      AutoScalingConfigurationArn: !Sub 'arn:${AWS::Partition}:apprunner:${AWS::Region}:${AWS::AccountId}:autoscalingconfiguration/high-availability/3'
      Tags:
        - {Key: copilot-application, Value: !Ref AppName}
        - {Key: copilot-environment, Value: !Ref EnvName}
        - {Key: copilot-service, Value: !Ref WorkloadName}
Outputs:
  ServiceArn: {Value: !Ref Service}
  ServiceArnAtt: {Value: !GetAtt Service.ServiceArn}
  ServiceId: {Value: !GetAtt Service.ServiceId}
  ServiceUrl: {Value: !GetAtt Service.ServiceUrl}
  Status: {Value: !GetAtt Service.Status}
  ConnectorArn: {Value: !GetAtt VpcConnector.VpcConnectorArn}
  ConnectorRevision: {Value: !GetAtt VpcConnector.VpcConnectorRevision}
  TracingArn: {Value: !Ref Tracing}
  TracingRevision: {Value: !GetAtt Tracing.ObservabilityConfigurationRevision}
  VpcId: {Value: !Ref Vpc}
  InstanceRoleName: {Value: !Ref InstanceRole}
"""


def outputs(cfn, stack):
    return {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}


def test_copilot_rdws_stack_deploys_updates_and_deletes(cumulo, ar, ec2, tmp_path):
    cfn = cumulo.client("cloudformation")
    iam = cumulo.client("iam")
    app = f"app{uid()}"
    ha = [ar.create_auto_scaling_configuration(AutoScalingConfigurationName="high-availability", MinSize=2,
                                               MaxSize=10)["AutoScalingConfiguration"] for _ in range(3)]
    # Revision 3 of the name in this account (the module may already hold earlier revisions).
    target = next(c for c in ar.list_auto_scaling_configurations(
        AutoScalingConfigurationName="high-availability")["AutoScalingConfigurationSummaryList"]
        if c["AutoScalingConfigurationRevision"] == 3)
    template = tmp_path / "rdws.yaml"
    template.write_text(RDWS_TEMPLATE)
    stack = f"rdws-{uid()}"
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--capabilities", "CAPABILITY_IAM", "--parameter-overrides", f"AppName={app}")
    out = outputs(cfn, stack)
    arn = out["ServiceArn"]
    assert out["ServiceArnAtt"] == arn and out["Status"] == "RUNNING"
    s = ar.describe_service(ServiceArn=arn)["Service"]
    assert (s["ServiceName"], s["ServiceId"], s["ServiceUrl"], s["Status"]) == (
        f"{app}-test-frontend", out["ServiceId"], out["ServiceUrl"], "RUNNING")
    assert s["InstanceConfiguration"]["Cpu"] == "1024" and s["InstanceConfiguration"]["Memory"] == "2048"
    assert s["InstanceConfiguration"]["InstanceRoleArn"].endswith("/" + out["InstanceRoleName"])
    image = s["SourceConfiguration"]["ImageRepository"]
    assert image["ImageRepositoryType"] == "ECR"
    assert image["ImageConfiguration"] == {
        "Port": "80", "StartCommand": "crazy diamond",
        "RuntimeEnvironmentVariables": {"COPILOT_APPLICATION_NAME": app,
                                        "COPILOT_SERVICE_DISCOVERY_ENDPOINT": "", "LOG_LEVEL": "debug"}}
    assert s["SourceConfiguration"]["AutoDeploymentsEnabled"] is False
    assert s["HealthCheckConfiguration"] == {"Protocol": "HTTP", "Path": "/healthz", "Interval": 10, "Timeout": 2,
                                             "HealthyThreshold": 1, "UnhealthyThreshold": 5}
    assert s["NetworkConfiguration"]["EgressConfiguration"] == {"EgressType": "VPC",
                                                                "VpcConnectorArn": out["ConnectorArn"]}
    assert s["ObservabilityConfiguration"] == {"ObservabilityEnabled": True,
                                               "ObservabilityConfigurationArn": out["TracingArn"]}
    assert s["AutoScalingConfigurationSummary"]["AutoScalingConfigurationArn"] == target["AutoScalingConfigurationArn"]
    tags = {t["Key"]: t["Value"] for t in ar.list_tags_for_resource(ResourceArn=arn)["Tags"]}
    assert tags == {"copilot-application": app, "copilot-environment": "test", "copilot-service": "frontend"}
    conn = ar.describe_vpc_connector(VpcConnectorArn=out["ConnectorArn"])["VpcConnector"]
    assert conn["Status"] == "ACTIVE" and str(conn["VpcConnectorRevision"]) == out["ConnectorRevision"]
    subnets = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [out["VpcId"]]}])["Subnets"]
    assert sorted(conn["Subnets"]) == sorted(x["SubnetId"] for x in subnets)
    assert out["TracingRevision"] == "1"
    res = cfn.describe_stack_resource(StackName=stack, LogicalResourceId="Service")["StackResourceDetail"]
    assert res["PhysicalResourceId"] == arn
    assert "no container runs" in res.get("ResourceStatusReason", "")

    # An environment variable changes in place: the same service, an UPDATE_SERVICE operation.
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--capabilities", "CAPABILITY_IAM", "--parameter-overrides", f"AppName={app}", "LogLevel=info")
    assert outputs(cfn, stack)["ServiceArn"] == arn
    s = ar.describe_service(ServiceArn=arn)["Service"]
    assert s["Status"] == "RUNNING"
    assert s["SourceConfiguration"]["ImageRepository"]["ImageConfiguration"]["RuntimeEnvironmentVariables"][
        "LOG_LEVEL"] == "info"
    assert [o["Type"] for o in ar.list_operations(ServiceArn=arn)["OperationSummaryList"]] == [
        "UPDATE_SERVICE", "CREATE_SERVICE"]

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
    raises("ResourceNotFoundException", ar.describe_service, ServiceArn=arn)
    assert arn not in [x["ServiceArn"] for x in ar.list_services()["ServiceSummaryList"]]
    assert ar.describe_vpc_connector(VpcConnectorArn=out["ConnectorArn"])["VpcConnector"]["Status"] == "INACTIVE"
    assert out["ConnectorArn"] not in [c["VpcConnectorArn"] for c in ar.list_vpc_connectors()["VpcConnectors"]]
    assert ar.describe_observability_configuration(ObservabilityConfigurationArn=out["TracingArn"])[
        "ObservabilityConfiguration"]["Status"] == "INACTIVE"
    assert ec2.describe_vpcs(Filters=[{"Name": "vpc-id", "Values": [out["VpcId"]]}])["Vpcs"] == []
    raises("NoSuchEntity", iam.get_role, RoleName=out["InstanceRoleName"])
    for c in ha:
        ar.delete_auto_scaling_configuration(AutoScalingConfigurationArn=c["AutoScalingConfigurationArn"])


PRIVATE_TEMPLATE = """
Parameters:
  VpcId: {Type: String}
  EndpointId: {Type: String, Default: vpce-0123456789abcdef0}
Resources:
  Scaling:
    Type: AWS::AppRunner::AutoScalingConfiguration
    Properties: {MaxConcurrency: 50, MinSize: 2, MaxSize: '4'}
  Private:
    Type: AWS::AppRunner::Service
    Properties:
      SourceConfiguration:
        ImageRepository: {ImageIdentifier: public.ecr.aws/nginx/nginx:latest, ImageRepositoryType: ECR_PUBLIC}
      NetworkConfiguration:
        IngressConfiguration: {IsPubliclyAccessible: 'false'}
      AutoScalingConfigurationArn: !Ref Scaling
  Ingress:
    Type: AWS::AppRunner::VpcIngressConnection
    Properties:
      ServiceArn: !Ref Private
      IngressVpcConfiguration: {VpcId: !Ref VpcId, VpcEndpointId: !Ref EndpointId}
Outputs:
  ScalingArn: {Value: !Ref Scaling}
  ScalingRevision: {Value: !GetAtt Scaling.AutoScalingConfigurationRevision}
  Latest: {Value: !GetAtt Scaling.Latest}
  ServiceArn: {Value: !Ref Private}
  IngressArn: {Value: !Ref Ingress}
  IngressDomain: {Value: !GetAtt Ingress.DomainName}
  IngressStatus: {Value: !GetAtt Ingress.Status}
"""


def test_private_service_with_ingress_connection_stack(cumulo, ar, ec2, tmp_path):
    cfn = cumulo.client("cloudformation")
    vpc, _, _ = network(ec2)
    template = tmp_path / "private.yaml"
    template.write_text(PRIVATE_TEMPLATE)
    stack = f"arpriv-{uid()}"
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", f"VpcId={vpc}")
    out = outputs(cfn, stack)
    assert out["ScalingRevision"] == "1" and out["Latest"] == "true"
    c = ar.describe_auto_scaling_configuration(AutoScalingConfigurationArn=out["ScalingArn"])["AutoScalingConfiguration"]
    assert (c["MaxConcurrency"], c["MinSize"], c["MaxSize"], c["HasAssociatedService"]) == (50, 2, 4, True)
    # A generated name, as CloudFormation makes them, within the type's 32 characters.
    assert c["AutoScalingConfigurationName"].startswith(f"{stack}-") and len(c["AutoScalingConfigurationName"]) == 32
    i = ar.describe_vpc_ingress_connection(VpcIngressConnectionArn=out["IngressArn"])["VpcIngressConnection"]
    assert (i["Status"], i["DomainName"], out["IngressStatus"]) == ("AVAILABLE", out["IngressDomain"], "AVAILABLE")
    assert i["ServiceArn"] == out["ServiceArn"]
    s = ar.describe_service(ServiceArn=out["ServiceArn"])["Service"]
    assert s["NetworkConfiguration"]["IngressConfiguration"] == {"IsPubliclyAccessible": False}

    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", f"VpcId={vpc}", "EndpointId=vpce-0fedcba9876543210", "--tags", "team=b")
    i = ar.describe_vpc_ingress_connection(VpcIngressConnectionArn=out["IngressArn"])["VpcIngressConnection"]
    assert i["Status"] == "AVAILABLE" and i["IngressVpcConfiguration"]["VpcEndpointId"] == "vpce-0fedcba9876543210"
    # The stack's new tag reaches every resource in place, createOnly Tags or not.
    assert outputs(cfn, stack)["ScalingArn"] == out["ScalingArn"]
    for arn in (out["ScalingArn"], out["ServiceArn"], out["IngressArn"]):
        assert ar.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "team", "Value": "b"}], arn

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
    assert ar.describe_vpc_ingress_connection(VpcIngressConnectionArn=out["IngressArn"])[
        "VpcIngressConnection"]["Status"] == "DELETED"
    raises("ResourceNotFoundException", ar.describe_service, ServiceArn=out["ServiceArn"])
    assert ar.describe_auto_scaling_configuration(AutoScalingConfigurationArn=out["ScalingArn"])[
        "AutoScalingConfiguration"]["Status"] == "INACTIVE"
