"""Cloud Map through boto3 and the AWS CLI: namespaces as operations that complete, services,
instances, discovery, tags, errors in AWS's words, ECS services registering their tasks, and
restart survival."""

import time
import uuid

import botocore.config
import botocore.exceptions
import pytest

FAST = {"Delay": 1, "MaxAttempts": 20}


def name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def error(excinfo):
    e = excinfo.value.response["Error"]
    return e["Code"], e["Message"]


def default_subnet(server):
    """A subnet of the server's default VPC (tasks' interfaces come from EC2)."""
    ec2 = server.client("ec2")
    return ec2.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"][0]["SubnetId"]


@pytest.fixture(scope="module")
def vpc(cumulo):
    """The default VPC: a private DNS namespace's Route 53 zone needs a VPC EC2 knows."""
    ec2 = cumulo.client("ec2")
    return ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]


@pytest.fixture(scope="module")
def sd(cumulo):
    # DiscoverInstances has a `data-` host prefix; an endpoint URL is used as given.
    return cumulo.client("servicediscovery", inject_host_prefix=False)


def wait_success(sd, op_id):
    for _ in range(50):
        op = sd.get_operation(OperationId=op_id)["Operation"]
        if op["Status"] == "SUCCESS":
            return op
        time.sleep(0.05)
    raise AssertionError(f"operation {op_id} did not succeed")


def http_namespace(sd, n=None):
    n = n or name("ns")
    op = wait_success(sd, sd.create_http_namespace(Name=n)["OperationId"])
    return op["Targets"]["NAMESPACE"], n


def test_namespaces_are_operations_that_succeed(sd, vpc):
    n = name("local")
    op_id = sd.create_private_dns_namespace(Name=f"{n}.internal", Vpc=vpc,
                                            Description="d")["OperationId"]
    op = wait_success(sd, op_id)
    assert op["Type"] == "CREATE_NAMESPACE"
    ns_id = op["Targets"]["NAMESPACE"]
    assert ns_id.startswith("ns-")
    ns = sd.get_namespace(Id=ns_id)["Namespace"]
    assert ns["Type"] == "DNS_PRIVATE" and ns["Name"] == f"{n}.internal"
    assert ns["Arn"] == f"arn:aws:servicediscovery:us-east-1:000000000000:namespace/{ns_id}"
    assert ns["Properties"]["DnsProperties"]["HostedZoneId"].startswith("Z")
    assert ns["Description"] == "d"
    # The session's server holds other tests' operations too: read every page.
    pages = sd.get_paginator("list_operations").paginate()
    assert any(o["Id"] == op_id for page in pages for o in page["Operations"])
    http_id, _ = http_namespace(sd)
    listed = sd.list_namespaces(Filters=[{"Name": "TYPE", "Values": ["HTTP"]}])["Namespaces"]
    assert http_id in [x["Id"] for x in listed] and ns_id not in [x["Id"] for x in listed]

    with pytest.raises(botocore.exceptions.ClientError) as e:
        sd.get_namespace(Id="ns-doesnotexist0000")
    assert error(e)[0] == "NamespaceNotFound"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sd.get_operation(OperationId="nope")
    assert error(e)[0] == "OperationNotFound"
    wait_success(sd, sd.delete_namespace(Id=ns_id)["OperationId"])
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sd.get_namespace(Id=ns_id)
    assert error(e)[0] == "NamespaceNotFound"


def test_services_instances_discovery_and_in_use(sd, cumulo):
    ns_id, ns_name = http_namespace(sd)
    svc = sd.create_service(Name="api", NamespaceId=ns_id,
                            HealthCheckCustomConfig={"FailureThreshold": 1})["Service"]
    assert svc["Type"] == "HTTP" and svc["Id"].startswith("srv-")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sd.create_service(Name="api", NamespaceId=ns_id)
    assert error(e)[0] == "ServiceAlreadyExists"

    wait_success(sd, sd.register_instance(ServiceId=svc["Id"], InstanceId="i-1",
                                          Attributes={"color": "blue", "AWS_INSTANCE_IPV4": "10.0.0.5"})["OperationId"])
    sd.register_instance(ServiceId=svc["Id"], InstanceId="i-2", Attributes={"color": "red"})
    assert sd.get_instance(ServiceId=svc["Id"], InstanceId="i-1")["Instance"]["Attributes"]["color"] == "blue"
    assert sorted(i["Id"] for i in sd.list_instances(ServiceId=svc["Id"])["Instances"]) == ["i-1", "i-2"]
    found = sd.discover_instances(NamespaceName=ns_name, ServiceName="api",
                                  QueryParameters={"color": "blue"})["Instances"]
    assert [i["InstanceId"] for i in found] == ["i-1"]
    sd.update_instance_custom_health_status(ServiceId=svc["Id"], InstanceId="i-2", Status="UNHEALTHY")
    assert sd.get_instances_health_status(ServiceId=svc["Id"])["Status"] == {"i-1": "HEALTHY", "i-2": "UNHEALTHY"}
    healthy = sd.discover_instances(NamespaceName=ns_name, ServiceName="api")["Instances"]
    assert [i["InstanceId"] for i in healthy] == ["i-1"]
    assert sd.get_service(Id=svc["Id"])["Service"]["InstanceCount"] == 2

    with pytest.raises(botocore.exceptions.ClientError) as e:
        sd.delete_namespace(Id=ns_id)
    assert error(e)[0] == "ResourceInUse"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sd.delete_service(Id=svc["Id"])
    assert error(e)[0] == "ResourceInUse"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sd.deregister_instance(ServiceId=svc["Id"], InstanceId="i-9")
    assert error(e)[0] == "InstanceNotFound"

    cli = cumulo.aws("servicediscovery", "list-services", "--filters",
                     f"Name=NAMESPACE_ID,Values={ns_id},Condition=EQ")
    assert [s["Name"] for s in cli["Services"]] == ["api"]

    arn = svc["Arn"]
    sd.tag_resource(ResourceARN=arn, Tags=[{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}])
    sd.untag_resource(ResourceARN=arn, TagKeys=["a"])
    assert sd.list_tags_for_resource(ResourceARN=arn)["Tags"] == [{"Key": "b", "Value": "2"}]

    for i in ("i-1", "i-2"):
        sd.deregister_instance(ServiceId=svc["Id"], InstanceId=i)
    sd.delete_service(Id=svc["Id"])
    wait_success(sd, sd.delete_namespace(Id=ns_id)["OperationId"])


def test_dns_service_requires_address_attributes(sd, vpc):
    op = wait_success(sd, sd.create_private_dns_namespace(Name=f"{name('d')}.local",
                                                          Vpc=vpc)["OperationId"])
    ns_id = op["Targets"]["NAMESPACE"]
    svc = sd.create_service(Name="db", DnsConfig={"NamespaceId": ns_id, "DnsRecords": [
        {"Type": "A", "TTL": 60}, {"Type": "SRV", "TTL": 60}]})["Service"]
    assert svc["Type"] == "DNS_HTTP"
    assert svc["DnsConfig"]["RoutingPolicy"] == "MULTIVALUE"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sd.register_instance(ServiceId=svc["Id"], InstanceId="x", Attributes={"AWS_INSTANCE_PORT": "80"})
    assert error(e)[0] == "InvalidInput"
    assert sd.list_instances(ServiceId=svc["Id"])["Instances"] == []
    upd = sd.update_service(Id=svc["Id"], Service={"DnsConfig": {"DnsRecords": [{"Type": "A", "TTL": 30}]}})
    wait_success(sd, upd["OperationId"])
    assert sd.get_service(Id=svc["Id"])["Service"]["DnsConfig"]["DnsRecords"] == [{"Type": "A", "TTL": 30}]
    sd.delete_service(Id=svc["Id"])
    sd.delete_namespace(Id=ns_id)


def test_ecs_service_registers_its_tasks(cumulo, sd, vpc):
    ecs = cumulo.client("ecs")
    ns_id, ns_name = http_namespace(sd)
    reg = sd.create_service(Name="web", NamespaceId=ns_id)["Service"]
    cluster = name("c")
    ecs.create_cluster(clusterName=cluster)
    ecs.register_task_definition(
        family="sdweb", containerDefinitions=[{"name": "web", "image": "nginx"}],
        requiresCompatibilities=["FARGATE"], networkMode="awsvpc", cpu="256", memory="512")
    ecs.create_service(cluster=cluster, serviceName="web", taskDefinition="sdweb", desiredCount=2,
                       launchType="FARGATE",
                       networkConfiguration={"awsvpcConfiguration": {"subnets": [default_subnet(cumulo)]}},
                       serviceRegistries=[{"registryArn": reg["Arn"], "port": 8080}])
    ecs.get_waiter("services_stable").wait(cluster=cluster, services=["web"], WaiterConfig=FAST)
    tasks = ecs.describe_tasks(cluster=cluster, tasks=ecs.list_tasks(cluster=cluster)["taskArns"])["tasks"]
    ips = sorted(t["containers"][0]["networkInterfaces"][0]["privateIpv4Address"] for t in tasks)
    found = sd.discover_instances(NamespaceName=ns_name, ServiceName="web")["Instances"]
    assert sorted(i["Attributes"]["AWS_INSTANCE_IPV4"] for i in found) == ips
    assert {i["Attributes"]["AWS_INSTANCE_PORT"] for i in found} == {"8080"}
    assert {i["Attributes"]["ECS_CLUSTER_NAME"] for i in found} == {cluster}
    assert sorted(i["InstanceId"] for i in found) == sorted(t["taskArn"].rsplit("/", 1)[1] for t in tasks)

    ecs.delete_service(cluster=cluster, service="web", force=True)
    assert sd.list_instances(ServiceId=reg["Id"])["Instances"] == []

    # A registry with SRV records needs a port to register.
    op = wait_success(sd, sd.create_private_dns_namespace(Name=f"{name('srv')}.local",
                                                          Vpc=vpc)["OperationId"])
    srv = sd.create_service(Name="api", DnsConfig={
        "NamespaceId": op["Targets"]["NAMESPACE"],
        "DnsRecords": [{"Type": "A", "TTL": 10}, {"Type": "SRV", "TTL": 10}]})["Service"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.create_service(cluster=cluster, serviceName="srv", taskDefinition="sdweb",
                           launchType="FARGATE",
                           networkConfiguration={"awsvpcConfiguration": {"subnets": [default_subnet(cumulo)]}},
                           serviceRegistries=[{"registryArn": srv["Arn"]}])
    assert error(e) == ("InvalidParameterException",
                        "When specifying 'SRV' records in service discovery, the 'containerName' "
                        "and 'containerPort' or 'port' must be specified.")
    assert sd.list_instances(ServiceId=srv["Id"])["Instances"] == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.create_service(cluster=cluster, serviceName="web2", taskDefinition="sdweb",
                           launchType="FARGATE",
                           networkConfiguration={"awsvpcConfiguration": {"subnets": [default_subnet(cumulo)]}},
                           serviceRegistries=[{"registryArn": reg["Arn"] + "x"}])
    assert error(e)[0] == "InvalidParameterException"


def test_state_survives_restart(fresh_server):
    fresh_server.start()
    sd = fresh_server.client("servicediscovery")
    ns_id, _ = http_namespace(sd, "kept")
    svc = sd.create_service(Name="s", NamespaceId=ns_id)["Service"]
    sd.register_instance(ServiceId=svc["Id"], InstanceId="i", Attributes={"k": "v"})
    fresh_server.kill9()
    fresh_server.start()
    sd = fresh_server.client("servicediscovery")
    assert sd.get_namespace(Id=ns_id)["Namespace"]["ServiceCount"] == 1
    assert sd.get_instance(ServiceId=svc["Id"], InstanceId="i")["Instance"]["Attributes"] == {"k": "v"}


STACK_TEMPLATE = """
Parameters:
  Description:
    Type: String
    Default: first
  Vpc:
    Type: String
Resources:
  Namespace:
    Type: AWS::ServiceDiscovery::PrivateDnsNamespace
    Properties:
      Name: !Sub "${AWS::StackName}.internal"
      Vpc: !Ref Vpc
      Description: !Ref Description
      Properties:
        DnsProperties:
          SOA:
            TTL: 60
  Discovery:
    Type: AWS::ServiceDiscovery::Service
    Properties:
      Name: api
      NamespaceId: !Ref Namespace
      Description: !Ref Description
      DnsConfig:
        RoutingPolicy: MULTIVALUE
        DnsRecords:
          - Type: A
            TTL: "10"
      HealthCheckCustomConfig:
        FailureThreshold: 1
  Member:
    Type: AWS::ServiceDiscovery::Instance
    Properties:
      ServiceId: !Ref Discovery
      InstanceId: member-1
      InstanceAttributes:
        AWS_INSTANCE_IPV4: 10.0.0.9
Outputs:
  NamespaceId:
    Value: !GetAtt Namespace.Id
  NamespaceArn:
    Value: !GetAtt Namespace.Arn
  HostedZoneId:
    Value: !GetAtt Namespace.HostedZoneId
  ServiceId:
    Value: !Ref Discovery
  ServiceArn:
    Value: !GetAtt Discovery.Arn
  ServiceName:
    Value: !GetAtt Discovery.Name
  Member:
    Value: !Ref Member
"""


def test_cloudformation_deploy_update_delete(cumulo, sd, vpc, tmp_path):
    cfn = cumulo.client("cloudformation")
    stack = name("sd-stack")
    template = tmp_path / "sd.yaml"
    template.write_text(STACK_TEMPLATE)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", f"Vpc={vpc}")
    out = {o["OutputKey"]: o["OutputValue"]
           for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    ns = sd.get_namespace(Id=out["NamespaceId"])["Namespace"]
    assert ns["Arn"] == out["NamespaceArn"] and ns["Type"] == "DNS_PRIVATE"
    assert ns["Properties"]["DnsProperties"] == {"HostedZoneId": out["HostedZoneId"], "SOA": {"TTL": 60}}
    svc = sd.get_service(Id=out["ServiceId"])["Service"]
    assert (svc["Arn"], svc["Name"]) == (out["ServiceArn"], out["ServiceName"])
    assert svc["DnsConfig"]["DnsRecords"] == [{"Type": "A", "TTL": 10}]
    assert out["Member"] == "member-1"
    assert sd.get_instance(ServiceId=out["ServiceId"], InstanceId="member-1")["Instance"]["Attributes"] == {
        "AWS_INSTANCE_IPV4": "10.0.0.9"}

    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", f"Vpc={vpc}", "Description=second")
    assert sd.get_namespace(Id=out["NamespaceId"])["Namespace"]["Description"] == "second"
    assert sd.get_service(Id=out["ServiceId"])["Service"]["Description"] == "second"

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sd.get_namespace(Id=out["NamespaceId"])
    assert error(e)[0] == "NamespaceNotFound"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sd.get_service(Id=out["ServiceId"])
    assert error(e)[0] == "ServiceNotFound"


def test_ecs_service_connect_makes_and_removes_its_cloud_map_service(cumulo, sd):
    ecs = cumulo.client("ecs")
    ns_id, ns_name = http_namespace(sd)
    cluster = name("c")
    ecs.create_cluster(clusterName=cluster, serviceConnectDefaults={"namespace": ns_name})
    ecs.register_task_definition(
        family="scweb", requiresCompatibilities=["FARGATE"], networkMode="awsvpc", cpu="256", memory="512",
        containerDefinitions=[{"name": "web", "image": "nginx",
                               "portMappings": [{"containerPort": 8080, "name": "http"}]}])
    net = {"awsvpcConfiguration": {"subnets": [default_subnet(cumulo)]}}
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.create_service(cluster=cluster, serviceName="web", taskDefinition="scweb", launchType="FARGATE",
                           networkConfiguration=net, serviceConnectConfiguration={
                               "enabled": True, "namespace": "nope.local",
                               "services": [{"portName": "http"}]})
    assert error(e) == ("NamespaceNotFoundException", "Namespace not found.")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.create_service(cluster=cluster, serviceName="web", taskDefinition="scweb", launchType="FARGATE",
                           networkConfiguration=net, serviceConnectConfiguration={
                               "enabled": True, "services": [{"portName": "grpc"}]})
    assert error(e)[0] == "InvalidParameterException"
    assert sd.list_services(Filters=[{"Name": "NAMESPACE_ID", "Values": [ns_id]}])["Services"] == []

    svc = ecs.create_service(
        cluster=cluster, serviceName="web", taskDefinition="scweb", desiredCount=2, launchType="FARGATE",
        networkConfiguration=net, serviceConnectConfiguration={
            "enabled": True, "services": [{"portName": "http", "discoveryName": "web-sc",
                                           "clientAliases": [{"port": 80, "dnsName": "web"}]}]})["service"]
    [resource] = svc["deployments"][0]["serviceConnectResources"]
    assert resource["discoveryName"] == "web-sc"
    srv_id = resource["discoveryArn"].rsplit("/", 1)[1]
    ecs.get_waiter("services_stable").wait(cluster=cluster, services=["web"], WaiterConfig=FAST)
    instances = sd.list_instances(ServiceId=srv_id)["Instances"]
    assert len(instances) == 2
    assert {i["Attributes"]["AWS_INSTANCE_PORT"] for i in instances} == {"8080"}
    assert sd.list_tags_for_resource(ResourceARN=resource["discoveryArn"])["Tags"] == [
        {"Key": "AmazonECSManaged", "Value": "true"}]

    ecs.delete_service(cluster=cluster, service="web", force=True)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        sd.get_service(Id=srv_id)
    assert error(e)[0] == "ServiceNotFound"
    wait_success(sd, sd.delete_namespace(Id=ns_id)["OperationId"])
