"""CloudWatch Logs end to end: groups, streams, events and tags through boto3 and the AWS CLI."""
import time
import uuid

import botocore.exceptions
import pytest

from conftest import CumuloServer


def now_ms():
    return int(time.time() * 1000)


def name(prefix="/test/"):
    return f"{prefix}{uuid.uuid4().hex[:10]}"


@pytest.fixture
def logs(cumulo):
    return cumulo.client("logs")


def error_code(exc):
    return exc.value.response["Error"]["Code"]


def test_group_lifecycle_retention_kms_class_and_tags(logs):
    g = name()
    logs.create_log_group(logGroupName=g, kmsKeyId="arn:aws:kms:us-east-1:000000000000:key/k", tags={"team": "a"},
                          logGroupClass="INFREQUENT_ACCESS")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.create_log_group(logGroupName=g)
    assert error_code(e) == "ResourceAlreadyExistsException"
    logs.put_retention_policy(logGroupName=g, retentionInDays=30)
    [desc] = logs.describe_log_groups(logGroupNamePrefix=g)["logGroups"]
    assert desc["logGroupName"] == g
    assert desc["retentionInDays"] == 30
    assert desc["kmsKeyId"] == "arn:aws:kms:us-east-1:000000000000:key/k"
    assert desc["logGroupClass"] == "INFREQUENT_ACCESS"
    assert desc["arn"] == f"arn:aws:logs:us-east-1:000000000000:log-group:{g}:*"
    assert desc["logGroupArn"] == f"arn:aws:logs:us-east-1:000000000000:log-group:{g}"
    assert abs(desc["creationTime"] - now_ms()) < 60_000
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.put_retention_policy(logGroupName=g, retentionInDays=4)
    assert error_code(e) == "InvalidParameterException"
    logs.delete_retention_policy(logGroupName=g)
    [desc] = logs.describe_log_groups(logGroupNamePrefix=g)["logGroups"]
    assert "retentionInDays" not in desc

    logs.tag_log_group(logGroupName=g, tags={"env": "dev"})
    assert logs.list_tags_log_group(logGroupName=g)["tags"] == {"team": "a", "env": "dev"}
    logs.untag_log_group(logGroupName=g, tags=["team"])
    arn = desc["logGroupArn"]
    logs.tag_resource(resourceArn=arn, tags={"x": "1"})
    assert logs.list_tags_for_resource(resourceArn=arn)["tags"] == {"env": "dev", "x": "1"}
    logs.untag_resource(resourceArn=arn, tagKeys=["env"])
    assert logs.list_tags_log_group(logGroupName=g)["tags"] == {"x": "1"}

    logs.delete_log_group(logGroupName=g)
    assert logs.describe_log_groups(logGroupNamePrefix=g)["logGroups"] == []
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.delete_log_group(logGroupName=g)
    assert error_code(e) == "ResourceNotFoundException"
    assert e.value.response["Error"]["Message"] == "The specified log group does not exist."


def test_bad_names_are_refused(logs):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.create_log_group(logGroupName="has space")
    assert error_code(e) == "InvalidParameterException"
    g = name()
    logs.create_log_group(logGroupName=g)
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.create_log_stream(logGroupName=g, logStreamName="a:b")
    assert error_code(e) == "InvalidParameterException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.create_log_stream(logGroupName=name(), logStreamName="s")
    assert error_code(e) == "ResourceNotFoundException"


def test_describe_log_groups_prefix_pattern_and_pagination(logs):
    base = name("/page/")
    names = [f"{base}/{i:02d}" for i in range(7)] + [f"{base}/Special-X"]
    for n in names:
        logs.create_log_group(logGroupName=n)
    seen, token = [], None
    while True:
        kw = {"logGroupNamePrefix": base, "limit": 3}
        if token:
            kw["nextToken"] = token
        page = logs.describe_log_groups(**kw)
        assert len(page["logGroups"]) <= 3
        seen += [g["logGroupName"] for g in page["logGroups"]]
        token = page.get("nextToken")
        if not token:
            break
    assert seen == sorted(names)
    found = logs.describe_log_groups(logGroupNamePattern="special-x")["logGroups"]
    assert [g["logGroupName"] for g in found if g["logGroupName"].startswith(base)] == [f"{base}/Special-X"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.describe_log_groups(logGroupNamePrefix=base, logGroupNamePattern="x")
    assert error_code(e) == "InvalidParameterException"
    # the paginator follows the same tokens
    pages = logs.get_paginator("describe_log_groups").paginate(logGroupNamePrefix=base, PaginationConfig={"PageSize": 2})
    assert [g["logGroupName"] for p in pages for g in p["logGroups"]] == sorted(names)


def test_streams_ordering_and_pagination(logs):
    g = name()
    logs.create_log_group(logGroupName=g)
    t = now_ms()
    for i, s in enumerate(["c", "a", "b"]):
        logs.create_log_stream(logGroupName=g, logStreamName=s)
        logs.put_log_events(logGroupName=g, logStreamName=s, logEvents=[{"timestamp": t + i, "message": s}])
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.create_log_stream(logGroupName=g, logStreamName="a")
    assert error_code(e) == "ResourceAlreadyExistsException"
    streams = logs.describe_log_streams(logGroupName=g)["logStreams"]
    assert [s["logStreamName"] for s in streams] == ["a", "b", "c"]
    a = streams[0]
    assert a["firstEventTimestamp"] == a["lastEventTimestamp"] == t + 1
    assert a["arn"] == f"arn:aws:logs:us-east-1:000000000000:log-group:{g}:log-stream:a"
    by_time = logs.describe_log_streams(logGroupName=g, orderBy="LastEventTime", descending=True)["logStreams"]
    assert [s["logStreamName"] for s in by_time] == ["b", "a", "c"]
    page1 = logs.describe_log_streams(logGroupName=g, limit=2)
    assert [s["logStreamName"] for s in page1["logStreams"]] == ["a", "b"]
    page2 = logs.describe_log_streams(logGroupName=g, limit=2, nextToken=page1["nextToken"])
    assert [s["logStreamName"] for s in page2["logStreams"]] == ["c"]
    assert "nextToken" not in page2
    assert [s["logStreamName"] for s in logs.describe_log_streams(logGroupName=g, logStreamNamePrefix="b")["logStreams"]] == ["b"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.describe_log_streams(logGroupName=g, orderBy="LastEventTime", logStreamNamePrefix="a")
    assert error_code(e) == "InvalidParameterException"
    logs.delete_log_stream(logGroupName=g, logStreamName="b")
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.delete_log_stream(logGroupName=g, logStreamName="b")
    assert error_code(e) == "ResourceNotFoundException"
    assert e.value.response["Error"]["Message"] == "The specified log stream does not exist."


def test_put_log_events_rules(logs):
    g = name()
    logs.create_log_group(logGroupName=g)
    logs.create_log_stream(logGroupName=g, logStreamName="s")
    t = now_ms()
    out = logs.put_log_events(logGroupName=g, logStreamName="s", sequenceToken="ignored-as-aws-does",
                              logEvents=[{"timestamp": t, "message": "one"}, {"timestamp": t + 1, "message": "two"}])
    assert "rejectedLogEventsInfo" not in out
    assert out["nextSequenceToken"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.put_log_events(logGroupName=g, logStreamName="s",
                            logEvents=[{"timestamp": t + 5, "message": "late"}, {"timestamp": t, "message": "early"}])
    assert error_code(e) == "InvalidParameterException"
    assert "chronological order" in e.value.response["Error"]["Message"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.put_log_events(logGroupName=g, logStreamName="s",
                            logEvents=[{"timestamp": t - 25 * 3600_000, "message": "a"}, {"timestamp": t, "message": "b"}])
    assert "24 hours" in e.value.response["Error"]["Message"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.put_log_events(logGroupName=g, logStreamName="nope", logEvents=[{"timestamp": t, "message": "x"}])
    assert error_code(e) == "ResourceNotFoundException"


def test_rejected_events_are_reported_and_skipped(logs):
    g = name()
    logs.create_log_group(logGroupName=g)
    logs.create_log_stream(logGroupName=g, logStreamName="s")
    t = now_ms()
    out = logs.put_log_events(logGroupName=g, logStreamName="s", logEvents=[
        {"timestamp": t + 1000, "message": "fine"},
        {"timestamp": t + 3 * 3600_000, "message": "too new"},
    ])
    assert out["rejectedLogEventsInfo"] == {"tooNewLogEventStartIndex": 1}
    old = t - 15 * 86400_000
    out = logs.put_log_events(logGroupName=g, logStreamName="s", logEvents=[
        {"timestamp": old, "message": "too old"},
        {"timestamp": old + 1, "message": "too old too"},
    ])
    assert out["rejectedLogEventsInfo"] == {"tooOldLogEventEndIndex": 2}
    logs.put_retention_policy(logGroupName=g, retentionInDays=1)
    out = logs.put_log_events(logGroupName=g, logStreamName="s", logEvents=[
        {"timestamp": t - 25 * 3600_000, "message": "expired"},
        {"timestamp": t - 2 * 3600_000, "message": "kept"},
    ])
    assert out["rejectedLogEventsInfo"] == {"expiredLogEventEndIndex": 1}
    events = logs.get_log_events(logGroupName=g, logStreamName="s", startFromHead=True)["events"]
    assert [e["message"] for e in events] == ["kept", "fine"]


def test_get_log_events_tokens_and_time_range(logs):
    g = name()
    logs.create_log_group(logGroupName=g)
    logs.create_log_stream(logGroupName=g, logStreamName="s")
    t = now_ms() - 60_000
    logs.put_log_events(logGroupName=g, logStreamName="s",
                        logEvents=[{"timestamp": t + i, "message": f"m{i}"} for i in range(10)])
    head = logs.get_log_events(logGroupName=g, logStreamName="s", startFromHead=True, limit=4)
    assert [e["message"] for e in head["events"]] == ["m0", "m1", "m2", "m3"]
    assert head["nextForwardToken"].startswith("f/") and head["nextBackwardToken"].startswith("b/")
    assert head["events"][0]["timestamp"] == t and head["events"][0]["ingestionTime"] >= t
    nxt = logs.get_log_events(logGroupName=g, logStreamName="s", nextToken=head["nextForwardToken"], limit=4)
    assert [e["message"] for e in nxt["events"]] == ["m4", "m5", "m6", "m7"]
    back = logs.get_log_events(logGroupName=g, logStreamName="s", nextToken=nxt["nextBackwardToken"], limit=2)
    assert [e["message"] for e in back["events"]] == ["m2", "m3"]
    last = logs.get_log_events(logGroupName=g, logStreamName="s", nextToken=nxt["nextForwardToken"])
    assert [e["message"] for e in last["events"]] == ["m8", "m9"]
    end = logs.get_log_events(logGroupName=g, logStreamName="s", nextToken=last["nextForwardToken"])
    assert end["events"] == [] and end["nextForwardToken"] == last["nextForwardToken"]
    # new events appear after the end token
    logs.put_log_events(logGroupName=g, logStreamName="s", logEvents=[{"timestamp": t + 20, "message": "m20"}])
    more = logs.get_log_events(logGroupName=g, logStreamName="s", nextToken=end["nextForwardToken"])
    assert [e["message"] for e in more["events"]] == ["m20"]
    tail = logs.get_log_events(logGroupName=g, logStreamName="s", limit=3)
    assert [e["message"] for e in tail["events"]] == ["m8", "m9", "m20"]
    ranged = logs.get_log_events(logGroupName=g, logStreamName="s", startTime=t + 2, endTime=t + 5, startFromHead=True)
    assert [e["message"] for e in ranged["events"]] == ["m2", "m3", "m4"]
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.get_log_events(logGroupName=g, logStreamName="s", nextToken="garbage")
    assert error_code(e) == "InvalidParameterException"


def test_filter_log_events_patterns_interleaving_and_pagination(logs):
    g = name()
    logs.create_log_group(logGroupName=g)
    t = now_ms() - 60_000
    logs.create_log_stream(logGroupName=g, logStreamName="app-1")
    logs.create_log_stream(logGroupName=g, logStreamName="app-2")
    logs.create_log_stream(logGroupName=g, logStreamName="web")
    logs.put_log_events(logGroupName=g, logStreamName="app-1", logEvents=[
        {"timestamp": t, "message": "ERROR disk full"},
        {"timestamp": t + 2, "message": '{"level": "ERROR", "latency": 250, "user": {"id": 7}}'},
        {"timestamp": t + 4, "message": "INFO all good"},
    ])
    logs.put_log_events(logGroupName=g, logStreamName="app-2", logEvents=[
        {"timestamp": t + 1, "message": "ERROR DEBUG noise"},
        {"timestamp": t + 3, "message": '{"level": "INFO", "latency": 50, "user": {"id": 8}}'},
        {"timestamp": t + 5, "message": "WARN page not found"},
    ])
    logs.put_log_events(logGroupName=g, logStreamName="web", logEvents=[
        {"timestamp": t + 6, "message": '10.0.0.1 - bob [10/Oct/2000:13:25:15 -0700] "GET / HTTP/1.0" 404 1534'},
    ])

    def msgs(**kw):
        return [e["message"] for e in logs.filter_log_events(logGroupName=g, **kw)["events"]]

    everything = logs.filter_log_events(logGroupName=g)
    assert len(everything["events"]) == 7
    assert [e["timestamp"] for e in everything["events"]] == [t + i for i in range(7)]  # interleaved
    assert [e["logStreamName"] for e in everything["events"]][:2] == ["app-1", "app-2"]
    assert all(len(e["eventId"]) == 56 for e in everything["events"])
    assert msgs(filterPattern="ERROR") == ["ERROR disk full", "ERROR DEBUG noise",
                                           '{"level": "ERROR", "latency": 250, "user": {"id": 7}}']
    assert msgs(filterPattern="ERROR -DEBUG -latency") == ["ERROR disk full"]
    assert msgs(filterPattern='"not found"') == ["WARN page not found"]
    assert msgs(filterPattern="?WARN ?INFO") == ['{"level": "INFO", "latency": 50, "user": {"id": 8}}',
                                                  "INFO all good", "WARN page not found"]
    assert msgs(filterPattern='{ $.level = "ERROR" }') == ['{"level": "ERROR", "latency": 250, "user": {"id": 7}}']
    assert msgs(filterPattern="{ $.latency < 100 || $.user.id = 7 }") == [
        '{"level": "ERROR", "latency": 250, "user": {"id": 7}}', '{"level": "INFO", "latency": 50, "user": {"id": 8}}']
    assert msgs(filterPattern="{ $.latency > 100 && $.level != \"ERROR\" }") == []
    assert msgs(filterPattern="[ip, id, user, ts, request, status = 404, size > 1000]") == [
        '10.0.0.1 - bob [10/Oct/2000:13:25:15 -0700] "GET / HTTP/1.0" 404 1534']
    assert msgs(logStreamNamePrefix="app-2", filterPattern="ERROR") == ["ERROR DEBUG noise"]
    assert msgs(logStreamNames=["web"]) == ['10.0.0.1 - bob [10/Oct/2000:13:25:15 -0700] "GET / HTTP/1.0" 404 1534']
    assert msgs(startTime=t + 2, endTime=t + 4) == [
        '{"level": "ERROR", "latency": 250, "user": {"id": 7}}',
        '{"level": "INFO", "latency": 50, "user": {"id": 8}}',
        "INFO all good"]

    collected, token = [], None
    while True:
        kw = {"limit": 2}
        if token:
            kw["nextToken"] = token
        page = logs.filter_log_events(logGroupName=g, **kw)
        collected += [e["message"] for e in page["events"]]
        token = page.get("nextToken")
        if not token:
            break
    assert collected == [e["message"] for e in everything["events"]]

    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.filter_log_events(logGroupName=g, filterPattern="{ $.x = ")
    assert error_code(e) == "InvalidParameterException"
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.filter_log_events(logGroupName=g, logStreamNames=["web"], logStreamNamePrefix="a")
    assert error_code(e) == "InvalidParameterException"


def test_cli_round_trip(cumulo):
    g = name()
    cumulo.aws("logs", "create-log-group", "--log-group-name", g)
    cumulo.aws("logs", "create-log-stream", "--log-group-name", g, "--log-stream-name", "cli")
    t = now_ms()
    cumulo.aws("logs", "put-log-events", "--log-group-name", g, "--log-stream-name", "cli",
               "--log-events", f"timestamp={t},message=hello-cli")
    out = cumulo.aws("logs", "get-log-events", "--log-group-name", g, "--log-stream-name", "cli")
    assert [e["message"] for e in out["events"]] == ["hello-cli"]
    out = cumulo.aws("logs", "filter-log-events", "--log-group-name", g, "--filter-pattern", "hello")
    assert [e["message"] for e in out["events"]] == ["hello-cli"]
    groups = cumulo.aws("logs", "describe-log-groups", "--log-group-name-prefix", g)
    assert [x["logGroupName"] for x in groups["logGroups"]] == [g]


def test_deletion_protection_blocks_delete_until_disabled(logs):
    name = f"/protected/{uuid.uuid4().hex[:8]}"
    logs.create_log_group(logGroupName=name, deletionProtectionEnabled=True)
    [g] = logs.describe_log_groups(logGroupNamePrefix=name)["logGroups"]
    assert g["deletionProtectionEnabled"] is True
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.delete_log_group(logGroupName=name)
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert name in e.value.response["Error"]["Message"]
    assert logs.describe_log_groups(logGroupNamePrefix=name)["logGroups"]
    # By ARN; a group that does not exist is ResourceNotFoundException.
    logs.put_log_group_deletion_protection(logGroupIdentifier=g["logGroupArn"], deletionProtectionEnabled=False)
    [g] = logs.describe_log_groups(logGroupNamePrefix=name)["logGroups"]
    assert g["deletionProtectionEnabled"] is False
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.put_log_group_deletion_protection(logGroupIdentifier=name + "-none", deletionProtectionEnabled=True)
    assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"
    logs.delete_log_group(logGroupName=name)
    assert logs.describe_log_groups(logGroupNamePrefix=name)["logGroups"] == []


def test_unimplemented_operation_is_501(logs):
    with pytest.raises(botocore.exceptions.ClientError) as e:
        logs.describe_metric_filters()
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501
    assert "DescribeMetricFilters" in e.value.response["Error"]["Message"]


def test_state_survives_restart_and_kill(fresh_server):
    server = fresh_server.start()
    logs = server.client("logs")
    logs.create_log_group(logGroupName="/durable", tags={"k": "v"}, deletionProtectionEnabled=True)
    logs.put_retention_policy(logGroupName="/durable", retentionInDays=7)
    logs.create_log_stream(logGroupName="/durable", logStreamName="s")
    t = now_ms()
    logs.put_log_events(logGroupName="/durable", logStreamName="s", logEvents=[{"timestamp": t, "message": "kept"}])
    server.kill9()
    server = CumuloServer(data_dir=fresh_server.data_dir)
    server.start()
    try:
        logs = server.client("logs")
        [g] = logs.describe_log_groups(logGroupNamePrefix="/durable")["logGroups"]
        assert g["retentionInDays"] == 7 and g["storedBytes"] == 4
        assert logs.list_tags_log_group(logGroupName="/durable")["tags"] == {"k": "v"}
        [s] = logs.describe_log_streams(logGroupName="/durable")["logStreams"]
        assert s["lastEventTimestamp"] == t
        events = logs.get_log_events(logGroupName="/durable", logStreamName="s")["events"]
        assert [e["message"] for e in events] == ["kept"]
        assert g["deletionProtectionEnabled"] is True
        with pytest.raises(botocore.exceptions.ClientError):
            logs.delete_log_group(logGroupName="/durable")
        logs.put_log_group_deletion_protection(logGroupIdentifier="/durable", deletionProtectionEnabled=False)
        logs.delete_log_group(logGroupName="/durable")
    finally:
        server.stop()
