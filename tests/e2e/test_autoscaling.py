"""EC2 Auto Scaling through its own API (boto3, the AWS CLI) and through CloudFormation: launch
configurations, groups from launch templates and configurations whose instances EC2 lists, tags
propagated at launch, capacity changes that launch and terminate, target groups and classic load
balancers kept registered, policies, scheduled actions, lifecycle hooks, activities, AWS's errors,
the group waiters, restart survival, and a stack with a classic load balancer and a group from a
launch template in a VPC that deploys, updates and deletes leaving nothing.

botocore 1.43 no longer ships Auto Scaling's waiters; `WAITERS` is their definition as botocore
had it (GroupExists, GroupInService, GroupNotExists), run through botocore's waiter machinery."""
import json
import uuid

import botocore.waiter
import pytest
from botocore.exceptions import ClientError

from conftest import CumuloServer

AMI = "ami-0a3c3a20c09d6f377"

EXISTS = "length(AutoScalingGroups) > `0`"
IN_SERVICE = "contains(AutoScalingGroups[].[length(Instances[?LifecycleState=='InService']) >= MinSize][], `false`)"
WAITERS = botocore.waiter.WaiterModel({"version": 2, "waiters": {
    "GroupExists": {"delay": 1, "maxAttempts": 5, "operation": "DescribeAutoScalingGroups", "acceptors": [
        {"argument": EXISTS, "expected": True, "matcher": "path", "state": "success"},
        {"argument": EXISTS, "expected": False, "matcher": "path", "state": "retry"}]},
    "GroupInService": {"delay": 1, "maxAttempts": 5, "operation": "DescribeAutoScalingGroups", "acceptors": [
        {"argument": IN_SERVICE, "expected": False, "matcher": "path", "state": "success"},
        {"argument": IN_SERVICE, "expected": True, "matcher": "path", "state": "retry"}]},
    "GroupNotExists": {"delay": 1, "maxAttempts": 5, "operation": "DescribeAutoScalingGroups", "acceptors": [
        {"argument": EXISTS, "expected": False, "matcher": "path", "state": "success"},
        {"argument": EXISTS, "expected": True, "matcher": "path", "state": "retry"}]},
}})


def wait(client, name, group):
    botocore.waiter.create_waiter_with_client(name, WAITERS, client).wait(AutoScalingGroupNames=[group])


@pytest.fixture(scope="module")
def ec2(cumulo):
    return cumulo.client("ec2")


@pytest.fixture(scope="module")
def asg(cumulo):
    return cumulo.client("autoscaling")


@pytest.fixture(scope="module")
def subnets(ec2):
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    found = ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"]
    return [s["SubnetId"] for s in sorted(found, key=lambda s: s["AvailabilityZone"])[:2]]


@pytest.fixture(scope="module")
def template(ec2):
    name = f"lt-{uuid.uuid4().hex[:8]}"
    lt = ec2.create_launch_template(LaunchTemplateName=name, LaunchTemplateData={"ImageId": AMI, "InstanceType": "t3.micro"})["LaunchTemplate"]
    return lt["LaunchTemplateId"], name


def error(call, **kw):
    with pytest.raises(ClientError) as e:
        call(**kw)
    return e.value.response["Error"]


def group_of(asg, name):
    return asg.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"][0]


def ec2_instances(ec2, group):
    out = ec2.describe_instances(Filters=[{"Name": "tag:aws:autoscaling:groupName", "Values": [group]}])
    return {i["InstanceId"]: i for r in out["Reservations"] for i in r["Instances"]}


def live(instances):
    return sorted(i for i, v in instances.items() if v["State"]["Name"] in ("pending", "running"))


def test_a_group_from_a_launch_template_scales_in_ec2(asg, ec2, subnets, template):
    lt_id, lt_name = template
    name = f"web-{uuid.uuid4().hex[:8]}"
    asg.create_auto_scaling_group(
        AutoScalingGroupName=name, LaunchTemplate={"LaunchTemplateId": lt_id}, MinSize=1, MaxSize=4, DesiredCapacity=2,
        VPCZoneIdentifier=",".join(subnets),
        Tags=[{"Key": "role", "Value": "web", "PropagateAtLaunch": True}, {"Key": "cost", "Value": "x", "PropagateAtLaunch": False}])
    wait(asg, "GroupExists", name)
    wait(asg, "GroupInService", name)
    g = group_of(asg, name)
    assert g["LaunchTemplate"] == {"LaunchTemplateId": lt_id, "LaunchTemplateName": lt_name, "Version": "$Default"}
    assert (g["MinSize"], g["MaxSize"], g["DesiredCapacity"], g["DefaultCooldown"], g["HealthCheckType"]) == (1, 4, 2, 300, "EC2")
    assert g["VPCZoneIdentifier"] == ",".join(subnets) and g["AutoScalingGroupARN"].endswith(f":autoScalingGroupName/{name}")
    assert len(g["Instances"]) == 2 and {i["LifecycleState"] for i in g["Instances"]} == {"InService"}
    assert len({i["AvailabilityZone"] for i in g["Instances"]}) == 2  # spread over both zones
    assert g["Instances"][0]["LaunchTemplate"]["Version"] == "1"
    # EC2 lists the instances, tagged with what propagates at launch.
    found = ec2_instances(ec2, name)
    assert live(found) == sorted(i["InstanceId"] for i in g["Instances"])
    tags = {t["Key"]: t["Value"] for t in next(iter(found.values()))["Tags"]}
    assert tags["role"] == "web" and "cost" not in tags and tags["aws:autoscaling:groupName"] == name
    details = asg.describe_auto_scaling_instances(InstanceIds=list(found))["AutoScalingInstances"]
    assert {d["AutoScalingGroupName"] for d in details} == {name} and {d["HealthStatus"] for d in details} == {"HEALTHY"}

    asg.set_desired_capacity(AutoScalingGroupName=name, DesiredCapacity=4)
    assert len(live(ec2_instances(ec2, name))) == 4
    e = error(asg.set_desired_capacity, AutoScalingGroupName=name, DesiredCapacity=5)
    assert (e["Code"], e["Message"]) == ("ValidationError", "New SetDesiredCapacity value 5 is above max value 4 for the AutoScalingGroup.")
    e = error(asg.set_desired_capacity, AutoScalingGroupName=name, DesiredCapacity=0)
    assert e["Message"] == "New SetDesiredCapacity value 0 is below min value 1 for the AutoScalingGroup."
    asg.update_auto_scaling_group(AutoScalingGroupName=name, MaxSize=2)  # desired follows the new bound
    g = group_of(asg, name)
    assert g["DesiredCapacity"] == 2 and len(g["Instances"]) == 2
    assert live(ec2_instances(ec2, name)) == sorted(i["InstanceId"] for i in g["Instances"])

    victim = g["Instances"][0]["InstanceId"]
    activity = asg.terminate_instance_in_auto_scaling_group(InstanceId=victim, ShouldDecrementDesiredCapacity=True)["Activity"]
    assert activity["Description"] == f"Terminating EC2 instance: {victim}" and activity["StatusCode"] == "Successful"
    assert group_of(asg, name)["DesiredCapacity"] == 1
    assert ec2_instances(ec2, name)[victim]["State"]["Name"] in ("shutting-down", "terminated")
    e = error(asg.terminate_instance_in_auto_scaling_group, InstanceId=group_of(asg, name)["Instances"][0]["InstanceId"], ShouldDecrementDesiredCapacity=True)
    assert e["Code"] == "ValidationError" and "min size" in e["Message"]

    activities = asg.describe_scaling_activities(AutoScalingGroupName=name)["Activities"]
    launches = [a for a in activities if a["Description"].startswith("Launching a new EC2 instance: ")]
    assert len(launches) == 4 and all(a["StatusCode"] == "Successful" for a in activities)
    assert "a user request created an AutoScalingGroup changing the desired capacity from 0 to 2" in launches[-1]["Cause"]

    e = error(asg.delete_auto_scaling_group, AutoScalingGroupName=name)
    assert (e["Code"], e["Message"]) == ("ResourceInUse", "You cannot delete an AutoScalingGroup while there are instances or pending Spot instance request(s) still in the group.")
    asg.delete_auto_scaling_group(AutoScalingGroupName=name, ForceDelete=True)
    wait(asg, "GroupNotExists", name)
    assert live(ec2_instances(ec2, name)) == []
    e = error(asg.delete_auto_scaling_group, AutoScalingGroupName=name)
    assert (e["Code"], e["Message"]) == ("ValidationError", f"AutoScalingGroup name not found - AutoScalingGroup '{name}' not found")


def test_launch_configurations_load_balancers_and_tags(asg, ec2, cumulo, subnets):
    elbv2 = cumulo.client("elbv2")
    elb = cumulo.client("elb")
    vpc = ec2.describe_subnets(SubnetIds=subnets[:1])["Subnets"][0]["VpcId"]
    lc = f"lc-{uuid.uuid4().hex[:8]}"
    asg.create_launch_configuration(LaunchConfigurationName=lc, ImageId=AMI, InstanceType="t3.small")
    [c] = asg.describe_launch_configurations(LaunchConfigurationNames=[lc])["LaunchConfigurations"]
    assert c["InstanceType"] == "t3.small" and c["InstanceMonitoring"] == {"Enabled": True} and ":launchConfiguration:" in c["LaunchConfigurationARN"]
    e = error(asg.create_launch_configuration, LaunchConfigurationName=lc, ImageId=AMI, InstanceType="t3.small")
    assert (e["Code"], e["Message"]) == ("AlreadyExists", f"Launch Configuration by this name already exists - A launch configuration already exists with the name {lc}")
    assert error(asg.create_launch_configuration, LaunchConfigurationName="x" + lc, ImageId="ami-00000000", InstanceType="t3.small")["Code"] == "ValidationError"

    tg = elbv2.create_target_group(Name=f"tg-{lc[3:]}", Protocol="HTTP", Port=80, VpcId=vpc)["TargetGroups"][0]["TargetGroupArn"]
    lb = f"c-{lc}"
    elb.create_load_balancer(LoadBalancerName=lb, Subnets=subnets, Listeners=[{"Protocol": "HTTP", "LoadBalancerPort": 80, "InstancePort": 80}])
    name = f"app-{lc}"
    asg.create_auto_scaling_group(AutoScalingGroupName=name, LaunchConfigurationName=lc, MinSize=0, MaxSize=3, DesiredCapacity=2,
                                  AvailabilityZones=[ec2.describe_subnets(SubnetIds=[s])["Subnets"][0]["AvailabilityZone"] for s in subnets],
                                  TargetGroupARNs=[tg], LoadBalancerNames=[lb])
    g = group_of(asg, name)
    ids = sorted(i["InstanceId"] for i in g["Instances"])
    assert {i["LaunchConfigurationName"] for i in g["Instances"]} == {lc} and g["TargetGroupARNs"] == [tg]
    assert g["TrafficSources"] == [{"Identifier": tg, "Type": "elbv2"}, {"Identifier": lb, "Type": "elb"}]
    assert sorted(t["Target"]["Id"] for t in elbv2.describe_target_health(TargetGroupArn=tg)["TargetHealthDescriptions"]) == ids
    assert sorted(i["InstanceId"] for i in elb.describe_load_balancers(LoadBalancerNames=[lb])["LoadBalancerDescriptions"][0]["Instances"]) == ids
    assert {ec2_instances(ec2, name)[i]["InstanceType"] for i in ids} == {"t3.small"}
    e = error(asg.delete_launch_configuration, LaunchConfigurationName=lc)
    assert (e["Code"], e["Message"]) == ("ResourceInUse", f"Cannot delete launch configuration {lc} because it is attached to AutoScalingGroup {name}")

    asg.set_desired_capacity(AutoScalingGroupName=name, DesiredCapacity=1)
    [kept] = [i["InstanceId"] for i in group_of(asg, name)["Instances"]]
    assert [t["Target"]["Id"] for t in elbv2.describe_target_health(TargetGroupArn=tg)["TargetHealthDescriptions"]] == [kept]
    asg.detach_load_balancer_target_groups(AutoScalingGroupName=name, TargetGroupARNs=[tg])
    assert elbv2.describe_target_health(TargetGroupArn=tg)["TargetHealthDescriptions"] == []
    assert asg.describe_load_balancers(AutoScalingGroupName=name)["LoadBalancers"] == [{"LoadBalancerName": lb, "State": "InService"}]

    asg.create_or_update_tags(Tags=[{"ResourceId": name, "ResourceType": "auto-scaling-group", "Key": "env", "Value": "prod", "PropagateAtLaunch": True}])
    tags = asg.describe_tags(Filters=[{"Name": "auto-scaling-group", "Values": [name]}, {"Name": "key", "Values": ["env"]}])["Tags"]
    assert tags == [{"ResourceId": name, "ResourceType": "auto-scaling-group", "Key": "env", "Value": "prod", "PropagateAtLaunch": True}]
    asg.delete_tags(Tags=[{"ResourceId": name, "ResourceType": "auto-scaling-group", "Key": "env"}])
    assert asg.describe_tags(Filters=[{"Name": "auto-scaling-group", "Values": [name]}])["Tags"] == []

    asg.update_auto_scaling_group(AutoScalingGroupName=name, MinSize=0, DesiredCapacity=0)
    assert elb.describe_load_balancers(LoadBalancerNames=[lb])["LoadBalancerDescriptions"][0]["Instances"] == []
    asg.delete_auto_scaling_group(AutoScalingGroupName=name)
    asg.delete_launch_configuration(LaunchConfigurationName=lc)
    assert asg.describe_launch_configurations(LaunchConfigurationNames=[lc])["LaunchConfigurations"] == []
    elb.delete_load_balancer(LoadBalancerName=lb)
    elbv2.delete_target_group(TargetGroupArn=tg)


def test_policies_scheduled_actions_hooks_and_mixed_instances(asg, subnets, template):
    lt_id, _ = template
    name = f"mix-{uuid.uuid4().hex[:8]}"
    asg.create_auto_scaling_group(
        AutoScalingGroupName=name, MinSize=1, MaxSize=6, VPCZoneIdentifier=subnets[0],
        MixedInstancesPolicy={"LaunchTemplate": {"LaunchTemplateSpecification": {"LaunchTemplateId": lt_id, "Version": "$Latest"},
                                                 "Overrides": [{"InstanceType": "m5.large"}, {"InstanceType": "m5a.large"}]}},
        LifecycleHookSpecificationList=[{"LifecycleHookName": "drain", "LifecycleTransition": "autoscaling:EC2_INSTANCE_TERMINATING"}])
    g = group_of(asg, name)
    assert g["DesiredCapacity"] == 1 and g["Instances"][0]["InstanceType"] == "m5.large"
    spec = g["MixedInstancesPolicy"]["LaunchTemplate"]["LaunchTemplateSpecification"]
    assert spec["LaunchTemplateId"] == lt_id and spec["LaunchTemplateName"] == template[1] and spec["Version"] == "$Latest"
    simple = asg.put_scaling_policy(AutoScalingGroupName=name, PolicyName="up", AdjustmentType="ChangeInCapacity", ScalingAdjustment=2)
    assert ":scalingPolicy:" in simple["PolicyARN"] and simple["Alarms"] == []
    asg.put_scaling_policy(AutoScalingGroupName=name, PolicyName="step", PolicyType="StepScaling", AdjustmentType="ExactCapacity",
                           StepAdjustments=[{"MetricIntervalLowerBound": 0, "MetricIntervalUpperBound": 10, "ScalingAdjustment": 4},
                                            {"MetricIntervalLowerBound": 10, "ScalingAdjustment": 6}])
    asg.put_scaling_policy(AutoScalingGroupName=name, PolicyName="cpu", PolicyType="TargetTrackingScaling",
                           TargetTrackingConfiguration={"PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}, "TargetValue": 50.0})
    policies = {p["PolicyName"]: p for p in asg.describe_policies(AutoScalingGroupName=name)["ScalingPolicies"]}
    assert set(policies) == {"up", "step", "cpu"} and policies["cpu"]["TargetTrackingConfiguration"]["DisableScaleIn"] is False
    assert policies["step"]["MetricAggregationType"] == "Average"
    assert [p["PolicyName"] for p in asg.describe_policies(AutoScalingGroupName=name, PolicyTypes=["StepScaling"])["ScalingPolicies"]] == ["step"]
    asg.execute_policy(AutoScalingGroupName=name, PolicyName="up")
    assert group_of(asg, name)["DesiredCapacity"] == 3
    asg.execute_policy(AutoScalingGroupName=name, PolicyName="step", MetricValue=95.0, BreachThreshold=80.0)
    g = group_of(asg, name)
    assert g["DesiredCapacity"] == 6 and len(g["Instances"]) == 6
    assert error(asg.put_scaling_policy, AutoScalingGroupName=name, PolicyName="bad", AdjustmentType="ChangeInCapacity")["Code"] == "ValidationError"
    asg.delete_policy(AutoScalingGroupName=name, PolicyName="up")
    assert error(asg.delete_policy, AutoScalingGroupName=name, PolicyName="up")["Code"] == "ValidationError"

    asg.put_scheduled_update_group_action(AutoScalingGroupName=name, ScheduledActionName="night", Recurrence="0 22 * * *", DesiredCapacity=1)
    [action] = asg.describe_scheduled_actions(AutoScalingGroupName=name)["ScheduledUpdateGroupActions"]
    assert action["Recurrence"] == "0 22 * * *" and action["DesiredCapacity"] == 1 and ":scheduledUpdateGroupAction:" in action["ScheduledActionARN"]
    asg.delete_scheduled_action(AutoScalingGroupName=name, ScheduledActionName="night")
    e = error(asg.delete_scheduled_action, AutoScalingGroupName=name, ScheduledActionName="night")
    assert e["Message"] == "Scheduled Update Group Action name not found - Could not find scheduled update group action with name night"

    asg.put_lifecycle_hook(AutoScalingGroupName=name, LifecycleHookName="warm", LifecycleTransition="autoscaling:EC2_INSTANCE_LAUNCHING", HeartbeatTimeout=60)
    hooks = {h["LifecycleHookName"]: h for h in asg.describe_lifecycle_hooks(AutoScalingGroupName=name)["LifecycleHooks"]}
    assert set(hooks) == {"drain", "warm"} and hooks["warm"]["GlobalTimeout"] == 6000 and hooks["drain"]["DefaultResult"] == "ABANDON"
    assert error(asg.put_lifecycle_hook, AutoScalingGroupName=name, LifecycleHookName="x", LifecycleTransition="nope")["Code"] == "ValidationError"
    asg.delete_lifecycle_hook(AutoScalingGroupName=name, LifecycleHookName="warm")
    asg.delete_auto_scaling_group(AutoScalingGroupName=name, ForceDelete=True)
    assert not any(p["AutoScalingGroupName"] == name for p in asg.describe_policies()["ScalingPolicies"])


def test_target_tracking_policies_own_their_cloudwatch_alarms(asg, cumulo, subnets, template):
    """As on AWS: a target-tracking policy makes `TargetTracking-<group>-AlarmHigh-<uuid>` (3 of 3
    minutes above the target) and `-AlarmLow-` (15 of 15 below 90% of it) with the policy as their
    action; an update keeps their names, DisableScaleIn drops the low one, and deleting the
    policy or its group deletes them."""
    cw = cumulo.client("cloudwatch")
    name = f"tt-{uuid.uuid4().hex[:8]}"
    asg.create_auto_scaling_group(AutoScalingGroupName=name, MinSize=0, MaxSize=2, VPCZoneIdentifier=subnets[0],
                                  LaunchTemplate={"LaunchTemplateId": template[0]})
    cpu = {"PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}, "TargetValue": 50.0}
    made = asg.put_scaling_policy(AutoScalingGroupName=name, PolicyName="cpu", PolicyType="TargetTrackingScaling",
                                  TargetTrackingConfiguration=cpu)
    names = sorted(a["AlarmName"] for a in made["Alarms"])
    assert [n.rsplit("-", 5)[0] for n in names] == [f"TargetTracking-{name}-AlarmHigh", f"TargetTracking-{name}-AlarmLow"]
    alarms = {a["AlarmName"]: a for a in cw.describe_alarms(AlarmNames=names)["MetricAlarms"]}
    high, low = alarms[names[0]], alarms[names[1]]
    assert (high["Namespace"], high["MetricName"], high["Statistic"], high["Period"]) == ("AWS/EC2", "CPUUtilization", "Average", 60)
    assert high["Dimensions"] == [{"Name": "AutoScalingGroupName", "Value": name}]
    assert (high["ComparisonOperator"], high["Threshold"], high["EvaluationPeriods"]) == ("GreaterThanThreshold", 50.0, 3)
    assert (low["ComparisonOperator"], low["Threshold"], low["EvaluationPeriods"]) == ("LessThanThreshold", 45.0, 15)
    assert high["AlarmActions"] == [made["PolicyARN"]] and high["AlarmDescription"].startswith("DO NOT EDIT OR DELETE.")
    [policy] = asg.describe_policies(AutoScalingGroupName=name, PolicyNames=["cpu"])["ScalingPolicies"]
    assert sorted(a["AlarmName"] for a in policy["Alarms"]) == names
    assert all(a["AlarmARN"].endswith(f":alarm:{a['AlarmName']}") for a in policy["Alarms"])

    # An update keeps the high alarm's name; without scale-in the low one goes.
    again = asg.put_scaling_policy(AutoScalingGroupName=name, PolicyName="cpu", PolicyType="TargetTrackingScaling",
                                   TargetTrackingConfiguration=dict(cpu, TargetValue=70.0, DisableScaleIn=True))
    assert [a["AlarmName"] for a in again["Alarms"]] == [names[0]]
    assert cw.describe_alarms(AlarmNames=[names[0]])["MetricAlarms"][0]["Threshold"] == 70.0
    assert cw.describe_alarms(AlarmNames=[names[1]])["MetricAlarms"] == []

    # A type AWS does not define is refused, and nothing changes.
    bad = dict(cpu, PredefinedMetricSpecification={"PredefinedMetricType": "ASGAverageDiskUsage"})
    e = error(asg.put_scaling_policy, AutoScalingGroupName=name, PolicyName="disk", PolicyType="TargetTrackingScaling",
              TargetTrackingConfiguration=bad)
    assert e["Code"] == "ValidationError" and "predefinedMetricType" in e["Message"]
    assert [p["PolicyName"] for p in asg.describe_policies(AutoScalingGroupName=name)["ScalingPolicies"]] == ["cpu"]

    asg.delete_policy(AutoScalingGroupName=name, PolicyName="cpu")
    assert cw.describe_alarms(AlarmNamePrefix=f"TargetTracking-{name}-")["MetricAlarms"] == []

    # A group's deletion takes its policies' alarms with it.
    rps = asg.put_scaling_policy(AutoScalingGroupName=name, PolicyName="rps", PolicyType="TargetTrackingScaling",
                                 TargetTrackingConfiguration={"TargetValue": 100.0, "PredefinedMetricSpecification": {
                                     "PredefinedMetricType": "ALBRequestCountPerTarget",
                                     "ResourceLabel": "app/web/0123456789abcdef/targetgroup/tg/fedcba9876543210"}})
    [first] = cw.describe_alarms(AlarmNames=[rps["Alarms"][0]["AlarmName"]])["MetricAlarms"]
    assert (first["Namespace"], first["MetricName"], first["Statistic"]) == ("AWS/ApplicationELB", "RequestCountPerTarget", "Sum")
    assert first["Dimensions"] == [{"Name": "TargetGroup", "Value": "targetgroup/tg/fedcba9876543210"}]
    asg.delete_auto_scaling_group(AutoScalingGroupName=name, ForceDelete=True)
    assert cw.describe_alarms(AlarmNamePrefix=f"TargetTracking-{name}-")["MetricAlarms"] == []


def test_instances_attach_and_detach(asg, ec2, subnets, template):
    lt_id, _ = template
    name = f"att-{uuid.uuid4().hex[:8]}"
    asg.create_auto_scaling_group(AutoScalingGroupName=name, LaunchTemplate={"LaunchTemplateId": lt_id}, MinSize=0, MaxSize=2, DesiredCapacity=1,
                                  VPCZoneIdentifier=subnets[0])
    [own] = [i["InstanceId"] for i in group_of(asg, name)["Instances"]]
    extra = [i["InstanceId"] for i in ec2.run_instances(ImageId=AMI, InstanceType="t3.micro", MinCount=2, MaxCount=2, SubnetId=subnets[0])["Instances"]]
    e = error(asg.attach_instances, AutoScalingGroupName=name, InstanceIds=extra)
    assert (e["Code"], e["Message"]) == ("ValidationError", "The number of instances in the group would exceed the max size of the group (2).")
    asg.attach_instances(AutoScalingGroupName=name, InstanceIds=extra[:1])
    g = group_of(asg, name)
    assert g["DesiredCapacity"] == 2 and sorted(i["InstanceId"] for i in g["Instances"]) == sorted([own, extra[0]])
    activities = asg.detach_instances(AutoScalingGroupName=name, InstanceIds=[extra[0]], ShouldDecrementDesiredCapacity=True)["Activities"]
    assert activities[0]["Description"] == f"Detaching EC2 instance: {extra[0]}"
    assert [i["InstanceId"] for i in group_of(asg, name)["Instances"]] == [own]
    # A detached instance keeps running in EC2.
    assert ec2.describe_instances(InstanceIds=[extra[0]])["Reservations"][0]["Instances"][0]["State"]["Name"] in ("pending", "running")
    asg.detach_instances(AutoScalingGroupName=name, InstanceIds=[own], ShouldDecrementDesiredCapacity=False)
    g = group_of(asg, name)
    assert g["DesiredCapacity"] == 1 and [i["InstanceId"] for i in g["Instances"]] != [own] and len(g["Instances"]) == 1
    asg.delete_auto_scaling_group(AutoScalingGroupName=name, ForceDelete=True)
    ec2.terminate_instances(InstanceIds=extra + [own])


def test_bad_input_changes_nothing(asg, ec2, cumulo, subnets, template):
    lt_id, _ = template
    before = asg.describe_auto_scaling_groups()["AutoScalingGroups"]
    running = live({i["InstanceId"]: i for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]})
    base = dict(AutoScalingGroupName=f"bad-{uuid.uuid4().hex[:6]}", MinSize=1, MaxSize=2, VPCZoneIdentifier=subnets[0])
    cases = [
        (dict(base, MinSize=3, LaunchTemplate={"LaunchTemplateId": lt_id}), "Max bound, 2, must be greater than or equal to min bound, 3"),
        (dict(base, DesiredCapacity=5, LaunchTemplate={"LaunchTemplateId": lt_id}), "Desired capacity:5 must be between the specified min size:1 and max size:2"),
        (dict(base), "Valid requests must contain either LaunchTemplate, LaunchConfigurationName, InstanceId or MixedInstancesPolicy parameter."),
        (dict(base, LaunchConfigurationName="nope"), "Launch configuration name not found - Launch configuration nope not found"),
        (dict(base, LaunchTemplate={"LaunchTemplateId": lt_id}, VPCZoneIdentifier="subnet-00000000"), "The subnet ID 'subnet-00000000' does not exist"),
        (dict(base, LaunchTemplate={"LaunchTemplateId": lt_id}, TargetGroupARNs=["arn:aws:elasticloadbalancing:us-east-1:000000000000:targetgroup/none/0123456789abcdef"]),
         "Provided Target Groups may not be valid. Please ensure they exist and try again."),
        (dict(base, LaunchTemplate={"LaunchTemplateId": lt_id}, LoadBalancerNames=["none"]), "Provided Load Balancers may not be valid. Please ensure they exist and try again."),
    ]
    for kw, message in cases:
        e = error(asg.create_auto_scaling_group, **kw)
        assert (e["Code"], e["Message"]) == ("ValidationError", message), kw
    e = error(asg.create_auto_scaling_group, **dict(base, LaunchTemplate={"LaunchTemplateId": "lt-00000000000000000"}))
    assert e["Code"] == "ValidationError" and e["Message"].startswith("You must use a valid fully-formed launch template.")
    assert error(asg.describe_auto_scaling_groups, MaxRecords=101)["Code"] == "ValidationError"
    assert error(asg.describe_auto_scaling_groups, NextToken="garbage")["Code"] == "InvalidNextToken"
    assert asg.describe_auto_scaling_groups()["AutoScalingGroups"] == before
    assert live({i["InstanceId"]: i for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]}) == running
    proc = cumulo.aws("autoscaling", "set-desired-capacity", "--auto-scaling-group-name", "none", "--desired-capacity", "1", check=False)
    assert proc.returncode != 0 and "AutoScalingGroup name not found" in proc.stderr


def test_groups_page_and_survive_a_restart(fresh_server):
    server = fresh_server.start()
    asg = server.client("autoscaling")
    ec2 = server.client("ec2")
    subnet = ec2.describe_subnets()["Subnets"][0]["SubnetId"]
    lt = ec2.create_launch_template(LaunchTemplateName="keep", LaunchTemplateData={"ImageId": AMI, "InstanceType": "t3.micro"})["LaunchTemplate"]
    for i in range(3):
        asg.create_auto_scaling_group(AutoScalingGroupName=f"keep-{i}", LaunchTemplate={"LaunchTemplateName": "keep"}, MinSize=0, MaxSize=2,
                                      DesiredCapacity=1, VPCZoneIdentifier=subnet)
    pages = list(asg.get_paginator("describe_auto_scaling_groups").paginate(PaginationConfig={"PageSize": 2}))
    assert [len(p["AutoScalingGroups"]) for p in pages] == [2, 1]
    ids = [group_of(asg, f"keep-{i}")["Instances"][0]["InstanceId"] for i in range(3)]
    server.stop()
    server = CumuloServer(data_dir=server.data_dir).start()
    try:
        asg = server.client("autoscaling")
        assert [group_of(asg, f"keep-{i}")["Instances"][0]["InstanceId"] for i in range(3)] == ids
        assert group_of(asg, "keep-0")["LaunchTemplate"]["LaunchTemplateId"] == lt["LaunchTemplateId"]
        asg.set_desired_capacity(AutoScalingGroupName="keep-0", DesiredCapacity=2)
        assert len(group_of(asg, "keep-0")["Instances"]) == 2
    finally:
        server.stop()


STACK = {
    "Parameters": {"Desired": {"Type": "String", "Default": "2"}},
    "Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.40.0.0/16"}},
        "SubnetA": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.40.0.0/24", "AvailabilityZone": "us-east-1a"}},
        "SubnetB": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.40.1.0/24", "AvailabilityZone": "us-east-1b"}},
        "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "web", "VpcId": {"Ref": "Vpc"}}},
        "Template": {"Type": "AWS::EC2::LaunchTemplate", "Properties": {"LaunchTemplateData": {
            "ImageId": "ami-0a3c3a20c09d6f377", "InstanceType": "t3.micro", "SecurityGroupIds": [{"Ref": "Group"}]}}},
        "Classic": {"Type": "AWS::ElasticLoadBalancing::LoadBalancer", "Properties": {
            "Subnets": [{"Ref": "SubnetA"}, {"Ref": "SubnetB"}], "SecurityGroups": [{"Ref": "Group"}],
            "Listeners": [{"LoadBalancerPort": "80", "InstancePort": "80", "Protocol": "HTTP"}]}},
        "Targets": {"Type": "AWS::ElasticLoadBalancingV2::TargetGroup", "Properties": {"Port": 80, "Protocol": "HTTP", "VpcId": {"Ref": "Vpc"}}},
        "Config": {"Type": "AWS::AutoScaling::LaunchConfiguration", "Properties": {"ImageId": "ami-0a3c3a20c09d6f377", "InstanceType": "t3.nano", "InstanceMonitoring": False}},
        "Web": {
            "Type": "AWS::AutoScaling::AutoScalingGroup",
            "UpdatePolicy": {"AutoScalingRollingUpdate": {"MinInstancesInService": 1, "MaxBatchSize": 1}},
            "Properties": {
                "LaunchTemplate": {"LaunchTemplateId": {"Ref": "Template"}, "Version": {"Fn::GetAtt": ["Template", "LatestVersionNumber"]}},
                "MinSize": "1", "MaxSize": "4", "DesiredCapacity": {"Ref": "Desired"}, "Cooldown": "120",
                "VPCZoneIdentifier": [{"Ref": "SubnetA"}, {"Ref": "SubnetB"}],
                "LoadBalancerNames": [{"Ref": "Classic"}], "TargetGroupARNs": [{"Ref": "Targets"}],
                "Tags": [{"Key": "role", "Value": "web", "PropagateAtLaunch": True}],
            },
        },
        "Legacy": {"Type": "AWS::AutoScaling::AutoScalingGroup", "Properties": {
            "LaunchConfigurationName": {"Ref": "Config"}, "MinSize": "0", "MaxSize": "1", "VPCZoneIdentifier": [{"Ref": "SubnetA"}]}},
        "Cpu": {"Type": "AWS::AutoScaling::ScalingPolicy", "Properties": {
            "AutoScalingGroupName": {"Ref": "Web"}, "PolicyType": "TargetTrackingScaling",
            "TargetTrackingConfiguration": {"PredefinedMetricSpecification": {"PredefinedMetricType": "ASGAverageCPUUtilization"}, "TargetValue": 60}}},
        "Night": {"Type": "AWS::AutoScaling::ScheduledAction", "Properties": {"AutoScalingGroupName": {"Ref": "Web"}, "Recurrence": "0 22 * * *", "DesiredCapacity": "1"}},
        "Drain": {"Type": "AWS::AutoScaling::LifecycleHook", "Properties": {"AutoScalingGroupName": {"Ref": "Web"}, "LifecycleTransition": "autoscaling:EC2_INSTANCE_TERMINATING", "HeartbeatTimeout": "120"}},
        "Warm": {"Type": "AWS::AutoScaling::WarmPool", "Properties": {"AutoScalingGroupName": {"Ref": "Web"}, "MinSize": 1, "PoolState": "Stopped"}},
    },
    "Outputs": {"Group": {"Value": {"Ref": "Web"}}, "Legacy": {"Value": {"Ref": "Legacy"}}, "Classic": {"Value": {"Ref": "Classic"}},
                "Targets": {"Value": {"Ref": "Targets"}}, "Policy": {"Value": {"Ref": "Cpu"}}, "PolicyName": {"Value": {"Fn::GetAtt": ["Cpu", "PolicyName"]}},
                "Night": {"Value": {"Ref": "Night"}}, "Vpc": {"Value": {"Ref": "Vpc"}}, "Template": {"Value": {"Ref": "Template"}},
                "SecurityGroup": {"Value": {"Ref": "Group"}}},
}


def test_a_group_with_a_classic_load_balancer_stack(cumulo, asg, ec2, tmp_path):
    elb = cumulo.client("elb")
    elbv2 = cumulo.client("elbv2")
    cfn = cumulo.client("cloudformation")
    path = tmp_path / "asg.json"
    path.write_text(json.dumps(STACK))
    stack = f"asg-{uuid.uuid4().hex[:8]}"
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path))
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    name = out["Group"]
    assert name.startswith(f"{stack}-Web-")
    wait(asg, "GroupInService", name)
    g = group_of(asg, name)
    ids = sorted(i["InstanceId"] for i in g["Instances"])
    assert g["LaunchTemplate"]["LaunchTemplateId"] == out["Template"] and g["LaunchTemplate"]["Version"] == "1"
    assert len(ids) == 2 and g["DefaultCooldown"] == 120 and g["LoadBalancerNames"] == [out["Classic"]] and g["TargetGroupARNs"] == [out["Targets"]]
    found = ec2_instances(ec2, name)
    assert live(found) == ids and {found[i]["VpcId"] for i in ids} == {out["Vpc"]}
    assert {g["GroupId"] for i in ids for g in found[i]["SecurityGroups"]} == {out["SecurityGroup"]}
    tags = {t["Key"]: t["Value"] for t in found[ids[0]]["Tags"]}
    assert tags["role"] == "web" and tags["aws:cloudformation:stack-name"] == stack
    assert sorted(i["InstanceId"] for i in elb.describe_load_balancers(LoadBalancerNames=[out["Classic"]])["LoadBalancerDescriptions"][0]["Instances"]) == ids
    assert sorted(t["Target"]["Id"] for t in elbv2.describe_target_health(TargetGroupArn=out["Targets"])["TargetHealthDescriptions"]) == ids
    [policy] = asg.describe_policies(AutoScalingGroupName=name)["ScalingPolicies"]
    assert policy["PolicyARN"] == out["Policy"] and policy["PolicyName"] == out["PolicyName"] and policy["PolicyType"] == "TargetTrackingScaling"
    [action] = asg.describe_scheduled_actions(AutoScalingGroupName=name)["ScheduledUpdateGroupActions"]
    assert action["ScheduledActionName"] == out["Night"]
    [hook] = asg.describe_lifecycle_hooks(AutoScalingGroupName=name)["LifecycleHooks"]
    assert hook["HeartbeatTimeout"] == 120
    assert asg.describe_warm_pool(AutoScalingGroupName=name)["WarmPoolConfiguration"]["MinSize"] == 1
    legacy = group_of(asg, out["Legacy"])
    assert legacy["DesiredCapacity"] == 0 and legacy["LaunchConfigurationName"].startswith(f"{stack}-Config-")

    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path), "--parameter-overrides", "Desired=3")
    g = group_of(asg, name)
    assert g["DesiredCapacity"] == 3 and len(g["Instances"]) == 3
    assert len(live(ec2_instances(ec2, name))) == 3
    assert len(elbv2.describe_target_health(TargetGroupArn=out["Targets"])["TargetHealthDescriptions"]) == 3

    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 1, "MaxAttempts": 60})
    assert asg.describe_auto_scaling_groups(AutoScalingGroupNames=[name, out["Legacy"]])["AutoScalingGroups"] == []
    assert asg.describe_launch_configurations(LaunchConfigurationNames=[legacy["LaunchConfigurationName"]])["LaunchConfigurations"] == []
    assert live(ec2_instances(ec2, name)) == []
    assert error(elb.describe_load_balancers, LoadBalancerNames=[out["Classic"]])["Code"] == "LoadBalancerNotFound"
    assert ec2.describe_vpcs(Filters=[{"Name": "vpc-id", "Values": [out["Vpc"]]}])["Vpcs"] == []
    assert error(ec2.describe_launch_templates, LaunchTemplateIds=[out["Template"]])["Code"].startswith("InvalidLaunchTemplateId")
