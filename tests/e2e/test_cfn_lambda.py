"""CloudFormation's Lambda resource types end to end: a stack with a function (inline code and
S3 code), version, alias, permission, URL, layer version and SQS event source mapping, created,
updated in place, replaced and deleted, checked through Lambda's own API after each phase."""
import io
import json
import uuid
import zipfile

import botocore.exceptions
import pytest

WAIT = {"Delay": 1, "MaxAttempts": 120}
ROLE = "arn:aws:iam::000000000000:role/lambda-role"


def uid():
    return uuid.uuid4().hex[:8]


def zip_of(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return buf.getvalue()


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


@pytest.fixture(scope="module")
def lam(cumulo):
    return cumulo.client("lambda")


def outputs(cfn, name):
    s = cfn.describe_stacks(StackName=name)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in s.get("Outputs", [])}


def deploy(cfn, name, template, create):
    body = json.dumps(template)
    if create:
        cfn.create_stack(StackName=name, TemplateBody=body)
        cfn.get_waiter("stack_create_complete").wait(StackName=name, WaiterConfig=WAIT)
    else:
        cfn.update_stack(StackName=name, TemplateBody=body)
        cfn.get_waiter("stack_update_complete").wait(StackName=name, WaiterConfig=WAIT)
    return outputs(cfn, name)


def invoke(lam, name, **kw):
    r = lam.invoke(FunctionName=name, Payload=b"{}", **kw)
    assert "FunctionError" not in r
    return json.loads(r["Payload"].read())


def template(code, timeout, fn_name=None, queue_name="q", alias="live"):
    fn_props = {
        "Runtime": "python3.11",
        "Handler": "index.handler",
        "Role": ROLE,
        "Timeout": timeout,
        "Environment": {"Variables": {"STAGE": "one"}},
        "Code": {"ZipFile": code},
        "Tags": [{"Key": "owner", "Value": "cfn"}],
    }
    if fn_name:
        fn_props["FunctionName"] = fn_name
    return {
        "Resources": {
            "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": queue_name}},
            "Fn": {"Type": "AWS::Lambda::Function", "Properties": fn_props},
            "Ver": {"Type": "AWS::Lambda::Version", "Properties": {"FunctionName": {"Ref": "Fn"}}},
            "Live": {
                "Type": "AWS::Lambda::Alias",
                "Properties": {
                    "FunctionName": {"Ref": "Fn"},
                    "Name": alias,
                    "FunctionVersion": {"Fn::GetAtt": ["Ver", "Version"]},
                },
            },
            "Perm": {
                "Type": "AWS::Lambda::Permission",
                "Properties": {
                    "FunctionName": {"Fn::GetAtt": ["Fn", "Arn"]},
                    "Action": "lambda:InvokeFunction",
                    "Principal": "sns.amazonaws.com",
                },
            },
            "FnUrl": {
                "Type": "AWS::Lambda::Url",
                "Properties": {"TargetFunctionArn": {"Fn::GetAtt": ["Fn", "Arn"]}, "AuthType": "NONE"},
            },
            "Mapping": {
                "Type": "AWS::Lambda::EventSourceMapping",
                "Properties": {
                    "FunctionName": {"Ref": "Fn"},
                    "EventSourceArn": {"Fn::GetAtt": ["Queue", "Arn"]},
                    "BatchSize": 5,
                    "Enabled": False,
                },
            },
        },
        "Outputs": {
            "Name": {"Value": {"Ref": "Fn"}},
            "Arn": {"Value": {"Fn::GetAtt": ["Fn", "Arn"]}},
            "Version": {"Value": {"Fn::GetAtt": ["Ver", "Version"]}},
            "VersionRef": {"Value": {"Ref": "Ver"}},
            "Alias": {"Value": {"Ref": "Live"}},
            "Perm": {"Value": {"Ref": "Perm"}},
            "Url": {"Value": {"Fn::GetAtt": ["FnUrl", "FunctionUrl"]}},
            "Mapping": {"Value": {"Ref": "Mapping"}},
        },
    }


CODE_V1 = "import os\ndef handler(e, c):\n    return ['v1', os.environ['STAGE']]\n"
CODE_V2 = "import os\ndef handler(e, c):\n    return ['v2', os.environ['STAGE']]\n"


def test_function_stack_lifecycle(cfn, lam):
    stack = f"fn-{uid()}"
    q = f"q-{uid()}"
    out = deploy(cfn, stack, template(CODE_V1, 5, queue_name=q), create=True)
    name = out["Name"]
    assert name.startswith(f"{stack}-Fn-")
    assert out["Arn"] == f"arn:aws:lambda:us-east-1:000000000000:function:{name}"
    cfg = lam.get_function_configuration(FunctionName=name)
    assert cfg["State"] == "Active" and cfg["Timeout"] == 5
    assert lam.list_tags(Resource=out["Arn"])["Tags"]["owner"] == "cfn"
    assert invoke(lam, name) == ["v1", "one"]
    assert out["Version"] == "1" and out["VersionRef"] == f"{out['Arn']}:1"
    assert out["Alias"] == f"{out['Arn']}:live"
    assert lam.get_alias(FunctionName=name, Name="live")["FunctionVersion"] == "1"
    policy = json.loads(lam.get_policy(FunctionName=name)["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == [out["Perm"]]
    assert lam.get_function_url_config(FunctionName=name)["FunctionUrl"] == out["Url"]
    m = lam.get_event_source_mapping(UUID=out["Mapping"])
    assert m["BatchSize"] == 5 and m["State"] == "Disabled"

    # In place: code and configuration change, the function (and its name) stays.
    tpl = template(CODE_V2, 8, queue_name=q)
    tpl["Resources"]["Fn"]["Properties"]["Environment"]["Variables"]["STAGE"] = "two"
    tpl["Resources"]["Mapping"]["Properties"]["BatchSize"] = 7
    out2 = deploy(cfn, stack, tpl, create=False)
    assert out2["Name"] == name
    assert lam.get_function_configuration(FunctionName=name)["Timeout"] == 8
    assert invoke(lam, name) == ["v2", "two"]
    assert lam.get_event_source_mapping(UUID=out["Mapping"])["BatchSize"] == 7

    # Replacement: FunctionName is createOnly (and so the alias, custom-named, is renamed, as
    # CloudFormation requires of a custom-named resource it must replace).
    new_name = f"named-{uid()}"
    out3 = deploy(cfn, stack, template(CODE_V2, 8, fn_name=new_name, queue_name=q, alias="next"),
                  create=False)
    assert out3["Name"] == new_name
    assert invoke(lam, new_name) == ["v2", "one"]
    assert invoke(lam, new_name, Qualifier="next") == ["v2", "one"]
    assert lam.get_event_source_mapping(UUID=out3["Mapping"])["FunctionArn"].endswith(new_name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        lam.get_function(FunctionName=name)
    assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"

    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=WAIT)
    with pytest.raises(botocore.exceptions.ClientError):
        lam.get_function(FunctionName=new_name)
    with pytest.raises(botocore.exceptions.ClientError):
        lam.get_event_source_mapping(UUID=out3["Mapping"])


def test_s3_code_and_layer_version(cfn, lam, cumulo):
    s3 = cumulo.client("s3")
    bucket = f"code-{uid()}"
    s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="fn.zip", Body=zip_of(
        {"main.py": "import shared\ndef run(e, c):\n    return shared.VALUE\n"}))
    s3.put_object(Bucket=bucket, Key="layer.zip", Body=zip_of({"python/shared.py": "VALUE = 'layered'\n"}))
    stack = f"s3fn-{uid()}"
    tpl = {
        "Resources": {
            "Layer": {
                "Type": "AWS::Lambda::LayerVersion",
                "Properties": {
                    "Content": {"S3Bucket": bucket, "S3Key": "layer.zip"},
                    "CompatibleRuntimes": ["python3.11"],
                },
            },
            "Fn": {
                "Type": "AWS::Lambda::Function",
                "Properties": {
                    "Runtime": "python3.11",
                    "Handler": "main.run",
                    "Role": ROLE,
                    "Code": {"S3Bucket": bucket, "S3Key": "fn.zip"},
                    "Layers": [{"Ref": "Layer"}],
                },
            },
        },
        "Outputs": {"Name": {"Value": {"Ref": "Fn"}}, "Layer": {"Value": {"Ref": "Layer"}}},
    }
    out = deploy(cfn, stack, tpl, create=True)
    assert ":layer:" in out["Layer"]
    assert lam.get_function_configuration(FunctionName=out["Name"])["Layers"][0]["Arn"] == out["Layer"]
    assert invoke(lam, out["Name"]) == "layered"
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=WAIT)
    layer_name = out["Layer"].split(":")[6]
    assert lam.list_layer_versions(LayerName=layer_name)["LayerVersions"] == []


def test_unsupported_property_fails_the_resource(cfn):
    stack = f"vpc-{uid()}"
    tpl = {
        "Resources": {
            "Fn": {
                "Type": "AWS::Lambda::Function",
                "Properties": {
                    "Runtime": "python3.11",
                    "Handler": "index.handler",
                    "Role": ROLE,
                    "Code": {"ZipFile": CODE_V1},
                    "VpcConfig": {"SubnetIds": ["subnet-1"], "SecurityGroupIds": ["sg-1"]},
                },
            }
        }
    }
    cfn.create_stack(StackName=stack, TemplateBody=json.dumps(tpl))
    with pytest.raises(botocore.exceptions.WaiterError):
        cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    events = cfn.describe_stack_events(StackName=stack)["StackEvents"]
    reasons = [e.get("ResourceStatusReason", "") for e in events if e["LogicalResourceId"] == "Fn"]
    assert any("VpcConfig" in r for r in reasons)
    stack_id = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)


KEY = "arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555"


def test_tracing_config_active_is_stored_and_reported(cfn, lam):
    name = f"trace-{uid()}"
    props = {"Runtime": "python3.11", "Handler": "index.handler", "Role": ROLE,
             "Code": {"ZipFile": "def handler(e, c):\n    return e\n"}, "TracingConfig": {"Mode": "Active"},
             "KmsKeyArn": KEY}
    t = {"Resources": {"Fn": {"Type": "AWS::Lambda::Function", "Properties": props}},
         "Outputs": {"Name": {"Value": {"Ref": "Fn"}}}}
    out = deploy(cfn, name, t, create=True)
    config = lam.get_function_configuration(FunctionName=out["Name"])
    assert (config["TracingConfig"], config["KMSKeyArn"]) == ({"Mode": "Active"}, KEY)
    del props["TracingConfig"]
    del props["KmsKeyArn"]
    deploy(cfn, name, t, create=False)
    config = lam.get_function_configuration(FunctionName=out["Name"])
    assert config["TracingConfig"] == {"Mode": "PassThrough"} and "KMSKeyArn" not in config
    cfn.delete_stack(StackName=name)
    cfn.get_waiter("stack_delete_complete").wait(StackName=name, WaiterConfig=WAIT)
