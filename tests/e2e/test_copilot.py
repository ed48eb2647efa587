"""Issue 18's acceptance: AWS Copilot's environment and workload stacks
(../shared/corpus/copilot) deployed through `aws cloudformation deploy` with Copilot's parameters,
every resource real (no `cumulo: ... not emulated` stub), each custom resource answered by a
Node.js handler the tests write from the seed's account of Copilot's (tests/copilot/handlers),
then deleted leaving nothing but what `DeletionPolicy: Retain` keeps.

What stands in for what Copilot would have made before (each named so it can be checked):
- the application stack's DNS part: the app's hosted zone `<app>.example.com` and its
  `<app>-DNSDelegationRole`, which the environment's DNS delegation, certificate and alias
  handlers assume to write records there (Copilot's app stack makes both);
- the imported-VPC environment's VPC and subnets (`vpc-12345`, `subnet-11111`...) are made by a
  network stack first and their literal ids replaced by the real ones;
- the certificates the renders name by placeholders (`viewer-cert`, `cert-1`, `cert-2`) are
  certificates imported into ACM first (a self-signed one, tests/e2e/data), their ARNs replacing
  the placeholders;
- the access-log template's `!Ref 'arn:${AWS::Partition}:iam::'` (a render bug: CloudFormation
  refuses it with "Unresolved resource dependencies", as cumulo does) becomes the `!Sub` meant;
- addresses the renders give without a prefix length (`CidrIp: 1.1.1.1`, `CidrIp: "0.0.0.0"`),
  which EC2 refuses as AWS does ("Not a valid CIDR block"; Copilot's manifest validation would
  not let a real manifest through with them), get their /32 and /0.
"""
import json
import re
import subprocess
import time
import uuid

import pytest

from conftest import ROOT
from copilot_corpus import COPILOT, kind_functions, load, upload_handlers, with_handler_code

pytestmark = pytest.mark.skipif(not COPILOT.is_dir(), reason=f"no Copilot corpus at {COPILOT}")

DOMAIN = "example.com"
CERT = ROOT / "tests" / "e2e" / "data" / "acm-test-cert.pem"
KEY = ROOT / "tests" / "e2e" / "data" / "acm-test-key.pem"
STUB = "is not emulated"

APP = """
Parameters:
  App: {Type: String}
Resources:
  AppHostedZone:
    Type: AWS::Route53::HostedZone
    Properties:
      Name: !Sub "${App}.example.com"
  DNSDelegationRole:
    Type: AWS::IAM::Role
    Properties:
      RoleName: !Sub "${App}-DNSDelegationRole"
      AssumeRolePolicyDocument:
        Version: "2012-10-17"
        Statement:
          - Effect: Allow
            Principal: {AWS: !Sub "arn:aws:iam::${AWS::AccountId}:root"}
            Action: sts:AssumeRole
      Policies:
        - PolicyName: dns
          PolicyDocument:
            Version: "2012-10-17"
            Statement:
              - Effect: Allow
                Action: ["route53:*"]
                Resource: "*"
Outputs:
  Role:
    Value: !GetAtt DNSDelegationRole.Arn
  Zone:
    Value: !Ref AppHostedZone
"""

NETWORK = """
Resources:
  Vpc:
    Type: AWS::EC2::VPC
    Properties: {CidrBlock: 10.10.0.0/16, EnableDnsHostnames: true, EnableDnsSupport: true}
  Igw:
    Type: AWS::EC2::InternetGateway
  Attach:
    Type: AWS::EC2::VPCGatewayAttachment
    Properties: {VpcId: !Ref Vpc, InternetGatewayId: !Ref Igw}
  Public1: {Type: AWS::EC2::Subnet, Properties: {VpcId: !Ref Vpc, CidrBlock: 10.10.0.0/24, AvailabilityZone: us-east-1a}}
  Public2: {Type: AWS::EC2::Subnet, Properties: {VpcId: !Ref Vpc, CidrBlock: 10.10.1.0/24, AvailabilityZone: us-east-1b}}
  Private1: {Type: AWS::EC2::Subnet, Properties: {VpcId: !Ref Vpc, CidrBlock: 10.10.2.0/24, AvailabilityZone: us-east-1a}}
  Private2: {Type: AWS::EC2::Subnet, Properties: {VpcId: !Ref Vpc, CidrBlock: 10.10.3.0/24, AvailabilityZone: us-east-1b}}
Outputs:
  Vpc: {Value: !Ref Vpc}
  Public1: {Value: !Ref Public1}
  Public2: {Value: !Ref Public2}
  Private1: {Value: !Ref Private1}
  Private2: {Value: !Ref Private2}
"""


CIDRS = {'{"Ref": "arn:${AWS::Partition}:iam::"}': '{"Fn::Sub": "arn:${AWS::Partition}:iam::"}',
         '"CidrIp": "1.1.1.1"': '"CidrIp": "1.1.1.1/32"', '"CidrIp": "2.2.2.2"': '"CidrIp": "2.2.2.2/32"', '"CidrIp": "0.0.0.0"': '"CidrIp": "0.0.0.0/0"'}


def outputs(cfn, stack):
    s = cfn.describe_stacks(StackName=stack)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in s.get("Outputs", [])}


def deploy(cumulo, name, template_path, params=None, tags=None, check=True):
    args = ["cloudformation", "deploy", "--stack-name", name, "--template-file", str(template_path),
            "--capabilities", "CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"]
    if params:
        args += ["--parameter-overrides", *[f"{k}={v}" for k, v in params.items()]]
    if tags:
        args += ["--tags", *[f"{k}={v}" for k, v in tags.items()]]
    return cumulo.aws(*args, check=check)


def problems(cfn, stack):
    """Failed resources with their reasons, and resources cumulo only stubbed."""
    out = []
    pages = cfn.get_paginator("describe_stack_events").paginate(StackName=stack)
    for e in (e for page in pages for e in page["StackEvents"]):
        reason = e.get("ResourceStatusReason") or ""
        if e["ResourceStatus"].endswith("FAILED") or STUB in reason:
            out.append(f"{e['LogicalResourceId']} {e['ResourceStatus']}: {reason}")
    return out


def env_params(app, env, role, dns=True, workloads=True):
    fe = "fe" if workloads else ""
    return {
        "AppName": app,
        "EnvironmentName": env,
        "ALBWorkloads": fe,
        "InternalALBWorkloads": "be" if workloads else "",
        "EFSWorkloads": fe,
        "NATWorkloads": fe,
        "AppRunnerPrivateWorkloads": "",
        "ToolsAccountPrincipalARN": "arn:aws:iam::000000000000:root",
        "AppDNSName": DOMAIN if dns else "",
        "AppDNSDelegationRole": role if dns else "",
        "Aliases": json.dumps({"fe": [f"fe.{env}.{app}.{DOMAIN}"]}) if dns and workloads else "",
        "CreateHTTPSListener": "true" if dns else "false",
        "CreateInternalHTTPSListener": "false",
        "ServiceDiscoveryEndpoint": f"{env}.{app}.local",
    }


def inventory(cumulo):
    """Every resource id the services hold that a Copilot stack could make, by kind."""
    ec2 = cumulo.client("ec2")
    elb = cumulo.client("elbv2")
    out = {
        "vpc": {v["VpcId"] for v in ec2.describe_vpcs()["Vpcs"]},
        "subnet": {v["SubnetId"] for v in ec2.describe_subnets()["Subnets"]},
        "security-group": {v["GroupId"] for v in ec2.describe_security_groups()["SecurityGroups"]},
        "route-table": {v["RouteTableId"] for v in ec2.describe_route_tables()["RouteTables"]},
        "internet-gateway": {v["InternetGatewayId"] for v in ec2.describe_internet_gateways()["InternetGateways"]},
        "nat-gateway": {v["NatGatewayId"] for v in ec2.describe_nat_gateways()["NatGateways"]
                        if v["State"] not in ("deleted", "deleting")},
        "eip": {v["AllocationId"] for v in ec2.describe_addresses()["Addresses"]},
        "eni": {v["NetworkInterfaceId"] for v in ec2.describe_network_interfaces()["NetworkInterfaces"]},
        "load-balancer": {v["LoadBalancerArn"] for v in elb.describe_load_balancers()["LoadBalancers"]},
        "target-group": {v["TargetGroupArn"] for v in elb.describe_target_groups()["TargetGroups"]},
        "ecs-cluster": {c["clusterArn"] for c in cumulo.client("ecs").describe_clusters(
            clusters=cumulo.client("ecs").list_clusters()["clusterArns"])["clusters"] if c["status"] == "ACTIVE"},
        "efs": {v["FileSystemId"] for v in cumulo.client("efs").describe_file_systems()["FileSystems"]},
        "namespace": {v["Id"] for v in cumulo.client("servicediscovery").list_namespaces()["Namespaces"]},
        "hosted-zone": {v["Id"] for v in cumulo.client("route53").list_hosted_zones()["HostedZones"]},
        "certificate": {v["CertificateArn"] for v in cumulo.client("acm").list_certificates()["CertificateSummaryList"]},
        "function": {v["FunctionName"] for v in cumulo.client("lambda").list_functions()["Functions"]},
        "role": {v["RoleName"] for v in cumulo.client("iam").list_roles()["Roles"]},
        "log-group": {v["logGroupName"] for v in cumulo.client("logs").describe_log_groups()["logGroups"]},
        "bucket": {v["Name"] for v in cumulo.client("s3").list_buckets()["Buckets"]},
        "distribution": {v["Id"] for v in cumulo.client("cloudfront").list_distributions()[
            "DistributionList"].get("Items", [])},
        "resource-policy": {v["policyName"] for v in cumulo.client("logs").describe_resource_policies()[
            "resourcePolicies"]},
    }
    return out


def added(before, after):
    return {k: sorted(after[k] - before[k]) for k in after if after[k] - before[k]}


@pytest.fixture(scope="module")
def handlers(cumulo):
    bucket = f"copilot-handlers-{uuid.uuid4().hex[:8]}"
    upload_handlers(cumulo.client("s3"), bucket)
    return bucket


def render(path, bucket, tmp_path, literals=None):
    t = with_handler_code(load(path), kind_functions(path), bucket)
    text = json.dumps(t)
    for old, new in (literals or {}).items():
        text = text.replace(old, new)
    out = tmp_path / (path.stem + ".json")
    out.write_text(text)
    return out


ENV_TEMPLATES = sorted(p.name for p in COPILOT.glob("environments__*.yml")) if COPILOT.is_dir() else []


@pytest.mark.parametrize("name", ENV_TEMPLATES)
def test_environment_deploys_and_deletes(cumulo, handlers, tmp_path, name):
    cfn = cumulo.client("cloudformation")
    app = f"a{uuid.uuid4().hex[:6]}"
    env = "test"
    app_file = tmp_path / "app.yml"
    app_file.write_text(APP)
    deploy(cumulo, f"{app}-infrastructure-roles", app_file, {"App": app})
    role = outputs(cfn, f"{app}-infrastructure-roles")["Role"]
    literals = {}
    if "importedvpc" in name:
        net_file = tmp_path / "net.yml"
        net_file.write_text(NETWORK)
        deploy(cumulo, f"{app}-network", net_file)
        net = outputs(cfn, f"{app}-network")
        literals = {"vpc-12345": net["Vpc"], "subnet-11111": net["Public1"], "subnet-22222": net["Public2"],
                    "subnet-33333": net["Private1"], "subnet-44444": net["Private2"]}
    literals.update(CIDRS)
    acm = cumulo.client("acm")
    imported = []
    for placeholder in ("viewer-cert", "cert-1", "cert-2"):
        arn = acm.import_certificate(Certificate=CERT.read_bytes(), PrivateKey=KEY.read_bytes())["CertificateArn"]
        imported.append(arn)
        literals[f'"{placeholder}"'] = f'"{arn}"'

    path = render(COPILOT / name, handlers, tmp_path, literals)
    stack = f"{app}-{env}"
    before = inventory(cumulo)
    proc = deploy(cumulo, stack, path, env_params(app, env, role), check=False)
    assert proc.returncode == 0, f"{name}: {proc.stderr}\n" + "\n".join(problems(cfn, stack))
    assert problems(cfn, stack) == []
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 1, "MaxAttempts": 300})
    # What is left is what AWS leaves: what DeletionPolicy: Retain keeps (the environment's two
    # roles) and the log groups Lambda made for the custom-resource functions' output.
    left = added(before, inventory(cumulo))
    assert all(g.startswith(f"/aws/lambda/{stack}-") for g in left.pop("log-group", [])), left
    assert left == {"role": sorted([f"{app}-{env}-CFNExecutionRole", f"{app}-{env}-EnvManagerRole"])}
    for arn in imported:
        acm.delete_certificate(CertificateArn=arn)


def test_backend_workload_drives_its_environment_through_the_env_controller(cumulo, handlers, tmp_path):
    """A Backend Service behind the internal load balancer, deployed into an environment that has
    no workloads yet: its env-controller handler adds it to the environment's
    InternalALBWorkloads (an UpdateStack with the previous template, which creates the internal
    load balancer whose listener the workload's rule uses); deleting the workload takes it out
    again, and that update deletes the load balancer: the cascade issue 19 rehearses."""
    cfn = cumulo.client("cloudformation")
    elb = cumulo.client("elbv2")
    path = COPILOT / "workloads__backend__http-full-config-template.yml"
    params = json.loads((COPILOT / "workloads__backend__http-full-config-params.json").read_text())
    p = dict(params["Parameters"], ContainerImage=params["Parameters"]["ContainerImage"] or "public.ecr.aws/nginx/nginx:latest")
    app, env, name = p["AppName"], p["EnvName"], p["WorkloadName"]
    app_file = tmp_path / "app.yml"
    app_file.write_text(APP)
    deploy(cumulo, f"{app}-infrastructure-roles", app_file, {"App": app})
    role = outputs(cfn, f"{app}-infrastructure-roles")["Role"]
    env_stack = f"{app}-{env}"
    env_path = render(COPILOT / "environments__template-with-basic-manifest.yml", handlers, tmp_path, dict(CIDRS))
    deploy(cumulo, env_stack, env_path, env_params(app, env, role, workloads=False))
    assert "InternalLoadBalancerDNSName" not in outputs(cfn, env_stack)
    lbs_before = {lb["LoadBalancerArn"] for lb in elb.describe_load_balancers()["LoadBalancers"]}

    stack = f"{app}-{env}-{name}"
    literals = dict(CIDRS, **{"123456789123": "000000000000"})
    proc = deploy(cumulo, stack, render(path, handlers, tmp_path, literals), p, tags=params["Tags"], check=False)
    assert proc.returncode == 0, proc.stderr + "\n".join(problems(cfn, stack) + problems(cfn, env_stack))
    assert problems(cfn, stack) == []
    env_params_now = {x["ParameterKey"]: x["ParameterValue"]
                      for x in cfn.describe_stacks(StackName=env_stack)["Stacks"][0]["Parameters"]}
    assert env_params_now["InternalALBWorkloads"] == name
    internal = [lb for lb in elb.describe_load_balancers()["LoadBalancers"]
                if lb["LoadBalancerArn"] not in lbs_before]
    assert [lb["Scheme"] for lb in internal] == ["internal"]
    assert outputs(cfn, env_stack)["InternalLoadBalancerDNSName"] == internal[0]["DNSName"]
    listener = elb.describe_listeners(LoadBalancerArn=internal[0]["LoadBalancerArn"])["Listeners"][0]
    rules = [r for r in elb.describe_rules(ListenerArn=listener["ListenerArn"])["Rules"] if not r["IsDefault"]]
    assert rules, "the workload's listener rule is on the environment's internal load balancer"

    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 1, "MaxAttempts": 300})
    env_params_now = {x["ParameterKey"]: x["ParameterValue"]
                      for x in cfn.describe_stacks(StackName=env_stack)["Stacks"][0]["Parameters"]}
    assert env_params_now["InternalALBWorkloads"] == ""
    assert internal[0]["LoadBalancerArn"] not in {
        lb["LoadBalancerArn"] for lb in elb.describe_load_balancers()["LoadBalancers"]}
    cfn.delete_stack(StackName=env_stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=env_stack, WaiterConfig={"Delay": 1, "MaxAttempts": 300})
