"""CloudFormation transforms end to end: a macro registered by an AWS::CloudFormation::Macro stack
(a Python Lambda function), used in the Transform section and through Fn::Transform by a stack
deployed with `aws cloudformation deploy --capabilities CAPABILITY_AUTO_EXPAND`; AWS::Include
from an S3 object; GetTemplate's Original and Processed stages; the failure paths worded as AWS
words them; and `cumulo validate` accepting what ValidateTemplate accepts."""
import json
import subprocess
import uuid

import botocore.exceptions
import pytest
import yaml

from conftest import BIN

WAIT = {"Delay": 1, "MaxAttempts": 120}
ROLE = "arn:aws:iam::000000000000:role/macro-role"

# The macro: adds a tag to every bucket of a template-level fragment; at an Fn::Transform site it
# fills the map with the parameters it was given; "Fail" answers failure, "Garbled" nonsense. It
# records each event it saw in an SSM parameter so the test can check the request's shape.
MACRO_CODE = """
import json, os, boto3

def handler(event, context):
    boto3.client("ssm", endpoint_url=os.environ.get("AWS_ENDPOINT_URL")).put_parameter(
        Name="/macro/last/" + ("site" if event["params"] else "template"),
        Value=json.dumps(event), Type="String", Overwrite=True)
    mode = event["templateParameterValues"].get("Mode", "ok")
    if mode == "Fail":
        return {"requestId": event["requestId"], "status": "failure", "errorMessage": "told to fail"}
    if mode == "Garbled":
        return {"requestId": "not-the-request", "status": "success", "fragment": {}}
    fragment = event["fragment"]
    if event["params"]:
        fragment = dict(fragment, **{k: v for k, v in event["params"].items()})
    else:
        for r in fragment["Resources"].values():
            if r["Type"] == "AWS::SQS::Queue":
                r.setdefault("Properties", {})["Tags"] = [{"Key": "by", "Value": "macro"}]
    return {"requestId": event["requestId"], "status": "SUCCESS", "fragment": fragment}
"""


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


@pytest.fixture(scope="module")
def macro(cumulo, cfn):
    """The name of a macro registered by its own stack."""
    name = f"Tagger{uid()}"
    template = {
        "Resources": {
            "Fn": {
                "Type": "AWS::Lambda::Function",
                "Properties": {
                    "Runtime": "python3.11",
                    "Handler": "index.handler",
                    "Role": ROLE,
                    "Timeout": 30,
                    "Code": {"ZipFile": MACRO_CODE},
                },
            },
            "Macro": {
                "Type": "AWS::CloudFormation::Macro",
                "Properties": {"Name": name, "FunctionName": {"Fn::GetAtt": ["Fn", "Arn"]}},
            },
        }
    }
    stack = f"macro-{uid()}"
    cfn.create_stack(StackName=stack, TemplateBody=json.dumps(template))
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    return name


def user_template(macro):
    return {
        "Transform": [macro],
        "Parameters": {"Mode": {"Type": "String", "Default": "ok"}},
        "Resources": {
            "Queue": {
                "Type": "AWS::SQS::Queue",
                "Properties": {
                    "Fn::Transform": {"Name": macro, "Parameters": {"DelaySeconds": "7"}},
                },
            },
        },
        "Outputs": {"Url": {"Value": {"Ref": "Queue"}}},
    }


def deploy(cumulo, tmp_path, stack, template, *extra, check=True):
    path = tmp_path / "template.json"
    path.write_text(json.dumps(template))
    return cumulo.aws(
        "cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path),
        "--capabilities", "CAPABILITY_AUTO_EXPAND", *extra, check=check,
    )


def test_macro_runs_in_both_positions_and_processed_stage_shows_the_result(cumulo, cfn, macro, tmp_path):
    stack = f"uses-{uid()}"
    deploy(cumulo, tmp_path, stack, user_template(macro))
    s = cfn.describe_stacks(StackName=stack)["Stacks"][0]
    assert s["StackStatus"] == "CREATE_COMPLETE"
    url = next(o["OutputValue"] for o in s["Outputs"] if o["OutputKey"] == "Url")
    sqs = cumulo.client("sqs")
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["DelaySeconds"])["Attributes"]
    assert attrs["DelaySeconds"] == "7"  # from the Fn::Transform site's parameters
    assert sqs.list_queue_tags(QueueUrl=url)["Tags"] == {"by": "macro"}  # the template-level run

    processed = cfn.get_template(StackName=stack, TemplateStage="Processed")["TemplateBody"]
    processed = processed if isinstance(processed, dict) else json.loads(processed)
    assert "Transform" not in processed
    assert processed["Resources"]["Queue"]["Properties"] == {
        "DelaySeconds": "7", "Tags": [{"Key": "by", "Value": "macro"}],
    }
    original = cfn.get_template(StackName=stack, TemplateStage="Original")["TemplateBody"]
    original = original if isinstance(original, dict) else json.loads(original)
    assert original == user_template(macro)

    # The request events, as AWS documents them.
    ssm = cumulo.client("ssm")
    site = json.loads(ssm.get_parameter(Name="/macro/last/site")["Parameter"]["Value"])
    assert site["params"] == {"DelaySeconds": "7"}
    assert site["fragment"] == {}
    assert site["transformId"] == f"000000000000::{macro}"
    assert site["region"] == "us-east-1" and site["accountId"] == "000000000000"
    assert site["templateParameterValues"] == {"Mode": "ok"}
    whole = json.loads(ssm.get_parameter(Name="/macro/last/template")["Parameter"]["Value"])
    assert "Transform" not in whole["fragment"]
    assert whole["fragment"]["Resources"]["Queue"]["Properties"] == {"DelaySeconds": "7"}
    assert whole["params"] == {}


def test_create_stack_with_a_macro_needs_auto_expand(cfn, macro):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_stack(StackName=f"noexp-{uid()}", TemplateBody=json.dumps(user_template(macro)))
    assert e.value.response["Error"]["Code"] == "InsufficientCapabilitiesException"
    assert e.value.response["Error"]["Message"] == "Requires capabilities : [CAPABILITY_AUTO_EXPAND]"


@pytest.mark.parametrize("mode,message", [
    ("Fail", "Transform 000000000000::{macro} failed with: told to fail"),
    ("Garbled", "Received malformed response from transform 000000000000::{macro}"),
])
def test_macro_failures_are_reported_as_aws_reports_them(cfn, macro, mode, message):
    stack = f"bad-{uid()}"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_stack(
            StackName=stack, TemplateBody=json.dumps(user_template(macro)),
            Parameters=[{"ParameterKey": "Mode", "ParameterValue": mode}],
            Capabilities=["CAPABILITY_AUTO_EXPAND"],
        )
    assert e.value.response["Error"]["Message"] == message.format(macro=macro)
    with pytest.raises(botocore.exceptions.ClientError):
        cfn.describe_stacks(StackName=stack)


def test_a_change_set_whose_macro_fails_is_failed_and_summary_runs_macros(cfn, macro):
    stack = f"csbad-{uid()}"
    body = json.dumps(user_template(macro))
    # A macro that answers failure: the change set exists, FAILED with AWS's reason.
    out = cfn.create_change_set(StackName=stack, ChangeSetName="c", ChangeSetType="CREATE", TemplateBody=body,
                                Parameters=[{"ParameterKey": "Mode", "ParameterValue": "Fail"}])
    cs = cfn.describe_change_set(ChangeSetName=out["Id"])
    assert (cs["Status"], cs["ExecutionStatus"]) == ("FAILED", "UNAVAILABLE")
    assert cs["StatusReason"] == f"Transform 000000000000::{macro} failed with: told to fail"
    assert [c["ChangeSetName"] for c in cfn.list_change_sets(StackName=stack)["Summaries"]] == ["c"]
    cfn.delete_stack(StackName=stack)
    # GetTemplateSummary summarizes what the macro makes of the template.
    summary = cfn.get_template_summary(TemplateBody=body)
    assert summary["ResourceTypes"] == ["AWS::SQS::Queue"]
    assert summary["DeclaredTransforms"] == [macro]
    assert [p["ParameterKey"] for p in summary["Parameters"]] == ["Mode"]


def test_unknown_macro(cfn):
    template = {"Transform": "NoSuchMacro", "Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_stack(StackName=f"unk-{uid()}", TemplateBody=json.dumps(template),
                         Capabilities=["CAPABILITY_AUTO_EXPAND"])
    assert e.value.response["Error"]["Message"] == "No transform named 000000000000::NoSuchMacro found."
    # GetTemplateSummary runs the transform, so it fails the same way.
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.get_template_summary(TemplateBody=json.dumps(template))
    assert e.value.response["Error"]["Message"] == "No transform named 000000000000::NoSuchMacro found."


def test_include_reads_a_snippet_from_s3_in_both_positions(cumulo, cfn, tmp_path):
    s3 = cumulo.client("s3")
    bucket = f"snippets-{uid()}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="queue.yaml", Body=yaml.safe_dump(
        {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 3}}))
    s3.put_object(Bucket=bucket, Key="outputs.json", Body=json.dumps(
        {"Outputs": {"Url": {"Value": {"Ref": "Included"}}}}))
    template = {
        "Transform": {"Name": "AWS::Include", "Parameters": {"Location": f"s3://{bucket}/outputs.json"}},
        "Parameters": {"Where": {"Type": "String", "Default": f"s3://{bucket}/queue.yaml"}},
        "Resources": {
            "Included": {"Fn::Transform": {"Name": "AWS::Include", "Parameters": {"Location": {"Ref": "Where"}}}},
        },
    }
    stack = f"incl-{uid()}"
    deploy(cumulo, tmp_path, stack, template)
    s = cfn.describe_stacks(StackName=stack)["Stacks"][0]
    url = next(o["OutputValue"] for o in s["Outputs"] if o["OutputKey"] == "Url")
    attrs = cumulo.client("sqs").get_queue_attributes(QueueUrl=url, AttributeNames=["DelaySeconds"])
    assert attrs["Attributes"]["DelaySeconds"] == "3"
    processed = cfn.get_template(StackName=stack, TemplateStage="Processed")["TemplateBody"]
    processed = processed if isinstance(processed, dict) else json.loads(processed)
    assert processed["Resources"]["Included"] == {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 3}}

    # GetTemplateSummary runs the transforms before it summarizes, as AWS does.
    summary = cfn.get_template_summary(TemplateBody=json.dumps(template))
    assert summary["ResourceTypes"] == ["AWS::SQS::Queue"]
    assert summary["DeclaredTransforms"] == ["AWS::Include"]

    # A change set whose transform fails is made, and FAILED with the failure as its reason.
    missing = dict(template, Transform={"Name": "AWS::Include", "Parameters": {"Location": f"s3://{bucket}/nope"}})
    failed_stack = f"incl-{uid()}"
    out = cfn.create_change_set(StackName=failed_stack, ChangeSetName="c", ChangeSetType="CREATE",
                                TemplateBody=json.dumps(missing))
    cs = cfn.describe_change_set(ChangeSetName=out["Id"])
    assert (cs["Status"], cs["ExecutionStatus"], cs["Changes"]) == ("FAILED", "UNAVAILABLE", [])
    assert cs["StatusReason"].startswith("Transform AWS::Include failed with: S3 error:")
    assert cfn.describe_stacks(StackName=failed_stack)["Stacks"][0]["StackStatus"] == "REVIEW_IN_PROGRESS"
    with pytest.raises(botocore.exceptions.ClientError):
        cfn.execute_change_set(ChangeSetName=out["Id"])
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.get_template_summary(TemplateBody=json.dumps(missing))
    assert e.value.response["Error"]["Message"].startswith("Transform AWS::Include failed with: S3 error:")
    cfn.delete_stack(StackName=failed_stack)


def test_template_errors_in_aws_words(cfn):
    def refused(body):
        with pytest.raises(botocore.exceptions.ClientError) as e:
            cfn.validate_template(TemplateBody=body)
        return e.value.response["Error"]["Message"]

    assert refused('{"Resources": {\n "Q": {"Type" "AWS::SQS::Queue"}}}') == \
        "Template format error: JSON not well-formed. (line 2, column 15)"
    assert refused(json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Propertes": {}}}})) == \
        "Invalid template resource property 'Propertes'"
    assert refused(json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}, "Outputs": {"X": {"Description": "d"}}})) == \
        "Template format error: Every Outputs member must contain a Value object"
    assert refused(json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}, "Outputs": {"X": {"Value": None}}})) == \
        "Template format error: [/Outputs/X/Value] 'null' values are not allowed in templates"

    # CreateChangeSet refuses a template that fails validation, as AWS does, and leaves no stack.
    stack = f"badcs-{uid()}"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        cfn.create_change_set(
            StackName=stack, ChangeSetName="c", ChangeSetType="CREATE",
            TemplateBody=json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Propertes": {}}}}))
    assert e.value.response["Error"]["Message"] == "Invalid template resource property 'Propertes'"
    with pytest.raises(botocore.exceptions.ClientError):
        cfn.describe_stacks(StackName=stack)


def test_cumulo_validate_accepts_parameter_keyed_find_in_map_and_macros(tmp_path, macro):
    path = tmp_path / "t.yaml"
    path.write_text("""Parameters:
  Env: {Type: String, Default: none}
Mappings:
  Sizes: {prod: {Delay: '5'}}
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      DelaySeconds: !FindInMap [Sizes, !Ref Env, Delay]
""")
    macro_path = tmp_path / "m.json"
    macro_path.write_text(json.dumps(user_template(macro)))
    run = subprocess.run([str(BIN), "validate", str(path), str(macro_path)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [f"{path}: valid", f"{macro_path}: valid"]
