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

The workload renders (test_workload_deploys_and_deletes, grouped by the environment they import
from: one `my-app-<env>` per EnvName and DNSDelegated, shared by its workloads):
- an app with a domain gets the basic-manifest environment; one without (DNSDelegated=false)
  the imported-certificates render, its `cert-1`/`cert-2` our imported certificate; the my-env
  environment's internal HTTPS listener (https-path-alias) gets that certificate too, as
  Copilot renders it from `http.private.certificates`, which the render was made without;
- a root `example.com` zone and a `foobar.com` zone (my-app-root-zones) stand in for the zones
  the manifests name: `mockHostedZone`, `mockHostedZone2`, `Z08230443CW11KE6JBNUA` become the
  example.com zone, `mockHostedZone1` the foobar.com one; static-site-test's certificate
  (`arn:aws:acm:us-east-1:1234567890:certificate/e5a6...`) becomes one requested for foobar.com
  and validated through that zone;
- the renders' account `123456789123` becomes `000000000000` (RootDNSRole, topic ARNs), and the
  topic ARNs' region `us-west-2` us-east-1 in the test environment;
- what the renders import from the user's own stacks comes from `my-app-<env>-imports` in the
  environment's VPC: security groups (MyUserDBAccessSecurityGroup1/2, and two for the group ids
  svc-test's manifest names, `sg-0c10c4fe23f5e5361`, `sg-09295097b2a41b59d`), an EFS file system
  (stack-fs-12345), the topics worker-test subscribes to (other services' publishers), and
  values of the right shape (MyDB, MYDB, test-UserDB, stack-SSMGHUserName, stack-MongoUserName,
  my-other-stack-exported-secret);
- svc-test's imported ALB: a stand-in ALB with two groups, an HTTPS and an HTTP listener
  (`MockListenerARN1`, `mockImportALBDNSName`, `mockHostedZoneID`, `mockImportALBName`,
  `mockImportALBSG1/2` become its values); the render's mock answered one listener ARN for both
  listeners, so its HTTP redirect rules and their priority action go on the HTTP listener;
- rdws-prod's subnets `mockSubnetID1/2` become the environment's private subnets; the RDWS
  renders (which have no parameters file) get the values Copilot passes for their manifest, and
  their `high-availability/3` auto scaling configuration is made (three revisions) first, and
  named by its newest revision's number where the session's server had used some before;
- `arn:${AWS::...}` written as a plain string where CloudFormation needs `!Sub` (job-test's
  ManagedPolicyArns, the RDWS AutoScalingConfigurationArn: a render quirk) becomes the `!Sub`;
- the Static Site's app stack set bucket (`stackset-bucket`) with a mapping file and assets is
  made first; its bucket is emptied before the stack is deleted, as `copilot svc delete` does;
- an empty ContainerImage parameter becomes a public image (ECS refuses an empty image);
- the stack-local fragments (only Resources entries) are deployed inside the Load-Balanced Web
  Service template they are parts of: the gRPC render (the same autoscaled shape and parameters)
  with the fragments' task definition and autoscaling resources, and its literal container name
  as `!Ref TargetContainer`;
- the environment's two retained roles are deleted after it, so its name can be deployed again.
"""
import json
import re
import subprocess
import time
import uuid

import pytest

from conftest import ROOT
from copilot_corpus import COPILOT, ENV_FUNCTIONS, kind_functions, load, upload_handlers, with_handler_code

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


def deploy(cumulo, name, template_path, params=None, tags=None, check=True, execute=True):
    args = ["cloudformation", "deploy", "--stack-name", name, "--template-file", str(template_path),
            "--capabilities", "CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"]
    if not execute:
        args.append("--no-execute-changeset")
    if params:
        args += ["--parameter-overrides", *[f"{k}={v}" for k, v in params.items()]]
    if tags:
        args += ["--tags", *[f"{k}={v}" for k, v in tags.items()]]
    return cumulo.aws(*args, check=check)


def deploy_quick(cumulo, name, template_path, params=None, tags=None):
    """`aws cloudformation deploy` with `--no-execute-changeset` (the CLI's own change set: its
    template upload, parameters, tags and capabilities), then the CLI's `execute-change-set`,
    polled at 0.1 s: the CLI's deploy waits 30 s before its first look at a stack that is still
    creating, which would be nearly all of these tests' time. Answers the stack's final status."""
    proc = deploy(cumulo, name, template_path, params, tags, check=False, execute=False)
    found = re.search(r"arn:aws:cloudformation:\S+:changeSet/\S+", proc.stdout)
    assert proc.returncode == 0 and found, proc.stdout + proc.stderr
    cumulo.aws("cloudformation", "execute-change-set", "--change-set-name", found[0])
    cfn = cumulo.client("cloudformation")
    for _ in range(3000):
        status = cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"]
        if not status.endswith("IN_PROGRESS"):
            return status
        time.sleep(0.1)
    return status


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
    assert deploy_quick(cumulo, f"{app}-infrastructure-roles", app_file, {"App": app}) == "CREATE_COMPLETE"
    role = outputs(cfn, f"{app}-infrastructure-roles")["Role"]
    literals = {}
    if "importedvpc" in name:
        net_file = tmp_path / "net.yml"
        net_file.write_text(NETWORK)
        assert deploy_quick(cumulo, f"{app}-network", net_file) == "CREATE_COMPLETE"
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
    if name == ENV_TEMPLATES[0]:
        # One environment through the CLI's whole `deploy` (its 30 s waiter), the rest quicker.
        proc = deploy(cumulo, stack, path, env_params(app, env, role), check=False)
        assert proc.returncode == 0, f"{name}: {proc.stderr}\n" + "\n".join(problems(cfn, stack))
    else:
        status = deploy_quick(cumulo, stack, path, env_params(app, env, role))
        assert status == "CREATE_COMPLETE", f"{name}: {status}\n" + "\n".join(problems(cfn, stack))
    assert problems(cfn, stack) == []
    assert delete(cfn, stack) == "DELETE_COMPLETE", "\n".join(problems(cfn, stack))
    # What is left is what AWS leaves: what DeletionPolicy: Retain keeps (the environment's two
    # roles) and the log groups Lambda made for the custom-resource functions' output.
    left = added(before, inventory(cumulo))
    assert all(g.startswith(f"/aws/lambda/{stack}-") for g in left.pop("log-group", [])), left
    assert left == {"role": sorted([f"{app}-{env}-CFNExecutionRole", f"{app}-{env}-EnvManagerRole"])}
    for arn in imported:
        acm.delete_certificate(CertificateArn=arn)


def test_backend_workload_drives_its_environment_through_the_env_controller(cumulo, handlers, workload_envs, tmp_path):
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
    role = workload_envs.role
    env_stack = f"{app}-{env}"
    env_path = render(COPILOT / "environments__template-with-basic-manifest.yml", handlers, tmp_path, dict(CIDRS))
    assert deploy_quick(cumulo, env_stack, env_path, env_params(app, env, role, workloads=False)) == "CREATE_COMPLETE"
    assert "InternalLoadBalancerDNSName" not in outputs(cfn, env_stack)
    lbs_before = {lb["LoadBalancerArn"] for lb in elb.describe_load_balancers()["LoadBalancers"]}

    stack = f"{app}-{env}-{name}"
    literals = dict(CIDRS, **{"123456789123": "000000000000"})
    status = deploy_quick(cumulo, stack, render(path, handlers, tmp_path, literals), p, tags=params["Tags"])
    assert status == "CREATE_COMPLETE", status + "\n".join(problems(cfn, stack) + problems(cfn, env_stack))
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
    assert delete(cfn, env_stack) == "DELETE_COMPLETE"
    delete_retained_roles(cumulo, env_stack)


# --- Workload stacks ---------------------------------------------------------------------------

# The root zone aliases outside the app's domain need (svc-nlb-prod's `nlb.example.com`):
# Copilot's app stack would have been given the domain's own zone.
ROOT_ZONE = """
Resources:
  Root:
    Type: AWS::Route53::HostedZone
    Properties: {Name: example.com}
  Foobar:
    Type: AWS::Route53::HostedZone
    Properties: {Name: foobar.com}
Outputs:
  Root: {Value: !Ref Root}
  Foobar: {Value: !Ref Foobar}
"""

# What the renders import from the user's own stacks (named in their manifests), exported by a
# stand-in deployed into the environment's VPC: security groups and an EFS file system that are
# real, and names/endpoints/ARNs of the right shape for what no service checks.
IMPORTS = """
Parameters:
  Env: {Type: String}
Conditions:
  Test: !Equals [!Ref Env, test]
  Prod: !Equals [!Ref Env, prod]
Resources:
  UserDb1:
    Type: AWS::EC2::SecurityGroup
    Condition: Test
    Properties:
      GroupDescription: user db 1
      VpcId: {"Fn::ImportValue": !Sub "my-app-${Env}-VpcId"}
  UserDb2:
    Type: AWS::EC2::SecurityGroup
    Condition: Test
    Properties:
      GroupDescription: user db 2
      VpcId: {"Fn::ImportValue": !Sub "my-app-${Env}-VpcId"}
  Fs:
    Type: AWS::EFS::FileSystem
    Condition: Test
  # The topics of the services worker-test subscribes to (Copilot's publishers' stacks).
  GivesDogs: {Type: AWS::SNS::Topic, Condition: Test, Properties: {TopicName: my-app-test-dogsvc-givesdogs}}
  GivesHuskies: {Type: AWS::SNS::Topic, Condition: Test, Properties: {TopicName: my-app-test-dogsvc-giveshuskies}}
  NonFifo: {Type: AWS::SNS::Topic, Condition: Test, Properties: {TopicName: my-app-test-nonfifotopic-nonfifotopic}}
  MyFifo:
    Type: AWS::SNS::Topic
    Condition: Test
    Properties: {TopicName: my-app-test-mytopic-mytopic.fifo, FifoTopic: true}
  YourFifo:
    Type: AWS::SNS::Topic
    Condition: Test
    Properties: {TopicName: my-app-test-yourtopic-yourtopic.fifo, FifoTopic: true}
  ManifestGroup1:
    Type: AWS::EC2::SecurityGroup
    Condition: Test
    Properties:
      GroupDescription: a group svc-test's manifest names by id
      VpcId: {"Fn::ImportValue": !Sub "my-app-${Env}-VpcId"}
  ManifestGroup2:
    Type: AWS::EC2::SecurityGroup
    Condition: Test
    Properties:
      GroupDescription: a group svc-test's manifest names by id
      VpcId: {"Fn::ImportValue": !Sub "my-app-${Env}-VpcId"}
  Handle:
    Type: AWS::CloudFormation::WaitConditionHandle
Outputs:
  UserDb1: {Condition: Test, Value: !Ref UserDb1, Export: {Name: MyUserDBAccessSecurityGroup1}}
  UserDb2: {Condition: Test, Value: !Ref UserDb2, Export: {Name: MyUserDBAccessSecurityGroup2}}
  Fs: {Condition: Test, Value: !Ref Fs, Export: {Name: stack-fs-12345}}
  MYDB: {Condition: Test, Value: mydb.cluster-abcdefghijkl.us-east-1.rds.amazonaws.com, Export: {Name: MYDB}}
  UserDB: {Condition: Test, Value: userdb, Export: {Name: test-UserDB}}
  Secret:
    Condition: Test
    Value: !Sub "arn:aws:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:other-AbCdEf"
    Export: {Name: my-other-stack-exported-secret}
  MyDB: {Condition: Prod, Value: mydb.cluster-abcdefghijkl.us-east-1.rds.amazonaws.com, Export: {Name: MyDB}}
  Mongo:
    Condition: Prod
    Value: !Sub "arn:aws:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:mongo-AbCdEf"
    Export: {Name: stack-MongoUserName}
  GHUser: {Value: /github/username, Export: {Name: stack-SSMGHUserName}}
  ManifestGroup1: {Condition: Test, Value: !Ref ManifestGroup1}
  ManifestGroup2: {Condition: Test, Value: !Ref ManifestGroup2}
"""

# svc-test's imported ALB (`MockListenerARN1`): a stand-in internet-facing ALB and listener in
# the environment's public subnets.
IMPORTED_ALB = """
Parameters:
  Cert: {Type: String}
Resources:
  Sg1:
    Type: AWS::EC2::SecurityGroup
    Properties: {GroupDescription: imported alb 1, VpcId: !ImportValue my-app-test-VpcId}
  Sg2:
    Type: AWS::EC2::SecurityGroup
    Properties: {GroupDescription: imported alb 2, VpcId: !ImportValue my-app-test-VpcId}
  Lb:
    Type: AWS::ElasticLoadBalancingV2::LoadBalancer
    Properties:
      Subnets: !Split [",", !ImportValue my-app-test-PublicSubnets]
      SecurityGroups: [!Ref Sg1, !Ref Sg2]
  Https:
    Type: AWS::ElasticLoadBalancingV2::Listener
    Properties:
      LoadBalancerArn: !Ref Lb
      Port: 443
      Protocol: HTTPS
      Certificates: [{CertificateArn: !Ref Cert}]
      DefaultActions: [{Type: fixed-response, FixedResponseConfig: {StatusCode: "404"}}]
  Http:
    Type: AWS::ElasticLoadBalancingV2::Listener
    Properties:
      LoadBalancerArn: !Ref Lb
      Port: 80
      Protocol: HTTP
      DefaultActions: [{Type: fixed-response, FixedResponseConfig: {StatusCode: "404"}}]
Outputs:
  MockListenerARN1: {Value: !Ref Https}
  HTTPListener: {Value: !Ref Http}
  mockImportALBDNSName: {Value: !GetAtt Lb.DNSName}
  mockHostedZoneID: {Value: !GetAtt Lb.CanonicalHostedZoneID}
  mockImportALBName: {Value: !GetAtt Lb.LoadBalancerFullName}
  mockImportALBSG1: {Value: !Ref Sg1}
  mockImportALBSG2: {Value: !Ref Sg2}
"""

# The Request-Driven Web Service renders have no parameters file: these are the values Copilot
# passes for their manifest (workloads__rdws-manifest.yml).
RDWS_PARAMS = {"AppName": "my-app", "WorkloadName": "frontend", "ContainerImage": "public.ecr.aws/nginx/nginx:latest",
               "ContainerPort": "8080", "ImageRepositoryType": "ECR", "InstanceCPU": "1024",
               "InstanceMemory": "2048", "AddonsTemplateURL": "",
               "ArtifactKeyARN": "arn:aws:kms:us-west-2:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab"}
IMAGE = "public.ecr.aws/nginx/nginx:latest"
STACKSET_BUCKET = "stackset-bucket"


def delete_retained_roles(cumulo, env_stack):
    """The environment's two retained roles, deleted after the stack so its name can be deployed
    again (as one does on AWS)."""
    iam = cumulo.client("iam")
    for role in (f"{env_stack}-CFNExecutionRole", f"{env_stack}-EnvManagerRole"):
        for name in iam.list_role_policies(RoleName=role)["PolicyNames"]:
            iam.delete_role_policy(RoleName=role, PolicyName=name)
        iam.delete_role(RoleName=role)


def load_workload(path):
    """A render, or for the stack-local fragments (only Resources entries, Copilot's expected
    parts of the Load-Balanced Web Service its stacklocal manifest renders) that service's
    template: the gRPC service's render (the same autoscaled LBWS shape, parameters and
    resources) with the fragments' task definition and autoscaling resources in place of its own."""
    if not path.name.startswith("stacklocal__"):
        return load(path)
    t = load(COPILOT / "workloads__svc-grpc-test.stack.yml")
    t["Resources"].update(load(COPILOT / "stacklocal__override-cf.yml"))
    t["Resources"].update(load(path))
    # The gRPC render names its container literally where this manifest's would be my-svc.
    t["Resources"]["Service"]["Properties"]["LoadBalancers"][0]["ContainerName"] = {"Ref": "TargetContainer"}
    return t


def check_static_site(cumulo, stack):
    """The site's assets were copied into its bucket by the state machine its custom resource ran."""
    bucket = cumulo.client("cloudformation").describe_stack_resource(StackName=stack, LogicalResourceId="Bucket")[
        "StackResourceDetail"]["PhysicalResourceId"]
    s3 = cumulo.client("s3")
    index = s3.get_object(Bucket=bucket, Key="index.html")
    assert (index["Body"].read(), index["ContentType"]) == (b"<h1>hello</h1>", "text/html")
    assert s3.get_object(Bucket=bucket, Key="style.css")["Body"].read() == b"h1 {}"


def empty_bucket(cumulo, stack):
    """What `copilot svc delete` does before deleting a Static Site's stack."""
    try:
        bucket = cumulo.client("cloudformation").describe_stack_resource(StackName=stack, LogicalResourceId="Bucket")[
            "StackResourceDetail"]["PhysicalResourceId"]
    except cumulo.client("cloudformation").exceptions.ClientError:
        return
    s3 = cumulo.client("s3")
    listing = s3.list_object_versions(Bucket=bucket)
    for v in listing.get("Versions", []) + listing.get("DeleteMarkers", []):
        s3.delete_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"])


def delete(cfn, stack):
    """Deletes a stack (by name or id) and answers the status it ends in."""
    stack_id = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
    cfn.delete_stack(StackName=stack_id)
    for _ in range(3000):
        status = cfn.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"]
        if not status.endswith("IN_PROGRESS"):
            return status
        time.sleep(0.1)
    return status


def workload_templates():
    if not COPILOT.is_dir():
        return []
    paths = [p for p in sorted(COPILOT.glob("workloads__*.yml")) if "manifest" not in p.name]
    paths = [p for p in paths if "http-full-config" not in p.name]  # its own test above
    paths.append(COPILOT / "stacklocal__autoscaling-svc-cf.yml")
    return sorted(paths, key=lambda p: (*env_of(p), p.name))


def env_of(path):
    """The environment a render needs: its name, and whether the app has a domain
    (`DNSDelegated`; the renders without the parameter are given one)."""
    params = workload_params(path)[0]
    return params["EnvName"], params.get("DNSDelegated", "true") == "true"


def workload_params(path):
    """The render's parameters and tags (Copilot's, or the RDWS values above)."""
    name = path.name
    if name.startswith("stacklocal__"):
        data = json.loads((COPILOT / "stacklocal__cf.params.json").read_text())
        return dict(data["Parameters"]), data["Tags"]
    if name.startswith("workloads__rdws-"):
        env = name.split("-")[1].split(".")[0]
        tags = {"copilot-application": "my-app", "copilot-environment": env, "copilot-service": "frontend"}
        return dict(RDWS_PARAMS, EnvName=env), tags
    pf = name.replace("-template", "-params").replace(".stack.yml", ".params.json").replace(".yml", ".json")
    data = json.loads((COPILOT / pf).read_text())
    params = dict(data["Parameters"])
    if "ContainerImage" in params and not params["ContainerImage"]:
        params["ContainerImage"] = IMAGE  # ECS refuses an empty image, as AWS does
    return params, data["Tags"]


def _sub_literal_arns(v):
    """`arn:${AWS::Partition}:...` written as a plain string where CloudFormation needs `!Sub`
    (job-test's ManagedPolicyArns, the RDWS AutoScalingConfigurationArn): made the `!Sub` meant."""
    if isinstance(v, dict):
        return {k: _sub_literal_arns(x) if k != "Fn::Sub" else x for k, x in v.items()}
    if isinstance(v, list):
        return [_sub_literal_arns(x) for x in v]
    if isinstance(v, str) and v.startswith("arn:${AWS::"):
        return {"Fn::Sub": v}
    return v


class WorkloadEnvs:
    """The environment (with its app, root-zone and imports stand-ins) the workloads of one
    AppName/EnvName share: deployed when the first asks, torn down when another is asked for;
    and the stand-ins every environment shares (zones, artifact bucket, certificates)."""

    def __init__(self, cumulo, handlers, tmp_path):
        self.cumulo, self.handlers, self.tmp = cumulo, handlers, tmp_path
        self.cfn = cumulo.client("cloudformation")
        self.current = None
        self.stacks = []
        app_file = tmp_path / "app.yml"
        app_file.write_text(APP)
        assert deploy_quick(cumulo, "my-app-infrastructure-roles", app_file, {"App": "my-app"}) == "CREATE_COMPLETE"
        self.role = outputs(self.cfn, "my-app-infrastructure-roles")["Role"]
        root = tmp_path / "root.yml"
        root.write_text(ROOT_ZONE)
        assert deploy_quick(cumulo, "my-app-root-zones", root) == "CREATE_COMPLETE"
        self.zones = outputs(self.cfn, "my-app-root-zones")
        # Copilot's app stack set bucket, with the static site's mapping file and assets.
        s3 = cumulo.client("s3")
        s3.create_bucket(Bucket=STACKSET_BUCKET)
        s3.put_object(Bucket=STACKSET_BUCKET, Key="local-assets/index", Body=b"<h1>hello</h1>")
        s3.put_object(Bucket=STACKSET_BUCKET, Key="local-assets/style", Body=b"h1 {}")
        s3.put_object(Bucket=STACKSET_BUCKET, Key="mappingfile", Body=json.dumps([
            {"path": "local-assets/index", "destPath": "index.html", "contentType": "text/html"},
            {"path": "local-assets/style", "destPath": "style.css"}]).encode())
        # The RDWS manifest's `count: high-availability/3`: revision 3 of that configuration. The
        # session's server may already have used revisions of the name (test_apprunner's, deleted:
        # as on AWS, a deleted revision's number is not given again), so the newest made here
        # stands for revision 3.
        ar = cumulo.client("apprunner")
        made = [ar.create_auto_scaling_configuration(AutoScalingConfigurationName="high-availability")[
            "AutoScalingConfiguration"] for _ in range(3)]
        self.scaling = [m["AutoScalingConfigurationArn"] for m in made]
        self.scaling_revision = made[-1]["AutoScalingConfigurationRevision"]
        acm = cumulo.client("acm")
        # The internal listener's certificate (Copilot's `http.private.certificates`).
        self.internal_cert = acm.import_certificate(Certificate=CERT.read_bytes(), PrivateKey=KEY.read_bytes())[
            "CertificateArn"]
        # static-site-test's certificate for its alias foobar.com, validated through its zone.
        self.foobar_cert = acm.request_certificate(DomainName="foobar.com", ValidationMethod="DNS")["CertificateArn"]
        for _ in range(100):
            opts = acm.describe_certificate(CertificateArn=self.foobar_cert)["Certificate"]["DomainValidationOptions"]
            if all("ResourceRecord" in o for o in opts):
                break
            time.sleep(0.1)
        r = opts[0]["ResourceRecord"]
        cumulo.client("route53").change_resource_record_sets(HostedZoneId=self.zones["Foobar"], ChangeBatch={
            "Changes": [{"Action": "UPSERT", "ResourceRecordSet": {
                "Name": r["Name"], "Type": r["Type"], "TTL": 60, "ResourceRecords": [{"Value": r["Value"]}]}}]})
        acm.get_waiter("certificate_validated").wait(CertificateArn=self.foobar_cert,
                                                     WaiterConfig={"Delay": 1, "MaxAttempts": 60})

    def get(self, env, dns):
        if self.current == (env, dns):
            return
        self.teardown_env()
        env_stack = f"my-app-{env}"
        # An app without a domain serves HTTPS with the certificates its environment manifest
        # imports: the render made from such a manifest, its placeholders our imported certificate.
        template = "basic-manifest" if dns else "imported-certs-sslpolicy-custom-empty-security-group"
        t = with_handler_code(load(COPILOT / f"environments__template-with-{template}.yml"), ENV_FUNCTIONS,
                              self.handlers)
        params = env_params("my-app", env, self.role, dns=dns, workloads=False)
        params["CreateHTTPSListener"] = "true"
        if env == "my-env":
            # https-path-alias's environment has an internal HTTPS listener: Copilot renders its
            # certificates from the environment manifest, which the render was made without.
            t["Resources"]["InternalHTTPSListener"]["Properties"]["Certificates"] = [
                {"CertificateArn": self.internal_cert}]
            params["CreateInternalHTTPSListener"] = "true"
        text = json.dumps(t)
        for old, new in dict(CIDRS, **{'"cert-1"': f'"{self.internal_cert}"', '"cert-2"': f'"{self.internal_cert}"'}).items():
            text = text.replace(old, new)
        path = self.tmp / f"env-{env}.json"
        path.write_text(text)
        status = deploy_quick(self.cumulo, env_stack, path, params)
        assert status == "CREATE_COMPLETE", status + "\n".join(problems(self.cfn, env_stack))
        self.stacks = [env_stack]
        imports = self.tmp / "imports.yml"
        imports.write_text(IMPORTS)
        assert deploy_quick(self.cumulo, f"my-app-{env}-imports", imports, {"Env": env}) == "CREATE_COMPLETE"
        self.stacks.insert(0, f"my-app-{env}-imports")
        if env == "test":
            alb = self.tmp / "alb.yml"
            alb.write_text(IMPORTED_ALB)
            assert deploy_quick(self.cumulo, "my-app-test-imported-alb", alb, {"Cert": self.internal_cert}) == "CREATE_COMPLETE"
            self.stacks.insert(0, "my-app-test-imported-alb")
        self.current = (env, dns)

    def literals(self, path, env):
        """The render's literals the stand-ins replace (each named in the module's docstring)."""
        out = dict(CIDRS, **{"123456789123": "000000000000",
                             "mockHostedZone1": self.zones["Foobar"], "mockHostedZone2": self.zones["Root"],
                             "mockHostedZone\"": self.zones["Root"] + '"',
                             "arn:aws:acm:us-east-1:1234567890:certificate/e5a6e114-b022-45b1-9339-38fbfd6db3e2":
                                 self.foobar_cert})
        if env == "test":
            alb = outputs(self.cfn, "my-app-test-imported-alb")
            self.http_listener = alb.pop("HTTPListener")
            imports = outputs(self.cfn, "my-app-test-imports")
            out.update(alb)
            out.update({"Z08230443CW11KE6JBNUA": self.zones["Root"], "sns:us-west-2:": "sns:us-east-1:",
                        "sg-0c10c4fe23f5e5361": imports["ManifestGroup1"],
                        "sg-09295097b2a41b59d": imports["ManifestGroup2"]})
        if env == "prod":
            private = outputs(self.cfn, "my-app-prod")["PrivateSubnets"].split(",")
            out.update({"mockSubnetID1": private[0], "mockSubnetID2": private[1]})
        if path.name.startswith("workloads__rdws-"):
            out["autoscalingconfiguration/high-availability/3"] = \
                f"autoscalingconfiguration/high-availability/{self.scaling_revision}"
        return out

    def teardown_env(self):
        stacks, self.stacks, self.current = self.stacks, [], None
        for stack in stacks:
            status = delete(self.cfn, stack)
            assert status == "DELETE_COMPLETE", f"{stack}: {status}: " + "\n".join(problems(self.cfn, stack))
        if stacks:
            delete_retained_roles(self.cumulo, stacks[-1])

    def teardown(self):
        self.teardown_env()
        s3 = self.cumulo.client("s3")
        for o in s3.list_objects_v2(Bucket=STACKSET_BUCKET).get("Contents", []):
            s3.delete_object(Bucket=STACKSET_BUCKET, Key=o["Key"])
        s3.delete_bucket(Bucket=STACKSET_BUCKET)
        for arn in self.scaling:
            self.cumulo.client("apprunner").delete_auto_scaling_configuration(AutoScalingConfigurationArn=arn)
        for arn in (self.internal_cert, self.foobar_cert):
            self.cumulo.client("acm").delete_certificate(CertificateArn=arn)


@pytest.fixture(scope="module")
def workload_envs(cumulo, handlers, tmp_path_factory):
    envs = WorkloadEnvs(cumulo, handlers, tmp_path_factory.mktemp("copilot-envs"))
    yield envs
    envs.teardown()


@pytest.mark.parametrize("path", workload_templates(), ids=lambda p: p.name)
def test_workload_deploys_and_deletes(cumulo, handlers, workload_envs, tmp_path, path):
    cfn = cumulo.client("cloudformation")
    params, tags = workload_params(path)
    env, dns = env_of(path)
    workload_envs.get(env, dns)
    literals = workload_envs.literals(path, env)
    t = _sub_literal_arns(with_handler_code(load_workload(path), kind_functions(path), handlers))
    if path.name == "workloads__svc-test.stack.yml":
        # The render's mocked ALB answered one listener ARN for both of its listeners: the
        # redirect rules belong on its HTTP listener, the forwarding rules on its HTTPS one.
        for logical in ("HTTPRedirectRulePriorityAction", "HTTPListenerRedirectRuleForImportedALB",
                        "HTTPListenerRedirectRuleForImportedALB1"):
            t["Resources"][logical]["Properties"]["ListenerArn"] = workload_envs.http_listener
    text = json.dumps(t)
    for old, new in literals.items():
        text = text.replace(old, new)
    rendered = tmp_path / (path.stem + ".json")
    rendered.write_text(text)
    stack = f"my-app-{env}-{params['WorkloadName']}"
    before = inventory(cumulo)
    t0 = time.monotonic()
    try:
        status = deploy_quick(cumulo, stack, rendered, params, tags=tags)
        assert status == "CREATE_COMPLETE", f"{path.name}: {status}\n" + "\n".join(
            problems(cfn, stack) + problems(cfn, f"my-app-{env}"))
        assert problems(cfn, stack) == []
        created = time.monotonic() - t0
        if "static-site" in path.name:
            check_static_site(cumulo, stack)
    finally:
        stack_id = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
        if "static-site" in path.name:
            empty_bucket(cumulo, stack)
        status = delete(cfn, stack_id)
    assert status == "DELETE_COMPLETE", f"{path.name}: {status}: " + "\n".join(problems(cfn, stack_id))
    left = added(before, inventory(cumulo))
    # Lambda's log groups for the custom-resource functions' output stay, as on AWS.
    assert all(g.startswith(f"/aws/lambda/{stack}-") for g in left.pop("log-group", [])), left
    # A workload with aliases has the environment's certificate requested again for them, and
    # again without them when it goes: the environment's certificate is a new one, no leftover.
    env_certs = {r["PhysicalResourceId"] for r in cfn.describe_stack_resources(StackName=f"my-app-{env}")[
        "StackResources"] if r["ResourceType"] == "Custom::CertificateValidationFunction"}
    left["certificate"] = [c for c in left.get("certificate", []) if c not in env_certs]
    left = {k: v for k, v in left.items() if v}
    assert left == {}, path.name
    print(f"{path.name}: created in {created:.1f}s, deleted in {time.monotonic() - t0 - created:.1f}s")
