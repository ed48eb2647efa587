"""SignalResource, CreationPolicy and AWS::CloudFormation::WaitCondition against the real
binary: a handle's URL signalled by an HTTP PUT (as cfn-signal and curl send it), a
CreationPolicy signalled through the AWS CLI and boto3, a FAILURE signal and a timeout rolling
the stack back with AWS's reasons, and the WaitCondition's Data in an output."""
import json
import time
import urllib.error
import urllib.request
import uuid

import botocore.exceptions
import pytest

WAIT = {"Delay": 1, "MaxAttempts": 90}


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


def name():
    return f"sig-{uuid.uuid4().hex[:8]}"


def put(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="PUT",
                                 headers={"Content-Type": ""})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status


def physical(cfn, stack, logical):
    return cfn.describe_stack_resource(StackName=stack, LogicalResourceId=logical)[
        "StackResourceDetail"]["PhysicalResourceId"]


def status_of(cfn, stack, logical):
    return cfn.describe_stack_resource(StackName=stack, LogicalResourceId=logical)[
        "StackResourceDetail"]["ResourceStatus"]


def events(cfn, stack):
    out = []
    for page in cfn.get_paginator("describe_stack_events").paginate(StackName=stack):
        out.extend(page["StackEvents"])
    return out


def settle(cfn, stack):
    for _ in range(300):
        s = cfn.describe_stacks(StackName=stack)["Stacks"][0]
        if not s["StackStatus"].endswith("_IN_PROGRESS"):
            return s
        time.sleep(0.2)
    raise AssertionError(f"{stack} did not settle")


def handle_url(cfn, stack):
    """The handle's URL, once the handle is created."""
    for _ in range(100):
        try:
            return physical(cfn, stack, "Handle")
        except (botocore.exceptions.ClientError, KeyError):
            time.sleep(0.1)
    raise AssertionError("the handle was never created")


def failure_reason(cfn, stack, logical):
    """The stack settles rolled back; the reason `logical` failed with."""
    assert settle(cfn, stack)["StackStatus"] == "ROLLBACK_COMPLETE"
    failed = [e for e in events(cfn, stack)
              if e["LogicalResourceId"] == logical and e["ResourceStatus"] == "CREATE_FAILED"]
    return failed[0]["ResourceStatusReason"]


def until_waiting(send):
    """Sends a signal once its resource waits for it: before, SignalResource refuses it."""
    for _ in range(200):
        try:
            return send()
        except (botocore.exceptions.ClientError, AssertionError) as e:
            if "cannot be signaled" not in str(e):
                raise
            time.sleep(0.1)
    raise AssertionError("the resource never waited for a signal")


def test_wait_condition_completes_on_handle_puts_and_reports_data(cumulo, cfn):
    stack = name()
    template = {
        "Resources": {
            "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
            "Condition": {"Type": "AWS::CloudFormation::WaitCondition", "Properties": {
                "Handle": {"Ref": "Handle"}, "Timeout": "120", "Count": "2"}},
            "AfterCondition": {"Type": "AWS::SQS::Queue", "DependsOn": "Condition"},
        },
        "Outputs": {
            "Data": {"Value": {"Fn::GetAtt": ["Condition", "Data"]}},
            "Url": {"Value": {"Ref": "Handle"}},
        },
    }
    cfn.create_stack(StackName=stack, TemplateBody=json.dumps(template))
    url = handle_url(cfn, stack)
    assert url.startswith(f"{cumulo.endpoint}/_cumulo/cfn-signal/"), url
    assert put(url, {"Status": "SUCCESS", "Reason": "r", "UniqueId": "id1", "Data": "d1"}) == 200
    assert status_of(cfn, stack, "Condition") == "CREATE_IN_PROGRESS"
    assert cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"] == "CREATE_IN_PROGRESS"
    # The same UniqueId again replaces the first: it counts once.
    assert put(url, {"Status": "SUCCESS", "Reason": "r", "UniqueId": "id1", "Data": "d1"}) == 200
    assert status_of(cfn, stack, "Condition") == "CREATE_IN_PROGRESS"
    assert put(url, {"Status": "SUCCESS", "Reason": "r", "UniqueId": "id2", "Data": "d2"}) == 200
    s = settle(cfn, stack)
    assert s["StackStatus"] == "CREATE_COMPLETE"
    out = {o["OutputKey"]: o["OutputValue"] for o in s["Outputs"]}
    assert json.loads(out["Data"]) == {"id1": "d1", "id2": "d2"}
    assert out["Url"] == url
    # A handle PUT that is not a signal is refused and counts for nothing.
    with pytest.raises(urllib.error.HTTPError) as bad:
        put(url, {"Status": "MAYBE", "UniqueId": "x"})
    assert bad.value.code == 400
    with pytest.raises(urllib.error.HTTPError) as gone:
        put(f"{cumulo.endpoint}/_cumulo/cfn-signal/nosuchtoken", {"Status": "SUCCESS", "UniqueId": "x"})
    assert gone.value.code == 403
    cfn.delete_stack(StackName=stack)


def policy_template(timeout="PT2M", count=2):
    return json.dumps({"Resources": {
        "Waiter": {"Type": "AWS::CloudFormation::WaitCondition",
                   "CreationPolicy": {"ResourceSignal": {"Count": count, "Timeout": timeout}}},
        "Queue": {"Type": "AWS::SQS::Queue", "DependsOn": "Waiter"},
    }})


def test_creation_policy_signalled_by_the_cli_and_boto3(cumulo, cfn):
    stack = name()
    cfn.create_stack(StackName=stack, TemplateBody=policy_template())
    until_waiting(lambda: cumulo.aws(
        "cloudformation", "signal-resource", "--stack-name", stack,
        "--logical-resource-id", "Waiter", "--unique-id", "cli-1", "--status", "SUCCESS"))
    assert status_of(cfn, stack, "Waiter") == "CREATE_IN_PROGRESS"
    cfn.signal_resource(StackName=stack, LogicalResourceId="Waiter", UniqueId="boto-1",
                        Status="SUCCESS")
    assert settle(cfn, stack)["StackStatus"] == "CREATE_COMPLETE"
    reasons = [e.get("ResourceStatusReason") for e in events(cfn, stack)
               if e["LogicalResourceId"] == "Waiter" and e["ResourceStatus"] == "CREATE_IN_PROGRESS"]
    assert "Received SUCCESS signal with UniqueId cli-1" in reasons
    assert "Received SUCCESS signal with UniqueId boto-1" in reasons
    with pytest.raises(botocore.exceptions.ClientError) as late:
        cfn.signal_resource(StackName=stack, LogicalResourceId="Waiter", UniqueId="x",
                            Status="SUCCESS")
    assert late.value.response["Error"]["Code"] == "ValidationError"
    assert late.value.response["Error"]["Message"] == (
        "Resource Waiter is in CREATE_COMPLETE state and cannot be signaled")
    cfn.delete_stack(StackName=stack)


def test_delete_stack_cancels_a_wait_and_deletes_everything(cumulo, cfn):
    stack = name()
    template = {"Resources": {
        "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
        "Queue": {"Type": "AWS::SQS::Queue"},
        "Condition": {"Type": "AWS::CloudFormation::WaitCondition", "DependsOn": "Queue", "Properties": {
            "Handle": {"Ref": "Handle"}, "Timeout": "3600"}},
        "After": {"Type": "AWS::SQS::Queue", "DependsOn": "Condition"},
    }}
    stack_id = cfn.create_stack(StackName=stack, TemplateBody=json.dumps(template))["StackId"]
    handle_url(cfn, stack)
    for _ in range(100):
        try:
            if status_of(cfn, stack, "Condition") == "CREATE_IN_PROGRESS":
                break
        except botocore.exceptions.ClientError:
            pass
        time.sleep(0.1)
    queue = physical(cfn, stack, "Queue")
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)
    evs = list(reversed(events(cfn, stack_id)))
    stack_events = [(e["ResourceStatus"], e.get("ResourceStatusReason")) for e in evs
                    if e["LogicalResourceId"] == stack]
    assert stack_events == [("CREATE_IN_PROGRESS", "User Initiated"), ("DELETE_IN_PROGRESS", "User Initiated"),
                            ("DELETE_COMPLETE", None)]
    cancelled = [e.get("ResourceStatusReason") for e in evs
                 if e["LogicalResourceId"] == "Condition" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert cancelled == ["Resource creation cancelled"]
    assert not [e for e in evs if e["LogicalResourceId"] == "After"]
    with pytest.raises(botocore.exceptions.ClientError):
        cumulo.client("sqs").get_queue_attributes(QueueUrl=queue)


def test_a_failure_signal_rolls_the_stack_back(cfn):
    stack = name()
    cfn.create_stack(StackName=stack, TemplateBody=policy_template(count=1))
    until_waiting(lambda: cfn.signal_resource(StackName=stack, LogicalResourceId="Waiter",
                                              UniqueId="i-0abc", Status="FAILURE"))
    assert failure_reason(cfn, stack, "Waiter") == "Received FAILURE signal with UniqueId i-0abc"
    cfn.delete_stack(StackName=stack)


def test_short_timeouts_fail_the_resource(cfn):
    stack = name()
    cfn.create_stack(StackName=stack, TemplateBody=policy_template(timeout="PT2S", count=1))
    assert failure_reason(cfn, stack, "Waiter") == (
        "Failed to receive 1 resource signal(s) within the specified duration")
    cfn.delete_stack(StackName=stack)

    stack = name()
    cfn.create_stack(StackName=stack, TemplateBody=json.dumps({"Resources": {
        "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
        "Condition": {"Type": "AWS::CloudFormation::WaitCondition",
                      "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": "2"}},
    }}))
    assert failure_reason(cfn, stack, "Condition") == (
        "WaitCondition timed out. Received 0 conditions when expecting 1")
    cfn.delete_stack(StackName=stack)


def test_a_failure_put_to_the_handle_fails_the_condition(cfn):
    stack = name()
    cfn.create_stack(StackName=stack, TemplateBody=json.dumps({"Resources": {
        "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
        "Condition": {"Type": "AWS::CloudFormation::WaitCondition",
                      "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": "120"}},
    }}))
    url = handle_url(cfn, stack)
    put(url, {"Status": "FAILURE", "Reason": "setup broke", "UniqueId": "host-1", "Data": ""})
    assert failure_reason(cfn, stack, "Condition") == (
        "WaitCondition received failed message: 'setup broke' for uniqueId: host-1")
    cfn.delete_stack(StackName=stack)


def test_a_handles_signals_survive_kill_9_and_count_for_a_later_condition(fresh_server):
    server = fresh_server.start()
    cfn = server.client("cloudformation")
    stack = name()
    handle = {"Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"}}
    cfn.create_stack(StackName=stack, TemplateBody=json.dumps({"Resources": handle}))
    assert settle(cfn, stack)["StackStatus"] == "CREATE_COMPLETE"
    url = handle_url(cfn, stack)
    assert put(url, {"Status": "SUCCESS", "Reason": "r", "UniqueId": "early", "Data": "kept"}) == 200
    server.kill9()
    server = fresh_server.start()
    cfn = server.client("cloudformation")
    cfn.update_stack(StackName=stack, TemplateBody=json.dumps({
        "Resources": {**handle, "Condition": {"Type": "AWS::CloudFormation::WaitCondition",
                                              "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": "60"}}},
        "Outputs": {"Data": {"Value": {"Fn::GetAtt": ["Condition", "Data"]}}},
    }))
    s = settle(cfn, stack)
    assert s["StackStatus"] == "UPDATE_COMPLETE"
    assert json.loads(s["Outputs"][0]["OutputValue"]) == {"early": "kept"}
