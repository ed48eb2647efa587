"""EFS through boto3 and the AWS CLI: file systems (creating -> available, CreationToken
idempotency, settings, policies, lifecycle), mount targets with EC2 interfaces, access points,
tags, errors in AWS's shape (an `ErrorCode` member beside the message), restart survival and a
CloudFormation stack deployed, updated and deleted with the CLI."""

import ipaddress
import json
import uuid

import botocore.exceptions
import pytest

FAST = {"Delay": 1, "MaxAttempts": 20}


def token():
    return f"tok-{uuid.uuid4().hex[:12]}"


def error(excinfo):
    e = excinfo.value.response["Error"]
    return e["Code"], e["Message"]


def raises(code, fn, *args, **kw):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        fn(*args, **kw)
    got, message = error(e)
    assert got == code, (got, message)
    # botocore keeps the error shape's members: EFS's carry the code again as ErrorCode.
    assert e.value.response.get("ErrorCode", code) == code
    return e.value.response


@pytest.fixture(scope="module")
def efs(cumulo):
    return cumulo.client("efs")


@pytest.fixture(scope="module")
def ec2(cumulo):
    return cumulo.client("ec2")


def default_subnets(ec2):
    subnets = ec2.describe_subnets(Filters=[{"Name": "default-for-az", "Values": ["true"]}])["Subnets"]
    return sorted(subnets, key=lambda s: s["AvailabilityZone"])


def available_fs(efs, **kw):
    fs = efs.create_file_system(CreationToken=token(), **kw)
    described = efs.describe_file_systems(FileSystemId=fs["FileSystemId"])["FileSystems"][0]
    assert described["LifeCycleState"] == "available"
    return fs


def test_file_system_lifecycle_and_settings(efs, cumulo):
    t = token()
    fs = efs.create_file_system(CreationToken=t, PerformanceMode="generalPurpose", Encrypted=True,
                                ThroughputMode="bursting", Backup=True,
                                Tags=[{"Key": "Name", "Value": "data"}, {"Key": "team", "Value": "a"}])
    assert fs["ResponseMetadata"]["HTTPStatusCode"] == 201
    fid = fs["FileSystemId"]
    assert fid.startswith("fs-") and len(fid) == 20
    assert fs["LifeCycleState"] == "creating"
    assert fs["FileSystemArn"] == f"arn:aws:elasticfilesystem:us-east-1:000000000000:file-system/{fid}"
    assert fs["Name"] == "data" and fs["Encrypted"] is True and fs["NumberOfMountTargets"] == 0
    assert fs["KmsKeyId"].endswith(":alias/aws/elasticfilesystem")

    # The same CreationToken again: FileSystemAlreadyExists naming the existing file system.
    body = raises("FileSystemAlreadyExists", efs.create_file_system, CreationToken=t)
    assert body["FileSystemId"] == fid
    assert body["Error"]["Message"] == f"File system '{fid}' already exists with creation token '{t}'"

    [d] = efs.describe_file_systems(FileSystemId=fid)["FileSystems"]
    assert d["LifeCycleState"] == "available"
    assert efs.describe_file_systems(CreationToken=t)["FileSystems"][0]["FileSystemId"] == fid
    assert efs.describe_file_systems(CreationToken="no-such-token")["FileSystems"] == []
    assert efs.describe_backup_policy(FileSystemId=fid)["BackupPolicy"] == {"Status": "ENABLED"}
    efs.put_backup_policy(FileSystemId=fid, BackupPolicy={"Status": "DISABLED"})
    assert efs.describe_backup_policy(FileSystemId=fid)["BackupPolicy"] == {"Status": "DISABLED"}

    up = efs.update_file_system(FileSystemId=fid, ThroughputMode="provisioned", ProvisionedThroughputInMibps=8.0)
    assert up["ResponseMetadata"]["HTTPStatusCode"] == 202
    assert (up["ThroughputMode"], up["ProvisionedThroughputInMibps"]) == ("provisioned", 8.0)
    raises("BadRequest", efs.update_file_system, FileSystemId=fid, ThroughputMode="bursting",
           ProvisionedThroughputInMibps=8.0)
    assert efs.update_file_system(FileSystemId=fid, ThroughputMode="elastic")["ThroughputMode"] == "elastic"

    assert efs.describe_lifecycle_configuration(FileSystemId=fid)["LifecyclePolicies"] == []
    pols = [{"TransitionToIA": "AFTER_30_DAYS"}, {"TransitionToPrimaryStorageClass": "AFTER_1_ACCESS"}]
    assert efs.put_lifecycle_configuration(FileSystemId=fid, LifecyclePolicies=pols)["LifecyclePolicies"] == pols
    assert efs.describe_lifecycle_configuration(FileSystemId=fid)["LifecyclePolicies"] == pols

    raises("PolicyNotFound", efs.describe_file_system_policy, FileSystemId=fid)
    policy = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "elasticfilesystem:ClientMount"}]})
    efs.put_file_system_policy(FileSystemId=fid, Policy=policy)
    assert json.loads(efs.describe_file_system_policy(FileSystemId=fid)["Policy"]) == json.loads(policy)
    raises("InvalidPolicyException", efs.put_file_system_policy, FileSystemId=fid, Policy="{not json")
    efs.delete_file_system_policy(FileSystemId=fid)
    raises("PolicyNotFound", efs.describe_file_system_policy, FileSystemId=fid)

    prot = efs.update_file_system_protection(FileSystemId=fid, ReplicationOverwriteProtection="DISABLED")
    assert prot["ReplicationOverwriteProtection"] == "DISABLED"

    efs.delete_file_system(FileSystemId=fid)
    r = raises("FileSystemNotFound", efs.describe_file_systems, FileSystemId=fid)
    assert r["Error"]["Message"] == f"File system '{fid}' does not exist."
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 404


def test_describe_file_systems_pages(efs):
    made = [available_fs(efs)["FileSystemId"] for _ in range(3)]
    seen, marker = [], None
    while True:
        kw = {"MaxItems": 2, **({"Marker": marker} if marker else {})}
        page = efs.describe_file_systems(**kw)
        assert len(page["FileSystems"]) <= 2
        seen += [f["FileSystemId"] for f in page["FileSystems"]]
        marker = page.get("NextMarker")
        if not marker:
            break
    assert set(made) <= set(seen) and len(seen) == len(set(seen))
    paginated = [f["FileSystemId"] for p in efs.get_paginator("describe_file_systems").paginate(
        PaginationConfig={"PageSize": 1}) for f in p["FileSystems"]]
    assert paginated == seen
    for fid in made:
        efs.delete_file_system(FileSystemId=fid)


def test_mount_targets_take_interfaces_from_ec2(efs, ec2):
    fid = available_fs(efs)["FileSystemId"]
    a, b = default_subnets(ec2)[:2]
    mt = efs.create_mount_target(FileSystemId=fid, SubnetId=a["SubnetId"])
    assert mt["LifeCycleState"] == "creating" and mt["MountTargetId"].startswith("fsmt-")
    assert ipaddress.ip_address(mt["IpAddress"]) in ipaddress.ip_network(a["CidrBlock"])
    assert (mt["AvailabilityZoneName"], mt["VpcId"]) == (a["AvailabilityZone"], a["VpcId"])
    eni = ec2.describe_network_interfaces(NetworkInterfaceIds=[mt["NetworkInterfaceId"]])["NetworkInterfaces"][0]
    assert eni["PrivateIpAddress"] == mt["IpAddress"] and eni["SubnetId"] == a["SubnetId"]
    # Without SecurityGroups the VPC's default group guards it.
    [default_sg] = ec2.describe_security_groups(Filters=[
        {"Name": "vpc-id", "Values": [a["VpcId"]]}, {"Name": "group-name", "Values": ["default"]}])["SecurityGroups"]
    assert efs.describe_mount_target_security_groups(MountTargetId=mt["MountTargetId"])["SecurityGroups"] == [
        default_sg["GroupId"]]

    # One mount target per Availability Zone.
    r = raises("MountTargetConflict", efs.create_mount_target, FileSystemId=fid, SubnetId=a["SubnetId"])
    assert r["Error"]["Message"] == "mount target already exists in this AZ"
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 409

    [d] = efs.describe_mount_targets(MountTargetId=mt["MountTargetId"])["MountTargets"]
    assert d["LifeCycleState"] == "available"
    mt2 = efs.create_mount_target(FileSystemId=fid, SubnetId=b["SubnetId"])
    listed = efs.describe_mount_targets(FileSystemId=fid)["MountTargets"]
    assert {m["MountTargetId"] for m in listed} == {mt["MountTargetId"], mt2["MountTargetId"]}
    assert efs.describe_file_systems(FileSystemId=fid)["FileSystems"][0]["NumberOfMountTargets"] == 2

    sg = ec2.create_security_group(GroupName=f"efs-{uuid.uuid4().hex[:6]}", Description="nfs", VpcId=a["VpcId"])
    efs.modify_mount_target_security_groups(MountTargetId=mt["MountTargetId"], SecurityGroups=[sg["GroupId"]])
    assert efs.describe_mount_target_security_groups(MountTargetId=mt["MountTargetId"])["SecurityGroups"] == [
        sg["GroupId"]]
    raises("SecurityGroupNotFound", efs.modify_mount_target_security_groups,
           MountTargetId=mt["MountTargetId"], SecurityGroups=["sg-0123456789abcdef0"])
    assert efs.describe_mount_target_security_groups(MountTargetId=mt["MountTargetId"])["SecurityGroups"] == [
        sg["GroupId"]]

    # A file system with mount targets cannot go.
    raises("FileSystemInUse", efs.delete_file_system, FileSystemId=fid)
    raises("SubnetNotFound", efs.create_mount_target, FileSystemId=fid, SubnetId="subnet-0123456789abcdef0")
    for m in (mt, mt2):
        efs.delete_mount_target(MountTargetId=m["MountTargetId"])
    assert ec2.describe_network_interfaces(Filters=[
        {"Name": "network-interface-id", "Values": [mt["NetworkInterfaceId"]]}])["NetworkInterfaces"] == []
    raises("MountTargetNotFound", efs.delete_mount_target, MountTargetId=mt["MountTargetId"])
    efs.delete_file_system(FileSystemId=fid)


def test_mount_target_needs_an_available_file_system(efs, ec2):
    fs = efs.create_file_system(CreationToken=token())
    r = raises("IncorrectFileSystemLifeCycleState", efs.create_mount_target,
               FileSystemId=fs["FileSystemId"], SubnetId=default_subnets(ec2)[0]["SubnetId"])
    assert r["ResponseMetadata"]["HTTPStatusCode"] == 409
    efs.delete_file_system(FileSystemId=fs["FileSystemId"])


def test_access_points(efs):
    fid = available_fs(efs)["FileSystemId"]
    ap = efs.create_access_point(ClientToken="job-token", FileSystemId=fid,
                                 PosixUser={"Uid": 4225294584, "Gid": 4225294584},
                                 RootDirectory={"Path": "/job", "CreationInfo": {
                                     "OwnerUid": 4225294584, "OwnerGid": 4225294584, "Permissions": "0755"}},
                                 Tags=[{"Key": "Name", "Value": "job"}])
    aid = ap["AccessPointId"]
    assert aid.startswith("fsap-") and ap["Name"] == "job" and ap["LifeCycleState"] == "available"
    assert ap["AccessPointArn"] == f"arn:aws:elasticfilesystem:us-east-1:000000000000:access-point/{aid}"
    assert ap["RootDirectory"]["CreationInfo"]["Permissions"] == "0755"
    r = raises("AccessPointAlreadyExists", efs.create_access_point, ClientToken="job-token", FileSystemId=fid)
    assert r["AccessPointId"] == aid
    raises("ValidationException", efs.create_access_point, ClientToken="t2", FileSystemId=fid,
           RootDirectory={"Path": "no-slash"})
    assert [a["AccessPointId"] for a in efs.describe_access_points(FileSystemId=fid)["AccessPoints"]] == [aid]
    plain = efs.create_access_point(ClientToken="plain", FileSystemId=fid)
    assert plain["RootDirectory"] == {"Path": "/"} and "PosixUser" not in plain
    efs.delete_access_point(AccessPointId=plain["AccessPointId"])
    raises("AccessPointNotFound", efs.describe_access_points, AccessPointId=plain["AccessPointId"])

    # Tags on access points and file systems, by id or ARN.
    efs.tag_resource(ResourceId=ap["AccessPointArn"], Tags=[{"Key": "env", "Value": "test"}])
    assert efs.list_tags_for_resource(ResourceId=aid)["Tags"] == [
        {"Key": "Name", "Value": "job"}, {"Key": "env", "Value": "test"}]
    efs.untag_resource(ResourceId=aid, TagKeys=["Name"])
    assert efs.list_tags_for_resource(ResourceId=aid)["Tags"] == [{"Key": "env", "Value": "test"}]
    raises("ValidationException", efs.tag_resource, ResourceId=fid, Tags=[{"Key": "aws:x", "Value": "y"}])
    efs.create_tags(FileSystemId=fid, Tags=[{"Key": "legacy", "Value": "1"}])
    assert efs.describe_tags(FileSystemId=fid)["Tags"] == [{"Key": "legacy", "Value": "1"}]
    efs.delete_tags(FileSystemId=fid, TagKeys=["legacy"])
    assert efs.list_tags_for_resource(ResourceId=fid)["Tags"] == []

    # Deleting the file system takes its access points with it.
    efs.delete_file_system(FileSystemId=fid)
    raises("AccessPointNotFound", efs.describe_access_points, AccessPointId=aid)


def test_bad_input_changes_nothing(efs, cumulo):
    before = efs.describe_file_systems()["FileSystems"]
    r = raises("ValidationException", efs.describe_file_systems, FileSystemId="fs-nothex")
    assert "Member must satisfy regular expression pattern" in r["Error"]["Message"]
    raises("FileSystemNotFound", efs.describe_file_systems, FileSystemId="fs-0123456789abcdef0")
    raises("ValidationException", efs.create_file_system, CreationToken=token(), PerformanceMode="turbo")
    raises("BadRequest", efs.create_file_system, CreationToken=token(), ThroughputMode="provisioned")
    raises("BadRequest", efs.describe_mount_targets)
    raises("MountTargetNotFound", efs.describe_mount_targets, MountTargetId="fsmt-0123456789abcdef0")
    raises("ValidationException", efs.put_lifecycle_configuration, FileSystemId="fs-0123456789abcdef0",
           LifecyclePolicies=[{"TransitionToIA": "AFTER_2_DAYS"}])
    assert efs.describe_file_systems()["FileSystems"] == before
    # The raw error body carries AWS's ErrorCode member.
    resp = cumulo.raw("GET", "/2015-02-01/file-systems?FileSystemId=fs-0123456789abcdef0")
    assert resp.status == 404
    assert json.loads(resp.body)["ErrorCode"] == "FileSystemNotFound"
    assert resp.headers["x-amzn-errortype"] == "FileSystemNotFound"


def test_state_survives_restart(fresh_server):
    fresh_server.start()
    efs = fresh_server.client("efs")
    subnet = default_subnets(fresh_server.client("ec2"))[0]
    fid = available_fs(efs, Tags=[{"Key": "Name", "Value": "kept"}])["FileSystemId"]
    efs.put_lifecycle_configuration(FileSystemId=fid, LifecyclePolicies=[{"TransitionToIA": "AFTER_7_DAYS"}])
    mt = efs.create_mount_target(FileSystemId=fid, SubnetId=subnet["SubnetId"])
    ap = efs.create_access_point(ClientToken="kept", FileSystemId=fid)
    fresh_server.kill9()
    fresh_server.start()
    efs = fresh_server.client("efs")
    [fs] = efs.describe_file_systems(FileSystemId=fid)["FileSystems"]
    assert fs["Name"] == "kept" and fs["NumberOfMountTargets"] == 1
    assert efs.describe_lifecycle_configuration(FileSystemId=fid)["LifecyclePolicies"] == [
        {"TransitionToIA": "AFTER_7_DAYS"}]
    [m] = efs.describe_mount_targets(FileSystemId=fid)["MountTargets"]
    assert (m["MountTargetId"], m["IpAddress"]) == (mt["MountTargetId"], mt["IpAddress"])
    assert efs.describe_access_points(FileSystemId=fid)["AccessPoints"][0]["AccessPointId"] == ap["AccessPointId"]
    r = fresh_server.client("ec2").describe_network_interfaces(NetworkInterfaceIds=[mt["NetworkInterfaceId"]])
    assert r["NetworkInterfaces"][0]["PrivateIpAddress"] == mt["IpAddress"]


STACK_TEMPLATE = """
Parameters:
  VpcId:
    Type: String
  SubnetId:
    Type: String
  Transition:
    Type: String
    Default: AFTER_30_DAYS
  Team:
    Type: String
    Default: a
Resources:
  EFSSecurityGroup:
    Type: AWS::EC2::SecurityGroup
    Properties:
      GroupDescription: efs mount targets
      VpcId: !Ref VpcId
  FileSystem:
    Type: AWS::EFS::FileSystem
    Properties:
      BackupPolicy:
        Status: ENABLED
      Encrypted: true
      FileSystemPolicy:
        Version: "2012-10-17"
        Id: CopilotEFSPolicy
        Statement:
          - Sid: AllowIAMFromTaggedRoles
            Effect: Allow
            Principal:
              AWS: "*"
            Action:
              - elasticfilesystem:ClientWrite
              - elasticfilesystem:ClientMount
            Condition:
              Bool:
                elasticfilesystem:AccessedViaMountTarget: true
      LifecyclePolicies:
        - TransitionToIA: !Ref Transition
      PerformanceMode: generalPurpose
      ThroughputMode: bursting
      FileSystemTags:
        - Key: team
          Value: !Ref Team
  MountTarget1:
    Type: AWS::EFS::MountTarget
    Properties:
      FileSystemId: !Ref FileSystem
      SubnetId: !Ref SubnetId
      SecurityGroups:
        - !Ref EFSSecurityGroup
  AccessPoint:
    Type: AWS::EFS::AccessPoint
    Properties:
      ClientToken: !Sub "${AWS::StackName}-job"
      FileSystemId: !GetAtt FileSystem.FileSystemId
      PosixUser:
        Uid: 4225294584
        Gid: 4225294584
      RootDirectory:
        Path: /job
        CreationInfo:
          OwnerUid: 4225294584
          OwnerGid: 4225294584
          Permissions: "0755"
Outputs:
  FileSystemId:
    Value: !Ref FileSystem
  FileSystemArn:
    Value: !GetAtt FileSystem.Arn
  MountTargetId:
    Value: !Ref MountTarget1
  MountTargetIp:
    Value: !GetAtt MountTarget1.IpAddress
  AccessPointId:
    Value: !Ref AccessPoint
  AccessPointArn:
    Value: !GetAtt AccessPoint.Arn
"""


def test_cloudformation_deploy_update_delete(cumulo, efs, ec2, tmp_path):
    cfn = cumulo.client("cloudformation")
    subnet = default_subnets(ec2)[0]
    stack = f"efs-{uuid.uuid4().hex[:8]}"
    template = tmp_path / "efs.yaml"
    template.write_text(STACK_TEMPLATE)
    params = [f"VpcId={subnet['VpcId']}", f"SubnetId={subnet['SubnetId']}"]
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", *params)
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    fid = out["FileSystemId"]
    [fs] = efs.describe_file_systems(FileSystemId=fid)["FileSystems"]
    assert fs["FileSystemArn"] == out["FileSystemArn"] and fs["LifeCycleState"] == "available"
    assert fs["Encrypted"] is True and fs["NumberOfMountTargets"] == 1
    tags = {t["Key"]: t["Value"] for t in fs["Tags"]}
    assert tags["team"] == "a" and tags["aws:cloudformation:logical-id"] == "FileSystem"
    assert efs.describe_backup_policy(FileSystemId=fid)["BackupPolicy"]["Status"] == "ENABLED"
    assert json.loads(efs.describe_file_system_policy(FileSystemId=fid)["Policy"])["Id"] == "CopilotEFSPolicy"
    assert efs.describe_lifecycle_configuration(FileSystemId=fid)["LifecyclePolicies"] == [
        {"TransitionToIA": "AFTER_30_DAYS"}]
    [mt] = efs.describe_mount_targets(FileSystemId=fid)["MountTargets"]
    assert (mt["MountTargetId"], mt["IpAddress"]) == (out["MountTargetId"], out["MountTargetIp"])
    assert mt["LifeCycleState"] == "available"
    [ap] = efs.describe_access_points(FileSystemId=fid)["AccessPoints"]
    assert (ap["AccessPointId"], ap["AccessPointArn"]) == (out["AccessPointId"], out["AccessPointArn"])
    assert ap["PosixUser"] == {"Uid": 4225294584, "Gid": 4225294584}

    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(template),
               "--parameter-overrides", *params, "Transition=AFTER_90_DAYS", "Team=b")
    assert efs.describe_lifecycle_configuration(FileSystemId=fid)["LifecyclePolicies"] == [
        {"TransitionToIA": "AFTER_90_DAYS"}]
    tags = {t["Key"]: t["Value"] for t in efs.describe_file_systems(FileSystemId=fid)["FileSystems"][0]["Tags"]}
    assert tags["team"] == "b"

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=FAST)
    raises("FileSystemNotFound", efs.describe_file_systems, FileSystemId=fid)
    raises("MountTargetNotFound", efs.describe_mount_targets, MountTargetId=out["MountTargetId"])
    raises("AccessPointNotFound", efs.describe_access_points, AccessPointId=out["AccessPointId"])
    assert ec2.describe_network_interfaces(Filters=[
        {"Name": "network-interface-id", "Values": [mt["NetworkInterfaceId"]]}])["NetworkInterfaces"] == []
