"""Stacks the console tests look at (API and browser): one that deploys (parameters with a NoEcho
one, outputs, tags, a stubbed type, a nested stack, references of every kind) and one whose
resource fails so the stack rolls back."""
import json
import uuid

import botocore.exceptions

WAIT = {"Delay": 1, "MaxAttempts": 60}

GOOD = """
Parameters:
  Secret:
    Type: String
    NoEcho: true
    Default: hunter2
  Env:
    Type: String
    Default: dev
Resources:
  Bucket:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: {p}-bucket
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: {p}-queue
      Tags:
        - Key: env
          Value: !Ref Env
  Param:
    Type: AWS::SSM::Parameter
    DependsOn: Bucket
    Properties:
      Name: /{p}/queue-arn
      Type: String
      Value: !GetAtt Queue.Arn
  Named:
    Type: AWS::SSM::Parameter
    Properties:
      Name: /{p}/named
      Type: String
      Value: !Sub "${{Secret}} for ${{Param}}"
  Stub:
    Type: AWS::Redshift::Cluster
    Properties:
      ClusterType: single-node
  Child:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: {child_url}
Outputs:
  BucketName:
    Value: !Ref Bucket
  QueueUrl:
    Value: !Ref Queue
    Description: the queue
"""

CHILD = json.dumps({"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}})

FAILING = """
Resources:
  Good:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: {p}-good
  Bad:
    Type: AWS::SQS::Queue
    DependsOn: Good
    Properties:
      QueueName: {p}-bad
      VisibilityTimeout: 999999
"""


def uid():
    return uuid.uuid4().hex[:8]


def deploy(cumulo):
    """Deploys both stacks; returns their names."""
    cfn, s3 = cumulo.client("cloudformation"), cumulo.client("s3")
    p = f"con-{uid()}"
    s3.create_bucket(Bucket=f"{p}-templates")
    s3.put_object(Bucket=f"{p}-templates", Key="child.json", Body=CHILD.encode())
    child_url = f"{cumulo.endpoint}/{p}-templates/child.json"
    cfn.create_stack(
        StackName=p,
        TemplateBody=GOOD.format(p=p, child_url=child_url),
        Tags=[{"Key": "owner", "Value": "console-test"}],
    )
    cfn.get_waiter("stack_create_complete").wait(StackName=p, WaiterConfig=WAIT)
    failing = f"{p}-fail"
    cfn.create_stack(StackName=failing, TemplateBody=FAILING.format(p=p))
    try:
        cfn.get_waiter("stack_create_complete").wait(StackName=failing, WaiterConfig=WAIT)
        raise AssertionError("the failing stack was created")
    except botocore.exceptions.WaiterError:
        pass
    assert cfn.describe_stacks(StackName=failing)["Stacks"][0]["StackStatus"] == "ROLLBACK_COMPLETE"
    return p, failing


def drifted(cumulo):
    """A stack of two queues, one changed behind the stack's back (VisibilityTimeout 30 -> 60),
    after DetectStackDrift: `(name, DescribeStackResourceDrifts' drifts)`."""
    cfn, sqs = cumulo.client("cloudformation"), cumulo.client("sqs")
    name = f"con-drift-{uid()}"
    queue = lambda suffix: {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{name}-{suffix}", "VisibilityTimeout": 30}}  # noqa: E731
    cfn.create_stack(StackName=name, TemplateBody=json.dumps({"Resources": {"Changed": queue("changed"), "Kept": queue("kept")}}))
    cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=WAIT)
    url = cfn.describe_stack_resource(StackName=name, LogicalResourceId="Changed")["StackResourceDetail"]["PhysicalResourceId"]
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": "60"})
    detection = cfn.detect_stack_drift(StackName=name)["StackDriftDetectionId"]
    status = cfn.describe_stack_drift_detection_status(StackDriftDetectionId=detection)
    assert (status["DetectionStatus"], status["StackDriftStatus"]) == ("DETECTION_COMPLETE", "DRIFTED")
    return name, cfn.describe_stack_resource_drifts(StackName=name)["StackResourceDrifts"]


def network_with_groups(cumulo):
    """A VPC with two security groups (web: HTTPS from anywhere; app: 8080 from web, egress to
    the S3 prefix list), a classic load balancer in it behind web with one instance: a dict of
    their ids."""
    ec2, elb = cumulo.client("ec2"), cumulo.client("elb")
    p = uid()
    vpc = ec2.create_vpc(CidrBlock="10.78.0.0/16")["Vpc"]["VpcId"]
    subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.78.1.0/24", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    web = ec2.create_security_group(GroupName=f"web-{p}", Description="web tier", VpcId=vpc)["GroupId"]
    app = ec2.create_security_group(GroupName=f"app-{p}", Description="app tier", VpcId=vpc)["GroupId"]
    ec2.authorize_security_group_ingress(GroupId=web, IpPermissions=[
        {"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "IpRanges": [{"CidrIp": "0.0.0.0/0", "Description": "https"}]}])
    ec2.authorize_security_group_ingress(GroupId=app, IpPermissions=[
        {"IpProtocol": "tcp", "FromPort": 8080, "ToPort": 8080, "UserIdGroupPairs": [{"GroupId": web, "Description": "from web"}]}])
    [s3_list] = ec2.describe_prefix_lists(Filters=[{"Name": "prefix-list-name", "Values": ["com.amazonaws.us-east-1.s3"]}])["PrefixLists"]
    ec2.authorize_security_group_egress(GroupId=app, IpPermissions=[
        {"IpProtocol": "tcp", "FromPort": 443, "ToPort": 443, "PrefixListIds": [{"PrefixListId": s3_list["PrefixListId"]}]}])
    name = f"con-clb-{p}"[:32]
    elb.create_load_balancer(LoadBalancerName=name, Subnets=[subnet], SecurityGroups=[web],
                             Listeners=[{"Protocol": "HTTP", "LoadBalancerPort": 80, "InstanceProtocol": "HTTP", "InstancePort": 8080}])
    elb.configure_health_check(LoadBalancerName=name, HealthCheck={
        "Target": "HTTP:8080/health", "Interval": 10, "Timeout": 5, "UnhealthyThreshold": 3, "HealthyThreshold": 2})
    [instance] = [i["InstanceId"] for i in ec2.run_instances(ImageId="ami-0a3c3a20c09d6f377", InstanceType="t3.micro",
                                                              MinCount=1, MaxCount=1, SubnetId=subnet)["Instances"]]
    elb.register_instances_with_load_balancer(LoadBalancerName=name, Instances=[{"InstanceId": instance}])
    return {"vpc": vpc, "subnet": subnet, "web": web, "app": app, "prefix_list": s3_list["PrefixListId"],
            "elb": name, "instance": instance}
