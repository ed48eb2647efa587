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
