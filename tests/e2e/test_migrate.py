"""`cumulo migrate`'s retain patch and the offline half of its change-set gate, on a stack
deployed to `cumulo serve` as the account: the deployed template (GetTemplate, Original) is
patched with `cumulo migrate retain-patch`, proved policy-only with `cumulo migrate check
--template-diff`, applied through a change set whose changes are policy-only as AWS plans them,
and then a DeleteStack leaves every resource in place."""
import hashlib
import json
import shutil
import subprocess
import uuid

from conftest import BIN

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


def migrate(*args):
    return subprocess.run([str(BIN), "migrate", *args], capture_output=True, text=True, timeout=60)


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

PLAIN = """\
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
Outputs:
  QueueUrl: {Value: !Ref Queue}
"""


def seal(inventory):
    """The inventory's content hash as `inventory::seal` computes it: SHA-256 of the compact
    JSON (fields in the model's order) with `content_sha256` empty."""
    inventory["content_sha256"] = ""
    canonical = json.dumps(inventory, separators=(",", ":"), ensure_ascii=False).encode()
    inventory["content_sha256"] = hashlib.sha256(canonical).hexdigest()
    return inventory


def take_inventory(cumulo, names):
    """An inventory file of `names` in the model's shape, read through boto3 (the fixture the
    generator is tested on; `cumulo migrate inventory` writes the same shape)."""
    cfn = cumulo.client("cloudformation")
    stacks = []
    for name in names:
        s = cfn.describe_stacks(StackName=name)["Stacks"][0]
        template = cfn.get_template(StackName=name, TemplateStage="Original")["TemplateBody"]
        resources = []
        for r in cfn.list_stack_resources(StackName=name)["StackResourceSummaries"]:
            entry = {"logical_id": r["LogicalResourceId"], "resource_type": r["ResourceType"]}
            if r.get("PhysicalResourceId"):
                entry["physical_id"] = r["PhysicalResourceId"]
            entry["status"] = r["ResourceStatus"]
            entry["live"] = {"state": "not_read", "reason": "test fixture"}
            entry["import_attributes"] = {}
            resources.append(entry)
        stacks.append({
            "name": s["StackName"], "id": s["StackId"], "status": s["StackStatus"],
            "tags": dict(sorted((t["Key"], t["Value"]) for t in s.get("Tags", []))),
            "parameters": [{"key": p["ParameterKey"], "value": p["ParameterValue"], "no_echo": False}
                           for p in s.get("Parameters", [])],
            "outputs": [{"key": o["OutputKey"], "value": o["OutputValue"]} for o in s.get("Outputs", [])],
            "capabilities": s.get("Capabilities", []),
            "termination_protection": bool(s.get("EnableTerminationProtection")),
            "template": template if isinstance(template, str) else json.dumps(template),
            "resources": resources,
            "custom_resources": [],
        })
    return seal({
        "format_version": 1, "account": "000000000000", "region": "us-east-1",
        "taken_at": "2026-12-04T09:00:00Z", "endpoint": cumulo.endpoint, "taken_by": "test_migrate.py",
        "selection": {"kind": "stacks", "names": names}, "stacks": stacks,
        "out_of_band": {"certificates": [], "hosted_zones": []}, "content_sha256": "",
    })


def live(cumulo, tf, import_id):
    """Whether the resource a Terraform import id names answers its service."""
    ec2 = cumulo.client("ec2")
    if tf == "aws_vpc":
        return ec2.describe_vpcs(VpcIds=[import_id])["Vpcs"][0]["VpcId"] == import_id
    if tf == "aws_subnet":
        return ec2.describe_subnets(SubnetIds=[import_id])["Subnets"][0]["SubnetId"] == import_id
    if tf == "aws_security_group":
        return ec2.describe_security_groups(GroupIds=[import_id])["SecurityGroups"][0]["GroupId"] == import_id
    if tf == "aws_security_group_rule":
        group, direction, protocol, low, high, source = import_id.split("_", 5)
        sg = ec2.describe_security_groups(GroupIds=[group])["SecurityGroups"][0]
        rules = sg["IpPermissions" if direction == "ingress" else "IpPermissionsEgress"]
        return any(p["IpProtocol"] == protocol and p["FromPort"] == int(low) and p["ToPort"] == int(high)
                   and any(r["CidrIp"] == source for r in p.get("IpRanges", [])) for p in rules)
    if tf == "aws_s3_bucket":
        return cumulo.client("s3").head_bucket(Bucket=import_id)["ResponseMetadata"]["HTTPStatusCode"] == 200
    if tf == "aws_sqs_queue":
        return "QueueArn" in cumulo.client("sqs").get_queue_attributes(QueueUrl=import_id, AttributeNames=["All"])["Attributes"]
    if tf == "aws_sqs_queue_policy":
        return "Policy" in cumulo.client("sqs").get_queue_attributes(QueueUrl=import_id, AttributeNames=["Policy"])["Attributes"]
    if tf == "aws_sns_topic":
        return cumulo.client("sns").get_topic_attributes(TopicArn=import_id)["Attributes"]["TopicArn"] == import_id
    if tf == "aws_iam_role":
        return cumulo.client("iam").get_role(RoleName=import_id)["Role"]["RoleName"] == import_id
    if tf == "aws_iam_role_policy":
        role, policy = import_id.split(":")
        return cumulo.client("iam").get_role_policy(RoleName=role, PolicyName=policy)["PolicyName"] == policy
    if tf == "aws_cloudwatch_log_group":
        groups = cumulo.client("logs").describe_log_groups(logGroupNamePrefix=import_id)["logGroups"]
        return any(g["logGroupName"] == import_id for g in groups)
    if tf == "aws_route53_zone":
        return cumulo.client("route53").get_hosted_zone(Id=import_id)["HostedZone"]["Id"].endswith(import_id)
    if tf == "aws_route53_record":
        zone, name, kind = import_id.split("_")
        records = cumulo.client("route53").list_resource_record_sets(HostedZoneId=zone)["ResourceRecordSets"]
        return any(r["Name"].rstrip(".") == name and r["Type"] == kind for r in records)
    if tf == "aws_ssm_parameter":
        return cumulo.client("ssm").get_parameter(Name=import_id)["Parameter"]["Name"] == import_id
    raise AssertionError(f"no live check for {tf}")


def unq(value):
    """python-hcl2 keeps a string literal's quotes."""
    return value[1:-1] if isinstance(value, str) and value.startswith('"') else value


def describe_change_set(cumulo, cs_id, path):
    path.write_text(json.dumps(cumulo.aws("cloudformation", "describe-change-set", "--change-set-name", cs_id)))
    return path


def test_generate_terraform_patches_and_the_change_set_gate(cumulo, tmp_path):
    cfn = cumulo.client("cloudformation")
    name = f"tf{uuid.uuid4().hex[:8]}"
    stack = f"{name}-plain"
    source = tmp_path / "plain.yml"
    source.write_text(PLAIN)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(source),
               "--parameter-overrides", f"Name={name}", "--capabilities", "CAPABILITY_NAMED_IAM")
    inventory = tmp_path / "inventory.json"
    inventory.write_text(json.dumps(take_inventory(cumulo, [stack]), ensure_ascii=False))

    out = tmp_path / "out"
    gen = migrate("generate", str(inventory), "--out", str(out))
    assert gen.returncode == 0, gen.stdout + gen.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    imports = manifest["imports"]
    assert sorted(i["logical_id"] for i in imports) == sorted(
        ["Vpc", "Subnet", "Sg", "SgHttps", "Bucket", "Queue", "QueuePolicy", "Topic", "Role", "RolePolicy",
         "Logs", "Zone", "Www", "Setting"])
    assert f"{len(imports)} import(s)" in gen.stdout
    ids = {i["logical_id"]: i["id"] for i in imports}
    assert ids["RolePolicy"] == f"{name}-worker:queue"
    assert ids["SgHttps"].endswith("_ingress_tcp_443_443_10.0.0.0/8")
    assert ids["Www"].endswith(f"_www.{name}.example.com_CNAME")

    # The Terraform parses (python-hcl2, and terraform's own parser through fmt), pins the
    # provider and the account, and every import id names a live resource.
    import hcl2
    parsed = {}
    for tf in (out / "terraform").glob("*.tf"):
        with tf.open() as f:
            parsed[tf.name] = hcl2.load(f)
    assert unq(parsed["versions.tf"]["terraform"][0]["required_providers"][0]["aws"]["version"]) == "5.80.0"
    provider = parsed["providers.tf"]["provider"][0]['"aws"']
    assert unq(provider["region"]) == "us-east-1"
    assert [unq(a) for a in provider["allowed_account_ids"]] == ["000000000000"]
    blocks = parsed[f"{stack}.tf"]
    assert sorted((b["to"], unq(b["id"])) for b in blocks["import"]) == sorted(
        (f"${{{i['to']}}}", i["id"]) for i in imports)
    declared = {f"{unq(t)}.{unq(n)}" for r in blocks["resource"] for t, named in r.items() for n in named}
    assert {i["to"] for i in imports} == declared
    if shutil.which("terraform"):
        fmt = subprocess.run(["terraform", "fmt", "-write=false", "-list=false", str(out / "terraform")],
                             capture_output=True, text=True)
        assert fmt.returncode == 0, fmt.stderr
    for i in imports:
        assert live(cumulo, i["to"].split(".")[0], i["id"]), i
    text = (out / "terraform" / f"{stack}.tf").read_text()
    assert 'value = "$${not a template}"' in text  # template sequences stay literal
    bucket = next(r for r in blocks["resource"] if '"aws_s3_bucket"' in r)
    assert bucket['"aws_s3_bucket"'][f'"{stack}_Bucket"']["lifecycle"][0]["prevent_destroy"] is True
    assert (out / "RUNBOOK.md").read_text().count(f"--stack {stack}") >= 1
    assert manifest["teardown_order"] == [{"stack": stack, "nested": []}]

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

    # Every resource is retained: deleting the stack leaves them for Terraform.
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig={"Delay": 1})
    for i in imports:
        assert live(cumulo, i["to"].split(".")[0], i["id"]), i
