"""Copilot's workload templates with an ECS service (../shared/corpus/copilot; every one but
the Scheduled Job and Static Site, which have none) deployed through CloudFormation with their
ECS and Cloud Map resources exactly as Copilot writes them, after stand-ins (deployed with
`aws cloudformation deploy`) for the environment stacks and the stacks they import from.

Substitutions, until the environment stack itself deploys (each named here so the integration
can remove it):
- the environment stand-in holds the real ECS cluster, Cloud Map private DNS namespace, VPC,
  subnets and security groups (the two the renders import from MyUserDBAccessSecurityGroup1/2
  among them, since a task's groups must be in its subnets' VPC), and exports them; a group id
  a manifest names literally (MANIFEST_GROUPS) is replaced by a real group's;
- a workload keeps only its ECS, Cloud Map and log group resources and the IAM roles they name:
  the service's LoadBalancers (target groups of the environment's load balancer) are dropped,
  and references to dropped resources (custom resources, target groups, queues) become literal
  strings; the desired count a custom resource answers becomes the TaskCount parameter;
- what the renders import from the user's own stacks (MyDB, stack-fs-12345, ...) comes from a
  stand-in exporting ids of the right shape;
- an empty ContainerImage parameter becomes a public image, as ECS refuses an empty image."""

import json
import os
import pathlib
import re
import time
import uuid

import pytest
import yaml

from conftest import ROOT

# The shared corpus beside the repository, or where CUMULO_CORPUS says.
CORPUS = pathlib.Path(os.environ.get("CUMULO_CORPUS") or ROOT.parent / "shared" / "corpus")
COPILOT = CORPUS / "copilot"
KEPT = ("AWS::ECS::", "AWS::ServiceDiscovery::", "AWS::Logs::LogGroup")
FAST = {"Delay": 1, "MaxAttempts": 60}

pytestmark = pytest.mark.skipif(not COPILOT.is_dir(), reason=f"no Copilot corpus at {COPILOT}")


class _Loader(yaml.SafeLoader):
    pass


def _tag(loader, suffix, node):
    # Copilot's renders write `!Ref: AWS::NoValue`, which CloudFormation reads as `!Ref`.
    suffix = suffix.rstrip(":")
    if isinstance(node, yaml.ScalarNode):
        v = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        v = loader.construct_sequence(node, deep=True)
    else:
        v = loader.construct_mapping(node, deep=True)
    if suffix == "Ref":
        return {"Ref": v}
    if suffix == "Condition":
        return {"Condition": v}
    if suffix == "GetAtt" and isinstance(v, str):
        v = v.split(".", 1)
    return {f"Fn::{suffix}": v}


_Loader.add_multi_constructor("!", _tag)


def _substitute(v, gone):
    """References to dropped resources become literal strings."""
    if isinstance(v, dict):
        ref = v.get("Ref")
        if isinstance(ref, str) and ref.split(".", 1)[0] in gone:
            # The autoscaling template's desired count comes from a custom resource that
            # answers the TaskCount parameter while no scaling policy has acted.
            if ref == "DynamicDesiredCountAction.DesiredCount":
                return {"Ref": "TaskCount"}
            return f"substituted-{ref}"
        att = v.get("Fn::GetAtt")
        if att == ["DynamicDesiredCountAction", "DesiredCount"]:
            return {"Ref": "TaskCount"}
        if isinstance(att, list) and att and att[0] in gone:
            return f"substituted-{att[0]}-{att[1]}"
        sub = v.get("Fn::Sub")
        if sub is not None:
            text, names = (sub[0], sub[1]) if isinstance(sub, list) else (sub, None)
            text = re.sub(r"\$\{([A-Za-z0-9]+)(\.[A-Za-z0-9.]+)?\}",
                          lambda m: f"substituted-{m[1]}" if m[1] in gone else m[0], text)
            return {"Fn::Sub": [text, _substitute(names, gone)] if names is not None else text}
        return {k: _substitute(x, gone) for k, x in v.items()}
    if isinstance(v, list):
        return [_substitute(x, gone) for x in v]
    return v


def workload(path):
    t = yaml.load(path.read_text(), Loader=_Loader)
    resources = t["Resources"]
    kept = {k: r for k, r in resources.items() if r["Type"].startswith(KEPT)}
    # The task and execution roles the kept resources name (not the custom resources' roles).
    text = json.dumps(kept, default=str)
    for k, r in resources.items():
        if r["Type"] == "AWS::IAM::Role" and (f'"{k}"' in text or f"${{{k}" in text):
            kept[k] = r
    gone = set(resources) - set(kept)
    for r in kept.values():
        props = r.get("Properties", {})
        if r["Type"] == "AWS::ECS::Service":
            props.pop("LoadBalancers", None)
        deps = r.get("DependsOn")
        if deps is not None:
            deps = [deps] if isinstance(deps, str) else deps
            r["DependsOn"] = [d for d in deps if d in kept]
    t["Resources"] = _substitute(kept, gone)
    t.pop("Outputs", None)
    return t


ENV = """
Parameters:
  App: {Type: String}
  Env: {Type: String}
Resources:
  Cluster:
    Type: AWS::ECS::Cluster
    Properties:
      CapacityProviders: [FARGATE, FARGATE_SPOT]
      Configuration:
        ExecuteCommandConfiguration:
          Logging: DEFAULT
      ClusterSettings:
        - Name: containerInsights
          Value: enabled
  Namespace:
    Type: AWS::ServiceDiscovery::PrivateDnsNamespace
    Properties:
      Name: !Sub "${Env}.${App}.local"
      Vpc: !ImportValue cumulo-net-Vpc
Outputs:
  ClusterId:
    Value: !Ref Cluster
    Export: {Name: !Sub "${App}-${Env}-ClusterId"}
  Namespace:
    Value: !GetAtt Namespace.Id
    Export: {Name: !Sub "${App}-${Env}-ServiceDiscoveryNamespaceID"}
  PublicSubnets:
    Value: !ImportValue cumulo-net-PublicSubnets
    Export: {Name: !Sub "${App}-${Env}-PublicSubnets"}
  PrivateSubnets:
    Value: !ImportValue cumulo-net-PrivateSubnets
    Export: {Name: !Sub "${App}-${Env}-PrivateSubnets"}
  SecurityGroup:
    Value: !ImportValue cumulo-net-EnvironmentSecurityGroup
    Export: {Name: !Sub "${App}-${Env}-EnvironmentSecurityGroup"}

"""


# The network every environment stand-in shares (deployed once): a VPC, subnets and groups,
# the two the renders import from their users' stacks among them.
NETWORK = """
Resources:
  Vpc:
    Type: AWS::EC2::VPC
    Properties: {CidrBlock: 10.0.0.0/16}
  PublicA:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: !Ref Vpc, CidrBlock: 10.0.0.0/24, AvailabilityZone: us-east-1a}
  PublicB:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: !Ref Vpc, CidrBlock: 10.0.1.0/24, AvailabilityZone: us-east-1b}
  PrivateA:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: !Ref Vpc, CidrBlock: 10.0.2.0/24, AvailabilityZone: us-east-1a}
  PrivateB:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: !Ref Vpc, CidrBlock: 10.0.3.0/24, AvailabilityZone: us-east-1b}
  EnvironmentSecurityGroup:
    Type: AWS::EC2::SecurityGroup
    Properties: {GroupDescription: environment, VpcId: !Ref Vpc}
  UserDb1:
    Type: AWS::EC2::SecurityGroup
    Properties: {GroupDescription: user db 1, VpcId: !Ref Vpc}
  UserDb2:
    Type: AWS::EC2::SecurityGroup
    Properties: {GroupDescription: user db 2, VpcId: !Ref Vpc}
  ManifestGroup:
    Type: AWS::EC2::SecurityGroup
    Properties: {GroupDescription: the group a manifest names by id, VpcId: !Ref Vpc}
Outputs:
  Vpc:
    Value: !Ref Vpc
    Export: {Name: cumulo-net-Vpc}
  PublicSubnets:
    Value: !Join [",", [!Ref PublicA, !Ref PublicB]]
    Export: {Name: cumulo-net-PublicSubnets}
  PrivateSubnets:
    Value: !Join [",", [!Ref PrivateA, !Ref PrivateB]]
    Export: {Name: cumulo-net-PrivateSubnets}
  EnvironmentSecurityGroup:
    Value: !Ref EnvironmentSecurityGroup
    Export: {Name: cumulo-net-EnvironmentSecurityGroup}
  UserDb1:
    Value: !Ref UserDb1
    Export: {Name: MyUserDBAccessSecurityGroup1}
  UserDb2:
    Value: !Ref UserDb2
    Export: {Name: MyUserDBAccessSecurityGroup2}
  ManifestGroup:
    Value: !Ref ManifestGroup
"""

# Security group ids the renders' manifests name literally (svc, job): a real group stands in.
MANIFEST_GROUPS = ["sg-0c10c4fe23f5e5361", "sg-09295097b2a41b59d"]


# What the renders import from stacks of the user's own (named in their manifests): a stand-in
# exporting ids of the right shape.
IMPORTS = {
    "MyDB": "mydb.cluster-abcdefghijkl.us-east-1.rds.amazonaws.com",
    "stack-MongoUserName": "arn:aws:secretsmanager:us-east-1:000000000000:secret:mongo-AbCdEf",
    "stack-SSMGHUserName": "/github/username",
    "stack-fs-12345": "fs-0123456789abcdef0",
}


def imports_template():
    return json.dumps({
        "Resources": {"Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"}},
        "Outputs": {f"O{i}": {"Value": v, "Export": {"Name": k}}
                    for i, (k, v) in enumerate(IMPORTS.items())},
    })


def failures(cfn, stack):
    """The failed resources' reasons, for a deploy's assertion message."""
    try:
        events = cfn.describe_stack_events(StackName=stack)["StackEvents"]
    except cfn.exceptions.ClientError:
        return []
    return [f"{e['LogicalResourceId']}: {e.get('ResourceStatusReason')}"
            for e in events if e["ResourceStatus"].endswith("FAILED")]


def settle(cfn, stack):
    """Polls a stack until no operation is in progress (finer than the waiters' 1 s)."""
    for _ in range(600):
        status = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"]
        if not status.endswith("IN_PROGRESS"):
            return status
        time.sleep(0.05)
    return status


def params_of(path):
    """The render's parameters file beside it (`-template` / `.stack` renamed to params)."""
    name = path.name.replace("-template", "-params").replace(".stack.yml", ".params.json")
    params = json.loads((path.parent / name.replace(".yml", ".json")).read_text())["Parameters"]
    if not params.get("ContainerImage"):
        params["ContainerImage"] = "public.ecr.aws/nginx/nginx:latest"
    return params


def services_of(path):
    return [k for k, r in yaml.load(path.read_text(), Loader=_Loader)["Resources"].items()
            if r["Type"] == "AWS::ECS::Service"]


def test_copilot_workloads_deploy_and_delete(cumulo, tmp_path):
    ecs = cumulo.client("ecs")
    sd = cumulo.client("servicediscovery")
    cfn = cumulo.client("cloudformation")
    templates = [p for p in sorted(COPILOT.glob("workloads__*.yml"))
                 if "manifest" not in p.name and services_of(p)]
    assert len(templates) >= 6
    env_file = tmp_path / "env.yml"
    env_file.write_text(ENV)
    net_file = tmp_path / "net.yml"
    net_file.write_text(NETWORK)
    net_stack = f"copilot-net-{uuid.uuid4().hex[:6]}"
    cumulo.aws("cloudformation", "deploy", "--stack-name", net_stack, "--template-file", str(net_file))
    net_out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=net_stack)["Stacks"][0]["Outputs"]}
    imports_file = tmp_path / "imports.json"
    imports_file.write_text(imports_template())
    imports_stack = f"copilot-imports-{uuid.uuid4().hex[:6]}"
    cumulo.aws("cloudformation", "deploy", "--stack-name", imports_stack, "--template-file",
               str(imports_file))
    envs = {}
    deployed = []
    for path in templates:
        params = params_of(path)
        app, env = params["AppName"], params["EnvName"]
        if (app, env) not in envs:
            env_stack = f"copilot-env-{uuid.uuid4().hex[:6]}"
            cumulo.aws("cloudformation", "deploy", "--stack-name", env_stack, "--template-file",
                       str(env_file), "--parameter-overrides", f"App={app}", f"Env={env}")
            outputs = cfn.describe_stacks(StackName=env_stack)["Stacks"][0]["Outputs"]
            envs[(app, env)] = (env_stack, next(o["OutputValue"] for o in outputs
                                                if o["OutputKey"] == "ClusterId"))
        cluster = envs[(app, env)][1]
        f = tmp_path / path.name.replace(".yml", ".json")
        t = workload(path)
        text = json.dumps(t, default=str)  # YAML reads 2010-09-09 as a date
        for literal in MANIFEST_GROUPS:
            text = text.replace(literal, net_out["ManifestGroup"])
        f.write_text(text)
        stack = f"copilot-{uuid.uuid4().hex[:6]}"
        # boto3 rather than the CLI here, for the suite's time; test_ecs.py deploys with the CLI.
        cfn.create_stack(StackName=stack, TemplateBody=f.read_text(),
                         Capabilities=["CAPABILITY_NAMED_IAM"],
                         Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in params.items()])
        status = settle(cfn, stack)
        assert status == "CREATE_COMPLETE", f"{path.name}: " + "; ".join(failures(cfn, stack))
        deployed.append(stack)
        for logical in services_of(path):
            arn = cfn.describe_stack_resource(StackName=stack, LogicalResourceId=logical)[
                "StackResourceDetail"]["PhysicalResourceId"]
            svc = ecs.describe_services(cluster=cluster, services=[arn])["services"][0]
            assert svc["serviceArn"] == arn
            assert svc["status"] == "ACTIVE", path.name
            assert svc["runningCount"] == svc["desiredCount"] == int(params["TaskCount"]), path.name
            assert svc["deployments"][0]["rolloutState"] == "COMPLETED"
            td = ecs.describe_task_definition(taskDefinition=svc["taskDefinition"])["taskDefinition"]
            assert td["family"] == f"{app}-{env}-{params['WorkloadName']}"
            assert (td["cpu"], td["memory"]) == (params["TaskCPU"], params["TaskMemory"])
            # A workload that exposes a port registers its tasks in its Cloud Map service, and
            # one with Service Connect in the Cloud Map service ECS makes for it.
            connect = svc["deployments"][0].get("serviceConnectResources", [])
            sc = t["Resources"][logical]["Properties"].get("ServiceConnectConfiguration")
            # (a client-only configuration, with no Services, makes none)
            served = isinstance(sc, dict) and sc.get("Enabled") is True and bool(sc.get("Services"))
            assert bool(connect) == served, path.name
            for registry in svc["serviceRegistries"] + [{"registryArn": c["discoveryArn"]} for c in connect]:
                srv_id = registry["registryArn"].rsplit("/", 1)[1]
                instances = sd.list_instances(ServiceId=srv_id)["Instances"]
                assert len(instances) == svc["runningCount"]
                assert all("AWS_INSTANCE_IPV4" in i["Attributes"] for i in instances)

        # Renders share workload names (and so Cloud Map service names): each workload is
        # deleted before the next, as Copilot would replace it.
        stack_id = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
        cfn.delete_stack(StackName=stack)
        assert settle(cfn, stack_id) == "DELETE_COMPLETE"
        assert ecs.list_services(cluster=cluster)["serviceArns"] == []
    assert len(deployed) == len(templates)

    for env_stack, cluster in envs.values():
        cfn.delete_stack(StackName=env_stack)
        cfn.get_waiter("stack_delete_complete").wait(StackName=env_stack, WaiterConfig=FAST)
        assert ecs.describe_clusters(clusters=[cluster])["clusters"][0]["status"] == "INACTIVE"
    cfn.delete_stack(StackName=imports_stack)
    # With every task stopped, their interfaces are gone and the network deletes.
    cfn.delete_stack(StackName=net_stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=net_stack, WaiterConfig=FAST)
