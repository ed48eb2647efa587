"""`cumulo migrate`'s retain patch and the offline half of its change-set gate, on a stack
deployed to `cumulo serve` as the account: the deployed template (GetTemplate, Original) is
patched with `cumulo migrate retain-patch`, proved policy-only with `cumulo migrate check
--template-diff`, applied through a change set whose changes are policy-only as AWS plans them,
and then a DeleteStack leaves every resource in place."""
import hashlib
import json
import os
import re
import stat
import subprocess
import uuid

import pytest

from conftest import BIN, CREDS
from migrate_helpers import (LIVE_CHECKED, ec2_address, imports_live, migrate, parse_terraform, rehearse,
                             take_inventory, terraform_fmt, unq)
from test_copilot import handlers  # noqa: F401 (the fixture uploading the Copilot handlers)

TEMPLATE = """\
# A hand-written stack: comments, short-form tags and key order must survive the patch.
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Name: {Type: String}
Resources:
  Bucket:
    Type: AWS::S3::Bucket   # the data
    Properties:
      BucketName: !Sub "${Name}-data"
  Queue:
    DeletionPolicy: Delete
    Type: AWS::SQS::Queue
    Properties: {QueueName: !Sub "${Name}-jobs"}
  Setting:
    Type: AWS::SSM::Parameter
    UpdateReplacePolicy: Snapshot
    Properties:
      Name: !Sub "/${Name}/setting"
      Type: String
      Value: "on"
Outputs:
  QueueUrl: {Value: !Ref Queue}
"""


def test_retain_patch_gate_and_delete_keep_every_resource(cumulo, tmp_path):
    cfn = cumulo.client("cloudformation")
    name = f"mig{uuid.uuid4().hex[:8]}"
    stack = f"{name}-stack"
    source = tmp_path / "template.yml"
    source.write_text(TEMPLATE)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(source),
               "--parameter-overrides", f"Name={name}")
    cumulo.client("s3").put_object(Bucket=f"{name}-data", Key="keep.txt", Body=b"precious")

    deployed = tmp_path / "deployed.yml"
    deployed.write_text(cfn.get_template(StackName=stack, TemplateStage="Original")["TemplateBody"])
    patched = tmp_path / "patched.yml"
    out = migrate("retain-patch", str(deployed), "-o", str(patched))
    assert out.returncode == 0, out.stderr
    assert "3 resource(s) retained" in out.stderr
    # Only policy lines differ: every line of the deployed template is still there, in order.
    before, after = deployed.read_text().splitlines(), patched.read_text().splitlines()
    added = [line for line in after if line not in before]
    assert all(line.strip() in ("DeletionPolicy: Retain", "UpdateReplacePolicy: Retain") for line in added)
    assert [line for line in after if line in before] == [
        line for line in before if line.strip() not in ("DeletionPolicy: Delete", "UpdateReplacePolicy: Snapshot")]
    assert "# the data" in patched.read_text()

    ok = migrate("check", "--template-diff", str(deployed), str(patched))
    assert ok.returncode == 0, ok.stdout + ok.stderr
    tampered = tmp_path / "tampered.yml"
    tampered.write_text(patched.read_text().replace('Value: "on"', 'Value: "off"'))
    bad = migrate("check", "--template-diff", str(deployed), str(tampered))
    assert bad.returncode == 1
    assert "Resources/Setting/Properties" in bad.stdout
    unpatched = migrate("check", "--template-diff", str(deployed), str(deployed))
    assert unpatched.returncode == 1
    assert "Resources/Bucket/DeletionPolicy is not Retain" in unpatched.stdout
    missing = migrate("check", "--template-diff", str(deployed), str(tmp_path / "absent.yml"))
    assert missing.returncode == 2 and "absent.yml" in missing.stderr
    garbage = tmp_path / "garbage.yml"
    garbage.write_text("Resources: [unclosed\n")
    assert migrate("retain-patch", str(garbage)).returncode == 2

    # The patch through a change set: every change a policy-only Modify, nothing replaced.
    cs = cfn.create_change_set(StackName=stack, ChangeSetName="retain", TemplateBody=patched.read_text(),
                               Parameters=[{"ParameterKey": "Name", "UsePreviousValue": True}])
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=cs["Id"], WaiterConfig={"Delay": 1})
    changes = cfn.describe_change_set(ChangeSetName=cs["Id"])["Changes"]
    assert sorted(c["ResourceChange"]["LogicalResourceId"] for c in changes) == ["Bucket", "Queue", "Setting"]
    for c in changes:
        rc = c["ResourceChange"]
        assert (rc["Action"], rc["Replacement"]) == ("Modify", "False"), rc
        assert set(rc["Scope"]) <= {"DeletionPolicy", "UpdateReplacePolicy"}, rc
    cfn.execute_change_set(ChangeSetName=cs["Id"])
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig={"Delay": 1})

    # Deleting the stack now leaves everything, the bucket's object included.
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 1})
    s3 = cumulo.client("s3")
    assert s3.get_object(Bucket=f"{name}-data", Key="keep.txt")["Body"].read() == b"precious"
    sqs = cumulo.client("sqs")
    url = sqs.get_queue_url(QueueName=f"{name}-jobs")["QueueUrl"]
    ssm = cumulo.client("ssm")
    assert ssm.get_parameter(Name=f"/{name}/setting")["Parameter"]["Value"] == "on"
    s3.delete_object(Bucket=f"{name}-data", Key="keep.txt")
    s3.delete_bucket(Bucket=f"{name}-data")
    sqs.delete_queue(QueueUrl=url)
    ssm.delete_parameter(Name=f"/{name}/setting")


# --- generate and the change-set gate, on a plain hand-written stack ---

TF_PLAIN = """\
AWSTemplateFormatVersion: "2010-09-09"
Description: a hand-written stack to hand to Terraform
Parameters:
  Name: {Type: String}
Resources:
  Vpc:
    Type: AWS::EC2::VPC
    Properties:
      CidrBlock: 10.20.0.0/16
      Tags: [{Key: team, Value: data}]
  Subnet:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: !Ref Vpc, CidrBlock: 10.20.1.0/24}
  Sg:
    Type: AWS::EC2::SecurityGroup
    Properties: {GroupDescription: web, VpcId: !Ref Vpc}
  SgHttps:
    Type: AWS::EC2::SecurityGroupIngress
    Properties: {GroupId: !Ref Sg, IpProtocol: tcp, FromPort: 443, ToPort: 443, CidrIp: 10.0.0.0/8}
  Bucket:
    Type: AWS::S3::Bucket
    Properties: {BucketName: !Sub "${Name}-data"}
  Queue:
    Type: AWS::SQS::Queue
    Properties: {QueueName: !Sub "${Name}-jobs", VisibilityTimeout: 60}
  QueuePolicy:
    Type: AWS::SQS::QueuePolicy
    Properties:
      Queues: [!Ref Queue]
      PolicyDocument:
        Version: "2012-10-17"
        Statement: [{Effect: Allow, Principal: {Service: sns.amazonaws.com}, Action: "sqs:SendMessage", Resource: !GetAtt Queue.Arn}]
  Topic:
    Type: AWS::SNS::Topic
    Properties: {TopicName: !Sub "${Name}-events"}
  Role:
    Type: AWS::IAM::Role
    Properties:
      RoleName: !Sub "${Name}-worker"
      AssumeRolePolicyDocument:
        Version: "2012-10-17"
        Statement: [{Effect: Allow, Principal: {Service: ecs-tasks.amazonaws.com}, Action: "sts:AssumeRole"}]
  RolePolicy:
    Type: AWS::IAM::Policy
    Properties:
      PolicyName: queue
      Roles: [!Ref Role]
      PolicyDocument:
        Version: "2012-10-17"
        Statement: [{Effect: Allow, Action: "sqs:*", Resource: !GetAtt Queue.Arn}]
  Logs:
    Type: AWS::Logs::LogGroup
    Properties: {LogGroupName: !Sub "/${Name}/app", RetentionInDays: 7}
  Zone:
    Type: AWS::Route53::HostedZone
    Properties: {Name: !Sub "${Name}.example.com"}
  Www:
    Type: AWS::Route53::RecordSet
    Properties:
      HostedZoneId: !Ref Zone
      Name: !Sub "www.${Name}.example.com."
      Type: CNAME
      TTL: "300"
      ResourceRecords: [example.org]
  Setting:
    Type: AWS::SSM::Parameter
    Properties: {Name: !Sub "/${Name}/setting", Type: String, Value: "${not a template}"}
  IpA:
    Type: AWS::EC2::EIP
    Properties: {Domain: vpc}
  IpB:
    Type: AWS::EC2::EIP
    Properties: {Domain: vpc}
Outputs:
  QueueUrl: {Value: !Ref Queue}
"""


# --- `cumulo migrate inventory` and `cumulo migrate report` -------------------------------------

PLAIN = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Name: {Type: String}
  Token: {Type: String, NoEcho: true}
Resources:
  Vpc:
    Type: AWS::EC2::VPC
    Properties: {CidrBlock: 10.42.0.0/16}
  Subnet:
    Type: AWS::EC2::Subnet
    Properties: {VpcId: !Ref Vpc, CidrBlock: 10.42.1.0/24}
  Group:
    Type: AWS::EC2::SecurityGroup
    Properties: {GroupDescription: web, VpcId: !Ref Vpc}
  Queue:
    Type: AWS::SQS::Queue
    Properties: {QueueName: !Sub "${Name}-jobs"}
  Topic:
    Type: AWS::SNS::Topic
  Logs:
    Type: AWS::Logs::LogGroup
    DeletionPolicy: Retain
    Properties: {LogGroupName: !Sub "/${Name}/app"}
  Setting:
    Type: AWS::SSM::Parameter
    Properties: {Name: !Sub "/${Name}/setting", Type: String, Value: "on"}
  Zone:
    Type: AWS::Route53::HostedZone
    Properties: {Name: !Sub "${Name}.example.org"}
  Bucket:
    Type: AWS::S3::Bucket
    Properties: {BucketName: !Sub "${Name}-data", VersioningConfiguration: {Status: Enabled}}
  Key:
    Type: AWS::KMS::Key
    Properties:
      KeyPolicy:
        Version: "2012-10-17"
        Statement: [{Effect: Allow, Principal: {AWS: !Sub "arn:aws:iam::${AWS::AccountId}:root"}, Action: "kms:*", Resource: "*"}]
  Repo:
    Type: AWS::ECR::Repository
    Properties: {RepositoryName: !Sub "${Name}-repo"}
  Secret:
    Type: AWS::SecretsManager::Secret
    Properties: {Name: !Sub "${Name}-secret", GenerateSecretString: {PasswordLength: 24}}
Outputs:
  QueueUrl: {Value: !Ref Queue}
"""


def describe_change_set(cumulo, cs_id, path):
    path.write_text(json.dumps(cumulo.aws("cloudformation", "describe-change-set", "--change-set-name", cs_id)))
    return path


def test_generate_terraform_patches_and_the_change_set_gate(cumulo, tmp_path):
    cfn = cumulo.client("cloudformation")
    name = f"tf{uuid.uuid4().hex[:8]}"
    stack = f"{name}-plain"
    source = tmp_path / "plain.yml"
    source.write_text(TF_PLAIN)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(source),
               "--parameter-overrides", f"Name={name}", "--capabilities", "CAPABILITY_NAMED_IAM")
    taken, inventory = take_inventory(cumulo, tmp_path, "--stack", stack)
    assert taken.returncode == 0, taken.stderr

    out = tmp_path / "out"
    gen = migrate("generate", str(inventory), "--out", str(out))
    assert gen.returncode == 0, gen.stdout + gen.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    imports = manifest["imports"]
    assert sorted(i["logical_id"] for i in imports) == sorted(
        ["Vpc", "Subnet", "Sg", "SgHttps", "Bucket", "Queue", "QueuePolicy", "Topic", "Role", "RolePolicy",
         "Logs", "Zone", "Www", "Setting", "IpA", "IpB"])
    assert f"{len(imports)} import(s)" in gen.stdout
    ids = {i["logical_id"]: i["id"] for i in imports}
    assert ids["RolePolicy"] == f"{name}-worker:queue"
    assert ids["SgHttps"].endswith("_ingress_tcp_443_443_10.0.0.0/8")
    assert ids["Www"].endswith(f"_www.{name}.example.com_CNAME")
    # An EIP is imported by its allocation id, each its own (the inventory asks by address).
    for ip in ("IpA", "IpB"):
        address = physical(cumulo, stack, ip)
        assert ec2_address(cumulo, ids[ip]) == address

    # The Terraform parses (python-hcl2, and terraform's own parser through fmt), pins the
    # provider and the account, and every import id names a live resource.
    parsed = parse_terraform(out)
    assert unq(parsed["versions"]["terraform"][0]["required_providers"][0]["aws"]["version"]) == "5.80.0"
    provider = parsed["providers"]["provider"][0]['"aws"']
    assert unq(provider["region"]) == "us-east-1"
    assert [unq(a) for a in provider["allowed_account_ids"]] == ["000000000000"]
    blocks = parsed[stack]
    assert sorted((b["to"], unq(b["id"])) for b in blocks["import"]) == sorted(
        (f"${{{i['to']}}}", i["id"]) for i in imports)
    declared = {f"{unq(t)}.{unq(n)}" for r in blocks["resource"] for t, named in r.items() for n in named}
    assert {i["to"] for i in imports} == declared
    terraform_fmt(out)
    assert imports_live(cumulo, imports) == len(imports)
    text = (out / "terraform" / f"{stack}.tf").read_text()
    assert 'value = "$${not a template}"' in text  # template sequences stay literal
    bucket = next(r for r in blocks["resource"] if '"aws_s3_bucket"' in r)
    assert bucket['"aws_s3_bucket"'][f'"{stack}_Bucket"']["lifecycle"][0]["prevent_destroy"] is True
    assert (out / "RUNBOOK.md").read_text().count(f"--stack {stack}") >= 1
    assert manifest["teardown_order"] == [{"stack": stack, "nested": []}]
    assert manifest["report"] == "REPORT.md" and stack in (out / "REPORT.md").read_text()

    # The patch differs from the deployed template only in policy lines, and its hash is the
    # manifest's.
    entry = manifest["stacks"][0]
    patch = out / entry["retain_patch"]["path"]
    assert hashlib.sha256(patch.read_bytes()).hexdigest() == entry["retain_patch"]["sha256"]
    deployed = tmp_path / "deployed.yml"
    deployed.write_text(cfn.get_template(StackName=stack, TemplateStage="Original")["TemplateBody"])
    diff = migrate("check", "--template-diff", str(deployed), str(patch))
    assert diff.returncode == 0, diff.stdout + diff.stderr

    # The gate passes on the change set the patch creates, fails on a tampered one, and an
    # empty one is exit 3.
    params = [{"ParameterKey": "Name", "UsePreviousValue": True}]
    cs = cfn.create_change_set(StackName=stack, ChangeSetName="retain", TemplateBody=patch.read_text(),
                               Parameters=params, Capabilities=["CAPABILITY_NAMED_IAM"])
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=cs["Id"], WaiterConfig={"Delay": 1})
    good = describe_change_set(cumulo, cs["Id"], tmp_path / "cs.json")
    ok = migrate("check", "--changeset", str(good), "--manifest", str(out / "manifest.json"), "--stack", stack)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "14 change(s) in 1 change set(s)" in ok.stdout or "change(s) in 1 change set(s)" in ok.stdout
    described = json.loads(good.read_text())
    described["Changes"][0]["ResourceChange"]["Replacement"] = "True"
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(described))
    bad = migrate("check", "--changeset", str(tampered), "--manifest", str(out / "manifest.json"), "--stack", stack)
    assert bad.returncode == 1 and "Replacement True, not False" in bad.stdout, bad.stdout
    wrong = migrate("check", "--changeset", str(good), "--manifest", str(out / "manifest.json"), "--stack", "other")
    assert wrong.returncode == 2 and "not other" in wrong.stderr

    cfn.execute_change_set(ChangeSetName=cs["Id"])
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig={"Delay": 1})
    again = cfn.create_change_set(StackName=stack, ChangeSetName="again", TemplateBody=patch.read_text(),
                                  Parameters=params, Capabilities=["CAPABILITY_NAMED_IAM"])
    try:
        cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=again["Id"], WaiterConfig={"Delay": 1})
    except Exception:  # the waiter fails on the FAILED status an empty change set ends in
        pass
    empty = describe_change_set(cumulo, again["Id"], tmp_path / "empty.json")
    nothing = migrate("check", "--changeset", str(empty), "--manifest", str(out / "manifest.json"), "--stack", stack)
    assert nothing.returncode == 3, nothing.stdout + nothing.stderr

    # Bad input: a tampered inventory and an unknown stack to keep are refused with exit 2.
    forged = json.loads(inventory.read_text())
    forged["stacks"][0]["resources"].pop()
    (tmp_path / "forged.json").write_text(json.dumps(forged))
    refused = migrate("generate", str(tmp_path / "forged.json"), "--out", str(tmp_path / "x"))
    assert refused.returncode == 2 and "changed after it was taken" in refused.stderr
    unknown = migrate("generate", str(inventory), "--out", str(tmp_path / "y"), "--keep", "nope")
    assert unknown.returncode == 2 and "--keep nope" in unknown.stderr
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()
    again = migrate("generate", str(inventory), "--out", str(out))
    assert again.returncode == 2 and "not empty" in again.stderr

    # Every resource is retained: deleting the stack leaves them for Terraform.
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 1})
    assert imports_live(cumulo, imports) == len(imports)


@pytest.fixture(scope="module")
def plain_stack(cumulo, tmp_path_factory):
    name = f"inv{uuid.uuid4().hex[:8]}"
    stack = f"{name}-stack"
    source = tmp_path_factory.mktemp("plain") / "template.yml"
    source.write_text(PLAIN)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(source),
               "--parameter-overrides", f"Name={name}", "Token=s3cret")
    cumulo.client("route53").change_resource_record_sets(
        HostedZoneId=physical(cumulo, stack, "Zone"),
        ChangeBatch={"Changes": [{"Action": "CREATE", "ResourceRecordSet": {
            "Name": f"www.{name}.example.org", "Type": "A", "TTL": 60,
            "ResourceRecords": [{"Value": "192.0.2.1"}]}}]})
    return name, stack


def physical(cumulo, stack, logical):
    return cumulo.client("cloudformation").describe_stack_resource(
        StackName=stack, LogicalResourceId=logical)["StackResourceDetail"]["PhysicalResourceId"]


def test_inventory_of_a_plain_stack_matches_what_the_account_says(cumulo, tmp_path, plain_stack):
    name, stack = plain_stack
    cfn = cumulo.client("cloudformation")
    proc, out = take_inventory(cumulo, tmp_path, "--stack", stack)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    inv = json.loads(out.read_text())
    assert inv["format_version"] == 1
    assert inv["account"] == cumulo.client("sts").get_caller_identity()["Account"]
    assert (inv["region"], inv["endpoint"]) == ("us-east-1", cumulo.endpoint)
    assert len(inv["content_sha256"]) == 64
    [s] = inv["stacks"]
    described = cfn.describe_stacks(StackName=stack)["Stacks"][0]
    assert (s["name"], s["id"], s["status"]) == (stack, described["StackId"], described["StackStatus"])
    assert s["template"] == cfn.get_template(StackName=stack, TemplateStage="Original")["TemplateBody"]
    params = {p["key"]: p for p in s["parameters"]}
    assert params["Name"]["value"] == name and not params["Name"]["no_echo"]
    # The NoEcho value is what CloudFormation reports, never the value itself.
    assert params["Token"] == {"key": "Token", "value": "****", "no_echo": True}
    assert "s3cret" not in out.read_text()
    assert {o["key"]: o["value"] for o in s["outputs"]} == {
        o["OutputKey"]: o["OutputValue"] for o in described["Outputs"]}
    listed = cfn.list_stack_resources(StackName=stack)["StackResourceSummaries"]
    assert {r["logical_id"]: r["physical_id"] for r in s["resources"]} == {
        r["LogicalResourceId"]: r["PhysicalResourceId"] for r in listed}
    res = {r["logical_id"]: r for r in s["resources"]}
    assert all(r["live"]["state"] == "described" for r in res.values()), [
        (k, r["live"]) for k, r in res.items() if r["live"]["state"] != "described"]
    vpc = cumulo.client("ec2").describe_vpcs(VpcIds=[res["Vpc"]["physical_id"]])["Vpcs"][0]
    assert res["Vpc"]["live"]["calls"][0]["output"]["vpcSet"][0]["cidrBlock"] == vpc["CidrBlock"]
    assert res["Subnet"]["import_attributes"]["subnet_id"] == physical(cumulo, stack, "Subnet")
    queue_arn = cumulo.client("sqs").get_queue_attributes(
        QueueUrl=res["Queue"]["physical_id"], AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    assert res["Queue"]["import_attributes"] == {"url": res["Queue"]["physical_id"], "arn": queue_arn,
                                                 "queue_name": f"{name}-jobs"}
    assert res["Logs"]["deletion_policy"] == "Retain"
    assert res["Setting"]["live"]["calls"][0]["input"]["WithDecryption"] is False
    # The secret is described, never read.
    assert res["Secret"]["live"]["calls"][0]["operation"] == "DescribeSecret"
    value = cumulo.client("secretsmanager").get_secret_value(SecretId=f"{name}-secret")["SecretString"]
    assert value not in out.read_text()
    assert res["Bucket"]["live"]["calls"][0]["output"] == {"Status": "Enabled"}
    key = cumulo.client("kms").describe_key(KeyId=res["Key"]["physical_id"])["KeyMetadata"]
    assert res["Key"]["import_attributes"]["arn"] == key["Arn"]
    repo = cumulo.client("ecr").describe_repositories(repositoryNames=[f"{name}-repo"])["repositories"][0]
    assert res["Repo"]["import_attributes"]["arn"] == repo["repositoryArn"]
    [zone] = inv["out_of_band"]["hosted_zones"]
    assert zone["id"] == res["Zone"]["physical_id"].split("/")[-1]
    assert zone["referenced_by"] == [{"stack": stack, "how": "resource:Zone"}]
    assert {(r["name"], r["record_type"]) for r in zone["records"]} >= {(f"www.{name}.example.org.", "A")}


def test_report_gives_each_resource_its_fate(cumulo, tmp_path, plain_stack):
    name, stack = plain_stack
    proc, out = take_inventory(cumulo, tmp_path, "--stack", stack)
    assert proc.returncode == 0, proc.stderr
    report, html = tmp_path / "REPORT.md", tmp_path / "REPORT.html"
    proc = migrate("report", str(out), "-o", str(report), "--html", str(html))
    assert proc.returncode == 0, proc.stderr
    text = report.read_text()
    # The HTML graph: one node per live resource, coloured by fate, the subnet after its VPC.
    page = html.read_text()
    assert page.count("<rect") == 12
    assert re.search(r'<title>Queue import</title><rect [^>]*fill="#2e7d32"/>', page)
    column = {n: int(x) for n, x in re.findall(r'<title>(\w+) [\w-]+</title><rect x="(\d+)"', page)}
    assert column["Vpc"] < column["Subnet"]
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[1:-1]]
            for line in text.splitlines() if line.startswith("| ") and "AWS::" in line}
    for logical in ("Vpc", "Subnet", "Group", "Queue", "Topic", "Logs", "Setting", "Zone", "Bucket", "Key", "Repo", "Secret"):
        assert rows[logical][3] == "import", rows[logical]
    # The record someone added by hand is in a zone the stack owns but no resource of it.
    assert f"www.{name}.example.org./A" in text and "external-reference" in text
    # A plain DeleteStack deletes all but the retained log group.
    delete = text.split("## What a plain DeleteStack would destroy")[1]
    assert f"- retained: Logs (AWS::Logs::LogGroup) /{name}/app" in delete
    assert "- deleted: Queue (AWS::SQS::Queue)" in delete


def test_nested_stacks_are_inventoried_under_their_parent(cumulo, tmp_path):
    cfn, s3 = cumulo.client("cloudformation"), cumulo.client("s3")
    name = f"nest{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=name)
    child = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{name}-child"}}}}
    s3.put_object(Bucket=name, Key="child.json", Body=json.dumps(child).encode())
    parent = {"Resources": {"Child": {"Type": "AWS::CloudFormation::Stack",
                                      "Properties": {"TemplateURL": f"{cumulo.endpoint}/{name}/child.json"}}}}
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(parent))
    cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    proc, out = take_inventory(cumulo, tmp_path, "--stack", name)
    assert proc.returncode == 0, proc.stderr
    inv = json.loads(out.read_text())
    [parent_stack, child_stack] = inv["stacks"]
    child_id = physical(cumulo, name, "Child")
    assert (parent_stack["name"], child_stack["id"]) == (name, child_id)
    assert child_stack["parent_id"] == parent_stack["id"]
    assert child_stack["resources"][0]["physical_id"] == cfn.describe_stack_resource(
        StackName=child_id, LogicalResourceId="Queue")["StackResourceDetail"]["PhysicalResourceId"]
    proc = migrate("report", str(out))
    assert proc.returncode == 0, proc.stderr
    assert f"| Child | AWS::CloudFormation::Stack | {child_id} | nested-wrapper |" in proc.stdout
    assert "| Queue | AWS::SQS::Queue |" in proc.stdout.split(f"## Stack {child_stack['name']}")[1]
    # Rehearsed: the child's patch served at the parent's TemplateURL goes through the
    # parent's change set (nested change set linked and gated), and the child's queue stays.
    done = rehearse(out, tmp_path / "rehearsal")
    assert done.returncode == 0, done.stdout + done.stderr
    md = (tmp_path / "rehearsal" / "REHEARSAL.md").read_text()
    assert f"- {name}: the gate passed (2 change(s) in 2 change set(s)" in md, md
    assert f"`aws_sqs_queue.{child_stack['name']}_Queue`" in md


def test_credentials_and_region_come_from_a_named_profile(cumulo, tmp_path, plain_stack):
    """The standard credential chain (aws-config): `--profile` reads the shared files, with no
    credentials or region in the environment."""
    _, stack = plain_stack
    (tmp_path / "credentials").write_text("[mig]\naws_access_key_id = test\naws_secret_access_key = test\n")
    (tmp_path / "config").write_text("[profile mig]\nregion = us-east-1\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "credentials"), AWS_CONFIG_FILE=str(tmp_path / "config"),
               AWS_ENDPOINT_URL=cumulo.endpoint)
    out = tmp_path / "inventory.json"
    proc = subprocess.run([str(BIN), "migrate", "inventory", "--stack", stack, "--profile", "mig", "-o", str(out)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["region"] == "us-east-1"
    proc = subprocess.run([str(BIN), "migrate", "inventory", "--stack", stack, "--profile", "nope", "-o", str(out)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1
    assert "no region: pass --region, or set AWS_REGION or a profile's region" in proc.stderr


def test_a_stale_or_tampered_inventory_is_refused(cumulo, tmp_path, plain_stack):
    _, stack = plain_stack
    proc, out = take_inventory(cumulo, tmp_path, "--stack", stack)
    assert proc.returncode == 0, proc.stderr
    inv = json.loads(out.read_text())
    inv["stacks"][0]["resources"] = inv["stacks"][0]["resources"][1:]
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(inv))
    proc = migrate("report", str(tampered))
    assert proc.returncode == 2
    assert "the inventory was changed after it was taken" in proc.stderr
    inv["format_version"] = 99
    tampered.write_text(json.dumps(inv))
    proc = migrate("report", str(tampered))
    assert proc.returncode == 2
    assert "inventory format version 99 is not the one this cumulo reads (1)" in proc.stderr


STALE = """\
Resources:
  Queue:
    Type: AWS::SQS::Queue
"""


def test_a_stale_inventory_is_refused_when_rechecked(cumulo, tmp_path):
    """`generate` and `rehearse` work offline from the inventory, warning with its age; with
    `--recheck` they read the account again and refuse (exit 2, naming each change) an inventory
    whose stack was updated or deleted since it was taken."""
    cfn = cumulo.client("cloudformation")
    stack = f"stale{uuid.uuid4().hex[:8]}"
    cfn.create_stack(StackName=stack, TemplateBody=STALE)
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig={"Delay": 1})
    proc, inventory = take_inventory(cumulo, tmp_path, "--stack", stack)
    assert proc.returncode == 0, proc.stderr
    env = {**os.environ, **CREDS, "AWS_ENDPOINT_URL": cumulo.endpoint}

    def run(*args):
        return subprocess.run([str(BIN), "migrate", *args], capture_output=True, text=True, timeout=120, env=env)

    offline = run("generate", str(inventory), "--out", str(tmp_path / "offline"))
    assert offline.returncode == 0, offline.stderr
    taken = json.loads(inventory.read_text())["taken_at"]
    assert re.search(rf"warning: the inventory was taken {taken}, \d+ min ago and is not rechecked against account "
                     r"000000000000: pass --recheck to refuse a stale one", offline.stderr), offline.stderr
    freeze = (tmp_path / "offline" / "RUNBOOK.md").read_text().split("## 1. Freeze")[1].split("## 2.")[0]
    assert "`cumulo migrate rehearse INVENTORY --recheck`" in freeze, freeze
    fresh = run("generate", str(inventory), "--out", str(tmp_path / "fresh"), "--recheck")
    assert fresh.returncode == 0, fresh.stderr
    assert f"rechecked: account 000000000000's 1 stack(s) are as inventoried at {taken}" in fresh.stderr

    cfn.update_stack(StackName=stack, TemplateBody=STALE + "  Topic:\n    Type: AWS::SNS::Topic\n")
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig={"Delay": 1})
    for args in (("generate", str(inventory), "--out", str(tmp_path / "stale"), "--recheck"),
                 ("rehearse", str(inventory), "--out", str(tmp_path / "r"), "--recheck")):
        stale = run(*args)
        assert stale.returncode == 2, stale.stdout + stale.stderr
        assert f"changed: {stack}: status UPDATE_COMPLETE, inventoried CREATE_COMPLETE" in stale.stderr
        assert re.search(rf"changed: {stack}: last updated \S+, inventoried never", stale.stderr), stale.stderr
        assert f"changed: {stack}: the deployed template changed (SHA-256 " in stale.stderr
        assert f"the inventory taken {taken} is stale (3 change(s)): take it again" in stale.stderr
    assert not (tmp_path / "stale").exists() and not (tmp_path / "r" / "REHEARSAL.md").exists()

    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 1})
    gone = run("generate", str(inventory), "--out", str(tmp_path / "gone"), "--recheck")
    assert gone.returncode == 2
    assert f"changed: {stack}: the stack was deleted" in gone.stderr or \
        f"changed: {stack}: the stack no longer exists" in gone.stderr, gone.stderr


def test_a_call_that_is_not_a_read_is_refused_before_it_is_sent(cumulo, tmp_path, plain_stack):
    """A bug making the inventory attempt a write (the debug build's test seam) stops the
    command with exit 2 naming the operation; the stack is untouched."""
    _, stack = plain_stack
    for call, why in (("cloudformation:DeleteStack", "is not a read the inventory may make"),
                      ("secretsmanager:GetSecretValue", "would read a secret's value")):
        proc, out = take_inventory(cumulo, tmp_path, "--stack", stack, CUMULO_MIGRATE_TEST_ATTEMPT=call)
        assert proc.returncode == 2
        assert f"refused {call}: {call} {why}" in proc.stderr
        assert not out.exists()
    status = cumulo.client("cloudformation").describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"]
    assert status == "CREATE_COMPLETE"


def test_an_unknown_stack_or_app_is_refused(cumulo, tmp_path):
    proc, out = take_inventory(cumulo, tmp_path, "--stack", "no-such-stack")
    assert proc.returncode == 2
    assert "stack no-such-stack does not exist" in proc.stderr
    assert not out.exists()
    proc, _ = take_inventory(cumulo, tmp_path, "--app", "no-such-app")
    assert proc.returncode == 2
    assert "no stack is tagged copilot-application=no-such-app" in proc.stderr


NESTED_CHILD = """\
Resources:
  Jobs:
    Type: AWS::SQS::Queue
Outputs:
  Arn: {Value: !GetAtt Jobs.Arn}
"""

NESTED_PARENT = """\
Parameters:
  ChildUrl: {Type: String}
Resources:
  Child:
    Type: AWS::CloudFormation::Stack
    Properties: {TemplateURL: !Ref ChildUrl}
  Alerts:
    Type: AWS::SNS::Topic
    Properties: {DisplayName: !GetAtt Child.Outputs.Arn}
"""


def test_the_gate_on_a_nested_stack_needs_the_nested_change_set(cumulo, tmp_path):
    """The parent's patch points at the uploaded nested patch (the TemplateURL change the gate
    allows); CloudFormation plans the nested stack's Automatic change and the Dynamic change of
    the resource that GetAtts it; the gate passes with both change sets and fails without the
    nested one."""
    cfn, s3 = cumulo.client("cloudformation"), cumulo.client("s3")
    name = f"nest{uuid.uuid4().hex[:8]}"
    s3.create_bucket(Bucket=f"{name}-templates")
    s3.put_object(Bucket=f"{name}-templates", Key="child.yml", Body=NESTED_CHILD.encode())
    child_url = f"{cumulo.endpoint}/{name}-templates/child.yml"
    cfn.create_stack(StackName=name, TemplateBody=NESTED_PARENT,
                     Parameters=[{"ParameterKey": "ChildUrl", "ParameterValue": child_url}])
    cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig={"Delay": 1})
    taken, inventory = take_inventory(cumulo, tmp_path, "--stack", name)
    assert taken.returncode == 0, taken.stderr
    out = tmp_path / "out"
    gen = migrate("generate", str(inventory), "--out", str(out))
    assert gen.returncode == 0, gen.stdout + gen.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    nested = [s for s in manifest["stacks"] if s["parent"] == name]
    assert len(nested) == 1 and manifest["teardown_order"] == [{"stack": name, "nested": [nested[0]["name"]]}]
    assert {i["logical_id"] for i in manifest["imports"]} == {"Jobs", "Alerts"}

    s3.put_object(Bucket=f"{name}-templates", Key="child-retained.yml",
                  Body=(out / nested[0]["retain_patch"]["path"]).read_bytes())
    cs = cfn.create_change_set(
        StackName=name, ChangeSetName="retain", IncludeNestedStacks=True,
        TemplateBody=(out / manifest["stacks"][0]["retain_patch"]["path"]).read_text(),
        Parameters=[{"ParameterKey": "ChildUrl",
                     "ParameterValue": f"{cumulo.endpoint}/{name}-templates/child-retained.yml"}])
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=cs["Id"], WaiterConfig={"Delay": 1})
    root = describe_change_set(cumulo, cs["Id"], tmp_path / "root.json")
    nested_id = next(c["ResourceChange"]["ChangeSetId"] for c in json.loads(root.read_text())["Changes"]
                     if c["ResourceChange"]["LogicalResourceId"] == "Child")
    child = describe_change_set(cumulo, nested_id, tmp_path / "child.json")
    args = ("--manifest", str(out / "manifest.json"), "--stack", name)
    ok = migrate("check", "--changeset", str(root), str(child), *args)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Alerts: DisplayName (Dynamic, caused by Child.Outputs.Arn" in ok.stdout, ok.stdout
    assert "2 change set(s)" in ok.stdout
    alone = migrate("check", "--changeset", str(root), *args)
    assert alone.returncode == 1 and "was not supplied" in alone.stdout, alone.stdout


def test_generate_for_a_copilot_environment(cumulo, handlers, tmp_path):
    """A Copilot environment stack (the corpus's basic manifest, its handlers the tests' own)
    inventoried and generated: the custom resources and the functions and roles serving them
    are left for manual cleanup, everything else is imported with ids that answer, the
    certificate the HTTPSCert handler made and its validation records are imported out of
    band, and the patch is policy-only."""
    from test_copilot import APP, CIDRS, COPILOT, deploy, env_params, outputs, render
    cfn = cumulo.client("cloudformation")
    app = f"m{uuid.uuid4().hex[:6]}"
    (tmp_path / "app.yml").write_text(APP)
    deploy(cumulo, f"{app}-infrastructure-roles", tmp_path / "app.yml", {"App": app})
    role = outputs(cfn, f"{app}-infrastructure-roles")["Role"]
    template = render(COPILOT / "environments__template-with-basic-manifest.yml", handlers, tmp_path, dict(CIDRS))
    stack = f"{app}-test"
    proc = deploy(cumulo, stack, template, env_params(app, "test", role),
                  tags={"copilot-application": app, "copilot-environment": "test"}, check=False)
    assert proc.returncode == 0, proc.stderr
    taken, inventory = take_inventory(cumulo, tmp_path, "--stack", stack)
    assert taken.returncode == 0, taken.stderr
    out = tmp_path / "out"
    gen = migrate("generate", str(inventory), "--out", str(out))
    assert gen.returncode == 0, gen.stdout + gen.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    entry = next(s for s in manifest["stacks"] if s["name"] == stack)
    fates = {r["logical_id"]: r["fate"] for r in entry["resources"]}
    types = {r["logical_id"]: r["type"] for r in entry["resources"]}
    for logical, kind in types.items():
        if kind.startswith("Custom::"):
            assert fates[logical] == "manual-cleanup", logical
    for function in ("CertificateValidationFunction", "DNSDelegationFunction", "CustomDomainFunction"):
        assert fates[function] == "manual-cleanup", function
    imported = {i["logical_id"] for i in manifest["imports"] if i["logical_id"]}
    assert not any(types[i].startswith("Custom::") for i in imported)
    assert {"VPC", "PublicLoadBalancer", "HTTPSListener", "Cluster", "NatGateway1Attachment"} <= imported
    assert imports_live(cumulo, manifest["imports"], only=LIVE_CHECKED) >= 20
    oob = [i for i in manifest["imports"] if i["type"] == "out-of-band"]
    assert any(i["to"].startswith("aws_acm_certificate.") for i in oob), oob
    assert any(i["to"].startswith("aws_route53_record.") for i in oob), oob
    deployed = tmp_path / "deployed.json"
    deployed.write_text(json.loads(inventory.read_text())["stacks"][0]["template"])
    diff = migrate("check", "--template-diff", str(deployed), str(out / entry["retain_patch"]["path"]))
    assert diff.returncode == 0, diff.stdout
    patch = (out / entry["retain_patch"]["path"]).read_text()
    params = [{"ParameterKey": k, "UsePreviousValue": True} for k in env_params(app, "test", role)]
    cs = cfn.create_change_set(StackName=stack, ChangeSetName="retain", TemplateBody=patch, Parameters=params,
                               Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"])
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=cs["Id"], WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    described = describe_change_set(cumulo, cs["Id"], tmp_path / "cs.json")
    gate = migrate("check", "--changeset", str(described), "--manifest", str(out / "manifest.json"), "--stack", stack)
    assert gate.returncode == 0, gate.stdout + gate.stderr

    # The rehearsal needs the app stack too: the delegation handler assumes its DNS role.
    (tmp_path / "both").mkdir()
    taken, both = take_inventory(cumulo, tmp_path / "both", "--stack", f"{app}-infrastructure-roles",
                                 "--stack", stack)
    assert taken.returncode == 0, taken.stderr
    rehearsed = rehearse(both, tmp_path / "rehearsal")
    assert rehearsed.returncode == 0, rehearsed.stdout + rehearsed.stderr
    md = (tmp_path / "rehearsal" / "REHEARSAL.md").read_text()
    assert "the plan PASSES" in md
    # The twin ran the handlers' real code on the runtime AWS no longer creates.
    assert f"{stack}/DNSDelegationFunction: runtime nodejs20.x, which AWS no longer accepts on create" in md
    assert f"{stack}/CertificateValidationFunction (s3://{handlers}/dns-cert-validator.js.zip): code read" in md
    imports = re.search(r"imports resolving on the twin after teardown: (\d+) of (\d+)", rehearsed.stdout)
    assert imports and imports[1] == imports[2] and int(imports[1]) >= 50, rehearsed.stdout
    assert "custom-resource Delete requests on the patched twin: 0" in rehearsed.stdout
    assert f"{stack}: the gate passed" in md
    # Teardown deletes the environment before the stack whose role it was given.
    teardown = md.split("## Teardown")[1].split("## Proof")[0]
    assert teardown.index(f"- {stack}: DELETE_COMPLETE") < teardown.index(f"- {app}-infrastructure-roles: DELETE_COMPLETE")
    # The careless DeleteStack runs the destructive handlers: the ALB, the certificate, its
    # validation records, the alias and the NS delegation go.
    careless = md.split("## What a plain DeleteStack would destroy")[1]
    for handle in ("HTTPSCert", "DelegateDNSAction", "CustomDomainAction"):
        assert f"- Delete {stack}/{handle} (" in careless, handle
    destroyed = careless.split("Stack resources destroyed:")[1].split("Stack resources that survived:")[0]
    assert f"{stack}/PublicLoadBalancer (AWS::ElasticLoadBalancingV2::LoadBalancer)" in destroyed
    gone = careless.split("Out-of-band objects destroyed:")[1]
    assert f"- certificate test.{app}.example.com (arn:aws:acm:" in gone, gone
    assert re.search(rf"- record _[0-9a-f]+\.test\.{app}\.example\.com\. CNAME", gone), gone
    assert f"- record test.{app}.example.com. NS in {app}.example.com." in gone, gone


# The Copilot helpers of test_copilot.py: its app stand-in, its deploy and render, its handlers
# fixture (the seed's handlers uploaded once per module).
from test_copilot import APP, CIDRS, COPILOT, deploy, env_params, outputs, render  # noqa: E402


@pytest.mark.skipif(not COPILOT.is_dir(), reason=f"no Copilot corpus at {COPILOT}")
def test_copilot_app_inventory_and_report_with_the_env_controller_cascade(cumulo, handlers, tmp_path):
    """An app stand-in, an environment with DNS (delegation and certificate handlers run) and a
    Backend Service that the env-controller adds to the environment's InternalALBWorkloads:
    inventory by the app's tags, then the report's fates, handlers and cascade."""
    cfn = cumulo.client("cloudformation")
    params = json.loads((COPILOT / "workloads__backend__http-full-config-params.json").read_text())
    p = dict(params["Parameters"], ContainerImage="public.ecr.aws/nginx/nginx:latest")
    app, env, name = p["AppName"], p["EnvName"], p["WorkloadName"]
    app_file = tmp_path / "app.yml"
    app_file.write_text(APP)
    deploy(cumulo, f"{app}-infrastructure-roles", app_file, {"App": app},
           tags={"copilot-application": app})
    role = outputs(cfn, f"{app}-infrastructure-roles")["Role"]
    env_stack = f"{app}-{env}"
    env_path = render(COPILOT / "environments__template-with-basic-manifest.yml", handlers, tmp_path, dict(CIDRS))
    deploy(cumulo, env_stack, env_path, env_params(app, env, role, workloads=False),
           tags={"copilot-application": app, "copilot-environment": env})
    stack = f"{app}-{env}-{name}"
    literals = dict(CIDRS, **{"123456789123": "000000000000"})
    path = COPILOT / "workloads__backend__http-full-config-template.yml"
    deploy(cumulo, stack, render(path, handlers, tmp_path, literals), p, tags=params["Tags"])

    proc, out = take_inventory(cumulo, tmp_path, "--app", app, "--env", env)
    assert proc.returncode == 0, proc.stderr
    inv = json.loads(out.read_text())
    stacks = {s["name"]: s for s in inv["stacks"]}
    assert {n: s["copilot"]["kind"] for n, s in stacks.items()} == {
        f"{app}-infrastructure-roles": "app", env_stack: "env", stack: "workload"}
    assert inv["selection"] == {"kind": "copilot", "app": app, "environments": [env]}
    # The env's handlers, with the function and code location each custom resource runs.
    customs = {c["logical_id"]: c for c in stacks[env_stack]["custom_resources"]}
    assert customs["DelegateDNSAction"]["resource_type"] == "Custom::DNSDelegationFunction"
    fn = customs["HTTPSCert"]["function"]
    live = cumulo.client("lambda").get_function(FunctionName=fn["name"])["Configuration"]
    assert (fn["arn"], fn["runtime"], fn["handler"]) == (live["FunctionArn"], live["Runtime"], live["Handler"])
    assert customs["HTTPSCert"]["service_token"] == fn["arn"]
    assert fn["code"]["s3_bucket"] == handlers
    # The certificate HTTPSCert's handler made, found by its copilot tags, and the NS delegation
    # the delegation handler wrote into the app's zone.
    [cert] = [c for c in inv["out_of_band"]["certificates"] if c["arn"] == customs["HTTPSCert"]["physical_id"]]
    assert cert["tags"]["copilot-application"] == app and cert["found_by"] == f"physical_id:{env_stack}/HTTPSCert, tags"
    app_zone = next(z for z in inv["out_of_band"]["hosted_zones"] if z["name"] == f"{app}.example.com.")
    assert (f"{env}.{app}.example.com.", "NS") in {(r["name"], r["record_type"]) for r in app_zone["records"]}
    workload_env_params = {x["key"]: x["value"] for x in stacks[env_stack]["parameters"]}
    assert workload_env_params["InternalALBWorkloads"] == name

    report = tmp_path / "REPORT.md"
    proc = migrate("report", str(out), "-o", str(report))
    assert proc.returncode == 0, proc.stderr
    text = report.read_text()
    sections = {s.split("\n", 1)[0]: s for s in text.split("\n## ")}

    def fates(section):
        rows = [[c.strip() for c in line.split("|")[1:-1]] for line in sections[section].splitlines()
                if line.startswith("| ") and "::" in line]
        return {r[0]: r[3] for r in rows if len(r) == 5}  # the resource table, not the handlers'

    app_fates = fates(f"Stack {app}-infrastructure-roles")
    assert set(app_fates.values()) == {"retain-under-existing-owner"}
    env_fates = fates(f"Stack {env_stack}")
    assert env_fates["HTTPSCert"] == env_fates["DelegateDNSAction"] == "manual-cleanup"
    assert env_fates["CertificateValidationFunction"] == "manual-cleanup"
    assert env_fates["VPC"] == env_fates["Cluster"] == env_fates["InternalLoadBalancer"] == "import"
    assert env_fates["PublicLoadBalancer"] == "not-created"  # ALBWorkloads is empty
    wl_fates = fates(f"Stack {stack}")
    assert wl_fates["EnvControllerAction"] == "manual-cleanup"
    assert wl_fates["Service"] == wl_fates["TaskDefinition"] == "import"
    # Destructive handlers, and what they would destroy.
    assert f"certificate {cert['arn']}" in sections[f"Stack {env_stack}"]
    assert f"NS delegation record {env}.{app}.example.com in the app zone" in sections[f"Stack {env_stack}"]
    # Out-of-band objects: the certificate and the delegation are imported.
    oob = sections["Objects outside the stacks"]
    assert f"| certificate | {cert['arn']} | import |" in oob
    assert f"{env}.{app}.example.com./NS | import | the NS delegation" in oob
    # The workload's internal alias belongs to its RecordSetGroup: not an object outside.
    assert f"{name}.{env}.{app}.internal." not in oob
    # The cascade: deleting the workload empties InternalALBWorkloads, which deletes the
    # environment's internal load balancer.
    cascade = sections["Env-controller cascades"]
    assert f"### Deleting {stack} (workload {name}) updates {env_stack}" in cascade
    assert f"- parameter InternalALBWorkloads: `{name}` → ``" in cascade
    assert "  - InternalLoadBalancer (AWS::ElasticLoadBalancingV2::LoadBalancer)" in cascade
    delete = sections["What a plain DeleteStack would destroy"]
    assert "HTTPSCert (dns-cert-validator.js) Delete: certificate" in delete

    # The rehearsal: the app stack kept (Copilot's app stack stays), the workload and the
    # environment patched through the gate and deleted on the twin with every import resolving
    # and no Delete handler run; the careless delete runs the env-controller, the certificate,
    # delegation and rule-priority handlers, and takes the internal ALB with it.
    rehearsed = rehearse(out, tmp_path / "rehearsal")
    assert rehearsed.returncode == 0, rehearsed.stdout + rehearsed.stderr
    md = (tmp_path / "rehearsal" / "REHEARSAL.md").read_text()
    assert f"Stacks deployed, in order: {app}-infrastructure-roles, {env_stack}, {stack}." in md
    assert f"{stack}/EnvControllerFunction (s3://{handlers}/env-controller.js.zip): code read" in md
    counted = re.search(r"imports resolving on the twin after teardown: (\d+) of (\d+)", rehearsed.stdout)
    assert counted and counted[1] == counted[2], rehearsed.stdout
    assert "custom-resource Delete requests on the patched twin: 0" in rehearsed.stdout
    teardown = md.split("## Teardown")[1].split("## Proof")[0]
    assert teardown.index(f"- {stack}: DELETE_COMPLETE") < teardown.index(f"- {env_stack}: DELETE_COMPLETE")
    careless = md.split("## What a plain DeleteStack would destroy")[1]
    for handle in (f"{stack}/EnvControllerAction", f"{env_stack}/HTTPSCert", f"{env_stack}/DelegateDNSAction"):
        assert f"- Delete {handle} (" in careless, handle
    destroyed = careless.split("Stack resources destroyed:")[1].split("Stack resources that survived:")[0]
    assert f"{env_stack}/InternalLoadBalancer (AWS::ElasticLoadBalancingV2::LoadBalancer)" in destroyed
    assert f"{env_stack}/Cluster (AWS::ECS::Cluster)" in destroyed
    # The internal ALB went with the workload's delete, before the environment's own: the
    # env-controller's Delete emptied InternalALBWorkloads and updated the environment.
    cascades = careless.split("lost during another's delete (a Delete handler updating it):")[1].split("Out-of-band")[0]
    lost = re.search(rf"- deleting {stack} removed \d+ resource\(s\) from {env_stack}: (.*)", cascades)
    assert lost, cascades
    for logical in ("InternalLoadBalancer (AWS::ElasticLoadBalancingV2::LoadBalancer)",
                    "InternalHTTPListener (AWS::ElasticLoadBalancingV2::Listener)"):
        assert logical in lost[1], (logical, lost[1])
    assert "HTTPSCert" not in lost[1] and "VPC (" not in lost[1], lost[1]
    survived = careless.split("Stack resources that survived:")[1].split("Custom-resource handler")[0]
    assert "not checked" not in survived, survived
    gone = careless.split("Out-of-band objects destroyed:")[1]
    assert f"- certificate {env}.{app}.example.com (arn:aws:acm:" in gone, gone
    assert f"- record {env}.{app}.example.com. NS in {app}.example.com." in gone, gone

    for s in (stack, env_stack, f"{app}-infrastructure-roles"):
        cfn.delete_stack(StackName=s)
        cfn.get_waiter("stack_delete_complete").wait(StackName=s, WaiterConfig={"Delay": 1, "MaxAttempts": 300})


# --- rehearse: the runbook on a local twin, and the careless DeleteStack ---

def test_rehearse_a_plain_stack_keeps_everything_and_shows_what_a_plain_delete_destroys(
        cumulo, tmp_path, plain_stack):
    name, stack = plain_stack
    proc, inventory = take_inventory(cumulo, tmp_path, "--stack", stack)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "rehearsal"
    done = rehearse(inventory, out)
    assert done.returncode == 0, done.stdout + done.stderr
    md = (out / "REHEARSAL.md").read_text()
    assert "the plan PASSES" in md
    imports = json.loads(subprocess.run(
        [str(BIN), "migrate", "generate", str(inventory), "--out", str(tmp_path / "gen")],
        capture_output=True, text=True, timeout=60).stdout and
        (tmp_path / "gen" / "manifest.json").read_text())["imports"]
    assert f"imports resolving on the twin after teardown: {len(imports)} of {len(imports)}" in done.stdout
    for i in imports:
        assert f"`{i['id']}`" in md, i
    assert f"{stack}: the gate passed" in md and f"{stack}: DELETE_COMPLETE" in md
    # The record made by hand in the stack's zone was seeded into the twin and survived.
    assert f"www.{name}.example.org" not in md.split("## What a plain DeleteStack")[0].split("Out-of-band objects gone")[1]
    careless = md.split("## What a plain DeleteStack would destroy")[1]
    destroyed = careless.split("Stack resources destroyed:")[1].split("Stack resources that survived:")[0]
    survived = careless.split("Stack resources that survived:")[1].split("Custom-resource handler")[0]
    # DeletionPolicy: Retain of its own; the bucket holds the rehearsal's marker and the zone the
    # record made by hand, so as on AWS their deletes fail and the stack ends DELETE_FAILED.
    for logical in ("Logs", "Bucket", "Zone"):
        assert f"{stack}/{logical} (" in survived, (logical, careless)
    # What else the delete reached before it failed depends on its parallel order; each
    # resource is reported exactly once, and what it reached is gone.
    reported = re.findall(rf"- {stack}/(\w+) \(", destroyed + survived)
    assert sorted(reported) == sorted(["Vpc", "Subnet", "Group", "Queue", "Topic", "Logs", "Setting", "Zone",
                                       "Bucket", "Key", "Repo", "Secret"]), careless
    assert len(re.findall(rf"- {stack}/", destroyed)) >= 4, careless
    assert f"{stack}: DELETE_FAILED: " in careless, careless
    assert "Custom-resource handler requests the deletes sent:\n\n- none" in careless
    # The account itself was not touched.
    cfn = cumulo.client("cloudformation")
    assert cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"


def test_rehearse_refuses_a_tampered_inventory(cumulo, tmp_path, plain_stack):
    _, stack = plain_stack
    proc, inventory = take_inventory(cumulo, tmp_path, "--stack", stack)
    assert proc.returncode == 0, proc.stderr
    unknown = rehearse(inventory, tmp_path / "r", "--keep", "no-such-stack")
    assert unknown.returncode == 2 and "--keep no-such-stack: no such stack" in unknown.stderr
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert rehearse(inventory, a_file).returncode == 2
    inventory.write_text(inventory.read_text().replace('"us-east-1"', '"eu-west-1"'))
    done = rehearse(inventory, tmp_path / "r")
    assert done.returncode == 2
    assert "changed after it was taken" in done.stderr
    assert not (tmp_path / "r").exists()


# A hand-written stack whose custom resource makes a DNS record out of band and whose Delete
# handler is destructive (it removes the record and empties the bucket, as Copilot's
# custom-domain and bucket-cleaner handlers do), on a runtime AWS no longer creates.
DESTRUCTIVE = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Name: {Type: String}
Resources:
  Data:
    Type: AWS::S3::Bucket
    Properties: {BucketName: !Sub "${Name}-logs"}
  Zone:
    Type: AWS::Route53::HostedZone
    Properties: {Name: !Sub "${Name}.example.net"}
  AppRecordRole:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Version: "2012-10-17"
        Statement: [{Effect: Allow, Principal: {Service: lambda.amazonaws.com}, Action: "sts:AssumeRole"}]
  AppRecordFunction:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.9
      Handler: index.handler
      Timeout: 60
      Role: !GetAtt AppRecordRole.Arn
      Code:
        ZipFile: |
          import json, urllib.request, boto3
          def handler(event, context):
              p = event["ResourceProperties"]
              def change(action):
                  boto3.client("route53").change_resource_record_sets(HostedZoneId=p["ZoneId"], ChangeBatch={"Changes": [
                      {"Action": action, "ResourceRecordSet": {"Name": p["RecordName"], "Type": "A", "TTL": 60,
                                                               "ResourceRecords": [{"Value": "192.0.2.10"}]}}]})
              if event["RequestType"] == "Delete":
                  change("DELETE")
                  s3 = boto3.client("s3")
                  for o in s3.list_objects_v2(Bucket=p["BucketName"]).get("Contents", []):
                      s3.delete_object(Bucket=p["BucketName"], Key=o["Key"])
              else:
                  change("UPSERT")
              body = json.dumps({"Status": "SUCCESS", "PhysicalResourceId": "app-record", "StackId": event["StackId"],
                                 "RequestId": event["RequestId"], "LogicalResourceId": event["LogicalResourceId"]})
              urllib.request.urlopen(urllib.request.Request(event["ResponseURL"], data=body.encode(), method="PUT",
                                                            headers={"Content-Type": ""}))
  AppRecord:
    Type: Custom::AppRecord
    Properties:
      ServiceToken: !GetAtt AppRecordFunction.Arn
      ZoneId: !Ref Zone
      RecordName: !Sub "app.${Name}.example.net"
      BucketName: !Ref Data
"""


def test_rehearse_proves_a_destructive_delete_handler_never_runs_on_the_patched_path(cumulo, tmp_path):
    name = f"rh{uuid.uuid4().hex[:8]}"
    stack = f"{name}-stack"
    source = tmp_path / "template.yml"
    source.write_text(DESTRUCTIVE)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(source),
               "--parameter-overrides", f"Name={name}", "--capabilities", "CAPABILITY_IAM")
    proc, inventory = take_inventory(cumulo, tmp_path, "--stack", stack)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "rehearsal"
    done = rehearse(inventory, out)
    assert done.returncode == 0, done.stdout + done.stderr
    md = (out / "REHEARSAL.md").read_text()
    assert "the plan PASSES" in md
    assert f"{stack}/AppRecordFunction: runtime python3.9, which AWS no longer accepts on create" in md
    assert f"{stack}/AppRecord: its handler" in md and "runs the inline code" in md
    patched, careless = md.split("## What a plain DeleteStack would destroy")
    # The handler ran once on each twin's build (its Create), never on the patched path.
    proof = patched.split("## Proof")[1]
    assert "(none may be a Delete):\n\n- none" in proof, proof
    assert "Out-of-band objects gone (none may be):\n\n- none" in proof, proof
    assert "custom-resource Delete requests on the patched twin: 0" in done.stdout
    # The careless delete ran the handler, which took the record and the bucket's contents
    # with it, so the bucket and the zone went too.
    assert f"- Delete {stack}/AppRecord (Custom::AppRecord)" in careless, careless
    gone = careless.split("Out-of-band objects destroyed:")[1]
    assert f"record app.{name}.example.net. A in {name}.example.net." in gone, gone
    assert f"object s3://{name}-logs/cumulo-rehearsal/marker.txt" in gone, gone
    destroyed = careless.split("Stack resources destroyed:")[1].split("Stack resources that survived:")[0]
    assert f"{stack}/AppRecord (Custom::AppRecord) app-record (custom resource: its Delete handler ran)" in destroyed
    for logical in ("Data", "Zone", "AppRecordFunction", "AppRecordRole"):
        assert f"{stack}/{logical} (" in destroyed, (logical, careless)
    assert f"{stack}: DELETE_COMPLETE" in careless
    # The account's record is untouched.
    zone = physical(cumulo, stack, "Zone")
    records = cumulo.client("route53").list_resource_record_sets(HostedZoneId=zone)["ResourceRecordSets"]
    assert any(r["Name"] == f"app.{name}.example.net." for r in records)


# --- a Load Balanced Web Service and a Worker Service through the whole chain ----------------
#
# The corpus's svc-test (LBWS `fe`, on an imported ALB: its rule-priority handler places its
# listener rules) and worker-test (Worker `dogworker`: its queues and its subscriptions to other
# services' topics) in one environment `my-app-test` with DNS (the delegation and certificate
# handlers run). The environment is deployed with `fe` in ALBWorkloads, NATWorkloads,
# EFSWorkloads and Aliases, as Copilot's env-controller leaves it. Deployed once per module and
# shared by the tests below; what the renders import comes from test_copilot's stand-ins.

WL_APP, WL_ENV = "my-app", "test"
WL_ENV_STACK = f"{WL_APP}-{WL_ENV}"
WL_LBWS, WL_WORKER = f"{WL_ENV_STACK}-fe", f"{WL_ENV_STACK}-dogworker"


@pytest.fixture(scope="module")
def lbws_and_worker(cumulo, handlers, tmp_path_factory):
    import time
    from test_copilot import (IMPORTED_ALB, IMPORTS, ROOT_ZONE, deploy_quick, problems, kind_functions,
                              load, with_handler_code, workload_params, _sub_literal_arns)
    t0 = time.monotonic()
    tmp = tmp_path_factory.mktemp("lbws-worker")
    cfn = cumulo.client("cloudformation")
    created = []

    def up(name, path, params=None, tags=None):
        # The session server may already hold this stack from test_copilot (the same root-zones
        # template under the same app name): reuse it rather than deploy an empty change set.
        # DescribeStacks by name, not ListStacks: the shared server holds more stacks than one
        # ListStacks page (100), and this one may sit on a later page.
        try:
            live = [x["StackStatus"] for x in cfn.describe_stacks(StackName=name)["Stacks"]]
        except cfn.exceptions.ClientError:
            live = []
        if name.endswith("-root-zones") and any(st in ("CREATE_COMPLETE", "UPDATE_COMPLETE") for st in live):
            return
        status = deploy_quick(cumulo, name, path, params, tags=tags)
        created.insert(0, name)
        # UPDATE_COMPLETE: a stack test_copilot left under the same name, updated to this template.
        assert status in ("CREATE_COMPLETE", "UPDATE_COMPLETE"), f"{name}: {status}\n" + "\n".join(problems(cfn, name))

    (tmp / "app.yml").write_text(APP)
    up(f"{WL_APP}-infrastructure-roles", tmp / "app.yml", {"App": WL_APP}, {"copilot-application": WL_APP})
    role = outputs(cfn, f"{WL_APP}-infrastructure-roles")["Role"]
    (tmp / "root.yml").write_text(ROOT_ZONE)
    up(f"{WL_APP}-root-zones", tmp / "root.yml")
    zones = outputs(cfn, f"{WL_APP}-root-zones")
    env_path = render(COPILOT / "environments__template-with-basic-manifest.yml", handlers, tmp, dict(CIDRS))
    params = env_params(WL_APP, WL_ENV, role)
    params["InternalALBWorkloads"] = ""
    up(WL_ENV_STACK, env_path, params, {"copilot-application": WL_APP, "copilot-environment": WL_ENV})
    (tmp / "imports.yml").write_text(IMPORTS)
    up(f"{WL_ENV_STACK}-imports", tmp / "imports.yml", {"Env": WL_ENV})
    acm = cumulo.client("acm")
    from test_copilot import CERT, KEY
    cert = acm.import_certificate(Certificate=CERT.read_bytes(), PrivateKey=KEY.read_bytes())["CertificateArn"]
    # The stand-in ALB's port-443 listener without a certificate: a certificate imported by hand
    # is not in the inventory, so the twin could not build the listener (see REHEARSAL.md gaps).
    (tmp / "alb.yml").write_text(IMPORTED_ALB.replace("Protocol: HTTPS", "Protocol: HTTP").replace(
        "      Certificates: [{CertificateArn: !Ref Cert}]\n", ""))
    up(f"{WL_ENV_STACK}-imported-alb", tmp / "alb.yml", {"Cert": cert})
    alb = outputs(cfn, f"{WL_ENV_STACK}-imported-alb")
    http_listener = alb.pop("HTTPListener")
    imports = outputs(cfn, f"{WL_ENV_STACK}-imports")
    literals = dict(CIDRS, **alb, **{
        "123456789123": "000000000000", "mockHostedZone1": zones["Foobar"], "mockHostedZone2": zones["Root"],
        "mockHostedZone\"": zones["Root"] + '"', "Z08230443CW11KE6JBNUA": zones["Root"],
        "sns:us-west-2:": "sns:us-east-1:", "sg-0c10c4fe23f5e5361": imports["ManifestGroup1"],
        "sg-09295097b2a41b59d": imports["ManifestGroup2"]})
    for name, stack in (("workloads__svc-test.stack.yml", WL_LBWS), ("workloads__worker-test.stack.yml", WL_WORKER)):
        path = COPILOT / name
        p, tags = workload_params(path)
        t = _sub_literal_arns(with_handler_code(load(path), kind_functions(path), handlers))
        if stack == WL_LBWS:
            # The render's mocked ALB answered one listener ARN for both listeners (test_copilot).
            for logical in ("HTTPRedirectRulePriorityAction", "HTTPListenerRedirectRuleForImportedALB",
                            "HTTPListenerRedirectRuleForImportedALB1"):
                t["Resources"][logical]["Properties"]["ListenerArn"] = http_listener
        text = json.dumps(t)
        for old, new in literals.items():
            text = text.replace(old, new)
        (tmp / f"{stack}.json").write_text(text)
        up(stack, tmp / f"{stack}.json", p, tags)
    print(f"lbws_and_worker: deployed in {time.monotonic() - t0:.1f}s")

    selection = [a for s in (f"{WL_APP}-infrastructure-roles", f"{WL_APP}-root-zones", f"{WL_ENV_STACK}-imports",
                             f"{WL_ENV_STACK}-imported-alb", WL_ENV_STACK, WL_LBWS, WL_WORKER)
                 for a in ("--stack", s)]
    taken, inventory = take_inventory(cumulo, tmp, *selection)
    assert taken.returncode == 0, taken.stderr
    gen = migrate("generate", str(inventory), "--out", str(tmp / "out"))
    assert gen.returncode == 0, gen.stdout + gen.stderr
    t1 = time.monotonic()
    rehearsed = rehearse(inventory, tmp / "rehearsal")
    print(f"lbws_and_worker: rehearsed in {time.monotonic() - t1:.1f}s")
    yield {"inventory": inventory, "out": tmp / "out", "rehearsed": rehearsed, "tmp": tmp}

    for stack in created:
        cfn.delete_stack(StackName=stack)
        cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 1, "MaxAttempts": 300})
    acm.delete_certificate(CertificateArn=cert)
    from test_copilot import delete_retained_roles
    delete_retained_roles(cumulo, WL_ENV_STACK)
    print(f"lbws_and_worker: module wall time {time.monotonic() - t0:.1f}s")


def wl_fates(out):
    manifest = json.loads((out / "manifest.json").read_text())
    return manifest, {s["name"]: {r["logical_id"]: r["fate"] for r in s.get("resources", [])} for s in manifest["stacks"]}


def test_lbws_and_worker_fates_imports_and_patches(cumulo, lbws_and_worker):
    """Per-resource fates of the LBWS and the Worker, their Terraform parsed with every import
    id naming a live resource, and their retain patches policy-only."""
    out = lbws_and_worker["out"]
    manifest, fates = wl_fates(out)
    fe, worker = fates[WL_LBWS], fates[WL_WORKER]
    # The handlers' custom resources and the functions and roles serving them: manual cleanup.
    for logical in ("EnvControllerAction", "EnvControllerFunction", "EnvControllerRole", "DynamicDesiredCountAction",
                    "DynamicDesiredCountFunction"):
        assert fe[logical] == worker[logical] == "manual-cleanup", logical
    for logical in ("HTTPSRulePriorityAction", "HTTPRedirectRulePriorityAction", "RulePriorityFunction"):
        assert fe[logical] == "manual-cleanup", logical
    # The LBWS's listener rules, target groups, alias record, service and scaling: imported.
    for logical in ("HTTPSListenerRuleForImportedALB", "HTTPListenerRedirectRuleForImportedALB",
                    "TargetGroupForImportedALB", "Service", "TaskDefinition", "AutoScalingTarget",
                    "AutoScalingPolicyALBAverageResponseTime", "DiscoveryService"):
        assert fe[logical] == "import", logical
    assert [v for k, v in fe.items() if k.startswith("LoadBalancerDNSAlias")] == ["import"]
    # The Worker's queues, their policies, its subscriptions to other services' topics, the
    # backlog calculator (not destructive: a scheduled Lambda, no custom resource) and scaling.
    for logical in ("EventsQueue", "DeadLetterQueue", "QueuePolicy", "dogsvcgivesdogsSNSTopicSubscription",
                    "nonfifotopicnonfifotopicEventsQueue", "nonfifotopicnonfifotopicSNSTopicSubscription",
                    "BacklogPerTaskCalculatorFunction", "BacklogPerTaskScheduledRule", "AutoScalingPolicyEventsQueue",
                    "EventsKMSKey"):
        assert worker[logical] == "import", logical

    imports = {i["to"]: i["id"] for i in manifest["imports"]}
    by_stack = parse_terraform(out)
    for stack in (WL_LBWS, WL_WORKER):
        blocks = by_stack[stack]
        declared = {f"{unq(t)}.{unq(n)}" for r in blocks["resource"] for t, named in r.items() for n in named}
        targets = {b["to"][2:-1]: unq(b["id"]) for b in blocks["import"]}
        assert set(targets) <= declared and targets, stack
        assert all(imports[t] == i for t, i in targets.items())
    terraform_fmt(out)
    checked = imports_live(cumulo, manifest["imports"], only=LIVE_CHECKED)
    assert checked >= 40, checked
    kinds = {to.split(".")[0] for to in imports}
    assert {"aws_sqs_queue", "aws_sqs_queue_policy", "aws_sns_topic_subscription", "aws_lb_listener_rule",
            "aws_lb_target_group", "aws_route53_record", "aws_appautoscaling_policy"} <= kinds, kinds
    sub = next(i for t, i in imports.items() if t.startswith("aws_sns_topic_subscription."))
    assert sub.startswith("arn:aws:sns:us-east-1:000000000000:my-app-test-"), sub
    rule = next(i for t, i in imports.items() if t.startswith("aws_lb_listener_rule."))
    assert ":listener-rule/app/" in rule, rule

    inv = json.loads(lbws_and_worker["inventory"].read_text())
    for stack in (WL_LBWS, WL_WORKER):
        entry = next(s for s in manifest["stacks"] if s["name"] == stack)
        deployed = lbws_and_worker["tmp"] / f"{stack}-deployed.json"
        deployed.write_text(next(s for s in inv["stacks"] if s["name"] == stack)["template"])
        diff = migrate("check", "--template-diff", str(deployed), str(out / entry["retain_patch"]["path"]))
        assert diff.returncode == 0, diff.stdout


def test_lbws_and_worker_env_controller_cascades(lbws_and_worker):
    """Both workloads pass the env-controller `Parameters: []`, so on create it already took them
    out of every *Workloads parameter and Aliases (as Copilot's does): their deletes change no
    environment parameter and remove no environment resource, and the report says so."""
    inv = json.loads(lbws_and_worker["inventory"].read_text())
    env = next(s for s in inv["stacks"] if s["name"] == WL_ENV_STACK)
    params = {p["key"]: p["value"] for p in env["parameters"]}
    assert params["ALBWorkloads"] == params["NATWorkloads"] == params["Aliases"] == ""
    report = (lbws_and_worker["out"] / "REPORT.md").read_text()
    cascade = report.split("## Env-controller cascades")[1].split("\n## ")[0]
    for stack, name in ((WL_LBWS, "fe"), (WL_WORKER, "dogworker")):
        section = cascade.split(f"### Deleting {stack} (workload {name}) updates {WL_ENV_STACK}")[1].split("###")[0]
        assert "- no parameter changes: the env stack is not updated" in section
        assert "- no env resource is removed" in section


def test_lbws_and_worker_rehearsal_passes(lbws_and_worker):
    """The runbook on the twin: every stack's patch through the gate, the LBWS's as the account's
    patch with the ids its deploy mapped to the twin's mapped the same way (proved byte for byte
    against the patch of the twin's deployed template), teardown of every handed-off stack, every
    import id resolving through the twin's API, no Delete handler run, nothing out of band gone."""
    rehearsed = lbws_and_worker["rehearsed"]
    assert rehearsed.returncode == 0, rehearsed.stdout + rehearsed.stderr
    md = (lbws_and_worker["tmp"] / "rehearsal" / "REHEARSAL.md").read_text()
    assert "the plan PASSES" in md
    patches = md.split("## Retain patches through the gate")[1].split("## Teardown")[0]
    handed = (f"{WL_APP}-root-zones", f"{WL_ENV_STACK}-imports", f"{WL_ENV_STACK}-imported-alb", WL_ENV_STACK,
              WL_LBWS, WL_WORKER)
    for stack in handed:
        assert f"- {stack}: the gate passed (" in patches, (stack, patches)
        assert re.search(rf"- {stack}: the account's patch \(SHA-256 \w+\).* is byte for byte the patch of the twin's "
                         r"deployed template \(SHA-256 \w+\)", patches), (stack, patches)
    # The LBWS names the root zone, the imported ALB's listeners and security groups by the
    # account's ids: its patch was handed to the twin with the same ids mapped.
    mapped = re.search(rf"- {WL_LBWS}: the account's patch \(SHA-256 (\w+)\), with the (\d+) id\(s\) its deploy mapped to "
                       r"the twin's mapped the same way \((.*)\) is byte for byte the patch of the twin's deployed "
                       r"template \(SHA-256 (\w+)\)", patches)
    assert mapped, patches
    manifest = json.loads((lbws_and_worker["out"] / "manifest.json").read_text())
    entry = next(s for s in manifest["stacks"] if s["name"] == WL_LBWS)
    assert mapped.group(1) == entry["retain_patch"]["sha256"] != mapped.group(4)
    # One zone, the two listeners and the four security groups.
    assert mapped.group(3).count(" → ") == int(mapped.group(2)) == 7, mapped.group(3)
    assert ":listener/app/" in mapped.group(3) and re.search(r"Z\w+ → Z\w+", mapped.group(3))
    teardown = md.split("## Teardown")[1].split("## Proof")[0]
    for stack in handed:
        assert f"- {stack}: DELETE_COMPLETE" in teardown, teardown
    proof = md.split("## Proof")[1].split("## What a plain DeleteStack")[0]
    count = re.search(r"after teardown: (\d+) of (\d+)\.", proof)
    assert count and count.group(1) == count.group(2) and int(count.group(1)) >= 100, proof
    assert "**no**" not in proof
    for how in ("DescribeScalingPolicies (", "DescribeScalableTargets (", "DescribeAlarms (", "GetPolicy (",
                "GetTopicAttributes (", "GetQueueAttributes ("):
        assert how in proof, how
    assert "(none may be a Delete):\n\n- none" in proof, proof
    assert "Out-of-band objects gone (none may be):\n\n- none" in proof, proof


def test_lbws_and_worker_careless_delete_destroys_the_alb_the_certificate_and_the_records(cumulo, lbws_and_worker):
    """The plain DeleteStack a careless user would run, on a second twin: the load balancer
    goes with its stack, the environment's certificate and delegation handlers run their
    Deletes and take the certificate, its validation record and the NS delegation, and the
    LBWS's alias record goes; the account keeps all of them."""
    md = (lbws_and_worker["tmp"] / "rehearsal" / "REHEARSAL.md").read_text()
    careless = md.split("## What a plain DeleteStack would destroy")[1]
    destroyed = careless.split("Stack resources destroyed:")[1].split("Stack resources that survived:")[0]
    for logical, kind in (("Lb", "AWS::ElasticLoadBalancingV2::LoadBalancer"),
                          ("Https", "AWS::ElasticLoadBalancingV2::Listener"),
                          ("Http", "AWS::ElasticLoadBalancingV2::Listener")):
        assert f"- {WL_ENV_STACK}-imported-alb/{logical} ({kind}) arn:aws:elasticloadbalancing:" in destroyed, logical
    assert re.search(rf"- {WL_ENV_STACK}/HTTPSCert \(Custom::CertificateValidationFunction\) arn:aws:acm:\S+ "
                     r"\(custom resource: its Delete handler ran\)", destroyed), destroyed
    assert re.search(rf"- {WL_LBWS}/LoadBalancerDNSAliasZ\w+ \(AWS::Route53::RecordSetGroup\)", destroyed), destroyed
    requests = careless.split("Custom-resource handler requests the deletes sent:")[1].split("Out-of-band")[0]
    for logical, kind in (("HTTPSCert", "CertificateValidationFunction"), ("DelegateDNSAction", "DNSDelegationFunction")):
        assert f"- Delete {WL_ENV_STACK}/{logical} (Custom::{kind})" in requests, requests
    for stack in (WL_LBWS, WL_WORKER):
        assert f"- Delete {stack}/EnvControllerAction (Custom::EnvControllerFunction)" in requests, requests
    # Both workloads' env-controllers ran their Deletes but changed no environment parameter:
    # the environment lost nothing until its own delete.
    cascades = careless.split("lost during another's delete (a Delete handler updating it):")[1].split("Out-of-band")[0]
    assert cascades.strip() == "- none", cascades
    gone = careless.split("Out-of-band objects destroyed:")[1]
    domain = f"{WL_ENV}.{WL_APP}.example.com"
    assert re.search(rf"- certificate {domain} \(arn:aws:acm:", gone), gone
    assert f"- record {domain}. NS in {WL_APP}.example.com." in gone, gone
    assert re.search(rf"- record _\w+\.{re.escape(domain)}\. CNAME in {re.escape(domain)}\.", gone), gone
    assert "- record example.com. A in example.com." in gone, gone
    # The account still has its certificate, delegation and alias record.
    certs = cumulo.client("acm").list_certificates()["CertificateSummaryList"]
    assert any(c["DomainName"] == domain for c in certs), certs
    r53 = cumulo.client("route53")
    zones = [z["Id"] for z in r53.list_hosted_zones_by_name(DNSName=f"{WL_APP}.example.com.")["HostedZones"]
             if z["Name"] == f"{WL_APP}.example.com."]
    records = [r for z in zones for r in r53.list_resource_record_sets(HostedZoneId=z)["ResourceRecordSets"]]
    assert any(r["Name"] == f"{domain}." and r["Type"] == "NS" for r in records), records


def test_lbws_and_worker_rehearsal_maps_zone_ids_to_the_twins(lbws_and_worker):
    """The LBWS's alias record names the root zone by its account id: the twin's zone of that
    name is used, and REHEARSAL.md says which; the twin is built up to the LBWS."""
    md = (lbws_and_worker["tmp"] / "rehearsal" / "REHEARSAL.md").read_text()
    assert re.search(rf"- {WL_LBWS}: the ids it names literally \(hosted zones, EC2 ids, load balancer ARNs\) are the twin's: "
                     r"Z\w+ → Z\w+", md), md
    assert "No hosted zone found" not in md and "the twin could not be built" not in md
    assert (f"Stacks deployed, in order: {WL_APP}-root-zones, {WL_APP}-infrastructure-roles, {WL_ENV_STACK}, "
            f"{WL_ENV_STACK}-imported-alb, {WL_ENV_STACK}-imports, {WL_WORKER}, {WL_LBWS}.") in md
