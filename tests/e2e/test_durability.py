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


def test_grouped_service_writes_survive_kill_9(fresh_server):
    """SQS, SNS, SSM and S3 queue their writes on the store's group commit, so concurrent
    requests share commits. Each answers only once its write is committed: writers of all
    four services race, the server is killed right after the last answer, and every
    acknowledged create, update and delete is there after restart."""
    server = fresh_server.start()
    acked = []
    lock = threading.Lock()

    def ack(item):
        with lock:
            acked.append(item)

    def writer(n):
        sqs, sns, ssm, s3 = (server.client(s) for s in ("sqs", "sns", "ssm", "s3"))
        for i in range(8):
            tag = f"w{n}-{i}"
            url = sqs.create_queue(QueueName=f"g-{tag}")["QueueUrl"]
            sqs.set_queue_attributes(QueueUrl=url, Attributes={"VisibilityTimeout": str(10 + i)})
            ack(("queue", f"g-{tag}", str(10 + i)))
            arn = sns.create_topic(Name=f"g-{tag}")["TopicArn"]
            sns.set_topic_attributes(TopicArn=arn, AttributeName="DisplayName", AttributeValue=tag)
            ack(("topic", arn, tag))
            ssm.put_parameter(Name=f"/g/{tag}", Value=tag, Type="String")
            ack(("param", f"/g/{tag}", tag))
            s3.create_bucket(Bucket=f"g-{tag}")
            s3.put_bucket_tagging(Bucket=f"g-{tag}", Tagging={"TagSet": [{"Key": "k", "Value": tag}]})
            ack(("bucket", f"g-{tag}", tag))
            if i % 2:
                sqs.delete_queue(QueueUrl=url)
                sns.delete_topic(TopicArn=arn)
                ssm.delete_parameter(Name=f"/g/{tag}")
                s3.delete_bucket(Bucket=f"g-{tag}")
                for kind, key in (("queue", f"g-{tag}"), ("topic", arn), ("param", f"/g/{tag}"), ("bucket", f"g-{tag}")):
                    ack((kind, key, None))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    restarted = crash_and_restart(fresh_server)
    try:
        sqs, sns, ssm, s3 = (restarted.client(s) for s in ("sqs", "sns", "ssm", "s3"))
        final = {}
        for kind, key, value in acked:
            final[(kind, key)] = value
        assert len(final) == 4 * 8 * 4
        for (kind, key), value in final.items():
            try:
                if kind == "queue":
                    url = sqs.get_queue_url(QueueName=key)["QueueUrl"]
                    got = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"]["VisibilityTimeout"]
                elif kind == "topic":
                    got = sns.get_topic_attributes(TopicArn=key)["Attributes"]["DisplayName"]
                elif kind == "param":
                    got = ssm.get_parameter(Name=key)["Parameter"]["Value"]
                else:
                    got = s3.get_bucket_tagging(Bucket=key)["TagSet"][0]["Value"]
            except botocore.exceptions.ClientError:
                got = None
            assert got == value, (kind, key)
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
