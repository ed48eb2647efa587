"""Durability: whatever the API acknowledged survives `kill -9` and a restart on the same data dir.

Each service's test skips only while that service answers 501 in this build."""
import json
import subprocess
import threading
import urllib.request

import botocore.exceptions
import pytest

from conftest import BIN, CumuloServer


def skip_if_501(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except botocore.exceptions.ClientError as e:
        if e.response["Error"]["Code"] == "NotImplemented" or e.response["ResponseMetadata"]["HTTPStatusCode"] == 501:
            pytest.skip(f"{e.operation_name} not implemented in this build")
        raise


def crash_and_restart(server):
    server.kill9()
    return CumuloServer(data_dir=server.data_dir).start()


def test_s3_objects_survive_kill_9(fresh_server):
    s3 = fresh_server.start().client("s3")
    skip_if_501(s3.create_bucket, Bucket="durable")
    bodies = {f"dir/key-{i}": (b"%d" % i) * (i + 1) * 100 for i in range(20)}
    for key, body in bodies.items():
        s3.put_object(Bucket="durable", Key=key, Body=body)
    s3.delete_object(Bucket="durable", Key="dir/key-0")
    restarted = crash_and_restart(fresh_server)
    try:
        s3 = restarted.client("s3")
        assert "durable" in [b["Name"] for b in s3.list_buckets()["Buckets"]]
        for key, body in bodies.items():
            if key == "dir/key-0":
                with pytest.raises(botocore.exceptions.ClientError):
                    s3.get_object(Bucket="durable", Key=key)
            else:
                assert s3.get_object(Bucket="durable", Key=key)["Body"].read() == body
    finally:
        restarted.stop()


def test_sqs_messages_survive_kill_9(fresh_server):
    sqs = fresh_server.start().client("sqs")
    url = skip_if_501(sqs.create_queue, QueueName="durable")["QueueUrl"]
    sent = {f"message {i}" for i in range(25)}
    for body in sent:
        sqs.send_message(QueueUrl=url, MessageBody=body)
    restarted = crash_and_restart(fresh_server)
    try:
        sqs = restarted.client("sqs")
        url = sqs.get_queue_url(QueueName="durable")["QueueUrl"]
        got = set()
        for _ in range(20):
            msgs = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
            got |= {m["Body"] for m in msgs}
            if not msgs or got == sent:
                break
        assert got == sent
    finally:
        restarted.stop()


def test_ssm_parameters_survive_kill_9(fresh_server):
    ssm = fresh_server.start().client("ssm")
    skip_if_501(ssm.put_parameter, Name="/durable/first", Value="v1", Type="String")
    ssm.put_parameter(Name="/durable/first", Value="v2", Type="String", Overwrite=True)
    for i in range(30):
        ssm.put_parameter(Name=f"/durable/p{i}", Value=f"value {i}", Type="String")
    restarted = crash_and_restart(fresh_server)
    try:
        ssm = restarted.client("ssm")
        p = ssm.get_parameter(Name="/durable/first")["Parameter"]
        assert (p["Value"], p["Version"]) == ("v2", 2)
        for i in range(30):
            assert ssm.get_parameter(Name=f"/durable/p{i}")["Parameter"]["Value"] == f"value {i}"
    finally:
        restarted.stop()


def test_concurrent_acknowledged_writes_survive_kill_9(fresh_server):
    """Writers race; the server is killed right after the last acknowledgement. Every write a
    client saw acknowledged must be there after restart."""
    server = fresh_server.start()
    probe = server.client("ssm")
    skip_if_501(probe.put_parameter, Name="/race/probe", Value="x", Type="String")
    acked = []
    lock = threading.Lock()

    def writer(n):
        ssm = server.client("ssm")
        for i in range(25):
            name = f"/race/w{n}/p{i}"
            ssm.put_parameter(Name=name, Value=name, Type="String")
            with lock:
                acked.append(name)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    restarted = crash_and_restart(fresh_server)
    try:
        ssm = restarted.client("ssm")
        for name in acked:
            assert ssm.get_parameter(Name=name)["Parameter"]["Value"] == name
    finally:
        restarted.stop()


def test_health_store_reports_location_after_crash(fresh_server):
    fresh_server.start()
    restarted = crash_and_restart(fresh_server)
    try:
        with urllib.request.urlopen(restarted.endpoint + "/_cumulo/health") as r:
            body = json.load(r)
        assert body["store"]["status"] == "ok"
        assert body["store"]["location"].startswith(str(fresh_server.data_dir))
    finally:
        restarted.stop()


def test_a_data_dir_has_one_owner(fresh_server):
    fresh_server.start()
    second = subprocess.run(
        [str(BIN), "serve", "--port", "0", "--data-dir", str(fresh_server.data_dir)],
        capture_output=True, text=True, timeout=30,
    )
    assert second.returncode != 0
    assert "in use by another process" in second.stderr
    # The owner is unaffected.
    assert fresh_server.raw("GET", "/_cumulo/health").status == 200
