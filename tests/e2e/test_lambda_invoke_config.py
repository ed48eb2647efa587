"""Lambda's asynchronous invocation settings (Put/Update/Get/Delete/ListFunctionEventInvokeConfig(s))
and AWS::Lambda::EventInvokeConfig: stored and reported per qualifier, validated with the codes and
messages AWS answered (../shared/aws-recordings/lambda_/test_lambda_api.snapshot.json), kept across a
restart, and deployed, updated and deleted through `aws cloudformation deploy`."""
import io
import json
import uuid
import zipfile

import botocore.exceptions
import pytest

ROLE = "arn:aws:iam::000000000000:role/lambda-role"
WAIT = {"Delay": 1, "MaxAttempts": 120}
PREFIX = "arn:aws:lambda:us-east-1:000000000000:function:"
QUEUE = "arn:aws:sqs:us-east-1:000000000000:dead-letters"


def uid():
    return uuid.uuid4().hex[:8]


def make(lam):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("index.js", "exports.handler = async () => ({});\n")
    name = f"fn-{uid()}"
    lam.create_function(FunctionName=name, Runtime="nodejs20.x", Role=ROLE, Handler="index.handler",
                        Code={"ZipFile": buf.getvalue()})
    lam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig=WAIT)
    return name


def error(call, **kw):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        call(**kw)
    err = e.value.response["Error"]
    return err["Code"], err["Message"], e.value.response["ResponseMetadata"]["HTTPStatusCode"]


def shown(config):
    return {k: v for k, v in config.items() if k not in ("ResponseMetadata", "LastModified")}


@pytest.fixture(scope="module")
def lam(cumulo):
    return cumulo.client("lambda")


def test_put_update_get_list_delete(lam):
    name = make(lam)
    lam.publish_version(FunctionName=name)
    lam.create_alias(FunctionName=name, Name="live", FunctionVersion="1")
    other = make(lam)

    got = lam.put_function_event_invoke_config(FunctionName=name, MaximumRetryAttempts=0)
    assert shown(got) == {"FunctionArn": f"{PREFIX}{name}:$LATEST", "MaximumRetryAttempts": 0,
                          "DestinationConfig": {"OnSuccess": {}, "OnFailure": {}}}
    assert got["LastModified"].year >= 2026
    # Put replaces every setting; Update changes only what it is given.
    got = lam.put_function_event_invoke_config(
        FunctionName=name, MaximumEventAgeInSeconds=60,
        DestinationConfig={"OnSuccess": {"Destination": f"{PREFIX}{other}"}, "OnFailure": {"Destination": QUEUE}})
    assert "MaximumRetryAttempts" not in got and got["MaximumEventAgeInSeconds"] == 60
    got = lam.update_function_event_invoke_config(FunctionName=name, MaximumRetryAttempts=1,
                                                  DestinationConfig={"OnSuccess": {}})
    assert shown(got) == {"FunctionArn": f"{PREFIX}{name}:$LATEST", "MaximumRetryAttempts": 1,
                          "MaximumEventAgeInSeconds": 60,
                          "DestinationConfig": {"OnSuccess": {}, "OnFailure": {"Destination": QUEUE}}}
    assert shown(lam.get_function_event_invoke_config(FunctionName=name)) == shown(got)
    assert shown(lam.get_function_event_invoke_config(FunctionName=name, Qualifier="$LATEST")) == shown(got)

    # A version and an alias, by parameter or in the name; a qualifier both ways must agree.
    lam.put_function_event_invoke_config(FunctionName=name, Qualifier="1", MaximumEventAgeInSeconds=120)
    got = lam.put_function_event_invoke_config(FunctionName=f"{name}:live", MaximumRetryAttempts=2)
    assert got["FunctionArn"] == f"{PREFIX}{name}:live"
    assert error(lam.put_function_event_invoke_config, FunctionName=f"{name}:live", Qualifier="1",
                 MaximumRetryAttempts=1) == (
        "InvalidParameterValueException",
        "The derived qualifier from the function name does not match the specified qualifier.", 400)
    listed = lam.list_function_event_invoke_configs(FunctionName=name)["FunctionEventInvokeConfigs"]
    assert [c["FunctionArn"] for c in listed] == [f"{PREFIX}{name}:{q}" for q in ("$LATEST", "1", "live")]

    lam.delete_function_event_invoke_config(FunctionName=name)
    lam.delete_function_event_invoke_config(FunctionName=name, Qualifier="1")
    lam.delete_function_event_invoke_config(FunctionName=name, Qualifier="live")
    assert lam.list_function_event_invoke_configs(FunctionName=name)["FunctionEventInvokeConfigs"] == []
    assert error(lam.get_function_event_invoke_config, FunctionName=name) == (
        "ResourceNotFoundException", f"The function {PREFIX}{name}:$LATEST doesn't have an EventInvokeConfig", 404)
    assert error(lam.delete_function_event_invoke_config, FunctionName=name) == (
        "ResourceNotFoundException", f"The function {PREFIX}{name}:$LATEST doesn't have an EventInvokeConfig", 404)


def test_refusals_change_nothing(lam, cumulo):
    name = make(lam)
    lam.put_function_event_invoke_config(FunctionName=name, MaximumRetryAttempts=1)
    before = shown(lam.get_function_event_invoke_config(FunctionName=name))
    put = lam.put_function_event_invoke_config
    assert error(put, FunctionName=name) == (
        "InvalidParameterValueException", "You must specify at least one of error handling or destination setting.", 400)
    assert error(put, FunctionName="doesnotexist", MaximumRetryAttempts=1) == (
        "ResourceNotFoundException", "The function doesn't exist.", 404)
    assert error(put, FunctionName=name, Qualifier="nosuchalias", MaximumRetryAttempts=1) == (
        "ResourceNotFoundException", "The function doesn't exist.", 404)
    assert error(put, FunctionName=name, DestinationConfig={"OnSuccess": {"Destination": f"{PREFIX}doesnotexist"}}) == (
        "InvalidParameterValueException", f"The destination ARN {PREFIX}doesnotexist is invalid.", 400)
    assert error(put, FunctionName=name, DestinationConfig={"OnSuccess": {"Destination": f"{PREFIX}{name}"}}) == (
        "InvalidParameterValueException", "You can't specify the function as a destination for itself.", 400)
    iam_arn = f"arn:aws:iam:us-east-1:000000000000:function:{name}"
    assert error(put, FunctionName=name, DestinationConfig={"OnSuccess": {"Destination": iam_arn}}) == (
        "InvalidParameterValueException",
        f"The provided destination config DestinationConfig(onSuccess=OnSuccess(destination={iam_arn}), onFailure=null) is invalid.",
        400)
    code, message, status = error(put, FunctionName=name, DestinationConfig={"OnFailure": {"Destination": "arn:aws:_-/!lambda:x"}})
    assert (code, status) == ("ValidationException", 400)
    assert message.startswith("1 validation error detected: Value 'arn:aws:_-/!lambda:x' at 'destinationConfig.onFailure.destination'")
    # Limits botocore would check before sending: sent unchecked, refused by the service.
    unchecked = cumulo.client("lambda", parameter_validation=False).put_function_event_invoke_config
    code, message, _ = error(unchecked, FunctionName=name, MaximumRetryAttempts=3)
    assert code == "ValidationException" and message.endswith("Member must have value less than or equal to 2")
    code, message, _ = error(unchecked, FunctionName=name, MaximumEventAgeInSeconds=59)
    assert code == "ValidationException" and message.endswith("Member must have value greater than or equal to 60")
    assert error(lam.update_function_event_invoke_config, FunctionName="doesnotexist", MaximumRetryAttempts=1) == (
        "ResourceNotFoundException", "The function doesn't exist.", 404)
    assert error(lam.list_function_event_invoke_configs, FunctionName="doesnotexist") == (
        "ResourceNotFoundException", "The function doesn't exist.", 404)
    assert shown(lam.get_function_event_invoke_config(FunctionName=name)) == before


def test_settings_survive_a_restart(fresh_server):
    fresh_server.start()
    lam = fresh_server.client("lambda")
    name = make(lam)
    put = lam.put_function_event_invoke_config(FunctionName=name, MaximumRetryAttempts=0,
                                               DestinationConfig={"OnFailure": {"Destination": QUEUE}})
    fresh_server.stop()
    fresh_server.start()
    got = fresh_server.client("lambda").get_function_event_invoke_config(FunctionName=name)
    assert shown(got) == shown(put) and got["LastModified"] == put["LastModified"]


TEMPLATE = """
Parameters:
  Retries: {Type: Number, Default: 1}
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Statement: [{Effect: Allow, Principal: {Service: lambda.amazonaws.com}, Action: sts:AssumeRole}]
  Target:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      Role: !GetAtt Role.Arn
      Code: {ZipFile: "exports.handler = async () => ({});"}
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: nodejs20.x
      Handler: index.handler
      Role: !GetAtt Role.Arn
      Code: {ZipFile: "exports.handler = async () => ({});"}
  Settings:
    Type: AWS::Lambda::EventInvokeConfig
    Properties:
      FunctionName: !Ref Fn
      Qualifier: $LATEST
      MaximumRetryAttempts: !Ref Retries
      MaximumEventAgeInSeconds: 300
      DestinationConfig:
        OnSuccess: {Destination: !GetAtt Target.Arn}
Outputs:
  Fn: {Value: !Ref Fn}
  Target: {Value: !GetAtt Target.Arn}
  Settings: {Value: !Ref Settings}
"""


def test_cloudformation_deploy_update_delete(cumulo, lam, tmp_path):
    stack = f"invoke-config-{uid()}"
    path = tmp_path / "template.yaml"
    path.write_text(TEMPLATE)
    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path),
               "--capabilities", "CAPABILITY_IAM")
    cfn = cumulo.client("cloudformation")
    out = {o["OutputKey"]: o["OutputValue"] for o in cfn.describe_stacks(StackName=stack)["Stacks"][0]["Outputs"]}
    assert out["Settings"] == f"{out['Fn']}|$LATEST"
    got = lam.get_function_event_invoke_config(FunctionName=out["Fn"])
    assert shown(got) == {"FunctionArn": f"{PREFIX}{out['Fn']}:$LATEST", "MaximumRetryAttempts": 1,
                          "MaximumEventAgeInSeconds": 300,
                          "DestinationConfig": {"OnSuccess": {"Destination": out["Target"]}, "OnFailure": {}}}

    cumulo.aws("cloudformation", "deploy", "--stack-name", stack, "--template-file", str(path),
               "--capabilities", "CAPABILITY_IAM", "--parameter-overrides", "Retries=0")
    assert lam.get_function_event_invoke_config(FunctionName=out["Fn"])["MaximumRetryAttempts"] == 0
    events = cfn.describe_stack_events(StackName=stack)["StackEvents"]
    assert any(e["LogicalResourceId"] == "Settings" and e["ResourceStatus"] == "UPDATE_COMPLETE" for e in events)

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=WAIT)
    code, _, _ = error(lam.get_function_event_invoke_config, FunctionName=out["Fn"])
    assert code == "ResourceNotFoundException"
    code, _, _ = error(lam.get_function, FunctionName=out["Fn"])
    assert code == "ResourceNotFoundException"
