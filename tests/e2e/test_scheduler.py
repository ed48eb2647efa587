"""EventBridge Scheduler end to end: schedules and groups (CRUD, filters, paging, tags), errors as
AWS answered them (../shared/aws-recordings/scheduler/test_scheduler.snapshot.json), one-time
schedules that really fire to SQS and delete themselves, state across a restart, both
CloudFormation types through `aws cloudformation deploy`, and a SAM ScheduleV2 event."""
import datetime
import json
import time
import uuid

import botocore.exceptions
import pytest

from conftest import CumuloServer

ROLE = "arn:aws:iam::000000000000:role/scheduler"
OFF = {"Mode": "OFF"}


def uid():
    return uuid.uuid4().hex[:8]


@pytest.fixture(scope="module")
def scheduler(cumulo):
    return cumulo.client("scheduler")


@pytest.fixture(scope="module")
def sqs(cumulo):
    return cumulo.client("sqs")


def queue(sqs):
    url = sqs.create_queue(QueueName=f"q-{uid()}")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def drain(sqs, url, expect, timeout):
    got = []
    deadline = time.time() + timeout
    while len(got) < expect and time.time() < deadline:
        for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", []):
            got.append(m["Body"])
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return got


def at(seconds_from_now):
    t = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=seconds_from_now)
    return f"at({t.strftime('%Y-%m-%dT%H:%M:%S')})"


def error(exc):
    r = exc.value.response
    return r["Error"]["Code"], r["Error"]["Message"], r["ResponseMetadata"]["HTTPStatusCode"]


def test_schedules_and_groups(scheduler):
    group = f"g-{uid()}"
    garn = scheduler.create_schedule_group(Name=group, Tags=[{"Key": "team", "Value": "a"}])["ScheduleGroupArn"]
    assert garn == f"arn:aws:scheduler:us-east-1:000000000000:schedule-group/{group}"
    g = scheduler.get_schedule_group(Name=group)
    assert (g["Name"], g["State"], g["Arn"]) == (group, "ACTIVE", garn)
    assert scheduler.get_schedule_group(Name="default")["State"] == "ACTIVE"
    names = [x["Name"] for x in scheduler.list_schedule_groups()["ScheduleGroups"]]
    assert "default" in names and group in names
    assert [x["Name"] for x in scheduler.list_schedule_groups(NamePrefix=group)["ScheduleGroups"]] == [group]

    target = {"Arn": "arn:aws:sqs:us-east-1:000000000000:nowhere", "RoleArn": ROLE, "Input": '{"a": 1}',
              "RetryPolicy": {"MaximumRetryAttempts": 3, "MaximumEventAgeInSeconds": 600},
              "SqsParameters": {"MessageGroupId": "g"}}
    arn = scheduler.create_schedule(
        Name="daily", GroupName=group, ScheduleExpression="cron(0 12 * * ? *)",
        ScheduleExpressionTimezone="Europe/Paris", FlexibleTimeWindow={"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 15},
        Target=target, Description="noon", State="DISABLED",
        StartDate=datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc),
    )["ScheduleArn"]
    assert arn == f"arn:aws:scheduler:us-east-1:000000000000:schedule/{group}/daily"
    s = scheduler.get_schedule(Name="daily", GroupName=group)
    assert s["Target"] == target and s["State"] == "DISABLED" and s["Description"] == "noon"
    assert s["FlexibleTimeWindow"] == {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 15}
    assert s["ScheduleExpressionTimezone"] == "Europe/Paris" and s["StartDate"].year == 2030
    assert "ActionAfterCompletion" not in s

    # The same name in another group is another schedule.
    scheduler.create_schedule(Name="daily", ScheduleExpression="rate(5 minutes)", FlexibleTimeWindow=OFF, Target=target)
    scheduler.create_schedule(Name="other", GroupName=group, ScheduleExpression="rate(1 hour)", FlexibleTimeWindow=OFF, Target=target)
    listed = scheduler.list_schedules(GroupName=group)["Schedules"]
    assert sorted(x["Name"] for x in listed) == ["daily", "other"]
    assert listed[0]["Target"] == {"Arn": target["Arn"]} and listed[0]["GroupName"] == group
    assert [x["Name"] for x in scheduler.list_schedules(GroupName=group, State="DISABLED")["Schedules"]] == ["daily"]
    assert [x["Name"] for x in scheduler.list_schedules(GroupName=group, NamePrefix="oth")["Schedules"]] == ["other"]
    first = scheduler.list_schedules(GroupName=group, MaxResults=1)
    second = scheduler.list_schedules(GroupName=group, MaxResults=1, NextToken=first["NextToken"])
    assert len(first["Schedules"]) == 1 and "NextToken" not in second
    assert first["Schedules"][0]["Name"] != second["Schedules"][0]["Name"]

    # UpdateSchedule replaces every member; a target without a retry policy gets AWS's default.
    scheduler.update_schedule(Name="daily", GroupName=group, ScheduleExpression="rate(2 hours)",
                              FlexibleTimeWindow=OFF, Target={"Arn": target["Arn"], "RoleArn": ROLE})
    s = scheduler.get_schedule(Name="daily", GroupName=group)
    assert s["ScheduleExpression"] == "rate(2 hours)" and s["State"] == "ENABLED" and "Description" not in s
    assert s["Target"] == {"Arn": target["Arn"], "RoleArn": ROLE,
                           "RetryPolicy": {"MaximumEventAgeInSeconds": 86400, "MaximumRetryAttempts": 185}}

    # Tags are the groups'.
    scheduler.tag_resource(ResourceArn=garn, Tags=[{"Key": "TagKey", "Value": "TagValue"}])
    assert sorted((t["Key"], t["Value"]) for t in scheduler.list_tags_for_resource(ResourceArn=garn)["Tags"]) == [
        ("TagKey", "TagValue"), ("team", "a")]
    scheduler.untag_resource(ResourceArn=garn, TagKeys=["team", "TagKey"])
    assert scheduler.list_tags_for_resource(ResourceArn=garn)["Tags"] == []

    # Deleting a group deletes its schedules; the default group's stay.
    scheduler.delete_schedule_group(Name=group)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.get_schedule(Name="other", GroupName=group)
    assert error(e) == ("ResourceNotFoundException", "Schedule other does not exist.", 404)
    assert scheduler.get_schedule(Name="daily")["ScheduleExpression"] == "rate(5 minutes)"
    scheduler.delete_schedule(Name="daily")


def test_errors(scheduler):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.get_schedule(Name="missing")
    assert error(e) == ("ResourceNotFoundException", "Schedule missing does not exist.", 404)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.delete_schedule(Name="missing")
    assert error(e)[0] == "ResourceNotFoundException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.get_schedule_group(Name="missing")
    assert error(e) == ("ResourceNotFoundException", "Schedule group missing does not exist.", 404)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.create_schedule(Name="x", GroupName="missing", ScheduleExpression="rate(1 minute)",
                                  FlexibleTimeWindow=OFF, Target={"Arn": "arn:aws:sqs:us-east-1:000000000000:q", "RoleArn": ROLE})
    assert error(e)[0] == "ResourceNotFoundException"
    name = f"s-{uid()}"
    args = dict(Name=name, ScheduleExpression="rate(1 minute)", FlexibleTimeWindow=OFF,
                Target={"Arn": "arn:aws:sqs:us-east-1:000000000000:q", "RoleArn": ROLE})
    scheduler.create_schedule(**args)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.create_schedule(**args)
    assert error(e)[0::2] == ("ConflictException", 409)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.create_schedule(**{**args, "Name": f"{name}-w", "FlexibleTimeWindow": {"Mode": "FLEXIBLE"}})
    assert error(e)[0] == "ValidationException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.create_schedule(**{**args, "Name": f"{name}-d",
                                     "StartDate": datetime.datetime(2031, 1, 1), "EndDate": datetime.datetime(2030, 1, 1)})
    assert error(e)[0] == "ValidationException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.delete_schedule_group(Name="default")
    assert error(e)[0] == "ValidationException"
    scheduler.delete_schedule(Name=name)


RECORDED_INVALID = [
    "cron(0 1 * * * *)", "cron(7 20 * * NOT *)", "cron(INVALID)", "cron(0 dummy ? * MON-FRI *)",
    "cron(71 8 1 * ? *)", "cron()", "rate(10 seconds)", "rate(10 years)", "rate()", "rate(10)",
    "rate(10 minutess)", "rate(foo minutes)", "rate(-10 minutes)", "rate( 10 minutes )",
    " rate(10 minutes)", "at(2021-12-31T23:59:59Z)", "at(2021-12-31)",
]
RECORDED_VALID = [
    "cron(0-15/1 8-8 ? * 2,3,4,5,6,7 *)", "cron(30-30 13-13 ? * 2,4,6 *)", "cron(1-31/30 1-1 ? * 1,7 *)",
    "cron(0 18 ? * MON-FRI *)", "cron(*/15 * * * ? *)", "cron(0-59/10 0-23/2 ? * * *)",
]


@pytest.mark.parametrize("expression", RECORDED_INVALID)
def test_invalid_expressions_as_aws_answered(scheduler, expression):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.create_schedule(Name=f"s-{uid()}", ScheduleExpression=expression, FlexibleTimeWindow=OFF,
                                  Target={"Arn": "arn:aws:sqs:us-east-1:000000000000:q", "RoleArn": ROLE})
    assert error(e) == ("ValidationException", f"Invalid Schedule Expression {expression}.", 400)


@pytest.mark.parametrize("expression", RECORDED_VALID)
def test_valid_expressions_as_aws_answered(scheduler, expression):
    name = f"s-{uid()}"
    arn = scheduler.create_schedule(Name=name, ScheduleExpression=expression, FlexibleTimeWindow=OFF,
                                    Target={"Arn": "arn:aws:sqs:us-east-1:000000000000:q", "RoleArn": ROLE})["ScheduleArn"]
    assert arn.endswith(f":schedule/default/{name}")
    scheduler.delete_schedule(Name=name)


def test_one_time_schedule_fires_to_sqs_and_deletes_itself(scheduler, sqs):
    url, qarn = queue(sqs)
    name = f"once-{uid()}"
    scheduler.create_schedule(Name=name, ScheduleExpression=at(2), FlexibleTimeWindow=OFF,
                              ActionAfterCompletion="DELETE",
                              Target={"Arn": qarn, "RoleArn": ROLE, "Input": '{"hello": "scheduler"}'})
    assert drain(sqs, url, 1, timeout=15) == ['{"hello": "scheduler"}']
    time.sleep(0.5)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.get_schedule(Name=name)
    assert error(e)[0] == "ResourceNotFoundException"


def test_disabled_and_universal_targets_do_not_deliver(scheduler, sqs):
    url, qarn = queue(sqs)
    scheduler.create_schedule(Name=f"off-{uid()}", ScheduleExpression=at(1), FlexibleTimeWindow=OFF, State="DISABLED",
                              Target={"Arn": qarn, "RoleArn": ROLE, "Input": "disabled"})
    universal = f"sdk-{uid()}"
    scheduler.create_schedule(Name=universal, ScheduleExpression=at(1), FlexibleTimeWindow=OFF,
                              Target={"Arn": "arn:aws:scheduler:::aws-sdk:sqs:sendMessage", "RoleArn": ROLE,
                                      "Input": json.dumps({"QueueUrl": url, "MessageBody": "universal"}),
                                      "DeadLetterConfig": {"Arn": qarn}})
    # The universal target is refused honestly: its input goes to the dead-letter queue.
    got = drain(sqs, url, 2, timeout=6)
    assert got == [json.dumps({"QueueUrl": url, "MessageBody": "universal"})]
    assert scheduler.get_schedule(Name=universal)["Target"]["Arn"] == "arn:aws:scheduler:::aws-sdk:sqs:sendMessage"


def test_schedules_survive_restart_and_fire_after_it(fresh_server):
    server = fresh_server.start()
    scheduler, sqs = server.client("scheduler"), server.client("sqs")
    url, qarn = queue(sqs)
    scheduler.create_schedule_group(Name="kept", Tags=[{"Key": "k", "Value": "v"}])
    scheduler.create_schedule(Name="later", GroupName="kept", ScheduleExpression=at(8), FlexibleTimeWindow=OFF,
                              Target={"Arn": qarn, "RoleArn": ROLE, "Input": "after restart"})
    server.kill9()
    server = CumuloServer(data_dir=fresh_server.data_dir).start()
    try:
        scheduler, sqs = server.client("scheduler"), server.client("sqs")
        # Nobody calls Scheduler before it fires: `serve` builds it at start for its pending work.
        assert drain(sqs, url, 1, timeout=20) == ["after restart"]
        garn = scheduler.get_schedule_group(Name="kept")["Arn"]
        assert scheduler.list_tags_for_resource(ResourceArn=garn)["Tags"] == [{"Key": "k", "Value": "v"}]
        # Without ActionAfterCompletion DELETE a completed schedule stays.
        assert scheduler.get_schedule(Name="later", GroupName="kept")["State"] == "ENABLED"
    finally:
        server.stop()


CFN_TEMPLATE = """
Resources:
  Queue:
    Type: AWS::SQS::Queue
  Group:
    Type: AWS::Scheduler::ScheduleGroup
    Properties:
      Tags: [{Key: owner, Value: cfn}]
  Schedule:
    Type: AWS::Scheduler::Schedule
    Properties:
      GroupName: !Ref Group
      ScheduleExpression: EXPRESSION
      FlexibleTimeWindow: {Mode: "OFF"}
      Description: DESCRIPTION
      Target:
        Arn: !GetAtt Queue.Arn
        RoleArn: arn:aws:iam::000000000000:role/scheduler
        Input: from-cloudformation
Outputs:
  QueueUrl: {Value: !Ref Queue}
  GroupName: {Value: !Ref Group}
  GroupArn: {Value: !GetAtt Group.Arn}
  GroupState: {Value: !GetAtt Group.State}
  GroupCreated: {Value: !GetAtt Group.CreationDate}
  ScheduleName: {Value: !Ref Schedule}
  ScheduleArn: {Value: !GetAtt Schedule.Arn}
"""


def deploy(cumulo, tmp_path, name, body):
    path = tmp_path / f"{uid()}.yaml"
    path.write_text(body)
    cumulo.aws("cloudformation", "deploy", "--template-file", str(path), "--stack-name", name,
               "--capabilities", "CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND")
    stack = cumulo.client("cloudformation").describe_stacks(StackName=name)["Stacks"][0]
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def test_cloudformation_schedule_and_group(cumulo, scheduler, sqs, tmp_path):
    name = f"sched-{uid()}"
    body = CFN_TEMPLATE.replace("EXPRESSION", at(3)).replace("DESCRIPTION", "first")
    out = deploy(cumulo, tmp_path, name, body)
    group = out["GroupName"]
    assert out["GroupArn"] == f"arn:aws:scheduler:us-east-1:000000000000:schedule-group/{group}"
    assert out["GroupState"] == "ACTIVE" and out["GroupCreated"].startswith("20")
    s = scheduler.get_schedule(Name=out["ScheduleName"], GroupName=group)
    assert s["Arn"] == out["ScheduleArn"] and s["Description"] == "first"
    assert scheduler.list_tags_for_resource(ResourceArn=out["GroupArn"])["Tags"] == [{"Key": "owner", "Value": "cfn"}]
    assert drain(sqs, out["QueueUrl"], 1, timeout=15) == ["from-cloudformation"]

    deploy(cumulo, tmp_path, name, body.replace("Description: first", "Description: second"))
    assert scheduler.get_schedule(Name=out["ScheduleName"], GroupName=group)["Description"] == "second"

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", name)
    cumulo.aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.get_schedule_group(Name=group)
    assert error(e)[0] == "ResourceNotFoundException"


MOVE_TEMPLATE = """
Resources:
  Queue:
    Type: AWS::SQS::Queue
  First:
    Type: AWS::Scheduler::ScheduleGroup
  Second:
    Type: AWS::Scheduler::ScheduleGroup
  Schedule:
    Type: AWS::Scheduler::Schedule
    Properties:
      GroupName: !Ref GROUP
      ScheduleExpression: rate(1 day)
      State: DISABLED
      FlexibleTimeWindow: {Mode: "OFF"}
      Target:
        Arn: !GetAtt Queue.Arn
        RoleArn: arn:aws:iam::000000000000:role/scheduler
Outputs:
  First: {Value: !Ref First}
  Second: {Value: !Ref Second}
  ScheduleName: {Value: !Ref Schedule}
  ScheduleArn: {Value: !GetAtt Schedule.Arn}
"""


def test_cloudformation_schedule_moves_to_another_group_in_place(cumulo, scheduler, tmp_path):
    """GroupName is not create-only in the registry schema (only Name is): a new one updates
    the schedule without replacement, moving it, its name kept."""
    name = f"sched-{uid()}"
    before = deploy(cumulo, tmp_path, name, MOVE_TEMPLATE.replace("GROUP", "First"))
    schedule = before["ScheduleName"]
    assert scheduler.get_schedule(Name=schedule, GroupName=before["First"])["Arn"] == before["ScheduleArn"]

    after = deploy(cumulo, tmp_path, name, MOVE_TEMPLATE.replace("GROUP", "Second"))
    assert after["ScheduleName"] == schedule
    moved = scheduler.get_schedule(Name=schedule, GroupName=after["Second"])
    assert moved["Arn"] == after["ScheduleArn"] != before["ScheduleArn"]
    assert moved["State"] == "DISABLED"
    assert scheduler.list_schedules(GroupName=after["First"])["Schedules"] == []
    events = cumulo.client("cloudformation").describe_stack_events(StackName=name)["StackEvents"]
    updated = [e for e in events if e["LogicalResourceId"] == "Schedule"
               and e["ResourceStatus"] == "UPDATE_COMPLETE"]
    assert [e["PhysicalResourceId"] for e in updated] == [schedule]

    cumulo.aws("cloudformation", "delete-stack", "--stack-name", name)
    cumulo.aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.get_schedule(Name=schedule, GroupName=after["Second"])
    assert error(e)[0] == "ResourceNotFoundException"


SAM_TEMPLATE = """
Transform: AWS::Serverless-2016-10-31
Resources:
  Fn:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      InlineCode: "def handler(event, context):\\n    print('scheduled', event)\\n"
      Events:
        Tick:
          Type: ScheduleV2
          Properties:
            ScheduleExpression: rate(1 hour)
            Input: '{"tick": true}'
            RetryPolicy: {MaximumRetryAttempts: 1}
        Once:
          Type: ScheduleV2
          Properties:
            ScheduleExpression: AT
            Input: '{"once": true}'
Outputs:
  FunctionArn: {Value: !GetAtt Fn.Arn}
"""


def test_sam_schedule_v2_event_deploys(cumulo, scheduler, tmp_path):
    name = f"samsched-{uid()}"
    out = deploy(cumulo, tmp_path, name, SAM_TEMPLATE.replace("AT", at(4)))
    s = scheduler.get_schedule(Name="FnTick")
    assert s["Target"]["Arn"] == out["FunctionArn"] and s["Target"]["Input"] == '{"tick": true}'
    assert s["Target"]["RetryPolicy"] == {"MaximumRetryAttempts": 1}
    assert s["FlexibleTimeWindow"] == {"Mode": "OFF"} and s["ScheduleExpression"] == "rate(1 hour)"
    role = s["Target"]["RoleArn"].rsplit("/", 1)[1]
    trust = cumulo.client("iam").get_role(RoleName=role)["Role"]["AssumeRolePolicyDocument"]
    assert trust["Statement"][0]["Principal"]["Service"] == ["scheduler.amazonaws.com"]
    # The one-time event invokes the function with its Input.
    logs, group = cumulo.client("logs"), f"/aws/lambda/{out['FunctionArn'].rsplit(':', 1)[1]}"
    printed, deadline = [], time.time() + 20
    while not printed and time.time() < deadline:
        time.sleep(1)
        try:
            streams = logs.describe_log_streams(logGroupName=group)["logStreams"]
        except logs.exceptions.ResourceNotFoundException:
            continue
        for st in streams:
            for e in logs.get_log_events(logGroupName=group, logStreamName=st["logStreamName"])["events"]:
                if "scheduled" in e["message"]:
                    printed.append(e["message"])
    assert printed and "{'once': True}" in printed[0], printed
    cumulo.aws("cloudformation", "delete-stack", "--stack-name", name)
    cumulo.aws("cloudformation", "wait", "stack-delete-complete", "--stack-name", name)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        scheduler.get_schedule(Name="FnTick")
    assert error(e)[0] == "ResourceNotFoundException"


def test_sns_step_functions_and_eventbridge_targets_fire(cumulo, scheduler, sqs):
    sns, sfn, events = cumulo.client("sns"), cumulo.client("stepfunctions"), cumulo.client("events")
    topic_url, topic_q = queue(sqs)
    topic = sns.create_topic(Name=f"t-{uid()}")["TopicArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=topic_q, Attributes={"RawMessageDelivery": "true"})
    bus_url, bus_q = queue(sqs)
    bus = f"b-{uid()}"
    bus_arn = events.create_event_bus(Name=bus)["EventBusArn"]
    events.put_rule(Name="from-scheduler", EventBusName=bus, EventPattern=json.dumps({"source": ["my.scheduler"]}))
    events.put_targets(Rule="from-scheduler", EventBusName=bus, Targets=[{"Id": "q", "Arn": bus_q}])
    machine = sfn.create_state_machine(
        name=f"m-{uid()}", roleArn=ROLE,
        definition=json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}))["stateMachineArn"]

    when = at(2)
    scheduler.create_schedule(Name=f"sns-{uid()}", ScheduleExpression=when, FlexibleTimeWindow=OFF,
                              Target={"Arn": topic, "RoleArn": ROLE, "Input": "to the topic"})
    scheduler.create_schedule(Name=f"sfn-{uid()}", ScheduleExpression=when, FlexibleTimeWindow=OFF,
                              Target={"Arn": machine, "RoleArn": ROLE, "Input": '{"n": 7}'})
    name = f"bus-{uid()}"
    scheduler.create_schedule(Name=name, ScheduleExpression=when, FlexibleTimeWindow=OFF,
                              Target={"Arn": bus_arn, "RoleArn": ROLE, "Input": '{"k": "v"}',
                                      "EventBridgeParameters": {"Source": "my.scheduler", "DetailType": "tick"}})
    assert drain(sqs, topic_url, 1, timeout=15) == ["to the topic"]
    [event] = [json.loads(b) for b in drain(sqs, bus_url, 1, timeout=5)]
    assert (event["source"], event["detail-type"], event["detail"]) == ("my.scheduler", "tick", {"k": "v"})
    assert event["resources"] == [f"arn:aws:scheduler:us-east-1:000000000000:schedule/default/{name}"]
    [execution] = sfn.list_executions(stateMachineArn=machine)["executions"]
    assert json.loads(sfn.describe_execution(executionArn=execution["executionArn"])["input"]) == {"n": 7}
