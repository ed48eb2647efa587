"""`cumulo migrate`'s retain patch and the offline half of its change-set gate, on a stack
deployed to `cumulo serve` as the account: the deployed template (GetTemplate, Original) is
patched with `cumulo migrate retain-patch`, proved policy-only with `cumulo migrate check
--template-diff`, applied through a change set whose changes are policy-only as AWS plans them,
and then a DeleteStack leaves every resource in place."""
import json
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
