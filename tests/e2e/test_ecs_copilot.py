"""Copilot's Backend Service workload templates (../shared/corpus/copilot) deployed through
`aws cloudformation deploy` with their ECS and Cloud Map resources exactly as Copilot writes
them, after an environment stand-in that exports what they import.

Substitutions, until the EC2, ELBv2 and Route 53 branches are merged (each is named here so the
integration can remove it): the environment stack is a stand-in holding the real ECS cluster and
Cloud Map private DNS namespace, exporting literal subnet and security group ids; the workload
keeps only its ECS, Cloud Map, IAM role and log group resources, so the service's LoadBalancers
(target groups of the environment's ALB) are dropped and references to the dropped resources (the
env-controller custom resource, target groups) become literal strings (the autoscaling
template's desired count, a custom resource's answer, becomes its TaskCount parameter); an empty ContainerImage
parameter becomes a public image, as ECS refuses an empty image."""

import json
import os
import pathlib
import uuid

import pytest
import yaml

from conftest import ROOT

# The shared corpus beside the repository, or where CUMULO_CORPUS says.
CORPUS = pathlib.Path(os.environ.get("CUMULO_CORPUS") or ROOT.parent / "shared" / "corpus")
COPILOT = CORPUS / "copilot"
KEPT = ("AWS::ECS::", "AWS::ServiceDiscovery::", "AWS::IAM::Role", "AWS::Logs::LogGroup")
FAST = {"Delay": 1, "MaxAttempts": 60}

pytestmark = pytest.mark.skipif(not COPILOT.is_dir(), reason=f"no Copilot corpus at {COPILOT}")


class _Loader(yaml.SafeLoader):
    pass


def _tag(loader, suffix, node):
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
        if isinstance(att, list) and att and att[0] in gone:
            return f"substituted-{att[0]}-{att[1]}"
        return {k: _substitute(x, gone) for k, x in v.items()}
    if isinstance(v, list):
        return [_substitute(x, gone) for x in v]
    return v


def workload(path):
    t = yaml.load(path.read_text(), Loader=_Loader)
    resources = t["Resources"]
    kept = {k: r for k, r in resources.items() if r["Type"].startswith(KEPT)}
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
      Vpc: vpc-0123456789abcdef0
Outputs:
  ClusterId:
    Value: !Ref Cluster
    Export: {Name: !Sub "${App}-${Env}-ClusterId"}
  Namespace:
    Value: !GetAtt Namespace.Id
    Export: {Name: !Sub "${App}-${Env}-ServiceDiscoveryNamespaceID"}
  PublicSubnets:
    Value: subnet-0a1b2c3d4e5f60718,subnet-0a1b2c3d4e5f60719
    Export: {Name: !Sub "${App}-${Env}-PublicSubnets"}
  PrivateSubnets:
    Value: subnet-0a1b2c3d4e5f60720,subnet-0a1b2c3d4e5f60721
    Export: {Name: !Sub "${App}-${Env}-PrivateSubnets"}
  SecurityGroup:
    Value: sg-0a1b2c3d4e5f60718
    Export: {Name: !Sub "${App}-${Env}-EnvironmentSecurityGroup"}
"""


def test_copilot_backend_services_deploy_and_delete(cumulo, tmp_path):
    ecs = cumulo.client("ecs")
    sd = cumulo.client("servicediscovery")
    cfn = cumulo.client("cloudformation")
    templates = sorted(COPILOT.glob("workloads__backend__*-template*.yml"))
    assert templates
    env_stack = f"copilot-env-{uuid.uuid4().hex[:6]}"
    env_file = tmp_path / "env.yml"
    env_file.write_text(ENV)
    cumulo.aws("cloudformation", "deploy", "--stack-name", env_stack, "--template-file", str(env_file),
               "--parameter-overrides", "App=my-app", "Env=my-env")
    cluster = next(o["OutputValue"] for o in cfn.describe_stacks(StackName=env_stack)["Stacks"][0]["Outputs"]
                   if o["OutputKey"] == "ClusterId")
    deployed = []
    for path in templates:
        params_file = pathlib.Path(str(path).replace("-template", "-params").replace(".yml", ".json"))
        params = json.loads(params_file.read_text())["Parameters"]
        if not params.get("ContainerImage"):
            params["ContainerImage"] = "public.ecr.aws/nginx/nginx:latest"
        t = workload(path)
        f = tmp_path / path.name.replace(".yml", ".json")
        f.write_text(json.dumps(t, default=str))  # YAML reads 2010-09-09 as a date
        stack = f"copilot-{uuid.uuid4().hex[:6]}"
        cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(f),
                   "--capabilities", "CAPABILITY_NAMED_IAM", "--parameter-overrides",
                   *[f"{k}={v}" for k, v in params.items()])
        deployed.append(stack)
        name = params["WorkloadName"]
        arn = cfn.describe_stack_resource(StackName=stack, LogicalResourceId="Service")[
            "StackResourceDetail"]["PhysicalResourceId"]
        svc = ecs.describe_services(cluster=cluster, services=[arn])["services"][0]
        assert svc["serviceArn"] == arn
        assert svc["status"] == "ACTIVE" and svc["runningCount"] == svc["desiredCount"] == int(params["TaskCount"]), path.name
        assert svc["deployments"][0]["rolloutState"] == "COMPLETED"
        td = ecs.describe_task_definition(taskDefinition=svc["taskDefinition"])["taskDefinition"]
        assert td["family"] == f"my-app-my-env-{name}"
        assert td["cpu"] == params["TaskCPU"] and td["memory"] == params["TaskMemory"]
        registries = svc["serviceRegistries"]
        # A workload without a port exposes nothing to discover (Copilot's ExposePort).
        if "without-port-config" in path.name:
            assert registries == []
        else:
            assert len(registries) == 1, path.name
            srv_id = registries[0]["registryArn"].rsplit("/", 1)[1]
            instances = sd.list_instances(ServiceId=srv_id)["Instances"]
            assert len(instances) == svc["runningCount"]
            assert all("AWS_INSTANCE_IPV4" in i["Attributes"] for i in instances)

        # Two of the renders share a workload name (and so a Cloud Map service name): each
        # workload is deleted before the next, as Copilot would replace it.
        cfn.delete_stack(StackName=stack)
        cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
        assert ecs.describe_services(cluster=cluster, services=[arn])["services"][0]["status"] == "INACTIVE"
    assert len(deployed) == len(templates)
    assert ecs.list_services(cluster=cluster)["serviceArns"] == []
    assert not [f for f in ecs.list_task_definition_families(familyPrefix="my-app-my-env-")["families"]]
    cfn.delete_stack(StackName=env_stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=env_stack, WaiterConfig=FAST)
    assert ecs.describe_clusters(clusters=[cluster])["clusters"][0]["status"] == "INACTIVE"
