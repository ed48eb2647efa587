"""The console's JSON API (/_cumulo/api/v1/): every answer held to what the AWS APIs report for the
same state (boto3), bad input refused with a JSON error and nothing changed, the CSRF check of
state-changing calls, the live event stream, and the refusal under --verify-signatures."""
import json
import urllib.parse

import pytest
import requests
from conftest import CumuloServer
from console_stacks import deploy, uid

API = "/_cumulo/api/v1"
CONSOLE = {"X-Cumulo-Console": "1"}


@pytest.fixture(scope="module")
def stacks(cumulo):
    return deploy(cumulo)


@pytest.fixture(scope="module")
def cfn(cumulo):
    return cumulo.client("cloudformation")


def get(cumulo, path, status=200, **params):
    r = requests.get(cumulo.endpoint + API + path, params=params, timeout=10)
    assert r.status_code == status, (path, r.status_code, r.text)
    return r.json()


def error(resp):
    body = resp.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    return body["error"]["code"]


def q(s):
    return urllib.parse.quote(s, safe="")


def test_stacks_nest_children_under_parents_and_show_deleted_on_request(cumulo, stacks, cfn):
    good, failing = stacks
    listed = {s["name"]: s for s in get(cumulo, "/stacks")["stacks"]}
    assert listed[good]["status"] == "CREATE_COMPLETE"
    assert listed[failing]["status"] == "ROLLBACK_COMPLETE"
    child_id = cfn.describe_stack_resource(StackName=good, LogicalResourceId="Child")[
        "StackResourceDetail"
    ]["PhysicalResourceId"]
    nested = listed[good]["nested"]
    assert [n["id"] for n in nested] == [child_id]
    assert nested[0]["parent_id"] == listed[good]["id"]
    assert not any(s["id"] == child_id for s in listed.values())

    gone = f"con-gone-{uid()}"
    cfn.create_stack(StackName=gone, TemplateBody='{"Resources": {"T": {"Type": "AWS::SNS::Topic"}}}')
    cfn.get_waiter("stack_create_complete").wait(StackName=gone, WaiterConfig={"Delay": 1})
    cfn.delete_stack(StackName=gone)
    cfn.get_waiter("stack_delete_complete").wait(StackName=gone, WaiterConfig={"Delay": 1})
    assert gone not in {s["name"] for s in get(cumulo, "/stacks")["stacks"]}
    with_deleted = [s for s in get(cumulo, "/stacks", deleted="true")["stacks"] if s["name"] == gone]
    assert [s["status"] for s in with_deleted] == ["DELETE_COMPLETE"]
    assert with_deleted[0]["deletion_time"]


def test_one_stack_is_what_describe_stacks_says_with_no_echo_masked(cumulo, stacks, cfn):
    good, _ = stacks
    mine = get(cumulo, f"/stacks/{good}")
    aws = cfn.describe_stacks(StackName=good)["Stacks"][0]
    assert (mine["name"], mine["id"], mine["status"]) == (aws["StackName"], aws["StackId"], aws["StackStatus"])
    params = {p["key"]: p["value"] for p in mine["parameters"]}
    assert params == {p["ParameterKey"]: p["ParameterValue"] for p in aws["Parameters"]}
    assert params["Secret"] == "****" and params["Env"] == "dev"
    assert {o["key"]: o["value"] for o in mine["outputs"]} == {
        o["OutputKey"]: o["OutputValue"] for o in aws["Outputs"]
    }
    assert [o["description"] for o in mine["outputs"] if o["key"] == "QueueUrl"] == ["the queue"]
    assert mine["tags"] == [{"key": "owner", "value": "console-test"}]
    # By ARN too (how nested and deleted stacks are reached).
    assert get(cumulo, "/stacks/" + q(aws["StackId"]))["name"] == good


def test_events_are_describe_stack_events_with_the_failure_reason(cumulo, stacks, cfn):
    _, failing = stacks
    mine = get(cumulo, f"/stacks/{failing}/events")["events"]
    aws = cfn.describe_stack_events(StackName=failing)["StackEvents"]
    assert [e["event_id"] for e in mine] == [e["EventId"] for e in aws]
    assert [e["status"] for e in mine] == [e["ResourceStatus"] for e in aws]
    failed = [e for e in mine if e["logical_id"] == "Bad" and e["status"] == "CREATE_FAILED"]
    aws_failed = [e for e in aws if e["LogicalResourceId"] == "Bad" and e["ResourceStatus"] == "CREATE_FAILED"]
    assert len(failed) == 1 and failed[0]["status_reason"] == aws_failed[0]["ResourceStatusReason"]
    assert "VisibilityTimeout" in failed[0]["status_reason"] or "999999" in failed[0]["status_reason"]
    assert mine[0]["status"] == "ROLLBACK_COMPLETE"


def test_resources_carry_cumulo_reasons_and_their_service_views(cumulo, stacks, cfn):
    good, _ = stacks
    mine = {r["logical_id"]: r for r in get(cumulo, f"/stacks/{good}/resources")["resources"]}
    aws = {r["LogicalResourceId"]: r for r in cfn.describe_stack_resources(StackName=good)["StackResources"]}
    assert set(mine) == set(aws)
    for k, r in mine.items():
        assert (r["physical_id"], r["type"], r["status"]) == (
            aws[k].get("PhysicalResourceId"), aws[k]["ResourceType"], aws[k]["ResourceStatus"]
        )
    assert mine["Stub"]["stubbed"] is True
    assert mine["Stub"]["status_reason"] == aws["Stub"]["ResourceStatusReason"]
    assert mine["Stub"]["status_reason"].startswith("cumulo: AWS::Redshift::Cluster is not emulated")
    assert mine["Bucket"]["stubbed"] is False
    assert mine["Bucket"]["view"] == "/_cumulo/console/s3/" + q(f"{good}-bucket")
    assert mine["Queue"]["view"] == "/_cumulo/console/sqs/" + q(f"{good}-queue")


def test_templates_original_and_processed(cumulo, stacks, cfn):
    good, _ = stacks
    mine = get(cumulo, f"/stacks/{good}/template")
    for stage, key in [("Original", "original"), ("Processed", "processed")]:
        # A YAML template comes back as text (botocore parses only JSON ones).
        assert mine[key] == cfn.get_template(StackName=good, TemplateStage=stage)["TemplateBody"]
    assert "!GetAtt Queue.Arn" in mine["original"]


def test_change_sets_with_their_changes(cumulo, stacks, cfn):
    good, _ = stacks
    body = cfn.get_template(StackName=good)["TemplateBody"]
    body = body.replace("Default: dev", "Default: prod")
    cfn.create_change_set(
        StackName=good,
        ChangeSetName="console-cs",
        TemplateBody=body,
        Parameters=[{"ParameterKey": "Secret", "UsePreviousValue": True}],
    )
    cfn.get_waiter("change_set_create_complete").wait(
        StackName=good, ChangeSetName="console-cs", WaiterConfig={"Delay": 1, "MaxAttempts": 30}
    )
    aws = cfn.describe_change_set(StackName=good, ChangeSetName="console-cs")
    mine = [c for c in get(cumulo, f"/stacks/{good}/changesets")["change_sets"] if c["name"] == "console-cs"]
    assert len(mine) == 1
    assert (mine[0]["status"], mine[0]["execution_status"]) == (aws["Status"], aws["ExecutionStatus"])
    assert sorted((c["action"], c["logical_id"]) for c in mine[0]["changes"]) == sorted(
        (c["ResourceChange"]["Action"], c["ResourceChange"]["LogicalResourceId"]) for c in aws["Changes"]
    )
    assert ("Modify", "Queue") in {(c["action"], c["logical_id"]) for c in mine[0]["changes"]}
    cfn.delete_change_set(StackName=good, ChangeSetName="console-cs")


def test_graph_has_every_kind_of_dependency_and_the_statuses(cumulo, stacks):
    good, failing = stacks
    g = get(cumulo, f"/stacks/{good}/graph")
    nodes = {n["id"]: n for n in g["nodes"]}
    assert set(nodes) == {"Bucket", "Queue", "Param", "Named", "Stub", "Child"}
    edges = {(e["from"], e["to"]): e["kinds"] for e in g["edges"]}
    assert edges == {
        ("Param", "Bucket"): ["DependsOn"],
        ("Param", "Queue"): ["GetAtt"],
        ("Named", "Param"): ["Sub"],
    }
    assert nodes["Param"]["level"] == 1 and nodes["Named"]["level"] == 2 and nodes["Queue"]["level"] == 0
    assert nodes["Stub"]["stubbed"] is True and nodes["Stub"]["status_reason"].startswith("cumulo:")
    assert all(n["status"] == "CREATE_COMPLETE" for n in nodes.values())
    failed = {n["id"]: n for n in get(cumulo, f"/stacks/{failing}/graph")["nodes"]}
    assert failed["Bad"]["status"] in ("CREATE_FAILED", "DELETE_COMPLETE")
    assert [(e["from"], e["to"], e["kinds"]) for e in get(cumulo, f"/stacks/{failing}/graph")["edges"]] == [
        ("Bad", "Good", ["DependsOn"])
    ]


def test_s3_buckets_objects_paging_download_upload(cumulo, stacks):
    good, _ = stacks
    s3 = cumulo.client("s3")
    bucket = f"{good}-bucket"
    assert bucket in {b["name"] for b in get(cumulo, "/s3/buckets")["buckets"]}
    keys = [f"dir/k{i}.txt" for i in range(5)]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=k.encode(), ContentType="text/plain")
    seen, marker = [], None
    while True:
        params = {"max-keys": 2, **({"marker": marker} if marker else {})}
        page = get(cumulo, f"/s3/buckets/{bucket}/objects", **params)
        assert len(page["objects"]) <= 2
        seen += [o["key"] for o in page["objects"]]
        if not page["is_truncated"]:
            assert page["next_marker"] is None
            break
        marker = page["next_marker"]
    aws = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert seen == aws == sorted(keys)
    listed = get(cumulo, f"/s3/buckets/{bucket}/objects")["objects"][0]
    head = s3.head_object(Bucket=bucket, Key=keys[0])
    assert (listed["size"], listed["etag"]) == (head["ContentLength"], head["ETag"])
    folders = get(cumulo, f"/s3/buckets/{bucket}/objects", delimiter="/")
    assert folders["common_prefixes"] == ["dir/"] and folders["objects"] == []

    r = requests.get(f"{cumulo.endpoint}{API}/s3/buckets/{bucket}/objects/dir/k1.txt", timeout=10)
    assert r.status_code == 200 and r.content == b"dir/k1.txt"
    assert r.headers["content-type"] == "text/plain"
    assert "attachment" in r.headers["content-disposition"]

    key = "up loads/ü.bin"
    url = f"{cumulo.endpoint}{API}/s3/buckets/{bucket}/objects/{urllib.parse.quote(key)}"
    r = requests.put(url, data=b"\x00\x01payload", headers={**CONSOLE, "Content-Type": "application/x-test"}, timeout=10)
    assert r.status_code == 201, r.text
    got = s3.get_object(Bucket=bucket, Key=key)
    assert got["Body"].read() == b"\x00\x01payload" and got["ContentType"] == "application/x-test"
    assert r.json()["etag"] == got["ETag"]


def test_s3_bad_input_changes_nothing(cumulo, stacks):
    good, _ = stacks
    s3 = cumulo.client("s3")
    bucket = f"{good}-bucket"
    base = f"{cumulo.endpoint}{API}/s3/buckets"
    before = s3.list_objects_v2(Bucket=bucket).get("KeyCount", 0)
    big = b"x" * (8 * 1024 * 1024 + 1)
    r = requests.put(f"{base}/{bucket}/objects/big", data=big, headers=CONSOLE, timeout=30)
    assert r.status_code == 413 and error(r) == "EntityTooLarge"
    r = requests.put(f"{base}/no-such-bucket-{uid()}/objects/k", data=b"x", headers=CONSOLE, timeout=10)
    assert r.status_code == 404 and error(r) == "NoSuchBucket"
    r = requests.get(f"{base}/{bucket}/objects/missing", timeout=10)
    assert r.status_code == 404 and error(r) == "NoSuchKey"
    for bad in ["0", "-1", "abc", "1001"]:
        r = requests.get(f"{base}/{bucket}/objects", params={"max-keys": bad}, timeout=10)
        assert r.status_code == 400 and error(r) == "BadRequest", bad
    # Cross-site and headerless uploads are refused before anything is written.
    r = requests.put(f"{base}/{bucket}/objects/csrf", data=b"x", headers={"Origin": "http://evil.example"}, timeout=10)
    assert r.status_code == 403 and error(r) == "Forbidden"
    r = requests.put(f"{base}/{bucket}/objects/csrf", data=b"x", timeout=10)
    assert r.status_code == 403
    assert s3.list_objects_v2(Bucket=bucket).get("KeyCount", 0) == before


def test_sqs_queue_attributes_peek_send_purge(cumulo, stacks):
    good, _ = stacks
    sqs = cumulo.client("sqs")
    name = f"{good}-queue"
    url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    listed = {x["name"]: x for x in get(cumulo, "/sqs/queues")["queues"]}
    assert listed[name]["url"] == url
    mine = get(cumulo, f"/sqs/queues/{name}")
    aws = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert mine["attributes"]["QueueArn"] == aws["QueueArn"]
    assert mine["attributes"]["VisibilityTimeout"] == aws["VisibilityTimeout"]

    base = f"{cumulo.endpoint}{API}/sqs/queues/{name}"
    r = requests.post(f"{base}/messages", json={"body": "from the console"}, headers=CONSOLE, timeout=10)
    assert r.status_code == 200, r.text
    sent = r.json()["message_id"]
    own = {"Origin": cumulo.endpoint}
    r = requests.post(f"{base}/messages", json={"body": "second"}, headers=own, timeout=10)
    assert r.status_code == 200, r.text
    for _ in range(2):  # peeking twice: nothing consumed
        peeked = get(cumulo, f"/sqs/queues/{name}/messages")["messages"]
        assert [m["body"] for m in peeked] == ["from the console", "second"]
        assert peeked[0]["message_id"] == sent and peeked[0]["receive_count"] == 0
        assert peeked[0]["state"] == "visible"
    assert len(get(cumulo, f"/sqs/queues/{name}/messages", max=1)["messages"]) == 1
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1)["Messages"]
    assert sorted(m["Body"] for m in got) == ["from the console", "second"]
    assert {m["MessageId"] for m in got} >= {sent}
    peeked = get(cumulo, f"/sqs/queues/{name}/messages")["messages"]
    assert {m["state"] for m in peeked} == {"in_flight"}

    # Refused: cross-site, headerless, malformed; nothing sent.
    for headers, body in [
        ({"Origin": "http://evil.example"}, {"body": "x"}),
        ({}, {"body": "x"}),
    ]:
        r = requests.post(f"{base}/messages", json=body, headers=headers, timeout=10)
        assert r.status_code == 403 and error(r) == "Forbidden"
    for body in [b"not json", b'{"nobody": 1}', b'{"body": 5}']:
        r = requests.post(f"{base}/messages", data=body, headers=CONSOLE, timeout=10)
        assert r.status_code == 400 and error(r) == "BadRequest", body
    r = requests.post(f"{base}/messages", json={"body": "x", "delay_seconds": 9999}, headers=CONSOLE, timeout=10)
    assert r.status_code == 400, r.text
    r = requests.post(f"{base}/purge", headers={"Origin": "http://evil.example"}, timeout=10)
    assert r.status_code == 403
    assert len(get(cumulo, f"/sqs/queues/{name}/messages")["messages"]) == 2

    r = requests.post(f"{base}/purge", headers=CONSOLE, timeout=10)
    assert r.status_code == 200, r.text
    assert get(cumulo, f"/sqs/queues/{name}/messages")["messages"] == []
    assert "Messages" not in sqs.receive_message(QueueUrl=url, WaitTimeSeconds=0)
    r = requests.post(f"{base}/purge", headers=CONSOLE, timeout=10)
    assert r.status_code == 403 and error(r) == "PurgeQueueInProgress"


def test_unknown_things_and_malformed_parameters(cumulo, stacks):
    for path in ["", "/events", "/resources", "/template", "/changesets", "/graph"]:
        r = requests.get(f"{cumulo.endpoint}{API}/stacks/nope-{uid()}{path}", timeout=10)
        assert r.status_code == 404 and error(r) == "StackNotFound", path
        assert "does not exist" in r.json()["error"]["message"]
    for path in ["/sqs/queues/nope", "/sqs/queues/nope/messages"]:
        r = requests.get(cumulo.endpoint + API + path, timeout=10)
        assert r.status_code == 404 and error(r) == "QueueDoesNotExist"
    r = requests.get(f"{cumulo.endpoint}{API}/nothing-here", timeout=10)
    assert r.status_code == 404 and error(r) == "NotFound"
    r = requests.get(f"{cumulo.endpoint}/_cumulo/api/v2/stacks", timeout=10)
    assert r.status_code == 404 and error(r) == "NotFound"
    r = requests.delete(f"{cumulo.endpoint}{API}/stacks", headers=CONSOLE, timeout=10)
    assert r.status_code == 404
    for params in [{"region": "mars"}, {"deleted": "maybe"}]:
        r = requests.get(f"{cumulo.endpoint}{API}/stacks", params=params, timeout=10)
        assert r.status_code == 400 and error(r) == "BadRequest", params
    r = requests.get(f"{cumulo.endpoint}{API}/sqs/queues/x/messages", params={"max": "lots"}, timeout=10)
    assert r.status_code == 400
    r = requests.get(f"{cumulo.endpoint}{API}/search", timeout=10)
    assert r.status_code == 400 and error(r) == "BadRequest"
    # Another region holds none of it.
    assert get(cumulo, "/stacks", region="eu-west-1")["stacks"] == []


def test_search_finds_by_name_id_and_arn(cumulo, stacks, cfn):
    good, _ = stacks
    hits = get(cumulo, "/search", q=f"arn:aws:s3:::{good}-bucket")["results"]
    assert [(h["kind"], h["name"]) for h in hits] == [("bucket", f"{good}-bucket")]
    # By name: the bucket and the stack resource whose physical id it is.
    hits = get(cumulo, "/search", q=f"{good}-BUCKET")["results"]
    assert {(h["kind"], h["name"]) for h in hits} == {("bucket", f"{good}-bucket"), ("resource", "Bucket")}
    url = cumulo.client("sqs").get_queue_url(QueueName=f"{good}-queue")["QueueUrl"]
    hits = get(cumulo, "/search", q=url)["results"]
    assert ("resource", "Queue", good) in {(h["kind"], h["name"], h.get("stack")) for h in hits}
    stack_id = cfn.describe_stacks(StackName=good)["Stacks"][0]["StackId"]
    hits = get(cumulo, "/search", q=stack_id.upper())["results"]
    assert [h["name"] for h in hits if h["kind"] == "stack"] == [good]
    assert get(cumulo, "/search", q=f"nothing-{uid()}")["results"] == []


def test_event_stream_sends_stacks_and_the_stacks_progress(cumulo, stacks):
    good, _ = stacks
    with requests.get(
        f"{cumulo.endpoint}{API}/events/stream", params={"stack": good}, stream=True, timeout=10
    ) as r:
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/event-stream"
        events, name = {}, None
        for line in r.iter_lines(decode_unicode=True):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name:
                events[name] = json.loads(line[6:])
                if {"stacks", "stack"} <= set(events):
                    break
    assert good in {s["name"] for s in events["stacks"]}
    assert events["stack"]["stack"] == good and events["stack"]["status"] == "CREATE_COMPLETE"
    assert events["stack"]["events"] > 0


def test_pages_are_served_and_unknown_pages_are_404(cumulo, stacks):
    good, _ = stacks
    for path in ["/", f"/stacks/{good}", "/s3/", f"/s3/{good}-bucket", "/sqs/", "/search"]:
        r = requests.get(f"{cumulo.endpoint}/_cumulo/console{path}", timeout=10)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html"), path
        assert "default-src 'self'" in r.headers["content-security-policy"]
    r = requests.get(f"{cumulo.endpoint}/_cumulo/console", allow_redirects=False, timeout=10)
    assert r.status_code == 301 and r.headers["location"] == "/_cumulo/console/"
    r = requests.get(f"{cumulo.endpoint}/_cumulo/console/stacks/%3Cscript%3E", timeout=10)
    assert "<script>" not in r.text.split("</head>")[1]
    r = requests.get(f"{cumulo.endpoint}/_cumulo/console/nowhere", timeout=10)
    assert r.status_code == 404 and "No such page" in r.text
    r = requests.get(f"{cumulo.endpoint}/_cumulo/console/assets/app.js", timeout=10)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")


def post(cumulo, path, status=200, headers=CONSOLE, **kw):
    r = requests.post(cumulo.endpoint + API + path, headers=headers, timeout=30, **kw)
    assert r.status_code == status, (path, r.status_code, r.text)
    return r


def test_sns_topics_with_attributes_and_subscriptions(cumulo):
    sns, sqs = cumulo.client("sns"), cumulo.client("sqs")
    name = f"con-topic-{uid()}"
    arn = sns.create_topic(Name=name, Attributes={"DisplayName": "Console"}, Tags=[{"Key": "team", "Value": "a"}])["TopicArn"]
    qarn = sqs.get_queue_attributes(
        QueueUrl=sqs.create_queue(QueueName=f"{name}-q")["QueueUrl"], AttributeNames=["QueueArn"]
    )["Attributes"]["QueueArn"]
    sub = sns.subscribe(TopicArn=arn, Protocol="sqs", Endpoint=qarn, Attributes={"RawMessageDelivery": "true"})["SubscriptionArn"]
    sns.subscribe(TopicArn=arn, Protocol="email", Endpoint="someone@example.com")
    listed = {t["name"]: t for t in get(cumulo, "/sns/topics")["topics"]}
    assert listed[name]["arn"] == arn and listed[name]["display_name"] == "Console"
    assert (listed[name]["subscriptions_confirmed"], listed[name]["subscriptions_pending"]) == ("1", "1")
    for subject in (name, arn):
        mine = get(cumulo, "/sns/topics/" + q(subject))
        assert mine["arn"] == arn
    assert mine["attributes"] == sns.get_topic_attributes(TopicArn=arn)["Attributes"]
    assert mine["tags"] == {"team": "a"}
    aws = {s["Endpoint"]: s for s in sns.list_subscriptions_by_topic(TopicArn=arn)["Subscriptions"]}
    subs = {s["endpoint"]: s for s in mine["subscriptions"]}
    assert set(subs) == set(aws) == {qarn, "someone@example.com"}
    assert subs[qarn]["arn"] == sub and subs[qarn]["protocol"] == "sqs"
    assert subs[qarn]["attributes"] == sns.get_subscription_attributes(SubscriptionArn=sub)["Attributes"]
    assert subs["someone@example.com"]["arn"] == "PendingConfirmation"
    r = requests.get(f"{cumulo.endpoint}{API}/sns/topics/nope-{uid()}", timeout=10)
    assert r.status_code == 404 and error(r) == "NotFound"


def test_dynamodb_tables_scan_query_and_paging(cumulo):
    ddb = cumulo.client("dynamodb")
    name = f"con-table-{uid()}"
    ddb.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        Tags=[{"Key": "team", "Value": "b"}],
    )
    for pk in ("a", "b"):
        for sk in range(5):
            ddb.put_item(TableName=name, Item={"pk": {"S": pk}, "sk": {"N": str(sk)}, "v": {"S": f"{pk}{sk}"}})
    listed = {t["name"]: t for t in get(cumulo, "/dynamodb/tables")["tables"]}
    assert listed[name]["item_count"] == 10 and listed[name]["status"] == "ACTIVE"
    assert listed[name]["billing_mode"] == "PAY_PER_REQUEST"
    mine = get(cumulo, f"/dynamodb/tables/{name}")
    aws = ddb.describe_table(TableName=name)["Table"]
    assert mine["table"]["TableArn"] == aws["TableArn"] and mine["table"]["KeySchema"] == aws["KeySchema"]
    assert mine["tags"] == [{"key": "team", "value": "b"}]

    seen, start = [], None
    while True:
        page = get(cumulo, f"/dynamodb/tables/{name}/items", limit=3, **({"start": json.dumps(start)} if start else {}))
        assert page["operation"] == "Scan" and len(page["items"]) <= 3
        seen += page["items"]
        start = page["last_evaluated_key"]
        if not start:
            break
    assert sorted(seen, key=json.dumps) == sorted(ddb.scan(TableName=name)["Items"], key=json.dumps)

    values = json.dumps({":pk": {"S": "b"}, ":lo": {"N": "2"}})
    page = get(cumulo, f"/dynamodb/tables/{name}/items", key_condition="pk = :pk AND sk >= :lo", values=values, forward="false")
    aws = ddb.query(TableName=name, KeyConditionExpression="pk = :pk AND sk >= :lo",
                    ExpressionAttributeValues=json.loads(values), ScanIndexForward=False)["Items"]
    assert page["operation"] == "Query" and page["items"] == aws
    assert [i["sk"]["N"] for i in page["items"]] == ["4", "3", "2"]
    page = get(cumulo, f"/dynamodb/tables/{name}/items", filter="#v = :v",
               names=json.dumps({"#v": "v"}), values=json.dumps({":v": {"S": "a3"}}))
    assert [i["v"]["S"] for i in page["items"]] == ["a3"] and page["scanned_count"] == 10

    base = f"{cumulo.endpoint}{API}/dynamodb/tables"
    for params in [{"limit": "0"}, {"limit": "x"}, {"start": "not json"}, {"values": "[1]"}, {"forward": "maybe"}]:
        r = requests.get(f"{base}/{name}/items", params=params, timeout=10)
        assert r.status_code == 400 and error(r) == "BadRequest", params
    r = requests.get(f"{base}/{name}/items", params={"key_condition": "nokey = :x", "values": json.dumps({":x": {"S": "1"}})}, timeout=10)
    assert r.status_code == 400 and error(r) == "ValidationException"
    for path in [f"/nope-{uid()}", f"/nope-{uid()}/items"]:
        r = requests.get(base + path, timeout=10)
        assert r.status_code == 400 and error(r) == "ResourceNotFoundException", path
    assert ddb.describe_table(TableName=name)["Table"]["ItemCount"] == 10


def test_ssm_parameters_hide_secure_strings_until_revealed(cumulo):
    ssm = cumulo.client("ssm")
    p = f"/con-{uid()}"
    ssm.put_parameter(Name=f"{p}/plain", Value="visible", Type="String", Description="plain one")
    ssm.put_parameter(Name=f"{p}/plain", Value="visible2", Type="String", Overwrite=True)
    ssm.put_parameter(Name=f"{p}/secure", Value="s3cr3t-value", Type="SecureString", Tags=[{"Key": "k", "Value": "v"}])
    listed = {x["name"]: x for x in get(cumulo, "/ssm/parameters")["parameters"]}
    assert listed[f"{p}/plain"]["value"] == "visible2" and listed[f"{p}/plain"]["version"] == 2
    assert listed[f"{p}/secure"]["value"] == "****" and listed[f"{p}/secure"]["hidden"] is True
    r = requests.get(f"{cumulo.endpoint}{API}/ssm/parameters", timeout=10)
    assert "s3cr3t-value" not in r.text
    plain = get(cumulo, "/ssm/parameters/" + q(f"{p}/plain"))
    aws = ssm.get_parameter(Name=f"{p}/plain")["Parameter"]
    assert (plain["value"], plain["version"], plain["arn"], plain["type"]) == (aws["Value"], aws["Version"], aws["ARN"], aws["Type"])
    assert [v["version"] for v in plain["versions"]] == [1, 2]
    described = ssm.describe_parameters(ParameterFilters=[{"Key": "Name", "Values": [f"{p}/plain"]}])["Parameters"][0]
    assert plain["description"] == described.get("Description")
    r = requests.get(f"{cumulo.endpoint}{API}/ssm/parameters/" + q(f"{p}/secure"), timeout=10)
    assert r.status_code == 200 and "s3cr3t-value" not in r.text
    secure = r.json()
    assert secure["value"] == "****" and secure["tags"] == {"k": "v"}
    # Revealing is a separate POST behind the CSRF check.
    reveal = f"/ssm/parameters/{q(p + '/secure')}/reveal"
    for headers in ({}, {"Origin": "http://evil.example"}):
        r = post(cumulo, reveal, status=403, headers=headers)
        assert error(r) == "Forbidden" and "s3cr3t-value" not in r.text
    assert requests.get(cumulo.endpoint + API + reveal, timeout=10).status_code == 404
    r = post(cumulo, reveal)
    assert r.json()["value"] == "s3cr3t-value" and r.headers["cache-control"] == "no-store"
    assert ssm.get_parameter(Name=f"{p}/secure", WithDecryption=True)["Parameter"]["Value"] == "s3cr3t-value"
    for path in [f"/ssm/parameters/{q(p + '/none')}"]:
        r = requests.get(cumulo.endpoint + API + path, timeout=10)
        assert r.status_code == 404 and error(r) == "ParameterNotFound"
    r = post(cumulo, f"/ssm/parameters/{q(p + '/none')}/reveal", status=404)
    assert error(r) == "ParameterNotFound"


def test_secrets_are_hidden_until_revealed(cumulo):
    sm = cumulo.client("secretsmanager")
    name = f"con/secret-{uid()}"
    arn = sm.create_secret(Name=name, SecretString='{"password": "pa55"}', Description="db",
                           Tags=[{"Key": "k", "Value": "v"}])["ARN"]
    r = requests.get(f"{cumulo.endpoint}{API}/secretsmanager/secrets", timeout=10)
    assert r.status_code == 200 and "pa55" not in r.text
    listed = {x["name"]: x for x in r.json()["secrets"]}
    assert listed[name]["arn"] == arn and listed[name]["description"] == "db"
    for subject in (name, arn):
        r = requests.get(f"{cumulo.endpoint}{API}/secretsmanager/secrets/{q(subject)}", timeout=10)
        assert r.status_code == 200 and "pa55" not in r.text
    mine = r.json()
    aws = sm.describe_secret(SecretId=arn)
    assert mine["tags"] == [{"key": "k", "value": "v"}]
    assert {v["version_id"]: v["stages"] for v in mine["versions"]} == aws["VersionIdsToStages"]
    reveal = f"/secretsmanager/secrets/{q(arn)}/reveal"
    r = post(cumulo, reveal, status=403, headers={"Origin": "http://evil.example"})
    assert "pa55" not in r.text
    got = post(cumulo, reveal).json()
    assert got["secret_string"] == '{"password": "pa55"}' and got["secret_binary"] is None
    assert got["version_id"] == sm.get_secret_value(SecretId=arn)["VersionId"]
    r = post(cumulo, f"/secretsmanager/secrets/{q('nope-' + uid())}/reveal", status=400)
    assert error(r) == "ResourceNotFoundException"
    r = post(cumulo, reveal + "?version_id=nope", status=400)
    assert error(r) == "ResourceNotFoundException"


PY_HANDLER = """
def handler(event, context):
    print("console says", event.get("say"))
    if event.get("fail"):
        raise ValueError("asked to fail")
    return {"echo": event}
"""


def test_lambda_configuration_and_invoke(cumulo):
    import io
    import zipfile

    lam = cumulo.client("lambda")
    name = f"con-fn-{uid()}"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("app.py", PY_HANDLER)
    lam.create_function(FunctionName=name, Runtime="python3.11", Role="arn:aws:iam::000000000000:role/r",
                        Handler="app.handler", Code={"ZipFile": buf.getvalue()},
                        Environment={"Variables": {"MODE": "test"}}, Tags={"team": "c"})
    lam.get_waiter("function_active_v2").wait(FunctionName=name, WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    listed = {f["name"]: f for f in get(cumulo, "/lambda/functions")["functions"]}
    assert listed[name]["runtime"] == "python3.11" and listed[name]["state"] == "Active"
    mine = get(cumulo, f"/lambda/functions/{name}")
    aws = lam.get_function_configuration(FunctionName=name)
    aws.pop("ResponseMetadata")
    assert mine["configuration"] == json.loads(json.dumps(aws))
    assert mine["tags"] == {"team": "c"} and mine["log_group"] == f"/aws/lambda/{name}"

    base = f"/lambda/functions/{name}/invoke"
    r = post(cumulo, base, data=json.dumps({"say": "hello"}))
    out = r.json()
    assert out["payload_json"] == {"echo": {"say": "hello"}} and out["function_error"] is None
    assert "console says hello" in out["log_tail"] and out["executed_version"] == "$LATEST"
    out = post(cumulo, base, data=json.dumps({"fail": True})).json()
    assert out["function_error"] == "Unhandled" and out["payload_json"]["errorMessage"] == "asked to fail"
    r = post(cumulo, base, status=400, data="not json")
    assert error(r) == "InvalidRequestContentException"
    r = post(cumulo, base, status=403, headers={"Origin": "http://evil.example"}, data="{}")
    assert error(r) == "Forbidden"
    r = post(cumulo, f"/lambda/functions/nope-{uid()}/invoke", status=404, data="{}")
    assert error(r) == "ResourceNotFoundException"
    r = requests.get(f"{cumulo.endpoint}{API}/lambda/functions/nope-{uid()}", timeout=10)
    assert r.status_code == 404 and error(r) == "ResourceNotFoundException"
    # Recent invocations come from the REPORT lines of its log group, newest first.
    recent = get(cumulo, f"/lambda/functions/{name}")["recent_invocations"]
    assert len(recent) == 2 and all(r["report"].startswith("REPORT RequestId: " + r["request_id"]) for r in recent)
    assert recent[0]["timestamp"] >= recent[1]["timestamp"]
    # The invocations' logs are in the function's log group, which the Logs view shows.
    events = get(cumulo, f"/logs/groups/{q('/aws/lambda/' + name)}/events", filter="console")["events"]
    assert any("console says hello" in e["message"] for e in events)


def test_logs_groups_streams_and_events(cumulo):
    logs = cumulo.client("logs")
    group = f"/con/{uid()}"
    logs.create_log_group(logGroupName=group, tags={"team": "d"})
    logs.put_retention_policy(logGroupName=group, retentionInDays=7)
    for stream in ("s1", "s2"):
        logs.create_log_stream(logGroupName=group, logStreamName=stream)
    import time

    now = int(time.time() * 1000)
    logs.put_log_events(logGroupName=group, logStreamName="s1",
                        logEvents=[{"timestamp": now + i, "message": f"line {i} ERROR" if i % 2 else f"line {i}"} for i in range(5)])
    logs.put_log_events(logGroupName=group, logStreamName="s2", logEvents=[{"timestamp": now + 10, "message": "other"}])
    listed = {g["name"]: g for g in get(cumulo, "/logs/groups")["groups"]}
    aws = logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"][0]
    assert listed[group]["arn"] == aws["arn"] and listed[group]["retention_in_days"] == 7
    streams = get(cumulo, f"/logs/groups/{q(group)}/streams")
    assert [s["name"] for s in streams["streams"]] == ["s2", "s1"]  # latest event first
    events = get(cumulo, f"/logs/groups/{q(group)}/streams/s1/events", start_from_head="true")
    aws = logs.get_log_events(logGroupName=group, logStreamName="s1", startFromHead=True)
    assert [e["message"] for e in events["events"]] == [e["message"] for e in aws["events"]]
    assert [e["timestamp"] for e in events["events"]] == [now + i for i in range(5)]
    page = get(cumulo, f"/logs/groups/{q(group)}/streams/s1/events", start_from_head="true", limit=2)
    assert [e["message"] for e in page["events"]] == ["line 0", "line 1 ERROR"]
    nxt = get(cumulo, f"/logs/groups/{q(group)}/streams/s1/events", start_from_head="true", limit=2,
              next_token=page["next_forward_token"])
    assert [e["message"] for e in nxt["events"]] == ["line 2", "line 3 ERROR"]
    hits = get(cumulo, f"/logs/groups/{q(group)}/events", filter="ERROR")["events"]
    assert [(e["stream"], e["message"]) for e in hits] == [("s1", "line 1 ERROR"), ("s1", "line 3 ERROR")]
    tail = get(cumulo, f"/logs/groups/{q(group)}/events", start_time=str(now + 4))["events"]
    assert [e["message"] for e in tail] == ["line 4", "other"]
    for params in [{"start_time": "yesterday"}, {"limit": "0"}, {"start_time": "-5"}]:
        r = requests.get(f"{cumulo.endpoint}{API}/logs/groups/{q(group)}/events", params=params, timeout=10)
        assert r.status_code == 400 and error(r) == "BadRequest", params
    r = requests.get(f"{cumulo.endpoint}{API}/logs/groups/{q(group)}/streams/nope/events", timeout=10)
    assert r.status_code == 400 and error(r) == "ResourceNotFoundException"
    for path in ["/streams", "/events"]:
        r = requests.get(f"{cumulo.endpoint}{API}/logs/groups/{q('/nope/' + uid())}{path}", timeout=10)
        assert r.status_code == 400 and error(r) == "ResourceNotFoundException", path


def test_iam_roles_and_policies(cumulo):
    iam = cumulo.client("iam")
    name = f"con-role-{uid()}"
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    doc = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]}
    role_arn = iam.create_role(RoleName=name, AssumeRolePolicyDocument=json.dumps(trust), Tags=[{"Key": "k", "Value": "v"}])["Role"]["Arn"]
    iam.put_role_policy(RoleName=name, PolicyName="inline", PolicyDocument=json.dumps(doc))
    policy_arn = iam.create_policy(PolicyName=f"{name}-p", PolicyDocument=json.dumps(doc))["Policy"]["Arn"]
    iam.attach_role_policy(RoleName=name, PolicyArn=policy_arn)
    listed = {r["name"]: r for r in get(cumulo, "/iam/roles")["roles"]}
    assert listed[name]["arn"] == role_arn
    mine = get(cumulo, f"/iam/roles/{name}")
    assert mine["assume_role_policy"] == trust and mine["tags"] == [{"key": "k", "value": "v"}]
    assert mine["inline_policies"] == [{"name": "inline", "document": doc}]
    assert mine["attached_policies"] == [p["PolicyArn"] for p in iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]]
    assert policy_arn in {p["arn"] for p in get(cumulo, "/iam/policies")["policies"]}
    assert "arn:aws:iam::aws:policy/AdministratorAccess" not in {p["arn"] for p in get(cumulo, "/iam/policies")["policies"]}
    assert "arn:aws:iam::aws:policy/AdministratorAccess" in {p["arn"] for p in get(cumulo, "/iam/policies", scope="AWS")["policies"]}
    pol = get(cumulo, "/iam/policies/" + q(policy_arn))
    assert pol["document"] == doc and pol["attachment_count"] == 1
    assert pol["default_version"] == iam.get_policy(PolicyArn=policy_arn)["Policy"]["DefaultVersionId"]
    r = requests.get(f"{cumulo.endpoint}{API}/iam/roles/nope-{uid()}", timeout=10)
    assert r.status_code == 404 and error(r) == "NoSuchEntity"
    r = requests.get(f"{cumulo.endpoint}{API}/iam/policies", params={"scope": "mine"}, timeout=10)
    assert r.status_code == 400 and error(r) == "BadRequest"


def test_kms_keys_and_eventbridge_rules(cumulo):
    kms, events = cumulo.client("kms"), cumulo.client("events")
    key = kms.create_key(Description="console key", Tags=[{"TagKey": "k", "TagValue": "v"}])["KeyMetadata"]
    alias = f"alias/con-{uid()}"
    kms.create_alias(AliasName=alias, TargetKeyId=key["KeyId"])
    listed = {k["key_id"]: k for k in get(cumulo, "/kms/keys")["keys"]}
    assert listed[key["KeyId"]]["aliases"] == [alias] and listed[key["KeyId"]]["key_state"] == "Enabled"
    for subject in (key["KeyId"], key["Arn"], alias):
        mine = get(cumulo, "/kms/keys/" + q(subject))
        assert mine["key_id"] == key["KeyId"]
    aws = kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]
    assert mine["metadata"]["Arn"] == aws["Arn"] and mine["metadata"]["Description"] == "console key"
    assert mine["metadata"]["KeyState"] == aws["KeyState"]
    assert mine["policy"] == json.loads(kms.get_key_policy(KeyId=key["KeyId"], PolicyName="default")["Policy"])
    assert mine["tags"] == [{"key": "k", "value": "v"}]
    r = requests.get(f"{cumulo.endpoint}{API}/kms/keys/{q('alias/nope-' + uid())}", timeout=10)
    assert r.status_code == 400 and error(r) == "NotFoundException"

    rule = f"con-rule-{uid()}"
    # A source of its own: the session's server is shared, and the rule's target does not exist.
    pattern = {"source": [f"console.{uid()}"]}
    events.put_rule(Name=rule, EventPattern=json.dumps(pattern), Description="d")
    events.put_targets(Rule=rule, Targets=[{"Id": "t1", "Arn": "arn:aws:sqs:us-east-1:000000000000:q", "Input": '{"a": 1}'}])
    bus = f"con-bus-{uid()}"
    events.create_event_bus(Name=bus)
    events.put_rule(Name="on-bus", EventBusName=bus, EventPattern=json.dumps({"source": ["other"]}), State="DISABLED")
    buses = {b["name"]: b for b in get(cumulo, "/events/rules")["event_buses"]}
    assert rule in {r["name"] for r in buses["default"]["rules"]}
    assert [(r["name"], r["state"], r["event_pattern"]) for r in buses[bus]["rules"]] == [("on-bus", "DISABLED", {"source": ["other"]})]
    mine = get(cumulo, f"/events/rules/{rule}")
    aws = events.describe_rule(Name=rule)
    assert (mine["arn"], mine["state"], mine["event_pattern"]) == (aws["Arn"], aws["State"], pattern)
    assert [(t["id"], t["arn"], t["input"]) for t in mine["targets"]] == [
        (t["Id"], t["Arn"], t["Input"]) for t in events.list_targets_by_rule(Rule=rule)["Targets"]
    ]
    on_bus = events.describe_rule(Name="on-bus", EventBusName=bus)["Arn"]
    assert get(cumulo, "/events/rules/on-bus", bus=bus)["arn"] == on_bus
    assert get(cumulo, "/events/rules/" + q(f"{bus}|on-bus"))["arn"] == on_bus
    hits = get(cumulo, "/search", q=on_bus)["results"]
    assert [(h["kind"], h["view"]) for h in hits] == [("rule", f"/_cumulo/console/events/{q(bus + '|on-bus')}")]
    r = requests.get(f"{cumulo.endpoint}{API}/events/rules/on-bus", timeout=10)
    assert r.status_code == 400 and error(r) == "ResourceNotFoundException"


SFN_DEFINITION = {
    "StartAt": "Check",
    "States": {
        "Check": {"Type": "Choice", "Choices": [{"Variable": "$.fail", "BooleanEquals": True, "Next": "Boom"}], "Default": "Done"},
        "Boom": {"Type": "Fail", "Error": "Asked", "Cause": "the input said so"},
        "Done": {"Type": "Pass", "Result": {"ok": True}, "End": True},
    },
}


def run_execution(sfn, machine, payload):
    import time

    arn = sfn.start_execution(stateMachineArn=machine, input=json.dumps(payload))["executionArn"]
    for _ in range(100):
        if sfn.describe_execution(executionArn=arn)["status"] != "RUNNING":
            return arn
        time.sleep(0.1)
    raise AssertionError("the execution did not finish")


def test_step_functions_machines_executions_and_history(cumulo):
    sfn = cumulo.client("stepfunctions")
    name = f"con-sm-{uid()}"
    machine = sfn.create_state_machine(name=name, definition=json.dumps(SFN_DEFINITION),
                                       roleArn="arn:aws:iam::000000000000:role/sfn")["stateMachineArn"]
    ok = run_execution(sfn, machine, {"fail": False})
    failed = run_execution(sfn, machine, {"fail": True})
    listed = {m["name"]: m for m in get(cumulo, "/stepfunctions/machines")["state_machines"]}
    assert listed[name]["arn"] == machine and listed[name]["type"] == "STANDARD"
    for subject in (name, machine):
        mine = get(cumulo, "/stepfunctions/machines/" + q(subject))
    assert mine["definition"] == SFN_DEFINITION and mine["role_arn"] == "arn:aws:iam::000000000000:role/sfn"
    aws = sfn.list_executions(stateMachineArn=machine)["executions"]
    assert [(x["arn"], x["status"]) for x in mine["executions"]] == [(x["executionArn"], x["status"]) for x in aws]
    x = get(cumulo, "/stepfunctions/executions/" + q(ok))
    assert (x["status"], x["input"], x["output"]) == ("SUCCEEDED", {"fail": False}, {"ok": True})
    history = sfn.get_execution_history(executionArn=ok)["events"]
    assert [(e["id"], e["type"]) for e in x["history"]] == [(e["id"], e["type"]) for e in history]
    entered = [e["stateEnteredEventDetails"]["name"] for e in x["history"] if "stateEnteredEventDetails" in e]
    assert entered == ["Check", "Done"]
    x = get(cumulo, "/stepfunctions/executions/" + q(failed))
    aws = sfn.describe_execution(executionArn=failed)
    assert (x["status"], x["error"], x["cause"]) == (aws["status"], "Asked", "the input said so")
    hits = get(cumulo, "/search", q=name)["results"]
    assert [(h["kind"], h["view"]) for h in hits] == [("state-machine", f"/_cumulo/console/stepfunctions/{name}")]
    r = requests.get(f"{cumulo.endpoint}{API}/stepfunctions/machines/nope-{uid()}", timeout=10)
    assert r.status_code == 400 and error(r) == "StateMachineDoesNotExist"
    r = requests.get(f"{cumulo.endpoint}{API}/stepfunctions/executions/" + q(ok + "x"), timeout=10)
    assert r.status_code == 400 and error(r) == "ExecutionDoesNotExist"


def test_route53_acm_and_api_gateway(cumulo):
    r53, acm = cumulo.client("route53"), cumulo.client("acm")
    domain = f"con-{uid()}.example.com"
    zone_id = r53.create_hosted_zone(Name=domain, CallerReference=uid())["HostedZone"]["Id"].split("/")[-1]
    r53.change_resource_record_sets(HostedZoneId=zone_id, ChangeBatch={"Changes": [{"Action": "CREATE", "ResourceRecordSet": {
        "Name": f"www.{domain}", "Type": "A", "TTL": 60, "ResourceRecords": [{"Value": "192.0.2.1"}]}}]})
    listed = {z["Id"]: z for z in get(cumulo, "/route53/zones")["hosted_zones"]}
    assert listed[f"/hostedzone/{zone_id}"]["Name"] == f"{domain}."
    mine = get(cumulo, f"/route53/zones/{zone_id}")
    aws = r53.list_resource_record_sets(HostedZoneId=zone_id)["ResourceRecordSets"]
    assert mine["ResourceRecordSets"] == aws and len(aws) == 3  # SOA, NS and the A record
    assert mine["DelegationSet"]["NameServers"] == r53.get_hosted_zone(Id=zone_id)["DelegationSet"]["NameServers"]
    r = requests.get(f"{cumulo.endpoint}{API}/route53/zones/ZNOPE{uid().upper()}", timeout=10)
    assert r.status_code == 404 and error(r) == "NoSuchHostedZone"

    cert = acm.request_certificate(DomainName=f"api.{domain}", ValidationMethod="DNS")["CertificateArn"]
    assert cert in {c["CertificateArn"] for c in get(cumulo, "/acm/certificates")["certificates"]}
    mine = get(cumulo, "/acm/certificates/" + q(cert))
    aws = acm.describe_certificate(CertificateArn=cert)["Certificate"]
    assert (mine["DomainName"], mine["Status"]) == (aws["DomainName"], aws["Status"])
    r = requests.get(f"{cumulo.endpoint}{API}/acm/certificates/" + q(cert[:-4] + "0000"), timeout=10)
    assert r.status_code == 400 and error(r) == "ResourceNotFoundException"

    apigw, v2 = cumulo.client("apigateway"), cumulo.client("apigatewayv2")
    rest = apigw.create_rest_api(name=f"con-rest-{uid()}")["id"]
    root = apigw.get_resources(restApiId=rest)["items"][0]["id"]
    res = apigw.create_resource(restApiId=rest, parentId=root, pathPart="items")["id"]
    apigw.put_method(restApiId=rest, resourceId=res, httpMethod="GET", authorizationType="NONE")
    http = v2.create_api(Name=f"con-http-{uid()}", ProtocolType="HTTP")["ApiId"]
    v2.create_route(ApiId=http, RouteKey="GET /things")
    listed = get(cumulo, "/apigateway/apis")
    assert rest in {a["id"] for a in listed["rest_apis"]} and http in {a["apiId"] for a in listed["apis"]}
    mine = get(cumulo, f"/apigateway/apis/{rest}")
    assert mine["kind"] == "REST"
    assert {r["path"]: sorted(r.get("resourceMethods", {})) for r in mine["resources"]} == {"/": [], "/items": ["GET"]}
    mine = get(cumulo, f"/apigateway/apis/{http}")
    assert mine["kind"] == "HTTP" and [r["routeKey"] for r in mine["routes"]] == [
        r["RouteKey"] for r in v2.get_routes(ApiId=http)["Items"]
    ]
    r = requests.get(f"{cumulo.endpoint}{API}/apigateway/apis/nope{uid()}", timeout=10)
    assert r.status_code == 404 and error(r) == "NotFoundException"
    hits = {(h["kind"], h["id"]) for h in get(cumulo, "/search", q=domain)["results"]}
    assert ("hosted-zone", zone_id) in hits and ("certificate", cert) in hits


def test_ecs_clusters_services_and_tasks(cumulo):
    ecs = cumulo.client("ecs")
    name = f"con-cluster-{uid()}"
    ecs.create_cluster(clusterName=name, tags=[{"key": "k", "value": "v"}])
    td = ecs.register_task_definition(family=f"{name}-td", containerDefinitions=[
        {"name": "app", "image": "public.ecr.aws/docker/library/busybox:latest", "memory": 128}])["taskDefinition"]["taskDefinitionArn"]
    ecs.create_service(cluster=name, serviceName="web", taskDefinition=td, desiredCount=0)
    listed = {c["clusterName"]: c for c in get(cumulo, "/ecs/clusters")["clusters"]}
    aws = ecs.describe_clusters(clusters=[name])["clusters"][0]
    assert listed[name]["clusterArn"] == aws["clusterArn"] and listed[name]["activeServicesCount"] == 1
    mine = get(cumulo, f"/ecs/clusters/{name}")
    assert mine["cluster"]["tags"] == [{"key": "k", "value": "v"}]
    aws = ecs.describe_services(cluster=name, services=["web"])["services"][0]
    assert [(s["serviceName"], s["serviceArn"], s["desiredCount"], s["taskDefinition"]) for s in mine["services"]] == [
        (aws["serviceName"], aws["serviceArn"], 0, td)
    ]
    assert mine["tasks"] == []
    r = requests.get(f"{cumulo.endpoint}{API}/ecs/clusters/nope-{uid()}", timeout=10)
    assert r.status_code == 400 and error(r) == "ClusterNotFoundException"
    hits = get(cumulo, "/search", q=name)["results"]
    assert [(h["kind"], h["view"]) for h in hits] == [("cluster", f"/_cumulo/console/ecs/{name}")]


def test_load_balancers_with_listeners_rules_and_targets(cumulo):
    ec2, elb = cumulo.client("ec2"), cumulo.client("elbv2")
    vpc = ec2.describe_vpcs(Filters=[{"Name": "isDefault", "Values": ["true"]}])["Vpcs"][0]["VpcId"]
    subnets = [s["SubnetId"] for s in ec2.describe_subnets(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["Subnets"]][:2]
    name = f"con-lb-{uid()}"
    lb = elb.create_load_balancer(Name=name, Subnets=subnets)["LoadBalancers"][0]["LoadBalancerArn"]
    tg = elb.create_target_group(Name=f"tg-{uid()}", Protocol="HTTP", Port=80, VpcId=vpc, TargetType="ip")["TargetGroups"][0]["TargetGroupArn"]
    elb.register_targets(TargetGroupArn=tg, Targets=[{"Id": "172.31.0.10"}])
    listener = elb.create_listener(LoadBalancerArn=lb, Protocol="HTTP", Port=80,
                                   DefaultActions=[{"Type": "forward", "TargetGroupArn": tg}])["Listeners"][0]["ListenerArn"]
    elb.create_rule(ListenerArn=listener, Priority=10, Conditions=[{"Field": "path-pattern", "Values": ["/api/*"]}],
                    Actions=[{"Type": "fixed-response", "FixedResponseConfig": {"StatusCode": "200"}}])
    listed = {b["LoadBalancerName"]: b for b in get(cumulo, "/elb/loadbalancers")["load_balancers"]}
    assert listed[name]["LoadBalancerArn"] == lb
    for subject in (name, lb):
        mine = get(cumulo, "/elb/loadbalancers/" + q(subject))
        assert mine["load_balancer"]["LoadBalancerArn"] == lb
    [l] = mine["listeners"]
    assert (l["ListenerArn"], l["Port"]) == (listener, 80)
    aws = elb.describe_rules(ListenerArn=listener)["Rules"]
    assert [(r["Priority"], r["RuleArn"]) for r in l["Rules"]] == [(r["Priority"], r["RuleArn"]) for r in aws]
    [g] = mine["target_groups"]
    aws = elb.describe_target_health(TargetGroupArn=tg)["TargetHealthDescriptions"]
    assert g["TargetGroupArn"] == tg and g["TargetHealthDescriptions"] == aws
    r = requests.get(f"{cumulo.endpoint}{API}/elb/loadbalancers/nope-{uid()}", timeout=10)
    assert r.status_code == 400 and error(r) == "LoadBalancerNotFound"
    # The session's server is shared: the default subnets' addresses go back (test_ec2 counts them).
    elb.delete_load_balancer(LoadBalancerArn=lb)
    elb.delete_target_group(TargetGroupArn=tg)


def test_vpc_map_with_subnets_and_route_tables(cumulo):
    ec2 = cumulo.client("ec2")
    vpc = ec2.create_vpc(CidrBlock="10.42.0.0/16", TagSpecifications=[
        {"ResourceType": "vpc", "Tags": [{"Key": "Name", "Value": "con-map"}]}])["Vpc"]["VpcId"]
    public = ec2.create_subnet(VpcId=vpc, CidrBlock="10.42.1.0/24", AvailabilityZone="us-east-1a")["Subnet"]["SubnetId"]
    private = ec2.create_subnet(VpcId=vpc, CidrBlock="10.42.2.0/24", AvailabilityZone="us-east-1b")["Subnet"]["SubnetId"]
    igw = ec2.create_internet_gateway()["InternetGateway"]["InternetGatewayId"]
    ec2.attach_internet_gateway(InternetGatewayId=igw, VpcId=vpc)
    rtb = ec2.create_route_table(VpcId=vpc)["RouteTable"]["RouteTableId"]
    ec2.create_route(RouteTableId=rtb, DestinationCidrBlock="0.0.0.0/0", GatewayId=igw)
    ec2.associate_route_table(RouteTableId=rtb, SubnetId=public)
    assert vpc in {v["VpcId"] for v in get(cumulo, "/ec2/vpcs")["Vpcs"]}
    mine = get(cumulo, f"/ec2/vpcs/{vpc}")["vpc"]
    assert mine["CidrBlock"] == "10.42.0.0/16" and mine["Tags"] == [{"Key": "Name", "Value": "con-map"}]
    assert {s["SubnetId"]: s["CidrBlock"] for s in mine["Subnets"]} == {public: "10.42.1.0/24", private: "10.42.2.0/24"}
    aws = ec2.describe_route_tables(Filters=[{"Name": "vpc-id", "Values": [vpc]}])["RouteTables"]
    tables = {t["RouteTableId"]: t for t in mine["RouteTables"]}
    assert set(tables) == {t["RouteTableId"] for t in aws}
    assert [a["SubnetId"] for a in tables[rtb]["Associations"]] == [public]
    assert {(r.get("DestinationCidrBlock"), r["Target"]) for r in tables[rtb]["Routes"]} == {("10.42.0.0/16", "local"), ("0.0.0.0/0", igw)}
    [main] = [t for t in aws if any(a.get("Main") for a in t.get("Associations", []))]
    assert tables[main["RouteTableId"]]["Main"] is True
    r = requests.get(f"{cumulo.endpoint}{API}/ec2/vpcs/vpc-0000nope", timeout=10)
    assert r.status_code == 400 and error(r) == "InvalidVpcID.NotFound"
    hits = {(h["kind"], h["id"], h["view"]) for h in get(cumulo, "/search", q="con-map")["results"]}
    assert ("network", vpc, f"/_cumulo/console/ec2/{vpc}") in hits
    hits = {(h["kind"], h["view"]) for h in get(cumulo, "/search", q=private)["results"]}
    assert hits == {("network", f"/_cumulo/console/ec2/{vpc}")}


def test_new_views_are_searchable_and_linked_from_the_graph(cumulo, stacks, cfn):
    good, _ = stacks
    # The child stack's topic links to the SNS view; the SSM parameters to the SSM view.
    child = cfn.describe_stack_resource(StackName=good, LogicalResourceId="Child")["StackResourceDetail"]["PhysicalResourceId"]
    topic_arn = cfn.describe_stack_resource(StackName=child, LogicalResourceId="Topic")["StackResourceDetail"]["PhysicalResourceId"]
    topic_name = topic_arn.rsplit(":", 1)[1]
    nodes = {n["id"]: n for n in get(cumulo, f"/stacks/{q(child)}/graph")["nodes"]}
    assert nodes["Topic"]["view"] == f"/_cumulo/console/sns/{topic_name}"
    nodes = {n["id"]: n for n in get(cumulo, f"/stacks/{good}/graph")["nodes"]}
    assert nodes["Param"]["view"] == f"/_cumulo/console/ssm/{q('/' + good + '/queue-arn')}"
    hits = get(cumulo, "/search", q=topic_arn)["results"]
    assert ("topic", topic_name) in {(h["kind"], h["name"]) for h in hits}
    hits = get(cumulo, "/search", q=f"/{good}/NAMED")["results"]
    assert {(h["kind"], h["name"], h["view"]) for h in hits if h["kind"] == "parameter"} == {
        ("parameter", f"/{good}/named", f"/_cumulo/console/ssm/{q('/' + good + '/named')}")
    }
    sm = cumulo.client("secretsmanager")
    name = f"con-find-{uid()}"
    arn = sm.create_secret(Name=name, SecretString="x")["ARN"]
    hits = get(cumulo, "/search", q=arn)["results"]
    assert [(h["kind"], h["view"]) for h in hits] == [("secret", f"/_cumulo/console/secretsmanager/{q(arn)}")]
    for path in ["/sns/", "/dynamodb/", "/ssm/", "/secretsmanager/", "/lambda/", "/logs/", f"/logs/{q('/a/b')}", f"/sns/{topic_name}",
                 "/iam/", "/iam/roles/r", f"/iam/policies/{q('arn:aws:iam::aws:policy/x')}", "/kms/", "/kms/k", "/events/", "/events/r",
                 "/stepfunctions/", "/stepfunctions/m", "/route53/", "/route53/Z1", "/acm/", "/apigateway/", "/apigateway/a1", "/ecs/", "/ecs/c1", "/elb/", "/elb/x", "/ec2/", "/ec2/vpc-1", f"/stepfunctions/executions/{q('arn:aws:states:x')}"]:
        r = requests.get(f"{cumulo.endpoint}/_cumulo/console{path}", timeout=10)
        assert r.status_code == 200 and 'data-page="' in r.text, path
    for asset in ["views.js", "sns.js", "dynamodb.js", "ssm.js", "secretsmanager.js", "lambda.js", "logs.js", "iam.js", "kms.js", "events.js", "stepfunctions.js", "route53.js", "acm.js", "apigateway.js", "ecs.js", "elb.js", "vpc.js"]:
        assert requests.get(f"{cumulo.endpoint}/_cumulo/console/assets/{asset}", timeout=10).status_code == 200


def test_verify_signatures_needs_a_console_login():
    server = CumuloServer(extra_args=["--verify-signatures", "--credentials", "AKID:s3cret"]).start()
    try:
        api = f"{server.endpoint}{API}"
        r = requests.get(f"{api}/stacks", timeout=10)
        assert r.status_code == 401 and error(r) == "Unauthorized"
        r = requests.post(f"{api}/sqs/queues/q/purge", headers=CONSOLE, timeout=10)
        assert r.status_code == 401
        r = requests.get(f"{server.endpoint}/_cumulo/console/", timeout=10)
        assert r.status_code == 401 and 'data-page="login"' in r.text
        assert requests.get(f"{server.endpoint}/_cumulo/console/assets/login.js", timeout=10).status_code == 200
        for body, headers, status, code in [
            ({"access_key_id": "AKID", "secret_access_key": "wrong"}, CONSOLE, 401, "InvalidCredentials"),
            ({"access_key_id": "test", "secret_access_key": "test"}, CONSOLE, 401, "InvalidCredentials"),
            ({"access_key_id": "AKID", "secret_access_key": "s3cret"}, {"Origin": "http://evil.example"}, 403, "Forbidden"),
        ]:
            r = requests.post(f"{api}/login", json=body, headers=headers, timeout=10)
            assert (r.status_code, error(r)) == (status, code)
            assert "set-cookie" not in r.headers
        session = requests.Session()
        r = session.post(f"{api}/login", json={"access_key_id": "AKID", "secret_access_key": "s3cret"}, headers=CONSOLE, timeout=10)
        assert r.status_code == 200, r.text
        assert "HttpOnly" in r.headers["set-cookie"] and "SameSite=Strict" in r.headers["set-cookie"]
        assert session.get(f"{api}/stacks", timeout=10).json() == {"stacks": []}
        assert session.get(f"{server.endpoint}/_cumulo/console/", timeout=10).status_code == 200
        # A made-up session is no session.
        r = requests.get(f"{api}/stacks", cookies={"cumulo_console": "0" * 32}, timeout=10)
        assert r.status_code == 401
    finally:
        server.stop()


def test_console_command_prints_the_url_without_a_browser(cumulo):
    import os
    import subprocess

    from conftest import BIN

    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    out = subprocess.run([str(BIN), "console", "--port", str(cumulo.port)], capture_output=True, text=True, env=env, timeout=10)
    assert out.returncode == 0, out.stderr
    url = out.stdout.strip()
    assert url == f"http://localhost:{cumulo.port}/_cumulo/console/"
    assert requests.get(url, timeout=10).status_code == 200


def running(server):
    """The services the health report says are built in this process."""
    health = requests.get(server.endpoint + "/_cumulo/health", timeout=10).json()
    return {name for name, state in health["services"].items() if state == "running"}


def test_search_reads_only_services_that_ran_here_even_after_a_restart(fresh_server):
    server = fresh_server.start()
    p = f"con-used-{uid()}"
    assert running(server) == set()
    url = server.client("sqs").create_queue(QueueName=f"{p}-queue")["QueueUrl"]
    server.client("ssm").put_parameter(Name=f"/{p}/param", Value="v", Type="String")
    before = running(server)
    assert {"sqs", "ssm"} <= before and "s3" not in before and "cloudformation" not in before
    hits = get(server, "/search", q=p)["results"]
    assert {(h["kind"], h["name"]) for h in hits} == {("queue", f"{p}-queue"), ("parameter", f"/{p}/param")}
    # The search built nothing: every service that never ran stays "available".
    assert running(server) == before

    server.stop()
    server.start()
    # After the restart nothing is built, yet the state of the services that ran is found.
    assert running(server) == set()
    hits = get(server, "/search", q=url)["results"]
    assert [(h["kind"], h["name"]) for h in hits] == [("queue", f"{p}-queue")]
    hits = get(server, "/search", q=f"/{p}/PARAM")["results"]
    assert [(h["kind"], h["name"]) for h in hits] == [("parameter", f"/{p}/param")]
    after = running(server)
    assert {"sqs", "ssm"} <= after <= before
    assert get(server, "/search", q=f"nothing-{uid()}")["results"] == []
    assert running(server) == after
    # A log page's event stream (stacks=false) builds no CloudFormation either.
    sse = Sse(f"{server.endpoint}{API}/events/stream", stacks="false")
    try:
        sse.next("stream")
        sse.none("stacks", 1.5)
        assert running(server) == after
    finally:
        sse.close()


def test_console_and_api_answer_only_hosts_naming_this_endpoint(cumulo):
    evil = {"Host": f"evil.example:{cumulo.port}"}
    for path in [f"{API}/stacks", f"{API}/health", "/_cumulo/console/", "/_cumulo/console/assets/app.js"]:
        r = requests.get(cumulo.endpoint + path, headers=evil, timeout=10)
        assert r.status_code == 403, (path, r.status_code)
        assert "evil.example" in r.text and "--console-host" in r.text
    r = requests.get(f"{cumulo.endpoint}{API}/stacks", headers=evil, timeout=10)
    assert error(r) == "ForbiddenHost"
    r = requests.post(f"{cumulo.endpoint}{API}/sqs/queues/x/purge", headers={**evil, **CONSOLE}, timeout=10)
    assert r.status_code == 403 and error(r) == "ForbiddenHost"
    # Loopback names, *.localhost and the bound address answer; another port does not.
    for host in [f"localhost:{cumulo.port}", f"console.localhost:{cumulo.port}", f"127.0.0.1:{cumulo.port}"]:
        assert requests.get(f"{cumulo.endpoint}{API}/health", headers={"Host": host}, timeout=10).status_code == 200, host
    r = requests.get(f"{cumulo.endpoint}{API}/health", headers={"Host": f"localhost:{cumulo.port + 1}"}, timeout=10)
    assert r.status_code == 403
    # The AWS API answers under any Host (SDKs, virtual-host names).
    sqs = cumulo.client("sqs")
    sqs.meta.events.register("before-send", lambda request, **_: request.headers.__setitem__("Host", evil["Host"]))
    name = f"con-host-{uid()}"
    assert sqs.create_queue(QueueName=name)["QueueUrl"].endswith(f"/{name}")
    assert any(u.endswith(f"/{name}") for u in sqs.list_queues(QueueNamePrefix=name)["QueueUrls"])


@pytest.mark.parametrize("how", ["flag", "env"])
def test_console_host_admits_a_named_host(how):
    if how == "flag":
        server = CumuloServer(extra_args=["--console-host", "dev-box", "--console-host", "proxy.example:443"])
    else:
        server = CumuloServer(env={"CUMULO_CONSOLE_HOSTS": "dev-box,proxy.example:443"})
    server.start()
    try:
        def status(host, path=f"{API}/health"):
            return requests.get(server.endpoint + path, headers={"Host": host}, timeout=10).status_code

        assert status(f"dev-box:{server.port}") == 200
        assert status(f"DEV-BOX:{server.port}", "/_cumulo/console/") == 200
        assert status("proxy.example:443") == 200
        assert status(f"proxy.example:{server.port}") == 403
        assert status(f"dev-box:{server.port + 1}") == 403
        assert status(f"evil.example:{server.port}") == 403
        assert status(f"localhost:{server.port}") == 200
    finally:
        server.stop()


def test_drift_per_resource_is_what_describe_stack_resource_drifts_reports(cumulo, stacks, cfn):
    from console_stacks import drifted

    good, _ = stacks
    # Before any detection: nothing checked.
    mine = get(cumulo, f"/stacks/{good}/drift")
    assert (mine["stack_drift_status"], mine["last_check"], mine["resources"]) == ("NOT_CHECKED", None, [])
    assert {r["drift_status"] for r in get(cumulo, f"/stacks/{good}/resources")["resources"]} == {"NOT_CHECKED"}

    name, aws = drifted(cumulo)
    mine = get(cumulo, f"/stacks/{name}/drift")
    stack = cfn.describe_stacks(StackName=name)["Stacks"][0]
    assert mine["stack_drift_status"] == stack["DriftInformation"]["StackDriftStatus"] == "DRIFTED"
    assert mine["last_check"]
    assert sorted((r["logical_id"], r["physical_id"], r["type"], r["status"]) for r in mine["resources"]) == sorted(
        (d["LogicalResourceId"], d["PhysicalResourceId"], d["ResourceType"], d["StackResourceDriftStatus"]) for d in aws
    )
    by_id = {r["logical_id"]: r for r in mine["resources"]}
    aws_changed = next(d for d in aws if d["LogicalResourceId"] == "Changed")
    assert by_id["Changed"]["status"] == "MODIFIED" and by_id["Kept"]["status"] == "IN_SYNC"
    assert [(x["path"], x["expected"], x["actual"], x["type"]) for x in by_id["Changed"]["differences"]] == [
        (p["PropertyPath"], p["ExpectedValue"], p["ActualValue"], p["DifferenceType"]) for p in aws_changed["PropertyDifferences"]
    ] == [("/VisibilityTimeout", "30", "60", "NOT_EQUAL")]
    assert by_id["Changed"]["expected_properties"] == json.loads(aws_changed["ExpectedProperties"])
    assert by_id["Changed"]["actual_properties"] == json.loads(aws_changed["ActualProperties"])
    assert by_id["Kept"]["differences"] == []
    # The resources list carries each one's drift status as ListStackResources does.
    listed = {r["logical_id"]: r["drift_status"] for r in get(cumulo, f"/stacks/{name}/resources")["resources"]}
    assert listed == {
        r["LogicalResourceId"]: r["DriftInformation"]["StackResourceDriftStatus"]
        for r in cfn.list_stack_resources(StackName=name)["StackResourceSummaries"]
    } == {"Changed": "MODIFIED", "Kept": "IN_SYNC"}
    r = requests.get(f"{cumulo.endpoint}{API}/stacks/nope-{uid()}/drift", timeout=10)
    assert r.status_code == 404 and error(r) == "StackNotFound"


class Sse:
    """An open event stream read on a thread: `next(name)` waits for the next event of that
    name; `none(name, seconds)` says none came in that long."""

    def __init__(self, url, **params):
        import queue
        import threading

        self.resp = requests.get(url, params=params, stream=True, timeout=30)
        assert self.resp.status_code == 200 and self.resp.headers["content-type"] == "text/event-stream"
        self.events = queue.Queue()

        def read():
            name = None
            try:
                for line in self.resp.iter_lines(decode_unicode=True):
                    if line.startswith("event: "):
                        name = line[7:]
                    elif line.startswith("data: ") and name:
                        self.events.put((name, json.loads(line[6:])))
                        name = None
            except Exception:  # the test closed the stream
                pass

        threading.Thread(target=read, daemon=True).start()

    def next(self, name, timeout=10):
        import time

        deadline = time.time() + timeout
        while True:
            got, data = self.events.get(timeout=max(0.01, deadline - time.time()))
            if got == name:
                return data
            assert got != "failure", data

    def none(self, name, seconds):
        import queue

        try:
            while True:
                got, data = self.events.get(timeout=seconds)
                assert got != name, data
        except queue.Empty:
            pass

    def close(self):
        self.resp.close()


def put_log(logs, group, stream, *messages):
    import time

    now = int(time.time() * 1000)
    logs.put_log_events(logGroupName=group, logStreamName=stream,
                        logEvents=[{"timestamp": now, "message": m} for m in messages])
    return now


def test_a_log_tail_rides_the_tabs_one_event_stream(cumulo):
    logs = cumulo.client("logs")
    group = f"/con-tail/{uid()}"
    logs.create_log_group(logGroupName=group)
    for s in ("s1", "s2"):
        logs.create_log_stream(logGroupName=group, logStreamName=s)
    put_log(logs, group, "s1", "before")
    sse = Sse(f"{cumulo.endpoint}{API}/events/stream", stacks="false")
    try:
        sid = sse.next("stream")["id"]
        base = f"/events/stream/{sid}/logs"
        # Subscribing changes state: CSRF-checked; bad input refused.
        r = requests.post(cumulo.endpoint + API + base, json={"group": group}, timeout=10)
        assert r.status_code == 403 and error(r) == "Forbidden"
        for body, status, code in [
            ({"group": f"/nope/{uid()}"}, 400, "ResourceNotFoundException"),
            ({"group": group, "stream": "nope"}, 400, "ResourceNotFoundException"),
            ({"stream": "s1"}, 400, "BadRequest"),
            ({"group": group, "start_time": "soon"}, 400, "BadRequest"),
        ]:
            r = requests.post(cumulo.endpoint + API + base, json=body, headers=CONSOLE, timeout=10)
            assert (r.status_code, error(r)) == (status, code), body
        r = requests.post(f"{cumulo.endpoint}{API}/events/stream/{'0' * 32}/logs", json={"group": group}, headers=CONSOLE, timeout=10)
        assert r.status_code == 404 and error(r) == "StreamNotFound"

        # One stream's tail from the start: what it holds, then what is put.
        post(cumulo, base, json={"group": group, "stream": "s1", "start_time": 0})
        assert [e["message"] for e in sse.next("logs")["events"]] == ["before"]
        at = put_log(logs, group, "s1", "one", "two")
        put_log(logs, group, "s2", "elsewhere")
        got = sse.next("logs")["events"]
        assert [(e["message"], e["stream"], e["timestamp"]) for e in got] == [("one", "s1", at), ("two", "s1", at)]
        # Replaced by a group-wide tail with a filter pattern, from now on.
        post(cumulo, base, json={"group": group, "filter": "ERROR", "start_time": at + 1})
        put_log(logs, group, "s2", "INFO fine", "ERROR broken")
        assert [(e["message"], e["stream"]) for e in sse.next("logs")["events"]] == [("ERROR broken", "s2")]
        # Unsubscribed: nothing more.
        r = requests.delete(cumulo.endpoint + API + base, headers=CONSOLE, timeout=10)
        assert r.status_code == 200
        put_log(logs, group, "s2", "ERROR unseen")
        sse.none("logs", 2.5)
        assert get(cumulo, "/health")["console"]["streams"] >= 1
    finally:
        sse.close()


def test_security_groups_with_their_rules_and_classic_load_balancers(cumulo):
    from console_stacks import network_with_groups

    ec2, elb = cumulo.client("ec2"), cumulo.client("elb")
    n = network_with_groups(cumulo)
    groups = get(cumulo, "/ec2/securitygroups", vpc=n["vpc"])["security_groups"]
    aws = ec2.describe_security_groups(Filters=[{"Name": "vpc-id", "Values": [n["vpc"]]}])["SecurityGroups"]
    assert sorted((g["GroupId"], g["GroupName"], g["Description"], g["VpcId"]) for g in groups) == sorted(
        (g["GroupId"], g["GroupName"], g["Description"], g["VpcId"]) for g in aws)
    assert {n["web"], n["app"]} < {g["GroupId"] for g in groups}  # and the VPC's default group
    everywhere = {g["GroupId"] for g in get(cumulo, "/ec2/securitygroups")["security_groups"]}
    assert {g["GroupId"] for g in groups} < everywhere

    fields = ["SecurityGroupRuleId", "GroupId", "IsEgress", "IpProtocol", "FromPort", "ToPort", "CidrIpv4", "PrefixListId", "Description"]
    for gid in (n["web"], n["app"]):
        mine = get(cumulo, f"/ec2/securitygroups/{gid}")
        rules = ec2.describe_security_group_rules(Filters=[{"Name": "group-id", "Values": [gid]}])["SecurityGroupRules"]
        got = mine["security_group"]["SecurityGroupRules"]
        assert sorted(tuple(r.get(f) for f in fields) for r in got) == sorted(tuple(r.get(f) for f in fields) for r in rules)
        assert all(r["SecurityGroupRuleId"].startswith("sgr-") for r in got)
        assert sorted((r["SecurityGroupRuleId"], (r.get("ReferencedGroupInfo") or {}).get("GroupId")) for r in got) == sorted(
            (r["SecurityGroupRuleId"], r.get("ReferencedGroupInfo", {}).get("GroupId")) for r in rules)
    app = get(cumulo, f"/ec2/securitygroups/{n['app']}")["security_group"]["SecurityGroupRules"]
    assert [r["ReferencedGroupInfo"]["GroupId"] for r in app if not r["IsEgress"]] == [n["web"]]
    assert n["prefix_list"] in [r["PrefixListId"] for r in app if r["IsEgress"]]
    assert get(cumulo, f"/ec2/securitygroups/{n['web']}")["referenced_by"] == [n["app"]]
    assert get(cumulo, f"/ec2/securitygroups/{n['app']}")["referenced_by"] == []
    r = requests.get(f"{cumulo.endpoint}{API}/ec2/securitygroups/sg-0000000000000000f", timeout=10)
    assert (r.status_code, error(r)) == (400, "InvalidGroup.NotFound")
    assert r.json()["error"]["message"] == "The security group 'sg-0000000000000000f' does not exist"

    listed = {b["LoadBalancerName"]: b for b in get(cumulo, "/elb/classic")["load_balancers"]}
    [aws_lb] = elb.describe_load_balancers(LoadBalancerNames=[n["elb"]])["LoadBalancerDescriptions"]
    assert listed[n["elb"]]["DNSName"] == aws_lb["DNSName"]
    one = get(cumulo, f"/elb/classic/{n['elb']}")
    lb = one["load_balancer"]
    assert (lb["VPCId"], lb["SecurityGroups"], lb["Subnets"]) == (aws_lb["VPCId"], aws_lb["SecurityGroups"], aws_lb["Subnets"]) == (n["vpc"], [n["web"]], [n["subnet"]])
    assert lb["ListenerDescriptions"] == json.loads(json.dumps(aws_lb["ListenerDescriptions"]))
    assert lb["HealthCheck"] == aws_lb["HealthCheck"]
    assert one["instance_health"] == elb.describe_instance_health(LoadBalancerName=n["elb"])["InstanceStates"]
    assert [(i["InstanceId"], i["State"]) for i in one["instance_health"]] == [(n["instance"], "InService")]
    attrs = elb.describe_load_balancer_attributes(LoadBalancerName=n["elb"])["LoadBalancerAttributes"]
    assert one["attributes"]["CrossZoneLoadBalancing"] == attrs["CrossZoneLoadBalancing"]
    r = requests.get(f"{cumulo.endpoint}{API}/elb/classic/nope-{uid()}", timeout=10)
    assert r.status_code == 400 and error(r) == "LoadBalancerNotFound"
    # Both are found by the search, linked to their views.
    hits = {(h["kind"], h["view"]) for h in get(cumulo, "/search", q=n["app"])["results"]}
    assert ("security-group", f"/_cumulo/console/ec2/securitygroups/{n['app']}") in hits
    hits = {(h["kind"], h["view"]) for h in get(cumulo, "/search", q=n["elb"])["results"]}
    assert ("load-balancer", f"/_cumulo/console/elb/classic/{n['elb']}") in hits
    for path in ["/ec2/securitygroups", f"/ec2/securitygroups/{n['web']}", f"/elb/classic/{n['elb']}"]:
        r = requests.get(f"{cumulo.endpoint}/_cumulo/console{path}", timeout=10)
        assert r.status_code == 200 and 'data-page="' in r.text, path
    elb.delete_load_balancer(LoadBalancerName=n["elb"])


def test_a_stack_pages_stream_follows_only_its_stack(cumulo, stacks):
    import queue

    good, _ = stacks
    sse = Sse(f"{cumulo.endpoint}{API}/events/stream", stack=good, stacks="false")
    try:
        got = []
        try:
            while True:
                got.append(sse.events.get(timeout=1.5))
        except queue.Empty:
            pass
    finally:
        sse.close()
    assert [name for name, _ in got] == ["stream", "stack"]
    assert got[1][1]["stack"] == good and got[1][1]["status"] == "CREATE_COMPLETE"
