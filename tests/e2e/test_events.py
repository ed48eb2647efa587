"""EventBridge end to end: buses, rules, targets, PutEvents delivered to SQS and SNS, patterns,
input transformation, schedules that really fire, tags, persistence."""
import json
import time
import uuid

import botocore.exceptions
import pytest

from conftest import CumuloServer


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def events(cumulo):
    return cumulo.client("events")


@pytest.fixture(scope="module")
def sqs(cumulo):
    return cumulo.client("sqs")


@pytest.fixture(scope="module")
def sns(cumulo):
    return cumulo.client("sns")


def queue(sqs, name=None):
    url = sqs.create_queue(QueueName=name or f"q-{uid()}")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def drain(sqs, url, expect, timeout=5):
    got = []
    deadline = time.time() + timeout
    while len(got) < expect and time.time() < deadline:
        r = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
        for m in r.get("Messages", []):
            got.append(m["Body"])
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return got


def error_code(exc):
    return exc.value.response["Error"]["Code"]


def test_buses(events):
    name = f"bus-{uid()}"
    arn = events.create_event_bus(Name=name, Description="d", Tags=[{"Key": "k", "Value": "v"}])["EventBusArn"]
    assert arn == f"arn:aws:events:us-east-1:000000000000:event-bus/{name}"
    d = events.describe_event_bus(Name=name)
    assert d["Name"] == name and d["Arn"] == arn and d["Description"] == "d"
    assert events.describe_event_bus()["Name"] == "default"
    names = [b["Name"] for b in events.list_event_buses()["EventBuses"]]
    assert "default" in names and name in names
    assert [b["Name"] for b in events.list_event_buses(NamePrefix=name)["EventBuses"]] == [name]
    assert events.list_tags_for_resource(ResourceARN=arn)["Tags"] == [{"Key": "k", "Value": "v"}]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.create_event_bus(Name=name)
    assert error_code(e) == "ResourceAlreadyExistsException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.delete_event_bus(Name="default")
    assert error_code(e) == "ValidationException"
    events.delete_event_bus(Name=name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.describe_event_bus(Name=name)
    assert error_code(e) == "ResourceNotFoundException"
    events.delete_event_bus(Name=name)  # gone already: still a success, as on AWS


def test_rules_targets_and_put_events_to_sqs_and_sns(events, sqs, sns):
    url, qarn = queue(sqs)
    turl, tarn = queue(sqs)
    topic = sns.create_topic(Name=f"t-{uid()}")["TopicArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=tarn, Attributes={"RawMessageDelivery": "true"})
    rule = f"r-{uid()}"
    pattern = {"source": ["my.app"], "detail": {"amount": [{"numeric": [">", 100]}]}}
    arn = events.put_rule(Name=rule, EventPattern=json.dumps(pattern), Description="big orders")["RuleArn"]
    assert arn == f"arn:aws:events:us-east-1:000000000000:rule/{rule}"
    out = events.put_targets(Rule=rule, Targets=[{"Id": "q", "Arn": qarn}, {"Id": "t", "Arn": topic}])
    assert out["FailedEntryCount"] == 0
    d = events.describe_rule(Name=rule)
    assert d["State"] == "ENABLED" and json.loads(d["EventPattern"]) == pattern and d["EventBusName"] == "default"
    assert {t["Id"] for t in events.list_targets_by_rule(Rule=rule)["Targets"]} == {"q", "t"}
    assert events.list_rule_names_by_target(TargetArn=qarn)["RuleNames"] == [rule]

    res = events.put_events(Entries=[
        {"Source": "my.app", "DetailType": "Order", "Detail": json.dumps({"amount": 150}), "Resources": ["r1"]},
        {"Source": "my.app", "DetailType": "Order", "Detail": json.dumps({"amount": 5})},
        {"Source": "other", "DetailType": "Order", "Detail": json.dumps({"amount": 500})},
        {"Source": "my.app", "DetailType": "Order", "Detail": "not json"},
    ])
    assert res["FailedEntryCount"] == 1
    assert res["Entries"][3]["ErrorCode"] == "MalformedDetail"
    [body] = drain(sqs, url, 1)
    ev = json.loads(body)
    assert ev["id"] == res["Entries"][0]["EventId"]
    assert ev["source"] == "my.app" and ev["detail-type"] == "Order" and ev["detail"] == {"amount": 150}
    assert ev["account"] == "000000000000" and ev["region"] == "us-east-1" and ev["resources"] == ["r1"]
    assert ev["version"] == "0" and ev["time"].endswith("Z")
    [via_sns] = drain(sqs, turl, 1)
    assert json.loads(via_sns)["id"] == ev["id"]
    assert drain(sqs, url, 1, timeout=1) == []  # the non-matching ones were not delivered

    events.disable_rule(Name=rule)
    assert events.describe_rule(Name=rule)["State"] == "DISABLED"
    events.put_events(Entries=[{"Source": "my.app", "DetailType": "Order", "Detail": json.dumps({"amount": 150})}])
    assert drain(sqs, url, 1, timeout=1) == []
    events.enable_rule(Name=rule)

    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.delete_rule(Name=rule)
    assert error_code(e) == "ValidationException"
    out = events.remove_targets(Rule=rule, Ids=["q", "t", "nope"])
    assert out["FailedEntryCount"] == 1 and out["FailedEntries"][0]["TargetId"] == "nope"
    events.delete_rule(Name=rule)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.describe_rule(Name=rule)
    assert error_code(e) == "ResourceNotFoundException"


def test_input_forms_and_custom_bus(events, sqs):
    bus = f"bus-{uid()}"
    events.create_event_bus(Name=bus)
    u1, a1 = queue(sqs)
    u2, a2 = queue(sqs)
    u3, a3 = queue(sqs)
    rule = f"r-{uid()}"
    arn = events.put_rule(Name=rule, EventBusName=bus, EventPattern=json.dumps({"detail-type": [{"prefix": "Inst"}]}))["RuleArn"]
    assert arn == f"arn:aws:events:us-east-1:000000000000:rule/{bus}/{rule}"
    events.put_targets(Rule=rule, EventBusName=bus, Targets=[
        {"Id": "const", "Arn": a1, "Input": json.dumps({"fixed": True})},
        {"Id": "path", "Arn": a2, "InputPath": "$.detail.instance",
         "RetryPolicy": {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 600}},
        {"Id": "tx", "Arn": a3, "InputTransformer": {
            "InputPathsMap": {"id": "$.detail.instance.id", "state": "$.detail.state"},
            "InputTemplate": '{"msg": "<id> is <state>", "raw": <state>, "rule": "<aws.events.rule-name>"}'}},
    ])
    listed = {t["Id"]: t for t in events.list_targets_by_rule(Rule=rule, EventBusName=bus)["Targets"]}
    assert listed["path"]["RetryPolicy"] == {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 600}
    assert listed["tx"]["InputTransformer"]["InputPathsMap"] == {"id": "$.detail.instance.id", "state": "$.detail.state"}
    detail = {"instance": {"id": "i-1"}, "state": "running"}
    res = events.put_events(Entries=[{"Source": "ec2", "DetailType": "Instance Change", "Detail": json.dumps(detail), "EventBusName": bus}])
    assert res["FailedEntryCount"] == 0
    assert [json.loads(b) for b in drain(sqs, u1, 1)] == [{"fixed": True}]
    assert [json.loads(b) for b in drain(sqs, u2, 1)] == [{"id": "i-1"}]
    assert [json.loads(b) for b in drain(sqs, u3, 1)] == [{"msg": "i-1 is running", "raw": "running", "rule": rule}]
    # the default bus does not see the custom bus's rules
    events.put_events(Entries=[{"Source": "ec2", "DetailType": "Instance Change", "Detail": json.dumps(detail)}])
    assert drain(sqs, u1, 1, timeout=1) == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.delete_event_bus(Name=bus)
    assert error_code(e) == "ValidationException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.put_rule(Name="s", EventBusName=bus, ScheduleExpression="rate(1 minute)")
    assert error_code(e) == "ValidationException"


def test_log_group_target(cumulo, events):
    logs = cumulo.client("logs")
    group = f"/aws/events/{uid()}"
    logs.create_log_group(logGroupName=group)
    rule = f"r-{uid()}"
    events.put_rule(Name=rule, EventPattern=json.dumps({"source": [f"logs.{rule}"]}))
    events.put_targets(Rule=rule, Targets=[{"Id": "lg", "Arn": f"arn:aws:logs:us-east-1:000000000000:log-group:{group}"}])
    res = events.put_events(Entries=[{"Source": f"logs.{rule}", "DetailType": "x", "Detail": '{"a": 1}'}])
    assert res["FailedEntryCount"] == 0
    event_id = res["Entries"][0]["EventId"]
    [stream] = logs.describe_log_streams(logGroupName=group)["logStreams"]
    assert stream["logStreamName"] == event_id
    [logged] = logs.filter_log_events(logGroupName=group)["events"]
    assert json.loads(logged["message"])["detail"] == {"a": 1}


def test_lambda_target_is_invoked_with_the_event(cumulo, events):
    import io
    import zipfile

    lam, logs = cumulo.client("lambda"), cumulo.client("logs")
    name = f"eb-{uid()}"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        # The handler also calls back through the SDK: its endpoint is this server's port, not
        # 4566, although no request's Host header reaches an EventBridge-fired invocation.
        z.writestr("app.py", "import json, boto3\ndef handler(event, context):\n    print('EVENT ' + json.dumps(event))\n"
                   "    boto3.client('ssm').put_parameter(Name='/' + context.function_name, Value='ran', Type='String')\n")
    lam.create_function(FunctionName=name, Runtime="python3.11", Handler="app.handler",
                        Role="arn:aws:iam::000000000000:role/r", Code={"ZipFile": buf.getvalue()})
    lam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    arn = lam.get_function(FunctionName=name)["Configuration"]["FunctionArn"]
    rule = f"r-{uid()}"
    events.put_rule(Name=rule, EventPattern=json.dumps({"source": [f"lam.{rule}"]}))
    events.put_targets(Rule=rule, Targets=[{"Id": "fn", "Arn": arn}])
    res = events.put_events(Entries=[{"Source": f"lam.{rule}", "DetailType": "x", "Detail": '{"n": 7}'}])
    assert res["FailedEntryCount"] == 0
    deadline = time.time() + 30
    found = []
    while time.time() < deadline and not found:
        try:
            found = logs.filter_log_events(logGroupName=f"/aws/lambda/{name}", filterPattern="EVENT")["events"]
        except logs.exceptions.ResourceNotFoundException:
            pass
        time.sleep(0.3)
    assert found, "the function never ran"
    event = json.loads(found[0]["message"].split("EVENT ", 1)[1])
    assert event["source"] == f"lam.{rule}" and event["detail"] == {"n": 7}
    ssm = cumulo.client("ssm")
    value = None
    while time.time() < deadline and value is None:
        try:
            value = ssm.get_parameter(Name=f"/{name}")["Parameter"]["Value"]
        except ssm.exceptions.ParameterNotFound:
            time.sleep(0.3)
    assert value == "ran", "the function's SDK call never reached this server"


def test_bus_dead_letter_and_log_config_are_stored(events, sqs):
    _, dlq = queue(sqs)
    name = f"bus-{uid()}"
    out = events.create_event_bus(Name=name, Description="d", KmsKeyIdentifier="alias/k",
                                  DeadLetterConfig={"Arn": dlq}, LogConfig={"IncludeDetail": "FULL", "Level": "INFO"})
    assert (out["DeadLetterConfig"], out["LogConfig"], out["KmsKeyIdentifier"]) == (
        {"Arn": dlq}, {"IncludeDetail": "FULL", "Level": "INFO"}, "alias/k")
    d = events.describe_event_bus(Name=name)
    assert d["DeadLetterConfig"] == {"Arn": dlq} and d["LogConfig"] == {"IncludeDetail": "FULL", "Level": "INFO"}
    events.update_event_bus(Name=name, LogConfig={"Level": "ERROR"})
    d = events.describe_event_bus(Name=name)
    assert d["LogConfig"] == {"Level": "ERROR"} and "DeadLetterConfig" not in d and "Description" not in d
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.update_event_bus(Name=name, LogConfig={"Level": "LOUD"})
    assert error_code(e) == "ValidationException"
    assert events.describe_event_bus(Name=name)["LogConfig"] == {"Level": "ERROR"}
    events.delete_event_bus(Name=name)


def test_unreachable_target_failure_is_visible(events, sqs):
    dlq_url, dlq = queue(sqs)
    rule = f"r-{uid()}"
    events.put_rule(Name=rule, EventPattern=json.dumps({"source": [f"k.{rule}"]}))
    kinesis = {"PartitionKeyPath": "$.detail.id"}
    events.put_targets(Rule=rule, Targets=[{"Id": "k", "Arn": "arn:aws:kinesis:us-east-1:000000000000:stream/s",
                                           "RoleArn": "arn:aws:iam::000000000000:role/r",
                                           "KinesisParameters": kinesis,
                                           "DeadLetterConfig": {"Arn": dlq}}])
    # The kind's parameters are kept as given, though cumulo does not deliver to it.
    assert events.list_targets_by_rule(Rule=rule)["Targets"][0]["KinesisParameters"] == kinesis
    res = events.put_events(Entries=[{"Source": f"k.{rule}", "DetailType": "x", "Detail": "{}"}])
    assert res["FailedEntryCount"] == 1
    assert "kinesis" in res["Entries"][0]["ErrorMessage"]
    [dead] = drain(sqs, dlq_url, 1)
    assert json.loads(dead)["source"] == f"k.{rule}"


def test_pattern_validation_and_test_event_pattern(events):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.put_rule(Name=f"r-{uid()}", EventPattern='{"source": "not-a-list"}')
    assert error_code(e) == "InvalidEventPatternException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.put_rule(Name=f"r-{uid()}")
    assert error_code(e) == "ValidationException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.put_rule(Name=f"r-{uid()}", ScheduleExpression="rate(1 minutes)")
    assert error_code(e) == "ValidationException"
    event = {"id": "1", "account": "000000000000", "source": "a.b", "time": "2024-01-01T00:00:00Z",
             "region": "us-east-1", "resources": [], "detail-type": "T",
             "detail": {"ip": "10.1.2.3", "name": "Photo.PNG", "n": 7, "tags": ["x"]}}

    def t(p):
        return events.test_event_pattern(EventPattern=json.dumps(p), Event=json.dumps(event))["Result"]

    assert t({"source": [{"prefix": "a."}]})
    assert t({"source": [{"suffix": ".b"}]})
    assert t({"source": [{"anything-but": ["x", "y"]}]})
    assert not t({"source": [{"anything-but": {"prefix": "a"}}]})
    assert t({"detail": {"n": [{"numeric": [">=", 7, "<", 8]}]}})
    assert t({"detail": {"missing": [{"exists": False}]}})
    assert t({"detail": {"ip": [{"cidr": "10.1.0.0/16"}]}})
    assert t({"detail": {"name": [{"equals-ignore-case": "photo.png"}]}})
    assert t({"detail": {"name": [{"wildcard": "*.PNG"}]}})
    assert t({"detail": {"tags": ["x"]}})
    assert t({"$or": [{"source": ["zzz"]}, {"detail": {"n": [7]}}]})
    assert not t({"$or": [{"source": ["zzz"]}, {"detail": {"n": [8]}}]})
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.test_event_pattern(EventPattern="{}", Event="{}")
    assert error_code(e) == "ValidationException"


def test_list_rules_pagination_and_tags(events):
    prefix = f"lr-{uid()}"
    for i in range(5):
        events.put_rule(Name=f"{prefix}-{i}", EventPattern='{"source": ["x"]}', Tags=[{"Key": "i", "Value": str(i)}])
    seen, token = [], None
    while True:
        kw = {"NamePrefix": prefix, "Limit": 2}
        if token:
            kw["NextToken"] = token
        page = events.list_rules(**kw)
        seen += [r["Name"] for r in page["Rules"]]
        token = page.get("NextToken")
        if not token:
            break
    assert seen == [f"{prefix}-{i}" for i in range(5)]
    arn = events.describe_rule(Name=f"{prefix}-0")["Arn"]
    events.tag_resource(ResourceARN=arn, Tags=[{"Key": "env", "Value": "dev"}])
    assert sorted((t["Key"], t["Value"]) for t in events.list_tags_for_resource(ResourceARN=arn)["Tags"]) == [("env", "dev"), ("i", "0")]
    events.untag_resource(ResourceARN=arn, TagKeys=["i"])
    assert events.list_tags_for_resource(ResourceARN=arn)["Tags"] == [{"Key": "env", "Value": "dev"}]
    for i in range(5):
        events.delete_rule(Name=f"{prefix}-{i}")


def test_unimplemented_operation_is_501(events):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        events.list_archives()
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501


def test_schedule_fires_and_rules_survive_restart(fresh_server):
    server = fresh_server.start()
    events, sqs = server.client("events"), server.client("sqs")
    url, arn = queue(sqs, "sched")
    events.put_rule(Name="every-minute", ScheduleExpression="rate(1 minute)")
    events.put_targets(Rule="every-minute", Targets=[{"Id": "q", "Arn": arn}])
    server.kill9()
    server = CumuloServer(data_dir=fresh_server.data_dir).start()
    try:
        events, sqs = server.client("events"), server.client("sqs")
        assert events.describe_rule(Name="every-minute")["ScheduleExpression"] == "rate(1 minute)"
        [body] = drain(sqs, url, 1, timeout=75)
        ev = json.loads(body)
        assert ev["detail-type"] == "Scheduled Event" and ev["source"] == "aws.events"
        assert ev["resources"] == ["arn:aws:events:us-east-1:000000000000:rule/every-minute"]
    finally:
        server.stop()
