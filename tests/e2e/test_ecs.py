"""ECS through boto3 and the AWS CLI: clusters, task definitions, services reaching a steady
state, tasks, tags, account settings, errors in AWS's words, restart survival and
CloudFormation."""

import time
import uuid

import botocore.exceptions
import pytest

CONTAINERS = [{"name": "web", "image": "public.ecr.aws/nginx/nginx:latest",
               "portMappings": [{"containerPort": 80}]}]
# Filled with a real subnet and group of the default VPC by `network` (tasks' interfaces come
# from EC2).
AWSVPC = {"awsvpcConfiguration": {"subnets": [], "securityGroups": []}}
FAST = {"Delay": 1, "MaxAttempts": 20}


def name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def error(excinfo):
    e = excinfo.value.response["Error"]
    return e["Code"], e["Message"]


@pytest.fixture(scope="module")
def ecs(cumulo):
    return cumulo.client("ecs")


@pytest.fixture(scope="module", autouse=True)
def network(cumulo):
    ec2 = cumulo.client("ec2")
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    subnets = sorted(s["SubnetId"] for s in ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"])[:2]
    group = ec2.create_security_group(GroupName=name("tasks"), Description="tasks", VpcId=vpc)["GroupId"]
    AWSVPC["awsvpcConfiguration"].update(subnets=subnets[:1], securityGroups=[group])
    return {"vpc": vpc, "subnets": subnets, "group": group}


def fargate_family(ecs, family=None, **extra):
    family = family or name("fam")
    ecs.register_task_definition(
        family=family, containerDefinitions=CONTAINERS, requiresCompatibilities=["FARGATE"],
        networkMode="awsvpc", cpu="256", memory="512", **extra)
    return family


def test_clusters_capacity_providers_settings_and_delete(ecs):
    n = name("c")
    c = ecs.create_cluster(
        clusterName=n, capacityProviders=["FARGATE", "FARGATE_SPOT"],
        defaultCapacityProviderStrategy=[{"capacityProvider": "FARGATE", "weight": 1, "base": 1}],
        settings=[{"name": "containerInsights", "value": "enabled"}],
        tags=[{"key": "team", "value": "a"}])["cluster"]
    assert c["clusterArn"] == f"arn:aws:ecs:us-east-1:000000000000:cluster/{n}"
    assert c["status"] == "ACTIVE"
    assert c["capacityProviders"] == ["FARGATE", "FARGATE_SPOT"]
    assert c["settings"] == [{"name": "containerInsights", "value": "enabled"}]
    assert c["clusterArn"] in ecs.list_clusters()["clusterArns"]

    d = ecs.describe_clusters(clusters=[n, "nope"], include=["TAGS"])
    assert d["clusters"][0]["tags"] == [{"key": "team", "value": "a"}]
    assert d["failures"] == [{"arn": "arn:aws:ecs:us-east-1:000000000000:cluster/nope",
                              "reason": "MISSING"}]

    u = ecs.put_cluster_capacity_providers(
        cluster=n, capacityProviders=["FARGATE"],
        defaultCapacityProviderStrategy=[{"capacityProvider": "FARGATE", "weight": 2}])["cluster"]
    assert u["capacityProviders"] == ["FARGATE"]
    assert u["defaultCapacityProviderStrategy"] == [{"capacityProvider": "FARGATE", "weight": 2}]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.put_cluster_capacity_providers(
            cluster=n, capacityProviders=["FARGATE"],
            defaultCapacityProviderStrategy=[{"capacityProvider": "FARGATE_SPOT", "weight": 1}])
    assert error(e)[0] == "InvalidParameterException"
    assert ecs.describe_clusters(clusters=[n])["clusters"][0]["defaultCapacityProviderStrategy"] == [
        {"capacityProvider": "FARGATE", "weight": 2}]

    s = ecs.update_cluster_settings(
        cluster=n, settings=[{"name": "containerInsights", "value": "disabled"}])["cluster"]
    assert s["settings"] == [{"name": "containerInsights", "value": "disabled"}]

    gone = ecs.delete_cluster(cluster=n)["cluster"]
    assert gone["status"] == "INACTIVE"
    assert ecs.describe_clusters(clusters=[n])["clusters"][0]["status"] == "INACTIVE"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.delete_cluster(cluster=n)
    assert error(e) == ("ClusterNotFoundException", "Cluster not found.")


def test_bad_cluster_input_is_refused_and_changes_nothing(ecs):
    before = ecs.list_clusters()["clusterArns"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.create_cluster(clusterName="bad name!")
    assert error(e)[0] == "InvalidParameterException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.create_cluster(clusterName=name("c"), capacityProviders=["NOPE"])
    assert error(e)[0] == "InvalidParameterException"
    assert ecs.list_clusters()["clusterArns"] == before


def test_task_definitions_revisions_deregister_and_delete(ecs):
    family = fargate_family(ecs)
    fargate_family(ecs, family)
    td = ecs.describe_task_definition(taskDefinition=family)["taskDefinition"]
    assert td["revision"] == 2
    assert td["taskDefinitionArn"].endswith(f":task-definition/{family}:2")
    assert td["compatibilities"] == ["EC2", "FARGATE"]
    assert td["cpu"] == "256" and td["memory"] == "512"
    assert td["containerDefinitions"][0]["portMappings"] == [
        {"containerPort": 80, "hostPort": 80, "protocol": "tcp"}]
    assert ecs.describe_task_definition(taskDefinition=f"{family}:1")["taskDefinition"]["revision"] == 1
    assert ecs.describe_task_definition(taskDefinition=td["taskDefinitionArn"])["taskDefinition"]["revision"] == 2

    arns = ecs.list_task_definitions(familyPrefix=family)["taskDefinitionArns"]
    assert [a.rsplit(":", 1)[1] for a in arns] == ["1", "2"]
    assert family in ecs.list_task_definition_families(familyPrefix=family)["families"]

    dereg = ecs.deregister_task_definition(taskDefinition=f"{family}:2")["taskDefinition"]
    assert dereg["status"] == "INACTIVE"
    assert ecs.describe_task_definition(taskDefinition=family)["taskDefinition"]["revision"] == 1
    assert len(ecs.list_task_definitions(familyPrefix=family, status="INACTIVE")["taskDefinitionArns"]) == 1

    out = ecs.delete_task_definitions(taskDefinitions=[f"{family}:2", f"{family}:1"])
    assert [t["status"] for t in out["taskDefinitions"]] == ["DELETE_IN_PROGRESS"]
    assert out["failures"][0]["reason"].startswith("The specified task definition is still in ACTIVE")

    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.describe_task_definition(taskDefinition=name("nofamily"))
    assert error(e) == ("ClientException", "Unable to describe task definition.")


def test_fargate_sizes_and_network_mode_are_validated(ecs):
    family = name("bad")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.register_task_definition(
            family=family, containerDefinitions=CONTAINERS, requiresCompatibilities=["FARGATE"],
            networkMode="awsvpc", cpu="1024", memory="1024")
    assert error(e) == ("ClientException",
                        "No Fargate configuration exists for given values: 1024 CPU, 1024 memory. "
                        "See the Amazon ECS documentation for the valid values.")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.register_task_definition(
            family=family, containerDefinitions=CONTAINERS, requiresCompatibilities=["FARGATE"],
            networkMode="bridge", cpu="256", memory="512")
    assert error(e) == ("ClientException", "Fargate only supports network mode \u2018awsvpc\u2019.")
    assert family not in ecs.list_task_definition_families(familyPrefix=family)["families"]


def test_service_reaches_steady_state_and_scales(cumulo, ecs):
    cluster = name("c")
    ecs.create_cluster(clusterName=cluster)
    family = fargate_family(ecs)
    svc = ecs.create_service(
        cluster=cluster, serviceName="web", taskDefinition=family, desiredCount=2,
        launchType="FARGATE", networkConfiguration=AWSVPC,
        deploymentConfiguration={"deploymentCircuitBreaker": {"enable": True, "rollback": True},
                                 "maximumPercent": 200, "minimumHealthyPercent": 50},
        serviceConnectConfiguration={"enabled": False})["service"]
    assert svc["status"] == "ACTIVE"
    assert svc["deployments"][0]["status"] == "PRIMARY"
    assert svc["deployments"][0]["rolloutState"] == "IN_PROGRESS"
    assert svc["deploymentConfiguration"]["deploymentCircuitBreaker"] == {"enable": True, "rollback": True}
    assert svc["deployments"][0]["serviceConnectConfiguration"] == {"enabled": False}

    ecs.get_waiter("services_stable").wait(cluster=cluster, services=["web"], WaiterConfig=FAST)
    s = ecs.describe_services(cluster=cluster, services=["web"])["services"][0]
    assert (s["desiredCount"], s["runningCount"], s["pendingCount"]) == (2, 2, 0)
    assert s["deployments"][0]["rolloutState"] == "COMPLETED"
    assert s["events"][0]["message"] == "(service web) has reached a steady state."
    assert s["events"][1]["message"].startswith("(service web) has started 2 tasks:")

    tasks = ecs.list_tasks(cluster=cluster, serviceName="web")["taskArns"]
    assert len(tasks) == 2
    described = ecs.describe_tasks(cluster=cluster, tasks=tasks)["tasks"]
    for t in described:
        assert t["lastStatus"] == "RUNNING" and t["group"] == "service:web"
        eni = t["attachments"][0]
        assert eni["type"] == "ElasticNetworkInterface" and eni["status"] == "ATTACHED"
        details = {d["name"]: d["value"] for d in eni["details"]}
        assert details["subnetId"] == AWSVPC["awsvpcConfiguration"]["subnets"][0]
        [eni] = cumulo.client("ec2").describe_network_interfaces(NetworkInterfaceIds=[details["networkInterfaceId"]])["NetworkInterfaces"]
        assert eni["PrivateIpAddress"] == details["privateIPv4Address"] and eni["RequesterManaged"] is True
        assert details["privateIPv4Address"] == t["containers"][0]["networkInterfaces"][0]["privateIpv4Address"]

    # The CLI sees the same service; a desired-count change scales within the deployment.
    cli = cumulo.aws("ecs", "update-service", "--cluster", cluster, "--service", "web",
                     "--desired-count", "3")
    assert cli["service"]["desiredCount"] == 3
    assert len(cli["service"]["deployments"]) == 1
    ecs.get_waiter("services_stable").wait(cluster=cluster, services=["web"], WaiterConfig=FAST)
    assert ecs.describe_services(cluster=cluster, services=["web"])["services"][0]["runningCount"] == 3

    # A new task definition is a new deployment; the old one drains away.
    fargate_family(ecs, family)
    u = ecs.update_service(cluster=cluster, service="web", taskDefinition=family)["service"]
    assert [d["status"] for d in u["deployments"]] == ["PRIMARY", "ACTIVE"]
    ecs.get_waiter("services_stable").wait(cluster=cluster, services=["web"], WaiterConfig=FAST)
    s = ecs.describe_services(cluster=cluster, services=["web"])["services"][0]
    assert len(s["deployments"]) == 1 and s["taskDefinition"].endswith(f"{family}:2")
    stopped = ecs.list_tasks(cluster=cluster, desiredStatus="STOPPED")["taskArns"]
    assert set(tasks) <= set(stopped)
    old = ecs.describe_tasks(cluster=cluster, tasks=tasks[:1])["tasks"][0]
    assert old["lastStatus"] == "STOPPED"
    assert old["stoppedReason"].startswith("Scaling activity initiated by (deployment ecs-svc/")

    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.delete_cluster(cluster=cluster)
    assert error(e) == ("ClusterContainsServicesException",
                        "The Cluster cannot be deleted while Services are active.")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.delete_service(cluster=cluster, service="web")
    assert error(e) == ("InvalidParameterException",
                        "The service cannot be stopped while it is scaled above 0.")
    d = ecs.delete_service(cluster=cluster, service="web", force=True)["service"]
    assert d["status"] == "DRAINING"
    ecs.get_waiter("services_inactive").wait(cluster=cluster, services=["web"], WaiterConfig=FAST)
    assert ecs.list_services(cluster=cluster)["serviceArns"] == []
    ecs.delete_cluster(cluster=cluster)


def test_create_service_refusals_change_nothing(ecs):
    cluster = name("c")
    ecs.create_cluster(clusterName=cluster)
    family = fargate_family(ecs)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.create_service(cluster=cluster, serviceName="s", taskDefinition=family,
                           desiredCount=1, launchType="FARGATE")
    assert error(e) == ("InvalidParameterException",
                        "Network Configuration must be provided when networkMode 'awsvpc' is specified.")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.create_service(cluster=name("nocluster"), serviceName="s", taskDefinition=family)
    assert error(e) == ("ClusterNotFoundException", "Cluster not found.")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.create_service(cluster=cluster, serviceName="s", taskDefinition=name("nofam"),
                           launchType="FARGATE", networkConfiguration=AWSVPC)
    assert error(e) == ("ClientException", "TaskDefinition not found.")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.create_service(cluster=cluster, serviceName="s", taskDefinition=family,
                           launchType="FARGATE", networkConfiguration=AWSVPC,
                           loadBalancers=[{"targetGroupArn": "arn:aws:elasticloadbalancing:us-east-1:000000000000:targetgroup/t/0123456789abcdef",
                                           "containerName": "nope", "containerPort": 80}])
    assert error(e) == ("InvalidParameterException",
                        "The container nope does not exist in the task definition.")
    assert ecs.list_services(cluster=cluster)["serviceArns"] == []
    ecs.delete_cluster(cluster=cluster)


def test_run_task_stop_task_and_waiters(ecs):
    cluster = name("c")
    ecs.create_cluster(clusterName=cluster)
    family = fargate_family(ecs)
    out = ecs.run_task(cluster=cluster, taskDefinition=family, count=2, launchType="FARGATE",
                       networkConfiguration=AWSVPC, startedBy="me",
                       tags=[{"key": "k", "value": "v"}])
    assert out["failures"] == []
    arns = [t["taskArn"] for t in out["tasks"]]
    assert [t["lastStatus"] for t in out["tasks"]] == ["PROVISIONING", "PROVISIONING"]
    assert out["tasks"][0]["desiredStatus"] == "RUNNING"
    ecs.get_waiter("tasks_running").wait(cluster=cluster, tasks=arns, WaiterConfig=FAST)
    t = ecs.describe_tasks(cluster=cluster, tasks=arns[:1], include=["TAGS"])["tasks"][0]
    assert t["lastStatus"] == "RUNNING" and t["startedBy"] == "me" and t["launchType"] == "FARGATE"
    assert t["tags"] == [{"key": "k", "value": "v"}]
    assert sorted(ecs.list_tasks(cluster=cluster, startedBy="me")["taskArns"]) == sorted(arns)

    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.delete_cluster(cluster=cluster)
    assert error(e) == ("ClusterContainsTasksException",
                        "The Cluster cannot be deleted while Tasks are active.")

    stopped = ecs.stop_task(cluster=cluster, task=arns[0], reason="done")["task"]
    assert stopped["desiredStatus"] == "STOPPED"
    ecs.stop_task(cluster=cluster, task=arns[1])
    ecs.get_waiter("tasks_stopped").wait(cluster=cluster, tasks=arns, WaiterConfig=FAST)
    t = ecs.describe_tasks(cluster=cluster, tasks=arns)["tasks"]
    assert [x["lastStatus"] for x in t] == ["STOPPED", "STOPPED"]
    assert t[0]["stoppedReason"] == "done" and t[0]["stopCode"] == "UserInitiated"
    assert t[0]["attachments"][0]["status"] == "DELETED"
    assert ecs.list_tasks(cluster=cluster)["taskArns"] == []

    ec2 = ecs.run_task(cluster=cluster, taskDefinition=family, launchType="EC2",
                       networkConfiguration=AWSVPC)
    assert ec2["tasks"] == []
    assert ec2["failures"][0]["reason"] == "No Container Instances were found in your cluster."
    ecs.delete_cluster(cluster=cluster)


def test_tags_and_account_settings(cumulo, ecs):
    cluster = name("c")
    arn = ecs.create_cluster(clusterName=cluster)["cluster"]["clusterArn"]
    ecs.tag_resource(resourceArn=arn, tags=[{"key": "a", "value": "1"}, {"key": "b", "value": "2"}])
    ecs.untag_resource(resourceArn=arn, tagKeys=["a"])
    assert ecs.list_tags_for_resource(resourceArn=arn)["tags"] == [{"key": "b", "value": "2"}]
    cli = cumulo.aws("ecs", "list-tags-for-resource", "--resource-arn", arn)
    assert cli["tags"] == [{"key": "b", "value": "2"}]

    ecs.put_account_setting_default(name="containerInsights", value="enabled")
    settings = ecs.list_account_settings(name="containerInsights")["settings"]
    assert settings[0]["value"] == "enabled"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.put_account_setting(name="nope", value="enabled")
    assert error(e)[0] == "InvalidParameterException"
    ecs.delete_cluster(cluster=cluster)


def test_unimplemented_operation_answers_501(ecs):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.list_container_instances()
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501


def test_state_survives_restart(fresh_server):
    fresh_server.start()
    ecs = fresh_server.client("ecs")
    ecs.create_cluster(clusterName="kept")
    family = fargate_family(ecs, "keptfam")
    ec2 = fresh_server.client("ec2")
    subnet = ec2.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"][0]["SubnetId"]
    ecs.create_service(cluster="kept", serviceName="s", taskDefinition=family, desiredCount=1,
                       launchType="FARGATE",
                       networkConfiguration={"awsvpcConfiguration": {"subnets": [subnet]}})
    ecs.get_waiter("services_stable").wait(cluster="kept", services=["s"], WaiterConfig=FAST)
    fresh_server.kill9()
    fresh_server.start()
    ecs = fresh_server.client("ecs")
    s = ecs.describe_services(cluster="kept", services=["s"])["services"][0]
    assert (s["status"], s["runningCount"], s["desiredCount"]) == ("ACTIVE", 1, 1)
    assert ecs.describe_task_definition(taskDefinition="keptfam")["taskDefinition"]["revision"] == 1
    assert len(ecs.list_tasks(cluster="kept")["taskArns"]) == 1


STACK_TEMPLATE = """
Parameters:
  Count:
    Type: Number
    Default: 2
  Memory:
    Type: String
    Default: "512"
Resources:
  Cluster:
    Type: AWS::ECS::Cluster
    Properties:
      CapacityProviders: [FARGATE, FARGATE_SPOT]
      ClusterSettings:
        - Name: containerInsights
          Value: enabled
      Configuration:
        ExecuteCommandConfiguration:
          Logging: DEFAULT
  Providers:
    Type: AWS::ECS::ClusterCapacityProviderAssociations
    Properties:
      Cluster: !Ref Cluster
      CapacityProviders: [FARGATE, FARGATE_SPOT]
      DefaultCapacityProviderStrategy:
        - CapacityProvider: FARGATE
          Weight: 1
  TaskDef:
    Type: AWS::ECS::TaskDefinition
    Properties:
      Family: !Sub "${AWS::StackName}-web"
      RequiresCompatibilities: [FARGATE]
      NetworkMode: awsvpc
      Cpu: "256"
      Memory: !Ref Memory
      ContainerDefinitions:
        - Name: web
          Image: public.ecr.aws/nginx/nginx:latest
          Essential: true
          PortMappings:
            - ContainerPort: 80
          DockerLabels:
            com.example.label: kept
          LogConfiguration:
            LogDriver: awslogs
            Options:
              awslogs-group: /ecs/web
              awslogs-region: us-east-1
              awslogs-stream-prefix: web
  Namespace:
    Type: AWS::ServiceDiscovery::HttpNamespace
    Properties:
      Name: !Sub "${AWS::StackName}.local"
  Discovery:
    Type: AWS::ServiceDiscovery::Service
    Properties:
      Name: web
      NamespaceId: !Ref Namespace
      HealthCheckCustomConfig:
        FailureThreshold: 1
  Service:
    Type: AWS::ECS::Service
    DependsOn: Providers
    Properties:
      Cluster: !Ref Cluster
      ServiceName: web
      TaskDefinition: !Ref TaskDef
      DesiredCount: !Ref Count
      LaunchType: FARGATE
      PlatformVersion: LATEST
      PropagateTags: SERVICE
      DeploymentConfiguration:
        DeploymentCircuitBreaker:
          Enable: true
          Rollback: true
        MinimumHealthyPercent: 100
        MaximumPercent: 200
      NetworkConfiguration:
        AwsvpcConfiguration:
          AssignPublicIp: ENABLED
          Subnets: [SUBNET_A, SUBNET_B]
          SecurityGroups: [SG_GROUP_ID]
      ServiceRegistries:
        - RegistryArn: !GetAtt Discovery.Arn
          Port: 80
      Tags:
        - Key: app
          Value: web
Outputs:
  ClusterName:
    Value: !Ref Cluster
  ClusterArn:
    Value: !GetAtt Cluster.Arn
  TaskDef:
    Value: !GetAtt TaskDef.TaskDefinitionArn
  ServiceRef:
    Value: !Ref Service
  ServiceName:
    Value: !GetAtt Service.Name
  NamespaceArn:
    Value: !GetAtt Namespace.Arn
  DiscoveryId:
    Value: !GetAtt Discovery.Id
"""


def test_cloudformation_deploy_update_delete(cumulo, ecs, network, tmp_path):
    cfn = cumulo.client("cloudformation")
    sd = cumulo.client("servicediscovery")
    stack = name("ecs-stack")
    template = tmp_path / "ecs.yaml"
    template.write_text(STACK_TEMPLATE.replace("SUBNET_A", network["subnets"][0]).replace("SUBNET_B", network["subnets"][1]).replace("SG_GROUP_ID", network["group"]))
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template))
    s = cfn.describe_stacks(StackName=stack)["Stacks"][0]
    assert s["StackStatus"] == "CREATE_COMPLETE"
    out = {o["OutputKey"]: o["OutputValue"] for o in s["Outputs"]}
    cluster = out["ClusterName"]
    assert out["ClusterArn"] == f"arn:aws:ecs:us-east-1:000000000000:cluster/{cluster}"
    assert out["ServiceRef"] == f"arn:aws:ecs:us-east-1:000000000000:service/{cluster}/web"
    assert out["ServiceName"] == "web"

    c = ecs.describe_clusters(clusters=[cluster])["clusters"][0]
    assert c["settings"] == [{"name": "containerInsights", "value": "enabled"}]
    assert c["defaultCapacityProviderStrategy"] == [{"capacityProvider": "FARGATE", "weight": 1}]
    assert c["configuration"] == {"executeCommandConfiguration": {"logging": "DEFAULT"}}
    td = ecs.describe_task_definition(taskDefinition=out["TaskDef"])["taskDefinition"]
    web = td["containerDefinitions"][0]
    assert web["dockerLabels"] == {"com.example.label": "kept"}
    assert web["logConfiguration"]["options"]["awslogs-stream-prefix"] == "web"
    assert web["portMappings"][0]["containerPort"] == 80
    svc = ecs.describe_services(cluster=cluster, services=["web"], include=["TAGS"])["services"][0]
    assert (svc["desiredCount"], svc["runningCount"], svc["pendingCount"]) == (2, 2, 0)
    assert svc["deploymentConfiguration"]["deploymentCircuitBreaker"] == {"enable": True, "rollback": True}
    assert {"key": "app", "value": "web"} in svc["tags"]
    tasks = ecs.describe_tasks(cluster=cluster, tasks=ecs.list_tasks(cluster=cluster)["taskArns"])["tasks"]
    assert [t["lastStatus"] for t in tasks] == ["RUNNING", "RUNNING"]
    res = cfn.describe_stack_resource(StackName=stack, LogicalResourceId="Service")["StackResourceDetail"]
    assert "no container runs" in res.get("ResourceStatusReason", "")
    instances = sd.list_instances(ServiceId=out["DiscoveryId"])["Instances"]
    assert len(instances) == 2

    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", "Count=3")
    assert cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"] == "UPDATE_COMPLETE"
    svc = ecs.describe_services(cluster=cluster, services=["web"])["services"][0]
    assert (svc["desiredCount"], svc["runningCount"]) == (3, 3)
    assert len(svc["deployments"]) == 1 and svc["taskDefinition"] == out["TaskDef"]
    assert len(sd.list_instances(ServiceId=out["DiscoveryId"])["Instances"]) == 3

    # A new size replaces the task definition: the service rolls to the new revision and the
    # old one is deregistered.
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", "Count=3", "Memory=1024")
    new_td = {o["OutputKey"]: o["OutputValue"]
              for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}["TaskDef"]
    assert new_td.endswith(":2") and out["TaskDef"].endswith(":1")
    svc = ecs.describe_services(cluster=cluster, services=["web"])["services"][0]
    assert svc["taskDefinition"] == new_td and len(svc["deployments"]) == 1
    assert svc["runningCount"] == 3 and svc["deployments"][0]["rolloutState"] == "COMPLETED"
    assert ecs.describe_task_definition(taskDefinition=out["TaskDef"])["taskDefinition"]["status"] == "INACTIVE"
    assert len(sd.list_instances(ServiceId=out["DiscoveryId"])["Instances"]) == 3

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
    assert ecs.describe_clusters(clusters=[cluster])["clusters"][0]["status"] == "INACTIVE"
    assert ecs.list_task_definitions(familyPrefix=f"{stack}-web")["taskDefinitionArns"] == []
    assert all(n["Name"] != f"{stack}.local" for n in sd.list_namespaces()["Namespaces"])


UNPLACEABLE = """
Parameters:
  Cluster:
    Type: String
Resources:
  TaskDef:
    Type: AWS::ECS::TaskDefinition
    Properties:
      RequiresCompatibilities: [EC2]
      ContainerDefinitions:
        - Name: web
          Image: public.ecr.aws/nginx/nginx:latest
          Memory: 128
  Service:
    Type: AWS::ECS::Service
    Properties:
      Cluster: !Ref Cluster
      ServiceName: web
      TaskDefinition: !Ref TaskDef
      LaunchType: EC2
      DesiredCount: 1
"""


def test_a_service_that_cannot_stabilize_is_rolled_back(cumulo, ecs):
    """An EC2 service in a cluster without container instances is created and never places a
    task: the resource fails with the service's own event, keeps the ARN it was created under,
    and the rollback deletes it, so the stack ends ROLLBACK_COMPLETE."""
    cfn = cumulo.client("cloudformation")
    stack = name("ecs-unstable")
    cluster = ecs.create_cluster(clusterName=name("unplaceable"))["cluster"]["clusterName"]
    cfn.create_stack(StackName=stack, TemplateBody=UNPLACEABLE,
                     Parameters=[{"ParameterKey": "Cluster", "ParameterValue": cluster}])
    deadline = time.time() + 90
    while (status := cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"]).endswith("_IN_PROGRESS"):
        assert time.time() < deadline, status
        time.sleep(0.5)
    assert status == "ROLLBACK_COMPLETE"
    events = [e for e in cfn.describe_stack_events(StackName=stack)["StackEvents"][::-1]
              if e["LogicalResourceId"] == "Service"]
    failed = next(e for e in events if e["ResourceStatus"] == "CREATE_FAILED")
    arn = failed["PhysicalResourceId"]
    assert arn == f"arn:aws:ecs:us-east-1:000000000000:service/{cluster}/web"
    assert failed["ResourceStatusReason"] == (
        'Resource handler returned message: "Service web did not stabilize: (service web) was unable to place a task '
        'because no container instance met all of its requirements. Reason: No Container Instances were found in your cluster." '
        "(HandlerErrorCode: NotStabilized)")
    assert [e["ResourceStatus"] for e in events] == [
        "CREATE_IN_PROGRESS", "CREATE_IN_PROGRESS", "CREATE_FAILED", "DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    assert events[1]["ResourceStatusReason"] == "Resource creation Initiated" and events[1]["PhysicalResourceId"] == arn
    # AWS shows a deleted service INACTIVE while it is remembered.
    [svc] = ecs.describe_services(cluster=cluster, services=["web"])["services"]
    assert (svc["serviceArn"], svc["status"]) == (arn, "INACTIVE")
    assert ecs.list_services(cluster=cluster)["serviceArns"] == []
    cfn.delete_stack(StackName=stack)
    ecs.delete_cluster(cluster=cluster)


def test_malformed_bodies_are_refused_and_change_nothing(cumulo, ecs):
    auth = ("Authorization", "AWS4-HMAC-SHA256 Credential=test/20240101/us-east-1/ecs/aws4_request, "
            "SignedHeaders=host, Signature=00")
    before = ecs.list_clusters()["clusterArns"]
    for op, body in (("CreateCluster", b"[1]"), ("CreateCluster", b"{nope"),
                     ("CreateCluster", b'{"clusterName": 5}'), ("CreateCluster", b'{"settings": "x"}'),
                     ("CreateService", b'{"serviceName": "s", "desiredCount": "two"}'),
                     ("RegisterTaskDefinition", b'{"family": "f", "containerDefinitions": "x"}')):
        r = cumulo.raw("POST", "/", headers=[
            ("X-Amz-Target", f"AmazonEC2ContainerServiceV20141113.{op}"),
            ("Content-Type", "application/x-amz-json-1.1"), auth], body=body)
        assert r.status == 400, (op, body, r.body)
    assert ecs.list_clusters()["clusterArns"] == before
    # A page token past the end is an empty page, not a failure.
    assert ecs.list_clusters(nextToken="18446744073709551615")["clusterArns"] == []


def test_a_service_behind_a_load_balancer_registers_its_tasks(cumulo, ecs, network):
    """Tasks' interfaces come from EC2 and their addresses become the target group's targets;
    a target group no load balancer uses is refused, as AWS refuses it."""
    elb, ec2 = cumulo.client("elbv2"), cumulo.client("ec2")
    lb = elb.create_load_balancer(Name=name("lb"), Subnets=network["subnets"])["LoadBalancers"][0]
    tg = elb.create_target_group(Name=name("tg"), Protocol="HTTP", Port=80, VpcId=network["vpc"], TargetType="ip")["TargetGroups"][0]
    cluster = name("c")
    ecs.create_cluster(clusterName=cluster)
    family = fargate_family(ecs)
    lbs = [{"targetGroupArn": tg["TargetGroupArn"], "containerName": "web", "containerPort": 80}]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        ecs.create_service(cluster=cluster, serviceName="web", taskDefinition=family, desiredCount=2,
                           launchType="FARGATE", networkConfiguration=AWSVPC, loadBalancers=lbs)
    assert error(e) == ("InvalidParameterException",
                        f"The target group with targetGroupArn {tg['TargetGroupArn']} does not have an associated load balancer.")
    elb.create_listener(LoadBalancerArn=lb["LoadBalancerArn"], Protocol="HTTP", Port=80,
                        DefaultActions=[{"Type": "forward", "TargetGroupArn": tg["TargetGroupArn"]}])
    ecs.create_service(cluster=cluster, serviceName="web", taskDefinition=family, desiredCount=2,
                       launchType="FARGATE", networkConfiguration=AWSVPC, loadBalancers=lbs)
    ecs.get_waiter("services_stable").wait(cluster=cluster, services=["web"], WaiterConfig=FAST)
    tasks = ecs.describe_tasks(cluster=cluster, tasks=ecs.list_tasks(cluster=cluster)["taskArns"])["tasks"]
    ips = sorted(t["containers"][0]["networkInterfaces"][0]["privateIpv4Address"] for t in tasks)
    health = elb.describe_target_health(TargetGroupArn=tg["TargetGroupArn"])["TargetHealthDescriptions"]
    assert sorted(h["Target"]["Id"] for h in health) == ips
    assert {(h["Target"]["Port"], h["TargetHealth"]["State"]) for h in health} == {(80, "healthy")}
    enis = ec2.describe_network_interfaces(Filters=[{"Name": "private-ip-address", "Values": ips}])["NetworkInterfaces"]
    assert len(enis) == 2
    ecs.delete_service(cluster=cluster, service="web", force=True)
    ecs.get_waiter("services_inactive").wait(cluster=cluster, services=["web"], WaiterConfig=FAST)
    ecs.get_waiter("tasks_stopped").wait(cluster=cluster, tasks=[t["taskArn"] for t in tasks], WaiterConfig=FAST)
    assert elb.describe_target_health(TargetGroupArn=tg["TargetGroupArn"])["TargetHealthDescriptions"] == []
    assert ec2.describe_network_interfaces(Filters=[{"Name": "private-ip-address", "Values": ips}])["NetworkInterfaces"] == []
    elb.delete_load_balancer(LoadBalancerArn=lb["LoadBalancerArn"])
    elb.delete_target_group(TargetGroupArn=tg["TargetGroupArn"])
