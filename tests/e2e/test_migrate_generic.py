"""Issue 19's chain for stacks that are not Copilot's, against `cumulo serve` as the account:
a plain hand-written stack deployed with `aws cloudformation deploy`, and a CDK app deployed with
`cdk deploy` (CDK's own Custom::S3AutoDeleteObjects, whose handler is an asset in the bootstrap
bucket, empties its bucket on delete). Each goes inventory -> report -> generate -> rehearse:
fates per resource, policy-only patches (`migrate check --template-diff`), Terraform that
terraform's own parser accepts with every import id naming a live resource, a rehearsal that
passes with no handler run, and the careless DeleteStack rehearsal showing what the handler
destroyed."""
import json
import os
import uuid

import pytest

from cdk_cli import ACCOUNT_ENV, Cdk, ensure_app
from conftest import ROOT
from migrate_helpers import imports_live, migrate, rehearse, take_inventory, terraform_fmt

CDK_APP = ROOT / "tests" / "cdk-migrate-app"

PLAIN = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Name: {Type: String}
Resources:
  Data:
    Type: AWS::S3::Bucket
    Properties: {BucketName: !Sub "${Name}-data"}
  DataPolicy:
    Type: AWS::S3::BucketPolicy
    Properties:
      Bucket: !Ref Data
      PolicyDocument:
        Version: "2012-10-17"
        Statement: [{Effect: Deny, Principal: "*", Action: "s3:*", Resource: !Sub "${Data.Arn}/*",
                     Condition: {Bool: {"aws:SecureTransport": "false"}}}]
  Jobs:
    Type: AWS::SQS::Queue
    Properties: {QueueName: !Sub "${Name}-jobs"}
  Events:
    Type: AWS::SNS::Topic
    Properties: {TopicName: !Sub "${Name}-events"}
  EventsToJobs:
    Type: AWS::SNS::Subscription
    Properties: {TopicArn: !Ref Events, Protocol: sqs, Endpoint: !GetAtt Jobs.Arn}
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${Name}-items"
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: pk, AttributeType: S}]
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
  Logs:
    Type: AWS::Logs::LogGroup
    Properties: {LogGroupName: !Sub "/${Name}/worker", RetentionInDays: 7}
  Role:
    Type: AWS::IAM::Role
    Properties:
      RoleName: !Sub "${Name}-fn"
      AssumeRolePolicyDocument:
        Version: "2012-10-17"
        Statement: [{Effect: Allow, Principal: {Service: lambda.amazonaws.com}, Action: "sts:AssumeRole"}]
  Cleaner:
    Type: AWS::Lambda::Function
    Properties:
      FunctionName: !Sub "${Name}-cleaner"
      Runtime: python3.12
      Handler: index.handler
      Timeout: 60
      Role: !GetAtt Role.Arn
      Code:
        ZipFile: |
          import json, urllib.request, boto3
          def handler(event, context):
              bucket = event["ResourceProperties"]["BucketName"]
              if event["RequestType"] == "Delete":
                  s3 = boto3.client("s3")
                  for o in s3.list_objects_v2(Bucket=bucket).get("Contents", []):
                      s3.delete_object(Bucket=bucket, Key=o["Key"])
              body = json.dumps({"Status": "SUCCESS", "PhysicalResourceId": "cleaner-" + bucket,
                                 "StackId": event["StackId"], "RequestId": event["RequestId"],
                                 "LogicalResourceId": event["LogicalResourceId"]})
              urllib.request.urlopen(urllib.request.Request(event["ResponseURL"], data=body.encode(),
                                                            method="PUT", headers={"Content-Type": ""}))
  EmptyOnDelete:
    Type: Custom::EmptyOnDelete
    Properties: {ServiceToken: !GetAtt Cleaner.Arn, BucketName: !Ref Data}
"""


def fates(report_md):
    """`logical id -> fate` from the report's resource table (its first row of each id)."""
    found = {}
    for line in report_md.splitlines():
        if line.startswith("| ") and ("AWS::" in line or "Custom::" in line):
            cells = [c.strip() for c in line.split("|")[1:-1]]
            found.setdefault(cells[0], cells[3])
    return found


def chain(cumulo, tmp_path, stack):
    """inventory -> report -> generate -> template-diff -> terraform -> rehearse, asserting each
    step; the inventory, report, generated dir and the rehearsal's REHEARSAL.md."""
    proc, inventory = take_inventory(cumulo, tmp_path, "--stack", stack)
    assert proc.returncode == 0, proc.stderr
    report = tmp_path / "REPORT.md"
    proc = migrate("report", str(inventory), "-o", str(report))
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    gen = migrate("generate", str(inventory), "--out", str(out))
    assert gen.returncode == 0, gen.stdout + gen.stderr
    # The patch differs from the deployed template in policy lines only, proved by the gate.
    deployed = tmp_path / "deployed.template"
    deployed.write_text(json.loads(inventory.read_text())["stacks"][0]["template"])
    patch = out / "retain-patches" / f"{stack}.yml"
    diff = migrate("check", "--template-diff", str(deployed), str(patch))
    assert diff.returncode == 0, diff.stdout + diff.stderr
    # Terraform's own parser accepts every file (fmt parses offline, with no provider), and
    # every import id names a live resource.
    terraform_fmt(out, required=True)
    manifest = json.loads((out / "manifest.json").read_text())
    assert imports_live(cumulo, manifest["imports"]) == len(manifest["imports"])
    done = rehearse(inventory, tmp_path / "rehearsal")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "custom-resource Delete requests on the patched twin: 0" in done.stdout
    md = (tmp_path / "rehearsal" / "REHEARSAL.md").read_text()
    return inventory, report.read_text(), patch, manifest, md, done.stdout


@pytest.fixture(scope="module")
def plain(cumulo, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("plain")
    name = f"gen{uuid.uuid4().hex[:8]}"
    stack = f"{name}-plain"
    (tmp / "plain.yml").write_text(PLAIN)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(tmp / "plain.yml"),
               "--parameter-overrides", f"Name={name}", "--capabilities", "CAPABILITY_NAMED_IAM")
    cumulo.client("s3").put_object(Bucket=f"{name}-data", Key="keep/precious.txt", Body=b"precious")
    return name, stack


def test_a_plain_stack_through_the_whole_chain(cumulo, tmp_path, plain):
    name, stack = plain
    inventory, report, patch, manifest, md, _ = chain(cumulo, tmp_path, stack)
    # The data resources are imported; the custom resource, its handler function and the role
    # only the handler uses are retained and left to remove by hand, and the handler (code
    # cumulo does not know) is treated as destructive.
    got = fates(report)
    data = ["Data", "DataPolicy", "Jobs", "Events", "EventsToJobs", "Table", "Logs"]
    assert got == {**{logical: "import" for logical in data},
                   "Role": "manual-cleanup", "Cleaner": "manual-cleanup", "EmptyOnDelete": "manual-cleanup"}, got
    assert "| EmptyOnDelete | Custom::EmptyOnDelete | " + f"{name}-cleaner | unknown | unknown code: treat its Delete as destructive" in report
    assert sorted(i["logical_id"] for i in manifest["imports"]) == sorted(data)
    # Only policy lines were added to the deployed template.
    deployed = json.loads(inventory.read_text())["stacks"][0]["template"].splitlines()
    added = [line for line in patch.read_text().splitlines() if line not in deployed]
    assert added and all(line.strip() in ("DeletionPolicy: Retain", "UpdateReplacePolicy: Retain") for line in added)
    # The rehearsal passes; the careless DeleteStack ran the handler, which emptied the bucket.
    assert "the plan PASSES" in md
    patched, careless = md.split("## What a plain DeleteStack would destroy")
    assert "Out-of-band objects gone (none may be):\n\n- none" in patched.split("## Proof")[1], patched
    assert f"- Delete {stack}/EmptyOnDelete (Custom::EmptyOnDelete)" in careless, careless
    gone = careless.split("Out-of-band objects destroyed:")[1]
    assert f"object s3://{name}-data/" in gone, gone
    # The account is untouched.
    assert cumulo.client("s3").get_object(Bucket=f"{name}-data", Key="keep/precious.txt")["Body"].read() == b"precious"
    status = cumulo.client("cloudformation").describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"]
    assert status == "CREATE_COMPLETE"


@pytest.fixture(scope="module")
def cdk_stack(cumulo, tmp_path_factory):
    ensure_app()
    link = CDK_APP / "node_modules"
    if not link.exists():
        os.symlink("../cdk-serve-app/node_modules", link)
    tmp = tmp_path_factory.mktemp("cdk-migrate")
    name = f"cdk{uuid.uuid4().hex[:8]}"
    cdk = Cdk(cumulo, "localhost", tmp / "cdk.out", app=f"node {CDK_APP / 'app.js'}")
    cdk("bootstrap", ACCOUNT_ENV)
    cdk("deploy", "--require-approval", "never", "-c", f"name={name}")
    s3 = cumulo.client("s3")
    for key in ("a.txt", "b/c.txt"):
        s3.put_object(Bucket=f"{name}-data", Key=key, Body=key.encode())
    return name, "CdkMigrate"


def test_a_cdk_stack_through_the_whole_chain(cumulo, tmp_path, cdk_stack):
    name, stack = cdk_stack
    inventory, report, patch, manifest, md, printed = chain(cumulo, tmp_path, stack)
    inv = json.loads(inventory.read_text())
    # The handler of CDK's auto-delete custom resource is an asset in the bootstrap bucket: the
    # inventory records where, resolved for the account and region, and the rehearsal runs it.
    custom = [c for s in inv["stacks"] for c in s["custom_resources"]]
    auto = next(c for c in custom if c["resource_type"] == "Custom::S3AutoDeleteObjects")
    code = auto["function"]["code"]
    assert code["s3_bucket"] == "cdk-hnb659fds-assets-000000000000-us-east-1", code
    assert code["s3_key"].endswith(".zip"), code
    # The handle and its function are cleaned up by hand; the provider's role stays imported,
    # since the imported bucket policy grants it.
    got = fates(report)
    resources = {r["logical_id"]: r["resource_type"] for r in inv["stacks"][0]["resources"]}
    handler = next(l for l, t in resources.items() if t == "AWS::Lambda::Function" and "AutoDelete" in l)
    role = next(l for l, t in resources.items() if t == "AWS::IAM::Role" and "AutoDelete" in l)
    assert (got[auto["logical_id"]], got[handler], got[role]) == ("manual-cleanup", "manual-cleanup", "import"), got
    imported = {i["logical_id"] for i in manifest["imports"]}
    for resource_type in ("AWS::S3::Bucket", "AWS::S3::BucketPolicy", "AWS::SQS::Queue", "AWS::Lambda::Function"):
        assert any(t == resource_type and l in imported for l, t in resources.items()), resource_type
    assert f"/{handler} (s3://{code['s3_bucket']}/{code['s3_key']}): code read from GetFunction's Code.Location" in printed, printed
    assert "the plan PASSES" in md
    patched, careless = md.split("## What a plain DeleteStack would destroy")
    proof = patched.split("## Proof")[1]
    assert "(none may be a Delete):\n\n- none" in proof, proof
    assert "Out-of-band objects gone (none may be):\n\n- none" in proof, proof
    # The careless delete ran CDK's handler from its asset, which emptied the bucket.
    assert f"- Delete {stack}/{auto['logical_id']} (Custom::S3AutoDeleteObjects)" in careless, careless
    gone = careless.split("Out-of-band objects destroyed:")[1]
    assert f"object s3://{name}-data/" in gone, gone
    # The account is untouched.
    assert sorted(o["Key"] for o in cumulo.client("s3").list_objects_v2(Bucket=f"{name}-data")["Contents"]) == [
        "a.txt", "b/c.txt"]
