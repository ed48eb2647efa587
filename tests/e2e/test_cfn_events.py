"""AWS::Events::EventBus and AWS::Events::Rule (with targets) in stacks: created, updated in place,
replaced, deleted, and checked through EventBridge's own API (and real deliveries) after each phase."""
import json
import time
import uuid

import botocore.exceptions
import pytest

WAIT = {"Delay": 1, "MaxAttempts": 60}


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


@pytest.fixture(scope="module")
def events(cumulo):
    return cumulo.client("events")


@pytest.fixture(scope="module")
def sqs(cumulo):
    return cumulo.client("sqs")


def template(bus, rule_name, description="d1", source="app.one", with_input=False):
    target = {"Id": "q", "Arn": {"Fn::GetAtt": ["Queue", "Arn"]}}
    if with_input:
        target["Input"] = '{"fixed": 1}'
    return json.dumps({
        "Resources": {
            "Queue": {"Type": "AWS::SQS::Queue"},
            "Bus": {"Type": "AWS::Events::EventBus", "Properties": {"Name": bus, "Description": description}},
            "Rule": {"Type": "AWS::Events::Rule", "Properties": {
                "Name": rule_name, "EventBusName": {"Ref": "Bus"}, "Description": description,
                "EventPattern": {"source": [source]}, "Targets": [target]}},
            "DefaultRule": {"Type": "AWS::Events::Rule", "Properties": {
                "EventPattern": {"source": [source]}, "State": "ENABLED"}},
        },
        "Outputs": {
            "BusRef": {"Value": {"Ref": "Bus"}},
            "BusArn": {"Value": {"Fn::GetAtt": ["Bus", "Arn"]}},
            "RuleRef": {"Value": {"Ref": "Rule"}},
            "RuleArn": {"Value": {"Fn::GetAtt": ["Rule", "Arn"]}},
            "DefaultRuleRef": {"Value": {"Ref": "DefaultRule"}},
            "QueueUrl": {"Value": {"Ref": "Queue"}},
        },
    })


def outputs(cfn, name):
    s = cfn.describe_stacks(StackName=name)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in s.get("Outputs", [])}


def receive(sqs, url, timeout=5):
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)
        for m in r.get("Messages", []):
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
            return json.loads(m["Body"])
    return None


def test_bus_and_rule_lifecycle(cfn, events, sqs):
    stack = f"ev-{uuid.uuid4().hex[:8]}"
    bus, rule = f"{stack}-bus", f"{stack}-rule"
    cfn.create_stack(StackName=stack, TemplateBody=template(bus, rule))
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    out = outputs(cfn, stack)
    assert out["BusRef"] == bus
    assert out["BusArn"] == f"arn:aws:events:us-east-1:000000000000:event-bus/{bus}"
    assert out["RuleRef"] == f"{bus}|{rule}"
    assert out["RuleArn"] == f"arn:aws:events:us-east-1:000000000000:rule/{bus}/{rule}"
    assert out["DefaultRuleRef"].startswith(f"{stack}-DefaultRule-")
    assert events.describe_event_bus(Name=bus)["Description"] == "d1"
    d = events.describe_rule(Name=rule, EventBusName=bus)
    assert json.loads(d["EventPattern"]) == {"source": ["app.one"]}
    [t] = events.list_targets_by_rule(Rule=rule, EventBusName=bus)["Targets"]
    assert t["Id"] == "q"
    events.put_events(Entries=[{"Source": "app.one", "DetailType": "x", "Detail": "{}", "EventBusName": bus}])
    assert receive(sqs, out["QueueUrl"])["source"] == "app.one"

    # in place: descriptions, pattern and the target's Input
    cfn.update_stack(StackName=stack, TemplateBody=template(bus, rule, description="d2", source="app.two", with_input=True))
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=WAIT)
    assert events.describe_event_bus(Name=bus)["Description"] == "d2"
    d = events.describe_rule(Name=rule, EventBusName=bus)
    assert d["Description"] == "d2" and json.loads(d["EventPattern"]) == {"source": ["app.two"]}
    assert outputs(cfn, stack)["RuleRef"] == f"{bus}|{rule}"
    events.put_events(Entries=[{"Source": "app.two", "DetailType": "x", "Detail": "{}", "EventBusName": bus}])
    assert receive(sqs, out["QueueUrl"]) == {"fixed": 1}

    # replacement: a new rule name
    rule2 = f"{stack}-rule2"
    cfn.update_stack(StackName=stack, TemplateBody=template(bus, rule2, description="d2", source="app.two"))
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=WAIT)
    names = [r["Name"] for r in events.list_rules(EventBusName=bus)["Rules"]]
    assert names == [rule2]

    stack_id = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackId"]
    default_rule = outputs(cfn, stack)["DefaultRuleRef"]
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack_id, WaiterConfig=WAIT)
    with pytest.raises(botocore.exceptions.ClientError):
        events.describe_event_bus(Name=bus)
    with pytest.raises(botocore.exceptions.ClientError):
        events.describe_rule(Name=default_rule)


def test_bus_settings_and_target_retry_and_dead_letter(cfn, events, sqs):
    stack = f"ev-set-{uuid.uuid4().hex[:8]}"
    bus = f"bus-{stack}"
    policy = {"Version": "2012-10-17", "Statement": [{"Sid": "s", "Effect": "Allow",
              "Principal": {"AWS": "arn:aws:iam::000000000000:root"}, "Action": "events:PutEvents",
              "Resource": f"arn:aws:events:us-east-1:000000000000:event-bus/{bus}"}]}

    def body(level):
        return json.dumps({"Resources": {
            "Dlq": {"Type": "AWS::SQS::Queue"},
            "Bus": {"Type": "AWS::Events::EventBus", "Properties": {
                "Name": bus, "Description": "d", "KmsKeyIdentifier": "alias/k", "Policy": policy,
                "DeadLetterConfig": {"Arn": {"Fn::GetAtt": ["Dlq", "Arn"]}},
                "LogConfig": {"IncludeDetail": "NONE", "Level": level}}},
            "Rule": {"Type": "AWS::Events::Rule", "Properties": {
                "EventBusName": {"Ref": "Bus"}, "EventPattern": {"source": ["x"]},
                "Targets": [{"Id": "t", "Arn": {"Fn::GetAtt": ["Dlq", "Arn"]},
                             "RetryPolicy": {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 600},
                             "DeadLetterConfig": {"Arn": {"Fn::GetAtt": ["Dlq", "Arn"]}}}]}},
        }, "Outputs": {"Rule": {"Value": {"Ref": "Rule"}}, "Dlq": {"Value": {"Fn::GetAtt": ["Dlq", "Arn"]}}}})

    cfn.create_stack(StackName=stack, TemplateBody=body("INFO"))
    cfn.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=WAIT)
    out = outputs(cfn, stack)
    d = events.describe_event_bus(Name=bus)
    assert (d["Description"], d["KmsKeyIdentifier"], d["DeadLetterConfig"], d["LogConfig"]) == (
        "d", "alias/k", {"Arn": out["Dlq"]}, {"IncludeDetail": "NONE", "Level": "INFO"})
    assert json.loads(d["Policy"]) == policy
    [t] = events.list_targets_by_rule(Rule=out["Rule"].split("|")[-1], EventBusName=bus)["Targets"]
    assert t["RetryPolicy"] == {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 600}
    assert t["DeadLetterConfig"] == {"Arn": out["Dlq"]}

    cfn.update_stack(StackName=stack, TemplateBody=body("TRACE"))
    cfn.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=WAIT)
    assert events.describe_event_bus(Name=bus)["LogConfig"]["Level"] == "TRACE"
    cfn.delete_stack(StackName=stack)
    cfn.get_waiter("stack_delete_complete").wait(StackName=stack, WaiterConfig=WAIT)
    with pytest.raises(botocore.exceptions.ClientError):
        events.describe_event_bus(Name=bus)
