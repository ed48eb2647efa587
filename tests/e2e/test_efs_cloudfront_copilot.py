"""Every EFS and CloudFront resource of Copilot's templates (../shared/corpus/copilot), with its
properties exactly as Copilot writes them, deployed through `aws cloudformation deploy`,
checked through EFS's and CloudFront's APIs, and deleted leaving nothing.

Substitutions, until the whole environment and workload stacks deploy (each named here so the
integration can remove it):
- only the EFS and CloudFront resources are kept; their `Condition` (CreateEFS, CreateALB) is
  taken as true;
- references to resources that are not kept become stand-ins: EFSSecurityGroup a real security
  group, PrivateSubnet1/2 (and the imported VPC's literal subnet ids) two default subnets in
  different zones, EnvControllerAction.ManagedFileSystemID a real file system, the load
  balancer's and bucket's domain names literal host names, UniqueAliasesAction.UniqueValues no
  alias;
- the ViewerCertificate, whose certificate (a literal `viewer-cert` or a custom resource's) does
  not exist in ACM, is dropped with the aliases it would cover;
- only the parameters the kept resources use are kept; one without a default gets one."""

import json
import os
import pathlib
import re
import uuid

import pytest
import yaml

from conftest import ROOT

CORPUS = pathlib.Path(os.environ.get("CUMULO_CORPUS") or ROOT.parent / "shared" / "corpus")
COPILOT = CORPUS / "copilot"
FAST = {"Delay": 1, "MaxAttempts": 60}

pytestmark = pytest.mark.skipif(not COPILOT.is_dir(), reason=f"no Copilot corpus at {COPILOT}")


class _Loader(yaml.SafeLoader):
    pass


def _tag(loader, suffix, node):
    suffix = suffix.rstrip(":")
    if isinstance(node, yaml.ScalarNode):
        v = loader.construct_scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        v = loader.construct_sequence(node, deep=True)
    else:
        v = loader.construct_mapping(node, deep=True)
    if suffix in ("Ref", "Condition"):
        return {suffix: v}
    if suffix == "GetAtt" and isinstance(v, str):
        v = v.split(".", 1)
    return {f"Fn::{suffix}": v}


_Loader.add_multi_constructor("!", _tag)

OURS = ("AWS::EFS::", "AWS::CloudFront::")


def templates():
    out = []
    for path in sorted(COPILOT.glob("*.y*ml")):
        try:
            t = yaml.load(path.read_text(), Loader=_Loader)
        except yaml.YAMLError:
            continue
        if isinstance(t, dict) and any(r.get("Type", "").startswith(OURS)
                                       for r in (t.get("Resources") or {}).values()):
            out.append(path)
    return out


def substitute(v, stand_ins):
    if isinstance(v, dict):
        ref = v.get("Ref")
        if isinstance(ref, str) and ref in stand_ins:
            return stand_ins[ref]
        att = v.get("Fn::GetAtt")
        if isinstance(att, list) and ".".join(att) in stand_ins:
            return stand_ins[".".join(att)]
        return {k: substitute(x, stand_ins) for k, x in v.items()}
    if isinstance(v, list):
        return [substitute(x, stand_ins) for x in v]
    if isinstance(v, str) and re.fullmatch(r"subnet-\d+", v):
        return stand_ins["PrivateSubnet1"] if v.endswith("3") else stand_ins["PrivateSubnet2"]
    return v


def reduced(path, stand_ins):
    t = yaml.load(path.read_text(), Loader=_Loader)
    kept = {k: r for k, r in t["Resources"].items() if r["Type"].startswith(OURS)}
    for r in kept.values():
        r.pop("Condition", None)
        r.pop("DependsOn", None)
        cfg = r.get("Properties", {}).get("DistributionConfig")
        if cfg is not None:
            cfg.pop("ViewerCertificate", None)
            cfg.pop("Aliases", None)
    resources = substitute(kept, stand_ins)
    text = json.dumps(resources)
    params = {}
    for name, p in (t.get("Parameters") or {}).items():
        if f'"Ref": "{name}"' in text or f"${{{name}}}" in text:
            p = dict(p)
            p.setdefault("Default", (p.get("AllowedValues") or ["test"])[0])
            params[name] = p
    return {"Parameters": params, "Resources": resources}


@pytest.mark.parametrize("path", templates(), ids=lambda p: p.name)
def test_copilot_efs_and_cloudfront_resources_deploy_and_delete(cumulo, tmp_path, path):
    ec2, efs, cf, cfn = (cumulo.client(s) for s in ("ec2", "efs", "cloudfront", "cloudformation"))
    subnets = sorted(ec2.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"],
                     key=lambda s: s["AvailabilityZone"])
    vpc = subnets[0]["VpcId"]
    sg = ec2.create_security_group(GroupName=f"efs-{uuid.uuid4().hex[:8]}", Description="efs", VpcId=vpc)["GroupId"]
    managed = efs.create_file_system(CreationToken=uuid.uuid4().hex)["FileSystemId"]
    efs.describe_file_systems(FileSystemId=managed)
    stand_ins = {
        "EFSSecurityGroup": sg,
        "PrivateSubnet1": subnets[0]["SubnetId"],
        "PrivateSubnet2": subnets[1]["SubnetId"],
        "EnvControllerAction.ManagedFileSystemID": managed,
        "PublicLoadBalancer.DNSName": "copilot-lb-123.us-west-2.elb.amazonaws.com",
        "Bucket.RegionalDomainName": "copilot-bucket.s3.us-west-2.amazonaws.com",
        "UniqueAliasesAction.UniqueValues": [],
    }
    template = tmp_path / "t.json"
    template.write_text(json.dumps(reduced(path, stand_ins)))
    stack = f"copilot-{uuid.uuid4().hex[:8]}"
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template))
    resources = cfn.describe_stack_resources(StackName=stack)["StackResources"]
    assert resources and all(r["ResourceStatus"] == "CREATE_COMPLETE" for r in resources)
    live = {}
    for r in resources:
        rid, kind = r["PhysicalResourceId"], r["ResourceType"]
        if kind == "AWS::EFS::FileSystem":
            fs = efs.describe_file_systems(FileSystemId=rid)["FileSystems"][0]
            assert fs["LifeCycleState"] == "available" and fs["Encrypted"] is True
            assert efs.describe_backup_policy(FileSystemId=rid)["BackupPolicy"]["Status"] == "ENABLED"
            assert json.loads(efs.describe_file_system_policy(FileSystemId=rid)["Policy"])["Id"] == "CopilotEFSPolicy"
            assert efs.describe_lifecycle_configuration(FileSystemId=rid)["LifecyclePolicies"] == [
                {"TransitionToIA": "AFTER_30_DAYS"}]
        elif kind == "AWS::EFS::MountTarget":
            mt = efs.describe_mount_targets(MountTargetId=rid)["MountTargets"][0]
            assert efs.describe_mount_target_security_groups(MountTargetId=rid)["SecurityGroups"] == [sg]
            live[rid] = mt["NetworkInterfaceId"]
        elif kind == "AWS::EFS::AccessPoint":
            ap = efs.describe_access_points(AccessPointId=rid)["AccessPoints"][0]
            assert ap["FileSystemId"] == managed and ap["RootDirectory"]["Path"] == "/job"
        elif kind == "AWS::CloudFront::Distribution":
            d = cf.get_distribution(Id=rid)["Distribution"]
            assert d["Status"] == "Deployed" and d["DistributionConfig"]["Enabled"] is True
        elif kind == "AWS::CloudFront::OriginAccessControl":
            assert cf.get_origin_access_control(Id=rid)["OriginAccessControl"]["OriginAccessControlConfig"][
                "SigningBehavior"] == "always"
        elif kind == "AWS::CloudFront::Function":
            name = rid.rsplit("/", 1)[1]
            assert cf.describe_function(Name=name, Stage="LIVE")["FunctionSummary"]["Status"] == "DEPLOYED"

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
    for r in resources:
        rid, kind = r["PhysicalResourceId"], r["ResourceType"]
        if kind == "AWS::EFS::FileSystem":
            assert not [f for f in efs.describe_file_systems()["FileSystems"] if f["FileSystemId"] == rid]
        elif kind == "AWS::CloudFront::Distribution":
            assert rid not in [x["Id"] for x in cf.list_distributions()["DistributionList"].get("Items", [])]
    for eni in live.values():
        assert ec2.describe_network_interfaces(Filters=[
            {"Name": "network-interface-id", "Values": [eni]}])["NetworkInterfaces"] == []
    assert not efs.describe_access_points(FileSystemId=managed)["AccessPoints"]
    efs.delete_file_system(FileSystemId=managed)
