"""Application Auto Scaling through boto3 and the AWS CLI: scalable targets (an ECS target must
name an existing service), target-tracking policies and the CloudWatch alarms AWS makes for them,
step policies, scheduled actions, tags, errors in AWS's words with nothing changed, restart
survival, and a CloudFormation stack (ECS service, scalable target, target-tracking policy,
CloudWatch alarms, a composite alarm and a dashboard) deployed, updated and deleted with the CLI."""

import json
import time
import uuid

import botocore.exceptions
import pytest

FAST = {"Delay": 1, "MaxAttempts": 30}
CONTAINERS = [{"name": "web", "image": "public.ecr.aws/nginx/nginx:latest"}]


def name(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def error(excinfo):
    e = excinfo.value.response
    return e["Error"]["Code"], e["Error"]["Message"]


@pytest.fixture(scope="module")
def aas(cumulo):
    return cumulo.client("application-autoscaling")


@pytest.fixture(scope="module")
def cw(cumulo):
    return cumulo.client("cloudwatch")


@pytest.fixture(scope="module")
def network(cumulo):
    ec2 = cumulo.client("ec2")
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    subnet = sorted(s["SubnetId"] for s in ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"])[0]
    group = ec2.create_security_group(GroupName=name("aas"), Description="aas", VpcId=vpc)["GroupId"]
    return {"vpc": vpc, "subnet": subnet, "group": group}


CREATED = []


@pytest.fixture(scope="module", autouse=True)
def remove_services(cumulo):
    """The services' tasks hold addresses in the default VPC's subnet: stop them afterwards, so
    the modules that count the default subnets' free addresses see them all."""
    yield
    ecs = cumulo.client("ecs")
    for cluster in CREATED:
        ecs.delete_service(cluster=cluster, service="web", force=True)
    for cluster in CREATED:
        # The tasks stop in their own time (deprovisioning, then STOPPED).
        for _ in range(300):
            try:
                ecs.delete_cluster(cluster=cluster)
                break
            except ecs.exceptions.ClusterContainsTasksException:
                time.sleep(0.1)


def ecs_service(client, network, keep=True):
    """An ECS service with one running task; `keep` lists it for the module's clean-up (a
    server of the test's own is gone by then)."""
    ecs = client("ecs")
    cluster = name("c")
    if keep:
        CREATED.append(cluster)
    ecs.create_cluster(clusterName=cluster)
    family = name("fam")
    ecs.register_task_definition(family=family, containerDefinitions=CONTAINERS, requiresCompatibilities=["FARGATE"],
                                 networkMode="awsvpc", cpu="256", memory="512")
    ecs.create_service(cluster=cluster, serviceName="web", taskDefinition=family, desiredCount=1, launchType="FARGATE",
                       networkConfiguration={"awsvpcConfiguration": {"subnets": [network["subnet"]],
                                                                     "securityGroups": [network["group"]]}})
    return f"service/{cluster}/web"


def target(resource):
    return {"ServiceNamespace": "ecs", "ResourceId": resource, "ScalableDimension": "ecs:service:DesiredCount"}


def test_targets_policies_alarms_and_scheduled_actions(cumulo, aas, cw, network):
    resource = ecs_service(cumulo.client, network)
    arn = aas.register_scalable_target(**target(resource), MinCapacity=1, MaxCapacity=4,
                                       Tags={"team": "a"})["ScalableTargetARN"]
    assert arn.startswith("arn:aws:application-autoscaling:us-east-1:000000000000:scalable-target/")
    [t] = aas.describe_scalable_targets(ServiceNamespace="ecs", ResourceIds=[resource])["ScalableTargets"]
    assert (t["MinCapacity"], t["MaxCapacity"], t["ScalableTargetARN"]) == (1, 4, arn)
    assert t["RoleARN"].endswith("AWSServiceRoleForApplicationAutoScaling_ECSService")
    # Registering again updates in place and keeps the ARN.
    assert aas.register_scalable_target(**target(resource), MaxCapacity=6)["ScalableTargetARN"] == arn
    assert aas.describe_scalable_targets(ServiceNamespace="ecs", ResourceIds=[resource])["ScalableTargets"][0]["MaxCapacity"] == 6

    policy = aas.put_scaling_policy(PolicyName="cpu", **target(resource), PolicyType="TargetTrackingScaling",
                                    TargetTrackingScalingPolicyConfiguration={
                                        "TargetValue": 60.0,
                                        "PredefinedMetricSpecification": {"PredefinedMetricType": "ECSServiceAverageCPUUtilization"},
                                        "ScaleInCooldown": 60, "ScaleOutCooldown": 30})
    assert ":scalingPolicy:" in policy["PolicyARN"] and policy["PolicyARN"].endswith(f"resource/ecs/{resource}:policyName/cpu")
    names = sorted(a["AlarmName"] for a in policy["Alarms"])
    assert len(names) == 2 and all(n.startswith(f"TargetTracking-{resource}-Alarm") for n in names)
    high = [n for n in names if "-AlarmHigh-" in n][0]
    low = [n for n in names if "-AlarmLow-" in n][0]
    alarms = {a["AlarmName"]: a for a in cw.describe_alarms(AlarmNames=names)["MetricAlarms"]}
    cluster = resource.split("/")[1]
    assert alarms[high]["MetricName"] == "CPUUtilization" and alarms[high]["Namespace"] == "AWS/ECS"
    assert alarms[high]["Dimensions"] == [{"Name": "ClusterName", "Value": cluster}, {"Name": "ServiceName", "Value": "web"}]
    assert (alarms[high]["Threshold"], alarms[high]["ComparisonOperator"], alarms[high]["EvaluationPeriods"]) == (60.0, "GreaterThanThreshold", 3)
    assert (alarms[low]["Threshold"], alarms[low]["ComparisonOperator"], alarms[low]["EvaluationPeriods"]) == (54.0, "LessThanThreshold", 15)
    assert alarms[high]["AlarmActions"] == [policy["PolicyARN"]]
    [p] = aas.describe_scaling_policies(ServiceNamespace="ecs", ResourceId=resource)["ScalingPolicies"]
    assert p["PolicyType"] == "TargetTrackingScaling" and p["TargetTrackingScalingPolicyConfiguration"]["TargetValue"] == 60.0

    # Updating keeps the alarms' names; DisableScaleIn drops the low alarm.
    again = aas.put_scaling_policy(PolicyName="cpu", **target(resource), PolicyType="TargetTrackingScaling",
                                   TargetTrackingScalingPolicyConfiguration={
                                       "TargetValue": 70.0, "DisableScaleIn": True,
                                       "PredefinedMetricSpecification": {"PredefinedMetricType": "ECSServiceAverageCPUUtilization"}})
    assert again["PolicyARN"] == policy["PolicyARN"] and [a["AlarmName"] for a in again["Alarms"]] == [high]
    assert cw.describe_alarms(AlarmNames=[low])["MetricAlarms"] == []
    assert cw.describe_alarms(AlarmNames=[high])["MetricAlarms"][0]["Threshold"] == 70.0

    step = aas.put_scaling_policy(PolicyName="step", **target(resource), PolicyType="StepScaling",
                                  StepScalingPolicyConfiguration={
                                      "AdjustmentType": "ChangeInCapacity", "Cooldown": 60,
                                      "StepAdjustments": [{"MetricIntervalLowerBound": 0, "ScalingAdjustment": 1}]})
    assert step["Alarms"] == []
    [sp] = aas.describe_scaling_policies(ServiceNamespace="ecs", ResourceId=resource, PolicyNames=["step"])["ScalingPolicies"]
    assert sp["StepScalingPolicyConfiguration"]["StepAdjustments"] == [{"MetricIntervalLowerBound": 0.0, "ScalingAdjustment": 1}]

    # Customized metrics: one metric (Copilot's backlog per task), or metric math.
    backlog = aas.put_scaling_policy(PolicyName="backlog", **target(resource), PolicyType="TargetTrackingScaling",
                                     TargetTrackingScalingPolicyConfiguration={"TargetValue": 900.0, "CustomizedMetricSpecification": {
                                         "Namespace": "app-env-worker", "MetricName": "BacklogPerTask", "Statistic": "Average",
                                         "Dimensions": [{"Name": "QueueName", "Value": "q"}], "Unit": "Count"}})
    [b] = [a for a in cw.describe_alarms(AlarmNames=[x["AlarmName"] for x in backlog["Alarms"]])["MetricAlarms"]
           if "-AlarmHigh-" in a["AlarmName"]]
    assert (b["Namespace"], b["MetricName"], b["Unit"], b["Threshold"]) == ("app-env-worker", "BacklogPerTask", "Count", 900.0)
    math = aas.put_scaling_policy(PolicyName="math", **target(resource), PolicyType="TargetTrackingScaling",
                                  TargetTrackingScalingPolicyConfiguration={"TargetValue": 10.0, "CustomizedMetricSpecification": {
                                      "Metrics": [
                                          {"Id": "m1", "MetricStat": {"Metric": {"Namespace": "app", "MetricName": "backlog"}, "Stat": "Sum"},
                                           "ReturnData": False},
                                          {"Id": "e1", "Expression": "m1 / 2", "ReturnData": True}]}})
    [m] = [a for a in cw.describe_alarms(AlarmNames=[x["AlarmName"] for x in math["Alarms"]])["MetricAlarms"]
           if "-AlarmHigh-" in a["AlarmName"]]
    assert m["Metrics"][0]["MetricStat"]["Period"] == 60 and m["Metrics"][1]["Expression"] == "m1 / 2"
    aas.delete_scaling_policy(PolicyName="math", **target(resource))
    assert cw.describe_alarms(AlarmNames=[x["AlarmName"] for x in math["Alarms"]])["MetricAlarms"] == []

    aas.put_scheduled_action(ServiceNamespace="ecs", ScheduledActionName="night", ResourceId=resource,
                             ScalableDimension="ecs:service:DesiredCount", Schedule="cron(0 22 * * ? *)",
                             ScalableTargetAction={"MinCapacity": 1, "MaxCapacity": 2})
    [s] = aas.describe_scheduled_actions(ServiceNamespace="ecs", ResourceId=resource)["ScheduledActions"]
    assert s["Schedule"] == "cron(0 22 * * ? *)" and s["ScalableTargetAction"] == {"MinCapacity": 1, "MaxCapacity": 2}
    assert aas.describe_scaling_activities(ServiceNamespace="ecs", ResourceId=resource)["ScalingActivities"] == []

    aas.tag_resource(ResourceARN=arn, Tags={"env": "prod"})
    aas.untag_resource(ResourceARN=arn, TagKeys=["team"])
    assert aas.list_tags_for_resource(ResourceARN=arn)["Tags"] == {"env": "prod"}

    aas.delete_scheduled_action(ServiceNamespace="ecs", ScheduledActionName="night", ResourceId=resource,
                                ScalableDimension="ecs:service:DesiredCount")
    aas.delete_scaling_policy(PolicyName="cpu", **target(resource))
    assert cw.describe_alarms(AlarmNames=[high])["MetricAlarms"] == []
    # Deregistering takes the remaining policy with it.
    aas.deregister_scalable_target(**target(resource))
    assert aas.describe_scalable_targets(ServiceNamespace="ecs", ResourceIds=[resource])["ScalableTargets"] == []
    assert aas.describe_scaling_policies(ServiceNamespace="ecs", ResourceId=resource)["ScalingPolicies"] == []
    assert cw.describe_alarms(AlarmNames=[x["AlarmName"] for x in backlog["Alarms"]])["MetricAlarms"] == []


def test_refusals_change_nothing(cumulo, aas, network):
    resource = ecs_service(cumulo.client, network)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        aas.register_scalable_target(**target("service/nocluster/nosvc"), MinCapacity=1, MaxCapacity=2)
    assert error(e) == ("ValidationException", "ECS service doesn't exist: service/nocluster/nosvc")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        aas.register_scalable_target(ServiceNamespace="ecs", ResourceId=resource, ScalableDimension="dynamodb:table:ReadCapacityUnits",
                                     MinCapacity=1, MaxCapacity=2)
    assert error(e) == ("ValidationException", "Unsupported service namespace, resource type or scalable dimension")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        aas.register_scalable_target(**target(resource), MinCapacity=5, MaxCapacity=2)
    assert error(e)[0] == "ValidationException"
    assert aas.describe_scalable_targets(ServiceNamespace="ecs", ResourceIds=[resource])["ScalableTargets"] == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        aas.put_scaling_policy(PolicyName="p", **target(resource), PolicyType="StepScaling",
                               StepScalingPolicyConfiguration={"AdjustmentType": "ChangeInCapacity"})
    assert error(e) == ("ObjectNotFoundException",
                        f"No scalable target registered for service namespace: ecs, resource ID: {resource}, scalable dimension: ecs:service:DesiredCount")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        aas.deregister_scalable_target(**target(resource))
    assert error(e)[0] == "ObjectNotFoundException"
    aas.register_scalable_target(**target(resource), MinCapacity=1, MaxCapacity=2)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        aas.delete_scaling_policy(PolicyName="ghost", **target(resource))
    assert error(e) == ("ObjectNotFoundException",
                        f"No scaling policy found for service namespace: ecs, resource ID: {resource}, scalable dimension: ecs:service:DesiredCount, policy name: ghost")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        aas.put_scheduled_action(ServiceNamespace="ecs", ScheduledActionName="bad", ResourceId=resource,
                                 ScalableDimension="ecs:service:DesiredCount", Schedule="every day")
    assert error(e)[0] == "ValidationException"
    assert aas.describe_scheduled_actions(ServiceNamespace="ecs", ResourceId=resource)["ScheduledActions"] == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        aas.get_predictive_scaling_forecast(**target(resource), PolicyName="p",
                                            StartTime="2026-01-01T00:00:00Z", EndTime="2026-01-02T00:00:00Z")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501
    aas.deregister_scalable_target(**target(resource))


def test_cli_and_restart(fresh_server):
    fresh_server.start()
    net = {"subnet": fresh_server.client("ec2").describe_subnets(
        Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"][0]["SubnetId"]}
    net["group"] = fresh_server.client("ec2").describe_security_groups(GroupNames=["default"])["SecurityGroups"][0]["GroupId"]
    resource = ecs_service(fresh_server.client, net, keep=False)
    fresh_server.aws("application-autoscaling", "register-scalable-target", "--service-namespace", "ecs",
                     "--resource-id", resource, "--scalable-dimension", "ecs:service:DesiredCount",
                     "--min-capacity", "1", "--max-capacity", "3")
    out = fresh_server.aws("application-autoscaling", "put-scaling-policy", "--policy-name", "cpu",
                           "--service-namespace", "ecs", "--resource-id", resource,
                           "--scalable-dimension", "ecs:service:DesiredCount", "--policy-type", "TargetTrackingScaling",
                           "--target-tracking-scaling-policy-configuration",
                           json.dumps({"TargetValue": 50, "PredefinedMetricSpecification": {
                               "PredefinedMetricType": "ECSServiceAverageMemoryUtilization"}}))
    assert len(out["Alarms"]) == 2
    fresh_server.kill9()
    fresh_server.start()
    listed = fresh_server.aws("application-autoscaling", "describe-scalable-targets", "--service-namespace", "ecs")
    assert [t["ResourceId"] for t in listed["ScalableTargets"]] == [resource]
    [p] = fresh_server.aws("application-autoscaling", "describe-scaling-policies", "--service-namespace", "ecs")["ScalingPolicies"]
    assert p["PolicyARN"] == out["PolicyARN"]
    alarms = fresh_server.client("cloudwatch").describe_alarms(AlarmNames=[a["AlarmName"] for a in out["Alarms"]])
    assert sorted(a["MetricName"] for a in alarms["MetricAlarms"]) == ["MemoryUtilization", "MemoryUtilization"]


STACK_TEMPLATE = """
Parameters:
  Target:
    Type: Number
    Default: 50
  Threshold:
    Type: Number
    Default: 80
  Title:
    Type: String
    Default: first
Resources:
  Cluster:
    Type: AWS::ECS::Cluster
  TaskDef:
    Type: AWS::ECS::TaskDefinition
    Properties:
      RequiresCompatibilities: [FARGATE]
      NetworkMode: awsvpc
      Cpu: "256"
      Memory: "512"
      ContainerDefinitions:
        - Name: web
          Image: public.ecr.aws/nginx/nginx:latest
  Service:
    Type: AWS::ECS::Service
    Properties:
      Cluster: !Ref Cluster
      ServiceName: web
      TaskDefinition: !Ref TaskDef
      DesiredCount: 1
      LaunchType: FARGATE
      NetworkConfiguration:
        AwsvpcConfiguration:
          Subnets: [SUBNET]
          SecurityGroups: [GROUP]
  ScalableTarget:
    Type: AWS::ApplicationAutoScaling::ScalableTarget
    Properties:
      ServiceNamespace: ecs
      ScalableDimension: ecs:service:DesiredCount
      ResourceId: !Join ["/", [service, !Ref Cluster, !GetAtt Service.Name]]
      MinCapacity: 1
      MaxCapacity: 4
      ScheduledActions:
        - ScheduledActionName: nightly
          Schedule: cron(0 22 * * ? *)
          ScalableTargetAction:
            MinCapacity: 1
            MaxCapacity: 1
  CpuPolicy:
    Type: AWS::ApplicationAutoScaling::ScalingPolicy
    Properties:
      PolicyName: cpu
      PolicyType: TargetTrackingScaling
      ScalingTargetId: !Ref ScalableTarget
      TargetTrackingScalingPolicyConfiguration:
        TargetValue: !Ref Target
        PredefinedMetricSpecification:
          PredefinedMetricType: ECSServiceAverageCPUUtilization
  Errors:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmDescription: too many errors
      Namespace: StackApp
      MetricName: Errors
      Dimensions:
        - Name: Service
          Value: !GetAtt Service.Name
      Statistic: Sum
      Period: 60
      EvaluationPeriods: 1
      Threshold: !Ref Threshold
      ComparisonOperator: GreaterThanThreshold
      TreatMissingData: notBreaching
      Tags:
        - Key: team
          Value: web
  Latency:
    Type: AWS::CloudWatch::Alarm
    Properties:
      AlarmName: !Sub "${AWS::StackName}-latency"
      Metrics:
        - Id: p
          MetricStat:
            Metric:
              Namespace: StackApp
              MetricName: Latency
            Period: 60
            Stat: p90
          ReturnData: false
        - Id: ms
          Expression: p * 1000
          ReturnData: true
      EvaluationPeriods: 2
      DatapointsToAlarm: 1
      Threshold: 500
      ComparisonOperator: GreaterThanThreshold
  Either:
    Type: AWS::CloudWatch::CompositeAlarm
    Properties:
      AlarmRule: !Sub 'ALARM("${Errors}") OR ALARM("${Latency}")'
      AlarmDescription: !Ref Title
  Board:
    Type: AWS::CloudWatch::Dashboard
    Properties:
      DashboardBody: !Sub '{"widgets":[{"type":"text","x":0,"y":0,"width":6,"height":2,"properties":{"markdown":"${Title}"}}]}'
Outputs:
  TargetId:
    Value: !Ref ScalableTarget
  PolicyArn:
    Value: !GetAtt CpuPolicy.Arn
  PolicyRef:
    Value: !Ref CpuPolicy
  ErrorsName:
    Value: !Ref Errors
  ErrorsArn:
    Value: !GetAtt Errors.Arn
  LatencyName:
    Value: !Ref Latency
  EitherName:
    Value: !Ref Either
  EitherArn:
    Value: !GetAtt Either.Arn
  Board:
    Value: !Ref Board
  Cluster:
    Value: !Ref Cluster
"""


def test_cloudformation_deploy_update_delete(cumulo, aas, cw, network, tmp_path):
    cfn = cumulo.client("cloudformation")
    stack = name("cw-aas")
    template = tmp_path / "stack.yaml"
    template.write_text(STACK_TEMPLATE.replace("SUBNET", network["subnet"]).replace("GROUP", network["group"]))
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template))
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    resource = f"service/{out['Cluster']}/web"
    assert out["TargetId"] == f"{resource}|ecs:service:DesiredCount|ecs"
    assert out["PolicyRef"] == out["PolicyArn"] and ":scalingPolicy:" in out["PolicyArn"]
    [t] = aas.describe_scalable_targets(ServiceNamespace="ecs", ResourceIds=[resource])["ScalableTargets"]
    assert (t["MinCapacity"], t["MaxCapacity"]) == (1, 4)
    [s] = aas.describe_scheduled_actions(ServiceNamespace="ecs", ResourceId=resource)["ScheduledActions"]
    assert s["ScheduledActionName"] == "nightly"
    [p] = aas.describe_scaling_policies(ServiceNamespace="ecs", ResourceId=resource)["ScalingPolicies"]
    assert p["PolicyARN"] == out["PolicyArn"] and p["TargetTrackingScalingPolicyConfiguration"]["TargetValue"] == 50.0
    tracking = [a["AlarmName"] for a in p["Alarms"]]
    assert len(tracking) == 2 and len(cw.describe_alarms(AlarmNames=tracking)["MetricAlarms"]) == 2

    errors = cw.describe_alarms(AlarmNames=[out["ErrorsName"]])["MetricAlarms"][0]
    assert out["ErrorsName"].startswith(f"{stack}-Errors-") and errors["AlarmArn"] == out["ErrorsArn"]
    assert (errors["Threshold"], errors["StateValue"]) == (80.0, "OK")
    assert errors["Dimensions"] == [{"Name": "Service", "Value": "web"}]
    tags = {t["Key"]: t["Value"] for t in cw.list_tags_for_resource(ResourceARN=out["ErrorsArn"])["Tags"]}
    assert tags["team"] == "web" and tags["aws:cloudformation:logical-id"] == "Errors"
    latency = cw.describe_alarms(AlarmNames=[f"{stack}-latency"])["MetricAlarms"][0]
    assert latency["Metrics"][1]["Expression"] == "p * 1000"
    either = cw.describe_alarms(AlarmNames=[out["EitherName"]], AlarmTypes=["CompositeAlarm"])["CompositeAlarms"][0]
    assert either["AlarmArn"] == out["EitherArn"] and out["ErrorsName"] in either["AlarmRule"]
    assert json.loads(cw.get_dashboard(DashboardName=out["Board"])["DashboardBody"])["widgets"][0]["properties"]["markdown"] == "first"

    # Data makes the alarms act through the stack's wiring.
    cw.put_metric_data(Namespace="StackApp", MetricData=[{"MetricName": "Errors", "Value": 100,
                                                          "Dimensions": [{"Name": "Service", "Value": "web"}]}])
    assert cw.describe_alarms(AlarmNames=[out["EitherName"]], AlarmTypes=["CompositeAlarm"])["CompositeAlarms"][0]["StateValue"] == "ALARM"

    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", "Target=70", "Threshold=200", "Title=second")
    assert cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"] == "UPDATE_COMPLETE"
    [p2] = aas.describe_scaling_policies(ServiceNamespace="ecs", ResourceId=resource)["ScalingPolicies"]
    assert p2["PolicyARN"] == out["PolicyArn"] and p2["TargetTrackingScalingPolicyConfiguration"]["TargetValue"] == 70.0
    high = [a for a in cw.describe_alarms(AlarmNames=tracking)["MetricAlarms"] if "-AlarmHigh-" in a["AlarmName"]][0]
    assert high["Threshold"] == 70.0
    assert cw.describe_alarms(AlarmNames=[out["ErrorsName"]])["MetricAlarms"][0]["Threshold"] == 200.0
    assert cw.describe_alarms(AlarmNames=[out["EitherName"]], AlarmTypes=["CompositeAlarm"])["CompositeAlarms"][0]["AlarmDescription"] == "second"
    assert "second" in cw.get_dashboard(DashboardName=out["Board"])["DashboardBody"]

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
    assert aas.describe_scalable_targets(ServiceNamespace="ecs", ResourceIds=[resource])["ScalableTargets"] == []
    assert aas.describe_scaling_policies(ServiceNamespace="ecs", ResourceId=resource)["ScalingPolicies"] == []
    assert aas.describe_scheduled_actions(ServiceNamespace="ecs", ResourceId=resource)["ScheduledActions"] == []
    left = cw.describe_alarms(AlarmNames=tracking + [out["ErrorsName"], f"{stack}-latency", out["EitherName"]],
                              AlarmTypes=["MetricAlarm", "CompositeAlarm"])
    assert left["MetricAlarms"] == [] and left["CompositeAlarms"] == []
    assert cw.list_dashboards(DashboardNamePrefix=out["Board"])["DashboardEntries"] == []
